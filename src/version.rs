//! Version scripts (`--version-script`): which defined symbols a shared object exports, and under which version.
//!
//! Grammar (GNU ld's): an anonymous node `{ global: a; b*; local: *; };` or named nodes
//! `V1 { global: ...; local: ...; }; V2 { ... } V1;` whose optional trailing names are the nodes they depend on.
//! Patterns are names or globs (`*`, `?`, `[...]`); `extern "C++" { ns::f*; }` patterns match demangled names.
//!
//! Matching follows GNU ld and lld: an exact name anywhere beats every glob; among globs, a `global` one beats a
//! `local` one, the more specific beats the bare `*`, and otherwise the first in the script wins.

use crate::diag::demangle;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub text: String,
    /// Matches the demangled C++ name (`extern "C++"`).
    pub cxx: bool,
    /// The compiled wildcard pattern; `None` for a plain name (matched exactly, before any wildcard).
    pub glob: Option<crate::glob::Glob>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Node {
    /// `None` for the anonymous node (symbols keep the base version).
    pub name: Option<String>,
    pub global: Vec<Pattern>,
    pub local: Vec<Pattern>,
    pub deps: Vec<String>,
}

impl Node {
    fn add(&mut self, local: bool, p: Pattern) {
        if local {
            self.local.push(p)
        } else {
            self.global.push(p)
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct VersionScript {
    pub nodes: Vec<Node>,
}

/// What the script says about one symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// Not mentioned: exported, base version.
    Unmatched,
    /// `local:` — not exported.
    Local,
    /// `global:` in node `k` (index into `nodes`).
    Global(usize),
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut toks = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/").ok_or("unterminated comment")?;
            i += end + 4;
        } else if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if matches!(c, b'{' | b'}' | b';') {
            toks.push((c as char).to_string());
            i += 1;
        } else if c == b'"' {
            let end = text[i + 1..].find('"').ok_or("unterminated string")?;
            // Quoted names are literal (no glob); mark them with a leading quote.
            toks.push(format!("\"{}", &text[i + 1..i + 1 + end]));
            i += end + 2;
        } else {
            let start = i;
            while i < b.len()
                && !b[i].is_ascii_whitespace()
                && !matches!(b[i], b'{' | b'}' | b';' | b'"')
            {
                i += 1;
            }
            let word = &text[start..i];
            // `local:*` is `local:` and `*`.
            match ["global:", "local:"]
                .iter()
                .find(|p| word.len() > p.len() && word.starts_with(*p))
            {
                Some(p) => toks.extend([p.to_string(), word[p.len()..].to_string()]),
                None => toks.push(word.to_string()),
            }
        }
    }
    Ok(toks)
}

fn pattern(tok: &str, cxx: bool) -> Pattern {
    match tok.strip_prefix('"') {
        Some(lit) => Pattern {
            text: lit.to_string(),
            cxx,
            glob: None,
        },
        None => Pattern {
            text: tok.to_string(),
            cxx,
            glob: tok
                .contains(['*', '?', '['])
                .then(|| crate::glob::Glob::new(tok)),
        },
    }
}

/// Parses a version script with GNU ld's grammar: every pattern ends with `;` (the last one of an `extern` block
/// may not), and every node with `;` after its closing brace and dependencies.
pub fn parse(text: &str) -> Result<VersionScript, String> {
    let toks = tokenize(text)?;
    let mut nodes: Vec<Node> = Vec::new();
    let mut names = std::collections::HashSet::new();
    let mut i = 0;
    let tok = |i: usize| toks.get(i).map(String::as_str);
    let expect = |i: usize, want: &str, after: &str| match tok(i) {
        Some(t) if t == want => Ok(()),
        t => Err(format!(
            "expected '{want}' {after}, found {}",
            t.map_or("the end of the script".to_string(), |t| format!("'{t}'"))
        )),
    };
    // An optional `VERSION { ... }` wrapper (the form allowed inside full linker scripts).
    let wrapped = tok(0) == Some("VERSION") && tok(1) == Some("{");
    if wrapped {
        i = 2;
    }
    while i < toks.len() {
        if wrapped && tok(i) == Some("}") {
            i += 1;
            if tok(i) == Some(";") {
                i += 1;
            }
            continue;
        }
        let mut node = Node::default();
        if tok(i) != Some("{") {
            let name = &toks[i];
            if !is_name(name) {
                return Err(format!("expected a version name, found '{name}'"));
            }
            if names.contains(name.as_str()) {
                return Err(format!("duplicate version tag '{name}'"));
            }
            node.name = Some(name.clone());
            i += 1;
        }
        expect(i, "{", "after the version name")?;
        i = node_body(&toks, i + 1, &mut node)?;
        while let Some(t) = tok(i).filter(|&t| t != ";") {
            if !is_name(t) {
                break;
            }
            if !names.contains(t) {
                return Err(format!("version node depends on unknown version '{t}'"));
            }
            node.deps.push(t.to_string());
            i += 1;
        }
        expect(i, ";", "after a version node")?;
        i += 1;
        if (node.name.is_none() || nodes.first().is_some_and(|n| n.name.is_none()))
            && !nodes.is_empty()
        {
            return Err(
                "an anonymous version node cannot be combined with other version nodes".into(),
            );
        }
        names.extend(node.name.clone());
        nodes.push(node);
        // Version indexes are 15 bits (the top bit of a `.gnu.version` entry marks a hidden symbol); 1 is the base.
        if nodes.len() > 0x7ffd {
            return Err(format!("too many version nodes (at most {})", 0x7ffd));
        }
    }
    Ok(VersionScript { nodes })
}

