//! Layout pass: output section sizes. The linker-made sections' sizes from what the passes before decided,
//! each output section's size from its parts, the empty linker-made sections dropped and the rest numbered.

use super::dynsym::DynamicSymbols;
use super::output_sections::SectionMap;
use super::place::Placement;
use super::slots::Slots;
use super::{Cx, EhRecords, MergeGroup, NONE, OutputSection, Part, Synth, SynthMap};
use crate::arch::Arch;
use crate::elf::align_up;
use crate::synthetic::dynamic::{Dynamic, Facts};
use crate::synthetic::{
    dynsym, eh_frame_hdr, got_plt, hash, interp, notes, relr, shstrtab, symtab, versions,
};
use rayon::prelude::*;

/// The output sections that have a section header.
pub struct SectionHeaders {
    /// Per output section: whether it is kept.
    pub keep: Vec<bool>,
    /// The number of section headers, the null one included.
    pub count: u32,
    /// `.dynamic`'s entries (none for a static output).
    pub dynamic: Dynamic,
}

/// Sets the sizes of the linker-made sections, each from its module in `synthetic` where it has one.
#[allow(clippy::too_many_arguments)]
pub fn synthetic_sizes<A: Arch>(
    cx: &Cx,
    map: &mut SectionMap,
    slots: &Slots,
    got_plt: &got_plt::Counts,
    dynamic: &DynamicSymbols,
    symtab: &symtab::Contents,
    eh_records: &EhRecords,
) {
    let sizes = (note_sizes(cx, map).into_iter())
        .chain(dynamic_sizes(cx, slots, dynamic))
        .chain(got_plt.sizes::<A>(&cx.plt))
        .chain([(Synth::Shstrtab, 0)]);
    let synth = &mut map.synth;
    for (s, size) in sizes {
        synth.set_size(s, size);
    }
    if synth.get(Synth::EhFrameHdr).is_some() {
        synth.set_size(Synth::EhFrameHdr, eh_frame_hdr::size(live_fdes(eh_records)));
    }
    if synth.get(Synth::GdbIndex).is_some() {
        // A stand-in that keeps the section: `write` builds the index once the addresses are known, then sets its
        // size and places the non-allocated sections again.
        synth.set_size(Synth::GdbIndex, crate::synthetic::gdb_index::HEADER_SIZE);
    }
    if synth.get(Synth::Symtab).is_some() {
        let (symtab_size, strtab_size) = symtab.sizes(cx.res);
        synth.set_size(Synth::Symtab, symtab_size);
        synth.set_size(Synth::Strtab, strtab_size);
    }
}

/// The sizes of `.interp` and the notes.
fn note_sizes(cx: &Cx, map: &SectionMap) -> [(Synth, u64); 4] {
    let build_id_size = map.build_id_size;
    [
        (Synth::Interp, map.interp.as_deref().map_or(0, interp::size)),
        (Synth::BuildId, notes::build_id_size(build_id_size)),
        (
            Synth::GnuProperty,
            crate::synthetic::property::size(cx.gnu_props),
        ),
        (
            Synth::PackageNote,
            cx.config
                .package_metadata
                .as_deref()
                .map_or(0, notes::package_size),
        ),
    ]
}

/// The sizes of the dynamic symbol table and the sections that go with it: `.dynstr`, the versions, the hash
/// tables; and `.relr.dyn`'s first guess.
fn dynamic_sizes(cx: &Cx, slots: &Slots, dynamic: &DynamicSymbols) -> Vec<(Synth, u64)> {
    let Cx {
        res,
        scan,
        is_dynamic,
        ..
    } = *cx;
    let DynamicSymbols {
        dynsyms,
        dynstr,
        verneed,
        ..
    } = dynamic;
    let dynsym_size = if is_dynamic { dynsym::size(dynsyms) } else { 0 };
    let mut sizes = vec![
        (Synth::Dynsym, dynsym_size),
        (Synth::Dynstr, dynstr.len() as u64),
        // Only with versions to name: ld.so indexes its version table, which it builds only from
        // DT_VERNEED/DT_VERDEF, with every .gnu.version entry.
        (
            Synth::Versym,
            if is_dynamic && (!verneed.is_empty() || !res.version_defs.is_empty()) {
                versions::versym_size(dynsyms.len() as u64 + 1)
            } else {
                0
            },
        ),
        (
            Synth::Verdef,
            if is_dynamic && !res.version_defs.is_empty() {
                versions::verdef_size(&res.version_defs)
            } else {
                0
            },
        ),
        (Synth::Verneed, versions::verneed_size(verneed)),
        (Synth::RelaNamed, 24 * slots.named_reloc_base.end),
        // Settled with the addresses (`segments`, by `relr::encode`).
        (
            Synth::RelrDyn,
            relr::first_size(!slots.relr_got.is_empty() || scan.relr.iter().any(|v| !v.is_empty())),
        ),
    ];
    if is_dynamic {
        sizes.push((Synth::GnuHash, hash::gnu_size(dynsyms)));
        sizes.push((Synth::Hash, hash::sysv_size(dynsyms)));
    }
    sizes
}

