//! A linker script's `SECTIONS` (with its `MEMORY` regions), ready for a link: its input section descriptions
//! compiled into statements that each input section is matched against, in script order (the first match
//! places it, as in GNU ld), and the symbols its assignments define. Layout evaluates the commands themselves
//! (`layout::script`).

use super::ast::{
    Assignment, Constraint, InputSections, OutputCommand, OutputSection, Phdr, Region,
    SectionsCommand, Sort,
};
use super::lexer::{Lexer, Pos};
use crate::glob::Glob;
use crate::index::NONE;

/// What a section matched: a statement's index, or one of these.
pub const ORPHAN: u32 = u32::MAX;
pub const DISCARD: u32 = u32::MAX - 1;

/// The group of the statements of the script that `INSERT`s go into (or of the only script).
pub const BASE: u32 = u32::MAX;

/// In a packed selection: a `KEEP` statement other than the one that places the section matches it too, which
/// makes it a root of `--gc-sections`, as GNU ld marks every section a `KEEP` pattern names.
pub const LATE_KEEP: u32 = 1 << 27;

/// A section's statement and the sort of the pattern that matched it, in one word: the sort in the top 4 bits.
pub fn pack_selection(k: u32, sort: Sort) -> u32 {
    if k >= DISCARD {
        return k;
    }
    k | (sort_code(sort) << 28)
}

/// The statement of a packed selection (or `DISCARD`, `ORPHAN`), and its sort.
pub fn unpack_selection(v: u32) -> (u32, Sort) {
    if v >= DISCARD {
        return (v, Sort::None);
    }
    let sort = match v >> 28 {
        1 => Sort::Name,
        2 => Sort::Alignment,
        3 => Sort::NameAlignment,
        4 => Sort::AlignmentName,
        5 => Sort::InitPriority,
        6 => Sort::Reverse,
        _ => Sort::None,
    };
    (v & (LATE_KEEP - 1), sort)
}

fn sort_code(s: Sort) -> u32 {
    match s {
        Sort::None | Sort::NoneExplicit => 0,
        Sort::Name => 1,
        Sort::Alignment => 2,
        Sort::NameAlignment => 3,
        Sort::AlignmentName => 4,
        Sort::InitPriority => 5,
        Sort::Reverse => 6,
    }
}

/// `INFO`, `COPY`, `DSECT`, `OVERLAY` as an output section's type: GNU ld makes such a section not allocated (yet
/// still advances the location counter over it).
pub fn is_unallocated_type(t: &str) -> bool {
    matches!(t, "INFO" | "COPY" | "DSECT" | "OVERLAY")
}

/// One input section description, compiled.
#[derive(Debug)]
pub struct Stmt {
    /// The output section description it belongs to (an index in `SectionsScript::outputs`), or `None` for
    /// `/DISCARD/`.
    pub output: Option<u32>,
    pub keep: bool,
    /// Which script it comes from: `INSERT` scripts' statements match before the script they go into
    /// (`insert`), whatever their place in it.
    group: u32,
    file: FilePattern,
    /// `SORT(*)(...)`: the statement's sections in the order of their files' names.
    sort_files: bool,
    exclude_files: Vec<FilePattern>,
    /// (section pattern, files excluded for it, sort).
    sections: Vec<(Glob, Vec<FilePattern>, Sort)>,
}

/// A file name pattern, as GNU ld matches one: `archive:member` (either side may be wild; an empty member is any,
/// an empty archive side a file in no archive), a wildcard pattern (an object's path or a member's own name), or a
/// name without wildcards (an object as named, or every member of the archive so named: GNU ld looks the name up
/// among its inputs, and a member is not one of them).
#[derive(Debug)]
enum FilePattern {
    Plain(Glob),
    Named(String),
    /// The archive's pattern (`None`: in no archive) and the member's (`None`: any).
    Member(Option<Glob>, Option<Glob>),
}

impl FilePattern {
    fn new(p: &str) -> FilePattern {
        match p.split_once(':') {
            Some((a, m)) => FilePattern::Member(
                (!a.is_empty()).then(|| Glob::new(a)),
                (!m.is_empty()).then(|| Glob::new(m)),
            ),
            None if !p.bytes().any(|c| matches!(c, b'*' | b'?' | b'[')) => {
                FilePattern::Named(p.to_string())
            }
            None => FilePattern::Plain(Glob::new(p)),
        }
    }

    /// Whether the statement's file pattern takes `file`.
    fn matches(&self, file: &InputName) -> bool {
        match (self, file.member) {
            (FilePattern::Plain(g), None) => g.matches(file.path.as_bytes()),
            (FilePattern::Plain(g), Some(m)) => g.matches(m.as_bytes()),
            (FilePattern::Named(n), _) => n == file.path,
            (FilePattern::Member(a, m), member) => {
                let name = member.unwrap_or(file.path);
                a.is_some() == member.is_some()
                    && a.as_ref().is_none_or(|a| a.matches(file.path.as_bytes()))
                    && m.as_ref().is_none_or(|m| m.matches(name.as_bytes()))
            }
        }
    }

