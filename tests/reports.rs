//! Link reports: `-Map FILE` and `--why-extract=FILE`. A small program with an archive is linked through gcc; the
//! reports must name the archive members pulled in with the reference that pulled each (and not the member nothing
//! needs), and the map must place each input section and symbol where the output (read back with `nm` and
//! `readelf`) has it.
//!
//! Skipped when `RIVET_TEST_LINKER` points at another linker (these are rivet's own report formats).

mod common;

use common::tool_ok as run;
use std::collections::HashMap;
use std::process::Command;

#[test]
fn map_and_why_extract() {
    let Some((linker, dir)) = common::rivet_only(
        "reports",
        &["gcc"],
        "rivet's own report formats, gcc needed",
    ) else {
        return;
    };
    let files = [
        (
            "main.c",
            "#include <stdio.h>\nint used_fn(int);\nint counter = 5;\n\
             int main(void) { printf(\"%d\\n\", used_fn(counter)); return 0; }\n",
        ),
        (
            "used.c",
            "int helper_fn(int);\nint table[64];\n\
             int used_fn(int x) { return helper_fn(x) + table[0]; }\n",
        ),
        ("helper.c", "int helper_fn(int x) { return x * 2; }\n"),
        ("unused.c", "int unused_fn(int x) { return x - 1; }\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        run("gcc", &["-c", "-O1", "-fno-pie", name], &dir);
    }
    run(
        "ar",
        &["rcs", "libx.a", "used.o", "helper.o", "unused.o"],
        &dir,
    );
    let shim = common::ld_shim_dir(&linker, "reports");
    let out = common::tool(
        "gcc",
        &[
            &format!("-B{}/", shim.display()),
            "-no-pie",
            "-o",
            "prog",
            "main.o",
            "libx.a",
            "-Wl,-Map,prog.map",
            "-Wl,--why-extract=prog.why",
        ],
        Some(&dir),
    );
    assert!(out.success(), "link failed:\n{}", out.log());
    assert_eq!(
        run(&dir.join("prog").display().to_string(), &[], &dir),
        "10\n"
    );

    // --why-extract: main.o pulled used.o for used_fn, used.o pulled helper.o for helper_fn; unused.o stays out.
    let why = std::fs::read_to_string(dir.join("prog.why")).unwrap();
    let lines: Vec<&str> = why.lines().collect();
    assert_eq!(lines[0], "reference\textracted\tsymbol");
    assert!(lines.contains(&"main.o\tlibx.a(used.o)\tused_fn"), "{why}");
    assert!(
        lines.contains(&"libx.a(used.o)\tlibx.a(helper.o)\thelper_fn"),
        "{why}"
    );
    assert!(!why.contains("unused.o"), "{why}");

    // The map: the same members with their reasons, then sections and symbols at the addresses nm reports.
    let map = std::fs::read_to_string(dir.join("prog.map")).unwrap();
    assert!(
        map.contains("libx.a(helper.o)\n        libx.a(used.o) (helper_fn)\n"),
        "{map}"
    );
    assert!(!map.contains("unused"), "{map}");
    let nm = run("nm", &["prog"], &dir);
    let addr_of: HashMap<&str, u64> = nm
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let a = u64::from_str_radix(w.next()?, 16).ok()?;
            let _kind = w.next()?;
            Some((w.next()?, a))
        })
        .collect();
    // Which output section and input section each symbol line falls under.
    let mut out_sec = String::new();
    let mut in_sec = String::new();
    let mut seen = HashMap::new();
    for l in map.lines() {
        let (Some(addr), Some(name_col)) = (l.get(..16), l.get(35..)) else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let depth = name_col.len() - name_col.trim_start().len();
        let name = name_col.trim();
        match depth {
            0 => out_sec = name.to_string(),
            8 => in_sec = name.to_string(),
            _ => {
                seen.insert(name.to_string(), (addr, out_sec.clone(), in_sec.clone()));
            }
        }
    }
    for (sym, sec, input) in [
        ("main", ".text", "main.o:(.text)"),
        ("used_fn", ".text", "libx.a(used.o):(.text)"),
        ("helper_fn", ".text", "libx.a(helper.o):(.text)"),
        ("counter", ".data", "main.o:(.data)"),
        ("table", ".bss", "libx.a(used.o):(.bss)"),
    ] {
        let (addr, o, i) = seen
            .get(sym)
            .unwrap_or_else(|| panic!("{sym} missing from the map:\n{map}"));
        assert_eq!((o.as_str(), i.as_str()), (sec, input), "{sym}");
        assert_eq!(Some(addr), addr_of.get(sym), "{sym}'s address");
    }
    // Output sections appear with the addresses and sizes readelf reports.
    let sections = run("readelf", &["-SW", "prog"], &dir);
    for l in sections
        .lines()
        .filter(|l| l.contains(" .text ") || l.contains(" .data "))
    {
        let w: Vec<&str> = l.split_whitespace().collect();
        let at = w
            .iter()
            .position(|x| *x == ".text" || *x == ".data")
            .unwrap();
        let (name, addr, size) = (w[at], w[at + 2], w[at + 4]);
        let addr = u64::from_str_radix(addr, 16).unwrap();
        let size = u64::from_str_radix(size, 16).unwrap();
        let want = format!("{addr:>16x} {size:>10x}");
        assert!(
            map.lines()
                .any(|m| m.starts_with(&want) && m.ends_with(&format!(" {name}"))),
            "{name} at {addr:x} size {size:x} not in the map:\n{map}"
        );
    }
}

