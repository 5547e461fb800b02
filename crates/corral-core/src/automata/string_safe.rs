//! Which JSON-string-safe fragments a DFA state keeps alive.
//!
//! A *string-safe* fragment is what a JSON string holds unescaped: printable ASCII other
//! than `"` and `\\`, or UTF-8 characters, the last one possibly unfinished. Inside free
//! text nearly every token is one, so the vocabulary keeps them as precomputed slices
//! (see `crate::vocab::slices`); this analysis says which bytes of such fragments a state
//! may die on, so a mask can take a slice's bits and read only the risky tokens.

use super::{Dfa, DEAD};
use crate::util::bytes::is_string_safe_byte;
use crate::util::state_map::StateMap;
use crate::util::utf8::Utf8;

/// Longest `safe_len` for which [`Dfa::string_safe_risk`] looks for [`StringSafeRisk::short_only`]
/// (the vocabulary keeps masks by token length up to 16 bytes).
const MAX_SHORT_ONLY: usize = 16;

/// Most rounds of [`Dfa::string_safe_risk`]'s safe-set fixpoint (each removes keys); past it
/// the state is left to the trie walk.
const MAX_SAFE_ROUNDS: usize = 24;

/// The result of [`Dfa::string_safe_risk`]: sets of bytes, as 256-bit sets. A string-safe
/// fragment of at most `safe_len` bytes stays alive (and out of accepting states) unless
/// it holds an `always` byte; a longer one holding an `ends` byte must be read through the
/// DFA; of the others, one holding an `always` byte dies, one holding a `check` byte must
/// be read, and one holding neither stays alive (and out of accepting states).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringSafeRisk {
    /// Bytes on which the DFA dies wherever a string-safe fragment can read them.
    pub always: [u64; 4],
    /// Bytes after which a fragment may die.
    pub check: [u64; 4],
    /// Fragments of at most this many bytes need no reading, whatever `check` bytes
    /// they hold (e.g. the characters left before a `{2,12}` count runs out).
    pub safe_len: usize,
    /// Every fragment longer than `safe_len` dies (`check` and `ends` are then empty): an
    /// ASCII count near its end, such as `[A-Z0-9]{17}` with 3 characters left.
    pub short_only: bool,
    /// Bytes around which a fragment may pass through an accepting state (found only where
    /// ends count as a risk): every fragment that ends the terminal where the parser may
    /// go on holds such a byte, and may hold an `always` byte after it, so it is read even
    /// then. Either the bytes that enter an accepting state (the closing marker of a raw
    /// XML argument, `</parameter>`: its `>`), or, where more than 8 bytes do (free text,
    /// which may end anywhere), the bytes that can follow the end and are read from an
    /// accepting state (the `<` of the marker after the text).
    pub ends: [u64; 4],
}

impl StringSafeRisk {
    /// No risky byte: every string-safe fragment stays alive.
    pub fn is_clear(&self) -> bool {
        self.always == [0; 4] && self.check == [0; 4]
    }
}

/// Every byte: where a terminal may be followed by anything.
pub const ANY_BYTE: [u64; 4] = [u64::MAX; 4];

impl Dfa {
    /// Does every string-safe fragment (see `vocab::slices::is_string_safe_fragment`) of 1 to
    /// `max_len` bytes, read from `state`, keep the DFA alive and, unless `may_accept`, out
    /// of accepting states? Then every token of a [`crate::vocab::StringSafeSlice`] of that
    /// bound is allowed from `state`, and (without accepting states) no terminal ends
    /// inside one, so a mask needs no walk over the slice.
    pub fn admits_string_safe(&self, state: u32, max_len: usize, may_accept: bool) -> bool {
        let ends = (!may_accept).then_some(&ANY_BYTE);
        self.string_safe_risk(state, max_len, ends, 0, 0, &[0; 256]).is_some_and(|r| r.is_clear())
    }

