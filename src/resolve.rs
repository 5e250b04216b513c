//! Pass 4: symbol resolution.
//!
//! Input: parsed objects and shared objects. Output: [`Resolved`]: one global symbol table (ids from the sharded
//! interner), which archive members are live, the winning definition of every global, COMDAT winners (and so which
//! sections are discarded), and which shared objects are needed.
//!
//! Rules (those of lld and GNU ld): a defined symbol in an object beats a common one, which beats a shared-object
//! definition; strong beats weak; among equals the first in GNU ld's load order (`load_order`) wins, and so does
//! the first COMDAT group of a signature. An archive member is pulled in when
//! a live file has a non-weak undefined reference that no live object or shared object defines; members are pulled
//! in rounds until a round adds none, so the result is independent of thread timing and of group boundaries. A
//! member of an archive with a symbol index is known by the names the index lists for it until a round pulls it
//! in; only then is it read (`ObjectFile::read_indexed`).

use crate::args::Config;
use crate::diag::{Errors, Result, demangle};
use crate::elf::LE;
use crate::index::{FileId, NONE, SecIdx, SharedId, SymId};
use crate::intern::{Interned, intern};
use crate::load_order::FileOrder;
use crate::names::Name;
use crate::par::{FileRuns, per_symbol};
use crate::parse::{ObjectFile, Parsed, SharedFile};
use object::elf as E;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering::Relaxed};

/// The definition a global symbol resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    Undefined,
    /// Symbol `sym` of object `file` (a real definition, or the winning common).
    Object {
        file: FileId,
        sym: u32,
    },
    /// Dynamic symbol `sym` of shared object `file`.
    Shared {
        file: SharedId,
        sym: u32,
    },
    /// Defined by the linker (`_end`, `__start_foo`, `--defsym`…); the layout pass gives it a value.
    Linker,
}

pub struct Resolved {
    pub objects: Vec<ObjectFile>,
    pub shared: Vec<SharedFile>,
    pub names: Interned,
    pub defs: Vec<Def>,
    /// `object_ids[f][i]`: global id of `objects[f].syms[first_global + i]`.
    pub object_ids: Vec<Vec<SymId>>,
    pub shared_ids: Vec<Vec<SymId>>,
    pub object_live: Vec<bool>,
    /// Archive members pulled in, each with the first reference that pulled it (for -Map and --why-extract).
    pub extracted: Vec<Extraction>,
    /// Per object, per section: discarded because another file's COMDAT group of the same signature won.
    pub comdat_discarded: Vec<Vec<bool>>,
    /// Per object, its discarded debug sections with a copy in the kept group: `(section, kept file, kept
    /// section)`, by section (`comdat::kept_copies`).
    pub comdat_copies: Vec<Vec<(SecIdx, FileId, SecIdx)>>,
    pub shared_needed: Vec<bool>,
    /// Most restrictive visibility seen for each global is hidden or internal: never exported.
    pub hidden: Vec<bool>,
    /// Referenced (undefined) by a needed shared object: must be exported from an executable.
    pub referenced_by_shared: Vec<bool>,
    /// Size and alignment of each common symbol: the largest of its commons.
    pub common: HashMap<SymId, (u64, u64)>,
    /// The globals whose winning definition was a common symbol, in id order (layout places them in `.bss`
    /// without reading every definition's symbol-table entry).
    pub common_defs: Vec<SymId>,
    /// A script's `/DISCARD/` takes the common symbols: they get no place and no `.symtab` entry, and a
    /// reference to one is an error (`gc`).
    pub commons_discarded: bool,
    /// `-S` or `-s`: debug sections are left out.
    pub strip_debug: bool,
    /// `--gdb-index`: the inputs' `.debug_gnu_pubnames`/`.debug_gnu_pubtypes` are left out.
    pub drop_gnu_pubnames: bool,
    /// With `--dynamic-list`: whether each global is listed; empty without a list.
    pub in_dynamic_list: Vec<bool>,
    /// Per global: named by `--export-dynamic-symbol(-list)` (empty when neither was given).
    pub exported_by_option: Vec<bool>,
    /// With `--version-script`: each global's version index (1 = base); empty without a script.
    pub sym_version: Vec<u16>,
    /// The version script's named nodes, in version-index order from 2: (name, names it depends on).
    pub version_defs: Vec<(String, Vec<String>)>,
    /// The objects cut into runs of about equal work, for per-file passes (`crate::par`).
    pub runs: FileRuns,
    /// The order GNU ld loads the objects in: their sections' and symbols' order in the output.
    pub order: FileOrder,
}

impl Resolved {
    /// The kept copy of object `f`'s discarded debug section `s`, if its group's winner has one.
    pub fn comdat_copy(&self, f: FileId, s: SecIdx) -> Option<(FileId, SecIdx)> {
        let copies = &self.comdat_copies[f.index()];
        (copies.binary_search_by_key(&s, |c| c.0).ok()).map(|k| (copies[k].1, copies[k].2))
    }
    pub fn name(&self, id: SymId) -> &'static [u8] {
        self.names.unique[id.index()].bytes
    }
    pub fn display(&self, id: SymId) -> String {
        demangle(self.name(id))
    }
    pub fn num_globals(&self) -> usize {
        self.defs.len()
    }

    /// Applies a narrower set of needed shared objects (`--gc-sections` with `--as-needed`): symbols that only a
    /// dropped library defined become undefined (only weak references remain to them), and only the kept
    /// libraries' references make an executable export its definitions.
    pub fn drop_unneeded_shared(&mut self, needed: Vec<bool>) {
        let dropped: Vec<bool> = needed
            .iter()
            .zip(&self.shared_needed)
            .map(|(&n, &was)| was && !n)
            .collect();
        if !dropped.contains(&true) {
            return;
        }
        undefine_shared(&mut self.defs, &dropped);
        self.referenced_by_shared = referenced_by(&self.shared_ids, &needed, self.defs.len());
        self.shared_needed = needed;
    }
}

/// Symbols that only a shared object not in the link (`dropped[file]`) defines become undefined.
fn undefine_shared(defs: &mut [Def], dropped: &[bool]) {
    if !dropped.contains(&true) {
        return;
    }
    let undefine = |d: &mut Def| {
        if let Def::Shared { file, .. } = *d
            && dropped[file.index()]
        {
            *d = Def::Undefined;
        }
    };
    if crate::par::worth_parallel(defs.len()) {
        defs.par_iter_mut().for_each(undefine);
    } else {
        defs.iter_mut().for_each(undefine);
    }
}

/// Per global id: whether a needed shared object refers to or defines it (an executable's definition must then
/// be exported, to be used or interposed).
fn referenced_by(shared_ids: &[Vec<SymId>], needed: &[bool], n: usize) -> Vec<bool> {
    let referenced: Vec<AtomicBool> = per_symbol(n, || AtomicBool::new(false));
    let entries = shared_ids.iter().map(Vec::len).sum();
    crate::par::for_each(shared_ids, crate::par::worth_parallel(entries), |d, ids| {
        if needed[d] {
            for &g in ids {
                referenced[g.index()].store(true, Relaxed);
            }
        }
    });
    referenced.into_iter().map(AtomicBool::into_inner).collect()
}

#[inline]
fn is_defined(obj: &ObjectFile, i: usize) -> bool {
    obj.sym_shndx(i) != E::SHN_UNDEF as u32
}

pub fn resolve(config: &Config, parsed: Parsed) -> Result<Resolved> {
    let Parsed {
        mut objects,
        shared,
        groups,
        lazy_runs,
    } = parsed;

    let (extra, roots_len) = command_line_names(config);
    let t = crate::timing::span("intern global names");
    let GlobalIds {
        mut names,
        extra_ids,
        wrap,
        mut object_ids,
        shared_ids,
    } = intern_globals(config, &objects, &shared, &extra, roots_len);
    drop(t);

    let t = crate::timing::span("archive members");
    let Pulled {
        live: object_live,
        extracted,
        providers,
    } = pull_archive_members(
        &mut objects,
        &shared,
        &mut object_ids,
        &shared_ids,
        &extra_ids[..roots_len],
        &names,
        &wrap,
    )?;
    if config.warn_backrefs {
        warn_backrefs(&objects, &groups, &extracted, &names);
    }
    intern_pulled_references(&objects, &object_live, &mut object_ids, &mut names);
    drop(t);
    let t = crate::timing::span("parse pulled archive members");
    parse_pulled_members(&mut objects, &object_live)?;
    drop(t);
    let runs = file_runs(&objects, &object_live);
    let t = crate::timing::span("load order");
    let order = load_order(
        config,
        &objects,
        &shared,
        &object_ids,
        &object_live,
        &runs,
        &extracted,
        &providers,
        &names,
        (&lazy_runs, &groups),
    );
    drop((t, providers));
    let t = crate::timing::span("COMDAT groups");
    let crate::comdat::Comdats {
        discarded: comdat_discarded,
        copies: comdat_copies,
    } = crate::comdat::choose_comdats(&runs, &order, &objects, &object_live, &object_ids, &names);
    drop(t);

    let _t = crate::timing::span("definitions");
    let link = LinkedFiles {
        objects: &objects,
        shared: &shared,
        object_live: &object_live,
        object_ids: &object_ids,
        shared_ids: &shared_ids,
        comdat_discarded: &comdat_discarded,
        names: &names,
        runs: &runs,
        order: &order,
    };
    let Definitions {
        defs,
        common_defs,
        common,
        mut hidden,
        shared_needed,
        referenced_by_shared,
    } = definitions(config, &link, &extra_ids)?;
    let Exports {
        sym_version,
        version_defs,
        in_dynamic_list,
        exported_by_option,
    } = if config.relocatable {
        // A partial link keeps `.symver` names as they are: versions and exports are the final link's.
        Exports::default()
    } else {
        exports(config, &link, &defs, &mut hidden)?
    };
    // Linker scripts' HIDDEN and PROVIDE_HIDDEN symbols are never exported.
    for sym in &config.script_hidden {
        if let Some(g) = link.names.lookup(sym.as_bytes()) {
            hidden[g.index()] = true;
        }
    }
    free_unused_members(&mut objects, &object_live);
    Ok(Resolved {
        objects,
        shared,
        names,
        defs,
        object_ids,
        shared_ids,
        object_live,
        extracted,
        comdat_discarded,
        comdat_copies,
        shared_needed,
        hidden,
        referenced_by_shared,
        common,
        common_defs,
        commons_discarded: !config.relocatable
            && (config.sections.as_deref()).is_some_and(|sc| sc.discards_commons()),
        // `-s` strips what `-S` does, as in GNU ld.
        strip_debug: config.strip_debug || config.strip_all,
        drop_gnu_pubnames: config.gdb_index,
        in_dynamic_list,
        exported_by_option,
        sym_version,
        version_defs,
        runs,
        order,
    })
}

