//! i386 (`-m elf_i386`, issue 33): the kernel's 32-bit links (the real-mode setup code, linked by a script like
//! `arch/x86/boot/setup.ld`, and the trampoline, whose `--emit-relocs` output `relocs --realmode` reads). Objects
//! from `gcc -m32`/`-m16` and `as --32`, linked by rivet and by GNU ld: the same section contents (`objcopy -O
//! binary`), symbols, program headers and emitted relocations; the overflow of a 16-bit field refused as GNU ld
//! refuses it; what rivet does not link for i386 refused with a message that names it. Skipped when gcc cannot
//! compile for i386.

mod common;

use std::path::{Path, PathBuf};

/// 16-bit code and data in the sections of the kernel's setup code, referring to the C files' symbols with 16- and
/// 32-bit relocations.
const SETUP_ASM: &str = r#"
	.code16
	.section .header,"a"
	.globl hdr
hdr:	.word	main16
	.word	data2 - hdr
	.byte	0x12
	.long	far32
	.section .bstext,"ax"
	.globl _start
_start:	jmp	main16
	.text
	.globl main16
main16:	movw	$data2, %ax
	call	far32
	calll	code32
	movl	$_end, %eax
	movw	$__bss_start, %bx
	jmp	main16
	.p2align 4
	.section .data
	.globl data1
data1:	.long	data2
	.word	main16
	.byte	setup_sig - data1
	.section .note.GNU-stack,"",@progbits
"#;

/// Compiled with `-m16`: 32-bit C run in real mode, data addressed with 16-bit relocations.
const SETUP_C16: &str = r#"
extern int data1;
int data2 = 7;
static int counter;
int far32(void) { counter++; return data1 + data2 + counter; }
const char msg[] = "hello";
"#;

/// Compiled with `-m32`: a call into it from the 16-bit code, and 32-bit pointers.
const SETUP_C32: &str = r#"
extern int data2;
int *p32 = &data2;
const char *names[] = { "a", "b" };
int __attribute__((section(".text32"))) code32(int x) { return x + *p32 + names[1][0]; }
"#;

/// The kernel's setup.ld, shortened: `. = 0`, `.bstext` and `.header` at a fixed offset, data commands, `_end`,
/// and ASSERTs naming the inputs' symbols.
const SETUP_LD: &str = r#"
OUTPUT_FORMAT("elf32-i386")
OUTPUT_ARCH(i386)
ENTRY(_start)
SECTIONS
{
	. = 0;
	.bstext		: { *(.bstext) }
	.bsdata		: { *(.bsdata) }
	. = 495;
	.header		: { *(.header) }
	.entrytext	: { *(.entrytext) }
	.inittext	: { *(.inittext) }
	.initdata	: { *(.initdata) }
	__end_init = .;
	.text		: { *(.text .text.*) }
	.text32		: { *(.text32) }
	. = ALIGN(16);
	.rodata		: { *(.rodata*) }
	.videocards	: {
		video_cards = .;
		*(.videocards)
		video_cards_end = .;
	}
	. = ALIGN(16);
	.data		: { *(.data*) }
	.signature	: {
		setup_sig = .;
		LONG(0x5a5aaa55)
	}
	. = ALIGN(16);
	.bss		:
	{
		__bss_start = .;
		*(.bss)
		__bss_end = .;
	}
	. = ALIGN(16);
	_end = .;
	/DISCARD/	: {
		*(.note*)
	}
	. = ASSERT(_end <= 0x8000, "Setup too big!");
	. = ASSERT(hdr == 0x1ef, "The setup header has the wrong offset!");
}
"#;

/// Whether gcc compiles for i386 here (`-m32` without a C library: only `-c` of freestanding code is needed).
fn have_m32(dir: &Path) -> bool {
    std::fs::write(dir.join("probe.c"), "int probe;\n").unwrap();
    let ok = common::tool(
        "gcc",
        &["-m32", "-ffreestanding", "-c", "probe.c"],
        Some(dir),
    )
    .success();
    if !ok {
        eprintln!("skipped: gcc -m32 -c does not work here");
    }
    ok
}

