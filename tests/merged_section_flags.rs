//! An output section made only of mergeable input sections keeps `SHF_MERGE` (and `SHF_STRINGS`) with its inputs'
//! entry size, as GNU ld writes it: `.comment` and `.debug_str` are `MS` with entry size 1. A plain input, or
//! another entry size, among them drops both. Checked against GNU ld on a gcc `-g` program, without a script and
//! with GNU ld's default script changed to gather the strings in a section of
//! their own.

mod common;

use std::path::Path;

const PROGRAM: &str = r#"
#include <stdio.h>
const char *names[] = { "alpha", "beta", "gamma" };
const int table[4] = { 1, 2, 3, 4 };
int main(void) { printf("%s %s %d\n", names[0], names[2], table[3]); return 0; }
"#;

/// "name flags entsize" of the output sections named in `names`.
fn flags(dir: &Path, file: &str, names: &[&str]) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    let mut v: Vec<String> = (out.lines())
        .filter_map(|l| {
            l.split_once(']')
                .map(|(_, r)| r.split_whitespace().collect::<Vec<_>>())
        })
        .filter(|f| f.len() > 7 && names.contains(&f[0]))
        .map(|f| {
            // Flags are absent (an empty column) where a section has none.
            let flg = if f[6].chars().all(|c| c.is_ascii_digit()) {
                ""
            } else {
                f[6]
            };
            format!("{} {flg} {}", f[0], f[5])
        })
        .collect();
    v.sort();
    v
}

#[test]
fn merged_output_sections_keep_their_flags() {
    let Some((dir, _, _)) = common::against_gnu_ld("merged-section-flags", &["gcc", "readelf"])
    else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    let shim = common::ld_shim_dir(&rivet, "merged-section-flags");
    std::fs::write(dir.join("p.c"), PROGRAM).unwrap();
    // GNU ld's default script, with the strings gathered in a section of their own.
    let mut script = String::new();
    for l in common::gnu_default_script(&[], &dir).lines() {
        if l.trim_start().starts_with(".rodata ") {
            script.push_str("  .strings : { *(.rodata.str1.1) *(.rodata.str1.8) }\n");
        }
        script.push_str(l);
        script.push('\n');
    }
    std::fs::write(dir.join("s.lds"), script).unwrap();
    common::tool_ok("gcc", &["-g", "-O1", "-c", "p.c", "-o", "p.o"], &dir);
    let names = [
        ".comment",
        ".debug_str",
        ".debug_line_str",
        ".rodata",
        ".strings",
    ];
    for (case, extra) in [
        ("plain", &[][..]),
        ("script", &["-no-pie", "-Wl,-T,s.lds"][..]),
    ] {
        let mut seen = Vec::new();
        for side in ["bfd", "rivet"] {
            let out = format!("{case}.{side}");
            let driver = match side {
                "bfd" => "-fuse-ld=bfd".to_string(),
                _ => format!("-B{}/", shim.display()),
            };
            let args = [extra, &[driver.as_str(), "p.o", "-o", &out]].concat();
            common::tool_ok("gcc", &args, &dir);
            let run = common::tool(&dir.join(&out).display().to_string(), &[], Some(&dir));
            assert!(run.success(), "{out}: {}", run.log());
            assert_eq!(run.stdout_str(), "alpha gamma 4\n", "{out}");
            seen.push(flags(&dir, &out, &names));
        }
        assert!(
            seen[0].iter().any(|s| s.starts_with(".comment MS 01")),
            "{case}: {:?}",
            seen[0]
        );
        assert_eq!(seen[1], seen[0], "{case}: (rivet's, GNU ld's)");
    }
}
