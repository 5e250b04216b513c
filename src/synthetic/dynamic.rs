//! `.dynamic`: its entries are decided once, at layout, as tags with symbolic values (a section's address or size,
//! a symbol's address, a constant); the layout sizes the section from that list and the writer writes the same
//! list once addresses are known, so the two cannot disagree.

use super::Synth;
use crate::args::{Config, OutputKind};
use crate::elf;
use crate::index::{OsecId, SymId};
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rustc_hash::FxHashMap as HashMap;

/// `DT_AUDIT` and `DT_DEPAUDIT` (Solaris tags that glibc's dynamic linker reads).
const DT_AUDIT: u32 = 0x6fff_fefc;
const DT_DEPAUDIT: u32 = 0x6fff_fefb;

/// What an entry's value is, resolved when the output is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Const(u64),
    /// The address or size of a linker-made section.
    SynthAddr(Synth),
    SynthSize(Synth),
    /// The dynamic relocations' range, as GNU ld's `DT_RELA`/`DT_RELASZ` span every allocated `SHT_RELA` section
    /// but `.rela.plt`: `.rela.dyn` and the area a script places apart (`Synth::RelaNamed`), from the lower.
    RelaAddr,
    RelaSize,
    /// The address or size of output section `i`.
    SectionAddr(OsecId),
    SectionSize(OsecId),
    /// The address of global symbol `g`.
    SymbolAddr(SymId),
}

/// The entries of `.dynamic`, without the final `DT_NULL`.
#[derive(Default)]
pub struct Dynamic {
    entries: Vec<(u64, Value)>,
}

/// What the entries depend on besides the configuration and the resolved symbols.
pub struct Facts<'a> {
    /// `.dynstr` offsets of the needed libraries' names, in order.
    pub needed: &'a [u32],
    /// `.dynstr` offsets of the other strings (soname, run path).
    pub dyn_strings: &'a HashMap<Vec<u8>, u32>,
    /// Whether a linker-made section is in the output.
    pub kept: &'a dyn Fn(Synth) -> bool,
    /// The output section of that name, if it is in the output.
    pub section: &'a dyn Fn(&[u8]) -> Option<OsecId>,
    /// PLT entries exist (`.rela.plt` is the PLT's).
    pub has_plt: bool,
    /// A shared object uses initial-exec TLS (it needs static TLS space).
    pub static_tls: bool,
    /// The number of libraries whose versions are needed (`.gnu.version_r` entries).
    pub verneed_files: usize,
    /// Some dynamic relocation applies to a read-only section.
    pub textrel: bool,
}

impl Dynamic {
    pub fn build(config: &Config, res: &Resolved, f: &Facts) -> Dynamic {
        let mut d = Dynamic::default();
        let mut add = |tag: u32, v: Value| d.entries.push((tag as u64, v));
        for &n in f.needed {
            add(E::DT_NEEDED, Value::Const(n as u64));
        }
        if let Some(so) = &config.soname {
            add(
                E::DT_SONAME,
                Value::Const(f.dyn_strings[so.as_bytes()] as u64),
            );
        }
        // `-Bsymbolic`: the loader binds the object's own references to its own definitions first, as GNU ld
        // marks it (`DF_SYMBOLIC` too, in `flags`).
        if symbolic(config) {
            add(E::DT_SYMBOLIC, Value::Const(0));
        }
        if !config.rpath.is_empty() {
            let joined = config.rpath.join(":");
            if let Some(&o) = f
                .dyn_strings
                .get(joined.as_bytes())
                .or_else(|| f.dyn_strings.get(config.rpath[0].as_bytes()))
            {
                let tag = if config.new_dtags {
                    E::DT_RUNPATH
                } else {
                    E::DT_RPATH
                };
                add(tag, Value::Const(o as u64));
            }
        }
        for (list, tag) in [(&config.audit, DT_AUDIT), (&config.depaudit, DT_DEPAUDIT)] {
            if !list.is_empty() {
                let o = f.dyn_strings[list.join(":").as_bytes()];
                add(tag, Value::Const(o as u64));
            }
        }
        for (name, default, tag) in [
            (&config.init, "_init", E::DT_INIT),
            (&config.fini, "_fini", E::DT_FINI),
        ] {
            if let Some(g) = res
                .names
                .lookup(name.as_deref().unwrap_or(default).as_bytes())
                && matches!(res.defs[g.index()], Def::Object { .. })
            {
                add(tag, Value::SymbolAddr(g));
            }
        }
        for (name, tag, size) in [
            (
                &b".preinit_array"[..],
                E::DT_PREINIT_ARRAY,
                E::DT_PREINIT_ARRAYSZ,
            ),
            (b".init_array", E::DT_INIT_ARRAY, E::DT_INIT_ARRAYSZ),
            (b".fini_array", E::DT_FINI_ARRAY, E::DT_FINI_ARRAYSZ),
        ] {
            if let Some(i) = (f.section)(name) {
                add(tag, Value::SectionAddr(i));
                add(size, Value::SectionSize(i));
            }
        }
        if (f.kept)(Synth::Hash) {
            add(E::DT_HASH, Value::SynthAddr(Synth::Hash));
        }
        if (f.kept)(Synth::GnuHash) {
            add(E::DT_GNU_HASH, Value::SynthAddr(Synth::GnuHash));
        }
        add(E::DT_STRTAB, Value::SynthAddr(Synth::Dynstr));
        add(E::DT_SYMTAB, Value::SynthAddr(Synth::Dynsym));
        add(E::DT_STRSZ, Value::SynthSize(Synth::Dynstr));
        add(E::DT_SYMENT, Value::Const(24));
        if config.kind != OutputKind::Shared {
            add(E::DT_DEBUG, Value::Const(0));
        }
        if (f.kept)(Synth::GotPlt) {
            add(E::DT_PLTGOT, Value::SynthAddr(Synth::GotPlt));
        }
        if f.has_plt {
            add(E::DT_PLTRELSZ, Value::SynthSize(Synth::RelaPlt));
            add(E::DT_PLTREL, Value::Const(E::DT_RELA as u64));
            add(E::DT_JMPREL, Value::SynthAddr(Synth::RelaPlt));
        }
        if (f.kept)(Synth::RelaDyn) || (f.kept)(Synth::RelaNamed) {
            add(E::DT_RELA, Value::RelaAddr);
            add(E::DT_RELASZ, Value::RelaSize);
            add(E::DT_RELAENT, Value::Const(24));
        }
        if (f.kept)(Synth::RelrDyn) {
            add(elf::DT_RELR as u32, Value::SynthAddr(Synth::RelrDyn));
            add(elf::DT_RELRSZ as u32, Value::SynthSize(Synth::RelrDyn));
            add(elf::DT_RELRENT as u32, Value::Const(8));
        }
        if f.textrel {
            add(E::DT_TEXTREL, Value::Const(0));
        }
        let (flags, flags1) = flags(config, f.static_tls, f.textrel);
        if flags != 0 {
            add(E::DT_FLAGS, Value::Const(flags));
        }
        if flags1 != 0 {
            add(E::DT_FLAGS_1, Value::Const(flags1));
        }
        if (f.kept)(Synth::Versym) {
            add(E::DT_VERSYM, Value::SynthAddr(Synth::Versym));
        }
        if (f.kept)(Synth::Verdef) {
            add(E::DT_VERDEF, Value::SynthAddr(Synth::Verdef));
            add(
                E::DT_VERDEFNUM,
                Value::Const(1 + res.version_defs.len() as u64),
            );
        }
        if f.verneed_files > 0 {
            add(E::DT_VERNEED, Value::SynthAddr(Synth::Verneed));
            add(E::DT_VERNEEDNUM, Value::Const(f.verneed_files as u64));
        }
        // Last, where GNU ld turns its first spare `DT_NULL` into it; its value is known once `.rela.dyn` is sorted
        // (`set_relative_count`).
        if (f.kept)(Synth::RelaDyn) {
            add(E::DT_RELACOUNT, Value::Const(0));
        }
        d
    }

