//! Linker scripts with `SECTIONS` (issue 33): GNU ld's own default script restated with `-T` must give a program
//! that runs as without it, and an embedded-style script (`MEMORY` regions, `.data` loaded in flash and run in
//! RAM, `_sbss`/`_ebss` for the startup code) must give GNU ld's symbols and program headers, and a program that
//! runs. Every link is also made by GNU ld with the same script.

mod common;

use std::path::Path;

/// GNU ld's default script for a kind of output (`-no-pie` or `-pie`), from `ld --verbose`.
fn default_script(dir: &Path, pie: bool) -> String {
    let args: &[&str] = if pie {
        &["-pie", "--verbose"]
    } else {
        &["--verbose"]
    };
    let out = common::tool_ok("ld.bfd", args, dir);
    let mut lines = out.lines().skip_while(|l| !l.starts_with("=====")).skip(1);
    let mut s = String::new();
    for l in lines.by_ref() {
        if l.starts_with("=====") {
            break;
        }
        s.push_str(l);
        s.push('\n');
    }
    assert!(s.contains("SECTIONS"), "no default script in ld --verbose");
    // Symbols around `.rodata`'s inputs: the merged strings must lie between them, where their statement is.
    let rodata = "*(.rodata .rodata.* .gnu.linkonce.r.*)";
    assert!(s.contains(rodata), "{s}");
    s.replacen(
        rodata,
        &format!("__ro_start = .; {rodata} __ro_end = .;"),
        1,
    )
}

const PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
#include <pthread.h>
static __thread int tls_counter = 3;
int initialised = 7;
char zeroed[4096];
const char *greeting = "script layout";
static int from_ctor;
__attribute__((constructor)) static void ctor(void) { from_ctor = 11; }
extern char __bss_start[], _edata[], _end[], __executable_start[], etext[];
extern char __ro_start[] __attribute__((weak)), __ro_end[] __attribute__((weak));
static void *bump(void *p) { tls_counter += 5; return (void *)(long)tls_counter; }
/* Removed by --gc-sections (its .eh_frame record, which KEEP(*(.eh_frame)) keeps, must not keep it). */
void unused_function_xyz(void) { puts("never called"); }
int main(void)
{
    void *r;
    pthread_t t;
    pthread_create(&t, 0, bump, 0);
    pthread_join(t, &r);
    memset(zeroed, 1, sizeof zeroed);
    printf("%s %d %d %d %ld %d\n", greeting, initialised, from_ctor, tls_counter, (long)r, zeroed[4095]);
    printf("order %d %d %d\n", __executable_start < etext, _edata <= __bss_start, __bss_start < _end);
    /* Without the script the symbols are undefined weak (0): the check holds as trivially. */
    printf("strings %d\n", !__ro_start || (greeting >= __ro_start && greeting < __ro_end));
    return 0;
}
"#;

#[test]
fn gnu_default_script_restated_runs_like_no_script() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("sections-default", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("p.c"), PROGRAM).unwrap();
    for (pie, kind) in [(false, "-no-pie"), (true, "-pie")] {
        std::fs::write(dir.join("d.lds"), default_script(&dir, pie)).unwrap();
        let mut runs = Vec::new();
        for (side, shim, script) in [
            ("plain", &bfd, false),
            ("ref", &bfd, true),
            ("test", &shim, true),
        ] {
            let out = format!("p-{side}{kind}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![
                b.as_str(),
                kind,
                "-O2",
                "-ffunction-sections",
                "-Wl,--gc-sections",
                "p.c",
                "-o",
                &out,
                "-pthread",
            ];
            if script {
                args.push("-Wl,-T,d.lds");
            }
            common::tool_ok("gcc", &args, &dir);
            let run = common::tool_ok(&format!("./{out}"), &[], &dir);
            runs.push(run);
            let nm = common::tool_ok("nm", &[&out], &dir);
            assert!(
                !nm.contains("unused_function_xyz"),
                "{side}{kind}: not collected"
            );
            if side == "test" {
                let ph = common::tool_ok("readelf", &["-lW", &out], &dir);
                assert!(ph.contains("GNU_RELRO"), "{kind}: no RELRO:\n{ph}");
                assert_eq!(ph.matches(" LOAD ").count(), 4, "{kind}:\n{ph}");
            }
        }
        assert_eq!(runs[1], runs[0], "{kind}: GNU ld with its script");
        assert_eq!(runs[2], runs[0], "{kind}: rivet with GNU ld's script");
    }
}

