//! Issue 31's audit against GNU ld, the cases that differed: text relocation warnings (`-z notext`/`-z textoff`
//! silent, `--warn-textrel` accepted), the output kind given by the last of `-shared`, `-pie` and `-no-pie` (so
//! `-shared -pie --dynamic-linker` makes a runnable shared object with `PT_INTERP`), and copy relocations of
//! read-only data placed in RELRO; `-s` dropping what `-S` drops.

mod common;

use std::process::Command;

/// A pointer in `.rodata` to a symbol another object defines: a dynamic relocation in a read-only section.
const TEXTREL: &str = "\t.text\n\t.globl get\nget:\tmovq tbl(%rip), %rax\n\tmovl (%rax), %eax\n\tret\n\
    \t.section .rodata\ntbl:\t.quad ext\n\t.section .note.GNU-stack,\"\",@progbits\n";

#[test]
fn text_relocation_warnings_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("drop-in-textrel", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("tr.s"), TEXTREL).unwrap();
    std::fs::write(dir.join("ext.c"), "int ext = 42;\n").unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "tr.s", "ext.c"], &dir);
    for opt in [
        "",
        "-Wl,-z,notext",
        "-Wl,-z,textoff",
        "-Wl,--warn-textrel",
        "-Wl,-z,notext,--warn-textrel",
    ] {
        let mut views = Vec::new();
        for (side, b) in [("ref", &bfd), ("test", &shim)] {
            let so = format!("lib{side}.so");
            let b = format!("-B{}/", b.display());
            let mut args = vec![b.as_str(), "-shared", "-o", &so, "tr.o", "ext.o"];
            if !opt.is_empty() {
                args.push(opt);
            }
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{opt} ({side}): {}", o.log());
            let warnings = o.stderr_str().matches("warning").count();
            let dynamic = common::tool_ok("readelf", &["-dW", &so], &dir);
            views.push((warnings, dynamic.contains("TEXTREL")));
        }
        assert_eq!(views[1], views[0], "{opt}: differs from GNU ld");
    }
}

#[test]
fn last_output_kind_option_wins() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("drop-in-kind", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(
        dir.join("p.c"),
        "#include <stdio.h>\nint main(void) { puts(\"runs\"); return 0; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-fPIE", "-c", "p.c"], &dir);
    for opts in [
        &[
            "-shared",
            "-pie",
            "--dynamic-linker=/lib64/ld-linux-x86-64.so.2",
        ][..],
        &["-pie", "-shared"],
        &["-shared", "-no-pie"],
    ] {
        let mut views = Vec::new();
        for (side, b) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("k-{side}");
            let b = format!("-B{}/", b.display());
            // The driver passes -shared and -pie to the linker in its own order: give them with -Wl.
            let mut args = vec![b.as_str(), "-o", &out, "p.o"];
            let wl: Vec<String> = opts.iter().map(|o| format!("-Wl,{o}")).collect();
            args.extend(wl.iter().map(|s| s.as_str()));
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{opts:?} ({side}): {}", o.log());
            let header = common::tool_ok("readelf", &["-hlW", &out], &dir);
            let ty = header
                .lines()
                .find(|l| l.trim_start().starts_with("Type:"))
                .unwrap_or("")
                .to_string();
            let dynamic = common::tool_ok("readelf", &["-dW", &out], &dir);
            let run = header
                .contains("INTERP")
                .then(|| Command::new(dir.join(&out)).output().unwrap().stdout);
            views.push((ty, header.contains("INTERP"), dynamic.contains("PIE"), run));
        }
        assert_eq!(views[1], views[0], "{opts:?}: differs from GNU ld");
    }
}

/// GNU ld copies a shared library's read-only data into `.data.rel.ro` (RELRO, read-only after start-up), and
/// writable data into `.bss`; rivet put every copy in `.bss`, where the program could write it. Read-only counts
/// the library's RELRO data too (a constant pointer, C++'s typeinfo), writable in its section header.
#[test]
fn read_only_copies_in_relro() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("drop-in-copy-ro", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(
        dir.join("cv.c"),
        "const int cval[4] = {1, 2, 3, 4};\nint dval = 5;\nint *const pval = &dval;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("m.c"),
        "#include <stdio.h>\nextern const int cval[4];\nextern int dval;\nextern int *const pval;\n\
         int main(void) { printf(\"%d %d %d\\n\", cval[2], dval, *pval); return 0; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-fPIC", "-shared", "-o", "libcv.so", "cv.c"], &dir);
    common::tool_ok("gcc", &["-fno-pie", "-c", "m.c"], &dir);
    let mut views = Vec::new();
    for (side, b) in [("ref", &bfd), ("test", &shim)] {
        let exe = format!("cv-{side}");
        let b = format!("-B{}/", b.display());
        common::tool_ok(
            "gcc",
            &[&b, "-no-pie", "-o", &exe, "m.o", "./libcv.so"],
            &dir,
        );
        let run = Command::new(dir.join(&exe))
            .current_dir(&dir)
            .output()
            .unwrap();
        // The section holding each copy.
        let syms = common::tool_ok("readelf", &["-sW", &exe], &dir);
        let secs = common::tool_ok("readelf", &["-SW", &exe], &dir);
        let section_of = |name: &str| -> String {
            let addr = syms
                .lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    (f.len() >= 8 && f[7] == name).then(|| u64::from_str_radix(f[1], 16).ok())?
                })
                .find(|&a| a != 0)
                .unwrap_or(0);
            secs.lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split(']').nth(1)?.split_whitespace().collect();
                    let start = u64::from_str_radix(f.get(2)?, 16).ok()?;
                    let size = u64::from_str_radix(f.get(4)?, 16).ok()?;
                    (start <= addr && addr < start + size).then(|| f[0].to_string())
                })
                .next()
                .unwrap_or_default()
        };
        views.push((
            run.stdout,
            section_of("cval"),
            section_of("dval"),
            section_of("pval"),
        ));
    }
    assert_eq!(views[1], views[0]);
}

