//! Validation and normalization: grammar AST → [`Cfg`], a BNF over byte-DFA terminals with
//! no nullable rules (except the start) and no unit rules.
//!
//! Steps: resolve names (undefined rules are errors with line:column) → find the regular
//! rules (not on a reference cycle) and compile each regular piece to one terminal DFA →
//! lower the rest to BNF (groups and repetitions become helper rules, repetitions left
//! recursive) → merge runs of adjacent terminals → split terminals that match the empty
//! string → reject rules that can never produce a finite string → remove nullable rules,
//! then unit rules → drop what is unreachable.

use std::collections::{HashMap, HashSet};

use super::ast::{Expr, GrammarAst, Pos, Term};
use super::parse::grammar_error;
use crate::dfa::Dfa;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::regex::{self, PerlClasses};

/// A grammar symbol: a terminal (high bit set) or a nonterminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(u32);

const TERMINAL_BIT: u32 = 1 << 31;

impl Sym {
    /// Terminal `i`.
    pub fn t(i: u32) -> Sym {
        Sym(i | TERMINAL_BIT)
    }
    /// Nonterminal `i`.
    pub fn n(i: u32) -> Sym {
        Sym(i)
    }
    /// Is it a terminal?
    #[inline]
    pub fn is_terminal(self) -> bool {
        self.0 & TERMINAL_BIT != 0
    }
    /// The raw encoding (terminals have the high bit set).
    #[inline]
    pub fn raw(self) -> u32 {
        self.0
    }
    /// The terminal or nonterminal index.
    #[inline]
    pub fn index(self) -> u32 {
        self.0 & !TERMINAL_BIT
    }
}

/// A production `lhs → rhs`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Production {
    /// The nonterminal it defines.
    pub lhs: u32,
    /// Its symbols (never empty, except `start → ε`).
    pub rhs: Vec<Sym>,
}

/// A terminal: a byte DFA that never accepts the empty string.
#[derive(Debug, Clone)]
pub struct Terminal {
    /// A readable name (the rule or literal it came from).
    pub name: String,
    /// Its automaton.
    pub dfa: Dfa,
}

/// A normalized context-free grammar over DFA terminals.
#[derive(Debug, Clone)]
pub struct Cfg {
    /// Names of the nonterminals (helper rules are named after their rule, e.g. `list#2`).
    pub nonterminals: Vec<String>,
    /// All productions.
    pub productions: Vec<Production>,
    /// Production ids of each nonterminal.
    pub productions_of: Vec<Vec<u32>>,
    /// The terminals.
    pub terminals: Vec<Terminal>,
    /// The start nonterminal (it appears in no right-hand side).
    pub start: u32,
    /// Does the grammar accept the empty string?
    pub accepts_empty: bool,
    /// Non-fatal findings (unused rules), for the user.
    pub warnings: Vec<String>,
    /// When the whole grammar is regular (its start rule references no recursive rule),
    /// its DFA: such a grammar is matched exactly like a regex.
    pub regular: Option<Dfa>,
}

/// Expression lowered to alternatives of symbol sequences, before normalization.
type Alts = Vec<Vec<Sym>>;

struct Lowering<'a> {
    ast: &'a GrammarAst,
    limits: &'a Limits,
    classes: Option<&'a PerlClasses>,
    /// Rule name → (its definitions' expressions, position of the first definition).
    defs: HashMap<&'a str, (Vec<&'a Expr>, Pos)>,
    /// Rules that are regular (can be one DFA): their Python-regex source.
    regular: HashMap<&'a str, String>,
    nt_names: Vec<String>,
    nt_origin: Vec<(String, Pos)>,
    nt_of_rule: HashMap<&'a str, u32>,
    bnf: Vec<Alts>,
    terminals: Vec<Terminal>,
    terminal_of_regex: HashMap<String, u32>,
    /// Terminals of the raw regex source (for merging runs), None for `except!`.
    terminal_regex: Vec<Option<String>>,
    worklist: Vec<&'a str>,
}

/// Wraps a regex source so it can be concatenated or repeated.
fn group(src: &str) -> String {
    format!("(?:{src})")
}

impl<'a> Lowering<'a> {
    fn new(ast: &'a GrammarAst, limits: &'a Limits, classes: Option<&'a PerlClasses>) -> Self {
        Lowering {
            ast,
            limits,
            classes,
            defs: HashMap::new(),
            regular: HashMap::new(),
            nt_names: Vec::new(),
            nt_origin: Vec::new(),
            nt_of_rule: HashMap::new(),
            bnf: Vec::new(),
            terminals: Vec::new(),
            terminal_of_regex: HashMap::new(),
            terminal_regex: Vec::new(),
            worklist: Vec::new(),
        }
    }

