//! Pass 4b: the order GNU ld loads the linked objects in, which is the order of their sections in each output
//! section (and of their symbols in `.symtab`): the command line's, with each archive's members where and in the
//! order they were loaded, not the archive's. GNU ld, at an archive, goes over its symbol index again and again,
//! loading each member that defines a name the files loaded so far refer to and do not define, until a pass loads
//! none: a member loaded in a pass makes the members after it wanted in the same pass, those before it in the
//! next. The archives of a group (`--start-group`) are gone over again after it until nothing is loaded, and an
//! archive named a second time is gone over again there.
//!
//! Resolution (`resolve`) runs this once it knows which members are linked, before it chooses COMDAT groups and
//! definitions: GNU ld keeps the first group and the first of equal definitions it loads. Per linked file, in
//! parallel, the members it wants: for each name it refers to (not weakly) or has as a common, the member that
//! resolution pulls in for that name, unless a file outside the archives defines it. Then one walk over the command
//! line simulates GNU ld's passes with the members wanted and not loaded yet (a bit each) and, per archive, a
//! cursor, so that its work is proportional to those wants, not to the names times the passes. A member wanted only
//! once its archive will not be gone over again (GNU ld would not find it; rivet links it, as lld does) comes right
//! after the file that wants it, as lld extracts it, so that crtend.o and crtn.o stay last.

use crate::elf::LE;
use crate::index::{FileId, NONE, SymId};
use crate::input::LazyRun;
use crate::par::FileRuns;
use crate::parse::ObjectFile;
use object::elf as E;
use std::ops::Range;

/// The order in which the objects' contents are laid out.
#[derive(Clone, Default)]
pub struct FileOrder {
    /// Every object: the linked ones in load order, then the others in input order. Empty when that is input
    /// order (no archive member was pulled in).
    seq: Vec<FileId>,
    /// Per object, its place in `seq` (empty with it).
    rank: Vec<u32>,
}

impl FileOrder {
    /// The order `seq` (every object once).
    fn new(seq: Vec<FileId>) -> FileOrder {
        let mut rank = vec![0u32; seq.len()];
        for (k, &f) in seq.iter().enumerate() {
            rank[f.index()] = k as u32;
        }
        let input_order = seq.iter().enumerate().all(|(k, f)| f.index() == k);
        if input_order {
            return FileOrder::default();
        }
        FileOrder { seq, rank }
    }

    /// Where object `f` comes: objects sort by it.
    #[inline]
    pub fn rank(&self, f: FileId) -> u32 {
        match self.rank.get(f.index()) {
            Some(&r) => r,
            None => f.0,
        }
    }

    /// The object at place `rank` (the inverse of `rank`).
    #[inline]
    pub fn at(&self, rank: u32) -> FileId {
        match self.seq.get(rank as usize) {
            Some(&f) => f,
            None => FileId(rank),
        }
    }

    /// All `n` objects in this order.
    pub fn files(&self, n: usize) -> impl Iterator<Item = FileId> + '_ {
        let input = if self.seq.is_empty() { n } else { 0 };
        (0..input).map(FileId::new).chain(self.seq.iter().copied())
    }
}

/// The linked files as resolution has pulled them in: what their load order follows from.
pub struct Linked<'a> {
    pub objects: &'a [ObjectFile],
    pub object_ids: &'a [Vec<SymId>],
    pub live: &'a [bool],
    pub runs: &'a FileRuns,
    pub lazy_runs: &'a [LazyRun],
    pub groups: &'a [Range<usize>],
    /// The members that the command line's names (`-u`, the entry, `--defsym`, a script's) pulled in, in that
    /// order: GNU ld refers to them before it reads any file.
    pub roots: Vec<FileId>,
    /// The members that shared objects' references pulled in, each with the number of objects before its shared
    /// object on the command line.
    pub by_shared: Vec<(usize, FileId)>,
}

