//! GNU ld's expression language (the manual's "Expressions in Linker Scripts"): numbers in every notation it
//! accepts, symbol names, C's operators with C's precedence, `?:`, and the built-in functions that make sense
//! without a `SECTIONS` command (`ABSOLUTE`, `ADDR`, `ALIGN`, `ALIGNOF`, `CONSTANT`, `DEFINED`, `LOADADDR`, `MAX`,
//! `MIN`, `SIZEOF`, `SIZEOF_HEADERS`, `SEGMENT_START`). `--defsym` evaluates them once the layout is known; the
//! linker-script reader is meant to share this parser.
//!
//! Arithmetic is on 64-bit values, wrapping like GNU ld's `bfd_vma`, with division and remainder signed as GNU ld
//! does them; by zero they are an error.

use crate::index::OsecId;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Num(u64),
    Sym(String),
    /// The location counter `.`.
    Dot,
    Unary(char, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(&'static str, Vec<Arg>),
}

/// A function's argument: an expression, or a name (a section, a symbol for `DEFINED`, a constant's keyword).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Expr(Expr),
    Name(String),
}

/// What evaluation needs from the link.
pub trait Env {
    /// A symbol's value, if it is defined.
    fn symbol(&self, name: &str) -> Option<u64>;
    /// An output section's address, load address, size and alignment, if it exists.
    fn section(&self, name: &str) -> Option<(u64, u64, u64, u64)>;
    fn max_page_size(&self) -> u64;
    fn common_page_size(&self) -> u64;
    fn sizeof_headers(&self) -> u64;
    /// The location counter, where there is one.
    fn dot(&self) -> Option<u64> {
        None
    }
    /// A `MEMORY` region's origin and length, if the script defines it.
    fn memory(&self, _name: &str) -> Option<(u64, u64)> {
        None
    }
    /// `DATA_SEGMENT_ALIGN (max, common)` at `dot`, whose first value is `first`: a layout may put the data
    /// elsewhere (GNU ld's second pass, `layout::data_segment`).
    fn data_segment_align(&self, _dot: u64, first: u64, _pages: (u64, u64)) -> u64 {
        first
    }
    /// `DATA_SEGMENT_RELRO_END (offset, exp)`: the location counter after it (`exp`, or a layout's padding that
    /// ends RELRO `offset` bytes before a page).
    fn relro_end(&self, exp: u64, _offset: u64) -> u64 {
        exp
    }
    /// Told `DATA_SEGMENT_END`'s value.
    fn data_segment_end(&self, _end: u64) {}
    /// Whether a symbol is defined, for `DEFINED`.
    fn defined(&self, name: &str) -> bool {
        self.symbol(name).is_some()
    }
    /// A symbol's value and what it is relative to (an output section's offset, or absolute).
    fn symbol_value(&self, name: &str) -> Option<Value> {
        self.symbol(name).map(Value::abs)
    }
    /// The number of output section `name` for values relative to it; `None` keeps `ADDR` absolute.
    fn section_id(&self, _name: &str) -> Option<OsecId> {
        None
    }
    /// The address of the output section numbered `id` (see `section_id`).
    fn section_addr(&self, _id: OsecId) -> u64 {
        0
    }
    /// The output section whose description holds the expression: there a plain number stays a number (GNU ld's
    /// evaluation "inside an output section definition"); elsewhere it is an absolute address.
    fn inside(&self) -> Option<OsecId> {
        None
    }
}

/// What a value is relative to (GNU ld's manual, "The Section of an Expression"): a plain number, an absolute
/// address, or an offset in an output section (the environment's number for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Number,
    Abs,
    Section(OsecId),
}

/// A value with its base: `v` is the offset from the section's address for `Base::Section`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    pub v: u64,
    pub base: Base,
}

impl Value {
    pub fn abs(v: u64) -> Value {
        Value { v, base: Base::Abs }
    }
}

/// An evaluated expression: its value, and whether the location counter (or a function of it, `ALIGN(n)`,
/// `ORIGIN`, `SEGMENT_START`) made it after any conversion to absolute (GNU ld's `rel_from_abs`): a symbol given
/// such an absolute value belongs to the section the location counter is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluated {
    pub value: Value,
    pub from_dot: bool,
}

