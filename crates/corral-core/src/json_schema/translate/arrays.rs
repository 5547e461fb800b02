//! The values of array shapes: tuple prefixes, the items after them, counts, and
//! `contains` with its counts.
//!
//! Without `contains`, an array is its tuple positions one by one, then the rest as one
//! counted repetition (the engine bounds counts by `max_grammar_productions`; they are
//! never spelled out). With `contains`, every (items so far, matches so far) state is a
//! rule of its own ([`Translator::state_rules`]), pruned to the states from which the
//! array can still close.

use crate::util::hash::{HashMap, HashMapExt, HashSet};

use indexmap::IndexMap;

use super::expr::{alt, lit, opt, repeat, rule, seq};
use super::shape::{CountField, Shape, Sub};
use super::{Separators, Translator};
use crate::error::Result;
use crate::frontend::ast::Expr;
use crate::json_schema::resources;

/// A state of a counted list or object: (items so far, matches so far).
pub(crate) type State = (u64, u64);

/// The moves of a counted list: per state, (the rule of the item written, the next state),
/// in the order the states were found (so that the rules come out in a stable order).
pub(crate) type Moves = IndexMap<State, Vec<(String, State)>>;

impl<'a> Translator<'a> {
    /// The arrays of `shape` (None: none).
    pub(crate) fn emit_array(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        let sep = self.separators(['[', ']'], self.pass.json_depth);
        if self.opts.indent.is_none() {
            return self.array_body(shape, shape.min_items, &sep);
        }
        // json.dumps writes an empty array as [] and a non-empty one across lines: the
        // non-empty ones are built with at least one item, [] is added when allowed.
        let contains = &shape.contains;
        let empty = shape.min_items == 0 && !(contains.len() == 1 && contains[0].1 > 0);
        let full = self.array_body(shape, shape.min_items.max(1), &sep)?;
        Ok(alt(vec![full, empty.then(|| lit("[]"))]))
    }

