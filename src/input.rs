//! Pass 2: find, map and sniff every input named by the command line.
//!
//! Input: the `Config` from `args`. Output: [`Inputs`], the relocatable objects (archive members included, in
//! command-line order, each marked lazy unless `--whole-archive` or outside an archive) and the shared objects
//! (in command-line order). Linker-script inputs (`libc.so`) are expanded in place. An archive with a symbol
//! index contributes its members as the index describes them ([`IndexedMember`]), unread (a thin archive's
//! member files unmapped).
//!
//! File mappings are never unmapped: every later pass borrows from them for the rest of the process
//! (ARCHITECTURE.md, performance rule 5), so they are leaked as `&'static [u8]`.

mod binary;

use crate::args::{Config, InputArg, InputFlags};
use crate::diag::{Errors, Result};
use crate::elf::Data;
use crate::names::Name;
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
    /// A member known only from its archive's symbol index (`name` and `data` are then empty): read when
    /// resolution pulls it in, with the names the index says it defines.
    pub indexed: Option<(IndexedMember, Vec<Name>)>,
}

/// An archive member that only the archive's symbol index has named so far. Most members of a big static link are
/// never pulled in, and reading even their headers maps the pages around them; what is touched stays mapped until
/// exit, where unmapping it was most of the process's teardown.
#[derive(Clone, Copy)]
pub struct IndexedMember {
    pub archive: Data,
    /// The archive's name, for messages.
    pub archive_name: &'static str,
    /// Where the member's header is in `archive`.
    pub header: usize,
    /// The archive's long member name table (`//`).
    pub long_names: Data,
    /// For a thin archive, the directory its member paths are relative to: the member is then mapped from its
    /// own file when read.
    pub thin_dir: Option<&'static Path>,
}

impl IndexedMember {
    /// The member's display name (`archive.a(member.o)`) and contents.
    pub fn read(&self) -> std::result::Result<(String, Data), String> {
        let at = |e| format!("{}: {e}", self.archive_name);
        let header = member_header(self.archive, self.header).map_err(at)?;
        let thin = self.thin_dir.is_some();
        let m = member_at(self.archive, self.header, header, self.long_names, thin)
            .map_err(at)?
            .0
            .ok_or_else(|| {
                format!(
                    "{}: the symbol index names a table, not a member, at offset {}",
                    self.archive_name, self.header
                )
            })?;
        let member = String::from_utf8_lossy(m.name);
        let data = match (m.data, self.thin_dir) {
            (Some(d), _) => d,
            (None, Some(dir)) => map_file(&dir.join(&*member))
                .map_err(|e| format!("{}: thin archive member: {e}", self.archive_name))?,
            (None, None) => &[],
        };
        Ok((format!("{}({member})", self.archive_name), data))
    }
}

pub struct SharedInput {
    pub name: String,
    pub data: Data,
    pub as_needed: bool,
    /// The name `DT_NEEDED` records when the library has no `DT_SONAME`: the path as the command line wrote it,
    /// or the file name alone for a library found on the search path (`-lx`), as GNU ld does.
    pub needed_name: String,
    /// How many relocatable objects (archive members included) come before it on the command line: an archive
    /// member is not pulled for a symbol a library before it defines (GNU ld reads its inputs in order).
    pub objects_before: usize,
}

#[derive(Default)]
pub struct Inputs {
    pub objects: Vec<ObjectInput>,
    pub shared: Vec<SharedInput>,
    /// Every file read, as named (for `--reproduce`).
    pub files: Vec<(PathBuf, Data)>,
    /// The objects of each `--start-group` ... `--end-group`, as a range of indices into `objects`.
    pub groups: Vec<std::ops::Range<usize>>,
    /// The lazy objects, run by run, in command-line order.
    pub lazy_runs: Vec<LazyRun>,
    /// What the linker scripts read say that acts like options (`ENTRY`, `VERSION`, assignments...).
    pub script: script::input::ScriptSettings,
}

/// A run of lazy objects in `Inputs::objects`: one archive's members, or the files between `--start-lib` and
/// `--end-lib`. GNU ld reads an archive's members pass by pass at its place on the command line
/// (`load_order`).
#[derive(Clone, Debug)]
pub struct LazyRun {
    pub files: std::ops::Range<usize>,
    /// The first run of the same archive (its own index if it is the first): an archive named twice has its
    /// members twice, and resolution links those of the first copy.
    pub first: u32,
}

