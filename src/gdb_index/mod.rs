//! `--gdb-index`: the `.gdb_index` section (`synthetic::gdb_index` has the format), built once the addresses are
//! known, before the link map and the output: per input in parallel (`read`: its compile units at their offsets in the
//! output's `.debug_info`, their code ranges at output addresses, their names from `.debug_gnu_pubnames` and
//! `.debug_gnu_pubtypes`, or from the units' DIEs where the input has neither and is C; with a unit of another
//! language without them, no names at all, which makes gdb read the DWARF itself), then the names merged by hash shard
//! in input order, so the bytes are the same for every thread count. Its size then places the non-allocated
//! sections again, as compressed debug sections do (`layout::place_nonalloc_again`).

mod names;
mod read;

use crate::diag::{Errors, Result};
use crate::gc::Liveness;
use crate::index::FileId;
use crate::layout::{Layout, Synth};
use crate::par::FileRuns;
use crate::resolve::Resolved;
use crate::synthetic::gdb_index::{self as format, Area, Symbol, Unit};
use rayon::prelude::*;

/// What one input contributes: its units, their ranges and their names (unit numbers local to the input).
#[derive(Default)]
pub(crate) struct FileIndex {
    units: Vec<Unit>,
    areas: Vec<Area>,
    /// Sorted by shard (`SHARDS`), so each shard's merge reads only its own.
    names: Vec<Name>,
    /// Where each shard's names start in `names` (and where the last ends).
    shard_starts: Vec<u32>,
    /// The names' bytes, one after the other in `names`' order, copied while the input's are in the cache: the
    /// merge then reads each input's names of a shard as one block, not scattered over its name tables.
    text: Vec<u8>,
    /// Where each shard's bytes start in `text` (and where the last ends).
    text_starts: Vec<usize>,
    /// The index cannot name this input's units as gdb looks them up: a unit without name tables not in C, or
    /// type units (the index then carries no names at all).
    unnamed: bool,
}

impl FileIndex {
    /// Puts the names in shard order (a counting sort: stable, so each shard keeps the input's order).
    fn shard_names(&mut self) {
        let mut starts = vec![0u32; SHARDS + 1];
        for nm in &self.names {
            starts[nm.key as usize % SHARDS + 1] += 1;
        }
        for k in 0..SHARDS {
            starts[k + 1] += starts[k];
        }
        let mut next = starts.clone();
        let mut sorted = vec![Name::default(); self.names.len()];
        let mut text_starts = vec![0usize; SHARDS + 1];
        for nm in &self.names {
            let shard = nm.key as usize % SHARDS;
            sorted[next[shard] as usize] = *nm;
            next[shard] += 1;
            text_starts[shard + 1] += nm.name.len();
        }
        for k in 0..SHARDS {
            text_starts[k + 1] += text_starts[k];
        }
        let mut text = Vec::with_capacity(text_starts[SHARDS]);
        for nm in &sorted {
            text.extend_from_slice(nm.name);
        }
        self.names = sorted;
        self.shard_starts = starts;
        self.text = text;
        self.text_starts = text_starts;
    }
    /// The names of a shard, and their bytes one after the other.
    fn shard(&self, shard: usize) -> (&[Name], &[u8]) {
        match (
            self.shard_starts.get(shard..shard + 2),
            self.text_starts.get(shard..shard + 2),
        ) {
            (Some(&[a, b]), Some(&[ta, tb])) => {
                (&self.names[a as usize..b as usize], &self.text[ta..tb])
            }
            _ => (&[], &[]),
        }
    }
}

/// A name of unit `unit` of its input with its attribute byte, and its hash for the merge (`names::hash_name`;
/// gdb's is computed once per distinct name).
#[derive(Clone, Copy, Default)]
pub(crate) struct Name {
    name: &'static [u8],
    key: u64,
    attrs: u8,
    unit: u32,
}

/// The index's contents, made once the addresses are known; the writer puts them in the output (`write`).
pub struct Index {
    units: Vec<Unit>,
    areas: Vec<Area>,
    shards: Vec<Shard>,
}

impl Index {
    /// The names, each with gdb's hash and its unit vector.
    fn symbols(&self) -> Vec<Symbol<'_>> {
        (self.shards.iter())
            .flat_map(|sh| {
                sh.names
                    .iter()
                    .enumerate()
                    .map(|(k, &(at, len, hash))| Symbol {
                        name: &sh.text[at as usize..(at + len) as usize],
                        hash,
                        units: &sh.entries[sh.starts[k] as usize..sh.starts[k + 1] as usize],
                    })
            })
            .collect()
    }

    /// Writes the section's bytes into `out`, the section's place in the output.
    pub fn write(&self, out: &mut [u8]) {
        format::write(&self.units, &self.areas, &self.symbols(), out);
    }
}

