//! Sections a `SECTIONS` script does not place (`--orphan-handling`) or throws away (`/DISCARD/`, and
//! `--orphan-handling=discard`), against GNU ld: the same warnings and errors for the inputs' orphans, the same
//! sections left out, and GNU ld's error where the output still refers to a symbol of a discarded section (a
//! reference that used to resolve silently to 0): one a script discards, or a local symbol of a COMDAT group
//! member that another file's group replaced.

mod common;

use std::path::Path;

const SOURCE: &str = r#"
__attribute__((section(".myorphan"))) int orphan_var = 3;
__attribute__((section(".lonely"))) int lonely_var = 4;
int main(void)
{
    long status = orphan_var - 3;
    __asm__ volatile("syscall" : : "a"(60), "D"(status));
    __builtin_unreachable();
}
"#;

const SCRIPT: &str = "SECTIONS {
  . = 0x400000 + SIZEOF_HEADERS;
  .text : { *(.text .text.*) }
  .data : { *(.data .data.*) }
  .bss : { *(.bss .bss.*) }
}
";

/// Links `o.o` with GNU ld and rivet (`-static -e main`, script `script` and `flags`); each side's exit code and
/// the lines of its messages that name `o.o`'s own sections (`.myorphan`, `.lonely`, `.text`), without the
/// program's name and `error: ` (GNU ld writes some errors without it).
fn link_both(
    dir: &Path,
    rivet: &Path,
    tag: &str,
    script: &str,
    flags: &[&str],
) -> [(Option<i32>, Vec<String>); 2] {
    std::fs::write(dir.join(format!("{tag}.lds")), script).unwrap();
    let lds = format!("{tag}.lds");
    let mut sides = Vec::new();
    for (side, linker) in [("bfd", Path::new("ld.bfd")), ("rivet", rivet)] {
        let out = format!("{tag}-{side}");
        let mut args = vec!["-static", "-e", "main", "o.o", "-T", &lds, "-o", &out];
        args.extend_from_slice(flags);
        let r = common::tool(linker.to_str().unwrap(), &args, Some(dir));
        let lines = r
            .stderr_str()
            .lines()
            .filter(|l| {
                [".myorphan", ".lonely", "`.text'"]
                    .iter()
                    .any(|n| l.contains(n))
            })
            .map(|l| {
                let l = l
                    .strip_prefix("ld.bfd: ")
                    .or(l.strip_prefix("rivet: "))
                    .unwrap_or(l);
                l.strip_prefix("error: ").unwrap_or(l).to_string()
            })
            .collect();
        sides.push((r.code, lines));
    }
    sides.try_into().unwrap()
}

fn setup(tag: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let (dir, rivet, _) = common::against_gnu_ld(tag, &["gcc", "ld.bfd", "readelf"])?;
    std::fs::write(dir.join("o.c"), SOURCE).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "o.c", "-o", "o.o"], &dir);
    let (linker, _) = common::linker_under_test();
    let _ = rivet;
    Some((dir, linker))
}

#[test]
fn orphan_handling_warns_and_fails_as_gnu_ld() {
    let Some((dir, rivet)) = setup("orphans-report") else {
        return;
    };
    for mode in ["warn", "error"] {
        let flag = format!("--orphan-handling={mode}");
        let [bfd, ours] = link_both(&dir, &rivet, mode, SCRIPT, &[&flag]);
        assert_eq!(ours, bfd, "{mode}");
        assert_eq!(bfd.1.len(), 2, "{mode}: GNU ld's lines {:?}", bfd.1);
    }
    // `place`, the default: nothing said, both orphans kept.
    let [bfd, ours] = link_both(&dir, &rivet, "place", SCRIPT, &["--orphan-handling=place"]);
    assert_eq!(ours, bfd);
    let secs = common::tool_ok("readelf", &["-SW", "place-rivet"], &dir);
    assert!(
        secs.contains(".myorphan") && secs.contains(".lonely"),
        "{secs}"
    );
}

