//! `--call-graph-profile-sort=cdsort`: the cache-directed sort lld 19 uses by default (LLVM's `CodeLayout`, after
//! Newell and Pupyrev, "Improved Basic Block Reordering"). Every function starts as a chain of its own; the pair
//! of chains joined by calls whose merge (one chain after the other, either way round) gains the most locality is
//! merged, again and again while a merge gains anything; the chains then go densest first. The gain of a merge is
//! the change of two scores: one by call distances (each call counted at its callee's distance from the middle of
//! its caller, to the power -1/4) and one by a model of a 16-entry cache of 2 KiB lines (the chance that a chain's
//! line was evicted), a quarter of the latter added, and the sum divided by the smaller chain's size. The same
//! constants, the same floating-point steps and the same ties as lld, so that the order is lld's.

use std::collections::BTreeMap;

/// Doubles closer than this are equal (LLVM's `EPS`).
const EPS: f64 = 1e-8;
const CACHE_ENTRIES: f64 = 16.0;
const CACHE_LINE: f64 = 2048.0;
const MAX_CHAIN_NODES: usize = 128;
const DISTANCE_POWER: f64 = 0.25;
const FREQUENCY_SCALE: f64 = 0.25;

/// A call: caller, callee, count, and the caller's offset it is assumed to be at.
struct Call {
    from: u32,
    to: u32,
    count: u64,
    offset: u64,
}

struct Chain {
    /// The index of its first node: the tie-breaker everywhere.
    id: u64,
    count: f64,
    size: u64,
    nodes: Vec<u32>,
    /// The chains it has calls with (itself, once merged), each with the edge holding those calls.
    edges: Vec<(u32, u32)>,
}

impl Chain {
    fn density(&self) -> f64 {
        self.count / self.size as f64
    }
}

/// The calls between two chains, either way, and the best merge found for them.
struct Edge {
    src: u32,
    dst: u32,
    calls: Vec<u32>,
    gain: f64,
    /// The merge puts `dst` first (else `src` first).
    dst_first: bool,
}

/// A queue key: the best gain first, then the smaller chain ids (LLVM's set order).
#[derive(PartialEq)]
struct Key(f64, u64, u64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (-self.0)
            .total_cmp(&-o.0)
            .then(self.1.cmp(&o.1))
            .then(self.2.cmp(&o.2))
    }
}

struct Sort {
    sizes: Vec<u64>,
    counts: Vec<u64>,
    calls: Vec<Call>,
    chain_of: Vec<u32>,
    chains: Vec<Chain>,
    edges: Vec<Edge>,
    total_samples: u64,
    total_size: u64,
    /// Scratch: each node's address in the merge being scored.
    addr: Vec<u64>,
}

/// The order of nodes `0..sizes.len()` for the calls `graph` (caller, callee, count; no self calls, no zero
/// counts), each call assumed at `offsets[i]` in its caller.
pub fn cdsort(
    sizes: &[u64],
    node_counts: &[u64],
    graph: &[(u32, u32, u64)],
    offsets: &[u64],
) -> Vec<u32> {
    let mut s = Sort::new(sizes, node_counts, graph, offsets);
    s.merge_pairs();
    s.order()
}

impl Sort {
    fn new(sizes: &[u64], node_counts: &[u64], graph: &[(u32, u32, u64)], offsets: &[u64]) -> Sort {
        let n = sizes.len();
        let sizes: Vec<u64> = sizes.iter().map(|&s| s.max(1)).collect();
        let mut counts = node_counts.to_vec();
        let total_samples = counts.iter().fold(0u64, |a, &c| a.wrapping_add(c));
        let total_size = (0..n)
            .filter(|&i| counts[i] > 0)
            .fold(0u64, |a, i| a.wrapping_add(sizes[i]));
        let mut out_calls: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut in_count = vec![0u64; n];
        let mut out_count = vec![0u64; n];
        let mut calls = Vec::new();
        for (&(from, to, count), &offset) in graph.iter().zip(offsets) {
            if from == to || count == 0 {
                continue;
            }
            let (f, t) = (from as usize, to as usize);
            out_calls[f].push(calls.len() as u32);
            calls.push(Call {
                from,
                to,
                count,
                offset,
            });
            counts[f] = counts[f].max(count);
            counts[t] = counts[t].max(count);
            out_count[f] = out_count[f].wrapping_add(count);
            in_count[t] = in_count[t].wrapping_add(count);
        }
        let chains = (0..n)
            .map(|i| {
                counts[i] = counts[i].max(in_count[i]).max(out_count[i]);
                Chain {
                    id: i as u64,
                    count: counts[i] as f64,
                    size: sizes[i],
                    nodes: vec![i as u32],
                    edges: Vec::new(),
                }
            })
            .collect();
        let mut s = Sort {
            sizes,
            counts,
            calls,
            chain_of: (0..n as u32).collect(),
            chains,
            edges: Vec::new(),
            total_samples,
            total_size,
            addr: vec![0; n],
        };
        // One edge per pair of chains, holding the calls of both directions in the callers' order.
        for (from, list) in out_calls.iter().enumerate() {
            for &c in list {
                let to = s.calls[c as usize].to;
                match s.edge_between(from as u32, to) {
                    Some(e) => s.edges[e as usize].calls.push(c),
                    None => {
                        let e = s.edges.len() as u32;
                        s.edges.push(Edge {
                            src: from as u32,
                            dst: to,
                            calls: vec![c],
                            gain: -1.0,
                            dst_first: false,
                        });
                        s.chains[from].edges.push((to, e));
                        s.chains[to as usize].edges.push((from as u32, e));
                    }
                }
            }
        }
        s
    }

