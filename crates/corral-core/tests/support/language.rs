//! Language equality of two DFAs through the public API, with a witness.

use std::collections::{HashMap, HashSet, VecDeque};

use corral_core::automata::{Dfa, DEAD};

/// A shortest byte string that one of `a` and `b` accepts and the other does not (None:
/// they accept the same language), by breadth-first search over pairs of states.
pub fn difference(a: &Dfa, b: &Dfa) -> Option<Vec<u8>> {
    let start = (a.start(), b.start());
    let mut prev: HashMap<(u32, u32), ((u32, u32), u8)> = HashMap::new();
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(p) = queue.pop_front() {
        if a.is_accepting(p.0) != b.is_accepting(p.1) {
            let mut out = Vec::new();
            let mut cur = p;
            while cur != start {
                let (q, byte) = prev[&cur];
                out.push(byte);
                cur = q;
            }
            out.reverse();
            return Some(out);
        }
        for byte in 0..=255u8 {
            let t = (a.next(p.0, byte), b.next(p.1, byte));
            if t != (DEAD, DEAD) && seen.insert(t) {
                prev.insert(t, (p, byte));
                queue.push_back(t);
            }
        }
    }
    None
}

/// `difference` as a message for a failed comparison (empty when they agree).
pub fn describe(a: &Dfa, b: &Dfa) -> String {
    match difference(a, b) {
        None => String::new(),
        Some(w) => {
            let side = if a.matches(&w) { "only the first" } else { "only the second" };
            format!("{side} accepts {:?}", String::from_utf8_lossy(&w))
        }
    }
}
