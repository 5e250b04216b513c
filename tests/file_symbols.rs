//! `STT_FILE` symbols in `.symtab`, as GNU ld writes them: each object's own file symbols among its locals, one
//! made from the object's name (an archive member's own name) for an object that has locals but none, none for an
//! object none of whose sections is in the output (`--gc-sections` took them all), none at all under `-x`, and a
//! nameless one before the symbols the linker made local. Post-link tools need them: BOLT refuses an input with
//! split functions (`main.cold`) that has no file symbols, and tools that name a static function by its file
//! (`perf`, live patching) read them. Compared with GNU ld on gcc and clang-19 objects in static, `-pie`,
//! `-shared` and `--gc-sections` links.

mod common;

use common::Compiler;
use std::path::Path;

/// Objects of every kind: C with a static function and variable, with debug info, one that only declares, a
/// function `--gc-sections` drops, and assembly with a local label but no file symbol (as `as` writes it).
const SOURCES: &[(&str, &str)] = &[
    (
        "main.c",
        "static int counter;\nstatic int __attribute__((noinline)) bump(int x) { return counter += x; }\n\
         int keep(int);\nint from_asm(void);\nint from_member(void);\n\
         void _start(void) { bump(keep(1) + from_asm() + from_member()); for (;;); }\n",
    ),
    (
        "keep.c",
        "static int __attribute__((noinline)) twice(int x) { return 2 * x; }\n\
         static const char tag[] = \"keep\";\nint keep(int x) { return twice(x) + tag[0]; }\n",
    ),
    (
        "debug.c",
        "int unused_with_debug(int x) { return x + 1; }\n",
    ),
    ("dropped.c", "int dropped(void) { return 5; }\n"),
    ("empty.c", "extern int nothing;\n"),
];

const ASM: &str = ".text\n.globl from_asm\nfrom_asm:\n  mov $3, %eax\n  ret\nasm_local:\n  ret\n";
const MEMBER: &str =
    ".text\n.globl from_member\nfrom_member:\n  xor %eax, %eax\n  ret\nmember_local:\n  ret\n";

/// `.symtab`'s local entries of `file` after the null one, as "TYPE name" (the file symbols and the others named).
fn locals(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-sW", file], dir);
    let table = out.split("Symbol table '.symtab'").nth(1).unwrap_or("");
    table
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let entry = f.first()?.trim_end_matches(':').parse::<u32>().ok()?;
            (entry > 0 && f.len() >= 7 && f[4] == "LOCAL")
                .then(|| format!("{} {}", f[3], f.get(7).copied().unwrap_or("")))
        })
        .collect()
}

/// The entries before the nameless file symbol: the inputs' locals. The ones after it are the linker's own,
/// whose set differs (GNU ld defines `_DYNAMIC` and `__GNU_EH_FRAME_HDR` whether used or not).
fn input_locals(v: &[String]) -> &[String] {
    let end = v.iter().position(|s| s == "FILE ").unwrap_or(v.len());
    &v[..end]
}

/// The inputs' locals as groups, each a file symbol and the locals after it (those before the first file symbol
/// a group of their own), sorted: which locals each file symbol stands for. GNU ld lists a file when it first
/// writes one of its sections (a `.text.startup` before another file's `.text`, debug-only files last under
/// `--gc-sections`), rivet in load order; tools read the grouping, not the order.
fn file_groups(v: &[String]) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<String>> = vec![Vec::new()];
    for s in input_locals(v) {
        if s.starts_with("FILE ") {
            groups.push(Vec::new());
        }
        groups.last_mut().unwrap().push(s.clone());
    }
    groups.retain(|g| !g.is_empty());
    groups.sort();
    groups
}

#[test]
fn file_symbols_match_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("file-symbols", &["gcc", "readelf", "ar"])
    else {
        return;
    };
    std::fs::write(dir.join("asm.s"), ASM).unwrap();
    std::fs::write(dir.join("member.s"), MEMBER).unwrap();
    for (name, text) in SOURCES {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok("gcc", &["-c", "-fpic", "asm.s", "member.s"], &dir);
    common::tool_ok("ar", &["rc", "libm.a", "member.o"], &dir);
    for cc in common::compilers() {
        let tag = cc.name();
        let cc_bin = match cc {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang-19",
        };
        for (name, _) in SOURCES {
            let stem = name.trim_end_matches(".c");
            let obj = format!("{stem}-{tag}.o");
            let mut args = vec![
                "-c",
                "-O2",
                "-fpic",
                "-ffunction-sections",
                name,
                "-o",
                &obj,
            ];
            if *name == "debug.c" {
                args.push("-g");
            }
            common::tool_ok(cc_bin, &args, &dir);
        }
        let objs: Vec<String> = SOURCES
            .iter()
            .map(|(n, _)| format!("{}-{tag}.o", n.trim_end_matches(".c")))
            .collect();
        let cases: &[(&str, &[&str])] = &[
            ("static", &["-static"]),
            ("gc", &["-static", "-Wl,--gc-sections"]),
            ("x", &["-static", "-Wl,-x"]),
            ("S", &["-static", "-Wl,-S"]),
            ("pie", &["-pie"]),
            ("shared", &["-shared"]),
        ];
        for (case, flags) in cases {
            let mut outs = Vec::new();
            for (side, dir_b) in [("bfd", &bfd), ("rivet", &shim)] {
                let out = format!("{case}-{tag}.{side}");
                let b = format!("-B{}/", dir_b.display());
                let mut args = vec![&b[..], "-nostdlib", "-o", &out];
                args.extend_from_slice(flags);
                args.extend(objs.iter().map(|s| &s[..]));
                args.extend(["asm.o", "libm.a"]);
                let o = common::tool("gcc", &args, Some(&dir));
                assert!(o.success(), "{case} {tag} {side}: {}", o.log());
                outs.push(locals(&dir, &out));
            }
            let (want, got) = (&outs[0], &outs[1]);
            assert_eq!(
                file_groups(got),
                file_groups(want),
                "{case} {tag}: the inputs' locals (file symbols included) differ from GNU ld's"
            );
            // The nameless file symbol comes before the linker's locals, and only if there are some.
            let tail = &got[input_locals(got).len()..];
            assert!(
                tail.is_empty() || (tail[0] == "FILE " && tail.len() > 1),
                "{case} {tag}: {got:?}"
            );
            assert!(
                !want.iter().any(|s| s.starts_with("FILE "))
                    || got.iter().any(|s| s.starts_with("FILE ")),
                "{case} {tag}: no file symbols"
            );
        }
    }
}
