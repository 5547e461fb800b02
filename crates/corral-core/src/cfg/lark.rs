//! The Lark grammar syntax (the subset Outlines users write) → the grammar AST.
//!
//! Supported: rules `name: ...` (with `?`/`!` prefixes, `.N` priorities and `-> alias`,
//! which only shape Lark's parse trees and are ignored), TERMINALS (`NAME: ...`, regular),
//! strings with the `i` flag, `/regex/flags`, ranges `"a".."z"`, `[x]`, `x?`, `x*`, `x+`,
//! `x ~ n`, `x ~ n..m`, groups, `//` comments, `%import common.X [-> Y]`,
//! `%import common (X, Y)` and `%ignore`. Templates, `%declare`, `%override` and
//! `%extend` are rejected with their position.
//!
//! The language is the grammar's exact language, with `%ignore`d text allowed between any
//! two tokens: every split of the text into the grammar's terminals counts (as with
//! Lark's Earley parser and `lexer="dynamic_complete"`), with no greedy lexing.

use super::ast::{Expr, GrammarAst, Pos, RuleDef, Term};
use super::parse::{grammar_error, Scanner};
use crate::error::{Error, Result};
use crate::limits::Limits;

/// corral's own definitions of the terminals of Lark's `common` library.
const COMMON: &str = r#"
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+"|"-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e"|"E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+"|"-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+"|"-"] NUMBER
ESCAPED_STRING: /"(?:[^"\\\n]|\\[^\n])*"/
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_"|LETTER) ("_"|LETTER|DIGIT)*
WS_INLINE: (" "|/\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: "/*" /(?s:.)*?/ "*/"
SQL_COMMENT: /--[^\n]*/
"#;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
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
    Eof,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Str(..) => "a string".into(),
        Tok::Regex(_) => "a regex".into(),
        Tok::Directive(d) => format!("`%{d}`"),
        Tok::Number(n) => format!("`{n}`"),
        Tok::Eof => "the end of the grammar".into(),
        other => format!("`{}`", match other {
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
        }),
    }
}

