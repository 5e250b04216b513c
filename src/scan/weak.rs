//! GNU ld's rule (x86-64's, which it applies to PIEs and position-dependent executables alike) for an
//! executable's undefined weak symbols of default visibility, which the scan can only settle once it has seen
//! every reference: such a symbol is left to the dynamic linker (exported, its GOT slot and PLT entry relocated,
//! pointers to it in a PIE's data relocated) when a GOT or PLT relocation names it and no other relocation in code
//! does; otherwise it is 0 at link time (a GOT slot it has holds 0, calls go to 0). `-z dynamic-undefined-weak`
//! exports it either way; `-z nodynamic-undefined-weak` makes every one 0 (`symbols::is_preemptible`), and hidden
//! ones are always 0.

use super::{NEEDS_DYNSYM, NEEDS_PLT, Scan, WEAK_IN_CODE, WEAK_VIA_GOT};
use crate::args::Config;
use crate::index::{FileId, SecIdx, SymId};
use crate::symbols::{SymProps, SymbolSpace};

/// Settles the symbols `refs` name (each reference: its file, section, symbol, and whether its dynamic relocation
/// waits for this): their property bits in `space`, their needs in `scan.flags`, and the deferred dynamic
/// relocations of the symbols left to the dynamic linker counted for their sections.
pub fn settle(
    config: &Config,
    space: &mut SymbolSpace,
    scan: &mut Scan,
    refs: &[(FileId, SecIdx, SymId, bool)],
) {
    let mut ids: Vec<SymId> = refs.iter().map(|r| r.2).collect();
    ids.sort_unstable();
    ids.dedup();
    let export_all = config.dynamic_undefined_weak == Some(true);
    for id in ids {
        let fl = &mut scan.flags[id.index()];
        let dynamic = *fl & WEAK_VIA_GOT != 0 && *fl & WEAK_IN_CODE == 0;
        let b = &mut space.gprops[id.index()];
        if !dynamic {
            *b &= !SymProps::PREEMPTIBLE;
            *fl &= !(NEEDS_PLT | NEEDS_DYNSYM);
        }
        if export_all {
            *fl |= NEEDS_DYNSYM;
        }
        *fl &= !(WEAK_VIA_GOT | WEAK_IN_CODE);
    }
    for &(f, s, id, deferred) in refs {
        if !deferred || space.gprops[id.index()] & SymProps::PREEMPTIBLE == 0 {
            continue;
        }
        scan.flags[id.index()] |= NEEDS_DYNSYM;
        let counts = &mut scan.dyn_relocs[f.index()];
        match counts.binary_search_by_key(&s, |&(sec, _)| sec) {
            Ok(k) => counts[k].1 += 1,
            Err(k) => counts.insert(k, (s, 1)),
        }
    }
}
