//! `--emit-relocs` (`-q`) against GNU ld: C programs (functions calling each other, data with pointers, strings in
//! merged sections, TLS accesses of every model relaxed in an executable, GOT loads relaxed, `-ffunction-sections`
//! with `--gc-sections` and debug info) compiled with gcc and clang-19, linked `-no-pie`, `-pie` and `-shared` by
//! rivet and by GNU ld with `-q`. The outputs must run the same, every kept relocation must mean the same (the
//! multiset of section, place, type, symbol and target, each place and target written as a symbol plus an offset
//! or as the string it points at, so that the two linkers' different addresses and symbol indices do not matter),
//! and `objdump -dr` must show the relocations at the same instructions.

mod common;

use common::{tool, tool_ok};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const MAIN: &str = r#"
#include <stdio.h>
#include <string.h>
extern int helper(int);
extern int (*hook)(int);
extern __thread int tls_shared;
extern __thread int tls_ie __attribute__((tls_model("initial-exec")));
__thread int tls_main = 3;
static __thread int tls_static;
static int counter;
int gdata = 5;
int *gptr = &gdata;
const char *names[] = {"alpha", "beta", "gamma", "hello world"};
static int twice(int x) { return 2 * x + counter++; }
int __attribute__((noinline)) sum_names(void) {
    int s = 0;
    for (int i = 0; i < 4; i++) s += strlen(names[i]);
    return s;
}
int __attribute__((noinline)) tls_sum(int n) {
    tls_static += n;
    tls_main += tls_static;
    tls_shared += 1;
    tls_ie += 2;
    return tls_main + tls_shared + tls_ie + tls_static;
}
int main(int argc, char **argv) {
    (void)argv;
    printf("%d %d %d %d %s\n", helper(sum_names()), twice(*gptr), tls_sum(argc), hook(4), names[1]);
    return 0;
}
"#;

const LIB: &str = r#"
__thread int tls_shared = 7;
__thread int tls_ie = 11;
static const char *tag(int x) { return x > 3 ? "big" : "small"; }
int helper(int x) { return x + (int)tag(x)[0]; }
static int square(int x) { return x * x; }
int (*hook)(int) = square;
int unused_function(int x) { return x * 7 + helper(x); }
"#;

/// A shared object's client: calls into it and reads its TLS.
const CLIENT: &str = r#"
#include <stdio.h>
extern int helper(int);
extern int tls_sum(int);
extern int sum_names(void);
int main(void) { printf("%d %d %d\n", helper(2), tls_sum(1), sum_names()); return 0; }
"#;

/// One output's sections (name → address, file offset, size, flags), symbols per section index (address, size,
/// name) and bytes.
struct Elf {
    secs: Vec<(String, u64, u64, u64, String)>,
    /// Per section: `SHT_NOBITS`.
    nobits: Vec<bool>,
    /// Per section index: (address, size, name, untyped).
    syms: HashMap<usize, Vec<(u64, u64, String, bool)>>,
    bytes: Vec<u8>,
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("hex {s}"))
}

