//! The architecture layer: facts and small hooks, no policy. An architecture classifies each relocation type into
//! a generic [`RelKind`] (what the value is: absolute, PC-relative, a GOT or PLT address, a TLS offset…), encodes
//! fields, rewrites the instructions of the relaxations the generic code chose ([`Relax`]), and supplies its
//! dynamic relocation types, PLT templates and ABI constants. What a relocation needs (a GOT slot, a PLT entry, a
//! copy or dynamic relocation, which TLS model) is decided once for every architecture, in `reloc`; the scan and
//! apply loops are in `scan::relocs` and `write::apply`, generic over `A: Arch` and monomorphised, so there is no
//! dynamic dispatch per relocation.
//!
//! This module depends on nothing else in the crate.

pub mod i386;
pub mod x86_64;

/// What a relocation's value is, whatever the architecture calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    /// Nothing to do.
    None,
    /// S + A in a pointer-sized field: may become a dynamic relocation.
    AbsPtr,
    /// S + A in a field narrower than a pointer: no dynamic relocation can express it.
    AbsNarrow,
    /// S + A - P.
    Pc,
    /// The PLT entry (or S) + A - P: a call.
    Plt,
    /// The GOT slot + A - P; the architecture may relax the load (`Arch::got_relaxation`).
    GotPcRel,
    /// S + A - the GOT base.
    GotOff,
    /// The GOT base + A - P.
    GotPc,
    /// The GOT slot's offset from the GOT base + A (large code model).
    GotRel,
    /// The PLT entry (or S) - the GOT base + A (large code model calls).
    PltOff,
    /// The thread-pointer offset of S + A (local exec).
    TpOff,
    /// The GOT slot holding S's thread-pointer offset + A - P (initial exec).
    GotTp,
    /// General dynamic: S's (module, offset) GOT pair + A - P.
    TlsGd,
    /// Local dynamic: the module's (module, 0) GOT pair + A - P.
    TlsLd,
    /// The offset of S + A in its module's TLS block.
    DtpOff,
    /// TLS descriptor: S's descriptor GOT pair + A - P.
    TlsDesc,
    /// The call through a TLS descriptor.
    TlsDescCall,
    /// The symbol's size + A.
    Size,
    /// A type the architecture does not know.
    Unknown,
    /// A type the architecture knows and rivet does not link for it (i386's GOT, PLT and TLS types).
    Unsupported,
}

/// An instruction rewrite that the generic policy chose and the architecture performs (`Arch::relax`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relax {
    /// A GOT load of a local address becomes its computation (x86-64: `mov` → `lea`).
    GotToLea,
    /// A call through the GOT becomes a direct call.
    GotCall,
    /// A jump through the GOT becomes a direct jump.
    GotJmp,
    /// Initial exec to local exec: the GOT load becomes an immediate.
    IeToLe,
    /// General dynamic to local exec / initial exec: the whole `__tls_get_addr` call sequence.
    GdToLe,
    GdToIe,
    /// Local dynamic to local exec.
    LdToLe,
    /// TLS descriptor to local exec / initial exec, and its call to a no-op.
    DescToLe,
    DescToIe,
    DescCallToNop,
}

/// Why a field could not be written.
pub enum WriteErr {
    /// The field lies outside the section.
    Range,
    /// The value does not fit the field.
    Overflow,
}

/// The write proof's view of a relocation type (`Arch::write_proof`): the field's width in bytes (0: no field, or a
/// type the proof does not cover), and flags.
pub mod proof {
    pub const WIDTH: u8 = 0x0f;
    /// `Arch::write_value` range-checks the field.
    pub const CHECKED: u8 = 0x10;
    /// The field is unsigned: a negative addend may not fit.
    pub const UNSIGNED: u8 = 0x20;
}