    fn edge_between(&self, a: u32, b: u32) -> Option<u32> {
        (self.chains[a as usize].edges.iter()).find_map(|&(c, e)| (c == b).then_some(e))
    }

    fn key(&self, e: u32) -> Key {
        let edge = &self.edges[e as usize];
        Key(
            edge.gain,
            self.chains[edge.src as usize].id,
            self.chains[edge.dst as usize].id,
        )
    }

    fn score(&mut self, e: u32) {
        let (gain, dst_first) = self.best_merge(e);
        self.edges[e as usize].gain = gain;
        self.edges[e as usize].dst_first = dst_first;
    }

    fn merge_pairs(&mut self) {
        let mut queue: BTreeMap<Key, u32> = BTreeMap::new();
        for node in 0..self.sizes.len() {
            if self.counts[node] == 0 {
                continue;
            }
            let chain = self.chain_of[node] as usize;
            for k in 0..self.chains[chain].edges.len() {
                let e = self.chains[chain].edges[k].1;
                let edge = &self.edges[e as usize];
                if edge.src == edge.dst || edge.gain != -1.0 {
                    continue;
                }
                self.score(e);
                if self.edges[e as usize].gain > EPS {
                    queue.insert(self.key(e), e);
                }
            }
        }
        while let Some((_, best)) = queue.pop_first() {
            let (into, from) = (self.edges[best as usize].src, self.edges[best as usize].dst);
            for c in [into, from] {
                for k in 0..self.chains[c as usize].edges.len() {
                    let e = self.chains[c as usize].edges[k].1;
                    let key = self.key(e);
                    if queue.get(&key) == Some(&e) {
                        queue.remove(&key);
                    }
                }
            }
            let dst_first = self.edges[best as usize].dst_first;
            self.merge(into, from, dst_first);
            for k in 0..self.chains[into as usize].edges.len() {
                let e = self.chains[into as usize].edges[k].1;
                let edge = &self.edges[e as usize];
                if edge.src == edge.dst {
                    continue;
                }
                let nodes = self.chains[edge.src as usize].nodes.len()
                    + self.chains[edge.dst as usize].nodes.len();
                if nodes > MAX_CHAIN_NODES {
                    continue;
                }
                self.score(e);
                if self.edges[e as usize].gain > EPS {
                    queue.insert(self.key(e), e);
                }
            }
        }
    }

    /// The better of the two ways to merge edge `e`'s chains (the one keeping the chain with the smaller id first
    /// when they gain the same): its gain and whether `dst` goes first.
    fn best_merge(&mut self, e: u32) -> (f64, bool) {
        let (src, dst) = (self.edges[e as usize].src, self.edges[e as usize].dst);
        let (src_id, dst_id) = (self.chains[src as usize].id, self.chains[dst as usize].id);
        let mut best = (-1.0, false);
        for dst_first in [false, true] {
            let gain = self.merge_gain(e, dst_first);
            if (best.0 - gain).abs() < EPS {
                if (!dst_first && src_id < dst_id) || (dst_first && src_id > dst_id) {
                    best = (gain, dst_first);
                }
            } else if gain > best.0 + EPS {
                best = (gain, dst_first);
            }
        }
        best
    }

    fn merge_gain(&mut self, e: u32, dst_first: bool) -> f64 {
        let (src, dst) = (
            self.edges[e as usize].src as usize,
            self.edges[e as usize].dst as usize,
        );
        let freq = self.frequency_gain(src, dst);
        let (first, second) = if dst_first { (dst, src) } else { (src, dst) };
        let mut at = 0u64;
        for c in [first, second] {
            for &node in &self.chains[c].nodes {
                self.addr[node as usize] = at;
                at = at.wrapping_add(self.sizes[node as usize]);
            }
        }
        let (mut merged, mut apart) = (0.0, 0.0);
        for &c in &self.edges[e as usize].calls {
            let call = &self.calls[c as usize];
            let from = self.addr[call.from as usize].wrapping_add(call.offset);
            merged += distance_score(from, self.addr[call.to as usize], call.count);
            apart += distance_score(0, self.total_size, call.count);
        }
        let mut gain = (merged - apart) + FREQUENCY_SCALE * freq;
        if gain >= 0.0 {
            gain /= self.chains[src].size.min(self.chains[dst].size) as f64;
        }
        gain
    }

