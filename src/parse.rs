//! Pass 3: parse every input in parallel: section headers, symbol tables, relocation tables and COMDAT groups of
//! relocatable objects; the dynamic symbol table and versions of shared objects. Every global name is hashed once
//! here and the hash travels with it.
//!
//! Input: [`Inputs`] from `input`. Output: [`ObjectFile`]s and [`SharedFile`]s in input order, borrowing from the
//! mappings. Invariant: every index stored here has been checked against its table.

use crate::diag::{Errors, Result};
use crate::elf::{self, Data, Dyn, LE, Rela, Shdr, Sym};
use crate::index::SecIdx;
use crate::input::{IndexedMember, Inputs, ObjectInput, SharedInput};
use crate::names::{GcRoot, Name, is_c_identifier, root_by_header};
use object::elf as E;
use rayon::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionKind {
    /// Not copied to the output (symbol/string/relocation tables, groups, notes that only carry link-time flags).
    Ignored,
    /// Copied, with relocations applied.
    Regular,
    /// `SHF_MERGE`: split into pieces that are deduplicated per output section.
    Merge,
    /// `.eh_frame`: split into CIEs and FDEs; FDEs of dead functions are dropped.
    EhFrame,
}

/// What the link keeps about one input section besides its header: 8 bytes. There is one per section header
/// (hundreds of thousands on a large link) and most passes walk them all, so the header, contents and relocations
/// are not copied here but found from the file when wanted ([`ObjectFile::sec`]): at 64 bytes each they were a
/// large part of clang-so's peak memory.
#[derive(Clone, Copy)]
pub struct InputSection {
    /// The index of the `SHT_RELA` section that applies to this one, or 0 for none.
    rela: u32,
    pub kind: SectionKind,
    /// Where the contents are.
    data: DataAt,
    /// The name's length in the low 14 bits (`NAME_LONG`: that long or longer, found again when asked), kept in
    /// what would be padding: a NUL search per question was 3% of rg-release's link. The top two bits are the
    /// section's [`GcRoot`] class, found from its name and header while both are in cache.
    name_bits: u16,
}

const NAME_LONG: u16 = (1 << 14) - 1;

const _: () = assert!(size_of::<InputSection>() == 8 && align_of::<Rela>() == 1);

#[derive(Clone, Copy, PartialEq, Eq)]
enum DataAt {
    /// No contents: `SHT_NOBITS`, or a section the link ignores.
    None,
    /// In the input file, where the header says.
    File,
    /// Decompressed from an `SHF_COMPRESSED` section, in [`ObjectFile::decompressed`].
    Decompressed,
}

/// A view of input section `s` of an object file, made on demand by [`ObjectFile::sec`].
#[derive(Clone, Copy)]
pub struct Sec<'a> {
    pub shdr: &'static Shdr,
    pub kind: SectionKind,
    file: &'a ObjectFile,
    index: SecIdx,
    info: InputSection,
}

impl<'a> Sec<'a> {
    /// The section's contents: empty for `SHT_NOBITS` and for sections the link ignores.
    #[inline]
    pub fn data(&self) -> Data {
        match self.info.data {
            DataAt::None => &[],
            DataAt::File => {
                let (off, len) = (self.shdr.sh_offset.get(LE), self.size());
                debug_assert!(elf::slice(self.file.data, off, len).is_some());
                // SAFETY: `parse_sections` checked that the range lies in the file (a checked slice here was 1.5%
                // of rg-release's CPU time, with the relocations').
                unsafe {
                    std::slice::from_raw_parts(
                        self.file.data.as_ptr().add(off as usize),
                        len as usize,
                    )
                }
            }
            DataAt::Decompressed => self.file.decompressed_data(self.index),
        }
    }
    /// The relocations that apply to the section, in the input's order.
    #[inline]
    pub fn relas(&self) -> &'static [Rela] {
        if self.info.rela == 0 {
            return &[];
        }
        let sh = &self.file.shdrs[self.info.rela as usize];
        let (off, len) = (sh.sh_offset.get(LE), sh.sh_size.get(LE));
        debug_assert!(elf::table::<Rela>(self.file.data, sh, "relocation").is_ok());
        // SAFETY: `parse_sections` read this range as a relocation table (in the file, a whole number of entries;
        // `Rela` has alignment 1).
        unsafe {
            std::slice::from_raw_parts(
                self.file.data.as_ptr().add(off as usize).cast::<Rela>(),
                len as usize / size_of::<Rela>(),
            )
        }
    }
    #[inline]
    pub fn flags(&self) -> u64 {
        self.shdr.sh_flags.get(LE)
    }
    #[inline]
    pub fn sh_type(&self) -> u32 {
        self.shdr.sh_type.get(LE)
    }
    #[inline]
    pub fn size(&self) -> u64 {
        self.shdr.sh_size.get(LE)
    }
    #[inline]
    pub fn align(&self) -> u64 {
        self.shdr.sh_addralign.get(LE).max(1)
    }
    #[inline]
    pub fn entsize(&self) -> u64 {
        self.shdr.sh_entsize.get(LE)
    }
    pub fn is_alloc(&self) -> bool {
        self.flags() & E::SHF_ALLOC as u64 != 0
    }
}

