//! COMDAT groups (pass 4c): which file's group of each signature is kept, and, for `gcc -g3`'s macro tables,
//! where a lost group's debug sections find their kept copy.

use crate::index::{FileId, NONE, SecIdx, SymId};
use crate::intern::{Interned, intern};
use crate::load_order::FileOrder;
use crate::names::Name;
use crate::par::{FileRuns, per_symbol};
use crate::parse::{GroupSig, ObjectFile};
use object::elf as E;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// The COMDAT decisions of a link.
pub struct Comdats {
    /// Per object, per section: discarded because another file's group of the same signature won.
    pub discarded: Vec<Vec<bool>>,
    /// Per object, its discarded debug sections that have a copy in the kept group ([`kept_copies`]).
    pub copies: Vec<Vec<(SecIdx, FileId, SecIdx)>>,
}

/// COMDAT groups: the first live file in load order with a signature keeps its group, as in GNU ld, which decides
/// as it loads each file; the others' member sections are discarded.
///
/// A group is keyed by its signature's global id when the signature symbol is one of the file's defined globals,
/// as for C++ inline functions, templates and vtables: no name is hashed or compared again (interning every
/// signature anew was a measurable part of clang-so's link). Other signatures (local symbols) are looked up among
/// the globals' names, and those that are no global's name are interned among themselves, with ids after them.
pub fn choose_comdats(
    runs: &FileRuns,
    order: &FileOrder,
    objects: &[ObjectFile],
    live: &[bool],
    object_ids: &[Vec<SymId>],
    names: &Interned,
) -> Comdats {
    let n = names.unique.len() as u32;
    // Few groups (none in C, a hundred or two in Rust) are not worth the pool's passes: c-gc's empty pass took
    // longer at sixteen threads than at one. A group is heavier than a table entry (a file's walk, a key, an
    // owner).
    let groups: usize = objects
        .iter()
        .zip(live)
        .filter(|(_, l)| **l)
        .map(|(o, _)| o.comdats.len())
        .sum();
    let serial;
    let runs = if !crate::par::worth_parallel(groups * 8) {
        serial = runs.serial();
        &serial
    } else {
        runs
    };
    let mut keyed: Vec<(Vec<SymId>, Vec<Name>)> = runs.map(|f| {
        let o = &objects[f.index()];
        if !live[f.index()] {
            return (Vec::new(), Vec::new());
        }
        let mut keys = Vec::with_capacity(o.comdats.len());
        let mut unnamed = Vec::new();
        for g in &o.comdats {
            // A linkonce section is keyed by its name, looked up as a local signature is (no global has it).
            let i = match g.sig {
                GroupSig::Symbol(i) => i as usize,
                GroupSig::Linkonce(_) => usize::MAX,
            };
            let k = i.wrapping_sub(o.first_global);
            // A `.symver` default definition is interned under a shorter name than its symbol's.
            let global = i != usize::MAX
                && i >= o.first_global
                && o.sym_shndx(i) != E::SHN_UNDEF as u32
                && !o.symvers.iter().any(|&(v, ..)| v as usize == k);
            let key = if global {
                object_ids[f.index()][k]
            } else {
                let name = Name::new(g.signature(o));
                names.lookup_name(name).unwrap_or_else(|| {
                    unnamed.push(name);
                    SymId::NONE
                })
            };
            keys.push(key);
        }
        (keys, unnamed)
    });
    // Signatures that name no symbol of the link get ids after the symbols' (rare: a group of local symbols).
    let mut unnamed = 0;
    if keyed.iter().any(|(_, u)| !u.is_empty()) {
        let lists: Vec<&[Name]> = keyed.iter().map(|(_, u)| &u[..]).collect();
        let others = intern(&lists);
        keyed
            .par_iter_mut()
            .zip(&others.ids)
            .for_each(|((keys, _), ids)| {
                let mut next = ids.iter();
                for key in keys.iter_mut().filter(|k| k.is_none()) {
                    *key = SymId(n + next.next().map_or(0, |id| id.0));
                }
            });
        unnamed = others.unique.len();
    }
    let owner: Vec<AtomicU32> = per_symbol(n as usize + unnamed, || AtomicU32::new(NONE));
    runs.for_each(|f| {
        for &g in &keyed[f.index()].0 {
            owner[g.index()].fetch_min(order.rank(f), Relaxed);
        }
    });
    // Per object, its discarded sections and the lost groups with a debug member (see `kept_copies`).
    let (discarded, lost): (Vec<_>, Vec<_>) = runs
        .map(|f| {
            let o = &objects[f.index()];
            let mut discarded = vec![false; o.sections.len()];
            let mut lost = Vec::new();
            let mut any = false;
            for (k, group) in o.comdats.iter().enumerate() {
                let kept = owner[(keyed[f.index()].0[k]).index()].load(Relaxed);
                if !live[f.index()] || kept != order.rank(f) {
                    for s in group.sections() {
                        discarded[s as usize] = true;
                        any = true;
                        if o.debug_secs.contains(&s) && live[f.index()] && lost.last() != Some(&k) {
                            lost.push(k);
                        }
                    }
                }
            }
            // A `SHF_LINK_ORDER` section outside the group whose section it follows (GCC 12's
            // `__patchable_function_entries` of an inline function) goes with that section, as in GNU ld and lld.
            if any && o.link_order {
                for (s, sec) in o.secs() {
                    let link = sec.shdr.sh_link.get(crate::elf::LE) as usize;
                    if sec.flags() & E::SHF_LINK_ORDER as u64 != 0
                        && discarded.get(link) == Some(&true)
                    {
                        discarded[s.index()] = true;
                    }
                }
            }
            (discarded, lost)
        })
        .into_iter()
        .unzip();
    let copies = kept_copies(order, objects, &keyed, &owner, &lost);
    Comdats { discarded, copies }
}

