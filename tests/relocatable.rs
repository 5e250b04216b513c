//! `-r` (partial links), compared with GNU ld's `-r` on the same inputs: the object the linker under test makes
//! must link (by gcc with GNU ld, and by gcc with the linker under test) into a program that behaves as the
//! program of the original objects does, and its symbols and section groups must be GNU ld's.

mod common;

use std::path::Path;

/// The linker under test with `args` in `dir`; must succeed.
fn link_ok(linker: &Path, args: &[&str], dir: &Path) -> String {
    let out = common::tool(linker.to_str().unwrap(), args, Some(dir));
    assert!(out.success(), "{}", out.log());
    out.stderr_str()
}

/// Compiles `sources` (name, text) with `driver` and `flags` into objects in `dir`; returns the objects' names.
fn compile(dir: &Path, driver: &str, flags: &[&str], sources: &[(&str, &str)]) -> Vec<String> {
    sources
        .iter()
        .map(|(name, text)| {
            std::fs::write(dir.join(name), text).unwrap();
            let obj = format!("{}.o", name.rsplit_once('.').unwrap().0);
            let mut args = flags.to_vec();
            args.extend(["-c", name, "-o", &obj]);
            common::tool_ok(driver, &args, dir);
            obj
        })
        .collect()
}

/// Links `objects` into `prog` with `driver` through the `ld` of `shim`, runs it and returns its output.
fn run_program(dir: &Path, driver: &str, shim: &Path, objects: &[&str], prog: &str) -> String {
    let b = format!("-B{}/", shim.display());
    let mut args = vec![b.as_str(), "-o", prog];
    args.extend(objects);
    let out = common::tool(driver, &args, Some(dir));
    assert!(out.success(), "{}", out.log());
    let run = common::tool(dir.join(prog).to_str().unwrap(), &[], Some(dir));
    assert!(run.success(), "{prog}: {}", run.log());
    run.stdout_str()
}

/// `nm`'s view of an object: every symbol with its kind letter and size, sorted (values left out: the final
/// link gives them).
fn symbols(dir: &Path, obj: &str) -> Vec<String> {
    let out = common::tool_ok("nm", &["-S", "--defined-only", obj], dir);
    let mut v: Vec<String> = out
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f[f.len().saturating_sub(3)..].join(" ")
        })
        .collect();
    let undef = common::tool_ok("nm", &["-u", obj], dir);
    v.extend(undef.lines().map(|l| common::squash_ws(l.trim())));
    v.sort();
    v
}

/// `readelf -g`'s groups as (signature, member section names), sorted.
fn groups(dir: &Path, obj: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-gW", obj], dir);
    let mut v = Vec::new();
    let mut cur: Option<String> = None;
    for l in out.lines() {
        if l.starts_with("COMDAT group section") {
            if let Some(c) = cur.take() {
                v.push(c);
            }
            let sig = l
                .split('[')
                .nth(2)
                .unwrap_or("")
                .trim_end_matches(|c| c != ']');
            cur = Some(sig.trim_end_matches(']').to_string());
        } else if let Some(c) = &mut cur
            && let Some(name) = l.trim().strip_prefix('[').and_then(|r| r.split_once(']'))
            && name.0.trim().parse::<u32>().is_ok()
        {
            c.push(' ');
            c.push_str(name.1.trim());
        }
    }
    v.extend(cur);
    v.sort();
    v
}

/// Partially links `objects` into `rivet.o` (linker under test) and `bfd.o` (GNU ld) with `extra` options;
/// returns the linker under test's stderr.
fn partial_links(linker: &Path, dir: &Path, objects: &[&str], extra: &[&str]) -> String {
    let mut args = vec!["-r", "-o", "bfd.o"];
    args.extend(extra);
    args.extend(objects);
    common::tool_ok("ld.bfd", &args, dir);
    args[2] = "rivet.o";
    link_ok(linker, &args, dir)
}

const C_MAIN: &str = r#"#include <stdio.h>
int counter;                              /* common (-fcommon), also in data.c */
static int local_state = 5;
extern __thread int tls_counter;          /* TLS defined in data.c */
extern const char *greeting(void);
extern int (*ops[2])(int);                /* function pointers in data */
__attribute__((weak)) int tunable(void) { return 1; }   /* overridden by data.c */
__attribute__((weak)) extern int optional_hook(int);     /* never defined */
static int twice(int x) { return 2 * x; }
int main(void) {
    counter += 3;
    tls_counter += 10;
    printf("%s %d %d %d\n", greeting(), twice(local_state), ops[0](4), ops[1](4));
    printf("tunable=%d hook=%s counter=%d tls=%d\n", tunable(), optional_hook ? "yes" : "no", counter,
           tls_counter);
    return 0;
}
"#;

const C_DATA: &str = r#"int counter;
__thread int tls_counter = 7;
static const char *msg = "hello, partial link";
static int add1(int x) { return x + 1; }
static int sq(int x) { return x * x; }
int (*ops[2])(int) = { add1, sq };
const char *greeting(void) { return msg; }
int tunable(void) { return 42; }
"#;

/// (1) A C program with globals, statics, strings, function pointers in data, TLS, weak symbols and a common
/// symbol: partially linked by the linker under test, then linked by gcc with GNU ld and with the linker under
/// test, it prints what the program of the original objects prints; its symbols are GNU ld's `-r` output's. Objects
/// of gcc and of clang-19.
#[test]
fn c_program_partially_linked() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-c", &["gcc", "nm"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    for c in common::compilers() {
        let cc = c.driver(false);
        let objs = compile(
            &dir,
            cc,
            &["-O1", "-fcommon"],
            &[("main.c", C_MAIN), ("data.c", C_DATA)],
        );
        let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
        let expected = run_program(&dir, "gcc", &bfd, &objs, "direct");
        assert!(
            expected.contains("hello, partial link 10 5 16"),
            "{cc}: {expected}"
        );
        partial_links(&linker, &dir, &objs, &[]);
        assert_eq!(symbols(&dir, "rivet.o"), symbols(&dir, "bfd.o"), "{cc}");
        for (side, s) in [("bfd", &bfd), ("rivet", &shim)] {
            let out = run_program(&dir, "gcc", s, &["rivet.o"], side);
            assert_eq!(out, expected, "{cc}: final link by {side}");
        }
        // -d: the common symbol gets its space in .bss, as GNU ld gives it.
        partial_links(&linker, &dir, &objs, &["-d"]);
        assert_eq!(symbols(&dir, "rivet.o"), symbols(&dir, "bfd.o"), "{cc} -d");
        assert_eq!(
            run_program(&dir, "gcc", &shim, &["rivet.o"], "common"),
            expected,
            "{cc} -d"
        );
    }
}

const CXX_ONE: &str = r#"#include <cstdio>
#include <stdexcept>
#include <string>
template <typename T> T twice(T x) { return x + x; }
inline int shared_inline(int x) { static int calls; return x + ++calls; }
struct Init { Init() { std::puts("static constructor ran"); } } init_one;
int from_two(int);
void thrower(int);
int main() {
    std::printf("%d %d %d\n", twice(3), shared_inline(1), from_two(5));
    try { thrower(7); } catch (const std::runtime_error &e) { std::printf("caught: %s\n", e.what()); }
    std::printf("%s\n", (std::string("a") + "b").c_str());
}
"#;

const CXX_TWO: &str = r#"#include <stdexcept>
#include <string>
template <typename T> T twice(T x) { return x + x; }
inline int shared_inline(int x) { static int calls; return x + ++calls; }
int from_two(int x) { return twice(x) + shared_inline(x); }
void thrower(int x) { if (x) throw std::runtime_error("thrown in two, x=" + std::to_string(x)); }
"#;

