//! Linker scripts as embedded projects, bootloaders and older custom scripts write them (issue 33): each case is an
//! assembly source and a script linked by GNU ld and by the linker under test, which must agree on the output's
//! sections (address, load address, size), program headers, the symbols the case names, and on success or failure.
//! The cases are the classes a review of the script language against GNU ld 2.40 found different: forward
//! `LOADADDR`, symbols after `*(COMMON)`, `PHDRS` with `SIZEOF_HEADERS`, RELRO without `DATA_SEGMENT_RELRO_END`,
//! regions chosen by `MEMORY` attributes, load addresses of aligned sections, commands outside `SECTIONS`, orphans
//! under their own names, `KEEP` in a later statement, `SUBALIGN`, `ALIGN` to a multiple that is not a power of
//! two, and the physical address of a TLS segment loaded elsewhere.

mod common;

use std::path::Path;

/// One comparison: the source, the script, extra arguments, the symbols to compare.
struct Case<'a> {
    name: &'a str,
    asm: &'a str,
    script: &'a str,
    args: &'a [&'a str],
    symbols: &'a [&'a str],
    /// More scripts (file name, text), which `args` name: `-T` scripts after the case's, or input files.
    more: &'a [(&'a str, &'a str)],
}

/// What a link made: its entry point, its sections (name, size, VMA, LMA), program headers (type, vaddr, paddr, memsz, flags; not
/// `PT_GNU_STACK`), the case's symbols (value, name).
fn facts(dir: &Path, out: &str, symbols: &[&str]) -> Vec<String> {
    let mut v = Vec::new();
    let h = common::tool_ok("objdump", &["-h", "-w", out], dir);
    for l in h.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() > 6 && f[0].parse::<u32>().is_ok() && !f[1].starts_with(".comment") {
            v.push(format!(
                "section {} size {} vma {} lma {}",
                f[1], f[2], f[3], f[4]
            ));
        }
    }
    let l = common::tool_ok("readelf", &["-lW", out], dir);
    v.extend(
        l.lines()
            .filter(|l| l.starts_with("Entry point"))
            .map(str::to_string),
    );
    for line in l.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        // rivet, as lld and mold, marks the stack non-executable where the inputs say nothing.
        if f.len() >= 7 && f[1].starts_with("0x") && f[2].starts_with("0x") && f[0] != "GNU_STACK" {
            let flags = f[6..f.len() - 1].join("");
            v.push(format!(
                "phdr {} vaddr {} paddr {} memsz {} flags {flags}",
                f[0], f[2], f[3], f[5]
            ));
        }
    }
    let s = common::tool_ok("readelf", &["-sW", out], dir);
    let mut syms: Vec<String> = (s.lines())
        .map(|line| line.split_whitespace().collect::<Vec<&str>>())
        .filter(|f| f.len() == 8 && symbols.contains(&f[7]))
        .map(|f| format!("symbol {} = {}", f[7], f[1]))
        .collect();
    syms.sort();
    v.extend(syms);
    v
}

/// Links the case with GNU ld and the linker under test; the differences, empty where they agree.
fn compare(c: &Case) -> Vec<String> {
    let Some((dir, _, _)) = common::against_gnu_ld(&format!("script-gnu-{}", c.name), &["as"])
    else {
        return Vec::new();
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("a.s"), c.asm).unwrap();
    std::fs::write(dir.join("link.ld"), c.script).unwrap();
    for (name, text) in c.more {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let link = |ld: &Path, out: &str| {
        let mut args = vec!["-T", "link.ld"];
        args.extend(c.args);
        args.extend(["a.o", "-o", out]);
        let o = common::tool(ld.to_str().unwrap(), &args, Some(&dir));
        match o.success() {
            true => facts(&dir, out, c.symbols),
            // Both must fail; the messages are the linkers' own.
            false => {
                eprintln!("{}: {}", c.name, String::from_utf8_lossy(&o.stderr).trim());
                vec!["failed".to_string()]
            }
        }
    };
    let gnu = link(&common::which("ld.bfd").unwrap(), "out.bfd");
    let test = link(&linker, "out.test");
    if gnu == test {
        return Vec::new();
    }
    let mut d = vec![format!("case {}: GNU ld | linker under test", c.name)];
    for k in 0..gnu.len().max(test.len()) {
        let (a, b) = (gnu.get(k), test.get(k));
        if a != b {
            d.push(format!("  {a:?} | {b:?}"));
        }
    }
    d
}

/// A case per source and arguments (in that order, named by `names`), with `script`, comparing `_start`.
fn variants<'a>(
    names: &[&'a str],
    asms: &[&'a str],
    options: &[&'a [&'a str]],
    script: &'a str,
) -> Vec<Case<'a>> {
    let pairs = asms
        .iter()
        .flat_map(|&asm| options.iter().map(move |&args| (asm, args)));
    (pairs.zip(names))
        .map(|((asm, args), &name)| Case {
            name,
            asm,
            script,
            args,
            symbols: &["_start"],
            more: &[],
        })
        .collect()
}

fn check(cases: &[Case]) {
    let diffs: Vec<String> = cases.iter().flat_map(compare).collect();
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `_sidata = LOADADDR(.data)` before `.data` (STM32 projects' scripts), `LOADADDR` in a data command of the section
/// itself, and after it.
#[test]
fn forward_loadaddr_matches_gnu_ld() {
    check(&[Case {
        name: "loadaddr",
        asm: ".globl _start\n.text\n_start: ret\n.data\n.quad 1\n",
        script: "MEMORY { ROM (rx) : ORIGIN = 0x8000000, LENGTH = 64K\n\
                 RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 8K }\n\
                 SECTIONS {\n  .text : { *(.text*) } >ROM\n  _sidata = LOADADDR(.data);\n  \
                 .data : { *(.data*) LONG(LOADADDR(.data)) } >RAM AT>ROM\n  _after = LOADADDR(.data);\n}\n",
        args: &[],
        symbols: &["_sidata", "_after"],
        more: &[],
    }]);
}

/// `_ebss = .` after `*(COMMON)` counts the common symbols, which the statement places there.
#[test]
fn symbols_after_common_match_gnu_ld() {
    check(&[
        Case {
            name: "common",
            asm: ".globl _start\n.text\n_start: ret\n.bss\nb: .zero 16\n.comm cm,64,8\n.comm cn,4,4\n",
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text*) }\n  \
                     .bss : { _sbss = .; *(.bss*) *(COMMON) _ebss = .; }\n  _end = .;\n}\n",
            args: &[],
            symbols: &["_sbss", "_ebss", "_end", "cm", "cn"],
            more: &[],
        },
        Case {
            name: "common-between",
            asm: ".globl _start\n.text\n_start: ret\n.bss\nb: .zero 16\n.comm cm,64,8\n",
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text*) }\n  \
                     .bss : { *(COMMON) _mid = .; *(.bss*) _ebss = .; }\n}\n",
            args: &[],
            symbols: &["_mid", "_ebss", "cm"],
            more: &[],
        },
    ]);
}

/// `SIZEOF_HEADERS` with `PHDRS` counts the script's program headers.
#[test]
fn phdrs_and_sizeof_headers_match_gnu_ld() {
    check(&[Case {
        name: "phdrs-headers",
        asm: ".globl _start\n.text\n_start: mov $60,%eax; xor %edi,%edi; syscall\n",
        script: "PHDRS {\n  hdr PT_PHDR PHDRS;\n  text PT_LOAD FILEHDR PHDRS;\n  n1 PT_NOTE;\n  n2 PT_NOTE;\n  \
                 n3 PT_NOTE;\n}\nENTRY(_start)\nSECTIONS {\n  . = 0x400000 + SIZEOF_HEADERS;\n  \
                 .text : { *(.text) } :text\n}\n",
        args: &[],
        symbols: &["_start"],
        more: &[],
    }]);
}

