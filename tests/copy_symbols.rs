//! Data an executable copies from a shared library (a copy relocation: `optind`, `stdout`, a library's own
//! variable) is defined in the executable's `.symtab` at the copy, as GNU ld lists it, not an undefined symbol of
//! value 0: a debugger reads the variable there (gdb's `print optind` read the library's stale copy), and
//! `--emit-relocs` relocations against it name the copy.

mod common;

use std::path::Path;

const MAIN: &str = r#"
#include <stdio.h>
#include <unistd.h>
extern int lib_data;
__attribute__((noinline)) void done(void) { __asm__ volatile(""); }
int main(void) {
    optind += 40;
    lib_data += 1;
    fprintf(stdout, "%d %d\n", optind, lib_data);
    done();
    return 0;
}
"#;

/// `.symtab`'s entries of the copied symbols: name (without a version), value, size, section name.
fn copied(dir: &Path, exe: &str) -> Vec<String> {
    let sections = common::tool_ok("readelf", &["-SW", exe], dir);
    let name_of = |ndx: &str| -> String {
        let Ok(n) = ndx.parse::<u32>() else {
            return ndx.to_string();
        };
        (sections.lines())
            .find_map(|l| {
                let l = l.trim_start().strip_prefix('[')?;
                let (k, rest) = l.split_once(']')?;
                (k.trim().parse::<u32>().ok()? == n)
                    .then(|| rest.split_whitespace().next().unwrap_or("").to_string())
            })
            .unwrap_or_default()
    };
    let symtab = common::tool_ok("readelf", &["-sW", exe], dir);
    let mut v: Vec<String> = symtab
        .lines()
        .skip_while(|l| !l.contains("'.symtab'"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = f.get(7)?.split('@').next()?;
            ["optind", "stdout", "lib_data"]
                .contains(&name)
                .then(|| format!("{name} {} {} {}", f[1], f[2], name_of(f[6])))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn copied_data_is_defined_in_symtab_as_gnu_ld() {
    let Some((dir, test, reference)) = common::against_gnu_ld("copy-symbols", &["gcc"]) else {
        return;
    };
    std::fs::write(dir.join("lib.c"), "int lib_data = 42;\n").unwrap();
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    common::tool_ok(
        "gcc",
        &["-fPIC", "-shared", "-o", "liblib.so", "lib.c"],
        &dir,
    );
    for (pie, cflag) in [("-no-pie", "-fno-pie"), ("-pie", "-fPIE")] {
        let obj = format!("m{pie}.o");
        common::tool_ok("gcc", &["-O1", "-g", cflag, "-c", "m.c", "-o", &obj], &dir);
        let link = |shim: &Path, exe: &str| {
            let b = format!("-B{}/", shim.display());
            common::tool_ok(
                "gcc",
                &[
                    &b,
                    pie,
                    &obj,
                    "-L.",
                    "-llib",
                    "-Wl,-rpath,$ORIGIN",
                    "-o",
                    exe,
                ],
                &dir,
            );
            let run = common::tool(&dir.join(exe).display().to_string(), &[], Some(&dir));
            assert_eq!(String::from_utf8_lossy(&run.stdout), "41 43\n", "{exe}");
        };
        link(&reference, "bfd");
        link(&test, "test");
        let (gnu, ours) = (copied(&dir, "bfd"), copied(&dir, "test"));
        assert_eq!(gnu.len(), 3, "{pie}: GNU ld's entries: {gnu:?}");
        // Addresses differ between the linkers; sizes and sections must not, nor being defined.
        let shape = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|e| {
                    let f: Vec<&str> = e.split(' ').collect();
                    format!("{} {} {}", f[0], f[2], f[3])
                })
                .collect()
        };
        assert_eq!(
            shape(&ours),
            shape(&gnu),
            "{pie}: ours {ours:?}, GNU ld's {gnu:?}"
        );
        // The value is the copy's address, the one `.dynsym` gives.
        let dynsym = common::tool_ok("readelf", &["--dyn-syms", "-W", "test"], &dir);
        for e in &ours {
            let f: Vec<&str> = e.split(' ').collect();
            assert!(
                dynsym.lines().any(|l| l.contains(f[1]) && l.contains(f[0])),
                "{pie}: {e} is not .dynsym's copy"
            );
        }
        if common::have_tool("gdb") {
            let out = common::tool_ok(
                "gdb",
                &[
                    "-batch",
                    "-ex",
                    "break done",
                    "-ex",
                    "run",
                    "-ex",
                    "print optind",
                    "-ex",
                    "print lib_data",
                    "./test",
                ],
                &dir,
            );
            assert!(
                out.contains("$1 = 41") && out.contains("$2 = 43"),
                "{pie}: gdb says {out}"
            );
        }
    }
}
