//! `SHF_MERGE` sections, part of pass 8 (layout): every live merge section is split into pieces (strings, or
//! fixed-size constants), and equal pieces of one group share one copy. A group is an output section's merge
//! sections of one entry size, and for strings of one alignment too; constants of any alignment share a group
//! aligned to the most aligned of them, so that an `.rodata.cst16` of alignment 1 and one of 16 keep one copy of
//! each constant (as lld does; GNU ld keeps a group per alignment), which also lets ICF fold functions that load
//! the same constant from either.
//!
//! Three parallel passes, each over data laid out for the next:
//! 1. Split, per chunk of consecutive sections of a group: each piece is hashed, and the chunk's pieces are sorted
//!    by shard (the low hash bits; a counting sort while the chunk is in cache). Each piece's input offset and
//!    shard are kept in input order.
//! 2. Deduplicate, per (group, shard): the shard's runs of all the group's chunks, walked in input order, give
//!    each piece the shard-local id of its first occurrence (`intern::fill_shard`), each distinct piece its
//!    offset from the shard's start, and so each piece its output offset from there. A group's output holds its
//!    shards one after the other, each in first-occurrence order, so the layout depends on the input only.
//! 3. Map, per chunk: each section walks its pieces in order with one cursor per shard into that shard's
//!    offsets.
//!
//! This replaced a split into per-section lists followed by the general interner (`intern::intern`), which copied
//! every piece once more to sort it by shard and scattered the ids back in another pass, with the same output;
//! the merge got faster and took less CPU time. Later, pass 2 gave each piece its offset instead of its id, and
//! the shards stayed apart instead of being copied into one list per group: pass 3 no longer looks every piece up
//! in a group-wide table, and pass 1 keeps each piece's hash instead of a second copy of the piece, which made
//! the merge faster again, on one thread and on several.

use crate::diag::{Errors, Result};
use crate::elf::align_up;
use crate::index::{FileId, OsecId, SecIdx};
use crate::intern::{SHARDS, fill_shard, shard_of};
use crate::names::{Name, hash_name};
use crate::parse::ObjectFile;
use crate::resolve::Resolved;
use object::elf as E;
use rayon::prelude::*;

/// A deduplicated `SHF_MERGE` group: all input pieces with the same output section and entry size (and alignment,
/// for strings); `align` is the largest of its sections'.
pub struct MergeGroup {
    pub osec: OsecId,
    pub align: u64,
    pub entsize: u64,
    /// The distinct pieces, by hash shard (`intern::SHARDS` of them, one after the other in the output).
    pub shards: Vec<MergeShard>,
    pub size: u64,
    /// The pieces' output offsets (`build_merges`' `piece_outs`) are from the group's start, not their shard's: a
    /// string that ends another is not laid out, and points into that one, in another shard (`share_tails`).
    pub tails_shared: bool,
}

/// One hash shard of a merge group: where it starts in the group, and its distinct pieces with their offsets from
/// that start, in first-occurrence order.
pub struct MergeShard {
    pub start: u64,
    pub pieces: Vec<Name>,
    pub offsets: Vec<u32>,
}

/// One piece of an input merge section: its offset in the input and in the merge group.
#[derive(Clone, Copy)]
pub struct PieceMap {
    pub in_off: u64,
    pub out_off: u64,
}

/// The pieces of one input merge section, with a block index for lookups by input offset: `blocks[b]` is the
/// last piece starting at or before byte `b * PIECE_BLOCK`, so a lookup scans a piece or two instead of a binary
/// search (debug info makes millions of them, in no useful order).
#[derive(Clone, Default)]
pub struct PieceTable {
    pub maps: Vec<PieceMap>,
    pub blocks: Vec<u32>,
}

pub const PIECE_BLOCK: u64 = 64;

