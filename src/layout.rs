//! Pass 7: layout.
//!
//! Input: resolution, liveness and scan results. Output: [`Layout`]: the output sections in order with their
//! addresses and file offsets, the place of every live input section (prefix sums over per-file block sizes, so
//! files are placed in parallel and in input order), merged-string pieces, `.eh_frame` records, GOT/PLT slots,
//! the dynamic symbol table, and the address of every symbol.

use crate::arch::Arch;
use crate::args::{Config, HashStyle, OutputKind};
use crate::diag::{Errors, Result};
use crate::elf::{self, LE, align_up};
use crate::gc::{Liveness, is_c_identifier};
use crate::parse::{Name, SectionKind};
use crate::resolve::{Def, Resolved};
use crate::scan::{self, Scan};
use crate::symbols::{SymProps, SymbolSpace, Target};
use object::elf as E;
use rayon::prelude::*;
// Fx: these maps are keyed by section names and small integers on hot per-section paths; no untrusted-input DoS
// concern for a linker, and iteration order is not used for output.
use rustc_hash::FxHashMap as HashMap;

pub const NONE: u32 = u32::MAX;
/// `Layout::sec_addr` of an input section that has no place of its own.
pub const NO_ADDR: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Synth {
    Interp,
    BuildId,
    Hash,
    GnuHash,
    Dynsym,
    Dynstr,
    Versym,
    Verdef,
    Verneed,
    RelaDyn,
    RelaPlt,
    RelaIplt,
    RelrDyn,
    Plt,
    Iplt,
    Got,
    GotPlt,
    Dynamic,
    EhFrameHdr,
    Symtab,
    Strtab,
    Shstrtab,
}

impl Synth {
    const COUNT: usize = Synth::Shstrtab as usize + 1;
}

/// The output section of each linker-made section (`NONE` where there is none): an array, as the writer asks for
/// `.got` and `.plt` addresses per relocation (a hash lookup there was 1.4% of clang-so's profile).
#[derive(Clone, Copy, Debug)]
pub struct SynthMap([u32; Synth::COUNT]);

impl Default for SynthMap {
    fn default() -> Self {
        SynthMap([NONE; Synth::COUNT])
    }
}

impl std::ops::Index<Synth> for SynthMap {
    type Output = u32;
    /// The output section of a linker-made section the layout has made.
    fn index(&self, s: Synth) -> &u32 {
        let i = &self.0[s as usize];
        assert!(*i != NONE, "no {s:?} section");
        i
    }
}

impl SynthMap {
    #[inline]
    pub fn get(&self, s: Synth) -> Option<u32> {
        let i = self.0[s as usize];
        (i != NONE).then_some(i)
    }
    fn insert(&mut self, s: Synth, i: u32) {
        self.0[s as usize] = i;
    }
    /// The output sections of the linker-made sections present, but for `skip`'s.
    pub fn sections_but(&self, skip: Synth) -> impl Iterator<Item = u32> + '_ {
        (self.0.iter().enumerate())
            .filter(move |&(k, &i)| k != skip as usize && i != NONE)
            .map(|(_, &i)| i)
    }
    /// The same sections, renumbered.
    fn remap(&self, to: &[u32]) -> SynthMap {
        SynthMap(
            self.0
                .map(|i| if i == NONE { NONE } else { to[i as usize] }),
        )
    }
}

/// What fills an output section, in order.
#[derive(Clone, Debug)]
pub enum Part {
    /// The input sections of every file mapped here, file blocks in input order.
    Inputs,
    /// Input sections in a given order (`.init_array.NNNNN` priorities), placed by `places`.
    Sorted,
    Merged(u32),
    Commons,
    CopyRel,
    /// A linker-made section's contents.
    Synthetic,
}

pub struct OutputSection {
    pub name: Vec<u8>,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
    pub parts: Vec<Part>,
    pub part_offsets: Vec<u64>,
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
            addr: 0,
            offset: 0,
            size: 0,
            shndx: 0,
            inputs_size: 0,
            pads_known: false,
        }
    }
    pub fn is_alloc(&self) -> bool {
        self.flags & E::SHF_ALLOC as u64 != 0
    }
    pub fn is_nobits(&self) -> bool {
        self.sh_type == E::SHT_NOBITS
    }
    pub fn is_tls(&self) -> bool {
        self.flags & E::SHF_TLS as u64 != 0
    }
    pub fn part_offset(&self, p: &Part) -> u64 {
        let i = self
            .parts
            .iter()
            .position(|q| std::mem::discriminant(q) == std::mem::discriminant(p))
            .unwrap_or(0);
        self.part_offsets.get(i).copied().unwrap_or(0)
    }
}

/// A deduplicated `SHF_MERGE` group: all input pieces with the same output section, entry size and alignment.
pub struct MergeGroup {
    pub osec: u32,
    pub align: u64,
    pub entsize: u64,
    /// The distinct pieces, by hash shard (`intern::SHARDS` of them, one after the other in the output).
    pub shards: Vec<MergeShard>,
    pub size: u64,
}

/// One hash shard of a merge group: where it starts in the group, and its distinct pieces with their offsets from
/// that start, in first-occurrence order.
pub struct MergeShard {
    pub start: u64,
    pub pieces: Vec<Name>,
    pub offsets: Vec<u32>,
}

/// One piece of an input merge section: its offset in the input and in the merge group.
#[derive(Clone, Copy)]
pub struct PieceMap {
    pub in_off: u64,
    pub out_off: u64,
}

/// The pieces of one input merge section, with a block index for lookups by input offset: `blocks[b]` is the
/// last piece starting at or before byte `b * PIECE_BLOCK`, so a lookup scans a piece or two instead of a binary
/// search (debug info makes millions of them, in no useful order).
#[derive(Clone, Default)]
pub struct PieceTable {
    pub maps: Vec<PieceMap>,
    pub blocks: Vec<u32>,
}

pub const PIECE_BLOCK: u64 = 64;

impl PieceTable {
    pub fn new(maps: Vec<PieceMap>, size: u64) -> PieceTable {
        let nblocks = size.div_ceil(PIECE_BLOCK) as usize;
        let mut blocks = Vec::with_capacity(nblocks);
        let mut k = 0usize;
        for b in 0..nblocks as u64 {
            while k + 1 < maps.len() && maps[k + 1].in_off <= b * PIECE_BLOCK {
                k += 1;
            }
            blocks.push(k as u32);
        }
        PieceTable { maps, blocks }
    }

    /// The index of the piece holding input offset `off`.
    #[inline]
    pub fn find(&self, off: u64) -> Option<usize> {
        let mut k = *self.blocks.get((off / PIECE_BLOCK) as usize)? as usize;
        if self.maps.get(k)?.in_off > off {
            return None;
        }
        while k + 1 < self.maps.len() && self.maps[k + 1].in_off <= off {
            k += 1;
        }
        Some(k)
    }
}

/// The `.eh_frame` records of every live `.eh_frame` input section, per object as (section, records): most
/// sections are not `.eh_frame`, and an empty list per input section cost clang-so 20 MB.
#[derive(Default)]
pub struct EhRecords(pub Vec<Vec<(u32, Vec<EhRecord>)>>);

