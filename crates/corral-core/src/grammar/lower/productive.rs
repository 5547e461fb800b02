//! What can never produce a finite string is dropped (a warning), unless it is the start
//! rule (an error naming why).

use crate::util::hash::{HashMap, HashSet, HashSetExt};

use super::*;
use crate::error::{Error, Result};
use crate::frontend::ast::Pos;
use crate::frontend::scanner::grammar_error;

/// Drops every production that needs something that can never produce a finite string
/// (a rule whose alternatives all recurse forever, a piece that matches no string): the
/// language stays the same. Returns a warning for each such piece and user rule that the
/// start reaches; an error only when the start rule itself can produce nothing.
pub(super) fn drop_unproductive(lw: &mut Lowering<'_>, start: u32) -> Result<Vec<String>> {
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
pub(super) fn empty_grammar_error(lw: &Lowering<'_>, start: u32, bad: &[u32], void_of: &HashMap<u32, usize>) -> Error {
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

/// [`drop_unproductive`], also dropping each `perm!` list that cannot be finished with the
/// entries that can produce something (a required entry that cannot, too few entries for
/// the least count), and what needs it, until nothing changes.
pub(super) fn drop_unproductive_perms(lw: &mut Lowering<'_>, start: u32) -> Result<Vec<String>> {
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