pub fn load(config: &Config) -> Result<Inputs> {
    use std::os::unix::fs::MetadataExt;
    let output = std::fs::metadata(&config.output).ok();
    let _ = OUTPUT_ID.set(output.filter(|m| m.is_file()).map(|m| (m.dev(), m.ino())));
    let mut loader = Loader {
        config,
        items: Vec::new(),
        shared: Vec::new(),
        script_depth: 0,
        defsyms_before: 0,
        script: Default::default(),
        implicit_sections: Vec::new(),
        startups: 0,
        given: Vec::new(),
    };
    loader.add_startup();
    // One thread finds and maps the command line's files in order, sniffing each, while the others split the
    // archives it finds into members (walking thousands of member headers, each on its own page of the mapping, or
    // reading the symbol index and hashing its names). Finding and mapping in parallel too was slower: with one
    // task per input, the phase took far longer than on one thread, its threads mostly waiting; splitting only
    // after all were mapped left the other threads asleep until then.
    let reproducing = config.reproduce.is_some();
    let split: std::sync::Mutex<Vec<(usize, Vec<Item>)>> = std::sync::Mutex::new(Vec::new());
    // Groups as ranges of items, made ranges of objects once the archives are split.
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    // Each archive's path, in the order found (the order of `Item::Split`s).
    let mut archive_paths: Vec<PathBuf> = Vec::new();
    rayon::scope(|scope| {
        let mut seen = 0;
        let mut archives = 0;
        // After the command line's inputs, the files the scripts' input section descriptions name.
        for (k, arg) in config.inputs.iter().map(Some).chain([None]).enumerate() {
            loader.defsyms_before = config.defsym_inputs.iter().filter(|&&i| i <= k).count();
            let Some(arg) = arg else {
                loader.add_named_by_scripts();
                continue;
            };
            match arg {
                InputArg::File { path, flags } => loader.add_path(path, *flags),
                InputArg::Library { name, flags } => {
                    match find_library(config, name, *flags, &[]) {
                        Some(path) => loader.add_searched(&path, *flags),
                        None => loader.error(format!("unable to find library -l{name}")),
                    }
                }
                InputArg::GroupStart => groups.push(loader.items.len()..usize::MAX),
                InputArg::GroupEnd => {
                    if let Some(g) = groups.last_mut().filter(|g| g.end == usize::MAX) {
                        g.end = loader.items.len();
                    }
                }
            }
            // The archives this input added (a linker script may add several) are split by other threads.
            for item in &mut loader.items[seen..] {
                match std::mem::replace(item, Item::Split) {
                    Item::Archive {
                        path,
                        name,
                        data,
                        thin,
                        flags,
                    } => {
                        let (k, split) = (archives, &split);
                        archives += 1;
                        archive_paths.push(path.clone());
                        scope.spawn(move |_| {
                            let items = archive_items(&path, &name, data, thin, flags, reproducing);
                            split
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((k, items));
                        });
                    }
                    other => *item = other,
                }
            }
            seen = loader.items.len();
        }
    });
    let mut split = split.into_inner().unwrap_or_else(|e| e.into_inner());
    split.sort_unstable_by_key(|&(k, _)| k);
    let mut split = split.into_iter().map(|(_, items)| items);
    loader.scripts_read();
    let mut inputs = Inputs {
        shared: loader.shared,
        script: loader.script,
        ..Inputs::default()
    };
    let mut errors = Vec::new();
    // The number of objects before each item of the command line, for the shared objects' `objects_before`.
    let mut objects_at_item = Vec::with_capacity(loader.items.len() + 1);
    let mut runs = LazyRuns::default();
    let mut archive_paths = archive_paths.into_iter();
    for item in loader.items {
        let start = inputs.objects.len();
        objects_at_item.push(start);
        let (items, archive) = match item {
            Item::Split => (split.next().unwrap_or_default(), archive_paths.next()),
            other => (vec![other], None),
        };
        for item in items {
            match item {
                Item::Object(o) => inputs.objects.push(o),
                Item::File(path, data) => inputs.files.push((path, data)),
                Item::Error(e) => errors.push(e),
                Item::Archive { .. } | Item::Split => unreachable!("archives were split"),
            }
        }
        runs.add(&inputs.objects, start, archive);
    }
    inputs.lazy_runs = runs.runs;
    objects_at_item.push(inputs.objects.len());
    let at = |item: usize| objects_at_item[item.min(objects_at_item.len() - 1)];
    for s in &mut inputs.shared {
        s.objects_before = at(s.objects_before);
    }
    inputs.groups = groups.into_iter().map(|g| at(g.start)..at(g.end)).collect();
    if errors.is_empty() {
        Ok(inputs)
    } else {
        Err(Errors(errors))
    }
}

/// `Inputs::lazy_runs` as they are found.
#[derive(Default)]
struct LazyRuns {
    runs: Vec<LazyRun>,
    /// Per archive path: its first run.
    first: rustc_hash::FxHashMap<std::ffi::OsString, u32>,
    /// The last run is of `--start-lib` files, which the next one extends.
    start_lib: bool,
}

impl LazyRuns {
    /// Notes the objects from `start` on, which one command-line item (`archive`, if it was one) added.
    fn add(&mut self, objects: &[ObjectInput], start: usize, archive: Option<PathBuf>) {
        let files = start..objects.len();
        if files.is_empty() || !objects[start].lazy {
            return;
        }
        let own = self.runs.len() as u32;
        match archive {
            Some(path) => {
                let first = *self.first.entry(path.into_os_string()).or_insert(own);
                // The same file twice has the same members (a file changed in between is a new archive).
                let same =
                    (self.runs.get(first as usize)).is_some_and(|r| r.files.len() == files.len());
                let first = if same { first } else { own };
                self.runs.push(LazyRun { files, first });
                self.start_lib = false;
            }
            None => match self.runs.last_mut() {
                Some(r) if self.start_lib && r.files.end == start => r.files.end = files.end,
                _ => {
                    self.runs.push(LazyRun { files, first: own });
                    self.start_lib = true;
                }
            },
        }
    }
}

