//! End-to-end tests: every case in `tests/programs/<case>/` is compiled by gcc and clang-19, linked by GNU ld (the
//! reference) and by rivet, run, and the two runs compared (stdout and exit status), plus the `readelf`/`nm`/
//! `addr2line`/`gdb` facts its spec asks for. Bad-input cases check that the link fails the right way instead.
//!
//! The spec format is documented in `tests/programs/README.md`.
//!
//! Environment:
//! - `RIVET_CASE=hello,tls` runs only cases whose name contains one of the comma-separated substrings
//!   (`RIVET_COMPILER=gcc`, `RIVET_KIND=static`, `RIVET_VARIANT=O0` narrow the matrix the same way);
//! - `RIVET_TEST_LINKER=/usr/bin/ld.bfd` tests another linker instead of rivet (see `tests/common/mod.rs`);
//! - `RIVET_TEST_JOBS=N` sets the number of worker threads.
//!
//! Work directories: `target/rivet-tests/programs/<case>/<compiler>-<variant>/` (each job's `log.txt` holds every
//! command it ran and its output).

mod common;

use common::{Compiler, Outcome};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const COMPILE_TIMEOUT: Duration = Duration::from_secs(180);
const LINK_TIMEOUT: Duration = Duration::from_secs(180);
const RUN_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------------------------
// Matrix dimensions

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Pie,
    NoPie,
    Static,
    StaticPie,
}

