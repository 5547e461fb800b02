//! The pattern as CPython's tokenizer sees it: characters and escapes with their
//! positions, and the errors it raises (syntax errors, unsupported constructs).

use super::*;
use crate::error::{Error, Result};

/// What verbose mode skips (CPython's list; not Unicode whitespace).
pub(super) fn is_verbose_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Characters that are syntax outside a class (`)` and `|` end a sequence).
pub(super) fn is_special(c: char) -> bool {
    ".\\[{()*+?^$|".contains(c)
}

pub(super) fn is_octal(c: char) -> bool {
    ('0'..='7').contains(&c)
}

/// One token: a character, or a backslash and the character after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    Char(char),
    Esc(char),
}

impl Tok {
    pub(super) fn len(self) -> usize {
        match self {
            Tok::Char(_) => 1,
            Tok::Esc(_) => 2,
        }
    }

    pub(super) fn text(self) -> String {
        match self {
            Tok::Char(c) => c.to_string(),
            Tok::Esc(c) => format!("\\{c}"),
        }
    }
}

/// CPython's tokenizer: one token of look-ahead, positions in characters.
pub(super) struct Source<'p> {
    pub(super) pattern: &'p str,
    pub(super) chars: Vec<char>,
    pub(super) index: usize,
    pub(super) next: Option<Tok>,
}

impl<'p> Source<'p> {
    pub(super) fn new(pattern: &'p str) -> Result<Self> {
        let mut s = Source { pattern, chars: pattern.chars().collect(), index: 0, next: None };
        s.advance()?;
        Ok(s)
    }

    pub(super) fn advance(&mut self) -> Result<()> {
        let Some(&c) = self.chars.get(self.index) else {
            self.next = None;
            return Ok(());
        };
        if c == '\\' {
            let Some(&e) = self.chars.get(self.index + 1) else {
                return Err(syntax(self.pattern, self.chars.len() - 1, "bad escape (end of pattern)"));
            };
            self.index += 2;
            self.next = Some(Tok::Esc(e));
        } else {
            self.index += 1;
            self.next = Some(Tok::Char(c));
        }
        Ok(())
    }

    pub(super) fn get(&mut self) -> Result<Option<Tok>> {
        let t = self.next;
        self.advance()?;
        Ok(t)
    }

    /// Takes the next token if it is the plain character `c`.
    pub(super) fn eat(&mut self, c: char) -> Result<bool> {
        if self.next == Some(Tok::Char(c)) {
            self.advance()?;
            return Ok(true);
        }
        Ok(false)
    }

    pub(super) fn next_is(&self, c: char) -> bool {
        self.next == Some(Tok::Char(c))
    }

    pub(super) fn tell(&self) -> usize {
        self.index - self.next.map_or(0, Tok::len)
    }

    pub(super) fn seek(&mut self, index: usize) -> Result<()> {
        self.index = index;
        self.advance()
    }

    /// Up to `n` plain characters for which `ok` holds.
    pub(super) fn take_while(&mut self, n: usize, ok: fn(char) -> bool) -> Result<String> {
        let mut out = String::new();
        for _ in 0..n {
            match self.next {
                Some(Tok::Char(c)) if ok(c) => {
                    out.push(c);
                    self.advance()?;
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// The text up to `end` (consumed), as CPython's `getuntil`.
    pub(super) fn take_until(&mut self, end: char, what: &str) -> Result<String> {
        let mut out = String::new();
        loop {
            let t = self.get()?;
            match t {
                None if out.is_empty() => return Err(self.error(&format!("missing {what}"), 0)),
                None => {
                    let n = out.chars().count();
                    return Err(self.error(&format!("missing {end}, unterminated name"), n));
                }
                Some(Tok::Char(c)) if c == end => {
                    if out.is_empty() {
                        return Err(self.error(&format!("missing {what}"), 1));
                    }
                    return Ok(out);
                }
                Some(t) => out.push_str(&t.text()),
            }
        }
    }

    /// A syntax error `offset` characters before the current position.
    pub(super) fn error(&self, message: &str, offset: usize) -> Error {
        syntax(self.pattern, self.tell().saturating_sub(offset), message)
    }
}

pub(super) fn syntax(pattern: &str, position: usize, message: &str) -> Error {
    Error::RegexSyntax { message: message.to_string(), pattern: pattern.to_string(), position }
}

pub(super) fn unsupported(pattern: &str, position: usize, construct: &str) -> Error {
    Error::UnsupportedRegex { construct: construct.to_string(), pattern: pattern.to_string(), position }
}

pub(super) fn simple_escape(c: char, in_class: bool) -> Option<u32> {
    Some(match c {
        'a' => 7,
        'b' if in_class => 8,
        'f' => 12,
        'n' => 10,
        'r' => 13,
        't' => 9,
        'v' => 11,
        '\\' => 92,
        _ => return None,
    })
}

/// Is `name` a Python identifier (`str.isidentifier`)?
pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    let (start, cont) = identifier_classes();
    (first == '_' || contains(start, first as u32)) && chars.all(|c| contains(cont, c as u32))
}

/// Python's `int()` of a string of ASCII digits (with its sign, surrounding whitespace
/// and single underscores between digits); None for anything else.
pub(super) fn python_int(text: &str) -> Option<i64> {
    let t = text.trim_matches(|c: char| c.is_whitespace());
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().unwrap_or(i64::MAX);
    Some(if negative { -v } else { v })
}
