//! What a Linux kernel build (issue 33, `tests/realworld/kernel.sh`) asks of the linker, each as a small
//! reproducer linked by rivet and by GNU ld and compared.

mod common;

use common::tool_ok as run;

/// kbuild's `vmlinux.a` is a thin archive made from other thin archives (`ar cDPrST vmlinux.a */built-in.a`).
/// GNU ar keeps a 15-character member path's own `/` terminator after the long-name index it writes, so the
/// member's name field reads `/0             /`; GNU ld reads the index's digits and ignores the rest.
#[test]
fn nested_thin_archive_long_name_with_terminator() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("kernel-thin-nested", &["gcc", "ar"])
    else {
        return;
    };
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    // "sub/abcdefghi.o" is 15 characters: stored with its terminator in the inner archive's name field.
    std::fs::write(dir.join("sub/abcdefghi.c"), "int f(void) { return 42; }\n").unwrap();
    std::fs::write(
        dir.join("main.c"),
        "int f(void);\nint main(void) { return f() - 42; }\n",
    )
    .unwrap();
    run(
        "gcc",
        &["-c", "sub/abcdefghi.c", "-o", "sub/abcdefghi.o"],
        &dir,
    );
    run("gcc", &["-c", "main.c"], &dir);
    run("ar", &["cDPrST", "sub/built-in.a", "sub/abcdefghi.o"], &dir);
    run("ar", &["cDPrST", "outer.a", "sub/built-in.a"], &dir);
    let raw = std::fs::read(dir.join("outer.a")).unwrap();
    assert!(
        raw.windows(16)
            .any(|w| w.starts_with(b"/0 ") && w.ends_with(b"/")),
        "ar no longer writes the terminator this test is about"
    );
    for (out, shim) in [("prog.gnu", &bfd), ("prog.rivet", &shim)] {
        let b = format!("-B{}/", shim.display());
        let args = [
            b.as_str(),
            "-o",
            out,
            "main.o",
            "-Wl,--whole-archive",
            "outer.a",
            "-Wl,--no-whole-archive",
        ];
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{out}: link failed:\n{}", o.log());
        let ran = common::tool(&format!("./{out}"), &[], Some(&dir));
        assert_eq!(ran.code, Some(0), "{out} did not run:\n{}", ran.log());
    }
}

/// Links `args` (in `dir`) with rivet and with GNU ld, the output named `out` plus `.rivet` / `.gnu`.
fn link_both(dir: &std::path::Path, out: &str, args: &[&str]) -> (String, String) {
    let (rivet, _) = common::linker_under_test();
    let mut names = Vec::new();
    for (linker, side) in [(rivet.to_str().unwrap(), "rivet"), ("ld.bfd", "gnu")] {
        let name = format!("{out}.{side}");
        let mut a = vec!["-o", name.as_str()];
        a.extend_from_slice(args);
        let o = common::tool(linker, &a, Some(dir));
        assert!(o.success(), "{side}: link failed:\n{}", o.log());
        names.push(name);
    }
    let gnu = names.pop().unwrap();
    (names.pop().unwrap(), gnu)
}

