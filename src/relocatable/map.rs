//! `-Map` of a partial link, in the final link's format (`crate::map`): the output sections in section header
//! order at address 0 (nothing has an address in `-r`, as GNU ld's `-r` map shows), each with its input sections
//! at their offsets and the symbols each defines there (the locals the output keeps, and the globals whose
//! definition it holds), then what the linker writes itself (the merged property note, the build id, `-d`'s
//! common symbols).

use super::sections::{Made, Plan};
use super::symbols::SymbolTable;
use crate::args::Config;
use crate::diag::Result;
use crate::index::{FileId, NONE, SecIdx};
use crate::map::line;
use crate::resolve::{Def, Resolved};
use object::elf as E;
use std::collections::HashMap;
use std::path::Path;

/// Per input section: its symbols' offsets in their output section and their names.
type Defined<'a> = HashMap<(FileId, SecIdx), Vec<(u64, &'a [u8])>>;

pub fn write(
    path: &Path,
    config: &Config,
    res: &Resolved,
    plan: &Plan,
    syms: &SymbolTable,
) -> Result<()> {
    let mut out = crate::map::header(config, res);
    // Per input section placed, the symbols it defines in the output: (offset in the output section, name).
    let mut defined: Defined = HashMap::new();
    for &f in &plan.load_order {
        let o = &res.objects[f.index()];
        for i in 1..o.syms.len() {
            let kept = match i.checked_sub(o.first_global) {
                None => syms.local_index[f.index()][i] != NONE,
                Some(k) => {
                    let g = res.object_ids[f.index()][k];
                    syms.global_index[g.index()] != NONE
                        && res.defs[g.index()]
                            == Def::Object {
                                file: f,
                                sym: i as u32,
                            }
                }
            };
            let s = SecIdx(o.sym_shndx(i));
            let sym = &o.syms[i];
            if !kept
                || matches!(sym.st_type(), E::STT_SECTION | E::STT_FILE)
                || o.sym_name(i).is_empty()
            {
                continue;
            }
            if let Some((_, off)) = plan.place(f, s) {
                let at = sym.st_value.get(crate::elf::LE).wrapping_add(off);
                defined.entry((f, s)).or_default().push((at, o.sym_name(i)));
            }
        }
    }
    for list in defined.values_mut() {
        list.sort_unstable();
    }
    for &id in &plan.order {
        let o = &plan.osecs[id.index()];
        line(
            &mut out,
            0,
            Some((o.size, o.align)),
            0,
            &String::from_utf8_lossy(&o.name),
        );
        for p in &o.parts {
            let f = &res.objects[p.file.index()];
            let sec = f.sec(p.sec);
            let name = format!("{}:({})", f.name, f.section_name(p.sec.0));
            line(
                &mut out,
                p.offset,
                Some((sec.size(), sec.align())),
                1,
                &name,
            );
            for &(at, sym) in defined.get(&(p.file, p.sec)).map_or(&[][..], |v| &v[..]) {
                line(&mut out, at, None, 2, &crate::diag::demangle(sym));
            }
        }
        // Where the inputs end: the linker's own contents follow.
        let inputs_end = (o.parts.last()).map_or(0, |p| {
            p.offset + res.objects[p.file.index()].sec(p.sec).size()
        });
        let made = match &o.made {
            Made::Properties(_) | Made::BuildId(_) => Some((0, String::from_utf8_lossy(&o.name))),
            Made::Package(_, at) => Some((*at, String::from_utf8_lossy(&o.name))),
            Made::Inputs => (o.size > inputs_end && !plan.commons.is_empty() && o.name == b".bss")
                .then(|| (inputs_end, "common symbols".into())),
        };
        if let Some((at, what)) = made {
            line(
                &mut out,
                at,
                Some((o.size - at, o.align)),
                1,
                &format!("<internal>:({what})"),
            );
        }
    }
    if config.cref {
        out.push_str(&crate::map::cref(res));
    }
    crate::map::emit(path, "map file", &out)
}
