//! Python `re` patterns to byte-level DFAs.
//!
//! The pipeline is: `python` reads the pattern as CPython 3.11 does (refusing what it
//! refuses, naming the constructs no DFA can express) and lowers it to a regex-syntax HIR
//! with Python's meaning (`\d \w \s`, scoped flags, Python's case folding, anchors) →
//! `regex-automata` builds a Thompson NFA and determinizes it under size limits →
//! [`crate::automata::Dfa`] keeps only the states from which a match is still reachable.
//!
//! The meaning is that of `re.fullmatch` on `str` patterns: the whole output must match.
//! A whole pattern with assertions (look-around, `\b`, anchors inside) has no HIR; it
//! is built by the automata layer's look-around construction ([`parse_whole`]).
//! Positions in errors are character offsets into the pattern as the user wrote it.

use std::sync::Arc;

use regex_syntax::hir::Hir;

use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::limits::Limits;

mod build;
pub mod prebuilt;
#[cfg(test)]
mod tests;

pub use build::PieceCache;
use build::{hir_dfa, hir_dfa_shared};

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
    form: Form,
}

/// What a parsed pattern is made of.
#[derive(Debug, Clone)]
enum Form {
    /// Its HIR, Python's meaning applied.
    Hir(Hir),
    /// Its automaton, built while parsing: a pattern with assertions has no HIR.
    Built(Arc<Dfa>),
}

impl ParsedRegex {
    /// The pattern as the user wrote it.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The regex-syntax HIR of the pattern (Python semantics already applied); None for
    /// a pattern with assertions, which is built as an automaton.
    pub fn hir(&self) -> Option<&Hir> {
        match &self.form {
            Form::Hir(h) => Some(h),
            Form::Built(_) => None,
        }
    }
}

/// Refuses a pattern longer than `limits.max_pattern_bytes`.
fn check_length(pattern: &str, limits: &Limits) -> Result<()> {
    if pattern.len() > limits.max_pattern_bytes {
        return Err(Error::LimitExceeded {
            limit: "max_pattern_bytes",
            value: limits.max_pattern_bytes,
            context: format!("a regex of {} bytes", pattern.len()),
        });
    }
    Ok(())
}

/// Reads `pattern` (Python's syntax and checks), its nesting bounded by `limits`.
fn read(pattern: &str, limits: &Limits) -> Result<python::Pattern> {
    check_length(pattern, limits)?;
    let read = python::read(pattern, limits.regex_nest_limit)?;
    if read.depth > limits.regex_nest_limit {
        return Err(Error::LimitExceeded {
            limit: "regex_nest_limit",
            value: limits.regex_nest_limit as usize,
            context: "the nesting depth of the regex".to_string(),
        });
    }
    Ok(read)
}

/// Parses a Python `re` pattern and applies Python's semantics, as a piece of a larger
/// expression (a grammar's terminal): its HIR. Assertions are refused, since a
/// look-ahead there would see past the piece. `classes` gives the interpreter's
/// `\d \w \s` (see [`PerlClasses`]).
pub fn parse(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<Hir> {
    let read = read(pattern, limits)?;
    python::Lowering { pattern, classes, folded: Default::default() }.lower(read)
}

/// [`parse`] for a pattern that is the whole text (`re.fullmatch`): assertions
/// (look-around, `\b`, anchors anywhere) are allowed, and such a pattern's DFA is built
/// now, under `limits`.
pub fn parse_whole(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<ParsedRegex> {
    let mut read = read(pattern, limits)?;
    let lowering = python::Lowering { pattern, classes, folded: Default::default() };
    let form = if read.assertions_inside() {
        Form::Built(Arc::new(lowering.look_dfa(read, limits)?))
    } else {
        Form::Hir(lowering.lower(read)?)
    };
    Ok(ParsedRegex { pattern: pattern.to_string(), form })
}

/// Determinizes a parsed pattern into a pruned byte-level [`Dfa`].
pub fn build_dfa(parsed: &ParsedRegex, limits: &Limits) -> Result<Dfa> {
    match &parsed.form {
        Form::Hir(h) => hir_dfa(h, &parsed.pattern, limits, &mut PieceCache::default()),
        Form::Built(d) => Ok((**d).clone()),
    }
}

/// Determinizes a regex-syntax HIR built directly rather than parsed (the JSON Schema
/// translator builds its patterns and number languages this way) into a pruned byte-level [`Dfa`];
/// `what` names it in errors. The HIR's nesting is the caller's to bound (as
/// [`Limits::regex_nest_limit`] bounds a parsed pattern's).
pub fn compile_hir(hir: &Hir, what: &str, limits: &Limits) -> Result<Dfa> {
    hir_dfa(hir, what, limits, &mut PieceCache::default())
}

/// `hir` as a leaf of a look-around tree ([`crate::automata::LookTree`]): its DFA, or
/// `Nothing` when it has no string (a piece that matches nothing is no error inside a
/// larger pattern).
pub fn look_leaf(hir: &Hir, what: &str, limits: &Limits) -> Result<crate::automata::LookTree> {
    match compile_hir(hir, what, limits) {
        Ok(d) => Ok(crate::automata::LookTree::Leaf(Arc::new(d))),
        Err(Error::EmptyLanguage { .. }) => Ok(crate::automata::LookTree::Nothing),
        Err(e) => Err(e),
    }
}

/// [`compile_hir`], reusing (and adding to) pieces built for earlier patterns (a grammar's
/// regular pieces, built by its lowering as HIRs); the result may be shared with the cache.
/// A literal is built as a chain of states directly (under a microsecond).
pub fn compile_hir_cached(hir: &Hir, what: &str, limits: &Limits, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    if let regex_syntax::hir::HirKind::Literal(l) = hir.kind() {
        return Ok(Arc::new(Dfa::literal(&l.0, limits, what)?));
    }
    hir_dfa_shared(hir, what, limits, cache)
}

/// [`build_dfa`], reusing (and adding to) pieces built for earlier patterns; the result
/// may be shared with the cache.
pub fn build_dfa_cached(parsed: &ParsedRegex, limits: &Limits, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    match &parsed.form {
        Form::Hir(h) => hir_dfa_shared(h, &parsed.pattern, limits, cache),
        Form::Built(d) => Ok(d.clone()),
    }
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
    build_dfa(&parse_whole(pattern, limits, classes)?, limits)
}

/// [`compile_with`], sharing built pieces through `cache` (`prebuilt::compile_cached`
/// reads patterns shipped prebuilt first; a grammar's pieces are built by
/// [`compile_hir_cached`]).
pub fn compile_cached(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>, cache: &mut PieceCache) -> Result<Arc<Dfa>> {
    // A grammar's literals (object keys, enum members) are most of its regex sources; the
    // parser and the general construction cost ~10 µs each, the chain well under one.
    if pattern.len() <= limits.max_pattern_bytes {
        if let Some(bytes) = plain_literal(pattern) {
            return Ok(Arc::new(Dfa::literal(&bytes, limits, pattern)?));
        }
    }
    build_dfa_cached(&parse_whole(pattern, limits, classes)?, limits, cache)
}

/// The bytes `pattern` matches when it is a plain literal: characters that are not regex
/// syntax, and backslash escapes of ASCII punctuation (`\-`, `\"`). None for anything else
/// (including the empty pattern), which then takes the full parse (a grammar's literals,
/// object keys and enum members, are most of its regexes: the parse costs ~10 µs).
pub fn plain_literal(pattern: &str) -> Option<Vec<u8>> {
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
    build_dfa(&parse_whole(pattern, limits, None)?, limits)
}
