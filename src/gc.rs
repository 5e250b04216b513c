//! Pass 5: which input sections are live.
//!
//! Input: the resolved symbol table. Output: [`Liveness`], one flag per section of every object.
//! Without `--gc-sections` every copied section of a live object that lost no COMDAT group is live. With it,
//! liveness spreads from the roots (entry, `-u`, exported symbols, init/fini arrays, notes, `KEEP`-like sections,
//! sections that `__start_`/`__stop_` symbols bracket, `SHF_GNU_RETAIN`) along relocations, as a parallel
//! depth-first search whose threads split their work stacks, with visited flags set by one atomic swap each.
//! Then, as GNU ld: each file that keeps an allocated section keeps its debug information and its other
//! unallocated sections without relocations; `.eh_frame` stays where the layout keeps it.

use crate::args::{Config, OutputKind};
use crate::index::{FileId, SecIdx, SymId};
use crate::names::GcRoot;
use crate::parse::{ObjectFile, SectionKind};
use crate::resolve::{Def, Resolved};
use object::elf as E;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

pub struct Liveness {
    /// Per object, per section: kept.
    pub live: Vec<Vec<bool>>,
    /// With `--gc-sections`: which shared objects are still needed (lld's rule: an `--as-needed` library stays
    /// only if a live section makes a non-weak reference to a symbol it defines). `None`: unchanged.
    pub shared_needed: Option<Vec<bool>>,
    /// With a `SECTIONS` script: per object, per section, the statement that places it (`script::sections`'s
    /// `Selection` code); empty without one.
    pub script: Vec<Vec<u32>>,
    /// With `--icf`: each folded section (no longer live) and the section it was folded into, by the first.
    pub folded: Vec<(FileId, SecIdx, FileId, SecIdx)>,
}

impl Liveness {
    #[inline]
    pub fn is_live(&self, f: FileId, s: SecIdx) -> bool {
        self.live[f.index()]
            .get(s.index())
            .copied()
            .unwrap_or(false)
    }
}

/// Whether section `s` of object `f` can be in the output at all: its file is linked, it is not a
/// link-time-only table, its COMDAT group won, `-S`/`-s` does not strip it (debug sections), and `--gdb-index` does not
/// take its place (the GNU name tables).
fn candidate(res: &Resolved, f: FileId, s: SecIdx) -> bool {
    let o = &res.objects[f.index()];
    let sec = o.sec(s);
    res.object_live[f.index()]
        && sec.kind != SectionKind::Ignored
        && !res.comdat_discarded[f.index()][s.index()]
        && !(res.strip_debug && !sec.is_alloc() && is_debug_information(o.sec_name(s.index())))
        && !(res.drop_gnu_pubnames && !sec.is_alloc() && is_gnu_pubnames(o.sec_name(s.index())))
}

/// `.debug_gnu_pubnames` and `.debug_gnu_pubtypes`, which `--gdb-index` reads into `.gdb_index` and leaves out of
/// the output, as lld and mold do.
fn is_gnu_pubnames(name: &[u8]) -> bool {
    name == b".debug_gnu_pubnames" || name == b".debug_gnu_pubtypes"
}

/// Whether GNU ld counts section `name` (unallocated) as debug information (its `SEC_DEBUGGING`), which `-S` and
/// `-s` leave out: the DWARF sections, and the older `.stab` and `.line`.
pub fn is_debug_information(name: &[u8]) -> bool {
    is_debug_section(name)
        || name.starts_with(b".gnu.linkonce.wi.")
        || name.starts_with(b".line")
        || name.starts_with(b".stab")
        || name == b".gdb_index"
}

/// Whether `name` is a DWARF section's.
fn is_debug_section(name: &[u8]) -> bool {
    name.starts_with(b".debug")
        || name.starts_with(b".zdebug")
        || name.starts_with(b".gnu.debuglto")
}

fn is_root_section(res: &Resolved, o: &ObjectFile, s: SecIdx) -> bool {
    match o.gc_root(s) {
        GcRoot::No | GcRoot::Unallocated => false,
        GcRoot::Yes => true,
        GcRoot::IfBracketed => {
            let name = o.sec_name(s.index());
            let start = [b"__start_", name].concat();
            let stop = [b"__stop_", name].concat();
            res.names.lookup(&start).is_some() || res.names.lookup(&stop).is_some()
        }
    }
}

