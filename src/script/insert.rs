//! `INSERT AFTER|BEFORE section` (GNU ld's manual, "INSERT"): a script whose `SECTIONS` ends with it does not
//! replace the layout; its commands go into the default layout, written as a script (`layout::default_script`),
//! after or before that output section's description. Their input section descriptions match before the default
//! layout's, as GNU ld reads them first.
//!
//! The `SECTIONS` of a script named as an input file in a link without `-T` go in the same way, at the end: GNU
//! ld reads such a script after its default one, so its commands follow the default script's and its input
//! section descriptions match after the default script's (they take only what that leaves over), with the
//! warning "contains output sections; did you forget -T?".

use super::ast::{OutputCommand, OutputSection, Region, SectionsCommand};
use super::lexer::Lexer;
use super::sections::{BASE, SectionsScript};

/// One `SECTIONS ... INSERT AFTER|BEFORE section` of a script.
#[derive(Debug, PartialEq, Eq)]
pub struct Insertion {
    /// The script and its text (for the places of errors).
    pub file: String,
    pub text: String,
    /// The `SECTIONS` commands since the script's previous `INSERT` (GNU ld moves them all).
    pub commands: Vec<SectionsCommand>,
    pub place: Place,
    /// Where the `INSERT` is, as `FILE:LINE:COL` (the file alone for `Place::End`).
    pub at: String,
}

/// Where an `Insertion`'s commands go in the default layout.
#[derive(Debug, PartialEq, Eq)]
pub enum Place {
    /// `INSERT AFTER section`.
    After(String),
    /// `INSERT BEFORE section`.
    Before(String),
    /// After all of it, matching after it: an input file's `SECTIONS` without `-T`.
    End,
}

impl Place {
    /// `AFTER`/`BEFORE` and the section, as the `INSERT` says them.
    pub fn words(&self) -> (&'static str, &str) {
        match self {
            Place::After(s) => ("AFTER", s),
            Place::Before(s) => ("BEFORE", s),
            Place::End => ("at the end of", "the default layout"),
        }
    }
}

/// The script that `inserts` go into, as its parts: file, text, commands, `MEMORY`, `PHDRS`.
pub struct Base {
    pub file: String,
    pub text: String,
    pub commands: Vec<SectionsCommand>,
    pub memory: Vec<Region>,
    pub phdrs: Vec<super::ast::Phdr>,
    /// Texts joined to `text` (a `--section-ordering-file`'s): where each starts, and its file.
    pub joined: Vec<(u32, String)>,
}

