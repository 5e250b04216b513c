//! `gcc -g3`'s macro tables: each header's `.debug_macro` part is in a COMDAT group of its own (`wm4.*`), and
//! each unit's part imports them by offset. Only the first copy of a group is kept, so the imports of the other
//! units refer to a discarded section. GNU ld points them at the kept copy (its rule for debug sections that refer
//! to a discarded group member); a tombstone there makes the import read the macros at offset 0, and gdb's
//! `info macro` then names the wrong header. Three C files sharing a header, linked by the linker under test and
//! by GNU ld: the same macro tables (`readelf --debug-dump=macro`) and the same gdb answers, for a final link and
//! for a partial link (`-r`) that GNU ld then links.

mod common;

use std::path::Path;

const HEADER: &str = "#define SHARED_VALUE 42\n#define SHARED_FN(x) ((x) + 1)\n";

fn sources(dir: &Path) -> Vec<String> {
    std::fs::write(dir.join("shared.h"), HEADER).unwrap();
    let mut objs = Vec::new();
    for (name, body) in [
        (
            "a",
            "#include \"shared.h\"\n#define ONLY_A 1\nint f(void);\nint g(void);\n\
             int main(void) { return f() + g() + SHARED_VALUE - 42 - 2; }\n",
        ),
        (
            "b",
            "#include \"shared.h\"\n#define ONLY_B 2\nint f(void) { return SHARED_FN(0); }\n",
        ),
        (
            "c",
            "#include <stdio.h>\n#include \"shared.h\"\n#define ONLY_C 3\n\
             int g(void) { return SHARED_FN(SHARED_VALUE) - 42; }\n",
        ),
    ] {
        std::fs::write(dir.join(format!("{name}.c")), body).unwrap();
        let obj = format!("{name}.o");
        common::tool_ok(
            "gcc",
            &["-c", "-g3", "-O0", &format!("{name}.c"), "-o", &obj],
            dir,
        );
        objs.push(obj);
    }
    objs
}

/// The macro tables as `readelf` decodes them, and gdb's answer for the header's macro in `f` and `g` (the
/// units whose imports refer to discarded copies).
fn macros(dir: &Path, exe: &str) -> (String, String) {
    let dump = common::tool_ok("readelf", &["--debug-dump=macro", exe], dir);
    let gdb = if common::have_tool("gdb") {
        let script = "info macro SHARED_VALUE\nlist f\ninfo macro SHARED_VALUE\ninfo macro ONLY_B\n\
                      list g\ninfo macro SHARED_FN\ninfo macro ONLY_C\n";
        std::fs::write(dir.join("macros.gdb"), script).unwrap();
        let out = common::tool_ok("gdb", &["-batch", "-nx", "-x", "macros.gdb", exe], dir);
        out.lines()
            .filter(|l| {
                l.starts_with("Defined at") || l.contains("included at") || l.starts_with("#define")
            })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        String::new()
    };
    (dump, gdb)
}

#[test]
fn imports_of_discarded_macro_groups_read_the_kept_copy_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("debug-macro", &["gcc", "readelf"]) else {
        return;
    };
    let objs = sources(&dir);
    let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
    let group_sections = common::tool_ok("readelf", &["-SW", "b.o"], &dir)
        .lines()
        .filter(|l| l.contains(".debug_macro") && l.contains(" G "))
        .count();
    assert!(group_sections > 0, "gcc -g3 made no .debug_macro groups");
    let mut seen = Vec::new();
    for (side, shim_dir) in [("rivet", &shim), ("bfd", &bfd)] {
        let exe = format!("final.{side}");
        let b = format!("-B{}/", shim_dir.display());
        let args = [&[b.as_str(), "-o", &exe][..], &objs].concat();
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{exe}: {}", o.log());
        seen.push(macros(&dir, &exe));
    }
    assert!(seen[1].0.contains("DW_MACRO_import"), "{}", seen[1].0);
    same("final link", &seen);

    // A partial link of the three, linked by GNU ld into the program.
    let (linker, _) = common::linker_under_test();
    let mut seen = Vec::new();
    for (side, ld) in [("rivet", linker.to_str().unwrap()), ("bfd", "ld.bfd")] {
        let part = format!("part.{side}.o");
        let args = [&["-r", "-o", &part][..], &objs].concat();
        let o = common::tool(ld, &args, Some(&dir));
        assert!(o.success(), "{part}: {}", o.log());
        let exe = format!("partial.{side}");
        let b = format!("-B{}/", bfd.display());
        let o = common::tool("gcc", &[&b, "-o", &exe, &part], Some(&dir));
        assert!(o.success(), "{exe}: {}", o.log());
        seen.push(macros(&dir, &exe));
    }
    same("-r", &seen);
}

/// Asserts that the linker under test's tables and gdb answers (`seen[0]`) are GNU ld's (`seen[1]`), naming the
/// first line that differs.
fn same(what: &str, seen: &[(String, String)]) {
    for (part, (ours, gnu)) in [
        ("macro tables", (&seen[0].0, &seen[1].0)),
        ("gdb", (&seen[0].1, &seen[1].1)),
    ] {
        let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), gnu.lines().collect());
        if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
            panic!(
                "{what}: {part} differ from GNU ld's at line {}: {:?} against GNU ld's {:?}",
                i + 1,
                a.get(i),
                b.get(i)
            );
        }
    }
}