impl PieceTable {
    pub fn new(maps: Vec<PieceMap>, size: u64) -> PieceTable {
        let nblocks = size.div_ceil(PIECE_BLOCK) as usize;
        let mut blocks = Vec::with_capacity(nblocks);
        let mut k = 0usize;
        for b in 0..nblocks as u64 {
            while k + 1 < maps.len() && maps[k + 1].in_off <= b * PIECE_BLOCK {
                k += 1;
            }
            blocks.push(k as u32);
        }
        PieceTable { maps, blocks }
    }

    /// The index of the piece holding input offset `off`.
    #[inline]
    pub fn find(&self, off: u64) -> Option<usize> {
        let mut k = *self.blocks.get((off / PIECE_BLOCK) as usize)? as usize;
        if self.maps.get(k)?.in_off > off {
            return None;
        }
        while k + 1 < self.maps.len() && self.maps[k + 1].in_off <= off {
            k += 1;
        }
        Some(k)
    }
}

/// The groups, each file's merge sections as (section, group) by slot, and each slot's piece table.
pub type MergeResult = (
    Vec<MergeGroup>,
    Vec<Vec<(SecIdx, u32)>>,
    Vec<Vec<PieceTable>>,
);

/// A chunk holds consecutive sections of one group until it has this many bytes: enough chunks for the threads
/// to share a big group (rg-debug's `.debug_str`, spread over many sections), few enough that the per-chunk
/// buckets stay cheap.
const CHUNK_BYTES: u64 = 256 << 10;

/// What pass 1 leaves for one chunk.
struct Chunk {
    group: usize,
    /// The chunk's sections, as a range of the group's members.
    sections: std::ops::Range<usize>,
    /// Where each section's pieces start in `offsets` and `shards` (one more entry than sections).
    firsts: Vec<usize>,
    /// Each piece's input offset and shard, in input order.
    offsets: Vec<u64>,
    shards: Vec<u8>,
    /// The pieces sorted by shard (stably), and where each shard's run starts (`SHARDS + 1` entries).
    names: Vec<Name>,
    starts: Vec<u32>,
}

/// Builds the merge groups from each file's live merge sections (`live_merge`, in section order, listed by the
/// output-section pass) and each section's output section (`sec_osec`); with `share_tails`, GNU ld's string tail
/// merging (`share_tails`).
pub fn build_merges(
    res: &Resolved,
    live_merge: &[Vec<SecIdx>],
    sec_osec: &[Vec<OsecId>],
    share_tails: bool,
) -> Result<MergeResult> {
    let inputs = MergeInputs::new(res, live_merge, sec_osec);
    let spans = inputs.chunk_spans();

    let t = crate::timing::span("split merge pieces");
    let chunks = split_chunks(&inputs, spans)?;
    drop(t);

    let _t = crate::timing::span("deduplicate merge pieces");
    let group_chunks = chunks_of_groups(&chunks, inputs.keys.len());
    let t = crate::timing::span("hash pieces");
    let shards = deduplicate_shards(&inputs, &chunks, &group_chunks);
    drop(t);
    let t = crate::timing::span("piece offsets");
    let (mut groups, mut piece_outs) = place_shards(&inputs, shards)?;
    if share_tails {
        let _t = crate::timing::span("share string tails");
        self::share_tails(&inputs, &mut groups, &mut piece_outs);
    }
    let cursors = shard_cursors(&chunks, &group_chunks);
    drop(t);
    let _t = crate::timing::span("piece tables");
    let piece_maps = piece_tables(&inputs, &chunks, cursors, &groups, &piece_outs);
    Ok((groups, inputs.merge_secs, piece_maps))
}

/// A group's key: (output section, entsize, strings, the alignment of strings or 0 for constants).
type Key = (OsecId, u64, bool, u64);

/// The merge groups' keys and members.
struct MergeInputs<'a> {
    objects: &'a [ObjectFile],
    /// Per group: its key, in first-seen input order.
    keys: Vec<Key>,
    /// Per group: the largest alignment of its sections, which every piece gets.
    aligns: Vec<u64>,
    /// Per file: its merge sections as (section, group), by slot.
    merge_secs: Vec<Vec<(SecIdx, u32)>>,
    /// Per group: its sections in input order as (file, slot).
    members: Vec<Vec<(FileId, usize)>>,
}

