//! Updating the output in place (`--update-in-place`, the default): the new output is written into the existing
//! output file (same inode) when no other process uses it and writing it is proved not to fail, and gives the same
//! bytes as a new file whether the old one was larger or smaller. A file that is open elsewhere, mapped as a
//! loaded library, running, or hard-linked keeps its contents and the link writes a new file, as does a link whose
//! writing the proof does not cover; a link that fails, before or while writing, leaves the old output as it was.
//!
//! Skipped when `RIVET_TEST_LINKER` points at another linker (the option and its guarantees are rivet's own).

mod common;

use common::tool_ok as run;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};

const SMALL: &str = "#include <stdio.h>\n#include <unistd.h>\n#include <stdlib.h>\n\
    int main(int argc, char **argv) { if (argc > 1) { puts(\"started\"); fflush(stdout); sleep(atoi(argv[1])); }\n\
    puts(\"small\"); return 0; }\n";
const BIG: &str = "#include <stdio.h>\nstatic const char table[1 << 20] = {1, 2, 3};\n\
    int main(void) { printf(\"big %d\\n\", table[1]); return 0; }\n";
const SHARED: &str = "int lib_value(void) { return 42; }\n";
const LOADER: &str = "#include <dlfcn.h>\n#include <stdio.h>\n#include <unistd.h>\n\
    int main(int argc, char **argv) { void *h = dlopen(argv[1], RTLD_NOW); if (!h) return 2;\n\
    int (*f)(void) = (int (*)(void))dlsym(h, \"lib_value\"); puts(\"loaded\"); fflush(stdout);\n\
    sleep(3); printf(\"%d\\n\", f()); return 0; }\n";
const UNDEFINED: &str = "int missing(void);\nint main(void) { return missing(); }\n";
/// `main` returns the low byte of `tiny` through an 8-bit field, which the write proof does not cover.
const BYTE_FIELD: &str = "\t.text\n\t.globl main\nmain:\n\tmovzbl byte_ref(%rip), %eax\n\tret\n\
    \t.data\nbyte_ref:\n\t.byte tiny\n\t.section .note.GNU-stack,\"\",@progbits\n";
/// `main` loads `far_away` into a 32-bit immediate; `far.s` puts it above 4 GiB: out of range while writing.
const FAR_REF: &str = "\t.text\n\t.globl main\nmain:\n\tmovl $far_away, %eax\n\tret\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";
/// Absolute symbols in their own object, so that the references stay relocations: `tiny` (5), `far_away`.
const ABSOLUTES: &str = "\t.globl tiny\n\t.set tiny, 5\n\t.globl far_away\n\t.set far_away, 0x100000000\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

struct Env {
    dir: std::path::PathBuf,
    shim: std::path::PathBuf,
}

impl Env {
    /// Links `objects` into `out` through gcc and rivet, with `extra` flags; returns whether it succeeded.
    fn link(&self, out: &str, objects: &[&str], extra: &[&str]) -> common::Outcome {
        let mut args = vec![
            format!("-B{}/", self.shim.display()),
            "-o".into(),
            out.into(),
        ];
        args.extend(objects.iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::tool("gcc", &args, Some(&self.dir))
    }
    fn link_ok(&self, out: &str, objects: &[&str], extra: &[&str]) {
        let o = self.link(out, objects, extra);
        assert!(o.success(), "link of {out} failed:\n{}", o.log());
    }
    fn inode(&self, name: &str) -> u64 {
        std::fs::metadata(self.dir.join(name)).unwrap().ino()
    }
    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(name)).unwrap()
    }
    fn copy(&self, from: &str, to: &str) {
        let _ = std::fs::remove_file(self.dir.join(to));
        std::fs::copy(self.dir.join(from), self.dir.join(to)).unwrap();
    }
}

fn setup(tag: &str) -> Option<Env> {
    let (linker, dir) = common::rivet_only(tag, &["gcc"], "rivet's own option, gcc needed")?;
    for (name, text) in [
        ("small.c", SMALL),
        ("big.c", BIG),
        ("loader.c", LOADER),
        ("undefined.c", UNDEFINED),
        ("byte_field.s", BYTE_FIELD),
        ("far_ref.s", FAR_REF),
        ("absolutes.s", ABSOLUTES),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
        run("gcc", &["-c", name], &dir);
    }
    std::fs::write(dir.join("shared.c"), SHARED).unwrap();
    std::fs::write(
        dir.join("shared2.c"),
        "int other_value(void) { return 7; }\n",
    )
    .unwrap();
    run("gcc", &["-c", "-fPIC", "shared.c", "shared2.c"], &dir);
    let shim = common::ld_shim_dir(&linker, tag);
    Some(Env { dir, shim })
}

