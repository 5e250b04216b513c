//! A linker script's `SECTIONS` in a partial link (`ld -r -T module.lds`, as the Linux kernel links its modules):
//! each input section a statement matches goes to that statement's output section, in statement order and then
//! the statement's sort, ties in load order; `/DISCARD/` drops it; one no statement matches keeps its own name,
//! as without a script. Nothing gets an address in `-r`, so what a script says about addresses, regions,
//! program headers and symbols is refused rather than ignored.

use crate::index::{FileId, SecIdx};
use crate::resolve::Resolved;
use crate::script::ast::{OutputCommand, SectionsCommand, Sort};
use crate::script::sections::{DISCARD, InputName, ORPHAN, SectionsScript};

/// Where a script puts an input section in `-r`.
pub enum Target<'s> {
    Discard,
    /// No statement matches: the section's own name.
    Orphan,
    /// A statement's output section: its name, the statement and the sort of the pattern that matched.
    Output(&'s [u8], u32, Sort),
}

/// What of the script a partial link cannot apply: an error naming the first such command and its place.
pub fn check(sc: &SectionsScript) -> Result<(), String> {
    let refuse = |what: &str, pos| Err(sc.error(pos, format!("{what} with -r is not supported")));
    if let Some(r) = sc.memory.first() {
        return refuse("MEMORY", r.pos);
    }
    if let Some(p) = sc.phdrs.first() {
        return refuse("PHDRS", p.pos);
    }
    for c in &sc.commands {
        match c {
            SectionsCommand::Output(o) => {
                // `0` is the address every section of an object has.
                if o.address
                    .as_ref()
                    .is_some_and(|a| !a.is_constant() || a != &crate::expr::Expr::Num(0))
                {
                    return refuse("an output section address other than 0", o.pos);
                }
                // `align` reads it: a constant, which a power of two can hold.
                let env = crate::script::sections::NoEnv;
                if (o.align.as_ref()).is_some_and(|e| {
                    e.eval(&env)
                        .ok()
                        .and_then(|v| v.max(1).checked_next_power_of_two())
                        .is_none()
                }) {
                    return refuse("an ALIGN other than a constant below 2^63", o.pos);
                }
                if o.lma.is_some() || o.region.is_some() || o.lma_region.is_some() {
                    return refuse("a load address or region", o.pos);
                }
                if let Some(c) = o
                    .commands
                    .iter()
                    .find(|c| !matches!(c, OutputCommand::Input(_)))
                {
                    let what = match c {
                        OutputCommand::Assign(_) => "an assignment in an output section",
                        OutputCommand::Data(..) => "a data command",
                        OutputCommand::Fill(_) => "FILL",
                        _ => "a command other than input sections",
                    };
                    return refuse(what, o.pos);
                }
            }
            // Outside the output sections, a symbol's is as one outside `SECTIONS` (`assign`).
            SectionsCommand::Assign(a) if a.target != "." && a.op == "=" => {}
            SectionsCommand::Assign(a) => return refuse("a symbol assignment", a.pos),
            SectionsCommand::Overlay(o) => return refuse("OVERLAY", o.pos),
            SectionsCommand::Entry(_) | SectionsCommand::Assert(..) => {}
        }
    }
    Ok(())
}

/// Where the script puts section `s` of object `f`.
pub fn target<'s>(sc: &'s SectionsScript, res: &Resolved, f: FileId, s: SecIdx) -> Target<'s> {
    let o = &res.objects[f.index()];
    let sec = o.sec(s);
    let writable = sec.flags() & object::elf::SHF_WRITE as u64 != 0;
    let (k, sort) = sc.select(&InputName::of(&o.name), o.sec_name(s.index()), writable);
    match k {
        DISCARD => Target::Discard,
        ORPHAN => Target::Orphan,
        k => match sc.stmts[k as usize].output {
            Some(d) => Target::Output(sc.outputs[d as usize].name.as_bytes(), k, sort),
            None => Target::Discard,
        },
    }
}

/// The alignment a description's `ALIGN(n)` asks for its output section named `name` (1 without): description
/// `desc`'s, or the first of that name's.
pub fn align(sc: &SectionsScript, name: &[u8], desc: Option<u32>) -> u64 {
    let env = crate::script::sections::NoEnv;
    (desc.map(|d| d as usize).or_else(|| sc.output(name)))
        .and_then(|d| sc.outputs[d].align.as_ref())
        .and_then(|e| e.eval(&env).ok())
        .and_then(|v| v.max(1).checked_next_power_of_two())
        .unwrap_or(1)
}

/// Which `ONLY_IF_RO`/`ONLY_IF_RW` descriptions the script keeps for the sections of `files` that `taken` says a
/// statement may place (`SectionsScript::decide_constraints`, as a final link decides them).
pub fn decide_constraints(
    sc: &SectionsScript,
    res: &Resolved,
    files: &[FileId],
    taken: impl Fn(FileId, SecIdx) -> bool,
) {
    let mut sections = Vec::new();
    for &f in files {
        let o = &res.objects[f.index()];
        for (s, sec) in o.secs().filter(|&(s, _)| taken(f, s)) {
            let (file, name) = (InputName::of(&o.name), o.sec_name(s.index()));
            let writable = sec.flags() & object::elf::SHF_WRITE as u64 != 0;
            if sc.constrained_match(&file, name, writable) {
                sections.push((file, name, writable));
            }
        }
    }
    sc.decide_constraints(&sections);
}

/// Where a section goes among its output section's inputs: statement, then its file's name where the statement
/// sorts files (`SORT(*)(...)`: archive path, member), then the statement's sort (a number, or the name), then
/// load order (the order the sections were added in, which a stable sort keeps). Orphans, placed by no statement,
/// keep the default, after every statement's.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey(u32, (String, String), u64, Vec<u8>);

impl Default for SortKey {
    fn default() -> SortKey {
        SortKey(u32::MAX, Default::default(), 0, Vec::new())
    }
}

/// Section `s` of object `f`'s key, placed by statement `k` of `sc` with sort `sort`.
pub fn sort_key(
    res: &Resolved,
    (f, s): (FileId, SecIdx),
    (sc, k): (&SectionsScript, u32),
    sort: Sort,
) -> SortKey {
    let o = &res.objects[f.index()];
    let name = o.sec_name(s.index());
    let file = match sc.sorts_files(k) {
        true => {
            let n = InputName::of(&o.name);
            (n.path.to_string(), n.member.unwrap_or("").to_string())
        }
        false => Default::default(),
    };
    match sort {
        Sort::InitPriority => SortKey(
            k,
            file,
            crate::layout::rules::init_priority(name).unwrap_or(65536) as u64,
            Vec::new(),
        ),
        Sort::Alignment | Sort::AlignmentName => {
            SortKey(k, file, u64::MAX - o.sec(s).align(), Vec::new())
        }
        Sort::Name | Sort::NameAlignment => SortKey(k, file, 0, name.to_vec()),
        _ => SortKey(k, file, 0, Vec::new()),
    }
}