pub trait Arch: Send + Sync + 'static {
    const E_MACHINE: u16;
    /// The architecture's name in messages.
    const NAME: &'static str;
    /// The output format's name in GNU ld's (BFD's) terms, for `--oformat` and `OUTPUT_FORMAT`.
    const BFD_TARGET: &'static str;
    /// ELF32 inputs and output (`elf32` widens the inputs to the ELF64 shape the passes read, `write::elf32`
    /// narrows the image); an ELF32 architecture links static executables and partial links only.
    const ELF32: bool = false;
    /// The "no relocation" type.
    const R_NONE: u32;
    const R_RELATIVE: u32;
    const R_IRELATIVE: u32;
    const R_GLOB_DAT: u32;
    const R_JUMP_SLOT: u32;
    const R_COPY: u32;
    const R_ABS64: u32;
    const R_TPOFF64: u32;
    const R_DTPMOD64: u32;
    const R_DTPOFF64: u32;
    const R_TLSDESC: u32;
    /// The bytes of `.got.plt` before the first PLT slot (the dynamic section's address and two words for the
    /// loader).
    const GOTPLT_RESERVED: u64;
    /// The magnitude every range-checked relocation field holds (x86-64: 2^31 - 1, the smaller of its signed and
    /// unsigned 32-bit fields), the bound `scan::WriteCheck::holds` proves values stay under.
    const CHECKED_REACH: u64;
    /// The default dynamic linker (`PT_INTERP`).
    const DYNAMIC_LINKER: &'static str;
    /// Where a position-dependent executable's image starts.
    const IMAGE_BASE: u64;
    /// A processor-specific section type that the linker treats as `SHT_PROGBITS` (x86-64: `SHT_X86_64_UNWIND`).
    const SHT_PROGBITS_LIKE: u32;

    /// The generic kind of relocation type `r_type`.
    fn classify(r_type: u32) -> RelKind;
    /// The ABI's name of relocation type `r_type`, for messages.
    fn type_name(r_type: u32) -> String;
    /// Stores `value` in the field relocation type `r_type` names at `at`, checking that it fits.
    fn write_value(out: &mut [u8], at: usize, r_type: u32, value: u64) -> Result<(), WriteErr>;
    /// The implicit addend of a REL relocation of type `r_type` whose field starts `field` (ELF32 inputs); `None`
    /// where the field does not fit.
    fn rel_addend(r_type: u32, field: &[u8]) -> Option<i64> {
        let _ = (r_type, field);
        Some(0)
    }
    /// The width of the field of relocation type `r_type` in a non-allocated section (debug info), 0 for a type
    /// such a section may not use.
    fn nonalloc_width(r_type: u32) -> u8;
    /// Fills `gap`, padding inside an executable output section, as GNU ld does for the architecture: with
    /// no-op instructions where it uses them, zeros otherwise.
    fn fill_code(gap: &mut [u8]) {
        gap.fill(0);
    }
    /// The write proof's entry for relocation type `r_type` (`proof` bits).
    fn write_proof(r_type: u32) -> u8;

    /// The relaxation a GOT load at `off` of `data` (relocation type `r_type`) allows when its target is local,
    /// from the instruction before the field.
    fn got_relaxation(r_type: u32, data: &[u8], off: u64) -> Option<Relax>;
    /// Whether the initial-exec access at `off` of `data` can become local exec.
    fn ie_relaxable(data: &[u8], off: u64) -> bool;
    /// Whether the instructions around `off` of `data` are the sequence relaxation `r` rewrites.
    fn relax_sequence_ok(r: Relax, data: &[u8], off: u64) -> bool;
    /// Whether relaxation `r` also consumes the relocation after this one (the call to `__tls_get_addr`).
    fn relax_consumes_next(r: Relax) -> bool;
    /// Performs relaxation `r` on the output bytes of the field at `at` (relocation type `r_type`) and writes
    /// `value`, which is: the target's S + A - P for the GOT relaxations; its thread-pointer offset for the ones to
    /// local exec (S + A for `IeToLe`, S for `GdToLe`); the GOT slot's address + A - P (`GdToIe`: without A) for
    /// the ones to initial exec; nothing for the others.
    fn relax(out: &mut [u8], at: usize, r_type: u32, r: Relax, value: u64) -> Result<(), WriteErr>;
    /// `--emit-relocs`: the relocation that describes a field relaxation `r` rewrote, as GNU ld writes it: the new
    /// type and how far the field moved; `None` where the input's relocation stays as it is (GNU ld keeps the
    /// TLS relaxations' types).
    fn relaxed_reloc(r_type: u32, r: Relax) -> Option<(u32, i64)>;

    /// The PLT's geometry, with landing pads for indirect branch tracking (`ibt`) or without.
    fn plt_shape(ibt: bool) -> PltShape;
    /// A lazily bound PLT slot's initial value: where the first call through entry `entry_addr` continues.
    fn plt_lazy_target(shape: &PltShape, plt_addr: u64, entry_addr: u64) -> u64;
    fn write_plt0(shape: &PltShape, out: &mut [u8], plt_addr: u64, gotplt_addr: u64);
    fn write_plt_entry(
        shape: &PltShape,
        out: &mut [u8],
        entry_addr: u64,
        slot_addr: u64,
        index: u32,
        plt_addr: u64,
    );
    fn write_iplt_entry(shape: &PltShape, out: &mut [u8], entry_addr: u64, slot_addr: u64);

    /// How a processor-specific program property (`.note.gnu.property`) merges.
    fn property_merge(pr_type: u32) -> PropertyMerge;
    /// The properties `-z ibt`, `-z shstk` and `-z <ISA level>` (0: none) add to the output: (type, bits).
    fn forced_properties(ibt: bool, shstk: bool, isa_level: u8) -> Vec<(u32, u32)>;
    /// The control-flow protection marks an input without them lacks (`-z cet-report`), by name.
    fn cet_missing(props: &[(u32, u32)]) -> Vec<&'static str>;
    /// Whether the output's properties ask for PLT entries that are indirect branch targets.
    fn plt_landing_pads(props: &[(u32, u32)]) -> bool;
}

/// The PLT's geometry: the lazy-binding header of `.plt`, one entry, one IFUNC stub in `.iplt`.
#[derive(Clone, Copy, Debug)]
pub struct PltShape {
    pub header: u64,
    pub entry: u64,
    pub iplt_entry: u64,
    /// Entries start with a landing pad for indirect branch tracking.
    pub ibt: bool,
}

/// How a program property merges over the inputs (`synthetic::property`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyMerge {
    /// A bit stays if every input has it.
    And,
    /// A bit is set if any input has it.
    Or,
    /// As `Or`, if every input has the property.
    OrAnd,
    /// Not carried to the output.
    Skip,
}
