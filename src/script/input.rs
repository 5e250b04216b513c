//! A linker script given as a link *input* (glibc's `libc.so` and friends, a text file on the command line, or
//! `-T` without `SECTIONS`): what of it the link applies. GNU ld reads any command there; rivet applies the input
//! commands (`INPUT`, `GROUP`, `AS_NEEDED`, `SEARCH_DIR`), the format checks, and the commands that act like
//! options (`ENTRY`, `EXTERN`, `VERSION`, symbol assignments with `PROVIDE`, `PROVIDE_HIDDEN` and `HIDDEN`), and
//! refuses the rest with the command's place.

use super::ast::{Assignment, Command, ScriptInput, SectionsCommand};
use super::insert::{Insertion, Place};
use super::parse::{Includer, parse};
use super::sections::SectionsScript;
use crate::expr::{Arg, Expr};

#[derive(Debug, Default, PartialEq, Eq)]
pub struct InputScript {
    pub inputs: Vec<ScriptInput>,
    pub search_dirs: Vec<String>,
    /// `STARTUP(file)`s: (where, the file as named). The loader loads a `-T` script's first, before every other
    /// input (`input::load`).
    pub startup: Vec<(String, String)>,
    pub settings: ScriptSettings,
}

/// The commands of the scripts a link reads that act like options, in the order read; where each is, as
/// `FILE:LINE:COL`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScriptSettings {
    /// `ENTRY(sym)`: the last one counts, and `-e` over all.
    pub entry: Option<String>,
    /// `EXTERN(sym...)`: as `-u`.
    pub externs: Vec<String>,
    /// `OUTPUT(file)`: the output's name unless `-o` gives one.
    pub output: Option<String>,
    /// `OUTPUT_FORMAT(binary)`: a raw image (`Config::binary_output`) unless `--oformat` says otherwise.
    pub binary_output: bool,
    /// `VERSION { ... }`: (where, the version script's text).
    pub versions: Vec<(String, String)>,
    /// Symbol assignments outside `SECTIONS` in a script without `SECTIONS` (or with `INSERT`), which the link
    /// evaluates as `--defsym`s: (where, assignment, the number of `--defsym`s given before the script). A
    /// script's own `SECTIONS` holds the others, in their places among its commands, as GNU ld evaluates them.
    pub assignments: Vec<(String, Assignment, usize)>,
    /// The number of `--defsym`s given before the script whose `SECTIONS` is the layout's: those after it are
    /// evaluated after its commands (`Config::defsyms_after`).
    pub sections_after_defsyms: Option<usize>,
    /// `SECTIONS` (with `MEMORY`), of one script at most.
    pub sections: Option<std::sync::Arc<SectionsScript>>,
    /// `SECTIONS` that `INSERT` puts into the layout, in the order read.
    pub inserts: Vec<std::sync::Arc<Insertion>>,
    /// `NOCROSSREFS`, `NOCROSSREFS_TO` and `OVERLAY ... NOCROSSREFS`, in the order read.
    pub nocrossrefs: Vec<NoCrossRefs>,
}

/// Output sections whose contents must not refer to one another (`NOCROSSREFS`, and an overlay's with
/// `NOCROSSREFS`), or, with `to`, whose first section the others' contents must not refer to (`NOCROSSREFS_TO`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoCrossRefs {
    pub to: bool,
    pub sections: Vec<String>,
}

impl ScriptSettings {
    pub fn is_empty(&self) -> bool {
        self == &ScriptSettings::default()
    }

    /// These settings followed by `other`'s: a later `ENTRY` wins, the lists grow, and `other`'s `SECTIONS`,
    /// `MEMORY` and `PHDRS` follow these (`SectionsScript::then`).
    pub fn extend(&mut self, other: ScriptSettings) -> Result<(), String> {
        if other.entry.is_some() {
            self.entry = other.entry;
        }
        self.externs.extend(other.externs);
        self.versions.extend(other.versions);
        self.output = other.output.or(self.output.take());
        self.binary_output |= other.binary_output;
        self.assignments.extend(other.assignments);
        self.sections_after_defsyms = self.sections_after_defsyms.or(other.sections_after_defsyms);
        self.sections = match (self.sections.take(), other.sections) {
            (Some(a), Some(b)) => Some(std::sync::Arc::new(a.then(&b)?)),
            (a, b) => a.or(b),
        };
        self.inserts.extend(other.inserts);
        self.nocrossrefs.extend(other.nocrossrefs);
        Ok(())
    }
}

