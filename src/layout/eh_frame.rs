//! Layout pass: `.eh_frame` split into records (CIEs and FDEs), the FDEs of dead code dropped, and identical CIEs
//! shared.

use super::{EhRecord, EhRecords, NONE};
use crate::arch::{Arch, proof};
use crate::diag::{Errors, Result};
use crate::elf::{self, LE};
use crate::gc::Liveness;
use crate::index::{FileId, SecIdx};
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use rustc_hash::FxHashMap as HashMap;

/// Drops CIEs no kept FDE uses, and CIEs identical (bytes and relocation targets) to one earlier in load order,
/// whose FDEs then point at that one (GNU ld and lld do the same; C++ and Rust objects each repeat the same few
/// CIEs). Output offsets of the affected sections are recomputed.
pub fn dedup_cies(
    res: &Resolved,
    order: &crate::load_order::FileOrder,
    recs: &mut EhRecords,
) -> HashMap<(FileId, SecIdx, u64), (FileId, SecIdx, u64)> {
    type CieKey = (Vec<u8>, Vec<(u64, u32, u64, i64)>);
    // Per file, in parallel: drop the CIEs no kept FDE uses, and key the others by bytes and relocation targets.
    // (The whole pass was serial: most of clang-so's 14 ms "split .eh_frame".)
    type FileCies = (Vec<(SecIdx, u64, CieKey)>, Vec<SecIdx>);
    let per_file: Vec<FileCies> = res.runs.map_mut(&mut recs.0, |f, per_sec| {
        let o = &res.objects[f.index()];
        let mut keys = Vec::new();
        let mut changed = Vec::new();
        for (s, list) in per_sec.iter_mut() {
            if list.is_empty() {
                continue;
            }
            let used: std::collections::HashSet<u64> = list
                .iter()
                .filter(|r| !r.is_cie && r.out_off != NONE as u64)
                .map(|r| r.cie_in_off)
                .collect();
            let sec = o.sec(*s);
            for r in list.iter_mut() {
                // Terminators (4-byte zero records) stay where they are.
                if !r.is_cie || r.size <= 4 || r.out_off == NONE as u64 {
                    continue;
                }
                if !used.contains(&r.in_off) {
                    r.out_off = NONE as u64;
                    changed.push(*s);
                    continue;
                }
                let (start, end) = (r.in_off, r.in_off + r.size);
                let bytes = sec.data()[start as usize..end as usize].to_vec();
                let relocs = sec
                    .relas()
                    .iter()
                    .filter(|x| (start..end).contains(&x.r_offset.get(LE)))
                    .map(|x| {
                        let sym = x.r_sym(LE, false) as usize;
                        // Globals compare by their resolved id; locals are this file's own.
                        let local = (1u64 << 63) | u64::from(f.0) << 32 | sym as u64;
                        let target = match sym.checked_sub(o.first_global) {
                            Some(k) => res.object_ids[f.index()]
                                .get(k)
                                .map_or(local, |&g| u64::from(g.0)),
                            None => local,
                        };
                        (
                            x.r_offset.get(LE) - start,
                            x.r_type(LE, false),
                            target,
                            x.r_addend.get(LE),
                        )
                    })
                    .collect();
                keys.push((*s, r.in_off, (bytes, relocs)));
            }
        }
        (keys, changed)
    });
    // In load order, as the blocks are placed: the first CIE of each key is kept, later equal ones point at it
    // (an FDE's CIE is before it).
    let mut seen: HashMap<CieKey, (FileId, SecIdx, u64)> = HashMap::default();
    let mut redirect = HashMap::default();
    let mut per_file = per_file;
    // Per file: the sections that lost unused CIEs, and the duplicate CIEs dropped.
    type Changes = (Vec<SecIdx>, Vec<(SecIdx, u64)>);
    let mut changes: Vec<Changes> = Vec::new();
    changes.resize_with(per_file.len(), Default::default);
    for f in order.files(per_file.len()) {
        let (keys, changed) = std::mem::take(&mut per_file[f.index()]);
        let mut dropped = Vec::new();
        for (s, in_off, key) in keys {
            match seen.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    redirect.insert((f, s, in_off), *e.get());
                    dropped.push((s, in_off));
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((f, s, in_off));
                }
            }
        }
        changes[f.index()] = (changed, dropped);
    }
    // Drop the duplicates and lay out again the sections that lost records, in parallel.
    res.runs.for_each_mut(&mut recs.0, |f, per_sec| {
        let (changed, dropped) = &changes[f.index()];
        for (s, list) in per_sec.iter_mut() {
            let mut relayout = changed.contains(s);
            for r in list.iter_mut() {
                if r.is_cie && dropped.contains(&(*s, r.in_off)) {
                    r.out_off = NONE as u64;
                    relayout = true;
                }
            }
            if relayout {
                let mut cur = 0u64;
                for r in list.iter_mut() {
                    if r.out_off != NONE as u64 {
                        r.out_off = cur;
                        cur += r.size;
                    }
                }
            }
        }
    });
    redirect
}

pub fn eh_block_size(records: &[EhRecord]) -> u64 {
    records
        .iter()
        .filter(|r| r.out_off != NONE as u64)
        .map(|r| r.out_off + r.size)
        .max()
        .unwrap_or(0)
}

