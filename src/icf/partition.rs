//! The classes of identical sections, by refinement (lld's algorithm): the candidates are sorted by a hash of
//! their constant part, mixed twice with their targets' hashes (which splits most sections that differ only in
//! what they call); each run of equal hashes is split by exact comparison of the constant parts; then every class
//! is split by its members' targets' classes, again and again, until no class splits.
//!
//! The candidates stay in one array (`order`) where each class is a contiguous range, identified by the position
//! of its first member, which does not move once the class exists. A round reads the classes of the round before
//! (`class`, written only between rounds), so the classes split on several threads are the same on any number.

use super::Candidates;
use super::keys::{self, FIXED, Keys};
use crate::args::Config;
use crate::gc::Liveness;
use crate::index::SecIdx;
use crate::resolve::Resolved;
use rayon::prelude::*;

/// The classes of more than one section: candidate numbers, each class's leader first (`with_leader`) and the others
/// in input order, the classes in their leaders' input order.
pub fn classes(
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    cands: &Candidates,
    keys: Keys,
) -> Vec<Vec<u32>> {
    let cx = keys::Cx { config, res, live };
    let n = cands.list.len();
    let t = crate::timing::span("mix hashes");
    let hash = mixed_hashes(&keys);
    drop(t);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_unstable_by_key(|&c| (hash[c as usize], c));
    // Runs of equal hashes, split by their constant parts.
    let mut runs = Vec::new();
    let mut begin = 0;
    for p in 1..=n {
        if p == n || hash[order[p] as usize] != hash[order[begin] as usize] {
            if p - begin > 1 {
                runs.push(begin..p);
            }
            begin = p;
        }
    }
    let constant = |a: u32, b: u32| keys::constant_equal(cx, cands, a, b);
    let mut class: Vec<u32> = vec![0; n];
    for (p, &c) in order.iter().enumerate() {
        class[c as usize] = p as u32;
    }
    let t = crate::timing::span("split by constant parts");
    let mut groups = split_all(&mut order, &runs, &mut class, &constant);
    drop(t);
    let _t = crate::timing::span("split by targets");
    // Then by their targets' classes, to the fixed point.
    loop {
        let prev = &class.clone();
        let variable = |a: u32, b: u32| {
            let (x, y) = (keys.refs_of(a), keys.refs_of(b));
            let id = |r: u32| if r & FIXED != 0 { r } else { prev[r as usize] };
            x.len() == y.len() && x.iter().zip(y).all(|(&r, &s)| id(r) == id(s))
        };
        let (next, split) = split_all_counting(&mut order, &groups, &mut class, &variable);
        groups = next;
        if !split {
            break;
        }
    }
    let mut out: Vec<Vec<u32>> = groups
        .into_iter()
        .map(|g| with_leader(res, cands, &order[g]))
        .collect();
    out.sort_unstable_by_key(|g| g[0]);
    out
}

/// A class (in input order) with its leader first: the first member of the largest alignment. Alignment is not
/// compared (lld raises the leader's instead), and the leader's place must suit every member's.
fn with_leader(res: &Resolved, cands: &Candidates, class: &[u32]) -> Vec<u32> {
    let align = |c: u32| {
        let (f, s) = cands.list[c as usize];
        res.objects[f as usize].sec(SecIdx(s)).align()
    };
    let mut out = class.to_vec();
    let mut lead = 0;
    for (k, &c) in class.iter().enumerate() {
        if align(c) > align(class[lead]) {
            lead = k;
        }
    }
    out[..=lead].rotate_right(1);
    out
}

/// Each candidate's hash: its constant part's, plus its targets' (lld does two such rounds).
fn mixed_hashes(keys: &Keys) -> Vec<u64> {
    let mut hash = keys.hash.clone();
    for _ in 0..2 {
        let prev = &hash;
        hash = (0..prev.len() as u32)
            .into_par_iter()
            .map(|c| {
                keys.refs_of(c).iter().fold(prev[c as usize], |h, &r| {
                    let t = if r & FIXED != 0 {
                        u64::from(r)
                    } else {
                        prev[r as usize]
                    };
                    h.wrapping_add(t)
                })
            })
            .collect();
    }
    hash
}

/// Splits each of `ranges` (of `order`, disjoint, in order) by `equal`; returns the resulting classes of more than
/// one member, with `class` updated.
fn split_all(
    order: &mut [u32],
    ranges: &[std::ops::Range<usize>],
    class: &mut [u32],
    equal: &(dyn Fn(u32, u32) -> bool + Sync),
) -> Vec<std::ops::Range<usize>> {
    split_all_counting(order, ranges, class, equal).0
}

/// [`split_all`], and whether any range was split.
fn split_all_counting(
    order: &mut [u32],
    ranges: &[std::ops::Range<usize>],
    class: &mut [u32],
    equal: &(dyn Fn(u32, u32) -> bool + Sync),
) -> (Vec<std::ops::Range<usize>>, bool) {
    // The ranges as disjoint slices, split on all threads.
    let mut slices: Vec<(usize, &mut [u32])> = Vec::with_capacity(ranges.len());
    let mut rest = order;
    let mut at = 0;
    for r in ranges {
        let (_, tail) = rest.split_at_mut(r.start - at);
        let (mine, tail) = tail.split_at_mut(r.len());
        slices.push((r.start, mine));
        rest = tail;
        at = r.end;
    }
    let parallel = crate::par::worth_parallel(order_len(ranges));
    let parts: Vec<Vec<usize>> = if parallel {
        slices
            .par_iter_mut()
            .map(|(_, s)| segregate(s, equal))
            .collect()
    } else {
        slices
            .iter_mut()
            .map(|(_, s)| segregate(s, equal))
            .collect()
    };
    let mut groups = Vec::new();
    let mut split = false;
    for ((base, slice), cuts) in slices.iter().zip(&parts) {
        split |= cuts.len() > 1;
        for (k, &from) in cuts.iter().enumerate() {
            let to = cuts.get(k + 1).copied().unwrap_or(slice.len());
            for &c in &slice[from..to] {
                class[c as usize] = (base + from) as u32;
            }
            if to - from > 1 {
                groups.push(base + from..base + to);
            }
        }
    }
    (groups, split)
}

fn order_len(ranges: &[std::ops::Range<usize>]) -> usize {
    ranges.iter().map(|r| r.len()).sum()
}

/// Reorders `s` so that members equal to each other (by `equal` with the first of each group) are contiguous,
/// keeping their order; returns where each group starts.
fn segregate(s: &mut [u32], equal: &(dyn Fn(u32, u32) -> bool + Sync)) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut begin = 0;
    let mut other = Vec::new();
    while begin < s.len() {
        cuts.push(begin);
        let head = s[begin];
        let mut mid = begin + 1;
        other.clear();
        for i in begin + 1..s.len() {
            if equal(head, s[i]) {
                s[mid] = s[i];
                mid += 1;
            } else {
                other.push(s[i]);
            }
        }
        s[mid..].copy_from_slice(&other);
        begin = mid;
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::segregate;

    /// Equal members become contiguous, each group in its members' order, the groups in their first members'.
    #[test]
    fn segregate_keeps_order_within_and_between_groups() {
        let mut s = [10, 21, 12, 31, 23, 14];
        let cuts = segregate(&mut s, &|a, b| a / 10 == b / 10);
        assert_eq!(s, [10, 12, 14, 21, 23, 31]);
        assert_eq!(cuts, [0, 3, 5]);
        let mut one = [5];
        assert_eq!(segregate(&mut one, &|_, _| false), [0]);
    }
}
