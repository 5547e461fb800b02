//! The intersection of a counted region with another automaton, kept as a counted region.
//!
//! A JSON string of at most n characters that must also match a pattern or a format is
//! the product of the counter (n blocks of a character's rows, see [`Counted`]) and the
//! pattern's automaton. Written out, that is n times the pattern's states (a `uri` of
//! 2,048 characters: about 370,000). But the pattern's state does not depend on the
//! count: one block of (character row, pattern state) pairs serves every count, as the
//! repetition's own region does. The one thing the count changes is how much room is
//! left, so each pair knows the fewest characters still needed to finish the pattern
//! (`need`), and a move into a block that leaves less room than that is dead: the
//! automaton stays pruned up to its bound.

use std::sync::Arc;

use super::classes::{refine, representatives};
use super::counted::{Counted, MAX_REGION_STATES, ROW_DEAD, ROW_NEXT};
use super::{too_many_states, Dfa, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

/// The most states of a counted automaton written out to be intersected with a bounded
/// string (see [`Dfa::intersect_counted`]); a larger one takes the general product.
const MAX_WRITTEN_OUT: usize = 1 << 16;

impl Dfa {
    /// `self ∩ other` as a counted region, where `self` is a bounded counted repetition
    /// and nothing else (its stored part is the dead state alone, its count starts at 0,
    /// nothing follows it) and `other` stores all its states or has at most
    /// [`MAX_WRITTEN_OUT`] of them. None where that does not hold: the general product
    /// applies.
    ///
    /// `Error::EmptyLanguage` if the intersection is empty; `Error::LimitExceeded` past
    /// `limits.max_dfa_states` rows.
    pub(super) fn intersect_counted(&self, other: &Dfa, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        let Some(c) = self.counted.as_ref() else { return Ok(None) };
        let plain_region = self.accepting.len() == 1 && c.bounded && c.min == 0 && c.accepts;
        if !plain_region || c.exit.iter().any(|&e| e != DEAD) {
            return Ok(None);
        }
        // A pattern or format with counted parts of its own (an e-mail's labels of up to
        // 63 characters) is read with its states written out: the product's block then
        // holds at most a character row per state, where the general product would write
        // out this side's count too, once per count.
        if other.counted.is_some() && other.num_states() > MAX_WRITTEN_OUT {
            return Ok(None);
        }
        let stored = other.stored();
        let other: &Dfa = &stored;
        let class_of = refine(&[&self.class_of, &other.class_of]);
        let representative = representatives(&class_of);
        let stride = representative.len();
        // Rows: (row of `self`'s block, state of `other`), numbered as reached from the
        // start (the block's boundary, `other`'s start).
        let mut ids: FastMap<(u32, u32), u32> = FastMap::default();
        let mut rows: Vec<(u32, u32)> = vec![(0, other.start())];
        ids.insert(rows[0], 0);
        let mut template: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < rows.len() {
            let (r, q) = rows[i];
            for &b in &representative {
                let t = c.template[r as usize * self.stride + self.class_of[b as usize] as usize];
                let q2 = other.next(q, b);
                if t == ROW_DEAD || q2 == DEAD {
                    template.push(ROW_DEAD);
                    continue;
                }
                let pair = (t & !ROW_NEXT, q2);
                let id = *ids.entry(pair).or_insert_with(|| {
                    rows.push(pair);
                    (rows.len() - 1) as u32
                });
                template.push(id | (t & ROW_NEXT));
            }
            if rows.len() > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            crate::util::interrupt::check()?;
            i += 1;
        }
        let ends: Vec<bool> = rows.iter().map(|&(r, q)| c.ends[r as usize] && other.is_accepting(q)).collect();
        let need = units_needed(&template, stride, &ends);
        if need[0] > c.last {
            return Err(Error::EmptyLanguage { what: what.to_string() });
        }
        // Moves into rows that can never finish are dead (the others are pruned by the
        // count as they are taken).
        for t in template.iter_mut().filter(|t| **t != ROW_DEAD) {
            if need[(*t & !ROW_NEXT) as usize] == u32::MAX {
                *t = ROW_DEAD;
            }
        }
        let per = rows.len() as u32;
        if (u64::from(per) * (u64::from(c.last) + 1)) >= MAX_REGION_STATES as u64 {
            return Err(too_many_states(limits, what));
        }
        let region = Counted::new(per, c.last, true, 0, template, vec![DEAD; stride], true).with_rows(ends, need);
        let dfa = Dfa { class_of, stride, table: vec![DEAD; stride], accepting: vec![false], counted: Some(Arc::new(region)) };
        Ok(Some(dfa))
    }
}

/// Per row of a region's `template` (`stride` entries a row), the fewest units to read
/// to a row that `ends` (`u32::MAX`: none): a search backwards from those rows in which a
/// move within the block costs nothing and one into the next block costs one unit.
fn units_needed(template: &[u32], stride: usize, ends: &[bool]) -> Vec<u32> {
    let n = ends.len();
    let mut preds: Vec<Vec<(u32, bool)>> = vec![Vec::new(); n];
    for (r, row) in template.chunks_exact(stride).enumerate() {
        for &t in row.iter().filter(|&&t| t != ROW_DEAD) {
            let edge = (r as u32, t & ROW_NEXT != 0);
            let to = &mut preds[(t & !ROW_NEXT) as usize];
            if to.last() != Some(&edge) {
                to.push(edge);
            }
        }
    }
    let mut need = vec![u32::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for r in (0..n).filter(|&r| ends[r]) {
        need[r] = 0;
        queue.push_back(r as u32);
    }
    // 0-1 breadth-first: a free move goes to the front, a unit to the back.
    while let Some(t) = queue.pop_front() {
        let d = need[t as usize];
        for &(s, unit) in &preds[t as usize] {
            let through = d + u32::from(unit);
            if through < need[s as usize] {
                need[s as usize] = through;
                if unit {
                    queue.push_back(s);
                } else {
                    queue.push_front(s);
                }
            }
        }
    }
    need
}
