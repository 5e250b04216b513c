//! `-r`'s output sections: which input sections are kept, the output section each goes to (by name, as GNU ld's
//! `-r` does: `.text.foo` stays `.text.foo`, every input's `.text` goes to one `.text`), its offset there, the
//! COMDAT groups kept, and the sections the linker makes (`.note.gnu.property`, `.note.GNU-stack`, the build id).

use crate::args::{BuildId, Config};
use crate::diag::{Errors, Result};
use crate::elf::{self, LE, Shdr};
use crate::index::{FileId, OsecId, SecIdx};
use crate::parse::ObjectFile;
use crate::resolve::Resolved;
use object::elf as E;
use std::collections::HashMap;

/// One output section.
pub struct OutSec {
    pub name: Vec<u8>,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
    pub size: u64,
    /// `SHF_LINK_ORDER`: the input section its `sh_link` names (an output index once numbered).
    pub link_to: Option<(FileId, SecIdx)>,
    /// The input sections in it, in input order, each with its offset.
    pub parts: Vec<Part>,
    pub made: Made,
    /// Kept apart from the statement of its name (a group member, a link-order or `--unique` section): an
    /// orphan wherever it is placed.
    pub apart: bool,
}

#[derive(Clone, Copy)]
pub struct Part {
    pub file: FileId,
    pub sec: SecIdx,
    pub offset: u64,
}

/// What the linker itself writes into an output section.
pub enum Made {
    /// Nothing: only its input sections (and, for `.bss` under `-d`, zeros for the commons).
    Inputs,
    /// `.note.gnu.property`, merged from the inputs' as a final link merges them.
    Properties(Vec<(u32, u32)>),
    /// `.note.gnu.build-id` with a descriptor of this many bytes, filled once the rest is written.
    BuildId(usize),
    /// `.note.package` (`--package-metadata`): the inputs' notes of that name, then the link's at this offset.
    Package(String, u64),
}

/// A section group of one input kept in the output.
pub struct Group {
    pub file: FileId,
    /// The `SHT_GROUP` section (local symbols may be defined in it: gcc's signature of a constructor group).
    pub sec: SecIdx,
    /// The signature symbol's index in the file's symbol table.
    pub sig_sym: u32,
    /// The group's flag word (`GRP_COMDAT`).
    pub flag: u32,
    pub members: Vec<OsecId>,
}

pub struct Plan {
    pub osecs: Vec<OutSec>,
    /// The output sections in section header order.
    pub order: Vec<OsecId>,
    /// Per object, per input section: its output section and offset there (`OsecId::NONE`: not in the output).
    pub place: Vec<Vec<(OsecId, u64)>>,
    pub groups: Vec<Group>,
    /// `-d`: `.bss` and the offset there of each common symbol's space, by global id.
    pub commons: HashMap<crate::index::SymId, (OsecId, u64)>,
    /// `.note.GNU-stack` asks for an executable stack.
    pub exec_stack: bool,
    /// The input sections a script's `/DISCARD/` drops: their symbols go too, as in GNU ld.
    pub discarded: std::collections::HashSet<(FileId, SecIdx)>,
    /// The live objects in the order GNU ld loads them (`crate::load_order`): their sections and symbols go in
    /// that order.
    pub load_order: Vec<FileId>,
}

impl Plan {
    pub fn place(&self, f: FileId, s: SecIdx) -> Option<(OsecId, u64)> {
        self.place[f.index()]
            .get(s.index())
            .copied()
            .filter(|(o, _)| o.is_some())
    }
}