/// (2) A C++ program whose two files share templates and inline functions (COMDAT groups), throw an exception
/// across files and run a static constructor: one group per signature, as GNU ld's, and the same run (g++ and
/// clang++-19, with and without one section per function).
#[test]
fn cxx_program_with_comdat_groups() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-cxx", &["g++", "nm", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let variants = common::compilers().into_iter().flat_map(|c| {
        [
            &["-O0"][..],
            &["-O2", "-ffunction-sections", "-fdata-sections"],
        ]
        .map(|o| (c.driver(true), o))
    });
    for (cxx, opts) in variants {
        let opt = format!("{cxx} {}", opts.join(" "));
        let mut flags = opts.to_vec();
        flags.push("-g");
        let objs = compile(
            &dir,
            cxx,
            &flags,
            &[("one.cc", CXX_ONE), ("two.cc", CXX_TWO)],
        );
        let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
        let expected = run_program(&dir, "g++", &bfd, &objs, "direct");
        assert!(
            expected.contains("caught: thrown in two, x=7"),
            "{expected}"
        );
        partial_links(&linker, &dir, &objs, &[]);
        let groups_rivet = groups(&dir, "rivet.o");
        assert!(!groups_rivet.is_empty(), "{opt}: no groups");
        assert_eq!(groups_rivet, groups(&dir, "bfd.o"), "{opt}");
        assert_eq!(symbols(&dir, "rivet.o"), symbols(&dir, "bfd.o"), "{opt}");
        for (side, s) in [("bfd", &bfd), ("rivet", &shim)] {
            let out = run_program(&dir, "g++", s, &["rivet.o"], side);
            assert_eq!(out, expected, "{opt}: final link by {side}");
        }
    }
}

/// (3) Objects compiled with `-g`: addr2line on the final program finds each function's file and line, as in
/// the program of the original objects; `-S` leaves the debug sections out as GNU ld does.
#[test]
fn debug_info_survives_partial_link() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-debug", &["gcc", "nm", "addr2line"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let objs = compile(
        &dir,
        "gcc",
        &["-O1", "-g", "-fcommon"],
        &[("main.c", C_MAIN), ("data.c", C_DATA)],
    );
    let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
    run_program(&dir, "gcc", &bfd, &objs, "direct");
    partial_links(&linker, &dir, &objs, &[]);
    let lines = |prog: &str| {
        ["main", "greeting", "tunable"]
            .map(|f| {
                let nm = common::tool_ok("nm", &[prog], &dir);
                let addr = nm
                    .lines()
                    .find(|l| l.ends_with(&format!(" {f}")))
                    .and_then(|l| l.split_whitespace().next())
                    .unwrap_or_else(|| panic!("{prog}: no {f}"))
                    .to_string();
                common::tool_ok("addr2line", &["-e", prog, &addr], &dir)
                    .trim()
                    .to_string()
            })
            .join("\n")
    };
    let expected = lines("direct");
    assert!(
        expected.contains("data.c:7") && expected.contains("main.c:"),
        "{expected}"
    );
    for (side, s) in [("bfd", &bfd), ("rivet", &shim)] {
        run_program(&dir, "gcc", s, &["rivet.o"], side);
        assert_eq!(lines(side), expected, "final link by {side}");
    }
    let debug_sections = |obj: &str| {
        let out = common::tool_ok("readelf", &["-SW", obj], &dir);
        out.lines().filter(|l| l.contains(".debug_")).count()
    };
    assert!(debug_sections("rivet.o") > 0);
    for opt in ["-S", "-s"] {
        partial_links(&linker, &dir, &objs, &[opt]);
        assert_eq!(debug_sections("rivet.o"), 0, "{opt}");
        assert_eq!(symbols(&dir, "rivet.o"), symbols(&dir, "bfd.o"), "{opt}");
        run_program(&dir, "gcc", &shim, &["rivet.o"], "stripped");
    }
}

/// (4) Archive members are pulled in by the partial link's undefined references (and all of them with
/// `--whole-archive`, the `-e` symbol's with `-e`), as GNU ld pulls them.
#[test]
fn archive_members_pulled_in() {
    let Some((dir, _shim, _bfd)) = common::against_gnu_ld("reloc-archive", &["gcc", "nm", "ar"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    compile(
        &dir,
        "gcc",
        &["-O1"],
        &[
            (
                "user.c",
                "extern int lib_one(void);\nint use(void) { return lib_one(); }\n",
            ),
            ("one.c", "int lib_one(void) { return 11; }\n"),
            ("two.c", "int lib_two(void) { return 12; }\n"),
        ],
    );
    common::tool_ok("ar", &["rcs", "libparts.a", "one.o", "two.o"], &dir);
    for extra in [
        &[][..],
        &["--whole-archive"],
        &["-e", "lib_two"],
        &["-u", "lib_two"],
    ] {
        let mut inputs = vec!["user.o"];
        inputs.extend(extra);
        inputs.extend(["-L.", "-lparts"]);
        partial_links(&linker, &dir, &inputs, &[]);
        let syms = symbols(&dir, "rivet.o");
        assert!(
            syms.iter().any(|s| s.ends_with("T lib_one")),
            "{extra:?}: {syms:?}"
        );
        assert_eq!(syms, symbols(&dir, "bfd.o"), "{extra:?}");
    }
}

/// (5) The output reads back cleanly: `readelf -a` without a warning, and GNU ld's `-r` takes it again (a second
/// partial link) into an object that links and runs.
#[test]
fn output_reads_back_and_relinks() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-readback", &["g++", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let objs = compile(
        &dir,
        "g++",
        &["-O1", "-g"],
        &[("one.cc", CXX_ONE), ("two.cc", CXX_TWO)],
    );
    let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
    let expected = run_program(&dir, "g++", &bfd, &objs, "direct");
    partial_links(&linker, &dir, &objs, &[]);
    let read = common::tool("readelf", &["-a", "-W", "rivet.o"], Some(&dir));
    assert!(read.success() && read.stderr.is_empty(), "{}", read.log());
    assert!(read.stdout_str().contains("REL (Relocatable file)"));
    common::tool_ok("ld.bfd", &["-r", "-o", "again.o", "rivet.o"], &dir);
    assert_eq!(
        run_program(&dir, "g++", &shim, &["again.o"], "again"),
        expected
    );
    // And the linker under test takes its own output again.
    link_ok(&linker, &["-r", "-o", "twice.o", "rivet.o"], &dir);
    assert_eq!(
        run_program(&dir, "g++", &bfd, &["twice.o"], "twice"),
        expected
    );
}

