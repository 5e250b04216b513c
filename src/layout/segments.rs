//! Layout pass: addresses and file offsets. Allocated sections are laid out in segment classes (each starting on
//! a page of its own), `.relr.dyn` is encoded once its places have addresses, non-allocated sections follow, and
//! the program headers are made.

use super::output_sections::SectionMap;
use super::place::Placement;
use super::rules::{Rules, segment_class};
use super::sizes::SectionHeaders;
use super::{Cx, OutputSection, Part, Segment, Synth, SynthMap};
use crate::arch::Arch;
use crate::args::{Magic, OutputKind};
use crate::diag::{Errors, Result};
use crate::elf::align_up;
use crate::index::OsecId;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use crate::scan::Scan;
use crate::synthetic::relr;
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
    /// With a script: the symbols its assignments define, and those evaluated after the inputs' symbols.
    pub script: super::script::ScriptExtras,
    /// The linker-made sections' final sizes and places in their output sections.
    pub synth: SynthMap,
}

/// Which program headers the output has and the geometry of its segments, decided before any address.
struct Plan {
    /// The allocated sections that are kept, in order, and their segment classes.
    alloc: Vec<usize>,
    classes: Vec<u32>,
    /// The number of `PT_LOAD`s: one per segment class (the first holds the headers), more where
    /// `--section-start` moves part of a class (`place_alloc` finds how many).
    nloads: usize,
    notes: Vec<usize>,
    tls: Vec<usize>,
    has_interp: bool,
    /// The first segment holds the code too (`-z noseparate-code`).
    code_with_headers: bool,
    /// `-N` and `-n` (`Config::magic`): not demand paged. No headers load, no page alignment, one load aligned
    /// to its sections and packed in the file, with its sections' permissions; `-n`'s data starts at the place
    /// `data_segment` finds, in the same load.
    magic: Magic,
    has_relro: bool,
    /// `-z relro` (under -n, padding only; GNU's -N script has no RELRO).
    relro: bool,
    /// A non-empty `.bss` and its size: GNU ld's default script pads it to end on a word boundary
    /// (`. = ALIGN(. != 0 ? 64 / 8 : 1);` inside it).
    bss: Option<(usize, u64)>,
    has_property: bool,
    /// `--section-start`: (position in `alloc`, address) of each section placed at a fixed address.
    starts: Vec<(usize, u64)>,
    has_eh_hdr: bool,
    nphdr: usize,
    /// The image's first address, and the size of the ELF and program headers.
    base: u64,
    headers: u64,
    max_page: u64,
    common_page: u64,
    /// Per class: the alignment of its `PT_LOAD`.
    class_align: HashMap<u32, u64>,
}

/// A `PT_LOAD` of the default layout: the sections of a segment class, or of the part of one that starts at a
/// `--section-start` address. Such an address on the page where the load before ends extends that load (with
/// both classes' permissions), as GNU ld's segment map does.
pub(super) struct Run {
    flags: u32,
    off: u64,
    pub(super) addr: u64,
    fend: u64,
    pub(super) mend: u64,
    align: u64,
    /// Its first output section (for messages); `NONE` for the headers.
    pub(super) first: OsecId,
}

/// The default layout's loads in file order and the RELRO range (file offset, address, end; the load holding it).
#[derive(Default)]
struct Placed {
    runs: Vec<Run>,
    relro: Option<(u64, u64, u64, usize)>,
}

