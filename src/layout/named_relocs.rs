//! Dynamic relocations a script places by their input section's name.
//!
//! GNU ld keeps each input section's dynamic relocations in a section of their own, named `.rela` and the input
//! section's name, which the script's statements place like an input section; what no statement takes joins
//! `.rela.dyn`. U-Boot's `.efi_runtime_rel : { *(.rel*.efi_runtime*) }` gathers the relocations of its EFI runtime
//! services that way, to apply them again once the OS has moved the services (`SetVirtualAddressMap`). Rivet writes
//! the input sections' dynamic relocations in `.rela.dyn`, but those a statement sends to another output section:
//! they go to one more linker-made area, `Synth::RelaNamed`, at that statement. One such output section besides
//! `.rela.dyn`'s is supported; relocations a second one would take stay in `.rela.dyn`, with a warning, and so do
//! those a `/DISCARD/` would take (GNU ld drops them, and the program is not relocated there).

use super::Cx;
use crate::diag;
use crate::index::SecIdx;
use crate::script::sections::{DISCARD, InputName, SectionsScript};
use rustc_hash::FxHashMap as HashMap;

/// The input sections whose dynamic relocations go to `Synth::RelaNamed`, and the statement that places it.
pub struct Named {
    pub stmt: u32,
    /// Per file: those sections, in section order, with the statement that takes each.
    pub per_file: Vec<Vec<(SecIdx, u32)>>,
}

/// The sections of a dynamic output whose relocations `sc` sends to an output section other than
/// `rela_dyn_output` (the one `.rela.dyn` is in), if any.
pub fn named(cx: &Cx, sc: &SectionsScript, rela_dyn_output: Option<&str>) -> Option<Named> {
    let linker_made = InputName {
        path: "",
        member: None,
    };
    let objects = &cx.res.objects;
    let mut stmt_of: HashMap<&[u8], Option<u32>> = HashMap::default();
    let mut chosen: Option<u32> = None;
    let mut per_file = vec![Vec::new(); objects.len()];
    for (f, secs) in cx.scan.dyn_relocs.iter().enumerate() {
        for &(s, _) in secs {
            let o = &objects[f];
            let name = o.sec_name(s.index());
            let k = *stmt_of.entry(name).or_insert_with(|| {
                let rela = [&b".rela"[..], name].concat();
                let (k, _) = sc.select(&linker_made, &rela, false);
                let out = (k < DISCARD)
                    .then(|| sc.stmts[k as usize].output)
                    .flatten()
                    .map(|d| sc.outputs[d as usize].name.as_str());
                (out.is_some() && out != rela_dyn_output).then_some(k)
            });
            let Some(k) = k else { continue };
            let out = |k: u32| {
                sc.stmts[k as usize]
                    .output
                    .map(|d| &sc.outputs[d as usize].name)
            };
            match chosen {
                None => chosen = Some(k),
                Some(c) if out(c) == out(k) => {}
                Some(c) => {
                    diag::warn(&format!(
                        "{}: the dynamic relocations of section `{}' stay in `.rela.dyn', not in `{}': rivet places \
                         those of `{}' only",
                        o.name,
                        String::from_utf8_lossy(name),
                        out(k).map_or("", |n| n.as_str()),
                        out(c).map_or("", |n| n.as_str()),
                    ));
                    continue;
                }
            }
            per_file[f].push((s, k));
        }
    }
    chosen.map(|stmt| Named { stmt, per_file })
}
