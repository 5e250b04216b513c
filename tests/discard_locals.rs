//! Which local symbols `.symtab` keeps, as GNU ld decides it: by default all but the assembler's temporary labels
//! (`.L*`) in mergeable sections (a final link only), with `-X`/`--discard-locals` all but the temporary labels,
//! with `-x`/`--discard-all` none, with `--discard-none` every one (the kernel links KASLR's vmlinux with it); the
//! last of these options counts. An object assembled with `as -L` keeps its `.L` labels, in code and in a string
//! section; each link's local symbol names are compared with GNU ld's.

mod common;

const SRC: &str = r#"
	.text
	.globl _start
_start:
.Lcode:
	leaq .Lstr(%rip), %rax
	movl loc(%rip), %eax
	movl $60, %eax
	xorl %edi, %edi
	syscall
	jmp .Lcode
	.section .rodata.str1.1,"aMS",@progbits,1
.Lstr:
	.string "hello"
.Lstr2:
	.string "world"
.Ldup:
	.string "hello"
	.data
loc:
	.long 5
	.section .note.GNU-stack,"",@progbits
"#;

/// The names of the local symbols of `file`, sorted (not the file and section symbols).
fn locals(dir: &std::path::Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-sW", file], dir);
    let mut v: Vec<String> = (out.lines())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 8 && f[4] == "LOCAL" && f[3] != "FILE" && f[3] != "SECTION")
        .map(|f| f[7].to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn local_symbols_are_discarded_as_by_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("discard-locals", &["as", "readelf"]) else {
        return;
    };
    let (rivet, _) = common::linker_under_test();
    std::fs::write(dir.join("a.s"), SRC).unwrap();
    common::tool_ok("as", &["-L", "a.s", "-o", "a.o"], &dir);
    for args in [
        &[][..],
        &["-X"],
        &["--discard-locals"],
        &["-x"],
        &["--discard-none"],
        &["-X", "--discard-none"],
        &["--discard-none", "-X"],
        &["--discard-none", "-x"],
        &["-x", "--discard-none"],
        &["-r"],
        &["-r", "-X"],
        &["-r", "--discard-none"],
    ] {
        let mut got = Vec::new();
        for (side, ld) in [("bfd", "ld.bfd"), ("rivet", rivet.to_str().unwrap())] {
            let out = format!("{side}{}", args.join(""));
            let mut all = args.to_vec();
            all.extend(["a.o", "-o", &out]);
            common::tool_ok(ld, &all, &dir);
            got.push(locals(&dir, &out));
        }
        assert_eq!(got[1], got[0], "{args:?}: rivet (left) against GNU ld");
    }
    // The labels of a merged string section have their strings' addresses: a duplicate's, the one it was merged
    // with.
    let nm = common::tool_ok("nm", &["rivet--discard-none"], &dir);
    let value = |name: &str| {
        (nm.lines())
            .find(|l| l.ends_with(&format!(" {name}")))
            .unwrap_or_else(|| panic!("no {name}: {nm}"))
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(value(".Ldup"), value(".Lstr"), "{nm}");
    assert_ne!(value(".Lstr2"), value(".Lstr"), "{nm}");
}
