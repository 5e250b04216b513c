//! `--section-ordering-file FILE` (GNU ld 2.43's option; gold's option of the name, a list of section names, is
//! not this one): FILE holds output section statements, `NAME : { input section descriptions }`, as a `SECTIONS`
//! body (with or without `SECTIONS { }` around it), that only map input sections. Each statement's descriptions go
//! first in the link's statement of that output section (the `-T` script's or the default layout's), so that the
//! sections they match go at the start of the output section, in the order they give, as GNU ld's manual describes
//! it. A name the link's script does not describe is an error, as GNU ld's manual allows only those; `/DISCARD/`
//! is added at the end when missing.

use super::ast::{OutputCommand, OutputSection, SectionsCommand};
use super::lexer::Lexer;
use super::sections::{BASE, SectionsScript};

/// A section ordering file, read and checked.
pub struct Fragment {
    pub file: String,
    pub text: String,
    /// Its output section statements, each with input section descriptions only.
    pub outputs: Vec<OutputSection>,
}

/// Reads and checks FILE.
pub fn read(path: &std::path::Path) -> Result<Fragment, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot open {file}: {e}"))?;
    let no_include = |n: &str| -> Result<(String, String), String> {
        Err(format!(
            "INCLUDE {n}: not supported in a section ordering file"
        ))
    };
    // Written as a whole `SECTIONS { ... }`: its body.
    let whole =
        (super::parse::parse(&file, &text, &no_include).ok()).and_then(|all| match &all[..] {
            [one] => match &one.cmd {
                super::ast::Command::Sections(c) => Some(c.clone()),
                _ => None,
            },
            _ => None,
        });
    let commands = match whole {
        Some(c) => Ok(c),
        None => super::parse::parse_sections_body(&file, &text, &no_include),
    };
    let place = |p: super::lexer::Pos| {
        let (line, col) = Lexer::new(&text).line_col(p);
        format!("{file}:{line}:{col}")
    };
    let commands = commands.map_err(|e| {
        format!("{e} (a section ordering file holds output section statements, as GNU ld 2.43 reads it; gold's list of section names is not this format)")
    })?;
    let mut outputs = Vec::new();
    for c in commands {
        let o = match c {
            SectionsCommand::Output(o) => o,
            SectionsCommand::Assign(a) => {
                return Err(only_mapping(&place(a.pos), "a symbol assignment"));
            }
            SectionsCommand::Assert(_, _, p) => return Err(only_mapping(&place(p), "ASSERT")),
            SectionsCommand::Overlay(ov) => return Err(only_mapping(&place(ov.pos), "OVERLAY")),
            SectionsCommand::Entry(_) => return Err(only_mapping(&file, "ENTRY")),
        };
        let attributes = o.address.is_some()
            || o.ty.is_some()
            || o.lma.is_some()
            || o.align.is_some()
            || o.align_with_input
            || o.subalign.is_some()
            || o.constraint.is_some()
            || o.region.is_some()
            || o.lma_region.is_some()
            || !o.phdrs.is_empty()
            || o.fill.is_some();
        if attributes {
            let what = format!("attributes of output section {}", o.name);
            return Err(only_mapping(&place(o.pos), &what));
        }
        if let Some(c) = o
            .commands
            .iter()
            .find(|c| !matches!(c, OutputCommand::Input(_)))
        {
            let what = match c {
                OutputCommand::Assign(_) => "a symbol assignment",
                OutputCommand::Data(..) => "a data command",
                OutputCommand::Fill(_) => "FILL",
                OutputCommand::Constructors => "CONSTRUCTORS",
                _ => "ASSERT",
            };
            return Err(only_mapping(
                &place(o.pos),
                &format!("{what} in {}", o.name),
            ));
        }
        outputs.push(*o);
    }
    Ok(Fragment {
        file,
        text,
        outputs,
    })
}

fn only_mapping(at: &str, what: &str) -> String {
    format!(
        "{at}: {what}: a section ordering file may only map input sections to output sections (GNU ld's rule)"
    )
}

/// Puts `frag`'s descriptions first in the statements of `commands` with the same names (`into` names the script
/// in errors); its places count from `start` in the joined text.
pub fn prepend(
    commands: &mut Vec<(u32, SectionsCommand)>,
    frag: &Fragment,
    start: u32,
    into: &str,
) -> Result<(), String> {
    for o in &frag.outputs {
        let mut ours = vec![SectionsCommand::Output(Box::new(o.clone()))];
        super::insert::shift(&mut ours, start);
        let Some(SectionsCommand::Output(ours)) = ours.pop() else {
            unreachable!()
        };
        let target = commands.iter_mut().find_map(|(_, c)| match c {
            SectionsCommand::Output(t) if t.name == o.name => Some(t),
            _ => None,
        });
        match target {
            Some(t) => {
                t.commands.splice(0..0, ours.commands);
            }
            None if o.name == "/DISCARD/" => commands.push((BASE, SectionsCommand::Output(ours))),
            None => {
                let (line, col) = Lexer::new(&frag.text).line_col(o.pos);
                return Err(format!(
                    "{}:{line}:{col}: output section {} is not described by {into} (a section ordering file orders the sections of the link's script)",
                    frag.file, o.name
                ));
            }
        }
    }
    Ok(())
}

/// The joined text of a script and `frag` (for the places of errors), and where `frag`'s starts.
pub fn join_text(
    text: &mut String,
    sources: &mut Vec<(u32, String)>,
    frag: &Fragment,
) -> Result<u32, String> {
    text.push('\n');
    let start = u32::try_from(text.len()).map_err(|_| "linker scripts too large".to_string())?;
    text.push_str(&frag.text);
    sources.push((start, frag.file.clone()));
    Ok(start)
}

/// A `-T` script's `SECTIONS` with `frag` applied.
pub fn apply(sc: &SectionsScript, frag: &Fragment) -> Result<SectionsScript, String> {
    let mut text = sc.text.clone();
    let mut sources = sc.sources.clone();
    let start = join_text(&mut text, &mut sources, frag)?;
    let mut commands: Vec<(u32, SectionsCommand)> = (sc.commands.iter().zip(group_of(sc)))
        .map(|(c, g)| (g, c.clone()))
        .collect();
    prepend(&mut commands, frag, start, &sc.file)?;
    let mut out =
        SectionsScript::build(sources, text, commands, sc.memory.clone(), sc.phdrs.clone())?;
    out.builtin_base = sc.builtin_base;
    out.region_aliases = sc.region_aliases.clone();
    Ok(out)
}

/// Per command of `sc`, the group of the script it came from (an output description's; `BASE` for the others).
fn group_of(sc: &SectionsScript) -> Vec<u32> {
    let mut k = 0;
    (sc.commands.iter())
        .map(|c| match c {
            SectionsCommand::Output(_) => {
                k += 1;
                sc.groups[k - 1]
            }
            _ => BASE,
        })
        .collect()
}