/// What loading found, in command-line order (shared objects are kept apart: their order among objects does not
/// matter).
enum Item {
    Object(ObjectInput),
    /// Split into its members by another thread (then replaced by `Split`).
    Archive {
        path: PathBuf,
        name: String,
        data: Data,
        thin: bool,
        flags: InputFlags,
    },
    /// An archive whose members another thread is listing, in the order archives were found.
    Split,
    /// A file read (for `--reproduce`).
    File(PathBuf, Data),
    Error(String),
}

struct Loader<'c> {
    config: &'c Config,
    items: Vec<Item>,
    shared: Vec<SharedInput>,
    script_depth: u32,
    /// The number of `--defsym`s given before the command-line input being read (`Config::defsym_inputs`): a
    /// script's assignments are evaluated after those and before the rest, as GNU ld reads them in order.
    defsyms_before: usize,
    script: script::input::ScriptSettings,
    /// The `SECTIONS`, `MEMORY` and `PHDRS` of the scripts named as input files, in the order read: GNU ld reads
    /// them after every `-T` script (those are read with the options), or after its default script, so they
    /// follow those.
    implicit_sections: Vec<std::sync::Arc<script::sections::SectionsScript>>,
    /// The `STARTUP` commands read so far: GNU ld takes one.
    startups: usize,
    /// The names of the files added so far, as given (`add_named_by_scripts` looks a name up among them).
    given: Vec<String>,
}

/// The first bytes of a thin archive (its members are files of their own).
pub const THIN_MAGIC: &[u8; 8] = b"!<thin>\n";

/// Every input file's mapping (address, length), for `release_input_pages`.
static MAPPINGS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

/// Drops the page-table entries of every input file's mapping, on all threads, for a process about to exit with
/// its caller waiting (`--no-fork`): the exit would otherwise unmap them on one thread, after the link's last
/// phase, and that is the largest part of the exit. The mappings are read-only views of the files' page cache
/// (memmap2 maps them shared, and nothing writes them): the bytes stay in the page cache, and a later read of an
/// input maps the same bytes again, so this is safe at any point; it is done once nothing reads the inputs.
///
/// On one thread this step takes about what the exit spent on the mappings; on more it takes less wall time, but
/// more CPU time (each call's TLB flush reaches the other threads), so it is only done with more than one thread.
pub fn release_input_pages() {
    // Less than this is left to the exit: there the exit's share is smaller than the cost of handing the pieces to
    // the other threads and back.
    const RELEASE_MIN: usize = 32 << 20;
    // Pieces of at most 16 MiB, one task each, so that a few large archives spread over the threads (smaller
    // pieces were slower, larger ones no faster).
    const PIECE: usize = 16 << 20;
    let maps = std::mem::take(&mut *MAPPINGS.lock().unwrap_or_else(|e| e.into_inner()));
    if maps.iter().map(|m| m.1).sum::<usize>() < RELEASE_MIN {
        return;
    }
    let pieces: Vec<(usize, usize)> = maps
        .iter()
        .flat_map(|&(at, len)| {
            (0..len)
                .step_by(PIECE)
                .map(move |o| (at + o, PIECE.min(len - o)))
        })
        .collect();
    pieces.par_iter().with_max_len(1).for_each(|&(at, len)| {
        // SAFETY: `at..at + len` lies in a live read-only file mapping (leaked, never unmapped), starting on a page
        // boundary (PIECE is a multiple of the page size).
        unsafe { crate::alloc::drop_file_pages(at, len) };
    });
}

/// Unmaps every input file, for a process that links again (the fuzzing entry): nothing may read an input after
/// this.
#[cfg(fuzzing)]
pub fn unmap_inputs() {
    let maps = std::mem::take(&mut *MAPPINGS.lock().unwrap_or_else(|e| e.into_inner()));
    for (at, len) in maps {
        // SAFETY: a mapping made by `map_file` (leaked, never unmapped otherwise); the link that read it is over.
        unsafe { libc::munmap(at as *mut libc::c_void, len) };
    }
}

/// The device and inode of the existing output file, if any: no input may be that file, which the link would
/// overwrite while reading it (GNU ld refuses the same).
static OUTPUT_ID: std::sync::OnceLock<Option<(u64, u64)>> = std::sync::OnceLock::new();

fn map_file(path: &Path) -> std::result::Result<Data, String> {
    use std::os::unix::fs::MetadataExt;
    let file = File::open(path).map_err(|e| {
        format!(
            "cannot open {}: {}",
            path.display(),
            crate::diag::io_reason(&e)
        )
    })?;
    let meta = file.metadata().map_err(|e| {
        format!(
            "cannot open {}: {}",
            path.display(),
            crate::diag::io_reason(&e)
        )
    })?;
    if OUTPUT_ID.get().copied().flatten() == Some((meta.dev(), meta.ino())) {
        return Err(format!(
            "input file '{}' is the same as the output file",
            path.display()
        ));
    }
    let len = meta.len();
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: the mapping is read-only; a concurrent truncation by another process is the same hazard
    // every mmap-based linker accepts.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| format!("cannot map {}: {}", path.display(), e))?;
    let map: &'static memmap2::Mmap = Box::leak(Box::new(map));
    MAPPINGS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((map.as_ptr() as usize, map.len()));
    Ok(&map[..])
}