/// A COMDAT group, or a `.gnu.linkonce.*` section: of each signature, one file's copy is linked.
pub struct ComdatGroup {
    pub sig: GroupSig,
    /// The member section indices, 32-bit little-endian words of the group section (checked in range by the
    /// parse; empty for a linkonce section). Read in place: a vector per group was clang-so's most frequent
    /// allocation (about 170K).
    members: &'static [u8],
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GroupSig {
    /// A `SHT_GROUP` section's signature: this symbol's (index in the file's symbol table) name.
    Symbol(u32),
    /// A `.gnu.linkonce.*` section (the pre-COMDAT form older assembly still uses), its own only member: GNU ld
    /// keeps the first copy of each section name and discards the others with their symbols.
    Linkonce(u32),
}

impl ComdatGroup {
    pub fn sections(&self) -> impl Iterator<Item = u32> + '_ {
        let single = match self.sig {
            GroupSig::Linkonce(s) => Some(s),
            GroupSig::Symbol(_) => None,
        };
        (self.members.chunks_exact(4))
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .chain(single)
    }

    /// The signature's bytes: the symbol's name, or the linkonce section's.
    pub fn signature(&self, o: &ObjectFile) -> Data {
        match self.sig {
            GroupSig::Symbol(i) => o.sym_name(i as usize),
            GroupSig::Linkonce(s) => o.sec_name(s as usize),
        }
    }
}

#[derive(Default)]
pub struct ObjectFile {
    pub name: String,
    pub data: Data,
    pub lazy: bool,
    pub shdrs: &'static [Shdr],
    pub shstrtab: Data,
    /// Empty until `parse_sections` ran (archive members: when pulled in).
    pub sections: Vec<InputSection>,
    /// The contents of `SHF_COMPRESSED` sections, decompressed, by section index. Their headers in `shdrs` are
    /// then a copy that describes the decompressed section (size, alignment, no `SHF_COMPRESSED`).
    decompressed: Vec<(u32, Data)>,
    pub syms: &'static [Sym],
    pub strtab: Data,
    /// `SHT_SYMTAB_SHNDX` contents, for objects with more than 65279 sections.
    pub xindex: &'static [object::U32<LE>],
    pub first_global: usize,
    /// Names of `syms[first_global..]`.
    pub global_names: Vec<Name>,
    /// For an archive member: the indices in `global_names` of its defined globals (empty otherwise).
    pub lazy_defined: Vec<u32>,
    pub comdats: Vec<ComdatGroup>,
    /// The `.gnu.linkonce.*` sections, found by the parse (each becomes a group of [`Self::comdats`]).
    linkonce: Vec<u32>,
    /// The sections named like C identifiers (`__start_`/`__stop_` candidates), found by the parse: most objects
    /// have none, and reading every section's name again for them was a measurable serial cost on clang-so.
    pub c_ident_secs: Vec<u32>,
    /// The sections from the first non-allocated `.debug_*` section to the last (empty without one), found by the
    /// parse: `--gdb-index` looks for its sections there, and walking every section of every input for them was
    /// half of rg-debug's index time (compilers put the debug sections together, at the end).
    pub debug_secs: std::ops::Range<u32>,
    /// Some section is `SHF_LINK_ORDER` (seen by the parse, so that resolution looks for them only then).
    pub link_order: bool,
    /// Defined globals with a version in their name (`.symver`): (index in `global_names`, version name,
    /// default). A default one (`name@@VERSION`) is renamed `name` here, so plain references bind to it; a
    /// non-default one (`name@VERSION`) keeps its full name and binds nothing.
    pub symvers: Vec<(u32, Data, bool)>,
    /// The 4-byte program properties of its `.note.gnu.property` (type, value), or `None` without that note.
    pub gnu_props: Option<Vec<(u32, u32)>>,
    /// Its `.note.GNU-stack`: whether it asks for an executable stack (`SHF_EXECINSTR`), `None` without the note
    /// (`exec_stack`).
    pub stack_note: Option<bool>,
    /// Its `.gnu.warning.SYMBOL` sections: the warning a final link gives where `SYMBOL` is referenced
    /// (`link_warnings`).
    pub warning_secs: Vec<u32>,
    /// The `SHT_REL` section of its `.llvm.call-graph-profile` (clang PGO, `.cg_profile`), 0 without one: read
    /// only by the call graph sort (`layout::call_graph`).
    pub cg_profile_rel: u32,
    /// An archive member not read yet (everything above empty), and the names its archive's symbol index says
    /// it defines: [`ObjectFile::read_indexed`] reads it when resolution pulls it in.
    pub indexed: Option<(IndexedMember, Vec<Name>)>,
}

impl ObjectFile {
    /// The section index a symbol is defined in, with `SHN_XINDEX` resolved.
    #[inline]
    pub fn sym_shndx(&self, i: usize) -> u32 {
        let s = self.syms[i].st_shndx.get(LE);
        if s == E::SHN_XINDEX {
            self.xindex.get(i).map_or(0, |x| x.get(LE))
        } else {
            s as u32
        }
    }

    pub fn sym_name(&self, i: usize) -> Data {
        if let Some(n) = i
            .checked_sub(self.first_global)
            .and_then(|k| self.global_names.get(k))
        {
            return n.bytes;
        }
        self.syms
            .get(i)
            .and_then(|s| elf::cstr(self.strtab, s.st_name.get(LE)).ok())
            .unwrap_or(b"")
    }