fn plan<A: Arch>(
    cx: &Cx,
    osecs: &[OutputSection],
    map: &SectionMap,
    keep: &[bool],
) -> Result<Plan> {
    let config = cx.config;
    let alloc: Vec<usize> = (0..osecs.len())
        .filter(|&i| keep[i] && osecs[i].is_alloc())
        .collect();
    let rules = Rules::of(config);
    // -z noseparate-code: the headers, code and read-only data share one R+X segment, as GNU ld lays them out.
    let code_with_headers = !config.z_separate_code;
    let classes: Vec<u32> = alloc
        .iter()
        .map(|&i| segment_class(rules.rank(&osecs[i].name, osecs[i].sh_type, osecs[i].flags)))
        .map(|c| match config.magic {
            Magic::Omagic => 0,
            _ if c <= 2 && (code_with_headers || config.magic == Magic::Nmagic) => 0,
            _ => c,
        })
        .collect();
    let mut load_classes: Vec<u32> = vec![0];
    for &c in &classes {
        if !load_classes.contains(&c) {
            load_classes.push(c);
        }
    }
    let nloads = load_classes.len();
    let notes: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].sh_type == E::SHT_NOTE)
        .collect();
    let tls: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].is_tls())
        .collect();
    let has_interp = map.interp.is_some();
    let has_property = map
        .synth
        .get(Synth::GnuProperty)
        .is_some_and(|i| keep[i.index()]);
    let has_relro = config.relro && config.paged() && load_classes.contains(&3);
    let has_eh_hdr = map
        .synth
        .get(Synth::EhFrameHdr)
        .is_some_and(|i| keep[i.index()]);
    let nphdr = cx.is_dynamic as usize // DYNAMIC
        + 2 * has_interp as usize // PHDR, INTERP
        + nloads
        + notes.len()
        + has_property as usize
        + !tls.is_empty() as usize
        + has_relro as usize
        + has_eh_hdr as usize
        + 1; // GNU_STACK
    let base = match config.image_base {
        // The first segment maps the file from offset 0: its address must be on a page boundary. GNU ld rounds
        // down too.
        Some(b) if b % config.max_page_size != 0 => {
            crate::diag::warn(&format!(
                "image base {b:#x} isn't a multiple of the maximum page size; using {:#x}",
                b / config.max_page_size * config.max_page_size
            ));
            b / config.max_page_size * config.max_page_size
        }
        Some(b) => b,
        None if config.kind == OutputKind::Exec => A::IMAGE_BASE,
        None => 0,
    };
    // Segments start on a new maximum-size page; RELRO is protected up to the end of its common-size page.
    let (max_page, common_page) = (
        config.max_page_size,
        config.common_page_size.min(config.max_page_size),
    );
    // A PT_LOAD is aligned to the page size or to its most-aligned section, whichever is larger, so that a
    // PIE's load base (chosen by the kernel or ld.so as a multiple of p_align) keeps every section aligned.
    // Its file offset must then be congruent to its address modulo that alignment.
    // --section-start (-Ttext, -Tdata, -Tbss): the named sections, at the positions `place_alloc` reads.
    let starts = super::section_start::starts(config, osecs, &alloc, &tls)?;
    let mut class_align: HashMap<u32, u64> = HashMap::default();
    for (k, &i) in alloc.iter().enumerate() {
        let a = class_align
            .entry(classes[k])
            .or_insert(if config.paged() { max_page } else { 1 });
        *a = (*a).max(osecs[i].align.next_power_of_two());
    }
    // Not paged: one load, whose file offset follows its addresses modulo its most-aligned section's alignment.
    if !config.paged() {
        let all = class_align.values().copied().max().unwrap_or(1);
        class_align.values_mut().for_each(|a| *a = all);
    }
    let bss = (alloc.iter())
        .find(|&&i| osecs[i].name == b".bss" && osecs[i].is_nobits() && osecs[i].size > 0)
        .map(|&i| (i, osecs[i].size));
    Ok(Plan {
        alloc,
        classes,
        nloads,
        notes,
        tls,
        has_interp,
        code_with_headers,
        magic: config.magic,
        has_relro,
        relro: config.relro,
        bss,
        has_eh_hdr,
        has_property,
        nphdr,
        base,
        headers: crate::elf::headers_size(nphdr),
        starts,
        max_page,
        common_page,
        class_align,
    })
}

