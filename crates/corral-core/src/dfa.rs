//! A compact byte-level DFA in which every live state can still reach a match.
//!
//! State 0 is the dead state; the start state is 1. Transitions are a flat table indexed by
//! `state * stride + class_of[byte]`. States from which no accepting state is reachable are
//! merged into the dead state, so "the next state is not dead" means "this prefix can
//! still be completed" — exactly the test a token mask needs.

use std::collections::HashMap;
use std::hash::Hash;

use crate::error::{Error, Result};
use crate::limits::Limits;

/// The dead state: no continuation can match.
pub const DEAD: u32 = 0;

/// A byte DFA with byte classes, pruned to co-reachable states.
#[derive(Debug, Clone)]
pub struct Dfa {
    class_of: [u8; 256],
    stride: usize,
    /// `table[state * stride + class]` = next state (`DEAD` = 0).
    table: Vec<u32>,
    accepting: Vec<bool>,
}

impl Dfa {
    /// Builds a pruned DFA by exploring an automaton from `start`.
    ///
    /// `next(s, byte)` gives the successor (None = dead); `is_accepting(s)` tells whether the
    /// input may end in `s`. `class_of` groups bytes the automaton never distinguishes.
    pub fn from_automaton<S, N, A>(
        start: S,
        class_of: &[u8; 256],
        mut next: N,
        mut is_accepting: A,
        limits: &Limits,
        what: &str,
    ) -> Result<Dfa>
    where
        S: Copy + Eq + Hash,
        N: FnMut(S, u8) -> Option<S>,
        A: FnMut(S) -> bool,
    {
        let n_classes = class_of.iter().map(|&c| c as usize).max().unwrap_or(0) + 1;
        let mut representative = vec![0u8; n_classes];
        for b in (0..=255u8).rev() {
            representative[class_of[b as usize] as usize] = b;
        }
        // Explore reachable states (index i here = state i+1 later, before pruning).
        let mut ids: HashMap<S, u32> = HashMap::new();
        let mut states: Vec<S> = vec![start];
        ids.insert(start, 0);
        let mut edges: Vec<u32> = Vec::new(); // u32::MAX = dead
        let mut i = 0;
        while i < states.len() {
            let s = states[i];
            for &b in &representative {
                let id = match next(s, b) {
                    None => u32::MAX,
                    Some(t) => *ids.entry(t).or_insert_with(|| {
                        states.push(t);
                        (states.len() - 1) as u32
                    }),
                };
                edges.push(id);
            }
            if states.len() > limits.max_dfa_states {
                return Err(Error::LimitExceeded {
                    limit: "max_dfa_states",
                    value: limits.max_dfa_states,
                    context: format!("the DFA of {what}"),
                });
            }
            i += 1;
        }
        let n = states.len();
        let accepting_raw: Vec<bool> = states.iter().map(|&s| is_accepting(s)).collect();
        // Co-reachability: walk reverse edges from the accepting states.
        let mut reverse: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            for c in 0..n_classes {
                let t = edges[s * n_classes + c];
                if t != u32::MAX {
                    reverse[t as usize].push(s as u32);
                }
            }
        }
        let mut live = accepting_raw.clone();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
        while let Some(t) = stack.pop() {
            for &s in &reverse[t as usize] {
                if !live[s as usize] {
                    live[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        if !live[0] {
            return Err(Error::EmptyLanguage { what: what.to_string() });
        }
        // Renumber: dead = 0, start = 1, then live states in exploration order.
        let mut new_id = vec![DEAD; n];
        let mut next_id = 1u32;
        for s in 0..n {
            if live[s] {
                new_id[s] = next_id;
                next_id += 1;
            }
        }
        let total = next_id as usize;
        let mut table = vec![DEAD; total * n_classes];
        let mut accepting = vec![false; total];
        for s in 0..n {
            if !live[s] {
                continue;
            }
            let ns = new_id[s] as usize;
            accepting[ns] = accepting_raw[s];
            for c in 0..n_classes {
                let t = edges[s * n_classes + c];
                table[ns * n_classes + c] = if t == u32::MAX { DEAD } else { new_id[t as usize] };
            }
        }
        Ok(Dfa { class_of: *class_of, stride: n_classes, table, accepting })
    }

    /// The start state.
    #[inline]
    pub fn start(&self) -> u32 {
        1
    }

    /// Number of states, the dead state included.
    pub fn num_states(&self) -> usize {
        self.accepting.len()
    }

    /// Number of byte classes.
    pub fn num_classes(&self) -> usize {
        self.stride
    }

    /// The state after reading `byte` in `state` (`DEAD` if no match is reachable any more).
    #[inline(always)]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        // SAFETY-free fast path: the index is always in range by construction.
        self.table[state as usize * self.stride + self.class_of[byte as usize] as usize]
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
        self.accepting[state as usize]
    }

    /// Does the DFA accept the whole of `bytes`?
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.is_accepting(self.walk(self.start(), bytes))
    }

    /// Does the DFA accept the empty string?
    pub fn accepts_empty(&self) -> bool {
        self.is_accepting(self.start())
    }

    /// The same language without the empty string (an error if nothing else is left).
    pub fn without_empty(&self, limits: &Limits, what: &str) -> Result<Dfa> {
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

    /// Heap bytes used by the transition table.
    pub fn memory_bytes(&self) -> usize {
        self.table.len() * 4 + self.accepting.len()
    }
}
