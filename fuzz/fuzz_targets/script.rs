//! A linker script, twice: as `-T` (replacing the default layout: `SECTIONS`, `MEMORY`, `AT>`, `NOLOAD`, data
//! commands) and as an input file named among the objects (as `libc.so` is one: `GROUP`, `INPUT`, assignments).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let e = common::env();
    let s = common::input("in.lds", data);
    let ignore = "--unresolved-symbols=ignore-all";
    match common::mode(data, 2) {
        0 => common::link(&["-static", "-no-pie", ignore, "-T", &s, &e.main_o]),
        _ => common::link(&["-pie", ignore, "-T", &s, &e.main_o, &e.shared_so]),
    }
    let l = format!("-L{}", e.dir.display());
    common::link(&["-static", ignore, &l, &e.main_o, &s]);
});
