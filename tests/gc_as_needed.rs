//! `--gc-sections` with `--as-needed` in lld's strict sense: a shared object stays in DT_NEEDED only if a live
//! section makes a non-weak reference to a symbol it defines. A library referenced only from a function that
//! `--gc-sections` removes, or only weakly, is dropped; one referenced from live code stays. Without
//! `--gc-sections` the dead function's reference still counts (as in GNU ld).
//!
//! GNU ld decides `--as-needed` before collecting garbage, so this is not compared against it; the program must
//! still run. Skipped when `RIVET_TEST_LINKER` points at another linker.

mod common;

use common::tool_ok as run;
use std::path::Path;

fn needed(dir: &Path, exe: &str) -> Vec<String> {
    run("readelf", &["-dW", exe], dir)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_string()))
        .collect()
}

#[test]
fn gc_drops_libraries_only_dead_code_uses() {
    let Some((linker, dir)) = common::rivet_only(
        "gc-as-needed",
        &["gcc"],
        "lld's rule, not GNU ld's; gcc needed",
    ) else {
        return;
    };
    for (lib, func) in [
        ("dead", "dead_fn"),
        ("weak", "weak_fn"),
        ("live", "live_fn"),
    ] {
        let src = format!("{lib}.c");
        std::fs::write(
            dir.join(&src),
            format!("int {func}(int x) {{ return x + 1; }}\n"),
        )
        .unwrap();
        run(
            "gcc",
            &["-shared", "-fPIC", "-o", &format!("lib{lib}.so"), &src],
            &dir,
        );
    }
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\nint dead_fn(int); int live_fn(int);\n\
         extern int weak_fn(int) __attribute__((weak));\n\
         int never_called(int x) { return dead_fn(x); }\n\
         int main(void) { printf(\"%d %d\\n\", live_fn(1), weak_fn ? weak_fn(1) : -1); return 0; }\n",
    )
    .unwrap();
    run("gcc", &["-c", "-O1", "-ffunction-sections", "main.c"], &dir);
    let shim = common::ld_shim_dir(&linker, "gc-as-needed");
    let link = |out: &str, gc: bool| {
        let mut args = vec![
            format!("-B{}/", shim.display()),
            "-o".into(),
            out.into(),
            "main.o".into(),
        ];
        if gc {
            args.push("-Wl,--gc-sections".into());
        }
        for a in [
            "-L.",
            "-Wl,--as-needed",
            "-ldead",
            "-lweak",
            "-llive",
            "-Wl,--no-as-needed",
        ] {
            args.push(a.into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::tool("gcc", &args, Some(&dir));
        assert!(out.success(), "link failed:\n{}", out.log());
    };
    link("gc", true);
    link("nogc", false);
    let libs = |exe| needed(&dir, exe);
    let gc = libs("gc");
    assert!(gc.contains(&"liblive.so".to_string()), "{gc:?}");
    assert!(!gc.contains(&"libdead.so".to_string()), "{gc:?}");
    assert!(!gc.contains(&"libweak.so".to_string()), "{gc:?}");
    let nogc = libs("nogc");
    assert!(nogc.contains(&"libdead.so".to_string()), "{nogc:?}");
    assert!(!nogc.contains(&"libweak.so".to_string()), "{nogc:?}");
    let env_run = |exe: &str| {
        let mut cmd = std::process::Command::new(dir.join(exe));
        cmd.env("LD_LIBRARY_PATH", &dir);
        let out = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(20));
        assert!(out.success(), "{exe}:\n{}", out.log());
        out.stdout_str()
    };
    assert_eq!(env_run("gc"), "2 -1\n");
    assert_eq!(env_run("nogc"), "2 -1\n");
}

/// A live weak reference keeps a library when some other (even removed) code refers to the symbol strongly, as
/// in lld, where the symbol's binding decides; a versioned definition must then come with its DT_NEEDED and
/// version requirement.
#[test]
fn live_weak_reference_to_a_strongly_referenced_symbol() {
    let Some((linker, dir)) = common::rivet_only(
        "gc-as-needed-weak",
        &["gcc"],
        "lld's rule, not GNU ld's; gcc needed",
    ) else {
        return;
    };
    std::fs::write(dir.join("foo.c"), "int foo(void) { return 42; }\n").unwrap();
    std::fs::write(dir.join("foo.map"), "V1 { global: foo; local: *; };\n").unwrap();
    run(
        "gcc",
        &[
            "-shared",
            "-fPIC",
            "-Wl,--version-script=foo.map",
            "-o",
            "libfoo.so",
            "foo.c",
        ],
        &dir,
    );
    std::fs::write(
        dir.join("a.c"),
        "#include <stdio.h>\nextern int foo(void) __attribute__((weak));\n\
         int main(void) { printf(\"%d\\n\", foo ? foo() : -1); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.c"),
        "int foo(void);\nint unused_caller(void) { return foo(); }\n",
    )
    .unwrap();
    run(
        "gcc",
        &["-c", "-O1", "-ffunction-sections", "a.c", "b.c"],
        &dir,
    );
    let shim = common::ld_shim_dir(&linker, "gc-as-needed-weak");
    let out = common::tool(
        "gcc",
        &[
            &format!("-B{}/", shim.display()),
            "-o",
            "prog",
            "a.o",
            "b.o",
            "-Wl,--gc-sections",
            "-L.",
            "-Wl,--as-needed",
            "-lfoo",
            "-Wl,--no-as-needed",
        ],
        Some(&dir),
    );
    assert!(out.success(), "link failed:\n{}", out.log());
    let libs = needed(&dir, "prog");
    assert!(libs.contains(&"libfoo.so".to_string()), "{libs:?}");
    let mut cmd = std::process::Command::new(dir.join("prog"));
    cmd.env("LD_LIBRARY_PATH", &dir);
    let r = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(20));
    assert!(r.success(), "{}", r.log());
    assert_eq!(r.stdout_str(), "42\n");
}
