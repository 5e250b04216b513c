//! Pass 10: write the output.
//!
//! Input: the layout. Output: the file. The image is filled in parallel (input sections per file, each into the
//! bytes the layout reserved for it, relocations applied while copying), then the synthetic sections,
//! `.eh_frame_hdr` and the symbol table at once (each writer holding its own output sections, `Parts`, and writing
//! through the section's `synthetic` module), then the headers, then the build id over the finished bytes. Where the image lives and how it takes the output's name
//! (a new file renamed into place, or the old output written in place when nothing else uses it and writing is
//! proved not to fail) is `output_file`'s business.

use crate::arch::Arch;
use crate::args::{BuildId, Config, OutputKind};
use crate::diag::{Errors, Result};
use crate::elf::{LE, align_up};
use crate::gc::Liveness;
use crate::index::{FileId, OsecId, SecIdx, SymId};
use crate::layout::{self, Layout, NONE, Part, Synth};
use crate::output_file::OutputFile;
use crate::parse::SectionKind;
use crate::resolve::Resolved;
use crate::symbols::{self, SymRef, SymbolSpace, Target};
use crate::synthetic::dynamic::Value;
use crate::synthetic::{
    dynsym, eh_frame_hdr, got_plt, hash, interp, notes, rela, relr, shstrtab, symtab, versions,
};
use object::elf as E;
use rayon::prelude::*;

mod apply;
mod binary;
mod compress_debug;
pub mod elf32;
mod emit_relocs;

pub use crate::synthetic::rela::DynRel;

/// Where one input section's dynamic relocations go: straight into the slots the layout reserved for it, in
/// `.rela.dyn` and in the IRELATIVE area (collecting them in a vector per section first was about 27K allocations
/// on clang-so, and a second copy). A relocation beyond the reserved slots is counted, not written, so that it
/// cannot overwrite another section's; the caller reports the mismatch.
#[derive(Default)]
pub struct DynRelSink<'o> {
    relocs: &'o mut [u8],
    n: usize,
    irel: &'o mut [u8],
    n_irel: usize,
}

impl DynRelSink<'_> {
    #[inline]
    pub fn push(&mut self, r: DynRel) {
        Self::put(self.relocs, &mut self.n, &r);
    }
    pub fn push_irelative(&mut self, r: DynRel) {
        Self::put(self.irel, &mut self.n_irel, &r);
    }
    /// Writes `r` into slot `*n` of `slots` if there is one, and counts it either way.
    #[inline]
    fn put(slots: &mut [u8], n: &mut usize, r: &DynRel) {
        if let Some(out) = slots.get_mut(24 * *n..24 * *n + 24) {
            rela::put(out, r);
        }
        *n += 1;
    }
    /// Whether the relocations pushed fill the reserved slots exactly.
    fn filled(&self) -> bool {
        24 * self.n == self.relocs.len() && 24 * self.n_irel == self.irel.len()
    }
}

pub struct WriteCx<'a> {
    pub config: &'a Config,
    pub res: &'a Resolved,
    pub space: &'a SymbolSpace,
    pub lay: &'a Layout,
}

impl WriteCx<'_> {
    pub fn pic(&self) -> bool {
        self.config.kind != OutputKind::Exec
    }
    #[inline(always)]
    pub fn lookup(&self, f: FileId, i: usize) -> Option<SymRef> {
        symbols::lookup(self.res, self.space, f, i)
    }
    pub fn section_addr(&self, f: FileId, s: SecIdx) -> u64 {
        layout::section_offset_addr(self.lay, f, s, 0).unwrap_or(0)
    }
    /// S for a relocation against `sym` with addend `a`: for a section symbol in a merge section the piece is
    /// chosen by `value + a` (lld's rule), and the returned S is such that S + a lands inside that piece (likewise
    /// for .eh_frame records). `ifunc` is the symbol's IFUNC property, as only IFUNCs can have an `.iplt` stub.
    /// Globals' addresses come straight from `Layout::addrs`: their defining entries lie in other files' symbol
    /// tables, a cache miss each, and are never section symbols.
    pub fn sym_value(&self, sym: &SymRef, a: i64, ifunc: bool) -> u64 {
        if sym.id.index() >= self.res.num_globals()
            && let Target::Object { file, sym: si } = sym.target
        {
            let o = &self.res.objects[file.index()];
            let s = &o.syms[si as usize];
            if s.st_type() == E::STT_SECTION {
                let shndx = o.sym_shndx(si as usize) as usize;
                if shndx < o.sections.len() && o.sections[shndx].kind != SectionKind::Regular {
                    let off = s.st_value.get(LE).wrapping_add(a as u64);
                    return layout::section_offset_addr(self.lay, file, SecIdx::new(shndx), off)
                        .map_or(0, |v| v.wrapping_sub(a as u64));
                }
            }
        }
        if ifunc
            && let Some(x) = self.lay.aux_of(sym.id)
            && x.iplt != NONE
        {
            return self.lay.synth_addr(Synth::Iplt) + self.lay.plt.iplt_entry * x.iplt as u64;
        }
        self.lay.addrs[sym.id.index()]
    }
    /// For non-allocated sections: S + A, or `None` if the target was discarded (tombstone). The hot path of
    /// debug-info links: section symbols go straight to `Layout::sec_addr`.
    pub fn nonalloc_value(&self, sym: &SymRef, a: i64) -> Option<u64> {
        if let Target::Object { file, sym: si } = sym.target {
            let o = &self.res.objects[file.index()];
            let st = &o.syms[si as usize];
            let shndx = o.sym_shndx(si as usize) as usize;
            if st.st_type() == E::STT_SECTION && shndx != 0 && shndx < o.sections.len() {
                let off = st.st_value.get(LE).wrapping_add(a as u64);
                return match o.sections[shndx].kind {
                    SectionKind::Regular => {
                        let base = self.lay.sec_addr[file.index()][shndx];
                        if base == layout::NO_ADDR {
                            self.kept_copy_addr(file, SecIdx::new(shndx), off)
                        } else {
                            Some(base.wrapping_add(off))
                        }
                    }
                    // Merge pieces are chosen by value + A (lld's rule); .eh_frame by record.
                    _ => layout::section_offset_addr(self.lay, file, SecIdx::new(shndx), off),
                };
            }
        }
        if !layout::sym_target_is_live(self.res, self.lay, sym.target) {
            return None;
        }
        Some(self.lay.addrs[sym.id.index()].wrapping_add(a as u64))
    }
    /// Where offset `off` of object `f`'s discarded debug section `s` is in its kept COMDAT copy
    /// (`Resolved::comdat_copy`).
    #[cold]
    pub fn kept_copy_addr(&self, f: FileId, s: SecIdx, off: u64) -> Option<u64> {
        let (g, t) = self.res.comdat_copy(f, s)?;
        let base = self.lay.sec_addr[g.index()][t.index()];
        (base != layout::NO_ADDR).then(|| base.wrapping_add(off))
    }
    pub fn plt_addr(&self, id: SymId) -> Option<u64> {
        let x = self.lay.aux_of(id)?;
        if x.plt != NONE {
            let plt = &self.lay.plt;
            Some(self.lay.synth_addr(Synth::Plt) + plt.header + plt.entry * x.plt as u64)
        } else if x.iplt != NONE {
            Some(self.lay.synth_addr(Synth::Iplt) + self.lay.plt.iplt_entry * x.iplt as u64)
        } else {
            None
        }
    }
    pub fn got_addr(&self, id: SymId) -> u64 {
        self.lay
            .aux_of(id)
            .map_or(0, |x| self.lay.got_slot_addr(x.got))
    }
    pub fn gottp_addr(&self, id: SymId) -> u64 {
        self.lay
            .aux_of(id)
            .map_or(0, |x| self.lay.got_slot_addr(x.gottp))
    }
    pub fn got_base(&self) -> u64 {
        self.lay
            .synth_part(Synth::GotPlt)
            .filter(|o| o.shndx != 0)
            .map_or_else(|| self.lay.synth_addr(Synth::Got), |o| o.addr)
    }
    /// x86-64 variant II: the thread pointer is the end of the TLS block, aligned.
    pub fn tp_offset(&self, addr: u64) -> u64 {
        let tp = self.lay.tls_start
            + align_up(self.lay.tls_end - self.lay.tls_start, self.lay.tls_align);
        addr.wrapping_sub(tp)
    }
    /// A symbol table's `st_value`: the address, or for a TLS symbol its offset in the TLS template.
    pub fn symbol_value(&self, st_type: u8, addr: u64) -> u64 {
        if st_type == E::STT_TLS {
            self.dtp_offset(addr)
        } else {
            addr
        }
    }
    /// The output section index of a defined object symbol, from where its input section went.
    pub fn object_sym_shndx(&self, f: FileId, i: usize) -> Option<u16> {
        let o = &self.res.objects[f.index()];
        let shndx = o.sym_shndx(i);
        // A common symbol a script discards: absolute 0, as GNU ld exports it.
        if shndx == E::SHN_ABS as u32
            || (shndx == E::SHN_COMMON as u32 && self.res.commons_discarded)
        {
            return Some(E::SHN_ABS);
        }
        let sec = o.sections.get(shndx as usize)?;
        let osec = if sec.kind == SectionKind::Merge {
            let (_, m) = self.lay.merge_slot(f, SecIdx::new(shndx as usize))?;
            self.lay.merges.get(m as usize)?.osec
        } else {
            *self.lay.place_osec[f.index()].get(shndx as usize)?
        };
        let n = self.lay.osecs.get(osec.index())?.shndx;
        (n != 0).then_some(n as u16)
    }
    pub fn dtp_offset(&self, addr: u64) -> u64 {
        addr.wrapping_sub(self.lay.tls_start)
    }
    pub fn dynsym_index(&self, id: SymId) -> u32 {
        self.lay
            .aux_of(id)
            .map_or(0, |x| if x.dynsym == NONE { 0 } else { x.dynsym })
    }
}

/// Shared, disjoint writes into the output image from parallel tasks.
#[derive(Clone, Copy)]
struct Image {
    ptr: *mut u8,
    len: usize,
}
unsafe impl Send for Image {}
unsafe impl Sync for Image {}

impl Image {
    /// SAFETY: callers write only ranges the layout gave them exclusively (distinct input sections and synthetic
    /// sections never overlap).
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, off: u64, len: u64) -> Option<&mut [u8]> {
        let end = off.checked_add(len)?;
        if end as usize > self.len {
            return None;
        }
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off as usize), len as usize) })
    }
}