    /// Which bytes decide whether a string-safe fragment of 1 to `max_len` bytes, read from
    /// `state`, keeps the DFA alive and, where `follow` is given, does not end the terminal
    /// where the parser may go on (see [`StringSafeRisk`]). `follow`: the bytes that can
    /// come right after the terminal (None: where it ends does not matter). Entering an
    /// accepting state is then a risk like dying: the bytes that do so are the risk's
    /// `ends`. Where more than 8 bytes enter accepting states, the risk is reading, from
    /// an accepting state, a byte of `follow` (an end followed by any other byte leads
    /// nowhere): those bytes are the `ends`. None where more than 8 bytes do that too (an
    /// identifier that ends at every letter, followed by anything: a trie walk records
    /// its ends as cheaply), where more than `max_dead_at_once` string-safe bytes kill at
    /// the first read (few tokens live: a trie walk ends quickly), or where more than
    /// `max_check` bytes would make a fragment need reading. `weight[b]` (how many tokens
    /// hold byte `b`) steers which bytes are left to check.
    ///
    /// A breadth-first search over (DFA state, UTF-8 state) pairs finds, per byte, whether
    /// it kills from every pair that reads it (`always`) or from some only, and the first
    /// position of such a kill (`safe_len`). The `check` bytes are those outside a safe
    /// set, found as a fixpoint (see `RiskSearch::safe_keys`).
    pub fn string_safe_risk(
        &self,
        state: u32,
        max_len: usize,
        follow: Option<&[u64; 4]>,
        max_dead_at_once: usize,
        max_check: usize,
        weight: &[u32; 256],
    ) -> Option<StringSafeRisk> {
        // Cheap first: at a terminal's start most bytes kill at once (lexer masks ask this
        // for every open terminal).
        let dead_at_once = (0..=255u8)
            .filter(|&b| is_string_safe_byte(b) && Utf8::Boundary.next(b).is_some() && self.next(state, b) == DEAD)
            .count();
        if dead_at_once > max_dead_at_once {
            return None;
        }
        let entering = RiskSearch::new(self, state, max_len, follow.map_or(EndRisk::Harmless, |_| EndRisk::Entering));
        let (search, kills, ends) = match (entering.kills_and_ends(), follow) {
            (Some((kills, ends)), _) => (entering, kills, ends),
            (None, Some(follow)) if *follow != ANY_BYTE => {
                let leaving = RiskSearch::new(self, state, max_len, EndRisk::Leaving(keys_of(self, follow)));
                let (kills, ends) = leaving.kills_and_ends()?;
                (leaving, kills, ends)
            }
            (None, _) => return None,
        };
        let any_sometimes = (0..KEYS).any(|k| kills.sometimes(k));
        // Fragments shorter than the first "sometimes" kill meet only `always` bytes.
        let safe_len = (0..KEYS).filter(|&k| kills.sometimes(k)).map(|k| kills.dead_at[k] - 1).min().unwrap_or(max_len);
        if any_sometimes
            && ends == [0; 4]
            && safe_len < max_len
            && safe_len <= MAX_SHORT_ONLY
            && search.all_die_past(safe_len, &kills)
        {
            let mut risk = StringSafeRisk { safe_len, short_only: true, ..StringSafeRisk::default() };
            for b in (0..=255u8).filter(|&b| is_string_safe_byte(b) && kills.always(search.key_of(b))) {
                risk.always[(b >> 6) as usize] |= 1 << (b & 63);
            }
            return Some(risk);
        }
        if any_sometimes && max_check == 0 {
            return None;
        }
        let safe = if any_sometimes { search.safe_keys(&kills, weight)? } else { search.initial_safe(&kills) };
        let mut risk = StringSafeRisk { safe_len, ends, ..StringSafeRisk::default() };
        let mut checked = 0;
        for b in (0..=255u8).filter(|&b| is_string_safe_byte(b)) {
            let key = search.key_of(b);
            if kills.always(key) {
                risk.always[(b >> 6) as usize] |= 1 << (b & 63);
            } else if !safe[key] {
                risk.check[(b >> 6) as usize] |= 1 << (b & 63);
                checked += 1;
            }
        }
        (checked <= max_check).then_some(risk)
    }
}