/// Per object, the debug sections (`.debug_*`, not allocated) of its groups that lost, each with the same-named
/// member of the group that won, when that has the same type and size: `(member, kept file, kept member)`, by
/// member. `gcc -g3` puts each header's `.debug_macro` part in a group of its own, and every unit's part imports
/// it by offset; GNU ld reads a debug section's reference to a lost member as one to the kept copy, where a
/// tombstone would make the import read the macros at offset 0. Code keeps its tombstones (as in lld): the kept
/// copy's own unit describes it. Only `-g3`'s macro groups and `-fdebug-types-section`'s type units have debug
/// members, so the matching is serial.
fn kept_copies(
    order: &FileOrder,
    objects: &[ObjectFile],
    keyed: &[(Vec<SymId>, Vec<Name>)],
    owner: &[AtomicU32],
    lost: &[Vec<usize>],
) -> Vec<Vec<(SecIdx, FileId, SecIdx)>> {
    let debug_member =
        |o: &ObjectFile, s: &SecIdx| o.debug_secs.contains(&s.0) && !o.sec(*s).is_alloc();
    let mut copies = vec![Vec::new(); objects.len()];
    if lost.iter().all(Vec::is_empty) {
        return copies;
    }
    // The winning group of each signature wanted, found in its file's list.
    let mut winner: HashMap<SymId, Option<(FileId, usize)>> = HashMap::new();
    for (f, ks) in lost.iter().enumerate() {
        for &k in ks {
            winner.insert(keyed[f].0[k], None);
        }
    }
    let owners: BTreeSet<FileId> = (winner.keys())
        .map(|key| owner[key.index()].load(Relaxed))
        .filter(|&rank| rank != NONE)
        .map(|rank| order.at(rank))
        .collect();
    for g in owners {
        for (k, key) in keyed[g.index()].0.iter().enumerate() {
            if let Some(w @ None) = winner.get_mut(key)
                && owner[key.index()].load(Relaxed) == order.rank(g)
            {
                *w = Some((g, k));
            }
        }
    }
    for (f, ks) in lost.iter().enumerate() {
        let o = &objects[f];
        for &k in ks {
            let Some(Some((g, kg))) = winner.get(&keyed[f].0[k]).copied() else {
                continue;
            };
            let w = &objects[g.index()];
            for s in o.comdats[k]
                .sections()
                .map(SecIdx)
                .filter(|s| debug_member(o, s))
            {
                let sec = o.sec(s);
                let copy = w.comdats[kg].sections().map(SecIdx).find(|&t| {
                    let kept = w.sec(t);
                    w.sec_name(t.index()) == o.sec_name(s.index())
                        && kept.sh_type() == sec.sh_type()
                        && kept.size() == sec.size()
                });
                if let Some(t) = copy {
                    copies[f].push((s, g, t));
                }
            }
        }
        copies[f].sort_unstable_by_key(|c| c.0);
    }
    copies
}
