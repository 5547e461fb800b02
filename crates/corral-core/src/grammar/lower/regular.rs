//! Which rules and pieces are regular, and their HIR piece or DFA: a rule not on a
//! reference cycle becomes one terminal; `and!`, `not!` and `except!` become one DFA.

use crate::util::hash::{HashMap, HashMapExt};
use std::sync::Arc;

use super::piece::{Measure, Piece};
use super::*;
use crate::automata::{Dfa, DfaExpr};
use crate::error::{Error, Result};
use crate::frontend::ast::{EmbeddedSchema, Expr, Pos, Term};
use crate::frontend::scanner::grammar_error;

/// A regular piece of a grammar. Without boolean operators it is a regex-syntax HIR
/// (built by the regex compiler, and mergeable with neighbouring pieces); with them it is
/// a DFA built by corral's own constructions, named by a canonical key (for caching).
#[derive(Debug, Clone)]
pub(super) enum Reg {
    Hir(Piece),
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
    /// A canonical name: equal keys, equal languages (a piece's key starts with `r`, `l`
    /// or `h` and its length, a DFA's with `@`, see [`Lowering::cached`] and
    /// `Lowering::dfa_term_keys`).
    pub(super) fn key(&self) -> String {
        match self {
            Reg::Hir(p) => p.key().to_string(),
            Reg::Dfa { key, .. } => key.clone(),
            Reg::Void(_) => "void".to_string(),
        }
    }
}

/// Weight (see [`Measure::weight`], comparable to bytes of regex text) up to which a
/// regular grammar may be matched as one DFA (see [`WHOLE_MAX_STATES`]). A fold gives up
/// at a piece heavier than [`MAX_TERMINAL_WEIGHT`] or a counted one of more than
/// [`FOLD_MAX_PIECE_STATES`] states.
pub(super) const WHOLE_MAX_WEIGHT: usize = 1_000;

/// A regular grammar is matched as one DFA only while that DFA has at most this many
/// states (else by the parser over its pieces).
pub(super) const WHOLE_MAX_STATES: usize = 20_000;

pub(super) const WHOLE_MAX_BYTES: usize = 4 << 20;

pub(super) const REGULAR_ARGS: &str = "(strings, classes, regexes and non-recursive rules)";

/// The budget of [`Lowering::try_fold`]: DFA states, and bytes of subset-construction sets.
pub(super) const FOLD_MAX_STATES: usize = 2_000;

/// (Bytes bound the regex engine's determinization, which runs before states are counted.)
pub(super) const FOLD_MAX_BYTES: usize = 1 << 20;

/// A fold builds many intermediate DFAs (one per sequence, union and operator): their
/// states, summed, are bounded too, so that a failing attempt stays cheap.
pub(super) const FOLD_MAX_WORK: usize = 4 * FOLD_MAX_STATES;

/// A fold gives up at a piece of more states than this that has a count of 16 or more.
pub(super) const FOLD_MAX_PIECE_STATES: usize = 256;

/// A regular rule's piece is kept whole (so that rules using it can be one piece too) only
/// up to this many times the weight of the largest piece a terminal or a whole-grammar DFA
/// is built from; a heavier combination is left to grammar structure (see
/// [`Lowering::is_heavy`]). Without a cap, a chain of rules that each use the next twice
/// would hold pieces of exponential size.
pub(super) const KEPT_WEIGHT_FACTOR: usize = 4;

/// Deepest nesting (see [`Measure::depth`]) of a piece that is kept whole or becomes one
/// terminal (real terminals nest a dozen deep; the regex reader refuses past
/// `Limits::regex_nest_limit`, and building an automaton reads a HIR recursively).
pub(super) const MAX_PIECE_DEPTH: usize = 48;

/// The `limit` of the error that stops a probe at a piece too heavy to keep whole (see
/// [`Lowering::probe`]); it never reaches a caller of the lowering.
const HEAVY: &str = "the weight of a regular piece kept whole";

/// The error that stops a probe at a combination too heavy to keep whole (`value`: its
/// weight, or the states of the automaton that could not be built).
fn heavy(value: usize) -> Error {
    Error::LimitExceeded { limit: HEAVY, value, context: "a regular piece".into() }
}

