//! The default layout (no `SECTIONS` script) is GNU ld's: its addresses come from the same walk as a script's,
//! over the rules' layout written as a script. So the data segment is GNU ld's (RELRO and the data after it in one
//! `PT_LOAD`, RELRO ending on a page with `.got.plt`'s reserved words inside it, or under `-z now` `.got.plt` at
//! the start of `.got`), an empty output section is
//! dropped with its symbols where GNU ld puts them, and a link given GNU ld's own default script with `-T` gets the
//! same addresses as one without.

mod common;

use std::path::Path;

const PROGRAM: &str = "#include <stdio.h>\n\
    int counter = 3;\n\
    int table[64];\n\
    __thread int per_thread = 7;\n\
    const char *const names[] = {\"one\", \"two\"};\n\
    int main(int argc, char **argv) {\n\
      (void)argv;\n\
      table[argc] = counter + per_thread;\n\
      printf(\"%s %d\\n\", names[argc - 1], table[argc]);\n\
      return 0;\n\
    }\n";

/// A `PT_LOAD` as (flags, address, memory size).
type Load = (String, u64, u64);

/// `readelf -lW`'s `PT_LOAD`s of `exe`, and `PT_GNU_RELRO`'s (address, size).
fn loads(dir: &Path, exe: &str) -> (Vec<Load>, Option<(u64, u64)>) {
    let out = common::tool_ok("readelf", &["-lW", exe], dir);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let mut loads = Vec::new();
    let mut relro = None;
    for l in out.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first() {
            Some(&"LOAD") => loads.push((f[6..f.len() - 1].join(""), hex(f[2]), hex(f[5]))),
            Some(&"GNU_RELRO") => relro = Some((hex(f[2]), hex(f[5]))),
            _ => {}
        }
    }
    (loads, relro)
}

/// The allocated sections of `exe`: (name, address, size).
fn sections(dir: &Path, exe: &str) -> Vec<(String, u64, u64)> {
    let out = common::tool_ok("readelf", &["-SW", exe], dir);
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
    out.lines()
        .filter_map(|l| {
            let l = l.split_once(']')?.1;
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 7 && f[6].contains('A')).then(|| (f[0].to_string(), hex(f[2]), hex(f[4])))
        })
        .collect()
}

/// `readelf -sW`'s entry of `name` in `exe`, as (binding, section name), if listed.
fn symbol(dir: &Path, exe: &str, name: &str) -> Option<(String, String)> {
    let syms = common::tool_ok("readelf", &["-sW", exe], dir);
    let secs = common::tool_ok("readelf", &["-SW", exe], dir);
    let line = syms
        .lines()
        .find(|l| l.split_whitespace().last() == Some(name))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    let section = match f[6].parse::<usize>() {
        Ok(n) => (secs.lines())
            .find(|l| l.trim_start().starts_with(&format!("[{n:>2}]")))
            .and_then(|l| l.split_once(']'))
            .map(|(_, r)| r.split_whitespace().next().unwrap_or("").to_string())
            .unwrap_or_default(),
        Err(_) => f[6].to_string(),
    };
    Some((f[4].to_string(), section))
}

#[test]
fn data_segment_and_dropped_sections_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("default-layout", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("p.c"), PROGRAM).unwrap();
    for (kind, cflag) in [
        ("-pie", "-fPIE"),
        ("-no-pie", "-fno-pie"),
        ("-static", "-fPIE"),
    ] {
        common::tool_ok("gcc", &[cflag, "-O1", "-c", "p.c"], &dir);
        for z in ["-Wl,-z,lazy", "-Wl,-z,now"] {
            let mut views = Vec::new();
            for (side, shim) in [("gnu", &bfd), ("rivet", &shim)] {
                let exe = format!("p{kind}{}-{side}", &z[7..]);
                let b = format!("-B{}/", shim.display());
                let o = common::tool("gcc", &[&b, kind, z, "-o", &exe, "p.o"], Some(&dir));
                assert!(o.success(), "{kind} {z} ({side}):\n{}", o.log());
                let run = std::process::Command::new(dir.join(&exe)).output().unwrap();
                assert_eq!(run.stdout, b"one 10\n", "{kind} {z} ({side})");
                let (loads, relro) = loads(&dir, &exe);
                let secs = sections(&dir, &exe);
                let relro = relro.expect("a PT_GNU_RELRO");
                let relro_end = relro.0 + relro.1;
                // Where RELRO ends: on a page, after `.got.plt`'s reserved words (lazy binding); under `-z now`
                // `.got.plt` starts `.got`, all of it RELRO.
                let got_plt = secs.iter().find(|s| s.0 == ".got.plt");
                let into_got_plt = got_plt.map(|g| relro_end as i64 - g.1 as i64);
                views.push((
                    loads.iter().map(|l| l.0.clone()).collect::<Vec<_>>(),
                    relro_end % 0x1000,
                    into_got_plt,
                    // GNU ld makes a `.plt.got` rivet does not need.
                    (secs.iter())
                        .map(|s| s.0.clone())
                        .filter(|n| n != ".plt.got")
                        .collect::<Vec<_>>(),
                    symbol(&dir, &exe, "__TMC_END__"),
                    symbol(&dir, &exe, "_GLOBAL_OFFSET_TABLE_").map(|s| s.1),
                    symbol(&dir, &exe, "__TMC_LIST__"),
                ));
            }
            assert_eq!(
                views[1], views[0],
                "{kind} {z}: rivet's layout (left) is not GNU ld's (right)"
            );
        }
    }
}

