//! Layout pass: addresses and file offsets. Allocated sections get theirs from the walk over a script's commands
//! (`script::walk`): the link's `SECTIONS`, or without one the default layout written as a script
//! (`default_script::script`), whose segments each start on a page of their own. `.relr.dyn` is encoded once its
//! places have addresses, non-allocated sections follow, and the program headers are made.

use super::output_sections::SectionMap;
use super::place::Placement;
use super::rules::{Rules, segment_class};
use super::sizes::SectionHeaders;
use super::{Cx, OutputSection, Part, Segment, Synth, SynthMap};
use crate::arch::Arch;
use crate::args::Magic;
use crate::diag::{Errors, Result};
use crate::elf::align_up;
use crate::index::OsecId;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use crate::scan::Scan;
use crate::script::sections::SectionsScript;
use crate::synthetic::relr;
use object::elf as E;
use rayon::prelude::*;

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
    /// With a script: the symbols its assignments define, and those evaluated after the inputs' symbols.
    pub script: super::script::ScriptExtras,
    /// The linker-made sections' final sizes and places in their output sections.
    pub synth: SynthMap,
}

/// The non-allocated sections after the allocated ones (from file offset `off`); returns the offset after them.
pub(super) fn place_nonalloc(
    osecs: &mut [OutputSection],
    keep: &[bool],
    mut off: u64,
) -> Result<u64> {
    for (i, o) in osecs.iter_mut().enumerate() {
        if keep[i] && !o.is_alloc() {
            off = align_up(off, o.align.max(1));
            o.offset = off;
            if !o.is_nobits() {
                off = off.checked_add(o.size).ok_or_else(|| {
                    Errors::one(format!(
                        "section {} of {:#x} bytes does not fit in a file",
                        String::from_utf8_lossy(&o.name),
                        o.size
                    ))
                })?;
            }
        }
    }
    Ok(off)
}

/// What the program headers need besides the loads: the sections of notes and TLS, whether the property note and
/// `.eh_frame_hdr` are kept, the TLS block.
struct HeaderFacts<'a> {
    notes: &'a [usize],
    tls: &'a [usize],
    property: bool,
    eh_hdr: bool,
    tls_block: (u64, u64, u64),
}

use super::script::ScriptExtras as ScriptOut;

/// How the allocated sections get their addresses: a script's commands, the link's own or the default layout
/// written as one (`default_script::script`), walked in order; the walk's result once it has run.
struct Addresser<'a> {
    walk: super::script::Walk<'a>,
    out: Option<super::script::ScriptAddresses>,
}

