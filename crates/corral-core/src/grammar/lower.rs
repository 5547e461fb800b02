//! Validation and normalization: grammar AST → [`Cfg`], a BNF over byte-DFA terminals with
//! no nullable rules (except the start) and no unit rules.
//!
//! Steps: resolve names (undefined rules are errors with line:column) → find the regular
//! rules (not on a reference cycle) and compile each regex piece to one terminal DFA, and
//! each `and!`, `not!`, `except!` to one terminal DFA built with [`crate::automata`]'s
//! constructions →
//! lower the rest to BNF (groups and repetitions become helper rules, repetitions left
//! recursive) → merge runs of adjacent terminals → split terminals that match the empty
//! string → drop what can never produce a finite string (a piece that matches no string,
//! a rule that only recurses: warnings; an error only when the start rule is among them)
//! → remove nullable rules, then unit rules → drop what is unreachable.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::perm::Perm;
pub use super::sym::Sym;
use crate::automata::{Dfa, DfaExpr};
use crate::error::{Error, Result};
use crate::frontend::ast::{Expr, GrammarAst, Pos, Term};
use crate::frontend::regex::{self, PerlClasses};
use crate::frontend::scanner::grammar_error;
use crate::limits::Limits;

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
    /// Its automaton (shared with the lowering's caches).
    pub dfa: Arc<Dfa>,
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
}

/// Expression lowered to alternatives of symbol sequences, before normalization.
type Alts = Vec<Vec<Sym>>;

/// A regular piece of a grammar. Without boolean operators it stays Python regex source
/// (compiled by the regex engine, and mergeable with neighbouring terminals); with them it
/// is a DFA built by corral's own constructions, named by a canonical key (for caching).
#[derive(Debug, Clone)]
enum Reg {
    Src(String),
    Dfa {
        dfa: Arc<Dfa>,
        key: String,
    },
    /// The empty language: no string at all. The index names the piece that caused it
    /// (in `Lowering::voids`). Alternatives that need it are dropped, and only a grammar
    /// whose start rule is void is an error.
    Void(usize),
}

impl Reg {
    /// A canonical name: equal keys, equal languages. Sources are quoted, so they never
    /// read as an operator key.
    fn key(&self) -> String {
        match self {
            Reg::Src(src) => format!("{src:?}"),
            Reg::Dfa { key, .. } => key.clone(),
            Reg::Void(_) => "void".to_string(),
        }
    }
}

/// Regex source length (bytes) above which a regular rule is parsed as grammar structure
/// over smaller terminals rather than determinized whole (see
/// [`Lowering::is_terminal_piece`]). Small: the parser reading the pieces costs little per
/// token, and the pieces (a string, a number) recur across a grammar, built once.
const MAX_TERMINAL_SOURCE: usize = 150;

/// How the lowering splits a grammar into terminals (front-ends that know their grammar's
/// shape may choose; the defaults suit hand-written grammars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerOptions {
    /// Regex source length (bytes) up to which a regular sequence or union of rules and
    /// strings becomes one terminal, determinized whole; longer ones stay grammar structure
    /// over their parts (then joined by concatenation where that is deterministic, see
    /// `merge_terminal_runs`). Default 150. The JSON Schema front-end uses 0: its value
    /// rules are terminals shared by many properties, and joining a key to a shared value
    /// by concatenation costs microseconds where determinizing each property's regex costs
    /// tens. Single terminals (a string, a `/regex/`) are always one terminal.
    pub max_terminal_source: usize,
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions { max_terminal_source: MAX_TERMINAL_SOURCE }
    }
}

/// Regex source length (bytes) up to which a regular grammar may be matched as one DFA
/// (see [`WHOLE_MAX_STATES`]). A fold gives up at a piece longer than [`MAX_TERMINAL_SOURCE`]
/// or a counted one of more than [`FOLD_MAX_PIECE_STATES`] states.
const WHOLE_MAX_SOURCE: usize = 1_000;

/// A regular grammar is matched as one DFA only while that DFA has at most this many
/// states (else by the parser over its pieces).
const WHOLE_MAX_STATES: usize = 20_000;
const WHOLE_MAX_BYTES: usize = 4 << 20;

/// Adjacent terminals are joined into one only while the result stays this small (in
/// DFA states, see [`merge_terminal_runs`]).
const MERGE_MAX_STATES: usize = 4_096;

const REGULAR_ARGS: &str = "(strings, classes, regexes and non-recursive rules)";

/// The budget of [`Lowering::try_fold`]: DFA states, and bytes of subset-construction sets.
const FOLD_MAX_STATES: usize = 2_000;
/// (Bytes bound the regex engine's determinization, which runs before states are counted.)
const FOLD_MAX_BYTES: usize = 1 << 20;
/// A fold builds many intermediate DFAs (one per sequence, union and operator): their
/// states, summed, are bounded too, so that a failing attempt stays cheap.
const FOLD_MAX_WORK: usize = 4 * FOLD_MAX_STATES;
/// A fold gives up at a piece of more states than this that has a count of 16 or more.
const FOLD_MAX_PIECE_STATES: usize = 256;

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

/// The regex source of `inner` (already grouped) repeated `{min,max}`.
fn repeat_src(inner: &str, min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, Some(1)) => format!("{inner}?"),
        (0, None) => format!("{inner}*"),
        (1, None) => format!("{inner}+"),
        (m, None) => format!("{inner}{{{m},}}"),
        (m, Some(n)) if m == n => format!("{inner}{{{m}}}"),
        (m, Some(n)) => format!("{inner}{{{m},{n}}}"),
    }
}

struct Lowering<'a> {
    ast: &'a GrammarAst,
    limits: &'a Limits,
    options: &'a LowerOptions,
    classes: Option<&'a PerlClasses>,
    /// Rule name → (its definitions' expressions, position of the first definition).
    defs: HashMap<&'a str, (Vec<&'a Expr>, Pos)>,
    /// Rules that are regular (on no reference cycle, so they could be one DFA).
    regular_rules: HashSet<&'a str>,
    /// Regex source of the regular rules without boolean operators (computed up front);
    /// DFAs of those with them (built when an operator's argument needs one).
    regular: HashMap<&'a str, Reg>,
    /// Smaller limits while trying to build a regular start rule's DFA (see `try_fold`).
    fold_limits: Option<Limits>,
    /// DFA states built so far by the current fold attempt (bounded by [`FOLD_MAX_WORK`]).
    fold_work: std::cell::Cell<usize>,
    /// DFAs built for regular pieces, by [`Reg::key`] (each is built once).
    dfa_cache: HashMap<String, Arc<Dfa>>,
    /// Regex sources compiled so far (checking a piece, building a terminal and folding a
    /// rule often compile the same source).
    compiled: std::cell::RefCell<HashMap<String, Arc<Dfa>>>,
    /// Pieces of regexes built so far, shared by the sources compiled later.
    pieces: std::cell::RefCell<regex::PieceCache>,
    nt_names: Vec<String>,
    nt_origin: Vec<(String, Pos)>,
    nt_of_rule: HashMap<&'a str, u32>,
    bnf: Vec<Alts>,
    terminals: Vec<Terminal>,
    terminal_of_regex: HashMap<String, u32>,
    /// Terminals built as DFAs (not from one regex), by [`Reg::key`].
    terminal_of_dfa: HashMap<String, u32>,
    /// Terminals of the raw regex source (for merging runs), None for DFA-built ones.
    terminal_regex: Vec<Option<String>>,
    /// Each terminal's canonical key (see [`Reg::key`]), for naming merged terminals.
    terminal_key: Vec<String>,
    worklist: Vec<&'a str>,
    /// Rule references being followed by [`Lowering::rule_reg`] right now (see
    /// [`MAX_REGULAR_REF_DEPTH`]).
    ref_depth: usize,
    /// Regular rules whose regex source is too long to keep (see [`KEPT_SOURCE_FACTOR`]).
    oversized: HashSet<&'a str>,
    /// Regex pieces (by source) that match no string: they lower to [`Reg::Void`].
    void_terms: HashMap<&'a str, usize>,
    /// The pieces that match no string: where, and why (each once).
    voids: Vec<(Pos, String)>,
    /// The nonterminal (with no production) standing for each void piece in the BNF.
    void_nt: HashMap<usize, u32>,
    /// Warnings about regular rules found void where they are used.
    void_rule_notes: Vec<(Pos, String)>,
    /// The `perm!`s lowered so far (see [`super::perm`]).
    perms: Vec<PermDraft>,
}

/// A `perm!` during lowering: its list nonterminal, and one nonterminal per entry and for
/// the separator (so that no transformation merges or renames them). The list's
/// productions stand in for it (making it productive and its parts reachable) until
/// [`build_perms`] writes the real ones.
struct PermDraft {
    list: u32,
    sep: Option<u32>,
    entries: Vec<u32>,
    required: Vec<bool>,
    repeat: Vec<bool>,
    min: u32,
    max: Option<u32>,
    pos: Pos,
}

impl PermDraft {
    /// The spec over the entries still alive (`alive`: per entry); the indices kept.
    fn spec(&self, alive: &[bool], sep_alive: bool) -> (Perm, Vec<usize>) {
        let kept: Vec<usize> = (0..self.entries.len()).filter(|&i| alive[i]).collect();
        let perm = Perm {
            list: self.list,
            sep: self.sep.filter(|_| sep_alive).map(Sym::n),
            entries: kept.iter().map(|&i| Sym::n(self.entries[i])).collect(),
            required: kept.iter().map(|&i| self.required[i]).collect(),
            repeat: kept.iter().map(|&i| self.repeat[i]).collect(),
            min: self.min,
            prod_entry: Vec::new(),
            // Without its separator a list has one entry at most.
            max: if self.sep.is_some() && !sep_alive { Some(self.max.unwrap_or(1).min(1)) } else { self.max },
        };
        (perm, kept)
    }

    /// Can this list be nonempty, given which entries can produce anything?
    fn feasible(&self, bnf: &[Alts]) -> bool {
        let alive: Vec<bool> = self.entries.iter().map(|&e| !bnf[e as usize].is_empty()).collect();
        if (0..alive.len()).any(|i| self.required[i] && !alive[i]) {
            return false;
        }
        let sep_alive = self.sep.is_none_or(|s| !bnf[s as usize].is_empty());
        let (perm, _) = self.spec(&alive, sep_alive);
        let empty = vec![0u64; perm.width()];
        let adding = perm.adding(&empty);
        (0..perm.entries.len()).any(|i| perm.allows(&adding, &empty, i))
    }
}

