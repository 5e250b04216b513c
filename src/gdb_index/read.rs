//! One input's part of the index, read with gimli from its own debug sections (decompressed where they were
//! `SHF_COMPRESSED`): the input's DWARF holds zeros and addends where the relocations go, so every address and
//! offset gimli reads is resolved through the input's relocations (`Relocs`): an address to the output address of
//! its symbol, or to a tombstone where the symbol's section is not in the output (`--gc-sections`, a COMDAT group
//! that lost), whose ranges are dropped; an offset into another debug section to its offset in the input's.

use super::names::Language;
use super::{FileIndex, Name};
use crate::elf::{LE, Rela};
use crate::gc::Liveness;
use crate::index::{FileId, SecIdx};
use crate::layout::Layout;
use crate::resolve::Resolved;
use crate::synthetic::gdb_index::{Area, Unit};
use gimli::{EndianSlice, LittleEndian, RelocateReader, UnitType};
use object::elf as E;

pub(super) type Slice = EndianSlice<'static, LittleEndian>;
pub(super) type Reader<'a> = RelocateReader<Slice, Relocs<'a>>;
pub(super) type Dwarf<'a> = gimli::Dwarf<Reader<'a>>;

/// The address a relocation against a symbol whose section is not in the output reads as: DWARF 5's tombstone
/// -2, which gimli skips in range lists (and every offset pair after a base address of it), and `push_range` drops
/// in a unit's single range. Not -1: in `.debug_ranges` (DWARF 4) a begin of -1 selects a new base address, which
/// would make the dead range's end the base of the entries after it.
const DEAD: u64 = u64::MAX - 1;

/// The debug sections the index reads, by name.
const WANTED: [&[u8]; 11] = [
    b".debug_info",
    b".debug_abbrev",
    b".debug_str",
    b".debug_line",
    b".debug_line_str",
    b".debug_str_offsets",
    b".debug_addr",
    b".debug_ranges",
    b".debug_rnglists",
    b".debug_gnu_pubnames",
    b".debug_gnu_pubtypes",
];

/// Where an input's relocations resolve: the layout's addresses of its sections.
pub(super) struct Target<'a> {
    res: &'a Resolved,
    lay: &'a Layout,
    f: FileId,
}

/// The relocations of one input section, for gimli's `RelocateReader`, found by their offsets as lld finds them:
/// assemblers write them in offset order, so a binary search finds each, and the entry after the last one found
/// is tried first (range lists are read in order). A table out of order (no known tool makes one) can only make
/// the index wrong, never the program. Checking every table's order first read all of the inputs'
/// `.rela.debug_info` and `.rela.debug_ranges`, most of the index's time, for the few entries the index needs.
#[derive(Clone, Copy)]
pub(super) struct Relocs<'a> {
    target: &'a Target<'a>,
    relas: &'a [Rela],
    /// Where the next lookup starts.
    next: &'a std::cell::Cell<usize>,
}

impl std::fmt::Debug for Relocs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} relocations", self.relas.len())
    }
}

impl Relocs<'_> {
    fn at(&self, offset: usize) -> Option<&Rela> {
        let offset = offset as u64;
        let off = |k: usize| self.relas.get(k).map(|r| r.r_offset.get(LE));
        let hint = self.next.get();
        // The hint's entry, or none at all where the offset falls between it and the one before.
        let k = match off(hint) {
            Some(o) if o == offset => hint,
            Some(o) if o > offset && (hint == 0 || off(hint - 1) < Some(offset)) => return None,
            _ => self.relas.partition_point(|r| r.r_offset.get(LE) < offset),
        };
        let r = self.relas.get(k).filter(|r| r.r_offset.get(LE) == offset);
        self.next.set(k + usize::from(r.is_some()));
        r
    }
}

impl gimli::Relocate<usize> for Relocs<'_> {
    fn relocate_address(&self, offset: usize, value: u64) -> gimli::Result<u64> {
        Ok(self.at(offset).map_or(value, |r| self.target.address(r)))
    }
    fn relocate_offset(&self, offset: usize, value: usize) -> gimli::Result<usize> {
        Ok(self
            .at(offset)
            .map_or(value, |r| self.target.offset(r) as usize))
    }
}

