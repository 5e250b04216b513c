//! Layout pass: input sections placed in their output sections. Each file's sections form one block per output
//! section (in parallel), and the blocks follow each other in the files' load order (`FileOrder`, a prefix sum),
//! in `.text` group by group as GNU ld's default script orders them (`rules::text_group`); sorted arrays
//! (`.init_array.N`) and `SHF_LINK_ORDER` sections are then placed in their own orders, ties in load order.

use super::eh_frame::eh_block_size;
use super::order::SectionOrder;
use super::output_sections::SectionMap;
use super::rules::{SORTED_NAMES, TEXT_MAIN, TEXT_SORTED, init_priority};
use super::{EhRecords, MergeGroup, OutputSection, Part};
use crate::elf::{LE, align_up};
use crate::index::{FileId, NONE, OsecId, SecIdx};
use crate::load_order::FileOrder;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use object::elf as E;

/// Where each placed input section is.
pub struct Placement {
    /// Per file, per section: the output section of an input section placed whole (`NONE` if not).
    pub place_osec: Vec<Vec<OsecId>>,
    /// Per file, per section: its offset in its output section's run of input sections.
    pub sec_off: Vec<Vec<u64>>,
    /// Per file, per section: the padding right before it (`Layout::pads`).
    pub pads: Vec<Vec<u16>>,
    /// Per output section: the size of its input sections.
    pub cursor: Vec<u64>,
    /// With a `SECTIONS` script: per output section, its input sections in placing order (`script::script_lists`).
    pub script_lists: Vec<Vec<super::script::ScriptInput>>,
}

