//! Layout pass: the address of every symbol, linker-defined ones included, once the output sections have theirs;
//! and the address lookups of input sections, merged strings and symbols that the writers use.

use super::eh_frame::eh_block_size;
use super::{Layout, NO_ADDR, NONE, OutputSection, Part, Synth};
use crate::args::Config;
use crate::diag::{Errors, Result};
use crate::elf::LE;
use crate::index::{FileId, OsecId, SecIdx, SymId};
use crate::names::is_c_identifier;
use crate::resolve::{Def, Resolved};
use crate::symbols::{SymbolSpace, Target};
use object::elf as E;
use rustc_hash::FxHashMap as HashMap;

/// Addresses of every symbol, then the linker-defined ones.
pub fn assign_addresses(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    lay: &mut Layout,
) -> Result<()> {
    lay.merge_addr = merge_addresses(lay);
    let mut sec_addr = std::mem::take(&mut lay.sec_addr);
    let mut addrs = object_addresses(res, space, lay, &mut sec_addr);
    lay.sec_addr = sec_addr;
    common_addresses(lay, &mut addrs);
    imported_addresses(res, space, lay, &mut addrs);
    let mut sections = HashMap::default();
    let mut linker = linker_defined_addresses(res, lay, &mut addrs, &mut sections);
    let headers = crate::elf::headers_size(lay.segments.len());
    let dl = DefsymLayout { lay, headers };
    // The script's symbols first: an assignment outside SECTIONS (a --defsym) may name one (the kernel's
    // `init_per_cpu__gdt_page = ABSOLUTE(gdt_page) + __per_cpu_load`); then those SECTIONS assignments that
    // name symbols again, with the --defsyms' values.
    // The --defsyms given after the SECTIONS script keep their values over its assignments, which override
    // those given before it (GNU ld evaluates them in command-line order).
    let script = !lay.script.symbols.is_empty() || !lay.script.deferred.is_empty();
    let mut out = (&mut addrs, &mut linker, &mut sections);
    if script {
        define_script_symbols(res, &dl, config, &[], &mut out)?;
    }
    define_defsyms(config, res, &dl, &mut out)?;
    let after_defsyms = !config.defsyms.is_empty() || !config.provides.is_empty();
    if !script || after_defsyms {
        let late: Vec<&str> = (config.defsyms.iter().skip(config.defsyms_after))
            .map(|d| d.0.as_str())
            .collect();
        define_script_symbols(res, &dl, config, &late, &mut out)?;
    }
    let values = deferred_data_values(config, res, &dl, (&addrs, &sections))?;
    for (k, v) in values {
        lay.script.data[k].3 = v;
    }
    lay.linker_sections = sections;
    lay.entry = entry_address(config, res, lay, &addrs);
    lay.linker_syms = linker;
    lay.addrs = addrs;
    Ok(())
}

/// Each merge group's address: its part's place in its output section (`NO_ADDR` where no part holds it).
fn merge_addresses(lay: &Layout) -> Vec<u64> {
    lay.merges
        .iter()
        .enumerate()
        .map(|(m, g)| {
            let o = &lay.osecs[g.osec.index()];
            o.parts
                .iter()
                .position(|p| matches!(p, Part::Merged(x) if *x as usize == m))
                .map_or(NO_ADDR, |part| o.addr + o.part_offsets[part])
        })
        .collect()
}

/// Every symbol's address table (one entry per symbol, locals included), filled per file: its sections' addresses
/// (`sec_addr`, offsets in the output sections' input runs until now), then its locals' and the globals it defines
/// (`DefinedByFile`), while its symbols and section table are in cache.
fn object_addresses(
    res: &Resolved,
    space: &SymbolSpace,
    lay: &Layout,
    sec_addr: &mut [Vec<u64>],
) -> Vec<u64> {
    let nfiles = res.objects.len();
    let mut addrs: Vec<u64> = crate::par::per_symbol(space.total, || 0);
    let (globals, locals) = addrs.split_at_mut(res.num_globals());
    // Written at random, each slot by the one file that defines it.
    let globals = crate::symbols::as_atomic_u64(globals);
    let mut chunks: Vec<&mut [u64]> = Vec::with_capacity(nfiles);
    let mut rest = locals;
    for (o, &live) in res.objects.iter().zip(&res.object_live) {
        let (a, b) = rest.split_at_mut(if live { o.first_global } else { 0 });
        chunks.push(a);
        rest = b;
    }
    let mut pairs: Vec<(&mut Vec<u64>, &mut [u64])> = sec_addr.iter_mut().zip(chunks).collect();
    res.runs.for_each_mut(&mut pairs, |f, (sec_addr, locals)| {
        // Offsets in the output sections' input runs become addresses, in place.
        for (a, &osec) in sec_addr.iter_mut().zip(&lay.place_osec[f.index()]) {
            *a = if osec.is_none() {
                NO_ADDR
            } else {
                let o = &lay.osecs[osec.index()];
                o.addr + o.part_offsets.first().copied().unwrap_or(0) + *a
            };
        }
        for (i, slot) in locals.iter_mut().enumerate() {
            *slot = object_sym_addr_in(res, lay, sec_addr, f, i);
        }
        for &(g, sym) in space.defined.of(f) {
            let a = object_sym_addr_in(res, lay, sec_addr, f, sym as usize);
            globals[g.index()].store(a, std::sync::atomic::Ordering::Relaxed);
        }
    });
    addrs
}

