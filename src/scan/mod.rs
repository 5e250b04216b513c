//! Pass 7: read every relocation of every live allocated section once and record what each symbol needs (GOT
//! slot, PLT entry, TLS GOT entries, copy relocation, canonical PLT, a dynamic symbol) and how many dynamic
//! relocations each section will emit. Each relocation's kind comes from the architecture and what it needs from
//! the policy in `reloc`, in the per-section loop of `relocs`, monomorphised for the architecture.
//!
//! Output: [`Scan`]. Invariant: the write pass makes the same decisions from the same inputs and flags, so the
//! counts recorded here are exactly what it emits. When the output may be written into the existing file, the
//! scan also gathers the input half of the proof that writing cannot fail ([`WriteCheck`]), reading the
//! relocations of non-allocated sections too.

use crate::arch::Arch;
use crate::args::{Config, OutputKind};
use crate::diag::{Errors, Result};
use crate::gc::Liveness;
use crate::index::{FileId, SecIdx, SymId};
use crate::parse::{Sec, SectionKind};
use crate::resolve::{Def, Resolved};
use crate::symbols::{SymRef, SymbolSpace, Target};
use rayon::prelude::*;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering::Relaxed};

mod relocs;
mod weak;

pub const NEEDS_GOT: u16 = 1;
pub const NEEDS_PLT: u16 = 2;
/// An initial-exec GOT entry holding the thread-pointer offset.
pub const NEEDS_GOTTP: u16 = 4;
/// A general-dynamic GOT pair (module id, offset).
pub const NEEDS_TLSGD: u16 = 8;
/// Data from a shared object accessed with absolute or PC-relative addressing: copy it into `.bss`.
pub const NEEDS_COPY: u16 = 16;
/// A shared object's function whose address is taken in a non-PIC way: its PLT entry becomes its address.
pub const NEEDS_CANONICAL: u16 = 32;
/// Needs a `.dynsym` entry because a dynamic relocation names it.
pub const NEEDS_DYNSYM: u16 = 64;
/// Named by a relocation through a non-weak symbol-table entry (so an import is bound GLOBAL, not WEAK).
pub const STRONG_REF: u16 = 128;
/// A TLS descriptor (GOT pair resolved by the dynamic loader), in a shared object.
pub const NEEDS_TLSDESC: u16 = 256;
/// An undefined symbol under the undefined-weak rule (`SymProps::WEAK_RULE`) named by a GOT or PLT relocation; cleared by `weak`.
pub const WEAK_VIA_GOT: u16 = 512;
/// Such a symbol named by another relocation in code; cleared by `weak`.
pub const WEAK_IN_CODE: u16 = 1024;

pub struct ScanCx<'a> {
    pub config: &'a Config,
    pub res: &'a Resolved,
    pub space: &'a SymbolSpace,
    pub flags: Vec<AtomicU16>,
    pub needs_tlsld: AtomicBool,
    pub needs_got_base: AtomicBool,
    /// Some dynamic relocation applies to a read-only section (a text relocation).
    pub textrel: AtomicBool,
    /// Gather a [`WriteCheck`]: the output may be written into the existing file.
    pub check_writes: bool,
}

impl ScanCx<'_> {
    pub fn is_exe(&self) -> bool {
        self.config.kind != OutputKind::Shared
    }
    #[inline]
    pub fn set(&self, s: &SymRef, f: u16) {
        self.set_id(s.id, f);
    }
    /// Sets flags `f` of symbol `id` (a load first: most are set already, and a write would take the line from
    /// the other threads).
    #[inline]
    pub fn set_id(&self, id: SymId, f: u16) {
        let slot = &self.flags[id.index()];
        if slot.load(Relaxed) & f != f {
            slot.fetch_or(f, Relaxed);
        }
    }
    #[inline(always)]
    pub fn lookup(&self, f: FileId, i: usize) -> Option<SymRef> {
        crate::symbols::lookup(self.res, self.space, f, i)
    }
}

