//! Sets of characters as sorted, merged, inclusive code-point ranges without surrogates
//! (a surrogate is not a character of UTF-8 text), and the sets ECMAScript names.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// A set of characters: sorted, merged, inclusive code-point ranges, no surrogates (what
/// [`normalize`] returns).
pub type Ranges = Vec<(u32, u32)>;

/// The largest code point.
pub const MAX_CODE_POINT: u32 = 0x10FFFF;

/// The first and last surrogate code points.
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// `ranges` (inclusive, in any order, possibly overlapping) sorted and merged, with the
/// surrogates cut out.
pub fn normalize(ranges: impl IntoIterator<Item = (u32, u32)>) -> Ranges {
    let mut sorted: Vec<(u32, u32)> = ranges.into_iter().collect();
    sorted.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(sorted.len());
    for (lo, hi) in sorted {
        let pieces = if lo <= SURROGATES.1 && hi >= SURROGATES.0 {
            [(lo, SURROGATES.0 - 1), (SURROGATES.1 + 1, hi)]
        } else {
            [(lo, hi), (1, 0)] // the second piece is empty
        };
        for (a, b) in pieces {
            if a > b {
                continue;
            }
            match out.last_mut() {
                Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
    }
    out
}

/// The characters not in `ranges` (which must be normalized).
pub fn complement(ranges: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    let mut prev = 0;
    for &(lo, hi) in ranges {
        if lo > prev {
            out.push((prev, lo - 1));
        }
        prev = hi + 1;
    }
    if prev <= MAX_CODE_POINT {
        out.push((prev, MAX_CODE_POINT));
    }
    normalize(out)
}

/// The characters in both `a` and `b` (both normalized).
pub fn intersect(a: &[(u32, u32)], b: &[(u32, u32)]) -> Ranges {
    complement(&normalize(complement(a).into_iter().chain(complement(b))))
}

/// Every character.
pub fn any() -> Ranges {
    normalize([(0, MAX_CODE_POINT)])
}

/// ECMAScript `\d`.
pub const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];

/// ECMAScript `\w`.
pub const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];

/// ECMAScript `\s`: WhiteSpace and LineTerminator.
pub const SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];

/// ECMAScript's LineTerminator: what `.` does not match.
pub const LINE_TERMINATORS: &[(u32, u32)] = &[(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)];

/// The characters with a digit value whose numeric type is not decimal (superscripts,
/// circled and other styled digits): with the decimal digits, the characters Python's
/// `str.isdigit` accepts.
const NON_DECIMAL_DIGITS: &[(u32, u32)] = &[
    (0xB2, 0xB3),
    (0xB9, 0xB9),
    (0x1369, 0x1371),
    (0x19DA, 0x19DA),
    (0x2070, 0x2070),
    (0x2074, 0x2079),
    (0x2080, 0x2089),
    (0x2460, 0x2468),
    (0x2474, 0x247C),
    (0x2488, 0x2490),
    (0x24EA, 0x24EA),
    (0x24F5, 0x24FD),
    (0x24FF, 0x24FF),
    (0x2776, 0x277E),
    (0x2780, 0x2788),
    (0x278A, 0x2792),
    (0x10A40, 0x10A43),
    (0x10E60, 0x10E68),
    (0x11052, 0x1105A),
    (0x1F100, 0x1F10A),
];

/// The decimal digits (general category Nd), by regex-syntax's Unicode tables.
fn decimal_digits() -> &'static [(u32, u32)] {
    static DIGITS: OnceLock<Ranges> = OnceLock::new();
    DIGITS.get_or_init(|| match regex_syntax::parse(r"\d").as_ref().map(|h| h.kind()) {
        Ok(HirKind::Class(Class::Unicode(c))) => c.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect(),
        _ => DIGIT.to_vec(),
    })
}

/// Is `cp` in `ranges` (sorted)? The range it falls in, if so.
fn find(ranges: &[(u32, u32)], cp: u32) -> Option<(u32, u32)> {
    let i = ranges.partition_point(|&(_, hi)| hi < cp);
    ranges.get(i).copied().filter(|&(lo, _)| lo <= cp)
}

/// The value of a decimal digit of any script (what Python's `re` reads as `\d` and `int`
/// reads as a digit), None for other characters. The decimal digits come in runs of ten,
/// each from its zero.
pub(super) fn decimal_value(c: char) -> Option<u32> {
    find(decimal_digits(), c as u32).map(|(lo, _)| (c as u32 - lo) % 10)
}

/// Python's `str.isdigit` of one character: a decimal digit or another digit.
pub(super) fn is_python_digit(c: char) -> bool {
    decimal_value(c).is_some() || find(NON_DECIMAL_DIGITS, c as u32).is_some()
}