/// Functions taking a name rather than an expression, and how many arguments each function takes.
const FUNCTIONS: &[(&str, usize, bool)] = &[
    ("ABSOLUTE", 1, false),
    ("ADDR", 1, true),
    ("ALIGN", 0, false),
    ("ALIGNOF", 1, true),
    ("ASSERT", 2, false),
    ("BLOCK", 0, false),
    ("CONSTANT", 1, true),
    ("DATA_SEGMENT_ALIGN", 2, false),
    ("DATA_SEGMENT_END", 1, false),
    ("DATA_SEGMENT_RELRO_END", 2, false),
    ("DEFINED", 1, true),
    ("LENGTH", 1, true),
    ("LOADADDR", 1, true),
    ("LOG2CEIL", 1, false),
    ("MAX", 2, false),
    ("MIN", 2, false),
    ("NEXT", 1, false),
    ("ORIGIN", 1, true),
    ("SIZEOF", 1, true),
    ("SIZEOF_HEADERS", 0, false),
    ("SEGMENT_START", 2, false),
];

/// Binary operators from the loosest to the tightest binding (C's levels).
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<=", ">=", "<", ">"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

/// A token of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Num(u64),
    Name(String),
    Op(&'static str),
}

/// Where the parser's tokens come from: a string of its own (`--defsym`), or a linker script's lexer, which stops
/// where the expression ends and lexes names of sections and files by its own rules.
pub trait Tokens {
    /// The next token, without consuming it; `None` at the end.
    fn peek(&mut self) -> Result<Option<Tok>, String>;
    fn bump(&mut self);
    /// A function's name argument (`SIZEOF(.note.gnu.build-id)`), if the source lexes names its own way.
    fn name_arg(&mut self) -> Option<String> {
        None
    }
}

struct VecTokens {
    toks: Vec<Tok>,
    at: usize,
}

impl Tokens for VecTokens {
    fn peek(&mut self) -> Result<Option<Tok>, String> {
        Ok(self.toks.get(self.at).cloned())
    }
    fn bump(&mut self) {
        self.at += 1;
    }
}

const OPS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "|",
    "^", "!", "~", "(", ")", ",", "?", ":",
];

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let (tok, end) = lex_one(text, i)?;
        out.push(tok);
        i = end;
    }
    Ok(out)
}

/// The token that starts at byte `i` of `text` (not whitespace), and where it ends.
pub fn lex_one(text: &str, i: usize) -> Result<(Tok, usize), String> {
    let b = text.as_bytes();
    let c = b[i];
    if c == b'"' {
        let end = text[i + 1..].find('"').ok_or("unterminated quoted name")?;
        return Ok((Tok::Name(text[i + 1..i + 1 + end].to_string()), i + end + 2));
    }
    let run = |ok: fn(u8) -> bool| i + b[i..].iter().take_while(|&&c| ok(c)).count();
    if c.is_ascii_digit() {
        let end = run(|c| c.is_ascii_alphanumeric());
        return Ok((Tok::Num(number(&text[i..end])?), end));
    }
    if c.is_ascii_alphabetic() || matches!(c, b'_' | b'.' | b'$') {
        let end = run(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'@'));
        return Ok((Tok::Name(text[i..end].to_string()), end));
    }
    match OPS.iter().find(|op| b[i..].starts_with(op.as_bytes())) {
        Some(op) => Ok((Tok::Op(op), i + op.len())),
        None => Err(format!("unexpected character '{}'", c as char)),
    }
}

/// A constant as GNU ld reads it: `0x`/`0X` hex, a leading `0` octal, suffixes `h`/`o`/`b`/`d` for the base and
/// `K`/`M` for a scale of 1024 or 1024².
fn number(t: &str) -> Result<u64, String> {
    let bad = || format!("invalid number '{t}'");
    let (t, scale) = match t.as_bytes().last() {
        Some(b'K' | b'k') => (&t[..t.len() - 1], 1024u64),
        Some(b'M' | b'm') => (&t[..t.len() - 1], 1024 * 1024),
        _ => (t, 1),
    };
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else {
        match t.as_bytes().last() {
            Some(b'h' | b'H') => (&t[..t.len() - 1], 16),
            Some(b'o' | b'O') => (&t[..t.len() - 1], 8),
            Some(b'b' | b'B') => (&t[..t.len() - 1], 2),
            Some(b'd' | b'D') => (&t[..t.len() - 1], 10),
            _ if t.len() > 1 && t.starts_with('0') => (&t[1..], 8),
            _ => (t, 10),
        }
    };
    let v = u64::from_str_radix(digits, radix).map_err(|_| bad())?;
    v.checked_mul(scale).ok_or_else(bad)
}