/// The kernel's `PHDRS` (text, data, init, note) and `AT()` load addresses, where `.data` ends exactly where
/// the init `PT_LOAD`'s first section begins (so the two loads adjoin; rivet gave the init `PT_LOAD` the data
/// one's place) and the `PT_NOTE`'s physical address is its section's load address (rivet wrote the virtual
/// one). The program headers must be GNU ld's exactly.
#[test]
fn kernel_phdrs_with_adjoining_loads() {
    let Some((dir, _, _)) = common::against_gnu_ld("kernel-phdrs", &["as", "readelf"]) else {
        return;
    };
    let script = r#"ENTRY(_start)
PHDRS {
 text PT_LOAD FLAGS(5);
 data PT_LOAD FLAGS(6);
 init PT_LOAD FLAGS(7);
 note PT_NOTE FLAGS(0);
}
SECTIONS
{
 . = 0xffffffff81000000;
 .text : AT(ADDR(.text) - 0xffffffff80000000) { _text = .; *(.text) } :text =0xcccc
 . = ALIGN(0x200000);
 .rodata : AT(ADDR(.rodata) - 0xffffffff80000000) { *(.rodata) }
 .notes : AT(ADDR(.notes) - 0xffffffff80000000) { __start_notes = .; KEEP(*(.note.*)) __stop_notes = .; } :text :note
 __restore_ph : { *(.__restore_ph) } :text
 . = ALIGN(0x200000);
 .data : AT(ADDR(.data) - 0xffffffff80000000) { *(.data) } :data
 . = ALIGN(4096);
 .init.text : AT(ADDR(.init.text) - 0xffffffff80000000) { *(.init.text) }
 :init
 .init.data : AT(ADDR(.init.data) - 0xffffffff80000000) { *(.init.data) }
 . = ALIGN(4096);
 .bss : AT(ADDR(.bss) - 0xffffffff80000000) { *(.bss) }
 _end = .;
 /DISCARD/ : { *(.note.GNU-stack) *(.note.gnu.property) }
}
"#;
    let asm = r#".text
.globl _start
_start: movq $data_word, %rax
 ret
.section .rodata,"a"
.quad 1
.section .data,"aw"
data_word: .quad 7
 .balign 4096
.section .init.text,"ax"
 nop
.section .init.data,"aw"
.quad _end
.section .bss,"aw",@nobits
.zero 64
.section .note.kern,"a",@note
.long 4,4,1
.asciz "Lin"
.long 0
"#;
    std::fs::write(dir.join("k.lds"), script).unwrap();
    std::fs::write(dir.join("k.s"), asm).unwrap();
    run("as", &["k.s", "-o", "k.o"], &dir);
    let args = [
        "-m",
        "elf_x86_64",
        "-z",
        "max-page-size=0x200000",
        "-z",
        "noexecstack",
        "-T",
        "k.lds",
        "k.o",
    ];
    let (r, g) = link_both(&dir, "vmlinux", &args);
    let phdrs = |f: &str| {
        let out = run("readelf", &["-lW", f], &dir);
        out.lines()
            .skip_while(|l| !l.starts_with("Program Headers:"))
            .take_while(|l| !l.is_empty())
            .map(common::squash_ws)
            .collect::<Vec<_>>()
    };
    let (pr, pg) = (phdrs(&r), phdrs(&g));
    assert!(
        pg.iter().filter(|l| l.contains("LOAD")).count() == 3,
        "{pg:#?}"
    );
    assert_eq!(pr, pg, "program headers differ from GNU ld's");
}

const SELF_CONTAINED_PIE: &str = r#".text
.globl _start
_start:
 mov $1, %eax
 mov $1, %edi
 lea msg(%rip), %rsi
 mov $3, %edx
 syscall
 mov $60, %eax
 xor %edi, %edi
 syscall
.section .rodata,"a"
msg: .ascii "ok\n"
"#;

