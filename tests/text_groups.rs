//! `.text`'s inputs in GNU ld's groups: its default script places `.text.unlikely` (and `.text.*_unlikely`),
//! `.text.exit`, `.text.startup`, `.text.hot` and `SORT(.text.sorted.*)` before the rest, each group in input
//! order across all files (also under an `INSERT` script, which goes into the default layout), so that gcc's cold code (`cold` functions, the split-off cold parts) is out of the way
//! and start-up and hot code share pages. Without the groups rivet kept input order, and gcc -O2's `main` (in
//! `.text.startup`) landed among the other functions. The functions' order (`nm -n`) must be GNU ld's, with and
//! without `-ffunction-sections`, and the programs run.

mod common;

use std::path::Path;

const A: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((cold, noinline)) void a_cold(const char *why) { fprintf(stderr, "%s\n", why); abort(); }
__attribute__((hot, noinline)) int a_hot(int x) { return x * 7 + 1; }
__attribute__((noinline)) int a_plain(int x) { if (x > 1000) a_cold("a"); return a_hot(x) - 1; }
static int total;
__attribute__((destructor)) static void a_fini(void) { if (total != 42) abort(); }
int b_plain(int);
int main(int argc, char **argv) {
    (void)argv;
    total = a_plain(argc + 4) + b_plain(argc) + 4;
    printf("%d\n", total);
    return total == 42 ? 0 : 1;
}
"#;

const B: &str = r#"
#include <stdlib.h>
__attribute__((cold, noinline)) void b_cold(void) { abort(); }
__attribute__((hot, noinline)) int b_hot(int x) { return x + 1; }
int b_plain(int x) { if (x > 1000) b_cold(); return b_hot(x) + 1; }
"#;

/// Sections of the other names, by hand: a `_unlikely` suffix, and sorted ones named against input order.
const C: &str = "\t.section .text.c_unlikely,\"ax\",@progbits\n\t.globl c_suffix_unlikely\n\
    c_suffix_unlikely:\n\tret\n\
    \t.section .text.sorted.2,\"ax\",@progbits\n\t.globl c_sorted_2\nc_sorted_2:\n\tret\n\
    \t.section .text.sorted.1,\"ax\",@progbits\n\t.globl c_sorted_1\nc_sorted_1:\n\tret\n\
    \t.section .text.exit,\"ax\",@progbits\n\t.globl c_exit\nc_exit:\n\tret\n\
    \t.section .text.hot.c,\"ax\",@progbits\n\t.globl c_hot\nc_hot:\n\tret\n\
    \t.text\n\t.globl c_plain\nc_plain:\n\tret\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

/// The functions of `.text` in address order.
fn text_order(dir: &Path, exe: &str) -> Vec<String> {
    let nm = common::tool_ok("nm", &["-n", exe], dir);
    nm.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && matches!(f[1], "T" | "t") && !f[2].starts_with('_'))
                .then(|| f[2].to_string())
        })
        .collect()
}

#[test]
fn text_groups_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("text-groups", &["gcc", "nm"]) else {
        return;
    };
    std::fs::write(dir.join("a.c"), A).unwrap();
    std::fs::write(dir.join("b.c"), B).unwrap();
    std::fs::write(dir.join("c.s"), C).unwrap();
    common::tool_ok("gcc", &["-c", "c.s", "-o", "c.o"], &dir);
    std::fs::write(
        dir.join("insert.lds"),
        "SECTIONS { .mine : { *(.mine) } } INSERT AFTER .data;\n",
    )
    .unwrap();
    for (sections, insert) in [(false, false), (true, false), (true, true)] {
        let mut flags = vec!["-O2", "-c"];
        if sections {
            flags.push("-ffunction-sections");
        }
        for src in ["a", "b"] {
            let (c, o) = (format!("{src}.c"), format!("{src}.o"));
            common::tool_ok("gcc", &[flags.as_slice(), &[&c, "-o", &o]].concat(), &dir);
        }
        let mut orders = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("groups-{side}-{sections}-{insert}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![&b[..], "-o", &exe, "a.o", "b.o", "c.o"];
            if insert {
                args.push("-Wl,-T,insert.lds");
            }
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{side}: {}", o.log());
            let run = std::process::Command::new(dir.join(&exe)).output().unwrap();
            assert!(run.status.success(), "{exe}: {run:?}");
            orders.push(text_order(&dir, &exe));
        }
        assert!(orders[0].iter().any(|f| f == "main"), "{:?}", orders[0]);
        assert_eq!(
            orders[1], orders[0],
            "function order (-ffunction-sections: {sections}, INSERT: {insert}): rivet, then GNU ld"
        );
    }
}
