//! `.hash` (System V) and `.gnu.hash`: the dynamic loader's symbol lookup tables over `.dynsym`, sized and written
//! here from the same entries. `.gnu.hash` covers the hashed entries only, which the dynamic symbol pass put last,
//! in bucket order.

use super::DynSymbol;
use crate::elf;

/// The number of `.gnu.hash` buckets for `n` hashed symbols.
pub fn gnu_hash_buckets(n: usize) -> u32 {
    (n / 4).max(1) as u32
}

/// The number of 64-bit words of `.gnu.hash`'s Bloom filter for `n` hashed symbols.
pub fn gnu_bloom_words(n: usize) -> u64 {
    ((n / 8).max(1) as u64).next_power_of_two()
}

/// The shift of the Bloom filter's second hash bit.
const BLOOM_SHIFT: u32 = 26;

/// The size of `.hash` for `dynsyms` (the null entry is counted by the table too).
pub fn sysv_size(dynsyms: &[DynSymbol]) -> u64 {
    let n = dynsyms.len() as u64 + 1;
    8 + 4 * n.max(1) * 2
}

/// Writes `.hash`: one bucket per symbol, chains through the entries.
pub fn write_sysv(out: &mut [u8], dynsyms: &[DynSymbol]) {
    let n = dynsyms.len() + 1;
    let nbucket = n.max(1);
    let mut buckets = vec![0u32; nbucket];
    let mut chains = vec![0u32; n];
    for (i, d) in dynsyms.iter().enumerate() {
        let b = elf::sysv_hash(d.name) as usize % nbucket;
        chains[i + 1] = buckets[b];
        buckets[b] = i as u32 + 1;
    }
    let words = [nbucket as u32, n as u32]
        .into_iter()
        .chain(buckets)
        .chain(chains);
    for (w, v) in out.chunks_exact_mut(4).zip(words) {
        w.copy_from_slice(&v.to_le_bytes());
    }
}

/// The size of `.gnu.hash` for `dynsyms`.
pub fn gnu_size(dynsyms: &[DynSymbol]) -> u64 {
    let nhashed = dynsyms.iter().filter(|d| d.hashed).count();
    16 + 8 * gnu_bloom_words(nhashed) + 4 * gnu_hash_buckets(nhashed) as u64 + 4 * nhashed as u64
}

/// Writes `.gnu.hash`: header, Bloom filter, buckets, and the hash chain of the hashed entries.
pub fn write_gnu(out: &mut [u8], dynsyms: &[DynSymbol]) {
    let first_def = dynsyms
        .iter()
        .position(|d| d.hashed)
        .unwrap_or(dynsyms.len());
    let defs = &dynsyms[first_def..];
    let nbuckets = gnu_hash_buckets(defs.len());
    let nbloom = gnu_bloom_words(defs.len());
    let mut bloom = vec![0u64; nbloom as usize];
    let mut buckets = vec![0u32; nbuckets as usize];
    let mut chain = vec![0u32; defs.len()];
    for (k, d) in defs.iter().enumerate() {
        let hsh = d.gnu_hash;
        let w = ((hsh / 64) as u64 % nbloom) as usize;
        bloom[w] |= 1u64 << (hsh % 64) | 1u64 << ((hsh >> BLOOM_SHIFT) % 64);
        let b = (hsh % nbuckets) as usize;
        if buckets[b] == 0 {
            buckets[b] = (first_def + 1 + k) as u32;
        }
        let last = k + 1 == defs.len() || defs[k + 1].gnu_hash % nbuckets != b as u32;
        chain[k] = (hsh & !1) | last as u32;
    }
    let (head, rest) = out.split_at_mut(16);
    for (w, v) in
        head.chunks_exact_mut(4)
            .zip([nbuckets, (first_def + 1) as u32, nbloom as u32, BLOOM_SHIFT])
    {
        w.copy_from_slice(&v.to_le_bytes());
    }
    let (bloom_out, rest) = rest.split_at_mut(8 * bloom.len());
    for (w, v) in bloom_out.chunks_exact_mut(8).zip(bloom) {
        w.copy_from_slice(&v.to_le_bytes());
    }
    for (w, v) in rest
        .chunks_exact_mut(4)
        .zip(buckets.into_iter().chain(chain))
    {
        w.copy_from_slice(&v.to_le_bytes());
    }
}
