//! What a Linux kernel build (issue 33, `tests/realworld/kernel.sh`) asks of the linker, each as a small
//! reproducer linked by rivet and by GNU ld and compared.

mod common;

use common::tool_ok as run;

/// kbuild's `vmlinux.a` is a thin archive made from other thin archives (`ar cDPrST vmlinux.a */built-in.a`).
/// GNU ar keeps a 15-character member path's own `/` terminator after the long-name index it writes, so the
/// member's name field reads `/0             /`; GNU ld reads the index's digits and ignores the rest.
#[test]
fn nested_thin_archive_long_name_with_terminator() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("kernel-thin-nested", &["gcc", "ar"]) else {
        return;
    };
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    // "sub/abcdefghi.o" is 15 characters: stored with its terminator in the inner archive's name field.
    std::fs::write(dir.join("sub/abcdefghi.c"), "int f(void) { return 42; }\n").unwrap();
    std::fs::write(
        dir.join("main.c"),
        "int f(void);\nint main(void) { return f() - 42; }\n",
    )
    .unwrap();
    run("gcc", &["-c", "sub/abcdefghi.c", "-o", "sub/abcdefghi.o"], &dir);
    run("gcc", &["-c", "main.c"], &dir);
    run("ar", &["cDPrST", "sub/built-in.a", "sub/abcdefghi.o"], &dir);
    run("ar", &["cDPrST", "outer.a", "sub/built-in.a"], &dir);
    let raw = std::fs::read(dir.join("outer.a")).unwrap();
    assert!(
        raw.windows(16).any(|w| w.starts_with(b"/0 ") && w.ends_with(b"/")),
        "ar no longer writes the terminator this test is about"
    );
    for (out, shim) in [("prog.gnu", &bfd), ("prog.rivet", &shim)] {
        let b = format!("-B{}/", shim.display());
        let args = [
            b.as_str(),
            "-o",
            out,
            "main.o",
            "-Wl,--whole-archive",
            "outer.a",
            "-Wl,--no-whole-archive",
        ];
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{out}: link failed:\n{}", o.log());
        let ran = common::tool(&format!("./{out}"), &[], Some(&dir));
        assert_eq!(ran.code, Some(0), "{out} did not run:\n{}", ran.log());
    }
}
