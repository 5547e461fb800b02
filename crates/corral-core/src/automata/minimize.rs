//! Hopcroft minimization of a stored DFA.

use super::{Dfa, DEAD};

/// DFAs built by subset construction ([`Dfa::from_expr`]) with this many states or more,
/// up to [`MINIMIZE_UP_TO`], are minimized (Hopcroft: well under a millisecond there).
pub(crate) const MINIMIZE_FROM: usize = 32;

/// See [`MINIMIZE_FROM`].
pub(crate) const MINIMIZE_UP_TO: usize = 4096;

/// Automata with a counted region of more states than this are not minimized (written
/// out, they would be their count times their block of rows).
const MINIMIZE_REGION_UP_TO: usize = 1 << 18;

impl Dfa {
    /// The minimal DFA of the same language (Hopcroft's partition refinement, O(k·n·log n)
    /// for n states and k byte classes; states in order of first reach from the start).
    /// Pruned DFAs only, as every [`Dfa`] is: the dead state stays 0 and the start 1.
    pub fn minimized(&self) -> Dfa {
        if self.counted.is_some() {
            // A counted region is minimized written out while that stays small; a longer
            // one is kept as it is (its block of rows holds no redundant count).
            if self.num_states() > MINIMIZE_REGION_UP_TO {
                return self.clone();
            }
            return self.stored().minimized();
        }
        let preds = Predecessors::of(self);
        let mut part = Partition::new(&self.accepting);
        // Splitters waiting: a block, applied for every class (Hopcroft's "smaller half").
        let mut waiting: Vec<u32> = vec![if part.first.len() == 2 && part.len(1) < part.len(0) { 1 } else { 0 }];
        let mut in_waiting = vec![false; part.first.len()];
        in_waiting[waiting[0] as usize] = true;
        let mut splitter: Vec<u32> = Vec::new();
        while let Some(b) = waiting.pop() {
            in_waiting[b as usize] = false;
            splitter.clear();
            splitter.extend_from_slice(part.members(b as usize));
            for c in 0..self.stride {
                // Mark the states that move into the splitter on class c, then split.
                for &t in &splitter {
                    for &s in preds.of_class(c, t) {
                        part.mark(s);
                    }
                }
                part.split_marked(&mut waiting, &mut in_waiting);
            }
        }
        self.quotient(&part.block, part.first.len())
    }

    /// The automaton whose states are the blocks of `block` (one per state, `count` in
    /// all), numbered dead 0, start 1, then by first reach (breadth first).
    fn quotient(&self, block: &[u32], count: usize) -> Dfa {
        let mut new_id = vec![u32::MAX; count];
        new_id[block[0] as usize] = DEAD;
        let mut order = vec![1usize];
        new_id[block[1] as usize] = 1;
        let mut total = 2u32;
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            for &t in &self.table[s * self.stride..(s + 1) * self.stride] {
                let b = block[t as usize] as usize;
                if new_id[b] == u32::MAX {
                    new_id[b] = total;
                    total += 1;
                    order.push(t as usize);
                }
            }
            i += 1;
        }
        let mut table = vec![DEAD; total as usize * self.stride];
        let mut accepting = vec![false; total as usize];
        for &s in &order {
            let ns = new_id[block[s] as usize] as usize;
            accepting[ns] = self.accepting[s];
            for c in 0..self.stride {
                table[ns * self.stride + c] = new_id[block[self.table[s * self.stride + c] as usize] as usize];
            }
        }
        Dfa { class_of: self.class_of, stride: self.stride, table, accepting, counted: None }
    }
}

/// Predecessors by (class, target): `pred[at[c * n + t]..at[c * n + t + 1]]`.
struct Predecessors {
    n: usize,
    at: Vec<u32>,
    pred: Vec<u32>,
}

