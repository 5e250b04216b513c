//! What the targets share: a directory of their own per process, with fixed inputs compiled once by gcc, and a
//! link of the fuzzed file through rivet's own code (`rivet::fuzzing::link_args`).
//!
//! A link may fail with an error (that is what a linker does with a bad input); the target's findings are
//! panics, crashes, timeouts, memory over libFuzzer's limit, and an output taking more than `MAX_OUTPUT` of disk,
//! which panics here. The file size limit (`FILE_SIZE_LIMIT`) stops a runaway write: libFuzzer reports it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const MAX_OUTPUT: u64 = 256 << 20;
const FILE_SIZE_LIMIT: u64 = 4 << 30;

/// A program's pieces, freestanding (no libc), for every target: `_start` calls what the fuzzed inputs may define
/// and uses what a script may define (weakly: a script that drops a symbol still links).
const MAIN_C: &str = include_str!("../../seeds/freestanding.c");

/// A small shared object with versioned symbols, for links that resolve against one.
const SHARED_C: &str = r#"
int shared_fn(int x) { return x + 1; }
int old_fn(int x) { return x; }
int data_word = 5;
__asm__(".symver old_fn, old_fn@V1");
"#;
const SHARED_MAP: &str =
    "V1 { global: old_fn; local: *; };\nV2 { global: shared_fn; data_word; } V1;\n";

/// Functions and data under names a version script may list: C, C++ (mangled), versioned with `.symver`.
pub const LIB_C: &str = r#"
int foo(int x) { return x + 1; }
int foo_v1(int x) { return x; }
int bar = 3;
static int hidden_count;
int baz(void) { return ++hidden_count + bar; }
int _Z3quxi(int x) { return x * 2; }
int _ZN2ns5thingEv(void) { return 4; }
__asm__(".symver foo_v1, foo@VERS_1");
"#;

pub struct Env {
    pub dir: PathBuf,
    /// Freestanding `_start` and data (`MAIN_C`).
    pub main_o: String,
    /// A shared object with versions (`SHARED_C`).
    pub shared_so: String,
    /// A PIC object with names for version scripts (`LIB_C`).
    pub lib_o: String,
}

/// This process's directory and fixed inputs, made on first use.
pub fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rivet-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        w("main.c", MAIN_C);
        w("shared.c", SHARED_C);
        w("shared.map", SHARED_MAP);
        w("lib.c", LIB_C);
        let cc = |args: &[&str]| {
            let st = Command::new("gcc").args(args).current_dir(&dir).status();
            assert!(
                st.is_ok_and(|s| s.success()),
                "gcc {args:?} failed: the targets need gcc"
            );
        };
        let freestanding = [
            "-O1",
            "-ffreestanding",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-fPIC",
        ];
        cc(&[&freestanding[..], &["-c", "main.c", "-o", "main.o"]].concat());
        cc(&["-O1", "-fPIC", "-c", "lib.c", "-o", "lib.o"]);
        cc(&[
            "-shared",
            "-nostdlib",
            "-fPIC",
            "-fuse-ld=bfd",
            "-Wl,--version-script=shared.map",
            "shared.c",
            "-o",
            "libshared.so",
        ]);
        limit_file_size();
        let s = |f: &str| dir.join(f).display().to_string();
        Env {
            main_o: s("main.o"),
            shared_so: s("libshared.so"),
            lib_o: s("lib.o"),
            dir,
        }
    })
}

fn limit_file_size() {
    let lim = libc::rlimit {
        rlim_cur: FILE_SIZE_LIMIT,
        rlim_max: FILE_SIZE_LIMIT,
    };
    // SAFETY: sets this process's own limit from a plain struct.
    unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &lim) };
}

/// Writes `data` to `name` in the process's directory (the same file every time, rewritten in place); returns
/// its path.
pub fn input(name: &str, data: &[u8]) -> String {
    let p = env().dir.join(name);
    std::fs::write(&p, data).unwrap();
    p.display().to_string()
}

/// Links with `args` (`{out}` names the output) and checks what the output takes on disk.
pub fn link(args: &[&str]) {
    let out = env().dir.join("out");
    let mut argv: Vec<String> = vec!["--no-fork".into(), "-o".into(), out.display().to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let r = rivet::fuzzing::link_args(&argv);
    // RIVET_FUZZ_VERBOSE=1 shows each link and its outcome (to see what a corpus file reaches).
    if std::env::var_os("RIVET_FUZZ_VERBOSE").is_some() {
        eprintln!("rivet {}: {r:?}", argv.join(" "));
    }
    if r.is_ok() {
        check_output(&out);
    }
}

fn check_output(out: &Path) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = std::fs::metadata(out) {
        let disk = m.blocks() * 512;
        assert!(
            disk <= MAX_OUTPUT,
            "the output takes {} MiB of disk",
            disk >> 20
        );
    }
}

/// A link mode, chosen by the input's length (so that one corpus file always links the same way, and a mutation
/// that changes the length tries another mode).
pub fn mode(data: &[u8], modes: usize) -> usize {
    data.len() % modes
}

/// AddressSanitizer's defaults for the targets: no leak check. A link leaves some small blocks for the exit (names
/// leaked as `'static`, each input mapping's handle), which the check would report as a finding on every input.
#[unsafe(no_mangle)]
pub extern "C" fn __asan_default_options() -> *const std::ffi::c_char {
    c"detect_leaks=0".as_ptr()
}
