//! A pattern's HIR → a [`Dfa`], piece by piece: small finite pieces and counted
//! repetitions are built by corral's own constructions, long literals and heavy
//! concatenations are joined from their parts, and the rest goes to regex-automata
//! (Thompson NFA, anchored dense DFA) under the size limits. Pieces are cached by their
//! pattern text, so a grammar builds each shared piece once.

use std::sync::Arc;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::Hir;

use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

/// Builds regex-automata's dense DFA (anchored, all matches) for `hir`, a piece of
/// `pattern` (named in errors).
// regex-automata's build error is large; it is mapped to corral's at once.
#[allow(clippy::result_large_err)]
fn build_dense(hir: &Hir, pattern: &str, limits: &Limits) -> Result<dense::DFA<Vec<u32>>> {
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(Some(limits.nfa_size_limit))
                .which_captures(thompson::WhichCaptures::None)
                .shrink(false),
        )
        .build_from_hir(hir)
        .map_err(|e| {
            if e.size_limit().is_some() {
                Error::LimitExceeded {
                    limit: "nfa_size_limit",
                    value: limits.nfa_size_limit,
                    context: format!("the NFA of /{pattern}/"),
                }
            } else {
                Error::InvalidArgument(format!("cannot compile /{pattern}/: {e}"))
            }
        })?;
    // regex-automata's determinization cannot be interrupted. Small DFAs (nearly all) are
    // built here within a bound that takes milliseconds; a larger one is built again on a
    // helper thread, so that this thread keeps answering Ctrl-C and the time budget.
    let quick = limits.dfa_size_limit.min(INLINE_DETERMINIZE_BYTES);
    let dense = match determinize(&nfa, quick) {
        Err(e) if e.is_size_limit_exceeded() && quick < limits.dfa_size_limit => {
            let (nfa, full) = (nfa.clone(), limits.dfa_size_limit);
            crate::util::interrupt::off_thread(move || determinize(&nfa, full))?
        }
        other => other,
    };
    dense.map_err(|e| {
        if e.is_size_limit_exceeded() {
            Error::LimitExceeded {
                limit: "dfa_size_limit",
                value: limits.dfa_size_limit,
                context: format!("the DFA of /{pattern}/"),
            }
        } else {
            Error::InvalidArgument(format!("cannot compile /{pattern}/: {e}"))
        }
    })
}

/// Table bytes up to which a DFA is determinized on the calling thread (a few
/// milliseconds of work at most); see [`build_dense`].
const INLINE_DETERMINIZE_BYTES: usize = 4 << 20;

/// regex-automata's dense DFA (anchored, all matches) of `nfa`, within `size_limit` bytes.
#[allow(clippy::result_large_err)] // regex-automata's own error type
fn determinize(nfa: &thompson::NFA, size_limit: usize) -> std::result::Result<dense::DFA<Vec<u32>>, dense::BuildError> {
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Anchored)
                .match_kind(MatchKind::All)
                .byte_classes(true)
                .minimize(false)
                .dfa_size_limit(Some(size_limit))
                .determinize_size_limit(Some(size_limit)),
        )
        .build_from_nfa(nfa)
}

fn anchored_start(dense: &dense::DFA<Vec<u32>>, pattern: &str) -> Result<regex_automata::util::primitives::StateID> {
    dense
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| Error::InvalidArgument(format!("cannot start /{pattern}/: {e}")))
}

/// Repetition counts from which a repetition is built by [`Dfa::repeat_counted`] rather
/// than by the regex engine, which copies the repeated NFA once per count (slow to
/// determinize for a Unicode class: `x{0,1000}` takes a large fraction of a second).
const COUNTED_FROM: u32 = 16;

/// A repetition whose copies weigh at least this much (see [`weight`]) is counted
/// directly even below [`COUNTED_FROM`] (`x{0,15}` of a JSON string character).
const COUNTED_WEIGHT: usize = 256;

