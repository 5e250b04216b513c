//! `-r`'s section header order, as GNU ld's: the statements of its script in order (its default `-r` script's, or
//! the `-T` script's output descriptions), each with the output section of its inputs, and the orphans (sections no
//! statement takes, and those kept apart: group members, link-order and `--unique` sections) placed one at a time
//! in the order GNU ld meets them, as its ELF emulation places orphans (`layout::script::orphans` does the same for
//! a final link's script): after the statement named for their kind (`.text`, `.rodata`, `.data`, `.bss`, `.tdata`,
//! `.interp` for notes, `.comment` for other non-allocated sections), even an empty one; without it, after the last
//! section of the same flags and type (`find_by_flags`); each later orphan of a kind after the kind's previous one.
//! Debugging sections no statement takes go last, as met.

use super::sections::{Made, OutSec, Plan};
use crate::index::OsecId;
use crate::layout::script::{SecBits, find_by_flags_among};
use crate::resolve::Resolved;
use crate::script::sections::SectionsScript;
use object::elf as E;

/// The allocated output sections of GNU ld's default `-r` script (`ld --verbose -r`), in its order; its
/// non-allocated ones follow them (`rules::UNALLOCATED`). Each takes the input sections of its name. The `.l*`
/// large-model sections are x86-64's (no other target's inputs have them); `.eh_frame` and its kin are where GNU
/// ld's read-only descriptions of them are.
#[rustfmt::skip]
const ALLOCATED: &[&[u8]] = &[
    b".interp", b".note.gnu.build-id", b".hash", b".gnu.hash", b".dynsym", b".dynstr", b".gnu.version",
    b".gnu.version_d", b".gnu.version_r", b".rela.init", b".rela.text", b".rela.fini", b".rela.rodata",
    b".rela.data.rel.ro", b".rela.data", b".rela.tdata", b".rela.tbss", b".rela.ctors", b".rela.dtors", b".rela.got",
    b".rela.bss", b".rela.ldata", b".rela.lbss", b".rela.lrodata", b".rela.ifunc", b".rela.plt", b".relr.dyn",
    b".init", b".plt", b".plt.got", b".plt.sec", b".text", b".fini", b".rodata", b".rodata1", b".eh_frame_hdr",
    b".eh_frame", b".sframe", b".gcc_except_table", b".gnu_extab", b".exception_ranges", b".tdata", b".tbss",
    b".jcr", b".dynamic", b".got", b".got.plt", b".data", b".data1", b".bss", b".lbss", b".lrodata", b".ldata",
];

/// The statement of GNU ld's default `-r` script named `name`: its place in the script.
pub fn statement(name: &[u8]) -> Option<usize> {
    match ALLOCATED.iter().position(|&n| n == name) {
        Some(i) => Some(i),
        None => (crate::layout::rules::UNALLOCATED.iter())
            .position(|&n| n == name)
            .map(|i| ALLOCATED.len() + i),
    }
}

/// The section header order of `plan`'s output sections; `desc` gives, under a `-T` script, the output
/// description whose section an output section is.
pub fn header_order(
    script: Option<&SectionsScript>,
    plan: &Plan,
    res: &Resolved,
    desc: impl Fn(OsecId) -> Option<u32>,
) -> Vec<OsecId> {
    let osecs = &plan.osecs;
    let meet = meet_order(plan, res);
    match script {
        None => {
            let of = |id: OsecId| {
                let o = &osecs[id.index()];
                (!o.apart).then(|| statement(&o.name)).flatten()
            };
            let count = ALLOCATED.len() + crate::layout::rules::UNALLOCATED.len();
            place(osecs, &meet, (count, &of), &statement)
        }
        Some(sc) => {
            let of = |id: OsecId| desc(id).map(|d| d as usize);
            let named = |name: &[u8]| sc.output(name);
            place(osecs, &meet, (sc.outputs.len(), &of), &named)
        }
    }
}

