//! `--emit-relocs` (`-q`): writes the `.rela<name>` sections that `layout::emit_relocs` planned, one entry per
//! input relocation, in parallel per file (each input section's entries are a block of their own). Each entry is
//! the input's relocation moved to the output, as GNU ld writes it: at the field's output address; naming the
//! output `.symtab`'s entry for a global or a local, or the output section's section symbol (the addend then
//! counts from the output section's start, which for merged strings is where the piece went); with the type the
//! architecture gives a relaxed GOT load (`Arch::relaxed_reloc`; the relaxation is decided again here, as
//! `write::apply` decided it, so that the normal path does no extra work). A relocation whose target was discarded
//! becomes a `R_NONE` at its place, and one inside a dropped `.eh_frame` record a `R_NONE` at the previous entry's
//! place, as in GNU ld.

use super::{Image, WriteCx};
use crate::arch::{Arch, RelKind, Relax};
use crate::diag::{Errors, Result};
use crate::elf::LE;
use crate::index::{FileId, NONE, OsecId, SecIdx};
use crate::layout::emit_relocs::Plan;
use crate::layout::{EhRecord, Layout, section_offset_addr};
use crate::parse::{ObjectFile, Sec, SectionKind};
use crate::reloc::{Action, Mode, decide, props};
use object::elf as E;
use rayon::prelude::*;

/// Where the symbols went in `.symtab` (`synthetic::symtab`'s order: the null entry, the section symbols, each
/// file's locals, the nameless file symbol, each file's globals made local, the local extras, each file's other
/// globals, the global extras).
struct SymIndex {
    /// Per file: the index of its first local entry.
    starts: Vec<u32>,
    /// Per file, per 64 symbols: how many of its symbols before them are in `.symtab`.
    ranks: Vec<Vec<u32>>,
    /// Per global: its entry, or `NONE`.
    global: Vec<u32>,
    /// Per output section: its section symbol's entry, or 0.
    section: Vec<u32>,
}

impl SymIndex {
    fn of(cx: &WriteCx) -> SymIndex {
        let (res, st) = (cx.res, &cx.lay.symtab);
        let mut section = vec![0u32; cx.lay.osecs.len()];
        for (k, &o) in st.section_syms.iter().enumerate() {
            section[o.index()] = 1 + k as u32;
        }
        let (mut local, mut global) = (1 + st.section_syms.len() as u32, st.first_global());
        let mut starts = vec![0; st.counts.len()];
        // Per file: the entry of its first forced local and of its first global (`symtab::split_per_file`).
        let mut global_starts = vec![(0, 0); st.counts.len()];
        let mut forced = st.first_forced();
        for f in st.files() {
            let (nl, ng, _) = st.counts[f.index()];
            let nf = st.forced[f.index()];
            starts[f.index()] = local;
            global_starts[f.index()] = (forced, global);
            local += nl;
            forced += nf;
            global += ng - nf;
        }
        let ranks: Vec<Vec<u32>> = st
            .members
            .par_iter()
            .map(|bits| {
                let mut n = 0u32;
                bits.iter()
                    .map(|w| {
                        let before = n;
                        n += w.count_ones();
                        before
                    })
                    .collect()
            })
            .collect();
        let mut idx = SymIndex {
            starts,
            ranks,
            global: vec![NONE; res.num_globals()],
            section,
        };
        for (f, o) in res.objects.iter().enumerate() {
            let Some(bits) = st.members.get(f) else {
                continue;
            };
            let (mut forced, mut global) = global_starts[f];
            for i in o.first_global..o.syms.len().min(64 * bits.len()) {
                if idx.is_member(i, bits) {
                    let g = res.object_ids[f][i - o.first_global];
                    let next = match st.is_forced(res, FileId::new(f), i) {
                        true => &mut forced,
                        false => &mut global,
                    };
                    idx.global[g.index()] = *next;
                    *next += 1;
                }
            }
        }
        for (k, &g) in st.extra.iter().enumerate() {
            idx.global[g.index()] = global + k as u32;
        }
        // The linker's symbols made local follow the files' locals.
        let first_extra_local = st.first_global() - st.extra_local.len() as u32;
        for (k, &g) in st.extra_local.iter().enumerate() {
            idx.global[g.index()] = first_extra_local + k as u32;
        }
        idx
    }

