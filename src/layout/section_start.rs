//! `--section-start` (`-Ttext`, `-Tdata`, `-Tbss`), as GNU ld applies it to a script (its default one or the
//! link's): the named section gets the address exactly, and the walk (`script::walk`) lays the sections after it
//! out from there. This module refuses what cannot be loaded once the addresses are known: a TLS section moved
//! apart from the others (`PT_TLS` is one range), sections that overlap (GNU ld refuses those too), and two loads
//! on one page.

use super::OutputSection;
use super::segments::Load;
use crate::args::Config;
use crate::diag::{Errors, Result};

fn name(o: &OutputSection) -> String {
    String::from_utf8_lossy(&o.name).into_owned()
}

/// After the walk with `--section-start`: `loads` are the output's `PT_LOAD`s; `keep` the kept sections.
pub fn check(
    config: &Config,
    osecs: &[OutputSection],
    keep: &[bool],
    loads: &[Load],
) -> Result<()> {
    let alloc: Vec<usize> = (0..osecs.len())
        .filter(|&i| keep[i] && osecs[i].is_alloc())
        .collect();
    let tls: Vec<usize> = alloc
        .iter()
        .copied()
        .filter(|&i| osecs[i].is_tls())
        .collect();
    for (sec, addr) in &config.section_start {
        if tls.iter().skip(1).any(|&t| osecs[t].name == sec.as_bytes()) {
            return Err(Errors::one(format!(
                "cannot place section {sec} at {addr:#x}: the TLS sections must stay together, after {}",
                name(&osecs[tls[0]])
            )));
        }
    }
    let mut spans: Vec<(u64, u64, usize)> = (alloc.iter())
        .map(|&i| (&osecs[i], i))
        .filter(|(o, _)| o.size > 0 && !(o.is_tls() && o.is_nobits()))
        .map(|(o, i)| (o.addr, o.addr + o.size, i))
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
    // A load is named by its first section, or by the ELF headers it starts with.
    let what =
        |l: &Load| match (alloc.iter()).find(|&&i| osecs[i].size > 0 && osecs[i].addr == l.vaddr) {
            Some(&i) if l.offset != 0 => format!("section {}", name(&osecs[i])),
            _ => "the ELF headers".to_string(),
        };
    let page = config.max_page_size.max(1);
    let mut loads: Vec<&Load> = loads.iter().collect();
    loads.sort_by_key(|l| l.vaddr);
    for w in loads.windows(2) {
        let (a, b) = (w[0], w[1]);
        let a_end = a.vaddr + a.memsz;
        if a.memsz > 0 && b.vaddr / page * page < a_end.div_ceil(page) * page {
            return Err(Errors::one(format!(
                "cannot load {} at {:#x}: its page holds the segment of {} too, which ends at {a_end:#x}",
                what(b),
                b.vaddr,
                what(a),
            )));
        }
    }
    Ok(())
}
