//! Helpers shared by the integration tests: where the linker under test is, which compilers exist, how to drive
//! them with rivet or with GNU ld, and how to run a command with a time limit.
//!
//! Environment variables understood by every integration test:
//! - `RIVET_TEST_LINKER=/usr/bin/ld.bfd`: test that linker instead of rivet (validates the cases and the harness;
//!   lld-style message checks and the "existing output file unchanged" check are relaxed, because GNU ld's
//!   diagnostics differ and GNU ld deletes the old output on error).
//! - `RIVET_REQUIRE_CLANG=1`: fail instead of skipping when `clang-19` is missing (CI sets it).
//! - `RIVET_TEST_JOBS=N`: number of worker threads (default: available parallelism).

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The linker the tests exercise, and whether it was overridden by `RIVET_TEST_LINKER`.
pub fn linker_under_test() -> (PathBuf, bool) {
    match std::env::var_os("RIVET_TEST_LINKER") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            let p = if p.is_absolute() {
                p
            } else {
                which(p.to_str().unwrap_or("")).unwrap_or(p)
            };
            (p, true)
        }
        _ => (PathBuf::from(env!("CARGO_BIN_EXE_rivet")), false),
    }
}

/// `<target dir>/rivet-tests`, the root of every work directory the integration tests create.
pub fn work_root() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp.parent().map(Path::to_path_buf).unwrap_or(tmp);
    target.join("rivet-tests")
}

pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

pub fn have_tool(name: &str) -> bool {
    which(name).is_some()
}

/// Number of worker threads for tests that run many links.
pub fn jobs() -> usize {
    std::env::var("RIVET_TEST_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compiler {
    Gcc,
    Clang,
}

impl Compiler {
    pub fn name(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang",
        }
    }

    pub fn parse(s: &str) -> Option<Compiler> {
        match s {
            "gcc" => Some(Compiler::Gcc),
            "clang" | "clang-19" => Some(Compiler::Clang),
            _ => None,
        }
    }

    /// The driver binary: C or C++.
    pub fn driver(self, cxx: bool) -> &'static str {
        match (self, cxx) {
            (Compiler::Gcc, false) => "gcc",
            (Compiler::Gcc, true) => "g++",
            (Compiler::Clang, false) => "clang-19",
            (Compiler::Clang, true) => "clang++-19",
        }
    }

    pub fn available(self) -> bool {
        have_tool(self.driver(false)) && have_tool(self.driver(true))
    }

    /// Driver flags that make the link use GNU ld (the reference).
    pub fn reference_link_flags(self) -> Vec<String> {
        match self {
            Compiler::Gcc => vec![],
            Compiler::Clang => vec!["-fuse-ld=bfd".into()],
        }
    }

    /// Driver flags that make the link use the linker under test. gcc runs `ld` from a `-B` directory holding a
    /// symlink named `ld`; clang takes the linker's path directly.
    pub fn test_link_flags(self, linker: &Path, shim_dir: &Path) -> Vec<String> {
        match self {
            Compiler::Gcc => vec![format!("-B{}/", shim_dir.display())],
            Compiler::Clang => vec![format!("--ld-path={}", linker.display())],
        }
    }

    /// The linker's exit status as the driver reports it on stderr, if the driver reported one.
    /// gcc (collect2): "ld returned 1 exit status"; clang: "linker command failed with exit code 1".
    pub fn linker_exit_code(self, driver_stderr: &str) -> Option<i32> {
        let (marker, _) = match self {
            Compiler::Gcc => (" returned ", ()),
            Compiler::Clang => ("linker command failed with exit code ", ()),
        };
        for line in driver_stderr.lines() {
            if self == Compiler::Gcc && !line.contains("exit status") {
                continue;
            }
            if let Some(pos) = line.find(marker) {
                let rest = &line[pos + marker.len()..];
                let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(n) = digits.parse() {
                    return Some(n);
                }
            }
        }
        None
    }
}

