//! x86-64 (System V psABI): relocation scanning and application, GOT/TLS relaxations, PLT entry formats.
//!
//! `decide` is the single place that maps a relocation to what the linker does with it; scan and write both call
//! it, so the dynamic relocations that scan counts are exactly those write emits.

use super::Arch;
use crate::elf::LE;
use crate::scan::{self, ScanCx, SectionScan};
use crate::symbols::{self, SymProps, SymRef, Target};
use crate::write::{DynRel, DynRelSink, WriteCx};
use object::elf::*;

pub struct X86_64;

/// What the linker does with one relocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    None,
    /// S + A (absolute, no dynamic relocation needed).
    Abs,
    /// S + A - P.
    Pc,
    /// S + A written, plus an `R_X86_64_RELATIVE`.
    DynRelative,
    /// An `R_X86_64_64` against the symbol's dynamic entry (addend A).
    DynSymbolic,
    /// An `R_X86_64_IRELATIVE` whose addend is the resolver's address.
    DynIrelative,
    /// PLT entry + A - P.
    Plt,
    /// GOT slot + A - P.
    Got,
    /// `mov foo@GOTPCREL(%rip)` → `lea foo(%rip)`.
    RelaxGotToLea,
    /// `call *foo@GOTPCREL(%rip)` → `addr32 call foo`.
    RelaxGotCall,
    /// `jmp *foo@GOTPCREL(%rip)` → `jmp foo; nop`.
    RelaxGotJmp,
    /// Thread-pointer offset of S + A.
    TpOff,
    /// GOT slot with the thread-pointer offset + A - P (initial exec).
    GotTp,
    /// Initial exec relaxed to local exec: `mov/add x@gottpoff(%rip)` → immediate.
    GotTpToLe,
    /// General dynamic relaxed to local exec (rewrites the whole `__tls_get_addr` call sequence).
    TlsGdToLe,
    /// General dynamic relaxed to initial exec.
    TlsGdToIe,
    /// Local dynamic relaxed to local exec.
    TlsLdToLe,
    /// TLSDESC relaxed to local exec / initial exec.
    TlsDescToLe,
    TlsDescToIe,
    TlsDescCallToNop,
    /// Shared object: general dynamic, `x@tlsgd(%rip)` → the symbol's (module, offset) GOT pair + A - P.
    TlsGd,
    /// Shared object: local dynamic, `x@tlsld(%rip)` → the module's (module, 0) GOT pair + A - P.
    TlsLd,
    /// Shared object: `x@tlsdesc(%rip)` → the symbol's TLS descriptor GOT pair + A - P.
    TlsDesc,
    /// Offset in the TLS block, as a thread-pointer offset after LD→LE relaxation.
    DtpOff,
    Size,
    /// S + A - GOT.
    GotOff,
    /// GOT + A - P.
    GotPc,
    Error(&'static str),
}

#[derive(Clone, Copy)]
struct Props {
    imported: bool,
    /// Bound at load time (imports; in a shared object, default-visibility definitions and undefined symbols).
    preemptible: bool,
    ifunc: bool,
    absolute: bool,
    func: bool,
}

#[inline(always)]
fn props(
    res: &crate::resolve::Resolved,
    config: &crate::args::Config,
    space: &symbols::SymbolSpace,
    s: &SymRef,
) -> Props {
    let b = match (space.gprops.get(s.id as usize), s.target) {
        (Some(&b), _) => b,
        (None, Target::Object { file, sym }) => SymProps::of_local(res, file, sym),
        (None, t) => SymProps::of(res, config, s.id, t),
    };
    Props {
        imported: b & SymProps::IMPORTED != 0,
        preemptible: b & SymProps::PREEMPTIBLE != 0,
        ifunc: b & SymProps::IFUNC != 0,
        absolute: b & SymProps::ABSOLUTE != 0,
        func: b & SymProps::FUNC != 0,
    }
}

/// Whether local symbol `i` of `o` is one whose address is simply its entry in `Layout::addrs`, never an IFUNC's
/// stub: not a global, not an IFUNC, and if a section symbol, one of a plain section (not merged strings or
/// .eh_frame, which `WriteCx::sym_value` looks up by offset).
#[inline(always)]
fn plain_local(o: &crate::parse::ObjectFile, i: usize) -> bool {
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
            .is_some_and(|t| t.kind == crate::parse::SectionKind::Regular),
        _ => true,
    }
}

/// Relocations this far ahead get their target's per-symbol entries prefetched.
const PREFETCH_AHEAD: usize = 16;
/// Relocations this far ahead get their global's GOT/PLT record prefetched, once `prefetch_ahead` has brought in
/// the index that locates it.
const PREFETCH_AUX_AHEAD: usize = 8;

/// The symbol the relocation at `k` names: `Ok(global id)` or `Err(local index)`; `None` past the end of `relas`
/// or for a bad index (reported when that relocation is reached).
#[inline(always)]
fn symbol_at(
    res: &crate::resolve::Resolved,
    f: usize,
    relas: &[crate::elf::Rela],
    k: usize,
) -> Option<Result<usize, usize>> {
    let i = relas.get(k)?.r_sym(LE, false) as usize;
    let o = &res.objects[f];
    match i.checked_sub(o.first_global) {
        None => Some(Err(i)),
        Some(k) => res.object_ids[f].get(k).map(|&g| Ok(g as usize)),
    }
}

/// When writing: starts loading the GOT/PLT record of the global named `PREFETCH_AUX_AHEAD` relocations after
/// `k` (a random access into every symbol's records, which PLT calls and GOT loads read).
#[inline(always)]
fn prefetch_aux(
    res: &crate::resolve::Resolved,
    lay: &crate::layout::Layout,
    f: usize,
    relas: &[crate::elf::Rela],
    k: usize,
) {
    if let Some(Ok(g)) = symbol_at(res, f, relas, k + PREFETCH_AUX_AHEAD)
        && let Some(&x) = lay.aux_index.get(g)
        && x != crate::layout::NONE
    {
        crate::elf::prefetch(lay.aux.as_ptr().wrapping_add(x as usize));
    }
}

/// Starts loading what the relocation `PREFETCH_AHEAD` places after `k` will read about its symbol: for a local
/// (mostly a section symbol), its entry (type, section, value); for a global, its definition, its property byte
/// and (when writing) its address and GOT/PLT index, which lie at random in tables of every global.
#[inline(always)]
fn prefetch_ahead(
    res: &crate::resolve::Resolved,
    space: &symbols::SymbolSpace,
    lay: Option<&crate::layout::Layout>,
    f: usize,
    relas: &[crate::elf::Rela],
    k: usize,
) {
    match symbol_at(res, f, relas, k + PREFETCH_AHEAD) {
        Some(Err(i)) => crate::elf::prefetch(res.objects[f].syms.as_ptr().wrapping_add(i)),
        Some(Ok(g)) => {
            crate::elf::prefetch(res.defs.as_ptr().wrapping_add(g));
            crate::elf::prefetch(space.gprops.as_ptr().wrapping_add(g));
            if let Some(lay) = lay {
                crate::elf::prefetch(lay.addrs.as_ptr().wrapping_add(g));
                crate::elf::prefetch(lay.aux_index.as_ptr().wrapping_add(g));
            }
        }
        None => {}
    }
}

