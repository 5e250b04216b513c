//! Layout pass: the output sections. Every live input section gets its output section by name (`rules`), the
//! linker-made sections this output needs are added, and all are ordered by rank.

use super::rules::{Rules, output_section_of};
use super::symbols::is_common_def;
use super::{Cx, OutputSection, Part, Synth, SynthMap};
use crate::arch::Arch;
use crate::args::{HashStyle, OutputKind};
use crate::index::{FileId, NONE, OsecId, SecIdx, SymId};
use crate::parse::SectionKind;
use crate::scan;
use crate::script::sections::{DISCARD, InputName, SectionsScript};
use object::elf as E;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// What the pass decides besides the output sections themselves.
pub struct SectionMap {
    /// Output section by name.
    pub by_name: HashMap<Vec<u8>, OsecId>,
    pub synth: SynthMap,
    /// Per file, per section: the output section (`NONE` for a dead section).
    pub sec_osec: Vec<Vec<OsecId>>,
    /// Per file: its live merge sections.
    pub live_merge: Vec<Vec<SecIdx>>,
    /// Output sections some input section goes to.
    pub has_inputs: Vec<bool>,
    /// Common symbols that are still the definition (a shared library's or the linker's may have replaced one).
    pub common_ids: Vec<SymId>,
    /// The program interpreter's path, `.interp`'s contents without the NUL.
    pub interp: Option<Vec<u8>>,
    /// The size of the build id's descriptor (0: no build id).
    pub build_id_size: u64,
    /// With a `SECTIONS` script: per output section, its description's index in the script (`NONE` for an
    /// orphan); empty without one.
    pub script_desc: Vec<u32>,
    /// The linker-made sections a script's statement places, with the statement.
    pub synth_stmts: Vec<(Synth, u32)>,
    /// Per file, without a script: its input sections of `.text` outside `rules::TEXT_MAIN`, with their group
    /// (`rules::text_group`), by section; empty for most files.
    pub text_groups: Vec<Vec<(SecIdx, u8)>>,
    /// Per file, in section order: the input sections whose dynamic relocations a script puts in
    /// `Synth::RelaNamed` (`named_relocs`), with the statement that takes them; empty where there is none.
    pub rela_named: Vec<Vec<(SecIdx, u32)>>,
}

pub(super) struct Builder<'a> {
    pub osecs: Vec<OutputSection>,
    by_name: HashMap<Vec<u8>, OsecId>,
    synth: SynthMap,
    script: Option<&'a SectionsScript>,
    /// The linker-made sections a script's statement places, with the statement.
    synth_stmts: Vec<(Synth, u32)>,
    /// Under a script, per output description: its section (`NONE` for `/DISCARD/` and a dropped one). Two
    /// descriptions of one name make two sections; `by_name` finds the first, as GNU ld's orphans do.
    by_desc: Vec<OsecId>,
}