/// An input that is not an object is the usual error, and no output is written; `-r` with `-shared` or `-pie`
/// is GNU ld's error.
#[test]
fn bad_inputs_write_nothing() {
    let Some((linker, dir)) = common::rivet_only("reloc-bad", &["gcc"], "rivet's own messages")
    else {
        return;
    };
    let ok = "int other(void);\nint ok(void) { return other(); }\n";
    compile(&dir, "gcc", &[], &[("ok.c", ok)]);
    std::fs::write(dir.join("junk.o"), b"\x00\x01 this is not an object").unwrap();
    let l = linker.to_str().unwrap();
    let out = common::tool(l, &["-r", "-o", "out.o", "ok.o", "junk.o"], Some(&dir));
    assert_eq!(out.code, Some(1), "{}", out.log());
    assert!(
        out.stderr_str().contains("junk.o: unknown file type"),
        "{}",
        out.log()
    );
    assert!(!dir.join("out.o").exists());
    for (opt, msg) in [("-shared", "-r and -shared"), ("-pie", "-r and -pie")] {
        let out = common::tool(l, &["-r", opt, "-o", "out.o", "ok.o"], Some(&dir));
        assert!(out.stderr_str().contains(msg), "{}", out.log());
        assert!(!dir.join("out.o").exists());
    }
    let out = common::tool(
        l,
        &["-r", "--gc-sections", "-o", "out.o", "ok.o"],
        Some(&dir),
    );
    assert!(
        out.stderr_str().contains("requires a defined symbol root"),
        "{}",
        out.log()
    );
    // A relocation that names a symbol beyond the symbol table.
    let mut obj = std::fs::read(dir.join("ok.o")).unwrap();
    corrupt_first_relocation(&mut obj);
    std::fs::write(dir.join("badrel.o"), &obj).unwrap();
    let out = common::tool(l, &["-r", "-o", "out.o", "badrel.o"], Some(&dir));
    assert_eq!(out.code, Some(1), "{}", out.log());
    assert!(
        out.stderr_str().contains("beyond the symbol table"),
        "{}",
        out.log()
    );
    assert!(!dir.join("out.o").exists());
    // A relocatable object is not a program: not made executable.
    link_ok(&linker, &["-r", "-o", "out.o", "ok.o"], &dir);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join("out.o"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0, "{mode:o}");
}

const VIS_ONE: &str = r#"__attribute__((visibility("hidden"))) int hid = 1;
__attribute__((visibility("protected"))) int prot = 2;
extern __thread int ext_tls;
__attribute__((visibility("hidden"))) extern int undef_hidden;
int use1(void) { return ext_tls + undef_hidden; }
__attribute__((weak)) extern int wref(void);
__attribute__((weak)) extern int only_weak(void);
int use_w(void) { return (wref ? wref() : 0) + (only_weak ? only_weak() : 0); }
"#;

const VIS_TWO: &str = r#"extern int hid, prot;
int wref(void);
int use2(void) { return hid + prot + wref(); }
__asm__(".symver old_f, f@VER_1\n.symver new_f, f@@VER_2");
int old_f(void) { return 1; }
int new_f(void) { return 2; }
"#;

