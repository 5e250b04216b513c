//! Layout pass: the section order, from `--symbol-ordering-file` or else from the call graph (`call_graph`,
//! `--call-graph-profile-sort`), as lld takes one or the other. `--symbol-ordering-file` (lld's option): the input
//! sections that define the symbols the file lists go first in their output sections, in the file's order, ahead
//! of the others, which keep input order; a section defining several listed symbols goes where the first of them
//! is listed. Globals and every object's named locals are looked up, as lld does; mergeable strings, `.eh_frame`,
//! the sorted init and fini arrays and the sections a script places are not reordered (lld leaves the first three
//! alone too). Read only when the option is given. `--sort-section` (GNU ld's) ranks the sections of the default
//! layout instead (`sort_section_order`).

use crate::args::Config;
use crate::diag::{self, Result};
use crate::gc::Liveness;
use crate::index::{FileId, NONE, SecIdx};
use crate::parse::SectionKind;
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rustc_hash::FxHashMap;

/// Per object, per section: its rank in the ordering (0 first), or `NONE` for a section the file does not order.
pub struct SectionOrder {
    pub rank: Vec<Vec<u32>>,
}

impl SectionOrder {
    #[inline]
    pub fn rank(&self, f: FileId, s: SecIdx) -> u32 {
        self.rank[f.index()][s.index()]
    }
}

/// The ranks of the link's section order: the symbol ordering file's, or the call graph sort's (`None` when
/// neither orders anything). Sections the placement does not reorder have no rank.
pub fn section_order(
    config: &Config,
    (res, files): (&Resolved, &crate::load_order::FileOrder),
    live: &Liveness,
    (osecs, sec_osec): (&[super::OutputSection], &[Vec<crate::index::OsecId>]),
) -> Result<Option<SectionOrder>> {
    if let Some(by) = config.sort_section {
        // A script's statements sort themselves (`SectionsScript::sorting_sections`).
        return Ok(config
            .sections
            .is_none()
            .then(|| sort_section_order(by, (res, files), live, (osecs, sec_osec))));
    }
    let order = match &config.symbol_ordering_file {
        Some(path) => Some(symbol_order(config, res, live, path)?),
        None => super::call_graph::call_graph_order(config, res, live, sec_osec)?,
    };
    let Some(mut order) = order else {
        return Ok(None);
    };
    // Sections the placement does not reorder keep their place.
    for (f, ranks) in order.rank.iter_mut().enumerate() {
        for (s, k) in ranks.iter_mut().enumerate() {
            if *k != NONE
                && matches!(
                    res.objects[f].sections[s].kind,
                    SectionKind::Merge | SectionKind::EhFrame
                )
            {
                *k = NONE;
            }
        }
    }
    Ok(Some(order))
}

/// The ranks the ordering file gives, with lld's warnings (unless `--no-warn-symbol-ordering`): duplicates, names
/// no input defines, and symbols that have no section to move (undefined, a shared object's, absolute, or in a
/// discarded section).
fn symbol_order(
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    path: &std::path::Path,
) -> Result<SectionOrder> {
    let text = std::fs::read(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let warn = config.warn_symbol_ordering;
    let names = ordered_names(&text, &path.display().to_string(), warn);
    let mut rank: Vec<Vec<u32>> = res
        .runs
        .map(|f| vec![NONE; res.objects[f.index()].sections.len()]);
    let mut found = vec![false; names.len()];
    let mut give = |f: FileId, i: usize, r: u32, found: &mut [bool]| {
        found[r as usize] = true;
        let o = &res.objects[f.index()];
        let shndx = o.sym_shndx(i);
        let what = match shndx {
            0 => Some("undefined"),
            s if s == E::SHN_ABS as u32 || s as usize >= o.sections.len() => Some("absolute"),
            s if !live.is_live(f, SecIdx(s)) => Some("discarded"),
            _ => None,
        };
        match what {
            Some(what) if warn => diag::warn(&format!(
                "{}: unable to order {what} symbol: {}",
                o.name,
                String::from_utf8_lossy(o.sym_name(i))
            )),
            Some(_) => {}
            None => {
                let k = &mut rank[f.index()][shndx as usize];
                *k = (*k).min(r);
            }
        }
    };
    // The globals, by their definitions.
    for (r, name) in names.iter().enumerate() {
        let Some(id) = res.names.lookup(name) else {
            continue;
        };
        match res.defs[id.index()] {
            Def::Object { file, sym } => give(file, sym as usize, r as u32, &mut found),
            Def::Shared { file, .. } if warn => {
                found[r] = true;
                diag::warn(&format!(
                    "{}: unable to order shared symbol: {}",
                    res.shared[file.index()].soname,
                    String::from_utf8_lossy(name)
                ));
            }
            Def::Undefined if warn => {
                found[r] = true;
                diag::warn(&format!(
                    "unable to order undefined symbol: {}",
                    String::from_utf8_lossy(name)
                ));
            }
            _ => found[r] = true,
        }
    }
    // The named locals of every linked object, found in parallel.
    let by_name: FxHashMap<&[u8], u32> = (names.iter().enumerate())
        .map(|(r, n)| (&n[..], r as u32))
        .collect();
    let locals: Vec<Vec<(usize, u32)>> = res.runs.map(|f| {
        let o = &res.objects[f.index()];
        if !res.object_live[f.index()] {
            return Vec::new();
        }
        (1..o.first_global)
            .filter(|&i| {
                o.syms[i].st_type() != E::STT_SECTION && o.syms[i].st_type() != E::STT_FILE
            })
            .filter_map(|i| Some((i, *by_name.get(o.sym_name(i))?)))
            .collect()
    });
    for (f, list) in locals.into_iter().enumerate() {
        for (sym, r) in list {
            give(FileId::new(f), sym, r, &mut found);
        }
    }
    if warn {
        for (name, _) in names.iter().zip(&found).filter(|(_, f)| !**f) {
            diag::warn(&format!(
                "symbol ordering file: no such symbol: {}",
                String::from_utf8_lossy(name)
            ));
        }
    }
    Ok(SectionOrder { rank })
}

/// The file's names in order, one per line (blank lines and lines starting with `#` skipped, as lld reads it),
/// each once: a repeated one keeps its first place, with lld's warning.
fn ordered_names(text: &[u8], file: &str, warn: bool) -> Vec<Vec<u8>> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut names = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        if seen.insert(line) {
            names.push(line.to_vec());
        } else if warn {
            diag::warn(&format!(
                "{file}: duplicate ordered symbol: {}",
                String::from_utf8_lossy(line)
            ));
        }
    }
    names
}

