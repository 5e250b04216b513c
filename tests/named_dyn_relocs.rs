//! Dynamic relocations a script places by their input section's name, as GNU ld does: each input section's
//! dynamic relocations are a section named `.rela` and its name, which a statement may put in an output section of
//! its own; the rest go to `.rela.dyn`. `DT_RELA` and `DT_RELASZ` then span both (GNU ld's range over every
//! allocated `SHT_RELA` section), and `DT_RELACOUNT` counts `.rela.dyn`'s relative ones only.
//!
//! Two scripts: U-Boot's (`.efi_runtime_rel : { *(.rel*.efi_runtime) *(.rel*.efi_runtime.*) }`, a self-relocating
//! PIE that reads its ranges through symbols), and GNU ld's default PIE script with `.rela.mysec` placed just
//! before `.rela.dyn`, whose program the loader relocates and runs. gcc's and clang-19's objects; GNU ld's output is
//! the reference for the sections' relocations and the dynamic tags.

mod common;

use std::path::Path;

const RUNTIME: &str = r#"
int x = 5, y = 7;
int *rp __attribute__((section(".data.efi_runtime"))) = &x;
int *rq __attribute__((section(".data.efi_runtime"))) = &y;
static int *const rr __attribute__((used, section(".rodata.efi_runtime.tab"))) = &x;
int *p = &x;
int big[100];
void _start(void) {}
"#;

const UBOOT: &str = r#"
ENTRY(_start)
SECTIONS {
  . = 0x100000;
  .text : { *(.text*) }
  .efi_runtime : { *(.rodata.efi_runtime*) *(.data.efi_runtime*) }
  .data : { *(.data*) }
  .hash : { *(.hash*) }
  .got : { *(.got*) }
  .efi_runtime_rel_start : { *(.__efi_runtime_rel_start) }
  .efi_runtime_rel : { *(.rel*.efi_runtime) *(.rel*.efi_runtime.*) }
  .efi_runtime_rel_stop : { *(.__efi_runtime_rel_stop) }
  .dynsym : { *(.dynsym*) }
  __rel_dyn_start = .;
  .rela.dyn : { *(.rela*) }
  __rel_dyn_end = .;
  .dynamic : { *(.dynamic) }
  .bss __rel_dyn_start (OVERLAY) : { *(.bss*) *(COM*) }
  /DISCARD/ : { *(.interp*) *(.gnu*) *(.note.gnu.property) *(.comment) *(.eh_frame) }
}
"#;

const PROGRAM: &str = r#"
#include <stdio.h>
static int a = 1, b = 2;
extern int shared_value;
int *mine[] __attribute__((section(".mysec"))) = { &a, &b, &shared_value };
int *other[] = { &b, &a };
int shared_value = 40;
int main(void) { printf("%d %d %d %d %d\n", *mine[0], *mine[1], *mine[2], *other[0], *other[1]); return 0; }
"#;

/// "section: type offset" of each relocation in the allocated relocation sections, and the relocation tags.
fn dyn_shape(dir: &Path, file: &str) -> (Vec<String>, Vec<String>) {
    let out = common::tool_ok("readelf", &["-rW", file], dir);
    let mut sec = String::new();
    let mut relocs = Vec::new();
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix("Relocation section '") {
            sec = rest.split('\'').next().unwrap_or("").to_string();
        } else if matches!(
            sec.as_str(),
            ".rela.dyn" | ".efi_runtime_rel" | ".rela.mysec"
        ) {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() >= 3 && f[2].starts_with("R_") {
                relocs.push(format!("{sec}: {} {}", f[2], f[0]));
            }
        }
    }
    let tags = (common::tool_ok("readelf", &["-dW", file], dir).lines())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 2 && ["(RELA)", "(RELASZ)", "(RELACOUNT)"].contains(&f[1]))
        .map(|f| f[1..].join(" "))
        .collect();
    (relocs, tags)
}

#[test]
fn dynamic_relocations_go_where_the_script_puts_their_section() {
    let Some((dir, _, _)) = common::against_gnu_ld("named-dyn-relocs", &["gcc", "readelf"]) else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    let shim = common::ld_shim_dir(&rivet, "named-dyn-relocs");
    std::fs::write(dir.join("rt.c"), RUNTIME).unwrap();
    std::fs::write(dir.join("uboot.lds"), UBOOT).unwrap();
    std::fs::write(dir.join("p.c"), PROGRAM).unwrap();
    let mut script = String::new();
    for l in common::gnu_default_script(&["-pie"], &dir).lines() {
        if l.trim_start().starts_with(".rela.dyn") {
            script.push_str("  .rela.mysec : { *(.rela.mysec) }\n");
        }
        script.push_str(l);
        script.push('\n');
    }
    std::fs::write(dir.join("pie.lds"), script).unwrap();
    for cc in common::compilers() {
        let c = cc.driver(false);
        common::tool_ok(c, &["-O2", "-fPIE", "-c", "rt.c", "-o", "rt.o"], &dir);
        common::tool_ok(c, &["-O2", "-fPIE", "-c", "p.c", "-o", "p.o"], &dir);
        let mut seen = Vec::new();
        for (side, ld) in [
            ("bfd", "ld.bfd".to_string()),
            ("rivet", rivet.display().to_string()),
        ] {
            let out = format!("uboot.{side}");
            let args = [
                "-pie",
                "--no-dynamic-linker",
                "--hash-style=sysv",
                "-z",
                "notext",
                "-T",
                "uboot.lds",
                "rt.o",
                "-o",
                &out,
            ];
            let o = common::tool(&ld, &args, Some(&dir));
            assert!(o.success(), "{} {side}: {}", cc.name(), o.log());
            let prog = format!("p.{side}");
            let flag = match side {
                "bfd" => "-fuse-ld=bfd".to_string(),
                _ => format!("-B{}/", shim.display()),
            };
            let args = ["-pie", &flag, "-Wl,-T,pie.lds", "p.o", "-o", &prog];
            common::tool_ok(c, &args, &dir);
            let run = common::tool(&dir.join(&prog).display().to_string(), &[], Some(&dir));
            assert!(run.success(), "{} {side}: {}", cc.name(), run.log());
            assert_eq!(run.stdout_str(), "1 2 40 2 1\n", "{} {side}", cc.name());
            seen.push((dyn_shape(&dir, &out), dyn_shape(&dir, &prog)));
        }
        let (bfd, ours) = (&seen[0], &seen[1]);
        assert!(
            bfd.0.0.iter().any(|r| r.starts_with(".efi_runtime_rel")),
            "{:?}",
            bfd.0.0
        );
        assert_eq!(
            ours.0,
            bfd.0,
            "{}: U-Boot's script (relocations, tags)",
            cc.name()
        );
        assert!(
            bfd.1.0.iter().any(|r| r.starts_with(".rela.mysec")),
            "{:?}",
            bfd.1.0
        );
        let mysec = |v: &Vec<String>| -> Vec<String> {
            v.iter()
                .filter(|r| r.starts_with(".rela.mysec"))
                .cloned()
                .collect()
        };
        assert_eq!(
            mysec(&ours.1.0).len(),
            mysec(&bfd.1.0).len(),
            "{}: {:?}",
            cc.name(),
            ours.1
        );
    }
}