impl Elf {
    fn read(dir: &Path, file: &str) -> Elf {
        let (mut secs, mut nobits) = (Vec::new(), Vec::new());
        for l in tool_ok("readelf", &["-SW", file], dir).lines() {
            let Some(rest) = l.trim_start().strip_prefix('[') else {
                continue;
            };
            let Some((num, rest)) = rest.split_once(']') else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if num.trim().parse::<usize>().is_err() || f.len() < 7 || f[0] == "Nr" {
                continue;
            }
            let flags = if f.len() >= 10 { f[6] } else { "" };
            secs.push((
                f[0].to_string(),
                hex(f[2]),
                hex(f[3]),
                hex(f[4]),
                flags.to_string(),
            ));
            nobits.push(f[1] == "NOBITS");
        }
        if secs.first().is_some_and(|s| s.0 == "NULL") {
            secs[0].0 = String::new();
        }
        let tls = (secs.iter().filter(|s| s.4.contains('T')).map(|s| s.1)).min();
        let mut syms: HashMap<usize, Vec<(u64, u64, String, bool)>> = HashMap::new();
        let out = tool_ok("readelf", &["-sW", file], dir);
        let symtab = out.split("Symbol table '.symtab'").nth(1).unwrap_or("");
        for l in symtab.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 || !f[0].ends_with(':') || matches!(f[3], "SECTION" | "FILE") {
                continue;
            }
            let Ok(shndx) = f[6].parse::<usize>() else {
                continue;
            };
            let base = if f[3] == "TLS" { tls.unwrap_or(0) } else { 0 };
            let name = f[7].split('@').next().unwrap().to_string();
            let size = f[2].parse::<u64>().unwrap_or(0);
            syms.entry(shndx)
                .or_default()
                .push((hex(f[1]) + base, size, name, f[3] == "NOTYPE"));
        }
        for v in syms.values_mut() {
            v.sort();
        }
        let bytes = std::fs::read(dir.join(file)).unwrap();
        Elf {
            secs,
            nobits,
            syms,
            bytes,
        }
    }

    fn section(&self, name: &str) -> Option<usize> {
        self.secs.iter().position(|s| s.0 == name)
    }

    /// Address `addr` of section `i` as a symbol and an offset, so that the two linkers' layouts compare: the
    /// sized symbol that holds it (zero-sized ones, the linker's markers among them, differ between the linkers);
    /// in code, for a target its first bytes, for a place the typed symbol before it; in data, for a target, the typed symbol there or the string it points
    /// at, and for a place `?` (a jump table before any symbol: its targets are compared); in `.bss` the typed
    /// symbol before it; else an offset in its section.
    fn place(&self, i: usize, addr: u64, target: bool) -> String {
        let (name, start, off, size, flags) = &self.secs[i];
        let in_file = addr >= *start && addr < start + size && !self.nobits[i];
        if !flags.contains('A') {
            // rivet's merged `.debug_str` lacks GNU ld's `SHF_MERGE|SHF_STRINGS`: known by name too.
            let strings = flags.contains('S') || name == ".debug_str" || name == ".debug_line_str";
            if strings && in_file {
                return format!("{name}:{:?}", self.string_at(off + (addr - start)));
            }
            return format!("{name}+{:#x}", addr.wrapping_sub(*start));
        }
        let list = self.syms.get(&i).map_or(&[][..], |v| &v[..]);
        let holder = list
            .iter()
            .rev()
            .find(|s| s.1 > 0 && s.0 <= addr && addr < s.0 + s.1);
        if let Some((v, _, n, _)) = holder {
            return format!("{n}+{:#x}", addr - v);
        }
        let before = || list.iter().rev().find(|s| s.0 <= addr && !s.3);
        if in_file && !flags.contains('X') {
            if !target {
                return format!("{name}:?");
            }
            if let Some((_, _, n, _)) = list.iter().find(|s| s.0 == addr && !s.3) {
                return format!("{n}+0x0");
            }
            if let Some(s) = self.string_at(off + (addr - start)) {
                return format!("str:{s:?}");
            }
        }
        if target && in_file && flags.contains('X') {
            // Code no symbol names (a static function under `-x`): its first bytes.
            let at = (off + (addr - start)) as usize;
            return format!(
                "{name}:{:02x?}",
                &self.bytes[at..(at + 4).min(self.bytes.len())]
            );
        }
        match before() {
            Some((v, _, n, _)) => format!("{n}+{:#x}", addr - v),
            None => format!("{name}+{:#x}", addr.wrapping_sub(*start)),
        }
    }

    /// The NUL-terminated bytes at file offset `off` (empty included: merged strings share their tails, so a
    /// pointer to `""` may land on any string's end).
    fn string_at(&self, off: u64) -> Option<String> {
        let b = self.bytes.get(off as usize..)?;
        let end = b.iter().take(4096).position(|&c| c == 0)?;
        let s = &b[..end];
        Some(String::from_utf8_lossy(s).into_owned())
    }
}

/// One relocation, normalised: (`.rela` section, place, type, target).
type Entry = (String, String, String, String);

