//! Section header order as GNU ld's: a partial link's sections in the order of GNU ld's default `-r` script, its
//! orphans (group members, `.text.*`, `.rodata.*`, sections of other names, notes, TLS, non-allocated ones) each
//! after the script's section of its kind or the kind's previous orphan, debugging orphans last; and in final
//! links the non-allocated sections in the order of GNU ld's default script (`.comment`, the others right after
//! it, then DWARF's in the script's order, unknown debugging sections last).

mod common;

use std::path::Path;

const CXX: &str = r#"
#include <string>
#include <stdexcept>
thread_local int tl_init = 5;
thread_local int tl_zero;
static std::string global_s = "hello";
const int table[64] = {1, 2, 3};
int counter;
int data_value = 7;
inline int twice(int x) { if (x < 0) throw std::runtime_error("negative"); return 2 * x; }
int use(int x) {
    tl_zero += x;
    counter++;
    return twice(x) + table[x & 63] + tl_init + data_value + (int)global_s.size();
}
"#;

/// Sections of names no default script has, of every kind; `.debug_foo` is debugging information.
const ASM: &str = "\t.section .mydata,\"aw\"\n\t.quad 1\n\
    \t.section .myro,\"a\"\n\t.quad 2\n\
    \t.section .mynote,\"a\",@note\n\t.balign 4\n\t.long 4, 4, 1\n\t.asciz \"abc\"\n\
    \t.section .myinfo,\"\"\n\t.asciz \"info\"\n\
    \t.section .debug_foo,\"\"\n\t.byte 1\n\
    \t.section .tbss.x,\"awT\",@nobits\n\t.zero 8\n\
    \t.section .mytext,\"ax\"\n\tret\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

/// The section names of `obj`, in header order.
fn names(dir: &Path, obj: &str) -> Vec<String> {
    let s = common::tool_ok("readelf", &["-SW", obj], dir);
    (s.lines())
        .filter_map(|l| l.trim_start().strip_prefix('[')?.split_once(']'))
        .filter_map(|(_, rest)| rest.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "Name" && n.starts_with('.'))
        .collect()
}

#[test]
fn partial_link_order_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("header-order-r", &["g++", "gcc", "as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("x.cc"), CXX).unwrap();
    std::fs::write(dir.join("y.s"), ASM).unwrap();
    std::fs::write(dir.join("p.c"), "int pp(void) { return 0; }\n").unwrap();
    let sections = ["-ffunction-sections", "-fdata-sections"];
    let cxx = ["-g", "-O1", "-fcf-protection", "-c", "x.cc", "-o"];
    common::tool_ok("g++", &[&cxx[..], &["xs.o"], &sections].concat(), &dir);
    common::tool_ok("g++", &[&cxx[..], &["x.o"]].concat(), &dir);
    common::tool_ok("gcc", &["-fcf-protection", "-c", "p.c", "-o", "p.o"], &dir);
    common::tool_ok("as", &["y.s", "-o", "y.o"], &dir);
    for inputs in [
        &["xs.o", "y.o"][..],
        &["y.o", "xs.o"],
        &["x.o", "p.o"],
        &["p.o", "x.o", "y.o"],
    ] {
        common::tool_ok("ld.bfd", &[&["-r", "-o", "gnu.o"], inputs].concat(), &dir);
        let out = common::tool(
            linker.to_str().unwrap(),
            &[&["-r", "-o", "test.o"], inputs].concat(),
            Some(&dir),
        );
        assert!(out.success(), "{}", out.log());
        assert_eq!(names(&dir, "test.o"), names(&dir, "gnu.o"), "{inputs:?}");
    }
}

#[test]
fn unallocated_order_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("header-order-final", &["g++", "as"])
    else {
        return;
    };
    std::fs::write(dir.join("x.cc"), CXX).unwrap();
    std::fs::write(dir.join("y.s"), ASM).unwrap();
    std::fs::write(
        dir.join("m.cc"),
        "int use(int);\nint main() { return use(1) == 0; }\n",
    )
    .unwrap();
    for (flags, obj) in [(&["-gdwarf-4"][..], "x4.o"), (&["-gdwarf-5"], "x5.o")] {
        common::tool_ok(
            "g++",
            &[flags, &["-O1", "-c", "x.cc", "-o", obj]].concat(),
            &dir,
        );
    }
    common::tool_ok("g++", &["-g", "-c", "m.cc", "-o", "m.o"], &dir);
    common::tool_ok("as", &["y.s", "-o", "y.o"], &dir);
    let unallocated = |exe: &str| {
        let all = names(&dir, exe);
        let from = all.iter().position(|n| n == ".comment").unwrap();
        all[from..].to_vec()
    };
    for x in ["x4.o", "x5.o"] {
        for (b, exe) in [(&shim, "test"), (&bfd, "gnu")] {
            let b = format!("-B{}/", b.display());
            common::tool_ok("g++", &[&b, "m.o", x, "y.o", "-o", exe], &dir);
        }
        assert_eq!(unallocated("test"), unallocated("gnu"), "{x}");
    }
}

/// A kernel module's `-r -T` script (its statements and the orphans among them) and a script naming `.text`
/// and `.data` only: sections in GNU ld's order.
#[test]
fn partial_link_with_script_order_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("header-order-rT", &["gcc", "as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let module = "#include <stddef.h>\nstatic const char msg[] = \"hello %d\\n\";\nint counter = 3;\nint zero;\n\
        static int helper(int x) { return x * 2; }\n\
        __attribute__((cold)) int cold_path(int x) { return helper(x) + 1; }\n\
        int mod_init(void) { return helper(counter) + zero + msg[0]; }\n\
        const int tbl[4] __attribute__((section(\"___ksymtab+mod_init\"))) = {1, 2, 3, 4};\n\
        int jt[2] __attribute__((section(\"__jump_table\"))) = {1, 2};\n\
        static void ctor(void) {}\n\
        void (*const ctor_p)(void) __attribute__((section(\".init_array\"), used)) = ctor;\n";
    std::fs::write(dir.join("m.c"), module).unwrap();
    std::fs::write(dir.join("y.s"), ASM).unwrap();
    common::tool_ok("gcc", &["-O2", "-g", "-fcf-protection", "-c", "m.c"], &dir);
    common::tool_ok("as", &["y.s", "-o", "y.o"], &dir);
    let scripts = [
        (
            "module.lds",
            "SECTIONS {\n/DISCARD/ : { *(.discard) *(.discard.*) }\n\
             __ksymtab 0 : { *(SORT(___ksymtab+*)) }\n\
             .init_array 0 : ALIGN(8) { *(SORT(.init_array.*)) *(.init_array) }\n\
             __jump_table 0 : ALIGN(8) { KEEP(*(__jump_table)) }\n}\n",
        ),
        (
            "two.lds",
            "SECTIONS { .text 0 : { *(.text) } .data 0 : { *(.data) } }\n",
        ),
    ];
    for (name, text) in scripts {
        std::fs::write(dir.join(name), text).unwrap();
        for inputs in [&["m.o"][..], &["m.o", "y.o"]] {
            let args = [&["-r", "-T", name][..], inputs].concat();
            common::tool_ok("ld.bfd", &[&args[..], &["-o", "gnu.o"]].concat(), &dir);
            let out = common::tool(
                linker.to_str().unwrap(),
                &[&args[..], &["-o", "test.o"]].concat(),
                Some(&dir),
            );
            assert!(out.success(), "{}", out.log());
            assert_eq!(
                names(&dir, "test.o"),
                names(&dir, "gnu.o"),
                "{name} {inputs:?}"
            );
        }
    }
}