impl Target<'_> {
    /// The output address a relocation in the input's DWARF stands for (`DEAD` where its symbol's section is
    /// discarded or it names none).
    fn address(&self, r: &Rela) -> u64 {
        let o = &self.res.objects[self.f.index()];
        let i = r.r_sym(LE, false) as usize;
        let addend = r.r_addend.get(LE) as u64;
        let Some(sym) = o.syms.get(i) else {
            return DEAD;
        };
        let value = sym.st_value.get(LE).wrapping_add(addend);
        match o.sym_shndx(i) {
            shndx if shndx == E::SHN_ABS as u32 => value,
            0 => DEAD,
            shndx => crate::layout::section_offset_addr(self.lay, self.f, SecIdx(shndx), value)
                .filter(|_| (shndx as usize) < o.sections.len())
                .unwrap_or(DEAD),
        }
    }
    /// The offset a relocation into another debug section of the input stands for: its symbol's value (the
    /// section symbol's 0) plus the addend.
    fn offset(&self, r: &Rela) -> u64 {
        let o = &self.res.objects[self.f.index()];
        let i = r.r_sym(LE, false) as usize;
        let value = o.syms.get(i).map_or(0, |s| s.st_value.get(LE));
        value.wrapping_add(r.r_addend.get(LE) as u64)
    }
}

/// The input's debug sections the index reads (`WANTED`'s order; `NONE` where it has none): of each name, the
/// first in the link that is in no section group. A section in a group is taken only where the name has no other:
/// DWARF 5 type units (`-fdebug-types-section`) come in `.debug_info` sections of COMDAT groups, beside the
/// compile unit's own, and the index lists compile units only (as lld's does). Also whether the input has type
/// units (there, or in `.debug_types`).
fn wanted_sections(res: &Resolved, f: FileId) -> ([SecIdx; WANTED.len()], bool) {
    let mut found = [SecIdx::NONE; WANTED.len()];
    let mut grouped = [true; WANTED.len()];
    let mut type_units = false;
    let o = &res.objects[f.index()];
    if !res.object_live[f.index()] {
        return (found, false);
    }
    for s in o.debug_secs.clone().map(SecIdx) {
        // An allocated section's GC class is `No` or `IfBracketed` (`names::root_by_header`), a debug section's is
        // not: that class is read from the compact section list, before the header and the name.
        if matches!(
            o.gc_root(s),
            crate::names::GcRoot::No | crate::names::GcRoot::IfBracketed
        ) {
            continue;
        }
        let sec = o.sec(s);
        if sec.flags() & E::SHF_ALLOC as u64 != 0 {
            continue;
        }
        let name = o.sec_name(s.index());
        if !name.starts_with(b".debug_") || res.comdat_discarded[f.index()][s.index()] {
            continue;
        }
        let in_group = sec.flags() & E::SHF_GROUP as u64 != 0;
        type_units |= name == b".debug_types" || (in_group && name == b".debug_info");
        if let Some(k) = WANTED.iter().position(|w| *w == name)
            && (found[k] == SecIdx::NONE || (grouped[k] && !in_group))
        {
            found[k] = s;
            grouped[k] = in_group;
        }
    }
    (found, type_units)
}

/// The work of reading input `f`, for splitting the inputs among threads: the size of the object, most of which
/// is DWARF in a debug build. Its `.debug_info`'s size was a closer measure, but finding it walked every section
/// name of every input on one thread before the reading started.
pub(super) fn weight(res: &Resolved, f: FileId) -> u64 {
    match res.object_live[f.index()] {
        true => 1 + res.objects[f.index()].data.len() as u64 / 64,
        false => 1,
    }
}

