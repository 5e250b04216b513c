//! Weak undefined symbols in executables (issue 31): GNU ld on x86-64 leaves those of default visibility to the
//! dynamic linker in a PIE (`-z dynamic-undefined-weak` asks for it in any dynamic executable, `-z
//! nodynamic-undefined-weak` turns it off), so a library loaded at run time (here by `LD_PRELOAD`) can define
//! them; a hidden one stays 0. Each output's `.dynsym` and its behaviour with and without the library are compared
//! with GNU ld's.

mod common;

use std::process::Command;

const MAIN: &str = r#"
#include <stdio.h>
__attribute__((weak)) extern int maybe(void);
__attribute__((weak, visibility("hidden"))) extern int never(void);
int main(void) { printf("%d %d\n", maybe ? maybe() : -1, never ? never() : -1); return 0; }
"#;
const PRELOAD: &str = "int maybe(void) { return 7; }\nint never(void) { return 8; }\n";

fn weak_dynsyms(dir: &std::path::Path, exe: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["--dyn-syms", "-W", exe], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter(|l| l.contains(" WEAK ") && l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().nth(7).map(str::to_string))
        .filter(|n| n == "maybe" || n == "never")
        .collect();
    v.sort();
    v
}

#[test]
fn weak_undefined_symbols_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("weak-undefined", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("main.c"), MAIN).unwrap();
    std::fs::write(dir.join("pre.c"), PRELOAD).unwrap();
    common::tool_ok(
        "gcc",
        &["-fPIC", "-shared", "-o", "libpre.so", "pre.c"],
        &dir,
    );
    let cases: &[(&str, &[&str])] = &[
        ("-fPIE", &["-pie"]),
        ("-fPIE", &["-pie", "-Wl,-z,nodynamic-undefined-weak"]),
        ("-fno-pie", &["-no-pie"]),
        ("-fno-pie", &["-no-pie", "-Wl,-z,dynamic-undefined-weak"]),
    ];
    for (k, (cflag, flags)) in cases.iter().enumerate() {
        common::tool_ok("gcc", &[cflag, "-c", "main.c", "-o", "main.o"], &dir);
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let exe = format!("w{k}-{side}");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-o", &exe, "main.o"];
            args.extend_from_slice(flags);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{flags:?} ({side}): {}", o.log());
            let plain = Command::new(dir.join(&exe)).output().unwrap();
            let preloaded = Command::new(dir.join(&exe))
                .env("LD_PRELOAD", dir.join("libpre.so"))
                .output()
                .unwrap();
            views.push((
                weak_dynsyms(&dir, &exe),
                String::from_utf8_lossy(&plain.stdout).into_owned(),
                String::from_utf8_lossy(&preloaded.stdout).into_owned(),
            ));
        }
        assert_eq!(views[1], views[0], "{cflag} {flags:?}: differs from GNU ld");
    }
}

/// Each weak symbol referenced in one way: `g` by a GOT load, `p` by a PLT call, `gd` by a GOT load and a pointer
/// in data, `gt` by a GOT load and a pointer in code, `d` by a pointer in data only, `h` (hidden) by a GOT load.
const REFS: &str = r#"
	.text
	.globl get_g, get_gd, get_gt, get_h, call_p, text_gt
	.weak g, p, gd, d, gt, h
	.hidden h
get_g:	movq g@GOTPCREL(%rip), %rax
	ret
get_gd:	movq gd@GOTPCREL(%rip), %rax
	ret
get_gt:	movq gt@GOTPCREL(%rip), %rax
	ret
get_h:	movq h@GOTPCREL(%rip), %rax
	ret
call_p:	jmp p@PLT
text_gt:
	.quad gt
	.data
	.globl data_gd, data_d
data_gd:
	.quad gd
data_d:
	.quad d
	.section .note.GNU-stack,"",@progbits
"#;

/// Position-dependent only: `ga` by a GOT load and an absolute address in code.
const ABS_REFS: &str = r#"
	.text
	.globl get_ga, get_ga_abs
	.weak ga
get_ga:	movq ga@GOTPCREL(%rip), %rax
	ret
get_ga_abs:
	movl $ga, %eax
	ret
	.section .note.GNU-stack,"",@progbits
"#;

const REFS_MAIN: &str = r#"
#include <stdio.h>
extern void *get_g(void), *get_gd(void), *get_gt(void), *get_h(void);
extern int call_p(void);
extern void *data_gd, *data_d, *text_gt;
#ifdef ABS
extern void *get_ga(void), *get_ga_abs(void);
#endif
int main(int argc, char **argv) {
    printf("g=%d gd=%d/%d gt=%d/%d d=%d h=%d", !!get_g(), !!get_gd(), !!data_gd, !!get_gt(), !!text_gt,
           !!data_d, !!get_h());
#ifdef ABS
    printf(" ga=%d/%d", !!get_ga(), !!get_ga_abs());
#endif
    fflush(stdout);
    if (argc > 1) printf(" p=%d", call_p());
    printf("\n");
    return 0;
}
"#;

const REFS_LIB: &str = "int g, gd, gt, d, h, ga;\nint p(void) { return 42; }\n";

