//! A regular language the translator computes with: a HIR (patterns, number bounds,
//! literals), a fixed pattern of the translator's own (Python `re` text, looked up in the
//! prebuilt table, such as a `format`), or a built automaton (intersections and
//! complements). [`LangCache::bool_terms`] intersects languages and removes others, and tells when
//! nothing is left; [`finite_strings`] lists a small finite language.

use crate::util::hash::HashMap;
use crate::util::state_map::StateMap;
use std::sync::Arc;

use regex_syntax::hir::Hir;

use super::expr;
use crate::automata::{Dfa, DfaExpr, DEAD};
use crate::error::{Error, Result};
use crate::frontend::ast::{Expr, HirTerm};
use crate::frontend::regex::{self, prebuilt};
use crate::limits::Limits;

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) enum Lang {
    /// A HIR, with its canonical name.
    Hir(HirTerm),
    /// A fixed pattern (Python `re` syntax).
    Regex(String),
    /// A built automaton, with its canonical name.
    Dfa(Arc<Dfa>, String),
}

impl Lang {
    /// The language of `hir`.
    pub fn hir(hir: Hir) -> Lang {
        Lang::Hir(HirTerm::new(hir))
    }

    /// The literal `text`.
    pub fn literal(text: &str) -> Lang {
        Lang::hir(Hir::literal(text.as_bytes()))
    }

    /// A canonical name: equal names, equal languages.
    pub fn key(&self) -> String {
        match self {
            Lang::Hir(h) => format!("hir:{}", h.key()),
            Lang::Regex(src) => format!("re:{src}"),
            Lang::Dfa(_, key) => key.clone(),
        }
    }

    /// The automaton (built now unless it is one; a fixed pattern from the prebuilt table
    /// when it is there).
    pub fn dfa(&self, limits: &Limits) -> Result<Arc<Dfa>> {
        Ok(match self {
            Lang::Hir(h) => Arc::new(regex::compile_hir(h.hir(), "a JSON Schema piece", limits)?),
            Lang::Regex(src) => match prebuilt::lookup(src, limits) {
                Some(d) => Arc::new(d),
                None => Arc::new(regex::compile(src, limits)?),
            },
            Lang::Dfa(d, _) => d.clone(),
        })
    }

    /// The grammar expression.
    pub fn into_expr(self) -> Expr {
        match self {
            Lang::Hir(h) => Expr::Term { term: crate::frontend::ast::Term::Hir(h), pos: expr::AT },
            Lang::Regex(src) => expr::regex(&src),
            Lang::Dfa(d, key) => expr::dfa(d, key),
        }
    }
}

/// Automata and combinations a translation built, by canonical name: a schema repeats
/// its constraints (one `pattern` on fifty properties), and each is built once.
#[derive(Debug, Default)]
pub(crate) struct LangCache {
    dfas: HashMap<String, Arc<Dfa>>,
    combined: HashMap<String, Option<Lang>>,
}

impl LangCache {
    /// `lang` under a short name of its own if its canonical name is long. A language
    /// built step by step from others (an object's classes of keys, split by one pattern
    /// after another and merged) would otherwise carry a name that doubles at each step.
    /// The name is unique in the process, not only in this translation: grammars lowered
    /// together (a union, a structural tag's tools) take two terms of one name for one
    /// language.
    pub fn short_name(&mut self, lang: Lang) -> Lang {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        match lang {
            Lang::Dfa(d, key) if key.len() > 256 => {
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Lang::Dfa(d, format!("lang#{n}"))
            }
            other => other,
        }
    }

