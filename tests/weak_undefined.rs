//! Weak undefined symbols in executables (issue 31): GNU ld on x86-64 leaves those of default visibility to the
//! dynamic linker in a PIE (`-z dynamic-undefined-weak` asks for it in any dynamic executable, `-z
//! nodynamic-undefined-weak` turns it off), so a library loaded at run time (here by `LD_PRELOAD`) can define
//! them; a hidden one stays 0. Each output's `.dynsym` and its behaviour with and without the library are compared
//! with GNU ld's.

mod common;

use std::process::Command;

const MAIN: &str = r#"
#include <stdio.h>
__attribute__((weak)) extern int maybe(void);
__attribute__((weak, visibility("hidden"))) extern int never(void);
int main(void) { printf("%d %d\n", maybe ? maybe() : -1, never ? never() : -1); return 0; }
"#;
const PRELOAD: &str = "int maybe(void) { return 7; }\nint never(void) { return 8; }\n";

fn weak_dynsyms(dir: &std::path::Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["--dyn-syms", "-W", exe], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter(|l| l.contains(" WEAK ") && l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().nth(7).map(str::to_string))
        .filter(|n| n == "maybe" || n == "never")
        .collect();
    v.sort();
    v
}

#[test]
fn weak_undefined_symbols_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("weak-undefined", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("main.c"), MAIN).unwrap();
    std::fs::write(dir.join("pre.c"), PRELOAD).unwrap();
    common::tool_ok(
        "gcc",
        &["-fPIC", "-shared", "-o", "libpre.so", "pre.c"],
        &dir,
    );
    let cases: &[(&str, &[&str])] = &[
        ("-fPIE", &["-pie"]),
        ("-fPIE", &["-pie", "-Wl,-z,nodynamic-undefined-weak"]),
        ("-fno-pie", &["-no-pie"]),
        ("-fno-pie", &["-no-pie", "-Wl,-z,dynamic-undefined-weak"]),
    ];
    for (k, (cflag, flags)) in cases.iter().enumerate() {
        common::tool_ok("gcc", &[cflag, "-c", "main.c", "-o", "main.o"], &dir);
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("w{k}-{side}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", &exe, "main.o"];
            args.extend_from_slice(flags);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{flags:?} ({side}): {}", o.log());
            let plain = Command::new(dir.join(&exe)).output().unwrap();
            let preloaded = Command::new(dir.join(&exe))
                .env("LD_PRELOAD", dir.join("libpre.so"))
                .output()
                .unwrap();
            views.push((
                weak_dynsyms(&dir, &exe),
                String::from_utf8_lossy(&plain.stdout).into_owned(),
                String::from_utf8_lossy(&preloaded.stdout).into_owned(),
            ));
        }
        assert_eq!(views[1], views[0], "{cflag} {flags:?}: differs from GNU ld");
    }
}