pub struct Scan {
    pub flags: Vec<u16>,
    /// Dynamic relocations emitted by each section's contents into `.rela.dyn` (relative, symbolic).
    /// Per file: (section, count) for the sections whose contents emit any (sparse: most emit none).
    pub dyn_relocs: Vec<Vec<(SecIdx, u32)>>,
    /// With `-z pack-relative-relocs`: per file, the (section, offset) of each relative relocation that goes to
    /// `.relr.dyn` instead, in section then offset order.
    pub relr: Vec<Vec<(SecIdx, u64)>>,
    pub irel_relocs: Vec<Vec<(SecIdx, u32)>>,
    pub needs_tlsld: bool,
    pub needs_got_base: bool,
    /// The output has text relocations (`DT_TEXTREL`).
    pub textrel: bool,
    /// `Some` when the output may be written into the existing file; see [`WriteCheck`].
    pub write_check: Option<WriteCheck>,
}

/// What decides, before the output is written, that writing it cannot fail: the write pass reports a relocation
/// that does not fit its field, lies outside its section, breaks a TLS sequence it must rewrite, or (in a
/// non-allocated section, which the scan does not otherwise read) has a type or symbol it cannot apply. A link
/// that fails there after starting to overwrite the old output file would leave no output at all, so the file is
/// reused (`--update-in-place`, the default) only when this proves that writing succeeds; otherwise a new file
/// is written and renamed over the old one, which stays untouched if the link fails.
///
/// The proof is conservative. Everything the input alone decides is checked here, relocation by relocation;
/// what the layout decides is reduced to one bound: every range-checked field holds S + A - P, S + A or a
/// GOT/PLT address plus A, where S and P are addresses inside the image (or 0, or the value of an absolute or
/// linker-defined symbol, recorded to be checked after layout). So if the image's end, those values and the
/// largest |A| together stay below the architecture's reach, every such value fits. Anything else (8- and
/// 16-bit fields, 32-bit size relocations, a negative addend in an unsigned field) makes the proof give up.
#[derive(Default)]
pub struct WriteCheck {
    /// Some relocation might fail to apply: no proof.
    pub unproven: bool,
    /// The largest |A| of a relocation whose field is range-checked.
    pub max_addend: u64,
    /// Absolute and linker-defined symbols named by range-checked relocations: values known after layout.
    pub abs_targets: Vec<SymId>,
}

impl WriteCheck {
    /// Records a symbol named by a range-checked relocation whose value may lie outside the image.
    #[inline]
    pub fn abs_target(&mut self, id: SymId) {
        if self.abs_targets.last() != Some(&id) {
            self.abs_targets.push(id);
        }
    }

    fn absorb(&mut self, other: WriteCheck) {
        self.unproven |= other.unproven;
        self.max_addend = self.max_addend.max(other.max_addend);
        self.abs_targets.extend(other.abs_targets);
    }

    /// After layout: whether every range-checked value fits, given the architecture's `reach` (the largest
    /// magnitude every range-checked field holds), the segments and the symbol addresses.
    pub fn holds(&self, reach: u64, segments: &[crate::elf::Segment], addrs: &[u64]) -> bool {
        use object::elf::{PT_LOAD, PT_TLS};
        let image_end = segments
            .iter()
            .filter(|s| s.p_type == PT_LOAD || s.p_type == PT_TLS)
            .map(|s| s.vaddr.saturating_add(s.memsz))
            .max()
            .unwrap_or(0);
        let abs = self
            .abs_targets
            .iter()
            .map(|&id| addrs.get(id.index()).copied().unwrap_or(u64::MAX))
            .max()
            .unwrap_or(0);
        !self.unproven
            && image_end
                .max(abs)
                .checked_add(self.max_addend)
                .is_some_and(|v| v <= reach)
    }
}

/// Whether the output may be written into the existing file (`--update-in-place`): the mapped output is on, and
/// the output path names a file `write` could reuse.
fn may_update_in_place(config: &Config) -> bool {
    config.update_in_place
        && config.mmap_output
        && std::fs::symlink_metadata(&config.output).is_ok_and(|m| crate::output_file::reusable(&m))
}

/// Per-section outcome of the architecture's scan.
#[derive(Default)]
pub struct SectionScan {
    pub dyn_relocs: u32,
    /// Offsets of the relative relocations packed into `.relr.dyn` (not counted in `dyn_relocs`).
    pub relr: Vec<u64>,
    /// IRELATIVE relocations, which go after all others.
    pub irel_relocs: u32,
    pub errors: Vec<String>,
    /// Symbols behind the "undefined symbol" errors, for the "did you mean" hints.
    pub undefined: Vec<SymId>,
    /// Gathered when `ScanCx::check_writes`.
    pub check: WriteCheck,
    /// The warning about the section's first text relocation.
    pub textrel_warning: Option<String>,
    /// Undefined symbols reported as warnings (`--warn-unresolved-symbols`).
    pub warnings: Vec<String>,
    /// Each reference to an undefined symbol under the undefined-weak rule (`SymProps::WEAK_RULE`), and whether its dynamic
    /// relocation waits for the settling (`weak`).
    pub unsettled: Vec<(SymId, bool)>,
}

