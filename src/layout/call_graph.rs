//! Layout pass, part of the section order (`order`): `--call-graph-profile-sort` (lld's option, on by default when
//! a profile exists). The call graph's nodes are input sections and its edges (caller, callee, weight) come from
//! `--call-graph-ordering-file` (`caller callee weight` lines, first) and the inputs' `.llvm.call-graph-profile`
//! sections (a weight per entry, the caller and callee the entry's two `SHT_REL` relocations' symbols), weights
//! of the same pair of sections added up. Edges between sections of different output sections are left out, as
//! lld leaves them out. The sections are then ordered by LLVM's cache-directed sort (`cdsort`, lld 19's default)
//! or by lld's Call-Chain Clustering (C3, `hfsort`), and each ordered section's rank is its place in that order.
//! Nothing here runs unless an input has a profile or one of the options names a file.

use super::order::SectionOrder;
use crate::args::{CallGraphSort, Config};
use crate::diag::{self, Result};
use crate::elf::{self, LE};
use crate::gc::Liveness;
use crate::index::{FileId, NONE, OsecId, SecIdx};
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rustc_hash::FxHashMap;

/// A cluster may not grow past this size: lld's limit.
const MAX_CLUSTER_SIZE: u64 = 1 << 20;
/// A merge may not make the predecessor cluster's density this many times worse: lld's limit.
const MAX_DENSITY_DEGRADATION: f64 = 8.0;

/// An input section as one number: file in the high half, section index in the low.
type SecKey = u64;

fn key(f: FileId, s: SecIdx) -> SecKey {
    (f.0 as u64) << 32 | s.0 as u64
}

fn unkey(k: SecKey) -> (FileId, SecIdx) {
    (FileId((k >> 32) as u32), SecIdx(k as u32))
}

/// The edges in the order their pair of sections was first seen (lld keeps that order, and the clustering's
/// ties follow it).
#[derive(Default)]
struct Edges {
    index: FxHashMap<(SecKey, SecKey), usize>,
    list: Vec<(SecKey, SecKey, u64)>,
}

impl Edges {
    fn add(&mut self, from: SecKey, to: SecKey, weight: u64) {
        let list = &mut self.list;
        let i = *self.index.entry((from, to)).or_insert_with(|| {
            list.push((from, to, 0));
            list.len() - 1
        });
        list[i].2 = list[i].2.wrapping_add(weight);
    }
}

/// Why a symbol has no section to order (lld's warning words), and the file that defines it (a shared object
/// by its soname) or, for an undefined one, that names it.
enum Unorderable {
    Undefined(FileId),
    Shared(crate::index::SharedId),
    Absolute(FileId),
    Discarded(FileId),
}

impl Unorderable {
    fn warning(&self, res: &Resolved, name: &[u8]) -> String {
        let (file, word) = match *self {
            Unorderable::Undefined(f) => (&res.objects[f.index()].name, "undefined"),
            Unorderable::Shared(s) => (&res.shared[s.index()].soname, "shared"),
            Unorderable::Absolute(f) => (&res.objects[f.index()].name, "absolute"),
            Unorderable::Discarded(f) => (&res.objects[f.index()].name, "discarded"),
        };
        let name = String::from_utf8_lossy(name);
        format!("{file}: unable to order {word} symbol: {name}")
    }
}