    fn collect(&mut self) -> Result<()> {
        for r in &self.ast.rules {
            let entry = self.defs.entry(r.name.as_str()).or_insert((Vec::new(), r.pos));
            entry.0.push(&r.expr);
        }
        // Undefined references, first in source order.
        let mut refs = Vec::new();
        for r in &self.ast.rules {
            collect_refs(&r.expr, &mut refs);
        }
        for e in &self.ast.ignore {
            collect_refs(e, &mut refs);
        }
        for (name, pos) in refs {
            if !self.defs.contains_key(name) {
                return Err(grammar_error(pos, format!("undefined rule `{name}`")));
            }
        }
        // Each regex piece on its own, so an error points at the piece.
        let mut terms = Vec::new();
        for r in &self.ast.rules {
            collect_regex_terms(&r.expr, &mut terms);
        }
        for (src, pos) in terms {
            match regex::compile_with(src, self.limits, self.classes) {
                Ok(_) => {}
                Err(Error::EmptyLanguage { .. }) => {
                    return Err(grammar_error(pos, format!("`{src}` matches no string at all")));
                }
                Err(e @ Error::LimitExceeded { .. }) => return Err(e),
                Err(e) => return Err(grammar_error(pos, format!("in `{src}`: {e}"))),
            }
        }
        Ok(())
    }

