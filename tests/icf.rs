//! `--icf=all|safe` and `--print-icf-sections`, against ld.lld-19 (GNU ld has no ICF): C++ template instantiations
//! that compile to the same code (`std::vector<int*>` and `std::vector<long*>`, equal lambdas, functions with an
//! LSDA that must stay apart), C functions equal but for their names, functions equal but for their (equal)
//! callees (folded only at the fixed point), equal read-only tables in two files, and an address comparison
//! (`&f == &g`) that `--icf=safe` must leave false. Built by g++/gcc and clang-19 with and without `-faddrsig`
//! (the address-significance tables that `--icf=safe` reads), `-ffunction-sections -fdata-sections`, linked
//! `--gc-sections` by rivet and by lld in each mode. The programs must print what GNU ld's link without ICF
//! prints (but for the address comparison under `--icf=all`), rivet must fold the same classes of sections as
//! lld, and save as many `.text` bytes.

mod common;

use std::path::{Path, PathBuf};

/// One way of compiling the sources.
struct Flavour {
    tag: &'static str,
    cc: &'static str,
    cxx: &'static str,
    flags: &'static [&'static str],
}

fn flavours() -> Vec<Flavour> {
    let mut v = vec![Flavour {
        tag: "gcc",
        cc: "gcc",
        cxx: "g++",
        flags: &[],
    }];
    if common::compilers().contains(&common::Compiler::Clang) {
        v.push(Flavour {
            tag: "clang",
            cc: "clang-19",
            cxx: "clang++-19",
            flags: &["-faddrsig"],
        });
        v.push(Flavour {
            tag: "clang-noaddrsig",
            cc: "clang-19",
            cxx: "clang++-19",
            flags: &["-fno-addrsig"],
        });
    }
    v
}

/// The `gcc -B` directories of the three linkers.
struct Linkers {
    rivet: PathBuf,
    lld: PathBuf,
    bfd: PathBuf,
}

fn linkers(name: &str) -> Option<(PathBuf, Linkers)> {
    let (dir, rivet, bfd) = common::against_gnu_ld(name, &["gcc", "g++", "readelf"])?;
    let Some(lld) = common::which("ld.lld-19") else {
        eprintln!("skipped: ld.lld-19 needed");
        return None;
    };
    let lld = common::ld_shim_dir(&lld, &format!("{name}-lld"));
    Some((dir, Linkers { rivet, lld, bfd }))
}

/// Copies `sources` (from tests/icf_sources/) into `dir` and compiles each; returns the objects.
fn compile(dir: &Path, fl: &Flavour, sources: &[&str], extra: &[&str]) -> Vec<String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/icf_sources");
    sources
        .iter()
        .map(|src| {
            std::fs::copy(here.join(src), dir.join(src)).unwrap();
            let obj = format!("{src}.{}.o", fl.tag);
            let driver = if src.ends_with(".cpp") { fl.cxx } else { fl.cc };
            let mut args = vec!["-O2", "-ffunction-sections", "-fdata-sections", "-c"];
            args.extend(fl.flags);
            args.extend(extra);
            args.extend([*src, "-o", &obj]);
            common::tool_ok(driver, &args, dir);
            obj
        })
        .collect()
}

/// Links `objs` into `out` by the linker in `shim` with `--icf=MODE` (none: without ICF options); returns what
/// `--print-icf-sections` printed.
fn link(dir: &Path, driver: &str, shim: &Path, args: &[&str], mode: &str, out: &str) -> String {
    let b = format!("-B{}/", shim.display());
    let icf = format!("-Wl,--icf={mode}");
    let mut all = vec![b.as_str(), "-Wl,--gc-sections", "-o", out];
    if mode != "none" {
        all.extend([icf.as_str(), "-Wl,--print-icf-sections"]);
    }
    all.extend(args);
    let o = common::tool(driver, &all, Some(dir));
    assert!(o.success(), "link {out} failed:\n{}", o.log());
    o.stdout_str()
}