/// Addresses and file offsets of the allocated sections; the loads, and the file offset after the last allocated
/// section. An error names the first section that ends past the address space, or (`section_start::check`) the
/// sections a `--section-start` address makes overlap.
fn place_alloc(plan: &Plan, osecs: &mut [OutputSection]) -> Result<(Placed, u64)> {
    let Plan {
        headers,
        base,
        max_page,
        ..
    } = *plan;
    let mut off = headers;
    let mut addr = base + headers;
    let mut prev = 0u32;
    let mut placed = Placed::default();
    let paged = plan.magic == Magic::Paged;
    // -n: the RELRO end's padding, once the data's start is known.
    let mut relro_end_offset = None;
    // Not demand paged (-N, -n): the headers are in no load, and the first section starts one.
    if paged {
        placed.runs.push(Run {
            flags: plan.class_flags(0),
            off: 0,
            addr: base,
            fend: headers,
            mend: base + headers,
            align: plan.class_align(0),
            first: OsecId::NONE,
        });
    }
    for (k, &i) in plan.alloc.iter().enumerate() {
        let c = plan.classes[k];
        let fixed = plan
            .starts
            .iter()
            .find(|&&(p, _)| p == k)
            .map(|&(_, at)| at);
        let mut fresh = placed.runs.is_empty() || (c != prev && paged);
        if fresh && paged {
            // Each segment starts on a page of its own, in memory and in the file (-z separate-code, GNU
            // ld's default on x86-64). Sharing a file page between RELRO and the data after it would save
            // space, but RELRO's PT_LOAD reaches its page end, so eu-elflint would then find .bss in it.
            addr = align_up(addr, max_page);
        } else if fresh && fixed.is_none() {
            // Not paged: the load starts at its first section, packed after the headers in the file.
            let a = align_up(addr, osecs[i].align.max(1));
            off += a - addr;
            addr = a;
        }
        if plan.magic == Magic::Nmagic && fixed.is_none() {
            // -n: the data, at GNU's `DATA_SEGMENT_ALIGN`, in the same load (the file follows the addresses).
            let to = match (c, k.checked_sub(1).map(|p| plan.classes[p])) {
                (3 | 4, None | Some(0)) => Some(nmagic_data_start(
                    plan,
                    osecs,
                    k,
                    addr,
                    &mut relro_end_offset,
                )),
                (4, Some(3)) => relro_end_offset.map(|o| align_up(addr + o, max_page) - o),
                _ => None,
            };
            if let Some(to) = to.filter(|&to| to > addr) {
                off += to - addr;
                addr = to;
            }
        }
        if let Some(at) = fixed
            && at != addr
        {
            fresh = true;
            addr = at;
        }
        if fresh {
            start_run(
                plan,
                &mut placed.runs,
                (c, i),
                fixed.is_some(),
                addr,
                &mut off,
                osecs,
            )?;
            prev = c;
        }
        let o = &mut osecs[i];
        // A section placed at an address gets it exactly, aligned or not, as in GNU ld.
        if fixed.is_none() {
            let new_addr = align_up(addr, o.align.max(1));
            off += new_addr - addr;
            addr = new_addr;
        }
        o.addr = addr;
        o.offset = off;
        // (A size that runs past the address space stays, for the check below to name.)
        if let Some((b, size)) = plan.bss
            && b == i
            && let Some(end) = addr
                .checked_add(size)
                .filter(|e| e.checked_add(8).is_some())
        {
            o.size = align_up(end, crate::elf::word_align()) - addr;
        }
        let run = placed.runs.len() - 1;
        let r = &mut placed.runs[run];
        if !paged {
            // One load of everything: its sections' permissions and alignment. GNU ld gives a section without
            // file contents the offset where the contents end, when not paged.
            r.flags |= o.segment_flags();
            r.align = r.align.max(o.align.max(1).next_power_of_two());
            if o.is_nobits() {
                o.offset = r.fend;
            }
        }
        let is_tbss = o.is_tls() && o.is_nobits();
        if !is_tbss {
            let end = addr.checked_add(o.size).filter(|&e| e < u64::MAX);
            let Some(end) = end else {
                return Err(Errors::one(format!(
                    "section {} at {addr:#x} of {:#x} bytes ends past the end of the address space",
                    String::from_utf8_lossy(&o.name),
                    o.size
                )));
            };
            addr = end;
            if !o.is_nobits() {
                off += o.size;
            }
        }
        if !is_tbss {
            r.mend = addr;
            if !o.is_nobits() {
                r.fend = off;
            }
        }
        // RELRO: from the first RELRO-class section (its load's start when it starts one) to the end of the
        // RELRO-class sections after it in the same load.
        if c == 3 {
            match &mut placed.relro {
                None if r.first == OsecId::new(i) => {
                    placed.relro = Some((r.off, r.addr, r.mend, run))
                }
                None => placed.relro = Some((o.offset, o.addr, r.mend, run)),
                Some(x) if x.3 == run && plan.classes[k - 1] == 3 => x.2 = r.mend,
                Some(_) => {}
            }
        }
    }
    if !plan.starts.is_empty() {
        super::section_start::check(osecs, &plan.alloc, &placed.runs, max_page)?;
    }
    Ok((placed, off))
}

/// -n: where the data starts, the sections from `plan.alloc[k]` on, after code ending at `dot`; sets how the end of
/// their RELRO part is padded.
fn nmagic_data_start(
    plan: &Plan,
    osecs: &[OutputSection],
    k: usize,
    dot: u64,
    relro_end_offset: &mut Option<u64>,
) -> u64 {
    let data: Vec<(&OutputSection, bool)> = (k..plan.alloc.len())
        .map(|j| (&osecs[plan.alloc[j]], plan.classes[j] == 3))
        .collect();
    let has_eh_frame = plan.alloc.iter().any(|&i| osecs[i].name == b".eh_frame");
    let start = super::data_segment::start(
        dot,
        &data,
        (plan.max_page, plan.common_page),
        plan.relro,
        has_eh_frame,
    );
    *relro_end_offset = start.relro_end_offset;
    start.addr
}

