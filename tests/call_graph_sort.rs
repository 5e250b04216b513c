//! `--call-graph-profile-sort` (issue 35, start-up layout) against lld 19, whose option it is: the call graph of
//! the inputs' `.llvm.call-graph-profile` sections (written by clang's PGO builds and by the assembler's
//! `.cg_profile`) and of `--call-graph-ordering-file` orders the functions by lld's cache-directed sort (`cdsort`,
//! the default) or its C3 clustering (`hfsort`). The order (`nm -n`) is lld's for both, and `--print-symbol-order`'s
//! file lld's for hfsort, on a generated graph of 60 functions (globals and locals, weights that add up, self and
//! cross-section edges, edges to undefined symbols, sections past lld's 1 MiB cluster limit), on several more
//! generated graphs, and on a sample-profile PGO build; the programs run. `--symbol-ordering-file` turns the sort
//! off, as in lld; GNU-ld-style links (gcc with rivet as `ld`) sort too.

mod common;

use std::path::Path;

/// A small deterministic generator (the tests must not depend on a crate or on the run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const FUNCS: usize = 60;
const PER_FILE: usize = 20;

/// `f<i>` is file-local for every seventh function, global otherwise.
fn is_local(i: usize) -> bool {
    i % 7 == 3
}

/// Assembler file `k`: its functions, each in its own section but f(20k+1), which shares f(20k)'s; a big one
/// with a heavy edge to the next file's; and edges from its functions to functions of any file (locals only of its own), with weights that
/// repeat pairs, self edges, an edge to `puts` and one into `.data`.
fn asm_file(k: usize, rng: &mut Lcg) -> String {
    let mut s = String::new();
    let funcs = k * PER_FILE..(k + 1) * PER_FILE;
    for i in funcs.clone() {
        if i != k * PER_FILE + 1 {
            s += &format!("\t.section .text.f{i},\"ax\",@progbits\n");
        }
        if !is_local(i) {
            s += &format!("\t.globl f{i}\n");
        }
        // f6, f26 and f46 are too big for two of them to share a cluster.
        let size = match rng.next(20) {
            _ if i % PER_FILE == 6 => 700_000,
            1..=4 => 1 + rng.next(8),
            _ => 16 + rng.next(400),
        };
        s += &format!("\t.type f{i},@function\nf{i}:\n\tret\n\t.zero {size}\n");
    }
    s += &format!("\t.data\n\t.globl data{k}\ndata{k}:\n\t.quad 1\n");
    for _ in 0..70 {
        let from = funcs.start + rng.next(PER_FILE as u64) as usize;
        let to = loop {
            let to = rng.next(FUNCS as u64) as usize;
            if !is_local(to) || funcs.contains(&to) {
                break to;
            }
        };
        let weight = match rng.next(10) {
            0 => 0,
            1 => 1_000_000 + rng.next(1000),
            _ => rng.next(5000),
        };
        s += &format!("\t.cg_profile f{from}, f{to}, {weight}\n");
    }
    let big = funcs.start + 6;
    if big + PER_FILE < FUNCS {
        s += &format!("\t.cg_profile f{big}, f{}, 50000000\n", big + PER_FILE);
    }
    let a = funcs.start + 2;
    s += &format!("\t.cg_profile f{a}, f{a}, 4000\n\t.cg_profile f{a}, puts, 9000\n");
    s += &format!("\t.cg_profile f{a}, data{k}, 90000\n");
    s += "\t.section .note.GNU-stack,\"\",@progbits\n";
    s
}

const MAIN_C: &str = "#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }\n";

/// The `f<i>` functions and `main`, hot_/warm_/cold_ ones of `exe` in address order.
fn by_address(dir: &Path, exe: &str) -> Vec<String> {
    let nm = common::tool_ok("nm", &["-n", exe], dir);
    nm.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| {
            (n.starts_with('f') && n[1..].parse::<u32>().is_ok())
                || ["main", "hot_a", "hot_b", "warm_d", "cold_c", "cold_e"].contains(n)
        })
        .map(str::to_string)
        .collect()
}

