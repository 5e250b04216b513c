//! Regression benchmark, small enough for every CI run: a generated C program of 400 objects (functions in their
//! own sections, string literals, pointer tables, TLS, full debug info; half of them in an archive) is linked by
//! GNU ld, by rivet with the default thread count and by rivet with `--threads=1` (and by ld.lld-19 or mold when
//! installed), five times each. It prints the median wall times as a table (also kept in
//! `target/rivet-tests/bench-smoke/summary.txt`) and fails only if a link fails, rivet's outputs differ between
//! thread counts, or rivet's program prints something other than GNU ld's: never because of timing.
//!
//! The real comparison against mold and wild on large workloads is `bench/compare.sh` (see `bench/README.md`).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 400;
const FUNCS: usize = 40;

fn source(i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#include <stdio.h>\n#include <string.h>");
    let _ = writeln!(s, "__thread int tls_{i} = {i};");
    let _ = writeln!(
        s,
        "const char *names_{i}[] = {{\"alpha_{i}\", \"beta_{i}\", \"shared literal\"}};"
    );
    for j in 0..FUNCS {
        let _ = writeln!(
            s,
            "int f_{i}_{j}(int x) {{ static int calls; calls++; return x * {j} + (int)strlen(names_{i}[{j} % 3]) + tls_{i} + calls; }}"
        );
    }
    let _ = write!(s, "int (*table_{i}[])(int) = {{");
    for j in 0..FUNCS {
        let _ = write!(s, "f_{i}_{j}, ");
    }
    let _ = writeln!(s, "}};");
    let _ = writeln!(
        s,
        "int run_{i}(int x) {{ int t = 0; for (int j = 0; j < {FUNCS}; j += 3) t += table_{i}[j](x); return t; }}"
    );
    s
}

fn main_source() -> String {
    let mut s = String::from("#include <stdio.h>\n");
    for i in 0..FILES {
        let _ = writeln!(s, "int run_{i}(int);");
    }
    s.push_str("int main(void) {\n    long total = 0;\n");
    for i in 0..FILES {
        let _ = writeln!(s, "    total += run_{i}({});", i % 7);
    }
    s.push_str("    printf(\"total=%ld\\n\", total);\n    return 0;\n}\n");
    s
}

fn must(out: common::Outcome, what: &str) -> common::Outcome {
    assert!(out.success(), "{what} failed:\n{}", out.log());
    out
}

