//! Pattern strings that a `pattern` or a length bound also constrains, read at compile
//! time.
//!
//! The grammar enforces the string's automaton and the pattern check runs beside it.
//! Each keeps a way to finish open on its own, but together they might not (`((((` with
//! a `maxLength` of 5). Two proofs settle it, each over the pairs (automaton state,
//! pattern read so far) that the automaton's strings reach:
//! - [`all_patterns`]: every string the automaton allows is a regular expression. The
//!   automaton alone is then exact, and no check runs beside it
//!   (`^[a-zA-Z0-9_-]+$`, `^(B|KB|MB)$`: the pairs are few).
//! - [`finishable_everywhere`]: every pair the output can reach can be finished by
//!   both. Where any text may follow (`^/.+/$`, `^/var/vcap*`) the pairs are unboundedly
//!   many, but past a "free" state of the automaton (one that lets every printable
//!   character through and ends after plain ones) the pattern check's own completion,
//!   which is printable ASCII, finishes both; the exploration stops at free states.

use super::syntax::{RegexSyntax, SyntaxKey};
use super::{Decoded, Decoder};
use crate::automata::{Dfa, DEAD};
use crate::error::Result;
use crate::util::hash::{HashMap, HashSet};

/// Is every string of `body` (the automaton of a string's JSON text, between its quotes)
/// an ECMAScript regular expression? None when deciding takes more than `max_states`
/// pairs (automaton state, pattern read so far).
pub fn all_patterns(body: &Dfa, max_states: usize) -> Result<Option<bool>> {
    let mut seen: HashSet<(u32, Decoder, SyntaxKey)> = HashSet::default();
    let mut stack = vec![(body.start(), Decoder::Plain, RegexSyntax::new())];
    seen.insert((body.start(), Decoder::Plain, RegexSyntax::new().key()));
    while let Some((q, d, s)) = stack.pop() {
        crate::util::interrupt::check()?;
        if body.is_accepting(q) && !(d == Decoder::Plain && s.is_complete()) {
            return Ok(Some(false));
        }
        for b in 0..=255u8 {
            let q2 = body.next(q, b);
            if q2 == DEAD {
                continue;
            }
            let (mut d2, mut s2) = (d, s.fork());
            match d2.push(b) {
                Decoded::Partial => {}
                // The automaton's states all lead to an end: a refused character
                // starts a string of it that is no pattern.
                Decoded::Char(c) if s2.push_char(c) => s2.forget_undo(),
                Decoded::Char(_) | Decoded::Close | Decoded::Invalid => return Ok(Some(false)),
            }
            if seen.insert((q2, d2, s2.key())) {
                if seen.len() > max_states {
                    return Ok(None);
                }
                stack.push((q2, d2, s2));
            }
        }
    }
    Ok(Some(true))
}

/// Characters that leave a whole pattern whole: printable ASCII but the syntax
/// characters, digits (they would lengthen a back-reference `\1`) and the quote.
fn is_plain(c: u8) -> bool {
    c == b' ' || (c.is_ascii_graphic() && !c.is_ascii_digit() && !b"^$\\.*+?()[]{}|\"".contains(&c))
}

/// The JSON spelling of character `c`, as corral writes strings.
fn spelled(c: u32) -> Vec<u8> {
    let mut out = Vec::new();
    super::encode(c, &mut out);
    out
}

/// What one character read from a state leads to: the states after it, and whether
/// every half-read character on the way allows the characters the pattern check may
/// need to finish it (see [`witnesses`]).
struct CharSteps {
    landings: Vec<u32>,
    witnesses_allowed: bool,
}

/// The characters of a half-read character's possible values that the pattern check
/// might be left needing: the largest (a class range's end must be at least its start),
/// the first a name may start or go on with, and for an escape the quote and the
/// backslash. Whatever subset of the values the check can read holds one of them.
fn witnesses(d: &Decoder) -> Vec<u32> {
    let (ranges, n) = d.reachable();
    let mut out = Vec::new();
    for &(lo, hi) in &ranges[..n] {
        // Surrogates are no characters: the largest value is the last one below them.
        let hi = if (0xD800..=0xDFFF).contains(&hi) { 0xD7FF } else { hi };
        if hi < lo {
            continue;
        }
        out.push(hi);
        out.extend(super::syntax::first_name_char(lo, hi, true));
        out.extend(super::syntax::first_name_char(lo, hi, false));
        out.extend([0x200C, 0x200D, 0x22, 0x5C].into_iter().filter(|c| (lo..=hi).contains(c)));
    }
    out
}

