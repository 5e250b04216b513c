//! Layout with a linker script's `SECTIONS`: the script's output sections in its order with the orphans among
//! them (`order_sections`), the input sections of each in statement order (`script_lists`), and the addresses:
//! the commands evaluated in order with the location counter, `MEMORY` regions and load addresses
//! (`assign_addresses`), then the `PT_LOAD`s the addresses ask for (`loads`).

use super::eh_frame::eh_block_size;
use super::output_sections::Builder;
use super::rules::{Rules, init_priority, segment_class};
use super::segments::Load;
use super::{EhRecords, OutputSection, Part};
use crate::args::Config;
use crate::elf::align_up;
use crate::expr::{Env, Expr};
use crate::index::{FileId, NONE, OsecId, SecIdx};
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use crate::scan::{self, Scan};
use crate::script::ast::{Assignment, OutputCommand, SectionsCommand, Sort};
use crate::script::lexer::Pos;
use crate::script::sections::{
    DISCARD, InputName, SectionsScript, is_unallocated_type, unpack_selection,
};
use object::elf as E;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// An output section for every description of the script (but `/DISCARD/`), in its order, before any input's:
/// NOBITS without flags until inputs say otherwise (a section of assignments alone is writable NOBITS).
pub(super) fn add_script_sections(sc: &SectionsScript, b: &mut Builder) {
    for o in sc.outputs.iter().filter(|o| o.name != "/DISCARD/") {
        b.get_or_add(o.name.as_bytes(), E::SHT_NOBITS, 0);
    }
}

/// A description's output section once the inputs are in: `NOLOAD` makes it NOBITS, one with no input but data
/// commands is read-only data, and one with other commands (`. = . + SIZE`) is allocated writable space.
fn settle_flags(sc: &SectionsScript, d: usize, o: &mut OutputSection) {
    let desc = &sc.outputs[d];
    // As GNU ld makes them: data read-only, space writable.
    if o.flags == 0 && sc.has_data(d) {
        o.flags = E::SHF_ALLOC as u64;
    } else if o.flags == 0 && sc.has_own_commands(d) {
        o.flags = (E::SHF_ALLOC | E::SHF_WRITE) as u64;
    }
    if desc.ty.as_deref() == Some("NOLOAD") {
        o.sh_type = E::SHT_NOBITS;
    } else if sc.has_data(d) {
        o.sh_type = E::SHT_PROGBITS;
    }
}

/// Output section order under a script: its sections in script order; each orphan (an input or linker-made
/// section no statement places) after the last script section of its kind (the default rules' segment class:
/// read-only, code, RELRO, data), or before the first of a later kind; non-allocated orphans last.
pub fn order_sections(
    sc: &SectionsScript,
    rules: &Rules,
    osecs: &mut [OutputSection],
    order: &mut [u32],
) {
    let class = |o: &OutputSection| {
        if o.is_alloc() {
            segment_class(rules.rank(&o.name, o.sh_type, o.flags))
        } else {
            u32::MAX
        }
    };
    let mut anchors: Vec<(u32, i64)> = Vec::new();
    for (i, o) in osecs.iter_mut().enumerate() {
        if let Some(d) = sc.output(&o.name) {
            settle_flags(sc, d, o);
            if o.flags != 0 || !o.parts.is_empty() {
                anchors.push((class(o), 2 * i as i64));
            }
        }
    }
    let key = |i: usize, o: &OutputSection| -> (i64, u32) {
        if sc.output(&o.name).is_some() {
            return (2 * i as i64, 0);
        }
        let rank = rules.rank(&o.name, o.sh_type, o.flags);
        let c = class(o);
        if c == u32::MAX {
            return (i64::MAX, rank);
        }
        let same = anchors.iter().rev().find(|a| a.0 == c);
        let before = anchors.iter().rev().find(|a| a.0 < c);
        match (same, before) {
            (Some(a), _) | (None, Some(a)) => (a.1 + 1, rank),
            (None, None) => (-1, rank),
        }
    };
    order.sort_by_key(|&i| key(i as usize, &osecs[i as usize]));
}

/// Per output section under a script: its input sections as (statement, file, section), in the order they are
/// placed: statement order, then the statement's sort, then input order. Merged (`SHF_MERGE`) sections are listed
/// too: the output section's merged strings go where the first of them is.
pub fn script_lists(
    res: &Resolved,
    script: &[Vec<u32>],
    sec_osec: &[Vec<OsecId>],
    script_desc: &[u32],
) -> Vec<Vec<(u32, u32, u32)>> {
    let objects = &res.objects;
    // Per file, in input order: (output section, (statement, sort key, name for name sorts, file, section)).
    type Item<'a> = (u32, u64, &'a [u8], u32, u32);
    type Entry<'a> = (u32, Item<'a>);
    let all: Vec<Entry> = res.runs.flat_map(|f| {
        let o = &objects[f];
        (0..o.sections.len()).filter_map(move |s| {
            let osec = sec_osec[f][s];
            if osec.is_none() || script_desc[osec.index()] == NONE {
                return None;
            }
            let (k, sort) = unpack_selection(script[f][s]);
            let name = o.sec_name(s);
            let key = match sort {
                Sort::InitPriority => init_priority(name).unwrap_or(65536) as u64,
                Sort::Alignment | Sort::AlignmentName => u64::MAX - o.sec(s).align(),
                _ => 0,
            };
            let by_name: &[u8] = match sort {
                Sort::Name | Sort::NameAlignment | Sort::AlignmentName => name,
                _ => b"",
            };
            Some((osec.0, (k, key, by_name, f as u32, s as u32)))
        })
    });
    // Bucketed by output section in input order, then each bucket sorted stably by statement and sort key (in
    // parallel; already in order for most), which leaves input order among equals.
    let mut buckets: Vec<Vec<Item>> = vec![Vec::new(); script_desc.len()];
    for (osec, e) in all {
        buckets[osec as usize].push(e);
    }
    buckets
        .into_par_iter()
        .map(|mut b| {
            b.sort_by(|x, y| (x.0, x.1, x.2).cmp(&(y.0, y.1, y.2)));
            b.into_iter().map(|(k, _, _, f, s)| (k, f, s)).collect()
        })
        .collect()
}