impl<'a> MergeInputs<'a> {
    /// Numbers the groups and lists their members.
    fn new(
        res: &'a Resolved,
        live_merge: &[Vec<SecIdx>],
        sec_osec: &[Vec<OsecId>],
    ) -> MergeInputs<'a> {
        let objects = &res.objects;
        // Group keys are numbered in first-seen input order. Each file's keys are found in parallel; only the
        // numbering is serial.
        let found: Vec<Vec<(SecIdx, Key)>> = res.runs.map(|f| {
            let o = &objects[f.index()];
            live_merge[f.index()]
                .iter()
                .filter_map(|&s| {
                    let osec = sec_osec[f.index()][s.index()];
                    if osec.is_none() {
                        return None;
                    }
                    let sec = o.sec(s);
                    let strings = sec.flags() & E::SHF_STRINGS as u64 != 0;
                    let align = if strings { sec.align() } else { 0 };
                    Some((s, (osec, sec.entsize(), strings, align)))
                })
                .collect()
        });
        // Each file's merge sections get slots in section order: piece tables are kept for those only (a table per
        // input section took much memory on a link of many sections, such as clang-so).
        let mut keys: Vec<Key> = Vec::new();
        let mut merge_secs: Vec<Vec<(SecIdx, u32)>> = Vec::with_capacity(objects.len());
        for list in &found {
            let mut m = Vec::with_capacity(list.len());
            for &(s, key) in list {
                let k = match keys.iter().position(|k| *k == key) {
                    Some(k) => k,
                    None => {
                        keys.push(key);
                        keys.len() - 1
                    }
                };
                m.push((s, k as u32));
            }
            merge_secs.push(m);
        }
        drop(found);
        let mut members: Vec<Vec<(FileId, usize)>> = vec![Vec::new(); keys.len()];
        let mut aligns = vec![1u64; keys.len()];
        for (f, m) in merge_secs.iter().enumerate() {
            for (slot, &(s, k)) in m.iter().enumerate() {
                members[k as usize].push((FileId::new(f), slot));
                let a = &mut aligns[k as usize];
                *a = (*a).max(objects[f].sec(s).align());
            }
        }
        MergeInputs {
            objects,
            keys,
            aligns,
            merge_secs,
            members,
        }
    }

    /// The input section of merge slot `slot` of file `f`.
    #[inline]
    fn section(&self, f: FileId, slot: usize) -> SecIdx {
        self.merge_secs[f.index()][slot].0
    }

    /// Each group's members cut into chunks of about `CHUNK_BYTES`: (group, members, their bytes) per chunk.
    fn chunk_spans(&self) -> Vec<(usize, std::ops::Range<usize>, u64)> {
        let mut spans = Vec::new();
        for (k, list) in self.members.iter().enumerate() {
            let (mut start, mut bytes) = (0, 0u64);
            for (i, &(f, slot)) in list.iter().enumerate() {
                bytes += self.objects[f.index()].sec(self.section(f, slot)).size();
                if bytes >= CHUNK_BYTES || i + 1 == list.len() {
                    spans.push((k, start..i + 1, bytes));
                    (start, bytes) = (i + 1, 0);
                }
            }
        }
        spans
    }
}

/// Pass 1: splits each span's sections into pieces.
fn split_chunks(
    inputs: &MergeInputs,
    spans: Vec<(usize, std::ops::Range<usize>, u64)>,
) -> Result<Vec<Chunk>> {
    let chunks: Vec<std::result::Result<Chunk, String>> = spans
        .into_par_iter()
        // A task per span (spans are sized to be one): split by count from a pass started on a worker, the
        // spans went in a few large runs.
        .with_max_len(1)
        .map(|(k, range, bytes)| split_chunk(inputs, k, range, bytes))
        .collect();
    crate::diag::collect(chunks.into_iter().map(|r| r.map_err(Errors::one)))
}

