//! Union, concatenation and repetition of normalized grammars: one [`Cfg`] whose language
//! is the union, or the concatenation in order, of the parts' languages, or a part's
//! language repeated a number of times.
//!
//! The parts are already lowered, so nothing is lowered again: their nonterminals,
//! terminals and `perm!` lists are copied side by side (renumbered), and a new start rule
//! joins them. The result keeps the invariants of a lowered grammar: no ε-production (a
//! part that accepts "" is made optional where it is used), no unit rule (where a part
//! stands alone its start's productions are copied instead of referenced), and a start
//! that no right-hand side uses (a start that is a `perm!` list, as a JSON region's is,
//! is referenced: its productions are the list's). When every part is regular, the joined automaton is built
//! too, within the lowering's folding budget, so that a union of regexes is still matched
//! by the DFA engine.

use std::sync::Arc;

use super::assemble::build_cfg;
use super::regular::FOLD_MAX_STATES;
use super::rules::Alts;
use super::{Cfg, Sym, Terminal};
use crate::automata::{Dfa, DfaExpr};
use crate::error::{Error, Result};
use crate::frontend::ast::Distinct;
use crate::grammar::perm::Perm;
use crate::limits::Limits;

/// How the parts are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Any one of the parts.
    Union,
    /// All the parts, one after the other, in order.
    Concat,
}

impl Join {
    fn word(self) -> &'static str {
        match self {
            Join::Union => "union",
            Join::Concat => "concatenation",
        }
    }
}

/// The parts copied side by side: every nonterminal's alternatives, the terminals and the
/// lists, renumbered; `starts[i]` is part `i`'s start.
struct SideBySide {
    names: Vec<String>,
    bnf: Vec<Alts>,
    terminals: Vec<Terminal>,
    perms: Vec<Perm>,
    starts: Vec<u32>,
    warnings: Vec<String>,
}

impl SideBySide {
    /// What stands for a part whose start is `st` where it stands alone: its start's
    /// productions, or, for a start that is a `perm!` list (a JSON region), the list
    /// itself (its productions belong to it).
    fn productions_of_start(&self, st: u32) -> Alts {
        match self.perms.iter().any(|p| p.list == st) {
            true => vec![vec![Sym::n(st)]],
            false => self.bnf[st as usize].clone(),
        }
    }
}

/// `part` as one JSON region (a `%json` in a grammar): its start is the one entry of a
/// `perm!` list marked [`Distinct::Json`], so that the check of distinct object keys,
/// which reads the output as JSON, reads only this part so, where it is joined with text.
pub fn json_region(part: &Cfg, limits: &Limits) -> Result<Cfg> {
    let mut s = side_by_side(&[part], limits)?;
    let st = s.starts[0];
    let list = s.names.len() as u32;
    s.names.push(format!("{}#json", s.names[st as usize]));
    s.bnf.push(vec![vec![Sym::n(st)]]);
    s.perms.push(Perm {
        list,
        sep: None,
        entries: vec![Sym::n(st)],
        required: vec![true],
        repeat: vec![false],
        distinct: vec![Distinct::Json],
        min: 1,
        max: Some(1),
        prod_entry: vec![0],
    });
    let mut cfg = build_cfg(s.names, s.bnf, s.terminals, list, part.accepts_empty, s.warnings, s.perms);
    cfg.tokens = part.tokens.clone();
    Ok(cfg)
}

