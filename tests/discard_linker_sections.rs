//! `/DISCARD/` of the linker's own `.interp` and symbol hash tables (issue 33: U-Boot's x86 script discards `.gnu*`,
//! kernels' and firmware's scripts `.interp`). GNU ld matches its own sections by name as input sections, and a
//! discarded `.interp` takes `PT_INTERP` with it: the output's sections, program header types and dynamic tags
//! must be GNU ld's. GNU ld refuses to discard a hash table of an ordinary dynamic output ("could not find
//! section .gnu.hash") and drops it in a static PIE; rivet drops it and its tag in both (the dynamic loader does
//! without one where the output exports nothing), which the second half checks on rivet alone.

mod common;

use std::path::Path;
use std::process::Command;

const SOURCE: &str = "int x = 5;\nint *p = &x;\nint _start(void) { return *p; }\n";

fn script(discard: &str) -> String {
    format!(
        "SECTIONS {{\n  . = 0x100000 + SIZEOF_HEADERS;\n  .text : {{ *(.text*) }}\n  .data : {{ *(.data*) }}\n  \
         /DISCARD/ : {{ {discard} }}\n}}\n"
    )
}

/// The output's section names, program header types and dynamic tags.
fn shape(dir: &Path, out: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let sections = (common::tool_ok("readelf", &["-SW", out], dir).lines())
        .map(|l| l.replace("[ ", "["))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .filter(|n| n.starts_with('.'))
        .collect();
    let phdrs = (common::tool_ok("readelf", &["-lW", out], dir).lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 5 && f[1].starts_with("0x")).then(|| f[0].to_string())
        })
        .collect();
    let tags = (common::tool_ok("readelf", &["-dW", out], dir).lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 2 && f[0].starts_with("0x")).then(|| f[1].to_string())
        })
        .collect();
    (sections, phdrs, tags)
}

fn link(ld: &Path, dir: &Path, args: &[&str]) -> bool {
    Command::new(ld)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn discarded_interp_goes_with_its_segment_as_in_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("discard-linker-sections", &["gcc", "readelf"])
    else {
        return;
    };
    let (rivet, bfd) = (shim.join("ld"), bfd.join("ld"));
    std::fs::write(dir.join("a.c"), SOURCE).unwrap();
    common::tool_ok("gcc", &["-O1", "-fPIE", "-c", "a.c"], &dir);
    std::fs::write(dir.join("interp.lds"), script("*(.interp)")).unwrap();
    let args = ["-pie", "-T", "interp.lds", "a.o", "-o"];
    assert!(link(&bfd, &dir, &[&args[..], &["b.out"]].concat()));
    assert!(link(&rivet, &dir, &[&args[..], &["r.out"]].concat()));
    let (b, r) = (shape(&dir, "b.out"), shape(&dir, "r.out"));
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(r.0.clone()),
        sorted(b.0.clone()),
        "sections (rivet's, GNU ld's)"
    );
    assert!(!r.0.contains(&".interp".to_string()), "{:?}", r.0);
    assert_eq!(r.1, b.1, "program headers (rivet's, GNU ld's)");
    assert_eq!(r.2, b.2, "dynamic tags (rivet's, GNU ld's)");

    // A discarded hash table takes its dynamic tag; the other stays.
    std::fs::write(dir.join("hash.lds"), script("*(.interp) *(.gnu.hash)")).unwrap();
    for extra in [&[][..], &["--no-dynamic-linker"]] {
        let args = [&["-pie", "-T", "hash.lds", "a.o", "-o", "h.out"][..], extra].concat();
        assert!(link(&rivet, &dir, &args), "{args:?}");
        let (sections, _, tags) = shape(&dir, "h.out");
        assert!(!sections.contains(&".gnu.hash".to_string()), "{sections:?}");
        assert!(!tags.contains(&"(GNU_HASH)".to_string()), "{tags:?}");
        assert!(tags.contains(&"(HASH)".to_string()), "{tags:?}");
    }
}

/// The program header types of a file, in order.
fn phdr_types(dir: &Path, out: &str) -> Vec<String> {
    shape(dir, out).1
}

/// GNU ld writes a `PT_PHDR` only beside a `PT_INTERP`: none in a shared object or a static PIE. Program headers
/// the loader does not read still move every address after them.
#[test]
fn program_header_table_described_only_with_an_interpreter() {
    let Some((dir, shim, _)) = common::against_gnu_ld("phdr-with-interp", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(
        dir.join("a.c"),
        "int f(void) { return 7; }\nint main(void) { return f() - 7; }\n",
    )
    .unwrap();
    let shim = format!("-B{}/", shim.display());
    for (kind, flags) in [
        ("so", &["-shared", "-fPIC"][..]),
        ("static-pie", &["-static-pie", "-fPIE"][..]),
        ("pie", &["-pie", "-fPIE"][..]),
    ] {
        let mut types = Vec::new();
        for (side, driver) in [("bfd", "-fuse-ld=bfd"), ("rivet", shim.as_str())] {
            let out = format!("{kind}.{side}");
            let args = [flags, &[driver, "a.c", "-o", &out]].concat();
            common::tool_ok("gcc", &args, &dir);
            if kind != "so" {
                let run = common::tool(&dir.join(&out).display().to_string(), &[], Some(&dir));
                assert!(run.success(), "{out}: {}", run.log());
            }
            types.push(phdr_types(&dir, &out));
        }
        let phdr = |v: &Vec<String>| v.iter().any(|t| t == "PHDR");
        assert_eq!(
            phdr(&types[1]),
            phdr(&types[0]),
            "{kind}: {:?} (GNU ld: {:?})",
            types[1],
            types[0]
        );
    }
}