#[test]
fn discarded_sections_and_references_to_them() {
    let Some((dir, rivet)) = setup("orphans-discard") else {
        return;
    };
    // Discarding an orphan the program uses: GNU ld's error, word for word.
    let [bfd, ours] = link_both(&dir, &rivet, "d1", SCRIPT, &["--orphan-handling=discard"]);
    assert_eq!(bfd.0, Some(1));
    assert_eq!(ours, bfd);
    // The same through `/DISCARD/`.
    let discard = SCRIPT.replace("}\n", "  /DISCARD/ : { *(.myorphan) }\n}\n");
    let [bfd, ours] = link_both(&dir, &rivet, "d2", &discard, &[]);
    assert_eq!(bfd.0, Some(1));
    assert_eq!(ours, bfd);
    // Orphans nothing uses are discarded, the rest placed by the script: the program runs.
    let placed = SCRIPT.replace("*(.data .data.*)", "*(.data .data.*) *(.myorphan)");
    let [bfd, ours] = link_both(&dir, &rivet, "d3", &placed, &["--orphan-handling=discard"]);
    assert_eq!((bfd.0, ours.0), (Some(0), Some(0)));
    for side in ["bfd", "rivet"] {
        let secs = common::tool_ok("readelf", &["-SW", &format!("d3-{side}")], &dir);
        assert!(
            !secs.contains(".lonely") && !secs.contains(".comment"),
            "{side}: {secs}"
        );
        let run = common::tool(&format!("./d3-{side}"), &[], Some(&dir));
        assert_eq!(run.code, Some(0), "{side}: {}", run.log());
    }
    // Without a script, GNU ld discards what its default script does not name: refused.
    let r = common::tool(
        rivet.to_str().unwrap(),
        &[
            "-static",
            "-e",
            "main",
            "o.o",
            "-o",
            "d4",
            "--orphan-handling=discard",
        ],
        Some(&dir),
    );
    assert_eq!(r.code, Some(1), "{}", r.log());
    assert!(
        r.stderr_str().contains("without a SECTIONS script"),
        "{}",
        r.log()
    );
}

/// Objects with the same COMDAT group `foo`, the second one's copy discarded: its code and data refer to a local
/// label inside its own copy of the group, which is not in the output.
const GROUP_A: &str = "
        .section .text.foo,\"axG\",@progbits,foo,comdat
        .globl foo
foo:    ret
        .text
        .globl main
main:   call foo
        call bar
        mov $60, %eax
        xor %edi, %edi
        syscall
";
const GROUP_B: &str = "
        .section .text.foo,\"axG\",@progbits,foo,comdat
        .globl foo
foo:    ret
inner:  ret
        .text
        .globl bar
bar:    call inner
        lea inner(%rip), %rax
        ret
        .data
        .quad inner
        .section .gcc_except_table,\"a\",@progbits
        .quad inner
        .section .gcc_except_table.bar,\"a\",@progbits
        .quad inner
        .section .debug_info,\"\",@progbits
        .quad inner
        .section .note.GNU-stack,\"\",@progbits
";

