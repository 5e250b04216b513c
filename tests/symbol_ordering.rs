//! `--symbol-ordering-file` (issue 35, start-up layout) against lld, whose option it is: the sections of the listed
//! symbols (functions and data, globals and file-local ones) go first in their output sections in the file's order,
//! the rest keep input order; the same warnings (duplicates, names no input defines, a shared object's symbols),
//! none with `--no-warn-symbol-ordering`; the programs run as without the file. Under a `SECTIONS` script (GNU
//! ld's default PIE script given with `-T`) the inputs of each statement without a sort are ordered, as lld orders
//! them. Refused with `-r`.

mod common;

use std::path::Path;

const A_C: &str = r#"
int f1(int x) { return x + 1; }
int f2(int x) { return x * 2; }
static __attribute__((noinline)) int helper(int x) { return x - 3; }
int f3(int x) { return helper(x) + 7; }
int table[4] = {1, 2, 3, 4};
int second[2] = {5, 6};
"#;

const B_C: &str = r#"
#include <stdio.h>
int f1(int), f2(int), f3(int);
extern int table[4], second[2];
int f4(int x) { return x ^ 5; }
int main(void) {
    printf("%d %d %d %d %d %d\n", f1(1), f2(2), f3(3), f4(4), table[2], second[1]);
    return 0;
}
"#;

const ORDER: &str = "f4\n# a comment\n\n  f3  \nhelper\nmain\nf3\nnosuch\nsecond\nprintf\n";

/// The listed symbols of `exe` in address order.
fn by_address(dir: &Path, exe: &str) -> Vec<String> {
    let nm = common::tool_ok("nm", &["-n", exe], dir);
    nm.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| ["f1", "f2", "f3", "f4", "helper", "main", "table", "second"].contains(n))
        .map(str::to_string)
        .collect()
}

/// Links `a.o b.o` through gcc with linker `bin` (a `-B` directory) and `flags`: the outcome.
fn link(dir: &Path, bin: &Path, out: &str, flags: &[&str]) -> common::Outcome {
    let b = format!("-B{}/", bin.display());
    let mut args = vec!["-fuse-ld=lld", &b[..], "a.o", "b.o", "-o", out];
    args.extend_from_slice(flags);
    common::tool("gcc", &args, Some(dir))
}

/// Warning lines without the program's name.
fn warnings(r: &common::Outcome) -> Vec<String> {
    let mut lines: Vec<String> = (r.stderr_str().lines())
        .filter_map(|l| l.split_once("warning: ").map(|(_, w)| w.to_string()))
        .collect();
    lines.dedup();
    lines
}

#[test]
fn symbols_order_their_sections_as_lld_does() {
    let Some((dir, _, _)) = common::against_gnu_ld("symbol-ordering", &["gcc", "nm", "ld.lld-19"])
    else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    std::fs::write(dir.join("a.c"), A_C).unwrap();
    std::fs::write(dir.join("b.c"), B_C).unwrap();
    std::fs::write(dir.join("order.txt"), ORDER).unwrap();
    let script = common::gnu_default_script(&["-pie"], &dir);
    std::fs::write(dir.join("gnu-pie.lds"), script).unwrap();
    for (side, ld) in [("lld", Path::new("/usr/bin/ld.lld-19")), ("rivet", &rivet)] {
        let bin = dir.join(format!("bin-{side}"));
        std::fs::create_dir_all(&bin).unwrap();
        let _ = std::fs::remove_file(bin.join("ld.lld"));
        std::os::unix::fs::symlink(ld, bin.join("ld.lld")).unwrap();
    }
    let order = "-Wl,--symbol-ordering-file=order.txt";
    for sections in [true, false] {
        let mut cc = vec!["-O1", "-c", "a.c", "b.c"];
        if sections {
            cc.extend(["-ffunction-sections", "-fdata-sections"]);
        }
        common::tool_ok("gcc", &cc, &dir);
        let mut got = Vec::new();
        for side in ["lld", "rivet"] {
            let bin = dir.join(format!("bin-{side}"));
            let plain = link(&dir, &bin, &format!("plain-{side}"), &[]);
            assert!(plain.success(), "{}", plain.log());
            let ordered = link(&dir, &bin, &format!("ordered-{side}"), &[order]);
            assert!(ordered.success(), "{}", ordered.log());
            for exe in [format!("plain-{side}"), format!("ordered-{side}")] {
                let run = common::tool(&format!("./{exe}"), &[], Some(&dir));
                assert_eq!(run.stdout_str(), "2 4 7 1 3 6\n", "{exe}: {}", run.log());
            }
            let quiet = link(
                &dir,
                &bin,
                &format!("quiet-{side}"),
                &[order, "-Wl,--no-warn-symbol-ordering"],
            );
            assert!(
                quiet.success() && warnings(&quiet).is_empty(),
                "{}",
                quiet.log()
            );
            let scripted = link(
                &dir,
                &bin,
                &format!("script-{side}"),
                &[order, "-Wl,-T,gnu-pie.lds", "-Wl,--no-warn-symbol-ordering"],
            );
            assert!(scripted.success(), "{}", scripted.log());
            let run = common::tool(&format!("./script-{side}"), &[], Some(&dir));
            assert_eq!(run.stdout_str(), "2 4 7 1 3 6\n", "{}", run.log());
            got.push((
                by_address(&dir, &format!("ordered-{side}")),
                warnings(&ordered),
                by_address(&dir, &format!("script-{side}")),
            ));
        }
        let (lld, ours) = (&got[0], &got[1]);
        assert_eq!(ours.0, lld.0, "sections: {sections}");
        assert_eq!(ours.2, lld.2, "script, sections: {sections}");
        if sections {
            assert_eq!(ours.0[..4], ["f4", "f3", "helper", "main"], "{:?}", ours.0);
            let s = ours.0.iter().position(|n| n == "second").unwrap();
            let t = ours.0.iter().position(|n| n == "table").unwrap();
            assert!(s < t, "{:?}", ours.0);
        }
        // lld names the shared object by its path, rivet by its soname.
        let lld_warnings: Vec<String> = (lld.1.iter())
            .map(|w| w.replace("/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6"))
            .collect();
        assert_eq!(ours.1, lld_warnings);
        assert_eq!(
            ours.1,
            [
                "order.txt: duplicate ordered symbol: f3",
                "libc.so.6: unable to order shared symbol: printf",
                "symbol ordering file: no such symbol: nosuch",
            ]
        );
    }
    // Not supported yet with -r: refused, not ignored.
    let r = common::tool(
        rivet.to_str().unwrap(),
        &[
            "-r",
            "--symbol-ordering-file",
            "order.txt",
            "a.o",
            "b.o",
            "-o",
            "x.o",
        ],
        Some(&dir),
    );
    assert_eq!(r.code, Some(1), "{}", r.log());
    assert!(
        r.stderr_str().contains("--symbol-ordering-file"),
        "{}",
        r.log()
    );
    let r = common::tool(
        rivet.to_str().unwrap(),
        &[
            "--symbol-ordering-file=missing.txt",
            "--unresolved-symbols=ignore-all",
            "a.o",
            "b.o",
            "-o",
            "x",
        ],
        Some(&dir),
    );
    assert!(
        r.stderr_str().contains("cannot open missing.txt"),
        "{}",
        r.log()
    );
}