const EMBEDDED_LDS: &str = r#"
MEMORY
{
  FLASH (rx) : ORIGIN = 0x10000000, LENGTH = 64K
  RAM (rwx)  : ORIGIN = 0x20000000, LENGTH = 16K
}
ENTRY(_start)
SECTIONS
{
  .text : {
    KEEP(*(.text.start))
    *(.text .text.*)
    *(.rodata .rodata.*)
    . = ALIGN(8);
    _etext = .;
  } > FLASH =0xcccc
  .table : {
    BYTE(1) FILL(0x5a) . = ALIGN(4); SHORT(0x203) LONG(_etext) QUAD(ORIGIN(RAM) + LENGTH(RAM)) SQUAD(-2)
  } > FLASH
  .data : {
    _sdata = .;
    *(.data .data.*)
    . = ALIGN(8);
    _edata = .;
  } > RAM AT> FLASH
  _sidata = LOADADDR(.data);
  .bss (NOLOAD) : {
    _sbss = .;
    *(.bss .bss.*)
    . = ALIGN(8);
    _ebss = .;
  } > RAM
  .stack (NOLOAD) : { . = . + 0x1000; _stack_top = .; } > RAM
  _ram_end = ORIGIN(RAM) + LENGTH(RAM);
  /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame*) }
}
"#;

/// Freestanding startup code: clear `.bss`, print through the system call, exit with a status made of what it
/// found. (Under Linux the kernel maps `.data` at its address from the file, so the copy from its load address
/// that firmware does is left out: the load address's page holds no copy here.)
const EMBEDDED_C: &str = r#"
extern char _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _stack_top[];
int counter = 40;
static char message[] = "embedded ok\n";
long zero_words[8];
static long sys3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
__attribute__((section(".text.start"), noreturn)) void _start(void)
{
    for (char *d = _sbss; d < _ebss;)
        *d++ = 0;
    counter += 2;
    sys3(1, 1, (long)message, sizeof message - 1);
    long z = 0;
    for (int i = 0; i < 8; i++)
        z |= zero_words[i];
    sys3(60, counter + (int)z, 0, 0);
    __builtin_unreachable();
}
"#;

/// `readelf -lW`'s `LOAD` lines: address, load address, file size, memory size, flags. (The `NOLOAD` sections,
/// loaded in FLASH after `.data` as GNU ld's `lang_propagate_lma_regions` has it, get a `PT_LOAD` of their own
/// without file contents, which Linux maps as zeros over `.data`'s page: the program does not run under Linux,
/// GNU ld's as rivet's.)
fn loads(dir: &Path, file: &str) -> Vec<String> {
    common::tool_ok("readelf", &["-lW", file], dir)
        .lines()
        .filter(|l| l.trim_start().starts_with("LOAD"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .map(|f| {
            format!(
                "{} {} {} {} {}",
                f[2],
                f[3],
                f[4],
                f[5],
                f[6..f.len() - 1].join(" ")
            )
        })
        .collect()
}

#[test]
fn embedded_script_matches_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("sections-embedded", &["gcc", "readelf", "nm"])
    else {
        return;
    };
    std::fs::write(dir.join("e.c"), EMBEDDED_C).unwrap();
    std::fs::write(dir.join("e.lds"), EMBEDDED_LDS).unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-O2",
            "-ffreestanding",
            "-fno-pie",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "e.c",
        ],
        &dir,
    );
    let names = [
        "_start",
        "_etext",
        "_sdata",
        "_edata",
        "_sidata",
        "_sbss",
        "_ebss",
        "_stack_top",
        "_ram_end",
        "counter",
        "zero_words",
    ];
    let mut views = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let out = format!("e-{side}");
        let b = format!("-B{}/", shim.display());
        common::tool_ok(
            "gcc",
            &[
                &b,
                "-nostdlib",
                "-static",
                "-no-pie",
                "-Wl,-T,e.lds",
                "-Wl,--build-id=none",
                "e.o",
                "-o",
                &out,
            ],
            &dir,
        );
        let nm = common::tool_ok("nm", &[&out], &dir);
        let mut syms: Vec<String> = nm
            .lines()
            .filter(|l| names.iter().any(|n| l.ends_with(&format!(" {n}"))))
            .map(|l| {
                // Value and name (the type letter of an absolute assignment differs between linkers' choices
                // of section for it).
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {}", f[0], f[f.len() - 1])
            })
            .collect();
        syms.sort();
        assert_eq!(syms.len(), names.len(), "{side}: {nm}");

        let o = common::tool(&format!("./{out}"), &[], Some(&dir));
        // The data commands' bytes, and the code with its gaps filled.
        for sec in [".table", ".text"] {
            let bytes = common::tool_ok("readelf", &["-x", sec, &out], &dir);
            syms.extend(
                bytes
                    .lines()
                    .filter(|l| l.starts_with("  0x"))
                    .map(str::to_string),
            );
        }
        views.push((syms, loads(&dir, &out), o.stdout_str(), o.code));
    }
    assert_eq!(views[1].0, views[0].0, "symbols differ from GNU ld's");
    assert_eq!(views[1].1, views[0].1, "PT_LOADs differ from GNU ld's");
    // Run as GNU ld's runs (see `loads`).
    assert_eq!(
        (views[1].2.as_str(), views[1].3),
        (views[0].2.as_str(), views[0].3)
    );
}

