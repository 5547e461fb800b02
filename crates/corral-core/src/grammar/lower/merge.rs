//! Runs of adjacent terminals merged into one (by one-pass concatenation where the
//! junctions are deterministic), and terminals that match the empty string split.

use crate::util::hash::{HashMap, HashMapExt, HashSet};
use std::sync::Arc;

use super::*;
use crate::automata::concat::{ConcatPlan, JoinFacts};
use crate::automata::{Dfa, DfaExpr, LazyDfa};
use crate::error::{Error, Result};
use crate::frontend::ast::Pos;
use crate::limits::Limits;
use crate::util::hash::FastMap;

/// Adjacent terminals are joined into one only while the result stays this small (in
/// DFA states, see [`merge_terminal_runs`]).
pub(super) const MERGE_MAX_STATES: usize = 4_096;

/// A terminal being merged with its neighbours: its DFA (a join is built on first use),
/// the terminal it is (None once merged), name and canonical key (a merged run's names
/// its parts' keys).
#[derive(Clone)]
pub(super) struct RunPart {
    dfa: Arc<LazyDfa>,
    terminal: Option<u32>,
    name: String,
    key: String,
}

/// Replaces runs of adjacent terminals by one terminal (same language, fewer parser
/// steps, and a string's quotes inside its terminal, so that the terminal ends only where
/// the string does). Two terminals are joined by one-pass concatenation where the
/// junction is deterministic, planned now and built the first time the parser reads the
/// join (see [`crate::automata::lazy`]); otherwise by subset construction while the
/// result stays small (see [`merge_pairwise`]), else they stay apart.
pub(super) fn merge_terminal_runs(lw: &mut Lowering<'_>) -> Result<()> {
    let mut merged: FastMap<Vec<Sym>, u32> = FastMap::default();
    // Joins tried so far, by the two parts' keys (a run may repeat one pair many times,
    // as a long string's chunks do).
    let mut joins: HashMap<(String, String), Option<Arc<LazyDfa>>> = HashMap::new();
    for n in 0..lw.bnf.len() {
        for a in 0..lw.bnf[n].len() {
            let seq = lw.bnf[n][a].clone();
            lw.bnf[n][a] = merge_seq(lw, &seq, &mut merged, &mut joins)?;
        }
    }
    Ok(())
}

/// `seq` with each run of adjacent terminals merged (see [`merge_terminal_runs`]).
pub(super) fn merge_seq(
    lw: &mut Lowering<'_>,
    seq: &[Sym],
    merged: &mut FastMap<Vec<Sym>, u32>,
    joins: &mut HashMap<(String, String), Option<Arc<LazyDfa>>>,
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
pub(super) fn merge_run(
    lw: &mut Lowering<'_>,
    run: &[Sym],
    joins: &mut HashMap<(String, String), Option<Arc<LazyDfa>>>,
    out: &mut Vec<Sym>,
) -> Result<()> {
    let part = |lw: &Lowering<'_>, s: Sym| {
        let i = s.index() as usize;
        RunPart {
            dfa: lw.terminals[i].dfa.clone(),
            terminal: Some(s.index()),
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
        let mut states = all[start].dfa.facts().states;
        while end < all.len() && states + all[end].dfa.facts().states <= MERGE_MAX_STATES {
            states += all[end].dfa.facts().states;
            end += 1;
        }
        let segment = &all[start..end];
        start = end;
        if segment.len() > 2 {
            let facts: Vec<JoinFacts> = segment.iter().map(|p| p.dfa.facts()).collect();
            let what = || format!("the terminals {}", segment.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(" "));
            if let Some(plan) = ConcatPlan::new(&facts, lw.limits, &what())? {
                let name = segment.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(" ");
                let key = format!("seq({})", segment.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(","));
                let dfa = Arc::new(LazyDfa::concat(plan, segment.iter().map(|p| p.dfa.clone()).collect()));
                parts.push(RunPart { dfa, terminal: None, name, key });
                continue;
            }
        }
        merge_pairwise(lw, segment, joins, &mut parts)?;
    }
    for p in parts {
        // A merged run is one terminal per key (the same run in many places, say).
        let t = p.terminal.unwrap_or_else(|| lw.lazy_terminal(p.dfa, p.key, &p.name));
        out.push(Sym::t(t));
    }
    Ok(())
}

/// Joins `segment` pair by pair, left to right (a junction that is not deterministic is
/// built by subset construction within the merge budget, else the parts stay apart).
pub(super) fn merge_pairwise(
    lw: &Lowering<'_>,
    segment: &[RunPart],
    joins: &mut HashMap<(String, String), Option<Arc<LazyDfa>>>,
    parts: &mut Vec<RunPart>,
) -> Result<()> {
    let mut cur: Option<RunPart> = None;
    for p in segment {
        let next = p.clone();
        let Some(c) = cur.take() else {
            cur = Some(next);
            continue;
        };
        if c.dfa.facts().states + next.dfa.facts().states > MERGE_MAX_STATES {
            // Joining copies both automata; past this size it costs more than it saves.
            parts.push(c);
            cur = Some(next);
            continue;
        }
        let what = format!("the terminals {} {}", c.name, next.name);
        let pair = (c.key.clone(), next.key.clone());
        let joined = match joins.get(&pair) {
            Some(j) => j.clone(),
            None => {
                let j = match ConcatPlan::new(&[c.dfa.facts(), next.dfa.facts()], lw.limits, &what) {
                    Ok(Some(plan)) => Some(Arc::new(LazyDfa::concat(plan, vec![c.dfa.clone(), next.dfa.clone()]))),
                    // A junction that is not deterministic: subset construction over the two
                    // automata, within the merge budget (else the parser reads them one by one).
                    Ok(None) => {
                        let small = Limits { max_dfa_states: MERGE_MAX_STATES, ..lw.limits.clone() };
                        let e = DfaExpr::Seq(vec![DfaExpr::Leaf(c.dfa.get()), DfaExpr::Leaf(next.dfa.get())]);
                        Dfa::from_expr(&e, &small, &what).ok().map(|d| Arc::new(LazyDfa::from(d)))
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
                cur = Some(RunPart { dfa, terminal: None, name: format!("{} {}", c.name, next.name), key });
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
pub(super) fn split_nullable_terminals(lw: &mut Lowering<'_>) -> Result<()> {
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
                let plus =
                    lw.push_terminal(Terminal { name: name.clone(), dfa: Arc::new(dfa.into()), token_budget: None }, None, key);
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
