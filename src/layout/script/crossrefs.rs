//! `NOCROSSREFS(a b c)`: a relocation in an input section of one of these output sections whose symbol is defined
//! in another of them is an error, as in GNU ld (each list on its own; an overlay's with `NOCROSSREFS` is one).
//! `NOCROSSREFS_TO(to a b)`: only references from `a`, `b`... into `to`. The check reads the relocations of the
//! listed sections' inputs alone, once every input section has its output section; a link without the command
//! reads nothing.

use super::super::OutputSection;
use super::super::output_sections::SectionMap;
use crate::args::Config;
use crate::diag::{Errors, demangle};
use crate::elf::LE;
use crate::index::{FileId, OsecId, SecIdx};
use crate::resolve::{Def, Resolved};
use object::elf as E;

/// One list, as output section ids: `from` may not refer to `to` (for `NOCROSSREFS`, both are the whole list).
struct Rule {
    from: Vec<OsecId>,
    to: Vec<OsecId>,
}

/// Reports every prohibited reference (`--error-limit` applies when they are shown).
pub fn check(
    config: &Config,
    res: &Resolved,
    osecs: &[OutputSection],
    map: &SectionMap,
) -> Result<(), Errors> {
    if config.nocrossrefs.is_empty() {
        return Ok(());
    }
    let id = |name: &String| {
        (osecs.iter())
            .position(|o| o.name == name.as_bytes())
            .map(OsecId::new)
    };
    let rules: Vec<Rule> = (config.nocrossrefs.iter())
        .map(|l| {
            let ids: Vec<OsecId> = l.sections.iter().filter_map(id).collect();
            match l.to {
                // GNU ld names the first section only if it exists: without it nothing is checked.
                true => match l.sections.first().and_then(id) {
                    Some(to) => Rule {
                        from: ids.into_iter().filter(|&i| i != to).collect(),
                        to: vec![to],
                    },
                    None => Rule {
                        from: Vec::new(),
                        to: Vec::new(),
                    },
                },
                false => Rule {
                    from: ids.clone(),
                    to: ids,
                },
            }
        })
        .collect();
    let mut errors: Vec<String> = res
        .runs
        .map(|f| file_errors(res, &map.sec_osec, osecs, &rules, f))
        .into_iter()
        .flatten()
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    crate::srcloc::render(&res.objects, &mut errors, config.error_limit);
    Err(Errors(errors))
}

/// The prohibited references of object `f`'s sections.
fn file_errors(
    res: &Resolved,
    sec_osec: &[Vec<OsecId>],
    osecs: &[OutputSection],
    rules: &[Rule],
    f: FileId,
) -> Vec<String> {
    let mut out = Vec::new();
    if !res.object_live[f.index()] {
        return out;
    }
    let o = &res.objects[f.index()];
    let osec_of = |file: FileId, sec: SecIdx| {
        (sec_osec.get(file.index())?.get(sec.index()).copied()).filter(|i| i.is_some())
    };
    for s in (0..o.sections.len()).map(SecIdx::new) {
        let Some(from) = osec_of(f, s) else {
            continue;
        };
        let ruled: Vec<&Rule> = rules.iter().filter(|r| r.from.contains(&from)).collect();
        if ruled.is_empty() {
            continue;
        }
        for r in o.sec(s).relas() {
            let i = r.r_sym(LE, false) as usize;
            let Some((file, sym)) = target(res, f, i) else {
                continue;
            };
            let t = &res.objects[file.index()];
            let Some(to) = osec_of(file, SecIdx(t.sym_shndx(sym))) else {
                continue;
            };
            if to == from || !ruled.iter().any(|rule| rule.to.contains(&to)) {
                continue;
            }
            let name = match t.syms.get(sym).map(|s| s.st_type()) {
                Some(E::STT_SECTION) => {
                    String::from_utf8_lossy(t.sec_name(t.sym_shndx(sym) as usize)).into_owned()
                }
                _ => demangle(t.sym_name(sym)),
            };
            out.push(format!(
                "prohibited cross reference from {} to `{}' in {}\n>>> referenced by {}",
                String::from_utf8_lossy(&osecs[from.index()].name),
                name,
                String::from_utf8_lossy(&osecs[to.index()].name),
                crate::srcloc::mark(f, s, r.r_offset.get(LE), crate::srcloc::Style::Exact),
            ));
        }
    }
    out
}

/// The definition a relocation's symbol `i` of object `f` stands for: the local itself, or a global's winning
/// definition in an object (one in a shared object or the linker's is in no input section).
fn target(res: &Resolved, f: FileId, i: usize) -> Option<(FileId, usize)> {
    let o = &res.objects[f.index()];
    if i == 0 || i >= o.syms.len() {
        return None;
    }
    if i < o.first_global {
        return Some((f, i));
    }
    let g = *res.object_ids[f.index()].get(i - o.first_global)?;
    match res.defs.get(g.index())? {
        Def::Object { file, sym } => Some((*file, *sym as usize)),
        _ => None,
    }
}