/// Runs `exe` (with `dir` as its library path); returns its output.
fn run(dir: &Path, exe: &str) -> String {
    let mut cmd = std::process::Command::new(dir.join(exe));
    cmd.current_dir(dir).env("LD_LIBRARY_PATH", dir);
    let o = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(30));
    assert!(o.success(), "{exe} failed:\n{}", o.log());
    o.stdout_str()
}

/// The size of `.text` in `file`.
fn text_size(dir: &Path, file: &str) -> u64 {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find_map(|f| {
            let k = f.iter().position(|&w| w == ".text")?;
            u64::from_str_radix(f.get(k + 4)?, 16).ok()
        })
        .unwrap_or_else(|| panic!("no .text in {file}:\n{out}"))
}

/// The classes `--print-icf-sections` lists, each sorted, sorted: as sets, since the leader of a class whose
/// members differ in alignment is not lld's (rivet places the most aligned one, lld raises the first one's
/// alignment) and the order of the classes is lld's hash order.
fn classes(list: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for l in list.lines() {
        if let Some(s) = l.strip_prefix("selected section ") {
            out.push(vec![s.to_string()]);
        } else if let Some(s) = l.strip_prefix("  removing identical section ") {
            out.last_mut().expect("a class first").push(s.to_string());
        } else {
            panic!("unexpected line in the ICF list: {l}");
        }
    }
    for c in &mut out {
        c.sort();
    }
    out.sort();
    out
}

/// One mode's results of one linker.
struct Linked {
    list: String,
    output: String,
    text: u64,
}

/// Links `objs` by rivet and by lld in `mode`; checks that both fold the same classes, that their programs print
/// the same, and that rivet saves as much `.text` as lld (given both links without ICF).
fn both(
    dir: &Path,
    ls: &Linkers,
    driver: &str,
    objs: &[String],
    mode: &str,
    base: Option<(u64, u64)>,
) -> Linked {
    let args: Vec<&str> = objs.iter().map(String::as_str).collect();
    let mut got = Vec::new();
    for (side, shim) in [("rivet", &ls.rivet), ("lld", &ls.lld)] {
        let exe = format!("{}.{mode}.{side}", objs[0]);
        let list = link(dir, driver, shim, &args, mode, &exe);
        got.push(Linked {
            list,
            output: run(dir, &exe),
            text: text_size(dir, &exe),
        });
    }
    let (r, l) = (&got[0], &got[1]);
    let what = format!("{} --icf={mode}", objs[0]);
    assert_eq!(
        classes(&r.list),
        classes(&l.list),
        "{what}: rivet's classes, then lld's"
    );
    assert_eq!(
        r.output, l.output,
        "{what}: the program's output with rivet, then with lld"
    );
    if let Some((rb, lb)) = base {
        assert_eq!(
            rb - r.text,
            lb - l.text,
            "{what}: .text saved by rivet, then by lld"
        );
    }
    got.swap_remove(0)
}

/// Compiles `sources` in every flavour, links them without ICF (GNU ld, rivet, lld) and with each mode; `check`
/// sees each flavour's and mode's rivet results and GNU ld's output.
fn check_program(name: &str, sources: &[&str], check: impl Fn(&Flavour, &str, &Linked, &str)) {
    let Some((dir, ls)) = linkers(name) else {
        return;
    };
    for fl in flavours() {
        let objs = compile(&dir, &fl, sources, &[]);
        let driver = if sources[0].ends_with(".cpp") {
            fl.cxx
        } else {
            fl.cc
        };
        let args: Vec<&str> = objs.iter().map(String::as_str).collect();
        let reference = format!("{}.bfd", objs[0]);
        link(&dir, driver, &ls.bfd, &args, "none", &reference);
        let expected = run(&dir, &reference);
        let none = both(&dir, &ls, driver, &objs, "none", None);
        let lld_none = text_size(&dir, &format!("{}.none.lld", objs[0]));
        assert_eq!(none.output, expected, "{name} {}: without ICF", fl.tag);
        for mode in ["all", "safe"] {
            let r = both(&dir, &ls, driver, &objs, mode, Some((none.text, lld_none)));
            check(&fl, mode, &r, &expected);
        }
    }
}

