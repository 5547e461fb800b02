//! Value rules with equal bodies, written once.
//!
//! The translation gives each subschema (and each context it is written in) a rule of its
//! own, and different subschemas often ask for the same value: every `{"type": "string"}`
//! of a large schema, one `$defs` entry copied under two names, an object reached by two
//! paths whose rules differ only in which copy of an equal member they name. Lowering
//! would build each copy's items and automata again, so equal rules are merged first.
//!
//! Bottom-up, in post-order over the references: a rule whose body, with each rule it
//! names replaced by that rule's representative, is equal to an earlier rule's body is
//! replaced by that rule. Equal bodies modulo equal names make equal languages (the
//! relation is a congruence of the grammar's equations), so the merge is exact. Inside
//! a cycle a rule refers to one not yet finished by its own name: such rules merge only
//! where they are equal as written, which keeps the pass one walk.
//!
//! Bodies are compared by structure, without printing anything: a regex-syntax tree by
//! its own structure, an automaton by the name its builder gave it. Two equal languages
//! written differently stay two rules, which costs time, never a wrong answer.

use std::hash::{BuildHasher, Hash, Hasher};

use regex_syntax::hir::{Class, Hir, HirKind};

use super::Rules;
use crate::frontend::ast::{Expr, Term};
use crate::util::hash::{HashMap, HashMapExt};

/// `rules` with equal ones merged: each kept rule (in order) with the rules it names
/// replaced by their representatives, and the representative of `start`.
pub(super) fn merged(rules: Rules, start: &str) -> (String, Vec<(String, Expr)>) {
    let (rep, refs) = {
        let bodies = Bodies::of(&rules);
        let rep = bodies.representatives();
        let refs: Vec<Vec<Option<usize>>> = bodies
            .refs
            .iter()
            .map(|r| r.iter().map(|n| if let Named::Rule(i) = n { Some(*i) } else { None }).collect())
            .collect();
        (rep, refs)
    };
    // The names rules merged away are written as.
    let written_as: Vec<Option<String>> =
        (0..rules.len()).map(|i| (rep[i] != i).then(|| rules.get_index(rep[i]).map(|(n, _)| n.clone())).flatten()).collect();
    let start = rules.get_index_of(start).and_then(|i| written_as[i].clone()).unwrap_or_else(|| start.to_string());
    let mut kept = Vec::with_capacity(rules.len());
    for (i, (own, body)) in rules.into_iter().enumerate() {
        let Some(mut body) = body.filter(|_| rep[i] == i) else { continue };
        // The references in walk order, as `Bodies::of` found them.
        let mut named = refs[i].iter();
        body.visit_refs_mut(&mut |r| {
            if let Some(Some(to)) = named.next() {
                if let Some(name) = &written_as[*to] {
                    r.clone_from(name);
                }
            }
        });
        kept.push((own, body));
    }
    (start, kept)
}

/// The rules' bodies with what they name read once: per rule, its references in walk
/// order and the hash of its body with every reference left out.
struct Bodies<'r> {
    rules: &'r Rules,
    refs: Vec<Vec<Named<'r>>>,
    shape_hash: Vec<u64>,
}

/// What a reference names: a rule of the pass (by index), or a name that is none of
/// them (the whitespace rule), compared as written.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Named<'r> {
    Rule(usize),
    Other(&'r str),
}

impl<'r> Named<'r> {
    /// The reference with a rule read as its representative.
    fn read(self, rep: &[usize]) -> Named<'r> {
        match self {
            Named::Rule(i) => Named::Rule(rep[i]),
            other => other,
        }
    }
}

impl<'r> Bodies<'r> {
    fn of(rules: &'r Rules) -> Bodies<'r> {
        let state = foldhash::fast::FixedState::with_seed(0x636f_7272_616c);
        let mut refs = Vec::with_capacity(rules.len());
        let mut shape_hash = Vec::with_capacity(rules.len());
        for body in rules.values() {
            let mut named = Vec::new();
            let mut h = state.build_hasher();
            if let Some(body) = body {
                walk(body, &mut h, &mut |name| {
                    named.push(rules.get_index_of(name).map_or(Named::Other(name), Named::Rule));
                });
            }
            refs.push(named);
            shape_hash.push(h.finish());
        }
        Bodies { rules, refs, shape_hash }
    }

    /// For each rule (by index), the index of the rule it is written as: itself, or an
    /// earlier-finished rule with an equal body. Rules without a body are their own.
    fn representatives(&self) -> Vec<usize> {
        let n = self.rules.len();
        let mut rep: Vec<usize> = (0..n).collect();
        let mut seen: HashMap<u64, Vec<usize>> = HashMap::with_capacity(n);
        let mut state = vec![Visit::New; n];
        // Post-order, iteratively: a schema may nest rules deeper than the stack allows.
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if state[root] != Visit::New {
                continue;
            }
            state[root] = Visit::Open;
            stack.push((root, 0));
            while let Some(&mut (rule, ref mut next)) = stack.last_mut() {
                if let Some(&child) = self.refs[rule].get(*next) {
                    *next += 1;
                    if let Named::Rule(child) = child {
                        if state[child] == Visit::New {
                            state[child] = Visit::Open;
                            stack.push((child, 0));
                        }
                    }
                    continue;
                }
                stack.pop();
                state[rule] = Visit::Done;
                if self.rules[rule].is_some() {
                    rep[rule] = self.merge(rule, &rep, &mut seen);
                }
            }
        }
        rep
    }

