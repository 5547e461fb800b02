//! Numbers in a range, digit by digit: canonical integers between two bounds, and plain
//! decimals above or below one (inclusive or strict).
//!
//! Every language is built from the bound's digit strings: a number of another length
//! compares by its length, one of the same length by its first digit that differs. The
//! constructions loop from the last digit to the first (no recursion over digits), so a
//! long bound costs a long loop, not a deep stack; the HIR they make nests once per digit
//! that has an alternative, which [`check_nesting`] bounds.

use std::cmp::Ordering;

use regex_syntax::hir::Hir;

use super::decimal::{decrement, increment, Decimal};
use super::hir::{
    alt, cat, check_nesting, check_span, count, digit, digit_range, digits, lit, nonzero, opt, plus, rep, star, values,
};
use crate::error::Result;
use crate::limits::Limits;
use crate::util::interrupt;

/// `first`, or `first|second`.
fn either(first: Hir, second: Option<Hir>) -> Hir {
    alt(vec![Some(first), second]).unwrap_or_else(Hir::fail)
}

/// The one-digit literal at `i` of `s`.
fn at(s: &str, i: usize) -> Hir {
    lit(&s[i..i + 1])
}

/// Digit strings of length `s.len()` that are `>= s`. Trailing zeros of `s` bound
/// nothing (`x >= p00` exactly when `x`'s first digits are `>= p`): they become one
/// repetition, not a nested alternative each (a bound such as `1.79769e308` has 303).
fn suffix_ge(s: &str) -> Result<Hir> {
    let p = s.trim_end_matches('0');
    let n = p.len();
    let mut acc = Hir::empty();
    for (i, d) in values(p).enumerate().rev() {
        interrupt::check()?;
        let above = (d < 9).then(|| cat(vec![digit_range(d + 1, 9), digits(count(n - 1 - i))]));
        acc = either(cat(vec![at(p, i), acc]), above);
    }
    Ok(cat(vec![acc, digits(count(s.len() - n))]))
}

/// Digit strings of length `s.len()` that are `<= s`. Trailing nines of `s` bound
/// nothing, as trailing zeros do in [`suffix_ge`].
fn suffix_le(s: &str) -> Result<Hir> {
    let p = s.trim_end_matches('9');
    let n = p.len();
    let mut acc = Hir::empty();
    for (i, d) in values(p).enumerate().rev() {
        interrupt::check()?;
        let below = (d > 0).then(|| cat(vec![digit_range(0, d - 1), digits(count(n - 1 - i))]));
        acc = either(cat(vec![at(p, i), acc]), below);
    }
    Ok(cat(vec![acc, digits(count(s.len() - n))]))
}

/// Digit strings of one length between `lo` and `hi` (inclusive; `lo <= hi`).
fn same_length(lo: &str, hi: &str) -> Result<Hir> {
    let common = lo.bytes().zip(hi.bytes()).take_while(|(a, b)| a == b).count();
    if common == lo.len() {
        return Ok(lit(lo));
    }
    let (lo_rest, hi_rest) = (&lo[common + 1..], &hi[common + 1..]);
    let (a, b) = (lo.as_bytes()[common] - b'0', hi.as_bytes()[common] - b'0');
    let tail = count(lo_rest.len());
    let body = if lo_rest.bytes().all(|c| c == b'0') && hi_rest.bytes().all(|c| c == b'9') {
        cat(vec![digit_range(a, b), digits(tail)])
    } else {
        let middle = (b - a >= 2).then(|| cat(vec![digit_range(a + 1, b - 1), digits(tail)]));
        let low = cat(vec![at(lo, common), suffix_ge(lo_rest)?]);
        let high = cat(vec![at(hi, common), suffix_le(hi_rest)?]);
        alt(vec![Some(low), middle, Some(high)]).unwrap_or_else(Hir::fail)
    };
    Ok(cat(vec![lit(&lo[..common]), body]))
}

