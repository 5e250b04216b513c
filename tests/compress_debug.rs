//! `--compress-debug-sections=zlib|zlib-gabi|zstd` (issue 35): a C and a C++ program built with `-g` (gcc and
//! clang-19, DWARF 4 and 5, the objects' own debug sections plain or compressed with zlib or zstd) and linked with
//! each value. The output's `.debug_*` sections must be `SHF_COMPRESSED` with the right `Elf64_Chdr` (a section
//! compression would not shrink stays as it is, as in GNU ld and lld), and every reader must see the same debug
//! information as in the uncompressed link: `readelf --debug-dump=decodedline` and `objdump --dwarf` print the
//! same, `addr2line` finds the source line GNU ld's output gives, and gdb stops in `f` and prints its argument as
//! with GNU ld's output. `-r` compresses as GNU ld does; `zlib-gnu` is refused.

mod common;

use common::Compiler;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

const SHF_COMPRESSED: u64 = 0x800;

/// A C program with enough debug information that its sections compress (many types and functions), and `f`,
/// whose argument gdb prints.
fn c_source() -> String {
    let mut s = String::from("#include <stdio.h>\nint g = 3;\n");
    for i in 0..120 {
        s += &format!(
            "struct s{i} {{ int a{i}; long b{i}; const char *name{i}; }};\n\
             int fn{i}(struct s{i} *p) {{ int local{i} = p->a{i} * {i}; return local{i} + (int)p->b{i}; }}\n"
        );
    }
    s + "int f(int var)\n{\n  int twice = var * 2;\n  return twice + g;\n}\n\
         int main(void)\n{\n  struct s7 s = {1, 2, \"x\"};\n  printf(\"%d %d\\n\", fn7(&s), f(2));\n  return 0;\n}\n"
}

fn cxx_source() -> String {
    let mut s = String::from(
        "#include <cstdio>\nnamespace ns {\ntemplate <typename T> struct Box { T value; T get() const { return value; } };\n\
         struct Shape { virtual ~Shape() {} virtual int area() const = 0; };\n}\nint g = 3;\n",
    );
    for i in 0..60 {
        s += &format!(
            "struct C{i} : ns::Shape {{ int v{i}; int area() const override {{ return v{i} * {i}; }} }};\n\
             int use{i}() {{ C{i} c; c.v{i} = {i}; ns::Box<long> b{{{i}}}; return c.area() + (int)b.get(); }}\n"
        );
    }
    s + "int f(int var)\n{\n  ns::Box<int> b{var};\n  return b.get() * 2 + g;\n}\n\
         int main()\n{\n  std::printf(\"%d %d\\n\", use7(), f(2));\n  return 0;\n}\n"
}

/// One object to link: compiler, language, DWARF version and how its own debug sections are compressed.
#[derive(Clone, Copy, Debug)]
struct Build {
    compiler: Compiler,
    cxx: bool,
    dwarf: u32,
    input: &'static str,
}

impl Build {
    fn tag(&self) -> String {
        let lang = if self.cxx { "cxx" } else { "c" };
        format!(
            "{}-{lang}-dwarf{}-in-{}",
            self.compiler.name(),
            self.dwarf,
            self.input
        )
    }
    fn source(&self) -> &'static str {
        if self.cxx { "prog.cc" } else { "prog.c" }
    }
    fn driver(&self) -> &'static str {
        if self.cxx { "g++" } else { "gcc" }
    }
    /// The symbol of `f`.
    fn f_symbol(&self) -> &'static str {
        if self.cxx { "_Z1fi" } else { "f" }
    }
}

/// Compiles `b` in `dir` into `obj`: the compiler's `-gz` where it has the format, else the debug sections
/// compressed afterwards by objcopy (gcc 12 has no `-gz=zstd`).
fn compile(b: &Build, dir: &Path, obj: &str) {
    let dwarf = format!("-gdwarf-{}", b.dwarf);
    let mut args = vec!["-c", "-g", dwarf.as_str(), "-O0", b.source(), "-o", obj];
    let gz = format!("-gz={}", b.input);
    let by_compiler = b.input != "none" && !(b.compiler == Compiler::Gcc && b.input == "zstd");
    if by_compiler {
        args.push(&gz);
    }
    common::tool_ok(b.compiler.driver(b.cxx), &args, dir);
    if b.input != "none" && !by_compiler {
        let how = format!("--compress-debug-sections={}", b.input);
        common::tool_ok("objcopy", &[&how, obj], dir);
    }
}