struct Mode {
    pic: bool,
    exe: bool,
}

/// Byte at `off`, if inside the section.
fn byte(data: &[u8], off: i64) -> Option<u8> {
    usize::try_from(off).ok().and_then(|o| data.get(o).copied())
}

fn decide(m: &Mode, r_type: u32, p: Props, writable: bool, data: &[u8], off: u64) -> Action {
    let off = off as i64;
    match r_type {
        R_X86_64_NONE => Action::None,
        R_X86_64_64 => {
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
            } else if m.pic && !p.absolute {
                Action::DynRelative
            } else {
                Action::Abs
            }
        }
        R_X86_64_PC32 | R_X86_64_PC64 | R_X86_64_PC16 | R_X86_64_PC8 => {
            if p.preemptible && !p.func && !m.exe {
                Action::Error("can not be used when making a shared object; recompile with -fPIC")
            } else if p.ifunc || (p.preemptible && p.func) {
                Action::Plt
            } else {
                Action::Pc
            }
        }
        R_X86_64_32 | R_X86_64_32S | R_X86_64_16 | R_X86_64_8 => {
            if m.pic && !p.absolute {
                Action::Error(
                    "can not be used when making a PIE object or shared object; recompile with -fPIC",
                )
            } else if p.ifunc || (p.preemptible && p.func) {
                Action::Plt
            } else {
                Action::Abs
            }
        }
        R_X86_64_PLT32 | R_X86_64_PLTOFF64 => {
            if p.preemptible || p.ifunc {
                Action::Plt
            } else {
                Action::Pc
            }
        }
        R_X86_64_GOTPCREL | R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX => {
            let relaxable =
                r_type != R_X86_64_GOTPCREL && !p.preemptible && !p.ifunc && !p.absolute;
            if relaxable {
                match (byte(data, off - 2), byte(data, off - 1)) {
                    (Some(0x8b), _) => return Action::RelaxGotToLea,
                    (Some(0xff), Some(0x15)) if r_type == R_X86_64_GOTPCRELX => {
                        return Action::RelaxGotCall;
                    }
                    (Some(0xff), Some(0x25)) if r_type == R_X86_64_GOTPCRELX => {
                        return Action::RelaxGotJmp;
                    }
                    _ => {}
                }
            }
            Action::Got
        }
        R_X86_64_GOTPCREL64 => Action::Got,
        R_X86_64_GOTOFF64 => Action::GotOff,
        R_X86_64_GOTPC32 | R_X86_64_GOTPC64 => Action::GotPc,
        R_X86_64_TPOFF32 | R_X86_64_TPOFF64 => {
            if m.exe {
                Action::TpOff
            } else {
                Action::Error("local-exec TLS can not be used in a shared object")
            }
        }
        R_X86_64_GOTTPOFF => {
            if m.exe && !p.preemptible {
                match (byte(data, off - 3), byte(data, off - 2)) {
                    (Some(0x48 | 0x4c), Some(0x8b | 0x03)) => Action::GotTpToLe,
                    _ => Action::GotTp,
                }
            } else {
                Action::GotTp
            }
        }
        R_X86_64_TLSGD => {
            if !m.exe {
                Action::TlsGd
            } else if p.preemptible {
                Action::TlsGdToIe
            } else {
                Action::TlsGdToLe
            }
        }
        R_X86_64_TLSLD => {
            if m.exe {
                Action::TlsLdToLe
            } else {
                Action::TlsLd
            }
        }
        R_X86_64_DTPOFF32 | R_X86_64_DTPOFF64 => Action::DtpOff,
        R_X86_64_GOTPC32_TLSDESC => {
            if !m.exe {
                Action::TlsDesc
            } else if p.preemptible {
                Action::TlsDescToIe
            } else {
                Action::TlsDescToLe
            }
        }
        R_X86_64_TLSDESC_CALL => {
            if m.exe {
                Action::TlsDescCallToNop
            } else {
                Action::None
            }
        }
        R_X86_64_SIZE32 | R_X86_64_SIZE64 => Action::Size,
        _ => Action::Error("is an unknown relocation type"),
    }
}