/// Deepest chain of rule references one regular piece may follow while it is built
/// (inside a boolean operator's argument, say): building recurses once per reference.
const MAX_REGULAR_REF_DEPTH: usize = 200;

/// Regex source of a regular rule is kept (so that rules using it can be one regex too)
/// only up to this many times the largest piece a terminal or a whole-grammar DFA is built
/// from; a longer rule is parsed over its parts. Without a cap, a chain of rules that each
/// use the next would hold sources of quadratic total size.
const KEPT_SOURCE_FACTOR: usize = 4;

/// Wraps a regex source so it can be concatenated or repeated.
fn group(src: &str) -> String {
    format!("(?:{src})")
}

impl<'a> Lowering<'a> {
    fn new(ast: &'a GrammarAst, limits: &'a Limits, options: &'a LowerOptions, classes: Option<&'a PerlClasses>) -> Self {
        Lowering {
            ast,
            limits,
            options,
            classes,
            defs: HashMap::new(),
            regular_rules: HashSet::new(),
            regular: HashMap::new(),
            fold_limits: None,
            fold_work: Default::default(),
            dfa_cache: HashMap::new(),
            compiled: Default::default(),
            pieces: Default::default(),
            nt_names: Vec::new(),
            nt_origin: Vec::new(),
            nt_of_rule: HashMap::new(),
            bnf: Vec::new(),
            terminals: Vec::new(),
            terminal_of_regex: HashMap::new(),
            terminal_of_dfa: HashMap::new(),
            terminal_regex: Vec::new(),
            terminal_key: Vec::new(),
            worklist: Vec::new(),
            ref_depth: 0,
            oversized: HashSet::new(),
            void_terms: HashMap::new(),
            voids: Vec::new(),
            void_nt: HashMap::new(),
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
        // Each regex piece on its own, so an error points at the piece.
        let ast: &'a GrammarAst = self.ast;
        let mut terms = Vec::new();
        for r in &ast.rules {
            collect_regex_terms(&r.expr, &mut terms);
        }
        for e in &ast.ignore {
            collect_regex_terms(e, &mut terms);
        }
        for (src, pos) in terms {
            match self.compile_cached(src, self.limits) {
                Ok(_) => {}
                Err(Error::EmptyLanguage { .. }) => {
                    // Not an error by itself: what needs it is dropped (see `Reg::Void`).
                    let v = self.void(pos, format!("`{src}` matches no string"));
                    self.void_terms.entry(src).or_insert(v);
                }
                Err(e @ (Error::LimitExceeded { .. } | Error::Interrupted)) => return Err(e),
                Err(e) => return Err(grammar_error(pos, format!("in `{src}`: {e}"))),
            }
        }
        Ok(())
    }

    /// Records a piece that matches no string (once per place and reason).
    fn void(&mut self, pos: Pos, why: String) -> usize {
        if let Some(i) = self.voids.iter().position(|(p, w)| *p == pos && *w == why) {
            return i;
        }
        self.voids.push((pos, why));
        self.voids.len() - 1
    }

    /// An operator's result: an empty language is [`Reg::Void`] (noted, not an error).
    fn op_result(&mut self, built: Result<Reg>, pos: Pos, op: &str, why_empty: &str) -> Result<Reg> {
        match built {
            Ok(reg) => Ok(reg),
            Err(Error::EmptyLanguage { .. }) => {
                Ok(Reg::Void(self.void(pos, format!("{op}(...) matches no string ({why_empty})"))))
            }
            Err(e) => Err(op_error(e, pos, op)),
        }
    }

    /// The nonterminal standing for void piece `v`: it has no production, so the
    /// productions that use it are dropped with the unproductive ones.
    fn void_symbol(&mut self, v: usize) -> Sym {
        if let Some(&n) = self.void_nt.get(&v) {
            return Sym::n(n);
        }
        let (pos, why) = self.voids[v].clone();
        let n = self.new_nt(format!("<void: {why}>"), (String::new(), pos));
        self.void_nt.insert(v, n);
        Sym::n(n)
    }

    /// Lark's Earley parser refuses a token that matches the empty string (a TERMINAL, a
    /// string or a regex in a rule it keeps, or an `%ignore` token): so does corral, at
    /// the token. Lark keeps the start rule and, repeatedly, every rule that another kept
    /// rule uses (so two unused rules that use each other are kept). A `*` or `+` becomes a
    /// helper rule of its own there, so a rule that uses itself inside one is kept too.
    fn check_lark_token_widths(&mut self, start: &'a str) -> Result<()> {
        let ast: &'a GrammarAst = self.ast;
        let terminals: HashSet<&str> = ast.rules.iter().filter(|r| r.is_terminal).map(|r| r.name.as_str()).collect();
        let is_terminal = |name: &str| terminals.contains(name);
        let mut uses: HashMap<&'a str, HashSet<&'a str>> = HashMap::new();
        for r in ast.rules.iter().filter(|r| !r.is_terminal) {
            let entry = uses.entry(r.name.as_str()).or_default();
            let mut todo: Vec<(&'a Expr, bool)> = vec![(&r.expr, false)];
            while let Some((e, in_loop)) = todo.pop() {
                match e {
                    Expr::Ref { name, .. } if !is_terminal(name) && (in_loop || *name != r.name) => {
                        entry.insert(name.as_str());
                    }
                    Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => todo.extend(v.iter().map(|x| (x, in_loop))),
                    Expr::Repeat { expr, max, .. } => todo.push((expr, in_loop || max.is_none())),
                    Expr::Not { expr, .. } | Expr::Except { expr, .. } => todo.push((expr, in_loop)),
                    Expr::Perm { .. } => todo.extend(e.children().into_iter().map(|x| (x, true))),
                    Expr::Ref { .. } | Expr::Term { .. } | Expr::Empty => {}
                }
            }
        }
        // The greatest set of rules each used by a kept rule (or the start): drop rules
        // no kept rule uses, one by one, updating the counts of what they use (linear,
        // where re-checking every rule until nothing changes is quadratic on chains).
        let mut users: HashMap<&'a str, usize> = uses.keys().map(|&r| (r, 0)).collect();
        for used in uses.values() {
            for r in used {
                if let Some(n) = users.get_mut(r) {
                    *n += 1;
                }
            }
        }
        let mut kept: HashSet<&'a str> = uses.keys().copied().collect();
        let mut unused: Vec<&'a str> = users.iter().filter(|&(r, &n)| n == 0 && *r != start).map(|(&r, _)| r).collect();
        while let Some(r) = unused.pop() {
            if !kept.remove(r) {
                continue;
            }
            for u in &uses[r] {
                if let Some(n) = users.get_mut(u) {
                    *n -= 1;
                    if *n == 0 && *u != start {
                        unused.push(u);
                    }
                }
            }
        }
        let mut tokens: Vec<(&'a Expr, Option<&'a str>)> = ast.ignore.iter().map(|e| (e, None)).collect();
        let mut kept: Vec<&'a str> = kept.into_iter().collect();
        kept.sort_by_key(|r| self.defs[r].1);
        for rule in kept {
            let mut todo: Vec<&'a Expr> = self.defs[rule].0.iter().rev().copied().collect();
            while let Some(e) = todo.pop() {
                match e {
                    Expr::Ref { name, .. } if is_terminal(name) => tokens.push((e, Some(name))),
                    Expr::Ref { .. } => {}
                    Expr::Term { .. } => tokens.push((e, None)),
                    Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => todo.extend(v.iter()),
                    Expr::Repeat { expr, .. } | Expr::Not { expr, .. } | Expr::Except { expr, .. } => todo.push(expr),
                    Expr::Perm { .. } => todo.extend(e.children()),
                    Expr::Empty => {}
                }
            }
        }
        tokens.sort_by_key(|(e, _)| e.pos());
        for (e, terminal) in tokens {
            let pos = match terminal {
                Some(name) => self.defs[name].1,
                None => e.pos().unwrap_or_default(),
            };
            let empty = match self.expr_reg(e)? {
                Reg::Src(src) => self.compile_src(&src, &src, pos)?.accepts_empty(),
                Reg::Dfa { dfa, .. } => dfa.accepts_empty(),
                Reg::Void(_) => false,
            };
            if empty {
                let what = match terminal {
                    Some(name) => format!("terminal `{name}`"),
                    None => "this token".to_string(),
                };
                return Err(grammar_error(
                    pos,
                    format!("{what} matches the empty string, which Lark's Earley parser does not allow in a token (make it non-empty and its use optional)"),
                ));
            }
        }
        Ok(())
    }

    /// Marks regular rules: those on no reference cycle whose references are all regular,
    /// and computes each one's regex source or DFA (in dependency order, so each is built
    /// once).
    fn find_regular(&mut self) -> Result<()> {
        let names: Vec<&'a str> = {
            let mut v: Vec<&'a str> = self.defs.keys().copied().collect();
            v.sort_unstable();
            v
        };
        let (is_regular, order) = self.regular_order(&names);
        let kept = KEPT_SOURCE_FACTOR * WHOLE_MAX_SOURCE.max(self.options.max_terminal_source);
        for n in order {
            crate::util::interrupt::check()?;
            if !is_regular.get(n).copied().unwrap_or(false) {
                continue;
            }
            self.regular_rules.insert(n);
            // Dependency order: the rules `n` references are settled already.
            let pure = self.defs[n].0.iter().all(|e| self.is_pure(e));
            if pure {
                let reg = self.rule_reg(n)?;
                let lark_token = self.ast.lark_tokens && self.ast.rules.iter().any(|r| r.name == n && r.is_terminal);
                if matches!(&reg, Reg::Src(src) if src.len() > kept) && !lark_token {
                    self.oversized.insert(n);
                    continue;
                }
                self.regular.insert(n, reg);
            }
        }
        Ok(())
    }

    /// Which rules are regular (on no reference cycle, referencing only regular rules;
    /// in a Lark grammar, terminals only), and every rule in dependency order (a rule
    /// after the rules it references). A depth-first search with its own stack: reference
    /// chains can be as long as the grammar.
    fn regular_order(&self, names: &[&'a str]) -> (HashMap<&'a str, bool>, Vec<&'a str>) {
        let lark_terminal: HashSet<&str> = self.ast.rules.iter().filter(|r| r.is_terminal).map(|r| r.name.as_str()).collect();
        // 1 = in progress, 2 = done.
        let mut state: HashMap<&'a str, u8> = HashMap::new();
        let mut is_regular: HashMap<&'a str, bool> = HashMap::new();
        let mut order: Vec<&'a str> = Vec::new();
        for &root in names {
            if state.contains_key(root) {
                continue;
            }
            // Frames: (rule, its references, next reference to visit, regular so far).
            let mut stack: Vec<(&'a str, Vec<&'a str>, usize, bool)> = Vec::new();
            let enter = |name: &'a str, state: &mut HashMap<&'a str, u8>| {
                state.insert(name, 1);
                let mut refs = Vec::new();
                for e in &self.defs[name].0 {
                    collect_refs(e, &mut refs);
                }
                // In Lark grammars only TERMINALS are tokens (rules keep %ignore between theirs).
                let ok =
                    (!self.ast.lark_tokens || lark_terminal.contains(name)) && !self.defs[name].0.iter().any(|e| e.has_perm());
                (name, refs.into_iter().map(|(r, _)| r).collect::<Vec<_>>(), 0usize, ok)
            };
            stack.push(enter(root, &mut state));
            while let Some(top) = stack.last_mut() {
                if top.2 < top.1.len() {
                    let r = top.1[top.2];
                    top.2 += 1;
                    // Every reference is visited, so cycles are found even once `ok` is false.
                    match state.get(r) {
                        Some(1) => top.3 = false, // a cycle: not regular
                        Some(_) => top.3 &= is_regular[r],
                        None => {
                            let frame = enter(r, &mut state);
                            stack.push(frame);
                        }
                    }
                    continue;
                }
                let (name, _, _, ok) = stack.pop().expect("the loop runs while the stack has a frame");
                state.insert(name, 2);
                is_regular.insert(name, ok);
                order.push(name);
                if let Some(parent) = stack.last_mut() {
                    parent.3 &= ok;
                }
            }
        }
        (is_regular, order)
    }

    /// Limits for building DFAs: the grammar's, or a speculative fold's smaller budget.
    fn dfa_limits(&self) -> &Limits {
        self.fold_limits.as_ref().unwrap_or(self.limits)
    }

    /// The DFA of a regular start rule that uses boolean operators, if it is cheap to build
    /// (the whole grammar is then matched like a regex). Folding concatenations and
    /// repetitions of operator DFAs into one automaton can blow up where the Earley parser,
    /// reading the same pieces as separate terminals, does not: so this tries under a small
    /// budget and otherwise leaves the rule to the parser (errors are reported there).
    fn try_fold(&mut self, name: &'a str) -> Option<Dfa> {
        if self.oversized.contains(name) {
            return None;
        }
        let small = Limits {
            max_dfa_states: self.limits.max_dfa_states.min(FOLD_MAX_STATES),
            dfa_size_limit: self.limits.dfa_size_limit.min(FOLD_MAX_BYTES),
            ..self.limits.clone()
        };
        self.fold_limits = Some(small);
        self.fold_work.set(0);
        let reg = self.rule_reg(name);
        self.fold_limits = None;
        match reg {
            Ok(Reg::Dfa { dfa, .. }) => Some((*dfa).clone()),
            Ok(Reg::Src(src)) => self.compile_cached(&src, self.limits).ok().map(|d| (*d).clone()),
            Ok(Reg::Void(_)) | Err(_) => None,
        }
    }

    /// The regex source or DFA of a regular rule (its definitions are alternatives).
    fn rule_reg(&mut self, name: &str) -> Result<Reg> {
        let (defs, pos) = self.defs[name].clone();
        if self.ref_depth >= MAX_REGULAR_REF_DEPTH {
            return Err(grammar_error(
                pos,
                format!("rule `{name}` is reached through more than {MAX_REGULAR_REF_DEPTH} nested rule references inside one regular piece"),
            ));
        }
        self.ref_depth += 1;
        let reg = self.rule_reg_inner(name, defs, pos);
        self.ref_depth -= 1;
        reg
    }

    fn rule_reg_inner(&mut self, name: &str, defs: Vec<&Expr>, pos: Pos) -> Result<Reg> {
        let mut parts = Vec::with_capacity(defs.len());
        for e in defs {
            parts.push(self.expr_reg(e)?);
        }
        let reg = match parts.len() {
            1 => parts.pop().unwrap_or(Reg::Src(String::new())),
            _ => self.combine(parts, false, pos)?,
        };
        if let Reg::Src(src) = &reg {
            if src.len() > self.limits.max_pattern_bytes {
                return Err(Error::LimitExceeded {
                    limit: "max_pattern_bytes",
                    value: self.limits.max_pattern_bytes,
                    context: format!("the regular expression of rule `{name}`"),
                });
            }
        }
        Ok(reg)
    }

    /// Compiles regex source to a DFA; errors name `name` and point at `pos`.
    fn compile_src(&self, src: &str, name: &str, pos: Pos) -> Result<Arc<Dfa>> {
        // A fold gives up on a large regex before the regex engine spends its budget.
        if self.fold_limits.is_some() && src.len() > MAX_TERMINAL_SOURCE && !self.compiled.borrow().contains_key(src) {
            return Err(Error::LimitExceeded {
                limit: "max_dfa_states",
                value: FOLD_MAX_STATES,
                context: "folding the grammar into one DFA".into(),
            });
        }
        match self.compile_cached(src, self.dfa_limits()) {
            // A fold with a large counted piece (a bounded JSON string: 14 states a
            // character) would spend its whole budget combining it before giving up.
            Ok(d) if self.fold_limits.is_some() && d.num_states() > FOLD_MAX_PIECE_STATES && largest_count(src) >= 16 => {
                Err(Error::LimitExceeded {
                    limit: "max_dfa_states",
                    value: FOLD_MAX_PIECE_STATES,
                    context: "folding the grammar into one DFA".into(),
                })
            }
            Ok(d) => Ok(d),
            Err(Error::EmptyLanguage { .. }) => Err(grammar_error(pos, format!("`{name}` matches no string at all"))),
            Err(e @ (Error::LimitExceeded { .. } | Error::Interrupted)) => Err(e),
            Err(e) => Err(grammar_error(pos, format!("in `{name}`: {e}"))),
        }
    }

    /// Compiles a regex source once (successes are remembered; sources are whole
    /// patterns, so the key is exact).
    fn compile_cached(&self, src: &str, limits: &Limits) -> Result<Arc<Dfa>> {
        // `(?:x)` is `x` when the group spans the whole source. Stripping a group that
        // closes earlier leaves an unbalanced `)`, which no compiled (cached) source has.
        let mut key = src;
        loop {
            if let Some(d) = self.compiled.borrow().get(key) {
                return Ok(d.clone());
            }
            match key.strip_prefix("(?:").and_then(|k| k.strip_suffix(')')) {
                Some(inner) => key = inner,
                None => break,
            }
        }
        crate::util::interrupt::check_now()?;
        let d = crate::frontend::regex::prebuilt::compile_cached(src, limits, self.classes, &mut self.pieces.borrow_mut())?;
        self.compiled.borrow_mut().insert(src.to_string(), d.clone());
        Ok(d)
    }

    /// The DFA of a regular piece (regex sources are compiled once).
    fn reg_dfa(&mut self, reg: &Reg, pos: Pos) -> Result<Arc<Dfa>> {
        match reg {
            Reg::Dfa { dfa, .. } => Ok(dfa.clone()),
            // Callers take void pieces apart first; a DFA needs at least one string.
            Reg::Void(v) => Err(grammar_error(pos, self.voids[*v].1.clone())),
            Reg::Src(src) => {
                let key = reg.key();
                if let Some(d) = self.dfa_cache.get(&key) {
                    return Ok(d.clone());
                }
                let dfa = self.compile_src(src, src, pos)?;
                self.count_fold_work(&dfa)?;
                self.dfa_cache.insert(key, dfa.clone());
                Ok(dfa)
            }
        }
    }

    /// During a fold, adds a built DFA's states to the attempt's work (see
    /// [`FOLD_MAX_WORK`]); past the bound the attempt stops.
    fn count_fold_work(&self, dfa: &Dfa) -> Result<()> {
        if self.fold_limits.is_some() {
            self.fold_work.set(self.fold_work.get() + dfa.num_states());
            if self.fold_work.get() > FOLD_MAX_WORK {
                return Err(Error::LimitExceeded {
                    limit: "max_dfa_states",
                    value: FOLD_MAX_WORK,
                    context: "folding the grammar into one DFA".into(),
                });
            }
        }
        Ok(())
    }

    /// The piece named `key`: from the cache, or built now.
    fn cached(&mut self, key: String, build: impl FnOnce(&Self) -> Result<Dfa>) -> Result<Reg> {
        if let Some(dfa) = self.dfa_cache.get(&key) {
            return Ok(Reg::Dfa { dfa: dfa.clone(), key });
        }
        let dfa = Arc::new(build(self)?);
        self.count_fold_work(&dfa)?;
        self.dfa_cache.insert(key.clone(), dfa.clone());
        Ok(Reg::Dfa { dfa, key })
    }

    /// Concatenation (`seq`) or union of regular pieces: regex source while every piece is
    /// one, else one DFA (adjacent sources joined into one regex first, so that the regex
    /// engine does what it can).
    fn combine(&mut self, parts: Vec<Reg>, seq: bool, pos: Pos) -> Result<Reg> {
        // A sequence with a void part is void; a union drops its void parts.
        let first_void = parts.iter().find_map(|p| if let Reg::Void(v) = p { Some(*v) } else { None });
        let parts: Vec<Reg> = match first_void {
            Some(v) if seq => return Ok(Reg::Void(v)),
            Some(v) => {
                let rest: Vec<Reg> = parts.into_iter().filter(|p| !matches!(p, Reg::Void(_))).collect();
                if rest.is_empty() {
                    return Ok(Reg::Void(v));
                }
                rest
            }
            None => parts,
        };
        let sep = if seq { "" } else { "|" };
        let all_src: Option<Vec<&str>> =
            parts.iter().map(|p| if let Reg::Src(s) = p { Some(s.as_str()) } else { None }).collect();
        if let Some(srcs) = all_src {
            return Ok(Reg::Src(group(&srcs.join(sep))));
        }
        let mut pieces: Vec<Reg> = Vec::new();
        let mut run: Vec<String> = Vec::new();
        for p in parts {
            match p {
                Reg::Src(src) => run.push(src),
                Reg::Void(_) => {} // removed above
                dfa => {
                    // A union's sources are all joined (order does not matter there).
                    if seq && !run.is_empty() {
                        pieces.push(Reg::Src(group(&run.join(sep))));
                        run.clear();
                    }
                    pieces.push(dfa);
                }
            }
        }
        if !run.is_empty() {
            pieces.push(Reg::Src(group(&run.join(sep))));
        }
        if pieces.len() == 1 {
            return Ok(pieces.pop().unwrap_or(Reg::Src(String::new())));
        }
        let op = if seq { "seq" } else { "alt" };
        let key = format!("{op}({})", pieces.iter().map(Reg::key).collect::<Vec<_>>().join(","));
        let mut dfas = Vec::with_capacity(pieces.len());
        for p in &pieces {
            dfas.push(self.reg_dfa(p, pos)?);
        }
        let what = format!("the regular expression at {pos}");
        self.cached(key, |lw| {
            let leaves: Vec<DfaExpr<'_>> = dfas.iter().map(|d| DfaExpr::Leaf(d)).collect();
            let e = if seq { DfaExpr::Seq(leaves) } else { DfaExpr::Alt(leaves) };
            Dfa::from_expr(&e, lw.dfa_limits(), &what)
        })
    }

    /// The regex source or DFA of a regular expression (its references are regular rules).
    fn expr_reg(&mut self, e: &Expr) -> Result<Reg> {
        Ok(match e {
            Expr::Empty => Reg::Src("(?:)".to_string()),
            Expr::Term { term: Term::Regex(src), .. } if self.void_terms.contains_key(src.as_str()) => {
                Reg::Void(self.void_terms[src.as_str()])
            }
            Expr::Term { term, .. } => Reg::Src(term.regex_source()),
            Expr::Ref { name, .. } => {
                let reg = match self.regular.get(name.as_str()) {
                    Some(reg) => reg.clone(),
                    None => {
                        let reg = self.rule_reg(name)?;
                        // Memoized, except for a fold's attempt under its smaller limits.
                        if let (Some((&key, _)), None) = (self.defs.get_key_value(name.as_str()), &self.fold_limits) {
                            self.regular.insert(key, reg.clone());
                        }
                        reg
                    }
                };
                match reg {
                    Reg::Src(src) => Reg::Src(group(&src)),
                    dfa => dfa,
                }
            }
            Expr::Seq(items) | Expr::Alt(items) => {
                let mut parts = Vec::with_capacity(items.len());
                for x in items {
                    parts.push(self.expr_reg(x)?);
                }
                self.combine(parts, matches!(e, Expr::Seq(_)), e.pos().unwrap_or_default())?
            }
            Expr::Repeat { expr, min, max, pos } => match self.expr_reg(expr)? {
                // No repetition of nothing but the empty one.
                Reg::Void(_) if *min == 0 => Reg::Src("(?:)".to_string()),
                Reg::Void(v) => Reg::Void(v),
                Reg::Src(src) => Reg::Src(repeat_src(&group(&src), *min, *max)),
                inner => {
                    let key = format!("rep{{{min},{max:?}}}({})", inner.key());
                    let dfa = self.reg_dfa(&inner, *pos)?;
                    let what = format!("the repetition at {pos}");
                    let e = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&dfa)), min: *min, max: *max };
                    self.cached(key, |lw| Dfa::from_expr(&e, lw.dfa_limits(), &what))?
                }
            },
            Expr::And { exprs, pos } => {
                let mut parts = Vec::with_capacity(exprs.len());
                for x in exprs {
                    parts.push(self.expr_reg(x)?);
                }
                if let Some(v) = parts.iter().find_map(|p| if let Reg::Void(v) = p { Some(*v) } else { None }) {
                    return Ok(Reg::Void(v));
                }
                let key = format!("and!({})", parts.iter().map(Reg::key).collect::<Vec<_>>().join(","));
                let mut dfas = Vec::with_capacity(parts.len());
                for p in &parts {
                    dfas.push(self.reg_dfa(p, *pos)?);
                }
                let what = format!("and!(...) at {pos}");
                let built = self.cached(key, |lw| {
                    let mut acc = dfas[0].intersect(&dfas[1], lw.dfa_limits(), &what)?;
                    for d in &dfas[2..] {
                        acc = acc.intersect(d, lw.dfa_limits(), &what)?;
                    }
                    Ok(acc)
                });
                self.op_result(built, *pos, "and!", "no string matches all of its arguments")?
            }
            Expr::Not { expr, pos } => {
                let inner = self.expr_reg(expr)?;
                let key = format!("not!({})", inner.key());
                if let Reg::Void(_) = inner {
                    // Nothing excluded: every string of whole characters.
                    return self.cached(key, |_| Ok(Dfa::utf8_any()));
                }
                let dfa = self.reg_dfa(&inner, *pos)?;
                let what = format!("not!(...) at {pos}");
                let built = self.cached(key, |lw| dfa.complement(lw.dfa_limits(), &what));
                self.op_result(built, *pos, "not!", "its argument matches every string")?
            }
            Expr::Perm { pos, .. } => {
                return Err(grammar_error(
                    *pos,
                    format!("perm! is not regular: it cannot be inside and!, not! or except! {REGULAR_ARGS}"),
                ))
            }
            Expr::Except { expr, pos } => {
                let inner = self.expr_reg(expr)?;
                let key = format!("except!({})", inner.key());
                if let Reg::Void(_) = inner {
                    // Nothing to avoid: every string of whole characters.
                    return self.cached(key, |_| Ok(Dfa::utf8_any()));
                }
                let what = format!("except!(...) at {pos}");
                let built = match &inner {
                    Reg::Src(src) => self.cached(key, |lw| regex::build_except_dfa(src, lw.dfa_limits(), lw.classes, &what)),
                    Reg::Dfa { dfa, .. } => self.cached(key, |lw| {
                        // Not containing a match = the complement of `.* e .*`.
                        let any = Dfa::utf8_any();
                        let contains = DfaExpr::Seq(vec![DfaExpr::Leaf(&any), DfaExpr::Leaf(dfa), DfaExpr::Leaf(&any)]);
                        Dfa::from_expr(&contains, lw.dfa_limits(), &what)?.complement(lw.dfa_limits(), &what)
                    }),
                    Reg::Void(v) => Ok(Reg::Void(*v)), // handled above
                };
                self.op_result(built, *pos, "except!", "its argument matches the empty string")?
            }
        })
    }

    /// Can `e` be one DFA (it references no recursive rule)?
    fn is_regular_expr(&self, e: &Expr) -> bool {
        match e {
            Expr::Empty | Expr::Term { .. } => true,
            Expr::Ref { name, .. } => self.regular_rules.contains(name.as_str()),
            Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => v.iter().all(|x| self.is_regular_expr(x)),
            Expr::Repeat { expr, .. } | Expr::Except { expr, .. } | Expr::Not { expr, .. } => self.is_regular_expr(expr),
            Expr::Perm { .. } => false,
        }
    }

    /// Is `e` one regex (regular, with no boolean operator, also in the rules it uses)?
    fn is_pure(&self, e: &Expr) -> bool {
        match e {
            Expr::Empty | Expr::Term { .. } => true,
            Expr::Ref { name, .. } => matches!(self.regular.get(name.as_str()), Some(Reg::Src(_) | Reg::Void(_))),
            Expr::Seq(v) | Expr::Alt(v) => v.iter().all(|x| self.is_pure(x)),
            Expr::Repeat { expr, .. } => self.is_pure(expr),
            Expr::And { .. } | Expr::Not { .. } | Expr::Except { .. } | Expr::Perm { .. } => false,
        }
    }

    /// Does `e` become one regex terminal? It must be pure (see [`Lowering::is_pure`]) and,
    /// unless it is a single term, small: a large regular structure (a JSON object with
    /// many properties, say) determinized as one regex costs far more to build than the
    /// parser reading its pieces as separate terminals (which are then joined where that
    /// is cheap, see [`merge_terminal_runs`]).
    fn is_terminal_piece(&mut self, e: &Expr) -> Result<bool> {
        if !self.is_pure(e) {
            return Ok(false);
        }
        if matches!(e, Expr::Empty | Expr::Term { .. }) {
            return Ok(true);
        }
        // In a Lark grammar a token is a string, a regex or a TERMINAL, however large (%ignore
        // text may follow each token, so one must not be split), and a group of tokens
        // inside a rule is several tokens (ignored text may come between them).
        if self.ast.lark_tokens {
            return Ok(matches!(e, Expr::Ref { .. }));
        }
        // A pure expression's source is never empty: with no room at all, no need to build it.
        if self.options.max_terminal_source == 0 {
            return Ok(false);
        }
        Ok(match self.expr_reg(e)? {
            Reg::Src(src) => src.len() <= self.options.max_terminal_source && !has_large_count(&src),
            Reg::Dfa { .. } | Reg::Void(_) => true,
        })
    }

    /// The operator with a non-regular argument at or inside `e`, innermost first.
    fn irregular_op<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match e {
            Expr::And { exprs, .. } => {
                exprs.iter().find_map(|x| self.irregular_op(x)).or(Some(e)).filter(|_| !self.is_regular_expr(e))
            }
            Expr::Not { expr, .. } | Expr::Except { expr, .. } => {
                self.irregular_op(expr).or(Some(e)).filter(|_| !self.is_regular_expr(e))
            }
            Expr::Seq(v) | Expr::Alt(v) => v.iter().find_map(|x| self.irregular_op(x)),
            Expr::Repeat { expr, .. } => self.irregular_op(expr),
            Expr::Empty | Expr::Term { .. } | Expr::Ref { .. } | Expr::Perm { .. } => None,
        }
    }

    /// The error for a boolean operator `e` whose argument is not regular, reported at the
    /// innermost such operator.
    fn irregular_error(&self, e: &Expr) -> Error {
        let e = self.irregular_op(e).unwrap_or(e);
        let (pos, message) = match e {
            Expr::And { pos, .. } => (*pos, format!("and! needs regular arguments {REGULAR_ARGS}")),
            Expr::Not { pos, .. } => (*pos, format!("not! needs a regular argument {REGULAR_ARGS}")),
            Expr::Except { pos, .. } => (*pos, format!("except! needs a regular argument {REGULAR_ARGS}")),
            _ => (e.pos().unwrap_or_default(), "a boolean operator needs a regular argument".to_string()),
        };
        grammar_error(pos, message)
    }

    /// The terminal of a DFA-built piece (one per key).
    fn dfa_terminal(&mut self, dfa: &Arc<Dfa>, key: String, name: &str) -> u32 {
        if let Some(&t) = self.terminal_of_dfa.get(&key) {
            return t;
        }
        let id = self.push_terminal(Terminal { name: name.to_string(), dfa: dfa.clone() }, None, key.clone());
        self.terminal_of_dfa.insert(key, id);
        id
    }

    /// Adds a terminal with its regex source (if any) and canonical key.
    fn push_terminal(&mut self, t: Terminal, src: Option<String>, key: String) -> u32 {
        let id = self.terminals.len() as u32;
        self.terminals.push(t);
        self.terminal_regex.push(src);
        self.terminal_key.push(key);
        id
    }

    fn terminal(&mut self, src: String, name: &str, pos: Option<Pos>) -> Result<u32> {
        if let Some(&t) = self.terminal_of_regex.get(&src) {
            return Ok(t);
        }
        let dfa = self.compile_src(&src, name, pos.unwrap_or_default())?;
        let id = self.push_terminal(Terminal { name: name.to_string(), dfa }, Some(src.clone()), format!("{src:?}"));
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
        // Pure regex pieces become regex terminals (merged with their neighbours later);
        // each boolean operator becomes one DFA terminal. What surrounds operators stays
        // grammar structure: the parser reads their pieces as separate terminals, which
        // cannot blow up the way one folded automaton can.
        if self.is_terminal_piece(e)? {
            if matches!(e, Expr::Empty) {
                return Ok(None);
            }
            let name = match e {
                Expr::Ref { name, .. } => name.clone(),
                Expr::Term { term: Term::Literal(s), .. } => format!("{s:?}"),
                _ => owner.0.clone(),
            };
            let t = match self.expr_reg(e)? {
                Reg::Src(src) => self.terminal(src, &name, e.pos().or(Some(owner.1)))?,
                Reg::Dfa { dfa, key } => self.dfa_terminal(&dfa, key, &name),
                Reg::Void(v) => {
                    if let Expr::Ref { name, .. } = e {
                        let pos = self.defs[name.as_str()].1;
                        self.void_rule_notes.push((pos, name.clone()));
                    }
                    return Ok(Some(self.void_symbol(v)));
                }
            };
            return Ok(Some(Sym::t(t)));
        }
        match e {
            Expr::Ref { name, .. } => {
                let n = self.rule_nt(self.defs.get_key_value(name.as_str()).map(|(k, _)| *k).unwrap_or(""));
                Ok(Some(Sym::n(n)))
            }
            Expr::Except { .. } | Expr::And { .. } | Expr::Not { .. } => {
                if !self.is_regular_expr(e) {
                    return Err(self.irregular_error(e));
                }
                let op = match e {
                    Expr::And { .. } => "and!",
                    Expr::Not { .. } => "not!",
                    _ => "except!",
                };
                let t = match self.expr_reg(e)? {
                    Reg::Dfa { dfa, key } => self.dfa_terminal(&dfa, key, &format!("{op}({})", owner.0)),
                    Reg::Src(src) => self.terminal(src, op, e.pos())?, // operators always build DFAs
                    Reg::Void(v) => return Ok(Some(self.void_symbol(v))),
                };
                Ok(Some(Sym::t(t)))
            }
            Expr::Perm { sep, entries, min, max, pos } => Ok(Some(self.perm(sep, entries, *min, *max, *pos, owner)?)),
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

    /// The symbol of a `perm!`: its list nonterminal, made optional when the empty list
    /// is allowed (see [`super::perm`]).
    fn perm(
        &mut self,
        sep: &'a Expr,
        entries: &'a [crate::frontend::ast::PermEntry],
        min: u32,
        max: Option<u32>,
        pos: Pos,
        owner: &(String, Pos),
    ) -> Result<Sym> {
        // A list's shortest string has `min` entries: bounded as a repetition's count is.
        let cap = self.limits.max_grammar_productions;
        if min as usize > cap {
            return Err(Error::LimitExceeded {
                limit: "max_grammar_productions",
                value: cap,
                context: format!("the least count of the perm! at {pos}"),
            });
        }
        let k = self.nt_names.len();
        let list = self.new_nt(format!("{}#perm{k}", owner.0), owner.clone());
        let part = |lw: &mut Self, e: &'a Expr, what: String| -> Result<u32> {
            let n = lw.new_nt(format!("{}#perm{k}.{what}", owner.0), (owner.0.clone(), e.pos().unwrap_or(pos)));
            let alts = lw.alts(e, owner)?;
            lw.bnf[n as usize] = alts;
            Ok(n)
        };
        let sep_nt = match sep {
            Expr::Empty => None,
            e => Some(part(self, e, "sep".into())?),
        };
        let mut entry_nts = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            entry_nts.push(part(self, &e.expr, format!("{i}"))?);
        }
        // Stand-in productions: the list produces something once every required entry does
        // (with no required entry, once any entry does); whether enough entries are left
        // for its counts is checked after (see `drop_unproductive_perms`).
        let required_nts: Vec<Sym> = entry_nts.iter().zip(entries).filter(|(_, e)| e.required).map(|(&n, _)| Sym::n(n)).collect();
        let mut stand_in: Alts =
            if required_nts.is_empty() { entry_nts.iter().map(|&e| vec![Sym::n(e)]).collect() } else { vec![required_nts] };
        if let Some(s) = sep_nt {
            stand_in.push(vec![Sym::n(list), Sym::n(s)]);
        }
        self.bnf[list as usize] = stand_in;
        let required: Vec<bool> = entries.iter().map(|e| e.required).collect();
        self.perms.push(PermDraft {
            list,
            sep: sep_nt,
            entries: entry_nts,
            repeat: entries.iter().map(|e| e.repeat).collect(),
            min,
            max,
            pos,
            required: required.clone(),
        });
        let empty_ok = min == 0 && !required.iter().any(|&r| r);
        if max == Some(0) || !empty_ok {
            // A list allowing no entry matches nothing but "" (or nothing at all).
            if max == Some(0) {
                self.bnf[list as usize].clear();
            }
            if !empty_ok {
                return Ok(Sym::n(list));
            }
        }
        let opt = self.new_nt(format!("{}#perm{k}?", owner.0), owner.clone());
        self.bnf[opt as usize] = vec![vec![], vec![Sym::n(list)]];
        Ok(Sym::n(opt))
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
                        Expr::Seq(_) if !self.is_terminal_piece(it)? => {
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
            Expr::Repeat { expr, min, max, pos } if !self.is_terminal_piece(e)? => {
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

/// Does regex source `src` contain a counted repetition `{m}` / `{m,n}` with a count of at
/// least 64? Such a piece has at least that many DFA states per state of what it repeats,
/// so it stays a terminal of its own instead of being copied into a larger regex.
/// (A heuristic on the text: an escaped brace or one inside a class only makes a rule
/// parsed as structure, which is always exact.)
fn has_large_count(src: &str) -> bool {
    largest_count(src) >= 64
}

/// The largest bound of a counted repetition (`{n}`, `{m,n}`) in regex source `src`.
fn largest_count(src: &str) -> u64 {
    let b = src.as_bytes();
    let mut best = 0u64;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == b'{' {
            let mut j = i + 1;
            let mut largest = 0u64;
            let mut cur = 0u64;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b',') {
                if b[j] == b',' {
                    largest = largest.max(cur);
                    cur = 0;
                } else {
                    cur = cur.saturating_mul(10).saturating_add((b[j] - b'0') as u64);
                }
                j += 1;
            }
            if j < b.len() && b[j] == b'}' && j > i + 1 {
                best = best.max(largest.max(cur));
            }
        }
        i += 1;
    }
    best
}

fn collect_refs<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Ref { name, pos } => out.push((name.as_str(), *pos)),
        _ => e.children().into_iter().for_each(|x| collect_refs(x, out)),
    }
}

