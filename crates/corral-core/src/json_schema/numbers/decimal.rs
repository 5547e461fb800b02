//! Exact decimal numbers, as a JSON document writes them: a sign, significant digits and
//! a power of ten. Schema bounds (`minimum: 0.1`, `maximum: 1e308`) and `multipleOf`
//! steps are read exactly, never through a float.

use std::cmp::Ordering;
use std::fmt;

/// An exact decimal number: `±digits × 10^exponent`.
///
/// The form is canonical (no leading or trailing zero digit; zero has no digits and no
/// sign), so two values are equal exactly when they are the same number: `1.50`, `15e-1`
/// and `1.5` are one value, and `-0` is `0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    /// Significant ASCII digits, neither starting nor ending with `0`; empty for zero.
    digits: String,
    exponent: i64,
}

/// The digits of `text` (ASCII digits only) with what they are worth, canonical.
fn canonical(negative: bool, digits: &str, exponent: i64) -> Option<Decimal> {
    let digits = digits.trim_start_matches('0');
    let kept = digits.trim_end_matches('0');
    if kept.is_empty() {
        return Some(Decimal::zero());
    }
    let exponent = exponent.checked_add((digits.len() - kept.len()) as i64)?;
    Some(Decimal { negative, digits: kept.to_string(), exponent })
}

impl Decimal {
    /// Zero.
    pub fn zero() -> Decimal {
        Decimal { negative: false, digits: String::new(), exponent: 0 }
    }

    /// Reads JSON number text (RFC 8259: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    /// None when `text` is not one, or when its exponent does not fit an `i64` (no bound
    /// that far could be built: its digits alone would pass every limit).
    pub fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int, mut rest) = rest.split_at(int_len);
        if int.is_empty() || (int.len() > 1 && int.starts_with('0')) {
            return None;
        }
        let mut frac = "";
        if let Some(r) = rest.strip_prefix('.') {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            (frac, rest) = r.split_at(n);
        }
        let mut exponent: i64 = 0;
        if let Some(r) = rest.strip_prefix(['e', 'E']) {
            let (minus, r) = match r.as_bytes().first() {
                Some(b'-') => (true, &r[1..]),
                Some(b'+') => (false, &r[1..]),
                _ => (false, r),
            };
            if r.is_empty() || !r.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            for b in r.bytes() {
                exponent = exponent.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
            }
            if minus {
                exponent = -exponent;
            }
            rest = "";
        }
        if !rest.is_empty() {
            return None;
        }
        let exponent = exponent.checked_sub(i64::try_from(frac.len()).ok()?)?;
        canonical(negative, &format!("{int}{frac}"), exponent)
    }

    /// The integer `value`.
    pub fn from_i64(value: i64) -> Decimal {
        canonical(value < 0, &value.unsigned_abs().to_string(), 0).unwrap_or_else(Decimal::zero)
    }

    /// Is it zero?
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Is it below zero? (Zero never is, however it was written.)
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Is it a whole number?
    pub fn is_integer(&self) -> bool {
        self.exponent >= 0 || self.is_zero()
    }

    /// The significant digits (no leading or trailing zero; empty for zero).
    pub fn significant_digits(&self) -> &str {
        &self.digits
    }

    /// The power of ten the significant digits are scaled by.
    pub fn exponent(&self) -> i64 {
        self.exponent
    }

    /// The absolute value.
    pub fn abs(&self) -> Decimal {
        Decimal { negative: false, ..self.clone() }
    }

    /// The opposite number.
    pub fn negated(&self) -> Decimal {
        Decimal { negative: !self.negative && !self.is_zero(), ..self.clone() }
    }

    /// Position of the leading digit: `|self|` lies in `[10^(p-1), 10^p)`. (Zero: 0.)
    fn magnitude(&self) -> i128 {
        self.digits.len() as i128 + i128::from(self.exponent)
    }

    /// How many digits the plain spelling of `|self|` has: the integer digits (at least
    /// one) and the fraction digits up to the last nonzero one. The work (and the
    /// automaton) of a bound grows with it.
    pub fn digit_span(&self) -> u64 {
        let len = self.digits.len() as i128;
        let span = match self.exponent {
            _ if self.is_zero() => 1,
            e if e >= 0 => len + i128::from(e),
            e if -i128::from(e) >= len => 1 - i128::from(e),
            _ => len,
        };
        u64::try_from(span).unwrap_or(u64::MAX)
    }

    /// The integer digits (`"0"` below one) and the fraction digits (without trailing
    /// zeros) of `|self|`, as `format(abs(d), "f")` spells them. Writes
    /// [`Decimal::digit_span`] digits: callers bound that first.
    pub fn split(&self) -> (String, String) {
        let len = self.digits.len() as i128;
        let e = i128::from(self.exponent);
        if self.is_zero() {
            (String::from("0"), String::new())
        } else if e >= 0 {
            (format!("{}{}", self.digits, "0".repeat(e as usize)), String::new())
        } else if -e >= len {
            (String::from("0"), format!("{}{}", "0".repeat((-e - len) as usize), self.digits))
        } else {
            let cut = (len + e) as usize;
            (self.digits[..cut].to_string(), self.digits[cut..].to_string())
        }
    }

    /// The greatest integer not above `self`.
    pub fn floor(&self) -> Decimal {
        if self.is_integer() {
            return self.clone();
        }
        // The integer part of a non-integer has fewer digits than its significand.
        let kept = usize::try_from(self.magnitude().max(0)).unwrap_or(0);
        let truncated = canonical(self.negative, &self.digits[..kept], 0).unwrap_or_else(Decimal::zero);
        if !self.negative {
            return truncated;
        }
        let (int, _) = truncated.split();
        canonical(true, &increment(&int), 0).unwrap_or_else(Decimal::zero)
    }

    /// The least integer not below `self`.
    pub fn ceil(&self) -> Decimal {
        self.negated().floor().negated()
    }
}

