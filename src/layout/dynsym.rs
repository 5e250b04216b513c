//! Layout pass: the dynamic symbol table. `.dynsym`'s entries (undefined ones first, then defined ones in
//! `.gnu.hash` bucket order), `.dynstr` (built whole here: needed libraries, names, versions, run paths), and the
//! needed versions (`.gnu.version_r`).

use super::slots::Slots;
use super::symbols::target_of;
use super::{Aux, Cx, DynSymbol, Verneed};
use crate::args::{Config, OutputKind};
use crate::elf;
use crate::index::{SharedId, SymId};
use crate::resolve::Resolved;
use crate::symbols::{SymProps, SymbolSpace, Target};
use crate::synthetic::hash::gnu_hash_buckets;
use crate::synthetic::versions::version_base_name;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// The dynamic symbol table and its strings.
pub struct DynamicSymbols {
    pub dynsyms: Vec<DynSymbol>,
    pub dynstr: Vec<u8>,
    /// Offsets of the strings in `dynstr` other than symbol names.
    pub dyn_strings: HashMap<Vec<u8>, u32>,
    /// `.dynstr` offsets of the needed libraries' names.
    pub needed: Vec<u32>,
    pub verneed: Verneed,
    /// Whether one of the symbols is an IFUNC.
    pub ifunc: bool,
}

/// `.dynstr` while it is built: its bytes, and the offsets of the strings in it other than symbol names.
struct DynStr {
    bytes: Vec<u8>,
    offsets: HashMap<Vec<u8>, u32>,
}

impl DynStr {
    /// The offset of `s`, appended the first time it is asked for.
    fn add(&mut self, s: &[u8]) -> u32 {
        if let Some(&o) = self.offsets.get(s) {
            return o;
        }
        let o = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        self.offsets.insert(s.to_vec(), o);
        o
    }
}

/// A `.dynsym` entry before the needed versions are numbered: with its import's (file, version), whose number
/// comes from the serial pass, and whether it is an IFUNC (the ELF header's OS ABI, `gnu_osabi`).
type Entry = (DynSymbol, Option<(SharedId, u16)>, bool);

pub fn dynamic_symbols(cx: &Cx, slots: &mut Slots) -> DynamicSymbols {
    let Cx {
        config, res, space, ..
    } = *cx;
    let Slots {
        dynsym_ids,
        aux,
        aux_index,
        relr_got,
        ..
    } = slots;
    let (dynsym_ids, aux_index, relr_got): (&[SymId], &[u32], &[u32]) =
        (dynsym_ids, aux_index, relr_got);
    // Dynamic symbol table: undefined ones first, then defined ones in .gnu.hash bucket order.
    let mut dynstr = DynStr {
        bytes: vec![0],
        offsets: HashMap::default(),
    };
    let mut needed = Vec::new();
    let mut dynsyms: Vec<DynSymbol> = Vec::new();
    let mut dynsym_ifunc = false;
    let mut verneed: Verneed = Vec::new();
    if cx.is_dynamic {
        let _t = crate::timing::span("dynamic symbol table");
        for (d, s) in res.shared.iter().enumerate() {
            if res.shared_needed[d] {
                needed.push(dynstr.add(s.soname.as_bytes()));
            }
        }
        // Needed versions are numbered after this file's own definitions (1 and the script's nodes).
        let mut next_version = 2 + res.version_defs.len() as u16;
        let mut version_of: HashMap<(SharedId, u16), u16> = HashMap::default();
        // Entries in parallel (names, versions of this output's definitions); an import's version needs a
        // number from the serial pass below, keyed (file, index).
        let parallel = crate::par::worth_parallel(dynsym_ids.len() * 8);
        let entries: Vec<Entry> = crate::par::map(dynsym_ids, parallel, |&id| {
            dynsym_entry(config, res, space, aux, aux_index, id)
        });
        // Needed versions numbered in first-use order, and their names into .dynstr.
        for &(_, iv, ifunc) in &entries {
            dynsym_ifunc |= ifunc;
            let Some((file, v)) = iv else { continue };
            if version_of.contains_key(&(file, v)) {
                continue;
            }
            let so = &res.shared[file.index()];
            let vname = so.version_names[v as usize].unwrap();
            need_version(
                &mut verneed,
                &mut dynstr,
                so.soname.as_bytes(),
                vname,
                next_version,
            );
            version_of.insert((file, v), next_version);
            next_version += 1;
        }
        let with_version = |(mut e, iv, _): Entry| {
            if let Some(key) = iv {
                e.version = version_of[&key];
            }
            e
        };
        let mut entries: Vec<DynSymbol> = if parallel {
            entries.into_par_iter().map(with_version).collect()
        } else {
            entries.into_iter().map(with_version).collect()
        };
        add_version_node_symbols(res, &mut entries);
        copy_names(&mut entries, &mut dynstr.bytes, parallel);
        dynsyms = hash_order(entries, &dynstr.bytes, parallel);
        for (i, d) in dynsyms.iter().enumerate().filter(|(_, d)| d.id.is_some()) {
            let k = aux_index[d.id.index()];
            aux[k as usize].dynsym = i as u32 + 1;
        }
        // An object with DT_RELR requires version GLIBC_ABI_DT_RELR of a versioned libc, as GNU ld and lld
        // add it: a glibc whose ld.so predates DT_RELR lacks that version and refuses to load the object,
        // instead of silently skipping its relative relocations.
        let packs = !relr_got.is_empty() || cx.scan.relr.iter().any(|v| !v.is_empty());
        if config.pack_relative_relocs && packs {
            let libc = res.shared.iter().enumerate().position(|(d, so)| {
                res.shared_needed[d]
                    && so.soname.starts_with("libc.so")
                    && so.version_names.iter().any(Option::is_some)
            });
            if let Some(d) = libc {
                let soname = res.shared[d].soname.as_bytes();
                need_version(
                    &mut verneed,
                    &mut dynstr,
                    soname,
                    b"GLIBC_ABI_DT_RELR",
                    next_version,
                );
            }
        }
        add_dynamic_section_strings(cx, &dynsyms, &mut dynstr);
    }
    DynamicSymbols {
        dynsyms,
        dynstr: dynstr.bytes,
        dyn_strings: dynstr.offsets,
        needed,
        verneed,
        ifunc: dynsym_ifunc,
    }
}

