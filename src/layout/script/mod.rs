//! Layout with a linker script's `SECTIONS`: the script's output sections in its order with the orphans among
//! them (`order_sections`), the input sections of each in statement order (`script_lists`), and the addresses:
//! the commands evaluated in order with the location counter, `MEMORY` regions and load addresses
//! (`assign_addresses`), then the `PT_LOAD`s the addresses ask for (`loads`). `NOCROSSREFS` is checked once the
//! input sections have their output sections (`crossrefs`).

use super::eh_frame::eh_block_size;
use super::output_sections::Builder;
use super::rules::init_priority;
use super::{EhRecords, OutputSection, Synth, SynthMap};
use crate::args::Config;
use crate::elf::align_up;
use crate::index::{FileId, NONE, OsecId, SecIdx};
use crate::load_order::FileOrder;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use crate::scan::{self, Scan};
use crate::script::ast::Sort;
use crate::script::sections::{DISCARD, InputName, ORPHAN, SectionsScript, unpack_selection};
use object::elf as E;
use rayon::prelude::*;

mod crossrefs;
mod loads;
mod orphans;
mod regions;
mod runs;
mod walk;

pub use crossrefs::check as check_crossrefs;
pub use loads::phdrs_segments;
pub use orphans::{SecBits, find_by_flags_among, order_sections};
pub use runs::{Placed, list_runs, place_runs};
pub use walk::{ScriptAddresses, ScriptExtras, Walk, assign_addresses, nearby_section};

/// An output section for every description of the script (but `/DISCARD/` and those whose constraint this link
/// drops), in its order, before any input's: NOBITS without flags until inputs say otherwise (a section of
/// assignments alone is writable NOBITS). Two descriptions of one name make two sections, as in GNU ld.
pub(super) fn add_script_sections(sc: &SectionsScript, b: &mut Builder) {
    for (d, o) in sc.outputs.iter().enumerate() {
        if o.name != "/DISCARD/" && !sc.is_dropped(d) {
            b.add_description(d, o.name.as_bytes());
        }
    }
}

/// A description's output section once the inputs are in: `NOLOAD` makes it NOBITS, `INFO` (`COPY`, `DSECT`,
/// `OVERLAY`) not allocated, one with no input but data commands is read-only data, and one with other commands
/// (`. = . + SIZE`) is allocated writable space.
fn settle_flags(sc: &SectionsScript, d: usize, o: &mut OutputSection) {
    let desc = &sc.outputs[d];
    // As GNU ld makes them: data allocated (read-only unless an input is writable), space writable where no
    // input has contents (unallocated inputs, `.comment`'s, keep a section with symbols unallocated).
    if sc.has_data(d) {
        o.flags |= E::SHF_ALLOC as u64;
    } else if o.flags == 0 && o.sh_type == E::SHT_NOBITS && sc.has_own_commands(d) {
        o.flags = (E::SHF_ALLOC | E::SHF_WRITE) as u64;
    }
    if desc.ty.as_deref() == Some("NOLOAD") {
        o.sh_type = E::SHT_NOBITS;
    } else if desc
        .ty
        .as_deref()
        .is_some_and(crate::script::sections::is_unallocated_type)
    {
        // Contents in the file, nothing in memory (Rust's defmt puts its string table in `.defmt 0 (INFO)`).
        o.flags &= !(E::SHF_ALLOC as u64);
    } else if sc.has_data(d) {
        o.sh_type = E::SHT_PROGBITS;
    }
}

/// The file of a script list's entry for a linker-made section; its section is the `Synth`'s number.
pub(in crate::layout) const LINKER_MADE: FileId = FileId(NONE);

/// An input section of a script's output section, in placing order, with the room it takes there (read once, in
/// parallel, so that the walk over the commands, which is sequential, only adds them up).
#[derive(Clone, Copy, Debug)]
pub struct ScriptInput {
    pub stmt: u32,
    /// `LINKER_MADE` for a linker-made section, whose `sec` is then its `Synth`'s number.
    pub file: FileId,
    pub sec: SecIdx,
    /// Size and alignment (`input_extent`); 0 and 0 for a merged (`SHF_MERGE`) section or a linker-made one.
    pub size: u64,
    pub align: u64,
}