/// Splits and hashes the pieces of members `range` of group `k` (`bytes` in all) in order, then sorts them by
/// shard (a counting sort, while the chunk is in cache).
fn split_chunk(
    inputs: &MergeInputs,
    k: usize,
    range: std::ops::Range<usize>,
    bytes: u64,
) -> std::result::Result<Chunk, String> {
    let objects = inputs.objects;
    let list = &inputs.members[k][range.clone()];
    let mut firsts = Vec::with_capacity(range.len() + 1);
    // Presized for pieces of 32 bytes on average (rg-debug's `.debug_str`: 60; constants: 4 to 16).
    let guess = (bytes / 32) as usize;
    let mut offsets = Vec::with_capacity(guess);
    let mut shards = Vec::with_capacity(guess);
    let mut hashes = Vec::with_capacity(guess);
    let mut counts = [0u32; SHARDS];
    for &(f, slot) in list {
        firsts.push(offsets.len());
        split_section(
            &objects[f.index()],
            inputs.section(f, slot),
            |off, bytes| {
                let hash = hash_name(bytes);
                let shard = shard_of(hash);
                counts[shard] += 1;
                offsets.push(off as u64);
                shards.push(shard as u8);
                hashes.push(hash);
            },
        )?;
    }
    firsts.push(offsets.len());
    let mut starts = vec![0u32; SHARDS + 1];
    for s in 0..SHARDS {
        starts[s + 1] = starts[s] + counts[s];
    }
    // The pieces' bytes again from their offsets: a section's pieces cover it end to end.
    let mut cursor = starts.clone();
    let mut names = vec![Name::new(b""); offsets.len()];
    for (&(f, slot), w) in list.iter().zip(firsts.windows(2)) {
        let d = objects[f.index()].sec(inputs.section(f, slot)).data();
        for i in w[0]..w[1] {
            let end = if i + 1 < w[1] {
                offsets[i + 1]
            } else {
                d.len() as u64
            };
            let s = shards[i] as usize;
            names[cursor[s] as usize] = Name {
                hash: hashes[i],
                bytes: &d[offsets[i] as usize..end as usize],
            };
            cursor[s] += 1;
        }
    }
    Ok(Chunk {
        group: k,
        sections: range,
        firsts,
        offsets,
        shards,
        names,
        starts,
    })
}

/// Each group's chunks, in input order (chunks are numbered group by group).
fn chunks_of_groups(chunks: &[Chunk], groups: usize) -> Vec<std::ops::Range<usize>> {
    let mut group_chunks: Vec<std::ops::Range<usize>> = vec![0..0; groups];
    for (c, chunk) in chunks.iter().enumerate() {
        let r = &mut group_chunks[chunk.group];
        if r.end == 0 {
            r.start = c;
        }
        r.end = c + 1;
    }
    group_chunks
}

/// Pass 2, per (group, shard): the distinct pieces, their offsets from the shard's start (aligned as if the shard
/// started at 0), every piece's output offset from the shard's start (in input order), and the shard's size.
/// One task per shard: their sizes differ by orders of magnitude (a big group's shards, a tiny group's), and
/// rayon's default splitting left one thread with most of the big ones, so the pass took longer for the same CPU
/// time.
fn deduplicate_shards(
    inputs: &MergeInputs,
    chunks: &[Chunk],
    group_chunks: &[std::ops::Range<usize>],
) -> Vec<(MergeShard, Vec<u32>, u64)> {
    (0..inputs.keys.len() * SHARDS)
        .into_par_iter()
        .with_max_len(1)
        .map(|gs| {
            let (k, s) = (gs / SHARDS, gs % SHARDS);
            deduplicate_shard(&chunks[group_chunks[k].clone()], s, inputs.aligns[k])
        })
        .collect()
}

