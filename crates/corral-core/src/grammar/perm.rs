//! `perm!`: entries in any order, each as often as declared, with a bound on how many in
//! all: the language of a JSON object whose properties may come in any order.
//!
//! No context-free grammar of polynomial size spells "each of n keys at most once, in any
//! order" (one rule per subset of keys seen is 2ⁿ), so the parser carries that subset
//! instead. After lowering, a `perm!` is one *list* nonterminal `L` with the productions
//!
//! ```text
//! L → E_i        start with entry i (only if a list that starts so can be finished)
//! L → L S E_i    add entry i after separator S
//! ```
//!
//! and every Earley item of these productions carries a `State`: which entries appeared
//! and how many entries in all (see `earley`). Three checks keep the language exact, and
//! every mask free of dead ends:
//! - a completed `L` continues an `L → • L S E_j` item only if entry `j` may still be
//!   added (unseen or repeatable) and the list can then still be finished;
//! - it continues any other item only when finished (every required entry seen, at least
//!   the least count of entries);
//! - `L → E_i` exists only for entries that can begin a finishable list.
//!
//! Entries are distinct nonterminals, so which entry a production adds is known from it.

use super::sym::Sym;
use crate::frontend::ast::Distinct;

/// A `perm!` in a normalized grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Perm {
    /// The list nonterminal `L`.
    pub list: u32,
    /// The separator between entries (None: none).
    pub sep: Option<Sym>,
    /// The entries' symbols (the dead ones are gone: they can never appear).
    pub entries: Vec<Sym>,
    /// Per entry: must it appear?
    pub required: Vec<bool>,
    /// Per entry: may it appear more than once?
    pub repeat: Vec<bool>,
    /// Per entry: must its occurrences be distinct JSON strings or values? Checked at run
    /// time by [`crate::grammar::distinct_keys`], not by the list's state; such an entry
    /// stays a nonterminal of its own, so that the parser can tell where one may start.
    pub distinct: Vec<Distinct>,
    /// Least number of entries in all.
    pub min: u32,
    /// Most (None: no bound).
    pub max: Option<u32>,
    /// Per production of the list, in order: the entry it adds, with [`ADD`] set on
    /// `L → L S E_i` (an entry may itself start with the list, so the shape does not say).
    pub prod_entry: Vec<u32>,
}

/// In [`Perm::prod_entry`]: the production adds to a list (`L → L S E_i`).
pub const ADD: u32 = 1 << 31;

/// Counts of a list state that decide which entries may be added (see [`Perm::adding`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adding {
    count: u64,
    missing: u64,
    open: u64,
    any_repeat: bool,
}

/// Words of a state: the count, then one bit per entry.
pub(crate) fn state_width(entries: usize) -> usize {
    1 + entries.div_ceil(64)
}

/// A list's state as stored in the chart: `[count, bits...]`.
pub(crate) type State = [u64];

fn bit(state: &State, i: usize) -> bool {
    state[1 + i / 64] >> (i % 64) & 1 != 0
}

impl Perm {
    /// Words of this list's states.
    pub(crate) fn width(&self) -> usize {
        state_width(self.entries.len())
    }

    /// The state after entry `i` is added to `state` (None: the empty list).
    pub(crate) fn with_entry(&self, state: Option<&State>, i: usize, out: &mut Vec<u64>) {
        out.clear();
        match state {
            Some(s) => out.extend_from_slice(s),
            None => out.resize(self.width(), 0),
        }
        out[0] += 1;
        out[1 + i / 64] |= 1 << (i % 64);
    }

    /// Required entries not yet seen, and optional entries that may still be added once.
    fn missing_and_open(&self, state: &State) -> (u64, u64) {
        let mut missing = 0;
        let mut open = 0;
        for i in 0..self.entries.len() {
            if !bit(state, i) {
                if self.required[i] {
                    missing += 1;
                } else if !self.repeat[i] {
                    open += 1;
                }
            }
        }
        (missing, open)
    }

