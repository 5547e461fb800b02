//! Hopcroft minimization of a stored DFA.

use super::{Dfa, DEAD};

/// DFAs built by subset construction ([`Dfa::from_expr`]) with this many states or more,
/// up to [`MINIMIZE_UP_TO`], are minimized (Hopcroft: well under a millisecond there).
pub(crate) const MINIMIZE_FROM: usize = 32;

/// See [`MINIMIZE_FROM`].
pub(crate) const MINIMIZE_UP_TO: usize = 4096;

impl Dfa {
    /// The minimal DFA of the same language (Hopcroft's partition refinement, O(k·n·log n)
    /// for n states and k byte classes; states in order of first reach from the start).
    /// Pruned DFAs only, as every [`Dfa`] is: the dead state stays 0 and the start 1.
    pub fn minimized(&self) -> Dfa {
        if self.counted.is_some() {
            return self.stored().minimized();
        }
        let (n, k) = (self.num_states(), self.stride);
        // Predecessors by (class, target): `pred[pred_at[c * n + t]..pred_at[c * n + t + 1]]`.
        let mut pred_at = vec![0u32; k * n + 1];
        for row in self.table.chunks_exact(k) {
            for (c, &t) in row.iter().enumerate() {
                pred_at[c * n + t as usize + 1] += 1;
            }
        }
        for i in 1..pred_at.len() {
            pred_at[i] += pred_at[i - 1];
        }
        let mut pred = vec![0u32; k * n];
        let mut fill = pred_at.clone();
        for (s, row) in self.table.chunks_exact(k).enumerate() {
            for (c, &t) in row.iter().enumerate() {
                let at = &mut fill[c * n + t as usize];
                pred[*at as usize] = s as u32;
                *at += 1;
            }
        }
        // A refinable partition: block b holds `elems[first[b]..end[b]]`; while a splitter is
        // applied, its marked states are moved to `elems[first[b]..mid[b]]`.
        let mut elems: Vec<u32> = (0..n as u32).filter(|&s| !self.accepting[s as usize]).collect();
        let rejecting = elems.len();
        elems.extend((0..n as u32).filter(|&s| self.accepting[s as usize]));
        let mut loc = vec![0u32; n];
        for (i, &s) in elems.iter().enumerate() {
            loc[s as usize] = i as u32;
        }
        let mut block: Vec<u32> = (0..n).map(|s| self.accepting[s] as u32).collect();
        let (mut first, mut end) = (vec![0u32, rejecting as u32], vec![rejecting as u32, n as u32]);
        if rejecting == n {
            // No accepting state: only the dead state (pruned DFAs always accept something).
            first.pop();
            end.pop();
            end[0] = n as u32;
        }
        let mut mid = first.clone();
        // Splitters waiting: a block, applied for every class (Hopcroft's "smaller half").
        let mut waiting: Vec<u32> = vec![if first.len() == 2 && end[1] - first[1] < end[0] - first[0] { 1 } else { 0 }];
        let mut in_waiting = vec![false; first.len()];
        in_waiting[waiting[0] as usize] = true;
        let mut splitter: Vec<u32> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        while let Some(b) = waiting.pop() {
            in_waiting[b as usize] = false;
            splitter.clear();
            splitter.extend_from_slice(&elems[first[b as usize] as usize..end[b as usize] as usize]);
            for c in 0..k {
                // Mark the states that move into the splitter on class c.
                for &t in &splitter {
                    let range = pred_at[c * n + t as usize] as usize..pred_at[c * n + t as usize + 1] as usize;
                    for &s in &pred[range] {
                        let y = block[s as usize] as usize;
                        let at = loc[s as usize];
                        if at < mid[y] {
                            continue; // marked already
                        }
                        if mid[y] == first[y] {
                            touched.push(y as u32);
                        }
                        let other = elems[mid[y] as usize];
                        elems.swap(at as usize, mid[y] as usize);
                        loc[other as usize] = at;
                        loc[s as usize] = mid[y];
                        mid[y] += 1;
                    }
                }
                // Split each touched block into its marked and unmarked states.
                for y in touched.drain(..) {
                    let y = y as usize;
                    if mid[y] == end[y] {
                        mid[y] = first[y];
                        continue;
                    }
                    let z = first.len();
                    first.push(first[y]);
                    end.push(mid[y]);
                    mid.push(first[y]);
                    // `y` keeps the unmarked states, none of them marked (`mid[y]` is its start).
                    first[y] = mid[y];
                    for &s in &elems[first[z] as usize..end[z] as usize] {
                        block[s as usize] = z as u32;
                    }
                    // Both halves when `y` was waiting; else the smaller one is enough.
                    in_waiting.push(false);
                    let add = if in_waiting[y] || end[z] - first[z] <= end[y] - first[y] { z } else { y };
                    in_waiting[add] = true;
                    waiting.push(add as u32);
                }
            }
        }
        let count = first.len();
        // Renumber blocks: dead 0, start 1, then by first reach (breadth first).
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
