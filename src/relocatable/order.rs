//! The order GNU ld reads a partial link's objects in, which is the order of their sections in each output
//! section and of their symbols: the command line's, with each archive's members in the order they were
//! loaded, not the archive's. GNU ld, at an archive, goes over its symbol index again and again, loading each
//! member that defines a name the files loaded so far refer to and do not define, until a pass loads none; a
//! member's references can so load a member before it in a later pass. Groups (`--start-group`) go over their
//! archives again until nothing is loaded; rivet, which pulls members from any archive, goes over all of them.

use crate::elf::LE;
use crate::index::FileId;
use crate::parse::ObjectFile;
use crate::resolve::Resolved;
use object::elf as E;

/// The live objects of `res` in GNU ld's load order (the `-u` names and the entry symbol referred to first).
pub fn load_order(config: &crate::args::Config, res: &Resolved) -> Vec<FileId> {
    let mut st = State {
        res,
        loaded: vec![false; res.objects.len()],
        defined: vec![false; res.num_globals()],
        wanted: vec![false; res.num_globals()],
        order: Vec::with_capacity(res.objects.len()),
    };
    for name in config.undefined.iter().chain(&config.entry) {
        if let Some(g) = res.names.lookup(name.as_bytes()) {
            st.wanted[g.index()] = true;
        }
    }
    let archives = archives(&res.objects);
    let mut next_archive = archives.iter().peekable();
    for f in 0..res.objects.len() {
        if let Some(a) = next_archive.next_if(|a| a.start == f) {
            st.passes(a.clone());
        }
        if res.object_live[f] && !res.objects[f].lazy {
            st.load(FileId::new(f));
        }
    }
    // What was pulled in by a later file (a group's archives, gone over again).
    loop {
        let mut any = false;
        for a in &archives {
            any |= st.passes(a.clone());
        }
        if !any {
            break;
        }
    }
    // Anything else live, in input order.
    for f in 0..res.objects.len() {
        if res.object_live[f] && !st.loaded[f] {
            st.load(FileId::new(f));
        }
    }
    st.order
}

/// The runs of archive members (`lazy` objects named `archive(member)`, or between `--start-lib` and
/// `--end-lib`), one per archive.
fn archives(objects: &[ObjectFile]) -> Vec<std::ops::Range<usize>> {
    let archive = |o: &ObjectFile| o.name.rsplit_once('(').map(|a| a.0.to_string());
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (f, o) in objects.iter().enumerate().filter(|(_, o)| o.lazy) {
        match runs.last_mut() {
            Some(r) if r.end == f && archive(&objects[r.start]) == archive(o) => r.end = f + 1,
            _ => runs.push(f..f + 1),
        }
    }
    runs
}

struct State<'a> {
    res: &'a Resolved,
    loaded: Vec<bool>,
    /// Per global: defined by a loaded file; referred to (not weakly) by one.
    defined: Vec<bool>,
    wanted: Vec<bool>,
    order: Vec<FileId>,
}

impl State<'_> {
    fn load(&mut self, f: FileId) {
        self.loaded[f.index()] = true;
        self.order.push(f);
        let o = &self.res.objects[f.index()];
        for (k, &g) in self.res.object_ids[f.index()].iter().enumerate() {
            let s = &o.syms[o.first_global + k];
            if g.is_none() {
                continue;
            }
            if o.sym_shndx(o.first_global + k) != E::SHN_UNDEF as u32 {
                self.defined[g.index()] = true;
            } else if s.st_bind() != E::STB_WEAK {
                self.wanted[g.index()] = true;
            }
        }
    }

    /// Whether live member `f` defines a name the loaded files want.
    fn wants(&self, f: FileId) -> bool {
        let o = &self.res.objects[f.index()];
        (self.res.object_ids[f.index()].iter().enumerate()).any(|(k, &g)| {
            g.is_some()
                && self.wanted[g.index()]
                && !self.defined[g.index()]
                && o.sym_shndx(o.first_global + k) != E::SHN_UNDEF as u32
                && o.syms[o.first_global + k].st_shndx.get(LE) != E::SHN_COMMON
        })
    }

    /// GNU ld's passes over one archive's index (its members in order); whether any member was loaded.
    fn passes(&mut self, members: std::ops::Range<usize>) -> bool {
        let mut any = false;
        loop {
            let mut this_pass = false;
            for f in members.clone().map(FileId::new) {
                if self.res.object_live[f.index()] && !self.loaded[f.index()] && self.wants(f) {
                    self.load(f);
                    this_pass = true;
                }
            }
            any |= this_pass;
            if !this_pass {
                return any;
            }
        }
    }
}
