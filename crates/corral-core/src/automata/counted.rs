//! Counted repetitions (`x{m,n}` of a prefix-free unit) built as a counter, and kept as
//! one block of rows (a *counted region*) when written out they would be large.

use std::sync::Arc;

use super::{too_many_states, Dfa, DEAD};
use crate::error::Result;
use crate::limits::Limits;

/// A counted repetition `unit{min,max}` whose states are not stored: block `k` (k units
/// read) repeats the same rows (the boundary "k units read", then the unit's inner
/// states), so one block of rows, with targets relative to the block, stands for all of
/// them. A JSON string of at most 2,000 characters is 28,000 states: stored, a 2.4 MB
/// table written at every compile; counted, 14 rows.
///
/// The region's state `first + k * per + r` is row `r` of block `k`; blocks run from 0 to
/// `last` (in a bounded repetition, block `last` is its boundary alone: no unit fits).
#[derive(Debug)]
pub struct Counted {
    /// Rows per block.
    pub(super) per: u32,
    /// `u64::MAX / per + 1` (0 when `per` is 1): `x / per` is `(x * per_inverse) >> 64`
    /// for any `u32` x, a multiplication instead of a division in every step (see
    /// [`Counted::block_row`]).
    pub(super) per_inverse: u64,
    /// The last block.
    pub(super) last: u32,
    /// Is there an upper bound? (Without one, units read in block `last` return to it.)
    pub(super) bounded: bool,
    /// A boundary may end the repetition (accept, or leave by `exit`) from this block on.
    pub(super) min: u32,
    /// `per` rows of `stride` entries: [`ROW_DEAD`], [`ROW_NEXT`] (a unit ends: the next
    /// block's boundary) or the target row in the same block.
    pub(super) template: Vec<u32>,
    /// Per class, where a boundary that may end goes when no unit starts on that class: a
    /// stored state (what follows the repetition), or `DEAD`.
    pub(super) exit: Vec<u32>,
    /// Does a boundary that may end accept?
    pub(super) accepts: bool,
}

impl Counted {
    pub(super) fn new(
        per: u32,
        last: u32,
        bounded: bool,
        min: u32,
        template: Vec<u32>,
        exit: Vec<u32>,
        accepts: bool,
    ) -> Counted {
        Counted { per, per_inverse: (u64::MAX / per as u64).wrapping_add(1), last, bounded, min, template, exit, accepts }
    }

    /// (block, row) of the region's state `rel` (counted from the region's first state).
    #[inline(always)]
    pub(super) fn block_row(&self, rel: u32) -> (u32, u32) {
        if self.per == 1 {
            return (rel, 0);
        }
        let k = ((self.per_inverse as u128 * rel as u128) >> 64) as u32;
        (k, rel - k * self.per)
    }

    /// Number of states in the region.
    pub(super) fn len(&self) -> usize {
        self.last as usize * self.per as usize + if self.bounded { 1 } else { self.per as usize }
    }
}

/// A [`Counted`] template entry: no move.
pub(crate) const ROW_DEAD: u32 = u32::MAX;

/// A [`Counted`] template entry: a unit ends, go to the next block's boundary.
pub(crate) const ROW_NEXT: u32 = u32::MAX - 1;

/// A counted repetition is left unstored (see [`Counted`]) from this many states on. A
/// stored row is quicker to step through, and a short count (a JSON string of at most
/// about 140 characters) gains nothing at mask time: its states are within a token's
/// length of the bound, so no two of them share a mask (see [`Dfa::equivalent_within`]).
const COUNTED_REGION_FROM: usize = 2048;

impl Dfa {
    /// A state that reads any `depth` bytes as `state` does: the same bytes live, the same
    /// acceptance after each. Deep inside a long counted repetition, where no bound of the
    /// count is within `depth` bytes, the rows of every block behave alike (a unit reads
    /// at least one byte), so work cached for one block serves them all: the masks of a
    /// long string's characters. Any other state is its own.
    pub fn equivalent_within(&self, state: u32, depth: usize) -> u32 {
        let first = self.accepting.len() as u32;
        let Some(c) = self.counted.as_ref().filter(|_| state >= first) else { return state };
        let (k, r) = c.block_row(state - first);
        let depth = depth as u64;
        let block = if k as u64 + depth < c.min as u64 {
            0 // the minimum stays out of reach
        } else if k >= c.min && (k as u64) + depth < c.last as u64 {
            c.min // past the minimum, the maximum out of reach
        } else {
            return state;
        };
        first + block * c.per + r
    }

    /// Does the automaton keep a counted region (see [`Counted`])?
    #[cfg(test)]
    pub(crate) fn has_counted_region(&self) -> bool {
        self.counted.is_some()
    }