/// The half-read characters explored so far, with their [`CharSteps`] (they do not
/// depend on where the character started).
type Memo = HashMap<(u32, Decoder), CharSteps>;

/// [`CharSteps`] from state `q` of `dfa`.
fn char_steps(dfa: &Dfa, q: u32, memo: &mut Memo) -> Result<CharSteps> {
    let mut steps = CharSteps { landings: Vec::new(), witnesses_allowed: true };
    bytes_on(dfa, q, Decoder::Plain, 0..=255, memo, &mut steps)?;
    steps.landings.sort_unstable();
    steps.landings.dedup();
    Ok(steps)
}

/// The [`CharSteps`] of the rest of a half-read character (`d`), from state `p`.
fn partial_steps(dfa: &Dfa, p: u32, d: Decoder, memo: &mut Memo) -> Result<CharSteps> {
    if let Some(s) = memo.get(&(p, d)) {
        return Ok(CharSteps { landings: s.landings.clone(), witnesses_allowed: s.witnesses_allowed });
    }
    crate::util::interrupt::check()?;
    let mut steps = CharSteps { landings: Vec::new(), witnesses_allowed: true };
    // The rest of each witness's spelling, from here.
    for w in witnesses(&d) {
        let whole = spelled(w);
        match dfa.walk(p, &whole[consumed(&d, whole.len())..]) {
            DEAD => steps.witnesses_allowed = false,
            end => steps.landings.push(end),
        }
    }
    // Past the first byte only continuation bytes and an escape's letters matter.
    bytes_on(dfa, p, d, 0x22..=0xBF, memo, &mut steps)?;
    steps.landings.sort_unstable();
    steps.landings.dedup();
    memo.insert((p, d), CharSteps { landings: steps.landings.clone(), witnesses_allowed: steps.witnesses_allowed });
    Ok(steps)
}

/// Adds to `steps` what each of `bytes` read from state `p` with decoder `d` leads to:
/// a whole character's state, or the steps of the character it leaves half read.
fn bytes_on(
    dfa: &Dfa,
    p: u32,
    d: Decoder,
    bytes: std::ops::RangeInclusive<u8>,
    memo: &mut Memo,
    steps: &mut CharSteps,
) -> Result<()> {
    for b in bytes {
        let p2 = dfa.next(p, b);
        if p2 == DEAD {
            continue;
        }
        let mut d2 = d;
        match d2.push(b) {
            Decoded::Char(_) => steps.landings.push(p2),
            Decoded::Partial => {
                let rest = partial_steps(dfa, p2, d2, memo)?;
                steps.witnesses_allowed &= rest.witnesses_allowed;
                steps.landings.extend_from_slice(&rest.landings);
            }
            Decoded::Close | Decoded::Invalid => {}
        }
    }
    Ok(())
}

/// How many bytes of a character's spelling (`len` bytes) a half-read one has read.
fn consumed(d: &Decoder, len: usize) -> usize {
    let read = match *d {
        Decoder::Plain => 0,
        Decoder::Utf8 { left, .. } => len.saturating_sub(usize::from(left)),
        Decoder::Escape => 1,
        // `\u` and the digits read so far, of `\uXXXX`.
        Decoder::Hex { left, .. } => 6usize.saturating_sub(usize::from(left)),
    };
    read.min(len)
}

