//! Error messages name the place of a problem as lld's do (issue 35): for every reference, the source `file:line`
//! from the object's DWARF line table (DWARF 4 and 5, gcc and clang, compressed debug sections) and the enclosing
//! function, demangled; without debug information the source file's name (its `STT_FILE` symbol) and the function.
//! Undefined symbols (errors, `-z defs` in a shared object, `--warn-unresolved-symbols` warnings), duplicate
//! definitions and relocation errors. Each case checks rivet's exact lines, and that GNU ld fails too and names
//! the same source lines. The debug information is read only when there is an error to report: a link whose
//! `.debug_line` is garbage still links, and its errors fall back to the function's name.

mod common;

use std::path::{Path, PathBuf};

/// C++ callers of an undefined function and an undefined variable, each call on its own line; many small
/// functions after them give the line table enough rows to be compressed by `-gz`.
fn cxx_source() -> String {
    let mut s = String::from(
        "int foo(int);\n\
         extern int counter;\n\
         int caller_one() {\n\
         \x20 return foo(1);\n\
         }\n\
         int caller_two(int x) {\n\
         \x20 int y = counter;\n\
         \x20 return foo(x + y);\n\
         }\n",
    );
    for i in 0..300 {
        s.push_str(&format!(
            "int filler{i}(int a) {{\n  return a * {i} + 1;\n}}\n"
        ));
    }
    s
}

const C_MAIN: &str = "int missing_c(void);\nint main(void) {\n  return missing_c();\n}\n";

/// A compile variant: a name, the compiler, and its debug flags.
struct Variant {
    name: &'static str,
    clang: bool,
    flags: &'static [&'static str],
}

const VARIANTS: &[Variant] = &[
    Variant {
        name: "gcc-nog",
        clang: false,
        flags: &[],
    },
    Variant {
        name: "gcc-dwarf4",
        clang: false,
        flags: &["-g", "-gdwarf-4"],
    },
    Variant {
        name: "gcc-dwarf5",
        clang: false,
        flags: &["-g", "-gdwarf-5"],
    },
    Variant {
        name: "gcc-dwarf5-zlib",
        clang: false,
        flags: &["-g", "-gdwarf-5", "-gz=zlib"],
    },
    Variant {
        name: "clang-nog",
        clang: true,
        flags: &[],
    },
    Variant {
        name: "clang-dwarf4",
        clang: true,
        flags: &["-g", "-gdwarf-4"],
    },
    Variant {
        name: "clang-dwarf5",
        clang: true,
        flags: &["-g", "-gdwarf-5"],
    },
    Variant {
        name: "clang-dwarf4-zlib",
        clang: true,
        flags: &["-g", "-gdwarf-4", "-gz=zlib"],
    },
    Variant {
        name: "clang-dwarf5-zstd",
        clang: true,
        flags: &["-g", "-gdwarf-5", "-gz=zstd"],
    },
];

impl Variant {
    fn debug(&self) -> bool {
        !self.flags.is_empty()
    }
    fn available(&self) -> bool {
        !self.clang || common::have_tool("clang-19")
    }
    /// Compiles `src` (C++ if it ends in `.cc`) in `dir` into `obj` at -O0.
    fn compile(&self, dir: &Path, src: &str, obj: &str) {
        let cxx = src.ends_with(".cc");
        let cc = match (self.clang, cxx) {
            (false, false) => "gcc",
            (false, true) => "g++",
            (true, false) => "clang-19",
            (true, true) => "clang++-19",
        };
        let mut args = vec!["-O0", "-c", src, "-o", obj];
        args.extend_from_slice(self.flags);
        common::tool_ok(cc, &args, dir);
    }
}

/// The directory as the compilers record it (the real path).
fn real(dir: &Path) -> String {
    dir.canonicalize().unwrap().display().to_string()
}

/// Runs rivet with `args` in `dir`; its stderr, which must hold an error unless `ok`.
fn rivet(linker: &Path, dir: &Path, args: &[&str], ok: bool) -> String {
    let o = common::tool(linker.to_str().unwrap(), args, Some(dir));
    assert_eq!(o.success(), ok, "{}", o.log());
    o.stderr_str()
}

/// Runs GNU ld with `args` in `dir`, which must fail; its stderr.
fn gnu_ld_fails(dir: &Path, args: &[&str]) -> String {
    let o = common::tool("ld.bfd", args, Some(dir));
    assert!(!o.success(), "GNU ld linked: {}", o.log());
    o.stderr_str()
}