    /// Input section `s` (after `parse_sections`).
    #[inline]
    pub fn sec(&self, s: SecIdx) -> Sec<'_> {
        let info = self.sections[s.index()];
        Sec {
            shdr: &self.shdrs[s.index()],
            kind: info.kind,
            file: self,
            index: s,
            info,
        }
    }
    /// The decompressed contents of `SHF_COMPRESSED` section `s`.
    fn decompressed_data(&self, s: SecIdx) -> Data {
        self.decompressed
            .binary_search_by_key(&s.0, |&(i, _)| i)
            .map_or(&[], |k| self.decompressed[k].1)
    }
    /// Section `s`'s root class for `--gc-sections` (after `parse_sections`).
    #[inline]
    pub fn gc_root(&self, s: SecIdx) -> GcRoot {
        match self.sections[s.index()].name_bits >> 14 {
            0 => GcRoot::No,
            1 => GcRoot::Yes,
            2 => GcRoot::IfBracketed,
            _ => GcRoot::Unallocated,
        }
    }
    /// Every input section with its index.
    pub fn secs(&self) -> impl Iterator<Item = (SecIdx, Sec<'_>)> {
        (0..self.sections.len()).map(|s| (SecIdx::new(s), self.sec(SecIdx::new(s))))
    }

    /// Section `i`'s name (checked when the sections were read).
    #[inline]
    pub fn sec_name(&self, i: usize) -> Data {
        let Some(sh) = self.shdrs.get(i) else {
            return b"";
        };
        let off = sh.sh_name.get(LE) as usize;
        match self.sections.get(i) {
            Some(sec) if sec.name_bits & NAME_LONG != NAME_LONG => self
                .shstrtab
                .get(off..off + (sec.name_bits & NAME_LONG) as usize)
                .unwrap_or(b""),
            _ => elf::cstr(self.shstrtab, off as u32).unwrap_or(b""),
        }
    }

    /// Section `i`'s name for a message.
    pub fn section_name(&self, i: u32) -> String {
        if (i as usize) < self.sections.len() {
            String::from_utf8_lossy(self.sec_name(i as usize)).into()
        } else {
            format!("section {i}")
        }
    }
}

pub struct SharedFile {
    pub soname: String,
    pub as_needed: bool,
    pub syms: &'static [Sym],
    /// `.gnu.version`, one entry per dynamic symbol, or empty if unversioned.
    pub versym: &'static [object::U16<LE>],
    /// Version names by version index (`.gnu.version_d`); `None` for indices without a definition.
    pub version_names: Vec<Option<Data>>,
    pub first_global: usize,
    pub global_names: Vec<Name>,
    /// Its `DT_NEEDED` entries.
    pub needed: Vec<String>,
    /// The relocatable objects before it on the command line (`input::SharedInput::objects_before`).
    pub objects_before: usize,
    /// Its section headers (none where they were stripped).
    pub shdrs: &'static [Shdr],
    /// Its `PT_GNU_RELRO` address range, if any.
    pub relro: Option<(u64, u64)>,
    /// Its `.gnu.warning.SYMBOL` sections as (`SYMBOL`, warning text) (`link_warnings`).
    pub warnings: Vec<(Data, Data)>,
}

impl SharedFile {
    /// Whether section `shndx` is allocated and read-only (a copy of its data belongs in RELRO): without
    /// `SHF_WRITE`, or inside the library's own RELRO (`.data.rel.ro`, C++'s typeinfo), as GNU ld counts it.
    pub fn read_only(&self, shndx: u16) -> bool {
        self.shdrs.get(shndx as usize).is_some_and(|sh| {
            let f = sh.sh_flags.get(LE);
            let (start, size) = (sh.sh_addr.get(LE), sh.sh_size.get(LE));
            let in_relro = self.relro.is_some_and(|(lo, hi)| {
                start >= lo && start.checked_add(size).is_some_and(|end| end <= hi)
            });
            f & E::SHF_ALLOC as u64 != 0 && (f & E::SHF_WRITE as u64 == 0 || in_relro)
        })
    }
    /// The version index of dynamic symbol `i` (hidden bit removed), or 1 (global) if unversioned.
    pub fn version(&self, i: usize) -> u16 {
        self.versym.get(i).map_or(1, |v| v.get(LE) & 0x7fff)
    }
    /// Whether symbol `i` is a non-default (`sym@VER`, hidden) version that plain references must not bind to.
    pub fn is_hidden_version(&self, i: usize) -> bool {
        self.versym.get(i).is_some_and(|v| v.get(LE) & 0x8000 != 0)
    }
}

pub struct Parsed {
    pub objects: Vec<ObjectFile>,
    pub shared: Vec<SharedFile>,
    /// `input::Inputs::groups`.
    pub groups: Vec<std::ops::Range<usize>>,
    /// `input::Inputs::lazy_runs`.
    pub lazy_runs: Vec<crate::input::LazyRun>,
}

pub fn parse(inputs: Inputs) -> Result<Parsed> {
    let Inputs {
        objects,
        shared,
        groups,
        lazy_runs,
        ..
    } = inputs;
    let (objects, shared) = rayon::join(
        || parse_objects(objects),
        || shared.into_par_iter().map(parse_shared).collect::<Vec<_>>(),
    );
    let mut errors = Vec::new();
    let objects = objects
        .into_iter()
        .filter_map(|r| r.map_err(|e| errors.push(e)).ok())
        .collect();
    let shared = shared
        .into_iter()
        .filter_map(|r| r.map_err(|e| errors.push(e)).ok())
        .collect();
    if errors.is_empty() {
        Ok(Parsed {
            objects,
            shared,
            groups,
            lazy_runs,
        })
    } else {
        Err(Errors(errors))
    }
}

