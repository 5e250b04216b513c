//! The default layout written as a linker script. It is made from the rules (`rules`), not from GNU ld's script
//! text: the output sections `rules::NAMED` in rank order, each segment class on a page of its own from the image
//! base on. Every final link without a `SECTIONS` script is laid out by walking it (`script`, used by `segments`
//! over the output sections the rules made and filled), and `INSERT` (`script::insert`) splices into it as GNU ld
//! inserts into its default script. Its descriptions place no input section themselves but `.text`'s groups and
//! the priority-sorted arrays, which the rules place the same way: an input section no statement takes goes to its
//! output section by the rules (`rules::output_section_of`), which is then the description of that name, and the
//! orphans the rules do not name go where their rank puts them (`script::order_sections`).

use super::rules::{NAMED, Rules, SORTED_NAMES, output_section_of, segment_class};
use crate::arch::Arch;
use crate::args::{Config, Magic, OutputKind};
use crate::script::ast::SectionsCommand;
use crate::script::input::ScriptSettings;
use crate::script::insert::{Base, Place, splice};
use crate::script::ordering::Fragment;
use crate::script::sections::{BASE, SectionsScript};
use std::fmt::Write;

/// The name the default layout's places are given in errors.
const NAME: &str = "<rivet's default layout>";

/// The default layout of this link (its kind, `-z separate-code`, full RELRO, `-N`/`-n`) as script text.
/// `whole`: it lays out the link by itself (`script`), so `.bss`'s inputs are placed before the commands in it.
pub fn text<A: Arch>(config: &Config, whole: bool) -> String {
    let rules = Rules::of(config);
    let page = config.max_page_size.max(1);
    let base = match config.image_base {
        // The first segment maps the file from offset 0: its address must be on a page boundary. GNU ld rounds
        // down too.
        Some(b) if b % page != 0 => {
            crate::diag::warn(&format!(
                "image base {b:#x} isn't a multiple of the maximum page size; using {:#x}",
                b / page * page
            ));
            b / page * page
        }
        Some(b) => b,
        None if config.kind == OutputKind::Exec => A::IMAGE_BASE,
        None => 0,
    };
    let mut named: Vec<(&[u8], u32)> = NAMED
        .iter()
        .map(|&(n, _)| (n, rules.named_rank(n).unwrap_or(u32::MAX)))
        .collect();
    named.sort_by_key(|n| n.1);
    let mut s =
        String::from("/* rivet's default layout, from its placement rules */\nSECTIONS\n{\n");
    let _ = writeln!(s, "  . = {base:#x} + SIZEOF_HEADERS;");
    let mut class = 0;
    for (name, rank) in named {
        // -z noseparate-code: the headers, code and read-only data share a segment; so do they under -n and
        // -N (GNU ld's scripts for them have no page breaks), and -N's data follows right after.
        let c = match segment_class(rank) {
            _ if config.magic == Magic::Omagic => 0,
            c if c <= 2 && (!config.z_separate_code || config.magic == Magic::Nmagic) => 0,
            c => c,
        };
        // A new page for each segment; the RELRO data ends on a page boundary, the data after it on the
        // next page (DATA_SEGMENT_ALIGN pads to that end, as under GNU ld's script).
        match (class, c) {
            (a, b) if a == b => {}
            (_, 3) => s.push_str(&format!("  . = DATA_SEGMENT_ALIGN({MAX}, {COMMON});\n")),
            // The first words of `.got.plt` (ld.so's, written before the program runs) are RELRO too, as in
            // GNU ld's script, where it follows.
            (3, _) if name == b".got.plt" => {
                let reserved = 3 * if A::ELF32 { 4 } else { 8 };
                s.push_str(&format!(
                    "  . = DATA_SEGMENT_RELRO_END(SIZEOF(.got.plt) >= {reserved} ? {reserved} : 0, .);\n"
                ))
            }
            (3, _) => s.push_str("  . = DATA_SEGMENT_RELRO_END(0, .);\n"),
            _ => s.push_str(&format!("  . = ALIGN({MAX});\n")),
        }
        class = c;
        let name = String::from_utf8_lossy(name);
        // GNU ld's `.bss` ends on a word boundary where it is not empty.
        let end = match &*name {
            ".bss" if whole => {
                format!(". = ALIGN(. != 0 ? {} : 1); ", if A::ELF32 { 4 } else { 8 })
            }
            _ => String::new(),
        };
        let _ = writeln!(s, "  {name} : {{ {}{end}}}", inputs(&name));
    }
    // GNU's script then gives its large-model data sections (`.lrodata`, `.ldata`) the address
    // `ALIGN(MAXPAGESIZE) + (. & (MAXPAGESIZE - 1))`, which moves `.` on even where they are empty: an input
    // file's `SECTIONS` appended after the layout (`script::insert::Place::End`) start that far on, in loads of
    // their own, not on `.bss`'s page (which would make `.bss` take file space).
    let _ = writeln!(s, "  . = DATA_SEGMENT_END(.);");
    for _ in 0..2 {
        let _ = writeln!(s, "  . = ALIGN({MAX}) + (. & ({MAX} - 1));");
    }
    s.push_str("}\n");
    s
}

