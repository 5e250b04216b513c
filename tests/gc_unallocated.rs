//! `--gc-sections` and what a program does not load, as GNU ld collects it (issue 33: firmware such as U-Boot's SPL
//! links with a script and `--gc-sections`, and its ROM must come out as GNU ld's):
//! - a file's debug sections, `.comment` and other unallocated sections without relocations stay only when some
//!   allocated section of that file stays (not a note); an unallocated section with relocations that is not debug
//!   information stays only when something live refers to it, or a script's `KEEP` names it;
//! - an unallocated section that live code refers to (U-Boot's `.text_call64`, placed in `.text` by the script)
//!   keeps what it refers to, as any live section does;
//! - `.eh_frame` stays where GNU ld's default script keeps it (`KEEP`), and under a script only where the script
//!   keeps it or a live section refers to it; what it refers to is never kept by it.
//!
//! Each link is made by GNU ld and by the linker under test from gcc's and clang-19's objects and assembly, and
//! compared: the output's sections (sizes where both linkers size them alike), the compile units of its debug
//! information and its defined symbols.

mod common;

use std::path::Path;
use std::process::Command;

/// Live code: `_start` calls `used`, `far_entry` (in an unallocated section), `use_eh` and `live_extra`; the rest
/// is dead.
const LIVE: &str = r#"
int used(int x) { return x * 3; }
int unused(int x) { return x + 7; }
extern void far_entry(void);
extern void use_eh(void);
extern void live_extra(void);
void _start(void) { used(4); far_entry(); use_eh(); live_extra(); for (;;) {} }
"#;

/// A file none of whose code is live.
const DEAD: &str = r#"
int dead_a(int x) { return x * 11; }
int dead_b(int x) { return x - 5; }
"#;

/// Unallocated sections: `.myinfo` refers to code, `.myplain` has no relocations, `.debug_foo` is debug
/// information. `extras_dead.s`'s file has nothing live; `extras_live.s`'s has `live_extra`.
const EXTRAS_DEAD: &str = r#"
        .text
        .globl deadfn
deadfn: ret
        .section .myinfo,"",@progbits
        .quad deadfn
        .section .myplain,"",@progbits
        .quad 42
        .section .debug_foo,"",@progbits
        .quad 43
"#;

const EXTRAS_LIVE: &str = r#"
        .section .text.live_extra,"ax",@progbits
        .globl live_extra
live_extra: ret
        .section .myinfo,"",@progbits
        .quad live_extra
        .section .myplain,"",@progbits
        .quad 44
        .section .debug_foo,"",@progbits
        .quad 45
"#;

/// Code in an unallocated section, as U-Boot's `call64.S` writes it: live through `far_entry`, it keeps `gdt64`.
const UNALLOCATED_CODE: &str = r#"
        .section .text_far,""
        .globl far_entry
far_entry:
        lea gdt64(%rip), %rax
        ret
        .data
        .globl gdt64
gdt64:  .quad 0, 0x00af9a000000ffff
"#;

/// A reference to `.eh_frame` from live code, as crtbegin's `__EH_FRAME_BEGIN__`: the section stays, and the dead
/// function whose FDE it holds stays dead.
const EH_REFERENCE: &str = r#"
        .section .eh_frame,"a",@unwind
eh_begin:
        .section .text.use_eh,"ax",@progbits
        .globl use_eh
use_eh:
        .cfi_startproc
        lea eh_begin(%rip), %rax
        ret
        .cfi_endproc
        .section .text.dead_in_eh,"ax",@progbits
        .globl dead_in_eh
dead_in_eh:
        .cfi_startproc
        ret
        .cfi_endproc
"#;

const HEAD: &str = "ENTRY(_start)\nSECTIONS {\n  . = 0x10000;\n  .text : { *(.text*) }\n";
const TAIL: &str = "  .data : { *(.data*) }\n  .bss : { *(.bss*) }\n}\n";

