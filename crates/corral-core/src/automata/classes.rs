//! Byte classes: bytes that no state of an automaton tells apart share a class, and a
//! table has one column per class.

use super::Dfa;

/// The coarsest byte partition that refines every given one (so that a product automaton
/// can be explored over one representative byte per class).
pub(crate) fn refine(partitions: &[&[u8; 256]]) -> [u8; 256] {
    // One partition at a time: a byte's new class is its (class so far, class in `p`)
    // pair, numbered by first occurrence (so the result does not depend on the order of
    // equal partitions, and matches numbering by the bytes' full tuples).
    let mut class_of = [0u8; 256];
    let mut n = 1usize;
    let mut ids: Vec<u16> = Vec::new();
    for p in partitions {
        let np = p.iter().map(|&c| c as usize).max().unwrap_or(0) + 1;
        ids.clear();
        ids.resize(n * np, u16::MAX);
        let mut count = 0u16;
        for b in 0..256 {
            let k = class_of[b] as usize * np + p[b] as usize;
            if ids[k] == u16::MAX {
                ids[k] = count;
                count += 1;
            }
            // At most 256 distinct pairs (one per byte), so the id fits in a u8.
            class_of[b] = ids[k] as u8;
        }
        n = count as usize;
    }
    class_of
}

/// The least byte of each class of `class_of` (classes numbered from 0 with none
/// skipped, as everywhere here): the byte a construction reads a column by.
pub(crate) fn representatives(class_of: &[u8; 256]) -> Vec<u8> {
    let n = class_of.iter().map(|&c| c as usize).max().unwrap_or(0) + 1;
    let mut representative = vec![0u8; n];
    for b in (0..=255u8).rev() {
        representative[class_of[b as usize] as usize] = b;
    }
    representative
}

impl Dfa {
    /// The same automaton over the coarsest byte classes: bytes whose moves agree from
    /// every state share one. A construction's classes only separate what its inputs did
    /// (the regex engine splits at every range end), and every table built from this one,
    /// a long string's counter above all, is as wide as its classes.
    pub(super) fn with_coarsest_classes(mut self) -> Dfa {
        debug_assert!(self.counted.is_none(), "only fresh, fully stored automata are recoded");
        let (n, k) = (self.num_states(), self.stride);
        // A hash of each class's column, then exact comparison within equal hashes.
        let mut hash = vec![0u64; k];
        for row in self.table.chunks_exact(k) {
            for (h, &t) in hash.iter_mut().zip(row) {
                *h = (h.rotate_left(5) ^ t as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
            }
        }
        let same = |a: usize, b: usize| hash[a] == hash[b] && (0..n).all(|s| self.table[s * k + a] == self.table[s * k + b]);
        let mut new_class = vec![0u8; k];
        let mut kept: Vec<usize> = Vec::new(); // the first old class of each new class
        for (c, class) in new_class.iter_mut().enumerate() {
            *class = match kept.iter().position(|&r| same(r, c)) {
                Some(j) => j as u8,
                None => {
                    kept.push(c);
                    (kept.len() - 1) as u8
                }
            };
        }
        if kept.len() == k {
            return self;
        }
        let stride = kept.len();
        let mut table = Vec::with_capacity(n * stride);
        for row in self.table.chunks_exact(k) {
            table.extend(kept.iter().map(|&c| row[c]));
        }
        for b in 0..256 {
            self.class_of[b] = new_class[self.class_of[b] as usize];
        }
        Dfa { class_of: self.class_of, stride, table, accepting: self.accepting, counted: None }
    }
}
