//! The shape of `src/`: modules form layers in pipeline order, with no import cycles. Each module's dependencies
//! are the `crate::NAME` paths its files name (a `use` line or a path in code); a module is a top-level file
//! `src/NAME.rs` or folder `src/NAME/`. The test fails on any strongly connected set of more than one module,
//! listing it with the edges that close it.
//!
//! A second test keeps architecture facts in `src/arch/`: x86-64 relocation and machine names and its instruction
//! bytes must not appear elsewhere (outside unit tests, which hold sample command lines).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module -> the modules it names, from the source text (test modules included: they must not close a cycle
/// either).
fn dependencies(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let entry = deps.entry(m.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // A grouped import, `crate::{a, b::c}`, names each module inside.
            let names: Vec<String> = if rest.starts_with('{') {
                let group = &rest[1..rest.find('}').unwrap_or(rest.len())];
                group
                    .split(',')
                    .map(|p| p.trim().split("::").next().unwrap_or("").to_string())
                    .collect()
            } else {
                vec![name]
            };
            for n in names {
                if n != m && modules.contains(&n) && n != "main" {
                    entry.insert(n);
                }
            }
        }
    }
    deps
}

/// Tarjan's strongly connected components of more than one module, each sorted.
fn cycles(deps: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        deps: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let deps = s.deps;
        for w in deps.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        deps,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in deps.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_import_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let deps = dependencies(&src);
    let mut report = String::new();
    for c in cycles(&deps) {
        report += &format!("import cycle among {{{}}}:\n", c.join(", "));
        for a in &c {
            for b in &deps[a] {
                if c.contains(b) {
                    report += &format!("  {a} -> {b}\n");
                }
            }
        }
    }
    assert!(report.is_empty(), "{report}");
    // The architecture layer is the bottom one: it names no other module.
    assert!(
        deps["arch"].is_empty(),
        "src/arch/ depends on {:?}",
        deps["arch"]
    );
}

/// Names and byte sequences that are x86-64 (and i386) facts: relocation types, the machine, its section types, its dynamic
/// linker, and instruction bytes of its PLT entries and TLS relaxations.
const X86_64_FACTS: &[&str] = &[
    "R_X86_64_",
    "EM_X86_64",
    "R_386_",
    "EM_386",
    "SHT_X86_64",
    "ld-linux-x86-64",
    "0xff, 0x25",
    "0xff, 0x35",
    "0x64, 0x48, 0x8b",
    "0x66, 0x90",
    "0x0f, 0x1f",
];

#[test]
fn architecture_facts_stay_in_arch() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        if f.starts_with(src.join("arch")) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // Unit tests come last in a file (clippy's items_after_test_module) and may quote real command lines.
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            for fact in X86_64_FACTS {
                if line.contains(fact) {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "x86-64 facts outside src/arch/:\n{}",
        found.join("\n")
    );
}

/// The checker itself: a cycle of three is found, a chain is not.
#[test]
fn cycle_finder_finds_cycles() {
    let mk = |edges: &[(&str, &str)]| {
        let mut d: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            d.entry(a.to_string()).or_default().insert(b.to_string());
            d.entry(b.to_string()).or_default();
        }
        d
    };
    assert_eq!(
        cycles(&mk(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert!(cycles(&mk(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}

/// The names an index into a table of files, input sections, output sections or symbols goes by in `src/`. (An
/// object's own symbol-table index goes by `i`: it has no type of its own, being the ELF one.)
const INDEX_NAMES: &[&str] = &["f", "file", "s", "sec", "shndx", "osec", "sym"];

/// The declarations of such a name that hold something else than an index of `src/index.rs`, and why: (file under
/// `src/`, the declaration's text, what it holds). The test also fails on an entry that no longer matches.
const NOT_INDICES: &[(&str, &str, &str)] = &[
    // ELF's own numbers, written or read as they are.
    (
        "layout/mod.rs",
        "pub shndx: u32",
        "an output section header number",
    ),
    (
        "synthetic/symtab.rs",
        "shndx: u32",
        "a raw st_shndx (SHN_ABS, SHN_COMMON…)",
    ),
    (
        "write/mod.rs",
        "shndx: u32",
        "a raw st_shndx (SHN_ABS, SHN_COMMON…)",
    ),
    ("synthetic/rela.rs", "pub sym: u32", "a .dynsym index"),
    ("synthetic/got_plt.rs", "sym: u32", "a .dynsym index"),
    (
        "relocatable/relocs.rs",
        "pub sym: u32",
        "an output .symtab index",
    ),
    (
        "write/emit_relocs.rs",
        "sym: u32",
        "an output .symtab index",
    ),
    // `Def::Object`, `Target::Object` and `of_local`: an object's own symbol-table index, beside its `FileId`.
    ("symbols.rs", "sym: u32", "an object's symbol-table index"),
    ("resolve.rs", "sym: u32", "an object's symbol-table index"),
];

/// The declarations in `code` of an index name with a plain integer type, as (line, declaration): a function or
/// closure parameter or a struct field (`let` bindings are a loop's own business).
fn bare_indices(code: &str) -> Vec<(usize, String)> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for name in INDEX_NAMES {
            for ty in ["usize", "u32"] {
                let decl = format!("{name}: {ty}");
                for (at, _) in line.match_indices(&decl) {
                    let before = &line[..at];
                    let after = &line[at + decl.len()..];
                    let whole_name = !before.chars().next_back().is_some_and(ident);
                    // `usize::MAX` is a value (a struct literal's field), not a type.
                    let whole_type = !after.chars().next().is_some_and(|c| ident(c) || c == ':');
                    let is_let = before.trim_end().ends_with("let")
                        || before.trim_end().ends_with("let mut");
                    if whole_name && whole_type && !is_let {
                        found.push((n + 1, decl.clone()));
                    }
                }
            }
        }
    }
    found
}

/// Parameters and fields that index files, sections and symbols have the types of `src/index.rs`, so that
/// passing a file index where a section index is expected does not compile.
#[test]
fn indices_are_typed() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut used = vec![false; NOT_INDICES.len()];
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        // Unit tests come last in a file and build their indices from literals.
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or("");
        let lines: Vec<&str> = code.lines().collect();
        let mut last = 0;
        for (n, decl) in bare_indices(code) {
            let line = lines[n - 1].trim();
            let excused = NOT_INDICES.iter().position(|(file, text, _)| {
                *file == rel && text.ends_with(&decl) && line.contains(text)
            });
            match excused {
                Some(k) => used[k] = true,
                None if n != last => {
                    found.push(format!("src/{rel}:{n}: {line}"));
                    last = n;
                }
                None => {}
            }
        }
    }
    for (k, (file, text, _)) in NOT_INDICES.iter().enumerate() {
        if !used[k] {
            found.push(format!(
                "NOT_INDICES: src/{file} declares no `{text}` any more"
            ));
        }
    }
    assert!(
        found.is_empty(),
        "{} file, section or symbol indices without their type (src/index.rs):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The finder itself: parameters, fields and closure parameters are found; `let` bindings, longer names and
/// values are not.
#[test]
fn bare_index_finder() {
    let code = "fn a(f: usize, s: u32) {}\nstruct X { pub osec: usize }\nlet s: usize = 0;\n|sym: u32| 0;\n\
                fn b(fs: usize, s: usize_t) {}\nX { s: usize::MAX }";
    let found: Vec<String> = bare_indices(code)
        .into_iter()
        .map(|(n, d)| format!("{n} {d}"))
        .collect();
    assert_eq!(
        found,
        ["1 f: usize", "1 s: u32", "2 osec: usize", "4 sym: u32"]
    );
}
