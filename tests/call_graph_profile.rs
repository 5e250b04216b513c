//! Objects from clang PGO builds carry `.llvm.call-graph-profile` with `SHT_REL` relocations, which LLVM writes
//! as REL on every target (issue 31): the section is link-time metadata, dropped like GNU ld drops it, and the link
//! must not be refused. The assembler's `.cg_profile` directive writes the same section as a PGO build. A
//! partial link keeps it, as GNU ld's and lld's do, for the final link's sort.

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

/// Two objects with profiles whose functions each have a section: a global and a file-local caller, a callee in
/// the other object, an undefined one.
const CG1: &str = "\t.section .text.main,\"ax\",@progbits\n\t.globl main\n\t.type main,@function\n\
    main:\n\tcall f5\n\txorl %eax, %eax\n\tret\n\
    \t.section .text.f1,\"ax\",@progbits\n\t.globl f1\nf1:\n\tret\n\t.zero 64\n\
    \t.section .text.f2,\"ax\",@progbits\n\t.globl f2\nf2:\n\tcall f6\n\tret\n\t.zero 64\n\
    \t.section .text.f3,\"ax\",@progbits\n\t.type f3,@function\nf3:\n\tcall f2\n\tret\n\t.zero 64\n\
    \t.cg_profile main, f5, 1000\n\t.cg_profile f5, f3, 800\n\t.cg_profile f3, f2, 500\n\
    \t.cg_profile f1, puts, 3\n\t.section .note.GNU-stack,\"\",@progbits\n";
const CG2: &str = "\t.section .text.f4,\"ax\",@progbits\n\t.globl f4\nf4:\n\tret\n\t.zero 64\n\
    \t.section .text.f5,\"ax\",@progbits\n\t.globl f5\nf5:\n\tcall f2\n\tret\n\t.zero 64\n\
    \t.section .text.f6,\"ax\",@progbits\n\t.globl f6\nf6:\n\tret\n\t.zero 64\n\
    \t.cg_profile f5, f2, 900\n\t.cg_profile f2, f6, 700\n\t.cg_profile f4, f1, 0\n\
    \t.section .note.GNU-stack,\"\",@progbits\n";

/// `readelf -SW`'s fields (after the index) of section `name` of `obj`.
fn section_fields(dir: &std::path::Path, obj: &str, name: &str) -> Option<Vec<String>> {
    let s = common::tool_ok("readelf", &["-SW", obj], dir);
    (s.lines())
        .filter_map(|l| l.trim_start().strip_prefix('[')?.split_once(']'))
        .map(|(_, rest)| {
            rest.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .find(|f| f.first().map(String::as_str) == Some(name))
}

/// The profile's header as comparable text (type, size, flags; for the relocations also the entry size) and its
/// (caller, callee, weight) entries by symbol name, in order.
fn profile(dir: &std::path::Path, obj: &str) -> (String, String, Vec<(String, String, u64)>) {
    let sec = section_fields(dir, obj, ".llvm.call-graph-profile").expect("no profile section");
    let rel = section_fields(dir, obj, ".rel.llvm.call-graph-profile").expect("no REL section");
    // name, type, address, offset, size, entsize, flags.
    let header = format!("{} {} {}", sec[1], sec[4], sec[6]);
    let rel_header = format!("{} {} {} {}", rel[1], rel[4], rel[5], rel[6]);
    let bytes = std::fs::read(dir.join(obj)).unwrap();
    let (off, size) = (
        usize::from_str_radix(&sec[3], 16).unwrap(),
        usize::from_str_radix(&sec[4], 16).unwrap(),
    );
    let weight = |at: usize| u64::from_le_bytes(bytes[off + at..off + at + 8].try_into().unwrap());
    let relocs = common::tool_ok("readelf", &["-rW", obj], dir);
    let names: Vec<(usize, String)> = (relocs.lines())
        .skip_while(|l| !l.contains("'.rel.llvm.call-graph-profile'"))
        .skip(2)
        .map_while(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = usize::from_str_radix(f.first()?, 16).ok()?;
            Some((at, f.get(4).unwrap_or(&"").to_string()))
        })
        .collect();
    assert_eq!(names.len(), 2 * size / 8, "{obj}: {relocs}");
    let entries = (names.chunks_exact(2))
        .map(|p| {
            assert_eq!(p[0].0, p[1].0, "{obj}: a pair at one offset");
            (p[0].1.clone(), p[1].1.clone(), weight(p[0].0))
        })
        .collect();
    (header, rel_header, entries)
}

/// The functions of `exe` in address order.
fn order(dir: &std::path::Path, exe: &str) -> Vec<String> {
    let nm = common::tool_ok("nm", &["-n", exe], dir);
    (nm.lines())
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| *n == "main" || (n.len() == 2 && n.starts_with('f')))
        .map(str::to_string)
        .collect()
}