impl ScriptInput {
    pub fn is_linker_made(&self) -> bool {
        self.file == LINKER_MADE
    }

    /// A merged section: its strings go where the first of the output section's is.
    pub fn is_merged(&self) -> bool {
        self.align == 0 && !self.is_linker_made()
    }
}

/// Per output section under a script: its input sections, in the order they are placed: statement order, then
/// the statement's sort, then load order (`FileOrder`), the linker-made sections a statement matches among the
/// first object's. Merged (`SHF_MERGE`) sections are listed too: the output section's merged strings go where the
/// first of them is.
pub fn script_lists(
    (res, files, sc): (&Resolved, &FileOrder, &SectionsScript),
    script: &[Vec<u32>],
    (sec_osec, script_desc): (&[Vec<OsecId>], &[u32]),
    (synth, synth_stmts): (&SynthMap, &[(Synth, u32)]),
    order: Option<&super::order::SectionOrder>,
    eh: &EhRecords,
) -> Vec<Vec<ScriptInput>> {
    let objects = &res.objects;
    // Per file: (output section, entry), grouped by output section, in section order within each.
    let per_file: Vec<Vec<(u32, ListEntry)>> = res.runs.map(|f| {
        let o = &objects[f.index()];
        let mut v: Vec<(u32, ListEntry)> = (0..o.sections.len())
            .filter_map(|s| {
                let osec = sec_osec[f.index()][s];
                if osec.is_none() || script_desc[osec.index()] == NONE {
                    return None;
                }
                let e = ListEntry {
                    selection: script[f.index()][s],
                    file: f,
                    sec: SecIdx::new(s),
                };
                Some((osec.0, e))
            })
            .collect();
        if !v.is_sorted_by_key(|e| e.0) {
            v.sort_by_key(|e| e.0);
        }
        v
    });
    let first_file = files.files(objects.len()).next();
    let buckets = in_load_order(&per_file, files, script_desc.len());
    drop(per_file);
    (buckets.into_par_iter())
        .with_max_len(1)
        .enumerate()
        .map(|(i, mut b)| {
            // GNU ld makes its own sections inputs of the first object: those a statement matches go after that
            // object's sections (the merged `.note.gnu.property` in place of its first one), before the other
            // objects'.
            for &(s, k) in synth_stmts.iter().filter(|(s, _)| synth[*s].index() == i) {
                let at = match s {
                    Synth::GnuProperty => 0,
                    _ => (b.iter())
                        .position(|e| Some(e.file) != first_file && e.file != LINKER_MADE)
                        .unwrap_or(b.len()),
                };
                let e = ListEntry {
                    selection: k,
                    file: LINKER_MADE,
                    sec: SecIdx(s as u32),
                };
                b.insert(at, e);
            }
            let b = sort_bucket(b, (res, files, sc), order);
            // In parallel inside a list too: `.text` holds most of a link's sections.
            (b.into_par_iter())
                .with_min_len(4096)
                .map(|e| {
                    let (file, sec) = (e.file, e.sec);
                    let merged = file == LINKER_MADE
                        || res.objects[file.index()].sec(sec).kind == SectionKind::Merge;
                    let (size, align) = match merged {
                        true => (0, 0),
                        false => input_extent(res, eh, file, sec),
                    };
                    ScriptInput {
                        stmt: unpack_selection(e.selection).0,
                        file,
                        sec,
                        size,
                        align,
                    }
                })
                .collect()
        })
        .collect()
}

/// The entries of `per_file` (each file's grouped by output section) into one list per output section (of
/// `n_osecs`), the files taken in load order: each list sized first, then filled a file's group at a time.
fn in_load_order(
    per_file: &[Vec<(u32, ListEntry)>],
    files: &FileOrder,
    n_osecs: usize,
) -> Vec<Vec<ListEntry>> {
    let counts = (per_file.par_iter())
        .fold(
            || vec![0usize; n_osecs],
            |mut c, v| {
                v.iter().for_each(|e| c[e.0 as usize] += 1);
                c
            },
        )
        .reduce(
            || vec![0usize; n_osecs],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            },
        );
    let mut buckets: Vec<Vec<ListEntry>> = counts.into_iter().map(Vec::with_capacity).collect();
    for f in files.files(per_file.len()) {
        for group in per_file[f.index()].chunk_by(|x, y| x.0 == y.0) {
            buckets[group[0].0 as usize].extend(group.iter().map(|e| e.1));
        }
    }
    buckets
}

