//! The in-process entry of the cargo-fuzz targets (`fuzz/`, README.md "Fuzzing"). Compiled only with `--cfg
//! fuzzing`, which cargo-fuzz sets: the linker binary has none of it.
//!
//! A target links thousands of times in one process, so what a link leaves for the exit to clean up (the big
//! structures, which `leave` drops in this build, and the input files' mappings) is released after each one.

use crate::arch::x86_64::X86_64;

/// Links as `rivet ARGS` would (without `--fork`, whatever the arguments say), on one worker thread; the errors
/// as the linker would print them, one per line.
pub fn link_args(args: &[String]) -> Result<(), String> {
    static POOL: std::sync::Once = std::sync::Once::new();
    // One worker: a libFuzzer run is repeatable only if each input links the same way every time.
    POOL.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build_global();
    });
    let config = match crate::args::parse(args)? {
        crate::args::Action::Link(c) => c,
        _ => return Ok(()),
    };
    crate::diag::configure(config.no_warnings, config.demangle);
    let r = crate::link::<X86_64>(&config, false).map_err(|e| e.0.join("\n"));
    crate::input::unmap_inputs();
    r
}