/// A fresh work directory and rivet, or `None` (skipped) without gcc's i386 support, GNU ld or binutils.
fn setup(name: &str) -> Option<(PathBuf, PathBuf)> {
    let (dir, _, _) = common::against_gnu_ld(name, &["gcc", "as", "objcopy", "readelf"])?;
    have_m32(&dir).then(|| (common::linker_under_test().0, dir))
}

/// The setup-like objects: s.o (as --32), c16.o (gcc -m16), c32.o (gcc -m32), and the script.
fn setup_objects(dir: &Path) {
    std::fs::write(dir.join("s.S"), SETUP_ASM).unwrap();
    std::fs::write(dir.join("c16.c"), SETUP_C16).unwrap();
    std::fs::write(dir.join("c32.c"), SETUP_C32).unwrap();
    std::fs::write(dir.join("setup.ld"), SETUP_LD).unwrap();
    let cflags = [
        "-ffreestanding",
        "-fno-pic",
        "-O2",
        "-fno-asynchronous-unwind-tables",
        "-c",
    ];
    common::tool_ok("as", &["--32", "s.S", "-o", "s.o"], dir);
    let c16 = [&["-m16"][..], &cflags, &["c16.c"]].concat();
    common::tool_ok("gcc", &c16, dir);
    let c32 = [&["-m32"][..], &cflags, &["c32.c"]].concat();
    common::tool_ok("gcc", &c32, dir);
}

/// Links `args` with `linker` in `dir`; the outcome.
fn link(linker: &Path, dir: &Path, args: &[&str]) -> common::Outcome {
    common::tool(linker.to_str().unwrap(), args, Some(dir))
}

fn link_ok(linker: &Path, dir: &Path, args: &[&str]) {
    let out = link(linker, dir, args);
    assert!(
        out.success(),
        "{} {args:?} failed:\n{}",
        linker.display(),
        out.log()
    );
}

/// The symbols of `file` but the file symbols (which rivet does not keep yet, for either architecture): "value
/// size type bind name", sorted. Not the section index: a script's symbols in an output section left empty and
/// removed (`video_cards`) are given to the section before by rivet and to the one after by GNU ld, for x86-64 too.
fn symbols(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-sW", file], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 8 && f[0].ends_with(':') && f[3] != "FILE" && f[3] != "SECTION")
                .then(|| format!("{} {} {} {} {}", f[1], f[2], f[3], f[4], f[7]))
        })
        .collect();
    v.sort();
    v
}

/// `readelf -lW`'s program headers of `file`.
fn program_headers(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-lW", file], dir);
    out.lines()
        .map(common::squash_ws)
        .filter(|l| l.starts_with("LOAD") || l.starts_with("GNU_STACK"))
        .collect()
}

/// `readelf -rW`'s relocations of `file`, by section, without the symbol index (the order of `.symtab`'s globals
/// is rivet's own) and the tables' file offsets.
fn relocations(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-rW", file], dir);
    out.lines()
        .map(common::squash_ws)
        .filter(|l| !l.is_empty() && !l.starts_with("Offset"))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            if l.starts_with("Relocation section") {
                format!("{} {}", f[2], f[f.len() - 2])
            } else {
                let mut f = f;
                // Info: the symbol index and the type; the type is kept.
                let info = u32::from_str_radix(f[1], 16).unwrap_or(0);
                let ty = format!("type={}", info & 0xff);
                f[1] = &ty;
                f.join(" ")
            }
        })
        .collect()
}

