//! Which rules and pieces are regular, and their regex source or DFA: a rule not on a
//! reference cycle becomes one terminal; `and!`, `not!` and `except!` become one DFA.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::*;
use crate::automata::{Dfa, DfaExpr};
use crate::error::{Error, Result};
use crate::frontend::ast::{Expr, HirTerm, Pos, Term};
use crate::frontend::regex::{self};
use crate::frontend::scanner::grammar_error;

/// A regular piece of a grammar. Without boolean operators it stays Python regex source
/// (compiled by the regex engine, and mergeable with neighbouring terminals); with them it
/// is a DFA built by corral's own constructions, named by a canonical key (for caching).
#[derive(Debug, Clone)]
pub(super) enum Reg {
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
    pub(super) fn key(&self) -> String {
        match self {
            Reg::Src(src) => format!("{src:?}"),
            Reg::Dfa { key, .. } => key.clone(),
            Reg::Void(_) => "void".to_string(),
        }
    }
}

/// Regex source length (bytes) up to which a regular grammar may be matched as one DFA
/// (see [`WHOLE_MAX_STATES`]). A fold gives up at a piece longer than [`MAX_TERMINAL_SOURCE`]
/// or a counted one of more than [`FOLD_MAX_PIECE_STATES`] states.
pub(super) const WHOLE_MAX_SOURCE: usize = 1_000;

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

/// The regex source of `inner` (already grouped) repeated `{min,max}`.
pub(super) fn repeat_src(inner: &str, min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, Some(1)) => format!("{inner}?"),
        (0, None) => format!("{inner}*"),
        (1, None) => format!("{inner}+"),
        (m, None) => format!("{inner}{{{m},}}"),
        (m, Some(n)) if m == n => format!("{inner}{{{m}}}"),
        (m, Some(n)) => format!("{inner}{{{m},{n}}}"),
    }
}

/// Regex source of a regular rule is kept (so that rules using it can be one regex too)
/// only up to this many times the largest piece a terminal or a whole-grammar DFA is built
/// from; a longer rule is parsed over its parts. Without a cap, a chain of rules that each
/// use the next would hold sources of quadratic total size.
pub(super) const KEPT_SOURCE_FACTOR: usize = 4;

