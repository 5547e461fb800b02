//! Parsers for corral's EBNF and llama.cpp's GBNF (one parser, two dialects).
//!
//! ```text
//! grammar := rule*
//! rule    := NAME "::=" alt [";"]
//! alt     := seq ("|" seq)*
//! seq     := item*            (ends before "|", ")", ";", EOF, or the next `NAME ::=`)
//! item    := atom ("?" | "*" | "+" | "{m}" | "{m,}" | "{,n}" | "{m,n}")*
//! atom    := "(" alt ")" | STRING | CLASS | "." | NAME | REGEX | "except!" "(" alt ")"
//!          | "and!" "(" alt ("," alt)+ ")" | "not!" "(" alt ")"
//!          | "perm!" ["{m,n}"] "(" alt ("," alt)+ ")"
//!          | "<[" ids "]>" | "<" TEXT ">" | "!<" ... ">" ("*" | "+" | "{m,}")
//! ```
//! `<[151667]>`, `<[a-b,c]>` and `<think>` name whole tokens, by id or by their text (see
//! `frontend::tokens`). In corral EBNF, `%json {...}` is a JSON Schema standing for a JSON
//! value (see [`EmbeddedSchema`]).
//! In `perm!(sep, e1, e2?, e3*, e4+)` the first argument is the separator and a final
//! `?`, `*` or `+` on an entry says how often it may appear (plain: exactly once).
//! Inside the parentheses of `and!` and `not!`, a top-level `,` separates arguments (it is
//! not ISO concatenation there; a group restores it).
//!
//! EBNF: strings are `"..."` or `'...'` with the escapes `\n \t \r \0 \f \v \\ \" \'
//! \xHH \uHHHH \UHHHHHHHH` (any other escape is an error); classes are `[...]` in Python
//! `re` syntax; REGEX is `/.../flags` in Python `re` syntax; comments are `#`, `//`,
//! `/* */` and `(* *)`.
//!
//! GBNF follows llama.cpp's parser: a rule ends at the end of its line (it continues
//! inside parentheses and after `::=` or `|`); names are letters, digits and `-`; strings
//! are `"..."` only; strings and classes share llama.cpp's escapes `\xHH \uHHHH
//! \UHHHHHHHH \t \r \n \\ \" \[ \] \-` (any other is an error), and a class is a list of
//! characters and `a-b` ranges, not a regex; comments are `#`. A rule defined again
//! replaces the earlier definition, as in llama.cpp (with a warning).

use super::ast::{Distinct, EmbeddedSchema, Expr, GrammarAst, PermEntry, Pos, RuleDef, Term};
use super::scanner::{grammar_error, Escapes, Scanner, GBNF_ESCAPES};
use super::tokens::{self, TokenRef};
use super::Dialect;
use crate::error::{Error, Result};
use crate::limits::Limits;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Name(String),
    Define,
    Pipe,
    LParen,
    RParen,
    Question,
    Star,
    Plus,
    Braces(u32, Option<u32>),
    Str(String),
    Class(String),
    Regex(String),
    Dot,
    Semi,
    Comma,
    Except,
    And,
    Not,
    Perm,
    Token(TokenRef),
    Json(String),
    Eof,
}

pub(crate) fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("rule name `{n}`"),
        Tok::Define => "`::=`".into(),
        Tok::Pipe => "`|`".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Question => "`?`".into(),
        Tok::Star => "`*`".into(),
        Tok::Plus => "`+`".into(),
        Tok::Braces(..) => "a `{m,n}` repetition".into(),
        Tok::Str(_) => "a string".into(),
        Tok::Class(_) => "a character class".into(),
        Tok::Regex(_) => "a regex".into(),
        Tok::Dot => "`.`".into(),
        Tok::Semi => "`;`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Except => "`except!`".into(),
        Tok::And => "`and!`".into(),
        Tok::Not => "`not!`".into(),
        Tok::Perm => "`perm!`".into(),
        Tok::Token(_) => "a token reference".into(),
        Tok::Json(_) => "`%json`".into(),
        Tok::Eof => "the end of the grammar".into(),
    }
}