/// Commons: their places in the output section that holds them.
fn common_addresses(lay: &Layout, addrs: &mut [u64]) {
    if let Some(bss) = lay
        .osecs
        .iter()
        .find(|o| o.parts.iter().any(|p| matches!(p, Part::Commons)))
    {
        let base = bss.addr + bss.part_offset(&Part::Commons);
        for &(g, off) in &lay.commons {
            addrs[g.index()] = base + off;
        }
    }
}

/// Imported symbols: canonical PLT entries and copies give them an address in the output.
fn imported_addresses(res: &Resolved, space: &SymbolSpace, lay: &Layout, addrs: &mut [u64]) {
    let copy_bases = [Part::CopyRel, Part::CopyRelRo].map(|p| lay.part_addr(&p));
    let plt = lay.synth_addr(Synth::Plt);
    for &id in &lay.aux_ids {
        let x = lay.aux[lay.aux_index[id.index()] as usize];
        if x.plt != NONE
            && x.canonical
            && matches!(target_of(res, space, id), Target::Imported { .. })
        {
            addrs[id.index()] = plt + 16 + 16 * x.plt as u64;
        }
        // `copied` first: looking up the target of each of a shared object's GOT and PLT users only to find that
        // none is copied cost clang-so 2 ms on one thread.
        if x.copied
            && let (Some(base), Target::Imported { .. }) =
                (copy_bases[x.copy_relro as usize], target_of(res, space, id))
        {
            addrs[id.index()] = base + x.copy_off;
        }
    }
}

/// The image's bounds that linker-defined symbols name: its first loaded address and the ends of its code, data
/// and everything, and where `.bss` starts.
struct Bounds {
    base: u64,
    end: u64,
    etext: u64,
    edata: u64,
    bss_start: u64,
}

impl Bounds {
    fn of(lay: &Layout) -> Bounds {
        let base = lay
            .segments
            .iter()
            .find(|s| s.p_type == E::PT_LOAD)
            .map_or(0, |s| s.vaddr);
        let end_of = |pred: &dyn Fn(&OutputSection) -> bool| {
            lay.osecs
                .iter()
                .filter(|o| {
                    o.shndx != 0 && o.is_alloc() && pred(o) && !(o.is_tls() && o.is_nobits())
                })
                .map(|o| o.addr + o.size)
                .max()
        };
        let edata = end_of(&|o| !o.is_nobits()).unwrap_or(base);
        Bounds {
            base,
            // GNU ld's script puts `_end` on a word boundary (after `.bss`, which it pads to one).
            end: (end_of(&|_| true).unwrap_or(base))
                .checked_next_multiple_of(crate::elf::word_align())
                .unwrap_or(u64::MAX),
            etext: end_of(&|o| o.flags & E::SHF_EXECINSTR as u64 != 0).unwrap_or(base),
            edata,
            bss_start: first_section_addr(lay, &|o| o.is_nobits() && !o.is_tls()).unwrap_or(edata),
        }
    }
}

/// The address of the first kept output section that `pred` accepts.
fn first_section_addr(lay: &Layout, pred: &dyn Fn(&OutputSection) -> bool) -> Option<u64> {
    lay.osecs
        .iter()
        .filter(|o| o.shndx != 0 && pred(o))
        .map(|o| o.addr)
        .next()
}

/// The start and end of the kept output section `name`.
fn section_range(lay: &Layout, name: &[u8]) -> Option<(u64, u64)> {
    lay.osecs
        .iter()
        .find(|o| o.shndx != 0 && o.name == name)
        .map(|o| (o.addr, o.addr + o.size))
}

