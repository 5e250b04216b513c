//! `.symtab` and `.strtab`: the object files' symbols that go in (chosen once per file in parallel, a bit each, so
//! that the writer does not decide again), then the linker-defined and imported ones. Both sections are sized and
//! written here from the same choice; where a symbol went (its output section and value) the writer says through
//! [`Places`].

use crate::args::{Config, Discard};
use crate::elf::LE;
use crate::index::{FileId, NONE, OsecId, SymId};
use crate::load_order::FileOrder;
use crate::parse::SectionKind;
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rayon::prelude::*;

/// What `.symtab` holds.
pub struct Contents {
    /// Per file: (locals, globals, string bytes); the globals include the file's `forced` ones.
    pub counts: Vec<(u32, u32, u64)>,
    /// Per file: how many of its globals go in as locals (`forced_local`), after the nameless file symbol.
    pub forced: Vec<u32>,
    /// Whether the hidden globals the objects define go in as locals: in a shared object, or a dynamic output
    /// under `-E`, as GNU ld writes them (it makes local every hidden symbol it considered for `.dynsym`).
    pub forced_local: bool,
    /// Per file, bit `i` set if its symbol `i` goes in.
    pub members: Vec<Vec<u64>>,
    /// Globals not defined by an object that go in (linker-defined, imported with a slot).
    pub extra: Vec<SymId>,
    /// Linker-defined globals that go in as locals (`resolve::linker_symbol_is_local`), after the files' locals
    /// (GNU ld writes the hidden symbols it made local after the inputs' locals).
    pub extra_local: Vec<SymId>,
    /// Whether a nameless `STT_FILE` entry comes before `extra_local`, as GNU ld writes one before the symbols it
    /// made local so that they are not taken for the last file's.
    pub anon_file: bool,
    /// Whether one of them is an IFUNC or a unique global.
    pub gnu_ext: bool,
    /// `--emit-relocs`: the output sections that get a section symbol, first after the null entry (as GNU ld
    /// writes them when it keeps relocations, which name them).
    pub section_syms: Vec<OsecId>,
    /// The order the files' symbols are listed in (GNU ld's load order).
    pub order: FileOrder,
    /// `-z unique-symbol`: per file, the number appended to each of its locals that go in (not its file
    /// symbols), in symbol order; empty without the option.
    pub suffixes: Vec<Vec<u32>>,
}

impl Contents {
    /// The files in the order their symbols are listed.
    pub fn files(&self) -> impl Iterator<Item = FileId> + '_ {
        self.order.files(self.counts.len())
    }

    /// The index of the first of the files' globals that go in as locals (after the files' locals and the
    /// nameless file symbol; `split_per_file` lays the entries out).
    pub fn first_forced(&self) -> u32 {
        1 + self.section_syms.len() as u32
            + self.counts.iter().map(|c| c.0).sum::<u32>()
            + self.anon_file as u32
    }

    /// The number of local entries, the null one included: the index of the first global (`sh_info`).
    pub fn first_global(&self) -> u32 {
        self.first_forced() + self.forced.iter().sum::<u32>() + self.extra_local.len() as u32
    }

    /// Whether global `i` of file `f`, which `.symtab` lists, goes in as a local.
    pub fn is_forced(&self, res: &Resolved, f: FileId, i: usize) -> bool {
        self.forced_local && self.forced[f.index()] > 0 && is_hidden(res, f, i)
    }

    /// The sizes of `.symtab` and `.strtab`.
    pub fn sizes(&self, res: &Resolved) -> (u64, u64) {
        let n: u64 = self.counts.iter().map(|c| (c.0 + c.1) as u64).sum::<u64>()
            + self.extra.len() as u64
            + self.extra_local.len() as u64
            + self.anon_file as u64
            + self.section_syms.len() as u64
            + 1;
        let strs: u64 = self.counts.iter().map(|c| c.2).sum::<u64>()
            + (self.extra.iter().chain(&self.extra_local))
                .map(|&g| res.name(g).len() as u64 + 1)
                .sum::<u64>()
            + 1;
        (n * 24, strs)
    }
}