/// The GOT and PLT family's counts (`synthetic::got_plt`), which its sizes and its writer read.
pub fn got_plt_counts(cx: &Cx, slots: &Slots) -> got_plt::Counts {
    got_plt::Counts {
        got: slots.num_got,
        plt: slots.num_plt,
        iplt: slots.num_iplt,
        got_dyn_relocs: slots.got_dyn_relocs,
        copy_relocs: slots.copy_relocs,
        sec_dyn_relocs: slots.sec_dyn_relocs,
        irel_total: slots.irel_total,
        // GNU ld drops the header of a dynamic output without GOT or PLT slots that does not name the GOT's base
        // (a vDSO, the kernel's self-relocating decompressor, which asserts .got.plt's size).
        got_plt_header: slots.num_plt > 0
            || (cx.is_dynamic && (slots.num_got > 0 || slots.num_iplt > 0))
            || cx.scan.needs_got_base
            || cx.res.names.lookup(b"_GLOBAL_OFFSET_TABLE_").is_some(),
        dynamic: cx.is_dynamic,
    }
}

/// The FDEs the output `.eh_frame` keeps, one `.eh_frame_hdr` table entry each.
fn live_fdes(eh_records: &EhRecords) -> usize {
    eh_records
        .0
        .par_iter()
        .map(|file| {
            file.iter()
                .flat_map(|(_, v)| v)
                .filter(|r| !r.is_cie && r.out_off != NONE as u64)
                .count()
        })
        .sum()
}

/// Sets each output section's size from its parts, and numbers the sections that are kept.
/// Without a script (and without `--emit-relocs`), per output section: whether it holds only inputs, all empty,
/// so that `section_headers` drops it; GNU ld lists none of their locals (`symtab::contents`).
pub fn empty_of_inputs(
    config: &crate::args::Config,
    osecs: &[OutputSection],
    place: &Placement,
) -> Vec<bool> {
    if config.sections.is_some() || config.emit_relocs {
        return Vec::new();
    }
    (osecs.iter().enumerate())
        .map(|(i, o)| {
            place.cursor.get(i) == Some(&0)
                && !o.parts.is_empty()
                && (o.parts.iter()).all(|p| matches!(p, Part::Inputs | Part::Sorted))
        })
        .collect()
}