/// Splits every live `.eh_frame` into records and decides which are kept: an FDE is kept when the section its
/// first relocation points at is live; CIEs are kept when a kept FDE uses them.
///
/// The records are checked as they are read, since the writer and `.eh_frame_hdr` trust them: each length within
/// the section, each FDE's CIE pointer at a CIE before it, and each relocation inside one record's body (after
/// its length and CIE id, which the writer reads back), in offset order, as assemblers emit them.
pub fn split_eh_frames<A: Arch>(res: &Resolved, live: &Liveness) -> Result<EhRecords> {
    type PerFile = Vec<(SecIdx, Vec<EhRecord>)>;
    let out: Vec<std::result::Result<PerFile, String>> = res.runs.map(|f| {
        let o = &res.objects[f.index()];
        let mut per_sec = Vec::new();
        for (s, sec) in o.secs() {
            if sec.kind != SectionKind::EhFrame || !live.is_live(f, s) {
                continue;
            }
            let mut recs = split_section::<A>(res, live, f, s)
                .map_err(|(off, e)| format!("{}:(.eh_frame+{off:#x}): {e}", o.name))?;
            // Assign output offsets: kept records in order.
            let mut cur = 0u64;
            for r in recs.iter_mut() {
                if r.out_off != NONE as u64 {
                    r.out_off = cur;
                    cur += r.size;
                }
            }
            per_sec.push((s, recs));
        }
        Ok(per_sec)
    });
    crate::diag::collect(out.into_iter().map(|r| r.map_err(Errors::one))).map(EhRecords)
}

/// The records of `.eh_frame` section `s` of object `f`, or the offset of the first bad one and what is wrong.
fn split_section<A: Arch>(
    res: &Resolved,
    live: &Liveness,
    f: FileId,
    s: SecIdx,
) -> std::result::Result<Vec<EhRecord>, (usize, String)> {
    let sec = res.objects[f.index()].sec(s);
    let (d, relas) = (sec.data(), sec.relas());
    let mut recs: Vec<EhRecord> = Vec::new();
    let mut off = 0usize;
    let mut rel_i = 0usize;
    // The last CIE read: most FDEs use it, found without a search.
    let mut last_cie = usize::MAX;
    while off < d.len() {
        let len =
            elf::read_u32(d, off).ok_or((off, "truncated record length".to_string()))? as usize;
        if len == 0xffff_ffff {
            return Err((off, "64-bit .eh_frame records are not supported".into()));
        }
        let size = 4 + len;
        if off + size > d.len() {
            return Err((
                off,
                format!("record of {size} bytes extends past the section's end"),
            ));
        }
        if len == 0 {
            // Terminator: keep it only where it is (crtend.o).
            recs.push(EhRecord {
                in_off: off as u64,
                size: 4,
                out_off: 0,
                is_cie: true,
                cie_in_off: 0,
            });
            if relas
                .get(rel_i)
                .is_some_and(|r| (r.r_offset.get(LE) as usize) < off + 4)
            {
                return Err((off, "relocation in a terminator record".into()));
            }
            off += 4;
            continue;
        }
        if len < 4 {
            return Err((off, format!("record of {size} bytes is too short")));
        }
        let id = elf::read_u32(d, off + 4).unwrap_or(0);
        let is_cie = id == 0;
        let cie_in_off = if is_cie {
            0
        } else {
            let cie = (off + 4).checked_sub(id as usize);
            // CIEs come before their FDEs: the records so far are sorted by offset.
            let k = match cie {
                Some(c) if recs.get(last_cie).is_some_and(|r| r.in_off == c as u64) => {
                    Some(last_cie)
                }
                Some(c) => recs.binary_search_by_key(&(c as u64), |r| r.in_off).ok(),
                None => None,
            };
            match k {
                Some(k) if recs[k].is_cie && recs[k].size > 4 => recs[k].in_off,
                _ => return Err((off, "FDE's CIE pointer does not point to a CIE".into())),
            }
        };
        // This record's relocations: each field inside its body; the first is an FDE's pc_begin.
        let mut first = rel_i;
        while let Some(r) = relas.get(rel_i) {
            let at = r.r_offset.get(LE);
            if at >= (off + size) as u64 {
                break;
            }
            // Type 0, `NONE` in every ELF psABI, does nothing wherever it is: GNU ld's `-r` leaves one where it
            // dropped a duplicate COMDAT's FDE, at the record's start.
            if r.r_type(LE, false) == 0 && rel_i == first {
                first += 1;
                rel_i += 1;
                continue;
            }
            let width = (A::write_proof(r.r_type(LE, false)) & proof::WIDTH).max(1) as u64;
            if at < (off + 8) as u64 || at + width > (off + size) as u64 {
                return Err((
                    off,
                    format!(
                        "relocation at offset {at:#x} is not inside a record's body (relocations must be sorted)"
                    ),
                ));
            }
            rel_i += 1;
        }
        let mut keep = true;
        if !is_cie {
            keep = false;
            if let Some(r) = relas[first..rel_i].first()
                && let Some((tf, ts)) =
                    crate::gc::target_section(res, f, r.r_sym(LE, false) as usize)
            {
                keep = live.is_live(tf, ts);
            }
        }
        if is_cie {
            last_cie = recs.len();
        }
        recs.push(EhRecord {
            in_off: off as u64,
            size: size as u64,
            out_off: if keep { 0 } else { NONE as u64 },
            is_cie,
            cie_in_off,
        });
        off += size;
    }
    if let Some(r) = relas.get(rel_i) {
        return Err((
            d.len(),
            format!(
                "relocation at offset {:#x} is outside the section",
                r.r_offset.get(LE)
            ),
        ));
    }
    Ok(recs)
}
