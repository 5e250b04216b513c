//! Common symbols and archive members (issue 31): GNU ld pulls an archive member that defines a name, so far only
//! common, as initialized data, and that definition wins; a member defining it as a function (or as another
//! common) is not pulled. Compared with GNU ld: the program's exit status and whether the member was linked.

mod common;

#[test]
fn commons_pull_data_definitions_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("common-archive", &["gcc", "ar", "nm"])
    else {
        return;
    };
    let files = [
        (
            "m.c",
            "int shared_var;\nint main(void) { return shared_var; }\n",
        ),
        ("data.c", "int shared_var = 3;\nint data_marker = 1;\n"),
        (
            "func.c",
            "int shared_var(void) { return 1; }\nint func_marker = 1;\n",
        ),
        ("comm.c", "int shared_var;\nint comm_marker = 1;\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok(
        "gcc",
        &["-fcommon", "-c", "m.c", "data.c", "func.c", "comm.c"],
        &dir,
    );
    for (lib, member) in [
        ("data", "data_marker"),
        ("func", "func_marker"),
        ("comm", "comm_marker"),
    ] {
        common::tool_ok(
            "ar",
            &["rcs", &format!("lib{lib}.a"), &format!("{lib}.o")],
            &dir,
        );
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let b = format!("-B{}/", shim.display());
            let o = common::tool(
                "gcc",
                &[&b, "-o", "x", "m.o", &format!("lib{lib}.a")],
                Some(&dir),
            );
            assert!(o.success(), "{lib} ({side}): {}", o.log());
            let status = std::process::Command::new(dir.join("x"))
                .status()
                .unwrap()
                .code();
            let linked = common::tool_ok("nm", &["x"], &dir).contains(member);
            views.push((status, linked));
        }
        assert_eq!(
            views[1], views[0],
            "lib{lib}.a: (exit status, member linked) differ from GNU ld"
        );
    }
}
