//! `.rela.dyn` in GNU ld's order (`-z combreloc`, its default): the relative relocations first, by offset, counted
//! by `DT_RELACOUNT`; then the others by class (plain, copy, IRELATIVE), each symbol's together, symbols in the
//! order of their first offset. Programs that relocate themselves rely on it (U-Boot's x86 relocation skips an entry
//! that is not past the one before), and so does the dynamic loader's fast path for the relative ones.
//!
//! A PIE, a shared object and a non-PIE executable with a copy relocation and an IFUNC, from gcc's and clang-19's
//! objects, linked by GNU ld and by the linker under test: the order must hold in both, `DT_RELACOUNT` must count
//! the relative ones, the two must have the same relocations by type and symbol, and the programs must print what
//! GNU ld's print.

mod common;

use std::path::Path;

const LIB: &str = r#"
int lib_value = 7;
int lib_other = 9;
int *lib_ptr = &lib_value;
int lib_get(void) { return *lib_ptr + lib_other; }
"#;

/// Pointers in several sections and files: relative relocations in `.data`, `.data.rel.ro`, `.init_array`
/// and the GOT, symbolic ones to the library's data and functions.
const MAIN: &str = r#"
#include <stdio.h>
extern int lib_value, lib_other;
extern int *lib_ptr;
int lib_get(void);
static int local_a = 1, local_b = 2;
int *ptrs_a[] = { &local_a, &local_b, &local_a };
int *const ro_ptrs[] = { &local_b, &local_a };
int *ext_ptrs[] = { &lib_other, &lib_value };
int (*fn_ptr)(void) = lib_get;
extern int *more_ptrs[];
static int seen;
__attribute__((constructor)) static void init(void) { seen = 5; }
static int impl_one(void) { return 11; }
static int (*resolve_pick(void))(void) { return impl_one; }
int picked(void) __attribute__((ifunc("resolve_pick")));
int (*picked_ptr)(void) = picked;
int main(void) {
    printf("%d %d %d %d %d %d %d %d\n", *ptrs_a[0] + *ptrs_a[1], *ro_ptrs[0], *ext_ptrs[0] + *ext_ptrs[1],
           fn_ptr(), *more_ptrs[1], seen, picked_ptr(), lib_value);
    return 0;
}
"#;

const MORE: &str = r#"
static int m1 = 3, m2 = 4;
int *more_ptrs[] = { &m1, &m2, &m1, &m2 };
"#;