const ALL_KINDS: [Kind; 4] = [Kind::Pie, Kind::NoPie, Kind::Static, Kind::StaticPie];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pie => "pie",
            Kind::NoPie => "nopie",
            Kind::Static => "static",
            Kind::StaticPie => "static-pie",
        }
    }
    fn parse(s: &str) -> Option<Kind> {
        ALL_KINDS.into_iter().find(|k| k.name() == s)
    }
    /// Objects for every kind but `nopie` are compiled position-independent (`-fPIE`, the Debian default that a
    /// plain `gcc -static` also uses); `nopie` objects are compiled `-fno-pie`.
    fn pic(self) -> bool {
        self != Kind::NoPie
    }
    fn link_flag(self) -> &'static str {
        match self {
            Kind::Pie => "-pie",
            Kind::NoPie => "-no-pie",
            Kind::Static => "-static",
            Kind::StaticPie => "-static-pie",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Variant {
    /// `-O0`
    O0,
    /// `-O2 -g`
    O2g,
    /// `-O2 -ffunction-sections -fdata-sections`
    Sections,
}

const ALL_VARIANTS: [Variant; 3] = [Variant::O0, Variant::O2g, Variant::Sections];

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::O0 => "O0",
            Variant::O2g => "O2g",
            Variant::Sections => "sections",
        }
    }
    fn parse(s: &str) -> Option<Variant> {
        ALL_VARIANTS.into_iter().find(|v| v.name() == s)
    }
    fn flags(self) -> &'static [&'static str] {
        match self {
            Variant::O0 => &["-O0"],
            Variant::O2g => &["-O2", "-g"],
            Variant::Sections => &["-O2", "-ffunction-sections", "-fdata-sections"],
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Spec

#[derive(Clone, Debug)]
struct LibStep {
    name: String,
    srcs: Vec<String>,
    /// Extra link flags for a shared library (after `--` in the spec line).
    flags: Vec<String>,
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Cut the file to `percent` of its size.
    Truncate { file: String, percent: u64 },
    /// Set the type of the first relocation in the first relocation section for code to `rtype`.
    /// `section`: the relocation section to patch (`.rela.debug_info`); `None`: the first one for code.
    RelocType {
        file: String,
        rtype: u32,
        section: Option<String>,
    },
    /// Set `st_shndx` of the named symbol to `shndx`.
    SymbolShndx {
        file: String,
        symbol: String,
        shndx: u16,
    },
    /// Point `e_shoff` of an archive member past the end of the member.
    CorruptMember { archive: String, member: String },
    /// Write an archive magic followed by garbage.
    GarbageArchive { file: String },
}

impl Mutation {
    /// Mutations of archives run after the archives are built; the rest run on objects before.
    fn on_archive(&self) -> bool {
        match self {
            Mutation::Truncate { file, .. } => file.ends_with(".a"),
            Mutation::CorruptMember { .. } | Mutation::GarbageArchive { .. } => true,
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
enum CheckWhat {
    NmAbsent(String),
    NmPresent(String),
    /// `readelf <flags>` output (whitespace squashed) contains `pattern`, or lacks it when `negate`.
    Readelf {
        flags: Vec<String>,
        pattern: String,
        negate: bool,
    },
    /// `addr2line -f` of the symbol's address gives a real answer, the same for both links.
    Addr2line(String),
    /// gdb stops at a breakpoint on the function, reporting the same function, arguments, file and line (and the
    /// same backtrace, addresses aside) for both links.
    Gdb(String),
    StdoutContains(String),
    StdoutLacks(String),
}

#[derive(Clone, Debug)]
struct Check {
    only_kind: Option<Kind>,
    what: CheckWhat,
}

#[derive(Clone, Debug)]
struct Spec {
    name: String,
    dir: PathBuf,
    kinds: Vec<Kind>,
    compilers: Vec<Compiler>,
    variants: Vec<Variant>,
    srcs: Vec<String>,
    cflags: Vec<String>,
    /// Extra compile flags for single sources (`src_cflags = file.c: flags`).
    src_cflags: Vec<(String, Vec<String>)>,
    ldflags: Vec<String>,
    libs: Vec<String>,
    archives: Vec<(LibStep, bool)>,
    shared: Vec<LibStep>,
    mutations: Vec<Mutation>,
    args: Vec<String>,
    stdin: Option<String>,
    env: Vec<(String, String)>,
    exit: i32,
    ld_library_path: bool,
    /// `shared_test_linker = yes`: the shared libraries are also linked by the linker under test, and its
    /// executable runs with those.
    shared_test_linker: bool,
    expect_error: bool,
    errors: Vec<String>,
    bfd_errors: Vec<String>,
    checks: Vec<Check>,
}

fn words(v: &str) -> Vec<String> {
    v.split_whitespace().map(str::to_string).collect()
}

fn parse_spec(name: &str, dir: &Path) -> Result<Spec, String> {
    let path = dir.join("case.spec");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut spec = Spec {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        kinds: vec![Kind::Pie, Kind::NoPie],
        compilers: vec![Compiler::Gcc, Compiler::Clang],
        variants: ALL_VARIANTS.to_vec(),
        srcs: vec![],
        cflags: vec![],
        src_cflags: vec![],
        ldflags: vec![],
        libs: vec![],
        archives: vec![],
        shared: vec![],
        mutations: vec![],
        args: vec![],
        stdin: None,
        env: vec![],
        exit: 0,
        ld_library_path: true,
        shared_test_linker: false,
        expect_error: false,
        errors: vec![],
        bfd_errors: vec![],
        checks: vec![],
    };
    let mut srcs_given = false;
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |msg: &str| format!("{}:{}: {msg}: {raw}", path.display(), lineno + 1);
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| err("expected `key = value`"))?;
        let (key, value) = (key.trim(), value.trim());
        let (key, only_kind) = match key.split_once('.') {
            Some((k, kind)) => (
                k,
                Some(Kind::parse(kind).ok_or_else(|| err("unknown kind suffix"))?),
            ),
            None => (key, None),
        };
        if only_kind.is_some() && !(key.starts_with("check_") || key.starts_with("stdout_")) {
            return Err(err(
                "a `.kind` suffix is only allowed on check_* and stdout_* keys",
            ));
        }
        let lib_step = |v: &str| -> Result<LibStep, String> {
            let (name, rest) = v
                .split_once(':')
                .ok_or_else(|| err("expected `libname: sources`"))?;
            let (srcs, flags) = match rest.split_once(" -- ") {
                Some((s, f)) => (words(s), words(f)),
                None => (words(rest), vec![]),
            };
            Ok(LibStep {
                name: name.trim().to_string(),
                srcs,
                flags,
            })
        };
        let mut push_check = |what: CheckWhat| spec.checks.push(Check { only_kind, what });
        match key {
            "description" => {}
            "kinds" => {
                spec.kinds = if value == "all" {
                    ALL_KINDS.to_vec()
                } else {
                    words(value)
                        .iter()
                        .map(|w| Kind::parse(w).ok_or_else(|| err("unknown kind")))
                        .collect::<Result<_, _>>()?
                }
            }
            "compilers" => {
                spec.compilers = words(value)
                    .iter()
                    .map(|w| Compiler::parse(w).ok_or_else(|| err("unknown compiler")))
                    .collect::<Result<_, _>>()?
            }
            "variants" => {
                spec.variants = words(value)
                    .iter()
                    .map(|w| Variant::parse(w).ok_or_else(|| err("unknown variant")))
                    .collect::<Result<_, _>>()?
            }
            "srcs" => {
                srcs_given = true;
                spec.srcs.extend(words(value))
            }
            "cflags" => spec.cflags.extend(words(value)),
            "src_cflags" => {
                let (file, flags) = value
                    .split_once(':')
                    .ok_or_else(|| err("expected `file: flags`"))?;
                spec.src_cflags
                    .push((file.trim().to_string(), words(flags)))
            }
            "ldflags" => spec.ldflags.extend(words(value)),
            "libs" => spec.libs.extend(words(value)),
            "archive" => spec.archives.push((lib_step(value)?, false)),
            "thin_archive" => spec.archives.push((lib_step(value)?, true)),
            "shared" => spec.shared.push(lib_step(value)?),
            "truncate" => {
                let w = words(value);
                let percent = w
                    .get(1)
                    .and_then(|p| p.trim_end_matches('%').parse().ok())
                    .unwrap_or(50);
                spec.mutations.push(Mutation::Truncate {
                    file: w.first().cloned().ok_or_else(|| err("file?"))?,
                    percent,
                })
            }
            "reloc_type" => {
                let w = words(value);
                let rtype = w
                    .get(1)
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(|| err("expected `file type [relocation section]`"))?;
                spec.mutations.push(Mutation::RelocType {
                    file: w[0].clone(),
                    rtype,
                    section: w.get(2).cloned(),
                })
            }
            "symbol_shndx" => {
                let w = words(value);
                if w.len() != 3 {
                    return Err(err("expected `file symbol shndx`"));
                }
                let shndx = w[2].parse().map_err(|_| err("bad shndx"))?;
                spec.mutations.push(Mutation::SymbolShndx {
                    file: w[0].clone(),
                    symbol: w[1].clone(),
                    shndx,
                })
            }
            "corrupt_member" => {
                let w = words(value);
                if w.len() != 2 {
                    return Err(err("expected `archive member`"));
                }
                spec.mutations.push(Mutation::CorruptMember {
                    archive: w[0].clone(),
                    member: w[1].clone(),
                })
            }
            "garbage_archive" => spec.mutations.push(Mutation::GarbageArchive {
                file: value.to_string(),
            }),
            "args" => spec.args.extend(words(value)),
            "stdin" => spec.stdin = Some(value.to_string()),
            "env" => {
                let (k, v) = value
                    .split_once('=')
                    .ok_or_else(|| err("expected `env = NAME=value`"))?;
                spec.env.push((k.trim().to_string(), v.trim().to_string()))
            }
            "exit" => spec.exit = value.parse().map_err(|_| err("bad exit status"))?,
            "ld_library_path" => spec.ld_library_path = value != "no",
            "shared_test_linker" => spec.shared_test_linker = value == "yes",
            "expect" => match value {
                "error" => spec.expect_error = true,
                "run" => spec.expect_error = false,
                _ => return Err(err("expect is `run` or `error`")),
            },
            "error" => spec.errors.push(value.to_string()),
            "bfd_error" => spec.bfd_errors.push(value.to_string()),
            "check_nm_absent" => words(value)
                .into_iter()
                .for_each(|s| push_check(CheckWhat::NmAbsent(s))),
            "check_nm_present" => words(value)
                .into_iter()
                .for_each(|s| push_check(CheckWhat::NmPresent(s))),
            "check_addr2line" => words(value)
                .into_iter()
                .for_each(|s| push_check(CheckWhat::Addr2line(s))),
            "check_gdb" => words(value)
                .into_iter()
                .for_each(|s| push_check(CheckWhat::Gdb(s))),
            "check_readelf" => {
                let (flags, pattern) = value
                    .split_once('|')
                    .ok_or_else(|| err("expected `flags | pattern`"))?;
                let pattern = pattern.trim();
                let (negate, pattern) = match pattern.strip_prefix('!') {
                    Some(p) => (true, p.trim()),
                    None => (false, pattern),
                };
                push_check(CheckWhat::Readelf {
                    flags: words(flags),
                    pattern: common::squash_ws(pattern),
                    negate,
                })
            }
            "stdout_contains" => push_check(CheckWhat::StdoutContains(value.to_string())),
            "stdout_lacks" => push_check(CheckWhat::StdoutLacks(value.to_string())),
            _ => return Err(err("unknown key")),
        }
    }
    if !srcs_given {
        // Every source in the folder that no library step uses.
        let used: Vec<&String> = spec
            .archives
            .iter()
            .map(|(a, _)| a)
            .chain(spec.shared.iter())
            .flat_map(|l| l.srcs.iter())
            .collect();
        let mut found: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| is_source(n) && !used.contains(&n))
            .collect();
        found.sort();
        spec.srcs = found;
    }
    if spec.srcs.is_empty() {
        return Err(format!("{}: no sources", path.display()));
    }
    if spec.expect_error && spec.errors.is_empty() {
        return Err(format!(
            "{}: `expect = error` needs at least one `error =` line",
            path.display()
        ));
    }
    Ok(spec)
}

fn is_source(name: &str) -> bool {
    [".c", ".cc", ".cpp", ".S", ".s"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

fn is_cxx(name: &str) -> bool {
    name.ends_with(".cc") || name.ends_with(".cpp")
}

/// Where `shared_test_linker` puts the shared libraries the linker under test made (inside the object directory).
const UNDER_TEST_LIBS: &str = "under-test";

fn object_name(src: &str) -> String {
    let file = Path::new(src)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let stem = file
        .rsplit_once('.')
        .map(|(s, _)| s.to_string())
        .unwrap_or(file);
    format!("{stem}.o")
}

fn load_specs() -> Vec<Spec> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .expect("tests/programs")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("case.spec").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut specs = Vec::new();
    let mut errors = Vec::new();
    for n in names {
        match parse_spec(&n, &root.join(&n)) {
            Ok(s) => specs.push(s),
            Err(e) => errors.push(e),
        }
    }
    assert!(errors.is_empty(), "bad case specs:\n{}", errors.join("\n"));
    specs
}

fn env_filter(var: &str) -> Option<Vec<String>> {
    let v = std::env::var(var).ok()?;
    let parts: Vec<String> = v
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if parts.is_empty() { None } else { Some(parts) }
}

fn passes(filter: &Option<Vec<String>>, name: &str, exact: bool) -> bool {
    match filter {
        None => true,
        Some(f) => f.iter().any(|p| {
            if exact {
                p == name
            } else {
                name.contains(p.as_str())
            }
        }),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// ELF and archive patching for bad-input cases (little-endian ELF64 only, which is all x86-64 gcc/clang produce)

fn rd16(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn rd32(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn rd64(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

struct Shdr {
    name: u32,
    sh_type: u32,
    flags: u64,
    offset: usize,
    size: usize,
    link: u32,
    info: u32,
    entsize: usize,
}

fn section_headers(b: &[u8]) -> Option<Vec<Shdr>> {
    if b.get(0..4)? != b"\x7fELF" || b[4] != 2 || b[5] != 1 {
        return None;
    }
    let shoff = rd64(b, 0x28)? as usize;
    let shentsize = rd16(b, 0x3a)? as usize;
    let shnum = rd16(b, 0x3c)? as usize;
    (0..shnum)
        .map(|i| {
            let h = shoff + i * shentsize;
            Some(Shdr {
                name: rd32(b, h)?,
                sh_type: rd32(b, h + 4)?,
                flags: rd64(b, h + 8)?,
                offset: rd64(b, h + 0x18)? as usize,
                size: rd64(b, h + 0x20)? as usize,
                link: rd32(b, h + 0x28)?,
                info: rd32(b, h + 0x2c)?,
                entsize: rd64(b, h + 0x38)? as usize,
            })
        })
        .collect()
}

fn cstr(b: &[u8], o: usize) -> &[u8] {
    let tail = b.get(o..).unwrap_or(&[]);
    &tail[..tail.iter().position(|&c| c == 0).unwrap_or(tail.len())]
}

/// Sets the type of the first relocation that applies to an executable section. Returns what it did.
fn patch_reloc_type(b: &mut [u8], rtype: u32, section: Option<&str>) -> Result<String, String> {
    const SHT_RELA: u32 = 4;
    const SHF_EXECINSTR: u64 = 4;
    let shdrs = section_headers(b).ok_or("not an ELF64 little-endian file")?;
    let shstr = &shdrs[rd16(b, 0x3e).ok_or("bad header")? as usize];
    for s in &shdrs {
        let target = shdrs.get(s.info as usize);
        let name = String::from_utf8_lossy(cstr(b, shstr.offset + s.name as usize)).into_owned();
        let wanted = match section {
            Some(want) => name == want,
            None => target.is_some_and(|t| t.flags & SHF_EXECINSTR != 0),
        };
        if s.sh_type == SHT_RELA && s.size >= 24 && wanted {
            let old = rd32(b, s.offset + 8).ok_or("bad relocation offset")?;
            b[s.offset + 8..s.offset + 12].copy_from_slice(&rtype.to_le_bytes());
            return Ok(format!(
                "patched first relocation in {name}: type {old} -> {rtype}"
            ));
        }
    }
    Err(match section {
        Some(want) => format!("no relocation section {want} found"),
        None => "no relocation section for code found".into(),
    })
}

/// Sets `st_shndx` of `symbol` in `.symtab`.
fn patch_symbol_shndx(b: &mut [u8], symbol: &str, shndx: u16) -> Result<String, String> {
    const SHT_SYMTAB: u32 = 2;
    let shdrs = section_headers(b).ok_or("not an ELF64 little-endian file")?;
    let symtab = shdrs
        .iter()
        .find(|s| s.sh_type == SHT_SYMTAB)
        .ok_or("no .symtab")?;
    let strtab = shdrs.get(symtab.link as usize).ok_or("bad sh_link")?;
    let entsize = symtab.entsize.max(24);
    for i in 0..symtab.size / entsize {
        let e = symtab.offset + i * entsize;
        let name_off = rd32(b, e).ok_or("bad symbol")? as usize;
        if cstr(b, strtab.offset + name_off) == symbol.as_bytes() {
            let old = rd16(b, e + 6).ok_or("bad symbol")?;
            b[e + 6..e + 8].copy_from_slice(&shndx.to_le_bytes());
            return Ok(format!("patched st_shndx of {symbol}: {old} -> {shndx}"));
        }
    }
    Err(format!("symbol {symbol} not found"))
}

/// Overwrites `e_shoff` of archive member `member` so that its section header table lies past the member's end.
fn corrupt_archive_member(b: &mut [u8], member: &str) -> Result<String, String> {
    if !b.starts_with(b"!<arch>\n") {
        return Err("not a regular archive".into());
    }
    let mut pos = 8;
    let mut long_names: Vec<u8> = Vec::new();
    while pos + 60 <= b.len() {
        let hdr = &b[pos..pos + 60];
        let raw_name = String::from_utf8_lossy(&hdr[0..16]).trim_end().to_string();
        let size: usize = String::from_utf8_lossy(&hdr[48..58])
            .trim()
            .parse()
            .map_err(|_| "bad member size")?;
        let data = pos + 60;
        let name = if raw_name == "//" {
            long_names = b
                .get(data..data + size)
                .ok_or("bad long name table")?
                .to_vec();
            String::new()
        } else if let Some(off) = raw_name
            .strip_prefix('/')
            .and_then(|n| n.parse::<usize>().ok())
        {
            let tail = long_names.get(off..).unwrap_or(&[]);
            let end = tail.iter().position(|&c| c == b'\n').unwrap_or(tail.len());
            String::from_utf8_lossy(&tail[..end])
                .trim_end_matches('/')
                .to_string()
        } else {
            raw_name.trim_end_matches('/').to_string()
        };
        if name == member {
            if b.get(data..data + 4) != Some(b"\x7fELF".as_slice()) {
                return Err(format!("member {member} is not ELF"));
            }
            let bogus = (size as u64) * 4 + 0x1000;
            b[data + 0x28..data + 0x30].copy_from_slice(&bogus.to_le_bytes());
            return Ok(format!(
                "set e_shoff of {member} to {bogus:#x} (member size {size:#x})"
            ));
        }
        pos = data + size + (size & 1);
    }
    Err(format!("member {member} not found"))
}

// ---------------------------------------------------------------------------------------------------------------
// Running one job: one case, one compiler, one variant, all of the case's kinds

#[derive(Clone, Debug, PartialEq)]
enum Status {
    Pass,
    Fail(String),
}

struct KindResult {
    kind: Kind,
    status: Status,
}

struct JobResult {
    case: String,
    compiler: Compiler,
    variant: Variant,
    kinds: Vec<KindResult>,
    log_path: PathBuf,
}

struct Ctx {
    linker: PathBuf,
    overridden: bool,
    shim: PathBuf,
    /// Holds `ld`, a script that saves its arguments to `$RIVET_RECORD_ARGS` and runs the linker under test.
    record_dir: PathBuf,
    have_gdb: bool,
    have_elflint: bool,
}

struct Job<'a> {
    spec: &'a Spec,
    compiler: Compiler,
    variant: Variant,
    ctx: &'a Ctx,
    dir: PathBuf,
    log: String,
}

type Res<T> = Result<T, String>;

impl Job<'_> {
    fn note(&mut self, s: &str) {
        self.log.push_str(s);
        if !s.ends_with('\n') {
            self.log.push('\n');
        }
    }

    /// `eu-elflint --gnu-ld` findings, with section numbers removed and numbers masked so that the two links'
    /// lines compare (layouts differ in offsets and symbol indices, not in kinds of problem).
    fn elflint(&mut self, file: &Path) -> Vec<String> {
        let mut cmd = Command::new("eu-elflint");
        cmd.arg("--gnu-ld").arg(file).stdin(Stdio::null());
        let out = self.exec(&mut cmd, Duration::from_secs(60));
        out.stdout_str()
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("No errors"))
            .map(|l| {
                let mut s = String::new();
                let mut in_brackets = false;
                for ch in l.chars() {
                    match ch {
                        '[' => in_brackets = true,
                        ']' => in_brackets = false,
                        c if !in_brackets && c.is_ascii_digit() && s.ends_with('#') => {}
                        c if !in_brackets && c.is_ascii_digit() => s.push('#'),
                        c if !in_brackets => s.push(c),
                        _ => {}
                    }
                }
                s
            })
            .collect()
    }

    fn elflint_compare(&mut self, reference: &Path, ours: &Path) -> Res<()> {
        if !self.ctx.have_elflint {
            return Ok(());
        }
        let known = self.elflint(reference);
        let found: Vec<String> = self
            .elflint(ours)
            .into_iter()
            .filter(|l| !known.contains(l))
            .collect();
        match found.first() {
            None => Ok(()),
            Some(first) => Err(format!(
                "eu-elflint --gnu-ld reports {} problem(s) GNU ld's output does not have, first: {first}",
                found.len()
            )),
        }
    }

    fn exec(&mut self, cmd: &mut Command, timeout: Duration) -> Outcome {
        let out = common::run_with_timeout(cmd, timeout);
        self.log.push_str(&out.log());
        out
    }

    fn cxx(&self) -> bool {
        let s = self.spec;
        s.srcs
            .iter()
            .chain(s.archives.iter().flat_map(|(a, _)| a.srcs.iter()))
            .any(|n| is_cxx(n))
    }

    fn src_path(&self, src: &str) -> PathBuf {
        self.spec.dir.join(src)
    }

    fn subst(&self, s: &str, objdir: &Path) -> String {
        s.replace("{objdir}", &objdir.to_string_lossy())
            .replace("{casedir}", &self.spec.dir.to_string_lossy())
    }

    fn compile(&mut self, src: &str, objdir: &Path, pic_flag: &str) -> Res<()> {
        let mut cmd = Command::new(self.compiler.driver(is_cxx(src)));
        cmd.current_dir(objdir)
            .stdin(Stdio::null())
            .arg("-c")
            .arg(pic_flag);
        cmd.args(self.variant.flags());
        for f in &self.spec.cflags {
            cmd.arg(self.subst(f, objdir));
        }
        for (file, flags) in &self.spec.src_cflags {
            if file == src {
                cmd.args(flags);
            }
        }
        cmd.arg("-o").arg(object_name(src)).arg(self.src_path(src));
        let out = self.exec(&mut cmd, COMPILE_TIMEOUT);
        if !out.success() {
            return Err(format!(
                "compiling {src} failed ({}): {}",
                out.status_text(),
                first_line(&out.stderr_str())
            ));
        }
        Ok(())
    }

    fn mutate(&mut self, m: &Mutation, objdir: &Path) -> Res<()> {
        let file = match m {
            Mutation::Truncate { file, .. }
            | Mutation::RelocType { file, .. }
            | Mutation::SymbolShndx { file, .. }
            | Mutation::GarbageArchive { file } => file,
            Mutation::CorruptMember { archive, .. } => archive,
        };
        let path = objdir.join(file);
        let mut bytes = if matches!(m, Mutation::GarbageArchive { .. }) {
            Vec::new()
        } else {
            std::fs::read(&path).map_err(|e| format!("mutate {}: {e}", path.display()))?
        };
        let what = match m {
            Mutation::Truncate { percent, .. } => {
                let len = bytes.len() as u64 * percent / 100;
                bytes.truncate(len as usize);
                format!("truncated {file} to {len} bytes")
            }
            Mutation::RelocType { rtype, section, .. } => {
                patch_reloc_type(&mut bytes, *rtype, section.as_deref())?
            }
            Mutation::SymbolShndx { symbol, shndx, .. } => {
                patch_symbol_shndx(&mut bytes, symbol, *shndx)?
            }
            Mutation::CorruptMember { member, .. } => corrupt_archive_member(&mut bytes, member)?,
            Mutation::GarbageArchive { .. } => {
                // The magic, then what claims to be the symbol index but has a size that is not a number.
                bytes.extend_from_slice(b"!<arch>\n");
                bytes.extend_from_slice(
                    b"/               0           0     0     0       abc       `\n",
                );
                bytes.extend_from_slice(&[
                    0xde, 0xad, 0xbe, 0xef, 0x00, 0xff, 0x7f, 0x45, 0x4c, 0x46,
                ]);
                format!("wrote garbage archive {file}")
            }
        };
        std::fs::write(&path, &bytes).map_err(|e| format!("write {}: {e}", path.display()))?;
        self.note(&format!("# {what}"));
        Ok(())
    }

    /// Compiles everything for one PIC mode into `objdir` and builds the archives and shared libraries.
    fn build_inputs(&mut self, objdir: &Path, pic: bool) -> Res<()> {
        common::fresh_dir(objdir);
        let spec = self.spec;
        let pic_flag = if pic { "-fPIE" } else { "-fno-pie" };
        let mut srcs: Vec<String> = spec.srcs.clone();
        srcs.extend(
            spec.archives
                .iter()
                .flat_map(|(a, _)| a.srcs.iter().cloned()),
        );
        for src in &srcs {
            self.compile(src, objdir, pic_flag)?;
        }
        for lib in &spec.shared {
            for src in &lib.srcs {
                self.compile(src, objdir, "-fPIC")?;
            }
        }
        for m in spec.mutations.iter().filter(|m| !m.on_archive()) {
            self.mutate(m, objdir)?;
        }
        for (lib, thin) in &spec.archives {
            let _ = std::fs::remove_file(objdir.join(&lib.name));
            let mut cmd = Command::new("ar");
            cmd.current_dir(objdir)
                .arg(if *thin { "rcsT" } else { "rcs" })
                .arg(&lib.name);
            cmd.args(lib.srcs.iter().map(|s| object_name(s)));
            let out = self.exec(&mut cmd, COMPILE_TIMEOUT);
            if !out.success() {
                return Err(format!(
                    "ar {} failed: {}",
                    lib.name,
                    first_line(&out.stderr_str())
                ));
            }
        }
        // Shared libraries are linked by GNU ld (both executables link against these), and with
        // `shared_test_linker` also by the linker under test into `under-test/`, which its executable runs with.
        let under_test_dir = objdir.join(UNDER_TEST_LIBS);
        if spec.shared_test_linker {
            let _ = std::fs::create_dir_all(&under_test_dir);
        }
        let builds = spec.shared.iter().map(|l| (l, true)).chain(
            spec.shared
                .iter()
                .filter(|_| spec.shared_test_linker)
                .map(|l| (l, false)),
        );
        for (lib, reference) in builds {
            let cxx = lib.srcs.iter().any(|s| is_cxx(s));
            let mut cmd = Command::new(self.compiler.driver(cxx));
            cmd.current_dir(objdir).stdin(Stdio::null());
            if reference {
                cmd.args(self.compiler.reference_link_flags());
            } else {
                cmd.args(
                    self.compiler
                        .test_link_flags(&self.ctx.linker, &self.ctx.shim),
                );
            }
            cmd.args(["-shared", "-fPIC"]).args(self.variant.flags());
            for f in &spec.cflags {
                cmd.arg(self.subst(f, objdir));
            }
            let out_name = if reference {
                PathBuf::from(&lib.name)
            } else {
                under_test_dir.join(&lib.name)
            };
            cmd.arg("-o")
                .arg(out_name)
                .arg(format!("-Wl,-soname,{}", lib.name));
            cmd.args(lib.srcs.iter().map(|s| object_name(s)));
            for f in &lib.flags {
                cmd.arg(self.subst(f, objdir));
            }
            let out = self.exec(&mut cmd, LINK_TIMEOUT);
            if !out.success() {
                return Err(format!(
                    "linking shared {} failed: {}",
                    lib.name,
                    first_line(&out.stderr_str())
                ));
            }
        }
        for m in spec.mutations.iter().filter(|m| m.on_archive()) {
            self.mutate(m, objdir)?;
        }
        Ok(())
    }

    /// The driver command that links the executable `out`, by GNU ld (`reference`) or by the linker under test;
    /// with `record`, through a script that saves the linker's arguments in that file first.
    fn link_command(
        &self,
        kind: Kind,
        objdir: &Path,
        out: &Path,
        reference: bool,
        record: Option<&Path>,
    ) -> Command {
        let spec = self.spec;
        let mut cmd = Command::new(self.compiler.driver(self.cxx()));
        cmd.current_dir(objdir).stdin(Stdio::null());
        if reference {
            cmd.args(self.compiler.reference_link_flags());
        } else if let Some(file) = record {
            let script = self.ctx.record_dir.join("ld");
            cmd.args(self.compiler.test_link_flags(&script, &self.ctx.record_dir));
            cmd.env("RIVET_RECORD_ARGS", file);
        } else {
            cmd.args(
                self.compiler
                    .test_link_flags(&self.ctx.linker, &self.ctx.shim),
            );
        }
        cmd.arg(kind.link_flag()).args(self.variant.flags());
        if !reference && !self.ctx.overridden {
            // rivet links inputs this small on one thread by default; two keep its parallel passes under test.
            cmd.arg("-Wl,--threads=2");
        }
        for f in spec.cflags.iter().chain(spec.ldflags.iter()) {
            cmd.arg(self.subst(f, objdir));
        }
        cmd.arg("-o").arg(out);
        cmd.args(spec.srcs.iter().map(|s| object_name(s)));
        for f in &spec.libs {
            cmd.arg(self.subst(f, objdir));
        }
        cmd
    }

    fn link(&mut self, kind: Kind, objdir: &Path, out: &Path, reference: bool) -> Outcome {
        self.link_recorded(kind, objdir, out, reference, None)
    }

    fn link_recorded(
        &mut self,
        kind: Kind,
        objdir: &Path,
        out: &Path,
        reference: bool,
        record: Option<&Path>,
    ) -> Outcome {
        if let Some(parent) = out.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let mut cmd = self.link_command(kind, objdir, out, reference, record);
        self.exec(&mut cmd, LINK_TIMEOUT)
    }

    fn run_program(&mut self, exe: &Path, objdir: &Path, reference: bool) -> Outcome {
        use std::os::unix::process::CommandExt;
        let spec = self.spec;
        let mut cmd = Command::new(exe);
        // Both executables see the same argv[0] and working directory.
        cmd.arg0("./prog").current_dir(exe.parent().unwrap());
        cmd.args(&spec.args);
        cmd.env_remove("LD_LIBRARY_PATH")
            .env_remove("LD_PRELOAD")
            .env("LC_ALL", "C");
        if spec.ld_library_path {
            if spec.shared_test_linker && !reference {
                let mut path = std::ffi::OsString::from(objdir.join(UNDER_TEST_LIBS));
                path.push(":");
                path.push(objdir);
                cmd.env("LD_LIBRARY_PATH", path);
            } else {
                cmd.env("LD_LIBRARY_PATH", objdir);
            }
        }
        for (k, v) in &spec.env {
            cmd.env(k, self.subst(v, objdir));
        }
        match &spec.stdin {
            Some(f) => match std::fs::File::open(spec.dir.join(f)) {
                Ok(file) => {
                    cmd.stdin(file);
                }
                Err(e) => {
                    return Outcome {
                        spawn_error: Some(format!("stdin {f}: {e}")),
                        ..Default::default()
                    };
                }
            },
            None => {
                cmd.stdin(Stdio::null());
            }
        }
        self.exec(&mut cmd, RUN_TIMEOUT)
    }

    fn nm_address(&mut self, exe: &Path, sym: &str) -> Res<String> {
        let out = common::tool("nm", &[&exe.to_string_lossy()], None);
        for line in out.stdout_str().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() == 3 && f[2] == sym {
                return Ok(f[0].to_string());
            }
        }
        Err(format!("{}: nm finds no symbol {sym}", exe.display()))
    }

    fn nm_has(&mut self, exe: &Path, sym: &str) -> Res<bool> {
        let out = common::tool("nm", &[&exe.to_string_lossy()], None);
        if !out.success() {
            return Err(format!(
                "nm {} failed: {}",
                exe.display(),
                first_line(&out.stderr_str())
            ));
        }
        Ok(out
            .stdout_str()
            .lines()
            .any(|l| l.split_whitespace().nth(2) == Some(sym)))
    }

    /// A fact about one executable that must be the same for both links (addr2line, gdb).
    fn probe(&mut self, exe: &Path, objdir: &Path, what: &CheckWhat) -> Res<String> {
        match what {
            CheckWhat::Addr2line(sym) => {
                let addr = self.nm_address(exe, sym)?;
                let out = common::tool(
                    "addr2line",
                    &["-f", "-e", &exe.to_string_lossy(), &addr],
                    None,
                );
                self.log.push_str(&out.log());
                let text = out.stdout_str().trim().to_string();
                if !out.success() || text.contains("??") || !text.starts_with(sym.as_str()) {
                    return Err(format!(
                        "addr2line {sym} in {}: {:?}",
                        exe.display(),
                        text.replace('\n', " ")
                    ));
                }
                Ok(text)
            }
            CheckWhat::Gdb(func) => {
                let exe_s = exe.to_string_lossy().into_owned();
                let mut cmd = Command::new("gdb");
                cmd.args([
                    "-nx",
                    "-batch",
                    "-ex",
                    &format!("break {func}"),
                    "-ex",
                    "run",
                    "-ex",
                    "bt",
                    "-ex",
                    "kill",
                ]);
                cmd.arg(&exe_s)
                    .current_dir(exe.parent().unwrap())
                    .stdin(Stdio::null());
                cmd.env("LD_LIBRARY_PATH", objdir);
                let out = self.exec(&mut cmd, Duration::from_secs(120));
                let text = out.stdout_str();
                let facts: Vec<String> = text
                    .lines()
                    .filter(|l| l.starts_with("Breakpoint 1, ") || l.starts_with('#'))
                    .map(common::strip_addresses)
                    .collect();
                let stop = format!("Breakpoint 1, {func} ");
                if !facts
                    .iter()
                    .any(|l| l.starts_with(&stop) && l.contains(" at "))
                {
                    return Err(format!(
                        "gdb did not stop in {func} with a source line in {}",
                        exe.display()
                    ));
                }
                Ok(facts.join("\n"))
            }
            _ => unreachable!(),
        }
    }

    /// Checks that hold for one executable on its own (nm, readelf).
    fn check_alone(
        &mut self,
        exe: &Path,
        objdir: &Path,
        what: &CheckWhat,
        stdout: &str,
    ) -> Res<()> {
        let who = exe.display();
        match what {
            CheckWhat::NmAbsent(sym) => {
                if self.nm_has(exe, sym)? {
                    return Err(format!(
                        "{who}: symbol {sym} should have been dropped but nm lists it"
                    ));
                }
            }
            CheckWhat::NmPresent(sym) => {
                if !self.nm_has(exe, sym)? {
                    return Err(format!("{who}: nm does not list symbol {sym}"));
                }
            }
            CheckWhat::Readelf {
                flags,
                pattern,
                negate,
            } => {
                let mut args: Vec<String> = flags.clone();
                args.push(exe.to_string_lossy().into_owned());
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let out = common::tool("readelf", &argv, None);
                let pattern = self.subst(pattern, objdir);
                let text = common::squash_ws(&out.stdout_str());
                let found = text.contains(&pattern);
                if found == *negate {
                    self.log.push_str(&out.log());
                    let verb = if *negate { "contains" } else { "lacks" };
                    return Err(format!(
                        "{who}: readelf {} {verb} {pattern:?}",
                        flags.join(" ")
                    ));
                }
            }
            CheckWhat::StdoutContains(s) => {
                if !stdout.contains(s.as_str()) {
                    return Err(format!("{who}: stdout lacks {s:?}"));
                }
            }
            CheckWhat::StdoutLacks(s) => {
                if stdout.contains(s.as_str()) {
                    return Err(format!("{who}: stdout contains {s:?}"));
                }
            }
            CheckWhat::Addr2line(_) | CheckWhat::Gdb(_) => {}
        }
        Ok(())
    }

    /// Links, runs and compares one kind. `Err` is a reference-side problem or a test failure alike; the message
    /// says which.
    fn run_kind(&mut self, kind: Kind) -> Res<()> {
        let objdir = self.dir.join(if kind.pic() { "pic" } else { "nopic" });
        let kdir = self.dir.join(kind.name());
        let ref_exe = kdir.join("ref/prog");
        let test_exe = kdir.join("rivet/prog");
        self.note(&format!("\n===== {} (reference: GNU ld)", kind.name()));
        let r = self.link(kind, &objdir, &ref_exe, true);
        if !r.success() {
            return Err(format!(
                "reference link (GNU ld) failed: {}",
                first_error_line(&r.stderr_str())
            ));
        }
        self.note(&format!(
            "\n===== {} (under test: {})",
            kind.name(),
            self.ctx.linker.display()
        ));
        let t = self.link(kind, &objdir, &test_exe, false);
        if !t.success() {
            return Err(format!(
                "link failed: {}",
                first_error_line(&t.stderr_str())
            ));
        }
        let rr = self.run_program(&ref_exe, &objdir, true);
        if rr.code != Some(self.spec.exit) {
            return Err(format!(
                "reference program (GNU ld) ended with {} instead of exit {}: {}",
                rr.status_text(),
                self.spec.exit,
                first_line(&rr.stderr_str())
            ));
        }
        let tr = self.run_program(&test_exe, &objdir, false);
        if tr.code != rr.code || tr.signal.is_some() || tr.timed_out {
            let mut msg = format!(
                "program ended with {} but the GNU ld build with {}",
                tr.status_text(),
                rr.status_text()
            );
            if tr.stdout != rr.stdout {
                msg.push_str(&format!(
                    "; stdout {}",
                    first_difference(&rr.stdout, &tr.stdout)
                ));
            }
            let err = first_line(&tr.stderr_str());
            if !err.is_empty() {
                msg.push_str(&format!("; stderr: {err}"));
            }
            return Err(msg);
        }
        if tr.stdout != rr.stdout {
            return Err(format!(
                "stdout differs from the GNU ld build: {}",
                first_difference(&rr.stdout, &tr.stdout)
            ));
        }
        // Structure: eu-elflint must find nothing in rivet's outputs that it does not find in GNU ld's.
        self.elflint_compare(&ref_exe, &test_exe)?;
        if self.spec.shared_test_linker {
            for lib in &self.spec.shared {
                let ours = objdir.join(UNDER_TEST_LIBS).join(&lib.name);
                self.elflint_compare(&objdir.join(&lib.name), &ours)?;
            }
        }
        let checks: Vec<Check> = self
            .spec
            .checks
            .iter()
            .filter(|c| c.only_kind.is_none_or(|k| k == kind))
            .cloned()
            .collect();
        let (ref_out, test_out) = (rr.stdout_str(), tr.stdout_str());
        self.relink_over_junk(kind, &objdir, &test_exe)?;
        for c in &checks {
            match &c.what {
                CheckWhat::Addr2line(_) | CheckWhat::Gdb(_) => {
                    if matches!(c.what, CheckWhat::Gdb(_)) && !self.ctx.have_gdb {
                        self.note("# gdb not installed: gdb check skipped");
                        continue;
                    }
                    let want = self
                        .probe(&ref_exe, &objdir, &c.what)
                        .map_err(|e| format!("reference: {e}"))?;
                    let got = self.probe(&test_exe, &objdir, &c.what)?;
                    if want != got {
                        return Err(format!(
                            "debug info differs: GNU ld {want:?}, under test {got:?}"
                        ));
                    }
                }
                _ => {
                    self.check_alone(&ref_exe, &objdir, &c.what, &ref_out)
                        .map_err(|e| format!("reference: {e}"))?;
                    self.check_alone(&test_exe, &objdir, &c.what, &test_out)?;
                }
            }
        }
        Ok(())
    }

    /// rivet writes into an existing output file and zeroes only the bytes no writer covers: the same link over an
    /// old output full of junk (longer than the new one) must give the same bytes.
    fn relink_over_junk(&mut self, kind: Kind, objdir: &Path, exe: &Path) -> Res<()> {
        if self.ctx.overridden {
            return Ok(());
        }
        let want = std::fs::read(exe).map_err(|e| e.to_string())?;
        std::fs::write(exe, vec![0xa5u8; want.len() + 65536]).map_err(|e| e.to_string())?;
        self.note(&format!(
            "\n===== {} (under test, again, over an old output full of junk)",
            kind.name()
        ));
        let t = self.link(kind, objdir, exe, false);
        if !t.success() {
            return Err(format!(
                "link over an old output failed: {}",
                first_error_line(&t.stderr_str())
            ));
        }
        let got = std::fs::read(exe).map_err(|e| e.to_string())?;
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b);
            return Err(format!(
                "linked over an old output full of junk, the output differs from the first link's (length {} vs {}, first difference at {at:?})",
                got.len(),
                want.len()
            ));
        }
        Ok(())
    }

    /// A bad-input case: both linkers must fail; the linker under test with exit status 1, the expected messages,
    /// no output file, and an existing output file left as it was.
    fn run_error_kind(&mut self, kind: Kind) -> Res<()> {
        let objdir = self.dir.join(if kind.pic() { "pic" } else { "nopic" });
        let kdir = self.dir.join(kind.name());
        self.note(&format!(
            "\n===== {} (reference: GNU ld, must fail)",
            kind.name()
        ));
        let r = self.link(kind, &objdir, &kdir.join("ref/prog"), true);
        if r.success() {
            return Err(
                "reference link (GNU ld) succeeded: the case does not make a bad input".into(),
            );
        }
        let r_err = r.stderr_str();
        for p in &self.spec.bfd_errors {
            if !r_err.contains(p.as_str()) {
                return Err(format!(
                    "reference (GNU ld) error output lacks {p:?}: {}",
                    first_error_line(&r_err)
                ));
            }
        }
        let overridden = self.ctx.overridden;
        // 1. Through the driver, no output file yet: none may be left behind, nor a temporary file beside it.
        self.note(&format!(
            "\n===== {} (under test, through the driver, fresh output directory)",
            kind.name()
        ));
        let fresh = kdir.join("rivet-fresh");
        common::fresh_dir(&fresh);
        let args_file = kdir.join("linker-args");
        let _ = std::fs::remove_file(&args_file);
        let out_path = fresh.join("prog");
        let t = self.link_recorded(kind, &objdir, &out_path, false, Some(&args_file));
        self.expect_link_error(&t, overridden)?;
        let left = dir_entries(&fresh);
        if !left.is_empty() {
            return Err(format!(
                "failed link left files behind: {}",
                left.join(", ")
            ));
        }
        // 2. The linker run directly with the same arguments over an existing output file, because drivers get in
        //    the way (clang deletes the output of a failed link itself): exit status exactly 1, the old file
        //    byte-for-byte unchanged, nothing new beside it.
        self.note(&format!(
            "\n===== {} (under test, run directly, existing output file)",
            kind.name()
        ));
        let raw = std::fs::read(&args_file)
            .map_err(|e| format!("the recording shim saved no arguments: {e}"))?;
        let mut args: Vec<std::ffi::OsString> = raw
            .split(|&b| b == 0)
            .map(std::os::unix::ffi::OsStrExt::from_bytes)
            .map(|a: &std::ffi::OsStr| a.to_os_string())
            .collect();
        args.pop(); // the empty piece after the last NUL
        let sentinel: Vec<u8> = b"#!/bin/sh\necho 'an older output'\n"
            .iter()
            .copied()
            .chain(0..=255u8)
            .collect();
        std::fs::write(&out_path, &sentinel).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&self.ctx.linker);
        cmd.args(&args)
            .current_dir(&objdir)
            .stdin(Stdio::null())
            .env_remove("RIVET_RECORD_ARGS");
        let t = self.exec(&mut cmd, LINK_TIMEOUT);
        if t.code != Some(1) {
            return Err(format!(
                "linker run directly ended with {}, want exit 1: {}",
                t.status_text(),
                first_error_line(&t.stderr_str())
            ));
        }
        self.check_error_messages(&t.stderr_str(), overridden)?;
        match std::fs::read(&out_path) {
            Ok(b) if b == sentinel => {}
            Ok(_) => return Err("failed link changed the existing output file".into()),
            Err(_) if overridden => {
                self.note("# the overriding linker removed the old output (GNU ld does)")
            }
            Err(_) => return Err("failed link removed the existing output file".into()),
        }
        let left: Vec<String> = dir_entries(&fresh)
            .into_iter()
            .filter(|n| n != "prog")
            .collect();
        if !left.is_empty() {
            return Err(format!(
                "failed link left files behind: {}",
                left.join(", ")
            ));
        }
        Ok(())
    }

    fn expect_link_error(&mut self, t: &Outcome, overridden: bool) -> Res<()> {
        let err = t.stderr_str();
        if t.success() {
            return Err("link succeeded on bad input".into());
        }
        match self.compiler.linker_exit_code(&err) {
            Some(1) => {}
            Some(n) => {
                return Err(format!(
                    "linker exit status {n}, want 1: {}",
                    first_error_line(&err)
                ));
            }
            None => {
                return Err(format!(
                    "linker did not exit normally: {}",
                    first_error_line(&err)
                ));
            }
        }
        self.check_error_messages(&err, overridden)
    }

    fn check_error_messages(&mut self, err: &str, overridden: bool) -> Res<()> {
        if overridden {
            self.note("# RIVET_TEST_LINKER set: lld-style message checks skipped");
            return Ok(());
        }
        for p in &self.spec.errors {
            if !err.contains(p.as_str()) {
                return Err(format!(
                    "error output lacks {p:?}; got: {}",
                    first_error_line(err)
                ));
            }
        }
        Ok(())
    }
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The most telling line of a driver's stderr: the linker's first error line, else its first line, else the
/// driver's own summary ("collect2: error: ld returned 1 exit status").
fn first_error_line(s: &str) -> String {
    let driver = |l: &str| l.starts_with("collect2:") || l.contains("linker command failed");
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines
        .iter()
        .find(|l| {
            !driver(l) && (l.contains("error") || l.contains("panicked") || l.contains("undefined"))
        })
        .or_else(|| lines.iter().find(|l| !driver(l)))
        .or_else(|| lines.first())
        .map(|l| l.to_string())
        .unwrap_or_default()
}

fn first_difference(want: &[u8], got: &[u8]) -> String {
    let w = String::from_utf8_lossy(want);
    let g = String::from_utf8_lossy(got);
    let mut wl = w.lines();
    let mut gl = g.lines();
    let mut n = 1;
    loop {
        match (wl.next(), gl.next()) {
            (Some(a), Some(b)) if a == b => n += 1,
            (None, None) => return "only in line endings".into(),
            (a, b) => {
                return format!(
                    "line {n}: GNU ld {:?}, under test {:?}",
                    a.unwrap_or("<end>"),
                    b.unwrap_or("<end>")
                );
            }
        }
    }
}

fn run_job(
    spec: &Spec,
    compiler: Compiler,
    variant: Variant,
    kinds: &[Kind],
    ctx: &Ctx,
) -> JobResult {
    let dir = common::work_root()
        .join("programs")
        .join(&spec.name)
        .join(format!("{}-{}", compiler.name(), variant.name()));
    common::fresh_dir(&dir);
    let mut job = Job {
        spec,
        compiler,
        variant,
        ctx,
        dir: dir.clone(),
        log: String::new(),
    };
    job.note(&format!(
        "case {} / {} / {}",
        spec.name,
        compiler.name(),
        variant.name()
    ));
    let mut results = Vec::new();
    let mut built: BTreeMap<bool, Res<()>> = BTreeMap::new();
    for &kind in kinds {
        built.entry(kind.pic()).or_insert_with(|| {
            let sub = dir.join(if kind.pic() { "pic" } else { "nopic" });
            job.build_inputs(&sub, kind.pic())
        });
        let status = match &built[&kind.pic()] {
            Err(e) => Status::Fail(format!("building inputs: {e}")),
            Ok(()) => {
                let r = if spec.expect_error {
                    job.run_error_kind(kind)
                } else {
                    job.run_kind(kind)
                };
                match r {
                    Ok(()) => Status::Pass,
                    Err(e) => Status::Fail(e),
                }
            }
        };
        if let Status::Fail(e) = &status {
            job.note(&format!("\n##### FAIL {}: {e}", kind.name()));
        }
        results.push(KindResult { kind, status });
    }
    let log_path = dir.join("log.txt");
    let _ = std::fs::write(&log_path, &job.log);
    JobResult {
        case: spec.name.clone(),
        compiler,
        variant,
        kinds: results,
        log_path,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The test

#[test]
fn programs() {
    let (linker, overridden) = common::linker_under_test();
    assert!(
        linker.exists(),
        "linker under test {} does not exist",
        linker.display()
    );
    let ctx = Ctx {
        shim: common::ld_shim_dir(&linker, "programs"),
        record_dir: common::recording_shim_dir(&linker, "programs"),
        linker,
        overridden,
        have_gdb: common::have_tool("gdb"),
        have_elflint: common::have_tool("eu-elflint"),
    };
    if !ctx.have_gdb {
        eprintln!("WARNING: gdb not found: gdb checks are skipped (apt-get install gdb)");
    }
    let compilers = common::compilers();
    let case_filter = env_filter("RIVET_CASE");
    let comp_filter = env_filter("RIVET_COMPILER");
    let kind_filter = env_filter("RIVET_KIND");
    let var_filter = env_filter("RIVET_VARIANT");
    let specs = load_specs();
    let specs: Vec<Spec> = specs
        .into_iter()
        .filter(|s| passes(&case_filter, &s.name, false))
        .collect();
    assert!(!specs.is_empty(), "RIVET_CASE matches no case");

    let mut queue = VecDeque::new();
    for (i, spec) in specs.iter().enumerate() {
        let kinds: Vec<Kind> = spec
            .kinds
            .iter()
            .copied()
            .filter(|k| passes(&kind_filter, k.name(), true))
            .collect();
        if kinds.is_empty() {
            continue;
        }
        for &c in spec
            .compilers
            .iter()
            .filter(|c| compilers.contains(c) && passes(&comp_filter, c.name(), true))
        {
            for &v in spec
                .variants
                .iter()
                .filter(|v| passes(&var_filter, v.name(), true))
            {
                queue.push_back((i, c, v, kinds.clone()));
            }
        }
    }
    let total = queue.len();
    eprintln!(
        "rivet program tests: {} cases, {total} jobs, {} workers, linker under test {}{}",
        specs.len(),
        common::jobs(),
        ctx.linker.display(),
        if ctx.overridden {
            " (RIVET_TEST_LINKER)"
        } else {
            ""
        }
    );
    let queue = Mutex::new(queue);
    let results: Mutex<Vec<JobResult>> = Mutex::new(Vec::new());
    let done = Arc::new(Mutex::new(0usize));
    std::thread::scope(|scope| {
        for _ in 0..common::jobs() {
            scope.spawn(|| {
                loop {
                    let Some((i, c, v, kinds)) = queue.lock().unwrap().pop_front() else {
                        break;
                    };
                    let r = run_job(&specs[i], c, v, &kinds, &ctx);
                    let failed = r.kinds.iter().any(|k| k.status != Status::Pass);
                    let mut d = done.lock().unwrap();
                    *d += 1;
                    eprintln!(
                        "[{:>3}/{total}] {:<6} {:<28} {:<6} {:<8}",
                        *d,
                        if failed { "FAIL" } else { "ok" },
                        r.case,
                        c.name(),
                        v.name()
                    );
                    results.lock().unwrap().push(r);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| (&a.case, a.compiler, a.variant).cmp(&(&b.case, b.compiler, b.variant)));
    let report = report(&specs, &compilers, &results);
    let summary = common::work_root().join("programs/summary.txt");
    let _ = std::fs::write(&summary, &report);
    eprintln!("{report}");
    eprintln!("(summary written to {})", summary.display());
    // Known failures (tests/programs/KNOWN_FAILURES: `case compiler kind`, `*` matches anything) are listed but do
    // not fail the suite; each line there says what is missing in rivet. A known failure that passes is reported
    // so the line can be removed.
    let known = load_known_failures();
    let mut unexpected = 0;
    for r in &results {
        for k in &r.kinds {
            let is_known = known.iter().any(|(c, comp, kind)| {
                (c == "*" || *c == r.case)
                    && (comp == "*" || comp == r.compiler.name())
                    && (kind == "*" || kind == k.kind.name())
            });
            match (k.status != Status::Pass, is_known) {
                (true, false) => unexpected += 1,
                (true, true) => {
                    eprintln!(
                        "known failure: {} {} {} {}",
                        r.case,
                        r.compiler.name(),
                        r.variant.name(),
                        k.kind.name()
                    )
                }
                _ => {}
            }
        }
    }
    for (c, comp, kind) in &known {
        let matches = |r: &JobResult, k: &KindResult| {
            (c == "*" || *c == r.case)
                && (comp == "*" || comp == r.compiler.name())
                && (kind == "*" || kind == k.kind.name())
        };
        let ran = results
            .iter()
            .any(|r| r.kinds.iter().any(|k| matches(r, k)));
        let failed = results.iter().any(|r| {
            r.kinds
                .iter()
                .any(|k| matches(r, k) && k.status != Status::Pass)
        });
        if ran && !failed {
            eprintln!("KNOWN_FAILURES line `{c} {comp} {kind}` now passes: remove it");
        }
    }
    assert_eq!(
        unexpected, 0,
        "{unexpected} program test(s) failed that are not in tests/programs/KNOWN_FAILURES"
    );
}

fn load_known_failures() -> Vec<(String, String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/KNOWN_FAILURES");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3).then(|| (f[0].to_string(), f[1].to_string(), f[2].to_string()))
        })
        .collect()
}

/// A table with a row per case and a column per compiler and kind, then one line per failure.
fn report(specs: &[Spec], compilers: &[Compiler], results: &[JobResult]) -> String {
    // (case, compiler, kind) → each variant's pass/fail.
    type Cells<'a> = BTreeMap<(&'a str, Compiler, Kind), Vec<(Variant, bool)>>;
    let mut cell: Cells = BTreeMap::new();
    for r in results {
        for k in &r.kinds {
            cell.entry((&r.case, r.compiler, k.kind))
                .or_default()
                .push((r.variant, k.status == Status::Pass));
        }
    }
    let mut s = String::new();
    let width = specs.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
    let _ = write!(s, "\n{:<width$}", "case");
    for c in compilers {
        for k in ALL_KINDS {
            let _ = write!(s, " {:<12}", format!("{}:{}", c.name(), k.name()));
        }
    }
    s.push('\n');
    let (mut pass, mut fail) = (0, 0);
    for spec in specs {
        let _ = write!(s, "{:<width$}", spec.name);
        for &c in compilers {
            for k in ALL_KINDS {
                let text = match cell.get(&(spec.name.as_str(), c, k)) {
                    None => "-".to_string(),
                    Some(v) => {
                        let bad: Vec<&str> = v
                            .iter()
                            .filter(|(_, ok)| !ok)
                            .map(|(var, _)| var.name())
                            .collect();
                        pass += v.len() - bad.len();
                        fail += bad.len();
                        if bad.is_empty() {
                            "ok".to_string()
                        } else if bad.len() == v.len() {
                            "FAIL".to_string()
                        } else {
                            format!("FAIL:{}", bad.join(","))
                        }
                    }
                };
                let _ = write!(s, " {text:<12}");
            }
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\n{pass} passed, {fail} failed (each cell covers the variants O0, O2g, sections)"
    );
    for r in results {
        for k in &r.kinds {
            if let Status::Fail(e) = &k.status {
                let _ = writeln!(
                    s,
                    "FAIL {} [{} {} {}]: {}\n     log: {}",
                    r.case,
                    r.compiler.name(),
                    r.variant.name(),
                    k.kind.name(),
                    e,
                    r.log_path.display()
                );
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------------------------
// Self-tests of the harness's own helpers

#[test]
fn harness_parses_linker_exit_codes() {
    let gcc = "/usr/bin/ld: x\ncollect2: error: ld returned 1 exit status\n";
    assert_eq!(Compiler::Gcc.linker_exit_code(gcc), Some(1));
    let clang =
        "clang-19: error: linker command failed with exit code 1 (use -v to see invocation)\n";
    assert_eq!(Compiler::Clang.linker_exit_code(clang), Some(1));
    assert_eq!(
        Compiler::Gcc.linker_exit_code("collect2: fatal error: ld terminated with signal 11"),
        None
    );
}

#[test]
fn harness_parses_every_spec() {
    let specs = load_specs();
    assert!(specs.len() >= 30, "only {} cases", specs.len());
}

#[test]
fn harness_strips_addresses() {
    let a = "#1  0x0000555555555159 in main () at g.c:3, tag=0x402004 \"x\" 0xzz";
    assert_eq!(
        common::strip_addresses(a),
        "#1 # in main () at g.c:3, tag=# \"x\" 0xzz"
    );
}
