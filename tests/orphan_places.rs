//! Where orphan sections go under a `-T` script, as GNU ld places them (issue 33): after the script's section
//! named for their kind (`.text` for code, `.rodata` for read-only data, `.data` for writable data, `.bss` for
//! zero-fill), even an empty one, and after the symbol assignments that follow that section, before the next
//! assignment to `.` or the next section. So `.data : { ... } _edata = .;` leaves an orphan `.mydata` outside
//! `_edata`, as the embedded and kernel scripts expect. Each script is linked by GNU ld and by rivet; the section
//! order and addresses and every script symbol's value and section are compared.

mod common;

use std::path::Path;

const CODE: &str = r#"
int d1 = 1;
const int ro1 = 5;
int b1;
__attribute__((section(".mydata"))) int md = 2;
__attribute__((section(".myro"))) const int mr = 3;
__attribute__((section(".mytext"))) void mt(void) {}
__attribute__((section(".mybss,\"aw\",@nobits#"))) int mb[4];
void _start(void) { for (;;); }
"#;

/// Symbols between the sections, the first sections empty or not.
const PLAIN: &str = r#"
SECTIONS {
  . = 0x400000;
  .text : { *(.text) }
  _etext = .;
  .rodata : { *(.rodata*) }
  . = ALIGN(0x1000);
  .data : { *(.data) }
  _edata = .;
  .bss : { *(.bss) }
  _end = .;
  /DISCARD/ : { *(.comment) *(.note*) }
}
"#;

/// Assignments to `.` after the symbols: the orphans go before them.
const ALIGNED: &str = r#"
SECTIONS {
  . = 0x400000;
  .first : { LONG(1) }
  .text : { *(.text) }
  _etext = .;
  . = ALIGN(0x1000);
  .rodata : { *(.rodata*) }
  _erodata = .;
  . = ALIGN(0x1000);
  .data : { *(.data) }
  _edata = .;
  . = ALIGN(16);
  __bss_start = .;
  .bss : { *(.bss) }
  __bss_stop = .;
  _end = .;
  /DISCARD/ : { *(.comment) *(.note*) }
}
"#;

/// A kernel-like script: page-aligned segments, symbols at their ends, no `.rodata` statement (read-only
/// orphans go after the last read-only section).
const KERNEL: &str = r#"
SECTIONS {
  . = 0xffffffff81000000;
  _text = .;
  .text : { *(.text) }
  _etext = .;
  . = ALIGN(0x1000);
  __start_rodata = .;
  .rodata_main : { *(.rodata*) }
  __end_rodata = .;
  . = ALIGN(0x1000);
  _sdata = .;
  .data : { *(.data) }
  _edata = .;
  . = ALIGN(0x1000);
  __bss_start = .;
  .bss : { *(.bss) }
  . = ALIGN(8);
  __bss_stop = .;
  _end = .;
  /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame) }
}
"#;

/// "name address" of every allocated section, in header order.
fn sections(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix('['))
        .filter_map(|l| l.split_once(']'))
        .filter(|(n, _)| n.trim().parse::<usize>().is_ok_and(|n| n > 0))
        .map(|(_, rest)| rest.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 2 && !f[2].trim_start_matches('0').is_empty())
        .map(|f| format!("{} {}", f[0], f[2]))
        .collect()
}

