//! The walk over a script's commands: the location counter, regions, load addresses, symbol values, data
//! commands and fills (`assign_addresses`).

use super::super::segments::Load;
use super::super::{OutputSection, Part, Synth, SynthMap};
use super::ScriptInput;
use super::loads::{load_keys, loads};
use super::regions::Regions;
use super::runs::{APART, Run, RunAt};
use crate::args::Config;
use crate::elf::align_up;
use crate::expr::{Base, Env, Expr, Value};
use crate::index::{NONE, OsecId};
use crate::resolve::Resolved;
use crate::script::ast::{Assignment, OutputCommand, SectionsCommand};
use crate::script::lexer::Pos;
use crate::script::sections::SectionsScript;
use object::elf as E;
use rustc_hash::FxHashMap as HashMap;

pub struct ScriptAddresses {
    pub loads: Vec<Load>,
    /// The headers' address and size, when the first `PT_LOAD` maps them.
    pub headers: Option<(u64, u64)>,
    /// The file offset after the last allocated section.
    pub end: u64,
    /// The symbols the commands assign, with their values and sections, in order; those whose expressions name
    /// symbols of the inputs are evaluated once those have addresses (`deferred`).
    pub symbols: Vec<ScriptSymbol>,
    pub deferred: Vec<Deferred>,
    /// Data commands whose values name symbols that have none yet: (index in `data`, expression).
    pub deferred_data: Vec<(usize, Deferred)>,
    /// Where `DATA_SEGMENT_ALIGN` puts the data, from this pass's sizes (GNU ld's second pass): the next pass's
    /// `Walk::data_base`. `None` without `DATA_SEGMENT_ALIGN`.
    pub data_base: Option<DataPlace>,
    /// Where `DATA_SEGMENT_RELRO_END` put the end of RELRO (GNU ld's script: past `.got.plt`'s reserved words).
    pub relro_end: Option<u64>,
    /// Some expression named a section placed after it, whose address the pass took from the pass before.
    pub forward: bool,
    /// The sections' load addresses (for the next pass's `Walk::prior_lma`).
    pub lma: Vec<u64>,
    /// The data commands' values.
    pub data: Vec<ScriptData>,
    pub fills: Vec<ScriptFill>,
    pub code_gaps: Vec<CodeGap>,
    /// Per output section, per run: where it goes (`runs::place_runs` writes its sections' offsets).
    pub run_at: Vec<Vec<RunAt>>,
    pub runs_only: Vec<bool>,
    pub holes: Vec<Hole>,
    /// Every symbol the script assigned a value in this pass (outside `SECTIONS` too), for the next pass's
    /// location counter (`Walk::prior`).
    pub values: Vec<(String, Value)>,
    /// A symbol the location counter needed before any pass gave it a value, and where.
    pub guessed: Option<(String, Pos)>,
    /// The section an absolute value the location counter made belongs to after the last command (GNU ld's
    /// `section_for_dot` there), for the `--defsym`s given after the script (`Config::defsyms_after`).
    pub end_dot_section: OsecId,
    /// The `MEMORY` regions' origins and lengths by name.
    pub memory: Vec<(String, u64, u64)>,
    /// Warnings to give once, after the last pass.
    pub warnings: Vec<String>,
}

/// What a script's layout leaves for the later passes: the symbols its assignments define (with values), those
/// evaluated once the inputs' symbols have addresses, its data commands and fill patterns.
#[derive(Default)]
pub struct ScriptExtras {
    pub symbols: Vec<ScriptSymbol>,
    pub deferred: Vec<Deferred>,
    pub deferred_data: Vec<(usize, Deferred)>,
    pub data: Vec<ScriptData>,
    pub fills: Vec<ScriptFill>,
    pub code_gaps: Vec<CodeGap>,
    pub holes: Vec<Hole>,
    /// The output sections' load addresses (`LOADADDR`), by section.
    pub lma: Vec<u64>,
    /// `ScriptAddresses::end_dot_section` (`None` without a script).
    pub end_dot_section: Option<OsecId>,
    /// `ScriptAddresses::memory`.
    pub memory: Vec<(String, u64, u64)>,
}

/// A symbol a script assigns: its name, address, and the output section it is relative to (`NONE`: absolute),
/// as GNU ld's rules for the section of an expression give it.
pub type ScriptSymbol = (String, u64, OsecId);

/// A script assignment evaluated after the symbols of the inputs have addresses, with the location counter it
/// saw, the output section it is inside (`NONE`: outside) and the section its value belongs to if the location
/// counter made it absolute (GNU ld's `section_for_dot`).
pub struct Deferred {
    pub name: String,
    pub expr: Expr,
    pub dot: u64,
    pub inside: OsecId,
    pub dot_section: OsecId,
    pub at: String,
    /// An `ASSERT` naming a symbol of the inputs: its message, for a value of 0 (no symbol is assigned).
    pub assert: Option<String>,
}

/// What the walk over the commands reads and writes.
pub struct Walk<'a> {
    pub config: &'a Config,
    pub sc: &'a SectionsScript,
    pub res: &'a Resolved,
    pub lists: &'a [Vec<ScriptInput>],
    /// The lists' runs (`runs::list_runs`).
    pub runs: &'a [Vec<Run>],
    pub script_desc: &'a [u32],
    pub keep: &'a [bool],
    /// SIZEOF_HEADERS: the ELF header and the program headers.
    pub headers: u64,
    /// The program headers other than the loads and `PT_PHDR`.
    pub fixed_headers: usize,
    /// A `PT_PHDR` describes the headers where they are loaded: with a `PT_INTERP` (GNU ld's rule).
    pub phdr: bool,
    /// Where `DATA_SEGMENT_ALIGN` puts the data, once a pass found it (GNU ld's two passes over the script: the
    /// first finds where RELRO ends, the second moves the data; `layout::data_segment`).
    pub data_base: std::cell::Cell<Option<DataPlace>>,
    pub merges: &'a [super::super::MergeGroup],
    /// The linker-made sections' sizes and alignments.
    pub synth: SynthMap,
    /// The symbols' values from the pass before: an assignment to `.` may name a symbol the script assigns
    /// later (in `SECTIONS` or after it), as GNU ld's later passes see the values of the earlier.
    pub prior: HashMap<String, Value>,
    /// The sections' load addresses from the pass before: `LOADADDR(.data)` ahead of `.data` (the STM32 scripts'
    /// `_sidata`) sees them, as it sees the addresses.
    pub prior_lma: Vec<u64>,
    /// The script is the default layout (`layout::default_script::script`) and the rules have placed every
    /// input already: a description's contents are its section as sized, then its assignments.
    pub preplaced: bool,
}

