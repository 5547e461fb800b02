//! A compact byte-level DFA in which every live state can still reach a match.
//!
//! State 0 is the dead state; the start state is 1. Transitions are a flat table indexed by
//! `state * stride + class_of[byte]`. States from which no accepting state is reachable are
//! merged into the dead state, so "the next state is not dead" means "this prefix can
//! still be completed" — exactly the test a token mask needs.

use std::cell::RefCell;
use std::hash::Hash;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

/// The dead state: no continuation can match.
pub const DEAD: u32 = 0;

/// A regular expression whose leaves are DFAs: the input of [`Dfa::from_expr`], which
/// concatenates, unites and repeats automata that no regex source describes (e.g. the
/// results of [`Dfa::intersect`] and [`Dfa::complement`]).
#[derive(Debug, Clone)]
pub enum DfaExpr<'a> {
    /// The empty string.
    Empty,
    /// The language of a DFA.
    Leaf(&'a Dfa),
    /// Concatenation.
    Seq(Vec<DfaExpr<'a>>),
    /// Union.
    Alt(Vec<DfaExpr<'a>>),
    /// `expr{min,max}` (`max` None = unbounded).
    Repeat {
        /// What is repeated.
        expr: Box<DfaExpr<'a>>,
        /// Least number of repetitions.
        min: u32,
        /// Most (None: no bound).
        max: Option<u32>,
    },
}

/// The coarsest byte partition that refines every given one (so that a product automaton
/// can be explored over one representative byte per class).
fn refine(partitions: &[&[u8; 256]]) -> [u8; 256] {
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

/// UTF-8 well-formedness (RFC 3629, no surrogates, at most U+10FFFF), as a byte machine:
/// the state says which continuation bytes must come next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Utf8 {
    /// Between characters (accepting).
    Boundary,
    /// `n` more continuation bytes 80..=BF.
    Cont(u8),
    /// After E0: A0..=BF, then one more.
    E0,
    /// After ED: 80..=9F (no surrogates), then one more.
    Ed,
    /// After F0: 90..=BF, then two more.
    F0,
    /// After F4: 80..=8F (at most U+10FFFF), then two more.
    F4,
}

impl Utf8 {
    pub(crate) fn next(self, b: u8) -> Option<Utf8> {
        use Utf8::*;
        let cont = |n: u8| if n == 0 { Boundary } else { Cont(n) };
        match self {
            Boundary => match b {
                0x00..=0x7f => Some(Boundary),
                0xc2..=0xdf => Some(Cont(1)),
                0xe0 => Some(E0),
                0xed => Some(Ed),
                0xe1..=0xef => Some(Cont(2)),
                0xf0 => Some(F0),
                0xf1..=0xf3 => Some(Cont(3)),
                0xf4 => Some(F4),
                _ => None,
            },
            Cont(n) => (0x80..=0xbf).contains(&b).then(|| cont(n - 1)),
            E0 => (0xa0..=0xbf).contains(&b).then_some(Cont(1)),
            Ed => (0x80..=0x9f).contains(&b).then_some(Cont(1)),
            F0 => (0x90..=0xbf).contains(&b).then_some(Cont(2)),
            F4 => (0x80..=0x8f).contains(&b).then_some(Cont(2)),
        }
    }

    /// Bytes that no state of the machine distinguishes share a class.
    fn classes() -> [u8; 256] {
        let mut class_of = [0u8; 256];
        for (b, class) in class_of.iter_mut().enumerate() {
            *class = match b as u8 {
                0x00..=0x7f => 0,
                0x80..=0x8f => 1,
                0x90..=0x9f => 2,
                0xa0..=0xbf => 3,
                0xc2..=0xdf => 4,
                0xe0 => 5,
                0xed => 6,
                0xe1..=0xef => 7,
                0xf0 => 8,
                0xf1..=0xf3 => 9,
                0xf4 => 10,
                _ => 11, // C0, C1, F5..=FF: never valid
            };
        }
        class_of
    }
}

/// An ε-NFA whose pieces are DFAs (for [`Dfa::from_expr`]). Junctions are ε-nodes; leaf
/// instance `i` is a copy of a DFA entered at its start state that, wherever its DFA
/// accepts, may leave to junction `exit[i]`. Junction 1 is the final node. The NFA states
/// that subset construction tracks are the leaves' DFA states, numbered globally: state `s`
/// of instance `i` is `offset[i] + s`.
struct LeafNfa<'a> {
    leaves: Vec<&'a Dfa>,
    exit: Vec<u32>,
    offset: Vec<u32>,
    /// The instance of each global state.
    owner: Vec<u32>,
    /// `eps[j]`: where junction `j` leads without reading (Ok = junction, Err = leaf start).
    eps: Vec<Vec<std::result::Result<u32, u32>>>,
    /// NFA states so far (junctions plus leaf DFA states), bounded by `max_dfa_states`.
    size: usize,
    limit: usize,
}

/// The final node, in NFA state sets (sorts last).
const FINAL: u32 = u32::MAX;

impl<'a> LeafNfa<'a> {
    fn grow(&mut self, n: usize, what: &str) -> Result<()> {
        self.size += n;
        if self.size > self.limit {
            return Err(Error::LimitExceeded {
                limit: "max_dfa_states",
                value: self.limit,
                context: format!("the automaton of {what}"),
            });
        }
        Ok(())
    }

    fn junction(&mut self, what: &str) -> Result<u32> {
        self.grow(1, what)?;
        self.eps.push(Vec::new());
        Ok(self.eps.len() as u32 - 1)
    }

    /// Thompson's construction of `e` between junctions `from` and `to`.
    fn build(&mut self, e: &DfaExpr<'a>, from: u32, to: u32, what: &str) -> Result<()> {
        match e {
            DfaExpr::Empty => self.eps[from as usize].push(Ok(to)),
            DfaExpr::Leaf(d) => {
                self.grow(d.num_states(), what)?;
                let i = self.leaves.len() as u32;
                self.leaves.push(d);
                self.exit.push(to);
                self.offset.push(self.owner.len() as u32);
                self.owner.extend(std::iter::repeat_n(i, d.num_states()));
                self.eps[from as usize].push(Err(i));
            }
            DfaExpr::Seq(items) => {
                let mut cur = from;
                for (k, item) in items.iter().enumerate() {
                    let next = if k + 1 == items.len() { to } else { self.junction(what)? };
                    self.build(item, cur, next, what)?;
                    cur = next;
                }
                if items.is_empty() {
                    self.eps[from as usize].push(Ok(to));
                }
            }
            DfaExpr::Alt(items) => {
                for item in items {
                    self.build(item, from, to, what)?;
                }
            }
            DfaExpr::Repeat { expr, min, max } => {
                // Each copy costs at least one junction, so huge counts hit the limit early.
                let mut cur = from;
                for _ in 0..*min {
                    let next = self.junction(what)?;
                    self.build(expr, cur, next, what)?;
                    cur = next;
                }
                match max {
                    None => {
                        // A loop on a fresh junction: one shared with a sibling (an
                        // alternative's entry) would let the loop run before the sibling.
                        let l = self.junction(what)?;
                        self.eps[cur as usize].push(Ok(l));
                        self.build(expr, l, l, what)?;
                        cur = l;
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            self.eps[cur as usize].push(Ok(to));
                            let next = self.junction(what)?;
                            self.build(expr, cur, next, what)?;
                            cur = next;
                        }
                    }
                }
                self.eps[cur as usize].push(Ok(to));
            }
        }
        Ok(())
    }

    /// Adds to `out` the NFA states reachable from the junctions `roots` without reading,
    /// marking visited junctions with `stamp` (a fresh value per call).
    /// `roots` is used as the work stack (left empty).
    fn close(&self, roots: &mut Vec<u32>, seen: &mut [u32], stamp: u32, out: &mut Vec<u32>) {
        let stack = roots;
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j as usize], stamp) == stamp {
                continue;
            }
            if j == 1 {
                out.push(FINAL);
            }
            for &t in &self.eps[j as usize] {
                match t {
                    Ok(k) => stack.push(k),
                    Err(i) => {
                        let d = self.leaves[i as usize];
                        out.push(self.offset[i as usize] + d.start());
                        if d.accepts_empty() {
                            stack.push(self.exit[i as usize]);
                        }
                    }
                }
            }
        }
    }
}

/// Interned NFA state sets (subset construction), with the work bounded.
struct Subsets {
    sets: Vec<Rc<[u32]>>,
    ids: FastMap<Rc<[u32]>, u32>,
    /// NFA states stored plus NFA states stepped so far.
    work: usize,
    overflow: bool,
}

/// DFAs built by subset construction ([`Dfa::from_expr`]) with this many states or more,
/// up to [`MINIMIZE_UP_TO`], are minimized (Hopcroft: well under a millisecond there).
const MINIMIZE_FROM: usize = 32;
/// See [`MINIMIZE_FROM`].
const MINIMIZE_UP_TO: usize = 4096;

/// Longest `safe_len` for which [`Dfa::plain_risk`] looks for [`PlainRisk::short_only`]
/// (the vocabulary keeps masks by token length up to 16 bytes).
const MAX_SHORT_ONLY: usize = 16;

/// Most rounds of [`Dfa::plain_risk`]'s safe-set fixpoint (each removes keys); past it
/// the state is left to the trie walk.
const MAX_SAFE_ROUNDS: usize = 24;

/// The result of [`Dfa::plain_risk`]: two sets of bytes, as 256-bit sets. A plain fragment
/// holding an `always` byte dies; one holding neither kind stays alive, as does one of at
/// most `safe_len` bytes; any other must be read through the DFA.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlainRisk {
    /// Bytes on which the DFA dies wherever a plain fragment can read them.
    pub always: [u64; 4],
    /// Bytes after which a fragment may die.
    pub check: [u64; 4],
    /// Fragments of at most this many bytes need no reading, whatever `check` bytes
    /// they hold (e.g. the characters left before a `{2,12}` count runs out).
    pub safe_len: usize,
    /// Every fragment longer than `safe_len` dies (`check` is then empty): an ASCII count
    /// near its end, such as `[A-Z0-9]{17}` with 3 characters left.
    pub short_only: bool,
}

