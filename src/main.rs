//! rivet: a fast ELF linker. `main` parses the command line, runs the pipeline of ARCHITECTURE.md and maps errors to
//! exit status 1.

// A cargo-fuzz build (`--cfg fuzzing`, fuzz/) compiles this file as a library whose only caller is `fuzzing`.
#![cfg_attr(fuzzing, allow(dead_code, unused_imports))]

mod alloc;
mod arch;
mod args;
mod cleanup;
mod comdat;
mod compress;
mod depfile;
mod diag;
mod elf;
mod elf32;
mod exec_stack;
mod expr;
mod fork;
#[cfg(fuzzing)]
pub mod fuzzing;
mod gc;
mod gdb_index;
mod glob;
mod icf;
mod index;
mod input;
mod intern;
mod layout;
mod link_warnings;
mod load_order;
mod map;
mod merge;
mod names;
mod output_file;
mod par;
mod parse;
mod reloc;
mod relocatable;
mod reproduce;
mod resolve;
mod scan;
mod script;
mod srcloc;
mod symbols;
mod synthetic;
mod timing;
mod version;
mod write;

use arch::Arch;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: alloc::Allocator = alloc::Allocator;

fn main() -> ExitCode {
    // glibc grows each thread's malloc arena by what the request needs, one mprotect(2) at a time, and every one
    // takes the address-space lock that the other threads' page faults need: thousands of calls on a large link. A
    // 64 MiB pad makes them grow in large steps, a few calls in all; the padding is address space, not memory,
    // until touched. The same setting as GLIBC_TUNABLES=glibc.malloc.top_pad.
    // SAFETY: mallopt only adjusts allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
    // An output over the file size limit (`ulimit -f`) is an error ("File too large") from the call that would
    // pass it, not a kill by SIGXFSZ that leaves the temporary file behind (a fuzzer finding: a script's
    // `. = . + 0x7fffffffffff`).
    // SAFETY: sets a signal's disposition, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, path] = &argv[..]
        && flag == output_file::UNLINK_HELPER_FLAG
    {
        let _ = std::fs::remove_file(path);
        return ExitCode::SUCCESS;
    }
    let config = match args::parse(&argv) {
        Ok(args::Action::Link(c)) => c,
        Ok(args::Action::Version) => {
            println!("{}", args::version_line());
            return ExitCode::SUCCESS;
        }
        Ok(args::Action::Help) => {
            print!("{}", args::help_text());
            return ExitCode::SUCCESS;
        }
        Ok(args::Action::Emulations) => {
            println!("{}", args::version_line());
            print_emulations();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("rivet: error: {e}");
            return ExitCode::from(1);
        }
    };
    diag::configure(config.no_warnings, config.demangle);
    cleanup::install_panic_hook();
    if config.print_version {
        println!("{}", args::version_line());
        if config.print_emulations {
            print_emulations();
        }
    }
    let warn_word = if config.fatal_warnings {
        "error"
    } else {
        "warning"
    };
    let warnings: &[String] = if config.no_warnings {
        &[]
    } else {
        &config.warnings
    };
    for w in warnings {
        eprintln!("rivet: {warn_word}: {w}");
    }
    if config.fatal_warnings && !warnings.is_empty() {
        return ExitCode::from(1);
    }
    // Before any thread exists.
    let notifier = if config.fork {
        match fork::split() {
            fork::Side::Parent(code) => return code,
            fork::Side::Child(n) => {
                output_file::DEFER_UNLINK.store(true, std::sync::atomic::Ordering::Relaxed);
                Some(n)
            }
            fork::Side::Unforked => None,
        }
    } else {
        None
    };
    // Unforked, this process's exit is on the caller's path.
    let code = run(&config, notifier.is_none());
    if let Some(n) = notifier {
        n.done(code);
        output_file::remove_deferred();
    }
    ExitCode::from(code)
}

/// GNU ld's `-V` list.
fn print_emulations() {
    println!("  Supported emulations:");
    for e in args::EMULATIONS {
        println!("   {e}");
    }
}

