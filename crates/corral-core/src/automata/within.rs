//! Bounded sameness of two states: do they read every string-safe text of up to `depth`
//! bytes alike (alive or dead, accepting or not, after each byte)?
//!
//! Inside a long counted string (`maxLength: 120`, a domain label of at most 63
//! characters) each token moves to a state never seen before, yet every state far enough
//! from the count's bounds reads the short string-safe tokens (those of a
//! `crate::vocab::StringSafeSlice`) the same way. A lexer mask of such a state can take
//! the slice's part from an earlier state's mask once this check says they agree within
//! the slice's bound; only the tokens outside the slice are walked again. Stored DFAs do
//! not number such states alike (only a counted region does, see
//! [`Dfa::equivalent_within`]), hence a check per pair of states.

use super::{Dfa, DEAD};
use crate::util::bytes::is_string_safe_byte;
use crate::util::hash::FastMap;

impl Dfa {
    /// Do states `a` and `b` read every text of 1 to `depth` string-safe bytes alike: the
    /// same bytes live, and the same acceptance after each? A breadth-first search over
    /// pairs of states (one representative byte per class), each pair once; false where
    /// it would meet more than `max_pairs` pairs (a conservative answer: the caller then
    /// computes instead of borrowing).
    pub fn same_within(&self, a: u32, b: u32, depth: usize, max_pairs: usize) -> bool {
        if a == b {
            return true;
        }
        let bytes = self.string_safe_representatives();
        let mut seen: FastMap<(u32, u32), ()> = FastMap::default();
        let (mut frontier, mut next) = (vec![(a, b)], Vec::new());
        for _ in 0..depth {
            next.clear();
            for &(x, y) in &frontier {
                for &byte in &bytes {
                    let (x2, y2) = (self.next(x, byte), self.next(y, byte));
                    if x2 == y2 {
                        continue; // the same state: the same future
                    }
                    if x2 == DEAD || y2 == DEAD || self.is_accepting(x2) != self.is_accepting(y2) {
                        return false;
                    }
                    if seen.insert((x2, y2), ()).is_none() {
                        if seen.len() > max_pairs {
                            return false;
                        }
                        next.push((x2, y2));
                    }
                }
            }
            if next.is_empty() {
                return true;
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        true
    }

    /// One string-safe byte per byte class that has one.
    fn string_safe_representatives(&self) -> Vec<u8> {
        let mut seen = [false; 256];
        let mut out = Vec::new();
        for b in (0..=255u8).filter(|&b| is_string_safe_byte(b)) {
            let class = self.class_of[b as usize] as usize;
            if !seen[class] {
                seen[class] = true;
                out.push(b);
            }
        }
        out
    }
}