impl Builder<'_> {
    pub fn get_or_add(&mut self, name: &[u8], sh_type: u32, flags: u64) -> OsecId {
        if let Some(&i) = self.by_name.get(name) {
            self.add_input_shape(i, sh_type, flags);
            return i;
        }
        let i = OsecId::new(self.osecs.len());
        let mut o = OutputSection::new(name, sh_type, flags & !(E::SHF_GROUP as u64));
        if flags & E::SHF_MERGE as u64 == 0 {
            o.flags &= !(E::SHF_STRINGS as u64);
        }
        self.osecs.push(o);
        self.by_name.insert(name.to_vec(), i);
        i
    }

    /// Output description `d`'s section (made by `add_description`), given an input of this type and flags.
    fn description(&mut self, d: u32, sh_type: u32, flags: u64) -> OsecId {
        match self
            .by_desc
            .get(d as usize)
            .copied()
            .filter(|i| i.is_some())
        {
            Some(i) => {
                self.add_input_shape(i, sh_type, flags);
                i
            }
            // Not made (a dropped description's statement takes nothing): by name, as before the split.
            None => {
                let sc = self.script.expect("descriptions only under a script");
                let name = sc.outputs[d as usize].name.clone();
                self.get_or_add(name.as_bytes(), sh_type, flags)
            }
        }
    }

    /// Makes output description `d`'s section, named `name`: NOBITS without flags until inputs say otherwise.
    pub fn add_description(&mut self, d: usize, name: &[u8]) {
        let i = OsecId::new(self.osecs.len());
        self.osecs.push(OutputSection::new(name, E::SHT_NOBITS, 0));
        self.by_name.entry(name.to_vec()).or_insert(i);
        self.by_desc
            .resize(self.by_desc.len().max(d + 1), OsecId::NONE);
        self.by_desc[d] = i;
    }

    /// Section `i` takes an input (or a linker-made part) of this type and flags.
    fn add_input_shape(&mut self, i: OsecId, sh_type: u32, flags: u64) {
        {
            let o = &mut self.osecs[i.index()];
            // A PROGBITS input mapped into a NOBITS section (or the reverse) makes it PROGBITS.
            if o.sh_type != sh_type && sh_type != E::SHT_NOBITS {
                o.sh_type = if o.sh_type == E::SHT_NOBITS {
                    sh_type
                } else {
                    o.sh_type
                };
            }
            // The first input (a script's description has no flags before it) brings its merge flags, which
            // `place::add_merged` keeps where every input is merged alike.
            let merge = E::SHF_MERGE as u64 | E::SHF_STRINGS as u64;
            let first = o.flags == 0 && o.parts.is_empty();
            o.flags |= flags & !(merge | E::SHF_GROUP as u64);
            if first && flags & E::SHF_MERGE as u64 != 0 {
                o.flags |= flags & merge;
            }
        }
    }

    /// Returns whether the section is made.
    fn add_synth(&mut self, s: Synth, sh_type: u32, flags: u64, align: u64, entsize: u64) -> bool {
        // Under a script, where a statement matching its name puts it, as GNU ld places its own input sections
        // (`.iplt` in `.plt`, `.note.gnu.build-id` in a kernel's `.notes`); otherwise its own section. A note,
        // `.interp` or a symbol hash table that `/DISCARD/` takes is not made (nothing else needs them; U-Boot's
        // script discards `.gnu*` and `.interp`). The symbol and section name tables are never inputs.
        let linker_made = InputName {
            path: "",
            member: None,
        };
        let writable = flags & E::SHF_WRITE as u64 != 0;
        let script = self.script.filter(|_| flags & E::SHF_ALLOC as u64 != 0);
        let desc = match script.map(|sc| (sc, sc.select(&linker_made, s.name(), writable).0)) {
            Some((sc, k)) if k < DISCARD => {
                self.synth_stmts.push((s, k));
                let d = sc.stmts[k as usize]
                    .output
                    .expect("a statement of an output section");
                Some(d)
            }
            Some((_, DISCARD))
                if matches!(
                    s,
                    Synth::BuildId
                        | Synth::GnuProperty
                        | Synth::PackageNote
                        | Synth::Interp
                        | Synth::Hash
                        | Synth::GnuHash
                ) =>
            {
                return false;
            }
            _ => None,
        };
        self.place_synth(s, desc, (sh_type, flags, align, entsize));
        true
    }

    /// Adds linker-made section `s` at statement `k` of the script.
    fn add_synth_at(&mut self, s: Synth, k: u32, shape: (u32, u64, u64, u64)) {
        let Some(sc) = self.script else { return };
        let Some(d) = sc.stmts.get(k as usize).and_then(|st| st.output) else {
            return;
        };
        self.synth_stmts.push((s, k));
        self.place_synth(s, Some(d), shape);
    }

    /// Adds linker-made section `s` to output description `desc`'s section, or to its own.
    fn place_synth(&mut self, s: Synth, desc: Option<u32>, shape: (u32, u64, u64, u64)) {
        self.place_synth_in(s, desc, s.name(), shape);
    }

    /// Adds linker-made section `s` to output description `desc`'s section, or to output section `name`.
    fn place_synth_in(
        &mut self,
        s: Synth,
        desc: Option<u32>,
        name: &[u8],
        (sh_type, flags, align, entsize): (u32, u64, u64, u64),
    ) {
        let i = match desc {
            Some(d) => self.description(d, sh_type, flags),
            None => self.get_or_add(name, sh_type, flags),
        };
        let o = &mut self.osecs[i.index()];
        o.align = o.align.max(align);
        o.entsize = entsize;
        o.parts.push(Part::Synthetic(s));
        self.synth.insert(s, i, align);
    }
}

