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
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;

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
    /// Puts the names in shard order.
    fn shard_names(&mut self) {
        self.names.sort_by_key(|nm| nm.hash as usize % SHARDS);
        let mut starts = Vec::with_capacity(SHARDS + 1);
        for shard in 0..=SHARDS {
            starts.push(
                self.names
                    .partition_point(|nm| (nm.hash as usize % SHARDS) < shard)
                    as u32,
            );
        }
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
pub(crate) struct Name {
    name: Cow<'static, [u8]>,
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
    let _t = crate::timing::span("gdb index: merge");
    let (units, areas, symbols) = merge(files);
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
    let weights = (0..res.objects.len()).map(|f| read::weight(res, live, FileId::new(f)));
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

/// The units and ranges of all inputs with their global unit numbers, and the names deduplicated: each name once,
/// with the sorted, deduplicated list of its units' entries.
fn merge(files: Vec<FileIndex>) -> (Vec<Unit>, Vec<Area>, Vec<Symbol>) {
    let mut first_unit = Vec::with_capacity(files.len());
    let mut n = 0u32;
    for x in &files {
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
    let shards: Vec<Vec<Symbol>> = (0..SHARDS)
        .into_par_iter()
        .map(|shard| merge_shard(&files, &first_unit, shard))
        .collect();
    (units, areas, shards.into_iter().flatten().collect())
}

/// The names of one shard, in order of first appearance.
fn merge_shard(files: &[FileIndex], first_unit: &[u32], shard: usize) -> Vec<Symbol> {
    let mut at: HashMap<&[u8], usize> = HashMap::default();
    let mut out: Vec<Symbol> = Vec::new();
    for (x, &base) in files.iter().zip(first_unit) {
        for nm in x.shard(shard) {
            let entry = (nm.unit + base) | (nm.attrs as u32) << 24;
            match at.get(&nm.name[..]) {
                Some(&k) => out[k].units.push(entry),
                None => {
                    at.insert(&nm.name[..], out.len());
                    out.push(Symbol {
                        name: nm.name.clone(),
                        hash: nm.hash,
                        units: vec![entry],
                    });
                }
            }
        }
    }
    for s in &mut out {
        // In unit order, as gdb lists them.
        s.units.sort_unstable_by_key(|&e| (e & 0xff_ffff, e >> 24));
        s.units.dedup();
    }
    out
}