/// Parses the objects, in order, one task each. Only the files read here cost anything: an archive member known
/// from its archive's symbol index becomes a stub, at next to no cost. With rayon's adaptive splitting, one thread
/// got the first quarter of the list as a single sequential run, which held all the files read (rg-debug's few
/// objects come first among its many inputs), so the parse ran on one thread only. Making the stubs apart and
/// putting the two lists back in order instead was a measurable serial move on clang-so, with its thousands of
/// stubs; a task per input costs less than that and collects in place.
fn parse_objects(inputs: Vec<ObjectInput>) -> Vec<std::result::Result<ObjectFile, String>> {
    inputs
        .into_par_iter()
        .with_max_len(1)
        .map(parse_object)
        .collect()
}

fn classify(name: &[u8], sh: &Shdr) -> SectionKind {
    let ty = sh.sh_type.get(LE);
    let flags = sh.sh_flags.get(LE);
    match ty {
        E::SHT_NULL
        | E::SHT_SYMTAB
        | E::SHT_STRTAB
        | E::SHT_RELA
        | E::SHT_REL
        | E::SHT_GROUP
        | E::SHT_SYMTAB_SHNDX => return SectionKind::Ignored,
        // .llvm_addrsig, .llvm.call-graph-profile and other LLVM link-time-only tables.
        0x6fff4c00..=0x6fff4cff => return SectionKind::Ignored,
        _ => {}
    }
    if flags & E::SHF_EXCLUDE as u64 != 0
        || name == b".note.GNU-stack"
        || name == b".note.gnu.property"
        || name.starts_with(b".gnu.lto_")
        || name.starts_with(b".gnu.warning")
    {
        return SectionKind::Ignored;
    }
    if name == b".eh_frame" {
        return SectionKind::EhFrame;
    }
    // Merged pieces are each aligned to the section's alignment: beyond a page (compilers use at most 64 bytes),
    // deduplicating would only multiply the padding (a 2^30-aligned string section of seven strings made a
    // 7 GiB output), so such a section is kept whole, which is always correct.
    if flags & E::SHF_MERGE as u64 != 0
        && sh.sh_entsize.get(LE) > 0
        && ty == E::SHT_PROGBITS
        && sh.sh_addralign.get(LE) <= MERGE_MAX_ALIGN
    {
        return SectionKind::Merge;
    }
    SectionKind::Regular
}

fn parse_object(input: ObjectInput) -> std::result::Result<ObjectFile, String> {
    let ObjectInput {
        name,
        data,
        lazy,
        indexed,
    } = input;
    if indexed.is_some() {
        return Ok(ObjectFile {
            name,
            lazy,
            indexed,
            ..ObjectFile::default()
        });
    }
    let ctx = |e: String| format!("{name}: {e}");
    // An ELF32 link's objects, in the ELF64 shape every pass reads.
    let data = match elf::elf32_addend() {
        Some(addend) if crate::elf32::is_elf32(data) => {
            crate::elf32::widen(data, addend).map_err(ctx)?
        }
        _ => data,
    };
    let eh = elf::file_header(data).map_err(ctx)?;
    let shdrs = elf::section_headers(data, eh).map_err(ctx)?;
    let shstr_idx = elf::shstrndx(eh, shdrs);
    let shstrtab = match shdrs.get(shstr_idx) {
        Some(sh) => elf::section_data(data, sh).map_err(ctx)?,
        None if shdrs.is_empty() => &[],
        None => return Err(ctx("invalid section name string table index".into())),
    };

    let mut symtab_idx = None;
    let mut xindex: &'static [object::U32<LE>] = &[];
    for sh in shdrs {
        match sh.sh_type.get(LE) {
            E::SHT_SYMTAB => symtab_idx = Some(sh),
            E::SHT_SYMTAB_SHNDX => {
                xindex = elf::table(data, sh, "extended section index").map_err(ctx)?
            }
            _ => {}
        }
    }
    let (syms, strtab, first_global) = match symtab_idx {
        Some(sh) => {
            let syms: &'static [Sym] = elf::table(data, sh, "symbol").map_err(ctx)?;
            let strtab = shdrs
                .get(sh.sh_link.get(LE) as usize)
                .ok_or_else(|| ctx("symbol table has an invalid string table index".into()))
                .and_then(|s| elf::section_data(data, s).map_err(ctx))?;
            let first_global = (sh.sh_info.get(LE) as usize).min(syms.len());
            (syms, strtab, first_global.max(1).min(syms.len()))
        }
        None => (&[][..], &[][..], 0),
    };

    let mut global_names = Vec::with_capacity(syms.len().saturating_sub(first_global));
    let mut symvers = Vec::new();
    for (i, s) in syms.iter().enumerate().skip(first_global) {
        let (mut n, at) = if s.st_shndx.get(LE) != E::SHN_UNDEF {
            // A definition's name may carry a version: its end and its first '@' in one pass.
            elf::cstr_at(strtab, s.st_name.get(LE))
        } else {
            elf::cstr(strtab, s.st_name.get(LE)).map(|n| (n, None))
        }
        .map_err(|e| ctx(format!("symbol {i}: {e}")))?;
        if let Some(at) = at {
            let k = (i - first_global) as u32;
            if n.get(at + 1) == Some(&b'@') {
                symvers.push((k, &n[at + 2..], true));
                n = &n[..at];
            } else {
                symvers.push((k, &n[at + 1..], false));
                // `name@` (an empty version): the plain name, in the base version (or --default-symver's).
                if at + 1 == n.len() {
                    n = &n[..at];
                }
            }
        }
        global_names.push(Name::new(n));
    }

    let mut file = ObjectFile {
        name,
        data,
        lazy,
        shdrs,
        shstrtab,
        sections: Vec::new(),
        decompressed: Vec::new(),
        syms,
        strtab,
        xindex,
        first_global,
        global_names,
        comdats: Vec::new(),
        linkonce: Vec::new(),
        c_ident_secs: Vec::new(),
        debug_secs: 0..0,
        link_order: false,
        symvers,
        gnu_props: None,
        stack_note: None,
        warning_secs: Vec::new(),
        cg_profile_rel: 0,
        lazy_defined: Vec::new(),
        indexed: None,
    };
    // Check every symbol's section index once, so later passes can index without checks. An archive member's
    // defined globals are noted on the way: resolution interns only those (re-reading the symbol tables of
    // thousands of members there was a measurable cost on clang-tool).
    for i in 0..syms.len() {
        let shndx = file.sym_shndx(i);
        if shndx != 0 && shndx < E::SHN_LORESERVE as u32 && shndx as usize >= shdrs.len() {
            return Err(format!(
                "{}: symbol '{}' (index {i}) has invalid section index {shndx}",
                file.name,
                crate::diag::demangle(file.sym_name(i))
            ));
        }
        if shndx == E::SHN_COMMON as u32 {
            check_align(file.syms[i].st_value.get(LE), "alignment").map_err(|e| {
                format!(
                    "{}: common symbol '{}': {e}",
                    file.name,
                    crate::diag::demangle(file.sym_name(i))
                )
            })?;
        }
        if lazy && shndx != 0 && i >= first_global {
            file.lazy_defined.push((i - first_global) as u32);
        }
    }
    // An archive member's sections are only read if the member is pulled into the link.
    if !lazy {
        file.parse_sections()?;
    }
    Ok(file)
}