impl Predecessors {
    fn of(dfa: &Dfa) -> Predecessors {
        let (n, k) = (dfa.num_states(), dfa.stride);
        let mut at = vec![0u32; k * n + 1];
        for row in dfa.table.chunks_exact(k) {
            for (c, &t) in row.iter().enumerate() {
                at[c * n + t as usize + 1] += 1;
            }
        }
        for i in 1..at.len() {
            at[i] += at[i - 1];
        }
        let mut pred = vec![0u32; k * n];
        let mut fill = at.clone();
        for (s, row) in dfa.table.chunks_exact(k).enumerate() {
            for (c, &t) in row.iter().enumerate() {
                let slot = &mut fill[c * n + t as usize];
                pred[*slot as usize] = s as u32;
                *slot += 1;
            }
        }
        Predecessors { n, at, pred }
    }

    /// The states that move to `t` on class `c`.
    fn of_class(&self, c: usize, t: u32) -> &[u32] {
        let i = c * self.n + t as usize;
        &self.pred[self.at[i] as usize..self.at[i + 1] as usize]
    }
}

/// A refinable partition of the states: block b holds `elems[first[b]..end[b]]`; while a
/// splitter is applied, its marked states are moved to `elems[first[b]..mid[b]]`.
struct Partition {
    elems: Vec<u32>,
    /// Each state's index in `elems`.
    loc: Vec<u32>,
    /// Each state's block.
    block: Vec<u32>,
    first: Vec<u32>,
    end: Vec<u32>,
    mid: Vec<u32>,
    /// Blocks with marked states, to split.
    touched: Vec<u32>,
}

impl Partition {
    /// Rejecting states, then accepting ones.
    fn new(accepting: &[bool]) -> Partition {
        let n = accepting.len();
        let mut elems: Vec<u32> = (0..n as u32).filter(|&s| !accepting[s as usize]).collect();
        let rejecting = elems.len();
        elems.extend((0..n as u32).filter(|&s| accepting[s as usize]));
        let mut loc = vec![0u32; n];
        for (i, &s) in elems.iter().enumerate() {
            loc[s as usize] = i as u32;
        }
        let block: Vec<u32> = (0..n).map(|s| accepting[s] as u32).collect();
        let (mut first, mut end) = (vec![0u32, rejecting as u32], vec![rejecting as u32, n as u32]);
        if rejecting == n {
            // No accepting state: only the dead state (pruned DFAs always accept something).
            first.pop();
            end.pop();
            end[0] = n as u32;
        }
        let mid = first.clone();
        Partition { elems, loc, block, first, end, mid, touched: Vec::new() }
    }

    fn len(&self, b: usize) -> u32 {
        self.end[b] - self.first[b]
    }

    fn members(&self, b: usize) -> &[u32] {
        &self.elems[self.first[b] as usize..self.end[b] as usize]
    }

    /// Marks state `s`: moves it into its block's marked prefix.
    fn mark(&mut self, s: u32) {
        let y = self.block[s as usize] as usize;
        let at = self.loc[s as usize];
        if at < self.mid[y] {
            return; // marked already
        }
        if self.mid[y] == self.first[y] {
            self.touched.push(y as u32);
        }
        let other = self.elems[self.mid[y] as usize];
        self.elems.swap(at as usize, self.mid[y] as usize);
        self.loc[other as usize] = at;
        self.loc[s as usize] = self.mid[y];
        self.mid[y] += 1;
    }

    /// Splits each touched block into its marked and unmarked states, queueing a half as
    /// a splitter (both halves when the block was waiting; else the smaller is enough).
    fn split_marked(&mut self, waiting: &mut Vec<u32>, in_waiting: &mut Vec<bool>) {
        for i in 0..self.touched.len() {
            let y = self.touched[i] as usize;
            if self.mid[y] == self.end[y] {
                self.mid[y] = self.first[y];
                continue;
            }
            let z = self.first.len();
            self.first.push(self.first[y]);
            self.end.push(self.mid[y]);
            self.mid.push(self.first[y]);
            // `y` keeps the unmarked states, none of them marked (`mid[y]` is its start).
            self.first[y] = self.mid[y];
            for &s in &self.elems[self.first[z] as usize..self.end[z] as usize] {
                self.block[s as usize] = z as u32;
            }
            in_waiting.push(false);
            let add = if in_waiting[y] || self.len(z) <= self.len(y) { z } else { y };
            in_waiting[add] = true;
            waiting.push(add as u32);
        }
        self.touched.clear();
    }
}
