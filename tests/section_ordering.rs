//! `--section-ordering-file` (issue 35, start-up layout) with GNU ld 2.43's meaning: the file's output section
//! statements (`.text : { *(.text.f4) ... }`) put their input section descriptions first in the link's statements
//! of those names. The installed GNU ld (2.40) predates the option, so the reference is what its manual says the
//! option is equivalent to: GNU ld's default script with the descriptions written at the start of the statements,
//! given with `-T`. rivet gives that order (`nm -n`) both with GNU ld's default script as `-T` and with its own
//! default layout, for PIE and non-PIE programs, which run. The file may be a whole `SECTIONS { }`; statements
//! other than mappings, output sections the script lacks and gold's list of names are refused with the file's
//! place.

mod common;

use std::path::Path;

const A_C: &str = r#"
int f1(int x) { return x + 1; }
int f2(int x) { return x * 2; }
static __attribute__((noinline)) int helper(int x) { return x - 3; }
int f3(int x) { return helper(x) + 7; }
int table[4] = {1, 2, 3, 4};
int second[2] = {5, 6};
const char banner[] = "ordered";
"#;

const B_C: &str = r#"
#include <stdio.h>
int f1(int), f2(int), f3(int);
extern int table[4], second[2];
extern const char banner[];
int f4(int x) { return x ^ 5; }
int main(void) {
    printf("%d %d %d %d %d %d %s\n", f1(1), f2(2), f3(3), f4(4), table[2], second[1], banner);
    return 0;
}
"#;

/// The descriptions per output section: a file-qualified one, a local function's, data and read-only data.
const MAPPING: &[(&str, &str)] = &[
    (
        ".text",
        "*(.text.f4) *b.o(.text.main) *(.text.helper .text.f2)",
    ),
    (".data", "*(.data.table)"),
    (".rodata", "*(.rodata.banner)"),
];

const OUTPUT: &str = "2 4 7 1 3 6 ordered\n";

/// The program's symbols in address order.
fn by_address(dir: &Path, exe: &str) -> Vec<String> {
    let nm = common::tool_ok("nm", &["-n", exe], dir);
    let ours = [
        "f1", "f2", "f3", "f4", "helper", "main", "table", "second", "banner",
    ];
    nm.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| ours.contains(n))
        .map(str::to_string)
        .collect()
}

/// GNU ld's default script for `-pie` or not (from `--verbose`), and the same with `MAPPING` written into it.
fn gnu_scripts(dir: &Path, pie: bool) -> (String, String) {
    let verbose = common::tool_ok(
        "ld.bfd",
        &[if pie { "-pie" } else { "-no-pie" }, "--verbose"],
        dir,
    );
    let script: String = (verbose.lines())
        .skip_while(|l| !l.starts_with("====="))
        .skip(1)
        .take_while(|l| !l.starts_with("====="))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut mapped = script.clone();
    for (name, descriptions) in MAPPING {
        let at = mapped.find(&format!("\n  {name} ")).unwrap();
        let brace = at + mapped[at..].find('{').unwrap();
        mapped.insert_str(brace + 1, &format!(" {descriptions} "));
    }
    (script, mapped)
}

/// Links `a.o b.o` through gcc with `ld` from `bin` and `flags`, runs it, and gives its symbols' order.
fn link_run(dir: &Path, bin: &Path, exe: &str, flags: &[&str]) -> Vec<String> {
    let b = format!("-B{}/", bin.display());
    let mut args = vec![&b[..], "a.o", "b.o", "-o", exe];
    args.extend_from_slice(flags);
    let r = common::tool("gcc", &args, Some(dir));
    assert!(r.success(), "{exe}: {}", r.log());
    let run = common::tool(&format!("./{exe}"), &[], Some(dir));
    assert_eq!(run.stdout_str(), OUTPUT, "{exe}: {}", run.log());
    by_address(dir, exe)
}