/// The objects' load order (`crate::load_order`), from the members pulled in and what pulled them.
#[allow(clippy::too_many_arguments)]
fn load_order(
    config: &Config,
    objects: &[ObjectFile],
    shared: &[SharedFile],
    object_ids: &[Vec<SymId>],
    live: &[bool],
    runs: &FileRuns,
    extracted: &[Extraction],
    providers: &Providers,
    names: &Interned,
    (lazy_runs, groups): (&[crate::input::LazyRun], &[std::ops::Range<usize>]),
) -> FileOrder {
    if extracted.is_empty() {
        return FileOrder::default();
    }
    let n = objects.len();
    // `-u` names and the entry are referred to first, then the other names of the command line and scripts.
    let named = (config.undefined.iter().chain(&config.entry))
        .filter_map(|s| providers.of(names.lookup(s.as_bytes())?));
    let roots = named
        .chain(extracted.iter().filter(|e| e.by == NONE).map(|e| e.member))
        .collect();
    let by_shared = (extracted.iter())
        .filter(|e| e.by != NONE && e.by as usize >= n)
        .filter_map(|e| Some((shared.get(e.by as usize - n)?.objects_before, e.member)))
        .collect();
    let linked = crate::load_order::Linked {
        objects,
        object_ids,
        live,
        runs,
        lazy_runs,
        groups,
        roots,
        by_shared,
    };
    crate::load_order::load_order(&linked, |g| providers.of(g))
}

/// Names the command line or the linker itself may refer to, interned first so that they always have ids: the
/// roots of the link (the entry, `-u`, `--defsym`), then, from the index returned, `--wrap`'s three names per
/// symbol.
fn command_line_names(config: &Config) -> (Vec<Name>, usize) {
    let mut extra: Vec<Name> = Vec::new();
    // A partial link has no entry unless `-e` names one (GNU ld's script for `-r` has no ENTRY): an empty name,
    // which no symbol has, keeps the roots' numbering.
    let default_entry = if config.relocatable { "" } else { "_start" };
    let entry = config.entry.clone().unwrap_or_else(|| default_entry.into());
    extra.push(Name::new(leak(entry.as_bytes())));
    for u in &config.undefined {
        extra.push(Name::new(leak(u.as_bytes())));
    }
    for (sym, _) in &config.defsyms {
        extra.push(Name::new(leak(sym.as_bytes())));
    }
    for s in config.section_symbols.iter().filter(|s| !s.provide) {
        extra.push(Name::new(leak(s.name.as_bytes())));
    }
    // --wrap=SYM: SYM, __wrap_SYM and __real_SYM always have ids (they need not be roots).
    let roots_len = extra.len();
    for w in &config.wrap {
        extra.push(Name::new(leak(w.as_bytes())));
        extra.push(Name::new(leak(format!("__wrap_{w}").as_bytes())));
        extra.push(Name::new(leak(format!("__real_{w}").as_bytes())));
    }
    (extra, roots_len)
}

/// The global ids of the first interning.
struct GlobalIds {
    names: Interned,
    /// The ids of `command_line_names`, in its order.
    extra_ids: Vec<SymId>,
    /// `--wrap`: the id each undefined reference to a key goes to instead.
    wrap: HashMap<SymId, SymId>,
    object_ids: Vec<Vec<SymId>>,
    shared_ids: Vec<Vec<SymId>>,
}

/// Interns the command line's names (`extra`), every linked object's and shared object's global names, and the
/// names archive members define, and applies `--wrap` to the linked objects' references.
fn intern_globals(
    config: &Config,
    objects: &[ObjectFile],
    shared: &[SharedFile],
    extra: &[Name],
    roots_len: usize,
) -> GlobalIds {
    // An archive member's undefined references matter only if it is pulled in (in big static links most are
    // not), so members contribute just their defined names here; the rest are looked up, or added, when pulled.
    let lazy_defs: Vec<(Vec<Name>, &[u32])> = objects
        .par_iter()
        .map(|o| {
            // A member read through the symbol index: its index names (used in place, below).
            if !o.lazy || o.indexed.is_some() {
                return (Vec::new(), &[][..]);
            }
            let index = &o.lazy_defined[..];
            (
                index.iter().map(|&k| o.global_names[k as usize]).collect(),
                index,
            )
        })
        .collect();
    let mut lists: Vec<&[Name]> = Vec::with_capacity(1 + objects.len() + shared.len());
    lists.push(extra);
    lists.extend(objects.iter().zip(&lazy_defs).map(|(o, (defs, _))| {
        if let Some((_, index)) = &o.indexed {
            &index[..]
        } else if o.lazy {
            &defs[..]
        } else {
            &o.global_names[..]
        }
    }));
    lists.extend(shared.iter().map(|s| &s.global_names[..]));
    let mut names = intern(&lists);
    let mut all_ids = std::mem::take(&mut names.ids).into_iter();
    let extra_ids = all_ids.next().unwrap_or_default();
    let wrap = wrap_targets(config, &extra_ids, roots_len);
    let interned_ids: Vec<Vec<SymId>> = all_ids.by_ref().take(objects.len()).collect();
    let mut object_ids = ids_by_symbol_index(objects, interned_ids, &lazy_defs);
    let shared_ids: Vec<Vec<SymId>> = all_ids.collect();
    drop(lazy_defs);
    if !wrap.is_empty() {
        objects
            .par_iter()
            .zip(object_ids.par_iter_mut())
            .filter(|(o, _)| !o.lazy)
            .for_each(|(o, ids)| apply_wrap(o, ids, &wrap));
    }
    GlobalIds {
        names,
        extra_ids,
        wrap,
        object_ids,
        shared_ids,
    }
}

/// `--wrap`: undefined references to SYM go to __wrap_SYM, and those to __real_SYM to SYM (by the ids of
/// `command_line_names`, whose `--wrap` names start at `roots_len`).
fn wrap_targets(config: &Config, extra_ids: &[SymId], roots_len: usize) -> HashMap<SymId, SymId> {
    let mut wrap: HashMap<SymId, SymId> = HashMap::new();
    for k in 0..config.wrap.len() {
        let (sym, wrapped, real) = (
            extra_ids[roots_len + 3 * k],
            extra_ids[roots_len + 3 * k + 1],
            extra_ids[roots_len + 3 * k + 2],
        );
        wrap.insert(sym, wrapped);
        wrap.insert(real, sym);
    }
    wrap
}

/// Members' ids back at their symbol indices (NONE for references, filled in if the member is pulled). A member
/// read through the symbol index has the ids of its index names until it is pulled in and read.
fn ids_by_symbol_index(
    objects: &[ObjectFile],
    interned_ids: Vec<Vec<SymId>>,
    lazy_defs: &[(Vec<Name>, &[u32])],
) -> Vec<Vec<SymId>> {
    interned_ids
        .into_par_iter()
        .zip(objects.par_iter().zip(lazy_defs.par_iter()))
        .map(|(ids, (o, (_, index)))| {
            if !o.lazy || o.indexed.is_some() {
                return ids;
            }
            let mut full = vec![SymId::NONE; o.global_names.len()];
            for (&k, id) in index.iter().zip(ids) {
                full[k as usize] = id;
            }
            full
        })
        .collect()
}

/// Names only pulled members' references use, which nothing defines (weak or linker-defined symbols, undefined
/// errors): new ids, in input order.
fn intern_pulled_references(
    objects: &[ObjectFile],
    object_live: &[bool],
    object_ids: &mut [Vec<SymId>],
    names: &mut Interned,
) {
    for (f, o) in objects.iter().enumerate() {
        if o.lazy && object_live[f] {
            for (k, id) in object_ids[f].iter_mut().enumerate() {
                if id.is_none() {
                    *id = names.push(o.global_names[k]);
                }
            }
        }
    }
}

