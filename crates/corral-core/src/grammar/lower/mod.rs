//! Validation and normalization: grammar AST → [`Cfg`], a BNF over byte-DFA terminals with
//! no nullable rules (except the start) and no unit rules.
//!
//! Steps: resolve names (undefined rules are errors with line:column) → parse each regex
//! once into a regex-syntax HIR → find the regular rules (not on a reference cycle) and
//! build each regular piece (a HIR, see `piece`) into one terminal DFA, and
//! each `and!`, `not!`, `except!` to one terminal DFA built with [`crate::automata`]'s
//! constructions →
//! lower the rest to BNF (groups and repetitions become helper rules, repetitions left
//! recursive) → merge runs of adjacent terminals → split terminals that match the empty
//! string → drop what can never produce a finite string (a piece that matches no string,
//! a rule that only recurses: warnings; an error only when the start rule is among them)
//! → remove nullable rules, then unit rules → drop what is unreachable.

use crate::util::hash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::util::hash::{FastMap, FastSet};
use std::sync::Arc;

use super::perm::Perm;
pub use super::sym::Sym;
use crate::automata::{Dfa, LazyDfa};
use crate::error::{Error, Result};
use crate::frontend::ast::{EmbeddedSchema, Expr, GrammarAst, Pos};
use crate::frontend::regex::{self, PerlClasses};
use crate::frontend::scanner::grammar_error;
use crate::limits::Limits;

mod assemble;
mod compose;
mod lark_tokens;
mod merge;
mod nullable;
mod piece;
mod productive;
mod regular;
mod rules;
pub mod shared_pieces;
mod terminals;
#[cfg(test)]
mod tests;

use assemble::*;
pub use compose::{compose, json_region, regular_cfg, repeat, Join};
use merge::*;
use nullable::*;
use piece::Piece;
use productive::*;
use regular::*;
use rules::*;
#[cfg(test)]
pub(crate) use terminals::OPERATOR_STATES;

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
    /// Its automaton (shared with the lowering's caches): a joined run of terminals is
    /// built the first time the parser reads it (see [`crate::automata::lazy`]).
    pub dfa: Arc<LazyDfa>,
    /// A budget in tokens (a structural tag's `max_tokens`): at most this many of the
    /// model's tokens may start inside one match. The grammar cannot count tokens, so
    /// the matcher does, at token boundaries (see `matcher::budgets`).
    pub token_budget: Option<u32>,
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
    /// The `perm!` lists (see [`super::perm`]).
    pub perms: Vec<Perm>,
    /// The tokens the grammar names (see [`crate::vocab::readings`]).
    pub tokens: crate::vocab::TokenRefs,
}

impl Cfg {
    /// Does some `perm!` list have an entry whose occurrences must be distinct strings
    /// (kept so by the matcher, see [`crate::grammar::distinct_keys`])?
    pub fn has_distinct_lists(&self) -> bool {
        self.perms.iter().any(|p| p.distinct.iter().any(|d| d.keeps_distinct()))
    }
}

/// Piece weight (see `piece::Measure::weight`: comparable to bytes of regex text, a
/// character class counting as one position) above which a regular rule is parsed as
/// grammar structure over smaller terminals rather than determinized whole (see
/// [`Lowering::is_terminal_piece`]): a large regular structure (an object of many
/// properties) is cheaper to parse over its pieces than to determinize whole. A small one
/// (a string, a number) is worth one terminal: split into pieces, each piece ending at
/// every character would put the parser under every byte of every token.
const MAX_TERMINAL_WEIGHT: usize = 150;