/// A directory holding one symlink, `ld`, to `linker`, for `gcc -B<dir>/`. Created atomically so that concurrent
/// test binaries don't trip over each other.
pub fn ld_shim_dir(linker: &Path, tag: &str) -> PathBuf {
    let dir = work_root().join(format!("ld-shim-{tag}"));
    std::fs::create_dir_all(&dir).expect("create ld shim dir");
    let link = dir.join("ld");
    let tmp = dir.join(format!("ld.tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(linker, &tmp).expect("create ld symlink");
    std::fs::rename(&tmp, &link).expect("rename ld symlink");
    dir
}

/// A directory holding `ld`, a shell script that writes its arguments (each followed by a NUL byte) to the file
/// named by `$RIVET_RECORD_ARGS` and then runs `linker` with them. It lets a test replay the exact link a compiler
/// driver ran, without the driver in the way.
pub fn recording_shim_dir(linker: &Path, tag: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = work_root().join(format!("ld-record-{tag}"));
    std::fs::create_dir_all(&dir).expect("create recording shim dir");
    let quoted = format!("'{}'", linker.to_string_lossy().replace('\'', "'\\''"));
    let script = format!(
        "#!/bin/sh\nif [ -n \"$RIVET_RECORD_ARGS\" ]; then printf '%s\\0' \"$@\" > \"$RIVET_RECORD_ARGS\"; fi\nexec {quoted} \"$@\"\n"
    );
    let tmp = dir.join(format!("ld.tmp{}", std::process::id()));
    std::fs::write(&tmp, script).expect("write recording shim");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
        .expect("chmod recording shim");
    std::fs::rename(&tmp, dir.join("ld")).expect("rename recording shim");
    dir
}

/// What a finished command left behind.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    /// Exit code; `None` if killed by a signal or timed out.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The command as a shell-like line, for logs.
    pub cmdline: String,
    pub spawn_error: Option<String>,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// "exit 3", "signal 11", "timeout", for messages.
    pub fn status_text(&self) -> String {
        if let Some(e) = &self.spawn_error {
            return format!("could not start: {e}");
        }
        if self.timed_out {
            return "timed out".into();
        }
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "unknown status".into(),
        }
    }
    /// A readable record of the command and its results, for the per-job log.
    pub fn log(&self) -> String {
        let mut s = format!("$ {}\n[{}]\n", self.cmdline, self.status_text());
        let out = self.stdout_str();
        let err = self.stderr_str();
        if !out.is_empty() {
            s.push_str("--- stdout\n");
            s.push_str(&truncate_text(&out, 8000));
            if !out.ends_with('\n') {
                s.push('\n');
            }
        }
        if !err.is_empty() {
            s.push_str("--- stderr\n");
            s.push_str(&truncate_text(&err, 8000));
            if !err.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }
}

pub fn truncate_text(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n... ({} more bytes)\n", &s[..end], s.len() - end)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,+:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub fn describe(cmd: &Command) -> String {
    let mut parts = Vec::new();
    if let Some(dir) = cmd.get_current_dir() {
        parts.push(format!("(cd {} &&", shell_quote(&dir.to_string_lossy())));
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            parts.push(format!(
                "{}={}",
                k.to_string_lossy(),
                shell_quote(&v.to_string_lossy())
            ));
        }
    }
    parts.push(shell_quote(&cmd.get_program().to_string_lossy()));
    for a in cmd.get_args() {
        parts.push(shell_quote(&a.to_string_lossy()));
    }
    let mut line = parts.join(" ");
    if cmd.get_current_dir().is_some() {
        line.push(')');
    }
    line
}