/// Every entry of the output's non-allocated `.rela` sections, counted.
fn relocations(dir: &Path, file: &str) -> BTreeMap<Entry, usize> {
    let elf = Elf::read(dir, file);
    let mut out = BTreeMap::new();
    let mut cur: Option<(String, usize)> = None;
    for l in tool_ok("readelf", &["-rW", file], dir).lines() {
        if let Some(rest) = l.strip_prefix("Relocation section '") {
            let name = rest.split('\'').next().unwrap().to_string();
            let target = name.strip_prefix(".rela").and_then(|t| elf.section(t));
            let nonalloc = elf
                .section(&name)
                .is_some_and(|i| !elf.secs[i].4.contains('A'));
            cur = target.filter(|_| nonalloc).map(|t| (name, t));
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        let Some((rela, t)) = &cur else { continue };
        if f.len() < 3 || f[0].len() != 16 || !f[0].bytes().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        // .eh_frame's records are laid out differently (CIEs shared, order): its entries count by target only.
        let place = match elf.secs[*t].0.as_str() {
            ".eh_frame" => "*".to_string(),
            _ => elf.place(*t, hex(f[0]), false),
        };
        let target = if f.len() >= 7 {
            let name = f[4].split('@').next().unwrap();
            let a = hex(f[6]) as i64;
            let a = if f[5] == "-" { -a } else { a };
            match elf.section(name).filter(|_| !name.starts_with(".L")) {
                // A section symbol: where it points.
                Some(s) => format!(
                    "@{}",
                    elf.place(s, elf.secs[s].1.wrapping_add(a as u64), true)
                ),
                None if a < 0 => format!("{name}-{:#x}", -a),
                None => format!("{name}+{a:#x}"),
            }
        } else {
            f.get(3).unwrap_or(&"").to_string()
        };
        // A jump table (`.long .L5-.L4`) outside any symbol: its addend holds the entry's distance from the
        // table, which depends on the layout, so only the kind is compared.
        let target = match place.ends_with(":?") && f[2] == "R_X86_64_PC32" {
            true => "*".to_string(),
            false => target,
        };
        *out.entry((rela.clone(), place, f[2].to_string(), target))
            .or_insert(0) += 1;
    }
    out
}

/// The entries only one side has. GNU ld relaxes a non-PIC output's GOT load to `mov $sym` (`R_X86_64_32S`, or
/// `R_X86_64_32`, addend 0) where rivet makes it `lea sym(%rip)` (`R_X86_64_PC32`, addend -4), or, for an
/// undefined weak symbol of a static executable, keeps the GOT load: such pairs at one place are the same
/// relocation described for each linker's instruction, and are taken out.
fn differences(
    test: &BTreeMap<Entry, usize>,
    reference: &BTreeMap<Entry, usize>,
) -> (Vec<Entry>, Vec<Entry>) {
    let minus = |a: &BTreeMap<Entry, usize>, b: &BTreeMap<Entry, usize>| -> Vec<Entry> {
        let mut v = Vec::new();
        for (k, &n) in a {
            for _ in b.get(k).copied().unwrap_or(0)..n {
                v.push(k.clone());
            }
        }
        v
    };
    let (mut only_test, mut only_ref) = (minus(test, reference), minus(reference, test));
    only_ref.retain(|(rela, place, ty, target)| {
        let lea = target
            .strip_suffix("+0x0")
            .filter(|_| ty == "R_X86_64_32S" || ty == "R_X86_64_32")
            .map(|sym| {
                (
                    rela.clone(),
                    place.clone(),
                    "R_X86_64_PC32".into(),
                    format!("{sym}-0x4"),
                )
            });
        match lea.and_then(|e| only_test.iter().position(|x| *x == e)) {
            Some(k) => {
                only_test.remove(k);
                false
            }
            None => true,
        }
    });
    (only_test, only_ref)
}

/// `objdump -dr`'s relocations as (function, offset of the relocation in it, mnemonic of the instruction): where
/// each relocation is, relative to the code around it.
fn disassembly_relocs(dir: &Path, file: &str) -> BTreeMap<(String, u64, String), usize> {
    let out = tool_ok("objdump", &["-dr", "--no-show-raw-insn", file], dir);
    let mut v = BTreeMap::new();
    let (mut func, mut start, mut insn) = (String::new(), 0u64, String::new());
    for l in out.lines() {
        if let Some(name) = l.strip_suffix(">:") {
            let (addr, name) = name.split_once(" <").unwrap_or(("0", name));
            (func, start) = (name.split('@').next().unwrap().to_string(), hex(addr));
        } else if let Some((addr, rest)) = l.trim_start().split_once(':') {
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            let rest = rest.trim();
            if rest.starts_with("R_X86_64") {
                *v.entry((func.clone(), addr - start, insn.clone()))
                    .or_insert(0) += 1;
            } else {
                insn = rest.split_whitespace().next().unwrap_or("").to_string();
            }
        }
    }
    v
}

/// Links `objs` into `out` with `kind` and `-q` through gcc and the linker in `shim`.
fn link(dir: &Path, shim: &Path, kind: &[&str], objs: &[&str], out: &str) {
    let b = format!("-B{}/", shim.display());
    let mut args = vec![b.as_str(), "-Wl,-q", "-o", out];
    args.extend_from_slice(kind);
    args.extend_from_slice(objs);
    args.push("-lc");
    let o = tool("gcc", &args, Some(dir));
    assert!(o.success(), "link {out}:\n{}", o.log());
}

fn run(dir: &Path, exe: &str) -> String {
    let mut cmd = std::process::Command::new(dir.join(exe));
    cmd.current_dir(dir).env("LD_LIBRARY_PATH", dir);
    let o = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(20));
    assert!(o.success(), "{exe}:\n{}", o.log());
    o.stdout_str()
}

