//! `--gdb-index` (issue 35): C and C++ programs built by gcc and clang-19 with `-g -ggnu-pubnames` (DWARF 4 and 5,
//! debug sections plain or compressed with zlib or zstd, `-ffunction-sections` for range lists), linked by rivet
//! with `--gdb-index` and by ld.lld-19 with `--gdb-index`. rivet's `.gdb_index` must list the same compile units,
//! the same ranges (by unit and length; the addresses differ between the two layouts, and each rivet range must
//! start at a function of rivet's output) and the same names with the same units and attributes as lld's, as
//! `readelf --debug-dump=gdb_index` prints them; gdb must load the index (its `dwarf-read` debug output says so, no
//! warning), stop at a breakpoint and print variables and types as it does for GNU ld's output (which has no
//! index). With `--gc-sections` the removed functions' ranges are gone, as in lld's index. A C object without name
//! tables gets its names from its DIEs (lld and mold leave them out, and gdb then fails to find its types and
//! statics); with a C++ one, the index has no names, so gdb reads the DWARF itself, and so with type units
//! (`-fdebug-types-section`, DWARF 4 and 5), which lld's index leaves gdb unable to print. The inputs' name tables are
//! left out of the output, as lld leaves them. `-r` is refused (lld's error), `-S` leaves the index out, `--compress-debug-sections` does not
//! compress it, and the bytes are the same for one thread and several.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAIN_C: &str = r#"#include <stdio.h>
static int counter = 41;
int global_var = 7;
struct point { int x, y; };
enum color { RED, GREEN = 5 };
int helper(int v);
int unused_fn(int v);
int main(void) {
  struct point p = {1, 2};
  enum color c = GREEN;
  counter += helper(p.x) + (int)c;
  printf("%d\n", counter);
  return 0;
}
"#;

const HELPER_C: &str = r#"static int calls;
typedef struct { long a; long b; } pair_t;
pair_t last_pair;
int helper(int v) {
  int doubled = v * 2;
  calls++;
  last_pair.a = doubled;
  return doubled + calls;
}
int unused_fn(int v) { return v * 3; }
"#;

/// A unit whose names only its DIEs give when it is built without `-ggnu-pubnames`.
const ONLY_C: &str = r#"struct only_c { int q; long r; };
static struct only_c c_static = {3, 4};
struct only_c *get_c(void) { return &c_static; }
"#;

const MAIN_CXX: &str = r#"#include <cstdio>
namespace geo {
struct Shape { virtual ~Shape() {} virtual int area() const = 0; };
struct Square : Shape { int side; explicit Square(int s) : side(s) {} int area() const override { return side * side; } };
template <typename T> T twice(T v) { return v + v; }
static int shapes_made = 0;
int make_and_measure(int s) { Square q(s); shapes_made++; return q.area() + twice(s); }
}
int geo_total;
int main() {
  geo_total = geo::make_and_measure(3);
  std::printf("%d\n", geo_total);
  return 0;
}
"#;

/// One way to build the sources.
struct Build {
    tag: &'static str,
    cc: &'static str,
    cxx: &'static str,
    flags: &'static [&'static str],
}

const BUILDS: &[Build] = &[
    Build {
        tag: "gcc-dwarf5",
        cc: "gcc",
        cxx: "g++",
        flags: &["-g", "-ggnu-pubnames"],
    },
    Build {
        tag: "gcc-dwarf4-zlib",
        cc: "gcc",
        cxx: "g++",
        flags: &["-gdwarf-4", "-ggnu-pubnames", "-gz", "-ffunction-sections"],
    },
    Build {
        tag: "gcc-dwarf5-zstd-fsections",
        cc: "gcc",
        cxx: "g++",
        flags: &[
            "-g",
            "-ggnu-pubnames",
            "-ffunction-sections",
            "-Wa,--compress-debug-sections=zstd",
        ],
    },
    Build {
        tag: "clang-dwarf5-fsections",
        cc: "clang-19",
        cxx: "clang++-19",
        flags: &["-gdwarf-5", "-ggnu-pubnames", "-ffunction-sections", "-O1"],
    },
    Build {
        tag: "clang-dwarf4-zlib",
        cc: "clang-19",
        cxx: "clang++-19",
        flags: &["-gdwarf-4", "-ggnu-pubnames", "-gz=zlib"],
    },
];

