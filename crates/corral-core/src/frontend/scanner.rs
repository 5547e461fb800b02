//! The character scanner shared by the grammar syntaxes: positions (line:column),
//! quoted strings with each dialect's escapes, `[...]` classes and `/.../flags` regexes.

use super::ast::Pos;
use crate::error::{Error, Result};

/// Which escapes a quoted string accepts (each syntax has its own set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escapes {
    /// corral EBNF: `\n \t \r \0 \f \v \\ \" \' \xHH \uHHHH \UHHHHHHHH`.
    Ebnf,
    /// llama.cpp's GBNF: `\xHH \uHHHH \UHHHHHHHH \t \r \n \\ \" \[ \] \-`.
    Gbnf,
}

/// The escapes of each set, for error messages.
pub(crate) const EBNF_ESCAPES: &str = r#"\n \t \r \0 \f \v \\ \" \' \xHH \uHHHH \UHHHHHHHH"#;

pub(crate) const GBNF_ESCAPES: &str = r#"\xHH \uHHHH \UHHHHHHHH \t \r \n \\ \" \[ \] \-"#;

/// A grammar syntax error at a position.
pub(crate) fn grammar_error(pos: Pos, message: impl Into<String>) -> Error {
    Error::Grammar { message: message.into(), line: pos.line, col: pos.col }
}

/// Character scanner with line/column tracking, shared by the grammar parsers.
pub(crate) struct Scanner {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
}

impl Scanner {
    pub(crate) fn new(text: &str) -> Self {
        Scanner { chars: text.chars().collect(), i: 0, line: 1, col: 1 }
    }

