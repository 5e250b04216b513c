//! A parallel, deterministic string interner used for global symbol names, COMDAT signatures and merged-section
//! pieces.
//!
//! Input: lists of pre-hashed names in priority (input) order. Output: an id for every element, ids dense in
//! `0..unique.len()`, with `unique[id]` the first occurrence. Names are split into shards by hash; each shard is
//! filled by one task walking the lists in order, so ids depend only on the input, never on thread timing.

use crate::parse::Name;
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

pub const SHARDS: usize = 64;

#[inline]
pub fn shard_of(hash: u64) -> usize {
    (hash as usize) & (SHARDS - 1)
}

/// A key whose hash was computed at parse time.
#[derive(Clone, Copy)]
pub struct Key(pub Name);

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}
impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.hash == other.0.hash && self.0.bytes == other.0.bytes
    }
}
impl Eq for Key {}

/// Reuses the precomputed hash. The shard already used the low bits, which are therefore equal for every key of
/// a map; hashbrown takes its bucket from the low bits and its 7-bit tag from the top ones, so both must come from
/// the other bits, mixed: a tag made of shard bits would match almost every probed key (a cache miss each).
#[derive(Default)]
pub struct PassThrough(u64);
impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("Key hashes with write_u64 only")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v >> 6).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<PassThrough>>;

pub struct Interned {
    /// `ids[list][i]` is the id of `lists[list][i]`.
    pub ids: Vec<Vec<u32>>,
    pub unique: Vec<Name>,
    shard_maps: Vec<KeyMap<u32>>,
    shard_base: Vec<u32>,
    /// Names added one by one after the parallel pass (`push`), with their ids.
    late: KeyMap<u32>,
}

impl Interned {
    pub fn lookup(&self, name: &[u8]) -> Option<u32> {
        self.lookup_name(Name::new(unsafe_static(name)))
    }
    /// The id of an already hashed name.
    pub fn lookup_name(&self, n: Name) -> Option<u32> {
        let s = shard_of(n.hash);
        self.shard_maps[s]
            .get(&Key(n))
            .map(|&local| self.shard_base[s] + local)
            .or_else(|| self.late.get(&Key(n)).copied())
    }
    /// The id of `n`, adding it (with the next free id) if it is new.
    pub fn push(&mut self, n: Name) -> u32 {
        if let Some(id) = self.lookup_name(n) {
            return id;
        }
        let id = self.unique.len() as u32;
        self.unique.push(n);
        self.late.insert(Key(n), id);
        id
    }
}

/// Lookups only borrow the name for the duration of the call; `Name` wants a `'static` slice, which the
/// lookup key never outlives.
fn unsafe_static(name: &[u8]) -> &'static [u8] {
    // SAFETY: the returned reference is only used inside `Interned::lookup` while `name` is borrowed.
    unsafe { std::slice::from_raw_parts(name.as_ptr(), name.len()) }
}

pub fn intern(lists: &[&[Name]]) -> Interned {
    // Bucket each list's elements by shard (counting sort), in parallel over lists.
    let buckets: Vec<(Vec<u32>, Vec<u32>)> = lists
        .par_iter()
        .map(|list| {
            let mut starts = vec![0u32; SHARDS + 1];
            for n in list.iter() {
                starts[shard_of(n.hash) + 1] += 1;
            }
            for s in 0..SHARDS {
                starts[s + 1] += starts[s];
            }
            let mut cursor = starts.clone();
            let mut order = vec![0u32; list.len()];
            for (i, n) in list.iter().enumerate() {
                let s = shard_of(n.hash);
                order[cursor[s] as usize] = i as u32;
                cursor[s] += 1;
            }
            (order, starts)
        })
        .collect();

    // Fill each shard in list order.
    let shards: Vec<(KeyMap<u32>, Vec<Name>, Vec<u32>)> = (0..SHARDS)
        .into_par_iter()
        .map(|s| {
            let count: usize = buckets
                .iter()
                .map(|(_, starts)| (starts[s + 1] - starts[s]) as usize)
                .sum();
            let mut map = KeyMap::with_capacity_and_hasher(count, Default::default());
            let mut names = Vec::with_capacity(count);
            let mut local_ids = Vec::with_capacity(count);
            for (list, (order, starts)) in lists.iter().zip(&buckets) {
                let run = &order[starts[s] as usize..starts[s + 1] as usize];
                for (k, &i) in run.iter().enumerate() {
                    // The names' bytes lie all over the inputs; fetching a few ahead hides part of the latency
                    // of the byte comparison a duplicate needs.
                    if let Some(&ahead) = run.get(k + 8) {
                        crate::elf::prefetch(list[ahead as usize].bytes.as_ptr());
                    }
                    let n = list[i as usize];
                    let id = *map.entry(Key(n)).or_insert_with(|| {
                        names.push(n);
                        names.len() as u32 - 1
                    });
                    local_ids.push(id);
                }
            }
            (map, names, local_ids)
        })
        .collect();

    let mut shard_base = Vec::with_capacity(SHARDS);
    let mut total = 0u32;
    for (_, names, _) in &shards {
        shard_base.push(total);
        total += names.len() as u32;
    }

    // Where each list's bucket starts inside each shard's id sequence.
    let mut list_offsets = vec![[0u32; SHARDS]; lists.len()];
    let mut running = [0u32; SHARDS];
    for (l, (_, starts)) in buckets.iter().enumerate() {
        list_offsets[l] = running;
        for s in 0..SHARDS {
            running[s] += starts[s + 1] - starts[s];
        }
    }

    let ids: Vec<Vec<u32>> = buckets
        .par_iter()
        .zip(list_offsets.par_iter())
        .map(|((order, starts), offs)| {
            let mut ids = vec![0u32; order.len()];
            for s in 0..SHARDS {
                let local = &shards[s].2[offs[s] as usize..];
                for (k, &i) in order[starts[s] as usize..starts[s + 1] as usize]
                    .iter()
                    .enumerate()
                {
                    ids[i as usize] = shard_base[s] + local[k];
                }
            }
            ids
        })
        .collect();

    let mut unique = Vec::with_capacity(total as usize);
    let mut shard_maps = Vec::with_capacity(SHARDS);
    for (map, names, _) in shards {
        unique.extend(names);
        shard_maps.push(map);
    }
    Interned {
        ids,
        unique,
        shard_maps,
        shard_base,
        late: KeyMap::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_shared() {
        let a = [Name::new(b"foo"), Name::new(b"bar"), Name::new(b"foo")];
        let b = [Name::new(b"baz"), Name::new(b"bar")];
        let r = intern(&[&a, &b]);
        assert_eq!(r.unique.len(), 3);
        assert_eq!(r.ids[0][0], r.ids[0][2]);
        assert_eq!(r.ids[0][1], r.ids[1][1]);
        assert_ne!(r.ids[1][0], r.ids[0][0]);
        for (l, list) in [&a[..], &b[..]].iter().enumerate() {
            for (i, n) in list.iter().enumerate() {
                assert_eq!(r.unique[r.ids[l][i] as usize].bytes, n.bytes);
            }
        }
        assert_eq!(r.lookup(b"baz"), Some(r.ids[1][0]));
        assert_eq!(r.lookup(b"nope"), None);
    }
}