pub fn gc(config: &Config, res: &Resolved) -> Result<Liveness, crate::diag::Errors> {
    let script = match &config.sections {
        Some(s) => {
            let _t = crate::timing::span("script statements");
            select_script_statements(res, s, config.orphan_handling)
        }
        None => Vec::new(),
    };
    let mut liveness = {
        let _t = crate::timing::span("mark live");
        mark_live(config, res, &script)
    };
    // `/DISCARD/`: out of the output, and an error where the output refers to them.
    let mut discarded_live = false;
    for (live, sel) in liveness.live.iter_mut().zip(&script) {
        for (l, &k) in live.iter_mut().zip(sel) {
            if k == crate::script::sections::DISCARD {
                discarded_live |= *l;
                *l = false;
            }
        }
    }
    if discarded_live || res.commons_discarded {
        discarded_references(res, &liveness.live, &script)?;
    }
    liveness.script = script;
    Ok(liveness)
}

/// The output's references to symbols of sections a script discards (`/DISCARD/`, `--orphan-handling=discard`):
/// GNU ld's error, once per symbol and referring section. Debug sections, `.eh_frame` and `.gcc_except_table` may
/// refer to them (as in GNU ld: they get tombstones, or lose the record).
fn discarded_references(
    res: &Resolved,
    live: &[Vec<bool>],
    script: &[Vec<u32>],
) -> Result<(), crate::diag::Errors> {
    let mut errors: Vec<String> = res.runs.flat_map(|f| {
        let o = &res.objects[f.index()];
        let mut out = Vec::new();
        for (s, sec) in o.secs() {
            if !live[f.index()][s.index()]
                || !sec.is_alloc()
                || sec.kind == SectionKind::EhFrame
                || o.sec_name(s.index()) == b".gcc_except_table"
            {
                continue;
            }
            for r in sec.relas() {
                let sym = r.r_sym(crate::elf::LE, false) as usize;
                let Some((tf, ts)) = target_section(res, f, sym) else {
                    if let Some(t) = discarded_common(res, f, sym) {
                        let name = crate::diag::demangle(o.sym_name(sym));
                        out.push(format!(
                            "`{name}' referenced in section `{}' of {}: defined in discarded section `COMMON' of {}",
                            o.section_name(s.0),
                            o.name,
                            res.objects[t.index()].name
                        ));
                    }
                    continue;
                };
                if script[tf.index()][ts.index()] != crate::script::sections::DISCARD {
                    continue;
                }
                let name = o.sym_name(sym);
                let name = if name.is_empty() {
                    o.section_name(o.sym_shndx(sym))
                } else {
                    crate::diag::demangle(name)
                };
                let t = &res.objects[tf.index()];
                out.push(format!(
                    "`{name}' referenced in section `{}' of {}: defined in discarded section `{}' of {}",
                    o.section_name(s.0),
                    o.name,
                    t.section_name(ts.0),
                    t.name
                ));
            }
        }
        out.into_iter()
    });
    if errors.is_empty() {
        return Ok(());
    }
    errors.dedup();
    Err(crate::diag::Errors(errors))
}

/// The file whose common symbol relocation target `i` (a symbol of file `f`) is, where a script discards the
/// commons.
fn discarded_common(res: &Resolved, f: FileId, i: usize) -> Option<FileId> {
    let o = &res.objects[f.index()];
    if !res.commons_discarded || i < o.first_global {
        return None;
    }
    let g = *res.object_ids[f.index()].get(i - o.first_global)?;
    match res.defs[g.index()] {
        Def::Object { file, sym } => (res.objects[file.index()].sym_shndx(sym as usize)
            == E::SHN_COMMON as u32)
            .then_some(file),
        _ => None,
    }
}

