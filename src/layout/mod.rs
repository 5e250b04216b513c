//! Pass 8: layout.
//!
//! Input: resolution, liveness and scan results, and the files' load order. Output: [`Layout`]: the output sections
//! in order with their addresses and file offsets, the place of every live input section (prefix sums over
//! per-file block sizes, so files are placed in parallel and in load order, `load_order::FileOrder`),
//! merged-string pieces, `.eh_frame` records, GOT/PLT slots, the dynamic symbol table, and the address of every
//! symbol.

use crate::arch::Arch;
use crate::args::{Config, OutputKind};
use crate::diag::Result;
use crate::gc::Liveness;
use crate::resolve::Resolved;
use crate::scan::Scan;
use crate::symbols::SymbolSpace;
use object::elf as E;
// Fx: these maps are keyed by section names and small integers on hot per-section paths; no untrusted-input DoS
// concern for a linker, and iteration order is not used for output.
use rustc_hash::FxHashMap as HashMap;

pub use crate::elf::Segment;
pub use crate::index::NONE;
use crate::index::{FileId, OsecId, SecIdx, SymId};
pub use crate::merge::{MergeGroup, PieceTable};
pub use crate::synthetic::got_plt::Aux;
pub use crate::synthetic::versions::Verneed;
pub use crate::synthetic::{DynSymbol, Synth, SynthMap};

mod call_graph;
mod cdsort;
mod data_segment;
pub mod default_script;
mod dynsym;
mod eh_frame;
pub mod emit_relocs;
mod named_relocs;
mod order;
mod output_sections;
mod place;
pub mod rules;
pub mod script;
mod section_start;
mod segments;
mod sizes;
mod slots;
mod symbols;

pub use symbols::{
    MergeCursor, merge_offset_addr, object_sym_addr, section_offset_addr, sym_target_is_live,
    target_of,
};

/// `Layout::sec_addr` of an input section that has no place of its own.
pub const NO_ADDR: u64 = u64::MAX;

/// What fills an output section, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// The input sections of every file mapped here, file blocks in load order (`FileOrder`).
    Inputs,
    /// Input sections in a given order (`.init_array.NNNNN` priorities), placed by `places`.
    Sorted,
    Merged(u32),
    Commons,
    CopyRel,
    /// Copies of a shared library's read-only data (in `.data.rel.ro`).
    CopyRelRo,
    /// A linker-made section's contents (`SynthMap` has its size).
    Synthetic(Synth),
    /// `--emit-relocs`: the relocations kept for another output section, the whole of this one.
    Relocs,
}

pub struct OutputSection {
    pub name: Vec<u8>,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
    pub parts: Vec<Part>,
    pub part_offsets: Vec<u64>,
    /// The parts' sizes, as the default layout sizes them (a script's walk lays the parts out again).
    pub part_sizes: Vec<u64>,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    /// Index in the section header table.
    pub shndx: u32,
    /// The bytes of the `Inputs` part (its input sections and the padding between them).
    pub inputs_size: u64,
    /// Whether `Layout::pads` gives the padding before each of its input sections: set when they are placed in
    /// file blocks, cleared where another order replaces that (sorted arrays, `SHF_LINK_ORDER`) or a gap does not
    /// fit 16 bits.
    pub pads_known: bool,
    /// Its bytes are made before the output is written and copied in whole (`write::compress_debug`: a compressed
    /// debug section), so the writers of its parts leave it alone.
    pub written_apart: bool,
    /// Some live input section here is not a merged one (its `SHF_MERGE` then goes, `place::add_merged`).
    pub plain_inputs: bool,
}