/// Linker-defined symbols that no input defines get their addresses, and the sections of those whose address
/// alone does not tell it (`sections`); returns them by id.
fn linker_defined_addresses(
    res: &Resolved,
    lay: &Layout,
    addrs: &mut [u64],
    sections: &mut HashMap<SymId, OsecId>,
) -> HashMap<SymId, u64> {
    let mut linker = HashMap::default();
    let bounds = Bounds::of(lay);
    for g in linker_symbol_candidates(res, lay) {
        if !matches!(res.defs[g.index()], Def::Undefined | Def::Linker) {
            continue;
        }
        // Left undefined where the headers are in no load (`-N`): a weak reference reads 0, as with GNU ld.
        if res.defs[g.index()] == Def::Undefined && res.name(g) == b"__ehdr_start" {
            continue;
        }
        if let Some(v) = linker_symbol_value(lay, &bounds, res.name(g)) {
            linker.insert(g, v);
            addrs[g.index()] = v;
            if let Some(s) = linker_symbol_section(lay, res.name(g), v) {
                sections.insert(g, s);
            }
        }
    }
    linker
}

/// The output section of linker-defined symbol `name` (at `v`) where the last section holding the address is not
/// GNU ld's: an array's bounds are in their array's section (the end too, where the next section starts), the
/// IRELATIVE bounds in the section holding `.rela.iplt`, `__ehdr_start` and `__executable_start` in the first
/// section after the headers, the end of the text or data (`_etext`, `_edata`) in the section it ends, `_end` in
/// the last section,
/// `_TLS_MODULE_BASE_` in the first TLS section, `__stop_SEC` in `SEC`.
fn linker_symbol_section(lay: &Layout, name: &[u8], v: u64) -> Option<OsecId> {
    let kept = || {
        (lay.osecs.iter().enumerate())
            .filter(|(_, o)| o.shndx != 0 && o.is_alloc())
            .map(|(i, o)| (OsecId::new(i), o))
    };
    let named = |n: &[u8]| kept().find(|(_, o)| o.name == n).map(|(i, _)| i);
    match name {
        b"__init_array_start" | b"__init_array_end" => named(b".init_array"),
        b"__fini_array_start" | b"__fini_array_end" => named(b".fini_array"),
        b"__preinit_array_start" | b"__preinit_array_end" => {
            named(b".preinit_array").or_else(|| {
                // The section before `.init_array`, where the empty array would be.
                let init = named(b".init_array")?;
                kept().map(|(i, _)| i).take_while(|&i| i < init).last()
            })
        }
        b"__rela_iplt_start" | b"__rela_iplt_end" if lay.is_dynamic => {
            lay.synth.get(Synth::RelaPlt)
        }
        b"__rela_iplt_start" | b"__rela_iplt_end" => lay.synth.get(Synth::RelaIplt),
        b"__ehdr_start" | b"__executable_start" => kept()
            .filter(|(_, o)| o.addr >= v && !(o.is_tls() && o.is_nobits()))
            .min_by_key(|(_, o)| o.addr)
            .map(|(i, _)| i),
        b"_etext" | b"etext" | b"__etext" | b"_edata" | b"edata" => kept()
            .filter(|(_, o)| o.addr <= v && v <= o.addr + o.size && !(o.is_tls() && o.is_nobits()))
            .min_by_key(|(_, o)| o.addr)
            .map(|(i, _)| i),
        b"_TLS_MODULE_BASE_" => kept().find(|(_, o)| o.is_tls()).map(|(i, _)| i),
        // On the word after the image, which no section may hold: the last section's, as GNU ld's `_end = .`.
        b"_end" | b"end" => kept()
            .filter(|(_, o)| o.addr <= v && !(o.is_tls() && o.is_nobits()))
            .max_by_key(|(_, o)| o.addr)
            .map(|(i, _)| i),
        _ => {
            let sec = (name.strip_prefix(b"__start_")).or_else(|| name.strip_prefix(b"__stop_"))?;
            named(sec)
        }
    }
}

