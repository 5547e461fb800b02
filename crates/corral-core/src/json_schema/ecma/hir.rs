//! A pattern's language as regex-syntax HIR, over the decoded value or over its JSON
//! encoding.
//!
//! The encoding is the canonical one (`json.dumps(..., ensure_ascii=False)`): characters
//! appear raw except `"`, `\` and the C0 controls, which have exactly one escape each:
//! `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00XX` (lowercase hex) for the other
//! controls. So one character of a set is the union of its raw members and the escapes
//! of its members that must be escaped.

use regex_syntax::hir::{self, Class, ClassUnicode, ClassUnicodeRange, Hir};

use super::ranges::{complement, intersect, normalize, MAX_CODE_POINT};
use super::Node;

/// The characters JSON escapes: the C0 controls, `"` and `\`.
const MUST_ESCAPE: &[(u32, u32)] = &[(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C)];

/// The letter of the short escape of `cp` (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`), if
/// it has one; the other characters JSON escapes are written `\u00XX`.
fn short_escape(cp: u32) -> Option<char> {
    Some(match cp {
        0x22 => '"',
        0x5C => '\\',
        0x08 => 'b',
        0x0C => 'f',
        0x0A => 'n',
        0x0D => 'r',
        0x09 => 't',
        _ => return None,
    })
}

/// A class of the characters `chars` as HIR (never matching when there is none).
fn class_of_chars(chars: impl IntoIterator<Item = char>) -> Hir {
    Hir::class(Class::Unicode(ClassUnicode::new(chars.into_iter().map(|c| ClassUnicodeRange::new(c, c)))))
}

/// One character of `ranges` (a normalized set) as HIR: a class of code points, or the
/// never-matching HIR when `ranges` is empty.
pub fn value_char_hir(ranges: &[(u32, u32)]) -> Hir {
    let members = ranges.iter().filter_map(|&(lo, hi)| Some(ClassUnicodeRange::new(char::from_u32(lo)?, char::from_u32(hi)?)));
    Hir::class(Class::Unicode(ClassUnicode::new(members)))
}

/// One character of `ranges` (a normalized set) in its canonical JSON encoding: the raw
/// characters that need no escape, `\` and the letter of the short escapes, `\u00` and
/// two lowercase hex digits for the other controls. Never matches when `ranges` is empty.
pub fn json_char_hir(ranges: &[(u32, u32)]) -> Hir {
    let mut parts = Vec::with_capacity(3);
    let plain = intersect(ranges, &complement(MUST_ESCAPE));
    if !plain.is_empty() {
        parts.push(value_char_hir(&plain));
    }
    let (mut short, mut hexes) = (Vec::new(), Vec::new());
    for (lo, hi) in intersect(ranges, MUST_ESCAPE) {
        for cp in lo..=hi {
            match short_escape(cp) {
                Some(letter) => short.push(letter),
                None => hexes.push(cp),
            }
        }
    }
    if !short.is_empty() {
        parts.push(Hir::concat(vec![Hir::literal(*b"\\"), class_of_chars(short)]));
    }
    if !hexes.is_empty() {
        parts.push(Hir::concat(vec![Hir::literal(*b"\\u00"), hex_pairs(&hexes)]));
    }
    // An empty alternation never matches.
    Hir::alternation(parts)
}

/// The two lowercase hex digits of each of `codes` (below 0x100, ascending), grouped by
/// the first digit: `0[0-7bef]|1[0-9a-f]` rather than one alternative per code.
fn hex_pairs(codes: &[u32]) -> Hir {
    let digit = |d: u32| char::from_digit(d, 16).unwrap_or('0');
    let mut alts = Vec::new();
    let mut rest = codes;
    while let Some(&first) = rest.first() {
        let high = first >> 4;
        let n = rest.iter().take_while(|&&c| c >> 4 == high).count();
        let lows = class_of_chars(rest[..n].iter().map(|&c| digit(c & 0xF)));
        alts.push(Hir::concat(vec![class_of_chars([digit(high)]), lows]));
        rest = &rest[n..];
    }
    Hir::alternation(alts)
}

/// Any one character in its canonical JSON encoding (built once: every string and key
/// of a schema starts from it).
pub fn json_any_char_hir() -> Hir {
    static ANY: std::sync::OnceLock<Hir> = std::sync::OnceLock::new();
    ANY.get_or_init(|| json_char_hir(&normalize([(0, MAX_CODE_POINT)]))).clone()
}

/// `node` as HIR, each character set built by `chars`. Assertions never reach here (a
/// language that holds them is built by `look_around`); one would match nothing.
pub(super) fn node_hir<F: Fn(&[(u32, u32)]) -> Hir>(node: &Node, chars: &F) -> Hir {
    match node {
        Node::Chars(ranges) => chars(ranges),
        Node::Seq(items) => Hir::concat(items.iter().map(|x| node_hir(x, chars)).collect()),
        Node::Alt(items) => Hir::alternation(items.iter().map(|x| node_hir(x, chars)).collect()),
        Node::Repeat { item, min, max } => {
            Hir::repetition(hir::Repetition { min: *min, max: *max, greedy: true, sub: Box::new(node_hir(item, chars)) })
        }
        Node::Anchor { .. } | Node::Look { .. } | Node::Boundary { .. } => Hir::fail(),
    }
}