    /// Sets `DT_RELACOUNT` in the written section (`out`) to `count` relative relocations; where there are none,
    /// the entry becomes a second `DT_NULL`, as GNU ld writes no `DT_RELACOUNT` then.
    pub fn set_relative_count(&self, out: &mut [u8], count: u64) {
        let Some(k) = (self.entries.iter()).position(|&(tag, _)| tag == E::DT_RELACOUNT as u64)
        else {
            return;
        };
        if let Some(e) = out.get_mut(16 * k..16 * k + 16) {
            let tag = if count == 0 {
                E::DT_NULL
            } else {
                E::DT_RELACOUNT
            };
            e[..8].copy_from_slice(&(tag as u64).to_le_bytes());
            e[8..].copy_from_slice(&count.to_le_bytes());
        }
    }

    /// The section's size: the entries and the terminating `DT_NULL`.
    pub fn size(&self) -> u64 {
        16 * (self.entries.len() as u64 + 1)
    }

    /// Writes the entries into `out` (the section's bytes, `size()` long), each value resolved by `value`.
    pub fn write(&self, out: &mut [u8], value: impl Fn(Value) -> u64) {
        for (e, &(tag, v)) in out.chunks_exact_mut(16).zip(&self.entries) {
            e[..8].copy_from_slice(&tag.to_le_bytes());
            e[8..].copy_from_slice(&value(v).to_le_bytes());
        }
        if let Some(null) = out.get_mut(16 * self.entries.len()..) {
            null.fill(0);
        }
    }
}

/// `-Bsymbolic` in a shared object (GNU ld marks no executable).
fn symbolic(config: &Config) -> bool {
    config.bsymbolic && config.kind == OutputKind::Shared
}

/// `DT_FLAGS` and `DT_FLAGS_1`.
fn flags(config: &Config, static_tls: bool, textrel: bool) -> (u64, u64) {
    let mut flags = 0u64;
    let mut flags1 = 0u64;
    if config.bind_now {
        flags |= E::DF_BIND_NOW as u64;
        flags1 |= E::DF_1_NOW as u64;
    }
    if config.kind == OutputKind::Pie {
        flags1 |= E::DF_1_PIE as u64;
    }
    for (on, bit) in [
        (config.z_nodelete, E::DF_1_NODELETE),
        (config.z_nodlopen, E::DF_1_NOOPEN),
        (config.z_initfirst, E::DF_1_INITFIRST),
        (config.z_interpose, E::DF_1_INTERPOSE),
        (config.z_origin, E::DF_1_ORIGIN),
        (config.z_nodefaultlib, E::DF_1_NODEFLIB),
        (config.z_nodump, E::DF_1_NODUMP),
        (config.z_global, E::DF_1_GLOBAL),
    ] {
        if on {
            flags1 |= bit as u64;
        }
    }
    if config.z_origin {
        flags |= E::DF_ORIGIN as u64;
    }
    if textrel {
        flags |= E::DF_TEXTREL as u64;
    }
    if symbolic(config) {
        flags |= E::DF_SYMBOLIC as u64;
    }
    // Initial-exec TLS in a shared object: it needs space in the static TLS block (dlopen may refuse it).
    if config.kind == OutputKind::Shared && static_tls {
        flags |= E::DF_STATIC_TLS as u64;
    }
    (flags, flags1)
}