/// Per object, per section: the script statement that places it (`SectionsScript::select`, with the sort packed
/// by `pack_selection`). A script whose statements match any file answers each section name once per file.
fn select_script_statements(
    res: &Resolved,
    script: &crate::script::sections::SectionsScript,
    orphans: crate::args::OrphanHandling,
) -> Vec<Vec<u32>> {
    use crate::script::sections::{DISCARD, InputName, LATE_KEEP, ORPHAN, pack_selection};
    let discard_orphans = orphans == crate::args::OrphanHandling::Discard;
    if script.has_constraints() {
        decide_constraints(res, script);
    }
    res.runs.map(|f| {
        let o = &res.objects[f.index()];
        let file = InputName::of(&o.name);
        o.secs()
            .map(|(s, sec)| {
                if !candidate(res, f, s) {
                    return ORPHAN;
                }
                let writable = sec.flags() & E::SHF_WRITE as u64 != 0;
                let name = o.sec_name(s.index());
                let (k, sort) = script.select(&file, name, writable);
                if k == ORPHAN && discard_orphans {
                    return DISCARD;
                }
                let late_keep =
                    k < DISCARD && !script.keeps(k) && script.keep_matches(&file, name, writable);
                pack_selection(k, sort) | if late_keep { LATE_KEEP } else { 0 }
            })
            .collect()
    })
}

/// Which `ONLY_IF_RO`/`ONLY_IF_RW` descriptions the script keeps for these inputs (GNU ld decides before its
/// `--gc-sections`, over every section a statement matches).
fn decide_constraints(res: &Resolved, script: &crate::script::sections::SectionsScript) {
    use crate::script::sections::InputName;
    let per_file = res.runs.map(|f| {
        let o = &res.objects[f.index()];
        let file = InputName::of(&o.name);
        (o.secs())
            .filter(|&(s, _)| candidate(res, f, s))
            .map(|(s, sec)| {
                (
                    o.sec_name(s.index()),
                    sec.flags() & E::SHF_WRITE as u64 != 0,
                )
            })
            .filter(|&(name, writable)| script.constrained_match(&file, name, writable))
            .map(|(name, writable)| (InputName::of(&o.name), name, writable))
            .collect::<Vec<_>>()
    });
    let sections: Vec<_> = per_file.into_iter().flatten().collect();
    script.decide_constraints(&sections);
}

fn mark_live(config: &Config, res: &Resolved, script: &[Vec<u32>]) -> Liveness {
    if !config.gc_sections {
        return Liveness {
            live: all_candidates(res),
            shared_needed: None,
            script: Vec::new(),
            folded: Vec::new(),
        };
    }
    let marker = Marker::new(config, res);
    let t = crate::timing::span("roots");
    let (mut frontier, lsdas) = marker.root_sections(config.sections.as_deref(), script);
    let mut root_syms = named_root_symbols(config, res);
    // Named on the command line: these keep a library they resolve to (exports below do not).
    marker.use_libraries_of(&root_syms);
    root_syms.extend(exported_symbols(config, res));
    marker.mark_definitions(&root_syms, &mut frontier);
    let dependents = link_order_dependents(res);
    drop(t);
    let t = crate::timing::span("mark");
    marker.mark_reachable(frontier, &dependents);
    // The exception tables of the live functions, and what they alone keep, until no function is added.
    loop {
        let more: Vec<(FileId, SecIdx)> = (lsdas.iter())
            .filter(|((ff, fs), (lf, ls))| marker.is_marked(*ff, *fs) && marker.mark(*lf, *ls))
            .map(|&(_, lsda)| lsda)
            .collect();
        if more.is_empty() {
            break;
        }
        marker.mark_reachable(more, &dependents);
    }
    drop(t);
    if config.sections.is_none() {
        marker.keep_eh_frames();
    }
    marker.keep_file_extras();
    let liveness = marker.into_liveness();
    if config.print_gc_sections {
        print_removed_sections(res, &liveness.live);
    }
    liveness
}