/// Parses the sections of the pulled archive members whose sections are not parsed yet.
fn parse_pulled_members(objects: &mut [ObjectFile], object_live: &[bool]) -> Result<()> {
    let errors: Vec<String> = objects
        .par_iter_mut()
        .enumerate()
        .filter(|(f, o)| o.lazy && object_live[*f] && o.sections.len() != o.shdrs.len())
        .filter_map(|(_, o)| o.parse_sections().err())
        .collect();
    if !errors.is_empty() {
        return Err(Errors(errors));
    }
    Ok(())
}

/// The objects cut into runs for later passes, weighed by what they walk: sections and symbols of each linked
/// file.
fn file_runs(objects: &[ObjectFile], object_live: &[bool]) -> FileRuns {
    FileRuns::new(objects.iter().zip(object_live).map(|(o, &live)| {
        if live {
            1 + (o.sections.len() + o.syms.len()) as u64
        } else {
            1
        }
    }))
}

/// The files of the link once archive members are pulled in and COMDAT groups chosen, with their symbols' global
/// ids: what the definition steps read.
struct LinkedFiles<'a> {
    objects: &'a [ObjectFile],
    shared: &'a [SharedFile],
    object_live: &'a [bool],
    object_ids: &'a [Vec<SymId>],
    shared_ids: &'a [Vec<SymId>],
    comdat_discarded: &'a [Vec<bool>],
    names: &'a Interned,
    runs: &'a FileRuns,
    order: &'a FileOrder,
}

impl LinkedFiles<'_> {
    /// The rank of symbol `i` of object `o` (file `f`) as a definition, `rank << 32 | place` (lower wins: 0
    /// strong, 1 weak, 2 common, 3 is a shared object's; `place` is `f`'s in the load order), or None when it
    /// defines nothing (undefined, or in a discarded COMDAT section).
    #[inline]
    fn rank(&self, o: &ObjectFile, f: FileId, i: usize) -> Option<u64> {
        let shndx = o.sym_shndx(i);
        if shndx == E::SHN_UNDEF as u32 {
            return None;
        }
        if (shndx as usize) < o.sections.len() && self.comdat_discarded[f.index()][shndx as usize] {
            return None;
        }
        let rank = if shndx == E::SHN_COMMON as u32 {
            2
        } else if o.syms[i].st_bind() == E::STB_WEAK {
            1
        } else {
            0
        };
        Some(rank << 32 | u64::from(self.order.rank(f)))
    }

    /// Whether the shared objects' passes are worth a task each (not when they hold few symbols).
    fn shared_parallel(&self) -> bool {
        crate::par::worth_parallel(self.shared_ids.iter().map(Vec::len).sum())
    }
}

/// What the definitions step decides (see `Resolved`'s fields of the same names).
struct Definitions {
    defs: Vec<Def>,
    common_defs: Vec<SymId>,
    common: HashMap<SymId, (u64, u64)>,
    hidden: Vec<bool>,
    shared_needed: Vec<bool>,
    referenced_by_shared: Vec<bool>,
}

/// The winning definition of every global, and what follows from the winners: the shared objects needed, the
/// linker's own definitions, and the checks of the result.
fn definitions(config: &Config, link: &LinkedFiles, extra_ids: &[SymId]) -> Result<Definitions> {
    let n = link.names.unique.len();
    let ranked = rank_definitions(link);
    let common_defs: Vec<SymId> =
        crate::par::filter_ids(n, |g| ranked.best[g].load(Relaxed) >> 32 == 2);
    let (mut defs, used) = record_winners(config, link, &ranked.best)?;

    let shared_needed: Vec<bool> = used.into_iter().map(AtomicBool::into_inner).collect();
    // Which names some shared object in the link defines, before those of unneeded ones are dropped: a library's
    // reference to another library's symbol is satisfied at run time whether or not this output needs it.
    let shared_defined: Vec<bool> = defs
        .iter()
        .map(|d| matches!(d, Def::Shared { .. }))
        .collect();
    let unneeded: Vec<bool> = shared_needed.iter().map(|&n| !n).collect();
    undefine_shared(&mut defs, &unneeded);
    let referenced_by_shared = referenced_by(link.shared_ids, &shared_needed, n);

    // --defsym's and the symbols SECTIONS assigns, which follow them among the extra names.
    let assigned = config.section_symbols.iter().filter(|s| !s.provide).count();
    for k in 0..config.defsyms.len() + assigned {
        defs[(extra_ids[1 + config.undefined.len() + k]).index()] = Def::Linker;
    }
    // Linker scripts' PROVIDE: only names an input refers to (so they were interned) and nothing defines.
    let provided = (config.provides.iter().map(|(s, _)| s)).chain(
        config
            .section_symbols
            .iter()
            .filter(|s| s.provide)
            .map(|s| &s.name),
    );
    for sym in provided {
        if let Some(g) = link.names.lookup(sym.as_bytes())
            && defs[g.index()] == Def::Undefined
        {
            defs[g.index()] = Def::Linker;
        }
    }
    define_linker_symbols(
        config,
        link.objects,
        link.object_live,
        &shared_needed,
        link.names,
        &mut defs,
    );
    check_shlib_undefined(config, link, &shared_needed, &defs, &shared_defined)?;
    if config.warn_common {
        warn_common(
            link.objects,
            link.object_live,
            link.object_ids,
            &ranked.commons,
            &|o, f, i| link.rank(o, FileId::new(f), i),
            link.names,
        );
    }
    Ok(Definitions {
        defs,
        common_defs,
        common: ranked.commons,
        hidden: ranked.hidden,
        shared_needed,
        referenced_by_shared,
    })
}

/// Every global's best definition before the winners are recorded.
struct Ranked {
    /// Per global: the minimum of its definitions' ranks (`LinkedFiles::rank`; `3 << 32 | d` for shared object
    /// `d`), `u64::MAX` for none.
    best: Vec<AtomicU64>,
    /// Size and alignment of each common symbol, the largest seen.
    commons: HashMap<SymId, (u64, u64)>,
    /// Per global: some object's symbol of its name is hidden or internal.
    hidden: Vec<bool>,
}

/// Ranks every definition of every global (objects, then shared objects) and keeps the best of each.
fn rank_definitions(link: &LinkedFiles) -> Ranked {
    let n = link.names.unique.len();
    let best: Vec<AtomicU64> = per_symbol(n, || AtomicU64::new(u64::MAX));
    // Commons are rare (C built with -fcommon), so a locked map, not two tables of every symbol (each large on a
    // big link, faulted in and copied into `common`).
    let commons: Mutex<HashMap<SymId, (u64, u64)>> = Mutex::new(HashMap::new());
    let hidden: Vec<AtomicBool> = per_symbol(n, || AtomicBool::new(false));
    for_each_live_global(
        link.runs,
        link.objects,
        link.object_live,
        link.object_ids,
        |f, o, i, g| {
            let sym = &o.syms[i];
            if matches!(sym.st_visibility(), E::STV_HIDDEN | E::STV_INTERNAL) {
                hidden[g.index()].store(true, Relaxed);
            }
            if let Some(key) = link.rank(o, f, i) {
                best[g.index()].fetch_min(key, Relaxed);
                if key >> 32 == 2 {
                    let mut m = commons.lock().unwrap_or_else(|e| e.into_inner());
                    let c = m.entry(g).or_insert((0, 0));
                    c.0 = c.0.max(sym.st_size.get(LE));
                    c.1 = c.1.max(sym.st_value.get(LE));
                }
            }
        },
    );
    crate::par::for_each(link.shared, link.shared_parallel(), |d, s| {
        for (k, &g) in link.shared_ids[d].iter().enumerate() {
            let i = s.first_global + k;
            if s.syms[i].st_shndx.get(LE) != E::SHN_UNDEF
                && !s.is_hidden_version(i)
                && s.syms[i].st_bind() != E::STB_LOCAL
            {
                best[g.index()].fetch_min(3 << 32 | d as u64, Relaxed);
            }
        }
    });
    unbind_linker_defined(link.names, &best);
    Ranked {
        best,
        commons: commons.into_inner().unwrap_or_else(|e| e.into_inner()),
        hidden: hidden.into_iter().map(AtomicBool::into_inner).collect(),
    }
}

/// The names the linker defines in every output are never bound to a library's definition (a library linked by a
/// linker that exported its own `_GLOBAL_OFFSET_TABLE_` would otherwise stand in for this output's, and keep an
/// --as-needed library nothing uses).
fn unbind_linker_defined(names: &Interned, best: &[AtomicU64]) {
    for name in LINKER_DEFINED
        .iter()
        .filter(|n| !n.starts_with(b"__rela_iplt"))
    {
        if let Some(g) = names.lookup(name)
            && best[g.index()].load(Relaxed) >> 32 == 3
        {
            best[g.index()].store(u64::MAX, Relaxed);
        }
    }
}