impl Addresser<'_> {
    /// The program headers once every section has its address: the script's loads with the usual headers, or
    /// exactly what its `PHDRS` lists.
    fn program_headers(
        self,
        cx: &Cx,
        osecs: &[OutputSection],
        map: &SectionMap,
        keep: &[bool],
        f: &HeaderFacts,
    ) -> Result<(Vec<Segment>, ScriptOut)> {
        let synth = map.synth;
        let (w, a) = (self.walk, self.out.expect("laid out"));
        let plan = HeaderPlan {
            loads: a.loads,
            headers: a.headers,
            interp: map.interp.is_some(),
            relro: script_relro(cx, w.sc, osecs, keep, a.relro_end),
            notes: f.notes,
            property: f.property,
            tls: f.tls,
            eh_hdr: f.eh_hdr,
        };
        // The default layout's segments each start a page; a fixed address must keep them apart.
        if !cx.config.section_start.is_empty() && cx.config.sections.is_none() {
            super::section_start::check(cx.config, osecs, keep, &plan.loads)?;
        }
        let segments = match w.sc.phdrs.is_empty() {
            true => program_headers(cx, &plan, osecs, synth, f.tls_block),
            false => super::script::phdrs_segments(
                w.sc,
                osecs,
                keep,
                &map.script_desc,
                (&plan.loads, &a.symbols),
                plan.headers,
                (cx.config.max_page_size, cx.config.common_page_size),
            )
            .map_err(Errors::one)?,
        };
        let extras = ScriptOut {
            symbols: a.symbols,
            deferred: a.deferred,
            deferred_data: a.deferred_data,
            data: a.data,
            fills: a.fills,
            code_gaps: a.code_gaps,
            holes: a.holes,
            lma: a.lma,
            end_dot_section: Some(a.end_dot_section),
            memory: a.memory,
        };
        Ok((segments, extras))
    }

    /// Lays out the allocated sections; returns the file offset after them.
    fn run(&mut self, osecs: &mut [OutputSection], place: &mut Placement) -> Result<u64> {
        let (w, out) = (&mut self.walk, &mut self.out);
        // SIZEOF_HEADERS counts the program headers, which depend on the loads the addresses make: lay out
        // again until the count is stable, and until the sections an expression named before their
        // place (`ADDR(.later)`) have the addresses it saw.
        let mut before: (Vec<u64>, Vec<(String, crate::expr::Value)>) = Default::default();
        for _ in 0..4 {
            let a =
                super::script::assign_addresses(w, osecs, &mut place.sec_off, &mut place.cursor)
                    .map_err(Errors::one)?;
            // With `PHDRS`, the script's list exactly.
            let n = match w.sc.phdrs.len() {
                0 => w.fixed_headers + a.loads.len() + (w.phdr && a.headers.is_some()) as usize,
                listed => listed,
            };
            // With the symbols' values too: an assignment to `.` may have named one assigned after it.
            let addrs = match a.forward {
                true => (
                    osecs
                        .iter()
                        .map(|o| o.addr)
                        .chain(a.lma.iter().copied())
                        .collect(),
                    a.values.clone(),
                ),
                false => Default::default(),
            };
            let stable = !a.forward || addrs == before;
            before = addrs;
            w.prior = a.values.iter().cloned().collect();
            w.prior_lma = a.lma.clone();
            let same_headers = crate::elf::headers_size(n) == w.headers;
            let settled = same_headers && a.data_base == w.data_base.get() && stable;
            // The data's place follows the headers' size: found anew once that is known.
            w.data_base
                .set(if same_headers { a.data_base } else { None });
            w.headers = crate::elf::headers_size(n);
            *out = Some(a);
            if settled {
                break;
            }
        }
        // A symbol no pass gave a value before the location counter needed it (one assigned from the
        // inputs' symbols, whose addresses come after the layout).
        if let Some((name, at)) = out.as_ref().and_then(|a| a.guessed.clone()) {
            return Err(Errors::one(w.sc.error(
                at,
                format!(
                    "the location counter depends on '{name}', which has no value before the layout \
                     (it is assigned from the inputs' symbols)"
                ),
            )));
        }
        if let Some(a) = out.as_mut() {
            // Once, not per pass.
            for m in &a.warnings {
                crate::diag::warn(m);
            }
            let mut filled = vec![false; osecs.len()];
            for f in &a.fills {
                filled[f.0.index()] = true;
            }
            let placed = super::script::Placed {
                at: &a.run_at,
                runs_only: &a.runs_only,
                filled: &filled,
            };
            super::script::place_runs(
                (w.lists, w.runs, placed),
                osecs,
                (&mut place.sec_off, &mut place.pads),
                &mut a.code_gaps,
            );
        }
        Ok(out.as_ref().map_or(0, |a| a.end))
    }
}

