//! Inputs with one bad value (issue 34), each a finding of the mutation fuzzer (tests/fuzz.rs) or of the issue's
//! own list: a real object compiled by gcc, one field patched. Each must be refused with an error that names the
//! file, the section and what is wrong (lld's wording where lld has one), exit status 1, no panic, and no output
//! left behind; or, where the value is valid, linked as GNU ld links it.

mod common;

use std::path::PathBuf;
use std::process::Command;

const SRC: &str = r#"
#include <stdio.h>
__thread int tls_counter = 3;
int data_value = 5;
static int helper(int x) { return x * 2 + tls_counter; }
int main(void) { printf("%d\n", helper(data_value)); return 0; }
"#;

struct Env {
    linker: PathBuf,
    dir: PathBuf,
    shim: PathBuf,
}

impl Env {
    fn new(tag: &str, cflags: &[&str]) -> Option<Env> {
        let (linker, dir) = common::rivet_only(
            &format!("hostile-{tag}"),
            &["gcc"],
            "rivet's own diagnostics for bad inputs",
        )?;
        std::fs::write(dir.join("main.c"), SRC).unwrap();
        let mut args = vec!["-c", "-O1", "main.c"];
        args.extend_from_slice(cflags);
        common::tool_ok("gcc", &args, &dir);
        let shim = common::ld_shim_dir(&linker, &format!("hostile-{tag}"));
        Some(Env { linker, dir, shim })
    }

    fn object(&self) -> Vec<u8> {
        std::fs::read(self.dir.join("main.o")).unwrap()
    }

    /// Links `obj` (written as `bad.o`) into an executable through gcc's link line.
    fn link(&self, obj: &[u8], extra: &[&str]) -> common::Outcome {
        std::fs::write(self.dir.join("bad.o"), obj).unwrap();
        let _ = std::fs::remove_file(self.dir.join("out"));
        let shim = format!("-B{}/", self.shim.display());
        let mut args = vec![shim.as_str(), "-o", "out", "bad.o"];
        args.extend_from_slice(extra);
        common::tool("gcc", &args, Some(&self.dir))
    }

    /// Links `obj` and checks that it is refused with every fragment of `want` in the message and no output.
    fn refused(&self, obj: &[u8], want: &[&str]) {
        let r = self.link(obj, &[]);
        let err = r.stderr_str();
        assert!(!r.success(), "linked: {}", r.log());
        assert!(!err.contains("panicked"), "{err}");
        for w in want {
            assert!(err.contains(w), "missing {w:?} in: {err}");
        }
        assert!(!self.dir.join("out").exists(), "an output was left behind");
        let leftovers: Vec<_> = std::fs::read_dir(&self.dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("out"))
            .collect();
        assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    }
}

/// Section headers of an ELF64 object: (header offset, name, type, data offset, size).
fn sections(b: &[u8]) -> Vec<(usize, String, u32, usize, usize)> {
    let u = |at: usize, w: usize| {
        let mut v = [0u8; 8];
        v[..w].copy_from_slice(&b[at..at + w]);
        u64::from_le_bytes(v) as usize
    };
    let (shoff, shnum, shstrndx) = (u(0x28, 8), u(0x3c, 2), u(0x3e, 2));
    let strtab = u(shoff + shstrndx * 64 + 24, 8);
    (0..shnum)
        .map(|i| {
            let h = shoff + i * 64;
            let name_at = strtab + u(h, 4);
            let end = name_at + b[name_at..].iter().position(|&c| c == 0).unwrap();
            let name = String::from_utf8_lossy(&b[name_at..end]).into_owned();
            (h, name, u(h + 4, 4) as u32, u(h + 24, 8), u(h + 32, 8))
        })
        .collect()
}

fn section(b: &[u8], name: &str) -> (usize, usize, usize) {
    let (h, _, _, off, size) = sections(b)
        .into_iter()
        .find(|s| s.1 == name)
        .unwrap_or_else(|| panic!("no section {name}"));
    (h, off, size)
}

fn put(b: &mut [u8], at: usize, v: u64, w: usize) {
    b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
}