    /// The change in expected cache misses when the two chains become one.
    fn frequency_gain(&self, a: usize, b: usize) -> f64 {
        let total = self.total_samples as f64;
        let miss = |density: f64| {
            let line_samples = density * CACHE_LINE;
            if line_samples >= total {
                return 0.0;
            }
            (1.0 - line_samples / total).powf(CACHE_ENTRIES)
        };
        let (x, y) = (&self.chains[a], &self.chains[b]);
        let apart = x.count * miss(x.density()) + y.count * miss(y.density());
        let count = x.count + y.count;
        let size = x.size.wrapping_add(y.size) as f64;
        let together = count * miss(count / size);
        apart - together
    }

    /// Chain `from` appended to `into` (or put before it), and `from`'s edges moved to `into`.
    fn merge(&mut self, into: u32, from: u32, from_first: bool) {
        let (i, f) = (into as usize, from as usize);
        let from_nodes = std::mem::take(&mut self.chains[f].nodes);
        let nodes = match from_first {
            false => [std::mem::take(&mut self.chains[i].nodes), from_nodes].concat(),
            true => [from_nodes, std::mem::take(&mut self.chains[i].nodes)].concat(),
        };
        let (count, size) = (self.chains[f].count, self.chains[f].size);
        let chain = &mut self.chains[i];
        chain.count += count;
        chain.size = chain.size.wrapping_add(size);
        chain.id = u64::from(nodes[0]);
        for &n in &nodes {
            self.chain_of[n as usize] = into;
        }
        self.chains[i].nodes = nodes;
        let from_edges = std::mem::take(&mut self.chains[f].edges);
        for &(other, e) in &from_edges {
            let target = if other == from { into } else { other };
            match self.edge_between(into, target) {
                None => {
                    let edge = &mut self.edges[e as usize];
                    if edge.src == from {
                        edge.src = into;
                    }
                    if edge.dst == from {
                        edge.dst = into;
                    }
                    self.chains[i].edges.push((target, e));
                    if other != into && other != from {
                        self.chains[other as usize].edges.push((into, e));
                    }
                }
                Some(kept) => {
                    let calls = std::mem::take(&mut self.edges[e as usize].calls);
                    self.edges[kept as usize].calls.extend(calls);
                }
            }
            if other != from {
                let list = &mut self.chains[other as usize].edges;
                if let Some(k) = list.iter().position(|&(c, _)| c == from) {
                    list.remove(k);
                }
            }
        }
    }

    /// The nodes of the chains, densest chain first (ties by id).
    fn order(&self) -> Vec<u32> {
        let mut chains: Vec<(f64, u64, usize)> = (self.chains.iter().enumerate())
            .filter(|(_, c)| !c.nodes.is_empty())
            .map(|(k, c)| {
                let size: f64 = c.nodes.iter().map(|&n| self.sizes[n as usize] as f64).sum();
                let count: f64 = c
                    .nodes
                    .iter()
                    .map(|&n| self.counts[n as usize] as f64)
                    .sum();
                (count / size, c.id, k)
            })
            .collect();
        chains.sort_by(|a, b| (-a.0).total_cmp(&-b.0).then(a.1.cmp(&b.1)));
        (chains.iter())
            .flat_map(|&(_, _, k)| self.chains[k].nodes.iter().copied())
            .collect()
    }
}

fn distance_score(a: u64, b: u64, count: u64) -> f64 {
    let d = a.abs_diff(b);
    let d = if d == 0 { 0.1 } else { d as f64 };
    count as f64 * d.powf(-DISTANCE_POWER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_merge_as_lld_merges_them() {
        // ld.lld-19's default order for these sections (a, c, d, _start, b; calls a->c 100, c->d 50, _start->b 10,
        // b->d 1000): a c _start b d.
        let sizes = [16, 16, 16, 1, 16];
        let calls = [(0, 1, 100), (1, 2, 50), (3, 4, 10), (4, 2, 1000)];
        let counts = [0, 100, 1050, 0, 10];
        let offsets = [8, 8, 1, 8];
        assert_eq!(cdsort(&sizes, &counts, &calls, &offsets), [0, 1, 3, 4, 2]);
        // No calls: by id.
        assert_eq!(cdsort(&[4, 4], &[0, 0], &[], &[]), [0, 1]);
    }
}