/// The size and alignment an input section takes in its output section.
fn input_extent(res: &Resolved, eh: &EhRecords, f: u32, s: u32) -> (u64, u64) {
    let sec = res.objects[f as usize].sec(s as usize);
    if sec.kind == SectionKind::EhFrame {
        let recs = eh.get(FileId(f), SecIdx(s));
        (eh_block_size(recs), sec.align().min(4))
    } else {
        (sec.size(), sec.align())
    }
}

/// Places the input sections of script output sections one after another, before addresses are known (their
/// sizes decide which sections are kept); `assign_addresses` places them again with the script's commands.
pub fn provisional_offsets(
    res: &Resolved,
    eh: &EhRecords,
    lists: &[Vec<(u32, u32, u32)>],
    osecs: &mut [OutputSection],
    (sec_off, place_osec, cursor): (&mut [Vec<u64>], &mut [Vec<OsecId>], &mut [u64]),
) {
    for (i, list) in lists.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
        let mut off = 0u64;
        for &(_, f, s) in list {
            if res.objects[f as usize].sections[s as usize].kind == SectionKind::Merge {
                continue;
            }
            let (size, align) = input_extent(res, eh, f, s);
            off = align_up(off, align);
            osecs[i].align = osecs[i].align.max(align);
            sec_off[f as usize][s as usize] = off;
            place_osec[f as usize][s as usize] = OsecId::new(i);
            off += size;
        }
        cursor[i] = off;
    }
}

/// The addresses a script's layout gives.
pub struct ScriptAddresses {
    pub loads: Vec<Load>,
    /// The headers' address and size, when the first `PT_LOAD` maps them.
    pub headers: Option<(u64, u64)>,
    /// The file offset after the last allocated section.
    pub end: u64,
    /// The symbols the commands assign, with their values, in order; those whose expressions name symbols of the
    /// inputs are evaluated once those have addresses (`deferred`).
    pub symbols: Vec<(String, u64)>,
    pub deferred: Vec<Deferred>,
    /// How far the end of RELRO is from the next common page boundary (0: on one, or no RELRO).
    pub relro_misaligned: u64,
    /// Where `DATA_SEGMENT_RELRO_END` put the end of RELRO (GNU ld's script: past `.got.plt`'s reserved words).
    pub relro_end: Option<u64>,
    /// The data commands' values.
    pub data: Vec<ScriptData>,
    pub fills: Vec<ScriptFill>,
}

/// What a script's layout leaves for the later passes: the symbols its assignments define (with values), those
/// evaluated once the inputs' symbols have addresses, its data commands and fill patterns.
#[derive(Default)]
pub struct ScriptExtras {
    pub symbols: Vec<(String, u64)>,
    pub deferred: Vec<Deferred>,
    pub data: Vec<ScriptData>,
    pub fills: Vec<ScriptFill>,
}

/// A script assignment evaluated after the symbols of the inputs have addresses, with the location counter it
/// saw.
pub struct Deferred {
    pub name: String,
    pub expr: Expr,
    pub dot: u64,
    pub at: String,
}

/// What the walk over the commands reads and writes.
pub struct Walk<'a> {
    pub config: &'a Config,
    pub sc: &'a SectionsScript,
    pub res: &'a Resolved,
    pub eh: &'a EhRecords,
    pub lists: &'a [Vec<(u32, u32, u32)>],
    pub script_desc: &'a [u32],
    pub keep: &'a [bool],
    /// SIZEOF_HEADERS: the ELF header and the program headers.
    pub headers: u64,
    /// The program headers other than the loads and `PT_PHDR`.
    pub fixed_headers: usize,
    pub dynamic: bool,
    /// `DATA_SEGMENT_ALIGN`'s padding that puts the end of RELRO on a common page boundary (GNU ld's two
    /// passes over the script: the first finds where RELRO ends, the second moves the data segment).
    pub relro_padding: std::cell::Cell<u64>,
    pub merges: &'a [super::MergeGroup],
}

struct State<'w> {
    w: &'w Walk<'w>,
    osecs: &'w mut [OutputSection],
    sec_off: &'w mut [Vec<u64>],
    cursor: &'w mut [u64],
    lma: Vec<u64>,
    placed: Vec<bool>,
    dot: u64,
    /// `MEMORY` regions: (name, origin, length, next free address).
    regions: Vec<(String, u64, u64, u64)>,
    /// The previous allocated section's load offset (LMA - VMA) and region, for sections without `AT`.
    prev_delta: (u64, Option<usize>),
    symbols: HashMap<String, u64>,
    order: Vec<String>,
    deferred: Vec<Deferred>,
    /// Where `DATA_SEGMENT_RELRO_END` put the end of RELRO.
    relro_end: std::cell::Cell<Option<u64>>,
    data: Vec<ScriptData>,
    fills: Vec<ScriptFill>,
}