impl OutputSection {
    fn new(name: &[u8], sh_type: u32, flags: u64) -> OutputSection {
        OutputSection {
            name: name.to_vec(),
            sh_type,
            flags,
            align: 1,
            entsize: 0,
            parts: Vec::new(),
            part_offsets: Vec::new(),
            part_sizes: Vec::new(),
            addr: 0,
            offset: 0,
            size: 0,
            shndx: 0,
            inputs_size: 0,
            pads_known: false,
            written_apart: false,
            plain_inputs: false,
        }
    }
    pub fn is_alloc(&self) -> bool {
        self.flags & E::SHF_ALLOC as u64 != 0
    }
    /// The permissions of a segment holding this section.
    pub fn segment_flags(&self) -> u32 {
        let mut f = E::PF_R;
        if self.flags & E::SHF_WRITE as u64 != 0 {
            f |= E::PF_W;
        }
        if self.flags & E::SHF_EXECINSTR as u64 != 0 {
            f |= E::PF_X;
        }
        f
    }
    pub fn is_nobits(&self) -> bool {
        self.sh_type == E::SHT_NOBITS
    }
    pub fn is_tls(&self) -> bool {
        self.flags & E::SHF_TLS as u64 != 0
    }
    pub fn part_offset(&self, p: &Part) -> u64 {
        let i = self.parts.iter().position(|q| q == p).unwrap_or(0);
        self.part_offsets.get(i).copied().unwrap_or(0)
    }
}

/// Each linker-made section's offset in its output section, from its part, once the parts are placed.
pub(super) fn settle_synth_offsets(synth: &mut SynthMap, osecs: &[OutputSection]) {
    for o in osecs {
        for (p, &at) in o.parts.iter().zip(&o.part_offsets) {
            if let Part::Synthetic(s) = p {
                synth.set_offset(*s, at);
            }
        }
    }
}

/// A linker-made section's contents in the output: address, file offset and size, and its output section's
/// index in the section header table (0: dropped).
#[derive(Clone, Copy, Debug)]
pub struct SynthPart {
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub shndx: u32,
}

impl SynthPart {
    /// Its bytes in the output file, if it has any.
    pub fn range(&self) -> Option<std::ops::Range<usize>> {
        (self.shndx != 0 && self.size > 0)
            .then(|| self.offset as usize..(self.offset + self.size) as usize)
    }
}

/// The `.eh_frame` records of every live `.eh_frame` input section, per object as (section, records): most
/// sections are not `.eh_frame`, and an empty list per input section cost clang-so 20 MB.
#[derive(Default)]
pub struct EhRecords(pub Vec<Vec<(SecIdx, Vec<EhRecord>)>>);

impl EhRecords {
    /// The records of section `s` of object `f` (empty if it has none).
    pub fn get(&self, f: FileId, s: SecIdx) -> &[EhRecord] {
        self.find(f, s).unwrap_or(&[])
    }
    /// The records of section `s` of object `f`, if it is a live `.eh_frame` (every one has an entry, possibly
    /// empty).
    pub fn find(&self, f: FileId, s: SecIdx) -> Option<&[EhRecord]> {
        self.0[f.index()]
            .iter()
            .find(|(k, _)| *k == s)
            .map(|(_, v)| &v[..])
    }
}

/// A record of an input `.eh_frame` section.
#[derive(Clone, Copy, Debug)]
pub struct EhRecord {
    pub in_off: u64,
    pub size: u64,
    /// Offset in the file's block of the output `.eh_frame`, or NONE if dropped.
    pub out_off: u64,
    pub is_cie: bool,
    /// For an FDE, the input offset of its CIE.
    pub cie_in_off: u64,
}

pub use crate::arch::PltShape;

