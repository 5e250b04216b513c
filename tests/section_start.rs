//! `-Ttext-segment`/`--image-base`, `-Ttext`, `-Tdata`, `-Tbss` and `--section-start` (issue 31; `-Ttext=` used
//! to get a misleading "linker scripts" error). The image base moves every segment as in GNU ld (an unaligned one
//! rounded down with a warning); a section placed at an address gets it when it starts its segment, and a section
//! inside a segment is refused with a message rather than placed elsewhere. The programs run.

mod common;

use std::process::Command;

/// Static, no C library: `_start` exits with 0 when the data and bss values are right.
const START: &str = "int data_value = 7;\nint bss_value;\nvoid _start(void) {\n\
    int rc = data_value + bss_value - 7;\n\
    __asm__ volatile(\"mov $60, %%eax\\n syscall\" :: \"D\"(rc) : \"rax\");\n}\n";

fn address(dir: &std::path::Path, exe: &str, section: &str) -> String {
    let out = common::tool_ok("readelf", &["-SW", exe], dir);
    out.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|&w| w == section)?;
            f.get(at + 2).map(|s| s.to_string())
        })
        .unwrap_or_default()
}

fn loads(dir: &std::path::Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-lW", exe], dir);
    out.lines()
        .filter(|l| l.trim_start().starts_with("LOAD"))
        .map(|l| l.split_whitespace().nth(2).unwrap_or("").to_string())
        .collect()
}

#[test]
fn fixed_addresses_follow_gnu_ld() {
    let Some((linker, dir)) = common::rivet_only(
        "section-start",
        &["gcc", "ld.bfd", "readelf"],
        "compares with GNU ld",
    ) else {
        return;
    };
    std::fs::write(dir.join("s.c"), START).unwrap();
    common::tool_ok(
        "gcc",
        &["-O1", "-fno-pie", "-fno-stack-protector", "-c", "s.c"],
        &dir,
    );
    let bfd = common::which("ld.bfd").unwrap();
    let link = |ld: &std::path::Path, exe: &str, opts: &[&str]| {
        let o = Command::new(ld)
            .args(["-static", "-nostdlib", "-o", exe, "s.o"])
            .args(opts)
            .current_dir(&dir)
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let runs = |exe: &str| Command::new(dir.join(exe)).status().unwrap().success();
    // Same segments as GNU ld.
    for opts in [
        &["-Ttext-segment=0x58000000"][..],
        &["-Ttext-segment", "0x400100"],
    ] {
        let (ok, err) = link(&linker, "r", opts);
        assert!(ok, "{opts:?}: {err}");
        assert!(link(&bfd, "b", opts).0);
        assert_eq!(loads(&dir, "r"), loads(&dir, "b"), "{opts:?}");
        assert!(runs("r"), "{opts:?}");
        if opts[opts.len() - 1].ends_with("100") {
            assert!(
                err.contains("isn't a multiple of the maximum page size"),
                "{err}"
            );
        }
    }
    // Same section addresses as GNU ld.
    for opts in [
        &["-Ttext=0x800000"][..],
        &["-Ttext", "0x800000", "-Tdata", "0x900000"],
        &["--section-start=.data=0x700000"],
    ] {
        let (ok, err) = link(&linker, "r", opts);
        assert!(ok, "{opts:?}: {err}");
        assert!(link(&bfd, "b", opts).0);
        for sec in [".text", ".data"] {
            assert_eq!(
                address(&dir, "r", sec),
                address(&dir, "b", sec),
                "{opts:?} {sec}"
            );
        }
        assert!(runs("r"), "{opts:?}");
    }
    // --image-base is lld's spelling.
    assert!(link(&linker, "r", &["--image-base=0x10000000"]).0);
    assert_eq!(loads(&dir, "r")[0], "0x0000000010000000");
    // .bss follows .data in its segment: refused, not misplaced.
    let (ok, err) = link(&linker, "r", &["-Tbss=0xa00000"]);
    assert!(!ok);
    assert!(
        err.contains("cannot place section .bss at 0xa00000: it does not start a segment"),
        "{err}"
    );
}

/// A PIE based at a fixed address, as GNU ld makes it, runs.
#[test]
fn pie_with_text_segment() {
    let Some((dir, shim, _)) = common::against_gnu_ld("section-start-pie", &["gcc"]) else {
        return;
    };
    std::fs::write(
        dir.join("h.c"),
        "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n",
    )
    .unwrap();
    let b = format!("-B{}/", shim.display());
    common::tool_ok(
        "gcc",
        &[
            &b,
            "-pie",
            "-Wl,-Ttext-segment=0x10000000",
            "-o",
            "x",
            "h.c",
        ],
        &dir,
    );
    assert_eq!(loads(&dir, "x")[0], "0x0000000010000000");
    let run = Command::new(dir.join("x")).output().unwrap();
    assert_eq!(run.stdout, b"hi\n");
}
