//! Where in the source a place in an input section is, for error messages: the function that encloses it (from
//! the object's symbol table) and its `file:line` (from the object's DWARF line table), as lld's
//! `>>> referenced by a.c:5 (/src/a.c:5)` / `>>>               a.o:(caller())` lines give them.
//!
//! None of this is read while a link goes well. A message names a place with [`mark`] (or a symbol's definition
//! with [`mark_definition`]), a few bytes standing for (file, section, offset); the pass that reports the
//! messages calls [`render`] on those it shows, which reads the symbol tables and line tables of just the objects
//! named there, each once.

use crate::diag::demangle;
use crate::elf::LE;
use crate::index::{FileId, SecIdx};
use crate::parse::ObjectFile;
use gimli::Reader as _;
use object::elf as E;
use std::collections::HashMap;
use std::fmt::Write;

/// Brackets a marked place in a message: characters of Unicode's private use area, which no message text uses.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// How a place is named after the object's name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// The enclosing symbol, `a.o:(caller())`, or the section and offset when none encloses it (undefined and
    /// duplicate symbols, as lld names them).
    Symbol,
    /// The enclosing function and the section and offset, `a.o:(function caller(): .text+0x21)` (relocation
    /// errors, where the instruction matters).
    Exact,
}

/// A place in section `s` of object `f`, at offset `off`, in a message that [`render`] completes. Where the
/// place sits after `>>> some words `, its source line goes there and the object's name under it, aligned.
pub fn mark(f: FileId, s: SecIdx, off: u64, style: Style) -> String {
    let st = if style == Style::Exact { 'x' } else { 's' };
    format!("{OPEN}{},{},{off:x},{st}{CLOSE}", f.0, s.0)
}

/// The definition of symbol `i` of object `f` (duplicate symbols), as [`mark`] marks a place: named like
/// [`Style::Symbol`], and for a variable with the line of its declaration (data has no line table rows).
pub fn mark_definition(f: FileId, i: usize) -> String {
    format!("{OPEN}{},{i},0,d{CLOSE}", f.0)
}

/// Replaces the places marked in the first `error_limit` messages of `msgs` (all for 0, as `--error-limit`
/// counts) by their text: the others are not shown, and reading their objects' debug information would be
/// wasted. `objects` are the objects the marks' file numbers index.
pub fn render(objects: &[ObjectFile], msgs: &mut [String], error_limit: u32) {
    let shown = match error_limit {
        0 => msgs.len(),
        n => msgs.len().min(n as usize),
    };
    let mut tables: HashMap<usize, Option<LineTable>> = HashMap::new();
    for m in msgs[..shown].iter_mut() {
        if !m.contains(OPEN) {
            continue;
        }
        let mut out = String::with_capacity(m.len() + 64);
        let mut rest = m.as_str();
        while let Some(at) = rest.find(OPEN) {
            out.push_str(&rest[..at]);
            let after = &rest[at + OPEN.len_utf8()..];
            let Some(end) = after.find(CLOSE) else {
                out.push_str(&rest[at..]);
                rest = "";
                break;
            };
            let column = out.len() - out.rfind('\n').map_or(0, |n| n + 1);
            match parse_mark(&after[..end]) {
                Some((f, s, off, style)) if f < objects.len() => {
                    let o = &objects[f];
                    let table = tables.entry(f).or_insert_with(|| LineTable::read(o));
                    let place = match style {
                        Mark::Place(style) => Some((SecIdx::new(s), off, style, None)),
                        // `s` is the symbol's index here.
                        Mark::Definition => o.syms.get(s).map(|sym| {
                            let at = (SecIdx(o.sym_shndx(s)), sym.st_value.get(LE));
                            (at.0, at.1, Style::Symbol, Some(s))
                        }),
                    };
                    if let Some((s, off, style, def)) = place {
                        let at = Place { s, off, style, def };
                        place_text(&mut out, o, table.as_ref(), at, column);
                    }
                }
                _ => out.push_str(&after[..end]),
            }
            rest = &after[end + CLOSE.len_utf8()..];
        }
        out.push_str(rest);
        *m = out;
    }
}

enum Mark {
    Place(Style),
    Definition,
}

fn parse_mark(m: &str) -> Option<(usize, usize, u64, Mark)> {
    let mut it = m.split(',');
    let f = it.next()?.parse().ok()?;
    let s = it.next()?.parse().ok()?;
    let off = u64::from_str_radix(it.next()?, 16).ok()?;
    let style = match it.next()? {
        "x" => Mark::Place(Style::Exact),
        "d" => Mark::Definition,
        _ => Mark::Place(Style::Symbol),
    };
    Some((f, s, off, style))
}

