//! Layout pass: the sizes of `.symtab` and `.strtab`: which symbols of each file go in (one bit each, so the
//! writer does not decide again), counted per file in parallel, and the linker-made extras.

use super::{Cx, NONE};
use crate::elf::LE;
use crate::gc::Liveness;
use crate::resolve::{Def, Resolved};
use object::elf as E;
use rayon::prelude::*;

/// What `.symtab` holds.
pub struct SymtabSizes {
    /// Per file: (locals, globals, string bytes).
    pub counts: Vec<(u32, u32, u64)>,
    /// Per file, bit `i` set if its symbol `i` goes in.
    pub members: Vec<Vec<u64>>,
    /// Globals not defined by an object that go in (linker-defined, imported with a slot).
    pub extra: Vec<u32>,
    /// Whether one of them is an IFUNC or a unique global.
    pub gnu_ext: bool,
}

pub fn symtab_sizes(cx: &Cx, aux_index: &[u32]) -> SymtabSizes {
    let Cx {
        config, res, live, ..
    } = *cx;
    let objects = &res.objects;
    // Symbol table sizes per file (locals, globals, string bytes), and the linker-made extras.
    // Which symbols go in, as one bit per symbol, so the writer does not decide again; and whether one of them is
    // an IFUNC or a unique global (`gnu_osabi`), seen here while each symbol is in cache (a later walk over every
    // input symbol for just that was 6 ms on clang-so, serial at the end of the link).
    type FileSymtab = ((u32, u32, u64), Vec<u64>, bool);
    let per_file: Vec<FileSymtab> = if config.strip_all {
        Vec::new()
    } else {
        res.runs.map(|f| {
            let o = &objects[f];
            let (mut nl, mut ng, mut strs) = (0u32, 0u32, 0u64);
            if !res.object_live[f] {
                return ((0, 0, 0), Vec::new(), false);
            }
            let mut bits = vec![0u64; o.syms.len().div_ceil(64)];
            let mut gnu_ext = false;
            for i in 1..o.syms.len() {
                if symtab_includes(res, live, config.discard_all, f, i) {
                    bits[i / 64] |= 1 << (i % 64);
                    strs += o.sym_name(i).len() as u64 + 1;
                    if i < o.first_global {
                        nl += 1
                    } else {
                        ng += 1
                    }
                    let s = &o.syms[i];
                    gnu_ext |= s.st_type() == E::STT_GNU_IFUNC || s.st_bind() == E::STB_GNU_UNIQUE;
                }
            }
            ((nl, ng, strs), bits, gnu_ext)
        })
    };
    let symtab_gnu_ext = per_file.iter().any(|p| p.2);
    let (symtab_counts, symtab_members): (Vec<_>, Vec<_>) =
        per_file.into_iter().map(|(c, b, _)| (c, b)).unzip();
    let symtab_extra: Vec<u32> = if config.strip_all {
        Vec::new()
    } else {
        (0..res.num_globals() as u32)
            .into_par_iter()
            .filter(|&g| match res.defs[g as usize] {
                Def::Linker => true,
                Def::Shared { .. } => aux_index[g as usize] != NONE,
                Def::Undefined => false,
                Def::Object { .. } => false,
            })
            .collect()
    };
    SymtabSizes {
        counts: symtab_counts,
        members: symtab_members,
        extra: symtab_extra,
        gnu_ext: symtab_gnu_ext,
    }
}

/// Whether `.symtab` lists symbol `i` of object `f`: live definitions, without section, file and `.L` temporary
/// symbols (GNU ld's `-X`, always on), and without any local symbol under `-x` (`no_locals`).
pub fn symtab_includes(
    res: &Resolved,
    live: &Liveness,
    no_locals: bool,
    f: usize,
    i: usize,
) -> bool {
    let o = &res.objects[f];
    let s = &o.syms[i];
    let ty = s.st_type();
    if ty == E::STT_SECTION || ty == E::STT_FILE {
        return false;
    }
    let shndx = o.sym_shndx(i);
    if i < o.first_global {
        // `.L` checked on the string table in place: the name's length (a NUL search) is not needed here.
        let off = s.st_name.get(LE) as usize;
        if no_locals || off == 0 || o.strtab.get(off..).is_some_and(|n| n.starts_with(b".L")) {
            return false;
        }
        return shndx == E::SHN_ABS as u32
            || (shndx != 0
                && (shndx as usize) < o.sections.len()
                && live.is_live(f, shndx as usize));
    }
    // An undefined symbol is nobody's definition: checked first, as most of a C++ object's globals are references
    // and the definition table is read at random.
    if shndx == E::SHN_UNDEF as u32 {
        return false;
    }
    let g = res.object_ids[f][i - o.first_global];
    matches!(res.defs[g as usize], Def::Object { file, sym } if file as usize == f && sym as usize == i)
        && (shndx == E::SHN_ABS as u32
            || shndx == E::SHN_COMMON as u32
            || live.is_live(f, shndx as usize))
}
