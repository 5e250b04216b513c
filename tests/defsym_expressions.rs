//! `--defsym` with GNU ld's expression language (issue 31): operators with C's precedence, `?:`, numbers with
//! suffixes, `ALIGN`, `ADDR`, `SIZEOF`, `MAX`, `DEFINED`, and symbols another `--defsym` defines. The program prints
//! the values; they must be GNU ld's.

mod common;

const SRC: &str = r#"
#include <stdio.h>
extern char a_sym[], b_sym[], c_sym[], d_sym[], e_sym[], f_sym[];
int main(void) {
    printf("%lx %lx %lx %lx %lx %lx\n", (unsigned long)a_sym, (unsigned long)b_sym, (unsigned long)c_sym,
           (unsigned long)d_sym, (unsigned long)e_sym, (unsigned long)f_sym);
    return 0;
}
"#;

#[test]
fn defsym_expressions_match_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("defsym-expressions", &["gcc"]) else {
        return;
    };
    std::fs::write(dir.join("d.c"), SRC).unwrap();
    common::tool_ok("gcc", &["-fno-pie", "-c", "d.c"], &dir);
    let defsyms = [
        "a_sym=(1 << 12) | 0x3",
        "b_sym=ALIGN(main + 1, 0x100) - main",
        "c_sym=SIZEOF(.text) > 0 ? 4K : 1",
        "d_sym=ADDR(.data) - ADDR(.text) >= 0x10 && 1",
        "e_sym=MAX(a_sym, 0x20) * 2 + DEFINED(nothing) - DEFINED(main)",
        "f_sym=-(~0x0f & 0xff) % 7 + 10h",
    ];
    let mut outputs = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let exe = format!("d-{side}");
        let b = format!("-B{}/", shim.display());
        let mut args = vec![
            b.clone(),
            "-no-pie".into(),
            "-o".into(),
            exe.clone(),
            "d.o".into(),
        ];
        for d in defsyms {
            args.push("-Xlinker".into());
            args.push(format!("--defsym={d}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{side}: {}", o.log());
        let run = std::process::Command::new(dir.join(&exe)).output().unwrap();
        outputs.push(String::from_utf8_lossy(&run.stdout).into_owned());
    }
    assert_eq!(outputs[1], outputs[0]);
    assert_eq!(outputs[1].split_whitespace().count(), 6, "{}", outputs[1]);
}