/// An input section of a script's output section, with its statement and that statement's sort (packed as
/// `pack_selection` does; a linker-made section's is its statement alone).
#[derive(Clone, Copy)]
struct ListEntry {
    selection: u32,
    file: FileId,
    sec: SecIdx,
}

impl ListEntry {
    fn stmt(&self) -> u32 {
        unpack_selection(self.selection).0
    }
}

/// One output section's inputs (in input order) into placing order: by statement, then within a statement by
/// its sort, stably, so that input order stays among equals. Most statements sort nothing, and their inputs
/// need only the stable sort by statement: a counting sort, one pass to count and one to place (a comparison
/// sort of `.text`'s hundreds of thousands of entries was most of the lists' time).
fn sort_bucket(
    b: Vec<ListEntry>,
    (res, files, sc): (&Resolved, &FileOrder, &SectionsScript),
    order: Option<&super::order::SectionOrder>,
) -> Vec<ListEntry> {
    let mut b = match b.is_sorted_by_key(|e| e.stmt()) {
        true => b,
        false => by_statement(b),
    };
    // What a sort orders by: a number (priority, alignment, ordering rank), then the name where it sorts by
    // name. A section's name is read only there.
    let key = |e: &ListEntry| -> (u64, &[u8]) {
        if e.file == LINKER_MADE {
            // After the ranked sections when an ordering file sorts the statement's inputs.
            return (order.map_or(0, |_| u64::from(NONE)), b"");
        }
        let o = &res.objects[e.file.index()];
        let sort = unpack_selection(e.selection).1;
        let number = match sort {
            Sort::InitPriority => init_priority(o.sec_name(e.sec.index())).unwrap_or(65536) as u64,
            Sort::Alignment | Sort::AlignmentName => u64::MAX - o.sec(e.sec).align(),
            // `--symbol-ordering-file` in a statement without a sort (lld's rule): the ranked sections first, in
            // rank order, the others (`NONE`, the largest rank) after them in input order.
            Sort::None => order.map_or(0, |o| u64::from(o.rank(e.file, e.sec))),
            _ => 0,
        };
        let by_name = matches!(sort, Sort::Name | Sort::NameAlignment | Sort::AlignmentName);
        (
            number,
            if by_name {
                o.sec_name(e.sec.index())
            } else {
                b""
            },
        )
    };
    let sorts =
        |e: &ListEntry| e.file != LINKER_MADE && unpack_selection(e.selection).1 != Sort::None;
    for run in b.chunk_by_mut(|x, y| x.stmt() == y.stmt()) {
        if order.is_none() && sc.mixes_sorts(run[0].stmt()) {
            gnu_tree_order(run, (res, files, sc));
        } else if order.is_some() || run.iter().any(sorts) {
            // Stable: equal keys keep input order.
            run.sort_by_cached_key(key);
        }
        if sc.sorts_files(run[0].stmt()) {
            by_file_name(run, res, files);
        }
    }
    b
}

/// A `SORT(*)(...)` statement's sections stably sorted by their files' names (GNU ld's: an archive member by its
/// archive's path, then its own name), so that each file's keep the order its section sort gave them. The
/// linker-made sections are the first object's, as in GNU ld.
fn by_file_name(run: &mut [ListEntry], res: &Resolved, files: &FileOrder) {
    let first = files.files(res.objects.len()).next();
    let name = |f: FileId| {
        let f = if f == LINKER_MADE { first } else { Some(f) };
        let file = InputName::of(f.map_or("", |f| res.objects[f.index()].name.as_str()));
        (file.path, file.member.unwrap_or(""))
    };
    run.sort_by_key(|e| name(e.file));
}