/// Which symbols go in `.symtab`, counted per file in parallel, and the linker-made extras (`aux_index`: per
/// symbol, `NONE` unless it has slots, which are in `aux`; `live`: per file, per section, whether it is kept;
/// `forced_local`: whether the objects' hidden globals go in as locals).
/// Per file, per section, its output section, and per output section whether the output drops it (empty): GNU
/// ld leaves out the locals of such a section.
pub type Dropped<'a> = (&'a [Vec<OsecId>], &'a [bool]);

pub fn contents(
    config: &Config,
    res: &Resolved,
    order: &FileOrder,
    (live, dropped): (&[Vec<bool>], Dropped),
    (aux_index, aux): (&[u32], &[crate::synthetic::got_plt::Aux]),
    forced_local: bool,
) -> Contents {
    let objects = &res.objects;
    // Symbol table sizes per file (locals, globals, string bytes), and the linker-made extras.
    // Which symbols go in, as one bit per symbol, so the writer does not decide again; and whether one of them is
    // an IFUNC or a unique global (`gnu_osabi`), seen here while each symbol is in cache (a later walk over every
    // input symbol for just that was 6 ms on clang-so, serial at the end of the link).
    type FileSymtab = ((u32, u32, u64), u32, Vec<u64>, bool);
    let per_file: Vec<FileSymtab> = if config.strip_all {
        Vec::new()
    } else {
        res.runs.map(|f| {
            let o = &objects[f.index()];
            let (mut nl, mut ng, mut nf, mut strs) = (0u32, 0u32, 0u32, 0u64);
            if !res.object_live[f.index()] {
                return ((0, 0, 0), 0, Vec::new(), false);
            }
            let mut bits = vec![0u64; o.syms.len().div_ceil(64).max(1)];
            let mut gnu_ext = false;
            // GNU ld writes an object's locals only if a section of its own is in the output.
            let first = if contributes(res, live, f) {
                1
            } else {
                o.first_global.max(1)
            };
            let (mut file_sym, mut other_local) = (false, false);
            let (sec_osec, empty) = dropped;
            let in_dropped = match empty.iter().any(|&e| e) {
                true => sec_osec.get(f.index()).map_or(&[][..], |v| &v[..]),
                false => &[][..],
            };
            let in_dropped = |i: usize| {
                let shndx = o.sym_shndx(i) as usize;
                (in_dropped.get(shndx)).is_some_and(|x| x.get().is_some_and(|x| empty[x.index()]))
            };
            for i in first..o.syms.len() {
                if includes(res, live, config.discard, f, i)
                    && (i >= o.first_global || !in_dropped(i))
                {
                    bits[i / 64] |= 1 << (i % 64);
                    strs += o.sym_name(i).len() as u64 + 1;
                    if i < o.first_global {
                        nl += 1;
                        let is_file = o.syms[i].st_type() == E::STT_FILE;
                        file_sym |= is_file;
                        other_local |= !is_file;
                    } else {
                        ng += 1;
                        nf += (forced_local && is_hidden(res, f, i)) as u32;
                    }
                    let s = &o.syms[i];
                    gnu_ext |= s.st_type() == E::STT_GNU_IFUNC || s.st_bind() == E::STB_GNU_UNIQUE;
                }
            }
            if other_local && !file_sym {
                // Bit 0 (the null symbol's) stands for the `STT_FILE` symbol GNU ld makes for an object without
                // one, so that its locals are not taken for the previous file's.
                bits[0] |= 1;
                nl += 1;
                strs += file_symbol_name(&o.name).len() as u64 + 1;
            }
            ((nl, ng, strs), nf, bits, gnu_ext)
        })
    };
    let gnu_ext = per_file.iter().any(|p| p.3);
    let mut forced = Vec::with_capacity(per_file.len());
    let (counts, members): (Vec<_>, Vec<_>) = (per_file.into_iter())
        .map(|(c, nf, b, _)| {
            forced.push(nf);
            (c, b)
        })
        .unzip();
    let all_extra: Vec<SymId> = if config.strip_all {
        Vec::new()
    } else {
        (0..res.num_globals() as u32)
            .into_par_iter()
            .map(SymId)
            .filter(|&g| match res.defs[g.index()] {
                Def::Linker => true,
                // What a dynamic output refers to (`.dynsym`'s imports, weak undefined ones included), as
                // GNU ld lists them; a static one's weak undefined symbols are not dynamic and stay out, as there.
                Def::Shared { .. } | Def::Undefined => {
                    (aux.get(aux_index[g.index()] as usize)).is_some_and(|x| x.dynsym != NONE)
                }
                Def::Object { .. } => false,
            })
            .collect()
    };
    let mut counts = counts;
    let suffixes = match config.unique_symbol {
        true => unique_suffixes(res, order, &members, &mut counts),
        false => Vec::new(),
    };
    let (extra_local, extra) = all_extra.into_iter().partition(|&g| {
        res.defs[g.index()] == Def::Linker && linker_entry(config, res, g).0 == E::STB_LOCAL
    });
    Contents {
        counts,
        members,
        extra,
        anon_file: (!extra_local.is_empty() || forced.iter().any(|&n| n > 0))
            && config.discard != Discard::All,
        forced,
        forced_local,
        extra_local,
        gnu_ext,
        section_syms: Vec::new(),
        order: order.clone(),
        suffixes,
    }
}