impl ObjectFile {
    /// Reads an archive member known only from its archive's symbol index (`indexed`), now that resolution pulls
    /// it in: its header, then its symbols as for any member. Still lazy: `parse_sections` follows.
    pub fn read_indexed(&self) -> std::result::Result<ObjectFile, String> {
        let Some((member, _)) = &self.indexed else {
            return Err(format!("{}: internal error: member read twice", self.name));
        };
        let (name, data) = member.read()?;
        if crate::input::is_bitcode(data) {
            return Err(crate::input::bitcode_error(&name));
        }
        if !data.starts_with(b"\x7fELF") {
            return Err(format!(
                "{name}: archive member is not an ELF object, yet the archive's symbol index lists it"
            ));
        }
        parse_object(ObjectInput {
            name,
            data,
            lazy: true,
            indexed: None,
        })
    }

    /// Reads the section headers into `sections` (kinds, data, relocations) and the COMDAT groups. Done at parse
    /// time for plain objects and once resolution pulls it in for an archive member (most members of a large
    /// link never are).
    pub fn parse_sections(&mut self) -> std::result::Result<(), String> {
        self.decompress_sections()?;
        let name = &self.name;
        let data = self.data;
        let ctx = |e: String| format!("{name}: {e}");
        let mut sections = Vec::with_capacity(self.shdrs.len());
        for (i, sh) in self.shdrs.iter().enumerate() {
            let sname = elf::cstr(self.shstrtab, sh.sh_name.get(LE))
                .map_err(|e| ctx(format!("section {i}: {e}")))?;
            let kind = classify(sname, sh);
            if kind != SectionKind::Ignored {
                let bad = |e: String| format!("{name}:({}): {e}", String::from_utf8_lossy(sname));
                check_align(sh.sh_addralign.get(LE), "sh_addralign").map_err(bad)?;
                // The layout splits .eh_frame into records and `.eh_frame_hdr` indexes them: only the allocated
                // section with contents that every compiler writes.
                // (Writable is allowed: old toolchains wrote "aw" .eh_frame sections.)
                let odd = (E::SHF_EXECINSTR
                    | E::SHF_MERGE
                    | E::SHF_STRINGS
                    | E::SHF_TLS
                    | E::SHF_LINK_ORDER) as u64;
                if kind == SectionKind::EhFrame
                    && (sh.sh_flags.get(LE) & E::SHF_ALLOC as u64 == 0
                        || sh.sh_flags.get(LE) & odd != 0
                        || sh.sh_type.get(LE) == E::SHT_NOBITS)
                {
                    return Err(bad(format!(
                        "an .eh_frame section must be SHF_ALLOC and hold data, without SHF_EXECINSTR, \
                         SHF_MERGE, SHF_STRINGS, SHF_TLS or SHF_LINK_ORDER (flags {:#x})",
                        sh.sh_flags.get(LE)
                    )));
                }
            }
            let at = if kind == SectionKind::Ignored && sh.sh_type.get(LE) != E::SHT_GROUP {
                DataAt::None
            } else if self.decompressed.iter().any(|&(k, _)| k as usize == i) {
                DataAt::Decompressed
            } else {
                let d = elf::section_data(data, sh)
                    .map_err(|e| ctx(format!("section {}: {e}", String::from_utf8_lossy(sname))))?;
                if d.is_empty() {
                    DataAt::None
                } else {
                    DataAt::File
                }
            };
            if is_c_identifier(sname) {
                self.c_ident_secs.push(i as u32);
            } else if sname.starts_with(b".gnu.linkonce.") && kind != SectionKind::Ignored {
                self.linkonce.push(i as u32);
            }
            self.link_order |= sh.sh_flags.get(LE) & E::SHF_LINK_ORDER as u64 != 0;
            if sh.sh_flags.get(LE) & E::SHF_ALLOC as u64 == 0 && sname.starts_with(b".debug_") {
                let first = match self.debug_secs.is_empty() {
                    true => i as u32,
                    false => self.debug_secs.start,
                };
                self.debug_secs = first..i as u32 + 1;
            }
            if sname.starts_with(b".gnu.warning.") {
                self.warning_secs.push(i as u32);
            } else if sname == b".note.GNU-stack" {
                self.stack_note = Some(sh.sh_flags.get(LE) & E::SHF_EXECINSTR as u64 != 0);
            } else if sname == b".note.gnu.property" && sh.sh_type.get(LE) == E::SHT_NOTE {
                let d = elf::section_data(data, sh).map_err(&ctx)?;
                let props = elf::note_properties(d)
                    .map_err(|e| ctx(format!("section .note.gnu.property: {e}")))?;
                self.gnu_props.get_or_insert_default().extend(props);
            }
            sections.push(InputSection {
                rela: 0,
                kind,
                data: at,
                name_bits: sname.len().min(NAME_LONG as usize) as u16
                    | (root_by_header(sname, sh) as u16) << 14,
            });
        }

        // Relocation tables attach to the section they apply to.
        for (i, sh) in self.shdrs.iter().enumerate() {
            if sh.sh_type.get(LE) == E::SHT_REL {
                // Only metadata the link drops may have SHT_REL relocations here: LLVM writes
                // `.llvm.call-graph-profile`'s (PGO builds) as REL on every target; they only name symbols.
                let target = sections.get(sh.sh_info.get(LE) as usize);
                if target.is_some_and(|t| t.kind == SectionKind::Ignored) {
                    let target_sh = &self.shdrs[sh.sh_info.get(LE) as usize];
                    if target_sh.sh_type.get(LE) == elf::SHT_LLVM_CALL_GRAPH_PROFILE {
                        self.cg_profile_rel = i as u32;
                    }
                    continue;
                }
                return Err(ctx(format!(
                    "section {}: SHT_REL relocations are not used on this target",
                    String::from_utf8_lossy(self.sec_name(i))
                )));
            }
            if sh.sh_type.get(LE) != E::SHT_RELA {
                continue;
            }
            let target = sh.sh_info.get(LE) as usize;
            let relas: &'static [Rela] = elf::table(data, sh, "relocation").map_err(ctx)?;
            match sections.get_mut(target) {
                Some(t) => {
                    t.rela = if relas.is_empty() { 0 } else { i as u32 };
                    // A mergeable section with relocations (gcc -no-pie puts pointer constants in
                    // .rodata.cst8) cannot be deduplicated by its bytes: equal bytes may relocate to
                    // different values. Keep it whole, as lld does.
                    if t.kind == SectionKind::Merge && !relas.is_empty() {
                        t.kind = SectionKind::Regular;
                    }
                }
                None => {
                    return Err(ctx(format!(
                        "relocation section applies to invalid section index {target}"
                    )));
                }
            }
        }
        // GCC's slim LTO objects carry only GIMPLE (and this marker symbol), no code.
        if self
            .global_names
            .iter()
            .any(|n| n.bytes == b"__gnu_lto_slim")
            && !(0..sections.len())
                .any(|i| self.sec_name(i) == b".text" && self.shdrs[i].sh_size.get(LE) > 0)
        {
            return Err(ctx(
                "file is a GCC LTO (GIMPLE) object; rivet does not support LTO: rebuild without -flto"
                    .into(),
            ));
        }
        self.sections = sections;
        self.comdats = parse_groups(self, self.shdrs)?;
        Ok(())
    }
}

