//! Token references in grammar text, shared by GBNF, corral EBNF and Lark: `<[151667]>`
//! (one id), `<[a-b,c]>` (ids and ranges), `<think>` (the token whose text that is), and
//! their negations `!<[id]>*` / `!<name>+`.
//!
//! A reference becomes an ordinary terminal over the tokens' *readings* (see
//! [`crate::vocab::readings`]); the grammar records what it names in
//! [`GrammarAst::tokens`](super::ast::GrammarAst::tokens), and compiling it reads the
//! vocabulary with those readings. A negation stands for one unit of "any text, or any
//! token named by id or special, but these": it must be repeated without bound (`*`, `+`,
//! `{m,}`), since corral constrains text, where one token and several spell the same
//! string; only unbounded runs mean the same either way.

use std::collections::BTreeMap;

use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir};

use super::ast::{Expr, HirTerm, Pos, Term};
use super::scanner::{grammar_error, Scanner};
use crate::error::Result;
use crate::vocab::readings::{merge_ranges, name_reading, BY_ID, BY_NAME, ID_DIGITS, MARK};
use crate::vocab::TokenRefs;

/// What a reference names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// Ids, as inclusive ranges.
    Ids(Vec<(u32, u32)>),
    /// The token whose exact text this is (angle brackets included).
    Name(String),
}

/// A token reference as written: `<…>` or `!<…>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TokenRef {
    pub target: Target,
    pub negated: bool,
}

/// Scans a reference whose `<` is the scanner's next character (a `!` before it already
/// taken, with `negated`).
pub(crate) fn scan(s: &mut Scanner, negated: bool) -> Result<TokenRef> {
    let start = s.pos();
    s.bump();
    let target = if s.peek() == Some('[') {
        s.bump();
        Target::Ids(scan_ids(s, start)?)
    } else {
        let mut name = String::from("<");
        loop {
            match s.bump() {
                Some('>') if name.len() > 1 => break,
                Some(c) if !c.is_whitespace() && c != '>' => name.push(c),
                _ => {
                    return Err(grammar_error(
                        start,
                        "a token reference is `<name>` (the token's text, brackets included) or `<[id]>`",
                    ))
                }
            }
        }
        name.push('>');
        Target::Name(name)
    };
    Ok(TokenRef { target, negated })
}

/// `12]>`, `1-5, 9]>`: the ids of a `<[…]>` after its `[`.
fn scan_ids(s: &mut Scanner, start: Pos) -> Result<Vec<(u32, u32)>> {
    let bad = || grammar_error(start, "token ids are written `<[id]>`, `<[lo-hi]>` or a comma-separated list of them");
    let mut body = String::new();
    loop {
        match s.bump() {
            Some(']') if s.peek() == Some('>') => {
                s.bump();
                break;
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == ',' || c == ' ' => body.push(c),
            _ => return Err(bad()),
        }
    }
    let num = |t: &str| -> Result<u32> {
        let t = t.trim();
        if t.is_empty() {
            return Err(grammar_error(
                start,
                "a token id is missing in `<[...]>` (an empty item of the list, or a range without an end)",
            ));
        }
        t.parse::<u32>().map_err(|_| grammar_error(start, format!("token id `{t}` is not a number below 2^32")))
    };
    let mut ids = Vec::new();
    for part in body.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(part)?;
                (n, n)
            }
        };
        if hi < lo {
            return Err(grammar_error(start, format!("token id range {lo}-{hi} is empty")));
        }
        ids.push((lo, hi));
    }
    if ids.is_empty() {
        return Err(bad());
    }
    Ok(ids)
}

/// The expression of `r`, written at `pos`, recording what it names in `refs`. For a
/// negation, `repeated` says whether an unbounded repetition follows (it must).
pub(crate) fn expr(r: &TokenRef, pos: Pos, repeated: bool, refs: &mut TokenRefs) -> Result<Expr> {
    match &r.target {
        Target::Ids(ids) => ids.iter().for_each(|&(lo, hi)| refs.add_ids(lo, hi)),
        Target::Name(name) => {
            refs.names.insert(name.as_bytes().to_vec());
        }
    }
    let hir = match (&r.target, r.negated) {
        (_, true) if !repeated => {
            return Err(grammar_error(
                pos,
                "a negated token reference must be repeated without bound (`!<…>*`, `!<…>+`): corral \
                 constrains text, where one token and several spell the same string",
            ))
        }
        (Target::Ids(ids), false) => ids_hir(&merge_ranges(ids.clone())),
        (Target::Name(name), false) => Hir::literal(name_reading(name.as_bytes())),
        (target, true) => negation_unit(target),
    };
    Ok(Expr::Term { term: Term::Hir(HirTerm::new(hir)), pos })
}

