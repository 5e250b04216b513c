//! `INSERT AFTER|BEFORE section` (issue 33): a `-T` script whose `SECTIONS` ends with `INSERT` adds its output
//! sections to the default layout next to the named one; everything else keeps the default layout. Each link is
//! made by GNU ld and by rivet from the same objects and compared: what the program prints, the order of the
//! output sections both have, where the scripts' symbols and `__start_`/`__stop_` lie in their sections, the
//! flags of the `PT_LOAD` each section is in, and whether there is a `PT_GNU_RELRO`.
//!
//! A script named as an input file, without `-T`, whose `SECTIONS` GNU ld adds after its default script's (with a
//! warning): its statements take only what the default script leaves over, its sections follow the layout.

mod common;

use std::path::Path;

/// A plugin table (`__start_`/`__stop_` and script symbols around it), a writable table, code in a section of
/// its own, an orphan, and constructors of several priorities.
const MAIN: &str = r#"
#include <stdio.h>
struct plugin { const char *name; int (*fn)(int); };
#define PLUGIN(n, f) __attribute__((section("plugins"), used)) static const struct plugin plugin_##n = { #n, f }
extern const struct plugin plugins_begin[], plugins_end[], __start_plugins[], __stop_plugins[];
extern char rw_begin[], rw_end[], after_tables[];
__attribute__((section("rwtab"))) int rw_counter[4] = {1, 2, 3, 4};
__attribute__((section("orphan_rw"))) int orphan_value = 9;
__attribute__((section(".text.extra"), noinline)) int extra(int x) { return x * 3; }
static int twice(int x) { return 2 * x; }
PLUGIN(twice, twice);
__attribute__((constructor(102))) static void c102(void) { puts("ctor 102"); }
__attribute__((constructor(101))) static void c101(void) { puts("ctor 101"); }
__attribute__((constructor)) static void cplain(void) { puts("ctor"); }
/* An old-style constructor, which joins .init_array (its file is no crtbegin.o). */
__attribute__((used)) static void old_ctor(void) { puts("old ctor"); }
__asm__(".section .ctors,\"aw\"\n.quad old_ctor\n.previous");
static __thread int tls_value = 6;
int zeroed[64];
int run(void)
{
    int n = 0;
    for (const struct plugin *p = plugins_begin; p < plugins_end; p++, n++)
        printf("%s %d\n", p->name, p->fn(5));
    printf("count %d %d tls %d\n", n, (int)(__stop_plugins - __start_plugins), tls_value);
    rw_counter[3] += extra(2) + orphan_value + zeroed[5];
    printf("rw %d %ld after %d\n", rw_counter[3], (long)(rw_end - rw_begin), after_tables >= (char *)plugins_end);
    return 0;
}
"#;

const PLUGIN: &str = r#"
struct plugin { const char *name; int (*fn)(int); };
static int square(int x) { return x * x; }
__attribute__((section("plugins"), used)) static const struct plugin plugin_square = { "square", square };
/* Removed by --gc-sections: nothing refers to it and no KEEP names it. */
__attribute__((section("unused_tab"))) int unused_table[4] = {1};
"#;

const EXE: &str = "int run(void);\nint main(void) { return run(); }\n";

/// Tables after `.data`, with symbols and a top-level assignment between the sections.
const DATA_LDS: &str = r#"
SECTIONS
{
  plugins : { plugins_begin = .; KEEP(*(plugins)) plugins_end = .; }
  after_tables = .;
  rwtab : ALIGN(16) { rw_begin = .; *(rwtab) rw_end = .; }
  unused_tab : { *(unused_tab) }
} INSERT AFTER .data;
"#;

/// Code of its own after `.text`, in a second script.
const TEXT_LDS: &str = "SECTIONS { .text.extra_out : { *(.text.extra) } } INSERT AFTER .text;\n";

/// An allocated output section: name, address, size.
type Section = (String, u64, u64);

fn sections(dir: &Path, file: &str) -> Vec<Section> {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    out.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('[')?.split_once(']')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            // Name Type Address Off Size ES [Flg] Lk Inf Al
            let flags = if f.len() == 10 { f[6] } else { "" };
            let hex = |s: &str| u64::from_str_radix(s, 16).ok();
            (flags.contains('A')).then(|| Some((f[0].to_string(), hex(f[2])?, hex(f[4])?)))?
        })
        .collect()
}

