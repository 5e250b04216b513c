//! GNU ld's link warnings: a `.gnu.warning.SYMBOL` section in an object or shared object holds a warning that a
//! link referring to `SYMBOL` prints (glibc's for `gets`, and for `getpwnam` or `dlopen` in static programs), once
//! per symbol, at the first reference: the first relocation against it in the first loaded object that refers to
//! it. Final links do not copy the sections (`parse` ignores them); partial links keep them for the final link.

use crate::elf::LE;
use crate::index::{FileId, SecIdx, SymId};
use crate::resolve::Resolved;
use object::elf as E;
use std::collections::HashMap;

/// Prints the link warnings of the symbols the linked objects refer to. Costs a walk of the objects' global
/// symbol ids only where some input has a warning; the places are read for the symbols warned about.
pub fn report(res: &Resolved) {
    let mut texts: HashMap<SymId, &[u8]> = HashMap::new();
    let objects = res.order.files(res.objects.len());
    for f in objects.filter(|f| res.object_live[f.index()]) {
        let o = &res.objects[f.index()];
        for &s in &o.warning_secs {
            let sym = &o.sec_name(s as usize)[b".gnu.warning.".len()..];
            let text = crate::elf::section_data(o.data, &o.shdrs[s as usize]).unwrap_or(&[]);
            if let Some(id) = res.names.lookup(sym) {
                texts.entry(id).or_insert(until_nul(text));
            }
        }
    }
    for (sym, text) in res.shared.iter().flat_map(|d| &d.warnings) {
        if let Some(id) = res.names.lookup(sym) {
            texts.entry(id).or_insert(text);
        }
    }
    if texts.is_empty() {
        return;
    }
    // Per object (in parallel), its undefined globals with a warning: (id, symbol index). A bit per global
    // answers for each of the objects' symbols (dynamic links against glibc have warnings for a few names).
    let mut warned = vec![0u64; res.num_globals().div_ceil(64)];
    for id in texts.keys() {
        warned[id.index() / 64] |= 1 << (id.index() % 64);
    }
    let has_warning = |id: SymId| {
        warned
            .get(id.index() / 64)
            .is_some_and(|w| w >> (id.index() % 64) & 1 != 0)
    };
    let refs = res.runs.map(|f| {
        let o = &res.objects[f.index()];
        if !res.object_live[f.index()] {
            return Vec::new();
        }
        let ids = &res.object_ids[f.index()];
        (ids.iter().enumerate())
            .filter(|&(_, &id)| has_warning(id))
            .map(|(k, &id)| (id, o.first_global + k))
            .filter(|&(_, i)| o.sym_shndx(i) == E::SHN_UNDEF as u32)
            .collect::<Vec<_>>()
    });
    let mut msgs = Vec::new();
    for f in res.order.files(res.objects.len()) {
        for &(id, i) in &refs[f.index()] {
            let Some(text) = texts.remove(&id) else {
                continue;
            };
            let text = String::from_utf8_lossy(text);
            msgs.push(match first_relocation(res, f, i) {
                Some((s, off)) => {
                    let at = crate::srcloc::mark(f, s, off, crate::srcloc::Style::Exact);
                    format!("{text}\n>>> referenced by {at}")
                }
                None => format!("{}: {text}", res.objects[f.index()].name),
            });
        }
    }
    crate::srcloc::render(&res.objects, &mut msgs, 0);
    for m in msgs {
        crate::diag::warn(&m);
    }
}

/// The text of a warning section: up to its first NUL.
fn until_nul(text: &[u8]) -> &[u8] {
    text.split(|&b| b == 0).next().unwrap_or(text)
}

/// The first relocation against symbol `i` of object `f`, in section order: (section, offset).
fn first_relocation(res: &Resolved, f: FileId, i: usize) -> Option<(SecIdx, u64)> {
    let o = &res.objects[f.index()];
    (0..o.sections.len()).map(SecIdx::new).find_map(|s| {
        let r = o
            .sec(s)
            .relas()
            .iter()
            .find(|r| r.r_sym(LE, false) as usize == i)?;
        Some((s, r.r_offset.get(LE)))
    })
}