/// Disjoint parts of the output image, each at its file offset and indexed by file offsets like the whole image
/// (`parts[a..b]`, `parts[a..]` to the end of the part holding `a`), so that writers running at the same time can
/// each hold the output sections they write and keep the image's offsets. Indexing outside every part panics, like
/// indexing outside the image: a writer's sections come from the layout, not from the inputs.
struct Parts<'a>(Vec<(usize, &'a mut [u8])>);

impl<'a> Parts<'a> {
    /// Splits `bytes` into one `Parts` per group of ranges (output sections, which never overlap; empty ranges are
    /// left out).
    fn split<const N: usize>(
        bytes: &'a mut [u8],
        groups: &[Vec<std::ops::Range<usize>>; N],
    ) -> [Parts<'a>; N] {
        let mut ranges: Vec<(std::ops::Range<usize>, usize)> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, list)| list.iter().map(move |r| (r.clone(), g)))
            .filter(|(r, _)| r.start < r.end)
            .collect();
        ranges.sort_unstable_by_key(|(r, _)| r.start);
        let mut out: [Parts<'a>; N] = std::array::from_fn(|_| Parts(Vec::new()));
        let (mut rest, mut at) = (bytes, 0usize);
        for (r, g) in ranges {
            assert!(r.start >= at, "output parts overlap at {:#x}", r.start);
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(r.start - at);
            let (part, tail) = tail.split_at_mut(r.end - r.start);
            out[g].0.push((r.start, part));
            (rest, at) = (tail, r.end);
        }
        out
    }

    /// The part that holds `start..end`. An empty range (or `start..` in `parts[start..]`) goes to the part that
    /// holds the byte at `start` if there is one, since parts can be adjacent (`.rela.plt` may start where
    /// `.rela.dyn` ends), else to the part that ends there.
    fn find(&self, start: usize, end: usize) -> usize {
        let holds = |end: usize| {
            self.0
                .iter()
                .position(|(at, p)| *at <= start && end <= at + p.len())
        };
        holds(end.max(start + 1))
            .or_else(|| if end <= start { holds(start) } else { None })
            .unwrap_or_else(|| panic!("output bytes {start:#x}..{end:#x} are not this writer's"))
    }

    /// Takes out the part starting at `start`.
    fn take(&mut self, start: usize) -> Option<&'a mut [u8]> {
        let k = self.0.iter().position(|(at, _)| *at == start)?;
        Some(self.0.swap_remove(k).1)
    }
}

impl std::ops::Index<std::ops::Range<usize>> for Parts<'_> {
    type Output = [u8];
    fn index(&self, r: std::ops::Range<usize>) -> &[u8] {
        let (at, p) = &self.0[self.find(r.start, r.end)];
        &p[r.start - at..r.end - at]
    }
}

impl std::ops::IndexMut<std::ops::Range<usize>> for Parts<'_> {
    fn index_mut(&mut self, r: std::ops::Range<usize>) -> &mut [u8] {
        let k = self.find(r.start, r.end);
        let (at, p) = &mut self.0[k];
        &mut p[r.start - *at..r.end - *at]
    }
}

impl std::ops::Index<std::ops::RangeFrom<usize>> for Parts<'_> {
    type Output = [u8];
    fn index(&self, r: std::ops::RangeFrom<usize>) -> &[u8] {
        let (at, p) = &self.0[self.find(r.start, r.start)];
        &p[r.start - at..]
    }
}

impl std::ops::IndexMut<std::ops::RangeFrom<usize>> for Parts<'_> {
    fn index_mut(&mut self, r: std::ops::RangeFrom<usize>) -> &mut [u8] {
        let k = self.find(r.start, r.start);
        let (at, p) = &mut self.0[k];
        &mut p[r.start - *at..]
    }
}

/// What writes `.gdb_index` into its place in the output (`crate::gdb_index::Index::write`).
pub type GdbIndexWriter<'a> = dyn Fn(&mut [u8]) + Sync + 'a;

/// Writes the output: its file opened (`output_file`), the image filled by the writers, then put in place.
/// `gdb_index`: writes the `.gdb_index` section's bytes (`crate::gdb_index`, already sized and placed) into its
/// place.
pub fn write<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    live: &Liveness,
    lay: &mut Layout,
    gdb_index: Option<&GdbIndexWriter<'_>>,
) -> Result<()> {
    let apart = match config.compress_debug {
        Some(how) => Some(compress_debug::compress::<A>(
            config, res, space, live, lay, how,
        )?),
        None => None,
    };
    let dynstr = std::mem::take(&mut lay.dynstr);
    let lay: &Layout = lay;
    let t = crate::timing::span("open output");
    let dynstr_range = lay.synth_part(Synth::Dynstr).map_or(0..0, |sec| {
        sec.offset as usize..(sec.offset + sec.size) as usize
    });
    // .dynstr's pages first (faulted in, then copied), so its heap copy is freed before the peak.
    let mut out = OutputFile::open(
        config,
        lay.file_size,
        lay.writes_proven,
        dynstr_range.clone(),
        untouched(lay),
    )?;
    put_dynstr(lay, out.bytes(), dynstr);
    drop(t);
    // The heap freed so far goes back to the kernel (`release_free_heap`) while the threads fault in a new output's
    // pages or zero the old one's where no writer below covers it (`zero_ranges`).
    //
    // With more than one thread the heap is released by a thread of its own, beside these and the writers after
    // them, and waited for once they are done: glibc trims one arena after another and each worker has one, so
    // the release grows with the thread count, and as one side of a join with the zeroing it was serial time.
    let trim = if rayon::current_num_threads() > 1 {
        std::thread::Builder::new().spawn(release_free_heap).ok()
    } else {
        None
    };
    let _t = crate::timing::span(if out.is_reused() {
        "zero reused output, release freed heap"
    } else {
        "prefault output, release freed heap"
    });
    if trim.is_none() {
        release_free_heap();
    }
    out.prepare(|| zero_ranges(lay, dynstr_range.clone()))?;
    drop(_t);
    let mapped = out.is_mapped();
    let result = fill::<A>(
        config,
        res,
        space,
        live,
        lay,
        (out.bytes(), mapped),
        apart.as_ref(),
        gdb_index,
    );
    if let Some(trim) = trim {
        let _ = trim.join();
    }
    if let Err(mut e) = result {
        out.discard();
        crate::srcloc::render(&res.objects, &mut e.0, config.error_limit);
        return Err(e);
    }
    if config.binary_output {
        let image = binary::image(lay, out.bytes())?;
        out.replace_contents(image);
    }
    let _t = crate::timing::span("close output");
    out.commit()
}

/// The parts of the file no writer touches, ascending: the gaps between the headers, the output sections and the
/// section header table (the file offsets that large alignments skip).
fn untouched(lay: &Layout) -> Vec<std::ops::Range<usize>> {
    let mut written: Vec<std::ops::Range<usize>> = lay
        .osecs
        .iter()
        .filter(|o| o.shndx != 0 && !o.is_nobits())
        .map(|o| o.offset as usize..(o.offset + o.size) as usize)
        .collect();
    written.push(0..crate::elf::headers_size(lay.segments.len()) as usize);
    written.push(lay.shoff as usize..lay.file_size as usize);
    let holes = complement(written, lay.file_size as usize);
    // Inside sections, the space a script's `. = . + SIZE` skipped.
    let skipped: Vec<std::ops::Range<usize>> = lay
        .script
        .data
        .iter()
        .filter(|d| d.2 == 0)
        .filter_map(|&(osec, off, _, len)| {
            let o = &lay.osecs[osec.index()];
            (o.shndx != 0 && !o.is_nobits())
                .then(|| (o.offset + off) as usize..(o.offset + off + len) as usize)
        })
        .collect();
    if skipped.is_empty() {
        return holes;
    }
    union([holes, skipped].concat())
}

/// The parts of `0..end` that no range of `ranges` covers, ascending.
fn complement(ranges: Vec<std::ops::Range<usize>>, end: usize) -> Vec<std::ops::Range<usize>> {
    let mut gaps = Vec::new();
    let mut from = 0usize;
    for r in union(ranges) {
        if r.start > from {
            gaps.push(from..r.start);
        }
        from = from.max(r.end);
    }
    if end > from {
        gaps.push(from..end);
    }
    gaps
}

/// Copies `.dynstr` into the output first and frees it (`synthetic::dynsym`).
fn put_dynstr(lay: &Layout, bytes: &mut [u8], dynstr: Vec<u8>) {
    if let Some(sec) = lay.synth_part(Synth::Dynstr).filter(|s| s.shndx != 0) {
        dynsym::write_dynstr(&mut bytes[sec.offset as usize..], dynstr);
    }
}

