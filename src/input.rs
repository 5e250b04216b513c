//! Pass 2: find, map and sniff every input named by the command line.
//!
//! Input: the `Config` from `args`. Output: [`Inputs`], the relocatable objects (archive members included, in
//! command-line order, each marked lazy unless `--whole-archive` or outside an archive) and the shared objects
//! (in command-line order). Linker-script inputs (`libc.so`) are expanded in place.
//!
//! File mappings are never unmapped: every later pass borrows from them for the rest of the process (DESIGN.md,
//! rule 5), so they are leaked as `&'static [u8]`.

use crate::args::{Config, InputArg, InputFlags};
use crate::diag::{Errors, Result};
use crate::elf::Data;
use crate::script;
use rayon::prelude::*;
use std::fs::File;
use std::path::{Path, PathBuf};

/// A relocatable object to be parsed: a file or an archive member.
pub struct ObjectInput {
    /// For messages: `path` or `archive.a(member.o)`.
    pub name: String,
    pub data: Data,
    /// An archive member that is linked only if it defines a needed symbol.
    pub lazy: bool,
}

pub struct SharedInput {
    pub name: String,
    pub data: Data,
    pub as_needed: bool,
}

#[derive(Default)]
pub struct Inputs {
    pub objects: Vec<ObjectInput>,
    pub shared: Vec<SharedInput>,
    /// Every file read, as named (for `--reproduce`).
    pub files: Vec<(PathBuf, Data)>,
}

pub fn load(config: &Config) -> Result<Inputs> {
    let mut loader = Loader {
        config,
        items: Vec::new(),
        shared: Vec::new(),
        script_depth: 0,
    };
    // The command line's files and libraries are found and mapped in parallel (clang-so names 206 libraries, each
    // looked for in 9 directories: 1035 stat calls and 4 ms on one thread), then taken in order.
    let found: Vec<Option<(PathBuf, std::result::Result<Data, String>)>> = config
        .inputs
        .par_iter()
        .with_max_len(1)
        .map(|arg| {
            let path = match arg {
                InputArg::File { path, .. } => path.clone(),
                InputArg::Library { name, flags } => find_library(config, name, *flags, &[])?,
                InputArg::GroupStart | InputArg::GroupEnd => return None,
            };
            let data = map_file(&path);
            Some((path, data))
        })
        .collect();
    for (arg, found) in config.inputs.iter().zip(found) {
        match (arg, found) {
            (
                InputArg::File { flags, .. } | InputArg::Library { flags, .. },
                Some((path, data)),
            ) => loader.add_mapped(&path, data, *flags),
            (InputArg::Library { name, .. }, None) => {
                loader.error(format!("unable to find library -l{name}"))
            }
            _ => {}
        }
    }
    // Archives are split into members in parallel (walking thousands of member headers, each on its own page
    // of the mapping, was 9 ms of clang-so's serial loading), then everything is put back in command-line order.
    let expanded: Vec<Vec<Item>> = loader
        .items
        .into_par_iter()
        .map(|item| match item {
            Item::Archive {
                path,
                name,
                data,
                thin,
                flags,
            } => archive_items(&path, &name, data, thin, flags),
            other => vec![other],
        })
        .collect();
    let mut inputs = Inputs {
        shared: loader.shared,
        ..Inputs::default()
    };
    let mut errors = Vec::new();
    for item in expanded.into_iter().flatten() {
        match item {
            Item::Object(o) => inputs.objects.push(o),
            Item::File(path, data) => inputs.files.push((path, data)),
            Item::Error(e) => errors.push(e),
            Item::Archive { .. } => unreachable!("archives were expanded"),
        }
    }
    if errors.is_empty() {
        Ok(inputs)
    } else {
        Err(Errors(errors))
    }
}

/// What loading found, in command-line order (shared objects are kept apart: their order among objects does not
/// matter).
enum Item {
    Object(ObjectInput),
    /// Split into its members after the command line was walked.
    Archive {
        path: PathBuf,
        name: String,
        data: Data,
        thin: bool,
        flags: InputFlags,
    },
    /// A file read (for `--reproduce`).
    File(PathBuf, Data),
    Error(String),
}

struct Loader<'c> {
    config: &'c Config,
    items: Vec<Item>,
    shared: Vec<SharedInput>,
    script_depth: u32,
}