/// `bin-lld` and `bin-rivet` in `dir`, each with `ld.lld` (for `gcc -fuse-ld=lld`) and `ld` (for a plain gcc
/// link) linked to that linker.
fn shims(dir: &Path, rivet: &Path) {
    for (side, ld) in [("lld", Path::new("/usr/bin/ld.lld-19")), ("rivet", rivet)] {
        let bin = dir.join(format!("bin-{side}"));
        std::fs::create_dir_all(&bin).unwrap();
        for name in ["ld.lld", "ld"] {
            let _ = std::fs::remove_file(bin.join(name));
            std::os::unix::fs::symlink(ld, bin.join(name)).unwrap();
        }
    }
}

/// Links `objs` through gcc with the `side` linker and `flags`: the outcome.
fn link(dir: &Path, side: &str, objs: &[&str], out: &str, flags: &[&str]) -> common::Outcome {
    let b = format!("-B{}/", dir.join(format!("bin-{side}")).display());
    let mut args = vec!["-fuse-ld=lld", &b[..], "-o", out];
    args.extend_from_slice(objs);
    args.extend_from_slice(flags);
    common::tool("gcc", &args, Some(dir))
}

fn linked(dir: &Path, side: &str, objs: &[&str], out: &str, flags: &[&str]) -> Vec<String> {
    let r = link(dir, side, objs, out, flags);
    assert!(r.success(), "{side} {flags:?}: {}", r.log());
    by_address(dir, out)
}

#[test]
fn generated_profile_orders_as_lld() {
    let Some((dir, _, _)) =
        common::against_gnu_ld("cg-sort", &["gcc", "nm", "clang-19", "ld.lld-19"])
    else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    shims(&dir, &rivet);
    let mut rng = Lcg(35);
    let mut objs = vec!["main.o".to_string()];
    for k in 0..FUNCS / PER_FILE {
        std::fs::write(dir.join(format!("g{k}.s")), asm_file(k, &mut rng)).unwrap();
        let o = format!("g{k}.o");
        common::tool_ok("clang-19", &["-c", &format!("g{k}.s"), "-o", &o], &dir);
        objs.push(o);
    }
    std::fs::write(dir.join("main.c"), MAIN_C).unwrap();
    common::tool_ok("gcc", &["-c", "main.c"], &dir);
    let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
    // lines of the call graph ordering file: globals, a local, a name no input defines, an undefined one.
    std::fs::write(
        dir.join("cg.txt"),
        "f5 f40 7000000\n# comment\n\nf24 f10 6000000\nf3 f4 9000000\nnosuch f1 5\nf1 puts 100\n",
    )
    .unwrap();
    let hf = "-Wl,--call-graph-profile-sort=hfsort";
    let print = |side: &str| format!("-Wl,--print-symbol-order=order-{side}.txt");
    let mut got = Vec::new();
    for side in ["lld", "rivet"] {
        let sorted = linked(
            &dir,
            side,
            &objs,
            &format!("hf-{side}"),
            &[hf, &print(side)],
        );
        let none = linked(
            &dir,
            side,
            &objs,
            &format!("none-{side}"),
            &["-Wl,--no-call-graph-profile-sort"],
        );
        let with_file = link(
            &dir,
            side,
            &objs,
            &format!("file-{side}"),
            &[hf, "-Wl,--call-graph-ordering-file=cg.txt"],
        );
        assert!(with_file.success(), "{}", with_file.log());
        for exe in [
            format!("hf-{side}"),
            format!("none-{side}"),
            format!("file-{side}"),
        ] {
            let run = common::tool(&format!("./{exe}"), &[], Some(&dir));
            assert_eq!(run.stdout_str(), "ok\n", "{exe}: {}", run.log());
        }
        let printed = std::fs::read_to_string(dir.join(format!("order-{side}.txt"))).unwrap();
        let warnings: Vec<String> = (with_file.stderr_str().lines())
            .filter_map(|l| l.split_once("warning: ").map(|(_, w)| w.to_string()))
            .collect();
        let cd = linked(&dir, side, &objs, &format!("cd-{side}"), &[]);
        let cg = "-Wl,--call-graph-ordering-file=cg.txt";
        let cd_file = linked(&dir, side, &objs, &format!("cd-file-{side}"), &[cg]);
        let file = by_address(&dir, &format!("file-{side}"));
        got.push((sorted, none, file, printed, warnings, cd, cd_file));
    }
    let (lld, ours) = (&got[0], &got[1]);
    assert_eq!(ours.0, lld.0, "hfsort order");
    assert_eq!(ours.1, lld.1, "no sort");
    assert_ne!(ours.0, ours.1, "the profile changes the order");
    assert_eq!(ours.2, lld.2, "with --call-graph-ordering-file");
    assert_eq!(ours.3, lld.3, "--print-symbol-order");
    assert!(ours.3.lines().count() > 20, "{}", ours.3);
    // lld names the shared object by its path, rivet by its soname.
    let lld_warnings: Vec<String> = (lld.4.iter())
        .map(|w| w.replace("/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6"))
        .collect();
    assert_eq!(ours.4, lld_warnings);
    assert_eq!(ours.5, lld.5, "cdsort (the default)");
    assert_eq!(ours.6, lld.6, "cdsort with --call-graph-ordering-file");
    assert_ne!(ours.5, ours.0, "cdsort is not hfsort");
    // The same order every time.
    let again = linked(&dir, "rivet", &objs, "again", &[]);
    assert_eq!(again, ours.5);
}