pub struct Layout {
    pub osecs: Vec<OutputSection>,
    pub plt: PltShape,
    /// The output's program properties (`synthetic::property`).
    pub gnu_props: Vec<(u32, u32)>,
    pub synth: SynthMap,
    /// Per object, per section: the output section of an input section placed whole (`NONE` for a discarded or
    /// merged one).
    pub place_osec: Vec<Vec<OsecId>>,
    /// Per object, per section: the output address of a placed input section (`NO_ADDR` if discarded or
    /// merged), the hot lookup of relocation processing. Until addresses are assigned it holds the section's
    /// offset in its output section's run of input sections: one table serves both, as clang-so's 836K input
    /// sections made a separate (output section, offset) table 13 MB of peak memory.
    pub sec_addr: Vec<Vec<u64>>,
    /// Per object, per section: how many bytes of padding come right before a placed input section in its output
    /// section (after the previous input section, or the previous file's block), for output sections with
    /// `pads_known`. Each section's writer zeroes its own, so a reused output needs no zeroing of the bytes that
    /// input sections cover (`write::zero_ranges`).
    pub pads: Vec<Vec<u16>>,
    /// Output address of each merge group's first byte.
    pub merge_addr: Vec<u64>,
    pub merges: Vec<MergeGroup>,
    /// Per object: the piece maps of its live merge sections, in the order of `merge_secs[f]`.
    pub piece_maps: Vec<Vec<PieceTable>>,
    /// Per object: its live merge sections as (section, merge group), in section order. Sparse: two dense
    /// per-section tables cost clang-so 7 MB, and most sections are not merged.
    pub merge_secs: Vec<Vec<(SecIdx, u32)>>,
    pub eh_records: EhRecords,
    /// CIEs dropped as duplicates: (file, section, input offset) → the kept identical CIE's.
    pub cie_redirect: HashMap<(FileId, SecIdx, u64), (FileId, SecIdx, u64)>,
    pub aux_index: Vec<u32>,
    pub aux: Vec<Aux>,
    pub aux_ids: Vec<SymId>,
    /// The local-dynamic module pair's first GOT slot, or NONE.
    pub tlsld: u32,
    pub dynsyms: Vec<DynSymbol>,
    pub dynstr: Vec<u8>,
    pub verneed: Verneed,
    pub dyn_strings: HashMap<Vec<u8>, u32>,
    /// `.dynamic`'s entries.
    pub dynamic: crate::synthetic::dynamic::Dynamic,
    pub segments: Vec<Segment>,
    pub addrs: Vec<u64>,
    pub tls_start: u64,
    pub tls_end: u64,
    pub tls_align: u64,
    pub dyn_reloc_base: RelocBases,
    /// The input sections' dynamic relocations a script places apart (`Synth::RelaNamed`).
    pub named_reloc_base: RelocBases,
    pub irel_base: RelocBases,
    /// `.relr.dyn`'s entries (`-z pack-relative-relocs`).
    pub relr: Vec<u64>,
    /// The GOT and PLT slots and dynamic relocations, counted: the family's sizes and relocation areas.
    pub got_plt: crate::synthetic::got_plt::Counts,
    pub commons: Vec<(SymId, u64)>,
    /// What `.symtab` holds.
    pub symtab: crate::synthetic::symtab::Contents,
    /// Whether a symbol table holds an IFUNC (`.dynsym`, `.symtab`) or a unique global (`.symtab`): the ELF
    /// header then names the GNU OS ABI, as GNU ld's does.
    pub gnu_osabi: bool,
    pub file_size: u64,
    pub shoff: u64,
    pub entry: u64,
    pub is_dynamic: bool,
    /// The program interpreter's path (`synthetic::interp`).
    pub interp: Option<Vec<u8>>,
    /// The build id's length (`synthetic::notes`).
    pub build_id_size: u64,
    pub linker_syms: HashMap<SymId, u64>,
    /// The output sections (`NONE`: absolute) of the symbols scripts and `--defsym` assign, by GNU ld's rules for
    /// the section of an expression.
    pub linker_sections: HashMap<SymId, OsecId>,
    /// With a script: its symbols, deferred assignments, data commands and fills.
    pub script: script::ScriptExtras,
    /// Writing the output cannot fail (`scan::WriteCheck` holds for this layout), so it may overwrite the
    /// existing output file.
    pub writes_proven: bool,
    /// `--emit-relocs`: the relocations to keep and their `.rela` sections.
    pub emit_relocs: Option<emit_relocs::Plan>,
}