/// `PT_LOAD`s: address, memory size, flags.
fn loads(dir: &Path, file: &str) -> (Vec<(u64, u64, String)>, bool) {
    let out = common::tool_ok("readelf", &["-lW", file], dir);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let loads = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.first() == Some(&"LOAD"))
        .map(|f| (hex(f[2]), hex(f[5]), f[6..f.len() - 1].join("")))
        .collect();
    (loads, out.contains("GNU_RELRO"))
}

fn symbol_values(dir: &Path, file: &str, names: &[&str]) -> Vec<(String, u64)> {
    let out = common::tool_ok("nm", &[file], dir);
    names
        .iter()
        .map(|n| {
            let v = out
                .lines()
                .find(|l| l.ends_with(&format!(" {n}")))
                .and_then(|l| u64::from_str_radix(l.split(' ').next()?, 16).ok())
                .unwrap_or_else(|| panic!("{file}: no symbol {n}:\n{out}"));
            (n.to_string(), v)
        })
        .collect()
}

/// What of a link is compared with GNU ld's: the order of the sections in `names` that the output has, where each
/// symbol is (its offset from the section paired with it), the flags of each named section's `PT_LOAD`, and
/// whether there is a `PT_GNU_RELRO`.
fn shape(dir: &Path, file: &str, names: &[&str], syms: &[(&str, &str)]) -> Vec<String> {
    let secs = sections(dir, file);
    let (loads, relro) = loads(dir, file);
    let mut out = Vec::new();
    for (name, addr, size) in secs.iter().filter(|s| names.contains(&s.0.as_str())) {
        let flags = loads
            .iter()
            .find(|l| *addr >= l.0 && addr + size <= l.0 + l.1)
            .map_or("none", |l| l.2.as_str());
        out.push(format!("section {name} in {flags}"));
    }
    let names: Vec<&str> = syms.iter().map(|s| s.0).collect();
    for ((sym, v), (_, sec)) in symbol_values(dir, file, &names).into_iter().zip(syms) {
        let s = (secs.iter().find(|s| s.0 == *sec)).unwrap_or_else(|| panic!("{file}: no {sec}"));
        out.push(format!("{sym} at {sec}{:+}", v.wrapping_sub(s.1) as i64));
    }
    out.push(format!("relro {relro}"));
    out
}

const NAMES: &[&str] = &[
    ".tdata",
    ".text",
    ".text.extra_out",
    ".rodata",
    ".init_array",
    ".data",
    "plugins",
    "rwtab",
    "orphan_rw",
    "unused_tab",
    ".bss",
];

const SYMS: &[(&str, &str)] = &[
    ("plugins_begin", "plugins"),
    ("plugins_end", "plugins"),
    ("__start_plugins", "plugins"),
    ("__stop_plugins", "plugins"),
    ("rw_begin", "rwtab"),
    ("rw_end", "rwtab"),
    ("after_tables", "plugins"),
];

/// `args` links `out` in `dir` with each linker's `gcc -B` directory.
fn gcc_link(dir: &Path, shim: &Path, args: &[&str]) -> common::Outcome {
    let b = format!("-B{}/", shim.display());
    let mut all = vec![b.as_str()];
    all.extend_from_slice(args);
    common::tool("gcc", &all, Some(dir))
}

