//! Where the orphans go under a script: the output sections no statement names, placed among the script's as
//! GNU ld's ELF emulation places them, one at a time in the order it meets them (`place_orphan` in its sources).
//!
//! Each orphan has a kind by its flags (note, TLS, zero-fill, data, dynamic relocations, read-only data, code),
//! and each kind a section GNU ld places it after (`.interp`, `.tdata`, `.bss`, `.data`, `.rela.dyn`, `.rodata`,
//! `.text`) when the script has one, even an empty one. Without it, the last section of the same flags and type
//! (`find_by_flags`); a match of both is then kept for the kind's later orphans. The first orphan of a kind goes
//! right after its section, each later one right after the kind's previous one. Unallocated orphans go last.

use super::settle_flags;
use crate::index::NONE;
use crate::layout::OutputSection;
use crate::layout::rules::Rules;
use crate::script::sections::{BASE, SectionsScript};
use object::elf as E;

/// Output section order under a script. `osecs` holds the script's sections first, in its order, then the
/// orphans in the order GNU ld meets them, but for the linker-made ones, which GNU ld meets after the first
/// object's sections (they belong to it): `linker_made` is the range of those, `first_file_end` where the first
/// object's end. `desc` is each section's output description (`NONE` for an orphan).
pub fn order_sections(
    sc: &SectionsScript,
    rules: &Rules,
    (osecs, desc): (&mut [OutputSection], &[u32]),
    order: &mut [u32],
    (first_file_end, linker_made): (usize, std::ops::Range<usize>),
) {
    for (o, &d) in osecs.iter_mut().zip(desc) {
        if d != NONE {
            settle_flags(sc, d as usize, o);
        }
    }
    if sc.builtin_base {
        return order_in_builtin(sc, rules, (osecs, desc), order);
    }
    let rank = |i: u32| {
        let o = &osecs[i as usize];
        rules.rank(&o.name, o.sh_type, o.flags)
    };
    let in_script = |i: usize| desc[i] != NONE;
    let mut seq: Vec<u32> = (0..osecs.len())
        .filter(|&i| in_script(i))
        .map(|i| i as u32)
        .collect();
    let mut unallocated: Vec<u32> = Vec::new();
    let mut holds = [Hold::default(); Kind::COUNT];
    let mut notes_placed = false;
    for i in met_order(osecs, first_file_end, linker_made) {
        let o = &osecs[i as usize];
        if in_script(i as usize) {
            continue;
        }
        if !o.is_alloc() {
            unallocated.push(i);
            continue;
        }
        let kind = Kind::of(o);
        let hold = &mut holds[kind as usize];
        if hold.after.is_none() {
            // The first description of the name, as GNU ld finds it.
            hold.after = (kind.names().iter())
                .find_map(|n| (0..osecs.len()).find(|&i| in_script(i) && osecs[i].name == *n))
                .map(|p| p as u32);
        }
        let after = match hold.after {
            Some(a) => Some(a),
            None => {
                let (found, exact) = find_by_flags((osecs, desc), &seq, SecBits::of(o), o.sh_type);
                if exact {
                    hold.after = found;
                }
                found
            }
        };
        let pos = |at: u32| seq.iter().position(|&x| x == at).map_or(0, |p| p + 1);
        let mut at = match (hold.last, after) {
            (Some(l), _) => pos(l),
            (None, Some(a)) => pos(a),
            (None, None) => 0,
        };
        if matches!(kind, Kind::Note) {
            at = note_place(osecs, &seq, o.align).unwrap_or(at);
            notes_placed = true;
        } else if notes_placed {
            // GNU ld keeps its orphan notes together: a section that would go among them goes after them.
            while seq
                .get(at)
                .is_some_and(|&s| is_loaded_note(&osecs[s as usize]))
            {
                at += 1;
            }
        }
        if matches!(kind, Kind::Tls) && !o.is_nobits() {
            // Not GNU ld's order (it places TLS orphans as it meets them, which can put `.tbss` before `.tdata`
            // and the TLS segment astray): TLS data before TLS zero-fill, as the TLS block needs.
            while at > 0
                && osecs[seq[at - 1] as usize].is_tls()
                && osecs[seq[at - 1] as usize].is_nobits()
            {
                at -= 1;
            }
        }
        seq.insert(at, i);
        hold.last = Some(i);
    }
    // Under a script GNU ld appends them as it meets them (its default scripts' order of them is not this
    // script's); rivet keeps `.comment` first and the symbol and string tables last.
    unallocated.sort_by_key(|&i| match &osecs[i as usize].name[..] {
        b".comment" => 0,
        _ => rank(i) / 1000,
    });
    seq.extend(unallocated);
    order.copy_from_slice(&seq);
}