/// Starts a load at `addr` for section `i` of class `c`, advancing the file offset `off` to match, or, for a
/// section at a fixed address on the page where the last load ends, extends that load (the file offset then
/// follows the gap in memory).
fn start_run(
    plan: &Plan,
    runs: &mut Vec<Run>,
    (c, i): (u32, usize),
    fixed: bool,
    addr: u64,
    off: &mut u64,
    osecs: &[OutputSection],
) -> Result<()> {
    if let Some(last) = runs.last_mut()
        && fixed
        && addr >= last.mend
        && addr / plan.max_page == (last.mend - 1) / plan.max_page
    {
        if last.fend - last.off != last.mend - last.addr {
            return Err(Errors::one(format!(
                "cannot place section {} at {addr:#x}: it shares a page with the zero-filled end of the \
                 segment before it (which ends at {:#x})",
                String::from_utf8_lossy(&osecs[i].name),
                last.mend
            )));
        }
        *off = last.fend + (addr - last.mend);
        last.flags |= plan.class_flags(c);
        return Ok(());
    }
    let align = plan.class_align(c);
    *off += addr.wrapping_sub(*off) & (align - 1);
    runs.push(Run {
        flags: plan.class_flags(c),
        off: *off,
        addr,
        fend: *off,
        mend: addr,
        align,
        first: OsecId::new(i),
    });
    Ok(())
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

/// How the allocated sections get their addresses: the default rules' segment classes, or a script's commands.
enum Addresser<'a> {
    Default(Box<Plan>, Placed),
    Script(
        Box<(
            super::script::Walk<'a>,
            Option<super::script::ScriptAddresses>,
        )>,
    ),
}

