//! `.gdb_index` (`--gdb-index`), version 7 of the format gdb's manual describes ("Index Section Format"): a header
//! of six offsets, the compile units of `.debug_info` (offset, length), no type units, the address area (ranges
//! of code, each with its unit), an open-addressing hash table of names, and the constant pool (each name's
//! vector of units with the GDB index attributes, then the names).
//!
//! What goes in is plain data (`Unit`, `Area`, `Symbol`), which the `--gdb-index` pass reads from the inputs.

use rayon::prelude::*;

/// The header: version and five offsets, `u32` each.
pub const HEADER_SIZE: u64 = 24;

/// The format version written. gdb reads 7 and 8 alike; 8 only promises a fix of gold's indexes.
const VERSION: u32 = 7;

/// A compile unit: its offset in the output's `.debug_info` and its length, the unit header included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    pub offset: u64,
    pub length: u64,
}

/// A range of code addresses `[low, high)` of unit `unit` (its index in the unit list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub low: u64,
    pub high: u64,
    pub unit: u32,
}

/// A name, its `hash`, and the units that define it, each entry `unit | attributes << 24` (the attribute byte
/// of `.debug_gnu_pubnames`: the symbol's kind in bits 4-6, static in bit 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: &'a [u8],
    pub hash: u32,
    pub units: &'a [u32],
}

/// The GDB index attribute kinds (bits 4-6 of the attribute byte) and the static bit.
pub const KIND_TYPE: u8 = 1 << 4;
pub const KIND_VARIABLE: u8 = 2 << 4;
pub const KIND_FUNCTION: u8 = 3 << 4;
pub const STATIC: u8 = 1 << 7;

/// gdb's hash of a name in the symbol table (`mapped_index_string_hash` for versions 5 and later: case-folded):
/// `r = r * 67 + tolower(c) - 113` over the bytes. Four bytes a step, unrolled (`r * 67^4 + c0 * 67^3 + ...`), so
/// that the multiplications do not wait for one another: every occurrence of a name in every input is hashed.
pub fn hash(name: &[u8]) -> u32 {
    const P1: u32 = 67;
    const P2: u32 = 67 * 67;
    const P3: u32 = 67 * 67 * 67;
    const P4: u32 = P2.wrapping_mul(P2);
    // 113 * (67^3 + 67^2 + 67 + 1), taken once per step of four.
    const K4: u32 = 113u32.wrapping_mul(P3 + P2 + P1 + 1);
    let lower = |c: u8| c.to_ascii_lowercase() as u32;
    let mut chunks = name.chunks_exact(4);
    let mut r = 0u32;
    for c in &mut chunks {
        let mixed = (lower(c[0]).wrapping_mul(P3))
            .wrapping_add(lower(c[1]).wrapping_mul(P2))
            .wrapping_add(lower(c[2]).wrapping_mul(P1))
            .wrapping_add(lower(c[3]));
        r = r.wrapping_mul(P4).wrapping_add(mixed).wrapping_sub(K4);
    }
    chunks.remainder().iter().fold(r, |r, &c| {
        r.wrapping_mul(67).wrapping_add(lower(c)).wrapping_sub(113)
    })
}

/// The number of hash table slots for `n` names: a power of two at least 4/3 of them, so probes stay short.
fn slots(n: usize) -> usize {
    (n * 4 / 3 + 1).next_power_of_two()
}

/// Where the parts of the section start: the CU list, the (empty) type unit list, the address area, the hash
/// table of `nslots` slots, and the constant pool (every unit vector, then every name); and the section's size.
struct Offsets {
    cu_list: usize,
    types: usize,
    table: usize,
    nslots: usize,
    pool: usize,
    vectors_size: usize,
    size: usize,
}