/// A fill pattern (`=fill`, `FILL(...)`) for the gaps of an output section from an offset on.
pub type ScriptFill = (OsecId, u64, Vec<u8>);

/// The bytes of a fill expression, big-endian: a number's significant bytes (at least one; GNU ld keeps the
/// leading zeros a literal is written with, which the parsed number no longer has), four for anything else.
fn fill_pattern(e: &Expr, env: &dyn Env) -> Result<Vec<u8>, String> {
    let v = e.eval(env)?;
    let len = match e {
        Expr::Num(_) => (8 - (v.leading_zeros() / 8) as usize).max(1),
        _ => 4,
    };
    Ok(v.to_be_bytes()[8 - len..].to_vec())
}

/// A data command's bytes: output section, offset in it, size, value; with size 0, space that the location
/// counter skipped, `value` bytes that no writer touches.
pub type ScriptData = (OsecId, u64, u8, u64);

impl Env for State<'_> {
    fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).copied()
    }
    fn section(&self, name: &str) -> Option<(u64, u64, u64, u64)> {
        // Sizes are known before addresses (`SIZEOF(.got.plt)` ahead of it in GNU ld's script); a dropped
        // section is empty.
        let i = self.osecs.iter().position(|o| o.name == name.as_bytes())?;
        let o = &self.osecs[i];
        let size = if self.w.keep[i] { o.size } else { 0 };
        Some((o.addr, self.lma[i], size, o.align.max(1)))
    }
    fn max_page_size(&self) -> u64 {
        self.w.config.max_page_size
    }
    fn common_page_size(&self) -> u64 {
        self.w.config.common_page_size
    }
    fn sizeof_headers(&self) -> u64 {
        self.w.headers
    }
    fn dot(&self) -> Option<u64> {
        Some(self.dot)
    }
    fn memory(&self, name: &str) -> Option<(u64, u64)> {
        let r = self.regions.iter().find(|r| r.0 == name)?;
        Some((r.1, r.2))
    }
    fn relro_padding(&self) -> u64 {
        self.w.relro_padding.get()
    }
    fn relro_end(&self, end: u64) -> bool {
        if !self.w.config.relro {
            return false;
        }
        self.relro_end.set(Some(end));
        true
    }
}

/// Lays out the allocated and script-described sections by the commands; returns the addresses and the loads.
pub fn assign_addresses(
    w: &Walk,
    osecs: &mut [OutputSection],
    sec_off: &mut [Vec<u64>],
    cursor: &mut [u64],
) -> Result<ScriptAddresses, String> {
    let n = osecs.len();
    let mut st = State {
        w,
        osecs,
        sec_off,
        cursor,
        lma: vec![0; n],
        placed: vec![false; n],
        dot: 0,
        regions: Vec::new(),
        prev_delta: (0, None),
        symbols: HashMap::default(),
        order: Vec::new(),
        deferred: Vec::new(),
        relro_end: std::cell::Cell::new(None),
        data: Vec::new(),
        fills: Vec::new(),
    };
    for r in &w.sc.memory {
        let origin = r.origin.eval(&st).map_err(|e| w.sc.error(r.pos, e))?;
        let length = r.length.eval(&st).map_err(|e| w.sc.error(r.pos, e))?;
        st.regions.push((r.name.clone(), origin, length, origin));
    }
    let mut next = 0usize;
    for c in &w.sc.commands {
        match c {
            SectionsCommand::Assign(a) => st.assign(a, None)?,
            SectionsCommand::Output(o) => {
                // A second description of a name (`ONLY_IF_RW` after `ONLY_IF_RO`) adds nothing.
                let Some(i) = st.osecs.iter().position(|x| x.name == o.name.as_bytes()) else {
                    continue;
                };
                if st.placed[i] {
                    continue;
                }
                // Orphans placed before this section, then it, then the orphans after it.
                while next < i {
                    st.place_orphan(next)?;
                    next += 1;
                }
                st.place(i)?;
                next = next.max(i + 1);
                while next < n && w.script_desc.get(next).is_none_or(|&d| d == NONE) {
                    st.place_orphan(next)?;
                    next += 1;
                }
            }
            SectionsCommand::Assert(e, msg, pos) => st.check(e, msg, *pos)?,
            SectionsCommand::Entry(_) | SectionsCommand::Overlay(_) => {}
        }
    }
    while next < n {
        st.place_orphan(next)?;
        next += 1;
    }
    let keys = load_keys(w, st.osecs);
    let (loads, headers, end, offsets) = loads(&st, w, &keys)?;
    for (i, off) in offsets {
        st.osecs[i].offset = off;
    }
    let symbols = st
        .order
        .iter()
        .map(|s| (s.clone(), st.symbols[s]))
        .collect();
    let page = w.config.common_page_size.max(1);
    let relro_misaligned = st.relro_end.get().map_or(0, |e| align_up(e, page) - e);
    Ok(ScriptAddresses {
        loads,
        headers,
        end,
        symbols,
        deferred: st.deferred,
        relro_misaligned,
        relro_end: st.relro_end.get(),
        data: st.data,
        fills: st.fills,
    })
}