fn map_file(path: &Path) -> std::result::Result<Data, String> {
    let file = File::open(path)
        .map_err(|e| format!("cannot open {}: {}", path.display(), io_reason(&e)))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot open {}: {}", path.display(), io_reason(&e)))?
        .len();
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: the mapping is read-only and private; a concurrent truncation by another process is the same hazard
    // every mmap-based linker accepts.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| format!("cannot map {}: {}", path.display(), e))?;
    let map: &'static memmap2::Mmap = Box::leak(Box::new(map));
    Ok(&map[..])
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

impl Loader<'_> {
    fn add_library(&mut self, name: &str, flags: InputFlags, extra_dirs: &[PathBuf]) {
        match find_library(self.config, name, flags, extra_dirs) {
            Some(p) => self.add_path(&p, flags),
            None => self.error(format!("unable to find library -l{name}")),
        }
    }

    fn error(&mut self, e: String) {
        self.items.push(Item::Error(e));
    }

    fn add_path(&mut self, path: &Path, flags: InputFlags) {
        self.add_mapped(path, map_file(path), flags);
    }

    /// Adds a file that was mapped (or failed to be).
    fn add_mapped(
        &mut self,
        path: &Path,
        data: std::result::Result<Data, String>,
        flags: InputFlags,
    ) {
        let data = match data {
            Ok(d) => d,
            Err(e) => return self.error(e),
        };
        self.items.push(Item::File(path.to_path_buf(), data));
        let name = path.display().to_string();
        if data.starts_with(b"\x7fELF") {
            match data.get(16..18) {
                Some([1, 0]) => self.items.push(Item::Object(ObjectInput {
                    name,
                    data,
                    lazy: false,
                })),
                Some([3, 0]) => self.shared.push(SharedInput {
                    name,
                    data,
                    as_needed: flags.as_needed,
                }),
                _ => self.error(format!(
                    "{name}: unknown ELF file type (expected a relocatable or shared object)"
                )),
            }
        } else if data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n") {
            self.items.push(Item::Archive {
                path: path.to_path_buf(),
                name,
                data,
                thin: data.starts_with(b"!<thin>\n"),
                flags,
            });
        } else if data.starts_with(b"BC\xc0\xde") || data.starts_with(b"\xde\xc0\x17\x0b") {
            self.error(format!("{name}: file is LLVM bitcode (LTO); rivet does not support LTO: rebuild without -flto"));
        } else if script::looks_like_script(data) {
            self.add_script(path, &name, data, flags);
        } else {
            self.error(format!("{name}: unknown file type"));
        }
    }

    fn add_script(&mut self, path: &Path, name: &str, data: Data, flags: InputFlags) {
        if self.script_depth > 16 {
            return self.error(format!("{name}: linker scripts nest too deeply"));
        }
        let text = String::from_utf8_lossy(data);
        let parsed = match script::parse(&text) {
            Ok(p) => p,
            Err(e) => return self.error(format!("{name}: {e}")),
        };
        let dirs: Vec<PathBuf> = parsed.search_dirs.iter().map(PathBuf::from).collect();
        self.script_depth += 1;
        for input in &parsed.inputs {
            let f = InputFlags {
                as_needed: flags.as_needed || input.as_needed,
                ..flags
            };
            if let Some(lib) = input.name.strip_prefix("-l") {
                self.add_library(lib, f, &dirs);
                continue;
            }
            let p = PathBuf::from(&input.name);
            // GNU ld: an absolute path is used as is; a relative one is tried in the current directory, then
            // beside the script, then on the search path.
            let candidates = std::iter::once(p.clone())
                .chain(path.parent().map(|d| d.join(&p)))
                .chain(self.config.search_paths.iter().map(|d| d.join(&p)));
            match candidates.into_iter().find(|c| c.is_file()) {
                Some(c) => self.add_path(&c, f),
                None => self.error(format!("{name}: cannot find {}", input.name)),
            }
        }
        self.script_depth -= 1;
    }
}