/// Decides the output sections of a partial link of `res`'s live objects.
pub fn plan<A: crate::arch::Arch>(
    config: &Config,
    res: &Resolved,
    files: &crate::load_order::FileOrder,
) -> Result<Plan> {
    let strip_debug = config.strip_debug || config.strip_all;
    let script = config.sections.as_deref();
    let mut discarded = std::collections::HashSet::new();
    // Per output section, its parts' sort keys under a script.
    let mut keys: Vec<Vec<super::script::SortKey>> = Vec::new();
    let mut osecs: Vec<OutSec> = Vec::new();
    let mut by_name: HashMap<Vec<u8>, OsecId> = HashMap::new();
    let mut place: Vec<Vec<(OsecId, u64)>> = (res.objects.iter())
        .map(|o| vec![(OsecId::NONE, 0); o.sections.len()])
        .collect();
    let load_order: Vec<FileId> = (files.files(res.objects.len()))
        .filter(|f| res.object_live[f.index()])
        .collect();
    // Under a script, per output description: its section (two of one name make two, as in GNU ld).
    let mut by_desc: HashMap<u32, OsecId> = HashMap::new();
    if let Some(sc) = script.filter(|sc| sc.has_constraints()) {
        let taken = |f: FileId, s: SecIdx| {
            let name = res.objects[f.index()].sec_name(s.index());
            kept(config, res, f, s, strip_debug)
                && !in_group(config, res.objects[f.index()].sec(s).flags())
                && !unique_by_glob(config, name)
        };
        super::script::decide_constraints(sc, res, &load_order, taken);
    }
    for &f in &load_order {
        let o = &res.objects[f.index()];
        let here = &mut place[f.index()];
        for (s, sec) in o.secs() {
            if !kept(config, res, f, s, strip_debug) {
                continue;
            }
            let mut name = o.sec_name(s.index());
            // Where a script's statement puts it among the output section's inputs (`script::sort_key`).
            let mut key = super::script::SortKey::default();
            // Group members (unless `--force-group-allocation`) and link-order sections stay apart: their group
            // or linked section is their own; so does a section `--unique` names.
            let grouped = in_group(config, sec.flags());
            let link_order = sec.flags() & E::SHF_LINK_ORDER as u64 != 0;
            let mut apart = grouped || link_order || unique(config, res, f, s);
            let mut desc = None;
            // A script's statement: its output section (link-order sections of one name join, as the kernel's
            // module loader finds `__patchable_function_entries` by name); group members keep their own, and
            // so do those `--unique=GLOB` names (GNU ld's statements pass them over).
            if let Some(sc) = script
                && !grouped
                && !unique_by_glob(config, name)
            {
                match super::script::target(sc, res, f, s) {
                    super::script::Target::Discard => {
                        discarded.insert((f, s));
                        continue;
                    }
                    super::script::Target::Orphan => {}
                    super::script::Target::Output(out, k, sort) => {
                        (name, apart, desc) = (out, false, sc.stmts[k as usize].output);
                        key = super::script::sort_key(res, (f, s), (sc, k), sort);
                    }
                }
            }
            // A description's section is its own but for the first of its name, which orphans of the name join.
            let first_of_name = || desc.is_some_and(|d| sc_first(script, name) == Some(d));
            let known = match desc {
                Some(d) => (by_desc.get(&d).copied())
                    .or_else(|| by_name.get(name).copied().filter(|_| first_of_name())),
                None => by_name.get(name).copied(),
            };
            let id = match known {
                Some(id) if !apart => id,
                _ => {
                    let id = OsecId::new(osecs.len());
                    let mut out = new_osec(name, sec.shdr);
                    out.apart = apart;
                    if let Some(sc) = script {
                        out.align = out.align.max(super::script::align(sc, name, desc));
                    }
                    osecs.push(out);
                    keys.push(Vec::new());
                    if !apart && (desc.is_none() || first_of_name()) {
                        by_name.insert(name.to_vec(), id);
                    }
                    id
                }
            };
            if let Some(d) = desc.filter(|_| !apart) {
                by_desc.insert(d, id);
            }
            let out = &mut osecs[id.index()];
            if !out.parts.is_empty() {
                combine(out, sec.shdr);
            }
            if sec.flags() & E::SHF_LINK_ORDER as u64 != 0 && out.link_to.is_none() {
                out.link_to = Some((f, SecIdx(sec.shdr.sh_link.get(LE))));
            }
            out.parts.push(Part {
                file: f,
                sec: s,
                offset: 0,
            });
            keys[id.index()].push(key);
            here[s.index()] = (id, 0);
        }
    }
    // Stable: equal keys keep load order.
    if script.is_some() {
        for (out, keys) in osecs.iter_mut().zip(keys) {
            let mut keyed: Vec<(super::script::SortKey, Part)> =
                keys.into_iter().zip(out.parts.drain(..)).collect();
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            out.parts = keyed.into_iter().map(|(_, p)| p).collect();
        }
    }
    // `--force-group-allocation`: the members are placed as in a final link, and the groups are gone.
    let groups = match config.force_group_allocation {
        false => groups(res, &place, &load_order)?,
        true => Vec::new(),
    };
    let mut plan = Plan {
        osecs,
        order: Vec::new(),
        place,
        groups,
        commons: HashMap::new(),
        exec_stack: false,
        discarded,
        load_order,
    };
    lay_out_parts(&mut plan, res);
    if config.define_common {
        allocate_commons(&mut plan, res);
    }
    made_sections::<A>(config, res, &mut plan)?;
    let descs: HashMap<OsecId, u32> = by_desc.into_iter().map(|(d, id)| (id, d)).collect();
    plan.order = super::order::header_order(script, &plan, res, |id| descs.get(&id).copied());
    Ok(plan)
}