    /// `unit{0,max}` (a JSON string character, say) as a counted region however short
    /// the bound (see [`Dfa::repeat_counted_region`]): the count that a pattern or format
    /// is intersected with. Named as the same language written as a HIR.
    pub fn counted_region(&mut self, unit: Hir, max: u32, limits: &Limits) -> Result<Lang> {
        let what = "a string of bounded length";
        let sub = Box::new(unit.clone());
        let hir = Hir::repetition(regex_syntax::hir::Repetition { min: 0, max: Some(max), greedy: true, sub });
        let key = Lang::hir(hir.clone()).key();
        if let Some(d) = self.dfas.get(&key) {
            return Ok(Lang::Dfa(d.clone(), key));
        }
        let unit_dfa = regex::compile_hir(&unit, what, limits)?;
        let d = match unit_dfa.repeat_counted_region(0, Some(max), limits, what)? {
            Some(d) => Arc::new(d),
            // (A unit that is no prefix-free code is counted by the regex compiler.)
            None => Arc::new(regex::compile_hir(&hir, what, limits)?),
        };
        self.dfas.insert(key.clone(), d.clone());
        Ok(Lang::Dfa(d, key))
    }

    /// [`Lang::dfa`], built once per name.
    pub fn dfa(&mut self, lang: &Lang, limits: &Limits) -> Result<Arc<Dfa>> {
        if let Lang::Dfa(d, _) = lang {
            return Ok(d.clone());
        }
        let key = lang.key();
        if let Some(d) = self.dfas.get(&key) {
            return Ok(d.clone());
        }
        let d = lang.dfa(limits)?;
        self.dfas.insert(key, d.clone());
        Ok(d)
    }

    /// The strings of every one of `terms` and none of `negs`: the one term itself when
    /// there is nothing to combine, else their automaton; None when no string is left.
    /// Built once per combination.
    pub fn bool_terms(&mut self, terms: Vec<Lang>, negs: Vec<Lang>, limits: &Limits) -> Result<Option<Lang>> {
        if negs.is_empty() && terms.len() == 1 {
            return Ok(terms.into_iter().next());
        }
        let key = combination_key(&terms, &negs);
        if let Some(found) = self.combined.get(&key) {
            return Ok(found.clone());
        }
        let dfas = terms.iter().map(|t| self.dfa(t, limits)).collect::<Result<Vec<_>>>()?;
        let neg_dfas = negs.iter().map(|t| self.dfa(t, limits)).collect::<Result<Vec<_>>>()?;
        let built = combine(&dfas, &neg_dfas, limits)?.map(|d| Lang::Dfa(d, key.clone()));
        self.combined.insert(key, built.clone());
        Ok(built)
    }
}

/// The canonical name of a combination.
fn combination_key(terms: &[Lang], negs: &[Lang]) -> String {
    format!(
        "and!({};not!({}))",
        terms.iter().map(Lang::key).collect::<Vec<_>>().join(","),
        negs.iter().map(Lang::key).collect::<Vec<_>>().join("|")
    )
}

/// The intersection of `terms` minus the union of `negs` (at least one of either); None
/// when empty.
fn combine(terms: &[Arc<Dfa>], negs: &[Arc<Dfa>], limits: &Limits) -> Result<Option<Arc<Dfa>>> {
    let what = "a JSON Schema constraint";
    let empty = |r: Result<Dfa>| match r {
        Err(Error::EmptyLanguage { .. }) => Ok(None),
        other => other.map(Some),
    };
    let mut acc: Option<Arc<Dfa>> = None;
    for d in terms {
        let d = d.clone();
        acc = Some(match acc {
            None => d,
            Some(a) => match empty(a.intersect(&d, limits, what))? {
                Some(x) => Arc::new(x),
                None => return Ok(None),
            },
        });
    }
    if let Some(mut a) = acc.clone() {
        // Each excluded language removed by one product (no union, no complement).
        for n in negs {
            a = match empty(a.minus(n, limits, what))? {
                Some(x) => Arc::new(x),
                None => return Ok(None),
            };
        }
        acc = Some(a);
    } else if !negs.is_empty() {
        let leaves: Vec<DfaExpr<'_>> = negs.iter().map(|d| DfaExpr::Leaf(d)).collect();
        let union = Dfa::from_expr(&DfaExpr::Alt(leaves), limits, what)?;
        let Some(outside) = empty(union.complement(limits, what))? else { return Ok(None) };
        acc = Some(Arc::new(outside));
    }
    // A short bound, a region only to meet the others as one block of rows, is written
    // out now (see `Dfa::short_count_written_out`).
    let acc = match acc {
        Some(d) => Some(d.short_count_written_out(limits)?.map(Arc::new).unwrap_or(d)),
        None => None,
    };
    // Products of products grow; the terminal the grammar keeps is the minimal one. One
    // product of two minimal automata (any key but the named ones) is left as it is: its
    // few redundant states cost less than minimizing every object's key class. A counted
    // region (a bounded string with a pattern) stays one: written out, it is its count
    // times larger.
    let minimize = |d: &Dfa| terms.len() + negs.len() > 2 && !d.has_counted_region();
    Ok(acc.map(|d| if minimize(&d) { Arc::new(d.minimized()) } else { d }))
}

