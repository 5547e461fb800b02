//! Counted repetitions (`x{m,n}` of a prefix-free unit) built as a counter, and kept as
//! one block of rows (a *counted region*) when written out they would be large.

use std::sync::Arc;

use super::classes::representatives;
use super::{too_many_states, Dfa, DEAD};
use crate::error::Result;
use crate::limits::Limits;
use crate::util::state_map::StateMap;

/// A counted repetition `unit{min,max}` whose states are not stored: block `k` (k units
/// read) repeats the same rows (the boundary "k units read", then the unit's inner
/// states), so one block of rows, with targets relative to the block, stands for all of
/// them. A JSON string of at most 2,000 characters is 28,000 states: stored, a 2.4 MB
/// table written at every compile; counted, 14 rows.
///
/// The region's state `first + k * per + r` is row `r` of block `k`; blocks run from 0 to
/// `last` (in a bounded repetition, block `last` is its boundary alone: no unit fits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// Per row: is it a boundary where the repetition may end (accepting if `accepts`,
    /// leaving by `exit`)? A repetition's own region has one, row 0; the product of a
    /// region with another automaton has one per state of that automaton that accepts
    /// (see [`Dfa::intersect_counted`]).
    pub(super) ends: Vec<bool>,
    /// Per row, in a product region: the fewest units still to read from it to a row that
    /// ends (`u32::MAX`: none). A state of block k whose row needs more than `last - k`
    /// is dead, so the region stays pruned near its bound. Empty in a repetition's own
    /// region, where every row can always finish within the bound.
    pub(super) need: Vec<u32>,
    /// The largest finite `need` (0 when `need` is empty): how far before the bound a
    /// state's future may depend on its block (see [`Dfa::equivalent_within`]).
    pub(super) max_need: u32,
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
        let mut ends = vec![false; per as usize];
        ends[0] = true;
        Counted {
            per,
            per_inverse: (u64::MAX / per as u64).wrapping_add(1),
            last,
            bounded,
            min,
            template,
            exit,
            accepts,
            ends,
            need: Vec::new(),
            max_need: 0,
        }
    }

    /// The same region with the rows that end, and what each row still needs, given
    /// (a product region's; `need` as in [`Counted::need`]).
    pub(super) fn with_rows(mut self, ends: Vec<bool>, need: Vec<u32>) -> Counted {
        self.max_need = need.iter().copied().filter(|&n| n != u32::MAX).max().unwrap_or(0);
        self.ends = ends;
        self.need = need;
        self
    }

    /// Where a move out of block `k` by template entry `t` (not [`ROW_DEAD`]) lands:
    /// (block, row), or None where that row cannot finish within the bound from there.
    #[inline(always)]
    pub(super) fn target(&self, k: u32, t: u32) -> Option<(u32, u32)> {
        let (k2, r2) = if t & ROW_NEXT != 0 { (if k == self.last { k } else { k + 1 }, t & !ROW_NEXT) } else { (k, t) };
        match self.need.get(r2 as usize) {
            Some(&n) if self.bounded && u64::from(k2) + u64::from(n) > u64::from(self.last) => None,
            _ => Some((k2, r2)),
        }
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

    /// Number of states in the region. A bounded repetition's last block is its boundary
    /// alone; a product region's may hold any of its rows (each row that ends is a
    /// boundary).
    pub(super) fn len(&self) -> usize {
        let last_block = if self.bounded && self.need.is_empty() { 1 } else { self.per as usize };
        self.last as usize * self.per as usize + last_block
    }
}

/// A [`Counted`] template entry: no move.
pub(crate) const ROW_DEAD: u32 = u32::MAX;

/// A [`Counted`] template entry's flag: a unit ends, go to the next block, to the row in
/// the other bits (`ROW_NEXT` alone: its boundary, row 0). Entries without it are rows of
/// the same block.
pub(crate) const ROW_NEXT: u32 = 1 << 31;

/// The most states a counted region may number (the id space of a [`Dfa`]'s states,
/// with room left for the stored ones). Nothing is kept per state of a region, so this
/// bounds no memory: `Limits.max_dfa_states` bounds its block of rows.
pub(crate) const MAX_REGION_STATES: usize = 1 << 31;

