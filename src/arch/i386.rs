//! i386 (System V i386 psABI), for static executables and partial links: the 32-bit links of the kernel's x86
//! build (the real-mode setup code and trampoline) and of firmware (SeaBIOS's `-r` links and ROM layout). Inputs are ELF32 with REL relocations; `elf::widen32` turns each into the
//! ELF64 shape the passes read, the addend taken from the field, and the image is narrowed back to ELF32 when
//! written. There are no relaxations, no PLT and no dynamic relocations: the GOT, PLT and TLS types classify as
//! unknown and are refused with the type's name, and `main` refuses the options that would make a dynamic output.

use super::{Arch, PltShape, PropertyMerge, RelKind, Relax, WriteErr};
use object::elf::*;

pub struct I386;

/// `KINDS[r_type]`: the generic kind of every relocation type below 64 that rivet links for i386; the other types
/// of the psABI (GOT, PLT, TLS, dynamic) are refused as unsupported, the rest as unknown.
const KINDS: [RelKind; 64] = {
    let mut t = [RelKind::Unknown; 64];
    let mut r = R_386_GOT32 as usize;
    while r <= R_386_GOT32X as usize {
        t[r] = RelKind::Unsupported;
        r += 1;
    }
    t[R_386_NONE as usize] = RelKind::None;
    t[R_386_32 as usize] = RelKind::AbsPtr;
    t[R_386_16 as usize] = RelKind::AbsNarrow;
    t[R_386_8 as usize] = RelKind::AbsNarrow;
    t[R_386_PC32 as usize] = RelKind::Pc;
    t[R_386_PC16 as usize] = RelKind::Pc;
    t[R_386_PC8 as usize] = RelKind::Pc;
    // A call that a static executable resolves directly, as GNU ld does.
    t[R_386_PLT32 as usize] = RelKind::Plt;
    t[R_386_SIZE32 as usize] = RelKind::Size;
    t
};

/// The width in bytes of a relocation type's field, and the range of values (as 32-bit addresses, which wrap)
/// GNU ld accepts in it: a "bitfield" type any value from -2^n to 2^n - 1, a signed one -2^(n-1) to 2^(n-1) - 1.
/// `R_386_PC16` is a bitfield: real-mode code jumps across its 64 KiB segment, whose offsets wrap (SeaBIOS calls
/// from 0xfxxx down to 0x6xxx). GNU ld checks S - P and the addend apart, so right at the ends of the range it
/// can refuse a sum that fits; rivet checks the sum.
const fn field(r_type: u32) -> (usize, i64, i64) {
    match r_type {
        R_386_16 | R_386_PC16 => (2, -0x1_0000, 0xffff),
        R_386_8 => (1, -0x100, 0xff),
        R_386_PC8 => (1, -0x80, 0x7f),
        _ => (4, i64::MIN, i64::MAX),
    }
}

/// The width of the field written for a relocation type in a non-allocated section (debug info), 0 for the types
/// such a section may not use.
const fn nonalloc(r_type: u32) -> u8 {
    match r_type {
        R_386_32 | R_386_PC32 | R_386_SIZE32 | R_386_TLS_LDO_32 => 4,
        _ => 0,
    }
}

impl Arch for I386 {
    const E_MACHINE: u16 = EM_386;
    const NAME: &'static str = "i386";
    const BFD_TARGET: &'static str = "elf32-i386";
    const ELF32: bool = true;
    const R_NONE: u32 = R_386_NONE;
    const R_RELATIVE: u32 = R_386_RELATIVE;
    const R_IRELATIVE: u32 = R_386_IRELATIVE;
    const R_GLOB_DAT: u32 = R_386_GLOB_DAT;
    const R_JUMP_SLOT: u32 = R_386_JMP_SLOT;
    const R_COPY: u32 = R_386_COPY;
    const R_ABS64: u32 = R_386_32;
    const R_TPOFF64: u32 = R_386_TLS_TPOFF;
    const R_DTPMOD64: u32 = R_386_TLS_DTPMOD32;
    const R_DTPOFF64: u32 = R_386_TLS_DTPOFF32;
    const R_TLSDESC: u32 = R_386_TLS_DESC;
    const GOTPLT_RESERVED: u64 = 12;
    const CHECKED_REACH: u64 = i32::MAX as u64;
    const DYNAMIC_LINKER: &'static str = "/lib/ld-linux.so.2";
    const IMAGE_BASE: u64 = 0x0804_8000;
    // i386 has no processor-specific section type the linker copies.
    const SHT_PROGBITS_LIKE: u32 = SHT_PROGBITS;