/// How the lowering splits a grammar into terminals (front-ends that know their grammar's
/// shape may choose; the defaults suit hand-written grammars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerOptions {
    /// Weight up to which a regular sequence or union of rules and strings becomes one
    /// terminal, determinized whole; heavier ones stay grammar structure over their parts
    /// (then joined by concatenation where that is deterministic, see
    /// `merge_terminal_runs`). The weight is a structural measure of the piece's HIR
    /// comparable to the length of its regex text in bytes: literals count their bytes, a
    /// character class counts as one position (2 to 4, however many ranges it has: Python's
    /// `\w` is as light as `[a-z]`), repetition and alternation operators the bytes they
    /// would take to write, groups nothing. Default 150. The JSON Schema front-end uses 0: its value
    /// rules are terminals shared by many properties, and joining a key to a shared value
    /// by concatenation costs microseconds where determinizing each property's regex costs
    /// tens. Single terminals (a string, a `/regex/`) are always one terminal.
    pub max_terminal_source: usize,
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions { max_terminal_source: MAX_TERMINAL_WEIGHT }
    }
}

/// An operator's DFA construction failed: limits as they are, anything else as a
/// grammar error at the operator (an empty result is not an error: see
/// [`Lowering::op_result`]).
fn op_error(e: Error, pos: Pos, op: &str) -> Error {
    match e {
        e @ (Error::LimitExceeded { .. } | Error::Interrupted) => e,
        e @ Error::Grammar { .. } => e,
        e => grammar_error(pos, format!("in {op}: {e}")),
    }
}

struct Lowering<'a> {
    ast: &'a GrammarAst,
    limits: &'a Limits,
    options: &'a LowerOptions,
    classes: Option<&'a PerlClasses>,
    /// Rule name → (its definitions' expressions, position of the first definition).
    defs: FastMap<&'a str, (Vec<&'a Expr>, Pos)>,
    /// Rules that are regular (on no reference cycle, so they could be one DFA).
    regular_rules: FastSet<&'a str>,
    /// Pieces of the regular rules without boolean operators (computed up front); DFAs of
    /// those with them (built when an operator's argument needs one).
    regular: FastMap<&'a str, Reg>,
    /// Each regex term's piece, by its text (parsed once, when the grammar is read).
    regex_pieces: FastMap<&'a str, Piece>,
    /// The Lark TERMINALs (tokens: each is one terminal, however large).
    lark_terminals: FastSet<&'a str>,
    /// Inside a probe (see [`Lowering::probe`]): a piece too heavy to keep stops it.
    probing: bool,
    /// Smaller limits while trying to build a regular start rule's DFA (see `try_fold`).
    fold_limits: Option<Limits>,
    /// DFA states built so far by the current fold attempt (bounded by [`FOLD_MAX_WORK`]).
    fold_work: std::cell::Cell<usize>,
    /// The rules' regular forms found by the current fold attempt (valid under any
    /// limits, but kept apart from `regular`, which holds what was built outside folds).
    fold_memo: FastMap<&'a str, Reg>,
    /// DFAs built for pieces, by [`Piece::key`] (each is built once).
    dfa_cache: FastMap<String, Arc<Dfa>>,
    /// DFAs built by operators, by their full key, with their short key's number (see
    /// [`Lowering::cached`]).
    op_cache: FastMap<String, (Arc<Dfa>, usize)>,
    /// Joins of automata that exceeded the DFA limits in a probe, by key (see
    /// `Lowering::joined`).
    unjoinable: FastSet<String>,
    /// The short key (`@t` and a number) of each front-end DFA term, by the term's key: a
    /// term's key may be long (a class of object keys names them all), and combinations
    /// repeat their parts' keys.
    dfa_term_keys: FastMap<String, String>,
    /// Parts of automata built so far, shared by the pieces built later.
    pieces: std::cell::RefCell<regex::PieceCache>,
    nt_names: Vec<String>,
    nt_origin: Vec<(String, Pos)>,
    nt_of_rule: FastMap<&'a str, u32>,
    bnf: Vec<Alts>,
    terminals: Vec<Terminal>,
    /// Terminals by their piece's or DFA's key (see [`Reg::key`]).
    terminal_of_key: FastMap<String, u32>,
    /// Each terminal's piece (for `%ignore`), None for DFA-built ones.
    terminal_piece: Vec<Option<Piece>>,
    /// Each terminal's canonical key (see [`Reg::key`]), for naming merged terminals.
    terminal_key: Vec<String>,
    worklist: Vec<&'a str>,
    /// Rule references being followed by [`Lowering::rule_reg`] right now (see
    /// `Limits::max_grammar_nesting`).
    ref_depth: usize,
    /// Regular rules whose piece is too heavy to keep (see [`Lowering::is_heavy`]), or
    /// that join a front-end's automaton past half a fold's budget: a fold stops at them.
    oversized: FastSet<&'a str>,
    /// Regex terms (by their text) that match no string: they lower to [`Reg::Void`].
    void_terms: FastMap<&'a str, usize>,
    /// The pieces that match no string: where, and why (each once).
    voids: Vec<(Pos, String)>,
    /// The nonterminal (with no production) standing for each void piece in the BNF.
    void_nt: FastMap<usize, u32>,
    /// Warnings about regular rules found void where they are used.
    void_rule_notes: Vec<(Pos, String)>,
    /// The `perm!`s lowered so far (see [`super::perm`]).
    perms: Vec<PermDraft>,
    /// Does the rule being lowered follow Lark's tokens (a Lark grammar's rule, not one of
    /// a JSON Schema written inside it)?
    lark_rule: bool,
}

