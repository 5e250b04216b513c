//! x86-64 (System V psABI): what each relocation type is, how its field is encoded, the instruction rewrites of
//! the GOT and TLS relaxations, and the PLT entry formats.

use super::{Arch, PltShape, PropertyMerge, RelKind, Relax, WriteErr, proof};
use object::elf::*;

pub struct X86_64;

/// GNU_PROPERTY_X86_FEATURE_1_AND and its bits; GNU_PROPERTY_X86_ISA_1_NEEDED.
const FEATURE_1_AND: u32 = 0xc000_0002;
const FEATURE_1_IBT: u32 = 1;
const FEATURE_1_SHSTK: u32 = 2;
const ISA_1_NEEDED: u32 = 0xc000_8002;

/// `KINDS[r_type]`: the generic kind of every relocation type below 64 (the rest are unknown).
const KINDS: [RelKind; 64] = {
    let mut t = [RelKind::Unknown; 64];
    t[R_X86_64_NONE as usize] = RelKind::None;
    t[R_X86_64_64 as usize] = RelKind::AbsPtr;
    t[R_X86_64_32 as usize] = RelKind::AbsNarrow;
    t[R_X86_64_32S as usize] = RelKind::AbsNarrow;
    t[R_X86_64_16 as usize] = RelKind::AbsNarrow;
    t[R_X86_64_8 as usize] = RelKind::AbsNarrow;
    t[R_X86_64_PC32 as usize] = RelKind::Pc;
    t[R_X86_64_PC64 as usize] = RelKind::Pc;
    t[R_X86_64_PC16 as usize] = RelKind::Pc;
    t[R_X86_64_PC8 as usize] = RelKind::Pc;
    t[R_X86_64_PLT32 as usize] = RelKind::Plt;
    t[R_X86_64_PLTOFF64 as usize] = RelKind::PltOff;
    t[R_X86_64_GOT64 as usize] = RelKind::GotRel;
    t[R_X86_64_GOTPLT64 as usize] = RelKind::GotRel;
    t[R_X86_64_GOTPCREL as usize] = RelKind::GotPcRel;
    t[R_X86_64_GOTPCRELX as usize] = RelKind::GotPcRel;
    t[R_X86_64_REX_GOTPCRELX as usize] = RelKind::GotPcRel;
    t[R_X86_64_GOTPCREL64 as usize] = RelKind::GotPcRel;
    t[R_X86_64_GOTOFF64 as usize] = RelKind::GotOff;
    t[R_X86_64_GOTPC32 as usize] = RelKind::GotPc;
    t[R_X86_64_GOTPC64 as usize] = RelKind::GotPc;
    t[R_X86_64_TPOFF32 as usize] = RelKind::TpOff;
    t[R_X86_64_TPOFF64 as usize] = RelKind::TpOff;
    t[R_X86_64_GOTTPOFF as usize] = RelKind::GotTp;
    t[R_X86_64_TLSGD as usize] = RelKind::TlsGd;
    t[R_X86_64_TLSLD as usize] = RelKind::TlsLd;
    t[R_X86_64_DTPOFF32 as usize] = RelKind::DtpOff;
    t[R_X86_64_DTPOFF64 as usize] = RelKind::DtpOff;
    t[R_X86_64_GOTPC32_TLSDESC as usize] = RelKind::TlsDesc;
    t[R_X86_64_TLSDESC_CALL as usize] = RelKind::TlsDescCall;
    t[R_X86_64_SIZE32 as usize] = RelKind::Size;
    t[R_X86_64_SIZE64 as usize] = RelKind::Size;
    t
};

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
        | R_X86_64_PLTOFF64 | R_X86_64_GOT64 | R_X86_64_GOTPLT64 => (8, Fits::Any),
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

/// `WRITE_PROOF[r_type]`: the width of the field (0: no field, for `R_X86_64_NONE`, or a type the proof does not
/// cover: 8- and 16-bit fields, `R_X86_64_SIZE32`), whether `write_value` range-checks it, and whether it is
/// unsigned. A table, so that the proof spends a load and a few branch-free operations per relocation.
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
            Fits::Signed32 => width as u8 | proof::CHECKED,
            Fits::Unsigned32 => width as u8 | proof::CHECKED | proof::UNSIGNED,
            _ => 0,
        };
        r += 1;
    }
    t
};