pub fn place_inputs(
    (res, order_of_files): (&Resolved, &FileOrder),
    osecs: &mut [OutputSection],
    map: &SectionMap,
    eh_records: &EhRecords,
    merges: &[MergeGroup],
    script: Option<(&crate::script::sections::SectionsScript, &[Vec<u32>])>,
    order: Option<&SectionOrder>,
) -> Placement {
    let objects = &res.objects;
    let SectionMap {
        sec_osec,
        has_inputs,
        script_desc,
        ..
    } = map;
    let by_script = |i: usize| script_desc.get(i).is_some_and(|&d| d != crate::index::NONE);
    let sorted_kind = sorted_kinds(osecs, script_desc);
    // Per file: where each section goes, the padding before it in its block, the file's blocks, and the output
    // sections where a padding did not fit 16 bits.
    type FileBlocks = (Vec<OsecId>, Vec<u64>, Vec<u16>, Vec<Block>, Vec<OsecId>);
    let per_file: Vec<FileBlocks> = res.runs.map(|f| {
        let o = &objects[f.index()];
        let groups = &map.text_groups[f.index()];
        let mut place_osec = vec![OsecId::NONE; o.sections.len()];
        let mut offsets = vec![0u64; o.sections.len()];
        let mut pads = vec![0u16; o.sections.len()];
        let mut blocks: Vec<Block> = Vec::new();
        let mut wide = Vec::new();
        for (s, sec) in o.secs() {
            let osec = sec_osec[f.index()][s.index()];
            if osec.is_none()
                || sec.kind == SectionKind::Merge
                || sorted_kind[osec.index()].is_some()
                || by_script(osec.index())
                || order.is_some_and(|o| o.rank(f, s) != NONE)
            {
                continue;
            }
            let size = if sec.kind == SectionKind::EhFrame {
                eh_block_size(eh_records.get(f, s))
            } else {
                sec.size()
            };
            let group = text_group_of(groups, s);
            let i = match blocks.iter().position(|b| b.holds(osec, group, s)) {
                Some(i) => i,
                None => {
                    blocks.push(Block {
                        osec,
                        group,
                        first: s,
                        size: 0,
                        align: 1,
                    });
                    blocks.len() - 1
                }
            };
            // .eh_frame records are 4-byte multiples and must follow each other without gaps: a zero
            // word between them reads as the terminator to unwinders walking from __EH_FRAME_BEGIN__.
            let align = if sec.kind == SectionKind::EhFrame {
                sec.align().min(4)
            } else {
                sec.align()
            };
            let blk = &mut blocks[i];
            let off = align_up(blk.size, align);
            (place_osec[s.index()], offsets[s.index()]) = (osec, off);
            match u16::try_from(off - blk.size) {
                Ok(pad) => pads[s.index()] = pad,
                Err(_) => wide.push(osec),
            }
            blk.size = off.saturating_add(size);
            blk.align = blk.align.max(align);
        }
        (place_osec, offsets, pads, blocks, wide)
    });
    let mut place_osec: Vec<Vec<OsecId>> = Vec::with_capacity(objects.len());
    let mut sec_off: Vec<Vec<u64>> = Vec::with_capacity(objects.len());
    let mut pads: Vec<Vec<u16>> = Vec::with_capacity(objects.len());
    let mut blocks: Vec<Vec<Block>> = Vec::with_capacity(objects.len());
    let mut pads_known = vec![true; osecs.len()];
    for (p, o, pad, bl, wide) in per_file {
        place_osec.push(p);
        sec_off.push(o);
        pads.push(pad);
        blocks.push(bl);
        for osec in wide {
            pads_known[osec.index()] = false;
        }
    }
    let mut cursor = vec![0u64; osecs.len()];
    // The sections `--symbol-ordering-file` orders go first, before every file's block.
    let ordered = order.map(|order| {
        place_ordered(
            (res, order_of_files),
            order,
            osecs,
            map,
            &sorted_kind,
            &mut cursor,
            &mut pads_known,
        )
    });
    let file_base = block_bases(
        (res, order_of_files),
        osecs,
        &blocks,
        &map.text_groups,
        &mut cursor,
    );
    // Each block's base added to its sections' offsets, and the padding before the block to its first section's.
    let mut offs_pads: Vec<(&mut Vec<u64>, &mut Vec<u16>)> =
        sec_off.iter_mut().zip(pads.iter_mut()).collect();
    let wide: Vec<Vec<OsecId>> = res.runs.map_mut(&mut offs_pads, |f, (offs, pads)| {
        let (p, bases) = (&place_osec[f.index()], &file_base[f.index()]);
        let (bl, groups) = (&blocks[f.index()], &map.text_groups[f.index()]);
        let mut first = vec![true; bases.len()];
        let mut wide = Vec::new();
        for (s, ((off, pad), &osec)) in offs.iter_mut().zip(pads.iter_mut()).zip(p).enumerate() {
            if osec.is_none() {
                continue;
            }
            let (s, group) = (SecIdx::new(s), text_group_of(groups, SecIdx::new(s)));
            if let Some(k) = bl.iter().position(|b| b.holds(osec, group, s)) {
                let (_, base, gap) = bases[k];
                *off = off.saturating_add(base);
                if std::mem::take(&mut first[k]) {
                    match u16::try_from(*pad as u64 + gap) {
                        Ok(v) => *pad = v,
                        Err(_) => wide.push(osec),
                    }
                }
            }
        }
        wide
    });
    drop(offs_pads);
    for osec in wide.into_iter().flatten() {
        pads_known[osec.index()] = false;
    }
    for (f, s, osec, off, pad) in ordered.into_iter().flatten() {
        place_osec[f.index()][s.index()] = osec;
        sec_off[f.index()][s.index()] = off;
        pads[f.index()][s.index()] = pad;
    }
    for (i, o) in osecs.iter_mut().enumerate() {
        if cursor[i] > 0 || has_inputs[i] {
            o.parts.insert(0, Part::Inputs);
            o.pads_known = pads_known[i];
        }
    }
    let mut placement = Placement {
        place_osec,
        sec_off,
        pads,
        cursor,
        script_lists: Vec::new(),
    };
    if let Some((sc, selection)) = script {
        place_script_inputs(
            (res, order_of_files),
            osecs,
            map,
            eh_records,
            (sc, selection),
            &mut placement,
            order,
        );
    }
    place_sorted_arrays(
        (res, order_of_files),
        osecs,
        map,
        &sorted_kind,
        &mut placement,
    );
    place_link_ordered((res, order_of_files), osecs, &mut placement);
    add_merged(osecs, merges);
    placement
}

/// A file's input sections of one output section (of one group of `.text`'s, `rules::text_group`), placed
/// together; a section of `.text.sorted.*` is a block of its own, sorted by name among the others.
struct Block {
    osec: OsecId,
    group: u8,
    /// Its first section (its only one in `TEXT_SORTED`).
    first: SecIdx,
    size: u64,
    align: u64,
}

impl Block {
    /// Whether section `s`, of output section `osec` and `group`, goes in this block.
    fn holds(&self, osec: OsecId, group: u8, s: SecIdx) -> bool {
        self.osec == osec && self.group == group && (group != TEXT_SORTED || self.first == s)
    }
}