/// `-z unique-symbol`'s numbers: the objects' locals that go in (but file symbols), in listing order, each
/// numbered by how many of that name came before it, as GNU ld numbers them (a name met once gets `.0`). Each
/// file's string bytes grow by the suffixes. Serial: only with the option.
fn unique_suffixes(
    res: &Resolved,
    order: &FileOrder,
    members: &[Vec<u64>],
    counts: &mut [(u32, u32, u64)],
) -> Vec<Vec<u32>> {
    let mut seen: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
    let mut suffixes = vec![Vec::new(); members.len()];
    for f in order.files(res.objects.len()) {
        let (o, bits) = (&res.objects[f.index()], &members[f.index()]);
        for i in 1..o.first_global.min(bits.len() * 64) {
            if bits[i / 64] >> (i % 64) & 1 == 0 || o.syms[i].st_type() == E::STT_FILE {
                continue;
            }
            let n = seen.entry(o.sym_name(i)).or_insert(0);
            suffixes[f.index()].push(*n);
            counts[f.index()].2 += 1 + n.to_string().len() as u64;
            *n += 1;
        }
    }
    suffixes
}

/// Whether object `f` puts a section of its own in the output: a kept one that is not merged into pieces shared
/// with other files (`.comment`, strings) nor rebuilt by the linker (`.eh_frame`, property notes). An object whose
/// sections `--gc-sections` or COMDAT groups all took has none.
fn contributes(res: &Resolved, live: &[Vec<bool>], f: FileId) -> bool {
    let o = &res.objects[f.index()];
    (o.sections.iter().zip(&live[f.index()]))
        .any(|(sec, &l)| l && sec.kind == crate::parse::SectionKind::Regular)
}

/// The name of the `STT_FILE` symbol GNU ld makes for an object that has none: the file's name without its
/// directories, or an archive member's own name.
pub fn file_symbol_name(name: &str) -> &str {
    let name = match name.strip_suffix(')').and_then(|n| n.rsplit_once('(')) {
        Some((_, member)) => member,
        None => name,
    };
    name.rsplit('/').next().unwrap_or(name)
}

/// Whether global `i` of object `f`, which `.symtab` lists, is hidden (its own or another file's visibility, a
/// version script's `local:`, `--exclude-libs`): where `Contents::forced_local`, it goes in as a local.
pub fn is_hidden(res: &Resolved, f: FileId, i: usize) -> bool {
    let o = &res.objects[f.index()];
    (res.object_ids[f.index()].get(i - o.first_global)).is_some_and(|g| res.hidden[g.index()])
}

