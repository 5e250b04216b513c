//! A thin archive's members live in their own files, which rivet (through the archive's symbol index) opens only
//! for the members resolution pulls in, as GNU ld does: a missing file of a member nothing needs is no error, a
//! missing file of a needed member is one that names it. Both outcomes are checked against GNU ld's.
//!
//! Skipped when `RIVET_TEST_LINKER` points at another linker.

mod common;

use common::tool_ok as run;

#[test]
fn only_pulled_thin_members_are_opened() {
    let Some((linker, dir)) = common::rivet_only(
        "thin-archive-files",
        &["gcc", "ar"],
        "rivet's thin-archive reading, gcc and ar needed",
    ) else {
        return;
    };
    let files = [
        (
            "main.c",
            "int used(void);\nint main(void) { return used() - 42; }\n",
        ),
        ("used.c", "int used(void) { return 42; }\n"),
        ("unused.c", "int unused(void) { return 1; }\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        run("gcc", &["-c", "-O1", name], &dir);
    }
    run("ar", &["rcsT", "libthin.a", "used.o", "unused.o"], &dir);
    let shim = common::ld_shim_dir(&linker, "thin-archive-files");
    let link = |out: &str, rivet: bool| {
        let shim_arg = format!("-B{}/", shim.display());
        let mut args = vec!["-o", out, "main.o", "libthin.a"];
        if rivet {
            args.insert(0, &shim_arg);
        }
        common::tool("gcc", &args, Some(&dir))
    };

    // The unused member's file is gone: nothing opens it.
    std::fs::remove_file(dir.join("unused.o")).unwrap();
    for (out, rivet) in [("prog.gnu", false), ("prog.rivet", true)] {
        let o = link(out, rivet);
        assert!(
            o.success(),
            "link without the unused member failed:\n{}",
            o.log()
        );
        let ran = common::tool(&format!("./{out}"), &[], Some(&dir));
        assert_eq!(ran.code, Some(0), "{out} did not run:\n{}", ran.log());
    }

    // The used member's file is gone: an error naming the archive and the file.
    std::fs::remove_file(dir.join("used.o")).unwrap();
    assert!(
        !link("bad.gnu", false).success(),
        "GNU ld linked without used.o"
    );
    let o = link("bad.rivet", true);
    assert_eq!(
        o.code,
        Some(1),
        "rivet should fail with exit status 1:\n{}",
        o.log()
    );
    let err = o.stderr_str();
    assert!(
        err.contains("libthin.a") && err.contains("used.o"),
        "the error should name libthin.a and used.o:\n{err}"
    );
    assert!(!dir.join("bad.rivet").exists(), "an output was left behind");
}
