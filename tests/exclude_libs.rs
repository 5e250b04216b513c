//! `--exclude-libs`: a shared object linked with a static library does not export that library's symbols when
//! the library is named (by file name, or `ALL`), and still exports its own. Each link is made with GNU ld and with
//! the linker under test; the exported names must be equal, and a program linked against the library must run.

mod common;

const HELPER: &str = "int helper(void) { return 40; }\nint helper_data = 2;\n";
const OTHER: &str = "int other_helper(void) { return 1; }\n";
const LIB: &str = "int helper(void);\nextern int helper_data;\nint other_helper(void);\n\
    int api(void) { return helper() + helper_data + other_helper() - 1; }\n";
const MAIN: &str = "int api(void);\nint main(void) { return api() == 42 ? 0 : 1; }\n";

#[test]
fn excluded_archives_are_not_exported() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("exclude-libs", &["gcc", "readelf", "ar"])
    else {
        return;
    };
    for (name, text) in [
        ("helper.c", HELPER),
        ("other.c", OTHER),
        ("lib.c", LIB),
        ("main.c", MAIN),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok(
        "gcc",
        &["-c", "-fPIC", "helper.c", "other.c", "lib.c", "main.c"],
        &dir,
    );
    common::tool_ok("ar", &["rcs", "libhelper.a", "helper.o"], &dir);
    common::tool_ok("ar", &["rcs", "libother.a", "other.o"], &dir);
    for (case, flag) in [
        ("none", None),
        ("one", Some("-Wl,--exclude-libs,libhelper.a")),
        ("list", Some("-Wl,--exclude-libs=libother.a:libhelper.a")),
        ("all", Some("-Wl,--exclude-libs,ALL")),
        ("unrelated", Some("-Wl,--exclude-libs=libnothing.a")),
    ] {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let out = format!("libapi-{case}-{side}.so");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-shared", "-o", out.as_str(), "lib.o"];
            args.extend(flag);
            args.extend(["-L.", "-lhelper", "-lother"]);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{case} ({side}):\n{}", o.log());
            views.push(common::dynamic_exports(&dir, &out));
            let exe = format!("main-{case}-{side}");
            let o = common::tool(
                "gcc",
                &[&b, "-o", &exe, "main.o", &out, "-Wl,-rpath,$ORIGIN"],
                Some(&dir),
            );
            assert!(o.success(), "{case} ({side}) program:\n{}", o.log());
            let status = std::process::Command::new(dir.join(&exe)).status().unwrap();
            assert!(status.success(), "{case} ({side}): {status:?}");
        }
        assert!(
            views[0].contains(&"api".to_string()),
            "{case}: {:?}",
            views[0]
        );
        assert_eq!(
            views[1], views[0],
            "{case}: exported symbols differ from GNU ld's"
        );
    }
}