/// Reads input script `file` (its name, for errors) with text `text`.
/// An assignment outside `SECTIONS` (to `.` or a plain one) as a command of `SECTIONS`; `. = ASSERT(...)` (the
/// kernel's, for old linkers) as the check, with the final values.
fn outside_assignment(a: Assignment, at: &str) -> Result<SectionsCommand, String> {
    if a.target != "." {
        return Ok(SectionsCommand::Assign(a));
    }
    Ok(match (a.op, a.expr) {
        ("=", Expr::Call("ASSERT", args)) if args.len() == 2 => {
            let mut args = args.into_iter();
            match (args.next(), args.next()) {
                (Some(Arg::Expr(e)), Some(Arg::Name(msg))) => {
                    SectionsCommand::Assert(e, msg, a.pos)
                }
                _ => return Err(format!("{at}: malformed ASSERT")),
            }
        }
        (op, expr) => SectionsCommand::Assign(Assignment { op, expr, ..a }),
    })
}

pub fn parse_input(file: &str, text: &str, include: Includer) -> Result<InputScript, String> {
    let mut out = InputScript::default();
    let mut sections: Option<Vec<SectionsCommand>> = None;
    // A second SECTIONS is taken when INSERT follows it (each INSERT moves the SECTIONS since the previous one):
    // where the SECTIONS since the last INSERT start, and where a second one is.
    let (mut pending_at, mut second_sections) = (None, None);
    let mut inserts: Vec<Insertion> = Vec::new();
    let mut memory = Vec::new();
    let mut phdrs = Vec::new();
    // Assignments and `ASSERT`s outside `SECTIONS`, with where each is: GNU ld runs them in order with its
    // commands (the manual's "Simple Assignments": they are as if at the start or the end of `SECTIONS`), so
    // those before the first `SECTIONS` go before its commands and the others after them. A script without
    // `SECTIONS` gives its symbol assignments to the link as `--defsym`s.
    let (mut before_sections, mut dot_asserts): (Vec<(String, SectionsCommand)>, Vec<_>) =
        (Vec::new(), Vec::new());
    let mut aliases = Vec::new();
    // The output format and architecture a script may name: the link's (an ELF32 link is i386's).
    let (format, arch) = match crate::elf::elf32_addend() {
        Some(_) => ("elf32-i386", "i386"),
        None => ("elf64-x86-64", "i386:x86-64"),
    };
    for c in parse(file, text, include)? {
        let at = c.at;
        match c.cmd {
            Command::Input(i) | Command::Group(i) => out.inputs.extend(i),
            Command::SearchDir(d) => out.search_dirs.push(d),
            Command::Startup(f) => out.startup.push((at, f)),
            // GNU ld's default of the three is the first (the others are for -EB and -EL).
            Command::OutputFormat(f) if f.first().is_some_and(|f| f == "binary") => {
                out.settings.binary_output = true;
            }
            Command::Output(o) => out.settings.output = Some(o),
            Command::OutputFormat(f) => {
                if let Some(bad) = f.iter().find(|f| !f.starts_with(format)) {
                    return Err(format!("{at}: unsupported output format '{bad}'"));
                }
            }
            Command::Target(t) if t.starts_with(format) => {}
            Command::OutputArch(a) if a == arch => {}
            Command::OutputArch(a) => {
                return Err(format!("{at}: unsupported output architecture '{a}'"));
            }
            Command::Entry(e) => out.settings.entry = Some(e),
            Command::Extern(e) => out.settings.externs.extend(e),
            Command::Version(v) => out.settings.versions.push((at, v)),
            // Commons are allocated in every output but `-r`'s; the `SANE_EXPR` feature only changes how
            // expressions inside `SECTIONS` are evaluated.
            Command::ForceCommonAllocation | Command::LdFeature(_) => {}
            Command::Assign(a) if a.target == "." || a.op == "=" => {
                let c = outside_assignment(a, &at)?;
                match sections.is_none() && inserts.is_empty() {
                    true => before_sections.push((at, c)),
                    false => dot_asserts.push((at, c)),
                }
            }
            Command::Assert(e, msg, pos) => {
                let c = SectionsCommand::Assert(e, msg, pos);
                match sections.is_none() && inserts.is_empty() {
                    true => before_sections.push((at, c)),
                    false => dot_asserts.push((at, c)),
                }
            }
            // `x op= e` after `x = v`: `x = v op e`, the value GNU ld's in-order evaluation gives.
            Command::Assign(a) => {
                let prior = (before_sections.iter_mut().chain(&mut dot_asserts))
                    .rev()
                    .find_map(|(_, c)| match c {
                        SectionsCommand::Assign(p) if p.target == a.target => Some(p),
                        _ => None,
                    });
                let Some(prior) = prior else {
                    return Err(format!(
                        "{at}: `{0} {1}= ...' before any assignment to {0} outside SECTIONS is not supported",
                        a.target, a.op
                    ));
                };
                let left = std::mem::replace(&mut prior.expr, Expr::Num(0));
                prior.expr = Expr::Binary(a.op, Box::new(left), Box::new(a.expr));
                prior.text = format!("({}) {} ({})", prior.text, a.op, a.text);
            }
            Command::RegionAlias(alias, region) => aliases.push((alias, region)),
            Command::Sections(s) => {
                match sections {
                    Some(_) => second_sections = second_sections.or(Some(at)),
                    None => pending_at = Some(at),
                }
                for c in &s {
                    if let SectionsCommand::Overlay(ov) = c
                        && ov.nocrossrefs
                    {
                        let names = ov.sections.iter().map(|o| o.name.clone()).collect();
                        out.settings.nocrossrefs.push(NoCrossRefs {
                            to: false,
                            sections: names,
                        });
                    }
                }
                sections.get_or_insert_with(Vec::new).extend(s);
            }
            Command::Insert { after, section } => {
                let Some(commands) = sections.take() else {
                    return Err(format!("{at}: INSERT without SECTIONS before it"));
                };
                inserts.push(Insertion {
                    file: file.to_string(),
                    text: text.to_string(),
                    commands,
                    place: match after {
                        true => Place::After(section),
                        false => Place::Before(section),
                    },
                    at,
                });
            }
            Command::NoCrossRefs { to, sections } => {
                out.settings.nocrossrefs.push(NoCrossRefs { to, sections })
            }
            Command::Memory(m) => memory.extend(m),
            Command::Phdrs(p) => phdrs.extend(p),
            other => {
                return Err(format!(
                    "{at}: {} in a linker script is not supported yet",
                    super::command_name(&other)
                ));
            }
        }
    }
    // Without `SECTIONS` of its own (or with `INSERT`, which puts them into the default layout), the script's
    // symbol assignments are the link's `--defsym`s; the number before it is the loader's to tell. A `MEMORY`
    // script's go before the `SECTIONS` of a later one, as its commands (`SectionsScript::then`).
    let regions_only = !memory.is_empty() || !phdrs.is_empty() || !aliases.is_empty();
    if (sections.is_none() && !regions_only) || !inserts.is_empty() {
        for list in [&mut before_sections, &mut dot_asserts] {
            for (at, c) in std::mem::take(list) {
                match c {
                    SectionsCommand::Assign(a) if a.target != "." => {
                        out.settings.assignments.push((at, a, 0))
                    }
                    c => list.push((at, c)),
                }
            }
        }
    }
    let (before_sections, dot_asserts): (Vec<_>, Vec<_>) = (
        before_sections.into_iter().map(|c| c.1).collect(),
        dot_asserts.into_iter().map(|c| c.1).collect(),
    );
    if !inserts.is_empty() {
        if let (Some(_), Some(at)) = (&sections, pending_at) {
            return Err(format!(
                "{at}: SECTIONS after the last INSERT is not supported (it would replace the layout)"
            ));
        }
        // GNU ld then wants a region for every section of its default script too.
        if !phdrs.is_empty() || !memory.is_empty() {
            return Err(format!(
                "{file}: MEMORY or PHDRS in a script with INSERT is not supported"
            ));
        }
        if !dot_asserts.is_empty() || !before_sections.is_empty() || !aliases.is_empty() {
            return Err(format!(
                "{file}: an assignment to . or ASSERT outside SECTIONS, or REGION_ALIAS, in a script with INSERT \
                 is not supported yet"
            ));
        }
        out.settings.inserts = inserts.into_iter().map(std::sync::Arc::new).collect();
        return Ok(out);
    }
    // A second `SECTIONS` continues the first, as in GNU ld.
    let _ = second_sections;
    match sections {
        Some(s) => {
            let s: Vec<SectionsCommand> = (before_sections.into_iter())
                .chain(s)
                .chain(dot_asserts)
                .collect();
            let mut s = SectionsScript::new(file, text, s, memory, phdrs)?;
            s.region_aliases = aliases;
            out.settings.sections = Some(std::sync::Arc::new(s));
        }
        // For a later script's SECTIONS (checked once all are read: `input::load`).
        None if regions_only => {
            let s = before_sections.into_iter().chain(dot_asserts).collect();
            let mut s = SectionsScript::new(file, text, s, memory, phdrs)?;
            s.region_aliases = aliases;
            s.described = false;
            out.settings.sections = Some(std::sync::Arc::new(s));
        }
        None if !dot_asserts.is_empty() || !before_sections.is_empty() => {
            return Err(format!(
                "{file}: an assignment to . or ASSERT without SECTIONS is not supported yet"
            ));
        }
        None => {}
    }
    Ok(out)
}