/// Gives the heap memory freed so far back to the kernel before the output is pre-faulted. The peak resident set
/// comes while the output is written (inputs and output mapped, the layout's tables live), and the allocator
/// otherwise keeps everything the earlier phases freed (merge pieces before deduplication, the interner's
/// buckets) resident to the end: rg-debug's peak 202 -> 179 MiB for about 2 ms, less on smaller links.
fn release_free_heap() {
    // SAFETY: malloc_trim only returns free memory of the allocator's arenas to the kernel.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The bytes of a reused output that must be zeroed before writing: all but `.dynstr` (copied in already) and
/// what the writers are known to cover whole. Those are the input sections of output sections placed in file
/// blocks, with the padding before each (`Layout::pads`, zeroed by that section's writer); the merged strings
/// and constants, whose writer zeroes the alignment between pieces; and `.symtab` and `.strtab`, written entry by
/// entry from their first byte (the layout has them only without `--strip-all`, as `fill` writes them); and the
/// sections written apart (`compress_debug`), copied in whole. That
/// leaves headers, gaps between output sections and the other linker-made sections (mold zeroes the padding
/// between input sections the same way). Zeroing the whole old output cost
/// clang-so 12-18 ms of CPU time, its 220 MB passing through the caches once more: interleaved medians of 21 runs,
/// clang-so 552 -> 538 ms (user 837 -> 795 ms), rg-release 69.3 -> 68.1 ms; rg-debug's zeroing step 2.5 -> 0.6 ms.
fn zero_ranges(lay: &Layout, dynstr: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    let mut covered = vec![dynstr];
    let whole = [lay.synth.get(Synth::Symtab), lay.synth.get(Synth::Strtab)];
    for (i, o) in lay.osecs.iter().enumerate() {
        if o.shndx == 0 || o.is_nobits() {
            continue;
        }
        let table =
            whole.contains(&Some(OsecId::new(i))) && matches!(o.parts[..], [Part::Synthetic(_)]);
        if table || o.written_apart {
            covered.push(o.offset as usize..(o.offset + o.size) as usize);
            continue;
        }
        for (p, &at) in o.parts.iter().zip(&o.part_offsets) {
            let size = match p {
                Part::Inputs | Part::Sorted if o.pads_known => o.inputs_size,
                Part::Merged(m) => lay.merges[*m as usize].size,
                _ => continue,
            };
            covered.push((o.offset + at) as usize..(o.offset + at + size) as usize);
        }
    }
    // Under a script, what no writer covers among inputs whose padding is known: the alignment before merge
    // groups placed there, and space the location counter skipped.
    let skipped = (lay.script.data.iter())
        .filter(|d| d.2 == 0)
        .map(|d| (d.0, d.1, d.3));
    let holes = (lay.script.holes.iter().copied())
        .chain(skipped)
        .filter_map(|(osec, off, len)| {
            let o = &lay.osecs[osec.index()];
            let inside = o.shndx != 0 && !o.is_nobits() && o.pads_known && !o.written_apart;
            inside.then(|| (o.offset + off) as usize..(o.offset + off + len) as usize)
        });
    let mut zero = complement(covered, lay.file_size as usize);
    zero.extend(holes);
    union(zero)
}

/// A linker script's data commands (`BYTE`, `SHORT`, `LONG`, `QUAD`), little-endian, in their output sections.
fn write_script_data(lay: &Layout, bytes: &mut [u8], apart: bool) {
    for &(osec, off, size, value) in &lay.script.data {
        let o = &lay.osecs[osec.index()];
        if o.shndx == 0 || o.is_nobits() || o.written_apart != apart {
            continue;
        }
        let at = (o.offset + off) as usize;
        if let Some(field) = bytes.get_mut(at..at + size as usize) {
            field.copy_from_slice(&value.to_le_bytes()[..size as usize]);
        }
    }
}

/// A linker script's fill patterns, over each range of its output section before the input sections are copied
/// in: what the inputs leave, the gaps, keeps the pattern. As in GNU ld, the pattern starts at its first byte in
/// each gap (the padding before an input section, space the location counter skipped), not at the range's start.
fn write_script_fills(lay: &Layout, bytes: &mut [u8], apart: bool) {
    write_fill_ranges(lay, bytes, apart);
    let skipped = (lay.script.data.iter())
        .filter(|d| d.2 == 0)
        .map(|&(osec, off, _, len)| (osec, off, len));
    for (osec, off, len) in lay.script.code_gaps.iter().copied().chain(skipped) {
        let o = &lay.osecs[osec.index()];
        if o.shndx == 0 || o.is_nobits() || o.written_apart != apart {
            continue;
        }
        // The pattern in force at the gap: the last of the section's fills that starts at or before it.
        let Some((_, _, pattern)) = (lay.script.fills.iter())
            .rev()
            .find(|f| f.0 == osec && f.1 <= off)
        else {
            continue;
        };
        let at = (o.offset + off) as usize;
        let end = (o.offset + (off + len).min(o.size)) as usize;
        if let Some(gap) = bytes.get_mut(at..end) {
            for (b, p) in gap.iter_mut().zip(pattern.iter().cycle()) {
                *b = *p;
            }
        }
    }
}

/// Each fill pattern over its whole range, from the range's start.
fn write_fill_ranges(lay: &Layout, bytes: &mut [u8], apart: bool) {
    for (k, (osec, from, pattern)) in lay.script.fills.iter().enumerate() {
        let o = &lay.osecs[osec.index()];
        if o.shndx == 0 || o.is_nobits() || pattern.is_empty() || o.written_apart != apart {
            continue;
        }
        let to = match lay.script.fills.get(k + 1) {
            Some((next, at, _)) if next == osec => *at,
            _ => o.size,
        };
        let (start, end) = (
            (o.offset + from) as usize,
            (o.offset + to.min(o.size)) as usize,
        );
        if let Some(range) = bytes.get_mut(start..end) {
            for (b, p) in range.iter_mut().zip(pattern.iter().cycle()) {
                *b = *p;
            }
        }
    }
}

/// Under a script, the padding in executable output sections without a fill pattern of their own: before input
/// sections (`Layout::pads` covers the default layout's, each written by its section's writer) and the space an
/// assignment skipped, which GNU ld pads with no-ops too. Skipped space over `MAX_CODE_SKIP` stays a hole of the
/// file, zeros, so that a huge `. = . + SIZE` costs neither memory nor disk (GNU ld writes it all).
fn write_code_gaps<A: Arch>(lay: &Layout, bytes: &mut [u8]) {
    const MAX_CODE_SKIP: u64 = 1 << 20;
    if lay.script.code_gaps.is_empty() && lay.script.data.is_empty() {
        return;
    }
    // Per output section, once: whether its gaps are code (not per gap, of which a large link has many).
    let mut code: Vec<bool> = (lay.osecs.iter())
        .map(|o| {
            o.shndx != 0
                && !o.is_nobits()
                && !o.written_apart
                && o.flags & E::SHF_EXECINSTR as u64 != 0
        })
        .collect();
    for f in &lay.script.fills {
        code[f.0.index()] = false;
    }
    let skipped = (lay.script.data.iter())
        .filter(|d| d.2 == 0 && d.3 <= MAX_CODE_SKIP)
        .map(|&(osec, off, _, len)| (osec, off, len));
    for (osec, off, len) in lay.script.code_gaps.iter().copied().chain(skipped) {
        if !code[osec.index()] {
            continue;
        }
        let at = (lay.osecs[osec.index()].offset + off) as usize;
        if let Some(gap) = bytes.get_mut(at..at.saturating_add(len as usize)) {
            A::fill_code(gap);
        }
    }
}

/// Fills the image: the input sections, the merged ones, then the linker-made sections, `.eh_frame_hdr` and the
/// symbol table at once, then the headers, then the build id over the finished bytes.
#[allow(clippy::too_many_arguments)]
fn fill<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    live: &Liveness,
    lay: &Layout,
    (bytes, mapped): (&mut [u8], bool),
    apart: Option<&compress_debug::Apart>,
    gdb_index: Option<&GdbIndexWriter<'_>>,
) -> Result<()> {
    let cx = WriteCx {
        config,
        res,
        space,
        lay,
    };
    let img = Image {
        ptr: bytes.as_mut_ptr(),
        len: bytes.len(),
    };
    write_script_fills(lay, bytes, false);
    write_code_gaps::<A>(lay, bytes);
    {
        let _t = crate::timing::span("copy and relocate sections");
        // `.gdb_index` beside the input sections: megabytes for a large C++ program, partly sequential.
        let index = gdb_index.zip(lay.synth_part(Synth::GdbIndex).and_then(|o| o.range()));
        let (copied, ()) = rayon::join(
            || write_input_sections::<A>(&cx, live, img, false),
            || {
                // SAFETY: the section's range is its own (`Image::slice`).
                if let Some((write, range)) = index
                    && let Some(part) = unsafe { img.slice(range.start as u64, range.len() as u64) }
                {
                    write(part);
                }
            },
        );
        copied?;
    }
    {
        let _t = crate::timing::span("merged sections");
        write_merged_sections(lay, img, false);
    }
    if let Some(apart) = apart {
        let _t = crate::timing::span("compressed debug sections");
        apart.write(lay, img);
    }
    if let Some(plan) = &lay.emit_relocs {
        let _t = crate::timing::span("emitted relocations");
        emit_relocs::write::<A>(&cx, plan, img)?;
    }
    let early = {
        let _t = crate::timing::span("synthetic sections, symbol table");
        write_linker_sections::<A>(&cx, bytes, mapped)?
    };
    write_headers::<A>(&cx, bytes);
    write_script_data(lay, bytes, false);
    if let Some(o) = lay.synth_part(Synth::BuildId) {
        let _t = crate::timing::span("build id");
        write_build_id(config, lay, o, bytes, early);
    }
    Ok(())
}

/// Where the input sections' dynamic relocations go: file offsets of `.rela.dyn` and of the IRELATIVE area (the
/// end of `.rela.dyn` in a dynamic output, `.rela.iplt` in a static one).
#[derive(Clone, Copy)]
struct RelocAreas {
    rela_dyn: u64,
    /// The area a script places apart by input section name (`Synth::RelaNamed`).
    named: u64,
    irelative: u64,
}

impl RelocAreas {
    fn of(lay: &Layout) -> RelocAreas {
        let rela_dyn = lay.synth_part(Synth::RelaDyn).map_or(0, |o| o.offset);
        let irelative = if lay.is_dynamic {
            rela_dyn + 24 * lay.got_plt.irelative_start()
        } else {
            lay.synth_part(Synth::RelaIplt).map_or(0, |o| o.offset)
        };
        RelocAreas {
            rela_dyn,
            named: lay.synth_part(Synth::RelaNamed).map_or(0, |o| o.offset),
            irelative,
        }
    }
}

/// Copies the input sections into the image and applies their relocations, in parallel over sections, not files:
/// one large object (a Rust crate's codegen unit, a big C++ TU) would otherwise keep one thread busy while the
/// others idle. `apart`: write the sections of the output sections `written_apart` (and only those), or the others.
fn write_input_sections<A: Arch>(
    cx: &WriteCx,
    live: &Liveness,
    img: Image,
    apart: bool,
) -> Result<()> {
    let areas = RelocAreas::of(cx.lay);
    let errors: Vec<String> = cx
        .res
        .objects
        .par_iter()
        .enumerate()
        // A task per file, each splitting its sections: split by count, a pass started on a rayon worker went in
        // a few long runs of files.
        .with_max_len(1)
        .flat_map(|(f, o)| {
            (0..o.sections.len()).into_par_iter().filter_map(move |s| {
                let at = (FileId::new(f), SecIdx::new(s));
                write_input_section::<A>(cx, live, img, areas, at, apart)
            })
        })
        .collect();
    if !errors.is_empty() {
        return Err(Errors(errors));
    }
    Ok(())
}