impl Layout {
    pub fn synth_sec(&self, s: Synth) -> Option<&OutputSection> {
        self.synth.get(s).map(|i| &self.osecs[i.index()])
    }
    /// The address of a part some output section has (copies, commons).
    pub fn part_addr(&self, p: &Part) -> Option<u64> {
        (self.osecs.iter())
            .find(|o| o.parts.contains(p))
            .map(|o| o.addr + o.part_offset(p))
    }
    /// Where a linker-made section's contents are.
    pub fn synth_part(&self, s: Synth) -> Option<SynthPart> {
        let o = self.synth_sec(s)?;
        let at = self.synth.offset(s);
        Some(SynthPart {
            addr: o.addr + at,
            offset: o.offset + at,
            size: self.synth.size(s),
            shndx: o.shndx,
        })
    }
    /// The address of a linker-made section's contents (0 without one).
    #[inline]
    pub fn synth_addr(&self, s: Synth) -> u64 {
        self.synth
            .get(s)
            .map_or(0, |i| self.osecs[i.index()].addr + self.synth.offset(s))
    }
    pub fn aux_of(&self, id: SymId) -> Option<&Aux> {
        let i = *self.aux_index.get(id.index())?;
        (i != NONE).then(|| &self.aux[i as usize])
    }
    pub fn got_slot_addr(&self, slot: u32) -> u64 {
        self.synth_addr(Synth::Got) + slot as u64 * 8
    }
    /// Merge section `s` of object `f`: its index in `piece_maps[f]` and its merge group.
    #[inline]
    pub fn merge_slot(&self, f: FileId, s: SecIdx) -> Option<(usize, u32)> {
        let v = &self.merge_secs[f.index()];
        let k = v.binary_search_by_key(&s, |&(s, _)| s).ok()?;
        Some((k, v[k].1))
    }
    /// Starts loading the piece table of merge section `s` of object `f` into the cache, for a loop about to look
    /// up many offsets of it in no particular order (the debug sections' relocations into `.debug_str`).
    pub fn prefetch_pieces(&self, f: FileId, s: SecIdx) {
        if let Some((slot, _)) = self.merge_slot(f, s) {
            let t = &self.piece_maps[f.index()][slot];
            crate::elf::prefetch_slice(&t.blocks);
            crate::elf::prefetch_slice(&t.maps);
        }
    }
    /// The output section and the offset in it of input section `s` of object `f`, if it was placed whole.
    pub fn place(&self, f: FileId, s: SecIdx) -> Option<(OsecId, u64)> {
        let (f, s) = (f.index(), s.index());
        let osec = *self.place_osec[f].get(s)?;
        let o = self.osecs.get(osec.index())?;
        Some((osec, self.sec_addr[f][s] - o.addr))
    }
}

/// Where each input section's dynamic relocations start in their area (an index in entries), for the few
/// sections that emit any: per file, (section, first entry) in section order, from a prefix sum over the scan's
/// sparse counts (a dense table of every input section was 10 ms of page faults on clang-so).
pub struct RelocBases {
    /// Per file: (section, count, first entry).
    per_file: Vec<Vec<(SecIdx, u32, u64)>>,
    /// One past the last entry.
    pub end: u64,
}

impl RelocBases {
    /// Bases for per-file (section, count) lists, the first entry at `start`, in the order of the sections' places
    /// (`place_osec` and `sec_off`; output sections in their order): their addresses' order, so that `.rela.dyn`'s
    /// sort (`rela::sort_combined`) finds its relative relocations in order but for the GOT's.
    fn in_place_order(
        counts: &[Vec<(SecIdx, u32)>],
        start: u64,
        (place_osec, sec_off): (&[Vec<OsecId>], &[Vec<u64>]),
    ) -> RelocBases {
        RelocBases::sorted_by(counts, start, |f, s| {
            let osec = place_osec[f.index()]
                .get(s.index())
                .map_or(u32::MAX, |o| o.0);
            (
                osec,
                sec_off[f.index()].get(s.index()).copied().unwrap_or(0),
            )
        })
    }