/// Compares canonical digit strings (no leading zero) by value.
fn cmp_digits(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Canonical non-negative integers (no leading zero) from `lo` to `hi` (None: no upper
/// bound), both canonical digit strings; None when there is none.
fn uint_digits(lo: &str, hi: Option<&str>) -> Result<Option<Hir>> {
    if hi.is_some_and(|h| cmp_digits(h, lo) == Ordering::Less) {
        return Ok(None);
    }
    let mut parts = Vec::new();
    let mut lo = lo.to_string();
    if lo == "0" {
        if hi == Some("0") {
            return Ok(Some(lit("0")));
        }
        parts.push(Some(lit("0")));
        lo = String::from("1");
    }
    let low_len = lo.len();
    match hi {
        None => {
            parts.push(Some(same_length(&lo, &"9".repeat(low_len))?));
            parts.push(Some(cat(vec![nonzero(), rep(digit(), count(low_len), None)])));
        }
        Some(hi) if hi.len() == low_len => parts.push(Some(same_length(&lo, hi)?)),
        Some(hi) => {
            parts.push(Some(same_length(&lo, &"9".repeat(low_len))?));
            // Every length strictly between: any digits after a nonzero one.
            if hi.len() - low_len >= 2 {
                parts.push(Some(cat(vec![nonzero(), rep(digit(), count(low_len), Some(count(hi.len() - 2)))])));
            }
            parts.push(Some(same_length(&format!("1{}", "0".repeat(hi.len() - 1)), hi)?));
        }
    }
    Ok(alt(parts))
}

/// The integer digits of `|value|` (an integer).
fn magnitude(value: &Decimal) -> String {
    value.split().0
}

/// Canonical non-negative integers (no leading zeros) `x` with `lo <= x <= hi` (None: no
/// upper bound); None when there is none. Non-integral bounds bound as they are (the
/// integers from `ceil(lo)` to `floor(hi)`), and a negative `lo` counts as 0.
pub fn uint_range(lo: &Decimal, hi: Option<&Decimal>, limits: &Limits) -> Result<Option<Hir>> {
    let lo = if lo.is_negative() { Decimal::zero() } else { lo.clone() };
    int_range(Some(&lo), hi, limits)
}

/// Canonical JSON integers (no leading zeros, no `-0`) `x` with `lo <= x <= hi`, either
/// side open (None); None when there is none. Non-integral bounds bound as they are: the
/// integers from `ceil(lo)` to `floor(hi)`.
pub fn int_range(lo: Option<&Decimal>, hi: Option<&Decimal>, limits: &Limits) -> Result<Option<Hir>> {
    let what = || format!("the integers from {} to {}", show(lo), show(hi));
    for v in [lo, hi].into_iter().flatten() {
        check_span(v, &what, limits)?;
    }
    let (lo, hi) = (lo.map(Decimal::ceil), hi.map(Decimal::floor));
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            return Ok(None);
        }
    }
    let mut parts = Vec::new();
    if lo.as_ref().is_none_or(Decimal::is_negative) {
        // Negatives: magnitudes from |hi| (or 1) to |lo| (or no bound).
        let from = hi.as_ref().filter(|h| h.is_negative()).map_or_else(|| String::from("1"), magnitude);
        let to = lo.as_ref().map(magnitude);
        parts.push(uint_digits(&from, to.as_deref())?.map(|r| cat(vec![lit("-"), r])));
    }
    if hi.as_ref().is_none_or(|h| !h.is_negative()) {
        let from = lo.as_ref().filter(|l| !l.is_negative()).map_or_else(|| String::from("0"), magnitude);
        parts.push(uint_digits(&from, hi.as_ref().map(magnitude).as_deref())?);
    }
    let out = alt(parts);
    if let Some(h) = &out {
        check_nesting(h, &what, limits)?;
    }
    Ok(out)
}

/// A bound for messages (`unbounded` when open).
fn show(bound: Option<&Decimal>) -> String {
    bound.map_or_else(|| String::from("unbounded"), Decimal::to_string)
}

/// `\.[0-9]+`.
fn any_fraction() -> Hir {
    cat(vec![lit("."), plus(digit())])
}

/// `(?:0|[1-9][0-9]*)(?:\.[0-9]+)?`: every unsigned plain decimal.
fn unsigned_plain() -> Hir {
    cat(vec![super::canonical::uint(), opt(any_fraction())])
}

/// `[0-9]*[1-9][0-9]*`: a digit string that is not all zeros.
fn not_all_zeros() -> Hir {
    cat(vec![star(digit()), nonzero(), star(digit())])
}

/// Fraction digit strings `F` (nonempty) with `0.F >= 0.b` (`>` if `strict`).
fn frac_ge(b: &str, strict: bool) -> Result<Hir> {
    if b.is_empty() {
        return Ok(if strict { not_all_zeros() } else { plus(digit()) });
    }
    let mut acc = if strict { not_all_zeros() } else { star(digit()) };
    for (i, d) in values(b).enumerate().rev() {
        interrupt::check()?;
        let above = (d < 9).then(|| cat(vec![digit_range(d + 1, 9), star(digit())]));
        acc = either(cat(vec![at(b, i), acc]), above);
    }
    Ok(acc)
}