/// One unit of a negation: a byte of text, or one reading but those of `target`.
fn negation_unit(target: &Target) -> Hir {
    let mut refs = TokenRefs::default();
    match target {
        Target::Ids(ids) => ids.iter().for_each(|&(lo, hi)| refs.add_ids(lo, hi)),
        Target::Name(name) => {
            refs.names.insert(name.as_bytes().to_vec());
        }
    }
    unit_except(&refs)
}

/// A byte of text, or one reading but those of the tokens `refs` names.
fn unit_except(refs: &TokenRefs) -> Hir {
    let text = class(0x00, MARK - 1);
    let other_ids = ids_hir_u64(&complement(&refs.ids));
    let names: Vec<Vec<u8>> = refs.names.iter().map(|n| nibbles(n)).collect();
    let mut name_digits = names.iter().map(|n| n.as_slice()).collect::<Vec<_>>();
    let other_names = Hir::concat(vec![Hir::literal([MARK, BY_NAME]), names_except(&mut name_digits)]);
    Hir::alternation(vec![text, other_ids, other_names])
}

/// One token among those `refs` names (not empty): its reading.
pub(crate) fn one_of(refs: &TokenRefs) -> Hir {
    let mut alts = Vec::new();
    if !refs.ids.is_empty() {
        alts.push(ids_hir(&refs.ids));
    }
    alts.extend(refs.names.iter().map(|n| Hir::literal(name_reading(n))));
    Hir::alternation(alts)
}

/// Any run of text and tokens but those `refs` names (the empty run too): `!<…>*` of
/// the grammars, for a list that may mix ids and texts.
pub(crate) fn run_except(refs: &TokenRefs) -> Hir {
    Hir::repetition(regex_syntax::hir::Repetition { min: 0, max: None, greedy: true, sub: Box::new(unit_except(refs)) })
}

/// The readings of the ids in `ranges` (sorted, disjoint).
fn ids_hir(ranges: &[(u32, u32)]) -> Hir {
    ids_hir_u64(&ranges.iter().map(|&(a, b)| (u64::from(a), u64::from(b))).collect::<Vec<_>>())
}

fn ids_hir_u64(ranges: &[(u64, u64)]) -> Hir {
    let alts = ranges.iter().map(|&(lo, hi)| digits_between(lo, hi, ID_DIGITS)).collect();
    Hir::concat(vec![Hir::literal([MARK, BY_ID]), Hir::alternation(alts), Hir::literal([MARK])])
}

/// The ranges of `[0, 64^ID_DIGITS)` that `ranges` (sorted, disjoint) leave out.
fn complement(ranges: &[(u32, u32)]) -> Vec<(u64, u64)> {
    let top = 64u64.pow(ID_DIGITS) - 1;
    let mut out = Vec::new();
    let mut next = 0u64;
    for &(lo, hi) in ranges {
        if u64::from(lo) > next {
            out.push((next, u64::from(lo) - 1));
        }
        next = u64::from(hi) + 1;
    }
    if next <= top {
        out.push((next, top));
    }
    out
}