    /// Marks regular rules: those on no reference cycle whose references are all regular
    /// and that contain no `except!` (which needs its own automaton).
    fn find_regular(&mut self) -> Result<()> {
        let names: Vec<&'a str> = {
            let mut v: Vec<&'a str> = self.defs.keys().copied().collect();
            v.sort_unstable();
            v
        };
        // 0 = unvisited, 1 = in progress, 2 = done
        let mut state: HashMap<&'a str, u8> = HashMap::new();
        let mut is_regular: HashMap<&'a str, bool> = HashMap::new();
        for &n in &names {
            self.visit_regular(n, &mut state, &mut is_regular);
        }
        for &n in &names {
            if is_regular.get(n).copied().unwrap_or(false) {
                let src = self.rule_regex(n)?;
                self.regular.insert(n, src);
            }
        }
        Ok(())
    }

    fn visit_regular(&self, name: &'a str, state: &mut HashMap<&'a str, u8>, is_regular: &mut HashMap<&'a str, bool>) -> bool {
        match state.get(name) {
            Some(1) => return false, // a cycle: not regular
            Some(2) => return is_regular[name],
            _ => {}
        }
        state.insert(name, 1);
        let mut refs = Vec::new();
        let mut has_except = false;
        for e in &self.defs[name].0 {
            collect_refs(e, &mut refs);
            has_except |= contains_except(e);
        }
        // In Lark grammars only TERMINALS are tokens (rules keep %ignore between theirs).
        let mut ok = !has_except && (!self.ast.lark_tokens || self.ast.rules.iter().any(|r| r.name == name && r.is_terminal));
        for (r, _) in refs {
            // Visit every reference so cycles are found even after `ok` is false.
            let sub = self.visit_regular(r, state, is_regular);
            ok &= sub;
        }
        // A rule that reached itself was marked in progress: the recursion returned false.
        state.insert(name, 2);
        is_regular.insert(name, ok);
        ok
    }

    /// The regex source of a regular rule (its definitions are alternatives).
    fn rule_regex(&self, name: &str) -> Result<String> {
        let defs = &self.defs[name].0;
        let parts: Result<Vec<String>> = defs.iter().map(|e| self.expr_regex(e)).collect();
        let parts = parts?;
        let src = if parts.len() == 1 { parts.into_iter().next().unwrap_or_default() } else { group(&parts.join("|")) };
        if src.len() > self.limits.max_pattern_bytes {
            return Err(Error::LimitExceeded {
                limit: "max_pattern_bytes",
                value: self.limits.max_pattern_bytes,
                context: format!("the regular expression of rule `{name}`"),
            });
        }
        Ok(src)
    }

    /// The regex source of a regular expression (its references are regular rules).
    fn expr_regex(&self, e: &Expr) -> Result<String> {
        Ok(match e {
            Expr::Empty => "(?:)".to_string(),
            Expr::Term { term, .. } => term.regex_source(),
            Expr::Ref { name, .. } => match self.regular.get(name.as_str()) {
                Some(src) => group(src),
                None => group(&self.rule_regex(name)?),
            },
            Expr::Seq(items) => {
                let parts: Result<Vec<String>> = items.iter().map(|x| self.expr_regex(x)).collect();
                group(&parts?.join(""))
            }
            Expr::Alt(items) => {
                let parts: Result<Vec<String>> = items.iter().map(|x| self.expr_regex(x)).collect();
                group(&parts?.join("|"))
            }
            Expr::Repeat { expr, min, max, .. } => {
                let inner = group(&self.expr_regex(expr)?);
                match (min, max) {
                    (0, Some(1)) => format!("{inner}?"),
                    (0, None) => format!("{inner}*"),
                    (1, None) => format!("{inner}+"),
                    (m, None) => format!("{inner}{{{m},}}"),
                    (m, Some(n)) if m == n => format!("{inner}{{{m}}}"),
                    (m, Some(n)) => format!("{inner}{{{m},{n}}}"),
                }
            }
            Expr::Except { pos, .. } => {
                return Err(grammar_error(*pos, "except! cannot be nested inside another except!"));
            }
        })
    }

    fn is_regular_expr(&self, e: &Expr) -> bool {
        match e {
            Expr::Empty | Expr::Term { .. } => true,
            Expr::Ref { name, .. } => self.regular.contains_key(name.as_str()),
            Expr::Seq(v) | Expr::Alt(v) => v.iter().all(|x| self.is_regular_expr(x)),
            Expr::Repeat { expr, .. } => self.is_regular_expr(expr),
            Expr::Except { .. } => false,
        }
    }

    fn terminal(&mut self, src: String, name: &str, pos: Option<Pos>) -> Result<u32> {
        if let Some(&t) = self.terminal_of_regex.get(&src) {
            return Ok(t);
        }
        let dfa = match regex::compile_with(&src, self.limits, self.classes) {
            Ok(d) => d,
            Err(Error::EmptyLanguage { .. }) => {
                let pos = pos.unwrap_or_default();
                return Err(grammar_error(pos, format!("`{name}` matches no string at all")));
            }
            Err(e @ Error::LimitExceeded { .. }) => return Err(e),
            Err(e) => {
                let pos = pos.unwrap_or_default();
                return Err(grammar_error(pos, format!("in `{name}`: {e}")));
            }
        };
        let id = self.terminals.len() as u32;
        self.terminals.push(Terminal { name: name.to_string(), dfa });
        self.terminal_regex.push(Some(src.clone()));
        self.terminal_of_regex.insert(src, id);
        Ok(id)
    }

    fn new_nt(&mut self, name: String, origin: (String, Pos)) -> u32 {
        let id = self.nt_names.len() as u32;
        self.nt_names.push(name);
        self.nt_origin.push(origin);
        self.bnf.push(Vec::new());
        id
    }

    /// The nonterminal of a non-regular rule (queued for lowering on first use).
    fn rule_nt(&mut self, name: &'a str) -> u32 {
        if let Some(&n) = self.nt_of_rule.get(name) {
            return n;
        }
        let pos = self.defs[name].1;
        let n = self.new_nt(name.to_string(), (name.to_string(), pos));
        self.nt_of_rule.insert(name, n);
        self.worklist.push(name);
        n
    }

    /// One symbol standing for `e` inside rule `owner`.
    fn symbol(&mut self, e: &'a Expr, owner: &(String, Pos)) -> Result<Option<Sym>> {
        if self.is_regular_expr(e) {
            if matches!(e, Expr::Empty) {
                return Ok(None);
            }
            let src = self.expr_regex(e)?;
            let name = match e {
                Expr::Ref { name, .. } => name.clone(),
                Expr::Term { term: Term::Literal(s), .. } => format!("{s:?}"),
                _ => owner.0.clone(),
            };
            return Ok(Some(Sym::t(self.terminal(src, &name, e.pos().or(Some(owner.1)))?)));
        }
        match e {
            Expr::Ref { name, .. } => {
                let n = self.rule_nt(self.defs.get_key_value(name.as_str()).map(|(k, _)| *k).unwrap_or(""));
                Ok(Some(Sym::n(n)))
            }
            Expr::Except { expr, pos } => {
                if !self.is_regular_expr(expr) {
                    return Err(grammar_error(*pos, "except! needs a regular argument (strings, classes, regexes and non-recursive rules)"));
                }
                let inner = self.expr_regex(expr)?;
                let key = format!("except!{inner}");
                if let Some(&t) = self.terminal_of_regex.get(&key) {
                    return Ok(Some(Sym::t(t)));
                }
                let dfa = match regex::build_except_dfa(&inner, self.limits, self.classes, "except!(...)") {
                    Ok(d) => d,
                    Err(Error::EmptyLanguage { .. }) => {
                        return Err(grammar_error(*pos, "except!(...) matches no string (its argument matches the empty string)"))
                    }
                    Err(e @ Error::LimitExceeded { .. }) => return Err(e),
                    Err(e) => return Err(grammar_error(*pos, format!("in except!: {e}"))),
                };
                let id = self.terminals.len() as u32;
                self.terminals.push(Terminal { name: format!("except!({})", owner.0), dfa });
                self.terminal_regex.push(None);
                self.terminal_of_regex.insert(key, id);
                Ok(Some(Sym::t(id)))
            }
            Expr::Seq(_) | Expr::Alt(_) | Expr::Repeat { .. } => {
                let k = self.nt_names.len();
                let n = self.new_nt(format!("{}#{k}", owner.0), owner.clone());
                let alts = self.alts(e, owner)?;
                self.bnf[n as usize] = alts;
                Ok(Some(Sym::n(n)))
            }
            Expr::Empty | Expr::Term { .. } => Ok(None), // handled as regular above
        }
    }

    /// Alternatives of symbol sequences for `e`.
    fn alts(&mut self, e: &'a Expr, owner: &(String, Pos)) -> Result<Alts> {
        match e {
            Expr::Alt(items) => {
                let mut out = Vec::new();
                for it in items {
                    out.extend(self.alts(it, owner)?);
                }
                Ok(out)
            }
            Expr::Seq(items) => {
                let mut seq = Vec::new();
                for it in items {
                    match it {
                        // A nested sequence is spliced in.
                        Expr::Seq(_) if !self.is_regular_expr(it) => {
                            let mut inner = self.alts(it, owner)?;
                            if inner.len() == 1 {
                                seq.append(&mut inner[0]);
                            } else if let Some(s) = self.symbol(it, owner)? {
                                seq.push(s);
                            }
                        }
                        _ => {
                            if let Some(s) = self.symbol(it, owner)? {
                                seq.push(s);
                            }
                        }
                    }
                }
                Ok(vec![seq])
            }
            Expr::Repeat { expr, min, max, pos } if !self.is_regular_expr(e) => {
                let x = match self.symbol(expr, owner)? {
                    Some(s) => s,
                    None => return Ok(vec![vec![]]),
                };
                let min = *min as usize;
                let cap = self.limits.max_grammar_productions;
                if min > cap || max.is_some_and(|m| m as usize > cap) {
                    return Err(Error::LimitExceeded {
                        limit: "max_grammar_productions",
                        value: cap,
                        context: format!("the repetition at {pos}"),
                    });
                }
                match max {
                    None => {
                        // R → X^min | R X  (or ε | R X when min = 0): left recursive.
                        let k = self.nt_names.len();
                        let r = self.new_nt(format!("{}#{k}", owner.0), owner.clone());
                        self.bnf[r as usize] = vec![vec![x; min], vec![Sym::n(r), x]];
                        Ok(vec![vec![Sym::n(r)]])
                    }
                    Some(max) => {
                        // X^min then a chain of (max - min) optional X's.
                        let mut tail: Option<Sym> = None;
                        for _ in min..(*max as usize) {
                            let k = self.nt_names.len();
                            let o = self.new_nt(format!("{}#{k}", owner.0), owner.clone());
                            let mut more = vec![x];
                            if let Some(t) = tail {
                                more.push(t);
                            }
                            self.bnf[o as usize] = vec![vec![], more];
                            tail = Some(Sym::n(o));
                        }
                        let mut seq = vec![x; min];
                        if let Some(t) = tail {
                            seq.push(t);
                        }
                        Ok(vec![seq])
                    }
                }
            }
            _ => Ok(vec![self.symbol(e, owner)?.into_iter().collect()]),
        }
    }
}

