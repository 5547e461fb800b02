//! The Lark grammar syntax (the subset Outlines users write) → the grammar AST.
//!
//! Supported: rules `name: ...` (with `?`/`!` prefixes, `.N` priorities and `-> alias`,
//! which only shape Lark's parse trees and are ignored), TERMINALS (`NAME: ...`, regular),
//! strings with the `i` flag, `/regex/flags`, ranges `"a".."z"`, `[x]`, `x?`, `x*`, `x+`,
//! `x ~ n`, `x ~ n..m`, groups, `//` comments, `%import common.X [-> Y]`,
//! `%import common (X, Y)`, `%ignore`, `%override` and `%extend`. Templates and
//! `%declare` are rejected with their position.
//!
//! Checked as Lark checks them: a name defined twice (without `%override`), a recursive
//! TERMINAL, a name that is neither a rule (lowercase) nor a TERMINAL (uppercase), an
//! `%override`/`%extend` of an undefined name, an empty string, `%ignore` of a rule
//! (tokens that match the empty string are refused by the lowering, which knows their
//! languages). Strings decode escapes as Lark does
//! (`\n \t \r \f \xHH \uHHHH \UHHHHHHHH \\ \"`; any other backslash stays in the
//! string).
//!
//! The language is the grammar's exact language, with `%ignore`d text allowed between any
//! two tokens: every split of the text into the grammar's terminals counts (as with
//! Lark's Earley parser and `lexer="dynamic_complete"`), with no greedy lexing.

use crate::util::hash::{HashMap, HashMapExt};

use super::ast::{EmbeddedSchema, Expr, GrammarAst, Pos, RuleDef, Term};
use super::scanner::grammar_error;
use super::tokens;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::vocab::TokenRefs;

mod lexer;
#[cfg(test)]
mod tests;

use lexer::{describe, tokenize, Tok};

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

/// Lark's names: `_?[a-z][_a-z0-9]*` for rules, `_?[A-Z][_A-Z0-9]*` for TERMINALS.
fn name_kind(name: &str) -> Option<bool> {
    let body = name.strip_prefix('_').unwrap_or(name);
    let first = body.chars().next()?;
    if first.is_ascii_lowercase() && body.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        Some(false)
    } else if first.is_ascii_uppercase() && body.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
        Some(true)
    } else {
        None
    }
}

/// A name that Lark reads neither as a rule nor as a TERMINAL is an error.
fn check_name(name: &str, pos: Pos) -> Result<()> {
    match name_kind(name) {
        Some(_) => Ok(()),
        None => Err(grammar_error(
            pos,
            format!("`{name}` is neither a rule name (lowercase: `[a-z][_a-z0-9]*`) nor a TERMINAL name (uppercase: `[A-Z][_A-Z0-9]*`)"),
        )),
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
    /// The tokens named so far.
    refs: TokenRefs,
    /// The JSON Schemas written so far.
    schemas: Vec<EmbeddedSchema>,
}

/// How a definition relates to earlier ones of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `name: ...`: a new name (defining it again is an error, as in Lark).
    Define,
    /// `%override name: ...`: replaces the earlier definition.
    Override,
    /// `%extend name: ...`: adds alternatives to the earlier definition.
    Extend,
}

/// What a definition or directive produced.
enum Item {
    Rule(RuleDef, Mode),
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
                "override" | "extend" => {
                    let mode = if d == "override" { Mode::Override } else { Mode::Extend };
                    match self.definition()? {
                        Item::Rule(r, Mode::Define) => Ok(Item::Rule(r, mode)),
                        _ => Err(grammar_error(pos, format!("`%{d}` must be followed by a rule or TERMINAL definition"))),
                    }
                }
                "declare" => Err(grammar_error(
                    pos,
                    "`%declare` is not supported: declared terminals come from a custom lexer, and corral matches text",
                )),
                other => Err(grammar_error(
                    pos,
                    format!("unknown directive `%{other}` (corral reads %import, %ignore, %override and %extend)"),
                )),
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
        check_name(&name, pos)?;
        let expr = self.alt()?;
        let is_terminal = is_terminal_name(&name);
        Ok(Item::Rule(RuleDef { name, expr, pos, is_terminal }, Mode::Define))
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
                            let class =
                                format!("[{}-{}]", regex_syntax::escape(&lo.to_string()), regex_syntax::escape(&hi.to_string()));
                            Expr::Term { term: Term::Regex(class), pos }
                        }
                        _ => return Err(grammar_error(pos, "a range needs two single characters, low..high")),
                    }
                } else if s.is_empty() {
                    // Lark refuses it: a token must match something.
                    return Err(grammar_error(pos, "empty string: Lark does not allow an empty token"));
                } else if insensitive {
                    Expr::Term { term: Term::Regex(format!("(?i:{})", regex_syntax::escape(&s))), pos }
                } else {
                    Expr::Term { term: Term::Literal(s), pos }
                }
            }
            Tok::Regex(r) => Expr::Term { term: Term::Regex(r), pos },
            Tok::Token(r) => {
                let repeated = matches!(self.peek(), Tok::Star | Tok::Plus);
                tokens::expr(&r, pos, repeated, &mut self.refs)?
            }
            Tok::Json(text) => EmbeddedSchema::reference(&mut self.schemas, text, pos),
            Tok::Name(name) => {
                check_name(&name, pos)?;
                Expr::Ref { name, pos }
            }
            other => return Err(grammar_error(pos, format!("expected an expression, found {}", describe(&other)))),
        })
    }
}