/// The globals that may be linker-defined, sorted. Only these names can be defined here
/// (`resolve::LINKER_DEFINED`, and `__start_`/`__stop_` for each output section named like a C identifier), so each
/// is looked up rather than every global walked: clang-tool's million globals, most of them undefined names of
/// unlinked archive members, took 3.4 ms on one thread.
fn linker_symbol_candidates(res: &Resolved, lay: &Layout) -> Vec<SymId> {
    let mut candidates: Vec<SymId> = crate::resolve::LINKER_DEFINED
        .iter()
        .filter_map(|n| res.names.lookup(n))
        .collect();
    for o in lay
        .osecs
        .iter()
        .filter(|o| o.shndx != 0 && is_c_identifier(&o.name))
    {
        for prefix in [&b"__start_"[..], b"__stop_"] {
            candidates.extend(res.names.lookup(&[prefix, &o.name[..]].concat()));
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    candidates
}

/// The value of linker-defined symbol `name` in this layout, if it names something the output has.
fn linker_symbol_value(lay: &Layout, bounds: &Bounds, name: &[u8]) -> Option<u64> {
    let range_sym = |prefix: &[u8], sec: &[u8], end: bool| -> Option<u64> {
        if name != prefix {
            return None;
        }
        Some(section_range(lay, sec).map_or(0, |r| if end { r.1 } else { r.0 }))
    };
    match name {
        b"_GLOBAL_OFFSET_TABLE_" => Some(lay.synth_addr(Synth::GotPlt)),
        b"_DYNAMIC" if lay.is_dynamic => Some(lay.synth_addr(Synth::Dynamic)),
        b"__ehdr_start" | b"__executable_start" => Some(bounds.base),
        b"_TLS_MODULE_BASE_" => Some(lay.tls_start),
        b"_end" | b"end" => Some(bounds.end),
        b"_etext" | b"etext" | b"__etext" => Some(bounds.etext),
        b"_edata" | b"edata" => Some(bounds.edata),
        b"__bss_start" => Some(bounds.bss_start),
        b"__GNU_EH_FRAME_HDR" if lay.synth_sec(Synth::EhFrameHdr).is_some() => {
            Some(lay.synth_addr(Synth::EhFrameHdr))
        }
        b"__rela_iplt_start" | b"__rela_iplt_end" => {
            // A dynamic executable's are both at the end of `.rela.plt`, as in GNU ld's script.
            let rela_plt = || {
                lay.synth_part(Synth::RelaPlt)
                    .map(|o| (o.addr + o.size, o.addr + o.size))
            };
            let r = (lay.synth_part(Synth::RelaIplt).filter(|_| !lay.is_dynamic))
                .map(|o| (o.addr, o.addr + o.size))
                .or_else(|| rela_plt().filter(|_| lay.is_dynamic))
                .unwrap_or((0, 0));
            Some(if name == b"__rela_iplt_start" {
                r.0
            } else {
                r.1
            })
        }
        _ => range_sym(b"__init_array_start", b".init_array", false)
            .or_else(|| range_sym(b"__init_array_end", b".init_array", true))
            .or_else(|| range_sym(b"__fini_array_start", b".fini_array", false))
            .or_else(|| range_sym(b"__fini_array_end", b".fini_array", true))
            .or_else(|| range_sym(b"__preinit_array_start", b".preinit_array", false))
            .or_else(|| range_sym(b"__preinit_array_end", b".preinit_array", true))
            .map(|v| match name {
                // Without a `.preinit_array`, where it would be: before `.init_array` (GNU ld's symbols are
                // assigned there all the same).
                b"__preinit_array_start" | b"__preinit_array_end"
                    if section_range(lay, b".preinit_array").is_none() =>
                {
                    section_range(lay, b".init_array").map_or(v, |r| r.0)
                }
                _ => v,
            })
            .or_else(|| {
                let (sec, is_end) = if let Some(s) = name.strip_prefix(b"__start_") {
                    (s, false)
                } else if let Some(s) = name.strip_prefix(b"__stop_") {
                    (s, true)
                } else {
                    return None;
                };
                if !is_c_identifier(sec) {
                    return None;
                }
                section_range(lay, sec).map(|r| if is_end { r.1 } else { r.0 })
            }),
    }
}

/// The entry point: the entry symbol's address where an input defines it, else the name read as a hexadecimal
/// address, else the start of `.text`.
fn entry_address(config: &Config, res: &Resolved, lay: &Layout, addrs: &[u64]) -> u64 {
    // `_start` is the entry GNU ld's default scripts name; its own default, which a script replacing them
    // leaves in force, is `start`.
    let own_script = (config.sections.as_deref()).is_some_and(|sc| !sc.builtin_base);
    let default = if own_script { "start" } else { "_start" };
    let entry_name = config.entry.as_deref().unwrap_or(default);
    match res.names.lookup(entry_name.as_bytes()) {
        Some(g) if !matches!(res.defs[g.index()], Def::Undefined | Def::Shared { .. }) => {
            addrs[g.index()]
        }
        _ => entry_number(entry_name)
            .unwrap_or_else(|| first_section_addr(lay, &|o| o.name == b".text").unwrap_or(0)),
    }
}

/// An entry no symbol defines, read as GNU ld reads it as a number (C's base prefixes: `0x` hex, a leading `0`
/// octal, else decimal).
fn entry_number(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1
        && let Some(o) = s.strip_prefix('0')
    {
        u64::from_str_radix(o, 8).ok()
    } else {
        s.parse().ok()
    }
}

/// `--defsym`s, each once every symbol its expression names has its value: an expression may name a symbol that a
/// later `--defsym` defines (`--defsym=a=b --defsym=b=main`). The expressions are GNU ld's (`expr`), with the
/// output sections for `ADDR`, `SIZEOF` and the like. A symbol no input or `--defsym` defines, or a cycle, is an
/// error, as in GNU ld.
fn define_defsyms(
    config: &Config,
    res: &Resolved,
    lay: &DefsymLayout,
    (addrs, linker, sections): &mut Defined,
) -> Result<()> {
    // The last --defsym of a symbol is the one that counts.
    // (symbol, expression's text, expression, the symbols it names, its place in `defsyms`).
    let mut pending: Vec<(&str, &str, crate::expr::Expr, Vec<String>, usize)> = Vec::new();
    // PROVIDEs that took effect: resolve made the symbol the linker's because nothing defined it.
    let provided = config.provides.iter().filter(|(sym, _)| {
        res.names
            .lookup(sym.as_bytes())
            .is_some_and(|g| res.defs[g.index()] == crate::resolve::Def::Linker)
    });
    for (k, (sym, text)) in config.defsyms.iter().chain(provided).enumerate() {
        let e = crate::expr::parse(text)
            .map_err(|e| Errors::one(format!("--defsym: {sym}={text}: {e}")))?;
        let mut names = Vec::new();
        e.symbols(&mut names);
        pending.retain(|p| p.0 != sym.as_str());
        pending.push((sym.as_str(), text.as_str(), e, names, k));
    }
    while !pending.is_empty() {
        let before = pending.len();
        let waiting: Vec<&str> = pending.iter().map(|p| p.0).collect();
        let mut error = None;
        pending.retain(|(sym, text, e, names, k)| {
            let waits = names
                .iter()
                .any(|n| n != sym && waiting.contains(&n.as_str()));
            if waits || error.is_some() {
                return true;
            }
            let env = DefsymEnv {
                config,
                res,
                lay,
                addrs,
                sections,
                dot: None,
                inside: None,
                before: Some(*k),
            };
            match (e.eval_value(&env), res.names.lookup(sym.as_bytes())) {
                (Ok(v), Some(g)) => {
                    // Outside the sections: its own section, or absolute; a value the location counter made
                    // (`ORIGIN`), after a script's commands, belongs where GNU ld's `section_for_dot` puts it.
                    let dot_section = match *k >= config.defsyms_after {
                        true => lay.lay.script.end_dot_section.unwrap_or(OsecId::NONE),
                        false => OsecId::NONE,
                    };
                    let (v, sec) = env.settle(v, dot_section);
                    addrs[g.index()] = v;
                    linker.insert(g, v);
                    sections.insert(g, sec);
                }
                (Ok(_), None) => {}
                // A script's assignment is reported at its place.
                (Err(e), _) => {
                    error = Some(match config.defsym_places.get(*k).cloned().flatten() {
                        Some(at) => format!("{at}: {e}"),
                        None => {
                            format!("--defsym: cannot evaluate expression '{text}' for {sym}: {e}")
                        }
                    })
                }
            }
            false
        });
        if let Some(e) = error {
            return Err(Errors::one(e));
        }
        if pending.len() == before {
            let cycle: Vec<String> = pending.iter().map(|p| format!("{}={}", p.0, p.1)).collect();
            return Err(Errors::one(format!(
                "--defsym: the expressions refer to each other: {}",
                cycle.join(", ")
            )));
        }
    }
    Ok(())
}

/// The symbols a script's `SECTIONS` assigns (those the link defines: a `PROVIDE`d one only where resolve made it
/// the linker's), over the linker's own values of the same names (`_end`, `__bss_start`); then the assignments
/// that name symbols of the inputs, with the location counter they saw.
fn define_script_symbols(
    res: &Resolved,
    dl: &DefsymLayout,
    config: &Config,
    late: &[&str],
    (addrs, linker, sections): &mut Defined,
) -> Result<()> {
    // Not the symbols `late` names (`--defsym`s given after the script, which win).
    let set = |name: &str, v: u64, sec: OsecId, out: &mut Defined| {
        if late.contains(&name) {
            return;
        }
        if let Some(g) = res.names.lookup(name.as_bytes())
            && res.defs[g.index()] == Def::Linker
        {
            out.0[g.index()] = v;
            out.1.insert(g, v);
            out.2.insert(g, sec);
        }
    };
    let mut out = (&mut **addrs, &mut **linker, &mut **sections);
    for (name, v, sec) in &dl.lay.script.symbols {
        set(name, *v, *sec, &mut out);
    }
    for d in &dl.lay.script.deferred {
        // A PROVIDE no input refers to defines nothing, and GNU ld does not evaluate it (the kernel's setup.ld
        // `PROVIDE(pecompat_fsize = setup_size - pecompat_fstart)` where nothing defines pecompat_fstart).
        if d.assert.is_none()
            && res
                .names
                .lookup(d.name.as_bytes())
                .is_none_or(|g| res.defs[g.index()] != Def::Linker)
        {
            continue;
        }
        let env = DefsymEnv {
            config,
            res,
            lay: dl,
            addrs: out.0,
            sections: out.2,
            dot: Some(d.dot),
            inside: d.inside.get(),
            before: None,
        };
        if let Some(msg) = &d.assert {
            match d.expr.eval(&env) {
                Ok(0) => return Err(Errors::one(format!("{}{msg}", d.at))),
                Ok(_) => continue,
                Err(e) => return Err(Errors::one(format!("{}{e}", d.at))),
            }
        }
        let v = d
            .expr
            .eval_value(&env)
            .map_err(|e| Errors::one(format!("{}{e}", d.at)))?;
        let (v, sec) = env.settle(v, d.dot_section);
        set(&d.name, v, sec, &mut out);
    }
    Ok(())
}

/// The values of the script's data commands that name symbols without a value during the walk over its commands,
/// now that every symbol has one: (index in the data, value).
fn deferred_data_values(
    config: &Config,
    res: &Resolved,
    dl: &DefsymLayout,
    (addrs, sections): (&[u64], &HashMap<SymId, OsecId>),
) -> Result<Vec<(usize, u64)>> {
    let deferred = &dl.lay.script.deferred_data;
    deferred
        .iter()
        .map(|(k, d)| {
            // A data command's value is a plain number wherever it is (not relative to its section).
            let env = DefsymEnv {
                config,
                res,
                lay: dl,
                addrs,
                sections,
                dot: Some(d.dot),
                inside: None,
                before: None,
            };
            let v = d
                .expr
                .eval(&env)
                .map_err(|e| Errors::one(format!("{}{e}", d.at)))?;
            Ok((*k, v))
        })
        .collect()
}
/// Where the linker-defined symbols' values go: addresses, the linker's symbols, and their output sections.
type Defined<'a> = (
    &'a mut Vec<u64>,
    &'a mut HashMap<SymId, u64>,
    &'a mut HashMap<SymId, OsecId>,
);

/// What a `--defsym` expression may ask of the layout: the output sections by name (address, size,
/// alignment), the sections of symbols, and the size of the headers.
pub struct DefsymLayout<'a> {
    pub lay: &'a Layout,
    pub headers: u64,
}