struct Parser<'t> {
    src: &'t mut dyn Tokens,
    /// Parentheses, unary operators, conditionals and calls open around the token being read.
    depth: u32,
    /// Binary operators read so far: a chain of them is a tree as deep, which evaluating walks recursively.
    ops: u32,
}

/// How deeply an expression may nest, and how many binary operators it may hold: the parser and the evaluator
/// recurse that deep (a fuzzer finding: 1,762 opening parentheses overflowed the stack). GNU ld's own scripts
/// nest a few levels.
const MAX_DEPTH: u32 = 256;
const MAX_OPS: u32 = 4096;

impl Parser<'_> {
    fn peek_op(&mut self) -> Result<Option<&'static str>, String> {
        Ok(match self.src.peek()? {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        })
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.peek_op()? == Some(op) {
            self.src.bump();
            Ok(())
        } else {
            Err(format!("expected '{op}'"))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "expression nested too deeply (over {MAX_DEPTH} levels)"
            ));
        }
        let e = self.conditional();
        self.depth -= 1;
        e
    }

    fn conditional(&mut self) -> Result<Expr, String> {
        let cond = self.binary(0)?;
        if self.peek_op()? != Some("?") {
            return Ok(cond);
        }
        self.src.bump();
        let yes = self.expr()?;
        self.expect(":")?;
        let no = self.expr()?;
        Ok(Expr::Cond(Box::new(cond), Box::new(yes), Box::new(no)))
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        while let Some(op) = self.peek_op()?.filter(|op| LEVELS[level].contains(op)) {
            self.src.bump();
            self.ops += 1;
            if self.ops > MAX_OPS {
                return Err(format!("expression too long (over {MAX_OPS} operators)"));
            }
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        match self.peek_op()? {
            Some(op @ ("-" | "!" | "~" | "+")) => {
                self.src.bump();
                // A chain of unary operators nests as parentheses do.
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(format!(
                        "expression nested too deeply (over {MAX_DEPTH} levels)"
                    ));
                }
                let e = self.unary();
                self.depth -= 1;
                let e = e?;
                Ok(if op == "+" {
                    e
                } else {
                    Expr::Unary(op.chars().next().unwrap_or('-'), Box::new(e))
                })
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let tok = self.src.peek()?.ok_or("unexpected end of expression")?;
        self.src.bump();
        match tok {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op(op) => Err(format!("unexpected '{op}'")),
            Tok::Name(n) if n == "." => Ok(Expr::Dot),
            Tok::Name(n) => match FUNCTIONS.iter().find(|f| f.0 == n) {
                Some(&(name, arity, named)) => self.call(name, arity, named),
                None => Ok(Expr::Sym(n)),
            },
        }
    }

    fn call(&mut self, name: &'static str, arity: usize, named: bool) -> Result<Expr, String> {
        if arity == 0 && name == "SIZEOF_HEADERS" {
            return Ok(Expr::Call(name, Vec::new()));
        }
        self.expect("(").map_err(|e| format!("{e} after {name}"))?;
        let mut args = Vec::new();
        loop {
            // The names: a section, symbol, region or constant; SEGMENT_START's segment; ASSERT's message.
            let wants_name = (named && args.is_empty())
                || (name == "SEGMENT_START" && args.is_empty())
                || (name == "ASSERT" && args.len() == 1);
            let arg = match wants_name {
                true => match self.src.name_arg() {
                    Some(n) => Arg::Name(n),
                    None => match self.src.peek()? {
                        Some(Tok::Name(n)) => {
                            self.src.bump();
                            Arg::Name(n)
                        }
                        _ => return Err(format!("{name} takes a name")),
                    },
                },
                false => Arg::Expr(self.expr()?),
            };
            args.push(arg);
            if self.peek_op()? == Some(",") {
                self.src.bump();
                continue;
            }
            self.expect(")")?;
            break;
        }
        let ok = match name {
            // ALIGN(align) or ALIGN(exp, align); BLOCK is ALIGN's old name.
            "ALIGN" | "BLOCK" => matches!(args.len(), 1 | 2),
            _ => args.len() == arity,
        };
        if !ok {
            return Err(format!("wrong number of arguments to {name}"));
        }
        Ok(Expr::Call(name, args))
    }
}

/// Parses `text` as one expression.
pub fn parse(text: &str) -> Result<Expr, String> {
    let mut src = VecTokens {
        toks: tokens(text)?,
        at: 0,
    };
    let e = parse_from(&mut src)?;
    if src.at != src.toks.len() {
        return Err("unexpected text after the expression".into());
    }
    Ok(e)
}

/// Parses one expression from `src`, leaving the token after it unconsumed.
pub fn parse_from(src: &mut dyn Tokens) -> Result<Expr, String> {
    Parser {
        src,
        depth: 0,
        ops: 0,
    }
    .expr()
}

impl Expr {
    /// The symbols the expression reads (not those only tested with `DEFINED`).
    pub fn symbols(&self, out: &mut Vec<String>) {
        self.names(out, false);
    }

    /// The symbols evaluating the expression reads, as [`Self::symbols`], but not `x` in the first branch of
    /// `DEFINED(x) ? ... : ...`, which is read only once `x` is defined (the idiom for a default a `PROVIDE` or
    /// `--defsym` may replace).
    pub fn reads(&self, out: &mut Vec<String>) {
        self.names(out, true);
    }

    fn names(&self, out: &mut Vec<String>, guarded: bool) {
        match self {
            Expr::Sym(s) => out.push(s.clone()),
            Expr::Unary(_, e) => e.names(out, guarded),
            Expr::Binary(_, a, b) => {
                a.names(out, guarded);
                b.names(out, guarded);
            }
            Expr::Cond(c, t, f) => {
                c.names(out, guarded);
                let from = out.len();
                t.names(out, guarded);
                if guarded
                    && let Expr::Call("DEFINED", args) = &**c
                    && let [Arg::Name(x)] = &args[..]
                {
                    let read: Vec<String> = out.drain(from..).filter(|n| n != x).collect();
                    out.extend(read);
                }
                f.names(out, guarded);
            }
            Expr::Call(_, args) => {
                for a in args {
                    if let Arg::Expr(e) = a {
                        e.names(out, guarded);
                    }
                }
            }
            Expr::Num(_) | Expr::Dot => {}
        }
    }

    /// Whether the expression calls the built-in function `f`.
    pub fn calls(&self, f: &str) -> bool {
        match self {
            Expr::Unary(_, e) => e.calls(f),
            Expr::Binary(_, a, b) => a.calls(f) || b.calls(f),
            Expr::Cond(a, b, c) => a.calls(f) || b.calls(f) || c.calls(f),
            Expr::Call(g, args) => {
                *g == f || (args.iter()).any(|a| matches!(a, Arg::Expr(e) if e.calls(f)))
            }
            Expr::Sym(_) | Expr::Num(_) | Expr::Dot => false,
        }
    }

    /// The names the calls of functions `fs` take (`ORIGIN(RAM)`: `RAM`), into `out`.
    pub fn call_names(&self, fs: &[&str], out: &mut Vec<String>) {
        match self {
            Expr::Unary(_, e) => e.call_names(fs, out),
            Expr::Binary(_, a, b) => [a, b].iter().for_each(|e| e.call_names(fs, out)),
            Expr::Cond(a, b, c) => [a, b, c].iter().for_each(|e| e.call_names(fs, out)),
            Expr::Call(g, args) => {
                for a in args {
                    match a {
                        Arg::Name(n) if fs.contains(g) => out.push(n.clone()),
                        Arg::Expr(e) => e.call_names(fs, out),
                        Arg::Name(_) => {}
                    }
                }
            }
            Expr::Sym(_) | Expr::Num(_) | Expr::Dot => {}
        }
    }

    /// Whether the value is a number the expression itself fixes (no symbol, section, `.` or page size), as GNU
    /// ld's parser folds such an expression into a number.
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Num(_) => true,
            Expr::Unary(_, e) => e.is_constant(),
            Expr::Binary(_, a, b) => a.is_constant() && b.is_constant(),
            Expr::Cond(a, b, c) => a.is_constant() && b.is_constant() && c.is_constant(),
            Expr::Sym(_) | Expr::Dot | Expr::Call(..) => false,
        }
    }

    /// The value as an address: a section-relative value plus its section's address.
    pub fn eval(&self, env: &dyn Env) -> Result<u64, String> {
        let e = self.eval_value(env)?;
        Ok(address(env, e.value))
    }

    /// The value with its base, by GNU ld's rules (its manual's "The Section of an Expression"; `ldexp.c`'s
    /// behaviour where the manual is silent): numbers stay numbers inside an output section and are absolute
    /// elsewhere; an operator on a relative value and a number keeps the section and works on the offset; two
    /// values of different bases become absolute first; comparisons give numbers.
    pub fn eval_value(&self, env: &dyn Env) -> Result<Evaluated, String> {
        let mut ev = Evaluator {
            env,
            from_dot: false,
        };
        let value = ev.expr(self)?;
        Ok(Evaluated {
            value,
            from_dot: ev.from_dot,
        })
    }
}