    /// The subschemas item `index` must satisfy.
    pub(crate) fn item_subs(&self, shape: &Shape<'a>, index: usize) -> Vec<Sub<'a>> {
        let mut subs = Vec::new();
        for (prefix, rest) in &shape.arr_clauses {
            if let Some(s) = prefix.get(index) {
                subs.push(s.clone());
            } else if let Some(r) = rest {
                subs.push(r.clone());
            }
        }
        subs
    }

    /// `n` as a grammar count, refused past `max_grammar_productions` (see
    /// [`Translator::check_count`]) at the keyword that set it.
    pub(crate) fn grammar_count(&self, shape: &Shape<'a>, field: CountField, keyword: &str, n: u64) -> Result<u32> {
        self.check_count(shape, field, keyword, Some(n))?;
        u32::try_from(n).map_err(|_| {
            let pointer = shape.count_ptrs.get(&field).cloned().unwrap_or_default();
            Self::limit_at(
                &pointer,
                keyword,
                &format!("a count of {n} repetitions"),
                "max_grammar_productions",
                u32::MAX as usize,
            )
        })
    }

    /// The arrays of `shape` with at least `lo` items.
    fn array_body(&mut self, shape: &Shape<'a>, lo: u64, sep: &Separators) -> Result<Option<Expr>> {
        let hi = shape.max_items;
        if hi.is_some_and(|h| h < lo) {
            return Ok(None);
        }
        match shape.contains.as_slice() {
            [] => self.array_positions(shape, lo, sep),
            [(c_sub, c_min, c_max)] => self.array_counted(shape, lo, c_sub, *c_min, *c_max, sep),
            [_, (second, ..), ..] => {
                Err(resources::unsupported(second.pointer(), "contains", "more than one `contains` on one array"))
            }
        }
    }

    /// The arrays of `shape` with at least `lo` items and no `contains`: the tuple
    /// positions one by one, then the rest as a counted repetition.
    fn array_positions(&mut self, shape: &Shape<'a>, lo: u64, sep: &Separators) -> Result<Option<Expr>> {
        let hi = shape.max_items;
        let longest = shape.arr_clauses.iter().map(|(p, _)| p.len()).max().unwrap_or(0) as u64;
        let explicit = hi.map_or(longest, |h| longest.min(h)) as usize;
        let depth = self.pass.json_depth + 1;
        let mut items = Vec::with_capacity(explicit);
        for i in 0..explicit {
            items.push(self.value_rule(&self.item_subs(shape, i), depth)?);
        }
        let rest =
            if hi.is_none_or(|h| h > explicit as u64) { self.value_rule(&self.item_subs(shape, explicit), depth)? } else { None };
        let tail_lo = lo.saturating_sub(explicit as u64);
        let tail_hi = hi.map(|h| h - explicit as u64);
        let tail_lo = self.grammar_count(shape, CountField::MinItems, "minItems", tail_lo)?;
        let tail_hi = tail_hi.map(|h| self.grammar_count(shape, CountField::MaxItems, "maxItems", h)).transpose()?;
        let Some(tail) = array_tail(rest.as_deref(), explicit, tail_lo, tail_hi, &sep.comma) else { return Ok(None) };
        let Some(inner) = array_prefix(&items, lo, tail, tail_lo > 0, &sep.comma) else { return Ok(None) };
        Ok(Some(seq(vec![sep.open.clone(), inner, sep.close.clone()])))
    }

    /// The arrays of `shape` with at least `lo` items, `c_min` to `c_max` of which obey
    /// `c_sub`: one rule per live state (items so far, matches so far).
    fn array_counted(
        &mut self,
        shape: &Shape<'a>,
        lo: u64,
        c_sub: &Sub<'a>,
        c_min: u64,
        c_max: Option<u64>,
        sep: &Separators,
    ) -> Result<Option<Expr>> {
        let hi = shape.max_items;
        let longest = shape.arr_clauses.iter().map(|(p, _)| p.len() as u64).max().unwrap_or(0);
        let mut explicit = longest.max(lo);
        if let Some(h) = hi {
            let cap = self.limits.max_counted_items as u64;
            if h > cap {
                let p = c_sub.pointer();
                return Err(resources::unsupported(
                    p,
                    "contains",
                    &format!("with maxItems above Limits.max_counted_items = {cap} (each position is counted); raise the limit to allow it"),
                ));
            }
            explicit = h;
        }
        let cap = c_max.map_or(c_min, |m| m + 1);
        let last = hi.unwrap_or(explicit.max(1));
        // One state per (items so far, matches so far): refuse before spelling out a count
        // that large (minItems or minContains of a million).
        let states = (last.saturating_add(1)).saturating_mul(cap.saturating_add(1));
        if states > self.limits.max_spelled_count as u64 {
            return Err(Self::limit_at(
                c_sub.pointer(),
                "contains",
                &format!(
                    "counting `contains` matches with minItems/maxItems/minContains/maxContains needs {states} grammar states"
                ),
                "max_spelled_count",
                self.limits.max_spelled_count,
            ));
        }
        let counting = Counting { hi, last, cap, c_max };
        let moves = self.contains_moves(shape, c_sub, explicit, &counting)?;
        let can_stop = |(i, c): State| i >= lo && c >= c_min && c_max.is_none_or(|m| c <= m);
        let base = self.fresh_base("a");
        let comma = sep.comma.clone();
        let lead = move |(i, _): State| if i == 0 { None } else { Some(comma.clone()) };
        if !self.state_rules(&base, &moves, can_stop, lead) {
            return Ok(None);
        }
        Ok(Some(seq(vec![sep.open.clone(), rule(&state_name(&base, (0, 0))), sep.close.clone()])))
    }

    /// The states of a `contains` count reachable from (0, 0), and their moves: an item
    /// that matches (counted, while the count may grow) or one that does not (with
    /// `maxContains`; without it, any item, uncounted).
    fn contains_moves(&mut self, shape: &Shape<'a>, c_sub: &Sub<'a>, explicit: u64, k: &Counting) -> Result<Moves> {
        let depth = self.pass.json_depth + 1;
        let mut moves = Moves::new();
        let mut todo: Vec<State> = vec![(0, 0)];
        while let Some((i, c)) = todo.pop() {
            if moves.contains_key(&(i, c)) {
                continue;
            }
            crate::util::interrupt::check()?;
            let mut out = Vec::new();
            if k.hi.is_none_or(|h| i < h) {
                let subs = self.item_subs(shape, i.min(explicit) as usize);
                let counted = self.value_rule(&[subs.clone(), vec![c_sub.clone()]].concat(), depth)?;
                let unmatched: Vec<Sub<'a>> = k.c_max.iter().map(|_| c_sub.negate()).collect();
                let plain = self.value_rule(&[subs, unmatched].concat(), depth)?;
                if let Some(r) = counted.filter(|_| k.c_max.is_none_or(|m| c < m)) {
                    out.push((r, (k.step(i), (c + 1).min(k.cap))));
                }
                if let Some(r) = plain {
                    out.push((r, (k.step(i), c)));
                }
            }
            todo.extend(out.iter().map(|(_, t)| *t));
            moves.insert((i, c), out);
        }
        Ok(moves)
    }

    /// Writes one rule per state of a counted list or object (`moves`; `can_stop`: may it
    /// close there; `lead`: what comes before an item written from a state, the comma),
    /// keeping only states from which it can still close. False if the start state
    /// cannot: no value.
    pub(crate) fn state_rules(
        &mut self,
        base: &str,
        moves: &Moves,
        can_stop: impl Fn(State) -> bool,
        lead: impl Fn(State) -> Option<Expr>,
    ) -> bool {
        let alive = live_states(moves, &can_stop);
        if !alive.contains(&(0, 0)) {
            return false;
        }
        for (&st, out) in moves {
            if !alive.contains(&st) {
                continue;
            }
            let mut opts = vec![can_stop(st).then_some(Expr::Empty)];
            for (item, t) in out.iter().filter(|(_, t)| alive.contains(t)) {
                let parts = lead(st).into_iter().chain([rule(item), rule(&state_name(base, *t))]);
                opts.push(Some(seq(parts.collect())));
            }
            if let Some(body) = alt(opts) {
                self.add_rule(state_name(base, st), body);
            }
        }
        true
    }
}

/// The bounds a `contains` count walks within.
struct Counting {
    /// `maxItems`.
    hi: Option<u64>,
    /// Without `maxItems`: the position past which all are alike; with it, `maxItems`.
    last: u64,
    /// Matches are counted up to this (past `minContains` they need no counting, unless
    /// `maxContains` bounds them).
    cap: u64,
    /// `maxContains`.
    c_max: Option<u64>,
}

impl Counting {
    /// The position after `i`. Without `maxItems`, positions past the tuple prefix (and
    /// past the first, for the comma) are all alike.
    fn step(&self, i: u64) -> u64 {
        if self.hi.is_none() {
            (i + 1).min(self.last)
        } else {
            i + 1
        }
    }
}

/// The name of state `st`'s rule.
fn state_name(base: &str, (i, c): State) -> String {
    format!("{base}_{i}_{c}")
}

/// The states from which a counted list can still close: backward reachability from the
/// states where it may (a worklist: linear in the moves).
pub(crate) fn live_states(moves: &Moves, can_stop: &impl Fn(State) -> bool) -> HashSet<State> {
    let mut back: HashMap<State, Vec<State>> = HashMap::new();
    for (&st, out) in moves {
        for (_, t) in out {
            back.entry(*t).or_default().push(st);
        }
    }
    let mut alive: HashSet<State> = moves.keys().copied().filter(|&st| can_stop(st)).collect();
    let mut todo: Vec<State> = alive.iter().copied().collect();
    while let Some(t) = todo.pop() {
        for &st in back.get(&t).into_iter().flatten() {
            if alive.insert(st) {
                todo.push(st);
            }
        }
    }
    alive
}

/// The items after the tuple positions (`rest`: their rule; between `lo` and `hi` of
/// them), knowing whether one precedes them (`explicit` positions). None: the array
/// cannot have as many items as it needs. `Expr::Empty`: none follow.
fn array_tail(rest: Option<&str>, explicit: usize, lo: u32, hi: Option<u32>, comma: &Expr) -> Option<Expr> {
    let rest = match rest {
        Some(r) if hi != Some(0) => r,
        _ => return (lo == 0).then_some(Expr::Empty),
    };
    let more = || seq(vec![comma.clone(), rule(rest)]);
    let fewer = |n: u32| n.saturating_sub(1);
    Some(if explicit > 0 {
        repeat(more(), lo, hi)
    } else if lo == 0 {
        let tail = if hi == Some(1) { Expr::Empty } else { repeat(more(), 0, hi.map(fewer)) };
        opt(seq(vec![rule(rest), tail]))
    } else {
        seq(vec![rule(rest), repeat(more(), lo - 1, hi.map(fewer))])
    })
}

/// The tuple positions (`items`: their rules, None where no item fits) before `tail`,
/// the first `lo` of them required. None: no array. (`tail_needed`: the tail must have
/// an item.)
fn array_prefix(items: &[Option<String>], lo: u64, mut tail: Expr, tail_needed: bool, comma: &Expr) -> Option<Expr> {
    for (i, item) in items.iter().enumerate().rev() {
        let Some(item) = item else {
            if (i as u64) < lo {
                return None;
            }
            // No item fits here: the array ends before this position.
            tail = Expr::Empty;
            continue;
        };
        if matches!(tail, Expr::Empty) && tail_needed {
            return None;
        }
        let lead = if i == 0 { Expr::Empty } else { comma.clone() };
        let step = seq(vec![lead, rule(item), tail]);
        tail = if (i as u64) < lo { step } else { opt(step) };
    }
    Some(tail)
}