#[test]
fn setup_script_link_matches_gnu_ld() {
    let Some((rivet, dir)) = setup("i386-setup") else {
        return;
    };
    setup_objects(&dir);
    let objs = ["s.o", "c16.o", "c32.o"];
    let args = |out: &'static str| {
        [
            &["-m", "elf_i386", "-T", "setup.ld"][..],
            &objs,
            &["-o", out],
        ]
        .concat()
    };
    link_ok(&rivet, &dir, &args("rivet.elf"));
    link_ok(Path::new("ld.bfd"), &dir, &args("bfd.elf"));
    for f in ["rivet", "bfd"] {
        common::tool_ok(
            "objcopy",
            &["-O", "binary", &format!("{f}.elf"), &format!("{f}.bin")],
            &dir,
        );
    }
    let (r, b) = (
        std::fs::read(dir.join("rivet.bin")).unwrap(),
        std::fs::read(dir.join("bfd.bin")).unwrap(),
    );
    assert!(
        r == b,
        "objcopy -O binary outputs differ ({} and {} bytes)",
        r.len(),
        b.len()
    );
    assert_eq!(symbols(&dir, "rivet.elf"), symbols(&dir, "bfd.elf"));
    assert_eq!(
        program_headers(&dir, "rivet.elf"),
        program_headers(&dir, "bfd.elf")
    );
    let header = common::tool_ok("readelf", &["-hW", "rivet.elf"], &dir);
    assert!(
        header.contains("ELF32") && header.contains("Intel 80386"),
        "{header}"
    );
    // An ASSERT on an input's symbol that fails is GNU ld's error too.
    let bad = SETUP_LD.replace("hdr == 0x1ef", "hdr == 0x1f0");
    std::fs::write(dir.join("bad.ld"), bad).unwrap();
    let out = link(
        &rivet,
        &dir,
        &[
            &["-m", "elf_i386", "-T", "bad.ld"][..],
            &objs,
            &["-o", "bad.elf"],
        ]
        .concat(),
    );
    assert!(
        !out.success()
            && out
                .stderr_str()
                .contains("The setup header has the wrong offset!"),
        "{}",
        out.log()
    );
}

#[test]
fn emitted_relocations_match_gnu_ld() {
    let Some((rivet, dir)) = setup("i386-emit-relocs") else {
        return;
    };
    setup_objects(&dir);
    let objs = ["s.o", "c16.o", "c32.o"];
    let args = |out: &'static str| {
        [
            &["-m", "elf_i386", "--emit-relocs", "-T", "setup.ld"][..],
            &objs,
            &["-o", out],
        ]
        .concat()
    };
    link_ok(&rivet, &dir, &args("rivet.elf"));
    link_ok(Path::new("ld.bfd"), &dir, &args("bfd.elf"));
    let r = relocations(&dir, "rivet.elf");
    assert!(
        r.iter().any(|l| l.contains("R_386_16")) && r.iter().any(|l| l.contains("R_386_PC16")),
        "{r:?}"
    );
    assert!(r.iter().any(|l| l.starts_with("'.rel.text'")), "{r:?}");
    assert_eq!(r, relocations(&dir, "bfd.elf"));
    // The contents hold the relocated values, as a REL output must.
    for f in ["rivet", "bfd"] {
        common::tool_ok(
            "objcopy",
            &["-O", "binary", &format!("{f}.elf"), &format!("{f}.bin")],
            &dir,
        );
    }
    assert!(
        std::fs::read(dir.join("rivet.bin")).unwrap()
            == std::fs::read(dir.join("bfd.bin")).unwrap()
    );
    assert_eq!(symbols(&dir, "rivet.elf"), symbols(&dir, "bfd.elf"));
}

/// Without a script and without `-m` (the first object decides): a static i386 program that exits with a value
/// its two objects compute, run where the kernel runs i386 programs; then with a `-T` script named before the
/// objects (as SeaBIOS's build does), which must not hide them.
#[test]
fn static_program_without_script_runs_as_gnu_lds() {
    let Some((rivet, dir)) = setup("i386-static") else {
        return;
    };
    std::fs::write(
        dir.join("main.c"),
        r#"
extern int helper(int);
int data2 = 7;
int *ptr = &data2;
static int counter;
static const short table[] = { 1, 2, 3 };
void _start(void) {
  counter += helper(data2) + *ptr + table[2];
  __asm__ volatile("int $0x80" :: "a"(1), "b"(counter) : "memory");
  for (;;);
}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("helper.c"),
        "int helper(int x) { return x * 3; }\n",
    )
    .unwrap();
    let cflags = [
        "-m32",
        "-ffreestanding",
        "-fno-pic",
        "-O2",
        "-c",
        "main.c",
        "helper.c",
    ];
    common::tool_ok("gcc", &cflags, &dir);
    link_ok(&rivet, &dir, &["main.o", "helper.o", "-o", "rivet.out"]);
    link_ok(
        Path::new("ld.bfd"),
        &dir,
        &["-m", "elf_i386", "main.o", "helper.o", "-o", "bfd.out"],
    );
    let header = common::tool_ok("readelf", &["-hW", "rivet.out"], &dir);
    assert!(
        header.contains("ELF32") && header.contains("EXEC"),
        "{header}"
    );
    let run = |f: &str| common::tool(dir.join(f).to_str().unwrap(), &[], Some(&dir));
    let (r, b) = (run("rivet.out"), run("bfd.out"));
    if !b.status_text().ends_with(" 31") {
        eprintln!(
            "skipped running: this kernel does not run GNU ld's i386 program ({})",
            b.status_text()
        );
        return;
    }
    assert_eq!(r.status_text(), b.status_text(), "{}", r.log());
    // A -T script before the objects (SeaBIOS's links): still the first object decides.
    std::fs::write(
        dir.join("i386.lds"),
        "OUTPUT_FORMAT(\"elf32-i386\")\nOUTPUT_ARCH(i386)\nENTRY(_start)\nSECTIONS { . = 0x8048000 + SIZEOF_HEADERS; \
         .text : { *(.text*) } .rodata : { *(.rodata*) } .data : { *(.data*) } .bss : { *(.bss*) } }\n",
    )
    .unwrap();
    let scripted = ["-T", "i386.lds", "main.o", "helper.o", "-o"];
    link_ok(&rivet, &dir, &[&scripted[..], &["rivet-t.out"]].concat());
    link_ok(
        Path::new("ld.bfd"),
        &dir,
        &[&scripted[..], &["bfd-t.out"]].concat(),
    );
    assert_eq!(
        run("rivet-t.out").status_text(),
        run("bfd-t.out").status_text()
    );
}

