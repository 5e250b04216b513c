//! `--emit-relocs` for what it is for (issue 33): BOLT, the post-link optimiser, rewrites a rivet `-q` output as
//! it rewrites GNU ld's. A C++ program (virtual calls, a jump table, exceptions from split `.cold` functions, two
//! static functions of one name, thread-local data) from g++ and clang++-19, linked `-pie` and `-no-pie` by both
//! linkers with `-q`, is instrumented by `llvm-bolt-19`, run to collect a profile, and optimised with it (block
//! and function reordering, function splitting); every program prints what GNU ld's unoptimised one prints, BOLT
//! works in relocation mode on rivet's output, and finds the same profiled functions and reorders as many as on
//! GNU ld's. Skipped with a message where `llvm-bolt-19` is missing (Debian's `bolt-19`).

mod common;

use common::Compiler;
use std::path::Path;

const SOURCES: &[(&str, &str)] = &[
    ("shapes.cc", include_str!("bolt_sources/shapes.cc")),
    (
        "parse_other.cc",
        include_str!("bolt_sources/parse_other.cc"),
    ),
];

fn run(dir: &Path, exe: &str) -> String {
    let mut cmd = std::process::Command::new(dir.join(exe));
    cmd.current_dir(dir);
    let o = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(60));
    assert!(o.success(), "{exe}:\n{}", o.log());
    o.stdout_str()
}

/// Runs BOLT (`bolt`: its real path, so that it finds its instrumentation runtime next to it) on `input`; returns
/// its log, BOLT's errors asserted absent.
fn bolt(dir: &Path, bolt: &Path, input: &str, output: &str, args: &[&str]) -> String {
    let mut all = vec![input, "-o", output];
    all.extend_from_slice(args);
    let o = common::tool(bolt.to_str().unwrap(), &all, Some(dir));
    let log = format!("{}{}", o.stdout_str(), o.log());
    assert!(o.success(), "llvm-bolt {input} {args:?}:\n{log}");
    assert!(!log.contains("BOLT-ERROR"), "llvm-bolt {input}:\n{log}");
    log
}

/// The lines of BOLT's report that depend on what it understood of the input: whether it could move code
/// (relocation mode), how many functions the profile covers and how many it laid out anew.
fn summary(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| {
            l.contains("enabling relocation mode")
                || l.contains("have non-empty execution profile")
                || l.contains("modified layout of")
                || l.contains("BOLT-WARNING")
        })
        .map(|l| {
            // Addresses differ between the two linkers' outputs.
            l.split_whitespace()
                .filter(|w| !w.starts_with("0x"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn bolt_optimises_rivet_output_as_gnu_ld_output() {
    let Some(bolt_bin) = common::which("llvm-bolt-19").and_then(|p| std::fs::canonicalize(p).ok())
    else {
        eprintln!("skipped: llvm-bolt-19 not found (Debian's bolt-19)");
        return;
    };
    let Some((dir, shim, bfd)) = common::against_gnu_ld("bolt", &["g++"]) else {
        return;
    };
    for (name, text) in SOURCES {
        std::fs::write(dir.join(name), text).unwrap();
    }
    for cc in common::compilers() {
        let cxx = match cc {
            Compiler::Gcc => "g++",
            Compiler::Clang => "clang++-19",
        };
        let tag = cc.name();
        let objs: Vec<String> = SOURCES
            .iter()
            .map(|(n, _)| format!("{}-{tag}.o", n.trim_end_matches(".cc")))
            .collect();
        for ((src, _), obj) in SOURCES.iter().zip(&objs) {
            common::tool_ok(cxx, &["-c", "-O2", src, "-o", obj], &dir);
        }
        let mut expected: Option<String> = None;
        for kind in ["-pie", "-no-pie"] {
            let mut summaries: Vec<Vec<String>> = Vec::new();
            for (side, shim_dir) in [("bfd", &bfd), ("rivet", &shim)] {
                let exe = format!("prog{kind}-{tag}.{side}");
                let b = format!("-B{}/", shim_dir.display());
                let mut args = vec![&b[..], "-Wl,-q", kind, "-o", &exe];
                args.extend(objs.iter().map(|s| &s[..]));
                let o = common::tool("g++", &args, Some(&dir));
                assert!(o.success(), "link {exe}: {}", o.log());
                let plain = run(&dir, &exe);
                let want = expected.get_or_insert_with(|| plain.clone()).clone();
                assert_eq!(plain, want, "{exe}");

                let fdata = dir.join(format!("{exe}.fdata"));
                let _ = std::fs::remove_file(&fdata);
                let profile = format!("-instrumentation-file={}", fdata.display());
                let inst = format!("{exe}.inst");
                let inst_log = bolt(&dir, &bolt_bin, &exe, &inst, &["-instrument", &profile]);
                assert_eq!(run(&dir, &inst), want, "{inst}");
                assert!(fdata.is_file(), "{inst} wrote no profile:\n{inst_log}");

                let data = format!("-data={}", fdata.display());
                let opt = format!("{exe}.bolt");
                let opt_log = bolt(
                    &dir,
                    &bolt_bin,
                    &exe,
                    &opt,
                    &[
                        &data,
                        "-reorder-blocks=ext-tsp",
                        "-reorder-functions=cdsort",
                        "-split-functions",
                        "-split-eh",
                    ],
                );
                assert_eq!(run(&dir, &opt), want, "{opt}");
                let s = summary(&opt_log);
                assert!(
                    s.iter().any(|l| l.contains("enabling relocation mode")),
                    "{opt}: BOLT did not use the relocations:\n{opt_log}"
                );
                summaries.push(s);
            }
            assert_eq!(
                summaries[1], summaries[0],
                "{kind} {tag}: BOLT's report on rivet's output (right) differs from that on GNU ld's (left)"
            );
        }
    }
}