/// The scan of one section; `CHECK`: also gather the write proof (`ScanCx::check_writes`), a separate copy of the
/// loop so that a link without it runs exactly the loop it ran before.
fn scan_section_with<const CHECK: bool>(cx: &ScanCx, f: usize, s: usize) -> SectionScan {
    let o = &cx.res.objects[f];
    let sec = o.sec(s);
    let writable = sec.flags() & SHF_WRITE as u64 != 0;
    let m = mode_of_scan(cx);
    let mut out = SectionScan::default();
    let mut skip_next = false;
    // The bytes writing may touch: the output copy's (`size`) and the input's, which decide reads.
    let size = sec.size().min(sec.data().len() as u64);
    for (k, r) in sec.relas().iter().enumerate() {
        prefetch_ahead(cx.res, cx.space, None, f, sec.relas(), k);
        if skip_next {
            skip_next = false;
            continue;
        }
        let off = r.r_offset.get(LE);
        let r_type = r.r_type(LE, false);
        // References to a local that is not an IFUNC or absolute (the write proof bounds those), as the general
        // path below decides them: PC-relative ones need nothing, 64-bit ones a relative dynamic relocation where
        // the output is position-independent (one in a read-only section takes the general path, which reports
        // it). Section symbols of merged strings too (clang-so: 346K pointers to string literals), which
        // `apply_section` writes by the general path as it looks their pieces up.
        let sym_idx = r.r_sym(LE, false) as usize;
        if sym_idx < o.first_global
            && o.syms
                .get(sym_idx)
                .is_some_and(|st| st.st_type() != STT_GNU_IFUNC)
            && o.sym_shndx(sym_idx) != SHN_ABS as u32
        {
            match r_type {
                R_X86_64_PC32 | R_X86_64_PLT32 => continue,
                R_X86_64_64 if !m.pic => continue,
                R_X86_64_64 if writable => {
                    if scan::packs_relative(cx.config, sec, off) {
                        out.relr.push(off);
                    } else {
                        out.dyn_relocs += 1;
                    }
                    continue;
                }
                _ => {}
            }
        }
        // Calls to a global that an object defines or a shared object exports, not an IFUNC or absolute
        // (clang-so: 1.3M of its 3.7M relocations), decided from the global's property bits alone, as the general
        // path below decides them: a PLT entry and a dynamic symbol where the target is preemptible (an import
        // always is), nothing otherwise, and an import marked as referenced by a non-weak call. No `Def` read, no
        // `decide`, and no error checks, which cannot fire for such a target.
        if r_type == R_X86_64_PLT32
            && sym_idx >= o.first_global
            && let Some(&id) = cx.res.object_ids[f].get(sym_idx - o.first_global)
            && let Some(&b) = cx.space.gprops.get(id as usize)
            && b & (SymProps::IFUNC | SymProps::ABSOLUTE) == 0
            && (b & SymProps::DEFINED != 0
                || b & (SymProps::IMPORTED | SymProps::PREEMPTIBLE)
                    == SymProps::IMPORTED | SymProps::PREEMPTIBLE)
        {
            let mut fl = 0;
            if b & SymProps::PREEMPTIBLE != 0 {
                fl |= scan::NEEDS_PLT | scan::NEEDS_DYNSYM;
            }
            if b & SymProps::IMPORTED != 0
                && o.syms
                    .get(sym_idx)
                    .is_some_and(|st| st.st_bind() != STB_WEAK)
            {
                fl |= scan::STRONG_REF;
            }
            if fl != 0 {
                cx.set_id(id, fl);
            }
            continue;
        }
        let Some(sym) = cx.lookup(f, sym_idx) else {
            out.errors.push(format!(
                "{}:({}+0x{off:x}): invalid symbol index",
                o.name,
                o.section_name(s as u32)
            ));
            continue;
        };
        if r_type == R_X86_64_NONE {
            continue;
        }
        if matches!(
            sym.target,
            Target::Imported { .. } | Target::Undefined { .. }
        ) && o.syms[sym_idx].st_bind() != STB_WEAK
        {
            cx.set(&sym, scan::STRONG_REF);
        }
        // Executables must resolve everything; shared objects only with -z defs / --no-undefined.
        if let Some(e) = scan::undefined_error(cx, f, s, off, &sym)
            && (cx.is_exe() || cx.config.z_defs)
        {
            out.errors.push(e);
            out.undefined.push(sym.id);
            continue;
        }
        let p = props(cx.res, cx.config, cx.space, &sym);
        let action = decide(&m, r_type, p, writable, sec.data(), off);
        if CHECK && !matches!(action, Action::Error(_)) {
            if p.absolute || matches!(sym.target, Target::Linker) {
                proof_target(&mut out.check, r, &sym, p);
            }
            if matches!(
                action,
                Action::TlsGdToLe
                    | Action::TlsGdToIe
                    | Action::TlsLdToLe
                    | Action::TlsDescToLe
                    | Action::TlsDescToIe
            ) {
                proof_tls(&mut out.check, action, sec.data(), off);
            }
        }
        if matches!(
            action,
            Action::DynRelative | Action::DynIrelative | Action::DynSymbolic
        ) && !writable
            && cx.config.z_text
        {
            out.errors.push(reloc_error(
                cx.res,
                f,
                s,
                off,
                r_type,
                &sym,
                "would need a text relocation; recompile with -fPIC or link with -z notext",
            ));
        }
        match action {
            Action::None
            | Action::Abs
            | Action::Pc
            | Action::TpOff
            | Action::DtpOff
            | Action::Size => {}
            Action::RelaxGotToLea
            | Action::RelaxGotCall
            | Action::RelaxGotJmp
            | Action::TlsDescCallToNop => {}
            Action::GotTpToLe | Action::TlsDescToLe => {}
            Action::DynRelative | Action::DynIrelative => {
                if action == Action::DynRelative {
                    if scan::packs_relative(cx.config, sec, off) {
                        out.relr.push(off);
                    } else {
                        out.dyn_relocs += 1;
                    }
                } else {
                    out.irel_relocs += 1;
                }
            }
            Action::DynSymbolic => {
                cx.set(&sym, scan::NEEDS_DYNSYM);
                out.dyn_relocs += 1;
            }
            Action::Plt => {
                let via = if p.preemptible {
                    scan::NEEDS_DYNSYM
                } else {
                    scan::NEEDS_GOT
                };
                cx.set(&sym, scan::NEEDS_PLT | via);
                if !matches!(r_type, R_X86_64_PLT32 | R_X86_64_PLTOFF64) {
                    cx.set(&sym, scan::NEEDS_CANONICAL);
                }
            }
            Action::Got => {
                cx.set(&sym, scan::NEEDS_GOT);
                if p.preemptible {
                    cx.set(&sym, scan::NEEDS_DYNSYM);
                }
            }
            Action::GotTp | Action::TlsGdToIe | Action::TlsDescToIe => {
                cx.set(&sym, scan::NEEDS_GOTTP);
                if p.preemptible {
                    cx.set(&sym, scan::NEEDS_DYNSYM);
                }
                skip_next = action == Action::TlsGdToIe;
            }
            Action::TlsGdToLe | Action::TlsLdToLe => skip_next = true,
            Action::TlsGd | Action::TlsDesc => {
                cx.set(
                    &sym,
                    if action == Action::TlsGd {
                        scan::NEEDS_TLSGD
                    } else {
                        scan::NEEDS_TLSDESC
                    },
                );
                if p.preemptible {
                    cx.set(&sym, scan::NEEDS_DYNSYM);
                }
            }
            Action::TlsLd => cx
                .needs_tlsld
                .store(true, std::sync::atomic::Ordering::Relaxed),
            Action::GotOff | Action::GotPc => cx
                .needs_got_base
                .store(true, std::sync::atomic::Ordering::Relaxed),
            Action::Error(why) => out
                .errors
                .push(reloc_error(cx.res, f, s, off, r_type, &sym, why)),
        }
        // Data from a shared object referenced directly from an executable: copy relocation.
        if p.imported && !p.func && m.exe && matches!(action, Action::Abs | Action::Pc) {
            cx.set(&sym, scan::NEEDS_COPY | scan::NEEDS_DYNSYM);
        }
    }
    if CHECK {
        proof_fields(&mut out.check, sec.relas(), size);
    }
    out
}

fn type_name(r_type: u32) -> String {
    let n = match r_type {
        R_X86_64_64 => "R_X86_64_64",
        R_X86_64_PC32 => "R_X86_64_PC32",
        R_X86_64_32 => "R_X86_64_32",
        R_X86_64_32S => "R_X86_64_32S",
        R_X86_64_PLT32 => "R_X86_64_PLT32",
        R_X86_64_GOTPCREL => "R_X86_64_GOTPCREL",
        R_X86_64_GOTPCRELX => "R_X86_64_GOTPCRELX",
        R_X86_64_REX_GOTPCRELX => "R_X86_64_REX_GOTPCRELX",
        R_X86_64_TLSGD => "R_X86_64_TLSGD",
        R_X86_64_TLSLD => "R_X86_64_TLSLD",
        R_X86_64_TPOFF32 => "R_X86_64_TPOFF32",
        R_X86_64_GOTTPOFF => "R_X86_64_GOTTPOFF",
        _ => return format!("unknown relocation ({r_type})"),
    };
    n.to_string()
}

fn mode_of_scan(cx: &ScanCx) -> Mode {
    Mode {
        pic: cx.pic(),
        exe: cx.is_exe(),
    }
}

