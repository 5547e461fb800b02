//! Exploring a deterministic automaton, given by its step function, into a pruned
//! [`Dfa`]: states reached from the start, kept only if they can still reach a match,
//! renumbered with 0 = dead and 1 = start.

use std::hash::Hash;

use super::classes::representatives;
use super::{too_many_states, Dfa, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

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
        let representative = representatives(class_of);
        let n_classes = representative.len();
        // Explore reachable states (index i here = state i+1 later, before pruning).
        let mut ids: FastMap<S, u32> = FastMap::default();
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
                return Err(too_many_states(limits, what));
            }
            crate::util::interrupt::check()?;
            i += 1;
        }
        let n = states.len();
        let accepting_raw: Vec<bool> = states.iter().map(|&s| is_accepting(s)).collect();
        let live = co_reachable(&edges, n_classes, &accepting_raw, u32::MAX);
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
        Ok(Dfa { class_of: *class_of, stride: n_classes, table, accepting, counted: None }.with_coarsest_classes())
    }
}

/// Which states can reach an accepting one: a walk of the reverse edges from the
/// accepting states. `rows[s * stride + c]` is state `s`'s move on class `c`, `none`
/// marks no move.
pub(super) fn co_reachable(rows: &[u32], stride: usize, accepting: &[bool], none: u32) -> Vec<bool> {
    let n = accepting.len();
    let mut reverse: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (s, row) in rows.chunks_exact(stride).enumerate().take(n) {
        for &t in row.iter().filter(|&&t| t != none) {
            reverse[t as usize].push(s as u32);
        }
    }
    let mut live = accepting.to_vec();
    let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
    while let Some(t) = stack.pop() {
        for &s in &reverse[t as usize] {
            if !live[s as usize] {
                live[s as usize] = true;
                stack.push(s);
            }
        }
    }
    live
}