/// The order: `count` statements, `of` the statement whose section an output section is, `named` the first
/// statement of a name; the orphans placed in `meet` order.
fn place(
    osecs: &[OutSec],
    meet: &[OsecId],
    (count, of): (usize, &dyn Fn(OsecId) -> Option<usize>),
    named: &dyn Fn(&[u8]) -> Option<usize>,
) -> Vec<OsecId> {
    const NIL: usize = usize::MAX;
    // Node 0 stands before every statement (GNU ld's `*ABS*`); then the statements; then a node per orphan,
    // linked in header order.
    let mut next: Vec<usize> = (1..=count).chain([NIL]).collect();
    let mut node_osec: Vec<Option<OsecId>> = vec![None; count + 1];
    let mut tail = count;
    // The statements' sections first: GNU ld places its orphans once every statement has its inputs.
    let mut orphans = Vec::new();
    for &id in meet {
        match of(id) {
            Some(st) if node_osec[st + 1].is_none() => node_osec[st + 1] = Some(id),
            _ => orphans.push(id),
        }
    }
    let mut last_of_kind = [None; ANCHORS.len()];
    for id in orphans {
        let o = &osecs[id.index()];
        let after = match orphan_kind(o) {
            None => tail,
            Some(kind) => match last_of_kind[kind] {
                Some(node) => node,
                None => match named(ANCHORS[kind]) {
                    Some(st) => st + 1,
                    None => find_by_flags(osecs, (&next, &node_osec), o).unwrap_or(0),
                },
            },
        };
        let node = next.len();
        next.push(next[after]);
        next[after] = node;
        node_osec.push(Some(id));
        if after == tail {
            tail = node;
        }
        if let Some(kind) = orphan_kind(o) {
            last_of_kind[kind] = Some(node);
        }
    }
    let mut out = Vec::with_capacity(osecs.len());
    let mut at = 0;
    while at != NIL {
        out.extend(node_osec[at]);
        at = next[at];
    }
    out
}

/// The statement each kind of orphan goes after (GNU ld's `.rela.dyn`, which its `-r` script lacks, stands in
/// for by the last `.rela` statement).
const ANCHORS: [&[u8]; 8] = [
    b".interp",
    b".tdata",
    b".bss",
    b".data",
    b".rela.plt",
    b".rodata",
    b".text",
    b".comment",
];

/// An orphan's kind, an index into `ANCHORS`, tested in GNU ld's order; `None` for debugging information, which
/// goes last.
fn orphan_kind(o: &OutSec) -> Option<usize> {
    let has = |flag: u32| o.flags & flag as u64 != 0;
    Some(match () {
        _ if !has(E::SHF_ALLOC) => match crate::gc::is_debug_information(&o.name) {
            true => return None,
            false => 7,
        },
        _ if o.sh_type == E::SHT_NOTE => 0,
        _ if has(E::SHF_TLS) => 1,
        _ if o.sh_type == E::SHT_NOBITS => 2,
        _ if has(E::SHF_WRITE) => 3,
        _ if matches!(o.sh_type, E::SHT_RELA | E::SHT_REL) => 4,
        _ if !has(E::SHF_EXECINSTR) => 5,
        _ => 6,
    })
}

/// The node an orphan goes after where the script has no statement of its kind's name: GNU ld's
/// `find_by_flags` (`layout::script::find_by_flags_among`) over the sections placed so far; `None`: before every
/// statement.
fn find_by_flags(
    osecs: &[OutSec],
    (next, node_osec): (&[usize], &[Option<OsecId>]),
    o: &OutSec,
) -> Option<usize> {
    let mut placed = Vec::new();
    let mut at = 0;
    while at != usize::MAX {
        if let Some(id) = node_osec[at] {
            let t = &osecs[id.index()];
            placed.push((at, SecBits::of_elf(t.flags, t.sh_type), t.sh_type));
        }
        at = next[at];
    }
    find_by_flags_among(&placed, SecBits::of_elf(o.flags, o.sh_type), o.sh_type).0
}

/// The output sections in the order GNU ld meets them: by their first input section in load order; the notes
/// the linker merges (`.note.gnu.property`, `.note.GNU-stack`) where it meets the first input's, which it keeps
/// as the output's; those it makes itself last.
fn meet_order(plan: &Plan, res: &Resolved) -> Vec<OsecId> {
    let mut load_pos = vec![u32::MAX; res.objects.len()];
    for (p, f) in plan.load_order.iter().enumerate() {
        load_pos[f.index()] = p as u32;
    }
    // The first object with the note, by what parse recorded of it; its section names are read for its place.
    let first_input = |name: &[u8]| {
        (plan.load_order.iter().enumerate()).find_map(|(p, f)| {
            let o = &res.objects[f.index()];
            let has = match name {
                b".note.GNU-stack" => o.stack_note.is_some(),
                _ => o.gnu_props.is_some(),
            };
            if !has {
                return None;
            }
            (0..o.sections.len())
                .find(|&s| o.sec_name(s) == name)
                .map(|s| (p as u32, s as u32))
        })
    };
    let key = |o: &OutSec| match o.parts.first() {
        Some(p) => (load_pos[p.file.index()], p.sec.0),
        None if matches!(o.made, Made::Properties(_)) || o.name == b".note.GNU-stack" => {
            first_input(&o.name).unwrap_or((u32::MAX, u32::MAX))
        }
        None => (u32::MAX, u32::MAX),
    };
    let mut ids: Vec<OsecId> = (0..plan.osecs.len()).map(OsecId::new).collect();
    ids.sort_by_cached_key(|id| key(&plan.osecs[id.index()]));
    ids
}