/// A place to name: offset `off` of section `s`, and the symbol defined there when the place is a definition.
struct Place {
    s: SecIdx,
    off: u64,
    style: Style,
    def: Option<usize>,
}

/// Writes the text of a place at `column` of its line: the source line (or the source file's name, without
/// debug information), then the object and symbol under it.
fn place_text(
    out: &mut String,
    o: &ObjectFile,
    table: Option<&LineTable>,
    at: Place,
    column: usize,
) {
    let Place { s, off, style, def } = at;
    // A section index from the file (a symbol's st_shndx) may be special or out of range: name it only.
    let known = s.0 > 0 && s.index() < o.sections.len();
    let variable = def.filter(|&i| {
        matches!(
            o.syms[i].st_type(),
            E::STT_OBJECT | E::STT_TLS | E::STT_COMMON
        )
    });
    let found = match (table, variable) {
        (Some(t), Some(i)) => t.variable(o.sym_name(i)),
        (Some(t), None) if known => t.find(s, off),
        _ => None,
    };
    let source = match &found {
        Some((path, line)) => {
            let file = path.rsplit('/').next().unwrap_or(path);
            if file == path {
                Some(format!("{file}:{line}"))
            } else {
                Some(format!("{file}:{line} ({path}:{line})"))
            }
        }
        None => source_file(o),
    };
    if let Some(src) = source {
        let _ = write!(out, "{src}\n>>>{:1$}", "", column.saturating_sub(3));
    }
    let func = if known {
        enclosing(o, s, off, style == Style::Symbol)
    } else {
        None
    };
    let sec = o.section_name(s.0);
    let _ = match (func, style) {
        (Some(name), Style::Symbol) => write!(out, "{}:({name})", o.name),
        (Some(name), Style::Exact) => write!(out, "{}:(function {name}: {sec}+0x{off:x})", o.name),
        (None, _) => write!(out, "{}:({sec}+0x{off:x})", o.name),
    };
}

/// The name of the source file from the object's first `STT_FILE` symbol (what lld shows without DWARF).
fn source_file(o: &ObjectFile) -> Option<String> {
    let i = (1..o.syms.len().min(o.first_global)).find(|&i| o.syms[i].st_type() == E::STT_FILE)?;
    let name = o.sym_name(i);
    (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
}

/// The demangled name of the symbol of section `s` whose [value, value + size) holds `off`: a function first,
/// then (if `any`) a symbol of any type.
fn enclosing(o: &ObjectFile, s: SecIdx, off: u64, any: bool) -> Option<String> {
    let covers = |i: usize| {
        let sym = &o.syms[i];
        let (v, size) = (sym.st_value.get(LE), sym.st_size.get(LE));
        o.sym_shndx(i) == s.0 && v <= off && off - v < size
    };
    let is = |i: usize, ty: u8| o.syms[i].st_type() == ty;
    let found = (1..o.syms.len())
        .find(|&i| covers(i) && (is(i, E::STT_FUNC) || is(i, E::STT_GNU_IFUNC)))
        .or_else(|| {
            any.then(|| {
                (1..o.syms.len())
                    .find(|&i| covers(i) && !is(i, E::STT_SECTION) && !is(i, E::STT_FILE))
            })
            .flatten()
        })?;
    Some(demangle(o.sym_name(found)))
}

/// Addresses in the object's line table are section offsets relocated against a section symbol; each is tagged
/// with its section in the bits above this shift (`section + 1`), so the rows of one section sort together.
const SECTION_SHIFT: u32 = 40;

fn tagged(s: SecIdx, off: u64) -> u64 {
    ((s.0 as u64 + 1) << SECTION_SHIFT) | (off & ((1 << SECTION_SHIFT) - 1))
}

/// An object's line table: its sequences of rows (address, file, line), in address order within each.
struct LineTable {
    seqs: Vec<Sequence>,
    files: Vec<String>,
    /// For the variables' declarations, read when a message asks.
    dwarf: gimli::Dwarf<Reader>,
}

struct Sequence {
    start: u64,
    end: u64,
    /// (tagged address, index in `files`, line).
    rows: Vec<(u64, u32, u32)>,
}

impl LineTable {
    /// The source file and line of offset `off` in section `s`.
    fn find(&self, s: SecIdx, off: u64) -> Option<(String, u32)> {
        let t = tagged(s, off);
        let seq = self.seqs.iter().find(|q| q.start <= t && t < q.end)?;
        let k = seq.rows.partition_point(|r| r.0 <= t).checked_sub(1)?;
        let (_, file, line) = seq.rows[k];
        (line != 0).then(|| (self.files[file as usize].clone(), line))
    }

    /// The source file and line where the variable whose symbol is `name` is declared: a `DW_TAG_variable` of
    /// that linkage name (C++) or name (C), a definition (with a location) first.
    fn variable(&self, name: &[u8]) -> Option<(String, u32)> {
        let dwarf = &self.dwarf;
        let mut declared = None;
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let mut entries = unit.entries();
            while let Ok(Some(die)) = entries.next_dfs() {
                if die.tag() != gimli::DW_TAG_variable {
                    continue;
                }
                let text = |at| {
                    let v = die.attr_value(at)?;
                    dwarf.attr_string(&unit, v).ok()
                };
                let named = text(gimli::DW_AT_linkage_name)
                    .or_else(|| text(gimli::DW_AT_name))
                    .is_some_and(|n| n.to_slice().is_ok_and(|b| *b == *name));
                let line = die
                    .attr_value(gimli::DW_AT_decl_line)
                    .and_then(|v| v.udata_value());
                let file = match die.attr_value(gimli::DW_AT_decl_file) {
                    Some(gimli::AttributeValue::FileIndex(k)) => Some(k),
                    v => v.and_then(|v| v.udata_value()),
                };
                let (true, Some(line), Some(file)) = (named, line, file) else {
                    continue;
                };
                let header = unit.line_program.as_ref()?.header();
                let comp_dir = unit
                    .comp_dir
                    .as_ref()
                    .and_then(|d| d.to_string_lossy().ok());
                let comp_dir = comp_dir.as_deref().unwrap_or("");
                let Some(path) = file_path(dwarf, &unit, header, file, comp_dir) else {
                    continue;
                };
                let place = (path, line.min(u32::MAX as u64) as u32);
                if die.attr_value(gimli::DW_AT_location).is_some() {
                    return Some(place);
                }
                declared.get_or_insert(place);
            }
        }
        declared
    }

    /// Reads the line tables of `o`'s compilation units; `None` without debug information. A corrupt table
    /// gives the rows read before the error (a message then names places without their source lines).
    fn read(o: &ObjectFile) -> Option<LineTable> {
        let dwarf = gimli::Dwarf::load(|id| Ok::<_, ()>(section(o, id.name()))).ok()?;
        let mut rows = Rows::default();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let _ = rows.add_unit(&dwarf, &unit);
        }
        rows.seqs.sort_by_key(|q| q.start);
        Some(LineTable {
            seqs: rows.seqs,
            files: rows.files,
            dwarf,
        })
    }
}