impl<'a> Lowering<'a> {
    /// Marks regular rules: those on no reference cycle whose references are all regular,
    /// and computes each one's piece or DFA (in dependency order, so each is built once).
    /// A rule whose piece would be too heavy to keep (see [`Lowering::is_heavy`]) is left
    /// out (`oversized`): the rules that use it are then grammar structure around it.
    pub(super) fn find_regular(&mut self) -> Result<()> {
        let names: Vec<&'a str> = {
            let mut v: Vec<&'a str> = self.defs.keys().copied().collect();
            v.sort_unstable();
            v
        };
        let (is_regular, order) = self.regular_order(&names);
        for n in order {
            crate::util::interrupt::check()?;
            if !is_regular.get(n).copied().unwrap_or(false) {
                continue;
            }
            self.regular_rules.insert(n);
            // Dependency order: the rules `n` references are settled already.
            let pure = self.defs[n].0.iter().all(|e| self.is_pure(e));
            if !pure {
                continue;
            }
            // A front-end's automaton (an object's class of other keys) repeated or among
            // alternatives would be one product built now, its states copied at every
            // join; as grammar structure, its terminal is joined to its neighbours by
            // concatenation where that is deterministic (see `merge_terminal_runs`). A
            // Lark token is one terminal however it is made.
            if !self.lark_terminals.contains(n) && self.defs[n].0.iter().any(|e| joins_an_automaton(e)) {
                // One past a fold's budget makes folding the rules around it hopeless.
                if self.defs[n].0.iter().any(|e| largest_automaton(e) > FOLD_MAX_STATES / 2) {
                    self.oversized.insert(n);
                }
                continue;
            }
            let kept = match self.probe(|lw| lw.rule_reg(n))? {
                Some(Reg::Hir(p)) if self.is_heavy(p.measure()) => None,
                other => other,
            };
            match kept {
                Some(reg) => {
                    self.regular.insert(n, reg);
                }
                // A Lark token is one terminal however large (ignored text may follow it):
                // built as a DFA from its parts.
                None if self.lark_terminals.contains(n) => {
                    let reg = self.rule_reg(n)?;
                    self.regular.insert(n, reg);
                }
                None => {
                    self.oversized.insert(n);
                }
            }
        }
        Ok(())
    }

    /// Is a piece measuring `m` too heavy to keep whole: heavier than
    /// [`KEPT_WEIGHT_FACTOR`] times the largest terminal or whole-grammar piece, or nested
    /// deeper than [`MAX_PIECE_DEPTH`]?
    pub(super) fn is_heavy(&self, m: Measure) -> bool {
        let kept = KEPT_WEIGHT_FACTOR * WHOLE_MAX_WEIGHT.max(self.options.max_terminal_source);
        m.weight > kept || m.depth > MAX_PIECE_DEPTH
    }

    /// Runs `f` as a probe: a combination of pieces too heavy to keep whole stops it
    /// (None) instead of being built as an automaton from its parts. A probe reads only
    /// pure expressions (see [`Lowering::is_pure`]), so it builds no automaton at all.
    pub(super) fn probe<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<Option<T>> {
        let was = std::mem::replace(&mut self.probing, true);
        let r = f(self);
        self.probing = was;
        match r {
            Ok(x) => Ok(Some(x)),
            Err(Error::LimitExceeded { limit: HEAVY, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Is a combination measuring `m` too heavy where it is made? In a probe or a fold it
    /// then stops the attempt (an error, see [`Lowering::probe`]; a fold gives up on any
    /// error), else it is built as an automaton from its parts (true).
    fn too_heavy(&self, m: Measure) -> Result<bool> {
        if !self.is_heavy(m) {
            return Ok(false);
        }
        if self.probing || self.fold_limits.is_some() {
            return Err(heavy(m.weight));
        }
        Ok(true)
    }

    /// Which rules are regular (on no reference cycle, referencing only regular rules;
    /// in a Lark grammar, terminals only), and every rule in dependency order (a rule
    /// after the rules it references). A depth-first search with its own stack: reference
    /// chains can be as long as the grammar.
    pub(super) fn regular_order(&self, names: &[&'a str]) -> (HashMap<&'a str, bool>, Vec<&'a str>) {
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
                let ok = (!self.ast.lark_tokens || self.lark_terminals.contains(name) || EmbeddedSchema::is_inner_rule(name))
                    && !self.defs[name].0.iter().any(|e| e.has_perm());
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

    /// The piece or DFA of a regular rule (its definitions are alternatives).
    pub(super) fn rule_reg(&mut self, name: &str) -> Result<Reg> {
        let (defs, pos) = self.defs[name].clone();
        let max_depth = self.limits.max_grammar_nesting as usize;
        if self.ref_depth >= max_depth {
            return Err(Error::LimitExceeded {
                limit: "max_grammar_nesting",
                value: max_depth,
                context: format!("rule `{name}` at {pos}, reached through nested rule references inside one regular piece"),
            });
        }
        self.ref_depth += 1;
        let reg = self.rule_reg_inner(defs, pos);
        self.ref_depth -= 1;
        reg
    }

    /// The alternatives `defs` of a rule defined at `pos`, as one regular form.
    pub(super) fn rule_reg_inner(&mut self, defs: Vec<&Expr>, pos: Pos) -> Result<Reg> {
        let mut parts = Vec::with_capacity(defs.len());
        for e in defs {
            parts.push(self.expr_reg(e)?);
        }
        match parts.len() {
            1 => Ok(parts.pop().unwrap_or(Reg::Hir(Piece::empty()))),
            _ => self.combine(parts, false, pos),
        }
    }

    /// Concatenation (`seq`) or union of regular forms: one piece while every part is a
    /// piece and the whole is not too heavy (see [`Lowering::too_heavy`]), else one DFA
    /// joined from the parts (adjacent pieces joined into one piece first, so that the
    /// regex compiler does what it can).
    pub(super) fn combine(&mut self, parts: Vec<Reg>, seq: bool, pos: Pos) -> Result<Reg> {
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
        let all_pieces: Option<Vec<Piece>> =
            parts.iter().map(|p| if let Reg::Hir(x) = p { Some(x.clone()) } else { None }).collect();
        if let Some(pieces) = &all_pieces {
            let m = Measure::combined(&pieces.iter().map(Piece::measure).collect::<Vec<_>>(), seq);
            if !self.too_heavy(m)? {
                return Ok(Reg::Hir(Piece::combine(pieces, seq)));
            }
        }
        let pieces = self.dfa_parts(parts, seq);
        if pieces.len() == 1 {
            return Ok(pieces.into_iter().next().unwrap_or(Reg::Hir(Piece::empty())));
        }
        let op = if seq { "seq" } else { "alt" };
        let key = format!("{op}({})", pieces.iter().map(Reg::key).collect::<Vec<_>>().join(","));
        self.joinable(&key)?;
        let mut dfas = Vec::with_capacity(pieces.len());
        for p in &pieces {
            let dfa = self.reg_dfa(p, pos);
            dfas.push(self.join_failed(&key, dfa)?);
        }
        let what = format!("the regular expression at {pos}");
        self.joined(key, |lw| {
            let leaves: Vec<DfaExpr<'_>> = dfas.iter().map(|d| DfaExpr::Leaf(d)).collect();
            let e = if seq { DfaExpr::Seq(leaves) } else { DfaExpr::Alt(leaves) };
            Dfa::from_expr(&e, lw.dfa_limits(), &what)
        })
    }

    /// [`Lowering::cached`] for a join that grammar structure can stand in for (a
    /// sequence, union or repetition of automata; see [`Lowering::joinable`]).
    fn joined(&mut self, key: String, build: impl FnOnce(&Self) -> Result<Dfa>) -> Result<Reg> {
        self.joinable(&key)?;
        let built = self.cached(key.clone(), build);
        self.join_failed(&key, built)
    }

    /// Stops a probe at once at a join that went past the DFA limits before (see
    /// [`Lowering::join_failed`]).
    fn joinable(&self, key: &str) -> Result<()> {
        match self.probing && self.fold_limits.is_none() && self.unjoinable.contains(key) {
            true => Err(heavy(0)),
            false => Ok(()),
        }
    }

    /// `built`, the automaton of a join named `key` (or of one of its parts): in a probe,
    /// an automaton past the DFA limits makes the join too heavy (see [`Lowering::probe`]),
    /// so that the rules around it become grammar structure whose parts the parser reads as
    /// separate terminals, instead of a refusal; the join is remembered as such. Outside
    /// probes (an operator's argument or a Lark token must be one automaton) and in folds
    /// (which give up on any error) the limit stays the error.
    fn join_failed<T>(&mut self, key: &str, built: Result<T>) -> Result<T> {
        match built {
            Err(Error::LimitExceeded { limit: "max_dfa_states" | "dfa_size_limit", value, .. })
                if self.probing && self.fold_limits.is_none() =>
            {
                self.unjoinable.insert(key.to_string());
                Err(heavy(value))
            }
            other => other,
        }
    }

    /// The parts of a combination built as a DFA (see [`Lowering::combine`]): runs of
    /// adjacent pieces (any pieces, in a union) joined into one piece while that stays
    /// light enough to keep, DFAs as they are (no part is void).
    fn dfa_parts(&self, parts: Vec<Reg>, seq: bool) -> Vec<Reg> {
        let mut out: Vec<Reg> = Vec::new();
        let mut run: Vec<Piece> = Vec::new();
        let flush = |run: &mut Vec<Piece>, out: &mut Vec<Reg>| match run.len() {
            0 => {}
            1 => out.extend(run.drain(..).map(Reg::Hir)),
            _ => out.push(Reg::Hir(Piece::combine(&std::mem::take(run), seq))),
        };
        let mut run_measures: Vec<Measure> = Vec::new();
        for p in parts {
            match p {
                Reg::Hir(x) => {
                    run_measures.push(x.measure());
                    if !run.is_empty() && self.is_heavy(Measure::combined(&run_measures, seq)) {
                        flush(&mut run, &mut out);
                        run_measures = vec![x.measure()];
                    }
                    run.push(x);
                }
                Reg::Void(_) => {} // removed by the caller
                dfa => {
                    // A union's pieces are all joined (order does not matter there).
                    if seq {
                        flush(&mut run, &mut out);
                        run_measures.clear();
                    }
                    out.push(dfa);
                }
            }
        }
        flush(&mut run, &mut out);
        out
    }

    /// The short key of a front-end DFA term whose own key is `key` (see
    /// `Lowering::dfa_term_keys`).
    fn dfa_term_key(&mut self, key: &str) -> String {
        if let Some(k) = self.dfa_term_keys.get(key) {
            return k.clone();
        }
        let short = format!("@t{}", self.dfa_term_keys.len());
        self.dfa_term_keys.insert(key.to_string(), short.clone());
        short
    }

    /// The piece or DFA of a regular expression (its references are regular rules).
    pub(super) fn expr_reg(&mut self, e: &Expr) -> Result<Reg> {
        Ok(match e {
            Expr::Empty => Reg::Hir(Piece::empty()),
            Expr::Term { term: Term::Regex(src), .. } => match self.void_terms.get(src.as_str()) {
                Some(&v) => Reg::Void(v),
                None => Reg::Hir(self.regex_pieces[src.as_str()].clone()),
            },
            Expr::Term { term: Term::Literal(s), .. } => Reg::Hir(Piece::literal(s)),
            // (A built DFA always matches some string: the constructions refuse an empty one.)
            Expr::Term { term: Term::Dfa(d), .. } => Reg::Dfa { dfa: d.dfa().clone(), key: self.dfa_term_key(d.key()) },
            Expr::Term { term: Term::Hir(h), pos } => {
                let p = Piece::hir_term(h);
                if p.is_void() {
                    return Ok(Reg::Void(self.void(*pos, format!("the regular piece `{}` matches no string", h.key()))));
                }
                Reg::Hir(p)
            }
            Expr::Ref { name, .. } => self.ref_reg(name)?,
            Expr::Seq(items) | Expr::Alt(items) => {
                let parts = self.regs(items)?;
                self.combine(parts, matches!(e, Expr::Seq(_)), e.pos().unwrap_or_default())?
            }
            Expr::Repeat { expr, min, max, pos } => {
                let inner = self.expr_reg(expr)?;
                self.repeat_reg(inner, *min, *max, *pos)?
            }
            Expr::And { exprs, pos } => self.and_reg(exprs, *pos)?,
            Expr::Not { expr, pos } => self.not_reg(expr, *pos)?,
            Expr::Perm { pos, .. } => {
                return Err(grammar_error(
                    *pos,
                    format!("perm! is not regular: it cannot be inside and!, not! or except! {REGULAR_ARGS}"),
                ))
            }
            Expr::Except { expr, pos } => self.except_reg(expr, *pos)?,
        })
    }

    /// The regular forms of `items`, in order.
    fn regs(&mut self, items: &[Expr]) -> Result<Vec<Reg>> {
        items.iter().map(|x| self.expr_reg(x)).collect()
    }

    /// Rule `name`'s regular form (memoized; a fold's attempt, under its smaller limits,
    /// memoizes its own: a rule used twice by each of a chain of rules is built once).
    fn ref_reg(&mut self, name: &str) -> Result<Reg> {
        if let Some(reg) = self.regular.get(name).or_else(|| self.fold_memo.get(name)) {
            return Ok(reg.clone());
        }
        // A rule found too heavy to keep whole is too heavy for a fold's smaller budget.
        if self.fold_limits.is_some() && self.oversized.contains(name) {
            return Err(super::terminals::fold_stopped(FOLD_MAX_STATES));
        }
        let reg = self.rule_reg(name)?;
        if let Some((&key, _)) = self.defs.get_key_value(name) {
            if self.fold_limits.is_some() {
                self.fold_memo.insert(key, reg.clone());
            } else {
                self.regular.insert(key, reg.clone());
            }
        }
        Ok(reg)
    }

    /// `inner{min,max}`: a piece where the inner part is one (and the result is not too
    /// heavy), else a DFA.
    pub(super) fn repeat_reg(&mut self, inner: Reg, min: u32, max: Option<u32>, pos: Pos) -> Result<Reg> {
        let inner = match inner {
            // No repetition of nothing but the empty one.
            Reg::Void(_) if min == 0 => return Ok(Reg::Hir(Piece::empty())),
            Reg::Void(v) => return Ok(Reg::Void(v)),
            Reg::Hir(p) => {
                let r = p.repeat(min, max);
                if !self.too_heavy(r.measure())? {
                    return Ok(Reg::Hir(r));
                }
                Reg::Hir(p)
            }
            dfa => dfa,
        };
        let key = format!("rep{{{min},{max:?}}}({})", inner.key());
        self.joinable(&key)?;
        let dfa = self.reg_dfa(&inner, pos);
        let dfa = self.join_failed(&key, dfa)?;
        let what = format!("the repetition at {pos}");
        let e = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&dfa)), min, max };
        // One pass where the repetition's junction is deterministic, else subset construction.
        self.joined(key, |lw| match dfa.repeat_deterministic(min, max) {
            Some(d) => Ok(d),
            None => Dfa::from_expr(&e, lw.dfa_limits(), &what),
        })
    }

    /// `and!(a, b, ...)`: the product of the arguments' DFAs.
    fn and_reg(&mut self, exprs: &[Expr], pos: Pos) -> Result<Reg> {
        let parts = self.regs(exprs)?;
        if let Some(v) = parts.iter().find_map(|p| if let Reg::Void(v) = p { Some(*v) } else { None }) {
            return Ok(Reg::Void(v));
        }
        let key = format!("and!({})", parts.iter().map(Reg::key).collect::<Vec<_>>().join(","));
        let mut dfas = Vec::with_capacity(parts.len());
        for p in &parts {
            dfas.push(self.reg_dfa(p, pos)?);
        }
        let what = format!("and!(...) at {pos}");
        let built = self.cached(key, |lw| {
            let mut acc = dfas[0].intersect(&dfas[1], lw.dfa_limits(), &what)?;
            for d in &dfas[2..] {
                acc = acc.intersect(d, lw.dfa_limits(), &what)?;
            }
            Ok(acc)
        });
        self.op_result(built, pos, "and!", "no string matches all of its arguments")
    }

    /// `not!(a)`: the complement of the argument within whole UTF-8 characters.
    fn not_reg(&mut self, expr: &Expr, pos: Pos) -> Result<Reg> {
        let inner = self.expr_reg(expr)?;
        let key = format!("not!({})", inner.key());
        if let Reg::Void(_) = inner {
            // Nothing excluded: every string of whole characters.
            return self.cached(key, |_| Ok(Dfa::utf8_any()));
        }
        let dfa = self.reg_dfa(&inner, pos)?;
        let what = format!("not!(...) at {pos}");
        let built = self.cached(key, |lw| dfa.complement(lw.dfa_limits(), &what));
        self.op_result(built, pos, "not!", "its argument matches every string")
    }

    /// `except!(a)`: the strings of whole characters that contain no match of `a`.
    fn except_reg(&mut self, expr: &Expr, pos: Pos) -> Result<Reg> {
        let inner = self.expr_reg(expr)?;
        let key = format!("except!({})", inner.key());
        if let Reg::Void(_) = inner {
            // Nothing to avoid: every string of whole characters.
            return self.cached(key, |_| Ok(Dfa::utf8_any()));
        }
        let what = format!("except!(...) at {pos}");
        let built = match &inner {
            // Not containing a match = the complement of `.* e .*`.
            Reg::Hir(p) => self.cached(key, |lw| {
                let contains = lw.build_piece(&p.contained(), lw.dfa_limits(), &what)?;
                contains.complement(lw.dfa_limits(), &what)
            }),
            Reg::Dfa { dfa, .. } => self.cached(key, |lw| {
                let any = Dfa::utf8_any();
                let contains = DfaExpr::Seq(vec![DfaExpr::Leaf(&any), DfaExpr::Leaf(dfa), DfaExpr::Leaf(&any)]);
                Dfa::from_expr(&contains, lw.dfa_limits(), &what)?.complement(lw.dfa_limits(), &what)
            }),
            Reg::Void(v) => Ok(Reg::Void(*v)), // handled above
        };
        self.op_result(built, pos, "except!", "its argument matches the empty string")
    }

    /// Can `e` be one DFA (it references no recursive rule)?
    pub(super) fn is_regular_expr(&self, e: &Expr) -> bool {
        match e {
            Expr::Empty | Expr::Term { .. } => true,
            Expr::Ref { name, .. } => self.regular_rules.contains(name.as_str()),
            Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => v.iter().all(|x| self.is_regular_expr(x)),
            Expr::Repeat { expr, .. } | Expr::Except { expr, .. } | Expr::Not { expr, .. } => self.is_regular_expr(expr),
            Expr::Perm { .. } => false,
        }
    }

    /// Is `e` one regex (regular, with no boolean operator, also in the rules it uses)?
    pub(super) fn is_pure(&self, e: &Expr) -> bool {
        match e {
            Expr::Empty | Expr::Term { .. } => true,
            Expr::Ref { name, .. } => match self.regular.get(name.as_str()) {
                Some(Reg::Hir(_) | Reg::Void(_)) => true,
                // A Lark token too heavy to keep as a piece is still one token.
                Some(Reg::Dfa { .. }) => self.lark_terminals.contains(name.as_str()),
                None => false,
            },
            Expr::Seq(v) | Expr::Alt(v) => v.iter().all(|x| self.is_pure(x)),
            Expr::Repeat { expr, .. } => self.is_pure(expr),
            Expr::And { .. } | Expr::Not { .. } | Expr::Except { .. } | Expr::Perm { .. } => false,
        }
    }

    /// Does `e` become one piece terminal? It must be pure (see [`Lowering::is_pure`]) and,
    /// unless it is a single term, small: a large regular structure (a JSON object with
    /// many properties, say) determinized as one regex costs far more to build than the
    /// parser reading its pieces as separate terminals (which are then joined where that
    /// is cheap, see [`merge_terminal_runs`]).
    pub(super) fn is_terminal_piece(&mut self, e: &Expr) -> Result<bool> {
        if !self.is_pure(e) {
            return Ok(false);
        }
        if matches!(e, Expr::Empty | Expr::Term { .. }) {
            return Ok(true);
        }
        // In a Lark grammar a token is a string, a regex or a TERMINAL, however large (%ignore
        // text may follow each token, so one must not be split), and a group of tokens
        // inside a rule is several tokens (ignored text may come between them).
        if self.lark_rule {
            return Ok(matches!(e, Expr::Ref { .. }));
        }
        // With no room at all, no need to build the piece.
        if self.options.max_terminal_source == 0 {
            return Ok(false);
        }
        Ok(match self.probe(|lw| lw.expr_reg(e))? {
            None => false, // too heavy to keep whole, so too heavy for one terminal
            Some(Reg::Hir(p)) => self.fits_one_terminal(p.measure()),
            Some(Reg::Dfa { .. } | Reg::Void(_)) => true,
        })
    }

    /// Is a piece measuring `m` small enough to be determinized as one terminal? It must
    /// weigh at most `LowerOptions::max_terminal_source`, nest at most [`MAX_PIECE_DEPTH`]
    /// deep and have no count of [`LARGE_COUNT`] or more (such a piece has at least that
    /// many DFA states per state of what it repeats, so it stays a terminal of its own
    /// instead of being copied into a larger one).
    pub(super) fn fits_one_terminal(&self, m: Measure) -> bool {
        m.weight <= self.options.max_terminal_source && m.depth <= MAX_PIECE_DEPTH && m.largest_count < LARGE_COUNT
    }

    /// The operator with a non-regular argument at or inside `e`, innermost first.
    pub(super) fn irregular_op<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
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
    pub(super) fn irregular_error(&self, e: &Expr) -> Error {
        let e = self.irregular_op(e).unwrap_or(e);
        let (pos, message) = match e {
            Expr::And { pos, .. } => (*pos, format!("and! needs regular arguments {REGULAR_ARGS}")),
            Expr::Not { pos, .. } => (*pos, format!("not! needs a regular argument {REGULAR_ARGS}")),
            Expr::Except { pos, .. } => (*pos, format!("except! needs a regular argument {REGULAR_ARGS}")),
            _ => (e.pos().unwrap_or_default(), "a boolean operator needs a regular argument".to_string()),
        };
        grammar_error(pos, message)
    }
}

/// A counted repetition of at least this many stays out of larger terminals (see
/// [`Lowering::fits_one_terminal`]).
pub(super) const LARGE_COUNT: u32 = 64;

pub(super) fn collect_refs<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Ref { name, pos } => out.push((name.as_str(), *pos)),
        _ => e.children().for_each(|x| collect_refs(x, out)),
    }
}

pub(super) fn collect_regex_terms<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Term { term: Term::Regex(src), pos } => out.push((src.as_str(), *pos)),
        _ => e.children().for_each(|x| collect_regex_terms(x, out)),
    }
}

/// Does `e` repeat an automaton built by a front-end ([`Term::Dfa`]), or offer it as one
/// alternative among others? Joined as one automaton, such a rule copies its states per
/// alternative and repetition; a plain sequence around it (a string's quotes) is one
/// concatenation either way.
fn joins_an_automaton(e: &Expr) -> bool {
    let holds = |x: &Expr| largest_automaton(x) > 0;
    match e {
        Expr::Alt(v) => v.len() > 1 && v.iter().any(holds),
        Expr::Repeat { expr, .. } => holds(expr),
        Expr::Perm { .. } => holds(e),
        _ => e.children().any(joins_an_automaton),
    }
}

/// The most states of an automaton built by a front-end ([`Term::Dfa`]) in `e` (0: none).
fn largest_automaton(e: &Expr) -> usize {
    match e {
        Expr::Term { term: Term::Dfa(d), .. } => d.dfa().num_states(),
        _ => e.children().map(largest_automaton).max().unwrap_or(0),
    }
}