/// A counted repetition is left unstored (see [`Counted`]) from this many states on. A
/// stored row is quicker to step through, and a short count (a JSON string of at most
/// about 140 characters) gains nothing at mask time: its states are within a token's
/// length of the bound, so no two of them share a mask (see [`Dfa::equivalent_within`]).
pub(crate) const COUNTED_REGION_FROM: usize = 2048;

/// Counts of fewer units than this are short: a JSON string character (14 rows) repeated
/// that often stays under [`COUNTED_REGION_FROM`] states (see
/// [`Dfa::short_count_written_out`]).
pub(crate) const SHORT_COUNT: u32 = (COUNTED_REGION_FROM / 14) as u32;

/// The most states a short count's region is written out to (see
/// [`Dfa::short_count_written_out`]); past it, it stays a region (exact, slower to step).
pub(crate) const SHORT_COUNT_MAX_STATES: usize = 1 << 16;

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
        // (A product region's row may need up to `max_need` more units to finish: its
        // block matters that far before the bound too.)
        let depth = depth as u64;
        let far = (k as u64) + depth + u64::from(c.max_need) < c.last as u64;
        let block = if k as u64 + depth < c.min as u64 && far {
            0 // the minimum stays out of reach
        } else if k >= c.min && far {
            c.min // past the minimum, the maximum out of reach
        } else {
            return state;
        };
        first + block * c.per + r
    }

    /// The blocks of the counted region whose states [`Dfa::equivalent_within`] (with
    /// `depth`) leaves as they are, as ascending, disjoint ranges of block numbers: block
    /// 0, the blocks within `depth` below the minimum, and those near the bound. Every
    /// other block stands in by one of them. Empty without a region.
    fn own_blocks(&self, depth: usize) -> Vec<(u32, u32)> {
        let Some(c) = &self.counted else { return Vec::new() };
        let depth = u32::try_from(depth).unwrap_or(u32::MAX);
        let near_min = c.min.saturating_sub(depth);
        let near_last = c.last.saturating_sub(depth.saturating_add(c.max_need));
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (lo, hi) in [(0, 0), (near_min, c.min.min(c.last)), (near_last, c.last)] {
            match out.last_mut() {
                Some(prev) if lo <= prev.1 + 1 => prev.1 = prev.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        out
    }

    /// How many states a cache of per-state work (a mask per state) needs, with states
    /// first mapped by [`Dfa::equivalent_within`] at `depth`: the stored states, and the
    /// region's states that stand for themselves (see [`Dfa::state_slot`]). A long
    /// region's count does not grow it.
    pub fn state_slots(&self, depth: usize) -> usize {
        let per = self.counted.as_ref().map_or(0, |c| c.per as usize);
        let blocks: usize = self.own_blocks(depth).iter().map(|&(lo, hi)| (hi - lo) as usize + 1).sum();
        self.accepting.len() + blocks * per
    }

    /// Where in such a cache (see [`Dfa::state_slots`]) state `state` goes, given as
    /// [`Dfa::equivalent_within`] at `depth` returns it.
    pub fn state_slot(&self, state: u32, depth: usize) -> usize {
        let first = self.accepting.len() as u32;
        let Some(c) = self.counted.as_ref().filter(|_| state >= first) else { return state as usize };
        let (k, r) = c.block_row(state - first);
        let mut before = 0usize;
        for (lo, hi) in self.own_blocks(depth) {
            if (lo..=hi).contains(&k) {
                return first as usize + (before + (k - lo) as usize) * c.per as usize + r as usize;
            }
            before += (hi - lo) as usize + 1;
        }
        debug_assert!(false, "state {state} is stood in for by another (see `equivalent_within`)");
        first as usize + r as usize
    }

    /// The states that [`Dfa::equivalent_within`] at `depth` leaves as they are, the
    /// dead state aside: every state a per-state cache is asked about.
    pub fn own_states(&self, depth: usize) -> Vec<u32> {
        let first = self.accepting.len() as u32;
        let mut out: Vec<u32> = (1..first).collect();
        if let Some(c) = &self.counted {
            for (lo, hi) in self.own_blocks(depth) {
                out.extend((lo..=hi).flat_map(|k| (0..c.per).map(move |r| first + k * c.per + r)));
            }
            out.retain(|&s| (s as usize) < self.num_states());
        }
        out
    }

    /// Can no text of `bytes` end the counted region's repetition (no boundary accepts,
    /// and none of them leaves it)? A JSON string's count ends only at the closing quote,
    /// which is not a string-safe byte. False without a region.
    pub(super) fn region_exits_unseen(&self, bytes: &[u8]) -> bool {
        self.counted
            .as_ref()
            .is_some_and(|c| !c.accepts && bytes.iter().all(|&x| c.exit[self.class_of[x as usize] as usize] == DEAD))
    }

    /// Do region states `a` and `b` read every text of 1 to `depth` bytes alike, as the
    /// region's structure shows without a search? They do when both stand in the same row
    /// of blocks far from the bound (they then step in lockstep, their blocks a fixed
    /// distance apart) and the minimum cannot tell them apart: both past it, both out of
    /// its reach for `depth` bytes, or the texts read cannot end the repetition
    /// (`exits_unseen`, see [`Dfa::region_exits_unseen`]). False says only that this test
    /// cannot tell.
    #[inline]
    pub(super) fn region_reads_alike(&self, a: u32, b: u32, exits_unseen: bool, depth: usize) -> bool {
        let first = self.accepting.len() as u32;
        let Some(c) = self.counted.as_ref().filter(|_| a >= first && b >= first) else { return false };
        let ((ka, ra), (kb, rb)) = (c.block_row(a - first), c.block_row(b - first));
        let (lo, hi, depth) = (u64::from(ka.min(kb)), u64::from(ka.max(kb)), depth as u64);
        // Each byte reads at most one unit: within `depth` bytes neither block nears the
        // bound, where the pruning by `need` and the last block's loop act.
        if ra != rb || hi + depth + u64::from(c.max_need) >= u64::from(c.last) {
            return false;
        }
        let min = u64::from(c.min);
        lo >= min || hi + depth < min || exits_unseen
    }

    /// Does the automaton keep a counted region (see [`Counted`])?
    pub fn has_counted_region(&self) -> bool {
        self.counted.is_some()
    }

    /// A counted region of a short count (fewer than `SHORT_COUNT`, 146, units: one kept
    /// as a region only to meet a pattern or format as one block of rows, see
    /// [`Dfa::repeat_counted_region`]) written out, its reachable states only, where
    /// they are at most `SHORT_COUNT_MAX_STATES` (65,536) and fit `limits`: stored rows are
    /// quicker to step through, and no two states of a short count share a mask anyway.
    /// None for anything else (kept as it is).
    pub fn short_count_written_out(&self, limits: &Limits) -> Result<Option<Dfa>> {
        let Some(c) = self.counted.as_ref() else { return Ok(None) };
        let most = limits.max_dfa_states.min(SHORT_COUNT_MAX_STATES);
        if c.last >= SHORT_COUNT || self.accepting.len() != 1 {
            return Ok(None);
        }
        // Classes the region reads alike (equal in every row of its template and in its
        // exit) are one class written out: the block's classes refine both operands', and
        // a table is as wide as its classes (masks walk it, and this walk reads it).
        let (class_of, representative) = region_classes(self, c);
        let stride = representative.len();
        // Numbered as reached from the start (the dead state stays 0, the start 1): the
        // region numbers every (count, row) pair, most of which no string reaches, and a
        // long pattern's block can number millions (a map then, not a table of them).
        let mut id = StateMap::new(self.num_states(), u32::MAX);
        id.set(DEAD, DEAD);
        id.set(self.start(), 1);
        let mut states = vec![DEAD, self.start()];
        let mut table = vec![DEAD; stride];
        let classes: Vec<usize> = representative.iter().map(|&b| self.class_of[b as usize] as usize).collect();
        let mut moves = Vec::with_capacity(stride);
        let mut i = 1;
        while i < states.len() {
            moves.clear();
            self.moves_into(states[i], &classes, &mut moves);
            for &t in &moves {
                let mut to = id.get(t);
                if to == u32::MAX {
                    to = states.len() as u32;
                    id.set(t, to);
                    states.push(t);
                }
                table.push(to);
            }
            if states.len() > most {
                return Ok(None);
            }
            crate::util::interrupt::check()?;
            i += 1;
        }
        let accepting = states.iter().map(|&q| self.is_accepting(q)).collect();
        // (Rows unreachable in the template may still split a class: merged here.)
        Ok(Some(Dfa { class_of, stride, table, accepting, counted: None }.with_coarsest_classes()))
    }

    /// The same automaton with every state stored (a counted region written out), for
    /// the constructions that read rows directly.
    pub(crate) fn stored(&self) -> std::borrow::Cow<'_, Dfa> {
        if self.counted.is_none() {
            return std::borrow::Cow::Borrowed(self);
        }
        let n = self.num_states();
        let representative = representatives(&self.class_of);
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
        self.repeat_counted_as(min, max, false, limits, what)
    }

    /// [`Dfa::repeat_counted`] kept as a counted region however short the count (from
    /// two units on): a bounded string that a pattern or format must also match then
    /// meets it as one block of rows (see [`Dfa::intersect`]), where written out its
    /// count would multiply the pattern's own.
    pub fn repeat_counted_region(&self, min: u32, max: Option<u32>, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        self.repeat_counted_as(min, max, true, limits, what)
    }

    /// [`Dfa::repeat_counted`], as a region from [`COUNTED_REGION_FROM`] states on or,
    /// with `always_region`, from two units on.
    fn repeat_counted_as(
        &self,
        min: u32,
        max: Option<u32>,
        always_region: bool,
        limits: &Limits,
        what: &str,
    ) -> Result<Option<Dfa>> {
        if self.accepts_empty() || max.is_some_and(|m| m < min) {
            return Ok(None);
        }
        if self.counted.is_some() {
            // (Nested counts: checked against the limit before anything is written out.)
            if (max.unwrap_or(min) as usize + 1).saturating_mul(self.num_states() - 1) > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            return self.stored().repeat_counted_as(min, max, always_region, limits, what);
        }
        // Prefix-free: an accepting state has no live move (states here are pruned).
        for s in 1..self.num_states() {
            if self.accepting[s] && self.table[s * self.stride..(s + 1) * self.stride].iter().any(|&t| t != DEAD) {
                return Ok(None);
            }
        }
        // Written out, the count costs its states; kept as a region (from
        // `COUNTED_REGION_FROM` states on, see below), one block of rows, its states only
        // numbered.
        let estimate = (max.unwrap_or(min) as usize + 1).saturating_mul(self.num_states());
        if estimate >= MAX_REGION_STATES || self.num_states() > limits.max_dfa_states {
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
        let region = (always_region || total >= COUNTED_REGION_FROM) && last >= 1;
        if !region && total > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
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
        if region {
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

/// The byte classes of `d` (whose stored part is the dead state alone) that its counted
/// region `c` tells apart: classes with equal columns in every template row and in the
/// exit are one. Returns the new class of every byte and a byte of each class.
fn region_classes(d: &Dfa, c: &Counted) -> ([u8; 256], Vec<u8>) {
    let column = |k: usize| -> Vec<u32> {
        c.template.chunks_exact(d.stride).map(|row| row[k]).chain(std::iter::once(c.exit[k])).collect()
    };
    let mut group_of_column: crate::util::hash::HashMap<Vec<u32>, u8> = Default::default();
    let mut group = vec![0u8; d.stride];
    for (k, g) in group.iter_mut().enumerate() {
        let n = group_of_column.len() as u8;
        *g = *group_of_column.entry(column(k)).or_insert(n);
    }
    let class_of = d.class_of.map(|k| group[k as usize]);
    (class_of, representatives(&class_of))
}

#[cfg(test)]
impl Dfa {
    /// Does `stand_in` read every byte string of up to `depth` bytes as `state` does (the
    /// same bytes dead at each step, the same acceptance)? Panics naming `what` where not.
    pub(crate) fn assert_reads_alike(&self, state: u32, stand_in: u32, depth: usize, what: &str) {
        let mut level = vec![(state, stand_in)];
        for read in 0..=depth {
            let mut next = std::collections::BTreeSet::new();
            for &(x, y) in &level {
                assert_eq!(self.is_accepting(x), self.is_accepting(y), "{what}: {state} ~ {stand_in} at depth {depth}");
                if read == depth {
                    continue;
                }
                for b in 0..=255u8 {
                    let (x2, y2) = (self.next(x, b), self.next(y, b));
                    assert_eq!(x2 == DEAD, y2 == DEAD, "{what}: {state} ~ {stand_in} at depth {depth}");
                    if x2 != DEAD {
                        next.insert((x2, y2));
                    }
                }
            }
            level = next.into_iter().collect();
        }
    }
}