pub(super) struct State<'w> {
    w: &'w Walk<'w>,
    pub(super) osecs: &'w mut [OutputSection],
    sec_off: &'w mut [Vec<u64>],
    cursor: &'w mut [u64],
    pub(super) lma: Vec<u64>,
    placed: Vec<bool>,
    /// Per output description, its section (`usize::MAX`: none): two of one name have one each.
    desc_osec: Vec<usize>,
    dot: u64,
    regions: Regions,
    /// Per region (`None`: none), the address and load address of the section GNU ld keeps as its `last_os`:
    /// a section in the region without a load address or load region keeps its load offset.
    last_os: HashMap<Option<usize>, (u64, u64)>,
    /// The previous section's region as its description names it (`None`: none) and its load region: a section
    /// of the same region without `AT`, `AT>` or an address is loaded in that region too (GNU ld's
    /// `lang_propagate_lma_regions`), and an orphan takes both from the section it follows.
    prev_regions: Option<(Option<usize>, Option<usize>)>,
    /// The symbols assigned so far, as expressions see them, and the output section each belongs to.
    symbols: HashMap<String, (Value, OsecId)>,
    /// The symbols the commands assigned, in order (a `--defsym`'s value in `symbols` is not one).
    order: Vec<String>,
    /// The `--defsym`s given after the script, which `symbols` holds for their values, but that `DEFINED` does
    /// not see until a command assigns them (GNU ld's `DEFINED` is true for a symbol assigned before it).
    late: rustc_hash::FxHashSet<String>,
    /// The `--defsym`s in `symbols` that no command has assigned yet.
    seeded: rustc_hash::FxHashSet<String>,
    /// The output section whose commands are being evaluated (`Env::inside`), for assignments.
    inside: Option<OsecId>,
    /// GNU ld's state for `section_for_dot`: the last allocated section laid out, whether an assignment to `.`
    /// outside the sections came after it, and whether `_end` (or `end`, `__end`...) was assigned.
    current: Option<usize>,
    prefer_next: bool,
    found_end: bool,
    /// The first section not laid out yet: an orphan there goes before the next section of the commands.
    pending: usize,
    deferred: Vec<Deferred>,
    deferred_data: Vec<(usize, Deferred)>,
    /// Where `DATA_SEGMENT_RELRO_END` put the end of RELRO (with its offset), and the offset.
    relro_end: std::cell::Cell<Option<(u64, u64)>>,
    data_align: std::cell::Cell<Option<DataAlign>>,
    /// `DATA_SEGMENT_END`'s value.
    data_end: std::cell::Cell<Option<u64>>,
    /// An expression asked for a section the pass has not placed yet.
    forward: std::cell::Cell<bool>,
    data: Vec<ScriptData>,
    fills: Vec<ScriptFill>,
    code_gaps: Vec<CodeGap>,
    /// Per output section, per run of its list: where this pass placed it whole, or `runs::APART`.
    run_at: Vec<Vec<RunAt>>,
    /// Per output section: its inputs' range holds runs placed whole, data commands, skipped space and merge
    /// groups (each covered by its writer or a `Hole`), no section placed on its own, no fill pattern or commons,
    /// so each input's writer can pad before it (`runs::place_runs`).
    runs_only: Vec<bool>,
    /// Sections placed on their own so far, in this pass (but the first merged section of each output section,
    /// whose merge groups' writers cover their ranges, and the `holes` before them).
    loose: usize,
    holes: Vec<Hole>,
    /// Evaluating what moves the location counter (an assignment to `.`), at this place: a symbol assigned later
    /// then has the pass before's value (`Walk::prior`), or 1 in the first pass (`guessed`).
    moving_dot: std::cell::Cell<Option<Pos>>,
    guessed: std::cell::RefCell<Option<(String, Pos)>>,
    /// An expression read `SIZEOF_HEADERS`: the headers are loaded below the first section, as GNU ld loads
    /// them then (its `load_phdrs`).
    pub(super) asked_headers: std::cell::Cell<bool>,
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

/// Padding before an input section of an executable output section, which GNU ld fills with no-ops (`Arch::
/// fill_code`): (output section, offset in it, length). Space a command skipped is a `ScriptData` of size 0.
pub type CodeGap = (OsecId, u64, u64);

/// Bytes among an output section's inputs that no writer covers (the alignment before a merge group placed
/// there): (output section, offset in it, length). A reused output is zeroed there.
pub type Hole = (OsecId, u64, u64);

