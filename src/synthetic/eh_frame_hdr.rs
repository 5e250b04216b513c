//! `.eh_frame_hdr`: version, pointer encodings, `.eh_frame`'s address, the FDE count, and a table of (initial
//! location, FDE address) sorted by location, which the unwinder searches. Its size is one table entry per live FDE
//! (the layout counts them in the `.eh_frame` records it kept); the writer reads the FDEs back from the finished
//! output `.eh_frame`.

use crate::diag::{Errors, Result};
use crate::elf;
use rayon::prelude::*;

/// The size of `.eh_frame_hdr` for `fdes` FDEs: the 12-byte header and 8 bytes per table entry.
pub fn size(fdes: usize) -> u64 {
    12 + 8 * fdes as u64
}

/// Writes `.eh_frame_hdr` (at file offset `offset` and address `addr`) for the output `.eh_frame` (its address
/// and bytes, if there is one): table entries relative to the header (`DW_EH_PE_datarel | sdata4`).
pub fn write(offset: u64, addr: u64, eh_frame: Option<(u64, &[u8])>, out: &mut [u8]) -> Result<()> {
    let mut table = eh_frame.map_or_else(Vec::new, |(eh_addr, data)| fde_table(eh_addr, data));
    sort_table(&mut table);
    if out.len() < size(table.len()) as usize {
        return Err(Errors::one(format!(
            "internal error: .eh_frame_hdr at {offset:#x} has room for fewer than its {} entries",
            table.len()
        )));
    }
    out[0] = 1;
    out[1] = 0x1b; // eh_frame_ptr: pcrel sdata4
    out[2] = 0x03; // fde_count: udata4
    out[3] = 0x3b; // table: datarel sdata4
    let eh_addr = eh_frame.map_or(0, |(a, _)| a);
    out[4..8].copy_from_slice(&(eh_addr.wrapping_sub(addr + 4) as u32).to_le_bytes());
    out[8..12].copy_from_slice(&(table.len() as u32).to_le_bytes());
    out[12..12 + 8 * table.len()]
        .par_chunks_mut(8)
        .zip(table.par_iter())
        .with_min_len(4096)
        .for_each(|(e, (pc, fde))| {
            e[..4].copy_from_slice(&(pc.wrapping_sub(addr) as u32).to_le_bytes());
            e[4..].copy_from_slice(&(fde.wrapping_sub(addr) as u32).to_le_bytes());
        });
    Ok(())
}

/// Sorts the table by location. It comes in `.eh_frame`'s order, the files' order, which is the code's but for
/// the sections `.text` places group by group (`.text.startup`, `.text.unlikely`, ...) before the rest: the
/// entries out of order are set aside in one pass, sorted, and merged back. A sort of the whole nearly sorted
/// table cost far more (its pattern detection gives up on a few entries out of place); a table out of order
/// more widely is sorted whole.
fn sort_table(table: &mut Vec<(u64, u64)>) {
    if table.is_sorted() {
        return;
    }
    let mut kept: Vec<(u64, u64)> = Vec::with_capacity(table.len());
    let mut apart: Vec<(u64, u64)> = Vec::new();
    for &e in table.iter() {
        match kept.last() {
            Some(last) if *last > e => apart.push(e),
            _ => kept.push(e),
        }
    }
    if apart.len() > table.len() / 16 {
        table.par_sort_unstable();
        return;
    }
    apart.sort_unstable();
    table.clear();
    let (mut a, mut b) = (kept.into_iter().peekable(), apart.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        table.push(if x <= y { a.next() } else { b.next() }.unwrap_or_default());
    }
    table.extend(a.chain(b));
}

