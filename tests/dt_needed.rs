//! `DT_NEEDED` of a shared library without `DT_SONAME`: GNU ld records the path as the command line wrote it
//! (`sub/libx.so`, `/abs/sub/libx.so`), and the file name alone for a library found on the search path (`-lx`,
//! `-l:libx.so`). The dynamic loader looks the entry up as written, so a program linked with the wrong one cannot
//! find its library. Each link is made with GNU ld and with the linker under test, the entries must be equal, and
//! the program must run (from the directory the relative paths are relative to).

mod common;

use std::path::Path;

const LIB: &str = "int x(void) { return 42; }\n";
const MAIN: &str =
    "#include <stdio.h>\nint x(void);\nint main(void) { printf(\"x=%d\\n\", x()); return 0; }\n";

/// The `NEEDED` entries of `exe` other than libc's, in order.
fn needed(dir: &Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-dW", exe], dir);
    out.lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_string()))
        .filter(|n| !n.starts_with("libc.so"))
        .collect()
}

#[test]
fn needed_names_of_libraries_without_soname() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("dt-needed", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::write(dir.join("x.c"), LIB).unwrap();
    std::fs::write(dir.join("main.c"), MAIN).unwrap();
    // The library is made by GNU ld, without -soname.
    common::tool_ok(
        "gcc",
        &[
            "-fPIC",
            "-shared",
            "-fuse-ld=bfd",
            "-o",
            "sub/libx.so",
            "x.c",
        ],
        &dir,
    );
    common::tool_ok("gcc", &["-c", "main.c"], &dir);
    let abs = dir.join("sub/libx.so").display().to_string();
    let cases: [(&str, Vec<&str>, Option<&str>); 4] = [
        ("path", vec!["sub/libx.so"], None),
        ("absolute", vec![abs.as_str()], None),
        ("search", vec!["-Lsub", "-lx"], Some("sub")),
        ("search-exact", vec!["-Lsub", "-l:libx.so"], Some("sub")),
    ];
    for (name, libs, lib_path) in cases {
        let mut names = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("{name}-{side}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", exe.as_str(), "main.o"];
            args.extend(libs.iter().copied());
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{name} ({side}):\n{}", o.log());
            names.push(needed(&dir, &exe));
            let mut run = std::process::Command::new(dir.join(&exe));
            run.current_dir(&dir);
            if let Some(p) = lib_path {
                run.env("LD_LIBRARY_PATH", dir.join(p));
            }
            let out = run.output().unwrap();
            assert!(
                out.status.success() && out.stdout == b"x=42\n",
                "{name} ({side}) does not run: {:?} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            names[1], names[0],
            "{name}: DT_NEEDED differs from GNU ld's"
        );
    }
}
