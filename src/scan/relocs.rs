//! The scan of one section's relocations: each relocation's kind from the architecture, what it needs from the
//! policy (`reloc::decide`), recorded as symbol flags and dynamic relocation counts; and, when the output may be
//! written into the existing file, the input half of the write proof.

use super::{
    NEEDS_CANONICAL, NEEDS_COPY, NEEDS_DYNSYM, NEEDS_GOT, NEEDS_GOTTP, NEEDS_PLT, NEEDS_TLSDESC,
    NEEDS_TLSGD, STRONG_REF, ScanCx, SectionScan, WEAK_IN_CODE, WEAK_VIA_GOT, WriteCheck,
    packs_relative, undefined_error,
};
use crate::arch::{Arch, RelKind, Relax, proof};
use crate::elf::{LE, Rela};
use crate::index::{FileId, SecIdx};
use crate::parse::{ObjectFile, Sec, SectionKind};
use crate::reloc::{
    Action, Mode, Props, decide, prefetch_ahead, props, reloc_error, symbol_name, weak_direct,
    weak_rule, weak_via_got,
};
use crate::symbols::{SymProps, SymRef, Target};
use object::elf::{SHF_EXECINSTR, SHF_WRITE, SHN_ABS, STB_WEAK, STT_GNU_IFUNC};
use std::sync::atomic::Ordering::Relaxed;

/// Scans the relocations of live allocated section `s` of object `f`.
pub fn scan_section<A: Arch>(cx: &ScanCx, f: FileId, s: SecIdx) -> SectionScan {
    if cx.check_writes {
        scan_section_with::<A, true>(cx, f, s)
    } else {
        scan_section_with::<A, false>(cx, f, s)
    }
}

/// The section a scan loop reads, what each of its steps needs besides the relocation.
struct Section<'a> {
    cx: &'a ScanCx<'a>,
    f: FileId,
    s: SecIdx,
    o: &'a ObjectFile,
    sec: Sec<'a>,
    writable: bool,
    m: Mode,
    /// The file's sections discarded with their COMDAT group (`Resolved::comdat_discarded`), for the check of
    /// references to their local symbols; empty where such references are allowed (`.eh_frame`, whose records of
    /// discarded code are dropped, `.gcc_except_table` and `.sframe`, as in GNU ld).
    discarded: &'a [bool],
}

/// The fields of one relocation that every step reads. The steps that take it are `#[inline(always)]`, and what
/// they report goes through functions taking plain values: a step left out of line, or a reference to a field
/// (`format!` takes one), keeps the relocation in memory for the whole loop.
#[derive(Clone, Copy)]
struct Rel {
    off: u64,
    r_type: u32,
    kind: RelKind,
    sym_idx: usize,
}

/// The scan of one section; `CHECK`: also gather the write proof (`ScanCx::check_writes`), a separate copy of the
/// loop so that a link without it runs exactly the loop it ran before. The loop stays here and its steps are
/// inlined: the short paths go to the next relocation before the general path's lookups, and the skipped
/// relocation after a TLS relaxation crosses iterations.
fn scan_section_with<A: Arch, const CHECK: bool>(cx: &ScanCx, f: FileId, s: SecIdx) -> SectionScan {
    let o = &cx.res.objects[f.index()];
    let sec = o.sec(s);
    let sc = Section {
        cx,
        f,
        s,
        o,
        sec,
        writable: sec.flags() & SHF_WRITE as u64 != 0,
        m: Mode::of(cx.config),
        discarded: if sec.kind == SectionKind::EhFrame
            || matches!(o.sec_name(s.index()), b".gcc_except_table" | b".sframe")
        {
            &[]
        } else {
            &cx.res.comdat_discarded[f.index()]
        },
    };
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
        let r_type = r.r_type(LE, false);
        let rel = Rel {
            off: r.r_offset.get(LE),
            r_type,
            kind: A::classify(r_type),
            sym_idx: r.r_sym(LE, false) as usize,
        };
        if plain_local_short_path(&sc, rel, &mut out) || global_call_short_path(&sc, rel) {
            continue;
        }
        skip_next = scan_general::<A, CHECK>(&sc, r, rel, &mut out);
    }
    if CHECK {
        proof_fields::<A>(&mut out.check, sec.relas(), size);
    }
    out
}