/// `NONALLOC_WIDTH[r_type]`: the width of the field written for a relocation type in a non-allocated section, 0
/// for the types such a section may not use.
const NONALLOC_WIDTH: [u8; 64] = {
    let mut t = [0u8; 64];
    t[R_X86_64_64 as usize] = 8;
    t[R_X86_64_DTPOFF64 as usize] = 8;
    t[R_X86_64_SIZE64 as usize] = 8;
    t[R_X86_64_PC64 as usize] = 8;
    // The large code model's debug info names constants relative to the GOT.
    t[R_X86_64_GOTOFF64 as usize] = 8;
    t[R_X86_64_32 as usize] = 4;
    t[R_X86_64_32S as usize] = 4;
    t[R_X86_64_DTPOFF32 as usize] = 4;
    t[R_X86_64_SIZE32 as usize] = 4;
    t[R_X86_64_PC32 as usize] = 4;
    t
};

/// Byte at `off`, if inside the section.
fn byte(data: &[u8], off: i64) -> Option<u8> {
    usize::try_from(off).ok().and_then(|o| data.get(o).copied())
}

fn put32(out: &mut [u8], at: usize, v: u32) -> Option<()> {
    out.get_mut(at..at + 4)?.copy_from_slice(&v.to_le_bytes());
    Some(())
}

/// The large code model's call to `__tls_get_addr` at `at` of `data`: `movabs $__tls_get_addr@PLTOFF, %rax` (10
/// bytes), `add %reg, %rax` (the GOT base, 3 bytes), `call *%rax` (2 bytes).
fn is_large_model_call(data: &[u8], at: usize) -> bool {
    data.get(at..at + 15).is_some_and(|c| {
        c[..2] == [0x48, 0xb8]
            && matches!(c[10], 0x48 | 0x4c)
            && c[11] == 0x01
            && c[12] & 0xc7 == 0xc0
            && c[13..] == [0xff, 0xd0]
    })
}

/// Where the general-dynamic sequence around a `R_X86_64_TLSGD` at `off` of `data` starts, and its length, if it is
/// one an executable can relax: `lea x@tlsgd(%rip), %rdi` with its prefix and the call to `__tls_get_addr` with
/// its prefixes, direct (`call __tls_get_addr@PLT`) or through the GOT (`-fno-plt`: `call
/// *__tls_get_addr@GOTPCREL(%rip)`), 16 bytes either way; or the large code model's unprefixed `lea` and 15-byte
/// call through a `PLTOFF64` (22 bytes).
fn tlsgd_sequence(data: &[u8], off: u64) -> Option<(usize, usize)> {
    let off = off as usize;
    let lea = data.get(off.checked_sub(3)?..off)?;
    if lea != [0x48, 0x8d, 0x3d] {
        return None;
    }
    if off.checked_sub(4).and_then(|p| data.get(p)) == Some(&0x66) {
        let call = data.get(off + 4..off + 12)?;
        if call[..4] == [0x66, 0x66, 0x48, 0xe8] || call[..4] == [0x66, 0x48, 0xff, 0x15] {
            return Some((off - 4, 16));
        }
    }
    is_large_model_call(data, off + 4).then_some((off - 3, 22))
}

/// The length of the local-dynamic sequence around a `R_X86_64_TLSLD` at `off` of `data`, if it is one:
/// `lea x@tlsld(%rip), %rdi` then `call __tls_get_addr@PLT` (12 bytes), with `-fno-plt`
/// `call *__tls_get_addr@GOTPCREL(%rip)` (13 bytes), or the large code model's 15-byte call (22 bytes).
fn tlsld_sequence(data: &[u8], off: u64) -> Option<usize> {
    let start = (off as usize).checked_sub(3)?;
    let seq = data.get(start..start + 12)?;
    if seq[..3] != [0x48, 0x8d, 0x3d] {
        return None;
    }
    match (seq[7], data.get(start + 8)) {
        (0xe8, _) => Some(12),
        (0xff, Some(0x15)) if data.len() >= start + 13 => Some(13),
        _ if is_large_model_call(data, start + 7) => Some(22),
        _ => None,
    }
}

