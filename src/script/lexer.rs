//! The linker-script lexer. GNU ld's language has two lexical modes: in commands, a word runs until whitespace
//! or punctuation and may hold the characters of file names and wildcards (`*crtbegin?.o`, `libstdc++.a`,
//! `.note.gnu.build-id`); in expressions, the C-like tokens of `crate::expr` (where `-` and `/` are operators).
//! The parser asks for the mode it is in; positions are byte offsets, turned into line and column for errors.

use crate::expr::{Tok, Tokens};

/// A byte offset into the script's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos(pub u32);

pub struct Lexer<'a> {
    pub text: &'a str,
    at: usize,
}

/// Characters that end a command-mode word, each also a token of its own.
const PUNCT: &[u8] = b"(){};,=:\"";

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, at: 0 }
    }

    pub fn pos(&self) -> Pos {
        Pos(self.at as u32)
    }

    /// 1-based line and column of `p`.
    pub fn line_col(&self, p: Pos) -> (usize, usize) {
        let before = &self.text[..(p.0 as usize).min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |n| n + 1)..]
            .chars()
            .count()
            + 1;
        (line, col)
    }

    /// Skips whitespace and `/* */` comments (and `#` lines, which version scripts and some link scripts use).
    fn skip_space(&mut self) -> Result<(), String> {
        let b = self.text.as_bytes();
        loop {
            while self.at < b.len() && b[self.at].is_ascii_whitespace() {
                self.at += 1;
            }
            if b[self.at..].starts_with(b"/*") {
                let end = self.text[self.at + 2..]
                    .find("*/")
                    .ok_or("unterminated comment")?;
                self.at += end + 4;
            } else if b.get(self.at) == Some(&b'#') {
                while self.at < b.len() && b[self.at] != b'\n' {
                    self.at += 1;
                }
            } else {
                return Ok(());
            }
        }
    }

    /// The next command-mode token and the offset after it, without consuming it; `None` at the end. A quoted
    /// string is one token without its quotes. An operator-assignment (`+=`, `<<=`...) and `=` are tokens of their
    /// own, so that `x+=1;` reads as `x`, `+=`, `1`.
    fn word_at(&mut self) -> Result<Option<(&'a str, Pos, usize)>, String> {
        self.skip_space()?;
        let text = self.text;
        let b = text.as_bytes();
        let i = self.at;
        if i >= b.len() {
            return Ok(None);
        }
        let pos = Pos(i as u32);
        if b[i] == b'"' {
            let end = text[i + 1..].find('"').ok_or("unterminated string")?;
            return Ok(Some((&text[i + 1..i + 1 + end], pos, i + end + 2)));
        }
        for op in ["<<=", ">>=", "+=", "-=", "*=", "/=", "&=", "|=", "^="] {
            if b[i..].starts_with(op.as_bytes()) {
                return Ok(Some((op, pos, i + op.len())));
            }
        }
        if PUNCT.contains(&b[i]) {
            return Ok(Some((&text[i..i + 1], pos, i + 1)));
        }
        let mut j = i;
        while j < b.len() && !b[j].is_ascii_whitespace() {
            // Inside a word, `:` is part of it (`i386:x86-64`, an `archive:member` pattern) unless a space or
            // brace follows; elsewhere it separates (`.text :`, `:phdr`).
            let inner_colon = b[j] == b':'
                && j > i
                && b.get(j + 1)
                    .is_some_and(|&c| !c.is_ascii_whitespace() && c != b'{');
            if PUNCT.contains(&b[j]) && !inner_colon {
                break;
            }
            // `x+=1`: the word ends before an operator-assignment.
            if j > i && b.get(j + 1) == Some(&b'=') && b"+-*/&|^".contains(&b[j]) {
                break;
            }
            if b[j..].starts_with(b"/*") {
                break;
            }
            j += 1;
        }
        Ok(Some((&text[i..j], pos, j)))
    }

    /// The next command-mode token, consumed.
    pub fn next_word(&mut self) -> Result<Option<(&'a str, Pos)>, String> {
        Ok(self.word_at()?.map(|(w, p, end)| {
            self.at = end;
            (w, p)
        }))
    }

    /// The next command-mode token, not consumed.
    pub fn peek_word(&mut self) -> Result<Option<&'a str>, String> {
        Ok(self.word_at()?.map(|(w, _, _)| w))
    }

    /// The next command-mode token and where it starts, not consumed.
    pub fn peek_word_at(&mut self) -> Result<Option<(&'a str, Pos)>, String> {
        Ok(self.word_at()?.map(|(w, p, _)| (w, p)))
    }

    /// The token after the next, not consumed.
    pub fn peek_second(&mut self) -> Result<Option<&'a str>, String> {
        let save = self.at;
        let first = self.next_word();
        let second = first.and_then(|_| self.peek_word());
        self.at = save;
        second
    }

    /// The raw text up to the `}` that closes the block whose `{` was just read (for `VERSION`, whose contents
    /// are a version script), consumed with the `}`.
    pub fn block_text(&mut self) -> Result<&'a str, String> {
        let start = self.at;
        let mut depth = 1;
        loop {
            match self.next_word()? {
                None => return Err("unterminated '{'".into()),
                Some(("{", _)) => depth += 1,
                Some(("}", p)) => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(&self.text[start..p.0 as usize]);
                    }
                }
                Some(_) => {}
            }
        }
    }
}

/// Expression-mode tokens (see `crate::expr::Tokens`): names of functions' arguments are read in command mode, so
/// that section names with `-` stay whole.
impl Tokens for Lexer<'_> {
    fn peek(&mut self) -> Result<Option<Tok>, String> {
        self.skip_space()?;
        if self.at >= self.text.len() {
            return Ok(None);
        }
        // `;` and the braces end an expression; they are not expression tokens.
        if matches!(self.text.as_bytes()[self.at], b';' | b'{' | b'}' | b'=')
            && !self.text.as_bytes()[self.at..].starts_with(b"==")
        {
            return Ok(None);
        }
        crate::expr::lex_one(self.text, self.at).map(|(t, _)| Some(t))
    }

    fn bump(&mut self) {
        if let Ok((_, end)) = crate::expr::lex_one(self.text, self.at) {
            self.at = end;
        }
    }

    fn name_arg(&mut self) -> Option<String> {
        let save = self.at;
        match self.next_word() {
            Ok(Some((w, _))) if w != ")" && w != "(" && w != "," => Some(w.to_string()),
            _ => {
                self.at = save;
                None
            }
        }
    }
}
