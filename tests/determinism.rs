//! Determinism: the same link with `--threads=1`, `2`, `4` and `8` (and a second `--threads=2` run, and one with
//! `--no-mmap-output-file`) gives byte-identical output, for a moderately sized generated program (many objects
//! with functions, strings, TLS, data tables with relocations, debug info, an archive and a GNU-ld-built shared
//! library) in several output kinds.
//!
//! With `RIVET_TEST_LINKER` set (e.g. to GNU ld, which has no `--threads`), the thread options are left out and the
//! test only checks that two identical links agree.

mod common;

use common::Compiler;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const FILES: usize = 64;
const FUNCS: usize = 50;
const IN_ARCHIVE: usize = 10; // the last IN_ARCHIVE generated files go into libgen.a

fn gen_source(i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#include <string.h>\n#include <stdio.h>");
    let _ = writeln!(s, "__thread int tls_{i} = {i};");
    let _ = writeln!(s, "static __thread long tls_bss_{i};");
    let _ = write!(s, "static const char *const names_{i}[] = {{");
    for j in 0..8 {
        let _ = write!(s, "\"name_{i}_{j}\", ");
    }
    let _ = writeln!(s, "\"a literal every file shares\"}};");
    let _ = write!(s, "int data_{i}[{FUNCS}] = {{");
    for j in 0..FUNCS {
        let _ = write!(s, "{}, ", (i * 31 + j * 17) % 101);
    }
    let _ = writeln!(s, "}};");
    let _ = writeln!(s, "long zeroed_{i}[{}];", 100 + i * 10);
    for j in 0..FUNCS {
        let _ = writeln!(
            s,
            "static int helper_{i}_{j}(int x) {{ return x * {j} + {i}; }}"
        );
        let _ = writeln!(
            s,
            "int fn_{i}_{j}(int x) {{ tls_bss_{i} += x; return helper_{i}_{j}(x) + (int)strlen(names_{i}[{}]) + data_{i}[{j}]; }}",
            j % 9
        );
    }
    let _ = writeln!(s, "int unused_{i}(int x) {{ return x + {i}; }}");
    let _ = writeln!(
        s,
        "struct entry_{i} {{ const char *name; int (*fn)(int); }};"
    );
    let _ = write!(s, "static const struct entry_{i} table_{i}[] = {{");
    for j in 0..FUNCS {
        let _ = write!(s, "{{\"fn_{i}_{j}\", fn_{i}_{j}}}, ");
    }
    let _ = writeln!(s, "}};");
    let _ = writeln!(
        s,
        "long run_{i}(void) {{ long sum = tls_{i}; for (unsigned k = 0; k < sizeof table_{i} / sizeof table_{i}[0]; k++) \
         sum += table_{i}[k].fn((int)k) + (long)strlen(table_{i}[k].name); zeroed_{i}[3] = sum; \
         return sum + tls_bss_{i} + zeroed_{i}[3] % 7; }}"
    );
    s
}

fn gen_main() -> String {
    let mut s = String::from("#include <stdio.h>\nint shlib_value(int);\n");
    for i in 0..FILES {
        let _ = writeln!(s, "long run_{i}(void);");
    }
    s.push_str("int main(void) {\n    long total = shlib_value(3);\n");
    for i in 0..FILES {
        let _ = writeln!(s, "    total += run_{i}();");
    }
    s.push_str("    printf(\"total=%ld\\n\", total);\n    return 0;\n}\n");
    s
}

fn must(out: common::Outcome, what: &str) {
    assert!(out.success(), "{what} failed:\n{}", out.log());
}

/// Generates and compiles the program into `dir` (objects, libgen.a, libshlib.so); returns the object names.
fn build_inputs(dir: &Path, cc: &str) -> Vec<String> {
    common::fresh_dir(dir);
    let mut names: Vec<String> = (0..FILES).map(|i| format!("gen_{i:02}")).collect();
    names.push("main".into());
    for (i, n) in names.iter().enumerate() {
        let text = if n == "main" {
            gen_main()
        } else {
            gen_source(i)
        };
        std::fs::write(dir.join(format!("{n}.c")), text).unwrap();
    }
    std::fs::write(
        dir.join("shlib.c"),
        "int shlib_value(int x) { return x * 1000; }\n",
    )
    .unwrap();
    // Compile with as many workers as there are cores.
    let chunks: Vec<Vec<String>> = {
        let n = common::jobs().max(1);
        let mut c = vec![Vec::new(); n];
        for (i, name) in names.iter().enumerate() {
            c[i % n].push(name.clone());
        }
        c
    };
    std::thread::scope(|s| {
        for chunk in &chunks {
            s.spawn(move || {
                for n in chunk {
                    let c = format!("{n}.c");
                    let o = format!("{n}.o");
                    let args = [
                        "-c",
                        "-O1",
                        "-g",
                        "-fPIE",
                        "-ffunction-sections",
                        "-fdata-sections",
                        &c,
                        "-o",
                        &o,
                    ];
                    must(
                        common::tool(cc, &args, Some(dir)),
                        &format!("compiling {c}"),
                    );
                }
            });
        }
    });
    let archived: Vec<String> = names[FILES - IN_ARCHIVE..FILES]
        .iter()
        .map(|n| format!("{n}.o"))
        .collect();
    let mut ar_args = vec!["rcs".to_string(), "libgen.a".to_string()];
    ar_args.extend(archived.iter().cloned());
    let ar_refs: Vec<&str> = ar_args.iter().map(String::as_str).collect();
    must(common::tool("ar", &ar_refs, Some(dir)), "ar");
    must(
        common::tool(
            cc,
            &[
                "-shared",
                "-fPIC",
                "-O1",
                "shlib.c",
                "-o",
                "libshlib.so",
                "-Wl,-soname,libshlib.so",
            ],
            Some(dir),
        ),
        "building libshlib.so",
    );
    must(
        common::tool(
            cc,
            &["-c", "-fPIE", "-O1", "shlib.c", "-o", "shlib_static.o"],
            Some(dir),
        ),
        "compiling shlib.c",
    );
    let mut objs: Vec<String> = names
        .iter()
        .map(|n| format!("{n}.o"))
        .filter(|o| !archived.contains(o))
        .collect();
    objs.push("libgen.a".into());
    objs
}