/// `--warn-common` prints GNU ld's five kinds of common-symbol warning, naming both files; with
/// `--fatal-warnings` the link fails and leaves an existing output untouched.
#[test]
fn warn_common() {
    let Some((linker, dir)) = common::rivet_only(
        "warn-common",
        &["gcc"],
        "rivet's own diagnostics, gcc needed",
    ) else {
        return;
    };
    let files = [
        (
            "c1.c",
            "int over_def; int small_then_big[4]; int big_then_small[8]; int same; int def_first;\n\
             int main(void) { return over_def + small_then_big[0] + big_then_small[0] + same + def_first; }\n",
        ),
        (
            "c2.c",
            "int over_def = 3; int small_then_big[8]; int big_then_small[2]; int same;\n",
        ),
        ("c0.c", "int def_first = 1;\n"),
        ("c3.c", "int def_first;\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        run("gcc", &["-c", "-fcommon", name], &dir);
    }
    let shim = common::ld_shim_dir(&linker, "warn-common");
    let link = |extra: &[&str]| {
        let mut args = vec![
            format!("-B{}/", shim.display()),
            "-o".into(),
            "prog".into(),
            "c0.o".into(),
            "c1.o".into(),
            "c2.o".into(),
            "c3.o".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::tool("gcc", &args, Some(&dir))
    };
    let quiet = link(&[]);
    assert!(
        quiet.success() && !quiet.stderr_str().contains("common"),
        "{}",
        quiet.log()
    );
    let out = link(&["-Wl,--warn-common"]);
    assert!(out.success(), "{}", out.log());
    let err = out.stderr_str();
    for want in [
        "c1.o: common of `def_first' overridden by definition from c0.o",
        "c2.o: definition of `over_def' overriding common from c1.o",
        "c2.o: common of `small_then_big' overriding smaller common from c1.o",
        "c2.o: common of `big_then_small' overridden by larger common from c1.o",
        "c2.o: multiple common of `same' (also common in c1.o)",
        "c3.o: common of `def_first' overridden by definition from c0.o",
    ] {
        assert!(
            err.contains(&format!("rivet: warning: {want}")),
            "missing {want:?}:\n{err}"
        );
    }
    let before = std::fs::read(dir.join("prog")).unwrap();
    let fatal = link(&["-Wl,--warn-common", "-Wl,--fatal-warnings"]);
    assert!(!fatal.success(), "{}", fatal.log());
    assert!(
        fatal.stderr_str().contains("--fatal-warnings"),
        "{}",
        fatal.log()
    );
    assert_eq!(
        std::fs::read(dir.join("prog")).unwrap(),
        before,
        "output changed"
    );
}

/// An output that cannot be stored (here: over the file size limit, as on a full disk) is a clear error: exit
/// status 1, the previous output untouched and no temporary file left, instead of a SIGBUS while the mapped output
/// is written.
#[test]
fn output_too_large() {
    use std::os::unix::process::CommandExt;
    let Some((linker, dir)) = common::rivet_only(
        "output-too-large",
        &["gcc"],
        "rivet's own diagnostics, gcc needed",
    ) else {
        return;
    };
    std::fs::write(
        dir.join("big.c"),
        "static const char table[1 << 16] = {1};\nint main(void) { return table[0] - 1; }\n",
    )
    .unwrap();
    run("gcc", &["-c", "big.c"], &dir);
    let shim = common::ld_shim_dir(&linker, "output-too-large");
    let args = [
        format!("-B{}/", shim.display()),
        "-o".into(),
        "prog".into(),
        "big.o".into(),
    ];
    let ok = common::tool(
        "gcc",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        Some(&dir),
    );
    assert!(ok.success(), "{}", ok.log());
    let before = std::fs::read(dir.join("prog")).unwrap();
    assert!(before.len() > 1 << 16);
    let mut cmd = Command::new("gcc");
    cmd.args(&args).current_dir(&dir);
    // SAFETY: setrlimit and signal are async-signal-safe; the limit and the ignored SIGXFSZ (which would
    // otherwise kill the writer) pass to the linker gcc runs.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 32 << 10,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(60));
    assert!(!out.success(), "{}", out.log());
    assert!(
        out.stderr_str()
            .contains("rivet: error: cannot write output file")
            && out.stderr_str().contains("File too large"),
        "{}",
        out.log()
    );
    assert_eq!(
        std::fs::read(dir.join("prog")).unwrap(),
        before,
        "output changed"
    );
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("rivet"))
        .collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

/// An output that does not fit on a full tmpfs (where rivet allocates the pages while pre-faulting them, not with
/// fallocate): a clear error and exit status 1, the previous output untouched and no temporary file left. The
/// tmpfs is mounted in a private user and mount namespace (`unshare -rm`); skipped where that is not allowed.
#[test]
fn output_too_large_for_tmpfs() {
    let Some((linker, dir)) = common::rivet_only(
        "output-too-large-tmpfs",
        &["gcc", "unshare"],
        "rivet's own diagnostics, gcc and unshare needed",
    ) else {
        return;
    };
    std::fs::write(
        dir.join("big.c"),
        "static const char table[1 << 20] = {1};\nint main(void) { return table[0] - 1; }\n",
    )
    .unwrap();
    run("gcc", &["-c", "big.c"], &dir);
    std::fs::create_dir(dir.join("small")).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=256k tmpfs small || exit 77\n\
         echo old > small/prog\n\
         {} -e main -o small/prog big.o\n\
         echo \"status $?\"\n\
         cat small/prog\n\
         ls -a small\n",
        linker.display()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c", &script]).current_dir(&dir);
    let out = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(60));
    let stdout = out.stdout_str();
    if !stdout.contains("status ") {
        eprintln!("skipped: no tmpfs in a user namespace here: {}", out.log());
        return;
    }
    assert!(stdout.contains("status 1\nold\n"), "{}", out.log());
    assert!(
        out.stderr_str()
            .contains("rivet: error: cannot write output file small/prog: No space left on device"),
        "{}",
        out.log()
    );
    assert!(
        !stdout.contains("rivet-tmp"),
        "files left behind: {}",
        out.log()
    );
}

/// `--reproduce=FILE.tar`: the tar holds the inputs and a response file; linking again from the extracted copy
/// (with the original inputs moved away) gives a byte-identical output. A thin archive's member files are inputs
/// too.
#[test]
fn reproduce() {
    let Some((linker, dir)) = common::rivet_only(
        "reproduce",
        &["gcc", "tar"],
        "rivet's own option, gcc and tar needed",
    ) else {
        return;
    };
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\nint lib_fn(int);\nint thin_fn(int);\n\
         int main(void) { printf(\"%d\\n\", lib_fn(thin_fn(10))); return 0; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("lib.c"), "int lib_fn(int x) { return x + 22; }\n").unwrap();
    std::fs::write(dir.join("thin.c"), "int thin_fn(int x) { return 2 * x; }\n").unwrap();
    std::fs::write(dir.join("v.map"), "{ global: main; local: *; };\n").unwrap();
    run("gcc", &["-c", "main.c", "lib.c", "thin.c"], &dir);
    std::fs::create_dir_all(dir.join("libs")).unwrap();
    run("ar", &["rcs", "libs/libl.a", "lib.o"], &dir);
    std::fs::rename(dir.join("thin.o"), dir.join("libs/thin.o")).unwrap();
    run("ar", &["rcsT", "libs/libt.a", "libs/thin.o"], &dir);
    let shim = common::ld_shim_dir(&linker, "reproduce");
    let out = common::tool(
        "gcc",
        &[
            &format!("-B{}/", shim.display()),
            "-o",
            "prog",
            "main.o",
            "-Llibs",
            "-ll",
            "-lt",
            "-Wl,--version-script=v.map",
            "-Wl,--reproduce=repro.tar",
        ],
        Some(&dir),
    );
    assert!(out.success(), "link failed:\n{}", out.log());
    assert_eq!(
        run(&dir.join("prog").display().to_string(), &[], &dir),
        "42\n"
    );
    let list = run("tar", &["tf", "repro.tar"], &dir);
    for want in [
        "repro/response.txt",
        "repro/version.txt",
        "/main.o",
        "/libs/libl.a",
        "/libs/libt.a",
        "/libs/thin.o",
        "/v.map",
    ] {
        assert!(
            list.lines().any(|l| l.ends_with(want)),
            "{want} not in the tar:\n{list}"
        );
    }
    // The inputs go away; the extracted copy alone must reproduce the output.
    let x = dir.join("x");
    std::fs::create_dir_all(&x).unwrap();
    run("tar", &["xf", "../repro.tar"], &x);
    for f in [
        "main.o",
        "lib.o",
        "libs/libl.a",
        "libs/libt.a",
        "libs/thin.o",
        "v.map",
    ] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let again = common::tool(
        &linker.display().to_string(),
        &["@response.txt"],
        Some(&x.join("repro")),
    );
    assert!(again.success(), "relink failed:\n{}", again.log());
    assert_eq!(
        std::fs::read(x.join("repro/prog")).unwrap(),
        std::fs::read(dir.join("prog")).unwrap(),
        "the reproduced link differs"
    );
}