impl PlainRisk {
    /// No risky byte: every plain fragment stays alive.
    pub fn is_clear(&self) -> bool {
        self.always == [0; 4] && self.check == [0; 4]
    }

    /// The bytes of a set, in order.
    pub fn bytes(set: &[u64; 4]) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(move |&b| set[(b >> 6) as usize] & (1 << (b & 63)) != 0)
    }
}

/// The error of a DFA of `what` past `max_dfa_states`.
fn too_many_states(limits: &Limits, what: &str) -> Error {
    Error::LimitExceeded { limit: "max_dfa_states", value: limits.max_dfa_states, context: format!("the DFA of {what}") }
}

/// A byte DFA with byte classes, pruned to co-reachable states.
#[derive(Debug, Clone)]
pub struct Dfa {
    class_of: [u8; 256],
    stride: usize,
    /// `table[state * stride + class]` = next state (`DEAD` = 0), for the stored states:
    /// all of them, unless `counted` holds more.
    table: Vec<u32>,
    /// Whether each stored state accepts (its length is the number of stored states).
    accepting: Vec<bool>,
    /// The states after the stored ones, when there are any: a long counted repetition
    /// whose rows are computed from one block (see [`Counted`]).
    counted: Option<Arc<Counted>>,
}

/// A counted repetition `unit{min,max}` whose states are not stored: block `k` (k units
/// read) repeats the same rows (the boundary "k units read", then the unit's inner
/// states), so one block of rows, with targets relative to the block, stands for all of
/// them. A JSON string of at most 2,000 characters is 28,000 states: stored, a 2.4 MB
/// table written at every compile; counted, 14 rows.
///
/// The region's state `first + k * per + r` is row `r` of block `k`; blocks run from 0 to
/// `last` (in a bounded repetition, block `last` is its boundary alone: no unit fits).
#[derive(Debug)]
struct Counted {
    /// Rows per block.
    per: u32,
    /// `u64::MAX / per + 1` (0 when `per` is 1): `x / per` is `(x * per_inverse) >> 64`
    /// for any `u32` x, a multiplication instead of a division in every step (see
    /// [`Counted::block_row`]).
    per_inverse: u64,
    /// The last block.
    last: u32,
    /// Is there an upper bound? (Without one, units read in block `last` return to it.)
    bounded: bool,
    /// A boundary may end the repetition (accept, or leave by `exit`) from this block on.
    min: u32,
    /// `per` rows of `stride` entries: [`ROW_DEAD`], [`ROW_NEXT`] (a unit ends: the next
    /// block's boundary) or the target row in the same block.
    template: Vec<u32>,
    /// Per class, where a boundary that may end goes when no unit starts on that class: a
    /// stored state (what follows the repetition), or `DEAD`.
    exit: Vec<u32>,
    /// Does a boundary that may end accept?
    accepts: bool,
}

impl Counted {
    fn new(per: u32, last: u32, bounded: bool, min: u32, template: Vec<u32>, exit: Vec<u32>, accepts: bool) -> Counted {
        Counted { per, per_inverse: (u64::MAX / per as u64).wrapping_add(1), last, bounded, min, template, exit, accepts }
    }

    /// (block, row) of the region's state `rel` (counted from the region's first state).
    #[inline(always)]
    fn block_row(&self, rel: u32) -> (u32, u32) {
        if self.per == 1 {
            return (rel, 0);
        }
        let k = ((self.per_inverse as u128 * rel as u128) >> 64) as u32;
        (k, rel - k * self.per)
    }

    /// Number of states in the region.
    fn len(&self) -> usize {
        self.last as usize * self.per as usize + if self.bounded { 1 } else { self.per as usize }
    }
}

/// A [`Counted`] template entry: no move.
const ROW_DEAD: u32 = u32::MAX;
/// A [`Counted`] template entry: a unit ends, go to the next block's boundary.
const ROW_NEXT: u32 = u32::MAX - 1;

/// A counted repetition is left unstored (see [`Counted`]) from this many states on. A
/// stored row is quicker to step through, and a short count (a JSON string of at most
/// about 140 characters) gains nothing at mask time: its states are within a token's
/// length of the bound, so no two of them share a mask (see [`Dfa::equivalent_within`]).
const COUNTED_REGION_FROM: usize = 2048;