/// The `path:line` places of GNU ld's messages (`/dir/a.cc:4: undefined reference to ...`), sorted.
fn gnu_places(stderr: &str, what: &str) -> Vec<String> {
    let mut v: Vec<String> = stderr
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("ld.bfd: ").unwrap_or(l);
            let at = l.find(what)?;
            let place = l[..at].trim_end_matches(": ").trim_end_matches(':');
            // `/dir/ov.c:3:(.text+0x3)` for relocation errors.
            let place = place.split(":(").next().unwrap();
            Some(place.to_string())
        })
        .collect();
    v.sort();
    v
}

/// The `path:line` places of rivet's `(path:line)` source lines, sorted.
fn rivet_places(stderr: &str) -> Vec<String> {
    let mut v: Vec<String> = stderr
        .lines()
        .filter_map(|l| {
            let open = l.rfind(" (/")?;
            Some(l[open + 2..l.len() - 1].to_string())
        })
        .collect();
    v.sort();
    v
}

fn setup(name: &str) -> Option<(PathBuf, PathBuf)> {
    common::rivet_only(
        name,
        &["gcc", "g++", "ld.bfd"],
        "rivet's own message format",
    )
}

#[test]
fn undefined_symbols_name_function_and_line() {
    let Some((linker, root)) = setup("diagnostics-undefined") else {
        return;
    };
    for v in VARIANTS.iter().filter(|v| v.available()) {
        let dir = root.join(v.name);
        common::fresh_dir(&dir);
        std::fs::write(dir.join("a.cc"), cxx_source()).unwrap();
        std::fs::write(dir.join("b.c"), C_MAIN).unwrap();
        v.compile(&dir, "a.cc", "a.o");
        v.compile(&dir, "b.c", "b.o");
        if v.flags.iter().any(|f| f.starts_with("-gz")) {
            let sections = common::tool_ok("readelf", &["-S", "-W", "a.o"], &dir);
            let line = sections
                .lines()
                .find(|l| l.contains(".debug_line "))
                .unwrap();
            assert!(
                line.contains(" C "),
                "{}: .debug_line not compressed:\n{line}",
                v.name
            );
        }
        let err = rivet(&linker, &dir, &["-o", "out", "a.o", "b.o"], false);
        let d = real(&dir);
        let src = |file: &str, line: u32| {
            if v.debug() {
                format!("{file}:{line} ({d}/{file}:{line})")
            } else {
                file.to_string()
            }
        };
        let want = format!(
            "rivet: error: undefined symbol: foo(int)\n\
             >>> referenced by {}\n\
             >>>               a.o:(caller_one())\n\
             >>> referenced by {}\n\
             >>>               a.o:(caller_two(int))\n\
             rivet: error: undefined symbol: counter\n\
             >>> referenced by {}\n\
             >>>               a.o:(caller_two(int))\n\
             rivet: error: undefined symbol: missing_c\n\
             >>> referenced by {}\n\
             >>>               b.o:(main)\n",
            src("a.cc", 4),
            src("a.cc", 8),
            src("a.cc", 7),
            src("b.c", 3),
        );
        assert_eq!(err, want, "{}", v.name);
        if v.debug() {
            let bfd = gnu_ld_fails(&dir, &["-o", "out-bfd", "a.o", "b.o"]);
            assert_eq!(
                rivet_places(&err),
                gnu_places(&bfd, "undefined reference"),
                "{}: GNU ld names other lines:\n{bfd}",
                v.name
            );
        }
    }
}