/// The sections of a statement whose patterns sort in different ways, in GNU ld's order: it makes a binary tree
/// of every section any of the statement's patterns matches (those an earlier statement took too, which only
/// shape it), file by file in load order, each section once per pattern that matches it, in pattern order: a
/// section of an unsorted pattern goes to the right end of the tree, one of a sorted pattern down from the root
/// (left of a section it sorts before by that pattern's sort, else right); the statement's sections come in the
/// tree's order, each at its first place. Its cost is GNU ld's (quadratic where sorted names come in order), only
/// for such statements. Linker-made sections go after the inputs.
fn gnu_tree_order(
    run: &mut [ListEntry],
    (res, files, sc): (&Resolved, &FileOrder, &SectionsScript),
) {
    let stmt = run[0].stmt();
    let mut tree = SortTree::default();
    for f in files.files(res.objects.len()) {
        let o = &res.objects[f.index()];
        let file = InputName::of(&o.name);
        if !res.object_live[f.index()] || !sc.takes_file(stmt, &file) {
            continue;
        }
        for s in (0..o.sections.len()).map(SecIdx::new) {
            if o.sections[s.index()].kind == SectionKind::Ignored
                || res.comdat_discarded[f.index()][s.index()]
            {
                continue;
            }
            for sort in sc.matching_sorts(stmt, &file, o.sec_name(s.index())) {
                tree.insert((f, s), sort, |sort, a, b| tree_compare(res, sort, a, b));
            }
        }
    }
    let mut wanted: std::collections::HashMap<(FileId, SecIdx), ListEntry> = (run.iter())
        .filter(|e| e.file != LINKER_MADE)
        .map(|e| ((e.file, e.sec), *e))
        .collect();
    let mut out: Vec<ListEntry> = Vec::with_capacity(run.len());
    for at in tree.in_order() {
        out.extend(wanted.remove(&at));
    }
    // The linker-made sections, and (none should be) a listed section the tree lacks, kept rather than lost.
    out.extend(
        (run.iter()).filter(|e| e.file == LINKER_MADE || wanted.contains_key(&(e.file, e.sec))),
    );
    run.copy_from_slice(&out);
}

/// GNU ld's tree of a statement's sections (`gnu_tree_order`): nodes with their left and right children.
#[derive(Default)]
struct SortTree {
    nodes: Vec<((FileId, SecIdx), [u32; 2])>,
    root: Option<u32>,
    /// The last node of the right spine, where an unsorted section goes.
    tail: u32,
}

impl SortTree {
    fn insert(
        &mut self,
        at: (FileId, SecIdx),
        sort: Sort,
        compare: impl Fn(Sort, (FileId, SecIdx), (FileId, SecIdx)) -> std::cmp::Ordering,
    ) {
        let n = self.nodes.len() as u32;
        self.nodes.push((at, [u32::MAX; 2]));
        let Some(mut cur) = self.root else {
            (self.root, self.tail) = (Some(n), n);
            return;
        };
        if matches!(sort, Sort::None | Sort::NoneExplicit) {
            self.nodes[self.tail as usize].1[1] = n;
            self.tail = n;
            return;
        }
        loop {
            let (other, kids) = self.nodes[cur as usize];
            let side = usize::from(compare(sort, at, other).is_ge());
            if kids[side] == u32::MAX {
                self.nodes[cur as usize].1[side] = n;
                if side == 1 && cur == self.tail {
                    self.tail = n;
                }
                return;
            }
            cur = kids[side];
        }
    }

    /// The sections in the tree's order: left subtree, node, right subtree.
    fn in_order(&self) -> Vec<(FileId, SecIdx)> {
        let (mut out, mut stack) = (Vec::with_capacity(self.nodes.len()), Vec::new());
        let mut cur = self.root.unwrap_or(u32::MAX);
        while cur != u32::MAX || !stack.is_empty() {
            while cur != u32::MAX {
                stack.push(cur);
                cur = self.nodes[cur as usize].1[0];
            }
            let Some(n) = stack.pop() else { break };
            out.push(self.nodes[n as usize].0);
            cur = self.nodes[n as usize].1[1];
        }
        out
    }
}

