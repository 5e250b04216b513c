//! The `.symtab` entries of linker-defined and script-assigned symbols as GNU ld writes them (issue 33): GNU ld
//! makes the hidden symbols it defines (`_GLOBAL_OFFSET_TABLE_`, `_DYNAMIC`, `__ehdr_start`, `__GNU_EH_FRAME_HDR`,
//! `_TLS_MODULE_BASE_`, its default scripts' `PROVIDE_HIDDEN` array and IRELATIVE bounds) and those a script
//! assigns with `HIDDEN` or `PROVIDE_HIDDEN` `LOCAL` with default visibility, after the inputs' locals; the others
//! (`_end`, `_edata`, `__bss_start`, `etext`, a script's plain and `PROVIDE`d symbols) stay global with default
//! visibility unless an input's reference is hidden. Each case is linked by GNU ld and by rivet, in every kind of
//! output, without and with a `-T` script, and compared: binding, visibility, type and section of each such symbol,
//! `sh_info`, what the program prints, and with `--emit-relocs` the symbols the kept relocations name.

mod common;

use std::path::Path;

/// Refers (weakly, so that each output defines what it defines) to every symbol the linker can define.
const USES: &str = r#"
#include <stdio.h>
__thread int tv = 3;
__attribute__((section("mysec"))) int ms = 1;
static void ctor(void) {}
__attribute__((section(".init_array"))) void (*pc)(void) = ctor;
#define X(s) extern char s[] __attribute__((weak));
X(__start_mysec) X(__stop_mysec) X(__ehdr_start) X(__executable_start) X(_end) X(end) X(_edata) X(edata)
X(__bss_start) X(etext) X(_etext) X(__etext) X(__GNU_EH_FRAME_HDR) X(_GLOBAL_OFFSET_TABLE_) X(_DYNAMIC)
X(__init_array_start) X(__init_array_end) X(__fini_array_start) X(__fini_array_end) X(__preinit_array_start)
X(__preinit_array_end) X(__rela_iplt_start) X(__rela_iplt_end) X(hsym) X(phsym) X(psym) X(gsym)
void *tab[] = {__start_mysec, __stop_mysec, __ehdr_start, __executable_start, _end, end, _edata, edata,
  __bss_start, etext, _etext, __etext, __GNU_EH_FRAME_HDR, _GLOBAL_OFFSET_TABLE_, _DYNAMIC,
  __init_array_start, __init_array_end, __fini_array_start, __fini_array_end, __preinit_array_start,
  __preinit_array_end, __rela_iplt_start, __rela_iplt_end, hsym, phsym, psym, gsym};
int main(void) {
  printf("%d %d %d %d\n", tv, __stop_mysec - __start_mysec == sizeof ms,
         __init_array_end - __init_array_start >= (long)sizeof pc,
         __preinit_array_end == __preinit_array_start);
  return 0;
}
"#;

/// Assignments outside `SECTIONS`, named as an input.
const ASSIGNS: &str =
    "HIDDEN(hsym = 0x10);\nPROVIDE_HIDDEN(phsym = 0x20);\nPROVIDE(psym = 0x30);\ngsym = 0x40;\n";

/// `_TLS_MODULE_BASE_` (TLS descriptors against the module's own block).
const TLSDESC: &str = r#"
	.text
	.globl f
	.type f,@function
f:
	leaq _TLS_MODULE_BASE_@tlsdesc(%rip), %rax
	call *_TLS_MODULE_BASE_@tlscall(%rax)
	movl %fs:a@dtpoff(%rax), %eax
	ret
	.section .tbss,"awT",@nobits
a:	.zero 4
	.section .note.GNU-stack,"",@progbits
"#;

/// A `-T` script whose symbols are assigned inside and between output sections, hidden and not.
const SCRIPT: &str = r#"
SECTIONS {
  . = 0x400000 + SIZEOF_HEADERS;
  .text : {
    HIDDEN(in_hidden = .);
    *(.text*)
    PROVIDE_HIDDEN(in_phidden = .);
    PROVIDE(in_provided = .);
    in_plain = .;
  }
  .rodata : { *(.rodata*) }
  . = ALIGN(0x1000);
  .data : { *(.data*) }
  HIDDEN(out_hidden = .);
  out_plain = .;
  .bss : { *(.bss*) }
  PROVIDE_HIDDEN(out_phidden = .);
  /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame) }
}
"#;