#[test]
fn duplicate_definitions_name_both_places() {
    let Some((linker, root)) = setup("diagnostics-duplicate") else {
        return;
    };
    for v in VARIANTS.iter().filter(|v| v.available()) {
        let dir = root.join(v.name);
        common::fresh_dir(&dir);
        std::fs::write(
            dir.join("b.cc"),
            "int twice(int x) {\n  return x;\n}\nnamespace ns {\nint dup_var = 1;\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("c.cc"),
            "// another\n\nint twice(int x) {\n  return -x;\n}\n\nnamespace ns {\n\nint dup_var = 2;\n}\n",
        )
        .unwrap();
        v.compile(&dir, "b.cc", "b.o");
        v.compile(&dir, "c.cc", "c.o");
        let err = rivet(&linker, &dir, &["-o", "out", "b.o", "c.o"], false);
        let d = real(&dir);
        let src = |file: &str, line: u32| {
            if v.debug() {
                format!("{file}:{line} ({d}/{file}:{line})")
            } else {
                file.to_string()
            }
        };
        // A function's line from the line table, a variable's from its declaration.
        let want = [
            format!(
                "rivet: error: duplicate symbol: ns::dup_var\n\
                 >>> defined at {}\n\
                 >>>            b.o:(ns::dup_var)\n\
                 >>> defined at {}\n\
                 >>>            c.o:(ns::dup_var)\n",
                src("b.cc", 5),
                src("c.cc", 9),
            ),
            format!(
                "rivet: error: duplicate symbol: twice(int)\n\
                 >>> defined at {}\n\
                 >>>            b.o:(twice(int))\n\
                 >>> defined at {}\n\
                 >>>            c.o:(twice(int))\n",
                src("b.cc", 1),
                src("c.cc", 3),
            ),
        ];
        assert_eq!(paragraphs(&err), want, "{}", v.name);
        if v.debug() {
            // GNU ld names the second definition's line, then the first's; a variable's only from gcc's
            // DWARF (from clang's it names `c.o:(.data+0x0)`).
            let bfd = gnu_ld_fails(&dir, &["-o", "out-bfd", "b.o", "c.o"]);
            let lines = if v.clang { 1 } else { 2 };
            for want in [
                format!(
                    "{d}/c.cc:3: multiple definition of `twice(int)'; b.o:{d}/b.cc:1: first defined here"
                ),
                format!(
                    "{d}/c.cc:9: multiple definition of `ns::dup_var'; b.o:{d}/b.cc:5: first defined here"
                ),
            ]
            .iter()
            .take(lines)
            {
                assert!(bfd.contains(want), "{}: {want}\n{bfd}", v.name);
            }
        }
    }
}

/// The messages of `stderr` (each `rivet: ` line with the `>>>` lines under it), sorted.
fn paragraphs(stderr: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for l in stderr.split_inclusive('\n') {
        match v.last_mut() {
            Some(last) if !l.starts_with("rivet: ") => last.push_str(l),
            _ => v.push(l.to_string()),
        }
    }
    v.sort();
    v
}

