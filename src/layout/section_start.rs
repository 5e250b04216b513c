//! `--section-start` (`-Ttext`, `-Tdata`, `-Tbss`) in the default layout, as GNU ld applies it to its default
//! script: the named section gets the address exactly, the sections after it follow it (the next segment class
//! on the next page), and those before it stay where they were; `segments::place_alloc` gives a section that
//! does not start its segment there a load of its own, or extends the load before it when the address is on that
//! load's last page. This module finds the sections and refuses what cannot be loaded: sections that overlap
//! (GNU ld refuses those too), two loads on one page, and a TLS section moved apart from the others.

use super::OutputSection;
use super::segments::Run;
use crate::args::Config;
use crate::diag::{Errors, Result};

fn name(o: &OutputSection) -> String {
    String::from_utf8_lossy(&o.name).into_owned()
}

/// The positions in `alloc` (the kept allocated sections, in order) of the sections `--section-start` names, with
/// their addresses; a section the output does not have is ignored, as by GNU ld. `tls`: the TLS sections, which
/// must stay together (`PT_TLS` is one range): only the first may be moved.
pub fn starts(
    config: &Config,
    osecs: &[OutputSection],
    alloc: &[usize],
    tls: &[usize],
) -> Result<Vec<(usize, u64)>> {
    let mut starts = Vec::new();
    for (sec, addr) in &config.section_start {
        let Some(k) = alloc.iter().position(|&i| osecs[i].name == sec.as_bytes()) else {
            continue;
        };
        if tls.iter().skip(1).any(|&t| t == alloc[k]) {
            return Err(Errors::one(format!(
                "cannot place section {sec} at {addr:#x}: the TLS sections must stay together, after {}",
                name(&osecs[tls[0]])
            )));
        }
        starts.push((k, *addr));
    }
    Ok(starts)
}

/// After `place_alloc` with `--section-start`: no two sections overlap in memory (as GNU ld checks), and no two
/// loads share a page of `page` bytes (the loader would map one over the other).
pub fn check(osecs: &[OutputSection], alloc: &[usize], runs: &[Run], page: u64) -> Result<()> {
    let mut spans: Vec<(u64, u64, usize)> = alloc
        .iter()
        .map(|&i| &osecs[i])
        .zip(alloc)
        .filter(|(o, _)| o.size > 0 && !(o.is_tls() && o.is_nobits()))
        .map(|(o, &i)| (o.addr, o.addr + o.size, i))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        let ((a0, a1, a), (b0, b1, b)) = (w[0], w[1]);
        if a1 > b0 {
            return Err(Errors::one(format!(
                "section {} [{a0:#x}, {:#x}] overlaps section {} [{b0:#x}, {:#x}]",
                name(&osecs[a]),
                a1 - 1,
                name(&osecs[b]),
                b1 - 1
            )));
        }
    }
    let mut loads: Vec<&Run> = runs.iter().collect();
    loads.sort_by_key(|r| r.addr);
    let what = |r: &Run| match r.first.get() {
        None => "the ELF headers".to_string(),
        Some(i) => format!("section {}", name(&osecs[i.index()])),
    };
    for w in loads.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.mend > a.addr && b.addr / page * page < a.mend.div_ceil(page) * page {
            return Err(Errors::one(format!(
                "cannot load {} at {:#x}: its page holds the segment of {} too, which ends at {:#x}",
                what(b),
                b.addr,
                what(a),
                a.mend
            )));
        }
    }
    Ok(())
}