const SCRIPT_CODE: &str = r#"
extern char in_hidden[], in_phidden[], in_provided[], in_plain[], out_hidden[], out_plain[], out_phidden[];
int data1 = 5;
int bss1;
void *p[] = {in_hidden, in_phidden, in_provided, in_plain, out_hidden, out_plain, out_phidden};
void _start(void) { for (;;); }
"#;

/// The names these tests compare: the linker's own and the scripts'.
fn compared(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "_GLOBAL_OFFSET_TABLE_",
        "_DYNAMIC",
        "__ehdr_start",
        "__executable_start",
        "_end",
        "end",
        "_edata",
        "edata",
        "__bss_start",
        "_etext",
        "etext",
        "__etext",
        "__GNU_EH_FRAME_HDR",
        "_TLS_MODULE_BASE_",
        "hsym",
        "phsym",
        "psym",
        "gsym",
    ];
    NAMES.contains(&name)
        || name.starts_with("vis_")
        || name.starts_with("__start_")
        || name.starts_with("__stop_")
        || name.starts_with("in_")
        || name.starts_with("out_")
        || [
            "__init_array_",
            "__fini_array_",
            "__preinit_array_",
            "__rela_iplt_",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Per output section index, its name; rivet's own `.rela.iplt` is GNU ld's `.rela.plt` (GNU ld's scripts put
/// it there).
fn section_names(dir: &Path, file: &str) -> Vec<String> {
    let out = common::tool_ok("readelf", &["-SW", file], dir);
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix('['))
        .filter_map(|l| l.split_once(']'))
        .filter(|(n, _)| n.trim().parse::<usize>().is_ok())
        .map(|(_, rest)| rest.split_whitespace().next().unwrap_or("").to_string())
        .map(|n| {
            if n == ".rela.iplt" {
                ".rela.plt".into()
            } else {
                n
            }
        })
        .collect()
}

/// `.symtab`'s "name binding visibility type section" of the compared symbols defined, sorted, and whether every
/// `LOCAL` entry comes before `sh_info` and every other one after it.
fn symtab(dir: &Path, file: &str) -> (Vec<String>, bool) {
    let names = section_names(dir, file);
    let out = common::tool_ok("readelf", &["-sW", file], dir);
    let table = out.split("Symbol table '.symtab'").nth(1).unwrap_or("");
    let mut v = Vec::new();
    let mut first_global = None;
    let mut ordered = true;
    for l in table.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let Some(idx) = f
            .first()
            .and_then(|n| n.strip_suffix(':')?.parse::<usize>().ok())
        else {
            continue;
        };
        if f.len() < 8 {
            continue;
        }
        if f[4] == "LOCAL" {
            ordered &= first_global.is_none();
        } else {
            first_global.get_or_insert(idx);
        }
        // Defined ones only (`undefined_symbols_are_listed_as_with_gnu_ld` compares the others).
        if compared(f[7]) && f[6] != "UND" {
            let sec = match f[6].parse::<usize>() {
                Ok(i) => names.get(i).cloned().unwrap_or_default(),
                Err(_) => f[6].to_string(),
            };
            v.push(format!("{} {} {} {} {sec}", f[7], f[4], f[5], f[3]));
        }
    }
    // `sh_info` of `.symtab` is the index of its first non-local entry.
    let sections = common::tool_ok("readelf", &["-SW", file], dir);
    let info = sections
        .lines()
        .find(|l| l.contains(" .symtab "))
        .and_then(|l| l.split_whitespace().rev().nth(1)?.parse::<usize>().ok());
    let n = table.lines().filter(|l| l.contains(": ")).count();
    ordered &= info == Some(first_global.unwrap_or(n));
    v.sort();
    (v, ordered)
}

