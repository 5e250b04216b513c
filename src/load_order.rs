//! Pass 4b: the order GNU ld loads the linked objects in, which is the order of their sections in each output
//! section (and of their symbols in `.symtab`): the command line's, with each archive's members where and in the
//! order they were loaded, not the archive's. GNU ld, at an archive, goes over its symbol index again and again,
//! loading each member that defines a name the files loaded so far refer to and do not define, until a pass loads
//! none: a member loaded in a pass makes the members after it wanted in the same pass, those before it in the
//! next. The archives of a group (`--start-group`) are gone over again after it until nothing is loaded, and an
//! archive named a second time is gone over again there.
//!
//! Resolution (`resolve`) has decided which members are linked, and each global's winning definition; this pass
//! only orders them. Per linked file, in parallel, the members it wants: those holding the winning definition of
//! a name it refers to (not weakly) or has as a common. Then one walk over the command line simulates GNU ld's
//! passes with, per archive, the set of members wanted and not loaded yet and a cursor, so that its work is
//! proportional to those wants, not to the names times the passes. A member wanted only once its archive will not
//! be gone over again (GNU ld would not find it; rivet links it, as lld does) comes right after the file that
//! wants it, as lld extracts it, so that crtend.o and crtn.o stay last.

use crate::args::Config;
use crate::elf::LE;
use crate::index::{FileId, NONE};
use crate::input::LazyRun;
use crate::resolve::{Def, Resolved};
use object::elf as E;
use std::collections::BTreeSet;

/// The order in which the objects' contents are laid out.
#[derive(Default)]
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

    /// Whether this is input order.
    pub fn is_input_order(&self) -> bool {
        self.seq.is_empty()
    }

    /// Where object `f` comes: objects sort by it.
    #[inline]
    pub fn rank(&self, f: FileId) -> u32 {
        match self.rank.get(f.index()) {
            Some(&r) => r,
            None => f.0,
        }
    }

    /// The objects in this order, or nothing for input order.
    pub fn sequence(&self) -> Vec<FileId> {
        self.seq.clone()
    }

    /// All `n` objects in this order.
    pub fn files(&self, n: usize) -> impl Iterator<Item = FileId> + '_ {
        let input = if self.seq.is_empty() { n } else { 0 };
        (0..input).map(FileId::new).chain(self.seq.iter().copied())
    }
}

/// The linked objects' load order (see the module comment); the `-u` names and the entry symbol are referred to
/// first.
pub fn load_order(config: &Config, res: &Resolved) -> FileOrder {
    let n = res.objects.len();
    if res.extracted.is_empty() {
        return FileOrder::default();
    }
    let mut archive = vec![NONE; n];
    for run in &res.lazy_runs {
        archive[run.files.clone()].fill(run.first);
    }
    let wants: Vec<Vec<FileId>> = res.runs.map(|f| wanted_members(res, &archive, f));
    let mut sim = Simulation {
        wants: &wants,
        archive: &archive,
        loaded: vec![false; n],
        queued: vec![false; n],
        pending: vec![BTreeSet::new(); res.lazy_runs.len()],
        passed: vec![false; res.lazy_runs.len()],
        seq: Vec::with_capacity(n),
        now: Vec::new(),
    };
    for g in config.undefined.iter().chain(&config.entry) {
        if let Some(g) = res.names.lookup(g.as_bytes())
            && let Def::Object { file, .. } = res.defs[g.index()]
        {
            sim.wanted_here(file);
        }
    }
    // Other names the command line or a script refers to (`--defsym`, `EXTERN`...).
    for e in res.extracted.iter().filter(|e| e.by == NONE) {
        sim.wanted_here(e.member);
    }
    sim.command_line(res);
    // The rest, linked for no reference (none that GNU ld would see), then the files not linked.
    for f in (0..n).map(FileId::new) {
        if res.object_live[f.index()] && !sim.loaded[f.index()] {
            sim.load(f);
        }
    }
    for f in (0..n).map(FileId::new) {
        if !res.object_live[f.index()] {
            sim.seq.push(f);
        }
    }
    FileOrder::new(sim.seq)
}