pub fn scan<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &mut SymbolSpace,
    live: &Liveness,
) -> Result<Scan> {
    let t = crate::timing::span("flag table");
    let cx = ScanCx {
        config,
        res,
        space: &*space,
        // Filled on all threads: serially, clang-so's 5 MB took 0.55 ms at 2 threads (`par::per_symbol`).
        flags: crate::par::per_symbol(space.total, || AtomicU16::new(0)),
        needs_tlsld: AtomicBool::new(false),
        needs_got_base: AtomicBool::new(false),
        textrel: AtomicBool::new(false),
        check_writes: may_update_in_place(config),
    };
    drop(t);
    let _t = crate::timing::span("scan sections");
    /// Per file: dynamic and IRELATIVE relocation counts and packed relative relocations per section, errors,
    /// undefined symbols, the write proof, text relocation warnings, and the references to unsettled symbols.
    type PerFile = (
        Vec<(SecIdx, u32)>,
        Vec<(SecIdx, u32)>,
        Vec<(SecIdx, u64)>,
        Vec<String>,
        Vec<SymId>,
        WriteCheck,
        Vec<String>,
        Vec<(SecIdx, SymId, bool)>,
    );
    let per_file: Vec<PerFile> = res
        .objects
        .par_iter()
        .enumerate()
        // A task per file: rayon's adaptive splitting handed one thread runs of neighbouring files, and the big
        // ones bunch up (clang-tool: 874 linked among 5112, mostly archive members never pulled in).
        .with_max_len(1)
        .map(|(f, o)| {
            let f = FileId::new(f);
            let mut counts = Vec::new();
            let mut irel = Vec::new();
            let mut relr = Vec::new();
            let mut errors = Vec::new();
            let mut undefined = Vec::new();
            let mut textrel = Vec::new();
            let mut check = WriteCheck::default();
            let mut nonalloc = Vec::new();
            let mut unsettled = Vec::new();
            for (s, sec) in o.secs() {
                if !live.is_live(f, s) || sec.relas().is_empty() || sec.kind == SectionKind::Ignored
                {
                    continue;
                }
                if !sec.is_alloc() {
                    // Written as `write` writes them (not merged, not NOBITS), with relocations it must be able
                    // to apply.
                    if cx.check_writes
                        && sec.kind == SectionKind::Regular
                        && sec.sh_type() != object::elf::SHT_NOBITS
                    {
                        nonalloc.push(s);
                    }
                    continue;
                }
                let r = relocs::scan_section::<A>(&cx, f, s);
                if r.dyn_relocs > 0 {
                    counts.push((s, r.dyn_relocs));
                }
                if r.irel_relocs > 0 {
                    irel.push((s, r.irel_relocs));
                }
                relr.extend(r.relr.into_iter().map(|off| (s, off)));
                errors.extend(r.errors);
                undefined.extend(r.undefined);
                check.absorb(r.check);
                textrel.extend(r.textrel_warning);
                textrel.extend(r.warnings);
                unsettled.extend(r.unsettled.into_iter().map(|(id, d)| (s, id, d)));
            }
            // In runs of `CHECK_RUN` relocations on every thread: one object can hold most of a link's debug
            // relocations (c-gc: sqlite3.o, 150K in its .debug_info).
            if !nonalloc.is_empty() && !check.unproven {
                check.unproven = !nonalloc.par_iter().all(|&s| {
                    o.sec(s)
                        .relas()
                        .par_chunks(CHECK_RUN)
                        .all(|run| relocs::nonalloc_applies::<A>(&cx, f, s, run))
                });
            }
            (
                counts, irel, relr, errors, undefined, check, textrel, unsettled,
            )
        })
        .collect();
    let mut errors = Vec::new();
    let mut dyn_relocs = Vec::with_capacity(per_file.len());
    let mut irel_relocs = Vec::with_capacity(per_file.len());
    let mut relr = Vec::with_capacity(per_file.len());
    let mut undefined = Vec::new();
    let mut check = WriteCheck::default();
    let mut textrel = Vec::new();
    let mut unsettled = Vec::new();
    for (f, (c, i, p, e, u, w, t, n)) in per_file.into_iter().enumerate() {
        dyn_relocs.push(c);
        irel_relocs.push(i);
        relr.push(p);
        errors.extend(e);
        undefined.extend(u);
        check.absorb(w);
        textrel.extend(t);
        unsettled.extend(n.into_iter().map(|(s, id, d)| (FileId::new(f), s, id, d)));
    }
    if errors.is_empty() {
        dedup_undefined(&mut textrel);
        crate::srcloc::render(&res.objects, &mut textrel, 0);
        for w in &textrel {
            crate::diag::warn(w);
        }
    }
    if cx.textrel.load(Relaxed) && errors.is_empty() && config.warn_textrel {
        let what = match config.kind {
            OutputKind::Shared => "a shared object",
            OutputKind::Pie => "a PIE",
            OutputKind::Exec => "an executable",
        };
        crate::diag::warn(&format!("creating DT_TEXTREL in {what}"));
    }
    if !errors.is_empty() {
        dedup_undefined(&mut errors);
        add_suggestions(res, config, &mut errors, undefined);
        crate::srcloc::render(&res.objects, &mut errors, config.error_limit);
        return Err(Errors(errors));
    }
    let mut scan = Scan {
        flags: cx.flags.into_iter().map(AtomicU16::into_inner).collect(),
        dyn_relocs,
        irel_relocs,
        relr,
        needs_tlsld: cx.needs_tlsld.into_inner(),
        needs_got_base: cx.needs_got_base.into_inner(),
        textrel: cx.textrel.into_inner(),
        write_check: cx.check_writes.then_some(check),
    };
    if !unsettled.is_empty() {
        weak::settle(config, space, &mut scan, &unsettled);
    }
    Ok(scan)
}