fn with_align(b: &[u8], name: &str, align: u64) -> Vec<u8> {
    let mut b = b.to_vec();
    let (h, _, _) = section(&b, name);
    put(&mut b, h + 48, align, 8);
    b
}

#[test]
fn alignment_not_a_power_of_two() {
    let Some(env) = Env::new("align-pow2", &[]) else {
        return;
    };
    let o = env.object();
    // The issue's examples: 0x7fffffff made rivet allocate and pre-fault 2 GiB; .tdata at 0x80000004 linked into a
    // 2 GiB executable that crashed.
    env.refused(
        &with_align(&o, ".text", 0x7fff_ffff),
        &["bad.o:(.text): sh_addralign 0x7fffffff is not a power of 2"],
    );
    env.refused(
        &with_align(&o, ".tdata", 0x8000_0004),
        &["bad.o:(.tdata): sh_addralign 0x80000004 is not a power of 2"],
    );
    // 2^64 - 24: "output parts overlap" in the writer.
    env.refused(
        &with_align(&o, ".data", u64::MAX - 23),
        &["bad.o:(.data): sh_addralign", "is not a power of 2"],
    );
}

#[test]
fn alignment_too_large() {
    let Some(env) = Env::new("align-large", &[]) else {
        return;
    };
    let o = env.object();
    // 2^40 made rivet try to create a 1 TB file; 2^63 panicked in the writer.
    for a in [1u64 << 40, 1 << 63] {
        env.refused(
            &with_align(&o, ".data", a),
            &[&format!("bad.o:(.data): sh_addralign {a:#x} is too large")],
        );
    }
}