/// Copies input section `s` of object `f` into the image (with the padding before it) and applies its
/// relocations; an error message if that fails.
fn write_input_section<A: Arch>(
    cx: &WriteCx,
    live: &Liveness,
    img: Image,
    areas: RelocAreas,
    (f, s): (FileId, SecIdx),
    apart: bool,
) -> Option<String> {
    let lay = cx.lay;
    let o = &cx.res.objects[f.index()];
    let sec = o.sec(s);
    if !live.is_live(f, s) || sec.kind == SectionKind::Merge {
        return None;
    }
    let (osec, in_osec) = lay.place(f, s)?;
    let osec = &lay.osecs[osec.index()];
    if osec.shndx == 0 || osec.written_apart != apart {
        return None;
    }
    let start = osec.offset + in_osec;
    if !osec.is_nobits() && osec.pads_known {
        // The padding before this section (a reused output is not zeroed there, `zero_ranges`), and a
        // `SHT_NOBITS` input's own bytes in a section that has file contents.
        let pad = lay.pads[f.index()][s.index()] as u64;
        let nobits = if sec.sh_type() == E::SHT_NOBITS {
            sec.size()
        } else {
            0
        };
        // SAFETY: the padding before an input section and its own range belong to it alone.
        let z = match pad + nobits {
            0 => None,
            n => unsafe { img.slice(start.wrapping_sub(pad), n) },
        };
        if let Some(z) = z {
            let (gap, own) = z.split_at_mut(pad as usize);
            if osec.flags & E::SHF_EXECINSTR as u64 != 0 {
                A::fill_code(gap);
            } else {
                gap.fill(0);
            }
            own.fill(0);
        }
    }
    if sec.sh_type() == E::SHT_NOBITS {
        return None;
    }
    // The slots the scan counted and the layout reserved for this section's dynamic relocations.
    let slots = |bases: &crate::layout::RelocBases, area: u64| {
        bases
            .get(f, s)
            // SAFETY: these slots belong to this section alone (`RelocBases` numbers them per section).
            .and_then(|(first, n)| unsafe { img.slice(area + 24 * first, 24 * n) })
            .unwrap_or_default()
    };
    let relocs = match lay.named_reloc_base.get(f, s) {
        Some(_) => slots(&lay.named_reloc_base, areas.named),
        None => slots(&lay.dyn_reloc_base, areas.rela_dyn),
    };
    let mut sink = DynRelSink {
        relocs,
        irel: slots(&lay.irel_base, areas.irelative),
        ..Default::default()
    };
    let r = if sec.kind == SectionKind::EhFrame {
        write_eh_frame::<A>(cx, f, s, img, start, &mut sink)
    } else if let Some(parts) = nonalloc_parts(sec) {
        write_nonalloc_in_parts::<A>(cx, f, s, img, start, &parts)
    } else {
        // SAFETY: this input section's range is exclusively its own.
        match unsafe { img.slice(start, sec.size()) } {
            Some(out) => {
                out.copy_from_slice(sec.data());
                apply::apply_section::<A>(cx, f, s, out, &mut sink)
            }
            None => Err(format!(
                "{}: section {} does not fit the output",
                o.name,
                o.section_name(s.0)
            )),
        }
    };
    if let Err(e) = r {
        return Some(e);
    }
    if !sink.filled() {
        return Some(format!(
            "{}:({}): internal error: dynamic relocations the scan did not count",
            o.name,
            o.section_name(s.0)
        ));
    }
    None
}

/// Writes a large non-allocated section at `start` in `parts` (`nonalloc_parts`), on all threads.
fn write_nonalloc_in_parts<A: Arch>(
    cx: &WriteCx,
    f: FileId,
    s: SecIdx,
    img: Image,
    start: u64,
    parts: &[SectionPart],
) -> std::result::Result<(), String> {
    let o = &cx.res.objects[f.index()];
    let sec = o.sec(s);
    // A part may meet a relocation outside its bytes where they are not sorted by offset: the section is then
    // written again whole, by one thread, which also finds the first error in input order.
    let whole = || {
        // SAFETY: this input section's range is exclusively its own, and its parts are done.
        let out = unsafe { img.slice(start, sec.size()) }?;
        out.copy_from_slice(sec.data());
        Some(apply::apply_nonalloc_part::<A>(
            cx,
            f,
            s,
            out,
            0,
            sec.relas(),
        ))
    };
    let failed = parts.par_iter().any(|p| {
        // SAFETY: the parts split this input section's range, which is exclusively its own.
        let Some(out) = (unsafe { img.slice(start + p.lo, p.hi - p.lo) }) else {
            return true;
        };
        out.copy_from_slice(&sec.data()[p.lo as usize..p.hi as usize]);
        apply::apply_nonalloc_part::<A>(cx, f, s, out, p.lo, &sec.relas()[p.relas.clone()]).is_err()
    });
    match failed.then(whole) {
        None => Ok(()),
        Some(Some(r)) => r,
        Some(None) => Err(format!(
            "{}: section {} does not fit the output",
            o.name,
            o.section_name(s.0)
        )),
    }
}

/// Copies the merged sections' pieces into the image (`apart`: those of the output sections `written_apart`, or
/// the others).
fn write_merged_sections(lay: &Layout, img: Image, apart: bool) {
    lay.merges.par_iter().enumerate().for_each(|(m, g)| {
        let o = &lay.osecs[g.osec.index()];
        if o.is_nobits() || o.shndx == 0 || o.written_apart != apart {
            return;
        }
        let idx = o
            .parts
            .iter()
            .position(|p| matches!(p, Part::Merged(x) if *x == m as u32))
            .unwrap_or(0);
        let base = o.offset + o.part_offsets[idx];
        // Shard by shard on all threads (a large group's, `.debug_str`, hold thousands of pieces each). Each shard
        // also zeroes the alignment padding before its pieces and after its last one, up to the next shard, so
        // that a reused output needs no zeroing of the group (`zero_ranges`).
        g.shards.par_iter().enumerate().for_each(|(k, sh)| {
            let at = base + sh.start;
            let zero = |from: u64, to: u64| {
                // SAFETY: padding inside this shard's range, which is its own.
                if to > from
                    && let Some(z) = unsafe { img.slice(at + from, to - from) }
                {
                    z.fill(0);
                }
            };
            let mut end = 0u64;
            for (p, &off) in sh.pieces.iter().zip(&sh.offsets) {
                zero(end, off as u64);
                // SAFETY: pieces of a group occupy disjoint ranges inside the group's own range.
                if let Some(out) = unsafe { img.slice(at + off as u64, p.bytes.len() as u64) } {
                    out.copy_from_slice(p.bytes);
                }
                end = off as u64 + p.bytes.len() as u64;
            }
            // An empty shard after the last piece starts aligned, past the group's end (the next part may
            // start there): up to the group's end at most.
            let next = g.shards.get(k + 1).map_or(g.size, |n| n.start).min(g.size);
            zero(end, next.saturating_sub(sh.start));
        });
    });
}

/// What the build id takes over from the linker-made sections' step: the chaining values of its early chunks, and
/// per whole huge page of a mapped output whether it was released with them (`releasable_pages`), the image at
/// address `image`.
struct EarlyHash {
    cvs: Vec<(usize, blake3::hazmat::ChainingValue)>,
    releasable: Vec<bool>,
    image: usize,
}

/// The linker-made sections, `.eh_frame_hdr` and the symbol table at once, each writer holding its own output
/// sections: the GOT and PLT entries and the table behind `.eh_frame_hdr` are serial loops (on clang-so 6.6 and
/// 5 ms, one core idle while they ran one after the other).
fn write_linker_sections<A: Arch>(
    cx: &WriteCx,
    bytes: &mut [u8],
    mapped: bool,
) -> Result<EarlyHash> {
    let (config, lay) = (cx.config, cx.lay);
    let eh_frame = lay
        .osecs
        .iter()
        .find(|o| o.name == b".eh_frame" && o.shndx != 0 && !o.is_nobits());
    let hdr = lay.synth_part(Synth::EhFrameHdr).filter(|o| o.shndx != 0);
    // The build id's chunks that nothing writes from here on, hashed now by the threads these writers leave
    // idle (`build_id_tree`), and read with `.eh_frame`, which `.eh_frame_hdr` is made from.
    let image_len = bytes.len();
    let early = early_chunks(config, lay, image_len);
    let holes = if early.is_empty() {
        Vec::new()
    } else {
        untouched(lay)
    };
    let mut shared = chunk_runs(&early, image_len);
    let eh_range = eh_frame.map(|o| o.offset as usize..(o.offset + o.size) as usize);
    // Once hashed, the early chunks of a mapped output are not touched again, and their page-table entries are
    // dropped here, beside the writers, instead of by the output's munmap at the end (see `release_page`). One
    // entry per whole huge page of a mapped output: true for those released with the early chunks.
    let releasable = if mapped {
        releasable_pages(
            &early,
            image_len,
            eh_range.clone().filter(|_| hdr.is_some()),
        )
    } else {
        Vec::new()
    };
    let image = bytes.as_mut_ptr() as usize;
    if hdr.is_some() {
        shared.extend(eh_range);
    }
    let groups = writer_groups(config, lay, union(shared));
    let [
        mut got_plt,
        mut dynamic,
        mut hdr_parts,
        mut sym_parts,
        shared,
    ] = Parts::split(bytes, &groups);
    let shared = &shared;
    let ((relative, ()), ((hdr_result, ()), cvs)) = rayon::join(
        || {
            rayon::join(
                || write_got_plt::<A>(cx, &mut got_plt),
                || write_dynamic_and_notes(cx, &mut dynamic),
            )
        },
        || {
            rayon::join(
                || {
                    rayon::join(
                        || write_eh_frame_hdr(hdr, eh_frame, shared, &mut hdr_parts),
                        || {
                            if !config.strip_all {
                                write_symtab(cx, &mut sym_parts);
                            }
                        },
                    )
                },
                || {
                    chunk_values(
                        &early,
                        image_len,
                        &holes,
                        |r| &shared[r],
                        |p| {
                            if releasable.get(p) == Some(&true) {
                                release_page(image, p);
                            }
                        },
                    )
                },
            )
        },
    );
    hdr_result?;
    if let Some(range) = lay.synth_part(Synth::Dynamic).and_then(|o| o.range()) {
        lay.dynamic.set_relative_count(&mut bytes[range], relative);
    }
    Ok(EarlyHash {
        cvs,
        releasable,
        image,
    })
}

/// The output sections each writer of `write_linker_sections` holds, in order: the GOT and PLT family; the dynamic
/// sections, `.interp` and the notes; `.eh_frame_hdr`; the symbol table; and `shared`, what the build id's early
/// chunks and `.eh_frame_hdr` read.
fn writer_groups(
    config: &Config,
    lay: &Layout,
    shared: Vec<std::ops::Range<usize>>,
) -> [Vec<std::ops::Range<usize>>; 5] {
    let ranges = |list: &[Synth]| -> Vec<std::ops::Range<usize>> {
        list.iter()
            .filter(|&&s| lay.synth_sec(s).is_some_and(|o| !o.is_nobits()))
            .filter_map(|&s| lay.synth_part(s)?.range())
            .collect()
    };
    use Synth::*;
    let symtab = if config.strip_all {
        Vec::new()
    } else {
        ranges(&[Symtab, Strtab])
    };
    [
        ranges(&[Got, GotPlt, Plt, Iplt, RelaDyn, RelaPlt, RelaIplt]),
        ranges(&[
            Dynsym,
            Versym,
            Verdef,
            Verneed,
            RelrDyn,
            Hash,
            GnuHash,
            Dynamic,
            Interp,
            PackageNote,
            GnuProperty,
        ]),
        ranges(&[EhFrameHdr]),
        symtab,
        shared,
    ]
}