/// A section assigned to an earlier `PT_LOAD` than the section before it (the kernel's `.bss :data` after `:init`
/// sections): GNU ld stretches that segment over everything between, and `.bss` must be in it, zero-filled; a
/// section with contents assigned back the same way.
#[test]
fn section_assigned_back_to_an_earlier_load_is_in_it() {
    let asm = ".section .text,\"ax\"\n.globl _start\n_start: movq $5, buf(%rip)\n\
               mov buf(%rip),%rdi\nmov $60,%eax\nsyscall\n.section .data,\"aw\"\n.quad 1\n\
               .section .data2,\"aw\"\n.quad 2\n.section .init.text,\"ax\"\nret\n\
               .section .bss,\"aw\",@nobits\nbuf: .zero 4096\n";
    let head = "PHDRS { text PT_LOAD; data PT_LOAD; init PT_LOAD; }\nSECTIONS {\n . = 0x400000;\n \
                .text : { *(.text) } :text\n . = ALIGN(0x1000);\n .data : { *(.data) } :data\n \
                . = ALIGN(0x1000);\n .init.text : { *(.init.text) } :init\n . = ALIGN(0x1000);\n";
    let bss = format!("{head} .bss : {{ *(.bss) }} :data\n}}\n");
    let data = format!("{head} .data2 : {{ *(.data2) }} :data\n .bss : {{ *(.bss) }}\n}}\n");
    check(&[
        Case {
            name: "phdrs-back-bss",
            asm,
            script: &bss,
            args: &[],
            symbols: &["_start", "buf"],
            more: &[],
        },
        Case {
            name: "phdrs-back-data",
            asm,
            script: &data,
            args: &[],
            symbols: &["_start", "buf"],
            more: &[],
        },
    ]);
    // The program writes and reads `buf` in `.bss`: it runs.
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-phdrs-back-run", &["as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("a.s"), asm).unwrap();
    std::fs::write(dir.join("link.ld"), &bss).unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let args = ["-T", "link.ld", "a.o", "-o", "a.out"];
    common::tool_ok(linker.to_str().unwrap(), &args, &dir);
    let run = common::tool(dir.join("a.out").to_str().unwrap(), &[], Some(&dir));
    assert_eq!(run.code, Some(5), "{}", run.log());
}

/// A `-T` script without `ENTRY` (and no `-e`): GNU ld's entry is the symbol `start`, else the start of `.text`;
/// not `_start`, which only its default script names.
#[test]
fn entry_without_entry_command_matches_gnu_ld() {
    let script = "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n}\n";
    check(&[
        Case {
            name: "entry-text",
            asm: ".text\nf: nop\n.globl _start\n_start: ret\n",
            script,
            args: &[],
            symbols: &["_start"],
            more: &[],
        },
        Case {
            name: "entry-start",
            asm: ".text\nf: nop\n.globl start\nstart: ret\n",
            script,
            args: &[],
            symbols: &["start"],
            more: &[],
        },
    ]);
}

/// `PROVIDE` defines its symbol only where something reads it: an input, or the script's own expressions (not
/// `DEFINED`, and not the first branch of `DEFINED(x) ? x : ...`); otherwise `DEFINED` is false for it and it is
/// not in `.symtab`.
#[test]
fn provide_defines_only_what_is_read_as_gnu_ld() {
    let asm = ".globl _start\n.text\n_start: ret\n";
    let bodies = [
        "PROVIDE(__heap = 0x10); d4 = DEFINED(__heap) ? 1 : 2;",
        "PROVIDE(__heap = 0x10); x = __heap; d4 = DEFINED(__heap) ? 1 : 2;",
        "d4 = DEFINED(__heap) ? 1 : 2; PROVIDE(__heap = 0x10); x = __heap;",
        "PROVIDE(__heap = 0x10); x = DEFINED(__heap) ? __heap : 5;",
        "PROVIDE(__heap = 0x10); .data : { LONG(__heap) }",
    ];
    let scripts: Vec<String> = (bodies.iter())
        .map(|b| format!("SECTIONS {{ . = 0x10000; .text : {{ *(.text) }} {b} }}\n"))
        .collect();
    let names = [
        "provide-1",
        "provide-2",
        "provide-3",
        "provide-4",
        "provide-5",
    ];
    let cases: Vec<Case> = (scripts.iter().zip(names))
        .map(|(script, name)| Case {
            name,
            asm,
            script,
            args: &[],
            symbols: &["x", "d4", "__heap"],
            more: &[],
        })
        .collect();
    check(&cases);
}

/// Sections with contents that `PHDRS` puts in no `PT_LOAD` (`:NONE`, and the sections inheriting it) are
/// warned about, one warning each, as GNU ld warns.
#[test]
fn sections_in_no_load_are_warned_about_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-phdrs-none", &["as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let bfd = common::which("ld.bfd").unwrap();
    std::fs::write(
        dir.join("a.s"),
        ".text\n.globl _start\n_start: ret\n.section .ro1,\"a\"\n.byte 1\n.section .ro2,\"a\"\n.byte 2\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("link.ld"),
        "PHDRS { text PT_LOAD; }\nSECTIONS { . = 0x10000; .text : { *(.text) } :text\n\
         .ro1 : { *(.ro1) } :NONE\n.ro2 : { *(.ro2) }\n}\n",
    )
    .unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let mut views = Vec::new();
    for ld in [&bfd, &linker] {
        let o = common::tool(
            ld.to_str().unwrap(),
            &["-T", "link.ld", "a.o", "-o", "out"],
            Some(&dir),
        );
        assert!(o.success(), "{}", o.log());
        let warned: Vec<String> = (o.stderr_str().lines())
            .filter(|l| l.contains("not in segment"))
            .map(|l| l.rsplit("warning: ").next().unwrap_or(l).to_string())
            .collect();
        views.push(warned);
    }
    assert_eq!(views[0].len(), 2, "{views:?}");
    assert_eq!(views[1], views[0]);
}

/// `PHDRS`' expressions read the page sizes `-z` gives (`CONSTANT (MAXPAGESIZE)`, `CONSTANT (COMMONPAGESIZE)`), and
/// `SIZEOF_HEADERS` as 0 (GNU ld evaluates them before it sizes the headers), with the default sizes and others.
#[test]
fn phdrs_expressions_read_the_page_sizes_as_gnu_ld() {
    let script = "PHDRS {\n  text PT_LOAD FILEHDR PHDRS AT (0x1000000 + CONSTANT (MAXPAGESIZE) + SIZEOF_HEADERS);\n  \
                  data PT_LOAD AT (0x2000000 + CONSTANT (COMMONPAGESIZE)) FLAGS (CONSTANT (COMMONPAGESIZE) / 0x800);\n}\n\
                  ENTRY(_start)\nSECTIONS {\n  . = 0x400000 + SIZEOF_HEADERS;\n  .text : { *(.text) } :text\n  \
                  . = ALIGN (CONSTANT (MAXPAGESIZE));\n  .data : { *(.data) } :data\n}\n";
    let asm =
        ".globl _start\n.text\n_start: mov $60,%eax; xor %edi,%edi; syscall\n.data\n.quad 1\n";
    let pages: &[&[&str]] = &[
        &[],
        &[
            "-z",
            "max-page-size=0x200000",
            "-z",
            "common-page-size=0x2000",
        ],
    ];
    check(&variants(
        &["phdrs-pages", "phdrs-pages-z"],
        &[asm],
        pages,
        script,
    ));
}

/// `DATA_SEGMENT_ALIGN`, `DATA_SEGMENT_RELRO_END` and `DATA_SEGMENT_END` as GNU ld 2.40 sizes them in its second
/// pass: with RELRO, the RELRO sections laid out from the next page and moved up to end on a page, as far as
/// each one's alignment lets it (`.tdata` then lands 4 bytes after a gap-free start); without, the next page at
/// the same offset, or its start where that spares a common page; and without RELRO the location counter stays
/// at `DATA_SEGMENT_RELRO_END`. Demand paged, under `-n`, and under `-N` (whose own layout has no RELRO, but
/// a script's still pads).
#[test]
fn data_segment_functions_match_gnu_ld() {
    let script = "SECTIONS {\n  . = 0x400000 + SIZEOF_HEADERS;\n  .text : { *(.text) }\n  \
                  . = DATA_SEGMENT_ALIGN (CONSTANT (MAXPAGESIZE), CONSTANT (COMMONPAGESIZE));\n  \
                  .tdata : { *(.tdata) }\n  .data.rel.ro : { *(.data.rel.ro) }\n  \
                  . = DATA_SEGMENT_RELRO_END (0, .);\n  .data : { *(.data) }\n  .bss : { *(.bss) }\n  \
                  . = DATA_SEGMENT_END (.);\n}\n";
    let exit = ".section .note.GNU-stack,\"\",@progbits\n.globl _start\n.text\n\
                _start: mov $60,%eax; xor %edi,%edi; syscall\n";
    // RELRO past the page the code ends in; a `.tdata` less aligned than what follows it.
    let far = format!(
        "{exit}.fill 0xf70,1,0x90\n.section .tdata,\"awT\",@progbits\n.long 1\n\
         .section .data.rel.ro,\"aw\"\n.balign 8\n.fill 0x100,1,1\n.data\n.quad 2\n"
    );
    // No RELRO, and data that would cross a common page from the same offset in the next.
    let spare =
        format!("{exit}.fill 0xef0,1,0x90\n.data\n.quad 2\n.bss\n.balign 32\n.zero 0x190\n");
    // Demand paged, the headers share the code's load: rivet's script layouts give them no load of their own.
    let options: [&[&str]; 5] = [
        &["-z", "noseparate-code"],
        &["-z", "noseparate-code", "-z", "norelro"],
        &["-n"],
        &["-n", "-z", "norelro"],
        &["-N"],
    ];
    // Neither RELRO nor a page to spare: the data stays at the next page's offset, RELRO's end unpadded.
    let plain = format!("{exit}.data\n.quad 2\n");
    let names = [
        "far",
        "far-norelro",
        "far-n",
        "far-n-norelro",
        "far-N",
        "spare",
        "spare-norelro",
        "spare-n",
        "spare-n-norelro",
        "spare-N",
        "plain",
        "plain-norelro",
        "plain-n",
        "plain-n-norelro",
        "plain-N",
    ];
    check(&variants(&names, &[&far, &spare, &plain], &options, script));
}

