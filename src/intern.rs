//! A parallel, deterministic string interner used for global symbol names and COMDAT signatures; merged-section
//! pieces (`merge.rs`), split straight into shard order, use its shard fill (`fill_shard`) alone.
//!
//! Input: lists of pre-hashed names in priority (input) order. Output: an id for every element, ids dense in
//! `0..unique.len()`, with `unique[id]` the first occurrence. Names are split into shards by hash; each shard is
//! filled by one task walking the lists in order, so ids depend only on the input, never on thread timing.

use crate::index::SymId;
use crate::names::Name;
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
type HashOnlyMap = HashMap<u64, u32, BuildHasherDefault<PassThrough>>;

/// One shard's names by id. Usually no two different names of a shard share a 64-bit hash, and the hash alone
/// finds a name's id (a lookup still compares the bytes); a shard where two do keeps a map that compares bytes.
pub(crate) enum ShardMap {
    ByHash(HashOnlyMap),
    Exact(KeyMap<u32>),
}

pub struct Interned {
    /// `ids[list][i]` is the id of `lists[list][i]`.
    pub ids: Vec<Vec<SymId>>,
    pub unique: Vec<Name>,
    shard_maps: Vec<ShardMap>,
    shard_base: Vec<u32>,
    /// Names added one by one after the parallel pass (`push`), with their ids.
    late: KeyMap<u32>,
}

impl Interned {
    pub fn lookup(&self, name: &[u8]) -> Option<SymId> {
        self.lookup_name(Name::new(unsafe_static(name)))
    }
    /// The id of an already hashed name.
    pub fn lookup_name(&self, n: Name) -> Option<SymId> {
        let s = shard_of(n.hash);
        let local = match &self.shard_maps[s] {
            ShardMap::ByHash(m) => m
                .get(&n.hash)
                .copied()
                .filter(|&l| self.unique[(self.shard_base[s] + l) as usize].bytes == n.bytes),
            ShardMap::Exact(m) => m.get(&Key(n)).copied(),
        };
        local
            .map(|l| SymId(self.shard_base[s] + l))
            .or_else(|| self.late.get(&Key(n)).map(|&id| SymId(id)))
    }
    /// The id of `n`, adding it (with the next free id) if it is new.
    pub fn push(&mut self, n: Name) -> SymId {
        if let Some(id) = self.lookup_name(n) {
            return id;
        }
        let id = self.unique.len() as u32;
        self.unique.push(n);
        self.late.insert(Key(n), id);
        SymId(id)
    }
}

/// Lookups only borrow the name for the duration of the call; `Name` wants a `'static` slice, which the
/// lookup key never outlives.
fn unsafe_static(name: &[u8]) -> &'static [u8] {
    // SAFETY: the returned reference is only used inside `Interned::lookup` while `name` is borrowed.
    unsafe { std::slice::from_raw_parts(name.as_ptr(), name.len()) }
}

/// Consecutive lists bucketed together hold at least this many names: the shard pass walks every (chunk, shard)
/// pair, and with one chunk per list, thousands of small lists (an object file's globals each) made that walk,
/// not the names, the cost.
const CHUNK_NAMES: usize = 4096;

/// A run of consecutive lists, bucketed by shard.
struct Chunk {
    /// The chunk's lists.
    lists: std::ops::Range<usize>,
    /// The chunk's names sorted by shard (stable), and each one's position in the chunk.
    names: Vec<Name>,
    pos: Vec<u32>,
    /// Where each shard's names start in `names` (`SHARDS + 1` entries).
    starts: Vec<u32>,
    len: usize,
}

