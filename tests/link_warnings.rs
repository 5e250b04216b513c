//! GNU ld's link warnings (`.gnu.warning.SYMBOL` sections, as glibc has for `gets` and for `getpwnam` in static
//! programs): printed once per symbol at its first reference, from objects and shared objects, in final and
//! partial links; fatal under `--fatal-warnings`; the sections not copied into a final link, kept by `-r`. Each
//! case is checked against GNU ld.

mod common;

use std::path::Path;

/// The object defining `old_api` with a warning, and two that call it (three calls).
fn inputs(dir: &Path) {
    let sources = [
        (
            "w.c",
            "int old_api(void) { return 1; }\n\
             static const char w[] __attribute__((used, section(\".gnu.warning.old_api\"))) =\n\
             \"old_api is deprecated\";\n",
        ),
        (
            "m.c",
            "int old_api(void);\nint main(void) { return old_api() + old_api() - 2; }\n\
             int other(void) { return old_api(); }\n",
        ),
        (
            "n.c",
            "int old_api(void);\nint third(void) { return old_api(); }\n",
        ),
    ];
    for (name, text) in sources {
        std::fs::write(dir.join(name), text).unwrap();
        common::tool_ok("gcc", &["-O0", "-fPIC", "-c", name], dir);
    }
    common::tool_ok("gcc", &["-shared", "w.o", "-o", "libw.so"], dir);
}

/// The sections of `out` named `.gnu.warning.*`.
fn warning_sections(dir: &Path, out: &str) -> usize {
    let s = common::tool_ok("readelf", &["-SW", out], dir);
    s.lines().filter(|l| l.contains(".gnu.warning.")).count()
}

#[test]
fn link_warnings_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("link-warnings", &["gcc", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    inputs(&dir);
    for (objects, name) in [
        (&["m.o", "n.o", "w.o"][..], "static"),
        (&["n.o", "m.o", "w.o"], "reordered"),
        (&["m.o", "n.o", "-L.", "-lw"], "shared"),
    ] {
        let mut outs = Vec::new();
        for (b, exe) in [(&bfd, "gnu"), (&shim, "test")] {
            let b = format!("-B{}/", b.display());
            let o = common::tool(
                "gcc",
                &[&[b.as_str(), "-o", exe], objects].concat(),
                Some(&dir),
            );
            assert!(o.success(), "{}", o.log());
            outs.push(o.stderr_str());
        }
        let (gnu, test) = (&outs[0], &outs[1]);
        assert_eq!(
            gnu.matches("old_api is deprecated").count(),
            1,
            "{name}: {gnu}"
        );
        assert_eq!(
            test.matches("old_api is deprecated").count(),
            1,
            "{name}: {test}"
        );
        // The same first reference: GNU ld's `m.c:(.text+0xa)`, rivet's `m.o:(function main: .text+0xa)`.
        let first = if name == "reordered" { "n.o" } else { "m.o" };
        let at = gnu
            .split("(.text+")
            .nth(1)
            .unwrap()
            .split(')')
            .next()
            .unwrap();
        assert!(
            gnu.contains(&format!("{first}: in function")),
            "{name}: {gnu}"
        );
        assert!(
            test.contains(&format!("{first}:(function ")),
            "{name}: {test}"
        );
        assert!(test.contains(&format!(".text+{at})")), "{name}: {test}");
        assert_eq!(
            warning_sections(&dir, "test"),
            warning_sections(&dir, "gnu"),
            "{name}"
        );
    }
    // Fatal where warnings are; a partial link warns too and keeps the section for the final link.
    let fatal = [
        "--fatal-warnings",
        "-e",
        "main",
        "m.o",
        "w.o",
        "-o",
        "fatal",
    ];
    assert!(!common::tool("ld.bfd", &fatal, Some(&dir)).success());
    assert!(!common::tool(linker.to_str().unwrap(), &fatal, Some(&dir)).success());
    for (ld, out) in [("ld.bfd", "gnu.o"), (linker.to_str().unwrap(), "test.o")] {
        let o = common::tool(ld, &["-r", "m.o", "w.o", "-o", out], Some(&dir));
        assert!(o.success(), "{}", o.log());
        assert!(
            o.stderr_str().contains("old_api is deprecated"),
            "{}",
            o.log()
        );
    }
    assert_eq!(
        warning_sections(&dir, "test.o"),
        warning_sections(&dir, "gnu.o")
    );
}