const MAX: &str = "CONSTANT(MAXPAGESIZE)";
const COMMON: &str = "CONSTANT(COMMONPAGESIZE)";

/// The statements of a description: none, but for `.text`'s groups before its other inputs (`rules::text_group`)
/// and the arrays sorted by priority, which the rules sort (with the `.ctors`/`.dtors` that join
/// `.init_array`/`.fini_array`: those of files other than `crtbegin*.o`/`crtend*.o`).
fn inputs(name: &str) -> String {
    if name == ".text" {
        return String::from(
            "*(.text.unlikely .text.*_unlikely .text.unlikely.*) *(.text.exit .text.exit.*) \
             *(.text.startup .text.startup.*) *(.text.hot .text.hot.*) *(SORT(.text.sorted.*)) ",
        );
    }
    if !SORTED_NAMES.contains(&name.as_bytes()) {
        return String::new();
    }
    let sorted = |n: &str| format!("SORT_BY_INIT_PRIORITY({n}) SORT_BY_INIT_PRIORITY({n}.*)");
    let joined = match name {
        ".init_array" => Some(".ctors"),
        ".fini_array" => Some(".dtors"),
        _ => None,
    };
    let others = joined.map_or(String::new(), |j| {
        let crt = "EXCLUDE_FILE(*crtbegin*.o *crtend*.o)";
        format!(" {crt} SORT_BY_INIT_PRIORITY({j}) {crt} SORT_BY_INIT_PRIORITY({j}.*)")
    });
    format!("*({}{others}) ", sorted(name))
}

/// The scripts' settings with their `INSERT`s spliced into the default layout (`text`), and a
/// `--section-ordering-file`'s statements put into the link's script (a `-T` script's `SECTIONS`, or the default
/// layout, which then lays the output out as under `INSERT`).
pub fn apply_inserts<A: Arch>(
    config: &Config,
    settings: &ScriptSettings,
    ordering: Option<&Fragment>,
) -> Result<ScriptSettings, String> {
    if let (Some(frag), Some(sc), true) =
        (ordering, &settings.sections, settings.inserts.is_empty())
    {
        return Ok(ScriptSettings {
            sections: Some(std::sync::Arc::new(crate::script::ordering::apply(
                sc, frag,
            )?)),
            ..settings.clone()
        });
    }
    let what = match settings.inserts.first() {
        Some(ins) if ins.place == Place::End => {
            format!("{}: SECTIONS in a script named as an input file", ins.at)
        }
        Some(ins) => format!("{}: INSERT", ins.at),
        None => "--section-ordering-file without a SECTIONS script".to_string(),
    };
    if config.relocatable {
        return Err(format!("{what} with -r is not supported yet"));
    }
    // The script walk does not read them (the default addresser does).
    if let Some((name, _)) = config.section_start.first() {
        return Err(format!(
            "{what} with --section-start, -Ttext, -Tdata or -Tbss ({name}) is not supported yet"
        ));
    }
    // The default layout's descriptions name no inputs (the rules place them), so every input would count as an
    // orphan; GNU ld's orphans are those its default script does not name.
    if config.orphan_handling != crate::args::OrphanHandling::Place {
        return Err(format!(
            "{what} with --orphan-handling other than place is not supported yet"
        ));
    }
    // GNU ld finds no section to insert at in a script that replaces the default one (2.40: "not found for
    // insert"); lld inserts there. Refused, as GNU ld refuses it.
    if let Some(sc) = &settings.sections {
        return Err(format!(
            "{what} with {}, a script whose SECTIONS replace the default layout, is not supported",
            sc.file
        ));
    }
    let mut base = builtin::<A>(config, false)?;
    if let Some(frag) = ordering {
        let start = crate::script::ordering::join_text(&mut base.text, &mut base.joined, frag)?;
        let mut commands: Vec<(u32, SectionsCommand)> =
            base.commands.into_iter().map(|c| (BASE, c)).collect();
        crate::script::ordering::prepend(&mut commands, frag, start, "rivet's default layout")?;
        base.commands = commands.into_iter().map(|(_, c)| c).collect();
    }
    let sc: SectionsScript = splice(base, &settings.inserts, gnu_default_takes)?;
    Ok(ScriptSettings {
        sections: Some(std::sync::Arc::new(sc)),
        inserts: Vec::new(),
        ..settings.clone()
    })
}