/// `readelf -lW`'s program header lines, whitespace squashed.
fn program_headers(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-lW", file], dir);
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with("Type"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The embedded script with `PHDRS` (two loads with `FLAGS`, a stack header) and `:phdr`s, inherited by the
/// sections after them: GNU ld's program headers exactly (`NOLOAD` sections in no segment), symbols, data.
#[test]
fn embedded_script_with_phdrs_matches_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("sections-phdrs", &["gcc", "readelf", "nm"])
    else {
        return;
    };
    let script = EMBEDDED_LDS
        .replace(
            "ENTRY(_start)",
            "ENTRY(_start)\nPHDRS { text PT_LOAD FLAGS(5); data PT_LOAD FLAGS(6); stack PT_GNU_STACK; }",
        )
        .replace("  } > FLASH =0xcccc\n  .table", "  } > FLASH :text =0xcccc\n  .table")
        .replace("  } > RAM AT> FLASH", "  } > RAM AT> FLASH :data");
    assert!(script.contains(":text") && script.contains(":data"));
    std::fs::write(dir.join("e.c"), EMBEDDED_C).unwrap();
    std::fs::write(dir.join("p.lds"), script).unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-O2",
            "-ffreestanding",
            "-fno-pie",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "e.c",
        ],
        &dir,
    );
    let mut views = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let out = format!("p-{side}");
        let b = format!("-B{}/", shim.display());
        common::tool_ok(
            "gcc",
            &[
                &b,
                "-nostdlib",
                "-static",
                "-no-pie",
                "-Wl,-T,p.lds",
                "-Wl,--build-id=none",
                "e.o",
                "-o",
                &out,
            ],
            &dir,
        );
        let mut nm: Vec<String> = common::tool_ok("nm", &[&out], &dir)
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {}", f[0], f[f.len() - 1])
            })
            .collect();
        nm.sort();
        let table = common::tool_ok("readelf", &["-x", ".table", &out], &dir);
        views.push((program_headers(&dir, &out), nm, table));
    }
    assert_eq!(
        views[1].0, views[0].0,
        "program headers differ from GNU ld's"
    );
    assert_eq!(views[1].1, views[0].1, "symbols differ from GNU ld's");
    assert_eq!(views[1].2, views[0].2, "data commands differ from GNU ld's");
    let o = common::tool("./p-test", &[], Some(&dir));
    assert_eq!(
        (o.stdout_str().as_str(), o.code),
        ("embedded ok\n", Some(42))
    );
}

