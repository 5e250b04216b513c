//! `--sysroot` (issue 31): `-L=DIR` and `-L$SYSROOT/DIR` are under the sysroot, and so are the absolute paths of an
//! input script found under it (a cross toolchain's `libc.so`); and a version script not found as named is looked
//! for on the library search path, as GNU ld looks for script files. Compared with GNU ld: each link succeeds and
//! records the same `DT_NEEDED` entries and versions.

mod common;

fn needed_and_versions(dir: &std::path::Path, file: &str) -> Vec<String> {
    let d = common::tool_ok("readelf", &["-dW", file], dir);
    let v = common::tool_ok("readelf", &["-VW", file], dir);
    d.lines()
        .filter(|l| l.contains("NEEDED"))
        .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
        .chain(v.lines().filter(|l| l.contains("Name:")).map(|l| {
            l.split("Name:")
                .nth(1)
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        }))
        .collect()
}

#[test]
fn sysroot_and_script_search_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("sysroot", &["gcc", "readelf"]) else {
        return;
    };
    let lib = dir.join("root/usr/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(dir.join("maps")).unwrap();
    std::fs::write(dir.join("foo.c"), "int foo(void) { return 1; }\n").unwrap();
    std::fs::write(
        dir.join("m.c"),
        "int foo(void);\nint call(void) { return foo(); }\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-fPIC",
            "-shared",
            "-Wl,-soname,libfoo.so.1",
            "-o",
            "root/usr/lib/libfoo.so.1",
            "foo.c",
        ],
        &dir,
    );
    // A script like a cross toolchain's libc.so: an absolute path meant inside the sysroot.
    std::fs::write(
        lib.join("libbar.so"),
        "/* GNU ld script */\nGROUP ( /usr/lib/libfoo.so.1 )\n",
    )
    .unwrap();
    std::fs::write(dir.join("maps/v.map"), "V1 { global: call; local: *; };\n").unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "m.c"], &dir);
    let cases: &[&[&str]] = &[
        &["-Wl,--sysroot=root", "-Wl,-L=/usr/lib", "-lbar"],
        &["-Wl,--sysroot=root", "-Wl,-L$SYSROOT/usr/lib", "-lbar"],
        &[
            "-Lroot/usr/lib",
            "-l:libfoo.so.1",
            "-Lmaps",
            "-Wl,--version-script=v.map",
        ],
    ];
    for (k, flags) in cases.iter().enumerate() {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("s{k}-{side}.so");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-shared", "-nostdlib", "-o", &out, "m.o"];
            args.extend_from_slice(flags);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{flags:?} ({side}): {}", o.log());
            // The base version is named after the output file, which differs between the sides.
            let v = needed_and_versions(&dir, &out)
                .into_iter()
                .map(|n| n.replace(&out, "OUT"))
                .collect::<Vec<_>>();
            views.push(v);
        }
        assert!(
            views[0].iter().any(|n| n.contains("libfoo.so.1")),
            "{:?}",
            views[0]
        );
        assert_eq!(views[1], views[0], "{flags:?}");
    }
}