fn side_by_side(parts: &[&Cfg], limits: &Limits) -> Result<SideBySide> {
    let mut out = SideBySide {
        names: Vec::new(),
        bnf: Vec::new(),
        terminals: Vec::new(),
        perms: Vec::new(),
        starts: Vec::new(),
        warnings: Vec::new(),
    };
    let mut same_terminals = SameTerminals::default();
    for &part in parts {
        // A regular part joins as one terminal, its automaton: the lexer then reads it in
        // one walk, where its pieces would each end (and start the next) at every byte
        // (free text before a tool call's marker: every position).
        let folded = match &part.regular {
            Some(dfa) if part.nonterminals.len() > 1 || part.terminals.len() > 1 => {
                let mut one = regular_cfg(dfa.clone(), &part.nonterminals[part.start as usize], limits)?;
                one.warnings = part.warnings.clone();
                Some(one)
            }
            _ => None,
        };
        let cfg = folded.as_ref().unwrap_or(part);
        let nt0 = out.names.len() as u32;
        let term_ids: Vec<u32> = cfg.terminals.iter().map(|t| same_terminals.id(&mut out.terminals, t)).collect();
        let shift = |s: Sym| if s.is_terminal() { Sym::t(term_ids[s.index() as usize]) } else { Sym::n(s.index() + nt0) };
        for (n, name) in cfg.nonterminals.iter().enumerate() {
            out.names.push(name.clone());
            let alts = cfg.productions_of[n].iter().map(|&p| cfg.productions[p as usize].rhs.iter().map(|&s| shift(s)).collect());
            out.bnf.push(alts.collect());
        }
        out.perms.extend(cfg.perms.iter().map(|p| Perm {
            list: p.list + nt0,
            sep: p.sep.map(shift),
            entries: p.entries.iter().map(|&s| shift(s)).collect(),
            ..p.clone()
        }));
        out.starts.push(cfg.start + nt0);
        out.warnings.extend(cfg.warnings.iter().cloned());
    }
    Ok(out)
}

/// The terminals of joined parts, each automaton once: the parts of a structural tag are
/// lowered one by one, so each tool's grammar brings its own copy of the terminals they
/// share (a string with `maxLength: 64`, the marker that closes a parameter). One terminal
/// per automaton lets the masks computed for one tool's string serve every other's.
#[derive(Default)]
struct SameTerminals {
    /// Terminal ids by a hash of (automaton, token budget).
    by_hash: crate::util::hash::FastMap<u64, Vec<u32>>,
}

impl SameTerminals {
    /// The id of `t` among `terminals`: an equal one's (same automaton and token budget),
    /// or a new one.
    fn id(&mut self, terminals: &mut Vec<Terminal>, t: &Terminal) -> u32 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::util::hash::IntHasher::default();
        (&*t.dfa, t.token_budget).hash(&mut h);
        let ids = self.by_hash.entry(h.finish()).or_default();
        let same = |u: &Terminal| u.token_budget == t.token_budget && (Arc::ptr_eq(&u.dfa, &t.dfa) || u.dfa == t.dfa);
        if let Some(&id) = ids.iter().find(|&&id| same(&terminals[id as usize])) {
            return id;
        }
        let id = terminals.len() as u32;
        terminals.push(t.clone());
        ids.push(id);
        id
    }
}

/// The union or concatenation of `parts` (at least one), as one normalized grammar.
pub fn compose(parts: &[&Cfg], join: Join, limits: &Limits) -> Result<Cfg> {
    if parts.is_empty() {
        return Err(Error::InvalidArgument(format!("a {} needs at least one grammar", join.word())));
    }
    let mut s = side_by_side(parts, limits)?;
    let start = s.names.len() as u32;
    s.names.push(format!("{}#start", join.word()));
    s.bnf.push(Vec::new());
    let nonempty: Vec<bool> = s.starts.iter().map(|&st| !s.bnf[st as usize].is_empty()).collect();
    let accepts_empty = match join {
        Join::Union => parts.iter().any(|c| c.accepts_empty),
        Join::Concat => parts.iter().all(|c| c.accepts_empty),
    };
    let alts = match join {
        // Each part's start productions, copied (a reference would be a unit rule).
        Join::Union => s.starts.iter().flat_map(|&st| s.productions_of_start(st)).collect(),
        Join::Concat => concat_alts(&mut s, parts, &nonempty),
    };
    s.bnf[start as usize] = alts;
    dedup_alts(&mut s.bnf[start as usize]);
    if s.bnf[start as usize].is_empty() && !accepts_empty {
        return Err(Error::InvalidArgument(format!("the {} matches no string", join.word())));
    }
    let regular = joined_dfa(parts, join, limits)?;
    let mut cfg = build_cfg(s.names, s.bnf, s.terminals, start, accepts_empty, s.warnings, s.perms);
    cfg.regular = regular;
    parts.iter().for_each(|p| cfg.tokens.extend(&p.tokens));
    Ok(cfg)
}

