//! `.dynsym` and `.dynstr`: the dynamic symbol table, the null entry then one entry per `DynSymbol` (the layout's
//! dynamic symbol pass chose them and their order and built `.dynstr` whole), sized and written here from the same
//! list. Each entry comes from its symbol's
//! definition, or for an import from this link's references to it; what only the layout knows (where a symbol
//! went, its PLT entry, the output section holding an address) the writer answers through `Places`.

use super::DynSymbol;
use super::got_plt::Aux;
use crate::args::{Config, OutputKind};
use crate::elf::LE;
use crate::index::{FileId, NONE, SymId};
use crate::resolve::Resolved;
use crate::symbols::{self, Target};
use object::elf as E;
use rayon::prelude::*;

/// The size of an entry (`Elf64_Sym`).
const ENTRY: usize = 24;

/// The size of `.dynsym` for `dynsyms`, the null entry included.
pub fn size(dynsyms: &[DynSymbol]) -> u64 {
    (ENTRY * (dynsyms.len() + 1)) as u64
}

/// What the writer asks the layout about each dynamic symbol (a trait, so that the parallel loop over them is
/// monomorphised).
pub trait Places: Sync {
    /// Where symbol `id` is defined.
    fn target(&self, id: SymId) -> Target;
    /// The slots of symbol `id` (every dynamic symbol has them).
    fn slots(&self, id: SymId) -> &Aux;
    /// Its address.
    fn address(&self, id: SymId) -> u64;
    /// The address of its PLT entry or IFUNC stub, if it has one.
    fn plt_entry(&self, id: SymId) -> Option<u64>;
    /// The header index of the output section that object `file`'s symbol `i` went to (`SHN_ABS` for an
    /// absolute one), if that section is kept.
    fn object_section(&self, file: FileId, i: u32) -> Option<u16>;
    /// The header index of the output section a script or `--defsym` expression made linker symbol `id` relative
    /// to (`SHN_ABS` for an absolute one), if it was assigned so.
    fn assigned_section(&self, id: SymId) -> Option<u16>;
    /// The header index of the last allocated output section that holds `addr` (its end included), or `SHN_ABS`.
    fn section_holding(&self, addr: u64) -> u16;
    /// Address `addr`'s offset in the TLS block.
    fn dtp_offset(&self, addr: u64) -> u64;
}