    /// Bases for per-file (section, count) lists, the first entry at `start`, in the order of `key` (file and
    /// section), then of the files.
    fn sorted_by(
        counts: &[Vec<(SecIdx, u32)>],
        start: u64,
        key: impl Fn(FileId, SecIdx) -> (u32, u64) + Sync,
    ) -> RelocBases {
        let mut order: Vec<(u32, u64, u32, u32)> = (counts.iter().enumerate())
            .flat_map(|(f, c)| {
                let key = &key;
                c.iter().enumerate().map(move |(k, &(s, _))| {
                    let (a, b) = key(FileId::new(f), s);
                    (a, b, f as u32, k as u32)
                })
            })
            .collect();
        rayon::slice::ParallelSliceMut::par_sort_unstable(&mut order[..]);
        let mut per_file: Vec<Vec<(SecIdx, u32, u64)>> = counts
            .iter()
            .map(|c| c.iter().map(|&(s, n)| (s, n, 0)).collect())
            .collect();
        let mut next = start;
        for &(_, _, f, k) in &order {
            let e = &mut per_file[f as usize][k as usize];
            e.2 = next;
            next += e.1 as u64;
        }
        RelocBases {
            per_file,
            end: next,
        }
    }

    /// Bases for per-file (section, count) lists, the first entry at `start`.
    fn new(counts: &[Vec<(SecIdx, u32)>], start: u64) -> RelocBases {
        let mut next = start;
        let per_file = counts
            .iter()
            .map(|c| {
                c.iter()
                    .map(|&(s, n)| {
                        let b = next;
                        next += n as u64;
                        (s, n, b)
                    })
                    .collect()
            })
            .collect();
        RelocBases {
            per_file,
            end: next,
        }
    }
    /// The first entry of section `s` of file `f` and its number of entries, if it emits any.
    pub fn get(&self, f: FileId, s: SecIdx) -> Option<(u64, u64)> {
        // No list for the file where no section has entries (an empty `RelocBases` has none at all).
        let v = self.per_file.get(f.index())?;
        let k = v.binary_search_by_key(&s, |&(s, _, _)| s).ok()?;
        Some((v[k].2, v[k].1 as u64))
    }
}

/// The inputs every layout pass reads, and the kind of output.
#[derive(Clone, Copy)]
pub struct Cx<'a> {
    pub config: &'a Config,
    pub res: &'a Resolved,
    pub space: &'a SymbolSpace,
    pub live: &'a Liveness,
    pub scan: &'a Scan,
    /// Position-independent output (a shared object or a PIE).
    pub pic: bool,
    /// Some shared library is needed.
    pub any_shared: bool,
    /// The output has a dynamic section.
    pub is_dynamic: bool,
    /// The output's program properties, merged from the inputs' (`synthetic::property`).
    pub gnu_props: &'a [(u32, u32)],
    /// The PLT's geometry, with landing pads where the properties ask for indirect branch tracking.
    pub plt: PltShape,
}