    #[inline(always)]
    fn classify(r_type: u32) -> RelKind {
        KINDS
            .get(r_type as usize)
            .copied()
            .unwrap_or(RelKind::Unknown)
    }

    fn type_name(r_type: u32) -> String {
        let n = match r_type {
            R_386_NONE => "R_386_NONE",
            R_386_32 => "R_386_32",
            R_386_PC32 => "R_386_PC32",
            R_386_GOT32 => "R_386_GOT32",
            R_386_PLT32 => "R_386_PLT32",
            R_386_GOTOFF => "R_386_GOTOFF",
            R_386_GOTPC => "R_386_GOTPC",
            R_386_16 => "R_386_16",
            R_386_PC16 => "R_386_PC16",
            R_386_8 => "R_386_8",
            R_386_PC8 => "R_386_PC8",
            R_386_TLS_IE => "R_386_TLS_IE",
            R_386_TLS_GOTIE => "R_386_TLS_GOTIE",
            R_386_TLS_LE => "R_386_TLS_LE",
            R_386_TLS_GD => "R_386_TLS_GD",
            R_386_TLS_LDM => "R_386_TLS_LDM",
            R_386_TLS_LDO_32 => "R_386_TLS_LDO_32",
            R_386_TLS_IE_32 => "R_386_TLS_IE_32",
            R_386_TLS_LE_32 => "R_386_TLS_LE_32",
            R_386_TLS_GOTDESC => "R_386_TLS_GOTDESC",
            R_386_TLS_DESC_CALL => "R_386_TLS_DESC_CALL",
            R_386_SIZE32 => "R_386_SIZE32",
            R_386_GOT32X => "R_386_GOT32X",
            _ => return format!("unknown relocation ({r_type})"),
        };
        n.to_string()
    }

    #[inline(always)]
    fn write_value(out: &mut [u8], at: usize, r_type: u32, value: u64) -> Result<(), WriteErr> {
        let (width, min, max) = field(r_type);
        // Addresses are 32 bits and wrap, as GNU ld computes them.
        let v = value as u32 as i32 as i64;
        if width < 4 && (v < min || v > max) {
            return Err(WriteErr::Overflow);
        }
        let field = at
            .checked_add(width)
            .and_then(|end| out.get_mut(at..end))
            .ok_or(WriteErr::Range)?;
        field.copy_from_slice(&value.to_le_bytes()[..width]);
        Ok(())
    }

    fn rel_addend(r_type: u32, field: &[u8]) -> Option<i64> {
        if r_type == R_386_NONE {
            return Some(0);
        }
        let (width, _, _) = self::field(r_type);
        let mut b = [0u8; 4];
        b[..width].copy_from_slice(field.get(..width)?);
        // Sign-extended from the field's width, as GNU ld reads a REL addend.
        let shift = 32 - 8 * width as u32;
        Some(((u32::from_le_bytes(b) << shift) as i32 >> shift) as i64)
    }

    fn fill_code(gap: &mut [u8]) {
        // GNU ld's padding for the plain i386: `xchg %ax,%ax` (66 90) repeated, a `nop` (90) for an odd byte.
        let mut pairs = gap.chunks_exact_mut(2);
        for p in &mut pairs {
            p.copy_from_slice(&[0x66, 0x90]);
        }
        if let [last] = pairs.into_remainder() {
            *last = 0x90;
        }
    }

    fn nonalloc_width(r_type: u32) -> u8 {
        nonalloc(r_type)
    }

    /// The write proof covers none of i386's types: every field is checked as it is written.
    fn write_proof(_r_type: u32) -> u8 {
        0
    }

