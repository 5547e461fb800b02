//! Whether a given JSON value satisfies a shape: `enum` members against the rest of their
//! shape, property names against `propertyNames`, named keys against `patternProperties`.
//! Numbers are compared and divided exactly (as decimals, never as floats); strings are
//! matched by automata of their decoded characters, built once per translation.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::ecma;
use super::super::formats;
use super::super::numbers::Decimal;
use super::scalars::pattern_error;
use super::shape::{Kinds, Shape, Sub};
use super::{value, Translator, REGEX_FORMAT};
use crate::error::{Error, Result};

impl<'a> Translator<'a> {
    /// Does `value` satisfy `shape`? (`member`: it is one of the shape's own `enum`
    /// members, so membership needs no test.)
    pub(crate) fn check(&mut self, value: &Value, shape: &Shape<'a>, member: bool) -> Result<bool> {
        let mut kind = value::kind_of(value);
        if kind == Kinds::INT && shape.int_without_fraction && value::written_as_float(value) {
            kind = Kinds::FRAC; // draft 4: 1.0 is not an integer
        }
        if !shape.kinds.has(kind) || !listed_ok(value, shape, member) {
            return Ok(false);
        }
        match value {
            Value::Number(n) => Ok(number_ok(&value::decimal(n), shape)),
            Value::String(s) => self.string_ok(s, shape),
            Value::Array(items) => self.array_ok(items, shape),
            Value::Object(map) => self.object_ok(map, shape),
            _ => Ok(true),
        }
    }