/// More generated graphs, each linked by both linkers with both algorithms: the same orders.
#[test]
fn more_generated_profiles_order_as_lld() {
    let Some((dir, _, _)) =
        common::against_gnu_ld("cg-sort-more", &["gcc", "nm", "clang-19", "ld.lld-19"])
    else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    shims(&dir, &rivet);
    std::fs::write(dir.join("main.c"), MAIN_C).unwrap();
    common::tool_ok("gcc", &["-c", "main.c"], &dir);
    for seed in 1..=6 {
        let mut rng = Lcg(1000 + seed);
        let mut objs = vec!["main.o".to_string()];
        for k in 0..FUNCS / PER_FILE {
            let (s, o) = (format!("s{seed}-{k}.s"), format!("s{seed}-{k}.o"));
            std::fs::write(dir.join(&s), asm_file(k, &mut rng)).unwrap();
            common::tool_ok("clang-19", &["-c", &s, "-o", &o], &dir);
            objs.push(o);
        }
        let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
        // With --gc-sections every third global function is kept: edges between collected sections still count
        // in lld's graph.
        let kept: Vec<String> = (0..FUNCS)
            .filter(|i| i % 3 == 0 && !is_local(*i))
            .map(|i| format!("-Wl,-u,f{i}"))
            .collect();
        let mut gc: Vec<&str> = kept.iter().map(String::as_str).collect();
        gc.push("-Wl,--gc-sections");
        for algorithm in ["cdsort", "hfsort"] {
            let flag = format!("-Wl,--call-graph-profile-sort={algorithm}");
            for (tag, extra) in [("", &[][..]), ("-gc", &gc[..])] {
                let mut flags = vec![&flag[..]];
                flags.extend_from_slice(extra);
                let name = format!("{seed}-{algorithm}{tag}");
                let print = |side: &str| format!("-Wl,--print-symbol-order={name}-{side}.txt");
                let mut got = Vec::new();
                for side in ["lld", "rivet"] {
                    let mut flags = flags.clone();
                    let p = print(side);
                    flags.push(&p);
                    let order = linked(&dir, side, &objs, &format!("{name}-{side}"), &flags);
                    let printed = std::fs::read_to_string(dir.join(format!("{name}-{side}.txt")));
                    got.push((order, printed.ok()));
                }
                assert_eq!(got[1], got[0], "seed {seed}, {algorithm}{tag}");
                assert_eq!(got[1].1.is_some(), algorithm == "hfsort");
            }
        }
    }
}

const M_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int hot_a(int), hot_b(int), cold_c(int), warm_d(int), cold_e(int);
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100000, s = 0;
    for (int i = 0; i < n; i++) s += hot_a(i);
    for (int i = 0; i < n / 100; i++) s += warm_d(i);
    if (argc > 5) s += cold_c(s) + cold_e(s);
    printf("%d\n", s);
    return 0;
}
"#;

const F_C: &str = "int hot_b(int);
__attribute__((noinline)) int cold_c(int x) {
  return x * 3 + 1; }
__attribute__((noinline)) int hot_b(int x) {
  return (x ^ 0x55) + (x >> 3); }