/// Reads input `f`'s part of the index.
pub(super) fn file(
    res: &Resolved,
    live: &Liveness,
    lay: &Layout,
    f: FileId,
) -> Result<FileIndex, String> {
    let (secs, type_units) = wanted_sections(res, f);
    let info = secs[0];
    // gdb resolves a type unit's signature through the index's type unit list, which version 7 fills from
    // `.debug_types` only (lld leaves it empty, and gdb then prints such types as unknown): with type units the
    // index carries no names, so that gdb reads the DWARF itself.
    let mut out = FileIndex {
        unnamed: type_units,
        ..FileIndex::default()
    };
    if info == SecIdx::NONE || !live.is_live(f, info) {
        return Ok(out);
    }
    let Some((osec, base)) = lay.place(f, info) else {
        return Ok(out);
    };
    if lay.osecs[osec.index()].name != b".debug_info" {
        return Ok(out);
    }
    let o = &res.objects[f.index()];
    let target = Target { res, lay, f };
    // Per section, and one for the sections gimli asks for that the index does not read.
    let next: [std::cell::Cell<usize>; WANTED.len() + 1] = Default::default();
    let reader = |k: usize| -> Reader {
        let s = secs.get(k).copied().unwrap_or(SecIdx::NONE);
        let (data, relas) = match s {
            SecIdx::NONE => (&[][..], &[][..]),
            s => (o.sec(s).data(), o.sec(s).relas()),
        };
        RelocateReader::new(
            EndianSlice::new(data, LittleEndian),
            Relocs {
                target: &target,
                relas,
                next: &next[k.min(WANTED.len())],
            },
        )
    };
    let dwarf: Dwarf = gimli::Dwarf::load(|id| -> gimli::Result<Reader> {
        let name = id.name().as_bytes();
        Ok(reader(
            WANTED.iter().position(|w| *w == name).unwrap_or(usize::MAX),
        ))
    })
    .map_err(|e| e.to_string())?;
    let has_pubnames = secs[9] != SecIdx::NONE || secs[10] != SecIdx::NONE;
    let abbrev = (secs[1] != SecIdx::NONE).then(|| o.sec(secs[1]).data());
    let in_offsets =
        units(&dwarf, abbrev, base, has_pubnames, &mut out).map_err(|e| e.to_string())?;
    if has_pubnames {
        for k in [9, 10] {
            if secs[k] != SecIdx::NONE {
                super::names::from_pubnames(reader(k), &in_offsets, &mut out.names)
                    .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(WANTED[k])))?;
            }
        }
    }
    out.shard_names();
    Ok(out)
}

/// Reads the compile units (type units left out, as lld does): each one's offset in the output and length, its
/// code ranges, and where the input has no name tables, its names from its DIEs. Returns the units' offsets in
/// the input's `.debug_info`, which the name tables refer to.
fn units(
    dwarf: &Dwarf,
    abbrev: Option<&[u8]>,
    base: u64,
    has_pubnames: bool,
    out: &mut FileIndex,
) -> gimli::Result<Vec<u64>> {
    let mut in_offsets = Vec::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next()? {
        if matches!(
            header.type_(),
            UnitType::Type { .. } | UnitType::SplitType { .. }
        ) {
            continue;
        }
        let in_off = header.offset().0 as u64;
        let no = out.units.len() as u32;
        out.units.push(Unit {
            offset: base + in_off,
            length: header.length_including_self() as u64,
        });
        in_offsets.push(in_off);
        // The root DIE is read with its abbreviation alone (a C++ unit's table holds hundreds); the whole table
        // only for a C unit whose names come from its DIEs.
        let abbrevs = match abbrev {
            Some(data) => std::sync::Arc::new(root_abbreviation(data, &header)?),
            None => dwarf.abbreviations(&header)?,
        };
        let (unit, root) = bare_unit(dwarf, header, abbrevs)?;
        unit_ranges(dwarf, &unit, &root, no, &mut out.areas)?;
        if has_pubnames {
            continue;
        }
        match super::names::language(root.language) {
            Language::C => {
                let whole = dwarf.unit(unit.header.clone())?;
                super::names::from_dies(dwarf, &whole, no, &mut out.names)?;
            }
            Language::Assembler => {}
            Language::Other => out.unnamed = true,
        }
    }
    Ok(in_offsets)
}

/// What the index reads of a unit's root DIE besides the unit's bases: its code ranges and its language.
#[derive(Default)]
struct Root<'a> {
    low: Option<gimli::AttributeValue<Reader<'a>>>,
    high: Option<gimli::AttributeValue<Reader<'a>>>,
    ranges: Option<gimli::AttributeValue<Reader<'a>>>,
    language: Option<gimli::DwLang>,
}