/// Whether GNU ld's default script has a statement for input section `name`, for the statements of a script
/// appended to it (`insert::Place::End`), which take only what it leaves over: the ones the rules give one of
/// their named output sections (for which GNU's script has descriptions), the common symbols, and the others its
/// x86-64 script names (output sections rivet's rules do not have, the non-allocated ones it describes, the ones
/// it discards). Others are its orphans.
pub(super) fn gnu_default_takes(name: &[u8]) -> bool {
    const OTHERS: [&[u8]; 22] = [
        b".gnu.linkonce.",
        b".rela.",
        b".plt.got",
        b".plt.sec",
        b".rodata1",
        b".data1",
        b".jcr",
        b".gnu.warning",
        b".gnu_extab",
        b".exception_ranges",
        b".sframe",
        b".lbss",
        b".lrodata",
        b".ldata",
        b".comment",
        b".debug",
        b".zdebug",
        b".stab",
        b".line",
        b".gnu.attributes",
        b".note.GNU-stack",
        b".gnu_debuglink",
    ];
    let out = output_section_of(name, "");
    name == b"COMMON"
        || NAMED.iter().any(|n| n.0 == out)
        || OTHERS.iter().any(|p| name.starts_with(p))
}

/// The default layout of a link without a `SECTIONS` script, compiled: the script whose walk gives the
/// output sections their addresses (`segments`). The rules have placed the inputs already, so its input
/// statements are not used there.
pub fn script<A: Arch>(config: &Config) -> Result<SectionsScript, String> {
    splice(builtin::<A>(config, true)?, &[], gnu_default_takes)
}

/// Per output section, its description in `script` (the default layout, one description per name), or `NONE`:
/// the sections the rules name are its descriptions, the others its orphans.
pub fn descriptions(script: &SectionsScript, osecs: &[super::OutputSection]) -> Vec<u32> {
    let by_name: rustc_hash::FxHashMap<&[u8], u32> = (script.outputs.iter().enumerate())
        .map(|(d, o)| (o.name.as_bytes(), d as u32))
        .collect();
    (osecs.iter())
        .map(|o| {
            by_name
                .get(&o.name[..])
                .copied()
                .unwrap_or(crate::index::NONE)
        })
        .collect()
}