/// Whether the ICF list folds a section named `b` into one named `a` (section names, any files).
fn folds(list: &str, a: &str, b: &str) -> bool {
    classes(list).iter().any(|c| {
        let has = |n: &str| c.iter().any(|s| s.ends_with(&format!(":({n})")));
        has(a) && has(b)
    })
}

#[test]
fn cpp_templates_fold_as_lld_folds_them() {
    let sources = ["main.cpp", "templates_int.cpp", "templates_long.cpp"];
    check_program("icf-cpp", &sources, |fl, mode, r, expected| {
        let what = format!("{} --icf={mode}", fl.tag);
        assert_eq!(&r.output, expected, "{what}: the program's output");
        let fill = (
            ".text._Z4fillIPiEmRSt6vectorIT_SaIS2_EEi",
            ".text._Z4fillIPlEmRSt6vectorIT_SaIS2_EEi",
        );
        // Without address-significance tables, --icf=safe folds nothing.
        let expect_fill = mode == "all" || fl.tag == "clang";
        assert_eq!(
            folds(&r.list, fill.0, fill.1),
            expect_fill,
            "{what}: fill<int*> and fill<long*>:\n{}",
            r.list
        );
        // A COMDAT member (SHF_GROUP) folds with a plain section of the same code.
        let pass = (".text._Z4passILi1EEii", ".text._Z10plain_passi");
        assert_eq!(
            folds(&r.list, pass.0, pass.1),
            expect_fill,
            "{what}: pass<1> and plain_pass:\n{}",
            r.list
        );
        // Functions with an LSDA stay apart in every mode.
        let guarded = (".text._Z7guardedILi1EEii", ".text._Z7guardedILi2EEii");
        assert!(!folds(&r.list, guarded.0, guarded.1), "{what}: {}", r.list);
    });
}

#[test]
fn c_functions_tables_and_address_comparisons() {
    let sources = ["main.c", "same.c", "other.c"];
    check_program("icf-c", &sources, |fl, mode, r, expected| {
        let what = format!("{} --icf={mode}", fl.tag);
        // Without an address-significance table, every section's address is significant.
        let significant = fl.tag != "clang";
        if mode == "safe" {
            assert_eq!(&r.output, expected, "{what}: the program's output");
            assert!(r.output.contains("same address: 0"), "{what}: {}", r.output);
        } else {
            // &addr_f == &addr_g once they are folded; nothing else changes.
            assert_eq!(
                r.output,
                expected.replace("same address: 0", "same address: 1"),
                "{what}"
            );
        }
        let folded = mode == "all" || fl.tag == "clang";
        assert_eq!(
            folds(&r.list, ".text.leaf_a", ".text.leaf_b"),
            folded,
            "{what}:\n{}",
            r.list
        );
        // Equal only once leaf_a and leaf_b are one class: the fixed point.
        assert_eq!(
            folds(&r.list, ".text.via_a", ".text.via_b"),
            folded,
            "{what}:\n{}",
            r.list
        );
        // Read-only data folds only where its address is known not to matter.
        assert_eq!(
            folds(&r.list, ".rodata.table_b", ".rodata.table_c"),
            !significant,
            "{what}:\n{}",
            r.list
        );
        assert_eq!(
            folds(&r.list, ".text.sum_a", ".text.sum_c"),
            !significant,
            "{what}:\n{}",
            r.list
        );
    });
}

