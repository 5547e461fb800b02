//! Byte-level DFAs: the automata every constraint is compiled to.
//!
//! A [`Dfa`] reads bytes and is pruned: every live state can still reach a match. State 0
//! is the dead state and the start state is 1; transitions are a flat table indexed by
//! `state * stride + class_of[byte]`. States from which no accepting state is reachable
//! are merged into the dead state, so "the next state is not dead" means "this prefix can
//! still be completed", exactly the test a token mask needs.
//!
//! The constructions, one file each:
//! * [`explore`]: any deterministic automaton given by a step function, explored into a
//!   pruned table (the regex engine's DFAs, products, subset constructions all end here);
//! * [`classes`]: byte classes (a common refinement; the coarsest classes of a table);
//! * [`product`]: intersection, difference, complement (within well-formed UTF-8), a
//!   witness of a difference;
//! * [`expr`]: concatenation, union and repetition of DFAs (Thompson's construction over
//!   DFA leaves, then the subset construction);
//! * [`look`]: look-ahead and look-behind inside such expressions (monitors of the input
//!   read so far, obligations on the input to come);
//! * [`concat`](mod@concat): concatenation, and repetition, in one pass where every
//!   junction is deterministic;
//! * [`sequences`]: finite languages (literals, small sets of byte sequences), built and
//!   minimized directly;
//! * [`lazy`]: an automaton built the first time it is read (a planned concatenation);
//! * [`counted`]: counted repetitions kept as a counter (a *counted region*);
//! * `counted_product`: the intersection of a counted region with another automaton,
//!   kept as a counted region (a bounded string with a pattern);
//! * [`minimize`]: Hopcroft minimization;
//! * [`string_safe`]: which JSON-string-safe fragments a state keeps alive (for the
//!   vocabulary's string-safe slices);
//! * [`char_budget`]: states that count the characters left in a string (a small
//!   `maxLength`), whose masks go by the tokens' character counts;
//! * [`within`]: whether two states read every short string-safe text alike;
//! * [`wire`]: the serialized form of shipped tables.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::limits::Limits;

pub mod char_budget;
pub mod classes;
pub mod concat;
pub mod counted;
mod counted_product;
pub mod explore;
pub mod expr;
pub mod lazy;
pub mod look;
pub mod minimize;
pub mod product;
pub mod sequences;
pub mod string_safe;
#[cfg(test)]
mod tests;
pub mod wire;
pub mod within;

use counted::{Counted, ROW_DEAD};
pub use expr::DfaExpr;
pub use lazy::LazyDfa;
pub use look::LookTree;
#[cfg(test)]
pub(crate) use product::GENERAL_PRODUCT_STATES;
pub use string_safe::{StringSafeRisk, ANY_BYTE};

impl Dfa {
    /// The DFA of a regular expression over DFAs (concatenation, union, repetition; see
    /// [`expr`]), look-around included (see [`look`]).
    ///
    /// Bounded by `limits.max_dfa_states` (states of the NFA and of the result) and
    /// `limits.dfa_size_limit`: the NFA state sets stored, plus the NFA states stepped
    /// (which bounds the time), stay under `dfa_size_limit / 4` (sets are `u32` lists).
    /// Past either: `Error::LimitExceeded`.
    pub fn from_expr(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Dfa> {
        if e.has_look_around() {
            look::build(e, limits, what)
        } else {
            Dfa::from_plain_expr(e, limits, what)
        }
    }

    /// A DFA of no string at all (a look-behind whose prefix language is empty).
    pub(crate) fn nothing() -> Dfa {
        Dfa { class_of: [0; 256], stride: 1, table: vec![DEAD; 2], accepting: vec![false; 2], counted: None }
    }
}

/// The move on `class` from block `k`, row `r` of counted region `c` (whose first state
/// is `first`, in an automaton of `stride` classes).
#[inline(always)]
fn counted_step(c: &Counted, first: u32, k: u32, r: u32, stride: usize, class: usize) -> u32 {
    // The bounded repetition's last boundary: no further unit fits.
    let full = c.bounded && k == c.last;
    let t = if full { ROW_DEAD } else { c.template[r as usize * stride + class] };
    if t == ROW_DEAD {
        return if c.ends[r as usize] && k >= c.min { c.exit[class] } else { DEAD };
    }
    match c.target(k, t) {
        Some((k2, r2)) => first + k2 * c.per + r2,
        None => DEAD,
    }
}

/// The dead state: no continuation can match.
pub const DEAD: u32 = 0;

/// The error of a DFA of `what` past `max_dfa_states`.
fn too_many_states(limits: &Limits, what: &str) -> Error {
    Error::LimitExceeded { limit: "max_dfa_states", value: limits.max_dfa_states, context: format!("the DFA of {what}") }
}

/// A byte DFA with byte classes, pruned to co-reachable states. Two DFAs compare (and
/// hash) equal when their tables are the same, states numbered alike: the same automaton
/// built twice (a terminal of each of several joined grammars) is found so.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dfa {
    class_of: [u8; 256],
    stride: usize,
    /// `table[state * stride + class]` = next state (`DEAD` = 0), for the stored states:
    /// all of them, unless `counted` holds more.
    table: Vec<u32>,
    /// Whether each stored state accepts (its length is the number of stored states).
    accepting: Vec<bool>,
    /// The states after the stored ones, when there are any: a long counted repetition
    /// whose rows are computed from one block (see [`Counted`]).
    counted: Option<Arc<Counted>>,
}

impl Dfa {
    /// The start state.
    #[inline]
    pub fn start(&self) -> u32 {
        1
    }

    /// Number of states, the dead state included.
    pub fn num_states(&self) -> usize {
        self.accepting.len() + self.counted.as_ref().map_or(0, |c| c.len())
    }