/// The definitions of a Lark text, the tokens they name and the JSON Schemas they hold.
fn parse_items(text: &str, limits: &Limits) -> Result<(Vec<Item>, TokenRefs, Vec<EmbeddedSchema>)> {
    let toks = tokenize(text)?;
    let mut p =
        Parser { toks, i: 0, depth: 0, max_depth: limits.max_grammar_nesting, refs: TokenRefs::default(), schemas: Vec::new() };
    let mut items = Vec::new();
    while *p.peek() != Tok::Eof {
        if !p.at_definition() {
            let pos = p.pos();
            let t = p.peek().clone();
            return Err(grammar_error(
                pos,
                format!("expected a rule (`name: ...`), a TERMINAL or a %directive, found {}", describe(&t)),
            ));
        }
        items.push(p.definition()?);
    }
    Ok((items, p.refs, p.schemas))
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
    let (items, refs, schemas) = parse_items(text, limits)?;
    let common = common_definitions(limits)?;
    let mut a = Assembly {
        g: GrammarAst { lark_tokens: true, tokens: refs, schemas, ..GrammarAst::default() },
        defined: HashMap::new(),
        final_alias: final_aliases(&items),
        common,
    };
    for item in items {
        match item {
            Item::Rule(r, Mode::Define) => a.define(r)?,
            Item::Rule(r, mode) => a.redefine(r, mode)?,
            Item::Ignore(e) => a.g.ignore.push(e),
            Item::Import { name, alias, pos } => a.import(&name, &alias, pos)?,
        }
    }
    check_terminals_use_terminals(&a.g)?;
    check_ignore_uses_terminals(&a.g)?;
    check_terminal_cycles(&a.g)?;
    Ok(a.g)
}

/// The definitions of Lark's `common` library, as corral writes them ([`COMMON`]).
fn common_definitions(limits: &Limits) -> Result<Vec<RuleDef>> {
    Ok(parse_items(COMMON, limits)?.0.into_iter().filter_map(|i| if let Item::Rule(r, _) = i { Some(r) } else { None }).collect())
}

/// The name each imported library name ends up under. Lark gathers a library's imports
/// into one table, name -> alias, the last import of a name winning: `%import common
/// (CNAME)` then `%import common.CNAME -> NAME` defines only NAME.
fn final_aliases(items: &[Item]) -> HashMap<String, String> {
    let mut final_alias = HashMap::new();
    for item in items {
        if let Item::Import { name, alias, .. } = item {
            for (one, alias) in name.split(',').zip(alias.split(',')) {
                final_alias.insert(one.to_string(), alias.to_string());
            }
        }
    }
    final_alias
}

/// "terminal" or "rule", for messages about `name`.
fn kind_word(name: &str) -> &'static str {
    if is_terminal_name(name) {
        "terminal"
    } else {
        "rule"
    }
}

/// The grammar being assembled from the parsed items, in source order.
struct Assembly {
    g: GrammarAst,
    /// Where each name was first defined (or imported), for duplicate errors.
    defined: HashMap<String, Pos>,
    /// See [`final_aliases`].
    final_alias: HashMap<String, String>,
    /// The definitions of the `common` library.
    common: Vec<RuleDef>,
}

impl Assembly {
    /// `name: ...`: a name defined twice is an error, as in Lark.
    fn define(&mut self, r: RuleDef) -> Result<()> {
        if let Some(first) = self.defined.get(&r.name) {
            return Err(grammar_error(
                r.pos,
                format!(
                    "{} `{}` is defined more than once (first at {first}); use %override to replace it or %extend to add alternatives",
                    kind_word(&r.name),
                    r.name
                ),
            ));
        }
        self.defined.insert(r.name.clone(), r.pos);
        self.g.rules.push(r);
        Ok(())
    }

    /// `%override` or `%extend` of a name defined before.
    fn redefine(&mut self, r: RuleDef, mode: Mode) -> Result<()> {
        if !self.defined.contains_key(&r.name) {
            let verb = if mode == Mode::Override { "override" } else { "extend" };
            return Err(grammar_error(
                r.pos,
                format!("cannot {verb} {} `{}`: it is not defined before", kind_word(&r.name), r.name),
            ));
        }
        if mode == Mode::Override {
            self.g.rules.retain(|d| d.name != r.name);
        }
        self.g.rules.push(r);
        Ok(())
    }

