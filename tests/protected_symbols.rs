//! Protected symbols of a shared library referenced from an executable (issue 31): the library binds its own
//! references to them, so a copy relocation (data) or a canonical PLT entry (a function's address in
//! position-dependent code) would give the executable a different object or address. GNU ld and lld refuse both;
//! so does rivet, naming the symbol, the library and the place. Position-independent code links and keeps pointer
//! equality.

mod common;

const LIB: &str = r#"
__attribute__((visibility("protected"))) int pdata = 5;
__attribute__((visibility("protected"))) int pfunc(void) { return 6; }
int *get_pdata_addr(void) { return &pdata; }
int (*get_pfunc_addr(void))(void) { return pfunc; }
"#;
const MAIN: &str = r#"
#include <stdio.h>
extern int pdata;
extern int pfunc(void);
extern int *get_pdata_addr(void);
extern int (*get_pfunc_addr(void))(void);
int main(void) { printf("%d %d %d %d\n", pdata, pfunc(), &pdata == get_pdata_addr(), pfunc == get_pfunc_addr()); return 0; }
"#;

#[test]
fn protected_symbols_are_not_copied_or_given_canonical_entries() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("protected-symbols", &["gcc"]) else {
        return;
    };
    std::fs::write(dir.join("lib.c"), LIB).unwrap();
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    common::tool_ok("gcc", &["-fPIC", "-shared", "-o", "libp.so", "lib.c"], &dir);
    for (cflag, kind, links) in [
        ("-fno-pie", "-no-pie", false),
        ("-fPIE", "-pie", false),
        ("-fPIC", "-pie", true),
        ("-fPIC", "-no-pie", true),
    ] {
        common::tool_ok("gcc", &[cflag, "-c", "m.c", "-o", "m.o"], &dir);
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let b = format!("-B{}/", shim.display());
            let o = common::tool(
                "gcc",
                &[
                    &b,
                    kind,
                    "-o",
                    "x",
                    "m.o",
                    "-L.",
                    "-lp",
                    "-Wl,-rpath,$ORIGIN",
                ],
                Some(&dir),
            );
            assert_eq!(o.success(), links, "{cflag} {kind} ({side}): {}", o.log());
            if links {
                let run = std::process::Command::new(dir.join("x")).output().unwrap();
                assert_eq!(run.stdout, b"5 6 1 1\n", "{cflag} {kind} ({side})");
            } else if side == "test" {
                let err = o.stderr_str();
                assert!(
                    err.contains("against symbol 'pdata'")
                        && err.contains(">>> defined in libp.so"),
                    "{err}"
                );
            }
        }
    }
}
