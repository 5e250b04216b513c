//! `-r`'s relocations: every kept input section's relocations, copied with their types (no relaxation, no GOT or
//! PLT: the final link does those), their offsets moved by the section's place in its output section, and their
//! symbols renumbered: a section symbol becomes its output section's, the addend moved by the input section's
//! offset; a local or global symbol its output index.
//!
//! A relocation whose target is gone (a local symbol of a COMDAT group another input won) is dropped from a
//! debug section and elsewhere turned into a "none" relocation, as GNU ld does: the final link then drops the
//! `.eh_frame` record it belongs to. One against a lost group's debug section (`gcc -g3`'s `.debug_macro`)
//! refers to the kept copy instead, as in GNU ld.

use super::sections::Plan;
use super::symbols::SymbolTable;
use crate::arch::Arch;
use crate::diag::{Errors, Result};
use crate::elf::LE;
use crate::index::{FileId, NONE, SecIdx};
use crate::resolve::Resolved;
use object::elf as E;

/// One output relocation.
#[derive(Clone, Copy)]
pub struct OutRela {
    pub offset: u64,
    pub sym: u32,
    pub r_type: u32,
    pub addend: i64,
    /// The addend differs from the input's (a section symbol's, moved by its input section's offset): an ELF32
    /// output's REL relocation has it written into the field (`image`).
    pub moved: bool,
}

/// Per output section (by `OsecId`): its relocations, in input order. A relocation naming a symbol the file does
/// not have is an error.
pub fn collect<A: Arch>(
    res: &Resolved,
    plan: &Plan,
    syms: &SymbolTable,
) -> Result<Vec<Vec<OutRela>>> {
    plan.osecs
        .iter()
        .map(|out| {
            let mut list = Vec::new();
            for p in &out.parts {
                let (f, s) = (p.file, p.sec);
                let o = &res.objects[f.index()];
                let sec = o.sec(s);
                let debug = !sec.is_alloc();
                for r in sec.relas() {
                    let i = r.r_sym(LE, false) as usize;
                    if i >= o.syms.len().max(1) {
                        return Err(Errors::one(format!(
                            "{}:({}+{:#x}): relocation refers to symbol index {i}, beyond the symbol table",
                            o.name,
                            o.section_name(s.0),
                            r.r_offset.get(LE)
                        )));
                    }
                    let (sym, addend, moved) =
                        match target(res, plan, syms, f, r.r_sym(LE, false) as usize) {
                            Some((sym, moved)) => {
                                (sym, r.r_addend.get(LE).wrapping_add(moved as i64), moved != 0)
                            }
                            None if debug => continue,
                            None => {
                                list.push(OutRela {
                                    offset: r.r_offset.get(LE) + p.offset,
                                    sym: 0,
                                    r_type: A::R_NONE,
                                    addend: 0,
                                    moved: false,
                                });
                                continue;
                            }
                        };
                    list.push(OutRela {
                        offset: r.r_offset.get(LE) + p.offset,
                        sym,
                        r_type: r.r_type(LE, false),
                        addend,
                        moved,
                    });
                }
            }
            Ok(list)
        })
        .collect()
}

/// The output symbol index for symbol `i` of object `f` and what its addend moves by, or `None` when the
/// symbol's section is not in the output.
fn target(
    res: &Resolved,
    plan: &Plan,
    syms: &SymbolTable,
    f: FileId,
    i: usize,
) -> Option<(u32, u64)> {
    if i == 0 {
        return Some((0, 0));
    }
    let o = &res.objects[f.index()];
    if i >= o.first_global {
        let g = *res.object_ids[f.index()].get(i - o.first_global)?;
        let out = syms.global_index[g.index()];
        return (out != NONE).then_some((out, 0));
    }
    let s = o.syms.get(i)?;
    if s.st_type() == E::STT_SECTION {
        let sec = SecIdx(o.sym_shndx(i));
        // A lost COMDAT group's debug section: its kept copy (`Resolved::comdat_copy`).
        let (id, off) = (plan.place(f, sec))
            .or_else(|| res.comdat_copy(f, sec).and_then(|(g, t)| plan.place(g, t)))?;
        return Some((syms.section_sym[id.index()], off));
    }
    let out = syms.local_index[f.index()][i];
    (out != NONE).then_some((out, 0))
}
