//! Concatenation of DFAs in one pass, where every junction is deterministic (where a
//! part may end, no byte both continues it and starts what may come next): the sum of
//! the parts' tables, with no subset construction. The same holds for a DFA repeated
//! after itself ([`Dfa::repeat_deterministic`]).

use std::sync::Arc;

use super::classes::{refine, representatives};
use super::counted::{Counted, ROW_DEAD};
use super::{too_many_states, Dfa, DEAD};
use crate::error::Result;
use crate::limits::Limits;

impl Dfa {
    /// `self` followed by `next` (see [`Dfa::concat_all`]).
    pub fn concat(&self, next: &Dfa, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        Dfa::concat_all(&[self, next], limits, what)
    }

    /// The concatenation of `parts`, built as their sum in one pass, when every junction
    /// is deterministic: at each point where a part may end, the bytes that continue it,
    /// and those that start each part that may come next (skipping parts that match ""),
    /// are pairwise disjoint. Otherwise `None`: the general case needs subset construction.
    pub fn concat_all(parts: &[&Dfa], limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        let facts: Vec<JoinFacts> = parts.iter().map(|d| d.join_facts()).collect();
        Ok(ConcatPlan::new(&facts, limits, what)?.map(|plan| plan.build(parts)))
    }

    /// What planning a concatenation needs to know of this automaton (see [`JoinFacts`]).
    pub fn join_facts(&self) -> JoinFacts {
        JoinFacts {
            accepts_empty: self.accepts_empty(),
            first: self.first_bytes(),
            end_continues: self.end_continues(),
            stored: self.accepting.len(),
            states: self.num_states(),
            region: self.counted.as_ref().map(|c| (c.per, c.len())),
        }
    }

    /// The bytes its start state moves on (bit `b & 63` of word `b >> 6`).
    pub fn first_bytes(&self) -> [u64; 4] {
        let mut first = [0u64; 4];
        for b in 0..=255u8 {
            if self.next(self.start(), b) != DEAD {
                first[(b >> 6) as usize] |= 1 << (b & 63);
            }
        }
        first
    }

    /// The bytes on which a state where this automaton may end goes on: an accepting
    /// stored state's live moves, and those of a boundary of its counted region that may
    /// end (by the unit's first row, unless the only such boundary is the bounded last,
    /// and by `exit`).
    fn end_continues(&self) -> [u64; 4] {
        let mut live_class = vec![false; self.stride];
        for s in (1..self.accepting.len()).filter(|&s| self.accepting[s]) {
            let row = &self.table[s * self.stride..(s + 1) * self.stride];
            for (l, &t) in live_class.iter_mut().zip(row) {
                *l |= t != DEAD;
            }
        }
        if let Some(c) = self.counted.as_ref().filter(|c| c.accepts) {
            let unit_moves = !(c.bounded && c.min == c.last);
            for r in (0..c.per as usize).filter(|&r| c.ends[r]) {
                for (cl, l) in live_class.iter_mut().enumerate() {
                    *l |= (unit_moves && c.template[r * self.stride + cl] != ROW_DEAD) || c.exit[cl] != DEAD;
                }
            }
        }
        let mut set = [0u64; 4];
        for b in 0..=255u8 {
            if live_class[self.class_of[b as usize] as usize] {
                set[(b >> 6) as usize] |= 1 << (b & 63);
            }
        }
        set
    }
}

/// What planning a concatenation needs to know of a part, without its tables: read once
/// from a built automaton ([`Dfa::join_facts`]), or derived from the parts of a
/// concatenation not built yet ([`ConcatPlan::facts`]), so that runs of terminals can be
/// planned now and built when first needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinFacts {
    /// Does it match ""?
    pub accepts_empty: bool,
    /// The bytes its start state moves on (bit `b & 63` of word `b >> 6`).
    pub first: [u64; 4],
    /// The bytes on which a state where it may end goes on (a superset for a
    /// concatenation not built yet: a junction it calls deterministic is one).
    pub end_continues: [u64; 4],
    /// Stored states, the dead state included.
    pub stored: usize,
    /// States in all, a counted region's included.
    pub states: usize,
    /// Its counted region's rows per block and states, if it has one.
    pub region: Option<(u32, usize)>,
}