/// The no-op instruction of each length from 1 to 10 bytes that GNU ld pads code with.
const NOPS: [&[u8]; 10] = [
    &[0x90],
    &[0x66, 0x90],
    &[0x0f, 0x1f, 0x00],
    &[0x0f, 0x1f, 0x40, 0x00],
    &[0x0f, 0x1f, 0x44, 0x00, 0x00],
    &[0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
    &[0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00],
    &[0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    &[0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    &[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
];

impl Arch for X86_64 {
    const E_MACHINE: u16 = EM_X86_64;
    const NAME: &'static str = "x86-64";
    const BFD_TARGET: &'static str = "elf64-x86-64";
    const R_NONE: u32 = R_X86_64_NONE;
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
    const GOTPLT_RESERVED: u64 = 24;
    const CHECKED_REACH: u64 = i32::MAX as u64;
    const DYNAMIC_LINKER: &'static str = "/lib64/ld-linux-x86-64.so.2";
    const IMAGE_BASE: u64 = 0x400000;
    const SHT_PROGBITS_LIKE: u32 = SHT_X86_64_UNWIND;

    #[inline(always)]
    fn classify(r_type: u32) -> RelKind {
        KINDS
            .get(r_type as usize)
            .copied()
            .unwrap_or(RelKind::Unknown)
    }

    fn type_name(r_type: u32) -> String {
        match TYPE_NAMES.get(r_type as usize) {
            Some(n) if !n.is_empty() => format!("R_X86_64_{n}"),
            _ => format!("unknown relocation ({r_type})"),
        }
    }

    #[inline(always)]
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
        let field = at
            .checked_add(width)
            .and_then(|end| out.get_mut(at..end))
            .ok_or(WriteErr::Range)?;
        field.copy_from_slice(&value.to_le_bytes()[..width]);
        Ok(())
    }

    #[inline(always)]
    fn fill_code(gap: &mut [u8]) {
        // GNU ld's padding: its longest no-op (10 bytes) repeated, then the one of the length left.
        let mut rest = gap;
        while rest.len() > 10 {
            let (nop, after) = rest.split_at_mut(10);
            nop.copy_from_slice(NOPS[9]);
            rest = after;
        }
        if let Some(n) = rest.len().checked_sub(1) {
            rest.copy_from_slice(NOPS[n]);
        }
    }

    fn nonalloc_width(r_type: u32) -> u8 {
        NONALLOC_WIDTH.get(r_type as usize).copied().unwrap_or(0)
    }

    #[inline(always)]
    fn write_proof(r_type: u32) -> u8 {
        WRITE_PROOF.get(r_type as usize).copied().unwrap_or(0)
    }

    fn got_relaxation(r_type: u32, data: &[u8], off: u64) -> Option<Relax> {
        if r_type != R_X86_64_GOTPCRELX && r_type != R_X86_64_REX_GOTPCRELX {
            return None;
        }
        let off = off as i64;
        match (byte(data, off - 2), byte(data, off - 1)) {
            (Some(0x8b), _) => Some(Relax::GotToLea),
            (Some(0xff), Some(0x15)) if r_type == R_X86_64_GOTPCRELX => Some(Relax::GotCall),
            (Some(0xff), Some(0x25)) if r_type == R_X86_64_GOTPCRELX => Some(Relax::GotJmp),
            _ => None,
        }
    }

    fn ie_relaxable(data: &[u8], off: u64) -> bool {
        let off = off as i64;
        matches!(
            (byte(data, off - 3), byte(data, off - 2)),
            (Some(0x48 | 0x4c), Some(0x8b | 0x03))
        )
    }

    fn relax_sequence_ok(r: Relax, data: &[u8], off: u64) -> bool {
        match r {
            Relax::GdToLe | Relax::GdToIe => tlsgd_sequence(data, off).is_some(),
            Relax::LdToLe => tlsld_sequence(data, off).is_some(),
            Relax::DescToLe | Relax::DescToIe => off >= 3,
            _ => true,
        }
    }

    fn relax_consumes_next(r: Relax) -> bool {
        matches!(r, Relax::GdToLe | Relax::GdToIe | Relax::LdToLe)
    }

    fn relaxed_reloc(r_type: u32, r: Relax) -> Option<(u32, i64)> {
        let _ = r_type;
        match r {
            // lea foo(%rip) and addr32 call foo: the same field, now PC-relative to foo.
            Relax::GotToLea | Relax::GotCall => Some((R_X86_64_PC32, 0)),
            // jmp foo; nop: the displacement starts a byte earlier and still ends where the instruction does.
            Relax::GotJmp => Some((R_X86_64_PC32, -1)),
            _ => None,
        }
    }

    fn relax(out: &mut [u8], at: usize, r_type: u32, r: Relax, value: u64) -> Result<(), WriteErr> {
        match r {
            Relax::GotToLea => out[at - 2] = 0x8d,
            Relax::GotCall => {
                // call *foo@GOTPCREL(%rip) → addr32 call foo
                out[at - 2] = 0x67;
                out[at - 1] = 0xe8;
            }
            Relax::GotJmp => {
                // jmp *foo@GOTPCREL(%rip) → jmp foo; nop: the displacement starts a byte earlier.
                out[at - 2] = 0xe9;
                put32(out, at - 1, value.wrapping_add(1) as u32).ok_or(WriteErr::Range)?;
                *out.get_mut(at + 3).ok_or(WriteErr::Range)? = 0x90;
                return Ok(());
            }
            Relax::IeToLe => {
                // mov/add x@gottpoff(%rip), %reg → mov/add $x@tpoff, %reg
                let rex = out[at - 3];
                let op = out[at - 2];
                let reg = (out[at - 1] >> 3) & 7;
                out[at - 3] = if rex == 0x4c { 0x49 } else { 0x48 };
                out[at - 2] = if op == 0x8b { 0xc7 } else { 0x81 };
                out[at - 1] = 0xc0 | reg;
                // The field was PC-relative to its end (A = -4); the immediate is not.
                return Self::write_value(out, at, r_type, value.wrapping_add(4));
            }
            Relax::GdToLe | Relax::GdToIe => {
                // The output still holds the input's bytes here.
                let (start, len) = tlsgd_sequence(out, at as u64).ok_or(WriteErr::Range)?;
                let seq = &mut out[start..start + len];
                let v = if r == Relax::GdToLe {
                    // mov %fs:0, %rax; lea x@tpoff(%rax), %rax
                    seq[..12].copy_from_slice(&[
                        0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x8d, 0x80,
                    ]);
                    value
                } else {
                    // mov %fs:0, %rax; add x@gottpoff(%rip), %rax: PC-relative to the add's end, 12 bytes after
                    // the sequence's start, which is 4 (3 in the large model) bytes before the input's field.
                    seq[..12].copy_from_slice(&[
                        0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x03, 0x05,
                    ]);
                    value.wrapping_sub((start + 16 - at) as u64)
                };
                seq[12..16].copy_from_slice(&(v as u32).to_le_bytes());
                // The large model's six more bytes: nopw 0(%rax,%rax,1).
                seq[16..].copy_from_slice(&[0x66, 0x0f, 0x1f, 0x44, 0, 0][..len - 16]);
                return Ok(());
            }
            Relax::LdToLe => {
                let start = at.checked_sub(3).ok_or(WriteErr::Range)?;
                // The call is `e8` (direct) or `ff 15` (through the GOT), as the input has it; the output still
                // holds the input's bytes here.
                let len = tlsld_sequence(out, at as u64).ok_or(WriteErr::Range)?;
                let seq = out.get_mut(start..start + len).ok_or(WriteErr::Range)?;
                let (pad, mov) = seq.split_at_mut(len - 9);
                if len == 22 {
                    // Too long for prefixes (an instruction has at most 15 bytes): a 13-byte
                    // `data16 data16 data16 nopw %cs:0(%rax,%rax,1)` first.
                    pad.copy_from_slice(&[
                        0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0,
                    ]);
                } else {
                    // Prefixes on the mov, the length of the lea and call it replaces.
                    pad.fill(0x66);
                }
                // mov %fs:0, %rax
                mov.copy_from_slice(&[0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0]);
                return Ok(());
            }
            Relax::DescToLe | Relax::DescToIe => {
                // lea x@tlsdesc(%rip), %reg → mov $x@tpoff, %reg | mov x@gottpoff(%rip), %reg
                let rex = *out.get(at.wrapping_sub(3)).ok_or(WriteErr::Range)?;
                let reg = (out[at - 1] >> 3) & 7;
                if r == Relax::DescToLe {
                    out[at - 3] = 0x48 | (rex & 4) >> 2;
                    out[at - 2] = 0xc7;
                    out[at - 1] = 0xc0 | reg;
                } else {
                    out[at - 2] = 0x8b;
                }
            }
            Relax::DescCallToNop => {
                // call *(%rax) → xchg %ax,%ax
                out.get_mut(at..at + 2)
                    .ok_or(WriteErr::Range)?
                    .copy_from_slice(&[0x66, 0x90]);
                return Ok(());
            }
        }
        Self::write_value(out, at, r_type, value)
    }

    fn plt_shape(ibt: bool) -> PltShape {
        PltShape {
            header: if ibt { 32 } else { 16 },
            entry: 16,
            iplt_entry: 16,
            ibt,
        }
    }

    /// Without landing pads, the `push` after the entry's `jmp *slot(%rip)`; with them, the header, which takes the
    /// relocation index from %r11 (the entry has no room for a `push` and a second jump).
    fn plt_lazy_target(shape: &PltShape, plt: u64, entry: u64) -> u64 {
        if shape.ibt { plt } else { entry + 6 }
    }

    fn write_plt0(shape: &PltShape, out: &mut [u8], plt: u64, gotplt: u64) {
        let rel = |at: usize, target: u64, out: &mut [u8]| {
            out[at..at + 4]
                .copy_from_slice(&target.wrapping_sub(plt + at as u64 + 4).to_le_bytes()[..4]);
        };
        if shape.ibt {
            // endbr64; push %r11 (the index); push GOTPLT+8(%rip); jmp *GOTPLT+16(%rip); int3 padding.
            out[..32].fill(0xcc);
            out[..18].copy_from_slice(&[
                0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x53, 0xff, 0x35, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0,
            ]);
            rel(8, gotplt + 8, out);
            rel(14, gotplt + 16, out);
            return;
        }
        // push GOTPLT+8(%rip); jmp *GOTPLT+16(%rip); nopl 0(%rax).
        out[..16].copy_from_slice(&[
            0xff, 0x35, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0, 0x0f, 0x1f, 0x40, 0x00,
        ]);
        rel(2, gotplt + 8, out);
        rel(8, gotplt + 16, out);
    }

    fn write_plt_entry(
        shape: &PltShape,
        out: &mut [u8],
        entry: u64,
        slot: u64,
        index: u32,
        plt: u64,
    ) {
        if shape.ibt {
            // endbr64; mov $index, %r11d; jmp *slot(%rip).
            out[..16].copy_from_slice(&[
                0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0xbb, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0,
            ]);
            out[6..10].copy_from_slice(&index.to_le_bytes());
            out[12..16].copy_from_slice(&(slot.wrapping_sub(entry + 16) as u32).to_le_bytes());
            return;
        }
        // jmp *slot(%rip); push $index; jmp PLT0.
        out[..16].copy_from_slice(&[0xff, 0x25, 0, 0, 0, 0, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0]);
        out[2..6].copy_from_slice(&(slot.wrapping_sub(entry + 6) as u32).to_le_bytes());
        out[7..11].copy_from_slice(&index.to_le_bytes());
        out[12..16].copy_from_slice(&(plt.wrapping_sub(entry + 16) as u32).to_le_bytes());
    }

    fn write_iplt_entry(shape: &PltShape, out: &mut [u8], entry: u64, slot: u64) {
        // [endbr64;] jmp *slot(%rip); int3 padding.
        out[..16].fill(0xcc);
        let at = if shape.ibt {
            out[..4].copy_from_slice(&[0xf3, 0x0f, 0x1e, 0xfa]);
            4
        } else {
            0
        };
        out[at..at + 2].copy_from_slice(&[0xff, 0x25]);
        let next = entry + at as u64 + 6;
        out[at + 2..at + 6].copy_from_slice(&(slot.wrapping_sub(next) as u32).to_le_bytes());
    }

    fn property_merge(pr_type: u32) -> PropertyMerge {
        match pr_type {
            // GNU_PROPERTY_X86_UINT32_AND_LO..HI (FEATURE_1_AND: IBT, SHSTK).
            0xc000_0002..=0xc000_7fff => PropertyMerge::And,
            // GNU_PROPERTY_X86_UINT32_OR_LO..HI (ISA_1_NEEDED, FEATURE_2_NEEDED).
            0xc000_8000..=0xc000_ffff => PropertyMerge::Or,
            // GNU_PROPERTY_X86_UINT32_OR_AND_LO..HI (ISA_1_USED, FEATURE_2_USED).
            0xc001_0000..=0xc001_7fff => PropertyMerge::OrAnd,
            _ => PropertyMerge::Skip,
        }
    }

    fn forced_properties(ibt: bool, shstk: bool, isa_level: u8) -> Vec<(u32, u32)> {
        let feature = ((ibt as u32) * FEATURE_1_IBT) | ((shstk as u32) * FEATURE_1_SHSTK);
        // ISA_1_NEEDED bits: baseline, v2, v3, v4 are bits 0-3; a level needs its own bit only.
        let isa = if isa_level > 0 {
            1u32 << (isa_level - 1)
        } else {
            0
        };
        vec![(FEATURE_1_AND, feature), (ISA_1_NEEDED, isa)]
    }

    fn cet_missing(props: &[(u32, u32)]) -> Vec<&'static str> {
        let bits = props
            .iter()
            .filter(|&&(t, _)| t == FEATURE_1_AND)
            .fold(0, |a, &(_, v)| a | v);
        let mut missing = Vec::new();
        if bits & FEATURE_1_IBT == 0 {
            missing.push("IBT");
        }
        if bits & FEATURE_1_SHSTK == 0 {
            missing.push("SHSTK");
        }
        missing
    }

    fn plt_landing_pads(props: &[(u32, u32)]) -> bool {
        props
            .iter()
            .any(|&(t, v)| t == FEATURE_1_AND && v & FEATURE_1_IBT != 0)
    }
}

/// The psABI's relocation type names, by number, without the `R_X86_64_` prefix (39 and 40, the withdrawn MPX
/// types, unnamed).
const TYPE_NAMES: [&str; 46] = [
    "NONE",
    "64",
    "PC32",
    "GOT32",
    "PLT32",
    "COPY",
    "GLOB_DAT",
    "JUMP_SLOT",
    "RELATIVE",
    "GOTPCREL",
    "32",
    "32S",
    "16",
    "PC16",
    "8",
    "PC8",
    "DTPMOD64",
    "DTPOFF64",
    "TPOFF64",
    "TLSGD",
    "TLSLD",
    "DTPOFF32",
    "GOTTPOFF",
    "TPOFF32",
    "PC64",
    "GOTOFF64",
    "GOTPC32",
    "GOT64",
    "GOTPCREL64",
    "GOTPC64",
    "GOTPLT64",
    "PLTOFF64",
    "SIZE32",
    "SIZE64",
    "GOTPC32_TLSDESC",
    "TLSDESC_CALL",
    "TLSDESC",
    "IRELATIVE",
    "RELATIVE64",
    "",
    "",
    "GOTPCRELX",
    "REX_GOTPCRELX",
    "CODE_4_GOTPCRELX",
    "CODE_4_GOTTPOFF",
    "CODE_4_GOTPC32_TLSDESC",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// gcc's `-mcmodel=large -fPIC` general-dynamic access, the TLSGD field at 3.
    const LARGE_GD: [u8; 22] = [
        0x48, 0x8d, 0x3d, 0, 0, 0, 0, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x4c, 0x01, 0xf8, 0xff,
        0xd0,
    ];

    #[test]
    fn tls_sequences_are_recognised_whole_or_not_at_all() {
        let small = [
            0x66, 0x48, 0x8d, 0x3d, 0, 0, 0, 0, 0x66, 0x66, 0x48, 0xe8, 0, 0, 0, 0,
        ];
        assert_eq!(tlsgd_sequence(&small, 4), Some((0, 16)));
        assert_eq!(tlsgd_sequence(&LARGE_GD, 3), Some((0, 22)));
        assert_eq!(tlsld_sequence(&LARGE_GD, 3), Some(22));
        // Cut short anywhere, or with another call, none is a sequence (the relaxation would write past the end).
        for len in 0..22 {
            assert_eq!(tlsgd_sequence(&LARGE_GD[..len], 3), None, "{len}");
            assert_eq!(tlsld_sequence(&LARGE_GD[..len], 3), None, "{len}");
        }
        for len in 0..16 {
            assert_eq!(tlsgd_sequence(&small[..len], 4), None, "{len}");
        }
        let mut other = LARGE_GD;
        other[21] = 0xd1; // call *%rcx
        assert_eq!(tlsgd_sequence(&other, 3), None);
    }

    #[test]
    fn large_model_relaxations_match_gnu_ld() {
        let mut le = LARGE_GD;
        X86_64::relax(&mut le, 3, R_X86_64_TLSGD, Relax::GdToLe, (-8i64) as u64)
            .ok()
            .unwrap();
        assert_eq!(
            le,
            [
                0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x8d, 0x80, 0xf8, 0xff, 0xff, 0xff,
                0x66, 0x0f, 0x1f, 0x44, 0, 0
            ]
        );
        // The GOT slot 0x100 bytes after the input's field: the add's displacement counts from its end, 13 bytes
        // after the field.
        let mut ie = LARGE_GD;
        X86_64::relax(&mut ie, 3, R_X86_64_TLSGD, Relax::GdToIe, 0x100)
            .ok()
            .unwrap();
        assert_eq!(ie[9..16], [0x48, 0x03, 0x05, 0xf3, 0, 0, 0]);
        let mut ld = LARGE_GD;
        X86_64::relax(&mut ld, 3, R_X86_64_TLSLD, Relax::LdToLe, 0)
            .ok()
            .unwrap();
        assert_eq!(
            ld,
            [
                0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x64, 0x48, 0x8b,
                0x04, 0x25, 0, 0, 0, 0
            ]
        );
    }

    /// `--emit-relocs` describes a relaxed GOT load by the instruction it became, as GNU ld does: `lea` and
    /// `addr32 call` keep the field (PC32); `jmp` moves it a byte back; the TLS relaxations keep their types.
    #[test]
    fn relaxed_relocations_are_described_as_gnu_ld_describes_them() {
        let mut jmp = [0xff, 0x25, 0, 0, 0, 0, 0];
        X86_64::relax(
            &mut jmp,
            2,
            R_X86_64_GOTPCRELX,
            Relax::GotJmp,
            (-4i64) as u64,
        )
        .ok()
        .expect("jmp relaxed");
        // jmp rel32 at 0, its displacement at 1 (not 2), a nop after it.
        assert_eq!((jmp[0], jmp[5]), (0xe9, 0x90));
        assert_eq!(
            X86_64::relaxed_reloc(R_X86_64_GOTPCRELX, Relax::GotJmp),
            Some((R_X86_64_PC32, -1))
        );
        for r in [Relax::GotToLea, Relax::GotCall] {
            assert_eq!(
                X86_64::relaxed_reloc(R_X86_64_REX_GOTPCRELX, r),
                Some((R_X86_64_PC32, 0))
            );
        }
        for r in [
            Relax::IeToLe,
            Relax::GdToLe,
            Relax::GdToIe,
            Relax::LdToLe,
            Relax::DescToLe,
        ] {
            assert_eq!(X86_64::relaxed_reloc(R_X86_64_TLSGD, r), None);
        }
    }
}