impl Env for State<'_> {
    fn symbol(&self, name: &str) -> Option<u64> {
        self.symbol_value(name)
            .map(|v| crate::expr::address(self, v))
    }
    fn symbol_value(&self, name: &str) -> Option<Value> {
        if let Some(s) = self.symbols.get(name) {
            return Some(s.0);
        }
        let at = self.moving_dot.get()?;
        // Assigned later: another pass, with this one's value.
        if let Some(&v) = self.w.prior.get(name) {
            self.forward.set(true);
            return Some(v);
        }
        let config = self.w.config;
        let later = (config.section_symbols.iter()).any(|s| s.name == name)
            || (config.defsyms.iter().chain(&config.provides)).any(|(s, _)| s == name);
        if later {
            self.forward.set(true);
            self.guessed
                .borrow_mut()
                .get_or_insert((name.to_string(), at));
            // 1 rather than 0, which `/` refuses.
            return Some(Value::abs(1));
        }
        None
    }
    /// The script's symbols assigned so far, and the others the link defines (the inputs', whose addresses come
    /// later; the linker's own and `--defsym`'s).
    fn defined(&self, name: &str) -> bool {
        use crate::resolve::Def;
        let (res, config) = (self.w.res, self.w.config);
        let later = || (config.section_symbols.iter()).any(|s| s.name == name);
        if self.late.contains(name) {
            return false;
        }
        self.symbols.contains_key(name)
            || res
                .names
                .lookup(name.as_bytes())
                .is_some_and(|g| match res.defs[g.index()] {
                    Def::Object { .. } | Def::Shared { .. } => true,
                    Def::Linker => !later(),
                    Def::Undefined => false,
                })
    }
    fn section_id(&self, name: &str) -> Option<OsecId> {
        let i = self.osecs.iter().position(|o| o.name == name.as_bytes())?;
        Some(OsecId::new(i))
    }
    fn section_addr(&self, id: OsecId) -> u64 {
        self.osecs[id.index()].addr
    }
    fn inside(&self) -> Option<OsecId> {
        self.inside
    }
    fn section(&self, name: &str) -> Option<(u64, u64, u64, u64)> {
        // Sizes are known before addresses (`SIZEOF(.got.plt)` ahead of it in GNU ld's script); a dropped
        // section is empty.
        let i = self.osecs.iter().position(|o| o.name == name.as_bytes())?;
        let o = &self.osecs[i];
        // Not placed yet in this pass: the address is the pass before's.
        if !self.placed[i] {
            self.forward.set(true);
        }
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
        self.asked_headers.set(true);
        self.w.headers
    }
    fn dot(&self) -> Option<u64> {
        Some(self.dot)
    }
    fn memory(&self, name: &str) -> Option<(u64, u64)> {
        let r = self.regions.get(self.regions.find(name)?);
        Some((r.origin, r.length))
    }
    fn data_segment_align(&self, dot: u64, first: u64, pages: (u64, u64)) -> u64 {
        let at = self.w.data_base.get().map_or(first, |p| p.addr);
        self.data_align.set(Some(DataAlign { dot, at, pages }));
        at
    }
    // Without RELRO GNU ld leaves the location counter; with it, its second pass ends RELRO on a maximum-size
    // page (its `relropagesize`).
    fn relro_end(&self, exp: u64, offset: u64) -> u64 {
        if !self.w.config.relro {
            return exp;
        }
        let end = exp.wrapping_add(offset);
        let at = match (self.w.data_base.get(), self.data_align.get()) {
            (
                Some(DataPlace { by_relro: true, .. }),
                Some(DataAlign {
                    pages: (max, _), ..
                }),
            ) if max.is_power_of_two() => align_up(end, max).wrapping_sub(offset),
            _ => exp,
        };
        // RELRO ends where the location counter then is, past the offset: on the page, as GNU ld's, where the
        // RELRO sections' alignments kept them from ending right below it.
        self.relro_end.set(Some((at.wrapping_add(offset), offset)));
        at
    }
    fn data_segment_end(&self, end: u64) {
        self.data_end.set(Some(end));
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
        lma: match w.prior_lma.len() == n {
            true => w.prior_lma.clone(),
            false => vec![0; n],
        },
        placed: vec![false; n],
        desc_osec: {
            let mut v = vec![usize::MAX; w.sc.outputs.len()];
            for (i, &d) in w
                .script_desc
                .iter()
                .enumerate()
                .filter(|(_, d)| **d != NONE)
            {
                v[d as usize] = i;
            }
            v
        },
        dot: 0,
        regions: Regions::new(&w.sc.region_aliases),
        last_os: HashMap::default(),
        prev_regions: None,
        symbols: HashMap::default(),
        order: Vec::new(),
        late: Default::default(),
        seeded: Default::default(),
        inside: None,
        current: None,
        prefer_next: false,
        found_end: false,
        pending: 0,
        deferred: Vec::new(),
        deferred_data: Vec::new(),
        relro_end: std::cell::Cell::new(None),
        data_align: std::cell::Cell::new(None),
        data_end: std::cell::Cell::new(None),
        forward: std::cell::Cell::new(false),
        data: Vec::new(),
        fills: Vec::new(),
        code_gaps: Vec::new(),
        run_at: (w.runs.iter()).map(|r| vec![APART; r.len()]).collect(),
        runs_only: vec![false; w.runs.len()],
        loose: 0,
        holes: Vec::new(),
        moving_dot: std::cell::Cell::new(None),
        guessed: std::cell::RefCell::new(None),
        asked_headers: std::cell::Cell::new(false),
    };
    // Assignments outside `SECTIONS` and `--defsym`s (`Config::defsyms`) that need no symbol of the inputs are
    // visible to the commands, as in GNU ld, whose passes see every assignment.
    for (k, (name, text)) in w.config.defsyms.iter().enumerate() {
        // With its section (`ADDR(.data) + 4` is relative to `.data`).
        if let Ok(v) = crate::expr::parse(text).and_then(|e| e.eval_value(&st).map(|e| e.value)) {
            let sec = match v.base {
                Base::Section(s) => s,
                _ => OsecId::NONE,
            };
            st.symbols.insert(name.clone(), (v, sec));
            st.seeded.insert(name.clone());
        }
        if k >= w.config.defsyms_after {
            st.late.insert(name.clone());
        }
    }
    for r in &w.sc.memory {
        let origin = r.origin.eval(&st).map_err(|e| w.sc.error(r.pos, e))?;
        let length = r.length.eval(&st).map_err(|e| w.sc.error(r.pos, e))?;
        st.regions.add(r, origin, length);
    }
    let warnings = undeclared_regions(w, &mut st.regions);
    let mut next = 0usize;
    // The orphans after a section go after the symbol assignments that follow it, before the next assignment to
    // `.` (which sets up the next section) or the next section, as GNU ld inserts them.
    let trailing = |st: &mut State, next: &mut usize| -> Result<(), String> {
        while *next < n && w.script_desc.get(*next).is_none_or(|&d| d == NONE) {
            st.place_orphan(*next)?;
            *next += 1;
        }
        Ok(())
    };
    for (k, c) in w.sc.commands.iter().enumerate() {
        st.pending = next;
        match c {
            SectionsCommand::Assign(a) => {
                if a.target == "." && !before_unallocated(&st, k) {
                    trailing(&mut st, &mut next)?;
                }
                st.assign(a, None, k)?
            }
            SectionsCommand::Output(_) => {
                // None for `/DISCARD/` and a description whose constraint failed.
                let Some(i) = st.command_section(k) else {
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
            }
            SectionsCommand::Assert(e, msg, pos) => st.check(e, msg, *pos)?,
            SectionsCommand::Entry(_) | SectionsCommand::Overlay(_) => {}
        }
    }
    while next < n {
        st.place_orphan(next)?;
        next += 1;
    }
    let overflows = st.regions.overflows();
    if !overflows.is_empty() {
        // One error per region, as GNU ld reports each (main prints the first line's prefix).
        return Err(overflows.join("\nrivet: error: "));
    }
    let end_dot_section = st.section_for_dot(usize::MAX);
    settle_empty(w, st.osecs);
    let keys = load_keys(w, st.osecs);
    let (loads, headers, end, offsets) = loads(&st, w, &keys)?;
    for (i, off) in offsets {
        st.osecs[i].offset = off;
    }
    let symbols = (st.order.iter())
        .map(|s| {
            let (v, sec) = st.symbols[s];
            let keep = |i: usize| w.keep[i];
            let sec = nearby_section(st.osecs, &keep, sec, crate::expr::address(&st, v));
            (s.clone(), crate::expr::address(&st, v), sec)
        })
        .collect();
    let data_base = data_base(&st);
    let values = pass_values(&st);
    Ok(ScriptAddresses {
        loads,
        headers,
        end,
        symbols,
        deferred: st.deferred,
        deferred_data: st.deferred_data,
        data_base,
        relro_end: st.relro_end.get().map(|e| e.0),
        forward: st.forward.get(),
        lma: std::mem::take(&mut st.lma),
        data: st.data,
        fills: st.fills,
        code_gaps: st.code_gaps,
        run_at: st.run_at,
        runs_only: st.runs_only,
        holes: st.holes,
        values,
        guessed: st.guessed.into_inner(),
        end_dot_section,
        memory: st.regions.named(),
        warnings,
    })
}

/// The regions the descriptions name, or `ORIGIN` and `LENGTH` ask about, that `MEMORY` does not declare, made
/// as GNU ld makes them (at 0, unbounded: `LENGTH` is all ones); its warnings.
fn undeclared_regions(w: &Walk, regions: &mut Regions) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut add = |name: &str, pos: Pos| {
        if regions.find(name).is_none() {
            regions.add_undeclared(name);
            let msg = format!("memory region `{name}' not declared");
            warnings.push(w.sc.error(pos, msg));
        }
    };
    let asked = |exprs: &mut dyn Iterator<Item = &Expr>| {
        let mut names = Vec::new();
        exprs.for_each(|e| e.call_names(&["ORIGIN", "LENGTH"], &mut names));
        names
    };
    for desc in &w.sc.outputs {
        for name in desc.region.iter().chain(&desc.lma_region) {
            add(name, desc.pos);
        }
    }
    for c in &w.sc.commands {
        let (names, pos) = match c {
            SectionsCommand::Assign(a) => (asked(&mut std::iter::once(&a.expr)), a.pos),
            SectionsCommand::Assert(e, _, pos) => (asked(&mut std::iter::once(e)), *pos),
            SectionsCommand::Output(o) => {
                let own = [&o.address, &o.lma, &o.align, &o.subalign, &o.fill];
                let inner = (o.commands.iter()).filter_map(|c| match c {
                    OutputCommand::Assign(a) => Some(&a.expr),
                    OutputCommand::Data(_, e) | OutputCommand::Fill(e) => Some(e),
                    OutputCommand::Assert(e, ..) => Some(e),
                    _ => None,
                });
                (asked(&mut own.into_iter().flatten().chain(inner)), o.pos)
            }
            _ => continue,
        };
        names.iter().for_each(|n| add(n, pos));
    }
    warnings
}

/// The values the script's symbols had at the end of a pass: those `SECTIONS` assigned, and the assignments
/// outside it (`--defsym`s) evaluated with this pass's addresses, for the next pass (`Walk::prior`).
fn pass_values(st: &State) -> Vec<(String, Value)> {
    let mut values: Vec<(String, Value)> = (st.order.iter())
        .map(|s| (s.clone(), st.symbols[s].0))
        .collect();
    for (name, text) in st.w.config.defsyms.iter().chain(&st.w.config.provides) {
        if st.symbols.contains_key(name) {
            continue;
        }
        if let Ok(v) = crate::expr::parse(text).and_then(|e| e.eval_value(st).map(|e| e.value)) {
            values.push((name.clone(), v));
        }
    }
    values
}