/// Without merged constants (the C library's start files bring some): without a script rivet places merged
/// sections after a section's other inputs, where GNU ld's script (and rivet under it) puts them among them.
const NO_MERGED: &str = "int counter = 3;\n\
    int table[64];\n\
    int *const where = &counter;\n\
    const int primes[] = {2, 3, 5, 7};\n\
    void _start(void) {\n\
      int v = *where + primes[1] + table[2] + 7;\n\
      __asm__ volatile(\"syscall\" : : \"a\"(60), \"D\"(v));\n\
      __builtin_unreachable();\n\
    }\n";

/// GNU ld's default script given with `-T` and no script at all give the same allocated sections at the same
/// addresses and the same program headers: one placement engine.
#[test]
fn gnu_default_script_gives_the_default_layout() {
    let Some((dir, shim, _)) = common::against_gnu_ld("default-layout-script", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("p.c"), NO_MERGED).unwrap();
    for (kind, cflag, verbose) in [
        ("-pie", "-fPIE", &["-pie"][..]),
        ("-no-pie", "-fno-pie", &[][..]),
        ("-shared", "-fPIC", &["-shared"][..]),
    ] {
        common::tool_ok("gcc", &[cflag, "-O1", "-c", "p.c"], &dir);
        std::fs::write(dir.join("gnu.x"), common::gnu_default_script(verbose, &dir)).unwrap();
        let b = format!("-B{}/", shim.display());
        let mut views = Vec::new();
        for script in [None, Some("-Wl,-T,gnu.x")] {
            let exe = format!("p{kind}-{}", script.is_some());
            let mut args = vec![&b[..], "-nostdlib", kind, "-o", &exe, "p.o"];
            args.extend(script);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{kind} {script:?}:\n{}", o.log());
            if kind != "-shared" {
                let run = std::process::Command::new(dir.join(&exe)).status().unwrap();
                assert_eq!(run.code(), Some(13), "{kind} {script:?}");
            }
            views.push((sections(&dir, &exe), loads(&dir, &exe)));
        }
        assert_eq!(
            views[1], views[0],
            "{kind}: with GNU ld's script (left), without (right)"
        );
    }
}

/// An orphan TLS section (one the rules do not name) goes with the TLS sections, as GNU ld places it: after
/// `.tdata`, so that `PT_TLS` covers only TLS data. rivet put it with the writable data,
/// and the TLS block then spanned `.data.rel.ro` to `.data`: a static C program aborted in `malloc`.
#[test]
fn orphan_tls_sections_go_with_the_tls_block() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("default-layout-tls-orphan", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(
        dir.join("t.c"),
        "__thread int tv __attribute__((section(\".mytdata\"))) = 3;\n\
         __thread int tz[2] __attribute__((section(\".mytbss\")));\n\
         int main(void) { return tv - 3 + tz[1]; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-O1", "-c", "t.c"], &dir);
    for kind in ["-static", "-no-pie"] {
        let mut views = Vec::new();
        for (side, shim) in [("gnu", &bfd), ("rivet", &shim)] {
            let exe = format!("t{kind}-{side}");
            let b = format!("-B{}/", shim.display());
            let o = common::tool("gcc", &[&b, kind, "-o", &exe, "t.o"], Some(&dir));
            assert!(o.success(), "{kind} ({side}):\n{}", o.log());
            let run = std::process::Command::new(dir.join(&exe)).status().unwrap();
            assert_eq!(run.code(), Some(0), "{kind} ({side})");
            // The TLS sections in order, and PT_TLS's sizes.
            let secs: Vec<String> = (sections(&dir, &exe).into_iter())
                .filter(|s| s.0.starts_with(".t") || s.0.starts_with(".my"))
                .map(|s| s.0)
                .collect();
            let phdrs = common::tool_ok("readelf", &["-lW", &exe], &dir);
            let tls = (phdrs.lines())
                .find(|l| l.trim_start().starts_with("TLS"))
                .map(|l| {
                    l.split_whitespace()
                        .skip(4)
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                });
            views.push((secs, tls));
        }
        assert_eq!(views[1], views[0], "{kind}: rivet (left), GNU ld (right)");
    }
}