fn link(
    dir: &Path,
    cc: Compiler,
    flags: &[&str],
    objs: &[String],
    libs: &[&str],
    out: &Path,
    extra: &[String],
) -> Vec<u8> {
    let (linker, _) = common::linker_under_test();
    let shim = common::ld_shim_dir(&linker, "determinism");
    let mut cmd = Command::new(cc.driver(false));
    cmd.current_dir(dir).stdin(Stdio::null());
    cmd.args(cc.test_link_flags(&linker, &shim));
    cmd.args(flags).arg("-o").arg(out).args(objs).args(libs);
    cmd.args(extra);
    let o = common::run_with_timeout(&mut cmd, Duration::from_secs(300));
    must(o, &format!("linking {}", out.display()));
    std::fs::read(out).unwrap()
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(p) => format!(
            "first difference at byte {p:#x} of {:#x}/{:#x}",
            a.len(),
            b.len()
        ),
        None => format!("sizes differ: {:#x} vs {:#x}", a.len(), b.len()),
    }
}

#[test]
fn same_output_for_any_thread_count() {
    let (linker, overridden) = common::linker_under_test();
    assert!(
        linker.exists(),
        "linker under test {} does not exist",
        linker.display()
    );
    let cc = Compiler::Gcc;
    let dir = common::work_root().join("determinism");
    let objs = build_inputs(&dir, cc.driver(false));
    // (name, flags before the objects, inputs after them); static links get the library's function from an object.
    let kinds: [(&str, &[&str], &[&str]); 4] = [
        ("pie", &["-pie", "-Wl,--build-id=sha1"], &["-L.", "-lshlib"]),
        (
            "nopie-gc",
            &["-no-pie", "-Wl,--gc-sections", "-Wl,-z,now"],
            &["-L.", "-lshlib"],
        ),
        (
            "static",
            &["-static", "-Wl,--build-id"],
            &["shlib_static.o"],
        ),
        ("static-pie", &["-static-pie"], &["shlib_static.o"]),
    ];
    let mut failures = Vec::new();
    for (name, flags, libs) in kinds {
        let out_dir: PathBuf = dir.join(name);
        common::fresh_dir(&out_dir);
        // The other output strategy (a heap buffer written with write(2)) must give the same bytes too.
        let runs: Vec<(String, Option<u32>, bool)> = if overridden {
            vec![
                ("first".into(), None, false),
                ("second".into(), None, false),
            ]
        } else {
            vec![
                ("threads1".into(), Some(1), false),
                ("threads2".into(), Some(2), false),
                ("threads2-again".into(), Some(2), false),
                ("threads4".into(), Some(4), false),
                ("threads8".into(), Some(8), false),
                ("no-mmap-threads2".into(), Some(2), true),
            ]
        };
        let mut outputs = Vec::new();
        for (label, threads, no_mmap) in &runs {
            let out = out_dir.join(format!("prog-{label}"));
            let mut extra: Vec<String> = threads
                .iter()
                .map(|t| format!("-Wl,--threads={t}"))
                .collect();
            if *no_mmap {
                extra.push("-Wl,--no-mmap-output-file".into());
            }
            outputs.push((
                label.clone(),
                link(&dir, cc, flags, &objs, libs, &out, &extra),
                out,
            ));
        }
        let (base_label, base, base_path) = &outputs[0];
        for (label, bytes, _) in &outputs[1..] {
            if bytes != base {
                failures.push(format!(
                    "{name}: {label} differs from {base_label}: {}",
                    first_difference(base, bytes)
                ));
            }
        }
        // The output must also work.
        let mut run = Command::new(base_path);
        run.env("LD_LIBRARY_PATH", &dir).stdin(Stdio::null());
        let r = common::run_with_timeout(&mut run, Duration::from_secs(30));
        if !r.success() || !r.stdout_str().starts_with("total=") {
            failures.push(format!("{name}: program does not run: {}", r.status_text()));
        }
    }
    assert!(
        failures.is_empty(),
        "non-deterministic output:\n{}",
        failures.join("\n")
    );
}