/// The first output description named `name` the script keeps, if any.
fn sc_first(script: Option<&crate::script::sections::SectionsScript>, name: &[u8]) -> Option<u32> {
    script.and_then(|sc| sc.output(name)).map(|d| d as u32)
}

/// Whether section flags `flags` make an input section a member of a group the output keeps.
fn in_group(config: &Config, flags: u64) -> bool {
    flags & E::SHF_GROUP as u64 != 0 && !config.force_group_allocation
}

/// Input sections GNU ld's `-r` script gives a statement of another name (`.text` takes `.stub` and
/// `.gnu.warning`, `.gnu_extab` every `.gnu_extab*`). rivet keeps their names; `--unique` needs to know them.
const TAKEN_BY_OTHERS: &[&str] = &[".stub", ".gnu.warning", ".gnu_extab*"];

/// Whether `--unique` gives input section `s` of file `f` an output section of its own: a `--unique=GLOB`
/// matches its name, or bare `--unique` and it is an orphan (GNU ld's `-r` script, or the `-T` script, names
/// no statement for it).
fn unique(config: &Config, res: &Resolved, f: FileId, s: SecIdx) -> bool {
    let name = res.objects[f.index()].sec_name(s.index());
    if unique_by_glob(config, name) {
        return true;
    }
    if !config.unique_orphans {
        return false;
    }
    match config.sections.as_deref() {
        Some(sc) => matches!(
            super::script::target(sc, res, f, s),
            super::script::Target::Orphan
        ),
        None => {
            super::order::statement(name).is_none()
                && !(TAKEN_BY_OTHERS.iter()).any(|p| crate::glob::matches(p.as_bytes(), name))
        }
    }
}

fn unique_by_glob(config: &Config, name: &[u8]) -> bool {
    (config.unique_sections.iter()).any(|g| crate::glob::matches(g.as_bytes(), name))
}

/// Whether input section `s` of live object `f` goes to the output.
fn kept(config: &Config, res: &Resolved, f: FileId, s: SecIdx, strip_debug: bool) -> bool {
    let o = &res.objects[f.index()];
    let sec = o.sec(s);
    let name = o.sec_name(s.index());
    match sec.sh_type() {
        E::SHT_NULL
        | E::SHT_SYMTAB
        | E::SHT_RELA
        | E::SHT_REL
        | E::SHT_GROUP
        | E::SHT_SYMTAB_SHNDX => {
            return false;
        }
        // The file's own string tables (symbol names, section names); `.stabstr` and the like are kept.
        E::SHT_STRTAB if is_own_strtab(o, s) => return false,
        // The call graph profile stays for the final link's sort, with its relocations renumbered (`relocs`), as
        // GNU ld and lld keep it.
        elf::SHT_LLVM_CALL_GRAPH_PROFILE => {}
        // LLVM's other link-time tables (`.llvm_addrsig`…): their symbol indices would be stale; a final link
        // ignores them too.
        0x6fff_4c00..=0x6fff_4cff => return false,
        _ => {}
    }
    // `.note.GNU-stack` is an empty PROGBITS section: made anew from all inputs, as is the property note; but
    // `--unique` keeps each input's as it is, as GNU ld does.
    if name == b".note.GNU-stack" && !unique(config, res, f, s) || name == b".note.gnu.property" {
        return false;
    }
    if res.comdat_discarded[f.index()][s.index()] {
        return false;
    }
    !(strip_debug && !sec.is_alloc() && crate::gc::is_debug_information(name))
}

