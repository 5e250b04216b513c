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
