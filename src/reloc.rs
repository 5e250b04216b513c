//! Relocation policy, once for every architecture: from a relocation's generic kind (`Arch::classify`) and what
//! its symbol is (imported, preemptible, an IFUNC, absolute, a function), what the linker does with it
//! ([`decide`]): write a value, go through a GOT slot or a PLT entry, emit a dynamic relocation, relax the
//! instructions, or refuse. The scan (`scan::relocs`) and the writer (`write::apply`) both call it, so the
//! dynamic relocations the scan counts are exactly those the writer emits.

use crate::arch::{Arch, RelKind, Relax};
use crate::args::Config;
use crate::elf::LE;
use crate::index::{FileId, SecIdx};
use crate::parse::{ObjectFile, SectionKind};
use crate::resolve::{Def, Resolved};
use crate::symbols::{SymProps, SymRef, SymbolSpace, Target};
use object::elf::{STT_GNU_IFUNC, STT_SECTION};

/// What the linker does with one relocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    /// S + A (absolute, no dynamic relocation needed).
    Abs,
    /// S + A - P.
    Pc,
    /// S + A written, plus a relative dynamic relocation.
    DynRelative,
    /// A pointer-sized dynamic relocation against the symbol's dynamic entry (addend A).
    DynSymbolic,
    /// An IRELATIVE dynamic relocation whose addend is the resolver's address.
    DynIrelative,
    /// PLT entry + A, PC-relative unless the kind is absolute.
    Plt,
    /// GOT slot + A - P.
    Got,
    /// Thread-pointer offset of S + A.
    TpOff,
    /// GOT slot with the thread-pointer offset + A - P (initial exec).
    GotTp,
    /// Shared object: general dynamic, the symbol's (module, offset) GOT pair + A - P.
    TlsGd,
    /// Shared object: local dynamic, the module's (module, 0) GOT pair + A - P.
    TlsLd,
    /// Shared object: the symbol's TLS descriptor GOT pair + A - P.
    TlsDesc,
    /// Offset in the TLS block, as a thread-pointer offset after LD→LE relaxation.
    DtpOff,
    Size,
    /// S + A - GOT.
    GotOff,
    /// GOT + A - P.
    GotPc,
    /// GOT slot - GOT + A.
    GotRel,
    /// PLT entry - GOT + A.
    PltOff,
    /// An instruction rewrite the architecture performs.
    Relax(Relax),
    Error(&'static str),
}

/// What a relocation's target is, as far as the policy cares.
#[derive(Clone, Copy)]
pub struct Props {
    pub imported: bool,
    /// Bound at load time (imports; in a shared object, default-visibility definitions and undefined symbols).
    pub preemptible: bool,
    pub ifunc: bool,
    pub absolute: bool,
    /// Absolute by a script's or `--defsym`'s assignment: a pointer to it needs no dynamic relocation, but GOT
    /// references treat it as GNU ld does, as an address in the image (relaxed, or a relocated slot).
    pub linker_abs: bool,
    pub func: bool,
    /// An executable's undefined symbol under GNU ld's undefined-weak rule (`SymProps::WEAK_RULE`): see
    /// [`weak_rule`].
    pub weak_rule: bool,
}

#[inline(always)]
pub fn props(res: &Resolved, config: &Config, space: &SymbolSpace, s: &SymRef) -> Props {
    let b = match (space.gprops.get(s.id.index()), s.target) {
        (Some(&b), _) => b,
        (None, Target::Object { file, sym }) => SymProps::of_local(res, file, sym),
        (None, t) => SymProps::of(res, config, s.id, t),
    };
    Props {
        imported: b & SymProps::IMPORTED != 0,
        preemptible: b & SymProps::PREEMPTIBLE != 0,
        ifunc: b & SymProps::IFUNC != 0,
        absolute: b & SymProps::ABSOLUTE != 0,
        linker_abs: b & SymProps::LINKER_ABS != 0,
        func: b & SymProps::FUNC != 0,
        weak_rule: b & SymProps::WEAK_RULE != 0,
    }
}

