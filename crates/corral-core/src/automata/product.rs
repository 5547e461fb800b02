//! Product constructions: intersection, difference, complement within well-formed UTF-8, and a
//! shortest string in one language but not another.

use std::hash::Hash;

use super::classes::refine;
use super::explore::co_reachable;
use super::{Dfa, DEAD};
use crate::error::Result;
use crate::limits::Limits;
use crate::util::utf8::Utf8;

#[cfg(test)]
thread_local! {
    /// States of the intersections built pair by pair on this thread (not as a counted
    /// region), for tests of which construction a case takes.
    pub(crate) static GENERAL_PRODUCT_STATES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Dfa {
    /// The DFA of every string of whole UTF-8 characters (Python's `(?s:.)*`): the universe
    /// that [`Dfa::complement`] is taken in.
    pub fn utf8_any() -> Dfa {
        let classes = Utf8::classes();
        let limits = Limits::default();
        // Seven states and never empty: this cannot fail.
        Dfa::from_automaton(Utf8::Boundary, &classes, Utf8::next, |s| s == Utf8::Boundary, &limits, "(?s:.)*")
            .unwrap_or_else(|_| unreachable!("the UTF-8 automaton is small and non-empty"))
    }

    /// The strings accepted by both `self` and `other` (product construction).
    ///
    /// `Error::EmptyLanguage` if there is none; `Error::LimitExceeded` past
    /// `limits.max_dfa_states`.
    pub fn intersect(&self, other: &Dfa, limits: &Limits, what: &str) -> Result<Dfa> {
        // A bounded string and a pattern: one block of pairs, not one per count.
        if let Some(d) = self.intersect_counted(other, limits, what)? {
            return Ok(d);
        }
        if let Some(d) = other.intersect_counted(self, limits, what)? {
            return Ok(d);
        }
        let class_of = refine(&[&self.class_of, &other.class_of]);
        let product = Dfa::from_automaton(
            (self.start(), other.start()),
            &class_of,
            |(a, b), byte| {
                let (a, b) = (self.next(a, byte), other.next(b, byte));
                // Both are pruned: a dead side can never accept again.
                (a != DEAD && b != DEAD).then_some((a, b))
            },
            |(a, b)| self.is_accepting(a) && other.is_accepting(b),
            limits,
            what,
        );
        #[cfg(test)]
        if let Ok(d) = &product {
            GENERAL_PRODUCT_STATES.with(|n| n.set(n.get() + d.num_states()));
        }
        product
    }

    /// The strings accepted by `self` and not by `other`: one product, where a complement
    /// then an intersection would first complete `other` over every byte.
    ///
    /// `Error::EmptyLanguage` if there is none; `Error::LimitExceeded` past
    /// `limits.max_dfa_states`.
    pub fn minus(&self, other: &Dfa, limits: &Limits, what: &str) -> Result<Dfa> {
        if let Some(d) = self.minus_by_rows(other, limits) {
            return Ok(d);
        }
        let class_of = refine(&[&self.class_of, &other.class_of]);
        Dfa::from_automaton(
            (self.start(), other.start()),
            &class_of,
            // `other` may die (its dead state leads to itself): from there on, `self` alone.
            |(a, b), byte| {
                let a = self.next(a, byte);
                (a != DEAD).then(|| (a, other.next(b, byte)))
            },
            |(a, b)| self.is_accepting(a) && !other.is_accepting(b),
            limits,
            what,
        )
    }

    /// [`Dfa::minus`] written row by row, without hashing: the states where `other` is
    /// still alive are pairs (found breadth first, numbered through a flat table), and
    /// once `other` dies the rest is a copy of `self`. An object's "any key but the named
    /// ones" is such a product of a small automaton and a large trie. None when it does not
    /// apply (a counted region, too many pairs for the table, or a state that cannot reach
    /// a match, which the general construction prunes).
    fn minus_by_rows(&self, other: &Dfa, limits: &Limits) -> Option<Dfa> {
        const MAX_PAIRS: usize = 1 << 20;
        if self.counted.is_some() || other.counted.is_some() {
            return None;
        }
        let (na, nb) = (self.accepting.len(), other.accepting.len());
        if na.checked_mul(nb)? > MAX_PAIRS {
            return None;
        }
        let class_of = refine(&[&self.class_of, &other.class_of]);
        let n_classes = class_of.iter().map(|&c| c as usize).max().unwrap_or(0) + 1;
        let (mut ca, mut cb) = (vec![0usize; n_classes], vec![0usize; n_classes]);
        for b in 0..256 {
            ca[class_of[b] as usize] = self.class_of[b] as usize;
            cb[class_of[b] as usize] = other.class_of[b] as usize;
        }
        // Pairs get ids 1.. in the order they are found; `self`'s states come after them.
        let mut pair_id = vec![0u32; na * nb];
        let mut pairs: Vec<(u32, u32)> = vec![(self.start(), other.start())];
        pair_id[self.start() as usize * nb + other.start() as usize] = 1;
        let mut rows: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < pairs.len() {
            let (a, b) = pairs[i];
            for c in 0..n_classes {
                let a2 = self.table[a as usize * self.stride + ca[c]];
                let b2 = other.table[b as usize * other.stride + cb[c]];
                rows.push(if a2 == DEAD {
                    DEAD
                } else if b2 == DEAD {
                    // Marked: a state of `self`, renumbered once the pairs are counted.
                    u32::MAX - a2
                } else {
                    let slot = &mut pair_id[a2 as usize * nb + b2 as usize];
                    if *slot == 0 {
                        pairs.push((a2, b2));
                        *slot = pairs.len() as u32;
                    }
                    *slot
                });
            }
            if pairs.len() + na > limits.max_dfa_states {
                return None;
            }
            i += 1;
        }
        let offset = pairs.len() as u32; // self's state `a` (a >= 1) becomes `offset + a`
        let total = 1 + pairs.len() + (na - 1);
        let mut table = vec![DEAD; n_classes];
        table.extend(rows.iter().map(|&t| if t > u32::MAX - na as u32 { offset + (u32::MAX - t) } else { t }));
        for a in 1..na {
            table.extend((0..n_classes).map(|c| match self.table[a * self.stride + ca[c]] {
                DEAD => DEAD,
                t => offset + t,
            }));
        }
        let mut accepting = vec![false];
        accepting.extend(pairs.iter().map(|&(a, b)| self.accepting[a as usize] && !other.accepting[b as usize]));
        accepting.extend_from_slice(&self.accepting[1..]);
        debug_assert_eq!(table.len(), total * n_classes);
        let d = Dfa { class_of, stride: n_classes, table, accepting, counted: None };
        // Every pair must still reach a match (else the general construction prunes it).
        d.all_live(pairs.len() + 1).then(|| d.with_coarsest_classes())
    }

    /// Can each of the states `1..upto` reach an accepting state?
    fn all_live(&self, upto: usize) -> bool {
        let live = co_reachable(&self.table, self.stride, &self.accepting, DEAD);
        live[1..upto].iter().all(|&l| l)
    }

    /// The strings of whole UTF-8 characters that `self` does not accept (the complement
    /// relative to `(?s:.)*`, so the result never accepts malformed UTF-8).
    ///
    /// `Error::EmptyLanguage` if `self` accepts every such string; `Error::LimitExceeded`
    /// past `limits.max_dfa_states`.
    pub fn complement(&self, limits: &Limits, what: &str) -> Result<Dfa> {
        let class_of = refine(&[&self.class_of, &Utf8::classes()]);
        Dfa::from_automaton(
            (Utf8::Boundary, self.start()),
            &class_of,
            // `self` may be dead: the dead state's row leads to itself and never accepts,
            // which is exactly "not in L" from here on.
            |(u, s), byte| Some((u.next(byte)?, self.next(s, byte))),
            |(u, s)| u == Utf8::Boundary && !self.is_accepting(s),
            limits,
            what,
        )
    }

    /// A shortest byte string on which `self` and `other` disagree (None: same language),
    /// by breadth-first search over pairs of states.
    pub(crate) fn difference(&self, other: &Dfa) -> Option<Vec<u8>> {
        let mut prev: crate::util::hash::HashMap<(u32, u32), ((u32, u32), u8)> = Default::default();
        let start = (self.start(), other.start());
        let mut queue = std::collections::VecDeque::from([start]);
        let mut seen = std::collections::HashSet::from([start]);
        while let Some(p) = queue.pop_front() {
            if self.is_accepting(p.0) != other.is_accepting(p.1) {
                return Some(bfs_path(&prev, start, p));
            }
            for b in 0..=255u8 {
                let t = (self.next(p.0, b), other.next(p.1, b));
                if t != (DEAD, DEAD) && seen.insert(t) {
                    prev.insert(t, (p, b));
                    queue.push_back(t);
                }
            }
        }
        None
    }
}

/// The bytes of a breadth-first search's path from `start` to `end`, read back through
/// `prev` (each reached node's predecessor and the byte that led from it).
pub(crate) fn bfs_path<K: Copy + Eq + Hash>(prev: &crate::util::hash::HashMap<K, (K, u8)>, start: K, end: K) -> Vec<u8> {
    let mut out = Vec::new();
    let mut cur = end;
    while cur != start {
        let (q, b) = prev[&cur];
        out.push(b);
        cur = q;
    }
    out.reverse();
    out
}
