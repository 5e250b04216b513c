//! The linker-script subset that appears as link *inputs*: glibc's `libc.so` and friends
//! (`OUTPUT_FORMAT`, `OUTPUT_ARCH`, `GROUP`, `INPUT`, `AS_NEEDED`, `SEARCH_DIR`). Full scripts given with `-T`
//! are rejected by `args`.

/// One input named by a script.
#[derive(Debug, PartialEq, Eq)]
pub struct ScriptInput {
    /// A path, or `-lNAME`.
    pub name: String,
    pub as_needed: bool,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct InputScript {
    pub inputs: Vec<ScriptInput>,
    pub search_dirs: Vec<String>,
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut toks = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/").ok_or("unterminated comment")?;
            i += end + 4;
        } else if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'(' || c == b')' || c == b';' {
            toks.push((c as char).to_string());
            i += 1;
        } else if c == b'"' {
            let end = text[i + 1..].find('"').ok_or("unterminated string")?;
            toks.push(text[i + 1..i + 1 + end].to_string());
            i += end + 2;
        } else {
            let start = i;
            while i < b.len()
                && !b[i].is_ascii_whitespace()
                && !matches!(b[i], b'(' | b')' | b',' | b';' | b'"')
            {
                i += 1;
            }
            toks.push(text[start..i].to_string());
        }
    }
    Ok(toks)
}

/// Parses an input linker script. Returns an error for commands rivet does not implement.
pub fn parse(text: &str) -> Result<InputScript, String> {
    let toks = tokenize(text)?;
    let mut out = InputScript::default();
    let mut i = 0;
    let expect_open = |i: usize| -> Result<(), String> {
        if toks.get(i).map(String::as_str) == Some("(") {
            Ok(())
        } else {
            Err(format!("expected '(' after {}", toks[i - 1]))
        }
    };
    while i < toks.len() {
        let cmd = toks[i].as_str();
        match cmd {
            ";" => i += 1,
            "GROUP" | "INPUT" => {
                expect_open(i + 1)?;
                i += 2;
                let mut as_needed = false;
                loop {
                    match toks.get(i).map(String::as_str) {
                        None => return Err(format!("unterminated {cmd}(")),
                        Some(")") if as_needed => as_needed = false,
                        Some(")") => {
                            i += 1;
                            break;
                        }
                        Some("AS_NEEDED") => {
                            expect_open(i + 1)?;
                            i += 1;
                            as_needed = true;
                        }
                        Some(name) => out.inputs.push(ScriptInput {
                            name: name.to_string(),
                            as_needed,
                        }),
                    }
                    i += 1;
                }
            }
            "OUTPUT_FORMAT" | "OUTPUT_ARCH" | "SEARCH_DIR" => {
                expect_open(i + 1)?;
                i += 2;
                while toks.get(i).map(String::as_str) != Some(")") {
                    let t = toks.get(i).ok_or_else(|| format!("unterminated {cmd}("))?;
                    if cmd == "SEARCH_DIR" {
                        out.search_dirs.push(t.clone());
                    } else if cmd == "OUTPUT_FORMAT" && !t.starts_with("elf64-x86-64") {
                        return Err(format!("unsupported output format '{t}'"));
                    }
                    i += 1;
                }
                i += 1;
            }
            other => return Err(format!("unsupported linker script command '{other}'")),
        }
    }
    Ok(out)
}

/// Whether a file looks like a text linker script rather than a binary we do not recognise.
pub fn looks_like_script(data: &[u8]) -> bool {
    let head = &data[..data.len().min(4096)];
    !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\t' || b == b'\n' || b == b'\r' || (0x20..0x7f).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_glibc_libc_so() {
        let s = "/* GNU ld script\n   Use the shared library, but some functions are only in\n   the static library. */\n\
                 OUTPUT_FORMAT(elf64-x86-64)\n\
                 GROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  \
                 AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n";
        let p = parse(s).unwrap();
        assert_eq!(
            p.inputs,
            vec![
                ScriptInput {
                    name: "/lib/x86_64-linux-gnu/libc.so.6".into(),
                    as_needed: false
                },
                ScriptInput {
                    name: "/usr/lib/x86_64-linux-gnu/libc_nonshared.a".into(),
                    as_needed: false
                },
                ScriptInput {
                    name: "/lib64/ld-linux-x86-64.so.2".into(),
                    as_needed: true
                },
            ]
        );
    }

    #[test]
    fn rejects_section_commands() {
        assert!(parse("SECTIONS { . = 0x1000; }").is_err());
        assert!(parse("GROUP ( a.o").is_err());
        assert!(parse("OUTPUT_FORMAT(elf32-i386)").is_err());
    }
}
