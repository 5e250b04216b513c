//! Objects from clang PGO builds carry `.llvm.call-graph-profile` with `SHT_REL` relocations, which LLVM writes
//! as REL on every target (issue 31): the section is link-time metadata, dropped like GNU ld drops it, and the link
//! must not be refused. The assembler's `.cg_profile` directive writes the same section as a PGO build.

mod common;

const ASM: &str = "\t.text\n\t.globl main\nmain:\n\tcall other\n\txorl %eax, %eax\n\tret\n\
    \t.globl other\nother:\n\tret\n\t.cg_profile main, other, 32\n\t.cg_profile other, main, 1\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

#[test]
fn call_graph_profile_sections_are_accepted() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("call-graph-profile", &["gcc", "clang-19"])
    else {
        return;
    };
    std::fs::write(dir.join("cg.s"), ASM).unwrap();
    common::tool_ok("clang-19", &["-c", "cg.s", "-o", "cg.o"], &dir);
    let sections = common::tool_ok("readelf", &["-SW", "cg.o"], &dir);
    assert!(
        sections.contains(".rel.llvm.call-graph-profile"),
        "{sections}"
    );
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let exe = format!("cg-{side}");
        let b = format!("-B{}/", shim.display());
        let o = common::tool("gcc", &[&b, "-o", &exe, "cg.o"], Some(&dir));
        assert!(o.success(), "{side}: {}", o.log());
        let run = std::process::Command::new(dir.join(&exe)).status().unwrap();
        assert!(run.success(), "{side}");
        let out = common::tool_ok("readelf", &["-SW", &exe], &dir);
        assert!(!out.contains("call-graph-profile"), "{side}: {out}");
    }
}