    /// Whether an `EXCLUDE_FILE` pattern excludes `file`: a pattern without `:` names a member by its own name or
    /// by its archive's (GNU ld keeps that older, undocumented way).
    fn excludes(&self, file: &InputName) -> bool {
        let named = |n: &[u8]| match self {
            FilePattern::Plain(g) => g.matches(n),
            FilePattern::Named(s) => s.as_bytes() == n,
            FilePattern::Member(..) => false,
        };
        match (self, file.member) {
            (FilePattern::Member(..), _) => self.matches(file),
            (_, None) => named(file.path.as_bytes()),
            (_, Some(m)) => named(m.as_bytes()) || named(file.path.as_bytes()),
        }
    }
}

/// An input file's name as patterns see it.
pub struct InputName<'a> {
    /// The object's path, or the archive's for a member.
    pub path: &'a str,
    pub member: Option<&'a str>,
}

impl<'a> InputName<'a> {
    /// From rivet's name of an input object: `path` or `archive(member)`.
    pub fn of(name: &'a str) -> InputName<'a> {
        match name.strip_suffix(')').and_then(|n| n.split_once('(')) {
            Some((path, member)) => InputName {
                path,
                member: Some(member),
            },
            None => InputName {
                path: name,
                member: None,
            },
        }
    }
}

/// A symbol a script assignment defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSymbol {
    pub name: String,
    pub provide: bool,
    pub hidden: bool,
}

/// `SECTIONS` and `MEMORY` of the link's script.
#[derive(Debug)]
pub struct SectionsScript {
    /// The script file and its text, for the places of errors found while laying out; with `INSERT`, the
    /// texts of every script spliced (`sources`).
    pub file: String,
    pub text: String,
    /// Where each script's text starts in `text`, and its file: the first is `file`'s, at 0.
    pub(super) sources: Vec<(u32, String)>,
    /// Per output description, the script it comes from: `BASE` for the script the others are inserted into.
    pub groups: Vec<u32>,
    /// The script `INSERT`s went into is rivet's default layout (`layout::default_script`): the orphans go where
    /// the default rules put them.
    pub builtin_base: bool,
    /// The scripts have a `SECTIONS` command: false for `MEMORY`, `PHDRS` or `REGION_ALIAS` alone, which a later
    /// script's `SECTIONS` uses (`-T memory.ld -T sections.ld`).
    pub described: bool,
    /// Some assignment calls `DATA_SEGMENT_RELRO_END`: GNU ld makes a `PT_GNU_RELRO` only then.
    pub ends_relro: bool,
    /// The statement that places the common symbols (`*(COMMON)`), if one does: they go there, not after the
    /// output section's inputs.
    pub common_stmt: Option<u32>,
    pub commands: Vec<SectionsCommand>,
    pub memory: Vec<Region>,
    /// `REGION_ALIAS(alias, region)`s.
    pub region_aliases: Vec<(String, String)>,
    /// `PHDRS`: when given, the output's program headers exactly.
    pub phdrs: Vec<Phdr>,
    /// The output section descriptions, in script order.
    pub outputs: Vec<OutputSection>,
    pub stmts: Vec<Stmt>,
    /// Per output description, per command: the statement index of an input description there.
    pub stmt_of: Vec<Vec<Option<u32>>>,
    /// Per byte: the patterns (in statement order) that may match a section name whose second byte (the one
    /// after the leading dot) it is: most patterns start with a literal `.x`, so each name is tried against a
    /// few statements instead of all of a default script's two hundred, and of those only the ones with a
    /// pattern whose literal head the name starts with.
    by_lead: Vec<Vec<Lead>>,
    /// `by_lead`'s `KEEP` statements only.
    keep_by_lead: Vec<Vec<Lead>>,
    /// The groups from this one on (but `BASE`) come after the base and match after it (`insert::Place::End`):
    /// they take no input section that `base_claims` says the base's descriptions take.
    appended_from: u32,
    base_claims: fn(&[u8]) -> bool,
    /// Per command: the output description it is (an index in `outputs`), or `NONE`.
    pub command_desc: Vec<u32>,
    /// Per output description: whether its `ONLY_IF_RO`/`ONLY_IF_RW` fails for this link's inputs, so that it
    /// takes nothing and makes no section (`decide_constraints`, once the inputs are known). Until then a
    /// constraint is tried on each section alone.
    dropped: std::sync::OnceLock<Vec<bool>>,
}

/// A pattern of statement `stmt` in a `by_lead` list, with its `Glob::head`: one compare of a name's first
/// eight bytes rejects most statements (GNU ld's default script tries `.text.NAME` against six statements of
/// `.text`, five of them for other prefixes) before `SectionsScript::matches` looks at files and shapes.
#[derive(Debug, Clone, Copy)]
struct Lead {
    stmt: u32,
    head: u64,
    mask: u64,
}

impl PartialEq for SectionsScript {
    fn eq(&self, o: &Self) -> bool {
        self.file == o.file && self.commands == o.commands && self.memory == o.memory
    }
}

impl Eq for SectionsScript {}

impl SectionsScript {
    /// The file names without wildcards its input section descriptions name (`crt0.o(.text)`), in script order:
    /// GNU ld loads such a file where no input has the name (`input::Loader::add_named_by_scripts`).
    pub fn named_files(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for st in &self.stmts {
            if let FilePattern::Named(n) = &st.file
                && !v.contains(&n.as_str())
            {
                v.push(n);
            }
        }
        v
    }

