//! ELF32 inputs, read as ELF64: an i386 link's objects are widened once, as they are parsed, into owned buffers of
//! the ELF64 shape every pass reads (the header, the section headers, the symbols, and each `SHT_REL` table made an
//! `SHT_RELA` one whose addends are read from the fields they relocate). The section contents stay as they are, so
//! the writer copies them and overwrites each relocated field, which is what a REL addend asks for. The output is
//! narrowed back to ELF32 by `write::elf32`.

use crate::elf::{Data, read_u32};
use object::elf as E;

/// The implicit addend of a REL relocation of type `r_type` whose field starts `field` (the architecture's
/// `Arch::rel_addend`); `None` where the field lies outside the section.
pub type AddendFn = fn(r_type: u32, field: &[u8]) -> Option<i64>;

const EHDR64: usize = 64;
const SHDR32: usize = 40;
const SHDR64: usize = 64;
const SYM32: usize = 16;
const SYM64: usize = 24;
const REL32: usize = 8;
const RELA32: usize = 12;
const RELA64: usize = 24;

fn u16_at(d: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(off..off + 2)?.try_into().ok()?))
}

/// One ELF32 section header, its fields in ELF64's widths.
#[derive(Clone, Copy)]
struct Shdr32 {
    name: u32,
    ty: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

fn read_shdr(d: &[u8], at: usize) -> Option<Shdr32> {
    let w = |i: usize| read_u32(d, at + 4 * i);
    Some(Shdr32 {
        name: w(0)?,
        ty: w(1)?,
        flags: w(2)? as u64,
        addr: w(3)? as u64,
        offset: w(4)? as u64,
        size: w(5)? as u64,
        link: w(6)?,
        info: w(7)?,
        align: w(8)? as u64,
        entsize: w(9)? as u64,
    })
}

fn push_shdr(out: &mut Vec<u8>, s: &Shdr32) {
    out.extend_from_slice(&s.name.to_le_bytes());
    out.extend_from_slice(&s.ty.to_le_bytes());
    for v in [s.flags, s.addr, s.offset, s.size] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&s.link.to_le_bytes());
    out.extend_from_slice(&s.info.to_le_bytes());
    out.extend_from_slice(&s.align.to_le_bytes());
    out.extend_from_slice(&s.entsize.to_le_bytes());
}

/// Whether `data` is an ELF32 file (its identification's class).
pub fn is_elf32(data: &[u8]) -> bool {
    data.get(4) == Some(&(E::ELFCLASS32))
}