impl ObjectFile {
    /// Decompresses the `SHF_COMPRESSED` sections (`gcc -gz`, `clang -gz`: zlib or zstd, debug sections), as GNU
    /// ld and lld do: the output holds them uncompressed. Their headers are replaced by a copy describing the
    /// decompressed contents.
    fn decompress_sections(&mut self) -> std::result::Result<(), String> {
        let compressed = |sh: &Shdr| {
            sh.sh_flags.get(LE) & E::SHF_COMPRESSED as u64 != 0
                && sh.sh_type.get(LE) != E::SHT_NOBITS
        };
        if !self.shdrs.iter().any(compressed) {
            return Ok(());
        }
        let mut shdrs = self.shdrs.to_vec();
        for (i, sh) in shdrs.iter_mut().enumerate() {
            if !compressed(sh) {
                continue;
            }
            let sname = String::from_utf8_lossy(self.sec_name(i)).into_owned();
            let err = |e: String| format!("{}:({sname}): {e}", self.name);
            let raw = elf::section_data(self.data, sh).map_err(err)?;
            if sh.sh_flags.get(LE) & E::SHF_ALLOC as u64 != 0 {
                return Err(err(
                    "SHF_COMPRESSED is not allowed on an SHF_ALLOC section".into()
                ));
            }
            // Debug sections are SHT_PROGBITS; other kinds (relocations, symbol tables) are read in place.
            if sh.sh_type.get(LE) != E::SHT_PROGBITS {
                return Err(err(format!(
                    "SHF_COMPRESSED on a section of type {:#x} is not supported",
                    sh.sh_type.get(LE)
                )));
            }
            let (chdr, body) = object::pod::from_bytes::<E::CompressionHeader64<LE>>(raw)
                .map_err(|_| err("truncated compression header".into()))?;
            let size = chdr.ch_size.get(LE);
            check_align(chdr.ch_addralign.get(LE), "ch_addralign").map_err(err)?;
            let out = decompress(chdr.ch_type.get(LE), body, size).map_err(err)?;
            self.decompressed.push((i as u32, Vec::leak(out)));
            sh.sh_flags
                .set(LE, sh.sh_flags.get(LE) & !(E::SHF_COMPRESSED as u64));
            sh.sh_size.set(LE, size);
            sh.sh_addralign.set(LE, chdr.ch_addralign.get(LE));
        }
        // Leaked like the input mappings: the link's data lives until the process exits.
        self.shdrs = Vec::leak(shdrs);
        Ok(())
    }
}