/// Is `r` worth counting directly?
fn is_big_repetition(r: &regex_syntax::hir::Repetition) -> bool {
    let count = r.max.unwrap_or(r.min);
    count >= COUNTED_FROM || (count >= 2 && (count as usize).saturating_mul(weight(&r.sub)) >= COUNTED_WEIGHT)
}

/// Does `hir` hold a repetition for which `which` holds (itself included)?
fn has_repetition(hir: &Hir, which: fn(&regex_syntax::hir::Repetition) -> bool) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Repetition(r) => which(r) || has_repetition(&r.sub, which),
        HirKind::Capture(c) => has_repetition(&c.sub, which),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(|x| has_repetition(x, which)),
        _ => false,
    }
}

/// Is `hir` a repetition worth counting directly, or does it contain one?
fn has_big_repetition(hir: &Hir) -> bool {
    has_repetition(hir, is_big_repetition)
}

/// A repeated finite unit at least this heavy (see [`weight`]) is built from the unit's
/// DFA (see [`is_unit_repetition`]).
const UNIT_REPEAT_WEIGHT: usize = 32;

/// Is `r` the repetition of a finite and not too light unit, such as a JSON string's
/// character `(?:[^"\\]|\\["\\/bfnrt]|\\u...)*`? Its unit is a few byte sequences,
/// which corral determinizes directly and caches (one per grammar, however many strings
/// share it); the repetition is then a small subset construction over the unit's DFA.
/// The regex engine took about 0.1 ms for each such repetition.
fn is_unit_repetition(r: &regex_syntax::hir::Repetition) -> bool {
    weight(&r.sub) >= UNIT_REPEAT_WEIGHT && is_finite(&r.sub)
}

/// Does `hir` contain a repetition built from its unit ([`is_unit_repetition`])?
fn has_unit_repetition(hir: &Hir) -> bool {
    has_repetition(hir, is_unit_repetition)
}

/// Is the language of `hir` finite and free of look-around (no repetition)?
fn is_finite(hir: &Hir) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => true,
        HirKind::Capture(c) => is_finite(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().all(is_finite),
        HirKind::Look(_) | HirKind::Repetition(_) => false,
    }
}

/// The pruned DFA of `hir` by the regex engine alone.
pub(super) fn dense_dfa(hir: &Hir, pattern: &str, limits: &Limits) -> Result<Dfa> {
    let dense = build_dense(hir, pattern, limits)?;
    let start = anchored_start(&dense, pattern)?;
    let classes = dense.byte_classes();
    let mut class_of = [0u8; 256];
    for b in 0..=255u8 {
        class_of[b as usize] = classes.get(b);
    }
    Dfa::from_automaton(
        start,
        &class_of,
        |s, b| {
            let t = dense.next_state(s, b);
            if dense.is_dead_state(t) || dense.is_quit_state(t) {
                None
            } else {
                Some(t)
            }
        },
        |s| dense.is_match_state(dense.next_eoi_state(s)),
        limits,
        pattern,
    )
}

/// Built pieces of patterns, by the pattern text of the piece (see [`super::build_dfa_cached`]).
/// A grammar's terminals share many pieces (a JSON string body, say), so one cache per
/// grammar saves rebuilding them.
#[derive(Debug, Default)]
pub struct PieceCache {
    pub(super) built: FastMap<String, Arc<Dfa>>,
}

impl PieceCache {
    /// Number of pieces kept.
    pub fn len(&self) -> usize {
        self.built.len()
    }

    /// Is no piece kept?
    pub fn is_empty(&self) -> bool {
        self.built.is_empty()
    }

    /// Adds the pieces of `other` (one built under the same limits).
    pub fn merge(&mut self, other: PieceCache) {
        if self.built.is_empty() {
            *self = other;
        } else {
            self.built.extend(other.built);
        }
    }
}