    /// Has entry `i` appeared in `state` (None: the empty list)?
    pub(crate) fn has(&self, state: Option<&State>, i: usize) -> bool {
        state.is_some_and(|s| bit(s, i))
    }

    /// Can a list in `state` still be finished (by adding entries)?
    pub(crate) fn can_finish(&self, state: &State) -> bool {
        let (missing, open) = self.missing_and_open(state);
        let least = state[0] + missing;
        if self.max.is_some_and(|m| least > m as u64) {
            return false;
        }
        // Entries that can be added beyond the required ones: unbounded with a repeatable one.
        let room = if self.repeat.iter().any(|&r| r) { u64::MAX } else { least + open };
        room >= self.min as u64
    }

    /// May entry `i` be added to a list in `state`, leaving it finishable? (`scratch` is
    /// reused for the new state.)
    pub(crate) fn can_add(&self, state: Option<&State>, i: usize, scratch: &mut Vec<u64>) -> bool {
        if !self.repeat[i] && state.is_some_and(|s| bit(s, i)) {
            return false;
        }
        self.with_entry(state, i, scratch);
        self.can_finish(scratch)
    }

    /// What deciding additions to `state` needs, counted once (see [`Perm::allows`]):
    /// adding to a list is checked for each entry that may follow, so per entry it must
    /// cost O(1), not a pass over the entries.
    pub(crate) fn adding(&self, state: &State) -> Adding {
        let (missing, open) = self.missing_and_open(state);
        Adding { count: state[0], missing, open, any_repeat: self.repeat.iter().any(|&r| r) }
    }

    /// [`Perm::can_add`] from the counts of [`Perm::adding`] for `state`.
    pub(crate) fn allows(&self, a: &Adding, state: &State, i: usize) -> bool {
        let seen = bit(state, i);
        if seen && !self.repeat[i] {
            return false;
        }
        let count = a.count + 1;
        let missing = a.missing - (self.required[i] && !seen) as u64;
        let open = a.open - (!self.required[i] && !self.repeat[i] && !seen) as u64;
        self.max.is_none_or(|m| count + missing <= m as u64) && (a.any_repeat || count + missing + open >= self.min as u64)
    }

    /// Is a list in `state` a whole `perm!` (every required entry seen, enough entries)?
    pub(crate) fn is_finished(&self, state: &State) -> bool {
        state[0] >= self.min as u64 && (0..self.entries.len()).all(|i| !self.required[i] || bit(state, i))
    }

    /// The cheapest entries to add so that a list in `state` is finished (the reference for
    /// [`Perm::cheapest_finish_sorted`]), by the cost of each entry with its separator (`u64::MAX`: not known, never chosen), or None if it
    /// cannot be: (total cost, the entries, required ones first).
    #[cfg(test)]
    pub(crate) fn cheapest_finish(&self, state: &State, cost: &dyn Fn(usize) -> u64) -> Option<(u64, Vec<usize>)> {
        self.cheapest_to(state, self.min as u64, cost)
    }

    /// The cheapest entries that make a list in `state` finished with at least `least`
    /// entries (see [`Perm::cheapest_finish_sorted`]).
    fn cheapest_to(&self, state: &State, least: u64, cost: &dyn Fn(usize) -> u64) -> Option<(u64, Vec<usize>)> {
        let mut chosen: Vec<usize> = (0..self.entries.len()).filter(|&i| self.required[i] && !bit(state, i)).collect();
        let have = state[0] + chosen.len() as u64;
        if self.max.is_some_and(|m| have > m as u64) {
            return None;
        }
        let mut need = least.saturating_sub(have);
        let known = |i: &usize| cost(*i) != u64::MAX;
        let mut once: Vec<(u64, usize)> = (0..self.entries.len())
            .filter(|&i| !self.required[i] && !self.repeat[i] && !bit(state, i))
            .filter(known)
            .map(|i| (cost(i), i))
            .collect();
        once.sort_unstable();
        let rep = (0..self.entries.len()).filter(|&i| self.repeat[i]).filter(known).map(|i| (cost(i), i)).min();
        let mut next_once = once.into_iter().peekable();
        while need > 0 {
            let take_once = match (next_once.peek(), rep) {
                (Some(&(c, _)), Some((r, _))) => c <= r,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return None,
            };
            chosen.push(if take_once { next_once.next()?.1 } else { rep?.1 });
            need -= 1;
        }
        let total = chosen.iter().fold(0u64, |acc, &i| acc.saturating_add(cost(i)));
        (total != u64::MAX).then_some((total, chosen))
    }

