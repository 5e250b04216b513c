//! rivet: a fast ELF linker. `main` parses the command line, runs the pipeline of DESIGN.md and maps errors to
//! exit status 1.

mod arch;
mod args;
mod diag;
mod elf;
mod gc;
mod input;
mod intern;
mod layout;
mod parse;
mod resolve;
mod scan;
mod script;
mod symbols;
mod write;

use arch::Arch;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
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
        Err(e) => {
            eprintln!("rivet: error: {e}");
            return ExitCode::from(1);
        }
    };
    if config.print_version {
        println!("{}", args::version_line());
    }
    for w in &config.warnings {
        eprintln!("rivet: warning: {w}");
    }
    let threads = config
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if let Err(e) = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
    {
        eprintln!("rivet: error: cannot start worker threads: {e}");
        return ExitCode::from(1);
    }
    match link::<arch::x86_64::X86_64>(&config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(errors) => {
            for e in &errors.0 {
                eprintln!("rivet: error: {e}");
            }
            ExitCode::from(1)
        }
    }
}

/// Phase timings for `--print-timing`.
struct Timer {
    enabled: bool,
    start: Instant,
    last: Instant,
}

impl Timer {
    fn phase(&mut self, name: &str) {
        if self.enabled {
            let now = Instant::now();
            eprintln!(
                "rivet: {:>8.2} ms  {name}",
                (now - self.last).as_secs_f64() * 1e3
            );
            self.last = now;
        }
    }
}

fn link<A: Arch>(config: &args::Config) -> diag::Result<()> {
    let now = Instant::now();
    let mut t = Timer {
        enabled: config.print_timing,
        start: now,
        last: now,
    };
    let inputs = input::load(config)?;
    t.phase("load");
    let parsed = parse::parse(inputs)?;
    t.phase("parse");
    let resolved = resolve::resolve(config, parsed)?;
    t.phase("resolve");
    let live = gc::gc(config, &resolved);
    t.phase("gc");
    let space = symbols::SymbolSpace::new(&resolved);
    let scanned = scan::scan::<A>(config, &resolved, &space, &live)?;
    t.phase("scan");
    let lay = layout::layout::<A>(config, &resolved, &space, &live, &scanned)?;
    t.phase("layout");
    write::write::<A>(config, &resolved, &space, &live, &lay)?;
    t.phase("write");
    if t.enabled {
        eprintln!(
            "rivet: {:>8.2} ms  total",
            t.start.elapsed().as_secs_f64() * 1e3
        );
    }
    // Leave without dropping the big structures (DESIGN.md, rule 5).
    std::mem::forget((resolved, live, space, scanned, lay));
    Ok(())
}