/// Whether section `s` is the symbol table's string table or the section name table of `o`.
fn is_own_strtab(o: &ObjectFile, s: SecIdx) -> bool {
    let symtab_link = o
        .shdrs
        .iter()
        .any(|h| h.sh_type.get(LE) == E::SHT_SYMTAB && h.sh_link.get(LE) == s.0);
    let shstr = elf::section_data(o.data, &o.shdrs[s.index()]).is_ok_and(|d| {
        std::ptr::eq(d.as_ptr(), o.shstrtab.as_ptr()) && d.len() == o.shstrtab.len()
    });
    symtab_link || shstr
}

/// The entry size an output section keeps from its input: a mergeable section's, and an array's; GNU ld gives
/// other sections none, whatever their inputs say (objtool's `.orc_unwind` has 6). The call graph profile keeps
/// its 8, as lld's `-r` does: lld refuses a profile of another entry size (GNU ld's 0).
fn entsize_of(sh: &Shdr) -> u64 {
    let merge = sh.sh_flags.get(LE) & E::SHF_MERGE as u64 != 0;
    let array = matches!(
        sh.sh_type.get(LE),
        E::SHT_INIT_ARRAY
            | E::SHT_FINI_ARRAY
            | E::SHT_PREINIT_ARRAY
            | elf::SHT_LLVM_CALL_GRAPH_PROFILE
    );
    if merge || array {
        sh.sh_entsize.get(LE)
    } else {
        0
    }
}

pub(super) fn new_osec(name: &[u8], sh: &Shdr) -> OutSec {
    OutSec {
        name: name.to_vec(),
        sh_type: sh.sh_type.get(LE),
        flags: sh.sh_flags.get(LE),
        align: sh.sh_addralign.get(LE).max(1),
        entsize: entsize_of(sh),
        size: 0,
        link_to: None,
        parts: Vec::new(),
        made: Made::Inputs,
        apart: false,
    }
}

/// Adds another input section's header to an output section of its name: flags together, the largest
/// alignment; a section of contents makes a `.bss`-like one hold contents (zeros); merge flags and entry sizes
/// only where every input agrees (the pieces of inputs that differ cannot be merged as one).
fn combine(out: &mut OutSec, sh: &Shdr) {
    let flags = sh.sh_flags.get(LE);
    let merge = (E::SHF_MERGE | E::SHF_STRINGS) as u64;
    let agree = out.flags & merge == flags & merge && out.entsize == entsize_of(sh);
    out.flags |= flags & !merge;
    if !agree {
        out.flags &= !merge;
        out.entsize = 0;
    }
    out.align = out.align.max(sh.sh_addralign.get(LE).max(1));
    if out.sh_type == E::SHT_NOBITS && sh.sh_type.get(LE) != E::SHT_NOBITS {
        out.sh_type = sh.sh_type.get(LE);
    }
}

/// Each input section's offset in its output section: in input order, each at its alignment.
fn lay_out_parts(plan: &mut Plan, res: &Resolved) {
    for out in &mut plan.osecs {
        let mut size = 0u64;
        for p in &mut out.parts {
            let sec = res.objects[p.file.index()].sec(p.sec);
            size = elf::align_up(size, sec.align());
            p.offset = size;
            plan.place[p.file.index()][p.sec.index()].1 = size;
            size += sec.size();
        }
        out.size = size;
    }
}