/// The pruned DFA of `hir`: large counted repetitions are built as counters (see
/// [`COUNTED_FROM`]), large concatenations and unions from their parts (see
/// [`SPLIT_WEIGHT`]); small pieces go to the regex engine whole.
pub(crate) fn hir_dfa(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Dfa> {
    hir_dfa_shared(hir, pattern, limits, cache).map(|d| Arc::try_unwrap(d).unwrap_or_else(|d| (*d).clone()))
}

/// [`hir_dfa`], shared with the piece cache (no copy of a cached piece).
pub(crate) fn hir_dfa_shared(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    match piece_dfa(hir, pattern, limits, cache)? {
        Piece::Dfa(d) => Ok(d),
        Piece::Epsilon => Dfa::from_expr(&crate::automata::DfaExpr::Empty, limits, pattern).map(Arc::new),
        Piece::Nothing => Err(Error::EmptyLanguage { what: pattern.to_string() }),
    }
}

/// A piece of a pattern: its DFA, or one of the two languages a pruned DFA piece cannot
/// stand for inside a larger expression.
enum Piece {
    Dfa(Arc<Dfa>),
    /// Only the empty string (e.g. `x{0,20}` where `x` matches nothing).
    Epsilon,
    /// No string at all.
    Nothing,
}

/// A concatenation or union heavier than this (see [`weight`]) is built from its parts
/// (each cached, then joined by [`Dfa::from_expr`], in one pass where the junctions are
/// deterministic) instead of by the regex engine whole, which would redo every part for
/// each pattern that contains it.
const SPLIT_WEIGHT: usize = 200;

/// A rough size of the NFA of `hir` (UTF-8 classes count several states per range).
fn weight(hir: &Hir) -> usize {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len(),
        HirKind::Class(Class::Unicode(c)) => 4 * c.ranges().len(),
        HirKind::Class(Class::Bytes(c)) => c.ranges().len(),
        HirKind::Repetition(r) => weight(&r.sub).saturating_mul(r.max.unwrap_or(r.min).clamp(1, COUNTED_FROM) as usize),
        HirKind::Capture(c) => weight(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => 1 + v.iter().map(weight).sum::<usize>(),
    }
}

/// Is `hir` built in parts (see [`piece_dfa`])?
fn is_split(hir: &Hir) -> bool {
    has_big_repetition(hir) || weight(hir) > SPLIT_WEIGHT || has_unit_repetition(hir) || has_split_literal(hir)
}

/// A literal at least this long (bytes) in a concatenation with a repetition is built as
/// its own piece (see [`has_split_literal`]).
const SPLIT_LITERAL: usize = 8;

fn is_long_literal(hir: &Hir) -> bool {
    matches!(hir.kind(), regex_syntax::hir::HirKind::Literal(l) if l.0.len() >= SPLIT_LITERAL)
}

/// Does `hir` hold a concatenation of a long literal and a repetition (an object
/// property: `,"port":` then a number)? The regex engine determinizes every byte of the
/// literal over all the byte classes of the rest (about 3 µs a byte); as pieces, the
/// literal costs microseconds and the rest is built once for every property that shares it.
fn has_split_literal(hir: &Hir) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Capture(c) => has_split_literal(&c.sub),
        HirKind::Concat(v) => (v.iter().any(is_long_literal) && !is_finite(hir)) || v.iter().any(has_split_literal),
        HirKind::Alternation(v) => v.iter().any(has_split_literal),
        _ => false,
    }
}

/// At most this many byte-range sequences make a piece built by
/// [`Dfa::from_byte_sequences`] (see [`byte_sequences`]).
const MAX_SEQUENCES: usize = 256;