fn collect_refs<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Ref { name, pos } => out.push((name.as_str(), *pos)),
        Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|x| collect_refs(x, out)),
        Expr::Repeat { expr, .. } | Expr::Except { expr, .. } => collect_refs(expr, out),
        Expr::Empty | Expr::Term { .. } => {}
    }
}

fn collect_regex_terms<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Term { term: Term::Regex(src), pos } => out.push((src.as_str(), *pos)),
        Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|x| collect_regex_terms(x, out)),
        Expr::Repeat { expr, .. } | Expr::Except { expr, .. } => collect_regex_terms(expr, out),
        Expr::Empty | Expr::Term { .. } | Expr::Ref { .. } => {}
    }
}

fn contains_except(e: &Expr) -> bool {
    match e {
        Expr::Except { .. } => true,
        Expr::Seq(v) | Expr::Alt(v) => v.iter().any(contains_except),
        Expr::Repeat { expr, .. } => contains_except(expr),
        Expr::Empty | Expr::Term { .. } | Expr::Ref { .. } => false,
    }
}

fn too_many(limits: &Limits, what: &str) -> Error {
    Error::LimitExceeded {
        limit: "max_grammar_productions",
        value: limits.max_grammar_productions,
        context: format!("normalizing the grammar ({what})"),
    }
}

