//! Linker-defined symbols and shared objects. `_GLOBAL_OFFSET_TABLE_`, `_DYNAMIC` and `__ehdr_start` are local
//! to each output: GNU ld makes them local and lld hidden, so neither exports them from a shared object. And a
//! name the linker defines is never bound to a library's definition: an executable that refers to its own
//! `_GLOBAL_OFFSET_TABLE_` must not take a library's (such a library was made by earlier rivet builds, which
//! exported it), and so `--as-needed` must not keep that library.
//!
//! Each link is made with GNU ld and with the linker under test, and the results compared.

mod common;

use std::path::Path;

/// Refers to linker-defined symbols from a shared object.
const USES: &str = "extern char _end[], _edata[], __bss_start[], _DYNAMIC[], __ehdr_start[];\n\
    extern char _GLOBAL_OFFSET_TABLE_[], __executable_start[], etext[];\n\
    void *tab[] = {_end, _edata, __bss_start, _DYNAMIC, __ehdr_start, _GLOBAL_OFFSET_TABLE_,\n\
    __executable_start, etext};\n";
/// A library that exports a symbol whose name is patched to `_GLOBAL_OFFSET_TABLE_` after linking (GNU ld
/// refuses to define it from an object), next to one the program does not use either.
const FAKE_GOT: &str = "int XGLOBAL_OFFSET_TABLE_ = 1;\nint unused_in_lib = 2;\n";
/// Takes the address of its own GOT base.
const MAIN: &str = "const void *got(void) {\n  const void *p;\n\
    __asm__(\"leaq _GLOBAL_OFFSET_TABLE_(%%rip), %0\" : \"=r\"(p));\n  return p;\n}\n\
    int main(void) { return got() == 0; }\n";

fn needed(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-dW", file], dir);
    out.lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_string()))
        .collect()
}

#[test]
fn linker_defined_symbols_stay_local_and_are_never_taken_from_a_library() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("linker-defined", &["gcc", "readelf"])
    else {
        return;
    };
    for (name, text) in [("uses.c", USES), ("fake_got.c", FAKE_GOT), ("main.c", MAIN)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok(
        "gcc",
        &["-c", "-fPIC", "uses.c", "fake_got.c", "main.c"],
        &dir,
    );
    let sides = [("ref", &bfd), ("test", &shim)];

    // A shared object that refers to linker-defined symbols exports the same ones as GNU ld's.
    let mut sets = Vec::new();
    for (side, shim) in sides {
        let out = format!("libuses-{side}.so");
        let b = format!("-B{}/", shim.display());
        let o = common::tool("gcc", &[&b, "-shared", "-o", &out, "uses.o"], Some(&dir));
        assert!(o.success(), "{side}:\n{}", o.log());
        sets.push(common::dynamic_exports(&dir, &out));
    }
    for local in ["_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__ehdr_start"] {
        assert!(
            !sets[1].contains(&local.to_string()),
            "{local} exported: {:?}",
            sets[1]
        );
    }
    assert_eq!(sets[1], sets[0], "exported symbols differ from GNU ld's");

    // A library that exports `_GLOBAL_OFFSET_TABLE_`: the program's own GOT base is used, and --as-needed drops
    // the library, which nothing else uses.
    common::tool_ok(
        "gcc",
        &[
            "-shared",
            "-fuse-ld=bfd",
            "-o",
            "libfakegot.so",
            "fake_got.o",
        ],
        &dir,
    );
    let lib = dir.join("libfakegot.so");
    let mut bytes = std::fs::read(&lib).unwrap();
    let (from, to) = (b"XGLOBAL_OFFSET_TABLE_", b"_GLOBAL_OFFSET_TABLE_");
    let mut patched = 0;
    for at in 0..bytes.len().saturating_sub(from.len()) {
        if &bytes[at..at + from.len()] == from {
            bytes[at..at + to.len()].copy_from_slice(to);
            patched += 1;
        }
    }
    assert!(patched > 0);
    std::fs::write(&lib, bytes).unwrap();
    assert!(
        common::dynamic_exports(&dir, "libfakegot.so")
            .contains(&"_GLOBAL_OFFSET_TABLE_".to_string())
    );
    for (side, shim) in sides {
        let exe = format!("main-{side}");
        let b = format!("-B{}/", shim.display());
        let o = common::tool(
            "gcc",
            &[
                &b,
                "-o",
                &exe,
                "main.o",
                "-Wl,--as-needed",
                "-L.",
                "-lfakegot",
            ],
            Some(&dir),
        );
        assert!(o.success(), "{side}:\n{}", o.log());
        let n = needed(&dir, &exe);
        assert!(
            !n.iter().any(|l| l == "libfakegot.so"),
            "{side}: the library that only exports _GLOBAL_OFFSET_TABLE_ is needed: {n:?}"
        );
        let status = std::process::Command::new(dir.join(&exe))
            .env("LD_LIBRARY_PATH", &dir)
            .status()
            .unwrap();
        assert!(status.success(), "{side}: {status:?}");
    }
}