/// States past which [`finite_strings`] gives up (more than any automaton of the
/// default `Limits.max_dfa_states` stores): only a long counted region (a bounded
/// string) has more, whose language is finite but not few.
const FINITE_MOST_STATES: usize = 1 << 18;

/// The strings of `dfa`, sorted, when there are at most `limit` of them (None for an
/// infinite or larger language). The DFA is pruned (every state can still accept), so
/// its language is infinite exactly when a cycle is reachable: that is decided first, and
/// the strings are counted before any is spelled out. A search that meets more than
/// [`FINITE_MOST_STATES`] states answers None too.
pub(crate) fn finite_strings(dfa: &Dfa, limit: usize) -> Result<Option<Vec<Vec<u8>>>> {
    let n = dfa.num_states();
    // Each state's moves, one byte per distinct target (the byte classes, found anew).
    let moves = |q: u32| -> Vec<(u8, u32)> {
        let mut out: Vec<(u8, u32)> = Vec::new();
        for b in 0..=255u8 {
            let t = dfa.next(q, b);
            if t != DEAD {
                out.push((b, t));
            }
        }
        out
    };
    // Depth-first, with its own stack: the reachable states in post-order, or a cycle.
    let mut state = StateMap::new(n, 0u8); // 0 new, 1 on the path, 2 done
    let mut order: Vec<u32> = Vec::new();
    let mut met = 1usize;
    // Frames: (state, its moves, the next move to follow).
    type Frame = (u32, Vec<(u8, u32)>, usize);
    let mut stack: Vec<Frame> = vec![(dfa.start(), moves(dfa.start()), 0)];
    state.set(dfa.start(), 1);
    while let Some((q, out, i)) = stack.last_mut() {
        crate::util::interrupt::check()?;
        if let Some(&(_, t)) = out.get(*i) {
            *i += 1;
            match state.get(t) {
                1 => return Ok(None), // a cycle: infinitely many strings
                0 => {
                    met += 1;
                    if met > FINITE_MOST_STATES {
                        return Ok(None);
                    }
                    state.set(t, 1);
                    let m = moves(t);
                    stack.push((t, m, 0));
                }
                _ => {}
            }
        } else {
            state.set(*q, 2);
            order.push(*q);
            stack.pop();
        }
    }
    // Strings from each state (saturating past the limit), successors first.
    let mut count: StateMap<usize> = StateMap::new(n, 0);
    for &q in &order {
        let mut c = usize::from(dfa.is_accepting(q));
        for (_, t) in moves(q) {
            c = c.saturating_add(count.get(t));
        }
        count.set(q, c.min(limit + 1));
    }
    if count.get(dfa.start()) > limit {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(count.get(dfa.start()));
    spell(dfa, dfa.start(), &mut Vec::new(), &mut out);
    out.sort();
    Ok(Some(out))
}

/// Every string from state `q` of an acyclic DFA, after `prefix`.
fn spell(dfa: &Dfa, q: u32, prefix: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
    if dfa.is_accepting(q) {
        out.push(prefix.clone());
    }
    for b in 0..=255u8 {
        let t = dfa.next(q, b);
        if t != DEAD {
            prefix.push(b);
            spell(dfa, t, prefix, out);
            prefix.pop();
        }
    }
}