/// Whether the next output section after command `k` is a kept unallocated one with contents: GNU ld then puts
/// the orphans after the assignments to `.` before it too.
fn before_unallocated(st: &State, k: usize) -> bool {
    let next = (k + 1..st.w.sc.commands.len())
        .find(|&j| matches!(st.w.sc.commands[j], SectionsCommand::Output(_)));
    next.and_then(|j| st.command_section(j))
        .is_some_and(|i| st.w.keep[i] && !st.osecs[i].is_alloc() && st.osecs[i].size > 0)
}

impl State<'_> {
    /// The output section of command `k`, an output description that made one.
    fn command_section(&self, k: usize) -> Option<usize> {
        let d = *self.w.sc.command_desc.get(k)?;
        (d != NONE)
            .then(|| self.desc_osec[d as usize])
            .filter(|&i| i != usize::MAX)
    }

    /// A symbol assignment, or one to `.` (inside the output section at `inside`, where it may not move
    /// backwards); `cmd` is the index of a command outside the sections (`usize::MAX` inside one).
    fn assign(&mut self, a: &Assignment, inside: Option<u64>, cmd: usize) -> Result<(), String> {
        let sc = self.w.sc;
        // `x op= e` is `x = x op e`, as GNU ld reads it.
        let compound;
        let expr = match a.op {
            "=" => &a.expr,
            op => {
                let target = match a.target.as_str() {
                    "." => Expr::Dot,
                    t => Expr::Sym(t.to_string()),
                };
                compound = Expr::Binary(op, Box::new(target), Box::new(a.expr.clone()));
                &compound
            }
        };
        // `. = ASSERT(e, msg)` naming a symbol of the inputs: the check, with the final symbols.
        if a.target == "."
            && let Expr::Call("ASSERT", args) = expr
            && let [crate::expr::Arg::Expr(e), crate::expr::Arg::Name(msg)] = &args[..]
            && e.eval(self).is_err()
        {
            return self.check(e, msg, a.pos);
        }
        if a.target == "." {
            self.prefer_next |= inside.is_none();
            self.moving_dot.set(Some(a.pos));
            let e = expr.eval_value(self);
            self.moving_dot.set(None);
            let e = e.map_err(|e| sc.error(a.pos, e))?;
            // A number inside an output section is an offset in it.
            let v = match e.value.base {
                Base::Number => match e.value.v.checked_add(inside.unwrap_or(0)) {
                    Some(v) => v,
                    None => {
                        let msg = format!(
                            "the location counter set to {:#x} past the section's start at {:#x} is beyond the \
                             address space",
                            e.value.v,
                            inside.unwrap_or(0)
                        );
                        return Err(sc.error(a.pos, msg));
                    }
                },
                _ => crate::expr::address(self, e.value),
            };
            if inside.is_some() && v < self.dot {
                return Err(sc.error(a.pos, "cannot move the location counter backwards"));
            }
            self.dot = v;
            return Ok(());
        }
        if a.provide && !self.provides(&a.target) {
            return Ok(());
        }
        self.found_end |= a.target.trim_start_matches('_') == "end";
        match expr.eval_value(self) {
            Ok(e) => {
                let mut v = e.value;
                if v.base == Base::Number {
                    v.base = self.inside.map_or(Base::Abs, Base::Section);
                }
                let sec = match v.base {
                    Base::Section(s) => s,
                    _ if e.from_dot => self.section_for_dot(cmd),
                    _ => OsecId::NONE,
                };
                // A `--defsym`'s value there (`symbols` holds them for the commands) does not make it the script's.
                let first = self.symbols.insert(a.target.clone(), (v, sec)).is_none();
                self.late.remove(&a.target);
                if first || self.seeded.remove(&a.target) {
                    self.order.push(a.target.clone());
                }
            }
            // It names something that has no address yet (a symbol of the inputs): evaluated after them.
            Err(_) if a.op == "=" => self.deferred.push(Deferred {
                name: a.target.clone(),
                expr: a.expr.clone(),
                dot: self.dot,
                inside: self.inside.unwrap_or(OsecId::NONE),
                dot_section: self.section_for_dot(cmd),
                at: sc.error(a.pos, ""),
                assert: None,
            }),
            Err(e) => return Err(sc.error(a.pos, e)),
        }
        Ok(())
    }

    /// Whether a `PROVIDE` of `name` defines it: an input refers to it and none defines it (resolve made it the
    /// linker's), or the script reads it (`SectionsScript::symbols`). Otherwise it is as if not written, and
    /// `DEFINED` is false for it, as in GNU ld.
    fn provides(&self, name: &str) -> bool {
        let (res, config) = (self.w.res, self.w.config);
        let linker = (res.names.lookup(name.as_bytes()))
            .is_some_and(|g| res.defs[g.index()] == crate::resolve::Def::Linker);
        linker || (config.section_symbols.iter()).any(|s| s.name == name && !s.provide)
    }

    /// The output section an absolute value the location counter made belongs to (GNU ld's `section_for_dot`):
    /// the last allocated section laid out, or after an assignment to `.` outside the sections (which sets up the
    /// next section's address) the next one kept, looking back from it for an allocated one; `NONE` for none.
    fn section_for_dot(&self, cmd: usize) -> OsecId {
        let (w, n) = (self.w, self.osecs.len());
        let usable = |i: usize| {
            let o = &self.osecs[i];
            w.keep[i] && o.is_alloc() && !o.is_tls()
        };
        let found = |i: Option<usize>| i.map_or(OsecId::NONE, OsecId::new);
        if n == 0 {
            return OsecId::NONE;
        }
        if self.current.is_none() || self.prefer_next {
            // An orphan waiting to be laid out comes before the next section of the commands.
            let orphan = (self.pending < n
                && w.script_desc.get(self.pending).is_none_or(|&d| d == NONE))
            .then_some(self.pending);
            let next = orphan.or_else(|| {
                (cmd.saturating_add(1)..w.sc.commands.len()).find_map(|j| self.command_section(j))
            });
            let mut os = next;
            while let Some(i) = os
                && !self.found_end
                && !w.keep[i]
            {
                os = (i + 1 < n).then_some(i + 1);
            }
            if self.current.is_none() || os.is_none() || !self.found_end {
                let start = os.unwrap_or(n);
                return found((0..=start.min(n - 1)).rev().find(|&i| usable(i)));
            }
        }
        let cur = self.current.unwrap_or(0);
        found(
            (0..=cur)
                .rev()
                .find(|&i| usable(i))
                .or_else(|| (0..n).find(|&i| usable(i))),
        )
    }

    fn check(&mut self, e: &Expr, msg: &str, pos: Pos) -> Result<(), String> {
        match e.eval(self) {
            Ok(0) => Err(self.w.sc.error(pos, msg)),
            Ok(_) => Ok(()),
            // It names something that has no address yet (a symbol of the inputs, as the kernel's setup.ld
            // `ASSERT(hdr == 0x1ef, ...)`): checked with the final symbols, as GNU ld's last pass does.
            Err(_) => {
                self.deferred.push(Deferred {
                    name: String::new(),
                    expr: e.clone(),
                    dot: self.dot,
                    inside: self.inside.unwrap_or(OsecId::NONE),
                    dot_section: OsecId::NONE,
                    at: self.w.sc.error(pos, ""),
                    assert: Some(msg.to_string()),
                });
                Ok(())
            }
        }
    }

    /// An orphan: where the location counter is, at its alignment.
    fn place_orphan(&mut self, i: usize) -> Result<(), String> {
        if self.placed[i] {
            return Ok(());
        }
        // A dropped one where it would be, for the symbols of its empty inputs, the location counter unmoved.
        if !self.w.keep[i] {
            let o = &mut self.osecs[i];
            o.addr = align_up(self.dot, o.align.max(1));
            return Ok(());
        }
        self.placed[i] = true;
        if !self.osecs[i].is_alloc() {
            // GNU ld gives it no region, which ends the load region the next sections take.
            self.prev_regions = Some((None, None));
            return Ok(());
        }
        (self.current, self.prefer_next) = (Some(i), false);
        let name = String::from_utf8_lossy(&self.osecs[i].name).into_owned();
        let fixed = section_start(self.w.config, &self.osecs[i].name);
        // The regions of the section it follows (GNU ld's `lang_insert_orphan`), else as a description without
        // `>region`: the first region whose attributes take it.
        let (declared, lma_region) = self.prev_regions.unwrap_or((None, None));
        let region = match (fixed, declared) {
            (Some(_), _) => None,
            (None, Some(r)) => Some(r),
            (None, None) => self.default_region(i, &name, None)?,
        };
        let o = &self.osecs[i];
        let align = o.align.max(1);
        let from = region.map_or(self.dot, |r| self.regions.get(r).next);
        let addr = fixed.unwrap_or_else(|| align_up(from, align));
        let how = LmaAlign {
            with_input: None,
            section: if fixed.is_some() { 1 } else { align },
            given: None,
        };
        let lma = self.load_address(i, addr, (region, lma_region), how);
        self.osecs[i].addr = addr;
        self.lma[i] = lma;
        let o = &self.osecs[i];
        if !(o.is_tls() && o.is_nobits()) {
            self.dot = addr.checked_add(o.size).ok_or_else(|| {
                format!("section {name} at {addr:#x} ends past the end of the address space")
            })?;
        }
        self.settle_regions(i, (region, lma_region), lma, (&name, None));
        Ok(())
    }

    /// The region of allocated section `i` (`name`, described at `pos`) that names none and has no address: the
    /// first whose attributes take it; where `MEMORY` has regions and none does, GNU ld's error.
    fn default_region(
        &self,
        i: usize,
        name: &str,
        pos: Option<Pos>,
    ) -> Result<Option<usize>, String> {
        let o = &self.osecs[i];
        let region = self.regions.by_attributes(o);
        // A TLS zero-fill section takes no memory of its own (GNU ld's `IGNORE_SECTION`).
        if region.is_some() || self.regions.is_empty() || (o.is_tls() && o.is_nobits()) {
            return Ok(region);
        }
        let msg = format!("no memory region specified for loadable section `{name}'");
        Err(pos.map_or_else(|| msg.clone(), |p| self.w.sc.error(p, &msg)))
    }

    /// The load address of section `i` at `addr` in region `region` without `AT`: in load region `lma_region`
    /// at its next free address, aligned as `how` says; else at the load offset of the region's last section (GNU
    /// ld's `last_os`) aligned to the section, unless the address went back below that section; else the address.
    fn load_address(
        &self,
        i: usize,
        addr: u64,
        (region, lma_region): (Option<usize>, Option<usize>),
        how: LmaAlign,
    ) -> u64 {
        if let Some(r) = lma_region {
            let next = self.regions.get(r).next;
            return match (how.with_input, Some(r) == region, how.given) {
                (Some(padding), _, _) => next.wrapping_add(padding),
                (None, true, _) => align_up(next, how.section),
                (None, false, Some(a)) => align_up(next, a),
                (None, false, None) => next,
            };
        }
        let o = &self.osecs[i];
        match self.last_os.get(&region) {
            Some(&(vma, lma)) if o.is_alloc() => {
                let below = addr < vma && o.size != 0 && addr.saturating_add(o.size) <= vma;
                match below {
                    true => addr,
                    false => align_up(addr.wrapping_add(lma.wrapping_sub(vma)), how.section),
                }
            }
            _ => addr,
        }
    }

    /// After section `i` (`name`, described at `pos`), loaded at `lma`: its region filled up to the location
    /// counter and its load region (another one) past its contents, each of which must fit; and the section the
    /// region's next one keeps the load offset of, as GNU ld's `lang_size_sections_1` tracks it (one with
    /// contents, or a load address apart, or not below the last; not one with a load region).
    fn settle_regions(
        &mut self,
        i: usize,
        (region, lma_region): (Option<usize>, Option<usize>),
        lma: u64,
        (name, pos): (&str, Option<Pos>),
    ) {
        let o = &self.osecs[i];
        let (addr, size, tbss, nobits) =
            (o.addr, o.size, o.is_tls() && o.is_nobits(), o.is_nobits());
        let last = self.last_os.get(&region).copied();
        let tracked = size != 0 || last.map_or(addr != lma, |(vma, _)| addr >= vma);
        if !tbss && tracked && lma_region.is_none() {
            self.last_os.insert(region, (addr, lma));
        }
        if let Some(r) = region {
            self.fill_region(r, self.dot, (name, pos));
        }
        if let Some(r) = lma_region
            && Some(r) != region
            && !nobits
        {
            let end = lma.wrapping_add(if tbss { 0 } else { size });
            self.fill_region(r, end, (name, pos));
        }
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
                .any(|p| matches!(p, Part::Synthetic(_)))
        {
            return Err(w.sc.error(
                desc.pos,
                format!(
                    "{} holds contents the linker makes: it cannot be NOLOAD",
                    desc.name
                ),
            ));
        }
        let kept = w.keep[i];
        // --section-start (-Ttext, -Tdata, -Tbss) overrides the script's address, as in GNU ld.
        let fixed = section_start(w.config, desc.name.as_bytes()).filter(|_| {
            self.osecs[i].is_alloc() || !kept || self.osecs[i].flags == E::SHF_WRITE as u64
        });
        let addressed = desc.address.is_some() || fixed.is_some();
        let (declared, lma_region) = self.regions_of(d, addressed)?;
        // Without `>region` or an address, the first region whose attributes take the section (GNU ld's).
        let region = match declared {
            Some(r) => Some(r),
            None if !addressed && kept && self.osecs[i].is_alloc() => {
                self.default_region(i, &desc.name, Some(desc.pos))?
            }
            None => None,
        };
        // A dropped section is laid out where it would be, for the symbols its commands and its empty inputs
        // define, and then leaves the location counter as it was (GNU ld's).
        // So is a section kept empty for its commands (`settle_empty`, on an earlier pass).
        let alloc = self.osecs[i].is_alloc() || !kept || self.osecs[i].flags == E::SHF_WRITE as u64;
        let dot_on_entry = self.dot;
        let mut align = self.osecs[i].align.max(1);
        // The inputs' alignment `SUBALIGN` gives them raises the section's (never lowers it), as in GNU ld.
        let subalign = self.subalign(d)?;
        if let Some(sub) = subalign
            && !w.lists[i].is_empty()
        {
            align = align.max(sub);
            self.osecs[i].align = align;
        }
        let mut given_align = None;
        if let Some(e) = &desc.align {
            // Rounded up to a power of two, and the section's own alignment too (GNU ld's `sh_addralign`).
            let v = e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?;
            let v = v.checked_next_power_of_two().ok_or_else(|| {
                w.sc.error(
                    desc.pos,
                    format!("ALIGN({v:#x}) of {} is too large", desc.name),
                )
            })?;
            align = align.max(v);
            given_align = Some(v);
            self.osecs[i].align = align;
        }
        // The padding the alignment put before the address, for `ALIGN_WITH_INPUT`'s load address.
        let mut padding = 0;
        let addr = match (fixed, &desc.address) {
            (Some(a), _) => a,
            (None, Some(e)) => e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?,
            (None, None) => {
                let from = region.map_or(self.dot, |r| self.regions.get(r).next);
                let addr = align_up(from, align);
                padding = addr - from;
                addr
            }
        };
        let how = LmaAlign {
            with_input: desc.align_with_input.then_some(padding),
            section: if addressed {
                given_align.unwrap_or(1)
            } else {
                align
            },
            given: given_align,
        };
        let lma = match &desc.lma {
            Some(e) => e.eval(self).map_err(|e| w.sc.error(desc.pos, e))?,
            None => self.load_address(i, addr, (region, lma_region), how),
        };
        self.placed[i] = true;
        self.lma[i] = lma;
        self.dot = addr;
        if alloc && kept {
            (self.current, self.prefer_next) = (Some(i), false);
        }
        // Before the commands: values inside the section are relative to its address.
        self.osecs[i].addr = addr;
        let size = match w.preplaced {
            true => self.preplaced_contents((i, d), addr)?,
            false => self.contents((i, d), addr, subalign)?,
        };
        let o = &mut self.osecs[i];
        o.addr = addr;
        let tbss = o.is_tls() && o.is_nobits();
        if !kept {
            self.dot = dot_on_entry;
            return Ok(());
        }
        let end = addr.checked_add(size).ok_or_else(|| {
            w.sc.error(
                desc.pos,
                format!("section {} ends past the address space", desc.name),
            )
        })?;
        // GNU ld addresses an unallocated section as any other, and moves the location counter past it.
        if !alloc {
            self.dot = end;
            return Ok(());
        }
        self.dot = if tbss { addr } else { end };
        let load_region = lma_region.filter(|_| desc.lma.is_none());
        self.settle_regions(i, (region, load_region), lma, (&desc.name, Some(desc.pos)));
        Ok(())
    }

    /// Description `d`'s region (`None`: none; its load region where it names only that and no address, GNU ld's
    /// `lang_get_regions`) and load region: the one it names, or without `AT` or an address, the previous
    /// section's where that is in the same region (GNU ld's `lang_propagate_lma_regions`). Kept for the next.
    fn regions_of(
        &mut self,
        d: usize,
        addressed: bool,
    ) -> Result<(Option<usize>, Option<usize>), String> {
        let desc = &self.w.sc.outputs[d];
        let named = |n: &Option<String>| n.as_ref().map(|n| self.region(n, desc.pos)).transpose();
        let (vma, lma) = (named(&desc.region)?, named(&desc.lma_region)?);
        let region = match (vma, addressed) {
            (None, false) => lma,
            _ => vma,
        };
        let lma = match self.prev_regions {
            Some((prev, prev_lma))
                if lma.is_none() && desc.lma.is_none() && !addressed && prev == region =>
            {
                prev_lma
            }
            _ => lma,
        };
        self.prev_regions = Some((region, lma));
        Ok((region, lma))
    }

    /// Region `r` filled up to `end` by section `name` (described at `pos`); the first that does not fit is
    /// reported with the region's overflow after the walk, as GNU ld reports it.
    fn fill_region(&mut self, r: usize, end: u64, (name, pos): (&str, Option<Pos>)) {
        let msg = format!(
            "section `{name}' will not fit in region `{}'",
            self.regions.get(r).name
        );
        let msg = pos.map_or_else(|| msg.clone(), |p| self.w.sc.error(p, &msg));
        let reg = self.regions.get_mut(r);
        reg.next = end;
        if end > reg.origin.saturating_add(reg.length) && reg.full.is_none() {
            reg.full = Some(msg);
        }
    }

    fn region(&self, name: &str, pos: Pos) -> Result<usize, String> {
        (self.regions.find(name))
            .ok_or_else(|| self.w.sc.error(pos, format!("no memory region {name}")))
    }

    /// Description `d`'s `SUBALIGN`, rounded up to a power of two (GNU ld's `exp_get_power`).
    fn subalign(&self, d: usize) -> Result<Option<u64>, String> {
        let desc = &self.w.sc.outputs[d];
        let Some(e) = &desc.subalign else {
            return Ok(None);
        };
        let v = e.eval(self).map_err(|e| self.w.sc.error(desc.pos, e))?;
        let v = v.max(1).checked_next_power_of_two().ok_or_else(|| {
            (self.w.sc).error(
                desc.pos,
                format!("SUBALIGN({v:#x}) of {} is too large", desc.name),
            )
        })?;
        Ok(Some(v))
    }

    /// The contents of section `i` (description `d`) at `addr`, with its `SUBALIGN`: its input sections statement
    /// by statement and its assignments, then its other parts (merged strings, linker-made contents) after them.
    /// Returns its size.
    fn contents(
        &mut self,
        (i, d): (usize, usize),
        addr: u64,
        subalign: Option<u64>,
    ) -> Result<u64, String> {
        let w = self.w;
        let desc = &w.sc.outputs[d];
        let list = &w.lists[i];
        let mut next = 0usize;
        let mut run = 0usize;
        let mut merged_at = None;
        let mut commons_placed = false;
        let (loose, mut moved) = (self.loose, false);
        self.dot = addr;
        if let Some(e) = &desc.fill {
            let p = fill_pattern(e, self).map_err(|e| w.sc.error(desc.pos, e))?;
            self.fills.push((OsecId::new(i), 0, p));
        }
        for (c, stmt) in desc.commands.iter().zip(&w.sc.stmt_of[d]) {
            match c {
                OutputCommand::Input(_) => {
                    let k = stmt.unwrap_or(u32::MAX);
                    while next < list.len() && list[next].stmt == k {
                        next = self.place_next(i, addr, (next, &mut run), subalign, &mut merged_at);
                    }
                    if stmt.is_some() && *stmt == w.sc.common_stmt {
                        commons_placed = self.place_commons(i, addr);
                    }
                }
                OutputCommand::Assign(a) => {
                    let from = self.dot;
                    self.inside = Some(OsecId::new(i));
                    let r = self.assign(a, Some(addr), usize::MAX);
                    self.inside = None;
                    r?;
                    // Space the location counter skipped (`. = . + SIZE`, `. = ALIGN(N)`): no writer touches it,
                    // so that a large one can stay a hole of a sparse output (a fuzzer finding: a script's
                    // `. = . + 0x40000000` took a GiB of disk and of memory). Where a fill pattern covers it, a
                    // gap, where the pattern starts again (`write_script_fills`).
                    let filled = self.fills.iter().any(|f| f.0 == OsecId::new(i));
                    let gap = (OsecId::new(i), from - addr, self.dot.saturating_sub(from));
                    match filled {
                        _ if self.dot <= from => {}
                        true => self.code_gaps.push(gap),
                        false => self.data.push((gap.0, gap.1, 0, gap.2)),
                    }
                    moved |= self.dot < from;
                }
                OutputCommand::Assert(e, msg, pos) => self.check(e, msg, *pos)?,
                OutputCommand::Fill(e) => {
                    let p = fill_pattern(e, self).map_err(|e| w.sc.error(desc.pos, e))?;
                    self.fills.push((OsecId::new(i), self.dot - addr, p));
                }
                OutputCommand::Data(size, e) => {
                    // A value that names a symbol the walk has not reached (or one of the inputs): evaluated
                    // with the final symbols, as GNU ld's last pass does.
                    let v = e.eval(self).unwrap_or_else(|_| {
                        let at = format!("in a data command of {}: ", desc.name);
                        let d = Deferred {
                            name: String::new(),
                            expr: e.clone(),
                            dot: self.dot,
                            inside: OsecId::NONE,
                            dot_section: OsecId::NONE,
                            at: w.sc.error(desc.pos, at),
                            assert: None,
                        };
                        self.deferred_data.push((self.data.len(), d));
                        0
                    });
                    self.data.push((OsecId::new(i), self.dot - addr, *size, v));
                    self.dot = self.dot.saturating_add(*size as u64);
                }
                _ => {}
            }
        }
        // The orphans of its name that joined it, after every statement's.
        while next < list.len() {
            next = self.place_next(i, addr, (next, &mut run), subalign, &mut merged_at);
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
        let filled = self.fills.iter().any(|f| f.0 == OsecId::new(i));
        self.runs_only[i] = !list.is_empty()
            && subalign.is_none()
            && self.loose == loose
            && !moved
            && !filled
            && !commons_placed;
        self.cursor[i] = inputs;
        self.osecs[i].inputs_size = inputs;
        self.settle_parts(i, inputs, merged_at.is_some(), commons_placed);
        Ok(self.osecs[i].size)
    }

    /// The contents of section `i` (description `d`) at `addr` where the rules placed them: its size as the
    /// sizes pass found it, then its assignments (the default layout's `.bss` ends on a word boundary: an
    /// alignment, which gives the same size in every pass). Returns its size.
    fn preplaced_contents(&mut self, (i, d): (usize, usize), addr: u64) -> Result<u64, String> {
        let w = self.w;
        let desc = &w.sc.outputs[d];
        let o = &self.osecs[i];
        self.dot = (addr.checked_add(o.size))
            .filter(|&e| e < u64::MAX)
            .ok_or_else(|| {
                format!(
                    "section {} at {addr:#x} of {:#x} bytes ends past the end of the address space",
                    desc.name, o.size
                )
            })?;
        for c in &desc.commands {
            if let OutputCommand::Assign(a) = c {
                self.inside = Some(OsecId::new(i));
                let r = self.assign(a, Some(addr), usize::MAX);
                self.inside = None;
                r?;
            }
        }
        let o = &mut self.osecs[i];
        if o.size > 0 {
            o.size = o.size.max(self.dot.saturating_sub(addr));
        }
        Ok(o.size)
    }

    /// Entry `next` of section `i`'s list (at `addr`) at the location counter, or the run that starts there
    /// (`runs`, the next of which is `run`) where no `SUBALIGN` changes its sections' alignments; returns the
    /// entry after.
    fn place_next(
        &mut self,
        i: usize,
        addr: u64,
        (next, run): (usize, &mut usize),
        subalign: Option<u64>,
        merged_at: &mut Option<u64>,
    ) -> usize {
        let runs = &self.w.runs[i];
        while runs.get(*run).is_some_and(|r| (r.first as usize) < next) {
            *run += 1;
        }
        if let Some(r) = runs.get(*run)
            && r.first as usize == next
            && subalign.is_none()
        {
            self.run_at[i][*run] = (self.dot, addr);
            self.dot = self
                .dot
                .saturating_add(r.size_from(&self.w.lists[i], self.dot));
            return r.end as usize;
        }
        let w = self.w;
        self.loose += !w.lists[i][next].is_merged() as usize;
        self.place_input(i, addr, &w.lists[i][next], subalign, merged_at);
        next + 1
    }

    /// Input section `e` of output section `i` (at `addr`) at the location counter; the first merged one brings
    /// the section's merged strings there.
    fn place_input(
        &mut self,
        i: usize,
        addr: u64,
        e: &ScriptInput,
        subalign: Option<u64>,
        merged_at: &mut Option<u64>,
    ) {
        let w = self.w;
        if e.is_linker_made() {
            // Where its statement is, at its own alignment.
            let s = Synth::ALL[e.sec.index()];
            let at = align_up(self.dot, subalign.unwrap_or(w.synth.align(s)));
            self.code_gap(i, addr, at);
            let o = &mut self.osecs[i];
            if let Some(k) = o.parts.iter().position(|p| *p == Part::Synthetic(s)) {
                o.part_offsets[k] = at - addr;
            }
            self.dot = at.saturating_add(w.synth.size(s));
            return;
        }
        if e.is_merged() {
            if merged_at.is_none() {
                *merged_at = Some(self.dot);
                let o = &mut self.osecs[i];
                for (p, off) in o.parts.iter().zip(o.part_offsets.iter_mut()) {
                    if let Part::Merged(m) = p {
                        let g = &w.merges[*m as usize];
                        let at = align_up(self.dot, g.align);
                        if at > self.dot {
                            (self.holes).push((OsecId::new(i), self.dot - addr, at - self.dot));
                        }
                        *off = at - addr;
                        self.dot = at.saturating_add(g.size);
                    }
                }
            }
            return;
        }
        let at = align_up(self.dot, subalign.unwrap_or(e.align));
        self.code_gap(i, addr, at);
        self.sec_off[e.file.index()][e.sec.index()] = at - addr;
        self.dot = at.saturating_add(e.size);
    }

    /// The common symbols where their statement (`*(COMMON)`) is in section `i` (at `addr`), after its other
    /// inputs, at the commons' largest alignment.
    fn place_commons(&mut self, i: usize, addr: u64) -> bool {
        let o = &mut self.osecs[i];
        let Some(k) = o.parts.iter().position(|p| *p == Part::Commons) else {
            return false;
        };
        let align = (self.w.res.common.values())
            .map(|&(_, a)| a)
            .max()
            .unwrap_or(1);
        let at = align_up(self.dot, align.max(1));
        o.part_offsets[k] = at - addr;
        self.dot = at.saturating_add(o.part_sizes[k]);
        true
    }

    /// The padding from the location counter to `at` in section `i` (at `addr`), if the section is code or has
    /// a fill pattern (which starts again at each gap, `write_script_fills`).
    fn code_gap(&mut self, i: usize, addr: u64, at: u64) {
        let filled = || self.fills.iter().any(|f| f.0.index() == i);
        if at > self.dot && (self.osecs[i].flags & E::SHF_EXECINSTR as u64 != 0 || filled()) {
            (self.code_gaps).push((OsecId::new(i), self.dot - addr, at - self.dot));
        }
    }

    /// The parts after the inputs (linker-made contents no statement placed, commons, merged strings not placed
    /// among the inputs), each at its alignment after the inputs' `inputs` bytes; the section's size. In a section
    /// of linker-made parts only, those no statement placed go after those placed (a fuzzer finding: `.eh_frame_hdr`
    /// taken into `.rela.dyn` by a statement was put over `.rela.dyn`'s own entries).
    fn settle_parts(&mut self, i: usize, inputs: u64, merged_placed: bool, commons_placed: bool) {
        let (merges, synth, list) = (self.w.merges, &self.w.synth, &self.w.lists[i]);
        let o = &mut self.osecs[i];
        let (first, only_linker_made) = match o.parts.iter().position(|p| matches!(p, Part::Sorted))
        {
            Some(k) => (k + 1, false),
            None => (0, true),
        };
        let mut end = inputs;
        for j in first..o.parts.len() {
            let (size, align) = match o.parts[j] {
                Part::Inputs | Part::Sorted => continue,
                Part::Merged(_) if merged_placed => continue,
                Part::Commons if commons_placed => continue,
                Part::Merged(m) => (merges[m as usize].size, merges[m as usize].align),
                // Placed at its statement, or else here.
                Part::Synthetic(s) if by_statement(list, s) => continue,
                Part::Synthetic(s) => (synth.size(s), synth.align(s)),
                _ => (o.part_sizes[j], o.align.max(1)),
            };
            let at = align_up(end, align);
            o.part_offsets[j] = at;
            end = at + size;
        }
        o.size = if only_linker_made {
            o.size.max(end)
        } else {
            end
        };
    }
}