/// The parsed contents of a `.gdb_index`, as `readelf --debug-dump=gdb_index` prints them.
#[derive(Debug, Default, PartialEq)]
struct Index {
    units: Vec<(u64, u64)>,
    /// (unit, low, high).
    areas: Vec<(u32, u64, u64)>,
    /// Name → its (unit, attributes) entries.
    names: BTreeMap<String, BTreeSet<(u32, String)>>,
}

impl Index {
    /// The ranges by unit and length, sorted: what two layouts of the same code agree on.
    fn area_lengths(&self) -> Vec<(u32, u64)> {
        let mut v: Vec<(u32, u64)> = self.areas.iter().map(|&(u, l, h)| (u, h - l)).collect();
        v.sort();
        v
    }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("hex '{s}'"))
}

fn read_index(dir: &Path, exe: &str) -> Index {
    let text = common::tool_ok("readelf", &["--debug-dump=gdb_index", exe], dir);
    let mut ix = Index::default();
    let mut part = "";
    let mut current: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        match t {
            "CU table:" | "TU table:" | "Address table:" | "Symbol table:" => {
                part = t;
                continue;
            }
            "" => continue,
            _ => {}
        }
        match part {
            "CU table:" => {
                // [  0] 0 - 0x11a
                let rest = t.split(']').nth(1).unwrap().trim();
                let (a, b) = rest.split_once(" - ").unwrap();
                ix.units.push((hex(a), hex(b)));
            }
            "Address table:" => {
                let f: Vec<&str> = t.split_whitespace().collect();
                ix.areas.push((f[2].parse().unwrap(), hex(f[0]), hex(f[1])));
            }
            "Symbol table:" => {
                // "[  3] name: 0 [global, variable]" or "[ 754] int:" then "0 [static, type]" lines.
                let entry = if t.starts_with('[') {
                    let rest = t.split_once("] ").unwrap().1;
                    let (name, tail) = rest.rsplit_once(':').unwrap_or((rest, ""));
                    let name = if tail.trim().is_empty() || tail.contains('[') {
                        name
                    } else {
                        rest
                    };
                    current = Some(name.to_string());
                    ix.names.entry(name.to_string()).or_default();
                    tail.trim()
                } else {
                    t
                };
                if let Some((unit, attrs)) = entry.split_once(' ') {
                    let name = current.clone().unwrap();
                    ix.names
                        .get_mut(&name)
                        .unwrap()
                        .insert((unit.parse().unwrap(), attrs.to_string()));
                }
            }
            _ => {}
        }
    }
    ix
}

/// Function symbols of `exe` by address.
fn functions(dir: &Path, exe: &str) -> BTreeSet<u64> {
    let text = common::tool_ok("nm", &["--defined-only", exe], dir);
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && matches!(f[1], "T" | "t" | "W")).then(|| hex(f[0]))
        })
        .collect()
}

/// The work directory and the `gcc -B` directories of rivet, GNU ld and lld, or `None` (skipped).
fn setup(name: &str) -> Option<(PathBuf, PathBuf, PathBuf, PathBuf)> {
    let (dir, rivet, bfd) =
        common::against_gnu_ld(name, &["gcc", "g++", "gdb", "readelf", "nm", "ld.lld-19"])?;
    let lld = common::ld_shim_dir(&common::which("ld.lld-19")?, &format!("{name}-lld"));
    Some((dir, rivet, bfd, lld))
}

fn compile(dir: &Path, cc: &str, flags: &[&str], src: &str, body: &str, obj: &str) {
    std::fs::write(dir.join(src), body).unwrap();
    let mut args: Vec<&str> = flags.to_vec();
    args.extend(["-c", src, "-o", obj]);
    common::tool_ok(cc, &args, dir);
}