/// The free states of `dfa`, as flags by state: from a free state every printable ASCII
/// character, and every other character the automaton allows, leads to a free state;
/// every half-read character allows the pattern check's witnesses; and plain characters
/// reach the end.
fn free_states(dfa: &Dfa) -> Result<Vec<bool>> {
    let n = dfa.num_states();
    let mut ends = vec![false; n];
    for (q, e) in ends.iter_mut().enumerate().skip(1) {
        *e = dfa.is_accepting(q as u32);
    }
    let mut changed = true;
    while changed {
        // A pass per step of propagation: bounded by the states, stopped by the budget.
        crate::util::interrupt::check()?;
        changed = false;
        for q in 1..n {
            if !ends[q] && (0x20u8..0x7F).filter(|&c| is_plain(c)).any(|c| ends[dfa.next(q as u32, c) as usize]) {
                ends[q] = true;
                changed = true;
            }
        }
    }
    let mut memo = HashMap::default();
    let mut steps: Vec<Option<CharSteps>> = Vec::with_capacity(n);
    for (q, &e) in ends.iter().enumerate() {
        steps.push(if e { Some(char_steps(dfa, q as u32, &mut memo)?) } else { None });
    }
    let mut free: Vec<bool> = (0..n)
        .map(|q| {
            ends[q]
                && steps[q].as_ref().is_some_and(|s| s.witnesses_allowed)
                && (0x20u32..0x7F).all(|c| dfa.walk(q as u32, &spelled(c)) != DEAD)
        })
        .collect();
    let mut changed = true;
    while changed {
        // A pass per step of propagation: bounded by the states, stopped by the budget.
        crate::util::interrupt::check()?;
        changed = false;
        for q in 1..n {
            if free[q] && !steps[q].as_ref().is_some_and(|s| s.landings.iter().all(|&l| free[l as usize])) {
                free[q] = false;
                changed = true;
            }
        }
    }
    Ok(free)
}

/// Can every start of a string that `body` (the automaton of a string's JSON text,
/// between its quotes) and the pattern check both allow be finished by both? None when
/// showing it takes more than `max_states` pairs (automaton state, pattern read so far)
/// or `body` has more states than that.
///
/// The pairs are explored from the start up to free states (see `free_states`):
/// from a free state with any pattern, the check's completion (printable ASCII) and then
/// plain characters finish both. Every pair met must reach an end or a free state.
pub fn finishable_everywhere(body: &Dfa, max_states: usize) -> Result<Option<bool>> {
    if body.num_states() > max_states {
        return Ok(None);
    }
    let free = free_states(body)?;
    let mut index: HashMap<(u32, Decoder, SyntaxKey), usize> = HashMap::default();
    // Per pair: its successors, and whether it is an end or free.
    let mut next: Vec<Vec<usize>> = Vec::new();
    let mut good: Vec<bool> = Vec::new();
    let mut todo = Vec::new();
    let start = (body.start(), Decoder::Plain, RegexSyntax::new());
    index.insert((start.0, start.1, start.2.key()), 0);
    next.push(Vec::new());
    good.push(free[start.0 as usize] || (body.is_accepting(start.0) && start.2.is_complete()));
    if !free[start.0 as usize] {
        todo.push((0usize, start));
    }
    while let Some((i, (q, d, s))) = todo.pop() {
        crate::util::interrupt::check()?;
        for b in 0..=255u8 {
            let q2 = body.next(q, b);
            if q2 == DEAD {
                continue;
            }
            let (mut d2, mut s2) = (d, s.fork());
            let ok = match d2.push(b) {
                Decoded::Partial => super::partial_fits(&mut s2, &d2),
                Decoded::Char(c) => s2.push_char(c),
                Decoded::Close | Decoded::Invalid => false,
            };
            if !ok {
                continue;
            }
            s2.forget_undo();
            let key = (q2, d2, s2.key());
            let j = match index.get(&key) {
                Some(&j) => j,
                None => {
                    let j = next.len();
                    if j >= max_states {
                        return Ok(None);
                    }
                    let at_rest = d2 == Decoder::Plain;
                    let is_free = at_rest && free[q2 as usize];
                    index.insert(key, j);
                    next.push(Vec::new());
                    good.push(is_free || (at_rest && body.is_accepting(q2) && s2.is_complete()));
                    if !is_free {
                        todo.push((j, (q2, d2, s2)));
                    }
                    j
                }
            };
            next[i].push(j);
        }
    }
    let mut changed = true;
    while changed {
        // A pass per step of propagation: bounded by the states, stopped by the budget.
        crate::util::interrupt::check()?;
        changed = false;
        for i in 0..next.len() {
            if !good[i] && next[i].iter().any(|&j| good[j]) {
                good[i] = true;
                changed = true;
            }
        }
    }
    Ok(Some(good.iter().all(|&g| g)))
}