#[test]
fn ordering_file_puts_its_sections_first() {
    let Some((dir, rivet, bfd)) = common::against_gnu_ld("section-ordering", &["gcc", "nm"]) else {
        return;
    };
    std::fs::write(dir.join("a.c"), A_C).unwrap();
    std::fs::write(dir.join("b.c"), B_C).unwrap();
    let cc = [
        "-O1",
        "-ffunction-sections",
        "-fdata-sections",
        "-c",
        "a.c",
        "b.c",
    ];
    common::tool_ok("gcc", &cc, &dir);
    let file: String = (MAPPING.iter())
        .map(|(n, d)| format!("{n} : {{ {d} }}\n"))
        .collect();
    std::fs::write(dir.join("order.lds"), &file).unwrap();
    std::fs::write(dir.join("empty.lds"), "/* nothing to order */\n").unwrap();
    std::fs::write(
        dir.join("sections.lds"),
        format!("/* whole */ SECTIONS\n{{\n{file}}}\n"),
    )
    .unwrap();
    for pie in [true, false] {
        let kind = if pie { "-pie" } else { "-no-pie" };
        let (script, mapped) = gnu_scripts(&dir, pie);
        std::fs::write(dir.join(format!("gnu{kind}.lds")), script).unwrap();
        std::fs::write(dir.join(format!("mapped{kind}.lds")), mapped).unwrap();
        let t = |name: &str| format!("-Wl,-T,{name}{kind}.lds");
        let plain = link_run(&dir, &bfd, &format!("plain{kind}"), &[kind]);
        let reference = link_run(&dir, &bfd, &format!("ref{kind}"), &[kind, &t("mapped")]);
        assert_ne!(plain, reference, "the mapping changes the order");
        assert_eq!(
            reference[..4],
            ["f4", "main", "helper", "f2"],
            "{reference:?}"
        );
        let order = "-Wl,--section-ordering-file=order.lds";
        let with_script = link_run(
            &dir,
            &rivet,
            &format!("script{kind}"),
            &[kind, &t("gnu"), order],
        );
        assert_eq!(with_script, reference, "{kind} with GNU ld's script");
        let default = link_run(&dir, &rivet, &format!("default{kind}"), &[kind, order]);
        assert_eq!(default, reference, "{kind} with rivet's default layout");
        // An empty file changes nothing.
        let empty = "-Wl,--section-ordering-file=empty.lds";
        link_run(&dir, &rivet, &format!("empty{kind}"), &[kind, empty]);
        link_run(&dir, &rivet, &format!("none{kind}"), &[kind]);
        let (a, b) = (format!("empty{kind}"), format!("none{kind}"));
        assert_eq!(
            std::fs::read(dir.join(a)).unwrap(),
            std::fs::read(dir.join(b)).unwrap()
        );
        let whole = "-Wl,--section-ordering-file=sections.lds";
        let wrapped = link_run(&dir, &rivet, &format!("whole{kind}"), &[kind, whole]);
        assert_eq!(wrapped, reference, "{kind} with SECTIONS {{ }} around");
    }
}

#[test]
fn ordering_file_errors() {
    let Some((rivet, dir)) =
        common::rivet_only("section-ordering-errors", &["gcc"], "rivet's messages")
    else {
        return;
    };
    std::fs::write(dir.join("a.c"), A_C).unwrap();
    common::tool_ok("gcc", &["-O1", "-ffunction-sections", "-c", "a.c"], &dir);
    let files = [
        ("gold.txt", ".text.f4\n.text.f2\n"),
        (
            "missing.txt",
            ".text : { *(.text.f4) }\n.nosuch : { *(.text.f2) }\n",
        ),
        ("assign.txt", ".text : { *(.text.f4) x = 1; }\n"),
        ("address.txt", ".text 0x1000 : { *(.text.f4) }\n"),
        ("top.txt", "x = 1;\n"),
        ("ok.txt", ".text : { *(.text.f2) }\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let rivet = rivet.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--section-ordering-file=gold.txt"],
            "gold.txt:3:1: expected ':'",
        ),
        (
            &["--section-ordering-file=gold.txt"],
            "gold's list of section names is not this format",
        ),
        (
            &["--section-ordering-file=missing.txt"],
            "missing.txt:2:1: output section .nosuch is not described by rivet's default layout",
        ),
        (
            &["--section-ordering-file=assign.txt"],
            "assign.txt:1:1: a symbol assignment in .text",
        ),
        (
            &["--section-ordering-file=address.txt"],
            "attributes of output section .text",
        ),
        (
            &["--section-ordering-file=top.txt"],
            "top.txt:1:1: a symbol assignment: a section ordering file may only map",
        ),
        (
            &["--section-ordering-file=none.txt"],
            "cannot open none.txt",
        ),
        (
            &["-r", "--section-ordering-file=ok.txt"],
            "--section-ordering-file with -r",
        ),
        (
            &["-Ttext=0x500000", "--section-ordering-file=ok.txt"],
            "--section-ordering-file without a SECTIONS script with --section-start",
        ),
    ];
    for (flags, message) in cases {
        let mut args = flags.to_vec();
        args.extend_from_slice(&["a.o", "-e", "f1", "-o", "out"]);
        let r = common::tool(rivet, &args, Some(&dir));
        assert_eq!(r.code, Some(1), "{flags:?}: {}", r.log());
        assert!(r.stderr_str().contains(message), "{flags:?}: {}", r.log());
    }
}
