//! `-N` (`--omagic`) and `-n` (`--nmagic`): a static executable that is not demand paged, as GNU ld makes it (GRUB's configure links
//! `-N -Ttext 0x2000` and turns the result into a flat binary; its images and modules pass `-N` too). One
//! writable and executable load from the first section on, without the headers, sections packed at their own
//! alignment in memory and in the file, `.text` writable; with a script, a new load only where the addresses
//! skip a page. Compared with GNU ld: the program headers, the section table, the flat binary objcopy makes, and
//! the program's exit status. `-N` with `-shared` or `-pie` is refused, later `-l` options find archives only, and
//! `-r` ignores it, as in GNU ld.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Static, no C library, no unwind tables: `_start` exits with 0 when data, read-only data and bss are right. The
/// bss is a multiple of 8 bytes, where GNU ld's default script pads `.bss` to.
const START: &str = "long data_value = 7;\nlong bss_value;\nconst char ro_text[8] = \"rodata\";\n\
    static char buf[64] __attribute__((aligned(32)));\n\
    void _start(void) {\n\
    buf[3] = ro_text[1];\n\
    long rc = data_value + bss_value - 7 + ro_text[data_value - 7] - 'r' + buf[3] - 'o';\n\
    __asm__ volatile(\"mov $60, %%eax\\n syscall\" :: \"D\"(rc) : \"rax\");\n}\n";