fn collect_regex_terms<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Term { term: Term::Regex(src), pos } => out.push((src.as_str(), *pos)),
        _ => e.children().into_iter().for_each(|x| collect_regex_terms(x, out)),
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
    if ast.lark_tokens {
        lw.check_lark_token_widths(start_name)?;
    }
    let regular = match (ast.ignore.is_empty(), lw.regular.get(start_name).cloned()) {
        (true, None) if lw.regular_rules.contains(start_name) => lw.try_fold(start_name),
        (true, Some(Reg::Dfa { dfa, .. })) => Some((*dfa).clone()),
        (true, Some(Reg::Src(src))) if src.len() > WHOLE_MAX_SOURCE => None,
        // One DFA for the whole grammar only while it stays moderate: a large one costs more
        // to build than the parser costs to run.
        (true, Some(Reg::Src(src))) => match lw.compile_cached(
            &src,
            &Limits {
                max_dfa_states: limits.max_dfa_states.min(WHOLE_MAX_STATES),
                dfa_size_limit: limits.dfa_size_limit.min(WHOLE_MAX_BYTES),
                ..limits.clone()
            },
        ) {
            Ok(d) => Some((*d).clone()),
            // Too large as one DFA: the parser reads it over its pieces (any piece that is
            // itself too large is reported there).
            Err(Error::LimitExceeded { .. }) => None,
            Err(Error::EmptyLanguage { .. }) => {
                return Err(Error::Grammar {
                    message: format!("the grammar matches no string at all (start rule `{start_name}`)"),
                    line: 0,
                    col: 0,
                })
            }
            Err(e) => return Err(e),
        },
        _ => None,
    };
    // Ignored expressions (Lark's %ignore): one optional-repeated terminal.
    let ignore: Option<Sym> = if ast.ignore.is_empty() {
        None
    } else {
        let mut parts = Vec::with_capacity(ast.ignore.len());
        for e in &ast.ignore {
            let not_regular = || grammar_error(e.pos().unwrap_or_default(), "%ignore needs a regular expression or terminal");
            if !lw.is_pure(e) {
                return Err(not_regular());
            }
            match lw.expr_reg(e)? {
                Reg::Src(src) => parts.push(src),
                Reg::Dfa { .. } => return Err(not_regular()), // Lark has no boolean operators
                Reg::Void(_) => {}                            // ignores nothing (noted)
            }
        }
        if parts.is_empty() {
            None
        } else {
            let src = format!("(?:{})+", parts.join("|"));
            Some(Sym::t(lw.terminal(src, "%ignore", ast.ignore[0].pos())?))
        }
    };
    // The augmented start S' → S.
    let origin = (start_name.to_string(), lw.defs[start_name].1);
    let s_prime = lw.new_nt(format!("{start_name}'"), origin.clone());
    let root_expr = Expr::Ref { name: start_name.to_string(), pos: lw.defs[start_name].1 };
    let root_alts = lw.alts(&root_expr, &origin)?;
    lw.bnf[s_prime as usize] = root_alts;
    while let Some(name) = lw.worklist.pop() {
        crate::util::interrupt::check()?;
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
        lw.bnf[s_prime as usize] = first
            .into_iter()
            .map(|mut seq| {
                seq.insert(0, Sym::n(opt));
                seq
            })
            .collect();
    }
    let mut warnings = ast.warnings.clone();
    warnings.extend(unused_rules(ast, &lw, start_name));
    merge_terminal_runs(&mut lw)?;
    split_nullable_terminals(&mut lw)?;
    warnings.extend(drop_unproductive_perms(&mut lw, s_prime)?);
    split_nullable_runs(&mut lw);
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
    let mut cfg = build_cfg(lw.nt_names, bnf, lw.terminals, s_prime, accepts_empty, warnings, perms);
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