    /// Compiles `commands` (of `SECTIONS`) and `memory`; an unsupported command is an error with its place.
    pub fn new(
        file: &str,
        text: &str,
        commands: Vec<SectionsCommand>,
        memory: Vec<Region>,
        phdrs: Vec<Phdr>,
    ) -> Result<SectionsScript, String> {
        let commands = commands.into_iter().map(|c| (BASE, c)).collect();
        let sources = vec![(0, file.to_string())];
        SectionsScript::build(sources, text.to_string(), commands, memory, phdrs)
    }

    /// This script followed by `next`, as GNU ld reads the `SECTIONS`, `MEMORY` and `PHDRS` commands of several
    /// scripts (`-T a.ld -T b.ld` accumulate): `next`'s commands after these, each keeping its own file's places.
    pub fn then(&self, next: &SectionsScript) -> Result<SectionsScript, String> {
        let mut text = self.text.clone();
        text.push('\n');
        let start =
            u32::try_from(text.len()).map_err(|_| "linker scripts too large".to_string())?;
        text.push_str(&next.text);
        let mut sources = self.sources.clone();
        sources.extend((next.sources.iter()).map(|(at, file)| (at + start, file.clone())));
        let mut later = next.commands.clone();
        super::insert::shift(&mut later, start);
        let commands = (self.commands.iter().cloned())
            .chain(later)
            .map(|c| (BASE, c))
            .collect();
        let memory = (self.memory.iter().cloned())
            .chain(next.memory.iter().map(|r| Region {
                pos: Pos(r.pos.0 + start),
                ..r.clone()
            }))
            .collect();
        let phdrs = (self.phdrs.iter().cloned())
            .chain(next.phdrs.iter().map(|p| Phdr {
                pos: Pos(p.pos.0 + start),
                ..p.clone()
            }))
            .collect();
        let mut s = SectionsScript::build(sources, text, commands, memory, phdrs)?;
        s.region_aliases = [&self.region_aliases[..], &next.region_aliases[..]].concat();
        s.described = self.described || next.described;
        Ok(s)
    }

    /// This script under `--sort-section=name|alignment` (`by`), as GNU ld applies it: each section pattern that
    /// does not sort sorts by `by`; one sorted by name with `by` alignment sorts by name then alignment, one sorted
    /// by alignment with `by` name by alignment then name; the others stay. `.init`'s and `.fini`'s patterns stay
    /// too, as their order is the order of the code run. Refused for a script other scripts were inserted into
    /// (the default layout's sections there are not statements).
    pub fn sorting_sections(&self, by: Sort) -> Result<SectionsScript, String> {
        if self.builtin_base || self.groups.iter().any(|&g| g != BASE) {
            return Err(format!(
                "{}: --sort-section with INSERT, a script named as an input file or --section-ordering-file is \
                 not supported yet",
                self.file
            ));
        }
        let sort = |o: &mut super::ast::OutputSection| {
            if o.name == ".init" || o.name == ".fini" {
                return;
            }
            for c in &mut o.commands {
                let OutputCommand::Input(i) = c else { continue };
                for p in &mut i.sections {
                    p.sort = match (p.sort, by) {
                        (Sort::None, _) => by,
                        (Sort::Name, Sort::Alignment) => Sort::NameAlignment,
                        (Sort::Alignment, Sort::Name) => Sort::AlignmentName,
                        (other, _) => other,
                    };
                }
            }
        };
        let mut commands = self.commands.clone();
        for c in &mut commands {
            match c {
                SectionsCommand::Output(o) => sort(o),
                SectionsCommand::Overlay(ov) => ov.sections.iter_mut().for_each(sort),
                _ => {}
            }
        }
        let commands = commands.into_iter().map(|c| (BASE, c)).collect();
        let (memory, phdrs) = (self.memory.clone(), self.phdrs.clone());
        let mut s = SectionsScript::build(
            self.sources.clone(),
            self.text.clone(),
            commands,
            memory,
            phdrs,
        )?;
        s.region_aliases = self.region_aliases.clone();
        s.described = self.described;
        Ok(s)
    }

