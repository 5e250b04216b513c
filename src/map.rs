//! Reports about a finished link: the link map (`-Map FILE`) and the archive-member extraction list
//! (`--why-extract=FILE`).
//!
//! The map lists, for every output section in address order, what fills it (input sections as `file:(section)`,
//! merged strings and constants, linker-made contents) and the symbols each input section defines, with addresses,
//! sizes and alignments in hex. It opens with the archive members pulled into the link and the reference that
//! pulled each. Input sections' lines are formatted in parallel; the whole map is built in memory and written at
//! once.

use crate::args::Config;
use crate::diag::{Errors, Result};
use crate::gc::Liveness;
use crate::index::{FileId, OsecId, SecIdx};
use crate::layout::{self, Layout, NONE, Part};
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rayon::prelude::*;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Writes `text` to `path`, or to stdout for `-`.
pub(crate) fn emit(path: &Path, what: &str, text: &str) -> Result<()> {
    let r = if path.as_os_str() == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())
    } else {
        std::fs::write(path, text)
    };
    r.map_err(|e| Errors::one(format!("cannot write {what} {}: {e}", path.display())))
}

/// Who made a reference that pulled an archive member in.
fn referrer(res: &Resolved, by: u32) -> String {
    if by == NONE {
        "<command line>".into()
    } else if (by as usize) < res.objects.len() {
        res.objects[by as usize].name.clone()
    } else {
        res.shared[by as usize - res.objects.len()].soname.clone()
    }
}

/// The pulled archive members in input order.
fn extractions(res: &Resolved) -> Vec<crate::resolve::Extraction> {
    let mut list = res.extracted.clone();
    list.sort_unstable_by_key(|e| e.member);
    list
}

/// `--why-extract`: one line per pulled archive member, `reference<TAB>extracted<TAB>symbol`, in input order of
/// the members (lld's format).
pub fn write_why_extract(path: &Path, res: &Resolved) -> Result<()> {
    let mut out = String::from("reference\textracted\tsymbol\n");
    for e in &extractions(res) {
        let _ = writeln!(
            out,
            "{}\t{}\t{}",
            referrer(res, e.by),
            res.objects[e.member.index()].name,
            res.display(e.sym)
        );
    }
    emit(path, "--why-extract file", &out)
}

/// One line of the memory map: address, size and alignment (blank for symbols), then `name` indented by `depth`
/// columns of 8.
pub(crate) fn line(
    out: &mut String,
    addr: u64,
    size_align: Option<(u64, u64)>,
    depth: usize,
    name: &str,
) {
    let _ = match size_align {
        Some((size, align)) => write!(out, "{addr:>16x} {size:>10x} {align:>6x} "),
        None => write!(out, "{addr:>16x} {:>10} {:>6} ", "", ""),
    };
    let _ = writeln!(out, "{:indent$}{name}", "", indent = depth * 8);
}

/// The symbols each live input section defines, per file and section, sorted by address: locals, and globals
/// whose chosen definition is this one.
fn defined_symbols(res: &Resolved, lay: &Layout, live: &Liveness) -> Vec<Vec<Vec<(u64, u32)>>> {
    res.objects
        .par_iter()
        .enumerate()
        .map(|(f, o)| {
            let mut per_sec: Vec<Vec<(u64, u32)>> = vec![Vec::new(); o.sections.len()];
            if !res.object_live[f] {
                return per_sec;
            }
            let ids = &res.object_ids[f];
            for i in 1..o.syms.len() {
                let s = &o.syms[i];
                let shndx = o.sym_shndx(i) as usize;
                if matches!(s.st_type(), E::STT_SECTION | E::STT_FILE)
                    || shndx == 0
                    || shndx >= o.sections.len()
                    || !live.is_live(FileId::new(f), SecIdx::new(shndx))
                    || o.sym_name(i).is_empty()
                {
                    continue;
                }
                if i >= o.first_global {
                    let g = ids[i - o.first_global];
                    let chosen = matches!(res.defs.get(g.index()),
                        Some(Def::Object { file, sym }) if file.index() == f && *sym as usize == i);
                    if !chosen {
                        continue;
                    }
                }
                per_sec[shndx].push((
                    layout::object_sym_addr(res, lay, FileId::new(f), i),
                    i as u32,
                ));
            }
            for list in &mut per_sec {
                list.sort_unstable();
            }
            per_sec
        })
        .collect()
}