/// The section symbol `i` of object `f` stands for: a global's by its winning definition, a section folded by
/// `--icf` as the section it was folded into; and whether that section is live. A section `--gc-sections` or a
/// script dropped is still a node, as in lld (edges between two such sections count in cdsort's totals); a local
/// of a COMDAT group another file's replaced is not (lld makes it undefined).
fn section_of(
    res: &Resolved,
    live: &Liveness,
    f: FileId,
    i: usize,
) -> std::result::Result<(FileId, SecIdx, bool), Unorderable> {
    let o = &res.objects[f.index()];
    let (file, sym) = match i.checked_sub(o.first_global) {
        None => (f, i),
        Some(g) => match res.defs[res.object_ids[f.index()][g].index()] {
            Def::Object { file, sym } => (file, sym as usize),
            Def::Shared { file, .. } => return Err(Unorderable::Shared(file)),
            _ => return Err(Unorderable::Undefined(f)),
        },
    };
    let def = &res.objects[file.index()];
    let shndx = def.sym_shndx(sym);
    if shndx == 0 {
        return Err(Unorderable::Undefined(file));
    }
    if shndx == E::SHN_ABS as u32 || shndx as usize >= def.sections.len() {
        return Err(Unorderable::Absolute(file));
    }
    let s = SecIdx(shndx);
    if live.is_live(file, s) {
        return Ok((file, s, true));
    }
    match (live.folded).binary_search_by_key(&(file, s), |&(f, s, _, _)| (f, s)) {
        Ok(k) => Ok((live.folded[k].2, live.folded[k].3, true)),
        Err(_) if res.comdat_discarded[file.index()][s.index()] => {
            Err(Unorderable::Discarded(file))
        }
        Err(_) => Ok((file, s, false)),
    }
}

/// The ranks the call graph gives, or `None` when there is nothing to sort (sorting off, no profile in any
/// input and no file named).
pub fn call_graph_order(
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    sec_osec: &[Vec<OsecId>],
) -> Result<Option<SectionOrder>> {
    if config.call_graph_sort == CallGraphSort::None {
        return Ok(None);
    }
    let profiled =
        |f: &FileId| res.object_live[f.index()] && res.objects[f.index()].cg_profile_rel != 0;
    let files = || (0..res.objects.len()).map(FileId::new);
    if config.call_graph_ordering_file.is_none()
        && config.print_symbol_order.is_none()
        && !files().any(|f| profiled(&f))
    {
        return Ok(None);
    }
    let mut edges = Edges::default();
    if let Some(path) = &config.call_graph_ordering_file {
        read_ordering_file(config, res, live, path, &mut edges)?;
    }
    for f in files().filter(profiled) {
        read_profile(res, live, f, &mut edges)?;
    }
    // cdsort leaves out the edges of weight 0 before it numbers the nodes, and the self edges after.
    let cdsort = config.call_graph_sort == CallGraphSort::Cdsort;
    let (sections, graph) = numbered(&edges, sec_osec, cdsort);
    let sizes: Vec<u64> = (sections.iter())
        .map(|&k| {
            let (f, s) = unkey(k);
            res.objects[f.index()].sec(s).size()
        })
        .collect();
    let order = match cdsort {
        false => hfsort(&sizes, &graph),
        true => {
            let calls: Vec<(u32, u32, u64)> = graph.into_iter().filter(|e| e.0 != e.1).collect();
            let mut counts = vec![0u64; sizes.len()];
            for &(_, to, w) in &calls {
                counts[to as usize] = counts[to as usize].wrapping_add(w);
            }
            // The profile has no call sites: each call is taken to be in the middle of its caller.
            let offsets: Vec<u64> = (calls.iter())
                .map(|&(from, _, _)| sizes[from as usize].div_ceil(2))
                .collect();
            super::cdsort::cdsort(&sizes, &counts, &calls, &offsets)
        }
    };
    // lld writes the file for hfsort only.
    if let Some(path) = config.print_symbol_order.as_ref().filter(|_| !cdsort) {
        print_symbol_order(
            res,
            sec_osec,
            path,
            order.iter().map(|&n| sections[n as usize]),
        )?;
    }
    let mut rank: Vec<Vec<u32>> = res
        .runs
        .map(|f| vec![NONE; res.objects[f.index()].sections.len()]);
    for (r, &n) in order.iter().enumerate() {
        let (f, s) = unkey(sections[n as usize]);
        rank[f.index()][s.index()] = r as u32;
    }
    Ok(Some(SectionOrder { rank }))
}