/// The end of the image: GNU ld's default script pads a non-empty `.bss` to end on a word boundary and puts
/// `_end` (and `end`) on a word boundary, with or without a `.bss`, so that a heap started there (`sbrk`-style
/// allocators, boot code) is aligned. `_edata` and `__bss_start` are where the data ends. Compared with GNU ld,
/// demand paged and under `-N`.
#[test]
fn image_end_is_word_aligned_as_gnu_ld() {
    let (linker, _) = common::linker_under_test();
    let Some(bfd) = common::which("ld.bfd") else {
        eprintln!("skipped: ld.bfd needed");
        return;
    };
    if !["as", "nm", "readelf"].iter().all(|t| common::have_tool(t)) {
        eprintln!("skipped: as, nm and readelf needed");
        return;
    }
    let dir = common::work_root().join("image-end");
    common::fresh_dir(&dir);
    let head = ".section .note.GNU-stack,\"\",@progbits\n.text\n.globl _start\n_start: ret\n.data\n.byte 1\n\
        .balign 8\n.quad _end, end, _edata, __bss_start\n";
    let cases = [
        ("bss3", format!("{head}.bss\n.zero 3\n")),
        ("bss8", format!("{head}.bss\n.zero 8\n")),
        ("nobss", format!("{head}.byte 5\n")),
        // `.bss` starting off a word: its end is padded to one, not its size.
        ("odd", format!("{head}.byte 5\n.bss\n.zero 3\n")),
    ];
    for (name, src) in &cases {
        std::fs::write(dir.join(format!("{name}.s")), src).unwrap();
        common::tool_ok(
            "as",
            &[&format!("{name}.s"), "-o", &format!("{name}.o")],
            &dir,
        );
        for opts in [&[][..], &["-N"][..]] {
            let mut seen = Vec::new();
            for (ld, out) in [(&linker, "r"), (&bfd, "b")] {
                let o = std::process::Command::new(ld)
                    .args(opts)
                    .args([&format!("{name}.o"), "-o", out])
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}: {o:?}", ld.display());
                let syms = common::tool_ok("nm", &[out], &dir);
                // Values, not kinds: with no `.bss` input of any size, rivet keeps an empty `.bss` (from `as`'s
                // empty ones) where GNU ld drops it, which puts `__bss_start` and `_end` in another section.
                let mut syms: Vec<String> = (syms.lines())
                    .filter(|l| {
                        l.ends_with("end") || l.ends_with("edata") || l.ends_with("bss_start")
                    })
                    .map(|l| {
                        l.split_whitespace()
                            .step_by(2)
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                syms.sort();
                let secs = common::tool_ok("readelf", &["-SW", out], &dir);
                let bss: Vec<String> = (secs.lines())
                    .filter(|l| l.contains(" .bss ") && *name != "nobss")
                    .map(|l| {
                        l.split_whitespace()
                            .skip(2)
                            .take(5)
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                seen.push(format!("{}\n{}", syms.join("\n"), bss.join("\n")));
            }
            assert_eq!(seen[0], seen[1], "{name} {opts:?}");
        }
    }
}