struct DefsymEnv<'a> {
    config: &'a Config,
    res: &'a Resolved,
    lay: &'a DefsymLayout<'a>,
    addrs: &'a [u64],
    /// The output sections of the linker-defined symbols given values so far (`NONE`: absolute).
    sections: &'a HashMap<SymId, OsecId>,
    /// A script assignment's location counter.
    dot: Option<u64>,
    /// The output section whose description holds a script assignment.
    inside: Option<OsecId>,
    /// For the entry of `Config::defsyms` at this place, `DEFINED` sees only the entries before it (GNU ld's
    /// `DEFINED` is true for a symbol assigned before it).
    before: Option<usize>,
}

impl DefsymEnv<'_> {
    /// An assigned symbol's address and output section (`NONE`: absolute): a number is relative to the section
    /// being described, an absolute value the location counter made belongs to `dot_section`, and a section the
    /// output dropped gives way to a neighbour.
    fn settle(&self, e: crate::expr::Evaluated, dot_section: OsecId) -> (u64, OsecId) {
        use crate::expr::Base;
        let mut v = e.value;
        if v.base == Base::Number {
            v.base = self.inside.map_or(Base::Abs, Base::Section);
        }
        let sec = match v.base {
            Base::Section(s) => s,
            _ if e.from_dot => dot_section,
            _ => OsecId::NONE,
        };
        let addr = crate::expr::address(self, v);
        let osecs = &self.lay.lay.osecs;
        let keep = |i: usize| osecs[i].shndx != 0;
        (addr, super::script::nearby_section(osecs, &keep, sec, addr))
    }

    /// The output section symbol `id` (defined) is relative to; `None` for an absolute one.
    fn symbol_section(&self, id: SymId) -> Option<OsecId> {
        let lay = self.lay.lay;
        match self.res.defs[id.index()] {
            Def::Object { file, sym } => {
                let o = &self.res.objects[file.index()];
                let shndx = o.sym_shndx(sym as usize);
                let osec = if shndx == E::SHN_ABS as u32 {
                    return None;
                } else if shndx == E::SHN_COMMON as u32 {
                    (lay.osecs.iter())
                        .position(|x| x.parts.iter().any(|p| matches!(p, Part::Commons)))
                        .map(OsecId::new)
                } else if let Some((_, m)) = lay.merge_slot(file, SecIdx::new(shndx as usize)) {
                    Some(lay.merges[m as usize].osec)
                } else {
                    lay.place_osec[file.index()].get(shndx as usize).copied()
                };
                osec.filter(|o| o.is_some())
            }
            Def::Linker => match self.sections.get(&id) {
                Some(&s) => s.get(),
                None => containing_section(&lay.osecs, self.addrs[id.index()]),
            },
            _ => None,
        }
    }
}