/// The relocations of a non-allocated section checked in one task (`nonalloc_applies`), some 40 us of work. c-gc,
/// interleaved medians of 15 --print-timing links, scan sections: 1.15 ms with a task per section, 0.93 with runs of
/// 32K relocations, 0.80 with these; rg-release unchanged.
const CHECK_RUN: usize = 1 << 13;

/// Whether a relative relocation at `off` in `sec` is packed into `.relr.dyn`: with `-z pack-relative-relocs`,
/// when its place is word-aligned in the output (the section aligned to a multiple of 8 and `off` a multiple of
/// 8), as RELR encodes only such places, and not in `.eh_frame`, whose records move. A place outside the
/// section (bad input) stays in `.rela.dyn`, where writing reports it. Scan and write both ask this.
#[inline]
pub fn packs_relative(config: &Config, sec: Sec, off: u64) -> bool {
    config.pack_relative_relocs
        && off.is_multiple_of(8)
        && off.checked_add(8).is_some_and(|end| end <= sec.size())
        && sec.align().is_multiple_of(8)
        && sec.kind != SectionKind::EhFrame
}

/// Appends lld's "did you mean" lines to the undefined-symbol errors (of the first `--error-limit` symbols).
fn add_suggestions(res: &Resolved, config: &Config, errors: &mut [String], mut ids: Vec<SymId>) {
    ids.sort_unstable();
    ids.dedup();
    let limit = if config.error_limit == 0 {
        usize::MAX
    } else {
        config.error_limit as usize
    };
    let hints: Vec<(String, String)> = ids
        .par_iter()
        .take(limit)
        .filter_map(|&id| {
            Some((
                format!("undefined symbol: {}", res.display(id)),
                suggestion(res, id)?,
            ))
        })
        .collect();
    for e in errors.iter_mut() {
        let head = e.lines().next().unwrap_or("");
        if let Some((_, hint)) = hints.iter().find(|(h, _)| h == head) {
            e.push('\n');
            e.push_str(hint);
        }
    }
}

