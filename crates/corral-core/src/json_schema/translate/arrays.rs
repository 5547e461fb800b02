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

use serde_json::Value;

use super::expand::possible_kinds;
use super::expr::{alt, lit, opt, repeat, rule, seq, AT};
use super::lang;
use super::objects::{decode_key, MAX_ENUMERATED_KEYS};
use super::shape::{CountField, Kinds, Shape, Sub};
use super::{value, Separators, Translator, XmlStyle};
use crate::error::Result;
use crate::frontend::ast::{Distinct, Expr, ItemStarts, PermEntry};
use crate::json_schema::resources;

/// A state of a counted list or object: (items so far, matches so far).
pub(crate) type State = (u64, u64);

/// The moves of a counted list: per state, (the rule of the item written, the next state),
/// in the order the states were found (so that the rules come out in a stable order).
pub(crate) type Moves = IndexMap<State, Vec<(String, State)>>;

impl<'a> Translator<'a> {
    /// The arrays of `shape` (None: none).
    pub(crate) fn emit_array(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        if let Some(style) = self.xml_container() {
            // A list of items in markers (see `xml`).
            if let Some(at) = shape.unique.as_deref().or(shape.duplicate.as_deref()) {
                self.unsupported(at, "uniqueItems", "a list of items in an XML layout is not kept distinct")?;
            }
            let sep = self.xml_separators(style, true);
            // An empty list is nothing at all, not whitespace (as in XGrammar).
            let contains = &shape.contains;
            let empty = shape.min_items == 0 && !(contains.len() == 1 && contains[0].1 > 0);
            let full = self.array_any_items(shape, shape.min_items.max(1), &sep)?;
            return Ok(alt(vec![full, empty.then_some(Expr::Empty)]));
        }
        if let Some(at) = shape.unique.as_deref().filter(|_| self.opts.xml.is_some_and(XmlStyle::python_literals)) {
            // The check of distinct items reads JSON, and Python literals are not.
            self.unsupported(at, "uniqueItems", "a list inside Python literals is not kept distinct")?;
        }
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
    /// [`Translator::check_count`]) at the keyword that set it. A `maxItems` is not: the
    /// parser counts a long repetition, and a `perm!` list its entries, whatever the bound.
    pub(crate) fn grammar_count(&self, shape: &Shape<'a>, field: CountField, keyword: &str, n: u64) -> Result<u32> {
        if field != CountField::MaxItems {
            self.check_count(shape, field, keyword, Some(n))?;
        }
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
        if let Some(at) = shape.duplicate.as_deref() {
            if hi.is_some_and(|h| h < 2) {
                return Ok(None);
            }
            // Two equal items is a check the matcher does not make (strict=False: the
            // array as if that were not asked, so the grammar is wider).
            self.unsupported(at, "uniqueItems", "cannot be negated exactly (inside `not`, `oneOf` or `if`) where it is not contradicted by a `uniqueItems` or `maxItems` beside it: two equal items is a check the matcher does not make")?;
        }
        if shape.unique.is_some() && hi.is_none_or(|h| h > 1) {
            match self.unique_items(shape)? {
                UniqueItems::Values(values) => return self.array_of_distinct(shape, lo, values, sep),
                UniqueItems::Strings { plain } => return self.array_of_distinct_strings(shape, lo, plain, sep),
                UniqueItems::Any => return self.array_of_distinct_values(shape, lo, sep),
            }
        }
        self.array_any_items(shape, lo, sep)
    }

    /// The arrays of `shape` with at least `lo` items, `uniqueItems` aside.
    fn array_any_items(&mut self, shape: &Shape<'a>, lo: u64, sep: &Separators) -> Result<Option<Expr>> {
        if shape.contains.is_empty() {
            return self.array_positions(shape, lo, sep);
        }
        let contains = shape.contains.clone();
        self.array_counted(shape, lo, &contains, sep)
    }

    /// What the items of a `uniqueItems` array (`shape`) may be, for keeping them
    /// distinct.
    pub(crate) fn unique_items(&mut self, shape: &Shape<'a>) -> Result<UniqueItems> {
        // Counted or at tuple positions, items are not one `perm!` entry: compared at run
        // time as values, whatever they are.
        let counted = !shape.contains.is_empty();
        if counted || shape.arr_clauses.iter().any(|(prefix, _)| !prefix.is_empty()) {
            return Ok(UniqueItems::Any);
        }
        let subs = self.item_subs(shape, 0);
        let mut values: Vec<Value> = Vec::new();
        // Strings of a shape with no enum: unboundedly many, kept distinct at run time.
        let mut strings: Option<bool> = None;
        // Other values, unboundedly many: kept distinct at run time, as values.
        let mut any = false;
        for item in self.shapes(&subs)? {
            let candidates: Vec<Value> = match &item.enumeration {
                Some(members) => members.iter().map(|&v| v.clone()).collect(),
                None if item.kinds.without(Kinds::NULL.or(Kinds::BOOL)).is_empty() => {
                    vec![Value::Null, Value::Bool(false), Value::Bool(true)]
                }
                None if item.kinds.without(Kinds::STR).is_empty() => {
                    let plain = item.patterns.is_empty()
                        && item.neg_patterns.is_empty()
                        && item.formats.is_empty()
                        && item.neg_formats.is_empty()
                        && item.max_len.is_none()
                        && item.not_values.is_empty();
                    // A pattern may leave finitely many strings (`^(a|ab)$`): named one by
                    // one, as values, the grammar keeps them distinct with no dead end.
                    let listed = if plain { None } else { self.few_strings(&item)? };
                    match listed {
                        Some(list) => list,
                        None => {
                            strings = Some(strings.unwrap_or(true) && plain);
                            continue;
                        }
                    }
                }
                None => {
                    any = true;
                    continue;
                }
            };
            for v in candidates {
                crate::util::interrupt::check()?;
                if self.check(&v, &item, item.enumeration.is_some())? && !values.iter().any(|w| value::json_equal(w, &v)) {
                    values.push(v);
                }
            }
        }
        match strings {
            None if !any => Ok(UniqueItems::Values(values)),
            // Listed strings beside free ones: all strings, compared as text.
            Some(plain) if !any && values.iter().all(Value::is_string) => {
                Ok(UniqueItems::Strings { plain: plain && values.is_empty() })
            }
            // Anything else: compared as JSON values.
            _ => Ok(UniqueItems::Any),
        }
    }

    /// The kinds of value the first item of an array of `shape` may take (more where
    /// unsure, never fewer).
    pub(crate) fn first_item_starts(&mut self, shape: &Shape<'a>) -> Result<ItemStarts> {
        if let Some(members) = &shape.enumeration {
            let firsts = members.iter().filter_map(|m| m.as_array().and_then(|a| a.first()));
            return Ok(firsts.fold(ItemStarts::NONE, |acc, v| acc.or(starts_of(value::kind_of(v)))));
        }
        let subs = self.item_subs(shape, 0);
        if subs.is_empty() {
            return Ok(ItemStarts::ALL);
        }
        let items = self.shapes(&subs)?;
        Ok(items.iter().fold(ItemStarts::NONE, |acc, item| acc.or(starts_of(possible_kinds(item)))))
    }

    /// The strings of a string shape, if there are at most [`MAX_ENUMERATED_KEYS`].
    fn few_strings(&mut self, item: &Shape<'a>) -> Result<Option<Vec<Value>>> {
        let Some(body) = self.string_body(item)? else { return Ok(Some(Vec::new())) };
        let dfa = self.langs.dfa(&body, &self.limits)?;
        let Some(list) = lang::finite_strings(&dfa, MAX_ENUMERATED_KEYS)? else { return Ok(None) };
        list.iter().map(|b| decode_key(b).map(Value::String)).collect::<Result<Vec<_>>>().map(Some)
    }

    /// The arrays of `shape` with at least `lo` strings, none repeated: one `perm!` list
    /// with one repeatable entry, the item, marked distinct. No grammar keeps unboundedly
    /// many strings distinct; the matcher does, as it keeps object keys distinct (see
    /// [`crate::grammar::distinct_keys`]): the list only tells it which arrays. `plain`:
    /// has every half-written string infinitely many endings? If not (a pattern, a format,
    /// a length), the check looks at half-written items too.
    fn array_of_distinct_strings(&mut self, shape: &Shape<'a>, lo: u64, plain: bool, sep: &Separators) -> Result<Option<Expr>> {
        let depth = self.pass.json_depth + 1;
        self.open_keys = true;
        self.finite_key_endings |= !plain;
        let subs = self.item_subs(shape, 0);
        let Some(item) = self.item_rule(&subs, depth)? else {
            return Ok((lo == 0).then(|| seq(vec![sep.open.clone(), sep.close.clone()])));
        };
        let min = self.grammar_count(shape, CountField::MinItems, "minItems", lo)?;
        let max = shape.max_items.map(|h| self.grammar_count(shape, CountField::MaxItems, "maxItems", h)).transpose()?;
        if max.is_some_and(|m| m < min) {
            return Ok(None);
        }
        let entries = vec![PermEntry { expr: rule(&item), required: false, repeat: true, distinct: Distinct::Strings }];
        let list = Expr::Perm { sep: Box::new(sep.comma.clone()), entries, min, max, pos: AT };
        Ok(Some(seq(vec![sep.open.clone(), list, sep.close.clone()])))
    }

    /// The arrays of `shape` with at least `lo` items, none repeated, where items take
    /// unboundedly many values: the arrays `uniqueItems` aside, as the one entry of a
    /// `perm!` list marked distinct. No grammar keeps unboundedly many values distinct;
    /// the matcher does, comparing each item with the earlier ones as JSON values where it
    /// closes (see [`crate::grammar::distinct_keys`]): the list only tells it which arrays.
    fn array_of_distinct_values(&mut self, shape: &Shape<'a>, lo: u64, sep: &Separators) -> Result<Option<Expr>> {
        self.open_keys = true;
        let first = self.first_item_starts(shape)?;
        let Some(array) = self.array_any_items(shape, lo, sep)? else { return Ok(None) };
        let entries = vec![PermEntry { expr: array, required: true, repeat: false, distinct: Distinct::Values(first) }];
        Ok(Some(Expr::Perm { sep: Box::new(Expr::Empty), entries, min: 1, max: Some(1), pos: AT }))
    }

    /// The arrays of `shape` with at least `lo` items, each one of `values` and no two
    /// equal: one `perm!` whose entries are the values, each at most once (the parser
    /// carries which ones were written, see [`crate::grammar::perm`]). A `minItems` above
    /// the number of values leaves no array.
    fn array_of_distinct(&mut self, shape: &Shape<'a>, lo: u64, values: Vec<Value>, sep: &Separators) -> Result<Option<Expr>> {
        let depth = self.pass.json_depth + 1;
        let mut entries = Vec::with_capacity(values.len());
        for v in &values {
            let expr = match v {
                Value::Number(_) => self.number_literal(v)?,
                _ => self.literal_value(v, depth)?,
            };
            entries.extend(expr.map(|expr| PermEntry { expr, required: false, repeat: false, distinct: Distinct::No }));
        }
        let most = entries.len() as u64;
        let hi = shape.max_items.map_or(most, |h| h.min(most));
        if lo > hi {
            return Ok(None);
        }
        if entries.is_empty() {
            return Ok(Some(seq(vec![sep.open.clone(), sep.close.clone()])));
        }
        let list = Expr::Perm { sep: Box::new(sep.comma.clone()), entries, min: lo as u32, max: Some(hi as u32), pos: AT };
        Ok(Some(seq(vec![sep.open.clone(), list, sep.close.clone()])))
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
            items.push(self.item_rule(&self.item_subs(shape, i), depth)?);
        }
        let rest =
            if hi.is_none_or(|h| h > explicit as u64) { self.item_rule(&self.item_subs(shape, explicit), depth)? } else { None };
        let tail_lo = lo.saturating_sub(explicit as u64);
        let tail_hi = hi.map(|h| h - explicit as u64);
        let tail_lo = self.grammar_count(shape, CountField::MinItems, "minItems", tail_lo)?;
        let tail_hi = tail_hi.map(|h| self.grammar_count(shape, CountField::MaxItems, "maxItems", h)).transpose()?;
        let Some(tail) = array_tail(rest.as_deref(), explicit, tail_lo, tail_hi, &sep.comma) else { return Ok(None) };
        let Some(inner) = array_prefix(&items, lo, tail, tail_lo > 0, &sep.comma) else { return Ok(None) };
        Ok(Some(seq(vec![sep.open.clone(), inner, sep.close.clone()])))
    }