/// The last kept allocated output section whose range holds `v` (its end included).
fn containing_section(osecs: &[OutputSection], v: u64) -> Option<OsecId> {
    (osecs.iter().enumerate())
        .filter(|(_, o)| o.shndx != 0 && o.is_alloc() && o.addr <= v && v <= o.addr + o.size)
        .map(|(i, _)| OsecId::new(i))
        .next_back()
}

impl crate::expr::Env for DefsymEnv<'_> {
    fn symbol(&self, name: &str) -> Option<u64> {
        let id = self.res.names.lookup(name.as_bytes())?;
        let defined = !matches!(self.res.defs[id.index()], Def::Undefined)
            || self.config.defsyms.iter().any(|(s, _)| s == name);
        defined.then(|| self.addrs[id.index()])
    }
    fn defined(&self, name: &str) -> bool {
        let config = self.config;
        let mut assigned = (config.defsyms.iter().chain(&config.provides))
            .enumerate()
            .filter(|(_, d)| d.0 == name)
            .map(|(k, _)| k)
            .peekable();
        let linker = || {
            (self.res.names.lookup(name.as_bytes()))
                .is_some_and(|g| self.res.defs[g.index()] == Def::Linker)
        };
        match self.before {
            Some(k) if assigned.peek().is_some() && linker() => assigned.any(|a| a < k),
            _ => self.symbol(name).is_some(),
        }
    }
    fn symbol_value(&self, name: &str) -> Option<crate::expr::Value> {
        use crate::expr::{Base, Value};
        let v = self.symbol(name)?;
        let id = self.res.names.lookup(name.as_bytes())?;
        Some(match self.symbol_section(id) {
            Some(s) => Value {
                v: v.wrapping_sub(self.lay.lay.osecs[s.index()].addr),
                base: Base::Section(s),
            },
            None => Value::abs(v),
        })
    }
    fn section(&self, name: &str) -> Option<(u64, u64, u64, u64)> {
        let osecs = &self.lay.lay.osecs;
        let i = (osecs.iter()).position(|o| o.shndx != 0 && o.name == name.as_bytes())?;
        let o = &osecs[i];
        // The load address a script gave it (`AT`, `AT>`); without a script, its address.
        let lma = self.lay.lay.script.lma.get(i).copied().unwrap_or(o.addr);
        Some((o.addr, lma, o.size, o.align.max(1)))
    }
    fn memory(&self, name: &str) -> Option<(u64, u64)> {
        let memory = &self.lay.lay.script.memory;
        (memory.iter()).find(|r| r.0 == name).map(|r| (r.1, r.2))
    }
    fn section_id(&self, name: &str) -> Option<OsecId> {
        let osecs = &self.lay.lay.osecs;
        let i = osecs
            .iter()
            .position(|o| o.shndx != 0 && o.name == name.as_bytes())?;
        Some(OsecId::new(i))
    }
    fn section_addr(&self, id: OsecId) -> u64 {
        self.lay.lay.osecs[id.index()].addr
    }
    fn inside(&self) -> Option<OsecId> {
        self.inside
    }
    fn max_page_size(&self) -> u64 {
        self.config.max_page_size
    }
    fn common_page_size(&self) -> u64 {
        self.config.common_page_size
    }
    fn sizeof_headers(&self) -> u64 {
        self.lay.headers
    }
    fn dot(&self) -> Option<u64> {
        self.dot
    }
}