/// The sequences and file names of a [`LineTable`] as they are read.
#[derive(Default)]
struct Rows {
    seqs: Vec<Sequence>,
    files: Vec<String>,
}

impl Rows {
    fn add_unit(
        &mut self,
        dwarf: &gimli::Dwarf<Reader>,
        unit: &gimli::Unit<Reader>,
    ) -> gimli::Result<()> {
        let Some(program) = unit.line_program.clone() else {
            return Ok(());
        };
        let comp_dir = match &unit.comp_dir {
            Some(d) => d.to_string_lossy()?.into_owned(),
            None => String::new(),
        };
        let mut files: HashMap<u64, u32> = HashMap::new();
        let mut rows = program.rows();
        let mut current: Vec<(u64, u32, u32)> = Vec::new();
        while let Some((header, row)) = rows.next_row()? {
            if row.end_sequence() {
                if let Some(&(start, ..)) = current.first() {
                    self.seqs.push(Sequence {
                        start,
                        end: row.address(),
                        rows: std::mem::take(&mut current),
                    });
                }
                continue;
            }
            let index = row.file_index();
            let file = match files.get(&index) {
                Some(&k) => k,
                None => {
                    let path = file_path(dwarf, unit, header, index, &comp_dir).unwrap_or_default();
                    self.files.push(path);
                    let k = self.files.len() as u32 - 1;
                    files.insert(index, k);
                    k
                }
            };
            let line = row
                .line()
                .map_or(0, |l| l.get().min(u32::MAX as u64) as u32);
            current.push((row.address(), file, line));
        }
        Ok(())
    }
}

/// The path of file `index` of a line program header: its directory (relative ones under the unit's
/// compilation directory) and its name.
fn file_path(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    header: &gimli::LineProgramHeader<Reader>,
    index: u64,
    comp_dir: &str,
) -> Option<String> {
    let entry = header.file(index)?;
    let text = |v| -> Option<String> {
        let r = dwarf.attr_string(unit, v).ok()?;
        Some(r.to_string_lossy().ok()?.into_owned())
    };
    let name = text(entry.path_name())?;
    if name.starts_with('/') {
        return Some(name);
    }
    let mut dir = entry.directory(header).and_then(text).unwrap_or_default();
    if !dir.starts_with('/') && !comp_dir.is_empty() {
        dir = if dir.is_empty() {
            comp_dir.to_string()
        } else {
            format!("{comp_dir}/{dir}")
        };
    }
    Some(if dir.is_empty() {
        name
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    })
}