pub fn intern(lists: &[&[Name]]) -> Interned {
    // Chunks of consecutive lists, each bucketed by shard (counting sort), in parallel.
    let mut bounds = vec![0usize];
    let mut run = 0usize;
    for (l, list) in lists.iter().enumerate() {
        run += list.len();
        if run >= CHUNK_NAMES {
            bounds.push(l + 1);
            run = 0;
        }
    }
    if *bounds.last().unwrap_or(&0) != lists.len() {
        bounds.push(lists.len());
    }
    let chunks: Vec<Chunk> = bounds
        .par_windows(2)
        .map(|w| {
            let part = &lists[w[0]..w[1]];
            let len: usize = part.iter().map(|l| l.len()).sum();
            let mut starts = vec![0u32; SHARDS + 1];
            for n in part.iter().flat_map(|l| l.iter()) {
                starts[shard_of(n.hash) + 1] += 1;
            }
            for s in 0..SHARDS {
                starts[s + 1] += starts[s];
            }
            let mut cursor = starts.clone();
            let mut names = vec![Name::new(b""); len];
            let mut pos = vec![0u32; len];
            for (k, n) in part.iter().flat_map(|l| l.iter()).enumerate() {
                let s = shard_of(n.hash);
                names[cursor[s] as usize] = *n;
                pos[cursor[s] as usize] = k as u32;
                cursor[s] += 1;
            }
            Chunk {
                lists: w[0]..w[1],
                names,
                pos,
                starts,
                len,
            }
        })
        .collect();

    // Fill each shard in list order: ids by hash first, then every name checked against the first name of its id
    // (names come in order, so the bytes of both can be prefetched a few names ahead, which a byte comparison
    // inside the map's probe cannot do: the duplicates' comparisons were most of this pass). A shard where two
    // different names share a hash is filled again comparing bytes.
    let shards: Vec<(ShardMap, Vec<Name>, Vec<u32>)> = (0..SHARDS)
        .into_par_iter()
        .map(|s| {
            let count: usize = chunks
                .iter()
                .map(|c| (c.starts[s + 1] - c.starts[s]) as usize)
                .sum();
            let run = || {
                chunks
                    .iter()
                    .flat_map(move |c| &c.names[c.starts[s] as usize..c.starts[s + 1] as usize])
            };
            fill_shard(run, count)
        })
        .collect();

    let mut shard_base = Vec::with_capacity(SHARDS);
    let mut total = 0u32;
    for (_, names, _) in &shards {
        shard_base.push(total);
        total += names.len() as u32;
    }

    // Where each chunk's run starts inside each shard's id sequence.
    let mut chunk_offsets = vec![[0u32; SHARDS]; chunks.len()];
    let mut running = [0u32; SHARDS];
    for (c, chunk) in chunks.iter().enumerate() {
        chunk_offsets[c] = running;
        for (r, w) in running.iter_mut().zip(chunk.starts.windows(2)) {
            *r += w[1] - w[0];
        }
    }

    // Ids back in each chunk's order, then split into its lists.
    let per_chunk: Vec<Vec<Vec<SymId>>> = chunks
        .par_iter()
        .zip(chunk_offsets.par_iter())
        .map(|(c, offs)| {
            let mut ids = vec![SymId(0); c.len];
            for s in 0..SHARDS {
                let local = &shards[s].2[offs[s] as usize..];
                let (a, b) = (c.starts[s] as usize, c.starts[s + 1] as usize);
                for (k, &p) in c.pos[a..b].iter().enumerate() {
                    ids[p as usize] = SymId(shard_base[s] + local[k]);
                }
            }
            let mut out = Vec::new();
            let mut rest = &ids[..];
            for list in &lists[c.lists.clone()] {
                let (head, tail) = rest.split_at(list.len());
                out.push(head.to_vec());
                rest = tail;
            }
            out
        })
        .collect();
    let ids: Vec<Vec<SymId>> = per_chunk.into_iter().flatten().collect();

    // Every shard's distinct names one after the other, copied in parallel (a serial copy of clang-so's names was
    // measurable, with the other cores idle).
    let mut unique: Vec<Name> = Vec::with_capacity(total as usize);
    {
        let mut rest = &mut unique.spare_capacity_mut()[..total as usize];
        let mut outs = Vec::with_capacity(SHARDS);
        for (_, names, _) in &shards {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(names.len());
            outs.push(head);
            rest = tail;
        }
        shards
            .par_iter()
            .zip(outs)
            .for_each(|((_, names, _), out)| {
                for (o, &n) in out.iter_mut().zip(names) {
                    o.write(n);
                }
            });
    }
    // SAFETY: the shards' lengths sum to `total`, and each shard wrote its whole range above.
    unsafe { unique.set_len(total as usize) };
    let shard_maps: Vec<ShardMap> = shards.into_iter().map(|(map, ..)| map).collect();
    Interned {
        ids,
        unique,
        shard_maps,
        shard_base,
        late: KeyMap::default(),
    }
}