impl Addresser<'_> {
    /// The program headers once every section has its address: the default plan's, a script's loads with the
    /// usual headers, or exactly what its `PHDRS` lists.
    fn program_headers(
        self,
        cx: &Cx,
        osecs: &[OutputSection],
        map: &SectionMap,
        keep: &[bool],
        f: &HeaderFacts,
    ) -> Result<(Vec<Segment>, ScriptOut)> {
        let synth = map.synth;
        match self {
            Addresser::Default(plan, placed) => {
                let segments =
                    program_headers(cx, &plan.header_plan(&placed), osecs, synth, f.tls_block);
                debug_assert_eq!(segments.len(), plan.nphdr);
                Ok((segments, Default::default()))
            }
            Addresser::Script(b) => {
                let (w, a) = *b;
                let a = a.expect("laid out");
                let plan = HeaderPlan {
                    loads: a.loads,
                    headers: a.headers,
                    interp: map.interp.is_some(),
                    relro: script_relro(cx, osecs, keep, a.relro_end),
                    notes: f.notes,
                    property: f.property,
                    tls: f.tls,
                    eh_hdr: f.eh_hdr,
                };
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
        }
    }

    /// Lays out the allocated sections; returns the file offset after them.
    fn run(&mut self, osecs: &mut [OutputSection], place: &mut Placement) -> Result<u64> {
        match self {
            Addresser::Default(plan, placed) => {
                // The program headers count the loads, which --section-start addresses may add: lay out again
                // until the count is stable.
                for _ in 0..4 {
                    let (p, off) = place_alloc(plan, osecs)?;
                    let n = p.runs.len();
                    *placed = p;
                    if n == plan.nloads {
                        return Ok(off);
                    }
                    plan.nphdr = plan.nphdr - plan.nloads + n;
                    plan.nloads = n;
                    plan.headers = crate::elf::headers_size(plan.nphdr);
                }
                Err(Errors::one(
                    "the --section-start addresses give no stable number of segments".to_string(),
                ))
            }
            Addresser::Script(b) => {
                let (w, out) = &mut **b;
                // SIZEOF_HEADERS counts the program headers, which depend on the loads the addresses make: lay
                // out again until the count is stable, and until the sections an expression named before their
                // place (`ADDR(.later)`) have the addresses it saw.
                let mut before: (Vec<u64>, Vec<(String, crate::expr::Value)>) = Default::default();
                for _ in 0..4 {
                    let a = super::script::assign_addresses(
                        w,
                        osecs,
                        &mut place.sec_off,
                        &mut place.cursor,
                    )
                    .map_err(Errors::one)?;
                    // With `PHDRS`, the script's list exactly.
                    let n = match w.sc.phdrs.len() {
                        0 => {
                            w.fixed_headers
                                + a.loads.len()
                                + (w.phdr && a.headers.is_some()) as usize
                        }
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
    }
}

pub fn assign_segments<A: Arch>(
    cx: &Cx,
    osecs: &mut [OutputSection],
    map: &SectionMap,
    headers: &SectionHeaders,
    place: &mut Placement,
    relr_got: &[u32],
    merges: &[super::MergeGroup],
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
    let mut addresser = match cx.config.sections.as_deref() {
        None => Addresser::Default(
            Box::new(plan::<A>(cx, osecs, map, keep)?),
            Placed::default(),
        ),
        Some(sc) => Addresser::Script(Box::new((
            super::script::Walk {
                config: cx.config,
                sc,
                res: cx.res,
                lists: &lists,
                runs: &runs,
                script_desc: &map.script_desc,
                keep,
                headers: 64,
                fixed_headers: fixed_headers(cx, osecs, map, keep, &notes, &tls),
                phdr: map.interp.is_some(),
                data_base: std::cell::Cell::new(None),
                merges,
                synth: map.synth,
                prior: Default::default(),
                prior_lma: Vec::new(),
            },
            None,
        ))),
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
            if let Addresser::Script(b) = &mut addresser {
                b.0.synth.set_size(Synth::RelrDyn, size);
            }
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
    osecs: &[OutputSection],
    map: &SectionMap,
    keep: &[bool],
    notes: &[usize],
    tls: &[usize],
) -> usize {
    let kept = |s: Synth| map.synth.get(s).is_some_and(|i| keep[i.index()]);
    map.interp.is_some() as usize
        + cx.is_dynamic as usize
        + notes.len()
        + kept(Synth::GnuProperty) as usize
        + !tls.is_empty() as usize
        + script_relro(cx, osecs, keep, None).is_some() as usize
        + kept(Synth::EhFrameHdr) as usize
        + 1
}

/// A script layout's RELRO range, where the script has `DATA_SEGMENT_RELRO_END` (GNU ld makes none without, and
/// a script may put writable data among sections of RELRO names): from the first non-empty kept section the
/// default rules call RELRO data to the end of the run of such sections that follows it, or to where
/// `DATA_SEGMENT_RELRO_END` says (not rounded to a page: the loader protects the whole pages inside).
fn script_relro(
    cx: &Cx,
    osecs: &[OutputSection],
    keep: &[bool],
    relro_end: Option<u64>,
) -> Option<(u64, u64, u64, u64)> {
    // Not paged (-n): GNU ld pads RELRO's end but protects nothing.
    if !cx.config.relro
        || !cx.config.paged()
        || !cx
            .config
            .sections
            .as_deref()
            .is_some_and(|sc| sc.ends_relro)
    {
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

impl Plan {
    /// A segment class's permissions.
    fn class_flags(&self, c: u32) -> u32 {
        if self.magic != Magic::Paged {
            return E::PF_R;
        }
        match c {
            1 => E::PF_R | E::PF_X,
            0 if self.code_with_headers => E::PF_R | E::PF_X,
            3 | 4 => E::PF_R | E::PF_W,
            _ => E::PF_R,
        }
    }

    /// A segment class's load alignment.
    fn class_align(&self, c: u32) -> u64 {
        self.class_align.get(&c).copied().unwrap_or(self.max_page)
    }

    /// The default layout's loads (one per segment class, more with `--section-start`), in address order, and
    /// RELRO range.
    fn header_plan(&self, placed: &Placed) -> HeaderPlan<'_> {
        let relro = placed.relro.filter(|_| self.has_relro);
        let mut loads: Vec<Load> = placed
            .runs
            .iter()
            .enumerate()
            .map(|(k, r)| {
                // The RELRO segment's PT_LOAD reaches its page end, so PT_GNU_RELRO (which does, for ld.so to
                // protect the whole last page) lies inside it; the next segment starts on the next page anyway.
                let mem_end = match relro {
                    Some((_, _, end, run)) if run == k && end == r.mend => {
                        align_up(r.mend, self.common_page)
                    }
                    _ => r.mend,
                };
                Load {
                    flags: r.flags,
                    offset: r.off,
                    vaddr: r.addr,
                    paddr: r.addr,
                    filesz: r.fend - r.off,
                    memsz: mem_end - r.addr,
                    align: r.align,
                }
            })
            .collect();
        // --section-start may put a load below those before it in the file.
        loads.sort_by_key(|l| l.vaddr);
        let relro =
            relro.map(|(o, a, end, _)| (o, a, end - a, align_up(end, self.common_page) - a));
        HeaderPlan {
            loads,
            headers: (self.magic == Magic::Paged).then_some((self.base, self.headers)),
            interp: self.has_interp,
            relro,
            notes: &self.notes,
            property: self.has_property,
            tls: &self.tls,
            eh_hdr: self.has_eh_hdr,
        }
    }
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