impl EhRecords {
    /// The records of section `s` of object `f` (empty if it has none).
    pub fn get(&self, f: usize, s: usize) -> &[EhRecord] {
        self.find(f, s).unwrap_or(&[])
    }
    /// The records of section `s` of object `f`, if it is a live `.eh_frame` (every one has an entry, possibly
    /// empty).
    pub fn find(&self, f: usize, s: usize) -> Option<&[EhRecord]> {
        self.0[f]
            .iter()
            .find(|(k, _)| *k as usize == s)
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

#[derive(Clone, Copy, Debug, Default)]
pub struct Aux {
    pub got: u32,
    pub gottp: u32,
    pub plt: u32,
    pub iplt: u32,
    pub dynsym: u32,
    pub copy_off: u64,
    /// Data copied into `.bss` by an `R_X86_64_COPY`.
    pub copied: bool,
    /// The PLT entry is the function's address (address taken from non-PIC code).
    pub canonical: bool,
    /// Some relocation names the symbol through a non-weak symbol-table entry.
    pub strong_ref: bool,
    /// The slot an IFUNC stub jumps through (IRELATIVE), when `got` holds the stub's own address instead: in
    /// position-dependent output the stub is the function's one canonical address, GOT loads included.
    pub igot: u32,
    /// First of two GOT slots: general-dynamic (module id, offset) pair, and TLS descriptor (shared objects).
    pub tlsgd: u32,
    pub tlsdesc: u32,
}

pub struct Segment {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

#[derive(Clone, Copy)]
pub struct DynSymbol {
    pub id: u32,
    pub name: &'static [u8],
    /// Offset of the name in `.dynstr`.
    pub name_off: u32,
    /// `.gnu.hash` hash of the name (set for hashed entries).
    pub gnu_hash: u32,
    /// Version index for `.gnu.version`.
    pub version: u16,
    /// Defined in the output (a section or absolute address).
    pub defined: bool,
    /// In the hash tables, so the dynamic loader can bind other modules' references to it: every defined
    /// symbol, and an executable's imported functions whose canonical address is their PLT entry.
    pub hashed: bool,
}

/// (soname offset, [(version name, version index, name offset)]) per needed library with versions.
pub type Verneed = Vec<(usize, Vec<(&'static [u8], u16, u32)>)>;

pub struct Layout {
    pub osecs: Vec<OutputSection>,
    pub synth: SynthMap,
    /// Per object, per section: the output section of an input section placed whole (`NONE` for a discarded or
    /// merged one).
    pub place_osec: Vec<Vec<u32>>,
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
    pub merge_secs: Vec<Vec<(u32, u32)>>,
    pub eh_records: EhRecords,
    /// CIEs dropped as duplicates: (file, section, input offset) → the kept identical CIE's.
    pub cie_redirect: HashMap<(u32, u32, u64), (u32, u32, u64)>,
    pub aux_index: Vec<u32>,
    pub aux: Vec<Aux>,
    pub aux_ids: Vec<u32>,
    /// The local-dynamic module pair's first GOT slot, or NONE.
    pub tlsld: u32,
    pub num_plt: u32,
    pub dynsyms: Vec<DynSymbol>,
    pub dynstr: Vec<u8>,
    pub needed: Vec<u32>,
    pub verneed: Verneed,
    pub dyn_strings: HashMap<Vec<u8>, u32>,
    pub dynamic_entries: usize,
    pub segments: Vec<Segment>,
    pub addrs: Vec<u64>,
    pub tls_start: u64,
    pub tls_end: u64,
    pub tls_align: u64,
    pub dyn_reloc_base: RelocBases,
    pub irel_base: RelocBases,
    /// `.relr.dyn`'s entries (`-z pack-relative-relocs`).
    pub relr: Vec<u64>,
    pub got_dyn_relocs: u64,
    pub copy_relocs: u64,
    pub sec_dyn_relocs: u64,
    pub commons: Vec<(u32, u64)>,
    pub symtab_counts: Vec<(u32, u32, u64)>,
    /// Per file, bit `i` set if its symbol `i` goes in `.symtab`.
    pub symtab_members: Vec<Vec<u64>>,
    /// Whether a symbol table holds an IFUNC (`.dynsym`, `.symtab`) or a unique global (`.symtab`): the ELF
    /// header then names the GNU OS ABI, as GNU ld's does.
    pub gnu_osabi: bool,
    pub symtab_extra: Vec<u32>,
    pub shstrtab: Vec<u8>,
    pub file_size: u64,
    pub shoff: u64,
    pub entry: u64,
    pub is_dynamic: bool,
    pub interp: Option<Vec<u8>>,
    pub build_id_size: u64,
    pub linker_syms: HashMap<u32, u64>,
    /// Writing the output cannot fail (`scan::WriteCheck` holds for this layout), so it may overwrite the
    /// existing output file.
    pub writes_proven: bool,
}

impl Layout {
    pub fn synth_sec(&self, s: Synth) -> Option<&OutputSection> {
        self.synth.get(s).map(|i| &self.osecs[i as usize])
    }
    pub fn synth_addr(&self, s: Synth) -> u64 {
        self.synth_sec(s).map_or(0, |o| o.addr)
    }
    pub fn aux_of(&self, id: u32) -> Option<&Aux> {
        let i = *self.aux_index.get(id as usize)?;
        (i != NONE).then(|| &self.aux[i as usize])
    }
    pub fn got_slot_addr(&self, slot: u32) -> u64 {
        self.synth_addr(Synth::Got) + slot as u64 * 8
    }
    /// Merge section `s` of object `f`: its index in `piece_maps[f]` and its merge group.
    #[inline]
    pub fn merge_slot(&self, f: usize, s: usize) -> Option<(usize, u32)> {
        let v = &self.merge_secs[f];
        let k = v.binary_search_by_key(&(s as u32), |&(s, _)| s).ok()?;
        Some((k, v[k].1))
    }
    /// Starts loading the piece table of merge section `s` of object `f` into the cache, for a loop about to look
    /// up many offsets of it in no particular order (the debug sections' relocations into `.debug_str`).
    pub fn prefetch_pieces(&self, f: usize, s: usize) {
        if let Some((slot, _)) = self.merge_slot(f, s) {
            let t = &self.piece_maps[f][slot];
            crate::elf::prefetch_slice(&t.blocks);
            crate::elf::prefetch_slice(&t.maps);
        }
    }
    /// The output section and the offset in it of input section `s` of object `f`, if it was placed whole.
    pub fn place(&self, f: usize, s: usize) -> Option<(u32, u64)> {
        let osec = *self.place_osec[f].get(s)?;
        let o = self.osecs.get(osec as usize)?;
        Some((osec, self.sec_addr[f][s] - o.addr))
    }
}

/// Where each input section's dynamic relocations start in their area (an index in entries), for the few
/// sections that emit any: per file, (section, first entry) in section order, from a prefix sum over the scan's
/// sparse counts (a dense table of every input section was 10 ms of page faults on clang-so).
pub struct RelocBases {
    /// Per file: (section, count, first entry).
    per_file: Vec<Vec<(u32, u32, u64)>>,
    /// One past the last entry.
    pub end: u64,
}

impl RelocBases {
    /// Bases for per-file (section, count) lists, the first entry at `start`.
    fn new(counts: &[Vec<(u32, u32)>], start: u64) -> RelocBases {
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
    pub fn get(&self, f: usize, s: usize) -> Option<(u64, u64)> {
        let v = &self.per_file[f];
        let k = v.binary_search_by_key(&(s as u32), |&(s, _, _)| s).ok()?;
        Some((v[k].2, v[k].1 as u64))
    }
}

fn output_name(name: &[u8]) -> &[u8] {
    // Candidates by the character after the dot: called for every input section by several passes, most of
    // them debug or other sections that match none of the prefixes, which a linear scan checked 17 times.
    let candidates: &[&'static [u8]] = match name.get(1) {
        Some(b't') => &[b".text", b".tdata", b".tbss"],
        Some(b'r') => &[b".rodata"],
        Some(b'd') => &[b".data.rel.ro", b".data", b".dtors"],
        Some(b'b') => &[b".bss"],
        Some(b'g') => &[b".gcc_except_table"],
        Some(b'i') => &[b".init_array"],
        Some(b'f') => &[b".fini_array"],
        Some(b'p') => &[b".preinit_array"],
        Some(b'c') => &[b".ctors"],
        Some(b'l') => &[b".ldata", b".lbss", b".lrodata"],
        Some(b's') => &[b".sdata"],
        _ => &[],
    };
    if name.first() == Some(&b'.') {
        for &p in candidates {
            if crate::parse::in_section_family(name, p) {
                return p;
            }
        }
    }
    name
}

/// The name of version 1 in `.gnu.version_d`: the soname, or else the output file's name.
pub fn version_base_name(config: &Config) -> String {
    config.soname.clone().unwrap_or_else(|| {
        config
            .output
            .file_name()
            .map_or_else(|| "a.out".into(), |n| n.to_string_lossy().into_owned())
    })
}

/// Output section order: the GNU ld / lld default for x86-64 with separate code.
fn rank(name: &[u8], sh_type: u32, flags: u64) -> u32 {
    let alloc = flags & E::SHF_ALLOC as u64 != 0;
    let write = flags & E::SHF_WRITE as u64 != 0;
    let exec = flags & E::SHF_EXECINSTR as u64 != 0;
    if !alloc {
        return match name {
            b".symtab" => 2000,
            b".strtab" => 2001,
            b".shstrtab" => 2002,
            b".comment" => 1000,
            _ => 1100,
        };
    }
    match name {
        b".interp" => 10,
        b".note.gnu.build-id" => 19,
        _ if sh_type == E::SHT_NOTE => 20,
        b".hash" => 30,
        b".gnu.hash" => 31,
        b".dynsym" => 32,
        b".dynstr" => 33,
        b".gnu.version" => 34,
        // Ties keep creation order: .gnu.version_d before .gnu.version_r.
        b".gnu.version_d" | b".gnu.version_r" => 35,
        b".rela.dyn" => 36,
        b".rela.plt" => 37,
        b".rela.iplt" => 38,
        b".relr.dyn" => 39,
        b".init" => 100,
        b".plt" => 110,
        b".iplt" => 111,
        b".text" => 120,
        b".fini" => 130,
        _ if exec => 125,
        b".rodata" => 200,
        b".eh_frame_hdr" => 220,
        b".eh_frame" => 230,
        b".gcc_except_table" => 240,
        _ if !write => 210,
        b".tdata" => 300,
        b".tbss" => 301,
        b".preinit_array" => 310,
        b".init_array" => 311,
        b".fini_array" => 312,
        b".ctors" => 313,
        b".dtors" => 314,
        b".data.rel.ro" => 320,
        b".dynamic" => 330,
        b".got" => 340,
        b".got.plt" => 400,
        b".data" => 410,
        b".bss" => 450,
        _ if sh_type == E::SHT_NOBITS => 460,
        _ => 420,
    }
}

/// Which PT_LOAD a section belongs to: 0 = read-only before code (with the headers), 1 = code, 2 = read-only
/// after code, 3 = RELRO data, 4 = writable data.
fn segment_class(r: u32) -> u32 {
    match r {
        0..100 => 0,
        100..200 => 1,
        200..300 => 2,
        300..400 => 3,
        _ => 4,
    }
}

fn init_priority(name: &[u8]) -> Option<u32> {
    for p in [
        &b".init_array."[..],
        b".fini_array.",
        b".preinit_array.",
        b".ctors.",
        b".dtors.",
    ] {
        if let Some(rest) = name.strip_prefix(p) {
            return std::str::from_utf8(rest).ok().and_then(|s| s.parse().ok());
        }
    }
    None
}

struct Builder {
    osecs: Vec<OutputSection>,
    by_name: HashMap<Vec<u8>, u32>,
    synth: SynthMap,
}

impl Builder {
    fn get_or_add(&mut self, name: &[u8], sh_type: u32, flags: u64) -> u32 {
        if let Some(&i) = self.by_name.get(name) {
            let o = &mut self.osecs[i as usize];
            // A PROGBITS input mapped into a NOBITS section (or the reverse) makes it PROGBITS.
            if o.sh_type != sh_type && sh_type != E::SHT_NOBITS {
                o.sh_type = if o.sh_type == E::SHT_NOBITS {
                    sh_type
                } else {
                    o.sh_type
                };
            }
            o.flags |= flags & !(E::SHF_MERGE as u64 | E::SHF_STRINGS as u64 | E::SHF_GROUP as u64);
            return i;
        }
        let i = self.osecs.len() as u32;
        let mut o = OutputSection::new(name, sh_type, flags & !(E::SHF_GROUP as u64));
        if flags & E::SHF_MERGE as u64 == 0 {
            o.flags &= !(E::SHF_STRINGS as u64);
        }
        self.osecs.push(o);
        self.by_name.insert(name.to_vec(), i);
        i
    }

    fn add_synth(
        &mut self,
        s: Synth,
        name: &[u8],
        sh_type: u32,
        flags: u64,
        align: u64,
        entsize: u64,
    ) -> u32 {
        let i = self.get_or_add(name, sh_type, flags);
        let o = &mut self.osecs[i as usize];
        o.align = o.align.max(align);
        o.entsize = entsize;
        o.parts.push(Part::Synthetic);
        self.synth.insert(s, i);
        i
    }
}

pub fn layout<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    live: &Liveness,
    scan: &Scan,
) -> Result<Layout> {
    let objects = &res.objects;
    let pic = config.kind != OutputKind::Exec;
    let any_shared = res.shared_needed.iter().any(|&n| n);
    let is_dynamic = pic || any_shared;
    let mut b = Builder {
        osecs: Vec::new(),
        by_name: HashMap::default(),
        synth: SynthMap::default(),
    };

    let t = crate::timing::span("output sections");
    // Output sections named by the inputs, in first-seen order (renumbered by rank below). Each live input
    // section's output section is found here once, as an index into its file's list of names, so later passes
    // neither map names nor hash them again. The live merge sections are listed on the way, for the merge pass.
    type FileNames<'a> = (Vec<(&'a [u8], u32, u64)>, Vec<u32>, Vec<u32>);
    let names_per_file: Vec<FileNames> = res.runs.map(|f| {
        let o = &objects[f];
        let mut v: Vec<(&[u8], u32, u64)> = Vec::new();
        let mut local = vec![NONE; o.sections.len()];
        let mut merge = Vec::new();
        for (s, sec) in o.secs() {
            if !live.is_live(f, s) {
                continue;
            }
            if sec.kind == SectionKind::Merge {
                merge.push(s as u32);
            }
            let n = output_name(o.sec_name(s));
            local[s] = match v.iter().position(|(m, _, _)| *m == n) {
                Some(k) => {
                    let e = &mut v[k];
                    if sec.sh_type() != E::SHT_NOBITS {
                        e.1 = sec.sh_type();
                    }
                    e.2 |= sec.flags();
                    k as u32
                }
                None => {
                    v.push((n, sec.sh_type(), sec.flags()));
                    v.len() as u32 - 1
                }
            };
        }
        (v, local, merge)
    });
    let mut file_osecs: Vec<Vec<u32>> = Vec::with_capacity(objects.len());
    for (v, _, _) in &names_per_file {
        let mut ids = Vec::with_capacity(v.len());
        for &(n, t, fl) in v {
            let t = if t == 0x70000001 { E::SHT_PROGBITS } else { t };
            ids.push(b.get_or_add(n, t, fl));
        }
        file_osecs.push(ids);
    }
    let with_inputs = b.osecs.len();
    // Commons that are still the definition (a shared library's or the linker's may have replaced one).
    let common_ids: Vec<u32> = res
        .common_defs
        .iter()
        .copied()
        .filter(|&g| is_common_def(res, g, &res.defs[g as usize]))
        .collect();
    let has_common = !common_ids.is_empty();

    // Synthetic sections.
    let interp = if is_dynamic
        && config.kind != OutputKind::Shared
        && !config.no_dynamic_linker
        && !(config.static_link && pic && !any_shared)
    {
        let path = config
            .dynamic_linker
            .clone()
            .unwrap_or_else(|| "/lib64/ld-linux-x86-64.so.2".into());
        let mut v = path.into_bytes();
        v.push(0);
        b.add_synth(
            Synth::Interp,
            b".interp",
            E::SHT_PROGBITS,
            E::SHF_ALLOC as u64,
            1,
            0,
        );
        Some(v)
    } else {
        None
    };
    let build_id_size = match &config.build_id {
        crate::args::BuildId::None => 0,
        crate::args::BuildId::Fast | crate::args::BuildId::Md5 | crate::args::BuildId::Uuid => 16,
        crate::args::BuildId::Sha1 => 20,
        crate::args::BuildId::Hex(h) => h.len() as u64,
    };
    if build_id_size > 0 {
        b.add_synth(
            Synth::BuildId,
            b".note.gnu.build-id",
            E::SHT_NOTE,
            E::SHF_ALLOC as u64,
            4,
            0,
        );
    }
    let a = E::SHF_ALLOC as u64;
    let aw = a | E::SHF_WRITE as u64;
    if is_dynamic {
        if matches!(config.hash_style, HashStyle::Sysv | HashStyle::Both) {
            b.add_synth(Synth::Hash, b".hash", E::SHT_HASH, a, 8, 4);
        }
        if matches!(config.hash_style, HashStyle::Gnu | HashStyle::Both) {
            b.add_synth(Synth::GnuHash, b".gnu.hash", E::SHT_GNU_HASH, a, 8, 0);
        }
        b.add_synth(Synth::Dynsym, b".dynsym", E::SHT_DYNSYM, a, 8, 24);
        b.add_synth(Synth::Dynstr, b".dynstr", E::SHT_STRTAB, a, 1, 0);
        b.add_synth(Synth::Versym, b".gnu.version", E::SHT_GNU_VERSYM, a, 2, 2);
        b.add_synth(Synth::Verdef, b".gnu.version_d", E::SHT_GNU_VERDEF, a, 8, 0);
        b.add_synth(
            Synth::Verneed,
            b".gnu.version_r",
            E::SHT_GNU_VERNEED,
            a,
            8,
            0,
        );
        b.add_synth(Synth::RelaDyn, b".rela.dyn", E::SHT_RELA, a, 8, 24);
        b.add_synth(
            Synth::RelaPlt,
            b".rela.plt",
            E::SHT_RELA,
            a | E::SHF_INFO_LINK as u64,
            8,
            24,
        );
        if config.pack_relative_relocs {
            b.add_synth(Synth::RelrDyn, b".relr.dyn", E::SHT_RELR, a, 8, 8);
        }
        b.add_synth(Synth::Dynamic, b".dynamic", E::SHT_DYNAMIC, aw, 8, 16);
    } else {
        b.add_synth(
            Synth::RelaIplt,
            b".rela.iplt",
            E::SHT_RELA,
            a | E::SHF_INFO_LINK as u64,
            8,
            24,
        );
    }
    let ax = a | E::SHF_EXECINSTR as u64;
    b.add_synth(Synth::Plt, b".plt", E::SHT_PROGBITS, ax, 16, 16);
    b.add_synth(Synth::Iplt, b".iplt", E::SHT_PROGBITS, ax, 16, 16);
    b.add_synth(Synth::Got, b".got", E::SHT_PROGBITS, aw, 8, 8);
    b.add_synth(Synth::GotPlt, b".got.plt", E::SHT_PROGBITS, aw, 8, 8);
    if config.eh_frame_hdr && b.by_name.contains_key(&b".eh_frame"[..]) {
        b.add_synth(
            Synth::EhFrameHdr,
            b".eh_frame_hdr",
            E::SHT_PROGBITS,
            a,
            4,
            0,
        );
    }
    if has_common || (is_dynamic && scan.flags.iter().any(|&f| f & scan::NEEDS_COPY != 0)) {
        b.get_or_add(b".bss", E::SHT_NOBITS, aw);
    }
    if !config.strip_all {
        b.add_synth(Synth::Symtab, b".symtab", E::SHT_SYMTAB, 0, 8, 24);
        b.add_synth(Synth::Strtab, b".strtab", E::SHT_STRTAB, 0, 1, 0);
    }
    b.add_synth(Synth::Shstrtab, b".shstrtab", E::SHT_STRTAB, 0, 1, 0);

    // Renumber by rank (stable: ties keep first-seen order, which follows input order).
    let mut order: Vec<u32> = (0..b.osecs.len() as u32).collect();
    order.sort_by_key(|&i| {
        let o = &b.osecs[i as usize];
        rank(&o.name, o.sh_type, o.flags)
    });
    let mut remap = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        remap[old as usize] = new as u32;
    }
    let mut osecs: Vec<OutputSection> = {
        let mut slots: Vec<Option<OutputSection>> = b.osecs.into_iter().map(Some).collect();
        order
            .iter()
            .map(|&i| slots[i as usize].take().unwrap())
            .collect()
    };
    let by_name: HashMap<Vec<u8>, u32> = b
        .by_name
        .into_iter()
        .map(|(k, v)| (k, remap[v as usize]))
        .collect();
    let synth = b.synth.remap(&remap);
    // Per file, per section: the output section (`NONE` for a dead section).
    let (sec_osec, live_merge): (Vec<Vec<u32>>, Vec<Vec<u32>>) = names_per_file
        .into_par_iter()
        .zip(file_osecs)
        .map(|((_, mut local, merge), ids)| {
            for x in local.iter_mut().filter(|x| **x != NONE) {
                *x = remap[ids[*x as usize] as usize];
            }
            (local, merge)
        })
        .unzip();
    // Output sections some input section goes to (those created for an input name come first).
    let has_inputs: Vec<bool> = {
        let mut v = vec![false; osecs.len()];
        for old in 0..with_inputs {
            v[remap[old] as usize] = true;
        }
        v
    };

    drop(t);
    let t = crate::timing::span("merge sections, split .eh_frame");
    // Merge groups and .eh_frame records.
    let (merges, merge_secs, piece_maps) = crate::merge::build_merges(res, &live_merge, &sec_osec)?;
    let (eh_records, cie_redirect) = {
        let _t = crate::timing::span("split .eh_frame");
        let mut recs = split_eh_frames(res, live)?;
        let redirect = dedup_cies(res, &mut recs);
        (recs, redirect)
    };

    drop(t);
    let t = crate::timing::span("place input sections");
    // Place input sections: per-file blocks, then prefix sums in input order.
    let sorted_names = [
        &b".init_array"[..],
        b".fini_array",
        b".preinit_array",
        b".ctors",
        b".dtors",
    ];
    // Which of `sorted_names` each output section is.
    let sorted_kind: Vec<Option<usize>> = osecs
        .iter()
        .map(|o| sorted_names.iter().position(|&n| n == &o.name[..]))
        .collect();
    // Per file: where each section goes, the padding before it in its block, the file's block (output section,
    // size, alignment) per output section, and the output sections where a padding did not fit 16 bits.
    type FileBlocks = (Vec<u32>, Vec<u64>, Vec<u16>, Vec<(u32, u64, u64)>, Vec<u32>);
    let per_file: Vec<FileBlocks> = res.runs.map(|f| {
        let o = &objects[f];
        let mut place_osec = vec![NONE; o.sections.len()];
        let mut offsets = vec![0u64; o.sections.len()];
        let mut pads = vec![0u16; o.sections.len()];
        let mut blocks: Vec<(u32, u64, u64)> = Vec::new();
        let mut wide = Vec::new();
        for (s, sec) in o.secs() {
            let osec = sec_osec[f][s];
            if osec == NONE
                || sec.kind == SectionKind::Merge
                || sorted_kind[osec as usize].is_some()
            {
                continue;
            }
            let size = if sec.kind == SectionKind::EhFrame {
                eh_block_size(eh_records.get(f, s))
            } else {
                sec.size()
            };
            let i = match blocks.iter().position(|b| b.0 == osec) {
                Some(i) => i,
                None => {
                    blocks.push((osec, 0, 1));
                    blocks.len() - 1
                }
            };
            // .eh_frame records are 4-byte multiples and must follow each other without gaps: a zero
            // word between them reads as the terminator to unwinders walking from __EH_FRAME_BEGIN__.
            let align = if sec.kind == SectionKind::EhFrame {
                sec.align().min(4)
            } else {
                sec.align()
            };
            let blk = &mut blocks[i];
            let off = align_up(blk.1, align);
            (place_osec[s], offsets[s]) = (osec, off);
            match u16::try_from(off - blk.1) {
                Ok(pad) => pads[s] = pad,
                Err(_) => wide.push(osec),
            }
            blk.1 = off + size;
            blk.2 = blk.2.max(align);
        }
        (place_osec, offsets, pads, blocks, wide)
    });
    let mut place_osec: Vec<Vec<u32>> = Vec::with_capacity(objects.len());
    let mut sec_off: Vec<Vec<u64>> = Vec::with_capacity(objects.len());
    let mut pads: Vec<Vec<u16>> = Vec::with_capacity(objects.len());
    let mut blocks: Vec<Vec<(u32, u64, u64)>> = Vec::with_capacity(objects.len());
    let mut pads_known = vec![true; osecs.len()];
    for (p, o, pad, bl, wide) in per_file {
        place_osec.push(p);
        sec_off.push(o);
        pads.push(pad);
        blocks.push(bl);
        for osec in wide {
            pads_known[osec as usize] = false;
        }
    }
    let mut cursor = vec![0u64; osecs.len()];
    // Per file, per block: (output section, offset, padding before it).
    let mut file_base: Vec<Vec<(u32, u64, u64)>> = Vec::with_capacity(objects.len());
    for bl in &blocks {
        let mut bases = Vec::with_capacity(bl.len());
        for &(osec, size, align) in bl {
            let o = &mut osecs[osec as usize];
            o.align = o.align.max(align);
            let c = align_up(cursor[osec as usize], align);
            bases.push((osec, c, c - cursor[osec as usize]));
            cursor[osec as usize] = c + size;
        }
        file_base.push(bases);
    }
    // Each block's base added to its sections' offsets, and the padding before the block to its first section's.
    let mut offs_pads: Vec<(&mut Vec<u64>, &mut Vec<u16>)> =
        sec_off.iter_mut().zip(pads.iter_mut()).collect();
    let wide: Vec<Vec<u32>> = res.runs.map_mut(&mut offs_pads, |f, (offs, pads)| {
        let (p, bases) = (&place_osec[f], &file_base[f]);
        let mut first = vec![true; bases.len()];
        let mut wide = Vec::new();
        for ((off, pad), &osec) in offs.iter_mut().zip(pads.iter_mut()).zip(p) {
            if osec == NONE {
                continue;
            }
            if let Some(k) = bases.iter().position(|b| b.0 == osec) {
                let (_, base, gap) = bases[k];
                *off += base;
                if std::mem::take(&mut first[k]) {
                    match u16::try_from(*pad as u64 + gap) {
                        Ok(v) => *pad = v,
                        Err(_) => wide.push(osec),
                    }
                }
            }
        }
        wide
    });
    drop(offs_pads);
    for osec in wide.into_iter().flatten() {
        pads_known[osec as usize] = false;
    }
    for (i, o) in osecs.iter_mut().enumerate() {
        if cursor[i] > 0 || has_inputs[i] {
            o.parts.insert(0, Part::Inputs);
            o.pads_known = pads_known[i];
        }
    }
    // Sorted init/fini arrays: priority first, then input order; unnumbered sections last. Found in one
    // parallel pass (a serial pass per array name cost 5 walks over every section).
    let sorted_inputs: Vec<(usize, u32, u32, u32)> = res.runs.flat_map(|f| {
        let o = &objects[f];
        let sec_osec = &sec_osec[f];
        let sorted_kind = &sorted_kind;
        (0..o.sections.len()).filter_map(move |s| {
            let osec = sec_osec[s];
            if osec == NONE {
                return None;
            }
            let k = sorted_kind[osec as usize]?;
            Some((
                k,
                init_priority(o.sec_name(s)).unwrap_or(65536),
                f as u32,
                s as u32,
            ))
        })
    });
    for (k, name) in sorted_names.into_iter().enumerate() {
        let Some(&osec) = by_name.get(name) else {
            continue;
        };
        let mut list: Vec<(u32, u32, u32)> = sorted_inputs
            .iter()
            .filter(|x| x.0 == k)
            .map(|&(_, prio, f, s)| (prio, f, s))
            .collect();
        list.sort();
        let mut off = 0u64;
        let o = &mut osecs[osec as usize];
        for &(_, f, s) in &list {
            let sec = objects[f as usize].sec(s as usize);
            off = align_up(off, sec.align());
            o.align = o.align.max(sec.align());
            place_osec[f as usize][s as usize] = osec;
            sec_off[f as usize][s as usize] = off;
            off += sec.size();
        }
        cursor[osec as usize] = off;
        o.parts.retain(|p| !matches!(p, Part::Inputs));
        o.parts.insert(0, Part::Sorted);
        o.pads_known = false;
    }
    // SHF_LINK_ORDER inputs (`__patchable_function_entries`, sanitizer tables) follow the order of the sections
    // they are linked to, as in GNU ld and lld; other inputs of the same output section go first, in input order.
    let link_ordered: Vec<(u32, u32, u32)> = res.runs.flat_map(|f| {
        let o = &objects[f];
        let place_osec = &place_osec[f];
        o.secs().filter_map(move |(s, sec)| {
            (place_osec[s] != NONE && sec.flags() & E::SHF_LINK_ORDER as u64 != 0).then_some((
                place_osec[s],
                f as u32,
                s as u32,
            ))
        })
    });
    let mut lo_osecs: Vec<u32> = link_ordered.iter().map(|x| x.0).collect();
    lo_osecs.sort_unstable();
    lo_osecs.dedup();
    for osec in lo_osecs {
        // Already in priority order (an `.init_array` input with SHF_LINK_ORDER): keep that order.
        if osecs[osec as usize]
            .parts
            .iter()
            .any(|p| matches!(p, Part::Sorted))
        {
            continue;
        }
        // (linked?, linked section's output section (NONE if dropped) and offset, file, section), in input order.
        let mut list: Vec<(bool, u32, u64, u32, u32)> = Vec::new();
        for (f, o) in objects.iter().enumerate() {
            for (s, sec) in o.secs() {
                if place_osec[f][s] != osec || sec.kind == SectionKind::EhFrame {
                    continue;
                }
                let linked = sec.flags() & E::SHF_LINK_ORDER as u64 != 0;
                let (lo, loff) = if linked {
                    let link = sec.shdr.sh_link.get(LE) as usize;
                    place_osec[f]
                        .get(link)
                        .map_or((NONE, 0), |&p| (p, sec_off[f][link]))
                } else {
                    (0, 0)
                };
                list.push((linked, lo, loff, f as u32, s as u32));
            }
        }
        list.sort_by_key(|&(linked, lo, loff, _, _)| (linked, lo, loff));
        let mut off = 0u64;
        let o = &mut osecs[osec as usize];
        for &(_, _, _, f, s) in &list {
            let sec = objects[f as usize].sec(s as usize);
            off = align_up(off, sec.align());
            sec_off[f as usize][s as usize] = off;
            off += sec.size();
        }
        cursor[osec as usize] = off;
        o.parts.retain(|p| !matches!(p, Part::Inputs));
        o.parts.insert(0, Part::Sorted);
        o.pads_known = false;
    }
    // A merged output section keeps SHF_MERGE with its inputs' entry size, unless plain inputs or another
    // entry size share it.
    for m in &merges {
        let o = &mut osecs[m.osec as usize];
        let plain = o
            .parts
            .iter()
            .any(|p| matches!(p, Part::Inputs | Part::Sorted));
        if plain || (o.entsize != 0 && o.entsize != m.entsize) {
            o.flags &= !(E::SHF_MERGE as u64 | E::SHF_STRINGS as u64);
            o.entsize = u64::MAX;
        } else if o.entsize != u64::MAX {
            o.entsize = m.entsize;
        }
    }
    for o in osecs.iter_mut() {
        if o.entsize == u64::MAX {
            o.entsize = 0;
        }
    }
    for (i, m) in merges.iter().enumerate() {
        osecs[m.osec as usize].parts.push(Part::Merged(i as u32));
        let o = &mut osecs[m.osec as usize];
        o.align = o.align.max(m.align);
    }

    drop(t);
    let t = crate::timing::span("GOT, PLT, dynamic symbols");
    // GOT, PLT and dynamic symbols from the scan flags.
    let aux_ids: Vec<u32> = crate::par::filter_ids(scan.flags.len(), |i| scan.flags[i] != 0);
    let mut exported: Vec<u32> = Vec::new();
    if is_dynamic {
        let export_all = config.export_dynamic || config.kind == OutputKind::Shared;
        exported = crate::par::filter_ids(res.num_globals(), |g| {
            matches!(res.defs[g], Def::Object { .. } | Def::Linker)
                && !res.hidden[g]
                && (export_all
                    || res.referenced_by_shared[g]
                    || res.in_dynamic_list.get(g) == Some(&true))
                && scan.flags[g] & scan::NEEDS_DYNSYM == 0
        });
    }
    let mut all_aux_ids = merge_sorted(&aux_ids, &exported);
    let t_slots = crate::timing::span("GOT and PLT slots");
    // What each symbol is, in parallel (a global's property bits were computed once; a local's come from its
    // symbol-table entry), so the numbering below reads only this table.
    // A few thousand symbols (most executables) are numbered on this thread (`par::worth_parallel`; the steps
    // here are heavier than a table entry's).
    let parallel = crate::par::worth_parallel(all_aux_ids.len() * 8);
    let kinds: Vec<(u8, bool)> = crate::par::map(&all_aux_ids, parallel, |&id| {
        let props = match space.gprops.get(id as usize) {
            Some(&b) => b,
            None => SymProps::of(res, config, id, target_of(res, space, id)),
        };
        (props, exported.binary_search(&id).is_ok())
    });
    // Slots are numbered in symbol order, in parallel: each chunk of symbols counts its slots, the counts are summed
    // in order, and each chunk then numbers its own from where those before it end. On one thread the numbering was
    // most of this phase (clang-so: 2.2 of 2.9 ms at 2 threads).
    const CHUNK: usize = 4096;
    let slot_cx = SlotCx {
        pic,
        exec: config.kind == OutputKind::Exec,
        shared: config.kind == OutputKind::Shared,
        pack_relr: config.pack_relative_relocs,
    };
    // Per chunk: its counts; the symbols among its own that get copy relocations and dynamic symbols; and its GOT
    // slots relocated by `.relr.dyn`, numbered from the chunk's start.
    type ChunkSlots = (SlotCounts, Vec<u32>, Vec<u32>, Vec<u32>);
    // Each chunk's symbols with their (properties, exported).
    type Chunk<'a> = (&'a [u32], &'a [(u8, bool)]);
    let chunks: Vec<Chunk> = all_aux_ids.chunks(CHUNK).zip(kinds.chunks(CHUNK)).collect();
    let per_chunk: Vec<ChunkSlots> = crate::par::map(&chunks, parallel, |&(ids, kinds)| {
        let mut c = SlotCounts::default();
        let (mut copy, mut dynsym, mut relr) = (Vec::new(), Vec::new(), Vec::new());
        for (&id, &(props, is_exported)) in ids.iter().zip(kinds) {
            let fl = scan.flags[id as usize];
            let (x, in_relr) = number_slots(fl, props, &slot_cx, &mut c);
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
    // Written once, in place (filling it first and then numbering cost a second pass over new pages).
    let n = all_aux_ids.len();
    let mut aux: Vec<Aux> = Vec::with_capacity(n);
    let parts: Vec<_> = aux.spare_capacity_mut()[..n]
        .chunks_mut(CHUNK)
        .zip(chunks)
        .zip(chunk_starts)
        .collect();
    crate::par::for_each_owned(parts, parallel, |((out, (ids, kinds)), mut c)| {
        for ((x, &id), &(props, _)) in out.iter_mut().zip(ids).zip(kinds) {
            x.write(number_slots(scan.flags[id as usize], props, &slot_cx, &mut c).0);
        }
    });
    // SAFETY: the chunks above cover the first `n` elements and wrote each one.
    unsafe { aux.set_len(n) };
    let SlotCounts {
        got: mut num_got,
        plt: num_plt,
        iplt: num_iplt,
        mut got_dyn_relocs,
        irel_got,
    } = counts;
    // One entry per symbol, locals included, filled on all threads (clang-so: 1.5 ms of page faults on one): a
    // chunk of ids finds its symbols in the sorted `all_aux_ids`.
    let mut aux_index: Vec<u32> = Vec::with_capacity(space.total);
    let index_chunk = |(k, slots): (usize, &mut [u32])| {
        let lo = (k << 16) as u32;
        let first = all_aux_ids.partition_point(|&id| id < lo);
        for (i, &id) in all_aux_ids[first..].iter().enumerate() {
            match slots.get_mut((id - lo) as usize) {
                Some(s) => *s = (first + i) as u32,
                None => break,
            }
        }
    };
    if crate::par::worth_parallel(space.total) {
        aux_index.par_extend(rayon::iter::repeat_n(NONE, space.total));
        aux_index
            .par_chunks_mut(1 << 16)
            .enumerate()
            .for_each(index_chunk);
    } else {
        aux_index.resize(space.total, NONE);
        aux_index
            .chunks_mut(1 << 16)
            .enumerate()
            .for_each(index_chunk);
    }
    // Local dynamic: one (module id, 0) pair for the whole output.
    let tlsld = if scan.needs_tlsld {
        num_got += 2;
        got_dyn_relocs += 1;
        num_got - 2
    } else {
        NONE
    };

    // Copy relocations, sharing one copy between aliases (same library, same address).
    let mut commons: Vec<(u32, u64)> = Vec::new();
    let mut bss_off = 0u64;
    let mut bss_align = 1u64;
    for g in common_ids {
        let (size, align) = res.common.get(&g).copied().unwrap_or((0, 1));
        let align = align.max(1);
        bss_off = align_up(bss_off, align);
        bss_align = bss_align.max(align);
        commons.push((g, bss_off));
        bss_off += size;
    }
    let commons_size = bss_off;
    let mut copy_off = 0u64;
    let mut copy_done: HashMap<(u32, u64), u64> = HashMap::default();
    let mut copy_relocs = 0u64;
    for &id in &copy_syms {
        let Target::Imported { file, sym } = target_of(res, space, id) else {
            continue;
        };
        let s = &res.shared[file as usize].syms[sym as usize];
        let value = s.st_value.get(LE);
        let size = s.st_size.get(LE);
        let off = *copy_done.entry((file, value)).or_insert_with(|| {
            let align = if value == 0 {
                8
            } else {
                (1u64 << value.trailing_zeros()).min(64)
            };
            bss_align = bss_align.max(align);
            copy_off = align_up(copy_off, align);
            let o = copy_off;
            copy_off += size.max(1);
            copy_relocs += 1;
            o
        });
        let x = &mut aux[aux_index[id as usize] as usize];
        x.copy_off = off;
        x.copied = true;
    }
    // Aliases of copied data (glibc's `environ` and `__environ`) must name the copy too, or the library keeps
    // using its own, never-initialised original.
    if !copy_done.is_empty() {
        let files: Vec<u32> = {
            let mut v: Vec<u32> = copy_done.keys().map(|k| k.0).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for file in files {
            let sh = &res.shared[file as usize];
            for (k, &g) in res.shared_ids[file as usize].iter().enumerate() {
                let i = sh.first_global + k;
                let sym = &sh.syms[i];
                let Some(&off) = copy_done.get(&(file, sym.st_value.get(LE))) else {
                    continue;
                };
                if sym.st_shndx.get(LE) == 0
                    || res.defs[g as usize]
                        != (Def::Shared {
                            file,
                            sym: i as u32,
                        })
                {
                    continue;
                }
                let slot = aux_index[g as usize];
                if slot == NONE {
                    aux_index[g as usize] = aux.len() as u32;
                    aux.push(Aux {
                        got: NONE,
                        gottp: NONE,
                        plt: NONE,
                        iplt: NONE,
                        dynsym: NONE,
                        copy_off: off,
                        copied: true,
                        canonical: false,
                        strong_ref: false,
                        igot: NONE,
                        tlsgd: NONE,
                        tlsdesc: NONE,
                    });
                    all_aux_ids.push(g);
                    dynsym_ids.push(g);
                } else if !aux[slot as usize].copied {
                    aux[slot as usize].copy_off = off;
                    aux[slot as usize].copied = true;
                }
            }
        }
    }
    if !commons.is_empty() || copy_off > 0 {
        let bss = *by_name.get(&b".bss"[..]).expect(".bss was created above");
        let o = &mut osecs[bss as usize];
        o.align = o.align.max(bss_align);
        if !commons.is_empty() {
            o.parts.push(Part::Commons);
        }
        if copy_off > 0 {
            o.parts.push(Part::CopyRel);
        }
    }

    drop(t_slots);
    // Dynamic symbol table: undefined ones first, then defined ones in .gnu.hash bucket order.
    let mut dyn_strings: HashMap<Vec<u8>, u32> = HashMap::default();
    let mut dynstr: Vec<u8> = vec![0];
    let add_str =
        |s: &[u8], dynstr: &mut Vec<u8>, dyn_strings: &mut HashMap<Vec<u8>, u32>| -> u32 {
            if let Some(&o) = dyn_strings.get(s) {
                return o;
            }
            let o = dynstr.len() as u32;
            dynstr.extend_from_slice(s);
            dynstr.push(0);
            dyn_strings.insert(s.to_vec(), o);
            o
        };
    let mut needed = Vec::new();
    let mut dynsyms: Vec<DynSymbol> = Vec::new();
    let mut dynsym_ifunc = false;
    let mut verneed: Verneed = Vec::new();
    let mut dynamic_entries = 0;
    if is_dynamic {
        let _t = crate::timing::span("dynamic symbol table");
        for (d, s) in res.shared.iter().enumerate() {
            if res.shared_needed[d] {
                needed.push(add_str(s.soname.as_bytes(), &mut dynstr, &mut dyn_strings));
            }
        }
        // Needed versions are numbered after this file's own definitions (1 and the script's nodes).
        let mut next_version = 2 + res.version_defs.len() as u16;
        let mut version_of: HashMap<(u32, u16), u16> = HashMap::default();
        // Entries in parallel (names, versions of this output's definitions); an import's version needs a
        // number from the serial pass below, keyed (file, index).
        // Each entry with its import's (file, version) and whether it is an IFUNC (the ELF header's OS ABI,
        // `gnu_osabi`).
        type Entry = (DynSymbol, Option<(u32, u16)>, bool);
        let parallel = crate::par::worth_parallel(dynsym_ids.len() * 8);
        let entries: Vec<Entry> = crate::par::map(&dynsym_ids, parallel, |&id| {
            let target = target_of(res, space, id);
            let mut name = res.name(id);
            let mut version = 1u16;
            let x = &aux[aux_index[id as usize] as usize];
            let copied = x.copied;
            let canonical = x.canonical && config.kind != OutputKind::Shared;
            let mut import_version = None;
            if let Target::Imported { file, sym } = target {
                let v = res.shared[file as usize].version(sym as usize);
                if v >= 2
                    && let Some(Some(_)) = res.shared[file as usize].version_names.get(v as usize)
                {
                    import_version = Some((file, v));
                }
            }
            let defined =
                !matches!(target, Target::Imported { .. } | Target::Undefined { .. }) || copied;
            if defined && !copied {
                version = res.sym_version.get(id as usize).copied().unwrap_or(1);
                // `name@VERSION` (.symver, non-default): exported as `name`, hidden version.
                if version & 0x8000 != 0
                    && let Some(at) = memchr::memchr(b'@', name)
                {
                    name = &name[..at];
                }
            }
            let entry = DynSymbol {
                id,
                name,
                name_off: 0,
                gnu_hash: 0,
                version,
                defined,
                hashed: defined || canonical,
            };
            // A global's IFUNC bit from its properties: the symbol's own type is a cache and TLB miss in its
            // defining object's symbol table (clang-so: 75K of them, 14 ms at --threads=1).
            let ifunc = match space.gprops.get(id as usize) {
                Some(&b) => b & SymProps::IFUNC != 0,
                None => crate::symbols::is_ifunc(res, target),
            };
            (entry, import_version, ifunc)
        });
        // Needed versions numbered in first-use order, and their names into .dynstr.
        for &(_, iv, ifunc) in &entries {
            dynsym_ifunc |= ifunc;
            let Some((file, v)) = iv else { continue };
            if version_of.contains_key(&(file, v)) {
                continue;
            }
            let vname = res.shared[file as usize].version_names[v as usize].unwrap();
            let k = next_version;
            next_version += 1;
            let soname_off = dyn_strings[res.shared[file as usize].soname.as_bytes()] as usize;
            let name_off = add_str(vname, &mut dynstr, &mut dyn_strings);
            match verneed.iter_mut().find(|(so, _)| *so == soname_off) {
                Some((_, list)) => list.push((vname, k, name_off)),
                None => verneed.push((soname_off, vec![(vname, k, name_off)])),
            }
            version_of.insert((file, v), k);
        }
        // Every dynamic symbol has its own name: no need to look for an equal string. Offsets by a prefix sum
        // over chunks of entries, then each chunk's names copied into its own range of .dynstr, all in parallel
        // (clang-so: 150K names, 6.6 MB; the serial loops and zeroing were 8 of this pass's 17 ms).
        let base = dynstr.len();
        let with_version = |(mut e, iv, _): Entry| {
            if let Some(key) = iv {
                e.version = version_of[&key];
            }
            e
        };
        let mut entries: Vec<DynSymbol> = if parallel {
            entries.into_par_iter().map(with_version).collect()
        } else {
            entries.into_iter().map(with_version).collect()
        };
        const CHUNK: usize = 4096;
        let names_size = |c: &[DynSymbol]| c.iter().map(|e| e.name.len() + 1).sum();
        let sizes: Vec<usize> = if parallel {
            entries.par_chunks(CHUNK).map(names_size).collect()
        } else {
            entries.chunks(CHUNK).map(names_size).collect()
        };
        let mut starts = Vec::with_capacity(sizes.len());
        let mut end = base;
        for size in &sizes {
            starts.push(end);
            end += size;
        }
        dynstr.reserve(end - base);
        {
            // Disjoint byte ranges of the uninitialised tail, one per chunk, in order.
            let mut rest = &mut dynstr.spare_capacity_mut()[..end - base];
            let mut ranges = Vec::with_capacity(sizes.len());
            for &size in &sizes {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(size);
                ranges.push(head);
                rest = tail;
            }
            let parts: Vec<_> = entries.chunks_mut(CHUNK).zip(ranges).zip(starts).collect();
            crate::par::for_each_owned(parts, parallel, |((chunk, out), start)| {
                let mut at = 0;
                for e in chunk {
                    e.name_off = (start + at) as u32;
                    let n = e.name.len();
                    // SAFETY: `out` holds this chunk's names and terminators exactly (its size is their sum); the
                    // bytes are copied into it, not read.
                    unsafe {
                        let to = out.as_mut_ptr().add(at).cast::<u8>();
                        std::ptr::copy_nonoverlapping(e.name.as_ptr(), to, n);
                        to.add(n).write(0);
                    }
                    at += n + 1;
                }
            });
        }
        // SAFETY: the loop above wrote every byte of the `end - base` reserved ones (the chunks' sizes sum to it).
        unsafe { dynstr.set_len(end) };
        // Two filters, not `partition`: partitioned, this pass took 2.4 ms longer on clang-so (150K entries).
        let (undef, mut def): (Vec<DynSymbol>, Vec<DynSymbol>) = if parallel {
            (
                entries.par_iter().filter(|e| !e.hashed).copied().collect(),
                entries.par_iter().filter(|e| e.hashed).copied().collect(),
            )
        } else {
            entries.iter().partition(|e| !e.hashed)
        };
        drop(entries);
        // .gnu.hash bucket order, stable: each name hashed once, in parallel (a comparison sort calling the
        // hash per comparison cost 200 ms on a big .so).
        let nbuckets = gnu_hash_buckets(def.len());
        // Hashed from the fresh .dynstr copy: the names in the inputs' string tables are scattered over every
        // mapping (a TLB and cache miss each), the copy is contiguous.
        let hash = |d: &mut DynSymbol| {
            let at = d.name_off as usize;
            d.gnu_hash = elf::gnu_hash(&dynstr[at..at + d.name.len()]);
        };
        let bucket = |(i, d): (usize, &DynSymbol)| (d.gnu_hash % nbuckets, i as u32);
        let mut order: Vec<(u32, u32)>;
        dynsyms = undef;
        if parallel {
            def.par_iter_mut().for_each(hash);
            order = def.par_iter().enumerate().map(bucket).collect();
            order.par_sort_unstable();
            dynsyms.par_extend(order.par_iter().map(|&(_, i)| def[i as usize]));
        } else {
            def.iter_mut().for_each(hash);
            order = def.iter().enumerate().map(bucket).collect();
            order.sort_unstable();
            dynsyms.extend(order.iter().map(|&(_, i)| def[i as usize]));
        }
        for (i, d) in dynsyms.iter().enumerate() {
            let k = aux_index[d.id as usize];
            aux[k as usize].dynsym = i as u32 + 1;
        }
        // An object with DT_RELR requires version GLIBC_ABI_DT_RELR of a versioned libc, as GNU ld and lld
        // add it: a glibc whose ld.so predates DT_RELR lacks that version and refuses to load the object,
        // instead of silently skipping its relative relocations.
        let packs = !relr_got.is_empty() || scan.relr.iter().any(|v| !v.is_empty());
        if config.pack_relative_relocs && packs {
            let libc = res.shared.iter().enumerate().position(|(d, so)| {
                res.shared_needed[d]
                    && so.soname.starts_with("libc.so")
                    && so.version_names.iter().any(Option::is_some)
            });
            if let Some(d) = libc {
                let vname: &'static [u8] = b"GLIBC_ABI_DT_RELR";
                let soname_off = dyn_strings[res.shared[d].soname.as_bytes()] as usize;
                let name_off = add_str(vname, &mut dynstr, &mut dyn_strings);
                let k = next_version;
                match verneed.iter_mut().find(|(so, _)| *so == soname_off) {
                    Some((_, list)) => list.push((vname, k, name_off)),
                    None => verneed.push((soname_off, vec![(vname, k, name_off)])),
                }
            }
        }
        if !config.rpath.is_empty() {
            add_str(
                config.rpath.join(":").as_bytes(),
                &mut dynstr,
                &mut dyn_strings,
            );
        }
        if let Some(so) = &config.soname {
            add_str(so.as_bytes(), &mut dynstr, &mut dyn_strings);
        }
        if !res.version_defs.is_empty() {
            add_str(
                version_base_name(config).as_bytes(),
                &mut dynstr,
                &mut dyn_strings,
            );
            for (name, deps) in &res.version_defs {
                add_str(name.as_bytes(), &mut dynstr, &mut dyn_strings);
                for d in deps {
                    add_str(d.as_bytes(), &mut dynstr, &mut dyn_strings);
                }
            }
        }
        dynamic_entries = needed.len() + 34 + 3 * config.pack_relative_relocs as usize;
    }

    // Dynamic relocation areas: [GOT][copy][sections][IRELATIVE].
    let dyn_reloc_base = RelocBases::new(&scan.dyn_relocs, got_dyn_relocs + copy_relocs);
    let irel_base = RelocBases::new(&scan.irel_relocs, irel_got);
    let sec_dyn_relocs = dyn_reloc_base.end - got_dyn_relocs - copy_relocs;
    let irel_total = irel_base.end;

    drop(t);
    let t = crate::timing::span("symbol table sizes");
    // Symbol table sizes per file (locals, globals, string bytes), and the linker-made extras.
    // Which symbols go in, as one bit per symbol, so the writer does not decide again; and whether one of them is
    // an IFUNC or a unique global (`gnu_osabi`), seen here while each symbol is in cache (a later walk over every
    // input symbol for just that was 6 ms on clang-so, serial at the end of the link).
    type FileSymtab = ((u32, u32, u64), Vec<u64>, bool);
    let per_file: Vec<FileSymtab> = if config.strip_all {
        Vec::new()
    } else {
        res.runs.map(|f| {
            let o = &objects[f];
            let (mut nl, mut ng, mut strs) = (0u32, 0u32, 0u64);
            if !res.object_live[f] {
                return ((0, 0, 0), Vec::new(), false);
            }
            let mut bits = vec![0u64; o.syms.len().div_ceil(64)];
            let mut gnu_ext = false;
            for i in 1..o.syms.len() {
                if symtab_includes(res, live, config.discard_all, f, i) {
                    bits[i / 64] |= 1 << (i % 64);
                    strs += o.sym_name(i).len() as u64 + 1;
                    if i < o.first_global {
                        nl += 1
                    } else {
                        ng += 1
                    }
                    let s = &o.syms[i];
                    gnu_ext |= s.st_type() == E::STT_GNU_IFUNC || s.st_bind() == E::STB_GNU_UNIQUE;
                }
            }
            ((nl, ng, strs), bits, gnu_ext)
        })
    };
    let symtab_gnu_ext = per_file.iter().any(|p| p.2);
    let (symtab_counts, symtab_members): (Vec<_>, Vec<_>) =
        per_file.into_iter().map(|(c, b, _)| (c, b)).unzip();
    let symtab_extra: Vec<u32> = if config.strip_all {
        Vec::new()
    } else {
        (0..res.num_globals() as u32)
            .into_par_iter()
            .filter(|&g| match res.defs[g as usize] {
                Def::Linker => true,
                Def::Shared { .. } => aux_index[g as usize] != NONE,
                Def::Undefined => false,
                Def::Object { .. } => false,
            })
            .collect()
    };

    // Synthetic section sizes.
    let dynsym_count = if is_dynamic {
        dynsyms.len() as u64 + 1
    } else {
        0
    };
    let set_size = |osecs: &mut Vec<OutputSection>, s: Synth, size: u64| {
        if let Some(i) = synth.get(s) {
            osecs[i as usize].size = size;
        }
    };
    let mut sizes: Vec<(Synth, u64)> = vec![
        (Synth::Interp, interp.as_ref().map_or(0, |v| v.len() as u64)),
        (
            Synth::BuildId,
            if build_id_size > 0 {
                16 + build_id_size
            } else {
                0
            },
        ),
        (Synth::Dynsym, dynsym_count * 24),
        (Synth::Dynstr, dynstr.len() as u64),
        // Only with versions to name: ld.so indexes its version table, which it builds only from
        // DT_VERNEED/DT_VERDEF, with every .gnu.version entry.
        (
            Synth::Versym,
            if is_dynamic && (!verneed.is_empty() || !res.version_defs.is_empty()) {
                dynsym_count * 2
            } else {
                0
            },
        ),
        // Version definitions: the base (the file's own name) and each named node, a Verdef (20 bytes) with
        // a Verdaux (8 bytes) for its name and one per dependency.
        (
            Synth::Verdef,
            if is_dynamic && !res.version_defs.is_empty() {
                28 + res
                    .version_defs
                    .iter()
                    .map(|(_, deps)| 28 + 8 * deps.len() as u64)
                    .sum::<u64>()
            } else {
                0
            },
        ),
        (
            Synth::Verneed,
            verneed.iter().map(|(_, l)| 16 + 16 * l.len() as u64).sum(),
        ),
        (Synth::RelaPlt, num_plt as u64 * 24),
        (
            Synth::Plt,
            if num_plt > 0 {
                A::PLT0_SIZE + num_plt as u64 * A::PLT_ENTRY_SIZE
            } else {
                0
            },
        ),
        (Synth::Iplt, num_iplt as u64 * A::IPLT_ENTRY_SIZE),
        // Settled with the addresses (see `encode_relr`); a first entry keeps the section.
        (
            Synth::RelrDyn,
            8 * (!relr_got.is_empty() || scan.relr.iter().any(|v| !v.is_empty())) as u64,
        ),
        (Synth::Got, num_got as u64 * 8),
        (Synth::Dynamic, dynamic_entries as u64 * 16),
        (Synth::Shstrtab, 0),
    ];
    let gotplt_needed = num_plt > 0
        || is_dynamic
        || scan.needs_got_base
        || res.names.lookup(b"_GLOBAL_OFFSET_TABLE_").is_some();
    sizes.push((
        Synth::GotPlt,
        if gotplt_needed {
            24 + num_plt as u64 * 8
        } else {
            0
        },
    ));
    if is_dynamic {
        sizes.push((
            Synth::RelaDyn,
            (got_dyn_relocs + copy_relocs + sec_dyn_relocs + irel_total) * 24,
        ));
        let nhashed = dynsyms.iter().filter(|d| d.hashed).count();
        sizes.push((
            Synth::GnuHash,
            16 + 8 * gnu_bloom_words(nhashed)
                + 4 * gnu_hash_buckets(nhashed) as u64
                + 4 * nhashed as u64,
        ));
        sizes.push((Synth::Hash, 8 + 4 * dynsym_count.max(1) * 2));
    } else {
        sizes.push((Synth::RelaIplt, irel_total * 24));
    }
    if let Some(i) = synth.get(Synth::EhFrameHdr) {
        let fdes: usize = eh_records
            .0
            .par_iter()
            .map(|file| {
                file.iter()
                    .flat_map(|(_, v)| v)
                    .filter(|r| !r.is_cie && r.out_off != NONE as u64)
                    .count()
            })
            .sum();
        osecs[i as usize].size = 12 + 8 * fdes as u64;
    }
    for (s, size) in sizes {
        set_size(&mut osecs, s, size);
    }
    if let Some(i) = synth.get(Synth::Symtab) {
        let n: u64 = symtab_counts
            .iter()
            .map(|c| (c.0 + c.1) as u64)
            .sum::<u64>()
            + symtab_extra.len() as u64
            + 1;
        osecs[i as usize].size = n * 24;
        let strs: u64 = symtab_counts.iter().map(|c| c.2).sum::<u64>()
            + symtab_extra
                .iter()
                .map(|&g| res.name(g).len() as u64 + 1)
                .sum::<u64>()
            + 1;
        osecs[synth[Synth::Strtab] as usize].size = strs;
    }

    // Sizes of sections made of parts.
    for o in osecs.iter_mut() {
        let mut off = 0u64;
        let idx = by_name.get(&o.name).copied();
        for p in &o.parts {
            let (size, align) = match p {
                Part::Inputs => {
                    o.inputs_size = idx.map_or(0, |i| cursor[i as usize]);
                    (o.inputs_size, 1)
                }
                Part::Sorted => (idx.map_or(0, |i| cursor[i as usize]), 1),
                Part::Merged(m) => (merges[*m as usize].size, merges[*m as usize].align),
                Part::Commons => (commons_size, bss_align),
                Part::CopyRel => (copy_off, bss_align),
                Part::Synthetic => (o.size, o.align),
            };
            off = align_up(off, align);
            o.part_offsets.push(off);
            off += size;
        }
        o.size = off;
    }
    if let Some(i) = synth.get(Synth::Dynamic) {
        // Synthetic-only sections already had their size; keep `.dynamic` as computed.
        osecs[i as usize].size = dynamic_entries as u64 * 16;
    }

    // Drop empty synthetic sections (and empty input-only ones stay: GNU ld keeps them only if they have inputs).
    let keep: Vec<bool> = osecs
        .iter()
        .map(|o| {
            o.size > 0
                || o.name == b".shstrtab"
                || o.parts
                    .iter()
                    .any(|p| matches!(p, Part::Inputs | Part::Sorted))
                || (o.name == b".dynamic" && is_dynamic)
        })
        .collect();

    // Section header string table.
    let mut shstrtab = vec![0u8];
    let mut shndx = 1u32;
    for (i, o) in osecs.iter_mut().enumerate() {
        if keep[i] {
            o.shndx = shndx;
            shndx += 1;
        }
    }
    for (i, o) in osecs.iter().enumerate() {
        if keep[i] {
            shstrtab.extend_from_slice(&o.name);
            shstrtab.push(0);
        }
    }
    osecs[synth[Synth::Shstrtab] as usize].size = shstrtab.len() as u64;

    drop(t);
    let t = crate::timing::span("addresses");
    // Program headers: decide which exist, then assign addresses.
    let alloc: Vec<usize> = (0..osecs.len())
        .filter(|&i| keep[i] && osecs[i].is_alloc())
        .collect();
    let classes: Vec<u32> = alloc
        .iter()
        .map(|&i| segment_class(rank(&osecs[i].name, osecs[i].sh_type, osecs[i].flags)))
        .collect();
    let mut load_classes: Vec<u32> = vec![0];
    for &c in &classes {
        if !load_classes.contains(&c) {
            load_classes.push(c);
        }
    }
    let has_tls = alloc.iter().any(|&i| osecs[i].is_tls());
    let notes: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].sh_type == E::SHT_NOTE)
        .collect();
    let has_relro = config.relro && load_classes.contains(&3);
    let has_eh_hdr = synth
        .get(Synth::EhFrameHdr)
        .is_some_and(|i| keep[i as usize]);
    let nphdr = (is_dynamic as usize) * 2 // PHDR, DYNAMIC
        + interp.is_some() as usize
        + load_classes.len()
        + notes.len()
        + has_tls as usize
        + has_relro as usize
        + has_eh_hdr as usize
        + 1; // GNU_STACK
    let base = if config.kind == OutputKind::Exec {
        0x400000
    } else {
        0
    };
    let headers = 64 + 56 * nphdr as u64;
    // Segments start on a new maximum-size page; RELRO is protected up to the end of its common-size page.
    let (max_page, common_page) = (
        config.max_page_size,
        config.common_page_size.min(config.max_page_size),
    );
    // A PT_LOAD is aligned to the page size or to its most-aligned section, whichever is larger, so that a
    // PIE's load base (chosen by the kernel or ld.so as a multiple of p_align) keeps every section aligned.
    // Its file offset must then be congruent to its address modulo that alignment.
    let mut class_align: HashMap<u32, u64> = HashMap::default();
    for (k, &i) in alloc.iter().enumerate() {
        let a = class_align.entry(classes[k]).or_insert(max_page);
        *a = (*a).max(osecs[i].align.next_power_of_two());
    }
    // Addresses and file offsets of the allocated sections; per segment class (off, addr, file end, mem end),
    // and the file offset after the last allocated section.
    let place_alloc = |osecs: &mut [OutputSection]| {
        let mut off = headers;
        let mut addr = base + headers;
        let mut prev = 0u32;
        let mut seg_range: HashMap<u32, (u64, u64, u64, u64)> = HashMap::default();
        seg_range.insert(0, (0, base, headers, base + headers));
        for (k, &i) in alloc.iter().enumerate() {
            let c = classes[k];
            if c != prev {
                // Each segment starts on a page of its own, in memory and in the file (-z separate-code, GNU
                // ld's default on x86-64). Sharing a file page between RELRO and the data after it would save
                // space, but RELRO's PT_LOAD reaches its page end, so eu-elflint would then find .bss in it.
                addr = align_up(addr, max_page);
                off += addr.wrapping_sub(off) & (class_align[&c] - 1);
                prev = c;
                seg_range.entry(c).or_insert((off, addr, off, addr));
            }
            let o = &mut osecs[i];
            let al = o.align.max(1);
            let new_addr = align_up(addr, al);
            off += new_addr - addr;
            addr = new_addr;
            o.addr = addr;
            o.offset = off;
            let is_tbss = o.is_tls() && o.is_nobits();
            if !is_tbss {
                addr += o.size;
                if !o.is_nobits() {
                    off += o.size;
                }
            }
            let r = seg_range.get_mut(&c).unwrap();
            if !is_tbss {
                r.3 = addr;
                if !o.is_nobits() {
                    r.2 = off;
                }
            }
        }
        (seg_range, off)
    };
    let (mut seg_range, mut off) = place_alloc(&mut osecs);
    // .relr.dyn encodes the addresses of the places it relocates, and its size moves those places: lay out
    // again until the size is stable. It only grows between rounds (a shorter encoding is padded with empty
    // bitmaps), so this ends; in practice the first round's size is final, because everything after
    // .relr.dyn moves by whole pages.
    let mut relr = Vec::new();
    if let Some(ri) = synth.get(Synth::RelrDyn)
        && keep[ri as usize]
    {
        let sites = relr_sites(
            res,
            scan,
            (&place_osec, &sec_off),
            &osecs,
            &relr_got,
            synth[Synth::Got],
        );
        loop {
            relr = encode_relr(sites.iter().map(|&(o, at)| osecs[o as usize].addr + at));
            let have = osecs[ri as usize].size / 8;
            if relr.len() as u64 <= have {
                relr.resize(have as usize, 1);
                break;
            }
            osecs[ri as usize].size = 8 * relr.len() as u64;
            (seg_range, off) = place_alloc(&mut osecs);
        }
    }
    for (i, o) in osecs.iter_mut().enumerate() {
        if keep[i] && !o.is_alloc() {
            off = align_up(off, o.align.max(1));
            o.offset = off;
            o.addr = 0;
            off += o.size;
        }
    }
    let shoff = align_up(off, 8);
    let file_size = shoff + 64 * shndx as u64;

    // TLS block.
    let tls: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].is_tls())
        .collect();
    let (tls_start, tls_end, tls_align) =
        if let (Some(&first), Some(&last)) = (tls.first(), tls.last()) {
            let al = tls.iter().map(|&i| osecs[i].align).max().unwrap_or(1);
            (osecs[first].addr, osecs[last].addr + osecs[last].size, al)
        } else {
            (0, 0, 1)
        };

    let mut segments = Vec::new();
    let seg = |p_type, flags, offset, vaddr, filesz, memsz, align| Segment {
        p_type,
        flags,
        offset,
        vaddr,
        filesz,
        memsz,
        align,
    };
    if is_dynamic {
        segments.push(seg(
            E::PT_PHDR,
            E::PF_R,
            64,
            base + 64,
            headers - 64,
            headers - 64,
            8,
        ));
    }
    if interp.is_some() {
        let o = &osecs[synth[Synth::Interp] as usize];
        segments.push(seg(
            E::PT_INTERP,
            E::PF_R,
            o.offset,
            o.addr,
            o.size,
            o.size,
            1,
        ));
    }
    for &c in &load_classes {
        let (o, a, fe, me) = seg_range[&c];
        let flags = match c {
            1 => E::PF_R | E::PF_X,
            3 | 4 => E::PF_R | E::PF_W,
            _ => E::PF_R,
        };
        let align = class_align.get(&c).copied().unwrap_or(max_page);
        // The RELRO segment's PT_LOAD reaches its page end, so PT_GNU_RELRO (which does, for ld.so to protect
        // the whole last page) lies inside it; the next segment starts on the next page anyway.
        let mem_end = if c == 3 && has_relro {
            align_up(me, common_page)
        } else {
            me
        };
        segments.push(seg(E::PT_LOAD, flags, o, a, fe - o, mem_end - a, align));
    }
    if is_dynamic {
        let o = &osecs[synth[Synth::Dynamic] as usize];
        segments.push(seg(
            E::PT_DYNAMIC,
            E::PF_R | E::PF_W,
            o.offset,
            o.addr,
            o.size,
            o.size,
            8,
        ));
    }
    for &i in &notes {
        let o = &osecs[i];
        segments.push(seg(
            E::PT_NOTE,
            E::PF_R,
            o.offset,
            o.addr,
            o.size,
            o.size,
            o.align,
        ));
    }
    if has_tls {
        let first = &osecs[tls[0]];
        let filesz: u64 = tls
            .iter()
            .filter(|&&i| !osecs[i].is_nobits())
            .map(|&i| osecs[i].offset + osecs[i].size)
            .max()
            .unwrap_or(first.offset)
            - first.offset;
        segments.push(seg(
            E::PT_TLS,
            E::PF_R,
            first.offset,
            tls_start,
            filesz,
            tls_end - tls_start,
            tls_align,
        ));
    }
    if has_relro {
        let (o, a, _, me) = seg_range[&3];
        segments.push(seg(
            E::PT_GNU_RELRO,
            E::PF_R,
            o,
            a,
            me - a,
            align_up(me, common_page) - a,
            1,
        ));
    }
    if has_eh_hdr {
        let o = &osecs[synth[Synth::EhFrameHdr] as usize];
        segments.push(seg(
            E::PT_GNU_EH_FRAME,
            E::PF_R,
            o.offset,
            o.addr,
            o.size,
            o.size,
            4,
        ));
    }
    segments.push(seg(
        E::PT_GNU_STACK,
        if config.execstack {
            E::PF_R | E::PF_W | E::PF_X
        } else {
            E::PF_R | E::PF_W
        },
        0,
        0,
        0,
        0,
        16,
    ));
    debug_assert_eq!(segments.len(), nphdr);
    for (i, o) in osecs.iter_mut().enumerate() {
        if !keep[i] {
            o.shndx = 0;
        }
    }

    let mut lay = Layout {
        osecs,
        synth,
        place_osec,
        sec_addr: sec_off,
        pads,
        merge_addr: Vec::new(),
        merges,
        piece_maps,
        merge_secs,
        eh_records,
        cie_redirect,
        aux_index,
        aux,
        aux_ids: all_aux_ids,
        tlsld,
        num_plt,
        dynsyms,
        gnu_osabi: dynsym_ifunc || symtab_gnu_ext,
        dynstr,
        needed,
        verneed,
        dyn_strings,
        dynamic_entries,
        segments,
        addrs: Vec::new(),
        tls_start,
        tls_end,
        tls_align,
        dyn_reloc_base,
        irel_base,
        relr,
        got_dyn_relocs,
        copy_relocs,
        sec_dyn_relocs,
        commons,
        symtab_counts,
        symtab_members,
        symtab_extra,
        shstrtab,
        file_size,
        shoff,
        entry: 0,
        is_dynamic,
        interp,
        build_id_size,
        linker_syms: HashMap::default(),
        writes_proven: false,
    };
    drop(t);
    let _t = crate::timing::span("symbol addresses");
    assign_addresses(config, res, space, &mut lay)?;
    lay.writes_proven = scan
        .write_check
        .as_ref()
        .is_some_and(|c| c.holds(A::CHECKED_REACH, &lay.segments, &lay.addrs));
    Ok(lay)
}

/// The places `.relr.dyn` relocates, as (output section, offset in it), in address order: the packed relative
/// relocations of the input sections and the GOT slots that hold a link-time address.
fn relr_sites(
    res: &Resolved,
    scan: &Scan,
    (place_osec, sec_off): (&[Vec<u32>], &[Vec<u64>]),
    osecs: &[OutputSection],
    relr_got: &[u32],
    got: u32,
) -> Vec<(u32, u64)> {
    let mut sites: Vec<(u32, u64)> = scan
        .relr
        .par_iter()
        .enumerate()
        .flat_map_iter(|(f, list)| {
            list.iter().filter_map(move |&(s, off)| {
                let osec = place_osec[f][s as usize];
                let o = osecs.get(osec as usize)?;
                debug_assert!(res.objects[f].sections[s as usize].kind == SectionKind::Regular);
                Some((
                    osec,
                    o.part_offsets.first().copied().unwrap_or(0) + sec_off[f][s as usize] + off,
                ))
            })
        })
        .collect();
    sites.extend(relr_got.iter().map(|&slot| (got, 8 * slot as u64)));
    // Output sections are numbered in address order.
    sites.par_sort_unstable();
    sites.dedup();
    sites
}

/// The RELR encoding of `addrs` (ascending, word-aligned): an address entry relocates its word and starts a run;
/// each following odd entry is a bitmap whose bit k (k = 1..63) relocates the word k-1 places after the previous
/// entry's range, 63 words per bitmap.
pub fn encode_relr(addrs: impl Iterator<Item = u64>) -> Vec<u64> {
    const BITS: u64 = 63;
    let mut out = Vec::new();
    let mut addrs = addrs.peekable();
    while let Some(start) = addrs.next() {
        out.push(start);
        let mut base = start + 8;
        loop {
            let mut bitmap = 0u64;
            while let Some(&a) = addrs.peek() {
                let d = a.wrapping_sub(base);
                if a < base || d >= BITS * 8 || !d.is_multiple_of(8) {
                    break;
                }
                bitmap |= 1 << (d / 8);
                addrs.next();
            }
            if bitmap == 0 {
                break;
            }
            out.push((bitmap << 1) | 1);
            base += BITS * 8;
        }
    }
    out
}

pub fn is_common_def(res: &Resolved, _g: u32, d: &Def) -> bool {
    match *d {
        Def::Object { file, sym } => {
            res.objects[file as usize].sym_shndx(sym as usize) == E::SHN_COMMON as u32
        }
        _ => false,
    }
}

pub fn target_of(res: &Resolved, space: &SymbolSpace, id: u32) -> Target {
    if (id as usize) < res.num_globals() {
        match res.defs[id as usize] {
            Def::Object { file, sym } => Target::Object { file, sym },
            Def::Shared { file, sym } => Target::Imported { file, sym },
            Def::Linker => Target::Linker,
            Def::Undefined => Target::Undefined { weak: true },
        }
    } else {
        let f = space.local_base.partition_point(|&b| b <= id) - 1;
        Target::Object {
            file: f as u32,
            sym: id - space.local_base[f],
        }
    }
}

/// Whether `.symtab` lists symbol `i` of object `f`: live definitions, without section, file and `.L` temporary
/// symbols (GNU ld's `-X`, always on), and without any local symbol under `-x` (`no_locals`).
pub fn symtab_includes(
    res: &Resolved,
    live: &Liveness,
    no_locals: bool,
    f: usize,
    i: usize,
) -> bool {
    let o = &res.objects[f];
    let s = &o.syms[i];
    let ty = s.st_type();
    if ty == E::STT_SECTION || ty == E::STT_FILE {
        return false;
    }
    let shndx = o.sym_shndx(i);
    if i < o.first_global {
        // `.L` checked on the string table in place: the name's length (a NUL search) is not needed here.
        let off = s.st_name.get(LE) as usize;
        if no_locals || off == 0 || o.strtab.get(off..).is_some_and(|n| n.starts_with(b".L")) {
            return false;
        }
        return shndx == E::SHN_ABS as u32
            || (shndx != 0
                && (shndx as usize) < o.sections.len()
                && live.is_live(f, shndx as usize));
    }
    // An undefined symbol is nobody's definition: checked first, as most of a C++ object's globals are references
    // and the definition table is read at random.
    if shndx == E::SHN_UNDEF as u32 {
        return false;
    }
    let g = res.object_ids[f][i - o.first_global];
    matches!(res.defs[g as usize], Def::Object { file, sym } if file as usize == f && sym as usize == i)
        && (shndx == E::SHN_ABS as u32
            || shndx == E::SHN_COMMON as u32
            || live.is_live(f, shndx as usize))
}

pub fn gnu_hash_buckets(n: usize) -> u32 {
    (n / 4).max(1) as u32
}

pub fn gnu_bloom_words(n: usize) -> u64 {
    ((n / 8).max(1) as u64).next_power_of_two()
}

/// Drops CIEs no kept FDE uses, and CIEs identical (bytes and relocation targets) to one earlier in input order,
/// whose FDEs then point at that one (GNU ld and lld do the same; C++ and Rust objects each repeat the same few
/// CIEs). Output offsets of the affected sections are recomputed.
fn dedup_cies(res: &Resolved, recs: &mut EhRecords) -> HashMap<(u32, u32, u64), (u32, u32, u64)> {
    type CieKey = (Vec<u8>, Vec<(u64, u32, u64, i64)>);
    // Per file, in parallel: drop the CIEs no kept FDE uses, and key the others by bytes and relocation targets.
    // (The whole pass was serial: most of clang-so's 14 ms "split .eh_frame".)
    type FileCies = (Vec<(u32, u64, CieKey)>, Vec<u32>);
    let per_file: Vec<FileCies> = res.runs.map_mut(&mut recs.0, |f, per_sec| {
        let o = &res.objects[f];
        let mut keys = Vec::new();
        let mut changed = Vec::new();
        for (s, list) in per_sec.iter_mut() {
            if list.is_empty() {
                continue;
            }
            let used: std::collections::HashSet<u64> = list
                .iter()
                .filter(|r| !r.is_cie && r.out_off != NONE as u64)
                .map(|r| r.cie_in_off)
                .collect();
            let sec = o.sec(*s as usize);
            for r in list.iter_mut() {
                // Terminators (4-byte zero records) stay where they are.
                if !r.is_cie || r.size <= 4 || r.out_off == NONE as u64 {
                    continue;
                }
                if !used.contains(&r.in_off) {
                    r.out_off = NONE as u64;
                    changed.push(*s);
                    continue;
                }
                let (start, end) = (r.in_off, r.in_off + r.size);
                let bytes = sec.data()[start as usize..end as usize].to_vec();
                let relocs = sec
                    .relas()
                    .iter()
                    .filter(|x| (start..end).contains(&x.r_offset.get(LE)))
                    .map(|x| {
                        let sym = x.r_sym(LE, false) as usize;
                        // Globals compare by their resolved id; locals are this file's own.
                        let local = (1u64 << 63) | (f as u64) << 32 | sym as u64;
                        let target = match sym.checked_sub(o.first_global) {
                            Some(k) => res.object_ids[f].get(k).map_or(local, |&g| g as u64),
                            None => local,
                        };
                        (
                            x.r_offset.get(LE) - start,
                            x.r_type(LE, false),
                            target,
                            x.r_addend.get(LE),
                        )
                    })
                    .collect();
                keys.push((*s, r.in_off, (bytes, relocs)));
            }
        }
        (keys, changed)
    });
    // In input order: the first CIE of each key is kept, later equal ones point at it.
    let mut seen: HashMap<CieKey, (u32, u32, u64)> = HashMap::default();
    let mut redirect = HashMap::default();
    let mut changes = Vec::with_capacity(per_file.len());
    for (f, (keys, changed)) in per_file.into_iter().enumerate() {
        let mut dropped = Vec::new();
        for (s, in_off, key) in keys {
            match seen.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    redirect.insert((f as u32, s, in_off), *e.get());
                    dropped.push((s, in_off));
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((f as u32, s, in_off));
                }
            }
        }
        changes.push((changed, dropped));
    }
    // Drop the duplicates and lay out again the sections that lost records, in parallel.
    res.runs.for_each_mut(&mut recs.0, |f, per_sec| {
        let (changed, dropped) = &changes[f];
        for (s, list) in per_sec.iter_mut() {
            let mut relayout = changed.contains(s);
            for r in list.iter_mut() {
                if r.is_cie && dropped.contains(&(*s, r.in_off)) {
                    r.out_off = NONE as u64;
                    relayout = true;
                }
            }
            if relayout {
                let mut cur = 0u64;
                for r in list.iter_mut() {
                    if r.out_off != NONE as u64 {
                        r.out_off = cur;
                        cur += r.size;
                    }
                }
            }
        }
    });
    redirect
}