/// Reads exactly `want` from a child's output: the child has reached the point where it printed it.
fn wait_for(from: &mut impl std::io::Read, want: &[u8]) {
    let mut got = vec![0u8; want.len()];
    from.read_exact(&mut got).unwrap();
    assert_eq!(got, want, "unexpected output from the child");
}

fn runs(path: &Path, want: &str) {
    let out = Command::new(path).output().unwrap();
    assert!(out.status.success(), "{} failed", path.display());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want);
}

/// By default the file is reused (same inode) and its bytes are those of a new file, after a larger and after a
/// smaller old output; nothing is left beside it. `--no-update-in-place` writes a new file.
#[test]
fn reuses_the_file_with_the_same_bytes() {
    let Some(env) = setup("update-in-place-reuse") else {
        return;
    };
    env.link_ok("small.fresh", &["small.o"], &[]);
    env.link_ok("big.fresh", &["big.o"], &[]);
    env.copy("big.fresh", "prog");
    let ino = env.inode("prog");
    // A larger old output, then a smaller one.
    for (object, fresh, prints, old) in [
        ("small.o", "small.fresh", "small", "larger"),
        ("big.o", "big.fresh", "big 2", "smaller"),
    ] {
        env.link_ok("prog", &[object], &[]);
        assert_eq!(env.inode("prog"), ino, "the old file was not reused");
        assert!(
            env.read("prog") == env.read(fresh),
            "bytes differ from a new file (old output {old})"
        );
        runs(&env.dir.join("prog"), prints);
    }
    env.link_ok("prog", &["big.o"], &["-Wl,--no-update-in-place"]);
    assert_ne!(
        env.inode("prog"),
        ino,
        "with --no-update-in-place the old file was reused"
    );
    assert!(env.read("prog") == env.read("big.fresh"));
    let mut left: Vec<String> = std::fs::read_dir(&env.dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with('.'))
        .collect();
    left.sort();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

/// Pages of `path` in the page cache and in all, or `None` where the kernel cannot tell (`cachestat`, Linux 6.5).
fn cached_pages(path: &Path) -> Option<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    let range = [0u64, 0]; // offset, length (0: to the end)
    let mut stat = [0u64; 5]; // nr_cache first
    // SAFETY: cachestat reads `range` and writes `stat`, both live for the call; 451 on every architecture.
    let r = unsafe { libc::syscall(451, file.as_raw_fd(), range.as_ptr(), stat.as_mut_ptr(), 0) };
    let pages = file.metadata().unwrap().len().div_ceil(4096);
    (r == 0).then_some((stat[0], pages))
}

/// Writes `path` back and drops it from the page cache.
fn evict(path: &Path) {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    file.sync_all().unwrap();
    // SAFETY: advice on a descriptor this function owns.
    assert_eq!(
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) },
        0
    );
}

/// An old output mostly out of the page cache is not reused: pre-faulting it would read it back from the disk
/// only to overwrite it. The link writes a new file, which the next link, over a cached output, reuses.
#[test]
fn evicted_old_output_is_not_reused() {
    let Some(env) = setup("update-in-place-evicted") else {
        return;
    };
    env.link_ok("big.fresh", &["big.o"], &[]);
    env.link_ok("prog", &["big.o"], &[]);
    let prog = env.dir.join("prog");
    evict(&prog);
    match cached_pages(&prog) {
        None => {
            eprintln!("skipped: the kernel has no cachestat (Linux 6.5)");
            return;
        }
        Some((cached, pages)) if cached * 8 >= pages * 7 => {
            eprintln!("skipped: the output stayed in the page cache ({cached} of {pages} pages)");
            return;
        }
        Some(_) => {}
    }
    let ino = env.inode("prog");
    env.link_ok("prog", &["big.o"], &[]);
    assert_ne!(env.inode("prog"), ino, "the evicted old file was reused");
    assert!(env.read("prog") == env.read("big.fresh"));
    runs(&prog, "big 2");
    let ino = env.inode("prog");
    env.link_ok("prog", &["big.o"], &[]);
    assert_eq!(env.inode("prog"), ino, "the cached old file was not reused");
    assert!(env.read("prog") == env.read("big.fresh"));
}