impl Dfa {
    /// Builds a pruned DFA by exploring an automaton from `start`.
    ///
    /// `next(s, byte)` gives the successor (None = dead); `is_accepting(s)` tells whether the
    /// input may end in `s`. `class_of` groups bytes the automaton never distinguishes.
    pub fn from_automaton<S, N, A>(
        start: S,
        class_of: &[u8; 256],
        mut next: N,
        mut is_accepting: A,
        limits: &Limits,
        what: &str,
    ) -> Result<Dfa>
    where
        S: Copy + Eq + Hash,
        N: FnMut(S, u8) -> Option<S>,
        A: FnMut(S) -> bool,
    {
        let n_classes = class_of.iter().map(|&c| c as usize).max().unwrap_or(0) + 1;
        let mut representative = vec![0u8; n_classes];
        for b in (0..=255u8).rev() {
            representative[class_of[b as usize] as usize] = b;
        }
        // Explore reachable states (index i here = state i+1 later, before pruning).
        let mut ids: FastMap<S, u32> = FastMap::default();
        let mut states: Vec<S> = vec![start];
        ids.insert(start, 0);
        let mut edges: Vec<u32> = Vec::new(); // u32::MAX = dead
        let mut i = 0;
        while i < states.len() {
            let s = states[i];
            for &b in &representative {
                let id = match next(s, b) {
                    None => u32::MAX,
                    Some(t) => *ids.entry(t).or_insert_with(|| {
                        states.push(t);
                        (states.len() - 1) as u32
                    }),
                };
                edges.push(id);
            }
            if states.len() > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            crate::interrupt::check()?;
            i += 1;
        }
        let n = states.len();
        let accepting_raw: Vec<bool> = states.iter().map(|&s| is_accepting(s)).collect();
        // Co-reachability: walk reverse edges from the accepting states.
        let mut reverse: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            for c in 0..n_classes {
                let t = edges[s * n_classes + c];
                if t != u32::MAX {
                    reverse[t as usize].push(s as u32);
                }
            }
        }
        let mut live = accepting_raw.clone();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
        while let Some(t) = stack.pop() {
            for &s in &reverse[t as usize] {
                if !live[s as usize] {
                    live[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        if !live[0] {
            return Err(Error::EmptyLanguage { what: what.to_string() });
        }
        // Renumber: dead = 0, start = 1, then live states in exploration order.
        let mut new_id = vec![DEAD; n];
        let mut next_id = 1u32;
        for s in 0..n {
            if live[s] {
                new_id[s] = next_id;
                next_id += 1;
            }
        }
        let total = next_id as usize;
        let mut table = vec![DEAD; total * n_classes];
        let mut accepting = vec![false; total];
        for s in 0..n {
            if !live[s] {
                continue;
            }
            let ns = new_id[s] as usize;
            accepting[ns] = accepting_raw[s];
            for c in 0..n_classes {
                let t = edges[s * n_classes + c];
                table[ns * n_classes + c] = if t == u32::MAX { DEAD } else { new_id[t as usize] };
            }
        }
        Ok(Dfa { class_of: *class_of, stride: n_classes, table, accepting, counted: None }.with_coarsest_classes())
    }

    /// The same automaton over the coarsest byte classes: bytes whose moves agree from
    /// every state share one. A construction's classes only separate what its inputs did
    /// (the regex engine splits at every range end), and every table built from this one,
    /// a long string's counter above all, is as wide as its classes.
    fn with_coarsest_classes(mut self) -> Dfa {
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

    /// The start state.
    #[inline]
    pub fn start(&self) -> u32 {
        1
    }

    /// Number of states, the dead state included.
    pub fn num_states(&self) -> usize {
        self.accepting.len() + self.counted.as_ref().map_or(0, |c| c.len())
    }

    /// Number of byte classes.
    pub fn num_classes(&self) -> usize {
        self.stride
    }

    /// The state after reading `byte` in `state` (`DEAD` if no match is reachable any more).
    #[inline(always)]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        let class = self.class_of[byte as usize] as usize;
        if (state as usize) < self.accepting.len() {
            self.table[state as usize * self.stride + class]
        } else {
            self.counted_next(state, class)
        }
    }

    /// [`Dfa::next`] from a state of the counted region.
    #[inline]
    fn counted_next(&self, state: u32, class: usize) -> u32 {
        let Some(c) = &self.counted else { return DEAD };
        let first = self.accepting.len() as u32;
        let (k, r) = c.block_row(state - first);
        // The bounded repetition's last boundary: no further unit fits.
        let full = c.bounded && k == c.last;
        let t = if full { ROW_DEAD } else { c.template[r as usize * self.stride + class] };
        match t {
            ROW_DEAD if r == 0 && k >= c.min => c.exit[class],
            ROW_DEAD => DEAD,
            ROW_NEXT => first + (if k == c.last { k } else { k + 1 }) * c.per,
            row => first + k * c.per + row,
        }
    }

    /// The state after reading all of `bytes` (`DEAD` as soon as no match is reachable).
    pub fn walk(&self, mut state: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            state = self.next(state, b);
            if state == DEAD {
                return DEAD;
            }
        }
        state
    }

    /// May the input end in `state`?
    #[inline]
    pub fn is_accepting(&self, state: u32) -> bool {
        match self.accepting.get(state as usize) {
            Some(&a) => a,
            None => self.counted.as_ref().is_some_and(|c| {
                let (k, r) = c.block_row(state - self.accepting.len() as u32);
                c.accepts && r == 0 && k >= c.min
            }),
        }
    }

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

    /// Does the DFA accept the whole of `bytes`?
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.is_accepting(self.walk(self.start(), bytes))
    }

    /// Does the DFA accept the empty string?
    pub fn accepts_empty(&self) -> bool {
        self.is_accepting(self.start())
    }

    /// Is the language exactly {""}?
    pub fn is_only_empty(&self) -> bool {
        // (A counted region always holds a unit's first move, reachable from the start.)
        self.accepts_empty() && self.counted.is_none() && self.table.iter().all(|&t| t == DEAD)
    }

    /// The same language plus the empty string, when that is only a matter of making the
    /// start state accepting: no transition leads back to it (`x|` for most `x`). None
    /// otherwise.
    pub fn or_empty(&self) -> Option<Dfa> {
        let start = self.start();
        if self.table.contains(&start) {
            return None;
        }
        if let Some(c) = &self.counted {
            // A start inside the region is a boundary whose acceptance is computed; one
            // before it is entered again only through `exit`.
            if self.accepting.len() <= start as usize || c.exit.contains(&start) {
                return None;
            }
        }
        let mut d = self.clone();
        d.accepting[start as usize] = true;
        Some(d)
    }

    /// The same language without the empty string (an error if nothing else is left).
    pub fn without_empty(&self, limits: &Limits, what: &str) -> Result<Dfa> {
        // A fresh, non-accepting start state (None) with the old start's transitions.
        Dfa::from_automaton(
            None::<u32>,
            &self.class_of,
            |s, b| {
                let t = self.next(s.unwrap_or(self.start()), b);
                (t != DEAD).then_some(Some(t))
            },
            |s| s.is_some_and(|t| self.is_accepting(t)),
            limits,
            what,
        )
    }

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

    /// The DFA of a regular expression over DFAs (concatenation, union, repetition), by
    /// Thompson's construction on the leaves and the subset construction.
    ///
    /// Bounded by `limits.max_dfa_states` (states of the NFA and of the result) and
    /// `limits.dfa_size_limit`: the NFA state sets stored, plus the NFA states stepped
    /// (which bounds the time), stay under `dfa_size_limit / 4` (sets are `u32` lists).
    /// Past either: `Error::LimitExceeded`.
    pub fn from_expr(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Dfa> {
        if let Some(dfa) = Dfa::seq_deterministic(e, limits, what)? {
            return Ok(dfa);
        }
        let mut nfa = LeafNfa {
            leaves: Vec::new(),
            exit: Vec::new(),
            offset: Vec::new(),
            owner: Vec::new(),
            eps: vec![Vec::new(), Vec::new()],
            size: 2,
            limit: limits.max_dfa_states,
        };
        nfa.build(e, 0, 1, what)?;
        let class_of = {
            let mut parts: Vec<&[u8; 256]> = Vec::new();
            for d in &nfa.leaves {
                // Repeated leaves are the same DFA: refine by each once.
                if !parts.iter().any(|p| std::ptr::eq(*p, &d.class_of)) {
                    parts.push(&d.class_of);
                }
            }
            refine(&parts)
        };
        let budget = limits.dfa_size_limit / std::mem::size_of::<u32>();
        let seen = RefCell::new((vec![0u32; nfa.eps.len()], 0u32));
        let subsets = RefCell::new(Subsets { sets: Vec::new(), ids: FastMap::default(), work: 0, overflow: false });
        // Interns a state set (made canonical in place: sorted, without duplicates); None
        // past the budget. The set is copied only when it is new.
        let intern = |set: &mut Vec<u32>| -> Option<u32> {
            set.sort_unstable();
            set.dedup();
            let mut sub = subsets.borrow_mut();
            if let Some(&id) = sub.ids.get(set.as_slice()) {
                return Some(id);
            }
            sub.work += set.len();
            if sub.work > budget {
                sub.overflow = true;
                return None;
            }
            let set: Rc<[u32]> = set.as_slice().into();
            let id = sub.sets.len() as u32;
            sub.sets.push(set.clone());
            sub.ids.insert(set, id);
            Some(id)
        };
        // Scratch buffers reused by every step (a step runs per state and byte class).
        let scratch = RefCell::new((Vec::<u32>::new(), Vec::<u32>::new()));
        let closure = |roots: &mut Vec<u32>, out: &mut Vec<u32>| {
            let mut seen = seen.borrow_mut();
            seen.1 += 1;
            let stamp = seen.1;
            nfa.close(roots, &mut seen.0, stamp, out);
        };
        let mut start = Vec::new();
        closure(&mut vec![0], &mut start);
        let start = intern(&mut start).ok_or_else(|| size_error(limits, what))?;
        let result = Dfa::from_automaton(
            start,
            &class_of,
            |id, byte| {
                let set = {
                    let mut sub = subsets.borrow_mut();
                    // Past the budget, stop exploring: the error is reported below and the
                    // partial automaton discarded.
                    if sub.overflow {
                        return None;
                    }
                    sub.work += sub.sets[id as usize].len();
                    sub.sets[id as usize].clone()
                };
                let mut scratch = scratch.borrow_mut();
                let (out, exits) = &mut *scratch;
                out.clear();
                exits.clear();
                for &g in set.iter() {
                    if g == FINAL {
                        continue;
                    }
                    let i = nfa.owner[g as usize] as usize;
                    let d = nfa.leaves[i];
                    let t = d.next(g - nfa.offset[i], byte);
                    if t != DEAD {
                        out.push(nfa.offset[i] + t);
                        if d.is_accepting(t) {
                            exits.push(nfa.exit[i]);
                        }
                    }
                }
                closure(exits, out);
                // An empty set is the dead state.
                if out.is_empty() {
                    None
                } else {
                    intern(out)
                }
            },
            |id| subsets.borrow().sets[id as usize].last() == Some(&FINAL),
            limits,
            what,
        );
        if subsets.borrow().overflow {
            return Err(size_error(limits, what));
        }
        // Minimized while that is cheap: subset construction keeps states that differ only
        // in which alternative led there (an IPv6 literal: 560 states, 156 minimal), and
        // every later join, walk and mask works on what it is given.
        result.map(|d| if (MINIMIZE_FROM..=MINIMIZE_UP_TO).contains(&d.num_states()) { d.minimized() } else { d })
    }

    /// A concatenation of DFAs built without subset construction, when every junction is
    /// deterministic (see [`Dfa::concat_all`]); None for any other expression.
    fn seq_deterministic(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        let DfaExpr::Seq(items) = e else { return Ok(None) };
        let leaves: Option<Vec<&Dfa>> = items
            .iter()
            .filter(|x| !matches!(x, DfaExpr::Empty))
            .map(|x| if let DfaExpr::Leaf(d) = x { Some(*d) } else { None })
            .collect();
        match leaves {
            Some(leaves) if !leaves.is_empty() => Dfa::concat_all(&leaves, limits, what),
            _ => Ok(None),
        }
    }

    /// `self` followed by `next` (see [`Dfa::concat_all`]).
    pub fn concat(&self, next: &Dfa, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        Dfa::concat_all(&[self, next], limits, what)
    }

    /// The concatenation of `parts`, built as their sum in one pass, when every junction
    /// is deterministic: at each point where a part may end, the bytes that continue it,
    /// and those that start each part that may come next (skipping parts that match ""),
    /// are pairwise disjoint. Otherwise `None`: the general case needs subset construction.
    pub fn concat_all(parts: &[&Dfa], limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        let n = parts.len();
        if n == 0 {
            return Ok(None);
        }
        // One part keeps its counted region (the largest); any other is written out.
        let keep =
            parts.iter().enumerate().filter(|(_, d)| d.counted.is_some()).max_by_key(|(_, d)| d.num_states()).map(|(i, _)| i);
        let stored: Vec<std::borrow::Cow<'_, Dfa>> = parts
            .iter()
            .enumerate()
            .map(|(i, d)| if Some(i) == keep { std::borrow::Cow::Borrowed(*d) } else { d.stored() })
            .collect();
        let parts: Vec<&Dfa> = stored.iter().map(|d| &**d).collect();
        let first: Vec<[bool; 256]> = parts
            .iter()
            .map(|d| {
                let mut f = [false; 256];
                for b in 0..=255u8 {
                    f[b as usize] = d.next(d.start(), b) != DEAD;
                }
                f
            })
            .collect();
        // entries[i]: bytes that can start the text after part i-1 ends (parts i.., with
        // nullable parts skipped); None if two candidates share a byte.
        let mut entries: Vec<Option<[bool; 256]>> = vec![Some([false; 256]); n + 1];
        for i in (0..n).rev() {
            let mut e = first[i];
            if parts[i].accepts_empty() {
                let Some(rest) = entries[i + 1] else { return Ok(None) };
                for b in 0..256 {
                    if e[b] && rest[b] {
                        return Ok(None);
                    }
                    e[b] |= rest[b];
                }
            }
            entries[i] = Some(e);
        }
        for (i, d) in parts.iter().enumerate() {
            let Some(after) = entries[i + 1] else { return Ok(None) };
            // The part's classes that hold a byte of `after`.
            let mut after_class = vec![false; d.stride];
            // (Few bytes can follow: a store only for those, not a read-modify-write per byte.)
            for b in (0..256).filter(|&b| after[b]) {
                after_class[d.class_of[b] as usize] = true;
            }
            for s in 1..d.accepting.len() {
                let row = &d.table[s * d.stride..(s + 1) * d.stride];
                if d.accepting[s] && row.iter().zip(&after_class).any(|(&t, &a)| a && t != DEAD) {
                    return Ok(None);
                }
            }
            if let Some(c) = d.counted.as_ref().filter(|c| c.accepts) {
                // The boundaries that may end move by the unit's first row (unless the
                // only one is the bounded last) and by `exit`.
                let unit_moves = !(c.bounded && c.min == c.last);
                let live = |cl: usize| (unit_moves && c.template[cl] != ROW_DEAD) || c.exit[cl] != DEAD;
                if (0..d.stride).any(|cl| after_class[cl] && live(cl)) {
                    return Ok(None);
                }
            }
        }
        // Does everything from part i on match ""?
        let mut nullable_from = vec![true; n + 1];
        for i in (0..n).rev() {
            nullable_from[i] = parts[i].accepts_empty() && nullable_from[i + 1];
        }
        let classes: Vec<&[u8; 256]> = parts.iter().map(|d| &d.class_of).collect();
        let class_of = refine(&classes);
        let stride = class_of.iter().map(|&c| c as usize).max().unwrap_or(0) + 1;
        let mut representative = vec![0u8; stride];
        for b in (0..=255u8).rev() {
            representative[class_of[b as usize] as usize] = b;
        }
        // Built directly as the sum of the parts (no exploration): state 1 is "before any
        // byte", then part i's stored state q is `offset[i] + q - 1`; the kept counted
        // region comes after every stored state. Every state is co-reachable (each part's
        // states are, and each later part matches something).
        let mut offset = Vec::with_capacity(n);
        let mut total = 2usize;
        for d in &parts {
            offset.push(total as u32);
            total += d.accepting.len() - 1;
        }
        let region_first = total as u32;
        let region_len = keep.and_then(|j| parts[j].counted.as_ref()).map_or(0, |c| c.len());
        if total + region_len > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
        let id = |i: usize, q: u32| {
            let stored_n = parts[i].accepting.len() as u32;
            if q < stored_n {
                offset[i] + q - 1
            } else {
                region_first + (q - stored_n)
            }
        };
        // Enter the text after part i-1 ends on byte b: the first part that can take b.
        let enter = |mut i: usize, b: u8| -> u32 {
            while i < n {
                let t = parts[i].next(parts[i].start(), b);
                if t != DEAD {
                    return id(i, t);
                }
                if !parts[i].accepts_empty() {
                    return DEAD;
                }
                i += 1;
            }
            DEAD
        };
        let mut table = vec![DEAD; total * stride];
        let mut accepting = vec![false; total];
        accepting[1] = nullable_from[0];
        for (c, &b) in representative.iter().enumerate() {
            table[stride + c] = enter(0, b);
        }
        // Row by row with per-part lookups made once: a large part is copied at memory speed.
        let mut part_class = vec![0usize; stride];
        let mut entry_row = vec![DEAD; stride];
        let no_entry = vec![DEAD; stride];
        let mut region = None;
        for (i, d) in parts.iter().enumerate() {
            for (c, &b) in representative.iter().enumerate() {
                part_class[c] = d.class_of[b as usize] as usize;
                entry_row[c] = enter(i + 1, b);
            }
            // Classes numbered alike (both by first byte): rows copy without a gather.
            let same_classes = d.stride == stride && part_class.iter().enumerate().all(|(c, &k)| c == k);
            let shift = offset[i] - 1;
            for q in 1..d.accepting.len() {
                let row = id(i, q as u32) as usize;
                let ends = d.accepting[q];
                accepting[row] = ends && nullable_from[i + 1];
                // Where the part dies, an accepting state goes on into what follows.
                let dead_to = if ends { &entry_row } else { &no_entry };
                let src = &d.table[q * d.stride..(q + 1) * d.stride];
                let dst = &mut table[row * stride..(row + 1) * stride];
                if d.counted.is_some() {
                    // Moves into the region are not a shift: map each.
                    for ((x, &k), &e) in dst.iter_mut().zip(&part_class).zip(dead_to) {
                        *x = if src[k] == DEAD { e } else { id(i, src[k]) };
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
                    for ((x, &k), &e) in dst.iter_mut().zip(&part_class).zip(dead_to) {
                        *x = pick(src[k], e);
                    }
                }
            }
            if let Some(c) = &d.counted {
                // The region's rows in the joined classes; a boundary that may end leaves by
                // the part's own exit, else (if the part may end there) into what follows.
                let mut template = vec![ROW_DEAD; c.per as usize * stride];
                for (r, row) in template.chunks_exact_mut(stride).enumerate() {
                    for (x, &k) in row.iter_mut().zip(&part_class) {
                        *x = c.template[r * d.stride + k];
                    }
                }
                let exit = (0..stride)
                    .map(|cl| match c.exit[part_class[cl]] {
                        DEAD if c.accepts => entry_row[cl],
                        DEAD => DEAD,
                        t => id(i, t),
                    })
                    .collect();
                let accepts = c.accepts && nullable_from[i + 1];
                region = Some(Arc::new(Counted::new(c.per, c.last, c.bounded, c.min, template, exit, accepts)));
            }
        }
        let dfa = Dfa { class_of, stride, table, accepting, counted: region };
        Ok(Some(dfa))
    }

    /// Does every plain fragment (see [`crate::vocab::is_plain_fragment`]) of 1 to
    /// `max_len` bytes, read from `state`, keep the DFA alive and, unless `may_accept`, out
    /// of accepting states? Then every token of a [`crate::vocab::PlainSlice`] of that
    /// bound is allowed from `state`, and (without accepting states) no terminal ends
    /// inside one, so a mask needs no walk over the slice.
    pub fn admits_plain(&self, state: u32, max_len: usize, may_accept: bool) -> bool {
        self.plain_risk(state, max_len, may_accept, 0, 0, &[0; 256]).is_some_and(|r| r.is_clear())
    }

    /// Which bytes decide whether a plain fragment of 1 to `max_len` bytes, read from
    /// `state`, keeps the DFA alive (see [`PlainRisk`]). None where a fragment can reach an
    /// accepting state (unless `may_accept`), where more than `max_dead_at_once` plain
    /// bytes kill at the first read (few tokens live: a trie walk ends quickly), or where
    /// more than `max_check` bytes would make a fragment need reading. `weight[b]` (how
    /// many tokens hold byte `b`) steers which bytes are left to check.
    ///
    /// A breadth-first search over (DFA state, UTF-8 state) pairs finds, per byte, whether
    /// it kills from every pair that reads it (`always`) or from some only, and the first
    /// position of such a kill (`safe_len`). The `check` bytes are those outside a safe
    /// set, found as a fixpoint (see the body).
    pub fn plain_risk(
        &self,
        state: u32,
        max_len: usize,
        may_accept: bool,
        max_dead_at_once: usize,
        max_check: usize,
        weight: &[u32; 256],
    ) -> Option<PlainRisk> {
        use Utf8::*;
        const U: [Utf8; 8] = [Boundary, Cont(1), Cont(2), Cont(3), E0, Ed, F0, F4];
        const KEYS: usize = 256 * 12;
        // Cheap first: at a terminal's start most bytes kill at once (lexer masks ask this
        // for every open terminal).
        let dead_at_once = (0..=255u8)
            .filter(|&b| crate::util::bytes::is_plain_byte(b) && Boundary.next(b).is_some() && self.next(state, b) == DEAD)
            .count();
        if dead_at_once > max_dead_at_once {
            return None;
        }
        let index = |u: Utf8| U.iter().position(|&x| x == u).unwrap_or(0) as u8;
        // Bytes with the same (DFA class, UTF-8 class) key behave alike: per UTF-8 state,
        // the plain bytes it takes, one representative per key, with the UTF-8 state after.
        let utf8 = Utf8::classes();
        let key_of = |b: u8| self.class_of[b as usize] as usize * 12 + utf8[b as usize] as usize;
        let mut moves: [Vec<(u8, u8, u16)>; 8] = Default::default();
        // seen_key[key] == i + 1: the key has a representative in moves[i].
        let mut seen_key = vec![0u8; KEYS];
        for (i, u) in U.iter().enumerate() {
            for b in 0..=255u8 {
                let key = key_of(b);
                if !crate::util::bytes::is_plain_byte(b) || seen_key[key] == i as u8 + 1 {
                    continue;
                }
                if let Some(u2) = u.next(b) {
                    seen_key[key] = i as u8 + 1;
                    moves[i].push((b, index(u2), key as u16));
                }
            }
        }
        // The pairs reachable within `max_len - 1` bytes are those first reached at a
        // depth below `max_len`; each is expanded once. Seen pairs: one bit per UTF-8
        // state, per DFA state.
        let (mut dead, mut alive) = (vec![false; KEYS], vec![false; KEYS]);
        // Per key, the first position (1-based) at which it killed.
        let mut dead_at = vec![usize::MAX; KEYS];
        let mut seen = vec![0u8; self.num_states()];
        let mut frontier = vec![(state, 0u8)];
        seen[state as usize] = 1;
        let mut next = Vec::new();
        for depth in 0..max_len {
            next.clear();
            for &(s, u) in &frontier {
                for &(b, u2, key) in &moves[u as usize] {
                    let t = self.next(s, b);
                    if t == DEAD {
                        dead[key as usize] = true;
                        dead_at[key as usize] = dead_at[key as usize].min(depth + 1);
                        continue;
                    }
                    if !may_accept && self.is_accepting(t) {
                        return None;
                    }
                    alive[key as usize] = true;
                    if seen[t as usize] & (1 << u2) == 0 {
                        seen[t as usize] |= 1 << u2;
                        next.push((t, u2));
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        let sometimes = |key: usize| dead[key] && alive[key];
        let always = |key: usize| dead[key] && !alive[key];
        // The safe keys S: a fragment of S bytes only, read from `state`, meets no kill.
        // Found as a fixpoint: start from every key that is not `always`, less those that
        // kill from `state` itself; while some state the S bytes reach (within `max_len`)
        // has a kill, remove from S either its killing keys or the keys that enter it,
        // whichever fewer tokens hold (in a URI path, `%` rather than every letter that
        // may not follow it). The bytes to check are those outside S.
        let mut key_weight = vec![0u64; KEYS];
        for b in 0..=255u8 {
            if crate::util::bytes::is_plain_byte(b) {
                key_weight[key_of(b)] += u64::from(weight[b as usize]);
            }
        }
        let mut safe: Vec<bool> = (0..KEYS).map(|k| !always(k)).collect();
        for &(b, _, key) in &moves[0] {
            if self.next(state, b) == DEAD {
                safe[key as usize] = false;
            }
        }
        let any_sometimes = (0..KEYS).any(sometimes);
        // Fragments shorter than the first "sometimes" kill meet only `always` bytes.
        let safe_len = (0..KEYS).filter(|&k| sometimes(k)).map(|k| dead_at[k] - 1).min().unwrap_or(max_len);
        // A count that runs out: when no fragment of `safe_len + 1` bytes stays alive (one
        // pass per exact length, each level's pairs once), every fragment is decided by its
        // length and its `always` bytes, with nothing to read.
        if any_sometimes && safe_len < max_len && safe_len <= MAX_SHORT_ONLY {
            let mut level = vec![(state, 0u8)];
            let mut stamp = vec![usize::MAX; self.num_states() * 8];
            for d in 1..=safe_len + 1 {
                next.clear();
                for &(s, u) in &level {
                    for &(b, u2, key) in &moves[u as usize] {
                        let t = self.next(s, b);
                        let slot = t as usize * 8 + u2 as usize;
                        if t != DEAD && !always(key as usize) && stamp[slot] != d {
                            stamp[slot] = d;
                            next.push((t, u2));
                        }
                    }
                }
                std::mem::swap(&mut level, &mut next);
                if level.is_empty() {
                    break;
                }
            }
            if level.is_empty() {
                let mut risk = PlainRisk { safe_len, short_only: true, ..PlainRisk::default() };
                for b in (0..=255u8).filter(|&b| crate::util::bytes::is_plain_byte(b) && always(key_of(b))) {
                    risk.always[(b >> 6) as usize] |= 1 << (b & 63);
                }
                return Some(risk);
            }
        }
        if any_sometimes && max_check == 0 {
            return None;
        }
        let mut settled = !any_sometimes;
        // Per round: (state, key) kills in the closure, and (state, key) moves into a
        // state with a kill from one without.
        let mut kills: Vec<(u32, u16)> = Vec::new();
        let mut enters: Vec<(u32, u16)> = Vec::new();
        let mut violating = vec![false; self.num_states()];
        let mut closure: Vec<(u32, u8)> = Vec::new();
        for _ in 0..MAX_SAFE_ROUNDS {
            if settled {
                break;
            }
            seen.fill(0);
            seen[state as usize] = 1;
            frontier.clear();
            frontier.push((state, 0u8));
            closure.clear();
            violating.fill(false);
            kills.clear();
            for _ in 0..max_len {
                next.clear();
                for &(s, u) in &frontier {
                    for &(b, u2, key) in &moves[u as usize] {
                        if !safe[key as usize] {
                            continue;
                        }
                        let t = self.next(s, b);
                        if t == DEAD {
                            violating[s as usize] = true;
                            kills.push((s, key));
                        } else if seen[t as usize] & (1 << u2) == 0 {
                            seen[t as usize] |= 1 << u2;
                            next.push((t, u2));
                        }
                    }
                }
                closure.extend_from_slice(&frontier);
                if next.is_empty() {
                    break;
                }
                std::mem::swap(&mut frontier, &mut next);
            }
            if kills.is_empty() {
                settled = true;
                break;
            }
            enters.clear();
            for &(s, u) in &closure {
                if violating[s as usize] {
                    continue;
                }
                for &(b, _, key) in &moves[u as usize] {
                    let t = self.next(s, b);
                    if safe[key as usize] && violating[t as usize] {
                        enters.push((t, key));
                    }
                }
            }
            // Per state with a kill entered from one without (or the start state, which can
            // only lose its killing keys), the cheaper cut.
            let group = |pairs: &mut Vec<(u32, u16)>| {
                pairs.sort_unstable();
                pairs.dedup();
            };
            group(&mut kills);
            group(&mut enters);
            let cost_of = |pairs: &[(u32, u16)], v: u32| -> u64 {
                pairs.iter().filter(|p| p.0 == v).map(|p| key_weight[p.1 as usize]).sum()
            };
            let mut cut_keys: Vec<u16> = Vec::new();
            let mut v_start = 0;
            while v_start < kills.len() {
                let v = kills[v_start].0;
                let v_end = v_start + kills[v_start..].iter().take_while(|p| p.0 == v).count();
                let entering = enters.iter().any(|p| p.0 == v);
                if v != state && !entering {
                    // Reached only through other states with a kill: cut there first.
                } else if v != state && cost_of(&enters, v) < cost_of(&kills[v_start..v_end], v) {
                    cut_keys.extend(enters.iter().filter(|p| p.0 == v).map(|p| p.1));
                } else {
                    cut_keys.extend(kills[v_start..v_end].iter().map(|p| p.1));
                }
                v_start = v_end;
            }
            for k in cut_keys {
                safe[k as usize] = false;
            }
        }
        if !settled {
            return None;
        }
        let mut risk = PlainRisk { safe_len, ..PlainRisk::default() };
        let mut checked = 0;
        for b in 0..=255u8 {
            let key = key_of(b);
            if !crate::util::bytes::is_plain_byte(b) {
                continue;
            }
            if always(key) {
                risk.always[(b >> 6) as usize] |= 1 << (b & 63);
            } else if !safe[key] {
                risk.check[(b >> 6) as usize] |= 1 << (b & 63);
                checked += 1;
            }
        }
        if checked > max_check {
            return None;
        }
        Some(risk)
    }

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
    /// The DFA of one byte string: a chain of `bytes.len() + 1` live states, over one class
    /// per distinct byte plus one for all others (already the coarsest classes). Object keys
    /// and enum members are most of a grammar's regexes; this is a fraction of a microsecond
    /// where [`Dfa::from_byte_sequences`] costs ~10.
    pub fn literal(bytes: &[u8], limits: &Limits, what: &str) -> Result<Dfa> {
        if bytes.len() + 2 > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
        let mut present = [false; 256];
        for &b in bytes {
            present[b as usize] = true;
        }
        // Classes numbered by their first byte, as `with_coarsest_classes` numbers them.
        let mut class_of = [0u8; 256];
        let mut other: Option<u8> = None;
        let mut next = 0usize;
        for b in 0..256 {
            class_of[b] = if present[b] {
                next += 1;
                (next - 1) as u8
            } else {
                *other.get_or_insert_with(|| {
                    next += 1;
                    (next - 1) as u8
                })
            };
        }
        let stride = next;
        let total = bytes.len() + 2;
        let mut table = vec![DEAD; total * stride];
        for (i, &b) in bytes.iter().enumerate() {
            table[(i + 1) * stride + class_of[b as usize] as usize] = i as u32 + 2;
        }
        let mut accepting = vec![false; total];
        accepting[total - 1] = true;
        Ok(Dfa { class_of, stride, table, accepting, counted: None })
    }

    /// The DFA of a finite set of byte-range sequences (each a string of byte classes, as
    /// a UTF-8 encoded character class or a literal is), built by subset construction over
    /// positions in the sequences: cheap for the literals and classes that make up most of
    /// a grammar's regexes. `Err(EmptyLanguage)` when `seqs` is empty.
    pub fn from_byte_sequences(seqs: &[Vec<(u8, u8)>], limits: &Limits, what: &str) -> Result<Dfa> {
        if seqs.is_empty() {
            return Err(Error::EmptyLanguage { what: what.to_string() });
        }
        // Bytes split at every range boundary: bytes in one class take the same moves.
        let mut cut = [false; 257];
        for seq in seqs {
            for &(lo, hi) in seq {
                cut[lo as usize] = true;
                cut[hi as usize + 1] = true;
            }
        }
        let mut class_of = [0u8; 256];
        let mut c = 0u8;
        for b in 1..256 {
            if cut[b] {
                c += 1;
            }
            class_of[b] = c;
        }
        let n_classes = c as usize + 1;
        // Subset construction over the sequences: a state is a depth and the sequences
        // still matching there (sorted), interned. Each state's moves are found in one
        // pass over its sequences, bucketed by class. The language is finite, so every
        // state is live and the states form a DAG by depth.
        const NONE: u32 = u32::MAX;
        let mut sets: Vec<(usize, Vec<u32>)> = vec![(0, (0..seqs.len() as u32).collect())];
        let mut ids: FastMap<(usize, Vec<u32>), u32> = FastMap::default();
        ids.insert(sets[0].clone(), 0);
        let mut rows: Vec<u32> = Vec::new();
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); n_classes];
        let mut i = 0;
        while i < sets.len() {
            buckets.iter_mut().for_each(Vec::clear);
            let depth = sets[i].0;
            for &k in &sets[i].1 {
                if let Some(&(lo, hi)) = seqs[k as usize].get(depth) {
                    for bucket in &mut buckets[class_of[lo as usize] as usize..=class_of[hi as usize] as usize] {
                        bucket.push(k);
                    }
                }
            }
            for bucket in &buckets {
                if bucket.is_empty() {
                    rows.push(NONE);
                    continue;
                }
                let key = (depth + 1, bucket.clone());
                let id = match ids.get(&key) {
                    Some(&id) => id,
                    None => {
                        let id = sets.len() as u32;
                        sets.push(key.clone());
                        ids.insert(key, id);
                        id
                    }
                };
                rows.push(id);
            }
            if sets.len() > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            i += 1;
        }
        // Minimal DFA of a finite language, bottom-up: deepest states first, two states
        // are one when they agree on accepting and on their (already merged) successors.
        let n = sets.len();
        let accepting_raw: Vec<bool> =
            sets.iter().map(|(d, alive)| alive.iter().any(|&k| seqs[k as usize].len() == *d)).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(sets[s].0));
        let mut merged = vec![0u32; n];
        let mut signatures: FastMap<Vec<u32>, u32> = FastMap::default();
        let mut sig = Vec::with_capacity(n_classes + 1);
        for &s in &order {
            sig.clear();
            sig.push(accepting_raw[s] as u32);
            sig.extend(
                rows[s * n_classes..(s + 1) * n_classes].iter().map(|&t| if t == NONE { NONE } else { merged[t as usize] }),
            );
            let k = signatures.len() as u32;
            merged[s] = *signatures.entry(sig.clone()).or_insert(k);
        }
        // Number the merged states: dead 0, start 1, then by first reach (breadth first).
        let mut new_id = vec![DEAD; signatures.len()];
        let mut rep = vec![0usize]; // a raw state per new id - 1
        new_id[merged[0] as usize] = 1;
        let mut j = 0;
        while j < rep.len() {
            let s = rep[j];
            for &t in &rows[s * n_classes..(s + 1) * n_classes] {
                if t != NONE && new_id[merged[t as usize] as usize] == DEAD {
                    new_id[merged[t as usize] as usize] = rep.len() as u32 + 1;
                    rep.push(t as usize);
                }
            }
            j += 1;
        }
        let total = rep.len() + 1;
        let mut table = vec![DEAD; total * n_classes];
        let mut accepting = vec![false; total];
        for (k, &s) in rep.iter().enumerate() {
            accepting[k + 1] = accepting_raw[s];
            for c in 0..n_classes {
                let t = rows[s * n_classes + c];
                table[(k + 1) * n_classes + c] = if t == NONE { DEAD } else { new_id[merged[t as usize] as usize] };
            }
        }
        Ok(Dfa { class_of, stride: n_classes, table, accepting, counted: None }.with_coarsest_classes())
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

    /// Heap bytes used by the transition table.
    pub fn memory_bytes(&self) -> usize {
        self.table.len() * 4 + self.accepting.len() + self.counted.as_ref().map_or(0, |c| (c.template.len() + c.exit.len()) * 4)
    }

    /// The DFA as bytes that [`Dfa::from_bytes`] reads back (used for the automata that
    /// ship prebuilt, see [`crate::prebuilt`]). Layout, integers little-endian: `CDFA`,
    /// version 1, entry width (2 or 4 bytes), stride (u16), number of states (u32), the 256
    /// class ids, the accepting states as a bitset, then the table row by row.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.counted.is_some() {
            return self.stored().to_bytes();
        }
        let n = self.num_states();
        let width: u8 = if n <= 1 << 16 { 2 } else { 4 };
        let mut out = Vec::with_capacity(12 + 256 + n.div_ceil(8) + self.table.len() * width as usize);
        out.extend_from_slice(b"CDFA");
        out.push(1);
        out.push(width);
        out.extend_from_slice(&(self.stride as u16).to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&self.class_of);
        let mut bits = vec![0u8; n.div_ceil(8)];
        for (s, _) in self.accepting.iter().enumerate().filter(|(_, &a)| a) {
            bits[s / 8] |= 1 << (s % 8);
        }
        out.extend_from_slice(&bits);
        for &t in &self.table {
            if width == 2 {
                out.extend_from_slice(&(t as u16).to_le_bytes());
            } else {
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
        out
    }

    /// Reads [`Dfa::to_bytes`]'s layout back; None when the bytes are not a well-formed
    /// DFA (wrong header or length, a class or target out of range, a live dead state).
    pub fn from_bytes(bytes: &[u8]) -> Option<Dfa> {
        let (head, rest) = bytes.split_at_checked(12)?;
        if &head[..4] != b"CDFA" || head[4] != 1 || !matches!(head[5], 2 | 4) {
            return None;
        }
        let width = head[5] as usize;
        let stride = u16::from_le_bytes([head[6], head[7]]) as usize;
        let n = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        if !(1..=256).contains(&stride) || n < 2 {
            return None;
        }
        let (classes, rest) = rest.split_at_checked(256)?;
        let (bits, rest) = rest.split_at_checked(n.div_ceil(8))?;
        if rest.len() != n.checked_mul(stride)?.checked_mul(width)? {
            return None;
        }
        let class_of: [u8; 256] = classes.try_into().ok()?;
        if class_of.iter().any(|&c| c as usize >= stride) {
            return None;
        }
        let accepting: Vec<bool> = (0..n).map(|s| bits[s / 8] & (1 << (s % 8)) != 0).collect();
        let table: Vec<u32> = if width == 2 {
            rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as u32).collect()
        } else {
            rest.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        let dead_is_dead = !accepting[DEAD as usize] && table[..stride].iter().all(|&t| t == DEAD);
        if !dead_is_dead || table.iter().any(|&t| t as usize >= n) {
            return None;
        }
        Some(Dfa { class_of, stride, table, accepting, counted: None })
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

fn size_error(limits: &Limits, what: &str) -> Error {
    Error::LimitExceeded {
        limit: "dfa_size_limit",
        value: limits.dfa_size_limit,
        context: format!("the subset construction of {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regex::compile;

    /// Every byte string over `alphabet` up to `max_len` bytes.
    fn strings(alphabet: &[&[u8]], max_len: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for s in &frontier {
                for piece in alphabet {
                    let mut t: Vec<u8> = s.clone();
                    t.extend_from_slice(piece);
                    if t.len() <= max_len {
                        out.push(t.clone());
                        next.push(t);
                    }
                }
            }
            frontier = next;
        }
        out
    }

    /// Pieces that exercise ASCII, multi-byte characters and malformed UTF-8.
    const PIECES: &[&[u8]] = &[b"a", b"b", b"\n", "\u{e9}".as_bytes(), &[0xc3], &[0xa9], &[0xff]];

    fn dfa(pattern: &str) -> Dfa {
        compile(pattern, &Limits::default()).unwrap()
    }

    #[test]
    fn utf8_any_is_exactly_well_formed_utf8() {
        let any = Dfa::utf8_any();
        for s in strings(PIECES, 4) {
            assert_eq!(any.matches(&s), std::str::from_utf8(&s).is_ok(), "{s:?}");
        }
        // Every two-byte string, and the edges of the multi-byte ranges.
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let s = [a, b];
                assert_eq!(any.matches(&s), std::str::from_utf8(&s).is_ok(), "{s:?}");
            }
        }
        for c in ['\u{7ff}', '\u{800}', '\u{d7ff}', '\u{e000}', '\u{ffff}', '\u{10000}', '\u{10ffff}'] {
            assert!(any.matches(c.to_string().as_bytes()), "{c:?}");
        }
        for bad in [&[0xed, 0xa0, 0x80][..], &[0xf4, 0x90, 0x80, 0x80], &[0xe0, 0x80, 0x80], &[0xf0, 0x80, 0x80, 0x80]] {
            assert!(!any.matches(bad), "{bad:?}");
        }
    }

    #[test]
    fn intersect_and_complement_agree_with_their_definition() {
        let limits = Limits::default();
        let pairs = [("[ab]*", "(?s:.)*a"), ("a*b?", "[^b]*"), ("(?s:.)+", "\u{e9}|a|\n"), ("(ab)*", "a(ba)*b|")];
        for (p, q) in pairs {
            let (a, b) = (dfa(p), dfa(q));
            let both = a.intersect(&b, &limits, "test").unwrap();
            let not_a = a.complement(&limits, "test").unwrap();
            for s in strings(PIECES, 4) {
                assert_eq!(both.matches(&s), a.matches(&s) && b.matches(&s), "{p} & {q}: {s:?}");
                let valid = std::str::from_utf8(&s).is_ok();
                assert_eq!(not_a.matches(&s), valid && !a.matches(&s), "not {p}: {s:?}");
            }
            // Pruned: every live state can still reach a match.
            assert!(
                (1..not_a.num_states() as u32).all(|st| (0..=255u8).any(|x| not_a.next(st, x) != DEAD) || not_a.is_accepting(st))
            );
        }
        assert!(matches!(dfa("a").intersect(&dfa("b"), &limits, "t"), Err(Error::EmptyLanguage { .. })));
        assert!(matches!(dfa("(?s:.)*").complement(&limits, "t"), Err(Error::EmptyLanguage { .. })));
        // Complementing twice gives the language back (on well-formed input).
        let back = dfa("a+|\u{e9}").complement(&limits, "t").unwrap().complement(&limits, "t").unwrap();
        for s in strings(PIECES, 3) {
            assert_eq!(back.matches(&s), dfa("a+|\u{e9}").matches(&s), "{s:?}");
        }
    }

    /// The literal chain is exactly what the general finite-language construction builds
    /// for one string (same classes, numbering and rows), so the two are interchangeable.
    #[test]
    fn literal_chain_equals_the_general_construction() {
        let limits = Limits::default();
        let all: Vec<u8> = (0..=255).collect();
        let cases: Vec<Vec<u8>> = vec![
            b"\"containerPort\"".to_vec(),
            b"aaaa".to_vec(),
            vec![0, 1, 0, 255],
            "é😀".as_bytes().to_vec(),
            b"x".to_vec(),
            all.clone(),
            all.iter().rev().copied().collect(),
        ];
        for bytes in &cases {
            let fast = Dfa::literal(bytes, &limits, "t").unwrap();
            let seq: Vec<(u8, u8)> = bytes.iter().map(|&b| (b, b)).collect();
            let general = Dfa::from_byte_sequences(&[seq], &limits, "t").unwrap();
            assert_eq!(fast.class_of, general.class_of, "{bytes:?}");
            assert_eq!(fast.stride, general.stride, "{bytes:?}");
            assert_eq!(fast.table, general.table, "{bytes:?}");
            assert_eq!(fast.accepting, general.accepting, "{bytes:?}");
        }
        let small = Limits { max_dfa_states: 5, ..Limits::default() };
        assert!(Dfa::literal(b"abc", &small, "t").is_ok());
        assert!(matches!(Dfa::literal(b"abcd", &small, "t"), Err(Error::LimitExceeded { limit: "max_dfa_states", .. })));
    }

    /// A counted region's block and row by multiplication are those of a division, up
    /// to the largest state id.
    #[test]
    fn counted_block_row_is_exact() {
        for per in (1..=70).chain([255, 1000, 65_537, u32::MAX / 3]) {
            let c = Counted::new(per, 1, true, 0, Vec::new(), Vec::new(), true);
            let edges = [0, 1, per - 1, per, per + 1, u32::MAX / 2, u32::MAX - per, u32::MAX - 1, u32::MAX];
            let steps = (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761));
            for rel in edges.into_iter().chain(steps) {
                assert_eq!(c.block_row(rel), (rel / per, rel % per), "{rel} / {per}");
            }
        }
    }

    #[test]
    fn optional_by_an_accepting_start() {
        let plus = dfa("(?:ab)+").or_empty().expect("the start of (ab)+ is not re-entered");
        assert!(plus.difference(&dfa("(?:ab)*")).is_none());
        assert!(dfa("a*b").or_empty().is_none(), "a* re-enters the start");
        assert!(dfa("(?:ab)*").or_empty().is_none());
        assert!(Dfa::from_expr(&DfaExpr::Empty, &Limits::default(), "").unwrap().is_only_empty());
        assert!(!dfa("a?").is_only_empty() && !dfa("a").is_only_empty());
    }

    #[test]
    fn bytes_round_trip_and_malformed_bytes_are_refused() {
        // Two-byte entries, and four-byte ones past 65,536 states.
        for pattern in ["[a-c]x|y+", "(?:[0-9a-f]{2}:)*z", "[a-z]{70000}"] {
            let d = dfa(pattern);
            let bytes = d.to_bytes();
            let back = Dfa::from_bytes(&bytes).expect("round trip");
            // (A counted region is written out: the bytes hold every state.)
            let d = d.stored();
            assert_eq!(
                (back.class_of, back.stride, &back.table, &back.accepting),
                (d.class_of, d.stride, &d.table, &d.accepting)
            );
            assert_eq!(bytes[5], if d.num_states() > 1 << 16 { 4 } else { 2 }, "{pattern}");
        }
        let good = dfa("[a-c]x|y+").to_bytes();
        assert!(Dfa::from_bytes(&good[..good.len() - 1]).is_none(), "short table");
        assert!(Dfa::from_bytes(&[&good[..], &[0]].concat()).is_none(), "trailing byte");
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(Dfa::from_bytes(&bad).is_none(), "magic");
        let mut bad = good.clone();
        bad[12 + b'a' as usize] = 200; // a class id past the stride
        assert!(Dfa::from_bytes(&bad).is_none(), "class id");
        let mut bad = good.clone();
        let last = bad.len() - 2;
        bad[last..].copy_from_slice(&60_000u16.to_le_bytes()); // a target past the states
        assert!(Dfa::from_bytes(&bad).is_none(), "target");
        let mut bad = good.clone();
        bad[12 + 256] |= 1; // the dead state accepting
        assert!(Dfa::from_bytes(&bad).is_none(), "dead state");
    }

    /// The subset-free concatenation: taken only where the junction is deterministic, and
    /// then the same language as the regex engine's.
    #[test]
    fn classes_are_the_coarsest() {
        // The regex engine splits [a-c] from [d-f]; both move alike, so they share a class.
        let d = dfa("[a-c]x|[d-f]x");
        assert_eq!(d.num_classes(), 3, "[a-f], x, everything else");
        let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-7bef]|1[0-9a-f]))"#;
        for p in ["[a-c]x|[d-f]x", "(?:ab|cd)*e", json_char, &format!("\"{json_char}{{0,40}}\"")] {
            let d = dfa(p);
            // No two classes move alike from every state...
            for a in 0..d.num_classes() {
                for b in a + 1..d.num_classes() {
                    let apart = (0..d.num_states()).any(|s| d.table[s * d.stride + a] != d.table[s * d.stride + b]);
                    assert!(apart, "{p}: classes {a} and {b} move alike");
                }
            }
            // Spread over one class per byte, then coarsened again: the same classes and
            // the same moves.
            let table: Vec<u32> =
                (0..d.num_states() as u32).flat_map(|s| (0..=255u8).map(move |b| (s, b))).map(|(s, b)| d.next(s, b)).collect();
            let mut class_of = [0u8; 256];
            for (b, c) in class_of.iter_mut().enumerate() {
                *c = b as u8;
            }
            let wide = Dfa { class_of, stride: 256, table, accepting: d.accepting.clone(), counted: None };
            let narrow = wide.with_coarsest_classes();
            assert_eq!(narrow.num_classes(), d.num_classes(), "{p}");
            for s in 0..d.num_states() as u32 {
                for b in 0..=255u8 {
                    assert_eq!(narrow.next(s, b), d.next(s, b), "{p}: state {s}, byte {b}");
                }
            }
        }
    }

    #[test]
    fn deterministic_concat() {
        let limits = Limits::default();
        let cases = [("\"", "[^\"]*", true), ("[^\"]*", "\"", true), ("a+", "b*", true), ("a+", "a", false), ("a|ab", "c", true)];
        for (p, q, deterministic) in cases {
            let got = dfa(p).concat(&dfa(q), &limits, "t").unwrap();
            assert_eq!(got.is_some(), deterministic, "{p} . {q}");
            // Through from_expr: either path, the regex engine's language.
            let (a, b) = (dfa(p), dfa(q));
            let via_expr =
                Dfa::from_expr(&DfaExpr::Seq(vec![DfaExpr::Leaf(&a), DfaExpr::Empty, DfaExpr::Leaf(&b)]), &limits, "t").unwrap();
            let want = dfa(&format!("(?:{p})(?:{q})"));
            for s in strings(&[b"a", b"b", b"c", b"\"", "\u{e9}".as_bytes(), &[0xc3]], 4) {
                assert_eq!(via_expr.matches(&s), want.matches(&s), "{p} . {q}: {s:?}");
                if let Some(d) = &got {
                    assert_eq!(d.matches(&s), want.matches(&s), "{p} . {q}: {s:?}");
                }
            }
        }
        // Three parts, the middle one nullable: deterministic only if "b" cannot both
        // start the middle part and the last one.
        for (parts, deterministic) in
            [(["a+", "b?", "c"], true), (["a+", "b?", "b"], false), (["a*", "b*", "c*"], true), (["(?:)", "a", "(?:)"], true)]
        {
            let dfas: Vec<Dfa> = parts.iter().map(|p| dfa(p)).collect();
            let refs: Vec<&Dfa> = dfas.iter().collect();
            let got = Dfa::concat_all(&refs, &limits, "t").unwrap();
            assert_eq!(got.is_some(), deterministic, "{parts:?}");
            let want = dfa(&parts.map(|p| format!("(?:{p})")).concat());
            let via_expr = Dfa::from_expr(&DfaExpr::Seq(refs.iter().map(|d| DfaExpr::Leaf(d)).collect()), &limits, "t").unwrap();
            for s in strings(&[b"a", b"b", b"c", &[0xc3]], 5) {
                assert_eq!(via_expr.matches(&s), want.matches(&s), "{parts:?}: {s:?}");
                if let Some(d) = &got {
                    assert_eq!(d.matches(&s), want.matches(&s), "{parts:?}: {s:?}");
                }
            }
        }
    }

    #[test]
    fn from_expr_agrees_with_the_regex_engine() {
        let limits = Limits::default();
        let (a, b, c) = (dfa("a"), dfa("b"), dfa("c"));
        let (astar, opt_b) = (dfa("a*"), dfa("b?"));
        let leaf = DfaExpr::Leaf;
        fn rep(e: DfaExpr<'_>, min: u32, max: Option<u32>) -> DfaExpr<'_> {
            DfaExpr::Repeat { expr: Box::new(e), min, max }
        }
        let (a, b, c, astar, opt_b) = (&a, &b, &c, &astar, &opt_b);
        let cases: Vec<(DfaExpr<'_>, &str)> = vec![
            (DfaExpr::Seq(vec![leaf(a), leaf(b)]), "ab"),
            (DfaExpr::Alt(vec![leaf(a), leaf(b), DfaExpr::Empty]), "a|b|"),
            // A loop next to an alternative: (a*b | c) must not accept "ac".
            (DfaExpr::Alt(vec![DfaExpr::Seq(vec![rep(leaf(a), 0, None), leaf(b)]), leaf(c)]), "a*b|c"),
            (rep(DfaExpr::Seq(vec![leaf(a), leaf(opt_b)]), 2, Some(4)), "(ab?){2,4}"),
            (rep(leaf(astar), 0, None), "a*"),
            (rep(DfaExpr::Alt(vec![leaf(astar), leaf(b)]), 1, None), "(a*|b)+"),
            (DfaExpr::Seq(vec![rep(leaf(opt_b), 3, Some(3)), leaf(c)]), "b{0,3}c"),
            (rep(DfaExpr::Seq(vec![rep(leaf(a), 1, None), leaf(b)]), 0, Some(2)), "(a+b){0,2}"),
        ];
        let pieces: &[&[u8]] = &[b"a", b"b", b"c"];
        for (e, pattern) in &cases {
            let got = Dfa::from_expr(e, &limits, pattern).unwrap();
            let want = dfa(pattern);
            for s in strings(pieces, 6) {
                assert_eq!(got.matches(&s), want.matches(&s), "{pattern}: {s:?}");
            }
        }
    }

    #[test]
    fn constructions_honour_limits() {
        let small = Limits { max_dfa_states: 500, ..Limits::default() };
        let a = dfa("(a|b)*a(a|b){12}");
        let b = dfa("(a|b)*b(a|b){12}");
        // The regexes compile under the default limits; their product is far larger.
        for r in [a.intersect(&b, &small, "t"), a.complement(&small, "t")] {
            assert!(matches!(r, Err(Error::LimitExceeded { limit: "max_dfa_states", .. })), "{r:?}");
        }
        let x = dfa("x?");
        let huge = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&x)), min: 1_000_000_000, max: None };
        let r = Dfa::from_expr(&huge, &Limits::default(), "t");
        assert!(matches!(r, Err(Error::LimitExceeded { limit: "max_dfa_states", .. })), "{r:?}");
        // Subset construction blow-up: (a|b)* a (a|b){n} from leaves.
        let (ab, la) = (dfa("a|b"), dfa("a"));
        let e = DfaExpr::Seq(vec![
            DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&ab)), min: 0, max: None },
            DfaExpr::Leaf(&la),
            DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&ab)), min: 20, max: Some(20) },
        ]);
        let r = Dfa::from_expr(&e, &Limits::default(), "t");
        assert!(matches!(r, Err(Error::LimitExceeded { .. })), "{r:?}");
    }

    #[test]
    fn minimized_keeps_the_language_and_is_minimal() {
        for pattern in ["(a|b)*abb", "abc|abd|xbc|xbd", "[a-c]+(x|y)?", "\\d{2,5}", "(é|ê|[^a])*z", "a{3}|b{3}"] {
            let d = dfa(pattern);
            let m = d.minimized();
            assert_eq!(d.difference(&m), None, "{pattern}");
            assert_eq!(m.minimized().num_states(), m.num_states(), "{pattern}: not a fixpoint");
            assert!(m.num_states() <= d.num_states(), "{pattern}");
        }
        // Hopcroft against Moore's refinement (states split until no signature changes)
        // over the states reachable from the start, on DFAs that are not minimal: unions
        // of equivalent branches, counters and joins.
        let moore_states = |d: &Dfa| {
            let mut reachable = vec![DEAD, d.start()];
            let mut i = 0;
            while i < reachable.len() {
                for &t in &d.table[reachable[i] as usize * d.stride..(reachable[i] as usize + 1) * d.stride] {
                    if !reachable.contains(&t) {
                        reachable.push(t);
                    }
                }
                i += 1;
            }
            let mut block: Vec<u32> = (0..d.num_states()).map(|s| d.accepting[s] as u32).collect();
            let mut count = 0;
            loop {
                let mut ids: std::collections::HashMap<Vec<u32>, u32> = Default::default();
                let mut next = block.clone();
                for &s in &reachable {
                    let s = s as usize;
                    next[s] = {
                        let mut sig = vec![block[s]];
                        sig.extend(d.table[s * d.stride..(s + 1) * d.stride].iter().map(|&t| block[t as usize]));
                        let k = ids.len() as u32;
                        *ids.entry(sig).or_insert(k)
                    };
                }
                block = next;
                if ids.len() == count {
                    return count;
                }
                count = ids.len();
            }
        };
        let limits = Limits::default();
        let (ab, ab2) = (dfa("(?:ab|a)*"), dfa("(?:a|ab)*"));
        let joined = Dfa::from_expr(
            &DfaExpr::Alt(vec![DfaExpr::Leaf(&ab), DfaExpr::Leaf(&ab2)]),
            &Limits { max_dfa_states: 10_000, ..limits.clone() },
            "t",
        )
        .unwrap();
        let mut cases = vec![joined, dfa("x(?:[ab]c|[ab]d){20}y"), dfa("(?:1[0-9]|2[0-9]|[3-9][0-9]){3}|(?:[0-9]{2}){3}")];
        let counter = dfa("[a-c]").repeat_counted(3, Some(40), &limits, "t").unwrap().unwrap();
        cases.push(Dfa::concat_all(&[&counter, &dfa("[xy]z|xz")], &limits, "t").unwrap().unwrap());
        // Every live state twice (copies alternate on each move): a DFA of twice the states
        // with the same minimal automaton.
        let doubled = |d: &Dfa| {
            let n = d.num_states() as u32;
            let id = |s: u32, copy: u32| if s == DEAD { DEAD } else { s + copy * (n - 1) };
            let mut table = vec![DEAD; (2 * n as usize - 1) * d.stride];
            let mut accepting = vec![false; 2 * n as usize - 1];
            for copy in 0..2 {
                for s in 1..n {
                    accepting[id(s, copy) as usize] = d.accepting[s as usize];
                    for c in 0..d.stride {
                        table[id(s, copy) as usize * d.stride + c] = id(d.table[s as usize * d.stride + c], 1 - copy);
                    }
                }
            }
            Dfa { class_of: d.class_of, stride: d.stride, table, accepting, counted: None }
        };
        for p in [
            "(?:[0-9A-Fa-f]{1,4}:){6}[0-9A-Fa-f]{1,4}|::(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}",
            "(a|b)*abb",
            "[a-z]+@[a-z]+(?:\\.[a-z]+)*",
        ] {
            let d = dfa(p);
            cases.push(doubled(&d));
        }
        for d in &cases {
            let m = d.minimized();
            assert_eq!(d.difference(&m), None);
            assert_eq!(m.num_states(), moore_states(d), "Hopcroft and Moore disagree on a DFA of {} states", d.num_states());
        }
        // The textbook example: 4 live states (plus the dead one).
        assert_eq!(dfa("(a|b)*abb").minimized().num_states(), 5);
        // Equivalent suffixes are shared: "abc|abd|xbc|xbd" is [ax]b[cd].
        assert_eq!(dfa("abc|abd|xbc|xbd").minimized().num_states(), dfa("[ax]b[cd]").minimized().num_states());
    }

    #[test]
    fn byte_sequences_build_their_language() {
        let seqs: Vec<Vec<(u8, u8)>> = vec![
            b"cat".iter().map(|&b| (b, b)).collect(),
            vec![(b'c', b'c'), (b'a', b'z')],
            vec![],
            vec![(0xC3, 0xC3), (0x80, 0xBF)],
        ];
        let d = Dfa::from_byte_sequences(&seqs, &Limits::default(), "t").unwrap();
        for (s, want) in [
            (&b"cat"[..], true),
            (b"cz", true),
            (b"c", false),
            (b"", true),
            ("é".as_bytes(), true),
            (b"ca", true),
            (b"cats", false),
            (b"\xC3", false),
        ] {
            assert_eq!(d.matches(s), want, "{s:?}");
        }
        assert!(matches!(Dfa::from_byte_sequences(&[], &Limits::default(), "t"), Err(Error::EmptyLanguage { .. })));
    }

    /// Risky bytes: where entering a restricted state is rarer than what it refuses, only
    /// the entering byte is read; from inside it, what it refuses.
    #[test]
    fn plain_risk_checks_the_bytes_that_enter_danger() {
        const ONE: [u32; 256] = [1; 256];
        let d = dfa(r#""(?:[0-9a-z]|%[0-9a-f][0-9a-f])*""#);
        let body = d.next(d.start(), b'"');
        let set = |bytes: &[u8]| {
            let mut s = [0u64; 4];
            bytes.iter().for_each(|&b| s[(b >> 6) as usize] |= 1 << (b & 63));
            s
        };
        let r = d.plain_risk(body, 8, false, 256, 48, &ONE).unwrap();
        assert_eq!(r.check, set(b"%"));
        let always: Vec<u8> = PlainRisk::bytes(&r.always).collect();
        assert!(always.contains(&b'A') && always.contains(&0xC3) && !always.contains(&b'a') && !always.contains(&b'z'));
        // After `%`: the state is dangerous; what kills somewhere is read (`g`-`z`, `%`).
        let pct = d.next(body, b'%');
        let r = d.plain_risk(pct, 8, false, 256, 48, &ONE).unwrap();
        let check: Vec<u8> = PlainRisk::bytes(&r.check).collect();
        assert!(check.contains(&b'z') && check.contains(&b'%') && !check.contains(&b'0'), "{check:?}");
        // Limits: too many bytes dead at once, too many to check; a reachable accept.
        assert_eq!(d.plain_risk(pct, 8, false, 256, 5, &ONE), None);
        assert_eq!(d.plain_risk(d.start(), 8, false, 100, 48, &ONE), None);
        assert_eq!(dfa("[ab]*").plain_risk(1, 8, false, 256, 48, &ONE), None);
        assert!(dfa("[ab]*").plain_risk(1, 8, true, 256, 48, &ONE).is_some());
        // A count: fragments up to what is left of it need no reading.
        let d = dfa("\"[a-z]{2,12}\"");
        let mut q = d.next(d.start(), b'"');
        assert_eq!(d.plain_risk(q, 8, false, 256, 48, &ONE).unwrap().safe_len, 8);
        for _ in 0..7 {
            q = d.next(q, b'x');
        }
        let r = d.plain_risk(q, 8, false, 256, 48, &ONE).unwrap();
        assert_eq!((r.safe_len, r.short_only, PlainRisk::bytes(&r.check).count()), (5, true, 0));
        // With two-byte characters, 6 bytes may still be 3 characters: read them.
        let d = dfa("\"(?:[a-z]|é){2,12}\"");
        let mut q = d.next(d.start(), b'"');
        for _ in 0..7 {
            q = d.next(q, b'x');
        }
        let r = d.plain_risk(q, 8, false, 256, 48, &ONE).unwrap();
        assert_eq!((r.safe_len, r.short_only), (5, false));
        assert!(PlainRisk::bytes(&r.check).any(|b| b == b'a'));
    }

    #[test]
    fn refine_is_the_coarsest_common_refinement() {
        let a = dfa("[a-m]x").class_of;
        let b = dfa("[h-z]y").class_of;
        let r = refine(&[&a, &b]);
        for x in 0..256 {
            for y in 0..256 {
                let same = a[x] == a[y] && b[x] == b[y];
                assert_eq!(r[x] == r[y], same, "{x} {y}");
            }
        }
        // Numbered by first occurrence: byte 0 is in class 0, new classes count up.
        assert_eq!(r[0], 0);
        let mut top = 0;
        for &c in &r {
            assert!(c <= top + 1);
            top = top.max(c);
        }
    }
}