    fn got_relaxation(_r_type: u32, _data: &[u8], _off: u64) -> Option<Relax> {
        None
    }
    fn ie_relaxable(_data: &[u8], _off: u64) -> bool {
        false
    }
    fn relax_sequence_ok(_r: Relax, _data: &[u8], _off: u64) -> bool {
        false
    }
    fn relax_consumes_next(_r: Relax) -> bool {
        false
    }
    fn relaxed_reloc(_r_type: u32, _r: Relax) -> Option<(u32, i64)> {
        None
    }
    fn relax(
        out: &mut [u8],
        at: usize,
        r_type: u32,
        _r: Relax,
        value: u64,
    ) -> Result<(), WriteErr> {
        Self::write_value(out, at, r_type, value)
    }

    /// No PLT is ever made: `main` refuses every output that would need one.
    fn plt_shape(ibt: bool) -> PltShape {
        PltShape {
            header: 16,
            entry: 16,
            iplt_entry: 16,
            ibt,
        }
    }
    fn plt_lazy_target(_shape: &PltShape, _plt: u64, entry: u64) -> u64 {
        entry + 6
    }
    fn write_plt0(_shape: &PltShape, out: &mut [u8], _plt: u64, _gotplt: u64) {
        out.fill(0xcc);
    }
    fn write_plt_entry(_: &PltShape, out: &mut [u8], _: u64, _: u64, _: u32, _: u64) {
        out.fill(0xcc);
    }
    fn write_iplt_entry(_shape: &PltShape, out: &mut [u8], _entry: u64, _slot: u64) {
        out.fill(0xcc);
    }

    fn property_merge(pr_type: u32) -> PropertyMerge {
        // The x86 properties are the same for both classes (GNU_PROPERTY_X86_*).
        match pr_type {
            0xc000_0002..=0xc000_7fff => PropertyMerge::And,
            0xc000_8000..=0xc000_ffff => PropertyMerge::Or,
            0xc001_0000..=0xc001_7fff => PropertyMerge::OrAnd,
            _ => PropertyMerge::Skip,
        }
    }
    fn forced_properties(_ibt: bool, _shstk: bool, _isa_level: u8) -> Vec<(u32, u32)> {
        Vec::new()
    }
    fn cet_missing(_props: &[(u32, u32)]) -> Vec<&'static str> {
        Vec::new()
    }
    fn plt_landing_pads(_props: &[(u32, u32)]) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_fields_overflow_as_gnu_ld_reports() {
        let mut b = [0u8; 4];
        assert!(I386::write_value(&mut b, 0, R_386_16, 0xffff).is_ok());
        assert!(I386::write_value(&mut b, 0, R_386_16, 0x1_0000).is_err());
        assert!(I386::write_value(&mut b, 0, R_386_16, (-0x1_0000i64) as u64).is_ok());
        assert!(I386::write_value(&mut b, 0, R_386_PC16, 0x8000).is_ok());
        assert!(I386::write_value(&mut b, 0, R_386_PC16, (-0xf0fdi64) as u64).is_ok());
        assert!(I386::write_value(&mut b, 0, R_386_PC16, 0x1_0000).is_err());
        assert!(I386::write_value(&mut b, 0, R_386_PC16, (-0x1_0001i64) as u64).is_err());
        assert!(I386::write_value(&mut b, 0, R_386_8, 0x100).is_err());
        assert!(I386::write_value(&mut b, 0, R_386_PC8, (-0x81i64) as u64).is_err());
        // 32-bit fields wrap.
        assert!(I386::write_value(&mut b, 0, R_386_PC32, 0xffff_ffff_0000_0000).is_ok());
        assert!(I386::write_value(&mut b, 2, R_386_32, 0).is_err());
        assert_eq!(I386::classify(R_386_GOTOFF), RelKind::Unsupported);
        assert_eq!(I386::classify(R_386_TLS_LE), RelKind::Unsupported);
        assert_eq!(I386::classify(12), RelKind::Unsupported);
        assert_eq!(I386::classify(50), RelKind::Unknown);
        assert_eq!(I386::rel_addend(R_386_16, &[0xfe, 0xff]), Some(-2));
        assert_eq!(
            I386::rel_addend(R_386_32, &[4, 0, 0, 0x80]),
            Some(-0x7fff_fffc)
        );
        assert_eq!(I386::rel_addend(R_386_PC32, &[4, 0]), None);
    }
}