#[test]
fn relocation_errors_name_function_and_line() {
    let Some((linker, dir)) = setup("diagnostics-relocation") else {
        return;
    };
    let d = real(&dir);
    // A PC-relative reference across 3 GiB of .bss.
    std::fs::write(
        dir.join("ov.c"),
        "extern char after;\nint read_after(void) {\n  return after;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("big.c"), "char big[3ul << 30];\nchar after;\n").unwrap();
    common::tool_ok("gcc", &["-g", "-O1", "-c", "ov.c"], &dir);
    common::tool_ok("gcc", &["-c", "big.c"], &dir);
    let err = rivet(&linker, &dir, &["-o", "out", "ov.o", "big.o"], false);
    let want = format!(
        "rivet: error: R_X86_64_PC32 against symbol 'after' out of range: 0xc0001ff9 does not fit\n\
         >>> defined in big.o\n\
         >>> referenced by ov.c:3 ({d}/ov.c:3)\n\
         >>>               ov.o:(function read_after: .text+0x3)\n"
    );
    assert_eq!(err, want);
    let bfd = gnu_ld_fails(&dir, &["-o", "out-bfd", "ov.o", "big.o"]);
    assert_eq!(
        rivet_places(&err),
        gnu_places(&bfd, "relocation truncated to fit"),
        "{bfd}"
    );
    // A text relocation under -z text, in C++ (the function demangled).
    std::fs::write(
        dir.join("tr.cc"),
        "extern int ext_var;\nint get(int k) {\n  return ext_var + k;\n}\n",
    )
    .unwrap();
    common::tool_ok("g++", &["-g", "-O1", "-fno-pic", "-c", "tr.cc"], &dir);
    let err = rivet(
        &linker,
        &dir,
        &["-shared", "-z", "text", "-o", "x.so", "tr.o"],
        false,
    );
    let want = format!(
        "rivet: error: R_X86_64_PC32 against symbol 'ext_var' can not be used when making a shared object; \
         recompile with -fPIC\n\
         >>> referenced by tr.cc:3 ({d}/tr.cc:3)\n\
         >>>               tr.o:(function get(int): .text+0x4)\n"
    );
    assert_eq!(err, want);
    gnu_ld_fails(&dir, &["-shared", "-z", "text", "-o", "x-bfd.so", "tr.o"]);
}

#[test]
fn repeated_references_are_counted_and_warnings_name_places() {
    let Some((linker, dir)) = setup("diagnostics-repeated") else {
        return;
    };
    let d = real(&dir);
    let mut src = String::from("int nope(void);\n");
    for i in 1..=13 {
        src.push_str(&format!("int f{i}(void) {{ return nope(); }}\n"));
    }
    std::fs::write(dir.join("many.c"), &src).unwrap();
    common::tool_ok("gcc", &["-g", "-fPIC", "-c", "many.c"], &dir);
    let site = |i: u32| {
        format!(
            ">>> referenced by many.c:{l} ({d}/many.c:{l})\n>>>               many.o:(f{i})\n",
            l = i + 1
        )
    };
    let sites = |n: u32| (1..=n).map(site).collect::<String>();
    let err = rivet(&linker, &dir, &["-o", "out", "many.o"], false);
    assert_eq!(
        err,
        format!(
            "rivet: error: undefined symbol: nope\n{}>>> referenced 3 more times\n",
            sites(10)
        )
    );
    gnu_ld_fails(&dir, &["-o", "out-bfd", "many.o"]);
    // The same places in a shared object's -z defs and --no-undefined errors, and in warnings.
    for opt in ["-zdefs", "--no-undefined"] {
        let err = rivet(
            &linker,
            &dir,
            &["-shared", opt, "-o", "x.so", "many.o"],
            false,
        );
        assert!(
            err.starts_with(&format!(
                "rivet: error: undefined symbol: nope\n{}",
                sites(10)
            )),
            "{err}"
        );
        gnu_ld_fails(&dir, &["-shared", opt, "-o", "x-bfd.so", "many.o"]);
    }
    let warn = rivet(
        &linker,
        &dir,
        &["--warn-unresolved-symbols", "-o", "out", "many.o"],
        true,
    );
    assert_eq!(
        warn,
        format!(
            "rivet: warning: undefined symbol: nope\n{}>>> referenced 3 more times\n",
            sites(10)
        )
    );
}

/// Replaces the contents of section `name` of the ELF64 little-endian object `path` by 0xff bytes.
fn garble_section(path: &Path, name: &str) {
    let mut b = std::fs::read(path).unwrap();
    let u = |b: &[u8], at: usize, n: usize| {
        let mut v = 0u64;
        for k in (0..n).rev() {
            v = v << 8 | b[at + k] as u64;
        }
        v as usize
    };
    let (shoff, shnum, shstrndx) = (u(&b, 0x28, 8), u(&b, 0x3c, 2), u(&b, 0x3e, 2));
    let sh = |i: usize| shoff + i * 64;
    let strtab = u(&b, sh(shstrndx) + 0x18, 8);
    for i in 0..shnum {
        let n = strtab + u(&b, sh(i), 4);
        if b[n..].starts_with(name.as_bytes()) && b[n + name.len()] == 0 {
            let (off, size) = (u(&b, sh(i) + 0x18, 8), u(&b, sh(i) + 0x20, 8));
            b[off..off + size].fill(0xff);
            std::fs::write(path, &b).unwrap();
            return;
        }
    }
    panic!("{name} not in {}", path.display());
}

#[test]
fn successful_links_do_not_read_line_tables() {
    let Some((linker, dir)) = setup("diagnostics-corrupt-lines") else {
        return;
    };
    std::fs::write(dir.join("b.c"), C_MAIN).unwrap();
    std::fs::write(dir.join("def.c"), "int missing_c(void) { return 0; }\n").unwrap();
    common::tool_ok("gcc", &["-g", "-c", "b.c", "def.c"], &dir);
    garble_section(&dir.join("b.o"), ".debug_line");
    // Linked as GNU ld links it (it does not read .debug_line either).
    rivet(
        &linker,
        &dir,
        &["-e", "main", "-o", "out", "b.o", "def.o"],
        true,
    );
    let bfd = common::tool(
        "ld.bfd",
        &["-e", "main", "-o", "out-bfd", "b.o", "def.o"],
        Some(&dir),
    );
    assert!(bfd.success(), "{}", bfd.log());
    // An error in the same object: its line table unreadable, the message still names the function.
    let err = rivet(&linker, &dir, &["-e", "main", "-o", "out", "b.o"], false);
    assert_eq!(
        err,
        "rivet: error: undefined symbol: missing_c\n>>> referenced by b.c\n>>>               b.o:(main)\n"
    );
}