/// Whether local symbol `i` of `o` is one whose address is simply its entry in `Layout::addrs`, never an IFUNC's
/// stub: not a global, not an IFUNC, and if a section symbol, one of a plain section (not merged strings or
/// .eh_frame, which `WriteCx::sym_value` looks up by offset).
#[inline(always)]
pub fn plain_local(o: &ObjectFile, i: usize) -> bool {
    if i >= o.first_global {
        return false;
    }
    let Some(st) = o.syms.get(i) else {
        return false;
    };
    match st.st_type() {
        STT_GNU_IFUNC => false,
        STT_SECTION => o
            .sections
            .get(o.sym_shndx(i) as usize)
            .is_some_and(|t| t.kind == SectionKind::Regular),
        _ => true,
    }
}

/// How a reference of `kind` from a section with flags `sec_flags` sees a symbol under GNU ld's undefined-weak rule
/// (`Props::weak_rule`), whose `preemptible` says whether the symbol is left to the dynamic linker (provisionally
/// yes during the scan, then as `scan::weak` settled it): a GOT or PLT reference as preemptible then, a pointer in
/// the data of a position-independent output too (a dynamic relocation), every other reference as to 0. Returns
/// the properties and whether the reference is a pointer in data, whose relocation the scan counts only once the
/// symbol is settled.
#[cold]
#[inline(never)]
pub fn weak_rule(mut p: Props, kind: RelKind, sec_flags: u64, m: &Mode) -> (Props, bool) {
    let via_got = weak_via_got(kind);
    let code = sec_flags & object::elf::SHF_EXECINSTR as u64 != 0;
    let data_pointer = kind == RelKind::AbsPtr && !code && m.pic;
    p.preemptible &= via_got || data_pointer;
    (p, data_pointer)
}

/// The references that may leave an undefined weak symbol to the dynamic linker: through the GOT or the PLT.
pub fn weak_via_got(kind: RelKind) -> bool {
    matches!(
        kind,
        RelKind::GotPcRel
            | RelKind::Plt
            | RelKind::PltOff
            | RelKind::GotRel
            | RelKind::GotTp
            | RelKind::TlsGd
            | RelKind::TlsDesc
    )
}

/// The references that make an undefined weak symbol 0 when they are in code: its address used directly.
pub fn weak_direct(kind: RelKind) -> bool {
    matches!(
        kind,
        RelKind::AbsPtr | RelKind::AbsNarrow | RelKind::Pc | RelKind::GotOff
    )
}

/// The kind of output, as the policy needs it.
pub struct Mode {
    /// Position-independent (a shared object or a PIE).
    pub pic: bool,
    /// An executable (the TLS models of an executable apply).
    pub exe: bool,
    /// GOT loads may be relaxed (`--relax`, the default).
    pub relax: bool,
}

impl Mode {
    pub fn of(config: &Config) -> Mode {
        Mode {
            pic: config.kind != crate::args::OutputKind::Exec,
            exe: config.kind != crate::args::OutputKind::Shared,
            relax: config.relax,
        }
    }
}