/// The graph's nodes (the sections, numbered as their edges are met) and edges, the edges across output sections
/// left out, and with `skip_zero` those of weight 0. An edge between two sections not in the output stays (lld's
/// test compares their output sections, none for both): it orders nothing but counts in cdsort's totals.
fn numbered(
    edges: &Edges,
    sec_osec: &[Vec<OsecId>],
    skip_zero: bool,
) -> (Vec<SecKey>, Vec<(u32, u32, u64)>) {
    let osec = |k: SecKey| {
        let (f, s) = unkey(k);
        sec_osec[f.index()][s.index()]
    };
    let mut node: FxHashMap<SecKey, u32> = FxHashMap::default();
    let mut sections: Vec<SecKey> = Vec::new();
    let mut graph: Vec<(u32, u32, u64)> = Vec::new();
    for &(from, to, weight) in &edges.list {
        if osec(from) != osec(to) || (skip_zero && weight == 0) {
            continue;
        }
        let mut id = |k: SecKey| {
            *node.entry(k).or_insert_with(|| {
                sections.push(k);
                sections.len() as u32 - 1
            })
        };
        let (a, b) = (id(from), id(to));
        graph.push((a, b, weight));
    }
    (sections, graph)
}

/// The edges of one object's `.llvm.call-graph-profile`: its `n` weights and the `2n` relocations naming each
/// entry's caller and callee. Entries whose symbols have no section in the output are skipped, as lld skips them.
fn read_profile(res: &Resolved, live: &Liveness, f: FileId, edges: &mut Edges) -> Result<()> {
    let o = &res.objects[f.index()];
    let rel_sh = &o.shdrs[o.cg_profile_rel as usize];
    let ctx = |e: String| format!("{}: .llvm.call-graph-profile: {e}", o.name);
    let rels: &[E::Rel64<LE>] = elf::table(o.data, rel_sh, "relocation").map_err(ctx)?;
    let profile_sh = &o.shdrs[rel_sh.sh_info.get(LE) as usize];
    let weights: &[object::U64<LE>] = elf::table(o.data, profile_sh, "weight").map_err(ctx)?;
    if rels.len() != 2 * weights.len() {
        return Err(ctx(format!(
            "{} relocations for {} entries (two each expected)",
            rels.len(),
            weights.len()
        ))
        .into());
    }
    let sym = |r: &E::Rel64<LE>| -> Result<Option<SecKey>> {
        let i = (r.r_info.get(LE) >> 32) as usize;
        if i >= o.syms.len() {
            return Err(ctx(format!("invalid symbol index {i}")).into());
        }
        Ok(section_of(res, live, f, i).ok().map(|(f, s, _)| key(f, s)))
    };
    for (pair, w) in rels.chunks_exact(2).zip(weights) {
        if let (Some(from), Some(to)) = (sym(&pair[0])?, sym(&pair[1])?) {
            edges.add(from, to, w.get(LE));
        }
    }
    Ok(())
}