/// One character of a GBNF class at `chars[i]` (a character or one of llama.cpp's
/// escapes), and the index after it.
fn gbnf_class_char(chars: &[char], i: usize, at: &dyn Fn(usize) -> Pos) -> Result<(char, usize)> {
    if chars[i] != '\\' {
        return Ok((chars[i], i + 1));
    }
    let c = chars.get(i + 1).copied().unwrap_or('\\');
    let digits = match c {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        't' => return Ok(('\t', i + 2)),
        'r' => return Ok(('\r', i + 2)),
        'n' => return Ok(('\n', i + 2)),
        '\\' | '"' | '[' | ']' | '-' => return Ok((c, i + 2)),
        _ => {
            return Err(grammar_error(at(i), format!("unknown escape `\\{c}` in a GBNF class (the escapes are {GBNF_ESCAPES})")));
        }
    };
    let hex: String = chars.iter().skip(i + 2).take(digits).collect();
    // The class's closing `]` ends the digits at the latest.
    if hex.len() != digits || !hex.chars().all(|d| d.is_ascii_hexdigit()) {
        return Err(grammar_error(at(i), format!("escape needs {digits} hex digits")));
    }
    let v = u32::from_str_radix(&hex, 16).unwrap_or(u32::MAX);
    let ch = char::from_u32(v).ok_or_else(|| grammar_error(at(i), format!("escape U+{v:X} is not a valid character")))?;
    Ok((ch, i + 2 + digits))
}

/// Appends `c` to a regex class, escaped as Python `re` reads it. The escapes also survive
/// Lark's reading of a regex (sources are exported to Lark in tests): Lark decodes `\u`
/// but keeps a backslash before punctuation, and a `/` would end its regex literal.
fn push_class_char(out: &mut String, c: char) {
    match c as u32 {
        _ if c.is_ascii_alphanumeric() => out.push(c),
        _ if c.is_ascii_punctuation() && c != '/' => {
            out.push('\\');
            out.push(c);
        }
        v @ 0..=0xFFFF => out.push_str(&format!("\\u{v:04X}")),
        v => out.push_str(&format!("\\U{v:08X}")),
    }
}