fn reloc_error(
    res: &crate::resolve::Resolved,
    f: usize,
    s: usize,
    off: u64,
    r_type: u32,
    sym: &SymRef,
    why: &str,
) -> String {
    let o = &res.objects[f];
    let name = if sym.id as usize >= res.num_globals() {
        let i = sym_index_of(sym);
        let name = o.sym_name(i);
        if name.is_empty() && o.syms[i].st_type() == STT_SECTION {
            // A section symbol has no name of its own: the section's (as lld shows it).
            o.section_name(o.sym_shndx(i))
        } else {
            String::from_utf8_lossy(name).into_owned()
        }
    } else {
        res.display(sym.id)
    };
    // Where the symbol is defined: a local in the referencing object; a global where resolution found it.
    use crate::resolve::Def;
    let defined_in = match res.defs.get(sym.id as usize) {
        Some(Def::Object { file, .. }) => Some(res.objects[*file as usize].name.as_str()),
        Some(Def::Shared { file, .. }) => Some(res.shared[*file as usize].soname.as_str()),
        Some(Def::Linker) => Some("<internal>"),
        Some(Def::Undefined) => None,
        None => Some(o.name.as_str()),
    };
    let defined_in = defined_in.map_or(String::new(), |d| format!("\n>>> defined in {d}"));
    format!(
        "{} against symbol '{}' {}{}\n>>> referenced by {}:({}+0x{:x})",
        type_name(r_type),
        name,
        why,
        defined_in,
        o.name,
        o.section_name(s as u32),
        off
    )
}

fn sym_index_of(sym: &SymRef) -> usize {
    match sym.target {
        Target::Object { sym, .. } | Target::Imported { sym, .. } => sym as usize,
        _ => 0,
    }
}

impl Arch for X86_64 {
    const E_MACHINE: u16 = EM_X86_64;
    const R_RELATIVE: u32 = R_X86_64_RELATIVE;
    const R_IRELATIVE: u32 = R_X86_64_IRELATIVE;
    const R_GLOB_DAT: u32 = R_X86_64_GLOB_DAT;
    const R_JUMP_SLOT: u32 = R_X86_64_JUMP_SLOT;
    const R_COPY: u32 = R_X86_64_COPY;
    const R_ABS64: u32 = R_X86_64_64;
    const R_TPOFF64: u32 = R_X86_64_TPOFF64;
    const R_DTPMOD64: u32 = R_X86_64_DTPMOD64;
    const R_DTPOFF64: u32 = R_X86_64_DTPOFF64;
    const R_TLSDESC: u32 = R_X86_64_TLSDESC;
    const PLT0_SIZE: u64 = 16;
    const PLT_ENTRY_SIZE: u64 = 16;
    const IPLT_ENTRY_SIZE: u64 = 16;

    fn scan_section(cx: &ScanCx, f: usize, s: usize) -> SectionScan {
        if cx.check_writes {
            scan_section_with::<true>(cx, f, s)
        } else {
            scan_section_with::<false>(cx, f, s)
        }
    }

    // Absolute values only (no GOT, PLT or dynamic relocations), a tombstone for references to discarded code.
    // The hot loop of debug links, so section symbols (most of DWARF's relocations) are resolved without building
    // a `SymRef`. Also called for a whole section (`out_base` 0) by `apply_section`.
    fn apply_nonalloc_part(
        cx: &WriteCx,
        f: usize,
        s: usize,
        out: &mut [u8],
        out_base: u64,
        relas: &[crate::elf::Rela],
    ) -> Result<(), String> {
        let o = &cx.res.objects[f];
        // lld's tombstones: 1 where 0 would end a list (.debug_loc, .debug_ranges), 0 elsewhere.
        let name = o.sec_name(s);
        let tombstone = if name == b".debug_loc" || name == b".debug_ranges" {
            1
        } else {
            0
        };
        let sec_addr = &cx.lay.sec_addr[f];
        // A non-allocated output section has address 0, so P is the offset inside it.
        let p_base = cx.section_addr(f, s);
        // The merge sections (.debug_str, .debug_line_str) looked up last, with their piece hints.
        let mut merge_hint = [crate::layout::MergeCursor::default(); 2];
        for r in relas {
            let r_type = r.r_type(LE, false);
            if r_type == R_X86_64_NONE {
                continue;
            }
            let off = r.r_offset.get(LE);
            let a = r.r_addend.get(LE);
            let sym_idx = r.r_sym(LE, false) as usize;
            let at = off.wrapping_sub(out_base) as usize;
            let err_range = || offset_range_error(o, s, off);
            // Fast path: a local section symbol of a plain or merge section.
            let mut fast = None;
            if sym_idx < o.first_global
                && let Some(st) = o.syms.get(sym_idx)
                && st.st_type() == STT_SECTION
                && !matches!(r_type, R_X86_64_SIZE32 | R_X86_64_SIZE64)
            {
                let shndx = o.sym_shndx(sym_idx) as usize;
                let off = st.st_value.get(LE).wrapping_add(a as u64);
                if let (Some(&base), Some(target)) = (sec_addr.get(shndx), o.sections.get(shndx)) {
                    match target.kind {
                        crate::parse::SectionKind::Regular => {
                            fast = Some(if base == crate::layout::NO_ADDR {
                                tombstone
                            } else {
                                base.wrapping_add(off)
                            });
                        }
                        crate::parse::SectionKind::Merge => {
                            let k = if merge_hint[0].s == shndx {
                                0
                            } else if merge_hint[1].s == shndx {
                                1
                            } else {
                                merge_hint[1] = merge_hint[0];
                                merge_hint[0] = crate::layout::MergeCursor::default();
                                // A new section: its table, read in no useful order next, loaded at once
                                // (rg-debug, --threads=1: copy and relocate 38.2 -> 35.3 ms).
                                cx.lay.prefetch_pieces(f, shndx);
                                0
                            };
                            fast = Some(
                                crate::layout::merge_offset_addr(
                                    cx.lay,
                                    f,
                                    shndx,
                                    off,
                                    &mut merge_hint[k],
                                )
                                .unwrap_or(tombstone),
                            );
                        }
                        _ => {}
                    }
                }
            }
            let (v, sym) = match fast {
                Some(v) => (v, None),
                None => {
                    let sym = cx
                        .lookup(f, sym_idx)
                        .ok_or_else(|| format!("{}: invalid symbol index {sym_idx}", o.name))?;
                    (cx.nonalloc_value(&sym, a).unwrap_or(tombstone), Some(sym))
                }
            };
            let v = match r_type {
                R_X86_64_DTPOFF32 | R_X86_64_DTPOFF64 => cx.dtp_offset(v),
                R_X86_64_SIZE32 | R_X86_64_SIZE64 => match &sym {
                    Some(sym) => symbols::sym_size(cx.res, sym.target).wrapping_add(a as u64),
                    None => v,
                },
                R_X86_64_PC32 | R_X86_64_PC64 => v.wrapping_sub(p_base.wrapping_add(off)),
                _ => v,
            };
            match NONALLOC_WIDTH.get(r_type as usize) {
                Some(8) => put64(out, at, v).ok_or_else(err_range)?,
                Some(4) => put32(out, at, v as u32).ok_or_else(err_range)?,
                _ => {
                    let sym = match sym {
                        Some(sym) => sym,
                        None => cx
                            .lookup(f, sym_idx)
                            .ok_or_else(|| format!("{}: invalid symbol index {sym_idx}", o.name))?,
                    };
                    return Err(reloc_error(
                        cx.res,
                        f,
                        s,
                        off,
                        r_type,
                        &sym,
                        "is not supported in a non-allocated section",
                    ));
                }
            }
        }
        Ok(())
    }