/// `hir` as a finite set of byte-range sequences, when it is one and a small one: a
/// literal, a character class (UTF-8 encoded), and unions and concatenations of those.
pub(super) fn byte_sequences(hir: &Hir) -> Option<Vec<Vec<(u8, u8)>>> {
    use regex_syntax::hir::{Class, HirKind};
    Some(match hir.kind() {
        HirKind::Empty => vec![Vec::new()],
        HirKind::Literal(l) => vec![l.0.iter().map(|&b| (b, b)).collect()],
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().map(|r| vec![(r.start(), r.end())]).collect(),
        HirKind::Class(Class::Unicode(c)) => {
            let mut out = Vec::new();
            for r in c.ranges() {
                for seq in regex_syntax::utf8::Utf8Sequences::new(r.start(), r.end()) {
                    out.push(seq.as_slice().iter().map(|x| (x.start, x.end)).collect());
                }
                if out.len() > MAX_SEQUENCES {
                    return None;
                }
            }
            out
        }
        HirKind::Capture(c) => byte_sequences(&c.sub)?,
        HirKind::Alternation(items) => {
            let mut out = Vec::new();
            for x in items {
                out.extend(byte_sequences(x)?);
                if out.len() > MAX_SEQUENCES {
                    return None;
                }
            }
            out
        }
        HirKind::Concat(items) => {
            let mut out: Vec<Vec<(u8, u8)>> = vec![Vec::new()];
            for x in items {
                let next = byte_sequences(x)?;
                if out.len() * next.len() > MAX_SEQUENCES {
                    return None;
                }
                out = out.iter().flat_map(|a| next.iter().map(move |b| [a.as_slice(), b.as_slice()].concat())).collect();
            }
            out
        }
        HirKind::Look(_) | HirKind::Repetition(_) => return None,
    })
}

/// The DFA of `hir` (a piece of `pattern`) built directly when it is a small set of byte
/// sequences, else by the regex engine; from the cache when built before.
fn cached_dense(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Piece> {
    let key = hir.to_string();
    if let Some(d) = cache.built.get(&key) {
        return Ok(Piece::Dfa(d.clone()));
    }
    let built = match byte_sequences(hir) {
        Some(seqs) => Dfa::from_byte_sequences(&seqs, limits, pattern),
        None => dense_dfa(hir, pattern, limits),
    };
    match built {
        Ok(d) => {
            let d = Arc::new(d);
            cache.built.insert(key, d.clone());
            Ok(Piece::Dfa(d))
        }
        Err(Error::EmptyLanguage { .. }) => Ok(Piece::Nothing),
        Err(e) => Err(e),
    }
}

/// A finite set of literals (the keys an object names, an enum's members: regex-syntax
/// lifts their common prefixes into concatenations) up to this many bytes in all is built
/// in one pass, never split into parts joined by a subset construction.
const MAX_LITERAL_SET_BYTES: usize = 1 << 20;

/// The strings of `hir` when it is made of literals only (concatenations, unions, groups)
/// and they hold at most `cap` bytes in all; None otherwise.
fn literal_strings(hir: &Hir, cap: usize) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::HirKind;
    let words = match hir.kind() {
        HirKind::Empty => vec![Vec::new()],
        HirKind::Literal(l) => vec![l.0.to_vec()],
        HirKind::Capture(c) => literal_strings(&c.sub, cap)?,
        HirKind::Alternation(items) => {
            let mut out = Vec::new();
            for x in items {
                out.extend(literal_strings(x, cap)?);
            }
            out
        }
        HirKind::Concat(items) => {
            let mut out = vec![Vec::new()];
            for x in items {
                let tails = literal_strings(x, cap)?;
                if out.len().saturating_mul(tails.len()) > cap {
                    return None;
                }
                out = out.iter().flat_map(|head| tails.iter().map(move |t| [head.as_slice(), t].concat())).collect();
                if out.iter().map(Vec::len).sum::<usize>() > cap {
                    return None;
                }
            }
            out
        }
        _ => return None,
    };
    (words.iter().map(Vec::len).sum::<usize>() <= cap).then_some(words)
}