/// The output section of the common symbols: `.bss`, or where a script's `*(COMMON)` puts them.
pub(super) fn commons_output(config: &crate::args::Config) -> &[u8] {
    config
        .sections
        .as_deref()
        .map_or(b".bss", |sc| sc.common_output())
}

/// The output description whose statement places the common symbols (`*(COMMON)`), if one does.
fn commons_description(config: &crate::args::Config) -> Option<u32> {
    let sc = config.sections.as_deref()?;
    sc.common_stmt.and_then(|k| sc.stmts[k as usize].output)
}

/// The output section of the common symbols, once made (`commons_output`, or its description's section).
pub(super) fn commons_section(config: &crate::args::Config, map: &SectionMap) -> Option<OsecId> {
    match commons_description(config) {
        Some(d) => (map.script_desc.iter().position(|&x| x == d)).map(OsecId::new),
        None => map.by_name.get(commons_output(config)).copied(),
    }
}

/// Whether a copy relocation copies a shared library's read-only data, which goes to `.data.rel.ro`.
fn copies_read_only_data(cx: &Cx) -> bool {
    let res = cx.res;
    (cx.scan.flags.iter().enumerate())
        .filter(|(_, f)| **f & scan::NEEDS_COPY != 0)
        .any(|(g, _)| match res.defs.get(g) {
            Some(crate::resolve::Def::Shared { file, sym }) => {
                let so = &res.shared[file.index()];
                so.read_only(so.syms[*sym as usize].st_shndx.get(crate::elf::LE))
            }
            _ => false,
        })
}

/// The output section a script puts an input section in: its statement's, or for an orphan one of its own name
/// (GNU ld's: an orphan `.ctors.00100` must not join `.init_array`); the default rules' where the script was
/// inserted into rivet's default layout, whose rules stand for GNU ld's default script there.
/// With the statement's description (`NONE` for an orphan), which names the section where two share a name.
fn script_output_name<'a>(
    sc: &'a crate::script::sections::SectionsScript,
    selection: u32,
    name: &'a [u8],
    file: &str,
) -> (&'a [u8], u32) {
    let (k, _) = crate::script::sections::unpack_selection(selection);
    match sc.stmts.get(k as usize).and_then(|st| st.output) {
        Some(d) => (sc.outputs[d as usize].name.as_bytes(), d),
        None if sc.builtin_base => (output_section_of(name, file), NONE),
        None => (name, NONE),
    }
}

/// An output section name of a file's sections (see `FileNames`).
type FileName<'a> = ((&'a [u8], u32), u32, u64, u64, bool);

/// One file's output section names (name and script description or `NONE`, type, flags, alignment, whether a
/// section is not merged; first-seen order), its sections' indices in that list,
/// its live merge sections, and its `.text` inputs outside `rules::TEXT_MAIN` (`SectionMap::text_groups`).
type FileNames<'a> = (
    Vec<FileName<'a>>,
    Vec<OsecId>,
    Vec<SecIdx>,
    Vec<(SecIdx, u8)>,
);