impl State<'_> {
    /// A symbol assignment, or one to `.` (inside output section `inside`, where it may not move backwards).
    fn assign(&mut self, a: &Assignment, inside: Option<u64>) -> Result<(), String> {
        let sc = self.w.sc;
        let value = a.expr.eval(self);
        let value = match (value, a.op) {
            (Ok(v), "=") => Ok(v),
            (Ok(v), op) => {
                let cur = if a.target == "." {
                    Some(self.dot)
                } else {
                    self.symbols.get(&a.target).copied()
                };
                match cur {
                    Some(c) => compound(op, c, v).map_err(|e| sc.error(a.pos, e)),
                    None => Err(sc.error(a.pos, format!("{} has no value yet", a.target))),
                }
            }
            (Err(e), _) => Err(e),
        };
        if a.target == "." {
            let v = value.map_err(|e| sc.error(a.pos, e))?;
            if let Some(start) = inside
                && v < self.dot
            {
                let _ = start;
                return Err(sc.error(a.pos, "cannot move the location counter backwards"));
            }
            self.dot = v;
            return Ok(());
        }
        match value {
            Ok(v) => {
                if self.symbols.insert(a.target.clone(), v).is_none() {
                    self.order.push(a.target.clone());
                }
            }
            // It names something that has no address yet (a symbol of the inputs): evaluated after them.
            Err(_) if a.op == "=" => self.deferred.push(Deferred {
                name: a.target.clone(),
                expr: a.expr.clone(),
                dot: self.dot,
                at: sc.error(a.pos, ""),
            }),
            Err(e) => return Err(sc.error(a.pos, e)),
        }
        Ok(())
    }

    fn check(&mut self, e: &Expr, msg: &str, pos: Pos) -> Result<(), String> {
        match e.eval(self) {
            Ok(0) => Err(self.w.sc.error(pos, msg)),
            Ok(_) => Ok(()),
            Err(e) => Err(self.w.sc.error(pos, e)),
        }
    }

    /// An orphan: where the location counter is, at its alignment.
    fn place_orphan(&mut self, i: usize) -> Result<(), String> {
        if !self.w.keep[i] || self.placed[i] {
            return Ok(());
        }
        let o = &mut self.osecs[i];
        self.placed[i] = true;
        if !o.is_alloc() {
            return Ok(());
        }
        let addr = align_up(self.dot, o.align.max(1));
        o.addr = addr;
        self.lma[i] = addr.wrapping_add(self.prev_delta.0);
        if !(o.is_tls() && o.is_nobits()) {
            self.dot = addr.checked_add(o.size).ok_or_else(|| {
                format!(
                    "section {} at {addr:#x} ends past the end of the address space",
                    String::from_utf8_lossy(&o.name)
                )
            })?;
        }
        Ok(())
    }

    /// A section the script describes: its address (given, its region's next, or the location counter, aligned),
    /// its load address, then its contents by its commands.
    fn place(&mut self, i: usize) -> Result<(), String> {
        let w = self.w;
        let d = w.script_desc[i] as usize;
        let desc = &w.sc.outputs[d];
        // Contents the linker makes (`.dynamic`, `.gnu.version_r`...) need file space (GNU ld: "section has no
        // contents"; a fuzzer finding: their writer found the bytes gone).
        if desc.ty.as_deref() == Some("NOLOAD")
            && w.keep[i]
            && self.osecs[i]
                .parts
                .iter()
                .any(|p| matches!(p, Part::Synthetic))
        {
            return Err(w.sc.error(
                desc.pos,
                format!(
                    "{} holds contents the linker makes: it cannot be NOLOAD",
                    desc.name
                ),
            ));
        }
        let region = match &desc.region {
            Some(r) => Some(self.region(r, desc.pos)?),
            None => None,
        };
        let alloc = self.osecs[i].is_alloc();
        let kept = w.keep[i];
        if let Some(t) = desc.ty.as_deref().filter(|t| is_unallocated_type(t))
            && kept
        {
            return Err(w.sc.error(
                desc.pos,
                format!(
                    "output section type {t} with contents ({}) is not supported yet",
                    desc.name
                ),
            ));
        }
        let mut align = self.osecs[i].align.max(1);
        if let Some(e) = &desc.align {
            align = align.max(e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?);
        }
        let addr = match &desc.address {
            Some(e) => e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?,
            None if !alloc => 0,
            None => {
                let from = region.map_or(self.dot, |r| self.regions[r].3);
                align_up(from, align)
            }
        };
        let lma = if let Some(e) = &desc.lma {
            e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?
        } else if let Some(r) = &desc.lma_region {
            // Where the region is, not aligned (GNU ld's; lld aligns it to the section).
            let r = self.region(r, desc.pos)?;
            self.regions[r].3
        } else if desc.address.is_none() && self.prev_delta.1 == region {
            // The previous section's load offset kept, the load address aligned as the section is (GNU ld's).
            align_up(addr.wrapping_add(self.prev_delta.0), align)
        } else {
            addr
        };
        self.placed[i] = true;
        self.lma[i] = lma;
        if alloc {
            self.dot = addr;
        }
        let dot_before = self.dot;
        let size = self.contents(i, d, addr)?;
        let o = &mut self.osecs[i];
        o.addr = addr;
        let tbss = o.is_tls() && o.is_nobits();
        if !alloc {
            self.dot = dot_before;
            return Ok(());
        }
        let end = addr.checked_add(size).ok_or_else(|| {
            w.sc.error(
                desc.pos,
                format!("section {} ends past the address space", desc.name),
            )
        })?;
        if kept {
            self.prev_delta = (lma.wrapping_sub(addr), region);
        }
        self.dot = if tbss { addr } else { end };
        if let Some(r) = region {
            self.regions[r].3 = self.dot;
            let (_, origin, length, _) = self.regions[r];
            if self.dot > origin.saturating_add(length) {
                return Err(w.sc.error(
                    desc.pos,
                    format!(
                        "section {} does not fit in region {}: {:#x} bytes past its end",
                        desc.name,
                        self.regions[r].0,
                        self.dot - origin - length
                    ),
                ));
            }
        }
        if let Some(r) = &desc.lma_region
            && !self.osecs[i].is_nobits()
        {
            let r = self.region(r, desc.pos)?;
            self.regions[r].3 = lma + size;
        }
        Ok(())
    }

    fn region(&self, name: &str, pos: Pos) -> Result<usize, String> {
        self.regions
            .iter()
            .position(|r| r.0 == name)
            .ok_or_else(|| self.w.sc.error(pos, format!("no memory region {name}")))
    }

    /// The contents of section `i` (description `d`) at `addr`: its input sections statement by statement and its
    /// assignments, then its other parts (merged strings, linker-made contents) after them. Returns its size.
    fn contents(&mut self, i: usize, d: usize, addr: u64) -> Result<u64, String> {
        let w = self.w;
        let desc = &w.sc.outputs[d];
        let subalign = match &desc.subalign {
            Some(e) => Some(e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?),
            None => None,
        };
        let list = &w.lists[i];
        let mut next = 0usize;
        let mut merged_at = None;
        // The parts' offsets as laid out before (placing merged strings among the inputs moves theirs).
        let before = self.osecs[i].part_offsets.clone();
        self.dot = addr;
        if let Some(e) = &desc.fill {
            let p = fill_pattern(e, self).map_err(|e| w.sc.error(desc.pos, e))?;
            self.fills.push((OsecId::new(i), 0, p));
        }
        for (c, stmt) in desc.commands.iter().zip(&w.sc.stmt_of[d]) {
            match c {
                OutputCommand::Input(_) => {
                    let k = stmt.unwrap_or(u32::MAX);
                    while next < list.len() && list[next].0 == k {
                        self.place_input(i, addr, list[next], subalign, &mut merged_at);
                        next += 1;
                    }
                }
                OutputCommand::Assign(a) => {
                    let from = self.dot;
                    self.assign(a, Some(addr))?;
                    // Space the location counter skipped (`. = . + SIZE`, `. = ALIGN(N)`): no writer touches it,
                    // so that a large one can stay a hole of a sparse output (a fuzzer finding: a script's
                    // `. = . + 0x40000000` took a GiB of disk and of memory). Not where a fill pattern covers it.
                    let filled = self.fills.iter().any(|f| f.0 == OsecId::new(i));
                    if self.dot > from && !filled {
                        self.data
                            .push((OsecId::new(i), from - addr, 0, self.dot - from));
                    }
                }
                OutputCommand::Assert(e, msg, pos) => self.check(e, msg, *pos)?,
                OutputCommand::Fill(e) => {
                    let p = fill_pattern(e, self).map_err(|e| w.sc.error(desc.pos, e))?;
                    self.fills.push((OsecId::new(i), self.dot - addr, p));
                }
                OutputCommand::Data(size, e) => {
                    let v = e.eval(self).map_err(|e| {
                        w.sc.error(desc.pos, format!("in a data command of {}: {e}", desc.name))
                    })?;
                    self.data.push((OsecId::new(i), self.dot - addr, *size, v));
                    self.dot = self.dot.saturating_add(*size as u64);
                }
                _ => {}
            }
        }
        // Sections of a statement of another description of this name (`ONLY_IF_RW` beside `ONLY_IF_RO`).
        for &entry in &list[next..] {
            self.place_input(i, addr, entry, subalign, &mut merged_at);
        }
        // Saturated: the contents reach the end of the address space.
        if self.dot == u64::MAX {
            return Err(w.sc.error(
                desc.pos,
                format!(
                    "section {} ends past the end of the address space",
                    desc.name
                ),
            ));
        }
        let inputs = self.dot - addr;
        self.cursor[i] = inputs;
        self.osecs[i].inputs_size = inputs;
        self.settle_parts(i, inputs, merged_at.is_some(), &before);
        Ok(self.osecs[i].size)
    }

    /// Input section `(_, f, s)` of output section `i` (at `addr`) at the location counter; the first merged one
    /// brings the section's merged strings there.
    fn place_input(
        &mut self,
        i: usize,
        addr: u64,
        (_, f, s): (u32, u32, u32),
        subalign: Option<u64>,
        merged_at: &mut Option<u64>,
    ) {
        let w = self.w;
        if w.res.objects[f as usize].sections[s as usize].kind == SectionKind::Merge {
            if merged_at.is_none() {
                *merged_at = Some(self.dot);
                let o = &mut self.osecs[i];
                for (p, off) in o.parts.iter().zip(o.part_offsets.iter_mut()) {
                    if let Part::Merged(m) = p {
                        let g = &w.merges[*m as usize];
                        let at = align_up(self.dot, g.align);
                        *off = at - addr;
                        self.dot = at.saturating_add(g.size);
                    }
                }
            }
            return;
        }
        let (size, align) = input_extent(w.res, w.eh, f, s);
        let at = align_up(self.dot, subalign.unwrap_or(align));
        self.sec_off[f as usize][s as usize] = at - addr;
        self.dot = at.saturating_add(size);
    }

    /// The parts after the inputs (linker-made contents, commons, merged strings not placed among the inputs),
    /// each at its alignment after the inputs' `inputs` bytes; the section's size. `old`: the parts' offsets before
    /// the inputs were placed.
    fn settle_parts(&mut self, i: usize, inputs: u64, merged_placed: bool, old: &[u64]) {
        let merges = self.w.merges;
        let o = &mut self.osecs[i];
        let Some(k) = o.parts.iter().position(|p| matches!(p, Part::Sorted)) else {
            o.size = o.size.max(inputs);
            return;
        };
        let mut end = inputs;
        for j in k + 1..o.parts.len() {
            let (size, align) = match o.parts[j] {
                Part::Merged(_) if merged_placed => continue,
                Part::Merged(m) => (merges[m as usize].size, merges[m as usize].align),
                // Up to the next part laid out after it: merged strings placed among the inputs in an earlier
                // walk lie below it (a fuzzer finding: `*(*)` in `.rela.dyn` overflowed here).
                _ => {
                    let next = old[j + 1..].iter().find(|&&x| x >= old[j]);
                    (
                        next.copied().unwrap_or(o.size).max(old[j]) - old[j],
                        o.align.max(1),
                    )
                }
            };
            let at = align_up(end, align);
            o.part_offsets[j] = at;
            end = at + size;
        }
        o.size = end;
    }
}