/// (initial location, FDE address) of every FDE of the output `.eh_frame` at `eh_addr`, in section order.
fn fde_table(eh_addr: u64, data: &[u8]) -> Vec<(u64, u64)> {
    let mut table: Vec<(u64, u64)> = Vec::new();
    let mut off = 0usize;
    let mut cie_enc: std::collections::HashMap<usize, u8> = std::collections::HashMap::new();
    // FDEs come in runs after their CIE: the last CIE looked up answers most of them without hashing.
    let mut last_cie = (usize::MAX, 0u8);
    while off + 4 <= data.len() {
        let len = elf::read_u32(data, off).unwrap_or(0) as usize;
        if len == 0 {
            off += 4;
            continue;
        }
        let id = elf::read_u32(data, off + 4).unwrap_or(0) as usize;
        // The layout checked the input records and their relocations, which leave lengths and CIE ids alone;
        // still, a record this loop cannot follow ends the table rather than the link.
        let Some(record) = data.get(off..off.saturating_add(4 + len)) else {
            break;
        };
        if id == 0 {
            cie_enc.insert(off, fde_encoding(record));
        } else {
            let cie = (off + 4).wrapping_sub(id);
            let enc = if cie == last_cie.0 {
                last_cie.1
            } else {
                let enc = cie_enc.get(&cie).copied().unwrap_or(0x1b);
                last_cie = (cie, enc);
                enc
            };
            let field = off + 8;
            let pc = match enc & 0x0f {
                0x0b | 0x03 => elf::read_u32(data, field).unwrap_or(0) as i32 as i64 as u64,
                _ => elf::read_u64(data, field).unwrap_or(0),
            };
            let pc = if enc & 0x70 == 0x10 {
                pc.wrapping_add(eh_addr + field as u64)
            } else {
                pc
            };
            table.push((pc, eh_addr + off as u64));
        }
        off += 4 + len;
    }
    table
}

/// The FDE pointer encoding from a CIE's augmentation ('R'), default absolute 8 bytes.
fn fde_encoding(cie: &[u8]) -> u8 {
    let aug_start = 9;
    let Some(aug_len) = cie
        .get(aug_start..)
        .and_then(|s| s.iter().position(|&b| b == 0))
    else {
        return 0;
    };
    let aug = &cie[aug_start..aug_start + aug_len];
    let mut p = aug_start + aug_len + 1;
    let uleb = |p: &mut usize| {
        let mut v = 0u64;
        let mut shift = 0;
        while let Some(&b) = cie.get(*p) {
            *p += 1;
            v |= ((b & 0x7f) as u64).checked_shl(shift).unwrap_or(0);
            shift = shift.saturating_add(7);
            if b & 0x80 == 0 {
                break;
            }
        }
        v
    };
    uleb(&mut p); // code alignment
    uleb(&mut p); // data alignment (sleb; only skipped)
    if cie.get(8) == Some(&1) {
        p += 1; // return address register (version 1: one byte)
    } else {
        uleb(&mut p);
    }
    if aug.first() != Some(&b'z') {
        return 0;
    }
    uleb(&mut p);
    for &c in &aug[1..] {
        match c {
            b'R' => return cie.get(p).copied().unwrap_or(0),
            b'P' => {
                let enc = cie.get(p).copied().unwrap_or(0);
                p += 1;
                p += match enc & 0x0f {
                    0x02 | 0x0a => 2,
                    0x03 | 0x0b => 4,
                    _ => 8,
                };
            }
            b'L' => p += 1,
            _ => {}
        }
    }
    0
}

#[cfg(test)]
mod tests {
    #[test]
    fn sort_table_sorts() {
        let mut t: Vec<(u64, u64)> =
            vec![(10, 0), (20, 1), (1, 2), (30, 3), (2, 4), (40, 5), (40, 6)];
        let mut want = t.clone();
        want.sort_unstable();
        super::sort_table(&mut t);
        assert_eq!(t, want);
        // Out of order widely: sorted whole.
        let mut t: Vec<(u64, u64)> = (0..100).rev().map(|i| (i, i)).collect();
        super::sort_table(&mut t);
        assert!(t.is_sorted() && t.len() == 100);
    }
}
