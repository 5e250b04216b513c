//! `-r`'s symbol table: a section symbol per output section, each input's local symbols (its `STT_FILE` symbol
//! among them, or before them one named after the input where it has none, as GNU ld writes) in input order,
//! then the globals as resolution left them: defined ones in their output section at their new offset, undefined
//! ones undefined (weak only if every reference is weak), commons still common (unless `-d`), each with the most
//! restrictive visibility any input gave it; the symbols `--defsym` and scripts assign (`assign`), hidden ones
//! among the locals.

use super::sections::Plan;
use crate::args::{Config, Discard};
use crate::diag::{Errors, Result, demangle};
use crate::elf::{self, LE};
use crate::index::{FileId, NONE, SecIdx, SymId};
use crate::parse::ObjectFile;
use crate::resolve::{Def, Resolved};
use object::elf as E;

pub use super::out_sym::{OutSym, Place};

pub struct SymbolTable<'a> {
    /// Index 0 is the null symbol.
    pub syms: Vec<OutSym<'a>>,
    /// The first global's index (`.symtab`'s `sh_info`).
    pub first_global: usize,
    /// Per object, per local symbol: its output index (`NONE`: not in the output).
    pub local_index: Vec<Vec<u32>>,
    /// Per global id: its output index (`NONE`: no live object names it).
    pub global_index: Vec<u32>,
    /// Per output section: its section symbol's index.
    pub section_sym: Vec<u32>,
}

pub fn table<'a>(config: &Config, res: &'a Resolved, plan: &Plan) -> Result<SymbolTable<'a>> {
    let null = OutSym {
        name: b"",
        value: 0,
        size: 0,
        info: 0,
        other: 0,
        place: Place::Undef,
    };
    let mut syms = vec![null];
    let mut section_sym = vec![NONE; plan.osecs.len()];
    for &id in &plan.order {
        section_sym[id.index()] = syms.len() as u32;
        syms.push(OutSym {
            name: b"",
            value: 0,
            size: 0,
            info: E::STT_SECTION,
            other: 0,
            place: Place::Sec(id),
        });
    }
    let needed = needed_locals(config, res, plan)?;
    let mut local_index: Vec<Vec<u32>> = (res.objects.iter())
        .map(|o| vec![NONE; o.first_global.min(o.syms.len())])
        .collect();
    // Each file's locals in GNU ld's load order, as its sections are.
    let mut kept = Vec::new();
    for &f in &plan.load_order {
        let o = &res.objects[f.index()];
        kept.clear();
        // Some local is kept for its own sake, not only because a relocation names it.
        let mut own = false;
        for i in 1..local_index[f.index()].len() {
            let wanted = needed.is_none() || wanted_local(config, o, i);
            let keep = wanted || needed.as_ref().is_some_and(|n| n[f.index()][i]);
            if let Some(s) = keep.then(|| local(plan, o, f, i)).flatten() {
                kept.push((i, s));
                own |= wanted;
            }
        }
        // An input without a file symbol gets one, so that its locals are not taken for the previous input's.
        // GNU ld adds none for the locals only relocations keep (`-x`, `-s`), which it writes as it meets them.
        if own && !kept.iter().any(|(_, s)| s.info & 0xf == E::STT_FILE) {
            syms.push(OutSym {
                name: crate::synthetic::symtab::file_symbol_name(&o.name).as_bytes(),
                value: 0,
                size: 0,
                info: E::STT_FILE,
                other: 0,
                place: Place::Abs,
            });
        }
        for (i, s) in kept.drain(..) {
            local_index[f.index()][i] = syms.len() as u32;
            syms.push(s);
        }
    }
    let no_refs = Seen {
        vis: 0,
        strong_ref: false,
        ref_type: E::STT_NOTYPE,
    };
    let assigned = super::assign::assigned(config, res, plan, &|g| global(res, plan, g, no_refs))?;
    // Hidden ones are locals, after the files'.
    let mut preset: Vec<(SymId, u32)> = Vec::new();
    for a in assigned.iter().filter(|a| a.hidden) {
        preset.push((a.id, syms.len() as u32));
        syms.push(a.sym);
    }
    let first_global = syms.len();
    let assigned: rustc_hash::FxHashMap<SymId, OutSym> = (assigned.into_iter())
        .filter(|a| !a.hidden)
        .map(|a| (a.id, a.sym))
        .collect();
    let global_index = globals(config, res, plan, &mut syms, (&assigned, &preset))?;
    Ok(SymbolTable {
        syms,
        first_global,
        local_index,
        global_index,
        section_sym,
    })
}

