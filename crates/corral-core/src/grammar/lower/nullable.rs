//! Nullable rules removed (except the start), then unit rules where that is cheap: the
//! Earley recognizer needs no ε-rule, and reads a unit rule as one more item.

use crate::util::hash::FastSet;

use super::*;
use crate::error::Result;
use crate::limits::Limits;

/// Which rules derive the empty string (least fixpoint).
pub(super) fn nullable_rules(bnf: &[Alts]) -> Vec<bool> {
    derivable(bnf, false)
}

/// Which rules derive some string (`terminals_ok`: any string; otherwise the empty
/// string), as a least fixpoint computed with a worklist: each production counts the
/// nonterminal occurrences not yet known to derive, and a rule is settled when one of its
/// productions reaches zero. Linear in the grammar's size (a loop over all rules until
/// nothing changes is quadratic on long chains of rules).
pub(super) fn derivable(bnf: &[Alts], terminals_ok: bool) -> Vec<bool> {
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
pub(super) const MAX_NULLABLE_PER_PRODUCTION: usize = 6;

/// Splits productions with many nullable symbols into a chain of new rules, each with at
/// most [`MAX_NULLABLE_PER_PRODUCTION`] of them, so that removing ε-productions stays
/// linear. `A → x1 … xn` becomes `A → x1 … xk A#1`, `A#1 → xk+1 … A#2`, … (same language).
/// Such productions come from counted repetitions with optional separators, e.g. a JSON
/// array with `minItems: 8` and flexible whitespace.
pub(super) fn split_nullable_runs(lw: &mut Lowering<'_>) {
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
pub(super) fn remove_nullable(bnf: &mut [Alts], limits: &Limits) -> Result<Vec<bool>> {
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
        let mut seen: FastSet<Vec<Sym>> = FastSet::default();
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

/// A rule whose unit closure reaches more distinct productions than this keeps its unit
/// productions instead of copies of them. Copies save the recognizer one item per unit
/// step; where many rules reach one large set of alternatives (a schema's union of many
/// definitions, referenced from many places) they multiply the grammar instead.
pub(super) const MAX_UNIT_COPIES: usize = 256;

/// Removes unit productions `A → B` by giving `A` the non-unit productions of every `B`
/// it reaches through unit chains. A rule that reaches more than [`MAX_UNIT_COPIES`]
/// keeps its unit productions (the recognizer reads them as any other), and so do the
/// rules with the next largest closures while the copies would make the grammar larger
/// than half of `Limits::max_grammar_productions` (rules with equal closures alike).
/// `perm!` lists (`lists`) are left alone: their productions are written afterwards, and
/// a unit `A → L` to one stays. A unit `A → A` (not a list's) adds nothing and goes.
pub(super) fn remove_units(bnf: &mut [Alts], limits: &Limits, lists: &[bool]) -> Result<()> {
    let n = bnf.len();
    let is_unit = |seq: &Vec<Sym>| seq.len() == 1 && !seq[0].is_terminal() && !lists[seq[0].index() as usize];
    let mut mark: Vec<u32> = vec![u32::MAX; n];
    let mut reached: Vec<usize> = Vec::new();
    // One set for every rule, of borrowed productions: a large grammar's closures reach
    // thousands of productions, and a set per rule (of copies) cost more than the rest.
    let rules: &[Alts] = bnf;
    let mut seen: FastSet<&[Sym]> = FastSet::default();
    // Per rule with units: how many productions its copies would be (capped).
    let mut closure: Vec<Option<usize>> = vec![None; n];
    for a in (0..n).filter(|&a| !lists[a] && rules[a].iter().any(is_unit)) {
        crate::util::interrupt::check()?;
        seen.clear();
        unit_closure(rules, a, &is_unit, &mut mark, &mut reached);
        closure[a] = Some(closure_productions(rules, &reached, &is_unit, &mut seen, MAX_UNIT_COPIES, &mut |_| ()));
    }
    let copy_at_most = copy_threshold(rules, &closure, limits.max_grammar_productions / 2);
    mark.fill(u32::MAX);
    let mut result: Vec<Alts> = Vec::with_capacity(n);
    let mut total = 0usize;
    for a in 0..n {
        seen.clear();
        let out: Alts = match closure[a].filter(|&c| c <= copy_at_most) {
            Some(_) => {
                unit_closure(rules, a, &is_unit, &mut mark, &mut reached);
                let mut out = Vec::new();
                closure_productions(rules, &reached, &is_unit, &mut seen, usize::MAX, &mut |seq| out.push(seq.to_vec()));
                out
            }
            None => {
                let own = |seq: &&Vec<Sym>| !seq.is_empty() && (lists[a] || seq[..] != [Sym::n(a as u32)]);
                rules[a].iter().filter(own).filter(|seq| seen.insert(seq.as_slice())).cloned().collect()
            }
        };
        total += out.len();
        if total > limits.max_grammar_productions {
            return Err(too_many(limits, "unit-rule removal"));
        }
        result.push(out);
    }
    drop(seen);
    for (a, alts) in result.into_iter().enumerate() {
        bnf[a] = alts;
    }
    Ok(())
}

/// The largest closure size (at most [`MAX_UNIT_COPIES`]) up to which rules get copies,
/// so that the grammar stays within `budget` productions where it can: the rules with
/// the largest closures keep their units first.
fn copy_threshold(rules: &[Alts], closure: &[Option<usize>], budget: usize) -> usize {
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    let mut total = 0usize;
    for (a, c) in closure.iter().enumerate() {
        match *c {
            Some(c) if c <= MAX_UNIT_COPIES => {
                total += c;
                sizes.push((c, rules[a].len()));
            }
            _ => total += rules[a].len(),
        }
    }
    sizes.sort_unstable_by(|x, y| y.cmp(x));
    let mut at_most = MAX_UNIT_COPIES;
    let mut i = 0;
    while total > budget && i < sizes.len() {
        let c = sizes[i].0;
        while i < sizes.len() && sizes[i].0 == c {
            total = total - sizes[i].0 + sizes[i].1;
            i += 1;
        }
        at_most = c - 1;
    }
    at_most
}

/// The rules `a` reaches through unit productions, itself included, sorted (into
/// `reached`; `mark` remembers the last rule whose closure reached each).
fn unit_closure(rules: &[Alts], a: usize, is_unit: &dyn Fn(&Vec<Sym>) -> bool, mark: &mut [u32], reached: &mut Vec<usize>) {
    reached.clear();
    reached.push(a);
    mark[a] = a as u32;
    let mut i = 0;
    while i < reached.len() {
        let x = reached[i];
        i += 1;
        for seq in &rules[x] {
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
}

/// Passes each distinct non-unit production of the rules `reached` to `found`, in order,
/// and returns how many there are; stops past `cap` (then returns `cap + 1`).
fn closure_productions<'r>(
    rules: &'r [Alts],
    reached: &[usize],
    is_unit: &dyn Fn(&Vec<Sym>) -> bool,
    seen: &mut FastSet<&'r [Sym]>,
    cap: usize,
    found: &mut dyn FnMut(&[Sym]),
) -> usize {
    let mut count = 0;
    for &b in reached {
        for seq in &rules[b] {
            if !is_unit(seq) && !seq.is_empty() && seen.insert(seq.as_slice()) {
                found(seq);
                count += 1;
                if count > cap {
                    return count;
                }
            }
        }
    }
    count
}