/// A unit with what its ranges are read by (the bases of its offsets into `.debug_addr`, `.debug_rnglists` and
/// `.debug_str_offsets`, and its low pc, the base address of its ranges), and what the index needs of its root
/// DIE, read once: each reading looks its relocations up again. gimli's `Unit::new` also reads the unit's name,
/// directory and line program header, which the index does not use: a Rust unit's file table made that a tenth
/// of the index's time.
fn bare_unit<'a>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Reader<'a>>,
    abbreviations: std::sync::Arc<gimli::Abbreviations>,
) -> gimli::Result<(gimli::Unit<Reader<'a>>, Root<'a>)> {
    use gimli::AttributeValue as V;
    let (encoding, file) = (header.encoding(), dwarf.file_type);
    let mut unit = gimli::Unit {
        abbreviations,
        name: None,
        comp_dir: None,
        low_pc: 0,
        str_offsets_base: gimli::DebugStrOffsetsBase::default_for_encoding_and_file(encoding, file),
        addr_base: gimli::DebugAddrBase(0),
        loclists_base: gimli::DebugLocListsBase::default_for_encoding_and_file(encoding, file),
        rnglists_base: gimli::DebugRngListsBase::default_for_encoding_and_file(encoding, file),
        line_program: None,
        dwo_id: None,
        header,
    };
    let mut root = Root::default();
    {
        let mut cursor = unit.header.entries(&unit.abbreviations);
        let die = cursor.next_dfs()?.ok_or(gimli::Error::MissingUnitDie)?;
        for attr in die.attrs() {
            match (attr.name(), attr.value()) {
                (gimli::DW_AT_low_pc, v) => root.low = Some(v),
                (gimli::DW_AT_high_pc, v) => root.high = Some(v),
                (gimli::DW_AT_ranges, v) => root.ranges = Some(v),
                (_, V::Language(l)) => root.language = Some(l),
                (_, V::DebugStrOffsetsBase(b)) => unit.str_offsets_base = b,
                (_, V::DebugAddrBase(b)) => unit.addr_base = b,
                (_, V::DebugLocListsBase(b)) => unit.loclists_base = b,
                (_, V::DebugRngListsBase(b)) => unit.rnglists_base = b,
                _ => {}
            }
        }
    }
    if let Some(v) = root.low.clone()
        && let Some(addr) = dwarf.attr_address(&unit, v)?
    {
        unit.low_pc = addr;
    }
    Ok((unit, root))
}

/// The abbreviation of a unit's root DIE, alone: the table is read from the unit's offset only up to the entry of
/// the root's code (compilers give it the first), and that entry parsed by gimli as a table of one.
fn root_abbreviation(
    data: &[u8],
    header: &gimli::UnitHeader<Reader>,
) -> gimli::Result<gimli::Abbreviations> {
    use gimli::Reader as _;
    let code = header.range_from(header.root_offset()..)?.read_uleb128()?;
    let start = header.debug_abbrev_offset().0;
    let mut r = EndianSlice::new(data.get(start..).unwrap_or(&[]), LittleEndian);
    loop {
        let entry = r;
        let this = r.read_uleb128()?;
        if this == 0 {
            return Err(gimli::Error::InvalidAbbreviationCode(code));
        }
        r.read_uleb128()?; // tag
        r.read_u8()?; // children
        loop {
            let (name, form) = (r.read_uleb128()?, r.read_uleb128()?);
            if form == gimli::DW_FORM_implicit_const.0 as u64 {
                r.read_sleb128()?;
            }
            if name == 0 && form == 0 {
                break;
            }
        }
        if this == code {
            let len = r.offset_from(entry);
            let mut one = entry.slice()[..len].to_vec();
            one.push(0);
            return gimli::DebugAbbrev::new(&one, LittleEndian)
                .abbreviations(gimli::DebugAbbrevOffset(0));
        }
    }
}

/// The code ranges of a unit's root DIE: `DW_AT_low_pc` with `DW_AT_high_pc` (an address or a length), or
/// `DW_AT_ranges` (`.debug_ranges`, `.debug_rnglists`, `DW_FORM_rnglistx`); addresses through `.debug_addr` for
/// `DW_FORM_addrx`. Ranges in discarded sections are dropped, and so are empty ones.
fn unit_ranges(
    dwarf: &Dwarf,
    unit: &gimli::Unit<Reader>,
    root: &Root,
    no: u32,
    out: &mut Vec<Area>,
) -> gimli::Result<()> {
    if let Some(v) = root.ranges.clone() {
        if let Some(mut list) = dwarf.attr_ranges(unit, v)? {
            while let Some(r) = list.next()? {
                push_range(out, r.begin, r.end, no);
            }
        }
        return Ok(());
    }
    let Some(low) = root.low.is_some().then_some(unit.low_pc) else {
        return Ok(());
    };
    let end = match root.high.clone() {
        Some(gimli::AttributeValue::Udata(n)) => low.checked_add(n),
        Some(v) => dwarf.attr_address(unit, v)?,
        None => None,
    };
    if let Some(end) = end {
        push_range(out, low, end, no);
    }
    Ok(())
}

fn push_range(out: &mut Vec<Area>, low: u64, high: u64, unit: u32) {
    if low < DEAD && high <= DEAD && low < high && low != 0 {
        out.push(Area { low, high, unit });
    }
}

/// A name and its hash.
pub(super) fn name(name: &'static [u8], attrs: u8, unit: u32) -> Name {
    Name {
        key: crate::names::hash_name(name),
        name,
        attrs,
        unit,
    }
}
