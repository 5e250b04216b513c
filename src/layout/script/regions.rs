//! `MEMORY` regions during the walk: each one's origin, length and next free address; `REGION_ALIAS` names; and
//! the region GNU ld gives a section that names none: the first whose attributes accept the section's flags.

use super::super::OutputSection;
use crate::script::ast::Region as Declared;
use object::elf as E;

/// A region's attributes as GNU ld reads them: `r` read-only, `w` writable data, `x` code, `a` allocated, `i`/`l`
/// loaded; those after a `!` must not hold.
const READONLY: u8 = 1;
const DATA: u8 = 2;
const CODE: u8 = 4;
const ALLOC: u8 = 8;
const LOAD: u8 = 16;

pub(super) struct Region {
    pub name: String,
    pub origin: u64,
    pub length: u64,
    /// The next free address.
    pub next: u64,
    flags: u8,
    not_flags: u8,
    /// Where the first section that did not fit is and its words (GNU ld reports one per region, then by how much
    /// the region overflowed once every section is placed).
    pub full: Option<String>,
}

#[derive(Default)]
pub(super) struct Regions {
    list: Vec<Region>,
    /// `REGION_ALIAS(alias, region)`s.
    aliases: Vec<(String, String)>,
}

impl Regions {
    pub fn new(aliases: &[(String, String)]) -> Regions {
        Regions {
            list: Vec::new(),
            aliases: aliases.to_vec(),
        }
    }

    pub fn add(&mut self, r: &Declared, origin: u64, length: u64) {
        let (flags, not_flags) = attributes(&r.attributes);
        self.list.push(Region {
            name: r.name.clone(),
            origin,
            length,
            next: origin,
            flags,
            not_flags,
            full: None,
        });
    }

    /// A region a section names that `MEMORY` does not declare: GNU ld makes it (at 0, unbounded, no attributes)
    /// and warns.
    pub fn add_undeclared(&mut self, name: &str) {
        self.list.push(Region {
            name: name.to_string(),
            origin: 0,
            length: u64::MAX,
            next: 0,
            flags: 0,
            not_flags: 0,
            full: None,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The regions a section did not fit in, with what GNU ld says of each: the first section that did not fit, and
    /// by how much the region overflowed after all of its sections.
    pub fn overflows(&self) -> Vec<String> {
        (self.list.iter())
            .filter_map(|r| {
                let by = r.next.saturating_sub(r.origin).saturating_sub(r.length);
                let unit = if by == 1 { "byte" } else { "bytes" };
                let full = r.full.as_ref()?;
                Some(format!(
                    "{full}; region `{}' overflowed by {by} {unit}",
                    r.name
                ))
            })
            .collect()
    }

    /// The region named `name`, or the one it is an alias of.
    pub fn find(&self, name: &str) -> Option<usize> {
        let mut name = name;
        // An alias may name another alias; a cycle ends after as many steps as there are aliases.
        for _ in 0..=self.aliases.len() {
            if let Some(i) = self.list.iter().position(|r| r.name == name) {
                return Some(i);
            }
            name = &self.aliases.iter().find(|a| a.0 == name)?.1;
        }
        None
    }

    /// The region of an allocated section that names none: the first whose attributes take its flags, as GNU
    /// ld's `lang_memory_default`; `None` for the location counter.
    pub fn by_attributes(&self, o: &OutputSection) -> Option<usize> {
        let f = section_flags(o);
        self.list
            .iter()
            .position(|r| r.flags & f != 0 && r.not_flags & f == 0)
    }

    /// Every region's origin and length by each of its names (aliases too), for `ORIGIN` and `LENGTH` after the
    /// walk (`--defsym`).
    pub fn named(&self) -> Vec<(String, u64, u64)> {
        let names = (self.list.iter().map(|r| &r.name)).chain(self.aliases.iter().map(|a| &a.0));
        names
            .filter_map(|n| {
                let r = self.get(self.find(n)?);
                Some((n.clone(), r.origin, r.length))
            })
            .collect()
    }

    pub fn get(&self, i: usize) -> &Region {
        &self.list[i]
    }

    pub fn get_mut(&mut self, i: usize) -> &mut Region {
        &mut self.list[i]
    }
}

/// The attribute letters' flags, and those negated.
fn attributes(text: &str) -> (u8, u8) {
    let (mut flags, mut not_flags, mut negated) = (0, 0, false);
    for c in text.chars() {
        let f = match c.to_ascii_lowercase() {
            '!' => {
                negated = !negated;
                continue;
            }
            'r' => READONLY,
            'w' => DATA,
            'x' => CODE,
            'a' => ALLOC,
            'i' | 'l' => LOAD,
            _ => 0,
        };
        match negated {
            true => not_flags |= f,
            false => flags |= f,
        }
    }
    (flags, not_flags)
}

/// An output section's flags in the attributes' terms, as BFD derives them from ELF's: loaded unless NOBITS, read-
/// only unless writable, code if executable, else data if loaded; and data if writable (GNU ld's
/// `lang_memory_default`: so `.bss` goes to a `w` region).
fn section_flags(o: &OutputSection) -> u8 {
    let alloc = o.is_alloc();
    let load = alloc && !o.is_nobits();
    let mut f = if alloc { ALLOC } else { 0 };
    if load {
        f |= LOAD;
    }
    if o.flags & E::SHF_WRITE as u64 == 0 {
        f |= READONLY;
    }
    if o.flags & E::SHF_EXECINSTR as u64 != 0 {
        f |= CODE;
    } else if load || (alloc && f & READONLY == 0) {
        f |= DATA;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_negation() {
        assert_eq!(attributes("rx"), (READONLY | CODE, 0));
        assert_eq!(attributes("rw!x"), (READONLY | DATA, CODE));
        assert_eq!(attributes("!w"), (0, DATA));
        assert_eq!(attributes(""), (0, 0));
    }
}