/// `--call-graph-ordering-file`: `caller callee weight` per line (blank lines and `#` lines skipped). A name is
/// looked up among every linked object's symbols, a later one taking the name from an earlier one (lld's map);
/// names that order nothing are warned about as the symbol ordering file's are.
fn read_ordering_file(
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    path: &std::path::Path,
    edges: &mut Edges,
) -> Result<()> {
    let text = std::fs::read(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let file = path.display().to_string();
    let mut by_name: FxHashMap<&[u8], (FileId, usize)> = FxHashMap::default();
    for f in (0..res.objects.len()).filter(|&f| res.object_live[f]) {
        let o = &res.objects[f];
        for i in 1..o.syms.len() {
            by_name.insert(o.sym_name(i), (FileId::new(f), i));
        }
    }
    let warn = config.warn_symbol_ordering;
    let find = |name: &[u8]| -> Option<SecKey> {
        let Some(&(f, i)) = by_name.get(name) else {
            if warn {
                diag::warn(&format!(
                    "{file}: no such symbol: {}",
                    String::from_utf8_lossy(name)
                ));
            }
            return None;
        };
        match section_of(res, live, f, i) {
            Ok((f, s, true)) => Some(key(f, s)),
            // lld warns and keeps the section.
            Ok((f, s, false)) => {
                if warn {
                    diag::warn(&Unorderable::Discarded(f).warning(res, name));
                }
                Some(key(f, s))
            }
            Err(why) => {
                if warn {
                    diag::warn(&why.warning(res, name));
                }
                None
            }
        }
    };
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let weight = (fields.get(2))
            .and_then(|w| std::str::from_utf8(w).ok())
            .and_then(|w| w.parse::<u64>().ok());
        let (3, Some(weight)) = (fields.len(), weight) else {
            return Err(format!("{file}: parse error").into());
        };
        if let Some(from) = find(fields[0])
            && let Some(to) = find(fields[1])
        {
            edges.add(from, to, weight);
        }
    }
    Ok(())
}

/// One cluster of sections, a ring through `next`/`prev` led by the cluster's index.
struct Cluster {
    next: u32,
    prev: u32,
    size: u64,
    weight: u64,
    initial_weight: u64,
    /// The heaviest edge into this section (the first of equal ones): (caller, weight).
    best_pred: Option<(u32, u64)>,
}

impl Cluster {
    fn density(&self) -> f64 {
        match self.size {
            0 => 0.0,
            size => self.weight as f64 / size as f64,
        }
    }
}

/// lld's C3: each section, densest first, joins the cluster of its heaviest caller unless that edge carries
/// a tenth of its weight or less, the joined cluster would pass `MAX_CLUSTER_SIZE`, or the caller's cluster's
/// density would drop below an eighth; then the clusters go densest first. Returns the nodes in order; sections
/// of zero size left alone are not in it (lld does not order them either).
fn hfsort(sizes: &[u64], graph: &[(u32, u32, u64)]) -> Vec<u32> {
    let n = sizes.len();
    let mut c: Vec<Cluster> = (sizes.iter().enumerate())
        .map(|(i, &size)| Cluster {
            next: i as u32,
            prev: i as u32,
            size,
            weight: 0,
            initial_weight: 0,
            best_pred: None,
        })
        .collect();
    for &(from, to, w) in graph {
        let to_c = &mut c[to as usize];
        to_c.weight = to_c.weight.wrapping_add(w);
        if from != to && to_c.best_pred.is_none_or(|(_, bw)| bw < w) {
            to_c.best_pred = Some((from, w));
        }
    }
    for x in &mut c {
        x.initial_weight = x.weight;
    }
    let by_density = |c: &[Cluster], v: &mut Vec<u32>| {
        v.sort_by(|&a, &b| c[b as usize].density().total_cmp(&c[a as usize].density()));
    };
    let mut sorted: Vec<u32> = (0..n as u32).collect();
    by_density(&c, &mut sorted);
    let mut leader: Vec<u32> = (0..n as u32).collect();
    for &l in &sorted {
        let l = l as usize;
        let Some((from, w)) = c[l].best_pred else {
            continue;
        };
        if w.wrapping_mul(10) <= c[l].initial_weight {
            continue;
        }
        let p = find_leader(&mut leader, from) as usize;
        if p == l || c[l].size + c[p].size > MAX_CLUSTER_SIZE {
            continue;
        }
        let merged = c[p].weight.wrapping_add(c[l].weight) as f64 / (c[p].size + c[l].size) as f64;
        if merged < c[p].density() / MAX_DENSITY_DEGRADATION {
            continue;
        }
        leader[l] = p as u32;
        join(&mut c, p, l);
    }
    let mut sorted: Vec<u32> = (0..n as u32).filter(|&i| c[i as usize].size > 0).collect();
    by_density(&c, &mut sorted);
    let mut order = Vec::with_capacity(n);
    for &l in &sorted {
        let mut i = l;
        loop {
            order.push(i);
            i = c[i as usize].next;
            if i == l {
                break;
            }
        }
    }
    order
}