/// The `.dynsym` entry of symbol `id` (its GOT/PLT record in `aux`, at its `aux_index`): its name and version (a
/// definition's own, without the `@VERSION` of a hidden one), whether it is defined here and hashed.
#[inline]
fn dynsym_entry(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    aux: &[Aux],
    aux_index: &[u32],
    id: SymId,
) -> Entry {
    let target = target_of(res, space, id);
    let mut name = res.name(id);
    let mut version = 1u16;
    let x = &aux[aux_index[id.index()] as usize];
    let copied = x.copied;
    let canonical = x.canonical && config.kind != OutputKind::Shared;
    let mut import_version = None;
    if let Target::Imported { file, sym } = target {
        let v = res.shared[file.index()].version(sym as usize);
        if v >= 2
            && let Some(Some(_)) = res.shared[file.index()].version_names.get(v as usize)
        {
            import_version = Some((file, v));
        }
    }
    let defined = !matches!(target, Target::Imported { .. } | Target::Undefined { .. }) || copied;
    if defined && !copied {
        version = res.sym_version.get(id.index()).copied().unwrap_or(1);
        // `name@VERSION` (.symver, non-default): exported as `name`, hidden version.
        if version & 0x8000 != 0
            && let Some(at) = memchr::memchr(b'@', name)
        {
            name = &name[..at];
        }
    }
    let entry = DynSymbol {
        id,
        name,
        name_off: 0,
        gnu_hash: 0,
        version,
        defined,
        hashed: defined || canonical,
    };
    // A global's IFUNC bit from its properties: the symbol's own type is a cache and TLB miss in its defining
    // object's symbol table (clang-so: 75K of them, 14 ms at --threads=1).
    let ifunc = match space.gprops.get(id.index()) {
        Some(&b) => b & SymProps::IFUNC != 0,
        None => crate::symbols::is_ifunc(res, target),
    };
    (entry, import_version, ifunc)
}

/// Records needed version `vname` (number `k`) of the library named `soname` in `.gnu.version_r`, its name in
/// `.dynstr`.
fn need_version(
    verneed: &mut Verneed,
    dynstr: &mut DynStr,
    soname: &[u8],
    vname: &'static [u8],
    k: u16,
) {
    let soname_off = dynstr.offsets[soname] as usize;
    let name_off = dynstr.add(vname);
    match verneed.iter_mut().find(|(so, _)| *so == soname_off) {
        Some((_, list)) => list.push((vname, k, name_off)),
        None => verneed.push((soname_off, vec![(vname, k, name_off)])),
    }
}

/// Each named version node is also an absolute symbol of its own name and version (`LIB_1.0@@LIB_1.0`), as GNU
/// ld makes them: tools that list a library's interface (dpkg-gensymbols) expect them.
fn add_version_node_symbols(res: &Resolved, entries: &mut Vec<DynSymbol>) {
    for (k, (name, _)) in res.version_defs.iter().enumerate() {
        entries.push(DynSymbol {
            id: SymId::NONE,
            name: Box::leak(name.clone().into_bytes().into_boxed_slice()),
            name_off: 0,
            gnu_hash: 0,
            version: k as u16 + 2,
            defined: true,
            hashed: true,
        });
    }
}