/// References to a local that is not an IFUNC or absolute (the write proof bounds those), as the general path
/// decides them: PC-relative ones need nothing, 64-bit ones a relative dynamic relocation where the output is
/// position-independent (one in a read-only section takes the general path, which reports it). Section symbols of
/// merged strings too (clang-so: 346K pointers to string literals), which `apply_section` writes by the general
/// path as it looks their pieces up. Returns whether the relocation was handled here.
#[inline(always)]
fn plain_local_short_path(sc: &Section, rel: Rel, out: &mut SectionScan) -> bool {
    let o = sc.o;
    if rel.sym_idx < o.first_global
        && o.syms
            .get(rel.sym_idx)
            .is_some_and(|st| st.st_type() != STT_GNU_IFUNC)
        && let shndx = o.sym_shndx(rel.sym_idx)
        && shndx != SHN_ABS as u32
        && sc.discarded.get(shndx as usize) != Some(&true)
    {
        match rel.kind {
            RelKind::Pc | RelKind::Plt => return true,
            RelKind::AbsPtr if !sc.m.pic => return true,
            RelKind::AbsPtr if sc.writable => {
                count_relative(sc, rel.off, out);
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Calls to a global that an object defines or a shared object exports, not an IFUNC or absolute (clang-so: 1.3M
/// of its 3.7M relocations), decided from the global's property bits alone, as the general path decides them: a
/// PLT entry and a dynamic symbol where the target is preemptible (an import always is), nothing otherwise, and an
/// import marked as referenced by a non-weak call. No `Def` read, no `decide`, and no error checks, which cannot
/// fire for such a target. Returns whether the relocation was handled here.
#[inline(always)]
fn global_call_short_path(sc: &Section, rel: Rel) -> bool {
    let (cx, o) = (sc.cx, sc.o);
    if rel.kind == RelKind::Plt
        && rel.sym_idx >= o.first_global
        && let Some(&id) = cx.res.object_ids[sc.f.index()].get(rel.sym_idx - o.first_global)
        && let Some(&b) = cx.space.gprops.get(id.index())
        && b & (SymProps::IFUNC | SymProps::ABSOLUTE) == 0
        && (b & SymProps::DEFINED != 0
            || b & (SymProps::IMPORTED | SymProps::PREEMPTIBLE)
                == SymProps::IMPORTED | SymProps::PREEMPTIBLE)
    {
        let mut fl = 0;
        if b & SymProps::PREEMPTIBLE != 0 {
            fl |= NEEDS_PLT | NEEDS_DYNSYM;
        }
        if b & SymProps::IMPORTED != 0
            && o.syms
                .get(rel.sym_idx)
                .is_some_and(|st| st.st_bind() != STB_WEAK)
        {
            fl |= STRONG_REF;
        }
        if fl != 0 {
            cx.set_id(id, fl);
        }
        return true;
    }
    false
}

/// A relative dynamic relocation at `off`: packed into `.relr.dyn` where it can be, else counted for `.rela.dyn`.
#[inline(always)]
fn count_relative(sc: &Section, off: u64, out: &mut SectionScan) {
    if packs_relative(sc.cx.config, sc.sec, off) {
        out.relr.push(off);
    } else {
        out.dyn_relocs += 1;
    }
}

/// The general path: the symbol looked up and checked, the policy's action (`decide`) and what it needs recorded.
/// Returns whether the next relocation belongs to this one's relaxed sequence (and is skipped).
#[inline(always)]
fn scan_general<A: Arch, const CHECK: bool>(
    sc: &Section,
    r: &Rela,
    rel: Rel,
    out: &mut SectionScan,
) -> bool {
    let cx = sc.cx;
    let Some(sym) = cx.lookup(sc.f, rel.sym_idx) else {
        out.errors.push(invalid_symbol_index(sc.o, sc.s, rel.off));
        return false;
    };
    if rel.kind == RelKind::None {
        return false;
    }
    if rel.sym_idx < sc.o.first_global
        && sc.discarded.get(sc.o.sym_shndx(rel.sym_idx) as usize) == Some(&true)
    {
        out.errors.push(discarded_local(sc.o, sc.s, rel.sym_idx));
        return false;
    }
    if matches!(
        sym.target,
        Target::Imported { .. } | Target::Undefined { .. }
    ) && sc.o.syms[rel.sym_idx].st_bind() != STB_WEAK
    {
        cx.set(&sym, STRONG_REF);
    }
    if undefined_is_error(sc, rel, &sym, out) {
        return false;
    }
    let mut p = props(cx.res, cx.config, cx.space, &sym);
    let deferred = p.weak_rule && unsettled_reference(sc, rel, &sym, &mut p, out);
    let action = decide::<A>(
        &sc.m,
        rel.kind,
        rel.r_type,
        p,
        sc.writable,
        sc.sec.data(),
        rel.off,
    );
    if CHECK && !matches!(action, Action::Error(_)) {
        proof_decision::<A>(&mut out.check, sc.sec, r, rel, &sym, p, action);
    }
    if matches!(
        action,
        Action::DynRelative | Action::DynIrelative | Action::DynSymbolic
    ) && !sc.writable
    {
        text_relocation::<A>(sc, rel, &sym, out);
    }
    if !deferred {
        record_needs::<A>(sc, rel, &sym, p, action, out);
    }
    let skip_next = match action {
        Action::Relax(x) => A::relax_consumes_next(x),
        _ => false,
    };
    // Data from a shared object referenced directly from an executable: copy relocation.
    if p.imported && !p.func && sc.m.exe && matches!(action, Action::Abs | Action::Pc) {
        copy_relocation::<A>(sc, rel, &sym, out);
    }
    skip_next
}

/// A reference to an executable's undefined symbol under GNU ld's undefined-weak rule, decided as that rule will
/// leave it (`reloc::weak_rule`) and recorded for the settling (`scan::weak`): a GOT or PLT reference, or another
/// one in code. Returns whether its dynamic relocation waits for the settling (a pointer in a PIE's data).
#[cold]
#[inline(never)]
fn unsettled_reference(
    sc: &Section,
    rel: Rel,
    sym: &SymRef,
    p: &mut Props,
    out: &mut SectionScan,
) -> bool {
    let (q, deferred) = weak_rule(*p, rel.kind, sc.sec.flags(), &sc.m);
    *p = q;
    if weak_via_got(rel.kind) {
        sc.cx.set(sym, WEAK_VIA_GOT);
    } else if weak_direct(rel.kind) && sc.sec.flags() & SHF_EXECINSTR as u64 != 0 {
        sc.cx.set(sym, WEAK_IN_CODE);
    }
    out.unsettled.push((sym.id, deferred));
    deferred
}

/// Reports a reference to an undefined symbol: executables must resolve everything; shared objects only with
/// -z defs / --no-undefined, and a hidden symbol, which no other module can define, always (as GNU ld). Returns
/// whether it is an error, which ends this relocation's scan.
#[inline(always)]
fn undefined_is_error(sc: &Section, rel: Rel, sym: &SymRef, out: &mut SectionScan) -> bool {
    let cx = sc.cx;
    // The conditions before the message: a shared object's references to undefined symbols are common.
    if (cx.is_exe() || cx.config.z_defs || cx.res.hidden.get(sym.id.index()) == Some(&true))
        && cx.config.report_undefined
        && let Some(e) = undefined_error(cx, sc.f, sc.s, rel.off, sym)
    {
        if cx.config.warn_undefined {
            out.warnings.push(e);
        } else {
            out.errors.push(e);
            out.undefined.push(sym.id);
            return true;
        }
    }
    false
}

/// Write proof: what the decided action adds to it, a target outside the image or a TLS sequence to rewrite.
#[inline(always)]
fn proof_decision<A: Arch>(
    check: &mut WriteCheck,
    sec: Sec,
    r: &Rela,
    rel: Rel,
    sym: &SymRef,
    p: Props,
    action: Action,
) {
    if p.absolute || matches!(sym.target, Target::Linker) {
        proof_target::<A>(check, r, sym, p);
    }
    if let Action::Relax(
        x @ (Relax::GdToLe | Relax::GdToIe | Relax::LdToLe | Relax::DescToLe | Relax::DescToIe),
    ) = action
    {
        check.unproven |= !A::relax_sequence_ok(x, sec.data(), rel.off);
    }
}

/// A dynamic relocation in a read-only section (a text relocation): an error under -z text; otherwise, as GNU ld
/// does by default, the output gets DT_TEXTREL and a warning per section.
#[inline(always)]
fn text_relocation<A: Arch>(sc: &Section, rel: Rel, sym: &SymRef, out: &mut SectionScan) {
    let cx = sc.cx;
    if cx.config.z_text {
        out.errors.push(reloc_error::<A>(
            cx.res,
            sc.f,
            sc.s,
            rel.off,
            rel.r_type,
            sym,
            "would need a text relocation; recompile with -fPIC or link with -z notext",
        ));
    } else {
        cx.textrel.store(true, Relaxed);
        if !cx.config.warn_textrel {
            return;
        }
        out.textrel_warning.get_or_insert_with(|| {
            format!(
                "{}: relocation against '{}' in read-only section '{}'",
                sc.o.name,
                symbol_name(cx.res, sc.f, sym),
                sc.o.section_name(sc.s.0)
            )
        });
    }
}

/// What `action` needs: flags on the symbol (GOT, PLT, TLS slots, a dynamic symbol), dynamic relocations counted
/// for the section, the output-wide needs (the GOT's base, the local-dynamic pair), or an error.
#[inline(always)]
fn record_needs<A: Arch>(
    sc: &Section,
    rel: Rel,
    sym: &SymRef,
    p: Props,
    action: Action,
    out: &mut SectionScan,
) {
    let cx = sc.cx;
    match action {
        Action::None | Action::Abs | Action::Pc | Action::TpOff | Action::DtpOff | Action::Size => {
        }
        Action::Relax(
            Relax::GotToLea
            | Relax::GotCall
            | Relax::GotJmp
            | Relax::DescCallToNop
            | Relax::IeToLe
            | Relax::DescToLe,
        ) => {}
        Action::DynRelative => count_relative(sc, rel.off, out),
        Action::DynIrelative => out.irel_relocs += 1,
        Action::DynSymbolic => {
            cx.set(sym, NEEDS_DYNSYM);
            out.dyn_relocs += 1;
        }
        Action::Plt => {
            let via = if p.preemptible {
                NEEDS_DYNSYM
            } else {
                NEEDS_GOT
            };
            cx.set(sym, NEEDS_PLT | via);
            if rel.kind != RelKind::Plt {
                if imported_protected(cx, sym) {
                    let why = "takes the address of a protected function of a shared library: the \
                               executable's canonical PLT entry would break pointer equality; recompile with -fPIC";
                    out.errors.push(error::<A>(sc, rel, sym, why));
                } else {
                    cx.set(sym, NEEDS_CANONICAL);
                }
            }
        }
        Action::Got | Action::GotRel => {
            cx.set(sym, NEEDS_GOT);
            if p.preemptible {
                cx.set(sym, NEEDS_DYNSYM);
            }
            if action == Action::GotRel {
                cx.needs_got_base.store(true, Relaxed);
            }
        }
        Action::PltOff => {
            let via = if p.preemptible {
                NEEDS_DYNSYM
            } else {
                NEEDS_GOT
            };
            cx.set(sym, NEEDS_PLT | via);
            cx.needs_got_base.store(true, Relaxed);
        }
        Action::GotTp | Action::Relax(Relax::GdToIe | Relax::DescToIe) => {
            cx.set(sym, NEEDS_GOTTP);
            if p.preemptible {
                cx.set(sym, NEEDS_DYNSYM);
            }
        }
        Action::Relax(Relax::GdToLe | Relax::LdToLe) => {}
        Action::TlsGd | Action::TlsDesc => {
            cx.set(
                sym,
                if action == Action::TlsGd {
                    NEEDS_TLSGD
                } else {
                    NEEDS_TLSDESC
                },
            );
            if p.preemptible {
                cx.set(sym, NEEDS_DYNSYM);
            }
        }
        Action::TlsLd => cx.needs_tlsld.store(true, Relaxed),
        Action::GotOff | Action::GotPc => cx.needs_got_base.store(true, Relaxed),
        Action::Error(why) => out.errors.push(error::<A>(sc, rel, sym, why)),
    }
}

/// Data of a shared object that an executable references directly: a copy relocation, unless the library's own
/// references would not see the copy or `-z nocopyreloc` forbids it.
#[inline(always)]
fn copy_relocation<A: Arch>(sc: &Section, rel: Rel, sym: &SymRef, out: &mut SectionScan) {
    if imported_protected(sc.cx, sym) {
        let why = "needs a copy relocation of a protected symbol of a shared library, which would \
                   not see the copy; recompile with -fPIC";
        out.errors.push(error::<A>(sc, rel, sym, why));
        return;
    }
    if sc.cx.config.z_nocopyreloc {
        let why = "needs a copy relocation, which -z nocopyreloc forbids; recompile with -fPIC";
        out.errors.push(error::<A>(sc, rel, sym, why));
        return;
    }
    sc.cx.set(sym, NEEDS_COPY | NEEDS_DYNSYM);
}

/// The message for a relocation at `off` in section `s` of `o` whose symbol index is out of range (out of line;
/// see [`Rel`]).
#[cold]
#[inline(never)]
fn invalid_symbol_index(o: &ObjectFile, s: SecIdx, off: u64) -> String {
    format!(
        "{}:({}+0x{off:x}): invalid symbol index",
        o.name,
        o.section_name(s.0)
    )
}

/// GNU ld's error for a reference to local symbol `sym` of a section discarded with its COMDAT group (the group
/// of another file won): the symbol would have no address. The section is named with its group's signature.
#[cold]
#[inline(never)]
fn discarded_local(o: &ObjectFile, s: SecIdx, i: usize) -> String {
    let shndx = o.sym_shndx(i);
    let name = match o.sym_name(i) {
        [] => o.section_name(shndx),
        n => crate::diag::demangle(n),
    };
    let signature = (o.comdats.iter())
        .find(|g| g.sections().any(|m| m == shndx))
        .filter(|g| matches!(g.sig, crate::parse::GroupSig::Symbol(_)))
        .map_or(String::new(), |g| {
            format!("[{}]", String::from_utf8_lossy(g.signature(o)))
        });
    format!(
        "`{name}' referenced in section `{}' of {}: defined in discarded section `{}{signature}' of {}",
        o.section_name(s.0),
        o.name,
        o.section_name(shndx),
        o.name
    )
}

/// The message for relocation `rel` against `sym` of the section.
#[inline(always)]
fn error<A: Arch>(sc: &Section, rel: Rel, sym: &SymRef, why: &str) -> String {
    reloc_error::<A>(sc.cx.res, sc.f, sc.s, rel.off, rel.r_type, sym, why)
}

/// Whether `sym` is a shared library's `STV_PROTECTED` definition: the library binds its own references to it,
/// so an executable may neither copy it (copy relocation) nor give it another address (canonical PLT entry).
/// GNU ld and lld refuse both.
fn imported_protected(cx: &ScanCx, sym: &crate::symbols::SymRef) -> bool {
    match sym.target {
        Target::Imported { file, sym } => {
            cx.res.shared[file.index()].syms[sym as usize].st_visibility()
                == object::elf::STV_PROTECTED
        }
        _ => false,
    }
}

/// Write proof (`scan::WriteCheck`): what the input decides about applying `relas`, the relocations of a section
/// of `size` bytes: every field lies inside the section and has a type the proof covers (an unsigned 32-bit field
/// a non-negative addend); records the largest |A| of a range-checked field. The instruction bytes before a field
/// are checked by `decide` (GOT relaxations) and `Arch::relax_sequence_ok` (TLS sequences).
///
/// A second, branch-free pass over the section's relocations after the scan's loop (still in cache), not more
/// work inside that loop: there it cost clang-so's scan 71 ms against 56 ms this way (medians of 9, interleaved),
/// as the loop waits on symbol lookups and the extra code only made it longer.
#[inline(never)]
fn proof_fields<A: Arch>(check: &mut WriteCheck, relas: &[crate::elf::Rela], size: u64) {
    let mut bad = false;
    let mut max_addend = 0u64;
    for r in relas {
        let r_type = r.r_type(LE, false);
        let off = r.r_offset.get(LE);
        let a = r.r_addend.get(LE);
        let e = A::write_proof(r_type);
        let width = (e & proof::WIDTH) as u64;
        let checked = e & proof::CHECKED != 0;
        bad |= ((width == 0) & (r_type != A::R_NONE))
            | (off.saturating_add(width) > size)
            | ((e & proof::UNSIGNED != 0) & (a < 0));
        max_addend = max_addend.max(if checked { a.unsigned_abs() } else { 0 });
    }
    check.unproven |= bad;
    check.max_addend = check.max_addend.max(max_addend);
}

/// Write proof: records the symbol of a range-checked field whose value may lie outside the image (absolute or
/// defined by the linker), to be checked after layout. Called for relocations against such symbols only.
#[cold]
fn proof_target<A: Arch>(check: &mut WriteCheck, r: &crate::elf::Rela, sym: &SymRef, p: Props) {
    let e = A::write_proof(r.r_type(LE, false));
    if e & proof::CHECKED != 0
        && (matches!(sym.target, Target::Linker)
            || (p.absolute && matches!(sym.target, Target::Object { .. })))
    {
        check.abs_target(sym.id);
    }
}

/// Whether the writer applies every relocation of `relas`, a run of those of non-allocated section `s` of object
/// `f`, without an error (a supported type, a known symbol, a field inside the section); see [`WriteCheck`].
pub fn nonalloc_applies<A: Arch>(
    cx: &ScanCx,
    f: FileId,
    s: SecIdx,
    relas: &[crate::elf::Rela],
) -> bool {
    let o = &cx.res.objects[f.index()];
    let sec = o.sec(s);
    let size = sec.size();
    // The symbol indexes `lookup` resolves: the locals, then the globals that have ids.
    let symbols = (o.first_global + cx.res.object_ids[f.index()].len()) as u64;
    // Branch-free over every relocation: debug sections hold most of a debug link's relocations (rg-debug's
    // check is about a million of them, every one read again by the write pass). A software prefetch 256
    // relocations ahead, here and in `write::apply`, once measured faster (the check 5.35 -> 3.25 ms on
    // rg-release) and later slower, on warm inputs: interleaved medians of 11 --print-timing links, rg-debug
    // copy and relocate 14.6 -> 13.7 ms without it (28.3 -> 26.3 at --threads=1), rg-release 7.1 -> 6.7.
    let mut bad = false;
    for r in relas {
        let r_type = r.r_type(LE, false);
        let e = A::nonalloc_width(r_type);
        let applies = (r_type == A::R_NONE)
            | ((e != 0)
                & ((r.r_sym(LE, false) as u64) < symbols)
                & (r.r_offset.get(LE).saturating_add(e as u64) <= size));
        bad |= !applies;
    }
    !bad
}
