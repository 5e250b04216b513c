//! String tail merging, as GNU ld does it for the strings a program loads: a string that ends another (`"world"` in
//! `"hello world"`, each with its terminator) takes no space of its own, in groups of any character size and
//! alignment (a suffix must start on the group's alignment). U-Boot's SPL, whose size boards limit, had a `.rodata`
//! 106 bytes larger than GNU ld's for want of it. rivet does it under a script and at `-O2` (lld's option for it),
//! not in its own default layout (as lld and mold, for its cost on large links).
//!
//! Programs from gcc and clang-19 with strings that end others (bytes and `char16_t`), linked by GNU ld and by the
//! linker under test as PIE and not, with GNU ld's default script given as `-T` and with `-O2`: `.rodata` has GNU
//! ld's size, and the programs print what GNU ld's print. Without either, rivet keeps every string whole.

mod common;

const SOURCE: &str = r#"
#include <stdio.h>
#include <uchar.h>
const char *a = "hello world";
const char *b = "world";
const char *c = "orld";
const char *d = "unrelated";
const char *e = "the same tail";
const char *f = "tail";
const char *g = "ail";
const char16_t *w1 = u"wide tail";
const char16_t *w2 = u"tail";
const char16_t *w3 = u"il";
static void wide(const char16_t *p) {
    for (; *p; p++)
        putchar((char)*p);
    putchar('|');
}
int main(void) {
    printf("%s|%s|%s|%s|%s|%s|%s|", a, b, c, d, e, f, g);
    wide(w1);
    wide(w2);
    wide(w3);
    putchar('\n');
    return 0;
}
"#;

/// `.rodata`'s size in `exe`.
fn rodata_size(dir: &std::path::Path, exe: &str) -> u64 {
    let out = common::tool_ok("readelf", &["-SW", exe], dir);
    let line = (out.lines())
        .map(|l| l.replace("[ ", "["))
        .find(|l| l.split_whitespace().nth(1) == Some(".rodata"))
        .unwrap_or_else(|| panic!("{exe}: no .rodata"));
    let f: Vec<&str> = line.split_whitespace().collect();
    u64::from_str_radix(f[5], 16).unwrap()
}

#[test]
fn string_tails_are_shared_as_gnu_ld_shares_them() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("string-tails", &["gcc", "readelf"]) else {
        return;
    };
    std::fs::write(dir.join("t.c"), SOURCE).unwrap();
    for kind in ["-pie", "-no-pie"] {
        let script = common::gnu_default_script(&[kind], &dir);
        std::fs::write(dir.join(format!("gnu{kind}.lds")), script).unwrap();
    }
    for cc in common::compilers() {
        let c = cc.name();
        let obj = format!("t-{c}.o");
        common::tool_ok(
            cc.driver(false),
            &["-O1", "-fPIE", "-c", "t.c", "-o", &obj],
            &dir,
        );
        for kind in ["-pie", "-no-pie"] {
            let script = format!("-Wl,-T,gnu{kind}.lds");
            let mut sizes = Vec::new();
            for (how, flag) in [
                ("script", script.as_str()),
                ("O2", "-Wl,-O2"),
                ("plain", "-Wl,-O0"),
            ] {
                let mut seen = Vec::new();
                for (side, shim_dir) in [("bfd", &bfd), ("rivet", &shim)] {
                    let exe = format!("t-{c}{kind}-{how}.{side}");
                    let b = format!("-B{}/", shim_dir.display());
                    common::tool_ok("gcc", &[&b, kind, flag, &obj, "-o", &exe], &dir);
                    let run = common::tool(&dir.join(&exe).display().to_string(), &[], Some(&dir));
                    assert!(run.success(), "{exe}: {}", run.log());
                    seen.push((rodata_size(&dir, &exe), run.stdout_str()));
                }
                assert_eq!(seen[1].1, seen[0].1, "{c} {kind} {how}: the output");
                if how != "plain" {
                    assert_eq!(
                        seen[1].0, seen[0].0,
                        "{c} {kind} {how}: .rodata's size (rivet's, GNU ld's)"
                    );
                }
                sizes.push(seen[1].0);
            }
            // Whole strings in rivet's own layout: larger than with their tails shared.
            assert!(
                sizes[2] > sizes[1],
                "{c} {kind}: .rodata {sizes:?} (script, -O2, plain)"
            );
        }
    }
}