/// The object `-b binary` makes of file `path` with contents `data` (`binary`), kept for the whole link as a
/// mapping is.
fn binary_object(path: &Path, data: Data) -> std::result::Result<Data, String> {
    if crate::elf::elf32_addend().is_some() {
        return Err(format!(
            "{}: -b binary is not supported in an ELF32 link",
            path.display()
        ));
    }
    let o = binary::object(
        &path.display().to_string(),
        data,
        crate::elf::target_machine(),
    );
    Ok(Box::leak(o.into_boxed_slice()))
}

/// Whether `data` is LLVM bitcode (raw, or in its wrapper), which `-flto` puts in objects and archives.
pub fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(b"BC\xc0\xde") || data.starts_with(b"\xde\xc0\x17\x0b")
}

/// The error for a bitcode input `name` (a file or `archive(member)`).
pub fn bitcode_error(name: &str) -> String {
    format!("{name}: file is LLVM bitcode (LTO); rivet does not support LTO: rebuild without -flto")
}

impl Loader<'_> {
    fn add_library(&mut self, name: &str, flags: InputFlags, extra_dirs: &[PathBuf]) {
        match find_library(self.config, name, flags, extra_dirs) {
            Some(p) => self.add_searched(&p, flags),
            None => self.error(format!("unable to find library -l{name}")),
        }
    }

    fn error(&mut self, e: String) {
        self.items.push(Item::Error(e));
    }

    /// Adds a file named by its path.
    fn add_path(&mut self, path: &Path, flags: InputFlags) {
        let needed = path.display().to_string();
        let data = match flags.binary {
            true => map_file(path).and_then(|d| binary_object(path, d)),
            false => map_file(path),
        };
        self.add_mapped(path, data, flags, needed);
    }

    /// Adds a file found by searching directories (`-l`, a linker script's relative `INPUT`).
    fn add_searched(&mut self, path: &Path, flags: InputFlags) {
        let needed = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        self.add_mapped(path, map_file(path), flags, needed);
    }

    /// Adds a file that was mapped (or failed to be).
    fn add_mapped(
        &mut self,
        path: &Path,
        data: std::result::Result<Data, String>,
        flags: InputFlags,
        needed_name: String,
    ) {
        let data = match data {
            Ok(d) => d,
            Err(e) => return self.error(e),
        };
        self.items.push(Item::File(path.to_path_buf(), data));
        let name = path.display().to_string();
        self.given.push(name.clone());
        if data.starts_with(b"\x7fELF") {
            match data.get(16..18) {
                Some([1, 0]) => self.items.push(Item::Object(ObjectInput {
                    name,
                    data,
                    lazy: flags.lazy && !flags.whole_archive,
                    indexed: None,
                })),
                Some([3, 0]) => self.shared.push(SharedInput {
                    name,
                    data,
                    as_needed: flags.as_needed,
                    needed_name,
                    // For now the number of items before it; `load` makes it a count of objects.
                    objects_before: self.items.len(),
                }),
                _ => self.error(format!(
                    "{name}: unknown ELF file type (expected a relocatable or shared object)"
                )),
            }
        } else if data.starts_with(b"!<arch>\n") || data.starts_with(THIN_MAGIC) {
            self.items.push(Item::Archive {
                path: path.to_path_buf(),
                name,
                data,
                thin: data.starts_with(THIN_MAGIC),
                flags,
            });
        } else if is_bitcode(data) {
            self.error(bitcode_error(&name));
        } else if script::looks_like_script(data) {
            self.add_script(path, &name, data, flags);
        } else {
            self.error(format!("{name}: unknown file type"));
        }
    }

    /// The file the first `-T` script's `STARTUP` names, as the link's first input (GNU ld reads `-T` scripts with
    /// the options, and `STARTUP` names its first input file): as named, else on the search path and the script's
    /// `SEARCH_DIR`s. A script that cannot be read or parsed is left to `add_script` to report.
    fn add_startup(&mut self) {
        let include = includer(&self.config.search_paths);
        for path in &self.config.script_options {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            // Most scripts have neither: parsed again only if one could name a startup file.
            if !text.contains("STARTUP") && !text.contains("INCLUDE") {
                continue;
            }
            let name = path.display().to_string();
            let Ok(commands) = script::parse::parse(&name, &text, &include) else {
                continue;
            };
            let dirs: Vec<PathBuf> = (commands.iter())
                .filter_map(|c| match &c.cmd {
                    script::ast::Command::SearchDir(d) => Some(PathBuf::from(d)),
                    _ => None,
                })
                .collect();
            let Some((at, file)) = commands.into_iter().find_map(|c| match c.cmd {
                script::ast::Command::Startup(f) => Some((c.at, f)),
                _ => None,
            }) else {
                continue;
            };
            let p = PathBuf::from(&file);
            let candidates = std::iter::once(p.clone())
                .chain(self.config.search_paths.iter().map(|d| d.join(&p)))
                .chain(dirs.iter().map(|d| d.join(&p)));
            match candidates.into_iter().find(|c| c.is_file()) {
                Some(c) => self.add_path(&c, InputFlags::default()),
                None => self.error(format!("{at}: cannot find {file}")),
            }
            return;
        }
    }

    /// The files that the `-T` scripts' input section descriptions name without wildcards (`crt0.o(.text)`) and
    /// that no input is named as: GNU ld loads each after the command line's inputs (as named, else on the search
    /// path), named as the script names it so that the description takes its sections, and fails without it.
    fn add_named_by_scripts(&mut self) {
        let Some(sc) = self.script.sections.clone() else {
            return;
        };
        for name in sc.named_files() {
            if self.given.iter().any(|g| g == name) {
                continue;
            }
            let p = PathBuf::from(name);
            let found = std::iter::once(p.clone())
                .chain(self.config.search_paths.iter().map(|d| d.join(&p)))
                .find(|c| c.is_file());
            let Some(path) = found else {
                self.error(format!(
                    "{}: cannot find {name}, which an input section description names",
                    sc.file
                ));
                continue;
            };
            let before = self.items.len();
            self.add_path(&path, InputFlags::default());
            for item in &mut self.items[before..] {
                if let Item::Object(ObjectInput { name: n, .. }) | Item::Archive { name: n, .. } =
                    item
                {
                    *n = name.to_string();
                }
            }
            self.given.push(name.to_string());
        }
    }

    /// Once every input is read: the input files' scripts' `SECTIONS` after the `-T` scripts', and `MEMORY` or
    /// `PHDRS` without any `SECTIONS` refused.
    fn scripts_read(&mut self) {
        let implicit = std::mem::take(&mut self.implicit_sections);
        // Without `-T` the default layout stays, and GNU ld adds the input files' SECTIONS after it (`Place::End`).
        if self.config.script_options.is_empty() && implicit.iter().any(|s| s.described) {
            for s in implicit {
                if !s.memory.is_empty() || !s.phdrs.is_empty() || !s.region_aliases.is_empty() {
                    let e = format!(
                        "{}: MEMORY, PHDRS or REGION_ALIAS in a script named as an input file, without -T, is not \
                         supported",
                        s.file
                    );
                    return self.error(e);
                }
                crate::diag::warn(&format!(
                    "{} contains output sections; did you forget -T?",
                    s.file
                ));
                self.script
                    .inserts
                    .push(std::sync::Arc::new(script::insert::Insertion {
                        file: s.file.clone(),
                        text: s.text.clone(),
                        commands: s.commands.clone(),
                        place: script::insert::Place::End,
                        at: s.file.clone(),
                    }));
            }
            return;
        }
        for s in implicit {
            let implicit = script::input::ScriptSettings {
                sections: Some(s),
                ..Default::default()
            };
            if let Err(e) = self.script.extend(implicit) {
                return self.error(e);
            }
        }
        if let Some(s) = self.script.sections.as_ref().filter(|s| !s.described) {
            let e = format!(
                "{}: MEMORY, PHDRS or REGION_ALIAS without SECTIONS in any script is not supported",
                s.file
            );
            self.error(e);
        }
    }

    fn add_script(&mut self, path: &Path, name: &str, data: Data, flags: InputFlags) {
        if self.script_depth > 16 {
            return self.error(format!("{name}: linker scripts nest too deeply"));
        }
        let text = String::from_utf8_lossy(data);
        let include = includer(&self.config.search_paths);
        let mut parsed = match script::parse_input(name, &text, &include) {
            Ok(p) => p,
            Err(e) => return self.error(e),
        };
        // A `-T` script's `STARTUP` file is loaded already (`add_startup`); one in a script named as an input comes
        // too late for GNU ld, which reads it after the first input's place has passed, and ignores it. Yet a
        // second one anywhere is its error.
        for (at, _) in &parsed.startup {
            self.startups += 1;
            if self.startups > 1 {
                return self.error(format!("{at}: multiple STARTUP files"));
            }
        }
        let option = self.script_depth == 0 && self.config.script_options.iter().any(|p| p == path);
        // GNU ld reads a script named as an input after its default script is in place, and cannot find the
        // section an `INSERT` there names ("not found for insert"), whichever it is.
        if let Some(i) = parsed.settings.inserts.first()
            && !option
        {
            let (how, section) = i.place.words();
            return self.error(format!(
                "{}: INSERT {how} {section} in a script named as an input file: GNU ld does not find the section \
                 (\"{section} not found for insert\"); give the script with -T",
                i.at
            ));
        }
        let mut settings = std::mem::take(&mut parsed.settings);
        for a in &mut settings.assignments {
            a.2 = self.defsyms_before;
        }
        if settings.sections.as_ref().is_some_and(|s| s.described) && option {
            settings.sections_after_defsyms = Some(self.defsyms_before);
        }
        if let Some(sections) = settings.sections.take_if(|_| !option) {
            self.implicit_sections.push(sections);
        }
        if let Err(e) = self.script.extend(settings) {
            return self.error(e);
        }
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
            let mut p =
                crate::args::under_sysroot(Path::new(&input.name), self.config.sysroot.as_deref());
            // GNU ld: with --sysroot, an absolute path in a script that lies under the sysroot is under it too.
            if let Some(root) = &self.config.sysroot
                && p.is_absolute()
                && !input.name.starts_with(['=', '$'])
                && path
                    .canonicalize()
                    .is_ok_and(|s| root.canonicalize().is_ok_and(|r| s.starts_with(r)))
            {
                p = root.join(p.strip_prefix("/").unwrap_or(&p));
            }
            // GNU ld: an absolute path is used as is; a relative one is tried in the current directory, then
            // beside the script, then on the search path (the script's `SEARCH_DIR`s last).
            let candidates = std::iter::once(p.clone())
                .chain(path.parent().map(|d| d.join(&p)))
                .chain(self.config.search_paths.iter().map(|d| d.join(&p)))
                .chain(dirs.iter().map(|d| d.join(&p)));
            match candidates.into_iter().find(|c| c.is_file()) {
                Some(c) if p.is_absolute() => self.add_path(&c, f),
                Some(c) => self.add_searched(&c, f),
                None => self.error(format!("{name}: cannot find {}", input.name)),
            }
        }
        self.script_depth -= 1;
    }
}