/// A section header: name, flags, offset, size, alignment.
struct Section {
    name: String,
    flags: u64,
    offset: usize,
    size: usize,
    align: u64,
}

fn u64_at(d: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(d[at..at + 8].try_into().unwrap())
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
}

/// The section headers of an ELF64 file.
fn sections(file: &[u8]) -> Vec<Section> {
    let shoff = u64_at(file, 0x28) as usize;
    let count = u16::from_le_bytes([file[0x3c], file[0x3d]]) as usize;
    let shstrndx = u16::from_le_bytes([file[0x3e], file[0x3f]]) as usize;
    let header = |i: usize| &file[shoff + 64 * i..shoff + 64 * (i + 1)];
    let names = u64_at(header(shstrndx), 24) as usize;
    (0..count)
        .map(|i| {
            let h = header(i);
            let at = names + u32_at(h, 0) as usize;
            let end = at + file[at..].iter().position(|&c| c == 0).unwrap();
            Section {
                name: String::from_utf8_lossy(&file[at..end]).into_owned(),
                flags: u64_at(h, 8),
                offset: u64_at(h, 24) as usize,
                size: u64_at(h, 32) as usize,
                align: u64_at(h, 48),
            }
        })
        .collect()
}

/// Checks the `.debug_*` sections of `out` against those of the same link uncompressed, `plain`: each one either
/// compressed with `ch_type` (its `Elf64_Chdr` giving the uncompressed size and alignment) or left as it is, and
/// then small; `.debug_info` compressed. Returns what is wrong.
fn check_headers(dir: &Path, out: &str, plain: &str, ch_type: u32) -> Vec<String> {
    let (file, reference) = (
        std::fs::read(dir.join(out)).unwrap(),
        std::fs::read(dir.join(plain)).unwrap(),
    );
    let reference = sections(&reference);
    let mut wrong = Vec::new();
    let debug: Vec<Section> = (sections(&file).into_iter())
        .filter(|s| s.name.starts_with(".debug_"))
        .collect();
    for s in &debug {
        let Some(r) = reference.iter().find(|r| r.name == s.name) else {
            wrong.push(format!("{out}: {} is not in the uncompressed link", s.name));
            continue;
        };
        if s.flags & SHF_COMPRESSED == 0 {
            if s.size != r.size || s.size > 1024 {
                wrong.push(format!(
                    "{out}: {} ({} bytes) is not compressed",
                    s.name, s.size
                ));
            }
            continue;
        }
        let chdr = &file[s.offset..s.offset + 24];
        let got = (u32_at(chdr, 0), u64_at(chdr, 8), u64_at(chdr, 16), s.align);
        let want = (ch_type, r.size as u64, r.align.max(1), 8);
        if got != want || s.size >= r.size {
            wrong.push(format!(
                "{out}: {}: (ch_type, ch_size, ch_addralign, sh_addralign) {got:?}, expected {want:?}; {} bytes \
                 from {}",
                s.name, s.size, r.size
            ));
        }
    }
    if !debug
        .iter()
        .any(|s| s.name == ".debug_info" && s.flags & SHF_COMPRESSED != 0)
    {
        wrong.push(format!("{out}: .debug_info is not compressed"));
    }
    wrong
}

/// What a debug information reader prints for `file`, the file's name replaced.
fn dump(dir: &Path, program: &str, args: &[&str], file: &str) -> String {
    let mut all = args.to_vec();
    all.push(file);
    common::tool_ok(program, &all, dir).replace(file, "OUT")
}

/// `addr2line`'s answer for `f`'s address in `file`.
fn line_of_f(dir: &Path, file: &str, symbol: &str) -> String {
    let nm = common::tool_ok("nm", &[file], dir);
    let addr = nm
        .lines()
        .find(|l| l.ends_with(&format!(" T {symbol}")))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{file}: no {symbol}"))
        .to_string();
    common::tool_ok("addr2line", &["-e", file, &addr], dir)
}