/// The map's opening: the archive members pulled in with the reference that pulled each, the output file, the
/// column titles.
pub(crate) fn header(config: &Config, res: &Resolved) -> String {
    let mut out = String::new();
    if !res.extracted.is_empty() {
        out.push_str(
            "Archive members pulled in, each followed by the reference that pulled it in:\n\n",
        );
        for e in &extractions(res) {
            let _ = writeln!(
                out,
                "{}\n        {} ({})",
                res.objects[e.member.index()].name,
                referrer(res, e.by),
                res.display(e.sym)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "Output file: {}\n", config.output.display());
    let _ = writeln!(
        out,
        "{:>16} {:>10} {:>6} Output section / input section / symbol",
        "Address", "Size", "Align"
    );
    out
}

/// `-Map`: the link map.
pub fn write_map(
    path: &Path,
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    lay: &Layout,
) -> Result<()> {
    let mut out = header(config, res);

    // Every placed live input section as (output section, offset in its part run, file, section).
    let mut inputs: Vec<(OsecId, u64, FileId, SecIdx)> = res
        .objects
        .par_iter()
        .enumerate()
        .flat_map_iter(|(f, o)| {
            (0..o.sections.len()).filter_map(move |s| {
                let osec = lay.place_osec[f][s];
                (osec.is_some()
                    && live.is_live(FileId::new(f), SecIdx::new(s))
                    && lay.sec_addr[f][s] != layout::NO_ADDR)
                    .then_some((osec, lay.sec_addr[f][s], FileId::new(f), SecIdx::new(s)))
            })
        })
        .collect();
    inputs.par_sort_unstable();
    let syms = defined_symbols(res, lay, live);
    // Each input section's lines, formatted in parallel.
    let texts: Vec<String> = inputs
        .par_iter()
        .map(|&(_, addr, f, s)| {
            let o = &res.objects[f.index()];
            let sec = o.sec(s);
            let mut t = String::new();
            line(
                &mut t,
                addr,
                Some((sec.size(), sec.align())),
                1,
                &format!("{}:({})", o.name, o.section_name(s.0)),
            );
            for &(a, i) in &syms[f.index()][s.index()] {
                line(
                    &mut t,
                    a,
                    None,
                    2,
                    &crate::diag::demangle(o.sym_name(i as usize)),
                );
            }
            t
        })
        .collect();

    let mut next = 0usize;
    for (k, o) in lay.osecs.iter().enumerate() {
        // Inputs of output sections that were dropped (none expected) are skipped.
        while next < inputs.len() && (inputs[next].0.index()) < k {
            next += 1;
        }
        if o.shndx == 0 {
            continue;
        }
        let name = String::from_utf8_lossy(&o.name);
        line(&mut out, o.addr, Some((o.size, o.align)), 0, &name);
        for (pi, part) in o.parts.iter().enumerate() {
            let start = o.part_offsets.get(pi).copied().unwrap_or(0);
            let end = o.part_offsets.get(pi + 1).copied().unwrap_or(o.size);
            let at = o.addr + start;
            match part {
                Part::Inputs | Part::Sorted => {
                    // Both kinds of run are in `inputs`, in address order; print them with the first one.
                    if o.parts[..pi]
                        .iter()
                        .any(|p| matches!(p, Part::Inputs | Part::Sorted))
                    {
                        continue;
                    }
                    while next < inputs.len() && (inputs[next].0).index() == k {
                        out.push_str(&texts[next]);
                        next += 1;
                    }
                }
                Part::Merged(m) => {
                    let g = &lay.merges[*m as usize];
                    line(
                        &mut out,
                        at,
                        Some((g.size, g.align)),
                        1,
                        &format!("<merged>:({name})"),
                    );
                }
                Part::Commons => line(
                    &mut out,
                    at,
                    Some((end - start, o.align)),
                    1,
                    "<common symbols>",
                ),
                Part::CopyRelRo => line(
                    &mut out,
                    at,
                    Some((end - start, o.align)),
                    1,
                    "<copy relocations of read-only data>",
                ),
                Part::CopyRel => line(
                    &mut out,
                    at,
                    Some((end - start, o.align)),
                    1,
                    "<copy relocations>",
                ),
                Part::Synthetic(_) | Part::Relocs => {
                    let (own, size) = match part {
                        Part::Synthetic(s) => {
                            (String::from_utf8_lossy(s.name()), lay.synth.size(*s))
                        }
                        _ => (String::from_utf8_lossy(&o.name), end - start),
                    };
                    line(
                        &mut out,
                        at,
                        Some((size, o.align)),
                        1,
                        &format!("<internal>:({own})"),
                    );
                }
            }
        }
        // Sections placed in an output section without an input part (none expected) still get listed.
        while next < inputs.len() && (inputs[next].0).index() == k {
            out.push_str(&texts[next]);
            next += 1;
        }
    }
    if config.cref {
        out.push_str(&cref(res));
    }
    emit(path, "map file", &out)
}

/// Each linked file's global symbols in input order: (file name, symbol name, defines it).
fn global_uses(res: &Resolved) -> impl Iterator<Item = (&str, &[u8], bool)> {
    let objects = (res.objects.iter().zip(&res.object_live))
        .filter(|(_, live)| **live)
        .flat_map(|(o, _)| {
            (o.first_global..o.syms.len()).map(move |i| {
                let defined = o.sym_shndx(i) != object::elf::SHN_UNDEF as u32;
                (
                    o.name.as_str(),
                    o.global_names[i - o.first_global].bytes,
                    defined,
                )
            })
        });
    let shared = (res.shared.iter().zip(&res.shared_needed))
        .filter(|(_, needed)| **needed)
        .flat_map(|(s, _)| {
            (s.first_global..s.syms.len()).map(move |i| {
                let defined = s.syms[i].st_shndx.get(crate::elf::LE) != object::elf::SHN_UNDEF;
                (
                    s.soname.as_str(),
                    s.global_names[i - s.first_global].bytes,
                    defined,
                )
            })
        });
    objects.chain(shared)
}

/// `-y SYMBOL`: "FILE: definition of SYMBOL" or "FILE: reference to SYMBOL" on standard error, for every linked
/// object, then every needed shared library, in input order (GNU ld's lines).
pub fn trace_symbols(config: &crate::args::Config, res: &Resolved) {
    for (file, name, defined) in global_uses(res) {
        if config.trace_symbols.iter().any(|t| t.as_bytes() == name) {
            let what = if defined {
                "definition of"
            } else {
                "reference to"
            };
            eprintln!("rivet: {file}: {what} {}", String::from_utf8_lossy(name));
        }
    }
}

/// `--cref`: GNU ld's cross reference table. Every global symbol of the linked objects, sorted by name, with the
/// file that defines it first and then the files that reference it, in input order; a needed shared library is
/// listed where it defines a symbol an object references.
pub fn cref(res: &Resolved) -> String {
    let mut table: std::collections::BTreeMap<&[u8], (Option<&str>, Vec<&str>)> =
        Default::default();
    for (file, name, defined) in global_uses(res) {
        let from_object = res.objects.iter().any(|o| o.name == file);
        if !from_object && !table.contains_key(name) {
            continue;
        }
        let e = table.entry(name).or_default();
        if defined && e.0.is_none() {
            e.0 = Some(file);
        } else if !e.1.contains(&file) && e.0 != Some(file) {
            e.1.push(file);
        }
    }
    let mut out = String::from(
        "\nCross Reference Table\n\nSymbol                                            File\n",
    );
    for (name, (def, refs)) in table {
        let name = String::from_utf8_lossy(name);
        let mut files = def.into_iter().chain(refs);
        let first = files.next().unwrap_or("");
        if name.len() >= 50 {
            let _ = writeln!(out, "{name}\n{:50}{first}", "");
        } else {
            let _ = writeln!(out, "{name:50}{first}");
        }
        for f in files {
            let _ = writeln!(out, "{:50}{f}", "");
        }
    }
    out
}
