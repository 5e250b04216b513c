//! Linker scripts (issue 33), as far as rivet applies them: a script given as an input file (or with `-T`, when it
//! has no `SECTIONS`) may set the entry point (`ENTRY`), make symbols undefined roots (`EXTERN`, which pulls
//! archive members as `-u` does), assign symbols, give a version script (`VERSION`) and include other scripts
//! (`INCLUDE`, found on the library path). Each link is compared with GNU ld's: the entry point, the symbols'
//! values and what the program prints. What rivet does not apply yet is refused with the script's file, line and
//! column.

mod common;

use std::path::Path;

const MAIN: &str = r#"
#include <stdio.h>
#include <stdlib.h>
extern char abs_sym[];
extern int pulled(void);
int counter = 5;
void alt_start(void) { printf("alt_start %d\n", pulled()); exit(0); }
int main(void) { puts("main"); return 0; }
"#;

const MEMBER: &str = "int pulled(void) { return 42; }\n";

/// `nm` lines for `names` in `file`: "VALUE TYPE NAME".
fn symbols(dir: &Path, file: &str, names: &[&str]) -> Vec<String> {
    let out = common::tool_ok("nm", &[file], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter(|l| names.iter().any(|n| l.ends_with(&format!(" {n}"))))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn entry(dir: &Path, file: &str) -> String {
    let out = common::tool_ok("readelf", &["-h", file], dir);
    out.lines()
        .find(|l| l.contains("Entry point"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn script_settings_match_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("script-settings", &["gcc", "ar"]) else {
        return;
    };
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    std::fs::write(dir.join("member.c"), MEMBER).unwrap();
    common::tool_ok("gcc", &["-fno-pie", "-c", "m.c", "member.c"], &dir);
    common::tool_ok("ar", &["rcs", "libpulled.a", "member.o"], &dir);
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    // `pulled` is referenced only from m.o, which comes after the archive: EXTERN, read before the archive, must
    // pull the member (as `-u` would).
    std::fs::write(
        dir.join("inc/extra.lds"),
        "/* included from the library path */\nabs_sym = 0x1234 + (2 << 4);\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("settings.lds"),
        "ENTRY(alt_start)\nEXTERN(pulled)\nINCLUDE extra.lds\ncounter_copy = counter;\nLD_FEATURE(\"SANE_EXPR\")\n",
    )
    .unwrap();
    let mut runs = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let exe = format!("m-{side}");
        let b = format!("-B{}/", shim.display());
        let o = common::tool(
            "gcc",
            &[
                &b,
                "-no-pie",
                "-o",
                &exe,
                "-Linc",
                "settings.lds",
                "libpulled.a",
                "m.o",
            ],
            Some(&dir),
        );
        assert!(o.success(), "{side}: {}", o.log());
        let run = std::process::Command::new(dir.join(&exe)).output().unwrap();
        runs.push((
            String::from_utf8_lossy(&run.stdout).into_owned(),
            entry(&dir, &exe),
            symbols(&dir, &exe, &["abs_sym", "alt_start", "pulled"]),
        ));
    }
    assert_eq!(runs[1], runs[0]);
    assert_eq!(runs[1].0, "alt_start 42\n");
}

#[test]
fn version_command_in_a_script() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("script-version", &["gcc"]) else {
        return;
    };
    std::fs::write(
        dir.join("lib.c"),
        "int v1_fn(void) { return 1; }\nint v2_fn(void) { return 2; }\nint hidden_fn(void) { return 3; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "lib.c"], &dir);
    std::fs::write(
        dir.join("ver.lds"),
        "VERSION {\n  LIB_1 { global: v1_fn; local: *; };\n  LIB_2 { global: v2_fn; } LIB_1;\n}\n",
    )
    .unwrap();
    let mut exports = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let so = format!("lib-{side}.so");
        let b = format!("-B{}/", shim.display());
        let o = common::tool(
            "gcc",
            &[&b, "-shared", "-o", &so, "lib.o", "ver.lds"],
            Some(&dir),
        );
        assert!(o.success(), "{side}: {}", o.log());
        let syms = common::tool_ok("readelf", &["--dyn-syms", "-W", &so], &dir);
        let mut v: Vec<String> = syms
            .lines()
            .filter_map(|l| l.split_whitespace().nth(7).map(str::to_string))
            .filter(|n| n.contains('@') || n.starts_with("LIB_") || n.ends_with("_fn"))
            .collect();
        v.sort();
        exports.push(v);
    }
    assert_eq!(exports[1], exports[0]);
    assert!(
        exports[1].iter().any(|n| n == "v2_fn@@LIB_2"),
        "{:?}",
        exports[1]
    );
}

/// `-T` with a script that has no `SECTIONS`: lld keeps its default layout and applies the rest, and so does
/// rivet (GNU ld lays every section out in one segment, without the default script's rules, which cannot run).
#[test]
fn dash_t_without_sections_keeps_the_default_layout() {
    let Some((linker, dir)) =
        common::rivet_only("script-dash-t", &["gcc"], "GNU ld lays out differently")
    else {
        return;
    };
    let shim = common::ld_shim_dir(&linker, "script-dash-t");
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    std::fs::write(dir.join("member.c"), MEMBER).unwrap();
    common::tool_ok("gcc", &["-fno-pie", "-c", "m.c", "member.c"], &dir);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("scripts/t.lds"),
        "ENTRY(alt_start)\nINPUT(member.o)\nabs_sym = 0x2000;\n",
    )
    .unwrap();
    let b = format!("-B{}/", shim.display());
    // Found on the -L path given before it, as GNU ld and lld look for it.
    let o = common::tool(
        "gcc",
        &[&b, "-no-pie", "-o", "m", "-Lscripts", "-Wl,-T,t.lds", "m.o"],
        Some(&dir),
    );
    assert!(o.success(), "{}", o.log());
    let run = std::process::Command::new(dir.join("m")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "alt_start 42\n");
    assert_eq!(
        symbols(&dir, "m", &["abs_sym"]),
        ["0000000000002000 A abs_sym"]
    );
}

/// What rivet does not apply yet is an error at the command's place; a syntax error names its place too, like
/// lld (`FILE:LINE: ...`) with the column added.
#[test]
fn unsupported_commands_and_syntax_errors_name_the_place() {
    let Some((linker, dir)) = common::rivet_only("script-errors", &["gcc"], "rivet's messages")
    else {
        return;
    };
    std::fs::write(dir.join("m.c"), "int main(void) { return 0; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "m.c"], &dir);
    for (script, want) in [
        (
            "ENTRY(main)\n\nINSERT AFTER .text\n",
            "s.lds:3:1: INSERT without SECTIONS before it",
        ),
        (
            "SECTIONS\n{\n  .mytext : { *(.text) } :text\n}\n",
            "s.lds:3:3: no program header text in PHDRS",
        ),
        (
            "SECTIONS {\n  .mytext : { . = 0x10; . = 0x8; *(.text) }\n}\n",
            "s.lds:2:25: cannot move the location counter backwards",
        ),
        (
            // A fuzzer finding: the section's size wrapped the file offsets after it (a panic in the writer).
            "SECTIONS {\n  .mytext : { *(.text) . = 0xfffffffffffff000; }\n}\n",
            "does not fit in a file",
        ),
        (
            "SECTIONS {\n  .mytext : { *(.text) } > rom\n}\n",
            // GNU ld makes the region it does not know (with a warning); with `MEMORY` regions, a section the
            // default layout places without one has none (with -T, `.mytext`'s orphans follow it into `rom`).
            "no memory region specified for loadable section `.text'",
        ),
        (
            "  MEMORY { ram : ORIGIN = 0, LENGTH = 1K }",
            "s.lds: MEMORY, PHDRS or REGION_ALIAS without SECTIONS in any script is not supported",
        ),
        (
            "x += 1;",
            "s.lds:1:1: `x += ...' before any assignment to x outside SECTIONS is not supported",
        ),
        ("x = (1 + ;", "s.lds:1:10: unexpected end of expression"),
        ("GROUP(a.o b.o", "s.lds:1:14: unexpected end of script"),
        ("FOO(bar)", "s.lds:1:1: unknown linker script command 'FOO'"),
        ("INCLUDE nowhere.lds", "s.lds:1:1: cannot find nowhere.lds"),
        (
            "OUTPUT_ARCH(aarch64)",
            "s.lds:1:1: unsupported output architecture 'aarch64'",
        ),
    ] {
        std::fs::write(dir.join("s.lds"), script).unwrap();
        // Named as an input file, the script's sections go after the default layout's: a location counter set
        // inside one is then past the end of the address space, rather than a file's size.
        let hows: Vec<(&[&str], &str)> = match want {
            "does not fit in a file" => vec![
                (
                    &["m.o", "s.lds"],
                    "s.lds:2:24: the location counter set to 0xfffffffffffff000 past the section's start at 0x",
                ),
                (&["m.o", "-T", "s.lds"], want),
            ],
            _ if script.contains("> rom") => vec![(&["m.o", "s.lds"], want)],
            _ => vec![(&["m.o", "s.lds"], want), (&["m.o", "-T", "s.lds"], want)],
        };
        for (how, want) in hows {
            let mut args = vec!["-o", "out"];
            args.extend_from_slice(how);
            let o = common::tool(linker.to_str().unwrap(), &args, Some(&dir));
            assert!(!o.success(), "{script}: linked");
            assert!(
                o.stderr_str().contains(want),
                "{script}: {}",
                o.stderr_str()
            );
            assert!(!o.stderr_str().contains("panicked"), "{}", o.stderr_str());
        }
    }
}

/// `PROVIDE`, `PROVIDE_HIDDEN` and `HIDDEN` outside `SECTIONS`: a provided symbol is defined only when an input
/// refers to it and none defines it; hidden ones stay out of `.dynsym`. Symbol tables and `.dynsym` as GNU ld's.
#[test]
fn provide_and_hidden_match_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("script-provide", &["gcc"]) else {
        return;
    };
    std::fs::write(
        dir.join("p.c"),
        "extern char used_provide[], used_hidden[], hidden_assign[];\n\
         char defined_here[4] = \"obj\";\n\
         extern char defined_here_ref[] __asm__(\"defined_here\");\n\
         unsigned long values(void) { return (unsigned long)used_provide + (unsigned long)used_hidden\n\
             + (unsigned long)hidden_assign + (unsigned long)defined_here_ref; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "p.c"], &dir);
    std::fs::write(
        dir.join("p.lds"),
        "PROVIDE(used_provide = 0x100);\nPROVIDE(unused_provide = 0x200);\n\
         PROVIDE(defined_here = 0x300);\nPROVIDE_HIDDEN(used_hidden = 0x400);\nHIDDEN(hidden_assign = 0x500);\n",
    )
    .unwrap();
    let mut seen = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let so = format!("libp-{side}.so");
        let b = format!("-B{}/", shim.display());
        let o = common::tool(
            "gcc",
            &[&b, "-shared", "-o", &so, "p.o", "p.lds"],
            Some(&dir),
        );
        assert!(o.success(), "{side}: {}", o.log());
        let names = [
            "used_provide",
            "unused_provide",
            "defined_here",
            "used_hidden",
            "hidden_assign",
        ];
        // Values (and absolute or not) as GNU ld's; rivet keeps hidden ones global with STV_HIDDEN in .symtab
        // where GNU ld makes them local, so the binding (nm's letter case) is not compared.
        let syms: Vec<String> = symbols(&dir, &so, &names)
            .into_iter()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let kind = f[1].to_ascii_uppercase();
                let value = if kind == "A" {
                    f[0]
                } else {
                    "section-relative"
                };
                format!("{} {kind} {value}", f[2])
            })
            .collect();
        let exported = common::dynamic_exports(&dir, &so);
        let exported: Vec<String> = exported
            .into_iter()
            .filter(|n| names.contains(&n.as_str()))
            .collect();
        seen.push((syms, exported));
    }
    assert_eq!(seen[1], seen[0]);
    assert_eq!(seen[1].1, ["defined_here", "used_provide"], "{:?}", seen[1]);
}