/// gdb stopped at `f`: the `print var` line.
fn gdb_prints(dir: &Path, file: &str) -> String {
    let out = common::tool(
        "gdb",
        &[
            "-nx",
            "-batch",
            "-ex",
            "break f",
            "-ex",
            "run",
            "-ex",
            "print var",
            file,
        ],
        Some(dir),
    );
    (out.stdout_str().lines())
        .filter(|l| l.starts_with("$1") || l.starts_with("Breakpoint 1,"))
        .map(|l| l.split(" at ").next().unwrap_or(l).to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Links `obj` with `shim`'s linker and `value`; returns the output's name, or a message.
fn link(
    b: &Build,
    dir: &Path,
    shim: &Path,
    obj: &str,
    side: &str,
    value: &str,
) -> Result<String, String> {
    let out = format!("{side}-{value}");
    let shim = format!("-B{}/", shim.display());
    let opt = format!("-Wl,--compress-debug-sections={value}");
    let o = common::tool(b.driver(), &[&shim, &opt, obj, "-o", &out], Some(dir));
    if !o.success() {
        return Err(format!("{} link with {value} failed:\n{}", side, o.log()));
    }
    Ok(out)
}

/// Every check for one object; returns what failed.
fn check_build(b: &Build, root: &Path, shim: &Path, bfd: &Path, gdb: bool) -> Vec<String> {
    let dir = root.join(b.tag());
    common::fresh_dir(&dir);
    let src = if b.cxx { cxx_source() } else { c_source() };
    std::fs::write(dir.join(b.source()), src).unwrap();
    compile(b, &dir, "prog.o");
    let mut wrong = Vec::new();
    let mut outs = Vec::new();
    for (side, linker, values) in [
        ("rivet", shim, &["none", "zlib", "zlib-gabi", "zstd"][..]),
        ("bfd", bfd, &["none", "zlib", "zstd"][..]),
    ] {
        for v in values {
            match link(b, &dir, linker, "prog.o", side, v) {
                Ok(o) => outs.push(o),
                Err(e) => return vec![format!("{}: {e}", b.tag())],
            }
        }
    }
    let run = |f: &str| common::tool_ok(&dir.join(f).display().to_string(), &[], &dir);
    let expected_run = run("bfd-zlib");
    let expected_line = line_of_f(&dir, "bfd-zlib", b.f_symbol());
    let expected_gdb = if gdb {
        gdb_prints(&dir, "bfd-zlib")
    } else {
        String::new()
    };
    let lines = |f: &str| dump(&dir, "readelf", &["--debug-dump=decodedline", "-W"], f);
    let dwarf = |f: &str| dump(&dir, "objdump", &["--dwarf"], f);
    let (plain_lines, plain_dwarf) = (lines("rivet-none"), dwarf("rivet-none"));
    for (value, ch_type) in [("zlib", 1), ("zlib-gabi", 1), ("zstd", 2)] {
        let out = format!("rivet-{value}");
        wrong.extend(check_headers(&dir, &out, "rivet-none", ch_type));
        if value != "zlib-gabi" {
            wrong.extend(check_headers(
                &dir,
                &format!("bfd-{value}"),
                "bfd-none",
                ch_type,
            ));
        }
        if lines(&out) != plain_lines {
            wrong.push(format!(
                "{out}: readelf --debug-dump=decodedline differs from rivet-none's"
            ));
        }
        if dwarf(&out) != plain_dwarf {
            wrong.push(format!("{out}: objdump --dwarf differs from rivet-none's"));
        }
        if run(&out) != expected_run {
            wrong.push(format!("{out}: prints other than GNU ld's output"));
        }
        let line = line_of_f(&dir, &out, b.f_symbol());
        if line != expected_line || line.contains("??") {
            wrong.push(format!(
                "{out}: addr2line says {line:?}, GNU ld's {expected_line:?}"
            ));
        }
        if gdb && value != "zlib-gabi" {
            let got = gdb_prints(&dir, &out);
            if got != expected_gdb || !got.contains("$1 = 2") {
                wrong.push(format!(
                    "{out}: gdb printed {got:?}, with GNU ld's {expected_gdb:?}"
                ));
            }
        }
    }
    wrong
        .into_iter()
        .map(|w| format!("{}: {w}", b.tag()))
        .collect()
}

#[test]
fn compressed_debug_sections_read_as_gnu_lds() {
    let tools = [
        "gcc",
        "g++",
        "objcopy",
        "readelf",
        "objdump",
        "nm",
        "addr2line",
    ];
    let Some((root, shim, bfd)) = common::against_gnu_ld("compress-debug", &tools) else {
        return;
    };
    let gdb = common::have_tool("gdb");
    if !gdb {
        eprintln!("gdb not found: its checks are skipped");
    }
    let mut builds = Vec::new();
    for compiler in common::compilers() {
        for cxx in [false, true] {
            for dwarf in [4, 5] {
                for input in ["none", "zlib", "zstd"] {
                    builds.push(Build {
                        compiler,
                        cxx,
                        dwarf,
                        input,
                    });
                }
            }
        }
    }
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..common::jobs().min(builds.len()) {
            s.spawn(|| {
                while let Some(b) = builds.get(next.fetch_add(1, Ordering::Relaxed)) {
                    // gdb for the objects whose own sections are plain: it reads the output, whatever the input.
                    let wrong = check_build(b, &root, &shim, &bfd, gdb && b.input == "none");
                    failures.lock().unwrap().extend(wrong);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `-r --compress-debug-sections`: the relocatable object's debug sections compressed as GNU ld's are, and the
/// object links (with rivet and with GNU ld) into a program whose line table is that of the program the same linker
/// makes from the original object, and in which gdb finds `f`'s argument.
#[test]
fn relocatable_output_is_compressed_as_gnu_lds() {
    let tools = ["gcc", "readelf", "gdb"];
    let Some((dir, shim, bfd)) = common::against_gnu_ld("compress-debug-r", &tools) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("prog.c"), c_source()).unwrap();
    common::tool_ok("gcc", &["-c", "-g", "-O0", "prog.c"], &dir);
    let b = Build {
        compiler: Compiler::Gcc,
        cxx: false,
        dwarf: 5,
        input: "none",
    };
    let lines = |f: &str| dump(&dir, "readelf", &["--debug-dump=decodedline", "-W"], f);
    // Each linker's program linked from the original object.
    let direct: Vec<String> = [("rivet", &shim), ("bfd", &bfd)]
        .iter()
        .map(|(side, shim)| {
            lines(&link(&b, &dir, shim, "prog.o", &format!("{side}-direct"), "none").unwrap())
        })
        .collect();
    let mut wrong = Vec::new();
    for (value, ch_type) in [("zlib", 1), ("zstd", 2)] {
        let how = format!("--compress-debug-sections={value}");
        let (ours, theirs) = (format!("r-{value}.o"), format!("r-bfd-{value}.o"));
        let ld = linker.display().to_string();
        common::tool_ok(&ld, &["-r", &how, "prog.o", "-o", &ours], &dir);
        common::tool_ok("ld.bfd", &["-r", &how, "prog.o", "-o", &theirs], &dir);
        common::tool_ok(&ld, &["-r", "prog.o", "-o", "r-plain.o"], &dir);
        common::tool_ok("ld.bfd", &["-r", "prog.o", "-o", "r-bfd-plain.o"], &dir);
        wrong.extend(check_headers(&dir, &ours, "r-plain.o", ch_type));
        wrong.extend(check_headers(&dir, &theirs, "r-bfd-plain.o", ch_type));
        for ((side, shim), direct) in [("rivet", &shim), ("bfd", &bfd)].iter().zip(&direct) {
            let out = link(
                &b,
                &dir,
                shim,
                &ours,
                &format!("{side}-from-r-{value}"),
                "none",
            )
            .unwrap();
            if lines(&out) != *direct {
                wrong.push(format!(
                    "{out}: its line table differs from {side}'s direct link's"
                ));
            }
            if !gdb_prints(&dir, &out).contains("$1 = 2") {
                wrong.push(format!("{out}: gdb does not print f's argument"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Sections of more than one chunk (1 MiB): a zlib stream of sync-flushed pieces and a sequence of zstd frames, as
/// readelf, objdump, addr2line and gdb read them; rivet's own `-r` output of several frames read back as input.
#[test]
fn multi_chunk_sections_read_as_plain() {
    let tools = ["gcc", "readelf", "objdump", "nm", "addr2line"];
    let Some((dir, shim, _)) = common::against_gnu_ld("compress-debug-big", &tools) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let mut src = String::from("#include <stdio.h>\nint g = 3;\n");
    for i in 0..14_000 {
        src += &format!(
            "struct s{i} {{ int a{i}; long b{i}; }};\nint fn{i}(struct s{i} *p) {{ return p->a{i} * {i} + (int)p->b{i}; }}\n"
        );
    }
    src += "int f(int var)\n{\n  int twice = var * 2;\n  return twice + g;\n}\n\
            int main(void)\n{\n  struct s7 s = {1, 2};\n  printf(\"%d %d\\n\", fn7(&s), f(2));\n  return 0;\n}\n";
    std::fs::write(dir.join("prog.c"), src).unwrap();
    common::tool_ok("gcc", &["-c", "-g", "-O0", "prog.c"], &dir);
    let b = Build {
        compiler: Compiler::Gcc,
        cxx: false,
        dwarf: 5,
        input: "none",
    };
    let ld = linker.display().to_string();
    common::tool_ok(
        &ld,
        &[
            "-r",
            "--compress-debug-sections=zstd",
            "prog.o",
            "-o",
            "r.o",
        ],
        &dir,
    );
    let views = |f: &str| {
        [
            dump(&dir, "readelf", &["--debug-dump=decodedline,info", "-W"], f),
            dump(&dir, "objdump", &["-WL"], f),
            line_of_f(&dir, f, "f"),
        ]
    };
    let plain = link(&b, &dir, &shim, "prog.o", "rivet", "none").unwrap();
    let expected = views(&plain);
    assert!(
        expected[0].len() > 1 << 20,
        "the debug information is too small"
    );
    let mut wrong = Vec::new();
    for (obj, value, ch_type) in [
        ("prog.o", "zlib", 1),
        ("prog.o", "zstd", 2),
        ("r.o", "zstd", 2),
    ] {
        let out = link(&b, &dir, &shim, obj, &format!("rivet-{obj}"), value).unwrap();
        wrong.extend(check_headers(&dir, &out, &plain, ch_type));
        let info = sections(&std::fs::read(dir.join(&out)).unwrap())
            .into_iter()
            .find(|s| s.name == ".debug_info")
            .unwrap();
        let file = std::fs::read(dir.join(&out)).unwrap();
        if u64_at(&file, info.offset + 8) <= 1 << 20 {
            wrong.push(format!("{out}: .debug_info fits one chunk"));
        }
        if views(&out) != expected {
            wrong.push(format!(
                "{out}: readelf, objdump or addr2line read other than the plain link's"
            ));
        }
        if common::have_tool("gdb") && !gdb_prints(&dir, &out).contains("$1 = 2") {
            wrong.push(format!("{out}: gdb does not print f's argument"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `zlib-gnu` (the `.zdebug_*` sections) is refused, with a message that says why, as lld refuses it; an unknown
/// value is refused too.
#[test]
fn zlib_gnu_is_refused() {
    let Some((linker, dir)) = common::rivet_only(
        "compress-debug-refused",
        &["gcc"],
        "GNU ld accepts zlib-gnu; rivet refuses it as lld does",
    ) else {
        return;
    };
    std::fs::write(dir.join("t.c"), "int main(void) { return 0; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "-g", "t.c"], &dir);
    let ld = linker.display().to_string();
    for (value, says) in [
        ("zlib-gnu", "zlib-gnu is not supported"),
        ("lz4", "unknown value 'lz4'"),
    ] {
        let how = format!("--compress-debug-sections={value}");
        let o = common::tool(&ld, &[&how, "t.o", "-o", "t"], Some(&dir));
        assert!(!o.success(), "{value} accepted");
        assert!(o.stderr_str().contains(says), "{value}: {}", o.log());
        assert!(!dir.join("t").exists(), "{value}: an output was written");
    }
}