    /// `%import common...` of the comma-separated `name`s under the `alias`es, at `pos`.
    fn import(&mut self, name: &str, alias: &str, pos: Pos) -> Result<()> {
        for (one, alias) in name.split(',').zip(alias.split(',')) {
            if self.g.imported.iter().any(|a| a == alias) || self.final_alias.get(one).is_some_and(|a| a != alias) {
                continue; // the same import again, or one a later import renames
            }
            if let Some(first) = self.defined.get(alias) {
                return Err(grammar_error(pos, format!("cannot import `{alias}`: it is already defined (at {first})")));
            }
            let Some(def) = self.common.iter().find(|r| r.name == one) else {
                return Err(grammar_error(pos, format!("`common.{one}` is not a terminal corral knows")));
            };
            let def = def.clone();
            self.import_definition(def, alias, pos);
        }
        Ok(())
    }

    /// Adds the library definition `def` under `alias`, with the definitions it uses.
    fn import_definition(&mut self, def: RuleDef, alias: &str, pos: Pos) {
        // What the definition uses is imported under the library's namespace
        // (`COMMON__DIGIT`), as Lark does, so it never meets the grammar's own names.
        let mut stack = vec![(def, alias.to_string())];
        while let Some((mut def, a)) = stack.pop() {
            let mut refs = Vec::new();
            collect_names(&def.expr, &mut refs);
            for r in refs {
                let inner = match r.strip_prefix('_') {
                    Some(rest) => format!("_COMMON__{rest}"),
                    None => format!("COMMON__{r}"),
                };
                def.expr.visit_refs_mut(&mut |name| {
                    if *name == r {
                        *name = inner.clone()
                    }
                });
                if !self.g.imported.contains(&inner) && !stack.iter().any(|(_, x)| *x == inner) {
                    if let Some(d) = self.common.iter().find(|d| d.name == r) {
                        stack.push((d.clone(), inner));
                    }
                }
            }
            def.name = a.clone();
            def.pos = pos;
            self.defined.insert(a.clone(), pos);
            self.g.imported.push(a);
            self.g.rules.push(def);
        }
    }
}

/// TERMINALS must be regular: they may not use rules (nor themselves, see
/// [`check_terminal_cycles`]).
fn check_terminals_use_terminals(g: &GrammarAst) -> Result<()> {
    for r in g.rules.iter().filter(|r| r.is_terminal) {
        let mut refs = Vec::new();
        collect_names(&r.expr, &mut refs);
        if let Some(bad) = refs.iter().find(|n| !is_terminal_name(n)) {
            return Err(grammar_error(
                r.pos,
                format!("terminal `{}` uses the rule `{bad}`; terminals may only use terminals", r.name),
            ));
        }
    }
    Ok(())
}

/// `%ignore` may only use terminals, strings and regexes.
fn check_ignore_uses_terminals(g: &GrammarAst) -> Result<()> {
    for e in &g.ignore {
        let mut refs = Vec::new();
        collect_names(e, &mut refs);
        if let Some(bad) = refs.iter().find(|n| !is_terminal_name(n)) {
            let pos = e.pos().unwrap_or_default();
            return Err(grammar_error(
                pos,
                format!("%ignore uses the rule `{bad}`; it may only use terminals, strings and regexes"),
            ));
        }
    }
    Ok(())
}

/// A TERMINAL that uses itself, directly or through others, is not regular: Lark refuses
/// it, and so does corral, naming the cycle at the definition where it was entered.
fn check_terminal_cycles(g: &GrammarAst) -> Result<()> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut defs: Vec<(&str, Pos, Vec<String>)> = Vec::new();
    for r in g.rules.iter().filter(|r| r.is_terminal) {
        let k = *index.entry(r.name.as_str()).or_insert_with(|| {
            defs.push((r.name.as_str(), r.pos, Vec::new()));
            defs.len() - 1
        });
        collect_names(&r.expr, &mut defs[k].2);
    }
    let succ: Vec<Vec<usize>> =
        defs.iter().map(|(_, _, refs)| refs.iter().filter_map(|n| index.get(n.as_str()).copied()).collect()).collect();
    // Iterative depth-first search (0 = new, 1 = on the path, 2 = done), in source order.
    let mut state = vec![0u8; defs.len()];
    for root in 0..defs.len() {
        if state[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&to) = succ[node].get(*next) {
                *next += 1;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        path.push((to, 0));
                    }
                    1 => {
                        let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        let mut names: Vec<&str> = path[from..].iter().map(|&(n, _)| defs[n].0).collect();
                        names.push(defs[to].0);
                        let (name, pos, _) = &defs[to];
                        return Err(grammar_error(
                            *pos,
                            format!(
                                "terminal `{name}` is recursive ({}); terminals must be regular: use a rule (a lowercase name) for recursion",
                                names.join(" -> ")
                            ),
                        ));
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                path.pop();
            }
        }
    }
    Ok(())
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