/// The decompressor's script (`arch/x86/boot/compressed/vmlinux.lds`): a `-pie` whose `/DISCARD/` takes the
/// dynamic sections, with `.got.plt (INFO)` and `ASSERT`s that the GOT, PLT and dynamic relocations are empty.
/// GNU ld writes no dynamic section and no `.got.plt` (the build checks the image's size); so must rivet, and
/// the program (which needs no relocation) runs from both. (The assembler's empty `.data` and `.bss` are
/// discarded: rivet keeps an empty output section that has inputs, GNU ld drops it; not this test's subject.) A
/// discarded `.dynamic` where dynamic relocations are needed is refused; an `INFO` section with contents is
/// unallocated, at the address GNU ld gives it.
#[test]
fn decompressor_pie_discards_dynamic_sections() {
    let Some((dir, _, _)) = common::against_gnu_ld("kernel-pie-discard", &["as", "readelf"]) else {
        return;
    };
    let script = r#"ENTRY(_start)
SECTIONS
{
 . = 0;
 .text : { _text = .; *(.text) _etext = .; }
 .rodata : { *(.rodata) }
 _end = .;
 /DISCARD/ : { *(.data) *(.bss) }
 /DISCARD/ : { *(.dynamic) *(.dynsym) *(.dynstr) *(.dynbss) *(.hash) *(.gnu.hash) *(.note.*) }
 .got.plt (INFO) : { *(.got.plt) }
 ASSERT(SIZEOF(.got.plt) == 0 || SIZEOF(.got.plt) == 0x18, "Unexpected GOT/PLT entries detected!")
 .got : { *(.got) }
 ASSERT(SIZEOF(.got) == 0, "Unexpected GOT entries detected!")
 .rela.dyn : { *(.rela.*) }
 ASSERT(SIZEOF(.rela.dyn) == 0, "Unexpected run-time relocations (.rela) detected!")
}
"#;
    std::fs::write(dir.join("z.lds"), script).unwrap();
    std::fs::write(dir.join("z.s"), SELF_CONTAINED_PIE).unwrap();
    run("as", &["z.s", "-o", "z.o"], &dir);
    let args = [
        "-pie",
        "--no-dynamic-linker",
        "-z",
        "noexecstack",
        "-T",
        "z.lds",
        "z.o",
    ];
    let (r, g) = link_both(&dir, "zimage", &args);
    let shape = |f: &str| {
        let s = run("readelf", &["-SlW", f], &dir);
        let names: Vec<String> = s
            .lines()
            .filter_map(|l| {
                l.split_once("] ")
                    .map(|(_, r)| r.split_whitespace().next().unwrap_or("").to_string())
            })
            .filter(|n| !n.is_empty() && !n.starts_with(".comment"))
            .collect();
        let types: Vec<String> = s
            .lines()
            .skip_while(|l| !l.starts_with("Program Headers:"))
            .skip(2)
            .take_while(|l| !l.is_empty())
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect();
        (names, types)
    };
    let (sr, sg) = (shape(&r), shape(&g));
    assert!(
        !sg.0.iter().any(|n| n == ".dynamic" || n == ".got.plt"),
        "{sg:?}"
    );
    assert_eq!(sr, sg, "sections and program headers differ from GNU ld's");
    for f in [&r, &g] {
        let ran = common::tool(&format!("./{f}"), &[], Some(&dir));
        assert_eq!(
            (ran.code, ran.stdout_str().as_str()),
            (Some(0), "ok\n"),
            "{f}:\n{}",
            ran.log()
        );
    }

    // A pointer needs a dynamic relocation: rivet cannot drop .dynamic then.
    std::fs::write(dir.join("p.s"), ".section .data.rel,\"aw\"\n.quad _start\n").unwrap();
    run("as", &["p.s", "-o", "p.o"], &dir);
    let (rivet, _) = common::linker_under_test();
    let o = common::tool(
        rivet.to_str().unwrap(),
        &[
            "-pie",
            "--no-dynamic-linker",
            "-T",
            "z.lds",
            "z.o",
            "p.o",
            "-o",
            "bad",
        ],
        Some(&dir),
    );
    assert!(!o.success(), "linked:\n{}", o.log());
    assert!(
        o.stderr_str().contains("/DISCARD/ of .dynamic"),
        "{}",
        o.log()
    );

    // INFO with contents: GNU ld gives the section an address and no SHF_ALLOC, as rivet must.
    std::fs::write(
        dir.join("i.lds"),
        "SECTIONS { .text : { *(.text) } .info (INFO) : { *(.rodata) } after = .; }\n",
    )
    .unwrap();
    let (r, g) = link_both(&dir, "info", &["-T", "i.lds", "z.o"]);
    let info = |f: &str| {
        let h = common::tool_ok("objdump", &["-h", "-w", f], &dir);
        let s = common::tool_ok("readelf", &["-sW", f], &dir);
        let sec = h.lines().find(|l| l.contains(" .info ")).map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f[1..4].join(" ") + " " + f[7..].join(" ").as_str()
        });
        let after = s
            .lines()
            .find(|l| l.ends_with(" after"))
            .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string());
        (sec, after)
    };
    assert_eq!(info(&r), info(&g));
    assert!(
        info(&g).0.is_some_and(|s| !s.contains("ALLOC")),
        "{:?}",
        info(&g)
    );

    // Code that names `_GLOBAL_OFFSET_TABLE_` makes `.got.plt`'s 0x18 bytes, which `(INFO)` leaves unallocated
    // at the address after `.text`, as the decompressor's `ASSERT` expects.
    std::fs::write(
        dir.join("got.s"),
        ".text\n.globl _start\n_start:\n lea _GLOBAL_OFFSET_TABLE_(%rip), %rax\n mov $60, %eax\n \
         xor %edi, %edi\n syscall\n",
    )
    .unwrap();
    run("as", &["got.s", "-o", "got.o"], &dir);
    let args = ["-pie", "--no-dynamic-linker", "-T", "z.lds", "got.o"];
    let (r, g) = link_both(&dir, "gotplt", &args);
    let got_plt = |f: &str| {
        let h = common::tool_ok("objdump", &["-h", "-w", f], &dir);
        (h.lines().find(|l| l.contains(" .got.plt "))).map(|l| {
            // Name, size, address, load address, alignment, flags: not the file offset.
            let f: Vec<&str> = l.split_whitespace().collect();
            [&f[1..5], &f[6..]].concat().join(" ")
        })
    };
    assert_eq!(got_plt(&r), got_plt(&g));
    assert!(got_plt(&g).is_some_and(|l| l.contains("00000018") && !l.contains("ALLOC")));
}

