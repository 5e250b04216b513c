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