/// The DFA of a finite set of literals (see [`literal_strings`]), cached by `hir`.
fn literal_set(hir: &Hir, words: &[Vec<u8>], pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Piece> {
    let key = hir.to_string();
    if let Some(d) = cache.built.get(&key) {
        return Ok(Piece::Dfa(d.clone()));
    }
    let seqs: Vec<Vec<(u8, u8)>> = words.iter().map(|w| w.iter().map(|&b| (b, b)).collect()).collect();
    let piece = lift(Dfa::from_byte_sequences(&seqs, limits, pattern))?;
    if let Piece::Dfa(d) = &piece {
        cache.built.insert(key, d.clone());
    }
    Ok(piece)
}

/// The DFA of `hir`, a piece of `pattern`: built from its parts when it is heavy (see
/// [`is_split`]), else whole (see [`cached_dense`]).
fn piece_dfa(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Piece> {
    use regex_syntax::hir::HirKind;
    if matches!(hir.kind(), HirKind::Alternation(_) | HirKind::Concat(_)) {
        if let Some(words) = literal_strings(hir, MAX_LITERAL_SET_BYTES) {
            return literal_set(hir, &words, pattern, limits, cache);
        }
    }
    if !is_split(hir) {
        return cached_dense(hir, pattern, limits, cache);
    }
    match hir.kind() {
        HirKind::Capture(c) => piece_dfa(&c.sub, pattern, limits, cache),
        HirKind::Repetition(r)
            if is_big_repetition(r) || has_big_repetition(&r.sub) || is_unit_repetition(r) || has_unit_repetition(&r.sub) =>
        {
            repetition_piece(r, pattern, limits, cache)
        }
        HirKind::Concat(items) => split_piece(hir, items, true, pattern, limits, cache),
        HirKind::Alternation(items) => split_piece(hir, items, false, pattern, limits, cache),
        _ => cached_dense(hir, pattern, limits, cache),
    }
}

/// A built DFA as a piece (an empty language is [`Piece::Nothing`]).
fn lift(r: Result<Dfa>) -> Result<Piece> {
    match r {
        Ok(d) => Ok(Piece::Dfa(Arc::new(d))),
        Err(Error::EmptyLanguage { .. }) => Ok(Piece::Nothing),
        Err(e) => Err(e),
    }
}

/// The repetition `r` built from the DFA of its unit: counted directly when it is big
/// or its unit is (see [`Dfa::repeat_counted`]), else as a repetition of the unit.
fn repetition_piece(r: &regex_syntax::hir::Repetition, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Piece> {
    use crate::automata::DfaExpr;
    let what = || format!("/{pattern}/");
    let unit = match piece_dfa(&r.sub, pattern, limits, cache)? {
        Piece::Dfa(d) => d,
        // Repeating "" or nothing: "" (if zero copies are allowed), else as is.
        Piece::Epsilon => return Ok(Piece::Epsilon),
        Piece::Nothing => return Ok(if r.min == 0 { Piece::Epsilon } else { Piece::Nothing }),
    };
    if is_big_repetition(r) || is_unit_repetition(r) {
        if let Some(d) = unit.repeat_counted(r.min, r.max, limits, &what())? {
            return Ok(Piece::Dfa(Arc::new(d)));
        }
    }
    let e = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&unit)), min: r.min, max: r.max };
    lift(Dfa::from_expr(&e, limits, &what()))
}