/// Symbol attributes carried as GNU ld's `-r` carries them: visibility (hidden and protected definitions, a
/// hidden undefined reference), an undefined TLS reference's type, weak only where every reference is weak,
/// `.symver` names with their versions: `readelf -s`'s lines, but their numbers, are GNU ld's.
#[test]
fn symbol_attributes_match_gnu_ld() {
    let Some((dir, _shim, _bfd)) = common::against_gnu_ld("reloc-symbols", &["gcc", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let objs = compile(
        &dir,
        "gcc",
        &["-O1"],
        &[("one.c", VIS_ONE), ("two.c", VIS_TWO)],
    );
    let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
    partial_links(&linker, &dir, &objs, &[]);
    let table = |obj: &str| {
        let out = common::tool_ok("readelf", &["-sW", obj], &dir);
        let mut v: Vec<String> = out
            .lines()
            .filter(|l| {
                l.trim_start()
                    .split(':')
                    .next()
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .map(|l| common::squash_ws(l.split_once(':').unwrap().1))
            .collect();
        v.sort();
        v
    };
    let rivet = table("rivet.o");
    assert!(rivet.iter().any(|l| l.ends_with("f@@VER_2")), "{rivet:?}");
    assert!(
        rivet
            .iter()
            .any(|l| l.contains("TLS GLOBAL DEFAULT UND ext_tls")),
        "{rivet:?}"
    );
    assert!(
        rivet
            .iter()
            .any(|l| l.contains("WEAK DEFAULT UND only_weak")),
        "{rivet:?}"
    );
    assert_eq!(rivet, table("bfd.o"));
}

/// Points the first relocation of the first `SHT_RELA` section of ELF64 object `obj` at symbol 0xffffff.
fn corrupt_first_relocation(obj: &mut [u8]) {
    let u64_at =
        |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let u16_at =
        |b: &[u8], at: usize| u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as usize;
    let (shoff, shnum) = (u64_at(obj, 0x28), u16_at(obj, 0x3c));
    for k in 0..shnum {
        let h = shoff + 64 * k;
        let (ty, off, size) = (obj[h + 4], u64_at(obj, h + 24), u64_at(obj, h + 32));
        if ty == 4 && size >= 24 {
            obj[off + 12..off + 16].copy_from_slice(&0xff_ffffu32.to_le_bytes());
            return;
        }
    }
    panic!("no relocations to corrupt");
}

/// Each member's `.rodata` and `.rodata.*` and the symbols they define, for `load_order_matches_gnu_ld`: `main`
/// refers to `f3` and `f2`, `m3` to `f1`, `m1` to `f4`, so GNU ld loads m2, m3 (first pass over the archive),
/// then m1 and m4 (second pass); `g3` in the second archive refers back to the first (a group).
fn member(i: u32, needs: Option<u32>) -> String {
    let call = needs.map_or(format!("ro_m{i}"), |n| format!("f{n}()"));
    let decl = needs.map_or(String::new(), |n| format!("const char *f{n}(void);\n"));
    format!(
        "{decl}const char ro_m{i}[] = \"m{i}\";\n\
         __attribute__((section(\".rodata.tab\"))) const int tab_m{i} = {i};\n\
         const char *f{i}(void) {{ return {call} ? ro_m{i} : 0; }}\n"
    )
}

/// The archive members' sections and symbols in the order GNU ld loads them (not the archive's), within
/// `.rodata`, `.rodata.tab` and `.text` and in `.symtab` (the kernel's `vmlinux.o` is such a partial link).
#[test]
fn load_order_matches_gnu_ld() {
    let Some((dir, _shim, _bfd)) =
        common::against_gnu_ld("reloc-load-order", &["gcc", "ar", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let mut sources: Vec<(String, String)> =
        [(1, Some(4)), (2, None), (3, Some(1)), (4, None), (5, None)]
            .into_iter()
            .map(|(i, n)| (format!("m{i}.c"), member(i, n)))
            .collect();
    sources.push((
        "g1.c".into(),
        "const char ro_g1[] = \"g1\";\nconst char *g1(void) { return ro_g1; }\n".into(),
    ));
    sources.push((
        "g3.c".into(),
        "const char ro_g3[] = \"g3\";\nconst char *f5(void);\nconst char *g3(void) { return f5() ? ro_g3 : 0; }\n"
            .into(),
    ));
    sources.push((
        "main.c".into(),
        "const char ro_main[] = \"main\";\nconst char *f3(void), *f2(void), *g3(void);\n\
         const char *g(void) { return f3() && g3() ? f2() : ro_main; }\n"
            .into(),
    ));
    let sources: Vec<(&str, &str)> = sources
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    compile(&dir, "gcc", &["-O1"], &sources);
    common::tool_ok(
        "ar",
        &["rcs", "liba.a", "m1.o", "m2.o", "m3.o", "m4.o", "m5.o"],
        &dir,
    );
    common::tool_ok("ar", &["rcs", "libg.a", "g1.o", "g3.o"], &dir);
    let dump = |obj: &str| -> Vec<String> {
        let mut v = Vec::new();
        for sec in [".rodata", ".rodata.tab", ".text"] {
            v.push(common::tool_ok("readelf", &["-x", sec, obj], &dir));
        }
        let syms = common::tool_ok("readelf", &["-sW", obj], &dir);
        // The files' locals in order, by name and value (the section header order is GNU ld's in broad classes
        // only, see the README).
        v.extend(
            syms.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .filter(|f| f.len() == 8 && f[4] == "LOCAL" && f[3] != "SECTION")
                .map(|f| format!("{} {} {}", f[7], f[1], f[3])),
        );
        v
    };
    let inputs = ["main.o", "--start-group", "liba.a", "libg.a", "--end-group"];
    partial_links(&linker, &dir, &inputs, &[]);
    let (want, got) = (dump("bfd.o"), dump("rivet.o"));
    assert_eq!(got, want);
    // The strings in GNU ld's order: main, then m2 and m3, m1 and m4, then g3, then m5 (g3 needs it).
    assert!(
        want[0].contains("main.m2.m3.m1.m4") && want[0].contains(".g3.m5."),
        "{}",
        want[0]
    );
}

/// GNU ld's `-r` of two C++ objects with one inline function each keeps one COMDAT copy and leaves an
/// `R_X86_64_NONE` where it dropped the other's FDE, at a record's start: the linker under test links that object
/// into the program GNU ld makes of it.
#[test]
fn links_gnu_partial_links_of_duplicate_comdats() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-gnu-none", &["g++"]) else {
        return;
    };
    let inline = "inline __attribute__((noinline)) int inl(int x) { static int calls; calls++; \
                  return x * 3 + calls; }\n";
    let objs = compile(
        &dir,
        "g++",
        &["-O1"],
        &[
            (
                "i1.cc",
                &format!("{inline}int f1(int x) {{ return inl(x); }}\n"),
            ),
            (
                "i2.cc",
                &format!("{inline}int f2(int x) {{ return inl(x); }}\n"),
            ),
            (
                "main.cc",
                "#include <cstdio>\nint f1(int); int f2(int);\n\
                 int main() { std::printf(\"%d %d\\n\", f1(1), f2(2)); }\n",
            ),
        ],
    );
    common::tool_ok("ld.bfd", &["-r", &objs[0], &objs[1], "-o", "part.o"], &dir);
    let expected = run_program(&dir, "g++", &bfd, &["part.o", &objs[2]], "by-bfd");
    assert_eq!(expected, "5 7\n");
    assert_eq!(
        run_program(&dir, "g++", &shim, &["part.o", &objs[2]], "by-test"),
        expected
    );
}

/// `ld -r -b binary FILE` (build systems embedding a blob) makes GNU ld's object: the bytes in `.data`, and
/// `_binary_NAME_start`, `_end` and `_size` (`nm` lists the same); a program that prints the blob through them
/// prints it, with the object made by either linker, and `-b binary` among other inputs of a final link too.
#[test]
fn binary_input_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-binary", &["gcc", "nm"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/blob-1.txt"), "hello from a blob\n").unwrap();
    let objs = compile(
        &dir,
        "gcc",
        &["-O1"],
        &[(
            "main.c",
            "#include <stdio.h>\nextern const char _binary_sub_blob_1_txt_start[], _binary_sub_blob_1_txt_end[];\n\
             int main(void) { fwrite(_binary_sub_blob_1_txt_start, 1, \
             _binary_sub_blob_1_txt_end - _binary_sub_blob_1_txt_start, stdout); return 0; }\n",
        )],
    );
    let args = ["-r", "-b", "binary", "sub/blob-1.txt", "-o"];
    common::tool_ok("ld.bfd", &[&args[..], &["blob-bfd.o"]].concat(), &dir);
    link_ok(&linker, &[&args[..], &["blob-test.o"]].concat(), &dir);
    let nm = |o: &str| common::tool_ok("nm", &[o], &dir);
    assert_eq!(nm("blob-test.o"), nm("blob-bfd.o"));
    let expected = "hello from a blob\n";
    for (side, s) in [("bfd", &bfd), ("test", &shim)] {
        for blob in ["blob-bfd.o", "blob-test.o"] {
            let out = run_program(&dir, "gcc", s, &[&objs[0], blob], &format!("{side}-{blob}"));
            assert_eq!(out, expected, "{blob} linked by {side}");
        }
    }
    // In a final link, between other inputs; `-b default` ends it.
    let b = format!("-B{}/", shim.display());
    common::tool_ok(
        "gcc",
        &[
            &b,
            "-o",
            "direct",
            &objs[0],
            "-Wl,-b,binary,sub/blob-1.txt,-b,default",
        ],
        &dir,
    );
    let run = common::tool(dir.join("direct").to_str().unwrap(), &[], Some(&dir));
    assert_eq!(run.stdout_str(), expected);
}

/// `-fpatchable-function-entry` with an inline function in two objects: GCC 12 puts each function's entry in a
/// `SHF_LINK_ORDER` section outside the function's COMDAT group, which goes with the copy it follows. The final
/// link of the objects, and of the linker's `-r` of them, has GNU ld's entries: one per kept function, none null.
#[test]
fn link_order_sections_of_discarded_comdat_copies() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-patchable", &["g++"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let inline = "inline int __attribute__((noinline)) pinl(int x) { return x * 5; }\n";
    let pf = |name: &str, body: &str| {
        std::fs::write(dir.join(name), format!("{inline}{body}")).unwrap();
        let obj = name.replace(".cc", ".o");
        common::tool_ok(
            "g++",
            &[
                "-O2",
                "-fpatchable-function-entry=2",
                "-c",
                name,
                "-o",
                &obj,
            ],
            &dir,
        );
        obj
    };
    let one = pf(
        "pf1.cc",
        "__attribute__((noinline)) int pa(int x) { return x + 1; }\nint pb(int x) { return pa(x) + pinl(x); }\n",
    );
    let two = pf("pf2.cc", "int pc(int x) { return pinl(x) + 3; }\n");
    let main = compile(
        &dir,
        "g++",
        &["-O2"],
        &[(
            "main.cc",
            "#include <cstdio>\nextern \"C\" void *__start___patchable_function_entries[], \
             *__stop___patchable_function_entries[];\nint pb(int), pc(int);\n\
             int main() { int n = 0, null = 0; std::printf(\"%d %d\\n\", pb(1), pc(2));\n\
             for (void **p = __start___patchable_function_entries; p < __stop___patchable_function_entries; p++)\n\
             { n++; null += !*p; }\nstd::printf(\"%d entries, %d null\\n\", n, null); }\n",
        )],
    );
    let objs = [one.as_str(), two.as_str(), main[0].as_str()];
    let expected = run_program(&dir, "g++", &bfd, &objs, "by-bfd");
    assert!(expected.ends_with("3 entries, 0 null\n"), "{expected}");
    assert_eq!(run_program(&dir, "g++", &shim, &objs, "by-test"), expected);
    link_ok(&linker, &["-r", &one, &two, "-o", "part.o"], &dir);
    for (side, s) in [("bfd", &bfd), ("test", &shim)] {
        let out = run_program(
            &dir,
            "g++",
            s,
            &["part.o", &main[0]],
            &format!("part-{side}"),
        );
        assert_eq!(out, expected, "-r output linked by {side}");
    }
}