/// Fraction digit strings `F` (nonempty) with `0.F <= 0.b` (`<` if `strict`); None if
/// there is none.
fn frac_le(b: &str, strict: bool) -> Result<Option<Hir>> {
    let mut acc = (!strict).then(|| plus(lit("0")));
    for (i, d) in values(b).enumerate().rev() {
        interrupt::check()?;
        // Stopping right after this digit is below `b` when more digits follow in `b`.
        let can_stop = i + 1 < b.len() || !strict;
        let below = (d > 0).then(|| cat(vec![digit_range(0, d - 1), star(digit())]));
        let same = match (acc, can_stop) {
            (Some(rest), true) => Some(cat(vec![at(b, i), opt(rest)])),
            (Some(rest), false) => Some(cat(vec![at(b, i), rest])),
            (None, true) => Some(at(b, i)),
            (None, false) => None,
        };
        acc = alt(vec![below, same]);
    }
    Ok(acc)
}

/// Unsigned plain decimals `x >= |a|` (`>` if `strict`).
fn abs_ge(a: &Decimal, strict: bool) -> Result<Hir> {
    let (int, frac) = a.split();
    let big = uint_digits(&increment(&int), None)?.unwrap_or_else(Hir::fail);
    let tail = frac_ge(&frac, strict)?;
    let point_tail = cat(vec![lit("."), tail]);
    let same = match (frac.is_empty(), strict) {
        (false, _) | (true, true) => cat(vec![lit(&int), point_tail]),
        (true, false) => cat(vec![lit(&int), opt(point_tail)]),
    };
    Ok(either(cat(vec![big, opt(any_fraction())]), Some(same)))
}

/// Unsigned plain decimals `x <= |b|` (`<` if `strict`); None if there is none.
fn abs_le(b: &Decimal, strict: bool) -> Result<Option<Hir>> {
    let (int, frac) = b.split();
    let mut parts = Vec::new();
    if int != "0" {
        let below = uint_digits("0", Some(&decrement(&int)))?.unwrap_or_else(Hir::fail);
        parts.push(Some(cat(vec![below, opt(any_fraction())])));
    }
    if !frac.is_empty() {
        // No fraction (x = int) is below int.frac; a fraction must be <= frac.
        let tail = frac_le(&frac, strict)?;
        parts.push(Some(match tail {
            Some(t) => cat(vec![lit(&int), opt(cat(vec![lit("."), t]))]),
            None => lit(&int),
        }));
    } else if !strict {
        parts.push(Some(cat(vec![lit(&int), opt(cat(vec![lit("."), plus(lit("0"))]))])));
    }
    Ok(alt(parts))
}

/// Plain JSON numbers (no exponent) `x >= a` (`x > a` if `strict`).
pub fn decimal_ge(a: &Decimal, strict: bool, limits: &Limits) -> Result<Hir> {
    let what = || format!("the numbers {} {a}", if strict { ">" } else { ">=" });
    check_span(a, &what, limits)?;
    let out = if !a.is_negative() {
        if a.is_zero() && !strict {
            unsigned_plain()
        } else {
            abs_ge(a, strict)?
        }
    } else {
        // Every non-negative number, and negatives with |x| <= |a|.
        let negative = abs_le(a, strict)?.map(|n| cat(vec![lit("-"), n]));
        either(unsigned_plain(), negative)
    };
    check_nesting(&out, &what, limits)?;
    Ok(out)
}

/// Plain JSON numbers (no exponent) `x <= b` (`x < b` if `strict`).
pub fn decimal_le(b: &Decimal, strict: bool, limits: &Limits) -> Result<Hir> {
    let what = || format!("the numbers {} {b}", if strict { "<" } else { "<=" });
    check_span(b, &what, limits)?;
    let out = if b.is_negative() || (b.is_zero() && strict) {
        cat(vec![lit("-"), abs_ge(b, strict)?])
    } else {
        // Negative zero spellings are included: 0 <= b here.
        let negatives = cat(vec![lit("-"), unsigned_plain()]);
        alt(vec![abs_le(b, strict)?, Some(negatives)]).unwrap_or_else(Hir::fail)
    };
    check_nesting(&out, &what, limits)?;
    Ok(out)
}