/// A script without `DATA_SEGMENT_RELRO_END` has no `PT_GNU_RELRO`, whatever its sections are called.
#[test]
fn relro_only_where_the_script_ends_it() {
    check(&[
        Case {
            name: "no-relro-end",
            asm: ".globl _start\n.text\n_start: ret\n.data\nd: .quad 1\n\
                  .section .init_array,\"aw\",@init_array\n.quad 0\n.section .data.rel.ro,\"aw\"\n.quad 2\n",
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  . = ALIGN(0x1000);\n  \
                     .data : { *(.data) }\n  .init_array : { *(.init_array) }\n  \
                     .data.rel.ro : { *(.data.rel.ro) }\n}\n",
            args: &["-z", "relro"],
            symbols: &["d"],
            more: &[],
        },
        Case {
            name: "relro-end",
            asm: ".globl _start\n.text\n_start: ret\n.data\nd: .quad 1\n\
                  .section .data.rel.ro,\"aw\"\n.quad 2\n",
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                     . = DATA_SEGMENT_ALIGN(0x1000, 0x1000);\n  .data.rel.ro : { *(.data.rel.ro) }\n  \
                     . = DATA_SEGMENT_RELRO_END(0, .);\n  .data : { *(.data) }\n  . = DATA_SEGMENT_END(.);\n}\n",
            args: &["-z", "relro"],
            symbols: &["d"],
            more: &[],
        },
    ]);
}

/// Sections without `>region` go to the first region whose attributes accept them, orphans too.
#[test]
fn memory_attributes_choose_regions_as_gnu_ld() {
    check(&[Case {
        name: "attributes",
        asm: ".globl _start\n.text\n_start: ret\n.data\nd: .quad 7\n.section .ramfunc,\"awx\"\nrf: ret\n\
              .section .rodata\nr: .long 3\n",
        script: "MEMORY {\n  FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 64K\n  \
                 RAM (rw!x) : ORIGIN = 0x20000000, LENGTH = 8K\n}\nENTRY(_start)\nSECTIONS {\n  \
                 .text : { *(.text) }\n  .data : { *(.data) }\n}\n",
        args: &[],
        symbols: &["_start", "d", "rf", "r"],
        more: &[],
    }]);
}

/// Load addresses in a region after an aligned section: `ALIGN_WITH_INPUT` keeps the distance to the address,
/// an output section's `ALIGN` aligns the load address too.
#[test]
fn load_addresses_are_aligned_as_gnu_ld() {
    check(&[Case {
        name: "lma-align",
        asm: ".text\n.byte 1,2,3\n.data\n.p2align 3\n.quad 1\n.section .data2,\"aw\"\n.quad 2\n",
        script: "MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 64K\n\
                 RAM (xrw) : ORIGIN = 0x20000001, LENGTH = 8K }\nSECTIONS {\n  .text : { *(.text) } >FLASH\n  \
                 .data : ALIGN_WITH_INPUT { *(.data) } >RAM AT> FLASH\n  _sidata = LOADADDR(.data);\n  \
                 .data2 : ALIGN(16) { *(.data2) } >RAM AT> FLASH\n  _sidata2 = LOADADDR(.data2);\n}\n",
        args: &["-e", "0"],
        symbols: &["_sidata", "_sidata2"],
        more: &[],
    }]);
}

/// Commands GNU ld takes outside `SECTIONS`: `ASSERT` (cortex-m-rt's `link.x`), `REGION_ALIAS` (riscv-rt's
/// `memory.x`), a second `SECTIONS`, compound assignments and `.`.
#[test]
fn commands_outside_sections_match_gnu_ld() {
    let asm = ".globl _start\n.text\n_start: ret\n.data\nd: .quad 1\n";
    check(&[
        Case {
            name: "assert",
            asm,
            script: "SECTIONS { .text 0x10000 : { *(.text) } }\n\
                     ASSERT(ADDR(.text) % 4 == 0, \"text misaligned\")\n",
            args: &[],
            symbols: &["_start"],
            more: &[],
        },
        Case {
            name: "assert-fails",
            asm,
            script: "SECTIONS { .text 0x10001 : { *(.text) } }\n\
                     ASSERT(ADDR(.text) % 4 == 0, \"text misaligned\")\n",
            args: &[],
            symbols: &["_start"],
            more: &[],
        },
        Case {
            name: "alias",
            asm,
            script: "MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 64K }\n\
                     REGION_ALIAS(\"REGION_TEXT\", FLASH);\nSECTIONS { .text : { *(.text) } > REGION_TEXT\n  \
                     .data : { *(.data) } > REGION_TEXT }\n",
            args: &[],
            symbols: &["_start", "d"],
            more: &[],
        },
        Case {
            name: "two-sections",
            asm,
            script: "SECTIONS { .text 0x10000 : { *(.text) } }\nSECTIONS { .data : { *(.data) } }\n",
            args: &[],
            symbols: &["_start", "d"],
            more: &[],
        },
        Case {
            name: "compound",
            asm,
            script: "stack_size = 0x400;\nstack_size += 0x100;\nstack_size <<= 1;\n\
                     SECTIONS { .text 0x10000 : { *(.text) } }\n",
            args: &[],
            symbols: &["stack_size"],
            more: &[],
        },
        Case {
            name: "dot-outside",
            asm,
            script: ". = 0x10000;\nSECTIONS { .text : { *(.text) } .data : { *(.data) } }\n",
            args: &[],
            symbols: &["_start", "d"],
            more: &[],
        },
    ]);
}

/// Orphans keep their own names (an orphan `.ctors.NNNNN` must not become an `.init_array` entry), and an orphan
/// with data goes before `.bss` where the script has no `.data`.
#[test]
fn orphans_keep_their_names_as_in_gnu_ld() {
    check(&[
        Case {
            name: "orphan-names",
            asm: ".globl _start\n.text\n_start: ret\n.section .text.foo,\"ax\"\nfoo: ret\n\
                  .section .ctors.00100,\"aw\"\n.quad 0xc7\n.section .init_array,\"aw\",@init_array\n.quad 0x1a\n",
            script: "ENTRY(_start)\nSECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                     .init_array : { *(.init_array) }\n}\n",
            args: &[],
            symbols: &["_start", "foo"],
            more: &[],
        },
        Case {
            name: "orphan-data",
            asm: ".globl _start\n.text\n_start: ret\n.data\n.quad 7\n.bss\n.zero 0x10000\n",
            script: "ENTRY(_start)\nSECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                     . = ALIGN(0x1000);\n  .bss : { *(.bss) }\n}\n",
            args: &[],
            symbols: &["_start"],
            more: &[],
        },
    ]);
}

/// `KEEP` in a statement after the one that places a section still keeps it under `--gc-sections`.
#[test]
fn keep_in_a_later_statement_matches_gnu_ld() {
    check(&[Case {
        name: "late-keep",
        asm: ".globl _start\n.text\n_start: ret\n.section .rodata.keep,\"a\"\nk: .long 0x11223344\n",
        script: "ENTRY(_start)\nSECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                 .rodata : { *(.rodata*) }\n  .keep : { KEEP(*(.rodata.keep)) }\n}\n",
        args: &["--gc-sections"],
        symbols: &["k"],
        more: &[],
    }]);
}