/// A value as an address.
pub fn address(env: &dyn Env, x: Value) -> u64 {
    match x.base {
        Base::Section(s) => x.v.wrapping_add(env.section_addr(s)),
        _ => x.v,
    }
}

struct Evaluator<'e> {
    env: &'e dyn Env,
    from_dot: bool,
}

/// Operators whose result is a plain number.
const LOGICAL: &[&str] = &["==", "!=", "<", ">", "<=", ">=", "&&", "||"];

impl Evaluator<'_> {
    fn make_abs(&mut self, x: Value) -> Value {
        self.from_dot = false;
        Value::abs(address(self.env, x))
    }

    /// An address the location counter gives: relative to the section being described, if any.
    fn dot_value(&mut self, v: u64) -> Value {
        self.from_dot = true;
        match self.env.inside() {
            Some(s) => Value {
                v: v.wrapping_sub(self.env.section_addr(s)),
                base: Base::Section(s),
            },
            None => Value::abs(v),
        }
    }

    /// A plain number where the expression is: a number inside an output section, absolute elsewhere.
    fn number(&self, v: u64) -> Value {
        let base = match self.env.inside() {
            Some(_) => Base::Number,
            None => Base::Abs,
        };
        Value { v, base }
    }

    fn dot(&self, name: &str) -> Result<u64, String> {
        self.env.dot().ok_or_else(|| format!("{name}(n) needs '.'"))
    }

    fn expr(&mut self, e: &Expr) -> Result<Value, String> {
        Ok(match e {
            Expr::Num(n) => self.number(*n),
            Expr::Sym(s) => {
                let x =
                    (self.env.symbol_value(s)).ok_or_else(|| format!("undefined symbol '{s}'"))?;
                match x.base {
                    Base::Abs if self.env.inside().is_some() => Value {
                        v: x.v,
                        base: Base::Number,
                    },
                    _ => x,
                }
            }
            Expr::Dot => {
                let d = self.env.dot().ok_or("'.' has no value here")?;
                self.dot_value(d)
            }
            Expr::Unary(op, e) => {
                let x = self.expr(e)?;
                let v = match op {
                    '-' => x.v.wrapping_neg(),
                    '!' => (x.v == 0) as u64,
                    _ => !x.v,
                };
                Value { v, base: x.base }
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.binary(op, a, b)?
            }
            Expr::Cond(c, yes, no) => {
                if self.expr(c)?.v != 0 {
                    self.expr(yes)?
                } else {
                    self.expr(no)?
                }
            }
            Expr::Call(name, args) => self.call(name, args)?,
        })
    }

    /// Both operands on one base (or one of them a plain number): the operator's result and its base.
    fn binary(&mut self, op: &str, a: Value, b: Value) -> Result<Value, String> {
        let (mut a, mut b, mut base) = (a, b, b.base);
        if a.base != b.base {
            if a.base != Base::Number && b.base != Base::Number {
                (a, b) = (self.make_abs(a), self.make_abs(b));
                base = Base::Abs;
            } else if b.base == Base::Number {
                // The number takes the other operand's base.
                base = a.base;
                a.base = Base::Number;
            }
        }
        let v = match op {
            "MAX" => a.v.max(b.v),
            "MIN" => a.v.min(b.v),
            "ALIGN" => align_n(a.v, b.v),
            _ => binary(op, a.v, b.v)?,
        };
        let base = if LOGICAL.contains(&op) {
            Base::Number
        } else if matches!(op, "MAX" | "MIN" | "ALIGN") || base != a.base {
            base
        } else {
            // Two values of one base: a number inside an output section, absolute elsewhere.
            self.number(0).base
        };
        Ok(Value { v, base })
    }

    fn call(&mut self, name: &str, args: &[Arg]) -> Result<Value, String> {
        let env = self.env;
        let named = |k: usize| match &args[k] {
            Arg::Name(n) => Ok(n.as_str()),
            Arg::Expr(_) => Err(format!("{name}: expected a name")),
        };
        let section = |k: usize| {
            let n = named(k)?;
            env.section(n)
                .ok_or_else(|| format!("{name}: undefined section {n}"))
        };
        let number = |v: u64| Value {
            v,
            base: Base::Number,
        };
        Ok(match name {
            "ABSOLUTE" => {
                let x = self.arg(name, args, 0)?;
                self.make_abs(x)
            }
            "ADDR" => {
                let addr = section(0)?.0;
                match env.section_id(named(0)?) {
                    Some(id) => Value {
                        v: 0,
                        base: Base::Section(id),
                    },
                    None => Value::abs(addr),
                }
            }
            "LOADADDR" => Value::abs(section(0)?.1),
            "SIZEOF" => number(section(0)?.2),
            "ALIGNOF" => number(section(0)?.3),
            "ALIGN" | "BLOCK" if args.len() == 2 => {
                let (a, b) = (self.arg(name, args, 0)?, self.arg(name, args, 1)?);
                self.binary("ALIGN", a, b)?
            }
            "ALIGN" | "BLOCK" => {
                let n = self.arg(name, args, 0)?.v;
                let v = align_n(self.dot(name)?, n);
                self.dot_value(v)
            }
            "NEXT" => {
                let x = self.arg(name, args, 0)?;
                let n = self.make_abs(x).v;
                Value::abs(align_n(self.dot(name)?, n))
            }
            "ASSERT" => match self.arg(name, args, 0)? {
                x if x.v == 0 => return Err(named(1)?.to_string()),
                x => x,
            },
            // The manual's equivalents: (ALIGN(maxpagesize) + (. & (maxpagesize - 1))), which a layout may move
            // (`Env::data_segment_align`); the end and RELRO's end unchanged, unless a layout pads the latter.
            "DATA_SEGMENT_ALIGN" => {
                let (d, max) = (self.dot(name)?, self.arg(name, args, 0)?.v);
                let common = self.arg(name, args, 1)?.v;
                let first = align_up(d, max)?.wrapping_add(d & max.wrapping_sub(1));
                Value::abs(env.data_segment_align(d, first, (max, common)))
            }
            "DATA_SEGMENT_END" => {
                let v = self.arg(name, args, 0)?;
                env.data_segment_end(address(env, v));
                v
            }
            "DATA_SEGMENT_RELRO_END" => {
                let (off, exp) = (self.arg(name, args, 0)?, self.arg(name, args, 1)?);
                let (off, exp) = (address(env, off), address(env, exp));
                Value::abs(env.relro_end(exp, off))
            }
            "LOG2CEIL" => number(match self.arg(name, args, 0)?.v {
                0 | 1 => 0,
                v => 64 - u64::from((v - 1).leading_zeros()),
            }),
            "ORIGIN" | "LENGTH" => {
                let n = named(0)?;
                let (origin, length) = env
                    .memory(n)
                    .ok_or_else(|| format!("{name}: no memory region {n}"))?;
                if name == "ORIGIN" {
                    self.dot_value(origin)
                } else {
                    number(length)
                }
            }
            "DEFINED" => number(env.defined(named(0)?) as u64),
            "MAX" | "MIN" => {
                let (a, b) = (self.arg(name, args, 0)?, self.arg(name, args, 1)?);
                self.binary(name, a, b)?
            }
            "SIZEOF_HEADERS" => number(env.sizeof_headers()),
            // Without a -T<segment> option, the default.
            "SEGMENT_START" => {
                let v = self.arg(name, args, 1)?.v;
                self.dot_value(v)
            }
            _ => number(match named(0)? {
                "MAXPAGESIZE" => env.max_page_size(),
                "COMMONPAGESIZE" => env.common_page_size(),
                c => return Err(format!("CONSTANT: unknown constant {c}")),
            }),
        })
    }

    fn arg(&mut self, name: &str, args: &[Arg], k: usize) -> Result<Value, String> {
        match &args[k] {
            Arg::Expr(e) => self.expr(e),
            Arg::Name(n) => Err(format!("{name}: expected an expression, found '{n}'")),
        }
    }
}