/// The strings `.dynamic` and `.gnu.version_d` name: the run path, the soname, the audit libraries, and the
/// version definitions (their names shared with their nodes' symbols in `dynsyms`) with their dependencies.
fn add_dynamic_section_strings(cx: &Cx, dynsyms: &[DynSymbol], dynstr: &mut DynStr) {
    let Cx { config, res, .. } = *cx;
    // A version node's absolute symbol and the node's definition share one name in `.dynstr`, as in GNU ld's
    // output: readelf and objdump recognise the node's symbol by that (they print `LIB_1`, not `LIB_1@@LIB_1`).
    // First, so that a soname equal to a node's name (`--default-symver`'s node) is that string too.
    for d in dynsyms.iter().filter(|d| d.id.is_none()) {
        dynstr.offsets.entry(d.name.to_vec()).or_insert(d.name_off);
    }
    if !config.rpath.is_empty() {
        dynstr.add(config.rpath.join(":").as_bytes());
    }
    if let Some(so) = &config.soname {
        dynstr.add(so.as_bytes());
    }
    for list in [&config.audit, &config.depaudit] {
        if !list.is_empty() {
            dynstr.add(list.join(":").as_bytes());
        }
    }
    if !res.version_defs.is_empty() {
        dynstr.add(version_base_name(config).as_bytes());
        for (name, deps) in &res.version_defs {
            dynstr.add(name.as_bytes());
            for d in deps {
                dynstr.add(d.as_bytes());
            }
        }
    }
}

/// Appends the names of `entries` to `.dynstr` and records their offsets. Every dynamic symbol has its own name, so
/// there is no equal string to look for: offsets come from a prefix sum over chunks of entries, then each chunk's
/// names are copied into its own range of `.dynstr`, all in parallel.
fn copy_names(entries: &mut [DynSymbol], dynstr: &mut Vec<u8>, parallel: bool) {
    let base = dynstr.len();
    const CHUNK: usize = 4096;
    let names_size = |c: &[DynSymbol]| c.iter().map(|e| e.name.len() + 1).sum();
    let sizes: Vec<usize> = if parallel {
        entries.par_chunks(CHUNK).map(names_size).collect()
    } else {
        entries.chunks(CHUNK).map(names_size).collect()
    };
    let mut starts = Vec::with_capacity(sizes.len());
    let mut end = base;
    for size in &sizes {
        starts.push(end);
        end += size;
    }
    dynstr.reserve(end - base);
    {
        // Disjoint byte ranges of the uninitialised tail, one per chunk, in order.
        let mut rest = &mut dynstr.spare_capacity_mut()[..end - base];
        let mut ranges = Vec::with_capacity(sizes.len());
        for &size in &sizes {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(size);
            ranges.push(head);
            rest = tail;
        }
        let parts: Vec<_> = entries.chunks_mut(CHUNK).zip(ranges).zip(starts).collect();
        crate::par::for_each_owned(parts, parallel, |((chunk, out), start)| {
            let mut at = 0;
            for e in chunk {
                e.name_off = (start + at) as u32;
                let n = e.name.len();
                // SAFETY: `out` holds this chunk's names and terminators exactly (its size is their sum); the
                // bytes are copied into it, not read.
                unsafe {
                    let to = out.as_mut_ptr().add(at).cast::<u8>();
                    std::ptr::copy_nonoverlapping(e.name.as_ptr(), to, n);
                    to.add(n).write(0);
                }
                at += n + 1;
            }
        });
    }
    // SAFETY: the loop above wrote every byte of the `end - base` reserved ones (the chunks' sizes sum to it).
    unsafe { dynstr.set_len(end) };
}

/// The dynamic symbol table's order: undefined entries first, then the hashed ones in `.gnu.hash` bucket order
/// (stable), each name hashed once, in parallel.
fn hash_order(entries: Vec<DynSymbol>, dynstr: &[u8], parallel: bool) -> Vec<DynSymbol> {
    // Two filters, not `partition`: partitioned, this pass took 2.4 ms longer on clang-so (150K entries).
    let (undef, mut def): (Vec<DynSymbol>, Vec<DynSymbol>) = if parallel {
        (
            entries.par_iter().filter(|e| !e.hashed).copied().collect(),
            entries.par_iter().filter(|e| e.hashed).copied().collect(),
        )
    } else {
        entries.iter().partition(|e| !e.hashed)
    };
    drop(entries);
    // .gnu.hash bucket order, stable: each name hashed once, in parallel (a comparison sort calling the
    // hash per comparison cost 200 ms on a big .so).
    let nbuckets = gnu_hash_buckets(def.len());
    // Hashed from the fresh .dynstr copy: the names in the inputs' string tables are scattered over every
    // mapping (a TLB and cache miss each), the copy is contiguous.
    let hash = |d: &mut DynSymbol| {
        let at = d.name_off as usize;
        d.gnu_hash = elf::gnu_hash(&dynstr[at..at + d.name.len()]);
    };
    let bucket = |(i, d): (usize, &DynSymbol)| (d.gnu_hash % nbuckets, i as u32);
    let mut order: Vec<(u32, u32)>;
    let mut dynsyms = undef;
    if parallel {
        def.par_iter_mut().for_each(hash);
        order = def.par_iter().enumerate().map(bucket).collect();
        order.par_sort_unstable();
        dynsyms.par_extend(order.par_iter().map(|&(_, i)| def[i as usize]));
    } else {
        def.iter_mut().for_each(hash);
        order = def.iter().enumerate().map(bucket).collect();
        order.sort_unstable();
        dynsyms.extend(order.iter().map(|&(_, i)| def[i as usize]));
    }
    dynsyms
}