/// How a script's `INCLUDE` finds a file: as named, then on the library search path `search` (GNU ld's rule for
/// script files).
fn includer(
    search: &[PathBuf],
) -> impl Fn(&str) -> std::result::Result<(String, String), String> + '_ {
    move |file: &str| {
        let p = Path::new(file);
        let found = std::iter::once(p.to_path_buf())
            .chain(search.iter().map(|d| d.join(p)))
            .find(|c| c.is_file())
            .ok_or_else(|| format!("cannot find {file}"))?;
        let text = std::fs::read_to_string(&found)
            .map_err(|e| format!("cannot read {}: {e}", found.display()))?;
        Ok((found.display().to_string(), text))
    }
}

/// Where `-lNAME` (or `-l:FILE`) is: the first of `extra_dirs` and then the search path holding `libNAME.so`
/// (unless only static libraries are allowed) or else `libNAME.a`.
pub fn find_library(
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
fn archive_items(
    path: &Path,
    name: &str,
    data: Data,
    thin: bool,
    flags: InputFlags,
    reproducing: bool,
) -> Vec<Item> {
    let dir = path.parent().unwrap_or(Path::new(""));
    // An archive whose members are linked on demand is read through its symbol index, if it has one. A thin
    // archive's members are then mapped only when pulled in, except with --reproduce, whose archive lists every
    // file read before resolution.
    if !(flags.whole_archive || thin && reproducing) {
        let thin_dir: Option<&'static Path> =
            thin.then(|| &*Box::leak(dir.to_path_buf().into_boxed_path()));
        match indexed_members(name, data, thin_dir) {
            Ok(Some(items)) => return items,
            Ok(None) => {}
            Err(e) => return vec![Item::Error(format!("{name}: {e}"))],
        }
    }
    let members = match archive_members(data, thin) {
        Ok(m) => m,
        Err(e) => return vec![Item::Error(format!("{name}: {e}"))],
    };
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
                indexed: None,
            }));
        } else if is_bitcode(data) {
            items.push(Item::Error(bitcode_error(&display)));
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
        let header = member_header(data, off)?;
        if header.0 == b"//" {
            long_names = member_body(data, off, header.1)?;
        }
        let (member, next) = member_at(data, off, header, long_names, thin)?;
        out.extend(member);
        off = next;
    }
    Ok(out)
}