fn binary(op: &str, a: u64, b: u64) -> Result<u64, String> {
    Ok(match op {
        "*" => a.wrapping_mul(b),
        // Signed, as GNU ld divides.
        "/" if b == 0 => return Err("division by zero".into()),
        "%" if b == 0 => return Err("remainder by zero".into()),
        "/" => (a as i64).wrapping_div(b as i64) as u64,
        "%" => (a as i64).wrapping_rem(b as i64) as u64,
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "<<" => a.checked_shl(b as u32).filter(|_| b < 64).unwrap_or(0),
        ">>" => a.checked_shr(b as u32).filter(|_| b < 64).unwrap_or(0),
        "<" => (a < b) as u64,
        ">" => (a > b) as u64,
        "<=" => (a <= b) as u64,
        ">=" => (a >= b) as u64,
        "==" => (a == b) as u64,
        "!=" => (a != b) as u64,
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        "&&" => (a != 0 && b != 0) as u64,
        _ => (a != 0 || b != 0) as u64,
    })
}

/// `ALIGN`, `BLOCK` and `NEXT`: `v` rounded up to a multiple of `a`, which need not be a power of two (GNU ld's
/// `align_n`; 0 and 1 leave it as it is). It wraps past the top of the address space as GNU ld's does.
fn align_n(v: u64, a: u64) -> u64 {
    match a {
        0 | 1 => v,
        _ => v.wrapping_add(a - 1) / a * a,
    }
}