/// Whether `.symtab` lists symbol `i` of object `f`: live definitions and `STT_FILE` symbols, without section
/// symbols, and of the locals those `discard` keeps (`-x` none; `-X` none of the `.L` temporary labels; by default
/// none of those in mergeable sections; `--discard-none` all).
pub fn includes(res: &Resolved, live: &[Vec<bool>], discard: Discard, f: FileId, i: usize) -> bool {
    let is_live = |shndx: u32| {
        live[f.index()]
            .get(shndx as usize)
            .copied()
            .unwrap_or(false)
    };
    let o = &res.objects[f.index()];
    let s = &o.syms[i];
    let ty = s.st_type();
    if ty == E::STT_SECTION {
        return false;
    }
    if ty == E::STT_FILE {
        return i < o.first_global && discard != Discard::All;
    }
    let shndx = o.sym_shndx(i);
    if i < o.first_global {
        let off = s.st_name.get(LE) as usize;
        if discard == Discard::All || off == 0 {
            return false;
        }
        let in_section = shndx != 0 && (shndx as usize) < o.sections.len();
        // `.L` checked on the string table in place: the name's length (a NUL search) is not needed here.
        if discard != Discard::None && o.strtab.get(off..).is_some_and(|n| n.starts_with(b".L")) {
            let merged = in_section && o.sections[shndx as usize].kind == SectionKind::Merge;
            if discard == Discard::Labels || merged {
                return false;
            }
        }
        return shndx == E::SHN_ABS as u32 || (in_section && is_live(shndx));
    }
    // An undefined symbol is nobody's definition: checked first, as most of a C++ object's globals are references
    // and the definition table is read at random.
    if shndx == E::SHN_UNDEF as u32 {
        return false;
    }
    let g = res.object_ids[f.index()][i - o.first_global];
    matches!(res.defs[g.index()], Def::Object { file, sym } if file == f && sym as usize == i)
        && (shndx == E::SHN_ABS as u32
            || (shndx == E::SHN_COMMON as u32 && !res.commons_discarded)
            || is_live(shndx))
}

/// Where the symbols went, which the layout knows: the writer implements this over it (a trait, so that the loop
/// over every symbol is monomorphised).
pub trait Places: Sync {
    /// The section index in the output of a symbol defined in section `shndx` of object `f` (`SHN_ABS` where it
    /// has none; a common symbol's is the one that holds the commons).
    fn section_index(&self, f: FileId, shndx: u32) -> u16;
    /// `st_value` of symbol `i` of object `f`, of type `st_type`.
    fn value(&self, f: FileId, i: usize, st_type: u8) -> u64;
    /// `st_size` of symbol `i` of object `f`.
    fn size(&self, f: FileId, i: usize) -> u64;
    /// A linker-defined global's section index (`SHN_ABS` where no section holds it) and `st_value` (its
    /// address, or for `STT_TLS` its offset in the TLS block).
    fn linker_symbol(&self, g: SymId, st_type: u8) -> (u16, u64);
    /// An output section's index and address, for its section symbol.
    fn output_section(&self, i: OsecId) -> (u16, u64);
    /// The header index of the last allocated output section that holds `addr` (its end included), or
    /// `SHN_ABS`: where a symbol of a section the output dropped (empty under a script) is listed, as GNU ld
    /// moves it to a neighbour.
    fn section_holding(&self, addr: u64) -> u16;
    /// A global no object defines (imported, or left undefined in a dynamic output), which has slots: its
    /// binding and type as in `.dynsym`, its section index (`SHN_UNDEF`, or for data copied into the output the
    /// section of the copy, as GNU ld lists it), its value (the copy's or a canonical PLT entry's address, else 0)
    /// and size (the copy's).
    fn import(&self, g: SymId) -> Import;
}

/// `.symtab`'s entry of an imported symbol (`Places::import`).
pub struct Import {
    pub bind: u8,
    pub ty: u8,
    pub shndx: u16,
    pub value: u64,
    pub size: u64,
}