/// Where `-lNAME` (or `-l:FILE`) is: the first of `extra_dirs` and then the search path holding `libNAME.so`
/// (unless only static libraries are allowed) or else `libNAME.a`.
fn find_library(
    config: &Config,
    name: &str,
    flags: InputFlags,
    extra_dirs: &[PathBuf],
) -> Option<PathBuf> {
    for dir in extra_dirs.iter().chain(config.search_paths.iter()) {
        if let Some(exact) = name.strip_prefix(':') {
            let p = dir.join(exact);
            if p.is_file() {
                return Some(p);
            }
            continue;
        }
        if !flags.static_only {
            let p = dir.join(format!("lib{name}.so"));
            if p.is_file() {
                return Some(p);
            }
        }
        let p = dir.join(format!("lib{name}.a"));
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

/// The members of an archive as load items: its objects (lazy unless `--whole-archive`), the files of a thin
/// archive's members, and errors.
fn archive_items(path: &Path, name: &str, data: Data, thin: bool, flags: InputFlags) -> Vec<Item> {
    let members = match archive_members(data, thin) {
        Ok(m) => m,
        Err(e) => return vec![Item::Error(format!("{name}: {e}"))],
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut items = Vec::with_capacity(members.len());
    for m in members {
        let member_name = String::from_utf8_lossy(m.name).into_owned();
        let data = match m.data {
            Some(d) => d,
            None => match map_file(&dir.join(&member_name)) {
                Ok(d) => {
                    items.push(Item::File(dir.join(&member_name), d));
                    d
                }
                Err(e) => {
                    items.push(Item::Error(format!("{name}: thin archive member: {e}")));
                    continue;
                }
            },
        };
        let display = format!("{name}({member_name})");
        if data.starts_with(b"\x7fELF") {
            items.push(Item::Object(ObjectInput {
                name: display,
                data,
                lazy: !flags.whole_archive,
            }));
        } else if data.starts_with(b"BC\xc0\xde") {
            items.push(Item::Error(format!(
                "{display}: file is LLVM bitcode (LTO); rivet does not support LTO"
            )));
        } else if flags.whole_archive {
            items.push(Item::Error(format!(
                "{display}: archive member is not an ELF object"
            )));
        }
    }
    items
}

#[derive(Debug)]
pub struct Member {
    pub name: &'static [u8],
    /// `None` for a thin archive member, whose bytes live in a file of that name beside the archive.
    pub data: Option<Data>,
}

/// Splits a GNU (or BSD-named) `ar` archive into its members, skipping the symbol index and name table.
pub fn archive_members(data: Data, thin: bool) -> std::result::Result<Vec<Member>, String> {
    let mut out = Vec::new();
    let mut off = 8usize;
    let mut long_names: &[u8] = &[];
    while off < data.len() {
        if data.len() - off == 1 && data[off] == b'\n' {
            break;
        }
        let hdr = data
            .get(off..off + 60)
            .ok_or_else(|| format!("truncated archive member header at offset {off}"))?;
        if &hdr[58..60] != b"`\n" {
            return Err(format!("corrupt archive member header at offset {off}"));
        }
        let size: usize = std::str::from_utf8(&hdr[48..58])
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| format!("corrupt archive member size at offset {off}"))?;
        let raw_name = trim_right(&hdr[0..16]);
        let body_off = off + 60;
        let is_table = raw_name == b"/"
            || raw_name == b"//"
            || raw_name == b"/SYM64/"
            || raw_name == b"__.SYMDEF";
        // In a thin archive only the tables are stored inline; members live in their own files.
        let stored = if thin && !is_table { 0 } else { size };
        let body = data.get(body_off..body_off + stored).ok_or_else(|| {
            format!("truncated archive: member at offset {off} claims {size} bytes")
        })?;
        if raw_name == b"//" {
            long_names = body;
        } else if !is_table {
            let name = if let Some(idx) = raw_name.strip_prefix(b"/") {
                let i: usize = std::str::from_utf8(idx)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| format!("corrupt long member name at offset {off}"))?;
                let rest = long_names
                    .get(i..)
                    .ok_or_else(|| format!("long member name out of range at offset {off}"))?;
                let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                let n = &rest[..end];
                n.strip_suffix(b"/").unwrap_or(n)
            } else if let Some(len) = raw_name.strip_prefix(b"#1/") {
                // BSD long name: stored at the start of the body.
                let n: usize = std::str::from_utf8(len)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let n = n.min(body.len());
                let name = trim_nul(&body[..n]);
                out.push(Member {
                    name,
                    data: Some(&body[n..]),
                });
                off = body_off + stored + (stored & 1);
                continue;
            } else {
                raw_name.strip_suffix(b"/").unwrap_or(raw_name)
            };
            let name: &'static [u8] = name;
            out.push(Member {
                name,
                data: if thin { None } else { Some(body) },
            });
        }
        off = body_off + stored + (stored & 1);
    }
    Ok(out)
}

fn trim_right(s: &'static [u8]) -> &'static [u8] {
    let end = s.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
    &s[..end]
}

fn trim_nul(s: &'static [u8]) -> &'static [u8] {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, body: &[u8]) -> Vec<u8> {
        let mut v = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            name,
            0,
            0,
            0,
            644,
            body.len()
        )
        .into_bytes();
        v.extend_from_slice(body);
        if body.len() % 2 == 1 {
            v.push(b'\n');
        }
        v
    }

    #[test]
    fn splits_gnu_archive_with_long_names() {
        let mut a = b"!<arch>\n".to_vec();
        a.extend(member("/", b"\0\0\0\0"));
        a.extend(member("//", b"a_very_long_member_name.o/\n"));
        a.extend(member("short.o/", b"abc"));
        a.extend(member("/0", b"xy"));
        let a: &'static [u8] = Box::leak(a.into_boxed_slice());
        let m = archive_members(a, false).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, b"short.o");
        assert_eq!(m[0].data, Some(&b"abc"[..]));
        assert_eq!(m[1].name, b"a_very_long_member_name.o");
        assert_eq!(m[1].data, Some(&b"xy"[..]));
    }

    #[test]
    fn truncated_archive_is_an_error() {
        let mut a = b"!<arch>\n".to_vec();
        a.extend(member("short.o/", b"abcdef"));
        a.truncate(a.len() - 3);
        let a: &'static [u8] = Box::leak(a.into_boxed_slice());
        assert!(archive_members(a, false).unwrap_err().contains("truncated"));
        let garbage: &'static [u8] =
            b"!<arch>\nthis is not a header at all, just junk text padding it out";
        assert!(archive_members(garbage, false).is_err());
    }
}