/// The largest alignment of a section whose pieces are merged (`classify`).
const MERGE_MAX_ALIGN: u64 = 4096;

/// The largest alignment an input may ask for: lld's limit, and the largest the assemblers write (`.p2align 31`).
/// The padding a larger one needs is a file of gigabytes.
const MAX_ALIGN: u64 = 1 << 31;

/// Checks an alignment read from an input (`field` names it): zero or a power of two, at most [`MAX_ALIGN`].
pub fn check_align(align: u64, field: &str) -> std::result::Result<(), String> {
    if align > 1 && !align.is_power_of_two() {
        return Err(format!("{field} {align:#x} is not a power of 2"));
    }
    if align > MAX_ALIGN {
        return Err(format!(
            "{field} {align:#x} is too large (the limit is {MAX_ALIGN:#x})"
        ));
    }
    Ok(())
}

/// Decompresses an `SHF_COMPRESSED` section's body of type `ch_type` into exactly `size` bytes.
fn decompress(ch_type: u32, body: &[u8], size: u64) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let size =
        usize::try_from(size).map_err(|_| format!("uncompressed size {size} is too large"))?;
    // The size comes from the file: reserve no more than a deflate stream of this length can hold (zstd's
    // larger ratios just grow the vector), so a corrupt header is an error below rather than an abort here.
    let mut out =
        Vec::with_capacity(size.min(body.len().saturating_mul(1032).saturating_add(4096)));
    let read = match ch_type {
        E::ELFCOMPRESS_ZLIB => flate2::read::ZlibDecoder::new(body)
            .take(size as u64 + 1)
            .read_to_end(&mut out),
        E::ELFCOMPRESS_ZSTD => zstd::stream::read::Decoder::with_buffer(body)
            .and_then(|d| d.take(size as u64 + 1).read_to_end(&mut out)),
        t => return Err(format!("unknown compression type {t}")),
    };
    let what = if ch_type == E::ELFCOMPRESS_ZLIB {
        "zlib"
    } else {
        "zstd"
    };
    read.map_err(|e| format!("corrupt {what}-compressed section: {e}"))?;
    if out.len() != size {
        return Err(format!(
            "{what}-compressed section holds {} bytes, its header says {size}",
            out.len()
        ));
    }
    Ok(out)
}

fn parse_groups(
    file: &ObjectFile,
    shdrs: &[Shdr],
) -> std::result::Result<Vec<ComdatGroup>, String> {
    let mut groups = Vec::new();
    for (i, sh) in shdrs.iter().enumerate() {
        if sh.sh_type.get(LE) != E::SHT_GROUP {
            continue;
        }
        let words = file.sec(SecIdx::new(i)).data();
        let flag = elf::read_u32(words, 0)
            .ok_or_else(|| format!("{}: truncated section group", file.name))?;
        if flag & E::GRP_COMDAT == 0 {
            continue;
        }
        let sig_idx = sh.sh_info.get(LE) as usize;
        if sig_idx >= file.syms.len() {
            return Err(format!(
                "{}: section group has an invalid signature symbol",
                file.name
            ));
        }
        let g = ComdatGroup {
            sig: GroupSig::Symbol(sig_idx as u32),
            members: &words[4..words.len() & !3],
        };
        if let Some(m) = g.sections().find(|&m| m as usize >= file.sections.len()) {
            return Err(format!(
                "{}: section group member {m} out of range",
                file.name
            ));
        }
        groups.push(g);
    }
    groups.extend(file.linkonce.iter().map(|&s| ComdatGroup {
        sig: GroupSig::Linkonce(s),
        members: &[],
    }));
    Ok(groups)
}

