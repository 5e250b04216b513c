//! A shared object with a version script: its dynamic symbols, as `objdump -T` lists them (the view of
//! dpkg-gensymbols and other interface checkers), must be GNU ld's: each symbol with its version, and one absolute
//! symbol per named version node (`LIB_1.0`), with addresses and sizes left out of the comparison.

mod common;

use std::path::Path;

const LIB: &str = "int v = 3;\nint get(void) { return v; }\nint old_get(void) { return 1; }\n\
    int hidden_helper(void) { return 2; }\n";
const SCRIPT: &str =
    "LIB_1.0 { global: get; old_get; local: *; };\nLIB_2.0 { global: v; } LIB_1.0;\n";

/// `objdump -T`'s lines of defined symbols as (flags, section, version, name), sorted.
fn interface(dir: &Path, lib: &str) -> Vec<String> {
    let out = common::tool_ok("objdump", &["-T", lib], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter(|l| !l.contains("*UND*"))
        .filter_map(|l| {
            // address, flags..., section, size, version, name
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = f.len();
            let symbol = n >= 6 && f[0].len() == 16 && f[0].bytes().all(|b| b.is_ascii_hexdigit());
            symbol.then(|| {
                format!(
                    "{} {} {} {}",
                    f[1..n - 4].join(" "),
                    f[n - 4],
                    f[n - 2],
                    f[n - 1]
                )
            })
        })
        .collect();
    v.sort();
    v
}

#[test]
fn versioned_shared_object_interface_matches_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("versioned-so", &["gcc", "objdump"]) else {
        return;
    };
    std::fs::write(dir.join("lib.c"), LIB).unwrap();
    std::fs::write(dir.join("lib.map"), SCRIPT).unwrap();
    common::tool_ok("gcc", &["-c", "-fPIC", "lib.c"], &dir);
    let mut views = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let out = format!("lib-{side}.so");
        let b = format!("-B{}/", shim.display());
        let o = common::tool(
            "gcc",
            &[
                &b,
                "-shared",
                "-o",
                &out,
                "lib.o",
                "-Wl,--version-script=lib.map",
            ],
            Some(&dir),
        );
        assert!(o.success(), "{side}:\n{}", o.log());
        views.push(interface(&dir, &out));
    }
    assert!(
        views[0].iter().any(|l| l.ends_with("LIB_1.0 LIB_1.0")),
        "GNU ld's view lacks the version node symbol: {:?}",
        views[0]
    );
    assert_eq!(views[1], views[0], "dynamic symbols differ from GNU ld's");
}

/// `.symver f, f@` (an empty version: the plain name, base version) and `--default-symver` (unversioned exports
/// get a version named after the soname or the output file; `f@` then a hidden one), each with and without a
/// soname, as GNU ld gives them (rivet refused the empty version and did not know the option); and with a version
/// script: the anonymous node's globals (jansson's libtool link) and the unmatched globals beside named nodes get
/// the default version too, numbered 2 before the named nodes. Compared: `objdump -T` and the version definitions.
#[test]
fn empty_versions_and_default_symver_match_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("default-symver", &["gcc", "objdump"])
    else {
        return;
    };
    std::fs::write(
        dir.join("a.c"),
        "int foo(void) { return 1; }\nint bar(void) { return 2; }\n__asm__(\".symver bar, bar@\");\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "-fPIC", "a.c"], &dir);
    std::fs::write(dir.join("anon.map"), "{ global: foo; bar; local: *; };\n").unwrap();
    std::fs::write(dir.join("named.map"), "V1 { global: foo; };\n").unwrap();
    let cases: &[&[&str]] = &[
        &[],
        &["-Wl,--default-symver"],
        &["-Wl,-soname,libx.so.1", "-Wl,--default-symver"],
        &[
            "-Wl,-soname,libx.so.1",
            "-Wl,--default-symver",
            "-Wl,--version-script=anon.map",
        ],
        &[
            "-Wl,-soname,libx.so.1",
            "-Wl,--default-symver",
            "-Wl,--version-script=named.map",
        ],
        &["-Wl,--default-symver", "-Wl,--version-script=named.map"],
    ];
    for (k, flags) in cases.iter().enumerate() {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("x{k}-{side}.so");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-shared", "-o", &out, "a.o"];
            args.extend_from_slice(flags);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{flags:?} ({side}):\n{}", o.log());
            // The output's own file name differs between the sides: compare it as one name.
            let verdefs = common::tool_ok("readelf", &["-V", &out], &dir);
            let v: Vec<String> = interface(&dir, &out)
                .into_iter()
                .chain(
                    verdefs
                        .lines()
                        .filter_map(|l| l.split_once("Index: ").map(|(_, d)| d.to_string())),
                )
                .map(|l| l.replace(&out, "OUT"))
                .collect();
            views.push(v);
        }
        assert_eq!(views[1], views[0], "{flags:?}");
    }
}