#[test]
fn insert_after_matches_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("insert-kinds", &["gcc", "readelf", "nm"])
    else {
        return;
    };
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    std::fs::write(dir.join("p.c"), PLUGIN).unwrap();
    std::fs::write(dir.join("e.c"), EXE).unwrap();
    std::fs::write(dir.join("data.lds"), DATA_LDS).unwrap();
    std::fs::write(dir.join("text.lds"), TEXT_LDS).unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "m.c", "p.c", "e.c"], &dir);
    let scripts = ["-Wl,-T,data.lds", "-Wl,-T,text.lds"];
    for kind in [
        &["-no-pie"][..],
        &["-pie"],
        &["-pie", "-Wl,-z,now"],
        &["-no-pie", "-Wl,-z,noseparate-code"],
        &["-no-pie", "-Wl,--gc-sections"],
        &["-pie", "-Wl,--gc-sections"],
        &["-static"],
        &["-static-pie"],
        &["-shared"],
    ] {
        let shared = kind == ["-shared"];
        let mut shapes = Vec::new();
        let mut runs = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("{side}{}", kind.join(""));
            let mut args: Vec<&str> = kind.to_vec();
            args.extend(["m.o", "p.o", "-o", &out]);
            if !shared {
                args.push("e.o");
            }
            args.extend(scripts);
            let o = gcc_link(&dir, shim, &args);
            assert!(o.success(), "{side} {kind:?}: {}", o.log());
            let run = if shared {
                // The program links with GNU ld against the library each linker made.
                let exe = format!("{out}-main");
                let lib = format!("./{out}");
                common::tool_ok("gcc", &["e.o", &lib, "-o", &exe], &dir);
                common::tool_ok(&format!("./{exe}"), &[], &dir)
            } else {
                common::tool_ok(&format!("./{out}"), &[], &dir)
            };
            runs.push(run);
            shapes.push(shape(&dir, &out, NAMES, SYMS));
            // The default layout's sorted arrays that have no inputs are not in the output.
            let secs = sections(&dir, &out);
            for empty in [".preinit_array", ".ctors", ".dtors"] {
                assert!(
                    !secs.iter().any(|s| s.0 == empty),
                    "{side} {kind:?}: {empty}"
                );
            }
        }
        assert!(runs[0].contains("square 25"), "{kind:?}: {}", runs[0]);
        assert_eq!(runs[1], runs[0], "{kind:?}: program output");
        assert_eq!(
            shapes[1], shapes[0],
            "{kind:?}: rivet (right) against GNU ld"
        );
        let gc = kind.contains(&"-Wl,--gc-sections");
        let has_unused = shapes[0]
            .iter()
            .any(|l| l.starts_with("section unused_tab"));
        assert_eq!(has_unused, !gc, "{kind:?}: {:?}", shapes[0]);
    }
}

/// The same tables in a script named as an input file (no `-T`): GNU ld keeps its default layout and adds the
/// script's sections after it, two pages on, in a load of their own ("did you forget -T?"); the script's
/// `.text.extra` statement gets nothing, as the default script's `.text` takes `.text.*` first.
const APPENDED_LDS: &str = r#"
SECTIONS
{
  plugins : { plugins_begin = .; KEEP(*(plugins)) plugins_end = .; }
  after_tables = .;
  rwtab : ALIGN(16) { rw_begin = .; *(rwtab) rw_end = .; }
  .text.extra_out : { extra_begin = .; *(.text.extra) }
  unused_tab : { *(unused_tab) }
}
"#;