/// One file's share of the two sections: its local entries, the entries of its globals that go in as locals, its
/// other globals' entries, and its names, which start at offset `name_off` of `.strtab`.
#[derive(Default)]
struct FileOut<'a> {
    locals: &'a mut [u8],
    forced: &'a mut [u8],
    globals: &'a mut [u8],
    names: &'a mut [u8],
    name_off: u64,
}

/// Writes `.symtab` (`sym_out`) and `.strtab` (`str_out`), every byte of both, in parallel per file, in the order
/// `split_per_file` gives.
pub fn write(
    config: &Config,
    res: &Resolved,
    contents: &Contents,
    places: &impl Places,
    sym_out: &mut [u8],
    str_out: &mut [u8],
) {
    // The null symbol and the empty name: every byte is written here (a reused output's bytes are not zeroed
    // there first).
    if let (Some(e), Some(b)) = (sym_out.get_mut(..24), str_out.first_mut()) {
        e.fill(0);
        *b = 0;
    }
    let nsec = contents.section_syms.len();
    let rest = sym_out.get_mut(24..).unwrap_or(&mut []);
    let (sections, sym_out) = rest.split_at_mut((24 * nsec).min(rest.len()));
    for (e, &i) in sections.chunks_exact_mut(24).zip(&contents.section_syms) {
        let (shndx, addr) = places.output_section(i);
        e.fill(0);
        e[4] = E::STT_SECTION;
        e[6..8].copy_from_slice(&shndx.to_le_bytes());
        e[8..16].copy_from_slice(&addr.to_le_bytes());
    }
    let (mut files, anon, mut extras) = split_per_file(contents, sym_out, str_out);
    if contents.anon_file {
        write_entry(anon, (0, E::STT_FILE, 0), (E::SHN_ABS, 0, 0));
    }
    res.runs.for_each_mut(&mut files, |f, out| {
        if contents.counts[f.index()] != (0, 0, 0) {
            write_file_symbols(res, contents, f, places, out);
        }
    });
    let (locals, globals) = (&contents.extra_local, &contents.extra);
    write_extras(
        config,
        res,
        locals.iter().chain(globals),
        places,
        &mut extras,
    );
}

/// Each file's share of `sym_out` (the entries after the null one and the section symbols) and `str_out` (after
/// the empty name), the files in `Contents::files`' order; the nameless file symbol's entry (empty where there is
/// none); and the extras' share: `extra_local`'s entries after the files' forced locals, the rest after their
/// globals (written in that order, so `FileOut::globals` holds both), and the names after theirs. `.symtab` is:
/// the files' locals, the nameless file symbol, the files' forced locals, the extra locals, the files' globals,
/// the extra globals.
fn split_per_file<'a>(
    contents: &Contents,
    sym_out: &'a mut [u8],
    str_out: &'a mut [u8],
) -> (Vec<FileOut<'a>>, &'a mut [u8], FileOut<'a>) {
    let counts = &contents.counts[..];
    let nlocal: usize = counts.iter().map(|c| c.0 as usize).sum();
    let nforced: usize = contents.forced.iter().map(|&n| n as usize).sum();
    let nglobal: usize = counts.iter().map(|c| c.1 as usize).sum::<usize>() - nforced;
    let take = |s: &'a mut [u8], n: usize| s.split_at_mut((24 * n).min(s.len()));
    let (mut locals, rest) = take(sym_out, nlocal);
    let (anon, rest) = take(rest, contents.anon_file as usize);
    let (mut forced, rest) = take(rest, nforced);
    let (extra_local, rest) = take(rest, contents.extra_local.len());
    let (mut globals, extra_global) = take(rest, nglobal);
    let (_, mut names) = str_out.split_at_mut(1.min(str_out.len()));
    let mut name_off = 1u64;
    let mut files: Vec<FileOut> = Vec::with_capacity(counts.len());
    files.resize_with(counts.len(), FileOut::default);
    for f in contents.files() {
        let (nl, ng, strs) = counts[f.index()];
        let nf = contents.forced[f.index()];
        let (l, rest) = std::mem::take(&mut locals).split_at_mut(24 * nl as usize);
        locals = rest;
        let (fl, rest) = std::mem::take(&mut forced).split_at_mut(24 * nf as usize);
        forced = rest;
        let (g, rest) = std::mem::take(&mut globals).split_at_mut(24 * (ng - nf) as usize);
        globals = rest;
        let (n, rest) = std::mem::take(&mut names).split_at_mut(strs as usize);
        names = rest;
        files[f.index()] = FileOut {
            locals: l,
            forced: fl,
            globals: g,
            names: n,
            name_off,
        };
        name_off += strs;
    }
    let extras = FileOut {
        locals: extra_local,
        forced: &mut [],
        globals: extra_global,
        names,
        name_off,
    };
    (files, anon, extras)
}