impl Offsets {
    fn of(units: usize, areas: usize, symbols: &[Symbol<'_>]) -> Offsets {
        let nslots = slots(symbols.len());
        let cu_list = HEADER_SIZE as usize;
        let types = cu_list + 16 * units;
        let table = types + 20 * areas;
        let pool = table + 8 * nslots;
        let vectors_size: usize = symbols.iter().map(|s| 4 + 4 * s.units.len()).sum();
        let names_size: usize = symbols.iter().map(|s| s.name.len() + 1).sum();
        Offsets {
            cu_list,
            types,
            table,
            nslots,
            pool,
            vectors_size,
            size: pool + vectors_size + names_size,
        }
    }
}

/// The section's size.
pub fn size(units: usize, areas: usize, symbols: &[Symbol<'_>]) -> usize {
    Offsets::of(units, areas, symbols).size
}

/// Writes the section into `out`, `size` bytes (every byte of it: the output's may not be zero).
pub fn write(units: &[Unit], areas: &[Area], symbols: &[Symbol<'_>], out: &mut [u8]) {
    let Offsets {
        cu_list,
        types,
        table,
        nslots,
        pool,
        vectors_size,
        size,
    } = Offsets::of(units.len(), areas.len(), symbols);
    let out = &mut out[..size];
    let mut at = 0;
    // The address area follows the type unit list, which is empty.
    for v in [VERSION, cu_list as u32, types as u32, types as u32] {
        put(out, &mut at, &v.to_le_bytes());
    }
    put(out, &mut at, &(table as u32).to_le_bytes());
    put(out, &mut at, &(pool as u32).to_le_bytes());
    for u in units {
        put(out, &mut at, &u.offset.to_le_bytes());
        put(out, &mut at, &u.length.to_le_bytes());
    }
    for a in areas {
        put(out, &mut at, &a.low.to_le_bytes());
        put(out, &mut at, &a.high.to_le_bytes());
        put(out, &mut at, &a.unit.to_le_bytes());
    }
    // The pool: every unit vector, then every name; each symbol's two offsets go in its slot. The slots are
    // filled in symbol order (a name's slot depends on the names before it), the pool's bytes in parallel runs of
    // symbols: a large index is megabytes of them.
    let (head, pool_bytes) = out.split_at_mut(pool);
    head[table..].fill(0);
    let (vectors, names) = pool_bytes.split_at_mut(vectors_size);
    let mask = nslots - 1;
    let (mut vector_at, mut name_at) = (0usize, vectors_size);
    // Per run of symbols: its first symbol, and where its vectors and names start in the pool.
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        if i % POOL_RUN == 0 {
            runs.push((i, vector_at, name_at - vectors_size));
        }
        let mut k = s.hash as usize & mask;
        let step = (s.hash.wrapping_mul(17) as usize & mask) | 1;
        loop {
            let slot = table + 8 * k;
            if head[slot..slot + 8] == [0; 8] {
                let mut at = slot;
                put(head, &mut at, &(name_at as u32).to_le_bytes());
                put(head, &mut at, &(vector_at as u32).to_le_bytes());
                break;
            }
            k = (k + step) & mask;
        }
        vector_at += 4 + 4 * s.units.len();
        name_at += s.name.len() + 1;
    }
    runs.push((symbols.len(), vectors_size, names.len()));
    // Each run's share of the two regions, cut in order.
    let mut shares = Vec::with_capacity(runs.len());
    let (mut vrest, mut nrest) = (vectors, names);
    for w in runs.windows(2) {
        let (v, vr) = std::mem::take(&mut vrest).split_at_mut(w[1].1 - w[0].1);
        let (n, nr) = std::mem::take(&mut nrest).split_at_mut(w[1].2 - w[0].2);
        (vrest, nrest) = (vr, nr);
        shares.push((&symbols[w[0].0..w[1].0], v, n));
    }
    shares.into_par_iter().for_each(|(run, v, n)| {
        let (mut va, mut na) = (0, 0);
        for s in run {
            put(v, &mut va, &(s.units.len() as u32).to_le_bytes());
            for u in s.units {
                put(v, &mut va, &u.to_le_bytes());
            }
            put(n, &mut na, s.name);
            put(n, &mut na, &[0]);
        }
    });
}

/// Symbols per run of the pool's parallel fill.
const POOL_RUN: usize = 4096;

/// Writes `bytes` at `*at` and moves `at` past them.
fn put(out: &mut [u8], at: &mut usize, bytes: &[u8]) {
    out[*at..*at + bytes.len()].copy_from_slice(bytes);
    *at += bytes.len();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrolled_hash_is_the_bytewise_one() {
        let bytewise = |s: &[u8]| {
            s.iter().fold(0u32, |r, &c| {
                r.wrapping_mul(67)
                    .wrapping_add(c.to_ascii_lowercase() as u32)
                    .wrapping_sub(113)
            })
        };
        let long =
            b"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";
        for n in 0..long.len() {
            assert_eq!(hash(&long[..n]), bytewise(&long[..n]), "{n}");
        }
        assert_eq!(hash(b"\xff\x80Ab"), bytewise(b"\xff\x80Ab"));
    }

    #[test]
    fn hash_is_gdbs() {
        // r = r * 67 + tolower(c) - 113 over the bytes.
        assert_eq!(hash(b""), 0);
        assert_eq!(hash(b"a"), 97u32.wrapping_sub(113));
        assert_eq!(hash(b"main"), hash(b"MAIN"));
        let by_hand = [b'm', b'a', b'i', b'n'].iter().fold(0u32, |r, &c| {
            r.wrapping_mul(67).wrapping_add(c as u32).wrapping_sub(113)
        });
        assert_eq!(hash(b"main"), by_hand);
    }

    #[test]
    fn layout_of_a_small_index() {
        let units = [Unit {
            offset: 0,
            length: 0x40,
        }];
        let areas = [Area {
            low: 0x1000,
            high: 0x1010,
            unit: 0,
        }];
        let symbols = [Symbol {
            name: b"main",
            hash: hash(b"main"),
            units: &[(KIND_FUNCTION as u32) << 24],
        }];
        let mut b = vec![0xaa; size(units.len(), areas.len(), &symbols)];
        write(&units, &areas, &symbols, &mut b);
        let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(word(0), 7);
        assert_eq!(word(4), 24);
        assert_eq!(word(8), 40);
        assert_eq!(word(12), 40);
        assert_eq!(word(16), 60);
        // Two slots (one name), then the vector (count, entry) and the name.
        assert_eq!(word(20), 76);
        assert_eq!(
            &b[76..],
            &[1, 0, 0, 0, 0, 0, 0, 0x30, b'm', b'a', b'i', b'n', 0]
        );
        let slot = (hash(b"main") & 1) as usize;
        assert_eq!(word(60 + 8 * slot), 8);
        assert_eq!(word(64 + 8 * slot), 0);
    }
}
