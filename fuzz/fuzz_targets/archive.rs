//! An archive: the fuzzed bytes as a library, linked after a fixed object and `-u main` (which the seed
//! archives define), or whole (`--whole-archive`), or as a thin archive's stand-in in a `--start-group`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let e = common::env();
    let a = common::input("libin.a", data);
    let ignore = "--unresolved-symbols=ignore-all";
    match common::mode(data, 3) {
        0 => common::link(&["-static", ignore, "-u", "main", &e.main_o, &a]),
        1 => common::link(&[
            "-pie",
            ignore,
            &e.main_o,
            "--whole-archive",
            &a,
            "--no-whole-archive",
            &e.shared_so,
        ]),
        _ => common::link(&[
            "-shared",
            "-u",
            "main",
            &e.main_o,
            "--start-group",
            &a,
            &e.shared_so,
            "--end-group",
        ]),
    }
});
