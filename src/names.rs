//! Names of symbols and sections: a name with its hash (computed once, when the inputs are parsed), section name
//! families, and the class of garbage-collection root a section's name and header give.

use crate::elf::{self, Data};
use object::elf as E;

/// A name with its hash, computed once at parse time.
#[derive(Clone, Copy)]
pub struct Name {
    pub hash: u64,
    pub bytes: Data,
}

impl Name {
    pub fn new(bytes: Data) -> Name {
        Name {
            hash: hash_name(bytes),
            bytes,
        }
    }
}

pub fn hash_name(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(bytes);
    // FxHasher's low bits are weak for short strings; fold the high half in since shards use the low bits.
    let v = h.finish();
    v ^ (v >> 29) ^ (v >> 47)
}

/// Whether section `name` is `base` or one of its `base.*` variants (`.text.foo`, `.init_array.00100`).
pub fn in_section_family(name: &[u8], base: &[u8]) -> bool {
    name.strip_prefix(base)
        .is_some_and(|rest| rest.is_empty() || rest[0] == b'.')
}

pub fn is_c_identifier(name: &[u8]) -> bool {
    !name.is_empty()
        && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        && !name[0].is_ascii_digit()
}

/// Whether `--gc-sections` keeps a section as a root, as far as its header and name tell
/// ([`root_by_header`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u16)]
pub enum GcRoot {
    No = 0,
    Yes = 1,
    /// Only if the link has a `__start_` or `__stop_` symbol for it (its name is a C identifier).
    IfBracketed = 2,
    /// Not allocated, not a note: kept where something live refers to it, or with its file's allocated sections
    /// as GNU ld keeps a file's debug information (`gc::Marker::keep_file_extras`).
    Unallocated = 3,
}

/// A section's root class from its header and name, found when the sections are read, while both are in cache.
/// Checking in the roots step read every section's header and name again, two cache misses per section; found
/// here, the roots step is several times faster, and parsing is no slower.
pub fn root_by_header(name: &[u8], sh: &elf::Shdr) -> GcRoot {
    let flags = sh.sh_flags.get(elf::LE);
    if flags & E::SHF_GNU_RETAIN as u64 != 0 {
        return GcRoot::Yes;
    }
    if flags & E::SHF_ALLOC as u64 == 0 {
        // Notes are roots wherever they are, as in GNU ld (`.note.stapsdt` keeps its probes' code).
        return match sh.sh_type.get(elf::LE) {
            E::SHT_NOTE => GcRoot::Yes,
            _ => GcRoot::Unallocated,
        };
    }
    if matches!(
        sh.sh_type.get(elf::LE),
        E::SHT_INIT_ARRAY | E::SHT_FINI_ARRAY | E::SHT_PREINIT_ARRAY | E::SHT_NOTE
    ) {
        return GcRoot::Yes;
    }
    // Each family's second letter is one of these; most sections (`.text.*`, `.rodata.*`) are out at once.
    if !matches!(name.get(1), Some(b'i' | b'f' | b'p' | b'c' | b'd' | b'j')) {
        return if is_c_identifier(name) {
            GcRoot::IfBracketed
        } else {
            GcRoot::No
        };
    }
    for keep in [
        &b".init_array"[..],
        b".fini_array",
        b".preinit_array",
        b".ctors",
        b".dtors",
        b".init",
        b".fini",
        b".jcr",
    ] {
        if in_section_family(name, keep) {
            return GcRoot::Yes;
        }
    }
    if is_c_identifier(name) {
        return GcRoot::IfBracketed;
    }
    GcRoot::No
}