/// A concatenation checked but not built: every junction deterministic, the result
/// within the limits (see [`Dfa::concat_all`]). Building it cannot fail.
#[derive(Debug, Clone)]
pub struct ConcatPlan {
    /// The part whose counted region the result keeps (the largest; the others' are
    /// written out).
    keep: Option<usize>,
    facts: JoinFacts,
}

impl ConcatPlan {
    /// The plan of the concatenation of parts with `facts`, None where a junction is
    /// not deterministic; past `limits.max_dfa_states`, an error naming `what`.
    pub fn new(facts: &[JoinFacts], limits: &Limits, what: &str) -> Result<Option<ConcatPlan>> {
        if facts.is_empty() {
            return Ok(None);
        }
        // One part keeps its counted region (the largest); any other is written out,
        // within the limit.
        let counted = || facts.iter().filter(|f| f.region.is_some());
        if counted().count() > 1 && counted().map(|f| f.states).sum::<usize>() > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
        let keep = facts.iter().enumerate().filter(|(_, f)| f.region.is_some()).max_by_key(|(_, f)| f.states).map(|(i, _)| i);
        let Some(entries) = entry_sets(facts) else { return Ok(None) };
        let junction_free = facts.iter().zip(&entries[1..]).all(|(f, after)| (0..4).all(|w| f.end_continues[w] & after[w] == 0));
        if !junction_free {
            return Ok(None);
        }
        // Stored states once written out: a kept region stays a region.
        let stored = |i: usize, f: &JoinFacts| if Some(i) == keep { f.stored } else { f.states };
        let total = 2 + facts.iter().enumerate().map(|(i, f)| stored(i, f) - 1).sum::<usize>();
        let region = keep.and_then(|j| facts[j].region);
        let (region_rows, region_len) = region.map_or((0, 0), |(per, len)| (per as usize, len));
        // A kept region costs its block of rows, whatever its count (its states are
        // numbered, not stored: they only need ids).
        if total + region_rows > limits.max_dfa_states || total + region_len >= u32::MAX as usize / 2 {
            return Err(too_many_states(limits, what));
        }
        let n = facts.len();
        let nullable_from = |i: usize| facts[i..].iter().all(|f| f.accepts_empty);
        // Where the result may end: where a part may end with only nullable parts after
        // it, going on by its own moves or into what follows.
        let mut end_continues = [0u64; 4];
        for i in (0..n).filter(|&i| nullable_from(i + 1)) {
            for w in 0..4 {
                end_continues[w] |= facts[i].end_continues[w] | entries[i + 1][w];
            }
        }
        let facts = JoinFacts {
            accepts_empty: nullable_from(0),
            first: entries[0],
            end_continues,
            stored: total,
            states: total + region_len,
            region,
        };
        Ok(Some(ConcatPlan { keep, facts }))
    }

    /// What the concatenation will be, for planning joins with it before it is built.
    pub fn facts(&self) -> JoinFacts {
        self.facts
    }

    /// The concatenation of `parts`, the automata whose facts made the plan.
    pub fn build(&self, parts: &[&Dfa]) -> Dfa {
        let keep = self.keep;
        let stored: Vec<std::borrow::Cow<'_, Dfa>> = parts
            .iter()
            .enumerate()
            .map(|(i, d)| if Some(i) == keep { std::borrow::Cow::Borrowed(*d) } else { d.stored() })
            .collect();
        let parts: Vec<&Dfa> = stored.iter().map(|d| &**d).collect();
        let join = Join::new(&parts);
        debug_assert_eq!(join.total, self.facts.stored);
        join.build()
    }
}

impl Dfa {
    /// `self{min,max}` built without subset construction, where that is exact and one pass
    /// suffices: `{0,1}` when no transition leads back to the start ([`Dfa::or_empty`]), and
    /// `{0,}` / `{1,}` when the junction is deterministic (no accepting state continues on a
    /// byte that starts `self`): each accepting state then takes the start's moves too.
    /// None otherwise (and for a DFA with a counted region): the general construction is
    /// needed.
    pub fn repeat_deterministic(&self, min: u32, max: Option<u32>) -> Option<Dfa> {
        if self.counted.is_some() {
            return None;
        }
        match (min, max) {
            (0, Some(1)) => self.or_empty(),
            (0 | 1, None) => self.looped(min == 0),
            _ => None,
        }
    }

