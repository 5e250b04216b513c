//! Diagnostics in lld's format: `rivet: error: MSG` with `>>> ` lines for context.
//!
//! A pass collects every error it finds (up to a limit) and returns them together, so that the user sees all
//! undefined symbols of a link at once rather than one per run.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static WARNINGS: AtomicUsize = AtomicUsize::new(0);
/// `-w`: warnings are neither printed nor counted.
static QUIET: AtomicBool = AtomicBool::new(false);
/// `--no-demangle`: names in messages as they are in the symbol tables.
static RAW_NAMES: AtomicBool = AtomicBool::new(false);

/// Sets how diagnostics are given: `quiet` (`-w`) drops warnings, `demangle` (`--demangle`, the default) shows
/// C++ and Rust names demangled.
pub fn configure(quiet: bool, demangle: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
    RAW_NAMES.store(!demangle, Ordering::Relaxed);
}

/// Prints a link-time warning (`rivet: warning: MSG`) and counts it, so that `--fatal-warnings` can fail the link
/// before the output is written.
pub fn warn(msg: &str) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    WARNINGS.fetch_add(1, Ordering::Relaxed);
    eprintln!("rivet: warning: {msg}");
}

/// Prints a note that goes with a warning (`rivet: NOTE: MSG`), unless warnings are silenced; not counted.
pub fn note(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("rivet: NOTE: {msg}");
    }
}

/// How many warnings the link has printed.
pub fn warnings() -> usize {
    WARNINGS.load(Ordering::Relaxed)
}

/// One or more errors; printed one per paragraph by `main`.
#[derive(Debug, Default)]
pub struct Errors(pub Vec<String>);

impl Errors {
    pub fn one(msg: impl Into<String>) -> Errors {
        Errors(vec![msg.into()])
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl From<String> for Errors {
    fn from(s: String) -> Errors {
        Errors(vec![s])
    }
}

pub type Result<T> = std::result::Result<T, Errors>;

/// Demangle a C++ (Itanium) or Rust symbol name for display; other names are returned unchanged.
pub fn demangle(name: &[u8]) -> String {
    let s = String::from_utf8_lossy(name);
    if RAW_NAMES.load(Ordering::Relaxed) {
        return s.into_owned();
    }
    if let Ok(d) = rustc_demangle::try_demangle(&s) {
        return format!("{d:#}");
    }
    if s.starts_with("_Z")
        && let Ok(sym) = cpp_demangle::Symbol::new(s.as_bytes())
        && let Ok(d) = sym.demangle()
    {
        return d;
    }
    s.into_owned()
}

/// Merge several pass results, keeping every error.
pub fn collect<T>(results: impl IntoIterator<Item = Result<T>>) -> Result<Vec<T>> {
    let mut ok = Vec::new();
    let mut errs = Vec::new();
    for r in results {
        match r {
            Ok(v) => ok.push(v),
            Err(e) => errs.extend(e.0),
        }
    }
    if errs.is_empty() {
        Ok(ok)
    } else {
        Err(Errors(errs))
    }
}

/// An I/O error as GNU ld and lld word it: the system's message without Rust's " (os error N)".
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(at) if s.ends_with(')') => s[..at].to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cpp_and_rust() {
        assert_eq!(demangle(b"_Z3fooi"), "foo(int)");
        assert_eq!(demangle(b"plain"), "plain");
        assert!(
            demangle(b"_ZN4core3fmt5write17h0123456789abcdefE").starts_with("core::fmt::write")
        );
    }
}