    fn is_member(&self, i: usize, bits: &[u64]) -> bool {
        bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    /// The entry of local symbol `i` of file `f`, a member (its locals come first in its symbol table, so its rank
    /// among the members counts from its first local entry).
    fn file_entry(&self, f: FileId, i: usize, bits: &[u64]) -> u32 {
        let rank =
            self.ranks[f.index()][i / 64] + (bits[i / 64] & ((1u64 << (i % 64)) - 1)).count_ones();
        self.starts[f.index()] + rank
    }
}

/// Writes every planned `.rela` section.
pub fn write<A: Arch>(cx: &WriteCx, plan: &Plan, img: Image) -> Result<()> {
    let idx = SymIndex::of(cx);
    let errors: Vec<String> = plan
        .files
        .par_iter()
        .enumerate()
        .flat_map_iter(|(f, secs)| {
            let idx = &idx;
            let f = FileId::new(f);
            secs.iter().filter_map(move |&(s, rela, first)| {
                let o = &cx.res.objects[f.index()];
                let n = o.sec(s).relas().len() as u64;
                let at = cx.lay.osecs[rela.index()].offset + 24 * first;
                // SAFETY: the layout gave each input section's entries a block of their own in a section that no
                // other writer touches.
                let Some(out) = (unsafe { img.slice(at, 24 * n) }) else {
                    return Some(format!("{}: emitted relocations out of place", o.name));
                };
                write_section::<A>(cx, idx, f, s, out).err()
            })
        })
        .collect();
    match errors.is_empty() {
        true => Ok(()),
        false => Err(Errors(errors)),
    }
}

/// The section index of the output section a `.rela` section describes (`sh_info`).
pub fn target_shndx(lay: &Layout, rela: OsecId) -> u32 {
    (lay.emit_relocs.as_ref())
        .and_then(|p| p.target_of(rela))
        .map_or(0, |t| lay.osecs[t.index()].shndx)
}

/// The entries of section `s` of object `f`.
fn write_section<A: Arch>(
    cx: &WriteCx,
    idx: &SymIndex,
    f: FileId,
    s: SecIdx,
    out: &mut [u8],
) -> std::result::Result<(), String> {
    let (lay, o) = (cx.lay, &cx.res.objects[f.index()]);
    let sec = o.sec(s);
    let base = lay.sec_addr[f.index()][s.index()];
    let recs = (sec.kind == SectionKind::EhFrame).then(|| lay.eh_records.get(f, s));
    let m = Mode::of(cx.config);
    let mut last = base;
    let mut skip_next = false;
    for (r, e) in sec.relas().iter().zip(out.chunks_exact_mut(24)) {
        let (off, r_type) = (r.r_offset.get(LE), r.r_type(LE, false));
        let (a, sym_idx) = (r.r_addend.get(LE), r.r_sym(LE, false) as usize);
        let place = match recs {
            None => Some(base.wrapping_add(off)),
            Some(recs) => eh_frame_place(lay, recs, f, s, base, off),
        };
        let Some(mut p) = place else {
            put(e, last, 0, A::R_NONE, 0);
            continue;
        };
        last = p;
        let mut r_type_out = r_type;
        if std::mem::take(&mut skip_next) || !sec.is_alloc() {
            // The call of a relaxed TLS sequence, which `write::apply` skips too; or debug data.
        } else if let Some(x) = relaxation::<A>(cx, &m, f, &sec, r_type, sym_idx, off) {
            skip_next = A::relax_consumes_next(x);
            if let Some((t, moved)) = A::relaxed_reloc(r_type, x) {
                r_type_out = t;
                p = p.wrapping_add(moved as u64);
            }
        }
        match target(cx, idx, o, f, sym_idx, a) {
            Some((sym, addend)) => put(e, p, sym, r_type_out, addend),
            None => put(e, p, 0, A::R_NONE, 0),
        }
    }
    Ok(())
}

/// The relaxation `write::apply` performed on the relocation at `off`, if any: only GOT loads and the TLS
/// sequences that consume the next relocation matter here.
fn relaxation<A: Arch>(
    cx: &WriteCx,
    m: &Mode,
    f: FileId,
    sec: &Sec,
    r_type: u32,
    sym_idx: usize,
    off: u64,
) -> Option<Relax> {
    let kind = A::classify(r_type);
    if !matches!(kind, RelKind::GotPcRel | RelKind::TlsGd | RelKind::TlsLd) {
        return None;
    }
    let sym = cx.lookup(f, sym_idx)?;
    let mut p = props(cx.res, cx.config, cx.space, &sym);
    if p.weak_rule {
        p = crate::reloc::weak_rule(p, kind, sec.flags(), m).0;
    }
    let writable = sec.flags() & E::SHF_WRITE as u64 != 0;
    match decide::<A>(m, kind, r_type, p, writable, sec.data(), off) {
        Action::Relax(x) => Some(x),
        _ => None,
    }
}

/// The output address of offset `off` of an `.eh_frame` input section placed at `block`: `None` inside a record
/// the output dropped.
fn eh_frame_place(
    lay: &Layout,
    recs: &[EhRecord],
    f: FileId,
    s: SecIdx,
    block: u64,
    off: u64,
) -> Option<u64> {
    let k = recs.partition_point(|r| r.in_off + r.size <= off);
    match recs.get(k) {
        Some(r) if r.in_off <= off && r.out_off == NONE as u64 => None,
        Some(r) if r.in_off <= off => Some(block + r.out_off + (off - r.in_off)),
        _ => Some(section_offset_addr(lay, f, s, off).unwrap_or(block)),
    }
}

/// The output `.symtab` entry and addend of a relocation against symbol `i` of object `f` with addend `a`, or
/// `None` if the symbol's section was discarded.
fn target(
    cx: &WriteCx,
    idx: &SymIndex,
    o: &ObjectFile,
    f: FileId,
    i: usize,
    a: i64,
) -> Option<(u32, i64)> {
    let lay = cx.lay;
    if i == 0 {
        return Some((0, a));
    }
    let bits = &lay.symtab.members[f.index()];
    if i >= o.first_global {
        let g = *cx.res.object_ids[f.index()].get(i - o.first_global)?;
        let n = idx.global[g.index()];
        return (n != NONE).then_some((n, a));
    }
    let st = o.syms.get(i)?;
    if st.st_type() != E::STT_SECTION {
        return idx
            .is_member(i, bits)
            .then(|| (idx.file_entry(f, i, bits), a));
    }
    // A section symbol: the output section's, with the addend counting from its start.
    let t = o.sym_shndx(i) as usize;
    let osec = match o.sections.get(t)?.kind {
        SectionKind::Merge => {
            let (_, m) = lay.merge_slot(f, SecIdx::new(t))?;
            lay.merges[m as usize].osec
        }
        _ => *lay.place_osec[f.index()].get(t)?,
    };
    let n = *idx.section.get(osec.get()?.index())?;
    let to = st.st_value.get(LE).wrapping_add(a as u64);
    let at = section_offset_addr(lay, f, SecIdx::new(t), to)?;
    (n != 0).then(|| (n, at.wrapping_sub(lay.osecs[osec.index()].addr) as i64))
}

fn put(e: &mut [u8], offset: u64, sym: u32, r_type: u32, addend: i64) {
    e[0..8].copy_from_slice(&offset.to_le_bytes());
    e[8..16].copy_from_slice(&(((sym as u64) << 32) | r_type as u64).to_le_bytes());
    e[16..24].copy_from_slice(&addend.to_le_bytes());
}