/// Copies `.dynstr` (built whole by the layout's dynamic symbol pass) into `out`, on all threads, and frees it:
/// a big shared library's is large (clang-so: 6.6 MB of mangled names), and the peak resident set comes while the
/// output is written.
pub fn write_dynstr(out: &mut [u8], dynstr: Vec<u8>) {
    const CHUNK: usize = 1 << 18;
    out[..dynstr.len()]
        .par_chunks_mut(CHUNK)
        .zip(dynstr.par_chunks(CHUNK))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

/// Writes `.dynsym` (`out` is `size(dynsyms)` bytes), the entries on all threads.
pub fn write(
    out: &mut [u8],
    dynsyms: &[DynSymbol],
    res: &Resolved,
    config: &Config,
    places: &impl Places,
) {
    let (null, entries) = out.split_at_mut(ENTRY);
    null.fill(0);
    entries
        .par_chunks_mut(ENTRY)
        .zip(dynsyms.par_iter())
        .for_each(|(e, d)| write_entry(e, d, res, config, places));
}

/// Writes the entry of `d`.
#[inline]
fn write_entry(e: &mut [u8], d: &DynSymbol, res: &Resolved, config: &Config, p: &impl Places) {
    let name = d.name_off;
    if d.id.is_none() {
        // A version node's symbol: absolute, 0, an object, as GNU ld writes it.
        e.fill(0);
        e[0..4].copy_from_slice(&name.to_le_bytes());
        e[4] = (E::STB_GLOBAL << 4) | E::STT_OBJECT;
        e[6..8].copy_from_slice(&E::SHN_ABS.to_le_bytes());
        return;
    }
    let target = p.target(d.id);
    let x = p.slots(d.id);
    let (bind, ty, size) = binding(res, target, x);
    // An executable's IFUNC with a canonical stub is exported as a plain function at the stub.
    let stub = match target {
        Target::Object { .. } if ty == E::STT_GNU_IFUNC && config.kind == OutputKind::Exec => {
            p.plt_entry(d.id)
        }
        _ => None,
    };
    let ty = if stub.is_some() { E::STT_FUNC } else { ty };
    let (shndx, value) = if d.defined {
        let v = stub.unwrap_or(p.address(d.id));
        let sec = match (stub, target) {
            (None, Target::Object { file, sym }) => p.object_section(file, sym),
            (None, Target::Linker) => p.assigned_section(d.id),
            _ => None,
        }
        .unwrap_or_else(|| p.section_holding(v));
        let value = if ty == E::STT_TLS { p.dtp_offset(v) } else { v };
        (sec, value)
    } else if has_canonical_plt(config, x) {
        (0, p.address(d.id))
    } else {
        (0, 0)
    };
    // The definition's visibility (only protected ones are exported besides default ones); the linker's
    // __start_/__stop_ symbols have -z start-stop-visibility's.
    let visibility = match target {
        Target::Object { file, sym } if d.defined => {
            res.objects[file.index()].syms[sym as usize].st_visibility()
        }
        Target::Linker if crate::resolve::is_start_stop(res.name(d.id)) => {
            config.start_stop_visibility
        }
        _ => E::STV_DEFAULT,
    };
    e[0..4].copy_from_slice(&name.to_le_bytes());
    e[4] = (bind << 4) | (ty & 0xf);
    e[5] = visibility;
    e[6..8].copy_from_slice(&shndx.to_le_bytes());
    e[8..16].copy_from_slice(&value.to_le_bytes());
    e[16..24].copy_from_slice(&size.to_le_bytes());
}

/// Whether an import's address is its PLT entry (an executable takes it directly), which its entries give as
/// their value.
pub fn has_canonical_plt(config: &Config, x: &Aux) -> bool {
    x.plt != NONE && x.canonical && config.kind != OutputKind::Shared
}

/// The binding, type and size of an entry for a symbol defined at `target`, with slots `x` (`.symtab`'s entries
/// of imports take theirs from here too).
#[inline]
pub fn binding(res: &Resolved, target: Target, x: &Aux) -> (u8, u8, u64) {
    match target {
        Target::Object { file, sym } => {
            let s = &res.objects[file.index()].syms[sym as usize];
            (s.st_bind(), s.st_type(), symbols::sym_size(res, target))
        }
        Target::Imported { file, sym } => {
            let s = &res.shared[file.index()].syms[sym as usize];
            // Like GNU ld: the binding is that of this link's references (weak only when every reference is
            // weak), an IFUNC import is a plain function here (its resolver runs in the library), and only a
            // copied object keeps its size.
            let weak = if x.copied {
                s.st_bind() == E::STB_WEAK
            } else {
                !x.strong_ref
            };
            let ty = match s.st_type() {
                E::STT_GNU_IFUNC => E::STT_FUNC,
                t => t,
            };
            (
                if weak { E::STB_WEAK } else { E::STB_GLOBAL },
                ty,
                if x.copied { s.st_size.get(LE) } else { 0 },
            )
        }
        // A shared object's unresolved reference: GLOBAL unless every reference is weak, so that loading fails
        // (as with GNU ld's output) when no module defines it.
        Target::Undefined { .. } => (
            if x.strong_ref {
                E::STB_GLOBAL
            } else {
                E::STB_WEAK
            },
            E::STT_NOTYPE,
            0,
        ),
        _ => (E::STB_GLOBAL, E::STT_NOTYPE, 0),
    }
}
