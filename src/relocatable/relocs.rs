//! `-r`'s relocations: every kept input section's relocations, copied with their types (no relaxation, no GOT or
//! PLT: the final link does those), their offsets moved by the section's place in its output section, and their
//! symbols renumbered: a section symbol becomes its output section's, the addend moved by the input section's
//! offset; a local or global symbol its output index. `.llvm.call-graph-profile`'s REL relocations (which name
//! each entry's caller and callee) are renumbered the same way and written as REL again (`image`).
//!
//! A relocation whose target is gone (a local symbol of a COMDAT group another input won) is dropped from a
//! debug section and elsewhere turned into a "none" relocation, as GNU ld does: the final link then drops the
//! `.eh_frame` record it belongs to. One against a lost group's debug section (`gcc -g3`'s `.debug_macro`)
//! refers to the kept copy instead, as in GNU ld.

use super::sections::Plan;
use super::symbols::SymbolTable;
use crate::arch::Arch;
use crate::diag::{Errors, Result};
use crate::elf::{self, LE};
use crate::index::{FileId, NONE, SecIdx};
use crate::parse::ObjectFile;
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
                // The call graph profile's relocations go in pairs, one pair per weight: none is dropped.
                let debug = !sec.is_alloc() && sec.sh_type() != elf::SHT_LLVM_CALL_GRAPH_PROFILE;
                for r in sec.relas() {
                    let i = r.r_sym(LE, false) as usize;
                    check_sym(o, s, i, r.r_offset.get(LE))?;
                    let (sym, addend, moved) =
                        match target(res, plan, syms, f, r.r_sym(LE, false) as usize) {
                            Some((sym, moved)) => (
                                sym,
                                r.r_addend.get(LE).wrapping_add(moved as i64),
                                moved != 0,
                            ),
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
                for r in profile_rels(o, s)? {
                    let (i, r_type) = rel_info(r);
                    check_sym(o, s, i, r.r_offset.get(LE))?;
                    if r.r_offset.get(LE) >= sec.size() {
                        return Err(Errors::one(format!(
                            "{}:({}+{:#x}): relocation is beyond the section's {} bytes",
                            o.name,
                            o.section_name(s.0),
                            r.r_offset.get(LE),
                            sec.size()
                        )));
                    }
                    // A caller or callee whose section is gone keeps its entry's pair: `R_*_NONE`.
                    let (sym, r_type) = match target(res, plan, syms, f, i) {
                        Some((sym, _)) => (sym, r_type),
                        None => (0, A::R_NONE),
                    };
                    list.push(OutRela {
                        offset: r.r_offset.get(LE) + p.offset,
                        sym,
                        r_type,
                        addend: 0,
                        moved: false,
                    });
                }
            }
            Ok(list)
        })
        .collect()
}

/// A relocation at `offset` in section `s` of `o` names symbol `i`: an error when the file has no such symbol.
fn check_sym(o: &ObjectFile, s: SecIdx, i: usize, offset: u64) -> Result<()> {
    if i >= o.syms.len().max(1) {
        return Err(Errors::one(format!(
            "{}:({}+{offset:#x}): relocation refers to symbol index {i}, beyond the symbol table",
            o.name,
            o.section_name(s.0),
        )));
    }
    Ok(())
}

/// The `SHT_REL` relocations of section `s` of `o` when it is `.llvm.call-graph-profile` (LLVM writes them as
/// REL on every target, and `parse` keeps their table apart from the `SHT_RELA` ones), else none. Each names the
/// caller or the callee of a profile entry.
pub fn profile_rels(o: &ObjectFile, s: SecIdx) -> Result<&'static [E::Rel64<LE>]> {
    let rel = o.cg_profile_rel as usize;
    if rel == 0 || o.shdrs[rel].sh_info.get(LE) != s.0 {
        return Ok(&[]);
    }
    elf::table(o.data, &o.shdrs[rel], "relocation")
        .map_err(|e| Errors::one(format!("{}: .rel.llvm.call-graph-profile: {e}", o.name)))
}

/// A REL entry's symbol index and type.
pub fn rel_info(r: &E::Rel64<LE>) -> (usize, u32) {
    let info = r.r_info.get(LE);
    ((info >> 32) as usize, info as u32)
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