/// The dynamic sections (`write_dynamic_sections`), `.interp` and the notes the linker makes.
fn write_dynamic_and_notes(cx: &WriteCx, dynamic: &mut Parts) {
    let (config, lay) = (cx.config, cx.lay);
    write_dynamic_sections(cx, dynamic);
    if let Some(range) = lay.synth_part(Synth::Interp).and_then(|o| o.range())
        && let Some(path) = &lay.interp
    {
        interp::write(&mut dynamic[range], path);
    }
    if let Some(range) = lay.synth_part(Synth::PackageNote).and_then(|o| o.range())
        && let Some(json) = &config.package_metadata
    {
        notes::write_package(&mut dynamic[range], json);
    }
    if let Some(range) = lay.synth_part(Synth::GnuProperty).and_then(|o| o.range()) {
        crate::synthetic::property::write(&mut dynamic[range], &lay.gnu_props);
    }
}

/// Writes `.eh_frame_hdr` (`synthetic::eh_frame_hdr`), where the output has one, from the output `.eh_frame`
/// (in `shared`).
fn write_eh_frame_hdr(
    hdr: Option<layout::SynthPart>,
    eh_frame: Option<&layout::OutputSection>,
    shared: &Parts,
    parts: &mut Parts,
) -> Result<()> {
    let Some(o) = hdr else {
        return Ok(());
    };
    let data = eh_frame.map(|e| {
        (
            e.addr,
            &shared[e.offset as usize..(e.offset + e.size) as usize],
        )
    });
    let out = parts.take(o.offset as usize).unwrap_or_default();
    eh_frame_hdr::write(o.offset, o.addr, data, out)
}

/// A part of a large non-allocated section written on its own: bytes `lo..hi` and the relocations in them.
struct SectionPart {
    lo: u64,
    hi: u64,
    relas: std::ops::Range<usize>,
}

/// Sections at least this large are written in parts of about `NONALLOC_PART` bytes.
const NONALLOC_SPLIT_MIN: u64 = 512 << 10;
const NONALLOC_PART: u64 = 256 << 10;

/// How to write a large non-allocated section (debug info) in parallel parts, each copying its bytes and applying
/// its relocations: with a whole compilation's debug info in one object (an amalgamation like sqlite3.c, a unity
/// build), one `.debug_info` was most of the copy-and-relocate phase on one thread. `None` for small sections. The
/// parts are found by binary search, as if the relocations were sorted by offset (as compilers and assemblers
/// emit them): a part ends no earlier than 8 bytes after its last relocation's offset, so no field is split. If
/// they are not sorted, a part may hold a relocation outside its bytes, which it cannot apply: the caller then
/// writes the section whole (one whose relocations each land in their own part's bytes is written right anyway).
/// A pass checking the order first read every relocation once more: c-gc, 150K in sqlite3.o's `.debug_info`, 2.6%
/// of the link's CPU time at --threads=1, before the parts could start.
fn nonalloc_parts(sec: crate::parse::Sec) -> Option<Vec<SectionPart>> {
    let size = sec.size();
    if sec.is_alloc() || size < NONALLOC_SPLIT_MIN || sec.data().len() as u64 != size {
        return None;
    }
    let off = |k: usize| sec.relas()[k].r_offset.get(crate::elf::LE);
    let first_at_or_after = |from: usize, b: u64| {
        from + sec.relas()[from..].partition_point(|r| r.r_offset.get(crate::elf::LE) < b)
    };
    let mut parts = Vec::new();
    let (mut lo, mut r) = (0u64, 0usize);
    while lo < size {
        let mut hi = (lo + NONALLOC_PART).min(size);
        let mut k = first_at_or_after(r, hi);
        while hi < size && k > r && off(k - 1).saturating_add(8) > hi {
            hi = off(k - 1).saturating_add(8).min(size);
            k = first_at_or_after(r, hi);
        }
        if hi == size {
            k = sec.relas().len();
        }
        parts.push(SectionPart {
            lo,
            hi,
            relas: r..k,
        });
        (lo, r) = (hi, k);
    }
    Some(parts)
}

/// Copies the kept records of one input `.eh_frame`, applying its relocations and re-pointing each FDE at its CIE.
fn write_eh_frame<A: Arch>(
    cx: &WriteCx,
    f: FileId,
    s: SecIdx,
    img: Image,
    start: u64,
    sink: &mut DynRelSink<'_>,
) -> std::result::Result<(), String> {
    let sec = cx.res.objects[f.index()].sec(s);
    let mut tmp = sec.data().to_vec();
    // Relocations are applied on a copy at input offsets; `section_offset_addr` gives each its output address.
    apply::apply_section::<A>(cx, f, s, &mut tmp, sink)?;
    let recs = cx.lay.eh_records.get(f, s);
    for r in recs {
        if r.out_off == NONE as u64 {
            continue;
        }
        // SAFETY: the records of this input section occupy its reserved range.
        let out = unsafe { img.slice(start + r.out_off, r.size) }
            .ok_or("eh_frame record out of range")?;
        out.copy_from_slice(&tmp[r.in_off as usize..(r.in_off + r.size) as usize]);
        if !r.is_cie && r.size > 4 {
            let cie = recs
                .iter()
                .find(|c| c.in_off == r.cie_in_off && c.is_cie)
                .ok_or_else(|| {
                    format!(
                        "{}: .eh_frame FDE at 0x{:x} points at no CIE",
                        cx.res.objects[f.index()].name,
                        r.in_off
                    )
                })?;
            // The CIE is this section's, or an identical one kept earlier in another file's block.
            let base = cx.lay.sec_addr[f.index()][s.index()];
            let cie_addr = if cie.out_off != NONE as u64 {
                base + cie.out_off
            } else {
                let &(kf, ks, kin) =
                    cx.lay
                        .cie_redirect
                        .get(&(f, s, cie.in_off))
                        .ok_or_else(|| {
                            format!(
                                "{}: .eh_frame FDE at 0x{:x} lost its CIE",
                                cx.res.objects[f.index()].name,
                                r.in_off
                            )
                        })?;
                let kept = cx
                    .lay
                    .eh_records
                    .get(kf, ks)
                    .iter()
                    .find(|c| c.in_off == kin)
                    .map_or(0, |c| c.out_off);
                cx.lay.sec_addr[kf.index()][ks.index()] + kept
            };
            let ptr = (base + r.out_off + 4).wrapping_sub(cie_addr);
            out[4..8].copy_from_slice(&(ptr as u32).to_le_bytes());
        }
    }
    Ok(())
}

/// Writes the GOT and PLT family (`synthetic::got_plt`) into its output sections.
/// Returns the number of relative relocations at the head of the sorted `.rela.dyn`.
fn write_got_plt<A: Arch>(cx: &WriteCx, parts: &mut Parts) -> u64 {
    let lay = cx.lay;
    let kept = |s: Synth| lay.synth_part(s).filter(|o| o.shndx != 0);
    // Only parts with bytes: an empty one may start where the next one of its output section does.
    let mut take = |s: Synth| {
        let o = kept(s).filter(|o| o.size > 0)?;
        Some(got_plt::Section {
            addr: o.addr,
            bytes: parts.take(o.offset as usize).unwrap_or_default(),
        })
    };
    let rela_dyn = take(Synth::RelaDyn).map(|s| s.bytes).unwrap_or_default();
    let sections = got_plt::Sections {
        got: take(Synth::Got),
        got_plt: take(Synth::GotPlt),
        plt: take(Synth::Plt),
        iplt: take(Synth::Iplt),
        rela_dyn: &mut *rela_dyn,
        rela_plt: take(Synth::RelaPlt).map(|s| s.bytes).unwrap_or_default(),
        rela_iplt: take(Synth::RelaIplt).map(|s| s.bytes).unwrap_or_default(),
    };
    let copy_base = lay.part_addr(&Part::CopyRel);
    let facts = got_plt::Facts {
        counts: lay.got_plt,
        plt: lay.plt,
        tlsld: lay.tlsld,
        pic: cx.pic(),
        shared: cx.config.kind == OutputKind::Shared,
        pack_relr: cx.config.pack_relative_relocs,
        dynamic_addr: kept(Synth::Dynamic).map_or(0, |o| o.addr),
        copy_base: copy_base.unwrap_or(0),
        copy_relro_base: lay.part_addr(&Part::CopyRelRo).unwrap_or(0),
    };
    got_plt::write::<A>(sections, &lay.aux_ids, &facts, &SlotLookup(cx));
    // The input sections' entries are in place (written with their sections), and now the GOT's.
    crate::synthetic::rela::sort_combined::<A>(rela_dyn)
}

/// The layout's answers to the GOT and PLT writer.
struct SlotLookup<'c, 'a>(&'c WriteCx<'a>);

impl got_plt::Lookup for SlotLookup<'_, '_> {
    fn slots(&self, id: SymId) -> &got_plt::Aux {
        self.0.lay.aux_of(id).unwrap()
    }
    fn symbol(&self, id: SymId) -> got_plt::Symbol {
        let cx = self.0;
        let target = layout::target_of(cx.res, cx.space, id);
        got_plt::Symbol {
            // The bits as the scan settled them (`scan::weak`); every global has them, and locals are never
            // preemptible.
            imported: cx
                .space
                .gprops
                .get(id.index())
                .is_some_and(|&b| b & symbols::SymProps::PREEMPTIBLE != 0),
            ifunc: symbols::is_ifunc(cx.res, target),
            value: cx.lay.addrs[id.index()],
        }
    }
    fn is_absolute(&self, id: SymId) -> bool {
        let cx = self.0;
        symbols::is_absolute(cx.res, layout::target_of(cx.res, cx.space, id))
    }
    fn tp_offset(&self, addr: u64) -> u64 {
        self.0.tp_offset(addr)
    }
    fn dtp_offset(&self, addr: u64) -> u64 {
        self.0.dtp_offset(addr)
    }
}

/// The layout's answers to the `.dynsym` writer.
struct DynsymPlaces<'c, 'a>(&'c WriteCx<'a>);