#[test]
fn input_file_sections_follow_the_default_layout_as_in_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("insert-appended", &["gcc", "readelf", "nm"])
    else {
        return;
    };
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    std::fs::write(dir.join("p.c"), PLUGIN).unwrap();
    std::fs::write(dir.join("e.c"), EXE).unwrap();
    std::fs::write(dir.join("tables.lds"), APPENDED_LDS).unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "m.c", "p.c", "e.c"], &dir);
    let syms = [
        ("plugins_begin", "plugins"),
        ("plugins_end", "plugins"),
        ("__start_plugins", "plugins"),
        ("rw_begin", "rwtab"),
        ("rw_end", "rwtab"),
        ("after_tables", "plugins"),
        ("extra", ".text"),
    ];
    for kind in [
        &["-no-pie"][..],
        &["-pie"],
        &["-pie", "-Wl,-z,norelro"],
        &["-no-pie", "-Wl,--gc-sections"],
        &["-static"],
    ] {
        let mut shapes = Vec::new();
        let mut runs = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("{side}{}", kind.join(""));
            let mut args: Vec<&str> = kind.to_vec();
            args.extend(["m.o", "p.o", "e.o", "tables.lds", "-o", &out]);
            let o = gcc_link(&dir, shim, &args);
            assert!(o.success(), "{side} {kind:?}: {}", o.log());
            assert!(
                o.stderr_str()
                    .contains("tables.lds contains output sections; did you forget -T?"),
                "{side} {kind:?}: {}",
                o.stderr_str()
            );
            runs.push(common::tool_ok(&format!("./{out}"), &[], &dir));
            let secs = sections(&dir, &out);
            let mut shape = shape(&dir, &out, NAMES, &syms);
            // The layout's sections, then the script's, which start two pages after `.bss` ends (its
            // address's offset in the page kept) and do not make it take file space.
            let order: Vec<&str> = secs.iter().map(|s| s.0.as_str()).collect();
            let at = |n: &str| order.iter().position(|&s| s == n);
            let bss = secs[at(".bss").unwrap()].clone();
            let plugins = secs[at("plugins").unwrap()].clone();
            assert!(
                at(".text.extra_out").is_none(),
                "{side} {kind:?}: {order:?}"
            );
            shape.push(format!(
                "plugins - .bss end: {:#x}",
                plugins.1 - (bss.1 + bss.2)
            ));
            shape.push(format!("plugins last: {}", at("plugins") > at(".bss")));
            shapes.push(shape);
        }
        assert!(runs[0].contains("square 25"), "{kind:?}: {}", runs[0]);
        assert_eq!(runs[1], runs[0], "{kind:?}: program output");
        assert_eq!(
            shapes[1], shapes[0],
            "{kind:?}: rivet (right) against GNU ld"
        );
    }
    // Neither linker lets such a script replace a -T script's layout: with -T it follows the -T script's.
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let o = gcc_link(
            &dir,
            shim,
            &["-Wl,-T,tables.lds", "m.o", "p.o", "e.o", "-o", "t"],
        );
        assert!(
            !o.stderr_str().contains("did you forget"),
            "{side}: {}",
            o.log()
        );
    }
}

/// Several `INSERT`s after one section: each goes right after it, before those read earlier (GNU ld's order);
/// one script with two `SECTIONS ... INSERT` pairs; `INSERT BEFORE`.
#[test]
fn several_inserts_match_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("insert-several", &["gcc", "readelf", "nm"])
    else {
        return;
    };
    let src = r#"
#include <stdio.h>
__attribute__((section("tab_a"), used)) static const int a = 1;
__attribute__((section("tab_b"), used)) static const int b = 2;
__attribute__((section("tab_c"), used)) static int c = 3;
__attribute__((section("tab_d"), used)) static int d = 4;
extern const int __start_tab_a[], __start_tab_b[];
extern int __start_tab_c[], __start_tab_d[];
int main(void) { printf("%d %d %d %d\n", *__start_tab_a, *__start_tab_b, *__start_tab_c, *__start_tab_d); return 0; }
"#;
    std::fs::write(dir.join("t.c"), src).unwrap();
    common::tool_ok("gcc", &["-c", "t.c"], &dir);
    std::fs::write(
        dir.join("a.lds"),
        "SECTIONS { tab_a : { KEEP(*(tab_a)) } } INSERT AFTER .data;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.lds"),
        "SECTIONS { tab_b : { KEEP(*(tab_b)) } } INSERT AFTER .data;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("cd.lds"),
        "SECTIONS { tab_c : { KEEP(*(tab_c)) } c_to_d = ADDR(tab_c) - ADDR(tab_d); } INSERT BEFORE .bss;\n\
         SECTIONS { tab_d : { KEEP(*(tab_d)) } } INSERT BEFORE .data;\n",
    )
    .unwrap();
    let names = [
        ".data", "tab_a", "tab_b", "tab_c", "tab_d", ".bss", ".rodata",
    ];
    for kind in ["-no-pie", "-pie"] {
        let mut shapes = Vec::new();
        let mut runs = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("{side}{kind}");
            let args = [
                kind,
                "t.o",
                "-o",
                &out,
                "-Wl,-T,a.lds",
                "-Wl,-T,b.lds",
                "-Wl,-T,cd.lds",
            ];
            let o = gcc_link(&dir, shim, &args);
            assert!(o.success(), "{side} {kind}: {}", o.log());
            runs.push(common::tool_ok(&format!("./{out}"), &[], &dir));
            let order: Vec<String> = sections(&dir, &out)
                .into_iter()
                .map(|s| s.0)
                .filter(|n| names.contains(&n.as_str()))
                .collect();
            let mut shape = shape(&dir, &out, &names, &[("__start_tab_c", "tab_c")]);
            shape.insert(0, order.join(" "));
            // The assignment's value: tab_d is before .data, tab_c before .bss (after .data).
            let v = symbol_values(&dir, &out, &["c_to_d", "__start_tab_c", "__start_tab_d"]);
            assert_eq!(v[0].1, v[1].1 - v[2].1, "{side} {kind}");
            shapes.push(shape);
        }
        assert_eq!(runs[0], "1 2 3 4\n");
        assert_eq!(runs[1], runs[0], "{kind}");
        assert_eq!(shapes[1], shapes[0], "{kind}: rivet (right) against GNU ld");
    }
}

