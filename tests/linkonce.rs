//! `.gnu.linkonce.*` sections, the COMDAT form that predates section groups and that older or hand-written
//! assembly still uses: of each section name, GNU ld keeps the first file's copy and discards the others with the
//! symbols they define, in final links and in `-r`.

mod common;

/// A hidden thunk and a table, each in a linkonce section, with the file's own function calling the thunk and
/// reading the table. `TAG` names the function and the table's value, which tells whose copy was kept.
const LINKONCE: &str = "\t.section .gnu.linkonce.t.thunk,\"ax\",@progbits\n\
    \t.globl thunk\n\t.hidden thunk\nthunk:\tmovl tbl(%rip), %eax\n\tret\n\
    \t.section .gnu.linkonce.r.tbl,\"a\",@progbits\n\t.globl tbl\n\t.hidden tbl\ntbl:\t.long TAG\n\
    \t.text\n\t.globl fTAG\nfTAG:\tcall thunk\n\tret\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

const MAIN: &str = "#include <stdio.h>\nint f1(void), f2(void);\n\
    int main(void) { printf(\"%d %d\\n\", f1(), f2()); return 0; }\n";

/// The sections and symbols of `file` named for the linkonce copies: one of each, as in GNU ld's output.
fn copies(dir: &std::path::Path, file: &str) -> (usize, usize) {
    let secs = common::tool_ok("readelf", &["-SW", file], dir);
    let syms = common::tool_ok("readelf", &["-sW", file], dir);
    let count = |text: &str, what: &str| {
        text.lines()
            .filter(|l| l.split_whitespace().any(|w| w == what))
            .count()
    };
    (
        count(&secs, ".gnu.linkonce.t.thunk") + count(&secs, ".gnu.linkonce.r.tbl"),
        count(&syms, "thunk") + count(&syms, "tbl"),
    )
}

#[test]
fn first_copy_of_each_linkonce_section_is_kept() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("linkonce", &["gcc", "readelf"]) else {
        return;
    };
    for tag in ["1", "2"] {
        std::fs::write(dir.join(format!("lo{tag}.s")), LINKONCE.replace("TAG", tag)).unwrap();
    }
    std::fs::write(dir.join("m.c"), MAIN).unwrap();
    common::tool_ok("gcc", &["-c", "lo1.s", "lo2.s", "m.c"], &dir);
    let (linker, _) = common::linker_under_test();
    let mut outputs = Vec::new();
    for (side, b) in [("ref", &bfd), ("test", &shim)] {
        // Final links, both orders: the first file's table is the one read.
        for (n, objs) in [("a", ["lo1.o", "lo2.o"]), ("b", ["lo2.o", "lo1.o"])] {
            let exe = format!("{side}-{n}");
            let b = format!("-B{}/", b.display());
            let o = common::tool(
                "gcc",
                &[&b, "-o", &exe, "m.o", objs[0], objs[1]],
                Some(&dir),
            );
            assert!(o.success(), "{side} {objs:?}: {}", o.log());
            let run = common::tool(dir.join(&exe).to_str().unwrap(), &[], Some(&dir));
            assert!(run.success(), "{exe}: {}", run.log());
            outputs.push((exe.clone(), run.stdout_str(), copies(&dir, &exe)));
        }
    }
    // `-r`: one copy of each section, and the partial link makes the same program.
    common::tool_ok("ld.bfd", &["-r", "-o", "bfd.o", "lo2.o", "lo1.o"], &dir);
    let o = common::tool(
        linker.to_str().unwrap(),
        &["-r", "-o", "rivet.o", "lo2.o", "lo1.o"],
        Some(&dir),
    );
    assert!(o.success(), "-r: {}", o.log());
    for (side, obj) in [("ref", "bfd.o"), ("test", "rivet.o")] {
        let exe = format!("{side}-r");
        common::tool_ok("gcc", &["-fuse-ld=bfd", "-o", &exe, "m.o", obj], &dir);
        let run = common::tool(dir.join(&exe).to_str().unwrap(), &[], Some(&dir));
        assert!(run.success(), "{exe}: {}", run.log());
        outputs.push((obj.to_string(), run.stdout_str(), copies(&dir, obj)));
    }
    let views: Vec<_> = outputs
        .iter()
        .map(|(_, out, c)| (out.as_str(), *c))
        .collect();
    assert_eq!(views[0].0, "1 1\n");
    assert_eq!(views[1].0, "2 2\n");
    assert_eq!(
        &views[2..4],
        &views[0..2],
        "final links differ from GNU ld's: {outputs:?}"
    );
    assert_eq!(views[5], views[4], "-r differs from GNU ld's: {outputs:?}");
}