    /// Number of byte classes.
    pub fn num_classes(&self) -> usize {
        self.stride
    }

    /// The state after reading `byte` in `state` (`DEAD` if no match is reachable any more).
    #[inline(always)]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        let class = self.class_of[byte as usize] as usize;
        if (state as usize) < self.accepting.len() {
            self.table[state as usize * self.stride + class]
        } else {
            self.counted_next(state, class)
        }
    }

    /// [`Dfa::next`] from a state of the counted region.
    #[inline]
    fn counted_next(&self, state: u32, class: usize) -> u32 {
        let Some(c) = &self.counted else { return DEAD };
        let first = self.accepting.len() as u32;
        let (k, r) = c.block_row(state - first);
        counted_step(c, first, k, r, self.stride, class)
    }

    /// The moves of `state` on each of `classes` (this automaton's class numbers), pushed
    /// to `out`: a row read once (a counted state's block and row decoded once, not per
    /// class, for a walk over every class of many states).
    pub(crate) fn moves_into(&self, state: u32, classes: &[usize], out: &mut Vec<u32>) {
        if (state as usize) < self.accepting.len() {
            let row = &self.table[state as usize * self.stride..(state as usize + 1) * self.stride];
            out.extend(classes.iter().map(|&cl| row[cl]));
            return;
        }
        let Some(c) = &self.counted else { return out.extend(classes.iter().map(|_| DEAD)) };
        let first = self.accepting.len() as u32;
        let (k, r) = c.block_row(state - first);
        out.extend(classes.iter().map(|&cl| counted_step(c, first, k, r, self.stride, cl)));
    }

    /// The state after reading all of `bytes` (`DEAD` as soon as no match is reachable).
    pub fn walk(&self, mut state: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            state = self.next(state, b);
            if state == DEAD {
                return DEAD;
            }
        }
        state
    }

    /// May the input end in `state`?
    #[inline]
    pub fn is_accepting(&self, state: u32) -> bool {
        match self.accepting.get(state as usize) {
            Some(&a) => a,
            None => self.counted.as_ref().is_some_and(|c| {
                let (k, r) = c.block_row(state - self.accepting.len() as u32);
                c.accepts && c.ends[r as usize] && k >= c.min
            }),
        }
    }

    /// Does the DFA accept the whole of `bytes`?
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.is_accepting(self.walk(self.start(), bytes))
    }

    /// Does the DFA accept the empty string?
    pub fn accepts_empty(&self) -> bool {
        self.is_accepting(self.start())
    }

    /// Is the language exactly {""}?
    pub fn is_only_empty(&self) -> bool {
        // (A counted region always holds a unit's first move, reachable from the start.)
        self.accepts_empty() && self.counted.is_none() && self.table.iter().all(|&t| t == DEAD)
    }

    /// The same language plus the empty string, when that is only a matter of making the
    /// start state accepting: no transition leads back to it (`x|` for most `x`). None
    /// otherwise.
    pub fn or_empty(&self) -> Option<Dfa> {
        let start = self.start();
        if self.table.contains(&start) {
            return None;
        }
        if let Some(c) = &self.counted {
            // A start inside the region is a boundary whose acceptance is computed; one
            // before it is entered again only through `exit`.
            if self.accepting.len() <= start as usize || c.exit.contains(&start) {
                return None;
            }
        }
        let mut d = self.clone();
        d.accepting[start as usize] = true;
        Some(d)
    }

    /// The same language without the empty string (an error if nothing else is left).
    pub fn without_empty(&self, limits: &Limits, what: &str) -> Result<Dfa> {
        if self.counted.is_some() {
            return self.with_fresh_start(limits, what);
        }
        // A fresh, non-accepting start state (None) with the old start's transitions.
        Dfa::from_automaton(
            None::<u32>,
            &self.class_of,
            |s, b| {
                let t = self.next(s.unwrap_or(self.start()), b);
                (t != DEAD).then_some(Some(t))
            },
            |s| s.is_some_and(|t| self.is_accepting(t)),
            limits,
            what,
        )
    }

    /// [`Dfa::without_empty`] of an automaton with a counted region, which a subset
    /// construction would write out: a fresh, non-accepting start state with the old
    /// start's moves is stored before the others, every other state one number up (the
    /// region's rows are relative to its first state, so only its exits move).
    fn with_fresh_start(&self, limits: &Limits, what: &str) -> Result<Dfa> {
        let Some(c) = &self.counted else { return Err(Error::Internal("no counted region".into())) };
        if self.accepting.len() + 1 > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
        let up = |t: u32| if t == DEAD { DEAD } else { t + 1 };
        let representative = classes::representatives(&self.class_of);
        let mut table = Vec::with_capacity(self.table.len() + self.stride);
        table.extend_from_slice(&self.table[..self.stride]);
        table.extend(representative.iter().map(|&b| up(self.next(self.start(), b))));
        table.extend(self.table[self.stride..].iter().map(|&t| up(t)));
        let mut accepting = vec![false, false];
        accepting.extend_from_slice(&self.accepting[1..]);
        let mut region = (**c).clone();
        region.exit = region.exit.iter().map(|&t| up(t)).collect();
        Ok(Dfa { class_of: self.class_of, stride: self.stride, table, accepting, counted: Some(Arc::new(region)) })
    }

    /// Heap bytes used by the transition table.
    pub fn memory_bytes(&self) -> usize {
        self.table.len() * 4 + self.accepting.len() + self.counted.as_ref().map_or(0, |c| (c.template.len() + c.exit.len()) * 4)
    }
}

fn size_error(limits: &Limits, what: &str) -> Error {
    Error::LimitExceeded {
        limit: "dfa_size_limit",
        value: limits.dfa_size_limit,
        context: format!("the subset construction of {what}"),
    }
}
