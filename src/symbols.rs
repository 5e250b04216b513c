//! One numbering of every symbol of the link: ids `0..num_globals` are the interned globals, followed by a
//! contiguous range of local ids for each object (prefix sums over local counts). Flags, GOT/PLT slots and
//! addresses are tables indexed by these ids, so a relocation needs no map lookup.

use crate::elf::LE;
use crate::index::{FileId, OsecId, SharedId, SymId};
use crate::parse::ObjectFile;
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;

pub struct SymbolSpace {
    /// Per object: the id of its first local symbol.
    pub local_base: Vec<SymId>,
    pub total: usize,
    /// Per global id, the [`SymProps`] bits of what it resolves to: one byte read per relocation instead of the
    /// target's symbol-table entry, which lies in another file's mapping (a cache and TLB miss each time on big
    /// links; measured 7% of clang-so's link in `sym_type` alone).
    pub gprops: Vec<u8>,
    /// The globals defined in objects, by defining file.
    pub defined: DefinedByFile,
}

/// The globals defined in objects, grouped by defining file (a counting sort over the definition table), so that
/// a pass over them reads each file's symbols and sections together while they are in cache. In global id order
/// each one is a chain of misses in another file's tables, which made giving a large link's globals their
/// addresses that way slow.
pub struct DefinedByFile {
    starts: Vec<u32>,
    /// (global id, symbol index), per file in global id order.
    list: Vec<(SymId, u32)>,
}

impl DefinedByFile {
    fn new(res: &Resolved) -> DefinedByFile {
        let nfiles = res.objects.len();
        let mut starts = vec![0u32; nfiles + 1];
        for d in &res.defs {
            if let Def::Object { file, .. } = *d {
                starts[file.index() + 1] += 1;
            }
        }
        for f in 0..nfiles {
            starts[f + 1] += starts[f];
        }
        let mut list = vec![(SymId(0), 0u32); starts[nfiles] as usize];
        let mut next = starts.clone();
        for (g, d) in res.defs.iter().enumerate() {
            if let Def::Object { file, sym } = *d {
                list[next[file.index()] as usize] = (SymId::new(g), sym);
                next[file.index()] += 1;
            }
        }
        DefinedByFile { starts, list }
    }
    /// (global id, symbol index) of each global object `f` defines.
    pub fn of(&self, f: FileId) -> &[(SymId, u32)] {
        let f = f.index();
        &self.list[self.starts[f] as usize..self.starts[f + 1] as usize]
    }
}

const _: () = assert!(
    size_of::<std::sync::atomic::AtomicU64>() == size_of::<u64>()
        && align_of::<std::sync::atomic::AtomicU64>() == align_of::<u64>()
);

/// A slice seen as atomics, for writes by many threads to slots each owns alone.
pub fn as_atomic_u64(v: &mut [u64]) -> &[std::sync::atomic::AtomicU64] {
    // SAFETY: `AtomicU64` has the size and alignment of `u64` (asserted above), and the exclusive borrow
    // guarantees no other access to the words while the atomic view lives.
    unsafe { &*(v as *mut [u64] as *const [std::sync::atomic::AtomicU64]) }
}

/// [`as_atomic_u64`] for bytes.
pub fn as_atomic_u8(v: &mut [u8]) -> &[std::sync::atomic::AtomicU8] {
    // SAFETY: `AtomicU8` has the size and alignment of `u8`; the exclusive borrow as above.
    unsafe { &*(v as *mut [u8] as *const [std::sync::atomic::AtomicU8]) }
}

/// Properties of a resolved symbol that relocation processing asks about, as bits.
pub struct SymProps;

impl SymProps {
    /// The bits for a reference to local symbol `sym` of object `file` (never imported or preemptible).
    #[inline]
    pub fn of_local(res: &Resolved, file: FileId, sym: u32) -> u8 {
        let o = &res.objects[file.index()];
        let ty = o.syms[sym as usize].st_type();
        let mut b = 0;
        if ty == E::STT_GNU_IFUNC {
            b |= Self::IFUNC | Self::FUNC;
        } else if ty == E::STT_FUNC {
            b |= Self::FUNC;
        }
        if o.sym_shndx(sym as usize) == E::SHN_ABS as u32 {
            b |= Self::ABSOLUTE;
        }
        b
    }