/// What to do with a relocation of type `r_type` (of kind `kind`) at `off` of `data`, a section that is
/// `writable` or not, against a target with properties `p`.
#[inline(always)]
pub fn decide<A: Arch>(
    m: &Mode,
    kind: RelKind,
    r_type: u32,
    p: Props,
    writable: bool,
    data: &[u8],
    off: u64,
) -> Action {
    match kind {
        RelKind::None => Action::None,
        RelKind::AbsPtr => {
            if p.preemptible {
                if writable || m.pic {
                    Action::DynSymbolic
                } else if p.func {
                    Action::Plt
                } else {
                    Action::Abs
                }
            } else if p.ifunc {
                // Position-dependent output: the stub is the address (no dynamic relocation, so also in
                // read-only data); PIC: the resolver's result, or the stub when one exists (see DynIrelative).
                if m.pic {
                    Action::DynIrelative
                } else {
                    Action::Plt
                }
            } else if m.pic && !p.absolute && !p.linker_abs {
                Action::DynRelative
            } else {
                Action::Abs
            }
        }
        RelKind::Pc => {
            if p.preemptible && !p.func && !m.exe {
                Action::Error("can not be used when making a shared object; recompile with -fPIC")
            } else if p.ifunc || (p.preemptible && p.func) {
                Action::Plt
            } else {
                Action::Pc
            }
        }
        RelKind::AbsNarrow => {
            if m.pic && !p.absolute && !p.linker_abs {
                Action::Error(
                    "can not be used when making a PIE object or shared object; recompile with -fPIC",
                )
            } else if p.ifunc || (p.preemptible && p.func) {
                Action::Plt
            } else {
                Action::Abs
            }
        }
        RelKind::Plt => {
            if p.preemptible || p.ifunc {
                Action::Plt
            } else {
                Action::Pc
            }
        }
        RelKind::GotPcRel => {
            if m.relax
                && !p.preemptible
                && !p.ifunc
                && !p.absolute
                && let Some(r) = A::got_relaxation(r_type, data, off)
            {
                return Action::Relax(r);
            }
            Action::Got
        }
        RelKind::GotOff => Action::GotOff,
        RelKind::GotPc => Action::GotPc,
        RelKind::GotRel => Action::GotRel,
        RelKind::PltOff => {
            if p.preemptible || p.ifunc {
                Action::PltOff
            } else {
                Action::GotOff
            }
        }
        RelKind::TpOff => {
            if m.exe {
                Action::TpOff
            } else {
                Action::Error("local-exec TLS can not be used in a shared object")
            }
        }
        RelKind::GotTp => {
            if m.exe && !p.preemptible && A::ie_relaxable(data, off) {
                Action::Relax(Relax::IeToLe)
            } else {
                Action::GotTp
            }
        }
        RelKind::TlsGd => {
            if !m.exe {
                Action::TlsGd
            } else if p.preemptible {
                Action::Relax(Relax::GdToIe)
            } else {
                Action::Relax(Relax::GdToLe)
            }
        }
        RelKind::TlsLd => {
            if m.exe {
                Action::Relax(Relax::LdToLe)
            } else {
                Action::TlsLd
            }
        }
        RelKind::DtpOff => Action::DtpOff,
        RelKind::TlsDesc => {
            if !m.exe {
                Action::TlsDesc
            } else if p.preemptible {
                Action::Relax(Relax::DescToIe)
            } else {
                Action::Relax(Relax::DescToLe)
            }
        }
        RelKind::TlsDescCall => {
            if m.exe {
                Action::Relax(Relax::DescCallToNop)
            } else {
                Action::None
            }
        }
        RelKind::Size => Action::Size,
        RelKind::Unknown => Action::Error("is an unknown relocation type"),
        RelKind::Unsupported => {
            Action::Error("is not supported by rivet for this architecture (static links only)")
        }
    }
}

/// A relocation error as lld words it: the type, the symbol (demangled) and why, where the symbol is defined and
/// where it is referenced (a place `srcloc::render` completes).
pub fn reloc_error<A: Arch>(
    res: &Resolved,
    f: FileId,
    s: SecIdx,
    off: u64,
    r_type: u32,
    sym: &SymRef,
    why: &str,
) -> String {
    let o = &res.objects[f.index()];
    let name = symbol_name(res, f, sym);
    // Where the symbol is defined: a local in the referencing object; a global where resolution found it.
    let defined_in = match res.defs.get(sym.id.index()) {
        Some(Def::Object { file, .. }) => Some(res.objects[file.index()].name.as_str()),
        Some(Def::Shared { file, .. }) => Some(res.shared[file.index()].soname.as_str()),
        Some(Def::Linker) => Some("<internal>"),
        Some(Def::Undefined) => None,
        None => Some(o.name.as_str()),
    };
    let defined_in = defined_in.map_or(String::new(), |d| format!("\n>>> defined in {d}"));
    format!(
        "{} against symbol '{}' {}{}\n>>> referenced by {}",
        A::type_name(r_type),
        name,
        why,
        defined_in,
        crate::srcloc::mark(f, s, off, crate::srcloc::Style::Exact)
    )
}

/// The name of a relocation's target for messages: a global demangled, a local as object `f` names it, a section
/// symbol as its section's name (as lld shows it).
pub fn symbol_name(res: &Resolved, f: FileId, sym: &SymRef) -> String {
    let o = &res.objects[f.index()];
    if sym.id.index() >= res.num_globals() {
        let i = sym_index_of(sym);
        let name = o.sym_name(i);
        if name.is_empty() && o.syms[i].st_type() == STT_SECTION {
            o.section_name(o.sym_shndx(i))
        } else {
            String::from_utf8_lossy(name).into_owned()
        }
    } else {
        res.display(sym.id)
    }
}