/// A terminal being merged with its neighbours: its DFA, regex source (None when built
/// by corral's own constructions), name and canonical key.
#[derive(Clone)]
struct RunPart {
    dfa: Arc<Dfa>,
    src: Option<String>,
    name: String,
    key: String,
}

/// Replaces runs of adjacent terminals by one terminal (same language, fewer parser
/// steps, and a string's quotes inside its terminal, so that the terminal ends only where
/// the string does). Two terminals are joined by [`Dfa::concat`] where the junction is
/// deterministic; otherwise two regex terminals are joined by the regex engine, and a
/// terminal built from boolean operators stays apart.
fn merge_terminal_runs(lw: &mut Lowering<'_>) -> Result<()> {
    let mut merged: HashMap<Vec<Sym>, u32> = HashMap::new();
    // Joins tried so far, by the two parts' keys (a run may repeat one pair many times,
    // as a long string's chunks do).
    let mut joins: HashMap<(String, String), Option<Arc<Dfa>>> = HashMap::new();
    for n in 0..lw.bnf.len() {
        for a in 0..lw.bnf[n].len() {
            let seq = lw.bnf[n][a].clone();
            lw.bnf[n][a] = merge_seq(lw, &seq, &mut merged, &mut joins)?;
        }
    }
    Ok(())
}

