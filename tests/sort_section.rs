//! `--sort-section=name|alignment` (busybox links with `--sort-section=alignment` when the linker takes it): GNU
//! ld sorts the input sections of every wildcard statement that does not sort, by name or by alignment (largest
//! first), stably; a statement that sorts by name sorts by name then alignment under `alignment`, and one by
//! alignment by alignment then name under `name`. In the default layout that is GNU's default script's statements
//! (`.text`'s groups, `.text.sorted.*` by name first); with a script, its own. Compared with GNU ld: the order of
//! the program's functions and data in the output, and its output.

mod common;

use std::path::Path;

const A_C: &str = r#"#include <stdio.h>
int zeta_data = 1;
long alpha_data __attribute__((aligned(32))) = 2;
static const char beta_ro[] __attribute__((aligned(16))) = "beta";
const char gamma_ro[] = "gamma";
int *const local_ptr = &zeta_data;
__attribute__((noinline)) int zz_func(int x) { return x + 1; }
__attribute__((noinline, aligned(64))) int aa_func(int x) { return x * 2; }
__attribute__((noinline, cold)) int cold_b(int x) { return x - 3; }
__attribute__((noinline, hot)) int hot_b(int x) { return x ^ 3; }
int mm_func(int);
int use(void);
extern int gamma_data;
int main(void) {
    printf("%d %ld %s %s %d %d %d %d %d %d %d\n", zeta_data, alpha_data, beta_ro, gamma_ro, *local_ptr, zz_func(1),
           aa_func(2), cold_b(3), hot_b(4), mm_func(5) + gamma_data, use());
    return 0;
}
"#;

const B_C: &str = r#"int gamma_data __attribute__((aligned(8))) = 3;
char a_small = 1;
static int bb_counter;
static long bb_big[4] __attribute__((aligned(64)));
__attribute__((noinline, aligned(32))) int mm_func(int x) { bb_big[1] = x; return x + ++bb_counter; }
__attribute__((noinline)) int ab_func(int x) { return x * 7 + (int)bb_big[1]; }
__attribute__((noinline, cold)) int cold_a(int x) { return x - 1; }
int use(void) { return ab_func(a_small) + cold_a(2); }
"#;

const NAMES: &[&str] = &[
    "zeta_data",
    "alpha_data",
    "beta_ro",
    "gamma_ro",
    "local_ptr",
    "zz_func",
    "aa_func",
    "cold_b",
    "hot_b",
    "main",
    "gamma_data",
    "a_small",
    "bb_counter",
    "bb_big",
    "mm_func",
    "ab_func",
    "cold_a",
    "use",
];

/// The program's own symbols in address order.
fn order(dir: &Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("nm", &["-n", exe], dir);
    (out.lines())
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| NAMES.contains(n))
        .map(str::to_string)
        .collect()
}

#[test]
fn sections_sorted_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("sort-section", &["gcc", "nm"]) else {
        return;
    };
    std::fs::write(dir.join("a.c"), A_C).unwrap();
    std::fs::write(dir.join("b.c"), B_C).unwrap();
    for kind in ["-no-pie", "-pie"] {
        let pic = if kind == "-pie" { "-fpie" } else { "-fno-pie" };
        common::tool_ok(
            "gcc",
            &[
                "-O2",
                "-ffunction-sections",
                "-fdata-sections",
                pic,
                "-c",
                "a.c",
                "b.c",
            ],
            &dir,
        );
        // GNU's default script, and a script whose statements sort themselves: `.text.*` by alignment, `.data.*`
        // by name.
        let gnu = common::gnu_default_script(&[kind], &dir);
        std::fs::write(dir.join("gnu.ld"), &gnu).unwrap();
        let own = gnu
            .replace(
                "*(.text .stub .text.* .gnu.linkonce.t.*)",
                "*(SORT_BY_ALIGNMENT(.text.*)) *(.text .stub .gnu.linkonce.t.*)",
            )
            .replace(
                "*(.data .data.* .gnu.linkonce.d.*)",
                "*(SORT_BY_NAME(.data.*)) *(.data .gnu.linkonce.d.*)",
            );
        assert_ne!(own, gnu, "GNU ld's default script changed its statements");
        std::fs::write(dir.join("own.ld"), own).unwrap();
        let mut plain = None;
        for script in [None, Some("gnu.ld"), Some("own.ld")] {
            for by in ["name", "alignment"] {
                let case = format!("{kind} {script:?} --sort-section={by}");
                let mut outs = Vec::new();
                for (side, b) in [("ref", &bfd), ("test", &shim)] {
                    let exe = format!("x{side}");
                    let sort = format!("-Wl,--sort-section={by}");
                    let mut args = vec![format!("-B{}/", b.display()), kind.into(), sort];
                    if let Some(s) = script {
                        args.push(format!("-Wl,-T,{s}"));
                    }
                    args.extend(["a.o", "b.o", "-o"].map(String::from));
                    args.push(exe.clone());
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let o = common::tool("gcc", &args, Some(&dir));
                    assert!(
                        o.success(),
                        "{case}: {side}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    let run = common::tool_ok(&dir.join(&exe).display().to_string(), &[], &dir);
                    outs.push((order(&dir, &exe), run));
                }
                assert_eq!(outs[0], outs[1], "{case}");
                if script.is_none() && by == "alignment" {
                    plain.get_or_insert(outs[1].0.clone());
                }
            }
        }
        // The option changed something: the sorted order is not the plain link's.
        let o = common::tool(
            "gcc",
            &[
                &format!("-B{}/", shim.display()),
                kind,
                "a.o",
                "b.o",
                "-o",
                "xplain",
            ],
            Some(&dir),
        );
        assert!(o.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_ne!(Some(order(&dir, "xplain")), plain, "{kind}");
    }
}

/// What rivet refuses with the option: a script inserted into the default layout (its sections there are not
/// statements), a symbol ordering file (two orders of the same sections), and `-r`.
#[test]
fn sort_section_refusals() {
    let Some((linker, dir)) =
        common::rivet_only("sort-section-refusals", &["gcc"], "rivet's own errors")
    else {
        return;
    };
    std::fs::write(dir.join("b.c"), B_C).unwrap();
    common::tool_ok("gcc", &["-O2", "-c", "b.c"], &dir);
    std::fs::write(
        dir.join("ins.ld"),
        "SECTIONS { .extra : { *(.extra) } } INSERT AFTER .text;\n",
    )
    .unwrap();
    std::fs::write(dir.join("order.txt"), "use\n").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["-T", "ins.ld"], "--sort-section with INSERT"),
        (
            &["--symbol-ordering-file", "order.txt"],
            "may not be used together",
        ),
        (
            &["-r"],
            "--sort-section with -r (relocatable output) is not supported yet",
        ),
    ];
    for (extra, want) in cases {
        let o = std::process::Command::new(&linker)
            .args(["--sort-section=name", "b.o", "-o", "out", "-e", "use"])
            .args(*extra)
            .current_dir(&dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(want),
            "{extra:?}: {err}"
        );
    }
}