    fn apply_section(
        cx: &WriteCx,
        f: usize,
        s: usize,
        out: &mut [u8],
        dyn_out: &mut DynRelSink<'_>,
    ) -> Result<(), String> {
        let o = &cx.res.objects[f];
        let sec = o.sec(s);
        if !sec.is_alloc() {
            return Self::apply_nonalloc_part(cx, f, s, out, 0, sec.relas());
        }
        let writable = sec.flags() & SHF_WRITE as u64 != 0;
        let eh_frame = sec.kind == crate::parse::SectionKind::EhFrame;
        let m = Mode {
            pic: cx.pic(),
            exe: cx.is_exe(),
        };
        let base = cx.section_addr(f, s);
        let eh_records = eh_frame.then(|| (cx.lay.sec_addr[f][s], cx.lay.eh_records.get(f, s)));
        let mut rec = 0usize;
        let mut skip_next = false;
        for (k, r) in sec.relas().iter().enumerate() {
            prefetch_ahead(cx.res, cx.space, Some(cx.lay), f, sec.relas(), k);
            prefetch_aux(cx.res, cx.lay, f, sec.relas(), k);
            if skip_next {
                skip_next = false;
                continue;
            }
            let off = r.r_offset.get(LE);
            let r_type = r.r_type(LE, false);
            if r_type == R_X86_64_NONE {
                continue;
            }
            let a = r.r_addend.get(LE);
            let sym_idx = r.r_sym(LE, false) as usize;
            // .eh_frame records move when dead FDEs before them are dropped: P follows its record, found by a
            // cursor that follows the (normally sorted) relocations rather than a search per relocation. A
            // PC-relative relocation (never a dynamic one) inside a dropped record (the FDE of discarded code, a
            // duplicate CIE) changes nothing that is written: skipped (clang-so: the FDEs of the COMDAT copies of
            // inline functions).
            let p_addr = match eh_records {
                None => base.wrapping_add(off),
                Some((block, recs)) => {
                    if recs.get(rec).is_some_and(|r| r.in_off > off) {
                        rec = 0;
                    }
                    while recs.get(rec).is_some_and(|r| r.in_off + r.size <= off) {
                        rec += 1;
                    }
                    match recs.get(rec) {
                        Some(r)
                            if r.in_off <= off
                                && r.out_off != crate::layout::NONE as u64
                                && block != crate::layout::NO_ADDR =>
                        {
                            block + r.out_off + (off - r.in_off)
                        }
                        Some(r)
                            if r.in_off <= off
                                && r.out_off == crate::layout::NONE as u64
                                && matches!(
                                    r_type,
                                    R_X86_64_PC32 | R_X86_64_PC64 | R_X86_64_PLT32
                                ) =>
                        {
                            continue;
                        }
                        _ => crate::layout::section_offset_addr(cx.lay, f, s, off).unwrap_or(0),
                    }
                }
            };
            // Short paths for the commonest relocations (clang-so: 3.4M of 3.7M), writing what `decide` and the
            // general code below would: calls to globals, and PC-relative and 64-bit references to a plain local
            // of this object, with S its address from the layout: S + A - P whatever the output, and S + A (with a
            // relative dynamic relocation where the output is position-independent).
            let fast = if eh_records.is_some() && r_type != R_X86_64_PC32 {
                // In .eh_frame only the PC-relative references to a local (an FDE's function, its LSDA).
                None
            } else if r_type == R_X86_64_PLT32 && sym_idx >= o.first_global {
                // A call to a global (clang-so: 1.3M), not an IFUNC: through its PLT entry if it has one (as
                // `decide` would choose for a preemptible target), otherwise straight to it.
                let id = cx.res.object_ids[f].get(sym_idx - o.first_global).copied();
                match id.and_then(|id| Some((id as usize, *cx.space.gprops.get(id as usize)?))) {
                    Some((id, b)) if b & SymProps::IFUNC == 0 => {
                        let s_val = cx.lay.addrs[id];
                        let target = if b & SymProps::PREEMPTIBLE != 0 {
                            cx.plt_addr(id as u32).unwrap_or(s_val)
                        } else {
                            s_val
                        };
                        Some(target.wrapping_add(a as u64).wrapping_sub(p_addr))
                    }
                    _ => None,
                }
            } else if !plain_local(o, sym_idx) {
                None
            } else {
                let s_val = cx.lay.addrs[cx.space.local_base[f] as usize + sym_idx];
                match r_type {
                    R_X86_64_PC32 | R_X86_64_PLT32 => {
                        Some(s_val.wrapping_add(a as u64).wrapping_sub(p_addr))
                    }
                    R_X86_64_64 => {
                        let v = s_val.wrapping_add(a as u64);
                        if m.pic
                            && o.sym_shndx(sym_idx) != SHN_ABS as u32
                            && !scan::packs_relative(cx.config, sec, off)
                        {
                            dyn_out.push(DynRel {
                                offset: p_addr,
                                r_type: Self::R_RELATIVE,
                                sym: 0,
                                addend: v as i64,
                            });
                        }
                        Some(v)
                    }
                    _ => None,
                }
            };
            if let Some(value) = fast {
                if let Err(e) = write_value(out, off as usize, r_type, value) {
                    return Err(match e {
                        WriteErr::Range => offset_range_error(o, s, off),
                        WriteErr::Overflow => {
                            let sym = cx.lookup(f, sym_idx).ok_or_else(|| {
                                format!("{}: invalid symbol index {sym_idx}", o.name)
                            })?;
                            reloc_error(
                                cx.res,
                                f,
                                s,
                                off,
                                r_type,
                                &sym,
                                &format!("out of range: 0x{value:x} does not fit"),
                            )
                        }
                    });
                }
                continue;
            }
            let sym = cx
                .lookup(f, sym_idx)
                .ok_or_else(|| format!("{}: invalid symbol index {sym_idx}", o.name))?;
            let at = off as usize;
            let err_range = || offset_range_error(o, s, off);
            let bad_tls_sequence = |sym: &SymRef| {
                reloc_error(
                    cx.res,
                    f,
                    s,
                    off,
                    r_type,
                    sym,
                    "is not followed by the expected __tls_get_addr call sequence",
                )
            };
            // Instruction rewrites below touch bytes just before the field; the field itself must be inside.
            if at >= out.len() {
                return Err(err_range());
            }
            let p = props(cx.res, cx.config, cx.space, &sym);
            let action = decide(&m, r_type, p, writable, sec.data(), off);
            let s_val = cx.sym_value(&sym, a, p.ifunc);
            let value: u64 = match action {
                Action::None | Action::TlsDescCallToNop => {
                    if action == Action::TlsDescCallToNop {
                        // call *(%rax) → xchg %ax,%ax
                        out.get_mut(at..at + 2)
                            .ok_or_else(err_range)?
                            .copy_from_slice(&[0x66, 0x90]);
                    }
                    continue;
                }
                Action::Abs => s_val.wrapping_add(a as u64),
                Action::Pc => s_val.wrapping_add(a as u64).wrapping_sub(p_addr),
                Action::DynRelative => {
                    // Packed: the place holds the addend (RELR is REL-style) and .relr.dyn names the place.
                    let v = s_val.wrapping_add(a as u64);
                    if !scan::packs_relative(cx.config, sec, off) {
                        dyn_out.push(DynRel {
                            offset: p_addr,
                            r_type: Self::R_RELATIVE,
                            sym: 0,
                            addend: v as i64,
                        });
                    }
                    v
                }
                Action::DynIrelative => {
                    // A function with an IFUNC stub has the stub as its one canonical address; otherwise the
                    // pointer is whatever the resolver returns.
                    let (r_type, v) = match cx.plt_addr(sym.id) {
                        Some(stub) => (Self::R_RELATIVE, stub.wrapping_add(a as u64)),
                        None => (
                            Self::R_IRELATIVE,
                            cx.lay.addrs[sym.id as usize].wrapping_add(a as u64),
                        ),
                    };
                    dyn_out.push_irelative(DynRel {
                        offset: p_addr,
                        r_type,
                        sym: 0,
                        addend: v as i64,
                    });
                    v
                }
                Action::DynSymbolic => {
                    dyn_out.push(DynRel {
                        offset: p_addr,
                        r_type: Self::R_ABS64,
                        sym: cx.dynsym_index(sym.id),
                        addend: a,
                    });
                    a as u64
                }
                Action::Plt => {
                    let target = cx.plt_addr(sym.id).unwrap_or(s_val);
                    match r_type {
                        R_X86_64_64 | R_X86_64_32 | R_X86_64_32S | R_X86_64_16 | R_X86_64_8 => {
                            target.wrapping_add(a as u64)
                        }
                        _ => target.wrapping_add(a as u64).wrapping_sub(p_addr),
                    }
                }
                Action::Got => {
                    let g = cx.got_addr(sym.id);
                    if r_type == R_X86_64_GOTPCREL64
                        || r_type == R_X86_64_GOTPCREL
                        || r_type == R_X86_64_GOTPCRELX
                        || r_type == R_X86_64_REX_GOTPCRELX
                    {
                        g.wrapping_add(a as u64).wrapping_sub(p_addr)
                    } else {
                        g.wrapping_add(a as u64)
                    }
                }
                Action::RelaxGotToLea => {
                    out[at - 2] = 0x8d;
                    s_val.wrapping_add(a as u64).wrapping_sub(p_addr)
                }
                Action::RelaxGotCall => {
                    out[at - 2] = 0x67;
                    out[at - 1] = 0xe8;
                    s_val.wrapping_add(a as u64).wrapping_sub(p_addr)
                }
                Action::RelaxGotJmp => {
                    out[at - 2] = 0xe9;
                    let v = s_val
                        .wrapping_add(a as u64)
                        .wrapping_sub(p_addr)
                        .wrapping_add(1);
                    put32(out, at - 1, v as u32).ok_or_else(err_range)?;
                    *out.get_mut(at + 3).ok_or_else(err_range)? = 0x90;
                    continue;
                }
                Action::TpOff => cx.tp_offset(s_val.wrapping_add(a as u64)),
                Action::TlsGd | Action::TlsLd | Action::TlsDesc => {
                    let pair = match action {
                        Action::TlsGd => cx.lay.aux_of(sym.id).map(|x| x.tlsgd),
                        Action::TlsDesc => cx.lay.aux_of(sym.id).map(|x| x.tlsdesc),
                        _ => Some(cx.lay.tlsld),
                    };
                    let slot = pair.filter(|&p| p != crate::layout::NONE).ok_or_else(|| {
                        reloc_error(cx.res, f, s, off, r_type, &sym, "has no TLS GOT entry")
                    })?;
                    cx.lay
                        .got_slot_addr(slot)
                        .wrapping_add(a as u64)
                        .wrapping_sub(p_addr)
                }
                Action::GotTp => cx
                    .gottp_addr(sym.id)
                    .wrapping_add(a as u64)
                    .wrapping_sub(p_addr),
                Action::GotTpToLe => {
                    let rex = out[at - 3];
                    let op = out[at - 2];
                    let reg = (out[at - 1] >> 3) & 7;
                    out[at - 3] = if rex == 0x4c { 0x49 } else { 0x48 };
                    out[at - 2] = if op == 0x8b { 0xc7 } else { 0x81 };
                    out[at - 1] = 0xc0 | reg;
                    cx.tp_offset(s_val.wrapping_add(a as u64).wrapping_add(4))
                }
                Action::TlsGdToLe | Action::TlsGdToIe => {
                    skip_next = true;
                    let start = at.checked_sub(4).ok_or_else(err_range)?;
                    if start + 16 > out.len() {
                        return Err(err_range());
                    }
                    // The input's instructions (which the scan checked the same way).
                    if !is_tlsgd_sequence(sec.data(), off) {
                        return Err(bad_tls_sequence(&sym));
                    }
                    let seq = &mut out[start..start + 16];
                    if action == Action::TlsGdToLe {
                        seq[..12].copy_from_slice(&[
                            0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x8d, 0x80,
                        ]);
                        let v = cx.tp_offset(s_val);
                        seq[12..16].copy_from_slice(&(v as u32).to_le_bytes());
                    } else {
                        seq[..12].copy_from_slice(&[
                            0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x03, 0x05,
                        ]);
                        let v = cx
                            .gottp_addr(sym.id)
                            .wrapping_sub(base.wrapping_add(start as u64 + 16));
                        seq[12..16].copy_from_slice(&(v as u32).to_le_bytes());
                    }
                    continue;
                }
                Action::TlsLdToLe => {
                    skip_next = true;
                    let start = at.checked_sub(3).ok_or_else(err_range)?;
                    let seq = out.get_mut(start..start + 12).ok_or_else(err_range)?;
                    if !is_tlsld_sequence(sec.data(), off) {
                        return Err(bad_tls_sequence(&sym));
                    }
                    seq.copy_from_slice(&[
                        0x66, 0x66, 0x66, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0,
                    ]);
                    continue;
                }
                Action::TlsDescToLe | Action::TlsDescToIe => {
                    // lea x@tlsdesc(%rip), %reg → mov $x@tpoff, %reg | mov x@gottpoff(%rip), %reg
                    let rex = *out.get(at.wrapping_sub(3)).ok_or_else(err_range)?;
                    let reg = (out[at - 1] >> 3) & 7;
                    if action == Action::TlsDescToLe {
                        out[at - 3] = 0x48 | (rex & 4) >> 2;
                        out[at - 2] = 0xc7;
                        out[at - 1] = 0xc0 | reg;
                        // clang's local-dynamic TLSDESC adds x@dtpoff to the descriptor of
                        // _TLS_MODULE_BASE_; those DTPOFFs become thread-pointer offsets here (see DtpOff), so
                        // the module base relaxes to thread-pointer offset 0.
                        if matches!(sym.target, Target::Linker)
                            && cx.res.name(sym.id) == b"_TLS_MODULE_BASE_"
                        {
                            0
                        } else {
                            cx.tp_offset(s_val)
                        }
                    } else {
                        out[at - 2] = 0x8b;
                        cx.gottp_addr(sym.id)
                            .wrapping_add(a as u64)
                            .wrapping_sub(p_addr)
                    }
                }
                Action::DtpOff => {
                    // In an executable every local-dynamic access was relaxed to local exec.
                    if m.exe {
                        cx.tp_offset(s_val.wrapping_add(a as u64))
                    } else {
                        cx.dtp_offset(s_val.wrapping_add(a as u64))
                    }
                }
                Action::Size => symbols::sym_size(cx.res, sym.target).wrapping_add(a as u64),
                Action::GotOff => s_val.wrapping_add(a as u64).wrapping_sub(cx.got_base()),
                Action::GotPc => cx.got_base().wrapping_add(a as u64).wrapping_sub(p_addr),
                Action::Error(why) => {
                    return Err(reloc_error(cx.res, f, s, off, r_type, &sym, why));
                }
            };
            write_value(out, at, r_type, value).map_err(|e| match e {
                WriteErr::Range => err_range(),
                WriteErr::Overflow => reloc_error(
                    cx.res,
                    f,
                    s,
                    off,
                    r_type,
                    &sym,
                    &format!("out of range: 0x{value:x} does not fit"),
                ),
            })?;
        }
        Ok(())
    }