/// `seq` with each run of adjacent terminals merged (see [`merge_terminal_runs`]).
fn merge_seq(
    lw: &mut Lowering<'_>,
    seq: &[Sym],
    merged: &mut HashMap<Vec<Sym>, u32>,
    joins: &mut HashMap<(String, String), Option<Arc<Dfa>>>,
) -> Result<Vec<Sym>> {
    let mut out = Vec::with_capacity(seq.len());
    let mut i = 0;
    while i < seq.len() {
        let mut j = i;
        while j < seq.len() && seq[j].is_terminal() {
            j += 1;
        }
        if j - i < 2 {
            out.push(seq[i]);
            i += 1;
            continue;
        }
        let run = &seq[i..j];
        if let Some(&t) = merged.get(run) {
            out.push(Sym::t(t));
        } else {
            let before = out.len();
            merge_run(lw, run, joins, &mut out)?;
            if out.len() == before + 1 {
                merged.insert(run.to_vec(), out[before].index());
            }
        }
        i = j;
    }
    Ok(out)
}

/// Merges one run of terminals (see [`merge_terminal_runs`]), pushing the result to `out`.
fn merge_run(
    lw: &mut Lowering<'_>,
    run: &[Sym],
    joins: &mut HashMap<(String, String), Option<Arc<Dfa>>>,
    out: &mut Vec<Sym>,
) -> Result<()> {
    let part = |lw: &Lowering<'_>, s: Sym| {
        let i = s.index() as usize;
        RunPart {
            dfa: lw.terminals[i].dfa.clone(),
            src: lw.terminal_regex[i].clone(),
            name: lw.terminals[i].name.clone(),
            key: lw.terminal_key[i].clone(),
        }
    };
    let all: Vec<RunPart> = run.iter().map(|&s| part(lw, s)).collect();
    let mut parts: Vec<RunPart> = Vec::new();
    // Segments of at most MERGE_MAX_STATES states in all: one concatenation each when
    // every junction is deterministic (joining pairwise would copy the growing automaton
    // at every step: an object's run of keys and values, quadratic), else pair by pair.
    let mut start = 0;
    while start < all.len() {
        let mut end = start + 1;
        let mut states = all[start].dfa.num_states();
        while end < all.len() && states + all[end].dfa.num_states() <= MERGE_MAX_STATES {
            states += all[end].dfa.num_states();
            end += 1;
        }
        let segment = &all[start..end];
        start = end;
        if segment.len() > 2 {
            let dfas: Vec<&Dfa> = segment.iter().map(|p| &*p.dfa).collect();
            let what = format!("the terminals {}", segment.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(" "));
            if let Some(d) = Dfa::concat_all(&dfas, lw.limits, &what)? {
                let src =
                    segment.iter().map(|p| p.src.as_deref().map(group)).collect::<Option<Vec<String>>>().map(|v| v.concat());
                let name = segment.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(" ");
                let key = format!("seq({})", segment.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(","));
                parts.push(RunPart { dfa: Arc::new(d), src, name, key });
                continue;
            }
        }
        merge_pairwise(lw, segment, joins, &mut parts)?;
    }
    for p in parts {
        let t = match &p.src {
            Some(src) if lw.terminal_of_regex.contains_key(src) => lw.terminal_of_regex[src],
            Some(src) => {
                let id = lw.push_terminal(Terminal { name: p.name.clone(), dfa: p.dfa.clone() }, Some(src.clone()), p.key);
                lw.terminal_of_regex.insert(src.clone(), id);
                id
            }
            None => lw.dfa_terminal(&p.dfa, p.key, &p.name),
        };
        out.push(Sym::t(t));
    }
    Ok(())
}