/// The output sections in the order GNU ld meets them as orphans: the first object's, then the linker's own (they
/// belong to that object), in the order GNU ld creates them, then the other objects'.
fn met_order(
    osecs: &[OutputSection],
    first_file_end: usize,
    linker_made: std::ops::Range<usize>,
) -> Vec<u32> {
    let first = first_file_end.min(linker_made.start);
    let mut made: Vec<u32> = linker_made.clone().map(|i| i as u32).collect();
    made.sort_by_key(|&i| {
        let n = &osecs[i as usize].name[..];
        CREATED
            .iter()
            .position(|&c| c == n)
            .unwrap_or(CREATED.len())
    });
    (0..first as u32)
        .chain(made)
        .chain(first as u32..linker_made.start as u32)
        .chain(linker_made.end as u32..osecs.len() as u32)
        .collect()
}

/// The order in which GNU ld creates its own sections for a dynamic link.
const CREATED: &[&[u8]] = &[
    b".interp",
    b".note.gnu.property",
    b".note.gnu.build-id",
    b".gnu.version_d",
    b".gnu.version",
    b".gnu.version_r",
    b".dynsym",
    b".dynstr",
    b".dynamic",
    b".hash",
    b".gnu.hash",
    b".got",
    b".got.plt",
    b".plt",
    b".rela.dyn",
    b".rela.plt",
];

fn is_loaded_note(o: &OutputSection) -> bool {
    o.sh_type == E::SHT_NOTE && o.is_alloc()
}

/// Where an allocated note orphan goes: GNU ld keeps its notes together and by alignment, so after the last note
/// of the first run of them with an alignment at least its own, or else before that run. None without notes.
fn note_place(osecs: &[OutputSection], seq: &[u32], align: u64) -> Option<usize> {
    let is_note = |i: u32| is_loaded_note(&osecs[i as usize]);
    let first = seq.iter().position(|&i| is_note(i))?;
    let run = seq[first..].iter().take_while(|&&i| is_note(i)).count();
    let last = (first..first + run)
        .rev()
        .find(|&k| osecs[seq[k] as usize].align >= align);
    Some(last.map_or(first, |k| k + 1))
}

/// `INSERT`s into rivet's default layout: each orphan after the layout's own section of the highest rank at or
/// below its own, so that it lies where the rules put it without a script.
fn order_in_builtin(
    sc: &SectionsScript,
    rules: &Rules,
    (osecs, desc): (&[OutputSection], &[u32]),
    order: &mut [u32],
) {
    let builtin: Vec<(u32, i64)> = (osecs.iter().enumerate())
        .filter(|&(i, _)| desc[i] != NONE && sc.groups[desc[i] as usize] == BASE)
        .filter_map(|(i, o)| Some((rules.named_rank(&o.name)?, 2 * i as i64)))
        .collect();
    order.sort_by_key(|&i| {
        let o = &osecs[i as usize];
        let rank = rules.rank(&o.name, o.sh_type, o.flags);
        if desc[i as usize] != NONE {
            (2 * i as i64, 0)
        } else if !o.is_alloc() {
            (i64::MAX, rank)
        } else {
            let after = builtin.iter().rev().find(|a| a.0 <= rank);
            (after.map_or(-1, |a| a.1 + 1), rank)
        }
    });
}

/// Per orphan kind: the section its orphans follow once known, and the last orphan of the kind placed.
#[derive(Clone, Copy, Default)]
struct Hold {
    after: Option<u32>,
    last: Option<u32>,
}

/// An allocated orphan's kind, in the order GNU ld tests them.
#[derive(Clone, Copy)]
enum Kind {
    Note,
    Tls,
    ZeroFill,
    Data,
    Relocs,
    ReadOnly,
    Code,
}

impl Kind {
    const COUNT: usize = 7;

    fn of(o: &OutputSection) -> Kind {
        let has = |flag: u32| o.flags & flag as u64 != 0;
        if o.sh_type == E::SHT_NOTE {
            Kind::Note
        } else if o.is_tls() {
            Kind::Tls
        } else if o.is_nobits() {
            Kind::ZeroFill
        } else if has(E::SHF_WRITE) {
            Kind::Data
        } else if matches!(o.sh_type, E::SHT_RELA | E::SHT_REL) {
            Kind::Relocs
        } else if !has(E::SHF_EXECINSTR) {
            Kind::ReadOnly
        } else {
            Kind::Code
        }
    }

    /// The script sections this kind's orphans go after, the first the script has.
    fn names(self) -> &'static [&'static [u8]] {
        match self {
            Kind::Note => &[b".interp"],
            Kind::Tls => &[b".tdata"],
            Kind::ZeroFill => &[b".bss"],
            Kind::Data => &[b".data"],
            Kind::Relocs => &[b".rela.dyn", b".rela.plt"],
            Kind::ReadOnly => &[b".rodata"],
            Kind::Code => &[b".text"],
        }
    }
}

/// The section flags GNU ld's orphan placement compares (bfd's, derived from ELF's as bfd derives them).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SecBits(u8);

impl SecBits {
    const CONTENTS: u8 = 1;
    const ALLOC: u8 = 2;
    const LOAD: u8 = 4;
    const READONLY: u8 = 8;
    const CODE: u8 = 16;
    const TLS: u8 = 32;