/// Per `--defsym` symbol (and script assignment outside `SECTIONS`, evaluated as one or as a command of
/// `SECTIONS` outside its output sections): the sections of the symbols its expression reads, following other
/// `--defsym`s. GNU ld evaluates these before its mark, so that a reference to `--defsym alias=func` keeps
/// `func`'s section; a relative expression's section is one of these.
fn defsym_sections(config: &Config, res: &Resolved) -> HashMap<SymId, Vec<Root>> {
    use crate::script::ast::SectionsCommand;
    let mut names: HashMap<SymId, Vec<SymId>> = HashMap::new();
    let script = (config.sections.iter())
        .flat_map(|sc| &sc.commands)
        .filter_map(|c| match c {
            SectionsCommand::Assign(a) if a.target != "." => Some((&a.target, &a.text)),
            _ => None,
        });
    for (sym, text) in config.defsyms.iter().map(|(s, t)| (s, t)).chain(script) {
        let (Some(g), Ok(e)) = (res.names.lookup(sym.as_bytes()), crate::expr::parse(text)) else {
            continue;
        };
        let mut read = Vec::new();
        e.symbols(&mut read);
        let ids = read.iter().filter_map(|n| res.names.lookup(n.as_bytes()));
        names.entry(g).or_default().extend(ids);
    }
    let mut out = HashMap::new();
    for &g in names.keys() {
        let (mut todo, mut seen, mut within) = (vec![g], vec![g], Vec::new());
        while let Some(d) = todo.pop() {
            for &n in names.get(&d).into_iter().flatten() {
                match res.defs[n.index()] {
                    Def::Object { file, sym } => {
                        let s = res.objects[file.index()].sym_shndx(sym as usize) as usize;
                        if s != 0 && s < res.objects[file.index()].sections.len() {
                            within.push((file, SecIdx::new(s)));
                        }
                    }
                    Def::Linker if !seen.contains(&n) => {
                        seen.push(n);
                        todo.push(n);
                    }
                    _ => {}
                }
            }
        }
        out.insert(g, within);
    }
    out
}

/// Without `--gc-sections`: every candidate section is live.
fn all_candidates(res: &Resolved) -> Vec<Vec<bool>> {
    res.runs.map(|f| {
        (0..res.objects[f.index()].sections.len())
            .map(|s| candidate(res, f, SecIdx::new(s)))
            .collect()
    })
}

/// A section the mark starts from.
type Root = (FileId, SecIdx);

/// An FDE's function section and the data its FDE names besides (the LSDA): live only with the function.
type Lsda = (Root, Root);

/// Whether section `s` of file `f` holds code.
fn is_code(res: &Resolved, f: FileId, s: SecIdx) -> bool {
    res.objects[f.index()].sec(s).flags() & E::SHF_EXECINSTR as u64 != 0
}

/// `.eh_frame`'s records, read alongside its relocations in offset order, without a table of them.
#[derive(Default)]
struct EhWalk<'a> {
    data: &'a [u8],
    /// Where the next record starts.
    next: u64,
    /// The record read last: start, end, whether it is an FDE.
    current: Option<(u64, u64, bool)>,
    /// The last offset asked about.
    last: u64,
    /// The records stopped parsing (a 64-bit length, a record past the end, the terminator) or an offset came
    /// before the previous one: no more answers.
    done: bool,
}

impl EhWalk<'_> {
    /// The start of the FDE that holds offset `off`, if one does and the walk can tell.
    fn fde_at(&mut self, off: u64) -> Option<u64> {
        self.done |= off < self.last;
        self.last = off;
        while !self.done && self.current.is_none_or(|(_, end, _)| end <= off) {
            let word = |p: u64| {
                let p = usize::try_from(p).ok()?;
                Some(u32::from_le_bytes(
                    self.data.get(p..p.checked_add(4)?)?.try_into().ok()?,
                ))
            };
            let start = self.next;
            match (word(start), word(start + 4)) {
                (Some(len), Some(id)) if (4..u32::MAX).contains(&len) => {
                    let end = start + 4 + len as u64;
                    self.done = end > self.data.len() as u64;
                    (self.current, self.next) = (Some((start, end, id != 0)), end);
                }
                _ => self.done = true,
            }
        }
        match self.current {
            Some((start, end, true)) if !self.done && start <= off && off < end => Some(start),
            _ => None,
        }
    }
}

/// The mark's state: a flag per section, and which `--as-needed` libraries live code uses.
struct Marker<'a> {
    res: &'a Resolved,
    marks: Vec<Vec<AtomicBool>>,
    /// --as-needed libraries that resolve kept: the mark finds which of them live code really uses.
    track_shared: bool,
    /// Per global, with `track_shared`: some live object refers to it non-weakly and a shared object defines it.
    strong: Vec<AtomicBool>,
    /// Per shared object: used (always, for those not `--as-needed`).
    shared_used: Vec<AtomicBool>,
    /// Per `--defsym` symbol, the sections its value may lie in (`defsym_sections`).
    defsyms: HashMap<SymId, Vec<Root>>,
}