/// An output that another process has open, has loaded as a shared library, or runs, or that has a second name,
/// keeps its contents: the link writes a new file.
#[test]
fn leaves_files_in_use_alone() {
    let Some(env) = setup("update-in-place-in-use") else {
        return;
    };
    let check_new_file = |name: &str, before: &[u8], ino: u64, why: &str| {
        assert_ne!(env.inode(name), ino, "{why}: the old file was reused");
        assert!(
            env.read(name) != before,
            "{why}: the output was not relinked"
        );
    };

    // Open for reading by another process.
    env.link_ok("prog", &["big.o"], &[]);
    let (ino, before) = (env.inode("prog"), env.read("prog"));
    let mut holder = Command::new("sh")
        .args(["-c", "exec 3<prog; echo open; exec sleep 5"])
        .current_dir(&env.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(holder.stdout.as_mut().unwrap(), b"open\n");
    env.link_ok("prog", &["small.o"], &[]);
    let _ = holder.kill();
    let _ = holder.wait();
    check_new_file("prog", &before, ino, "open elsewhere");

    // Running.
    env.link_ok("prog", &["small.o"], &[]);
    let ino = env.inode("prog");
    let before = env.read("prog");
    let mut running = Command::new(env.dir.join("prog"))
        .arg("2")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(running.stdout.as_mut().unwrap(), b"started\n");
    env.link_ok("prog", &["big.o"], &[]);
    let out = running.wait_with_output().unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "small");
    check_new_file("prog", &before, ino, "running");

    // Loaded as a shared library: the process still calls the old code after the relink.
    env.link_ok("loader", &["loader.o"], &["-ldl"]);
    env.link_ok("libv.so", &["shared.o"], &["-shared"]);
    let (ino, before) = (env.inode("libv.so"), env.read("libv.so"));
    let mut loaded = Command::new(env.dir.join("loader"))
        .arg(env.dir.join("libv.so"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(loaded.stdout.as_mut().unwrap(), b"loaded\n");
    env.link_ok("libv.so", &["shared.o", "shared2.o"], &["-shared"]);
    let out = loaded.wait_with_output().unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "42",
        "the loaded library changed under its process: {:?}",
        out
    );
    check_new_file("libv.so", &before, ino, "loaded library");

    // A second name.
    env.link_ok("prog", &["small.o"], &[]);
    let (ino, before) = (env.inode("prog"), env.read("prog"));
    let _ = std::fs::remove_file(env.dir.join("prog.link"));
    std::fs::hard_link(env.dir.join("prog"), env.dir.join("prog.link")).unwrap();
    env.link_ok("prog", &["big.o"], &[]);
    check_new_file("prog", &before, ino, "hard-linked");
    assert!(
        env.read("prog.link") == before,
        "the other name saw the change"
    );
}

/// A link that fails leaves the old output as it was, file and bytes: before writing (an undefined symbol), and
/// where writing would fail (a relocation out of range, known only after layout), which the proof must catch
/// before the old file is touched.
#[test]
fn failed_link_keeps_the_old_output() {
    let Some(env) = setup("update-in-place-failed") else {
        return;
    };
    env.link_ok("prog", &["small.o"], &[]);
    let (ino, before) = (env.inode("prog"), env.read("prog"));
    for (objects, extra, says) in [
        (&["undefined.o"][..], &[][..], "missing"),
        (&["far_ref.o", "absolutes.o"], &["-no-pie"], "out of range"),
    ] {
        let o = env.link("prog", objects, extra);
        assert!(!o.success(), "the link should fail:\n{}", o.log());
        assert!(o.stderr_str().contains(says), "{}", o.log());
        assert_eq!(env.inode("prog"), ino, "the old output was replaced");
        assert!(env.read("prog") == before, "the old output changed");
    }
}

/// A link whose writing the proof does not cover (an 8-bit field) writes a new file, and the program works.
#[test]
fn unproven_link_writes_a_new_file() {
    let Some(env) = setup("update-in-place-unproven") else {
        return;
    };
    env.link_ok("prog", &["small.o"], &[]);
    let ino = env.inode("prog");
    env.link_ok("prog", &["byte_field.o", "absolutes.o"], &["-no-pie"]);
    assert_ne!(env.inode("prog"), ino, "the old file was reused");
    let status = Command::new(env.dir.join("prog")).status().unwrap();
    assert_eq!(
        status.code(),
        Some(5),
        "the 8-bit field holds the wrong value"
    );
    // The same link over its own output is still not proved: a new file again.
    let ino = env.inode("prog");
    env.link_ok("prog", &["byte_field.o", "absolutes.o"], &["-no-pie"]);
    assert_ne!(env.inode("prog"), ino, "the old file was reused");
}

/// Padding of every kind, for the test below: functions 64-byte aligned, a page-aligned array, constructors
/// sorted by priority, and (in `GAPS_S`) merged strings 8-byte aligned whose group ends off that alignment, right
/// before a group of unaligned strings in the same output section, and a `SHT_NOBITS` input in `.data`.
const GAPS_C: &str = "#include <stdio.h>\nextern const char *gap_strings[3];\nextern char nobits_area[40];\n\
    __attribute__((aligned(4096))) int page_aligned[4] = {1, 2, 3, 4};\nstatic int order[4], n;\n\
    __attribute__((constructor(300))) static void late(void) { order[n++] = 3; }\n\
    __attribute__((constructor(200))) static void early(void) { order[n++] = 2; }\n\
    int triple(int x) { return x * 3; }\n\
    int main(void) { printf(\"%s %s %s %d %d %d%d %d\\n\", gap_strings[0], gap_strings[1], gap_strings[2],\n\
    page_aligned[3], triple(2), order[0], order[1], nobits_area[7]); return 0; }\n";
const GAPS_S: &str = "\t.section .rodata.str1.8,\"aMS\",@progbits,1\n\t.balign 8\n.Lone:\t.asciz \"merged-one\"\n\
    \t.balign 8\n.Ltwo:\t.asciz \"two\"\n\t.section .rodata.str1.1,\"aMS\",@progbits,1\n\
    .Lthree:\t.asciz \"after-the-aligned-ones\"\n\t.data\n\t.globl gap_strings\n\t.balign 8\n\
    gap_strings:\n\t.quad .Lone\n\t.quad .Ltwo\n\t.quad .Lthree\n\
    \t.section .data.nobits_in_data,\"aw\",@nobits\n\
    \t.globl nobits_area\nnobits_area:\n\t.zero 40\n\t.section .note.GNU-stack,\"\",@progbits\n";

/// A reused output is not zeroed where the writers cover it (input sections and the padding before each, merged
/// pieces and the alignment between them, the symbol table): an old output full of junk, larger and smaller than
/// the new one, gives the bytes of a new file. Each link is repeated: merge groups are written in parallel, and a
/// writer that zeroed past its group's end clobbered the next group only when that one was written first.
#[test]
fn junk_in_the_old_output_is_all_replaced() {
    let Some(env) = setup("update-in-place-junk") else {
        return;
    };
    std::fs::write(env.dir.join("gaps.c"), GAPS_C).unwrap();
    std::fs::write(env.dir.join("gaps_data.s"), GAPS_S).unwrap();
    run(
        "gcc",
        &[
            "-c",
            "-O1",
            "-ffunction-sections",
            "-fdata-sections",
            "-falign-functions=64",
            "gaps.c",
            "gaps_data.s",
        ],
        &env.dir,
    );
    // The assembly first: its 8-byte-aligned strings make the first merge group of `.rodata`.
    let objects = ["gaps_data.o", "gaps.o"];
    let prints = "merged-one two after-the-aligned-ones 4 6 23 0";
    // Under a script the inputs' writers pad before them where a statement's sections fill the section's range
    // alone: GNU ld's own script, and one with space skipped among code and merged strings among other inputs.
    std::fs::write(
        env.dir.join("gnu-pie.ld"),
        common::gnu_default_script(&["-pie"], &env.dir),
    )
    .unwrap();
    let own = common::gnu_default_script(&["-pie"], &env.dir)
        .replace(
            "*(.text.unlikely .text.*_unlikely .text.unlikely.*)",
            "*(.text.unlikely .text.*_unlikely .text.unlikely.*) . = . + 13;",
        )
        .replace(
            "*(.rodata .rodata.* .gnu.linkonce.r.*)",
            "*(.rodata) *(.rodata.str1.1) *(.rodata.* .gnu.linkonce.r.*) . = ALIGN(64);",
        );
    assert!(own.contains(". = . + 13;") && own.contains(". = ALIGN(64);"));
    std::fs::write(env.dir.join("own.ld"), own).unwrap();
    for (kind, extra) in [
        ("pie", &[][..]),
        ("static", &["-static"][..]),
        ("gnu-script", &["-Wl,-T,gnu-pie.ld"][..]),
        ("own-script", &["-Wl,-T,own.ld"][..]),
    ] {
        let fresh = format!("gaps.{kind}.fresh");
        env.link_ok(
            &fresh,
            &objects,
            &[&["-Wl,--no-update-in-place"], extra].concat(),
        );
        runs(&env.dir.join(&fresh), prints);
        let len = env.read(&fresh).len();
        for round in 0..4 {
            for (old_len, old) in [(len + 100_000, "larger"), (len / 2, "smaller")] {
                let prog = format!("gaps.{kind}");
                std::fs::write(env.dir.join(&prog), vec![0xa5u8; old_len]).unwrap();
                let ino = env.inode(&prog);
                env.link_ok(&prog, &objects, extra);
                assert_eq!(
                    env.inode(&prog),
                    ino,
                    "the old file was not reused ({kind})"
                );
                assert!(
                    env.read(&prog) == env.read(&fresh),
                    "junk left in the output ({kind}, old output {old}, round {round})"
                );
            }
        }
    }
}