#[test]
fn overflowing_16_bit_field_is_refused_as_gnu_ld_does() {
    let Some((rivet, dir)) = setup("i386-overflow") else {
        return;
    };
    std::fs::write(
        dir.join("a.s"),
        ".code16\n.text\n.globl _start\n_start: movw $far, %ax\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.s"), ".data\n.globl far\nfar: .long 0\n").unwrap();
    common::tool_ok("as", &["--32", "a.s", "-o", "a.o"], &dir);
    common::tool_ok("as", &["--32", "b.s", "-o", "b.o"], &dir);
    std::fs::write(
        dir.join("low.ld"),
        "SECTIONS { . = 0; .text : { *(.text) } . = 0xfff0; .data : { *(.data) } }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("high.ld"),
        "SECTIONS { . = 0; .text : { *(.text) } . = 0x10000; .data : { *(.data) } }\n",
    )
    .unwrap();
    for (script, fits) in [("low.ld", true), ("high.ld", false)] {
        let args = ["-m", "elf_i386", "-T", script, "a.o", "b.o", "-o", "out"];
        let (r, b) = (
            link(&rivet, &dir, &args),
            link(Path::new("ld.bfd"), &dir, &args),
        );
        assert_eq!(b.success(), fits, "{}", b.log());
        assert_eq!(r.success(), fits, "{}", r.log());
        if !fits {
            let e = r.stderr_str();
            assert!(
                e.contains("R_386_16") && e.contains("a.o") && e.contains("far"),
                "{e}"
            );
            assert!(
                b.stderr_str()
                    .contains("relocation truncated to fit: R_386_16"),
                "{}",
                b.log()
            );
        }
    }
}

#[test]
fn what_rivet_does_not_link_for_i386_is_refused() {
    let Some((rivet, dir)) = setup("i386-refused") else {
        return;
    };
    std::fs::write(
        dir.join("a.c"),
        "int x; int get(void) { return x; }\nvoid _start(void) { get(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tls.c"),
        "__thread int t; int get_t(void) { return t; }\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &["-m32", "-ffreestanding", "-fno-pic", "-c", "a.c", "tls.c"],
        &dir,
    );
    common::tool_ok(
        "gcc",
        &[
            "-m32",
            "-ffreestanding",
            "-fpic",
            "-c",
            "a.c",
            "-o",
            "pic.o",
        ],
        &dir,
    );
    let cases: [(&[&str], &[&str]); 6] = [
        (&["-m", "elf_i386", "-pie", "a.o"], &["-pie", "i386"]),
        (&["-m", "elf_i386", "-shared", "a.o"], &["-shared", "i386"]),
        (
            &["-m", "elf_i386", "pic.o"],
            &["R_386_", "pic.o", "not supported"],
        ),
        (
            &["-m", "elf_i386", "a.o", "tls.o"],
            &["R_386_TLS", "tls.o", "not supported"],
        ),
        // Addresses are 32 bits.
        (
            &["-m", "elf_i386", "-Ttext=0x100000000", "a.o"],
            &[".text", "4 GiB"],
        ),
        // An x86-64 object in an i386 link.
        (&["-m", "elf_i386", "a.o", "probe64.o"], &["probe64.o"]),
    ];
    std::fs::write(dir.join("probe64.c"), "int probe64;\n").unwrap();
    common::tool_ok("gcc", &["-c", "probe64.c"], &dir);
    for (args, words) in cases {
        let out = link(&rivet, &dir, &[args, &["-o", "out"]].concat());
        let e = out.stderr_str();
        assert!(
            !out.success() && !e.contains("panicked"),
            "{args:?}: {}",
            out.log()
        );
        assert!(words.iter().all(|w| e.contains(w)), "{args:?}: {e}");
    }
}