/// The functions of `MAIN` and `LIB`.
const OURS: &[&str] = &[
    "main",
    "sum_names",
    "tls_sum",
    "twice",
    "helper",
    "tag",
    "square",
];

/// Compares the two outputs' relocations and disassemblies. A static executable holds libc.a's code, which the two
/// linkers lay out in other orders, where a section symbol's target (S + A, with the PC-relative bias in A) may
/// fall on either side of an object's edge: there the entries in our functions are compared, and the number of
/// entries of each `.rela` section.
fn compare(dir: &Path, test: &str, reference: &str, what: &str, ours_only: bool) {
    let (mut test_rel, mut ref_rel) = (relocations(dir, test), relocations(dir, reference));
    if ours_only {
        let per_section = |m: &BTreeMap<Entry, usize>| {
            let mut c: BTreeMap<String, usize> = BTreeMap::new();
            for (k, n) in m {
                *c.entry(k.0.clone()).or_insert(0) += n;
            }
            c
        };
        assert_eq!(
            per_section(&test_rel),
            per_section(&ref_rel),
            "{what}: the .rela sections' sizes differ from GNU ld's"
        );
        let ours = |e: &Entry| OURS.iter().any(|f| e.1.starts_with(&format!("{f}+")));
        test_rel.retain(|k, _| ours(k));
        ref_rel.retain(|k, _| ours(k));
    }
    let (only_test, only_ref) = differences(&test_rel, &ref_rel);
    assert!(
        only_test.is_empty() && only_ref.is_empty(),
        "{what}: relocations differ from GNU ld's\nonly rivet's:\n{}\nonly GNU ld's:\n{}",
        fmt(&only_test),
        fmt(&only_ref)
    );
    let (mut t, mut r) = (
        disassembly_relocs(dir, test),
        disassembly_relocs(dir, reference),
    );
    if ours_only {
        t.retain(|k, _| OURS.contains(&k.0.as_str()));
        r.retain(|k, _| OURS.contains(&k.0.as_str()));
    }
    let mut only_t: Vec<_> = t.iter().filter(|(k, n)| r.get(*k) != Some(n)).collect();
    let only_r: Vec<_> = r.iter().filter(|(k, n)| t.get(*k) != Some(n)).collect();
    // The lea/mov pairs of `differences`: the same place, another instruction.
    only_t.retain(|((f, off, insn), _)| {
        !(insn == "lea"
            && only_r
                .iter()
                .any(|((g, o, i), _)| g == f && o == off && i == "mov"))
    });
    let only_r: Vec<_> = only_r
        .into_iter()
        .filter(|((f, off, insn), _)| {
            !(insn == "mov" && t.contains_key(&(f.clone(), *off, "lea".to_string())))
        })
        .collect();
    assert!(
        only_t.is_empty() && only_r.is_empty(),
        "{what}: objdump -dr places relocations differently\nonly rivet's: {only_t:?}\nonly GNU ld's: {only_r:?}"
    );
}

fn fmt(v: &[Entry]) -> String {
    v.iter().map(|e| format!("  {e:?}\n")).collect()
}

