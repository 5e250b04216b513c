//! Applying relocations while the input sections are copied: each relocation's kind from the architecture, what
//! to write from the policy (`reloc::decide`, the same decision the scan made), the value computed here and
//! encoded by the architecture. Short paths handle the commonest cases (calls to globals, references to plain
//! locals, debug sections' section symbols) with the values the general path would compute.

use super::{DynRel, DynRelSink, WriteCx};
use crate::arch::{Arch, RelKind, Relax, WriteErr};
use crate::elf::LE;
use crate::index::{FileId, SecIdx};
use crate::layout::{EhRecord, MergeCursor, NO_ADDR, NONE, merge_offset_addr, section_offset_addr};
use crate::parse::{ObjectFile, Sec, SectionKind};
use crate::reloc::{
    Action, Mode, decide, offset_range_error, plain_local, prefetch_ahead, props, reloc_error,
    symbol_at, weak_rule,
};
use crate::scan::packs_relative;
use crate::symbols::{self, SymProps, SymRef, Target};
use object::elf::{SHF_WRITE, SHN_ABS, STT_SECTION};

/// Relocations this far ahead get their global's GOT/PLT record prefetched, once `prefetch_ahead` has brought in
/// the index that locates it.
const PREFETCH_AUX_AHEAD: usize = 8;

/// When writing: starts loading the GOT/PLT record of the global named `PREFETCH_AUX_AHEAD` relocations after
/// `k` (a random access into every symbol's records, which PLT calls and GOT loads read).
#[inline(always)]
fn prefetch_aux(cx: &WriteCx, f: FileId, relas: &[crate::elf::Rela], k: usize) {
    if let Some(Ok(g)) = symbol_at(cx.res, f, relas, k + PREFETCH_AUX_AHEAD)
        && let Some(&x) = cx.lay.aux_index.get(g)
        && x != NONE
    {
        crate::elf::prefetch(cx.lay.aux.as_ptr().wrapping_add(x as usize));
    }
}

/// The value a relaxation writes (`Arch::relax`): a GOT relaxation's target S + A - P, a relaxation to local exec
/// the thread-pointer offset, one to initial exec the GOT slot's address - P.
fn relaxed_value(cx: &WriteCx, x: Relax, sym: &SymRef, s_val: u64, a: i64, p_addr: u64) -> u64 {
    match x {
        Relax::GotToLea | Relax::GotCall | Relax::GotJmp => {
            s_val.wrapping_add(a as u64).wrapping_sub(p_addr)
        }
        Relax::IeToLe => cx.tp_offset(s_val.wrapping_add(a as u64)),
        Relax::GdToLe => cx.tp_offset(s_val),
        Relax::GdToIe => cx.gottp_addr(sym.id).wrapping_sub(p_addr),
        // clang's local-dynamic TLSDESC adds x@dtpoff to the descriptor of _TLS_MODULE_BASE_; those DTPOFFs become
        // thread-pointer offsets here (see DtpOff), so the module base relaxes to thread-pointer offset 0.
        Relax::DescToLe => {
            if matches!(sym.target, Target::Linker) && cx.res.name(sym.id) == b"_TLS_MODULE_BASE_" {
                0
            } else {
                cx.tp_offset(s_val)
            }
        }
        Relax::DescToIe => cx
            .gottp_addr(sym.id)
            .wrapping_add(a as u64)
            .wrapping_sub(p_addr),
        Relax::LdToLe | Relax::DescCallToNop => 0,
    }
}

fn put32(out: &mut [u8], at: usize, v: u32) -> Option<()> {
    out.get_mut(at..at + 4)?.copy_from_slice(&v.to_le_bytes());
    Some(())
}

fn put64(out: &mut [u8], at: usize, v: u64) -> Option<()> {
    out.get_mut(at..at + 8)?.copy_from_slice(&v.to_le_bytes());
    Some(())
}