/// Local symbol `i` of live object `o` (file `f`) in the output, or `None` when it is left out: section
/// symbols (the output's own replace them) and symbols of sections not kept.
fn local(plan: &Plan, o: &ObjectFile, f: FileId, i: usize) -> Option<OutSym<'static>> {
    let s = &o.syms[i];
    if s.st_type() == E::STT_SECTION {
        return None;
    }
    let shndx = o.sym_shndx(i);
    let (place, value) = match shndx {
        0 => return None,
        x if x == E::SHN_ABS as u32 => (Place::Abs, s.st_value.get(LE)),
        x if x < E::SHN_LORESERVE as u32 => match plan.place(f, SecIdx(x)) {
            Some((id, off)) => (Place::Sec(id), s.st_value.get(LE) + off),
            None => {
                let g = plan
                    .groups
                    .iter()
                    .position(|g| g.file == f && g.sec == SecIdx(x))?;
                (Place::Group(g), s.st_value.get(LE))
            }
        },
        _ => return None,
    };
    Some(OutSym {
        name: elf::cstr(o.strtab, s.st_name.get(LE)).unwrap_or(b""),
        value,
        size: s.st_size.get(LE),
        info: s.st_info,
        other: s.st_other,
        place,
    })
}

/// Whether local symbol `i` stays under `-x`/`-X`/`-s` when no relocation needs it: `-X` keeps all but the
/// assembler's temporary `.L` labels; `-x` and `-s` keep none.
fn wanted_local(config: &Config, o: &ObjectFile, i: usize) -> bool {
    discard(config) == Discard::Labels && !o.sym_name(i).starts_with(b".L")
}

/// Which locals a partial link discards. GNU ld's `-r -s` is `-r -S -x` (the globals must stay), but a `-x`,
/// `-X` or `--discard-none` of its own decides which locals go.
fn discard(config: &Config) -> Discard {
    match config.discard {
        Discard::MergeLabels if config.strip_all => Discard::All,
        d => d,
    }
}

/// With `-x`, `-X` or `-s`: per object, per symbol, whether a kept relocation or a kept group names it (those
/// locals stay, as in GNU ld). `None` without those options: every local stays.
fn needed_locals(config: &Config, res: &Resolved, plan: &Plan) -> Result<Option<Vec<Vec<bool>>>> {
    // A partial link keeps the temporary labels of mergeable sections (GNU ld's default leaves them to the final
    // link), so only -x and -X restrict.
    if !matches!(discard(config), Discard::All | Discard::Labels) {
        return Ok(None);
    }
    let mut needed: Vec<Vec<bool>> = res
        .objects
        .iter()
        .map(|o| vec![false; o.first_global.min(o.syms.len())])
        .collect();
    for out in &plan.osecs {
        for p in &out.parts {
            let o = &res.objects[p.file.index()];
            let relas = o
                .sec(p.sec)
                .relas()
                .iter()
                .map(|r| r.r_sym(LE, false) as usize);
            let rels = super::relocs::profile_rels(o, p.sec)?.iter();
            for sym in relas.chain(rels.map(|r| super::relocs::rel_info(r).0)) {
                if let Some(n) = needed[p.file.index()].get_mut(sym) {
                    *n = true;
                }
            }
        }
    }
    for g in &plan.groups {
        if let Some(n) = needed[g.file.index()].get_mut(g.sig_sym as usize) {
            *n = true;
        }
    }
    Ok(Some(needed))
}

/// How restrictive a visibility is: default, protected, hidden, internal.
fn vis_rank(other: u8) -> u8 {
    [0, 3, 2, 1][(other & 3) as usize]
}

/// What the inputs say of a global besides its winning definition.
#[derive(Clone, Copy)]
struct Seen {
    /// The most restrictive visibility.
    vis: u8,
    /// Some reference is not weak.
    strong_ref: bool,
    /// The first reference's type (`STT_TLS` must stay for the final link's checks).
    ref_type: u8,
}

