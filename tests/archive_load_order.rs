//! Archive members in a final link go where GNU ld loads them, not in archive order: at each archive GNU ld goes
//! over its symbol index again and again, loading every member that defines a name still undefined, so a member
//! wanted by one loaded in the same pass comes after it when it lies after it in the archive, and in the next pass
//! otherwise; a group's archives are gone over again after the group. What users see is the order of static
//! constructors (`.init_array` entries) and of the members' code. Each case is linked with GNU ld and with the
//! linker under test: the programs print the same constructor order, `nm -n` lists the members' functions in
//! the same order, and `.symtab` their local symbols.

mod common;

use std::path::Path;

/// A member `name`.o: a constructor printing `name`, a function `f<name>` calling `f<callee>` for each callee.
fn member(dir: &Path, name: &str, callees: &[&str]) {
    let decls: String = callees
        .iter()
        .map(|c| format!("int f{c}(void);\n"))
        .collect();
    let calls: String = callees.iter().map(|c| format!(" + f{c}()")).collect();
    let src = format!(
        "#include <stdio.h>\n{decls}__attribute__((constructor)) static void ctor_{name}(void) {{ puts(\"{name}\"); }}\n\
         int f{name}(void) {{ return 1{calls}; }}\n"
    );
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    common::tool_ok("gcc", &["-c", &format!("{name}.c")], dir);
}

/// `lib<name>.a` of the members `names`, in that order.
fn archive(dir: &Path, name: &str, names: &[&str]) {
    let objs: Vec<String> = names.iter().map(|n| format!("{n}.o")).collect();
    let mut args = vec!["rcs".to_string(), format!("lib{name}.a")];
    args.extend(objs);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::tool_ok("ar", &args, dir);
}

/// The functions and constructors of the members, in address order.
fn function_order(dir: &Path, exe: &str) -> Vec<String> {
    common::tool_ok("nm", &["-n", exe], dir)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| n.starts_with("ctor_") || (n.len() == 2 && n.starts_with('f')))
        .map(str::to_string)
        .collect()
}

/// Links `main.o` and `args` with the reference linker (`reference`: GNU ld, or lld where GNU ld cannot link) and
/// with the linker under test, runs both, and compares what they print and their functions' and locals' order;
/// returns what the reference's program printed.
fn same_as_reference(
    dir: &Path,
    shim: &Path,
    reference: &Path,
    case: &str,
    args: &[&str],
) -> String {
    let mut seen = Vec::new();
    for (side, shim) in [("ref", reference), ("test", shim)] {
        let b = format!("-B{}/", shim.display());
        let exe = format!("{case}-{side}");
        let mut all = vec![b.as_str(), "-o", &exe, "main.o"];
        all.extend_from_slice(args);
        let o = common::tool("gcc", &all, Some(dir));
        assert!(o.success(), "{case} ({side}): {}", o.log());
        let run = common::tool(dir.join(&exe).to_str().unwrap(), &[], Some(dir));
        assert!(run.success(), "{case} ({side}): {}", run.log());
        seen.push((
            run.stdout_str(),
            function_order(dir, &exe),
            symtab_locals(dir, &exe),
        ));
    }
    assert_eq!(
        seen[1].0, seen[0].0,
        "{case}: constructors ran in another order than with the reference linker"
    );
    assert_eq!(
        seen[1].1, seen[0].1,
        "{case}: functions in another order than the reference linker's"
    );
    assert_eq!(
        seen[1].2, seen[0].2,
        "{case}: .symtab lists the members' locals in another order than the reference linker"
    );
    seen.remove(0).0
}

/// The members' constructors (local symbols) in `.symtab` order, which is the files' order.
fn symtab_locals(dir: &Path, exe: &str) -> Vec<String> {
    common::tool_ok("nm", &["-p", exe], dir)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| n.starts_with("ctor_"))
        .map(str::to_string)
        .collect()
}

fn main_calling(dir: &Path, callees: &[&str]) {
    let decls: String = callees
        .iter()
        .map(|c| format!("int f{c}(void);\n"))
        .collect();
    let calls: String = callees.iter().map(|c| format!(" + f{c}()")).collect();
    std::fs::write(
        dir.join("main.c"),
        format!("{decls}int main(void) {{ return (0{calls}) < 0; }}\n"),
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "main.c"], dir);
}