pub fn assign_segments<A: Arch>(
    cx: &Cx,
    osecs: &mut [OutputSection],
    map: &SectionMap,
    headers: &SectionHeaders,
    place: &mut Placement,
    (relr_got, merges): (&[u32], &[super::MergeGroup]),
    default_layout: Option<&SectionsScript>,
) -> Result<Segments> {
    let mut synth = map.synth;
    // -N: GNU ld makes `.text` writable (its load is then writable too); set once the sections are ordered,
    // whose ranks read the flags.
    if cx.config.magic == Magic::Omagic {
        for o in osecs.iter_mut().filter(|o| o.name == b".text") {
            o.flags |= E::SHF_WRITE as u64;
        }
    }
    let lists = std::mem::take(&mut place.script_lists);
    // None without a script, whose lists are empty.
    let runs = super::script::list_runs(&lists);
    let keep = &headers.keep;
    let listed = |pred: &dyn Fn(&OutputSection) -> bool| -> Vec<usize> {
        (0..osecs.len())
            .filter(|&i| keep[i] && osecs[i].is_alloc() && pred(&osecs[i]))
            .collect()
    };
    let notes = listed(&|o| o.sh_type == E::SHT_NOTE);
    let tls = listed(&|o| o.is_tls());
    // The TLS block starts at its most-aligned section's alignment: GNU ld gives the first TLS section the
    // largest TLS alignment (which matters where the block does not start a page: -N, -n, scripts).
    if let Some(&first) = tls.first() {
        let align = tls.iter().map(|&i| osecs[i].align).max().unwrap_or(1);
        osecs[first].align = osecs[first].align.max(align);
    }
    // Without a `SECTIONS` script, the default layout written as one (`default_script::script`): the same walk
    // gives the addresses, over the output sections as the rules made and filled them.
    let default_desc;
    let (sc, script_desc) = match (cx.config.sections.as_deref(), default_layout) {
        (Some(sc), _) => (sc, &map.script_desc),
        (None, Some(sc)) => {
            default_desc = super::default_script::descriptions(sc, osecs);
            (sc, &default_desc)
        }
        (None, None) => return Err(Errors::one("no layout to give the addresses".to_string())),
    };
    let mut addresser = Addresser {
        walk: super::script::Walk {
            config: cx.config,
            sc,
            res: cx.res,
            lists: &lists,
            runs: &runs,
            script_desc,
            keep,
            headers: 64,
            fixed_headers: fixed_headers(cx, sc, osecs, map, keep, (&notes, &tls)),
            phdr: map.interp.is_some(),
            data_base: std::cell::Cell::new(None),
            merges,
            synth: map.synth,
            prior: Default::default(),
            prior_lma: Vec::new(),
            preplaced: cx.config.sections.is_none(),
        },
        out: None,
    };
    let mut off = addresser.run(osecs, place)?;
    // .relr.dyn encodes the addresses of the places it relocates, and its size moves those places: lay out
    // again until the size is stable. It only grows between rounds (a shorter encoding is padded with empty
    // bitmaps), so this ends; in practice the first round's size is final, because everything after
    // .relr.dyn moves by whole pages.
    let mut relr = Vec::new();
    if let Some(ri) = synth.get(Synth::RelrDyn)
        && keep[ri.index()]
    {
        let sites = relr_sites(
            cx.res,
            cx.scan,
            (&place.place_osec, &place.sec_off),
            osecs,
            relr_got,
            synth[Synth::Got],
        );
        loop {
            relr = relr::encode(sites.iter().map(|&(o, at)| osecs[o.index()].addr + at));
            let have = synth.size(Synth::RelrDyn);
            if relr::size(&relr) <= have {
                relr::pad(&mut relr, have);
                break;
            }
            let size = relr::size(&relr);
            synth.set_size(Synth::RelrDyn, size);
            let o = &mut osecs[ri.index()];
            o.size = o
                .size
                .max(o.part_offset(&Part::Synthetic(Synth::RelrDyn)) + size);
            addresser.walk.synth.set_size(Synth::RelrDyn, size);
            off = addresser.run(osecs, place)?;
        }
    }
    let off = place_nonalloc(osecs, keep, off)?;
    let shoff = align_up(off, crate::elf::word_align());
    let file_size = shoff + crate::elf::shdr_size() * headers.count as u64;
    // TLS block.
    let (tls_start, tls_end, tls_align) =
        if let (Some(&first), Some(&last)) = (tls.first(), tls.last()) {
            let al = tls.iter().map(|&i| osecs[i].align).max().unwrap_or(1);
            (osecs[first].addr, osecs[last].addr + osecs[last].size, al)
        } else {
            (0, 0, 1)
        };
    let tls_block = (tls_start, tls_end, tls_align);
    let kept = |x: Synth| map.synth.get(x).is_some_and(|i| keep[i.index()]);
    let facts = HeaderFacts {
        notes: &notes,
        tls: &tls,
        property: kept(Synth::GnuProperty),
        eh_hdr: kept(Synth::EhFrameHdr),
        tls_block,
    };
    let (segments, script) = addresser.program_headers(cx, osecs, map, keep, &facts)?;
    for (i, o) in osecs.iter_mut().enumerate() {
        if !keep[i] {
            o.shndx = 0;
        }
    }
    super::settle_synth_offsets(&mut synth, osecs);
    Ok(Segments {
        segments,
        relr,
        file_size,
        shoff,
        tls_start,
        tls_end,
        tls_align,
        script,
        synth,
    })
}