/// The globals in the order the live objects first name them (then `-u`'s), appended to `syms`; returns each
/// global id's output index.
fn globals(
    config: &Config,
    res: &Resolved,
    plan: &Plan,
    syms: &mut Vec<OutSym>,
    (assigned, locals): (
        &rustc_hash::FxHashMap<SymId, OutSym<'static>>,
        &[(SymId, u32)],
    ),
) -> Result<Vec<u32>> {
    let mut index = vec![NONE; res.num_globals()];
    // Hidden assigned symbols are locals already: never put in the globals' order.
    for &(g, at) in locals {
        index[g.index()] = at;
    }
    let mut order: Vec<SymId> = Vec::new();
    let mut seen = vec![
        Seen {
            vis: 0,
            strong_ref: false,
            ref_type: E::STT_NOTYPE,
        };
        res.num_globals()
    ];
    for &f in &plan.load_order {
        let o = &res.objects[f.index()];
        for (k, &g) in res.object_ids[f.index()].iter().enumerate() {
            let s = &o.syms[o.first_global + k];
            let first = index[g.index()] == NONE;
            if first {
                index[g.index()] = 0;
                order.push(g);
            }
            let e = &mut seen[g.index()];
            if vis_rank(s.st_other) > vis_rank(e.vis) {
                e.vis = s.st_other & 3;
            }
            if o.sym_shndx(o.first_global + k) == E::SHN_UNDEF as u32 {
                if s.st_bind() != E::STB_WEAK {
                    e.strong_ref = true;
                }
                if first || e.ref_type == E::STT_NOTYPE {
                    e.ref_type = s.st_type();
                }
            }
        }
    }
    for u in &config.undefined {
        if let Some(g) = res.names.lookup(u.as_bytes())
            && index[g.index()] == NONE
        {
            index[g.index()] = 0;
            seen[g.index()].strong_ref = true;
            order.push(g);
        }
    }
    let mut errors = Vec::new();
    // Assigned symbols no input names come last.
    let mut unnamed: Vec<SymId> = (assigned.keys())
        .copied()
        .filter(|g| index[g.index()] == NONE)
        .collect();
    unnamed.sort_unstable();
    order.extend(unnamed);
    for g in order {
        index[g.index()] = syms.len() as u32;
        if let Some(a) = assigned.get(&g) {
            syms.push(OutSym {
                other: seen[g.index()].vis,
                ..*a
            });
            continue;
        }
        match global(res, plan, g, seen[g.index()]) {
            Ok(Some(s)) => syms.push(s),
            // Relocations against it are dropped, as those against a lost COMDAT's locals.
            Ok(None) => index[g.index()] = NONE,
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(Errors(errors));
    }
    Ok(index)
}

/// Global `g`'s output symbol; `None` for one defined in a section a script discards.
fn global(
    res: &Resolved,
    plan: &Plan,
    g: SymId,
    seen: Seen,
) -> std::result::Result<Option<OutSym<'static>>, String> {
    let Def::Object { file, sym } = res.defs[g.index()] else {
        // Undefined, or a name a final link would define (`_GLOBAL_OFFSET_TABLE_`, `__start_SEC`, `_end`):
        // the final link gives it its value.
        let bind = if seen.strong_ref {
            E::STB_GLOBAL
        } else {
            E::STB_WEAK
        };
        return Ok(Some(OutSym {
            name: res.name(g),
            value: 0,
            size: 0,
            info: bind << 4 | seen.ref_type,
            other: seen.vis,
            place: Place::Undef,
        }));
    };
    let o = &res.objects[file.index()];
    let i = sym as usize;
    let s = &o.syms[i];
    let shndx = o.sym_shndx(i);
    // A definition's name as the input spells it: a `.symver` version stays for the final link.
    let name = elf::cstr(o.strtab, s.st_name.get(LE)).unwrap_or(res.name(g));
    let mut out = OutSym {
        name,
        value: s.st_value.get(LE),
        size: s.st_size.get(LE),
        info: s.st_info,
        other: (s.st_other & !3) | seen.vis,
        place: Place::Abs,
    };
    match shndx {
        x if x == E::SHN_ABS as u32 => {}
        x if x == E::SHN_COMMON as u32 => {
            let (size, align) = res.common.get(&g).copied().unwrap_or((out.size, out.value));
            out.size = size;
            match plan.commons.get(&g) {
                Some(&(bss, at)) => {
                    out.place = Place::Sec(bss);
                    out.value = at;
                    // A defined common is an object (GNU ld's `-d`).
                    out.info = s.st_bind() << 4 | E::STT_OBJECT;
                }
                None => {
                    out.place = Place::Common;
                    out.value = align;
                }
            }
        }
        x if x < E::SHN_LORESERVE as u32 && plan.discarded.contains(&(file, SecIdx(x))) => {
            return Ok(None);
        }
        x if x < E::SHN_LORESERVE as u32 => {
            let (id, off) = plan.place(file, SecIdx(x)).ok_or_else(|| {
                format!(
                    "{}: symbol '{}' is defined in section {}, which a relocatable output does not keep",
                    o.name,
                    demangle(name),
                    o.section_name(x)
                )
            })?;
            out.place = Place::Sec(id);
            out.value += off;
        }
        x => {
            return Err(format!(
                "{}: symbol '{}' has section index {x:#x}, which rivet does not support",
                o.name,
                demangle(name)
            ));
        }
    }
    Ok(Some(out))
}