fn setup(name: &str) -> Option<(std::path::PathBuf, std::path::PathBuf, std::path::PathBuf)> {
    common::against_gnu_ld(name, &["gcc", "ar", "nm"])
}

/// b.o, wanted by main, calls a.o, before it in the archive: a.o is loaded in the second pass, after b.o.
#[test]
fn member_before_its_user_loads_in_the_next_pass() {
    let Some((dir, shim, bfd)) = setup("load-order-next-pass") else {
        return;
    };
    member(&dir, "a", &[]);
    member(&dir, "b", &["a"]);
    archive(&dir, "foo", &["a", "b"]);
    main_calling(&dir, &["b"]);
    let out = same_as_reference(&dir, &shim, &bfd, "next-pass", &["libfoo.a"]);
    assert_eq!(out, "b\na\n", "GNU ld's order changed");
}

/// c.o (wanted by main) wants a.o and d.o, d.o wants b.o: d.o follows c.o in the first pass, a.o and b.o come in
/// the second; e.o, wanted by nobody but `-u`, is loaded in the first pass at its place in the archive. The same
/// under a linker script.
#[test]
fn same_pass_after_next_pass_before() {
    let Some((dir, shim, bfd)) = setup("load-order-passes") else {
        return;
    };
    member(&dir, "a", &[]);
    member(&dir, "b", &[]);
    member(&dir, "c", &["a", "d"]);
    member(&dir, "d", &["b"]);
    member(&dir, "e", &[]);
    archive(&dir, "foo", &["a", "b", "c", "d", "e"]);
    main_calling(&dir, &["c"]);
    let out = same_as_reference(&dir, &shim, &bfd, "passes", &["libfoo.a"]);
    assert_eq!(out, "c\nd\na\nb\n", "GNU ld's order changed");
    let out = same_as_reference(&dir, &shim, &bfd, "undefined", &["-Wl,-u,fe", "libfoo.a"]);
    assert_eq!(out, "c\nd\ne\na\nb\n", "GNU ld's order changed");
    // Under GNU ld's default script given with -T: each statement's inputs in the same order.
    let script = common::gnu_default_script(&["-pie"], &dir);
    std::fs::write(dir.join("gnu-pie.lds"), script).unwrap();
    let args = ["-Wl,-T,gnu-pie.lds", "-Wl,-u,fe", "libfoo.a"];
    let out = same_as_reference(&dir, &shim, &bfd, "script", &args);
    assert_eq!(out, "c\nd\ne\na\nb\n", "GNU ld's order changed");
}

/// Two archives in a group that refer to each other: x1 wants y1, y1 wants x2, which the group's second time
/// over libx loads; main also wants y2, after y1 in liby.
#[test]
fn group_goes_over_its_archives_again() {
    let Some((dir, shim, bfd)) = setup("load-order-group") else {
        return;
    };
    member(&dir, "x1", &["y1"]);
    member(&dir, "x2", &[]);
    member(&dir, "y1", &["x2"]);
    member(&dir, "y2", &[]);
    archive(&dir, "x", &["x2", "x1"]);
    archive(&dir, "y", &["y1", "y2"]);
    main_calling(&dir, &["x1", "y2"]);
    let args = ["-Wl,--start-group", "libx.a", "liby.a", "-Wl,--end-group"];
    let out = same_as_reference(&dir, &shim, &bfd, "group", &args);
    assert_eq!(out, "x1\ny1\ny2\nx2\n", "GNU ld's order changed");
}

/// A member that only an object after its archive wants: loaded where the archive is read again (named a second
/// time, or gone over again at the end of a group), before the objects after that.
#[test]
fn member_wanted_by_a_later_object() {
    let Some((dir, shim, bfd)) = setup("load-order-later-object") else {
        return;
    };
    member(&dir, "c", &[]);
    member(&dir, "d", &[]);
    member(&dir, "late", &["d"]);
    member(&dir, "end", &[]);
    archive(&dir, "foo", &["d", "c"]);
    main_calling(&dir, &["c", "late", "end"]);
    let args = ["libfoo.a", "late.o", "libfoo.a", "end.o"];
    let out = same_as_reference(&dir, &shim, &bfd, "again", &args);
    assert_eq!(out, "c\nlate\nd\nend\n", "GNU ld's order changed");
    let args = [
        "-Wl,--start-group",
        "libfoo.a",
        "late.o",
        "-Wl,--end-group",
        "end.o",
    ];
    let out = same_as_reference(&dir, &shim, &bfd, "in-group", &args);
    assert_eq!(out, "c\nlate\nd\nend\n", "GNU ld's order changed");
}