/// How a load address without `AT` is aligned (GNU ld's `lang_size_sections_1`).
struct LmaAlign {
    /// `ALIGN_WITH_INPUT`: the padding the address's alignment added, which the load address takes too.
    with_input: Option<u64>,
    /// The section's alignment (its description's `ALIGN` alone where it has an address): in its own region, or
    /// at the load offset of the region's last section.
    section: u64,
    /// The description's `ALIGN`, which alone aligns it in another region.
    given: Option<u64>,
}

/// Whether a script list places linker-made section `s` by a statement.
fn by_statement(list: &[ScriptInput], s: Synth) -> bool {
    list.iter()
        .any(|e| e.is_linker_made() && e.sec.index() == s as usize)
}

/// The segment flags of a section.
pub(super) fn flags_of(o: &OutputSection) -> u32 {
    o.segment_flags()
}

/// The address `--section-start` (`-Ttext`, `-Tdata`, `-Tbss`) gives output section `name`, if any.
fn section_start(config: &crate::args::Config, name: &[u8]) -> Option<u64> {
    config
        .section_start
        .iter()
        .find(|(n, _)| n.as_bytes() == name)
        .map(|&(_, a)| a)
}

/// The section a symbol relative to output section `sec` is given in the output: `sec`, or where `sec` was
/// dropped the kept neighbour in the segment it would have been in (GNU ld's `_bfd_nearby_section`): the
/// preceding or following kept section, chosen by their flags, else by which gives a positive offset.
pub fn nearby_section(
    osecs: &[OutputSection],
    keep: &dyn Fn(usize) -> bool,
    sec: OsecId,
    addr: u64,
) -> OsecId {
    let s = sec.index();
    if sec.is_none() || keep(s) {
        return sec;
    }
    // GNU ld writes the symbol tables outside its list of sections, so they are no one's neighbour.
    let listed = |i: usize| {
        let o = &osecs[i];
        keep(i)
            && !(o.sh_type == E::SHT_SYMTAB
                || o.sh_type == E::SHT_STRTAB && matches!(&o.name[..], b".strtab" | b".shstrtab"))
    };
    let prev = (0..s).rev().find(|&i| listed(i));
    let next = (s + 1..osecs.len()).find(|&i| listed(i));
    let flags = |i: usize| {
        let o = &osecs[i];
        let load = o.is_alloc() && !o.is_nobits();
        (
            o.flags & (E::SHF_ALLOC | E::SHF_TLS) as u64,
            load,
            o.flags & E::SHF_WRITE as u64,
            o.flags & E::SHF_EXECINSTR as u64,
        )
    };
    let best = match (prev, next) {
        (None, None) => return OsecId::NONE,
        (Some(p), None) => p,
        (None, Some(n)) => n,
        (Some(p), Some(n)) => {
            // A section of commands alone has no flags of its own in GNU ld (rivet's are writable space): not
            // allocated, and not read-only either, which is what the write flag stands for here.
            let bare =
                osecs[s].is_nobits() && osecs[s].flags == (E::SHF_ALLOC | E::SHF_WRITE) as u64;
            let fs = match bare {
                true => (0, false, E::SHF_WRITE as u64, 0),
                false => flags(s),
            };
            let (fp, fn_) = (flags(p), flags(n));
            let prev_wins = if (fp.0, fp.1) != (fn_.0, fn_.1) {
                fn_.0 != fs.0 || (fp.1 && !fn_.1)
            } else if fp.2 != fn_.2 {
                fn_.2 != fs.2
            } else if fp.3 != fn_.3 {
                fn_.3 != fs.3
            } else {
                addr < osecs[n].addr
            };
            if prev_wins { p } else { n }
        }
    };
    OsecId::new(best)
}