impl<'a> Marker<'a> {
    fn new(config: &Config, res: &'a Resolved) -> Marker<'a> {
        let track_shared = res
            .shared
            .iter()
            .zip(&res.shared_needed)
            .any(|(so, &needed)| so.as_needed && needed);
        let shared_used: Vec<AtomicBool> = res
            .shared
            .iter()
            .map(|so| AtomicBool::new(!so.as_needed))
            .collect();
        let strong = if track_shared {
            strong_shared_references(res)
        } else {
            Vec::new()
        };
        let marks: Vec<Vec<AtomicBool>> = res
            .objects
            .iter()
            .map(|o| o.sections.iter().map(|_| AtomicBool::new(false)).collect())
            .collect();
        Marker {
            res,
            marks,
            track_shared,
            strong,
            shared_used,
            defsyms: defsym_sections(config, res),
        }
    }

    /// Marks section `s` of object `f`, if it is a candidate: whether it was not marked before. Most edges lead to
    /// a section that is already marked: a plain load answers those without the atomic read-modify-write (which
    /// takes the cache line exclusively, from whichever thread marked it) or the checks.
    #[inline]
    fn mark(&self, f: FileId, s: SecIdx) -> bool {
        let m = &self.marks[f.index()][s.index()];
        !m.load(Relaxed) && candidate(self.res, f, s) && !m.swap(true, Relaxed)
    }

    /// A live reference by symbol `i` of object `f`: it keeps the library that defines it, if the reference is
    /// strong somewhere.
    #[inline]
    fn note_shared(&self, f: FileId, i: usize) {
        let res = self.res;
        let o = &res.objects[f.index()];
        if i >= o.first_global
            && let Some(&g) = res.object_ids[f.index()].get(i - o.first_global)
            && let Def::Shared { file, .. } = res.defs[g.index()]
            && !self.shared_used[file.index()].load(Relaxed)
            && self.strong[g.index()].load(Relaxed)
        {
            self.shared_used[file.index()].store(true, Relaxed);
        }
    }

    /// The root sections (`is_root_section`, and those a script's `KEEP` places), marked, and the data that
    /// `.eh_frame`'s CIEs refer to (personality pointers); and each FDE's (function, LSDA) pair, the LSDA to be
    /// kept with the function, as GNU ld keeps it.
    fn root_sections(
        &self,
        sections: Option<&crate::script::sections::SectionsScript>,
        script: &[Vec<u32>],
    ) -> (Vec<Root>, Vec<Lsda>) {
        let res = self.res;
        let objects = &res.objects;
        let kept = |f: FileId, s: SecIdx| {
            sections.is_some_and(|sc| sc.keeps(script[f.index()][s.index()]))
        };
        let per_file: Vec<(Vec<Root>, Vec<Lsda>)> = res.runs.map(|f| {
            let o = &objects[f.index()];
            let (mut roots, mut lsdas) = (Vec::new(), Vec::new());
            for (s, sec) in o.secs() {
                if (is_root_section(res, o, s) || kept(f, s)) && self.mark(f, s) {
                    roots.push((f, s));
                }
                if sec.kind == SectionKind::EhFrame && candidate(res, f, s) {
                    self.eh_frame_refs(f, &sec, &mut roots, &mut lsdas);
                }
            }
            (roots, lsdas)
        });
        let (roots, lsdas): (Vec<_>, Vec<_>) = per_file.into_iter().unzip();
        (roots.concat(), lsdas.concat())
    }

    /// What `.eh_frame` section `sec` of file `f` refers to besides code: data a CIE names (a personality
    /// pointer) goes in `roots`, marked; data an FDE names (its function's LSDA) goes in `lsdas` with the FDE's
    /// function. Where the records do not parse or the relocations are out of order, every such reference is a
    /// root (the safe superset).
    fn eh_frame_refs(
        &self,
        f: FileId,
        sec: &crate::parse::Sec,
        roots: &mut Vec<Root>,
        lsdas: &mut Vec<Lsda>,
    ) {
        let (res, le) = (self.res, crate::elf::LE);
        let mut walk = EhWalk {
            data: sec.data(),
            ..EhWalk::default()
        };
        let mut function: Option<(u64, Option<Root>)> = None;
        for r in sec.relas() {
            let i = r.r_sym(le, false) as usize;
            if self.track_shared {
                self.note_shared(f, i);
            }
            let target = target_section(res, f, i);
            let off = r.r_offset.get(le);
            match (walk.fde_at(off), function) {
                // PC begin: the FDE's function.
                (Some(start), _) if off == start + 8 => {
                    function = Some((start, target));
                    continue;
                }
                (Some(start), Some((at, Some(func)))) if start == at => {
                    if let Some(t) = target.filter(|&(tf, ts)| !is_code(res, tf, ts)) {
                        lsdas.push((func, t));
                    }
                    continue;
                }
                _ => {}
            }
            if let Some((tf, ts)) = target.filter(|&(tf, ts)| !is_code(res, tf, ts))
                && self.mark(tf, ts)
            {
                roots.push((tf, ts));
            }
        }
    }

    /// The sections a `--defsym` symbol that symbol `i` of file `f` resolves to may lie in, if it is one.
    fn defsym_of(&self, f: FileId, i: usize) -> Option<&[Root]> {
        if self.defsyms.is_empty() {
            return None;
        }
        let o = &self.res.objects[f.index()];
        let g = self.res.object_ids[f.index()].get(i.checked_sub(o.first_global)?)?;
        self.defsyms.get(g).map(Vec::as_slice)
    }

    fn is_marked(&self, f: FileId, s: SecIdx) -> bool {
        self.marks[f.index()][s.index()].load(Relaxed)
    }

    /// The libraries that define the globals `syms` are used.
    fn use_libraries_of(&self, syms: &[SymId]) {
        for &g in syms {
            if let Def::Shared { file, .. } = self.res.defs[g.index()] {
                self.shared_used[file.index()].store(true, Relaxed);
            }
        }
    }

    /// Marks the sections that define the globals `syms`, adding the newly marked ones to `frontier`.
    fn mark_definitions(&self, syms: &[SymId], frontier: &mut Vec<(FileId, SecIdx)>) {
        let res = self.res;
        for &g in syms {
            if let Def::Object { file, sym } = res.defs[g.index()] {
                let s = res.objects[file.index()].sym_shndx(sym as usize) as usize;
                if s < res.objects[file.index()].sections.len() && self.mark(file, SecIdx::new(s)) {
                    frontier.push((file, SecIdx::new(s)));
                }
            } else if let Some(within) = self.defsyms.get(&g) {
                frontier.extend(within.iter().filter(|&&(tf, ts)| self.mark(tf, ts)));
            }
        }
    }

    /// Marks everything reachable from `frontier` along relocations and `SHF_LINK_ORDER` links (`dependents`).
    ///
    /// Depth-first from every root on all threads; a task hands half of its stack to a new task when the stack
    /// grows large or when its thread has no queued task left for an idle thread to steal (`visit`).
    /// (Level-synchronous BFS paid a barrier per level, and call graphs are deep. Splitting only large stacks left
    /// one thread marking most of the graph: a narrow graph's stack stays small. rayon_core is a direct dependency
    /// for `current_thread_has_pending_tasks`, which rayon does not re-export.)
    fn mark_reachable(
        &self,
        frontier: Vec<(FileId, SecIdx)>,
        dependents: &[Vec<(SecIdx, SecIdx)>],
    ) {
        let res = self.res;
        let step = |(f, s): (FileId, SecIdx), out: &mut Vec<(FileId, SecIdx)>| {
            let sec = res.objects[f.index()].sec(s);
            // `.eh_frame` names every function of its file: it keeps none (the dead ones' records go), as in GNU
            // ld. Debug information kept with its file (`keep_file_extras`) is not visited either.
            let relas = match sec.kind {
                SectionKind::EhFrame => &[],
                _ => sec.relas(),
            };
            for r in relas {
                let sym = r.r_sym(crate::elf::LE, false) as usize;
                if let Some((tf, ts)) = target_section(res, f, sym) {
                    if self.mark(tf, ts) {
                        out.push((tf, ts));
                    }
                } else if let Some(within) = self.defsym_of(f, sym) {
                    out.extend(within.iter().filter(|&&(tf, ts)| self.mark(tf, ts)));
                } else if self.track_shared {
                    self.note_shared(f, sym);
                }
            }
            let deps = &dependents[f.index()];
            if !deps.is_empty() {
                let from = deps.partition_point(|&(link, _)| link < s);
                for &(_, d) in deps[from..].iter().take_while(|&&(link, _)| link == s) {
                    if self.mark(f, d) {
                        out.push((f, d));
                    }
                }
            }
        };
        rayon::scope(|scope| {
            for chunk in frontier.chunks(64) {
                let stack = chunk.to_vec();
                let step = &step;
                scope.spawn(move |sc| visit(sc, stack, step));
            }
        });
    }

    /// Without a script, `.eh_frame` stays, as GNU ld's default script `KEEP`s it: it keeps nothing alive itself (its
    /// FDEs of dead functions are dropped when it is split into records), but unwinding needs the rest. Under a
    /// script, only a `KEEP` or a live section's reference keeps one (GNU ld's rule: a script that names
    /// `.eh_frame` without `KEEP` loses it).
    fn keep_eh_frames(&self) {
        let res = self.res;
        res.runs.for_each(|f| {
            let o = &res.objects[f.index()];
            for (s, sec) in o.secs() {
                if sec.kind == SectionKind::EhFrame && candidate(res, f, s) {
                    self.marks[f.index()][s.index()].store(true, Relaxed);
                }
            }
        });
    }

    /// GNU ld's rule for what a program does not load: a file that keeps an allocated section (not a note) keeps
    /// its debug information, and its other unallocated sections that have no relocations (`.comment`); a file
    /// that keeps none keeps none of them. An unallocated section with relocations that is not debug information
    /// stays only where something live refers to it. A section linked to another (`SHF_LINK_ORDER`) follows that
    /// one instead.
    fn keep_file_extras(&self) {
        let res = self.res;
        res.runs.for_each(|f| {
            let o = &res.objects[f.index()];
            let marks = &self.marks[f.index()];
            let some_kept = o.secs().any(|(s, sec)| {
                marks[s.index()].load(Relaxed)
                    && sec.is_alloc()
                    && sec.shdr.sh_type.get(crate::elf::LE) != E::SHT_NOTE
            });
            if !some_kept {
                return;
            }
            for (s, sec) in o.secs() {
                if o.gc_root(s) == GcRoot::Unallocated
                    && sec.flags() & E::SHF_LINK_ORDER as u64 == 0
                    && candidate(res, f, s)
                    && (sec.relas().is_empty() || is_debug_information(o.sec_name(s.index())))
                {
                    marks[s.index()].store(true, Relaxed);
                }
            }
        });
    }

    fn into_liveness(self) -> Liveness {
        let live: Vec<Vec<bool>> = self
            .marks
            .into_iter()
            .map(|v| v.into_iter().map(AtomicBool::into_inner).collect())
            .collect();
        let shared_needed = self.track_shared.then(|| {
            self.shared_used
                .into_iter()
                .zip(&self.res.shared_needed)
                .map(|(u, &needed)| needed && u.into_inner())
                .collect()
        });
        Liveness {
            live,
            shared_needed,
            script: Vec::new(),
            folded: Vec::new(),
        }
    }
}

/// Per global: some live object refers to it non-weakly and a shared object defines it. lld's rule: a symbol keeps
/// its library only if some live object refers to it non-weakly (the reference that live code makes may itself be
/// weak).
fn strong_shared_references(res: &Resolved) -> Vec<AtomicBool> {
    let strong: Vec<AtomicBool> =
        crate::par::per_symbol(res.num_globals(), || AtomicBool::new(false));
    crate::resolve::for_each_live_global(
        &res.runs,
        &res.objects,
        &res.object_live,
        &res.object_ids,
        |_, o, i, g| {
            let sym = &o.syms[i];
            if g.is_some()
                && sym.st_shndx.get(crate::elf::LE) == E::SHN_UNDEF
                && sym.st_bind() != E::STB_WEAK
                && matches!(res.defs[g.index()], Def::Shared { .. })
            {
                strong[g.index()].store(true, Relaxed);
            }
        },
    );
    strong
}

/// The globals the command line names as roots: the entry, `-u`, `-init` and `-fini`. The entry is `_start`
/// without `-e` or `ENTRY` only where GNU ld's default script, whose `ENTRY(_start)` it is, is used: a `-T` script's
/// `SECTIONS` replaces it, and then no entry keeps anything (the program's `_start` too, unless something else
/// keeps it).
fn named_root_symbols(config: &Config, res: &Resolved) -> Vec<SymId> {
    let mut root_syms: Vec<SymId> = Vec::new();
    let own_script = config
        .sections
        .as_deref()
        .is_some_and(|sc| !sc.builtin_base);
    let entry = match &config.entry {
        Some(e) => Some(e.as_str()),
        None => (!own_script).then_some("_start"),
    };
    root_syms.extend(entry.and_then(|e| res.names.lookup(e.as_bytes())));
    for u in &config.undefined {
        root_syms.extend(res.names.lookup(u.as_bytes()));
    }
    for name in [config.init.as_deref(), config.fini.as_deref()]
        .into_iter()
        .flatten()
    {
        root_syms.extend(res.names.lookup(name.as_bytes()));
    }
    root_syms
}

/// The globals the output exports (or that a needed shared object refers to), in id order.
pub fn exported_symbols(config: &Config, res: &Resolved) -> Vec<SymId> {
    let export_all = config.export_dynamic || config.kind == OutputKind::Shared;
    crate::par::filter_ids(res.num_globals(), |g| {
        let listed = res.in_dynamic_list.get(g) == Some(&true)
            || res.exported_by_option.get(g) == Some(&true);
        res.referenced_by_shared[g] || ((export_all || listed) && !res.hidden[g])
    })
}

/// SHF_LINK_ORDER sections (`__patchable_function_entries`, sanitizer metadata) live and die with the section they
/// are linked to: per file, (linked section, dependent) pairs sorted by the linked section.
fn link_order_dependents(res: &Resolved) -> Vec<Vec<(SecIdx, SecIdx)>> {
    res.runs.map(|f| {
        let o = &res.objects[f.index()];
        let mut d: Vec<(SecIdx, SecIdx)> = o
            .secs()
            .filter(|(_, sec)| sec.flags() & E::SHF_LINK_ORDER as u64 != 0)
            .filter_map(|(s, sec)| {
                let link = sec.shdr.sh_link.get(crate::elf::LE);
                (link != 0 && (link as usize) < o.sections.len()).then_some((SecIdx(link), s))
            })
            .collect();
        d.sort_unstable();
        d
    })
}

/// Marks what one (file, section) refers to, pushing the newly marked ones.
type Step<'s> = &'s (dyn Fn((FileId, SecIdx), &mut Vec<(FileId, SecIdx)>) + Sync);

/// Runs `step` on `stack` until it is empty, handing half of it to a new task when it grows past `SPLIT` or when
/// this thread has no queued task left for an idle thread to steal.
fn visit<'s>(scope: &rayon::Scope<'s>, mut stack: Vec<(FileId, SecIdx)>, step: Step<'s>) {
    const SPLIT: usize = 256;
    while let Some(item) = stack.pop() {
        step(item, &mut stack);
        if stack.len() > SPLIT
            || (stack.len() >= 2 && !rayon_core::current_thread_has_pending_tasks().unwrap_or(true))
        {
            let half = stack.split_off(stack.len() / 2);
            scope.spawn(move |sc| visit(sc, half, step));
        }
    }
}

/// `--print-gc-sections`, in lld's wording: one line per discarded section, in input order.
fn print_removed_sections(res: &Resolved, live: &[Vec<bool>]) {
    for (f, o) in res.objects.iter().enumerate() {
        for s in (0..o.sections.len()).map(SecIdx::new) {
            if !live[f][s.index()] && candidate(res, FileId::new(f), s) {
                eprintln!(
                    "removing unused section {}:({})",
                    o.name,
                    String::from_utf8_lossy(o.sec_name(s.index()))
                );
            }
        }
    }
}

/// The (object, section) that symbol `i` of object `f` is defined in, following global resolution.
pub fn target_section(res: &Resolved, f: FileId, i: usize) -> Option<(FileId, SecIdx)> {
    let o = &res.objects[f.index()];
    let (tf, ti) = if i < o.first_global {
        (f, i)
    } else {
        let g = *res.object_ids[f.index()].get(i - o.first_global)?;
        match res.defs[g.index()] {
            Def::Object { file, sym } => (file, sym as usize),
            _ => return None,
        }
    };
    let t = &res.objects[tf.index()];
    let s = t.sym_shndx(ti) as usize;
    (s != 0 && s < t.sections.len()).then_some((tf, SecIdx::new(s)))
}