/// Runs `cmd` to completion or until `timeout`, capturing stdout and stderr. stdin is whatever `cmd` says
/// (null unless set).
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let cmdline = describe(cmd);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                cmdline,
                spawn_error: Some(e.to_string()),
                ..Default::default()
            };
        }
    };
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out_pipe.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err_pipe.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status: Option<ExitStatus> = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {
                if start.elapsed() > timeout {
                    timed_out = true;
                    let _ = child.kill();
                    break child.wait().ok();
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => break None,
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let (code, signal) = match status {
        Some(st) if !timed_out => (st.code(), st.signal()),
        _ => (None, None),
    };
    Outcome {
        code,
        signal,
        timed_out,
        stdout,
        stderr,
        cmdline,
        spawn_error: None,
    }
}

/// Runs a short tool command (nm, readelf, ar, …) with a generous limit.
pub fn tool(program: &str, args: &[&str], cwd: Option<&Path>) -> Outcome {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    run_with_timeout(&mut cmd, Duration::from_secs(120))
}

/// Runs a tool command in `cwd` that must succeed (the test panics with its log otherwise); returns its stdout.
pub fn tool_ok(program: &str, args: &[&str], cwd: &Path) -> String {
    let out = tool(program, args, Some(cwd));
    assert!(out.success(), "{program} {args:?} failed:\n{}", out.log());
    out.stdout_str()
}

/// Collapses every run of whitespace to one space, so that readelf column layout doesn't matter to a check.
pub fn squash_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Replaces every `0x…` hexadecimal number, wherever it appears in a word (`tag=0x4020`), with `#`, so that text
/// from two links can be compared when addresses differ.
pub fn strip_addresses(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let starts_hex = b[i] == b'0'
            && b.get(i + 1) == Some(&b'x')
            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if starts_hex {
            i += 2;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
            out.push('#');
        } else {
            let ch = s[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    squash_ws(&out)
}

static CLANG_WARNING: OnceLock<()> = OnceLock::new();

/// The compilers to test with. clang-19 is skipped with a loud message when missing, unless `RIVET_REQUIRE_CLANG`
/// is set.
pub fn compilers() -> Vec<Compiler> {
    let mut v = Vec::new();
    assert!(
        Compiler::Gcc.available(),
        "gcc and g++ are required for the integration tests"
    );
    v.push(Compiler::Gcc);
    if Compiler::Clang.available() {
        v.push(Compiler::Clang);
    } else if std::env::var_os("RIVET_REQUIRE_CLANG").is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("clang-19 / clang++-19 not found but RIVET_REQUIRE_CLANG is set");
    } else {
        CLANG_WARNING.get_or_init(|| {
            eprintln!();
            eprintln!("**********************************************************************");
            eprintln!("* WARNING: clang-19 not found: clang builds are SKIPPED.            *");
            eprintln!("* Install it (apt-get install clang-19) to run the full test matrix. *");
            eprintln!("**********************************************************************");
            eprintln!();
        });
    }
    v
}

/// Set-up of a test of rivet's own behaviour (its report formats, its diagnostics, lld's rules where GNU ld's
/// differ): rivet and a fresh work directory `name` under [`work_root`], or `None`, with "skipped: `why`" printed,
/// when `RIVET_TEST_LINKER` names another linker or one of `tools` is missing.
pub fn rivet_only(name: &str, tools: &[&str], why: &str) -> Option<(PathBuf, PathBuf)> {
    let (linker, overridden) = linker_under_test();
    if overridden || !tools.iter().all(|t| have_tool(t)) {
        eprintln!("skipped: {why}");
        return None;
    }
    let dir = work_root().join(name);
    fresh_dir(&dir);
    Some((linker, dir))
}

/// Removes and recreates `dir`.
pub fn fresh_dir(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
}

/// Set-up of a comparison with GNU ld: a fresh work directory `name` under [`work_root`], and `gcc -B` directories
/// for the linker under test and for GNU ld, as `(dir, test, reference)`; or `None`, with "skipped" printed, when
/// one of `tools` or `ld.bfd` is missing.
pub fn against_gnu_ld(name: &str, tools: &[&str]) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .chain(["ld.bfd"])
        .filter(|t| !have_tool(t))
        .collect();
    if !missing.is_empty() {
        eprintln!("skipped: {} needed", missing.join(", "));
        return None;
    }
    let (linker, _) = linker_under_test();
    let dir = work_root().join(name);
    fresh_dir(&dir);
    let test = ld_shim_dir(&linker, name);
    let reference = ld_shim_dir(&which("ld.bfd")?, &format!("{name}-bfd"));
    Some((dir, test, reference))
}

/// The names of the defined, non-local symbols `readelf --dyn-syms` lists for `file` (in `dir`), sorted.
pub fn dynamic_exports(dir: &Path, file: &str) -> Vec<String> {
    let out = tool_ok("readelf", &["--dyn-syms", "-W", file], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let entry = f.first()?.trim_end_matches(':').parse::<u32>().is_ok();
            (entry && f.len() >= 8 && f[4] != "LOCAL" && f[6] != "UND").then(|| f[7].to_string())
        })
        .collect();
    v.sort();
    v
}

/// GNU ld's default linker script for the output `kind` options (`["-pie"]`, `[]`), as `ld.bfd --verbose` prints it
/// between its `=====` lines.
pub fn gnu_default_script(kind: &[&str], dir: &Path) -> String {
    let verbose = tool_ok("ld.bfd", &[kind, &["--verbose"]].concat(), dir);
    (verbose.lines())
        .skip_while(|l| !l.starts_with("====="))
        .skip(1)
        .take_while(|l| !l.starts_with("====="))
        .map(|l| format!("{l}\n"))
        .collect()
}