/// Whether a file looks like a text linker script rather than a binary we do not recognise.
pub fn looks_like_script(data: &[u8]) -> bool {
    let head = &data[..data.len().min(4096)];
    !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\t' || b == b'\n' || b == b'\r' || (0x20..0x7f).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_glibc_libc_so() {
        let s = "/* GNU ld script\n   Use the shared library, but some functions are only in\n   the static library. */\n\
                 OUTPUT_FORMAT(elf64-x86-64)\n\
                 GROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  \
                 AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n";
        let p = parse_input("libc.so", s, &no_include).unwrap();
        assert_eq!(
            p.inputs,
            vec![
                ScriptInput {
                    name: "/lib/x86_64-linux-gnu/libc.so.6".into(),
                    as_needed: false
                },
                ScriptInput {
                    name: "/usr/lib/x86_64-linux-gnu/libc_nonshared.a".into(),
                    as_needed: false
                },
                ScriptInput {
                    name: "/lib64/ld-linux-x86-64.so.2".into(),
                    as_needed: true
                },
            ]
        );
    }

    fn no_include(name: &str) -> Result<(String, String), String> {
        Err(format!("cannot find {name}"))
    }

    #[test]
    fn rejects_what_it_does_not_apply() {
        let err = |s: &str| parse_input("x.lds", s, &no_include).unwrap_err();
        assert_eq!(
            err("GROUP(a.o)\n  INSERT AFTER .text"),
            "x.lds:2:3: INSERT without SECTIONS before it"
        );
        assert_eq!(
            err("SECTIONS { .a : { *(.a) } } INSERT AFTER .text SECTIONS { .b : { *(.b) } }"),
            "x.lds:1:48: SECTIONS after the last INSERT is not supported (it would replace the layout)"
        );
        assert_eq!(
            err(
                "MEMORY { m : ORIGIN = 0, LENGTH = 1K }\nSECTIONS { .a : { } > m } INSERT AFTER .text"
            ),
            "x.lds: MEMORY or PHDRS in a script with INSERT is not supported"
        );
        assert_eq!(err("GROUP ( a.o"), "x.lds:1:12: unexpected end of script");
        assert_eq!(
            err("OUTPUT_FORMAT(elf32-i386)"),
            "x.lds:1:1: unsupported output format 'elf32-i386'"
        );
        assert_eq!(err("INCLUDE y.lds"), "x.lds:1:1: cannot find y.lds");
    }
}