/// The start's alternatives for a concatenation: suffix rules `R_k` (the parts from `k`
/// on, without ""), built from the last part back, where a part that accepts "" may be
/// left out and a part left alone is written as its productions.
fn concat_alts(s: &mut SideBySide, parts: &[&Cfg], nonempty: &[bool]) -> Alts {
    // `next`: the alternatives of R_{k+1} and the nonterminal that holds them, if any.
    let mut next: Option<(Alts, u32)> = None;
    let mut rest_nullable = true;
    for k in (0..parts.len()).rev() {
        let st = s.starts[k];
        let mut alts: Alts = Vec::new();
        if nonempty[k] {
            if let Some((_, r)) = &next {
                alts.push(vec![Sym::n(st), Sym::n(*r)]);
            }
            if rest_nullable {
                alts.extend(s.productions_of_start(st));
            }
        }
        if parts[k].accepts_empty {
            if let Some((rest, _)) = &next {
                alts.extend(rest.iter().cloned());
            }
        }
        rest_nullable &= parts[k].accepts_empty;
        dedup_alts(&mut alts);
        if alts.is_empty() {
            // Parts that match only "" so far: nothing to hold.
            next = None;
            continue;
        }
        let r = s.names.len() as u32;
        s.names.push(format!("concatenation#{k}"));
        s.bnf.push(alts.clone());
        next = Some((alts, r));
    }
    // R_0 becomes the start itself (its holder is left unused and is dropped).
    next.map(|(alts, _)| alts).unwrap_or_default()
}

/// `part` repeated `min` to `max` times (`max` None: no bound), as one normalized grammar.
///
/// Only the part's non-empty strings `L'` are counted (a part that also matches "" makes
/// every count from 0 possible): the result is `L'` written `lo` times (`lo` = `min`, or 0
/// when the part matches ""), then up to `max - lo` more (a chain of suffix rules `O_j`:
/// one to `j` more), or any number more (one left-recursive rule). One copy of the part
/// serves every repetition. The counts are bounded by `limits.max_grammar_productions`.
pub fn repeat(part: &Cfg, min: u32, max: Option<u32>, limits: &Limits) -> Result<Cfg> {
    if max.is_some_and(|m| m < min) {
        return Err(Error::InvalidArgument(format!("a repetition's max ({}) is below its min ({min})", max.unwrap_or(0))));
    }
    let bound = max.unwrap_or(min) as usize;
    if bound > limits.max_grammar_productions {
        return Err(super::too_many(limits, &format!("a grammar repeated {bound} times")));
    }
    let mut s = side_by_side(&[part], limits)?;
    let g = s.starts[0];
    let body = s.bnf[g as usize].clone();
    let lo = if part.accepts_empty { 0 } else { min as usize };
    let accepts_empty = lo == 0;
    // The optional tail: any number more (unbounded), or up to `max - lo` more.
    let more = match max {
        _ if body.is_empty() => None,
        None => {
            let l = s.names.len() as u32;
            s.names.push("repeat#more".into());
            let mut alts = body.clone();
            alts.push(vec![Sym::n(l), Sym::n(g)]);
            s.bnf.push(alts);
            Some(l)
        }
        Some(m) => {
            let mut prev: Option<u32> = None;
            for j in 0..(m as usize).saturating_sub(lo) {
                let o = s.names.len() as u32;
                s.names.push(format!("repeat#more{}", j + 1));
                let mut alts = body.clone();
                if let Some(p) = prev {
                    alts.push(vec![Sym::n(g), Sym::n(p)]);
                }
                s.bnf.push(alts);
                prev = Some(o);
            }
            prev
        }
    };
    let start = s.names.len() as u32;
    s.names.push("repeat#start".into());
    let mut alts: Alts = Vec::new();
    if !body.is_empty() {
        match lo {
            // No copy required: the tail alone (its productions, copied: no unit rule).
            0 => alts.extend(more.map(|o| s.bnf[o as usize].clone()).unwrap_or_default()),
            // One copy alone is the part's productions.
            1 => alts.extend(body.iter().cloned()),
            _ => alts.push(vec![Sym::n(g); lo]),
        }
        if let (Some(o), true) = (more, lo > 0) {
            let mut seq = vec![Sym::n(g); lo];
            seq.push(Sym::n(o));
            alts.push(seq);
        }
    }
    s.bnf.push(alts);
    let regular = match &part.regular {
        Some(d) => {
            let e = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(d)), min, max };
            let small = Limits { max_dfa_states: FOLD_MAX_STATES.min(limits.max_dfa_states), ..limits.clone() };
            match Dfa::from_expr(&e, &small, "a repetition") {
                Ok(d) => Some(d.minimized()),
                Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => None,
                Err(e) => return Err(e),
            }
        }
        None => None,
    };
    let mut cfg = build_cfg(s.names, s.bnf, s.terminals, start, accepts_empty, s.warnings, s.perms);
    cfg.regular = regular;
    cfg.tokens = part.tokens.clone();
    Ok(cfg)
}

