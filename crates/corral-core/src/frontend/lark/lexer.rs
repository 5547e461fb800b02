//! Lark's tokens: names, strings (with Lark's escapes and flags), regexes, ranges,
//! directives, and the layout rules that end a definition.

use crate::error::Result;
use crate::frontend::ast::Pos;
use crate::frontend::scanner::{grammar_error, Scanner};
use crate::frontend::tokens::{self, TokenRef};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Name(String),
    Colon,
    Pipe,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Question,
    Bang,
    Star,
    Plus,
    Tilde,
    DotDot,
    Dot,
    Arrow,
    Comma,
    LBrace,
    RBrace,
    Number(u32),
    Str(String, bool),
    Regex(String),
    Directive(String),
    Token(TokenRef),
    Json(String),
    Eof,
}

pub(crate) fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Str(..) => "a string".into(),
        Tok::Regex(_) => "a regex".into(),
        Tok::Directive(d) => format!("`%{d}`"),
        Tok::Token(_) => "a token reference".into(),
        Tok::Json(_) => "`%json`".into(),
        Tok::Number(n) => format!("`{n}`"),
        Tok::Eof => "the end of the grammar".into(),
        other => format!(
            "`{}`",
            match other {
                Tok::Colon => ":",
                Tok::Pipe => "|",
                Tok::LParen => "(",
                Tok::RParen => ")",
                Tok::LBracket => "[",
                Tok::RBracket => "]",
                Tok::Question => "?",
                Tok::Bang => "!",
                Tok::Star => "*",
                Tok::Plus => "+",
                Tok::Tilde => "~",
                Tok::DotDot => "..",
                Tok::Dot => ".",
                Tok::Arrow => "->",
                Tok::Comma => ",",
                Tok::LBrace => "{",
                Tok::RBrace => "}",
                _ => "?",
            }
        ),
    }
}

pub(crate) fn tokenize(text: &str) -> Result<Vec<(Tok, Pos)>> {
    let mut s = Scanner::new(text);
    let mut out = Vec::new();
    loop {
        loop {
            match s.peek() {
                Some(c) if c.is_whitespace() => {
                    s.bump();
                }
                Some('/') if s.peek_at(1) == Some('/') => {
                    while !matches!(s.peek(), None | Some('\n')) {
                        s.bump();
                    }
                }
                _ => break,
            }
        }
        let pos = s.pos();
        let Some(c) = s.peek() else {
            out.push((Tok::Eof, pos));
            return Ok(out);
        };
        let single = |t: Tok, s: &mut Scanner| {
            s.bump();
            t
        };
        let tok = match c {
            ':' => single(Tok::Colon, &mut s),
            '|' => single(Tok::Pipe, &mut s),
            '(' => single(Tok::LParen, &mut s),
            ')' => single(Tok::RParen, &mut s),
            '[' => single(Tok::LBracket, &mut s),
            ']' => single(Tok::RBracket, &mut s),
            '?' => single(Tok::Question, &mut s),
            '<' => Tok::Token(tokens::scan(&mut s, false)?),
            '!' if s.peek_at(1) == Some('<') => {
                s.bump();
                Tok::Token(tokens::scan(&mut s, true)?)
            }
            '!' => single(Tok::Bang, &mut s),
            '*' => single(Tok::Star, &mut s),
            '+' => single(Tok::Plus, &mut s),
            '~' => single(Tok::Tilde, &mut s),
            ',' => single(Tok::Comma, &mut s),
            '{' => single(Tok::LBrace, &mut s),
            '}' => single(Tok::RBrace, &mut s),
            '.' if s.peek_at(1) == Some('.') => {
                s.bump();
                single(Tok::DotDot, &mut s)
            }
            '.' => single(Tok::Dot, &mut s),
            '-' if s.peek_at(1) == Some('>') => {
                s.bump();
                single(Tok::Arrow, &mut s)
            }
            '"' => {
                s.bump();
                let body = lark_string(&mut s, pos)?;
                let insensitive = if s.peek() == Some('i') && !s.peek_at(1).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    s.bump();
                    true
                } else {
                    false
                };
                Tok::Str(body, insensitive)
            }
            '/' => Tok::Regex(s.regex()?),
            '%' => {
                s.bump();
                let mut name = String::new();
                while let Some(ch) = s.peek().filter(|c| c.is_ascii_alphabetic()) {
                    name.push(ch);
                    s.bump();
                }
                if name == "json" {
                    while s.peek().is_some_and(char::is_whitespace) {
                        s.bump();
                    }
                    if s.peek() != Some('{') {
                        return Err(grammar_error(s.pos(), "expected a JSON Schema object `{...}` after %json"));
                    }
                    Tok::Json(s.json_object()?)
                } else {
                    Tok::Directive(name)
                }
            }
            c if c.is_ascii_digit() => {
                let mut n = String::new();
                while let Some(ch) = s.peek().filter(|c| c.is_ascii_digit()) {
                    n.push(ch);
                    s.bump();
                }
                Tok::Number(n.parse().map_err(|_| grammar_error(pos, format!("number `{n}` is too large")))?)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(ch) = s.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(ch);
                    s.bump();
                }
                Tok::Name(name)
            }
            other => return Err(grammar_error(pos, format!("unexpected character `{other}`"))),
        };
        out.push((tok, pos));
    }
}

/// Reads a Lark string's body after its opening quote and decodes it as Lark does: the
/// escapes `\n \t \r \f \xHH \uHHHH \UHHHHHHHH \\ \"`; a backslash before any other
/// character stays in the string (`"\d"` is a backslash and a `d`); and, as Lark does
/// last, each pair of backslashes in the decoded text becomes one.
fn lark_string(s: &mut Scanner, start: Pos) -> Result<String> {
    let mut out = String::new();
    loop {
        let here = s.pos();
        match s.bump() {
            None | Some('\n') => {
                return Err(grammar_error(start, "unterminated string (a Lark string cannot span lines; use \\n)"));
            }
            Some('"') => break,
            Some('\\') => {
                let c = s.bump().ok_or_else(|| grammar_error(start, "unterminated string"))?;
                let digits = match c {
                    'n' => {
                        out.push('\n');
                        continue;
                    }
                    't' => {
                        out.push('\t');
                        continue;
                    }
                    'r' => {
                        out.push('\r');
                        continue;
                    }
                    'f' => {
                        out.push('\x0c');
                        continue;
                    }
                    '\\' => {
                        out.push_str("\\\\");
                        continue;
                    }
                    '"' => {
                        out.push('"');
                        continue;
                    }
                    '\n' => return Err(grammar_error(start, "unterminated string")),
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    other => {
                        out.push('\\');
                        out.push(other);
                        continue;
                    }
                };
                let mut v: u32 = 0;
                for _ in 0..digits {
                    let d = s
                        .peek()
                        .and_then(|c| c.to_digit(16))
                        .ok_or_else(|| grammar_error(here, format!("the escape \\{c} needs {digits} hex digits")))?;
                    s.bump();
                    v = v * 16 + d;
                }
                let ch =
                    char::from_u32(v).ok_or_else(|| grammar_error(here, format!("escape U+{v:X} is not a valid character")))?;
                out.push(ch);
            }
            Some(c) => out.push(c),
        }
    }
    Ok(out.replace("\\\\", "\\"))
}
