//! Outputs that are not regular files. Build systems link to `-o /dev/null` in their feature checks; GNU ld and
//! lld write into such a file. A linker that writes a new file and renames it over the output would replace the
//! device node with a regular file (as root: the machine's `/dev/null`). Nothing here touches the real `/dev`:
//! each case makes its own device node (`mknod`, a copy of `/dev/null`'s numbers), FIFO or symlink in a scratch
//! directory and checks that the node is still there, of the same kind, and that nothing else was left beside it.
//!
//! Runs for any linker under test (`RIVET_TEST_LINKER`), since this is GNU ld's behaviour; the character-device
//! cases are skipped with a message where `mknod` is not permitted (not root).

mod common;

use std::ffi::CString;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const HELLO: &str = "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n";
const UNDEFINED: &str = "int missing(void);\nint main(void) { return missing(); }\n";

struct Env {
    dir: PathBuf,
    shim: PathBuf,
}

impl Env {
    fn new(tag: &str) -> Option<Env> {
        if !common::have_tool("gcc") {
            eprintln!("skipped: gcc needed");
            return None;
        }
        let (linker, _) = common::linker_under_test();
        let dir = common::work_root().join(format!("special-outputs-{tag}"));
        common::fresh_dir(&dir);
        let shim = common::ld_shim_dir(&linker, &format!("special-outputs-{tag}"));
        let env = Env { dir, shim };
        std::fs::write(env.dir.join("hello.c"), HELLO).unwrap();
        std::fs::write(env.dir.join("undefined.c"), UNDEFINED).unwrap();
        common::tool_ok("gcc", &["-c", "hello.c", "undefined.c"], &env.dir);
        Some(env)
    }

    /// Links `object` into `out` (a path relative to the work directory) through gcc and the linker under test.
    fn link(&self, out: &str, object: &str, extra: &[&str]) -> common::Outcome {
        let shim = format!("-B{}/", self.shim.display());
        let mut args = vec![shim.as_str(), "-o", out, object];
        args.extend_from_slice(extra);
        common::tool("gcc", &args, Some(&self.dir))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The names in the work directory, sorted: a linker must leave no temporary file beside a special output.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

/// A character device with `/dev/null`'s numbers at `path`, or `None` where mknod is not permitted.
fn make_null_device(path: &Path) -> Option<u64> {
    let rdev = std::fs::metadata("/dev/null").ok()?.rdev();
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mknod with a valid NUL-terminated path; it only creates a node in the test's scratch directory.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, rdev as libc::dev_t) };
    if r != 0 {
        eprintln!(
            "skipped: mknod {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
        return None;
    }
    Some(rdev)
}

fn assert_char_device(path: &Path, rdev: u64) {
    let meta = std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{} is gone: {e}", path.display()));
    assert!(
        meta.file_type().is_char_device() && meta.rdev() == rdev,
        "{} is no longer the character device it was: {:?}",
        path.display(),
        meta.file_type()
    );
}

/// `-o null` where `null` is a character device, in every output mode: the link succeeds, the device stays, and
/// no file is left beside it. A failed link leaves it too.
#[test]
fn character_device_output_is_written_into_not_replaced() {
    let Some(env) = Env::new("chardev") else {
        return;
    };
    let Some(rdev) = make_null_device(&env.path("null")) else {
        return;
    };
    let (_, overridden) = common::linker_under_test();
    let rivet_modes: &[&[&str]] = &[
        &[],
        &["-Wl,--no-fork"],
        &["-Wl,--no-mmap-output-file"],
        &["-Wl,--no-update-in-place"],
        &["-Wl,--build-id"],
    ];
    let modes: &[&[&str]] = if overridden { &[&[]] } else { rivet_modes };
    let before = env.names();
    for extra in modes {
        let o = env.link("null", "hello.o", extra);
        assert!(o.success(), "link to a device with {extra:?}:\n{}", o.log());
        assert_char_device(&env.path("null"), rdev);
        assert_eq!(env.names(), before, "files left by the link with {extra:?}");
    }
    let o = env.link("null", "undefined.o", &[]);
    assert!(!o.success(), "a link with an undefined symbol succeeded");
    assert_char_device(&env.path("null"), rdev);
    assert_eq!(env.names(), before);
    // Through a symlink: the link and the device both stay.
    std::os::unix::fs::symlink("null", env.path("null-link")).unwrap();
    let o = env.link("null-link", "hello.o", &[]);
    assert!(o.success(), "link through a symlink:\n{}", o.log());
    assert!(
        std::fs::symlink_metadata(env.path("null-link"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink to the device was replaced"
    );
    assert_char_device(&env.path("null"), rdev);
}

/// `-o fifo`: the output's bytes go down the pipe, the same bytes as a link to a regular file, and the FIFO stays.
#[test]
fn fifo_output_receives_the_output() {
    let Some(env) = Env::new("fifo") else {
        return;
    };
    let o = env.link("regular", "hello.o", &[]);
    assert!(o.success(), "{}", o.log());
    let want = std::fs::read(env.path("regular")).unwrap();
    let fifo = env.path("fifo");
    let c = CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path in the test's scratch directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let before = env.names();
    // Opened without blocking before the link starts, and read until the linker has exited and the pipe is
    // empty: a linker that renames a file over the FIFO never opens it, and the test must not wait for it.
    let pipe = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let linked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let linked = linked.clone();
        std::thread::spawn(move || drain(pipe, &linked))
    };
    let o = env.link("fifo", "hello.o", &[]);
    linked.store(true, std::sync::atomic::Ordering::SeqCst);
    let got = reader.join().unwrap();
    let is_fifo = || {
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    };
    // GNU ld seeks in its output and fails on a FIFO ("Illegal seek"), leaving it be; rivet writes into it as
    // lld does.
    if common::linker_under_test().1 && !o.success() {
        assert!(is_fifo());
        return;
    }
    assert!(o.success(), "link to a FIFO:\n{}", o.log());
    assert!(
        got == want,
        "the FIFO got {} bytes, a regular output has {}",
        got.len(),
        want.len()
    );
    assert!(is_fifo(), "the FIFO was replaced");
    assert_eq!(env.names(), before);
}

/// Everything written to the non-blocking `pipe` until `done` is set and no writer has the FIFO open.
fn drain(mut pipe: std::fs::File, done: &std::sync::atomic::AtomicBool) -> Vec<u8> {
    use std::io::Read;
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        let finished = done.load(std::sync::atomic::Ordering::SeqCst);
        match pipe.read(&mut buf) {
            Ok(0) if finished => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("reading the FIFO: {e}"),
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// `-o DIR`: an error that names the output, and the directory left as it was.
#[test]
fn directory_output_is_an_error() {
    let Some(env) = Env::new("dir") else {
        return;
    };
    std::fs::create_dir(env.path("out")).unwrap();
    std::fs::write(env.path("out/keep"), "x").unwrap();
    let o = env.link("out", "hello.o", &[]);
    assert!(!o.success(), "a link to a directory succeeded");
    assert!(
        o.stderr_str().contains("out"),
        "the error does not name the output:\n{}",
        o.log()
    );
    assert!(env.path("out").is_dir());
    assert_eq!(std::fs::read(env.path("out/keep")).unwrap(), b"x");
    assert_eq!(
        env.names(),
        ["hello.c", "hello.o", "out", "undefined.c", "undefined.o"]
    );
}
