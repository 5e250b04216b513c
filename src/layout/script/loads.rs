//! The program headers a script layout makes: `PT_LOAD`s derived from the addresses, or exactly what `PHDRS`
//! lists.

use super::super::OutputSection;
use super::super::segments::Load;
use super::walk::{State, Walk, flags_of};
use crate::index::NONE;
use crate::script::sections::SectionsScript;
use object::elf as E;

/// The `PT_LOAD`s of the allocated sections, in order: a new one where the flags change on a new page, the load
/// address stops following the address, the address goes backwards or jumps a page or more; file offsets congruent to addresses
/// modulo the page size. The headers are in the first when there is room for them before its first section on
/// its page.
type Loads = (Vec<Load>, Option<(u64, u64)>, u64, Vec<(usize, u64)>);

/// With `PHDRS`: per output section, the program headers it is in (its description's `:phdr`s, or the previous
/// section's, as GNU ld inherits them; the first `PT_LOAD` for sections before any).
pub fn section_phdrs(
    sc: &SectionsScript,
    osecs: &[OutputSection],
    script_desc: &[u32],
) -> Vec<Vec<usize>> {
    let first_load = (0..sc.phdrs.len()).find(|&k| sc.phdr_type(k) == Ok(E::PT_LOAD));
    let mut current: Vec<usize> = first_load.into_iter().collect();
    (0..osecs.len())
        .map(|i| {
            if let Some(&d) = script_desc.get(i).filter(|&&d| d != NONE) {
                let named = &sc.outputs[d as usize].phdrs;
                if !named.is_empty() {
                    current = named
                        .iter()
                        .filter_map(|n| sc.phdrs.iter().position(|p| &p.name == n))
                        .collect();
                }
            }
            // NOLOAD sections are in no segment (GNU ld's rule under PHDRS); the next section still inherits.
            let noload = script_desc.get(i).is_some_and(|&d| {
                d != NONE && sc.outputs[d as usize].ty.as_deref() == Some("NOLOAD")
            });
            if osecs[i].is_alloc() && !noload {
                current.clone()
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// Per output section, the `PHDRS` `PT_LOAD` it is in (`None` without PHDRS).
pub(super) fn load_keys(w: &Walk, osecs: &[OutputSection]) -> Vec<Option<usize>> {
    if w.sc.phdrs.is_empty() {
        return vec![None; osecs.len()];
    }
    section_phdrs(w.sc, osecs, w.script_desc)
        .into_iter()
        .map(|l| l.into_iter().find(|&k| w.sc.phdr_type(k) == Ok(E::PT_LOAD)))
        .collect()
}

/// The program headers `PHDRS` lists, in its order, over the laid-out sections: each `PT_LOAD` the load its
/// sections made, the others spanning their sections; `FLAGS` and `AT` as given.
pub fn phdrs_segments(
    sc: &SectionsScript,
    osecs: &[OutputSection],
    keep: &[bool],
    script_desc: &[u32],
    (loads, symbols): (&[Load], &[super::walk::ScriptSymbol]),
    headers: Option<(u64, u64)>,
    pages: (u64, u64),
) -> Result<Vec<crate::elf::Segment>, String> {
    let members = section_phdrs(sc, osecs, script_desc);
    // Contents in no `PT_LOAD` (`:NONE`, or only other headers) are not loaded: GNU ld's warning.
    for (i, o) in osecs.iter().enumerate() {
        let loaded = members[i]
            .iter()
            .any(|&k| sc.phdr_type(k) == Ok(E::PT_LOAD));
        if keep[i] && o.is_alloc() && !o.is_nobits() && o.size > 0 && !loaded {
            crate::diag::warn(&format!(
                "allocated section `{}' not in segment",
                String::from_utf8_lossy(&o.name)
            ));
        }
    }
    let mut out = Vec::with_capacity(sc.phdrs.len());
    for (k, p) in sc.phdrs.iter().enumerate() {
        let ty = sc.phdr_type(k)?;
        let secs: Vec<&OutputSection> = (0..osecs.len())
            .filter(|&i| keep[i] && members[i].contains(&k))
            .map(|i| &osecs[i])
            .collect();
        // Without sections or FLAGS, no flags (read for the headers) and the word's alignment, as GNU ld writes
        // them.
        let mut seg = crate::elf::Segment {
            p_type: ty,
            // Readable where it maps the headers (GNU ld's `FILEHDR`/`PHDRS`).
            flags: match secs.is_empty() {
                true if p.filehdr || p.phdrs => E::PF_R,
                true => 0,
                false => secs.iter().fold(E::PF_R, |f, o| f | flags_of(o)),
            },
            offset: 0,
            vaddr: 0,
            paddr: 0,
            filesz: 0,
            memsz: 0,
            align: secs.iter().map(|o| o.align.max(1)).max().unwrap_or(8),
        };
        if ty == E::PT_LOAD {
            // Sections assigned back to this header after another's (the kernel's `.bss :data` after `:init`)
            // made loads of their own: GNU ld stretches the segment over all of them and what lies between.
            let mut held: Vec<&Load> = (secs.iter())
                .filter(|o| o.size > 0)
                .filter_map(|o| load_at(loads, o.addr))
                .collect();
            if held.is_empty() {
                held.extend(secs.first().and_then(|o| load_at(loads, o.addr)));
            }
            held.sort_by_key(|l| l.vaddr);
            held.dedup_by_key(|l| l.vaddr);
            if let Some(l) = held.first() {
                (seg.offset, seg.vaddr, seg.paddr) = (l.offset, l.vaddr, l.paddr);
                (seg.filesz, seg.memsz, seg.align) = (l.filesz, l.memsz, l.align);
            }
            for m in held.iter().skip(1) {
                let at = m.vaddr - seg.vaddr;
                if m.filesz > 0 {
                    if m.offset.wrapping_sub(seg.offset) != at {
                        return Err(sc.error(
                            p.pos,
                            format!(
                                "segment {} cannot map its section at {:#x} with the one at {:#x}: they are not \
                                 as far apart in the file as in memory",
                                p.name, m.vaddr, seg.vaddr
                            ),
                        ));
                    }
                    seg.filesz = seg.filesz.max(at + m.filesz);
                }
                seg.memsz = seg.memsz.max(at + m.memsz);
                seg.align = seg.align.max(m.align);
            }
        } else if ty == E::PT_PHDR {
            let base = headers.map_or(0, |h| h.0);
            let size = crate::elf::phdr_size() * sc.phdrs.len() as u64;
            let ehdr = crate::elf::headers_size(0);
            (
                seg.offset, seg.vaddr, seg.paddr, seg.filesz, seg.memsz, seg.align,
            ) = (
                ehdr,
                base + ehdr,
                base + ehdr,
                size,
                size,
                crate::elf::word_align(),
            );
        } else if let (Some(first), Some(last)) = (secs.first(), secs.last()) {
            let end = |o: &&OutputSection| {
                o.addr
                    + if o.is_tls() && o.is_nobits() && ty != E::PT_TLS {
                        0
                    } else {
                        o.size
                    }
            };
            let file_end = secs
                .iter()
                .filter(|o| !o.is_nobits())
                .map(|o| o.offset + o.size)
                .max();
            // The physical address is the first section's load address, as its PT_LOAD maps it.
            let paddr = load_at(loads, first.addr)
                .map_or(first.addr, |l| l.paddr.wrapping_add(first.addr - l.vaddr));
            (seg.offset, seg.vaddr, seg.paddr) = (first.offset, first.addr, paddr);
            seg.filesz = file_end.map_or(0, |e| e - first.offset);
            seg.memsz = end(last) - first.addr;
        }
        let env = PhdrsEnv {
            osecs,
            symbols,
            pages,
        };
        if let Some(f) = &p.flags {
            seg.flags = f.eval(&env).map_err(|e| sc.error(p.pos, e))? as u32;
        }
        if let Some(a) = &p.at {
            seg.paddr = a.eval(&env).map_err(|e| sc.error(p.pos, e))?;
        }
        out.push(seg);
    }
    Ok(out)
}

/// What `PHDRS`' expressions read, once the sections are laid out: the script's symbols (SeaBIOS's
/// `AT (code32flat_start)` names one `SECTIONS` assigns), the output sections, and `CONSTANT (MAXPAGESIZE)` and
/// `CONSTANT (COMMONPAGESIZE)` (`-z max-page-size`, `-z common-page-size`).
struct PhdrsEnv<'a> {
    osecs: &'a [OutputSection],
    symbols: &'a [super::walk::ScriptSymbol],
    pages: (u64, u64),
}

impl crate::expr::Env for PhdrsEnv<'_> {
    fn symbol(&self, name: &str) -> Option<u64> {
        (self.symbols.iter().rev())
            .find(|s| s.0 == name)
            .map(|s| s.1)
    }
    fn section(&self, name: &str) -> Option<(u64, u64, u64, u64)> {
        let o = self.osecs.iter().find(|o| o.name == name.as_bytes())?;
        Some((o.addr, o.addr, o.size, o.align.max(1)))
    }
    fn max_page_size(&self) -> u64 {
        self.pages.0
    }
    fn common_page_size(&self) -> u64 {
        self.pages.1
    }
    // GNU ld evaluates `PHDRS` before it sizes the headers: its `AT (x + SIZEOF_HEADERS)` reads 0 there.
    fn sizeof_headers(&self) -> u64 {
        0
    }
}

/// The load that holds `addr`: the one it lies in, or else one it ends (an empty section's address); loads
/// adjoin (the kernel's `.data` ends where `.init.text`'s PT_LOAD starts), so an end is only a fallback.
fn load_at(loads: &[Load], addr: u64) -> Option<&Load> {
    (loads
        .iter()
        .find(|l| addr >= l.vaddr && addr - l.vaddr < l.memsz))
    .or_else(|| loads.iter().find(|l| addr == l.vaddr.wrapping_add(l.memsz)))
}

/// The loads of the laid-out sections, their file offsets, and where the headers are. A paged load's file offset
/// is congruent to its address modulo its alignment (the page size, or its most-aligned section's where that is
/// larger, as in GNU ld), so a load with such a section is found first and its offset then follows that.
pub(super) fn loads(st: &State, w: &Walk, keys: &[Option<usize>]) -> Result<Loads, String> {
    let page = w.config.max_page_size;
    let first = lay_out_loads(st, w, keys, &[])?;
    if !w.config.paged() || first.0.iter().all(|l| l.align <= page) {
        return Ok(first);
    }
    let aligns: Vec<u64> = first.0.iter().map(|l| l.align).collect();
    lay_out_loads(st, w, keys, &aligns)
}

/// `loads`, the `k`th load started congruent modulo `aligns[k]` (the page size where `aligns` has none).
fn lay_out_loads(
    st: &State,
    w: &Walk,
    keys: &[Option<usize>],
    aligns: &[u64],
) -> Result<Loads, String> {
    let page = w.config.max_page_size;
    // By load address, as GNU ld maps sections to segments: regions put a later section below an earlier one
    // (an orphan of code after `.data` in RAM goes to FLASH after `.text`), which then shares `.text`'s load.
    let mut alloc: Vec<usize> = (0..st.osecs.len())
        .filter(|&i| w.keep[i] && st.osecs[i].is_alloc())
        .collect();
    // Then by address, as GNU ld's `elf_sort_sections` (zero-fill loaded nowhere after loaded contents there).
    alloc.sort_by_key(|&i| (st.lma[i], st.osecs[i].addr));
    // -N and -n: not demand paged (GNU ld's `D_PAGED` off). The headers are in no load (but where `PHDRS` says
    // `FILEHDR`), a load ends only where the addresses skip a page or stop following the load addresses, and a
    // load's file offset is congruent to its address modulo its sections' alignment only (here the largest of
    // the sections from it on, which is at least its own), not the page size.
    let paged = w.config.paged();
    let mut align_from = Vec::new();
    if !paged {
        align_from = vec![1u64; alloc.len() + 1];
        for k in (0..alloc.len()).rev() {
            let a = st.osecs[alloc[k]].align.max(1).next_power_of_two();
            align_from[k] = align_from[k + 1].max(a);
        }
    }
    let mut loads: Vec<Load> = Vec::new();
    let mut offsets = Vec::with_capacity(alloc.len());
    let mut headers = None;
    let mut off = w.headers;
    // The previous section's end address and load offset (LMA - VMA).
    let mut prev: Option<(u64, u64)> = None;
    let first_addr = alloc.first().map(|&i| st.osecs[i].addr);
    // With PHDRS the headers are loaded where the first PT_LOAD says FILEHDR (under -N too, as in GNU ld).
    let want_headers = match (w.sc.phdrs.is_empty(), alloc.first()) {
        (true, _) => paged,
        (false, Some(&i)) => keys[i].is_some_and(|k| w.sc.phdrs[k].filehdr),
        (false, None) => false,
    };
    // The headers are loaded where they fit on the first section's page below it; else, where the commands read
    // SIZEOF_HEADERS or the output has a `.interp`, on the page where they end right below the first section
    // (GNU ld's `load_phdrs`: `-Ttext-segment` puts `.text` a page after them).
    if let Some(a) = first_addr
        && want_headers
    {
        let base = a - a % page;
        if a >= base + w.headers {
            headers = Some((base, w.headers));
            off = a - base;
        } else if (st.asked_headers.get() || (w.phdr && w.sc.phdrs.is_empty())) && a >= w.headers {
            let below = (a - w.headers) / page * page;
            headers = Some((below, w.headers));
            off = a - below;
        }
    }
    // `-z separate-code`: the headers are not mapped executable. Where the first section is code, GNU ld gives
    // them a read-only load of their own.
    if let (Some((base, size)), Some(&i)) = (headers, alloc.first())
        && w.config.z_separate_code
        && w.sc.phdrs.is_empty()
        && flags_of(&st.osecs[i]) & E::PF_X != 0
    {
        let delta = st.lma[i].wrapping_sub(st.osecs[i].addr);
        loads.push(Load {
            flags: E::PF_R,
            offset: 0,
            vaddr: base,
            paddr: base.wrapping_add(delta),
            filesz: size,
            memsz: size,
            align: page,
        });
    }
    let mut prev_key = None;
    let mut prev_zero_fill = false;
    for (k, &i) in alloc.iter().enumerate() {
        let o = &st.osecs[i];
        let (addr, lma) = (o.addr, st.lma[i]);
        let delta = lma.wrapping_sub(addr);
        let flags = flags_of(o);
        let tbss = o.is_tls() && o.is_nobits();
        // With PHDRS, a section in no PT_LOAD is in none here either.
        if !w.sc.phdrs.is_empty() && keys[i].is_none() {
            offsets.push((i, off));
            continue;
        }
        // An empty section makes no segment of its own.
        if o.size == 0
            && let Some(l) = loads.last()
        {
            offsets.push((i, l.offset + addr.saturating_sub(l.vaddr).min(l.filesz)));
            continue;
        }
        // Sections of other flags on the page the load ends in share it (its flags widen, as GNU ld does): two
        // loads mapping one page would take each other's protections.
        // Contents after zero-fill start a new load, which would otherwise have to load the zero-fill (GNU ld's
        // rule; TLS zero-fill counts as loaded there).
        let after_zero_fill = prev_zero_fill && !o.is_nobits();
        let split = match (loads.last(), prev) {
            // PHDRS: where the section's first PT_LOAD changes (a section below the one before it in the same
            // load starts a new one too, rather than a negative offset).
            (Some(_), Some((end, _))) if !w.sc.phdrs.is_empty() => {
                keys[i] != prev_key || addr < end
            }
            // Not paged: where the addresses skip a whole page after the one the load ends in (GNU ld's rule).
            (Some(_), Some((end, d))) if !paged => {
                let moved = d != delta && !o.is_nobits();
                let skips = (end.div_ceil(page).saturating_add(1)).saturating_mul(page) <= addr;
                moved || after_zero_fill || addr < end || skips
            }
            // Zero-fill loaded elsewhere (after `AT>`) starts a load of its own, as in GNU ld.
            (Some(l), Some((end, d))) => {
                let same_page = addr / page == end.saturating_sub(1) / page;
                (l.flags != flags && !same_page)
                    || d != delta
                    || after_zero_fill
                    || addr < end
                    || addr - end >= page
            }
            _ => true,
        };
        prev_key = keys[i];
        prev_zero_fill = o.is_nobits() && !o.is_tls();
        if split {
            let start_off = if loads.is_empty() && headers.is_some() {
                off
            } else {
                let mut x = off;
                let align = match paged {
                    true => aligns.get(loads.len()).copied().unwrap_or(page).max(page),
                    false => align_from[k],
                };
                x += addr.wrapping_sub(x) & (align - 1);
                x
            };
            let (vaddr, paddr, offset) = match (loads.is_empty(), headers) {
                (true, Some((base, _))) => (base, lma - (addr - base), 0),
                _ => (addr, lma, start_off),
            };
            loads.push(Load {
                flags,
                offset,
                vaddr,
                paddr,
                filesz: 0,
                memsz: 0,
                align: if paged { page } else { 1 },
            });
        }
        let l = loads.last_mut().unwrap();
        l.flags |= flags;
        // Offsets past the end of a file (a script's `. = 0xfffffffffffff000` inside a section): an error, not
        // wrapped offsets that overlap other sections.
        let too_big = || {
            format!(
                "section {} at {addr:#x} of {:#x} bytes does not fit in a file",
                String::from_utf8_lossy(&o.name),
                o.size
            )
        };
        // 2^48 bytes: beyond any file system's files, and far from wrapping in the arithmetic that follows.
        const MAX_FILE: u64 = 1 << 48;
        let at = (addr - l.vaddr)
            .checked_add(l.offset)
            .filter(|&at| at <= MAX_FILE)
            .ok_or_else(too_big)?;
        // Not paged, GNU ld gives zero-fill after contents the offset where the load's contents end.
        let at = match !paged && o.is_nobits() && !split {
            true => l.offset + l.filesz,
            false => at,
        };
        offsets.push((i, at));
        if o.is_nobits() {
            // No file space: what follows in the file starts where the load's contents end, not at this
            // section's address (a fuzzer finding: a NOLOAD section of 2^47 bytes made a 128 TiB output).
            off = l.offset + l.filesz;
        } else {
            off = at
                .checked_add(o.size)
                .filter(|&end| end <= MAX_FILE)
                .ok_or_else(too_big)?;
            l.filesz = off - l.offset;
        }
        let end = if tbss {
            addr
        } else {
            addr.checked_add(o.size).ok_or_else(too_big)?
        };
        l.memsz = l.memsz.max(end - l.vaddr);
        l.align = l.align.max(o.align.next_power_of_two());
        prev = Some((end, delta));
    }
    Ok((loads, headers, off, offsets))
}