/// `OVERLAY`: its sections share one address and are loaded one after another from its `AT`; the
/// `__load_start_`/`__load_stop_` symbols, the section addresses and the program headers are GNU ld's.
#[test]
fn overlay_matches_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("sections-overlay", &["gcc", "readelf", "nm"])
    else {
        return;
    };
    std::fs::write(
        dir.join("o.c"),
        "extern char __load_start_ov1[], __load_stop_ov1[], __load_start_ov2[], __load_stop_ov2[];\n\
         __attribute__((section(\".ov1\"))) int one(void) { return 1; }\n\
         __attribute__((section(\".ov2\"))) int two(int x) { return x * 2 + 7; }\n\
         char *bounds[] = { __load_start_ov1, __load_stop_ov1, __load_start_ov2, __load_stop_ov2 };\n\
         void _start(void) { for (;;) one(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("o.lds"),
        "ENTRY(_start)\nSECTIONS\n{\n  . = 0x10000000;\n  .text : { *(.text .text.*) }\n\
         OVERLAY 0x20000000 : AT (0x10010000) { .ov1 { *(.ov1) } .ov2 { *(.ov2) } }\n\
         after_overlay = .;\n  .data : { *(.data) }\n\
         /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame*) }\n}\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-O2",
            "-ffreestanding",
            "-fno-pie",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "o.c",
        ],
        &dir,
    );
    let mut views = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let out = format!("o-{side}");
        let b = format!("-B{}/", shim.display());
        let args = [
            &b,
            "-nostdlib",
            "-static",
            "-no-pie",
            "-Wl,-T,o.lds",
            "-Wl,--build-id=none",
            "o.o",
            "-o",
            &out,
        ];
        common::tool_ok("gcc", &args, &dir);
        let mut nm: Vec<String> = common::tool_ok("nm", &[&out], &dir)
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {}", f[0], f[f.len() - 1])
            })
            .collect();
        nm.sort();
        let sections: Vec<String> = common::tool_ok("readelf", &["-SW", &out], &dir)
            .lines()
            .filter(|l| l.contains(".ov") || l.contains(".text") || l.contains(".data"))
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let at = f.iter().position(|x| x.starts_with('.')).unwrap_or(0);
                format!("{} {} {}", f[at], f[at + 2], f[at + 4])
            })
            .collect();
        views.push((nm, sections, program_headers(&dir, &out)));
    }
    assert_eq!(views[1].0, views[0].0, "symbols differ from GNU ld's");
    assert_eq!(views[1].1, views[0].1, "sections differ from GNU ld's");
    assert_eq!(
        views[1].2, views[0].2,
        "program headers differ from GNU ld's"
    );
}

/// Links `p.c` (compiled to `obj`) with `script` by GNU ld and by rivet (through `bfd` and `shim`) with `flags`,
/// runs both; returns each side's (linker outcome, program output or `None` where the link or the run failed).
fn link_and_run(
    dir: &Path,
    (shim, bfd): (&Path, &Path),
    (obj, script, tag): (&str, &str, &str),
    flags: &[&str],
) -> Vec<(common::Outcome, Option<String>)> {
    std::fs::write(dir.join(format!("{tag}.lds")), script).unwrap();
    let t = format!("-Wl,-T,{tag}.lds");
    let mut sides = Vec::new();
    for (side, shim) in [("ref", bfd), ("test", shim)] {
        let out = format!("{tag}-{side}");
        let b = format!("-B{}/", shim.display());
        let mut args = vec![b.as_str(), obj, "-o", &out, &t];
        args.extend_from_slice(flags);
        let link = common::tool("gcc", &args, Some(dir));
        let run = link
            .success()
            .then(|| common::tool(&format!("./{out}"), &[], Some(dir)))
            .filter(|r| r.success())
            .map(|r| r.stdout_str());
        sides.push((link, run));
    }
    sides
}

const LINKER_MADE_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int x = 5;
__thread int t = 3;
static int impl(void) { return 42; }
static void *pick(void) { return impl; }
int chosen(void) __attribute__((ifunc("pick")));
int main(void) { printf("%d %d %d %d\n", x, t, chosen(), atoi("7")); return 0; }
"#;

