//! `NOCROSSREFS`, `NOCROSSREFS_TO` and `OVERLAY ... NOCROSSREFS` in linker scripts: a reference between the listed
//! output sections (or, for `NOCROSSREFS_TO`, from the others into the first) fails the link, naming the sections
//! and the symbol as GNU ld does; references the lists allow link. Each script is linked by GNU ld and by the
//! linker under test, which must agree on success, and on the prohibited references found.

mod common;

use std::path::Path;

/// `s.o` (the entry), `a.o` defining `f1` and a static `helper` that `f1` calls, `b.o` whose `f2` calls `f1`.
fn objects(dir: &Path) {
    let files = [
        ("s.c", "void _start(void) { for (;;); }\n"),
        (
            "a.c",
            "__attribute__((noinline)) static int helper(int x) { return x + 1; }\n\
             int f1(int x) { return helper(x); }\n",
        ),
        ("b.c", "int f1(int);\nint f2(int x) { return 2 + f1(x); }\n"),
    ];
    for (name, src) in files {
        std::fs::write(dir.join(name), src).unwrap();
        common::tool_ok(
            "gcc",
            &["-c", "-O1", "-ffreestanding", "-fno-pic", name],
            dir,
        );
    }
}

/// A script with `head` before `SECTIONS`, a.o's code in `.ta` and b.o's in `.tb` (or an overlay of both when
/// `overlay` names its keywords).
fn script(dir: &Path, name: &str, head: &str, overlay: Option<&str>) {
    let body = match overlay {
        Some(kw) => {
            format!("OVERLAY 0x20000 : {kw} {{ .ta {{ a.o(.text) }} .tb {{ b.o(.text) }} }}")
        }
        None => ".ta : { a.o(.text) }\n  .tb : { b.o(.text) }".to_string(),
    };
    let text = format!(
        "ENTRY(_start)\n{head}\nSECTIONS {{\n  . = 0x10000;\n  .text : {{ s.o(.text) }}\n  {body}\n  \
         /DISCARD/ : {{ *(.comment) *(.note*) *(.eh_frame) }}\n}}\n"
    );
    std::fs::write(dir.join(name), text).unwrap();
}

/// The prohibited references a link reports: (from, symbol, to), sorted.
fn prohibited(stderr: &str) -> Vec<String> {
    let mut v: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.split("prohibited cross reference from ").nth(1))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Links `script` with GNU ld and the linker under test; both succeed or both fail with the same prohibited
/// references, which are returned.
fn both(dir: &Path, bfd: &Path, test: &Path, script: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for (side, ld) in [("bfd", bfd), ("test", test)] {
        let out = format!("{script}.{side}");
        let ld = ld.join("ld");
        let args = ["-T", script, "s.o", "a.o", "b.o", "-o", &out];
        let o = common::tool(ld.to_str().unwrap(), &args, Some(dir));
        assert_eq!(
            o.success(),
            dir.join(&out).exists(),
            "{script} ({side}): an output only on success: {}",
            o.log()
        );
        seen.push((o.success(), prohibited(&o.stderr_str()), o.log()));
    }
    assert_eq!(
        seen[1].0,
        seen[0].0,
        "{script}: GNU ld {} it, the linker under test {}: {}",
        if seen[0].0 { "links" } else { "refuses" },
        if seen[1].0 { "links" } else { "refuses" },
        seen[1].2
    );
    assert_eq!(seen[1].1, seen[0].1, "{script}: other references reported");
    seen.swap_remove(0).1
}

#[test]
fn prohibited_references_fail_as_in_gnu_ld() {
    let Some((dir, test, bfd)) = common::against_gnu_ld("nocrossrefs", &["gcc"]) else {
        return;
    };
    objects(&dir);
    let f2_to_f1 = vec![".tb to `f1' in .ta".to_string()];
    script(&dir, "both.ld", "NOCROSSREFS(.ta .tb)", None);
    assert_eq!(both(&dir, &bfd, &test, "both.ld"), f2_to_f1);
    // Into the first section only: .tb refers to .ta, .ta to nothing of .tb's.
    script(&dir, "into-ta.ld", "NOCROSSREFS_TO(.ta .tb)", None);
    assert_eq!(both(&dir, &bfd, &test, "into-ta.ld"), f2_to_f1);
    script(&dir, "into-tb.ld", "NOCROSSREFS_TO(.tb .ta)", None);
    assert!(both(&dir, &bfd, &test, "into-tb.ld").is_empty());
    // A list naming .text and .ta: .ta's reference to its own static function is within one section.
    script(&dir, "other.ld", "NOCROSSREFS(.text .ta)", None);
    assert!(both(&dir, &bfd, &test, "other.ld").is_empty());
    script(&dir, "overlay.ld", "", Some("NOCROSSREFS AT (0x30000)"));
    assert_eq!(both(&dir, &bfd, &test, "overlay.ld"), f2_to_f1);
    script(&dir, "overlay-ok.ld", "", Some("AT (0x30000)"));
    assert!(both(&dir, &bfd, &test, "overlay-ok.ld").is_empty());
}

/// lld's form of the message, with the place of the reference.
#[test]
fn message_names_the_reference() {
    let Some((rivet, dir)) = common::rivet_only("nocrossrefs-message", &["gcc"], "rivet's message")
    else {
        return;
    };
    objects(&dir);
    script(&dir, "both.ld", "NOCROSSREFS(.ta .tb)", None);
    let o = common::tool(
        rivet.to_str().unwrap(),
        &["-T", "both.ld", "s.o", "a.o", "b.o", "-o", "out"],
        Some(&dir),
    );
    assert!(!o.success());
    let err = o.stderr_str();
    assert!(
        err.contains("prohibited cross reference from .tb to `f1' in .ta\n>>> referenced by ")
            && err.contains("b.o:(function f2: .text+0x"),
        "{err}"
    );
}