/// `ld -r -T module.lds` (how the Linux kernel links a module; the script is its `scripts/module.lds.S`, cut to
/// what a user-space program can run): `/DISCARD/` drops sections and their symbols, `SORT` orders
/// `___ksymtab+*` by name and `.init_array.*` by priority, one `__patchable_function_entries` gathers every
/// input's. The sections' contents are GNU ld's, and the program of either object runs as GNU ld's does.
#[test]
fn module_script_in_partial_link_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-module-lds", &["gcc", "objdump"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(
        dir.join("module.lds"),
        "SECTIONS {\n  /DISCARD/ : { *(.discard) *(.discard.*) }\n\
         __ksymtab 0 : { *(SORT(___ksymtab+*)) }\n\
         .ctors 0 : ALIGN(8) { *(SORT(.ctors.*)) *(.ctors) }\n\
         .init_array 0 : ALIGN(8) { *(SORT(.init_array.*)) *(.init_array) }\n\
         __bug_table 0 : ALIGN(8) { KEEP(*(__bug_table)) }\n\
         __patchable_function_entries : { *(__patchable_function_entries) }\n}\n",
    )
    .unwrap();
    let a = "#include <stdio.h>\n__attribute__((section(\"___ksymtab+zeta\"))) int kz = 3;\n\
             __attribute__((section(\"___ksymtab+alpha\"))) int ka = 1;\n\
             __attribute__((section(\".discard.x\"))) int dropped = 9;\n\
             __attribute__((constructor(200))) static void c200(void) { puts(\"ctor 200\"); }\n\
             __attribute__((constructor(101))) static void c101(void) { puts(\"ctor 101\"); }\n\
             int fa(int x) { return x + 1; }\n";
    let b = "#include <stdio.h>\n__attribute__((section(\"___ksymtab+beta\"))) int kb = 2;\n\
             __attribute__((constructor(150))) static void c150(void) { puts(\"ctor 150\"); }\n\
             int fb(int x) { return x * 2; }\n";
    let m = "#include <stdio.h>\nextern int fa(int), fb(int);\n\
             extern void *__start___patchable_function_entries[], *__stop___patchable_function_entries[];\n\
             int main(void) { printf(\"%d %d %ld\\n\", fa(1), fb(2), (long)(__stop___patchable_function_entries \
             - __start___patchable_function_entries)); return 0; }\n";
    let objs = compile(
        &dir,
        "gcc",
        &["-O1", "-fpatchable-function-entry=1"],
        &[("a.c", a), ("b.c", b)],
    );
    let main = compile(&dir, "gcc", &["-O1"], &[("m.c", m)]);
    let args = ["-r", "-T", "module.lds", &objs[0], &objs[1], "-o"];
    common::tool_ok("ld.bfd", &[&args[..], &["bfd.o"]].concat(), &dir);
    link_ok(&linker, &[&args[..], &["test.o"]].concat(), &dir);
    let contents = |o: &str, sec: &str| {
        let d = common::tool_ok("objdump", &["-s", "-j", sec, o], &dir);
        d.lines()
            .skip_while(|l| !l.starts_with("Contents"))
            .skip(1)
            // The bytes, not the offsets objdump prints (GNU ld gives a section without `0` the location
            // counter).
            .map(|l| {
                l.split_whitespace()
                    .skip(1)
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for sec in ["__ksymtab", "__patchable_function_entries", ".init_array"] {
        assert_eq!(contents("test.o", sec), contents("bfd.o", sec), "{sec}");
    }
    let nm = common::tool_ok("nm", &["test.o"], &dir);
    assert!(!nm.contains("dropped"), "{nm}");
    let expected = "ctor 101\nctor 150\nctor 200\n2 4 5\n";
    for (side, s) in [("bfd", &bfd), ("test", &shim)] {
        for o in ["bfd.o", "test.o"] {
            let out = run_program(&dir, "gcc", s, &[o, &main[0]], &format!("{side}-{o}"));
            assert_eq!(out, expected, "{o} linked by {side}");
        }
    }
}

/// `.note.GNU-stack` of `-r`'s output as GNU ld's, for inputs with a plain note, an executable one, none, and a
/// mix, under no option, `-z execstack` and `-z noexecstack`: the inputs' notes decide where one has a note, the
/// options only where none has, and without them such an output has no note.
#[test]
fn stack_note_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-stack-note", &["gcc", "as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("s.c"), "int f(void) { return 1; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "s.c", "-o", "plain.o"], &dir);
    common::tool_ok(
        "gcc",
        &["-c", "-Wa,--execstack", "s.c", "-o", "exec.o"],
        &dir,
    );
    std::fs::write(dir.join("empty.s"), "").unwrap();
    common::tool_ok("as", &["empty.s", "-o", "none.o"], &dir);
    // The note's presence and whether it is executable.
    let note = |o: &str| {
        let s = common::tool_ok("readelf", &["-SW", o], &dir);
        let line = s.lines().find(|l| l.contains(".note.GNU-stack"));
        line.map(|l| l.split_whitespace().rev().nth(3) == Some("X"))
    };
    for inputs in [
        &["plain.o"][..],
        &["exec.o"],
        &["none.o"],
        &["plain.o", "none.o"],
    ] {
        for z in [&[][..], &["-z", "execstack"], &["-z", "noexecstack"]] {
            let args = [&["-r"][..], z, inputs].concat();
            common::tool_ok("ld.bfd", &[&args[..], &["-o", "bfd.o"]].concat(), &dir);
            link_ok(&linker, &[&args[..], &["-o", "test.o"]].concat(), &dir);
            assert_eq!(note("test.o"), note("bfd.o"), "{inputs:?} {z:?}");
        }
    }
}

/// Sets the `sh_entsize` of section `name` of the ELF64 object `obj` (objtool writes `.orc_unwind`'s 6 and
/// `.orc_unwind_ip`'s 4; the assembler cannot without `SHF_MERGE`).
fn set_entsize(obj: &mut [u8], name: &str, entsize: u64) {
    let u16_at =
        |o: &[u8], at: usize| u16::from_le_bytes(o[at..at + 2].try_into().unwrap()) as usize;
    let u64_at =
        |o: &[u8], at: usize| u64::from_le_bytes(o[at..at + 8].try_into().unwrap()) as usize;
    let (shoff, shnum, shstrndx) = (u64_at(obj, 0x28), u16_at(obj, 0x3c), u16_at(obj, 0x3e));
    let strtab = u64_at(obj, shoff + 64 * shstrndx + 0x18);
    let at = (0..shnum)
        .map(|i| shoff + 64 * i)
        .find(|&h| {
            let n = strtab + u32::from_le_bytes(obj[h..h + 4].try_into().unwrap()) as usize;
            obj[n..].starts_with(name.as_bytes()) && obj[n + name.len()] == 0
        })
        .unwrap_or_else(|| panic!("no section {name}"));
    obj[at + 0x38..at + 0x40].copy_from_slice(&entsize.to_le_bytes());
}

/// The entry size of each output section of a partial link, as GNU ld gives it: a mergeable section's and an
/// array's (`.init_array`), but 0 for other sections whatever their inputs say (the kernel's ORC tables).
#[test]
fn entry_sizes_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-entsize", &["gcc", "as", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let src = r#"
	.section .orc_unwind,"a",@progbits
	.byte 1, 2, 3, 4, 5, 6
	.section .orc_unwind_ip,"a",@progbits
	.long 0
	.section .rodata.cst4,"aM",@progbits,4
	.long 7
	.section .init_array,"aw",@init_array
	.quad 0
"#;
    std::fs::write(dir.join("t.s"), src).unwrap();
    common::tool_ok("as", &["t.s", "-o", "t.o"], &dir);
    let mut obj = std::fs::read(dir.join("t.o")).unwrap();
    set_entsize(&mut obj, ".orc_unwind", 6);
    set_entsize(&mut obj, ".orc_unwind_ip", 4);
    std::fs::write(dir.join("t.o"), obj).unwrap();
    let sizes = |o: &str| {
        let s = common::tool_ok("readelf", &["-SW", o], &dir);
        let mut v: Vec<String> = (s.lines())
            .filter_map(|l| l.trim_start().strip_prefix('[')?.split_once(']'))
            .map(|(_, rest)| rest.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() > 5 && !f[0].starts_with(".rela") && f[0] != "Name")
            .map(|f| format!("{} {}", f[0], f[5]))
            .collect();
        v.sort();
        v
    };
    assert!(
        sizes("t.o").contains(&".orc_unwind 06".to_string()),
        "{:?}",
        sizes("t.o")
    );
    common::tool_ok("ld.bfd", &["-r", "t.o", "-o", "bfd.o"], &dir);
    link_ok(&linker, &["-r", "t.o", "-o", "test.o"], &dir);
    assert_eq!(sizes("test.o"), sizes("bfd.o"));
}