/// Lowers a parsed grammar to a normalized [`Cfg`] whose start rule is `start` (default:
/// `start`, else `root`, else the first rule).
pub fn lower(ast: &GrammarAst, start: Option<&str>, limits: &Limits, classes: Option<&PerlClasses>) -> Result<Cfg> {
    if ast.rules.is_empty() {
        return Err(grammar_error(Pos { line: 1, col: 1 }, "the grammar defines no rule"));
    }
    let mut lw = Lowering::new(ast, limits, classes);
    lw.collect()?;
    let start_name: &str = match start {
        Some(s) => {
            if !lw.defs.contains_key(s) {
                return Err(Error::Grammar { message: format!("the start rule `{s}` is not defined"), line: 0, col: 0 });
            }
            lw.defs.get_key_value(s).map(|(k, _)| *k).unwrap_or(s)
        }
        None => ["start", "root"]
            .iter()
            .find_map(|n| lw.defs.get_key_value(*n).map(|(k, _)| *k))
            .unwrap_or(ast.rules[0].name.as_str()),
    };
    lw.find_regular()?;
    let regular = match (ast.ignore.is_empty(), lw.regular.get(start_name)) {
        (true, Some(src)) => Some(regex::compile_with(src, limits, classes).map_err(|e| match e {
            Error::EmptyLanguage { .. } => Error::Grammar {
                message: format!("the grammar matches no string at all (start rule `{start_name}`)"),
                line: 0,
                col: 0,
            },
            other => other,
        })?),
        _ => None,
    };
    // Ignored expressions (Lark's %ignore): one optional-repeated terminal.
    let ignore: Option<Sym> = if ast.ignore.is_empty() {
        None
    } else {
        let parts: Result<Vec<String>> = ast.ignore.iter().map(|e| {
            if lw.is_regular_expr(e) { lw.expr_regex(e) } else { Err(grammar_error(e.pos().unwrap_or_default(), "%ignore needs a regular expression or terminal")) }
        }).collect();
        let src = format!("(?:{})+", parts?.join("|"));
        Some(Sym::t(lw.terminal(src, "%ignore", ast.ignore[0].pos())?))
    };
    // The augmented start S' → S.
    let origin = (start_name.to_string(), lw.defs[start_name].1);
    let s_prime = lw.new_nt(format!("{start_name}'"), origin.clone());
    let root_expr = Expr::Ref { name: start_name.to_string(), pos: lw.defs[start_name].1 };
    let root_alts = lw.alts(&root_expr, &origin)?;
    lw.bnf[s_prime as usize] = root_alts;
    while let Some(name) = lw.worklist.pop() {
        let n = lw.nt_of_rule[name];
        let owner = (name.to_string(), lw.defs[name].1);
        let defs = lw.defs[name].0.clone();
        let mut alts = Vec::new();
        for e in defs {
            alts.extend(lw.alts(e, &owner)?);
        }
        lw.bnf[n as usize] = alts;
    }
    // Lark's %ignore: ignored text may follow every terminal (merged into the terminal's
    // DFA, which keeps the grammar small) and may precede the first one.
    if let Some(ig) = ignore {
        let ig_src = lw.terminal_regex[ig.index() as usize].clone().unwrap_or_default();
        let mut with_ignore: HashMap<u32, Sym> = HashMap::new();
        let used: Vec<Sym> = {
            let mut v: Vec<Sym> = lw.bnf.iter().flatten().flatten().copied().filter(|s| s.is_terminal() && *s != ig).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for t in used {
            let name = lw.terminals[t.index() as usize].name.clone();
            let merged = match lw.terminal_regex[t.index() as usize].clone() {
                Some(src) => Sym::t(lw.terminal(format!("{}{}*", group(&src), group(&ig_src)), &name, None)?),
                None => t,
            };
            with_ignore.insert(t.index(), merged);
        }
        for alts in lw.bnf.iter_mut() {
            for seq in alts.iter_mut() {
                for s in seq.iter_mut() {
                    if let Some(m) = with_ignore.get(&s.index()).filter(|_| s.is_terminal()) {
                        *s = *m;
                    }
                }
            }
        }
        let k = lw.nt_names.len();
        let opt = lw.new_nt(format!("%ignore#{k}"), origin.clone());
        lw.bnf[opt as usize] = vec![vec![], vec![ig]];
        let first = lw.bnf[s_prime as usize].clone();
        lw.bnf[s_prime as usize] = first.into_iter().map(|mut seq| { seq.insert(0, Sym::n(opt)); seq }).collect();
    }
    let warnings = unused_rules(ast, &lw, start_name);
    merge_terminal_runs(&mut lw)?;
    split_nullable_terminals(&mut lw)?;
    check_productive(&lw, s_prime)?;
    let mut bnf = std::mem::take(&mut lw.bnf);
    let nullable = remove_nullable(&mut bnf, limits)?;
    let accepts_empty = nullable[s_prime as usize];
    remove_units(&mut bnf, limits)?;
    let mut cfg = build_cfg(lw.nt_names, bnf, lw.terminals, s_prime, accepts_empty, warnings);
    cfg.regular = regular;
    Ok(cfg)
}

fn unused_rules(ast: &GrammarAst, lw: &Lowering<'_>, start: &str) -> Vec<String> {
    // Reachability over rule references, from the start rule and %ignore.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack = vec![start];
    let mut refs = Vec::new();
    for e in &ast.ignore {
        collect_refs(e, &mut refs);
    }
    stack.extend(refs.iter().map(|(n, _)| *n));
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let mut refs = Vec::new();
        for e in &lw.defs[n].0 {
            collect_refs(e, &mut refs);
        }
        stack.extend(refs.into_iter().map(|(r, _)| r));
    }
    let mut out = Vec::new();
    let mut reported = HashSet::new();
    for r in &ast.rules {
        if !seen.contains(r.name.as_str()) && !ast.imported.contains(&r.name) && reported.insert(r.name.as_str()) {
            out.push(format!("rule `{}` at line {}, column {} is never used", r.name, r.pos.line, r.pos.col));
        }
    }
    out
}