fn tokenize(text: &str) -> Result<Vec<(Tok, Pos)>> {
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
        let single = |t: Tok, s: &mut Scanner<'_>| {
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
                let body = s.string_body('"', pos)?;
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
                Tok::Directive(name)
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

fn is_terminal_name(name: &str) -> bool {
    name.trim_start_matches('_').chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    i: usize,
    depth: u32,
    max_depth: u32,
}

/// What a definition or directive produced.
enum Item {
    Rule(RuleDef),
    Import { name: String, alias: String, pos: Pos },
    Ignore(Expr),
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].0
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
    fn expect(&mut self, want: Tok, context: &str) -> Result<Pos> {
        let (t, p) = self.next();
        if t == want {
            Ok(p)
        } else {
            Err(grammar_error(p, format!("expected {} {context}, found {}", describe(&want), describe(&t))))
        }
    }

    /// Is a definition (`[?!]name[.N]:`) or a directive starting here?
    fn at_definition(&self) -> bool {
        let mut k = 0;
        if matches!(self.peek(), Tok::Directive(_)) {
            return true;
        }
        if matches!(self.peek(), Tok::Question | Tok::Bang) {
            // `?rule:` / `!rule:` only at the start of a line: elsewhere `?` is an operator.
            let first_on_line = self.i == 0 || self.toks[self.i - 1].1.line < self.toks[self.i].1.line;
            if !first_on_line {
                return false;
            }
            k = 1;
        }
        if !matches!(self.peek_at(k), Tok::Name(_)) {
            return false;
        }
        match self.peek_at(k + 1) {
            Tok::Colon => true,
            Tok::Dot => matches!(self.peek_at(k + 2), Tok::Number(_)) && matches!(self.peek_at(k + 3), Tok::Colon),
            Tok::LBrace => true, // a template definition: rejected when parsed
            _ => false,
        }
    }

    fn definition(&mut self) -> Result<Item> {
        let pos = self.pos();
        if let Tok::Directive(d) = self.peek().clone() {
            self.next();
            return match d.as_str() {
                "import" => self.import(pos),
                "ignore" => Ok(Item::Ignore(self.alt()?)),
                other => Err(grammar_error(pos, format!("`%{other}` is not supported (only %import and %ignore)"))),
            };
        }
        if matches!(self.peek(), Tok::Question | Tok::Bang) {
            self.next();
        }
        let (t, pos) = self.next();
        let Tok::Name(name) = t else {
            return Err(grammar_error(pos, format!("expected a rule or terminal name, found {}", describe(&t))));
        };
        if *self.peek() == Tok::LBrace {
            return Err(grammar_error(pos, format!("templates (`{name}{{...}}`) are not supported")));
        }
        if *self.peek() == Tok::Dot {
            // Priority: it only orders Lark's lexer and parser choices.
            self.next();
            self.next();
        }
        self.expect(Tok::Colon, &format!("after `{name}`"))?;
        let expr = self.alt()?;
        let is_terminal = is_terminal_name(&name);
        Ok(Item::Rule(RuleDef { name, expr, pos, is_terminal }))
    }

    fn import(&mut self, pos: Pos) -> Result<Item> {
        let (t, p) = self.next();
        let Tok::Name(module) = t else {
            return Err(grammar_error(p, "expected a module name after %import"));
        };
        if module != "common" {
            return Err(grammar_error(p, format!("only `%import common...` is supported, not `{module}`")));
        }
        match self.next() {
            (Tok::Dot, _) => {
                let (t, p) = self.next();
                let Tok::Name(name) = t else {
                    return Err(grammar_error(p, "expected a terminal name after `common.`"));
                };
                let alias = if *self.peek() == Tok::Arrow {
                    self.next();
                    match self.next() {
                        (Tok::Name(a), _) => a,
                        (t, p) => return Err(grammar_error(p, format!("expected a name after `->`, found {}", describe(&t)))),
                    }
                } else {
                    name.clone()
                };
                Ok(Item::Import { name, alias, pos })
            }
            (Tok::LParen, _) => {
                // %import common (A, B, C): returned one at a time via a queue.
                let mut names = Vec::new();
                loop {
                    match self.next() {
                        (Tok::Name(n), _) => names.push(n),
                        (Tok::Comma, _) => {}
                        (Tok::RParen, _) => break,
                        (t, p) => return Err(grammar_error(p, format!("unexpected {} in %import list", describe(&t)))),
                    }
                }
                let joined = names.join(",");
                Ok(Item::Import { name: joined.clone(), alias: joined, pos })
            }
            (t, p) => Err(grammar_error(p, format!("expected `.` or `(` after %import common, found {}", describe(&t)))),
        }
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
        while *self.peek() == Tok::Pipe {
            self.next();
            alts.push(self.seq()?);
        }
        self.depth -= 1;
        Ok(if alts.len() == 1 { alts.pop().unwrap_or(Expr::Empty) } else { Expr::Alt(alts) })
    }

    fn seq(&mut self) -> Result<Expr> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Tok::Pipe | Tok::RParen | Tok::RBracket | Tok::Eof => break,
                Tok::Arrow => {
                    // `-> alias`: names the parse-tree node only.
                    self.next();
                    self.next();
                    break;
                }
                _ if self.at_definition() => break,
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
            if self.at_definition() {
                // `?name:` starts the next rule; it is not a `?` operator.
                break;
            }
            let (min, max) = match self.peek() {
                Tok::Question => (0, Some(1)),
                Tok::Star => (0, None),
                Tok::Plus => (1, None),
                Tok::Tilde => {
                    self.next();
                    let (t, p) = self.next();
                    let Tok::Number(a) = t else {
                        return Err(grammar_error(p, "expected a number after `~`"));
                    };
                    let b = if *self.peek() == Tok::DotDot {
                        self.next();
                        match self.next() {
                            (Tok::Number(b), _) => b,
                            (_, p) => return Err(grammar_error(p, "expected a number after `..`")),
                        }
                    } else {
                        a
                    };
                    if b < a {
                        return Err(grammar_error(pos, format!("repetition ~ {a}..{b} has max < min")));
                    }
                    e = Expr::Repeat { expr: Box::new(e), min: a, max: Some(b), pos };
                    continue;
                }
                _ => break,
            };
            self.next();
            e = Expr::Repeat { expr: Box::new(e), min, max, pos };
        }
        Ok(e)
    }

    fn atom(&mut self) -> Result<Expr> {
        let (t, pos) = self.next();
        Ok(match t {
            Tok::LParen => {
                let e = self.alt()?;
                self.expect(Tok::RParen, &format!("to close the group opened at {pos}"))?;
                e
            }
            Tok::LBracket => {
                let e = self.alt()?;
                self.expect(Tok::RBracket, &format!("to close the `[` opened at {pos}"))?;
                Expr::Repeat { expr: Box::new(e), min: 0, max: Some(1), pos }
            }
            Tok::Str(s, insensitive) => {
                if *self.peek() == Tok::DotDot {
                    self.next();
                    let (t, p) = self.next();
                    let Tok::Str(hi, _) = t else {
                        return Err(grammar_error(p, "expected a string after `..`"));
                    };
                    let (mut a, mut b) = (s.chars(), hi.chars());
                    match (a.next(), a.next(), b.next(), b.next()) {
                        (Some(lo), None, Some(hi), None) if lo <= hi => {
                            let class = format!("[{}-{}]", regex_syntax::escape(&lo.to_string()), regex_syntax::escape(&hi.to_string()));
                            Expr::Term { term: Term::Regex(class), pos }
                        }
                        _ => return Err(grammar_error(pos, "a range needs two single characters, low..high")),
                    }
                } else if s.is_empty() {
                    Expr::Empty
                } else if insensitive {
                    Expr::Term { term: Term::Regex(format!("(?i:{})", regex_syntax::escape(&s))), pos }
                } else {
                    Expr::Term { term: Term::Literal(s), pos }
                }
            }
            Tok::Regex(r) => Expr::Term { term: Term::Regex(r), pos },
            Tok::Name(name) => Expr::Ref { name, pos },
            other => return Err(grammar_error(pos, format!("expected an expression, found {}", describe(&other)))),
        })
    }
}