/// The ELF64 form of the ELF32 relocatable object `data`, leaked for the link's life as the mappings are.
pub fn widen(data: Data, addend: AddendFn) -> Result<Data, String> {
    if data.len() < 52 || data.get(5) != Some(&E::ELFDATA2LSB) {
        return Err("not a 32-bit little-endian ELF file".into());
    }
    let bad = || "section header table is out of bounds".to_string();
    let shoff = read_u32(data, 32).ok_or_else(bad)? as usize;
    let shentsize = u16_at(data, 46).ok_or_else(bad)? as usize;
    let mut shnum = u16_at(data, 48).ok_or_else(bad)? as usize;
    if shoff != 0 && shentsize != SHDR32 {
        return Err("invalid section header entry size".into());
    }
    if shoff != 0 && shnum == 0 {
        shnum = read_shdr(data, shoff).ok_or_else(bad)?.size as usize;
    }
    let shdrs: Vec<Shdr32> = (0..if shoff == 0 { 0 } else { shnum })
        .map(|i| read_shdr(data, shoff + i * SHDR32).ok_or_else(bad))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(EHDR64 + data.len() + data.len() / 2);
    out.resize(EHDR64, 0);
    out.extend_from_slice(data);
    let mut wide = shdrs.clone();
    for (i, s) in shdrs.iter().enumerate() {
        let w = &mut wide[i];
        if s.ty != E::SHT_NULL && s.ty != E::SHT_NOBITS {
            w.offset += EHDR64 as u64;
        }
        if s.flags & E::SHF_COMPRESSED as u64 != 0 {
            return Err(format!(
                "section {i}: compressed sections of ELF32 inputs are not supported"
            ));
        }
        let body = || {
            data.get(s.offset as usize..)
                .and_then(|d| d.get(..s.size as usize))
                .ok_or_else(|| format!("section {i} is out of bounds"))
        };
        let start = out.len() as u64;
        match s.ty {
            E::SHT_SYMTAB => widen_symbols(body()?, &mut out),
            E::SHT_REL | E::SHT_RELA => {
                let target = shdrs
                    .get(s.info as usize)
                    .filter(|t| t.ty != E::SHT_NOBITS)
                    .and_then(|t| data.get(t.offset as usize..)?.get(..t.size as usize))
                    .unwrap_or(&[]);
                widen_relocs(body()?, s.ty == E::SHT_RELA, target, addend, &mut out)
                    .map_err(|e| format!("section {i}: {e}"))?;
                w.ty = E::SHT_RELA;
            }
            E::SHT_DYNSYM | E::SHT_DYNAMIC | E::SHT_HASH | E::SHT_GNU_HASH => {
                return Err("ELF32 dynamic sections are not supported".into());
            }
            _ => continue,
        }
        w.offset = start;
        w.size = out.len() as u64 - start;
        w.entsize = if s.ty == E::SHT_SYMTAB { SYM64 } else { RELA64 } as u64;
        w.align = 8;
    }
    let shoff64 = if shoff == 0 { 0 } else { out.len() as u64 };
    for w in &wide {
        push_shdr(&mut out, w);
    }
    let h = &mut out[..EHDR64];
    h[..16].copy_from_slice(&data[..16]);
    h[4] = E::ELFCLASS64;
    h[16..24].copy_from_slice(&data[16..24]); // e_type, e_machine, e_version
    h[24..32].copy_from_slice(&(read_u32(data, 24).unwrap_or(0) as u64).to_le_bytes());
    h[40..48].copy_from_slice(&shoff64.to_le_bytes());
    h[48..52].copy_from_slice(&data[36..40]); // e_flags
    h[52..54].copy_from_slice(&(EHDR64 as u16).to_le_bytes());
    h[58..60].copy_from_slice(&(SHDR64 as u16).to_le_bytes());
    h[60..64].copy_from_slice(&data[48..52]); // e_shnum, e_shstrndx
    Ok(Box::leak(out.into_boxed_slice()))
}

/// Appends the ELF64 form of the ELF32 symbol table `body` to `out`: values and sizes are addresses and lengths of
/// 32 bits, zero-extended.
fn widen_symbols(body: &[u8], out: &mut Vec<u8>) {
    for s in body.chunks_exact(SYM32) {
        out.extend_from_slice(&s[0..4]); // st_name
        out.extend_from_slice(&s[12..16]); // st_info, st_other, st_shndx
        out.extend_from_slice(
            &(u32::from_le_bytes(s[4..8].try_into().unwrap()) as u64).to_le_bytes(),
        );
        out.extend_from_slice(
            &(u32::from_le_bytes(s[8..12].try_into().unwrap()) as u64).to_le_bytes(),
        );
    }
}

/// Appends the RELA64 form of the ELF32 relocation table `body` (REL, or RELA where `rela`) to `out`, the implicit
/// addends read from `target`, the contents of the section the table applies to.
fn widen_relocs(
    body: &[u8],
    rela: bool,
    target: &[u8],
    addend: AddendFn,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let size = if rela { RELA32 } else { REL32 };
    for r in body.chunks_exact(size) {
        let off = u32::from_le_bytes(r[0..4].try_into().unwrap());
        let info = u32::from_le_bytes(r[4..8].try_into().unwrap());
        let (sym, ty) = (info >> 8, info & 0xff);
        let a = if rela {
            i32::from_le_bytes(r[8..12].try_into().unwrap()) as i64
        } else {
            target
                .get(off as usize..)
                .and_then(|f| addend(ty, f))
                .ok_or_else(|| format!("relocation at offset {off:#x} is outside its section"))?
        };
        out.extend_from_slice(&(off as u64).to_le_bytes());
        out.extend_from_slice(&(((sym as u64) << 32) | ty as u64).to_le_bytes());
        out.extend_from_slice(&a.to_le_bytes());
    }
    Ok(())
}