/// Joins `segment` pair by pair, left to right (a junction that is not deterministic is
/// built by subset construction within the merge budget, else the parts stay apart).
fn merge_pairwise(
    lw: &Lowering<'_>,
    segment: &[RunPart],
    joins: &mut HashMap<(String, String), Option<Arc<Dfa>>>,
    parts: &mut Vec<RunPart>,
) -> Result<()> {
    let mut cur: Option<RunPart> = None;
    for p in segment {
        let next = p.clone();
        let Some(c) = cur.take() else {
            cur = Some(next);
            continue;
        };
        if c.dfa.num_states() + next.dfa.num_states() > MERGE_MAX_STATES {
            // Joining copies both automata; past this size it costs more than it saves.
            parts.push(c);
            cur = Some(next);
            continue;
        }
        let what = format!("the terminals {} {}", c.name, next.name);
        let src = match (&c.src, &next.src) {
            (Some(x), Some(y)) => Some(format!("{}{}", group(x), group(y))),
            _ => None,
        };
        let pair = (c.key.clone(), next.key.clone());
        let joined = match joins.get(&pair) {
            Some(j) => j.clone(),
            None => {
                let j = match c.dfa.concat(&next.dfa, lw.limits, &what) {
                    Ok(Some(d)) => Some(Arc::new(d)),
                    // A junction that is not deterministic: subset construction over the two
                    // automata, within the merge budget (else the parser reads them one by one).
                    Ok(None) => {
                        let small = Limits { max_dfa_states: MERGE_MAX_STATES, ..lw.limits.clone() };
                        let e = DfaExpr::Seq(vec![DfaExpr::Leaf(&c.dfa), DfaExpr::Leaf(&next.dfa)]);
                        Dfa::from_expr(&e, &small, &what).ok().map(Arc::new)
                    }
                    Err(Error::LimitExceeded { .. }) => None,
                    Err(e) => return Err(e),
                };
                joins.insert(pair, j.clone());
                j
            }
        };
        match joined {
            Some(dfa) => {
                let key = format!("seq({},{})", c.key, next.key);
                cur = Some(RunPart { dfa, src, name: format!("{} {}", c.name, next.name), key });
            }
            None => {
                parts.push(c);
                cur = Some(next);
            }
        }
    }
    parts.extend(cur);
    Ok(())
}