    /// Compiles `commands`, each with the group of the script it comes from (`BASE` or an `INSERT` script's
    /// number: the lower matches first), from the scripts `sources` (where each starts in `text`, and its file).
    pub(super) fn build(
        sources: Vec<(u32, String)>,
        text: String,
        commands: Vec<(u32, SectionsCommand)>,
        memory: Vec<Region>,
        phdrs: Vec<Phdr>,
    ) -> Result<SectionsScript, String> {
        let mut s = SectionsScript {
            file: sources[0].1.clone(),
            text,
            sources,
            groups: Vec::new(),
            builtin_base: false,
            described: true,
            ends_relro: false,
            common_stmt: None,
            commands: Vec::new(),
            memory,
            region_aliases: Vec::new(),
            phdrs,
            outputs: Vec::new(),
            stmts: Vec::new(),
            stmt_of: Vec::new(),
            by_lead: vec![Vec::new(); 256],
            keep_by_lead: vec![Vec::new(); 256],
            appended_from: BASE,
            base_claims: |_| false,
            command_desc: Vec::new(),
            dropped: std::sync::OnceLock::new(),
        };
        let commands: Vec<(u32, SectionsCommand)> = commands
            .into_iter()
            .flat_map(|(g, c)| match c {
                SectionsCommand::Overlay(o) => {
                    expand_overlay(&o).into_iter().map(|c| (g, c)).collect()
                }
                c => vec![(g, c)],
            })
            .collect();
        for (g, c) in &commands {
            if let SectionsCommand::Output(o) = c {
                s.add_output(o, *g)?;
            }
        }
        // Statements of `INSERT` scripts first, each script's in its order (GNU ld reads them before the script
        // they go into); stable, so that one script's keep theirs.
        if s.stmts.iter().any(|st| st.group != BASE) {
            let stmts = &s.stmts;
            for l in &mut s.by_lead {
                l.sort_by_key(|e| stmts[e.stmt as usize].group);
            }
        }
        let stmts = &s.stmts;
        s.keep_by_lead = (s.by_lead.iter())
            .map(|l| {
                l.iter()
                    .copied()
                    .filter(|e| stmts[e.stmt as usize].keep)
                    .collect()
            })
            .collect();
        s.commands = commands.into_iter().map(|(_, c)| c).collect();
        let mut d = 0;
        s.command_desc = (s.commands.iter())
            .map(|c| match c {
                SectionsCommand::Output(_) => {
                    d += 1;
                    d - 1
                }
                _ => crate::index::NONE,
            })
            .collect();
        s.common_stmt = s.find_common_stmt();
        let relro_end = |a: &Assignment| a.expr.calls("DATA_SEGMENT_RELRO_END");
        s.ends_relro = s.commands.iter().any(|c| match c {
            SectionsCommand::Assign(a) => relro_end(a),
            SectionsCommand::Output(o) => {
                (o.commands.iter()).any(|c| matches!(c, OutputCommand::Assign(a) if relro_end(a)))
            }
            _ => false,
        });
        Ok(s)
    }

    /// Adds an output description. Two of one name make two output sections, as in GNU ld (its default script's
    /// `ONLY_IF_RO` and `ONLY_IF_RW` `.eh_frame`, of which one is dropped).
    fn add_output(&mut self, o: &OutputSection, group: u32) -> Result<(), String> {
        if let Some(p) =
            (o.phdrs.iter()).find(|p| *p != "NONE" && !self.phdrs.iter().any(|h| &h.name == *p))
        {
            return Err(self.error(o.pos, format!("no program header {p} in PHDRS")));
        }
        // The old types that make a section not allocated are taken for a section that ends up empty (the
        // kernel's `.got.plt (INFO)`, there for an ASSERT on its size); one with contents is refused in the walk.
        if let Some(t) = &o.ty
            && t != "NOLOAD"
            && !is_unallocated_type(t)
        {
            return Err(self.error(
                o.pos,
                format!("output section type {t} is not supported yet"),
            ));
        }
        let k = self.outputs.len() as u32;
        let discard = o.name == "/DISCARD/";
        let mut stmt_of = Vec::with_capacity(o.commands.len());
        for c in &o.commands {
            stmt_of.push(match c {
                OutputCommand::Input(i) => {
                    let st = self.compile(i, (!discard).then_some(k), group);
                    self.stmts.push(st);
                    Some(self.stmts.len() as u32 - 1)
                }
                _ => None,
            });
        }
        self.stmt_of.push(stmt_of);
        self.outputs.push(o.clone());
        self.groups.push(group);
        Ok(())
    }

    fn compile(&mut self, i: &InputSections, output: Option<u32>, group: u32) -> Stmt {
        let stmt = Stmt {
            output,
            keep: i.keep,
            group,
            file: FilePattern::new(&i.file),
            sort_files: i.file_sort == Sort::Name,
            exclude_files: i
                .exclude_files
                .iter()
                .map(|p| FilePattern::new(p))
                .collect(),
            sections: i
                .sections
                .iter()
                .map(|p| {
                    let ex = p
                        .exclude_files
                        .iter()
                        .map(|e| FilePattern::new(e))
                        .collect();
                    (Glob::new(&p.pattern), ex, p.sort)
                })
                .collect(),
        };
        let k = self.stmts.len() as u32;
        // A statement without section patterns takes every section of its files.
        let every = [Lead {
            stmt: k,
            head: 0,
            mask: 0,
        }];
        let patterns: Vec<(Option<u8>, Lead)> = (stmt.sections.iter())
            .map(|(g, _, _)| {
                let (head, mask) = g.head();
                let lead = g.lead();
                (
                    lead,
                    Lead {
                        stmt: k,
                        head,
                        mask,
                    },
                )
            })
            .collect();
        for (b, list) in self.by_lead.iter_mut().enumerate() {
            if patterns.is_empty() {
                list.extend(every);
            }
            (patterns.iter())
                .filter(|(l, _)| l.is_none_or(|l| l as usize == b))
                .for_each(|(_, e)| list.push(*e));
        }
        stmt
    }