/// The program headers a script layout has besides its loads and `PT_PHDR`.
fn fixed_headers(
    cx: &Cx,
    sc: &SectionsScript,
    osecs: &[OutputSection],
    map: &SectionMap,
    keep: &[bool],
    (notes, tls): (&[usize], &[usize]),
) -> usize {
    let kept = |s: Synth| map.synth.get(s).is_some_and(|i| keep[i.index()]);
    map.interp.is_some() as usize
        + cx.is_dynamic as usize
        + notes.len()
        + kept(Synth::GnuProperty) as usize
        + !tls.is_empty() as usize
        + script_relro(cx, sc, osecs, keep, None).is_some() as usize
        + kept(Synth::EhFrameHdr) as usize
        + 1
}

/// A script layout's RELRO range, where the script has `DATA_SEGMENT_RELRO_END` (GNU ld makes none without, and
/// a script may put writable data among sections of RELRO names): from the first non-empty kept section the
/// default rules call RELRO data to the end of the run of such sections that follows it, or to where
/// `DATA_SEGMENT_RELRO_END` says (not rounded to a page: the loader protects the whole pages inside).
fn script_relro(
    cx: &Cx,
    sc: &SectionsScript,
    osecs: &[OutputSection],
    keep: &[bool],
    relro_end: Option<u64>,
) -> Option<(u64, u64, u64, u64)> {
    // Not paged (-n): GNU ld pads RELRO's end but protects nothing.
    if !cx.config.relro || !cx.config.paged() || !sc.ends_relro {
        return None;
    }
    let rules = Rules::of(cx.config);
    let relro = |o: &OutputSection| segment_class(rules.rank(&o.name, o.sh_type, o.flags)) == 3;
    let kept: Vec<&OutputSection> = (0..osecs.len())
        .filter(|&i| keep[i] && osecs[i].is_alloc() && osecs[i].size > 0)
        .map(|i| &osecs[i])
        .collect();
    let first = kept.iter().position(|o| relro(o))?;
    let run: Vec<&&OutputSection> = kept[first..].iter().take_while(|o| relro(o)).collect();
    let (start, last) = (run[0], run[run.len() - 1]);
    let end = last.addr
        + if last.is_tls() && last.is_nobits() {
            0
        } else {
            last.size
        };
    // Past the run, inside the next section (GNU ld's script ends RELRO after `.got.plt`'s reserved words).
    let next = kept[first + run.len()..].first();
    let end = match (relro_end, next) {
        (Some(e), Some(n)) if e > end && e <= n.addr + n.size => e,
        _ => end,
    };
    Some((start.offset, start.addr, end - start.addr, end - start.addr))
}

/// A `PT_LOAD`: flags, file offset, address, load address, file size, memory size, alignment.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// What the program headers are made of besides the sections: the loads, where the headers are (`None`: not
/// loaded), the RELRO range (offset, address, size, memory size) and the sections of `PT_NOTE`s and `PT_TLS`.
pub struct HeaderPlan<'a> {
    pub loads: Vec<Load>,
    pub headers: Option<(u64, u64)>,
    pub interp: bool,
    pub relro: Option<(u64, u64, u64, u64)>,
    pub notes: &'a [usize],
    pub property: bool,
    pub tls: &'a [usize],
    pub eh_hdr: bool,
}