/// The loads and the allocated sections (name, type, address, offset, size, flags, alignment): addresses and file
/// offsets are what -N and -n are about. Not the entry sizes: GNU ld keeps `.init_array`'s from the inputs and
/// gives a static `.got` none, where rivet writes the opposite.
fn shape(dir: &Path, exe: &str) -> String {
    let out = common::tool_ok("readelf", &["-lSW", exe], dir);
    out.lines()
        .map(|l| l.replace("[ ", "["))
        .filter_map(|l| {
            let mut f: Vec<&str> = l.split_whitespace().collect();
            let load = matches!(f.first(), Some(&"LOAD" | &"GNU_RELRO" | &"PHDR" | &"TLS"));
            let alloc = f.first().is_some_and(|x| x.starts_with('['))
                && f.get(7).is_some_and(|flags| flags.contains('A'));
            if alloc {
                f.remove(6);
            }
            (load || alloc).then(|| f.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn link(ld: &Path, dir: &Path, exe: &str, opts: &[&str]) -> (bool, String) {
    let o = Command::new(ld)
        .args(["-o", exe])
        .args(opts)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The linker under test, GNU ld and a fresh work directory `name`; `None` (skipped) without GNU ld and the tools.
fn against_gnu_ld(name: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let (linker, _) = common::linker_under_test();
    let Some(bfd) = common::which("ld.bfd") else {
        eprintln!("skipped: ld.bfd needed");
        return None;
    };
    if !["gcc", "readelf", "objcopy"]
        .iter()
        .all(|t| common::have_tool(t))
    {
        eprintln!("skipped: gcc, readelf and objcopy needed");
        return None;
    }
    let dir = common::work_root().join(name);
    common::fresh_dir(&dir);
    Some((linker, bfd, dir))
}

/// Links `opts` with both linkers: the same shape and `objcopy -O binary` image, and (`runs`) rivet's output
/// exits with 0.
fn same_as_gnu_ld(linker: &Path, bfd: &Path, dir: &Path, opts: &[&str], runs: bool) {
    let (ok, err) = link(linker, dir, "r", opts);
    assert!(ok, "{opts:?}: {err}");
    let (ok, err) = link(bfd, dir, "b", opts);
    assert!(ok, "{opts:?}: GNU ld: {err}");
    assert_eq!(shape(dir, "r"), shape(dir, "b"), "{opts:?}");
    for exe in ["r", "b"] {
        let flat = format!("{exe}.bin");
        common::tool_ok("objcopy", &["-O", "binary", exe, &flat], dir);
    }
    assert_eq!(
        std::fs::read(dir.join("r.bin")).unwrap(),
        std::fs::read(dir.join("b.bin")).unwrap(),
        "{opts:?}: objcopy -O binary"
    );
    if runs {
        let status = Command::new(dir.join("r")).status().unwrap();
        assert!(status.success(), "{opts:?}: {status}");
    }
}

#[test]
fn omagic_outputs_are_gnu_lds() {
    let Some((linker, bfd, dir)) = against_gnu_ld("omagic") else {
        return;
    };
    std::fs::write(dir.join("s.c"), START).unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-O1",
            "-fno-pie",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "s.c",
        ],
        &dir,
    );
    std::fs::write(
        dir.join("t.ld"),
        "SECTIONS {\n  . = 0x10000 + SIZEOF_HEADERS;\n  .text : { *(.text*) }\n  .rodata : { *(.rodata*) }\n  \
         . = 0x20000;\n  .data : { *(.data*) }\n  .bss : { *(.bss*) *(COMMON) }\n}\n",
    )
    .unwrap();
    // Linux maps a load only where its file offset and address agree modulo the page size: the outputs whose
    // addresses do not include the headers' size (as the default's do) are not run, by either linker's.
    let cases: &[(&[&str], bool)] = &[
        (&["-N", "s.o"], true),
        (&["--omagic", "s.o", "-e", "_start"], true),
        (&["-N", "-Ttext", "0x800000", "s.o"], false),
        // GRUB's configure check: a flat binary of code linked at 0x2000 (below what Linux maps).
        (&["-N", "-Ttext", "0x2000", "s.o"], false),
        (&["-N", "-T", "t.ld", "s.o"], false),
    ];
    for &(opts, runs) in cases {
        same_as_gnu_ld(&linker, &bfd, &dir, opts, runs);
    }
    // The last of -N and --no-omagic counts: the output is the plain link's.
    assert!(link(&linker, &dir, "r1", &["-N", "--no-omagic", "s.o"]).0);
    assert!(link(&linker, &dir, "r2", &["s.o"]).0);
    assert_eq!(
        std::fs::read(dir.join("r1")).unwrap(),
        std::fs::read(dir.join("r2")).unwrap(),
        "-N --no-omagic"
    );
}

/// What -N refuses or changes besides the layout, as GNU ld: `-shared` and `-pie` (GNU ld writes a shared object at
/// the executable's address and fails the PIE), later `-l` options find only archives, and `-r` ignores it.
#[test]
fn omagic_is_static_and_ignored_by_r() {
    let Some((linker, dir)) = common::rivet_only(
        "omagic-rules",
        &["gcc", "ld.bfd", "ar", "nm"],
        "rivet's errors; archives checked against GNU ld",
    ) else {
        return;
    };
    std::fs::write(dir.join("s.c"), START).unwrap();
    std::fs::write(dir.join("x.c"), "int x_from_archive(void) { return 1; }\n").unwrap();
    std::fs::write(
        dir.join("u.c"),
        "int x_from_archive(void);\nint use(void) { return x_from_archive(); }\n",
    )
    .unwrap();
    for c in ["s.c", "x.c", "u.c"] {
        common::tool_ok("gcc", &["-O1", "-fPIC", "-c", c], &dir);
    }
    common::tool_ok("gcc", &["-shared", "-o", "libx.so", "x.o"], &dir);
    common::tool_ok("ar", &["rc", "libx.a", "x.o"], &dir);
    // -n as -N: GNU ld fails or refuses the same.
    for (magic, said) in [("-N", "-N (--omagic)"), ("-n", "-n (--nmagic)")] {
        for (kind, word) in [("-shared", "-shared"), ("-pie", "-pie")] {
            let (ok, err) = link(&linker, &dir, "o", &[kind, magic, "s.o"]);
            assert!(!ok, "{kind}");
            assert!(
                err.contains(&format!("{said} makes a static executable")) && err.contains(word),
                "{err}"
            );
        }
        // A shared object named on the command line: GNU ld's error.
        let (ok, err) = link(&linker, &dir, "o", &[magic, "s.o", "libx.so"]);
        assert!(
            !ok && err.contains("attempted static link of dynamic object 'libx.so'"),
            "{err}"
        );
        // -N then -lx: the archive's member is linked in (GNU ld does the same), not the shared library.
        let bfd = common::which("ld.bfd").unwrap();
        for ld in [&linker, &bfd] {
            let (ok, err) = link(ld, &dir, "o", &[magic, "s.o", "u.o", "-L.", "-lx"]);
            assert!(ok, "{magic} {}: {err}", ld.display());
            let syms = common::tool_ok("nm", &["o"], &dir);
            assert!(
                syms.contains(" T x_from_archive"),
                "{magic} {}: {syms}",
                ld.display()
            );
        }
    }
    // -r: the same object with and without -N.
    assert!(link(&linker, &dir, "r1.o", &["-r", "s.o", "u.o"]).0);
    let (ok, err) = link(&linker, &dir, "r2.o", &["-r", "-N", "-d", "s.o", "u.o"]);
    assert!(ok, "{err}");
    let (ok, err) = link(&linker, &dir, "r3.o", &["-r", "-d", "s.o", "u.o"]);
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read(dir.join("r2.o")).unwrap(),
        std::fs::read(dir.join("r3.o")).unwrap()
    );
}

/// `__ehdr_start` under `-N`: the headers are in no load, so GNU ld leaves it undefined: a weak reference reads 0
/// (the program exits 7) and a strong one is an undefined-symbol error. Defining it would point code such as
/// glibc's static start-up (which reads the program headers through it) at memory nothing maps.
#[test]
fn no_header_symbol_under_omagic_as_gnu_ld() {
    let (linker, _) = common::linker_under_test();
    let Some((dir, _, _)) = common::against_gnu_ld("omagic-ehdr", &["gcc"]) else {
        return;
    };
    let bfd = common::which("ld.bfd").unwrap();
    // The strong reference's address is taken in assembly: a compiler folds `&__ehdr_start != 0` for it.
    let src = |decl: &str, get: &str| {
        format!(
            "extern char __ehdr_start{decl};\nvoid _start(void) {{\n\
             char *p{get};\n\
             long rc = p ? 9 : 7;\n\
             __asm__ volatile(\"mov $60, %%eax\\n syscall\" :: \"D\"(rc) : \"rax\");\n}}\n"
        )
    };
    let weak = src(" __attribute__((weak))", " = &__ehdr_start");
    let strong = src(
        "",
        ";\n__asm__(\"lea __ehdr_start(%%rip), %0\" : \"=r\"(p))",
    );
    std::fs::write(dir.join("weak.c"), weak).unwrap();
    std::fs::write(dir.join("strong.c"), strong).unwrap();
    for c in ["weak.c", "strong.c"] {
        common::tool_ok("gcc", &["-O1", "-fno-pic", "-c", c], &dir);
    }
    for ld in [&bfd, &linker] {
        let (ok, err) = link(ld, &dir, "weak", &["-N", "weak.o"]);
        assert!(ok, "{}: {err}", ld.display());
        let run = common::tool(dir.join("weak").to_str().unwrap(), &[], Some(&dir));
        assert!(
            run.status_text().ends_with(" 7"),
            "{}: {}",
            ld.display(),
            run.log()
        );
        let (ok, err) = link(ld, &dir, "strong", &["-N", "strong.o"]);
        assert!(
            !ok && err.contains("__ehdr_start"),
            "{}: {err}",
            ld.display()
        );
        // Demand paged, the headers are loaded and the symbol is theirs.
        assert!(link(ld, &dir, "paged", &["weak.o"]).0);
        let run = common::tool(dir.join("paged").to_str().unwrap(), &[], Some(&dir));
        assert!(
            run.status_text().ends_with(" 9"),
            "{}: {}",
            ld.display(),
            run.log()
        );
    }
}

/// `-N` with a script whose `PHDRS` load says `FILEHDR`: GNU ld loads the headers there after all (at the page
/// below the first section, file offset 0), and defines `__ehdr_start` (the program reads the header's second
/// byte, 'E', and exits with it).
#[test]
fn headers_loaded_by_filehdr_under_omagic_as_gnu_ld() {
    let (linker, _) = common::linker_under_test();
    let Some((dir, _, _)) = common::against_gnu_ld("omagic-filehdr", &["gcc", "readelf"]) else {
        return;
    };
    let bfd = common::which("ld.bfd").unwrap();
    std::fs::write(
        dir.join("fh.ld"),
        "PHDRS { text PT_LOAD FILEHDR PHDRS; }\nSECTIONS { . = 0x400000 + SIZEOF_HEADERS;\n\
         .text : { *(.text) } :text .data : { *(.data) } :text .bss : { *(.bss) } :text }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("fh.c"),
        "extern char __ehdr_start __attribute__((weak));\nint d = 3;\nvoid _start(void) {\n\
         long rc = &__ehdr_start ? *(unsigned char *)(&__ehdr_start + 1) : 7;\n\
         __asm__ volatile(\"mov $60, %%eax\\n syscall\" :: \"D\"(rc) : \"rax\");\n}\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-O1",
            "-fno-pic",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "fh.c",
        ],
        &dir,
    );
    let loads = |exe: &str| {
        let out = common::tool_ok("readelf", &["-lW", exe], &dir);
        (out.lines())
            .filter(|l| l.trim_start().starts_with("LOAD"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let mut seen = Vec::new();
    for (ld, exe) in [(&bfd, "bfd"), (&linker, "test")] {
        let (ok, err) = link(ld, &dir, exe, &["-N", "-T", "fh.ld", "fh.o"]);
        assert!(ok, "{}: {err}", ld.display());
        let run = common::tool(dir.join(exe).to_str().unwrap(), &[], Some(&dir));
        seen.push((run.status_text(), loads(exe)));
    }
    assert!(
        seen[0].0.ends_with(" 69"),
        "GNU ld's program: {}",
        seen[0].0
    );
    assert_eq!(
        seen[1], seen[0],
        "the linker under test (left) against GNU ld (right)"
    );
}

/// More kinds of data than `START`: TLS (`.tbss` more aligned than `.tdata`), `.init_array`, RELRO data and a
/// GOT entry (compiled `-fpie`), none read at run time but the GOT entry (0: the weak symbol is undefined).
const RICH: &str = "long data_value = 7;\nlong bss_value;\n\
    __thread int tls_value = 3;\n__thread long tls_zero[4] __attribute__((aligned(16)));\n\
    static void init(void) { data_value++; }\n\
    __attribute__((used, section(\".init_array\"))) static void (*init_entry)(void) = init;\n\
    void (*const init_ref)(void) = init;\n\
    extern int absent __attribute__((weak));\n\
    void _start(void) {\n\
    long rc = data_value - 7 + bss_value + (&absent != 0);\n\
    __asm__ volatile(\"mov $60, %%eax\\n syscall\" :: \"D\"(rc) : \"rax\");\n}\n";

/// `-n` (`--nmagic`), GNU ld's `-n` script: as `-N`, but `.text` read-only and the data on the next page, at
/// `DATA_SEGMENT_ALIGN`'s place, its RELRO part moved to end on a page (`-z relro`, GNU ld's default) without a
/// `PT_GNU_RELRO`, or (`-z norelro`) at the same offset in the next page, or at the page's start where that
/// spares a common-size page. Compared with GNU ld as `-N` is, with `-N` on the same inputs too (a load starting
/// at its first section, `.bss`'s file offset, the TLS block's alignment). The two assembly inputs reach a data
/// start a page further on (`relro_far.s`), and the page-sparing start (`spare.s`). Each has a `.bss`: rivet keeps
/// an empty one from the inputs where GNU ld drops it.
#[test]
fn nmagic_outputs_are_gnu_lds() {
    let Some((linker, bfd, dir)) = against_gnu_ld("nmagic") else {
        return;
    };
    std::fs::write(dir.join("s.c"), START).unwrap();
    std::fs::write(dir.join("r.c"), RICH).unwrap();
    let stack = ".section .note.GNU-stack,\"\",@progbits\n";
    let exit = ".globl _start\n_start: mov $60, %eax\n xor %edi, %edi\n syscall\n";
    std::fs::write(
        dir.join("relro_far.s"),
        format!(
            "{stack}.text\n{exit} .fill 0xf70,1,0x90\n.section .data.rel.ro,\"aw\"\n.balign 8\n.fill 0x100,1,1\n\
             .data\n.quad 2\n.bss\n.zero 8\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("spare.s"),
        format!("{stack}.text\n{exit} .fill 0xef0,1,0x90\n.data\n.quad 2\n.bss\n.balign 32\n.zero 0x190\n"),
    )
    .unwrap();
    let flags = [
        "-O1",
        "-fno-stack-protector",
        "-fno-asynchronous-unwind-tables",
        "-c",
    ];
    for (src, pie) in [
        ("s.c", "-fno-pie"),
        ("r.c", "-fpie"),
        ("relro_far.s", "-fno-pie"),
        ("spare.s", "-fno-pie"),
    ] {
        let mut args = flags.to_vec();
        args.extend([pie, src]);
        common::tool_ok("gcc", &args, &dir);
    }
    let cases: &[&[&str]] = &[
        &["-n", "s.o"],
        &["--nmagic", "-z", "norelro", "s.o"],
        &["-n", "r.o"],
        &["-n", "-z", "norelro", "r.o"],
        &["-n", "-z", "max-page-size=0x10000", "r.o"],
        &["-n", "-z", "common-page-size=0x800", "r.o"],
        &["-N", "r.o"],
        &["-n", "-z", "now", "r.o"],
        &["-N", "-z", "now", "r.o"],
        &["-n", "relro_far.o"],
        &["-n", "-z", "norelro", "relro_far.o"],
        &["-n", "spare.o"],
        &["-n", "-z", "norelro", "spare.o"],
    ];
    for &opts in cases {
        same_as_gnu_ld(&linker, &bfd, &dir, opts, true);
    }
    // -n with a text address: the load's file offset follows its addresses modulo its alignment.
    let opts = ["-n", "-Ttext", "0x800000", "r.o"];
    assert!(link(&linker, &dir, "r", &opts).0);
    assert!(link(&bfd, &dir, "b", &opts).0);
    assert_eq!(shape(&dir, "r"), shape(&dir, "b"), "{opts:?}");
    // The last of -N, -n and --no-omagic counts.
    assert!(link(&linker, &dir, "r1", &["-n", "--no-omagic", "s.o"]).0);
    assert!(link(&linker, &dir, "r2", &["s.o"]).0);
    assert!(link(&linker, &dir, "r3", &["-N", "-n", "s.o"]).0);
    assert!(link(&linker, &dir, "r4", &["-n", "s.o"]).0);
    for (a, b) in [("r1", "r2"), ("r3", "r4")] {
        assert_eq!(
            std::fs::read(dir.join(a)).unwrap(),
            std::fs::read(dir.join(b)).unwrap(),
            "{a} {b}"
        );
    }
}