/// The linked objects' load order (see the module comment). `provider(g)` is the member that a reference to name
/// `g` makes GNU ld load, if any: the one resolution pulled in for it when no file outside the archives defines it.
/// Resolution calls this only when it pulled members in (input order otherwise).
pub fn load_order(l: &Linked, provider: impl Fn(SymId) -> Option<FileId> + Sync) -> FileOrder {
    let n = l.objects.len();
    let mut archive = vec![NONE; n];
    for run in l.lazy_runs {
        archive[run.files.clone()].fill(run.first);
    }
    let wants: Vec<Vec<FileId>> = l.runs.map(|f| wanted_members(l, &archive, &provider, f));
    let mut sim = Simulation {
        wants: &wants,
        archive: &archive,
        loaded: vec![false; n],
        pending: vec![0; n.div_ceil(64)],
        pending_in: vec![0; l.lazy_runs.len()],
        passed: vec![false; l.lazy_runs.len()],
        seq: Vec::with_capacity(n),
        now: Vec::new(),
    };
    for &m in &l.roots {
        sim.wanted_here(m);
    }
    sim.command_line(l);
    // The rest, linked for no reference (none that GNU ld would see), then the files not linked.
    for f in (0..n).map(FileId::new) {
        if l.live[f.index()] && !sim.loaded[f.index()] {
            sim.load(f);
        }
    }
    for f in (0..n).map(FileId::new) {
        if !l.live[f.index()] {
            sim.seq.push(f);
        }
    }
    FileOrder::new(sim.seq)
}

/// The linked archive members (`archive[m]` not `NONE`) that linked object `f` makes GNU ld load: the `provider` of
/// each name `f` refers to (not weakly) or has as a common. A member may be listed more than once
/// (`Simulation::want` takes it once): sorting each list cost more than the repeats.
fn wanted_members(
    l: &Linked,
    archive: &[u32],
    provider: &impl Fn(SymId) -> Option<FileId>,
    f: FileId,
) -> Vec<FileId> {
    let mut out = Vec::new();
    if !l.live[f.index()] {
        return out;
    }
    let o = &l.objects[f.index()];
    let syms = &o.syms[o.first_global..];
    for (k, (s, &g)) in syms.iter().zip(&l.object_ids[f.index()]).enumerate() {
        let refers = match s.st_shndx.get(LE) {
            E::SHN_UNDEF => s.st_bind() != E::STB_WEAK,
            E::SHN_COMMON => true,
            _ => false,
        };
        if refers
            && let Some(m) = provider(g)
            && archive[m.index()] != NONE
            && l.live[m.index()]
            && m != f
            && out.last() != Some(&m)
        {
            if out.is_empty() {
                // Room for all it could want: one allocation, where growing was a good part of the pass.
                out.reserve_exact(syms.len() - k);
            }
            out.push(m);
        }
    }
    out
}

/// GNU ld's walk over the command line.
struct Simulation<'a> {
    /// Per object, the members it wants (`wanted_members`).
    wants: &'a [Vec<FileId>],
    /// Per object, the first run of its archive (`LazyRun::first`), or `NONE`.
    archive: &'a [u32],
    loaded: Vec<bool>,
    /// A bit per object: a member wanted and not loaded yet.
    pending: Vec<u64>,
    /// Per archive (its first run): how many of its members are pending.
    pending_in: Vec<u32>,
    /// Per archive (its first run): it will not be gone over again (GNU ld would not find what is wanted from it
    /// from now on; rivet links it as lld does, after the file that wants it).
    passed: Vec<bool>,
    seq: Vec<FileId>,
    /// `load`'s stack, kept between calls.
    now: Vec<FileId>,
}