/// A defined name the undefined symbol `id` may have been meant to be, as `>>> did you mean:` and `>>> defined
/// in:` lines: the C function a C++ reference names (a missing `extern "C"`), the C++ function a C reference
/// names, or a defined name one edit away (a typo, a wrong case).
fn suggestion(res: &Resolved, id: SymId) -> Option<String> {
    let defined_in = |g: SymId| -> Option<String> {
        match res.defs.get(g.index())? {
            Def::Object { file, .. } => Some(res.objects[file.index()].name.clone()),
            Def::Shared { file, .. } => Some(res.shared[file.index()].soname.clone()),
            _ => None,
        }
    };
    let hint = |shown: String, g: SymId| -> Option<String> {
        Some(format!(
            ">>> did you mean: {shown}\n>>> defined in: {}",
            defined_in(g)?
        ))
    };
    let name = res.name(id);
    if name.starts_with(b"_Z") {
        // `foo(int)` referenced from C++, `foo` defined in C.
        let shown = res.display(id);
        let base = shown.split('(').next().unwrap_or("");
        if !base.is_empty()
            && base != shown
            && let Some(g) = res.names.lookup(base.as_bytes())
            && let Some(h) = hint(format!("extern \"C\" {base}"), g)
        {
            return Some(h);
        }
    } else if !name.is_empty() {
        // `foo` referenced from C, `foo(int)` defined in C++: its mangled name contains `3foo`.
        let needle = format!("{}{}", name.len(), String::from_utf8_lossy(name));
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let want = format!("{}(", String::from_utf8_lossy(name));
        let found = (0..res.num_globals() as u32)
            .into_par_iter()
            .map(SymId)
            .find_first(|&g| {
                let n = res.name(g);
                n.starts_with(b"_Z")
                    && finder.find(n).is_some()
                    && defined_in(g).is_some()
                    && res.display(g).starts_with(&want)
            });
        if let Some(g) = found {
            return hint(res.display(g), g);
        }
    }
    // One edit away: a character deleted, swapped with the next, replaced or inserted.
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    let try_name = |cand: &[u8]| -> Option<String> {
        let g = res.names.lookup(cand)?;
        if g == id {
            None
        } else {
            hint(res.display(g), g)
        }
    };
    let mut cand = Vec::with_capacity(name.len() + 1);
    for i in 0..name.len() {
        cand.clear();
        cand.extend_from_slice(&name[..i]);
        cand.extend_from_slice(&name[i + 1..]);
        if let Some(h) = try_name(&cand) {
            return Some(h);
        }
        if i + 1 < name.len() {
            cand.clear();
            cand.extend_from_slice(name);
            cand.swap(i, i + 1);
            if let Some(h) = try_name(&cand) {
                return Some(h);
            }
        }
    }
    for i in 0..=name.len() {
        for &c in ALPHABET {
            if i < name.len() && name[i] != c {
                cand.clear();
                cand.extend_from_slice(name);
                cand[i] = c;
                if let Some(h) = try_name(&cand) {
                    return Some(h);
                }
            }
            cand.clear();
            cand.extend_from_slice(name);
            cand.insert(i, c);
            if let Some(h) = try_name(&cand) {
                return Some(h);
            }
        }
    }
    None
}

/// The reference sites an undefined symbol's message lists; the others are counted.
const SHOWN_REFERENCES: usize = 10;

/// lld reports each undefined symbol once with its reference sites (the first [`SHOWN_REFERENCES`], then how
/// many more); merge messages that start alike.
fn dedup_undefined(errors: &mut Vec<String>) {
    let mut merged: Vec<String> = Vec::new();
    let mut refs: Vec<usize> = Vec::new();
    for e in errors.drain(..) {
        let head = e.lines().next().unwrap_or("").to_string();
        if head.starts_with("undefined symbol:")
            && let Some(k) = merged.iter().position(|m| m.lines().next() == Some(&head))
        {
            if refs[k] < SHOWN_REFERENCES
                && let Some(site) = e.lines().nth(1)
            {
                merged[k].push('\n');
                merged[k].push_str(site);
            }
            refs[k] += 1;
            continue;
        }
        merged.push(e);
        refs.push(1);
    }
    for (m, &n) in merged.iter_mut().zip(&refs) {
        if n > SHOWN_REFERENCES {
            let _ = write!(m, "\n>>> referenced {} more times", n - SHOWN_REFERENCES);
        }
    }
    *errors = merged;
}

/// The lld-style message for a relocation against an undefined symbol (its place completed by `srcloc::render`).
pub fn undefined_error(
    cx: &ScanCx,
    f: FileId,
    s: SecIdx,
    offset: u64,
    sym: &SymRef,
) -> Option<String> {
    if !matches!(sym.target, Target::Undefined { weak: false }) {
        return None;
    }
    Some(format!(
        "undefined symbol: {}\n>>> referenced by {}",
        cx.res.display(sym.id),
        crate::srcloc::mark(f, s, offset, crate::srcloc::Style::Symbol)
    ))
}