/// Replaces each run of two or more adjacent regex terminals by one terminal (same
/// language, fewer parser steps).
fn merge_terminal_runs(lw: &mut Lowering<'_>) -> Result<()> {
    for n in 0..lw.bnf.len() {
        for a in 0..lw.bnf[n].len() {
            let seq = lw.bnf[n][a].clone();
            let mut out = Vec::with_capacity(seq.len());
            let mut i = 0;
            while i < seq.len() {
                let mergeable = |s: Sym| s.is_terminal() && lw.terminal_regex[s.index() as usize].is_some();
                if mergeable(seq[i]) {
                    let mut j = i;
                    while j < seq.len() && mergeable(seq[j]) {
                        j += 1;
                    }
                    if j - i >= 2 {
                        let parts: Vec<String> =
                            seq[i..j].iter().map(|s| group(lw.terminal_regex[s.index() as usize].as_deref().unwrap_or(""))).collect();
                        let names: Vec<String> = seq[i..j].iter().map(|s| lw.terminals[s.index() as usize].name.clone()).collect();
                        let t = lw.terminal(parts.join(""), &names.join(" "), None)?;
                        out.push(Sym::t(t));
                        i = j;
                        continue;
                    }
                }
                out.push(seq[i]);
                i += 1;
            }
            lw.bnf[n][a] = out;
        }
    }
    Ok(())
}

/// A terminal that matches "" becomes a nullable helper rule `ε | T⁺`.
fn split_nullable_terminals(lw: &mut Lowering<'_>) -> Result<()> {
    let mut replacement: HashMap<u32, Option<Sym>> = HashMap::new();
    let used: HashSet<u32> =
        lw.bnf.iter().flatten().flatten().filter(|s| s.is_terminal()).map(|s| s.index()).collect();
    let mut used: Vec<u32> = used.into_iter().collect();
    used.sort_unstable();
    for t in used {
        if !lw.terminals[t as usize].dfa.accepts_empty() {
            continue;
        }
        let name = lw.terminals[t as usize].name.clone();
        let sym = match lw.terminals[t as usize].dfa.without_empty(lw.limits, &name) {
            Ok(dfa) => {
                let plus = lw.terminals.len() as u32;
                lw.terminals.push(Terminal { name: name.clone(), dfa });
                lw.terminal_regex.push(None);
                let origin = (name.clone(), Pos::default());
                let k = lw.nt_names.len();
                let n = lw.new_nt(format!("{name}?#{k}"), origin);
                lw.bnf[n as usize] = vec![vec![], vec![Sym::t(plus)]];
                Some(Sym::n(n))
            }
            Err(Error::EmptyLanguage { .. }) => None, // matches only "": drop it
            Err(e) => return Err(e),
        };
        replacement.insert(t, sym);
    }
    if replacement.is_empty() {
        return Ok(());
    }
    for alts in lw.bnf.iter_mut() {
        for seq in alts.iter_mut() {
            let mut out = Vec::with_capacity(seq.len());
            for &s in seq.iter() {
                match (s.is_terminal(), replacement.get(&s.index())) {
                    (true, Some(Some(r))) => out.push(*r),
                    (true, Some(None)) => {}
                    _ => out.push(s),
                }
            }
            *seq = out;
        }
    }
    Ok(())
}

