//! Product constructions: intersection, difference, complement within well-formed UTF-8, and a
//! shortest string in one language but not another.

use std::hash::Hash;

use super::classes::refine;
use super::{Dfa, DEAD};
use crate::error::Result;
use crate::limits::Limits;
use crate::util::utf8::Utf8;

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
        let class_of = refine(&[&self.class_of, &other.class_of]);
        Dfa::from_automaton(
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
        )
    }

    /// The strings accepted by `self` and not by `other`: one product, where a complement
    /// then an intersection would first complete `other` over every byte.
    ///
    /// `Error::EmptyLanguage` if there is none; `Error::LimitExceeded` past
    /// `limits.max_dfa_states`.
    pub fn minus(&self, other: &Dfa, limits: &Limits, what: &str) -> Result<Dfa> {
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
        let mut prev: std::collections::HashMap<(u32, u32), ((u32, u32), u8)> = Default::default();
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
pub(crate) fn bfs_path<K: Copy + Eq + Hash>(prev: &std::collections::HashMap<K, (K, u8)>, start: K, end: K) -> Vec<u8> {
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
