//! `--reproduce=FILE.tar`: a self-contained copy of a link, for bug reports.
//!
//! The tar holds, under one directory named after the tar (`FILE/`), every input file the link read (objects,
//! archives, shared objects, linker scripts, thin archive members, version scripts, dynamic lists) at its absolute
//! path, `response.txt` with the command line rewritten to those copies, and `version.txt`. `tar xf FILE.tar &&
//! cd FILE && rivet @response.txt` repeats the link. Paths are normalised lexically (`a/../b` → `b`, no symlinks
//! resolved) so that `-l` still finds `libfoo.so` where the original did. Absolute paths inside linker scripts
//! (glibc's `libc.so`) still name the host's files, as with lld's `--reproduce`.
//!
//! The tar is ustar with a PAX `path` record for names longer than ustar's 100 bytes. It is written before the
//! link goes on, so a link that fails later still leaves it behind.

use crate::args::{ArgRole, Config, arg_role};
use crate::diag::{Errors, Result};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `cwd` and normalised without touching the file system.
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Where `path` lives inside the reproduction directory (its absolute path without the leading `/`).
fn inside(cwd: &Path, path: &Path) -> String {
    let abs = absolute(cwd, path);
    abs.strip_prefix("/").unwrap_or(&abs).display().to_string()
}

/// The command line rewritten to the copies: inputs, scripts and `-L` directories point into the directory,
/// outputs (`-o`, `-Map`) become plain file names there, and `--reproduce` itself is dropped. Option values that
/// are not input paths (`-dynamic-linker`, `-rpath`) are kept as they are.
fn rewrite_args(cwd: &Path, argv: &[String]) -> Vec<String> {
    let input = |p: &str| {
        if p.is_empty() || !Path::new(p).exists() {
            p.to_string()
        } else {
            inside(cwd, Path::new(p))
        }
    };
    let base = |p: &str| {
        Path::new(p)
            .file_name()
            .map_or_else(|| p.to_string(), |n| n.to_string_lossy().into_owned())
    };
    // A glued value follows `=` in long options (`--version-script=x`, `-Map=x`) and the option letter in short
    // ones (`-Lx`, `-ofile`, `-Tfoo=bar.ld`).
    let split = |a: &str| -> (String, String) {
        const SINGLE_DASH_LONG: [&str; 5] = [
            "-Map",
            "-version-script",
            "-dynamic-list",
            "-script",
            "-library-path",
        ];
        match a.split_once('=') {
            Some((o, v)) if a.starts_with("--") || SINGLE_DASH_LONG.contains(&o) => {
                (format!("{o}="), v.to_string())
            }
            _ => (a[..2].to_string(), a[2..].to_string()),
        }
    };
    let mut out = Vec::with_capacity(argv.len());
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        i += 1;
        let mut next = |f: &dyn Fn(&str) -> String| {
            let v = argv.get(i).map_or_else(String::new, |v| f(v));
            i += 1;
            v
        };
        match arg_role(a) {
            ArgRole::Input => out.push(input(a)),
            ArgRole::InputPath { glued: true } => {
                let (o, v) = split(a);
                out.push(format!("{o}{}", input(&v)));
            }
            ArgRole::OutputPath { glued: true } => {
                let (o, v) = split(a);
                out.push(format!("{o}{}", base(&v)));
            }
            ArgRole::InputPath { glued: false } => {
                out.push(a.clone());
                out.push(next(&input));
            }
            ArgRole::OutputPath { glued: false } => {
                out.push(a.clone());
                out.push(next(&base));
            }
            ArgRole::Reproduce { glued } => {
                if !glued {
                    next(&|v| v.to_string());
                }
            }
            ArgRole::Other { takes_next } => {
                out.push(a.clone());
                if takes_next {
                    out.push(next(&|v| v.to_string()));
                }
            }
        }
    }
    out
}