pub fn is_common_def(res: &Resolved, _g: SymId, d: &Def) -> bool {
    match *d {
        Def::Object { file, sym } => {
            res.objects[file.index()].sym_shndx(sym as usize) == E::SHN_COMMON as u32
        }
        _ => false,
    }
}

pub fn target_of(res: &Resolved, space: &SymbolSpace, id: SymId) -> Target {
    if id.index() < res.num_globals() {
        match res.defs[id.index()] {
            Def::Object { file, sym } => Target::Object { file, sym },
            Def::Shared { file, sym } => Target::Imported { file, sym },
            Def::Linker => Target::Linker,
            Def::Undefined => Target::Undefined { weak: true },
        }
    } else {
        let f = space.local_base.partition_point(|&b| b <= id) - 1;
        Target::Object {
            file: FileId::new(f),
            sym: id.0 - space.local_base[f].0,
        }
    }
}

/// Address of symbol `i` of object `f` given the layout (0 for undefined and dropped).
pub fn object_sym_addr(res: &Resolved, lay: &Layout, f: FileId, i: usize) -> u64 {
    object_sym_addr_in(res, lay, &lay.sec_addr[f.index()], f, i)
}

/// [`object_sym_addr`] with object `f`'s section addresses given (`Layout::sec_addr[f]`).
fn object_sym_addr_in(res: &Resolved, lay: &Layout, sec_addr: &[u64], f: FileId, i: usize) -> u64 {
    let o = &res.objects[f.index()];
    let s = &o.syms[i];
    let shndx = o.sym_shndx(i);
    let value = s.st_value.get(LE);
    if shndx == E::SHN_ABS as u32 {
        return value;
    }
    if shndx == 0 || shndx as usize >= o.sections.len() {
        return 0;
    }
    section_offset_addr_in(lay, sec_addr, f, SecIdx(shndx), value).unwrap_or(0)
}