/// Lays the output out: the passes in order, each in its own module with its own result, which `Layout` is
/// made of.
pub fn layout<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    live: &Liveness,
    scan: &Scan,
) -> Result<Layout> {
    let order = &res.order;
    let pic = config.kind != OutputKind::Exec;
    let any_shared = res.shared_needed.iter().any(|&n| n);
    let linked: Vec<&crate::parse::ObjectFile> = (res.objects.iter().zip(&res.object_live))
        .filter_map(|(o, &live)| live.then_some(o))
        .collect();
    let gnu_props = crate::synthetic::property::merge::<A>(config, &linked)?;
    drop(linked);
    let plt = A::plt_shape(A::plt_landing_pads(&gnu_props));
    let cx = Cx {
        config,
        res,
        space,
        live,
        scan,
        pic,
        any_shared,
        is_dynamic: (pic || any_shared) && !script::discards_dynamic(config, scan, any_shared)?,
        gnu_props: &gnu_props,
        plt,
    };
    let span = crate::timing::span;
    let ((mut osecs, mut map), default_layout) = output_sections::with_default_layout::<A>(&cx)?;
    script::check_linker_made_places(config, &osecs, &map)?;
    script::check_crossrefs(config, res, &osecs, &map)?;
    let t = span("merge sections, split .eh_frame");
    let tails = config.shares_string_tails();
    let (merges, merge_secs, piece_maps) =
        crate::merge::build_merges(res, &map.live_merge, &map.sec_osec, tails)?;
    let (eh_records, cie_redirect) = {
        let _t = span("split .eh_frame");
        let mut recs = eh_frame::split_eh_frames::<A>(res, live)?;
        let redirect = eh_frame::dedup_cies(res, order, &mut recs);
        (recs, redirect)
    };
    drop(t);
    let sec_order = order::section_order(config, (res, order), live, (&osecs, &map.sec_osec))?;
    let mut place = {
        let _t = span("place input sections");
        let script = config.sections.as_deref().map(|sc| (sc, &live.script[..]));
        place::place_inputs(
            (res, order),
            &mut osecs,
            &map,
            &eh_records,
            &merges,
            script,
            sec_order.as_ref(),
        )
    };
    drop(sec_order);
    let t = span("GOT, PLT, dynamic symbols");
    let mut slots = {
        let _t = span("GOT and PLT slots");
        slots::number_slots_of_symbols(&cx, &mut osecs, &map, &place)
    };
    let dynamic = dynsym::dynamic_symbols(&cx, &mut slots);
    drop(t);
    let (got_plt, symtab, headers, emit_relocs) = {
        let _t = span("symbol table sizes");
        // `--icf`: the symbols of folded sections stay, in their leaders.
        let with_folded;
        let listed = match live.folded.is_empty() {
            true => &live.live,
            false => {
                with_folded = live_or_folded(live);
                &with_folded
            }
        };
        let empty = sizes::empty_of_inputs(config, &osecs, &place);
        let mut symtab = crate::synthetic::symtab::contents(
            config,
            res,
            order,
            (listed, (&map.sec_osec, &empty)),
            (&slots.aux_index, &slots.aux),
            config.kind == OutputKind::Shared || (config.export_dynamic && cx.is_dynamic),
        );
        let emit_relocs = match config.emit_relocs {
            true => Some(emit_relocs::plan(
                &cx,
                &mut osecs,
                &map,
                &place,
                &slots.aux_index,
                &mut symtab,
            )?),
            false => None,
        };
        let got_plt = sizes::got_plt_counts(&cx, &slots);
        sizes::synthetic_sizes::<A>(
            &cx,
            &mut map,
            &slots,
            &got_plt,
            &dynamic,
            &symtab,
            &eh_records,
        );
        // Once the linker-made sections have their sizes: an empty one is no orphan (GNU ld's `.iplt` without
        // IFUNCs is none).
        script::report_orphans(config, res, live, (&osecs, &map))?;
        let headers =
            sizes::section_headers(&cx, &mut osecs, &mut map, &place, &merges, &slots, &dynamic);
        if let Some(plan) = &emit_relocs {
            emit_relocs::number_sections(
                plan,
                &mut osecs,
                &headers.keep,
                &mut map.synth,
                &mut symtab,
            );
        }
        (got_plt, symtab, headers, emit_relocs)
    };
    let segs = {
        let _t = span("addresses");
        segments::assign_segments::<A>(
            &cx,
            &mut osecs,
            &map,
            &headers,
            &mut place,
            (&slots.relr_got, &merges),
            default_layout.as_ref(),
        )?
    };
    let mut lay = Layout {
        osecs,
        plt: cx.plt,
        gnu_props: cx.gnu_props.to_vec(),
        synth: segs.synth,
        place_osec: place.place_osec,
        sec_addr: place.sec_off,
        pads: place.pads,
        merge_addr: Vec::new(),
        merges,
        piece_maps,
        merge_secs,
        eh_records,
        cie_redirect,
        aux_index: slots.aux_index,
        aux: slots.aux,
        aux_ids: slots.aux_ids,
        tlsld: slots.tlsld,
        dynsyms: dynamic.dynsyms,
        gnu_osabi: dynamic.ifunc || symtab.gnu_ext,
        dynstr: dynamic.dynstr,
        verneed: dynamic.verneed,
        dyn_strings: dynamic.dyn_strings,
        dynamic: headers.dynamic,
        segments: segs.segments,
        addrs: Vec::new(),
        tls_start: segs.tls_start,
        tls_end: segs.tls_end,
        tls_align: segs.tls_align,
        dyn_reloc_base: slots.dyn_reloc_base,
        named_reloc_base: slots.named_reloc_base,
        irel_base: slots.irel_base,
        relr: segs.relr,
        got_plt,
        commons: slots.commons,
        symtab,
        file_size: segs.file_size,
        shoff: segs.shoff,
        entry: 0,
        is_dynamic: cx.is_dynamic,
        interp: map.interp,
        build_id_size: map.build_id_size,
        linker_syms: HashMap::default(),
        linker_sections: HashMap::default(),
        script: segs.script,
        writes_proven: false,
        emit_relocs,
    };
    // `--icf`: a folded section is where its leader is (before the offsets become addresses), so its symbols and
    // the relocations against it (debug information's too) resolve into the leader.
    for &(f, s, lf, ls) in &live.folded {
        lay.place_osec[f.index()][s.index()] = lay.place_osec[lf.index()][ls.index()];
        lay.sec_addr[f.index()][s.index()] = lay.sec_addr[lf.index()][ls.index()];
    }
    {
        let _t = span("symbol addresses");
        symbols::assign_addresses(config, res, space, &mut lay)?;
    }
    lay.writes_proven = scan
        .write_check
        .as_ref()
        .is_some_and(|c| c.holds(A::CHECKED_REACH, &lay.segments, &lay.addrs));
    Ok(lay)
}