/// Every `width`-digit base-64 numeral (digits `0x80 | d`) with a value in `lo..=hi`.
fn digits_between(lo: u64, hi: u64, width: u32) -> Hir {
    if width == 0 {
        return Hir::empty();
    }
    let unit = 64u64.pow(width - 1);
    let (lead_lo, rest_lo) = (lo / unit, lo % unit);
    let (lead_hi, rest_hi) = (hi / unit, hi % unit);
    let digit = |d: u64| Hir::literal([0x80 | d as u8]);
    if lead_lo == lead_hi {
        return Hir::concat(vec![digit(lead_lo), digits_between(rest_lo, rest_hi, width - 1)]);
    }
    let any_rest = || Hir::concat((1..width).map(|_| class(0x80, 0xBF)).collect());
    let mut alts = Vec::new();
    // The first leading digit, partly covered; then whole ones; then the last, partly.
    let first_whole = if rest_lo == 0 { lead_lo } else { lead_lo + 1 };
    let last_whole = if rest_hi == unit - 1 { lead_hi } else { lead_hi - 1 };
    if rest_lo != 0 {
        alts.push(Hir::concat(vec![digit(lead_lo), digits_between(rest_lo, unit - 1, width - 1)]));
    }
    if first_whole <= last_whole {
        alts.push(Hir::concat(vec![class(0x80 | first_whole as u8, 0x80 | last_whole as u8), any_rest()]));
    }
    if rest_hi != unit - 1 {
        alts.push(Hir::concat(vec![digit(lead_hi), digits_between(0, rest_hi, width - 1)]));
    }
    Hir::alternation(alts)
}

/// `text` as the nibble digits of its reading by name.
fn nibbles(text: &[u8]) -> Vec<u8> {
    let reading = name_reading(text);
    reading[2..reading.len() - 1].to_vec()
}

/// Every run of nibble digits then `MARK`, but `names` (nibble runs) then `MARK`: a trie of
/// the names, leaving each node by any other digit.
fn names_except(names: &mut [&[u8]]) -> Hir {
    let mut alts = Vec::new();
    if !names.iter().any(|n| n.is_empty()) {
        alts.push(Hir::literal([MARK]));
    }
    let mut children: BTreeMap<u8, Vec<&[u8]>> = BTreeMap::new();
    for n in names.iter().filter(|n| !n.is_empty()) {
        children.entry(n[0]).or_default().push(&n[1..]);
    }
    let others: Vec<ClassBytesRange> =
        (0x80..=0x8F).filter(|d| !children.contains_key(d)).map(|d| ClassBytesRange::new(d, d)).collect();
    if !others.is_empty() {
        let any =
            Hir::repetition(regex_syntax::hir::Repetition { min: 0, max: None, greedy: true, sub: Box::new(class(0x80, 0x8F)) });
        alts.push(Hir::concat(vec![Hir::class(Class::Bytes(ClassBytes::new(others))), any, Hir::literal([MARK])]));
    }
    for (d, mut subs) in children {
        alts.push(Hir::concat(vec![Hir::literal([d]), names_except(&mut subs)]));
    }
    Hir::alternation(alts)
}

fn class(lo: u8, hi: u8) -> Hir {
    Hir::class(Class::Bytes(ClassBytes::new([ClassBytesRange::new(lo, hi)])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::readings::id_reading;

    fn matches(hir: &Hir, bytes: &[u8]) -> bool {
        let dfa = crate::frontend::regex::compile_hir(hir, "test", &crate::limits::Limits::default()).unwrap();
        dfa.matches(bytes)
    }

    #[test]
    fn id_ranges_match_exactly_their_ids() {
        let ranges = [(0u32, 0u32), (63, 64), (4000, 4200), (151_643, 151_700)];
        let hir = ids_hir(&ranges);
        for id in (0..160_000u32).step_by(7).chain([0, 63, 64, 65, 4000, 4200, 4201, 151_643, 151_700, 151_701]) {
            let want = ranges.iter().any(|&(a, b)| a <= id && id <= b);
            assert_eq!(matches(&hir, &id_reading(id)), want, "id {id}");
        }
    }

    #[test]
    fn a_negation_allows_text_and_every_other_reading() {
        let unit = negation_unit(&Target::Ids(vec![(5, 9)]));
        assert!(matches(&unit, b"a"));
        assert!(!matches(&unit, &[MARK]));
        assert!(matches(&unit, &id_reading(4)) && matches(&unit, &id_reading(10)));
        assert!(!matches(&unit, &id_reading(5)) && !matches(&unit, &id_reading(9)));
        assert!(matches(&unit, &name_reading(b"<think>")));
        let unit = negation_unit(&Target::Name("<think>".into()));
        assert!(!matches(&unit, &name_reading(b"<think>")));
        for other in [&b"</think>"[..], b"<think", b"<think>>", b"", b"<"] {
            assert!(matches(&unit, &name_reading(other)), "{other:?}");
        }
        assert!(matches(&unit, &id_reading(7)));
    }
}
