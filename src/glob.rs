//! Wildcard patterns, as GNU ld matches them in version scripts, dynamic lists and linker scripts: `*`, `?` and
//! `[set]`. [`Glob`] compiles a pattern once; the common shapes (a plain name, `PREFIX*`, `*SUFFIX`,
//! `PREFIX*SUFFIX`, `*`) match without the general matcher, because a linker script tests every input section of
//! a link against them (GNU ld's default script tests each `.text.NAME` against `.text.*_unlikely`, and the
//! general matcher's backtracking over a long mangled name costs as much as the rest of the link's matching).

/// A compiled wildcard pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    shape: Shape,
    /// The pattern's literal bytes before its first wildcard (at most 8) as a little-endian word, and the mask of
    /// those bytes: a name whose first bytes differ is rejected by one compare, before any call to `memcmp`.
    head: u64,
    mask: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// `*`: everything.
    Any,
    Exact(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    /// `PREFIX*SUFFIX`, no other wildcard: the name is at least as long as both and has both.
    Infix(Vec<u8>, Vec<u8>),
    /// Anything else, matched by backtracking over `*`.
    General(Vec<u8>),
}

fn is_wild(c: u8) -> bool {
    matches!(c, b'*' | b'?' | b'[')
}

/// A name's first 8 bytes as a little-endian word, zeros past its end.
#[inline]
pub fn first8(name: &[u8]) -> u64 {
    match name.first_chunk::<8>() {
        Some(c) => u64::from_le_bytes(*c),
        None => {
            let mut b = [0u8; 8];
            b[..name.len()].copy_from_slice(name);
            u64::from_le_bytes(b)
        }
    }
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        let p = pattern.as_bytes();
        let wild = p.iter().position(|&c| is_wild(c));
        let shape = match wild {
            _ if p == b"*" => Shape::Any,
            None => Shape::Exact(p.to_vec()),
            Some(i) if i == p.len() - 1 && p[i] == b'*' => Shape::Prefix(p[..i].to_vec()),
            Some(0) if p[0] == b'*' && !p[1..].iter().any(|&c| is_wild(c)) => {
                Shape::Suffix(p[1..].to_vec())
            }
            Some(i) if p[i] == b'*' && !p[i + 1..].iter().any(|&c| is_wild(c)) => {
                Shape::Infix(p[..i].to_vec(), p[i + 1..].to_vec())
            }
            Some(_) => Shape::General(p.to_vec()),
        };
        let literal = &p[..wild.unwrap_or(p.len()).min(8)];
        let mask = match literal.len() {
            8 => u64::MAX,
            n => (1u64 << (8 * n)) - 1,
        };
        Glob {
            shape,
            head: first8(literal),
            mask,
        }
    }

    /// The second byte every name this pattern matches has, when the pattern fixes it (`.text.*`: `t`); names
    /// shorter than two bytes count as having 0 there.
    pub fn lead(&self) -> Option<u8> {
        let p: &[u8] = match &self.shape {
            Shape::Any | Shape::Suffix(_) => return None,
            Shape::Exact(p) | Shape::Prefix(p) | Shape::Infix(p, _) | Shape::General(p) => p,
        };
        match (p.first(), p.get(1)) {
            (Some(&a), Some(&b)) if !is_wild(a) && !is_wild(b) => Some(b),
            (Some(&a), None) if !is_wild(a) && matches!(self.shape, Shape::Exact(_)) => Some(0),
            _ => None,
        }
    }

    /// The pattern's literal head and its mask: a name `n` can match only if `first8(n) & mask == head`.
    pub fn head(&self) -> (u64, u64) {
        (self.head, self.mask)
    }

    #[inline]
    pub fn matches(&self, name: &[u8]) -> bool {
        if first8(name) & self.mask != self.head {
            return false;
        }
        match &self.shape {
            Shape::Any => true,
            Shape::Exact(e) => name == e.as_slice(),
            Shape::Prefix(p) => name.starts_with(p),
            Shape::Suffix(s) => name.ends_with(s),
            Shape::Infix(p, s) => {
                name.len() >= p.len() + s.len() && name.starts_with(p) && name.ends_with(s)
            }
            Shape::General(p) => matches(p, name),
        }
    }
}