/// A valid large alignment links as in GNU ld, and the gap it leaves between output sections takes no disk space.
#[test]
fn large_alignment_output_is_sparse() {
    let Some(env) = Env::new("align-sparse", &[]) else {
        return;
    };
    let o = with_align(&env.object(), ".tdata", 1 << 30);
    let r = env.link(&o, &[]);
    assert!(r.success(), "{}", r.log());
    let meta = std::fs::metadata(env.dir.join("out")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert!(meta.len() > 1 << 30, "size {}", meta.len());
    assert!(
        meta.blocks() * 512 < 16 << 20,
        "{} bytes of disk for a sparse output",
        meta.blocks() * 512
    );
    let run = common::tool(env.dir.join("out").to_str().unwrap(), &[], Some(&env.dir));
    assert_eq!(run.stdout_str(), "13\n", "{}", run.log());
}

#[test]
fn compressed_section_alignment() {
    let Some(env) = Env::new("chdr-align", &["-g", "-gz=zlib"]) else {
        return;
    };
    let mut o = env.object();
    let (_, off, _) = section(&o, ".debug_info");
    // Elf64_Chdr: ch_type, ch_reserved, ch_size, ch_addralign.
    put(&mut o, off + 16, 0xf500_0008, 8);
    env.refused(
        &o,
        &["bad.o:(.debug_info): ch_addralign 0xf5000008 is not a power of 2"],
    );
}

/// The first relocation of `.rela.eh_frame`, moved onto its record's length field: the writer's `.eh_frame_hdr`
/// then read a corrupt length and sliced out of range.
#[test]
fn eh_frame_relocation_on_a_record_header() {
    let Some(env) = Env::new("eh-reloc", &[]) else {
        return;
    };
    let mut o = env.object();
    let (_, rela, _) = section(&o, ".rela.eh_frame");
    let (_, _, eh_size) = section(&o, ".eh_frame");
    put(&mut o, rela, 0, 8);
    env.refused(
        &o,
        &["bad.o:(.eh_frame+0x0): relocation at offset 0x0 is not inside a record's body"],
    );
    // Past the section's end.
    let mut o = env.object();
    let (_, rela, n) = section(&o, ".rela.eh_frame");
    put(&mut o, rela + n - 24, eh_size as u64 + 16, 8);
    env.refused(&o, &["bad.o:(.eh_frame", "is outside the section"]);
}

#[test]
fn eh_frame_bad_records() {
    let Some(env) = Env::new("eh-records", &[]) else {
        return;
    };
    let o = env.object();
    let (_, eh, size) = section(&o, ".eh_frame");
    // The first record is a CIE; the FDE after it points back at it.
    let cie_len = u32::from_le_bytes(o[eh..eh + 4].try_into().unwrap()) as usize;
    let fde = eh + 4 + cie_len;
    let mut bad_ptr = o.clone();
    put(&mut bad_ptr, fde + 4, 0x1000, 4);
    env.refused(
        &bad_ptr,
        &[
            &format!("bad.o:(.eh_frame+{:#x})", fde - eh),
            "FDE's CIE pointer does not point to a CIE",
        ],
    );
    let mut too_long = o.clone();
    put(&mut too_long, fde, size as u64, 4);
    env.refused(&too_long, &["extends past the section's end"]);
    let mut too_short = o.clone();
    put(&mut too_short, eh, 2, 4);
    env.refused(
        &too_short,
        &["bad.o:(.eh_frame+0x0): record of 6 bytes is too short"],
    );
}

#[test]
fn common_symbol_alignment() {
    let Some(env) = Env::new("common-align", &["-fcommon"]) else {
        return;
    };
    std::fs::write(
        env.dir.join("c.c"),
        "int shared_common;\nint main(void) { return shared_common; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "-fcommon", "c.c"], &env.dir);
    let mut o = std::fs::read(env.dir.join("c.o")).unwrap();
    let (_, symtab, size) = section(&o, ".symtab");
    let k = (0..size / 24)
        .find(|k| o[symtab + k * 24 + 6..symtab + k * 24 + 8] == [0xf2, 0xff])
        .expect("a common symbol");
    put(&mut o, symtab + k * 24 + 8, 3, 8);
    env.refused(
        &o,
        &["bad.o: common symbol 'shared_common': alignment 0x3 is not a power of 2"],
    );
}

/// Version scripts GNU ld and lld reject (issue 34): 100,000 nested braces (whose closing braces became parent
/// version names, and `vd_cnt` wrapped), a missing final `;`.
#[test]
fn bad_version_scripts() {
    let Some(env) = Env::new("version-script", &["-fPIC"]) else {
        return;
    };
    let deep = format!("V1 {{ {} }};", "{".repeat(100_000));
    for (text, want) in [
        (
            "V1 { global: main; local: *; }",
            "expected ';' after a version node",
        ),
        (deep.as_str(), "unexpected '{' in a version node"),
        (
            "V1 { global: main local: *; };",
            "expected ';' after 'main'",
        ),
    ] {
        std::fs::write(env.dir.join("v.map"), text).unwrap();
        let r = env.link(&env.object(), &["-shared", "-Wl,--version-script=v.map"]);
        let err = r.stderr_str();
        assert!(!r.success(), "accepted {text:.60}");
        assert!(err.contains("v.map") && err.contains(want), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        if common::have_tool("ld.bfd") {
            let bfd = Command::new("gcc")
                .args([
                    "-fuse-ld=bfd",
                    "-shared",
                    "-o",
                    "bfd.so",
                    "main.o",
                    "-Wl,--version-script=v.map",
                ])
                .current_dir(&env.dir)
                .output()
                .unwrap();
            assert!(!bfd.status.success(), "GNU ld accepts {text:.60}");
        }
    }
}

/// Values near 2^64 that wrapped around silently in a release build and overflowed in a debug one.
#[test]
fn offsets_and_sizes_near_two_to_the_64() {
    let Some(env) = Env::new("wrap", &[]) else {
        return;
    };
    std::fs::write(
        env.dir.join("b.c"),
        "char big[64];\nint main(void) { return big[3]; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "b.c"], &env.dir);
    let b = std::fs::read(env.dir.join("b.o")).unwrap();
    let mut huge_bss = b.clone();
    let (h, _, _) = section(&huge_bss, ".bss");
    put(&mut huge_bss, h + 32, u64::MAX - 2, 8);
    env.refused(
        &huge_bss,
        &["section .bss", "ends past the end of the address space"],
    );

    let mut far_reloc = env.object();
    let (_, rela, _) = section(&far_reloc, ".rela.text");
    put(&mut far_reloc, rela, u64::MAX, 8);
    env.refused(
        &far_reloc,
        &["bad.o:(.text+0xffffffffffffffff): relocation offset is out of range"],
    );
}

/// An `.eh_frame` without `SHF_ALLOC` reached the writer's `.eh_frame_hdr` ("output bytes are not this writer's").
#[test]
fn eh_frame_flags() {
    let Some(env) = Env::new("eh-flags", &[]) else {
        return;
    };
    let mut o = env.object();
    let (h, _, _) = section(&o, ".eh_frame");
    put(&mut o, h + 8, 0x80, 8);
    env.refused(
        &o,
        &["bad.o:(.eh_frame): an .eh_frame section must be SHF_ALLOC and hold data"],
    );
    // Every flag bit set: the writer's .eh_frame_hdr found bytes that were not its own.
    put(&mut o, h + 8, 0xff, 8);
    env.refused(
        &o,
        &[
            "bad.o:(.eh_frame): an .eh_frame section must be SHF_ALLOC",
            "(flags 0xff)",
        ],
    );
    // SHF_LINK_ORDER (another fuzzer finding): the same.
    put(&mut o, h + 8, 0x82, 8);
    env.refused(&o, &["(flags 0x82)"]);
    // Writable, as old toolchains made it: linked.
    put(&mut o, h + 8, 0x3, 8);
    let r = env.link(&o, &[]);
    assert!(r.success(), "{}", r.log());
}

/// `-o` naming an input overwrote it; GNU ld refuses ("is the same as output file"). An output in a missing
/// directory named rivet's temporary file in the error.
#[test]
fn output_paths() {
    let Some(env) = Env::new("output-paths", &[]) else {
        return;
    };
    let before = env.object();
    let r = common::tool(
        env.linker.to_str().unwrap(),
        &["-o", "main.o", "main.o"],
        Some(&env.dir),
    );
    assert_eq!(r.code, Some(1), "{}", r.log());
    assert!(
        r.stderr_str()
            .contains("input file 'main.o' is the same as the output file"),
        "{}",
        r.log()
    );
    assert_eq!(env.object(), before, "the input was changed");
    std::fs::write(env.dir.join("f.c"), "void f(void) {}\n").unwrap();
    common::tool_ok("gcc", &["-c", "f.c"], &env.dir);
    for mode in ["--mmap-output-file", "--no-mmap-output-file"] {
        let r = common::tool(
            env.linker.to_str().unwrap(),
            &[mode, "-e", "f", "-o", "missing/dir/out", "f.o"],
            Some(&env.dir),
        );
        assert_eq!(r.code, Some(1), "{}", r.log());
        assert!(
            r.stderr_str()
                .contains("cannot open output file missing/dir/out: No such file or directory")
                || r.stderr_str().contains(
                    "cannot write output file missing/dir/out: No such file or directory"
                ),
            "{}",
            r.log()
        );
        assert!(!r.stderr_str().contains("rivet-tmp"), "{}", r.log());
    }
}

/// A string-merge section aligned to 2^30: each merged piece would be padded to that alignment (a fuzzer finding:
/// seven strings made a 7 GiB output and a 20-second link); such a section is kept whole instead.
#[test]
fn merge_section_with_a_huge_alignment() {
    let Some(env) = Env::new("merge-align", &["-g", "-gz=zlib"]) else {
        return;
    };
    let mut o = env.object();
    let (_, off, _) = section(&o, ".debug_str");
    put(&mut o, off + 16, 1 << 30, 8);
    let start = std::time::Instant::now();
    let r = env.link(&o, &[]);
    assert!(r.success(), "{}", r.log());
    assert!(start.elapsed().as_secs() < 10, "took {:?}", start.elapsed());
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(env.dir.join("out")).unwrap();
    assert!(meta.len() < 3 << 30, "size {}", meta.len());
    assert!(
        meta.blocks() * 512 < 16 << 20,
        "{} bytes of disk",
        meta.blocks() * 512
    );
}

// ---- linker scripts (findings of the cargo-fuzz `script` target and of tests/fuzz.rs's script jobs) ----

/// The freestanding program of the fuzzer's seeds and a mergeable string, compiled in `dir`; rivet and GNU ld
/// link `script` with it (`-pie`, as the fuzz target does). Returns both outcomes.
fn script_links(tag: &str, script: &str) -> Option<(PathBuf, common::Outcome, common::Outcome)> {
    script_links_with(tag, script, &[])
}

/// `script_links` with more options for both linkers.
fn script_links_with(
    tag: &str,
    script: &str,
    extra: &[&str],
) -> Option<(PathBuf, common::Outcome, common::Outcome)> {
    let (linker, dir) = common::rivet_only(
        &format!("hostile-{tag}"),
        &["gcc", "ld.bfd", "readelf"],
        "rivet's own diagnostics for bad scripts",
    )?;
    let seeds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let free = seeds.join("freestanding.c").display().to_string();
    common::tool_ok(
        "gcc",
        &[
            "-O1",
            "-ffreestanding",
            "-fno-stack-protector",
            "-fPIC",
            "-c",
            &free,
            "-o",
            "free.o",
        ],
        &dir,
    );
    std::fs::write(
        dir.join("s.c"),
        "const char *s1(void) { return \"merge me\"; }\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-O1",
            "-fPIC",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "s.c",
        ],
        &dir,
    );
    std::fs::write(dir.join("t.lds"), script).unwrap();
    let args = |out: &str| {
        extra
            .iter()
            .chain(&[
                "-pie",
                "--unresolved-symbols=ignore-all",
                "-T",
                "t.lds",
                "free.o",
                "s.o",
                "-o",
            ])
            .map(|a| a.to_string())
            .chain([out.to_string()])
            .collect::<Vec<_>>()
    };
    let run = |prog: &str, out: &str| {
        let a = args(out);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        common::tool(prog, &a, Some(&dir))
    };
    let rivet = run(&linker.display().to_string(), "rivet.out");
    let bfd = run("ld.bfd", "bfd.out");
    Some((dir, rivet, bfd))
}

/// The sizes of a file's sections with SHF_ALLOC, by name (`readelf -SW`).
fn alloc_sizes(dir: &std::path::Path, file: &str) -> Vec<(String, u64)> {
    common::tool_ok("readelf", &["-SW", file], dir)
        .lines()
        .filter_map(|l| {
            let l = l.split_once(']')?.1;
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 8 && f[6].contains('A'))
                .then(|| (f[0].to_string(), u64::from_str_radix(f[4], 16).unwrap()))
        })
        .collect()
}

/// GNU ld's default script for a PIE (`ld -pie --verbose`).
fn default_pie_script() -> String {
    let default = common::tool_ok("ld.bfd", &["-pie", "--verbose"], std::path::Path::new("."));
    default
        .lines()
        .skip_while(|l| !l.starts_with("====="))
        .skip(1)
        .take_while(|l| !l.starts_with("====="))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Every input section put in `.rela.dyn`, a section with linker-made contents, by `*(*)`, mergeable strings
/// among them (a fuzzer finding: the parts after the inputs were sized from offsets that the merged strings had
/// moved, an overflow that made `.rela.dyn` too small for its inputs in a release build). GNU ld links it; rivet
/// must too, with room for every input.
#[test]
fn script_everything_in_a_linker_made_section() {
    let script = default_pie_script();
    let rela = "*(.rela.tbss .rela.tbss.* .rela.gnu.linkonce.tb.*)";
    assert!(script.contains(rela), "{script}");
    let script = script.replacen(rela, &format!("{rela} *(*)"), 1);
    let Some((dir, rivet, bfd)) = script_links("script-all-in-rela", &script) else {
        return;
    };
    assert!(bfd.success(), "{}", bfd.log());
    assert!(rivet.success(), "{}", rivet.log());
    let inputs: u64 = ["free.o", "s.o"]
        .iter()
        .flat_map(|o| alloc_sizes(&dir, o))
        .map(|(_, size)| size)
        .sum();
    let out = alloc_sizes(&dir, "rivet.out");
    let (_, rela_size) = out.iter().find(|(n, _)| n == ".rela.dyn").unwrap();
    assert!(
        *rela_size >= inputs,
        "{rela_size:#x} bytes of .rela.dyn for {inputs:#x} of inputs: {out:?}"
    );
}

/// A section list with `(` in it (a `)` changed by the fuzzer): GNU ld's syntax error, not a list that takes in
/// the statements after it.
#[test]
fn script_parenthesis_in_a_section_list() {
    let script = "SECTIONS { .text : { *(.text .text.*( *(.data) } .data : { *(.data) } }\n";
    let Some((_, rivet, bfd)) = script_links("script-paren", script) else {
        return;
    };
    assert!(!bfd.success());
    assert!(!rivet.success());
    let err = rivet.stderr_str();
    assert!(
        err.contains("t.lds:1:37: unexpected '(' in a section list"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// `. = . + 0x7fffffffffff` in a section with contents asks for a 128 TiB output. GNU ld fails ("file
/// truncated"); under a file size limit rivet was killed by SIGXFSZ, leaving its temporary file (a fuzzer
/// finding). It must fail with an error, leaving nothing; in a `NOLOAD` section at the end the gap takes no file
/// space and links.
#[test]
fn script_huge_gap() {
    let Some((linker, dir)) = common::rivet_only(
        "hostile-script-gap",
        &["gcc", "sh", "readelf"],
        "rivet's own diagnostics for bad scripts",
    ) else {
        return;
    };
    let seeds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let free = seeds.join("freestanding.c").display().to_string();
    common::tool_ok(
        "gcc",
        &[
            "-O1",
            "-ffreestanding",
            "-fno-stack-protector",
            "-fno-pie",
            "-c",
            &free,
            "-o",
            "free.o",
        ],
        &dir,
    );
    let link = |gap_section: &str| {
        let script = format!(
            "SECTIONS {{ . = 0x400000; .text : {{ *(.text*) }} .data : {{ *(.data*) }} {gap_section} }}\n"
        );
        std::fs::write(dir.join("t.lds"), script).unwrap();
        let _ = std::fs::remove_file(dir.join("out"));
        // A limit of 2 GiB (in the 512-byte blocks of dash), as a build farm sets one.
        let cmd = format!(
            "ulimit -f 4194304; exec {} --no-fork -static -T t.lds free.o -o out",
            linker.display()
        );
        common::tool("sh", &["-c", &cmd], Some(&dir))
    };
    let r = link(".big : { BYTE(1) . = . + 0x7fffffffffff; BYTE(2) }");
    let err = r.stderr_str();
    assert_eq!(r.code, Some(1), "{}", r.log());
    assert!(err.contains("File too large"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("out"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    use std::os::unix::fs::MetadataExt;
    // A GiB skipped in a section with contents: a file of that size, as GNU ld writes, but sparse (it took a GiB
    // of disk and of memory), with the bytes around the gap in place.
    let r = link(".big : { BYTE(1) . = . + 0x40000000; BYTE(2) }");
    assert!(r.success(), "{}", r.log());
    let meta = std::fs::metadata(dir.join("out")).unwrap();
    assert!(meta.len() > 1 << 30, "{} bytes", meta.len());
    assert!(
        meta.blocks() * 512 < 16 << 20,
        "{} bytes of disk",
        meta.blocks() * 512
    );
    let headers = common::tool_ok("readelf", &["-SW", "out"], &dir);
    let big = headers
        .lines()
        .find(|l| l.contains(" .big "))
        .expect(&headers);
    let f: Vec<&str> = big.split_once(']').unwrap().1.split_whitespace().collect();
    let at = u64::from_str_radix(f[3], 16).unwrap();
    let mut file = std::fs::File::open(dir.join("out")).unwrap();
    let byte = |file: &mut std::fs::File, at: u64| {
        use std::io::{Read, Seek};
        let mut b = [0u8];
        file.seek(std::io::SeekFrom::Start(at)).unwrap();
        file.read_exact(&mut b).unwrap();
        b[0]
    };
    assert_eq!(byte(&mut file, at), 1);
    assert_eq!(byte(&mut file, at + 0x4000_0001), 2);
    // With a build id, hashing the image reads no page of the gap (4 GiB of alignment took 17 s and 4 GiB of
    // memory): the peak resident set stays small.
    let cmd = format!(
        "exec {} --no-fork -static --build-id -T t.lds free.o -o out",
        linker.display()
    );
    let child = Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(&dir)
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills, for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    std::mem::forget(child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status:#x}"
    );
    assert!(
        usage.ru_maxrss < 256 << 10,
        "{} KiB resident",
        usage.ru_maxrss
    );
    assert!(std::fs::metadata(dir.join("out")).unwrap().blocks() * 512 < 16 << 20);
    // A NOLOAD section at the end takes no file space, whatever its size (the file was as large as it).
    let r = link(".big (NOLOAD) : { . = . + 0x40000000; }");
    assert!(r.success(), "{}", r.log());
    let meta = std::fs::metadata(dir.join("out")).unwrap();
    assert!(meta.len() < 1 << 20, "{} bytes", meta.len());
}

/// A section of linker-made contents marked `NOLOAD` (a fuzzer finding: `.gnu.version_r (NOLOAD)` made the
/// writer panic, its bytes gone). GNU ld fails ("section has no contents"); rivet says why.
#[test]
fn script_noload_linker_made_section() {
    let script = "SECTIONS { .text : { *(.text*) } .dynamic (NOLOAD) : { *(.dynamic) } .data : { *(.data*) } }\n";
    let Some((_, rivet, bfd)) = script_links("script-noload-dynamic", script) else {
        return;
    };
    assert!(!bfd.success(), "{}", bfd.log());
    assert_eq!(rivet.code, Some(1), "{}", rivet.log());
    let err = rivet.stderr_str();
    assert!(
        err.contains("t.lds:1:34: .dynamic holds contents the linker makes: it cannot be NOLOAD"),
        "{err}"
    );
}

/// A version section that a script's assignment or data command keeps though the link defines no version (fuzzer
/// findings: `PROVIDE` or `QUAD(-1)` in `.gnu.version_d` made its writer panic). GNU ld links it; rivet must too.
#[test]
fn script_assignment_in_an_empty_version_section() {
    let verdef = "*(.gnu.version_d)";
    for (k, extra) in ["PROVIDE(_start = .);", "QUAD(-1)"].iter().enumerate() {
        let script = default_pie_script().replacen(verdef, &format!("{verdef} {extra}"), 1);
        let Some((_, rivet, bfd)) = script_links(&format!("script-empty-verdef-{k}"), &script)
        else {
            return;
        };
        assert!(bfd.success(), "{extra}: {}", bfd.log());
        assert!(rivet.success(), "{extra}: {}", rivet.log());
    }
}

/// The location counter set near 2^64 inside `.plt` (a fuzzer finding: a section of nearly 2^64 bytes wrapped
/// the file offsets, and the writers' ranges overlapped). rivet refuses a file of 2^48 bytes or more. (A plain
/// number inside a section is an offset in it, as in GNU ld: `ABSOLUTE` makes it the address the fuzzer meant.)
#[test]
fn script_location_counter_near_the_top_inside_a_section() {
    let plt = "*(.plt) *(.iplt)";
    let near_top = "*(.plt) . = ABSOLUTE(0xfffffffffffff000); *(.iplt)";
    let script = default_pie_script().replacen(plt, near_top, 1);
    assert_ne!(script, default_pie_script());
    let Some((_, rivet, _)) = script_links("script-dot-near-top", &script) else {
        return;
    };
    assert_eq!(rivet.code, Some(1), "{}", rivet.log());
    let err = rivet.stderr_str();
    assert!(
        err.contains("section .plt at 0x") && err.contains("does not fit in a file"),
        "{err}"
    );
}

/// `KEEP(*())` in GNU ld's writable `.eh_frame` description (a fuzzer finding: a statement with no section
/// pattern takes every writable section, the linker's `.got` and `.dynamic` among them, into `.eh_frame`, whose
/// bytes `.eh_frame_hdr` is built from while the GOT's writer fills its part: the writers' ranges overlapped, a
/// panic). Refused, naming the script and the section.
#[test]
fn script_linker_made_contents_in_eh_frame() {
    let rw = "KEEP (*(.eh_frame)) *(.eh_frame.*) }";
    let script = default_pie_script();
    let at = script
        .rfind(rw)
        .expect("the ONLY_IF_RW .eh_frame description");
    let script = format!(
        "{}KEEP (*()) *(.eh_frame.*) }}{}",
        &script[..at],
        &script[at + rw.len()..]
    );
    let Some((_, rivet, _)) = script_links("script-got-in-eh-frame", &script) else {
        return;
    };
    assert_eq!(rivet.code, Some(1), "{}", rivet.log());
    let err = rivet.stderr_str();
    // The first of the linker's sections the statement takes: since the description is kept for the link (it
    // takes writable inputs), it takes read-only ones (`.rela.dyn`) as well as `.got`, as in GNU ld.
    assert!(
        err.contains("t.lds: the linker's ") && err.contains(" cannot go in .eh_frame"),
        "{err}"
    );
}

/// `.dynamic`'s contents in an output section of another name (a fuzzer finding, seed 0x68: the section was
/// dropped as empty before `.dynamic`'s size was known, and its writer found no room). GNU ld links it; rivet
/// must too, with `PT_DYNAMIC` over that section.
#[test]
fn script_dynamic_under_another_name() {
    let script = default_pie_script();
    let line = script
        .lines()
        .find(|l| l.contains("*(.dynamic)"))
        .expect("a .dynamic description");
    let script = script.replacen(line, "  .mydynamic : { *(.dynamic) }", 1);
    let Some((dir, rivet, bfd)) = script_links("script-dynamic-renamed", &script) else {
        return;
    };
    assert!(bfd.success(), "{}", bfd.log());
    assert!(rivet.success(), "{}", rivet.log());
    let out = dir.join("rivet.out").display().to_string();
    let secs = common::tool_ok("readelf", &["-lSW", &out], &dir);
    assert!(
        secs.contains(" DYNAMIC ") && secs.contains(".mydynamic"),
        "{secs}"
    );
}

/// `.eh_frame_hdr` taken into `.rela.dyn` by one of its statements, `.rela.dyn`'s own entries placed by none (a
/// fuzzer finding, seed 0x6d: both were put at the section's start and their writers overlapped). GNU ld links it
/// (with `DT_RELA` over its header); rivet must too, with the header and the relocations apart.
#[test]
fn script_linker_made_contents_placed_and_unplaced_in_one_section() {
    let script = default_pie_script();
    let line = script
        .lines()
        .find(|l| l.contains("*(.rela.tdata .rela.tdata.*"))
        .expect("a .rela.tdata statement");
    let script = script.replacen(line, "      *(.rela.tdata .rela.tdata.* .eh_frame_hdr)", 1);
    let Some((dir, rivet, bfd)) =
        script_links_with("script-hdr-in-rela-dyn", &script, &["--eh-frame-hdr"])
    else {
        return;
    };
    assert!(bfd.success(), "{}", bfd.log());
    assert!(rivet.success(), "{}", rivet.log());
    let out = dir.join("rivet.out");
    let text = common::tool_ok("readelf", &["-lW", &out.display().to_string()], &dir);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let hdr = text
        .lines()
        .find(|l| l.trim_start().starts_with("GNU_EH_FRAME"))
        .map(|l| hex(l.split_whitespace().nth(1).unwrap()))
        .expect("PT_GNU_EH_FRAME");
    let bytes = std::fs::read(&out).unwrap();
    let h = hdr as usize;
    assert_eq!(bytes[h], 1, "{text}");
    let fdes = u32::from_le_bytes(bytes[h + 8..h + 12].try_into().unwrap()) as u64;
    let dynamic = common::tool_ok("readelf", &["-dW", &out.display().to_string()], &dir);
    let value = |tag: &str| {
        let l = dynamic.lines().find(|l| l.contains(tag)).expect(tag);
        let v = l
            .split(')')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        if v.starts_with("0x") {
            hex(v)
        } else {
            v.parse().unwrap()
        }
    };
    let (rela, relasz) = (value("(RELA)"), value("(RELASZ)"));
    assert!(relasz > 0, "{dynamic}");
    // The file is a PIE linked at 0: addresses are file offsets in this read-only first segment.
    assert!(
        rela >= hdr + 12 + 8 * fdes || rela + relasz <= hdr,
        "header {hdr:#x} ({fdes} FDEs), relocations {rela:#x}+{relasz:#x}\n{text}\n{dynamic}"
    );
}