    pub const IMPORTED: u8 = 1;
    pub const PREEMPTIBLE: u8 = 2;
    pub const IFUNC: u8 = 4;
    pub const ABSOLUTE: u8 = 8;
    pub const FUNC: u8 = 16;
    /// Defined in an input object (`Target::Object`): not imported, undefined or made by the linker.
    pub const DEFINED: u8 = 32;
    /// An executable's undefined symbol under GNU ld's rule for undefined weak symbols: its `PREEMPTIBLE` bit is
    /// provisional until the scan settles it by how it is referenced (`scan::weak`), and even then holds only for
    /// some references (`reloc::weak_rule`).
    pub const WEAK_RULE: u8 = 64;
    /// An absolute symbol a script or `--defsym` assigns (see `reloc::Props::linker_abs`).
    pub const LINKER_ABS: u8 = 128;

    /// The bits for a reference to `id` resolving to `t`.
    pub fn of(res: &Resolved, config: &crate::args::Config, id: SymId, t: Target) -> u8 {
        let ty = sym_type(res, t);
        let mut b = 0;
        match t {
            Target::Imported { .. } => b |= Self::IMPORTED,
            Target::Object { .. } => b |= Self::DEFINED,
            _ => {}
        }
        if is_preemptible(res, config, id, t) {
            b |= Self::PREEMPTIBLE;
            if matches!(t, Target::Undefined { .. }) && settled_by_scan(config) {
                b |= Self::WEAK_RULE;
            }
        }
        if matches!(t, Target::Object { .. }) && ty == E::STT_GNU_IFUNC {
            b |= Self::IFUNC;
        }
        if is_absolute(res, t) {
            b |= Self::ABSOLUTE;
        }
        if ty == E::STT_FUNC || ty == E::STT_GNU_IFUNC {
            b |= Self::FUNC;
        }
        b
    }
}

impl SymbolSpace {
    /// The id of local symbol `i` (a symbol-table index below `first_global`) of object `f`.
    #[inline(always)]
    pub fn local_id(&self, f: FileId, i: usize) -> SymId {
        SymId(self.local_base[f.index()].0 + i as u32)
    }

    pub fn new(res: &Resolved, config: &crate::args::Config) -> SymbolSpace {
        let mut next = res.num_globals() as u32;
        // Archive members left out of the link get no ids for their locals (nothing refers to them): clang-tool's
        // unused members' locals otherwise took address, flag and GOT-index slots and an address computation each.
        let local_base = res
            .objects
            .iter()
            .zip(&res.object_live)
            .map(|(o, &live)| {
                let b = SymId(next);
                if live {
                    next += o.first_global as u32;
                }
                b
            })
            .collect();
        let defined = DefinedByFile::new(res);
        // The properties of object definitions per defining file (see `DefinedByFile`), the others by id.
        let mut gprops = vec![0u8; res.num_globals()];
        {
            let slots = as_atomic_u8(&mut gprops);
            (0..res.num_globals()).into_par_iter().for_each(|g| {
                let t = match res.defs[g] {
                    Def::Object { .. } => return,
                    Def::Shared { file, sym } => Target::Imported { file, sym },
                    Def::Linker => Target::Linker,
                    // A weak or strong undefined reference: the bits do not depend on which.
                    Def::Undefined => Target::Undefined { weak: false },
                };
                slots[g].store(SymProps::of(res, config, SymId::new(g), t), Relaxed);
            });
            res.runs.for_each(|f| {
                let file = f;
                for &(g, sym) in defined.of(file) {
                    let t = Target::Object { file, sym };
                    slots[g.index()].store(SymProps::of(res, config, g, t), Relaxed);
                }
            });
        }
        if !config.defsyms.is_empty() || !config.provides.is_empty() || config.sections.is_some() {
            for g in absolute_script_symbols(res, config) {
                gprops[g.index()] |= SymProps::LINKER_ABS;
            }
        }
        SymbolSpace {
            local_base,
            total: next as usize,
            gprops,
            defined,
        }
    }
}