/// `INSERT` naming a section the default layout does not have fails in both (GNU ld: "not found for insert"),
/// rivet's error at the `INSERT`; so does `INSERT` into a `-T` script that replaces the layout. rivet refuses an
/// inserted section the default layout already has, `-Tdata` and `--orphan-handling=warn` with `INSERT`, which GNU
/// ld links.
#[test]
fn insert_errors_match_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("insert-errors", &["gcc"]) else {
        return;
    };
    std::fs::write(
        dir.join("m.c"),
        "int x = 1;\nint main(void) { return 0; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "m.c"], &dir);
    std::fs::write(
        dir.join("full.lds"),
        "SECTIONS { .text : { *(.text*) } .data : { *(.data*) } .bss : { *(.bss*) } }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tab.lds"),
        "SECTIONS { tab : { *(tab) } } INSERT AFTER .data;\n",
    )
    .unwrap();
    for (args, want) in [
        (
            &["-Wl,-T,bad.lds"][..],
            "bad.lds:2:3: INSERT AFTER .nowhere: rivet's default layout has no output section .nowhere",
        ),
        (
            &["-Wl,-T,full.lds", "-Wl,-T,tab.lds"],
            "tab.lds:1:31: INSERT with full.lds, a script whose SECTIONS replace the default layout, is not supported",
        ),
        (
            &["-Wl,-T,twice.lds"],
            "twice.lds:1:12: output section .data is described in rivet's default layout too",
        ),
        (
            &["-Wl,-T,tab.lds", "-Wl,-Tdata,0x800000"],
            "tab.lds:1:31: INSERT with --section-start, -Ttext, -Tdata or -Tbss (.data) is not supported yet",
        ),
        (
            &["-Wl,-T,tab.lds", "-Wl,--orphan-handling=warn"],
            "tab.lds:1:31: INSERT with --orphan-handling other than place is not supported yet",
        ),
        // Named as an input file rather than with -T: GNU ld fails it (".data not found for insert").
        (
            &["tab.lds"],
            "tab.lds:1:31: INSERT AFTER .data in a script named as an input file: GNU ld does not find the section",
        ),
    ] {
        std::fs::write(
            dir.join("bad.lds"),
            "SECTIONS { tab : { *(tab) } }\n  INSERT AFTER .nowhere;\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("twice.lds"),
            "SECTIONS { .data : { *(.data) } } INSERT AFTER .text;\n",
        )
        .unwrap();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let mut all = vec!["m.o", "-o", "out"];
            all.extend_from_slice(args);
            let o = gcc_link(&dir, shim, &all);
            // GNU ld links these (with a second .data; with .data at the address); rivet refuses them.
            if side == "ref"
                && (args == ["-Wl,-T,twice.lds"]
                    || args
                        .iter()
                        .any(|a| a.starts_with("-Wl,-Tdata") || a.contains("orphan")))
            {
                continue;
            }
            assert!(!o.success(), "{side} {args:?}: linked");
            if side == "test" {
                assert!(o.stderr_str().contains(want), "{}", o.stderr_str());
                assert!(!o.stderr_str().contains("panicked"));
            }
        }
    }
}