impl<'a> Lowering<'a> {
    fn new(ast: &'a GrammarAst, limits: &'a Limits, options: &'a LowerOptions, classes: Option<&'a PerlClasses>) -> Self {
        Lowering {
            ast,
            limits,
            options,
            classes,
            defs: FastMap::default(),
            regular_rules: FastSet::default(),
            regular: FastMap::default(),
            regex_pieces: FastMap::default(),
            lark_terminals: ast.rules.iter().filter(|r| r.is_terminal).map(|r| r.name.as_str()).collect(),
            probing: false,
            lark_rule: ast.lark_tokens,
            fold_limits: None,
            fold_work: Default::default(),
            fold_memo: FastMap::default(),
            dfa_cache: FastMap::default(),
            op_cache: FastMap::default(),
            unjoinable: FastSet::default(),
            dfa_term_keys: FastMap::default(),
            pieces: std::cell::RefCell::new(shared_pieces::take()),
            nt_names: Vec::new(),
            nt_origin: Vec::new(),
            nt_of_rule: FastMap::default(),
            bnf: Vec::new(),
            terminals: Vec::new(),
            terminal_of_key: FastMap::default(),
            terminal_piece: Vec::new(),
            terminal_key: Vec::new(),
            worklist: Vec::new(),
            ref_depth: 0,
            oversized: FastSet::default(),
            void_terms: FastMap::default(),
            voids: Vec::new(),
            void_nt: FastMap::default(),
            void_rule_notes: Vec::new(),
            perms: Vec::new(),
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
        // Each regex term on its own, so an error points at the term.
        let ast: &'a GrammarAst = self.ast;
        let mut terms = Vec::new();
        for r in &ast.rules {
            collect_regex_terms(&r.expr, &mut terms);
        }
        for e in &ast.ignore {
            collect_regex_terms(e, &mut terms);
        }
        for (src, pos) in terms {
            self.parse_term(src, pos)?;
        }
        Ok(())
    }

    /// Parses regex term `src` (once per text) into its piece; a term that matches no
    /// string is noted, not an error: what needs it is dropped (see [`Reg::Void`]).
    fn parse_term(&mut self, src: &'a str, pos: Pos) -> Result<()> {
        if self.regex_pieces.contains_key(src) || self.void_terms.contains_key(src) {
            return Ok(());
        }
        crate::util::interrupt::check()?;
        // A format's pattern (long, and the same in every grammar) is parsed once per
        // process; a plain literal not at all.
        let literal = regex::plain_literal(src).filter(|_| src.len() <= self.limits.max_pattern_bytes);
        let parsed = match (literal, regex::prebuilt::parsed(src, self.limits)) {
            (Some(bytes), _) => Ok(Arc::new(regex_syntax::hir::Hir::literal(bytes))),
            (None, Some(hir)) => Ok(hir),
            (None, None) => regex::parse(src, self.limits, self.classes).map(Arc::new),
        };
        let piece = match parsed {
            Ok(hir) => Piece::regex(hir, src),
            Err(e @ (Error::LimitExceeded { .. } | Error::Interrupted)) => return Err(e),
            Err(e) => return Err(grammar_error(pos, format!("in `{src}`: {e}"))),
        };
        if piece.is_void() {
            let v = self.void(pos, format!("`{src}` matches no string"));
            self.void_terms.insert(src, v);
        } else {
            self.regex_pieces.insert(src, piece);
        }
        Ok(())
    }
}

fn too_many(limits: &Limits, what: &str) -> Error {
    Error::LimitExceeded {
        limit: "max_grammar_productions",
        value: limits.max_grammar_productions,
        context: format!("normalizing the grammar ({what})"),
    }
}

/// Does `expr` match no string at all? `expr` is the body of one corral EBNF rule made of
/// terminals (strings, classes, regexes, `and!`, `not!`, `except!`, groups and repetitions
/// of them; no rule references). Answered by building its DFA, under `limits`: exact, and
/// a typed answer where a front-end would otherwise compile a grammar to find out.
pub fn expression_is_empty(expr: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<bool> {
    let ast = crate::frontend::parse(&format!("expr ::= {expr}\n;"), crate::frontend::Dialect::Ebnf, limits)?;
    let [rule] = ast.rules.as_slice() else {
        return Err(Error::Grammar { message: format!("not one grammar expression: {expr:?}"), line: 0, col: 0 });
    };
    let options = LowerOptions::default();
    let mut lw = Lowering::new(&ast, limits, &options, classes);
    lw.collect()?;
    lw.find_regular()?;
    match lw.expr_reg(&rule.expr)? {
        Reg::Void(_) => Ok(true),
        // Built DFAs are pruned: one that exists matches something.
        Reg::Dfa { .. } => Ok(false),
        Reg::Hir(p) => Ok(p.is_void()),
    }
}

/// Lowers a parsed grammar to a normalized [`Cfg`] whose start rule is `start` (default:
/// `start`, else `root`, else the first rule).
pub fn lower(ast: &GrammarAst, start: Option<&str>, limits: &Limits, classes: Option<&PerlClasses>) -> Result<Cfg> {
    lower_with(ast, start, limits, &LowerOptions::default(), classes)
}

/// [`lower`] with a choice of how regular parts become terminals (see [`LowerOptions`]).
pub fn lower_with(
    ast: &GrammarAst,
    start: Option<&str>,
    limits: &Limits,
    options: &LowerOptions,
    classes: Option<&PerlClasses>,
) -> Result<Cfg> {
    if ast.rules.is_empty() {
        return Err(grammar_error(Pos { line: 1, col: 1 }, "the grammar defines no rule"));
    }
    let mut lw = Lowering::new(ast, limits, options, classes);
    lw.collect()?;
    let start_name = start_rule(ast, &lw, start)?;
    lw.find_regular()?;
    if ast.lark_tokens {
        lw.check_lark_token_widths(start_name)?;
    }
    let regular = if ast.ignore.is_empty() { whole_grammar_dfa(&mut lw, start_name, limits)? } else { None };
    let ignore = ignore_terminal(ast, &mut lw)?;
    // The augmented start S' → S.
    let origin = (start_name.to_string(), lw.defs[start_name].1);
    let s_prime = lw.new_nt(format!("{start_name}'"), origin.clone());
    let root_expr = Expr::Ref { name: start_name.to_string(), pos: lw.defs[start_name].1 };
    lw.bnf[s_prime as usize] = lw.alts(&root_expr, &origin)?;
    lower_rules(&mut lw)?;
    if let Some(ig) = ignore {
        attach_ignore(&mut lw, ig, s_prime, origin)?;
    }
    let mut warnings = ast.warnings.clone();
    warnings.extend(unused_rules(ast, &lw, start_name));
    let mut cfg = normalize(lw, s_prime, warnings, limits)?;
    cfg.regular = regular;
    cfg.tokens = ast.tokens.clone();
    Ok(cfg)
}

/// The start rule's name: `start` as given (it must be defined), else `start`, else
/// `root`, else the first rule.
fn start_rule<'a>(ast: &'a GrammarAst, lw: &Lowering<'a>, start: Option<&'a str>) -> Result<&'a str> {
    match start {
        Some(s) => match lw.defs.get_key_value(s) {
            Some((k, _)) => Ok(*k),
            None => Err(Error::Grammar { message: format!("the start rule `{s}` is not defined"), line: 0, col: 0 }),
        },
        None => Ok(["start", "root"]
            .iter()
            .find_map(|n| lw.defs.get_key_value(*n).map(|(k, _)| *k))
            .unwrap_or(ast.rules[0].name.as_str())),
    }
}