fn compound(op: &str, a: u64, b: u64) -> Result<u64, String> {
    Ok(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" if b == 0 => return Err("division by zero".into()),
        "/" => a / b,
        "<<" => a.checked_shl(b as u32).unwrap_or(0),
        ">>" => a.checked_shr(b as u32).unwrap_or(0),
        "&" => a & b,
        "|" => a | b,
        _ => a ^ b,
    })
}

/// The segment flags of a section.
fn flags_of(o: &OutputSection) -> u32 {
    let mut f = E::PF_R;
    if o.flags & E::SHF_WRITE as u64 != 0 {
        f |= E::PF_W;
    }
    if o.flags & E::SHF_EXECINSTR as u64 != 0 {
        f |= E::PF_X;
    }
    f
}

/// The `PT_LOAD`s of the allocated sections, in order: a new one where the flags change on a new page, the load
/// address stops following the address, the address goes backwards or jumps a page or more; file offsets congruent to addresses
/// modulo the page size. The headers are in the first when there is room for them before its first section on
/// its page.
type Loads = (Vec<Load>, Option<(u64, u64)>, u64, Vec<(usize, u64)>);

/// With `PHDRS`: per output section, the program headers it is in (its description's `:phdr`s, or the previous
/// section's, as GNU ld inherits them; the first `PT_LOAD` for sections before any).
pub fn section_phdrs(
    sc: &SectionsScript,
    osecs: &[OutputSection],
    script_desc: &[u32],
) -> Vec<Vec<usize>> {
    let first_load = (0..sc.phdrs.len()).find(|&k| sc.phdr_type(k) == Ok(E::PT_LOAD));
    let mut current: Vec<usize> = first_load.into_iter().collect();
    (0..osecs.len())
        .map(|i| {
            if let Some(&d) = script_desc.get(i).filter(|&&d| d != NONE) {
                let named = &sc.outputs[d as usize].phdrs;
                if !named.is_empty() {
                    current = named
                        .iter()
                        .filter_map(|n| sc.phdrs.iter().position(|p| &p.name == n))
                        .collect();
                }
            }
            // NOLOAD sections are in no segment (GNU ld's rule under PHDRS); the next section still inherits.
            let noload = script_desc.get(i).is_some_and(|&d| {
                d != NONE && sc.outputs[d as usize].ty.as_deref() == Some("NOLOAD")
            });
            if osecs[i].is_alloc() && !noload {
                current.clone()
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// Per output section, the `PHDRS` `PT_LOAD` it is in (`None` without PHDRS).
fn load_keys(w: &Walk, osecs: &[OutputSection]) -> Vec<Option<usize>> {
    if w.sc.phdrs.is_empty() {
        return vec![None; osecs.len()];
    }
    section_phdrs(w.sc, osecs, w.script_desc)
        .into_iter()
        .map(|l| l.into_iter().find(|&k| w.sc.phdr_type(k) == Ok(E::PT_LOAD)))
        .collect()
}

/// The program headers `PHDRS` lists, in its order, over the laid-out sections: each `PT_LOAD` the load its
/// sections made, the others spanning their sections; `FLAGS` and `AT` as given.
pub fn phdrs_segments(
    sc: &SectionsScript,
    osecs: &[OutputSection],
    keep: &[bool],
    script_desc: &[u32],
    loads: &[Load],
    headers: Option<(u64, u64)>,
) -> Result<Vec<crate::elf::Segment>, String> {
    let members = section_phdrs(sc, osecs, script_desc);
    let mut out = Vec::with_capacity(sc.phdrs.len());
    for (k, p) in sc.phdrs.iter().enumerate() {
        let ty = sc.phdr_type(k)?;
        let secs: Vec<&OutputSection> = (0..osecs.len())
            .filter(|&i| keep[i] && members[i].contains(&k))
            .map(|i| &osecs[i])
            .collect();
        // Without sections or FLAGS, no flags and the word's alignment, as GNU ld writes them.
        let mut seg = crate::elf::Segment {
            p_type: ty,
            flags: match secs.is_empty() {
                true => 0,
                false => secs.iter().fold(E::PF_R, |f, o| f | flags_of(o)),
            },
            offset: 0,
            vaddr: 0,
            paddr: 0,
            filesz: 0,
            memsz: 0,
            align: secs.iter().map(|o| o.align.max(1)).max().unwrap_or(8),
        };
        if ty == E::PT_LOAD {
            if let Some(first) = secs.iter().find(|o| o.size > 0).or(secs.first())
                && let Some(l) = load_at(loads, first.addr)
            {
                (seg.offset, seg.vaddr, seg.paddr) = (l.offset, l.vaddr, l.paddr);
                (seg.filesz, seg.memsz, seg.align) = (l.filesz, l.memsz, l.align);
            }
        } else if ty == E::PT_PHDR {
            let base = headers.map_or(0, |h| h.0);
            let size = 56 * sc.phdrs.len() as u64;
            (
                seg.offset, seg.vaddr, seg.paddr, seg.filesz, seg.memsz, seg.align,
            ) = (64, base + 64, base + 64, size, size, 8);
        } else if let (Some(first), Some(last)) = (secs.first(), secs.last()) {
            let end = |o: &&OutputSection| {
                o.addr
                    + if o.is_tls() && o.is_nobits() && ty != E::PT_TLS {
                        0
                    } else {
                        o.size
                    }
            };
            let file_end = secs
                .iter()
                .filter(|o| !o.is_nobits())
                .map(|o| o.offset + o.size)
                .max();
            // The physical address is the first section's load address, as its PT_LOAD maps it.
            let paddr = load_at(loads, first.addr)
                .map_or(first.addr, |l| l.paddr.wrapping_add(first.addr - l.vaddr));
            (seg.offset, seg.vaddr, seg.paddr) = (first.offset, first.addr, paddr);
            seg.filesz = file_end.map_or(0, |e| e - first.offset);
            seg.memsz = end(last) - first.addr;
        }
        let env = super::script::NoLink;
        if let Some(f) = &p.flags {
            seg.flags = f.eval(&env).map_err(|e| sc.error(p.pos, e))? as u32;
        }
        if let Some(a) = &p.at {
            seg.paddr = a.eval(&env).map_err(|e| sc.error(p.pos, e))?;
        }
        out.push(seg);
    }
    Ok(out)
}

/// The load that holds `addr`: the one it lies in, or else one it ends (an empty section's address); loads
/// adjoin (the kernel's `.data` ends where `.init.text`'s PT_LOAD starts), so an end is only a fallback.
fn load_at(loads: &[Load], addr: u64) -> Option<&Load> {
    (loads
        .iter()
        .find(|l| addr >= l.vaddr && addr - l.vaddr < l.memsz))
    .or_else(|| loads.iter().find(|l| addr == l.vaddr.wrapping_add(l.memsz)))
}

/// Evaluation of `PHDRS`' `FLAGS` and `AT`, which are constants.
pub struct NoLink;

impl Env for NoLink {
    fn symbol(&self, _: &str) -> Option<u64> {
        None
    }
    fn section(&self, _: &str) -> Option<(u64, u64, u64, u64)> {
        None
    }
    fn max_page_size(&self) -> u64 {
        0x1000
    }
    fn common_page_size(&self) -> u64 {
        0x1000
    }
    fn sizeof_headers(&self) -> u64 {
        0
    }
}

fn loads(st: &State, w: &Walk, keys: &[Option<usize>]) -> Result<Loads, String> {
    let page = w.config.max_page_size;
    let alloc: Vec<usize> = (0..st.osecs.len())
        .filter(|&i| w.keep[i] && st.osecs[i].is_alloc())
        .collect();
    let mut loads: Vec<Load> = Vec::new();
    let mut offsets = Vec::with_capacity(alloc.len());
    let mut headers = None;
    let mut off = w.headers;
    // The previous section's end address and load offset (LMA - VMA).
    let mut prev: Option<(u64, u64)> = None;
    let first_addr = alloc.first().map(|&i| st.osecs[i].addr);
    // With PHDRS the headers are loaded where the first PT_LOAD says FILEHDR.
    let want_headers = match (w.sc.phdrs.is_empty(), alloc.first()) {
        (true, _) => true,
        (false, Some(&i)) => keys[i].is_some_and(|k| w.sc.phdrs[k].filehdr),
        (false, None) => false,
    };
    if let Some(a) = first_addr
        && want_headers
    {
        let base = a - a % page;
        if a >= base + w.headers {
            headers = Some((base, w.headers));
            off = a - base;
        }
    }
    let mut prev_key = None;
    for &i in &alloc {
        let o = &st.osecs[i];
        let (addr, lma) = (o.addr, st.lma[i]);
        let delta = lma.wrapping_sub(addr);
        let flags = flags_of(o);
        let tbss = o.is_tls() && o.is_nobits();
        // With PHDRS, a section in no PT_LOAD is in none here either.
        if !w.sc.phdrs.is_empty() && keys[i].is_none() {
            offsets.push((i, off));
            continue;
        }
        // An empty section makes no segment of its own.
        if o.size == 0
            && let Some(l) = loads.last()
        {
            offsets.push((i, l.offset + addr.saturating_sub(l.vaddr).min(l.filesz)));
            continue;
        }
        // Sections of other flags on the page the load ends in share it (its flags widen, as GNU ld does): two
        // loads mapping one page would take each other's protections.
        let split = match (loads.last(), prev) {
            // PHDRS: where the section's first PT_LOAD changes (a section below the one before it in the same
            // load starts a new one too, rather than a negative offset).
            (Some(_), Some((end, _))) if !w.sc.phdrs.is_empty() => {
                keys[i] != prev_key || addr < end
            }
            // A NOBITS section's load address loads nothing: it extends the segment before it whatever it is.
            (Some(l), Some((end, d))) => {
                let same_page = addr / page == end.saturating_sub(1) / page;
                let moved = d != delta && !o.is_nobits();
                (l.flags != flags && !same_page) || moved || addr < end || addr - end >= page
            }
            _ => true,
        };
        prev_key = keys[i];
        if split {
            let start_off = if loads.is_empty() && headers.is_some() {
                off
            } else {
                let mut x = off;
                x += addr.wrapping_sub(x) & (page - 1);
                x
            };
            let (vaddr, paddr, offset) = match (loads.is_empty(), headers) {
                (true, Some((base, _))) => (base, lma - (addr - base), 0),
                _ => (addr, lma, start_off),
            };
            loads.push(Load {
                flags,
                offset,
                vaddr,
                paddr,
                filesz: 0,
                memsz: 0,
                align: page,
            });
        }
        let l = loads.last_mut().unwrap();
        l.flags |= flags;
        // Offsets past the end of a file (a script's `. = 0xfffffffffffff000` inside a section): an error, not
        // wrapped offsets that overlap other sections.
        let too_big = || {
            format!(
                "section {} at {addr:#x} of {:#x} bytes does not fit in a file",
                String::from_utf8_lossy(&o.name),
                o.size
            )
        };
        // 2^48 bytes: beyond any file system's files, and far from wrapping in the arithmetic that follows.
        const MAX_FILE: u64 = 1 << 48;
        let at = (addr - l.vaddr)
            .checked_add(l.offset)
            .filter(|&at| at <= MAX_FILE)
            .ok_or_else(too_big)?;
        offsets.push((i, at));
        if o.is_nobits() {
            // No file space: what follows in the file starts where the load's contents end, not at this
            // section's address (a fuzzer finding: a NOLOAD section of 2^47 bytes made a 128 TiB output).
            off = l.offset + l.filesz;
        } else {
            off = at
                .checked_add(o.size)
                .filter(|&end| end <= MAX_FILE)
                .ok_or_else(too_big)?;
            l.filesz = off - l.offset;
        }
        let end = if tbss {
            addr
        } else {
            addr.checked_add(o.size).ok_or_else(too_big)?
        };
        l.memsz = l.memsz.max(end - l.vaddr);
        l.align = l.align.max(o.align.next_power_of_two());
        prev = Some((
            end,
            if o.is_nobits() {
                prev.map_or(delta, |p| p.1)
            } else {
                delta
            },
        ));
    }
    Ok((loads, headers, off, offsets))
}

/// Whether the script's `/DISCARD/` takes `.dynamic` (`*(.dynamic)`, which matches the linker's own section as
/// in GNU ld), so that the output has no dynamic sections: the kernel's self-relocating decompressor, a `-pie`
/// whose size its build checks. Taken only where nothing needs them (no shared object, dynamic relocation, GOT
/// or PLT slot); otherwise refused, as rivet cannot yet drop the parts that need them.
pub fn discards_dynamic(config: &Config, scan: &Scan, any_shared: bool) -> Result<bool, String> {
    let Some(sc) = config.sections.as_deref() else {
        return Ok(false);
    };
    let linker_made = InputName {
        path: "",
        member: None,
    };
    if sc.select(&linker_made, b".dynamic", true).0 != DISCARD {
        return Ok(false);
    }
    let slots = scan::NEEDS_GOT | scan::NEEDS_PLT | scan::NEEDS_GOTTP | scan::NEEDS_TLSGD;
    let needed = any_shared
        || config.kind == crate::args::OutputKind::Shared
        || scan.textrel
        || scan.needs_tlsld
        || [&scan.dyn_relocs, &scan.irel_relocs]
            .iter()
            .any(|v| v.iter().any(|f| !f.is_empty()))
        || scan.relr.iter().any(|f| !f.is_empty())
        || scan.flags.iter().any(|&f| f & slots != 0);
    if needed {
        return Err(format!(
            "{}: /DISCARD/ of .dynamic in an output that needs dynamic sections is not supported yet",
            sc.file
        ));
    }
    Ok(true)
}
