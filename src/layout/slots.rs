//! Layout pass: GOT and PLT slots, copy relocations and common symbols. Every symbol the scan flagged gets its
//! slots, numbered in symbol order (each chunk of symbols in parallel from a prefix sum of the chunks' counts);
//! commons and copied data get their places in `.bss`; the dynamic relocation areas are counted.

use super::output_sections::SectionMap;
use super::symbols::target_of;
use super::{Aux, Cx, NONE, OutputSection, Part, RelocBases};
use crate::args::OutputKind;
use crate::elf::{LE, align_up};
use crate::index::{FileId, SecIdx, SharedId, SymId};
use crate::resolve::Def;
use crate::scan;
use crate::symbols::{SymProps, Target};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// The slots of every symbol that has any, and the sizes they add up to.
pub struct Slots {
    /// The symbols with slots (or exported), sorted.
    pub aux_ids: Vec<SymId>,
    /// Their slots, in the order of `aux_ids`.
    pub aux: Vec<Aux>,
    /// Per symbol: its index in `aux` (`NONE` if none).
    pub aux_index: Vec<u32>,
    pub num_got: u32,
    pub num_plt: u32,
    pub num_iplt: u32,
    /// The local-dynamic module pair's first GOT slot, or `NONE`.
    pub tlsld: u32,
    /// Dynamic relocations of GOT slots.
    pub got_dyn_relocs: u64,
    /// Common symbols and their offsets in `.bss`'s commons part, and its size.
    pub commons: Vec<(SymId, u64)>,
    pub commons_size: u64,
    /// The size of the copy-relocated data, their number, and the alignment of both parts.
    pub copy_size: u64,
    pub copy_relocs: u64,
    pub bss_align: u64,
    /// The copies of read-only data (`.data.rel.ro`'s part): size and alignment.
    pub copy_relro_size: u64,
    pub copy_relro_align: u64,
    /// GOT slots holding a link-time address that go to `.relr.dyn`.
    pub relr_got: Vec<u32>,
    /// The symbols `.dynsym` lists, in symbol order.
    pub dynsym_ids: Vec<SymId>,
    /// Dynamic relocation areas: [GOT][copy][sections][IRELATIVE].
    pub dyn_reloc_base: RelocBases,
    /// The input sections' relocations a script places apart (`Synth::RelaNamed`), from its first entry.
    pub named_reloc_base: RelocBases,
    pub irel_base: RelocBases,
    pub sec_dyn_relocs: u64,
    pub irel_total: u64,
}

