//! `multipleOf`: the residue automaton of a step, over the characters of plain decimals.
//!
//! With step = m·10⁻ᵉ (m an integer, e ≥ 0), x is a multiple iff the integer formed by x's
//! integer digits and its first e fraction digits is divisible by m and every later
//! fraction digit is 0. The state is that integer's residue mod m and how many fraction
//! digits were read, so the automaton has about m·(e+2) states; no arbitrary-size
//! arithmetic is needed, since m is bounded by `Limits::max_multiple_states` before any
//! state is made, and the powers of ten are taken mod m.

use super::decimal::Decimal;
use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::limits::Limits;

/// A state of the residue automaton.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Residue {
    /// In the integer part, with this residue.
    Int(u64),
    /// After `k < e` fraction digits, with this residue.
    Frac(u64, u64),
    /// After `e` fraction digits with residue 0: only zeros may follow.
    Zeros,
}

/// (m, e) of `step` = m·10⁻ᵉ, when the automaton has at most `max_states` states
/// (counted as m·(e+2) + 2); None past that.
fn step_parts(step: &Decimal, max_states: usize) -> Option<(u64, u64)> {
    let digits: u128 = step.significant_digits().parse().ok()?;
    let (m, e) = match step.exponent() {
        x if x < 0 => (digits, u128::from(x.unsigned_abs())),
        x => (digits.checked_mul(10u128.checked_pow(u32::try_from(x).ok()?)?)?, 0),
    };
    let states = m.checked_mul(e.checked_add(2)?)?.checked_add(2)?;
    (states <= max_states as u128).then_some((u64::try_from(m).ok()?, u64::try_from(e).ok()?))
}

/// The residue automaton of `multipleOf: step` (`step > 0`) over the characters `-0-9.`:
/// it accepts the plain decimals (as other terms spell them) whose value is an integer
/// multiple of `step`. It reads no syntax of its own (a `-` may come again after a
/// multiple, a bare `.` may end one with no fraction to read), so it is meant to be
/// intersected with a number language.
///
/// `Error::LimitExceeded` naming `max_multiple_states` when it needs more states than
/// `limits.max_multiple_states` (about m·(e+2) for a step m·10⁻ᵉ);
/// `Error::InvalidArgument` for a step that is not positive.
pub fn multiple_dfa(step: &Decimal, limits: &Limits) -> Result<Dfa> {
    if step.is_negative() || step.is_zero() {
        return Err(Error::InvalidArgument(format!("multipleOf must be greater than 0, got {step}")));
    }
    let Some((m, e)) = step_parts(step, limits.max_multiple_states) else {
        return Err(Error::LimitExceeded {
            limit: "max_multiple_states",
            value: limits.max_multiple_states,
            context: format!("the residue automaton of multipleOf {step} (m·(e+2) states for a step m·10^-e)"),
        });
    };
    // Residues in u128: m may be up to `max_multiple_states`, and r·10 must not overflow.
    let m = u128::from(m);
    let times_ten_plus = |r: u64, d: u64| ((u128::from(r) * 10 + u128::from(d)) % m) as u64;
    // pow[j] = 10^j mod m, for j = 0..=e.
    let mut pow = Vec::with_capacity(e as usize + 1);
    let mut p = 1 % m;
    for _ in 0..=e {
        pow.push(p);
        p = p * 10 % m;
    }
    let divides = |r: u64, j: u64| u128::from(r) * pow[j as usize] % m == 0;
    let step_of = |s: Residue, byte: u8| -> Option<Residue> {
        let digit = byte.is_ascii_digit().then(|| u64::from(byte - b'0'));
        match (s, byte, digit) {
            (Residue::Int(0), b'-', _) => Some(Residue::Int(0)), // a sign changes no residue
            (Residue::Int(r), _, Some(d)) => Some(Residue::Int(times_ten_plus(r, d))),
            (Residue::Int(0), b'.', _) if e == 0 => Some(Residue::Zeros),
            (Residue::Int(r), b'.', _) if e > 0 => Some(Residue::Frac(0, r)),
            (Residue::Frac(k, r), _, Some(d)) => {
                let next = times_ten_plus(r, d);
                match k + 1 < e {
                    true => Some(Residue::Frac(k + 1, next)),
                    false => (next == 0).then_some(Residue::Zeros),
                }
            }
            (Residue::Zeros, b'0', _) => Some(Residue::Zeros),
            _ => None,
        }
    };
    let accepts = |s: Residue| match s {
        Residue::Int(r) => divides(r, e),
        Residue::Frac(k, r) => k > 0 && divides(r, e - k),
        Residue::Zeros => true,
    };
    // One class per character read (`-`, `.`, each digit), one for every other byte.
    let mut class_of = [0u8; 256];
    for (i, b) in b"-.0123456789".iter().enumerate() {
        class_of[*b as usize] = i as u8 + 1;
    }
    Dfa::from_automaton(Residue::Int(0), &class_of, step_of, accepts, limits, &format!("multipleOf {step}"))
}