fn parse_items(text: &str, limits: &Limits) -> Result<Vec<Item>> {
    let toks = tokenize(text)?;
    let mut p = Parser { toks, i: 0, depth: 0, max_depth: limits.max_grammar_nesting };
    let mut items = Vec::new();
    while *p.peek() != Tok::Eof {
        if !p.at_definition() {
            let pos = p.pos();
            let t = p.peek().clone();
            return Err(grammar_error(pos, format!("expected a rule (`name: ...`), a TERMINAL or a %directive, found {}", describe(&t))));
        }
        items.push(p.definition()?);
    }
    Ok(items)
}

/// Renames references in an imported definition (for `%import common.X -> Y`).
fn rename(e: &mut Expr, from: &str, to: &str) {
    match e {
        Expr::Ref { name, .. } if name == from => *name = to.to_string(),
        Expr::Seq(v) | Expr::Alt(v) => v.iter_mut().for_each(|x| rename(x, from, to)),
        Expr::Repeat { expr, .. } | Expr::Except { expr, .. } | Expr::Not { expr, .. } => rename(expr, from, to),
        Expr::And { exprs, .. } => exprs.iter_mut().for_each(|x| rename(x, from, to)),
        _ => {}
    }
}

/// Parses a Lark grammar into the grammar AST.
pub fn parse(text: &str, limits: &Limits) -> Result<GrammarAst> {
    if text.len() > limits.max_grammar_bytes {
        return Err(Error::LimitExceeded {
            limit: "max_grammar_bytes",
            value: limits.max_grammar_bytes,
            context: format!("a grammar of {} bytes", text.len()),
        });
    }
    let items = parse_items(text, limits)?;
    let common: Vec<RuleDef> = parse_items(COMMON, limits)?
        .into_iter()
        .filter_map(|i| if let Item::Rule(r) = i { Some(r) } else { None })
        .collect();
    let mut g = GrammarAst { lark_tokens: true, ..GrammarAst::default() };
    let mut imported: Vec<String> = Vec::new();
    for item in items {
        match item {
            Item::Rule(r) => g.rules.push(r),
            Item::Ignore(e) => g.ignore.push(e),
            Item::Import { name, alias, pos } => {
                for (one, alias) in name.split(',').zip(alias.split(',')) {
                    // The definition and everything it uses, once each.
                    let mut stack = vec![(one.to_string(), alias.to_string())];
                    while let Some((n, a)) = stack.pop() {
                        if imported.contains(&a) {
                            continue;
                        }
                        let Some(def) = common.iter().find(|r| r.name == n) else {
                            return Err(grammar_error(pos, format!("`common.{n}` is not a terminal corral knows")));
                        };
                        let mut def = def.clone();
                        def.name = a.clone();
                        def.pos = pos;
                        let mut refs = Vec::new();
                        collect_names(&def.expr, &mut refs);
                        for r in refs {
                            stack.push((r.clone(), r));
                        }
                        if n != a {
                            rename(&mut def.expr, &n, &a);
                        }
                        imported.push(a.clone());
                        g.imported.push(a);
                        g.rules.push(def);
                    }
                }
            }
        }
    }
    // TERMINALS must be regular: they may not use rules.
    for r in g.rules.iter().filter(|r| r.is_terminal) {
        let mut refs = Vec::new();
        collect_names(&r.expr, &mut refs);
        if let Some(bad) = refs.iter().find(|n| !is_terminal_name(n)) {
            return Err(grammar_error(r.pos, format!("terminal `{}` uses the rule `{bad}`; terminals may only use terminals", r.name)));
        }
    }
    Ok(g)
}

fn collect_names(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Ref { name, .. } => out.push(name.clone()),
        Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|x| collect_names(x, out)),
        Expr::Repeat { expr, .. } | Expr::Except { expr, .. } | Expr::Not { expr, .. } => collect_names(expr, out),
        Expr::And { exprs, .. } => exprs.iter().for_each(|x| collect_names(x, out)),
        _ => {}
    }
}