pub fn number_slots_of_symbols(
    cx: &Cx,
    osecs: &mut [OutputSection],
    map: &SectionMap,
    place: &super::place::Placement,
) -> Slots {
    let Cx {
        config,
        space,
        scan,
        pic,
        ..
    } = *cx;
    // GOT, PLT and dynamic symbols from the scan flags.
    let aux_ids: Vec<SymId> = crate::par::filter_ids(scan.flags.len(), |i| scan.flags[i] != 0);
    let exported = if cx.is_dynamic {
        exported_ids(cx)
    } else {
        Vec::new()
    };
    let all_aux_ids = merge_sorted(&aux_ids, &exported);
    // A few thousand symbols (most executables) are numbered on this thread (`par::worth_parallel`; the steps
    // here are heavier than a table entry's).
    let parallel = crate::par::worth_parallel(all_aux_ids.len() * 8);
    let kinds = symbol_kinds(cx, &all_aux_ids, &exported, parallel);
    // Slots are numbered in symbol order, in parallel: each chunk of symbols counts its slots, the counts are summed
    // in order, and each chunk then numbers its own from where those before it end. On one thread the numbering was
    // most of this phase (clang-so: 2.2 of 2.9 ms at 2 threads).
    let slot_cx = SlotCx {
        pic,
        exec: config.kind == OutputKind::Exec,
        shared: config.kind == OutputKind::Shared,
        pack_relr: config.pack_relative_relocs,
    };
    let chunks: Vec<SlotChunk> = all_aux_ids
        .chunks(SLOT_CHUNK)
        .zip(kinds.chunks(SLOT_CHUNK))
        .collect();
    let per_chunk: Vec<ChunkSlots> = crate::par::map(&chunks, parallel, |&(ids, kinds)| {
        count_chunk_slots(scan, cx.is_dynamic, &slot_cx, ids, kinds)
    });
    let mut chunk_starts = Vec::with_capacity(per_chunk.len());
    let mut counts = SlotCounts::default();
    let (mut copy_syms, mut dynsym_ids) = (Vec::new(), Vec::new());
    // GOT slots holding a link-time address that go to .relr.dyn (`-z pack-relative-relocs`).
    let mut relr_got: Vec<u32> = Vec::new();
    for (c, copy, dynsym, relr) in &per_chunk {
        relr_got.extend(relr.iter().map(|&slot| counts.got + slot));
        chunk_starts.push(counts);
        counts.add(c);
        copy_syms.extend_from_slice(copy);
        dynsym_ids.extend_from_slice(dynsym);
    }
    drop(per_chunk);
    let aux = number_chunk_slots(scan, &slot_cx, chunks, chunk_starts, parallel);
    let SlotCounts {
        got: mut num_got,
        plt: num_plt,
        iplt: num_iplt,
        mut got_dyn_relocs,
        irel_got,
    } = counts;
    let aux_index = aux_index_of(space.total, &all_aux_ids);
    // Local dynamic: one (module id, 0) pair for the whole output.
    let tlsld = if scan.needs_tlsld {
        num_got += 2;
        got_dyn_relocs += 1;
        num_got - 2
    } else {
        NONE
    };

    let mut slots = Slots {
        aux_ids: all_aux_ids,
        aux,
        aux_index,
        num_got,
        num_plt,
        num_iplt,
        tlsld,
        got_dyn_relocs,
        commons: Vec::new(),
        commons_size: 0,
        copy_size: 0,
        copy_relocs: 0,
        bss_align: 1,
        copy_relro_size: 0,
        copy_relro_align: 1,
        relr_got,
        dynsym_ids,
        dyn_reloc_base: RelocBases::new(&[], 0),
        named_reloc_base: RelocBases::new(&[], 0),
        irel_base: RelocBases::new(&[], 0),
        sec_dyn_relocs: 0,
        irel_total: 0,
    };
    place_in_bss(cx, osecs, map, &copy_syms, &mut slots);
    // Dynamic relocation areas: [GOT][copy][sections][IRELATIVE].
    let (got_dyn_relocs, copy_relocs) = (slots.got_dyn_relocs, slots.copy_relocs);
    let places = (&place.place_osec[..], &place.sec_off[..]);
    let start = got_dyn_relocs + copy_relocs;
    if map.rela_named.iter().all(|v| v.is_empty()) {
        slots.dyn_reloc_base = RelocBases::in_place_order(&scan.dyn_relocs, start, places);
    } else {
        let (main, named) = split_named(&scan.dyn_relocs, &map.rela_named);
        slots.dyn_reloc_base = RelocBases::in_place_order(&main, start, places);
        // GNU ld does not sort these: they are in the order of the script's statements that take them, then of
        // the files and sections.
        let stmt = |f: FileId, s: SecIdx| {
            let v = &map.rela_named[f.index()];
            v.binary_search_by_key(&s, |e| e.0)
                .map_or(u32::MAX, |k| v[k].1)
        };
        slots.named_reloc_base = RelocBases::sorted_by(&named, 0, |f, s| (stmt(f, s), s.0 as u64));
    }
    slots.irel_base = RelocBases::new(&scan.irel_relocs, irel_got);
    slots.sec_dyn_relocs = slots.dyn_reloc_base.end - got_dyn_relocs - copy_relocs;
    slots.irel_total = slots.irel_base.end;
    slots
}

/// The scan's per-file (section, count) lists of dynamic relocations split in two: those of `.rela.dyn` and those
/// of the sections in `named` (per file, sorted, with their statements), which a script places apart.
type Counts = Vec<Vec<(SecIdx, u32)>>;
fn split_named(counts: &[Vec<(SecIdx, u32)>], named: &[Vec<(SecIdx, u32)>]) -> (Counts, Counts) {
    (counts.iter().enumerate())
        .map(|(f, c)| {
            let apart = named.get(f).map_or(&[][..], |v| &v[..]);
            c.iter()
                .partition(|(s, _)| apart.binary_search_by_key(s, |e| e.0).is_err())
        })
        .unzip()
}