/// A script's `SEARCH_DIR` is on the search path of its `GROUP`/`INPUT` files and of `INCLUDE`, as in GNU ld:
/// both links succeed, with the inputs' symbols at the same addresses.
#[test]
fn search_dir_finds_group_files_and_includes() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-search-dir", &["as", "ar", "nm"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::create_dir_all(dir.join("libs")).unwrap();
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(dir.join("u.s"), ".globl _start\n_start: call c_fn\n").unwrap();
    std::fs::write(dir.join("c.s"), ".globl c_fn\nc_fn: ret\n").unwrap();
    common::tool_ok("as", &["u.s", "-o", "u.o"], &dir);
    common::tool_ok("as", &["c.s", "-o", "c.o"], &dir);
    common::tool_ok("ar", &["rcs", "libs/libcc.a", "c.o"], &dir);
    std::fs::write(dir.join("group.ld"), "SEARCH_DIR(libs)\nGROUP(libcc.a)\n").unwrap();
    std::fs::write(dir.join("inc/part.ld"), ".text : { *(.text) }\n").unwrap();
    std::fs::write(
        dir.join("include.ld"),
        "SEARCH_DIR(inc)\nSECTIONS {\n  . = 0x10000;\n  INCLUDE part.ld\n}\n",
    )
    .unwrap();
    for (what, args) in [
        ("GROUP", &["u.o", "group.ld"][..]),
        ("INCLUDE", &["u.o", "c.o", "-T", "include.ld"]),
    ] {
        let mut symbols = Vec::new();
        for ld in [common::which("ld.bfd").unwrap(), linker.clone()] {
            let mut a = args.to_vec();
            a.extend(["-o", "out"]);
            let o = common::tool(ld.to_str().unwrap(), &a, Some(&dir));
            assert!(o.success(), "{what}: {}", o.log());
            // The inputs' symbols (GNU ld's default script also defines `_end` and friends unreferenced).
            let nm = common::tool_ok("nm", &["out"], &dir);
            let ours: Vec<String> = (nm.lines())
                .filter(|l| l.ends_with(" _start") || l.ends_with(" c_fn"))
                .map(str::to_string)
                .collect();
            symbols.push(ours);
        }
        assert_eq!(symbols[0], symbols[1], "{what}");
    }
}