/// The whole grammar as one DFA, when it is regular and that DFA stays moderate (a large
/// one costs more to build than the parser costs to run); None otherwise.
fn whole_grammar_dfa<'a>(lw: &mut Lowering<'a>, start_name: &'a str, limits: &Limits) -> Result<Option<Dfa>> {
    let piece = match lw.regular.get(start_name).cloned() {
        None if lw.regular_rules.contains(start_name) => return Ok(lw.try_fold(start_name)),
        Some(Reg::Dfa { dfa, .. }) => return Ok(Some((*dfa).clone())),
        Some(Reg::Hir(p)) if p.measure().weight <= WHOLE_MAX_WEIGHT && p.measure().depth <= MAX_PIECE_DEPTH => p,
        _ => return Ok(None),
    };
    let whole_limits = Limits {
        max_dfa_states: limits.max_dfa_states.min(WHOLE_MAX_STATES),
        dfa_size_limit: limits.dfa_size_limit.min(WHOLE_MAX_BYTES),
        ..limits.clone()
    };
    if let Some(d) = lw.dfa_cache.get(piece.key()) {
        return Ok(Some((**d).clone()));
    }
    match lw.build_piece(&piece, &whole_limits, start_name) {
        Ok(d) => {
            lw.dfa_cache.insert(piece.key().to_string(), d.clone());
            Ok(Some((*d).clone()))
        }
        // Too large as one DFA: the parser reads it over its pieces (any piece that is
        // itself too large is reported there).
        Err(Error::LimitExceeded { .. }) => Ok(None),
        Err(Error::EmptyLanguage { .. }) => Err(Error::Grammar {
            message: format!("the grammar matches no string at all (start rule `{start_name}`)"),
            line: 0,
            col: 0,
        }),
        Err(e) => Err(e),
    }
}