/// How GNU ld's sort `sort` orders section `a` against `b` (larger alignments first; a priority-less section
/// after those with one).
fn tree_compare(
    res: &Resolved,
    sort: Sort,
    a: (FileId, SecIdx),
    b: (FileId, SecIdx),
) -> std::cmp::Ordering {
    let name = |(f, s): (FileId, SecIdx)| res.objects[f.index()].sec_name(s.index());
    let align = |(f, s): (FileId, SecIdx)| res.objects[f.index()].sec(s).align();
    let prio = |x: (FileId, SecIdx)| init_priority(name(x)).unwrap_or(65536);
    let by_name = || name(a).cmp(name(b));
    let by_align = || align(b).cmp(&align(a));
    match sort {
        Sort::Name => by_name(),
        Sort::Alignment => by_align(),
        Sort::NameAlignment => by_name().then_with(by_align),
        Sort::AlignmentName => by_align().then_with(by_name),
        Sort::InitPriority => prio(a).cmp(&prio(b)),
        Sort::None | Sort::NoneExplicit | Sort::Reverse => std::cmp::Ordering::Equal,
    }
}

/// `b` stably sorted by statement. Statements number a script's input descriptions (a few hundred at most); an
/// orphan that joins a script's section of its name has `ORPHAN`, after them.
fn by_statement(mut b: Vec<ListEntry>) -> Vec<ListEntry> {
    let stmts = b.iter().map(|e| e.stmt() as usize + 1).max().unwrap_or(0);
    if stmts > 1 << 16 {
        b.sort_by_key(|e| e.stmt());
        return b;
    }
    let mut at = vec![0usize; stmts + 1];
    for e in &b {
        at[e.stmt() as usize + 1] += 1;
    }
    for k in 0..stmts {
        at[k + 1] += at[k];
    }
    let mut out = vec![b[0]; b.len()];
    for e in b {
        let k = &mut at[e.stmt() as usize];
        out[*k] = e;
        *k += 1;
    }
    out
}

/// The size and alignment an input section takes in its output section.
fn input_extent(res: &Resolved, eh: &EhRecords, f: FileId, s: SecIdx) -> (u64, u64) {
    let sec = res.objects[f.index()].sec(s);
    if sec.kind == SectionKind::EhFrame {
        let recs = eh.get(f, s);
        (eh_block_size(recs), sec.align().min(4))
    } else {
        (sec.size(), sec.align())
    }
}

/// Places the input sections of script output sections one after another, before addresses are known (their
/// sizes decide which sections are kept); `assign_addresses` places them again with the script's commands.
pub fn provisional_offsets(
    lists: &[Vec<ScriptInput>],
    osecs: &mut [OutputSection],
    (sec_off, place_osec, cursor): (&mut [Vec<u64>], &mut [Vec<OsecId>], &mut [u64]),
) {
    for (i, list) in lists.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
        let mut off = 0u64;
        for e in list.iter().filter(|e| e.align != 0) {
            off = align_up(off, e.align);
            osecs[i].align = osecs[i].align.max(e.align);
            sec_off[e.file.index()][e.sec.index()] = off;
            place_osec[e.file.index()][e.sec.index()] = OsecId::new(i);
            off += e.size;
        }
        cursor[i] = off;
    }
}