/// Builds the index of the layout's `.gdb_index` section, if it has one, sets the section's size and places the
/// non-allocated sections again. The writer writes its bytes straight into the output (`Index::write`), in
/// parallel with the other sections.
pub fn build(res: &Resolved, live: &Liveness, lay: &mut Layout) -> Result<Option<Index>> {
    let Some(osec) = lay.synth.get(Synth::GdbIndex) else {
        return Ok(None);
    };
    let files = {
        let _t = crate::timing::span("gdb index: read inputs");
        read_inputs(res, live, lay)?
    };
    let t = crate::timing::span("gdb index: merge names");
    let (units, areas, shards) = merge(&files);
    let index = Index {
        units,
        areas,
        shards,
    };
    let size = format::size(index.units.len(), index.areas.len(), &index.symbols()) as u64;
    drop(t);
    let o = &mut lay.osecs[osec.index()];
    o.size = size;
    if let Some(s) = o.part_sizes.first_mut() {
        *s = size;
    }
    lay.synth.set_size(Synth::GdbIndex, size);
    crate::layout::place_nonalloc_again(lay)?;
    Ok(Some(index))
}

/// Every input's part, in input order, read in parallel runs weighted by the size of its `.debug_info`.
fn read_inputs(res: &Resolved, live: &Liveness, lay: &Layout) -> Result<Vec<FileIndex>> {
    let weights = (0..res.objects.len()).map(|f| read::weight(res, FileId::new(f)));
    let runs = FileRuns::new(weights);
    let results = runs.map(|f| read::file(res, live, lay, f));
    let mut files = Vec::with_capacity(results.len());
    let mut errors = Vec::new();
    for (f, r) in results.into_iter().enumerate() {
        match r {
            Ok(x) => files.push(x),
            Err(e) => errors.push(format!(
                "--gdb-index: {}: cannot read the debug information: {e}",
                res.objects[f].name
            )),
        }
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(Errors(errors))
    }
}

/// Shards of the name table: each name goes to the shard of its hash, and each shard deduplicates its names in
/// input order on a thread of its own.
const SHARDS: usize = 64;

/// The names of one shard, deduplicated: each name once, in order of first appearance, as (its place in `text`,
/// its length, gdb's hash), and its entries (`unit | attributes << 24`, in unit order, duplicates dropped) at
/// `entries[starts[k]..starts[k + 1]]`.
#[derive(Default)]
struct Shard {
    /// The names' bytes, copied when first seen: a later occurrence is compared with this shard's own small
    /// block, not with the first input's bytes, which a large link has long evicted from the cache.
    text: Vec<u8>,
    names: Vec<(u32, u32, u32)>,
    starts: Vec<u32>,
    entries: Vec<u32>,
}

impl Shard {
    /// Adds a name seen for the first time; its number.
    fn add(&mut self, name: &[u8]) -> u32 {
        let at = self.text.len() as u32;
        self.text.extend_from_slice(name);
        (self.names).push((at, name.len() as u32, format::hash(name)));
        self.names.len() as u32 - 1
    }
    fn name(&self, k: u32) -> &[u8] {
        let (at, len, _) = self.names[k as usize];
        &self.text[at as usize..(at + len) as usize]
    }
}

/// The units and ranges of all inputs with their global unit numbers, and the names merged by shard.
fn merge(files: &[FileIndex]) -> (Vec<Unit>, Vec<Area>, Vec<Shard>) {
    let mut first_unit = Vec::with_capacity(files.len());
    let mut n = 0u32;
    for x in files {
        first_unit.push(n);
        n += x.units.len() as u32;
    }
    let units: Vec<Unit> = files.iter().flat_map(|x| x.units.iter().copied()).collect();
    let areas: Vec<Area> = (files.iter().zip(&first_unit))
        .flat_map(|(x, &base)| {
            x.areas.iter().map(move |a| Area {
                unit: a.unit + base,
                ..*a
            })
        })
        .collect();
    // gdb trusts an index that has names to list every unit's, and reads the DWARF itself for one without any: a
    // unit whose names are unknown leaves them all out, so gdb still finds that unit's names.
    if files.iter().any(|x| x.unnamed) {
        return (units, areas, Vec::new());
    }
    let shards: Vec<Shard> = (0..SHARDS)
        .into_par_iter()
        .map(|shard| merge_shard(files, &first_unit, shard))
        .collect();
    (units, areas, shards)
}

/// Passes a stored hash on, spread (the table reads its top bits; a shard's names share their low bits).
#[derive(Default)]
struct Spread(u64);

