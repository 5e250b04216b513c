//! A link stopped while it writes its output (issue 34): by `SIGTERM`, `SIGINT` or `SIGHUP` it removes its
//! temporary file and leaves at the output path the old output or nothing (in place, the old file is the one being
//! written); by `SIGKILL` it leaves the temporary file, which the next link to the same output replaces. Never a
//! partial file at the output path, in any mode (new file or in place, forked or not).
//!
//! The output is 96 MiB of data so that the write phase lasts long enough to be caught: the test polls for the
//! temporary file and signals the linker as soon as it appears, retrying where the link finished first.
//! Skipped when `RIVET_TEST_LINKER` points at another linker (the temporary file's name is rivet's).

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIG: &str = "\t.text\n\t.globl f\nf:\n\tret\n\t.data\n\t.fill 100663296,1,7\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";
const SMALL: &str = "\t.text\n\t.globl f\nf:\n\tret\n\t.section .note.GNU-stack,\"\",@progbits\n";

fn setup(tag: &str) -> Option<(PathBuf, PathBuf)> {
    let (linker, dir) = common::rivet_only(
        &format!("interrupted-{tag}"),
        &["as"],
        "rivet's temporary file and signal handling",
    )?;
    std::fs::write(dir.join("big.s"), BIG).unwrap();
    std::fs::write(dir.join("small.s"), SMALL).unwrap();
    common::tool_ok("as", &["big.s", "-o", "big.o"], &dir);
    common::tool_ok("as", &["small.s", "-o", "small.o"], &dir);
    Some((linker, dir))
}

fn link(linker: &Path, dir: &Path, obj: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(linker);
    c.args(["-e", "f", "-o", "out", obj])
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Names in `dir` that start with `.out.`: rivet's temporary and aside files for `out`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".out."))
        .collect()
}

/// Links `big.o` over an existing output (from `small.o`), sends `sig` once the temporary file exists, and
/// returns whether the signal came in time (the link died of it).
fn interrupt(linker: &Path, dir: &Path, sig: i32, extra: &[&str]) -> bool {
    let st = link(linker, dir, "small.o", &[]).status().unwrap();
    assert!(st.success());
    let old = std::fs::read(dir.join("out")).unwrap();
    let mut child = link(linker, dir, "big.o", extra).spawn().unwrap();
    let start = Instant::now();
    let tmp = dir.join(".out.rivet-tmp");
    while !tmp.exists() && start.elapsed() < Duration::from_secs(20) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(child.id() as i32, sig) };
    let status = child.wait().unwrap();
    // A forked link's child cleans up after the parent is gone: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !leftovers(dir).is_empty() && sig != libc::SIGKILL && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let caught = status.signal() == Some(sig);
    if sig != libc::SIGKILL || !caught {
        assert_eq!(leftovers(dir), Vec::<String>::new(), "status {status:?}");
    }
    // The output path holds the old output, the complete new one, or (in place) nothing.
    match std::fs::read(dir.join("out")) {
        Ok(now) => {
            let new_size = 96 << 20;
            assert!(
                now == old || (now.len() > new_size && now[now.len() / 2] == 7),
                "a partial output of {} bytes (status {status:?})",
                now.len()
            );
        }
        Err(_) => assert!(caught, "output missing after {status:?}"),
    }
    caught
}

fn for_each_try(tag: &str, sig: i32, extra: &[&str]) {
    let Some((linker, dir)) = setup(tag) else {
        return;
    };
    // The signal may come after the link ended; three tries make a miss on each very unlikely.
    let caught = (0..3).any(|_| interrupt(&linker, &dir, sig, extra));
    assert!(caught, "the link always finished before the signal");
}

#[test]
fn sigterm_new_file_no_fork() {
    for_each_try(
        "term-new",
        libc::SIGTERM,
        &["--no-fork", "--no-update-in-place"],
    );
}

#[test]
fn sigint_new_file_forked() {
    for_each_try(
        "int-fork",
        libc::SIGINT,
        &["--fork", "--no-update-in-place"],
    );
}

#[test]
fn sighup_in_place() {
    for_each_try(
        "hup-inplace",
        libc::SIGHUP,
        &["--no-fork", "--update-in-place"],
    );
}

#[test]
fn sigterm_heap_buffer() {
    for_each_try(
        "term-heap",
        libc::SIGTERM,
        &["--no-fork", "--no-mmap-output-file"],
    );
}

/// `SIGKILL` cannot be caught: the temporary file stays, the old output is untouched (new-file mode), and the
/// next link to the same output replaces the leftover.
#[test]
fn sigkill_leftover_is_cleaned_by_the_next_link() {
    let Some((linker, dir)) = setup("kill") else {
        return;
    };
    let caught = (0..3).any(|_| {
        interrupt(
            &linker,
            &dir,
            libc::SIGKILL,
            &["--no-fork", "--no-update-in-place"],
        )
    });
    assert!(caught, "the link always finished before the signal");
    assert_eq!(leftovers(&dir), vec![".out.rivet-tmp".to_string()]);
    for extra in [&["--no-update-in-place"][..], &["--update-in-place"][..]] {
        let st = link(&linker, &dir, "small.o", extra).status().unwrap();
        assert!(st.success());
        assert_eq!(leftovers(&dir), Vec::<String>::new(), "{extra:?}");
        std::fs::write(dir.join(".out.rivet-tmp"), b"leftover").unwrap();
    }
}

/// Something that is not a regular file at the temporary name (a symlink to another file, a FIFO) is never opened,
/// replaced or removed: the link takes a name of its own, in new-file and in-place mode alike.
#[test]
fn odd_files_at_the_temporary_name_are_left_alone() {
    let Some((linker, dir)) = setup("odd-temp") else {
        return;
    };
    std::fs::write(dir.join("precious"), b"precious").unwrap();
    // The name the old output is set aside under, too.
    std::os::unix::fs::symlink(dir.join("precious"), dir.join(".out.rivet-old")).unwrap();
    for mode in ["--no-update-in-place", "--update-in-place"] {
        let tmp = dir.join(".out.rivet-tmp");
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(dir.join("precious"), &tmp).unwrap();
        for _ in 0..2 {
            let st = link(&linker, &dir, "small.o", &["--no-fork", mode])
                .status()
                .unwrap();
            assert!(st.success(), "{mode}");
        }
        assert!(
            std::fs::read(dir.join("precious")).unwrap() == b"precious",
            "{mode}: the file behind the symlink was overwritten"
        );
        assert!(
            std::fs::symlink_metadata(&tmp)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{mode}"
        );
        let aside = std::fs::symlink_metadata(dir.join(".out.rivet-old")).unwrap();
        assert!(
            aside.file_type().is_symlink(),
            "{mode}: the aside name's symlink was replaced"
        );
        std::fs::remove_file(&tmp).unwrap();
        let fifo = std::ffi::CString::new(tmp.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path in the test's scratch directory.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let mut child = link(&linker, &dir, "small.o", &["--no-fork", mode])
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{mode}: the link hangs on a FIFO"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&tmp)
                .unwrap()
                .file_type()
                .is_fifo(),
            "{mode}"
        );
        std::fs::remove_file(&tmp).unwrap();
    }
}