/// The addresses a script's layout gives.
/// Whether the script's `/DISCARD/` takes `.dynamic` (`*(.dynamic)`, which matches the linker's own section as
/// in GNU ld), so that the output has no dynamic sections: the kernel's self-relocating decompressor, a `-pie`
/// whose size its build checks. Taken only where nothing needs them (no shared object, dynamic relocation, GOT
/// or PLT slot); otherwise refused, as rivet cannot yet drop the parts that need them.
pub fn discards_dynamic(config: &Config, scan: &Scan, any_shared: bool) -> Result<bool, String> {
    let Some(sc) = config.sections.as_deref() else {
        return Ok(false);
    };
    let linker_made = InputName {
        path: "",
        member: None,
    };
    if sc.select(&linker_made, b".dynamic", true).0 != DISCARD {
        return Ok(false);
    }
    let slots = scan::NEEDS_GOT | scan::NEEDS_PLT | scan::NEEDS_GOTTP | scan::NEEDS_TLSGD;
    let needed = any_shared
        || config.kind == crate::args::OutputKind::Shared
        || scan.textrel
        || scan.needs_tlsld
        || [&scan.dyn_relocs, &scan.irel_relocs]
            .iter()
            .any(|v| v.iter().any(|f| !f.is_empty()))
        || scan.relr.iter().any(|f| !f.is_empty())
        || scan.flags.iter().any(|&f| f & slots != 0);
    if needed {
        return Err(format!(
            "{}: /DISCARD/ of .dynamic in an output that needs dynamic sections is not supported yet",
            sc.file
        ));
    }
    Ok(true)
}

/// `--orphan-handling=warn|error`: each section no statement places (inputs in input order, then the linker's
/// own allocated ones that are not empty), with GNU ld's words: a warning naming the output section it goes to, or an error.
pub fn report_orphans(
    config: &Config,
    res: &Resolved,
    live: &crate::gc::Liveness,
    (osecs, map): (&[OutputSection], &super::output_sections::SectionMap),
) -> Result<(), crate::diag::Errors> {
    use crate::args::OrphanHandling;
    let (Some(sc), OrphanHandling::Warn | OrphanHandling::Error) =
        (config.sections.as_deref(), config.orphan_handling)
    else {
        return Ok(());
    };
    let mut orphans: Vec<(String, &[u8], OsecId)> = Vec::new();
    for (f, o) in res.objects.iter().enumerate() {
        for s in 0..o.sections.len() {
            let osec = map.sec_osec[f][s];
            if live.script[f][s] == crate::script::sections::ORPHAN && osec.is_some() {
                orphans.push((o.name.clone(), o.sec_name(s), osec));
            }
        }
    }
    let linker_made = InputName {
        path: "",
        member: None,
    };
    for &s in Synth::ALL {
        if let Some(i) = map.synth.get(s) {
            let o = &osecs[i.index()];
            let writable = o.flags & E::SHF_WRITE as u64 != 0;
            // `RelaNamed` is where a statement put it (`named_relocs`), not by its name.
            if o.is_alloc()
                && map.synth.size(s) > 0
                && s != Synth::RelaNamed
                && sc.select(&linker_made, s.name(), writable).0 == ORPHAN
            {
                orphans.push(("<internal>".into(), s.name(), i));
            }
        }
    }
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if config.orphan_handling == OrphanHandling::Warn {
        for (file, name, osec) in orphans {
            crate::diag::warn(&format!(
                "orphan section `{}' from `{file}' being placed in section `{}'",
                text(name),
                text(&osecs[osec.index()].name)
            ));
        }
        return Ok(());
    }
    let errors: Vec<String> = orphans
        .into_iter()
        .map(|(file, name, _)| format!("unplaced orphan section `{}' from `{file}'", text(name)))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(crate::diag::Errors(errors))
    }
}

/// A script may put the linker's own contents in any output section but `.eh_frame`, whose bytes
/// `.eh_frame_hdr` is built from while the GOT and PLT writers fill theirs (a fuzzer finding: `KEEP(*())` in
/// GNU ld's `ONLY_IF_RW` `.eh_frame` took `.got` and `.dynamic`, and the writers' ranges overlapped).
pub fn check_linker_made_places(
    config: &Config,
    osecs: &[OutputSection],
    map: &super::output_sections::SectionMap,
) -> Result<(), crate::diag::Errors> {
    let Some(sc) = config.sections.as_deref() else {
        return Ok(());
    };
    for &s in Synth::ALL {
        if let Some(i) = map.synth.get(s)
            && osecs[i.index()].name == b".eh_frame"
        {
            return Err(crate::diag::Errors::one(format!(
                "{}: the linker's {} cannot go in .eh_frame",
                sc.file,
                String::from_utf8_lossy(s.name())
            )));
        }
    }
    Ok(())
}
