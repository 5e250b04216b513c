//! `--gc-sections` and the exception tables: a function's LSDA (its `.gcc_except_table` section, which `.eh_frame`
//! names in the function's FDE) lives only as long as the function, as in GNU ld, and so does what the LSDA alone
//! refers to (the typeinfo of a class only a dead function catches). A C++ program from g++ and clang++-19 with
//! unused functions that catch and clean up: the kept `.gcc_except_table` has GNU ld's size, the dead handler's
//! typeinfo is gone as with GNU ld, and the program (which throws and catches) prints what GNU ld's prints.

mod common;

use common::Compiler;

const SOURCE: &str = include_str!("gc_sources/lsda.cc");

/// `.gcc_except_table`'s size in `file`, 0 without one.
fn except_table_size(dir: &std::path::Path, file: &str) -> u64 {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    out.lines()
        .find(|l| l.contains(" .gcc_except_table "))
        .and_then(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let i = f.iter().position(|w| *w == ".gcc_except_table")?;
            u64::from_str_radix(f.get(i + 4)?, 16).ok()
        })
        .unwrap_or(0)
}

#[test]
fn dead_functions_exception_tables_are_collected_as_with_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("gc-eh-frame", &["g++", "readelf", "nm"])
    else {
        return;
    };
    std::fs::write(dir.join("lsda.cc"), SOURCE).unwrap();
    for cc in common::compilers() {
        let cxx = match cc {
            Compiler::Gcc => "g++",
            Compiler::Clang => "clang++-19",
        };
        let obj = format!("lsda-{}.o", cc.name());
        common::tool_ok(
            cxx,
            &[
                "-c",
                "-O2",
                "-ffunction-sections",
                "-fdata-sections",
                "lsda.cc",
                "-o",
                &obj,
            ],
            &dir,
        );
        let mut seen = Vec::new();
        for (side, shim_dir) in [("bfd", &bfd), ("rivet", &shim)] {
            let exe = format!("lsda-{}.{side}", cc.name());
            let b = format!("-B{}/", shim_dir.display());
            let o = common::tool(
                "g++",
                &[&b, "-Wl,--gc-sections", &obj, "-o", &exe],
                Some(&dir),
            );
            assert!(o.success(), "{exe}: {}", o.log());
            let mut run = std::process::Command::new(dir.join(&exe));
            let out = common::run_with_timeout(&mut run, std::time::Duration::from_secs(20));
            assert!(out.success(), "{exe}: {}", out.log());
            let syms = common::tool_ok("nm", &[&exe], &dir);
            let err_typeinfo = syms.lines().any(|l| l.ends_with(" _ZTI3Err"));
            seen.push((
                except_table_size(&dir, &exe),
                err_typeinfo,
                out.stdout_str(),
            ));
        }
        assert!(seen[0].0 > 0, "{}: no exception table", cc.name());
        assert_eq!(
            seen[1],
            seen[0],
            "{}: rivet (left) against GNU ld (right)",
            cc.name()
        );
    }
}