/// Quotes a response-file word (libiberty rules: backslash escapes, quotes group).
fn quote(word: &str) -> String {
    if !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'))
    {
        return word.to_string();
    }
    let mut q = String::from("\"");
    for c in word.chars() {
        if matches!(c, '"' | '\\') {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

/// One ustar header block (`typeflag` '0' for a file, 'x' for a PAX record) for `name` of `size` bytes.
fn header(name: &str, size: u64, typeflag: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.as_bytes();
    h[..n.len().min(100)].copy_from_slice(&n[..n.len().min(100)]);
    let octal = |field: &mut [u8], v: u64| {
        let s = format!("{:0width$o}", v, width = field.len() - 1);
        field[..s.len()].copy_from_slice(s.as_bytes());
    };
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], 0);
    h[156] = typeflag;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    // The checksum is computed with its own field as spaces.
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| b as u64).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
    h
}

fn append(tar: &mut Vec<u8>, name: &str, data: &[u8]) {
    if name.len() > 100 {
        // PAX extended header: "<len> path=<name>\n", where <len> counts the whole record.
        let body = format!(" path={name}\n");
        let mut len = body.len() + 1;
        while format!("{len}{body}").len() != len {
            len += 1;
        }
        let record = format!("{len}{body}");
        tar.extend_from_slice(&header("././@PaxHeader", record.len() as u64, b'x'));
        tar.extend_from_slice(record.as_bytes());
        tar.resize(tar.len().next_multiple_of(512), 0);
    }
    tar.extend_from_slice(&header(name, data.len() as u64, b'0'));
    tar.extend_from_slice(data);
    tar.resize(tar.len().next_multiple_of(512), 0);
}

/// Writes the reproduction tar for this link: `files` are the inputs the loader read.
pub fn write(path: &Path, config: &Config, files: &[(PathBuf, &[u8])]) -> Result<()> {
    let err = |e: String| Errors::one(format!("--reproduce: {}: {e}", path.display()));
    // ustar sizes are 11 octal digits.
    if let Some((p, _)) = files.iter().find(|(_, d)| d.len() as u64 >= 1 << 33) {
        return Err(err(format!(
            "{}: too large for a tar member (8 GiB or more)",
            p.display()
        )));
    }
    let cwd = std::env::current_dir().map_err(|e| err(e.to_string()))?;
    let dir = path
        .file_stem()
        .map_or_else(|| "repro".to_string(), |s| s.to_string_lossy().into_owned());
    let mut tar = Vec::new();
    let mut response = String::new();
    for w in rewrite_args(&cwd, &config.argv) {
        response.push_str(&quote(&w));
        response.push('\n');
    }
    append(
        &mut tar,
        &format!("{dir}/response.txt"),
        response.as_bytes(),
    );
    append(
        &mut tar,
        &format!("{dir}/version.txt"),
        format!("{}\n", crate::args::version_line()).as_bytes(),
    );
    let mut seen = HashSet::new();
    let mut add = |tar: &mut Vec<u8>, p: &Path, data: &[u8]| {
        let name = inside(&cwd, p);
        if seen.insert(name.clone()) {
            append(tar, &format!("{dir}/{name}"), data);
        }
    };
    for (p, data) in files {
        add(&mut tar, p, data);
    }
    // Files read by later passes.
    for p in config.version_script.iter().chain(&config.dynamic_list) {
        let data = std::fs::read(p).map_err(|e| err(format!("{}: {e}", p.display())))?;
        add(&mut tar, p, &data);
    }
    tar.resize(tar.len() + 1024, 0);
    std::fs::write(path, &tar).map_err(|e| err(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_args() {
        let cwd = Path::new("/work/build");
        assert_eq!(
            absolute(cwd, Path::new("/usr/lib/gcc/x/12/../../../crt1.o")),
            PathBuf::from("/usr/lib/crt1.o")
        );
        assert_eq!(inside(cwd, Path::new("../src/./a.o")), "work/src/a.o");
        let argv: Vec<String> = [
            "-o",
            "/tmp/out/prog",
            "-L/usr/lib/../lib",
            "--reproduce=r.tar",
            "-Map=/tmp/prog.map",
            "-Tno=such.ld",
            "-dynamic-linker",
            "/",
            "-lc",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            rewrite_args(cwd, &argv),
            [
                "-o",
                "prog",
                "-Lusr/lib",
                "-Map=prog.map",
                "-Tno=such.ld",
                "-dynamic-linker",
                "/",
                "-lc"
            ]
        );
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("plain"), "plain");
    }
}