fn eh_block_size(records: &[EhRecord]) -> u64 {
    records
        .iter()
        .filter(|r| r.out_off != NONE as u64)
        .map(|r| r.out_off + r.size)
        .max()
        .unwrap_or(0)
}

/// Splits every live `.eh_frame` into records and decides which are kept: an FDE is kept when the section its
/// first relocation points at is live; CIEs are kept when a kept FDE uses them.
fn split_eh_frames(res: &Resolved, live: &Liveness) -> Result<EhRecords> {
    type PerFile = Vec<(u32, Vec<EhRecord>)>;
    let out: Vec<std::result::Result<PerFile, String>> = res.runs.map(|f| {
        let o = &res.objects[f];
        let mut per_sec = Vec::new();
        for (s, sec) in o.secs() {
            if sec.kind != SectionKind::EhFrame || !live.is_live(f, s) {
                continue;
            }
            let d = sec.data();
            let mut recs = Vec::new();
            let mut off = 0usize;
            let mut rel_i = 0usize;
            while off < d.len() {
                let bad = || format!("{}:(.eh_frame+0x{off:x}): corrupt .eh_frame record", o.name);
                let len = elf::read_u32(d, off).ok_or_else(bad)? as usize;
                if len == 0xffff_ffff {
                    return Err(format!(
                        "{}: 64-bit .eh_frame records are not supported",
                        o.name
                    ));
                }
                let size = 4 + len;
                if off + size > d.len() {
                    return Err(bad());
                }
                if len == 0 {
                    // Terminator: keep it only where it is (crtend.o).
                    recs.push(EhRecord {
                        in_off: off as u64,
                        size: 4,
                        out_off: 0,
                        is_cie: true,
                        cie_in_off: 0,
                    });
                    off += 4;
                    continue;
                }
                let id = elf::read_u32(d, off + 4).ok_or_else(bad)?;
                let is_cie = id == 0;
                let cie_in_off = if is_cie {
                    0
                } else {
                    (off + 4).wrapping_sub(id as usize) as u64
                };
                // Find this record's first relocation (pc_begin for an FDE).
                while rel_i < sec.relas().len()
                    && (sec.relas()[rel_i].r_offset.get(LE) as usize) < off
                {
                    rel_i += 1;
                }
                let mut keep = true;
                if !is_cie {
                    keep = false;
                    if let Some(r) = sec.relas().get(rel_i) {
                        let ro = r.r_offset.get(LE) as usize;
                        if ro < off + size
                            && let Some((tf, ts)) =
                                crate::gc::target_section(res, f, r.r_sym(LE, false) as usize)
                        {
                            keep = live.is_live(tf, ts);
                        }
                    }
                }
                recs.push(EhRecord {
                    in_off: off as u64,
                    size: size as u64,
                    out_off: if keep { 0 } else { NONE as u64 },
                    is_cie,
                    cie_in_off,
                });
                off += size;
            }
            // Assign output offsets: kept records in order.
            let mut cur = 0u64;
            for r in recs.iter_mut() {
                if r.out_off != NONE as u64 {
                    r.out_off = cur;
                    cur += r.size;
                }
            }
            per_sec.push((s as u32, recs));
        }
        Ok(per_sec)
    });
    crate::diag::collect(out.into_iter().map(|r| r.map_err(Errors::one))).map(EhRecords)
}