impl dynsym::Places for DynsymPlaces<'_, '_> {
    #[inline]
    fn target(&self, id: SymId) -> Target {
        layout::target_of(self.0.res, self.0.space, id)
    }
    #[inline]
    fn slots(&self, id: SymId) -> &got_plt::Aux {
        self.0.lay.aux_of(id).unwrap()
    }
    #[inline]
    fn address(&self, id: SymId) -> u64 {
        self.0.lay.addrs[id.index()]
    }
    #[inline]
    fn plt_entry(&self, id: SymId) -> Option<u64> {
        self.0.plt_addr(id)
    }
    #[inline]
    fn object_section(&self, file: FileId, i: u32) -> Option<u16> {
        self.0.object_sym_shndx(file, i as usize)
    }
    #[inline]
    fn assigned_section(&self, id: SymId) -> Option<u16> {
        (self.0.lay.linker_sections.contains_key(&id))
            .then(|| symtab::Places::linker_symbol(self.0, id, E::STT_NOTYPE).0)
    }
    #[inline]
    fn section_holding(&self, v: u64) -> u16 {
        symtab::Places::section_holding(self.0, v)
    }
    #[inline]
    fn dtp_offset(&self, addr: u64) -> u64 {
        self.0.dtp_offset(addr)
    }
}

/// The dynamic sections: `.dynsym`, the versions, `.relr.dyn`, the hash tables and `.dynamic`.
fn write_dynamic_sections(cx: &WriteCx, bytes: &mut Parts) {
    let lay = cx.lay;
    if !lay.is_dynamic {
        return;
    }
    let section = |s: Synth| lay.synth_part(s)?.range();
    if let Some(r) = section(Synth::Dynsym) {
        dynsym::write(
            &mut bytes[r],
            &lay.dynsyms,
            cx.res,
            cx.config,
            &DynsymPlaces(cx),
        );
    }
    // Symbol versions, each in its linker-made part: a script may put data commands or inputs beside it, or keep
    // it empty (fuzzer findings: `QUAD(-1)` or `PROVIDE` in `.gnu.version_d` of a link without versions made its
    // writer panic).
    if let Some(r) = section(Synth::Versym) {
        versions::write_versym(&mut bytes[r], &lay.dynsyms);
    }
    if let Some(r) = section(Synth::Verdef) {
        let base = versions::version_base_name(cx.config);
        versions::write_verdef(&mut bytes[r], &base, &cx.res.version_defs, &lay.dyn_strings);
    }
    if let Some(r) = section(Synth::Verneed) {
        versions::write_verneed(&mut bytes[r], &lay.verneed);
    }
    if let Some(r) = section(Synth::RelrDyn) {
        relr::write(&mut bytes[r], &lay.relr);
    }
    // Symbol lookup tables.
    if let Some(r) = section(Synth::Hash) {
        hash::write_sysv(&mut bytes[r], &lay.dynsyms);
    }
    if let Some(r) = section(Synth::GnuHash) {
        hash::write_gnu(&mut bytes[r], &lay.dynsyms);
    }
    // .dynamic: the entries the layout decided, their values now known.
    let dynamic = lay.synth_part(Synth::Dynamic).unwrap();
    let range = dynamic.offset as usize..(dynamic.offset + dynamic.size) as usize;
    lay.dynamic.write(&mut bytes[range], |v| match v {
        Value::Const(c) => c,
        Value::SynthAddr(s) => lay.synth_addr(s),
        Value::SynthSize(s) => lay.synth_part(s).map_or(0, |o| o.size),
        Value::RelaAddr => {
            let parts = [Synth::RelaDyn, Synth::RelaNamed].map(|s| lay.synth_part(s));
            let lowest = parts
                .iter()
                .flatten()
                .filter(|p| p.size > 0)
                .map(|p| p.addr)
                .min();
            lowest.unwrap_or_else(|| lay.synth_addr(Synth::RelaDyn))
        }
        Value::RelaSize => [Synth::RelaDyn, Synth::RelaNamed]
            .map(|s| lay.synth_part(s).map_or(0, |p| p.size))
            .iter()
            .sum(),
        Value::SectionAddr(i) => lay.osecs[i.index()].addr,
        Value::SectionSize(i) => lay.osecs[i.index()].size,
        Value::SymbolAddr(g) => lay.addrs[g.index()],
    });
}

/// Writes `.symtab` and `.strtab` (`synthetic::symtab`), where the layout has them.
fn write_symtab(cx: &WriteCx, parts: &mut Parts) {
    let lay = cx.lay;
    let Some(symtab) = lay.synth_part(Synth::Symtab) else {
        return;
    };
    let strtab = lay.synth_part(Synth::Strtab).unwrap();
    let (Some(sym_out), Some(str_out)) = (
        parts.take(symtab.offset as usize),
        parts.take(strtab.offset as usize),
    ) else {
        return;
    };
    symtab::write(cx.config, cx.res, &lay.symtab, cx, sym_out, str_out);
}

/// Where `.symtab`'s symbols went.
impl symtab::Places for WriteCx<'_> {
    fn section_index(&self, f: FileId, shndx: u32) -> u16 {
        let lay = self.lay;
        let osec = if shndx == E::SHN_COMMON as u32 {
            lay.osecs
                .iter()
                .position(|x| x.parts.iter().any(|p| matches!(p, Part::Commons)))
                .map(OsecId::new)
        } else if self.res.objects[f.index()].sections[shndx as usize].kind == SectionKind::Merge {
            lay.merge_slot(f, SecIdx(shndx))
                .map(|(_, m)| lay.merges[m as usize].osec)
        } else {
            Some(lay.place_osec[f.index()][shndx as usize])
        };
        let Some(i) = osec.filter(|i| i.is_some()) else {
            return E::SHN_ABS;
        };
        let o = &lay.osecs[i.index()];
        if o.shndx != 0 || !o.is_alloc() {
            return o.shndx as u16;
        }
        // A section the output dropped (empty): its symbols go to the kept neighbour GNU ld gives them.
        let keep = |k: usize| lay.osecs[k].shndx != 0;
        let near = layout::script::nearby_section(&lay.osecs, &keep, i, o.addr);
        near.get()
            .map_or(E::SHN_ABS, |n| lay.osecs[n.index()].shndx as u16)
    }
    #[inline]
    fn value(&self, f: FileId, i: usize, st_type: u8) -> u64 {
        let id = symbols::lookup(self.res, self.space, f, i).map_or(SymId(0), |r| r.id);
        self.symbol_value(st_type, self.lay.addrs[id.index()])
    }
    #[inline]
    fn size(&self, f: FileId, i: usize) -> u64 {
        symbols::sym_size(
            self.res,
            Target::Object {
                file: f,
                sym: i as u32,
            },
        )
    }
    fn linker_symbol(&self, g: SymId, st_type: u8) -> (u16, u64) {
        let v = self.lay.addrs[g.index()];
        // Assigned by a script or --defsym: the section the expression's value is relative to; or the section
        // the layout gave it (`symbols::linker_symbol_section`).
        if let Some(&s) = self.lay.linker_sections.get(&g) {
            let osec = self.lay.osecs.get(s.index()).filter(|o| o.shndx != 0);
            return (
                osec.map_or(E::SHN_ABS, |o| o.shndx as u16),
                self.symbol_value(st_type, v),
            );
        }
        let sec = (self.lay.osecs.iter())
            .filter(|o| o.shndx != 0 && o.is_alloc() && o.addr <= v && v <= o.addr + o.size)
            .map(|o| o.shndx)
            .next_back();
        (
            sec.unwrap_or(E::SHN_ABS as u32) as u16,
            self.symbol_value(st_type, v),
        )
    }
    fn output_section(&self, i: OsecId) -> (u16, u64) {
        let o = &self.lay.osecs[i.index()];
        (o.shndx as u16, o.addr)
    }
    fn section_holding(&self, v: u64) -> u16 {
        (self.lay.osecs.iter())
            .filter(|o| o.shndx != 0 && o.is_alloc() && o.addr <= v && v <= o.addr + o.size)
            .map(|o| o.shndx as u16)
            .next_back()
            .unwrap_or(E::SHN_ABS)
    }
    fn import(&self, g: SymId) -> symtab::Import {
        let Some(x) = self.lay.aux_of(g) else {
            return symtab::Import {
                bind: E::STB_GLOBAL,
                ty: E::STT_NOTYPE,
                shndx: E::SHN_UNDEF,
                value: 0,
                size: 0,
            };
        };
        let (bind, ty, size) =
            dynsym::binding(self.res, layout::target_of(self.res, self.space, g), x);
        let addr = self.lay.addrs[g.index()];
        let canonical = x.plt != NONE && x.canonical && self.config.kind != OutputKind::Shared;
        let (shndx, value, size) = match (x.copied, canonical) {
            (true, _) => (
                dynsym::Places::section_holding(&DynsymPlaces(self), addr),
                addr,
                size,
            ),
            (false, true) => (E::SHN_UNDEF, addr, 0),
            (false, false) => (E::SHN_UNDEF, 0, 0),
        };
        symtab::Import {
            bind,
            ty,
            shndx,
            value,
            size,
        }
    }
}