/// The group of section `s` among `.text`'s inputs, given its file's `SectionMap::text_groups`.
fn text_group_of(groups: &[(SecIdx, u8)], s: SecIdx) -> u8 {
    if groups.is_empty() {
        return TEXT_MAIN;
    }
    groups
        .binary_search_by_key(&s, |g| g.0)
        .map_or(TEXT_MAIN, |k| groups[k].1)
}

/// Per file, per block: (output section, offset, padding before it). The blocks follow each other in the files'
/// load order (`FileOrder`); in `.text`, group by group (`rules::text_group`), as GNU ld's default script places
/// them.
fn block_bases(
    (res, order): (&Resolved, &FileOrder),
    osecs: &mut [OutputSection],
    blocks: &[Vec<Block>],
    text_groups: &[Vec<(SecIdx, u8)>],
    cursor: &mut [u64],
) -> Vec<Vec<(OsecId, u64, u64)>> {
    let mut file_base: Vec<Vec<(OsecId, u64, u64)>> = (blocks.iter())
        .map(|bl| vec![(OsecId::NONE, 0, 0); bl.len()])
        .collect();
    let mut place = |f: FileId, k: usize| {
        let b = &blocks[f.index()][k];
        let o = &mut osecs[b.osec.index()];
        o.align = o.align.max(b.align);
        let c = align_up(cursor[b.osec.index()], b.align);
        file_base[f.index()][k] = (b.osec, c, c - cursor[b.osec.index()]);
        cursor[b.osec.index()] = c.saturating_add(b.size);
    };
    if text_groups.iter().all(|g| g.is_empty()) {
        for f in order.files(blocks.len()) {
            (0..blocks[f.index()].len()).for_each(|k| place(f, k));
        }
        return file_base;
    }
    // Per group: its blocks, (file, block).
    let mut groups: Vec<Vec<(FileId, usize)>> = vec![Vec::new(); TEXT_MAIN as usize + 1];
    for f in order.files(blocks.len()) {
        for (k, b) in blocks[f.index()].iter().enumerate() {
            groups[b.group as usize].push((f, k));
        }
    }
    for (group, mut in_group) in groups.into_iter().enumerate() {
        if group == TEXT_SORTED as usize {
            let name = |&(f, k): &(FileId, usize)| {
                res.objects[f.index()].sec_name(blocks[f.index()][k].first.index())
            };
            in_group.sort_by(|a, b| name(a).cmp(name(b)));
        }
        for (f, k) in in_group {
            place(f, k);
        }
    }
    file_base
}

/// The sections `order` ranks, placed from the start of their output sections in rank order (`cursor` advanced
/// past them): (file, section, output section, offset, padding before it).
fn place_ordered(
    (res, files): (&Resolved, &FileOrder),
    order: &SectionOrder,
    osecs: &mut [OutputSection],
    map: &SectionMap,
    sorted_kind: &[Option<usize>],
    cursor: &mut [u64],
    pads_known: &mut [bool],
) -> Vec<(FileId, SecIdx, OsecId, u64, u16)> {
    let by_script = |i: usize| (map.script_desc.get(i)).is_some_and(|&d| d != crate::index::NONE);
    let mut ranked: Vec<(u32, FileId, SecIdx, OsecId)> = res.runs.flat_map(|f| {
        let osec_of = &map.sec_osec[f.index()];
        (order.rank[f.index()].iter().enumerate())
            .filter(|&(s, &r)| {
                let osec = osec_of[s];
                r != NONE
                    && osec.is_some()
                    && sorted_kind[osec.index()].is_none()
                    && !by_script(osec.index())
            })
            .map(move |(s, &r)| (r, f, SecIdx::new(s), osec_of[s]))
    });
    ranked.sort_unstable_by_key(|e| (e.0, files.rank(e.1), e.2));
    let mut out = Vec::with_capacity(ranked.len());
    for (_, f, s, osec) in ranked {
        let sec = res.objects[f.index()].sec(s);
        let o = &mut osecs[osec.index()];
        let align = sec.align();
        o.align = o.align.max(align);
        let c = &mut cursor[osec.index()];
        let off = align_up(*c, align);
        let pad = u16::try_from(off - *c).unwrap_or_else(|_| {
            pads_known[osec.index()] = false;
            0
        });
        out.push((f, s, osec, off, pad));
        *c = off.saturating_add(sec.size());
    }
    out
}