/// Addresses of every symbol, then the linker-defined ones.
fn assign_addresses(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    lay: &mut Layout,
) -> Result<()> {
    lay.merge_addr = lay
        .merges
        .iter()
        .enumerate()
        .map(|(m, g)| {
            let o = &lay.osecs[g.osec as usize];
            o.parts
                .iter()
                .position(|p| matches!(p, Part::Merged(x) if *x as usize == m))
                .map_or(NO_ADDR, |part| o.addr + o.part_offsets[part])
        })
        .collect();
    // Per file: its sections' addresses, then its locals' and the globals it defines (`DefinedByFile`), while
    // its symbols and section table are in cache.
    let nfiles = res.objects.len();
    let mut addrs: Vec<u64> = crate::par::per_symbol(space.total, || 0);
    let mut sec_addr = std::mem::take(&mut lay.sec_addr);
    {
        let lay = &*lay;
        let (globals, locals) = addrs.split_at_mut(res.num_globals());
        // Written at random, each slot by the one file that defines it.
        let globals = crate::symbols::as_atomic_u64(globals);
        let mut chunks: Vec<&mut [u64]> = Vec::with_capacity(nfiles);
        let mut rest = locals;
        for (o, &live) in res.objects.iter().zip(&res.object_live) {
            let (a, b) = rest.split_at_mut(if live { o.first_global } else { 0 });
            chunks.push(a);
            rest = b;
        }
        let mut pairs: Vec<(&mut Vec<u64>, &mut [u64])> = sec_addr.iter_mut().zip(chunks).collect();
        res.runs.for_each_mut(&mut pairs, |f, (sec_addr, locals)| {
            // Offsets in the output sections' input runs become addresses, in place.
            for (a, &osec) in sec_addr.iter_mut().zip(&lay.place_osec[f]) {
                *a = if osec == NONE {
                    NO_ADDR
                } else {
                    let o = &lay.osecs[osec as usize];
                    o.addr + o.part_offsets.first().copied().unwrap_or(0) + *a
                };
            }
            for (i, slot) in locals.iter_mut().enumerate() {
                *slot = object_sym_addr_in(res, lay, sec_addr, f, i);
            }
            for &(g, sym) in space.defined.of(f) {
                let a = object_sym_addr_in(res, lay, sec_addr, f, sym as usize);
                globals[g as usize].store(a, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    lay.sec_addr = sec_addr;
    // Commons.
    if let Some(bss) = lay
        .osecs
        .iter()
        .find(|o| o.parts.iter().any(|p| matches!(p, Part::Commons)))
    {
        let base = bss.addr + bss.part_offset(&Part::Commons);
        for &(g, off) in &lay.commons {
            addrs[g as usize] = base + off;
        }
    }
    // Imported symbols: canonical PLT entries and copies give them an address in the output.
    let copy_base = lay
        .osecs
        .iter()
        .find(|o| o.parts.iter().any(|p| matches!(p, Part::CopyRel)))
        .map(|o| o.addr + o.part_offset(&Part::CopyRel));
    let plt = lay.synth_addr(Synth::Plt);
    for &id in &lay.aux_ids {
        let x = lay.aux[lay.aux_index[id as usize] as usize];
        if x.plt != NONE
            && x.canonical
            && matches!(target_of(res, space, id), Target::Imported { .. })
        {
            addrs[id as usize] = plt + 16 + 16 * x.plt as u64;
        }
        // `copied` first: looking up the target of each of a shared object's GOT and PLT users only to find that
        // none is copied cost clang-so 2 ms on one thread.
        if x.copied
            && let (Some(base), Target::Imported { .. }) = (copy_base, target_of(res, space, id))
        {
            addrs[id as usize] = base + x.copy_off;
        }
    }
    // Linker-defined symbols.
    let mut linker = HashMap::default();
    let first_sec = |pred: &dyn Fn(&OutputSection) -> bool| {
        lay.osecs
            .iter()
            .filter(|o| o.shndx != 0 && pred(o))
            .map(|o| o.addr)
            .next()
    };
    let base = lay
        .segments
        .iter()
        .find(|s| s.p_type == E::PT_LOAD)
        .map_or(0, |s| s.vaddr);
    let end_of = |pred: &dyn Fn(&OutputSection) -> bool| {
        lay.osecs
            .iter()
            .filter(|o| o.shndx != 0 && o.is_alloc() && pred(o) && !(o.is_tls() && o.is_nobits()))
            .map(|o| o.addr + o.size)
            .max()
    };
    let end = end_of(&|_| true).unwrap_or(base);
    let etext = end_of(&|o| o.flags & E::SHF_EXECINSTR as u64 != 0).unwrap_or(base);
    let edata = end_of(&|o| !o.is_nobits()).unwrap_or(base);
    let bss_start = first_sec(&|o| o.is_nobits() && !o.is_tls()).unwrap_or(edata);
    let sec_range = |name: &[u8]| {
        lay.osecs
            .iter()
            .find(|o| o.shndx != 0 && o.name == name)
            .map(|o| (o.addr, o.addr + o.size))
    };
    // Only these names can be defined here (`resolve::LINKER_DEFINED`, and `__start_`/`__stop_` for each output
    // section named like a C identifier), so each is looked up rather than every global walked: clang-tool's
    // million globals, most of them undefined names of unlinked archive members, took 3.4 ms on one thread.
    let mut candidates: Vec<u32> = crate::resolve::LINKER_DEFINED
        .iter()
        .filter_map(|n| res.names.lookup(n))
        .collect();
    for o in lay
        .osecs
        .iter()
        .filter(|o| o.shndx != 0 && is_c_identifier(&o.name))
    {
        for prefix in [&b"__start_"[..], b"__stop_"] {
            candidates.extend(res.names.lookup(&[prefix, &o.name[..]].concat()));
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    for g in candidates {
        if !matches!(res.defs[g as usize], Def::Undefined | Def::Linker) {
            continue;
        }
        let name = res.name(g);
        let range_sym = |prefix: &[u8], sec: &[u8], end: bool| -> Option<u64> {
            if name != prefix {
                return None;
            }
            Some(sec_range(sec).map_or(0, |r| if end { r.1 } else { r.0 }))
        };
        let v: Option<u64> = match name {
            b"_GLOBAL_OFFSET_TABLE_" => Some(lay.synth_addr(Synth::GotPlt)),
            b"_DYNAMIC" if lay.is_dynamic => Some(lay.synth_addr(Synth::Dynamic)),
            b"__ehdr_start" | b"__executable_start" => Some(base),
            b"_TLS_MODULE_BASE_" => Some(lay.tls_start),
            b"_end" | b"end" => Some(end),
            b"_etext" | b"etext" | b"__etext" => Some(etext),
            b"_edata" | b"edata" => Some(edata),
            b"__bss_start" => Some(bss_start),
            b"__GNU_EH_FRAME_HDR" if lay.synth_sec(Synth::EhFrameHdr).is_some() => {
                Some(lay.synth_addr(Synth::EhFrameHdr))
            }
            b"__rela_iplt_start" | b"__rela_iplt_end" if !lay.is_dynamic => {
                let r = lay
                    .synth_sec(Synth::RelaIplt)
                    .map_or((0, 0), |o| (o.addr, o.addr + o.size));
                Some(if name == b"__rela_iplt_start" {
                    r.0
                } else {
                    r.1
                })
            }
            _ => range_sym(b"__init_array_start", b".init_array", false)
                .or_else(|| range_sym(b"__init_array_end", b".init_array", true))
                .or_else(|| range_sym(b"__fini_array_start", b".fini_array", false))
                .or_else(|| range_sym(b"__fini_array_end", b".fini_array", true))
                .or_else(|| range_sym(b"__preinit_array_start", b".preinit_array", false))
                .or_else(|| range_sym(b"__preinit_array_end", b".preinit_array", true))
                .or_else(|| {
                    let (sec, is_end) = if let Some(s) = name.strip_prefix(b"__start_") {
                        (s, false)
                    } else if let Some(s) = name.strip_prefix(b"__stop_") {
                        (s, true)
                    } else {
                        return None;
                    };
                    if !is_c_identifier(sec) {
                        return None;
                    }
                    sec_range(sec).map(|r| if is_end { r.1 } else { r.0 })
                }),
        };
        if let Some(v) = v {
            linker.insert(g, v);
            addrs[g as usize] = v;
        }
    }
    // --defsym.
    for (sym, expr) in &config.defsyms {
        let Some(g) = res.names.lookup(sym.as_bytes()) else {
            continue;
        };
        let v = eval_defsym(expr, |n| {
            res.names.lookup(n.as_bytes()).map(|id| addrs[id as usize])
        })
        .ok_or_else(|| {
            Errors::one(format!(
                "--defsym: cannot evaluate expression '{expr}' for {sym}"
            ))
        })?;
        addrs[g as usize] = v;
        linker.insert(g, v);
    }
    let entry_name = config.entry.as_deref().unwrap_or("_start");
    lay.entry = match res.names.lookup(entry_name.as_bytes()) {
        Some(g) if !matches!(res.defs[g as usize], Def::Undefined | Def::Shared { .. }) => {
            addrs[g as usize]
        }
        _ => entry_name
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .unwrap_or_else(|| first_sec(&|o| o.name == b".text").unwrap_or(0)),
    };
    lay.linker_syms = linker;
    lay.addrs = addrs;
    Ok(())
}

/// `NUMBER`, `SYMBOL`, `SYMBOL + NUMBER`, `SYMBOL - NUMBER`.
fn eval_defsym(expr: &str, lookup: impl Fn(&str) -> Option<u64>) -> Option<u64> {
    let term = |t: &str| -> Option<u64> {
        let t = t.trim();
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            u64::from_str_radix(h, 16).ok()
        } else if t.chars().next()?.is_ascii_digit() {
            t.parse().ok()
        } else {
            lookup(t)
        }
    };
    if let Some((a, b)) = expr.split_once('+') {
        return Some(term(a)?.wrapping_add(term(b)?));
    }
    if let Some((a, b)) = expr.rsplit_once('-')
        && !a.trim().is_empty()
    {
        return Some(term(a)?.wrapping_sub(term(b)?));
    }
    term(expr)
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
    // Position-dependent output gives a local IFUNC one address, its stub, which GOT loads must see too.
    let canonical_stub = ifunc && !preemptible && cx.exec && fl & scan::NEEDS_GOT != 0;
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
fn merge_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
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

/// Address of symbol `i` of object `f` given the layout (0 for undefined and dropped).
pub fn object_sym_addr(res: &Resolved, lay: &Layout, f: usize, i: usize) -> u64 {
    object_sym_addr_in(res, lay, &lay.sec_addr[f], f, i)
}

/// [`object_sym_addr`] with object `f`'s section addresses given (`Layout::sec_addr[f]`).
fn object_sym_addr_in(res: &Resolved, lay: &Layout, sec_addr: &[u64], f: usize, i: usize) -> u64 {
    let o = &res.objects[f];
    let s = &o.syms[i];
    let shndx = o.sym_shndx(i);
    let value = s.st_value.get(LE);
    if shndx == E::SHN_ABS as u32 {
        return value;
    }
    if shndx == 0 || shndx as usize >= o.sections.len() {
        return 0;
    }
    section_offset_addr_in(lay, sec_addr, f, shndx as usize, value).unwrap_or(0)
}

/// Address of byte `off` of input section `s` of object `f`, following merge and .eh_frame piece maps. Decided from
/// the layout's per-file tables alone: reading the input section's kind first was a cache miss per call (64-byte
/// entries at random; most of this function's 3% of clang-so's CPU time, mostly from symbol addresses).
pub fn section_offset_addr(lay: &Layout, f: usize, s: usize, off: u64) -> Option<u64> {
    section_offset_addr_in(lay, &lay.sec_addr[f], f, s, off)
}

/// [`section_offset_addr`] with object `f`'s section addresses given (`Layout::sec_addr[f]`).
#[inline]
fn section_offset_addr_in(
    lay: &Layout,
    sec_addr: &[u64],
    f: usize,
    s: usize,
    off: u64,
) -> Option<u64> {
    let base = *sec_addr.get(s)?;
    if base == NO_ADDR {
        return merge_offset_addr(lay, f, s, off, &mut MergeCursor::default());
    }
    let Some(recs) = lay.eh_records.find(f, s) else {
        return Some(base + off);
    };
    // Inside a kept record: the same byte of its copy. Anywhere else (a dropped record, the end of the section, an
    // empty section such as crtbeginT.o's __EH_FRAME_BEGIN__): where the next kept record of this section, or the
    // end of its block, lands.
    let k = recs.partition_point(|r| r.in_off + r.size <= off);
    let out_off = match recs.get(k) {
        Some(r) if r.out_off != NONE as u64 && r.in_off <= off => r.out_off + (off - r.in_off),
        _ => recs[k..]
            .iter()
            .find(|r| r.out_off != NONE as u64)
            .map_or_else(|| eh_block_size(recs), |r| r.out_off),
    };
    Some(base + out_off)
}

/// What the last lookup in one merge section found: the section, its slot and merge group, and the piece.
/// Relocations into `.debug_str` come mostly in increasing order, so the next lookup usually hits that piece or the
/// one after it, and needs neither the slot search nor the piece search.
#[derive(Clone, Copy)]
pub struct MergeCursor {
    /// The section (`usize::MAX` for none yet).
    pub s: usize,
    slot: usize,
    group: u32,
    piece: usize,
}

impl Default for MergeCursor {
    fn default() -> MergeCursor {
        MergeCursor {
            s: usize::MAX,
            slot: 0,
            group: 0,
            piece: usize::MAX,
        }
    }
}

/// Address of byte `off` of merge section `s` of object `f`; `cur` is the cursor of earlier lookups.
#[inline]
pub fn merge_offset_addr(
    lay: &Layout,
    f: usize,
    s: usize,
    off: u64,
    cur: &mut MergeCursor,
) -> Option<u64> {
    if cur.s != s {
        let (slot, group) = lay.merge_slot(f, s)?;
        *cur = MergeCursor {
            s,
            slot,
            group,
            piece: usize::MAX,
        };
    }
    let table = &lay.piece_maps[f][cur.slot];
    let maps = &table.maps;
    let covers = |k: usize| {
        k < maps.len() && maps[k].in_off <= off && maps.get(k + 1).is_none_or(|n| n.in_off > off)
    };
    let k = if covers(cur.piece) {
        cur.piece
    } else {
        table.find(off)?
    };
    cur.piece = k;
    Some(lay.merge_addr[cur.group as usize] + maps[k].out_off + (off - maps[k].in_off))
}

pub fn sym_target_is_live(res: &Resolved, lay: &Layout, t: Target) -> bool {
    match t {
        Target::Object { file, sym } => {
            let o = &res.objects[file as usize];
            let shndx = o.sym_shndx(sym as usize);
            shndx == E::SHN_ABS as u32
                || shndx == E::SHN_COMMON as u32
                || (shndx != 0
                    && (shndx as usize) < o.sections.len()
                    && (lay.sec_addr[file as usize][shndx as usize] != NO_ADDR
                        || lay.merge_slot(file as usize, shndx as usize).is_some()))
        }
        Target::Linker | Target::Imported { .. } => true,
        Target::Undefined { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{encode_relr, merge_sorted, output_name};

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

    #[test]
    fn relr_encoding() {
        // A run: the address entry, a bitmap for the next two words, a second bitmap 63 words on, a far address.
        let addrs = [0x1000, 0x1008, 0x1010, 0x1200, 0x5000, 0x5010];
        assert_eq!(
            encode_relr(addrs.into_iter()),
            vec![0x1000, 0b111, 0b11, 0x5000, 0b101]
        );
        // A word exactly 63 words past a bitmap's base falls into the next bitmap; an empty bitmap ends the run.
        assert_eq!(
            encode_relr([0x2000, 0x2008 + 63 * 8 * 2].into_iter()),
            vec![0x2000, 0x2008 + 63 * 8 * 2]
        );
        assert_eq!(encode_relr(std::iter::empty()), Vec::<u64>::new());
    }
}
