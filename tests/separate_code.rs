//! `-z separate-code` (the default on x86-64) and `-z noseparate-code`: the order of the loadable segments'
//! permissions must be GNU ld's (read-only, code, read-only, writable; or, without separate code, code with the
//! headers and read-only data, then writable), and the programs must run. Consecutive writable segments count as
//! one (a script may split them).

mod common;

const HELLO: &str = "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n";

/// The permissions of the `PT_LOAD`s of `exe`, in order, with consecutive equal ones merged.
fn load_flags(dir: &std::path::Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-lW", exe], dir);
    let mut v: Vec<String> = Vec::new();
    for l in out.lines().filter(|l| l.trim_start().starts_with("LOAD")) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let flags = f[6..f.len() - 1].join(" ");
        if v.last() != Some(&flags) {
            v.push(flags);
        }
    }
    v
}

#[test]
fn segment_permissions_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("separate-code", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("hello.c"), HELLO).unwrap();
    for (kind, cflag) in [
        ("-pie", "-fPIE"),
        ("-no-pie", "-fno-pie"),
        ("-static", "-fPIE"),
    ] {
        common::tool_ok("gcc", &[cflag, "-c", "hello.c"], &dir);
        for z in ["-Wl,-z,separate-code", "-Wl,-z,noseparate-code"] {
            let mut views = Vec::new();
            for (side, shim) in [("ref", &bfd), ("test", &shim)] {
                let exe = format!("hello{kind}{}-{side}", &z[8..]);
                let b = format!("-B{}/", shim.display());
                let o = common::tool("gcc", &[&b, kind, z, "-o", &exe, "hello.o"], Some(&dir));
                assert!(o.success(), "{kind} {z} ({side}):\n{}", o.log());
                let run = std::process::Command::new(dir.join(&exe)).output().unwrap();
                assert_eq!(run.stdout, b"hello\n", "{kind} {z} ({side})");
                views.push(load_flags(&dir, &exe));
            }
            assert_eq!(
                views[1], views[0],
                "{kind} {z}: PT_LOAD permissions differ from GNU ld's"
            );
        }
    }
}