/// The program headers, in GNU ld's order, once every section has its address.
pub fn program_headers(
    cx: &Cx,
    plan: &HeaderPlan,
    osecs: &[OutputSection],
    synth: SynthMap,
    (tls_start, tls_end, tls_align): (u64, u64, u64),
) -> Vec<Segment> {
    let mut segments = Vec::new();
    // The physical address is the load address, as the PT_LOAD that maps the place gives it (a script's `AT`
    // moves it off the address; GNU ld's PT_TLS of `.tdata` in RAM loaded from ROM has its ROM address).
    let paddr = |p_type, vaddr: u64| {
        (plan.loads.iter())
            .find(|l| p_type != E::PT_GNU_STACK && vaddr >= l.vaddr && vaddr - l.vaddr < l.memsz)
            .map_or(vaddr, |l| l.paddr.wrapping_add(vaddr - l.vaddr))
    };
    let seg = |p_type, flags, offset, vaddr, filesz, memsz, align| Segment {
        p_type,
        flags,
        offset,
        vaddr,
        paddr: paddr(p_type, vaddr),
        filesz,
        memsz,
        align,
    };
    // A program header spanning output section `o` exactly.
    let of = |p_type, flags, o: &OutputSection, align| {
        seg(p_type, flags, o.offset, o.addr, o.size, o.size, align)
    };
    let ehdr = crate::elf::headers_size(0);
    // GNU ld's rule: a `PT_PHDR` only with a `PT_INTERP` (not in shared objects, static PIEs, or where a script
    // discards `.interp`).
    if plan.interp
        && let Some((base, headers)) = plan.headers
    {
        segments.push(seg(
            E::PT_PHDR,
            E::PF_R,
            ehdr,
            base + ehdr,
            headers - ehdr,
            headers - ehdr,
            crate::elf::word_align(),
        ));
    }
    if plan.interp {
        let o = &osecs[(synth[Synth::Interp]).index()];
        segments.push(of(E::PT_INTERP, E::PF_R, o, 1));
    }
    for l in &plan.loads {
        segments.push(Segment {
            p_type: E::PT_LOAD,
            flags: l.flags,
            offset: l.offset,
            vaddr: l.vaddr,
            paddr: l.paddr,
            filesz: l.filesz,
            memsz: l.memsz,
            align: l.align,
        });
    }
    if cx.is_dynamic {
        let o = &osecs[(synth[Synth::Dynamic]).index()];
        segments.push(of(E::PT_DYNAMIC, E::PF_R | E::PF_W, o, 8));
    }
    for &i in plan.notes {
        let o = &osecs[i];
        segments.push(of(E::PT_NOTE, E::PF_R, o, o.align));
    }
    if plan.property {
        let o = &osecs[(synth[Synth::GnuProperty]).index()];
        segments.push(of(E::PT_GNU_PROPERTY, E::PF_R, o, 8));
    }
    if let Some(&first) = plan.tls.first() {
        let first = &osecs[first];
        let filesz: u64 = plan
            .tls
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
    if let Some((o, a, size, memsz)) = plan.relro {
        segments.push(seg(E::PT_GNU_RELRO, E::PF_R, o, a, size, memsz, 1));
    }
    if plan.eh_hdr {
        let o = &osecs[(synth[Synth::EhFrameHdr]).index()];
        segments.push(of(E::PT_GNU_EH_FRAME, E::PF_R, o, 4));
    }
    let stack_flags = if crate::exec_stack::final_link(cx.config, cx.res) {
        E::PF_R | E::PF_W | E::PF_X
    } else {
        E::PF_R | E::PF_W
    };
    let stack = seg(
        E::PT_GNU_STACK,
        stack_flags,
        0,
        0,
        0,
        cx.config.stack_size,
        16,
    );
    segments.push(stack);
    segments
}

/// The places `.relr.dyn` relocates, as (output section, offset in it), in address order: the packed relative
/// relocations of the input sections and the GOT slots that hold a link-time address.
fn relr_sites(
    res: &Resolved,
    scan: &Scan,
    (place_osec, sec_off): (&[Vec<OsecId>], &[Vec<u64>]),
    osecs: &[OutputSection],
    relr_got: &[u32],
    got: OsecId,
) -> Vec<(OsecId, u64)> {
    let mut sites: Vec<(OsecId, u64)> = scan
        .relr
        .par_iter()
        .enumerate()
        .flat_map_iter(|(f, list)| {
            list.iter().filter_map(move |&(s, off)| {
                let osec = place_osec[f][s.index()];
                let o = osecs.get(osec.index())?;
                debug_assert!(res.objects[f].sections[s.index()].kind == SectionKind::Regular);
                Some((
                    osec,
                    o.part_offsets.first().copied().unwrap_or(0) + sec_off[f][s.index()] + off,
                ))
            })
        })
        .collect();
    let base = osecs[got.index()].part_offset(&Part::Synthetic(Synth::Got));
    sites.extend(relr_got.iter().map(|&slot| (got, base + 8 * slot as u64)));
    // Output sections are numbered in address order.
    sites.par_sort_unstable();
    sites.dedup();
    sites
}