/// Starts the worker threads and links; returns the exit status. `exit_waited`: the caller waits for this
/// process to exit (no `--fork` child links for it).
fn run(config: &args::Config, exit_waited: bool) -> u8 {
    let threads = config.threads.unwrap_or_else(|| default_threads(config));
    // In the process that links (after the fork), before its threads start.
    alloc::init();
    let cpus = worker_cpus(threads);
    let mut builder = rayon::ThreadPoolBuilder::new();
    let cpus_available = std::thread::available_parallelism().map_or(1, |n| n.get());
    if linking_thread_joins_pool(threads, cpus_available) {
        builder = builder.use_current_thread();
    }
    if let Err(e) = builder
        .num_threads(threads)
        .start_handler(move |i| {
            alloc::advise_thread_heap();
            if let Some(&cpu) = cpus.get(i) {
                pin_to_cpu(cpu);
            }
        })
        .build_global()
    {
        eprintln!("rivet: error: cannot start worker threads: {e}");
        return 1;
    }
    let start = std::time::Instant::now();
    let result = if links_i386(config) {
        link::<arch::i386::I386>(config, exit_waited)
    } else {
        link::<arch::x86_64::X86_64>(config, exit_waited)
    };
    if config.print_memory_usage && result.is_ok() {
        // GNU ld's table; its rows are the linker script's MEMORY regions, which rivet does not read yet.
        println!("Memory region         Used Size  Region Size  %age Used");
    }
    if config.stats {
        // SAFETY: getrusage fills the plain struct it is given.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        eprintln!(
            "rivet: total time in link: {:.6}",
            start.elapsed().as_secs_f64()
        );
        eprintln!("rivet: peak resident memory: {} KiB", usage.ru_maxrss);
    }
    match result {
        Ok(()) => 0,
        Err(errors) => {
            // --error-limit (default 20, 0 = no limit), as lld prints them.
            let limit = match config.error_limit {
                0 => usize::MAX,
                n => n as usize,
            };
            for e in errors.0.iter().take(limit) {
                eprintln!("rivet: error: {e}");
            }
            if errors.0.len() > limit {
                eprintln!(
                    "rivet: error: too many errors emitted, stopping now (use --error-limit=0 to see all errors)"
                );
            }
            1
        }
    }
}

/// Whether the linking thread is one of the pool's `threads` workers (rayon's `use_current_thread`) rather than a
/// thread outside it that hands each parallel pass to the pool and sleeps until the pass is done.
///
/// Inside the pool, a pass starts on this thread's own queue, idle workers steal from it, and this thread works
/// on the pass and waits for its end as a worker, instead of a hand-over to a woken worker and a wake-up of its
/// own at the end of each of a link's ~90 passes. On a 16-core machine (with the small passes on the calling
/// thread, `par::worth_parallel`) that was faster at every thread count, and took less CPU time.
///
/// On the 2-CPU development VM it was the other way round at 2 and 3 threads, even before the passes got finer
/// tasks. The cause is not established: there a worker that has gone idle soon sleeps (after rayon's 32 yields),
/// and a sleeping one is slow to wake. So a machine of two CPUs or fewer keeps the linking thread outside the
/// pool. With one thread it is always the pool's only worker, so that a parallel pass runs inline, which was
/// faster there too. (Starting the pool's threads as a tree, each starting two, instead of all from this thread
/// was slower on the VM, and was dropped.)
fn linking_thread_joins_pool(threads: usize, cpus_available: usize) -> bool {
    threads == 1 || cpus_available > 2
}

/// Input bytes that make a second thread (and each further one) worth starting when `--threads` is not given.
///
/// A thread costs some of a link's wall time: starting it, and handing each parallel pass to it and back. A small
/// link does not earn that back: on the 2-core development VM a hello world, and a few megabytes of objects with
/// debug info, linked faster on one thread than on two, and c-gc (sqlite) only a little faster on two.
const BYTES_PER_THREAD: u64 = 6 << 20;

/// What each input counts for at least: a link of thousands of tiny objects has per-file work the bytes do not
/// show.
const MIN_FILE_BYTES: u64 = 16 << 10;