    fn nonalloc_applies(cx: &ScanCx, f: usize, s: usize, relas: &[crate::elf::Rela]) -> bool {
        let o = &cx.res.objects[f];
        let sec = o.sec(s);
        let size = sec.size();
        // The symbol indexes `lookup` resolves: the locals, then the globals that have ids.
        let symbols = (o.first_global + cx.res.object_ids[f].len()) as u64;
        // Branch-free over every relocation: debug sections hold most of a debug link's relocations (rg-debug's
        // check is about a million of them, every one read again by the write pass). A software prefetch 256
        // relocations ahead, here and in `apply_nonalloc_part`, once measured faster (the check 5.35 -> 3.25 ms on
        // rg-release) and later slower, on warm inputs: interleaved medians of 11 --print-timing links, rg-debug
        // copy and relocate 14.6 -> 13.7 ms without it (28.3 -> 26.3 at --threads=1), rg-release 7.1 -> 6.7.
        let mut bad = false;
        for r in relas {
            let r_type = r.r_type(LE, false);
            let e = NONALLOC_WIDTH.get(r_type as usize).copied().unwrap_or(0);
            let applies = (r_type == R_X86_64_NONE)
                | ((e != 0)
                    & ((r.r_sym(LE, false) as u64) < symbols)
                    & (r.r_offset.get(LE).saturating_add(e as u64) <= size));
            bad |= !applies;
        }
        !bad
    }