    /// Makes the groups from `from` on (but `BASE`) match after the base's, and only the input sections
    /// `claims` says the base leaves over (`insert::Place::End`).
    pub(super) fn match_after_base(&mut self, from: u32, claims: fn(&[u8]) -> bool) {
        if from == BASE
            || !self
                .stmts
                .iter()
                .any(|st| st.group >= from && st.group != BASE)
        {
            return;
        }
        self.appended_from = from;
        self.base_claims = claims;
        let stmts = &self.stmts;
        let key = |e: &Lead| {
            let g = stmts[e.stmt as usize].group;
            (g >= from && g != BASE, g)
        };
        for l in self.by_lead.iter_mut().chain(&mut self.keep_by_lead) {
            l.sort_by_key(key);
        }
        self.common_stmt = self.find_common_stmt();
    }

    fn find_common_stmt(&self) -> Option<u32> {
        match self.select(&InputName::of(""), b"COMMON", true).0 {
            k if k < DISCARD => Some(k),
            _ => None,
        }
    }

    /// Whether statement `k` comes after the base and the base takes section `name`.
    fn left_to_base(&self, k: u32, name: &[u8]) -> bool {
        let g = self.stmts[k as usize].group;
        g >= self.appended_from && g != BASE && (self.base_claims)(name)
    }

    /// `FILE:LINE:COL: msg` for a place in the script's text.
    pub fn error(&self, p: Pos, msg: impl std::fmt::Display) -> String {
        let &(start, ref file) = (self.sources.iter().rev())
            .find(|s| s.0 <= p.0)
            .unwrap_or(&self.sources[0]);
        let (line, col) = Lexer::new(&self.text[start as usize..]).line_col(Pos(p.0 - start));
        format!("{file}:{line}:{col}: {msg}")
    }

    /// The statement that places section `name` of `file` (first match in script order), `DISCARD` or `ORPHAN`;
    /// with the sort of the pattern that matched.
    pub fn select(&self, file: &InputName, name: &[u8], writable: bool) -> (u32, Sort) {
        self.select_in(self.drops(), file, name, writable)
    }

    /// `select` with descriptions `drops` dropped.
    fn select_in(
        &self,
        drops: Drops,
        file: &InputName,
        name: &[u8],
        writable: bool,
    ) -> (u32, Sort) {
        match self.first_match(&self.by_lead, (file, name, writable), true, drops) {
            Some((k, sort)) => {
                let st = &self.stmts[k as usize];
                (if st.output.is_none() { DISCARD } else { k }, sort)
            }
            None => (ORPHAN, Sort::None),
        }
    }

    /// The first statement of `lists` (`by_lead` or `keep_by_lead`) that matches the section, with its sort;
    /// with `placing`, not one that leaves it to the base (`left_to_base`).
    fn first_match(
        &self,
        lists: &[Vec<Lead>],
        (file, name, writable): (&InputName, &[u8], bool),
        placing: bool,
        drops: Drops,
    ) -> Option<(u32, Sort)> {
        let lead = name.get(1).copied().unwrap_or(0) as usize;
        let head = crate::glob::first8(name);
        let mut tried = u32::MAX;
        for e in &lists[lead] {
            if head & e.mask != e.head || e.stmt == tried {
                continue;
            }
            tried = e.stmt;
            if placing && self.appended_from != BASE && self.left_to_base(e.stmt, name) {
                continue;
            }
            if let Some(sort) = self.matches(e.stmt, file, name, (writable, drops)) {
                return Some((e.stmt, sort));
            }
        }
        None
    }

    /// Whether a `KEEP` statement matches the section, whichever statement places it: GNU ld marks every
    /// section a `KEEP` pattern names as kept, and an output section holding one stays even when empty.
    pub fn keep_matches(&self, file: &InputName, name: &[u8], writable: bool) -> bool {
        let section = (file, name, writable);
        (self.first_match(&self.keep_by_lead, section, false, self.drops())).is_some()
    }

    /// Whether statement `k`'s patterns sort in more than one way (`*(SORT(.text.*) .text)`): GNU ld orders such
    /// a statement's sections by the tree it builds of them (`layout::script`'s `gnu_tree_order`).
    pub fn mixes_sorts(&self, k: u32) -> bool {
        let Some(st) = self.stmts.get(k as usize) else {
            return false;
        };
        let plain = |s: Sort| {
            if s == Sort::NoneExplicit {
                Sort::None
            } else {
                s
            }
        };
        let mut sorts = st.sections.iter().map(|p| plain(p.2));
        let first = sorts.next();
        sorts.any(|s| Some(s) != first)
    }

    /// Whether statement `k` sorts its sections by their files' names first (`SORT(*)(...)`).
    pub fn sorts_files(&self, k: u32) -> bool {
        self.stmts.get(k as usize).is_some_and(|st| st.sort_files)
    }

    /// Whether statement `k`'s file patterns take `file`.
    pub fn takes_file(&self, k: u32, file: &InputName) -> bool {
        let st = &self.stmts[k as usize];
        st.file.matches(file) && !st.exclude_files.iter().any(|e| e.excludes(file))
    }

