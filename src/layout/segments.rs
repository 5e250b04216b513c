//! Layout pass: addresses and file offsets. Allocated sections are laid out in segment classes (each starting on
//! a page of its own), `.relr.dyn` is encoded once its places have addresses, non-allocated sections follow, and
//! the program headers are made.

use super::output_sections::SectionMap;
use super::place::Placement;
use super::rules::{Rules, segment_class};
use super::sizes::SectionHeaders;
use super::{Cx, OutputSection, Segment, Synth};
use crate::arch::Arch;
use crate::args::OutputKind;
use crate::elf::align_up;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use crate::scan::Scan;
use object::elf as E;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// The program headers and what else the addresses decide.
pub struct Segments {
    pub segments: Vec<Segment>,
    /// `.relr.dyn`'s entries.
    pub relr: Vec<u64>,
    pub file_size: u64,
    /// The section header table's file offset.
    pub shoff: u64,
    /// The TLS block's addresses and alignment.
    pub tls_start: u64,
    pub tls_end: u64,
    pub tls_align: u64,
}

pub fn assign_segments<A: Arch>(
    cx: &Cx,
    osecs: &mut [OutputSection],
    map: &SectionMap,
    headers: &SectionHeaders,
    place: &Placement,
    relr_got: &[u32],
) -> Segments {
    let Cx {
        config,
        res,
        scan,
        is_dynamic,
        ..
    } = *cx;
    let SectionMap { synth, interp, .. } = map;
    let synth = *synth;
    let SectionHeaders {
        keep, count: shndx, ..
    } = headers;
    let shndx = *shndx;
    let Placement {
        place_osec,
        sec_off,
        ..
    } = place;
    // Program headers: decide which exist, then assign addresses.
    let alloc: Vec<usize> = (0..osecs.len())
        .filter(|&i| keep[i] && osecs[i].is_alloc())
        .collect();
    let rules = Rules::of(config);
    let classes: Vec<u32> = alloc
        .iter()
        .map(|&i| segment_class(rules.rank(&osecs[i].name, osecs[i].sh_type, osecs[i].flags)))
        .collect();
    let mut load_classes: Vec<u32> = vec![0];
    for &c in &classes {
        if !load_classes.contains(&c) {
            load_classes.push(c);
        }
    }
    let has_tls = alloc.iter().any(|&i| osecs[i].is_tls());
    let notes: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].sh_type == E::SHT_NOTE)
        .collect();
    let has_relro = config.relro && load_classes.contains(&3);
    let has_eh_hdr = synth
        .get(Synth::EhFrameHdr)
        .is_some_and(|i| keep[i as usize]);
    let nphdr = (is_dynamic as usize) * 2 // PHDR, DYNAMIC
        + interp.is_some() as usize
        + load_classes.len()
        + notes.len()
        + has_tls as usize
        + has_relro as usize
        + has_eh_hdr as usize
        + 1; // GNU_STACK
    let base = if config.kind == OutputKind::Exec {
        A::IMAGE_BASE
    } else {
        0
    };
    let headers = 64 + 56 * nphdr as u64;
    // Segments start on a new maximum-size page; RELRO is protected up to the end of its common-size page.
    let (max_page, common_page) = (
        config.max_page_size,
        config.common_page_size.min(config.max_page_size),
    );
    // A PT_LOAD is aligned to the page size or to its most-aligned section, whichever is larger, so that a
    // PIE's load base (chosen by the kernel or ld.so as a multiple of p_align) keeps every section aligned.
    // Its file offset must then be congruent to its address modulo that alignment.
    let mut class_align: HashMap<u32, u64> = HashMap::default();
    for (k, &i) in alloc.iter().enumerate() {
        let a = class_align.entry(classes[k]).or_insert(max_page);
        *a = (*a).max(osecs[i].align.next_power_of_two());
    }
    // Addresses and file offsets of the allocated sections; per segment class (off, addr, file end, mem end),
    // and the file offset after the last allocated section.
    let place_alloc = |osecs: &mut [OutputSection]| {
        let mut off = headers;
        let mut addr = base + headers;
        let mut prev = 0u32;
        let mut seg_range: HashMap<u32, (u64, u64, u64, u64)> = HashMap::default();
        seg_range.insert(0, (0, base, headers, base + headers));
        for (k, &i) in alloc.iter().enumerate() {
            let c = classes[k];
            if c != prev {
                // Each segment starts on a page of its own, in memory and in the file (-z separate-code, GNU
                // ld's default on x86-64). Sharing a file page between RELRO and the data after it would save
                // space, but RELRO's PT_LOAD reaches its page end, so eu-elflint would then find .bss in it.
                addr = align_up(addr, max_page);
                off += addr.wrapping_sub(off) & (class_align[&c] - 1);
                prev = c;
                seg_range.entry(c).or_insert((off, addr, off, addr));
            }
            let o = &mut osecs[i];
            let al = o.align.max(1);
            let new_addr = align_up(addr, al);
            off += new_addr - addr;
            addr = new_addr;
            o.addr = addr;
            o.offset = off;
            let is_tbss = o.is_tls() && o.is_nobits();
            if !is_tbss {
                addr += o.size;
                if !o.is_nobits() {
                    off += o.size;
                }
            }
            let r = seg_range.get_mut(&c).unwrap();
            if !is_tbss {
                r.3 = addr;
                if !o.is_nobits() {
                    r.2 = off;
                }
            }
        }
        (seg_range, off)
    };
    let (mut seg_range, mut off) = place_alloc(osecs);
    // .relr.dyn encodes the addresses of the places it relocates, and its size moves those places: lay out
    // again until the size is stable. It only grows between rounds (a shorter encoding is padded with empty
    // bitmaps), so this ends; in practice the first round's size is final, because everything after
    // .relr.dyn moves by whole pages.
    let mut relr = Vec::new();
    if let Some(ri) = synth.get(Synth::RelrDyn)
        && keep[ri as usize]
    {
        let sites = relr_sites(
            res,
            scan,
            (place_osec, sec_off),
            osecs,
            relr_got,
            synth[Synth::Got],
        );
        loop {
            relr = encode_relr(sites.iter().map(|&(o, at)| osecs[o as usize].addr + at));
            let have = osecs[ri as usize].size / 8;
            if relr.len() as u64 <= have {
                relr.resize(have as usize, 1);
                break;
            }
            osecs[ri as usize].size = 8 * relr.len() as u64;
            (seg_range, off) = place_alloc(osecs);
        }
    }
    for (i, o) in osecs.iter_mut().enumerate() {
        if keep[i] && !o.is_alloc() {
            off = align_up(off, o.align.max(1));
            o.offset = off;
            o.addr = 0;
            off += o.size;
        }
    }
    let shoff = align_up(off, 8);
    let file_size = shoff + 64 * shndx as u64;

    // TLS block.
    let tls: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].is_tls())
        .collect();
    let (tls_start, tls_end, tls_align) =
        if let (Some(&first), Some(&last)) = (tls.first(), tls.last()) {
            let al = tls.iter().map(|&i| osecs[i].align).max().unwrap_or(1);
            (osecs[first].addr, osecs[last].addr + osecs[last].size, al)
        } else {
            (0, 0, 1)
        };

    let mut segments = Vec::new();
    let seg = |p_type, flags, offset, vaddr, filesz, memsz, align| Segment {
        p_type,
        flags,
        offset,
        vaddr,
        filesz,
        memsz,
        align,
    };
    if is_dynamic {
        segments.push(seg(
            E::PT_PHDR,
            E::PF_R,
            64,
            base + 64,
            headers - 64,
            headers - 64,
            8,
        ));
    }
    if interp.is_some() {
        let o = &osecs[synth[Synth::Interp] as usize];
        segments.push(seg(
            E::PT_INTERP,
            E::PF_R,
            o.offset,
            o.addr,
            o.size,
            o.size,
            1,
        ));
    }
    for &c in &load_classes {
        let (o, a, fe, me) = seg_range[&c];
        let flags = match c {
            1 => E::PF_R | E::PF_X,
            3 | 4 => E::PF_R | E::PF_W,
            _ => E::PF_R,
        };
        let align = class_align.get(&c).copied().unwrap_or(max_page);
        // The RELRO segment's PT_LOAD reaches its page end, so PT_GNU_RELRO (which does, for ld.so to protect
        // the whole last page) lies inside it; the next segment starts on the next page anyway.
        let mem_end = if c == 3 && has_relro {
            align_up(me, common_page)
        } else {
            me
        };
        segments.push(seg(E::PT_LOAD, flags, o, a, fe - o, mem_end - a, align));
    }
    if is_dynamic {
        let o = &osecs[synth[Synth::Dynamic] as usize];
        segments.push(seg(
            E::PT_DYNAMIC,
            E::PF_R | E::PF_W,
            o.offset,
            o.addr,
            o.size,
            o.size,
            8,
        ));
    }
    for &i in &notes {
        let o = &osecs[i];
        segments.push(seg(
            E::PT_NOTE,
            E::PF_R,
            o.offset,
            o.addr,
            o.size,
            o.size,
            o.align,
        ));
    }
    if has_tls {
        let first = &osecs[tls[0]];
        let filesz: u64 = tls
            .iter()
            .filter(|&&i| !osecs[i].is_nobits())
            .map(|&i| osecs[i].offset + osecs[i].size)
            .max()
            .unwrap_or(first.offset)
            - first.offset;
        segments.push(seg(
            E::PT_TLS,
            E::PF_R,
            first.offset,
            tls_start,
            filesz,
            tls_end - tls_start,
            tls_align,
        ));
    }
    if has_relro {
        let (o, a, _, me) = seg_range[&3];
        segments.push(seg(
            E::PT_GNU_RELRO,
            E::PF_R,
            o,
            a,
            me - a,
            align_up(me, common_page) - a,
            1,
        ));
    }
    if has_eh_hdr {
        let o = &osecs[synth[Synth::EhFrameHdr] as usize];
        segments.push(seg(
            E::PT_GNU_EH_FRAME,
            E::PF_R,
            o.offset,
            o.addr,
            o.size,
            o.size,
            4,
        ));
    }
    segments.push(seg(
        E::PT_GNU_STACK,
        if config.execstack {
            E::PF_R | E::PF_W | E::PF_X
        } else {
            E::PF_R | E::PF_W
        },
        0,
        0,
        0,
        config.stack_size,
        16,
    ));
    debug_assert_eq!(segments.len(), nphdr);
    for (i, o) in osecs.iter_mut().enumerate() {
        if !keep[i] {
            o.shndx = 0;
        }
    }
    Segments {
        segments,
        relr,
        file_size,
        shoff,
        tls_start,
        tls_end,
        tls_align,
    }
}

