//! `-Ttext-segment`/`--image-base`, `-Ttext`, `-Tdata`, `-Tbss` and `--section-start` (issue 31; `-Ttext=` used
//! to get a misleading "linker scripts" error). The image base moves every segment as in GNU ld (an unaligned one
//! rounded down with a warning). A section placed at an address gets it exactly, wherever it is in its segment
//! (a load of its own, or the load before it extended when the address is on that load's last page, as GNU ld
//! does), and the sections after it follow it; sections that would overlap are refused, as by GNU ld. The
//! programs run.

mod common;

use std::process::Command;

/// Static, no C library: `_start` exits with 0 when the data, read-only data and bss values are right.
const START: &str = "int data_value = 7;\nint bss_value;\nconst char ro_text[8] = \"rodata\";\n\
    void _start(void) {\n\
    int rc = data_value + bss_value - 7 + ro_text[data_value - 7] - 'r';\n\
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
    // Same section addresses as GNU ld: sections that start a segment in rivet's layout or not, above and below
    // the others, on the page where the segment before ends, unaligned, several in one segment, given out of
    // order.
    for opts in [
        &["-Ttext=0x800000"][..],
        &["-Ttext", "0x800000", "-Tdata", "0x900000"],
        &["--section-start=.data=0x700000"],
        &["-Tbss=0xa00000"],
        &["--section-start=.rodata=0x500000"],
        &["--section-start=.rodata=0x401800"],
        &["--section-start=.rodata=0x380000"],
        &["--section-start=.data=0x600001"],
        &["-Tdata=0x500000", "-Ttext=0x600000"],
        &[
            "--section-start=.rodata=0x500000",
            "--section-start=.eh_frame=0x510000",
        ],
        &["--section-start=.bss=0x404800", "-Tdata=0x404000"],
    ] {
        let (ok, err) = link(&linker, "r", opts);
        assert!(ok, "{opts:?}: {err}");
        assert!(link(&bfd, "b", opts).0, "{opts:?}: GNU ld");
        for sec in [".text", ".data", ".bss", ".rodata", ".eh_frame"] {
            let named = opts.iter().any(|o| o.contains(&sec[1..]));
            if named || sec == ".text" {
                assert_eq!(
                    address(&dir, "r", sec),
                    address(&dir, "b", sec),
                    "{opts:?} {sec}"
                );
            }
        }
        assert!(runs("r"), "{opts:?}");
    }
    // With a SECTIONS script: the option overrides the script's address, as in GNU ld.
    std::fs::write(
        dir.join("t.ld"),
        "SECTIONS {\n  . = 0x400000 + SIZEOF_HEADERS;\n  .text : { *(.text*) }\n  \
         .rodata : { *(.rodata*) }\n  .data 0x500000 : { *(.data*) }\n  .bss : { *(.bss*) }\n}\n",
    )
    .unwrap();
    for opts in [
        &["-T", "t.ld", "-Tdata=0x600000"][..],
        &["-T", "t.ld", "-Tbss=0x700000"],
    ] {
        let (ok, err) = link(&linker, "r", opts);
        assert!(ok, "{opts:?}: {err}");
        assert!(link(&bfd, "b", opts).0, "{opts:?}: GNU ld");
        for sec in [".data", ".bss"] {
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
    // Overlapping sections: refused by both, naming them.
    let opts = &["--section-start=.rodata=0x401004"];
    assert!(!link(&bfd, "b", opts).0);
    let (ok, err) = link(&linker, "r", opts);
    assert!(!ok);
    assert!(
        err.contains("section .text [0x401000, ")
            && err.contains("overlaps section .rodata [0x401004, "),
        "{err}"
    );
}

/// Dynamic outputs (PIE, position-dependent, shared) with TLS, constructors and lazy binding, so that `.data`
/// follows `.got.plt` in its segment and `.rodata` follows nothing of its own: each placed section where GNU ld
/// puts it, and the programs give GNU ld's output.
#[test]
fn dynamic_outputs_follow_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("section-start-dynamic", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(
        dir.join("d.c"),
        "#include <stdio.h>\nint data_value = 7;\nint bss_value;\nconst char msg[] = \"hello\";\n\
         __thread int tv = 3;\nstatic int inited;\n\
         __attribute__((constructor)) static void init(void) { inited = 1; }\n\
         int lib_get(void);\n\
         int main(void) { printf(\"%s %d %d %d %d %d\\n\", msg, data_value, bss_value, tv, inited, lib_get()); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("lib.c"),
        "int lib_data = 5;\nint lib_bss;\nconst char lib_ro[] = \"ro\";\n\
         int lib_get(void) { return lib_data + lib_bss + lib_ro[0] - 'r'; }\n",
    )
    .unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("-Tdata=0x600000", &[".data"]),
        ("--section-start=.rodata=0x500000", &[".rodata"]),
        ("-Tbss=0x700000", &[".bss"]),
        ("--section-start=.data=0x600001", &[".data"]),
        ("--section-start=.tdata=0x600000", &[".tdata"]),
        ("-Tdata=0x500000,-Ttext=0x600000", &[".data", ".text"]),
    ];
    for kind in ["-no-pie", "-pie"] {
        for (opt, secs) in cases {
            let mut outs = Vec::new();
            for (side, b) in [("ref", &bfd), ("test", &shim)] {
                let b = format!("-B{}/", b.display());
                let wl = format!("-Wl,{opt}");
                let lib = format!("lib{side}.so");
                let exe = format!("x{side}");
                let o = common::tool(
                    "gcc",
                    &[&b, "-shared", "-fPIC", "-o", &lib, "lib.c", &wl],
                    Some(&dir),
                );
                assert!(o.success(), "-shared {opt} ({side}): {}", o.log());
                let path = format!("./{lib}");
                let o = common::tool(
                    "gcc",
                    &[&b, kind, "-o", &exe, "d.c", &path, &wl],
                    Some(&dir),
                );
                assert!(o.success(), "{kind} {opt} ({side}): {}", o.log());
                let run = Command::new(dir.join(&exe))
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                assert!(run.status.success(), "{kind} {opt} ({side})");
                outs.push(String::from_utf8_lossy(&run.stdout).into_owned());
            }
            assert_eq!(outs[1], outs[0], "{kind} {opt}");
            assert_eq!(outs[0], "hello 7 0 3 1 5\n");
            for sec in *secs {
                assert_eq!(
                    address(&dir, "xtest", sec),
                    address(&dir, "xref", sec),
                    "{kind} {opt} {sec}"
                );
                assert_eq!(
                    address(&dir, "libtest.so", sec),
                    address(&dir, "libref.so", sec),
                    "-shared {opt} {sec}"
                );
            }
        }
    }
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