    pub(crate) fn pos(&self) -> Pos {
        Pos { line: self.line, col: self.col }
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    pub(crate) fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    pub(crate) fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    pub(crate) fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(k, c)| self.peek_at(k) == Some(c))
    }

    /// Reads a JSON object's text, from the `{` that is the next character to its matching
    /// `}` (strings and their escapes skipped whole); the JSON itself is read later.
    pub(crate) fn json_object(&mut self) -> Result<String> {
        let start = self.pos();
        let mut out = String::new();
        let mut depth = 0usize;
        let mut in_string = false;
        loop {
            let Some(c) = self.bump() else {
                return Err(grammar_error(start, "unterminated JSON object after %json (its braces do not balance)"));
            };
            out.push(c);
            match c {
                '\\' if in_string => {
                    if let Some(e) = self.bump() {
                        out.push(e);
                    }
                }
                '"' => in_string = !in_string,
                '{' | '[' if !in_string => depth += 1,
                '}' | ']' if !in_string => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(out);
                    }
                }
                _ => {}
            }
        }
    }

    /// Reads the body of a quoted string after its opening quote, decoding escapes.
    pub(crate) fn string_body(&mut self, quote: char, start: Pos, escapes: Escapes) -> Result<String> {
        let mut out = String::new();
        loop {
            let here = self.pos();
            match self.bump() {
                None => return Err(grammar_error(start, "unterminated string")),
                // llama.cpp reads a line break inside a GBNF string as itself.
                Some('\n') if escapes != Escapes::Gbnf => {
                    return Err(grammar_error(start, "unterminated string (a string cannot span lines; use \\n)"))
                }
                Some(c) if c == quote => return Ok(out),
                Some('\\') => out.push(self.escape(here, escapes)?),
                Some(c) => out.push(c),
            }
        }
    }

    fn hex(&mut self, n: usize, at: Pos) -> Result<char> {
        let mut v: u32 = 0;
        for _ in 0..n {
            let d = self
                .bump()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| grammar_error(at, format!("escape needs {n} hex digits")))?;
            v = v * 16 + d;
        }
        char::from_u32(v).ok_or_else(|| grammar_error(at, format!("escape U+{v:X} is not a valid character")))
    }

    /// Decodes one escape (after the backslash at `at`) in a string.
    fn escape(&mut self, at: Pos, escapes: Escapes) -> Result<char> {
        let c = self.bump().ok_or_else(|| grammar_error(at, "unterminated string"))?;
        match (c, escapes) {
            ('n', _) => Ok('\n'),
            ('t', _) => Ok('\t'),
            ('r', _) => Ok('\r'),
            ('x', _) => self.hex(2, at),
            ('u', _) => self.hex(4, at),
            ('U', _) => self.hex(8, at),
            ('\\' | '"', _) => Ok(c),
            ('0', Escapes::Ebnf) => Ok('\0'),
            ('f', Escapes::Ebnf) => Ok('\x0c'),
            ('v', Escapes::Ebnf) => Ok('\x0b'),
            ('\'', Escapes::Ebnf) => Ok(c),
            ('[' | ']' | '-', Escapes::Gbnf) => Ok(c),
            _ => {
                let (syntax, known) = match escapes {
                    Escapes::Ebnf => ("an EBNF", EBNF_ESCAPES),
                    Escapes::Gbnf => ("a GBNF", GBNF_ESCAPES),
                };
                Err(grammar_error(at, format!("unknown escape `\\{c}` in {syntax} string (the escapes are {known})")))
            }
        }
    }

    /// Reads a `[...]` class starting at `[`, returning its source (brackets included).
    pub(crate) fn class(&mut self) -> Result<String> {
        let start = self.pos();
        let mut out = String::new();
        self.bump();
        out.push('[');
        if self.peek() == Some('^') {
            self.bump();
            out.push('^');
        }
        let mut first = true;
        loop {
            match self.bump() {
                None | Some('\n') => return Err(grammar_error(start, "unterminated character class")),
                Some(']') if !first => {
                    out.push(']');
                    return Ok(out);
                }
                Some('\\') => {
                    out.push('\\');
                    match self.bump() {
                        Some(c) => out.push(c),
                        None => return Err(grammar_error(start, "unterminated character class")),
                    }
                }
                Some(c) => out.push(c),
            }
            first = false;
        }
    }

    /// Reads `/.../flags` starting at `/`, returning a Python-syntax regex.
    pub(crate) fn regex(&mut self) -> Result<String> {
        let start = self.pos();
        self.bump();
        let mut body = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => return Err(grammar_error(start, "unterminated regex /.../")),
                Some('/') => break,
                Some('\\') => match self.bump() {
                    Some('/') => body.push('/'),
                    Some(c) => {
                        body.push('\\');
                        body.push(c);
                    }
                    None => return Err(grammar_error(start, "unterminated regex /.../")),
                },
                Some(c) => body.push(c),
            }
        }
        let mut flags = String::new();
        while let Some(c) = self.peek() {
            if "aimsux".contains(c) {
                flags.push(c);
                self.bump();
            } else {
                break;
            }
        }
        Ok(scoped_regex(&body, &flags))
    }
}

/// A terminal's regex `body` with its `flags` as a self-contained pattern: terminals are
/// joined into larger patterns, where Python allows global flags only at the very start,
/// so the trailing flags and any leading global flag groups of the body (`(?i)abc`) become
/// one scoped group around the body. Under verbose mode a newline ends the body, so that
/// a trailing `#` comment cannot swallow the group's `)`.
pub(crate) fn scoped_regex(body: &str, flags: &str) -> String {
    let mut flags = flags.to_string();
    let mut rest = body;
    // Global flag groups: `(?` then flag letters then `)`.
    while let Some(after) = rest.strip_prefix("(?") {
        let letters: String = after.chars().take_while(|c| "aiLmsux".contains(*c)).collect();
        match after[letters.len()..].strip_prefix(')') {
            Some(tail) if !letters.is_empty() => {
                flags.push_str(&letters);
                rest = tail;
            }
            _ => break,
        }
    }
    if flags.is_empty() {
        return body.to_string();
    }
    // Repeated letters are harmless to Python; keep each once for a tidy pattern.
    let mut unique = String::new();
    for c in flags.chars() {
        if !unique.contains(c) {
            unique.push(c);
        }
    }
    let end = if unique.contains('x') { "\n)" } else { ")" };
    format!("(?{unique}:{rest}{end}")
}