/// A GBNF class (`src`, brackets included, as the scanner read it at `at`) as a regex
/// class. GBNF classes are lists of characters and `a-b` ranges read as llama.cpp reads
/// them: no regex escapes (`\d`, `\w`), and a reversed range matches nothing.
fn gbnf_class(src: &str, at: Pos) -> Result<String> {
    let chars: Vec<char> = src.chars().collect();
    let here = |i: usize| Pos { line: at.line, col: at.col + i as u32 };
    let negated = chars.get(1) == Some(&'^');
    let mut i = if negated { 2 } else { 1 };
    let end = chars.len() - 1; // the closing `]`
    if chars[i] == ']' {
        // llama.cpp closes the class here (it matches nothing); the scanner, like Python,
        // took this `]` as a member. Neither reading is what the author meant.
        return Err(grammar_error(
            here(i),
            "`]` right after `[` closes an empty class in GBNF; write `\\]` for the character `]`",
        ));
    }
    let mut members = String::new();
    while i < end {
        let (lo, next) = gbnf_class_char(&chars, i, &here)?;
        i = next;
        let mut hi = lo;
        // As in llama.cpp: `-` makes a range unless the class closes right after it.
        if chars[i] == '-' && i + 1 < end {
            let (h, next) = gbnf_class_char(&chars, i + 1, &here)?;
            hi = h;
            i = next;
        }
        if lo > hi {
            continue; // matches nothing
        }
        push_class_char(&mut members, lo);
        if lo != hi {
            members.push('-');
            push_class_char(&mut members, hi);
        }
    }
    Ok(match (members.is_empty(), negated) {
        (true, true) => "(?s:.)".to_string(),
        (true, false) => r"[^\s\S]".to_string(),
        (false, true) => format!("[^{members}]"),
        (false, false) => format!("[{members}]"),
    })
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Splits the grammar text into tokens with their positions.
fn tokenize(text: &str, dialect: Dialect) -> Result<Vec<(Tok, Pos)>> {
    let mut s = Scanner::new(text);
    let mut out = Vec::new();
    loop {
        skip_blanks(&mut s, dialect)?;
        let pos = s.pos();
        let Some(c) = s.peek() else {
            out.push((Tok::Eof, pos));
            return Ok(out);
        };
        let tok = token(&mut s, c, pos, dialect)?;
        out.push((tok, pos));
    }
}

/// The token that starts with `c` at `pos` (not yet consumed): one function per family.
fn token(s: &mut Scanner, c: char, pos: Pos, dialect: Dialect) -> Result<Tok> {
    if let Some(tok) = punctuation(c, pos, dialect)? {
        s.bump();
        return Ok(tok);
    }
    match c {
        ':' => define(s, pos),
        '"' | '\'' => string(s, c, pos, dialect),
        '[' if dialect == Dialect::Gbnf => Ok(Tok::Class(gbnf_class(&s.class()?, pos)?)),
        '[' => Ok(Tok::Class(s.class()?)),
        '/' if dialect == Dialect::Ebnf => Ok(Tok::Regex(s.regex()?)),
        '{' => braces(s, pos, dialect),
        '<' => Ok(Tok::Token(tokens::scan(s, false)?)),
        '%' if dialect == Dialect::Ebnf => json_schema(s, pos),
        '%' if s.starts_with("%json") => {
            Err(grammar_error(pos, "`%json {...}` is written in Lark and corral EBNF grammars, not in GBNF"))
        }
        '!' if s.peek_at(1) == Some('<') => {
            s.bump();
            Ok(Tok::Token(tokens::scan(s, true)?))
        }
        c if is_name_start(c) || (dialect == Dialect::Gbnf && c.is_ascii_digit()) => name_or_operator(s, dialect),
        other => Err(grammar_error(pos, format!("unexpected character `{other}`"))),
    }
}

/// Skips whitespace and comments (`#` in both dialects; `//`, `/* */` and `(* *)` in EBNF).
fn skip_blanks(s: &mut Scanner, dialect: Dialect) -> Result<()> {
    loop {
        match s.peek() {
            Some(c) if c.is_whitespace() => {
                s.bump();
            }
            Some('#') => skip_line(s),
            Some('/') if dialect == Dialect::Ebnf && s.peek_at(1) == Some('/') => skip_line(s),
            Some(open @ ('/' | '(')) if dialect == Dialect::Ebnf && s.peek_at(1) == Some('*') => skip_block_comment(s, open)?,
            _ => return Ok(()),
        }
    }
}

/// Skips to the end of the line (the line break stays, as whitespace).
fn skip_line(s: &mut Scanner) {
    while !matches!(s.peek(), None | Some('\n')) {
        s.bump();
    }
}

/// Skips a `/* ... */` comment, or ISO EBNF's `(* ... *)`, opened by `open` here.
fn skip_block_comment(s: &mut Scanner, open: char) -> Result<()> {
    let close = if open == '/' { "*/" } else { "*)" };
    let start = s.pos();
    s.bump();
    s.bump();
    while !s.starts_with(close) {
        if s.bump().is_none() {
            return Err(grammar_error(start, format!("unterminated comment {open}* ... {close}")));
        }
    }
    s.bump();
    s.bump();
    Ok(())
}

/// The one-character operator `c` (consumed by the caller), None if `c` is not one.
fn punctuation(c: char, pos: Pos, dialect: Dialect) -> Result<Option<Tok>> {
    Ok(Some(match c {
        '|' => Tok::Pipe,
        '(' => Tok::LParen,
        ')' => Tok::RParen,
        '?' => Tok::Question,
        '*' => Tok::Star,
        '+' => Tok::Plus,
        ';' if dialect == Dialect::Gbnf => {
            return Err(grammar_error(pos, "unexpected `;`: a GBNF rule ends at the end of its line"));
        }
        ';' => Tok::Semi,
        // ISO EBNF's concatenation operator: items may be separated by commas.
        ',' if dialect == Dialect::Ebnf => Tok::Comma,
        '.' => Tok::Dot,
        _ => return Ok(None),
    }))
}

/// `%json {...}` at `pos`: a JSON Schema's text.
fn json_schema(s: &mut Scanner, pos: Pos) -> Result<Tok> {
    if !s.starts_with("%json") {
        return Err(grammar_error(pos, "unexpected `%` (the one directive is `%json {...}`, a JSON Schema)"));
    }
    (0..5).for_each(|_| {
        s.bump();
    });
    while s.peek().is_some_and(char::is_whitespace) {
        s.bump();
    }
    if s.peek() != Some('{') {
        return Err(grammar_error(s.pos(), "expected a JSON Schema object `{...}` after %json"));
    }
    Ok(Tok::Json(s.json_object()?))
}

/// `::=` at the `:` at `pos`.
fn define(s: &mut Scanner, pos: Pos) -> Result<Tok> {
    if !s.starts_with("::=") {
        return Err(grammar_error(pos, "expected `::=` (rules are written `name ::= ...`)"));
    }
    s.bump();
    s.bump();
    s.bump();
    Ok(Tok::Define)
}

/// A string opened by the quote `quote` at `pos`, its escapes decoded.
fn string(s: &mut Scanner, quote: char, pos: Pos, dialect: Dialect) -> Result<Tok> {
    if quote == '\'' && dialect == Dialect::Gbnf {
        return Err(grammar_error(pos, "GBNF strings are written in double quotes (\"...\")"));
    }
    s.bump();
    let escapes = if dialect == Dialect::Gbnf { Escapes::Gbnf } else { Escapes::Ebnf };
    Ok(Tok::Str(s.string_body(quote, pos, escapes)?))
}

/// A `{m}`, `{m,}`, `{,n}` or `{m,n}` repetition opened at `pos`.
fn braces(s: &mut Scanner, pos: Pos, dialect: Dialect) -> Result<Tok> {
    s.bump();
    let mut body = String::new();
    loop {
        match s.bump() {
            Some('}') => break,
            // Spaces are allowed anywhere inside (and dropped).
            Some(ch) if ch.is_ascii_digit() || ch == ',' => body.push(ch),
            Some(' ') => {}
            _ => return Err(bad_repetition(pos)),
        }
    }
    if dialect == Dialect::Gbnf && !body.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(grammar_error(pos, "a GBNF repetition starts with its least count: {m}, {m,} or {m,n}"));
    }
    let num = |t: &str| -> Result<u32> {
        t.parse::<u32>().map_err(|_| grammar_error(pos, format!("repetition count `{t}` is not a number")))
    };
    match body.split_once(',') {
        None if !body.is_empty() => {
            let n = num(&body)?;
            Ok(Tok::Braces(n, Some(n)))
        }
        Some((a, b)) if !(a.is_empty() && b.is_empty()) => {
            let lo = if a.is_empty() { 0 } else { num(a)? };
            let hi = if b.is_empty() { None } else { Some(num(b)?) };
            if hi.is_some_and(|h| h < lo) {
                return Err(grammar_error(pos, format!("repetition {{{lo},{}}} has max < min", hi.unwrap_or(0))));
            }
            Ok(Tok::Braces(lo, hi))
        }
        _ => Err(bad_repetition(pos)),
    }
}

