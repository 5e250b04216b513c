//! `--defsym` and a script's assignments outside `SECTIONS` (`PROVIDE`, `HIDDEN`, `PROVIDE_HIDDEN` among them) in a
//! partial link, as GNU ld writes them: a constant gives an absolute symbol, a symbol's name the symbol's place (its
//! output section and offset there, and its type). The assignment overrides an input's definition, whose type and
//! size stay, as in GNU ld; `PROVIDE` defines only a symbol an input refers to and none defines (resolution has
//! made those `Def::Linker`); a hidden one is a local of the output. Other expressions are refused: nothing has an
//! address in `-r`, and GNU ld's results for them (`sym + 4` an absolute 4) are no use to a final link.

use super::out_sym::{OutSym, Place};
use super::sections::Plan;
use crate::args::Config;
use crate::diag::{Errors, Result};
use crate::expr::Expr;
use crate::index::SymId;
use crate::resolve::{Def, Resolved};
use crate::script::ast::SectionsCommand;
use object::elf as E;
use rustc_hash::FxHashMap;

/// An assigned symbol of the output.
pub struct Assigned {
    pub id: SymId,
    pub sym: OutSym<'static>,
    /// `HIDDEN` or `PROVIDE_HIDDEN`: a local of the output.
    pub hidden: bool,
}

/// The assignments of the link, in the order they are evaluated (`--defsym`s, then `PROVIDE`s), with their
/// definitions; `global_def(g)` gives a global's own output symbol (an input's definition), for names.
pub fn assigned(
    config: &Config,
    res: &Resolved,
    plan: &Plan,
    global_def: &dyn Fn(SymId) -> std::result::Result<Option<OutSym<'static>>, String>,
) -> Result<Vec<Assigned>> {
    let linker = |name: &str| {
        (res.names.lookup(name.as_bytes())).is_some_and(|g| res.defs[g.index()] == Def::Linker)
    };
    let provided = config.provides.iter().filter(|(name, _)| linker(name));
    // A `SECTIONS` script's assignments outside its output sections (those written outside `SECTIONS` among
    // them), where the script is among the `--defsym`s (`Config::defsyms_after`).
    let script: Vec<(String, String)> = (config.sections.iter())
        .flat_map(|sc| &sc.commands)
        .filter_map(|c| match c {
            SectionsCommand::Assign(a) if a.target != "." && (!a.provide || linker(&a.target)) => {
                Some((a.target.clone(), a.text.clone()))
            }
            _ => None,
        })
        .collect();
    let split = config.defsyms_after.min(config.defsyms.len());
    let list: Vec<&(String, String)> = (config.defsyms[..split].iter())
        .chain(&script)
        .chain(&config.defsyms[split..])
        .chain(provided)
        .collect();
    if list.is_empty() {
        return Ok(Vec::new());
    }
    let overridden = overridden_definitions(res, plan, &list);
    let mut out: Vec<Assigned> = Vec::new();
    let mut by_name: FxHashMap<&str, usize> = FxHashMap::default();
    let mut errors = Vec::new();
    for (name, text) in list {
        let Some(id) = res.names.lookup(name.as_bytes()) else {
            continue;
        };
        let def = match crate::expr::parse(text) {
            Ok(e) if e.is_constant() => e
                .eval(&crate::script::sections::NoEnv)
                .map(|v| (Place::Abs, v, E::STT_NOTYPE)),
            Ok(Expr::Sym(target)) => match by_name.get(target.as_str()) {
                Some(&k) => Ok((out[k].sym.place, out[k].sym.value, out[k].sym.info & 0xf)),
                None => alias(res, &target, global_def),
            },
            Ok(_) => Err(format!(
                "'{name} = {text}': only a constant or a symbol's name can be assigned with -r (nothing has an \
                 address in a partial link)"
            )),
            Err(e) => Err(format!("'{name} = {text}': {e}")),
        };
        let (place, value, ty) = match def {
            Ok(d) => d,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let hidden = config.script_hidden.iter().any(|h| h == name);
        let (ty, size) = overridden.get(&id).copied().unwrap_or((ty, 0));
        let bind = if hidden { E::STB_LOCAL } else { E::STB_GLOBAL };
        by_name.insert(name, out.len());
        out.push(Assigned {
            id,
            sym: OutSym {
                name: res.name(id),
                value,
                size,
                info: bind << 4 | ty,
                other: 0,
                place,
            },
            hidden,
        });
    }
    match errors.is_empty() {
        true => Ok(out),
        false => Err(Errors(errors)),
    }
}

/// The place a symbol's name stands for: its output section and offset there, and its type.
fn alias(
    res: &Resolved,
    target: &str,
    global_def: &dyn Fn(SymId) -> std::result::Result<Option<OutSym<'static>>, String>,
) -> std::result::Result<(Place, u64, u8), String> {
    let undefined = || format!("undefined symbol '{target}' referenced in expression");
    let g = res.names.lookup(target.as_bytes()).ok_or_else(undefined)?;
    if !matches!(res.defs[g.index()], Def::Object { .. }) {
        return Err(undefined());
    }
    match global_def(g)? {
        Some(s) if matches!(s.place, Place::Abs | Place::Sec(_)) => {
            Ok((s.place, s.value, s.info & 0xf))
        }
        Some(_) => Err(format!(
            "'{target}' is a common symbol, which has no place in a partial link to assign"
        )),
        None => Err(format!("'{target}' is in a section the script discards")),
    }
}

/// The type and size of the input definitions the assignments override (the first in load order).
fn overridden_definitions(
    res: &Resolved,
    plan: &Plan,
    list: &[&(String, String)],
) -> FxHashMap<SymId, (u8, u64)> {
    let ids: rustc_hash::FxHashSet<SymId> = (list.iter())
        .filter_map(|(n, _)| res.names.lookup(n.as_bytes()))
        .collect();
    let mut found = FxHashMap::default();
    for &f in &plan.load_order {
        let o = &res.objects[f.index()];
        for (k, g) in res.object_ids[f.index()].iter().enumerate() {
            let i = o.first_global + k;
            if ids.contains(g) && o.sym_shndx(i) != E::SHN_UNDEF as u32 {
                let s = &o.syms[i];
                found
                    .entry(*g)
                    .or_insert((s.st_type(), s.st_size.get(crate::elf::LE)));
            }
        }
    }
    found
}