/// The default layout, parsed.
fn builtin<A: Arch>(config: &Config, whole: bool) -> Result<Base, String> {
    use crate::script::ast::Command;
    let text = text::<A>(config, whole);
    let no_include = |n: &str| -> Result<(String, String), String> { Err(n.to_string()) };
    let commands = crate::script::parse::parse(NAME, &text, &no_include)?;
    let commands = (commands.into_iter())
        .find_map(|c| match c.cmd {
            Command::Sections(s) => Some(s),
            _ => None,
        })
        .unwrap_or_default();
    Ok(Base {
        file: NAME.to_string(),
        text,
        commands,
        memory: Vec::new(),
        phdrs: Vec::new(),
        joined: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::x86_64::X86_64;

    fn lines(config: &Config) -> Vec<String> {
        let t = text::<X86_64>(config, false);
        t.lines().map(|l| l.trim().to_string()).collect()
    }

    #[test]
    fn default_layout_as_a_script() {
        let exec = Config {
            kind: OutputKind::Exec,
            ..Config::default()
        };
        let l = lines(&exec);
        assert_eq!(l[3], ". = 0x400000 + SIZEOF_HEADERS;");
        let at = |n: &str| {
            l.iter()
                .position(|x| x.starts_with(&format!("{n} :")))
                .unwrap()
        };
        // The segments: read-only, code, read-only, RELRO, data, each after its page break.
        assert!(at(".interp") < at(".dynsym") && at(".dynsym") < at(".init"));
        assert_eq!(l[at(".init") - 1], ". = ALIGN(CONSTANT(MAXPAGESIZE));");
        assert_eq!(l[at(".rodata") - 1], ". = ALIGN(CONSTANT(MAXPAGESIZE));");
        assert!(l[at(".tdata") - 1].starts_with(". = DATA_SEGMENT_ALIGN("));
        // `.got.plt`'s reserved words are RELRO, as in GNU ld's script.
        assert_eq!(
            l[at(".got.plt") - 1],
            ". = DATA_SEGMENT_RELRO_END(SIZEOF(.got.plt) >= 24 ? 24 : 0, .);"
        );
        assert_eq!(
            l[at(".init_array")],
            ".init_array : { *(SORT_BY_INIT_PRIORITY(.init_array) SORT_BY_INIT_PRIORITY(.init_array.*) \
             EXCLUDE_FILE(*crtbegin*.o *crtend*.o) SORT_BY_INIT_PRIORITY(.ctors) \
             EXCLUDE_FILE(*crtbegin*.o *crtend*.o) SORT_BY_INIT_PRIORITY(.ctors.*)) }"
        );
        assert_eq!(
            l[at(".text")],
            ".text : { *(.text.unlikely .text.*_unlikely .text.unlikely.*) *(.text.exit .text.exit.*) \
             *(.text.startup .text.startup.*) *(.text.hot .text.hot.*) *(SORT(.text.sorted.*)) }"
        );
        assert_eq!(l[at(".rodata")], ".rodata : { }");
        // -pie -z now -z noseparate-code: from 0, .got.plt in RELRO, code with the headers.
        let pie = Config {
            kind: OutputKind::Pie,
            bind_now: true,
            relro: true,
            z_separate_code: false,
            ..Config::default()
        };
        let l = lines(&pie);
        assert_eq!(l[3], ". = 0x0 + SIZEOF_HEADERS;");
        let at = |n: &str| {
            l.iter()
                .position(|x| x.starts_with(&format!("{n} :")))
                .unwrap()
        };
        assert!(l[at(".init") - 1].ends_with('}'), "{}", l[at(".init") - 1]);
        assert!(!l.iter().any(|x| x == ". = ALIGN(CONSTANT(MAXPAGESIZE));"));
        assert!(at(".got.plt") < at(".data"));
        assert_eq!(l[at(".data") - 1], ". = DATA_SEGMENT_RELRO_END(0, .);");
        // Laying out a link by itself, `.bss` ends on a word.
        let t = text::<X86_64>(&pie, true);
        assert!(t.contains(".bss : { . = ALIGN(. != 0 ? 8 : 1); }"), "{t}");
        // -N: no page breaks and no data segment; -n: no page breaks before the data, which GNU's
        // DATA_SEGMENT_ALIGN places.
        for (magic, data_segment) in [(Magic::Omagic, false), (Magic::Nmagic, true)] {
            let c = Config {
                kind: OutputKind::Exec,
                magic,
                ..Config::default()
            };
            let t = text::<X86_64>(&c, true);
            assert!(!t.contains(". = ALIGN(CONSTANT(MAXPAGESIZE));"), "{t}");
            assert_eq!(t.contains("DATA_SEGMENT_ALIGN("), data_segment, "{t}");
            assert_eq!(t.contains("DATA_SEGMENT_RELRO_END("), data_segment, "{t}");
        }
    }
}