/// What is compared: every section by name, with its size except where GNU ld and rivet size it differently
/// by design (`.eh_frame`'s CIE padding, merged strings' shared tails, the symbol and string tables); the compile
/// units' names; the defined symbols.
fn facts(dir: &Path, out: &str) -> Vec<String> {
    let mut v = Vec::new();
    let sized_apart = [
        ".eh_frame",
        ".comment",
        ".debug_str",
        ".debug_line_str",
        ".symtab",
        ".strtab",
        ".shstrtab",
    ];
    for l in common::tool_ok("readelf", &["-SW", out], dir).lines() {
        let l = l.replace("[ ", "[");
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() > 6 && f[0].starts_with('[') && f[0] != "[0]" && f[0] != "[Nr]" {
            let size = if sized_apart.contains(&f[1]) {
                ""
            } else {
                f[5]
            };
            v.push(format!("section {} {size}", f[1]));
        }
    }
    v.sort();
    let info = common::tool("readelf", &["--debug-dump=info", out], Some(dir)).stdout_str();
    let mut in_cu = false;
    let mut cus = Vec::new();
    for l in info.lines() {
        if l.contains("DW_TAG_compile_unit") {
            in_cu = true;
        } else if in_cu && l.contains("DW_AT_name") {
            cus.push(format!(
                "unit {}",
                l.rsplit(": ").next().unwrap_or("").trim()
            ));
            in_cu = false;
        }
    }
    cus.sort();
    v.extend(cus);
    // rivet, as lld, defines the linker's own symbols only where something refers to them.
    let linkers = ["__bss_start", "_edata", "_end"];
    let mut syms: Vec<String> = (common::tool_ok("nm", &["--defined-only", out], dir).lines())
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| !linkers.contains(s))
        .map(|s| format!("symbol {s}"))
        .collect();
    syms.sort();
    v.extend(syms);
    v
}

/// Links with `--print-gc-sections`; returns the removed sections it lists, as (file, section), in either
/// linker's wording.
fn link(ld: &Path, dir: &Path, out: &str, args: &[&str]) -> Vec<(String, String)> {
    let o = Command::new(ld)
        .args(args)
        .args(["--print-gc-sections", "-o", out])
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{} {args:?}: {err}", ld.display());
    err.lines()
        .filter_map(|l| l.split_once("removing unused section ").map(|(_, r)| r))
        .filter_map(|r| {
            // GNU ld: '.sec' in file 'f'; rivet (lld's words): f:(.sec).
            if let Some(r) = r.strip_prefix('\'') {
                let (sec, rest) = r.split_once("' in file '")?;
                Some((rest.trim_end_matches('\'').to_string(), sec.to_string()))
            } else {
                let (file, sec) = r.split_once(":(")?;
                Some((file.to_string(), sec.trim_end_matches(')').to_string()))
            }
        })
        .collect()
}