/// Reads a node's patterns from `i` (after its `{`) to its `}`; returns the index after the brace.
fn node_body(toks: &[String], mut i: usize, node: &mut Node) -> Result<usize, String> {
    let tok = |i: usize| toks.get(i).map(String::as_str);
    let eof = || "unexpected end of version script".to_string();
    let mut local = false;
    loop {
        match tok(i).ok_or_else(eof)? {
            "}" => return Ok(i + 1),
            "global:" | "local:" => {
                local = tok(i) == Some("local:");
                i += 1;
            }
            "global" | "local" if tok(i + 1) == Some(":") => {
                local = tok(i) == Some("local");
                i += 2;
            }
            "extern" => {
                let lang = tok(i + 1).unwrap_or("");
                let cxx = match lang {
                    "\"C++" => true,
                    "\"C" => false,
                    _ => return Err(format!("unsupported extern language {lang}")),
                };
                if tok(i + 2) != Some("{") {
                    return Err("expected '{' after extern".into());
                }
                i += 3;
                // Patterns separated by `;`, the last one's optional.
                loop {
                    match tok(i).ok_or_else(eof)? {
                        "}" => break,
                        t if is_name(t) => node.add(local, pattern(t, cxx)),
                        t => return Err(format!("unexpected '{t}' in an extern block")),
                    }
                    i += 1;
                    match tok(i).ok_or_else(eof)? {
                        ";" => i += 1,
                        "}" => {}
                        t => return Err(format!("expected ';' after a pattern, found '{t}'")),
                    }
                }
                if tok(i + 1) != Some(";") {
                    return Err("expected ';' after an extern block".into());
                }
                i += 2;
            }
            t if is_name(t) => {
                node.add(local, pattern(t, false));
                if tok(i + 1) != Some(";") {
                    return Err(format!("expected ';' after '{t}'"));
                }
                i += 2;
            }
            t => return Err(format!("unexpected '{t}' in a version node")),
        }
    }
}

/// Whether a token may be a version name or a pattern (not punctuation).
fn is_name(t: &str) -> bool {
    !t.is_empty() && !matches!(t, "{" | "}" | ";" | ":")
}

impl VersionScript {
    pub fn has_cxx(&self) -> bool {
        self.nodes
            .iter()
            .flat_map(|n| n.global.iter().chain(&n.local))
            .any(|p| p.cxx)
    }

    /// Whether node `k`'s own `local:` patterns hide `name` (and none of its `global:` ones names it): GNU ld
    /// applies this to symbols whose version is given in their name (`name@NODE`).
    pub fn node_hides(&self, k: usize, name: &[u8]) -> bool {
        let n = &self.nodes[k];
        let hit = |p: &Pattern| {
            !p.cxx
                && match &p.glob {
                    Some(g) => g.matches(name),
                    None => p.text.as_bytes() == name,
                }
        };
        n.local.iter().any(hit) && !n.global.iter().any(hit)
    }