fn parse_shared(input: SharedInput) -> std::result::Result<SharedFile, String> {
    let SharedInput {
        name,
        data,
        as_needed,
        needed_name,
        objects_before,
    } = input;
    let ctx = |e: String| format!("{name}: {e}");
    let eh = elf::file_header(data).map_err(ctx)?;
    let shdrs = elf::section_headers(data, eh).map_err(ctx)?;
    let mut syms: &'static [Sym] = &[];
    let mut strtab: Data = &[];
    let mut first_global = 0;
    let mut versym: &'static [object::U16<LE>] = &[];
    let mut version_names: Vec<Option<Data>> = Vec::new();
    let mut soname = None;
    let mut needed = Vec::new();
    for sh in shdrs {
        match sh.sh_type.get(LE) {
            E::SHT_DYNSYM => {
                syms = elf::table(data, sh, "dynamic symbol").map_err(ctx)?;
                strtab = shdrs
                    .get(sh.sh_link.get(LE) as usize)
                    .ok_or_else(|| ctx("invalid .dynstr index".into()))
                    .and_then(|s| elf::section_data(data, s).map_err(ctx))?;
                first_global = (sh.sh_info.get(LE) as usize)
                    .clamp(1, syms.len().max(1))
                    .min(syms.len());
            }
            E::SHT_GNU_VERSYM => versym = elf::table(data, sh, "version symbol").map_err(ctx)?,
            _ => {}
        }
    }
    for sh in shdrs {
        match sh.sh_type.get(LE) {
            E::SHT_GNU_VERDEF => {
                version_names = parse_verdef(data, sh, strtab).map_err(ctx)?;
            }
            E::SHT_DYNAMIC => {
                let dyns: &'static [Dyn] = elf::table(data, sh, "dynamic").map_err(ctx)?;
                for d in dyns {
                    if d.d_tag.get(LE) == E::DT_NEEDED as u64
                        && let Ok(off) = u32::try_from(d.d_val.get(LE))
                        && let Ok(name) = elf::cstr(strtab, off)
                    {
                        needed.push(String::from_utf8_lossy(name).into_owned());
                    }
                    if d.d_tag.get(LE) == E::DT_SONAME as u64 {
                        let off = u32::try_from(d.d_val.get(LE))
                            .map_err(|_| ctx("bad DT_SONAME".into()))?;
                        soname = Some(
                            String::from_utf8_lossy(elf::cstr(strtab, off).map_err(ctx)?)
                                .into_owned(),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    if !versym.is_empty() && versym.len() != syms.len() {
        return Err(ctx(".gnu.version does not match .dynsym".into()));
    }
    let warnings = link_warning_sections(data, eh, shdrs);
    let mut global_names = Vec::with_capacity(syms.len().saturating_sub(first_global));
    for (i, s) in syms.iter().enumerate().skip(first_global) {
        let n = elf::cstr(strtab, s.st_name.get(LE))
            .map_err(|e| ctx(format!("dynamic symbol {i}: {e}")))?;
        global_names.push(Name::new(n));
    }
    let soname = soname.unwrap_or(needed_name);
    Ok(SharedFile {
        soname,
        as_needed,
        syms,
        versym,
        version_names,
        first_global,
        global_names,
        needed,
        objects_before,
        shdrs,
        relro: elf::relro_range(data, eh),
        warnings,
    })
}

/// A shared object's `.gnu.warning.SYMBOL` sections as (`SYMBOL`, text up to its NUL); sections whose names or
/// contents cannot be read give none (the warnings are advice, not part of the link).
fn link_warning_sections(data: Data, eh: &elf::Ehdr, shdrs: &[Shdr]) -> Vec<(Data, Data)> {
    let Some(names) = shdrs
        .get(elf::shstrndx(eh, shdrs))
        .and_then(|sh| elf::section_data(data, sh).ok())
    else {
        return Vec::new();
    };
    (shdrs.iter())
        .filter_map(|sh| {
            let name = elf::cstr(names, sh.sh_name.get(LE)).ok()?;
            let sym = name.strip_prefix(b".gnu.warning.")?;
            let text = elf::section_data(data, sh).ok()?;
            Some((sym, text.split(|&b| b == 0).next().unwrap_or(text)))
        })
        .collect()
}

fn parse_verdef(
    data: Data,
    sh: &Shdr,
    strtab: Data,
) -> std::result::Result<Vec<Option<Data>>, String> {
    let sec = elf::section_data(data, sh)?;
    let mut names = Vec::new();
    let mut off = 0usize;
    for _ in 0..sh.sh_info.get(LE) {
        let bad = || "corrupt .gnu.version_d".to_string();
        let ndx = sec.get(off + 4..off + 6).ok_or_else(bad)?;
        let ndx = u16::from_le_bytes([ndx[0], ndx[1]]) as usize;
        let aux = elf::read_u32(sec, off + 12).ok_or_else(bad)? as usize;
        let next = elf::read_u32(sec, off + 16).ok_or_else(bad)? as usize;
        let name_off = elf::read_u32(sec, off + aux).ok_or_else(bad)?;
        let name = elf::cstr(strtab, name_off)?;
        if names.len() <= ndx {
            names.resize(ndx + 1, None);
        }
        names[ndx] = Some(name);
        if next == 0 {
            break;
        }
        off += next;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zlib(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn decompresses_zlib_and_zstd() {
        let text = b"debug info, debug info, debug info".repeat(50);
        let z = zlib(&text);
        assert_eq!(
            decompress(E::ELFCOMPRESS_ZLIB, &z, text.len() as u64).unwrap(),
            text
        );
        let zs = zstd::bulk::compress(&text, 3).unwrap();
        assert_eq!(
            decompress(E::ELFCOMPRESS_ZSTD, &zs, text.len() as u64).unwrap(),
            text
        );
    }

    #[test]
    fn rejects_bad_compressed_sections() {
        let text = b"0123456789".repeat(20);
        let z = zlib(&text);
        let e = decompress(E::ELFCOMPRESS_ZLIB, &z, text.len() as u64 + 1).unwrap_err();
        assert!(e.contains("holds 200 bytes, its header says 201"), "{e}");
        let e = decompress(E::ELFCOMPRESS_ZLIB, &z, 10).unwrap_err();
        assert!(e.contains("its header says 10"), "{e}");
        let e = decompress(E::ELFCOMPRESS_ZLIB, &z[..z.len() / 2], 200).unwrap_err();
        assert!(e.contains("zlib"), "{e}");
        let e = decompress(E::ELFCOMPRESS_ZSTD, b"not zstd at all", 200).unwrap_err();
        assert!(e.contains("corrupt zstd-compressed section"), "{e}");
        let e = decompress(7, &z, 200).unwrap_err();
        assert!(e.contains("unknown compression type 7"), "{e}");
    }
}
