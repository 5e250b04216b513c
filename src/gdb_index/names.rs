//! The names of a unit: from the input's `.debug_gnu_pubnames`/`.debug_gnu_pubtypes` (gcc's and clang's
//! `-ggnu-pubnames`), whose attribute byte is the index's; or, for a C unit without them (plain `-g`), from the
//! unit's DIEs: its top-level functions, variables, types and enumerators. Without them gdb, trusting the index,
//! would not find a type or a static variable of such a unit (lld and mold leave those units' names out).

use super::Name;
use super::read::{Dwarf, Reader, name};
use crate::synthetic::gdb_index::{KIND_FUNCTION, KIND_TYPE, KIND_VARIABLE, STATIC};
use gimli::Reader as _;

/// Reads a name table: sets of (offset of the unit in the input's `.debug_info`, its length, then entries of
/// (DIE offset, attribute byte, name) ended by a zero offset). A set whose unit is not one the index lists (a type
/// unit) is skipped. The set's header is read through the input's relocations (its unit offset has one); its
/// entries, which have none, straight from the bytes: a large C++ input has tens of thousands of them.
pub(super) fn from_pubnames(
    mut r: Reader,
    in_offsets: &[u64],
    out: &mut Vec<Name>,
) -> gimli::Result<()> {
    while !r.is_empty() {
        let (length, format) = r.read_initial_length()?;
        let mut set = r.split(length)?;
        let _version = set.read_u16()?;
        let unit_off = set.read_offset(format)? as u64;
        let _unit_len = set.read_offset(format)?;
        let unit = in_offsets.binary_search(&unit_off).ok();
        let entries = set.inner().slice();
        let Some(unit) = unit else {
            continue;
        };
        read_entries(entries, format.word_size() as usize, unit as u32, out)?;
    }
    Ok(())
}

/// The entries of one set (`from_pubnames`), offsets `word` bytes long.
fn read_entries(
    mut entries: &'static [u8],
    word: usize,
    unit: u32,
    out: &mut Vec<Name>,
) -> gimli::Result<()> {
    let eof = || gimli::Error::UnexpectedEof(gimli::ReaderOffsetId(0));
    loop {
        let (die, rest) = entries.split_at_checked(word).ok_or_else(eof)?;
        if die.iter().all(|&b| b == 0) {
            return Ok(());
        }
        let (&attrs, rest) = rest.split_first().ok_or_else(eof)?;
        let end = memchr::memchr(0, rest).ok_or_else(eof)?;
        out.push(name(&rest[..end], attrs, unit));
        entries = &rest[end + 1..];
    }
}

/// What the index can name of a unit without name tables.
pub(super) enum Language {
    /// Its DIEs' names (`from_dies`).
    C,
    /// Nothing gdb looks up through an index.
    Assembler,
    /// Names gdb looks up in forms the DIE walk does not make (C++'s qualified names, members and nested types,
    /// Rust's paths): the index leaves every name out.
    Other,
}

/// The kind of a unit's language (`DW_AT_language` of its root DIE).
pub(super) fn language(lang: Option<gimli::DwLang>) -> Language {
    match lang {
        Some(
            gimli::DW_LANG_C89
            | gimli::DW_LANG_C
            | gimli::DW_LANG_C99
            | gimli::DW_LANG_C11
            | gimli::DW_LANG_C17,
        ) => Language::C,
        Some(gimli::DW_LANG_Mips_Assembler) => Language::Assembler,
        _ => Language::Other,
    }
}

/// Reads the names of C unit `no` from its DIEs (`unit` with its whole abbreviation table).
pub(super) fn from_dies(
    dwarf: &Dwarf,
    unit: &gimli::Unit<Reader>,
    no: u32,
    out: &mut Vec<Name>,
) -> gimli::Result<()> {
    let mut tree = unit.entries_tree(None)?;
    let root = tree.root()?;
    let mut children = root.children();
    while let Some(child) = children.next()? {
        let e = child.entry();
        let text = match e.attr_value(gimli::DW_AT_name) {
            Some(v) => dwarf.attr_string(unit, v)?.inner().slice(),
            None => continue,
        };
        if e.attr_value(gimli::DW_AT_declaration).is_some() {
            continue;
        }
        // gcc's name tables: functions and variables static unless external, types static.
        let linkage = if e.attr_value(gimli::DW_AT_external).is_some() {
            0
        } else {
            STATIC
        };
        let attrs = match e.tag() {
            gimli::DW_TAG_subprogram => KIND_FUNCTION | linkage,
            gimli::DW_TAG_variable => KIND_VARIABLE | linkage,
            gimli::DW_TAG_base_type
            | gimli::DW_TAG_structure_type
            | gimli::DW_TAG_union_type
            | gimli::DW_TAG_typedef => KIND_TYPE | STATIC,
            gimli::DW_TAG_enumeration_type => {
                out.push(name(text, KIND_TYPE | STATIC, no));
                enumerators(dwarf, unit, child, no, out)?;
                continue;
            }
            _ => continue,
        };
        out.push(name(text, attrs, no));
    }
    Ok(())
}

/// An enumeration's enumerators, named in the enclosing scope (static variables, as gdb's own index has them).
fn enumerators(
    dwarf: &Dwarf,
    unit: &gimli::Unit<Reader>,
    node: gimli::EntriesTreeNode<Reader>,
    no: u32,
    out: &mut Vec<Name>,
) -> gimli::Result<()> {
    let mut children = node.children();
    while let Some(child) = children.next()? {
        let e = child.entry();
        if e.tag() != gimli::DW_TAG_enumerator {
            continue;
        }
        if let Some(v) = e.attr_value(gimli::DW_AT_name) {
            let text = dwarf.attr_string(unit, v)?.inner().slice();
            out.push(name(text, KIND_VARIABLE | STATIC, no));
        }
    }
    Ok(())
}