/// A shared object: its exported functions are address-significant under --icf=safe, and calls to different
/// preemptible functions keep their callers apart in every mode.
#[test]
fn shared_object_exports_and_preemptible_calls() {
    let Some((dir, ls)) = linkers("icf-shared") else {
        return;
    };
    for fl in flavours() {
        let objs = compile(&dir, &fl, &["same.c", "other.c"], &["-fPIC"]);
        let main = compile(&dir, &fl, &["main.c"], &[]);
        let mut args: Vec<&str> = vec!["-shared"];
        args.extend(objs.iter().map(String::as_str));
        let reference = format!("libicf-{}.bfd.so", fl.tag);
        link(&dir, fl.cc, &ls.bfd, &args, "none", &reference);
        for mode in ["all", "safe"] {
            let mut lists = Vec::new();
            for (side, shim) in [("rivet", &ls.rivet), ("lld", &ls.lld)] {
                let lib = format!("libicf-{}.{mode}.{side}.so", fl.tag);
                lists.push(link(&dir, fl.cc, shim, &args, mode, &lib));
                // The program, linked against the library by GNU ld, runs with it.
                let exe = format!("main-{}.{mode}.{side}", fl.tag);
                link(&dir, fl.cc, &ls.bfd, &[&main[0], &lib], "none", &exe);
                let out = run(&dir, &exe);
                let same = if mode == "all" {
                    "same address: 1"
                } else {
                    "same address: 0"
                };
                assert!(out.contains(same), "{} {mode} {side}: {out}", fl.tag);
            }
            let what = format!("{} -shared --icf={mode}", fl.tag);
            assert_eq!(
                classes(&lists[0]),
                classes(&lists[1]),
                "{what}: rivet's classes, then lld's"
            );
            assert_eq!(
                folds(&lists[0], ".text.leaf_a", ".text.leaf_b"),
                mode == "all",
                "{what}:\n{}",
                lists[0]
            );
            assert!(
                !folds(&lists[0], ".text.via_a", ".text.via_b"),
                "{what}:\n{}",
                lists[0]
            );
        }
    }
}