/// Links `args` with gcc through GNU ld and through rivet; returns each output's name.
fn link_both(dir: &Path, shims: [&Path; 2], out: &str, args: &[&str]) -> [String; 2] {
    let mut outs = [String::new(), String::new()];
    for (k, (side, shim)) in [("bfd", shims[0]), ("rivet", shims[1])]
        .into_iter()
        .enumerate()
    {
        let file = format!("{out}.{side}");
        let b = format!("-B{}/", shim.display());
        let mut all = vec![&b[..], "-o", &file];
        all.extend_from_slice(args);
        let o = common::tool("gcc", &all, Some(dir));
        assert!(o.success(), "{side}: {}", o.log());
        outs[k] = file;
    }
    outs
}

#[test]
fn linker_defined_symbols_bind_as_with_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("symtab-binding", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("uses.c"), USES).unwrap();
    std::fs::write(dir.join("assigns.lds"), ASSIGNS).unwrap();
    std::fs::write(dir.join("tlsdesc.s"), TLSDESC).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "-fPIC", "uses.c", "tlsdesc.s"], &dir);
    let static_ok =
        common::tool("gcc", &["-static", "-o", "probe", "uses.o"], Some(&dir)).success();
    for kind in ["-no-pie", "-pie", "-shared", "-static", "-static-pie"] {
        if kind.starts_with("-static") && !static_ok {
            continue;
        }
        let mut args = vec![kind, "uses.o", "assigns.lds"];
        if kind == "-shared" {
            args.push("tlsdesc.o");
        }
        let [b, r] = link_both(&dir, [&bfd, &shim], &format!("uses{kind}"), &args);
        let (want, got) = (symtab(&dir, &b), symtab(&dir, &r));
        assert!(
            got.1,
            "{kind}: LOCAL entries after a global, or sh_info wrong"
        );
        assert_eq!(got.0, want.0, "{kind}");
        if kind != "-shared" {
            let run = |f: &str| {
                let o = std::process::Command::new(dir.join(f)).output().unwrap();
                String::from_utf8_lossy(&o.stdout).into_owned()
            };
            assert_eq!(run(&r), run(&b), "{kind}");
            assert_eq!(run(&r), "3 1 1 1\n");
        }
    }
    // Spelled out for the cases the issue names.
    let (got, _) = symtab(&dir, "uses-static.bfd");
    for line in [
        "__rela_iplt_start LOCAL DEFAULT NOTYPE",
        "__init_array_start LOCAL DEFAULT NOTYPE .init_array",
        "__init_array_end LOCAL DEFAULT NOTYPE .init_array",
        "_GLOBAL_OFFSET_TABLE_ LOCAL DEFAULT OBJECT",
        "hsym LOCAL DEFAULT NOTYPE ABS",
        "phsym LOCAL DEFAULT NOTYPE ABS",
        "psym GLOBAL DEFAULT NOTYPE ABS",
    ] {
        assert!(
            got.iter().any(|s| s.starts_with(line)),
            "{line} in {got:#?}"
        );
    }
    let (got, _) = symtab(&dir, "uses-shared.rivet");
    assert!(
        got.iter()
            .any(|s| s == "_TLS_MODULE_BASE_ LOCAL DEFAULT TLS .tdata"),
        "{got:#?}"
    );
}

/// A `-T` script's `HIDDEN` and `PROVIDE_HIDDEN` symbols, inside and between output sections, are local; with
/// `--emit-relocs` the relocations that name them name the local entries.
#[test]
fn script_hidden_symbols_are_local_as_with_gnu_ld() {
    let Some((dir, _, _)) = common::against_gnu_ld("symtab-binding-script", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("code.c"), SCRIPT_CODE).unwrap();
    std::fs::write(dir.join("t.lds"), SCRIPT).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "-fno-pic", "code.c"], &dir);
    let (rivet, _) = common::linker_under_test();
    let mut seen = Vec::new();
    for (side, ld) in [
        ("bfd", "ld.bfd".to_string()),
        ("rivet", rivet.display().to_string()),
    ] {
        let out = format!("t.{side}");
        let args = [
            "-T",
            "t.lds",
            "-q",
            "-z",
            "noexecstack",
            "-o",
            &out,
            "code.o",
        ];
        let o = common::tool(&ld, &args, Some(&dir));
        assert!(o.success(), "{side}: {}", o.log());
        let (syms, ordered) = symtab(&dir, &out);
        assert!(
            ordered,
            "{side}: LOCAL entries after a global, or sh_info wrong"
        );
        // The symbols `.data`'s kept relocations name, in order.
        let relocs = common::tool_ok("readelf", &["-rW", &out], &dir);
        let named: Vec<String> = relocs
            .split("'.rela.data'")
            .nth(1)
            .unwrap_or("")
            .lines()
            .filter_map(|l| l.split_whitespace().nth(4).map(str::to_string))
            .filter(|n| compared(n))
            .collect();
        seen.push((syms, named));
    }
    assert_eq!(seen[1], seen[0]);
    for line in [
        "in_hidden LOCAL DEFAULT NOTYPE .text",
        "in_phidden LOCAL DEFAULT NOTYPE .text",
        "in_provided GLOBAL DEFAULT NOTYPE .text",
        "out_hidden LOCAL DEFAULT NOTYPE",
        "out_phidden LOCAL DEFAULT NOTYPE",
        "out_plain GLOBAL DEFAULT NOTYPE",
    ] {
        assert!(
            seen[0].0.iter().any(|s| s.starts_with(line)),
            "{line} in {:#?}",
            seen[0].0
        );
    }
    assert_eq!(seen[0].1.len(), 7, "{:#?}", seen[0].1);
}