/// Most bytes that may bring a fragment into an accepting state for
/// [`Dfa::string_safe_risk`] to answer: the last bytes of a few closing markers, not a
/// class of characters.
const MAX_END_BYTES: usize = 8;

/// Byte keys: bytes with the same (DFA class, UTF-8 class) pair behave alike everywhere.
const KEYS: usize = 256 * 12;

/// Per key of `dfa`: does it hold one of the string-safe `bytes`?
fn keys_of(dfa: &Dfa, bytes: &[u64; 4]) -> Vec<bool> {
    let utf8 = Utf8::classes();
    let mut keys = vec![false; KEYS];
    for b in (0..=255u8).filter(|&b| is_string_safe_byte(b) && bytes[(b >> 6) as usize] >> (b & 63) & 1 == 1) {
        keys[key_of(dfa, &utf8, b)] = true;
    }
    keys
}

/// The UTF-8 states a string-safe fragment passes through, by index.
pub(super) const U: [Utf8; 8] =
    [Utf8::Boundary, Utf8::Cont(1), Utf8::Cont(2), Utf8::Cont(3), Utf8::E0, Utf8::Ed, Utf8::F0, Utf8::F4];

/// The key of byte `b` in `dfa` (`utf8`: [`Utf8::classes`]).
fn key_of(dfa: &Dfa, utf8: &[u8; 256], b: u8) -> usize {
    dfa.class_of[b as usize] as usize * 12 + utf8[b as usize] as usize
}

/// The moves of string-safe fragments through a DFA's byte classes: per UTF-8 state (by
/// index in [`U`]), the string-safe bytes it takes, one representative per key, with the
/// UTF-8 state after (its index in [`U`]) and the key.
pub(super) type SafeMoves = [Vec<(u8, u8, u16)>; 8];

/// The [`SafeMoves`] of `dfa`. A search over (DFA state, UTF-8 state) pairs steps by these
/// instead of by every byte. They depend only on the byte classes, and every string-safe
/// slice mask asks for them once per slice tried (about 10 µs each to build), so the
/// latest few are kept per thread, by class map.
pub(super) fn safe_moves(dfa: &Dfa) -> std::rc::Rc<SafeMoves> {
    thread_local! {
        static RECENT: std::cell::RefCell<Vec<([u8; 256], std::rc::Rc<SafeMoves>)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        if let Some((_, moves)) = recent.iter().find(|(classes, _)| *classes == dfa.class_of) {
            return moves.clone();
        }
        let moves = std::rc::Rc::new(build_safe_moves(dfa));
        if recent.len() == SAFE_MOVES_KEPT {
            recent.remove(0);
        }
        recent.push((dfa.class_of, moves.clone()));
        moves
    })
}

/// How many class maps' [`SafeMoves`] a thread keeps (a grammar's string terminals).
const SAFE_MOVES_KEPT: usize = 16;

pub(super) fn build_safe_moves(dfa: &Dfa) -> SafeMoves {
    let utf8 = Utf8::classes();
    let index = |u: Utf8| U.iter().position(|&x| x == u).unwrap_or(0) as u8;
    let mut moves: SafeMoves = Default::default();
    // seen_key[key] == i + 1: the key has a representative in moves[i].
    let mut seen_key = vec![0u8; KEYS];
    for (i, u) in U.iter().enumerate() {
        for b in 0..=255u8 {
            let key = key_of(dfa, &utf8, b);
            if !is_string_safe_byte(b) || seen_key[key] == i as u8 + 1 {
                continue;
            }
            if let Some(u2) = u.next(b) {
                seen_key[key] = i as u8 + 1;
                moves[i].push((b, index(u2), key as u16));
            }
        }
    }
    moves
}

/// When a terminal's end is a risk in [`RiskSearch`].
enum EndRisk {
    /// Never: where the terminal ends does not matter.
    Harmless,
    /// Entering an accepting state.
    Entering,
    /// Reading, from an accepting state, a byte of one of these keys (those of the bytes
    /// that can follow the terminal).
    Leaving(Vec<bool>),
}