type Reader = gimli::RelocateReader<gimli::EndianSlice<'static, gimli::LittleEndian>, Relocs>;

/// A DWARF section of `o` by name, with its relocations (an empty one when the object lacks it).
fn section(o: &ObjectFile, name: &str) -> Reader {
    let found = (1..o.sections.len()).find(|&i| o.sec_name(i) == name.as_bytes());
    let (data, relocs) = match found {
        Some(i) => {
            let sec = o.sec(SecIdx::new(i));
            (sec.data(), Relocs::of(o, sec.relas()))
        }
        None => (&[][..], Relocs::default()),
    };
    gimli::RelocateReader::new(gimli::EndianSlice::new(data, gimli::LittleEndian), relocs)
}

/// The relocations of a DWARF section as gimli applies them: by the offset of the field, the value S + A and,
/// for a symbol defined in a section, that section (which tags addresses, [`tagged`]).
#[derive(Clone, Debug, Default)]
struct Relocs(std::rc::Rc<Vec<(u64, u64, Option<SecIdx>)>>);

impl Relocs {
    fn of(o: &ObjectFile, relas: &[crate::elf::Rela]) -> Relocs {
        let mut v: Vec<(u64, u64, Option<SecIdx>)> = relas
            .iter()
            .filter_map(|r| {
                let i = r.r_sym(LE, false) as usize;
                let sym = o.syms.get(i)?;
                let value = sym.st_value.get(LE).wrapping_add(r.r_addend.get(LE) as u64);
                let s = o.sym_shndx(i);
                let in_section = s != 0 && s < E::SHN_LORESERVE as u32;
                Some((r.r_offset.get(LE), value, in_section.then_some(SecIdx(s))))
            })
            .collect();
        v.sort_by_key(|r| r.0);
        Relocs(std::rc::Rc::new(v))
    }

    fn at(&self, offset: usize) -> Option<(u64, Option<SecIdx>)> {
        let k = self
            .0
            .binary_search_by_key(&(offset as u64), |r| r.0)
            .ok()?;
        Some((self.0[k].1, self.0[k].2))
    }
}

impl gimli::Relocate for Relocs {
    fn relocate_address(&self, offset: usize, value: u64) -> gimli::Result<u64> {
        Ok(match self.at(offset) {
            Some((v, Some(s))) => tagged(s, v),
            Some((v, None)) => v,
            None => value,
        })
    }

    fn relocate_offset(&self, offset: usize, value: usize) -> gimli::Result<usize> {
        Ok(self.at(offset).map_or(value, |(v, _)| v as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_read_back() {
        let m = mark(FileId(3), SecIdx(17), 0x2a, Style::Exact);
        let inner = &m[OPEN.len_utf8()..m.len() - CLOSE.len_utf8()];
        assert!(matches!(
            parse_mark(inner),
            Some((3, 17, 0x2a, Mark::Place(Style::Exact)))
        ));
        let d = mark_definition(FileId(1), 9);
        let inner = &d[OPEN.len_utf8()..d.len() - CLOSE.len_utf8()];
        assert!(matches!(
            parse_mark(inner),
            Some((1, 9, 0, Mark::Definition))
        ));
    }

    #[test]
    fn places_without_symbols_or_debug_information_name_the_section() {
        let mut o = ObjectFile::default();
        o.name = "a.o".into();
        let mut msgs = vec![
            format!(
                "undefined symbol: x\n>>> referenced by {}",
                mark(FileId(0), SecIdx(5), 0x21, Style::Symbol)
            ),
            format!(
                "shown later {}",
                mark(FileId(0), SecIdx(5), 0, Style::Symbol)
            ),
        ];
        render(std::slice::from_ref(&o), &mut msgs, 1);
        assert_eq!(
            msgs[0],
            "undefined symbol: x\n>>> referenced by a.o:(section 5+0x21)"
        );
        // Past the error limit: left as it was, never printed.
        assert!(msgs[1].contains(OPEN));
    }

    #[test]
    fn tags_keep_sections_apart() {
        assert!(tagged(SecIdx(1), u32::MAX as u64) < tagged(SecIdx(2), 0));
        assert_eq!(tagged(SecIdx(1), 5) - tagged(SecIdx(1), 0), 5);
    }
}