/// Old-style debug sections beside DWARF: GNU ld counts `.line`, `.gnu.linkonce.wi.*` and `.gdb_index` as debug
/// information too.
const OLD_DEBUG: &str = "\t.section .line,\"\",@progbits\n\t.long 2\n\
    \t.section .gnu.linkonce.wi.x,\"\",@progbits\n\t.long 3\n\
    \t.section .gdb_index,\"\",@progbits\n\t.long 4\n\
    \t.section .keep_me,\"\",@progbits\n\t.long 5\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

/// `-s` (`--strip-all`) leaves out the debug sections as `-S` does, with the default layout and under a script.
#[test]
fn strip_all_also_strips_debug_sections() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("drop-in-strip", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(
        dir.join("m.c"),
        "int x = 1;\nint main(void) { return x; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("old.s"), OLD_DEBUG).unwrap();
    std::fs::write(
        dir.join("s.ld"),
        "SECTIONS { .text : { *(.text*) } .data : { *(.data*) } }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-g", "-c", "m.c", "old.s"], &dir);
    for opts in [
        &["-s"][..],
        &["-S"],
        &["-s", "-T", "s.ld"],
        &["--strip-all", "-r"],
    ] {
        let mut views = Vec::new();
        for (side, b) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("st-{side}");
            let ld = b.join("ld");
            let mut args: Vec<&str> = opts.to_vec();
            args.extend(["-e", "main", "-o", &out, "m.o", "old.o"]);
            let o = common::tool(ld.to_str().unwrap(), &args, Some(&dir));
            assert!(o.success(), "{opts:?} ({side}): {}", o.log());
            let secs = common::tool_ok("readelf", &["-SW", &out], &dir);
            let names: Vec<String> = secs
                .lines()
                .filter_map(|l| l.split(']').nth(1)?.split_whitespace().next())
                .filter(|n| {
                    n.starts_with(".debug")
                        || [".line", ".gnu.linkonce.wi.x", ".gdb_index", ".keep_me"].contains(n)
                })
                .map(str::to_string)
                .collect();
            views.push(names);
        }
        assert_eq!(
            views[1], views[0],
            "{opts:?}: the unallocated sections differ from GNU ld's"
        );
    }
}

/// The pointer arrays' headers give the pointer's size as their entry size, as GNU ld writes them.
#[test]
fn pointer_arrays_have_an_entry_size() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("drop-in-arrays", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(
        dir.join("c.c"),
        "#include <stdio.h>\n__attribute__((constructor)) static void c(void) { puts(\"c\"); }\n\
         __attribute__((destructor)) static void d(void) { puts(\"d\"); }\nint main(void) { return 0; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "c.c"], &dir);
    let mut views = Vec::new();
    for (side, b) in [("ref", &bfd), ("test", &shim)] {
        let exe = format!("arr-{side}");
        let b = format!("-B{}/", b.display());
        common::tool_ok("gcc", &[&b, "-o", &exe, "c.o"], &dir);
        let secs = common::tool_ok("readelf", &["-SW", &exe], &dir);
        let arrays: Vec<String> = (secs.lines())
            .filter(|l| l.contains("_ARRAY"))
            .map(|l| {
                let f: Vec<&str> = l.split(']').nth(1).unwrap().split_whitespace().collect();
                format!("{} {}", f[0], f[5])
            })
            .collect();
        views.push(arrays);
    }
    assert_eq!(views[1], views[0]);
}

/// `-z unique-symbol`: every input's local symbol (not file or section symbols) gets `.N`, N counting the locals
/// of that name before it, in final and partial links, as GNU ld names them; `-z nounique-symbol` undoes it.
#[test]
fn unique_symbol_names_locals_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("drop-in-unique-symbol", &["gcc", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let sources = [
        (
            "u1.c",
            "static int helper(int x) { return x + 1; }\nint a(int x) { return helper(x); }\n\
             static int counter;\nint *ca(void) { return &counter; }\n",
        ),
        (
            "u2.c",
            "static int helper(int x) { return x + 2; }\nint a(int);\n\
             int b(int x) { static int counter; counter++; return helper(x) + a(x) + counter; }\n",
        ),
    ];
    for (name, text) in sources {
        std::fs::write(dir.join(name), text).unwrap();
        common::tool_ok("gcc", &["-O0", "-c", name], &dir);
    }
    let locals = |out: &str| -> Vec<String> {
        let s = common::tool_ok("readelf", &["-sW", out], &dir);
        (s.lines())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() == 8 && f[4] == "LOCAL" && f[3] != "SECTION")
            .map(|f| format!("{} {}", f[3], f[7]))
            .collect()
    };
    for args in [
        &["-e", "b", "-z", "unique-symbol"][..],
        &["-r", "-z", "unique-symbol"],
        &["-e", "b", "-z", "unique-symbol", "-z", "nounique-symbol"],
    ] {
        let run = |ld: &str, out: &str| {
            let o = common::tool(
                ld,
                &[args, &["u1.o", "u2.o", "-o", out]].concat(),
                Some(&dir),
            );
            assert!(o.success(), "{}", o.log());
            locals(out)
        };
        let gnu = run("ld.bfd", "gnu.out");
        assert!(
            args.len() == 6 || gnu.iter().any(|l| l.ends_with("helper.1")),
            "{gnu:?}"
        );
        assert_eq!(run(linker.to_str().unwrap(), "test.out"), gnu, "{args:?}");
    }
}
