//! Command-line order between archives and shared libraries (issue 31): GNU ld reads its inputs in order, so an
//! archive before a shared library supplies a symbol both define (its member is pulled, and an `--as-needed`
//! library is then not needed), while an archive after the library does not (the library was found first).
//! Compared with GNU ld: whether the library is in `DT_NEEDED` and whether the member's definition is linked.

mod common;

#[test]
fn archive_before_library_wins() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("archive-before-library", &["gcc", "ar", "nm"])
    else {
        return;
    };
    std::fs::write(dir.join("foo.c"), "int foo(void) { return 1; }\n").unwrap();
    std::fs::write(
        dir.join("m.c"),
        "int foo(void);\nint main(void) { return foo() - 1; }\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &["-fPIC", "-shared", "-o", "libfoo.so", "foo.c"],
        &dir,
    );
    common::tool_ok("gcc", &["-c", "foo.c", "-o", "foo_a.o"], &dir);
    common::tool_ok("ar", &["rcs", "libfa.a", "foo_a.o"], &dir);
    common::tool_ok("gcc", &["-c", "m.c"], &dir);
    let orders: &[&[&str]] = &[
        &["libfa.a", "-Wl,--as-needed", "-L.", "-lfoo"],
        &["-Wl,--as-needed", "-L.", "-lfoo", "libfa.a"],
        &["-L.", "-lfoo", "libfa.a"],
        &["libfa.a", "-L.", "-lfoo"],
    ];
    for order in orders {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", "x", "m.o", "-Wl,-rpath,$ORIGIN"];
            args.extend_from_slice(order);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{order:?} ({side}): {}", o.log());
            let needed = common::tool_ok("readelf", &["-dW", "x"], &dir).contains("libfoo.so");
            let linked = common::tool_ok("nm", &["x"], &dir)
                .lines()
                .any(|l| l.ends_with(" T foo"));
            let run = std::process::Command::new(dir.join("x")).status().unwrap();
            assert!(run.success(), "{order:?} ({side})");
            views.push((needed, linked));
        }
        assert_eq!(
            views[1], views[0],
            "{order:?}: (DT_NEEDED libfoo, member linked) differ from GNU ld"
        );
    }
}