    fn of(o: &OutputSection) -> SecBits {
        SecBits::of_elf(o.flags, o.sh_type)
    }

    /// The flags of a section of ELF flags `flags` and type `sh_type`.
    pub fn of_elf(flags: u64, sh_type: u32) -> SecBits {
        let has = |flag: u32| flags & flag as u64 != 0;
        let nobits = sh_type == E::SHT_NOBITS;
        let alloc = has(E::SHF_ALLOC);
        SecBits(
            (!nobits as u8 * Self::CONTENTS)
                | (alloc as u8 * Self::ALLOC)
                | ((alloc && !nobits) as u8 * Self::LOAD)
                | (!has(E::SHF_WRITE) as u8 * Self::READONLY)
                | (has(E::SHF_EXECINSTR) as u8 * Self::CODE)
                | (has(E::SHF_TLS) as u8 * Self::TLS),
        )
    }

    fn has(self, m: u8) -> bool {
        self.0 & m == m
    }
}

/// The section an allocated orphan follows when the script lacks its kind's section, and whether it matched in
/// flags and type (`find_by_flags_among`). A script section counts once it has inputs or data.
fn find_by_flags(
    (osecs, desc): (&[OutputSection], &[u32]),
    seq: &[u32],
    sec: SecBits,
    sh_type: u32,
) -> (Option<u32>, bool) {
    let exists =
        |i: u32, o: &OutputSection| desc[i as usize] == NONE || o.flags != 0 || !o.parts.is_empty();
    let placed: Vec<(u32, SecBits, u32)> = (seq.iter())
        .map(|&i| (i, &osecs[i as usize]))
        .filter(|&(i, o)| exists(i, o))
        .map(|(i, o)| (i, SecBits::of(o), o.sh_type))
        .collect();
    find_by_flags_among(&placed, sec, sh_type)
}

/// GNU ld's `lang_output_section_find_by_flags`: among the sections `placed` so far (in output order: an id, their
/// flags and ELF type), the one an orphan of flags `sec` and type `sh_type` follows, and whether it matched in
/// flags and type: the last section with the same flags; else the last with the flags that matter for its kind
/// (read-only data after code, writable data after any loaded section, zero-fill after any allocated one,
/// unallocated after unallocated; TLS among the TLS sections, `.tdata`'s kind before `.tbss`'s). Sections of the
/// orphan's ELF type first, then of any. The partial link's orphans are placed by it too (`relocatable::order`).
pub fn find_by_flags_among<T: Copy>(
    placed: &[(T, SecBits, u32)],
    sec: SecBits,
    sh_type: u32,
) -> (Option<T>, bool) {
    use SecBits as B;
    if sec.has(B::TLS | B::ALLOC) {
        let tls = placed.iter().map(|&(i, b, _)| (i, b));
        return (tls_place(tls, sec), false);
    }
    let last = |mask: u8, typed: bool| {
        (placed.iter().rev())
            .find(|&&(_, b, t)| (b.0 ^ sec.0) & mask == 0 && (!typed || t == sh_type))
            .map(|&(i, _, _)| i)
    };
    let exact = B::CONTENTS | B::ALLOC | B::LOAD | B::READONLY | B::CODE | B::TLS;
    let kind = if sec.has(B::CODE | B::ALLOC) {
        B::CONTENTS | B::ALLOC | B::LOAD | B::CODE | B::TLS
    } else if sec.has(B::READONLY | B::ALLOC) {
        B::CONTENTS | B::ALLOC | B::LOAD | B::READONLY
    } else if sec.has(B::CONTENTS | B::ALLOC) {
        B::CONTENTS | B::ALLOC | B::LOAD | B::TLS
    } else if sec.has(B::ALLOC) {
        B::ALLOC
    } else {
        B::ALLOC | B::CONTENTS
    };
    if let Some(i) = last(exact, true) {
        return (Some(i), true);
    }
    let found = (last(kind, true).or_else(|| last(exact, false))).or_else(|| last(kind, false));
    (found, false)
}

/// A TLS orphan's place among `secs` (in order): after the last of the first run of TLS sections, but before a
/// zero-fill one when it has contents (`.tdata` before `.tbss`); without TLS sections, after the last loaded one.
fn tls_place<T: Copy>(secs: impl Iterator<Item = (T, SecBits)>, sec: SecBits) -> Option<T> {
    use SecBits as B;
    let want = sec.0 | B::LOAD | B::CONTENTS;
    let (mut found, mut seen) = (None, false);
    for (i, b) in secs {
        let differ = b.0 ^ want;
        if differ & (B::TLS | B::ALLOC) == 0 {
            if !b.has(B::LOAD) && sec.has(B::LOAD) {
                break;
            }
            found = Some(i);
            seen = true;
        } else if seen {
            break;
        } else if differ & (B::CONTENTS | B::ALLOC | B::LOAD) == 0 {
            found = Some(i);
        }
    }
    found
}
