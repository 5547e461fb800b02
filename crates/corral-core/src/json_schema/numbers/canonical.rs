//! The fixed languages of JSON numbers (any number, plain decimals, integers) and the
//! canonical spellings: those `json.dumps` writes for the value `json.loads` reads from
//! them, restricted to spellings proven to round-trip; and the spellings of one value.

use regex_syntax::hir::Hir;

use super::decimal::Decimal;
use super::hir::{alt, cat, chars, check_nesting, check_span, digit, digit_range, lit, minus_opt, nonzero, opt, plus, rep, star};
use crate::error::Result;
use crate::limits::Limits;

/// `(?:0|[1-9][0-9]*)`: a canonical unsigned integer.
pub fn uint() -> Hir {
    alt(vec![Some(lit("0")), Some(cat(vec![nonzero(), star(digit())]))]).unwrap_or_else(Hir::fail)
}

/// `-?(?:0|[1-9][0-9]*)`: a JSON integer (`-0` included).
pub fn integer() -> Hir {
    cat(vec![minus_opt(), uint()])
}

/// `\.[0-9]+`.
fn fraction() -> Hir {
    cat(vec![lit("."), plus(digit())])
}

/// `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?`: a JSON number without an exponent.
pub fn plain_number() -> Hir {
    cat(vec![integer(), opt(fraction())])
}

/// `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`: any JSON number (RFC 8259).
pub fn number() -> Hir {
    let exponent = cat(vec![chars(&[('E', 'E'), ('e', 'e')]), opt(chars(&[('+', '+'), ('-', '-')])), plus(digit())]);
    cat(vec![plain_number(), opt(exponent)])
}

/// `(?:0|-?[1-9][0-9]*)`: the integers as `json.dumps` writes them (no `-0`).
pub fn canonical_integer() -> Hir {
    alt(vec![Some(lit("0")), Some(cat(vec![minus_opt(), nonzero(), star(digit())]))]).unwrap_or_else(Hir::fail)
}

/// `[0-9]{lo,hi}`.
fn digits_between(lo: u32, hi: u32) -> Hir {
    rep(digit(), lo, Some(hi))
}

/// Fixed-notation floats as `repr(float)` writes them (`1e-4 <= |x| < 1e16`, and `0.0`),
/// with at most 15 significant digits (DBL_DIG): the double nearest such a decimal has it
/// as its shortest repr, so `json.dumps(json.loads(s)) == s`.
pub fn canonical_plain_float() -> Hir {
    // x >= 1, integral: up to 16 integer digits, at most 15 of them significant.
    let integral = cat(vec![
        nonzero(),
        alt(vec![Some(digits_between(0, 14)), Some(cat(vec![rep(digit(), 14, Some(14)), lit("0")]))]).unwrap_or_else(Hir::fail),
        lit(".0"),
    ]);
    // x >= 1 with a fraction ending in a nonzero digit: n integer digits, 15 - n more.
    let fractional = (1..=14u32)
        .map(|n| Some(cat(vec![nonzero(), rep(digit(), n - 1, Some(n - 1)), lit("."), digits_between(0, 14 - n), nonzero()])));
    // 1e-4 <= x < 1: up to three zeros, then at most 15 digits from a nonzero to a nonzero.
    let small = cat(vec![lit("0."), rep(lit("0"), 0, Some(3)), nonzero(), opt(cat(vec![digits_between(0, 13), nonzero()]))]);
    let mut forms = vec![Some(lit("0.0")), Some(integral)];
    forms.extend(fractional);
    forms.push(Some(small));
    cat(vec![minus_opt(), alt(forms).unwrap_or_else(Hir::fail)])
}

/// Floats as `repr(float)` writes them with an exponent (`d.ddde±XX`: the sign always,
/// two exponent digits at least), at most 15 significant digits, exponents -307..-5 and
/// 16..307: normal doubles, far from overflow, where 15 digits always survive.
pub fn canonical_exp_float() -> Hir {
    let up_to_307 = |two_digit: Hir| {
        alt(vec![
            Some(two_digit),
            Some(cat(vec![digit_range(1, 2), rep(digit(), 2, Some(2))])),
            Some(cat(vec![lit("30"), digit_range(0, 7)])),
        ])
        .unwrap_or_else(Hir::fail)
    };
    let negative = up_to_307(
        alt(vec![Some(cat(vec![lit("0"), digit_range(5, 9)])), Some(cat(vec![nonzero(), digit()]))]).unwrap_or_else(Hir::fail),
    );
    let positive = up_to_307(
        alt(vec![Some(cat(vec![lit("1"), digit_range(6, 9)])), Some(cat(vec![digit_range(2, 9), digit()]))])
            .unwrap_or_else(Hir::fail),
    );
    let exponent = alt(vec![Some(cat(vec![lit("-"), negative])), Some(cat(vec![lit("+"), positive]))]).unwrap_or_else(Hir::fail);
    cat(vec![minus_opt(), nonzero(), opt(cat(vec![lit("."), digits_between(0, 13), nonzero()])), lit("e"), exponent])
}

/// The canonical numbers without an exponent: what a bounded number or a multiple (plain
/// decimals) can be.
pub fn canonical_plain_number() -> Hir {
    alt(vec![Some(canonical_integer()), Some(canonical_plain_float())]).unwrap_or_else(Hir::fail)
}

/// Every canonical number: integers, and floats with or without an exponent.
pub fn canonical_number() -> Hir {
    alt(vec![Some(canonical_integer()), Some(canonical_plain_float()), Some(canonical_exp_float())]).unwrap_or_else(Hir::fail)
}

/// `-?[1-9](?:\.[0-9]+)?e\+[0-9]+`: canonical floats with a positive exponent (integers
/// when they have at most 15 digits).
pub fn canonical_exp_integral() -> Hir {
    cat(vec![minus_opt(), nonzero(), opt(fraction()), lit("e+"), plus(digit())])
}

/// The plain spellings of the one number `value` (`3`, `3.0`, `3.50`, ... and `-0.0`
/// for zero): its digits, then any number of trailing zeros in a fraction.
pub fn canonical_forms(value: &Decimal, limits: &Limits) -> Result<Hir> {
    let what = || format!("the spellings of {value}");
    check_span(value, &what, limits)?;
    let zeros = cat(vec![lit("."), plus(lit("0"))]);
    if value.is_zero() {
        return Ok(cat(vec![minus_opt(), lit("0"), opt(zeros)]));
    }
    let (int, frac) = value.split();
    let sign = if value.is_negative() { "-" } else { "" };
    let out = if frac.is_empty() {
        cat(vec![lit(&format!("{sign}{int}")), opt(zeros)])
    } else {
        cat(vec![lit(&format!("{sign}{int}.{frac}")), star(lit("0"))])
    };
    check_nesting(&out, &what, limits)?;
    Ok(out)
}