/// `readelf -SW`'s sections of a relocatable `file` but the string tables: name, type, size, entry size, flags,
/// alignment; sorted (GNU ld places a partial link's orphans by its own rules).
fn rel_sections(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix('['))
        .filter_map(|l| l.split_once(']'))
        .map(|(_, l)| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 7 && f[0] != ".strtab" && f[0] != ".shstrtab" && f[0] != "NULL")
        .map(|f| {
            let flags = if f.len() == 10 { f[6] } else { "" };
            format!(
                "{} {} {} {} {} {}",
                f[0],
                f[1],
                f[4],
                f[5],
                flags,
                f[f.len() - 1]
            )
        })
        .collect();
    v.sort();
    v
}

/// Each section's contents (`objdump -s`), by name: in an ELF32 partial link the addends are there.
fn contents(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("objdump", &["-s", file], dir);
    let mut v: Vec<String> = out
        .split("Contents of section ")
        .skip(1)
        .map(|s| s.to_string())
        .collect();
    v.sort();
    v
}

/// `-m elf_i386 -r` (SeaBIOS links its 16- and 32-bit code so, then lays it out with generated scripts): the
/// setup objects and a C file with unwind tables and a COMDAT group, partially linked by rivet and by GNU ld.
/// The same ELF32 sections, symbols and REL relocations, the same contents (a moved section symbol's addend is
/// written into its field), and the same program when GNU ld links either with the setup script.
#[test]
fn partial_link_matches_gnu_ld() {
    let Some((rivet, dir)) = setup("i386-partial") else {
        return;
    };
    setup_objects(&dir);
    std::fs::write(
        dir.join("more.c"),
        "static int local_counter;
int more(int x) { return x + ++local_counter; }
         __attribute__((section(\".text.inl\"))) int inl(int x) { return x * 2; }
",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &["-m32", "-ffreestanding", "-fno-pic", "-O2", "-c", "more.c"],
        &dir,
    );
    let objs = ["s.o", "c16.o", "c32.o", "more.o"];
    for (ld, out) in [(&rivet, "rivet.o"), (&PathBuf::from("ld.bfd"), "bfd.o")] {
        link_ok(
            ld,
            &dir,
            &[&["-m", "elf_i386", "-r"][..], &objs, &["-o", out]].concat(),
        );
    }
    let header = common::tool_ok("readelf", &["-hW", "rivet.o"], &dir);
    assert!(
        header.contains("ELF32") && header.contains("REL (Relocatable file)"),
        "{header}"
    );
    assert_eq!(rel_sections(&dir, "rivet.o"), rel_sections(&dir, "bfd.o"));
    assert_eq!(symbols(&dir, "rivet.o"), symbols(&dir, "bfd.o"));
    let mut relocs = [relocations(&dir, "rivet.o"), relocations(&dir, "bfd.o")];
    relocs.iter_mut().for_each(|r| r.sort());
    assert!(
        relocs[0].iter().any(|l| l.contains("R_386_16")),
        "{:?}",
        relocs[0]
    );
    assert_eq!(relocs[0], relocs[1]);
    assert_eq!(contents(&dir, "rivet.o"), contents(&dir, "bfd.o"));
    // Each partial link, linked by GNU ld with the setup script: the same image.
    for side in ["rivet", "bfd"] {
        let (obj, elf, bin) = (
            format!("{side}.o"),
            format!("{side}.elf"),
            format!("{side}.bin"),
        );
        link_ok(
            Path::new("ld.bfd"),
            &dir,
            &["-m", "elf_i386", "-T", "setup.ld", &obj, "-o", &elf],
        );
        common::tool_ok("objcopy", &["-O", "binary", &elf, &bin], &dir);
    }
    assert!(
        std::fs::read(dir.join("rivet.bin")).unwrap()
            == std::fs::read(dir.join("bfd.bin")).unwrap(),
        "the final links of the partial links differ"
    );
}

/// Code a script places at an address in a section it leaves unallocated (SeaBIOS's `.fixedaddr.*`, written by
/// assembly without flags and copied into the ROM by a later link), with 16-bit absolute and PC-relative
/// references; a 16-bit call across the 64 KiB segment, which wraps; and `PHDRS`' `AT` naming a symbol
/// `SECTIONS` assigns. The sections, their contents, symbols and program headers are GNU ld's.
#[test]
fn unallocated_code_at_an_address_matches_gnu_ld() {
    let Some((rivet, dir)) = setup("i386-fixed") else {
        return;
    };
    std::fs::write(
        dir.join("f.S"),
        "\t.code16\n\t.section .text.low,\"ax\"\n\t.globl low\nlow:\tret\n         \t.section .text.high,\"ax\"\nhigh:\tcall low\n\tjmp low\n         \t.section .fixedaddr.0xfff0\n\t.globl reset\nreset:\tcall low\n\tljmpw $0xf000, $high\n         \t.word low\n\t.long reset\n",
    )
    .unwrap();
    common::tool_ok("as", &["--32", "f.S", "-o", "f.o"], &dir);
    std::fs::write(
        dir.join("f.ld"),
        "OUTPUT_FORMAT(\"elf32-i386\")\nOUTPUT_ARCH(\"i386\")\nSECTIONS {\n         \tcode_start = 0x6000 ;\n         \t.text.low 0x6000 : { *(.text.low) } :text\n         \t.text.high 0xf000 : { *(.text.high) } :text\n         \t.fixedaddr.0xfff0 0xfff0 : { *(.fixedaddr.0xfff0) }\n         \t/DISCARD/ : { *(.note*) }\n}\n         PHDRS { text PT_LOAD AT ( code_start ) ; }\n",
    )
    .unwrap();
    for (ld, out) in [(&rivet, "rivet.elf"), (&PathBuf::from("ld.bfd"), "bfd.elf")] {
        link_ok(ld, &dir, &["-T", "f.ld", "f.o", "-o", out]);
    }
    let sections = |f: &str| {
        let out = common::tool_ok("readelf", &["-SW", f], &dir);
        (out.lines())
            .filter(|l| l.contains(" .text.") || l.contains(" .fixedaddr."))
            .map(common::squash_ws)
            .collect::<Vec<_>>()
    };
    assert_eq!(sections("rivet.elf"), sections("bfd.elf"));
    let fixed = sections("rivet.elf").join("\n");
    assert!(
        fixed.contains(".fixedaddr.0xfff0 PROGBITS 0000fff0"),
        "{fixed}"
    );
    assert_eq!(contents(&dir, "rivet.elf"), contents(&dir, "bfd.elf"));
    assert_eq!(symbols(&dir, "rivet.elf"), symbols(&dir, "bfd.elf"));
    let phdrs = |f: &str| {
        let out = common::tool_ok("readelf", &["-lW", f], &dir);
        (out.lines())
            .filter(|l| l.trim_start().starts_with("LOAD"))
            .map(common::squash_ws)
            .collect::<Vec<_>>()
    };
    assert_eq!(phdrs("rivet.elf"), phdrs("bfd.elf"));
}

/// The Linux source the kernel tests take `setup.ld`, `realmode.lds.S` and the `relocs` tool from.
const KERNEL_TARBALL: &str = "/var/tmp/kernel/linux_6.1.176.orig.tar.xz";
const KERNEL_DIR: &str = "linux-6.1.176";

/// Extracts `files` of the kernel source into `dir`; false (skipped) without the tarball.
fn kernel_files(dir: &Path, files: &[&str]) -> bool {
    if !Path::new(KERNEL_TARBALL).exists() {
        eprintln!("skipped: {KERNEL_TARBALL} is not here");
        return false;
    }
    let paths: Vec<String> = files.iter().map(|f| format!("{KERNEL_DIR}/{f}")).collect();
    let args = [
        &["xf", KERNEL_TARBALL][..],
        &paths.iter().map(String::as_str).collect::<Vec<_>>(),
    ]
    .concat();
    common::tool_ok("tar", &args, dir);
    true
}

/// The kernel's own `arch/x86/boot/setup.ld` (`. = 495` inside `.bstext` with a fill, `PROVIDE` of a symbol
/// nothing defines, `setup_size`/`setup_sects`, the ASSERTs on `hdr` and `__end_init`), over objects shaped like
/// the setup code's: the same binary and symbols as GNU ld's.
#[test]
fn kernel_setup_ld_matches_gnu_ld() {
    let Some((rivet, dir)) = setup("i386-kernel-setup") else {
        return;
    };
    if !kernel_files(&dir, &["arch/x86/boot/setup.ld"]) {
        return;
    }
    setup_objects(&dir);
    // hdr at 0x1f1, after the sentinel, as in the kernel's header.S.
    let asm = SETUP_ASM.replace(
        "\t.globl hdr\n",
        "sentinel:\t.byte 0xff, 0xff\n\t.globl hdr\n",
    );
    std::fs::write(dir.join("k.S"), asm).unwrap();
    common::tool_ok("as", &["--32", "k.S", "-o", "k.o"], &dir);
    let script = format!("{KERNEL_DIR}/arch/x86/boot/setup.ld");
    let args = |out: &'static str| {
        [
            &["-m", "elf_i386", "-T", &script][..],
            &["k.o", "c16.o", "c32.o", "-o", out],
        ]
        .concat()
    };
    link_ok(&rivet, &dir, &args("rivet.elf"));
    link_ok(Path::new("ld.bfd"), &dir, &args("bfd.elf"));
    for f in ["rivet", "bfd"] {
        common::tool_ok(
            "objcopy",
            &["-O", "binary", &format!("{f}.elf"), &format!("{f}.bin")],
            &dir,
        );
    }
    assert!(
        std::fs::read(dir.join("rivet.bin")).unwrap()
            == std::fs::read(dir.join("bfd.bin")).unwrap()
    );
    assert_eq!(symbols(&dir, "rivet.elf"), symbols(&dir, "bfd.elf"));
    assert_eq!(
        program_headers(&dir, "rivet.elf"),
        program_headers(&dir, "bfd.elf")
    );
}

/// The real-mode trampoline's link: the kernel's `realmode.lds.S` (preprocessed as kbuild does, `pasyms.h` written
/// by hand), `-m elf_i386 --emit-relocs`, and the kernel's own `relocs --realmode` reading both outputs: the same
/// relocation list, binary and symbols as with GNU ld.
#[test]
fn kernel_realmode_link_matches_gnu_ld_for_relocs_tool() {
    let Some((rivet, dir)) = setup("i386-kernel-realmode") else {
        return;
    };
    let files = [
        "arch/x86/realmode/rm/realmode.lds.S",
        "arch/x86/tools",
        "tools/include",
    ];
    if !kernel_files(&dir, &files) {
        return;
    }
    let k = |f: &str| format!("{KERNEL_DIR}/{f}");
    let tools = ["relocs_32.c", "relocs_64.c", "relocs_common.c"]
        .map(|f| k(&format!("arch/x86/tools/{f}")));
    let inc = k("tools/include");
    let mut gcc = vec!["-O2", "-I", &inc, "-o", "relocs"];
    gcc.extend(tools.iter().map(String::as_str));
    common::tool_ok("gcc", &gcc, &dir);
    let lds = std::fs::read_to_string(dir.join(k("arch/x86/realmode/rm/realmode.lds.S"))).unwrap();
    std::fs::write(
        dir.join("rm.lds.S"),
        lds.replace("#include <asm/page_types.h>", ""),
    )
    .unwrap();
    std::fs::write(
        dir.join("pasyms.h"),
        "pa_trampoline_start = trampoline_start;\npa_startup_32 = startup_32;\n\
         pa_startup_64 = startup_64;\npa_trampoline_pgd = trampoline_pgd;\n",
    )
    .unwrap();
    let cpp = [
        "-E",
        "-P",
        "-x",
        "c",
        "-DPAGE_SIZE=4096",
        "-I.",
        "rm.lds.S",
        "-o",
        "realmode.lds",
    ];
    common::tool_ok("gcc", &cpp, &dir);
    std::fs::write(dir.join("header.S"), REALMODE_HEADER).unwrap();
    std::fs::write(dir.join("tramp.S"), REALMODE_TRAMPOLINE).unwrap();
    std::fs::write(
        dir.join("c16.c"),
        "int counter; const char name[] = \"rm\";\nint helper(void) { return ++counter + name[0]; }\n",
    )
    .unwrap();
    common::tool_ok("as", &["--32", "header.S", "-o", "header.o"], &dir);
    common::tool_ok("as", &["--32", "tramp.S", "-o", "tramp.o"], &dir);
    let c16 = [
        "-m16",
        "-ffreestanding",
        "-fno-pic",
        "-O2",
        "-fno-asynchronous-unwind-tables",
        "-c",
        "c16.c",
    ];
    common::tool_ok("gcc", &c16, &dir);
    let objs = ["header.o", "tramp.o", "c16.o"];
    let args = |out: &'static str| {
        [
            &["-m", "elf_i386", "--emit-relocs", "-T", "realmode.lds"][..],
            &objs,
            &["-o", out],
        ]
        .concat()
    };
    link_ok(&rivet, &dir, &args("rivet.elf"));
    link_ok(Path::new("ld.bfd"), &dir, &args("bfd.elf"));
    let relocs = |f: &str| common::tool_ok("./relocs", &["--realmode", "--text", f], &dir);
    let r = relocs("rivet.elf");
    assert!(r.lines().filter(|l| l.contains(".long")).count() > 6, "{r}");
    assert_eq!(r, relocs("bfd.elf"));
    assert_eq!(relocations(&dir, "rivet.elf"), relocations(&dir, "bfd.elf"));
    for f in ["rivet", "bfd"] {
        common::tool_ok(
            "objcopy",
            &["-O", "binary", &format!("{f}.elf"), &format!("{f}.bin")],
            &dir,
        );
    }
    assert!(
        std::fs::read(dir.join("rivet.bin")).unwrap()
            == std::fs::read(dir.join("bfd.bin")).unwrap()
    );
    assert_eq!(symbols(&dir, "rivet.elf"), symbols(&dir, "bfd.elf"));
}

/// The trampoline's header: 32-bit pointers to `pa_` symbols and the segment `real_mode_seg`.
const REALMODE_HEADER: &str = r#"
	.section ".header", "a"
	.balign	16
	.globl	real_mode_header
real_mode_header:
	.long	pa_text_start
	.long	pa_ro_end
	.long	pa_trampoline_start
	.long	pa_startup_32
	.word	real_mode_seg
	.section .note.GNU-stack,"",@progbits
"#;

/// 16-, 32- and 64-bit code in `.text`, `.text32` and `.text64` of one i386 object, as the kernel's trampoline is.
const REALMODE_TRAMPOLINE: &str = r#"
	.text
	.code16
	.balign	4096
	.globl	trampoline_start
trampoline_start:
	cli
	.byte	0xea
	.word	1f
	.word	real_mode_seg
1:	mov	%cs, %ax
	mov	%ax, %ds
	movl	$rm_stack_end, %esp
	movl	$pa_startup_32, %eax
	movw	$trampoline_pgd, %bx
	call	helper
	jmp	1b
	.p2align 4
	.section ".text32","ax"
	.code32
	.balign	4
	.globl	startup_32
startup_32:
	movl	$pa_trampoline_pgd, %eax
	ljmpl	$0x10, $pa_startup_64
	.section ".text64","ax"
	.code64
	.balign	4
	.globl	startup_64
startup_64:
	jmp	startup_64
	.data
	.balign	4
	.globl	trampoline_pgd
trampoline_pgd:	.long	0
	.long	trampoline_start
	.bss
	.balign	16
rm_stack:	.space	64
rm_stack_end:
	.section ".signature","a"
	.long	0x5a5aaa55
	.section .note.GNU-stack,"",@progbits
"#;