/// `base` (rivet's default layout) with each of `inserts` (in the order read) spliced after or before its
/// section's description: a later one right next to the section, before an earlier one (GNU ld's order); the
/// `Place::End` ones after everything, in the order read. A section it does not describe is an error, as in GNU
/// ld. `base_claims` tells the input sections the base's own descriptions would take (GNU ld's default script
/// names them): the `End` ones' statements do not match those.
pub fn splice(
    base: Base,
    inserts: &[std::sync::Arc<Insertion>],
    base_claims: fn(&[u8]) -> bool,
) -> Result<SectionsScript, String> {
    let mut sources = vec![(0u32, base.file.clone())];
    sources.extend(base.joined);
    let mut text = base.text;
    let mut commands: Vec<(u32, SectionsCommand)> =
        base.commands.into_iter().map(|c| (BASE, c)).collect();
    let into = "rivet's default layout";
    // The group numbers order the matching: `INSERT`s' first, then the base's (`BASE`), then the appended ones.
    let (mut ordered, appended): (Vec<_>, Vec<_>) =
        inserts.iter().partition(|i| i.place != Place::End);
    let appended_from = ordered.len() as u32;
    ordered.extend(appended);
    for (g, ins) in ordered.iter().enumerate() {
        // Each script's places count from where its text starts in the joined text.
        text.push('\n');
        let start =
            u32::try_from(text.len()).map_err(|_| "linker scripts too large".to_string())?;
        text.push_str(&ins.text);
        sources.push((start, ins.file.clone()));
        // GNU ld makes a second output section of the name; one description per name here.
        for c in &ins.commands {
            let SectionsCommand::Output(o) = c else {
                continue;
            };
            let described = (commands.iter())
                .find(|c| matches!(&c.1, SectionsCommand::Output(p) if p.name == o.name));
            if let Some((g, _)) = described.filter(|_| o.name != "/DISCARD/") {
                let (line, col) = Lexer::new(&ins.text).line_col(o.pos);
                let other = match *g {
                    BASE => into.to_string(),
                    g if ordered[g as usize].place == Place::End => ordered[g as usize].at.clone(),
                    g => format!("the INSERT at {}", ordered[g as usize].at),
                };
                let why = match ins.place {
                    Place::End => {
                        "a script named as an input file adds sections to the default layout; \
                                   give it with -T to replace the layout"
                    }
                    _ => "INSERT adds sections; it does not move them",
                };
                return Err(format!(
                    "{}:{line}:{col}: output section {} is described in {other} too ({why})",
                    ins.file, o.name
                ));
            }
        }
        let mut cmds = ins.commands.clone();
        shift(&mut cmds, start);
        let (how, section) = ins.place.words();
        let named = |c: &(u32, SectionsCommand)| matches!(&c.1, SectionsCommand::Output(o) if o.name == section);
        let at = match &ins.place {
            Place::After(_) => commands.iter().rposition(named).map(|k| k + 1),
            Place::Before(_) => commands.iter().position(named),
            Place::End => Some(commands.len()),
        };
        let Some(at) = at else {
            return Err(format!(
                "{}: INSERT {how} {section}: {into} has no output section {section}",
                ins.at
            ));
        };
        commands.splice(at..at, cmds.into_iter().map(|c| (g as u32, c)));
    }
    let mut sc = SectionsScript::build(sources, text, commands, base.memory, base.phdrs)?;
    sc.builtin_base = true;
    sc.match_after_base(appended_from, base_claims);
    Ok(sc)
}