/// An object with local symbols but no `STT_FILE` symbol (assembly without `.file`, as GRUB's relocator16.S
/// gives): GNU ld's partial link writes one named after the object before its locals, so that they are not taken
/// for the previous object's (symbolizers and `nm -l` group locals by file); an object that has one, or has no
/// locals, gets none. `.symtab`'s local entries compared with GNU ld's, in order.
#[test]
fn file_symbols_for_objects_without_one_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-file-syms", &["gcc", "as", "readelf"])
    else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(
        dir.join("c.c"),
        "static int counter;\nint bump(void) { return ++counter; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("a.s"), ".text\nL_base:\n\tnop\nlocal_fn:\n\tjmp L_base\n.globl entry\nentry:\n\tcall local_fn\n\tret\n").unwrap();
    std::fs::write(
        dir.join("g.s"),
        ".text\n.globl only_global\nonly_global:\n\tret\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-O1", "-c", "c.c"], &dir);
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    common::tool_ok("as", &["g.s", "-o", "g.o"], &dir);
    let locals = |o: &str| -> Vec<String> {
        let s = common::tool_ok("readelf", &["-sW", o], &dir);
        (s.lines())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() >= 8 && f[4] == "LOCAL" && f[3] != "SECTION")
            .map(|f| format!("{} {}", f[3], f[7]))
            .collect()
    };
    let args = ["-r", "c.o", "./a.o", "g.o", "-o"];
    common::tool_ok("ld.bfd", &[&args[..], &["bfd.o"]].concat(), &dir);
    link_ok(&linker, &[&args[..], &["test.o"]].concat(), &dir);
    let want = locals("bfd.o");
    assert!(want.contains(&"FILE a.o".to_string()), "{want:?}");
    assert_eq!(locals("test.o"), want);
}

/// `--defsym` and a script's assignments outside `SECTIONS` in a partial link, as GNU ld writes them: a constant an
/// absolute symbol, a name the symbol's place (a chain of names too), `PROVIDE` only what an input refers to,
/// `HIDDEN`/`PROVIDE_HIDDEN` locals, an input's definition overridden (its type and size kept). The symbols (with
/// their sections by name) and relocations must be GNU ld's, and the object must link into a program that prints
/// what GNU ld's does. Expressions of symbols other than a name, and names nothing defines, are refused.
#[test]
fn symbol_assignments_as_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("reloc-assign", &["gcc", "readelf"]) else {
        return;
    };
    let (linker, overridden) = common::linker_under_test();
    std::fs::write(
        dir.join("p.c"),
        "#include <stdio.h>\nextern char prov_used[], ph[], hid[], abs_sym[], alias_fn[];\nint over = 1;\n\
         int base_var = 3;\nint func(void) { return base_var; }\n\
         int main(void) { printf(\"%lx %lx %lx %lx %lx %d\\n\", (long)prov_used, (long)ph, (long)hid, \
         (long)abs_sym, (long)&over, ((int (*)(void))alias_fn)()); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.ld"),
        "HIDDEN(hid = 0x7);\nPROVIDE(prov_used = 0x9);\nPROVIDE(prov_unused = 10);\nPROVIDE_HIDDEN(ph = 0xb);\n\
         over = 12;\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-O2", "-fno-pie", "-c", "p.c"], &dir);
    let args = [
        "-r",
        "p.o",
        "a.ld",
        "--defsym",
        "abs_sym=0x1234",
        "--defsym",
        "alias_fn=func",
        "--defsym",
        "chain=alias_fn",
        "--defsym",
        "sum=0x10+0x20",
        "-o",
    ];
    common::tool_ok("ld.bfd", &[&args[..], &["bfd.o"]].concat(), &dir);
    link_ok(&linker, &[&args[..], &["test.o"]].concat(), &dir);
    // Symbols: name, type, binding, size, value and section by name; relocations: offset, type, symbol, addend.
    let syms = |o: &str| -> Vec<String> {
        let headers = common::tool_ok("readelf", &["-SW", o], &dir);
        let names: Vec<(String, String)> = (headers.lines())
            .filter_map(|l| l.trim_start().strip_prefix('['))
            .filter_map(|l| {
                let (n, rest) = l.split_once(']')?;
                Some((
                    n.trim().to_string(),
                    rest.split_whitespace().next()?.to_string(),
                ))
            })
            .collect();
        let out = common::tool_ok("readelf", &["-sW", o], &dir);
        let mut v: Vec<String> = (out.lines())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() >= 8 && f[0].ends_with(':') && f[3] != "SECTION" && f[3] != "FILE")
            .map(|f| {
                let sec = names
                    .iter()
                    .find(|(n, _)| n == f[6])
                    .map_or(f[6], |(_, s)| s.as_str());
                format!("{} {} {} {} {} {}", f[7], f[3], f[4], f[2], f[1], sec)
            })
            .collect();
        v.sort();
        v
    };
    let relocs = |o: &str| -> Vec<String> {
        let out = common::tool_ok("readelf", &["-rW", o], &dir);
        let mut v: Vec<String> = (out.lines())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() >= 5 && f[2].starts_with("R_X86_64"))
            .map(|f| f[2..].join(" "))
            .collect();
        v.sort();
        v
    };
    let want = syms("bfd.o");
    assert!(
        want.iter().any(|s| s.starts_with("hid NOTYPE LOCAL")),
        "{want:?}"
    );
    assert_eq!(syms("test.o"), want);
    assert_eq!(relocs("test.o"), relocs("bfd.o"));
    let runs: Vec<String> = [("bfd.o", &bfd), ("test.o", &shim)]
        .iter()
        .map(|(o, b)| {
            let exe = format!("{o}.exe");
            let b = format!("-B{}/", b.display());
            common::tool_ok("gcc", &[&b, "-no-pie", o, "-o", &exe], &dir);
            common::tool_ok(&dir.join(&exe).display().to_string(), &[], &dir)
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    assert!(runs[1].starts_with("9 b 7 1234 c 3"), "{}", runs[1]);
    // rivet's refusals (GNU ld makes `x` an absolute 4 of the first).
    if overridden {
        return;
    }
    for (defsym, want) in [
        (
            "x=func+4",
            "only a constant or a symbol's name can be assigned with -r",
        ),
        (
            "x=nothing_defines_this",
            "undefined symbol 'nothing_defines_this' referenced in expression",
        ),
    ] {
        let o = common::tool(
            linker.to_str().unwrap(),
            &["-r", "p.o", "--defsym", defsym, "-o", "x.o"],
            Some(&dir),
        );
        assert!(
            !o.success() && o.stderr_str().contains(want),
            "{defsym}: {}",
            o.log()
        );
    }
}

/// `-Map` with `-r`, in rivet's map format: each output section at 0, its input sections at their offsets in the
/// output (compared with GNU ld's `-r` map: the same input sections at the same offsets and sizes, from the same
/// files; `.eh_frame` left out, as rivet keeps each input's terminator), and under each the symbols it defines.
#[test]
fn map_of_a_partial_link() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-map", &["gcc"]) else {
        return;
    };
    let (linker, overridden) = common::linker_under_test();
    if overridden {
        eprintln!("skipped: rivet's map format");
        return;
    }
    let objs = compile(
        &dir,
        "gcc",
        &["-O2", "-ffunction-sections"],
        &[
            (
                "a.c",
                "int a_data = 1;\nstatic int a_count;\nint a_fn(void) { return ++a_count + a_data; }\n",
            ),
            (
                "b.c",
                "const char b_ro[] = \"b\";\nint b_data = 2;\nint b_fn(int x) { return x * b_data; }\n",
            ),
        ],
    );
    let mut args: Vec<&str> = vec!["-r", "-Map", "rivet.map", "-o", "r.o"];
    args.extend(objs.iter().map(String::as_str));
    link_ok(&linker, &args, &dir);
    common::tool_ok(
        "ld.bfd",
        &[
            &["-r", "-Map", "bfd.map", "-o", "gnu.o"][..],
            &objs.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
        &dir,
    );
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    // GNU's lines: ` .name 0xOFFSET 0xSIZE file`.
    let mut gnu: Vec<String> = (read("bfd.map").lines())
        .filter(|l| l.starts_with(" .") && !l.starts_with(" .eh_frame"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 4 && f[1].starts_with("0x"))
        .map(|f| {
            let n = |s: &str| u64::from_str_radix(&s[2..], 16).unwrap();
            format!("{}:({}) {:x} {:x}", f[3], f[0], n(f[1]), n(f[2]))
        })
        .collect();
    gnu.sort();
    let map = read("rivet.map");
    let mut ours: Vec<String> = (map.lines())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 4 && f[3].contains(":(") && !f[3].contains("(.eh_frame)"))
        .map(|f| format!("{} {} {}", f[3], f[0], f[1]))
        .collect();
    ours.sort();
    assert!(
        gnu.iter().any(|l| l.starts_with("a.o:(.text.a_fn)")),
        "{gnu:?}"
    );
    assert_eq!(ours, gnu, "{map}");
    for sym in ["a_fn", "a_data", "a_count", "b_ro", "b_data", "b_fn"] {
        assert!(
            map.lines()
                .any(|l| l.split_whitespace().last() == Some(sym)),
            "{sym}: {map}"
        );
    }
}