/// One shard's names in order (`run` walks them, as often as needed; `count` of them), each given the shard-local
/// id of its first occurrence: the shard's map, its distinct names by local id, and the local id of every name.
pub(crate) fn fill_shard<'a, I: Iterator<Item = &'a Name>>(
    run: impl Fn() -> I,
    count: usize,
) -> (ShardMap, Vec<Name>, Vec<u32>) {
    let mut by_hash = HashOnlyMap::with_capacity_and_hasher(count, Default::default());
    // Presized for half the names being distinct (about what clang-tool's global names and rg-release's
    // `.debug_str` pieces have), so the list rarely grows, and growing it was a measurable part of interning.
    let mut names: Vec<Name> = Vec::with_capacity(count / 2);
    let mut local_ids = Vec::with_capacity(count);
    for &n in run() {
        let id = *by_hash.entry(n.hash).or_insert_with(|| {
            names.push(n);
            names.len() as u32 - 1
        });
        local_ids.push(id);
    }
    // The pair compared 16 names ahead is loaded at both ends (a name of 2 or 3 cache lines, like most of
    // `.debug_str`'s, missed again at its last line): faster, for debug strings and global names alike, than the
    // first line only, 8 names ahead.
    const AHEAD: usize = 16;
    let mut ahead = run().zip(&local_ids).skip(AHEAD);
    let load = |b: &[u8]| {
        crate::elf::prefetch(b.as_ptr());
        crate::elf::prefetch(b.as_ptr().wrapping_add(b.len().saturating_sub(1)));
    };
    // A name that got a new id is that id's first name: the same slice, nothing to read (comparing its
    // bytes with themselves was a cache miss per unique name).
    let same = |a: &Name, b: &Name| std::ptr::eq(a.bytes, b.bytes);
    let distinct = run().zip(&local_ids).all(|(n, &id)| {
        if let Some((a, &aid)) = ahead.next() {
            let first = &names[aid as usize];
            if !same(a, first) {
                load(a.bytes);
                load(first.bytes);
            }
        }
        let first = &names[id as usize];
        same(n, first) || first.bytes == n.bytes
    });
    if distinct {
        return (ShardMap::ByHash(by_hash), names, local_ids);
    }
    let mut map = KeyMap::with_capacity_and_hasher(count, Default::default());
    names.clear();
    local_ids.clear();
    for &n in run() {
        let id = *map.entry(Key(n)).or_insert_with(|| {
            names.push(n);
            names.len() as u32 - 1
        });
        local_ids.push(id);
    }
    (ShardMap::Exact(map), names, local_ids)
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
                assert_eq!(r.unique[r.ids[l][i].index()].bytes, n.bytes);
            }
        }
        assert_eq!(r.lookup(b"baz"), Some(r.ids[1][0]));
        assert_eq!(r.lookup(b"nope"), None);
    }

    #[test]
    fn equal_hashes_of_different_names_stay_apart() {
        // Same 64-bit hash, different bytes: the shard falls back to comparing bytes.
        let n = |b: &'static [u8], hash| Name { hash, bytes: b };
        let a = [n(b"x", 7), n(b"y", 7), n(b"x", 7)];
        let b = [n(b"y", 7), n(b"z", 9)];
        let r = intern(&[&a, &b]);
        assert_eq!(r.unique.len(), 3);
        assert_eq!(r.ids[0][0], r.ids[0][2]);
        assert_ne!(r.ids[0][0], r.ids[0][1]);
        assert_eq!(r.ids[0][1], r.ids[1][0]);
        assert_eq!(r.lookup_name(n(b"y", 7)), Some(r.ids[0][1]));
        // A shard whose names all differ in hash finds them by hash, and still checks the bytes.
        assert_eq!(r.lookup_name(n(b"z", 9)), Some(r.ids[1][1]));
        assert_eq!(r.lookup_name(n(b"w", 9)), None);
    }

    #[test]
    fn many_small_lists_keep_their_order() {
        // More names than one chunk, spread over many lists, some empty: ids follow first occurrence.
        let words: Vec<&'static [u8]> = (0..10000)
            .map(|i| {
                &*Box::leak(
                    format!("sym{}", i % 1700)
                        .into_boxed_str()
                        .into_boxed_bytes(),
                )
            })
            .collect();
        let names: Vec<Name> = words.iter().map(|w| Name::new(w)).collect();
        let lists: Vec<&[Name]> = names.chunks(3).flat_map(|c| [c, &[][..]]).collect();
        let r = intern(&lists);
        assert_eq!(r.unique.len(), 1700);
        let flat: Vec<SymId> = r.ids.iter().flatten().copied().collect();
        assert_eq!(flat.len(), 10000);
        for (k, &id) in flat.iter().enumerate() {
            assert_eq!(r.unique[id.index()].bytes, words[k]);
            assert_eq!(id, flat[k % 1700]);
        }
    }
}