/// The header at `off`, checked: its name field (trimmed) and the size it gives.
fn member_header(data: Data, off: usize) -> std::result::Result<(&'static [u8], usize), String> {
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
    Ok((trim_right(&hdr[0..16]), size))
}

/// The long-name table offset in a member name field `/NNN`. GNU ar, putting a thin archive's member whose path
/// fit the field (15 characters and its `/`) into another thin archive, writes the index over the name and keeps
/// that `/` at the field's end (`/0             /`); GNU ld reads the digits and ignores it.
fn long_name_index(idx: &[u8]) -> Option<usize> {
    let digits = idx.iter().take_while(|b| b.is_ascii_digit()).count();
    // The field comes right-trimmed; what may remain after the digits is spaces and that `/`.
    let rest = &idx[digits..];
    let rest = rest
        .iter()
        .position(|&b| b != b' ')
        .map_or(&[][..], |p| &rest[p..]);
    if digits == 0 || !(rest.is_empty() || rest == b"/") {
        return None;
    }
    std::str::from_utf8(&idx[..digits]).ok()?.parse().ok()
}

fn is_table(raw_name: &[u8]) -> bool {
    matches!(raw_name, b"/" | b"//" | b"/SYM64/" | b"__.SYMDEF")
}

/// The `stored` bytes after the header at `off`, checked to lie in the archive.
fn member_body(data: Data, off: usize, stored: usize) -> std::result::Result<Data, String> {
    data.get(off + 60..off + 60 + stored)
        .ok_or_else(|| format!("truncated archive: member at offset {off} claims {stored} bytes"))
}

/// Where the header after the one at `off`, whose member stores `stored` bytes, is (members are 2-byte aligned).
fn next_header(off: usize, stored: usize) -> usize {
    off + 60 + stored + (stored & 1)
}