pub fn offset_range_error(o: &ObjectFile, s: SecIdx, off: u64) -> String {
    format!(
        "{}:({}+0x{off:x}): relocation offset is out of range",
        o.name,
        o.section_name(s.0)
    )
}

fn sym_index_of(sym: &SymRef) -> usize {
    match sym.target {
        Target::Object { sym, .. } | Target::Imported { sym, .. } => sym as usize,
        _ => 0,
    }
}

/// Relocations this far ahead get their target's per-symbol entries prefetched.
const PREFETCH_AHEAD: usize = 16;

/// The symbol the relocation at `k` names: `Ok(global id)` or `Err(local index)`; `None` past the end of `relas`
/// or for a bad index (reported when that relocation is reached).
#[inline(always)]
pub fn symbol_at(
    res: &Resolved,
    f: FileId,
    relas: &[crate::elf::Rela],
    k: usize,
) -> Option<Result<usize, usize>> {
    let i = relas.get(k)?.r_sym(LE, false) as usize;
    let o = &res.objects[f.index()];
    match i.checked_sub(o.first_global) {
        None => Some(Err(i)),
        Some(k) => res.object_ids[f.index()].get(k).map(|&g| Ok(g.index())),
    }
}

/// Starts loading what the relocation `PREFETCH_AHEAD` places after `k` will read about its symbol: for a local
/// (mostly a section symbol), its entry (type, section, value); for a global, its definition, its property byte
/// and (when writing: `written`, the layout's address and GOT/PLT index tables) its address and GOT/PLT index,
/// which lie at random in tables of every global.
#[inline(always)]
pub fn prefetch_ahead(
    res: &Resolved,
    space: &SymbolSpace,
    written: Option<(&[u64], &[u32])>,
    f: FileId,
    relas: &[crate::elf::Rela],
    k: usize,
) {
    match symbol_at(res, f, relas, k + PREFETCH_AHEAD) {
        Some(Err(i)) => crate::elf::prefetch(res.objects[f.index()].syms.as_ptr().wrapping_add(i)),
        Some(Ok(g)) => {
            crate::elf::prefetch(res.defs.as_ptr().wrapping_add(g));
            crate::elf::prefetch(space.gprops.as_ptr().wrapping_add(g));
            if let Some((addrs, aux_index)) = written {
                crate::elf::prefetch(addrs.as_ptr().wrapping_add(g));
                crate::elf::prefetch(aux_index.as_ptr().wrapping_add(g));
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::x86_64::X86_64;

    /// A GOT load of a local symbol (`mov foo@GOTPCREL(%rip), %rax`, with a relocation type the architecture lets
    /// it relax) becomes a `lea` with relaxation on, and stays a GOT load with `--no-relax`; a preemptible target is
    /// never relaxed.
    #[test]
    fn got_loads_relax_only_when_allowed() {
        let code = [0x48, 0x8b, 0x05, 0, 0, 0, 0];
        let local = Props {
            imported: false,
            preemptible: false,
            ifunc: false,
            absolute: false,
            linker_abs: false,
            func: false,
            weak_rule: false,
        };
        // The architecture's GOT-load type that allows this `mov` to become a `lea`.
        let r_type = (0..64)
            .find(|&r| {
                X86_64::classify(r) == RelKind::GotPcRel
                    && X86_64::got_relaxation(r, &code, 3) == Some(Relax::GotToLea)
            })
            .expect("x86-64 relaxes GOT loads");
        let kind = X86_64::classify(r_type);
        let mode = |relax| Mode {
            pic: true,
            exe: true,
            relax,
        };
        let decide = |m: &Mode, p: Props| decide::<X86_64>(m, kind, r_type, p, false, &code, 3);
        assert_eq!(decide(&mode(true), local), Action::Relax(Relax::GotToLea));
        assert_eq!(decide(&mode(false), local), Action::Got);
        let preemptible = Props {
            preemptible: true,
            ..local
        };
        assert_eq!(decide(&mode(true), preemptible), Action::Got);
    }
}
