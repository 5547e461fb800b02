//! Python `re` patterns to byte-level DFAs.
//!
//! The pipeline is: [`python`] reads the pattern as CPython 3.11 does (refusing what it
//! refuses, naming the constructs no DFA can express) and lowers it to a regex-syntax HIR
//! with Python's meaning (`\d \w \s`, scoped flags, Python's case folding, anchors) →
//! `regex-automata` builds a Thompson NFA and determinizes it under size limits →
//! [`crate::dfa::Dfa`] keeps only the states from which a match is still reachable.
//!
//! The meaning is that of `re.fullmatch` on `str` patterns: the whole output must match.
//! Positions in errors are character offsets into the pattern as the user wrote it.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::Hir;

use std::sync::Arc;

use crate::dfa::Dfa;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

mod python;

/// The code points of `\d`, `\w` and `\s` (Unicode mode), as inclusive ranges.
///
/// Python's definitions follow the Unicode database of the running interpreter, which may
/// be older than regex-syntax's tables; the Python front-end passes the interpreter's own
/// sets so that a pattern means exactly what `re.fullmatch` means there. Without them,
/// regex-syntax's Unicode tables are used (Nd; L and N plus `_`; Python's whitespace list).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PerlClasses {
    /// `\d`.
    pub digit: Vec<(char, char)>,
    /// `\w`.
    pub word: Vec<(char, char)>,
    /// `\s`.
    pub space: Vec<(char, char)>,
}

/// A parsed and validated pattern, ready to be determinized.
#[derive(Debug, Clone)]
pub struct ParsedRegex {
    pattern: String,
    hir: Hir,
}

impl ParsedRegex {
    /// The pattern as the user wrote it.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The regex-syntax HIR of the pattern (Python semantics already applied).
    pub fn hir(&self) -> &Hir {
        &self.hir
    }
}