pub fn section_headers(
    cx: &Cx,
    osecs: &mut [OutputSection],
    map: &mut SectionMap,
    place: &Placement,
    merges: &[MergeGroup],
    slots: &Slots,
    dynsyms: &DynamicSymbols,
) -> SectionHeaders {
    let is_dynamic = cx.is_dynamic;
    let SectionMap { synth, .. } = &*map;
    let cursor = &place.cursor;
    let Slots {
        commons_size,
        copy_size: copy_off,
        copy_relro_size,
        copy_relro_align,
        bss_align,
        ..
    } = slots;
    let (commons_size, copy_off, bss_align) = (*commons_size, *copy_off, *bss_align);
    // Sizes of sections made of parts.
    for (i, o) in osecs.iter_mut().enumerate() {
        let mut off = 0u64;
        // Its own place: two sections of one name (a script's two descriptions) have their own inputs.
        let inputs = cursor.get(i).copied().unwrap_or(0);
        for p in &o.parts {
            let (size, align) = match p {
                Part::Inputs => {
                    o.inputs_size = inputs;
                    (o.inputs_size, 1)
                }
                Part::Sorted => (inputs, 1),
                Part::Merged(m) => (merges[*m as usize].size, merges[*m as usize].align),
                Part::Commons => (commons_size, bss_align),
                Part::CopyRel => (copy_off, bss_align),
                Part::CopyRelRo => (*copy_relro_size, *copy_relro_align),
                Part::Synthetic(s) => (synth.size(*s), synth.align(*s)),
                Part::Relocs => (o.size, o.align),
            };
            off = align_up(off, align);
            o.part_offsets.push(off);
            o.part_sizes.push(size);
            off += size;
        }
        o.size = off;
    }
    // An empty section goes, as in GNU ld (`.tm_clone_table` of every C program, an empty `.data`); under a
    // script, unless its commands keep it (data, `.` moved). With `--emit-relocs` one with inputs stays, as in GNU
    // ld (relocations may name it).
    let script = cx.config.sections.as_deref();
    let keep: Vec<bool> = (osecs.iter().enumerate())
        .map(|(i, o)| {
            let by_commands = || match (script, map.script_desc.get(i)) {
                (Some(sc), Some(&d)) if d != NONE => {
                    sc.has_data(d as usize)
                        || sc.keeps_location(d as usize)
                        || kept_input(cx, sc, place.script_lists.get(i))
                }
                _ => false,
            };
            let inputs = || (o.parts.iter()).any(|p| matches!(p, Part::Inputs | Part::Sorted));
            o.size > 0
                || o.name == b".shstrtab"
                || (is_dynamic && o.parts.contains(&Part::Synthetic(Synth::Dynamic)))
                || by_commands()
                || (cx.config.emit_relocs && inputs())
        })
        .collect();

    let mut shndx = 1u32;
    for (i, o) in osecs.iter_mut().enumerate() {
        if keep[i] {
            o.shndx = shndx;
            shndx += 1;
        }
    }
    let names = (osecs.iter().zip(&keep)).filter_map(|(o, &k)| k.then_some(&o.name[..]));
    let shstrtab_size = shstrtab::size(names);
    set_late_size(osecs, &mut map.synth, Synth::Shstrtab, shstrtab_size);
    // `.dynamic` names the sections that are kept, so its entries are decided now; its size is theirs.
    let dynamic = match map.synth.get(Synth::Dynamic) {
        Some(_) if is_dynamic => {
            let d = dynamic_section(cx, osecs, map, slots, dynsyms);
            set_late_size(osecs, &mut map.synth, Synth::Dynamic, d.size());
            d
        }
        _ => Dynamic::default(),
    };
    SectionHeaders {
        keep,
        count: shndx,
        dynamic,
    }
}

/// Whether an (empty) input section of a script's output section, listed in `list`, is one GNU ld keeps: named
/// by a `KEEP` pattern, or `SHF_GNU_RETAIN`.
fn kept_input(
    cx: &Cx,
    sc: &crate::script::sections::SectionsScript,
    list: Option<&Vec<super::script::ScriptInput>>,
) -> bool {
    const SHF_GNU_RETAIN: u64 = 0x20_0000;
    let objects = &cx.res.objects;
    (list.into_iter().flatten())
        .filter(|e| !e.is_linker_made())
        .any(|e| {
            let o = &objects[e.file.index()];
            let flags = o.sec(e.sec).flags();
            let file = crate::script::sections::InputName::of(&o.name);
            let writable = flags & object::elf::SHF_WRITE as u64 != 0;
            flags & SHF_GNU_RETAIN != 0
                || sc.keep_matches(&file, o.sec_name(e.sec.index()), writable)
        })
}

/// The size of a linker-made section known only once the sections are numbered: its output section grows to hold
/// it (it is the last part).
fn set_late_size(osecs: &mut [OutputSection], synth: &mut SynthMap, s: Synth, size: u64) {
    synth.set_size(s, size);
    let o = &mut osecs[synth[s].index()];
    let at = o.part_offset(&Part::Synthetic(s));
    o.size = o.size.max(at + size);
}

/// The entries of `.dynamic`, once the output sections that are kept are numbered.
fn dynamic_section(
    cx: &Cx,
    osecs: &[OutputSection],
    map: &SectionMap,
    slots: &Slots,
    dynsyms: &DynamicSymbols,
) -> Dynamic {
    let kept = |s: Synth| {
        map.synth
            .get(s)
            .is_some_and(|i| osecs[i.index()].shndx != 0)
    };
    let section = |name: &[u8]| {
        map.by_name
            .get(name)
            .copied()
            .filter(|&i| osecs[i.index()].shndx != 0)
    };
    let facts = Facts {
        needed: &dynsyms.needed,
        dyn_strings: &dynsyms.dyn_strings,
        kept: &kept,
        section: &section,
        has_plt: slots.num_plt > 0,
        static_tls: slots.aux.iter().any(|x| x.gottp != NONE),
        verneed_files: dynsyms.verneed.len(),
        textrel: cx.scan.textrel,
    };
    Dynamic::build(cx.config, cx.res, &facts)
}