    const CHECKED_REACH: u64 = i32::MAX as u64;

    fn write_plt0(out: &mut [u8], plt: u64, gotplt: u64) {
        out[..16].copy_from_slice(&[
            0xff, 0x35, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0, 0x0f, 0x1f, 0x40, 0x00,
        ]);
        out[2..6].copy_from_slice(&((gotplt + 8).wrapping_sub(plt + 6) as u32).to_le_bytes());
        out[8..12].copy_from_slice(&((gotplt + 16).wrapping_sub(plt + 12) as u32).to_le_bytes());
    }

    fn write_plt_entry(out: &mut [u8], entry: u64, slot: u64, index: u32, plt: u64) {
        out[..16].copy_from_slice(&[0xff, 0x25, 0, 0, 0, 0, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0]);
        out[2..6].copy_from_slice(&(slot.wrapping_sub(entry + 6) as u32).to_le_bytes());
        out[7..11].copy_from_slice(&index.to_le_bytes());
        out[12..16].copy_from_slice(&(plt.wrapping_sub(entry + 16) as u32).to_le_bytes());
    }

    fn write_iplt_entry(out: &mut [u8], entry: u64, slot: u64) {
        out[..16].copy_from_slice(&[
            0xff, 0x25, 0, 0, 0, 0, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
        ]);
        out[2..6].copy_from_slice(&(slot.wrapping_sub(entry + 6) as u32).to_le_bytes());
    }
}

fn offset_range_error(o: &crate::parse::ObjectFile, s: usize, off: u64) -> String {
    format!(
        "{}:({}+0x{off:x}): relocation offset is out of range",
        o.name,
        o.section_name(s as u32)
    )
}

enum WriteErr {
    Range,
    Overflow,
}

fn put32(out: &mut [u8], at: usize, v: u32) -> Option<()> {
    out.get_mut(at..at + 4)?.copy_from_slice(&v.to_le_bytes());
    Some(())
}

fn put64(out: &mut [u8], at: usize, v: u64) -> Option<()> {
    out.get_mut(at..at + 8)?.copy_from_slice(&v.to_le_bytes());
    Some(())
}

/// Which values a relocation's field holds: every one (64-bit fields, and 32-bit TLS offsets, which wrap like
/// GNU ld's), or a range that `write_value` checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fits {
    Any,
    /// -2^31..2^31.
    Signed32,
    /// 0..2^32.
    Unsigned32,
    /// 0..2^16 or -2^15..0.
    Either16,
    Either8,
    Signed16,
    Signed8,
}

/// The width in bytes of the field a relocation type writes, and what fits in it.
#[inline(always)]
const fn field(r_type: u32) -> (usize, Fits) {
    match r_type {
        R_X86_64_64 | R_X86_64_PC64 | R_X86_64_GOTOFF64 | R_X86_64_GOTPC64
        | R_X86_64_GOTPCREL64 | R_X86_64_SIZE64 | R_X86_64_DTPOFF64 | R_X86_64_TPOFF64
        | R_X86_64_PLTOFF64 => (8, Fits::Any),
        R_X86_64_32 | R_X86_64_SIZE32 => (4, Fits::Unsigned32),
        R_X86_64_16 => (2, Fits::Either16),
        R_X86_64_8 => (1, Fits::Either8),
        R_X86_64_PC16 => (2, Fits::Signed16),
        R_X86_64_PC8 => (1, Fits::Signed8),
        R_X86_64_DTPOFF32 | R_X86_64_TPOFF32 | R_X86_64_GOTTPOFF | R_X86_64_GOTPC32_TLSDESC => {
            (4, Fits::Any)
        }
        _ => (4, Fits::Signed32),
    }
}