#[test]
fn icf_with_relocatable_output_is_refused() {
    let Some((rivet, dir)) = common::rivet_only("icf-r", &["gcc"], "rivet's own error") else {
        return;
    };
    std::fs::write(dir.join("a.c"), "int f(void) { return 1; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "a.c"], &dir);
    let r = rivet.display().to_string();
    let o = common::tool(&r, &["-r", "--icf=all", "a.o", "-o", "b.o"], Some(&dir));
    assert!(!o.success());
    assert!(
        o.stderr_str()
            .contains("-r and --icf may not be used together"),
        "{}",
        o.log()
    );
    let o = common::tool(&r, &["--icf=some", "a.o", "-o", "b"], Some(&dir));
    assert!(
        o.stderr_str().contains("unknown --icf value: some"),
        "{}",
        o.log()
    );
}

/// An address-significance table that `objcopy` rewrote (`sh_link` 0: its symbol indices may be stale) is ignored,
/// with lld's warning under --icf=safe: every section of that object stays unique.
#[test]
fn rewritten_address_significance_table_is_ignored() {
    let Some((dir, ls)) = linkers("icf-objcopy") else {
        return;
    };
    if !common::compilers().contains(&common::Compiler::Clang) || !common::have_tool("objcopy") {
        eprintln!("skipped: clang-19 and objcopy needed");
        return;
    }
    let src = "int f(int x) { return x * 3 + 1; }\nint g(int x) { return x * 3 + 1; }\n\
               int main(void) { return f(1) + g(2) - 11; }\n";
    std::fs::write(dir.join("a.c"), src).unwrap();
    common::tool_ok(
        "clang-19",
        &["-O2", "-ffunction-sections", "-faddrsig", "-c", "a.c"],
        &dir,
    );
    common::tool_ok("objcopy", &["a.o", "b.o"], &dir);
    for (side, shim) in [("rivet", &ls.rivet), ("lld", &ls.lld)] {
        let b = format!("-B{}/", shim.display());
        let args = [
            b.as_str(),
            "-Wl,--icf=safe",
            "-Wl,--print-icf-sections",
            "b.o",
            "-o",
            side,
        ];
        let o = common::tool("clang-19", &args, Some(&dir));
        assert!(o.success(), "{}", o.log());
        let warning = "b.o: --icf=safe conservatively ignores SHT_LLVM_ADDRSIG [index ";
        assert!(o.stderr_str().contains(warning), "{side}: {}", o.log());
        assert!(
            !folds(&o.stdout_str(), ".text.f", ".text.g"),
            "{side}: {}",
            o.log()
        );
    }
}

/// The `SHF_LINK_ORDER` sections that describe a folded function (clang's `__patchable_function_entries`, one per
/// function) go with it, as in lld: the table lists each function that stays once.
#[test]
fn link_order_sections_of_folded_functions_are_dropped() {
    let Some((dir, ls)) = linkers("icf-link-order") else {
        return;
    };
    if !common::compilers().contains(&common::Compiler::Clang) {
        eprintln!("skipped: clang-19 needed");
        return;
    }
    let fl = Flavour {
        tag: "clang-pfe",
        cc: "clang-19",
        cxx: "clang++-19",
        flags: &["-fpatchable-function-entry=2"],
    };
    let objs = compile(&dir, &fl, &["main.c", "same.c", "other.c"], &[]);
    let args: Vec<&str> = objs.iter().map(String::as_str).collect();
    let mut sizes = Vec::new();
    for (side, shim) in [("rivet", &ls.rivet), ("lld", &ls.lld)] {
        for mode in ["none", "all"] {
            let exe = format!("pfe.{mode}.{side}");
            link(&dir, "clang-19", shim, &args, mode, &exe);
            let out = common::tool_ok("readelf", &["-SW", &exe], &dir);
            let size = out
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find_map(|f| {
                    let k = f
                        .iter()
                        .position(|&w| w == "__patchable_function_entries")?;
                    u64::from_str_radix(f.get(k + 4)?, 16).ok()
                })
                .unwrap_or_else(|| panic!("no __patchable_function_entries in {exe}:\n{out}"));
            sizes.push(size);
        }
    }
    assert!(
        sizes[1] < sizes[0],
        "rivet's entries without and with ICF: {sizes:?}"
    );
    assert_eq!(
        sizes[..2],
        sizes[2..],
        "the entries, rivet's then lld's: {sizes:?}"
    );
}

/// `--keep-unique=SYMBOL` (lld's option): the section defining it is never folded, the others still are; a name no
/// object defines gets lld's warning. Checked against ld.lld-19.
#[test]
fn keep_unique_keeps_a_section_apart_as_lld_does() {
    let Some((dir, l)) = linkers("icf-keep-unique") else {
        return;
    };
    std::fs::write(
        dir.join("k.c"),
        "__attribute__((noinline)) int f(int x) { return x * 3 + 1; }\n\
         __attribute__((noinline)) int g(int x) { return x * 3 + 1; }\n\
         __attribute__((noinline)) int h(int x) { return x * 3 + 1; }\n\
         int main(int c, char **v) { (void)v; return f(c) + g(c) + h(c) == 12 ? 0 : 1; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-O2", "-ffunction-sections", "-c", "k.c"], &dir);
    let mut got = Vec::new();
    for (side, shim) in [("rivet", &l.rivet), ("lld", &l.lld)] {
        let b = format!("-B{}/", shim.display());
        let out = format!("keep-{side}");
        let args = [
            &b[..],
            "-o",
            &out,
            "k.o",
            "-Wl,--icf=all",
            "-Wl,--print-icf-sections",
            "-Wl,--keep-unique=g",
            "-Wl,--keep-unique=nosuch",
        ];
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "{}", o.log());
        assert!(
            o.stderr_str()
                .contains("could not find symbol nosuch to keep unique"),
            "{side}: {}",
            o.log()
        );
        assert_eq!(run(&dir, &out), "");
        got.push(classes(&o.stdout_str()));
    }
    assert_eq!(got[0], got[1]);
    // (The empty `.text` sections of the startup files and k.o fold together too.)
    let with_f = got[0]
        .iter()
        .find(|c| c.iter().any(|s| s == "k.o:(.text.f)"));
    assert_eq!(with_f.unwrap(), &["k.o:(.text.f)", "k.o:(.text.h)"]);
    assert!(
        got[0].iter().flatten().all(|s| s != "k.o:(.text.g)"),
        "{:?}",
        got[0]
    );
}

