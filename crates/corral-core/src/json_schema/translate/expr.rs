//! Building the grammar's expressions: literals, HIR and DFA pieces, sequences,
//! alternatives (where `None` is "no value", dropped), repetitions and rule references.

use std::sync::Arc;

use regex_syntax::hir::Hir;

use crate::automata::Dfa;
use crate::frontend::ast::{DfaTerm, Expr, HirTerm, Pos, Term};

/// Where every generated expression is (the grammar has no text to point into; errors
/// name JSON pointers instead).
pub(crate) const AT: Pos = Pos { line: 1, col: 1 };

/// The literal `text`.
pub(crate) fn lit(text: &str) -> Expr {
    Expr::Term { term: Term::Literal(text.to_string()), pos: AT }
}

/// A regex in Python `re` syntax (fixed patterns of the translator only, never a
/// schema's text).
pub(crate) fn regex(src: &str) -> Expr {
    Expr::Term { term: Term::Regex(src.to_string()), pos: AT }
}

/// A regular language given as a HIR.
pub(crate) fn hir(h: Hir) -> Expr {
    Expr::Term { term: Term::Hir(HirTerm::new(h)), pos: AT }
}

/// A built automaton, under its canonical name.
pub(crate) fn dfa(d: Arc<Dfa>, key: String) -> Expr {
    Expr::Term { term: Term::Dfa(DfaTerm::new(d, key)), pos: AT }
}

/// A reference to rule `name`.
pub(crate) fn rule(name: &str) -> Expr {
    Expr::Ref { name: name.to_string(), pos: AT }
}

/// The concatenation of `parts` (empty ones left out; one part stands alone).
pub(crate) fn seq(parts: Vec<Expr>) -> Expr {
    let mut parts: Vec<Expr> = parts.into_iter().filter(|p| !matches!(p, Expr::Empty)).collect();
    match parts.len() {
        0 => Expr::Empty,
        1 => parts.pop().unwrap_or(Expr::Empty),
        _ => Expr::Seq(parts),
    }
}

/// The union of the parts that allow some value; None when none does.
pub(crate) fn alt(parts: Vec<Option<Expr>>) -> Option<Expr> {
    let mut parts: Vec<Expr> = parts.into_iter().flatten().collect();
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Expr::Alt(parts)),
    }
}

/// `e{min,max}` (`max` None: unbounded); `e{1}` is `e`.
pub(crate) fn repeat(e: Expr, min: u32, max: Option<u32>) -> Expr {
    if (min, max) == (1, Some(1)) {
        return e;
    }
    Expr::Repeat { expr: Box::new(e), min, max, pos: AT }
}

/// `e?`.
pub(crate) fn opt(e: Expr) -> Expr {
    repeat(e, 0, Some(1))
}