/// Shard `k` of the group made of `own` chunks, aligned to `align`. Every piece's output offset is looked up here,
/// while the shard's offsets are in cache.
fn deduplicate_shard(own: &[Chunk], k: usize, align: u64) -> (MergeShard, Vec<u32>, u64) {
    let count = own
        .iter()
        .map(|c| (c.starts[k + 1] - c.starts[k]) as usize)
        .sum();
    let run = || {
        own.iter()
            .flat_map(move |c| &c.names[c.starts[k] as usize..c.starts[k + 1] as usize])
    };
    let (_, pieces, mut ids) = fill_shard(run, count);
    let mut offsets = Vec::with_capacity(pieces.len());
    let mut size = 0u64;
    for p in &pieces {
        size = align_up(size, align);
        offsets.push(size as u32);
        size += p.bytes.len() as u64;
    }
    for id in &mut ids {
        *id = offsets[*id as usize];
    }
    let shard = MergeShard {
        start: 0,
        pieces,
        offsets,
    };
    (shard, ids, size)
}

/// Each group's shards one after the other, each starting aligned: the offsets a serial walk over the distinct
/// pieces would give. Returns the groups and each (group, shard)'s pieces' output offsets from its start.
fn place_shards(
    inputs: &MergeInputs,
    shards: Vec<(MergeShard, Vec<u32>, u64)>,
) -> Result<(Vec<MergeGroup>, Vec<Vec<u32>>)> {
    let objects = inputs.objects;
    let mut groups: Vec<MergeGroup> = inputs
        .keys
        .iter()
        .zip(&inputs.aligns)
        .map(|(&(osec, entsize, _, _), &align)| MergeGroup {
            osec,
            align,
            entsize,
            shards: Vec::with_capacity(SHARDS),
            size: 0,
            tails_shared: false,
        })
        .collect();
    let mut piece_outs: Vec<Vec<u32>> = Vec::with_capacity(shards.len());
    for (gs, (mut shard, outs, size)) in shards.into_iter().enumerate() {
        let k = gs / SHARDS;
        // Offsets inside a shard are 32-bit (those above were cut, and are refused here): a shard holds 1/64 of
        // the group's distinct pieces, so only a group of hundreds of GiB could reach this.
        if size > u32::MAX as u64 {
            let (f, slot) = inputs.members[k][0];
            return Err(Errors::one(format!(
                "{}:({}): too much data to merge in this section's group",
                objects[f.index()].name,
                objects[f.index()].section_name(inputs.section(f, slot).0)
            )));
        }
        let g = &mut groups[k];
        shard.start = align_up(g.size, g.align);
        if !shard.pieces.is_empty() {
            g.size = shard.start + size;
        }
        g.shards.push(shard);
        piece_outs.push(outs);
    }
    Ok((groups, piece_outs))
}

/// GNU ld's string tail merging, for the strings a program loads (`.rodata.str*`): a string that ends another
/// (`"ello"` and `"hello"`, each with its NUL) is not laid out, and its pieces point into the longer one. Done under
/// a `SECTIONS` script (firmware and kernels, whose images GNU ld's layout must fit) and at `-O2` (lld's option for
/// it); elsewhere rivet, as lld and mold, leaves it out: on clang-so's strings it cost 30 ms, 4% of the link. GNU ld also shares the tails of debug strings; rivet does not, for a file the program never loads.
///
/// Sorting the group's distinct strings by their reversed bytes puts the strings that end a string right before it,
/// longest last; each string then takes the place of the longest one it ends. The kept strings stay in their shards
/// in their order, and every piece's offset becomes one from the group's start.
fn share_tails(inputs: &MergeInputs, groups: &mut [MergeGroup], piece_outs: &mut [Vec<u32>]) {
    for (k, g) in groups.iter_mut().enumerate() {
        let (_, entsize, strings, _) = inputs.keys[k];
        let (f, slot) = inputs.members[k][0];
        let alloc = inputs.objects[f.index()]
            .sec(inputs.section(f, slot))
            .is_alloc();
        if !strings || !alloc || g.size > u32::MAX as u64 {
            continue;
        }
        // A string ends another where it starts on a character that keeps the group's alignment (as in GNU ld:
        // `.rodata.str1.16`'s strings share only tails 16, 32… bytes into a string).
        let step = g.align.max(entsize);
        share_group_tails(g, step, &mut piece_outs[k * SHARDS..(k + 1) * SHARDS]);
    }
}