/// `FileNames` of file `f`: each live section's output section by name, as a script's statement or the rules
/// give it.
fn file_names<'a>(cx: &Cx<'a>, f: FileId) -> FileNames<'a> {
    let (live, script) = (cx.live, cx.config.sections.as_deref());
    let o = &cx.res.objects[f.index()];
    let mut v: Vec<FileName> = Vec::new();
    let mut local = vec![OsecId::NONE; o.sections.len()];
    let mut merge = Vec::new();
    let mut groups = Vec::new();
    for (s, sec) in o.secs() {
        if !live.is_live(f, s) {
            continue;
        }
        if sec.kind == SectionKind::Merge {
            merge.push(s);
        }
        let n = match script {
            Some(sc) => script_output_name(
                sc,
                live.script[f.index()][s.index()],
                o.sec_name(s.index()),
                &o.name,
            ),
            None => {
                let name = o.sec_name(s.index());
                let n = output_section_of(name, &o.name);
                if n == b".text" && name.len() > 5 {
                    match super::rules::text_group(name) {
                        super::rules::TEXT_MAIN => {}
                        g => groups.push((s, g)),
                    }
                }
                (n, NONE)
            }
        };
        let (n, desc) = n;
        // `.ctors` sections join `.init_array` (and `.dtors` `.fini_array`), which keeps its type.
        let sh_type = match n {
            b".init_array" => E::SHT_INIT_ARRAY,
            b".fini_array" => E::SHT_FINI_ARRAY,
            _ => sec.sh_type(),
        };
        local[s.index()] = match v.iter().position(|(m, ..)| *m == (n, desc)) {
            Some(k) => {
                let e = &mut v[k];
                if sh_type != E::SHT_NOBITS {
                    e.1 = sh_type;
                }
                e.2 |= sec.flags();
                e.3 = e.3.max(sec.align());
                e.4 |= sec.kind != SectionKind::Merge;
                OsecId::new(k)
            }
            None => {
                let plain = sec.kind != SectionKind::Merge;
                v.push(((n, desc), sh_type, sec.flags(), sec.align(), plain));
                OsecId::new(v.len() - 1)
            }
        };
    }
    (v, local, merge, groups)
}

/// The output sections and what the pass decides besides.
pub type Made = (Vec<OutputSection>, SectionMap);

/// `output_sections`, and without a `SECTIONS` script the default layout written as a script, which gives the
/// addresses (`segments`): it depends on the options alone, so it is compiled beside the pass.
pub fn with_default_layout<A: Arch>(
    cx: &Cx,
) -> crate::diag::Result<(Made, Option<SectionsScript>)> {
    let config = cx.config;
    // The span on this thread (`timing` opens spans on the main thread only).
    let _t = crate::timing::span("output sections");
    let (made, default_layout) = rayon::join(
        || output_sections::<A>(cx),
        || (config.sections.is_none()).then(|| super::default_script::script::<A>(config)),
    );
    let default_layout = default_layout
        .transpose()
        .map_err(crate::diag::Errors::one)?;
    Ok((made, default_layout))
}