/// fnmatch without flags, as GNU ld matches names: `*` any run (slashes too), `?` one byte, `[set]` with ranges
/// and `!`/`^` negation (an unclosed `[` is itself).
pub fn matches(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    star = Some((p, i));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    i += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class_match(&pat[p..], s[i]) {
                        if matched {
                            p += next;
                            i += 1;
                            continue;
                        }
                    } else if s[i] == b'[' {
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
                c if c == s[i] => {
                    p += 1;
                    i += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, si)) => {
                p = sp + 1;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// `[...]` at the start of `pat`: whether `c` is in the class, and the class's length; `None` if unterminated.
fn class_match(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut k = 1;
    let negate = matches!(pat.get(k), Some(b'!' | b'^'));
    if negate {
        k += 1;
    }
    let mut matched = false;
    let mut first = true;
    while k < pat.len() && (pat[k] != b']' || first) {
        first = false;
        if k + 2 < pat.len() && pat[k + 1] == b'-' && pat[k + 2] != b']' {
            matched |= pat[k] <= c && c <= pat[k + 2];
            k += 3;
        } else {
            matched |= pat[k] == c;
            k += 1;
        }
    }
    (k < pat.len()).then_some((matched != negate, k + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        let g = Glob::new(p);
        // The fast shapes agree with the general matcher.
        assert_eq!(
            g.matches(s.as_bytes()),
            matches(p.as_bytes(), s.as_bytes()),
            "{p} {s}"
        );
        g.matches(s.as_bytes())
    }

    #[test]
    fn globs() {
        assert!(m("*", ".text") && m("*", ""));
        assert!(m(".text", ".text") && !m(".text", ".text.x"));
        assert!(m(".text.*", ".text.hot") && m(".text.*", ".text.") && !m(".text.*", ".text"));
        assert!(m("*.o", "dir/crtbegin.o") && !m("*.o", "crtbegin.a"));
        assert!(m("*crtbegin?.o", "/usr/lib/crtbeginS.o") && !m("*crtbegin?.o", "crtbegin.o"));
        assert!(m(".data.[a-c]*", ".data.b1") && !m(".data.[a-c]*", ".data.d"));
        assert!(m(".x[!0-9]", ".xa") && !m(".x[!0-9]", ".x5") && m(".x[^0-9]", ".xq"));
        assert!(m("a*b*c", "aXXbYYc") && m("a*b*c", "abc") && !m("a*b*c", "acb"));
        assert!(m("*.text.*.cold", ".text.foo.cold") && !m("*.text.*.cold", ".text.cold"));
        assert!(m("[]]x", "]x") && m("a[", "a[") && m("*[", "x["));
        assert!(m("??", "ab") && !m("??", "a"));
        assert!(
            m(".text.*_unlikely", ".text.f_unlikely") && m(".text.*_unlikely", ".text._unlikely")
        );
        assert!(
            !m(".text.*_unlikely", ".text_unlikely")
                && !m(".text.*_unlikely", ".text.f_unlikely.x")
        );
        assert!(m("a*a", "aa") && !m("a*a", "a") && m("*crtbegin.o", "crtbegin.o"));
        let infix = Shape::Infix(b".text.".to_vec(), b"_unlikely".to_vec());
        assert_eq!(Glob::new(".text.*_unlikely").shape, infix);
        assert!(matches!(Glob::new("a*b*c").shape, Shape::General(_)));
        assert!(matches!(Glob::new("a*b?").shape, Shape::General(_)));
        // The first-bytes filter: names shorter than the literal part, and exactly 8 literal bytes.
        assert!(
            !m(".text.unlikely", ".text")
                && m(".text.un*", ".text.unX")
                && !m(".text.un*", ".text.uX")
        );
        assert!(
            m("12345678", "12345678") && !m("12345678", "1234567") && !m("12345678", "123456789")
        );
    }

    #[test]
    fn version_script_patterns() {
        assert!(matches(b"a*c", b"abbbc"));
        assert!(matches(b"a?c", b"abc"));
        assert!(!matches(b"a?c", b"ac"));
        assert!(matches(b"[a-c]x", b"bx"));
        assert!(!matches(b"[!a-c]x", b"bx"));
        assert!(matches(b"*", b""));
        assert!(!matches(b"abc", b"abd"));
    }
}
