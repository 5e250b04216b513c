//! `-y SYMBOL` / `--trace-symbol`, `--cref`, `--print-memory-usage` and `--stats` (issue 31): the files that define or reference a symbol, and GNU
//! ld's cross reference table, line for line as GNU ld prints them (`-y`'s lines after the program name; GNU ld's
//! table also lists `_GLOBAL_OFFSET_TABLE_`, which it makes, under its first input file).

mod common;

use std::process::Command;

#[test]
fn trace_symbol_and_cref_match_gnu_ld() {
    let Some((_, dir)) = common::rivet_only(
        "trace-cref",
        &["gcc", "ld.bfd"],
        "compares with GNU ld's text",
    ) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("m.c"), "extern int helper(int);\nint shared_counter;\nint main(void) { return helper(shared_counter); }\n").unwrap();
    std::fs::write(
        dir.join("h.c"),
        "extern int shared_counter;\nint helper(int x) { return x + shared_counter; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("s.c"), "int entry_point(void) { return 0; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "m.c", "h.c", "s.c"], &dir);
    let args = ["-e", "entry_point", "-o", "out", "s.o", "m.o", "h.o"];
    let run = |prog: &std::path::Path, extra: &[&str]| {
        let o = Command::new(prog)
            .args(extra)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let bfd = common::which("ld.bfd").unwrap();
    let strip = |s: &str| -> Vec<String> {
        s.lines()
            .filter_map(|l| l.split_once(": ").map(|(_, rest)| rest.to_string()))
            .collect()
    };
    let trace = ["-y", "shared_counter", "--trace-symbol=helper"];
    let (_, ours) = run(&linker, &trace);
    let (_, theirs) = run(&bfd, &trace);
    assert_eq!(strip(&ours), strip(&theirs));
    assert_eq!(strip(&ours).len(), 4, "{ours}");
    let (ours, _) = run(&linker, &["--cref"]);
    let (theirs, _) = run(&bfd, &["--cref"]);
    // GNU ld also lists the symbols it defines itself, under its first input file; rivet lists the inputs' only.
    let theirs: String = theirs
        .lines()
        .filter(|l| !l.starts_with("_GLOBAL_OFFSET_TABLE_"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(ours, theirs);
    assert!(ours.contains("Cross Reference Table"), "{ours}");
    // Without MEMORY regions, GNU ld's --print-memory-usage prints its header only; --stats the time taken.
    let (ours, stats) = run(&linker, &["--print-memory-usage", "--stats"]);
    let (theirs, _) = run(&bfd, &["--print-memory-usage"]);
    assert_eq!(ours, theirs);
    assert!(stats.contains("total time in link"), "{stats}");
}