impl std::hash::Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only write_u64")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Merges the names of one shard, in input order; gdb's hash is computed once per distinct name. Names are found
/// by their hash (`names::hash_name`, computed once in `read`), then compared: a name whose hash an earlier,
/// different name has is looked up by its bytes in a second map.
fn merge_shard(files: &[FileIndex], first_unit: &[u32], shard: usize) -> Shard {
    type ByHash = std::collections::HashMap<u64, u32, std::hash::BuildHasherDefault<Spread>>;
    let mut by_hash = ByHash::default();
    let mut by_name: std::collections::HashMap<&[u8], u32> = Default::default();
    let mut out = Shard::default();
    let (mut count, mut bytes) = (0, 0);
    for x in files {
        let (names, text) = x.shard(shard);
        count += names.len();
        bytes += text.len();
    }
    // Room for every name, were all new: the text is never copied as it grows.
    out.text.reserve_exact(bytes);
    by_hash.reserve(count / 4);
    // (name, entry) pairs, grouped by name below.
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(count);
    for (x, &base) in files.iter().zip(first_unit) {
        let (names, mut text) = x.shard(shard);
        for nm in names {
            let name;
            (name, text) = text.split_at(nm.name.len());
            let k = match by_hash.entry(nm.key) {
                std::collections::hash_map::Entry::Vacant(v) => *v.insert(out.add(name)),
                std::collections::hash_map::Entry::Occupied(o) if out.name(*o.get()) == name => {
                    *o.get()
                }
                std::collections::hash_map::Entry::Occupied(_) => match by_name.get(name) {
                    Some(&k) => k,
                    None => {
                        let k = out.add(name);
                        by_name.insert(name, k);
                        k
                    }
                },
            };
            pairs.push((k, (nm.unit + base) | (nm.attrs as u32) << 24));
        }
    }
    group_entries(&mut out, &pairs);
    out
}

/// Each name's entries from the (name, entry) pairs: grouped by name by a counting sort, which keeps them in
/// input order, that is in unit order (as gdb lists them); a group out of order (one unit naming a name twice
/// with different attributes) is sorted, and duplicates dropped.
fn group_entries(out: &mut Shard, pairs: &[(u32, u32)]) {
    let order = |e: u32| (e & 0xff_ffff, e >> 24);
    let mut starts = vec![0u32; out.names.len() + 1];
    for &(k, _) in pairs {
        starts[k as usize + 1] += 1;
    }
    for k in 0..out.names.len() {
        starts[k + 1] += starts[k];
    }
    let mut next = starts.clone();
    let mut grouped = vec![0u32; pairs.len()];
    for &(k, e) in pairs {
        grouped[next[k as usize] as usize] = e;
        next[k as usize] += 1;
    }
    out.starts = Vec::with_capacity(starts.len());
    out.entries = Vec::with_capacity(grouped.len());
    for w in starts.windows(2) {
        let group = &mut grouped[w[0] as usize..w[1] as usize];
        if !group.is_sorted_by_key(|&e| order(e)) {
            group.sort_unstable_by_key(|&e| order(e));
        }
        out.starts.push(out.entries.len() as u32);
        for (i, &e) in group.iter().enumerate() {
            if i == 0 || group[i - 1] != e {
                out.entries.push(e);
            }
        }
    }
    out.starts.push(out.entries.len() as u32);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input whose one unit names `names`, each with the given merge hash.
    fn input(names: &[(&'static [u8], u64)]) -> FileIndex {
        let mut x = FileIndex {
            units: vec![Unit {
                offset: 0,
                length: 16,
            }],
            ..FileIndex::default()
        };
        for &(name, key) in names {
            x.names.push(Name {
                name,
                key,
                attrs: format::KIND_FUNCTION,
                unit: 0,
            });
        }
        x.shard_names();
        x
    }

    /// Names of equal merge hash stay apart when they differ, and merge when they are equal, across inputs.
    #[test]
    fn equal_hashes_of_different_names_stay_apart() {
        let files = [
            input(&[(b"alpha", 7), (b"beta", 7)]),
            input(&[(b"beta", 7), (b"alpha", 7), (b"gamma", 9)]),
        ];
        let (_, _, shards) = merge(&files);
        let index = Index {
            units: Vec::new(),
            areas: Vec::new(),
            shards,
        };
        let mut seen: Vec<(Vec<u8>, Vec<u32>)> = (index.symbols().iter())
            .map(|s| {
                (
                    s.name.to_vec(),
                    s.units.iter().map(|e| e & 0xff_ffff).collect(),
                )
            })
            .collect();
        seen.sort();
        let want: Vec<(Vec<u8>, Vec<u32>)> = [("alpha", [0, 1]), ("beta", [0, 1])]
            .into_iter()
            .map(|(n, u)| (n.as_bytes().to_vec(), u.to_vec()))
            .chain([(b"gamma".to_vec(), vec![1])])
            .collect();
        assert_eq!(seen, want);
    }
}