/// Moves every place in `cmds` by `by` bytes.
pub(super) fn shift(cmds: &mut [SectionsCommand], by: u32) {
    let output = |o: &mut OutputSection| {
        o.pos.0 += by;
        for c in &mut o.commands {
            match c {
                OutputCommand::Assign(a) => a.pos.0 += by,
                OutputCommand::Input(i) => i.pos.0 += by,
                OutputCommand::Assert(_, _, p) => p.0 += by,
                OutputCommand::Data(..) | OutputCommand::Fill(_) | OutputCommand::Constructors => {}
            }
        }
    };
    for c in cmds {
        match c {
            SectionsCommand::Assign(a) => a.pos.0 += by,
            SectionsCommand::Output(o) => output(o),
            SectionsCommand::Overlay(ov) => {
                ov.pos.0 += by;
                ov.sections.iter_mut().for_each(output);
            }
            SectionsCommand::Assert(_, _, p) => p.0 += by,
            SectionsCommand::Entry(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::input::parse_input;

    fn no_include(n: &str) -> Result<(String, String), String> {
        Err(n.to_string())
    }

    fn base() -> Base {
        let text = "SECTIONS\n{\n  .text : { }\n  .data : { }\n  .bss : { }\n}\n";
        let cmds = super::super::parse::parse("default", text, &no_include).unwrap();
        let Some(super::super::ast::Command::Sections(commands)) =
            cmds.into_iter().next().map(|c| c.cmd)
        else {
            panic!()
        };
        Base {
            file: "default".into(),
            text: text.into(),
            commands,
            memory: Vec::new(),
            phdrs: Vec::new(),
            joined: Vec::new(),
        }
    }

    fn inserts(file: &str, text: &str) -> Vec<std::sync::Arc<Insertion>> {
        parse_input(file, text, &no_include)
            .unwrap()
            .settings
            .inserts
    }

    fn names(sc: &SectionsScript) -> Vec<&str> {
        sc.outputs.iter().map(|o| o.name.as_str()).collect()
    }

    #[test]
    fn later_inserts_go_next_to_the_section() {
        let mut all = inserts("a.lds", "SECTIONS { a : { *(a) } } INSERT AFTER .data;");
        all.extend(inserts(
            "b.lds",
            "SECTIONS { b : { *(b) } } INSERT AFTER .data;",
        ));
        all.extend(inserts(
            "c.lds",
            "SECTIONS { c : { *(c) } } INSERT BEFORE .data;\nSECTIONS { d : { *(d) } } INSERT BEFORE .data;",
        ));
        let sc = splice(base(), &all, |_| false).unwrap();
        assert_eq!(names(&sc), [".text", "c", "d", ".data", "b", "a", ".bss"]);
        // Places are in their own files.
        let d = sc.output(b"d").unwrap();
        assert_eq!(sc.error(sc.outputs[d].pos, "x"), "c.lds:2:12: x");
        let t = sc.output(b".bss").unwrap();
        assert_eq!(sc.error(sc.outputs[t].pos, "x"), "default:5:3: x");
    }

    #[test]
    fn inserted_statements_match_first() {
        let all = inserts(
            "a.lds",
            "SECTIONS { mine : { *(.data.mine) } } INSERT AFTER .bss;",
        );
        let mut b = base();
        // The default layout's description takes the family; the inserted one's name is more specific.
        let text = "SECTIONS { .text : { } .data : { *(.data .data.*) } .bss : { } }";
        let cmds = super::super::parse::parse("default", text, &no_include).unwrap();
        if let super::super::ast::Command::Sections(c) = &cmds[0].cmd {
            b.commands = c.clone();
        }
        b.text = text.into();
        let sc = splice(b, &all, |_| false).unwrap();
        let file = super::super::sections::InputName::of("x.o");
        let (k, _) = sc.select(&file, b".data.mine", true);
        let d = sc.stmts[k as usize].output.unwrap();
        assert_eq!(sc.outputs[d as usize].name, "mine");
        let (k, _) = sc.select(&file, b".data.other", true);
        assert_eq!(
            sc.stmts[k as usize].output,
            sc.output(b".data").map(|d| d as u32)
        );
    }

    #[test]
    fn appended_sections_go_last_and_match_after_the_base() {
        let mut all = inserts("a.lds", "SECTIONS { tab : { *(tab) } } INSERT AFTER .text;");
        let text = "SECTIONS { mine : { *(.data.mine) *(mysec) } }";
        let Some(super::super::ast::Command::Sections(commands)) =
            (super::super::parse::parse("app.lds", text, &no_include).unwrap())
                .into_iter()
                .next()
                .map(|c| c.cmd)
        else {
            panic!()
        };
        let (file, at) = ("app.lds".to_string(), "app.lds".to_string());
        let place = Place::End;
        let text = text.to_string();
        all.push(std::sync::Arc::new(Insertion {
            file,
            text,
            commands,
            place,
            at,
        }));
        // The base takes `.data` and `.data.*`, by its rules rather than its (empty) statements.
        let sc = splice(base(), &all, |n| n.starts_with(b".data")).unwrap();
        assert_eq!(names(&sc), [".text", "tab", ".data", ".bss", "mine"]);
        let file = super::super::sections::InputName::of("x.o");
        let output = |name: &[u8]| {
            let (k, _) = sc.select(&file, name, true);
            let d = sc.stmts.get(k as usize).and_then(|s| s.output);
            d.map(|d| sc.outputs[d as usize].name.clone())
        };
        assert_eq!(output(b".data.mine"), None, "left to the base's rules");
        assert_eq!(output(b"mysec").as_deref(), Some("mine"));
        assert_eq!(output(b"tab").as_deref(), Some("tab"));
        let m = sc.output(b"mine").unwrap();
        assert_eq!(sc.error(sc.outputs[m].pos, "x"), "app.lds:1:12: x");
    }

    #[test]
    fn errors_name_the_insert() {
        let err = |t: &str| splice(base(), &inserts("i.lds", t), |_| false).unwrap_err();
        assert_eq!(
            err("SECTIONS { x : { } }\nINSERT BEFORE .rodata;"),
            "i.lds:2:1: INSERT BEFORE .rodata: rivet's default layout has no output section .rodata"
        );
        assert!(
            err("SECTIONS { .bss : { } } INSERT AFTER .text;").starts_with(
                "i.lds:1:12: output section .bss is described in rivet's default layout too"
            )
        );
    }
}