/// Address of byte `off` of input section `s` of object `f`, following merge and .eh_frame piece maps. Decided from
/// the layout's per-file tables alone: reading the input section's kind first was a cache miss per call (64-byte
/// entries at random; most of this function's 3% of clang-so's CPU time, mostly from symbol addresses).
pub fn section_offset_addr(lay: &Layout, f: FileId, s: SecIdx, off: u64) -> Option<u64> {
    section_offset_addr_in(lay, &lay.sec_addr[f.index()], f, s, off)
}

/// [`section_offset_addr`] with object `f`'s section addresses given (`Layout::sec_addr[f]`).
#[inline]
fn section_offset_addr_in(
    lay: &Layout,
    sec_addr: &[u64],
    f: FileId,
    s: SecIdx,
    off: u64,
) -> Option<u64> {
    let base = *sec_addr.get(s.index())?;
    if base == NO_ADDR {
        return merge_offset_addr(lay, f, s, off, &mut MergeCursor::default());
    }
    let Some(recs) = lay.eh_records.find(f, s) else {
        return Some(base.wrapping_add(off));
    };
    // Inside a kept record: the same byte of its copy. Anywhere else (a dropped record, the end of the section, an
    // empty section such as crtbeginT.o's __EH_FRAME_BEGIN__): where the next kept record of this section, or the
    // end of its block, lands.
    let k = recs.partition_point(|r| r.in_off + r.size <= off);
    let out_off = match recs.get(k) {
        Some(r) if r.out_off != NONE as u64 && r.in_off <= off => r.out_off + (off - r.in_off),
        _ => recs[k..]
            .iter()
            .find(|r| r.out_off != NONE as u64)
            .map_or_else(|| eh_block_size(recs), |r| r.out_off),
    };
    Some(base + out_off)
}

/// What the last lookup in one merge section found: the section, its slot and merge group, and the piece.
/// Relocations into `.debug_str` come mostly in increasing order, so the next lookup usually hits that piece or the
/// one after it, and needs neither the slot search nor the piece search.
#[derive(Clone, Copy)]
pub struct MergeCursor {
    /// The section (`NONE` for none yet).
    pub s: SecIdx,
    slot: usize,
    group: u32,
    piece: usize,
}

impl Default for MergeCursor {
    fn default() -> MergeCursor {
        MergeCursor {
            s: SecIdx::NONE,
            slot: 0,
            group: 0,
            piece: usize::MAX,
        }
    }
}

/// Address of byte `off` of merge section `s` of object `f`; `cur` is the cursor of earlier lookups.
#[inline]
pub fn merge_offset_addr(
    lay: &Layout,
    f: FileId,
    s: SecIdx,
    off: u64,
    cur: &mut MergeCursor,
) -> Option<u64> {
    if cur.s != s {
        let (slot, group) = lay.merge_slot(f, s)?;
        *cur = MergeCursor {
            s,
            slot,
            group,
            piece: usize::MAX,
        };
    }
    let table = &lay.piece_maps[f.index()][cur.slot];
    let maps = &table.maps;
    let covers = |k: usize| {
        k < maps.len() && maps[k].in_off <= off && maps.get(k + 1).is_none_or(|n| n.in_off > off)
    };
    let k = if covers(cur.piece) {
        cur.piece
    } else {
        table.find(off)?
    };
    cur.piece = k;
    Some(lay.merge_addr[cur.group as usize] + maps[k].out_off + (off - maps[k].in_off))
}

pub fn sym_target_is_live(res: &Resolved, lay: &Layout, t: Target) -> bool {
    match t {
        Target::Object { file, sym } => {
            let o = &res.objects[file.index()];
            let shndx = o.sym_shndx(sym as usize);
            shndx == E::SHN_ABS as u32
                || (shndx == E::SHN_COMMON as u32 && !res.commons_discarded)
                || (shndx != 0
                    && (shndx as usize) < o.sections.len()
                    && (lay.sec_addr[file.index()][shndx as usize] != NO_ADDR
                        || lay.merge_slot(file, SecIdx::new(shndx as usize)).is_some()))
        }
        Target::Linker | Target::Imported { .. } => true,
        Target::Undefined { .. } => false,
    }
}
