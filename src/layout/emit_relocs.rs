//! Layout pass for `--emit-relocs` (`-q`): the inputs' relocations that go to the output, a non-allocated
//! `.rela<name>` section for each output section that receives some (its size, and where each input section's
//! entries start in it), the symbols they name that `.symtab` would otherwise leave out (the local symbols of
//! merged strings and, under `-x`, every local a relocation names; undefined globals), and, once the kept sections
//! are known, the section symbols of the output sections and the header numbering that puts each `.rela` section
//! right after its section, as GNU ld does. The entries are written by `write::emit_relocs`. Nothing here runs
//! without the option.

use super::output_sections::SectionMap;
use super::place::Placement;
use super::{Cx, NONE, OutputSection, Part, Synth};
use crate::diag::{Errors, Result};
use crate::index::{FileId, OsecId, SecIdx, SymId};
use crate::parse::SectionKind;
use crate::resolve::Def;
use crate::synthetic::symtab;
use object::elf as E;

/// What the writer of the emitted relocations needs from the layout.
pub struct Plan {
    /// Per output section: its `.rela` section, or `NONE`.
    pub rela_of: Vec<OsecId>,
    /// The `.rela` sections, each with the output section its relocations apply to.
    pub relas: Vec<(OsecId, OsecId)>,
    /// Per file: the input sections whose relocations are emitted, each with its `.rela` section and the index of
    /// its first entry there (input order within each `.rela` section).
    pub files: Vec<Vec<(SecIdx, OsecId, u64)>>,
}

impl Plan {
    /// The output section a `.rela` section describes.
    pub fn target_of(&self, rela: OsecId) -> Option<OsecId> {
        self.relas.iter().find(|r| r.0 == rela).map(|r| r.1)
    }
}

/// One file's share: its sections with relocations (section, output section, count), the locals to add to
/// `.symtab` (bits, count, name bytes) and the globals `.symtab` lacks.
struct FileShare {
    secs: Vec<(SecIdx, OsecId, u64)>,
    add_bits: Vec<u64>,
    add_locals: u32,
    add_strs: u64,
    globals: Vec<SymId>,
}

/// Finds the relocations to emit, appends the `.rela` output sections to `osecs` and adds the symbols they name to
/// `symtab`'s contents. Runs after placement and before the sections are sized.
pub fn plan(
    cx: &Cx,
    osecs: &mut Vec<OutputSection>,
    map: &SectionMap,
    place: &Placement,
    aux_index: &[u32],
    symtab: &mut symtab::Contents,
) -> Result<Plan> {
    let res = cx.res;
    let shares: Vec<std::result::Result<FileShare, String>> = res
        .runs
        .map(|f| file_share(cx, map, place, aux_index, symtab, f));
    let mut counts = vec![0u64; osecs.len()];
    let mut files = Vec::with_capacity(shares.len());
    let mut extra = Vec::new();
    let mut errors = Vec::new();
    for (f, share) in shares.into_iter().enumerate() {
        let share = match share {
            Ok(s) => s,
            Err(e) => {
                errors.push(e);
                files.push(Vec::new());
                continue;
            }
        };
        for (w, bits) in share.add_bits.iter().enumerate() {
            symtab.members[f][w] |= bits;
        }
        symtab.counts[f].0 += share.add_locals;
        symtab.counts[f].2 += share.add_strs;
        extra.extend(share.globals);
        // Each section's first entry, counted on in input order per output section.
        let secs = share.secs.into_iter().map(|(s, o, n)| {
            let first = counts[o.index()];
            counts[o.index()] += n;
            (s, o, first)
        });
        files.push(secs.collect());
    }
    if !errors.is_empty() {
        return Err(Errors(errors));
    }
    extra.extend_from_slice(&symtab.extra);
    extra.sort_unstable_by_key(|g| g.0);
    extra.dedup();
    symtab.extra = extra;
    let mut rela_of = vec![OsecId::NONE; osecs.len()];
    let mut relas = Vec::new();
    for (i, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        // An ELF32 output's are REL tables (`write::elf32` narrows the entries written here).
        let mut name = match crate::elf::elf32_addend() {
            Some(_) => b".rel".to_vec(),
            None => b".rela".to_vec(),
        };
        name.extend_from_slice(&osecs[i].name);
        let mut o = OutputSection::new(&name, E::SHT_RELA, E::SHF_INFO_LINK as u64);
        o.align = 8;
        o.entsize = 24;
        o.size = 24 * n;
        o.parts.push(Part::Relocs);
        rela_of[i] = OsecId::new(osecs.len());
        relas.push((OsecId::new(osecs.len()), OsecId::new(i)));
        osecs.push(o);
    }
    let files = files
        .into_iter()
        .map(|v| {
            v.into_iter()
                .map(|(s, o, first)| (s, rela_of[o.index()], first))
                .collect()
        })
        .collect();
    Ok(Plan {
        rela_of,
        relas,
        files,
    })
}

