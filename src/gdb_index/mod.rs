//! `--gdb-index`: the `.gdb_index` section (`synthetic::gdb_index` has the format), built once the addresses are
//! known and before the output is opened: per input in parallel (`read`: its compile units at their offsets in the
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
    /// A unit of this input has no names the index can give (no name tables, not C).
    unnamed: bool,
}

impl FileIndex {
    /// Puts the names in shard order (a counting sort: stable, so each shard keeps the input's order).
    fn shard_names(&mut self) {
        let mut starts = vec![0u32; SHARDS + 1];
        for nm in &self.names {
            starts[nm.hash as usize % SHARDS + 1] += 1;
        }
        for k in 0..SHARDS {
            starts[k + 1] += starts[k];
        }
        let mut next = starts.clone();
        let mut sorted = vec![Name::default(); self.names.len()];
        for nm in &self.names {
            let at = &mut next[nm.hash as usize % SHARDS];
            sorted[*at as usize] = *nm;
            *at += 1;
        }
        self.names = sorted;
        self.shard_starts = starts;
    }
    fn shard(&self, shard: usize) -> &[Name] {
        match self.shard_starts.get(shard..shard + 2) {
            Some(&[a, b]) => &self.names[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// A name of unit `unit` of its input with its attribute byte, and its hash.
#[derive(Clone, Copy, Default)]
pub(crate) struct Name {
    name: &'static [u8],
    hash: u32,
    attrs: u8,
    unit: u32,
}

/// Builds the index of the layout's `.gdb_index` section, if it has one, sets the section's size and places the
/// non-allocated sections again. Returns the bytes for the writer.
pub fn build(res: &Resolved, live: &Liveness, lay: &mut Layout) -> Result<Option<Vec<u8>>> {
    let Some(osec) = lay.synth.get(Synth::GdbIndex) else {
        return Ok(None);
    };
    let files = {
        let _t = crate::timing::span("gdb index: read inputs");
        read_inputs(res, live, lay)?
    };
    let t = crate::timing::span("gdb index: merge names");
    let (units, areas, shards) = merge(&files);
    let symbols: Vec<Symbol> = (shards.iter())
        .flat_map(|sh| {
            sh.names
                .iter()
                .enumerate()
                .map(|(k, &(name, hash))| Symbol {
                    name,
                    hash,
                    units: &sh.entries[sh.starts[k] as usize..sh.starts[k + 1] as usize],
                })
        })
        .collect();
    drop(t);
    let _t = crate::timing::span("gdb index: bytes");
    let bytes = format::build(&units, &areas, &symbols);
    let o = &mut lay.osecs[osec.index()];
    o.size = bytes.len() as u64;
    if let Some(s) = o.part_sizes.first_mut() {
        *s = o.size;
    }
    lay.synth.set_size(Synth::GdbIndex, bytes.len() as u64);
    crate::layout::place_nonalloc_again(lay)?;
    Ok(Some(bytes))
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

/// The names of one shard, deduplicated: each name once, in order of first appearance, and its entries
/// (`unit | attributes << 24`, in unit order, duplicates dropped) at `entries[starts[k]..starts[k + 1]]`.
#[derive(Default)]
struct Shard<'a> {
    names: Vec<(&'a [u8], u32)>,
    starts: Vec<u32>,
    entries: Vec<u32>,
}

/// The units and ranges of all inputs with their global unit numbers, and the names merged by shard.
fn merge(files: &[FileIndex]) -> (Vec<Unit>, Vec<Area>, Vec<Shard<'_>>) {
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

/// A name keyed by the hash the index stores (computed once, in `read`): the map hashes nothing again.
#[derive(PartialEq, Eq)]
struct Key<'a>(u32, &'a [u8]);

impl std::hash::Hash for Key<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u32(self.0);
    }
}

/// Spreads a stored hash over 64 bits (the table reads its top bits; a shard's names share their low bits).
#[derive(Default)]
struct Spread(u64);

impl std::hash::Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only write_u32")
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Merges the names of one shard, in input order.
fn merge_shard<'a>(files: &'a [FileIndex], first_unit: &[u32], shard: usize) -> Shard<'a> {
    let mut at: std::collections::HashMap<Key, u32, std::hash::BuildHasherDefault<Spread>> =
        Default::default();
    let mut out = Shard::default();
    // (name, entry) pairs, grouped by name below.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (x, &base) in files.iter().zip(first_unit) {
        for nm in x.shard(shard) {
            let k = *at.entry(Key(nm.hash, nm.name)).or_insert_with(|| {
                out.names.push((nm.name, nm.hash));
                out.names.len() as u32 - 1
            });
            pairs.push((k, (nm.unit + base) | (nm.attrs as u32) << 24));
        }
    }
    // By name, then in unit order (as gdb lists them).
    pairs.sort_unstable_by_key(|&(k, e)| (k, e & 0xff_ffff, e >> 24));
    pairs.dedup();
    out.starts = Vec::with_capacity(out.names.len() + 1);
    for (i, &(k, e)) in pairs.iter().enumerate() {
        if i == 0 || pairs[i - 1].0 != k {
            out.starts.push(i as u32);
        }
        out.entries.push(e);
    }
    out.starts.push(pairs.len() as u32);
    out
}
