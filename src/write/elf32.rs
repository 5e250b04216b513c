//! The ELF32 output of an i386 link: the passes lay out and write an ELF64-shaped image, with the headers sized for
//! ELF32 (`elf::headers_size`); here the ELF header, program headers and section headers are written in ELF32's
//! form, and the tables written with ELF64 entries (`.symtab`, the `--emit-relocs` sections) are narrowed in place
//! to ELF32 ones (their sections keep the space, the headers give the narrower size). An emitted relocation becomes
//! a REL entry: the addend is already in the contents, which hold the relocated value.

use super::{WriteCx, link_info};
use crate::arch::Arch;
use crate::args::OutputKind;
use crate::layout::{Layout, Synth};
use crate::synthetic::shstrtab;
use object::elf as E;

const EHDR: usize = 52;
const PHDR: usize = 32;
const SHDR: usize = 40;

/// The linker-made sections an i386 link does not make: those of dynamic linking, the GOT, PLT and IFUNC stubs,
/// and the program property note (whose ELF32 layout differs).
const NOT_MADE: &[Synth] = &[
    Synth::Interp,
    Synth::GnuProperty,
    Synth::Dynamic,
    Synth::RelaDyn,
    Synth::RelaPlt,
    Synth::RelaIplt,
    Synth::RelrDyn,
    Synth::Plt,
    Synth::Iplt,
    Synth::Got,
    Synth::GotPlt,
];

