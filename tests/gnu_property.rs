//! `.note.gnu.property` (issue 31): the program properties of the output are merged from the inputs' as GNU ld
//! merges them (CET's IBT and SHSTK marks kept only when every object has them, ISA levels needed OR-ed), `-z ibt`,
//! `-z shstk` and `-z x86-64-v2|v3|v4` add theirs, `-z cet-report=` reports objects without the marks, and
//! `PT_GNU_PROPERTY` points at the note. An output marked IBT gets PLT entries that start with `endbr64`, and the
//! programs run, lazily bound or not.

mod common;

use std::path::Path;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void) {
    int v[] = {3, 1, 2};
    qsort(v, 3, sizeof v[0], cmp);
    char buf[32];
    snprintf(buf, sizeof buf, "%d%d%d", v[0], v[1], v[2]);
    puts(strlen(buf) == 3 ? buf : "bad");
    return 0;
}
"#;

/// The "Properties:" lines of `readelf -n`, and whether a `PT_GNU_PROPERTY` exists.
fn properties(dir: &Path, exe: &str) -> (Vec<String>, bool) {
    let notes = common::tool_ok("readelf", &["-nW", exe], dir);
    let props = notes
        .lines()
        .filter_map(|l| {
            l.split_once("Properties:")
                .map(|(_, p)| p.trim().to_string())
        })
        .collect();
    let phdrs = common::tool_ok("readelf", &["-lW", exe], dir);
    (props, phdrs.contains("GNU_PROPERTY"))
}

#[test]
fn properties_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("gnu-property", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(dir.join("p.c"), PROGRAM).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "p.c", "-o", "plain.o"], &dir);
    common::tool_ok(
        "gcc",
        &["-c", "-O1", "-fcf-protection", "p.c", "-o", "cet.o"],
        &dir,
    );
    let cases: &[(&str, &[&str])] = &[
        ("plain.o", &[]),
        ("cet.o", &[]),
        ("cet.o", &["-Wl,-z,ibt,-z,shstk"]),
        ("plain.o", &["-Wl,-z,shstk"]),
        ("cet.o", &["-Wl,-z,ibt,-z,shstk", "-Wl,-z,now"]),
        ("cet.o", &["-Wl,-z,ibt", "-no-pie"]),
        ("cet.o", &["-Wl,-z,ibt,-z,shstk", "-static"]),
        ("plain.o", &["-Wl,-z,x86-64-v2"]),
        ("cet.o", &["-Wl,-z,x86-64-v3,-z,ibt"]),
    ];
    for (k, (obj, flags)) in cases.iter().enumerate() {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("p{k}-{side}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", &exe, obj];
            args.extend_from_slice(flags);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{obj} {flags:?} ({side}):\n{}", o.log());
            // x86-64-v3 may exceed this CPU: the loader then refuses it, as it should.
            if !flags.iter().any(|f| f.contains("x86-64-v")) {
                let run = std::process::Command::new(dir.join(&exe)).output().unwrap();
                assert_eq!(run.stdout, b"123\n", "{obj} {flags:?} ({side})");
            }
            views.push(properties(&dir, &exe));
        }
        assert_eq!(
            views[1], views[0],
            "{obj} {flags:?}: properties differ from GNU ld's"
        );
    }
    // IBT: the PLT entries are indirect branch targets.
    let plt = common::tool_ok("objdump", &["-d", "-j", ".plt", "p2-test"], &dir);
    assert!(plt.contains("endbr64"), "{plt}");
    let plain = common::tool_ok("objdump", &["-d", "-j", ".plt", "p0-test"], &dir);
    assert!(!plain.contains("endbr64"), "{plain}");
}

#[test]
fn cet_report() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("cet-report", &["gcc"]) else {
        return;
    };
    std::fs::write(dir.join("p.c"), PROGRAM).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "p.c", "-o", "plain.o"], &dir);
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let b = format!("-B{}/", shim.display());
        let warn = common::tool(
            "gcc",
            &[&b, "-o", "w", "plain.o", "-Wl,-z,cet-report=warning"],
            Some(&dir),
        );
        assert!(warn.success(), "{side}: {}", warn.log());
        assert!(
            warn.stderr_str()
                .contains("plain.o: warning: missing IBT and SHSTK properties")
                || warn
                    .stderr_str()
                    .contains("plain.o: missing IBT and SHSTK properties"),
            "{side}: {}",
            warn.log()
        );
        let err = common::tool(
            "gcc",
            &[&b, "-o", "e", "plain.o", "-Wl,-z,cet-report=error"],
            Some(&dir),
        );
        assert!(!err.success(), "{side}: {}", err.log());
    }
}