/// What `readelf` shows of `file`'s weak undefined symbols: those in `.dynsym` and the dynamic relocations naming
/// them (type and name), sorted.
fn weak_view(dir: &std::path::Path, file: &str) -> (Vec<String>, Vec<String>) {
    let names = ["g", "p", "gd", "d", "gt", "h", "ga"];
    let syms = common::tool_ok("readelf", &["--dyn-syms", "-W", file], dir);
    let mut dynsym: Vec<String> = syms
        .lines()
        .filter(|l| l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().nth(7).map(str::to_string))
        .filter(|n| names.contains(&n.as_str()))
        .collect();
    dynsym.sort();
    let relocs = common::tool_ok("readelf", &["-rW", file], dir);
    let mut rels: Vec<String> = relocs
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.get(4)?;
            (f[2].starts_with("R_X86_64_") && names.contains(&name))
                .then(|| format!("{} {name}", f[2]))
        })
        .collect();
    rels.sort();
    (dynsym, rels)
}

/// GNU ld's rule on x86-64, for PIEs and position-dependent executables alike: an undefined weak symbol of default
/// visibility is left to the dynamic linker (exported, its GOT slot and PLT entry relocated) when some GOT or PLT
/// relocation names it and no other relocation in code does; otherwise it is 0 at link time. `-z
/// dynamic-undefined-weak` exports every one (still 0 where the rule says so), `-z nodynamic-undefined-weak` none;
/// hidden ones never. A shared object leaves them all to the dynamic linker. Compared with GNU ld: `.dynsym`, the
/// dynamic relocations, and what the program sees with and without a library (`LD_PRELOAD`) that defines them.
#[test]
fn weak_undefined_by_reference_kind() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("weak-undefined-refs", &["gcc", "readelf"])
    else {
        return;
    };
    for (name, text) in [
        ("refs.s", REFS),
        ("abs.s", ABS_REFS),
        ("main.c", REFS_MAIN),
        ("lib.c", REFS_LIB),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    common::tool_ok("gcc", &["-c", "refs.s", "abs.s"], &dir);
    common::tool_ok("gcc", &["-fPIE", "-c", "main.c", "-o", "main-pie.o"], &dir);
    common::tool_ok(
        "gcc",
        &["-fno-pie", "-DABS", "-c", "main.c", "-o", "main-pde.o"],
        &dir,
    );
    common::tool_ok(
        "gcc",
        &["-fPIC", "-shared", "-o", "libdef.so", "lib.c"],
        &dir,
    );
    for (kind, objs) in [
        ("-pie", &["main-pie.o", "refs.o"][..]),
        ("-no-pie", &["main-pde.o", "refs.o", "abs.o"]),
    ] {
        for z in [
            "",
            "-Wl,-z,dynamic-undefined-weak",
            "-Wl,-z,nodynamic-undefined-weak",
        ] {
            let mut views = Vec::new();
            for (side, b) in [("ref", &bfd), ("test", &shim)] {
                let exe = format!("x{kind}{z}-{side}").replace(',', "_");
                let b = format!("-B{}/", b.display());
                let mut args = vec![b.as_str(), kind, "-o", &exe];
                args.extend_from_slice(objs);
                if !z.is_empty() {
                    args.push(z);
                }
                let o = common::tool("gcc", &args, Some(&dir));
                assert!(o.success(), "{kind} {z} ({side}): {}", o.log());
                let plain = Command::new(dir.join(&exe)).output().unwrap();
                let preloaded = Command::new(dir.join(&exe))
                    .arg("call")
                    .env("LD_PRELOAD", dir.join("libdef.so"))
                    .output()
                    .unwrap();
                views.push((
                    weak_view(&dir, &exe),
                    String::from_utf8_lossy(&plain.stdout).into_owned(),
                    String::from_utf8_lossy(&preloaded.stdout).into_owned(),
                    preloaded.status.code(),
                ));
            }
            assert_eq!(views[1], views[0], "{kind} {z}: differs from GNU ld");
        }
    }
    // A shared object: every default-visibility one is the dynamic linker's (the pointer in code is a text
    // relocation in both).
    let mut views = Vec::new();
    for (side, b) in [("ref", &bfd), ("test", &shim)] {
        let so = format!("librefs-{side}.so");
        let b = format!("-B{}/", b.display());
        let o = common::tool("gcc", &[&b, "-shared", "-o", &so, "refs.o"], Some(&dir));
        assert!(o.success(), "-shared ({side}): {}", o.log());
        views.push(weak_view(&dir, &so));
    }
    assert_eq!(views[1], views[0], "-shared: differs from GNU ld");
}

/// A hidden symbol no object defines cannot come from another module: a strong reference to one is an error in a
/// shared object too, as in GNU ld (rivet used to export it).
#[test]
fn hidden_undefined_in_shared_object_is_an_error() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("weak-undefined-hidden", &["gcc"]) else {
        return;
    };
    std::fs::write(
        dir.join("h.c"),
        "__attribute__((visibility(\"hidden\"))) extern int hs(void);\nint f(void) { return hs(); }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "h.c"], &dir);
    for (side, b) in [("ref", &bfd), ("test", &shim)] {
        let b = format!("-B{}/", b.display());
        let o = common::tool("gcc", &[&b, "-shared", "-o", "libh.so", "h.o"], Some(&dir));
        assert!(!o.success(), "{side}: linked");
        assert!(o.stderr_str().contains("hs"), "{side}: {}", o.log());
    }
}
