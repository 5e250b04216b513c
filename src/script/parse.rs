//! The linker-script parser: GNU ld's command language (the manual's "Linker Scripts" chapter) into the
//! commands of `ast`. Every error names the script, line and column.

use super::ast::*;
use super::lexer::{Lexer, Pos};
use crate::expr::Expr;

/// Reads an `INCLUDE`d file: the name as written to (the path found, its text).
pub type Includer<'i> = &'i dyn Fn(&str) -> Result<(String, String), String>;

pub struct Parser<'a, 'i> {
    lex: Lexer<'a>,
    file: &'a str,
    include: Includer<'i>,
    depth: u32,
    /// The `SEARCH_DIR`s read so far, where `INCLUDE` looks after the link's search path (GNU ld adds them to
    /// it).
    search_dirs: Vec<String>,
}

/// Parses a whole script named `file` (for errors).
pub fn parse(file: &str, text: &str, include: Includer) -> Result<Vec<Located>, String> {
    Parser::new(file, text, include, 0).script()
}

/// The commands of a `SECTIONS` body without the `SECTIONS { }` around them (`--section-ordering-file`).
pub fn parse_sections_body(
    file: &str,
    text: &str,
    include: Includer,
) -> Result<Vec<SectionsCommand>, String> {
    let mut p = Parser::new(file, text, include, 0);
    let mut out = Vec::new();
    while p.peek()?.is_some() {
        p.sections_command(&mut out)?;
    }
    Ok(out)
}

/// Where a command is, for what GNU ld's lexer takes into a name (its states): at the top level and in
/// `SECTIONS`, or inside an output section description (where names are file and section patterns).
#[derive(Clone, Copy)]
enum Ctx {
    Script,
    Body,
}

impl Ctx {
    /// Whether GNU ld's lexer continues a name with `c` here.
    fn name_char(self, c: u8) -> bool {
        c.is_ascii_alphanumeric()
            || b"_/.\\$~-+=:[],".contains(&c)
            || matches!(self, Ctx::Body) && b"?*^!".contains(&c)
    }
}

const ASSIGN_OPS: &[&str] = &["=", "+=", "-=", "*=", "/=", "<<=", ">>=", "&=", "|=", "^="];

impl<'a, 'i> Parser<'a, 'i> {
    fn new(file: &'a str, text: &'a str, include: Includer<'i>, depth: u32) -> Self {
        Parser {
            lex: Lexer::new(text),
            file,
            include,
            depth,
            search_dirs: Vec::new(),
        }
    }

    fn error_at(&self, p: Pos, msg: impl std::fmt::Display) -> String {
        let (line, col) = self.lex.line_col(p);
        format!("{}:{line}:{col}: {msg}", self.file)
    }

    fn error(&mut self, msg: impl std::fmt::Display) -> String {
        let p = self.lex.pos();
        // Point at the next token, not the whitespace before it.
        let p = match self.lex.next_word() {
            Ok(Some((_, p))) => p,
            _ => p,
        };
        self.error_at(p, msg)
    }

    /// Lexer errors with the position.
    fn lexed<T>(&self, r: Result<T, String>) -> Result<T, String> {
        r.map_err(|e| self.error_at(self.lex.pos(), e))
    }

