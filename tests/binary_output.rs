//! `--oformat binary` and a script's `OUTPUT_FORMAT(binary)` (boot sectors, firmware images): the loaded sections'
//! bytes at their load addresses, byte for byte GNU ld's; `--oformat` naming the ELF target; `OUTPUT(file)` and
//! `-o`'s precedence over it.

mod common;

use std::path::Path;

/// A 16-bit boot sector's shapes: code, a string, data and zero-fill.
const BOOT: &str = ".code16\n.globl _start\n_start: movw $msg, %si\n jmp .\n\
    .section .rodata\nmsg: .ascii \"boot\"\n.data\ncount: .word 7\n.bss\nbuf: .zero 16\n";

/// A script with a load address apart from the run address (`AT`), a data command and a signature at a fixed
/// address.
const SCRIPT: &str = "OUTPUT_FORMAT(binary)\nSECTIONS {\n  . = 0x7c00;\n  .text : { *(.text) *(.rodata) }\n  \
    .data 0x600 : AT(ADDR(.text) + SIZEOF(.text)) { *(.data) LONG(0x11223344) }\n  \
    .sig 0x7dfe : AT(0x7dfe) { SHORT(0xaa55) }\n  .bss : { *(.bss) }\n}\n";

fn link(ld: &Path, dir: &Path, args: &[&str]) -> Vec<u8> {
    let o = common::tool(ld.to_str().unwrap(), args, Some(dir));
    assert!(o.success(), "{args:?}: {}", o.log());
    let out = args
        .iter()
        .position(|a| *a == "-o")
        .map_or("a.out", |k| args[k + 1]);
    std::fs::read(dir.join(out)).unwrap_or_default()
}

#[test]
fn raw_images_match_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("binary-output", &["as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let bfd = common::which("ld.bfd").unwrap();
    std::fs::write(dir.join("b.s"), BOOT).unwrap();
    std::fs::write(dir.join("bs.ld"), SCRIPT).unwrap();
    common::tool_ok("as", &["b.s", "-o", "b.o"], &dir);
    let cases: [&[&str]; 4] = [
        &["-N", "-Ttext", "0x7c00", "--oformat", "binary", "b.o"],
        &["-N", "-Ttext=0x7c00", "--oformat=binary", "-e", "0", "b.o"],
        &["-T", "bs.ld", "b.o"],
        &["-n", "-Ttext", "0x1000", "--oformat", "binary", "b.o"],
    ];
    for args in cases {
        let mut images = Vec::new();
        for (side, ld) in [("ref", &bfd), ("test", &linker)] {
            let out = format!("{side}.bin");
            let mut a = args.to_vec();
            a.extend(["-o", &out]);
            images.push(link(ld, &dir, &a));
        }
        assert!(!images[0].is_empty() && images[0].len() < 65536, "{args:?}");
        assert!(
            images[1] == images[0],
            "{args:?}: the image differs from GNU ld's"
        );
        // The script's image: the code, then `.data` at its load address, the signature last.
        if args.contains(&"bs.ld") {
            assert_eq!(images[1].len(), 512);
            assert_eq!(&images[1][510..], &[0x55, 0xaa][..]);
        }
    }
}

#[test]
fn output_format_and_output_commands() {
    let Some((dir, _, _)) = common::against_gnu_ld("binary-output-cmds", &["as", "readelf"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("b.s"), BOOT).unwrap();
    common::tool_ok("as", &["b.s", "-o", "b.o"], &dir);
    // `--oformat` naming the ELF target: the same file as without it.
    let plain = link(
        &linker,
        &dir,
        &["-N", "-Ttext=0x1000", "b.o", "-o", "plain"],
    );
    let named = link(
        &linker,
        &dir,
        &[
            "-N",
            "-Ttext=0x1000",
            "--oformat",
            "elf64-x86-64",
            "b.o",
            "-o",
            "named",
        ],
    );
    assert_eq!(plain, named);
    // `--oformat elf64-x86-64` over the script's `OUTPUT_FORMAT(binary)`: an ELF file.
    std::fs::write(dir.join("bs.ld"), SCRIPT).unwrap();
    let elf = link(
        &linker,
        &dir,
        &["-T", "bs.ld", "--oformat", "elf64-x86-64", "b.o", "-o", "e"],
    );
    assert_eq!(&elf[..4], b"\x7fELF");
    // Formats rivet does not write are refused.
    for f in ["srec", "elf32-i386"] {
        let o = common::tool(
            linker.to_str().unwrap(),
            &["--oformat", f, "b.o", "-o", "x"],
            Some(&dir),
        );
        assert!(
            !o.success() && o.stderr_str().contains(f),
            "{f}: {}",
            o.log()
        );
    }
    // `OUTPUT(file)` names the output, unless `-o` does.
    std::fs::write(
        dir.join("o.ld"),
        "OUTPUT(from-script)\nSECTIONS { .text 0x1000 : { *(.text) } }\n",
    )
    .unwrap();
    let _ = std::fs::remove_file(dir.join("from-script"));
    link(&linker, &dir, &["-T", "o.ld", "b.o"]);
    assert!(dir.join("from-script").exists());
    let _ = std::fs::remove_file(dir.join("from-script"));
    link(&linker, &dir, &["-T", "o.ld", "b.o", "-o", "given"]);
    assert!(dir.join("given").exists() && !dir.join("from-script").exists());
}