/// The places `.relr.dyn` relocates, as (output section, offset in it), in address order: the packed relative
/// relocations of the input sections and the GOT slots that hold a link-time address.
fn relr_sites(
    res: &Resolved,
    scan: &Scan,
    (place_osec, sec_off): (&[Vec<u32>], &[Vec<u64>]),
    osecs: &[OutputSection],
    relr_got: &[u32],
    got: u32,
) -> Vec<(u32, u64)> {
    let mut sites: Vec<(u32, u64)> = scan
        .relr
        .par_iter()
        .enumerate()
        .flat_map_iter(|(f, list)| {
            list.iter().filter_map(move |&(s, off)| {
                let osec = place_osec[f][s as usize];
                let o = osecs.get(osec as usize)?;
                debug_assert!(res.objects[f].sections[s as usize].kind == SectionKind::Regular);
                Some((
                    osec,
                    o.part_offsets.first().copied().unwrap_or(0) + sec_off[f][s as usize] + off,
                ))
            })
        })
        .collect();
    sites.extend(relr_got.iter().map(|&slot| (got, 8 * slot as u64)));
    // Output sections are numbered in address order.
    sites.par_sort_unstable();
    sites.dedup();
    sites
}

/// The RELR encoding of `addrs` (ascending, word-aligned): an address entry relocates its word and starts a run;
/// each following odd entry is a bitmap whose bit k (k = 1..63) relocates the word k-1 places after the previous
/// entry's range, 63 words per bitmap.
pub fn encode_relr(addrs: impl Iterator<Item = u64>) -> Vec<u64> {
    const BITS: u64 = 63;
    let mut out = Vec::new();
    let mut addrs = addrs.peekable();
    while let Some(start) = addrs.next() {
        out.push(start);
        let mut base = start + 8;
        loop {
            let mut bitmap = 0u64;
            while let Some(&a) = addrs.peek() {
                let d = a.wrapping_sub(base);
                if a < base || d >= BITS * 8 || !d.is_multiple_of(8) {
                    break;
                }
                bitmap |= 1 << (d / 8);
                addrs.next();
            }
            if bitmap == 0 {
                break;
            }
            out.push((bitmap << 1) | 1);
            base += BITS * 8;
        }
    }
    out
}