/// Where string-safe bytes kill, per key, as the search from a state found them.
struct Kills {
    /// Per key: it kills (or ends the terminal, where that is a risk) from some
    /// pair that reads it.
    dead: Vec<bool>,
    /// Per key: it leaves some pair that reads it alive.
    alive: Vec<bool>,
    /// Per key: it ends the terminal from some pair (where that is a risk, see `EndRisk`).
    ends: Vec<bool>,
    /// Per key, the first position (1-based) at which it killed (or ended the terminal,
    /// where that is a risk).
    dead_at: Vec<usize>,
}

impl Kills {
    /// The key kills from some pairs that read it and not from others.
    fn sometimes(&self, key: usize) -> bool {
        self.dead[key] && self.alive[key]
    }

    /// The key kills from every pair that reads it.
    fn always(&self, key: usize) -> bool {
        self.dead[key] && !self.alive[key]
    }
}

/// The searches of [`Dfa::string_safe_risk`] from one state, over (DFA state, UTF-8
/// state) pairs within `max_len` bytes.
struct RiskSearch<'a> {
    dfa: &'a Dfa,
    state: u32,
    max_len: usize,
    /// Which ends are a risk, like dying.
    risk: EndRisk,
    utf8: [u8; 256],
    /// Per UTF-8 state, the string-safe bytes it takes, one representative per key, with
    /// the UTF-8 state after (its index in [`U`]) and the key.
    moves: std::rc::Rc<SafeMoves>,
}