/// `--package-metadata` in a partial link (distributions' LDFLAGS carry it into every link, `-r` ones too): GNU ld's
/// `.note.package`, after the inputs' own notes of that name, byte for byte.
#[test]
fn package_note_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-package", &["gcc", "readelf"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    compile(
        &dir,
        "gcc",
        &["-O2"],
        &[("a.c", "int a_fn(void) { return 1; }\n")],
    );
    let note = |o: &str| common::tool_ok("readelf", &["-x", ".note.package", o], &dir);
    let meta = r#"--package-metadata={"type":"rpm","name":"rivet"}"#;
    common::tool_ok("ld.bfd", &["-r", meta, "a.o", "-o", "bfd1.o"], &dir);
    link_ok(&linker, &["-r", meta, "a.o", "-o", "test1.o"], &dir);
    assert!(note("bfd1.o").contains("rivet"), "{}", note("bfd1.o"));
    assert_eq!(note("test1.o"), note("bfd1.o").replace("bfd1.o", "test1.o"));
    // An input that has the note already: both, the input's first.
    let again = r#"--package-metadata={"again":2}"#;
    common::tool_ok("ld.bfd", &["-r", again, "bfd1.o", "-o", "bfd2.o"], &dir);
    link_ok(&linker, &["-r", again, "bfd1.o", "-o", "test2.o"], &dir);
    assert_eq!(note("test2.o"), note("bfd2.o").replace("bfd2.o", "test2.o"));
}

/// Code sections' padding between inputs: the architecture's no-ops, as GNU ld's `-r` writes them (a disassembler
/// or a later tool reading the gap sees instructions, not `add %al,(%rax)`). Data keeps zeros.
#[test]
fn code_padding_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-code-padding", &["as", "objdump"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("a.s"), ".text\nf1: ret\n.data\n.byte 1\n").unwrap();
    std::fs::write(
        dir.join("b.s"),
        ".text\n.p2align 5\nf2: ret\n.data\n.p2align 4\n.byte 2\n",
    )
    .unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    common::tool_ok("as", &["b.s", "-o", "b.o"], &dir);
    common::tool_ok("ld.bfd", &["-r", "a.o", "b.o", "-o", "bfd.o"], &dir);
    link_ok(&linker, &["-r", "a.o", "b.o", "-o", "test.o"], &dir);
    let bytes = |o: &str| {
        let s = common::tool_ok("objdump", &["-s", "-j", ".text", "-j", ".data", o], &dir);
        s.lines().skip(2).map(str::to_string).collect::<Vec<_>>()
    };
    assert!(
        bytes("bfd.o").iter().any(|l| l.contains("c3662e0f")),
        "{:?}",
        bytes("bfd.o")
    );
    assert_eq!(bytes("test.o"), bytes("bfd.o"));
}

/// `-x`, `-X`, `-s`, `-S` and their combinations in a partial link give GNU ld's `.symtab`: its locals in order
/// and its globals (types, bindings and names; GNU ld orders the globals by its hash table). `-x` and `-s` keep
/// only the locals a relocation names (a string's `.LC0`, a static TLS variable), with no `STT_FILE` symbol
/// (GNU ld adds an input's name only before locals kept for their own sake); `-r -s` is `-r -S -x` unless `-X`
/// or `--discard-none` says otherwise, and the later of `-s` and `-S` wins.
#[test]
fn discard_and_strip_options_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-discard", &["gcc", "readelf"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let a = "#include <stdio.h>\nstatic int counter;\nstatic __thread int tl;\n\
        __attribute__((noinline)) static int bump(void) { return ++counter + ++tl; }\n\
        int a_fn(void) { puts(\"from a\"); return bump() + 1; }\n";
    let b = "#include <stdio.h>\nint a_fn(void);\n\
        __attribute__((noinline)) static int helper(int x) { printf(\"helper %d\\n\", x); return x * 2; }\n\
        int main(void) { return a_fn() + helper(1) == 4 ? 0 : 1; }\n";
    let objs = compile(&dir, "gcc", &["-O2", "-g"], &[("a.c", a), ("b.c", b)]);
    let table = |o: &str| -> (Vec<String>, Vec<String>) {
        let s = common::tool_ok("readelf", &["-sW", o], &dir);
        let rows: Vec<Vec<&str>> = (s.lines())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() >= 7 && f[0].trim_end_matches(':').parse::<u32>().is_ok())
            .filter(|f| f[3] != "SECTION")
            .collect();
        let entry = |f: &Vec<&str>| format!("{} {} {}", f[3], f[4], f.get(7).unwrap_or(&""));
        let locals = (rows.iter())
            .filter(|f| f[4] == "LOCAL")
            .map(entry)
            .collect();
        let mut globals: Vec<String> = (rows.iter())
            .filter(|f| f[4] != "LOCAL")
            .map(entry)
            .collect();
        globals.sort();
        (locals, globals)
    };
    for opts in [
        &["-x"][..],
        &["-X"],
        &["-s"],
        &["-S"],
        &["-x", "-S"],
        &["-X", "-S"],
        &["--discard-all", "--strip-debug"],
        &["-s", "-x"],
        &["-s", "-X"],
        &["-X", "-s"],
        &["-s", "-S"],
        &["-S", "-s"],
        &["-s", "--discard-none"],
        &["-X", "-x"],
    ] {
        let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
        partial_links(&linker, &dir, &objs, opts);
        let want = table("bfd.o");
        assert_eq!(table("rivet.o"), want, "{opts:?}");
    }
    let files = |o: &str| {
        table(o)
            .0
            .into_iter()
            .filter(|l| l.starts_with("FILE"))
            .count()
    };
    partial_links(&linker, &dir, &["a.o", "b.o"], &["-x"]);
    assert_eq!(files("rivet.o"), 0);
    assert!(table("rivet.o").0.iter().any(|l| l.ends_with(".LC0")));
}

