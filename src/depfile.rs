//! `--dependency-file=FILE`: a Makefile rule saying that the output depends on every file the link read (objects,
//! archives, shared objects, linker scripts, version scripts), with an empty rule for each so that a file that
//! goes away does not break the build, as lld writes it.

use crate::args::Config;
use crate::diag::{Errors, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Writes the rule for `config`'s output, depending on `inputs` (each once) and the scripts the command line names.
pub fn write(path: &Path, config: &Config, inputs: &[PathBuf]) -> Result<()> {
    let mut deps: Vec<&Path> = Vec::new();
    let scripts = config.version_script.iter().chain(&config.dynamic_list);
    for p in inputs.iter().chain(scripts) {
        if !deps.contains(&p.as_path()) {
            deps.push(p);
        }
    }
    let mut out = format!("{}:", quote(&config.output));
    for d in &deps {
        let _ = write!(out, " \\\n  {}", quote(d));
    }
    out.push('\n');
    for d in &deps {
        let _ = write!(out, "\n{}:\n", quote(d));
    }
    std::fs::write(path, out).map_err(|e| {
        Errors::one(format!(
            "cannot write dependency file {}: {e}",
            path.display()
        ))
    })
}

/// A path as make reads it: spaces and `#` escaped with a backslash, `$` doubled.
fn quote(p: &Path) -> String {
    let mut s = String::new();
    for c in p.display().to_string().chars() {
        match c {
            ' ' | '#' => {
                s.push('\\');
                s.push(c);
            }
            '$' => s.push_str("$$"),
            _ => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_each_input_once_quoted() {
        let dir = std::env::temp_dir().join(format!("rivet-depfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = Config {
            output: PathBuf::from("out put"),
            ..Default::default()
        };
        let inputs = [
            PathBuf::from("a.o"),
            PathBuf::from("lib$x.a"),
            PathBuf::from("a.o"),
        ];
        let file = dir.join("deps.d");
        write(&file, &config, &inputs).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text,
            "out\\ put: \\\n  a.o \\\n  lib$$x.a\n\na.o:\n\nlib$$x.a:\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
