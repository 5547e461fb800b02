//! Small constructors of regex HIR over the characters of JSON numbers, and the checks a
//! built HIR passes before it is handed on (its nesting, its digit count).

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Repetition};

use super::decimal::Decimal;
use crate::error::{Error, Result};
use crate::limits::Limits;

/// The literal `text`.
pub(super) fn lit(text: &str) -> Hir {
    Hir::literal(text.as_bytes())
}

/// One character of `ranges` (inclusive ASCII ranges).
pub(super) fn chars(ranges: &[(char, char)]) -> Hir {
    Hir::class(Class::Unicode(ClassUnicode::new(ranges.iter().map(|&(a, b)| ClassUnicodeRange::new(a, b)))))
}

/// One digit from `lo` to `hi` (values 0-9).
pub(super) fn digit_range(lo: u8, hi: u8) -> Hir {
    chars(&[(char::from(b'0' + lo), char::from(b'0' + hi))])
}

/// Any one digit.
pub(super) fn digit() -> Hir {
    digit_range(0, 9)
}

/// A nonzero digit.
pub(super) fn nonzero() -> Hir {
    digit_range(1, 9)
}

/// `sub` repeated `min` to `max` times (None: no upper bound), greedy.
pub(super) fn rep(sub: Hir, min: u32, max: Option<u32>) -> Hir {
    Hir::repetition(Repetition { min, max, greedy: true, sub: Box::new(sub) })
}

/// `sub?`.
pub(super) fn opt(sub: Hir) -> Hir {
    rep(sub, 0, Some(1))
}

/// `sub*`.
pub(super) fn star(sub: Hir) -> Hir {
    rep(sub, 0, None)
}

/// `sub+`.
pub(super) fn plus(sub: Hir) -> Hir {
    rep(sub, 1, None)
}

/// Exactly `n` digits (`""`, `[0-9]`, `[0-9]{n}`).
pub(super) fn digits(n: u32) -> Hir {
    match n {
        0 => Hir::empty(),
        1 => digit(),
        _ => rep(digit(), n, Some(n)),
    }
}

/// The concatenation of `items`.
pub(super) fn cat(items: Vec<Hir>) -> Hir {
    Hir::concat(items)
}

/// The union of the present `items`; None when none is.
pub(super) fn alt(items: Vec<Option<Hir>>) -> Option<Hir> {
    let items: Vec<Hir> = items.into_iter().flatten().collect();
    (!items.is_empty()).then(|| Hir::alternation(items))
}

/// `-?`.
pub(super) fn minus_opt() -> Hir {
    opt(lit("-"))
}

/// An ASCII digit string's characters as values 0-9.
pub(super) fn values(digits: &str) -> impl DoubleEndedIterator<Item = u8> + ExactSizeIterator + '_ {
    digits.bytes().map(|b| b - b'0')
}

/// A count of digit positions as a repetition count (bounded by [`check_span`] first).
pub(super) fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The most digit positions a number's language may have: every position is at least one
/// automaton state, so a bound spelled with more digits than `Limits::max_dfa_states`
/// could never be built.
fn max_span(limits: &Limits) -> u64 {
    (limits.max_dfa_states as u64).min(u64::from(u32::MAX))
}

/// Fails when the plain spelling of `value` has more digits than any automaton of its
/// language could hold (see [`max_span`]).
pub(super) fn check_span(value: &Decimal, what: &dyn Fn() -> String, limits: &Limits) -> Result<()> {
    if value.digit_span() > max_span(limits) {
        return Err(Error::LimitExceeded {
            limit: "max_dfa_states",
            value: limits.max_dfa_states,
            context: format!("{}: {value} is {} digits written out, one automaton state each", what(), value.digit_span()),
        });
    }
    Ok(())
}

/// Fails when `hir` nests deeper than `Limits::regex_nest_limit`, counted as for a parsed
/// pattern (each concatenation, alternation, repetition and group is a level): the
/// automaton builders read a HIR recursively.
pub(super) fn check_nesting(hir: &Hir, what: &dyn Fn() -> String, limits: &Limits) -> Result<()> {
    let mut stack: Vec<(&Hir, u32)> = vec![(hir, 0)];
    while let Some((node, depth)) = stack.pop() {
        crate::util::interrupt::check()?;
        let (children, deeper): (&[Hir], bool) = match node.kind() {
            HirKind::Concat(items) => (items, true),
            HirKind::Alternation(items) => (items, true),
            HirKind::Repetition(r) => (std::slice::from_ref(&*r.sub), true),
            HirKind::Capture(c) => (std::slice::from_ref(&*c.sub), true),
            _ => (&[], false),
        };
        let depth = depth + u32::from(deeper);
        if depth > limits.regex_nest_limit {
            return Err(Error::LimitExceeded {
                limit: "regex_nest_limit",
                value: limits.regex_nest_limit as usize,
                context: format!("the nesting depth of {}", what()),
            });
        }
        stack.extend(children.iter().map(|c| (c, depth)));
    }
    Ok(())
}