/// Which of `SORTED_NAMES` each output section is (a script's sections have the script's order instead).
fn sorted_kinds(osecs: &[OutputSection], script_desc: &[u32]) -> Vec<Option<usize>> {
    let by_script = |i: usize| script_desc.get(i).is_some_and(|&d| d != crate::index::NONE);
    (osecs.iter().enumerate())
        .map(|(i, o)| {
            (!by_script(i))
                .then(|| SORTED_NAMES.iter().position(|&n| n == &o.name[..]))
                .flatten()
        })
        .collect()
}

/// A script's output sections: their inputs listed in statement order and placed one after another until the
/// addresses pass places them by the commands; a section with inputs or commands of its own is kept.
fn place_script_inputs(
    (res, files): (&Resolved, &FileOrder),
    osecs: &mut [OutputSection],
    map: &SectionMap,
    eh_records: &EhRecords,
    (sc, selection): (&crate::script::sections::SectionsScript, &[Vec<u32>]),
    placement: &mut Placement,
    order: Option<&SectionOrder>,
) {
    let script_desc = &map.script_desc;
    let t = crate::timing::span("script input lists");
    let lists = super::script::script_lists(
        (res, files, sc),
        selection,
        (&map.sec_osec, script_desc),
        (&map.synth, &map.synth_stmts),
        order,
        eh_records,
    );
    drop(t);
    let _t = crate::timing::span("provisional offsets");
    let p = placement;
    super::script::provisional_offsets(
        &lists,
        osecs,
        (&mut p.sec_off, &mut p.place_osec, &mut p.cursor),
    );
    for (i, o) in osecs.iter_mut().enumerate() {
        let d = script_desc[i];
        if d == crate::index::NONE {
            continue;
        }
        // Made before the inputs were read, not for one.
        o.parts.retain(|p| !matches!(p, Part::Inputs));
        // Kept with inputs, or with commands of its own (`. = . + SIZE`, symbols to define at it); the linker's
        // own contents keep it only when they are not empty.
        let inputs = lists[i].iter().any(|e| !e.is_linker_made());
        if inputs || sc.has_own_commands(d as usize) {
            placed_in_order(o);
        }
    }
    p.script_lists = lists;
}

/// Sorted init/fini arrays (`sorted_kind[osec]`: which of `SORTED_NAMES` an output section is): priority first,
/// then load order; unnumbered sections last.
fn place_sorted_arrays(
    (res, files): (&Resolved, &FileOrder),
    osecs: &mut [OutputSection],
    map: &SectionMap,
    sorted_kind: &[Option<usize>],
    p: &mut Placement,
) {
    let objects = &res.objects;
    let SectionMap {
        sec_osec, by_name, ..
    } = map;
    let Placement {
        place_osec,
        sec_off,
        cursor,
        ..
    } = p;
    let sorted_names = SORTED_NAMES;
    // Found in one parallel pass, not a walk over every section per array name.
    let sorted_inputs: Vec<(usize, u32, FileId, SecIdx)> = res.runs.flat_map(|f| {
        let o = &objects[f.index()];
        let sec_osec = &sec_osec[f.index()];
        (0..o.sections.len()).filter_map(move |s| {
            let osec = sec_osec[s];
            if osec.is_none() {
                return None;
            }
            let k = sorted_kind[osec.index()]?;
            Some((
                k,
                init_priority(o.sec_name(s)).unwrap_or(65536),
                f,
                SecIdx::new(s),
            ))
        })
    });
    for (k, name) in sorted_names.into_iter().enumerate() {
        // A script's section of that name has the script's order (`place_script_inputs`).
        let Some(&osec) = by_name
            .get(name)
            .filter(|o| sorted_kind[o.index()] == Some(k))
        else {
            continue;
        };
        let mut list: Vec<(u32, u32, FileId, SecIdx)> = sorted_inputs
            .iter()
            .filter(|x| x.0 == k)
            .map(|&(_, prio, f, s)| (prio, files.rank(f), f, s))
            .collect();
        list.sort_unstable();
        let mut off = 0u64;
        let o = &mut osecs[osec.index()];
        for &(_, _, f, s) in &list {
            let sec = objects[f.index()].sec(s);
            off = align_up(off, sec.align());
            o.align = o.align.max(sec.align());
            place_osec[f.index()][s.index()] = osec;
            sec_off[f.index()][s.index()] = off;
            off += sec.size();
        }
        cursor[osec.index()] = off;
        placed_in_order(o);
    }
}