/// Refuses what an i386 output cannot hold or rivet does not make for it: addresses beyond 4 GiB, and the
/// linker-made sections of `NOT_MADE`.
pub fn refuse(lay: &Layout) -> Result<(), String> {
    const LIMIT: u64 = 1 << 32;
    for &s in NOT_MADE {
        if let Some(o) = lay.synth_sec(s).filter(|o| o.size > 0) {
            return Err(format!(
                "i386 (elf_i386): rivet does not make {} (what needs it: IFUNC symbols, GOT or PLT references, \
                 dynamic linking or program properties)",
                String::from_utf8_lossy(&o.name)
            ));
        }
    }
    if let Some(o) =
        (lay.osecs.iter()).find(|o| o.shndx != 0 && o.addr.saturating_add(o.size) > LIMIT)
    {
        return Err(format!(
            "i386 (elf_i386): section {} at {:#x} (size {:#x}) ends beyond 4 GiB",
            String::from_utf8_lossy(&o.name),
            o.addr,
            o.size
        ));
    }
    if lay.file_size > LIMIT {
        return Err("i386 (elf_i386): the output file would be larger than 4 GiB".into());
    }
    Ok(())
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// Stores the low 32 bits of `v` (every value of an i386 output is below 4 GiB, `refuse` checked the addresses).
fn put32(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
}

/// Writes the ELF32 headers, and narrows `.symtab` and the emitted relocations.
pub fn write_headers<A: Arch>(cx: &WriteCx, bytes: &mut [u8]) {
    let lay = cx.lay;
    let nsec = lay.osecs.iter().filter(|o| o.shndx != 0).count() + 1;
    let h = &mut bytes[..EHDR];
    h[..16].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let e_type = match cx.config.kind {
        OutputKind::Exec => E::ET_EXEC,
        _ => E::ET_DYN,
    };
    put16(h, 16, e_type);
    put16(h, 18, A::E_MACHINE);
    put32(h, 20, 1);
    put32(h, 24, lay.entry);
    put32(
        h,
        28,
        if lay.segments.is_empty() {
            0
        } else {
            EHDR as u64
        },
    );
    put32(h, 32, lay.shoff);
    put32(h, 36, 0);
    put16(h, 40, EHDR as u16);
    put16(h, 42, PHDR as u16);
    put16(h, 44, lay.segments.len() as u16);
    put16(h, 46, SHDR as u16);
    put16(h, 48, nsec as u16);
    put16(
        h,
        50,
        lay.synth_sec(Synth::Shstrtab).map_or(0, |o| o.shndx) as u16,
    );
    for (i, s) in lay.segments.iter().enumerate() {
        let p = &mut bytes[EHDR + PHDR * i..][..PHDR];
        put32(p, 0, s.p_type as u64);
        put32(p, 4, s.offset);
        put32(p, 8, s.vaddr);
        put32(p, 12, s.paddr);
        put32(p, 16, s.filesz);
        put32(p, 20, s.memsz);
        put32(p, 24, s.flags as u64);
        put32(p, 28, s.align);
    }
    let kept = || lay.osecs.iter().filter(|o| o.shndx != 0);
    if let Some(r) = lay.synth_part(Synth::Shstrtab).and_then(|o| o.range()) {
        shstrtab::write(&mut bytes[r], kept().map(|o| &o.name[..]));
    }
    let name_offs = shstrtab::name_offsets(kept().map(|o| &o.name[..]));
    let kept_k = lay.osecs.iter().enumerate().filter(|(_, o)| o.shndx != 0);
    for ((k, o), name_off) in kept_k.zip(name_offs) {
        let (link, info) = link_info(cx, k, o);
        let (mut ty, mut size, mut entsize, mut align) =
            (o.sh_type, o.size, super::array_entsize(o, 4), o.align);
        match o.sh_type {
            E::SHT_SYMTAB => {
                size = narrow_symbols(&mut bytes[o.offset as usize..][..o.size as usize]);
                (entsize, align) = (16, 4);
            }
            // `--emit-relocs`.
            E::SHT_RELA if !o.is_alloc() => {
                size = narrow_relocs(&mut bytes[o.offset as usize..][..o.size as usize]);
                (ty, entsize, align) = (E::SHT_REL, 8, 4);
            }
            _ => {}
        }
        let sh = &mut bytes[(lay.shoff + SHDR as u64 * o.shndx as u64) as usize..][..SHDR];
        put32(sh, 0, name_off as u64);
        put32(sh, 4, ty as u64);
        put32(sh, 8, o.flags);
        put32(sh, 12, o.addr);
        put32(sh, 16, o.offset);
        put32(sh, 20, size);
        put32(sh, 24, link as u64);
        put32(sh, 28, info as u64);
        put32(sh, 32, align);
        put32(sh, 36, entsize);
    }
}

/// Rewrites the ELF64 symbols of `table` as ELF32 ones from its start, zeroes the rest; returns the new size.
fn narrow_symbols(table: &mut [u8]) -> u64 {
    let n = table.len() / 24;
    for i in 0..n {
        let s: [u8; 24] = table[24 * i..24 * i + 24].try_into().unwrap();
        let d = &mut table[16 * i..16 * i + 16];
        d[0..4].copy_from_slice(&s[0..4]); // st_name
        d[4..8].copy_from_slice(&s[8..12]); // st_value
        d[8..12].copy_from_slice(&s[16..20]); // st_size
        d[12..16].copy_from_slice(&s[4..8]); // st_info, st_other, st_shndx
    }
    table[16 * n..].fill(0);
    16 * n as u64
}

/// Rewrites the RELA64 entries of `table` as REL32 ones from its start, zeroes the rest; returns the new size.
fn narrow_relocs(table: &mut [u8]) -> u64 {
    let n = table.len() / 24;
    for i in 0..n {
        let r: [u8; 24] = table[24 * i..24 * i + 24].try_into().unwrap();
        let info = u64::from_le_bytes(r[8..16].try_into().unwrap());
        let (sym, ty) = ((info >> 32) as u32, info as u32 & 0xff);
        let d = &mut table[8 * i..8 * i + 8];
        d[0..4].copy_from_slice(&r[0..4]);
        d[4..8].copy_from_slice(&((sym << 8) | ty).to_le_bytes());
    }
    table[8 * n..].fill(0);
    8 * n as u64
}