/// Every rule reachable from the start must be able to produce a finite string.
fn check_productive(lw: &Lowering<'_>, start: u32) -> Result<()> {
    let n = lw.bnf.len();
    let mut productive = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            if productive[i] {
                continue;
            }
            if lw.bnf[i].iter().any(|seq| seq.iter().all(|s| s.is_terminal() || productive[s.index() as usize])) {
                productive[i] = true;
                changed = true;
            }
        }
    }
    // Reachable non-productive rules, by user-visible rule (helper rules map to theirs).
    let mut seen = vec![false; n];
    let mut stack = vec![start];
    let mut bad: Vec<u32> = Vec::new();
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut seen[x as usize], true) {
            continue;
        }
        if !productive[x as usize] {
            bad.push(x);
        }
        for seq in &lw.bnf[x as usize] {
            for s in seq {
                if !s.is_terminal() {
                    stack.push(s.index());
                }
            }
        }
    }
    if bad.is_empty() {
        return Ok(());
    }
    // The root cause: a rule whose non-productive references are only to itself.
    let mut refs_of: HashMap<&str, HashSet<&str>> = HashMap::new();
    for &x in &bad {
        let me = lw.nt_origin[x as usize].0.as_str();
        let entry = refs_of.entry(me).or_default();
        for seq in &lw.bnf[x as usize] {
            for s in seq {
                if !s.is_terminal() && !productive[s.index() as usize] {
                    entry.insert(lw.nt_origin[s.index() as usize].0.as_str());
                }
            }
        }
    }
    let origin_pos = |name: &str| bad.iter().map(|&x| &lw.nt_origin[x as usize]).find(|(n, _)| n == name).map(|(_, p)| *p);
    let mut roots: Vec<(&str, Pos)> = refs_of
        .iter()
        .filter(|(me, refs)| refs.iter().all(|r| r == *me))
        .filter_map(|(me, _)| origin_pos(me).map(|p| (*me, p)))
        .collect();
    roots.sort_by_key(|(_, p)| *p);
    let (name, pos) = match roots.first() {
        Some(&(n, p)) => (n.to_string(), p),
        None => {
            let x = bad.iter().min_by_key(|&&x| lw.nt_origin[x as usize].1).copied().unwrap_or(start);
            lw.nt_origin[x as usize].clone()
        }
    };
    let start_name = &lw.nt_origin[start as usize].0;
    let consequence = if !productive[start as usize] {
        format!("; so the start rule `{start_name}` matches no string at all")
    } else {
        String::new()
    };
    Err(grammar_error(pos, format!("rule `{name}` can never produce a finite string (every alternative recurses forever){consequence}")))
}

/// Removes ε-productions: each production gets the variants without its nullable
/// symbols, and no rule keeps an empty production. Returns which rules were nullable
/// (the caller records whether the start was).
fn remove_nullable(bnf: &mut [Alts], limits: &Limits) -> Result<Vec<bool>> {
    let n = bnf.len();
    let mut nullable = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            if !nullable[i] && bnf[i].iter().any(|seq| seq.iter().all(|s| !s.is_terminal() && nullable[s.index() as usize])) {
                nullable[i] = true;
                changed = true;
            }
        }
    }
    // Rules that derive only "" vanish from right-hand sides (a greatest fixpoint: a rule
    // derives more than "" if some production has a terminal or such a rule).
    let mut only_empty = nullable.clone();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            if only_empty[i]
                && bnf[i].iter().any(|seq| seq.iter().any(|s| s.is_terminal() || !only_empty[s.index() as usize]))
            {
                only_empty[i] = false;
                changed = true;
            }
        }
    }
    let mut total = 0usize;
    for alts in bnf.iter_mut() {
        let mut out: Vec<Vec<Sym>> = Vec::new();
        let mut seen: HashSet<Vec<Sym>> = HashSet::new();
        for seq in alts.iter() {
            let seq: Vec<Sym> =
                seq.iter().copied().filter(|s| s.is_terminal() || !only_empty[s.index() as usize]).collect();
            let opt: Vec<usize> = (0..seq.len()).filter(|&k| !seq[k].is_terminal() && nullable[seq[k].index() as usize]).collect();
            if opt.len() > 16 {
                return Err(too_many(limits, "a production with more than 16 nullable symbols"));
            }
            for mask in 0u32..(1u32 << opt.len()) {
                let variant: Vec<Sym> = seq
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| match opt.iter().position(|o| o == k) {
                        Some(bit) => mask >> bit & 1 == 0,
                        None => true,
                    })
                    .map(|(_, s)| *s)
                    .collect();
                if !variant.is_empty() && seen.insert(variant.clone()) {
                    out.push(variant);
                }
            }
        }
        total += out.len();
        if total > limits.max_grammar_productions {
            return Err(too_many(limits, "nullable-rule removal"));
        }
        *alts = out;
    }
    Ok(nullable)
}