/// The cluster led by `v`'s leader, halving the path on the way.
fn find_leader(leader: &mut [u32], mut v: u32) -> u32 {
    while leader[v as usize] != v {
        leader[v as usize] = leader[leader[v as usize] as usize];
        v = leader[v as usize];
    }
    v
}

/// Appends cluster `from`'s ring to cluster `into`'s.
fn join(c: &mut [Cluster], into: usize, from: usize) {
    let (tail_into, tail_from) = (c[into].prev, c[from].prev);
    c[into].prev = tail_from;
    c[tail_from as usize].next = into as u32;
    c[from].prev = tail_into;
    c[tail_into as usize].next = from as u32;
    c[into].size += c[from].size;
    c[into].weight = c[into].weight.wrapping_add(c[from].weight);
    c[from].size = 0;
    c[from].weight = 0;
}

/// `--print-symbol-order`: for each ordered section, in order, the names of its file's symbols (locals and
/// globals, in symbol table order, section symbols left out) defined in it, a line each.
fn print_symbol_order(
    res: &Resolved,
    sec_osec: &[Vec<OsecId>],
    path: &std::path::Path,
    sections: impl Iterator<Item = SecKey>,
) -> Result<()> {
    let mut out = Vec::new();
    for k in sections {
        let (f, s) = unkey(k);
        // lld has made the symbols of sections not in the output undefined by then.
        if sec_osec[f.index()][s.index()].is_none() {
            continue;
        }
        let o = &res.objects[f.index()];
        for i in 1..o.syms.len() {
            if o.syms[i].st_type() == E::STT_SECTION {
                continue;
            }
            let here = match i.checked_sub(o.first_global) {
                None => o.sym_shndx(i) == s.0,
                Some(g) => match res.defs[res.object_ids[f.index()][g].index()] {
                    Def::Object { file, sym } => file == f && o.sym_shndx(sym as usize) == s.0,
                    _ => false,
                },
            };
            if here {
                out.extend_from_slice(o.sym_name(i));
                out.push(b'\n');
            }
        }
    }
    std::fs::write(path, out).map_err(|e| format!("cannot open {}: {e}", path.display()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c3_follows_the_heaviest_callers() {
        // Nodes as met: a, c, d, start, b; edges a->c 100, c->d 50, start->b 10, b->d 1000. d joins b (its
        // heaviest caller), c joins a, then b's cluster joins start's; start's cluster is the denser.
        let sizes = [16, 16, 16, 1, 16];
        let graph = [(0, 1, 100), (1, 2, 50), (3, 4, 10), (4, 2, 1000)];
        assert_eq!(hfsort(&sizes, &graph), [3, 4, 2, 0, 1]);
        // A caller's edge of a tenth of the callee's weight or less does not join them.
        let graph = [(0, 1, 10), (2, 1, 90)];
        assert_eq!(hfsort(&[16, 16, 16], &graph), [2, 1, 0]);
        let graph = [(0, 1, 9), (2, 1, 91)];
        assert_eq!(hfsort(&[16, 16, 16], &graph), [2, 1, 0]);
        // Past the size limit clusters stay apart; a section of size 0 has a place in a cluster with others only.
        let graph = [(0, 1, 5), (2, 3, 1), (4, 4, 7)];
        let sizes = [600_000, 600_000, 8, 0, 0];
        assert_eq!(hfsort(&sizes, &graph), [2, 3, 1, 0]);
    }

    #[test]
    fn leaders_are_found_with_path_halving() {
        let mut leader = vec![0, 0, 1, 2];
        assert_eq!(find_leader(&mut leader, 3), 0);
        assert_eq!(leader, [0, 0, 1, 1]);
    }
}