pub fn output_sections<A: Arch>(cx: &Cx) -> (Vec<OutputSection>, SectionMap) {
    let Cx { config, res, .. } = *cx;
    let objects = &res.objects;
    let script = config.sections.as_deref();
    let mut b = Builder {
        osecs: Vec::new(),
        by_name: HashMap::default(),
        synth: SynthMap::default(),
        script,
        synth_stmts: Vec::new(),
        by_desc: Vec::new(),
    };
    if let Some(sc) = script {
        super::script::add_script_sections(sc, &mut b);
    }
    // Output sections named by the inputs, in first-seen order (renumbered by rank below). Each live input
    // section's output section is found here once, as an index into its file's list of names, so later passes
    // neither map names nor hash them again. The live merge sections are listed on the way, for the merge pass.
    // `local` holds, per section, the index in the file's list of names until the renumbering below makes it the
    // output section (in place: it is a large table).
    let names_per_file: Vec<FileNames> = res.runs.map(|f| file_names(cx, f));
    let mut file_osecs: Vec<Vec<OsecId>> = vec![Vec::new(); objects.len()];
    // Met in load order, as GNU ld meets its orphans.
    let mut first_file_end = None;
    for f in res.order.files(objects.len()) {
        let v = &names_per_file[f.index()].0;
        let mut ids = Vec::with_capacity(v.len());
        for &((n, desc), t, fl, align, plain) in v {
            let t = if t == A::SHT_PROGBITS_LIKE {
                E::SHT_PROGBITS
            } else {
                t
            };
            let id = match desc {
                NONE => b.get_or_add(n, t, fl),
                d => b.description(d, t, fl),
            };
            // A note's alignment orders the orphan notes under a script (`script::order_sections`).
            let o = &mut b.osecs[id.index()];
            o.plain_inputs |= plain;
            if o.sh_type == E::SHT_NOTE {
                o.align = o.align.max(align);
            }
            ids.push(id);
        }
        file_osecs[f.index()] = ids;
        first_file_end.get_or_insert(b.osecs.len());
    }
    let with_inputs = b.osecs.len();
    // Commons that are still the definition (a shared library's or the linker's may have replaced one).
    let common_ids: Vec<SymId> = res
        .common_defs
        .iter()
        .copied()
        .filter(|&g| !res.commons_discarded && is_common_def(res, g, &res.defs[g.index()]))
        .collect();

    let mut named = None;
    let (interp, build_id_size) =
        add_synthetic_sections::<A>(cx, &mut b, !common_ids.is_empty(), &mut named);

    // Renumber by rank (stable: ties keep first-seen order, which follows load order), or in the script's
    // order with the orphans among its sections.
    let rules = Rules::of(config);
    let mut order: Vec<u32> = (0..b.osecs.len() as u32).collect();
    match script {
        Some(sc) => {
            let met = (
                first_file_end.unwrap_or(with_inputs),
                with_inputs..b.osecs.len(),
            );
            let mut desc = vec![NONE; b.osecs.len()];
            for (d, i) in b.by_desc.iter().enumerate().filter(|(_, i)| i.is_some()) {
                desc[i.index()] = d as u32;
            }
            super::script::order_sections(sc, &rules, (&mut b.osecs, &desc), &mut order, met)
        }
        None => order.sort_by_key(|&i| {
            let o = &b.osecs[i as usize];
            rules.rank(&o.name, o.sh_type, o.flags)
        }),
    }
    let mut remap = vec![OsecId(0); order.len()];
    for (new, &old) in order.iter().enumerate() {
        remap[old as usize] = OsecId::new(new);
    }
    let osecs: Vec<OutputSection> = {
        let mut slots: Vec<Option<OutputSection>> = b.osecs.into_iter().map(Some).collect();
        order
            .iter()
            .map(|&i| slots[i as usize].take().unwrap())
            .collect()
    };
    let by_name: HashMap<Vec<u8>, OsecId> = b
        .by_name
        .into_iter()
        .map(|(k, v)| (k, remap[v.index()]))
        .collect();
    let synth = b.synth.remap(&remap);
    // Per file, per section: the output section (`NONE` for a dead section).
    type Mapped = (Vec<OsecId>, (Vec<SecIdx>, Vec<(SecIdx, u8)>));
    let (sec_osec, (live_merge, text_groups)): (Vec<Vec<OsecId>>, (Vec<_>, Vec<_>)) =
        names_per_file
            .into_par_iter()
            .zip(file_osecs)
            .map(|((_, mut local, merge, groups), ids)| -> Mapped {
                for x in local.iter_mut().filter(|x| x.is_some()) {
                    *x = remap[ids[x.index()].index()];
                }
                (local, (merge, groups))
            })
            .unzip();
    // Output sections some input section goes to (those created for an input name come first).
    let has_inputs: Vec<bool> = {
        let mut v = vec![false; osecs.len()];
        for old in 0..with_inputs {
            v[remap[old].index()] = true;
        }
        v
    };
    let mut script_desc = Vec::new();
    if script.is_some() {
        script_desc = vec![NONE; osecs.len()];
        for (d, i) in b.by_desc.iter().enumerate().filter(|(_, i)| i.is_some()) {
            script_desc[remap[i.index()].index()] = d as u32;
        }
    }
    let map = SectionMap {
        script_desc,
        synth_stmts: b.synth_stmts,
        text_groups,
        by_name,
        synth,
        sec_osec,
        live_merge,
        has_inputs,
        common_ids,
        interp,
        build_id_size,
        rela_named: named.map(|n| n.per_file).unwrap_or_default(),
    };
    (osecs, map)
}

