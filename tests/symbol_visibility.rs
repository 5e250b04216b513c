//! Visibility in a shared object's symbol tables (issue 31): a protected definition stays `PROTECTED` in
//! `.dynsym` (rivet wrote every dynamic symbol as `DEFAULT`), and `__start_SEC`/`__stop_SEC` get
//! `-z start-stop-visibility=`'s (GNU ld's default: protected) in `.dynsym` and `.symtab`. Compared with GNU ld,
//! except that a hidden `__start_` symbol is not exported at all (GNU ld 2.40 lists it in `.dynsym` as `HIDDEN`).

mod common;

const SRC: &str = r#"
__attribute__((section("mysec"), used)) int in_sec = 3;
extern int __start_mysec[], __stop_mysec[];
__attribute__((visibility("protected"))) int protected_fn(void) { return 1; }
__attribute__((visibility("protected"))) int protected_data = 2;
long count(void) { return __stop_mysec - __start_mysec + protected_fn() + protected_data; }
"#;

/// (visibility, name) of the named symbols in `.dynsym` (`dyn`) or `.symtab`, sorted.
fn visibilities(dir: &std::path::Path, so: &str, dynamic: bool) -> Vec<String> {
    let flag = if dynamic { "--dyn-syms" } else { "--syms" };
    let out = common::tool_ok("readelf", &[flag, "-W", so], dir);
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.get(7)?;
            (name.contains("mysec") || name.starts_with("protected_") || name == "count")
                .then(|| format!("{} {name}", f[5]))
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn visibilities_follow_gnu_ld() {
    let Some((dir, shim, bfd)) = common::against_gnu_ld("symbol-visibility", &["gcc", "readelf"])
    else {
        return;
    };
    std::fs::write(dir.join("s.c"), SRC).unwrap();
    common::tool_ok("gcc", &["-fPIC", "-c", "s.c"], &dir);
    for (k, z) in [
        "",
        "-Wl,-z,start-stop-visibility=default",
        "-Wl,-z,start-stop-visibility=hidden",
    ]
    .iter()
    .enumerate()
    {
        let mut views = Vec::new();
        for (side, shim) in [("ref", &bfd), ("test", &shim)] {
            let so = format!("s{k}-{side}.so");
            let b = format!("-B{}/", shim.display());
            let mut args = vec![b.as_str(), "-shared", "-o", &so, "s.o"];
            if !z.is_empty() {
                args.push(z);
            }
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{z} ({side}): {}", o.log());
            views.push((
                visibilities(&dir, &so, true),
                visibilities(&dir, &so, false),
            ));
        }
        if z.ends_with("hidden") {
            // GNU ld exports the hidden symbols anyway; rivet does not.
            views[0].0.retain(|s| !s.starts_with("HIDDEN"));
        }
        assert_eq!(views[1], views[0], "{z}");
        assert!(
            views[1].0.iter().any(|s| s == "PROTECTED protected_data"),
            "{:?}",
            views[1]
        );
    }
}