fn write_headers<A: Arch>(cx: &WriteCx, bytes: &mut [u8]) {
    if A::ELF32 {
        return elf32::write_headers::<A>(cx, bytes);
    }
    let lay = cx.lay;
    let nsec = lay.osecs.iter().filter(|o| o.shndx != 0).count() + 1;
    let e_type = if cx.config.kind == OutputKind::Exec {
        E::ET_EXEC
    } else {
        E::ET_DYN
    };
    let shstrndx = lay.synth_sec(Synth::Shstrtab).map_or(0, |o| o.shndx);
    let h = &mut bytes[..64];
    h[..16].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // GNU extensions in the symbol tables (IFUNC symbols, unique globals) make the OS ABI GNU, as GNU ld marks it.
    if lay.gnu_osabi {
        h[7] = E::ELFOSABI_GNU;
    }
    h[16..18].copy_from_slice(&e_type.to_le_bytes());
    h[18..20].copy_from_slice(&A::E_MACHINE.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[24..32].copy_from_slice(&lay.entry.to_le_bytes());
    h[32..40].copy_from_slice(&64u64.to_le_bytes());
    h[40..48].copy_from_slice(&lay.shoff.to_le_bytes());
    h[48..52].copy_from_slice(&0u32.to_le_bytes());
    h[52..54].copy_from_slice(&64u16.to_le_bytes());
    h[54..56].copy_from_slice(&56u16.to_le_bytes());
    h[56..58].copy_from_slice(&(lay.segments.len() as u16).to_le_bytes());
    h[58..60].copy_from_slice(&64u16.to_le_bytes());
    h[60..62].copy_from_slice(&(nsec as u16).to_le_bytes());
    h[62..64].copy_from_slice(&(shstrndx as u16).to_le_bytes());
    for (i, s) in lay.segments.iter().enumerate() {
        let p = &mut bytes[64 + 56 * i..64 + 56 * (i + 1)];
        p[0..4].copy_from_slice(&s.p_type.to_le_bytes());
        p[4..8].copy_from_slice(&s.flags.to_le_bytes());
        p[8..16].copy_from_slice(&s.offset.to_le_bytes());
        p[16..24].copy_from_slice(&s.vaddr.to_le_bytes());
        p[24..32].copy_from_slice(&s.paddr.to_le_bytes());
        p[32..40].copy_from_slice(&s.filesz.to_le_bytes());
        p[40..48].copy_from_slice(&s.memsz.to_le_bytes());
        p[48..56].copy_from_slice(&s.align.to_le_bytes());
    }
    let kept = || lay.osecs.iter().filter(|o| o.shndx != 0);
    if let Some(r) = lay.synth_part(Synth::Shstrtab).and_then(|o| o.range()) {
        shstrtab::write(&mut bytes[r], kept().map(|o| &o.name[..]));
    }
    let name_offs = shstrtab::name_offsets(kept().map(|o| &o.name[..]));
    let kept_k = lay.osecs.iter().enumerate().filter(|(_, o)| o.shndx != 0);
    for ((k, o), name_off) in kept_k.zip(name_offs) {
        let sh = &mut bytes[(lay.shoff + 64 * o.shndx as u64) as usize..][..64];
        let (link, info) = link_info(cx, k, o);
        sh[0..4].copy_from_slice(&name_off.to_le_bytes());
        sh[4..8].copy_from_slice(&o.sh_type.to_le_bytes());
        sh[8..16].copy_from_slice(&o.flags.to_le_bytes());
        sh[16..24].copy_from_slice(&o.addr.to_le_bytes());
        sh[24..32].copy_from_slice(&o.offset.to_le_bytes());
        sh[32..40].copy_from_slice(&o.size.to_le_bytes());
        sh[40..44].copy_from_slice(&link.to_le_bytes());
        sh[44..48].copy_from_slice(&info.to_le_bytes());
        sh[48..56].copy_from_slice(&o.align.to_le_bytes());
        sh[56..64].copy_from_slice(&array_entsize(o, 8).to_le_bytes());
    }
}

/// `o`'s entry size in its header: a pointer array's is the pointer's size (`word`), as GNU ld writes it.
pub(crate) fn array_entsize(o: &crate::layout::OutputSection, word: u64) -> u64 {
    match o.sh_type {
        E::SHT_INIT_ARRAY | E::SHT_FINI_ARRAY | E::SHT_PREINIT_ARRAY => word,
        _ => o.entsize,
    }
}

/// The `sh_link` and `sh_info` of kept output section `k`, `o`.
fn link_info(cx: &WriteCx, k: usize, o: &layout::OutputSection) -> (u32, u32) {
    let lay = cx.lay;
    let link_of = |s: Synth| lay.synth_sec(s).map_or(0, |o| o.shndx);
    match o.sh_type {
        // `--emit-relocs`: the relocations of one output section, naming `.symtab`'s symbols.
        E::SHT_RELA if !o.is_alloc() => (
            link_of(Synth::Symtab),
            emit_relocs::target_shndx(lay, OsecId::new(k)),
        ),
        E::SHT_SYMTAB => (link_of(Synth::Strtab), lay.symtab.first_global()),
        E::SHT_DYNSYM => (
            link_of(Synth::Dynstr),
            1, // every dynamic symbol is global
        ),
        E::SHT_HASH | E::SHT_GNU_HASH | E::SHT_GNU_VERSYM => (link_of(Synth::Dynsym), 0),
        E::SHT_GNU_VERNEED => (link_of(Synth::Dynstr), lay.verneed.len() as u32),
        E::SHT_GNU_VERDEF => (link_of(Synth::Dynstr), 1 + cx.res.version_defs.len() as u32),
        E::SHT_DYNAMIC => (link_of(Synth::Dynstr), 0),
        // A static executable's IRELATIVE table: linked to .symtab (as GNU ld does) and applying to .got.
        E::SHT_RELA if !lay.is_dynamic => (link_of(Synth::Symtab), link_of(Synth::Got)),
        E::SHT_RELA => (
            link_of(Synth::Dynsym),
            if o.name == b".rela.plt" {
                link_of(Synth::GotPlt)
            } else {
                0
            },
        ),
        // SHF_LINK_ORDER: the output section its first input's linked section went to.
        _ if o.flags & E::SHF_LINK_ORDER as u64 != 0 => (link_order_target(cx, OsecId::new(k)), 0),
        _ => (0, 0),
    }
}

const BUILD_ID_CHUNK: usize = 1 << 20;

/// The build id's chunks (`BUILD_ID_CHUNK` bytes at multiples of it) that no writer touches after the input and
/// merged sections are written: those that meet no linker-made section but `.dynstr` (written first), nor the ELF
/// and program headers, nor the section header table. None unless the id is a digest of the image (`sha1`, `md5`)
/// over more than one chunk.
fn early_chunks(config: &Config, lay: &Layout, len: usize) -> Vec<usize> {
    if lay.synth_sec(Synth::BuildId).is_none()
        || !matches!(config.build_id, BuildId::Sha1 | BuildId::Md5)
        || len <= BUILD_ID_CHUNK
    {
        return Vec::new();
    }
    let mut late: Vec<std::ops::Range<usize>> = lay
        .synth
        .sections_but(Synth::Dynstr)
        .map(|i| &lay.osecs[i.index()])
        .filter(|o| !o.is_nobits())
        .map(|o| o.offset as usize..(o.offset + o.size) as usize)
        .collect();
    late.push(0..crate::elf::headers_size(lay.segments.len()) as usize);
    // The section header table ends the file.
    late.push(lay.shoff as usize..lay.file_size as usize);
    let mut touched = vec![false; len.div_ceil(BUILD_ID_CHUNK)];
    for r in late.iter().filter(|r| r.start < r.end) {
        let last = ((r.end - 1) / BUILD_ID_CHUNK).min(touched.len() - 1);
        for t in &mut touched[(r.start / BUILD_ID_CHUNK).min(last)..=last] {
            *t = true;
        }
    }
    (0..touched.len()).filter(|&k| !touched[k]).collect()
}

/// The huge pages of the output (`HUGE_PAGE` bytes at multiples of it) made only of chunks `ks` (ascending) and
/// clear of `keep`, by page index, for `release_page`. Whole pages only: releasing part of a huge page would
/// split its mapping.
fn releasable_pages(ks: &[usize], len: usize, keep: Option<std::ops::Range<usize>>) -> Vec<bool> {
    const PER_PAGE: usize = HUGE_PAGE / BUILD_ID_CHUNK;
    let mut pages = vec![false; len / HUGE_PAGE];
    for (p, page) in pages.iter_mut().enumerate() {
        let (a, b) = (p * HUGE_PAGE, (p + 1) * HUGE_PAGE);
        let first = ks.partition_point(|&k| k < p * PER_PAGE);
        *page = ks
            .get(first..first + PER_PAGE)
            .is_some_and(|w| w.iter().enumerate().all(|(i, &k)| k == p * PER_PAGE + i))
            && !keep.as_ref().is_some_and(|k| k.start < b && a < k.end);
    }
    pages
}

/// The size of a huge page, and of a huge folio of the output's page cache (`advise_huge_pages`).
const HUGE_PAGE: usize = 1 << 21;
const _: () = assert!(HUGE_PAGE.is_multiple_of(BUILD_ID_CHUNK));

/// Drops the page-table entries of huge page `p` of the output mapping at address `image` (`MADV_DONTNEED`), a
/// page nothing reads or writes any more. The bytes stay in the page cache, marked dirty, and a later access would
/// fault them back in: no data changes. This takes work out of the `munmap` that closes the output, which must
/// finish before the link reports success (ETXTBSY) and runs on one thread while the others idle. Most of that
/// work is per 4 KiB block, not per page-table entry: ext4 marks each block's buffer dirty when a dirty entry is
/// dropped (`block_dirty_folio`, 93% of the munmap's samples on clang-so, 6 ms for its 220 MB), under a lock of
/// the file's, so it does not spread over threads. Done page by page as the build id's early chunks are hashed,
/// it overlaps the writers of the linker-made sections.
fn release_page(image: usize, p: usize) {
    // SAFETY: the page is inside the output's shared file mapping (`releasable_pages` counts whole pages of the
    // image), which starts on a page boundary.
    unsafe { crate::alloc::drop_file_pages(image + p * HUGE_PAGE, HUGE_PAGE) };
}

/// The byte ranges of chunks `ks` (ascending), consecutive chunks joined.
fn chunk_runs(ks: &[usize], len: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for &k in ks {
        let r = k * BUILD_ID_CHUNK..((k + 1) * BUILD_ID_CHUNK).min(len);
        match runs.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ => runs.push(r),
        }
    }
    runs
}