/// Constants of one entry size share one merge group whatever their sections' alignment, as in lld: a 16-byte
/// constant in an `.rodata.cst16` of alignment 1 and the same in one of alignment 16 keep one copy, so the
/// functions that load it from either fold. Without ICF the program prints what GNU ld's prints (which keeps
/// a copy per alignment).
#[test]
fn constants_of_different_alignment_share_a_piece() {
    let Some((dir, l)) = linkers("icf-cst-align") else {
        return;
    };
    let asm = |func: &str, align: u32| {
        format!(
            ".section .text.{func},\"ax\",@progbits\n.globl {func}\n.type {func},@function\n\
             {func}:\n movq .LC0(%rip), %rax\n addq .LC0+8(%rip), %rax\n ret\n\
             .section .rodata.cst16,\"aM\",@progbits,16\n.p2align {align}\n\
             .LC0:\n .quad 0x1122334455667788, 0x99\n.section .note.GNU-stack,\"\",@progbits\n"
        )
    };
    std::fs::write(dir.join("a.s"), asm("fa", 4)).unwrap();
    std::fs::write(dir.join("b.s"), asm("fb", 0)).unwrap();
    std::fs::write(
        dir.join("m.c"),
        "#include <stdio.h>\nlong fa(void), fb(void);\n\
         int main(void) { printf(\"%lx %lx\\n\", fa(), fb()); return 0; }\n",
    )
    .unwrap();
    for src in ["a.s", "b.s", "m.c"] {
        common::tool_ok("gcc", &["-O2", "-c", src], &dir);
    }
    let expected = "1122334455667821\n".repeat(2).replacen('\n', " ", 1);
    let mut got = Vec::new();
    for (side, shim) in [("rivet", &l.rivet), ("lld", &l.lld), ("bfd", &l.bfd)] {
        for mode in ["none", "all"] {
            if side == "bfd" && mode == "all" {
                continue;
            }
            let out = format!("cst-{side}-{mode}");
            let list = link(&dir, "gcc", shim, &["m.o", "a.o", "b.o"], mode, &out);
            assert_eq!(run(&dir, &out), expected, "{out}");
            if mode == "all" {
                got.push(classes(&list));
            }
            // One copy of the constant in the output, but in GNU ld's.
            let bytes = std::fs::read(dir.join(&out)).unwrap();
            let constant = [
                &0x1122334455667788u64.to_le_bytes()[..],
                &[0x99, 0, 0, 0, 0, 0, 0, 0],
            ]
            .concat();
            let copies = bytes.windows(16).filter(|w| *w == &constant[..]).count();
            let want = if side == "bfd" { 2 } else { 1 };
            assert_eq!(copies, want, "{out}: copies of the constant");
        }
    }
    assert_eq!(got[0], got[1], "rivet's classes, then lld's");
    assert!(
        folds(&list_of(&got[0]), ".text.fa", ".text.fb"),
        "{:?}",
        got[0]
    );
}

/// `--print-icf-sections` lines again from `classes`' sets, for `folds`.
fn list_of(classes: &[Vec<String>]) -> String {
    let mut out = String::new();
    for c in classes {
        out += &format!("selected section {}\n", c[0]);
        for s in &c[1..] {
            out += &format!("  removing identical section {s}\n");
        }
    }
    out
}