impl<'a> RiskSearch<'a> {
    fn new(dfa: &'a Dfa, state: u32, max_len: usize, risk: EndRisk) -> RiskSearch<'a> {
        RiskSearch { dfa, state, max_len, risk, utf8: Utf8::classes(), moves: safe_moves(dfa) }
    }

    /// Does the move from `s` by `key` into `t` end a fragment's safety: `t` is dead, or
    /// the move ends the terminal where that is a risk?
    fn risky(&self, s: u32, key: u16, t: u32) -> bool {
        t == DEAD || self.ends_at(s, key, t)
    }

    /// Is the move from `s` by `key` into `t` an end that is a risk?
    fn ends_at(&self, s: u32, key: u16, t: u32) -> bool {
        match &self.risk {
            EndRisk::Harmless => false,
            EndRisk::Entering => t != DEAD && self.dfa.is_accepting(t),
            EndRisk::Leaving(keys) => keys[key as usize] && self.dfa.is_accepting(s),
        }
    }

    /// The key of byte `b`.
    fn key_of(&self, b: u8) -> usize {
        key_of(self.dfa, &self.utf8, b)
    }

    /// [`RiskSearch::kills`], and the string-safe bytes of the keys whose ends are a risk;
    /// None where more than [`MAX_END_BYTES`] bytes are.
    fn kills_and_ends(&self) -> Option<(Kills, [u64; 4])> {
        let kills = self.kills()?;
        let mut ends = [0u64; 4];
        for b in (0..=255u8).filter(|&b| is_string_safe_byte(b) && kills.ends[self.key_of(b)]) {
            ends[(b >> 6) as usize] |= 1 << (b & 63);
        }
        let count: usize = ends.iter().map(|w| w.count_ones() as usize).sum();
        (count <= MAX_END_BYTES).then_some((kills, ends))
    }

    /// Where each key kills (or ends the terminal, where that is a risk) within
    /// `max_len` bytes; None once more than [`MAX_END_BYTES`] keys (so bytes) enter
    /// accepting states.
    fn kills(&self) -> Option<Kills> {
        // The pairs reachable within `max_len - 1` bytes are those first reached at a
        // depth below `max_len`; each is expanded once. Seen pairs: one bit per UTF-8
        // state, per DFA state.
        let mut kills =
            Kills { dead: vec![false; KEYS], alive: vec![false; KEYS], ends: vec![false; KEYS], dead_at: vec![usize::MAX; KEYS] };
        let mut seen = StateMap::new(self.dfa.num_states(), 0u8);
        let (mut frontier, mut next) = (vec![(self.state, 0u8)], Vec::new());
        seen.set(self.state, 1);
        let mut end_keys = 0;
        for depth in 0..self.max_len {
            next.clear();
            for &(s, u) in &frontier {
                for &(b, u2, key) in &self.moves[u as usize] {
                    let t = self.dfa.next(s, b);
                    if self.ends_at(s, key, t) {
                        // A risk, like a kill: fragments that hold the key are read (the
                        // search goes on past it: they may live on), even where the DFA
                        // dies on it (the terminal ended before).
                        if !kills.ends[key as usize] {
                            end_keys += 1;
                            if end_keys > MAX_END_BYTES {
                                return None;
                            }
                        }
                        kills.ends[key as usize] = true;
                        kills.dead[key as usize] = true;
                        kills.alive[key as usize] = true;
                        kills.dead_at[key as usize] = kills.dead_at[key as usize].min(depth + 1);
                    }
                    if t == DEAD {
                        kills.dead[key as usize] = true;
                        kills.dead_at[key as usize] = kills.dead_at[key as usize].min(depth + 1);
                        continue;
                    }
                    kills.alive[key as usize] = true;
                    if seen.get(t) & (1 << u2) == 0 {
                        seen.set(t, seen.get(t) | 1 << u2);
                        next.push((t, u2));
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        Some(kills)
    }

    /// A count that runs out: does no fragment of `safe_len + 1` bytes without `always`
    /// bytes stay alive? Then every fragment is decided by its length and its `always`
    /// bytes, with nothing to read. One pass per exact length, each level's pairs once.
    fn all_die_past(&self, safe_len: usize, kills: &Kills) -> bool {
        let mut level = vec![(self.state, 0u8)];
        let mut next = Vec::new();
        // Per (state, UTF-8 state): the last level that reached it.
        let mut stamp = StateMap::new(self.dfa.num_states(), [usize::MAX; 8]);
        for d in 1..=safe_len + 1 {
            next.clear();
            for &(s, u) in &level {
                for &(b, u2, key) in &self.moves[u as usize] {
                    let t = self.dfa.next(s, b);
                    if t != DEAD && !kills.always(key as usize) && stamp.get(t)[u2 as usize] != d {
                        let mut at = stamp.get(t);
                        at[u2 as usize] = d;
                        stamp.set(t, at);
                        next.push((t, u2));
                    }
                }
            }
            std::mem::swap(&mut level, &mut next);
            if level.is_empty() {
                break;
            }
        }
        level.is_empty()
    }

    /// The safe keys S: a fragment of S bytes only, read from the state, meets no kill
    /// (None if the fixpoint takes more than [`MAX_SAFE_ROUNDS`] rounds).
    ///
    /// Found as a fixpoint: start from every key that is not `always`, less those that
    /// kill from the state itself; while some state the S bytes reach (within `max_len`)
    /// has a kill, remove from S either its killing keys or the keys that enter it,
    /// whichever fewer tokens hold (in a URI path, `%` rather than every letter that may
    /// not follow it).
    fn safe_keys(&self, kills: &Kills, weight: &[u32; 256]) -> Option<Vec<bool>> {
        let mut key_weight = vec![0u64; KEYS];
        for b in (0..=255u8).filter(|&b| is_string_safe_byte(b)) {
            key_weight[self.key_of(b)] += u64::from(weight[b as usize]);
        }
        let mut safe = self.initial_safe(kills);
        let mut round = Round::new(self.dfa.num_states());
        for _ in 0..MAX_SAFE_ROUNDS {
            self.find_violations(&safe, &mut round);
            if round.kills.is_empty() {
                return Some(safe);
            }
            for k in round.cut(self.state, &key_weight) {
                safe[k as usize] = false;
            }
        }
        None
    }

    /// The fixpoint's start: every key that is not `always`, less those that kill from the
    /// state itself.
    fn initial_safe(&self, kills: &Kills) -> Vec<bool> {
        let mut safe: Vec<bool> = (0..KEYS).map(|k| !kills.always(k)).collect();
        for &(b, _, key) in &self.moves[0] {
            if self.risky(self.state, key, self.dfa.next(self.state, b)) {
                safe[key as usize] = false;
            }
        }
        safe
    }

    /// One round of [`RiskSearch::safe_keys`]: the (state, key) kills among the pairs the
    /// safe keys reach, and the (state, key) moves into a state with a kill from one
    /// without.
    fn find_violations(&self, safe: &[bool], round: &mut Round) {
        round.seen.reset();
        round.seen.set(self.state, 1);
        round.violating.reset();
        round.kills.clear();
        round.closure.clear();
        let (mut frontier, mut next) = (vec![(self.state, 0u8)], Vec::new());
        for _ in 0..self.max_len {
            next.clear();
            for &(s, u) in &frontier {
                for &(b, u2, key) in self.moves[u as usize].iter().filter(|m| safe[m.2 as usize]) {
                    let t = self.dfa.next(s, b);
                    if self.risky(s, key, t) {
                        round.violating.set(s, true);
                        round.kills.push((s, key));
                    } else if round.seen.get(t) & (1 << u2) == 0 {
                        round.seen.set(t, round.seen.get(t) | 1 << u2);
                        next.push((t, u2));
                    }
                }
            }
            round.closure.extend_from_slice(&frontier);
            if next.is_empty() {
                break;
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        round.enters.clear();
        for &(s, u) in round.closure.iter().filter(|p| !round.violating.get(p.0)) {
            for &(b, _, key) in &self.moves[u as usize] {
                let t = self.dfa.next(s, b);
                if safe[key as usize] && round.violating.get(t) {
                    round.enters.push((t, key));
                }
            }
        }
    }
}

/// The buffers of one round of the safe-set fixpoint, reused across rounds.
struct Round {
    seen: StateMap<u8>,
    violating: StateMap<bool>,
    closure: Vec<(u32, u8)>,
    /// (state, key): the key kills from the state.
    kills: Vec<(u32, u16)>,
    /// (state, key): the key enters the state (which has a kill) from one without.
    enters: Vec<(u32, u16)>,
}

impl Round {
    fn new(states: usize) -> Round {
        Round {
            seen: StateMap::new(states, 0),
            violating: StateMap::new(states, false),
            closure: Vec::new(),
            kills: Vec::new(),
            enters: Vec::new(),
        }
    }

    /// The keys to remove from the safe set: per state with a kill entered from one
    /// without (or the start state, which can only lose its killing keys), the cheaper
    /// cut by token weight.
    fn cut(&mut self, start: u32, key_weight: &[u64]) -> Vec<u16> {
        for pairs in [&mut self.kills, &mut self.enters] {
            pairs.sort_unstable();
            pairs.dedup();
        }
        let (kills, enters) = (&self.kills, &self.enters);
        let cost_of =
            |pairs: &[(u32, u16)], v: u32| -> u64 { pairs.iter().filter(|p| p.0 == v).map(|p| key_weight[p.1 as usize]).sum() };
        let mut cut_keys: Vec<u16> = Vec::new();
        let mut v_start = 0;
        while v_start < kills.len() {
            let v = kills[v_start].0;
            let v_end = v_start + kills[v_start..].iter().take_while(|p| p.0 == v).count();
            let entering = enters.iter().any(|p| p.0 == v);
            if v != start && !entering {
                // Reached only through other states with a kill: cut there first.
            } else if v != start && cost_of(enters, v) < cost_of(&kills[v_start..v_end], v) {
                cut_keys.extend(enters.iter().filter(|p| p.0 == v).map(|p| p.1));
            } else {
                cut_keys.extend(kills[v_start..v_end].iter().map(|p| p.1));
            }
            v_start = v_end;
        }
        cut_keys
    }
}