/// Records each global's winning definition (objects first, then shared objects) and, on the same walk, which
/// shared objects are used (`--as-needed`). Duplicate strong definitions are errors unless
/// `--allow-multiple-definition` (the first definition is the winner either way: the first loaded among equals).
fn record_winners(
    config: &Config,
    link: &LinkedFiles,
    best: &[AtomicU64],
) -> Result<(Vec<Def>, Vec<AtomicBool>)> {
    let n = link.names.unique.len();
    let used: Vec<AtomicBool> = link
        .shared
        .iter()
        .map(|s| AtomicBool::new(!s.as_needed))
        .collect();
    let winners: Vec<AtomicU64> = per_symbol(n, || AtomicU64::new(u64::MAX));
    let dup_errors = record_object_winners(link, best, &winners, &used);
    if !dup_errors.is_empty() && !config.allow_multiple_definition {
        let mut dup_errors = dup_errors;
        crate::srcloc::render(link.objects, &mut dup_errors, config.error_limit);
        return Err(Errors(dup_errors));
    }
    record_shared_winners(link, best, &winners);
    let defs = crate::par::map(&winners, crate::par::worth_parallel(n), |a| {
        let v = a.load(Relaxed);
        if v == u64::MAX {
            Def::Undefined
        } else if v >> 63 == 1 {
            Def::Shared {
                file: SharedId(((v >> 32) & 0x7fff_ffff) as u32),
                sym: v as u32,
            }
        } else {
            Def::Object {
                file: FileId((v >> 32) as u32),
                sym: v as u32,
            }
        }
    });
    Ok((defs, used))
}

/// Records the objects' winning definitions in `winners` (`file << 32 | sym`; each winner key belongs to exactly
/// one file) and returns the duplicate strong definitions' errors. On the same walk, --as-needed: a shared object
/// is `used` when a live object refers (not weakly) to a symbol it defines, that is, one whose best definition is
/// that library's (a separate walk was measurable on clang-so).
fn record_object_winners(
    link: &LinkedFiles,
    best: &[AtomicU64],
    winners: &[AtomicU64],
    used: &[AtomicBool],
) -> Vec<String> {
    let dup_errors: Vec<Vec<String>> = link.runs.map(|f| {
        let o = &link.objects[f.index()];
        let mut errs = Vec::new();
        if !link.object_live[f.index()] {
            return errs;
        }
        for (k, &g) in link.object_ids[f.index()].iter().enumerate() {
            let i = o.first_global + k;
            let Some(key) = link.rank(o, f, i) else {
                if !is_defined(o, i) && o.syms[i].st_bind() != E::STB_WEAK {
                    let b = best[g.index()].load(Relaxed);
                    if b >> 32 == 3 {
                        used[(b & 0xffff_ffff) as usize].store(true, Relaxed);
                    }
                }
                continue;
            };
            let b = best[g.index()].load(Relaxed);
            if b == key {
                winners[g.index()].store(u64::from(f.0) << 32 | i as u64, Relaxed);
            } else if key >> 32 == 0 && b >> 32 == 0 && o.sym_shndx(i) != E::SHN_ABS as u32 {
                let other = link.order.at(b as u32);
                errs.push(duplicate_symbol(link, g, other, f, i));
            }
        }
        errs
    });
    dup_errors.into_iter().flatten().collect()
}

/// The error for global `g`, defined by object `other` (the winner) and again by symbol `i` of object `f`, its
/// places completed by `srcloc::render`.
#[cold]
fn duplicate_symbol(link: &LinkedFiles, g: SymId, other: FileId, f: FileId, i: usize) -> String {
    let names = link.names;
    let site = crate::srcloc::mark_definition;
    let o = &link.objects[other.index()];
    let oi = o
        .global_names
        .iter()
        .position(|n| n.bytes == names.unique[g.index()].bytes);
    let other_site = oi.map_or_else(|| o.name.clone(), |k| site(other, o.first_global + k));
    format!(
        "duplicate symbol: {}\n>>> defined at {}\n>>> defined at {}",
        demangle(names.unique[g.index()].bytes),
        other_site,
        site(f, i)
    )
}

/// Records the shared objects' winning definitions in `winners` (`1 << 63 | d << 32 | sym`).
fn record_shared_winners(link: &LinkedFiles, best: &[AtomicU64], winners: &[AtomicU64]) {
    crate::par::for_each(link.shared, link.shared_parallel(), |d, s| {
        for (k, &g) in link.shared_ids[d].iter().enumerate() {
            let i = s.first_global + k;
            if best[g.index()].load(Relaxed) == (3 << 32 | d as u64)
                && s.syms[i].st_shndx.get(LE) != E::SHN_UNDEF
                && !s.is_hidden_version(i)
            {
                // Several entries of one name in one library (versions): the lowest index wins.
                winners[g.index()].fetch_min(1 << 63 | (d as u64) << 32 | i as u64, Relaxed);
            }
        }
    });
}

/// `--no-allow-shlib-undefined` (the default for executables): the needed shared objects' references must be
/// defined; errors, or warnings with `--warn-unresolved-symbols`.
fn check_shlib_undefined(
    config: &Config,
    link: &LinkedFiles,
    shared_needed: &[bool],
    defs: &[Def],
    shared_defined: &[bool],
) -> Result<()> {
    let allow_shlib_undefined = config
        .allow_shlib_undefined
        .unwrap_or(config.kind == crate::args::OutputKind::Shared);
    if allow_shlib_undefined {
        return Ok(());
    }
    let known = ShlibReferences {
        shared: link.shared,
        shared_ids: link.shared_ids,
        shared_needed,
        names: link.names,
    };
    match known.check(defs, shared_defined) {
        Err(e) if config.warn_undefined => e.0.iter().for_each(|w| crate::diag::warn(w)),
        r => r?,
    }
    Ok(())
}

/// What the output exports and under which versions (see `Resolved`'s fields of the same names).
#[derive(Default)]
struct Exports {
    sym_version: Vec<u16>,
    version_defs: Vec<(String, Vec<String>)>,
    in_dynamic_list: Vec<bool>,
    exported_by_option: Vec<bool>,
}

/// Applies the version scripts, `--exclude-libs` (both mark globals `hidden`), the dynamic lists and the
/// `--export-dynamic-symbol` options.
fn exports(
    config: &Config,
    link: &LinkedFiles,
    defs: &[Def],
    hidden: &mut [bool],
) -> Result<Exports> {
    let (sym_version, version_defs) = apply_version_scripts(
        config,
        link.objects,
        link.object_ids,
        link.names,
        defs,
        hidden,
    )?;
    if !config.exclude_libs.is_empty() {
        exclude_libs(config, link.objects, defs, &sym_version, hidden);
    }
    let mut in_dynamic_list = read_dynamic_lists(config, link.names)?;
    if config.dynamic_list_data {
        add_data_symbols(link.objects, defs, &mut in_dynamic_list);
    }
    let exported_by_option = read_export_patterns(config, link.names)?;
    Ok(Exports {
        sym_version,
        version_defs,
        in_dynamic_list,
        exported_by_option,
    })
}

/// Archive members left out of the link keep no symbol names: nothing reads them again (a message about one reads
/// its string table). On a large static link they take much memory, freed here for what follows.
fn free_unused_members(objects: &mut [ObjectFile], object_live: &[bool]) {
    let unused: Vec<&mut ObjectFile> = objects
        .iter_mut()
        .zip(object_live)
        .filter(|(_, live)| !**live)
        .map(|(o, _)| o)
        .collect();
    // Each is a few frees: hundreds of them are not worth a pass on the pool.
    let parallel = unused.len() >= 256;
    crate::par::for_each_owned(unused, parallel, |o| {
        o.global_names = Vec::new();
        o.lazy_defined = Vec::new();
        o.indexed = None;
    });
}

/// Calls `visit(file, object, symbol index, global id)` for every global symbol entry of every linked object, in
/// parallel over files.
pub fn for_each_live_global(
    runs: &FileRuns,
    objects: &[ObjectFile],
    object_live: &[bool],
    object_ids: &[Vec<SymId>],
    visit: impl Fn(FileId, &ObjectFile, usize, SymId) + Sync + Send,
) {
    runs.for_each(|f| {
        if object_live[f.index()] {
            let o = &objects[f.index()];
            for (k, &g) in object_ids[f.index()].iter().enumerate() {
                visit(f, o, o.first_global + k, g);
            }
        }
    });
}

/// `--wrap`: redirects the undefined references of one object.
fn apply_wrap(o: &ObjectFile, ids: &mut [SymId], wrap: &HashMap<SymId, SymId>) {
    for (k, id) in ids.iter_mut().enumerate() {
        if !is_defined(o, o.first_global + k)
            && let Some(&to) = wrap.get(id)
        {
            *id = to;
        }
    }
}

/// `--dynamic-list-data`: every global that an object defines as data (an object, TLS or common symbol) joins the
/// dynamic list.
fn add_data_symbols(objects: &[ObjectFile], defs: &[Def], list: &mut Vec<bool>) {
    list.resize(defs.len(), false);
    for (g, d) in defs.iter().enumerate() {
        if let Def::Object { file, sym } = *d
            && matches!(
                objects[file.index()].syms[sym as usize].st_type(),
                E::STT_OBJECT | E::STT_TLS | E::STT_COMMON
            )
        {
            list[g] = true;
        }
    }
}

/// Per global: whether `--export-dynamic-symbol` or `--export-dynamic-symbol-list` names it (empty: neither was
/// given).
fn read_export_patterns(config: &Config, names: &crate::intern::Interned) -> Result<Vec<bool>> {
    if config.export_dynamic_symbols.is_empty() && config.export_dynamic_symbol_lists.is_empty() {
        return Ok(Vec::new());
    }
    let mut text = String::from("{ ");
    for p in &config.export_dynamic_symbols {
        // Quoted when not a glob, so that a name is matched exactly.
        if p.contains(['*', '?', '[']) {
            text += &format!("{p}; ");
        } else {
            text += &format!("\"{p}\"; ");
        }
    }
    text += "};";
    let mut list = crate::version::parse(&text)
        .map_err(|e| Errors::one(format!("--export-dynamic-symbol: {e}")))?;
    for path in &config.export_dynamic_symbol_lists {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Errors::one(format!(
                "cannot read --export-dynamic-symbol-list {}: {e}",
                path.display()
            ))
        })?;
        let s = crate::version::parse(&text)
            .map_err(|e| Errors::one(format!("{}: {e}", path.display())))?;
        list.nodes.extend(s.nodes);
    }
    Ok(matching_globals(&list, names))
}