/// A terminal that matches "" becomes a nullable helper rule `ε | T⁺`.
fn split_nullable_terminals(lw: &mut Lowering<'_>) -> Result<()> {
    let mut replacement: HashMap<u32, Option<Sym>> = HashMap::new();
    let used: HashSet<u32> = lw.bnf.iter().flatten().flatten().filter(|s| s.is_terminal()).map(|s| s.index()).collect();
    let mut used: Vec<u32> = used.into_iter().collect();
    used.sort_unstable();
    for t in used {
        if !lw.terminals[t as usize].dfa.accepts_empty() {
            continue;
        }
        let name = lw.terminals[t as usize].name.clone();
        let sym = match lw.terminals[t as usize].dfa.without_empty(lw.limits, &name) {
            Ok(dfa) => {
                let key = format!("plus({})", lw.terminal_key[t as usize]);
                let plus = lw.push_terminal(Terminal { name: name.clone(), dfa: Arc::new(dfa) }, None, key);
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

/// Drops every production that needs something that can never produce a finite string
/// (a rule whose alternatives all recurse forever, a piece that matches no string): the
/// language stays the same. Returns a warning for each such piece and user rule that the
/// start reaches; an error only when the start rule itself can produce nothing.
fn drop_unproductive(lw: &mut Lowering<'_>, start: u32) -> Result<Vec<String>> {
    let n = lw.bnf.len();
    let productive = derivable(&lw.bnf, true);
    // What the start reaches, and which of it produces nothing.
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
    let void_of: HashMap<u32, usize> = lw.void_nt.iter().map(|(&v, &nt)| (nt, v)).collect();
    if !productive[start as usize] {
        return Err(empty_grammar_error(lw, start, &bad, &void_of));
    }
    let mut notes: Vec<(Pos, String)> = Vec::new();
    for &v in void_of.values() {
        let (pos, why) = &lw.voids[v];
        notes.push((*pos, format!("{why} at line {}, column {}; the alternatives that need it are dropped", pos.line, pos.col)));
    }
    // Void pieces that the start does not reach (in unused rules, or folded into a
    // terminal) are reported too: each is a mistake in the grammar text.
    for (v, (pos, why)) in lw.voids.iter().enumerate() {
        if !lw.void_nt.contains_key(&v) {
            notes.push((*pos, format!("{why} at line {}, column {}", pos.line, pos.col)));
        }
    }
    let mut rules: Vec<(Pos, String)> = lw.void_rule_notes.clone();
    for (name, &nt) in &lw.nt_of_rule {
        if seen[nt as usize] && !productive[nt as usize] {
            rules.push((lw.defs[name].1, name.to_string()));
        }
    }
    rules.sort();
    rules.dedup();
    for (pos, name) in rules {
        notes.push((
            pos,
            format!(
                "rule `{name}` at line {}, column {} can never produce a finite string; the alternatives that use it are dropped",
                pos.line, pos.col
            ),
        ));
    }
    notes.sort();
    notes.dedup();
    for alts in lw.bnf.iter_mut() {
        alts.retain(|seq| seq.iter().all(|s| s.is_terminal() || productive[s.index() as usize]));
    }
    Ok(notes.into_iter().map(|(_, m)| m).collect())
}

/// The error for a grammar whose start rule can produce nothing, at its cause: a rule
/// whose alternatives all recurse forever, else a piece that matches no string.
fn empty_grammar_error(lw: &Lowering<'_>, start: u32, bad: &[u32], void_of: &HashMap<u32, usize>) -> Error {
    let start_name = &lw.nt_origin[start as usize].0;
    let consequence = format!("; so the start rule `{start_name}` matches no string at all");
    // A rule that recurses forever: one of its nonterminals is on a cycle of
    // unproductive ones (the first in the text, if several).
    let in_bad: HashSet<u32> = bad.iter().copied().filter(|x| !void_of.contains_key(x)).collect();
    let succ = |x: u32| -> Vec<u32> {
        lw.bnf[x as usize]
            .iter()
            .flatten()
            .filter(|s| !s.is_terminal() && in_bad.contains(&s.index()))
            .map(|s| s.index())
            .collect()
    };
    let on_cycle = |x: u32| {
        let mut seen: HashSet<u32> = HashSet::new();
        let mut stack = succ(x);
        while let Some(y) = stack.pop() {
            if y == x {
                return true;
            }
            if seen.insert(y) {
                stack.extend(succ(y));
            }
        }
        false
    };
    let mut looping: Vec<u32> = in_bad.iter().copied().filter(|&x| on_cycle(x)).collect();
    looping.sort_by_key(|&x| (lw.nt_origin[x as usize].1, x));
    if let Some(&x) = looping.first() {
        let (name, pos) = lw.nt_origin[x as usize].clone();
        let needs_void = bad.iter().any(|&y| {
            lw.nt_origin[y as usize].0 == name
                && lw.bnf[y as usize].iter().flatten().any(|s| !s.is_terminal() && void_of.contains_key(&s.index()))
        });
        let why = if needs_void {
            "every alternative recurses forever or needs a piece that matches no string"
        } else {
            "every alternative recurses forever"
        };
        return grammar_error(pos, format!("rule `{name}` can never produce a finite string ({why}){consequence}"));
    }
    let mut voids: Vec<&(Pos, String)> = bad.iter().filter_map(|x| void_of.get(x)).map(|&v| &lw.voids[v]).collect();
    voids.sort();
    if let Some((pos, why)) = voids.first() {
        return grammar_error(*pos, format!("{why}{consequence}"));
    }
    let x = bad.iter().min_by_key(|&&x| lw.nt_origin[x as usize].1).copied().unwrap_or(start);
    let (name, pos) = lw.nt_origin[x as usize].clone();
    grammar_error(pos, format!("rule `{name}` can never produce a finite string{consequence}"))
}

/// Which rules derive the empty string (least fixpoint).
fn nullable_rules(bnf: &[Alts]) -> Vec<bool> {
    derivable(bnf, false)
}

/// Which rules derive some string (`terminals_ok`: any string; otherwise the empty
/// string), as a least fixpoint computed with a worklist: each production counts the
/// nonterminal occurrences not yet known to derive, and a rule is settled when one of its
/// productions reaches zero. Linear in the grammar's size (a loop over all rules until
/// nothing changes is quadratic on long chains of rules).
fn derivable(bnf: &[Alts], terminals_ok: bool) -> Vec<bool> {
    let n = bnf.len();
    let mut owner: Vec<u32> = Vec::new();
    let mut waiting: Vec<u32> = Vec::new();
    let mut uses: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut queue: Vec<u32> = Vec::new();
    for (i, alts) in bnf.iter().enumerate() {
        for seq in alts {
            if !terminals_ok && seq.iter().any(|s| s.is_terminal()) {
                continue;
            }
            let p = owner.len() as u32;
            owner.push(i as u32);
            let mut count = 0;
            for s in seq.iter().filter(|s| !s.is_terminal()) {
                uses[s.index() as usize].push(p);
                count += 1;
            }
            waiting.push(count);
            if count == 0 {
                queue.push(i as u32);
            }
        }
    }
    let mut out = vec![false; n];
    while let Some(i) = queue.pop() {
        if std::mem::replace(&mut out[i as usize], true) {
            continue;
        }
        for &p in &uses[i as usize] {
            waiting[p as usize] -= 1;
            if waiting[p as usize] == 0 {
                queue.push(owner[p as usize]);
            }
        }
    }
    out
}

/// Most nullable symbols one production may keep before [`remove_nullable`] (which makes
/// 2^k variants of it).
const MAX_NULLABLE_PER_PRODUCTION: usize = 6;

/// Splits productions with many nullable symbols into a chain of new rules, each with at
/// most [`MAX_NULLABLE_PER_PRODUCTION`] of them, so that removing ε-productions stays
/// linear. `A → x1 … xn` becomes `A → x1 … xk A#1`, `A#1 → xk+1 … A#2`, … (same language).
/// Such productions come from counted repetitions with optional separators, e.g. a JSON
/// array with `minItems: 8` and flexible whitespace.
fn split_nullable_runs(lw: &mut Lowering<'_>) {
    let nullable = nullable_rules(&lw.bnf);
    let is_nullable = |s: &Sym| !s.is_terminal() && nullable.get(s.index() as usize).copied().unwrap_or(false);
    for rule in 0..lw.bnf.len() {
        for alt in 0..lw.bnf[rule].len() {
            if lw.bnf[rule][alt].iter().filter(|s| is_nullable(s)).count() <= MAX_NULLABLE_PER_PRODUCTION {
                continue;
            }
            let seq = std::mem::take(&mut lw.bnf[rule][alt]);
            // Cut before every MAX-th nullable symbol (after the first chunk).
            let mut chunks: Vec<Vec<Sym>> = vec![Vec::new()];
            let mut count = 0;
            for sym in seq {
                if is_nullable(&sym) {
                    if count == MAX_NULLABLE_PER_PRODUCTION {
                        chunks.push(Vec::new());
                        count = 0;
                    }
                    count += 1;
                }
                if let Some(last) = chunks.last_mut() {
                    last.push(sym);
                }
            }
            // Build the chain from its end: each chunk but the last refers to the next.
            let origin = lw.nt_origin[rule].clone();
            let mut next: Option<Sym> = None;
            while let Some(mut chunk) = chunks.pop() {
                if let Some(n) = next {
                    chunk.push(n);
                }
                if chunks.is_empty() {
                    lw.bnf[rule][alt] = chunk;
                    break;
                }
                let k = lw.nt_names.len();
                let name = format!("{}#part{k}", lw.nt_names[rule]);
                let nt = lw.new_nt(name, origin.clone());
                lw.bnf[nt as usize] = vec![chunk];
                next = Some(Sym::n(nt));
            }
        }
    }
}

/// Removes ε-productions: each production gets the variants without its nullable
/// symbols, and no rule keeps an empty production. Returns which rules were nullable
/// (the caller records whether the start was).
fn remove_nullable(bnf: &mut [Alts], limits: &Limits) -> Result<Vec<bool>> {
    let n = bnf.len();
    let nullable = nullable_rules(bnf);
    // Rules that derive only "" vanish from right-hand sides. A rule derives more than ""
    // if it is not nullable, or some production has a terminal or such a rule: spread
    // backwards over the references from those known.
    let mut referrers: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut more: Vec<bool> = vec![false; n];
    let mut queue: Vec<u32> = Vec::new();
    for (i, alts) in bnf.iter().enumerate() {
        for seq in alts {
            for s in seq {
                if !s.is_terminal() {
                    referrers[s.index() as usize].push(i as u32);
                }
            }
        }
        if !nullable[i] || alts.iter().any(|seq| seq.iter().any(|s| s.is_terminal())) {
            more[i] = true;
            queue.push(i as u32);
        }
    }
    while let Some(j) = queue.pop() {
        for &i in &referrers[j as usize] {
            if !std::mem::replace(&mut more[i as usize], true) {
                queue.push(i);
            }
        }
    }
    let only_empty: Vec<bool> = more.iter().map(|m| !m).collect();
    let mut total = 0usize;
    for alts in bnf.iter_mut() {
        let mut out: Vec<Vec<Sym>> = Vec::new();
        let mut seen: HashSet<Vec<Sym>> = HashSet::new();
        for seq in alts.iter() {
            let seq: Vec<Sym> = seq.iter().copied().filter(|s| s.is_terminal() || !only_empty[s.index() as usize]).collect();
            let opt: Vec<usize> =
                (0..seq.len()).filter(|&k| !seq[k].is_terminal() && nullable[seq[k].index() as usize]).collect();
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
/// it reaches through unit chains. `perm!` lists (`lists`) are left alone: their
/// productions are written afterwards, and a unit `A → L` to one stays.
fn remove_units(bnf: &mut [Alts], limits: &Limits, lists: &[bool]) -> Result<()> {
    let n = bnf.len();
    let is_unit = |seq: &Vec<Sym>| seq.len() == 1 && !seq[0].is_terminal() && !lists[seq[0].index() as usize];
    let mut result: Vec<Alts> = Vec::with_capacity(n);
    let mut total = 0usize;
    // Per rule: the last rule whose unit closure reached it (marks without clearing).
    let mut mark: Vec<u32> = vec![u32::MAX; n];
    let mut reached: Vec<usize> = Vec::new();
    for a in 0..n {
        if lists[a] || !bnf[a].iter().any(is_unit) {
            let mut seen: HashSet<&Vec<Sym>> = HashSet::new();
            let out: Alts = bnf[a].iter().filter(|seq| !seq.is_empty() && seen.insert(seq)).cloned().collect();
            total += out.len();
            if total > limits.max_grammar_productions {
                return Err(too_many(limits, "unit-rule removal"));
            }
            result.push(out);
            continue;
        }
        crate::util::interrupt::check()?;
        reached.clear();
        reached.push(a);
        mark[a] = a as u32;
        let mut i = 0;
        while i < reached.len() {
            let x = reached[i];
            i += 1;
            for seq in &bnf[x] {
                if is_unit(seq) {
                    let b = seq[0].index() as usize;
                    if mark[b] != a as u32 {
                        mark[b] = a as u32;
                        reached.push(b);
                    }
                }
            }
        }
        reached.sort_unstable();
        let mut out: Vec<Vec<Sym>> = Vec::new();
        let mut seen: HashSet<Vec<Sym>> = HashSet::new();
        for &b in &reached {
            for seq in &bnf[b] {
                if !is_unit(seq) && !seq.is_empty() && seen.insert(seq.clone()) {
                    out.push(seq.clone());
                }
            }
            if total + out.len() > limits.max_grammar_productions {
                return Err(too_many(limits, "unit-rule removal"));
            }
        }
        total += out.len();
        result.push(out);
    }
    for (a, alts) in result.into_iter().enumerate() {
        bnf[a] = alts;
    }
    Ok(())
}

/// Keeps what the start reaches and renumbers.
fn build_cfg(
    names: Vec<String>,
    bnf: Vec<Alts>,
    terminals: Vec<Terminal>,
    start: u32,
    accepts_empty: bool,
    warnings: Vec<String>,
    perms: Vec<Perm>,
) -> Cfg {
    let n = bnf.len();
    let mut reach = vec![false; n];
    let mut stack = vec![start as usize];
    reach[start as usize] = true;
    // A list's entries and separator stay (copied into its productions, they are still
    // what its shortest strings and samples are made of), if the list does.
    let mut parts_of: HashMap<usize, Vec<usize>> = HashMap::new();
    for p in &perms {
        parts_of
            .entry(p.list as usize)
            .or_default()
            .extend(p.entries.iter().chain(p.sep.iter()).filter(|s| !s.is_terminal()).map(|s| s.index() as usize));
    }
    let mut term_used = vec![false; terminals.len()];
    while let Some(x) = stack.pop() {
        for &p in parts_of.get(&x).map_or(&[][..], |v| &v[..]) {
            if !reach[p] {
                reach[p] = true;
                stack.push(p);
            }
        }
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
    let remap = |s: Sym| if s.is_terminal() { Sym::t(t_map[s.index() as usize]) } else { Sym::n(nt_map[s.index() as usize]) };
    let perms = perms
        .into_iter()
        .filter(|p| reach[p.list as usize])
        .map(|p| Perm {
            list: nt_map[p.list as usize],
            sep: p.sep.map(remap),
            entries: p.entries.into_iter().map(remap).collect(),
            ..p
        })
        .collect();
    Cfg {
        nonterminals,
        productions,
        productions_of,
        terminals: kept_terminals,
        start: nt_map[start as usize],
        accepts_empty,
        warnings,
        regular: None,
        perms,
    }
}

/// [`drop_unproductive`], also dropping each `perm!` list that cannot be finished with the
/// entries that can produce something (a required entry that cannot, too few entries for
/// the least count), and what needs it, until nothing changes.
fn drop_unproductive_perms(lw: &mut Lowering<'_>, start: u32) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    loop {
        let mut warnings = drop_unproductive(lw, start)?;
        let mut changed = false;
        for i in 0..lw.perms.len() {
            let list = lw.perms[i].list as usize;
            if !lw.bnf[list].is_empty() && !lw.perms[i].feasible(&lw.bnf) {
                lw.bnf[list].clear();
                let pos = lw.perms[i].pos;
                notes.push(format!("the perm! at line {}, column {} can never be finished (a required entry matches nothing, or too few entries are left for its least count); only the empty list remains where that is allowed", pos.line, pos.col));
                changed = true;
            }
        }
        if !changed {
            warnings.extend(notes);
            return Ok(warnings);
        }
    }
}

/// A `perm!` entry or separator may not match the empty string (an entry that can be
/// empty would make "how many entries" ambiguous; write `""` for no separator).
fn check_perm_parts(lw: &Lowering<'_>) -> Result<()> {
    let nullable = nullable_rules(&lw.bnf);
    for p in &lw.perms {
        if lw.bnf[p.list as usize].is_empty() {
            continue;
        }
        if let Some(s) = p.sep.filter(|&s| nullable[s as usize]) {
            let pos = lw.nt_origin[s as usize].1;
            return Err(grammar_error(pos, "a perm! separator must not match the empty string (write \"\" for no separator)"));
        }
        if let Some(&e) = p.entries.iter().find(|&&e| nullable[e as usize]) {
            let pos = lw.nt_origin[e as usize].1;
            return Err(grammar_error(pos, "a perm! entry must not match the empty string (mark it optional with `?` instead)"));
        }
    }
    Ok(())
}

/// Entries and separators with at most this many productions are copied into the list's
/// productions (their terminals then merge: `,"key":` is one terminal, as in a sequence).
const MAX_INLINED_ALTERNATIVES: usize = 4;

/// Writes each live `perm!` list's productions (`L → E_i`, `L → L S E_i`, see
/// [`super::perm`]; a small entry or separator is copied in, its terminal runs merged) and
/// returns the lists' specs.
fn build_perms(lw: &mut Lowering<'_>, bnf: &mut [Alts]) -> Result<Vec<Perm>> {
    let mut out = Vec::new();
    let mut merged: HashMap<Vec<Sym>, u32> = HashMap::new();
    let mut joins: HashMap<(String, String), Option<Arc<Dfa>>> = HashMap::new();
    for di in 0..lw.perms.len() {
        let list = lw.perms[di].list;
        if bnf[list as usize].is_empty() {
            continue;
        }
        let d = &lw.perms[di];
        let alive: Vec<bool> = d.entries.iter().map(|&e| !bnf[e as usize].is_empty()).collect();
        let sep_alive = d.sep.is_none_or(|s| !bnf[s as usize].is_empty());
        let (mut perm, _) = d.spec(&alive, sep_alive);
        let inline = |sym: Sym| -> Alts {
            let alts = &bnf[sym.index() as usize];
            let recursive = alts.iter().flatten().any(|&x| x == sym);
            if !sym.is_terminal() && alts.len() <= MAX_INLINED_ALTERNATIVES && !recursive {
                alts.clone()
            } else {
                vec![vec![sym]]
            }
        };
        let empty = vec![0u64; perm.width()];
        let adding = perm.adding(&empty);
        let mut used = vec![false; perm.entries.len()];
        // (production, entry index before unused entries are dropped)
        let mut prods: Vec<(Vec<Sym>, usize)> = Vec::new();
        for (i, used) in used.iter_mut().enumerate() {
            if perm.allows(&adding, &empty, i) {
                for rhs in inline(perm.entries[i]) {
                    prods.push((rhs, i));
                }
                *used = true;
            }
        }
        let add_from = perm.max.is_none_or(|m| m > 1).then_some(prods.len());
        if perm.max.is_none_or(|m| m > 1) {
            let seps = perm.sep.map_or(vec![vec![]], inline);
            for i in 0..perm.entries.len() {
                for sep in &seps {
                    for rhs in inline(perm.entries[i]) {
                        prods.push(([Sym::n(list)].into_iter().chain(sep.iter().copied()).chain(rhs).collect(), i));
                    }
                }
            }
            used.iter_mut().for_each(|u| *u = true);
        } else {
            // One entry at most: no separator is ever written.
            perm.sep = None;
        }
        // An entry no production uses can never appear (it cannot start a list, and no
        // second entry follows): it is not part of the list (only optional ones are left
        // so, as a list that needs one would have no production).
        let new_index: Vec<usize> = used
            .iter()
            .scan(0, |k, &u| {
                let i = *k;
                *k += u as usize;
                Some(i)
            })
            .collect();
        let keep = |v: &[bool]| -> Vec<bool> { v.iter().zip(&used).filter(|(_, &u)| u).map(|(&x, _)| x).collect() };
        perm.required = keep(&perm.required);
        perm.repeat = keep(&perm.repeat);
        perm.entries = perm.entries.iter().zip(&used).filter(|(_, &u)| u).map(|(&e, _)| e).collect();
        let mut rhs_all = Vec::with_capacity(prods.len());
        for (rhs, i) in prods {
            let add = add_from.is_some_and(|k| rhs_all.len() >= k);
            rhs_all.push(merge_seq(lw, &rhs, &mut merged, &mut joins)?);
            perm.prod_entry.push(new_index[i] as u32 | if add { super::perm::ADD } else { 0 });
        }
        bnf[list as usize] = rhs_all;
        out.push(perm);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod tests;
