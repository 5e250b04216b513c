//! Dynamic tags from the command line (issue 31): repeated `-rpath` entries dropped as GNU ld drops them (an entry
//! already in the run path is skipped; a list is compared whole), `--audit` and `--depaudit` (`-P`) as
//! `DT_AUDIT`/`DT_DEPAUDIT` joined by ':'. Compared with GNU ld's `readelf -d` lines.

mod common;

fn tags(dir: &std::path::Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-dW", exe], dir);
    out.lines()
        .filter(|l| l.contains("RUNPATH") || l.contains("RPATH") || l.contains("AUDIT"))
        .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn rpath_and_audit_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("dynamic-tags", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(dir.join("h.c"), "int main(void) { return 0; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "h.c"], &dir);
    let cases: &[&[&str]] = &[
        &[
            "-Wl,-rpath,/a",
            "-Wl,-rpath,/b",
            "-Wl,-rpath,/a",
            "-Wl,-rpath,/b:/c",
            "-Wl,-R,/c",
        ],
        &["-Wl,--disable-new-dtags", "-Wl,-rpath,/x", "-Wl,-rpath,/x"],
        &[
            "-Wl,--audit,liba.so",
            "-Wl,--audit=libb.so",
            "-Wl,--depaudit,libd.so",
            "-Wl,-P,libe.so",
        ],
    ];
    for (k, flags) in cases.iter().enumerate() {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("t{k}-{side}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", &exe, "h.o"];
            args.extend_from_slice(flags);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{flags:?} ({side}): {}", o.log());
            views.push(tags(&dir, &exe));
        }
        assert!(!views[0].is_empty());
        assert_eq!(views[1], views[0], "{flags:?}");
    }
}

/// `ld` run without `--hash-style` (build systems that call it directly: gnu-efi, boot loaders, kernel modules'
/// helpers) writes both hash tables, as GNU ld and lld do by default; gcc asks for `--hash-style=gnu` itself.
#[test]
fn both_hash_tables_by_default_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("dynamic-tags-hash", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(
        dir.join("f.c"),
        "int f(void) { return 1; }\nint g(void) { return f() + 1; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "-fPIC", "f.c"], &dir);
    let (rivet, _) = common::linker_under_test();
    let mut views = Vec::new();
    for ld in ["ld.bfd".to_string(), rivet.display().to_string()] {
        for style in [None, Some("--hash-style=sysv"), Some("--hash-style=gnu")] {
            let mut args = vec!["-shared", "-o", "f.so", "f.o"];
            args.extend(style);
            let o = common::tool(&ld, &args, Some(&dir));
            assert!(o.success(), "{ld} {style:?}: {}", o.log());
            let d = common::tool_ok("readelf", &["-dW", "f.so"], &dir);
            let hashes: Vec<&str> = ["(HASH)", "(GNU_HASH)"]
                .into_iter()
                .filter(|t| d.contains(t))
                .collect();
            views.push(format!("{style:?}: {hashes:?}"));
        }
    }
    assert_eq!(
        views[3..],
        views[..3],
        "rivet (left) against GNU ld (right)"
    );
}

/// `-Bsymbolic` marks a shared object `DT_SYMBOLIC` (and `DF_SYMBOLIC` in `DT_FLAGS`), as GNU ld does;
/// `-Bsymbolic-functions` and an executable do not get it.
#[test]
fn symbolic_shared_objects_are_marked_as_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("dynamic-tags-symbolic", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("s.c"), "int v = 1;\nint get(void) { return v; }\n").unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "s.c"], &dir);
    let cases: &[&[&str]] = &[
        &["-shared", "-Wl,-Bsymbolic"],
        &["-shared", "-Wl,-Bsymbolic-functions"],
        &["-shared"],
        &["-pie", "-nostartfiles", "-Wl,-Bsymbolic", "-Wl,-e,get"],
    ];
    for flags in cases {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("sym-{side}.so");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", &out, "s.o"];
            args.extend(flags.iter());
            common::tool_ok("gcc", &args, &dir);
            let d = common::tool_ok("readelf", &["-dW", &out], &dir);
            let marks: Vec<String> = (d.lines())
                .filter(|l| l.contains("(SYMBOLIC)") || l.contains("(FLAGS)"))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
                .collect();
            views.push(marks);
        }
        assert_eq!(views[1], views[0], "{flags:?}: differs from GNU ld");
    }
}