/// What a dynamic output refers to and no object defines, as GNU ld lists it in `.symtab`: each import and each
/// weak undefined symbol once, undefined, with the binding of the link's references (weak only when all are), the
/// library's type, and a value of 0 but for a function whose address a position-dependent executable takes (its
/// PLT entry); a position-dependent executable's weak undefined symbols are not dynamic and not listed. GNU ld
/// appends the version to an import's name (`puts@GLIBC_2.2.5`); rivet writes the plain name,
/// as lld does, so the comparison leaves the version out. A static executable lists none, as with GNU ld.
#[test]
fn undefined_symbols_are_listed_as_with_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("symtab-undefined", &["gcc", "readelf"])
    else {
        return;
    };
    let src = "#include <stdio.h>\n#include <stdlib.h>\n\
               extern void maybe(void) __attribute__((weak));\n\
               extern int wdata __attribute__((weak));\n\
               extern int lib_only(void);\n\
               void *take = (void *)puts;\n\
               int use_lib(void) { return lib_only(); }\n\
               int main(void) { if (maybe) maybe(); printf(\"%d %d\\n\", &wdata != 0, take != 0); \
               return 0; }\n";
    std::fs::write(dir.join("und.c"), src).unwrap();
    common::tool_ok("gcc", &["-c", "-O1", "-fPIC", "und.c"], &dir);
    common::tool_ok(
        "gcc",
        &["-c", "-O1", "-fno-pie", "-o", "und-nopie.o", "und.c"],
        &dir,
    );
    let undefined = |file: &str| -> Vec<String> {
        let out = common::tool_ok("readelf", &["-sW", file], &dir);
        let table = out.split("Symbol table '.symtab'").nth(1).unwrap_or("");
        let mut v: Vec<String> = (table.lines())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() >= 8 && f[6] == "UND")
            .map(|f| {
                let name = f[7].split('@').next().unwrap_or("");
                format!("{name} {} {} {}", f[4], f[3], f[1])
            })
            .collect();
        v.sort();
        v
    };
    for (kind, obj) in [
        ("-pie", "und.o"),
        ("-no-pie", "und-nopie.o"),
        ("-shared", "und.o"),
        ("-static", "und-nopie.o"),
    ] {
        let mut args = vec![kind, obj];
        if kind != "-shared" {
            args.push("-Wl,--defsym=lib_only=0");
        }
        let [b, r] = link_both(&dir, [&bfd, &shim], &format!("und{kind}"), &args);
        let want = undefined(&b);
        assert_eq!(undefined(&r), want, "{kind}");
        match kind {
            "-static" => assert!(want.is_empty(), "{want:?}"),
            "-shared" => assert!(
                want.iter()
                    .any(|s| s.starts_with("lib_only GLOBAL NOTYPE 0")),
                "{want:?}"
            ),
            // A position-dependent executable resolves its weak undefined symbols to 0 (they stay out).
            "-no-pie" => assert!(
                want.iter().any(|s| s.starts_with("printf GLOBAL FUNC")),
                "{want:?}"
            ),
            _ => assert!(
                want.iter().any(|s| s.starts_with("maybe WEAK NOTYPE")),
                "{want:?}"
            ),
        }
    }
}