/// Overlapping or adjacent ranges joined, in order.
fn union(mut ranges: Vec<std::ops::Range<usize>>) -> Vec<std::ops::Range<usize>> {
    ranges.sort_unstable_by_key(|r| r.start);
    let mut out: Vec<std::ops::Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges.into_iter().filter(|r| r.start < r.end) {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The BLAKE3 chaining values of chunks `ks`, in parallel; `bytes` gives a chunk's bytes by its range.
/// A task per huge page of the image, each calling `done(page)` once it has hashed the page's chunks of `ks`.
fn chunk_values<'a>(
    ks: &[usize],
    len: usize,
    holes: &[std::ops::Range<usize>],
    bytes: impl Fn(std::ops::Range<usize>) -> &'a [u8] + Sync,
    done: impl Fn(usize) + Sync,
) -> Vec<(usize, blake3::hazmat::ChainingValue)> {
    use blake3::hazmat::HasherExt;
    const PER_PAGE: usize = HUGE_PAGE / BUILD_ID_CHUNK;
    let groups: Vec<&[usize]> = ks.chunk_by(|a, b| a / PER_PAGE == b / PER_PAGE).collect();
    groups
        .par_iter()
        .with_max_len(1)
        .flat_map_iter(|g| {
            let cvs: Vec<(usize, blake3::hazmat::ChainingValue)> = g
                .iter()
                .map(|&k| {
                    let start = k * BUILD_ID_CHUNK;
                    let r = start..(start + BUILD_ID_CHUNK).min(len);
                    let data = if in_hole(holes, &r) {
                        &ZERO_CHUNK[..r.len()]
                    } else {
                        bytes(r)
                    };
                    let cv = blake3::Hasher::new()
                        .set_input_offset(start as u64)
                        .update(data)
                        .finalize_non_root();
                    (k, cv)
                })
                .collect();
            done(g[0] / PER_PAGE);
            cvs
        })
        .collect()
}

/// A chunk of zeros, hashed in place of a chunk that lies in a hole of the image (`untouched`: space no writer
/// touches, zero), so that hashing a large sparse output faults in none of its pages (a fuzzer finding: a script's
/// 4 GiB alignment gap took 17 s and 4 GiB of memory to hash).
static ZERO_CHUNK: [u8; BUILD_ID_CHUNK] = [0; BUILD_ID_CHUNK];

/// Whether `r` lies inside one of `holes` (ascending, disjoint).
fn in_hole(holes: &[std::ops::Range<usize>], r: &std::ops::Range<usize>) -> bool {
    let k = holes.partition_point(|h| h.end <= r.start);
    holes
        .get(k)
        .is_some_and(|h| h.start <= r.start && r.end <= h.end)
}

/// BLAKE3 of `bytes`, the same digest as `blake3::hash`, from the chaining values of its `BUILD_ID_CHUNK`-byte
/// chunks: those in `known` (hashed earlier, `chunk_values`) and the rest, hashed here in parallel, joined along the
/// BLAKE3 tree (a left subtree holds the largest power of two of chunks that leaves input on its right; every
/// subtree of more than one chunk splits at a multiple of `BUILD_ID_CHUNK`).
fn build_id_tree(
    bytes: &[u8],
    holes: &[std::ops::Range<usize>],
    known: Vec<(usize, blake3::hazmat::ChainingValue)>,
    done: impl Fn(usize) + Sync,
) -> blake3::Hash {
    use blake3::hazmat::ChainingValue;
    use blake3::hazmat::{Mode, left_subtree_len, merge_subtrees_non_root, merge_subtrees_root};
    const C: usize = BUILD_ID_CHUNK;
    if bytes.len() <= C {
        return blake3::hash(bytes);
    }
    let n = bytes.len().div_ceil(C);
    let mut cvs: Vec<Option<ChainingValue>> = vec![None; n];
    for (k, cv) in known {
        cvs[k] = Some(cv);
    }
    let missing: Vec<usize> = (0..n).filter(|&k| cvs[k].is_none()).collect();
    for (k, cv) in chunk_values(&missing, bytes.len(), holes, |r| &bytes[r], done) {
        cvs[k] = Some(cv);
    }
    let cvs: Vec<ChainingValue> = cvs.into_iter().flatten().collect();
    // The subtree of `len` bytes starting at chunk `first`.
    fn subtree(cvs: &[ChainingValue], first: usize, len: u64) -> ChainingValue {
        if len <= C as u64 {
            return cvs[first];
        }
        let left = left_subtree_len(len);
        merge_subtrees_non_root(
            &subtree(cvs, first, left),
            &subtree(cvs, first + (left / C as u64) as usize, len - left),
            Mode::Hash,
        )
    }
    let len = bytes.len() as u64;
    let left = left_subtree_len(len);
    merge_subtrees_root(
        &subtree(&cvs, 0, left),
        &subtree(&cvs, (left / C as u64) as usize, len - left),
        Mode::Hash,
    )
}

/// Writes the build id note into output section `o` over the finished image. The whole huge pages of a mapped
/// output that `early` lists as not released yet (it lists none for a heap buffer) are released as their chunks are
/// hashed, but for the one the id is written to afterwards.
fn write_build_id(
    config: &Config,
    lay: &Layout,
    o: layout::SynthPart,
    bytes: &mut [u8],
    early: EarlyHash,
) {
    let off = o.offset as usize;
    let note = off..(o.offset + o.size) as usize;
    let EarlyHash {
        cvs: early,
        releasable,
        image,
    } = early;
    let done = |p: usize| {
        let page = p * HUGE_PAGE..(p + 1) * HUGE_PAGE;
        if releasable.get(p) == Some(&false) && !(note.start < page.end && page.start < note.end) {
            release_page(image, p);
        }
    };
    let n = lay.build_id_size as usize;
    let desc = notes::write_build_id_header(&mut bytes[note.clone()], n as u64);
    let id: Vec<u8> = match &config.build_id {
        BuildId::Hex(h) => h.clone(),
        BuildId::Uuid => {
            let mut v = vec![0u8; 16];
            if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
                use std::io::Read;
                let _ = f.read_exact(&mut v);
            }
            v[6] = (v[6] & 0x0f) | 0x40;
            v[8] = (v[8] & 0x3f) | 0x80;
            v
        }
        // sha1 and md5 name the id's length (20 and 16 bytes) and that it is a cryptographic digest of the
        // contents; the digest is BLAKE3 of the whole image, truncated (as wild does). GNU ld's value cannot be
        // matched by a parallel linker anyway (lld and mold hash 1 MiB chunks, then the chunk digests), and
        // BLAKE3 hashes the chunks in parallel several times faster than SHA-1 (clang-so's 220 MB: 58 -> ~15 ms
        // on 2 cores) while resisting collisions better than either. Its tree lets most chunks be hashed before
        // the image is finished (`early_chunks`), by threads the linker-made sections' writers leave idle:
        // medians of 9-11, the two phases on clang-so 51.4 -> 49.7 ms, on rg-debug 9.7 -> 8.2 ms.
        BuildId::Sha1 | BuildId::Md5 => build_id_tree(bytes, &untouched(lay), early, done)
            .as_bytes()
            .to_vec(),
        _ => {
            // Fast: xxh3-128 of per-chunk xxh3-64 digests, chunks hashed in parallel.
            let digests: Vec<u8> = bytes
                .par_chunks(BUILD_ID_CHUNK)
                .flat_map_iter(|c| xxhash_rust::xxh3::xxh3_64(c).to_le_bytes())
                .collect();
            xxhash_rust::xxh3::xxh3_128(&digests).to_le_bytes().to_vec()
        }
    };
    bytes[off + desc.start..off + desc.end].copy_from_slice(&id[..n]);
}

/// The section index of the output section that holds the section linked to the first SHF_LINK_ORDER input of
/// output section `osec` (0 if none).
fn link_order_target(cx: &WriteCx, osec: OsecId) -> u32 {
    let lay = cx.lay;
    for (f, o) in cx.res.objects.iter().enumerate() {
        for (s, sec) in o.secs() {
            if lay.place_osec[f][s.index()] == osec && sec.flags() & E::SHF_LINK_ORDER as u64 != 0 {
                let link = sec.shdr.sh_link.get(LE) as usize;
                return lay.place_osec[f]
                    .get(link)
                    .and_then(|&p| lay.osecs.get(p.index()))
                    .map_or(0, |o| o.shndx);
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::Parts;

    #[test]
    fn parts_keep_image_offsets() {
        let mut image: Vec<u8> = (0..64).collect();
        // Group 0: 8..16 and 16..24 (adjacent), group 1: 40..48; 30..30 is empty and left out.
        let one = |r: std::ops::Range<usize>| vec![r];
        let groups = [vec![8..16, 16..24, 30..30], one(40..48)];
        let [mut a, mut b] = Parts::split(&mut image, &groups);
        assert_eq!(a.0.len(), 2);
        assert_eq!(&a[8..10], &[8, 9]);
        // An index at the boundary of two adjacent parts is the later one's first byte...
        assert_eq!(a[16..][0], 16);
        assert_eq!(a[16..].len(), 8);
        // ...and an empty range at the end of the last part is that part's end.
        assert!(a[24..24].is_empty());
        assert!(a[24..].is_empty());
        a[20..22].copy_from_slice(&[0xaa, 0xbb]);
        b[47..48][0] = 0xcc;
        assert_eq!(b.take(40).map(|p| p.len()), Some(8));
        assert!(b.take(40).is_none());
        drop((a, b));
        assert_eq!(&image[19..23], &[19, 0xaa, 0xbb, 22]);
        assert_eq!(image[47], 0xcc);
    }

    #[test]
    fn releasable_pages_are_whole_pages_of_early_chunks() {
        use super::{BUILD_ID_CHUNK as C, HUGE_PAGE as H, releasable_pages};
        assert_eq!(H, 2 * C);
        // Pages 0 (chunks 0, 1), 1 (2, 3), 2 (4, 5), 3 (6, 7); the image ends inside page 4.
        let len = 4 * H + 100;
        let ks = [0, 1, 3, 4, 5, 6, 7, 8];
        assert_eq!(releasable_pages(&ks, len, None), [true, false, true, true]);
        // A page meeting the kept range stays, even by one byte.
        assert_eq!(
            releasable_pages(&ks, len, Some(3 * H - 1..3 * H)),
            [true, false, false, true]
        );
        assert_eq!(releasable_pages(&ks, H - 1, None), Vec::<bool>::new());
    }

    #[test]
    fn build_id_tree_is_blake3() {
        use super::{BUILD_ID_CHUNK as C, build_id_tree, chunk_values};
        let data: Vec<u8> = (0..5 * C + 777).map(|i| (i * 31 % 251) as u8).collect();
        for len in [0, 1, C - 1, C, C + 1, 2 * C, 3 * C + 5, 4 * C, 5 * C + 777] {
            let bytes = &data[..len];
            let n = len.div_ceil(C);
            // No chunk known, every other one, all but the last.
            for known in [
                vec![],
                (0..n).step_by(2).collect(),
                (0..n.saturating_sub(1)).collect(),
            ] {
                let known = if len <= C { vec![] } else { known };
                let cvs = chunk_values(&known, len, &[], |r| &bytes[r], |_| {});
                assert_eq!(
                    build_id_tree(bytes, &[], cvs, |_| {}),
                    blake3::hash(bytes),
                    "{len} bytes, {known:?}"
                );
            }
        }
        // Chunks in holes (zeros no writer touches) are hashed from zeros, not read: the same digest. A hole that
        // covers part of a chunk leaves it read.
        let mut sparse = data.clone();
        sparse[C / 2..4 * C].fill(0);
        let holes: Vec<std::ops::Range<usize>> = std::iter::once(C / 2..4 * C).collect();
        let poisoned = |r: std::ops::Range<usize>| {
            assert!(!(C..4 * C).contains(&r.start), "hole chunk {r:?} read");
            &sparse[r]
        };
        let cvs = chunk_values(&[1, 2], sparse.len(), &holes, poisoned, |_| {});
        assert_eq!(
            build_id_tree(&sparse, &holes, cvs, |_| {}),
            blake3::hash(&sparse)
        );
    }

    #[test]
    #[should_panic(expected = "are not this writer's")]
    fn parts_refuse_bytes_of_other_writers() {
        let mut image = vec![0u8; 64];
        let one = |r: std::ops::Range<usize>| vec![r];
        let groups = [one(8..16), one(16..24)];
        let [mut a, _] = Parts::split(&mut image, &groups);
        a[14..18].fill(1);
    }
}