/// `-d`: each common symbol gets its space at the end of `.bss` (made if no input has one), the largest size and
/// alignment among its commons, in global id order as a final link places them.
fn allocate_commons(plan: &mut Plan, res: &Resolved) {
    if res.common_defs.is_empty() {
        return;
    }
    let bss = match plan
        .osecs
        .iter()
        .position(|o| o.name == b".bss" && o.link_to.is_none())
    {
        Some(i) => OsecId::new(i),
        None => {
            plan.osecs.push(OutSec {
                name: b".bss".to_vec(),
                sh_type: E::SHT_NOBITS,
                flags: (E::SHF_ALLOC | E::SHF_WRITE) as u64,
                align: 1,
                entsize: 0,
                size: 0,
                link_to: None,
                parts: Vec::new(),
                made: Made::Inputs,
                apart: false,
            });
            OsecId::new(plan.osecs.len() - 1)
        }
    };
    let out = &mut plan.osecs[bss.index()];
    for &g in &res.common_defs {
        let (size, align) = res.common.get(&g).copied().unwrap_or((0, 1));
        let at = elf::align_up(out.size, align.max(1));
        out.align = out.align.max(align.max(1));
        out.size = at + size;
        plan.commons.insert(g, (bss, at));
    }
}

/// The sections the linker makes: the merged program properties, the build id note, the packaging note and
/// `.note.GNU-stack`.
fn made_sections<A: crate::arch::Arch>(
    config: &Config,
    res: &Resolved,
    plan: &mut Plan,
) -> Result<()> {
    let live: Vec<&ObjectFile> = res
        .objects
        .iter()
        .zip(&res.object_live)
        .filter(|(_, l)| **l)
        .map(|(o, _)| o)
        .collect();
    let props = crate::synthetic::property::merge::<A>(config, &live)?;
    let made = |name: &[u8], sh_type: u32, flags: u64, align: u64, size: u64, made: Made| OutSec {
        name: name.to_vec(),
        sh_type,
        flags,
        align,
        entsize: 0,
        size,
        link_to: None,
        parts: Vec::new(),
        made,
        apart: false,
    };
    let note_id_size = match &config.build_id {
        BuildId::None => 0,
        BuildId::Fast | BuildId::Md5 | BuildId::Uuid => 16,
        BuildId::Sha1 => 20,
        BuildId::Hex(h) => h.len(),
    };
    if note_id_size > 0 {
        let size = 16 + elf::align_up(note_id_size as u64, 4);
        plan.osecs.push(made(
            b".note.gnu.build-id",
            E::SHT_NOTE,
            E::SHF_ALLOC as u64,
            4,
            size,
            Made::BuildId(note_id_size),
        ));
    }
    // After the inputs' packaging notes, as GNU ld's `-r` writes it.
    if let Some(json) = &config.package_metadata {
        let size = crate::synthetic::notes::package_size(json);
        let inputs = (plan.osecs.iter_mut())
            .find(|o| o.name == b".note.package" && matches!(o.made, Made::Inputs));
        match inputs {
            Some(o) => {
                let at = elf::align_up(o.size, 4);
                (o.size, o.align) = (at + size, o.align.max(4));
                o.made = Made::Package(json.clone(), at);
            }
            None => plan.osecs.push(made(
                b".note.package",
                E::SHT_NOTE,
                E::SHF_ALLOC as u64,
                4,
                size,
                Made::Package(json.clone(), 0),
            )),
        }
    }
    if !props.is_empty() {
        let size = crate::synthetic::property::size(&props);
        let align = if crate::elf::elf32_addend().is_some() {
            4
        } else {
            8
        };
        plan.osecs.push(made(
            b".note.gnu.property",
            E::SHT_NOTE,
            E::SHF_ALLOC as u64,
            align,
            size,
            Made::Properties(props),
        ));
    }
    // GNU ld's `-r` writes no note where no input has one and no `-z execstack`/`noexecstack` asks for one, nor
    // where `--unique` kept the inputs' own.
    let inputs_notes = (plan.osecs.iter()).any(|o| o.name == b".note.GNU-stack");
    let exec = exec_stack(config, res);
    plan.exec_stack = exec.unwrap_or(false);
    if let Some(exec) = exec.filter(|_| !inputs_notes) {
        let flags = if exec { E::SHF_EXECINSTR as u64 } else { 0 };
        plan.osecs.push(made(
            b".note.GNU-stack",
            E::SHT_PROGBITS,
            flags,
            1,
            0,
            Made::Inputs,
        ));
    }
    Ok(())
}