/// Removes unit productions `A → B` by giving `A` the non-unit productions of every `B`
/// it reaches through unit chains.
fn remove_units(bnf: &mut [Alts], limits: &Limits) -> Result<()> {
    let n = bnf.len();
    let is_unit = |seq: &Vec<Sym>| seq.len() == 1 && !seq[0].is_terminal();
    let mut result: Vec<Alts> = Vec::with_capacity(n);
    let mut total = 0usize;
    for a in 0..n {
        let mut reach = vec![false; n];
        let mut stack = vec![a];
        reach[a] = true;
        while let Some(x) = stack.pop() {
            for seq in &bnf[x] {
                if is_unit(seq) {
                    let b = seq[0].index() as usize;
                    if !reach[b] {
                        reach[b] = true;
                        stack.push(b);
                    }
                }
            }
        }
        let mut out: Vec<Vec<Sym>> = Vec::new();
        let mut seen: HashSet<Vec<Sym>> = HashSet::new();
        for (b, &r) in reach.iter().enumerate() {
            if !r {
                continue;
            }
            for seq in &bnf[b] {
                if !is_unit(seq) && !seq.is_empty() && seen.insert(seq.clone()) {
                    out.push(seq.clone());
                }
            }
        }
        total += out.len();
        if total > limits.max_grammar_productions {
            return Err(too_many(limits, "unit-rule removal"));
        }
        result.push(out);
    }
    for (a, alts) in result.into_iter().enumerate() {
        bnf[a] = alts;
    }
    Ok(())
}

/// Keeps what the start reaches and renumbers.
fn build_cfg(names: Vec<String>, bnf: Vec<Alts>, terminals: Vec<Terminal>, start: u32, accepts_empty: bool, warnings: Vec<String>) -> Cfg {
    let n = bnf.len();
    let mut reach = vec![false; n];
    let mut stack = vec![start as usize];
    reach[start as usize] = true;
    let mut term_used = vec![false; terminals.len()];
    while let Some(x) = stack.pop() {
        for seq in &bnf[x] {
            for s in seq {
                if s.is_terminal() {
                    term_used[s.index() as usize] = true;
                } else if !reach[s.index() as usize] {
                    reach[s.index() as usize] = true;
                    stack.push(s.index() as usize);
                }
            }
        }
    }
    let mut nt_map = vec![u32::MAX; n];
    let mut nonterminals = Vec::new();
    for i in 0..n {
        if reach[i] {
            nt_map[i] = nonterminals.len() as u32;
            nonterminals.push(names[i].clone());
        }
    }
    let mut t_map = vec![u32::MAX; terminals.len()];
    let mut kept_terminals = Vec::new();
    for (i, t) in terminals.into_iter().enumerate() {
        if term_used[i] {
            t_map[i] = kept_terminals.len() as u32;
            kept_terminals.push(t);
        }
    }
    let mut productions = Vec::new();
    let mut productions_of = vec![Vec::new(); nonterminals.len()];
    for i in 0..n {
        if !reach[i] {
            continue;
        }
        for seq in &bnf[i] {
            let rhs: Vec<Sym> = seq
                .iter()
                .map(|s| if s.is_terminal() { Sym::t(t_map[s.index() as usize]) } else { Sym::n(nt_map[s.index() as usize]) })
                .collect();
            productions_of[nt_map[i] as usize].push(productions.len() as u32);
            productions.push(Production { lhs: nt_map[i], rhs });
        }
    }
    Cfg {
        nonterminals,
        productions,
        productions_of,
        terminals: kept_terminals,
        start: nt_map[start as usize],
        accepts_empty,
        warnings,
        regular: None,
    }
}