#[test]
fn emitted_relocations_match_gnu_ld() {
    let Some((dir, shim, bfd)) =
        common::against_gnu_ld("emit-relocs", &["gcc", "readelf", "objdump"])
    else {
        return;
    };
    std::fs::write(dir.join("main.c"), MAIN).unwrap();
    std::fs::write(dir.join("lib.c"), LIB).unwrap();
    std::fs::write(dir.join("client.c"), CLIENT).unwrap();
    let mut variants: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        ("plain", vec!["-O2"], vec![]),
        ("pic", vec!["-O2", "-fPIC", "-fno-plt"], vec![]),
        (
            "sections",
            vec!["-O1", "-g", "-ffunction-sections", "-fdata-sections"],
            vec!["-Wl,--gc-sections"],
        ),
    ];
    for compiler in common::compilers() {
        let cc = compiler.driver(false);
        if compiler == common::Compiler::Gcc {
            variants.push(("desc", vec!["-O2", "-fPIC", "-mtls-dialect=gnu2"], vec![]));
        } else {
            variants.retain(|v| v.0 != "desc");
        }
        for (name, cflags, lflags) in &variants {
            let tag = format!("{}-{name}", compiler.name());
            for (src, pic) in [
                ("main", false),
                ("lib", false),
                ("main", true),
                ("lib", true),
            ] {
                let obj = format!("{src}-{tag}{}.o", if pic { "-pic" } else { "" });
                let mut args = cflags.clone();
                if pic {
                    args.push("-fPIC");
                }
                args.extend(["-c", "-o", &obj]);
                let c = format!("{src}.c");
                args.push(&c);
                tool_ok(cc, &args, &dir);
            }
            let (main, lib) = (format!("main-{tag}.o"), format!("lib-{tag}.o"));
            let (main_pic, lib_pic) = (format!("main-{tag}-pic.o"), format!("lib-{tag}-pic.o"));
            // The static kinds link all of libc.a's relocations: with the two plain variants only.
            let statics: &[&str] = match *name {
                "plain" | "pic" => &["-static", "-static-pie"],
                _ => &[],
            };
            for &kind in ["-no-pie", "-pie"].iter().chain(statics) {
                let mut outs = Vec::new();
                for (side, s) in [("test", &shim), ("ref", &bfd)] {
                    let exe = format!("{tag}{kind}-{side}");
                    let mut k = vec![kind];
                    k.extend(lflags.iter().copied());
                    link(&dir, s, &k, &[&main, &lib], &exe);
                    outs.push((run(&dir, &exe), exe));
                }
                assert_eq!(outs[0].0, outs[1].0, "{tag} {kind}: output differs");
                let what = format!("{tag} {kind}");
                compare(&dir, &outs[0].1, &outs[1].1, &what, kind.contains("static"));
            }
            // A shared object of both sources, and a client linked (by GNU ld) against each linker's.
            let mut outs = Vec::new();
            for (side, s) in [("test", &shim), ("ref", &bfd)] {
                let sub = dir.join(side);
                std::fs::create_dir_all(&sub).unwrap();
                let so = format!("{side}/libemit.so");
                let mut k = vec!["-shared"];
                k.extend(lflags.iter().copied());
                link(&dir, s, &k, &[&main_pic, &lib_pic], &so);
                let exe = format!("{tag}-client-{side}");
                let lib_dir = format!("-L{side}");
                tool_ok("gcc", &["-o", &exe, "client.c", &lib_dir, "-lemit"], &dir);
                let mut cmd = std::process::Command::new(dir.join(&exe));
                cmd.env("LD_LIBRARY_PATH", dir.join(side));
                let o = common::run_with_timeout(&mut cmd, std::time::Duration::from_secs(20));
                assert!(o.success(), "{exe}:\n{}", o.log());
                outs.push((o.stdout_str(), so));
            }
            assert_eq!(outs[0].0, outs[1].0, "{tag} -shared: output differs");
            compare(
                &dir,
                &outs[0].1,
                &outs[1].1,
                &format!("{tag} -shared"),
                false,
            );
        }
    }
}

/// `-q` with `-s` is refused as GNU ld refuses it (the relocations name `.symtab`'s entries), and `-q -x` keeps
/// the locals the relocations name, as GNU ld does.
#[test]
fn strip_all_is_refused_and_discard_all_keeps_named_locals() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("emit-relocs-strip", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("main.c"), MAIN).unwrap();
    std::fs::write(dir.join("lib.c"), LIB).unwrap();
    tool_ok("gcc", &["-O2", "-c", "main.c", "lib.c"], &dir);
    let b = format!("-B{}/", shim.display());
    let o = tool(
        "gcc",
        &[&b, "-Wl,-q,-s", "main.o", "lib.o", "-o", "stripped"],
        Some(&dir),
    );
    assert!(!o.success(), "-q -s must fail:\n{}", o.log());
    assert!(o.stderr_str().contains("--strip-all"), "{}", o.log());
    let mut outs = Vec::new();
    for (side, s) in [("test", &shim), ("ref", &bfd)] {
        let exe = format!("x-{side}");
        link(&dir, s, &["-Wl,-x"], &["main.o", "lib.o"], &exe);
        outs.push(exe);
    }
    compare(&dir, &outs[0], &outs[1], "-q -x", false);
}