    /// `self+` (with the empty string too when `star`), by adding the start's moves to
    /// every accepting state (see [`Dfa::repeat_deterministic`]).
    fn looped(&self, star: bool) -> Option<Dfa> {
        let (start, stride) = (self.start() as usize, self.stride);
        let start_row = &self.table[start * stride..(start + 1) * stride];
        // Making the start accepting is exact only if no path returns to it.
        if star && !self.accepts_empty() && self.table.contains(&(start as u32)) {
            return None;
        }
        let mut d = self.clone();
        for s in 0..self.accepting.len() {
            if !self.accepting[s] {
                continue;
            }
            for (c, &entry) in start_row.iter().enumerate() {
                let own = self.table[s * stride + c];
                match (own == DEAD, entry == DEAD) {
                    (_, true) => {}
                    (true, false) => d.table[s * stride + c] = entry,
                    // Continuing this match and starting the next lead to one state.
                    (false, false) if own == entry => {}
                    // A byte that both continues this match and starts the next one.
                    (false, false) => return None,
                }
            }
        }
        if star {
            d.accepting[start] = true;
        }
        Some(d)
    }
}

/// Per part `i`, the bytes that can start the text after part `i - 1` ends (parts `i..`,
/// with nullable parts skipped), and the same past the last part (none); None if two
/// candidates share a byte.
fn entry_sets(facts: &[JoinFacts]) -> Option<Vec<[u64; 4]>> {
    let n = facts.len();
    let mut entries = vec![[0u64; 4]; n + 1];
    for i in (0..n).rev() {
        let mut e = facts[i].first;
        if facts[i].accepts_empty {
            let rest = entries[i + 1];
            if (0..4).any(|w| e[w] & rest[w] != 0) {
                return None;
            }
            (0..4).for_each(|w| e[w] |= rest[w]);
        }
        entries[i] = e;
    }
    Some(entries)
}

/// The concatenation built directly as the sum of the parts (no exploration): state 1 is
/// "before any byte", then part i's stored state q is `offset[i] + q - 1`; the kept counted
/// region comes after every stored state. Every state is co-reachable (each part's states
/// are, and each later part matches something).
struct Join<'p> {
    parts: &'p [&'p Dfa],
    offset: Vec<u32>,
    /// Stored states in all (the dead state and state 1 included).
    total: usize,
    region_first: u32,
    /// Does everything from part i on match ""?
    nullable_from: Vec<bool>,
    class_of: [u8; 256],
    stride: usize,
    representative: Vec<u8>,
}

