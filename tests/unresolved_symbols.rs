//! `--unresolved-symbols=METHOD`, `--warn-unresolved-symbols` and `--error-unresolved-symbols` (issue 31): which
//! undefined symbols are reported (those the objects reference, those of the shared libraries linked against),
//! as errors or as warnings, link for link as GNU ld decides; and a program whose unresolved references are never
//! reached runs (the symbols are left to the dynamic linker, as lld does; GNU ld's PIE output then fails to load).

mod common;

const MAIN: &str = "#include <stdio.h>\nextern int missing_fn(void);\nextern int missing_var;\n\
    int main(int argc, char **argv) { (void)argv; if (argc > 5) return missing_fn() + missing_var;\n\
    puts(\"ran\"); return 0; }\n";
const LIB: &str = "extern int lib_missing(void);\nint lib_fn(void) { return lib_missing(); }\n";

#[test]
fn unresolved_symbols_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("unresolved-symbols", &["gcc"]) else {
        return;
    };
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    std::fs::write(dir.join("lib.c"), LIB).unwrap();
    common::tool_ok("gcc", &["-c", "m.c"], &dir);
    common::tool_ok("gcc", &["-fPIC", "-shared", "-o", "libu.so", "lib.c"], &dir);
    let cases: &[(&[&str], bool, bool)] = &[
        // (options, links, warns about undefined symbols)
        (&[], false, false),
        (&["-Wl,--unresolved-symbols=report-all"], false, false),
        (&["-Wl,--unresolved-symbols=ignore-all"], true, false),
        (
            &["-Wl,--unresolved-symbols=ignore-in-object-files"],
            true,
            false,
        ),
        (
            &["-Wl,--unresolved-symbols=ignore-in-shared-libs"],
            false,
            false,
        ),
        (&["-Wl,--warn-unresolved-symbols"], true, true),
        (
            &[
                "-Wl,--warn-unresolved-symbols",
                "-Wl,--error-unresolved-symbols",
            ],
            false,
            false,
        ),
        (
            &["-no-pie", "-Wl,--unresolved-symbols=ignore-all"],
            true,
            false,
        ),
    ];
    for (k, (opts, links, warns)) in cases.iter().enumerate() {
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("x{k}-{side}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", &exe, "m.o", "-L.", "-lu", "-Wl,-rpath,."];
            args.extend_from_slice(opts);
            let o = common::tool("gcc", &args, Some(&dir));
            assert_eq!(o.success(), *links, "{opts:?} ({side}):\n{}", o.log());
            if *warns {
                assert!(
                    o.stderr_str().contains("missing_fn"),
                    "{opts:?} ({side}): {}",
                    o.log()
                );
            }
            if *links && side == "test" {
                let run = std::process::Command::new(dir.join(&exe))
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                assert_eq!(
                    run.stdout,
                    b"ran\n",
                    "{opts:?}: {}",
                    String::from_utf8_lossy(&run.stderr)
                );
            }
        }
    }
}