/// A script's data command beside a section the linker makes (`QUAD(-1)` before or after `*(.gnu.hash)`,
/// `*(.plt)`...): GNU ld puts its own contents where their statement is, and points `.dynamic`, the PLT and the
/// GOT at them there. Wherever GNU ld's program runs, rivet's must link, run and print the same (before this,
/// writers put the linker's contents at the start of their output section, over the data command's place, and
/// `.dynamic` pointed there: a crash at start).
#[test]
fn data_commands_beside_linker_made_sections() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("sections-linker-made", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("p.c"), LINKER_MADE_C).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "-fPIE", "p.c", "-o", "p.o"], &dir);
    let default = default_script(&dir, true);
    let mut checked = 0;
    for name in [
        ".hash",
        ".gnu.hash",
        ".dynsym",
        ".dynstr",
        ".gnu.version",
        ".gnu.version_r",
        ".rela.dyn",
        ".rela.plt",
        ".plt",
        ".eh_frame_hdr",
        ".dynamic",
        ".got",
        ".got.plt",
        ".note.gnu.build-id",
    ] {
        for before in [true, false] {
            let pat = format!("*({name})");
            let Some(at) = default.find(&pat) else {
                // `.rela.dyn`'s statement lists several names.
                assert_eq!(name, ".rela.dyn");
                continue;
            };
            let script = if before {
                format!("{}QUAD(-1) {}", &default[..at], &default[at..])
            } else {
                let end = at + pat.len();
                format!("{} QUAD(-1) {}", &default[..end], &default[end..])
            };
            let tag = format!("q{}{}", name.replace('.', "_"), before as u8);
            let sides = link_and_run(
                &dir,
                (&shim, &bfd),
                ("p.o", &script, &tag),
                &["-pie", "-Wl,--hash-style=both", "-Wl,--build-id"],
            );
            let [(gl, gr), (rl, rr)] = &sides[..] else {
                unreachable!()
            };
            assert!(gl.success(), "{tag}: {}", gl.log());
            assert!(rl.success(), "{tag}: {}", rl.log());
            if gr.is_some() {
                assert_eq!(rr, gr, "{tag}: rivet's program against GNU ld's");
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} of GNU ld's programs ran");
}

/// GNU ld's default script for a static program with an IFUNC: `.iplt` goes into `.plt` and `.rela.iplt` into
/// `.rela.plt` between the script's `__rela_iplt_start` and `__rela_iplt_end`, which the C library's start-up
/// code applies. As with GNU ld, no `.iplt` or `.rela.iplt` output section is left.
#[test]
fn static_ifunc_with_the_default_script() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("sections-static-ifunc", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("p.c"), LINKER_MADE_C).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "p.c", "-o", "p.o"], &dir);
    let script = default_script(&dir, false);
    let sides = link_and_run(&dir, (&shim, &bfd), ("p.o", &script, "st"), &["-static"]);
    for (side, (link, run)) in ["ref", "test"].iter().zip(&sides) {
        assert!(link.success(), "{side}: {}", link.log());
        assert_eq!(run.as_deref(), Some("5 3 42 7\n"), "{side}");
        let secs = common::tool_ok("readelf", &["-SW", &format!("st-{side}")], &dir);
        assert!(
            !secs.contains(".iplt") && !secs.contains(".rela.iplt"),
            "{side}:\n{secs}"
        );
    }
}