    /// The representative of `rule`: the first finished rule with an equal body (the
    /// same shape, naming the same representatives in the same places), or itself,
    /// recorded under the body's hash.
    fn merge(&self, rule: usize, rep: &[usize], seen: &mut HashMap<u64, Vec<usize>>) -> usize {
        let mut h = foldhash::fast::FixedState::with_seed(self.shape_hash[rule]).build_hasher();
        let named = |i: usize| self.refs[i].iter().map(|r| r.read(rep));
        named(rule).for_each(|r| r.hash(&mut h));
        let bucket = seen.entry(h.finish()).or_default();
        for &other in bucket.iter() {
            if self.shape_hash[other] == self.shape_hash[rule]
                && named(other).eq(named(rule))
                && same_shape(self.body(other), self.body(rule))
            {
                return other;
            }
        }
        bucket.push(rule);
        rule
    }

    fn body(&self, i: usize) -> &Expr {
        self.rules[i].as_ref().unwrap_or(&Expr::Empty)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    Open,
    Done,
}

/// Hashes `e`'s shape (a reference as a mark only) and gives `named` each reference's
/// name in walk order (the order of [`Expr::visit_refs_mut`]).
fn walk<'e, H: Hasher>(e: &'e Expr, h: &mut H, named: &mut impl FnMut(&'e str)) {
    std::mem::discriminant(e).hash(h);
    match e {
        Expr::Ref { name, .. } => named(name),
        Expr::Term { term, .. } => hash_term(term, h),
        Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => v.len().hash(h),
        Expr::Repeat { min, max, .. } => (min, max).hash(h),
        Expr::Perm { entries, min, max, .. } => {
            (min, max, entries.len()).hash(h);
            entries.iter().for_each(|p| (p.required, p.repeat, p.distinct).hash(h));
        }
        Expr::Empty | Expr::Except { .. } | Expr::Not { .. } => {}
    }
    e.children().for_each(|x| walk(x, h, named));
}

/// Are `a` and `b` equal but for the names they refer to (compared apart)?
fn same_shape(a: &Expr, b: &Expr) -> bool {
    let all = |x: &[Expr], y: &[Expr]| x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_shape(x, y));
    match (a, b) {
        (Expr::Empty, Expr::Empty) | (Expr::Ref { .. }, Expr::Ref { .. }) => true,
        (Expr::Term { term: x, .. }, Expr::Term { term: y, .. }) => same_term(x, y),
        (Expr::Seq(x), Expr::Seq(y)) | (Expr::Alt(x), Expr::Alt(y)) => all(x, y),
        (Expr::And { exprs: x, .. }, Expr::And { exprs: y, .. }) => all(x, y),
        (Expr::Repeat { expr: x, min: m, max: n, .. }, Expr::Repeat { expr: y, min: p, max: q, .. }) => {
            (m, n) == (p, q) && same_shape(x, y)
        }
        (Expr::Except { expr: x, .. }, Expr::Except { expr: y, .. }) | (Expr::Not { expr: x, .. }, Expr::Not { expr: y, .. }) => {
            same_shape(x, y)
        }
        (Expr::Perm { sep: s, entries: x, min: m, max: n, .. }, Expr::Perm { sep: t, entries: y, min: p, max: q, .. }) => {
            (m, n) == (p, q)
                && same_shape(s, t)
                && x.len() == y.len()
                && x.iter().zip(y).all(|(x, y)| {
                    (x.required, x.repeat, x.distinct) == (y.required, y.repeat, y.distinct) && same_shape(&x.expr, &y.expr)
                })
        }
        _ => false,
    }
}

/// A term's hash without printing it (a regex-syntax tree is walked).
fn hash_term<H: Hasher>(t: &Term, h: &mut H) {
    std::mem::discriminant(t).hash(h);
    match t {
        Term::Literal(s) | Term::Regex(s) => s.hash(h),
        Term::Hir(x) => hash_hir(x.hir(), h),
        Term::Dfa(x) => x.key().hash(h),
    }
}

/// Hashes a regex-syntax tree by its structure (the crate's `Hir` has equality, no hash).
fn hash_hir<H: Hasher>(hir: &Hir, h: &mut H) {
    std::mem::discriminant(hir.kind()).hash(h);
    match hir.kind() {
        HirKind::Empty => {}
        HirKind::Literal(l) => l.0.hash(h),
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().for_each(|r| (r.start(), r.end()).hash(h)),
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().for_each(|r| (r.start(), r.end()).hash(h)),
        HirKind::Look(l) => (*l as u32).hash(h),
        HirKind::Repetition(r) => {
            (r.min, r.max, r.greedy).hash(h);
            hash_hir(&r.sub, h);
        }
        HirKind::Capture(c) => hash_hir(&c.sub, h),
        HirKind::Concat(v) | HirKind::Alternation(v) => {
            v.len().hash(h);
            v.iter().for_each(|x| hash_hir(x, h));
        }
    }
}

fn same_term(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::Literal(x), Term::Literal(y)) | (Term::Regex(x), Term::Regex(y)) => x == y,
        // Shared trees are equal without a walk.
        (Term::Hir(x), Term::Hir(y)) => x.address() == y.address() || x.hir() == y.hir(),
        (Term::Dfa(x), Term::Dfa(y)) => x.key() == y.key(),
        _ => false,
    }
}