/// The error for a `{...}` that is not a repetition.
fn bad_repetition(pos: Pos) -> Error {
    grammar_error(pos, "a repetition must look like {m}, {m,}, {,n} or {m,n}")
}

/// A rule name, or an operator written as a name and `!` (`except!`, `and!`, `not!`, `perm!`).
fn name_or_operator(s: &mut Scanner, dialect: Dialect) -> Result<Tok> {
    let mut name = String::new();
    while let Some(ch) = s.peek().filter(|&ch| is_name_char(ch)) {
        if ch == '_' && dialect == Dialect::Gbnf {
            return Err(grammar_error(s.pos(), "`_` cannot be part of a GBNF rule name (letters, digits and `-`)"));
        }
        name.push(ch);
        s.bump();
    }
    let operator = match name.as_str() {
        "except" => Tok::Except,
        "and" => Tok::And,
        "not" => Tok::Not,
        "perm" => Tok::Perm,
        _ => return Ok(Tok::Name(name)),
    };
    if s.peek() != Some('!') {
        return Ok(Tok::Name(name));
    }
    s.bump();
    Ok(operator)
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    i: usize,
    depth: u32,
    max_depth: u32,
    /// Inside `and!(...)`/`not!(...)` (not in a nested group): `,` ends an argument.
    in_args: bool,
    dialect: Dialect,
    /// Open parentheses around the current token (GBNF rules continue inside them).
    groups: u32,
    /// The tokens named so far.
    refs: crate::vocab::TokenRefs,
    /// The JSON Schemas written so far.
    schemas: Vec<EmbeddedSchema>,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }

    fn pos(&self) -> Pos {
        self.toks[self.i].1
    }

    fn next(&mut self) -> (Tok, Pos) {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn at_rule_start(&self) -> bool {
        matches!(self.peek(), Tok::Name(_)) && matches!(self.toks.get(self.i + 1), Some((Tok::Define, _)))
    }

    /// GBNF: does the current rule end before this token? As in llama.cpp, a line break
    /// ends a rule except inside parentheses and right after `::=` or `|`.
    fn gbnf_rule_ends(&self) -> bool {
        if self.dialect != Dialect::Gbnf || self.groups > 0 || self.i == 0 {
            return false;
        }
        let (prev, prev_pos) = &self.toks[self.i - 1];
        prev_pos.line < self.pos().line && !matches!(prev, Tok::Define | Tok::Pipe)
    }

    fn expect(&mut self, want: Tok, context: &str) -> Result<Pos> {
        let (t, p) = self.next();
        if t == want {
            Ok(p)
        } else {
            Err(grammar_error(p, format!("expected {} {context}, found {}", describe(&want), describe(&t))))
        }
    }

    fn grammar(&mut self) -> Result<GrammarAst> {
        let mut g = GrammarAst::default();
        while *self.peek() != Tok::Eof {
            let (t, pos) = self.next();
            let Tok::Name(name) = t else {
                return Err(grammar_error(pos, format!("expected a rule name (`name ::= ...`), found {}", describe(&t))));
            };
            self.expect(Tok::Define, &format!("after the rule name `{name}`"))?;
            let expr = self.alt()?;
            if *self.peek() == Tok::Semi {
                self.next();
            }
            match self.peek() {
                Tok::Eof => {}
                Tok::Name(_) if self.dialect != Dialect::Gbnf || self.gbnf_rule_ends() => {}
                t => {
                    let msg = match self.dialect {
                        Dialect::Gbnf => {
                            format!("unexpected {} in rule `{name}`; a GBNF rule ends at the end of its line", describe(t))
                        }
                        _ => format!("unexpected {} in rule `{name}`", describe(t)),
                    };
                    return Err(grammar_error(self.pos(), msg));
                }
            }
            g.rules.push(RuleDef { name, expr, pos, is_terminal: false });
        }
        if self.dialect == Dialect::Gbnf {
            keep_last_definitions(&mut g);
        }
        g.tokens = std::mem::take(&mut self.refs);
        g.schemas = std::mem::take(&mut self.schemas);
        Ok(g)
    }

    fn alt(&mut self) -> Result<Expr> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Error::LimitExceeded {
                limit: "max_grammar_nesting",
                value: self.max_depth as usize,
                context: format!("the nesting of the grammar at {}", self.pos()),
            });
        }
        let mut alts = vec![self.seq()?];
        while *self.peek() == Tok::Pipe && !self.gbnf_rule_ends() {
            self.next();
            alts.push(self.seq()?);
        }
        self.depth -= 1;
        Ok(if alts.len() == 1 { alts.pop().unwrap_or(Expr::Empty) } else { Expr::Alt(alts) })
    }

    fn seq(&mut self) -> Result<Expr> {
        let mut items = Vec::new();
        loop {
            if self.gbnf_rule_ends() {
                break;
            }
            match self.peek() {
                Tok::Pipe | Tok::RParen | Tok::Semi | Tok::Eof => break,
                Tok::Name(_) if self.at_rule_start() && self.dialect != Dialect::Gbnf => break,
                Tok::Name(_) if self.at_rule_start() => {
                    return Err(grammar_error(self.pos(), "a GBNF rule must start on a new line"));
                }
                Tok::Comma if self.in_args => break,
                Tok::Comma if !items.is_empty() => {
                    self.next();
                }
                _ => items.push(self.item()?),
            }
        }
        Ok(match items.len() {
            0 => Expr::Empty,
            1 => items.pop().unwrap_or(Expr::Empty),
            _ => Expr::Seq(items),
        })
    }

    fn item(&mut self) -> Result<Expr> {
        let mut e = self.atom()?;
        loop {
            let pos = self.pos();
            let (min, max) = match self.peek() {
                Tok::Question => (0, Some(1)),
                Tok::Star => (0, None),
                Tok::Plus => (1, None),
                Tok::Braces(a, b) => (*a, *b),
                _ => break,
            };
            self.next();
            e = Expr::Repeat { expr: Box::new(e), min, max, pos };
        }
        Ok(e)
    }

    /// `( alt ("," alt)* )` after `and!` or `not!`.
    fn arguments(&mut self, op: &str) -> Result<Vec<Expr>> {
        self.expect(Tok::LParen, &format!("after `{op}`"))?;
        let outer = std::mem::replace(&mut self.in_args, true);
        let mut exprs = vec![self.alt()?];
        while *self.peek() == Tok::Comma {
            self.next();
            exprs.push(self.alt()?);
        }
        self.in_args = outer;
        self.expect(Tok::RParen, &format!("to close `{op}(`"))?;
        Ok(exprs)
    }

    /// The rest of `perm!{m,n}(sep, entries...)` after `perm!`.
    fn perm(&mut self, pos: Pos) -> Result<Expr> {
        let (min, max) = match *self.peek() {
            Tok::Braces(a, b) => {
                self.next();
                (a, b)
            }
            _ => (0, None),
        };
        let mut args = self.arguments("perm!")?.into_iter();
        let sep = args.next().unwrap_or(Expr::Empty);
        let mut entries = Vec::new();
        for arg in args {
            let entry = match arg {
                Expr::Repeat { expr, min: m, max: x, pos } => match (m, x) {
                    (0, Some(1)) => PermEntry { expr: *expr, required: false, repeat: false, distinct: Distinct::No },
                    (0, None) => PermEntry { expr: *expr, required: false, repeat: true, distinct: Distinct::No },
                    (1, None) => PermEntry { expr: *expr, required: true, repeat: true, distinct: Distinct::No },
                    _ => {
                        return Err(grammar_error(pos, "a perm! entry may end in `?`, `*` or `+` only (group a counted repetition in an entry of its own rule)"));
                    }
                },
                other => PermEntry { expr: other, required: true, repeat: false, distinct: Distinct::No },
            };
            entries.push(entry);
        }
        if entries.is_empty() {
            return Err(grammar_error(
                pos,
                "perm! needs a separator (\"\" for none) and at least one entry, separated by commas",
            ));
        }
        Ok(Expr::Perm { sep: Box::new(sep), entries, min, max, pos })
    }

    fn atom(&mut self) -> Result<Expr> {
        let (t, pos) = self.next();
        Ok(match t {
            Tok::LParen => {
                let outer = std::mem::replace(&mut self.in_args, false);
                self.groups += 1;
                let e = self.alt()?;
                self.in_args = outer;
                let closed = self.expect(Tok::RParen, &format!("to close the group opened at {pos}"));
                self.groups -= 1;
                closed?;
                e
            }
            Tok::Str(s) => {
                if s.is_empty() {
                    Expr::Empty
                } else {
                    Expr::Term { term: Term::Literal(s), pos }
                }
            }
            Tok::Class(c) => Expr::Term { term: Term::Regex(c), pos },
            Tok::Regex(r) => Expr::Term { term: Term::Regex(r), pos },
            Tok::Dot => Expr::Term { term: Term::Regex("(?s:.)".into()), pos },
            Tok::Name(name) => Expr::Ref { name, pos },
            Tok::Except => {
                self.expect(Tok::LParen, "after `except!`")?;
                // Commas keep their ISO meaning (concatenation) in `except!`, as before.
                let outer = std::mem::replace(&mut self.in_args, false);
                let inner = self.alt()?;
                self.in_args = outer;
                self.expect(Tok::RParen, "to close `except!(`")?;
                Expr::Except { expr: Box::new(inner), pos }
            }
            Tok::And => {
                let exprs = self.arguments("and!")?;
                if exprs.len() < 2 {
                    return Err(grammar_error(pos, "and! needs two or more arguments, separated by commas"));
                }
                Expr::And { exprs, pos }
            }
            Tok::Not => {
                let mut exprs = self.arguments("not!")?;
                if exprs.len() != 1 {
                    return Err(grammar_error(pos, "not! takes exactly one argument"));
                }
                Expr::Not { expr: Box::new(exprs.pop().unwrap_or(Expr::Empty)), pos }
            }
            Tok::Perm => self.perm(pos)?,
            Tok::Token(r) => {
                let repeated = matches!(self.peek(), Tok::Star | Tok::Plus | Tok::Braces(_, None));
                tokens::expr(&r, pos, repeated, &mut self.refs)?
            }
            Tok::Json(text) => EmbeddedSchema::reference(&mut self.schemas, text, pos),
            other => {
                return Err(grammar_error(pos, format!("expected an expression, found {}", describe(&other))));
            }
        })
    }
}