/// Writes the entries and names of object `f`'s symbols that go in (`Contents::members`, a bit each).
fn write_file_symbols(
    res: &Resolved,
    contents: &Contents,
    f: FileId,
    places: &impl Places,
    out: &mut FileOut,
) {
    let o = &res.objects[f.index()];
    let (mut li, mut fi, mut gi, mut so) = (0usize, 0usize, 0usize, 0usize);
    let (suffixes, mut ui) = (contents.suffixes.get(f.index()).map_or(&[][..], |s| s), 0);
    let members = contents.members[f.index()]
        .iter()
        .enumerate()
        .flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 != 0)
                .map(move |b| w * 64 + b)
        });
    for i in members {
        if i == 0 {
            // The file symbol made for an object without one (`contents`): the first of its locals.
            let name = file_symbol_name(&o.name).as_bytes();
            write_entry(
                &mut out.locals[..24],
                (out.name_off as u32, E::STT_FILE, 0),
                (E::SHN_ABS, 0, 0),
            );
            out.names[..name.len()].copy_from_slice(name);
            out.names[name.len()] = 0;
            li += 1;
            so += name.len() + 1;
            continue;
        }
        let sym = &o.syms[i];
        let name = o.sym_name(i);
        let (entries, idx, bind, other) = if i < o.first_global {
            (&mut *out.locals, &mut li, sym.st_bind(), sym.st_other)
        } else if contents.is_forced(res, f, i) {
            // GNU ld clears the visibility of the hidden symbols it makes local.
            (&mut *out.forced, &mut fi, E::STB_LOCAL, sym.st_other & !3)
        } else if sym.st_visibility() == E::STV_DEFAULT && is_hidden(res, f, i) {
            // Hidden by another file's reference or `--exclude-libs`: GNU ld writes the visibility the link gave.
            (
                &mut *out.globals,
                &mut gi,
                sym.st_bind(),
                sym.st_other | E::STV_HIDDEN,
            )
        } else {
            (&mut *out.globals, &mut gi, sym.st_bind(), sym.st_other)
        };
        let shndx = o.sym_shndx(i);
        let ty = if shndx == E::SHN_COMMON as u32 {
            E::STT_OBJECT
        } else {
            sym.st_type()
        };
        // A file symbol is absolute, whatever section index the input gave it (`includes` did not check it).
        let place = if ty == E::STT_FILE {
            (E::SHN_ABS, 0, 0)
        } else {
            let value = places.value(f, i, ty);
            let section = match shndx == E::SHN_ABS as u32 {
                true => E::SHN_ABS,
                false => match places.section_index(f, shndx) {
                    E::SHN_UNDEF if ty != E::STT_TLS => places.section_holding(value),
                    section => section,
                },
            };
            (section, value, places.size(f, i))
        };
        write_entry(
            &mut entries[24 * *idx..24 * *idx + 24],
            ((out.name_off + so as u64) as u32, (bind << 4) | ty, other),
            place,
        );
        let sb = &mut out.names[so..so + name.len() + 1];
        sb[..name.len()].copy_from_slice(name);
        sb[name.len()] = 0;
        *idx += 1;
        so += name.len() + 1;
        if i < o.first_global && ty != E::STT_FILE {
            if let Some(&n) = suffixes.get(ui) {
                // `-z unique-symbol`: the name's `.N`, in place of its terminator.
                let digits = format!(".{n}");
                let at = so - 1;
                out.names[at..at + digits.len()].copy_from_slice(digits.as_bytes());
                out.names[at + digits.len()] = 0;
                so += digits.len();
            }
            ui += 1;
        }
    }
}