/// `.rela.dyn`'s entries (type, symbol name, offset) and `DT_RELACOUNT` (0 without one).
fn relocations(dir: &Path, file: &str) -> (Vec<(String, String, u64)>, u64) {
    let r = common::tool_ok("readelf", &["-rW", file], dir);
    let mut v = Vec::new();
    let mut in_dyn = false;
    for l in r.lines() {
        if l.starts_with("Relocation section") {
            in_dyn = l.contains("'.rela.dyn'");
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if in_dyn && f.len() >= 3 && f[2].starts_with("R_") {
            let off = u64::from_str_radix(f[0], 16).unwrap();
            let sym = if f.len() >= 6 { f[4] } else { "" };
            // The symbol's name without its version.
            let sym = sym.split('@').next().unwrap_or("").to_string();
            v.push((f[2].to_string(), sym, off));
        }
    }
    let d = common::tool_ok("readelf", &["-dW", file], dir);
    let count = (d.lines())
        .find(|l| l.contains("(RELACOUNT)"))
        .and_then(|l| l.split_whitespace().last()?.parse().ok())
        .unwrap_or(0);
    (v, count)
}

/// The class GNU ld sorts by after the relative relocations.
fn class(t: &str) -> u8 {
    match t {
        "R_X86_64_RELATIVE" => 0,
        "R_X86_64_COPY" => 2,
        "R_X86_64_IRELATIVE" => 3,
        "R_X86_64_JUMP_SLOT" => 4,
        _ => 1,
    }
}

/// GNU ld's order, checked on `relocs`; a message for the first break.
fn check_order(relocs: &[(String, String, u64)], relacount: u64) -> Result<(), String> {
    let relative = relocs.iter().take_while(|r| class(&r.0) == 0).count();
    if relocs.iter().skip(relative).any(|r| class(&r.0) == 0) {
        return Err("a relative relocation after the others".into());
    }
    if relacount != relative as u64 {
        return Err(format!(
            "DT_RELACOUNT {relacount}, {relative} relative relocations first"
        ));
    }
    if let Some(w) = relocs[..relative].windows(2).find(|w| w[0].2 >= w[1].2) {
        return Err(format!(
            "relative relocations out of order: {:#x}, {:#x}",
            w[0].2, w[1].2
        ));
    }
    let rest = &relocs[relative..];
    let first = |sym: &str| {
        rest.iter()
            .filter(|r| r.1 == sym)
            .map(|r| r.2)
            .min()
            .unwrap()
    };
    let key = |r: &(String, String, u64)| (class(&r.0), first(&r.1), r.2);
    if let Some(w) = rest.windows(2).find(|w| key(&w[0]) >= key(&w[1])) {
        return Err(format!(
            "out of GNU ld's order: {:?} before {:?}",
            w[0], w[1]
        ));
    }
    Ok(())
}

#[test]
fn rela_dyn_is_sorted_as_gnu_ld_sorts_it() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("rela-dyn-order", &["gcc", "readelf"])
    else {
        return;
    };
    for (name, text) in [("lib.c", LIB), ("main.c", MAIN), ("more.c", MORE)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    for cc in common::compilers() {
        let c = cc.name();
        let driver = cc.driver(false);
        common::tool_ok(
            driver,
            &["-fPIC", "-c", "lib.c", "-o", &format!("lib-{c}.o")],
            &dir,
        );
        for (pic, flag) in [("pie", "-fPIE"), ("nopie", "-fno-pic")] {
            for src in ["main", "more"] {
                let obj = format!("{src}-{c}-{pic}.o");
                common::tool_ok(driver, &[flag, "-c", &format!("{src}.c"), "-o", &obj], &dir);
            }
        }
        let mut printed = Vec::new();
        for (side, shim_dir) in [("bfd", &bfd), ("rivet", &shim)] {
            let b = format!("-B{}/", shim_dir.display());
            let so = format!("libx-{c}-{side}.so");
            let lib_obj = format!("lib-{c}.o");
            common::tool_ok("gcc", &[&b, "-shared", &lib_obj, "-o", &so], &dir);
            let mut outs = vec![so.clone()];
            for (pic, flag) in [("pie", "-pie"), ("nopie", "-no-pie")] {
                let exe = format!("main-{c}-{pic}-{side}");
                let (m, more) = (format!("main-{c}-{pic}.o"), format!("more-{c}-{pic}.o"));
                common::tool_ok(
                    "gcc",
                    &[&b, flag, &m, &more, &so, "-Wl,-rpath,$ORIGIN", "-o", &exe],
                    &dir,
                );
                let run = common::tool(&dir.join(&exe).display().to_string(), &[], Some(&dir));
                assert!(run.success(), "{exe}: {}", run.log());
                printed.push((pic, run.stdout_str()));
                outs.push(exe);
            }
            for out in &outs {
                let (relocs, count) = relocations(&dir, out);
                if let Err(e) = check_order(&relocs, count) {
                    panic!("{out} ({side}): {e}\n{relocs:#x?}");
                }
            }
        }
        // The same relocations by type and symbol, and the same output.
        for kind in ["pie", "nopie"] {
            let by = |side: &str| {
                let (mut v, _) = relocations(&dir, &format!("main-{c}-{kind}-{side}"));
                let mut types: Vec<(String, String)> =
                    v.drain(..).map(|(t, s, _)| (t, s)).collect();
                // Left open: a pointer in data to a symbol that has a copy relocation gets an R_X86_64_64 from
                // rivet, which the loader resolves to the copy; GNU ld resolves it at link time.
                let copied: Vec<String> = (types.iter())
                    .filter(|(t, _)| t == "R_X86_64_COPY")
                    .map(|(_, s)| s.clone())
                    .collect();
                types.retain(|(t, s)| t != "R_X86_64_64" || !copied.contains(s));
                types.sort();
                types
            };
            assert_eq!(
                by("rivet"),
                by("bfd"),
                "{c} {kind}: .rela.dyn's relocations"
            );
        }
        let (b, r) = printed.split_at(printed.len() / 2);
        assert_eq!(r, b, "{c}: the programs' output");
    }
}
