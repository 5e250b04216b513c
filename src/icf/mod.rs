//! Pass 5b: identical code folding (`--icf=all`, `--icf=safe`), after gc and before the relocation scan.
//!
//! Input sections that are provably interchangeable are folded into one: one of each class (the leader: the first
//! in input order of the largest alignment) is placed, and the others are not, their symbols taking the leader's
//! section at the same offset. Two sections are identical when their flags, output section, contents and
//! relocations (offset, type, and target) are; two relocation targets are equal when they are the same symbol with
//! the same addend, or equal values in sections that are themselves identical, which makes the relation recursive:
//! the classes are found by refinement to a fixed point (`partition`), as lld does. The candidates and the sections
//! whose address is significant are chosen by lld's rules (`significance`).
//!
//! The result is in `Liveness`: a folded section is no longer live (so the scan, `.eh_frame` and the writer skip
//! it, as do the `SHF_LINK_ORDER` sections that describe it), and `Liveness::folded` names its leader, which the
//! layout gives its place to (`layout::layout`), so every symbol, section-symbol relocation and debug reference
//! into it lands in the leader.

mod keys;
mod partition;
mod significance;

use crate::args::{Config, Icf};
use crate::diag::Result;
use crate::gc::Liveness;
use crate::index::{FileId, NONE, SecIdx};
use crate::layout::rules::output_section_of;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use object::elf as E;

/// The sections that may be folded, in input order, and each section's number among them.
pub struct Candidates {
    /// (file, section), in input order.
    pub list: Vec<(u32, u32)>,
    /// Per file, per section: the candidate number, or `NONE`.
    pub index: Vec<Vec<u32>>,
    /// Per candidate: its output section by the rules, and its script statement (0 without a script).
    pub out: Vec<(&'static [u8], u32)>,
}

/// Folds the identical sections of `live` (`config.icf` says which may be folded).
pub fn fold(config: &Config, res: &Resolved, live: &mut Liveness) -> Result<()> {
    debug_assert!(config.icf != Icf::None);
    let span = crate::timing::span;
    let unique = {
        let _t = span("address-significant sections");
        significance::unique_sections(config, res, live)?
    };
    let cands = {
        let _t = span("candidates");
        candidates(config, res, live, &unique)
    };
    drop(unique);
    let keys = {
        let _t = span("hash sections");
        keys::section_keys(config, res, live, &cands)?
    };
    let classes = {
        let _t = span("refine classes");
        partition::classes(config, res, live, &cands, keys)
    };
    if config.print_icf_sections {
        print_classes(res, &cands, &classes);
    }
    for group in &classes {
        let (lf, ls) = cands.list[group[0] as usize];
        for &c in &group[1..] {
            let (f, s) = cands.list[c as usize];
            live.live[f as usize][s as usize] = false;
            live.folded.push((
                FileId(f),
                SecIdx::new(s as usize),
                FileId(lf),
                SecIdx::new(ls as usize),
            ));
        }
    }
    live.folded.sort_unstable_by_key(|&(f, s, _, _)| (f, s));
    drop_link_order_dependents(res, live);
    Ok(())
}

/// The `SHF_LINK_ORDER` sections that describe a folded section (`__patchable_function_entries`, sanitizer
/// metadata) go with it, as lld drops them: its leader's describe the code that stays.
fn drop_link_order_dependents(res: &Resolved, live: &mut Liveness) {
    let mut k = 0;
    while k < live.folded.len() {
        let f = live.folded[k].0;
        let end = k + live.folded[k..].partition_point(|x| x.0 == f);
        let folded: Vec<u32> = live.folded[k..end].iter().map(|x| x.1.0).collect();
        let o = &res.objects[f.index()];
        for (s, sec) in o.secs() {
            let link = sec.shdr.sh_link.get(crate::elf::LE);
            if sec.flags() & E::SHF_LINK_ORDER as u64 != 0 && folded.binary_search(&link).is_ok() {
                live.live[f.index()][s.index()] = false;
            }
        }
        k = end;
    }
}

/// The candidates: live, allocated, read-only sections copied whole (lld's rules: not `SHF_LINK_ORDER`, not
/// `.init`/`.fini`, not named like a C identifier, which `__start_`/`__stop_` symbols may enumerate), neither kept
/// by a script's `KEEP` nor `SHF_GNU_RETAIN`, and not `unique` (address-significant, or with an LSDA).
fn candidates(
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    unique: &[Vec<bool>],
) -> Candidates {
    let script = config.sections.as_deref();
    type Listed = Vec<(u32, (&'static [u8], u32))>;
    let per_file: Vec<Listed> = res.runs.map(|f| {
        let f = f.index();
        let o = &res.objects[f];
        let mut list = Vec::new();
        if !res.object_live[f] {
            return list;
        }
        for (s, sec) in o.secs() {
            let s = s.index();
            let flags = sec.flags();
            let refused = E::SHF_WRITE | E::SHF_LINK_ORDER | E::SHF_GNU_RETAIN;
            if !live.live[f][s]
                || unique[f][s]
                || sec.kind != SectionKind::Regular
                || flags & E::SHF_ALLOC as u64 == 0
                || flags & refused as u64 != 0
                || script.is_some_and(|sc| sc.keeps(live.script[f][s]))
            {
                continue;
            }
            let name = o.sec_name(s);
            if name == b".init" || name == b".fini" || o.c_ident_secs.contains(&(s as u32)) {
                continue;
            }
            let stmt = live.script.get(f).map_or(0, |v| v[s]);
            list.push((s as u32, (output_section_of(name, &o.name), stmt)));
        }
        list
    });
    let (mut list, mut out) = (Vec::new(), Vec::new());
    let mut index = Vec::with_capacity(per_file.len());
    for (f, secs) in per_file.into_iter().enumerate() {
        let mut idx = vec![NONE; res.objects[f].sections.len()];
        for (s, o) in secs {
            idx[s as usize] = list.len() as u32;
            list.push((f as u32, s));
            out.push(o);
        }
        index.push(idx);
    }
    Candidates { list, index, out }
}

/// `--print-icf-sections`, in lld's words, on standard output: each class of more than one section, its leader
/// first; the classes in their leaders' input order.
fn print_classes(res: &Resolved, cands: &Candidates, classes: &[Vec<u32>]) {
    use std::io::Write;
    let name = |c: u32| {
        let (f, s) = cands.list[c as usize];
        let o = &res.objects[f as usize];
        format!(
            "{}:({})",
            o.name,
            String::from_utf8_lossy(o.sec_name(s as usize))
        )
    };
    let mut out = String::new();
    for group in classes {
        out += &format!("selected section {}\n", name(group[0]));
        for &c in &group[1..] {
            out += &format!("  removing identical section {}\n", name(c));
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
}