/// A shared object without GOT or PLT slots that does not name `_GLOBAL_OFFSET_TABLE_` (a vDSO) has no
/// `.got.plt` and no `DT_PLTGOT` in GNU ld's output; one that calls through the PLT has both.
#[test]
fn got_plt_only_where_needed() {
    let Some((dir, _, _)) = common::against_gnu_ld("kernel-got-plt", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(dir.join("leaf.c"), "int leaf(int x) { return x * 3; }\n").unwrap();
    std::fs::write(
        dir.join("call.c"),
        "int ext(int);\nint call(int x) { return ext(x) + 1; }\n",
    )
    .unwrap();
    for c in ["leaf", "call"] {
        run("gcc", &["-c", "-O2", "-fPIC", &format!("{c}.c")], &dir);
        let (r, g) = link_both(&dir, &format!("lib{c}.so"), &["-shared", &format!("{c}.o")]);
        let facts = |f: &str| {
            let s = run("readelf", &["-SdW", f], &dir);
            (s.contains(" .got.plt "), s.contains("(PLTGOT)"))
        };
        let want = facts(&g);
        assert_eq!(
            want,
            if c == "leaf" {
                (false, false)
            } else {
                (true, true)
            },
            "GNU ld changed"
        );
        assert_eq!(
            facts(&r),
            want,
            "lib{c}.so: .got.plt / DT_PLTGOT differ from GNU ld's"
        );
    }
}

/// The vDSO's script assigns `vvar_*` addresses before its sections, and its `VERSION` node ends in `local: *`:
/// GNU ld matches script-assigned symbols against the version script like the objects' own, so they stay out
/// of `.dynsym` (rivet exported them).
#[test]
fn version_script_hides_script_assigned_symbols() {
    let Some((dir, _, _)) = common::against_gnu_ld("kernel-vdso-local", &["gcc", "readelf"]) else {
        return;
    };
    let script = r#"SECTIONS {
  vvar_start = . - 4096;
  vvar_page = vvar_start;
  . = SIZEOF_HEADERS;
  .hash : { *(.hash) }
  .gnu.hash : { *(.gnu.hash) }
  .dynsym : { *(.dynsym) }
  .dynstr : { *(.dynstr) }
  .gnu.version : { *(.gnu.version) }
  .gnu.version_d : { *(.gnu.version_d) }
  .dynamic : { *(.dynamic) }
  .text : { *(.text*) }
}
VERSION { LINUX_2.6 { global: clock_gettime; __vdso_clock_gettime; local: *; }; }
"#;
    std::fs::write(dir.join("vdso.lds"), script).unwrap();
    std::fs::write(
        dir.join("v.c"),
        "extern char vvar_page[];\n\
         long __vdso_clock_gettime(void) { return (long)vvar_page; }\n\
         long clock_gettime(void) __attribute__((weak, alias(\"__vdso_clock_gettime\")));\n\
         long helper(void) { return 2; }\n",
    )
    .unwrap();
    run("gcc", &["-c", "-O2", "-fPIC", "v.c"], &dir);
    let args = [
        "-shared",
        "--hash-style=both",
        "-soname",
        "linux-vdso.so.1",
        "-T",
        "vdso.lds",
        "v.o",
    ];
    let (r, g) = link_both(&dir, "vdso.so", &args);
    let want = common::dynamic_exports(&dir, &g);
    assert_eq!(
        want,
        [
            "LINUX_2.6",
            "__vdso_clock_gettime@@LINUX_2.6",
            "clock_gettime@@LINUX_2.6"
        ]
    );
    assert_eq!(
        common::dynamic_exports(&dir, &r),
        want,
        "rivet's .dynsym differs from GNU ld's"
    );
}