/// Writes the linker-defined and imported globals (`extra`: those that go in as locals first) into their share of
/// the sections.
fn write_extras<'a>(
    config: &Config,
    res: &Resolved,
    extra: impl Iterator<Item = &'a SymId>,
    places: &impl Places,
    out: &mut FileOut,
) {
    let mut so = 0usize;
    let nlocal = out.locals.len() / 24;
    for (k, &gid) in extra.enumerate() {
        let name = res.name(gid);
        let e = if k < nlocal {
            &mut out.locals[24 * k..][..24]
        } else {
            &mut out.globals[24 * (k - nlocal)..][..24]
        };
        let (shndx, value, size, (bind, other, ty)) = match res.defs[gid.index()] {
            Def::Linker => {
                let entry = linker_entry(config, res, gid);
                let (section, v) = places.linker_symbol(gid, entry.2);
                (section, v, 0, entry)
            }
            _ => {
                let i = places.import(gid);
                (i.shndx, i.value, i.size, (i.bind, E::STV_DEFAULT, i.ty))
            }
        };
        write_entry(
            e,
            ((out.name_off + so as u64) as u32, (bind << 4) | ty, other),
            (shndx, value, size),
        );
        let sb = &mut out.names[so..][..name.len() + 1];
        sb[..name.len()].copy_from_slice(name);
        sb[name.len()] = 0;
        so += name.len() + 1;
    }
}

/// Writes one `.symtab` entry `e`: its name's offset, `st_info` and `st_other`, then its section index, value and
/// size.
fn write_entry(
    e: &mut [u8],
    (name, info, other): (u32, u8, u8),
    (shndx, value, size): (u16, u64, u64),
) {
    e[0..4].copy_from_slice(&name.to_le_bytes());
    e[4] = info;
    e[5] = other;
    e[6..8].copy_from_slice(&shndx.to_le_bytes());
    e[8..16].copy_from_slice(&value.to_le_bytes());
    e[16..24].copy_from_slice(&size.to_le_bytes());
}

/// A linker-defined symbol's binding, `st_other` and type in `.symtab`, as GNU ld gives them: the ones it makes
/// local (`resolve::linker_symbol_is_local`) `LOCAL` with default visibility (GNU ld clears a local's
/// visibility), `_GLOBAL_OFFSET_TABLE_` and `_DYNAMIC` objects and `_TLS_MODULE_BASE_` a TLS symbol;
/// `__start_`/`__stop_` with `-z start-stop-visibility`'s; the others (`_end`, `--defsym`s, a script's plain
/// and `PROVIDE`d assignments) global, hidden where an input's reference is.
fn linker_entry(config: &Config, res: &Resolved, g: SymId) -> (u8, u8, u8) {
    let name = res.name(g);
    let assigned = |n: &[u8]| {
        (config.defsyms.iter().chain(&config.provides)).any(|(s, _)| s.as_bytes() == n)
            || (config.section_symbols.iter()).any(|s| s.name.as_bytes() == n)
    };
    if crate::resolve::linker_symbol_is_local(config, name) {
        let ty = match name {
            b"_GLOBAL_OFFSET_TABLE_" | b"_DYNAMIC" if !assigned(name) => E::STT_OBJECT,
            b"_TLS_MODULE_BASE_" if !assigned(name) => E::STT_TLS,
            _ => E::STT_NOTYPE,
        };
        return (E::STB_LOCAL, E::STV_DEFAULT, ty);
    }
    let other = if crate::resolve::is_start_stop(name) && !assigned(name) {
        config.start_stop_visibility
    } else if res.hidden[g.index()] {
        E::STV_HIDDEN
    } else {
        E::STV_DEFAULT
    };
    (E::STB_GLOBAL, other, E::STT_NOTYPE)
}
