//! The stack's executability from the objects' `.note.GNU-stack` sections, as GNU ld 2.40 decides it: an
//! executable note (gcc's trampolines for nested functions) or, beside objects with notes, an object without one
//! makes `PT_GNU_STACK` executable, with one warning naming the first object whose note asks, else the last one
//! without a note; `-z execstack`/`-z noexecstack` decide without warnings, `--no-warn-execstack` keeps the
//! warnings quiet. GNU ld writes no `PT_GNU_STACK` where no object has the note; rivet writes a non-executable one
//! there (as lld and mold), so that case is not compared.

mod common;

use std::path::Path;

/// `PT_GNU_STACK`'s flags in `out`, `None` without one.
fn stack_flags(dir: &Path, out: &str) -> Option<String> {
    let l = common::tool_ok("readelf", &["-lW", out], dir);
    let line = l
        .lines()
        .find(|l| l.trim_start().starts_with("GNU_STACK"))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    Some(f[7..f.len() - 1].join(""))
}

/// A linker's messages with its own name taken out.
fn messages(stderr: &str) -> String {
    (stderr.lines())
        .map(|l| l.split_once(": ").map_or(l, |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn executable_stack_as_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("stack-note", &["gcc", "as", "readelf"]) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    std::fs::write(dir.join("c.c"), "int c_fn(void) { return 1; }\n").unwrap();
    common::tool_ok("gcc", &["-c", "c.c", "-o", "noted.o"], &dir);
    common::tool_ok(
        "gcc",
        &[
            "-c",
            "-Wa,--execstack",
            "-Dc_fn=e_fn",
            "c.c",
            "-o",
            "exec.o",
        ],
        &dir,
    );
    for (name, sym) in [("bare1", "_start"), ("bare2", "b2"), ("bare3", "b3")] {
        let src = format!("\t.text\n\t.globl {sym}\n{sym}:\tret\n");
        std::fs::write(dir.join(format!("{name}.s")), src).unwrap();
        common::tool_ok(
            "as",
            &[&format!("{name}.s"), "-o", &format!("{name}.o")],
            &dir,
        );
    }
    std::fs::write(dir.join("blob.txt"), "data\n").unwrap();
    let cases: &[&[&str]] = &[
        &["bare1.o", "exec.o"],
        &["exec.o", "bare1.o"],
        &["noted.o", "bare1.o", "bare2.o"],
        &["bare1.o", "noted.o", "bare2.o", "exec.o", "bare3.o"],
        &["noted.o", "bare1.o"],
        &["noted.o"],
        &["exec.o", "-z", "noexecstack"],
        &["bare1.o", "noted.o", "-z", "noexecstack"],
        &["bare1.o", "noted.o", "--no-warn-execstack"],
        &["exec.o", "--no-warn-execstack"],
        &["noted.o", "-z", "execstack"],
        &["noted.o", "-z", "execstack", "--warn-execstack"],
        &["noted.o", "-b", "binary", "blob.txt"],
    ];
    for case in cases {
        for r in [false, true] {
            let mut args = vec!["-e", "0"];
            if r {
                args.push("-r");
            }
            args.extend_from_slice(case);
            let gnu = common::tool(
                "ld.bfd",
                &[&args[..], &["-o", "gnu.out"]].concat(),
                Some(&dir),
            );
            let ours = common::tool(
                linker.to_str().unwrap(),
                &[&args[..], &["-o", "test.out"]].concat(),
                Some(&dir),
            );
            assert!(gnu.success(), "{}", gnu.log());
            assert!(ours.success(), "{}", ours.log());
            let what = format!("{} {case:?}", if r { "-r" } else { "final" });
            assert_eq!(
                messages(&ours.stderr_str()),
                messages(&gnu.stderr_str()),
                "{what}"
            );
            if !r {
                assert_eq!(
                    stack_flags(&dir, "test.out"),
                    stack_flags(&dir, "gnu.out"),
                    "{what}"
                );
            }
        }
    }
}

/// A nested function whose address is taken runs from a trampoline gcc builds on the stack: the program needs
/// the executable stack its object's note asks for.
#[test]
fn nested_function_trampolines_run() {
    let Some((dir, shim, _)) = common::against_gnu_ld("stack-nested", &["gcc"]) else {
        return;
    };
    let src = "#include <stdio.h>\n\
        static int apply(int (*f)(int), int v) { return f(v); }\n\
        int main(int argc, char **argv) {\n\
          int k = argc + 41;\n\
          int add(int x) { return x + k; }\n\
          printf(\"%d\\n\", apply(add, 1));\n\
          return 0;\n\
        }\n";
    std::fs::write(dir.join("nested.c"), src).unwrap();
    let b = format!("-B{}/", shim.display());
    common::tool_ok("gcc", &[&b, "nested.c", "-o", "nested"], &dir);
    let run = common::tool(dir.join("nested").to_str().unwrap(), &[], Some(&dir));
    assert!(run.success(), "{}", run.log());
    assert_eq!(run.stdout_str(), "43\n");
}