/// `readelf -SW`'s sections of `obj` as (name, type, flags), in order, with the sizes but of those whose sizes
/// differ from GNU ld's for other reasons (`.eh_frame`'s padding, the tables' sharing of strings).
fn section_list(dir: &Path, obj: &str) -> Vec<String> {
    let s = common::tool_ok("readelf", &["-SW", obj], dir);
    (s.lines())
        .filter_map(|l| l.trim_start().strip_prefix('[')?.split_once(']'))
        .map(|(_, rest)| rest.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 7 && f[0] != "Name")
        .map(|f| {
            let flags = if f.len() > 10 { f[6] } else { "" };
            let sized = ![".eh_frame", ".shstrtab", ".strtab", ".symtab"].contains(&f[0]);
            let size = if sized { f[4] } else { "" };
            format!("{} {} {flags} {size}", f[0], f[1])
        })
        .collect()
}

/// `--unique` (each orphan input section its own output section: `.mysec` twice, each input's
/// `.note.GNU-stack` with its own flags), `--unique=GLOB` (each input section it matches, the `.text` the default
/// script names too) and `--force-group-allocation` (COMDAT members placed as in a final link: no `SHT_GROUP`, no
/// `SHF_GROUP`, the losing copies still dropped) give GNU ld's sections and groups (`readelf -SWg`), and the
/// objects link into the program of the original objects. `--unique` without `-r` is refused.
#[test]
fn unique_and_force_group_allocation_as_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("reloc-unique", &["gcc", "g++", "as", "readelf"])
    else {
        return;
    };
    let (linker, overridden) = common::linker_under_test();
    let u1 = "int x1 = 1;\n__attribute__((section(\".mysec\"))) int m1 = 3;\n\
        int f1(void) { return x1 + m1; }\n";
    let u2 = "int x2 = 2;\n__attribute__((section(\".mysec\"))) int m2 = 4;\n\
        int f2(void) { return x2 + m2; }\n";
    let tf = "template<class T> T tf(T x) { return x + 1; }\n";
    let u3 = format!("{tf}int g3(int y) {{ return tf(y) + tf<long>(y); }}\n");
    let u4 = format!("{tf}int g4(int y) {{ return tf(y) * 2; }}\n");
    let main = "#include <cstdio>\nextern \"C\" int f1(void), f2(void);\nint g3(int), g4(int);\n\
        int main() { std::printf(\"%d %d %d %d\\n\", f1(), f2(), g3(1), g4(1)); }\n";
    compile(
        &dir,
        "gcc",
        &["-O1", "-ffunction-sections"],
        &[("u1.c", u1), ("u2.c", u2)],
    );
    compile(
        &dir,
        "g++",
        &["-O0"],
        &[("u3.cc", &u3), ("u4.cc", &u4), ("main.cc", main)],
    );
    std::fs::write(
        dir.join("ex.s"),
        ".text\n.globl z\nz: ret\n.section .note.GNU-stack,\"x\",@progbits\n",
    )
    .unwrap();
    common::tool_ok("as", &["ex.s", "-o", "ex.o"], &dir);
    let objs = ["u1.o", "u2.o", "u3.o", "u4.o"];
    let want = run_program(
        &dir,
        "g++",
        &bfd,
        &[&objs[..], &["main.o"]].concat(),
        "orig",
    );
    assert_eq!(want, "4 6 4 4\n");
    for opts in [
        &["--unique"][..],
        &["--unique=.mysec"],
        &["--unique=.text*"],
        &["--unique=.note*", "--unique=.data"],
        &["--force-group-allocation"],
        &["--force-group-allocation", "--unique"],
        &["--force-group-allocation", "--unique=.text*"],
    ] {
        for inputs in [&objs[..], &["u1.o", "ex.o", "u2.o"]] {
            partial_links(&linker, &dir, inputs, opts);
            let what = format!("{opts:?} {inputs:?}");
            assert_eq!(
                section_list(&dir, "rivet.o"),
                section_list(&dir, "bfd.o"),
                "{what}"
            );
            assert_eq!(groups(&dir, "rivet.o"), groups(&dir, "bfd.o"), "{what}");
        }
        partial_links(&linker, &dir, &objs, opts);
        for (side, ld) in [("bfd", &bfd), ("test", &shim)] {
            let got = run_program(
                &dir,
                "g++",
                ld,
                &["rivet.o", "main.o"],
                &format!("p-{side}"),
            );
            assert_eq!(got, want, "{opts:?} {side}");
        }
    }
    let plain = section_list(&dir, "rivet.o");
    assert!(!plain.iter().any(|s| s.starts_with(".group")), "{plain:?}");
    if !overridden {
        let out = common::tool(
            linker.to_str().unwrap(),
            &["--unique", "u1.o", "-o", "x"],
            Some(&dir),
        );
        assert!(
            !out.success() && out.stderr_str().contains("--unique without -r"),
            "{}",
            out.log()
        );
    }
}

/// `ld -r -T` with two output section descriptions of one name: two output sections, each with its own inputs,
/// as GNU ld makes them; `ONLY_IF_RO`/`ONLY_IF_RW` pairs by GNU ld's rule (both kept, or one dropped and its
/// sections left to the statements after it). The sections (name, type, size, flags) are GNU ld's, compared
/// without their order (rivet's `-r` orders its sections by kind, not by the script).
#[test]
fn two_descriptions_of_one_name_in_partial_link_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("reloc-two-of-a-name", &["as"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(
        dir.join("a.s"),
        ".section .text.a,\"ax\"\nnop\nnop\n.section .text.b,\"ax\"\nret\n.section .data,\"aw\"\n.quad 1\n\
         .section .ro1,\"a\"\n.long 2\n.section .rw1,\"aw\"\n.short 3\n.section .orph,\"a\"\n.byte 4\n",
    )
    .unwrap();
    common::tool_ok("as", &["a.s", "-o", "a.o"], &dir);
    let scripts = [
        "SECTIONS { .text : { *(.text.a) } .data : { *(.data) } .text : { *(.text.b) } }\n",
        "SECTIONS { .x : ONLY_IF_RO { *(.ro*) } .data : { *(.data) } .x : ONLY_IF_RW { *(.rw*) } }\n",
        "SECTIONS { .x : ONLY_IF_RW { *(.ro*) } .data : { *(.data) } .x : ONLY_IF_RO { *(.ro*) } \
         .y : { *(.rw*) } }\n",
        "SECTIONS { .x : ONLY_IF_RO { *(.ro*) *(.rw*) } .x : ONLY_IF_RW { *(.ro*) *(.rw*) } }\n",
    ];
    let sections = |o: &str| {
        let s = common::tool_ok("readelf", &["-SW", o], &dir);
        let mut v: Vec<String> = (s.lines())
            .filter_map(|l| {
                let l = l.split_once(']')?.1;
                let f: Vec<&str> = l.split_whitespace().collect();
                let name = *f.first()?;
                let keep =
                    name.starts_with('.') && !name.starts_with(".rela") && !name.ends_with("tab");
                // Name, type, size and flags (the column after the entry size, where there is one).
                keep.then(|| format!("{name} {} {} {}", f[1], f[4], f.get(6).unwrap_or(&"")))
            })
            .collect();
        v.sort();
        v
    };
    for (k, script) in scripts.iter().enumerate() {
        std::fs::write(dir.join("r.ld"), script).unwrap();
        let args = ["-r", "-T", "r.ld", "a.o", "-o"];
        common::tool_ok("ld.bfd", &[&args[..], &["bfd.o"]].concat(), &dir);
        link_ok(&linker, &[&args[..], &["test.o"]].concat(), &dir);
        assert_eq!(
            sections("test.o"),
            sections("bfd.o"),
            "script {k}: {script}"
        );
    }
}