impl<'p> Join<'p> {
    fn new(parts: &'p [&'p Dfa]) -> Join<'p> {
        let n = parts.len();
        let mut nullable_from = vec![true; n + 1];
        for i in (0..n).rev() {
            nullable_from[i] = parts[i].accepts_empty() && nullable_from[i + 1];
        }
        let classes: Vec<&[u8; 256]> = parts.iter().map(|d| &d.class_of).collect();
        let class_of = refine(&classes);
        let representative = representatives(&class_of);
        let stride = representative.len();
        let mut offset = Vec::with_capacity(n);
        let mut total = 2usize;
        for d in parts {
            offset.push(total as u32);
            total += d.accepting.len() - 1;
        }
        Join { parts, offset, total, region_first: total as u32, nullable_from, class_of, stride, representative }
    }

    /// The joined id of part `i`'s state `q`.
    fn id(&self, i: usize, q: u32) -> u32 {
        let stored_n = self.parts[i].accepting.len() as u32;
        if q < stored_n {
            self.offset[i] + q - 1
        } else {
            self.region_first + (q - stored_n)
        }
    }

    /// Enter the text after part `i - 1` ends on byte `b`: the first part that can take b.
    fn enter(&self, mut i: usize, b: u8) -> u32 {
        while i < self.parts.len() {
            let d = self.parts[i];
            let t = d.next(d.start(), b);
            if t != DEAD {
                return self.id(i, t);
            }
            if !d.accepts_empty() {
                return DEAD;
            }
            i += 1;
        }
        DEAD
    }

    fn build(self) -> Dfa {
        let stride = self.stride;
        let mut table = vec![DEAD; self.total * stride];
        let mut accepting = vec![false; self.total];
        accepting[1] = self.nullable_from[0];
        for (c, &b) in self.representative.iter().enumerate() {
            table[stride + c] = self.enter(0, b);
        }
        // Row by row with per-part lookups made once: a large part is copied at memory speed.
        let mut part_class = vec![0usize; stride];
        let mut entry_row = vec![DEAD; stride];
        let mut region = None;
        for (i, d) in self.parts.iter().enumerate() {
            for (c, &b) in self.representative.iter().enumerate() {
                part_class[c] = d.class_of[b as usize] as usize;
                entry_row[c] = self.enter(i + 1, b);
            }
            self.write_rows(i, &part_class, &entry_row, &mut table, &mut accepting);
            if let Some(c) = &d.counted {
                region = Some(Arc::new(self.region(i, c, &part_class, &entry_row)));
            }
        }
        Dfa { class_of: self.class_of, stride, table, accepting, counted: region }
    }

    /// Part `i`'s stored rows in the joined table: its moves shifted to its block, and,
    /// where the part dies in an accepting state, the moves into what follows.
    fn write_rows(&self, i: usize, part_class: &[usize], entry_row: &[u32], table: &mut [u32], accepting: &mut [bool]) {
        let (d, stride) = (self.parts[i], self.stride);
        let no_entry = vec![DEAD; stride];
        // Classes numbered alike (both by first byte): rows copy without a gather.
        let same_classes = d.stride == stride && part_class.iter().enumerate().all(|(c, &k)| c == k);
        let shift = self.offset[i] - 1;
        for q in 1..d.accepting.len() {
            let row = self.id(i, q as u32) as usize;
            let ends = d.accepting[q];
            accepting[row] = ends && self.nullable_from[i + 1];
            // Where the part dies, an accepting state goes on into what follows.
            let dead_to = if ends { entry_row } else { &no_entry[..] };
            let src = &d.table[q * d.stride..(q + 1) * d.stride];
            let dst = &mut table[row * stride..(row + 1) * stride];
            if d.counted.is_some() {
                // Moves into the region are not a shift: map each.
                for ((x, &k), &e) in dst.iter_mut().zip(part_class).zip(dead_to) {
                    *x = if src[k] == DEAD { e } else { self.id(i, src[k]) };
                }
                continue;
            }
            // Branch-free select: whether a move is dead is as good as random.
            let pick = |t: u32, e: u32| {
                let live = ((t != DEAD) as u32).wrapping_neg();
                (t.wrapping_add(shift) & live) | (e & !live)
            };
            if same_classes {
                for ((x, &t), &e) in dst.iter_mut().zip(src).zip(dead_to) {
                    *x = pick(t, e);
                }
            } else {
                for ((x, &k), &e) in dst.iter_mut().zip(part_class).zip(dead_to) {
                    *x = pick(src[k], e);
                }
            }
        }
    }

    /// Part `i`'s counted region in the joined classes; a boundary that may end leaves by
    /// the part's own exit, else (if the part may end there) into what follows.
    fn region(&self, i: usize, c: &Counted, part_class: &[usize], entry_row: &[u32]) -> Counted {
        let (d, stride) = (self.parts[i], self.stride);
        let mut template = vec![ROW_DEAD; c.per as usize * stride];
        for (r, row) in template.chunks_exact_mut(stride).enumerate() {
            for (x, &k) in row.iter_mut().zip(part_class) {
                *x = c.template[r * d.stride + k];
            }
        }
        let exit = (0..stride)
            .map(|cl| match c.exit[part_class[cl]] {
                DEAD if c.accepts => entry_row[cl],
                DEAD => DEAD,
                t => self.id(i, t),
            })
            .collect();
        let accepts = c.accepts && self.nullable_from[i + 1];
        Counted::new(c.per, c.last, c.bounded, c.min, template, exit, accepts).with_rows(c.ends.clone(), c.need.clone())
    }
}