/// The symbols a chunk of the slot numbering holds.
const SLOT_CHUNK: usize = 4096;

/// A chunk's symbols with their (properties, exported).
type SlotChunk<'a> = (&'a [SymId], &'a [(u8, bool)]);

/// Per chunk: its counts; the symbols among its own that get copy relocations and dynamic symbols; and its GOT
/// slots relocated by `.relr.dyn`, numbered from the chunk's start.
type ChunkSlots = (SlotCounts, Vec<SymId>, Vec<SymId>, Vec<u32>);

/// The globals a dynamic output exports that no relocation already gave a dynamic symbol, sorted: definitions (an
/// object's, or the linker's unless local or a `__start_`/`__stop_` symbol made hidden), not hidden, where
/// everything is exported or a shared library references them or `--dynamic-list` or an option names them.
fn exported_ids(cx: &Cx) -> Vec<SymId> {
    let Cx {
        config, res, scan, ..
    } = *cx;
    let export_all = config.export_dynamic || config.kind == OutputKind::Shared;
    crate::par::filter_ids(res.num_globals(), |g| {
        (matches!(res.defs[g], Def::Object { .. })
            || res.defs[g] == Def::Linker
                && !crate::resolve::linker_symbol_is_local(config, res.name(SymId::new(g)))
                && !(crate::resolve::is_start_stop(res.name(SymId::new(g)))
                    && matches!(
                        config.start_stop_visibility,
                        object::elf::STV_HIDDEN | object::elf::STV_INTERNAL
                    )))
            && !res.hidden[g]
            && (export_all
                || res.referenced_by_shared[g]
                || res.in_dynamic_list.get(g) == Some(&true)
                || res.exported_by_option.get(g) == Some(&true))
            && scan.flags[g] & scan::NEEDS_DYNSYM == 0
    })
}

/// What each of `ids` is, in parallel (a global's property bits were computed once; a local's come from its
/// symbol-table entry), and whether it is `exported`, so the numbering reads only this table.
fn symbol_kinds(cx: &Cx, ids: &[SymId], exported: &[SymId], parallel: bool) -> Vec<(u8, bool)> {
    let Cx {
        config, res, space, ..
    } = *cx;
    crate::par::map(ids, parallel, |&id| {
        let props = match space.gprops.get(id.index()) {
            Some(&b) => b,
            None => SymProps::of(res, config, id, target_of(res, space, id)),
        };
        (props, exported.binary_search(&id).is_ok())
    })
}

/// A chunk's slot counts, and its symbols that get copy relocations, dynamic symbols, and GOT slots in
/// `.relr.dyn`.
fn count_chunk_slots(
    scan: &crate::scan::Scan,
    is_dynamic: bool,
    slot_cx: &SlotCx,
    ids: &[SymId],
    kinds: &[(u8, bool)],
) -> ChunkSlots {
    let mut c = SlotCounts::default();
    let (mut copy, mut dynsym, mut relr) = (Vec::new(), Vec::new(), Vec::new());
    for (&id, &(props, is_exported)) in ids.iter().zip(kinds) {
        let fl = scan.flags[id.index()];
        let (x, in_relr) = number_slots(fl, props, slot_cx, &mut c);
        if in_relr {
            relr.push(x.got);
        }
        if fl & scan::NEEDS_COPY != 0
            && props & SymProps::IMPORTED != 0
            && fl & scan::NEEDS_CANONICAL == 0
        {
            copy.push(id);
        }
        let preemptible = props & SymProps::PREEMPTIBLE != 0;
        if is_dynamic
            && (fl & scan::NEEDS_DYNSYM != 0
                || preemptible && fl & (scan::NEEDS_PLT | scan::NEEDS_COPY) != 0)
            || is_exported
        {
            dynsym.push(id);
        }
    }
    (c, copy, dynsym, relr)
}