    /// The arrays of `shape` with at least `lo` items, of which, for each `contains`
    /// `(c_sub, c_min, c_max)`, `c_min` to `c_max` obey `c_sub`: one rule per live state
    /// (items so far, matches so far of every `contains`, see [`Counting::encode`]).
    fn array_counted(
        &mut self,
        shape: &Shape<'a>,
        lo: u64,
        contains: &[(Sub<'a>, u64, Option<u64>, u64)],
        sep: &Separators,
    ) -> Result<Option<Expr>> {
        let first = contains[0].0.pointer().to_string();
        let hi = shape.max_items;
        let longest = shape.arr_clauses.iter().map(|(p, _)| p.len() as u64).max().unwrap_or(0);
        // Positions are told apart up to the first one every `contains` counts.
        let from = contains.iter().map(|c| c.3).max().unwrap_or(0);
        let mut explicit = longest.max(lo).max(from);
        if let Some(h) = hi {
            let cap = self.limits.max_counted_items as u64;
            if h > cap {
                return Err(resources::unsupported(
                    &first,
                    "contains",
                    &format!("with maxItems above Limits.max_counted_items = {cap} (each position is counted); raise the limit to allow it"),
                ));
            }
            explicit = h;
        }
        let counts: Vec<Count> = contains
            .iter()
            .map(|(_, c_min, c_max, from)| Count { min: *c_min, max: *c_max, cap: c_max.map_or(*c_min, |m| m + 1), from: *from })
            .collect();
        let last = hi.unwrap_or(explicit.max(1));
        // One state per (items so far, matches so far of each), with up to 2^k moves
        // (matching each `contains` or not), counted as 2^(k-1) states each so that one
        // `contains` counts its states: refuse before spelling out a count that large
        // (minItems or minContains of a million, many `contains` on one array).
        let tallies = counts.iter().fold(1u64, |n, c| n.saturating_mul(c.cap.saturating_add(1)));
        let fan_out = 1u64.checked_shl(counts.len() as u32 - 1).unwrap_or(u64::MAX);
        let states = (last.saturating_add(1)).saturating_mul(tallies).saturating_mul(fan_out);
        if counts.len() > 16 || states > self.limits.max_spelled_count as u64 {
            let what = match counts.len() {
                1 => "`contains` matches".to_string(),
                k => format!("the matches of {k} `contains`"),
            };
            return Err(Self::limit_at(
                &first,
                "contains",
                &format!("counting {what} with minItems/maxItems/minContains/maxContains needs {states} grammar states"),
                "max_spelled_count",
                self.limits.max_spelled_count,
            ));
        }
        let counting = Counting { hi, last, counts };
        let subs: Vec<Sub<'a>> = contains.iter().map(|(s, ..)| s.clone()).collect();
        let moves = self.contains_moves(shape, &subs, explicit, &counting)?;
        let can_stop = |(i, c): State| i >= lo && counting.done(c);
        let base = self.fresh_base("a");
        let comma = sep.comma.clone();
        let lead = move |(i, _): State| if i == 0 { None } else { Some(comma.clone()) };
        if !self.state_rules(&base, &moves, can_stop, lead) {
            return Ok(None);
        }
        Ok(Some(seq(vec![sep.open.clone(), rule(&state_name(&base, (0, 0))), sep.close.clone()])))
    }

    /// The states of the `contains` counts reachable from (0, 0), and their moves: an
    /// item, for each `contains`, either matches it (counted, while its count may grow)
    /// or does not (with its `maxContains`; without it, any item, uncounted: only the
    /// least count matters then, and an uncounted match never makes it wrong).
    fn contains_moves(&mut self, shape: &Shape<'a>, c_subs: &[Sub<'a>], explicit: u64, k: &Counting) -> Result<Moves> {
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
                let tally = k.decode(c);
                let item = self.item_subs(shape, i.min(explicit) as usize);
                'choice: for matched in 0..1u32 << c_subs.len() {
                    let mut subs = item.clone();
                    let mut next = tally.clone();
                    for (j, (sub, count)) in c_subs.iter().zip(&k.counts).enumerate() {
                        if i < count.from {
                            // Not counted here, and not bounded: any item, one choice.
                            if matched >> j & 1 == 1 {
                                continue 'choice;
                            }
                            continue;
                        }
                        if matched >> j & 1 == 1 {
                            // Counted: while the count may still change the answer.
                            let grows = count.max.map_or(tally[j] < count.cap, |m| tally[j] < m);
                            if !grows {
                                continue 'choice;
                            }
                            subs.push(sub.clone());
                            next[j] = (tally[j] + 1).min(count.cap);
                        } else if count.max.is_some() {
                            subs.push(sub.negate());
                        }
                    }
                    if let Some(r) = self.item_rule(&subs, depth)? {
                        out.push((r, (k.step(i), k.encode(&next))));
                    }
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

/// What the items of a `uniqueItems` array may be (see [`Translator::unique_items`]).
pub(crate) enum UniqueItems {
    /// Finitely many values: the array names each (a `perm!` entry per value).
    Values(Vec<Value>),
    /// Strings, unboundedly many: kept distinct at run time. `plain`: every half-written
    /// one has infinitely many endings (no pattern, format, maxLength or listed value).
    Strings { plain: bool },
    /// Values of any kind, unboundedly many: kept distinct at run time, compared as JSON
    /// values.
    Any,
}

/// One `contains` count: `minContains`, `maxContains`, the value it is counted up to
/// (past `minContains` matches need no counting, unless `maxContains` bounds them), and
/// the first position it counts.
struct Count {
    min: u64,
    max: Option<u64>,
    cap: u64,
    from: u64,
}

/// The bounds the `contains` counts of one array walk within.
struct Counting {
    /// `maxItems`.
    hi: Option<u64>,
    /// Without `maxItems`: the position past which all are alike; with it, `maxItems`.
    last: u64,
    /// One per `contains`.
    counts: Vec<Count>,
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

    /// The counts of every `contains` as one number (mixed radix, the first count lowest),
    /// so that a state stays (items, matches); the product of the radices was bounded
    /// before any state was made.
    fn encode(&self, tally: &[u64]) -> u64 {
        tally.iter().zip(&self.counts).rev().fold(0, |n, (t, c)| n * (c.cap + 1) + t)
    }

    /// The counts [`Counting::encode`] made `code` of.
    fn decode(&self, mut code: u64) -> Vec<u64> {
        self.counts
            .iter()
            .map(|c| {
                let t = code % (c.cap + 1);
                code /= c.cap + 1;
                t
            })
            .collect()
    }

    /// May the array close with the counts `code`?
    fn done(&self, code: u64) -> bool {
        self.decode(code).iter().zip(&self.counts).all(|(t, c)| *t >= c.min && c.max.is_none_or(|m| *t <= m))
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

/// The kinds of value of `kinds`, as the bytes that start them.
fn starts_of(kinds: Kinds) -> ItemStarts {
    [
        (Kinds::NULL, ItemStarts::NULL),
        (Kinds::BOOL, ItemStarts::BOOL),
        (Kinds::NUMBER, ItemStarts::NUMBER),
        (Kinds::STR, ItemStarts::STRING),
        (Kinds::ARR, ItemStarts::ARRAY),
        (Kinds::OBJ, ItemStarts::OBJECT),
    ]
    .into_iter()
    .filter(|(k, _)| kinds.has(*k))
    .fold(ItemStarts::NONE, |acc, (_, s)| acc.or(s))
}