impl Simulation<'_> {
    /// Loads `f`, and right after it (depth first, as lld extracts them) the members it wants from archives
    /// that will not be gone over again.
    fn load(&mut self, f: FileId) {
        let mut now = std::mem::take(&mut self.now);
        now.push(f);
        while let Some(f) = now.pop() {
            if std::mem::replace(&mut self.loaded[f.index()], true) {
                continue;
            }
            self.seq.push(f);
            let from = now.len();
            for &m in &self.wants[f.index()] {
                if self.want(m) {
                    now.push(m);
                }
            }
            now[from..].reverse();
        }
        self.now = now;
    }

    /// Member `m` is wanted: loaded when its archive is next gone over; or, if it will not be, right away (true).
    fn want(&mut self, m: FileId) -> bool {
        let (a, bit) = (self.archive[m.index()], 1u64 << (m.0 % 64));
        let word = &mut self.pending[m.index() / 64];
        if a == NONE || self.loaded[m.index()] || *word & bit != 0 {
            return false;
        }
        if self.passed[a as usize] {
            return true;
        }
        *word |= bit;
        self.pending_in[a as usize] += 1;
        false
    }

    /// The first pending member in `from..end`.
    fn next_pending(&self, from: usize, end: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut bits = self.pending.get(w)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                let m = w * 64 + bits.trailing_zeros() as usize;
                return (m < end).then_some(m);
            }
            w += 1;
            if w * 64 >= end {
                return None;
            }
            bits = self.pending[w];
        }
    }

    /// Goes over archive `a` (its first run in `runs`) until a pass loads nothing; whether any member was loaded.
    fn passes(&mut self, a: u32, runs: &[LazyRun]) -> bool {
        let files = runs[a as usize].files.clone();
        let any = self.pending_in[a as usize] > 0;
        while self.pending_in[a as usize] > 0 {
            // One pass: the members wanted after the last one loaded are loaded in it, the others in the next.
            let mut from = files.start;
            while let Some(m) = self.next_pending(from, files.end) {
                self.pending[m / 64] &= !(1 << (m % 64));
                self.pending_in[a as usize] -= 1;
                from = m + 1;
                self.load(FileId::new(m));
            }
        }
        any
    }

    /// Goes over the archives of `runs` again and again until nothing is loaded.
    fn again<'r>(&mut self, all: &[LazyRun], runs: impl Iterator<Item = &'r LazyRun> + Clone) {
        while runs
            .clone()
            .fold(false, |any, r| self.passes(r.first, all) | any)
        {}
    }

    /// The objects and archives in command-line order, the shared objects' wants where they are, each group's
    /// archives gone over again at its end, and at last every archive again (nothing should be left by then).
    fn command_line(&mut self, l: &Linked) {
        let n = l.objects.len();
        // The members that shared objects' references pulled in, by the shared object's place.
        let mut by_shared = l.by_shared.clone();
        by_shared.sort_unstable();
        let mut by_shared = by_shared.into_iter().peekable();
        // Per archive, its last run.
        let mut last = vec![0; l.lazy_runs.len()];
        for (k, r) in l.lazy_runs.iter().enumerate() {
            last[r.first as usize] = k;
        }
        let grouped = |r: &LazyRun| {
            (l.groups.iter()).any(|g| g.start <= r.files.start && r.files.end <= g.end)
        };
        let mut runs = l.lazy_runs.iter().enumerate().peekable();
        let mut groups = l.groups.iter().filter(|g| !g.is_empty()).peekable();
        let mut f = 0;
        while f < n {
            while let Some((_, m)) = by_shared.next_if(|&(at, _)| at <= f) {
                self.wanted_here(m);
            }
            match runs.next_if(|(_, r)| r.files.start == f) {
                Some((k, run)) => {
                    self.passes(run.first, l.lazy_runs);
                    f = run.files.end;
                    self.passed[run.first as usize] |=
                        last[run.first as usize] == k && !grouped(run);
                }
                None => {
                    if l.live[f] && self.archive[f] == NONE {
                        self.load(FileId::new(f));
                    }
                    f += 1;
                }
            }
            while let Some(g) = groups.next_if(|g| g.end <= f) {
                let inside =
                    |(_, r): &(usize, &LazyRun)| g.start <= r.files.start && r.files.end <= g.end;
                let inside: Vec<(usize, &LazyRun)> =
                    l.lazy_runs.iter().enumerate().filter(inside).collect();
                self.again(l.lazy_runs, inside.iter().map(|(_, r)| *r));
                for (k, r) in inside {
                    self.passed[r.first as usize] |= last[r.first as usize] == k;
                }
            }
        }
        for (_, m) in by_shared {
            self.wanted_here(m);
        }
        self.again(l.lazy_runs, l.lazy_runs.iter());
    }

    /// Member `m` is wanted where the walk is (not by a file it loads).
    fn wanted_here(&mut self, m: FileId) {
        if self.want(m) {
            self.load(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_pending_finds_the_first_bit_in_range() {
        let (wants, archive) = (vec![Vec::new(); 200], vec![0; 200]);
        let mut sim = Simulation {
            wants: &wants,
            archive: &archive,
            loaded: vec![false; 200],
            pending: vec![0; 4],
            pending_in: vec![0],
            passed: vec![false],
            seq: Vec::new(),
            now: Vec::new(),
        };
        for m in [3, 64, 130, 199] {
            assert!(!sim.want(FileId::new(m)));
        }
        assert_eq!(sim.pending_in[0], 4);
        assert_eq!(sim.next_pending(0, 200), Some(3));
        assert_eq!(sim.next_pending(4, 200), Some(64));
        assert_eq!(sim.next_pending(65, 130), None);
        assert_eq!(sim.next_pending(65, 131), Some(130));
        assert_eq!(sim.next_pending(131, 200), Some(199));
        assert_eq!(sim.next_pending(200, 200), None);
        // Taken once: a member already pending is not counted again.
        assert!(!sim.want(FileId::new(64)));
        assert_eq!(sim.pending_in[0], 4);
    }
}