__attribute__((noinline)) int cold_e(int x) {
  return x - 7; }
__attribute__((noinline)) int hot_a(int x) {
  return hot_b(x) + hot_b(x + 1); }
__attribute__((noinline)) int warm_d(int x) {
  return hot_b(x) * 2; }
";

/// A sample (AutoFDO) profile of the program: clang-19 turns it into `.llvm.call-graph-profile` sections without
/// an instrumented run, so no profile runtime is needed.
const SAMPLES: &str = "main:200000:1
 2: 100000
 3: 100000 hot_a:100000
 5: 1000
 6: 1000 warm_d:1000
hot_a:400000:100000
 1: 100000 hot_b:200000
hot_b:300000:201000
 1: 201000
warm_d:2000:1000
 1: 1000 hot_b:1000
";

/// The program's functions in address order after a gcc link with `ld` (GNU-ld style command line).
fn plain_gcc_link(dir: &Path, bin: &Path, exe: &str, objs: &[&str]) -> Vec<String> {
    let b = format!("-B{}/", bin.display());
    let mut args = vec![&b[..], "-o", exe];
    args.extend_from_slice(objs);
    let r = common::tool("gcc", &args, Some(dir));
    assert!(r.success(), "{}", r.log());
    let run = common::tool(&format!("./{exe}"), &["1000"], Some(dir));
    assert_eq!(run.stdout_str(), "1129035\n", "{exe}: {}", run.log());
    by_address(dir, exe)
}

#[test]
fn pgo_builds_order_as_lld() {
    let Some((dir, _, bfd)) =
        common::against_gnu_ld("cg-sort-pgo", &["gcc", "nm", "clang-19", "ld.lld-19"])
    else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    shims(&dir, &rivet);
    std::fs::write(dir.join("m.c"), M_C).unwrap();
    std::fs::write(dir.join("f.c"), F_C).unwrap();
    std::fs::write(dir.join("s.prof"), SAMPLES).unwrap();
    let cc = [
        "-O2",
        "-ffunction-sections",
        "-fprofile-sample-use=s.prof",
        "-c",
        "m.c",
        "f.c",
    ];
    common::tool_ok("clang-19", &cc, &dir);
    let sections = common::tool_ok("readelf", &["-SW", "m.o", "f.o"], &dir);
    assert_eq!(
        sections.matches(".rel.llvm.call-graph-profile").count(),
        2,
        "{sections}"
    );
    let objs = ["m.o", "f.o"];
    let hf = "-Wl,--call-graph-profile-sort=hfsort";
    let lld = linked(&dir, "lld", &objs, "pgo-lld", &[]);
    let ours = linked(&dir, "rivet", &objs, "pgo-rivet", &[]);
    assert_eq!(ours, lld);
    let lld_hf = linked(&dir, "lld", &objs, "pgo-lld-hf", &[hf]);
    let ours_hf = linked(&dir, "rivet", &objs, "pgo-rivet-hf", &[hf]);
    assert_eq!(ours_hf, lld_hf);
    // Unsorted, rivet's default layout is GNU ld's, which places `.text`'s inputs in groups (`.text.unlikely.*`,
    // where the profile put `main`, then `.text.hot.*`, then the rest: tests/text_groups.rs); lld keeps input
    // order.
    let bfd_order = plain_gcc_link(&dir, &bfd, "pgo-bfd-order", &objs);
    let none = linked(
        &dir,
        "rivet",
        &objs,
        "pgo-none",
        &["-Wl,--call-graph-profile-sort=none"],
    );
    assert_eq!(none, bfd_order);
    assert_ne!(ours, none);
    // hot_a calls hot_b most: the two are next to each other with either algorithm.
    for order in [&ours, &ours_hf] {
        let at = |n: &str| order.iter().position(|x| x == n).unwrap();
        assert_eq!(at("hot_b"), at("hot_a") + 1, "{order:?}");
    }
    // Under GNU ld's default PIE script given with -T: each statement's inputs in lld's order.
    let script = common::gnu_default_script(&["-pie"], &dir);
    std::fs::write(dir.join("gnu-pie.lds"), script).unwrap();
    let t = "-Wl,-T,gnu-pie.lds";
    let lld_t = linked(&dir, "lld", &objs, "pgo-lld-t", &[t]);
    let ours_t = linked(&dir, "rivet", &objs, "pgo-rivet-t", &[t]);
    assert_eq!(ours_t, lld_t);
    // A GNU-ld-style link sorts as lld does; GNU ld does not sort. Both programs run.
    let gnu_style = plain_gcc_link(&dir, &dir.join("bin-rivet"), "pgo-gcc", &objs);
    assert_eq!(gnu_style, ours);
    plain_gcc_link(&dir, &bfd, "pgo-bfd", &objs);
    // The profile names the symbols lld's ordering file would: the sort is off with one, as in lld.
    std::fs::write(dir.join("order.txt"), "cold_e\n").unwrap();
    let ordered = linked(
        &dir,
        "rivet",
        &objs,
        "pgo-ordered",
        &["-Wl,--symbol-ordering-file=order.txt"],
    );
    let lld_ordered = linked(
        &dir,
        "lld",
        &objs,
        "pgo-lld-ordered",
        &["-Wl,--symbol-ordering-file=order.txt"],
    );
    // The ranked function first, as in lld; the rest in the default layout's order, which is GNU ld's groups
    // for rivet (`bfd_order`) and input order for lld.
    assert_eq!(ordered[0], "cold_e");
    assert_eq!(lld_ordered[0], "cold_e");
    let rest: Vec<String> = bfd_order.into_iter().filter(|f| f != "cold_e").collect();
    assert_eq!(ordered[1..], rest[..]);
}

