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
