//! The names of a unit: from the input's `.debug_gnu_pubnames`/`.debug_gnu_pubtypes` (gcc's and clang's
//! `-ggnu-pubnames`), whose attribute byte is the index's; or, for an input without them (plain `-g`, rustc), from
//! the unit's DIEs: its top-level functions, variables, types and enumerators, and those of its namespaces,
//! qualified. Without them gdb, trusting the index, would not find a type or a static variable of such a unit
//! (lld and mold leave those units' names out).

use super::Name;
use super::read::{Dwarf, Reader, name};
use crate::synthetic::gdb_index::{KIND_FUNCTION, KIND_TYPE, KIND_VARIABLE, STATIC};
use gimli::Reader as _;
use std::borrow::Cow;

/// Reads a name table: sets of (offset of the unit in the input's `.debug_info`, its length, then entries of
/// (DIE offset, attribute byte, name) ended by a zero offset). A set whose unit is not one the index lists (a type
/// unit) is skipped.
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
        loop {
            let die = set.read_offset(format)?;
            if die == 0 {
                break;
            }
            let attrs = set.read_u8()?;
            let text = set.read_null_terminated_slice()?;
            if let Some(unit) = unit {
                out.push(name(
                    Cow::Borrowed(text.inner().slice()),
                    attrs,
                    unit as u32,
                ));
            }
        }
    }
    Ok(())
}

/// Reads the names of unit `no` from its DIEs, for a C unit; returns false, reading nothing, for a unit of
/// another language, whose names gdb looks up in forms this walk does not make (C++ members and nested types,
/// Rust's paths).
pub(super) fn from_dies(
    dwarf: &Dwarf,
    unit: &gimli::Unit<Reader>,
    no: u32,
    out: &mut Vec<Name>,
) -> gimli::Result<bool> {
    let mut tree = unit.entries_tree(None)?;
    let root = tree.root()?;
    let lang = match root.entry().attr_value(gimli::DW_AT_language) {
        Some(gimli::AttributeValue::Language(l)) => Some(l),
        _ => None,
    };
    if lang == Some(gimli::DW_LANG_Mips_Assembler) {
        // Assembler units name nothing gdb looks up through an index.
        return Ok(true);
    }
    if !lang.is_some_and(is_c) {
        return Ok(false);
    }
    let cpp = lang.is_some_and(is_cpp);
    let walk = Walk {
        dwarf,
        unit,
        no,
        cpp,
    };
    walk.children(root, &[], out)?;
    Ok(true)
}

fn is_c(l: gimli::DwLang) -> bool {
    matches!(
        l,
        gimli::DW_LANG_C89
            | gimli::DW_LANG_C
            | gimli::DW_LANG_C99
            | gimli::DW_LANG_C11
            | gimli::DW_LANG_C17
    )
}

fn is_cpp(l: gimli::DwLang) -> bool {
    matches!(
        l,
        gimli::DW_LANG_C_plus_plus
            | gimli::DW_LANG_C_plus_plus_03
            | gimli::DW_LANG_C_plus_plus_11
            | gimli::DW_LANG_C_plus_plus_14
            | gimli::DW_LANG_C_plus_plus_17
            | gimli::DW_LANG_C_plus_plus_20
    )
}

struct Walk<'d, 'a> {
    dwarf: &'d Dwarf<'a>,
    unit: &'d gimli::Unit<Reader<'a>>,
    no: u32,
    cpp: bool,
}

impl<'a> Walk<'_, 'a> {
    /// The names among the children of `node`, qualified by `prefix` (`ns::` for a namespace's).
    fn children(
        &self,
        node: gimli::EntriesTreeNode<Reader<'a>>,
        prefix: &[u8],
        out: &mut Vec<Name>,
    ) -> gimli::Result<()> {
        let mut children = node.children();
        while let Some(child) = children.next()? {
            let e = child.entry();
            let tag = e.tag();
            let declaration = e.attr_value(gimli::DW_AT_declaration).is_some();
            let specification = e.attr_value(gimli::DW_AT_specification).is_some();
            let external = e.attr_value(gimli::DW_AT_external).is_some();
            let text = match e.attr_value(gimli::DW_AT_name) {
                Some(v) => Some(self.dwarf.attr_string(self.unit, v)?.inner().slice()),
                None => None,
            };
            if tag == gimli::DW_TAG_namespace {
                let text = text.unwrap_or(b"(anonymous namespace)");
                self.push(prefix, text, KIND_TYPE, out);
                let inner = [prefix, text, b"::"].concat();
                self.children(child, &inner, out)?;
                continue;
            }
            let Some(text) = text else { continue };
            if declaration || specification {
                continue;
            }
            let attrs = match tag {
                gimli::DW_TAG_subprogram => KIND_FUNCTION | if external { 0 } else { STATIC },
                gimli::DW_TAG_variable => KIND_VARIABLE | if external { 0 } else { STATIC },
                gimli::DW_TAG_base_type
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_typedef
                | gimli::DW_TAG_subrange_type => KIND_TYPE | self.type_static(),
                gimli::DW_TAG_enumeration_type => {
                    self.push(prefix, text, KIND_TYPE | self.type_static(), out);
                    self.enumerators(child, prefix, out)?;
                    continue;
                }
                _ => continue,
            };
            self.push(prefix, text, attrs, out);
        }
        Ok(())
    }

    /// C's types are local to their unit (static, as gcc's name tables mark them); C++'s are global, but for
    /// the base types.
    fn type_static(&self) -> u8 {
        if self.cpp { 0 } else { STATIC }
    }

    /// An enumeration's enumerators, named in the enclosing scope.
    fn enumerators(
        &self,
        node: gimli::EntriesTreeNode<Reader<'a>>,
        prefix: &[u8],
        out: &mut Vec<Name>,
    ) -> gimli::Result<()> {
        let mut children = node.children();
        while let Some(child) = children.next()? {
            let e = child.entry();
            if e.tag() != gimli::DW_TAG_enumerator {
                continue;
            }
            if let Some(v) = e.attr_value(gimli::DW_AT_name) {
                let text = self.dwarf.attr_string(self.unit, v)?.inner().slice();
                self.push(prefix, text, KIND_VARIABLE | STATIC, out);
            }
        }
        Ok(())
    }

    fn push(&self, prefix: &[u8], text: &'static [u8], attrs: u8, out: &mut Vec<Name>) {
        let full = if prefix.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned([prefix, text].concat())
        };
        out.push(name(full, attrs, self.no));
    }
}