fn share_group_tails(g: &mut MergeGroup, step: u64, outs: &mut [Vec<u32>]) {
    // Every distinct string as (its last 16 bytes reversed, its length, its number): the key orders almost all of
    // them and tells most suffixes apart without reading the strings, which lie all over the inputs.
    let firsts: Vec<u32> = (g.shards.iter())
        .scan(0u32, |n, sh| {
            let first = *n;
            *n += sh.pieces.len() as u32;
            Some(first)
        })
        .collect();
    let piece = |n: u32| {
        let s = firsts.partition_point(|&f| f <= n) - 1;
        &g.shards[s].pieces[(n - firsts[s]) as usize]
    };
    let tail_key = |b: &[u8]| {
        let mut k = [0u8; 16];
        for (d, s) in k.iter_mut().zip(b.iter().rev()) {
            *d = *s;
        }
        u128::from_be_bytes(k)
    };
    let mut all: Vec<(u128, u32, u32)> = (g.shards.iter().zip(&firsts))
        .flat_map(|(sh, &first)| {
            (sh.pieces.iter().enumerate())
                .map(move |(i, p)| (tail_key(p.bytes), p.bytes.len() as u32, first + i as u32))
        })
        .collect();
    all.par_sort_unstable_by(|a, b| {
        (a.0.cmp(&b.0)).then_with(|| {
            if a.1 <= 16 && b.1 <= 16 {
                a.1.cmp(&b.1)
            } else {
                (piece(a.2).bytes.iter().rev()).cmp(piece(b.2).bytes.iter().rev())
            }
        })
    });
    // Per string: the string it is laid out in, and how far into it (itself and 0 for a kept one).
    let total = all.len();
    let mut within: Vec<(u32, u32)> = (0..total as u32).map(|n| (n, 0)).collect();
    for j in (0..total.saturating_sub(1)).rev() {
        let ((ks, ls, ns), (kl, ll, nl)) = (all[j], all[j + 1]);
        if ll <= ls || !((ll - ls) as u64).is_multiple_of(step) {
            continue;
        }
        let ends = if ls <= 16 {
            (ks ^ kl) >> (8 * (16 - ls)) == 0
        } else {
            ks == kl && piece(nl).bytes.ends_with(piece(ns).bytes)
        };
        if ends {
            let (r, at) = within[nl as usize];
            within[ns as usize] = (r, at + (ll - ls));
        }
    }
    drop(all);
    // The kept strings, shard after shard, in their order; then each piece's offset from the group's start.
    let mut placed = vec![u32::MAX; total];
    let mut size = 0u64;
    for (sh, &first) in g.shards.iter_mut().zip(&firsts) {
        let start = align_up(size, g.align);
        let mut at = 0u64;
        for (i, p) in sh.pieces.iter().enumerate() {
            let n = first as usize + i;
            if within[n].0 == n as u32 {
                at = align_up(at, g.align);
                placed[n] = (start + at) as u32;
                at += p.bytes.len() as u64;
            }
        }
        sh.start = start;
        if at > 0 {
            size = start + at;
        }
    }
    let place = |n: usize| {
        let (r, delta) = within[n];
        placed[r as usize] + delta
    };
    (outs.par_iter_mut().enumerate()).for_each(|(s, list)| {
        let (old, first) = (&g.shards[s].offsets, firsts[s] as usize);
        for o in list.iter_mut() {
            *o = place(first + old.partition_point(|&x| x < *o));
        }
    });
    for (sh, &first) in g.shards.iter_mut().zip(&firsts) {
        let keep = |i: usize| within[first as usize + i].0 == first + i as u32;
        sh.offsets = (0..sh.pieces.len())
            .filter(|&i| keep(i))
            .map(|i| placed[first as usize + i] - sh.start as u32)
            .collect();
        let mut i = 0;
        sh.pieces.retain(|_| {
            i += 1;
            keep(i - 1)
        });
    }
    g.size = size;
    g.tails_shared = true;
}