/// Parses EBNF or GBNF text into the grammar AST (Lark has its own parser, see
/// [`super::parse`], which chooses).
pub fn parse_bnf(text: &str, dialect: Dialect, limits: &Limits) -> Result<GrammarAst> {
    if text.len() > limits.max_grammar_bytes {
        return Err(Error::LimitExceeded {
            limit: "max_grammar_bytes",
            value: limits.max_grammar_bytes,
            context: format!("a grammar of {} bytes", text.len()),
        });
    }
    let toks = tokenize(text, dialect)?;
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
        max_depth: limits.max_grammar_nesting,
        in_args: false,
        dialect,
        groups: 0,
        refs: Default::default(),
        schemas: Vec::new(),
    };
    p.grammar()
}

/// GBNF: a rule defined again replaces its earlier definitions, as in llama.cpp (whose
/// parser stores each rule under its name, the last one written winning); a warning
/// says so, since the author may have meant alternatives.
fn keep_last_definitions(g: &mut GrammarAst) {
    let mut last: crate::util::hash::HashMap<String, usize> = Default::default();
    for (k, r) in g.rules.iter().enumerate() {
        last.insert(r.name.clone(), k);
    }
    let mut kept = Vec::with_capacity(last.len());
    for (k, r) in std::mem::take(&mut g.rules).into_iter().enumerate() {
        let winner = last[&r.name];
        if winner == k {
            kept.push(r);
        } else {
            g.warnings.push(format!(
                "rule `{}` at line {}, column {} is defined again later; as in llama.cpp, the last definition replaces it",
                r.name, r.pos.line, r.pos.col
            ));
        }
    }
    g.rules = kept;
}

#[cfg(test)]
#[path = "ebnf_tests.rs"]
mod tests;