/// The default thread count: one per `BYTES_PER_THREAD` of the files the command line names (libraries as `-l`
/// finds them; each file once, and at least `MIN_FILE_BYTES`), up to the CPUs available. The files are only looked
/// at (`stat`), until there are enough bytes for every CPU. A thin archive counts as enough for every CPU: its
/// members are elsewhere, and large links are where thin archives are used.
fn default_threads(config: &args::Config) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let enough = cpus as u64 * BYTES_PER_THREAD;
    let mut total = 0u64;
    // Each file once: drivers name some libraries twice (gcc: -lgcc before and after -lc).
    let mut seen = std::collections::HashSet::new();
    for arg in &config.inputs {
        let path = match arg {
            args::InputArg::File { path, .. } => Some(path.clone()),
            args::InputArg::Library { name, flags } => {
                input::find_library(config, name, *flags, &[])
            }
            args::InputArg::GroupStart | args::InputArg::GroupEnd => None,
        };
        let Some(path) = path else { continue };
        if !seen.insert(path.clone()) {
            continue;
        }
        total += std::fs::metadata(&path)
            .map_or(0, |m| m.len())
            .max(MIN_FILE_BYTES);
        if total >= enough || is_thin_archive(&path) {
            return cpus;
        }
    }
    total.div_ceil(BYTES_PER_THREAD).clamp(1, cpus as u64) as usize
}

/// Whether `path` names a `.a` file that starts with the thin archive magic.
fn is_thin_archive(path: &std::path::Path) -> bool {
    use std::io::Read;
    if path.extension().is_none_or(|e| e != "a") {
        return false;
    }
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .is_ok_and(|mut f| f.read_exact(&mut magic).is_ok() && &magic == input::THIN_MAGIC)
}

/// The CPU each worker thread is pinned to: one per CPU this process may run on, in order, when there are exactly
/// as many workers as such CPUs (the default thread count of a large link); none otherwise (fewer workers pinned
/// to the first CPUs would pile concurrent links onto those). Linux only; nothing where the set cannot be read.
///
/// Why: a parallel pass that starts after the link's thread ran a serial stretch often ran on one worker while
/// the other CPU idled (apparently the woken worker queued on a busy CPU until the kernel balanced the load; with
/// each worker held to its own CPU, that cannot happen). A probe with rayon alone on the 2-core development VM,
/// short tasks started right after the calling thread worked alone for a while, showed the same: every task ran
/// on one worker, while with the workers pinned the tasks split evenly and finished in about half the time.
/// rivet's passes are just that: serial bookkeeping, then a parallel walk. Pinning made every workload faster,
/// the small ones the most.
fn worker_cpus(threads: usize) -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the kernel for this process.
        let cpus: Vec<usize> = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        };
        if threads > 1 && cpus.len() == threads {
            return cpus;
        }
    }
    let _ = threads;
    Vec::new()
}