/// Every chunk's slots, numbered from its start (`chunk_starts`), in the order of the symbols.
fn number_chunk_slots(
    scan: &crate::scan::Scan,
    slot_cx: &SlotCx,
    chunks: Vec<SlotChunk>,
    chunk_starts: Vec<SlotCounts>,
    parallel: bool,
) -> Vec<Aux> {
    // Written once, in place (filling it first and then numbering cost a second pass over new pages).
    let n = chunks.iter().map(|(ids, _)| ids.len()).sum();
    let mut aux: Vec<Aux> = Vec::with_capacity(n);
    let parts: Vec<_> = aux.spare_capacity_mut()[..n]
        .chunks_mut(SLOT_CHUNK)
        .zip(chunks)
        .zip(chunk_starts)
        .collect();
    crate::par::for_each_owned(parts, parallel, |((out, (ids, kinds)), mut c)| {
        for ((x, &id), &(props, _)) in out.iter_mut().zip(ids).zip(kinds) {
            x.write(number_slots(scan.flags[id.index()], props, slot_cx, &mut c).0);
        }
    });
    // SAFETY: the chunks above cover the first `n` elements and wrote each one.
    unsafe { aux.set_len(n) };
    aux
}

/// Per symbol (`total`, locals included), its index in the sorted `aux_ids`, or `NONE`: filled on all threads
/// (clang-so: 1.5 ms of page faults on one), a chunk of ids finding its symbols in `aux_ids`.
fn aux_index_of(total: usize, aux_ids: &[SymId]) -> Vec<u32> {
    let mut aux_index: Vec<u32> = Vec::with_capacity(total);
    let index_chunk = |(k, slots): (usize, &mut [u32])| {
        let lo = (k << 16) as u32;
        let first = aux_ids.partition_point(|&id| id.0 < lo);
        for (i, &id) in aux_ids[first..].iter().enumerate() {
            match slots.get_mut((id.0 - lo) as usize) {
                Some(s) => *s = (first + i) as u32,
                None => break,
            }
        }
    };
    if crate::par::worth_parallel(total) {
        aux_index.par_extend(rayon::iter::repeat_n(NONE, total));
        aux_index
            .par_chunks_mut(1 << 16)
            .enumerate()
            .for_each(index_chunk);
    } else {
        aux_index.resize(total, NONE);
        aux_index
            .chunks_mut(1 << 16)
            .enumerate()
            .for_each(index_chunk);
    }
    aux_index
}

