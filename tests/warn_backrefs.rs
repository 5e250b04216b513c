//! `--warn-backrefs` (issue 31; lld's option): an archive member pulled in by a file that comes after its archive,
//! which GNU ld would leave undefined, is reported with lld's wording; not inside one `--start-group`, not when the
//! order is right, and not on an ordinary C link. Compared with ld.lld-19's warnings.

mod common;

fn warnings(ld: &std::path::Path, dir: &std::path::Path, order: &[&str]) -> Vec<String> {
    let o = std::process::Command::new(ld)
        .args(["--warn-backrefs", "-e", "main", "-o", "x", "m.o"])
        .args(order)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.split_once("warning: ").map(|(_, w)| w.to_string()))
        .collect()
}

#[test]
fn backward_references_as_lld_reports_them() {
    let Some((linker, dir)) = common::rivet_only(
        "warn-backrefs",
        &["gcc", "ar", "ld.lld-19"],
        "compares with lld's wording",
    ) else {
        return;
    };
    std::fs::write(dir.join("a.c"), "int a(void) { return 1; }\n").unwrap();
    std::fs::write(
        dir.join("b.c"),
        "int a(void);\nint b(void) { return a(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("m.c"),
        "int b(void);\nint main(void) { return b() - 1; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "a.c", "b.c", "m.c"], &dir);
    common::tool_ok("ar", &["rcs", "liba.a", "a.o"], &dir);
    common::tool_ok("ar", &["rcs", "libb.a", "b.o"], &dir);
    let lld = common::which("ld.lld-19").unwrap();
    for order in [
        &["liba.a", "libb.a"][..],
        &["libb.a", "liba.a"],
        &["--start-group", "liba.a", "libb.a", "--end-group"],
    ] {
        let ours = warnings(&linker, &dir, order);
        assert_eq!(ours, warnings(&lld, &dir, order), "{order:?}");
        assert_eq!(
            ours.len(),
            (order == ["liba.a", "libb.a"]) as usize,
            "{order:?}: {ours:?}"
        );
    }
    // An ordinary C program, dynamic and static: nothing to report.
    std::fs::write(
        dir.join("h.c"),
        "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n",
    )
    .unwrap();
    let shim = common::ld_shim_dir(&linker, "warn-backrefs");
    let b = format!("-B{}/", shim.display());
    for kind in ["-pie", "-static"] {
        let o = common::tool(
            "gcc",
            &[&b, kind, "-o", "h", "h.c", "-Wl,--warn-backrefs"],
            Some(&dir),
        );
        assert!(
            o.success() && !o.stderr_str().contains("backward"),
            "{kind}: {}",
            o.log()
        );
    }
}
