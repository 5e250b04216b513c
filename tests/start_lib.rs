//! `--start-lib` / `--end-lib` (lld's and gold's; GNU ld has no such option): the objects between them are linked
//! only when they define a symbol the link needs, as archive members are. Skipped for another linker under test.

mod common;

const USED: &str = "int f(void) { return 42; }\n";
/// Would print when linked, and defines a symbol nothing needs.
const UNUSED: &str = "#include <stdio.h>\n__attribute__((constructor)) static void hello(void) { puts(\"unused linked\"); }\n\
    int g(void) { return 1; }\n";
const MAIN: &str =
    "#include <stdio.h>\nint f(void);\nint main(void) { printf(\"%d\\n\", f()); return 0; }\n";

#[test]
fn objects_between_start_lib_and_end_lib_are_lazy() {
    let Some((linker, dir)) =
        common::rivet_only("start-lib", &["gcc", "nm"], "rivet's option, gcc needed")
    else {
        return;
    };
    for (name, text) in [("used.c", USED), ("unused.c", UNUSED), ("main.c", MAIN)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok("gcc", &["-c", "used.c", "unused.c", "main.c"], &dir);
    let shim = common::ld_shim_dir(&linker, "start-lib");
    let b = format!("-B{}/", shim.display());
    let link = |out: &str, extra: &[&str]| {
        let mut args = vec![b.as_str(), "-o", out, "main.o"];
        args.extend_from_slice(extra);
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{out}:\n{}", o.log());
        let run = std::process::Command::new(dir.join(out)).output().unwrap();
        let symbols = common::tool_ok("nm", &[out], &dir);
        (String::from_utf8_lossy(&run.stdout).into_owned(), symbols)
    };
    let (stdout, symbols) = link(
        "lazy",
        &["-Wl,--start-lib", "used.o", "unused.o", "-Wl,--end-lib"],
    );
    assert_eq!(stdout, "42\n");
    assert!(
        !symbols.contains(" g\n"),
        "the unused object was linked:\n{symbols}"
    );
    // Outside the pair, and with --whole-archive, every object is linked.
    let (stdout, symbols) = link("eager", &["used.o", "unused.o"]);
    assert_eq!(stdout, "unused linked\n42\n");
    assert!(symbols.contains(" T g\n"));
    let (stdout, _) = link(
        "whole",
        &[
            "-Wl,--whole-archive,--start-lib",
            "used.o",
            "unused.o",
            "-Wl,--end-lib,--no-whole-archive",
        ],
    );
    assert_eq!(stdout, "unused linked\n42\n");
}