impl<'a> Lowering<'a> {
    /// Marks regular rules: those on no reference cycle whose references are all regular,
    /// and computes each one's regex source or DFA (in dependency order, so each is built
    /// once).
    pub(super) fn find_regular(&mut self) -> Result<()> {
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
    pub(super) fn regular_order(&self, names: &[&'a str]) -> (HashMap<&'a str, bool>, Vec<&'a str>) {
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

    /// The regex source or DFA of a regular rule (its definitions are alternatives).
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
        let reg = self.rule_reg_inner(name, defs, pos);
        self.ref_depth -= 1;
        reg
    }

    pub(super) fn rule_reg_inner(&mut self, name: &str, defs: Vec<&Expr>, pos: Pos) -> Result<Reg> {
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

    /// Concatenation (`seq`) or union of regular pieces: regex source while every piece is
    /// one, else one DFA (adjacent sources joined into one regex first, so that the regex
    /// engine does what it can).
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
    pub(super) fn expr_reg(&mut self, e: &Expr) -> Result<Reg> {
        Ok(match e {
            Expr::Empty => Reg::Src("(?:)".to_string()),
            Expr::Term { term: Term::Regex(src), .. } if self.void_terms.contains_key(src.as_str()) => {
                Reg::Void(self.void_terms[src.as_str()])
            }
            Expr::Term { term: Term::Hir(h), pos } => self.hir_reg(h, *pos)?,
            // (A built DFA always matches some string: the constructions refuse an empty one.)
            Expr::Term { term: Term::Dfa(d), .. } => Reg::Dfa { dfa: d.dfa().clone(), key: format!("dfa({:?})", d.key()) },
            Expr::Term { term, .. } => Reg::Src(term.regex_source().unwrap_or_default()),
            Expr::Ref { name, .. } => match self.ref_reg(name)? {
                Reg::Src(src) => Reg::Src(group(&src)),
                dfa => dfa,
            },
            Expr::Seq(items) | Expr::Alt(items) => {
                let parts = self.regs(items)?;
                self.combine(parts, matches!(e, Expr::Seq(_)), e.pos().unwrap_or_default())?
            }
            Expr::Repeat { expr, min, max, pos } => self.repeat_reg(expr, *min, *max, *pos)?,
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

    /// A term built as a HIR: its DFA (void when it matches no string).
    fn hir_reg(&mut self, h: &HirTerm, pos: Pos) -> Result<Reg> {
        if h.hir().properties().minimum_len().is_none() {
            let v = self.void(pos, format!("the regular piece `{}` matches no string", h.key()));
            return Ok(Reg::Void(v));
        }
        let what = format!("the regular piece at {pos}");
        self.cached(format!("hir({:?})", h.key()), |lw| regex::compile_hir(h.hir(), &what, lw.dfa_limits()))
    }

    /// The regular forms of `items`, in order.
    fn regs(&mut self, items: &[Expr]) -> Result<Vec<Reg>> {
        items.iter().map(|x| self.expr_reg(x)).collect()
    }

    /// Rule `name`'s regular form (memoized, except for a fold's attempt under its smaller
    /// limits).
    fn ref_reg(&mut self, name: &str) -> Result<Reg> {
        if let Some(reg) = self.regular.get(name) {
            return Ok(reg.clone());
        }
        let reg = self.rule_reg(name)?;
        if let (Some((&key, _)), None) = (self.defs.get_key_value(name), &self.fold_limits) {
            self.regular.insert(key, reg.clone());
        }
        Ok(reg)
    }

    /// `expr{min,max}`: regex source where the inner part has one, else a DFA.
    fn repeat_reg(&mut self, expr: &Expr, min: u32, max: Option<u32>, pos: Pos) -> Result<Reg> {
        Ok(match self.expr_reg(expr)? {
            // No repetition of nothing but the empty one.
            Reg::Void(_) if min == 0 => Reg::Src("(?:)".to_string()),
            Reg::Void(v) => Reg::Void(v),
            Reg::Src(src) => Reg::Src(repeat_src(&group(&src), min, max)),
            inner => {
                let key = format!("rep{{{min},{max:?}}}({})", inner.key());
                let dfa = self.reg_dfa(&inner, pos)?;
                let what = format!("the repetition at {pos}");
                let e = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&dfa)), min, max };
                self.cached(key, |lw| Dfa::from_expr(&e, lw.dfa_limits(), &what))?
            }
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
            Reg::Src(src) => self.cached(key, |lw| regex::build_except_dfa(src, lw.dfa_limits(), lw.classes, &what)),
            Reg::Dfa { dfa, .. } => self.cached(key, |lw| {
                // Not containing a match = the complement of `.* e .*`.
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
        if self.ast.lark_tokens {
            return Ok(matches!(e, Expr::Ref { .. }));
        }
        // A pure expression's source is never empty: with no room at all, no need to build it.
        if self.options.max_terminal_source == 0 {
            return Ok(false);
        }
        Ok(match self.expr_reg(e)? {
            Reg::Src(src) => source_weight(&src) <= self.options.max_terminal_source && !has_large_count(&src),
            Reg::Dfa { .. } | Reg::Void(_) => true,
        })
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

/// The size of regex source `src` as a measure of its automaton: its length without the
/// non-capturing groups that lowering wraps around every piece (`(?:` and its `)`, four
/// bytes each), so that how a rule is written (a class in a rule of its own, nested
/// groups) does not decide whether it becomes one terminal. A source nested deeper than
/// [`MAX_TERMINAL_NESTING`] groups (a long chain of rules, each using the next) weighs
/// `usize::MAX`: it stays structure. (Whether a whole grammar becomes one DFA is still
/// decided by its length, [`WHOLE_MAX_SOURCE`], and its states.) (A heuristic on the text: it only chooses a
/// construction, never a language.)
pub(super) fn source_weight(src: &str) -> usize {
    let (mut depth, mut deepest, mut in_class) = (0usize, 0usize, false);
    let mut bytes = src.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => {
                bytes.next();
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' if !in_class => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_TERMINAL_NESTING {
        return usize::MAX;
    }
    src.len().saturating_sub(4 * src.matches("(?:").count())
}

/// Deepest group nesting of a regular rule's source that [`source_weight`] lets become one
/// terminal (real terminals nest a dozen deep; the regex reader refuses past
/// `Limits::regex_nest_limit`).
const MAX_TERMINAL_NESTING: usize = 48;

/// Does regex source `src` contain a counted repetition `{m}` / `{m,n}` with a count of at
/// least 64? Such a piece has at least that many DFA states per state of what it repeats,
/// so it stays a terminal of its own instead of being copied into a larger regex.
/// (A heuristic on the text: an escaped brace or one inside a class only makes a rule
/// parsed as structure, which is always exact.)
pub(super) fn has_large_count(src: &str) -> bool {
    largest_count(src) >= 64
}

/// The largest bound of a counted repetition (`{n}`, `{m,n}`) in regex source `src`.
pub(super) fn largest_count(src: &str) -> u64 {
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

pub(super) fn collect_refs<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Ref { name, pos } => out.push((name.as_str(), *pos)),
        _ => e.children().into_iter().for_each(|x| collect_refs(x, out)),
    }
}

pub(super) fn collect_regex_terms<'e>(e: &'e Expr, out: &mut Vec<(&'e str, Pos)>) {
    match e {
        Expr::Term { term: Term::Regex(src), pos } => out.push((src.as_str(), *pos)),
        _ => e.children().into_iter().for_each(|x| collect_regex_terms(x, out)),
    }
}