/// "name value section" of the script's symbols, sorted.
fn symbols(dir: &Path, file: &str) -> Vec<String> {
    let names: Vec<String> = {
        let out = common::tool_ok("readelf", &["-SW", file], dir);
        out.lines()
            .filter_map(|l| l.trim_start().strip_prefix('['))
            .filter_map(|l| l.split_once(']'))
            .map(|(_, rest)| rest.split_whitespace().next().unwrap_or("").to_string())
            .collect()
    };
    let out = common::tool_ok("readelf", &["-sW", file], dir);
    let mut v: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 8 && f[0].ends_with(':') && f[3] == "NOTYPE")
        .filter(|f| f[7].starts_with('_') && !f[7].starts_with("__start_m"))
        .filter(|f| !f[7].starts_with("__stop_m"))
        .map(|f| {
            let sec = f[6]
                .parse::<usize>()
                .ok()
                .and_then(|i| names.get(i).cloned());
            format!("{} {} {}", f[7], f[1], sec.unwrap_or(f[6].to_string()))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn orphans_go_where_gnu_ld_puts_them() {
    let Some((dir, _, _)) = common::against_gnu_ld("orphan-places", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(dir.join("o.c"), CODE).unwrap();
    let c = [
        "-c",
        "-O1",
        "-fno-pic",
        "-fno-asynchronous-unwind-tables",
        "o.c",
    ];
    common::tool_ok("gcc", &c, &dir);
    let (rivet, _) = common::linker_under_test();
    for (name, script) in [("plain", PLAIN), ("aligned", ALIGNED), ("kernel", KERNEL)] {
        let lds = format!("{name}.lds");
        std::fs::write(dir.join(&lds), script).unwrap();
        let mut seen = Vec::new();
        for (side, ld) in [
            ("bfd", "ld.bfd".to_string()),
            ("rivet", rivet.display().to_string()),
        ] {
            let out = format!("{name}.{side}");
            let args = ["-T", &lds, "-z", "noexecstack", "-o", &out, "o.o"];
            let o = common::tool(&ld, &args, Some(&dir));
            assert!(o.success(), "{side}: {}", o.log());
            seen.push((sections(&dir, &out), symbols(&dir, &out)));
        }
        assert_eq!(seen[1].0, seen[0].0, "{name}: sections");
        assert_eq!(seen[1].1, seen[0].1, "{name}: symbols");
    }
    // Spelled out: `.mydata` after `.data` and outside `_edata`, `.mybss` after `.bss` and outside `_end`.
    let order: Vec<String> = sections(&dir, "plain.rivet")
        .iter()
        .map(|s| s.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(
        order,
        [
            ".text", ".mytext", ".rodata", ".myro", ".data", ".mydata", ".bss", ".mybss"
        ]
    );
    let syms = symbols(&dir, "plain.rivet");
    let value = |n: &str| {
        let s = syms
            .iter()
            .find(|s| s.starts_with(&format!("{n} ")))
            .unwrap();
        u64::from_str_radix(s.split(' ').nth(1).unwrap(), 16).unwrap()
    };
    let sections = sections(&dir, "plain.rivet");
    let addr = |n: &str| {
        let s = sections
            .iter()
            .find(|s| s.starts_with(&format!("{n} ")))
            .unwrap();
        u64::from_str_radix(s.split(' ').nth(1).unwrap(), 16).unwrap()
    };
    assert_eq!(value("_edata"), addr(".mydata"));
    assert!(value("_end") < addr(".mybss"));
}

/// A U-Boot-like script for a self-relocating PIE: no `.rodata`, the dynamic sections named. GNU ld puts the
/// read-only orphans (`.myro`, `.rodata`, `.eh_frame`, `.dynstr`, `.gnu.hash`) after `.text`: the last section of
/// their flags but for being code, and of their type, as its flag search asks; the later ones each after the one
/// before.
const PIE: &str = r#"
SECTIONS {
  . = 0x100000;
  .text : { *(.text*) }
  .data : { *(.data*) }
  .hash : { *(.hash*) }
  .got : { *(.got*) }
  .dynsym : { *(.dynsym*) }
  .rela.dyn : { *(.rela*) }
  .dynamic : { *(.dynamic) }
  .bss : { *(.bss*) }
  /DISCARD/ : { *(.comment) *(.interp) *(.note*) }
}
"#;

/// Notes named in a script, but no `.rodata`: read-only orphans go after `.text` (of their type), not after the
/// notes.
const NOTES: &str = r#"
SECTIONS {
  . = 0x400000;
  .text : { *(.text) }
  .notes : { *(.note.gnu.build-id) }
  . = ALIGN(0x1000);
  .data : { *(.data) }
  .bss : { *(.bss) }
  /DISCARD/ : { *(.comment) }
}
"#;

/// A dynamic program under a script that names only `.text`, `.data` and `.bss`: every other section is an
/// orphan, the linker's own among them (met after the first object's, in the order GNU ld makes them), the notes
/// kept together by alignment and the code after them.
const MINIMAL: &str = r#"
SECTIONS {
  . = 0x400000 + SIZEOF_HEADERS;
  .text : { *(.text*) }
  . = ALIGN(0x1000);
  .data : { *(.data*) }
  .bss : { *(.bss*) }
}
"#;

/// The names of the allocated sections in header order.
fn alloc_names(dir: &Path, file: &str) -> Vec<String> {
    sections(dir, file)
        .into_iter()
        .map(|s| s.split(' ').next().unwrap().to_string())
        .collect()
}

#[test]
fn orphans_follow_gnu_ld_flag_search() {
    let Some((dir, _, _)) = common::against_gnu_ld("orphan-flags", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(
        dir.join("o.c"),
        CODE.replace("int b1;", "int b1;\nint *pd = &d1;"),
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "-fPIE", "o.c", "-o", "pie.o"], &dir);
    common::tool_ok(
        "gcc",
        &["-c", "-O1", "-fno-pic", "o.c", "-o", "abs.o"],
        &dir,
    );
    let main = "#include <stdio.h>\n__thread int tv = 3;\n__thread int tb;\n\
                int main(void) { printf(\"%d\\n\", tv + tb); return 0; }\n";
    std::fs::write(dir.join("m.c"), main).unwrap();
    std::fs::write(dir.join("pie.lds"), PIE).unwrap();
    std::fs::write(dir.join("notes.lds"), NOTES).unwrap();
    std::fs::write(dir.join("min.lds"), MINIMAL).unwrap();
    let (rivet, _) = common::linker_under_test();
    let shim = common::ld_shim_dir(&rivet, "orphan-flags");
    let shim_flag = format!("-B{}/", shim.display());
    let mut seen: Vec<Vec<Vec<String>>> = Vec::new();
    for (side, ld) in [
        ("bfd", "ld.bfd".to_string()),
        ("rivet", rivet.display().to_string()),
    ] {
        let pie = format!("pie.{side}");
        let args = [
            "-pie",
            "--no-dynamic-linker",
            "-z",
            "noexecstack",
            "-T",
            "pie.lds",
            "-o",
            &pie,
            "pie.o",
        ];
        let o = common::tool(&ld, &args, Some(&dir));
        assert!(o.success(), "{side}: {}", o.log());
        let notes = format!("notes.{side}");
        let args = [
            "--build-id",
            "-z",
            "noexecstack",
            "-T",
            "notes.lds",
            "-o",
            &notes,
            "abs.o",
        ];
        let o = common::tool(&ld, &args, Some(&dir));
        assert!(o.success(), "{side}: {}", o.log());
        let min = format!("min.{side}");
        let driver = if side == "bfd" {
            "-fuse-ld=bfd"
        } else {
            &shim_flag
        };
        let args = [
            "-O1",
            "-pie",
            "-fPIE",
            "-Wl,--build-id,--hash-style=both,-T,min.lds",
            driver,
            "m.c",
            "-o",
            &min,
        ];
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{side}: {}", o.log());
        seen.push(
            [pie, notes, min]
                .iter()
                .map(|f| alloc_names(&dir, f))
                .collect(),
        );
    }
    let (bfd, ours) = (&seen[0], &seen[1]);
    assert_eq!(ours[0], bfd[0], "pie.lds: sections");
    assert_eq!(ours[1], bfd[1], "notes.lds: sections");
    // GNU ld makes sections rivet does not (`.plt.got`, a second `.eh_frame` for its PLT), puts `.rela.plt` in
    // its orphan `.rela.dyn`, and places `.tbss` before `.tdata` (where its TLS segment then goes astray: its
    // program fails to load). The other sections are in its order.
    let skip = [".plt.got", ".eh_frame", ".rela.plt", ".tbss", ".tdata"];
    let keep = |v: &Vec<String>| -> Vec<String> {
        let mut v: Vec<String> = v
            .iter()
            .filter(|n| !skip.contains(&n.as_str()))
            .cloned()
            .collect();
        v.dedup();
        v
    };
    assert_eq!(keep(&ours[2]), keep(&bfd[2]), "min.lds: sections");
    let pos = |n: &str| ours[2].iter().position(|s| s == n).unwrap();
    assert!(pos(".tdata") < pos(".tbss"), "{:?}", ours[2]);
    let run = common::tool(
        &dir.join("min.rivet").display().to_string(),
        &[],
        Some(&dir),
    );
    assert!(run.success(), "{}", run.log());
    assert_eq!(run.stdout_str(), "3\n");
}