    fn peek(&mut self) -> Result<Option<&'a str>, String> {
        let r = self.lex.peek_word();
        self.lexed(r)
    }

    fn next(&mut self) -> Result<(&'a str, Pos), String> {
        let r = self.lex.next_word();
        match self.lexed(r)? {
            Some(w) => Ok(w),
            None => Err(self.error_at(self.lex.pos(), "unexpected end of script")),
        }
    }

    fn eat(&mut self, tok: &str) -> Result<bool, String> {
        if self.peek()? == Some(tok) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect(&mut self, tok: &str) -> Result<(), String> {
        match self.peek()? {
            Some(t) if t == tok => {
                self.next()?;
                Ok(())
            }
            Some(t) => {
                let t = t.to_string();
                Err(self.error(format!("expected '{tok}', found '{t}'")))
            }
            None => Err(self.error(format!("expected '{tok}' before the end of the script"))),
        }
    }

    fn name(&mut self, what: &str) -> Result<String, String> {
        let (w, p) = self.next()?;
        if w.len() == 1 && "(){};,=:".contains(w) {
            return Err(self.error_at(p, format!("expected {what}, found '{w}'")));
        }
        Ok(w.to_string())
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let p = self.lex.pos();
        let r = crate::expr::parse_from(&mut self.lex);
        r.map_err(|e| {
            let at = if self.lex.pos() == p {
                p
            } else {
                self.lex.pos()
            };
            self.error_at(at, e)
        })
    }

    /// `( expr )`.
    fn paren_expr(&mut self) -> Result<Expr, String> {
        self.expect("(")?;
        let e = self.expr()?;
        self.expect(")")?;
        Ok(e)
    }

    /// `( name )`.
    fn paren_name(&mut self, what: &str) -> Result<String, String> {
        self.expect("(")?;
        let n = self.name(what)?;
        self.expect(")")?;
        Ok(n)
    }

    /// A file name pattern starting with the word `w` at `p`. `:member` (a file that is not an archive member)
    /// lexes as `:` and a word; the two are one pattern when nothing separates them.
    fn file_name(&mut self, w: &str, p: Pos) -> Result<String, String> {
        if w != ":" {
            return Ok(w.to_string());
        }
        let r = self.lex.peek_word_at();
        match self.lexed(r)? {
            Some((n, np)) if np.0 == p.0 + 1 && !(n.len() == 1 && "(){};,=:".contains(n)) => {
                self.next()?;
                Ok(format!(":{n}"))
            }
            _ => Err(self.error_at(p, "expected a file name after ':'")),
        }
    }

    /// File name patterns up to `)` (`EXCLUDE_FILE`'s), separated by spaces or commas.
    fn file_names_until_paren(&mut self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        loop {
            match self.next()? {
                (")", _) => return Ok(out),
                (",", _) => {}
                (w, p) if w == ":" => out.push(self.file_name(w, p)?),
                (w, p) if w.len() == 1 && "(){};=".contains(w) => {
                    return Err(self.error_at(p, format!("expected a file name, found '{w}'")));
                }
                (w, _) => out.push(w.to_string()),
            }
        }
    }

    /// Names up to `)`, separated by spaces or commas.
    fn names_until_paren(&mut self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        loop {
            match self.peek()? {
                Some(")") => {
                    self.next()?;
                    return Ok(out);
                }
                Some(",") => {
                    self.next()?;
                }
                _ => out.push(self.name("a name")?),
            }
        }
    }

    fn script(mut self) -> Result<Vec<Located>, String> {
        let mut out = Vec::new();
        while self.peek()?.is_some() {
            self.command(&mut out)?;
        }
        Ok(out)
    }

    fn command(&mut self, out: &mut Vec<Located>) -> Result<(), String> {
        let (w, p) = self.next()?;
        let cmd = match w {
            ";" => return Ok(()),
            "ENTRY" => Command::Entry(self.paren_name("a symbol")?),
            "INPUT" | "GROUP" => {
                self.expect("(")?;
                let inputs = self.inputs()?;
                if w == "INPUT" {
                    Command::Input(inputs)
                } else {
                    Command::Group(inputs)
                }
            }
            "OUTPUT" => Command::Output(self.paren_name("a file name")?),
            "SEARCH_DIR" => {
                let d = self.paren_name("a directory")?;
                self.search_dirs.push(d.clone());
                Command::SearchDir(d)
            }
            "STARTUP" => Command::Startup(self.paren_name("a file name")?),
            "OUTPUT_FORMAT" => {
                self.expect("(")?;
                Command::OutputFormat(self.names_until_paren()?)
            }
            "OUTPUT_ARCH" => Command::OutputArch(self.paren_name("an architecture")?),
            "TARGET" => Command::Target(self.paren_name("a format")?),
            "EXTERN" => {
                self.expect("(")?;
                Command::Extern(self.names_until_paren()?)
            }
            "FORCE_COMMON_ALLOCATION" => Command::ForceCommonAllocation,
            "INHIBIT_COMMON_ALLOCATION" => Command::InhibitCommonAllocation,
            "FORCE_GROUP_ALLOCATION" => Command::ForceGroupAllocation,
            "NOCROSSREFS" | "NOCROSSREFS_TO" => {
                self.expect("(")?;
                Command::NoCrossRefs {
                    to: w == "NOCROSSREFS_TO",
                    sections: self.names_until_paren()?,
                }
            }
            "REGION_ALIAS" => {
                self.expect("(")?;
                let alias = self.name("a region alias")?;
                self.expect(",")?;
                let region = self.name("a region")?;
                self.expect(")")?;
                Command::RegionAlias(alias, region)
            }
            "LD_FEATURE" => Command::LdFeature(self.paren_name("a feature")?),
            "ASSERT" => {
                let (e, msg, pos) = self.assert(p)?;
                Command::Assert(e, msg, pos)
            }
            "INCLUDE" => {
                let name = self.name("a file name")?;
                let (path, text) = self.included(&name, p)?;
                let mut sub = Parser::new(&path, &text, self.include, self.depth + 1);
                sub.search_dirs = self.search_dirs.clone();
                out.extend(sub.script()?);
                return Ok(());
            }
            "VERSION" => {
                self.expect("{")?;
                let r = self.lex.block_text();
                Command::Version(self.lexed(r)?.to_string())
            }
            "MEMORY" => Command::Memory(self.memory()?),
            "PHDRS" => Command::Phdrs(self.phdrs()?),
            "SECTIONS" => {
                self.expect("{")?;
                let mut cmds = Vec::new();
                while !self.eat("}")? {
                    self.sections_command(&mut cmds)?;
                }
                Command::Sections(cmds)
            }
            "INSERT" => {
                let (k, kp) = self.next()?;
                let after = match k {
                    "AFTER" => true,
                    "BEFORE" => false,
                    _ => return Err(self.error_at(kp, "expected AFTER or BEFORE after INSERT")),
                };
                Command::Insert {
                    after,
                    section: self.name("an output section")?,
                }
            }
            _ => match self.assignment_after(w, p, Ctx::Script)? {
                Some(a) => Command::Assign(a),
                None => {
                    return Err(self.error_at(p, format!("unknown linker script command '{w}'")));
                }
            },
        };
        out.push(Located {
            cmd,
            at: self.error_at(p, "").trim_end_matches(": ").to_string(),
        });
        Ok(())
    }

    fn included(&mut self, name: &str, p: Pos) -> Result<(String, String), String> {
        if self.depth >= 16 {
            return Err(self.error_at(p, "INCLUDE nests too deeply"));
        }
        (self.include)(name)
            .or_else(|e: String| -> Result<(String, String), String> {
                let found = (self.search_dirs.iter())
                    .map(|d| std::path::Path::new(d).join(name))
                    .find(|c| c.is_file())
                    .ok_or(e)?;
                let text = std::fs::read_to_string(&found)
                    .map_err(|e| format!("cannot read {}: {e}", found.display()))?;
                Ok((found.display().to_string(), text))
            })
            .map_err(|e| self.error_at(p, e))
    }

    /// `INPUT(`/`GROUP(` contents up to `)`, with `AS_NEEDED(...)`.
    fn inputs(&mut self) -> Result<Vec<ScriptInput>, String> {
        let mut out = Vec::new();
        let mut as_needed = false;
        loop {
            let (w, _) = self.next()?;
            match w {
                ")" if as_needed => as_needed = false,
                ")" => return Ok(out),
                "," => {}
                "AS_NEEDED" if !as_needed => {
                    self.expect("(")?;
                    as_needed = true;
                }
                _ => out.push(ScriptInput {
                    name: w.to_string(),
                    as_needed,
                }),
            }
        }
    }

    /// `ASSERT(expr, "message")` after the keyword at `p`.
    fn assert(&mut self, p: Pos) -> Result<(Expr, String, Pos), String> {
        self.expect("(")?;
        let e = self.expr()?;
        self.expect(",")?;
        let msg = self.name("a message")?;
        self.expect(")")?;
        Ok((e, msg, p))
    }

    /// If `w` (just read, at `p`) starts an assignment, the rest of it through its separator (`;` or `,`, which
    /// GNU ld wants after every assignment; in an output section, `;` alone after a `PROVIDE(...)`, where its
    /// lexer reads a `,` as a name).
    fn assignment_after(
        &mut self,
        w: &str,
        p: Pos,
        ctx: Ctx,
    ) -> Result<Option<Assignment>, String> {
        let wrapped = match w {
            "PROVIDE" => Some((true, false)),
            "PROVIDE_HIDDEN" => Some((true, true)),
            "HIDDEN" => Some((false, true)),
            _ => None,
        };
        if let Some((provide, hidden)) = wrapped {
            self.expect("(")?;
            let (target, tp) = self.next()?;
            self.glued(target, tp, ctx)?;
            let mut a = self.assignment_rest(target, tp)?;
            self.expect(")")?;
            match ctx {
                Ctx::Body => self.expect(";")?,
                Ctx::Script => self.separator()?,
            }
            a.provide = provide;
            a.hidden = hidden;
            a.pos = p;
            return Ok(Some(a));
        }
        match self.peek()? {
            Some(op) if ASSIGN_OPS.contains(&op) => {
                self.glued(w, p, ctx)?;
                let a = self.assignment_rest(w, p)?;
                self.separator()?;
                Ok(Some(a))
            }
            _ => Ok(None),
        }
    }

    /// The `;` or `,` that ends an assignment (or an `ASSERT` in an output section).
    fn separator(&mut self) -> Result<(), String> {
        if !self.eat(",")? {
            self.expect(";")?;
        }
        Ok(())
    }

    /// An error where GNU ld's lexer reads the assignment's target `w` (at `p`) and the operator after it, or the
    /// operator and what follows it, as one name: `pv=1`, `x+=1`, `x /=2`; in an output section (where names
    /// hold `=` and `*` too, as wildcards do) also `. =ALIGN(8)`, `x =1`.
    fn glued(&mut self, w: &str, p: Pos, ctx: Ctx) -> Result<(), String> {
        let text = self.lex.text.as_bytes();
        let r = self.lex.peek_word_at();
        let Some((op, op_pos)) = self.lexed(r)? else {
            return Ok(());
        };
        let (starts, joins): (&[u8], &[u8]) = match ctx {
            Ctx::Script => (b"/", b"=+-/"),
            Ctx::Body => (b"=+-*/^", b"=+-*/^"),
        };
        let is_name = |c: u8| ctx.name_char(c);
        let quoted = text.get(p.0 as usize) == Some(&b'"');
        let first = op.as_bytes().first().copied().unwrap_or(0);
        let glued_at =
            if !quoted && op_pos.0 as usize == p.0 as usize + w.len() && joins.contains(&first) {
                Some(p)
            } else {
                let after = op_pos.0 as usize + op.len();
                let next = text.get(after).copied().unwrap_or(b' ');
                (starts.contains(&first) && is_name(next)).then_some(op_pos)
            };
        let Some(at) = glued_at else {
            return Ok(());
        };
        let start = at.0 as usize;
        let end = start + text[start..].iter().take_while(|&&c| is_name(c)).count();
        let name = String::from_utf8_lossy(&text[start..end]);
        Err(self.error_at(
            at,
            format!(
                "GNU ld reads '{name}' as one name, not an assignment: put spaces around '{op}'"
            ),
        ))
    }

    /// `op expr` after the target.
    fn assignment_rest(&mut self, target: &str, p: Pos) -> Result<Assignment, String> {
        let (op, op_pos) = self.next()?;
        let op = match ASSIGN_OPS.iter().find(|&&o| o == op) {
            Some(&"=") => "=",
            Some(o) => &o[..o.len() - 1],
            None => {
                return Err(self.error_at(op_pos, format!("expected an assignment to '{target}'")));
            }
        };
        let start = self.lex.pos().0 as usize;
        let expr = self.expr()?;
        let text = self.lex.text[start..self.lex.pos().0 as usize]
            .trim()
            .to_string();
        Ok(Assignment {
            target: target.to_string(),
            op,
            expr,
            text,
            provide: false,
            hidden: false,
            pos: p,
        })
    }

    fn memory(&mut self) -> Result<Vec<Region>, String> {
        self.expect("{")?;
        let mut out = Vec::new();
        loop {
            let (w, p) = self.next()?;
            match w {
                "}" => return Ok(out),
                ";" | "," => continue,
                "INCLUDE" => {
                    let name = self.name("a file name")?;
                    let (path, text) = self.included(&name, p)?;
                    // The file holds region lines: read them as a MEMORY block's body.
                    let wrapped = format!("{{{text}\n}}");
                    let mut sub = Parser::new(&path, &wrapped, self.include, self.depth + 1);
                    sub.search_dirs = self.search_dirs.clone();
                    out.extend(sub.memory()?);
                    continue;
                }
                _ => {}
            }
            let name = w.to_string();
            let mut attributes = String::new();
            if self.eat("(")? {
                while !self.eat(")")? {
                    attributes.push_str(self.next()?.0);
                }
            }
            self.expect(":")?;
            let origin = self.region_value(&["ORIGIN", "org", "o"])?;
            self.eat(",")?;
            let length = self.region_value(&["LENGTH", "len", "l"])?;
            out.push(Region {
                name,
                attributes,
                origin,
                length,
                pos: p,
            });
        }
    }

    /// `ORIGIN = expr` (or an abbreviation).
    fn region_value(&mut self, keys: &[&str]) -> Result<Expr, String> {
        let (k, p) = self.next()?;
        if !keys.contains(&k) {
            return Err(self.error_at(p, format!("expected {} =, found '{k}'", keys[0])));
        }
        self.expect("=")?;
        self.expr()
    }

    fn phdrs(&mut self) -> Result<Vec<Phdr>, String> {
        self.expect("{")?;
        let mut out = Vec::new();
        loop {
            let (w, p) = self.next()?;
            match w {
                "}" => return Ok(out),
                ";" => continue,
                _ => {}
            }
            let ty = self.expr()?;
            let mut ph = Phdr {
                name: w.to_string(),
                ty,
                filehdr: false,
                phdrs: false,
                at: None,
                flags: None,
                pos: p,
            };
            loop {
                let (k, kp) = self.next()?;
                match k {
                    ";" => break,
                    "FILEHDR" => ph.filehdr = true,
                    "PHDRS" => ph.phdrs = true,
                    "AT" => ph.at = Some(self.paren_expr()?),
                    "FLAGS" => ph.flags = Some(self.paren_expr()?),
                    _ => return Err(self.error_at(kp, format!("unexpected '{k}' in PHDRS"))),
                }
            }
            out.push(ph);
        }
    }

    fn sections_command(&mut self, out: &mut Vec<SectionsCommand>) -> Result<(), String> {
        let (w, p) = self.next()?;
        match w {
            ";" => {}
            "ENTRY" => out.push(SectionsCommand::Entry(self.paren_name("a symbol")?)),
            "ASSERT" => {
                let (e, m, p) = self.assert(p)?;
                self.eat(";")?;
                out.push(SectionsCommand::Assert(e, m, p));
            }
            "INCLUDE" => {
                let name = self.name("a file name")?;
                let (path, text) = self.included(&name, p)?;
                let mut sub = Parser::new(&path, &text, self.include, self.depth + 1);
                sub.search_dirs = self.search_dirs.clone();
                while sub.peek()?.is_some() {
                    sub.sections_command(out)?;
                }
            }
            "OVERLAY" => out.push(SectionsCommand::Overlay(Box::new(self.overlay(p)?))),
            _ => match self.assignment_after(w, p, Ctx::Script)? {
                Some(a) => out.push(SectionsCommand::Assign(a)),
                None => out.push(SectionsCommand::Output(Box::new(
                    self.output_section(w, p)?,
                ))),
            },
        }
        Ok(())
    }

    /// An output section description after its name `name` at `p`.
    fn output_section(&mut self, name: &str, p: Pos) -> Result<OutputSection, String> {
        let mut os = self.output_section_shell(name, p);
        // `name [address] [(type)] :`. A `(` starts the type when a type keyword follows it.
        if self.peek()? != Some(":") && !self.type_follows()? {
            os.address = Some(self.expr()?);
        }
        if self.type_follows()? {
            self.expect("(")?;
            let (t, _) = self.next()?;
            os.ty = Some(if t == "TYPE" {
                self.expect("=")?;
                format!("TYPE={}", self.name("a section type")?)
            } else {
                t.to_string()
            });
            self.expect(")")?;
        }
        self.expect(":")?;
        loop {
            match self.peek()? {
                Some("AT") => {
                    self.next()?;
                    os.lma = Some(self.paren_expr()?);
                }
                Some("ALIGN") => {
                    self.next()?;
                    os.align = Some(self.paren_expr()?);
                }
                Some("ALIGN_WITH_INPUT") => {
                    self.next()?;
                    os.align_with_input = true;
                }
                Some("SUBALIGN") => {
                    self.next()?;
                    os.subalign = Some(self.paren_expr()?);
                }
                Some("ONLY_IF_RO") => {
                    self.next()?;
                    os.constraint = Some(Constraint::OnlyIfRo);
                }
                Some("ONLY_IF_RW") => {
                    self.next()?;
                    os.constraint = Some(Constraint::OnlyIfRw);
                }
                _ => break,
            }
        }
        self.expect("{")?;
        while !self.eat("}")? {
            self.output_command(&mut os.commands)?;
        }
        self.section_tail(
            &mut os.region,
            &mut os.lma_region,
            &mut os.phdrs,
            &mut os.fill,
        )?;
        Ok(os)
    }

    /// Whether `(CONSTRUCTORS` comes next.
    fn constructors_follow(&mut self) -> Result<bool, String> {
        if self.peek()? != Some("(") {
            return Ok(false);
        }
        let r = self.lex.peek_second();
        Ok(self.lexed(r)? == Some("CONSTRUCTORS"))
    }

    /// Whether `(TYPE)` comes next.
    fn type_follows(&mut self) -> Result<bool, String> {
        if self.peek()? != Some("(") {
            return Ok(false);
        }
        let r = self.lex.peek_second();
        Ok(matches!(
            self.lexed(r)?,
            Some("NOLOAD" | "DSECT" | "COPY" | "INFO" | "OVERLAY" | "READONLY" | "TYPE")
        ))
    }

    /// `[>region] [AT>region] [:phdr...] [=fill] [,]` after an output section's `}`.
    fn section_tail(
        &mut self,
        region: &mut Option<String>,
        lma_region: &mut Option<String>,
        phdrs: &mut Vec<String>,
        fill: &mut Option<Expr>,
    ) -> Result<(), String> {
        loop {
            let Some(w) = self.peek()? else { return Ok(()) };
            if let Some(r) = w.strip_prefix('>') {
                self.next()?;
                *region = Some(if r.is_empty() {
                    self.name("a region")?
                } else {
                    r.to_string()
                });
            } else if w == "AT" && self.lex_second_starts_with('>')? {
                self.next()?;
                let (t, _) = self.next()?;
                let r = &t[1..];
                *lma_region = Some(if r.is_empty() {
                    self.name("a region")?
                } else {
                    r.to_string()
                });
            } else if let Some(r) = w.strip_prefix("AT>") {
                self.next()?;
                *lma_region = Some(if r.is_empty() {
                    self.name("a region")?
                } else {
                    r.to_string()
                });
            } else if w == ":" {
                self.next()?;
                phdrs.push(self.name("a program header")?);
            } else if w == "=" {
                self.next()?;
                *fill = Some(self.expr()?);
            } else if w == "," {
                self.next()?;
                return Ok(());
            } else {
                return Ok(());
            }
        }
    }

    fn lex_second_starts_with(&mut self, c: char) -> Result<bool, String> {
        let r = self.lex.peek_second();
        Ok(self.lexed(r)?.is_some_and(|w| w.starts_with(c)))
    }

    fn overlay(&mut self, p: Pos) -> Result<Overlay, String> {
        let mut ov = Overlay {
            start: None,
            nocrossrefs: false,
            lma: None,
            sections: Vec::new(),
            region: None,
            phdrs: Vec::new(),
            fill: None,
            pos: p,
        };
        if self.peek()? != Some(":") {
            ov.start = Some(self.expr()?);
        }
        self.expect(":")?;
        loop {
            match self.peek()? {
                Some("NOCROSSREFS") => {
                    self.next()?;
                    ov.nocrossrefs = true;
                }
                Some("AT") => {
                    self.next()?;
                    ov.lma = Some(self.paren_expr()?);
                }
                _ => break,
            }
        }
        self.expect("{")?;
        while !self.eat("}")? {
            let (name, sp) = self.next()?;
            self.expect("{")?;
            let mut os = self.output_section_shell(name, sp);
            while !self.eat("}")? {
                self.output_command(&mut os.commands)?;
            }
            let mut unused_region = None;
            let mut unused_lma = None;
            self.section_tail(
                &mut unused_region,
                &mut unused_lma,
                &mut os.phdrs,
                &mut os.fill,
            )?;
            ov.sections.push(os);
        }
        let mut lma_region = None;
        self.section_tail(&mut ov.region, &mut lma_region, &mut ov.phdrs, &mut ov.fill)?;
        Ok(ov)
    }

    /// A description with only its name: what `name { ... }` says before its parts are read.
    fn output_section_shell(&self, name: &str, p: Pos) -> OutputSection {
        OutputSection {
            name: name.to_string(),
            address: None,
            ty: None,
            lma: None,
            align: None,
            align_with_input: false,
            subalign: None,
            constraint: None,
            commands: Vec::new(),
            region: None,
            lma_region: None,
            phdrs: Vec::new(),
            fill: None,
            pos: p,
        }
    }

    fn output_command(&mut self, out: &mut Vec<OutputCommand>) -> Result<(), String> {
        let (w, p) = self.next()?;
        let cmd = match w {
            ";" => return Ok(()),
            "BYTE" | "SHORT" | "LONG" | "QUAD" | "SQUAD" => {
                let size = match w {
                    "BYTE" => 1,
                    "SHORT" => 2,
                    "LONG" => 4,
                    _ => 8,
                };
                OutputCommand::Data(size, self.paren_expr()?)
            }
            "FILL" => OutputCommand::Fill(self.paren_expr()?),
            "CONSTRUCTORS" => OutputCommand::Constructors,
            // GNU ld's default scripts' `SORT(CONSTRUCTORS)`: a.out's constructors, nothing in ELF.
            "SORT" | "SORT_BY_NAME" if self.constructors_follow()? => {
                self.expect("(")?;
                self.expect("CONSTRUCTORS")?;
                self.expect(")")?;
                OutputCommand::Constructors
            }
            // GNU ld wants a separator after an `ASSERT` here, not outside output sections.
            "ASSERT" => {
                let (e, m, p) = self.assert(p)?;
                self.separator()?;
                OutputCommand::Assert(e, m, p)
            }
            "INCLUDE" => {
                let name = self.name("a file name")?;
                let (path, text) = self.included(&name, p)?;
                let mut sub = Parser::new(&path, &text, self.include, self.depth + 1);
                sub.search_dirs = self.search_dirs.clone();
                while sub.peek()?.is_some() {
                    sub.output_command(out)?;
                }
                return Ok(());
            }
            "KEEP" => {
                self.expect("(")?;
                let (f, fp) = self.next()?;
                let mut d = self.input_sections(f, fp)?;
                self.expect(")")?;
                d.keep = true;
                d.pos = p;
                OutputCommand::Input(d)
            }
            _ => match self.assignment_after(w, p, Ctx::Body)? {
                Some(a) => OutputCommand::Assign(a),
                None => OutputCommand::Input(self.input_sections(w, p)?),
            },
        };
        out.push(cmd);
        Ok(())
    }

    /// A sort keyword's kind, if `w` is one.
    fn sort_of(w: &str) -> Option<Sort> {
        Some(match w {
            "SORT" | "SORT_BY_NAME" => Sort::Name,
            "SORT_BY_ALIGNMENT" => Sort::Alignment,
            "SORT_BY_INIT_PRIORITY" => Sort::InitPriority,
            "SORT_NONE" => Sort::NoneExplicit,
            "REVERSE" => Sort::Reverse,
            _ => return None,
        })
    }

    /// `SORT_X(pattern)` or `SORT_X(SORT_Y(pattern))`, after the first keyword.
    fn sorted_pattern(&mut self, outer: Sort) -> Result<(String, Sort), String> {
        self.expect("(")?;
        let (w, _) = self.next()?;
        let (pattern, sort) = match Self::sort_of(w) {
            Some(inner) => {
                let (pat, _) = self.sorted_pattern(inner)?;
                let combined = match (outer, inner) {
                    (Sort::Name, Sort::Alignment) => Sort::NameAlignment,
                    (Sort::Alignment, Sort::Name) => Sort::AlignmentName,
                    (Sort::Reverse, s) | (s, Sort::Reverse) => s,
                    (s, _) => s,
                };
                (pat, combined)
            }
            None => (w.to_string(), outer),
        };
        self.expect(")")?;
        Ok((pattern, sort))
    }

    /// An input section description starting with the word `w` at `p`.
    fn input_sections(&mut self, w: &str, p: Pos) -> Result<InputSections, String> {
        let mut d = InputSections {
            keep: false,
            file: String::new(),
            file_sort: Sort::None,
            exclude_files: Vec::new(),
            flags: Vec::new(),
            sections: Vec::new(),
            pos: p,
        };
        let (mut w, mut wp) = (w, p);
        if w == "INPUT_SECTION_FLAGS" {
            self.expect("(")?;
            loop {
                let (f, _) = self.next()?;
                if f == ")" {
                    break;
                }
                d.flags.push(f.to_string());
            }
            (w, wp) = self.next()?;
        }
        if w == "EXCLUDE_FILE" {
            self.expect("(")?;
            d.exclude_files = self.file_names_until_paren()?;
            (w, wp) = self.next()?;
        }
        match w {
            "SORT" | "SORT_BY_NAME" | "SORT_NONE" => {
                self.expect("(")?;
                let (mut f, mut fp) = self.next()?;
                if f == "EXCLUDE_FILE" {
                    self.expect("(")?;
                    d.exclude_files = self.file_names_until_paren()?;
                    (f, fp) = self.next()?;
                }
                d.file = self.file_name(f, fp)?;
                self.expect(")")?;
                d.file_sort = if w == "SORT_NONE" {
                    Sort::None
                } else {
                    Sort::Name
                };
                // GNU ld's grammar wants the section list after a sorted file pattern.
                if self.peek()? != Some("(") {
                    return Err(self.error(format!("expected '(' after {w}(...)")));
                }
            }
            // GNU ld sorts input files by name only (`SORT_BY_NAME`, `SORT`) or not (`SORT_NONE`).
            _ if Self::sort_of(w).is_some() && self.peek()? == Some("(") => {
                return Err(self.error_at(wp, format!("{w} cannot sort input files")));
            }
            _ => d.file = self.file_name(w, wp)?,
        }
        if self.eat("(")? {
            loop {
                let (s, sp) = self.next()?;
                match s {
                    ")" => break,
                    "," => continue,
                    "EXCLUDE_FILE" => {
                        self.expect("(")?;
                        let excluded = self.file_names_until_paren()?;
                        // The exclusion applies to the patterns that follow it inside these parentheses.
                        let (pat, psp) = self.next()?;
                        let (pattern, sort) = match Self::sort_of(pat) {
                            Some(k) => self.sorted_pattern(k)?,
                            None if pat == ")" => {
                                return Err(
                                    self.error_at(psp, "EXCLUDE_FILE without a section pattern")
                                );
                            }
                            None => (pat.to_string(), Sort::None),
                        };
                        d.sections.push(SectionPattern {
                            exclude_files: excluded,
                            pattern,
                            sort,
                        });
                    }
                    _ => {
                        let (pattern, sort) = match Self::sort_of(s) {
                            Some(k) => self.sorted_pattern(k)?,
                            // `(` too: a pattern never holds one (GNU ld: syntax error; a fuzzer finding).
                            None if s.len() == 1 && "{};=(".contains(s) => {
                                return Err(self
                                    .error_at(sp, format!("unexpected '{s}' in a section list")));
                            }
                            None => (s.to_string(), Sort::None),
                        };
                        d.sections.push(SectionPattern {
                            exclude_files: Vec::new(),
                            pattern,
                            sort,
                        });
                    }
                }
            }
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_include(name: &str) -> Result<(String, String), String> {
        Err(format!("cannot find {name}"))
    }

    fn parse_ok(text: &str) -> Vec<Command> {
        parse("t.lds", text, &no_include)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|l| l.cmd)
            .collect()
    }

    fn sections(text: &str) -> Vec<SectionsCommand> {
        match parse_ok(text).pop() {
            Some(Command::Sections(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    /// GNU ld's own default scripts (`ld --verbose`, for each kind of output) parse whole.
    #[test]
    fn gnu_ld_default_scripts() {
        for opts in [
            &[][..],
            &["-pie"],
            &["-shared"],
            &["-z", "separate-code"],
            &["-z", "noseparate-code"],
            &["-z", "relro", "-z", "now"],
            &["-r"],
            &["-N"],
        ] {
            let Ok(out) = std::process::Command::new("ld")
                .arg("--verbose")
                .args(opts)
                .output()
            else {
                eprintln!("skipped: no ld");
                return;
            };
            let text = String::from_utf8_lossy(&out.stdout);
            let mut parts = text.split("==================================================");
            let script = parts.nth(1).expect("ld --verbose prints its script");
            let cmds = parse_ok(script);
            let Some(Command::Sections(s)) =
                cmds.iter().find(|c| matches!(c, Command::Sections(_)))
            else {
                panic!("{opts:?}: no SECTIONS");
            };
            let names: Vec<&str> = s
                .iter()
                .filter_map(|c| match c {
                    SectionsCommand::Output(o) => Some(o.name.as_str()),
                    _ => None,
                })
                .collect();
            assert!(
                names.contains(&".text") && names.contains(&".data"),
                "{opts:?}: {names:?}"
            );
            assert!(names.contains(&"/DISCARD/") || opts == ["-r"], "{opts:?}");
        }
    }

    #[test]
    fn embedded_style_script() {
        let text = r#"
            /* A microcontroller's layout. */
            ENTRY(Reset_Handler)
            MEMORY
            {
              FLASH (rx)  : ORIGIN = 0x08000000, LENGTH = 512K
              RAM   (xrw) : org = 0x20000000, len = 128K
            }
            _estack = ORIGIN(RAM) + LENGTH(RAM);
            SECTIONS
            {
              .isr_vector : { . = ALIGN(4); KEEP(*(.isr_vector)) . = ALIGN(4); } >FLASH
              .text : { *(.text .text*) *(.rodata*) _etext = .; } > FLASH
              _sidata = LOADADDR(.data);
              .data : AT(_sidata) { _sdata = .; *(.data*) _edata = .; } >RAM AT> FLASH
              .bss (NOLOAD) : ALIGN(8) { _sbss = .; *(.bss*) *(COMMON) _ebss = .; } >RAM :ram =0x90
              PROVIDE_HIDDEN(__end = .);
              /DISCARD/ : { libc.a ( * ) *(.ARM.exidx*) }
            }
        "#;
        let cmds = parse_ok(text);
        assert_eq!(cmds[0], Command::Entry("Reset_Handler".into()));
        let Command::Memory(m) = &cmds[1] else {
            panic!()
        };
        assert_eq!(
            (m[0].name.as_str(), m[0].attributes.as_str()),
            ("FLASH", "rx")
        );
        assert_eq!(m[1].origin, Expr::Num(0x2000_0000));
        assert_eq!(m[1].length, Expr::Num(128 << 10));
        let Command::Assign(a) = &cmds[2] else {
            panic!()
        };
        assert_eq!(a.target, "_estack");
        assert_eq!(a.text, "ORIGIN(RAM) + LENGTH(RAM)");
        let Command::Sections(s) = &cmds[3] else {
            panic!()
        };
        let SectionsCommand::Output(isr) = &s[0] else {
            panic!()
        };
        assert_eq!(isr.region.as_deref(), Some("FLASH"));
        assert!(
            matches!(&isr.commands[1], OutputCommand::Input(d) if d.keep && d.sections[0].pattern == ".isr_vector")
        );
        let SectionsCommand::Output(text) = &s[1] else {
            panic!()
        };
        let OutputCommand::Input(d) = &text.commands[0] else {
            panic!()
        };
        assert_eq!(d.file, "*");
        assert_eq!(
            d.sections
                .iter()
                .map(|p| p.pattern.as_str())
                .collect::<Vec<_>>(),
            [".text", ".text*"]
        );
        let SectionsCommand::Output(data) = &s[3] else {
            panic!()
        };
        assert_eq!(data.lma, Some(Expr::Sym("_sidata".into())));
        assert_eq!(data.region.as_deref(), Some("RAM"));
        assert_eq!(data.lma_region.as_deref(), Some("FLASH"));
        let SectionsCommand::Output(bss) = &s[4] else {
            panic!()
        };
        assert_eq!(bss.ty.as_deref(), Some("NOLOAD"));
        assert!(bss.align.is_some() && bss.address.is_none());
        assert_eq!(bss.phdrs, ["ram"]);
        assert_eq!(bss.fill, Some(Expr::Num(0x90)));
        let SectionsCommand::Assign(end) = &s[5] else {
            panic!()
        };
        assert!(end.provide && end.hidden && end.target == "__end");
        let SectionsCommand::Output(discard) = &s[6] else {
            panic!()
        };
        assert_eq!(discard.name, "/DISCARD/");
        assert!(matches!(&discard.commands[0], OutputCommand::Input(d) if d.file == "libc.a"));
    }

    #[test]
    fn input_section_descriptions() {
        let s = sections(
            "SECTIONS { .text 0x1000 : AT(0x2000) SUBALIGN(16) ONLY_IF_RO {
               EXCLUDE_FILE(*crtend.o *otherfile.o) *(.ctors)
               *(EXCLUDE_FILE(*a.o) .text .rdata)
               KEEP(*(SORT_BY_NAME(SORT_BY_ALIGNMENT(.init_array.*))))
               SORT(*)(.sorted)
               *libstdc++.a:(.text)
               INPUT_SECTION_FLAGS(SHF_WRITE & !SHF_EXECINSTR) *(.w)
               BYTE(1) SHORT(2) LONG(3) QUAD(4) SQUAD(-5) FILL(0x9090)
               x += 4; y <<= 1; . = . + 0x10;
             } }",
        );
        let SectionsCommand::Output(o) = &s[0] else {
            panic!()
        };
        assert_eq!(o.address, Some(Expr::Num(0x1000)));
        assert_eq!(o.constraint, Some(Constraint::OnlyIfRo));
        let inputs: Vec<&InputSections> = o
            .commands
            .iter()
            .filter_map(|c| match c {
                OutputCommand::Input(d) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(inputs[0].exclude_files, ["*crtend.o", "*otherfile.o"]);
        assert_eq!(inputs[1].sections[0].exclude_files, ["*a.o"]);
        assert_eq!(inputs[1].sections[1].pattern, ".rdata");
        assert!(inputs[2].keep && inputs[2].sections[0].sort == Sort::NameAlignment);
        assert_eq!(
            (inputs[3].file.as_str(), inputs[3].file_sort),
            ("*", Sort::Name)
        );
        assert!(inputs[5].flags.len() > 1);
        let ops: Vec<(&str, &str)> = o
            .commands
            .iter()
            .filter_map(|c| match c {
                OutputCommand::Assign(a) => Some((a.target.as_str(), a.op)),
                _ => None,
            })
            .collect();
        assert_eq!(ops, [("x", "+"), ("y", "<<"), (".", "=")]);
        assert!(o.commands.contains(&OutputCommand::Data(
            8,
            Expr::Unary('-', Box::new(Expr::Num(5)))
        )));
    }

    #[test]
    fn phdrs_overlay_version_and_friends() {
        let cmds = parse_ok(
            r#"PHDRS { headers PT_PHDR PHDRS ; text PT_LOAD FILEHDR PHDRS FLAGS(5) ; dyn PT_DYNAMIC ; }
               SECTIONS {
                 OVERLAY 0x1000 : NOCROSSREFS AT (0x4000) { .ov1 { *(.ov1) } .ov2 { *(.ov2) } } :text
                 .note.gnu.build-id : { *(.note.gnu.build-id) }
                 ASSERT(SIZEOF(.note.gnu.build-id) <= 0x100, "build id too big");
               }
               VERSION { V1 { global: foo; local: *; }; V2 { bar; } V1; }
               INSERT AFTER .text
               NOCROSSREFS(.a .b)
               REGION_ALIAS("REGION_TEXT", ROM)
               EXTERN(a b c)
               HIDDEN(h = 1);
               OUTPUT_FORMAT("elf64-x86-64", "elf64-x86-64", "elf64-x86-64")"#,
        );
        let Command::Phdrs(p) = &cmds[0] else {
            panic!()
        };
        assert_eq!(p.len(), 3);
        assert!(p[1].filehdr && p[1].phdrs && p[1].flags == Some(Expr::Num(5)));
        assert_eq!(p[0].ty, Expr::Sym("PT_PHDR".into()));
        let Command::Sections(s) = &cmds[1] else {
            panic!()
        };
        let SectionsCommand::Overlay(ov) = &s[0] else {
            panic!()
        };
        assert!(ov.nocrossrefs && ov.sections.len() == 2 && ov.phdrs == ["text"]);
        let SectionsCommand::Output(b) = &s[1] else {
            panic!()
        };
        assert_eq!(b.name, ".note.gnu.build-id");
        assert!(matches!(&s[2], SectionsCommand::Assert(_, m, _) if m == "build id too big"));
        let Command::Version(v) = &cmds[2] else {
            panic!()
        };
        assert!(v.contains("V2 { bar; } V1;"));
        assert_eq!(
            cmds[3],
            Command::Insert {
                after: true,
                section: ".text".into()
            }
        );
        assert!(matches!(&cmds[6], Command::Extern(e) if e.len() == 3));
        assert!(matches!(&cmds[7], Command::Assign(a) if a.hidden && !a.provide));
        assert!(matches!(&cmds[8], Command::OutputFormat(f) if f.len() == 3));
    }

    #[test]
    fn includes_are_read_in_place() {
        let include = |name: &str| -> Result<(String, String), String> {
            match name {
                "regions.ld" => Ok((
                    "dir/regions.ld".into(),
                    "RAM : ORIGIN = 0, LENGTH = 4K".into(),
                )),
                "body.ld" => Ok(("dir/body.ld".into(), "*(.text) x = 1;".into())),
                "bad.ld" => Ok(("dir/bad.ld".into(), "\n  .text : {".into())),
                _ => Err(format!("cannot find {name}")),
            }
        };
        let cmds: Vec<Command> = parse(
            "t.lds",
            "MEMORY { INCLUDE regions.ld }\nSECTIONS { .text : { INCLUDE body.ld } }",
            &include,
        )
        .unwrap()
        .into_iter()
        .map(|l| l.cmd)
        .collect();
        assert!(matches!(&cmds[0], Command::Memory(m) if m[0].name == "RAM"));
        let Command::Sections(s) = &cmds[1] else {
            panic!()
        };
        let SectionsCommand::Output(o) = &s[0] else {
            panic!()
        };
        assert_eq!(o.commands.len(), 2);
        let err = parse("t.lds", "SECTIONS { INCLUDE bad.ld }", &include).unwrap_err();
        assert_eq!(err, "dir/bad.ld:2:12: unexpected end of script");
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let err = |t: &str| parse("s.lds", t, &no_include).unwrap_err();
        assert_eq!(
            err("SECTIONS {\n  .text : { *(.text) \n"),
            "s.lds:3:1: unexpected end of script"
        );
        assert_eq!(
            err("FOO(bar)"),
            "s.lds:1:1: unknown linker script command 'FOO'"
        );
        assert_eq!(
            err("SECTIONS { . = 1 +; }"),
            "s.lds:1:19: unexpected end of expression"
        );
        assert_eq!(
            err("x = 1"),
            "s.lds:1:6: expected ';' before the end of the script"
        );
        assert_eq!(err("/* open"), "s.lds:1:1: unterminated comment");
        assert_eq!(
            err("SECTIONS {\n  pv=1;\n}"),
            "s.lds:2:3: GNU ld reads 'pv=1' as one name, not an assignment: put spaces around '='"
        );
        assert_eq!(
            err("SECTIONS { .a : { . =ALIGN(8); } }"),
            "s.lds:1:21: GNU ld reads '=ALIGN' as one name, not an assignment: put spaces around '='"
        );
        assert_eq!(
            err("SECTIONS { .a : { x = 1 } }"),
            "s.lds:1:25: expected ';', found '}'"
        );
        // An INCLUDEd file is not checked for text the way a script input is: non-ASCII bytes must not panic.
        assert_eq!(
            err("INPUT(caf\u{e9}.o"),
            "s.lds:1:13: unexpected end of script"
        );
        assert!(err("x = 1 + \u{e9};").starts_with("s.lds:1:"));
        assert!(err("SECTIONS { \u{e9}/* }").starts_with("s.lds:1:"));
        assert_eq!(
            err("SECTIONS { .a : { } >}"),
            "s.lds:1:22: expected a region, found '}'"
        );
        assert_eq!(
            err("MEMORY { R : SIZE = 1 }"),
            "s.lds:1:14: expected ORIGIN =, found 'SIZE'"
        ); // A `)` turned into `(` (a fuzzer finding): the section list does not swallow what follows.
        assert_eq!(
            err("SECTIONS { .a : { *(.a .b( *(.c) } }"),
            "s.lds:1:26: unexpected '(' in a section list"
        );
    }
}