    /// The cheapest entries that finish a list in `state`, with the entries sorted by cost
    /// (`order`; `cost`: each entry with its separator): a walk
    /// over the required entries and the cheapest others, not a pass (and a sort) over
    /// all entries, as a search meets many states of one list.
    pub(crate) fn cheapest_finish_sorted(
        &self,
        state: &State,
        order: &[usize],
        cost: &dyn Fn(usize) -> u64,
    ) -> Option<(u64, Vec<usize>)> {
        let mut chosen: Vec<usize> = order.iter().copied().filter(|&i| self.required[i] && !bit(state, i)).collect();
        let have = state[0] + chosen.len() as u64;
        if self.max.is_some_and(|m| have > m as u64) {
            return None;
        }
        let mut need = (self.min as u64).saturating_sub(have);
        for &i in order {
            if need == 0 {
                break;
            }
            if self.repeat[i] {
                // The cheapest repeatable entry fills the rest: all after it cost more.
                chosen.extend(std::iter::repeat_n(i, need as usize));
                need = 0;
            } else if !self.required[i] && !bit(state, i) {
                chosen.push(i);
                need -= 1;
            }
        }
        if need > 0 {
            return None;
        }
        let total = chosen.iter().fold(0u64, |acc, &i| acc.saturating_add(cost(i)));
        (total != u64::MAX).then_some((total, chosen))
    }