/// A script section kept only for its assignments to `.`, that ends up empty, is as GNU ld makes it: not
/// allocated, writable, `PROGBITS` (one whose location counter moved is allocated writable space, `NOBITS`).
fn settle_empty(w: &Walk, osecs: &mut [OutputSection]) {
    for (i, o) in osecs.iter_mut().enumerate() {
        let d = w.script_desc.get(i).copied().unwrap_or(NONE);
        if w.keep[i] && d != NONE && o.size == 0 && o.is_nobits() && o.parts.len() <= 1 {
            o.flags = E::SHF_WRITE as u64;
            o.sh_type = E::SHT_PROGBITS;
        }
    }
}

/// Where `DATA_SEGMENT_ALIGN` puts the data, and whether RELRO decided it (then `DATA_SEGMENT_RELRO_END` pads
/// to the page RELRO ends on, as in GNU ld's RELRO phase).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DataPlace {
    pub addr: u64,
    pub by_relro: bool,
}

/// `DATA_SEGMENT_ALIGN` in a pass: the location counter there, the value it gave, and its page sizes.
#[derive(Clone, Copy)]
struct DataAlign {
    dot: u64,
    at: u64,
    pages: (u64, u64),
}

/// Where `DATA_SEGMENT_ALIGN` puts the data, from this pass's sizes, as GNU ld's second pass does
/// (`layout::data_segment`): with RELRO (`-z relro` and `DATA_SEGMENT_RELRO_END`), its sections (those from the
/// data's start to RELRO's end) moved to end on a page; else the next page, at the same offset or at its start
/// where that spares a common page.
fn data_base(st: &State) -> Option<DataPlace> {
    use super::super::data_segment as ds;
    let DataAlign {
        dot,
        at,
        pages: (max, common),
    } = st.data_align.get()?;
    if !max.is_power_of_two() || !common.is_power_of_two() {
        return None;
    }
    let kept = || (0..st.osecs.len()).filter(|&i| st.w.keep[i] && st.osecs[i].is_alloc());
    if let Some((end, offset)) = st.relro_end.get() {
        let mut relro: Vec<usize> = kept()
            .filter(|&i| (at..end.wrapping_sub(offset)).contains(&st.osecs[i].addr))
            .collect();
        relro.sort_by_key(|&i| st.osecs[i].addr);
        // GNU ld sizes again (its RELRO phase) where it edited `.eh_frame`, even with RELRO empty.
        let eh_frame = kept().any(|i| st.osecs[i].name == b".eh_frame");
        if !relro.is_empty() || offset > 0 || eh_frame {
            let spans: Vec<(u64, u64)> = relro.iter().map(|&i| ds::span(&st.osecs[i])).collect();
            return Some(DataPlace {
                addr: ds::relro_base(dot, &spans, offset, max),
                by_relro: true,
            });
        }
    }
    let first = ds::next_page_same_offset(dot, max);
    let end = st
        .data_end
        .get()
        .map_or(first, |e| first.wrapping_add(e.wrapping_sub(at)));
    Some(DataPlace {
        addr: ds::sparing_base(dot, end, (max, common)),
        by_relro: false,
    })
}