    /// The same automaton with every state stored (a counted region written out), for
    /// the constructions that read rows directly.
    pub(crate) fn stored(&self) -> std::borrow::Cow<'_, Dfa> {
        if self.counted.is_none() {
            return std::borrow::Cow::Borrowed(self);
        }
        let n = self.num_states();
        let mut representative = vec![0u8; self.stride];
        for b in (0..=255u8).rev() {
            representative[self.class_of[b as usize] as usize] = b;
        }
        let mut table = Vec::with_capacity(n * self.stride);
        for s in 0..n as u32 {
            table.extend(representative.iter().map(|&b| self.next(s, b)));
        }
        let accepting = (0..n as u32).map(|s| self.is_accepting(s)).collect();
        std::borrow::Cow::Owned(Dfa { class_of: self.class_of, stride: self.stride, table, accepting, counted: None })
    }

    /// `self{min,max}` (`max` None = unbounded) built directly as a counter times this
    /// automaton, when `self` is a prefix-free code (no match is a proper prefix of another,
    /// as with a UTF-8 or JSON-escaped character) that does not match the empty string.
    /// Returns `Ok(None)` otherwise. Subset construction over `max` copies (what a regex
    /// engine does for `x{0,1000}`) is far slower and needs no fewer states than this.
    pub fn repeat_counted(&self, min: u32, max: Option<u32>, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        if self.accepts_empty() || max.is_some_and(|m| m < min) {
            return Ok(None);
        }
        if self.counted.is_some() {
            // (Nested counts: checked against the limit before anything is written out.)
            if (max.unwrap_or(min) as usize + 1).saturating_mul(self.num_states() - 1) > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            return self.stored().repeat_counted(min, max, limits, what);
        }
        // Prefix-free: an accepting state has no live move (states here are pruned).
        for s in 1..self.num_states() {
            if self.accepting[s] && self.table[s * self.stride..(s + 1) * self.stride].iter().any(|&t| t != DEAD) {
                return Ok(None);
            }
        }
        let estimate = (max.unwrap_or(min) as usize + 1).saturating_mul(self.num_states() - 1);
        if estimate > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
        // Built directly (no exploration, no hashing): per count k, a boundary state B_k
        // ("k units read"), kept apart from the unit's start state, which a unit may
        // revisit, and a copy of each other non-accepting unit state. A unit's accepting states
        // have no moves (prefix-free): reaching one means "go to the next boundary". Every
        // state built is co-reachable (a unit can always be finished, and `min <= max`).
        // The unit's start state needs a copy per count only if a unit can come back to it
        // (as in `(?:ab)*c`); a character or an escape never does.
        let start_reentered = self.table.contains(&self.start());
        let inner: Vec<u32> = (1..self.num_states() as u32)
            .filter(|&q| !self.accepting[q as usize] && (q != self.start() || start_reentered))
            .collect();
        let mut slot = vec![u32::MAX; self.num_states()];
        for (j, &q) in inner.iter().enumerate() {
            slot[q as usize] = j as u32;
        }
        let per = 1 + inner.len();
        let last = max.unwrap_or(min) as usize; // counts 0..=last
        let boundary = |k: usize| (1 + k * per) as u32;
        let total = 1 + last * per + if max.is_some() { 1 } else { per };
        let stride = self.stride;
        // One block of rows (the boundary, then the inner states) as offsets from the
        // block's boundary: inner state j is 1 + j, the next boundary is `per`, dead is
        // `u32::MAX`. Every count's block is this template shifted, so building is a copy.
        let mut template = vec![u32::MAX; per * stride];
        for (r, q) in std::iter::once(self.start()).chain(inner.iter().copied()).enumerate() {
            for c in 0..stride {
                let t = self.table[q as usize * stride + c];
                template[r * stride + c] = if t == DEAD {
                    u32::MAX
                } else if self.accepting[t as usize] {
                    per as u32
                } else {
                    1 + slot[t as usize]
                };
            }
        }
        if total >= COUNTED_REGION_FROM && last >= 1 {
            // Stored: the dead state only; the start is block 0's boundary.
            let template = template
                .iter()
                .map(|&rel| match rel {
                    u32::MAX => ROW_DEAD,
                    r if r == per as u32 => ROW_NEXT,
                    r => r,
                })
                .collect();
            let counted = Counted::new(per as u32, last as u32, max.is_some(), min, template, vec![DEAD; stride], true);
            let dfa = Dfa {
                class_of: self.class_of,
                stride,
                table: vec![DEAD; stride],
                accepting: vec![false],
                counted: Some(Arc::new(counted)),
            };
            return Ok(Some(dfa));
        }
        let mut table = vec![DEAD; total * stride];
        let mut accepting = vec![false; total];
        for k in 0..=last {
            let b = boundary(k) as usize;
            accepting[b] = k >= min as usize;
            if max.is_some() && k == last {
                break; // one more unit would exceed `max`
            }
            // Unbounded: every count from `min` on behaves alike, so the last block's
            // finished units return to its own boundary.
            let next_rel = if max.is_none() && k == last { 0 } else { per as u32 };
            let block = &mut table[b * stride..(b + per) * stride];
            for (dst, &rel) in block.iter_mut().zip(&template) {
                *dst = match rel {
                    u32::MAX => DEAD,
                    r if r == per as u32 => b as u32 + next_rel,
                    r => b as u32 + r,
                };
            }
        }
        let dfa = Dfa { class_of: self.class_of, stride, table, accepting, counted: None };
        Ok(Some(dfa))
    }
}