/// Places the non-allocated sections again, from where the first of them starts, and the section header table
/// after them: once `write` has changed their sizes (compressed debug sections), which moves nothing allocated.
pub fn place_nonalloc_again(lay: &mut Layout) -> Result<()> {
    let keep: Vec<bool> = lay.osecs.iter().map(|o| o.shndx != 0).collect();
    let first = (lay.osecs.iter().zip(&keep)).find(|(o, k)| **k && !o.is_alloc());
    let Some(start) = first.map(|(o, _)| o.offset) else {
        return Ok(());
    };
    let headers = lay.file_size - lay.shoff;
    let end = segments::place_nonalloc(&mut lay.osecs, &keep, start)?;
    lay.shoff = crate::elf::align_up(end, 8);
    lay.file_size = lay.shoff + headers;
    Ok(())
}

/// Per object, per section: live, or folded into a live section by `--icf`.
fn live_or_folded(live: &Liveness) -> Vec<Vec<bool>> {
    let mut kept = live.live.clone();
    for &(f, s, _, _) in &live.folded {
        kept[f.index()][s.index()] = true;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::rules::output_name;
    use super::slots::merge_sorted;

    #[test]
    fn merged_ids_are_sorted_and_unique() {
        assert_eq!(
            merge_sorted(&[1, 4, 9], &[2, 4, 10, 11]),
            [1, 2, 4, 9, 10, 11]
        );
        assert_eq!(merge_sorted(&[], &[3, 5]), [3, 5]);
        assert_eq!(merge_sorted(&[3, 5], &[]), [3, 5]);
        assert_eq!(merge_sorted(&[7], &[7]), [7]);
    }

    #[test]
    fn output_section_names() {
        for (input, out) in [
            (&b".text.main"[..], &b".text"[..]),
            (b".text", b".text"),
            (b".textual", b".textual"),
            (b".data.rel.ro.local", b".data.rel.ro"),
            (b".data.x", b".data"),
            (b".tdata.v", b".tdata"),
            (b".tbss", b".tbss"),
            (b".rodata.str1.1", b".rodata"),
            (b".lrodata.big", b".lrodata"),
            (b".init_array.00100", b".init_array"),
            (b".debug_info", b".debug_info"),
            (
                b"__patchable_function_entries",
                b"__patchable_function_entries",
            ),
            (b"", b""),
        ] {
            assert_eq!(
                output_name(input),
                out,
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
