//! Bounded sameness of two states: do they read every string-safe text of up to `depth`
//! bytes alike (alive or dead, accepting or not, after each byte)? And how deep do they
//! read every text alike?
//!
//! Inside a long counted string (`maxLength: 120`, a domain label of at most 63
//! characters) each token moves to a state never seen before, yet every state far enough
//! from the count's bounds reads the short string-safe tokens (those of a
//! `crate::vocab::StringSafeSlice`) the same way. A lexer mask of such a state can take
//! the slice's part from an earlier state's mask once this check says they agree within
//! the slice's bound; only the tokens outside the slice are walked again. Stored DFAs do
//! not number such states alike (only a counted region does, see
//! [`Dfa::equivalent_within`]), hence a check per pair of states. Inside a counted
//! character class (a user name of at most 39 characters) no slice applies, but two
//! states far from the bound read every text alike up to the bound: a mask takes its
//! tokens up to that depth from the other state's, and walks only the few longer ones.

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
        self.agreeing_layers(a, b, &self.string_safe_representatives(), depth, max_pairs) >= depth
    }

    /// How many bytes deep states `a` and `b` read every text alike (any bytes): the
    /// largest `d <= max_depth` such that every text of 1 to `d` bytes leaves both alive
    /// or both dead, and both accepting or neither. `max_depth` where they never part (or
    /// are the same state). Each pair of states is met once; past `max_pairs` pairs the
    /// depth searched so far is the answer (a conservative one: it may be deeper).
    ///
    /// Tokens of at most that many bytes are read alike from the two states, so a mask
    /// may take its short tokens from the other state's (see
    /// `crate::index::lexer_mask::from_depth_sibling`).
    pub fn agreeing_depth(&self, a: u32, b: u32, max_depth: usize, max_pairs: usize) -> usize {
        self.agreeing_layers(a, b, &self.class_representatives(), max_depth, max_pairs)
    }

    /// The pair search behind [`Dfa::same_within`] and [`Dfa::agreeing_depth`] over texts
    /// of `bytes` (one per class that matters): the number of layers, up to `depth`, in
    /// which every pair reached agrees.
    fn agreeing_layers(&self, a: u32, b: u32, bytes: &[u8], depth: usize, max_pairs: usize) -> usize {
        self.search_layers(a, b, bytes, depth, max_pairs, true)
    }

    /// [`Dfa::agreeing_layers`]; with `by_region`, a pair of counted-region states in the
    /// same row is answered from the region's structure (see `Dfa::region_reads_alike`)
    /// rather than searched below: inside a long counted string the search would otherwise
    /// step through a pair per character and UTF-8 position of the whole depth (0.3-0.5 ms
    /// at a 128-byte bound). Without it, the plain search (the reference for tests).
    pub(super) fn search_layers(&self, a: u32, b: u32, bytes: &[u8], depth: usize, max_pairs: usize, by_region: bool) -> usize {
        if a == b {
            return depth;
        }
        let region = by_region.then(|| self.region_exits_unseen(bytes));
        // Agree on every text of `left` more bytes, as the region shows?
        let alike = |x: u32, y: u32, left: usize| region.is_some_and(|exits| self.region_reads_alike(x, y, exits, left));
        if alike(a, b, depth) {
            return depth;
        }
        let mut seen: FastMap<(u32, u32), ()> = FastMap::default();
        let (mut frontier, mut next) = (vec![(a, b)], Vec::new());
        for layer in 0..depth {
            next.clear();
            for &(x, y) in &frontier {
                for &byte in bytes {
                    let (x2, y2) = (self.next(x, byte), self.next(y, byte));
                    if x2 == y2 {
                        continue; // the same state: the same future
                    }
                    if x2 == DEAD || y2 == DEAD || self.is_accepting(x2) != self.is_accepting(y2) {
                        return layer;
                    }
                    if alike(x2, y2, depth - layer - 1) {
                        continue;
                    }
                    if seen.insert((x2, y2), ()).is_none() {
                        if seen.len() > max_pairs {
                            return layer;
                        }
                        next.push((x2, y2));
                    }
                }
            }
            if next.is_empty() {
                return depth;
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        depth
    }

    /// One byte per byte class.
    pub(super) fn class_representatives(&self) -> Vec<u8> {
        let mut seen = [false; 256];
        (0..=255u8)
            .filter(|&b| {
                let class = self.class_of[b as usize] as usize;
                !std::mem::replace(&mut seen[class], true)
            })
            .collect()
    }

    /// One string-safe byte per byte class that has one.
    pub(super) fn string_safe_representatives(&self) -> Vec<u8> {
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