/// A page alignment of `DATA_SEGMENT_*`, which must be a power of two.
fn align_up(v: u64, a: u64) -> Result<u64, String> {
    if a == 0 || !a.is_power_of_two() {
        return Err(format!("ALIGN: {a:#x} is not a power of 2"));
    }
    Ok(v.wrapping_add(a - 1) & !(a - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl Env for Fixed {
        fn symbol(&self, name: &str) -> Option<u64> {
            match name {
                "main" => Some(0x401000),
                "end" => Some(0x404010),
                _ => None,
            }
        }
        fn section(&self, name: &str) -> Option<(u64, u64, u64, u64)> {
            (name == ".text").then_some((0x401000, 0x401000, 0x200, 16))
        }
        fn max_page_size(&self) -> u64 {
            0x1000
        }
        fn common_page_size(&self) -> u64 {
            0x1000
        }
        fn sizeof_headers(&self) -> u64 {
            0x238
        }
    }

    fn eval(text: &str) -> Result<u64, String> {
        parse(text)?.eval(&Fixed)
    }

    #[test]
    fn numbers_in_every_notation() {
        for (t, v) in [
            ("42", 42),
            ("0x2a", 42),
            ("0X2A", 42),
            ("052", 42),
            ("2ah", 42),
            ("52o", 42),
            ("101010b", 42),
            ("42d", 42),
            ("4K", 4096),
            ("2M", 2 << 20),
            ("0x10K", 16 << 10),
        ] {
            assert_eq!(eval(t), Ok(v), "{t}");
        }
        assert!(eval("0x").is_err() && eval("9z").is_err());
    }

    /// Nesting and length are bounded (a fuzzer finding: 1,762 opening parentheses overflowed the stack).
    #[test]
    fn deep_and_long_expressions_are_refused() {
        let nested =
            |n: usize, open: &str, close: &str| format!("{}1{}", open.repeat(n), close.repeat(n));
        assert_eq!(eval(&nested(200, "(", ")")), Ok(1));
        assert_eq!(eval(&nested(200, "-", "")), Ok(1));
        let deep = "expression nested too deeply (over 256 levels)";
        assert_eq!(eval(&nested(2000, "(", ")")), Err(deep.into()));
        assert_eq!(eval(&nested(100_000, "~", "")), Err(deep.into()));
        assert_eq!(eval(&nested(2000, "1 ? ", " : 0")), Err(deep.into()));
        assert_eq!(eval(&format!("0{}", " + 1".repeat(4096))), Ok(4096));
        assert_eq!(
            eval(&format!("0{}", " + 1".repeat(100_000))),
            Err("expression too long (over 4096 operators)".into())
        );
    }

    #[test]
    fn operators_follow_c_precedence() {
        assert_eq!(eval("1 + 2 * 3"), Ok(7));
        assert_eq!(eval("(1 + 2) * 3"), Ok(9));
        assert_eq!(eval("1 << 4 + 1"), Ok(32));
        assert_eq!(eval("6 & 3 | 8"), Ok(10));
        assert_eq!(eval("1 < 2 == 1"), Ok(1));
        assert_eq!(eval("-1"), Ok(u64::MAX));
        assert_eq!(eval("~0 >> 60"), Ok(15));
        assert_eq!(eval("!0 && 5 || 0"), Ok(1));
        assert_eq!(eval("main ? 1 : 2"), Ok(1));
        assert_eq!(eval("10 - 3 - 2"), Ok(5));
        assert_eq!(eval("7 % 4"), Ok(3));
        assert_eq!(eval("-240 % 7"), Ok(-2i64 as u64));
        assert_eq!(eval("-8 / 2"), Ok(-4i64 as u64));
        assert!(eval("1 / 0").unwrap_err().contains("division by zero"));
    }

    #[test]
    fn functions() {
        assert_eq!(eval("ALIGN(main + 1, 0x1000)"), Ok(0x402000));
        assert_eq!(eval("ABSOLUTE(end - main)"), Ok(0x3010));
        assert_eq!(eval("ADDR(.text) + SIZEOF(.text)"), Ok(0x401200));
        assert_eq!(eval("ALIGNOF(.text)"), Ok(16));
        assert_eq!(eval("DEFINED(main) + DEFINED(nothing)"), Ok(1));
        assert_eq!(eval("MAX(main, end) - MIN(main, end)"), Ok(0x3010));
        assert_eq!(eval("CONSTANT(MAXPAGESIZE)"), Ok(0x1000));
        assert_eq!(
            eval("SEGMENT_START(\"text-segment\", 0x400000)"),
            Ok(0x400000)
        );
        assert_eq!(eval("SIZEOF_HEADERS"), Ok(0x238));
        assert!(
            eval("ADDR(.nothing)")
                .unwrap_err()
                .contains("undefined section")
        );
        assert!(
            eval("nothing + 1")
                .unwrap_err()
                .contains("undefined symbol 'nothing'")
        );
        // GNU ld's rounding to any multiple: 0x10001 up to 0x10002 = 3 * 21846; 0 and 1 leave the value.
        assert_eq!(eval("ALIGN(0x10001, 3)"), Ok(0x10002));
        assert_eq!(eval("ALIGN(7, 0) + ALIGN(7, 1)"), Ok(14));
        assert!(eval("MAX(1)").is_err());
        assert!(eval("1 +").is_err() && eval("(1").is_err() && eval("1 2").is_err());
        let mut syms = Vec::new();
        parse("a + DEFINED(b) + MAX(c, 1)")
            .unwrap()
            .symbols(&mut syms);
        assert_eq!(syms, ["a", "c"]);
    }
}