#[test]
fn unallocated_sections_and_eh_frame_are_collected_as_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("gc-unallocated", &["gcc", "as", "readelf", "nm"])
    else {
        return;
    };
    let (rivet, bfd) = (shim.join("ld"), bfd.join("ld"));
    for (name, text) in [
        ("live.c", LIVE),
        ("dead.c", DEAD),
        ("extras_dead.s", EXTRAS_DEAD),
        ("extras_live.s", EXTRAS_LIVE),
        ("far.s", UNALLOCATED_CODE),
        ("eh_ref.s", EH_REFERENCE),
    ] {
        let stack = if name.ends_with(".s") {
            "\n        .section .note.GNU-stack,\"\",@progbits\n"
        } else {
            ""
        };
        std::fs::write(dir.join(name), format!("{text}{stack}")).unwrap();
    }
    for s in ["extras_dead", "extras_live", "far", "eh_ref"] {
        common::tool_ok("as", &[&format!("{s}.s"), "-o", &format!("{s}.o")], &dir);
    }
    let scripts = [
        ("orphan.lds", String::new()),
        (
            "keep.lds",
            "  .eh_frame : { KEEP(*(.eh_frame)) }\n".to_string(),
        ),
        ("nokeep.lds", "  .eh_frame : { *(.eh_frame) }\n".to_string()),
    ];
    for (name, eh) in &scripts {
        std::fs::write(dir.join(name), format!("{HEAD}{eh}{TAIL}")).unwrap();
    }
    for cc in common::compilers() {
        let c = cc.name();
        let flags = ["-c", "-g", "-O1", "-ffunction-sections", "-fdata-sections"];
        let live = format!("live-{c}.o");
        let dead = format!("dead-{c}.o");
        let dead_noeh = format!("dead-noeh-{c}.o");
        common::tool_ok(
            cc.driver(false),
            &[&flags[..], &["live.c", "-o", &live]].concat(),
            &dir,
        );
        common::tool_ok(
            cc.driver(false),
            &[&flags[..], &["dead.c", "-o", &dead]].concat(),
            &dir,
        );
        let noeh = ["-fno-asynchronous-unwind-tables", "-fno-unwind-tables"];
        common::tool_ok(
            cc.driver(false),
            &[
                &flags[..],
                &noeh,
                &[
                    "-Ddead_a=noeh_a",
                    "-Ddead_b=noeh_b",
                    "dead.c",
                    "-o",
                    &dead_noeh,
                ],
            ]
            .concat(),
            &dir,
        );
        let objs = [
            live.as_str(),
            &dead,
            &dead_noeh,
            "extras_dead.o",
            "extras_live.o",
            "far.o",
            "eh_ref.o",
        ];
        let mut layouts: Vec<Vec<&str>> = vec![vec!["-static", "-e", "_start"]];
        for (script, _) in &scripts {
            layouts.push(vec!["-static", "-T", script]);
        }
        for layout in layouts {
            // Without a script, the unallocated `.text_far` has no place in the program: only the scripts take
            // `far.o`.
            let objs: Vec<&str> = (objs.iter().copied())
                .filter(|o| layout.contains(&"-T") || *o != "far.o")
                .collect();
            let mut no_far = String::new();
            if !layout.contains(&"-T") {
                no_far = "--defsym=far_entry=used".into();
            }
            let args: Vec<&str> = [&["--gc-sections"][..], &layout, &objs, &[no_far.as_str()]]
                .concat()
                .into_iter()
                .filter(|a| !a.is_empty())
                .collect();
            let removed_b = link(&bfd, &dir, "b.out", &args);
            let removed_r = link(&rivet, &dir, "r.out", &args);
            assert_eq!(
                facts(&dir, "r.out"),
                facts(&dir, "b.out"),
                "{c}: {args:?}: rivet's output (left) differs from GNU ld's"
            );
            // `--print-gc-sections` names what went: GNU ld's list (which leaves out empty sections), and the
            // files' empty `.text`, `.data` and `.bss`.
            let empty = [".text", ".data", ".bss"];
            let extra: Vec<&(String, String)> = (removed_r.iter())
                .filter(|r| !removed_b.contains(r) && !empty.contains(&r.1.as_str()))
                .collect();
            let missing: Vec<&(String, String)> = removed_b
                .iter()
                .filter(|b| !removed_r.contains(b))
                .collect();
            assert!(
                extra.is_empty() && missing.is_empty(),
                "{c}: {args:?}: --print-gc-sections: rivet's extra {extra:?}, missing {missing:?}"
            );
        }
    }
}

/// GNU ld's `_start` root comes from its default script's `ENTRY(_start)`: under a `-T` script without `ENTRY` or
/// `-e`, `--gc-sections` has no entry root and keeps nothing a root does not reach (its output's entry is then 0).
#[test]
fn own_script_without_entry_roots_nothing() {
    let Some((dir, _, _)) = common::against_gnu_ld("gc-no-entry", &["gcc", "nm", "readelf"]) else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    let src =
        "int used = 3;\nint foo(void) { return used; }\nvoid _start(void) { foo(); for (;;); }\n";
    std::fs::write(dir.join("g.c"), src).unwrap();
    common::tool_ok(
        "gcc",
        &["-O1", "-ffunction-sections", "-fdata-sections", "-c", "g.c"],
        &dir,
    );
    let lds = "SECTIONS { . = 0x400000; .text : { *(.text*) } .data : { *(.data*) } }\n";
    std::fs::write(dir.join("g.lds"), lds).unwrap();
    std::fs::write(dir.join("e.lds"), format!("ENTRY(_start)\n{lds}")).unwrap();
    for script in ["g.lds", "e.lds"] {
        let mut seen = Vec::new();
        for (side, ld) in [("bfd", Path::new("ld.bfd")), ("rivet", rivet.as_path())] {
            let out = format!("{script}.{side}");
            let args = ["--gc-sections", "-T", script, "g.o", "-o", &out];
            let o = common::tool(&ld.display().to_string(), &args, Some(&dir));
            assert!(o.success(), "{out}: {}", o.log());
            let nm = common::tool("nm", &[&out], Some(&dir)).stdout_str();
            let mut syms: Vec<String> = nm
                .lines()
                .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
                .collect();
            syms.sort();
            let header = common::tool_ok("readelf", &["-h", &out], &dir);
            let entry = header
                .lines()
                .find(|l| l.contains("Entry point"))
                .unwrap_or("")
                .to_string();
            seen.push((syms, entry));
        }
        assert_eq!(
            seen[1], seen[0],
            "{script}: (rivet's, GNU ld's) symbols and entry"
        );
    }
}
