//! The padding inside executable output sections is filled with no-op instructions, as GNU ld fills it on
//! x86-64 (its longest no-op, 10 bytes, repeated, then one of the length left), not with zeros: before input
//! sections that need alignment, and in a script's `. = . + N` and `. = ALIGN(N)` inside a code section. Zeros
//! there disassemble as `add %al,(%rax)` and read as garbage to disassemblers and to code that scans for
//! function boundaries. A script's explicit fill (`=0x...`, `FILL`) wins over it, and data sections keep zeros.
//! The `.text` bytes are compared with GNU ld's whole: the sections hold no absolute addresses.

mod common;

use std::path::Path;
use std::process::Command;

/// `_start` calls through functions whose sections leave gaps of every length from 1 to 23 bytes before the
/// next 32-byte aligned one, then exits with 0 (`exit` is x86-64's system call or i386's).
fn source(exit: &str) -> String {
    let mut s = format!(
        "\t.section .text.start,\"ax\",@progbits\n\t.globl _start\n_start:\n\tcall f1\n{exit}",
    );
    for n in 1..=23 {
        // A function of 32 - n bytes (a `ret` and the rest filled with `int3`) in a 32-byte aligned section.
        s += &format!("\t.section .text.f{n},\"ax\",@progbits\n\t.p2align 5\nf{n}:\n",);
        if n < 23 {
            s += &format!("\tjmp f{}\n\t.fill {},1,0xcc\n", n + 1, 32 - n - 5);
        } else {
            s += &format!("\tret\n\t.fill {},1,0xcc\n", 32 - n - 1);
        }
    }
    // Data keeps zeros between its input sections.
    s += "\t.section .data.a,\"aw\",@progbits\n\t.byte 1\n\t.section .data.b,\"aw\",@progbits\n\
          \t.p2align 4\n\t.byte 2\n";
    s += "\t.section .note.GNU-stack,\"\",@progbits\n";
    s
}

const EXIT64: &str = "\tmov $60, %eax\n\txor %edi, %edi\n\tsyscall\n";
const EXIT32: &str = "\tmov $1, %eax\n\txor %ebx, %ebx\n\tint $0x80\n";

fn link(ld: &Path, dir: &Path, exe: &str, opts: &[&str]) {
    link_only(ld, dir, exe, "f.o", opts);
    let run = Command::new(dir.join(exe)).status().unwrap();
    assert!(run.success(), "{exe} {opts:?}: {run}");
}

fn link_only(ld: &Path, dir: &Path, exe: &str, obj: &str, opts: &[&str]) {
    let o = Command::new(ld)
        .args(["-static", "-nostdlib", "-o", exe, obj])
        .args(opts)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} {opts:?}: {}",
        ld.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The linker under test (`RIVET_TEST_LINKER` too: the test compares with GNU ld) and a fresh work directory;
/// `None` when a tool is missing.
fn setup(name: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    if !["gcc", "ld.bfd", "objcopy"]
        .iter()
        .all(|t| common::have_tool(t))
    {
        eprintln!("skipped: gcc, ld.bfd and objcopy needed");
        return None;
    }
    let dir = common::work_root().join(name);
    common::fresh_dir(&dir);
    Some((common::linker_under_test().0, dir))
}

/// The bytes of section `name` of `exe`.
fn contents(dir: &Path, exe: &str, name: &str) -> Vec<u8> {
    let out = dir.join(format!("{exe}{name}.bin"));
    let dump = format!("--dump-section={name}={}", out.display());
    common::tool_ok("objcopy", &[&dump, exe, "/dev/null"], dir);
    std::fs::read(out).unwrap()
}

#[test]
fn code_padding_is_gnu_ld_no_ops() {
    let Some((linker, dir)) = setup("code-fill") else {
        return;
    };
    std::fs::write(dir.join("f.s"), source(EXIT64)).unwrap();
    common::tool_ok("gcc", &["-c", "f.s", "-o", "f.o"], &dir);
    // GNU ld's default script, as a script.
    std::fs::write(
        dir.join("default.lds"),
        common::gnu_default_script(&[], &dir),
    )
    .unwrap();
    // Padding statements of a script: `. = . + 13` and `ALIGN` in code, and a fill pattern that wins over the
    // no-ops.
    std::fs::write(
        dir.join("pad.lds"),
        "SECTIONS {\n  . = 0x401000;\n  .filled : { *(.text.f2?) . = . + 7; } =0x5a\n\
         .text : { *(.text.start) . = . + 13; *(.text.f*) . = ALIGN(64); }\n  .data : { *(.data.*) }\n}\n",
    )
    .unwrap();
    let bfd = common::which("ld.bfd").unwrap();
    let cases: [(&str, &[&str]); 3] = [
        ("default", &[]),
        ("script", &["-T", "default.lds"]),
        ("pad", &["-T", "pad.lds"]),
    ];
    for (name, opts) in cases {
        let (want, got) = (format!("{name}-bfd"), format!("{name}-rivet"));
        link(&bfd, &dir, &want, opts);
        link(&linker, &dir, &got, opts);
        let sections: &[&str] = match name {
            "pad" => &[".text", ".filled", ".data"],
            _ => &[".text", ".data"],
        };
        for &section in sections {
            assert_eq!(
                contents(&dir, &got, section),
                contents(&dir, &want, section),
                "{name}: {section} differs from GNU ld's"
            );
        }
    }
}

/// i386 (`-m elf_i386`, the kernel's 32-bit links): GNU ld pads code with `66 90` pairs and a `90`.
#[test]
fn i386_code_padding_is_gnu_ld_no_ops() {
    let Some((linker, dir)) = setup("code-fill-i386") else {
        return;
    };
    std::fs::write(dir.join("f32.s"), source(EXIT32)).unwrap();
    common::tool_ok("gcc", &["-m32", "-c", "f32.s", "-o", "f32.o"], &dir);
    let bfd = common::which("ld.bfd").unwrap();
    let opts = ["-m", "elf_i386"];
    link_only(&bfd, &dir, "i386-bfd", "f32.o", &opts);
    link_only(&linker, &dir, "i386-rivet", "f32.o", &opts);
    assert_eq!(
        contents(&dir, "i386-rivet", ".text"),
        contents(&dir, "i386-bfd", ".text"),
        "i386: .text differs from GNU ld's"
    );
}