/// The sections of file `f` whose relocations are emitted, and the symbols they name that `.symtab` lacks.
fn file_share(
    cx: &Cx,
    map: &SectionMap,
    place: &Placement,
    aux_index: &[u32],
    symtab: &symtab::Contents,
    f: FileId,
) -> std::result::Result<FileShare, String> {
    let res = cx.res;
    let o = &res.objects[f.index()];
    let mut share = FileShare {
        secs: Vec::new(),
        add_bits: Vec::new(),
        add_locals: 0,
        add_strs: 0,
        globals: Vec::new(),
    };
    if !res.object_live[f.index()] {
        return Ok(share);
    }
    let live = &cx.live.live[f.index()];
    let members = &symtab.members[f.index()];
    share.add_bits = vec![0u64; members.len()];
    for (s, sec) in o.secs().skip(1) {
        if sec.relas().is_empty() || !live.get(s.index()).copied().unwrap_or(false) {
            continue;
        }
        if sec.kind == SectionKind::Merge {
            return Err(format!(
                "{}: --emit-relocs: relocations in merged section {} are not supported",
                o.name,
                o.section_name(s.0)
            ));
        }
        let osec = place.place_osec[f.index()][s.index()];
        if osec == OsecId::NONE
            || map.sec_osec[f.index()]
                .get(s.index())
                .is_none_or(|&x| x == OsecId::NONE)
        {
            continue;
        }
        share.secs.push((s, osec, sec.relas().len() as u64));
        for r in sec.relas() {
            let i = r.r_sym(crate::elf::LE, false) as usize;
            if i == 0 || i >= o.syms.len() {
                continue;
            }
            if i >= o.first_global {
                let Some(&g) = res.object_ids[f.index()].get(i - o.first_global) else {
                    continue;
                };
                let missing = match res.defs[g.index()] {
                    Def::Undefined => true,
                    Def::Shared { .. } => aux_index[g.index()] == NONE,
                    Def::Object { .. } | Def::Linker => false,
                };
                if missing {
                    share.globals.push(g);
                }
                continue;
            }
            let st = &o.syms[i];
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            if st.st_type() == E::STT_SECTION
                || st.st_type() == E::STT_FILE
                || (members[w] | share.add_bits[w]) & bit != 0
            {
                continue;
            }
            let shndx = o.sym_shndx(i);
            let kept = shndx == E::SHN_ABS as u32
                || (shndx != 0 && live.get(shndx as usize).copied().unwrap_or(false));
            if kept {
                share.add_bits[w] |= bit;
                share.add_locals += 1;
                share.add_strs += o.sym_name(i).len() as u64 + 1;
            }
        }
    }
    share.globals.sort_unstable_by_key(|g| g.0);
    share.globals.dedup();
    Ok(share)
}

/// Once the kept sections are numbered: renumbers them so that each `.rela` section follows its section (GNU ld's
/// order; the `.rela` sections' contents still follow the other sections in the file), and gives `.symtab` a
/// section symbol for every kept output section but the symbol and string tables and the `.rela` sections.
pub fn number_sections(
    plan: &Plan,
    osecs: &mut [OutputSection],
    keep: &[bool],
    synth: &mut super::SynthMap,
    symtab: &mut symtab::Contents,
) {
    let is_rela: Vec<bool> = (0..osecs.len())
        .map(|i| plan.relas.iter().any(|r| r.0.index() == i))
        .collect();
    let mut order: Vec<usize> = (0..osecs.len())
        .filter(|&i| keep[i] && !is_rela[i])
        .collect();
    order.sort_by_key(|&i| osecs[i].shndx);
    let mut shndx = 1u32;
    let mut section_syms = Vec::new();
    let tables = [Synth::Symtab, Synth::Strtab, Synth::Shstrtab].map(|s| synth.get(s));
    for i in order {
        osecs[i].shndx = shndx;
        shndx += 1;
        if !tables.contains(&Some(OsecId::new(i))) {
            section_syms.push(OsecId::new(i));
        }
        let rela = plan.rela_of[i];
        if rela != OsecId::NONE {
            osecs[rela.index()].shndx = shndx;
            shndx += 1;
        }
    }
    if let Some(t) = synth.get(Synth::Symtab) {
        let more = 24 * section_syms.len() as u64;
        osecs[t.index()].size += more;
        synth.set_size(Synth::Symtab, synth.size(Synth::Symtab) + more);
    }
    symtab.section_syms = section_syms;
}
