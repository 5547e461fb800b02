//! Which JSON-string-safe fragments a DFA state keeps alive.
//!
//! A *string-safe* fragment is what a JSON string holds unescaped: printable ASCII other
//! than `"` and `\\`, or UTF-8 characters, the last one possibly unfinished. Inside free
//! text nearly every token is one, so the vocabulary keeps them as precomputed slices
//! (see `crate::vocab::slices`); this analysis says which bytes of such fragments a state
//! may die on, so a mask can take a slice's bits and read only the risky tokens.

use super::{Dfa, DEAD};
use crate::util::utf8::Utf8;

/// Longest `safe_len` for which [`Dfa::string_safe_risk`] looks for [`StringSafeRisk::short_only`]
/// (the vocabulary keeps masks by token length up to 16 bytes).
const MAX_SHORT_ONLY: usize = 16;

/// Most rounds of [`Dfa::string_safe_risk`]'s safe-set fixpoint (each removes keys); past it
/// the state is left to the trie walk.
const MAX_SAFE_ROUNDS: usize = 24;

/// The result of [`Dfa::string_safe_risk`]: two sets of bytes, as 256-bit sets. A string-safe fragment
/// holding an `always` byte dies; one holding neither kind stays alive, as does one of at
/// most `safe_len` bytes; any other must be read through the DFA.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringSafeRisk {
    /// Bytes on which the DFA dies wherever a string-safe fragment can read them.
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

impl StringSafeRisk {
    /// No risky byte: every string-safe fragment stays alive.
    pub fn is_clear(&self) -> bool {
        self.always == [0; 4] && self.check == [0; 4]
    }
}

impl Dfa {
    /// Does every string-safe fragment (see [`crate::vocab::slices::is_string_safe_fragment`]) of 1 to
    /// `max_len` bytes, read from `state`, keep the DFA alive and, unless `may_accept`, out
    /// of accepting states? Then every token of a [`crate::vocab::StringSafeSlice`] of that
    /// bound is allowed from `state`, and (without accepting states) no terminal ends
    /// inside one, so a mask needs no walk over the slice.
    pub fn admits_string_safe(&self, state: u32, max_len: usize, may_accept: bool) -> bool {
        self.string_safe_risk(state, max_len, may_accept, 0, 0, &[0; 256]).is_some_and(|r| r.is_clear())
    }

    /// Which bytes decide whether a string-safe fragment of 1 to `max_len` bytes, read from
    /// `state`, keeps the DFA alive (see [`StringSafeRisk`]). None where a fragment can reach an
    /// accepting state (unless `may_accept`), where more than `max_dead_at_once` string-safe
    /// bytes kill at the first read (few tokens live: a trie walk ends quickly), or where
    /// more than `max_check` bytes would make a fragment need reading. `weight[b]` (how
    /// many tokens hold byte `b`) steers which bytes are left to check.
    ///
    /// A breadth-first search over (DFA state, UTF-8 state) pairs finds, per byte, whether
    /// it kills from every pair that reads it (`always`) or from some only, and the first
    /// position of such a kill (`safe_len`). The `check` bytes are those outside a safe
    /// set, found as a fixpoint (see the body).
    pub fn string_safe_risk(
        &self,
        state: u32,
        max_len: usize,
        may_accept: bool,
        max_dead_at_once: usize,
        max_check: usize,
        weight: &[u32; 256],
    ) -> Option<StringSafeRisk> {
        use Utf8::*;
        const U: [Utf8; 8] = [Boundary, Cont(1), Cont(2), Cont(3), E0, Ed, F0, F4];
        const KEYS: usize = 256 * 12;
        // Cheap first: at a terminal's start most bytes kill at once (lexer masks ask this
        // for every open terminal).
        let dead_at_once = (0..=255u8)
            .filter(|&b| crate::util::bytes::is_string_safe_byte(b) && Boundary.next(b).is_some() && self.next(state, b) == DEAD)
            .count();
        if dead_at_once > max_dead_at_once {
            return None;
        }
        let index = |u: Utf8| U.iter().position(|&x| x == u).unwrap_or(0) as u8;
        // Bytes with the same (DFA class, UTF-8 class) key behave alike: per UTF-8 state,
        // the string-safe bytes it takes, one representative per key, with the UTF-8 state after.
        let utf8 = Utf8::classes();
        let key_of = |b: u8| self.class_of[b as usize] as usize * 12 + utf8[b as usize] as usize;
        let mut moves: [Vec<(u8, u8, u16)>; 8] = Default::default();
        // seen_key[key] == i + 1: the key has a representative in moves[i].
        let mut seen_key = vec![0u8; KEYS];
        for (i, u) in U.iter().enumerate() {
            for b in 0..=255u8 {
                let key = key_of(b);
                if !crate::util::bytes::is_string_safe_byte(b) || seen_key[key] == i as u8 + 1 {
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
            if crate::util::bytes::is_string_safe_byte(b) {
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
                let mut risk = StringSafeRisk { safe_len, short_only: true, ..StringSafeRisk::default() };
                for b in (0..=255u8).filter(|&b| crate::util::bytes::is_string_safe_byte(b) && always(key_of(b))) {
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
        let mut risk = StringSafeRisk { safe_len, ..StringSafeRisk::default() };
        let mut checked = 0;
        for b in 0..=255u8 {
            let key = key_of(b);
            if !crate::util::bytes::is_string_safe_byte(b) {
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
}