/// The kernel script's tail, after `SECTIONS`: `. = ASSERT(...)` (an assertion, not a symbol named `.`, which
/// rivet defined) and assignments naming symbols that `SECTIONS` assigns (`init_per_cpu__gdt_page =
/// ABSOLUTE(gdt_page) + __per_cpu_load`, which rivet evaluated with `__per_cpu_load` still 0). Values as GNU
/// ld's; a failing assertion fails both links with its message.
#[test]
fn assignments_and_assert_after_sections() {
    let Some((dir, _, _)) = common::against_gnu_ld("kernel-after-sections", &["as", "nm"]) else {
        return;
    };
    let script = |limit: &str| {
        format!(
            "ENTRY(_start)\n\
             SECTIONS {{\n . = 0x400000;\n .text : {{ *(.text) }}\n . = ALIGN(4096);\n\
             .data : {{ __per_cpu_load = .; *(.data) }}\n _end = .;\n}}\n\
             . = ASSERT((_end - 0x400000 <= {limit}), \"kernel image bigger than KERNEL_IMAGE_SIZE\");\n\
             init_per_cpu__gdt_page = ABSOLUTE(gdt_page) + __per_cpu_load;\n"
        )
    };
    std::fs::write(dir.join("ok.lds"), script("0x100000")).unwrap();
    std::fs::write(dir.join("small.lds"), script("0x10")).unwrap();
    std::fs::write(
        dir.join("a.s"),
        ".text\n.globl _start\n_start: ret\n.data\n.quad 0\n.globl gdt_page\ngdt_page: .quad 1\n",
    )
    .unwrap();
    run("as", &["a.s", "-o", "a.o"], &dir);
    let (r, g) = link_both(&dir, "vmlinux", &["-T", "ok.lds", "a.o"]);
    let syms = |f: &str| {
        // Address and name (the kind letter of `_end` differs: rivet keeps the assembler's empty `.bss`, in
        // which `_end` then lies; GNU ld drops it), and the kind of the absolute ones.
        let mut v: Vec<String> = run("nm", &[f], &dir)
            .lines()
            .map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                [a, "A", n] => format!("{a} A {n}"),
                [a, _, n] => format!("{a} {n}"),
                _ => l.to_string(),
            })
            .collect();
        v.sort();
        v
    };
    let want = syms(&g);
    assert!(
        want.iter()
            .any(|l| l.starts_with("0000000000802008 A init_per_cpu__gdt_page")),
        "{want:#?}"
    );
    assert_eq!(syms(&r), want, "symbols differ from GNU ld's");

    let (rivet, _) = common::linker_under_test();
    for linker in [rivet.to_str().unwrap(), "ld.bfd"] {
        let o = common::tool(linker, &["-T", "small.lds", "a.o", "-o", "big"], Some(&dir));
        assert!(!o.success(), "{linker} linked:\n{}", o.log());
        assert!(
            o.stderr_str()
                .contains("kernel image bigger than KERNEL_IMAGE_SIZE"),
            "{}",
            o.log()
        );
    }
}