    /// The cheapest whole list, given each entry's cost and the separator's (None where
    /// not known yet: entries left out, and only one-entry lists without the separator):
    /// (cost, entries in order).
    pub(crate) fn cheapest_list(
        &self,
        entry_cost: &dyn Fn(usize) -> Option<u64>,
        sep_cost: Option<u64>,
    ) -> Option<(u64, Vec<usize>)> {
        let zero = vec![0u64; self.width()];
        let sep = if self.sep.is_none() { Some(0) } else { sep_cost };
        let least = (self.min as u64).max(1);
        match sep {
            // Every entry pays one separator but the first (a finished list's entries
            // could each come first).
            Some(s) => {
                let cost = |i: usize| entry_cost(i).map_or(u64::MAX, |c| c.saturating_add(s));
                let (total, chosen) = self.cheapest_to(&zero, least, &cost)?;
                let capped = self.max.is_none_or(|m| chosen.len() as u64 <= m as u64);
                capped.then(|| (total - s, chosen))
            }
            None => {
                let mut scratch = Vec::new();
                (0..self.entries.len())
                    .filter_map(|i| entry_cost(i).map(|c| (c, i)))
                    .filter(|&(_, i)| {
                        self.with_entry(None, i, &mut scratch);
                        self.is_finished(&scratch)
                    })
                    .min()
                    .map(|(c, i)| (c, vec![i]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(required: &[bool], repeat: &[bool], min: u32, max: Option<u32>) -> Perm {
        Perm {
            list: 0,
            sep: None,
            entries: (0..required.len() as u32).map(Sym::n).collect(),
            required: required.to_vec(),
            repeat: repeat.to_vec(),
            distinct: vec![Distinct::No; required.len()],
            min,
            max,
            prod_entry: Vec::new(),
        }
    }

    #[test]
    fn a_state_that_cannot_reach_its_required_entries_is_not_finishable() {
        // Entries a (required), b, c; at most 2 in all: after b, only a may follow.
        let p = perm(&[true, false, false], &[false; 3], 0, Some(2));
        let mut s = Vec::new();
        assert!(p.can_add(None, 1, &mut s));
        let after_b = s.clone();
        assert!(!p.can_add(Some(&after_b), 2, &mut s), "b, c leaves no room for a");
        assert!(p.can_add(Some(&after_b), 0, &mut s));
        assert!(!p.can_add(Some(&after_b), 1, &mut s), "b twice");
        assert!(!p.is_finished(&after_b));
        assert!(p.is_finished(&s));
    }

    #[test]
    fn allows_agrees_with_can_add_on_every_state() {
        let mut x = 99u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for _ in 0..200 {
            let n = 1 + next() as usize % 6;
            let required: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
            let repeat: Vec<bool> = (0..n).map(|_| next() % 4 == 0).collect();
            let min = (next() % 4) as u32;
            let max = if next() % 2 == 0 { None } else { Some(min + (next() % 4) as u32) };
            let p = perm(&required, &repeat, min, max);
            // Random states: a count and a set of seen entries.
            for _ in 0..20 {
                let mut state = vec![0u64; p.width()];
                state[0] = 1 + next() % 5;
                state[1] = next() & ((1 << n) - 1);
                let a = p.adding(&state);
                let mut scratch = Vec::new();
                for i in 0..n {
                    assert_eq!(
                        p.allows(&a, &state, i),
                        p.can_add(Some(&state), i, &mut scratch),
                        "{required:?} {repeat:?} {min} {max:?} {state:?} {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_sorted_finish_agrees_with_the_plain_one() {
        let mut x = 5u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for _ in 0..300 {
            let n = 1 + next() as usize % 7;
            let required: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
            let repeat: Vec<bool> = (0..n).map(|_| next() % 4 == 0).collect();
            let min = (next() % 5) as u32;
            let max = if next() % 2 == 0 { None } else { Some(min + (next() % 4) as u32) };
            let p = perm(&required, &repeat, min, max);
            let costs: Vec<u64> = (0..n).map(|_| next() % 10).collect();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| (costs[i], i));
            let mut state = vec![0u64; p.width()];
            state[0] = next() % 4;
            state[1] = next() & ((1 << n) - 1);
            let cost = |i: usize| costs[i];
            let plain = p.cheapest_finish(&state, &cost).map(|c| c.0);
            let sorted = p.cheapest_finish_sorted(&state, &order, &cost).map(|c| c.0);
            assert_eq!(plain, sorted, "{required:?} {repeat:?} {min} {max:?} {state:?} {costs:?}");
        }
    }

    #[test]
    fn the_least_count_needs_enough_entries_left() {
        // Two optional entries, at least 2: starting with either can finish, none can add twice.
        let p = perm(&[false, false], &[false, false], 2, None);
        let mut s = Vec::new();
        assert!(p.can_add(None, 0, &mut s));
        assert!(!p.is_finished(&s));
        let one = s.clone();
        assert!(!p.can_add(Some(&one), 0, &mut s));
        assert!(p.can_add(Some(&one), 1, &mut s));
        assert!(p.is_finished(&s));
        // Three needed from two once-only entries: impossible from the start.
        let p3 = perm(&[false, false], &[false, false], 3, None);
        assert!(!p3.can_add(None, 0, &mut s));
        // A repeatable entry makes any count reachable.
        let pr = perm(&[false, false], &[false, true], 5, None);
        assert!(pr.can_add(None, 0, &mut s));
    }

    #[test]
    fn the_cheapest_list_takes_required_entries_then_the_cheapest_others() {
        let p = perm(&[true, false, false, false], &[false, false, false, true], 3, None);
        let costs = [5u64, 1, 7, 3];
        let (total, order) = p.cheapest_list(&|i| Some(costs[i]), None).expect("finishable");
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 3], "{order:?}");
        assert_eq!(total, 5 + 1 + 3);
        // The repeatable entry is cheaper than entry 2: used twice for a count of 4.
        let p4 = perm(&[true, false, false, false], &[false, false, false, true], 4, None);
        let (total, order) = p4.cheapest_list(&|i| Some(costs[i]), None).expect("finishable");
        assert_eq!(total, 5 + 1 + 3 + 3, "{order:?}");
    }
}