/// Links `objs` with the driver `cc` and the `ld` of `shim`, plus `extra` linker options.
fn link(dir: &Path, cc: &str, shim: &Path, objs: &[&str], extra: &[&str], out: &str) -> String {
    let b = format!("-B{}/", shim.display());
    let mut args: Vec<String> = vec![b];
    args.extend(objs.iter().map(|s| s.to_string()));
    args.extend(extra.iter().map(|s| format!("-Wl,{s}")));
    args.extend(["-o".into(), out.into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = common::tool(cc, &args, Some(dir));
    assert!(o.success(), "link {out} failed:\n{}", o.log());
    o.stderr_str()
}

/// gdb's answers to `commands` on `exe`, addresses and thread lines removed; panics if gdb did not use an index
/// where `indexed`, or warned about one.
fn gdb(dir: &Path, exe: &str, commands: &[&str], indexed: bool) -> String {
    let mut args = vec!["-batch", "-nx", "-iex", "set debug dwarf-read 1"];
    for c in commands {
        args.extend(["-ex", c]);
    }
    args.push(exe);
    let o = common::tool("gdb", &args, Some(dir));
    let all = format!("{}{}", o.stdout_str(), o.stderr_str());
    let lower = all.to_lowercase();
    assert!(
        !lower.contains("warning") || !lower.contains("index"),
        "gdb warned about {exe}'s index:\n{all}"
    );
    assert_eq!(
        all.contains("found gdb index from file"),
        indexed,
        "gdb's use of {exe}'s index:\n{all}"
    );
    let answers: Vec<String> = o
        .stdout_str()
        .lines()
        .filter(|l| !l.starts_with('[') && !l.contains("libthread") && !l.contains("process "))
        .map(common::strip_addresses)
        .collect();
    answers.join("\n")
}

const C_QUESTIONS: &[&str] = &[
    "break helper",
    "run",
    "print doubled",
    "print counter",
    "print global_var",
    "print calls",
    "ptype struct point",
    "ptype pair_t",
    "print GREEN",
    "info line unused_fn",
];

fn check_same_index(rivet: &Index, lld: &Index, what: &str) {
    assert_eq!(rivet.units, lld.units, "{what}: compile units");
    assert_eq!(
        rivet.area_lengths(),
        lld.area_lengths(),
        "{what}: ranges (unit, length)\nrivet: {:x?}\nlld: {:x?}",
        rivet.areas,
        lld.areas
    );
    assert_eq!(rivet.names, lld.names, "{what}: names");
}

#[test]
fn c_and_cxx_programs_index_as_lld_does() {
    let Some((dir, rivet, bfd, lld)) = setup("gdb-index-builds") else {
        return;
    };
    for b in BUILDS {
        if !common::have_tool(b.cc) || !common::have_tool(b.cxx) {
            eprintln!("skipped {}: {} missing", b.tag, b.cc);
            continue;
        }
        let d = dir.join(b.tag);
        common::fresh_dir(&d);
        compile(&d, b.cc, b.flags, "main.c", MAIN_C, "main.o");
        compile(&d, b.cc, b.flags, "helper.c", HELPER_C, "helper.o");
        compile(&d, b.cxx, b.flags, "main.cc", MAIN_CXX, "maincxx.o");
        let c_objs = ["main.o", "helper.o"];
        link(&d, b.cc, &rivet, &c_objs, &["--gdb-index"], "rivet");
        link(&d, b.cc, &lld, &c_objs, &["--gdb-index"], "lld");
        link(&d, b.cc, &bfd, &c_objs, &[], "bfd");
        let ours = read_index(&d, "rivet");
        check_same_index(&ours, &read_index(&d, "lld"), b.tag);
        let funcs = functions(&d, "rivet");
        for &(_, low, _) in &ours.areas {
            assert!(
                funcs.contains(&low),
                "{}: range at {low:#x} starts at no function",
                b.tag
            );
        }
        assert_eq!(
            gdb(&d, "rivet", C_QUESTIONS, true),
            gdb(&d, "bfd", C_QUESTIONS, false),
            "{}: gdb's answers",
            b.tag
        );
        let cxx_objs = ["maincxx.o"];
        link(&d, b.cxx, &rivet, &cxx_objs, &["--gdb-index"], "rivet-cxx");
        link(&d, b.cxx, &lld, &cxx_objs, &["--gdb-index"], "lld-cxx");
        link(&d, b.cxx, &bfd, &cxx_objs, &[], "bfd-cxx");
        check_same_index(
            &read_index(&d, "rivet-cxx"),
            &read_index(&d, "lld-cxx"),
            &format!("{} C++", b.tag),
        );
        let q = [
            "break geo::make_and_measure",
            "run",
            "print s",
            "print geo::shapes_made",
            "ptype geo::Square",
            "print geo_total",
        ];
        assert_eq!(
            gdb(&d, "rivet-cxx", &q, true),
            gdb(&d, "bfd-cxx", &q, false),
            "{} C++: gdb's answers",
            b.tag
        );
    }
}

/// Dead functions first, then live ones: a dead range must not hide the ranges after it (in DWARF 4's
/// `.debug_ranges` an address of -1 would select a new base address).
const GC_C: &str = r#"int dead_one(int v) { return v * 3; }
int dead_two(int v) { return v * 5; }
int live_one(int v) { return v + 1; }
int dead_three(int v) { return v * 7; }
int live_two(int v) { return live_one(v) * 2; }
int main(void) { return live_two(1) - 4; }
"#;

#[test]
fn gc_sections_drops_the_removed_functions_ranges() {
    let Some((dir, rivet, _bfd, lld)) = setup("gdb-index-gc") else {
        return;
    };
    for (cc, dwarf) in [
        ("gcc", "-gdwarf-4"),
        ("gcc", "-gdwarf-5"),
        ("clang-19", "-gdwarf-4"),
        ("clang-19", "-gdwarf-5"),
    ] {
        if !common::have_tool(cc) {
            continue;
        }
        let what = format!("{cc} {dwarf}");
        let flags = [dwarf, "-ggnu-pubnames", "-ffunction-sections"];
        compile(&dir, cc, &flags, "gc.c", GC_C, "gc.o");
        compile(&dir, cc, &flags, "helper.c", HELPER_C, "helper.o");
        let objs = ["gc.o", "helper.o"];
        let opts = ["--gdb-index", "--gc-sections"];
        link(&dir, cc, &rivet, &objs, &opts, "rivet");
        link(&dir, cc, &lld, &objs, &opts, "lld");
        link(&dir, cc, &rivet, &objs, &["--gdb-index"], "rivet-all");
        let (gc, all) = (read_index(&dir, "rivet"), read_index(&dir, "rivet-all"));
        check_same_index(&gc, &read_index(&dir, "lld"), &what);
        // gc.o's unit: six functions without gc, the three live ones with it; helper.o's none (nothing calls it).
        let of_unit = |ix: &Index, u: u32| ix.areas.iter().filter(|a| a.0 == u).count();
        assert_eq!(
            (of_unit(&all, 0), of_unit(&gc, 0), of_unit(&gc, 1)),
            (6, 3, 0),
            "{what}\n{all:x?}\n{gc:x?}"
        );
    }
}

/// Two units sharing a type, built with `-fdebug-types-section`: with DWARF 5 the type unit is in a `.debug_info`
/// section of a COMDAT group, beside each object's compile unit; with DWARF 4 in `.debug_types`.
const TYPES_A: &str = "struct Shared { int a; long b; };\nint use1(Shared *s) { return s->a; }\n";
const TYPES_B: &str = "struct Shared { int a; long b; };\nint use1(Shared *s);\n\
                       int main() { Shared s{1, 2}; return use1(&s) - 1; }\n";

#[test]
fn type_units_leave_the_index_without_names() {
    let Some((dir, rivet, bfd, lld)) = setup("gdb-index-type-units") else {
        return;
    };
    for (cxx, dwarf) in [
        ("g++", "-gdwarf-5"),
        ("g++", "-gdwarf-4"),
        ("clang++-19", "-gdwarf-5"),
    ] {
        if !common::have_tool(cxx) {
            continue;
        }
        let flags = [dwarf, "-ggnu-pubnames", "-fdebug-types-section"];
        compile(&dir, cxx, &flags, "a.cc", TYPES_A, "a.o");
        compile(&dir, cxx, &flags, "b.cc", TYPES_B, "b.o");
        let objs = ["a.o", "b.o"];
        link(&dir, cxx, &rivet, &objs, &["--gdb-index"], "rivet");
        link(&dir, cxx, &lld, &objs, &["--gdb-index"], "lld");
        link(&dir, cxx, &bfd, &objs, &[], "bfd");
        let (ours, theirs) = (read_index(&dir, "rivet"), read_index(&dir, "lld"));
        let what = format!("{cxx} {dwarf}");
        assert_eq!(
            ours.units, theirs.units,
            "{what}: the compile units, without the type units"
        );
        assert_eq!(ours.area_lengths(), theirs.area_lengths(), "{what}");
        // lld's index names them, and gdb then prints `*s` as of an unknown type; rivet's has no names, so gdb
        // reads the DWARF itself and answers as for GNU ld's output.
        assert!(ours.names.is_empty(), "{what}: {:?}", ours.names);
        let q = ["break use1", "run", "print *s", "ptype Shared"];
        assert_eq!(
            gdb(&dir, "rivet", &q, false),
            gdb(&dir, "bfd", &q, false),
            "{what}"
        );
    }
}

#[test]
fn an_object_without_name_tables_gets_names_from_its_dies() {
    let Some((dir, rivet, bfd, lld)) = setup("gdb-index-no-pubnames") else {
        return;
    };
    compile(&dir, "gcc", &["-g"], "only.c", ONLY_C, "only.o");
    let main =
        "struct only_c;\nstruct only_c *get_c(void);\nint main(void) { return get_c() ? 0 : 1; }\n";
    compile(&dir, "gcc", &["-g", "-ggnu-pubnames"], "m.c", main, "m.o");
    let objs = ["only.o", "m.o"];
    link(&dir, "gcc", &rivet, &objs, &["--gdb-index"], "rivet");
    link(&dir, "gcc", &lld, &objs, &["--gdb-index"], "lld");
    link(&dir, "gcc", &bfd, &objs, &[], "bfd");
    let (ours, theirs) = (read_index(&dir, "rivet"), read_index(&dir, "lld"));
    assert_eq!(ours.units, theirs.units);
    assert_eq!(ours.area_lengths(), theirs.area_lengths());
    for (name, entries) in &theirs.names {
        let has = ours.names.get(name).is_some_and(|e| e.is_superset(entries));
        assert!(
            has,
            "{name}: m.o's names as lld has them: {:?}",
            ours.names.get(name)
        );
    }
    let unit0 = |n: &str| ours.names.get(n).map(|e| e.iter().any(|(u, _)| *u == 0));
    for n in ["only_c", "c_static", "get_c", "int", "long int"] {
        assert_eq!(
            unit0(n),
            Some(true),
            "{n} from only.o's DIEs: {:?}",
            ours.names
        );
    }
    let q = [
        "ptype struct only_c",
        "print c_static",
        "print sizeof(struct only_c)",
    ];
    let answers = gdb(&dir, "rivet", &q, true);
    assert_eq!(answers, gdb(&dir, "bfd", &q, false));
    assert!(answers.contains("q = 3, r = 4"), "{answers}");
    // A C++ unit without name tables: rivet does not guess C++ names from DIEs, and leaves every name out, so that
    // gdb ignores the index and reads the DWARF (lld's index keeps m.o's names, and gdb misses the C++ type).
    compile(&dir, "g++", &["-g"], "main.cc", MAIN_CXX, "cxx.o");
    compile(
        &dir,
        "gcc",
        &["-g", "-ggnu-pubnames"],
        "helper.c",
        HELPER_C,
        "helper.o",
    );
    let objs = ["cxx.o", "helper.o"];
    link(&dir, "g++", &rivet, &objs, &["--gdb-index"], "rivet-cxx");
    link(&dir, "g++", &bfd, &objs, &[], "bfd-cxx");
    let ix = read_index(&dir, "rivet-cxx");
    assert_eq!((ix.units.len(), ix.names.len()), (2, 0), "{ix:?}");
    let q = [
        "ptype geo::Square",
        "print geo::shapes_made",
        "ptype pair_t",
    ];
    assert_eq!(
        gdb(&dir, "rivet-cxx", &q, false),
        gdb(&dir, "bfd-cxx", &q, false)
    );
}

#[test]
fn composes_with_other_options() {
    let Some((dir, rivet, _bfd, _lld)) = setup("gdb-index-options") else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let flags = ["-g", "-ggnu-pubnames"];
    compile(&dir, "gcc", &flags, "main.c", MAIN_C, "main.o");
    compile(&dir, "gcc", &flags, "helper.c", HELPER_C, "helper.o");
    let objs = ["main.o", "helper.o"];
    let sections = |exe: &str| common::tool_ok("readelf", &["-SW", exe], &dir);
    // -S: no debug information, no index.
    link(
        &dir,
        "gcc",
        &rivet,
        &objs,
        &["--gdb-index", "-S"],
        "stripped",
    );
    assert!(!sections("stripped").contains(".gdb_index"));
    // Compressed debug sections; the index itself stays as it is (lld's and mold's too).
    link(
        &dir,
        "gcc",
        &rivet,
        &objs,
        &["--gdb-index", "--compress-debug-sections=zlib"],
        "z",
    );
    let s = sections("z");
    let line = s
        .lines()
        .find(|l| l.contains(".gdb_index"))
        .expect(".gdb_index");
    assert!(!line.split_whitespace().any(|w| w.contains('C')), "{line}");
    assert!(
        s.lines()
            .any(|l| l.contains(".debug_info") && l.contains(" C ")),
        "{s}"
    );
    link(&dir, "gcc", &rivet, &objs, &["--gdb-index"], "plain");
    // The name tables the index replaces are left out, as lld and mold leave them; kept without the option.
    link(&dir, "gcc", &rivet, &objs, &[], "no-index");
    assert!(!sections("plain").contains(".debug_gnu_pub"));
    assert!(sections("no-index").contains(".debug_gnu_pubnames"));
    assert!(sections("no-index").contains(".debug_gnu_pubtypes"));
    assert_eq!(read_index(&dir, "z"), read_index(&dir, "plain"));
    let answers = gdb(&dir, "z", &["break helper", "run", "print v"], true);
    assert!(answers.contains("$1 = 1"), "{answers}");
    // -Map lists the index at its size (it is made before the map).
    link(
        &dir,
        "gcc",
        &rivet,
        &objs,
        &["--gdb-index", "-Map=out.map"],
        "mapped",
    );
    let mapped = sections("mapped");
    let size = mapped
        .lines()
        .find(|l| l.contains(".gdb_index"))
        .and_then(|l| l.split_whitespace().nth(5).map(str::to_string))
        .unwrap();
    let map = std::fs::read_to_string(dir.join("out.map")).unwrap();
    let line = map
        .lines()
        .find(|l| l.ends_with(" .gdb_index"))
        .expect("map line");
    let listed = line.split_whitespace().nth(1).unwrap();
    assert_eq!(
        u64::from_str_radix(listed, 16).unwrap(),
        u64::from_str_radix(&size, 16).unwrap(),
        "{line}"
    );
    // One thread and several: the same bytes.
    link(
        &dir,
        "gcc",
        &rivet,
        &objs,
        &["--gdb-index", "--threads=1"],
        "one",
    );
    assert_eq!(
        std::fs::read(dir.join("one")).unwrap(),
        std::fs::read(dir.join("plain")).unwrap()
    );
    // -r: refused, as lld refuses it.
    let o = common::tool(
        linker.to_str().unwrap(),
        &["-r", "--gdb-index", "main.o", "-o", "r.o"],
        Some(&dir),
    );
    assert!(!o.success());
    assert!(
        o.stderr_str()
            .contains("-r and --gdb-index may not be used together"),
        "{}",
        o.log()
    );
}