/// A kernel-style `.notes` output section taking every `.note.*` input: the linker's build id and merged
/// property note go in it, in GNU ld's order (the property note where the first object's was, the build id after
/// that object's notes), between the script's symbols.
#[test]
fn linker_made_notes_in_a_script_section() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("sections-notes", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("p.c"), LINKER_MADE_C).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "-fPIE", "p.c", "-o", "p.o"], &dir);
    let default = default_script(&dir, true);
    let line = default
        .lines()
        .find(|l| l.contains(".note.gnu.build-id"))
        .expect("a build id statement");
    let notes = "  .notes : { __start_notes = .; KEEP(*(.note.*)) __stop_notes = .; }";
    let script = default.replacen(line, notes, 1);
    let sides = link_and_run(
        &dir,
        (&shim, &bfd),
        ("p.o", &script, "n"),
        &["-pie", "-Wl,--build-id=sha1"],
    );
    let mut views = Vec::new();
    for (side, (link, run)) in ["ref", "test"].iter().zip(&sides) {
        assert!(link.success(), "{side}: {}", link.log());
        assert_eq!(run.as_deref(), Some("5 3 42 7\n"), "{side}");
        let out = format!("n-{side}");
        let secs = common::tool_ok("readelf", &["-SW", &out], &dir);
        assert!(
            !secs.contains(".note.gnu"),
            "{side}: notes left outside .notes:\n{secs}"
        );
        // The notes' types in order, and their size.
        let dump = common::tool_ok("readelf", &["-x", ".notes", &out], &dir);
        let words: Vec<String> = dump
            .lines()
            .filter(|l| l.trim_start().starts_with("0x"))
            .flat_map(|l| {
                l.split_whitespace()
                    .skip(1)
                    .take(4)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut types = Vec::new();
        let mut k = 0;
        while k + 3 < words.len() {
            let word = |i: usize| u32::from_str_radix(&words[i], 16).map(u32::swap_bytes);
            let (Ok(namesz), Ok(descsz), Ok(ty)) = (word(k), word(k + 1), word(k + 2)) else {
                break;
            };
            types.push(ty);
            // GNU ld's `.notes` is 8-aligned, but the build id's note inside it is 4-aligned.
            k += 3 + (namesz as usize).div_ceil(4) + (descsz as usize).div_ceil(4);
            while k < words.len() && words[k] == "00000000" {
                k += 1;
            }
        }
        let nm = common::tool_ok("nm", &[&out], &dir);
        let sym = |n: &str| {
            nm.lines()
                .find(|l| l.ends_with(&format!(" {n}")))
                .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
                .unwrap()
        };
        views.push((types, sym("__stop_notes") - sym("__start_notes")));
    }
    assert!(views[0].0.contains(&3), "GNU ld's build id: {views:?}");
    assert_eq!(views[1], views[0], "rivet's .notes against GNU ld's");
}

/// Symbols a script's data commands and addresses name before the walk reaches their assignment: a top-level
/// assignment before `SECTIONS` used for the location counter and in `QUAD`, a symbol assigned after the
/// section (`LONG(later)`), one of the inputs (`QUAD(main)`) and the address of a section placed later
/// (`QUAD(ADDR(.bss))`, which the first pass over the commands sees stale), as GNU ld's later passes see them; an
/// output section's `ALIGN(48)`, rounded up to 64 for its address and its `sh_addralign`. The `.data` bytes and
/// `.text`'s header line must be GNU ld's.
#[test]
fn script_values_named_before_their_assignment() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("sections-later-symbols", &["gcc", "readelf"])
    else {
        return;
    };
    let src =
        "int main(void) { __asm__ volatile(\"syscall\" : : \"a\"(60), \"D\"(0)); return 0; }\n";
    std::fs::write(dir.join("m.c"), src).unwrap();
    common::tool_ok(
        "gcc",
        &["-c", "-O1", "-fno-asynchronous-unwind-tables", "m.c"],
        &dir,
    );
    let script = "base = 0x401000;
gap = 0x40;
SECTIONS {
  . = base;
  .text : ALIGN(48) { *(.text .text.*) . = . + gap; }
  .data : { *(.data .data.*) LONG(later) QUAD(base) QUAD(main) QUAD(ADDR(.bss)) }
  .bss : { *(.bss .bss.*) . = . + 0x20; }
  later = 0x1234;
  /DISCARD/ : { *(.note.*) *(.comment) }
}
";
    std::fs::write(dir.join("l.lds"), script).unwrap();
    let mut views = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let out = format!("l-{side}");
        let b = format!("-B{}/", shim.display());
        let args = [
            &b,
            "-nostdlib",
            "-static",
            "-Wl,-e,main",
            "-Wl,-T,l.lds",
            "m.o",
            "-o",
            &out,
        ];
        common::tool_ok("gcc", &args, &dir);
        let data = common::tool_ok("readelf", &["-x", ".data", &out], &dir);
        let data: Vec<String> = data
            .lines()
            .filter(|l| l.contains("0x"))
            .map(str::to_string)
            .collect();
        let text = common::tool_ok("readelf", &["-SW", &out], &dir);
        let text = text
            .lines()
            .find(|l| l.contains(" .text"))
            .unwrap_or_default()
            .to_string();
        views.push((common::squash_ws(&text), data));
        let run = common::tool(&format!("./{out}"), &[], Some(&dir));
        assert_eq!(run.code, Some(0), "{side}: {}", run.log());
    }
    assert!(
        views[0].0.ends_with(" 64"),
        "GNU ld's .text: {}",
        views[0].0
    );
    assert_eq!(views[1], views[0], "rivet against GNU ld");
    // Where the program headers' size moves everything between the passes (rivet's headers are not GNU ld's,
    // so this one is checked against rivet's own section headers): the last 8 bytes of `.data` are `.bss`'s
    // address.
    let moved = script.replacen(". = base;", ". = base + SIZEOF_HEADERS;", 1);
    std::fs::write(dir.join("m.lds"), moved).unwrap();
    let b = format!("-B{}/", shim.display());
    let args = [
        &b,
        "-nostdlib",
        "-static",
        "-Wl,-e,main",
        "-Wl,-T,m.lds",
        "m.o",
        "-o",
        "m-test",
    ];
    common::tool_ok("gcc", &args, &dir);
    let secs = common::tool_ok("readelf", &["-SW", "m-test"], &dir);
    let field = |name: &str, k: usize| -> u64 {
        let l = secs.lines().find(|l| l.contains(name)).unwrap();
        let f: Vec<&str> = l.split(']').nth(1).unwrap().split_whitespace().collect();
        u64::from_str_radix(f[k], 16).unwrap()
    };
    let (data_off, data_size, bss) = (field(" .data", 3), field(" .data", 4), field(" .bss", 2));
    let bytes = std::fs::read(dir.join("m-test")).unwrap();
    let end = (data_off + data_size) as usize;
    let last = u64::from_le_bytes(bytes[end - 8..end].try_into().unwrap());
    assert_eq!(last, bss, "QUAD(ADDR(.bss)) against .bss's address");
}