/// A concatenation (`concat`) or union of `items` (the parts of `hir`) built from its
/// parts and joined by [`Dfa::from_expr`]; cached by its pattern text.
fn split_piece(hir: &Hir, items: &[Hir], concat: bool, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Piece> {
    use crate::automata::DfaExpr;
    let key = hir.to_string();
    if let Some(d) = cache.built.get(&key) {
        return Ok(Piece::Dfa(d.clone()));
    }
    // Long literals are parts of their own in a concatenation with a repetition (see
    // `has_split_literal`).
    let literals_apart = concat && !is_finite(hir);
    let pieces = split_parts(items, concat, literals_apart, pattern, limits, cache)?;
    let Some(leaves) = join_leaves(&pieces, concat) else { return Ok(Piece::Nothing) };
    if let Some(d) = optional_leaf(&leaves, concat).and_then(Dfa::or_empty) {
        let d = Arc::new(d);
        cache.built.insert(key, d.clone());
        return Ok(Piece::Dfa(d));
    }
    let e = if concat { DfaExpr::Seq(leaves) } else { DfaExpr::Alt(leaves) };
    let piece = lift(Dfa::from_expr(&e, limits, &format!("/{pattern}/")))?;
    if let Piece::Dfa(d) = &piece {
        cache.built.insert(key, d.clone());
    }
    Ok(piece)
}

/// The parts of a split concatenation or union, in order: each heavy item on its own,
/// and runs of light items (up to [`SPLIT_WEIGHT`]) as one regex-engine piece each.
fn split_parts(
    items: &[Hir],
    concat: bool,
    literals_apart: bool,
    pattern: &str,
    limits: &Limits,
    cache: &mut PieceCache,
) -> Result<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut run: Vec<Hir> = Vec::new();
    let mut run_weight = 0;
    for item in items {
        if is_split(item) || (literals_apart && is_long_literal(item)) {
            if concat {
                flush_run(&mut run, concat, &mut pieces, pattern, limits, cache)?; // order matters only in a concatenation
                run_weight = 0;
            }
            pieces.push(piece_dfa(item, pattern, limits, cache)?);
        } else {
            let w = weight(item);
            if run_weight + w > SPLIT_WEIGHT {
                flush_run(&mut run, concat, &mut pieces, pattern, limits, cache)?;
                run_weight = 0;
            }
            run_weight += w;
            run.push(item.clone());
        }
    }
    flush_run(&mut run, concat, &mut pieces, pattern, limits, cache)?;
    Ok(pieces)
}

/// Appends the run of light items, if any, to `pieces` as one piece (emptying the run).
fn flush_run(
    run: &mut Vec<Hir>,
    concat: bool,
    pieces: &mut Vec<Piece>,
    pattern: &str,
    limits: &Limits,
    cache: &mut PieceCache,
) -> Result<()> {
    if !run.is_empty() {
        let h = if concat { Hir::concat(std::mem::take(run)) } else { Hir::alternation(std::mem::take(run)) };
        pieces.push(cached_dense(&h, pattern, limits, cache)?);
    }
    Ok(())
}

/// The parts as the leaves of a concatenation (`concat`) or union, or None when the
/// whole matches nothing (a part of a concatenation does, or every part of a union).
fn join_leaves(pieces: &[Piece], concat: bool) -> Option<Vec<crate::automata::DfaExpr<'_>>> {
    use crate::automata::DfaExpr;
    let mut leaves: Vec<DfaExpr<'_>> = Vec::new();
    for p in pieces {
        match p {
            Piece::Dfa(d) => leaves.push(DfaExpr::Leaf(d)),
            Piece::Epsilon => leaves.push(DfaExpr::Empty),
            Piece::Nothing if concat => return None,
            Piece::Nothing => {}
        }
    }
    if leaves.is_empty() {
        return None;
    }
    Some(leaves)
}

/// `x|` (an optional object property): the DFA of x, when a union is x and the empty
/// string alone; it is then built as x with an accepting start.
fn optional_leaf<'a>(leaves: &[crate::automata::DfaExpr<'a>], concat: bool) -> Option<&'a Dfa> {
    use crate::automata::DfaExpr;
    let only_empty = |e: &DfaExpr<'_>| match e {
        DfaExpr::Empty => true,
        DfaExpr::Leaf(d) => d.is_only_empty(),
        _ => false,
    };
    match leaves {
        [DfaExpr::Leaf(d), e] | [e, DfaExpr::Leaf(d)] if !concat && only_empty(e) && !only_empty(&DfaExpr::Leaf(d)) => Some(*d),
        _ => None,
    }
}
