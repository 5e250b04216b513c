//! Keeps `bench/coldstart.sh` (the cold-start benchmark, see `bench/README.md`) from rotting: it runs on a tiny
//! workload made here (one C file, its functions in their own sections, a constructor, linked as gcc would link
//! it), linked by rivet, by rivet with the ordering file the script derives from a profile (when valgrind is
//! installed) and by GNU ld, three cold runs each, and must print its table with sane figures: every program
//! reached main() and exited, was read from storage again and took page faults, and main() came before the exit;
//! the ordering file lists what ran, in order. Never fails on timing.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn source() -> String {
    let mut s = String::from("#include <stdio.h>\n");
    for i in 0..200 {
        let _ = writeln!(
            s,
            "__attribute__((noinline)) int f{i}(int x) {{ return x * {i} + {}; }}",
            i % 7
        );
    }
    s.push_str("static int early;\n__attribute__((constructor)) static void setup(void) { early = f3(2); }\n");
    s.push_str("int main(void) {\n    int t = early;\n");
    for i in (0..200).step_by(9) {
        let _ = writeln!(s, "    t += f{i}(t & 15);");
    }
    s.push_str("    printf(\"%d\\n\", t);\n    return 0;\n}\n");
    s
}

/// The workload directory: main.o and response.txt, gcc's own link command for it (recorded through a shim).
fn workload(dir: &Path) {
    common::fresh_dir(dir);
    std::fs::write(dir.join("main.c"), source()).unwrap();
    common::tool_ok(
        "gcc",
        &["-c", "-O2", "-fPIE", "-ffunction-sections", "main.c"],
        dir,
    );
    let (linker, _) = common::linker_under_test();
    let shim = common::recording_shim_dir(&linker, "coldstart-smoke");
    let record = dir.join("link-args");
    let mut cmd = Command::new("gcc");
    cmd.current_dir(dir)
        .arg(format!("-B{}/", shim.display()))
        .args(["-pie", "-o", "prog", "main.o"])
        .env("RIVET_RECORD_ARGS", &record)
        .stdin(Stdio::null());
    let out = common::run_with_timeout(&mut cmd, Duration::from_secs(120));
    assert!(out.success(), "recording the link failed:\n{}", out.log());
    let raw = std::fs::read(&record).unwrap();
    let quoted: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| format!("'{}'", String::from_utf8_lossy(w).replace('\'', "'\\''")))
        .collect();
    std::fs::write(dir.join("response.txt"), quoted.join("\n") + "\n").unwrap();
}

/// The figures of one table row: `| label | file MiB | main ms | exit ms | major a / b | minor a / b | ...`.
fn row<'a>(report: &'a str, label: &str) -> Vec<&'a str> {
    let line = report
        .lines()
        .find(|l| l.starts_with(&format!("| {label} ")))
        .unwrap_or_else(|| panic!("no row for {label} in the report:\n{report}"));
    line.trim_matches('|').split('|').map(str::trim).collect()
}

fn pair(cell: &str) -> (f64, f64) {
    let (a, b) = cell.split_once(" / ").expect("an 'a / b' cell");
    (a.parse().unwrap(), b.parse().unwrap())
}

#[test]
fn coldstart_script_reports() {
    let (linker, overridden) = common::linker_under_test();
    let needed = ["gcc", "cc", "ld.bfd", "python3", "nm", "ldd"];
    if overridden || needed.iter().any(|t| !common::have_tool(t)) {
        eprintln!("skipped: needs rivet itself and {needed:?}");
        return;
    }
    let dir = common::work_root().join("coldstart-smoke");
    workload(&dir);
    let fs = common::tool_ok("stat", &["-f", "-c", "%T", "."], &dir);
    if fs.trim() == "tmpfs" {
        eprintln!(
            "skipped: {} is on a tmpfs, whose pages cannot be evicted",
            dir.display()
        );
        return;
    }
    let mut variants = vec!["rivet", "ld.bfd"];
    if common::have_tool("valgrind") {
        variants.push("rivet-order");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/coldstart.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg(&dir)
        .env("RIVET", &linker)
        .env("RUNS", "3")
        .env("VARIANTS", variants.join(" "))
        .env("WORK", dir.join("work"))
        .env_remove("RA_KB")
        .env_remove("ORDER")
        .stdin(Stdio::null());
    let out = common::run_with_timeout(&mut cmd, Duration::from_secs(300));
    assert!(out.success(), "bench/coldstart.sh failed:\n{}", out.log());
    let report = out.stdout_str();
    eprintln!("{report}");
    assert!(
        report.starts_with("coldstart: coldstart-smoke on ")
            && report.contains("medians of 3 cold runs"),
        "unexpected report header:\n{report}"
    );
    for v in &variants {
        let cells = row(&report, v);
        assert_eq!(cells.len(), 8, "{v}: {cells:?}");
        let main_ms: f64 = cells[2].parse().unwrap();
        let exit_ms: f64 = cells[3].parse().unwrap();
        assert!(
            main_ms > 0.0 && main_ms <= exit_ms,
            "{v}: main at {main_ms} ms, exit at {exit_ms} ms"
        );
        let (minor_main, minor_all) = pair(cells[5]);
        assert!(
            minor_main > 0.0 && minor_main <= minor_all,
            "{v}: minor faults {}",
            cells[5]
        );
        let (major_main, major_all) = pair(cells[4]);
        assert!(major_main <= major_all, "{v}: major faults {}", cells[4]);
        // Evicted before each run: the program was read from storage again.
        let (read_main, read_all) = pair(cells[6]);
        assert!(
            read_main > 0.0 && read_main <= read_all,
            "{v}: read MiB {}",
            cells[6]
        );
    }
    assert!(dir.join("work/report.json").is_file());
    if variants.contains(&"rivet-order") {
        // The profile saw the constructor and main run; the ordering file lists them, the constructor first.
        let order = std::fs::read_to_string(dir.join("work/order.txt")).unwrap();
        let pos = |name: &str| order.lines().position(|l| l == name);
        let (setup, main, f9) = (pos("setup"), pos("main"), pos("f9"));
        assert!(
            setup.is_some() && main.is_some() && setup < main && main < f9,
            "ordering file:\n{order}"
        );
        assert!(pos("f1").is_none(), "f1 never runs:\n{order}");
    }
}