/// `--sort-section=name|alignment` (`by`) in the default layout: the input sections GNU ld's default script takes by
/// a wildcard statement (`default_script::gnu_default_takes`), ranked statement by statement as it sorts them,
/// stably (ties in load order): by name, or by alignment, largest first. Its statements are `.text`'s groups
/// (`rules::text_group`; `.text.sorted.*` by name first, as its `SORT` says), `.data.rel.ro.local*` before the
/// rest of `.data.rel.ro`, and one per other output section. Left in load order after them: `.init`, `.fini`, the
/// arrays sorted by priority, mergeable sections and `.eh_frame` (made by the linker), the non-allocated
/// sections, GNU's orphans, and the common symbols.
fn sort_section_order(
    by: crate::script::ast::Sort,
    (res, files): (&Resolved, &crate::load_order::FileOrder),
    live: &Liveness,
    (osecs, sec_osec): (&[super::OutputSection], &[Vec<crate::index::OsecId>]),
) -> SectionOrder {
    use super::rules::{SORTED_NAMES, TEXT_SORTED, text_group};
    use crate::script::ast::Sort;
    use rayon::prelude::*;
    let sorted_out = |o: &super::OutputSection| {
        !o.is_alloc()
            || o.name == b".init"
            || o.name == b".fini"
            || SORTED_NAMES.contains(&&o.name[..])
    };
    // (output section, statement, alignment (largest first) where it sorts by alignment first, name where it sorts
    // by name, alignment where by name then alignment, load rank, file, section).
    type Key<'a> = (u32, u8, u64, &'a [u8], u64, u32, FileId, SecIdx);
    let mut keys: Vec<Key> = res.runs.flat_map(|f| {
        let o = &res.objects[f.index()];
        let live_file = res.object_live[f.index()];
        (0..o.sections.len()).filter_map(move |s| {
            let osec = sec_osec[f.index()][s];
            let out = osecs.get(osec.index())?;
            let (s, name) = (SecIdx::new(s), o.sec_name(s));
            if !live_file
                || !live.is_live(f, s)
                || matches!(
                    o.sections[s.index()].kind,
                    SectionKind::Merge | SectionKind::EhFrame
                )
                || sorted_out(out)
                || !super::default_script::gnu_default_takes(name)
            {
                return None;
            }
            let stmt = match &out.name[..] {
                b".text" => text_group(name),
                b".data.rel.ro" => u8::from(!name.starts_with(b".data.rel.ro.local")),
                _ => 0,
            };
            let align = u64::MAX - o.sec(s).align();
            // `SORT(.text.sorted.*)` sorts by name, then by alignment under `--sort-section=alignment`.
            let sort = match (by, out.name == b".text" && stmt == TEXT_SORTED) {
                (Sort::Alignment, true) => Sort::NameAlignment,
                (_, true) => Sort::Name,
                (by, false) => by,
            };
            let (first, by_name, then) = match sort {
                Sort::Alignment => (align, &b""[..], 0),
                Sort::NameAlignment => (0, name, align),
                _ => (0, name, 0),
            };
            Some((
                osec.index() as u32,
                stmt,
                first,
                by_name,
                then,
                files.rank(f),
                f,
                s,
            ))
        })
    });
    keys.par_sort_unstable_by(|a, b| a.cmp(b));
    let mut rank: Vec<Vec<u32>> = res
        .runs
        .map(|f| vec![NONE; res.objects[f.index()].sections.len()]);
    for (r, k) in keys.iter().enumerate() {
        rank[k.6.index()][k.7.index()] = r as u32;
    }
    SectionOrder { rank }
}