/// Where each chunk's run starts in each shard's pieces.
fn shard_cursors(chunks: &[Chunk], group_chunks: &[std::ops::Range<usize>]) -> Vec<[u32; SHARDS]> {
    let mut cursors = vec![[0u32; SHARDS]; chunks.len()];
    for range in group_chunks {
        let mut running = [0u32; SHARDS];
        for c in range.clone() {
            cursors[c] = running;
            for (r, w) in running.iter_mut().zip(chunks[c].starts.windows(2)) {
                *r += w[1] - w[0];
            }
        }
    }
    cursors
}

/// Pass 3: the piece tables of every file's merge sections, by slot, made per chunk: each piece's output offset
/// from its shard's list (`piece_outs`), at that shard's cursor.
fn piece_tables(
    inputs: &MergeInputs,
    chunks: &[Chunk],
    mut cursors: Vec<[u32; SHARDS]>,
    groups: &[MergeGroup],
    piece_outs: &[Vec<u32>],
) -> Vec<Vec<PieceTable>> {
    let tables: Vec<Vec<PieceTable>> = chunks
        .par_iter()
        .zip(cursors.par_iter_mut())
        .with_max_len(1)
        .map(|(chunk, cursor)| chunk_piece_tables(inputs, chunk, cursor, groups, piece_outs))
        .collect();
    let mut piece_maps: Vec<Vec<PieceTable>> = inputs
        .merge_secs
        .iter()
        .map(|m| vec![PieceTable::default(); m.len()])
        .collect();
    for (chunk, list) in chunks.iter().zip(tables) {
        for (&(f, slot), table) in inputs.members[chunk.group][chunk.sections.clone()]
            .iter()
            .zip(list)
        {
            piece_maps[f.index()][slot] = table;
        }
    }
    piece_maps
}

/// The piece tables of one chunk's sections, in order, moving `cursor` past its pieces in each shard.
fn chunk_piece_tables(
    inputs: &MergeInputs,
    chunk: &Chunk,
    cursor: &mut [u32; SHARDS],
    groups: &[MergeGroup],
    piece_outs: &[Vec<u32>],
) -> Vec<PieceTable> {
    let k = chunk.group;
    let g = &groups[k];
    let outs = &piece_outs[k * SHARDS..(k + 1) * SHARDS];
    let list = &inputs.members[k][chunk.sections.clone()];
    list.iter()
        .zip(chunk.firsts.windows(2))
        .map(|(&(f, slot), w)| {
            let maps = chunk.offsets[w[0]..w[1]]
                .iter()
                .zip(&chunk.shards[w[0]..w[1]])
                .map(|(&in_off, &s)| {
                    let s = s as usize;
                    let rel = outs[s][cursor[s] as usize] as u64;
                    cursor[s] += 1;
                    let out_off = if g.tails_shared {
                        rel
                    } else {
                        g.shards[s].start + rel
                    };
                    PieceMap { in_off, out_off }
                })
                .collect();
            PieceTable::new(
                maps,
                inputs.objects[f.index()]
                    .sec(inputs.section(f, slot))
                    .size(),
            )
        })
        .collect()
}