/// The instrumented round trip (`-fprofile-instr-generate`, a run, `llvm-profdata-19 merge`,
/// `-fprofile-use`), where clang's profile runtime is installed.
#[test]
fn instrumented_pgo_round_trip() {
    let Some((dir, _, _)) = common::against_gnu_ld(
        "cg-sort-instr",
        &["gcc", "nm", "clang-19", "ld.lld-19", "llvm-profdata-19"],
    ) else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    shims(&dir, &rivet);
    std::fs::write(dir.join("m.c"), M_C).unwrap();
    std::fs::write(dir.join("f.c"), F_C).unwrap();
    let b = format!("-B{}/", dir.join("bin-rivet").display());
    let gen_args = [
        "-O2",
        "-fprofile-instr-generate",
        "-fuse-ld=lld",
        &b,
        "m.c",
        "f.c",
        "-o",
        "gen",
    ];
    let r#gen = common::tool("clang-19", &gen_args, Some(&dir));
    if !r#gen.success() && r#gen.stderr_str().contains("libclang_rt.profile") {
        eprintln!("skipped: clang-19's profile runtime (libclang-rt-19-dev) is not installed");
        return;
    }
    assert!(r#gen.success(), "{}", r#gen.log());
    let mut cmd = std::process::Command::new(dir.join("gen"));
    cmd.arg("200000")
        .env("LLVM_PROFILE_FILE", dir.join("p.profraw"));
    assert!(cmd.status().unwrap().success());
    common::tool_ok(
        "llvm-profdata-19",
        &["merge", "-o", "p.profdata", "p.profraw"],
        &dir,
    );
    let cc = [
        "-O2",
        "-ffunction-sections",
        "-fprofile-use=p.profdata",
        "-c",
        "m.c",
        "f.c",
    ];
    common::tool_ok("clang-19", &cc, &dir);
    let objs = ["m.o", "f.o"];
    for flag in [
        "-Wl,--call-graph-profile-sort=hfsort",
        "-Wl,--call-graph-profile-sort=cdsort",
    ] {
        let lld = linked(&dir, "lld", &objs, "instr-lld", &[flag]);
        let ours = linked(&dir, "rivet", &objs, "instr-rivet", &[flag]);
        assert_eq!(ours, lld, "{flag}");
    }
}