/// Common symbols and copy-relocated data get their places in `.bss` (one copy shared by aliases: same library,
/// same address), and the aliases of copied data slots that name the copy.
fn place_in_bss(
    cx: &Cx,
    osecs: &mut [OutputSection],
    map: &SectionMap,
    copy_syms: &[SymId],
    slots: &mut Slots,
) {
    let Cx { res, space, .. } = *cx;
    let (common_ids, by_name) = (&map.common_ids, &map.by_name);
    let Slots {
        aux,
        aux_index,
        aux_ids: all_aux_ids,
        dynsym_ids,
        ..
    } = slots;
    // Copy relocations, sharing one copy between aliases (same library, same address).
    let mut commons: Vec<(SymId, u64)> = Vec::new();
    let mut bss_off = 0u64;
    let mut bss_align = 1u64;
    let sorted;
    let common_ids = match cx.config.sort_common {
        // GNU ld's classes: 16 bytes or more, 8, 4, 2, 1; stable within a class.
        Some(descending) => {
            let mut v = common_ids.clone();
            let class = |g: &SymId| res.common.get(g).map_or(1, |&(_, a)| a.clamp(1, 16));
            if descending {
                v.sort_by_key(|g| std::cmp::Reverse(class(g)));
            } else {
                v.sort_by_key(class);
            }
            sorted = v;
            &sorted
        }
        None => common_ids,
    };
    for &g in common_ids {
        let (size, align) = res.common.get(&g).copied().unwrap_or((0, 1));
        let align = align.max(1);
        bss_off = align_up(bss_off, align);
        bss_align = bss_align.max(align);
        commons.push((g, bss_off));
        bss_off += size;
    }
    let commons_size = bss_off;
    // Copies of read-only data go to `.data.rel.ro`, the others to `.bss`: (offset, align) of each area.
    let mut areas = [(0u64, bss_align), (0u64, 1u64)];
    let mut copy_done: HashMap<(SharedId, u64), (u64, bool)> = HashMap::default();
    let mut copy_relocs = 0u64;
    for &id in copy_syms {
        let Target::Imported { file, sym } = target_of(res, space, id) else {
            continue;
        };
        let so = &res.shared[file.index()];
        let s = &so.syms[sym as usize];
        let value = s.st_value.get(LE);
        let size = s.st_size.get(LE);
        let (off, relro) = *copy_done.entry((file, value)).or_insert_with(|| {
            let align = if value == 0 {
                8
            } else {
                (1u64 << value.trailing_zeros()).min(64)
            };
            let relro = so.read_only(s.st_shndx.get(LE));
            let (next, area_align) = &mut areas[relro as usize];
            *area_align = (*area_align).max(align);
            let o = align_up(*next, align);
            *next = o + size.max(1);
            copy_relocs += 1;
            (o, relro)
        });
        let x = &mut aux[aux_index[id.index()] as usize];
        x.copy_off = off;
        x.copied = true;
        x.copy_relro = relro;
    }
    let [(copy_off, bss_align), (relro_off, relro_align)] = areas;
    // Aliases of copied data (glibc's `environ` and `__environ`) must name the copy too, or the library keeps
    // using its own, never-initialised original.
    if !copy_done.is_empty() {
        let files: Vec<SharedId> = {
            let mut v: Vec<SharedId> = copy_done.keys().map(|k| k.0).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for file in files {
            let sh = &res.shared[file.index()];
            for (k, &g) in res.shared_ids[file.index()].iter().enumerate() {
                let i = sh.first_global + k;
                let sym = &sh.syms[i];
                let Some(&(off, relro)) = copy_done.get(&(file, sym.st_value.get(LE))) else {
                    continue;
                };
                if sym.st_shndx.get(LE) == 0
                    || res.defs[g.index()]
                        != (Def::Shared {
                            file,
                            sym: i as u32,
                        })
                {
                    continue;
                }
                let slot = aux_index[g.index()];
                if slot == NONE {
                    aux_index[g.index()] = aux.len() as u32;
                    aux.push(Aux {
                        got: NONE,
                        gottp: NONE,
                        plt: NONE,
                        iplt: NONE,
                        dynsym: NONE,
                        copy_off: off,
                        copied: true,
                        copy_relro: relro,
                        canonical: false,
                        strong_ref: false,
                        igot: NONE,
                        tlsgd: NONE,
                        tlsdesc: NONE,
                    });
                    all_aux_ids.push(g);
                    dynsym_ids.push(g);
                } else if !aux[slot as usize].copied {
                    let x = &mut aux[slot as usize];
                    x.copy_off = off;
                    x.copied = true;
                    x.copy_relro = relro;
                }
            }
        }
    }
    if !commons.is_empty() {
        let i = super::output_sections::commons_section(cx.config, map)
            .expect("the commons' section was created");
        let o = &mut osecs[i.index()];
        o.align = o.align.max(bss_align);
        o.parts.push(Part::Commons);
    }
    if copy_off > 0 {
        let bss = *by_name.get(&b".bss"[..]).expect(".bss was created above");
        let o = &mut osecs[bss.index()];
        o.align = o.align.max(bss_align);
        o.parts.push(Part::CopyRel);
    }
    if relro_off > 0 {
        let rel_ro = *by_name
            .get(&b".data.rel.ro"[..])
            .expect(".data.rel.ro was created for the copies");
        let o = &mut osecs[rel_ro.index()];
        o.align = o.align.max(relro_align);
        o.parts.push(Part::CopyRelRo);
    }
    slots.copy_relro_size = relro_off;
    slots.copy_relro_align = relro_align;
    slots.commons = commons;
    slots.commons_size = commons_size;
    slots.copy_size = copy_off;
    slots.copy_relocs = copy_relocs;
    slots.bss_align = bss_align;
}

/// What numbering a symbol's GOT and PLT slots depends on besides the symbol.
struct SlotCx {
    pic: bool,
    exec: bool,
    shared: bool,
    pack_relr: bool,
}

/// Slots numbered so far: the next GOT, PLT and IFUNC PLT entries, and the dynamic relocations they need.
#[derive(Clone, Copy, Default)]
struct SlotCounts {
    got: u32,
    plt: u32,
    iplt: u32,
    got_dyn_relocs: u64,
    irel_got: u64,
}

impl SlotCounts {
    fn add(&mut self, o: &SlotCounts) {
        self.got += o.got;
        self.plt += o.plt;
        self.iplt += o.iplt;
        self.got_dyn_relocs += o.got_dyn_relocs;
        self.irel_got += o.irel_got;
    }
}

/// The slots of a symbol with scan flags `fl` and property bits `props`, numbered from `c`, which this advances;
/// and whether its GOT slot is relocated by `.relr.dyn`.
#[inline]
fn number_slots(mut fl: u16, props: u8, cx: &SlotCx, c: &mut SlotCounts) -> (Aux, bool) {
    let preemptible = props & SymProps::PREEMPTIBLE != 0;
    let ifunc = props & SymProps::IFUNC != 0;
    // An executable gives a local IFUNC one address, its stub, which GOT loads must see too: always in
    // position-dependent output; in a PIE (static or not) when the stub exists anyway, as code takes the address
    // directly or calls it, so that the stub, GOT loads and pointers in data all agree.
    let canonical_stub = ifunc
        && !preemptible
        && !cx.shared
        && fl & scan::NEEDS_GOT != 0
        && (cx.exec || fl & scan::NEEDS_PLT != 0);
    if canonical_stub {
        fl |= scan::NEEDS_PLT;
    }
    let mut x = Aux {
        got: NONE,
        gottp: NONE,
        plt: NONE,
        iplt: NONE,
        dynsym: NONE,
        copy_off: 0,
        copied: false,
        copy_relro: false,
        canonical: fl & scan::NEEDS_CANONICAL != 0,
        strong_ref: fl & scan::STRONG_REF != 0,
        igot: NONE,
        tlsgd: NONE,
        tlsdesc: NONE,
    };
    let mut relr = false;
    if fl & scan::NEEDS_GOT != 0 || (fl & scan::NEEDS_PLT != 0 && ifunc) {
        x.got = c.got;
        c.got += 1;
        if canonical_stub {
            x.igot = c.got;
            c.got += 1;
            c.irel_got += 1;
            // The slot holds the stub's link-time address: relocated in position-independent output.
            if cx.pic {
                if cx.pack_relr {
                    relr = true;
                } else {
                    c.got_dyn_relocs += 1;
                }
            }
        } else if preemptible {
            c.got_dyn_relocs += 1;
        } else if ifunc {
            c.irel_got += 1;
        } else if cx.pic && props & SymProps::ABSOLUTE == 0 {
            if cx.pack_relr {
                relr = true;
            } else {
                c.got_dyn_relocs += 1;
            }
        }
    }
    if fl & scan::NEEDS_GOTTP != 0 {
        x.gottp = c.got;
        c.got += 1;
        if preemptible || cx.shared {
            c.got_dyn_relocs += 1;
        }
    }
    // TLS pairs (shared objects only; executables relax these accesses): a preemptible (imported) symbol gets a
    // DTPMOD64 and a DTPOFF64, a local one a DTPMOD64 of this module and a static offset.
    if fl & scan::NEEDS_TLSGD != 0 {
        x.tlsgd = c.got;
        c.got += 2;
        c.got_dyn_relocs += if preemptible { 2 } else { 1 };
    }
    if fl & scan::NEEDS_TLSDESC != 0 {
        x.tlsdesc = c.got;
        c.got += 2;
        c.got_dyn_relocs += 1;
    }
    if fl & scan::NEEDS_PLT != 0 {
        if preemptible {
            x.plt = c.plt;
            c.plt += 1;
        } else if ifunc {
            x.iplt = c.iplt;
            c.iplt += 1;
        }
    }
    (x, relr)
}

/// The ids of two sorted lists, sorted, each once: one pass instead of sorting both again (clang-so's 190K GOT, PLT
/// and exported symbols: 1 ms on one thread).
pub fn merge_sorted<T: Ord + Copy>(a: &[T], b: &[T]) -> Vec<T> {
    debug_assert!(a.is_sorted() && b.is_sorted());
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        i += (a[i] == x) as usize;
        j += (b[j] == x) as usize;
        if out.last() != Some(&x) {
            out.push(x);
        }
    }
    for &x in a[i..].iter().chain(&b[j..]) {
        if out.last() != Some(&x) {
            out.push(x);
        }
    }
    out
}