/// Stores `value` in the field the relocation type names, checking that it fits.
fn write_value(out: &mut [u8], at: usize, r_type: u32, value: u64) -> Result<(), WriteErr> {
    let signed = value as i64;
    let (width, fits) = field(r_type);
    let ok = match fits {
        Fits::Any => true,
        Fits::Signed32 => signed >= i32::MIN as i64 && signed <= i32::MAX as i64,
        Fits::Unsigned32 => value <= u32::MAX as u64,
        Fits::Either16 => value <= u16::MAX as u64 || (signed >= i16::MIN as i64 && signed < 0),
        Fits::Either8 => value <= u8::MAX as u64 || (signed >= i8::MIN as i64 && signed < 0),
        Fits::Signed16 => signed >= i16::MIN as i64 && signed <= i16::MAX as i64,
        Fits::Signed8 => signed >= i8::MIN as i64 && signed <= i8::MAX as i64,
    };
    if !ok {
        return Err(WriteErr::Overflow);
    }
    let field = out.get_mut(at..at + width).ok_or(WriteErr::Range)?;
    field.copy_from_slice(&value.to_le_bytes()[..width]);
    Ok(())
}

/// `lea x@tlsgd(%rip), %rdi` with its prefixes, then `call __tls_get_addr` with its prefixes: the general-dynamic
/// sequence an executable relaxes, around a `R_X86_64_TLSGD` at `off` of `data`.
fn is_tlsgd_sequence(data: &[u8], off: u64) -> bool {
    let Some(start) = (off as usize).checked_sub(4) else {
        return false;
    };
    data.get(start..start + 16).is_some_and(|seq| {
        seq[..4] == [0x66, 0x48, 0x8d, 0x3d] && seq[8..12] == [0x66, 0x66, 0x48, 0xe8]
    })
}

/// `lea x@tlsld(%rip), %rdi; call __tls_get_addr` around a `R_X86_64_TLSLD` at `off` of `data`.
fn is_tlsld_sequence(data: &[u8], off: u64) -> bool {
    let Some(start) = (off as usize).checked_sub(3) else {
        return false;
    };
    data.get(start..start + 12)
        .is_some_and(|seq| seq[..3] == [0x48, 0x8d, 0x3d] && seq[7] == 0xe8)
}

/// `WRITE_PROOF[r_type]` for the write proof: the width of the field (`PROOF_WIDTH` bits; 0: no field, for
/// `R_X86_64_NONE`, or a type the proof does not cover: 8- and 16-bit fields, `R_X86_64_SIZE32`) and whether
/// `write_value` range-checks it (`PROOF_CHECKED`).
/// A table, so that `proof_fields` spends a load and a few branch-free operations per relocation.
const WRITE_PROOF: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut r = 0;
    while r < 64 {
        let (width, fits) = field(r as u32);
        t[r] = match fits {
            _ if r as u32 == R_X86_64_NONE || r as u32 == R_X86_64_SIZE32 => 0,
            // The call a TLS descriptor relaxes away: 2 bytes, no value.
            _ if r as u32 == R_X86_64_TLSDESC_CALL => 2,
            Fits::Any => width as u8,
            Fits::Signed32 | Fits::Unsigned32 => width as u8 | PROOF_CHECKED,
            _ => 0,
        };
        r += 1;
    }
    t
};
/// `NONALLOC_WIDTH[r_type]`: the width of the field `apply_nonalloc_part` writes for a relocation type, 0 for the
/// types it rejects (one table for it and for the write proof's `nonalloc_applies`).
const NONALLOC_WIDTH: [u8; 64] = {
    let mut t = [0u8; 64];
    t[R_X86_64_64 as usize] = 8;
    t[R_X86_64_DTPOFF64 as usize] = 8;
    t[R_X86_64_SIZE64 as usize] = 8;
    t[R_X86_64_PC64 as usize] = 8;
    t[R_X86_64_32 as usize] = 4;
    t[R_X86_64_32S as usize] = 4;
    t[R_X86_64_DTPOFF32 as usize] = 4;
    t[R_X86_64_SIZE32 as usize] = 4;
    t[R_X86_64_PC32 as usize] = 4;
    t
};
const PROOF_WIDTH: u8 = 0x0f;
const PROOF_CHECKED: u8 = 0x10;

/// Write proof (`scan::WriteCheck`): what the input decides about applying `relas`, the relocations of a section
/// of `size` bytes: every field lies inside the section and has a type the proof covers (an unsigned 32-bit field
/// a non-negative addend); records the largest |A| of a range-checked field. The instruction bytes before a field
/// are checked by `decide` (GOT relaxations) and `proof_tls` (TLS sequences).
///
/// A second, branch-free pass over the section's relocations after the scan's loop (still in cache), not more
/// work inside that loop: there it cost clang-so's scan 71 ms against 56 ms this way (medians of 9, interleaved),
/// as the loop waits on symbol lookups and the extra code only made it longer.
#[inline(never)]
fn proof_fields(check: &mut scan::WriteCheck, relas: &[crate::elf::Rela], size: u64) {
    let mut bad = false;
    let mut max_addend = 0u64;
    for r in relas {
        let r_type = r.r_type(LE, false);
        let off = r.r_offset.get(LE);
        let a = r.r_addend.get(LE);
        let e = WRITE_PROOF.get(r_type as usize).copied().unwrap_or(0);
        let width = (e & PROOF_WIDTH) as u64;
        let checked = e & PROOF_CHECKED != 0;
        bad |= ((width == 0) & (r_type != R_X86_64_NONE))
            | (off.saturating_add(width) > size)
            | ((r_type == R_X86_64_32) & (a < 0));
        max_addend = max_addend.max(if checked { a.unsigned_abs() } else { 0 });
    }
    check.unproven |= bad;
    check.max_addend = check.max_addend.max(max_addend);
}

/// Write proof: records the symbol of a range-checked field whose value may lie outside the image (absolute or
/// defined by the linker), to be checked after layout. Called for relocations against such symbols only.
#[cold]
fn proof_target(check: &mut scan::WriteCheck, r: &crate::elf::Rela, sym: &SymRef, p: Props) {
    let e = WRITE_PROOF
        .get(r.r_type(LE, false) as usize)
        .copied()
        .unwrap_or(0);
    if e & PROOF_CHECKED != 0
        && (matches!(sym.target, Target::Linker)
            || (p.absolute && matches!(sym.target, Target::Object { .. })))
    {
        check.abs_target(sym.id);
    }
}

/// Write proof: the TLS relaxations that rewrite instructions around the field need the whole sequence.
#[cold]
fn proof_tls(check: &mut scan::WriteCheck, action: Action, data: &[u8], off: u64) {
    check.unproven |= match action {
        Action::TlsGdToLe | Action::TlsGdToIe => !is_tlsgd_sequence(data, off),
        Action::TlsLdToLe => !is_tlsld_sequence(data, off),
        Action::TlsDescToLe | Action::TlsDescToIe => off < 3,
        _ => false,
    };
}