/// The decimal digits of `digits + 1` (`digits` are ASCII digits).
pub(super) fn increment(digits: &str) -> String {
    let mut out: Vec<u8> = digits.bytes().collect();
    for b in out.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(out).unwrap_or_default();
        }
    }
    out.insert(0, b'1');
    String::from_utf8(out).unwrap_or_default()
}

/// The decimal digits of `digits - 1` for a positive canonical `digits` (no leading zero).
pub(super) fn decrement(digits: &str) -> String {
    let mut out: Vec<u8> = digits.bytes().collect();
    for b in out.iter_mut().rev() {
        if *b == b'0' {
            *b = b'9';
        } else {
            *b -= 1;
            break;
        }
    }
    let text = String::from_utf8(out).unwrap_or_default();
    match text.trim_start_matches('0') {
        "" => String::from("0"),
        t => t.to_string(),
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        let sign = |d: &Decimal| {
            if d.is_zero() {
                0
            } else if d.negative {
                -1
            } else {
                1
            }
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal if sign(self) == 0 => Ordering::Equal,
            Ordering::Equal => {
                // Same sign: compare magnitudes (leading digit's place, then the digits;
                // with no trailing zeros, a longer run of equal digits is the larger).
                let by_size = self.magnitude().cmp(&other.magnitude()).then_with(|| self.digits.cmp(&other.digits));
                if self.negative {
                    by_size.reverse()
                } else {
                    by_size
                }
            }
            unequal => unequal,
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Plain spelling when it is short (`12.5`, `-0.001`), else scientific (`1.5e-300`).
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.negative { "-" } else { "" };
        if self.digit_span() <= 30 {
            let (int, frac) = self.split();
            return match frac.is_empty() {
                true => write!(f, "{sign}{int}"),
                false => write!(f, "{sign}{int}.{frac}"),
            };
        }
        let (lead, rest) = self.digits.split_at(1);
        let point = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        write!(f, "{sign}{lead}{point}e{}", self.magnitude() - 1)
    }
}