    /// The script's verdict for `name` (`demangled` is its C++ demangling when any pattern needs it).
    pub fn binding(&self, name: &[u8], demangled: Option<&str>) -> Binding {
        let target = |p: &Pattern| -> &[u8] {
            if p.cxx {
                demangled.map_or(name, str::as_bytes)
            } else {
                name
            }
        };
        // Exact names first, `global` before `local` within a node, nodes in order.
        for (k, n) in self.nodes.iter().enumerate() {
            if n.global
                .iter()
                .any(|p| p.glob.is_none() && p.text.as_bytes() == target(p))
            {
                return Binding::Global(k);
            }
            if n.local
                .iter()
                .any(|p| p.glob.is_none() && p.text.as_bytes() == target(p))
            {
                return Binding::Local;
            }
        }
        // Then globs other than a bare `*`, then `*`.
        for catch_all in [false, true] {
            for (k, n) in self.nodes.iter().enumerate() {
                let hit = |p: &Pattern| {
                    p.glob
                        .as_ref()
                        .is_some_and(|g| (p.text == "*") == catch_all && g.matches(target(p)))
                };
                if n.global.iter().any(hit) {
                    return Binding::Global(k);
                }
                if n.local.iter().any(hit) {
                    return Binding::Local;
                }
            }
        }
        Binding::Unmatched
    }
}

/// Demangles for `extern "C++"` patterns: the C++ name without the parameter list's spaces normalised, as
/// GNU ld compares it.
pub fn demangle_cxx(name: &[u8]) -> Option<String> {
    if !name.starts_with(b"_Z") {
        return None;
    }
    let d = demangle(name);
    (d.as_bytes() != name).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nodes_and_matches_like_gnu_ld() {
        let s = parse(
            "VER_1 { global: foo; bar*; extern \"C++\" { ns::f*; \"ns::exact()\"; }; local: *; };\n\
             VER_2 { global: foo2; baz; } VER_1;\n",
        )
        .unwrap();
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.nodes[1].deps, vec!["VER_1".to_string()]);
        assert_eq!(s.binding(b"foo", None), Binding::Global(0));
        assert_eq!(s.binding(b"barx", None), Binding::Global(0));
        assert_eq!(s.binding(b"baz", None), Binding::Global(1));
        assert_eq!(s.binding(b"other", None), Binding::Local);
        assert_eq!(
            s.binding(b"_ZN2ns3fooEv", Some("ns::foo()")),
            Binding::Global(0)
        );
        assert_eq!(
            s.binding(b"_ZN2ns5exactEv", Some("ns::exact()")),
            Binding::Global(0)
        );
        let anon = parse("{ global: a; local: *; };").unwrap();
        assert_eq!(anon.nodes[0].name, None);
        assert_eq!(anon.binding(b"a", None), Binding::Global(0));
        assert_eq!(anon.binding(b"b", None), Binding::Local);
    }

    /// Each script as GNU ld 2.40 takes it (issue 34: a missing `;` and nested braces were accepted).
    #[test]
    fn grammar_matches_gnu_ld() {
        for ok in [
            "{ global: foo; local: *; };",
            "{ global: foo; local:*; };",
            "{ global : foo ; local : * ; } ;",
            "V1 { foo; }; V2 { bar; } V1;",
            "V1 { extern \"C++\" { foo }; };",
            "V1 { };",
        ] {
            assert!(parse(ok).is_ok(), "{ok}: {:?}", parse(ok));
        }
        for bad in [
            "{ global: foo; local: *; }",
            "{ global: foo local: *; };",
            "V1 { foo; }; V2 { bar; } V3;",
            "V1 { foo; }; V1 { bar; };",
            "{ foo; }; V2 { bar; };",
            "V1 { { foo; }; };",
            "V1 { extern \"C++\" { foo; } };",
            "V1 { foo; };;",
            "V1 { foo; } V1;",
        ] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
        let deep = format!("V1 {{ {} }};", "{".repeat(100_000));
        assert!(parse(&deep).is_err());
        let many: String = (0..0x8000).map(|k| format!("V{k} {{ }};\n")).collect();
        assert!(parse(&many).unwrap_err().contains("too many version nodes"));
    }

    #[test]
    fn exact_beats_glob_and_specific_glob_beats_star() {
        let s = parse("A { global: *; }; B { local: secret; global: p_*; };").unwrap();
        assert_eq!(s.binding(b"secret", None), Binding::Local);
        assert_eq!(s.binding(b"p_x", None), Binding::Global(1));
        assert_eq!(s.binding(b"q", None), Binding::Global(0));
    }
}
