//! Architecture-specific code behind one trait. The generic passes (`scan`, `write`) are generic over `A: Arch`,
//! so each architecture's relocation loops are compiled separately with no per-relocation dynamic dispatch.

pub mod x86_64;

use crate::scan::{ScanCx, SectionScan};
use crate::write::{DynRelSink, WriteCx};

pub trait Arch: Send + Sync + 'static {
    const E_MACHINE: u16;
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
    /// Size of the lazy-binding header of `.plt` and of one entry; an IFUNC stub in `.iplt`.
    const PLT0_SIZE: u64;
    const PLT_ENTRY_SIZE: u64;
    const IPLT_ENTRY_SIZE: u64;

    /// Scans the relocations of live allocated section `s` of object `f`.
    fn scan_section(cx: &ScanCx, f: usize, s: usize) -> SectionScan;

    /// Applies the relocations of section `s` of object `f` to `out`, its bytes in the output (already copied),
    /// emitting the dynamic relocations that scan counted into `dyn_out`.
    fn apply_section(
        cx: &WriteCx,
        f: usize,
        s: usize,
        out: &mut [u8],
        dyn_out: &mut DynRelSink<'_>,
    ) -> Result<(), String>;

    /// Applies `relas`, a run of the relocations of non-allocated section `s` of object `f` sorted by offset, to
    /// `out`: the section's output bytes from offset `out_base` on, already copied. Large debug sections are
    /// written in parts this way, in parallel.
    fn apply_nonalloc_part(
        cx: &WriteCx,
        f: usize,
        s: usize,
        out: &mut [u8],
        out_base: u64,
        relas: &[crate::elf::Rela],
    ) -> Result<(), String>;

    /// Whether `apply_nonalloc_part` applies every relocation of `relas`, a run of those of non-allocated section
    /// `s` of object `f`, without an error (a supported type, a known symbol, a field inside the section); see
    /// [`crate::scan::WriteCheck`].
    fn nonalloc_applies(cx: &ScanCx, f: usize, s: usize, relas: &[crate::elf::Rela]) -> bool;

    /// The magnitude every range-checked relocation field holds (x86-64: 2^31 - 1, the smaller of its signed and
    /// unsigned 32-bit fields), the bound [`crate::scan::WriteCheck::holds`] proves values stay under.
    const CHECKED_REACH: u64;

    fn write_plt0(out: &mut [u8], plt_addr: u64, gotplt_addr: u64);
    fn write_plt_entry(out: &mut [u8], entry_addr: u64, slot_addr: u64, index: u32, plt_addr: u64);
    fn write_iplt_entry(out: &mut [u8], entry_addr: u64, slot_addr: u64);
}
