//! The normalized grammar assembled: productions numbered, unreachable rules dropped,
//! `perm!` lists given their productions and states.

use crate::util::hash::{HashMap, HashMapExt};
use std::sync::Arc;

use super::*;
use crate::error::Result;
use crate::frontend::scanner::grammar_error;
use crate::grammar::perm::Perm;
use crate::util::hash::FastMap;

/// Keeps what the start reaches and renumbers.
pub(super) fn build_cfg(
    mut names: Vec<String>,
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
            nonterminals.push(std::mem::take(&mut names[i]));
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
        tokens: Default::default(),
    }
}

/// A `perm!` entry or separator may not match the empty string (an entry that can be
/// empty would make "how many entries" ambiguous; write `""` for no separator).
pub(super) fn check_perm_parts(lw: &Lowering<'_>) -> Result<()> {
    let nullable = nullable_rules(&lw.bnf);
    for p in &lw.perms {
        if lw.bnf[p.list as usize].is_empty() || p.counted.is_some() {
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

/// A counted repetition `x{min,max}` whose `x` matches the empty string is `x'{0,max}`,
/// with `x'` the nonempty strings of `x` (what its entry derives once ε-rules are
/// removed): empty items fill the least count.
pub(super) fn relax_nullable_counts(lw: &mut Lowering<'_>) {
    let nullable = nullable_rules(&lw.bnf);
    for p in lw.perms.iter_mut() {
        if let Some(whole) = p.counted.filter(|_| p.min > 0 && nullable[p.entries[0] as usize]) {
            p.min = 0;
            lw.bnf[whole as usize] = vec![vec![], vec![Sym::n(p.list)]];
        }
    }
}

/// Entries and separators with at most this many productions are copied into the list's
/// productions (their terminals then merge: `,"key":` is one terminal, as in a sequence).
pub(super) const MAX_INLINED_ALTERNATIVES: usize = 4;

/// Writes each live `perm!` list's productions (`L → E_i`, `L → L S E_i`, see
/// [`crate::grammar::perm`]; a small entry or separator is copied in, its terminal runs merged) and
/// returns the lists' specs.
pub(super) fn build_perms(lw: &mut Lowering<'_>, bnf: &mut [Alts]) -> Result<Vec<Perm>> {
    let mut out = Vec::new();
    let mut merged: FastMap<Vec<Sym>, u32> = FastMap::default();
    let mut joins: HashMap<(String, String), Option<Arc<crate::automata::LazyDfa>>> = HashMap::new();
    for di in 0..lw.perms.len() {
        let list = lw.perms[di].list;
        if bnf[list as usize].is_empty() {
            continue;
        }
        let d = &lw.perms[di];
        let alive: Vec<bool> = d.entries.iter().map(|&e| !bnf[e as usize].is_empty()).collect();
        let sep_alive = d.sep.is_none_or(|s| !bnf[s as usize].is_empty());
        let (mut perm, _) = d.spec(&alive, sep_alive);
        // A distinct entry stays one symbol: where the parser expects it, an item of a
        // distinct list may start (see `EarleyGrammar::expects_distinct_entry`).
        let kept_whole: Vec<Sym> = perm.entries.iter().zip(&perm.distinct).filter(|(_, d)| d.any()).map(|(&e, _)| e).collect();
        let inline = |sym: Sym| -> Alts {
            if kept_whole.contains(&sym) {
                return vec![vec![sym]];
            }
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
        fn keep<T: Copy>(v: &[T], used: &[bool]) -> Vec<T> {
            v.iter().zip(used).filter(|(_, &u)| u).map(|(&x, _)| x).collect()
        }
        perm.required = keep(&perm.required, &used);
        perm.repeat = keep(&perm.repeat, &used);
        perm.distinct = keep(&perm.distinct, &used);
        perm.entries = perm.entries.iter().zip(&used).filter(|(_, &u)| u).map(|(&e, _)| e).collect();
        let mut rhs_all = Vec::with_capacity(prods.len());
        for (rhs, i) in prods {
            let add = add_from.is_some_and(|k| rhs_all.len() >= k);
            rhs_all.push(merge_seq(lw, &rhs, &mut merged, &mut joins)?);
            perm.prod_entry.push(new_index[i] as u32 | if add { crate::grammar::perm::ADD } else { 0 });
        }
        bnf[list as usize] = rhs_all;
        out.push(perm);
    }
    Ok(out)
}