/// Removes repeated alternatives, keeping the first of each.
fn dedup_alts(alts: &mut Alts) {
    let mut seen = crate::util::hash::HashSet::default();
    alts.retain(|a| seen.insert(a.clone()));
}

/// The joined automaton when every part is regular and the result stays within the
/// lowering's folding budget (None otherwise: the grammar is then parsed).
fn joined_dfa(parts: &[&Cfg], join: Join, limits: &Limits) -> Result<Option<Dfa>> {
    let dfas: Option<Vec<&Dfa>> = parts.iter().map(|c| c.regular.as_ref()).collect();
    let Some(dfas) = dfas else { return Ok(None) };
    let leaves: Vec<DfaExpr<'_>> = dfas.into_iter().map(DfaExpr::Leaf).collect();
    let expr = match join {
        Join::Union => DfaExpr::Alt(leaves),
        Join::Concat => DfaExpr::Seq(leaves),
    };
    let small = Limits { max_dfa_states: FOLD_MAX_STATES.min(limits.max_dfa_states), ..limits.clone() };
    match Dfa::from_expr(&expr, &small, join.word()) {
        Ok(d) => Ok(Some(d.minimized())),
        Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A regular language as a grammar of one terminal: the start derives the automaton's
/// non-empty strings, and accepts "" when it does.
pub fn regular_cfg(dfa: Dfa, name: &str, limits: &Limits) -> Result<Cfg> {
    let accepts_empty = dfa.accepts_empty();
    let (mut bnf, mut terminals): (Vec<Alts>, Vec<Terminal>) = (vec![Vec::new()], Vec::new());
    let stripped = if accepts_empty { dfa.without_empty(limits, name) } else { Ok(dfa.clone()) };
    match stripped {
        Ok(t) => {
            terminals.push(Terminal { name: name.to_string(), dfa: std::sync::Arc::new(t.into()), token_budget: None });
            bnf[0].push(vec![Sym::t(0)]);
        }
        // Only "" is matched: no terminal.
        Err(Error::EmptyLanguage { .. }) => {}
        Err(e) => return Err(e),
    }
    let mut cfg = build_cfg(vec![name.to_string()], bnf, terminals, 0, accepts_empty, Vec::new(), Vec::new());
    cfg.regular = Some(dfa);
    Ok(cfg)
}