/// Adds the linker-made sections this output needs to `b`; returns the program interpreter's path and the build
/// id's length.
fn add_synthetic_sections<A: Arch>(
    cx: &Cx,
    b: &mut Builder,
    has_common: bool,
    named: &mut Option<super::named_relocs::Named>,
) -> (Option<Vec<u8>>, u64) {
    let Cx {
        config,
        scan,
        pic,
        any_shared,
        is_dynamic,
        ..
    } = *cx;
    let interp = if is_dynamic
        && config.kind != OutputKind::Shared
        && !config.no_dynamic_linker
        && !(config.static_link && pic && !any_shared)
    {
        let path = config
            .dynamic_linker
            .clone()
            .unwrap_or_else(|| A::DYNAMIC_LINKER.into());
        b.add_synth(Synth::Interp, E::SHT_PROGBITS, E::SHF_ALLOC as u64, 1, 0)
            .then(|| path.into_bytes())
    } else {
        None
    };
    let build_id_size = crate::synthetic::notes::build_id_len(&config.build_id);
    if !cx.gnu_props.is_empty() {
        let a = E::SHF_ALLOC as u64;
        b.add_synth(Synth::GnuProperty, E::SHT_NOTE, a, 8, 0);
    }
    if build_id_size > 0 {
        b.add_synth(Synth::BuildId, E::SHT_NOTE, E::SHF_ALLOC as u64, 4, 0);
    }
    if config.package_metadata.is_some() {
        let a = E::SHF_ALLOC as u64;
        b.add_synth(Synth::PackageNote, E::SHT_NOTE, a, 4, 0);
    }
    let a = E::SHF_ALLOC as u64;
    let aw = a | E::SHF_WRITE as u64;
    if is_dynamic {
        if matches!(config.hash_style, HashStyle::Sysv | HashStyle::Both) {
            b.add_synth(Synth::Hash, E::SHT_HASH, a, 8, 4);
        }
        if matches!(config.hash_style, HashStyle::Gnu | HashStyle::Both) {
            b.add_synth(Synth::GnuHash, E::SHT_GNU_HASH, a, 8, 0);
        }
        b.add_synth(Synth::Dynsym, E::SHT_DYNSYM, a, 8, 24);
        b.add_synth(Synth::Dynstr, E::SHT_STRTAB, a, 1, 0);
        b.add_synth(Synth::Versym, E::SHT_GNU_VERSYM, a, 2, 2);
        b.add_synth(Synth::Verdef, E::SHT_GNU_VERDEF, a, 8, 0);
        b.add_synth(Synth::Verneed, E::SHT_GNU_VERNEED, a, 8, 0);
        b.add_synth(Synth::RelaDyn, E::SHT_RELA, a, 8, 24);
        if let Some(sc) = b.script {
            let rela_dyn = b
                .synth
                .get(Synth::RelaDyn)
                .map(|i| b.osecs[i.index()].name.clone());
            let rela_dyn = rela_dyn
                .as_deref()
                .and_then(|n| std::str::from_utf8(n).ok());
            *named = super::named_relocs::named(cx, sc, rela_dyn);
            if let Some(n) = named {
                b.add_synth_at(Synth::RelaNamed, n.stmt, (E::SHT_RELA, a, 8, 24));
            }
        }
        b.add_synth(
            Synth::RelaPlt,
            E::SHT_RELA,
            a | E::SHF_INFO_LINK as u64,
            8,
            24,
        );
        if config.pack_relative_relocs {
            b.add_synth(Synth::RelrDyn, E::SHT_RELR, a, 8, 8);
        }
        b.add_synth(Synth::Dynamic, E::SHT_DYNAMIC, aw, 8, 16);
    } else if config.sections.is_none() {
        // Without a script, GNU ld's default one puts `.rela.iplt` in `.rela.plt` and `.iplt` in `.plt`.
        let shape = (E::SHT_RELA, a | E::SHF_INFO_LINK as u64, 8, 24);
        b.place_synth_in(Synth::RelaIplt, None, b".rela.plt", shape);
    } else {
        b.add_synth(
            Synth::RelaIplt,
            E::SHT_RELA,
            a | E::SHF_INFO_LINK as u64,
            8,
            24,
        );
    }
    let ax = a | E::SHF_EXECINSTR as u64;
    b.add_synth(Synth::Plt, E::SHT_PROGBITS, ax, 16, 16);
    match config.sections {
        None => b.place_synth_in(Synth::Iplt, None, b".plt", (E::SHT_PROGBITS, ax, 16, 16)),
        Some(_) => {
            b.add_synth(Synth::Iplt, E::SHT_PROGBITS, ax, 16, 16);
        }
    }
    // Full RELRO (`-z relro -z now`) without a script: `.got.plt` starts `.got`, as GNU ld's script for it puts
    // them (`.got : { *(.got.plt) *(.igot.plt) *(.got) *(.igot) }`).
    if Rules::of(config).full_relro && config.sections.is_none() {
        b.place_synth_in(Synth::GotPlt, None, b".got", (E::SHT_PROGBITS, aw, 8, 8));
    }
    b.add_synth(Synth::Got, E::SHT_PROGBITS, aw, 8, 8);
    if b.synth.get(Synth::GotPlt).is_none() {
        b.add_synth(Synth::GotPlt, E::SHT_PROGBITS, aw, 8, 8);
    }
    if config.eh_frame_hdr && b.by_name.contains_key(&b".eh_frame"[..]) {
        b.add_synth(Synth::EhFrameHdr, E::SHT_PROGBITS, a, 4, 0);
    }
    let copies = is_dynamic && scan.flags.iter().any(|&f| f & scan::NEEDS_COPY != 0);
    if has_common {
        match commons_description(config) {
            Some(d) => b.description(d, E::SHT_NOBITS, aw),
            None => b.get_or_add(commons_output(config), E::SHT_NOBITS, aw),
        };
    }
    if copies {
        b.get_or_add(b".bss", E::SHT_NOBITS, aw);
    }
    if copies && copies_read_only_data(cx) {
        b.get_or_add(b".data.rel.ro", E::SHT_PROGBITS, aw);
    }
    // `--gdb-index`: sized and filled once the addresses are known (`write`), after the debug sections it indexes.
    if config.gdb_index
        && !config.strip_debug
        && !config.strip_all
        && b.by_name.contains_key(&b".debug_info"[..])
    {
        b.add_synth(Synth::GdbIndex, E::SHT_PROGBITS, 0, 4, 0);
    }
    if !config.strip_all {
        b.add_synth(Synth::Symtab, E::SHT_SYMTAB, 0, 8, 24);
        b.add_synth(Synth::Strtab, E::SHT_STRTAB, 0, 1, 0);
    }
    b.add_synth(Synth::Shstrtab, E::SHT_STRTAB, 0, 1, 0);
    (interp, build_id_size)
}