/// Compiles the workload once (kept between runs when the sources are unchanged).
fn build(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let mut srcs: Vec<(String, String)> =
        (0..FILES).map(|i| (format!("g{i}.c"), source(i))).collect();
    srcs.push(("main.c".into(), main_source()));
    let todo: Vec<&(String, String)> = srcs
        .iter()
        .filter(|(name, text)| {
            let obj = dir.join(name.replace(".c", ".o"));
            std::fs::read_to_string(dir.join(name)).ok().as_deref() != Some(text.as_str())
                || !obj.exists()
        })
        .collect();
    for (name, text) in &todo {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let jobs = common::jobs();
    let chunk = todo.len().div_ceil(jobs.max(1)).max(1);
    std::thread::scope(|s| {
        for part in todo.chunks(chunk) {
            s.spawn(move || {
                for (name, _) in part {
                    let mut cmd = Command::new("gcc");
                    cmd.current_dir(dir)
                        .args([
                            "-c",
                            "-O1",
                            "-g",
                            "-fPIE",
                            "-ffunction-sections",
                            "-fdata-sections",
                        ])
                        .arg(name)
                        .stdin(Stdio::null());
                    must(
                        common::run_with_timeout(&mut cmd, Duration::from_secs(120)),
                        name,
                    );
                }
            });
        }
    });
    let archived: Vec<String> = (FILES / 2..FILES).map(|i| format!("g{i}.o")).collect();
    let _ = std::fs::remove_file(dir.join("libgen.a"));
    let mut ar = Command::new("ar");
    ar.current_dir(dir)
        .arg("rcs")
        .arg("libgen.a")
        .args(&archived);
    must(
        common::run_with_timeout(&mut ar, Duration::from_secs(60)),
        "ar",
    );
    let mut objs = vec!["main.o".to_string()];
    objs.extend((0..FILES / 2).map(|i| format!("g{i}.o")));
    objs.push("libgen.a".into());
    objs
}

/// The link command gcc would run for `-pie`, captured once through a recording shim, then replayed directly so
/// the timings are of the linkers alone.
fn linker_args(dir: &Path, objs: &[String]) -> Vec<String> {
    let (linker, _) = common::linker_under_test();
    let shim = common::recording_shim_dir(&linker, "bench-smoke");
    let record = dir.join("link-args");
    let mut cmd = Command::new("gcc");
    cmd.current_dir(dir)
        .arg(format!("-B{}/", shim.display()))
        .args([
            "-pie",
            "-Wl,--gc-sections",
            "-Wl,--build-id",
            "-o",
            "prog-record",
        ])
        .args(objs)
        .env("RIVET_RECORD_ARGS", &record)
        .stdin(Stdio::null());
    must(
        common::run_with_timeout(&mut cmd, Duration::from_secs(300)),
        "recording the link",
    );
    let raw = std::fs::read(&record).unwrap();
    raw.split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

fn with_output(args: &[String], out: &str) -> Vec<String> {
    let mut v = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        if args[i] == "-o" {
            v.push("-o".into());
            v.push(out.into());
            i += 2;
            continue;
        }
        v.push(args[i].clone());
        i += 1;
    }
    v
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[test]
fn bench_smoke() {
    let (linker, overridden) = common::linker_under_test();
    if overridden || !common::have_tool("gcc") || !common::have_tool("ld.bfd") {
        eprintln!("skipped: compares rivet against GNU ld; gcc and ld.bfd needed");
        return;
    }
    let dir = common::work_root().join("bench-smoke");
    let objs = build(&dir);
    let args = linker_args(&dir, &objs);
    let mut peers: Vec<(String, PathBuf, Vec<String>)> = vec![
        ("ld.bfd".into(), common::which("ld.bfd").unwrap(), vec![]),
        ("rivet".into(), linker.clone(), vec![]),
        (
            "rivet-t1".into(),
            linker.clone(),
            vec!["--threads=1".into()],
        ),
    ];
    for (label, prog) in [("ld.lld-19", "ld.lld-19"), ("mold", "mold")] {
        if let Some(p) = common::which(prog) {
            peers.push((label.into(), p, vec![]));
        }
    }
    const ROUNDS: usize = 5;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); peers.len()];
    for round in 0..=ROUNDS {
        for (k, (label, prog, extra)) in peers.iter().enumerate() {
            let mut cmd = Command::new(prog);
            cmd.current_dir(&dir)
                .args(extra)
                .args(with_output(&args, &format!("out.{label}")))
                .stdin(Stdio::null());
            let start = Instant::now();
            must(
                common::run_with_timeout(&mut cmd, Duration::from_secs(300)),
                label,
            );
            // Round 0 warms the page cache and is not counted.
            if round > 0 {
                times[k].push(start.elapsed().as_secs_f64() * 1000.0);
            }
        }
    }
    let read = |label: &str| std::fs::read(dir.join(format!("out.{label}"))).unwrap();
    assert!(
        read("rivet") == read("rivet-t1"),
        "rivet's output differs between the default thread count and --threads=1"
    );
    let run = |label: &str| {
        let mut cmd = Command::new(dir.join(format!("out.{label}")));
        cmd.stdin(Stdio::null());
        must(
            common::run_with_timeout(&mut cmd, Duration::from_secs(30)),
            label,
        )
        .stdout_str()
    };
    let expected = run("ld.bfd");
    assert!(
        expected.starts_with("total="),
        "GNU ld's program printed {expected:?}"
    );
    assert_eq!(
        run("rivet"),
        expected,
        "rivet's program prints something else than GNU ld's"
    );

    let base = median(times[0].clone());
    let mut table = format!(
        "bench-smoke: {} objects and an archive, -pie --gc-sections, full debug info; median of {ROUNDS} links\n\
         | linker | wall ms | ratio to ld.bfd |\n|---|---:|---:|\n",
        FILES + 1
    );
    for ((label, _, _), t) in peers.iter().zip(&times) {
        let m = median(t.clone());
        let _ = writeln!(table, "| {label} | {m:.1} | {:.2} |", m / base);
    }
    eprint!("{table}");
    let _ = std::fs::write(dir.join("summary.txt"), &table);
}