/// A reference to a local symbol of a discarded COMDAT group member: GNU ld's error, once per reference, with the
/// section named with its group's signature (lld refuses it too); `.gcc_except_table` and debug sections may
/// refer to it (GNU ld exempts them). It used to link, with the references resolved to 0.
#[test]
fn references_into_a_discarded_comdat_member() {
    let Some((dir, _, _)) = common::against_gnu_ld("orphans-comdat", &["as"]) else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    for (name, text) in [("a", GROUP_A), ("b", GROUP_B)] {
        std::fs::write(dir.join(format!("{name}.s")), text).unwrap();
        common::tool_ok(
            "as",
            &[&format!("{name}.s"), "-o", &format!("{name}.o")],
            &dir,
        );
    }
    let mut sides = Vec::new();
    for linker in [Path::new("ld.bfd"), &rivet] {
        let r = common::tool(
            linker.to_str().unwrap(),
            &["-static", "-e", "main", "a.o", "b.o", "-o", "out"],
            Some(&dir),
        );
        let lines: Vec<String> = r
            .stderr_str()
            .lines()
            .filter(|l| l.contains("discarded section"))
            .map(|l| l.strip_prefix("rivet: error: ").unwrap_or(l).to_string())
            .collect();
        sides.push((r.code, lines));
    }
    assert_eq!(sides[0].0, Some(1), "{:?}", sides[0]);
    assert_eq!(sides[1], sides[0]);
    assert_eq!(
        sides[0].1,
        [
            "`inner' referenced in section `.text' of b.o: defined in discarded section `.text.foo[foo]' of b.o",
            "`inner' referenced in section `.text' of b.o: defined in discarded section `.text.foo[foo]' of b.o",
            "`inner' referenced in section `.data' of b.o: defined in discarded section `.text.foo[foo]' of b.o",
            "`inner' referenced in section `.gcc_except_table.bar' of b.o: defined in discarded section \
             `.text.foo[foo]' of b.o",
        ]
    );
    // The same objects the other way round: b.o's group is kept, and both link and run.
    for linker in [Path::new("ld.bfd"), &rivet] {
        let r = common::tool(
            linker.to_str().unwrap(),
            &["-static", "-e", "main", "b.o", "a.o", "-o", "out2"],
            Some(&dir),
        );
        assert_eq!(r.code, Some(0), "{}", r.log());
        let run = common::tool("./out2", &[], Some(&dir));
        assert_eq!(run.code, Some(0), "{}", run.log());
    }
}

/// A position-independent link under a script that places the dynamic sections as the kernel's decompressor does,
/// with `--orphan-handling=warn`: rivet warns about the inputs' orphan and none of its own sections that end up
/// empty (its `.iplt` without IFUNCs; GNU ld has none), so every section it names GNU ld names too.
#[test]
fn empty_linker_sections_are_no_orphans() {
    let Some((dir, rivet)) = setup("orphans-pie") else {
        return;
    };
    std::fs::write(
        dir.join("pie.c"),
        "__attribute__((section(\".myorphan\"))) int x = 3;\nint *p = &x;\nint start(void) { return *p; }\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &[
            "-fPIE",
            "-O1",
            "-fno-asynchronous-unwind-tables",
            "-c",
            "pie.c",
        ],
        &dir,
    );
    let script = "SECTIONS {
  . = SIZEOF_HEADERS;
  .text : { *(.text .text.*) }
  .data : { *(.data .data.*) }
  .got : { *(.got) *(.igot.*) }
  .got.plt : { *(.got.plt) *(.igot.plt) }
  .bss : { *(.bss .bss.*) }
  .rela.dyn : { *(.rela.*) }
  .dynamic : { *(.dynamic) }
  .dynsym : { *(.dynsym) }
  .dynstr : { *(.dynstr) }
  .hash : { *(.hash) }
  .gnu.hash : { *(.gnu.hash) }
  .plt : { *(.plt) *(.plt.*) }
  /DISCARD/ : { *(.note.*) *(.comment) }
}
";
    std::fs::write(dir.join("pie.lds"), script).unwrap();
    let mut named = Vec::new();
    for (side, linker) in [("bfd", Path::new("ld.bfd")), ("rivet", rivet.as_path())] {
        let out = format!("pie-{side}");
        let args = [
            "-pie",
            "--no-dynamic-linker",
            "-e",
            "start",
            "--orphan-handling=warn",
        ];
        let args = [&args[..], &["-T", "pie.lds", "pie.o", "-o", &out]].concat();
        let r = common::tool(linker.to_str().unwrap(), &args, Some(&dir));
        assert!(r.success(), "{}", r.log());
        let mut v: Vec<String> = (r.stderr_str().lines())
            .filter_map(|l| {
                l.split_once("orphan section `")?
                    .1
                    .split_once('\'')
                    .map(|s| s.0.to_string())
            })
            .collect();
        v.sort();
        named.push(v);
    }
    assert!(
        named[1].contains(&".myorphan".to_string()),
        "{:?}",
        named[1]
    );
    assert!(
        named[1].iter().all(|n| named[0].contains(n)),
        "rivet {:?}, GNU ld {:?}",
        named[1],
        named[0]
    );
}