/// `SUBALIGN` sets the alignment of the section's inputs, smaller or larger than their own, and so the section's
/// (`ALIGNOF`); `ALIGN` with an alignment that is not a power of two rounds up to a multiple of it; a TLS segment's
/// physical address is its load address, as the loads' are.
#[test]
fn subalign_odd_align_and_tls_load_address_match_gnu_ld() {
    check(&[
        Case {
            name: "subalign",
            asm: ".globl _start\n.text\n_start: ret\n.section .rodata.a,\"a\"\n.balign 32\n.byte 1\n\
                  .section .rodata.b,\"a\"\n.balign 2\n.byte 2\n.section .data.a,\"aw\"\n.byte 3\n\
                  .section .data.b,\"aw\"\n.balign 2\n.byte 4\n",
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                     .rodata : SUBALIGN(4) { *(.rodata.*) }\n  .data : SUBALIGN(64) { *(.data.*) }\n  \
                     ro_align = ALIGNOF(.rodata);\n  data_align = ALIGNOF(.data);\n  \
                     odd = ALIGN(0x10001, 3);\n  odd_dot = ALIGN(7);\n}\n",
            args: &[],
            symbols: &["ro_align", "data_align", "odd", "odd_dot"],
            more: &[],
        },
        Case {
            name: "tls-lma",
            asm: ".globl _start\n.text\n_start: ret\n.section .tdata,\"awT\",@progbits\n.quad 5\n\
                  .section .data,\"aw\"\n.quad 6\n",
            script: "MEMORY { ROM (rx) : ORIGIN = 0x8000000, LENGTH = 64K\n\
                     RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 8K }\n\
                     SECTIONS {\n  .text : { *(.text*) } >ROM\n  \
                     .tdata : { *(.tdata*) } >RAM AT>ROM\n  .data : { *(.data*) } >RAM AT>ROM\n}\n",
            args: &[],
            symbols: &[],
            more: &[],
        },
    ]);
}

/// The `SECTIONS`, `MEMORY` and `PHDRS` of several scripts accumulate, as GNU ld's manual says of `-T`: the
/// regions of one script and the sections of another (embedded projects' `memory.ld` and `sections.ld`), a second
/// script's sections after the first's (Rust embedded's `-Tlink.x -Tdefmt.x`), and a script named as an input file
/// after every `-T` script, wherever it stands on the command line.
#[test]
fn scripts_accumulate_as_in_gnu_ld() {
    let asm = ".globl _start\n.text\n_start: ret\n.data\n.quad 1\n\
               .section .extra,\"aw\"\n.quad 2\n.section .info,\"\"\n.quad 3\n";
    check(&[
        Case {
            name: "memory-then-sections",
            asm,
            script: "MEMORY { ROM (rx) : ORIGIN = 0x8000000, LENGTH = 64K\n\
                     RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 8K }\n",
            args: &["-T", "sections.ld"],
            symbols: &["_sidata", "_edata"],
            more: &[(
                "sections.ld",
                "SECTIONS {\n  .text : { *(.text*) } >ROM\n  _sidata = LOADADDR(.data);\n  \
                 .data : { *(.data*) *(.extra) _edata = .; } >RAM AT>ROM\n}\n",
            )],
        },
        Case {
            name: "second-sections",
            asm,
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text*) }\n  first_end = .;\n}\n",
            args: &["extra.ld", "-T", "second.ld"],
            symbols: &["first_end", "second", "text_addr", "extra_start"],
            more: &[
                (
                    "second.ld",
                    "SECTIONS {\n  . = ALIGN(0x1000);\n  second = .;\n  .data : { *(.data) }\n  \
                     text_addr = ADDR(.text);\n}\n",
                ),
                (
                    "extra.ld",
                    "SECTIONS {\n  .extra : { extra_start = .; *(.extra) }\n  .info 0 (INFO) : { *(.info) }\n}\n",
                ),
            ],
        },
    ]);
}

/// An unallocated output section is addressed as any other (the location counter, aligned, or its own address)
/// and moves the location counter past its end; `INFO` makes allocated inputs unallocated (Rust's defmt:
/// `.defmt 0 (INFO)`), and code refers to their symbols' addresses there; a data command makes a section allocated,
/// symbols alone leave an unallocated input's section as it is.
#[test]
fn unallocated_sections_match_gnu_ld() {
    let asm = ".globl _start\n.text\n_start: movl $in_info, %eax\n lea in_info(%rip), %rbx\n ret\n\
               .section .info,\"a\"\n.quad 3\n.globl in_info\nin_info: .quad 4\n\
               .section .nona,\"\"\n.quad 5\n.data\n.quad 1\n";
    let syms: &[&str] = &[
        "in_info",
        "info_start",
        "after_info",
        "nona_start",
        "after_nona",
    ];
    check(&[
        Case {
            name: "info",
            asm,
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                     .info (INFO) : { info_start = .; *(.info) }\n  after_info = .;\n  \
                     .data : { *(.data) }\n  .nona : { nona_start = .; *(.nona) }\n  after_nona = .;\n}\n",
            args: &[],
            symbols: syms,
            more: &[],
        },
        Case {
            name: "unallocated-addresses",
            asm,
            script: "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  \
                     .nona ALIGN(0x100) : { *(.nona) BYTE(7) }\n  after_nona = .;\n  \
                     .info 0x500 (INFO) : { *(.info) }\n  after_info = .;\n  .data : { *(.data) }\n}\n",
            args: &[],
            symbols: syms,
            more: &[],
        },
    ]);
}