/// Calls `piece(offset, bytes)` for each piece of merge section `s` of `o`, in order: NUL-terminated strings of
/// `entsize`-byte characters (the terminator included) for `SHF_STRINGS`, else `entsize`-byte constants.
fn split_section(
    o: &ObjectFile,
    s: SecIdx,
    mut piece: impl FnMut(usize, &'static [u8]),
) -> std::result::Result<(), String> {
    let sec = o.sec(s);
    let d = sec.data();
    let ent = sec.entsize() as usize;
    let mut off = 0usize;
    let unterminated = || {
        format!(
            "{}:({}): string in merge section is not null-terminated",
            o.name,
            o.section_name(s.0)
        )
    };
    if sec.flags() & E::SHF_STRINGS as u64 != 0 && ent == 1 {
        let end = for_each_string(d, |start, end| piece(start, &d[start..end]));
        if end != d.len() {
            return Err(unterminated());
        }
    } else if sec.flags() & E::SHF_STRINGS as u64 != 0 {
        while off < d.len() {
            let mut end = off;
            loop {
                if d.len() - end < ent {
                    return Err(unterminated());
                }
                if d[end..end + ent].iter().all(|&b| b == 0) {
                    break;
                }
                end += ent;
            }
            piece(off, &d[off..end + ent]);
            off = end + ent;
        }
    } else {
        if !d.len().is_multiple_of(ent) {
            return Err(format!(
                "{}:({}): size is not a multiple of entsize",
                o.name,
                o.section_name(s.0)
            ));
        }
        while off < d.len() {
            piece(off, &d[off..off + ent]);
            off += ent;
        }
    }
    Ok(())
}

/// Calls `string(start, end)` for each NUL-terminated string of `d` in order (`end` just after its NUL), and returns
/// where the last one ends. The NULs are found 64 bytes at a time as a bit mask, each string's end being the next
/// set bit, instead of a `memchr` call per string (`.debug_str` holds many short strings), and the input 4 KiB
/// ahead is prefetched: the first read of the mapped input, not the scan, was a large share of the cost. Each of
/// the two made the split faster on its own, and both together more.
fn for_each_string(d: &[u8], mut string: impl FnMut(usize, usize)) -> usize {
    let mut start = 0;
    let mut blocks = d.chunks_exact(64);
    let mut base = 0;
    for block in blocks.by_ref() {
        crate::elf::prefetch(block.as_ptr().wrapping_add(4096));
        let mut mask = nul_mask(block.try_into().unwrap());
        while mask != 0 {
            let end = base + mask.trailing_zeros() as usize + 1;
            string(start, end);
            start = end;
            mask &= mask - 1;
        }
        base += 64;
    }
    for (i, &b) in blocks.remainder().iter().enumerate() {
        if b == 0 {
            string(start, base + i + 1);
            start = base + i + 1;
        }
    }
    start
}

/// Bit i set where `block[i]` is 0.
#[inline(always)]
fn nul_mask(block: &[u8; 64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the four unaligned loads read exactly the 64 bytes of `block`.
        unsafe {
            let zero = _mm_setzero_si128();
            let p = block.as_ptr() as *const __m128i;
            let m = |i: usize| {
                _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p.add(i)), zero)) as u16 as u64
            };
            m(0) | (m(1) << 16) | (m(2) << 32) | (m(3) << 48)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        block
            .iter()
            .enumerate()
            .fold(0u64, |m, (i, &b)| m | (((b == 0) as u64) << i))
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_string;

    /// The strings and the end `for_each_string` reports, against a byte-at-a-time split.
    fn check(d: &[u8]) {
        let mut got = Vec::new();
        let end = for_each_string(d, |s, e| got.push((s, e)));
        let mut want = Vec::new();
        let mut start = 0;
        for (i, &b) in d.iter().enumerate() {
            if b == 0 {
                want.push((start, i + 1));
                start = i + 1;
            }
        }
        assert_eq!(got, want, "{d:?}");
        assert_eq!(end, start, "{d:?}");
    }

    #[test]
    fn strings_split_across_blocks() {
        check(b"");
        check(b"\0");
        check(b"abc");
        check(b"abc\0de");
        // Every length from 0 to 200 around the 64-byte blocks, terminated or not, and runs of empty strings.
        for len in 0..200 {
            let mut d: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            check(&d);
            d.push(0);
            check(&d);
            d.extend_from_slice(&[0; 70]);
            check(&d);
        }
        // Strings of every length up to 130 one after the other: NULs at every position of a block.
        let mut d = Vec::new();
        for len in 0..130 {
            d.extend(std::iter::repeat_n(b'x', len));
            d.push(0);
        }
        check(&d);
        check(&d[..d.len() - 1]);
    }
}