/// Pins the calling thread to `cpu` (best effort: a refusal leaves it where the kernel puts it).
fn pin_to_cpu(cpu: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: a set holding one CPU the process may run on, applied to the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// Whether the link is i386's: `-m elf_i386`, or without `-m` the first file named on the command line that is not
/// a linker script being an ELF32 i386 object.
fn links_i386(config: &args::Config) -> bool {
    use arch::Arch;
    if let Some(i386) = config.elf_i386 {
        return i386;
    }
    // The first input that is not a text script (`-T`, or one named as an input), which says nothing of the
    // target: an ELF32 i386 object decides for i386, anything else (an archive, an x86-64 object) against.
    let decides = |p: &std::path::PathBuf| -> Option<bool> {
        let mut head = [0u8; 20];
        let n = std::fs::File::open(p)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .unwrap_or(0);
        if n > 0 && script::input::looks_like_script(&head[..n]) {
            return None;
        }
        Some(
            n == head.len()
                && head[..4] == *b"\x7fELF"
                && head[4] == 1
                && u16::from_le_bytes([head[18], head[19]]) == arch::i386::I386::E_MACHINE,
        )
    };
    (config.inputs.iter())
        .find_map(|i| match i {
            args::InputArg::File { path, .. } => decides(path),
            _ => None,
        })
        .unwrap_or(false)
}

/// What an ELF32 link refuses before reading its inputs: it makes static executables and partial links only.
fn refuse_elf32_options(config: &args::Config) -> diag::Result<()> {
    if config.gdb_index {
        return Err(diag::Errors::one(
            "--gdb-index is not supported for i386 (elf_i386)",
        ));
    }
    let option = if config.relocatable {
        return Ok(());
    } else if config.kind == args::OutputKind::Pie {
        "-pie"
    } else if config.kind == args::OutputKind::Shared {
        "-shared"
    } else {
        return Ok(());
    };
    Err(diag::Errors::one(format!(
        "{option} is not supported for i386 (elf_i386): rivet links static i386 executables and partial links (-r) only"
    )))
}

/// Links. `release_inputs`: drop the inputs' page-table entries at the end on all threads
/// (`input::release_input_pages`) instead of in the exit, for a process whose exit the caller waits for.
fn link<A: Arch>(config: &args::Config, release_inputs: bool) -> diag::Result<()> {
    if config.print_timing || config.time_trace.is_some() {
        timing::enable();
    }
    let total = timing::span("link");
    elf::set_target(A::E_MACHINE, A::NAME);
    if A::ELF32 {
        refuse_elf32_options(config)?;
        elf::set_elf32(A::rel_addend);
    }
    // `--oformat` names the link's own ELF target (or `binary`): rivet does not convert between them.
    if let Some(f) =
        (config.oformat.as_deref()).filter(|f| *f != "binary" && !f.starts_with(A::BFD_TARGET))
    {
        return Err(diag::Errors::one(format!(
            "--oformat: unsupported output format '{f}' (this link's objects make {}, or give binary)",
            A::BFD_TARGET
        )));
    }
    let inputs = {
        let _t = timing::span("load inputs");
        input::load(config)?
    };
    // The scripts read may act like options (`ENTRY`, `VERSION`, assignments): from here on the configuration
    // includes them.
    // An ordering file without statements changes nothing: the default layout stays the rules'.
    let ordering = (config.section_ordering_file.as_deref())
        .map(script::ordering::read)
        .transpose()
        .map_err(diag::Errors::one)?
        .filter(|o| !o.outputs.is_empty());
    let with_scripts;
    let config = if inputs.script.is_empty() && ordering.is_none() {
        config
    } else {
        // `INSERT` and `--section-ordering-file`: the scripts' SECTIONS spliced into the layout they go into.
        let spliced;
        let settings = match inputs.script.inserts.is_empty() && ordering.is_none() {
            true => &inputs.script,
            false => {
                spliced = layout::default_script::apply_inserts::<A>(
                    config,
                    &inputs.script,
                    ordering.as_ref(),
                )
                .map_err(diag::Errors::one)?;
                &spliced
            }
        };
        let mut c = config.with_scripts(settings);
        if let (Some(by), Some(sc)) = (config.sort_section, &c.sections) {
            let sorted = sc.sorting_sections(by).map_err(diag::Errors::one)?;
            c.sections = Some(std::sync::Arc::new(sorted));
        }
        with_scripts = c;
        &with_scripts
    };
    if config.orphan_handling == args::OrphanHandling::Discard && config.sections.is_none() {
        // GNU ld discards what its default script does not name, which rivet's built-in rules cannot tell.
        return Err(diag::Errors::one(
            "--orphan-handling=discard without a SECTIONS script is not supported",
        ));
    }
    if let Some(s) = inputs
        .shared
        .first()
        .filter(|_| !config.paged() && !config.relocatable)
    {
        // GNU ld's error: -N and -n link nothing dynamically.
        return Err(diag::Errors::one(format!(
            "attempted static link of dynamic object '{}' ({} makes a static executable)",
            s.name,
            config.magic.option()
        )));
    }
    if let Some(s) = inputs.shared.first().filter(|_| A::ELF32) {
        return Err(diag::Errors::one(format!(
            "{}: shared objects are not supported for i386 (elf_i386): rivet links static i386 executables and partial links (-r) only",
            s.name
        )));
    }
    if let Some(path) = &config.reproduce {
        reproduce::write(path, config, &inputs.files)?;
    }
    let read_files: Vec<std::path::PathBuf> = match config.dependency_file {
        Some(_) => inputs.files.iter().map(|(p, _)| p.clone()).collect(),
        None => Vec::new(),
    };
    let parsed = {
        let _t = timing::span("parse");
        parse::parse(inputs)?
    };
    let mut resolved = {
        let _t = timing::span("resolve symbols");
        resolve::resolve(config, parsed)?
    };
    {
        let _t = timing::span("link warnings");
        link_warnings::report(&resolved);
    }
    if config.trace {
        // -t: every file the link uses (archive members that were pulled in, shared objects kept).
        for (f, o) in resolved.objects.iter().enumerate() {
            if resolved.object_live[f] {
                println!("{}", o.name);
            }
        }
        for (d, s) in resolved.shared.iter().enumerate() {
            if resolved.shared_needed[d] {
                println!("{}", s.soname);
            }
        }
    }
    if let Some(path) = &config.why_extract {
        map::write_why_extract(path, &resolved)?;
    }
    if !config.trace_symbols.is_empty() {
        map::trace_symbols(config, &resolved);
    }
    if config.cref && config.map.is_none() {
        print!("{}", map::cref(&resolved));
    }
    if config.relocatable {
        let _t = timing::span("write relocatable output");
        relocatable::link::<A>(config, &resolved)?;
        drop(_t);
        finish_link(config, &read_files, total, release_inputs)?;
        leave(resolved);
        return Ok(());
    }
    let mut live = {
        let _t = timing::span("gc sections");
        gc::gc(config, &resolved)?
    };
    if let Some(needed) = live.shared_needed.take() {
        resolved.drop_unneeded_shared(needed);
    }
    if config.icf != args::Icf::None {
        let _t = timing::span("icf");
        icf::fold(config, &resolved, &mut live)?;
    }
    let (space, scanned) = {
        let _t = timing::span("scan relocations");
        let mut space = {
            let _t = timing::span("symbol properties");
            symbols::SymbolSpace::new(&resolved, config)
        };
        // The scan settles the undefined weak symbols' property bits (`scan::weak`).
        let scanned = scan::scan::<A>(config, &resolved, &mut space, &live)?;
        (space, scanned)
    };
    let mut lay = {
        let _t = timing::span("layout");
        layout::layout::<A>(config, &resolved, &space, &live, &scanned)?
    };
    if A::ELF32 {
        write::elf32::refuse(&lay).map_err(diag::Errors::one)?;
    }
    if config.fatal_warnings && diag::warnings() > 0 {
        return Err(diag::Errors::one(format!(
            "{} warning(s) treated as errors (--fatal-warnings); no output written",
            diag::warnings()
        )));
    }
    // `--gdb-index`: made once the addresses are known, before the map, which lists its size.
    let gdb_index = {
        let _t = timing::span("gdb index");
        gdb_index::build(&resolved, &live, &mut lay)?
    };
    // The map comes from the layout alone; written first, a map that cannot be written fails the link before
    // the output is replaced (a build tool would otherwise take the new output as up to date).
    if let Some(path) = &config.map {
        let _t = timing::span("link map");
        map::write_map(path, config, &resolved, &live, &lay)?;
    }
    {
        let _t = timing::span("write output");
        let index = gdb_index
            .as_ref()
            .map(|i| move |out: &mut [u8]| i.write(out));
        let index = index.as_ref().map(|w| w as &write::GdbIndexWriter);
        write::write::<A>(config, &resolved, &space, &live, &mut lay, index)?;
    }
    finish_link(config, &read_files, total, release_inputs)?;
    // Leave without dropping the big structures (ARCHITECTURE.md, performance rule 5).
    leave((resolved, live, space, scanned, lay));
    Ok(())
}

/// Ends the life of a link's big structures without dropping them: the process exits next (ARCHITECTURE.md,
/// performance rule 5). A fuzzing build links many times in one process, and drops them.
fn leave<T>(structures: T) {
    if cfg!(fuzzing) {
        drop(structures);
    } else {
        std::mem::forget(structures);
    }
}

/// What follows the output: the dependency file, the inputs' pages released (`link`'s `release_inputs`), the
/// timing reports. `total` is the whole link's timing span.
fn finish_link(
    config: &args::Config,
    read_files: &[std::path::PathBuf],
    total: timing::Span,
    release_inputs: bool,
) -> diag::Result<()> {
    if let Some(path) = &config.dependency_file {
        depfile::write(path, config, read_files)?;
    }
    if release_inputs && rayon::current_num_threads() > 1 {
        let _t = timing::span("release input pages");
        input::release_input_pages();
    }
    drop(total);
    if config.print_timing {
        eprint!("{}", timing::report());
    }
    if let Some(path) = &config.time_trace {
        std::fs::write(path, timing::chrome_trace()).map_err(|e| {
            diag::Errors::one(format!("cannot write time trace {}: {e}", path.display()))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Workers are pinned only when there is one per CPU the process may run on, each to its own CPU.
    #[cfg(target_os = "linux")]
    #[test]
    fn workers_pinned_one_per_allowed_cpu() {
        let allowed = worker_cpus(0);
        assert!(allowed.is_empty(), "no workers, nothing pinned");
        assert!(worker_cpus(1).is_empty(), "one worker is never pinned");
        // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the kernel for this process.
        let n = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            libc::CPU_COUNT(&set) as usize
        };
        let cpus = worker_cpus(n);
        if n > 1 {
            assert_eq!(cpus.len(), n);
            assert!(cpus.windows(2).all(|w| w[0] < w[1]), "{cpus:?}");
        } else {
            assert!(cpus.is_empty());
        }
        assert!(worker_cpus(n + 1).is_empty(), "more workers than CPUs");
    }

    /// One thread per `BYTES_PER_THREAD` of the named inputs (libraries found on the search path too), up to the
    /// CPUs; a thin archive asks for them all.
    #[test]
    fn default_threads_follow_input_size() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let dir = std::env::temp_dir().join(format!("rivet-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, len: u64, head: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, head).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_len(len)
                .unwrap();
            p
        };
        let flags = args::InputFlags::default();
        let small = file("small.o", 100_000, b"\x7fELF");
        file("libbig.a", 2 * BYTES_PER_THREAD + 1, b"!<arch>\n");
        let thin = file("thin.a", 100, input::THIN_MAGIC);
        let config = |inputs: Vec<args::InputArg>| args::Config {
            inputs,
            search_paths: vec![dir.clone()],
            ..Default::default()
        };
        let path = |p: &std::path::PathBuf| args::InputArg::File {
            path: p.clone(),
            flags,
        };
        assert_eq!(default_threads(&config(vec![path(&small)])), 1);
        assert_eq!(default_threads(&config(vec![])), 1);
        let lib = args::InputArg::Library {
            name: "big".into(),
            flags,
        };
        assert_eq!(
            default_threads(&config(vec![path(&small), lib])),
            cpus.min(3)
        );
        assert_eq!(
            default_threads(&config(vec![path(&small), path(&thin)])),
            cpus
        );
        // Thousands of tiny objects count by their number.
        let tiny = file("tiny.o", 100, b"\x7fELF");
        let many: Vec<args::InputArg> = (0..2 * (BYTES_PER_THREAD / MIN_FILE_BYTES))
            .map(|i| {
                let p = dir.join(format!("tiny{i}.o"));
                std::fs::hard_link(&tiny, &p).unwrap();
                path(&p)
            })
            .collect();
        // A file named twice counts once.
        let most = file("most.a", BYTES_PER_THREAD - 1000, b"!<arch>\n");
        assert_eq!(default_threads(&config(vec![path(&most), path(&most)])), 1);
        assert_eq!(default_threads(&config(many)), cpus.min(2));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
