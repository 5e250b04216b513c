//! Dynamic relocation entries (`Elf64_Rela`), as `.rela.dyn`, `.rela.plt` and `.rela.iplt` hold them: the GOT and
//! PLT writer's (`got_plt`) and the input sections' (written while their relocations are applied).

use crate::arch::Arch;
use rayon::prelude::*;

/// A dynamic relocation to be written into `.rela.dyn`, `.rela.plt` or `.rela.iplt`.
#[derive(Clone, Copy)]
pub struct DynRel {
    pub offset: u64,
    pub r_type: u32,
    pub sym: u32,
    pub addend: i64,
}

/// Writes `r` into the first 24 bytes of `out`.
#[inline]
pub fn put(out: &mut [u8], r: &DynRel) {
    out[0..8].copy_from_slice(&r.offset.to_le_bytes());
    out[8..16].copy_from_slice(&((r.sym as u64) << 32 | r.r_type as u64).to_le_bytes());
    out[16..24].copy_from_slice(&r.addend.to_le_bytes());
}

/// Sorts `.rela.dyn`'s entries (`bytes`) as GNU ld's `-z combreloc` (its default and rivet's) does: the relative
/// relocations first, by offset; then the others by class (plain, copy, IRELATIVE, PLT), each symbol's together,
/// the symbols in the order of their first offset. The dynamic loader applies the relative run without looking up
/// symbols (it is `DT_RELACOUNT` long), and programs that relocate themselves (U-Boot on x86) expect the offsets to
/// rise. Returns the number of relative relocations.
pub fn sort_combined<A: Arch>(bytes: &mut [u8]) -> u64 {
    let (entries, _) = bytes.as_chunks_mut::<24>();
    let word = |e: &[u8; 24], at: usize| u64::from_le_bytes(e[at..at + 8].try_into().unwrap());
    let class = |e: &[u8; 24]| match word(e, 8) as u32 {
        t if t == A::R_RELATIVE => 0u8,
        t if t == A::R_COPY => 2,
        t if t == A::R_IRELATIVE => 3,
        t if t == A::R_JUMP_SLOT => 4,
        _ => 1,
    };
    // The relative ones as (offset, addend), in their order: the layout numbers the input sections' entries in
    // address order (`RelocBases::in_place_order`), so the stable sort finds them in order but for the GOT's and
    // merges two runs. (Sorting the 24-byte entries whole, in the writers' order, took 23 ms on clang-so.)
    let mut relative: Vec<(u64, u64)> = Vec::with_capacity(entries.len());
    let mut others: Vec<[u8; 24]> = Vec::new();
    for e in entries.iter() {
        if class(e) == 0 {
            relative.push((word(e, 0), word(e, 16)));
        } else {
            others.push(*e);
        }
    }
    relative.sort_by_key(|r| r.0);
    // The others by class, each symbol's together, the symbols by their first offset.
    others.sort_unstable_by_key(|e| (word(e, 8) >> 32, word(e, 0)));
    let mut keyed: Vec<(u8, u64, u64, [u8; 24])> = Vec::with_capacity(others.len());
    let mut first = (u64::MAX, 0);
    for e in &others {
        let sym = word(e, 8) >> 32;
        if keyed.is_empty() || sym != first.0 {
            first = (sym, word(e, 0));
        }
        keyed.push((class(e), first.1, word(e, 0), *e));
    }
    keyed.sort_unstable_by_key(|k| (k.0, k.1, k.2));
    let (head, tail) = entries.split_at_mut(relative.len());
    let info = (A::R_RELATIVE as u64).to_le_bytes();
    head.par_iter_mut()
        .zip(&relative)
        .for_each(|(e, &(off, addend))| {
            e[0..8].copy_from_slice(&off.to_le_bytes());
            e[8..16].copy_from_slice(&info);
            e[16..24].copy_from_slice(&addend.to_le_bytes());
        });
    for (slot, k) in tail.iter_mut().zip(keyed) {
        *slot = k.3;
    }
    relative.len() as u64
}