/// A statement whose patterns sort in different ways (`*(SORT(.text.*) .text)`) orders its sections as GNU ld's
/// tree does: unsorted ones at its right end, sorted ones down from its root, a section once per pattern that
/// matches it, and the sections an earlier statement took shaping it too. Compared byte for byte.
#[test]
fn mixed_sorts_in_one_statement_order_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-mixed-sorts", &["as", "objcopy"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let objects = [
        ".globl _start\n.text\n_start: .byte 0xc3\n.section .text.b,\"ax\"\n.byte 0x0b\n\
         .section .text.a,\"ax\"\n.balign 4\n.byte 0x0a\n.section .text.c,\"ax\"\n.byte 0x0c\n",
        ".text\n.byte 0x1b\n.section .text.a,\"ax\"\n.byte 0x1a\n.section .text.0,\"ax\"\n.balign 8\n.byte 0x10\n",
    ];
    let mut inputs = Vec::new();
    for (k, src) in objects.iter().enumerate() {
        let (s, o) = (format!("m{k}.s"), format!("m{k}.o"));
        std::fs::write(dir.join(&s), src).unwrap();
        common::tool_ok("as", &[&s, "-o", &o], &dir);
        inputs.push(o);
    }
    let statements = [
        "*(SORT(.text.*) .text)",
        "*(.text SORT(.text.*))",
        "*(.text.c SORT(.text.*) .text)",
        "*(.text.a SORT(.text.*) .text)",
        "*(SORT_BY_ALIGNMENT(.text.b) SORT(.text.*) .text)",
        "*(SORT_BY_ALIGNMENT(.text.*) .text)",
        "*(.text.b) *(SORT(.text.*) .text)",
        "*(.text.a) *(SORT_BY_NAME(SORT_BY_ALIGNMENT(.text.*)) .text .text.*)",
    ];
    let mut diffs = Vec::new();
    for st in statements {
        std::fs::write(
            dir.join("mixed.ld"),
            format!("SECTIONS {{ .text 0x1000 : {{ {st} }} }}\n"),
        )
        .unwrap();
        let text = |ld: &str| {
            let mut args = vec!["-T", "mixed.ld"];
            args.extend(inputs.iter().map(String::as_str));
            args.extend(["-o", "mixed.out"]);
            common::tool_ok(ld, &args, &dir);
            common::tool_ok(
                "objcopy",
                &["-O", "binary", "-j", ".text", "mixed.out", "mixed.bin"],
                &dir,
            );
            std::fs::read(dir.join("mixed.bin")).unwrap()
        };
        let (gnu, test) = (text("ld.bfd"), text(linker.to_str().unwrap()));
        if gnu != test {
            diffs.push(format!(
                "{st}: GNU ld {gnu:02x?}, linker under test {test:02x?}"
            ));
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `/DISCARD/ : { *(COMMON) }` drops the common symbols (and their names from `.symtab`), and a reference to one is
/// GNU ld's error ("defined in discarded section `COMMON'").
#[test]
fn discarded_commons_match_gnu_ld() {
    let script = "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text) }\n  .bss : { *(.bss) }\n  \
                  /DISCARD/ : { *(COMMON) }\n  end = .;\n}\n";
    check(&[
        Case {
            name: "commons-dropped",
            asm: ".globl _start\n.text\n_start: ret\n.bss\nb: .zero 8\n.comm cvar,8,8\n.comm unused,4,4\n",
            script,
            args: &[],
            symbols: &["cvar", "unused", "end"],
            more: &[],
        },
        Case {
            name: "commons-referenced",
            asm: ".globl _start\n.text\n_start: mov cvar(%rip), %rax\n ret\n.comm cvar,8,8\n",
            script,
            args: &[],
            symbols: &[],
            more: &[],
        },
    ]);
}

/// The sources of the load region cases: `.data` loaded in FLASH, then sections in RAM without `AT`, aligned
/// (a zero-fill section among them) or not.
const LMA_REGION_ASM: &str = ".text\n.globl _start\n_start: ret\n.section .data,\"aw\"\n.long 1,2,3\n\
                              .section .data2,\"aw\"\n.p2align 4\n.long 4\n.section .bss,\"aw\",@nobits\n\
                              .p2align 5\n.zero 64\n.section .data3,\"aw\"\n.long 9\n";
const LMA_REGION_UNALIGNED_ASM: &str = ".text\n.globl _start\n_start: ret\n.section .data,\"aw\"\n.long 1,2,3\n\
                                        .section .data2,\"aw\"\n.long 4\n.section .bss,\"aw\",@nobits\n\
                                        .zero 64\n.section .data3,\"aw\"\n.long 9\n";
const LMA_REGION_MEMORY: &str = "MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 128K\n\
                                 RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 20K }\n";

/// A section without `AT` or `AT>` after a `>RAM AT>FLASH` one in the same region is loaded in FLASH after it (GNU
/// ld's `lang_propagate_lma_regions`), aligned only by its own `ALIGN`, a zero-fill section taking no FLASH; the
/// program headers split where the load offset changes. Orphans take the regions of the section they follow.
#[test]
fn load_region_carries_to_the_next_sections_as_gnu_ld() {
    let sections = "SECTIONS {\n  .text : { *(.text) } >FLASH\n  .data : { *(.data) } >RAM AT>FLASH\n  \
                    .data2 : { *(.data2) } >RAM\n  .bss : { *(.bss) } >RAM\n  .data3 : { *(.data3) } >RAM\n  \
                    l2 = LOADADDR(.data2); l3 = LOADADDR(.bss); l4 = LOADADDR(.data3);\n}\n";
    let script = format!("{LMA_REGION_MEMORY}{sections}");
    let noload = script.replace(".bss : {", ".bss (NOLOAD) : {");
    let aligned = script.replace(".data3 : {", ".data3 : ALIGN(8) {");
    // `.data2` and `.data3` orphans: after `.data`, in its regions.
    let orphans = format!(
        "{LMA_REGION_MEMORY}SECTIONS {{\n  .text : {{ *(.text) }} >FLASH\n  .data : {{ *(.data) }} >RAM AT>FLASH\n  \
         .bss : {{ *(.bss) }} >RAM\n  l2 = LOADADDR(.data2); l4 = LOADADDR(.data3);\n}}\n"
    );
    let syms = &["l2", "l3", "l4"];
    let case = |name, asm, script| Case {
        name,
        asm,
        script,
        args: &[],
        symbols: syms,
        more: &[],
    };
    check(&[
        case("lma-region", LMA_REGION_ASM, &script),
        case("lma-region-unaligned", LMA_REGION_UNALIGNED_ASM, &script),
        case("lma-region-noload", LMA_REGION_ASM, &noload),
        case(
            "lma-region-noload-unaligned",
            LMA_REGION_UNALIGNED_ASM,
            &noload,
        ),
        case("lma-region-align", LMA_REGION_ASM, &aligned),
        case("lma-region-orphans", LMA_REGION_ASM, &orphans),
    ]);
}

/// `>NOREG` naming no `MEMORY` region: GNU ld warns and makes the region (at 0, unbounded). `MEMORY` regions
/// whose attributes take no section: a section without `>region` is an error, unless it has an address or is
/// an orphan after a section with one.
#[test]
fn undeclared_and_missing_regions_match_gnu_ld() {
    let one = "MEMORY { R : ORIGIN = 0x1000, LENGTH = 1M }\n";
    let negated = "MEMORY { R (!x) : ORIGIN = 0x1000, LENGTH = 1M }\n";
    let code = "MEMORY { R (x) : ORIGIN = 0x1000, LENGTH = 1M }\n";
    let bare = "SECTIONS { .text : { *(.text) } .data : { *(.data) } }\n";
    let scripts = [
        (
            "noreg",
            "MEMORY { RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K }\nSECTIONS { .text : { *(.text) } >RAM\n  \
             .data : { *(.data) } >NOREG\n  .bss : { *(.bss) } }\n"
                .to_string(),
        ),
        ("no-attributes", format!("{one}{bare}")),
        ("negated-attributes", format!("{negated}{bare}")),
        ("code-attribute", format!("{code}{bare}")),
        (
            "no-attributes-named",
            format!("{one}SECTIONS {{ .text : {{ *(.text) }} >R .data : {{ *(.data) }} >R }}\n"),
        ),
        (
            "no-attributes-addressed",
            format!("{one}SECTIONS {{ .text 0x1000 : {{ *(.text) }} .data 0x2000 : {{ *(.data) }} >R }}\n"),
        ),
    ];
    let cases: Vec<Case> = (scripts.iter())
        .map(|(name, script)| Case {
            name,
            asm: LMA_REGION_ASM,
            script,
            args: &[],
            symbols: &["_start"],
            more: &[],
        })
        .collect();
    check(&cases);
}

/// Every region that overflows is reported in GNU ld's words ("region `ROM' overflowed by N bytes", which IDEs
/// and CI scripts look for), with GNU ld's count: the region's end after all its sections, load addresses too.
#[test]
fn region_overflows_are_all_reported_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-overflow", &["as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let asm = ".text\n.globl _start\n_start: .fill 200,1,0x90\n.data\n.fill 100,1,1\n";
    std::fs::write(dir.join("a.s"), asm).unwrap();
    std::fs::write(
        dir.join("ov.ld"),
        "MEMORY { ROM (rx) : ORIGIN = 0x1000, LENGTH = 0x80\n  RAM (rw) : ORIGIN = 0x2000, LENGTH = 0x40 }\n\
         SECTIONS { .text : { *(.text) } >ROM\n  .data : { *(.data) } >RAM AT>ROM }\n",
    )
    .unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let args = ["-T", "ov.ld", "a.o", "-o", "out"];
    let gnu = common::tool(
        common::which("ld.bfd").unwrap().to_str().unwrap(),
        &args,
        Some(&dir),
    );
    let test = common::tool(linker.to_str().unwrap(), &args, Some(&dir));
    assert!(!gnu.success() && !test.success(), "{}", test.log());
    let (gnu, test) = (gnu.stderr_str(), test.stderr_str());
    for phrase in [
        "region `ROM' overflowed by 172 bytes",
        "region `RAM' overflowed by 36 bytes",
        "section `.text' will not fit in region `ROM'",
        "section `.data' will not fit in region `RAM'",
    ] {
        assert!(gnu.contains(phrase), "GNU ld: {gnu}");
        assert!(test.contains(phrase), "linker under test: {test}");
    }
    // The place in the script, as rivet's other script errors give it.
    assert!(test.contains("ov.ld:3:12: "), "{test}");
}

/// The `.text` bytes of linking `args` in `dir` with `ld`, or `None` where it fails.
fn linked_text(dir: &Path, ld: &str, args: &[&str]) -> Option<Vec<u8>> {
    let mut args = args.to_vec();
    args.extend(["-o", "st.out"]);
    if !common::tool(ld, &args, Some(dir)).success() {
        return None;
    }
    common::tool_ok(
        "objcopy",
        &["-O", "binary", "-j", ".text", "st.out", "st.bin"],
        dir,
    );
    Some(std::fs::read(dir.join("st.bin")).unwrap())
}

/// Where GNU ld and the linker under test differ in `.text`'s bytes (or one fails) linking `args` in `dir`.
fn text_differs(dir: &Path, args: &[&str]) -> Option<String> {
    let (linker, _) = common::linker_under_test();
    let gnu = linked_text(dir, "ld.bfd", args);
    let test = linked_text(dir, linker.to_str().unwrap(), args);
    (gnu != test).then(|| format!("{args:?}: GNU ld {gnu:02x?}, linker under test {test:02x?}"))
}

/// Links `inputs` (in `dir`) with each of `statements` as `.text`'s body, by GNU ld and by the linker under test;
/// the statements whose `.text` bytes differ, or that one linker refuses and the other does not.
fn text_bytes_differ(dir: &Path, inputs: &[&str], statements: &[&str]) -> Vec<String> {
    let mut diffs = Vec::new();
    for st in statements {
        std::fs::write(
            dir.join("st.ld"),
            format!("SECTIONS {{ .text 0x1000 : {{ {st} }} }}\n"),
        )
        .unwrap();
        let mut args = vec!["-T", "st.ld"];
        args.extend(inputs);
        diffs.extend(text_differs(dir, &args).map(|d| format!("{st}: {d}")));
    }
    diffs
}

/// Objects whose `.text` is one byte naming the file (`a0` for `a.o`), some with a `.text.x` too (`a1`), and an
/// archive `libm.a` holding `d.o` and another `a.o`; given out of name order.
fn named_objects(dir: &Path) {
    let sources = [
        (
            "b",
            ".globl _start\n.text\n_start: .byte 0xb0\n.section .text.x,\"ax\"\n.byte 0xb1\n",
        ),
        (
            "a",
            ".text\n.byte 0xa0\n.section .text.x,\"ax\"\n.p2align 3\n.byte 0xa1\n",
        ),
        ("c", ".text\n.byte 0xc0\n"),
        ("d", ".text\n.byte 0xd0\n"),
    ];
    for (name, src) in sources {
        std::fs::write(dir.join(format!("{name}.s")), src).unwrap();
        common::tool_ok(
            "as",
            &[&format!("{name}.s"), "-o", &format!("{name}.o")],
            dir,
        );
    }
    std::fs::create_dir_all(dir.join("m")).unwrap();
    common::tool_ok("as", &["a.s", "-o", "m/a.o"], dir);
    common::tool_ok("ar", &["rcs", "libm.a", "d.o", "m/a.o"], dir);
}

/// `SORT(*)(...)` and `SORT_BY_NAME(*)(...)` sort a statement's sections by their files' names (a member by its
/// archive's path, then its name), then by the section sort within each file; `SORT_NONE(*)` sorts nothing; the
/// other sorts, a nested sort and a sorted file pattern without sections are GNU ld's syntax errors.
#[test]
fn file_name_sorts_match_gnu_ld() {
    let Some((dir, _, _)) =
        common::against_gnu_ld("script-gnu-file-sort", &["as", "ar", "objcopy"])
    else {
        return;
    };
    named_objects(&dir);
    let statements = [
        "SORT(*)(.text)",
        "SORT_BY_NAME(*)(.text)",
        "SORT_NONE(*)(.text)",
        "SORT(*)(SORT(.text*))",
        "SORT(*)(SORT_BY_ALIGNMENT(.text*))",
        "SORT(*)(SORT(.text.x) .text)",
        "*(.text) SORT(*)(.text.x)",
        "KEEP(SORT(*)(.text))",
        "SORT(EXCLUDE_FILE(b.o) *)(.text)",
        "SORT_BY_NAME(*.o)(.text)",
        "SORT_BY_ALIGNMENT(*)(.text)",
        "SORT_BY_INIT_PRIORITY(*)(.text)",
        "SORT(SORT(*))(.text)",
        "SORT(*)",
    ];
    let mut diffs = text_bytes_differ(&dir, &["./c.o", "b.o", "a.o"], &statements);
    let members = [
        "--whole-archive",
        "libm.a",
        "--no-whole-archive",
        "c.o",
        "b.o",
        "a.o",
    ];
    diffs.extend(text_bytes_differ(&dir, &members, &statements[..3]));
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `archive:member`, `archive:` (every member) and `:file` (a file in no archive) patterns, in statements and in
/// `EXCLUDE_FILE`; a name without wildcards takes the object so named or every member of the archive so named, not
/// a member by its own name; an `EXCLUDE_FILE` name without `:` excludes a member by its archive's name too.
#[test]
fn archive_member_patterns_match_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-members", &["as", "ar", "objcopy"])
    else {
        return;
    };
    named_objects(&dir);
    let statements = [
        ":a.o(.text) *(.text)",
        ":*(.text) *(.text)",
        "KEEP(:a.o(.text)) *(.text)",
        "libm.a:(.text) *(.text)",
        "*:(.text) *(.text)",
        "libm.a:a.o(.text) *(.text)",
        "*libm.a:a.o *(.text)",
        "a.o(.text) *(.text)",
        "*a.o(.text) *(.text)",
        "libm.a(.text) *(.text)",
        "EXCLUDE_FILE(:a.o) *(.text) *(.text)",
        "EXCLUDE_FILE(c.o :*) *(.text) *(.text)",
        "EXCLUDE_FILE(*:) *(.text) *(.text)",
        "EXCLUDE_FILE(*libm.a) *(.text) *(.text)",
        "EXCLUDE_FILE(libm.a) *(.text) *(.text)",
        "*(EXCLUDE_FILE(libm.a) .text) *(.text)",
        "*(EXCLUDE_FILE(:a.o) .text) *(.text)",
    ];
    let members = [
        "--whole-archive",
        "libm.a",
        "--no-whole-archive",
        "c.o",
        "a.o",
    ];
    let diffs = text_bytes_differ(&dir, &members, &statements);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `STARTUP(file)` in a `-T` script makes the file the link's first input, wherever the script is on the command
/// line, found as named or on the search path; a file not found is an error, and so is a second `STARTUP`. In a
/// script named as an input file it comes too late and GNU ld ignores it.
#[test]
fn startup_matches_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-startup", &["as", "ar", "objcopy"])
    else {
        return;
    };
    named_objects(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::copy(dir.join("c.o"), dir.join("sub/cs.o")).unwrap();
    let sections = "SECTIONS { .text 0x1000 : { *(.text) } }\n";
    for (name, text) in [
        ("startup.ld", format!("STARTUP(c.o)\n{sections}")),
        ("searched.ld", format!("STARTUP(cs.o)\n{sections}")),
        ("missing.ld", format!("STARTUP(nope.o)\n{sections}")),
        (
            "twice.ld",
            format!("STARTUP(c.o)\nSTARTUP(a.o)\n{sections}"),
        ),
        ("archive.ld", format!("STARTUP(libm.a)\n{sections}")),
        ("input.ld", "STARTUP(c.o)\n".to_string()),
        ("input-twice.ld", "STARTUP(c.o)\nSTARTUP(a.o)\n".to_string()),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let links: [&[&str]; 9] = [
        &["-T", "startup.ld", "b.o", "a.o"],
        &["b.o", "-T", "startup.ld", "a.o"],
        &["-Lsub", "-T", "searched.ld", "b.o"],
        &["-T", "searched.ld", "-Lsub", "b.o"],
        &["-T", "missing.ld", "b.o"],
        &["-T", "twice.ld", "b.o"],
        &["-T", "archive.ld", "b.o"],
        &["-T", "st.ld", "b.o", "a.o", "input.ld"],
        &["-T", "st.ld", "b.o", "input-twice.ld"],
    ];
    std::fs::write(dir.join("st.ld"), sections).unwrap();
    let diffs: Vec<String> = links.iter().filter_map(|a| text_differs(&dir, a)).collect();
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// What GNU ld's grammar and lexer take and refuse around assignments: each needs a `;` or `,` after it (in
/// `SECTIONS` and in an output section too, before `}`), a `PROVIDE(...)` in an output section a `;`, an `ASSERT`
/// there a separator; a target or operator written against its neighbour is one name to GNU ld (`pv=1`,
/// `x+=1`, `x /=2`, in an output section `. =ALIGN(8)` too), while `x =1`, `x*=2` and `x&=2` outside one are
/// assignments. Both linkers must link or both fail, with the same symbols.
#[test]
fn assignment_syntax_matches_gnu_ld() {
    let text = ".text 0x1000 : { *(.text) ";
    let scripts = [
        format!("SECTIONS {{ {text} x = 1 }} }}"),
        format!("SECTIONS {{ {text} x = 1; }} }}"),
        format!("SECTIONS {{ {text} x = 1, }} }}"),
        format!("SECTIONS {{ {text} }} x = 1 }}"),
        format!("SECTIONS {{ {text} }} x = 1, }}"),
        format!("x = 1, y = 2; SECTIONS {{ {text} }} }}"),
        format!("SECTIONS {{ pv=1; {text} }} }}"),
        format!("SECTIONS {{ pv= 1; {text} }} }}"),
        format!("SECTIONS {{ pv =1; {text} }} }}"),
        format!("pv=1; SECTIONS {{ {text} }} }}"),
        format!("SECTIONS {{ {text} pv=1; }} }}"),
        format!("SECTIONS {{ .=0x2000; {text} }} }}"),
        format!("SECTIONS {{ . =0x2000; {text} }} }}"),
        format!("x = 4; SECTIONS {{ x+=2; {text} }} }}"),
        format!("x = 4; SECTIONS {{ x*=2; {text} }} }}"),
        format!("x = 4; SECTIONS {{ x&=6; {text} }} }}"),
        format!("x = 4; SECTIONS {{ x /=2; {text} }} }}"),
        format!("x = 4; SECTIONS {{ {text} x -=1; }} }}"),
        format!("x = 4; SECTIONS {{ {text} x -= 1; }} }}"),
        format!("SECTIONS {{ {text} . =ALIGN(8); }} }}"),
        format!("SECTIONS {{ {text} PROVIDE(x = 1); }} }}"),
        format!("SECTIONS {{ {text} PROVIDE(x = 1), }} }}"),
        format!("SECTIONS {{ {text} PROVIDE(x =1); }} }}"),
        format!("SECTIONS {{ PROVIDE(x = 1), {text} }} }}"),
        format!("SECTIONS {{ PROVIDE(pv=1); {text} }} }}"),
        format!("PROVIDE(x = 1) SECTIONS {{ {text} }} }}"),
        format!("SECTIONS {{ {text} ASSERT(1, \"a\") }} }}"),
        format!("SECTIONS {{ {text} ASSERT(1, \"a\"), }} }}"),
        format!("SECTIONS {{ ASSERT(1, \"a\") {text} }} }}"),
    ];
    let names: Vec<String> = (0..scripts.len()).map(|k| format!("assign-{k}")).collect();
    let cases: Vec<Case> = (scripts.iter().zip(&names))
        .map(|(script, name)| Case {
            name,
            asm: ".globl _start\n.text\n_start: ret\n.data\n.quad 1\n",
            script,
            args: &[],
            symbols: &["x", "y", "pv"],
            more: &[],
        })
        .collect();
    check(&cases);
}

/// A fill pattern of several bytes (`=0x11223344`, `FILL(...)`) starts at its first byte in each gap (the
/// padding before an aligned input section, space the location counter skipped), as GNU ld writes it, not at the
/// phase of the gap's address. Compared byte for byte.
#[test]
fn multibyte_fills_start_each_gap_as_in_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-fill-gaps", &["as", "objcopy"])
    else {
        return;
    };
    std::fs::write(
        dir.join("f.s"),
        ".globl _start\n.text\n_start: .byte 1\n.section .text.b,\"ax\"\n.p2align 4\n.byte 2\n\
         .section .text.c,\"ax\"\n.p2align 3\n.byte 3\n",
    )
    .unwrap();
    common::tool_ok("as", &["f.s", "-o", "f.o"], &dir);
    let scripts = [
        "SECTIONS { .text 0x1000 : { *(.text) *(.text.b) *(.text.c) } =0x11223344 }",
        "SECTIONS { .text 0x1001 : { *(.text) . = ALIGN(8); *(.text.c) } =0xaabbccdd }",
        "SECTIONS { .text 0x1000 : { *(.text) FILL(0x11223344) . += 5; *(.text.b) } }",
        "SECTIONS { .text 0x1003 : { BYTE(9) FILL(0x55667788) . += 6; BYTE(8) *(.text.c) } }",
        "SECTIONS { .text 0x1000 : { *(.text) . += 3; FILL(0x1122) . += 3; *(.text.b) } =0xa1b2c3 }",
    ];
    let mut diffs = Vec::new();
    for (k, script) in scripts.iter().enumerate() {
        let name = format!("fill{k}.ld");
        std::fs::write(dir.join(&name), script).unwrap();
        diffs.extend(text_differs(&dir, &["-T", &name, "f.o"]));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `ORIGIN(NOPE)` and `LENGTH(NOPE)` of a region `MEMORY` does not declare: GNU ld warns ("memory region `NOPE'
/// not declared") and makes the region, at 0 and unbounded (`LENGTH` all ones); a section without a region is
/// then an error, as with any `MEMORY`.
#[test]
fn undeclared_region_functions_match_gnu_ld() {
    let scripts = [
        "SECTIONS { .text 0x1000 : { *(.text) } x = ORIGIN(NOPE); y = LENGTH(NOPE); }",
        "x = ORIGIN(NOPE); SECTIONS { .text 0x1000 : { *(.text) LONG(LENGTH(NOPE)) } }",
        "MEMORY { R : ORIGIN = 0x1000, LENGTH = 4K }\nSECTIONS { .text : { *(.text) } >R\n  \
         x = ORIGIN(NOPE) + LENGTH(R); }",
        "SECTIONS { . = ORIGIN(NOPE) + 0x1000; .text : { *(.text) } }",
    ];
    let names = ["nope-0", "nope-1", "nope-2", "nope-3"];
    let cases: Vec<Case> = (scripts.iter().zip(names))
        .map(|(script, name)| Case {
            name,
            asm: ".globl _start\n.text\n_start: ret\n",
            script,
            args: &[],
            symbols: &["x", "y"],
            more: &[],
        })
        .collect();
    check(&cases);
    let Some((dir, _, _)) = common::against_gnu_ld("script-gnu-nope-warning", &["as"]) else {
        return;
    };
    let (linker, overridden) = common::linker_under_test();
    std::fs::write(dir.join("a.s"), ".globl _start\n.text\n_start: ret\n").unwrap();
    std::fs::write(dir.join("n.ld"), scripts[0]).unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let o = common::tool(
        linker.to_str().unwrap(),
        &["-T", "n.ld", "a.o", "-o", "n.out"],
        Some(&dir),
    );
    assert!(o.success(), "{}", o.log());
    let warning = "memory region `NOPE' not declared";
    assert!(o.stderr_str().contains(warning), "{}", o.log());
    if !overridden {
        assert!(o.stderr_str().contains("n.ld:1:40: "), "{}", o.log());
    }
}

/// Code, read-only data, data, zero-fill and commons, and a program that prints "hi" and exits with 5, for the
/// cases of two output sections of one name.
const TWO_OF_A_NAME_ASM: &str = ".globl _start\n.section .text.a,\"ax\"\n\
    _start: lea msg(%rip),%rsi; mov $1,%edi; mov $3,%edx; mov $1,%eax; syscall; call fin\n\
    .section .text.b,\"ax\"\nfin: mov $60,%eax; mov cnt(%rip),%edi; syscall\n\
    .section .zcode,\"ax\"\nret\n.section .x,\"aw\"\n.quad 7\n.section .data,\"aw\"\ncnt: .long 5\n\
    .section .rodata,\"a\"\nmsg: .ascii \"hi\\n\"\n.section .ro1,\"a\"\n.quad 2\n\
    .section .rw1,\"aw\"\n.quad 3\n.comm cm,16,8\n.section .bss2,\"aw\",@nobits\n.zero 4\n";

/// Two output section descriptions of one name make two output sections, each in its place with its own
/// inputs; `ADDR` and `SIZEOF` name the first kept one; an orphan of the name joins the first, a code orphan goes
/// after the first `.text`, a zero-fill one after the first `.bss`, and `*(COMMON)` in the second `.bss` puts the
/// commons there.
#[test]
fn two_descriptions_of_one_name_match_gnu_ld() {
    let syms: &[&str] = &["_start", "fin", "a1", "s1", "a2", "s2", "ax", "cm"];
    check(&[
        Case {
            name: "two-texts",
            asm: TWO_OF_A_NAME_ASM,
            script: "SECTIONS {\n  . = 0x400000;\n  .text : { *(.text.a) }\n  .rodata : { *(.rodata) }\n  \
                     .text : { *(.text.b) }\n  . = ALIGN(0x1000);\n  .x : { *(.data) }\n  \
                     .x : { *(.nothing) LONG(1) }\n  .bss : { *(.bss) }\n  .bss : { *(COMMON) }\n  \
                     a1 = ADDR(.text);\n  \
                     s1 = SIZEOF(.text);\n  a2 = ADDR(.bss);\n  s2 = SIZEOF(.bss);\n  ax = ADDR(.x);\n}\n",
            args: &[],
            symbols: syms,
            more: &[],
        },
        Case {
            name: "two-texts-apart",
            asm: TWO_OF_A_NAME_ASM,
            script: "SECTIONS {\n  . = 0x400000;\n  .text : { *(.text.b) }\n  .data : { *(.data) }\n  \
                     .text ALIGN(0x100) : { *(.text.a) LONG(SIZEOF(.text)) }\n  a1 = ADDR(.text);\n  \
                     s1 = SIZEOF(.text);\n}\n",
            args: &[],
            symbols: syms,
            more: &[],
        },
    ]);
}

/// `ONLY_IF_RO` and `ONLY_IF_RW` descriptions of one name, by GNU ld's rule: each decided in script order over
/// the sections it would take (not those an earlier statement took), `ONLY_IF_RO` kept when all are read-only
/// (or none), `ONLY_IF_RW` when one is writable; both kept make two sections, a dropped one makes none and leaves
/// its sections to the statements after it, and `ADDR` names the first kept.
#[test]
fn only_if_descriptions_of_one_name_match_gnu_ld() {
    let syms: &[&str] = &["_start", "ax", "sx"];
    let case = |name, script| Case {
        name,
        asm: TWO_OF_A_NAME_ASM,
        script,
        args: &[],
        symbols: syms,
        more: &[],
    };
    let tail = "  ax = ADDR(.x);\n  sx = SIZEOF(.x);\n}\n";
    let both = format!(
        "SECTIONS {{\n  . = 0x400000;\n  .text : {{ *(.text.*) }}\n  .x : ONLY_IF_RO {{ *(.ro1) }}\n  \
         .data : {{ *(.data) }}\n  .x : ONLY_IF_RW {{ *(.rw1) }}\n{tail}"
    );
    let ro_fails = format!(
        "SECTIONS {{\n  . = 0x400000;\n  .text : {{ *(.text.*) }}\n  .x : ONLY_IF_RO {{ *(.ro1) *(.rw1) }}\n  \
         .data : {{ *(.data) }}\n  .x : ONLY_IF_RW {{ *(.ro1) *(.rw1) }}\n{tail}"
    );
    let rw_fails = format!(
        "SECTIONS {{\n  . = 0x400000;\n  .text : {{ *(.text.*) }}\n  .x : ONLY_IF_RW {{ *(.ro1) }}\n  \
         .data : {{ *(.data) }}\n  .x : ONLY_IF_RO {{ *(.ro1) }}\n  .y : {{ *(.rw1) }}\n{tail}"
    );
    let taken_before = format!(
        "SECTIONS {{\n  . = 0x400000;\n  .text : {{ *(.text.*) }}\n  .w : {{ *(.rw1) }}\n  \
         .x : ONLY_IF_RO {{ *(.ro1) *(.rw1) }}\n  .data : {{ *(.data) }}\n  .x : ONLY_IF_RW {{ *(.data*) }}\n  \
         .x : ONLY_IF_RW {{ *(.x) }}\n{tail}"
    );
    let both_fail = "SECTIONS {\n  . = 0x400000;\n  .text : { *(.text.*) }\n  .x : ONLY_IF_RW { *(.ro1) }\n  \
                     .x : ONLY_IF_RO { *(.rw1) }\n  .data : { *(.data) }\n}\n";
    check(&[
        case("only-if-both", &both),
        case("only-if-ro-fails", &ro_fails),
        case("only-if-rw-fails", &rw_fails),
        case("only-if-taken-before", &taken_before),
        case("only-if-both-fail", both_fail),
    ]);
}

/// A program whose code is split over two `.text` sections with `.rodata` between runs: it prints "hi" and
/// exits with 5 (what GNU ld's output does), so each section's inputs are where its references put them.
#[test]
fn two_text_sections_run() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-two-texts-run", &["as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("a.s"), TWO_OF_A_NAME_ASM).unwrap();
    std::fs::write(
        dir.join("link.ld"),
        "SECTIONS {\n  . = 0x400000;\n  .text : { *(.text.a) }\n  .rodata : { *(.rodata) }\n  \
         .text : { *(.text.b) }\n  . = ALIGN(0x1000);\n  .data : { *(.data) }\n}\n",
    )
    .unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let args = ["-T", "link.ld", "a.o", "-o", "out"];
    let o = common::tool(linker.to_str().unwrap(), &args, Some(&dir));
    assert!(o.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::process::Command::new(dir.join("out"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(5));
    assert_eq!(run.stdout, b"hi\n");
}

/// A symbol defined in an output section the script's link drops (empty) is listed in `.symtab` in a neighbouring
/// section, as GNU ld moves it, never as undefined (`SHN_UNDEF` made `nm` and debuggers take it for a reference).
#[test]
fn symbols_of_a_dropped_section_stay_defined() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-dropped-symbols", &["as", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let asm = ".section .mysec,\"aw\"\n.globl in_empty\nin_empty:\n\
        .text\n.globl _start\n_start: movq $in_empty, %rax\nret\n\
        .section .note.GNU-stack,\"\",@progbits\n";
    std::fs::write(dir.join("e.s"), asm).unwrap();
    std::fs::write(
        dir.join("e.ld"),
        "SECTIONS { .text 0x401000 : { *(.text) } .mysec : { *(.mysec) } .data : { *(.data) } }\n",
    )
    .unwrap();
    common::tool_ok("as", &["e.s", "-o", "e.o"], &dir);
    let entry = |ld: &str, out: &str| {
        let o = common::tool(ld, &["-T", "e.ld", "e.o", "-o", out], Some(&dir));
        assert!(o.success(), "{}", o.log());
        let s = common::tool_ok("readelf", &["-sW", out], &dir);
        let line = s
            .lines()
            .find(|l| l.ends_with(" in_empty"))
            .unwrap()
            .to_string();
        common::squash_ws(line.split_once(':').unwrap().1.trim())
    };
    assert_eq!(
        entry(linker.to_str().unwrap(), "test"),
        entry("ld.bfd", "gnu")
    );
}

/// A file an input section description names without wildcards (`crt0.o(.text)`) that no input is named as is
/// loaded, from the current directory or the search path, as GNU ld loads it; missing, it is an error in both.
#[test]
fn files_a_script_names_are_loaded_as_gnu_ld_loads_them() {
    let Some((dir, _, _)) = common::against_gnu_ld("script-named-files", &["as", "nm"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("crt0.s"),
        ".text\n.globl _start\n_start: call main\nmov $60, %eax\nsyscall\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("m.s"),
        ".text\n.globl main\nmain: xor %edi, %edi\nret\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("s.ld"),
        "SECTIONS { .text 0x400000 : { crt0.o(.text) *(.text) } }\n",
    )
    .unwrap();
    common::tool_ok("as", &["m.s", "-o", "m.o"], &dir);
    common::tool_ok("as", &["crt0.s", "-o", "lib/crt0.o"], &dir);
    let link = |ld: &str, out: &str, extra: &[&str]| {
        let args = [&["-T", "s.ld", "m.o", "-o", out][..], extra].concat();
        let o = common::tool(ld, &args, Some(&dir));
        o.success()
            .then(|| common::tool_ok("nm", &["-n", out], &dir))
    };
    let rivet = linker.to_str().unwrap();
    // Missing: both fail.
    assert_eq!(link(rivet, "r0", &[]), None);
    assert_eq!(link("ld.bfd", "g0", &[]), None);
    // On the search path, then in the current directory: crt0.o's code first, as its description says.
    for extra in [&["-Llib"][..], &[]] {
        if extra.is_empty() {
            std::fs::rename(dir.join("lib/crt0.o"), dir.join("crt0.o")).unwrap();
        }
        let (r, g) = (link(rivet, "r", extra), link("ld.bfd", "g", extra));
        assert!(
            g.as_deref().is_some_and(|g| g.contains("400000 T _start")),
            "{g:?}"
        );
        assert_eq!(r, g, "{extra:?}");
        let run = std::process::Command::new(dir.join("r")).status().unwrap();
        assert_eq!(run.code(), Some(0));
    }
}