/// A member that only an object after its archive wants, and no later archive supplies: GNU ld does not find it
/// (an undefined reference); rivet links it as lld does, right after the object that wants it and before the
/// objects after that (crtend.o and crtn.o stay last).
#[test]
fn backward_reference_goes_where_lld_puts_it() {
    let Some((dir, shim, _)) = setup("load-order-backward") else {
        return;
    };
    if !common::have_tool("ld.lld-19") {
        eprintln!("skipped: ld.lld-19 needed");
        return;
    }
    let lld = common::ld_shim_dir(&common::which("ld.lld-19").unwrap(), "load-order-lld");
    member(&dir, "c", &[]);
    member(&dir, "d", &["e"]);
    member(&dir, "e", &[]);
    member(&dir, "late", &["d"]);
    member(&dir, "end", &[]);
    archive(&dir, "foo", &["e", "d", "c"]);
    main_calling(&dir, &["c", "late", "end"]);
    let out = same_as_reference(
        &dir,
        &shim,
        &lld,
        "backward",
        &["libfoo.a", "late.o", "end.o"],
    );
    assert_eq!(out, "c\nlate\nd\ne\nend\n", "lld's order changed");
}

/// Two members with their own copy of an inline function (a COMDAT group) and of a weak function: GNU ld keeps
/// the copies of the member it loads first, not of the first in the archive. main wants b.o, b.o wants a.o (before
/// it in the archive, so loaded in the next pass): b.o's copies win, and a.o's calls go to them too.
#[test]
fn first_loaded_copy_wins() {
    let Some((dir, shim, bfd)) = setup("load-order-comdat") else {
        return;
    };
    for (name, value, calls) in [("a", 1, ""), ("b", 2, " * 100 + fa()")] {
        let src = format!(
            "int fa();\ninline __attribute__((noinline)) int which() {{ return {value}; }}\n\
             __attribute__((weak)) int weak_one() {{ return {value}; }}\n\
             int f{name}() {{ return which() * 10 + weak_one(){calls}; }}\n"
        );
        std::fs::write(dir.join(format!("{name}.cc")), src).unwrap();
        common::tool_ok(
            "g++",
            &["-c", "-O1", "-fno-exceptions", &format!("{name}.cc")],
            &dir,
        );
    }
    archive(&dir, "foo", &["a", "b"]);
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\nint _Z2fbv(void);\nint main(void) { printf(\"%d\\n\", _Z2fbv()); return 0; }\n",
    )
    .unwrap();
    common::tool_ok("gcc", &["-c", "main.c"], &dir);
    let out = same_as_reference(&dir, &shim, &bfd, "comdat", &["libfoo.a"]);
    assert_eq!(out, "242\n", "GNU ld's choice changed");
}

/// Sections no rule places (orphans) come in the order GNU ld first meets them, which is the load order: b.o's
/// before a.o's, although a.o comes first in the archive.
#[test]
fn orphans_in_load_order() {
    let Some((dir, shim, bfd)) = setup("load-order-orphans") else {
        return;
    };
    for (name, callees) in [("a", ""), ("b", " + fa()")] {
        let src = format!(
            "int fa(void);\n__attribute__((section(\".orph_{name}\"), used)) int v{name} = 1;\n\
             int f{name}(void) {{ return v{name}{callees}; }}\n"
        );
        std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
        common::tool_ok("gcc", &["-c", &format!("{name}.c")], &dir);
    }
    archive(&dir, "foo", &["a", "b"]);
    main_calling(&dir, &["b"]);
    let mut orders = Vec::new();
    for (side, shim) in [("ref", &bfd), ("test", &shim)] {
        let b = format!("-B{}/", shim.display());
        let exe = format!("orphans-{side}");
        common::tool_ok("gcc", &[&b, "-o", &exe, "main.o", "libfoo.a"], &dir);
        let sections: Vec<String> = common::tool_ok("readelf", &["-SW", &exe], &dir)
            .lines()
            .filter_map(|l| l.split_whitespace().find(|w| w.starts_with(".orph_")))
            .map(str::to_string)
            .collect();
        orders.push(sections);
    }
    assert_eq!(orders[0], [".orph_b", ".orph_a"], "GNU ld's order changed");
    assert_eq!(
        orders[1], orders[0],
        "orphans in another order than GNU ld's"
    );
}
