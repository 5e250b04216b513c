//! An object file: the fuzzed bytes as one input object, linked with a fixed freestanding object (and a small
//! shared object in the dynamic modes) into an executable or a shared object.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let e = common::env();
    let o = common::input("in.o", data);
    let ignore = "--unresolved-symbols=ignore-all";
    match common::mode(data, 4) {
        0 => common::link(&["-static", ignore, "--gc-sections", &e.main_o, &o]),
        1 => common::link(&[
            "-pie",
            "--eh-frame-hdr",
            "--build-id",
            "-z",
            "relro",
            ignore,
            &e.main_o,
            &o,
            &e.shared_so,
        ]),
        2 => common::link(&["-shared", "--hash-style=both", &e.main_o, &o, &e.shared_so]),
        _ => common::link(&["-no-pie", "--emit-relocs", ignore, &e.main_o, &o]),
    }
});
