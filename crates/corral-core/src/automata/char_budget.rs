//! Character budgets: states inside a string whose length is bounded in characters.
//!
//! Inside a JSON string with a small `maxLength` (or an object key under `propertyNames`
//! with one), a state counts characters: any string-safe character leads to one same next
//! state, until the count runs out and every character kills. Which string-safe fragment
//! a state keeps alive then depends only on how many characters the fragment starts, so a
//! mask takes the vocabulary's precomputed token sets by character count (see
//! `crate::vocab::slices`) instead of walking the trie, which such a state barely prunes
//! (a token of three characters may be nine bytes long).

use super::string_safe::safe_moves;
use super::{Dfa, DEAD};
use crate::util::bytes::is_string_safe_byte;

/// Longest budget [`Dfa::string_safe_char_budget`] reports (the vocabulary keeps token
/// sets by character count up to this).
pub const MAX_CHAR_BUDGET: usize = 16;

/// What reading one whole string-safe character from a state leads to.
enum CharStep {
    /// Every character kills at its first byte.
    AllDead,
    /// Every character, whatever it is, leads to this state, and no byte of one kills.
    To(u32),
    /// Anything else (characters lead to different states, or some die part way).
    Mixed,
}

impl Dfa {
    /// The number of characters `k` (at most [`MAX_CHAR_BUDGET`]) such that, from `state`,
    /// a string-safe fragment (see `vocab::slices::is_string_safe_fragment`) keeps the DFA
    /// alive exactly when it starts at most `k` characters (the last one possibly
    /// unfinished). None where that does not hold: a state that is not such a counter, or
    /// (unless `may_accept`) where a fragment can pass an accepting state.
    pub fn string_safe_char_budget(&self, state: u32, may_accept: bool) -> Option<usize> {
        // Cheap first (most states asked are no counter): a counter sends every ASCII
        // character to one same state, not back to itself.
        if !self.ascii_counts(state) {
            return None;
        }
        // One representative byte per (class, UTF-8 class): a counter's check reads a few
        // dozen bytes per character instead of every byte and continuation.
        let moves = safe_moves(self);
        let mut q = state;
        for k in 0..=MAX_CHAR_BUDGET {
            if !self.ascii_counts(q) {
                return None;
            }
            match self.char_step(&moves, q, may_accept)? {
                CharStep::AllDead => return Some(k),
                // A state that reads a character back into itself is free text, not a count.
                CharStep::To(next) if next != q => q = next,
                _ => return None,
            }
        }
        None
    }

    /// Do all string-safe ASCII characters lead from `q` to one same state (dead, or
    /// another than `q`)? Every counter's state passes; free text and most other states
    /// fail at once.
    fn ascii_counts(&self, q: u32) -> bool {
        let first = self.next(q, b'a');
        first != q && (0x20..0x7fu8).filter(|&b| is_string_safe_byte(b)).all(|b| self.next(q, b) == first)
    }

    /// One whole string-safe character from `q` (a state between characters); None where
    /// a byte of it reaches an accepting state and `may_accept` is false.
    fn char_step(&self, moves: &[Vec<(u8, u8, u16)>; 8], q: u32, may_accept: bool) -> Option<CharStep> {
        // (DFA state, UTF-8 state index) pairs part way through a character, each once.
        let mut frontier: Vec<(u32, u8)> = vec![(q, 0)];
        let mut seen: Vec<(u32, u8)> = Vec::new();
        let (mut end, mut first_lives, mut some_die) = (None::<u32>, false, false);
        while let Some((x, u)) = frontier.pop() {
            for &(b, u2, _) in &moves[u as usize] {
                let y = self.next(x, b);
                if y == DEAD {
                    some_die = true;
                    continue;
                }
                first_lives |= u == 0;
                if !may_accept && self.is_accepting(y) {
                    return None;
                }
                if u2 == 0 {
                    if end.is_some_and(|e| e != y) {
                        return Some(CharStep::Mixed);
                    }
                    end = Some(y);
                } else if !seen.contains(&(y, u2)) {
                    seen.push((y, u2));
                    frontier.push((y, u2));
                }
            }
        }
        Some(match end {
            None if !first_lives => CharStep::AllDead,
            Some(e) if !some_die => CharStep::To(e),
            _ => CharStep::Mixed,
        })
    }
}