/// A partial link keeps `.llvm.call-graph-profile` and its REL relocations, as GNU ld and lld do: one section of
/// the inputs' entries in load order (type, flags and size as GNU ld's, the entry size lld's), their relocations renumbered to the
/// output's symbols (a file-local caller too, and under `-x`), so that a final link of the partial link orders the
/// functions by the profile as it does for the original objects (rivet's and lld's sorts).
#[test]
fn partial_link_keeps_call_graph_profile() {
    let Some((dir, _, _)) = common::against_gnu_ld(
        "call-graph-profile-r",
        &["clang-19", "readelf", "nm", "ld.lld-19"],
    ) else {
        return;
    };
    let (linker, _) = common::linker_under_test();
    let linker = linker.to_str().unwrap();
    for (name, text) in [("cg1", CG1), ("cg2", CG2)] {
        std::fs::write(dir.join(format!("{name}.s")), text).unwrap();
        common::tool_ok("clang-19", &["-c", &format!("{name}.s")], &dir);
    }
    let inputs = ["cg1.o", "cg2.o"];
    for x in [&[][..], &["-x"]] {
        let args = |out: &'static str| [&["-r"][..], x, &inputs, &["-o", out]].concat();
        common::tool_ok("ld.bfd", &args("bfd.o"), &dir);
        common::tool_ok("ld.lld-19", &args("lld.o"), &dir);
        common::tool_ok(linker, &args("test.o"), &dir);
        let want = profile(&dir, "bfd.o");
        assert_eq!(want.2.len(), 7, "{want:?}");
        assert!(
            want.2.contains(&("f5".into(), "f3".into(), 800)),
            "{want:?}"
        );
        assert_eq!(profile(&dir, "test.o"), want, "{x:?}");
        assert_eq!(profile(&dir, "lld.o").2, want.2, "{x:?}");
        // lld's entry size, which lld's reader requires (GNU ld writes 0).
        let entsize =
            |o: &str| section_fields(&dir, o, ".llvm.call-graph-profile").unwrap()[5].clone();
        assert_eq!(entsize("test.o"), entsize("lld.o"));
        let relink = common::tool("readelf", &["-a", "test.o"], Some(&dir));
        assert!(!relink.stderr_str().contains("arning"), "{}", relink.log());
    }
    // Final links by clang with rivet and with lld, of the objects and of rivet's partial link.
    let exe = |ld: &str, objs: &[&str], out: &str, flags: &[&str]| {
        let ld_path = format!("--ld-path={ld}");
        let args = [&[ld_path.as_str(), "-o", out][..], objs, flags].concat();
        common::tool_ok("clang-19", &args, &dir);
        let run = common::tool(&format!("./{out}"), &[], Some(&dir));
        assert!(run.success(), "{out}: {}", run.log());
        order(&dir, out)
    };
    for ld in [linker, "/usr/bin/ld.lld-19"] {
        let sorted = exe(ld, &inputs, "whole", &[]);
        let unsorted = exe(ld, &inputs, "plain", &["-Wl,--no-call-graph-profile-sort"]);
        assert_ne!(sorted, unsorted, "{ld}: the profile orders the functions");
        assert_eq!(exe(ld, &["test.o"], "partial", &[]), sorted, "{ld}");
    }
}
