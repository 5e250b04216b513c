//! A linker script given as a link *input* (glibc's `libc.so` and friends, or any text file on the command line):
//! what of it the link applies. GNU ld reads any command there; rivet applies the input commands (`INPUT`,
//! `GROUP`, `AS_NEEDED`, `SEARCH_DIR`) and the format checks, and refuses the rest with the command's place.

use super::ast::{Command, ScriptInput};
use super::parse::{Includer, parse};

#[derive(Debug, Default, PartialEq, Eq)]
pub struct InputScript {
    pub inputs: Vec<ScriptInput>,
    pub search_dirs: Vec<String>,
}

/// Reads input script `file` (its name, for errors) with text `text`.
pub fn parse_input(file: &str, text: &str, include: Includer) -> Result<InputScript, String> {
    let mut out = InputScript::default();
    for c in parse(file, text, include)? {
        match c.cmd {
            Command::Input(i) | Command::Group(i) => out.inputs.extend(i),
            Command::SearchDir(d) => out.search_dirs.push(d),
            Command::OutputFormat(f) => {
                if let Some(bad) = f.iter().find(|f| !f.starts_with("elf64-x86-64")) {
                    return Err(format!("{}: unsupported output format '{bad}'", c.at));
                }
            }
            Command::OutputArch(a) if a == "i386:x86-64" => {}
            Command::OutputArch(a) => {
                return Err(format!("{}: unsupported output architecture '{a}'", c.at));
            }
            other => {
                return Err(format!(
                    "{}: {} in a linker script is not supported yet",
                    c.at,
                    super::command_name(&other)
                ));
            }
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
        let p = parse_input("libc.so", s, &no_include).unwrap();
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

    fn no_include(name: &str) -> Result<(String, String), String> {
        Err(format!("cannot find {name}"))
    }

    #[test]
    fn rejects_what_it_does_not_apply() {
        let err = |s: &str| parse_input("x.lds", s, &no_include).unwrap_err();
        assert_eq!(
            err("GROUP(a.o)\n  SECTIONS { . = 0x1000; }"),
            "x.lds:2:3: SECTIONS in a linker script is not supported yet"
        );
        assert_eq!(err("GROUP ( a.o"), "x.lds:1:12: unexpected end of script");
        assert_eq!(
            err("OUTPUT_FORMAT(elf32-i386)"),
            "x.lds:1:1: unsupported output format 'elf32-i386'"
        );
        assert_eq!(err("INCLUDE y.lds"), "x.lds:1:1: cannot find y.lds");
    }
}
