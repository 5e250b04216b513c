//! A version script: the fuzzed text as `--version-script` of a shared object (or of a PIE that exports its
//! symbols) made from a fixed object with C, C++ and `.symver` names.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let e = common::env();
    let v = common::input("in.map", data);
    match common::mode(data, 2) {
        0 => common::link(&["-shared", "--version-script", &v, &e.lib_o, &e.shared_so]),
        _ => common::link(&[
            "-pie",
            "-E",
            "--unresolved-symbols=ignore-all",
            "--version-script",
            &v,
            &e.main_o,
            &e.lib_o,
        ]),
    }
});