/// The symbols `--defsym` and scripts define that will be absolute (GNU ld's rules for the section of an
/// expression, `expr::Base`), so that position-independent output does not relocate their addresses. Told before
/// layout, as GNU ld tells it from an early evaluation: values are unknown here, so a condition that is not
/// decided by constants and `DEFINED` takes its first branch.
fn absolute_script_symbols(res: &Resolved, config: &crate::args::Config) -> Vec<SymId> {
    use crate::expr::{Base, Expr};
    let mut env = StaticEnv {
        res,
        bases: std::collections::HashMap::new(),
        inside: false,
    };
    let assign = |env: &mut StaticEnv, name: &str, e: &Expr, inside: bool| {
        env.inside = inside;
        let base = match e.eval_value(&*env) {
            Ok(v) if v.value.base == Base::Abs && !v.from_dot => Base::Abs,
            Ok(v) if v.value.base == Base::Number && !inside => Base::Abs,
            _ => Base::Section(OsecId(0)),
        };
        env.bases.insert(name.to_string(), base);
    };
    for (name, text) in config.defsyms.iter().chain(&config.provides) {
        if let Ok(e) = crate::expr::parse(text) {
            assign(&mut env, name, &e, false);
        }
    }
    if let Some(sc) = config.sections.as_deref() {
        use crate::script::ast::{OutputCommand, SectionsCommand};
        for c in &sc.commands {
            match c {
                SectionsCommand::Assign(a) if a.target != "." && a.op == "=" => {
                    assign(&mut env, &a.target, &a.expr, false)
                }
                SectionsCommand::Output(o) => {
                    for c in &o.commands {
                        if let OutputCommand::Assign(a) = c
                            && a.target != "."
                            && a.op == "="
                        {
                            assign(&mut env, &a.target, &a.expr, true);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (env.bases.iter())
        .filter(|(_, b)| **b == Base::Abs)
        .filter_map(|(n, _)| res.names.lookup(n.as_bytes()))
        .filter(|g| res.defs[g.index()] == Def::Linker)
        .collect()
}

/// What an expression's base depends on before layout: the inputs' symbols (absolute or in some section), the
/// bases of the symbols assigned before it, and whether it is inside an output section. Every section is
/// number 0 at address 0, and the location counter 0.
struct StaticEnv<'a> {
    res: &'a Resolved,
    bases: std::collections::HashMap<String, crate::expr::Base>,
    inside: bool,
}

impl crate::expr::Env for StaticEnv<'_> {
    fn symbol(&self, name: &str) -> Option<u64> {
        self.symbol_value(name).map(|v| v.v)
    }
    fn symbol_value(&self, name: &str) -> Option<crate::expr::Value> {
        use crate::expr::{Base, Value};
        let rel = Value {
            v: 0,
            base: Base::Section(OsecId(0)),
        };
        if let Some(&base) = self.bases.get(name) {
            return Some(Value { v: 0, base });
        }
        let g = self.res.names.lookup(name.as_bytes())?;
        match self.res.defs[g.index()] {
            Def::Object { file, sym } => {
                Some(match is_absolute(self.res, Target::Object { file, sym }) {
                    true => Value::abs(0),
                    false => rel,
                })
            }
            Def::Shared { .. } | Def::Linker => Some(rel),
            Def::Undefined => None,
        }
    }
    fn defined(&self, name: &str) -> bool {
        self.bases.contains_key(name)
            || (self.res.names.lookup(name.as_bytes()))
                .is_some_and(|g| !matches!(self.res.defs[g.index()], Def::Undefined))
    }
    fn section(&self, _: &str) -> Option<(u64, u64, u64, u64)> {
        Some((0, 0, 0, 1))
    }
    fn section_id(&self, _: &str) -> Option<OsecId> {
        Some(OsecId(0))
    }
    fn inside(&self) -> Option<OsecId> {
        self.inside.then_some(OsecId(0))
    }
    fn dot(&self) -> Option<u64> {
        Some(0)
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

/// What a symbol reference resolves to, as the relocation passes need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Defined in object `file` as its symbol `sym` (local or the winning global).
    Object {
        file: FileId,
        sym: u32,
    },
    /// Defined by a shared object: every use goes through the dynamic linker.
    Imported {
        file: SharedId,
        sym: u32,
    },
    Linker,
    /// Undefined; weak references resolve to 0, strong ones are errors.
    Undefined {
        weak: bool,
    },
}

#[derive(Clone, Copy, Debug)]
pub struct SymRef {
    pub id: SymId,
    pub target: Target,
}

/// Whether references to the symbol must go through the dynamic linker because another module's definition may
/// win: imports; in a shared object also undefined symbols and default-visibility definitions (GNU ld's
/// preemption rules, unless `-Bsymbolic` or, for functions, `-Bsymbolic-functions`).
pub fn is_preemptible(res: &Resolved, config: &crate::args::Config, id: SymId, t: Target) -> bool {
    match t {
        Target::Imported { .. } => true,
        // A dynamic executable may leave an undefined symbol of default visibility to the dynamic linker (a library
        // loaded at run time may define it): one that --unresolved-symbols or --warn-unresolved-symbols lets
        // through, and a weak one unless -z nodynamic-undefined-weak, provisionally: the scan settles it by how
        // it is referenced (`scan::weak`, GNU ld's rule). A strong one is otherwise an error before this is
        // asked, so the answer need not tell weak from strong (the property bits are computed once per symbol,
        // `SymbolSpace::new`).
        Target::Undefined { .. }
            if config.kind != crate::args::OutputKind::Shared
                && !config.static_link
                && (config.kind == crate::args::OutputKind::Pie
                    || res.shared_needed.iter().any(|&n| n))
                && !res.hidden.get(id.index()).is_some_and(|&h| h)
                && (config.dynamic_undefined_weak != Some(false)
                    || !config.report_undefined
                    || config.warn_undefined) =>
        {
            true
        }
        _ if config.kind != crate::args::OutputKind::Shared => false,
        // A hidden undefined symbol (weak, or it would be an error) is 0 in a shared object too, never exported.
        Target::Undefined { .. } => !res.hidden.get(id.index()).is_some_and(|&h| h),
        Target::Linker => false,
        Target::Object { file, sym } => {
            if id.index() >= res.num_globals() || res.hidden[id.index()] {
                return false;
            }
            // --export-dynamic-symbol keeps a symbol preemptible whatever -Bsymbolic or a dynamic list says.
            let by_option = res.exported_by_option.get(id.index()) == Some(&true);
            if config.bsymbolic && !by_option {
                return false;
            }
            // With a dynamic list, only the listed definitions stay preemptible.
            if !res.in_dynamic_list.is_empty() && !res.in_dynamic_list[id.index()] && !by_option {
                return false;
            }
            let st = &res.objects[file.index()].syms[sym as usize];
            st.st_visibility() == E::STV_DEFAULT
                && st.st_bind() != E::STB_LOCAL
                && (by_option
                    || !(config.bsymbolic_functions
                        && matches!(st.st_type(), E::STT_FUNC | E::STT_GNU_IFUNC)))
        }
    }
}

/// Whether the scan settles an executable's preemptible undefined symbols (`SymProps::WEAK_RULE`): yes, unless
/// --unresolved-symbols or --warn-unresolved-symbols leave every one to the dynamic linker.
fn settled_by_scan(config: &crate::args::Config) -> bool {
    config.kind != crate::args::OutputKind::Shared
        && config.report_undefined
        && !config.warn_undefined
}

/// Resolves symbol `i` of object `f`. Always inlined into the relocation loops: returned through memory, the
/// `Option<SymRef>` was stored and reloaded in pieces, and the failed store-to-load forwarding that caused was
/// about 40% of the loops' time (perf annotate, clang-so).
#[inline(always)]
pub fn lookup(res: &Resolved, space: &SymbolSpace, f: FileId, i: usize) -> Option<SymRef> {
    let o = &res.objects[f.index()];
    if i < o.first_global {
        // Archive members left out of the link have no ids for their locals (`SymbolSpace::new`).
        debug_assert!(
            res.object_live[f.index()],
            "local of an unlinked member looked up"
        );
        return Some(SymRef {
            id: space.local_id(f, i),
            target: Target::Object {
                file: f,
                sym: i as u32,
            },
        });
    }
    let id = *res.object_ids[f.index()].get(i - o.first_global)?;
    let target = match res.defs[id.index()] {
        Def::Object { file, sym } => Target::Object { file, sym },
        Def::Shared { file, sym } => Target::Imported { file, sym },
        Def::Linker => Target::Linker,
        Def::Undefined => Target::Undefined {
            weak: o.syms[i].st_bind() == E::STB_WEAK,
        },
    };
    Some(SymRef { id, target })
}

pub fn sym_type(res: &Resolved, t: Target) -> u8 {
    match t {
        Target::Object { file, sym } => res.objects[file.index()].syms[sym as usize].st_type(),
        Target::Imported { file, sym } => res.shared[file.index()].syms[sym as usize].st_type(),
        _ => E::STT_NOTYPE,
    }
}

pub fn is_ifunc(res: &Resolved, t: Target) -> bool {
    matches!(t, Target::Object { .. }) && sym_type(res, t) == E::STT_GNU_IFUNC
}

pub fn is_absolute(res: &Resolved, t: Target) -> bool {
    match t {
        Target::Object { file, sym } => {
            res.objects[file.index()].sym_shndx(sym as usize) == E::SHN_ABS as u32
        }
        Target::Undefined { .. } => true,
        _ => false,
    }
}

pub fn sym_size(res: &Resolved, t: Target) -> u64 {
    match t {
        Target::Object { file, sym } => {
            let o: &ObjectFile = &res.objects[file.index()];
            if o.sym_shndx(sym as usize) == E::SHN_COMMON as u32 {
                let g = res.object_ids[file.index()]
                    .get(sym as usize - o.first_global.min(sym as usize));
                return g.and_then(|g| res.common.get(g)).map_or(0, |c| c.0);
            }
            o.syms[sym as usize].st_size.get(LE)
        }
        Target::Imported { file, sym } => {
            res.shared[file.index()].syms[sym as usize].st_size.get(LE)
        }
        _ => 0,
    }
}