/// The archive members (`archive[m]` not `NONE`) that linked object `f` makes GNU ld load: those with the winning
/// definition of a name `f` refers to (not weakly) or has as a common. A member may be listed more than once
/// (`Simulation::want` takes it once): sorting each list cost more than the repeats.
fn wanted_members(res: &Resolved, archive: &[u32], f: FileId) -> Vec<FileId> {
    let mut out = Vec::new();
    if !res.object_live[f.index()] {
        return out;
    }
    let o = &res.objects[f.index()];
    let syms = &o.syms[o.first_global..];
    for (s, &g) in syms.iter().zip(&res.object_ids[f.index()]) {
        let shndx = s.st_shndx.get(LE);
        let refers = match shndx {
            E::SHN_UNDEF => s.st_bind() != E::STB_WEAK,
            E::SHN_COMMON => true,
            _ => false,
        };
        if refers
            && g.is_some()
            && let Def::Object { file, .. } = res.defs[g.index()]
            && file != f
            && archive[file.index()] != NONE
            && out.last() != Some(&file)
        {
            out.push(file);
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
    /// Per object: in `pending`.
    queued: Vec<bool>,
    /// Per archive (its first run): the members wanted and not loaded yet.
    pending: Vec<BTreeSet<FileId>>,
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
        let a = self.archive[m.index()];
        if a == NONE || self.loaded[m.index()] || self.queued[m.index()] {
            return false;
        }
        if self.passed[a as usize] {
            return true;
        }
        self.queued[m.index()] = true;
        self.pending[a as usize].insert(m);
        false
    }

    /// Goes over archive `a` (its first run) until a pass loads nothing; whether any member was loaded.
    fn passes(&mut self, a: u32) -> bool {
        let mut any = false;
        while !self.pending[a as usize].is_empty() {
            // One pass: the members wanted after the last one loaded are loaded in it, the others in the next.
            let mut from = FileId(0);
            while let Some(m) = self.pending[a as usize].range(from..).next().copied() {
                self.pending[a as usize].remove(&m);
                from = FileId(m.0 + 1);
                self.load(m);
                any = true;
            }
        }
        any
    }

    /// Goes over archives `runs` (by their first runs) again and again until nothing is loaded.
    fn again(&mut self, runs: impl Iterator<Item = u32> + Clone) {
        while runs.clone().fold(false, |any, a| self.passes(a) | any) {}
    }

    /// The objects and archives in command-line order, the shared objects' wants where they are, each group's
    /// archives gone over again at its end, and at last every archive again (nothing should be left by then).
    fn command_line(&mut self, res: &Resolved) {
        let n = res.objects.len();
        // The members that shared objects' references pulled in, by the shared object's place.
        let mut by_shared: Vec<(usize, FileId)> = (res.extracted.iter())
            .filter(|e| e.by != NONE && e.by as usize >= n)
            .filter_map(|e| Some((res.shared.get(e.by as usize - n)?.objects_before, e.member)))
            .collect();
        by_shared.sort_unstable();
        let mut by_shared = by_shared.into_iter().peekable();
        // Per archive, its last run.
        let mut last = vec![0; res.lazy_runs.len()];
        for (k, r) in res.lazy_runs.iter().enumerate() {
            last[r.first as usize] = k;
        }
        let grouped = |r: &LazyRun| {
            (res.groups.iter()).any(|g| g.start <= r.files.start && r.files.end <= g.end)
        };
        let mut runs = res.lazy_runs.iter().enumerate().peekable();
        let mut groups = res.groups.iter().filter(|g| !g.is_empty()).peekable();
        let mut f = 0;
        while f < n {
            while let Some((_, m)) = by_shared.next_if(|&(at, _)| at <= f) {
                self.wanted_here(m);
            }
            match runs.next_if(|(_, r)| r.files.start == f) {
                Some((k, run)) => {
                    self.passes(run.first);
                    f = run.files.end;
                    self.passed[run.first as usize] |=
                        last[run.first as usize] == k && !grouped(run);
                }
                None => {
                    if res.object_live[f] && self.archive[f] == NONE {
                        self.load(FileId::new(f));
                    }
                    f += 1;
                }
            }
            while let Some(g) = groups.next_if(|g| g.end <= f) {
                let inside =
                    |(_, r): &(usize, &LazyRun)| g.start <= r.files.start && r.files.end <= g.end;
                let inside: Vec<(usize, &LazyRun)> =
                    res.lazy_runs.iter().enumerate().filter(inside).collect();
                self.again(inside.iter().map(|(_, r)| r.first));
                for (k, r) in inside {
                    self.passed[r.first as usize] |= last[r.first as usize] == k;
                }
            }
        }
        for (_, m) in by_shared {
            self.wanted_here(m);
        }
        self.again(res.lazy_runs.iter().map(|r| r.first));
    }

    /// Member `m` is wanted where the walk is (not by a file it loads).
    fn wanted_here(&mut self, m: FileId) {
        if self.want(m) {
            self.load(m);
        }
    }
}