    /// The sorts of statement `k`'s section patterns that match section `name` of `file` (a file the statement
    /// takes), in the statement's order.
    pub fn matching_sorts<'s>(
        &'s self,
        k: u32,
        file: &'s InputName,
        name: &'s [u8],
    ) -> impl Iterator<Item = Sort> + 's {
        (self.stmts[k as usize].sections.iter())
            .filter(move |(g, ex, _)| g.matches(name) && !ex.iter().any(|e| e.excludes(file)))
            .map(|p| p.2)
    }

    /// Whether statement `k` matches the section, and with which pattern's sort.
    /// The section's name first: it rejects most statements a section is tried against.
    fn matches(
        &self,
        k: u32,
        file: &InputName,
        name: &[u8],
        (writable, drops): (bool, Drops),
    ) -> Option<Sort> {
        let st = &self.stmts[k as usize];
        let sort = match st.sections.is_empty() {
            true => Sort::None,
            false => {
                (st.sections.iter())
                    .find(|(g, ex, _)| g.matches(name) && !ex.iter().any(|e| e.excludes(file)))?
                    .2
            }
        };
        if !st.file.matches(file) || st.exclude_files.iter().any(|e| e.excludes(file)) {
            return None;
        }
        let Some(d) = st.output else {
            return Some(sort);
        };
        let constraint = self.outputs[d as usize].constraint;
        let fails = match drops {
            Drops::Decided(dropped) => dropped[d as usize],
            Drops::Kept => false,
            Drops::PerSection => {
                constraint == Some(Constraint::OnlyIfRo) && writable
                    || constraint == Some(Constraint::OnlyIfRw) && !writable
            }
        };
        (!fails).then_some(sort)
    }

    fn drops(&self) -> Drops<'_> {
        self.dropped
            .get()
            .map_or(Drops::PerSection, |d| Drops::Decided(d))
    }

    /// Whether some description has an `ONLY_IF_RO` or `ONLY_IF_RW` constraint.
    pub fn has_constraints(&self) -> bool {
        self.outputs.iter().any(|o| o.constraint.is_some())
    }

    /// Whether the statement that takes the section when no description is dropped is a constrained
    /// description's: the sections `decide_constraints` reads.
    pub fn constrained_match(&self, file: &InputName, name: &[u8], writable: bool) -> bool {
        let (k, _) = self.select_in(Drops::Kept, file, name, writable);
        let d = (self.stmts.get(k as usize)).and_then(|st| st.output);
        d.is_some_and(|d| self.outputs[d as usize].constraint.is_some())
    }

    /// Whether output description `d` is dropped for this link (`decide_constraints`).
    pub fn is_dropped(&self, d: usize) -> bool {
        self.dropped.get().is_some_and(|v| v[d])
    }

    /// Decides which constrained descriptions this link drops, by GNU ld's rule (`map_input_to_output_sections`):
    /// in script order, an `ONLY_IF_RO` description stays when every input section it takes is read-only (so
    /// also when it takes none), an `ONLY_IF_RW` one when one of them is writable; a dropped description takes
    /// nothing, and its sections go to the statements after it. `sections` are the input sections (file, name,
    /// writable) that the statements of constrained descriptions take when none is dropped: those are all the
    /// decisions read. Once only: later calls keep the first decisions.
    pub fn decide_constraints(&self, sections: &[(InputName, &[u8], bool)]) {
        let mut dropped = vec![false; self.outputs.len()];
        let desc = |k: u32| match k < DISCARD {
            true => self.stmts[k as usize].output.map_or(NONE, |d| d),
            false => NONE,
        };
        let mut at: Vec<u32> = (sections.iter())
            .map(|(f, n, w)| desc(self.select_in(Drops::Decided(&dropped), f, n, *w).0))
            .collect();
        for (d, o) in self.outputs.iter().enumerate() {
            let Some(c) = o.constraint else { continue };
            let mut taken = at.iter().zip(sections).filter(|(a, _)| **a as usize == d);
            let read_only = taken.all(|(_, s)| !s.2);
            if read_only == (c == Constraint::OnlyIfRo) {
                continue;
            }
            dropped[d] = true;
            for (a, (f, n, w)) in at.iter_mut().zip(sections) {
                if *a as usize == d {
                    *a = desc(self.select_in(Drops::Decided(&dropped), f, n, *w).0);
                }
            }
        }
        let _ = self.dropped.set(dropped);
    }

    /// The symbols the script's assignments define (not `.`), in script order. A `PROVIDE` that the script's
    /// own expressions read (not only `DEFINED` asks about) defines its symbol as a plain assignment does: GNU
    /// ld's passes see the reference as an undefined symbol the `PROVIDE` then defines.
    pub fn symbols(&self) -> Vec<ScriptSymbol> {
        let read = self.names_read();
        let mut out = Vec::new();
        let mut add = |a: &Assignment| {
            if a.target != "." && !out.iter().any(|s: &ScriptSymbol| s.name == a.target) {
                out.push(ScriptSymbol {
                    name: a.target.clone(),
                    provide: a.provide && !read.contains(&a.target),
                    hidden: a.hidden,
                });
            }
        };
        for c in &self.commands {
            match c {
                SectionsCommand::Assign(a) => add(a),
                SectionsCommand::Output(o) => {
                    for c in &o.commands {
                        if let OutputCommand::Assign(a) = c {
                            add(a);
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The symbols the script's expressions read (`Expr::reads`: `DEFINED`'s question is not a read), but those
    /// of a `PROVIDE` of the symbol itself.
    fn names_read(&self) -> Vec<String> {
        let mut out = Vec::new();
        let assign = |a: &Assignment, out: &mut Vec<String>| {
            let from = out.len();
            a.expr.reads(out);
            if a.provide {
                let read: Vec<String> = out.drain(from..).filter(|n| *n != a.target).collect();
                out.extend(read);
            }
        };
        for c in &self.commands {
            match c {
                SectionsCommand::Assign(a) => assign(a, &mut out),
                SectionsCommand::Assert(e, ..) => e.reads(&mut out),
                SectionsCommand::Output(o) => {
                    let exprs = [&o.address, &o.lma, &o.align, &o.subalign, &o.fill];
                    for e in exprs.into_iter().flatten() {
                        e.reads(&mut out);
                    }
                    for c in &o.commands {
                        match c {
                            OutputCommand::Assign(a) => assign(a, &mut out),
                            OutputCommand::Data(_, e)
                            | OutputCommand::Fill(e)
                            | OutputCommand::Assert(e, ..) => e.reads(&mut out),
                            OutputCommand::Input(_) | OutputCommand::Constructors => {}
                        }
                    }
                }
                SectionsCommand::Overlay(_) | SectionsCommand::Entry(_) => {}
            }
        }
        out
    }

    /// Whether output description `d` has commands besides input descriptions (assignments: it is made even
    /// without inputs).
    pub fn has_own_commands(&self, d: usize) -> bool {
        (self.outputs[d].commands.iter()).any(|c| !matches!(c, OutputCommand::Input(_)))
    }

    /// The type of program header `k` of `PHDRS` (`PT_LOAD` and the others by name, or a number).
    pub fn phdr_type(&self, k: usize) -> Result<u32, String> {
        let p = &self.phdrs[k];
        let ty = match &p.ty {
            crate::expr::Expr::Sym(n) => match n.as_str() {
                "PT_NULL" => Some(0),
                "PT_LOAD" => Some(1),
                "PT_DYNAMIC" => Some(2),
                "PT_INTERP" => Some(3),
                "PT_NOTE" => Some(4),
                "PT_SHLIB" => Some(5),
                "PT_PHDR" => Some(6),
                "PT_TLS" => Some(7),
                "PT_GNU_EH_FRAME" => Some(0x6474_e550),
                "PT_GNU_STACK" => Some(0x6474_e551),
                "PT_GNU_RELRO" => Some(0x6474_e552),
                "PT_GNU_PROPERTY" => Some(0x6474_e553),
                _ => None,
            },
            e => e.eval(&NoEnv).ok().map(|v| v as u32),
        };
        ty.ok_or_else(|| self.error(p.pos, format!("unknown program header type for {}", p.name)))
    }

    /// Whether output description `d` has data commands (`BYTE`, `LONG`...): it then has contents.
    pub fn has_data(&self, d: usize) -> bool {
        (self.outputs[d].commands.iter()).any(|c| matches!(c, OutputCommand::Data(..)))
    }

    /// Whether output description `d` assigns the location counter in a way that keeps the section even when it
    /// ends up empty: GNU ld keeps it for any assignment to `.` but `. = 0`, `. = . + 0` (`. += 0`) and
    /// `. = ALIGN(. != 0 ? EXPR : 1)`, constants folded as its parser folds them.
    pub fn keeps_location(&self, d: usize) -> bool {
        use crate::expr::{Arg, Expr};
        let zero = |e: &Expr| e.is_constant() && e.eval(&NoEnv) == Ok(0);
        let trivial = |a: &Assignment| match (a.op, &a.expr) {
            ("+", e) => zero(e),
            ("=", Expr::Binary("+", l, r)) if **l == Expr::Dot => zero(r),
            ("=", Expr::Call("ALIGN", args)) => {
                matches!(&args[..], [Arg::Expr(Expr::Cond(c, _, one))]
                if **one == Expr::Num(1)
                    && matches!(&**c, Expr::Binary("!=", l, r) if **l == Expr::Dot && **r == Expr::Num(0)))
            }
            ("=", e) => zero(e),
            _ => false,
        };
        (self.outputs[d].commands.iter())
            .any(|c| matches!(c, OutputCommand::Assign(a) if a.target == "." && !trivial(a)))
    }

    /// Whether a packed selection is a `KEEP` statement's.
    pub fn keeps(&self, v: u32) -> bool {
        let (k, _) = unpack_selection(v);
        self.stmts.get(k as usize).is_some_and(|st| st.keep) || (v < DISCARD && v & LATE_KEEP != 0)
    }

    /// Whether `/DISCARD/` takes the common symbols (`*(COMMON)`): GNU ld then drops them, and a reference to one
    /// is an error.
    pub fn discards_commons(&self) -> bool {
        self.select(&InputName::of(""), b"COMMON", true).0 == DISCARD
    }

    /// The output section the common symbols go to: their statement's, or `.bss`.
    pub fn common_output(&self) -> &[u8] {
        let d = self.common_stmt.and_then(|k| self.stmts[k as usize].output);
        d.map_or(b".bss", |d| self.outputs[d as usize].name.as_bytes())
    }

    /// The first output description named `name` that this link keeps: the one GNU ld's `ADDR`, `SIZEOF` and
    /// orphans of that name find.
    pub fn output(&self, name: &[u8]) -> Option<usize> {
        (self.outputs.iter().enumerate())
            .position(|(d, o)| o.name.as_bytes() == name && !self.is_dropped(d))
    }
}

/// Which output descriptions a match skips for their constraints.
#[derive(Clone, Copy)]
enum Drops<'a> {
    /// Not decided for the link yet: a constraint is tried on each section alone.
    PerSection,
    /// None.
    Kept,
    /// Per description, dropped for this link.
    Decided(&'a [bool]),
}

/// `OVERLAY`, as the plain commands GNU ld's manual gives as its equivalent: every section at the overlay's
/// address, each loaded after the one before (from the overlay's `AT`), `__load_start_NAME`/`__load_stop_NAME`
/// provided for each (NAME without the characters a C name cannot have), and the location counter past the
/// largest.
fn expand_overlay(ov: &super::ast::Overlay) -> Vec<SectionsCommand> {
    use crate::expr::{Arg, Expr};
    let of = |f: &'static str, name: &str| Expr::Call(f, vec![Arg::Name(name.to_string())]);
    let plus = |a: Expr, b: Expr| Expr::Binary("+", Box::new(a), Box::new(b));
    let assign = |target: String, expr: Expr, provide: bool| {
        SectionsCommand::Assign(Assignment {
            target,
            op: "=",
            text: String::new(),
            expr,
            provide,
            hidden: false,
            pos: ov.pos,
        })
    };
    let mut out = Vec::new();
    let Some(first) = ov.sections.first() else {
        return out;
    };
    if let Some(start) = &ov.start {
        out.push(assign(".".into(), start.clone(), false));
    }
    let mut largest: Option<Expr> = None;
    for (k, sec) in ov.sections.iter().enumerate() {
        let mut o = sec.clone();
        o.address = Some(if k == 0 {
            Expr::Dot
        } else {
            of("ADDR", &first.name)
        });
        o.lma = match k {
            0 => ov.lma.clone(),
            _ => {
                let prev = &ov.sections[k - 1].name;
                Some(plus(of("LOADADDR", prev), of("SIZEOF", prev)))
            }
        };
        o.region = o.region.or_else(|| ov.region.clone());
        if o.phdrs.is_empty() {
            o.phdrs = ov.phdrs.clone();
        }
        o.fill = o.fill.or_else(|| ov.fill.clone());
        let clean: String = o
            .name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let name = o.name.clone();
        out.push(SectionsCommand::Output(Box::new(o)));
        out.push(assign(
            format!("__load_start_{clean}"),
            of("LOADADDR", &name),
            true,
        ));
        let stop = plus(of("LOADADDR", &name), of("SIZEOF", &name));
        out.push(assign(format!("__load_stop_{clean}"), stop, true));
        largest = Some(match largest {
            None => of("SIZEOF", &name),
            Some(e) => Expr::Call("MAX", vec![Arg::Expr(e), Arg::Expr(of("SIZEOF", &name))]),
        });
    }
    if let Some(l) = largest {
        out.push(assign(".".into(), plus(of("ADDR", &first.name), l), false));
    }
    out
}

/// Evaluation without a link (program header types, `FLAGS` and `AT` are constants).
pub struct NoEnv;

impl crate::expr::Env for NoEnv {
    fn symbol(&self, _: &str) -> Option<u64> {
        None
    }
    fn section(&self, _: &str) -> Option<(u64, u64, u64, u64)> {
        None
    }
    fn max_page_size(&self) -> u64 {
        0x1000
    }
    fn common_page_size(&self) -> u64 {
        0x1000
    }
    fn sizeof_headers(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> SectionsScript {
        let cmds = super::super::parse::parse("t.lds", text, &|n| Err(n.to_string())).unwrap();
        let mut sections = Vec::new();
        let mut memory = Vec::new();
        for c in cmds {
            match c.cmd {
                super::super::ast::Command::Sections(s) => sections = s,
                super::super::ast::Command::Memory(m) => memory = m,
                _ => {}
            }
        }
        SectionsScript::new("t.lds", text, sections, memory, Vec::new()).unwrap()
    }

    #[test]
    fn first_matching_statement_wins() {
        let s = script(
            "SECTIONS { .text : { *(.text.hot) *crt1.o(.text) EXCLUDE_FILE(*skip.o) *(.text .text.*) }\n\
             .data : { lib.a:m.o(.data) *(.data) }\n /DISCARD/ : { *(.comment) } }",
        );
        let plain = InputName::of("/x/a.o");
        assert_eq!(s.select(&plain, b".text.hot", false).0, 0);
        assert_eq!(
            s.select(&InputName::of("/usr/lib/crt1.o"), b".text", false)
                .0,
            1
        );
        assert_eq!(s.select(&plain, b".text.foo", false).0, 2);
        assert_eq!(
            s.select(&InputName::of("/x/skip.o"), b".text", false).0,
            ORPHAN
        );
        assert_eq!(s.select(&InputName::of("lib.a(m.o)"), b".data", false).0, 3);
        assert_eq!(s.select(&plain, b".data", false).0, 4);
        assert_eq!(s.select(&plain, b".comment", false).0, DISCARD);
        assert_eq!(s.select(&plain, b".rodata", false).0, ORPHAN);
    }
}