/// Per global: whether `list`'s `global:` patterns name it.
fn matching_globals(
    list: &crate::version::VersionScript,
    names: &crate::intern::Interned,
) -> Vec<bool> {
    let cxx = list.has_cxx();
    names
        .unique
        .par_iter()
        .map(|n| {
            let demangled = if cxx {
                crate::version::demangle_cxx(n.bytes)
            } else {
                None
            };
            matches!(
                list.binding(n.bytes, demangled.as_deref()),
                crate::version::Binding::Global(_)
            )
        })
        .collect()
}

/// `--dynamic-list` files (the `{ sym; glob*; extern "C++" { ... }; };` syntax of version scripts).
fn read_dynamic_lists(config: &Config, names: &crate::intern::Interned) -> Result<Vec<bool>> {
    if config.dynamic_list.is_empty() {
        return Ok(Vec::new());
    }
    let mut list = crate::version::VersionScript::default();
    for path in &config.dynamic_list {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Errors::one(format!("cannot read dynamic list {}: {e}", path.display()))
        })?;
        let s = crate::version::parse(&text)
            .map_err(|e| Errors::one(format!("{}: {e}", path.display())))?;
        list.nodes.extend(s.nodes);
    }
    Ok(matching_globals(&list, names))
}

type VersionOutcome = (Vec<u16>, Vec<(String, Vec<String>)>);

/// Reads the `--version-script` files and decides, for every defined global, its version or that it is local
/// (then it is marked hidden: not exported, not preemptible).
fn apply_version_scripts(
    config: &Config,
    objects: &[ObjectFile],
    object_ids: &[Vec<SymId>],
    names: &crate::intern::Interned,
    defs: &[Def],
    hidden: &mut [bool],
) -> Result<VersionOutcome> {
    let explicit = symver_definitions(objects, object_ids, defs);
    if config.version_script.is_empty()
        && config.version_texts.is_empty()
        && explicit.is_empty()
        && !config.default_symver
    {
        return Ok((Vec::new(), Vec::new()));
    }
    let script = read_version_scripts(config)?;
    if config.no_undefined_version {
        undefined_versions(&script, names, defs)?;
    }
    let numbering = number_versions(config, &script);
    let explicit_index = explicit_versions(&explicit, &script, &numbering, names)?;
    let Numbering {
        index_of_node,
        version_defs,
        default_index,
    } = numbering;
    let cxx = script.has_cxx();
    // Symbols a linker script or --defsym assigns are matched like the objects' (GNU ld's: a vDSO's `local: *`
    // keeps its script's `vvar_*` addresses out of `.dynsym`); other linker-made ones are not.
    let assigned: std::collections::HashSet<&[u8]> = (config.defsyms.iter().map(|(n, _)| n))
        .chain(config.provides.iter().map(|(n, _)| n))
        .chain(config.section_symbols.iter().map(|s| &s.name))
        .map(|n| n.as_bytes())
        .collect();
    let verdicts: Vec<Option<u16>> = defs
        .par_iter()
        .enumerate()
        .map(|(g, d)| {
            let by_script = matches!(d, Def::Linker)
                && !assigned.is_empty()
                && assigned.contains(names.unique[g].bytes);
            if !matches!(d, Def::Object { .. }) && !by_script {
                return Some(1);
            }
            if let Some(&v) = explicit_index.get(&SymId::new(g)) {
                // 0: hidden by its own node's `local:`.
                return (v != 0).then_some(v);
            }
            let name = names.unique[g].bytes;
            let demangled = if cxx {
                crate::version::demangle_cxx(name)
            } else {
                None
            };
            match script.binding(name, demangled.as_deref()) {
                crate::version::Binding::Unmatched => Some(default_index.unwrap_or(1)),
                crate::version::Binding::Local => None,
                crate::version::Binding::Global(k) => Some(index_of_node[k]),
            }
        })
        .collect();
    let mut sym_version = Vec::with_capacity(verdicts.len());
    for (g, v) in verdicts.into_iter().enumerate() {
        match v {
            Some(v) => sym_version.push(v),
            None => {
                hidden[g] = true;
                sym_version.push(1);
            }
        }
    }
    Ok((sym_version, version_defs))
}

/// Versions named in symbol names (`.symver`): `name@@V` (default; parse renamed it `name`) and `name@V`, per
/// global whose winning definition names one: (version, default).
fn symver_definitions(
    objects: &[ObjectFile],
    object_ids: &[Vec<SymId>],
    defs: &[Def],
) -> HashMap<SymId, (&'static [u8], bool)> {
    let mut explicit: HashMap<SymId, (&[u8], bool)> = HashMap::new();
    for (f, o) in objects.iter().enumerate() {
        for &(k, ver, default) in &o.symvers {
            let g = object_ids[f][k as usize];
            if g.is_some()
                && defs[g.index()]
                    == (Def::Object {
                        file: FileId::new(f),
                        sym: (o.first_global + k as usize) as u32,
                    })
            {
                explicit.insert(g, (ver, default));
            }
        }
    }
    explicit
}

/// The `--version-script` files, as one script.
fn read_version_scripts(config: &Config) -> Result<crate::version::VersionScript> {
    let mut script = crate::version::VersionScript::default();
    for path in &config.version_script {
        // Not found as named: on the library search path, as GNU ld looks for script files.
        let found;
        let path = if path.is_relative() && !path.exists() {
            found = config
                .search_paths
                .iter()
                .map(|d| d.join(path))
                .find(|p| p.is_file());
            found.as_ref().unwrap_or(path)
        } else {
            path
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            Errors::one(format!(
                "cannot read version script {}: {e}",
                path.display()
            ))
        })?;
        let s = crate::version::parse(&text)
            .map_err(|e| Errors::one(format!("{}: {e}", path.display())))?;
        script.nodes.extend(s.nodes);
    }
    // Linker scripts' VERSION commands, after the files (GNU ld reads them in command-line order; the nodes'
    // order only numbers the versions).
    for (at, text) in &config.version_texts {
        let s = crate::version::parse(text)
            .map_err(|e| Errors::one(format!("{at}: in VERSION: {e}")))?;
        script.nodes.extend(s.nodes);
    }
    Ok(script)
}

/// The version indices of a link's versions.
struct Numbering {
    /// Per script node: its version index.
    index_of_node: Vec<u16>,
    /// The named versions, from index 2: (name, names it depends on).
    version_defs: Vec<(String, Vec<String>)>,
    /// `--default-symver`'s version.
    default_index: Option<u16>,
}

/// Version indices: 1 is the base; `--default-symver`'s version (named after the soname or the output file) is 2,
/// as GNU ld numbers it; then the named nodes in script order. The anonymous node's globals get the default
/// version when there is one (GNU ld versions every exported unversioned symbol then), else the base.
fn number_versions(config: &Config, script: &crate::version::VersionScript) -> Numbering {
    let mut version_defs = Vec::new();
    let default_index = config.default_symver.then(|| {
        let name = config.soname.clone().unwrap_or_else(|| {
            config
                .output
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        });
        version_defs.push((name, Vec::new()));
        2
    });
    let mut index_of_node = Vec::with_capacity(script.nodes.len());
    for n in &script.nodes {
        match &n.name {
            Some(name) => {
                version_defs.push((name.clone(), n.deps.clone()));
                index_of_node.push(1 + version_defs.len() as u16);
            }
            None => index_of_node.push(default_index.unwrap_or(1)),
        }
    }
    Numbering {
        index_of_node,
        version_defs,
        default_index,
    }
}

/// The version index of each global with a `.symver` version (`explicit`): 0 when its own node's `local:` hides
/// it, with bit 15 set for a non-default (`name@V`) one. A version no script defines is an error.
fn explicit_versions(
    explicit: &HashMap<SymId, (&[u8], bool)>,
    script: &crate::version::VersionScript,
    numbering: &Numbering,
    names: &crate::intern::Interned,
) -> Result<HashMap<SymId, u16>> {
    let Numbering {
        index_of_node,
        version_defs,
        default_index,
    } = numbering;
    let default_index = *default_index;
    let mut errors = Vec::new();
    let mut explicit_index: HashMap<SymId, u16> = HashMap::new();
    for (&g, &(ver, default)) in explicit {
        if ver.is_empty() {
            // `name@` / `name@@`: the base version, or the --default-symver one (hidden for `name@`).
            let v = default_index.map_or(1, |d| if default { d } else { d | 0x8000 });
            explicit_index.insert(g, v);
            continue;
        }
        let node = script
            .nodes
            .iter()
            .position(|n| n.name.as_ref().is_some_and(|n| n.as_bytes() == ver));
        let is_default = default_index.is_some() && version_defs[0].0.as_bytes() == ver;
        let hidden_bit = if default { 0 } else { 0x8000 };
        match (node, is_default) {
            (Some(k), _) => {
                let full = names.unique[g.index()].bytes;
                let base = if default {
                    full
                } else {
                    &full[..full.len() - ver.len() - 1]
                };
                if script.node_hides(k, base) {
                    explicit_index.insert(g, 0);
                } else {
                    explicit_index.insert(g, index_of_node[k] | hidden_bit);
                }
            }
            (None, true) => {
                explicit_index.insert(g, 2 | hidden_bit);
            }
            (None, false) => errors.push(format!(
                "symbol '{}' has undefined version '{}'",
                demangle(names.unique[g.index()].bytes),
                String::from_utf8_lossy(ver)
            )),
        }
    }
    if !errors.is_empty() {
        errors.sort();
        return Err(Errors(errors));
    }
    Ok(explicit_index)
}