/// Symbols of every visibility, defined by objects: hidden by their own visibility, by another object's hidden
/// reference, by a version script's `local:`, by `--exclude-libs`.
const VIS: &str = r#"
__attribute__((visibility("hidden"))) int vis_hidden(void) { return 3; }
__attribute__((visibility("internal"))) int vis_internal(void) { return 4; }
__attribute__((visibility("protected"))) int vis_protected(void) { return 5; }
__attribute__((visibility("hidden"))) int vis_hdata = 4;
__attribute__((visibility("hidden"), weak)) int vis_hweak(void) { return 1; }
int vis_default(void) { return 6; }
int vis_by_reference(void) { return 7; }
int vis_scripted_local(void) { return 8; }
extern int vis_from_lib(void);
int vis_user(void) {
  return vis_hidden() + vis_internal() + vis_protected() + vis_hdata + vis_hweak() + vis_default()
    + vis_scripted_local() + vis_from_lib();
}
"#;
const VIS_REF: &str = r#"
__attribute__((visibility("hidden"))) int vis_by_reference(void);
int vis_ref(void) { return vis_by_reference(); }
"#;

/// The symbols objects define, as GNU ld lists them: in a shared object, and in a dynamic executable under `-E`,
/// the hidden ones (whatever made them hidden) are local with default visibility, after the nameless file symbol;
/// in a position-dependent or static executable they stay global with their visibility; protected and default
/// ones stay global. (In a PIE without `-E`, GNU ld also makes local the hidden functions it reached through
/// `R_X86_64_PLT32` or a GOT relocation, a choice of its dynamic-symbol pass that rivet does not follow; not
/// compared here.)
#[test]
fn hidden_definitions_are_local_in_shared_objects_as_with_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("symtab-hidden", &["gcc", "readelf", "ar"])
    else {
        return;
    };
    std::fs::write(dir.join("vis.c"), VIS).unwrap();
    std::fs::write(dir.join("ref.c"), VIS_REF).unwrap();
    std::fs::write(dir.join("lib.c"), "int vis_from_lib(void) { return 9; }\n").unwrap();
    std::fs::write(
        dir.join("main.c"),
        "int vis_user(void);\nint main(void) { return vis_user() != 46; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("v.map"),
        "{ global: *; local: vis_scripted_local; };\n",
    )
    .unwrap();
    common::tool_ok(
        "gcc",
        &["-c", "-O1", "-fPIC", "vis.c", "ref.c", "lib.c", "main.c"],
        &dir,
    );
    common::tool_ok("ar", &["rc", "libvis.a", "lib.o"], &dir);
    let common_args = ["vis.o", "ref.o", "libvis.a", "-Wl,--exclude-libs=libvis.a"];
    let cases: &[(&str, &[&str])] = &[
        ("shared", &["-shared", "-Wl,--version-script=v.map"]),
        ("pie-E", &["-pie", "-Wl,-E", "main.o"]),
        ("no-pie", &["-no-pie", "main.o"]),
        ("static", &["-static", "main.o"]),
    ];
    for (case, args) in cases {
        let mut all = args.to_vec();
        all.extend_from_slice(&common_args);
        let [b, r] = link_both(&dir, [&bfd, &shim], &format!("vis-{case}"), &all);
        let (mut want, mut got) = (symtab(&dir, &b), symtab(&dir, &r));
        assert!(
            got.1,
            "{case}: LOCAL entries after a global, or sh_info wrong"
        );
        // The linker's own symbols are `linker_defined_symbols_bind_as_with_gnu_ld`'s.
        want.0.retain(|s| s.starts_with("vis_"));
        got.0.retain(|s| s.starts_with("vis_"));
        assert_eq!(got.0, want.0, "{case}: rivet (left) against GNU ld (right)");
        let local = |n: &str| {
            want.0
                .iter()
                .any(|s| s.starts_with(&format!("{n} LOCAL DEFAULT")))
        };
        let forced = matches!(*case, "shared" | "pie-E");
        assert_eq!(local("vis_hidden"), forced, "{case}: {:#?}", want.0);
    }
}