#[test]
fn refusals_and_errors() {
    let Some((rivet, dir)) =
        common::rivet_only("cg-sort-errors", &["clang-19"], "rivet's messages")
    else {
        return;
    };
    let mut rng = Lcg(7);
    std::fs::write(dir.join("g.s"), asm_file(0, &mut rng)).unwrap();
    common::tool_ok("clang-19", &["-c", "g.s", "-o", "g.o"], &dir);
    std::fs::write(dir.join("order.txt"), "f1\n").unwrap();
    std::fs::write(dir.join("cg.txt"), "f1 f2 3\n").unwrap();
    std::fs::write(dir.join("bad.txt"), "f1 f2\n").unwrap();
    let rivet = rivet.to_str().unwrap();
    let base = [
        "g.o",
        "-e",
        "f0",
        "--unresolved-symbols=ignore-all",
        "-o",
        "out",
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--call-graph-profile-sort=c3"],
            "unknown --call-graph-profile-sort= value: c3",
        ),
        (
            &["--call-graph-profile-sort"],
            "unknown --call-graph-profile-sort= value: g.o",
        ),
        (
            &[
                "--symbol-ordering-file=order.txt",
                "--call-graph-ordering-file=cg.txt",
            ],
            "--symbol-ordering-file and --call-graph-ordering-file may not be used together",
        ),
        (
            &["--call-graph-ordering-file=bad.txt"],
            "bad.txt: parse error",
        ),
        (
            &["--call-graph-ordering-file=none.txt"],
            "cannot open none.txt",
        ),
        (
            &["-r", "--call-graph-ordering-file=cg.txt"],
            "--call-graph-ordering-file with -r",
        ),
    ];
    for (flags, message) in cases {
        let mut args = flags.to_vec();
        args.extend_from_slice(&base);
        let r = common::tool(rivet, &args, Some(&dir));
        assert_eq!(r.code, Some(1), "{flags:?}: {}", r.log());
        assert!(r.stderr_str().contains(message), "{flags:?}: {}", r.log());
    }
    // Accepted: the ordering file alone, each algorithm, and the sort off.
    for flags in [
        &["--call-graph-ordering-file=cg.txt"][..],
        &["--call-graph-profile-sort=cdsort"],
        &["--call-graph-profile-sort=hfsort"],
        &["--no-call-graph-profile-sort"],
    ] {
        let mut args = flags.to_vec();
        args.extend_from_slice(&base);
        let r = common::tool(rivet, &args, Some(&dir));
        assert!(r.success(), "{flags:?}: {}", r.log());
    }
}

/// With `--icf=all` a folded section's edges are its leader's, as lld reads the graph after folding.
#[test]
fn folded_sections_count_as_their_leaders() {
    let Some((dir, _, _)) = common::against_gnu_ld("cg-sort-icf", &["nm", "clang-19", "ld.lld-19"])
    else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    let mut asm = String::new();
    for (name, body) in [
        ("a", "movl $1, %eax"),
        ("b", "movl $1, %eax"),
        ("c", "movl $2, %eax\n\t.zero 30"),
    ] {
        asm += &format!(
            "\t.section .text.{name},\"ax\",@progbits\n\t.globl {name}\n{name}:\t{body}\n\tret\n"
        );
    }
    asm +=
        "\t.section .text.d,\"ax\",@progbits\n\t.globl d\nd:\tmovl $3, %eax\n\t.zero 50\n\tret\n";
    asm += "\t.section .text._start,\"ax\",@progbits\n\t.globl _start\n_start:\tcall a\n\tcall b\n\tcall c\n\tcall d\n\tret\n";
    asm += "\t.cg_profile _start, d, 100\n\t.cg_profile b, c, 500\n\t.cg_profile c, d, 40\n\t.cg_profile a, d, 300\n";
    std::fs::write(dir.join("i.s"), asm).unwrap();
    common::tool_ok("clang-19", &["-c", "i.s", "-o", "i.o"], &dir);
    for algorithm in ["cdsort", "hfsort"] {
        let flag = format!("--call-graph-profile-sort={algorithm}");
        let mut got = Vec::new();
        for ld in [Path::new("/usr/bin/ld.lld-19"), &rivet] {
            let out = format!("icf-{algorithm}");
            let args = ["--icf=all", &flag, "i.o", "-o", &out];
            let r = common::tool(ld.to_str().unwrap(), &args, Some(&dir));
            assert!(r.success(), "{}", r.log());
            let nm = common::tool_ok("nm", &["-n", &out], &dir);
            let names: Vec<String> = (nm.lines())
                .filter_map(|l| Some(l.split_whitespace().nth(2)?.to_string()))
                .collect();
            got.push(names);
        }
        assert_eq!(got[1], got[0], "{algorithm}");
    }
}
