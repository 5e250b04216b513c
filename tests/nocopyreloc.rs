//! `-z nocopyreloc` (issue 31): an executable's direct reference to a shared library's data, which needs a copy
//! relocation, is an error naming the relocation, symbol, library and place (lld's rule; GNU ld instead makes a
//! text relocation whose program the loader rejects); the same code compiled with -fPIC links and runs.

mod common;

#[test]
fn nocopyreloc_refuses_copy_relocations() {
    let Some((linker, dir)) =
        common::rivet_only("nocopyreloc", &["gcc"], "rivet's diagnostic (lld's rule)")
    else {
        return;
    };
    std::fs::write(dir.join("lib.c"), "int lib_data = 42;\n").unwrap();
    std::fs::write(
        dir.join("m.c"),
        "#include <stdio.h>\nextern int lib_data;\nint main(void) { printf(\"%d\\n\", lib_data); return 0; }\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &["-fPIC", "-shared", "-o", "liblib.so", "lib.c"],
        &dir,
    );
    let shim = common::ld_shim_dir(&linker, "nocopyreloc");
    let b = format!("-B{}/", shim.display());
    common::tool_ok("gcc", &["-fPIE", "-c", "m.c", "-o", "pie.o"], &dir);
    common::tool_ok("gcc", &["-fPIC", "-c", "m.c", "-o", "pic.o"], &dir);
    let link = |obj: &str, z: &str| {
        common::tool(
            "gcc",
            &[&b, "-o", "x", obj, "-L.", "-llib", "-Wl,-rpath,$ORIGIN", z],
            Some(&dir),
        )
    };
    let r = link("pie.o", "-Wl,-z,nocopyreloc");
    assert!(!r.success(), "{}", r.log());
    for want in [
        "R_X86_64_PC32 against symbol 'lib_data' needs a copy relocation",
        ">>> defined in liblib.so",
        ">>> referenced by m.c\n>>>               pie.o:(function main: .text+0x",
    ] {
        assert!(r.stderr_str().contains(want), "{want}: {}", r.log());
    }
    for (obj, z) in [
        ("pie.o", "-Wl,-z,copyreloc"),
        ("pic.o", "-Wl,-z,nocopyreloc"),
    ] {
        let r = link(obj, z);
        assert!(r.success(), "{obj} {z}: {}", r.log());
        let run = std::process::Command::new(dir.join("x")).output().unwrap();
        assert_eq!(run.stdout, b"42\n", "{obj} {z}");
    }
}