/// The member whose header, read by `member_header`, is at `off` (`None` for the symbol index and the name
/// table) and the offset of the next header.
fn member_at(
    data: Data,
    off: usize,
    (raw_name, size): (&'static [u8], usize),
    long_names: Data,
    thin: bool,
) -> std::result::Result<(Option<Member>, usize), String> {
    let table = is_table(raw_name);
    // In a thin archive only the tables are stored inline; members live in their own files.
    let stored = if thin && !table { 0 } else { size };
    let body = member_body(data, off, stored)?;
    let next = next_header(off, stored);
    if table {
        return Ok((None, next));
    }
    let name = if let Some(idx) = raw_name.strip_prefix(b"/") {
        let i = long_name_index(idx)
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
        return Ok((
            Some(Member {
                name: trim_nul(&body[..n]),
                data: Some(&body[n..]),
            }),
            next,
        ));
    } else {
        raw_name.strip_suffix(b"/").unwrap_or(raw_name)
    };
    Ok((
        Some(Member {
            name,
            data: if thin { None } else { Some(body) },
        }),
        next,
    ))
}

/// The members of an archive that its GNU symbol index (`/` or `/SYM64/`, written by `ar` and `ranlib`)
/// names, in archive order, each with the names the index says it defines: `None` for an archive without one.
/// Members that define nothing are left out (only `--whole-archive` could link them, and that takes every member).
///
/// The index is trusted as GNU ld trusts it: a member is pulled in for the names listed for it, and its own symbol
/// table is read only then.
fn indexed_members(
    name: &str,
    data: Data,
    thin_dir: Option<&'static Path>,
) -> std::result::Result<Option<Vec<Item>>, String> {
    let first = 8usize;
    if data.len() <= first {
        return Ok(None);
    }
    let (raw_name, size) = member_header(data, first)?;
    let wide = match raw_name {
        b"/" => false,
        b"/SYM64/" => true,
        _ => return Ok(None),
    };
    let index = member_body(data, first, size)?;
    let next = next_header(first, size);
    // The long-name table, which `ar` writes right after the index, if it is there.
    let long_names = match member_header(data, next) {
        Ok((b"//", len)) => member_body(data, next, len)?,
        Err(e) if next + 60 <= data.len() => return Err(e),
        _ => &[],
    };
    let w = if wide { 8 } else { 4 };
    let word = |at: usize| -> Option<usize> {
        let b = index.get(at..at + w)?;
        Some(if wide {
            u64::from_be_bytes(b.try_into().ok()?) as usize
        } else {
            u32::from_be_bytes(b.try_into().ok()?) as usize
        })
    };
    let truncated = || "truncated archive symbol index".to_string();
    let count = word(0).ok_or_else(truncated)?;
    let strings_at = count
        .checked_mul(w)
        .and_then(|n| n.checked_add(w))
        .filter(|&n| n <= index.len())
        .ok_or_else(truncated)?;
    // (member header offset, position in the index, name).
    let mut entries: Vec<(usize, u32, &'static [u8])> = Vec::with_capacity(count);
    let mut strings = &index[strings_at..];
    for k in 0..count {
        let off = word(w + k * w).ok_or_else(truncated)?;
        // One pass finds the end and a version: a default version (`name@@VERSION`) binds `name`, as `parse`
        // names an object's defined globals; a non-default one keeps its full name.
        let stop = memchr::memchr2(0, b'@', strings).ok_or_else(truncated)?;
        let (end, sym) = if strings[stop] == 0 {
            (stop, &strings[..stop])
        } else {
            let end = stop + memchr::memchr(0, &strings[stop..]).ok_or_else(truncated)?;
            let default = strings.get(stop + 1) == Some(&b'@');
            (end, &strings[..if default { stop } else { end }])
        };
        strings = &strings[end + 1..];
        if off < next || off >= data.len() {
            return Err(format!(
                "the symbol index places {} at offset {off}, outside the archive's members",
                String::from_utf8_lossy(sym)
            ));
        }
        entries.push((off, k as u32, sym));
    }
    // `ar` lists a member's names together, members in archive order; anything else is sorted into that order.
    if !entries.is_sorted_by_key(|e| e.0) {
        entries.sort_unstable_by_key(|e| (e.0, e.1));
    }
    let archive_name: &'static str = Box::leak(name.to_owned().into_boxed_str());
    let mut items = Vec::new();
    for group in entries.chunk_by(|a, b| a.0 == b.0) {
        let defs = group.iter().map(|&(_, _, n)| Name::new(n)).collect();
        let member = IndexedMember {
            archive: data,
            archive_name,
            header: group[0].0,
            long_names,
            thin_dir,
        };
        items.push(Item::Object(ObjectInput {
            name: String::new(),
            data: &[],
            lazy: true,
            indexed: Some((member, defs)),
        }));
    }
    Ok(Some(items))
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

    #[test]
    fn long_name_index_takes_gnu_ars_kept_terminator() {
        assert_eq!(long_name_index(b"3872"), Some(3872));
        assert_eq!(long_name_index(b"0             /"), Some(0));
        assert_eq!(long_name_index(b""), None);
        assert_eq!(long_name_index(b"12x"), None);
        assert_eq!(long_name_index(b"12:40"), None);
    }

    #[test]
    fn inputs_read_the_same_after_their_pages_are_released() {
        let dir = std::env::temp_dir().join(format!("rivet-release-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.bin");
        // Over RELEASE_MIN, and over one 16 MiB piece, so that a piece boundary falls inside the file.
        let bytes: Vec<u8> = (0..(33u32 << 20)).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let data = map_file(&path).unwrap();
        assert_eq!(data, &bytes[..]);
        release_input_pages();
        assert_eq!(
            data,
            &bytes[..],
            "an input reads differently after release_input_pages"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

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

    /// An archive with a GNU symbol index (`/`, or `/SYM64/` when `wide`) listing `syms` as (name, member
    /// number), a long-name table, and `members` as (name, body).
    fn indexed_archive(wide: bool, syms: &[(&str, usize)], members: &[(&str, &[u8])]) -> Data {
        let w = if wide { 8 } else { 4 };
        let strings: Vec<u8> = syms
            .iter()
            .flat_map(|(n, _)| [n.as_bytes(), b"\0"].concat())
            .collect();
        let index_len = w + w * syms.len() + strings.len();
        let long: Vec<u8> = members
            .iter()
            .flat_map(|(n, _)| format!("{n}/\n").into_bytes())
            .collect();
        let mut at = 8 + 60 + index_len + (index_len & 1) + 60 + long.len() + (long.len() & 1);
        let mut headers = Vec::new();
        let mut long_at = 0;
        for (n, body) in members {
            headers.push((at, format!("/{long_at}")));
            long_at += n.len() + 2;
            at += 60 + body.len() + (body.len() & 1);
        }
        let be = |v: usize| -> Vec<u8> {
            if wide {
                (v as u64).to_be_bytes().to_vec()
            } else {
                (v as u32).to_be_bytes().to_vec()
            }
        };
        let mut index = be(syms.len());
        for &(_, m) in syms {
            index.extend(be(headers[m].0));
        }
        index.extend(&strings);
        let mut a = b"!<arch>\n".to_vec();
        a.extend(member(if wide { "/SYM64/" } else { "/" }, &index));
        a.extend(member("//", &long));
        for ((_, body), (_, hname)) in members.iter().zip(&headers) {
            a.extend(member(hname, body));
        }
        Box::leak(a.into_boxed_slice())
    }

    fn indexed(items: Vec<Item>) -> Vec<(String, Data, Vec<&'static [u8]>)> {
        items
            .into_iter()
            .map(|i| match i {
                Item::Object(ObjectInput {
                    indexed: Some((m, defs)),
                    lazy: true,
                    ..
                }) => {
                    let (name, data) = m.read().unwrap();
                    (name, data, defs.iter().map(|d| d.bytes).collect())
                }
                _ => panic!("expected an indexed member"),
            })
            .collect()
    }

    #[test]
    fn symbol_index_names_members_and_their_definitions() {
        for wide in [false, true] {
            let a = indexed_archive(
                wide,
                // Out of member order, a default version (binds `v`) and a non-default one (kept whole).
                &[("b1", 1), ("a1", 0), ("v@@V2", 1), ("a2", 0), ("old@V1", 1)],
                &[
                    ("first_member_long_name.o", b"\x7fELF-a"),
                    ("m2.o", b"\x7fELF-bb"),
                ],
            );
            let Ok(Some(items)) = indexed_members("lib.a", a, None) else {
                panic!("no symbol index found")
            };
            let got = indexed(items);
            assert_eq!(got.len(), 2);
            assert_eq!(got[0].0, "lib.a(first_member_long_name.o)");
            assert_eq!(got[0].1, b"\x7fELF-a");
            assert_eq!(got[0].2, [&b"a1"[..], b"a2"]);
            assert_eq!(got[1].0, "lib.a(m2.o)");
            assert_eq!(got[1].1, b"\x7fELF-bb");
            assert_eq!(got[1].2, [&b"b1"[..], b"v", b"old@V1"]);
        }
    }

    #[test]
    fn archive_without_index_is_walked() {
        let mut a = b"!<arch>\n".to_vec();
        a.extend(member("x.o/", b"\x7fELF"));
        let a: &'static [u8] = Box::leak(a.into_boxed_slice());
        assert!(matches!(indexed_members("lib.a", a, None), Ok(None)));
    }

    #[test]
    fn bad_symbol_index_is_an_error() {
        let a = indexed_archive(false, &[("f", 0)], &[("m.o", b"\x7fELF")]);
        // The count claims more entries than the index holds.
        let mut b = a.to_vec();
        b[8 + 60..8 + 64].copy_from_slice(&1000u32.to_be_bytes());
        let b: &'static [u8] = Box::leak(b.into_boxed_slice());
        assert!(matches!(indexed_members("lib.a", b, None), Err(e) if e.contains("truncated")));
        // An offset past the end of the archive.
        let mut c = a.to_vec();
        c[8 + 64..8 + 68].copy_from_slice(&(a.len() as u32 + 10).to_be_bytes());
        let c: &'static [u8] = Box::leak(c.into_boxed_slice());
        assert!(matches!(indexed_members("lib.a", c, None), Err(e) if e.contains("outside")));
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