/// The output's `.note.GNU-stack`, as GNU ld's `-r` makes it: where some input has the note, an executable stack
/// if the notes ask for one (`exec_stack::StackNotes`, with GNU ld's warning), but with `-z execstack` or
/// `noexecstack` only if a note is executable; where none has it, what the `-z` options say (`None`: no note).
fn exec_stack(config: &Config, res: &Resolved) -> Option<bool> {
    let notes = crate::exec_stack::StackNotes::of(res);
    crate::exec_stack::warn_option(config);
    Some(match (notes.any, config.execstack, config.noexecstack) {
        (false, true, _) => true,
        (false, false, true) => false,
        (false, false, false) => return None,
        (true, false, false) => notes.ask_exec(config, res),
        (true, _, _) => notes.exec.is_some(),
    })
}

/// The kept section groups of every live object: the COMDAT groups that won (and any other group) with their
/// members' output sections. A group whose members are all gone (`-S`) is dropped.
fn groups(res: &Resolved, place: &[Vec<(OsecId, u64)>], order: &[FileId]) -> Result<Vec<Group>> {
    let mut out = Vec::new();
    for &f in order {
        let o = &res.objects[f.index()];
        for (s, sec) in o.secs() {
            if sec.sh_type() != E::SHT_GROUP {
                continue;
            }
            let words = sec.data();
            let bad = || Errors::one(format!("{}: section group {} is malformed", o.name, s.0));
            let flag = elf::read_u32(words, 0).ok_or_else(bad)?;
            let sig_sym = sec.shdr.sh_info.get(LE);
            if sig_sym as usize >= o.syms.len() {
                return Err(bad());
            }
            let mut members = Vec::new();
            for w in words[4..words.len() & !3].chunks_exact(4) {
                let m = u32::from_le_bytes(w.try_into().unwrap()) as usize;
                let (id, _) = *place[f.index()].get(m).ok_or_else(bad)?;
                if id.is_some() && !members.contains(&id) {
                    members.push(id);
                }
            }
            if !members.is_empty() {
                out.push(Group {
                    file: f,
                    sec: s,
                    sig_sym,
                    flag,
                    members,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shdr(sh_type: u32, flags: u32, align: u64, entsize: u64) -> Shdr {
        let bytes = [0u8; size_of::<Shdr>()];
        let mut h: Shdr = *object::pod::from_bytes::<Shdr>(&bytes).unwrap().0;
        h.sh_type.set(LE, sh_type);
        h.sh_flags.set(LE, flags as u64);
        h.sh_addralign.set(LE, align);
        h.sh_entsize.set(LE, entsize);
        h
    }

    /// Flags add up and the largest alignment wins; merge flags stay only while every input has the same ones
    /// with the same entry size; a section with contents turns a `.bss`-like one into one with contents.
    #[test]
    fn inputs_of_one_name_combine() {
        let strings = E::SHF_ALLOC | E::SHF_MERGE | E::SHF_STRINGS;
        let mut out = new_osec(b".rodata.str", &shdr(E::SHT_PROGBITS, strings, 1, 1));
        combine(&mut out, &shdr(E::SHT_PROGBITS, strings, 8, 1));
        assert_eq!((out.flags, out.align, out.entsize), (strings as u64, 8, 1));
        combine(&mut out, &shdr(E::SHT_PROGBITS, strings, 1, 2));
        assert_eq!((out.flags, out.entsize), (E::SHF_ALLOC as u64, 0));
        let mut bss = new_osec(
            b".bss",
            &shdr(E::SHT_NOBITS, E::SHF_ALLOC | E::SHF_WRITE, 4, 0),
        );
        combine(
            &mut bss,
            &shdr(E::SHT_PROGBITS, E::SHF_ALLOC | E::SHF_WRITE, 1, 0),
        );
        assert_eq!(bss.sh_type, E::SHT_PROGBITS);
    }
}