/// The fixed names of the symbols the linker can define (besides `__start_SEC` and `__stop_SEC`); layout gives
/// them their values.
pub const LINKER_DEFINED: [&[u8]; 22] = [
    b"_GLOBAL_OFFSET_TABLE_",
    b"_DYNAMIC",
    b"__ehdr_start",
    b"__executable_start",
    b"_TLS_MODULE_BASE_",
    b"_end",
    b"end",
    b"_etext",
    b"etext",
    b"__etext",
    b"_edata",
    b"edata",
    b"__bss_start",
    b"__GNU_EH_FRAME_HDR",
    b"__rela_iplt_start",
    b"__rela_iplt_end",
    b"__init_array_start",
    b"__init_array_end",
    b"__fini_array_start",
    b"__fini_array_end",
    b"__preinit_array_start",
    b"__preinit_array_end",
];

/// The shared objects of a link and their references, for `--no-allow-shlib-undefined`.
struct ShlibReferences<'a> {
    shared: &'a [SharedFile],
    shared_ids: &'a [Vec<SymId>],
    shared_needed: &'a [bool],
    names: &'a crate::intern::Interned,
}

impl ShlibReferences<'_> {
    /// Every non-weak undefined symbol of a needed shared object must be defined by the output or by a shared
    /// object of the link. As lld does, only shared objects whose own `DT_NEEDED` libraries are all in the link are
    /// checked: the others may be satisfied by libraries this link does not see.
    fn check(&self, defs: &[Def], shared_defined: &[bool]) -> Result<()> {
        let sonames: Vec<&str> = self.shared.iter().map(|s| s.soname.as_str()).collect();
        let mut errors = Vec::new();
        for (d, s) in self.shared.iter().enumerate() {
            let all_known = s.needed.iter().all(|n| sonames.contains(&n.as_str()));
            if !self.shared_needed[d] || !all_known {
                continue;
            }
            for (k, &g) in self.shared_ids[d].iter().enumerate() {
                let sym = &s.syms[s.first_global + k];
                let undefined =
                    sym.st_shndx.get(LE) == E::SHN_UNDEF && sym.st_bind() == E::STB_GLOBAL;
                if undefined && defs[g.index()] == Def::Undefined && !shared_defined[g.index()] {
                    errors.push(format!(
                        "undefined reference: {}\n>>> referenced by {} (disallowed by --no-allow-shlib-undefined)",
                        demangle(self.names.unique[g.index()].bytes),
                        s.soname
                    ));
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            errors.sort();
            errors.dedup();
            Err(Errors(errors))
        }
    }
}

/// `--no-undefined-version`: every symbol a version script's `global:` names exactly (not a glob, not a C++ pattern,
/// which match demangled names) must be defined by the output, as lld checks.
fn undefined_versions(
    script: &crate::version::VersionScript,
    names: &crate::intern::Interned,
    defs: &[Def],
) -> Result<()> {
    let mut errors = Vec::new();
    for node in &script.nodes {
        for p in node.global.iter().filter(|p| p.glob.is_none() && !p.cxx) {
            let defined = names
                .lookup(p.text.as_bytes())
                .is_some_and(|g| matches!(defs[g.index()], Def::Object { .. } | Def::Linker));
            if !defined {
                errors.push(format!(
                    "version script assignment of '{}' to symbol '{}' failed: symbol not defined",
                    node.name.as_deref().unwrap_or("global"),
                    p.text
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Errors(errors))
    }
}

/// `--exclude-libs`: the globals defined by members of the named archives (or of every archive, `ALL`) are not
/// exported, unless a version script gives them a named version (as lld decides; GNU ld makes them local).
fn exclude_libs(
    config: &Config,
    objects: &[ObjectFile],
    defs: &[Def],
    sym_version: &[u16],
    hidden: &mut [bool],
) {
    let all = config.exclude_libs.iter().any(|l| l == "ALL");
    // An archive member's name is `archive(member)` (see `input`); the archive is matched by its file name.
    let excluded: Vec<bool> = objects
        .iter()
        .map(|o| {
            let Some(archive) = o.name.strip_suffix(')').and_then(|n| n.rsplit_once('(')) else {
                return false;
            };
            let file = std::path::Path::new(archive.0)
                .file_name()
                .map_or(archive.0.into(), |f| f.to_string_lossy());
            all || config.exclude_libs.iter().any(|l| *l == file)
        })
        .collect();
    for (g, d) in defs.iter().enumerate() {
        if let Def::Object { file, .. } = *d
            && excluded[file.index()]
            && sym_version.get(g).is_none_or(|&v| v <= 1)
        {
            hidden[g] = true;
        }
    }
}

/// Whether `name` is a `__start_SEC` or `__stop_SEC` symbol (`-z start-stop-visibility`).
pub fn is_start_stop(name: &[u8]) -> bool {
    name.starts_with(b"__start_") || name.starts_with(b"__stop_")
}

/// Whether linker-defined symbol `name` stays local to the output: never exported from a shared object or an
/// executable, and a `LOCAL` entry of `.symtab`. GNU ld defines these hidden (its own `_GLOBAL_OFFSET_TABLE_`,
/// `_DYNAMIC`, `__ehdr_start`, `__GNU_EH_FRAME_HDR`, `_TLS_MODULE_BASE_`; its default scripts'
/// `PROVIDE_HIDDEN` array and IRELATIVE bounds) and makes hidden definitions local, as it does the symbols a
/// script assigns with `HIDDEN` or `PROVIDE_HIDDEN`. A name a script or `--defsym` assigns plainly is an ordinary
/// global. The others (`_end`, `__bss_start`…) are exported like any definition.
pub fn linker_symbol_is_local(config: &Config, name: &[u8]) -> bool {
    let own = matches!(
        name,
        b"_GLOBAL_OFFSET_TABLE_"
            | b"_DYNAMIC"
            | b"__ehdr_start"
            | b"_TLS_MODULE_BASE_"
            | b"__GNU_EH_FRAME_HDR"
            | b"__rela_iplt_start"
            | b"__rela_iplt_end"
            | b"__init_array_start"
            | b"__init_array_end"
            | b"__fini_array_start"
            | b"__fini_array_end"
            | b"__preinit_array_start"
            | b"__preinit_array_end"
    );
    let is = |s: &String| s.as_bytes() == name;
    if config.script_hidden.iter().any(is) {
        return true;
    }
    own && !(config.defsyms.iter().any(|(s, _)| is(s))
        || config.provides.iter().any(|(s, _)| is(s))
        || config.section_symbols.iter().any(|s| is(&s.name)))
}

/// Symbols the linker defines when a live object refers to them and nothing else defines them.
fn define_linker_symbols(
    config: &Config,
    objects: &[ObjectFile],
    live: &[bool],
    shared_needed: &[bool],
    names: &Interned,
    defs: &mut [Def],
) {
    let dynamic = config.kind != crate::args::OutputKind::Exec || shared_needed.iter().any(|&n| n);
    let list = LINKER_DEFINED.iter().copied().filter(|&n| match n {
        b"_DYNAMIC" => dynamic,
        // GNU ld's scripts define it for executables only: a shared object's reference is the executable's.
        b"__executable_start" => config.kind != crate::args::OutputKind::Shared,
        // GNU ld's default scripts: the IRELATIVE bounds in a position-dependent executable's (empty in a dynamic
        // one, whose IRELATIVE relocations are in `.rela.plt`), the arrays' bounds in an executable's.
        b"__rela_iplt_start" | b"__rela_iplt_end" => config.kind == crate::args::OutputKind::Exec,
        b"__init_array_start"
        | b"__init_array_end"
        | b"__fini_array_start"
        | b"__fini_array_end"
        | b"__preinit_array_start"
        | b"__preinit_array_end" => config.kind != crate::args::OutputKind::Shared,
        b"__GNU_EH_FRAME_HDR" => config.eh_frame_hdr,
        // The headers' address, where they are loaded: `-N`'s and `-n`'s are in no load but where a script's
        // `PHDRS` says `FILEHDR`, and GNU ld leaves it undefined.
        b"__ehdr_start" => {
            config.paged()
                || (config.sections.as_deref()).is_some_and(|sc| sc.phdrs.iter().any(|p| p.filehdr))
        }
        _ => true,
    });
    // __start_SEC and __stop_SEC for every section named like a C identifier (listed by the parse).
    let mut sections: Vec<&[u8]> = objects
        .par_iter()
        .enumerate()
        .filter(|&(f, _)| live[f])
        .flat_map_iter(|(_, o)| o.c_ident_secs.iter().map(|&s| o.sec_name(s as usize)))
        .collect();
    sections.sort_unstable();
    sections.dedup();
    let extra: Vec<Vec<u8>> = sections
        .iter()
        .flat_map(|n| [[b"__start_", *n].concat(), [b"__stop_", *n].concat()])
        .collect();
    for name in list.chain(extra.iter().map(|v| &v[..])) {
        if let Some(g) = names.lookup(name)
            && defs[g.index()] == Def::Undefined
        {
            defs[g.index()] = Def::Linker;
        }
    }
}

fn leak(s: &[u8]) -> &'static [u8] {
    Box::leak(s.to_vec().into_boxed_slice())
}

/// `--warn-backrefs` (lld's): an archive member pulled in for a file after its archive on the command line, which
/// GNU ld would not do (it reads archives once, in order, outside `--start-group`), is reported. The reference
/// kept for each member is the first in input order, so one from before the archive means no warning.
fn warn_backrefs(
    objects: &[ObjectFile],
    groups: &[std::ops::Range<usize>],
    extracted: &[Extraction],
    names: &crate::intern::Interned,
) {
    for e in extracted {
        let (by, m) = (e.by as usize, e.member.index());
        if e.by == NONE || by >= objects.len() || by < m {
            continue;
        }
        if groups.iter().any(|g| g.contains(&by) && g.contains(&m)) {
            continue;
        }
        crate::diag::warn(&format!(
            "backward reference detected: {} in {} refers to {}",
            demangle(names.unique[e.sym.index()].bytes),
            objects[by].name,
            objects[m].name
        ));
    }
}

/// `pull_archive_members`'s states of a name (`Pulls::defined`), in the order `fetch_max` keeps.
const COMMON_ONLY: u8 = 1;
const DEFINED: u8 = 2;
/// Defined by a file outside the archives (or a shared object before the members that define it).
const DEFINED_OUTSIDE: u8 = 3;

/// What `pull_archive_members` decides.
struct Pulled {
    /// Per object: linked.
    live: Vec<bool>,
    extracted: Vec<Extraction>,
    providers: Providers,
}

/// Which member a reference to each name pulls in, for the load order.
struct Providers {
    /// `Pulls::first_lazy`.
    first_lazy: Vec<AtomicU32>,
    /// `Pulls::defined`.
    defined: Vec<AtomicU8>,
}

impl Providers {
    /// The member that a reference to `g` makes GNU ld load: the one pulled in for it (if any), unless a file
    /// outside the archives defines it. Names interned after the pull (`intern_pulled_references`) pulled in
    /// nothing.
    #[inline]
    fn of(&self, g: SymId) -> Option<FileId> {
        let defined = self.defined.get(g.index())?.load(Relaxed);
        if defined == DEFINED_OUTSIDE {
            return None;
        }
        Some(FileId(self.first_lazy[g.index()].load(Relaxed))).filter(|m| m.is_some())
    }
}

/// Decides which archive members are live, in rounds (see the module comment).
fn pull_archive_members(
    objects: &mut [ObjectFile],
    shared: &[SharedFile],
    object_ids: &mut [Vec<SymId>],
    shared_ids: &[Vec<SymId>],
    extra_ids: &[SymId],
    names: &crate::intern::Interned,
    wrap: &HashMap<SymId, SymId>,
) -> Result<Pulled> {
    let pulls = Pulls::new(objects, shared, object_ids, shared_ids, names.unique.len());
    let mut roots = round_zero_roots(objects.len(), shared, shared_ids, extra_ids);
    let mut extracted: Vec<Extraction> = Vec::new();
    let mut frontier: Vec<usize> = (0..objects.len()).filter(|&f| !objects[f].lazy).collect();
    let mut how = DEFINED_OUTSIDE;
    loop {
        read_indexed_members(objects, object_ids, &frontier)?;
        fill_member_ids(objects, object_ids, &frontier, names, wrap);
        pulls.note_definitions(objects, object_ids, &frontier, how);
        how = DEFINED;
        let next = pulls.next_round(objects, object_ids, &frontier, &mut roots, names);
        if next.is_empty() {
            break;
        }
        for e in &next {
            pulls.live[e.member.index()].store(true, Relaxed);
        }
        frontier = next.iter().map(|e| e.member.index()).collect();
        extracted.extend(next);
    }
    let live: Vec<bool> = pulls.live.into_iter().map(AtomicBool::into_inner).collect();
    // Members never read keep no ids (they have no symbols to index them by).
    for (f, o) in objects.iter().enumerate() {
        if o.indexed.is_some() && !live[f] {
            object_ids[f] = Vec::new();
        }
    }
    let providers = Providers {
        first_lazy: pulls.first_lazy,
        defined: pulls.defined,
    };
    Ok(Pulled {
        live,
        extracted,
        providers,
    })
}

/// What `pull_archive_members` knows of each file and name between rounds.
struct Pulls {
    /// Per object: linked (not an archive member, or pulled in).
    live: Vec<AtomicBool>,
    /// Per name: 0 undefined, `COMMON_ONLY` defined by linked objects only as a common symbol (which an archive
    /// member's data definition replaces, `common_extractions`), `DEFINED_OUTSIDE` otherwise when a file outside
    /// the archives defines it, `DEFINED` otherwise.
    defined: Vec<AtomicU8>,
    /// Per name: the first archive member, in input order, that defines it.
    first_lazy: Vec<AtomicU32>,
}

impl Pulls {
    /// The state before round zero: the members' definitions, and the names shared objects define.
    fn new(
        objects: &[ObjectFile],
        shared: &[SharedFile],
        object_ids: &[Vec<SymId>],
        shared_ids: &[Vec<SymId>],
        n: usize,
    ) -> Pulls {
        let live: Vec<AtomicBool> = objects.iter().map(|o| AtomicBool::new(!o.lazy)).collect();
        let defined: Vec<AtomicU8> = per_symbol(n, || AtomicU8::new(0));
        let first_lazy: Vec<AtomicU32> = per_symbol(n, || AtomicU32::new(NONE));
        objects
            .par_iter()
            .enumerate()
            .filter(|(_, o)| o.lazy)
            .for_each(|(f, o)| {
                for (k, &g) in object_ids[f].iter().enumerate() {
                    // A member not read yet defines (by its archive's index) every name it has an id for.
                    if g.is_some() && (o.indexed.is_some() || is_defined(o, o.first_global + k)) {
                        first_lazy[g.index()].fetch_min(f as u32, Relaxed);
                    }
                }
            });
        // A shared object's definition counts for the members after it on the command line only: GNU ld reads
        // its inputs in order, so an archive before the library still supplies the name.
        shared.par_iter().enumerate().for_each(|(d, s)| {
            for (k, &g) in shared_ids[d].iter().enumerate() {
                let i = s.first_global + k;
                if s.syms[i].st_shndx.get(LE) != E::SHN_UNDEF && !s.is_hidden_version(i) {
                    let m = first_lazy[g.index()].load(Relaxed);
                    if m == NONE || s.objects_before as u32 <= m {
                        defined[g.index()].store(DEFINED_OUTSIDE, Relaxed);
                    }
                }
            }
        });
        Pulls {
            live,
            defined,
            first_lazy,
        }
    }

    /// Records the definitions of the newly linked files `frontier`, `DEFINED` or `DEFINED_OUTSIDE` (`defined`)
    /// when not common.
    fn note_definitions(
        &self,
        objects: &[ObjectFile],
        object_ids: &[Vec<SymId>],
        frontier: &[usize],
        defined: u8,
    ) {
        frontier.par_iter().for_each(|&f| {
            let o = &objects[f];
            for (k, &g) in object_ids[f].iter().enumerate() {
                // NONE: a definition its archive's index did not list, which nothing else names.
                let shndx = o.sym_shndx(o.first_global + k);
                if g.is_some() && shndx != E::SHN_UNDEF as u32 {
                    let how = if shndx == E::SHN_COMMON as u32 {
                        COMMON_ONLY
                    } else {
                        defined
                    };
                    self.defined[g.index()].fetch_max(how, Relaxed);
                }
            }
        });
    }

    /// The member that a reference to `g` pulls in: the first to define it, when no linked file defines it and
    /// that member is not linked yet.
    #[inline]
    fn wanted(&self, g: SymId) -> Option<FileId> {
        if g.is_none() || self.defined[g.index()].load(Relaxed) != 0 {
            return None;
        }
        let m = FileId(self.first_lazy[g.index()].load(Relaxed));
        (m.is_some() && !self.live[m.index()].load(Relaxed)).then_some(m)
    }

    /// The members the next round pulls in, by member, each with the first reference in input order that pulls it
    /// (the reason kept): the non-weak undefined references and the commons of the newly linked files
    /// `frontier`, and (in round zero) the `roots`.
    fn next_round(
        &self,
        objects: &[ObjectFile],
        object_ids: &[Vec<SymId>],
        frontier: &[usize],
        roots: &mut Vec<(SymId, u32)>,
        names: &crate::intern::Interned,
    ) -> Vec<Extraction> {
        let mut next: Vec<Extraction> = frontier
            .par_iter()
            .flat_map_iter(|&f| {
                let o = &objects[f];
                object_ids[f].iter().enumerate().filter_map(move |(k, &g)| {
                    let s = &o.syms[o.first_global + k];
                    if s.st_shndx.get(LE) == E::SHN_UNDEF && s.st_bind() != E::STB_WEAK {
                        self.wanted(g).map(|m| Extraction {
                            member: m,
                            by: f as u32,
                            sym: g,
                        })
                    } else {
                        None
                    }
                })
            })
            .collect();
        next.extend(common_extractions(
            frontier, objects, object_ids, names, self,
        ));
        next.extend(roots.drain(..).filter_map(|(g, by)| {
            self.wanted(g).map(|m| Extraction {
                member: m,
                by,
                sym: g,
            })
        }));
        next.sort_unstable_by_key(|e| (e.member, e.by));
        next.dedup_by_key(|e| e.member);
        next
    }
}

/// Round zero's extra references: the command line's (`extra_ids`) and the shared objects' undefined symbols, as
/// (name, referencing file).
fn round_zero_roots(
    num_objects: usize,
    shared: &[SharedFile],
    shared_ids: &[Vec<SymId>],
    extra_ids: &[SymId],
) -> Vec<(SymId, u32)> {
    let mut roots: Vec<(SymId, u32)> = extra_ids.iter().map(|&g| (g, NONE)).collect();
    for (d, s) in shared.iter().enumerate() {
        for (k, &g) in shared_ids[d].iter().enumerate() {
            let sym = &s.syms[s.first_global + k];
            if sym.st_shndx.get(LE) == E::SHN_UNDEF && sym.st_bind() != E::STB_WEAK {
                roots.push((g, (num_objects + d) as u32));
            }
        }
    }
    roots
}

/// Reads the newly pulled members of `frontier` known only from their archive's index. Their ids are by symbol
/// index from here on; those still NONE are looked up by `fill_member_ids`.
fn read_indexed_members(
    objects: &mut [ObjectFile],
    object_ids: &mut [Vec<SymId>],
    frontier: &[usize],
) -> Result<()> {
    type Read = std::result::Result<(ObjectFile, Vec<SymId>), String>;
    let read: Vec<(usize, Read)> = frontier
        .par_iter()
        .filter(|&&f| objects[f].indexed.is_some())
        .map(|&f| {
            // Its sections too, while its headers are in cache (`parse_sections` skips it later).
            let r = objects[f].read_indexed().and_then(|mut o| {
                o.parse_sections()?;
                let ids = ids_from_index(&o, &objects[f], &object_ids[f]);
                Ok((o, ids))
            });
            (f, r)
        })
        .collect();
    let mut errors = Vec::new();
    for (f, r) in read {
        match r {
            Ok((o, ids)) => (objects[f], object_ids[f]) = (o, ids),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(Errors(errors));
    }
    Ok(())
}

/// Newly pulled members of `frontier`: ids for their references, where some file defines the name, with `--wrap`
/// applied.
fn fill_member_ids(
    objects: &[ObjectFile],
    object_ids: &mut [Vec<SymId>],
    frontier: &[usize],
    names: &crate::intern::Interned,
    wrap: &HashMap<SymId, SymId>,
) {
    let filled: Vec<(usize, Vec<SymId>)> = frontier
        .par_iter()
        .filter(|&&f| objects[f].lazy)
        .map(|&f| {
            let o = &objects[f];
            let ids = object_ids[f]
                .iter()
                .zip(&o.global_names)
                .map(|(&g, &name)| {
                    if g.is_none() {
                        names.lookup_name(name).unwrap_or(SymId::NONE)
                    } else {
                        g
                    }
                })
                .collect::<Vec<SymId>>();
            let mut ids = ids;
            if !wrap.is_empty() {
                apply_wrap(o, &mut ids, wrap);
            }
            (f, ids)
        })
        .collect();
    for (f, ids) in filled {
        object_ids[f] = ids;
    }
}

/// GNU ld's rule for common symbols: an archive member that defines a name, so far only common, as initialized
/// data (not a function, not another common) is pulled in, and its definition wins. The extractions the commons
/// of the newly linked files `frontier` ask for.
fn common_extractions(
    frontier: &[usize],
    objects: &[ObjectFile],
    object_ids: &[Vec<SymId>],
    names: &crate::intern::Interned,
    pulls: &Pulls,
) -> Vec<Extraction> {
    frontier
        .iter()
        .flat_map(|&f| {
            let o = &objects[f];
            (0..object_ids[f].len())
                .filter(move |&k| o.sym_shndx(o.first_global + k) == E::SHN_COMMON as u32)
                .map(move |k| (f, object_ids[f][k]))
        })
        .filter(|&(_, g)| g.is_some() && pulls.defined[g.index()].load(Relaxed) == COMMON_ONLY)
        .filter_map(|(f, g)| {
            let m = FileId(pulls.first_lazy[g.index()].load(Relaxed));
            if m.is_none() || pulls.live[m.index()].load(Relaxed) {
                return None;
            }
            defines_data(&objects[m.index()], names.unique[g.index()].bytes).then_some(Extraction {
                member: m,
                by: f as u32,
                sym: g,
            })
        })
        .collect()
}

/// Whether archive member `member` defines `name` as initialized data: not a common, not a function (GNU ld's
/// test before it pulls a member in place of a common symbol). A member known only from its archive's index is
/// read for this; a bad one answers no (reading it for the link reports it).
fn defines_data(member: &ObjectFile, name: &[u8]) -> bool {
    let read;
    let o = if member.indexed.is_some() {
        match member.read_indexed() {
            Ok(o) => {
                read = o;
                &read
            }
            Err(_) => return false,
        }
    } else {
        member
    };
    o.global_names.iter().enumerate().any(|(k, n)| {
        let i = o.first_global + k;
        let shndx = o.sym_shndx(i);
        n.bytes == name
            && shndx != E::SHN_UNDEF as u32
            && shndx != E::SHN_COMMON as u32
            && !matches!(o.syms[i].st_type(), E::STT_FUNC | E::STT_GNU_IFUNC)
    })
}

/// The ids of a member just read (`read`) for its defined globals, by symbol index, from its unread form
/// (`stub`): the ids its archive's index names got (`index_ids`), matched in order, as `ar` lists a member's
/// definitions in the order of its symbol table. A compare of two names read in sequence instead of a lookup in
/// the table of every name (clang-tool: 144K lookups, a cache miss or two each, 6% of the link at --threads=1).
/// What does not match, and every reference, is NONE here, left to a lookup.
fn ids_from_index(read: &ObjectFile, stub: &ObjectFile, index_ids: &[SymId]) -> Vec<SymId> {
    let index: &[Name] = stub.indexed.as_ref().map_or(&[], |(_, names)| names);
    let mut next = index.iter().zip(index_ids).peekable();
    read.global_names
        .iter()
        .enumerate()
        .map(|(k, n)| match next.peek() {
            Some(&(x, &id))
                if x.hash == n.hash
                    && x.bytes == n.bytes
                    && is_defined(read, read.first_global + k) =>
            {
                next.next();
                id
            }
            _ => SymId::NONE,
        })
        .collect()
}

/// `--warn-common`: GNU ld's warnings for each common symbol merged with another common or a definition, in input
/// order. Runs only with the option, so it is serial.
fn warn_common(
    objects: &[ObjectFile],
    live: &[bool],
    ids: &[Vec<SymId>],
    commons: &HashMap<SymId, (u64, u64)>,
    rank: &impl Fn(&ObjectFile, usize, usize) -> Option<u64>,
    names: &crate::intern::Interned,
) {
    // Per symbol with a common: the first common or definition seen (file, size; None for a definition).
    let mut first: HashMap<SymId, (usize, Option<u64>)> = HashMap::default();
    for (f, o) in objects.iter().enumerate() {
        if !live[f] {
            continue;
        }
        for (k, &g) in ids[f].iter().enumerate() {
            let i = o.first_global + k;
            if g.is_none() || !commons.contains_key(&g) {
                continue;
            }
            let Some(key) = rank(o, f, i) else { continue };
            let size = (key >> 32 == 2).then(|| o.syms[i].st_size.get(LE));
            if key >> 32 == 1 {
                continue; // weak definitions neither override nor are overridden by commons
            }
            let Some(&(pf, psize)) = first.get(&g) else {
                first.insert(g, (f, size));
                continue;
            };
            let name = demangle(names.unique[g.index()].bytes);
            let (this, prev) = (&o.name, &objects[pf].name);
            let msg = match (psize, size) {
                (None, None) => continue, // two definitions: the duplicate-symbol error's business
                (None, Some(_)) => {
                    format!("{this}: common of `{name}' overridden by definition from {prev}")
                }
                (Some(_), None) => {
                    first.insert(g, (f, None));
                    format!("{this}: definition of `{name}' overriding common from {prev}")
                }
                (Some(p), Some(c)) if p == c => {
                    format!("{this}: multiple common of `{name}' (also common in {prev})")
                }
                (Some(p), Some(c)) if p > c => {
                    format!("{this}: common of `{name}' overridden by larger common from {prev}")
                }
                (Some(_), Some(c)) => {
                    first.insert(g, (f, Some(c)));
                    format!("{this}: common of `{name}' overriding smaller common from {prev}")
                }
            };
            crate::diag::warn(&msg);
        }
    }
}

/// An archive member pulled into the link, and the first reference that pulled it: `by` is an object file index,
/// `objects.len() + d` for shared object `d`, or `NONE` for the command line (`-u`, `-e`, `--defsym`...).
#[derive(Clone, Copy, Debug)]
pub struct Extraction {
    pub member: FileId,
    pub by: u32,
    pub sym: SymId,
}