/// SHF_LINK_ORDER inputs (`__patchable_function_entries`, sanitizer tables) follow the order of the sections
/// they are linked to, as in GNU ld and lld; other inputs of the same output section go first, in load order.
fn place_link_ordered(
    (res, files): (&Resolved, &FileOrder),
    osecs: &mut [OutputSection],
    p: &mut Placement,
) {
    let objects = &res.objects;
    let Placement {
        place_osec,
        sec_off,
        cursor,
        ..
    } = p;
    let link_ordered: Vec<(OsecId, FileId, SecIdx)> = res.runs.flat_map(|f| {
        let o = &objects[f.index()];
        let place_osec = &place_osec[f.index()];
        o.secs().filter_map(move |(s, sec)| {
            let osec = place_osec[s.index()];
            (osec.is_some() && sec.flags() & E::SHF_LINK_ORDER as u64 != 0).then_some((osec, f, s))
        })
    });
    let mut lo_osecs: Vec<OsecId> = link_ordered.iter().map(|x| x.0).collect();
    lo_osecs.sort_unstable();
    lo_osecs.dedup();
    for osec in lo_osecs {
        // Already in priority order (an `.init_array` input with SHF_LINK_ORDER): keep that order.
        if osecs[osec.index()]
            .parts
            .iter()
            .any(|p| matches!(p, Part::Sorted))
        {
            continue;
        }
        // (linked?, linked section's output section (NONE if dropped) and offset, file, section), in load order.
        let mut list: Vec<(bool, OsecId, u64, FileId, SecIdx)> = Vec::new();
        for f in files.files(objects.len()).map(FileId::index) {
            for (s, sec) in objects[f].secs() {
                if place_osec[f][s.index()] != osec || sec.kind == SectionKind::EhFrame {
                    continue;
                }
                let linked = sec.flags() & E::SHF_LINK_ORDER as u64 != 0;
                let (lo, loff) = if linked {
                    let link = sec.shdr.sh_link.get(LE) as usize;
                    place_osec[f]
                        .get(link)
                        .map_or((OsecId::NONE, 0), |&p| (p, sec_off[f][link]))
                } else {
                    (OsecId(0), 0)
                };
                list.push((linked, lo, loff, FileId::new(f), s));
            }
        }
        list.sort_by_key(|&(linked, lo, loff, _, _)| (linked, lo, loff));
        let mut off = 0u64;
        let o = &mut osecs[osec.index()];
        for &(_, _, _, f, s) in &list {
            let sec = objects[f.index()].sec(s);
            off = align_up(off, sec.align());
            sec_off[f.index()][s.index()] = off;
            off += sec.size();
        }
        cursor[osec.index()] = off;
        placed_in_order(o);
    }
}

/// An output section whose input sections were placed in an order of their own (`Part::Sorted`), with their own
/// padding.
fn placed_in_order(o: &mut OutputSection) {
    o.parts
        .retain(|p| !matches!(p, Part::Inputs | Part::Sorted));
    o.parts.insert(0, Part::Sorted);
    o.pads_known = false;
}

/// A merged output section keeps SHF_MERGE with its inputs' entry size, as GNU ld does, unless other inputs (an
/// input section not merged, the linker's own contents) or another entry size share it; the merge groups become
/// its last parts.
fn add_merged(osecs: &mut [OutputSection], merges: &[MergeGroup]) {
    for m in merges {
        let o = &mut osecs[m.osec.index()];
        let plain = o.plain_inputs
            || (o.parts.iter())
                .any(|p| !matches!(p, Part::Inputs | Part::Sorted | Part::Merged(_)));
        if plain || (o.entsize != 0 && o.entsize != m.entsize) {
            o.flags &= !(E::SHF_MERGE as u64 | E::SHF_STRINGS as u64);
            o.entsize = u64::MAX;
        } else if o.entsize != u64::MAX {
            o.entsize = m.entsize;
        }
    }
    for o in osecs.iter_mut() {
        if o.entsize == u64::MAX {
            o.entsize = 0;
        }
    }
    for (i, m) in merges.iter().enumerate() {
        osecs[m.osec.index()].parts.push(Part::Merged(i as u32));
        let o = &mut osecs[m.osec.index()];
        o.align = o.align.max(m.align);
    }
}