    /// Does `value` satisfy every one of `subs`?
    pub(crate) fn valid(&mut self, value: &Value, subs: &[Sub<'a>]) -> Result<bool> {
        for shape in self.shapes(subs)? {
            if self.check(value, &shape, false)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Does ECMAScript `pattern` find a match in string `s`? (`pointer`: the keyword's,
    /// for errors.)
    pub(crate) fn pattern_matches(&mut self, pattern: &str, pointer: &str, s: &str) -> Result<bool> {
        if let Some(look) = ecma::leading_lookaheads(pattern) {
            // `^(?=A)(?!B)R` (see `ecma::leading_lookaheads`).
            for (positive, p) in &look.checks {
                if self.pattern_matches(p, pointer, s)? != *positive {
                    return Ok(false);
                }
            }
            return self.pattern_matches(&look.rest, pointer, s);
        }
        let matcher = match self.scalars.pattern_matchers.get(pattern) {
            Some(m) => m.clone(),
            None => {
                let language = ecma::search_language(pattern, &self.limits).map_err(|e| pattern_error(e, pattern, pointer))?;
                let m = Arc::new(language.value_matcher(&self.limits)?);
                self.scalars.pattern_matchers.insert(pattern.to_string(), m.clone());
                m
            }
        };
        Ok(matcher.is_match(s))
    }

    /// Is string `s` of format `name`?
    fn format_matches(&mut self, name: &str, s: &str) -> Result<bool> {
        if name == REGEX_FORMAT {
            return Ok(crate::grammar::regex_text::is_pattern(s));
        }
        let dfa = match self.scalars.format_matchers.get(name) {
            Some(d) => d.clone(),
            None => {
                let Some(d) = formats::value_dfa(name, &self.limits)? else {
                    return Err(Error::Internal(format!("format {name:?} has no language")));
                };
                let d = Arc::new(d);
                self.scalars.format_matchers.insert(name.to_string(), d.clone());
                d
            }
        };
        Ok(dfa.matches(s.as_bytes()))
    }

    fn string_ok(&mut self, s: &str, shape: &Shape<'a>) -> Result<bool> {
        let n = s.chars().count() as u64;
        if n < shape.min_len || shape.max_len.is_some_and(|m| n > m) {
            return Ok(false);
        }
        for (src, pointer) in &shape.patterns {
            if !self.pattern_matches(src, pointer, s)? {
                return Ok(false);
            }
        }
        for (src, pointer) in &shape.neg_patterns {
            if self.pattern_matches(src, pointer, s)? {
                return Ok(false);
            }
        }
        for (name, _) in &shape.formats {
            if !self.format_matches(name, s)? {
                return Ok(false);
            }
        }
        for (name, _) in &shape.neg_formats {
            if self.format_matches(name, s)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn array_ok(&mut self, items: &[Value], shape: &Shape<'a>) -> Result<bool> {
        let n = items.len() as u64;
        if n < shape.min_items || shape.max_items.is_some_and(|m| n > m) {
            return Ok(false);
        }
        for (i, item) in items.iter().enumerate() {
            let subs = self.item_subs(shape, i);
            if !self.valid(item, &subs)? {
                return Ok(false);
            }
        }
        for (sub, min, max, from) in &shape.contains {
            let mut hits = 0u64;
            for item in items.iter().skip(usize::try_from(*from).unwrap_or(usize::MAX)) {
                if self.valid(item, std::slice::from_ref(sub))? {
                    hits += 1;
                }
            }
            if hits < *min || max.is_some_and(|m| hits > m) {
                return Ok(false);
            }
        }
        let repeated = || items.iter().enumerate().any(|(i, a)| items[..i].iter().any(|b| value::json_equal(a, b)));
        if shape.unique.is_some() && repeated() {
            return Ok(false);
        }
        if shape.duplicate.is_some() && !repeated() {
            return Ok(false);
        }
        Ok(true)
    }

    fn object_ok(&mut self, map: &Map<String, Value>, shape: &Shape<'a>) -> Result<bool> {
        let n = map.len() as u64;
        if n < shape.min_props || shape.max_props.is_some_and(|m| n > m) {
            return Ok(false);
        }
        if shape.required.iter().any(|k| !map.contains_key(k)) {
            return Ok(false);
        }
        for (k, v) in map {
            let Some(subs) = self.key_subs(k, shape)? else { return Ok(false) };
            if !self.valid(v, &subs)? {
                return Ok(false);
            }
        }
        // Each required member by a different key (a shape where one key meets two has
        // them joined into one): which keys meet which member, then an assignment.
        let mut meets: Vec<Vec<usize>> = Vec::with_capacity(shape.bad_members.len());
        for m in &shape.bad_members {
            let mut keys = Vec::new();
            for (i, (k, v)) in map.iter().enumerate() {
                if self.key_allowed(&m.filter, k)? && self.valid(v, &m.bads)? {
                    keys.push(i);
                }
            }
            meets.push(keys);
        }
        Ok(assigned(&meets, &mut Vec::new()))
    }

    /// The subschemas the value of key `k` must satisfy (None: the key may not appear).
    /// In each clause a key obeys its property's schema and every pattern it matches;
    /// only keys with neither fall to `additionalProperties`.
    fn key_subs(&mut self, k: &str, shape: &Shape<'a>) -> Result<Option<Vec<Sub<'a>>>> {
        if shape.forbidden.iter().any(|f| f == k) {
            return Ok(None);
        }
        if !shape.prop_names.is_empty() && !self.valid(&Value::String(k.to_string()), &shape.prop_names)? {
            return Ok(None);
        }
        let mut subs = Vec::new();
        for clause in self.obj_clauses(shape) {
            let named = clause.prop(k).cloned();
            let mut matched = false;
            for (src, p_sub) in &clause.patterns {
                if self.pattern_matches(src, p_sub.pointer(), k)? {
                    subs.push(p_sub.clone());
                    matched = true;
                }
            }
            match (named, &clause.additional) {
                (Some(s), _) => subs.push(s),
                (None, Some(extra)) if !matched => subs.push(extra.clone()),
                _ => {}
            }
        }
        Ok(Some(subs))
    }
}

/// The `enum` and excluded values: is `value` listed where it must be, and not where it
/// must not?
fn listed_ok(value: &Value, shape: &Shape<'_>, member: bool) -> bool {
    let test_enum = shape.enumeration.is_some() && !member;
    if !test_enum && shape.not_keys.is_empty() {
        return true;
    }
    let key = value::canon(value);
    (!test_enum || shape.enum_keys.contains(&key)) && !shape.not_keys.contains(&key)
}

/// Does number `d` meet `shape`'s bounds and steps?
fn number_ok(d: &Decimal, shape: &Shape<'_>) -> bool {
    if let Some((lo, excl)) = &shape.lo {
        if d < lo || (*excl && d == lo) {
            return false;
        }
    }
    if let Some((hi, excl)) = &shape.hi {
        if d > hi || (*excl && d == hi) {
            return false;
        }
    }
    shape.mults.iter().all(|(step, _)| is_multiple(d, step)) && !shape.neg_mults.iter().any(|(step, _)| is_multiple(d, step))
}

/// Is `d` an integer multiple of `step` (> 0), exactly?
///
/// With d = a·10^p and step = b·10^q (a, b integers without trailing zeros), d/step =
/// (a/b)·10^(p−q). Below p = q that is an integer only if b·10^(q−p) divides a, which a
/// (not a multiple of 10) never allows. Otherwise, with b = b′·2^x·5^y (b′ prime to 10):
/// b divides a·10^k (k = p − q) iff b′ divides a and the twos and fives of a·10^k cover x
/// and y.
pub(crate) fn is_multiple(d: &Decimal, step: &Decimal) -> bool {
    if d.is_zero() {
        return true;
    }
    let Some(k) = d.exponent().checked_sub(step.exponent()).and_then(|k| u64::try_from(k).ok()) else { return false };
    let a = digits_of(d.significant_digits());
    let (b, twos) = strip_factor(digits_of(step.significant_digits()), 2);
    let (b, fives) = strip_factor(b, 5);
    // Only as many factors of a as b needs are counted.
    let covered = |p: u32, need: u64| need <= k || factor_count(&a, p, need - k) >= need - k;
    covered(2, twos) && covered(5, fives) && remainder_is_zero(&a, &b)
}

/// The decimal digits of `text` as values, most significant first.
fn digits_of(text: &str) -> Vec<u8> {
    text.bytes().map(|b| b - b'0').collect()
}

/// `n / p` and whether it divides evenly (`p` small), digits most significant first
/// (leading zeros removed).
fn div_small(n: &[u8], p: u32) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(n.len());
    let mut rem = 0u32;
    for &digit in n {
        let cur = rem * 10 + u32::from(digit);
        out.push((cur / p) as u8);
        rem = cur % p;
    }
    let first = out.iter().position(|&x| x != 0).unwrap_or(out.len());
    (out.split_off(first), rem == 0)
}

/// `n` without its factors `p`, and how many there were.
fn strip_factor(mut n: Vec<u8>, p: u32) -> (Vec<u8>, u64) {
    let mut count = 0;
    while !n.is_empty() {
        let (q, even) = div_small(&n, p);
        if !even {
            break;
        }
        n = q;
        count += 1;
    }
    (n, count)
}

/// How many factors `p` divide `n` (counting stops at `cap`).
fn factor_count(n: &[u8], p: u32, cap: u64) -> u64 {
    let mut n = n.to_vec();
    let mut count = 0;
    while count < cap && !n.is_empty() {
        let (q, even) = div_small(&n, p);
        if !even {
            break;
        }
        n = q;
        count += 1;
    }
    count
}

/// Does `m` (> 0) divide `n`? The remainder is carried digit by digit: r = (10·r + d) mod
/// m, where 10·r + d < 10·m, so a few subtractions reduce it (no big division needed).
fn remainder_is_zero(n: &[u8], m: &[u8]) -> bool {
    let mut r: Vec<u8> = Vec::new();
    for &digit in n {
        if !(r.is_empty() && digit == 0) {
            r.push(digit);
        }
        while !less(&r, m) {
            subtract(&mut r, m);
        }
    }
    r.is_empty()
}

/// `a < b`, both without leading zeros.
fn less(a: &[u8], b: &[u8]) -> bool {
    a.len() < b.len() || (a.len() == b.len() && a < b)
}

/// `a -= b` for `a >= b`, leading zeros removed.
fn subtract(a: &mut Vec<u8>, b: &[u8]) {
    let mut borrow = 0i16;
    let offset = a.len() - b.len();
    for i in (0..a.len()).rev() {
        let sub = if i >= offset { i16::from(b[i - offset]) } else { 0 };
        let mut x = i16::from(a[i]) - sub - borrow;
        borrow = i16::from(x < 0);
        if x < 0 {
            x += 10;
        }
        a[i] = x as u8;
    }
    let first = a.iter().position(|&x| x != 0).unwrap_or(a.len());
    a.drain(..first);
}

/// Can each member (`meets[i]`: the keys that meet member `i`) have a key of its own,
/// none in `taken`? A search over the few members a shape requires.
fn assigned(meets: &[Vec<usize>], taken: &mut Vec<usize>) -> bool {
    let Some((first, rest)) = meets.split_first() else { return true };
    for &k in first {
        if !taken.contains(&k) {
            taken.push(k);
            let ok = assigned(rest, taken);
            taken.pop();
            if ok {
                return true;
            }
        }
    }
    false
}