/// Parses a Python `re` pattern and applies Python's semantics. Does not build the DFA.
/// `classes` gives the interpreter's `\d \w \s` (see [`PerlClasses`]).
pub fn parse(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<ParsedRegex> {
    if pattern.len() > limits.max_pattern_bytes {
        return Err(Error::LimitExceeded {
            limit: "max_pattern_bytes",
            value: limits.max_pattern_bytes,
            context: format!("a regex of {} bytes", pattern.len()),
        });
    }
    let read = python::read(pattern, limits.regex_nest_limit)?;
    if read.depth > limits.regex_nest_limit {
        return Err(Error::LimitExceeded {
            limit: "regex_nest_limit",
            value: limits.regex_nest_limit as usize,
            context: "the nesting depth of the regex".to_string(),
        });
    }
    let hir = python::Lowering { pattern, classes, folded: Default::default() }.lower(read)?;
    Ok(ParsedRegex { pattern: pattern.to_string(), hir })
}

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
            crate::interrupt::off_thread(move || determinize(&nfa, full))?
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
fn dense_dfa(hir: &Hir, pattern: &str, limits: &Limits) -> Result<Dfa> {
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

/// Built pieces of patterns, by the pattern text of the piece (see [`build_dfa_cached`]).
/// A grammar's terminals share many pieces (a JSON string body, say), so one cache per
/// grammar saves rebuilding them.
#[derive(Debug, Default)]
pub struct PieceCache {
    built: FastMap<String, Arc<Dfa>>,
}

/// The pruned DFA of `hir`: large counted repetitions are built as counters (see
/// [`COUNTED_FROM`]), large concatenations and unions from their parts (see
/// [`SPLIT_WEIGHT`]); small pieces go to the regex engine whole.
fn hir_dfa(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Dfa> {
    hir_dfa_shared(hir, pattern, limits, cache).map(|d| Arc::try_unwrap(d).unwrap_or_else(|d| (*d).clone()))
}

/// [`hir_dfa`], shared with the piece cache (no copy of a cached piece).
fn hir_dfa_shared(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    match piece_dfa(hir, pattern, limits, cache)? {
        Piece::Dfa(d) => Ok(d),
        Piece::Epsilon => Dfa::from_expr(&crate::dfa::DfaExpr::Empty, limits, pattern).map(Arc::new),
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
fn byte_sequences(hir: &Hir) -> Option<Vec<Vec<(u8, u8)>>> {
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

fn piece_dfa(hir: &Hir, pattern: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Piece> {
    use crate::dfa::DfaExpr;
    use regex_syntax::hir::HirKind;
    let what = || format!("/{pattern}/");
    let lift = |r: Result<Dfa>| match r {
        Ok(d) => Ok(Piece::Dfa(Arc::new(d))),
        Err(Error::EmptyLanguage { .. }) => Ok(Piece::Nothing),
        Err(e) => Err(e),
    };
    if !is_split(hir) {
        return cached_dense(hir, pattern, limits, cache);
    }
    match hir.kind() {
        HirKind::Capture(c) => piece_dfa(&c.sub, pattern, limits, cache),
        HirKind::Repetition(r)
            if is_big_repetition(r) || has_big_repetition(&r.sub) || is_unit_repetition(r) || has_unit_repetition(&r.sub) =>
        {
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
        HirKind::Concat(items) | HirKind::Alternation(items) => {
            let key = hir.to_string();
            if let Some(d) = cache.built.get(&key) {
                return Ok(Piece::Dfa(d.clone()));
            }
            let concat = matches!(hir.kind(), HirKind::Concat(_));
            // Runs of light items stay one regex-engine piece.
            let mut pieces = Vec::new();
            let mut run: Vec<Hir> = Vec::new();
            let flush = |run: &mut Vec<Hir>, pieces: &mut Vec<Piece>, cache: &mut PieceCache| -> Result<()> {
                if !run.is_empty() {
                    let h = if concat { Hir::concat(std::mem::take(run)) } else { Hir::alternation(std::mem::take(run)) };
                    pieces.push(cached_dense(&h, pattern, limits, cache)?);
                }
                Ok(())
            };
            let mut run_weight = 0;
            let literals_apart = concat && !is_finite(hir);
            for item in items {
                if is_split(item) || (literals_apart && is_long_literal(item)) {
                    if concat {
                        flush(&mut run, &mut pieces, cache)?; // order matters only in a concatenation
                        run_weight = 0;
                    }
                    pieces.push(piece_dfa(item, pattern, limits, cache)?);
                } else {
                    let w = weight(item);
                    if run_weight + w > SPLIT_WEIGHT {
                        flush(&mut run, &mut pieces, cache)?;
                        run_weight = 0;
                    }
                    run_weight += w;
                    run.push(item.clone());
                }
            }
            flush(&mut run, &mut pieces, cache)?;
            let mut leaves: Vec<DfaExpr<'_>> = Vec::new();
            for p in &pieces {
                match p {
                    Piece::Dfa(d) => leaves.push(DfaExpr::Leaf(d)),
                    Piece::Epsilon => leaves.push(DfaExpr::Empty),
                    Piece::Nothing if concat => return Ok(Piece::Nothing),
                    Piece::Nothing => {}
                }
            }
            if leaves.is_empty() {
                return Ok(Piece::Nothing);
            }
            // `x|` (an optional object property): x with an accepting start, if that is all.
            let only_empty = |e: &DfaExpr<'_>| match e {
                DfaExpr::Empty => true,
                DfaExpr::Leaf(d) => d.is_only_empty(),
                _ => false,
            };
            let optional = match &leaves[..] {
                [DfaExpr::Leaf(d), e] | [e, DfaExpr::Leaf(d)] if !concat && only_empty(e) && !only_empty(&DfaExpr::Leaf(d)) => {
                    Some(*d)
                }
                _ => None,
            };
            if let Some(d) = optional {
                if let Some(d) = d.or_empty() {
                    let d = Arc::new(d);
                    cache.built.insert(key, d.clone());
                    return Ok(Piece::Dfa(d));
                }
            }
            let e = if concat { DfaExpr::Seq(leaves) } else { DfaExpr::Alt(leaves) };
            let piece = lift(Dfa::from_expr(&e, limits, &what()))?;
            if let Piece::Dfa(d) = &piece {
                cache.built.insert(key, d.clone());
            }
            Ok(piece)
        }
        _ => cached_dense(hir, pattern, limits, cache),
    }
}

/// Determinizes a parsed pattern into a pruned byte-level [`Dfa`].
pub fn build_dfa(parsed: &ParsedRegex, limits: &Limits) -> Result<Dfa> {
    hir_dfa(&parsed.hir, &parsed.pattern, limits, &mut PieceCache::default())
}

/// [`build_dfa`], reusing (and adding to) pieces built for earlier patterns; the result
/// may be shared with the cache.
pub fn build_dfa_cached(parsed: &ParsedRegex, limits: &Limits, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    hir_dfa_shared(&parsed.hir, &parsed.pattern, limits, cache)
}

/// The DFA of "any string of whole UTF-8 characters that contains no match of `inner`"
/// (the `except!` of grammar-based engines). `inner` is Python `re` source.
pub fn build_except_dfa(inner: &str, limits: &Limits, classes: Option<&PerlClasses>, what: &str) -> Result<Dfa> {
    // The complement of "contains a match": a match, once contained, stays contained.
    let contains = compile_with(&format!("(?s:.)*(?:{inner})(?s:.)*"), limits, classes)?;
    contains.complement(limits, what)
}

/// Parses and determinizes `pattern` with the interpreter's `\d \w \s` (see [`PerlClasses`]).
pub fn compile_with(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<Dfa> {
    build_dfa(&parse(pattern, limits, classes)?, limits)
}

/// [`compile_with`], sharing built pieces through `cache` (the grammar path reads
/// patterns shipped prebuilt first: `crate::prebuilt::compile_cached`).
pub fn compile_cached(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    // A grammar's literals (object keys, enum members) are most of its regex sources; the
    // parser and the general construction cost ~10 µs each, the chain well under one.
    if pattern.len() <= limits.max_pattern_bytes {
        if let Some(bytes) = plain_literal(pattern) {
            return Ok(Arc::new(Dfa::literal(&bytes, limits, pattern)?));
        }
    }
    build_dfa_cached(&parse(pattern, limits, classes)?, limits, cache)
}

/// The bytes `pattern` matches when it is a plain literal: characters that are not regex
/// syntax, and backslash escapes of ASCII punctuation (`\-`, `\"`). None for anything else
/// (including the empty pattern), which then takes the full parse.
fn plain_literal(pattern: &str) -> Option<Vec<u8>> {
    if pattern.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(pattern.len());
    let mut bytes = pattern.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => match bytes.next() {
                Some(e) if e.is_ascii_punctuation() => out.push(e),
                _ => return None, // a class (`\d`), an escape (`\n`, `\x41`), a backreference
            },
            b'.' | b'^' | b'$' | b'*' | b'+' | b'?' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'|' | b'#' => return None,
            // Whitespace is literal unless a verbose flag is set, which needs `(?x)`.
            _ => out.push(b),
        }
    }
    Some(out)
}

/// Parses and determinizes `pattern` (Python `re` syntax, `re.fullmatch` meaning).
pub fn compile(pattern: &str, limits: &Limits) -> Result<Dfa> {
    build_dfa(&parse(pattern, limits, None)?, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfa::DEAD;

    fn matches(pattern: &str, s: &str) -> bool {
        compile(pattern, &Limits::default()).unwrap().matches(s.as_bytes())
    }

    #[test]
    fn basic_fullmatch() {
        assert!(matches(r"\d{4}", "2024"));
        assert!(!matches(r"\d{4}", "202"));
        assert!(!matches(r"\d{4}", "20245"));
        assert!(matches(r"[Yy]es|[Nn]o", "no"));
        assert!(matches(r"^abc$", "abc"));
        assert!(matches(r"a{,2}", "aa"));
        assert!(!matches(r"a{,2}", "aaa"));
        assert!(matches(r"a{", "a{"));
        assert!(matches(r"[[]", "["));
        assert!(matches(r"[&&]+", "&&&"));
        assert!(matches(r"\<x\>", "<x>"));
        assert!(matches(r"x\Z", "x"));
        assert!(matches(r"a(?#comment)b", "ab"));
        assert!(matches(r"\0", "\0"));
        assert!(matches(r"\101", "A"));
    }

    #[test]
    fn python_classes() {
        assert!(matches(r"\d", "٣")); // Arabic-Indic digit
        assert!(!matches(r"(?a)\d", "٣"));
        assert!(matches(r"\w+", "héllo_1"));
        assert!(matches(r"\s", "\u{1f}"));
        assert!(!matches(r"\S", "\u{1f}"));
        assert!(matches(r"[^\W\d]\w*", "_x1"));
        assert!(!matches(r"[^\W\d]\w*", "1x"));
    }

    #[test]
    fn utf8_dot() {
        assert!(matches(r".", "é"));
        assert!(matches(r".", "😀"));
        assert!(!matches(r".", "\n"));
        assert!(matches(r"(?s).", "\n"));
        let dfa = compile(".", &Limits::default()).unwrap();
        assert!(!dfa.matches(&[0xff]));
    }

    fn err(pattern: &str) -> Error {
        compile(pattern, &Limits::default()).unwrap_err()
    }

    #[test]
    fn unsupported_constructs_are_named() {
        let cases = [
            (r"(a)\1", "backreference", 3),
            (r"a(?=b)", "look-ahead", 1),
            (r"(?<=a)b", "look-behind", 0),
            (r"a*+", "possessive", 1),
            (r"(?>a)", "atomic", 0),
            (r"a\bc", "word-boundary", 1),
            (r"a^b", "start anchor", 1),
            (r"(?P<x>a)(?P=x)", "named backreference", 8),
            (r"(a)(?(1)a|b)", "conditional", 3),
            (r"a$\n", "end anchor", 1),
            (r"\N{DIGIT ONE}", "named character", 0),
            (r"[a\N{DIGIT ONE}-9]", "named character", 2),
        ];
        for (p, what, pos) in cases {
            match err(p) {
                Error::UnsupportedRegex { construct, position, .. } => {
                    assert!(construct.contains(what), "{p}: {construct}");
                    assert_eq!(position, pos, "{p}");
                }
                e => panic!("{p}: unexpected {e:?}"),
            }
        }
    }

    #[test]
    fn syntax_errors_have_positions() {
        match err(r"ab(c") {
            Error::RegexSyntax { position, .. } => assert_eq!(position, 2),
            e => panic!("{e:?}"),
        }
        match err(r"abc[de") {
            Error::RegexSyntax { position, .. } => assert_eq!(position, 3),
            e => panic!("{e:?}"),
        }
    }

    /// Python's answers (`re.fullmatch`, CPython 3.11) on the spots where its syntax differs
    /// from other dialects: braces, classes, scoped flags, case folding, verbose mode.
    #[test]
    fn python_dialect_matches_re() {
        let cases: &[(&str, &[(&str, bool)])] = &[
            // `{` that is not a repetition is a literal; `{,}` is `{0,}`.
            ("a{,}", &[("", true), ("aaaa", true), ("a{,}", false)]),
            ("a{,2}", &[("aa", true), ("aaa", false)]),
            ("a{ 1}", &[("a{ 1}", true), ("a", false)]),
            ("a{x}", &[("a{x}", true)]),
            ("a{1,2", &[("a{1,2", true)]),
            ("{}", &[("{}", true)]),
            ("a{", &[("a{", true)]),
            // `]` first in a class is a literal and can start a range.
            ("[]-a]", &[("]", true), ("^", true), ("a", true), ("b", false), ("-", false)]),
            ("[^]-a]", &[("]", false), ("_", false), ("b", true)]),
            ("[]]", &[("]", true)]),
            ("[]-]", &[("]", true), ("-", true), ("^", false)]),
            // `--`, `&&`, `~~`, `[` and POSIX-like names are plain characters in a class.
            ("[--A]", &[("5", true), ("-", true), ("A", true), ("B", false)]),
            ("[^--A-Z]", &[("5", false), ("B", true), ("a", true)]),
            ("[a&&b]", &[("&", true), ("a", true)]),
            ("[a~~b]", &[("~", true)]),
            ("[[:alpha:]]", &[("a", false), ("a]", true), (":]", true)]),
            ("[[]", &[("[", true)]),
            // Scoped flags apply inside their group only.
            (r"(?a:x)|\S", &[("\x1c", false), ("x", true), ("é", true)]),
            (r"(?a:\w)|\d", &[("é", false), ("٣", true), ("a", true)]),
            ("(?i:A)a", &[("aa", true), ("aA", false), ("Aa", true)]),
            ("(?x:a b)c d", &[("abc d", true), ("abcd", false)]),
            // Case folding: Python's, ASCII-only under (?a).
            ("(?ai)s", &[("S", true), ("ſ", false)]),
            ("(?ai)k", &[("K", true), ("\u{212a}", false)]),
            ("(?ai)[^k]", &[("\u{212a}", true), ("K", false)]),
            ("(?i)s", &[("ſ", true), ("S", true)]),
            ("(?i)k", &[("\u{212a}", true)]),
            ("(?i)[a-z]", &[("\u{212a}", true), ("ſ", true), ("İ", true), ("ı", true)]),
            ("(?i)i", &[("İ", true), ("ı", true), ("I", true)]),
            // A set tests the lower-cased character against members outside the BMP as
            // written; a single character, or an alternation of them, becomes such a set.
            ("(?i)[\u{10400}x]", &[("\u{10400}", false), ("\u{10428}", false), ("X", true)]),
            ("(?i)\u{10400}|x", &[("\u{10400}", false), ("\u{10428}", false)]),
            ("(?i)\u{10400}", &[("\u{10428}", true)]),
            // Verbose mode skips only Python's whitespace, and not inside classes.
            ("(?x)a b#c", &[("ab", true), ("a b", false)]),
            ("(?x)[ #]", &[(" ", true), ("#", true)]),
            ("(?x)a\u{a0}b", &[("a\u{a0}b", true), ("ab", false)]),
            // Fullmatch: `$` at the end does not let a final newline through.
            ("a$", &[("a", true), ("a\n", false)]),
            (r"\0", &[("\0", true)]),
            (r"\101", &[("A", true)]),
            (r"[\b]", &[("\u{8}", true)]),
            ("a(?#x)*", &[("aaa", true)]),
        ];
        for (pattern, strings) in cases {
            let dfa = compile(pattern, &Limits::default()).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            for (s, expected) in *strings {
                assert_eq!(dfa.matches(s.as_bytes()), *expected, "/{pattern}/ on {s:?}");
            }
        }
    }

    /// What `re.compile` refuses is a syntax error at `re`'s position (None: `re` gives none).
    #[test]
    fn refusals_are_syntax_errors_at_re_positions() {
        let cases: &[(&str, Option<usize>)] = &[
            ("a???", Some(3)),
            ("a+?{1,3}", Some(3)),
            ("a{1,3}?{1,3}", Some(7)),
            ("a**", Some(2)),
            ("*a", Some(0)),
            ("^*", Some(1)),
            (r"[--\d]", Some(1)),
            ("[z-a]", Some(1)),
            (r"[\d-z]", Some(1)),
            (r"\q", Some(0)),
            (r"\p{L}", Some(0)),
            (r"\P{L}", Some(0)),
            ("(a", Some(0)),
            ("[a", Some(0)),
            ("[]", Some(0)),
            ("[^]", Some(0)),
            ("(?z)", Some(1)),
            ("(?P<1>a)", Some(4)),
            ("(?<=a|bc)d", None),
            ("a|(?i)b", Some(2)),
            ("(?au)a", Some(4)),
            ("(?-a:a)", Some(4)),
            ("(?L)a", Some(3)),
            ("(?i", Some(3)),
            ("(?(2)a|b)", Some(3)),
            ("(?P=x)", Some(4)),
            ("(?P<a>x)(?P<a>y)", Some(12)),
            (")", Some(0)),
            (r"\400", Some(0)),
            (r"\12", Some(1)),
            (r"\x4", Some(0)),
            ("a{2,1}", Some(2)),
            ("(?#", Some(0)),
            ("\\", Some(0)),
            ("a{99999999999}", None),
            ("(?a)(?u)a", None),
            ("(?t)a*", None),
            // After an unsupported construct, still a syntax error: re refuses the pattern.
            (r"(a)\1(", Some(5)),
            ("(?=a)[", Some(5)),
        ];
        for (pattern, position) in cases {
            match compile(pattern, &Limits::default()) {
                Err(Error::RegexSyntax { position: p, .. }) => {
                    if let Some(want) = position {
                        assert_eq!(p, *want, "{pattern}");
                    }
                }
                other => panic!("{pattern}: {other:?}"),
            }
        }
        // `\p` says why.
        let message = err(r"\p{L}").to_string();
        assert!(message.contains("no \\p"), "{message}");
    }

    /// Big counted repetitions are built as counters (not by the regex engine): the
    /// language must be the same, including when the repeated piece revisits its start
    /// state (`a*b`) or is not prefix-free (`a|ab`, built by subset construction instead).
    #[test]
    fn counted_repetitions_are_exact() {
        type Case<'a> = (&'a str, &'a dyn Fn(&str) -> bool);
        let cases: &[Case] = &[
            (r"[aé]{16,20}", &|s: &str| s.chars().all(|c| c == 'a' || c == 'é') && (16..=20).contains(&s.chars().count())),
            (r"(?:a*b){16,18}", &|s: &str| {
                s.ends_with('b') && s.chars().all(|c| c == 'a' || c == 'b') && (16..=18).contains(&s.matches('b').count())
            }),
            (r"x(?:[aé]){17,}y", &|s: &str| {
                s.len() >= 2
                    && s.starts_with('x')
                    && s.ends_with('y')
                    && s[1..s.len() - 1].chars().all(|c| c == 'a' || c == 'é')
                    && s[1..s.len() - 1].chars().count() >= 17
            }),
            (r"(?:a|ab){16,17}", &|s: &str| {
                // Tokens "a" / "ab": the count of units is the number of a's.
                let ok = s.chars().all(|c| c == 'a' || c == 'b') && !s.starts_with('b') && !s.contains("bb");
                ok && (16..=17).contains(&s.matches('a').count())
            }),
            (r"(?:a{0,20}|b)c", &|s: &str| {
                let body = s.strip_suffix('c');
                body.is_some_and(|b| b == "b" || (b.len() <= 20 && b.chars().all(|c| c == 'a')))
            }),
        ];
        let alphabet = ["a", "é", "b", "x", "y", "c"];
        for (pattern, expected) in cases {
            let dfa = compile(pattern, &Limits::default()).unwrap();
            // Strings of each length around the bounds, from a few generators.
            for n in 0..24usize {
                for k in 0..alphabet.len() {
                    for shape in 0..4 {
                        let mut s = String::new();
                        match shape {
                            0 => (0..n).for_each(|_| s.push_str(alphabet[k])),
                            1 => (0..n).for_each(|i| s.push_str(alphabet[(k + i) % 3])),
                            2 => {
                                s.push('x');
                                (0..n).for_each(|i| s.push_str(if i % 2 == 0 { "a" } else { "é" }));
                                s.push('y');
                            }
                            _ => {
                                (0..n).for_each(|i| s.push_str(if i % 3 == 2 { "b" } else { "a" }));
                                s.push_str(alphabet[k]);
                            }
                        }
                        assert_eq!(dfa.matches(s.as_bytes()), expected(&s), "/{pattern}/ on {s:?}");
                    }
                }
            }
        }
        // A lone continuation byte never matches, at any count.
        let dfa = compile(r"[aé]{16,20}", &Limits::default()).unwrap();
        let mut bytes = "a".repeat(16).into_bytes();
        bytes.push(0xa9);
        assert!(!dfa.matches(&bytes));
    }

    /// The counter's size is checked before it is built.
    #[test]
    fn counted_repetition_limit() {
        let limits = Limits { max_dfa_states: 1000, ..Limits::default() };
        match compile(r"[aé]{5000}", &limits) {
            Err(Error::LimitExceeded { limit: "max_dfa_states", .. }) => {}
            other => panic!("{other:?}"),
        }
        assert!(compile(r"[aé]{300}", &limits).is_ok());
    }

    #[test]
    fn dfa_size_limit() {
        let limits = Limits { dfa_size_limit: 1 << 16, ..Limits::default() };
        match compile(r"(a|b)*a(a|b){20}", &limits) {
            Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "dfa_size_limit"),
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn empty_language_is_an_error() {
        assert!(matches!(err(r"[^\s\S]"), Error::EmptyLanguage { .. }));
    }

    #[test]
    fn pieces_agree_with_the_regex_engine_alone() {
        let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
        let patterns = [
            "\"Always\"|\"IfNotPresent\"|\"Never\"".to_string(),
            "[a-zé-ü]+|[0-9]{2,3}".to_string(),
            format!("\"{json_char}*\""),
            format!("{json_char}{{0,15}}"),
            format!("{json_char}{{1,63}}x"),
            format!(",\"name\":\"{json_char}*\"(?:,\"value\":\"{json_char}*\"|,\"n\":(?:0|[1-9][0-9]*))?"),
            format!("(?:\"a\":\"{json_char}*\"|\"b\":[0-9]+)(?:,\"{json_char}*\":\"{json_char}*\")*"),
            "(?:[0-9A-Fa-f]{1,4}:){6}[0-9A-Fa-f]{1,4}|::(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}".to_string(),
            "(?:ab|a)(?:bc|c)".to_string(),
            // Repeated finite units, built from the unit's DFA: prefix-free (counted) and not.
            format!("x{json_char}+y"),
            format!("{json_char}{{2,}}"),
            "(?:abcdefghijklmnopqrstuvwxyz0123456789|abcdefghijklmnopqrstuvwxyz0123456789ab)*".to_string(),
            // Long literals next to a repetition are pieces of their own, and `x|` is `x`
            // with an accepting start (optional object properties).
            r#"(?:,"tolerationSeconds":(?:0|[1-9][0-9]*)(?:\.0+)?)|"#.to_string(),
            r#"|,"sizeLimit":"[0-9]+(?:\.[0-9]+)?(?:m|Ki|Mi)?"(?:,"medium":"(?:Memory|)")?"#.to_string(),
            "abcdefghij(?:x|y)klmnopqrst".to_string(),
            "(?:abcdefgh[0-9])+|abcdefghij[a-c]*abcdefghij".to_string(),
            "(?:xabcdefghij[0-9]*)+|".to_string(),
        ];
        let limits = Limits::default();
        let mut shared = PieceCache::default();
        for p in &patterns {
            let parsed = parse(p, &limits, None).unwrap();
            let whole = dense_dfa(&parsed.hir, p, &limits).unwrap();
            let alone = build_dfa(&parsed, &limits).unwrap();
            // Twice through one cache: the second build reuses the first one's pieces.
            for _ in 0..2 {
                let cached = build_dfa_cached(&parsed, &limits, &mut shared).unwrap();
                assert_eq!(whole.difference(&cached), None, "{p}");
            }
            assert_eq!(whole.difference(&alone), None, "{p}");
        }
        assert!(!shared.built.is_empty());
    }

    /// Plain literals skip the parser; they must mean what the parser makes of them, and
    /// anything with regex syntax must still take the full parse.
    #[test]
    fn plain_literals_take_the_fast_path_with_the_same_language() {
        let limits = Limits::default();
        for p in [r#""containerPort""#, r#""ephemeral\-storage""#, r#"a\.b\+c\\d"#, "é😀 x", ",\"port\":", r"\<x\>"] {
            let lit = plain_literal(p).unwrap_or_else(|| panic!("{p} is a plain literal"));
            let fast = compile_cached(p, &limits, None, &mut PieceCache::default()).unwrap();
            let full = compile(p, &limits).unwrap();
            assert_eq!(fast.num_states(), full.num_states(), "{p}");
            assert!(fast.matches(&lit) && full.matches(&lit), "{p}");
            // Every prefix, and the literal with a byte changed or added, read alike.
            for cut in 0..lit.len() {
                assert_eq!(fast.matches(&lit[..cut]), full.matches(&lit[..cut]), "{p} prefix {cut}");
                let mut changed = lit.clone();
                changed[cut] ^= 1;
                assert!(!fast.matches(&changed) && !full.matches(&changed), "{p} changed at {cut}");
            }
            let mut longer = lit.clone();
            longer.push(lit[0]);
            assert!(!fast.matches(&longer), "{p}");
        }
        for p in ["", "a.b", "a|b", "ab*", r"\d", r"\n", "(?i)ab", "a{2}", "[a]", "a#b", r"\1"] {
            assert!(plain_literal(p).is_none(), "{p} is not a plain literal");
        }
        // Over max_pattern_bytes the fast path is not taken: the limit error still comes.
        let small = Limits { max_pattern_bytes: 4, ..Limits::default() };
        let r = compile_cached("abcdef", &small, None, &mut PieceCache::default());
        assert!(matches!(r, Err(Error::LimitExceeded { limit: "max_pattern_bytes", .. })), "{r:?}");
    }

    /// Long counted repetitions keep their rows unstored (see `dfa::Counted`), alone, between
    /// other parts, before a nullable part, inside unions and nested counts, and where a
    /// junction is not deterministic (subset construction reads the region): every one
    /// has the regex engine's language.
    #[test]
    fn counted_regions_agree_with_the_regex_engine() {
        let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
        let unit = r"(?:[a-c]|\\[nt])";
        // (pattern, how many times smaller than written out the result is: 0 = no region)
        let cases = [
            (format!("\"{unit}{{0,1100}}\""), 20),
            (format!("x{unit}{{3,1100}}y"), 20),
            (format!("{unit}{{1100,}}z"), 20),
            (format!("{unit}{{0,1100}}(?:z|)"), 20),
            (format!("\"{json_char}{{1,160}}\""), 20),
            // Two regions: one is kept, the other written out.
            (format!("\"{unit}{{0,1100}}\",\"{unit}{{0,1100}}\""), 1),
            (format!("{unit}{{1100}}"), 20),
            ("q(?:ab|c){0,1200}c?".to_string(), 0),
            (format!("{unit}{{0,1100}}|zz"), 0),
            (format!("{unit}{{0,1100}}|"), 0),
            ("(?:(?:ab|c){0,1100}d){0,3}".to_string(), 0),
        ];
        let limits = Limits::default();
        for (p, smaller) in &cases {
            let parsed = parse(p, &limits, None).unwrap();
            let whole = dense_dfa(&parsed.hir, p, &limits).unwrap();
            let built = build_dfa(&parsed, &limits).unwrap();
            assert_eq!(whole.difference(&built), None, "{p}");
            assert_eq!(built.has_counted_region(), *smaller > 0, "{p}");
            assert_eq!(built.num_states(), built.stored().num_states(), "{p}");
            if *smaller > 0 {
                assert!(built.memory_bytes() * smaller < built.stored().memory_bytes(), "{p}: the rows are stored");
            }
            // State by state, the computed rows are those written out.
            let stored = built.stored();
            for s in 0..built.num_states() as u32 {
                assert_eq!(built.is_accepting(s), stored.is_accepting(s), "{p}: state {s}");
                for b in 0..=255u8 {
                    assert_eq!(built.next(s, b), stored.next(s, b), "{p}: state {s}, byte {b}");
                }
            }
            // A state and its stand-in read every string of up to `depth` bytes alike.
            let mut shared = 0;
            for s in (1..built.num_states() as u32).step_by(11) {
                for depth in [1usize, 4, 40] {
                    let e = built.equivalent_within(s, depth);
                    shared += (e != s) as usize;
                    let mut level = vec![(s, e)];
                    for _ in 0..depth {
                        let mut next = std::collections::BTreeSet::new();
                        for &(x, y) in &level {
                            assert_eq!(built.is_accepting(x), built.is_accepting(y), "{p}: {s} ~ {e} at depth {depth}");
                            for b in 0..=255u8 {
                                let (x2, y2) = (built.next(x, b), built.next(y, b));
                                assert_eq!(x2 == DEAD, y2 == DEAD, "{p}: {s} ~ {e} at depth {depth}");
                                if x2 != DEAD {
                                    next.insert((x2, y2));
                                }
                            }
                        }
                        level = next.into_iter().collect();
                    }
                    for &(x, y) in &level {
                        assert_eq!(built.is_accepting(x), built.is_accepting(y), "{p}: {s} ~ {e} at depth {depth}");
                    }
                }
            }
            assert_eq!(shared > 0, *smaller > 0, "{p}: states share a stand-in only in a counted region");
        }
    }

    /// Finite pieces built by corral directly are the regex engine's language, minimal.
    #[test]
    fn byte_sequence_pieces_are_exact_and_minimal() {
        let patterns = [
            r#"[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f])"#,
            "null|true|false|nul",
            "abc|abd|xbc|xbd",
            "[a-zé-ü]|[0-9][0-9]",
            "(?:)",
        ];
        let limits = Limits::default();
        for p in patterns {
            let parsed = parse(p, &limits, None).unwrap();
            let seqs = byte_sequences(&parsed.hir).expect(p);
            let direct = Dfa::from_byte_sequences(&seqs, &limits, p).unwrap();
            assert_eq!(dense_dfa(&parsed.hir, p, &limits).unwrap().difference(&direct), None, "{p}");
            assert_eq!(direct.minimized().num_states(), direct.num_states(), "{p}: not minimal");
        }
    }
}