/// Lark's `%ignore` expressions as one optional-repeated terminal (None without any).
fn ignore_terminal(ast: &GrammarAst, lw: &mut Lowering<'_>) -> Result<Option<Sym>> {
    let mut parts = Vec::with_capacity(ast.ignore.len());
    for e in &ast.ignore {
        if !lw.is_pure(e) {
            return Err(grammar_error(e.pos().unwrap_or_default(), "%ignore needs a regular expression or terminal"));
        }
        match lw.expr_reg(e)? {
            Reg::Void(_) => {} // ignores nothing (noted)
            reg => parts.push(reg),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    let pos = ast.ignore[0].pos();
    let any = lw.combine(parts, false, pos.unwrap_or_default())?;
    let some = lw.repeat_reg(any, 1, None, pos.unwrap_or_default())?;
    Ok(Some(Sym::t(lw.reg_terminal(some, "%ignore", pos)?)))
}

/// Lowers every rule reached from the start to BNF alternatives (the work list grows as
/// rules are referenced).
fn lower_rules(lw: &mut Lowering<'_>) -> Result<()> {
    while let Some(name) = lw.worklist.pop() {
        crate::util::interrupt::check()?;
        let n = lw.nt_of_rule[name];
        let owner = (name.to_string(), lw.defs[name].1);
        lw.lark_rule = lw.ast.lark_tokens && !EmbeddedSchema::is_inner_rule(name);
        let defs = lw.defs[name].0.clone();
        let mut alts = Vec::new();
        for e in defs {
            alts.extend(lw.alts(e, &owner)?);
        }
        lw.bnf[n as usize] = alts;
    }
    Ok(())
}

/// Lark's `%ignore`: ignored text may follow every terminal (merged into the terminal's
/// DFA, which keeps the grammar small) and may precede the first one.
fn attach_ignore(lw: &mut Lowering<'_>, ig: Sym, s_prime: u32, origin: (String, Pos)) -> Result<()> {
    let pos = origin.1;
    let ig_any = lw.repeat_reg(lw.terminal_reg(ig.index()), 0, None, pos)?;
    let mut with_ignore: HashMap<u32, Sym> = HashMap::new();
    let mut used: Vec<Sym> = lw.bnf.iter().flatten().flatten().copied().filter(|s| s.is_terminal() && *s != ig).collect();
    used.sort_unstable();
    used.dedup();
    for t in used {
        let name = lw.terminals[t.index() as usize].name.clone();
        let followed = lw.combine(vec![lw.terminal_reg(t.index()), ig_any.clone()], true, pos)?;
        with_ignore.insert(t.index(), Sym::t(lw.reg_terminal(followed, &name, None)?));
    }
    let k = lw.nt_names.len();
    let opt = lw.new_nt(format!("%ignore#{k}"), origin);
    for (nt, alts) in lw.bnf.iter_mut().enumerate() {
        let name = &lw.nt_names[nt];
        // Inside a JSON Schema's value, JSON's own layout; ignored text may follow it whole.
        if EmbeddedSchema::is_inner_rule(name) {
            continue;
        }
        let stands_for_schema = name.starts_with(EmbeddedSchema::PREFIX);
        for seq in alts.iter_mut() {
            if stands_for_schema {
                seq.push(Sym::n(opt));
                continue;
            }
            for s in seq.iter_mut() {
                if let Some(m) = with_ignore.get(&s.index()).filter(|_| s.is_terminal()) {
                    *s = *m;
                }
            }
        }
    }
    lw.bnf[opt as usize] = vec![vec![], vec![ig]];
    for seq in lw.bnf[s_prime as usize].iter_mut() {
        seq.insert(0, Sym::n(opt));
    }
    Ok(())
}

/// The BNF steps, in order: merge terminal runs, split nullable terminals, drop
/// unproductive lists and runs, remove nullable then unit rules, assemble.
fn normalize(mut lw: Lowering<'_>, s_prime: u32, mut warnings: Vec<String>, limits: &Limits) -> Result<Cfg> {
    merge_terminal_runs(&mut lw)?;
    split_nullable_terminals(&mut lw)?;
    warnings.extend(drop_unproductive_perms(&mut lw, s_prime)?);
    split_nullable_runs(&mut lw);
    relax_nullable_counts(&mut lw);
    check_perm_parts(&lw)?;
    let mut bnf = std::mem::take(&mut lw.bnf);
    let nullable = remove_nullable(&mut bnf, limits)?;
    let accepts_empty = nullable[s_prime as usize];
    let mut lists = vec![false; bnf.len()];
    for p in &lw.perms {
        lists[p.list as usize] = true;
    }
    remove_units(&mut bnf, limits, &lists)?;
    let perms = build_perms(&mut lw, &mut bnf)?;
    // The automata built here serve the next lowering of a shared build.
    shared_pieces::give_back(lw.pieces.take());
    Ok(build_cfg(lw.nt_names, bnf, lw.terminals, s_prime, accepts_empty, warnings, perms))
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