// Absolute values only (no GOT, PLT or dynamic relocations), a tombstone for references to discarded code.
// The hot loop of debug links, so section symbols (most of DWARF's relocations) are resolved without building
// a `SymRef`. Also called for a whole section (`out_base` 0) by `apply_section`.
pub fn apply_nonalloc_part<A: Arch>(
    cx: &WriteCx,
    f: FileId,
    s: SecIdx,
    out: &mut [u8],
    out_base: u64,
    relas: &[crate::elf::Rela],
) -> Result<(), String> {
    let o = &cx.res.objects[f.index()];
    // lld's tombstones: 1 where 0 would end a list (.debug_loc, .debug_ranges), 0 elsewhere.
    let name = o.sec_name(s.index());
    let tombstone = if name == b".debug_loc" || name == b".debug_ranges" {
        1
    } else {
        0
    };
    let sec_addr = &cx.lay.sec_addr[f.index()];
    // A non-allocated output section has address 0, so P is the offset inside it.
    let p_base = cx.section_addr(f, s);
    // The merge sections (.debug_str, .debug_line_str) looked up last, with their piece hints.
    let mut merge_hint = [MergeCursor::default(); 2];
    for r in relas {
        let r_type = r.r_type(LE, false);
        if r_type == A::R_NONE {
            continue;
        }
        let kind = A::classify(r_type);
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
            && kind != RelKind::Size
        {
            let shndx = o.sym_shndx(sym_idx) as usize;
            let off = st.st_value.get(LE).wrapping_add(a as u64);
            if let (Some(&base), Some(target)) = (sec_addr.get(shndx), o.sections.get(shndx)) {
                match target.kind {
                    SectionKind::Regular => {
                        fast = Some(if base == NO_ADDR {
                            cx.kept_copy_addr(f, SecIdx::new(shndx), off)
                                .unwrap_or(tombstone)
                        } else {
                            base.wrapping_add(off)
                        });
                    }
                    SectionKind::Merge => {
                        let k = if merge_hint[0].s == SecIdx::new(shndx) {
                            0
                        } else if merge_hint[1].s == SecIdx::new(shndx) {
                            1
                        } else {
                            merge_hint[1] = merge_hint[0];
                            merge_hint[0] = MergeCursor::default();
                            // A new section: its table, read in no useful order next, loaded at once
                            // (rg-debug, --threads=1: copy and relocate 38.2 -> 35.3 ms).
                            cx.lay.prefetch_pieces(f, SecIdx::new(shndx));
                            0
                        };
                        fast = Some(
                            merge_offset_addr(
                                cx.lay,
                                f,
                                SecIdx::new(shndx),
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
        let v = match kind {
            RelKind::DtpOff => cx.dtp_offset(v),
            RelKind::Size => match &sym {
                Some(sym) => symbols::sym_size(cx.res, sym.target).wrapping_add(a as u64),
                None => v,
            },
            RelKind::Pc => v.wrapping_sub(p_base.wrapping_add(off)),
            RelKind::GotOff => v.wrapping_sub(cx.got_base()),
            _ => v,
        };
        match A::nonalloc_width(r_type) {
            8 => put64(out, at, v).ok_or_else(err_range)?,
            4 => put32(out, at, v as u32).ok_or_else(err_range)?,
            // A script can place code in a section it leaves unallocated, at an address (SeaBIOS's
            // `.fixedaddr.*`, whose 16-bit code is copied into place by a later link): its plain absolute and
            // PC-relative fields are written as in an allocated section, as GNU ld writes them.
            _ if matches!(kind, RelKind::AbsPtr | RelKind::AbsNarrow | RelKind::Pc) => {
                A::write_value(out, at, r_type, v).map_err(|e| match e {
                    WriteErr::Range => err_range(),
                    WriteErr::Overflow => match cx.lookup(f, sym_idx) {
                        Some(sym) => overflow_error::<A>(cx, f, s, off, r_type, &sym, v),
                        None => format!("{}: invalid symbol index {sym_idx}", o.name),
                    },
                })?
            }
            _ => {
                let sym = match sym {
                    Some(sym) => sym,
                    None => cx
                        .lookup(f, sym_idx)
                        .ok_or_else(|| format!("{}: invalid symbol index {sym_idx}", o.name))?,
                };
                return Err(reloc_error::<A>(
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

/// The allocated section being relocated: what each step of its loop reads besides the relocation.
struct Section<'a> {
    cx: &'a WriteCx<'a>,
    f: FileId,
    s: SecIdx,
    o: &'a ObjectFile,
    sec: Sec<'a>,
    writable: bool,
    m: Mode,
}

/// The fields of one relocation that the loop's helpers read. The helpers that take it are `#[inline(always)]`,
/// and the messages are made by functions taking plain values: a helper left out of line, or a reference to a
/// field (a closure or `format!` takes one), keeps the relocation in memory for the whole loop.
#[derive(Clone, Copy)]
struct Rel {
    off: u64,
    r_type: u32,
    kind: RelKind,
    a: i64,
    sym_idx: usize,
}

/// Applies the relocations of section `s` of object `f` to `out`, its bytes in the output (already copied),
/// emitting the dynamic relocations that scan counted into `dyn_out`.
///
/// The hottest loop of the link: its short paths go to the next relocation before the general path's lookups,
/// and its state (the skipped relocation after a TLS relaxation, the `.eh_frame` record cursor) lives across
/// iterations. The general path's steps are inlined helpers; the short paths stay written out here, as moved
/// into helpers of their own they left LLVM allocating the loop's registers worse (more spills per relocation).
pub fn apply_section<A: Arch>(
    cx: &WriteCx,
    f: FileId,
    s: SecIdx,
    out: &mut [u8],
    dyn_out: &mut DynRelSink<'_>,
) -> Result<(), String> {
    let o = &cx.res.objects[f.index()];
    let sec = o.sec(s);
    if !sec.is_alloc() {
        return apply_nonalloc_part::<A>(cx, f, s, out, 0, sec.relas());
    }
    let sc = Section {
        cx,
        f,
        s,
        o,
        sec,
        writable: sec.flags() & SHF_WRITE as u64 != 0,
        m: Mode::of(cx.config),
    };
    let eh_frame = sec.kind == SectionKind::EhFrame;
    let base = cx.section_addr(f, s);
    let eh_records = eh_frame.then(|| {
        (
            cx.lay.sec_addr[f.index()][s.index()],
            cx.lay.eh_records.get(f, s),
        )
    });
    let mut rec = 0usize;
    let mut skip_next = false;
    for (k, r) in sec.relas().iter().enumerate() {
        prefetch_ahead(
            cx.res,
            cx.space,
            Some((&cx.lay.addrs, &cx.lay.aux_index)),
            f,
            sec.relas(),
            k,
        );
        prefetch_aux(cx, f, sec.relas(), k);
        if skip_next {
            skip_next = false;
            continue;
        }
        let off = r.r_offset.get(LE);
        let r_type = r.r_type(LE, false);
        let kind = A::classify(r_type);
        if kind == RelKind::None {
            continue;
        }
        let a = r.r_addend.get(LE);
        let sym_idx = r.r_sym(LE, false) as usize;
        let p_addr = match eh_records {
            None => base.wrapping_add(off),
            Some((block, recs)) => match eh_frame_place(&sc, block, recs, &mut rec, off, kind) {
                Some(p_addr) => p_addr,
                None => continue,
            },
        };
        let rel = Rel {
            off,
            r_type,
            kind,
            a,
            sym_idx,
        };
        // Short paths for the commonest relocations (clang-so: 3.4M of 3.7M), writing what `decide` and the
        // general code below would: calls to globals, and PC-relative and 64-bit references to a plain local
        // of this object, with S its address from the layout: S + A - P whatever the output, and S + A (with a
        // relative dynamic relocation where the output is position-independent).
        let fast = if eh_records.is_some() && kind != RelKind::Pc {
            // In .eh_frame only the PC-relative references to a local (an FDE's function, its LSDA).
            None
        } else if kind == RelKind::Plt && sym_idx >= o.first_global {
            // A call to a global (clang-so: 1.3M), not an IFUNC: through its PLT entry if it has one (as
            // `decide` would choose for a preemptible target), otherwise straight to it.
            let id = cx.res.object_ids[f.index()]
                .get(sym_idx - o.first_global)
                .copied();
            match id.and_then(|id| Some((id, *cx.space.gprops.get(id.index())?))) {
                Some((id, b)) if b & SymProps::IFUNC == 0 => {
                    let s_val = cx.lay.addrs[id.index()];
                    let target = if b & SymProps::PREEMPTIBLE != 0 {
                        cx.plt_addr(id).unwrap_or(s_val)
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
            let s_val = cx.lay.addrs[cx.space.local_base[f.index()].index() + sym_idx];
            match kind {
                RelKind::Pc | RelKind::Plt => {
                    Some(s_val.wrapping_add(a as u64).wrapping_sub(p_addr))
                }
                RelKind::AbsPtr => {
                    let v = s_val.wrapping_add(a as u64);
                    if sc.m.pic && o.sym_shndx(sym_idx) != SHN_ABS as u32 {
                        push_relative::<A>(&sc, off, p_addr, v, dyn_out);
                    }
                    Some(v)
                }
                _ => None,
            }
        };
        if let Some(value) = fast {
            if let Err(e) = A::write_value(out, off as usize, r_type, value) {
                return Err(short_path_error::<A>(&sc, rel, e, value));
            }
            continue;
        }
        let Some(sym) = cx.lookup(f, sym_idx) else {
            return Err(invalid_symbol_index(o, sym_idx));
        };
        let at = off as usize;
        // Instruction rewrites below touch bytes just before the field; the field itself must be inside.
        if at >= out.len() {
            return Err(offset_range_error(o, s, off));
        }
        let mut p = props(cx.res, cx.config, cx.space, &sym);
        if p.weak_rule {
            p = weak_rule(p, kind, sec.flags(), &sc.m).0;
        }
        let action = decide::<A>(&sc.m, kind, r_type, p, sc.writable, sec.data(), off);
        let s_val = cx.sym_value(&sym, a, p.ifunc);
        let value: u64 = match action {
            Action::None => continue,
            Action::Relax(x) => {
                skip_next = A::relax_consumes_next(x);
                apply_relax::<A>(&sc, rel, &sym, x, s_val, p_addr, out)?;
                continue;
            }
            Action::Error(why) => {
                return Err(reloc_error::<A>(cx.res, f, s, off, r_type, &sym, why));
            }
            _ => action_value::<A>(&sc, rel, &sym, action, s_val, p_addr, dyn_out)?,
        };
        if let Err(e) = A::write_value(out, at, r_type, value) {
            return Err(write_error::<A>(&sc, rel, &sym, e, value));
        }
    }
    Ok(())
}

/// P of a relocation in `.eh_frame`, whose records move when dead FDEs before them are dropped: P follows its
/// record (in the file's `block` of the output section), found by the cursor `rec` that follows the (normally
/// sorted) relocations rather than a search per relocation. `None`: a PC-relative relocation (never a dynamic
/// one) inside a dropped record (the FDE of discarded code, a duplicate CIE), which changes nothing that is
/// written and is skipped (clang-so: the FDEs of the COMDAT copies of inline functions).
#[inline(always)]
fn eh_frame_place(
    sc: &Section,
    block: u64,
    recs: &[EhRecord],
    rec: &mut usize,
    off: u64,
    kind: RelKind,
) -> Option<u64> {
    if recs.get(*rec).is_some_and(|r| r.in_off > off) {
        *rec = 0;
    }
    while recs.get(*rec).is_some_and(|r| r.in_off + r.size <= off) {
        *rec += 1;
    }
    match recs.get(*rec) {
        Some(r) if r.in_off <= off && r.out_off != NONE as u64 && block != NO_ADDR => {
            Some(block + r.out_off + (off - r.in_off))
        }
        Some(r)
            if r.in_off <= off
                && r.out_off == NONE as u64
                && matches!(kind, RelKind::Pc | RelKind::Plt) =>
        {
            None
        }
        _ => Some(section_offset_addr(sc.cx.lay, sc.f, sc.s, off).unwrap_or(0)),
    }
}

/// A relative dynamic relocation of the place at `off` (P `p_addr`) to `v`, unless it is packed: then the place
/// holds the addend (RELR is REL-style) and `.relr.dyn` names the place.
#[inline(always)]
fn push_relative<A: Arch>(
    sc: &Section,
    off: u64,
    p_addr: u64,
    v: u64,
    dyn_out: &mut DynRelSink<'_>,
) {
    if !packs_relative(sc.cx.config, sc.sec, off) {
        dyn_out.push(DynRel {
            offset: p_addr,
            r_type: A::R_RELATIVE,
            sym: 0,
            addend: v as i64,
        });
    }
}

/// The value that `action` (not a relaxation, an error or nothing to do) writes for relocation `rel` against
/// `sym`, with the dynamic relocation it emits.
#[inline(always)]
fn action_value<A: Arch>(
    sc: &Section,
    rel: Rel,
    sym: &SymRef,
    action: Action,
    s_val: u64,
    p_addr: u64,
    dyn_out: &mut DynRelSink<'_>,
) -> Result<u64, String> {
    let cx = sc.cx;
    let a = rel.a;
    Ok(match action {
        Action::Abs => s_val.wrapping_add(a as u64),
        Action::Pc => s_val.wrapping_add(a as u64).wrapping_sub(p_addr),
        Action::DynRelative => {
            let v = s_val.wrapping_add(a as u64);
            push_relative::<A>(sc, rel.off, p_addr, v, dyn_out);
            v
        }
        Action::DynIrelative => irelative_value::<A>(sc, rel, sym, p_addr, dyn_out),
        Action::DynSymbolic => {
            dyn_out.push(DynRel {
                offset: p_addr,
                r_type: A::R_ABS64,
                sym: cx.dynsym_index(sym.id),
                addend: a,
            });
            a as u64
        }
        Action::Plt => {
            let target = cx.plt_addr(sym.id).unwrap_or(s_val);
            match rel.kind {
                RelKind::AbsPtr | RelKind::AbsNarrow => target.wrapping_add(a as u64),
                _ => target.wrapping_add(a as u64).wrapping_sub(p_addr),
            }
        }
        Action::Got => cx
            .got_addr(sym.id)
            .wrapping_add(a as u64)
            .wrapping_sub(p_addr),
        Action::TpOff => cx.tp_offset(s_val.wrapping_add(a as u64)),
        Action::TlsGd | Action::TlsLd | Action::TlsDesc => {
            tls_pair_value::<A>(sc, rel, sym, action, p_addr)?
        }
        Action::GotTp => cx
            .gottp_addr(sym.id)
            .wrapping_add(a as u64)
            .wrapping_sub(p_addr),
        Action::DtpOff => {
            // In an executable every local-dynamic access was relaxed to local exec.
            if sc.m.exe {
                cx.tp_offset(s_val.wrapping_add(a as u64))
            } else {
                cx.dtp_offset(s_val.wrapping_add(a as u64))
            }
        }
        Action::Size => symbols::sym_size(cx.res, sym.target).wrapping_add(a as u64),
        Action::GotOff => s_val.wrapping_add(a as u64).wrapping_sub(cx.got_base()),
        Action::GotPc => cx.got_base().wrapping_add(a as u64).wrapping_sub(p_addr),
        Action::GotRel => cx
            .got_addr(sym.id)
            .wrapping_add(a as u64)
            .wrapping_sub(cx.got_base()),
        Action::PltOff => cx
            .plt_addr(sym.id)
            .unwrap_or(s_val)
            .wrapping_add(a as u64)
            .wrapping_sub(cx.got_base()),
        Action::None | Action::Relax(_) | Action::Error(_) => {
            unreachable!("handled by apply_section")
        }
    })
}

/// An IRELATIVE-class pointer: a function with an IFUNC stub has the stub as its one canonical address (a
/// relative relocation); otherwise the pointer is whatever the resolver returns.
#[inline(always)]
fn irelative_value<A: Arch>(
    sc: &Section,
    rel: Rel,
    sym: &SymRef,
    p_addr: u64,
    dyn_out: &mut DynRelSink<'_>,
) -> u64 {
    let cx = sc.cx;
    let (r_type, v) = match cx.plt_addr(sym.id) {
        Some(stub) => (A::R_RELATIVE, stub.wrapping_add(rel.a as u64)),
        None => (
            A::R_IRELATIVE,
            cx.lay.addrs[sym.id.index()].wrapping_add(rel.a as u64),
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

/// The address of the GOT pair of a general-dynamic, local-dynamic or descriptor access, relative to P.
#[inline(always)]
fn tls_pair_value<A: Arch>(
    sc: &Section,
    rel: Rel,
    sym: &SymRef,
    action: Action,
    p_addr: u64,
) -> Result<u64, String> {
    let lay = sc.cx.lay;
    let pair = match action {
        Action::TlsGd => lay.aux_of(sym.id).map(|x| x.tlsgd),
        Action::TlsDesc => lay.aux_of(sym.id).map(|x| x.tlsdesc),
        _ => Some(lay.tlsld),
    };
    let Some(slot) = pair.filter(|&p| p != NONE) else {
        return Err(reloc_error::<A>(
            sc.cx.res,
            sc.f,
            sc.s,
            rel.off,
            rel.r_type,
            sym,
            "has no TLS GOT entry",
        ));
    };
    Ok(lay
        .got_slot_addr(slot)
        .wrapping_add(rel.a as u64)
        .wrapping_sub(p_addr))
}

/// A relaxation: the input's instructions checked (as the scan checked them), then rewritten by the architecture
/// with the value the relaxed access needs.
#[inline(always)]
fn apply_relax<A: Arch>(
    sc: &Section,
    rel: Rel,
    sym: &SymRef,
    x: Relax,
    s_val: u64,
    p_addr: u64,
    out: &mut [u8],
) -> Result<(), String> {
    if matches!(x, Relax::GdToLe | Relax::GdToIe | Relax::LdToLe)
        && !A::relax_sequence_ok(x, sc.sec.data(), rel.off)
    {
        return Err(reloc_error::<A>(
            sc.cx.res,
            sc.f,
            sc.s,
            rel.off,
            rel.r_type,
            sym,
            "is not followed by the expected __tls_get_addr call sequence",
        ));
    }
    let value = relaxed_value(sc.cx, x, sym, s_val, rel.a, p_addr);
    if let Err(e) = A::relax(out, rel.off as usize, rel.r_type, x, value) {
        return Err(write_error::<A>(sc, rel, sym, e, value));
    }
    Ok(())
}

/// The message for a relocation whose symbol index is out of range (out of line, like the other messages: see
/// [`Rel`]).
#[cold]
#[inline(never)]
fn invalid_symbol_index(o: &ObjectFile, sym_idx: usize) -> String {
    format!("{}: invalid symbol index {sym_idx}", o.name)
}

/// The message for a field that lies outside the section, or a value that does not fit it.
#[inline(always)]
fn write_error<A: Arch>(sc: &Section, rel: Rel, sym: &SymRef, e: WriteErr, value: u64) -> String {
    match e {
        WriteErr::Range => offset_range_error(sc.o, sc.s, rel.off),
        WriteErr::Overflow => {
            overflow_error::<A>(sc.cx, sc.f, sc.s, rel.off, rel.r_type, sym, value)
        }
    }
}

/// [`write_error`] for a short path, which has not looked the symbol up.
#[inline(always)]
fn short_path_error<A: Arch>(sc: &Section, rel: Rel, e: WriteErr, value: u64) -> String {
    match e {
        WriteErr::Range => offset_range_error(sc.o, sc.s, rel.off),
        WriteErr::Overflow => {
            short_path_overflow::<A>(sc.cx, sc.f, sc.s, rel.off, rel.r_type, rel.sym_idx, value)
        }
    }
}

/// The message for a value that does not fit its field.
#[cold]
#[inline(never)]
fn overflow_error<A: Arch>(
    cx: &WriteCx,
    f: FileId,
    s: SecIdx,
    off: u64,
    r_type: u32,
    sym: &SymRef,
    value: u64,
) -> String {
    let why = format!("out of range: 0x{value:x} does not fit");
    reloc_error::<A>(cx.res, f, s, off, r_type, sym, &why)
}

/// [`overflow_error`] for a short path, which has not looked the symbol up.
#[cold]
#[inline(never)]
fn short_path_overflow<A: Arch>(
    cx: &WriteCx,
    f: FileId,
    s: SecIdx,
    off: u64,
    r_type: u32,
    sym_idx: usize,
    value: u64,
) -> String {
    match cx.lookup(f, sym_idx) {
        Some(sym) => overflow_error::<A>(cx, f, s, off, r_type, &sym, value),
        None => invalid_symbol_index(&cx.res.objects[f.index()], sym_idx),
    }
}
