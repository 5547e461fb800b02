//! JSON values as `uniqueItems` compares them, read from output text: the items of a
//! distinct array of any item type (see [`crate::grammar::distinct_keys`]).
//!
//! JSON Schema calls two instances equal when they are the same JSON value: numbers by
//! their mathematical value (`1`, `1.0` and `10e-1` are one), strings after unescaping
//! (`"\u0061"` is `"a"`), objects whatever the order of their members, arrays item by
//! item. [`Val`] is that value with one spelling: a number is a sign, its significant
//! digits and a power of ten; an object's members are sorted by key. Its byte encoding
//! ([`Val::key`]) is equal exactly for equal values, so a set of written items is a hash
//! set of encodings.
//!
//! The check also needs to know, for an item half written, whether it can still become a
//! value already written ([`may_become`]): if not, every way to finish it is a new item
//! and nothing needs searching. That answer may be "yes" where the truth is "no" (a
//! half-written number is judged by its digits alone), never the other way round, so
//! it only ever makes the search that follows longer, never its result wrong.

use std::cmp::Ordering;

/// A JSON value with one spelling (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Num(Num),
    /// The string's UTF-8 bytes, unescaped.
    Str(Vec<u8>),
    Arr(Vec<Val>),
    /// Members sorted by key, keys distinct.
    Obj(Vec<(Vec<u8>, Val)>),
}

/// A number as `±0.d₁d₂…dₙ × 10^exp`, with `d₁` and `dₙ` not zero; zero is no digits, not
/// negative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Num {
    neg: bool,
    digits: Vec<u8>,
    /// Exponents too large for an `i64` (written with more than 17 digits) saturate: two
    /// such numbers that differ only there compare equal.
    exp: i64,
}

impl Val {
    /// The value's encoding: equal for equal values only.
    pub(crate) fn key(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Val::Null => out.push(b'n'),
            Val::Bool(b) => out.push(if *b { b't' } else { b'f' }),
            Val::Num(n) => {
                out.push(if n.neg { b'-' } else { b'+' });
                out.extend_from_slice(&n.exp.to_le_bytes());
                encode_bytes(&n.digits, out);
            }
            Val::Str(s) => {
                out.push(b's');
                encode_bytes(s, out);
            }
            Val::Arr(items) => {
                out.push(b'[');
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                items.iter().for_each(|v| v.encode(out));
            }
            Val::Obj(members) => {
                out.push(b'{');
                out.extend_from_slice(&(members.len() as u64).to_le_bytes());
                for (k, v) in members {
                    encode_bytes(k, out);
                    v.encode(out);
                }
            }
        }
    }
}

fn encode_bytes(b: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

/// Reads one JSON text (surrounding whitespace allowed); None if it is not one.
pub(crate) fn parse(text: &[u8]) -> Option<Val> {
    let mut r = Reader { text, at: 0 };
    let v = r.value()?;
    r.ws();
    (r.at == text.len()).then_some(v)
}

/// The value `text`, the start of one JSON value, stands for whatever follows it, if that
/// is already decided: a whole value that no byte can extend (all but a number, or a
/// number followed by whitespace), or a number of zero digits whose exponent has begun.
pub(crate) fn fixed(text: &[u8]) -> Option<Val> {
    let mut r = Reader { text, at: 0 };
    r.ws();
    if matches!(r.peek(), Some(b'-' | b'0'..=b'9')) {
        let t = r.number_text();
        let p = NumParts::read(t)?;
        let ended = r.at == text.len();
        if p.exp.is_some() && p.mantissa().0.iter().all(|&d| d == b'0') && !p.int.is_empty() {
            r.ws();
            return (r.at == text.len()).then_some(Val::Num(Num { neg: false, digits: Vec::new(), exp: 0 }));
        }
        if ended || p.open() {
            return None;
        }
        r.ws();
        return (r.at == text.len()).then(|| Val::Num(p.num()));
    }
    parse(text)
}

/// How reading text against a value ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// The text cannot be (the start of) a spelling of the value.
    No,
    /// The text ran out, agreeing so far.
    Ended,
    /// The text spelled the whole value.
    Whole,
}

/// Can `text`, the start of one JSON value (whitespace around it allowed), be finished as
/// a spelling of `v`? See the module docs for where "yes" may be wrong.
pub(crate) fn may_become(text: &[u8], v: &Val) -> bool {
    let mut r = Reader { text, at: 0 };
    match r.fit(v) {
        Fit::No => false,
        Fit::Ended => true,
        Fit::Whole => {
            r.ws();
            r.at == text.len()
        }
    }
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let ok = self.peek() == Some(b);
        self.at += ok as usize;
        ok
    }

    /// A whole value.
    fn value(&mut self) -> Option<Val> {
        self.ws();
        match self.peek()? {
            b'n' => self.word(b"null").then_some(Val::Null),
            b't' => self.word(b"true").then_some(Val::Bool(true)),
            b'f' => self.word(b"false").then_some(Val::Bool(false)),
            b'"' => self.string().map(Val::Str),
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Some(Val::Arr(items))
            }
            b'{' => {
                self.at += 1;
                let mut members: Vec<(Vec<u8>, Val)> = Vec::new();
                self.ws();
                if !self.eat(b'}') {
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        if !self.eat(b':') {
                            return None;
                        }
                        members.push((k, self.value()?));
                        self.ws();
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                members.sort_by(|a, b| a.0.cmp(&b.0));
                // A repeated key: the last one counts, as JSON parsers read it.
                members.dedup_by(|later, earlier| {
                    let same = later.0 == earlier.0;
                    if same {
                        std::mem::swap(later, earlier);
                    }
                    same
                });
                Some(Val::Obj(members))
            }
            _ => self.number().map(Val::Num),
        }
    }

    fn word(&mut self, w: &[u8]) -> bool {
        let ok = self.text[self.at..].starts_with(w);
        self.at += if ok { w.len() } else { 0 };
        ok
    }

    /// A whole string, unescaped.
    fn string(&mut self) -> Option<Vec<u8>> {
        if !self.eat(b'"') {
            return None;
        }
        let mut out = Vec::new();
        loop {
            match self.char()? {
                Char::End => return Some(out),
                Char::Bytes(b, n) => out.extend_from_slice(&b[..n]),
            }
        }
    }

    /// One character of a string body: its UTF-8 bytes, or the closing quote. None at the
    /// end of the text or a bad escape.
    fn char(&mut self) -> Option<Char> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b'"' => Some(Char::End),
            b'\\' => {
                let e = self.peek()?;
                self.at += 1;
                let c = match e {
                    b'"' | b'\\' | b'/' => e as u32,
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => 10,
                    b'r' => 13,
                    b't' => 9,
                    b'u' => self.unicode_escape()?,
                    _ => return None,
                };
                let ch = char::from_u32(c).unwrap_or('\u{fffd}');
                let mut buf = [0u8; 4];
                let n = ch.encode_utf8(&mut buf).len();
                Some(Char::Bytes(buf, n))
            }
            _ => Some(Char::Bytes([b, 0, 0, 0], 1)),
        }
    }

    /// The code point of `XXXX` after `\u` (and of a low surrogate's escape after it).
    fn unicode_escape(&mut self) -> Option<u32> {
        let hi = self.hex4()?;
        // A high surrogate whose low half is cut off by the end of the text: the
        // character is not known yet.
        let rest = &self.text[self.at..];
        if (0xD800..0xDC00).contains(&hi) && rest.len() < 6 && b"\\u".starts_with(&rest[..rest.len().min(2)]) {
            return None;
        }
        if (0xD800..0xDC00).contains(&hi) && self.text[self.at..].starts_with(b"\\u") {
            let save = self.at;
            self.at += 2;
            match self.hex4() {
                Some(lo) if (0xDC00..0xE000).contains(&lo) => return Some(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)),
                _ => self.at = save,
            }
        }
        Some(hi)
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.text.get(self.at..self.at + 4)?;
        let s = std::str::from_utf8(h).ok()?;
        let v = u32::from_str_radix(s, 16).ok()?;
        self.at += 4;
        Some(v)
    }

    /// The text of a number (its longest run of number bytes).
    fn number_text(&mut self) -> &'a [u8] {
        let from = self.at;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        &self.text[from..self.at]
    }

    fn number(&mut self) -> Option<Num> {
        let t = self.number_text();
        let p = NumParts::read(t)?;
        (!p.open()).then(|| p.num())
    }

    /// Reads text against `v` (see [`Fit`]).
    fn fit(&mut self, v: &Val) -> Fit {
        self.ws();
        let Some(first) = self.peek() else { return Fit::Ended };
        match v {
            Val::Null => self.fit_word(b"null"),
            Val::Bool(true) => self.fit_word(b"true"),
            Val::Bool(false) => self.fit_word(b"false"),
            Val::Str(s) => self.fit_string(first, |w, whole| if whole { w == s.as_slice() } else { s.starts_with(w) }).0,
            Val::Num(n) => {
                if !matches!(first, b'-' | b'0'..=b'9') {
                    return Fit::No;
                }
                let t = self.number_text();
                let ended = self.at == self.text.len();
                match NumParts::read(t) {
                    None => Fit::No,
                    Some(p) if ended => {
                        if p.may_become(n) {
                            Fit::Ended
                        } else {
                            Fit::No
                        }
                    }
                    Some(p) if !p.open() && p.num() == *n => Fit::Whole,
                    Some(_) => Fit::No,
                }
            }
            Val::Arr(items) => self.fit_array(first, items),
            Val::Obj(members) => self.fit_object(first, members),
        }
    }

    fn fit_word(&mut self, w: &[u8]) -> Fit {
        let rest = &self.text[self.at..];
        let n = rest.len().min(w.len());
        if rest[..n] != w[..n] {
            return Fit::No;
        }
        self.at += n;
        if n < w.len() {
            Fit::Ended
        } else {
            Fit::Whole
        }
    }

    /// A string whose unescaped bytes so far (`whole`: the string closed) pass `ok`, and
    /// those bytes.
    fn fit_string(&mut self, first: u8, ok: impl Fn(&[u8], bool) -> bool) -> (Fit, Vec<u8>) {
        if first != b'"' {
            return (Fit::No, Vec::new());
        }
        self.at += 1;
        let mut w = Vec::new();
        loop {
            let before = self.at;
            let fit = match self.char() {
                // The text ends in the string, maybe inside an escape: judged by what
                // came before it.
                None if self.text.len() - before < 6 => {
                    self.at = self.text.len();
                    if ok(&w, false) {
                        Fit::Ended
                    } else {
                        Fit::No
                    }
                }
                None => Fit::No,
                Some(Char::End) if ok(&w, true) => Fit::Whole,
                Some(Char::End) => Fit::No,
                Some(Char::Bytes(b, n)) => {
                    w.extend_from_slice(&b[..n]);
                    if ok(&w, false) {
                        continue;
                    }
                    Fit::No
                }
            };
            return (fit, w);
        }
    }

    fn fit_array(&mut self, first: u8, items: &[Val]) -> Fit {
        if first != b'[' {
            return Fit::No;
        }
        self.at += 1;
        for (i, item) in items.iter().enumerate() {
            self.ws();
            if self.peek().is_none() {
                return Fit::Ended;
            }
            if i > 0 && !self.eat(b',') {
                return Fit::No;
            }
            match self.fit(item) {
                Fit::Whole => {}
                other => return other,
            }
        }
        self.ws();
        match self.peek() {
            None => Fit::Ended,
            Some(b']') => {
                self.at += 1;
                Fit::Whole
            }
            Some(_) => Fit::No,
        }
    }

    fn fit_object(&mut self, first: u8, members: &[(Vec<u8>, Val)]) -> Fit {
        if first != b'{' {
            return Fit::No;
        }
        self.at += 1;
        let mut used = vec![false; members.len()];
        for n in 0.. {
            self.ws();
            match self.peek() {
                None => return Fit::Ended,
                Some(b'}') => {
                    self.at += 1;
                    return if n == members.len() { Fit::Whole } else { Fit::No };
                }
                Some(b',') if n > 0 => {
                    self.at += 1;
                    self.ws();
                }
                Some(_) if n > 0 => return Fit::No,
                Some(_) => {}
            }
            let Some(first) = self.peek() else { return Fit::Ended };
            let free = |k: &[u8], whole: bool| {
                members.iter().zip(&used).any(|((m, _), &u)| !u && if whole { m.as_slice() == k } else { m.starts_with(k) })
            };
            let (fit, key) = self.fit_string(first, free);
            if fit != Fit::Whole {
                return fit;
            }
            // Which member the key names (keys are sorted and distinct).
            let found = members.binary_search_by(|(m, _)| m.as_slice().cmp(&key)).ok();
            let Some(i) = found.filter(|&i| !used[i]) else { return Fit::No };
            used[i] = true;
            self.ws();
            match self.peek() {
                None => return Fit::Ended,
                Some(b':') => self.at += 1,
                Some(_) => return Fit::No,
            }
            match self.fit(&members[i].1) {
                Fit::Whole => {}
                other => return other,
            }
        }
        Fit::No
    }
}

enum Char {
    End,
    Bytes([u8; 4], usize),
}

/// The parts of a number's text, which may stop partway (`-`, `1.`, `2e+`).
struct NumParts<'a> {
    neg: bool,
    int: &'a [u8],
    frac: Option<&'a [u8]>,
    /// Exponent sign (`None`: no exponent) and digits.
    exp: Option<(bool, &'a [u8])>,
}

impl<'a> NumParts<'a> {
    /// Reads a number's text, whole or partly written; None if it cannot start a JSON
    /// number.
    fn read(t: &'a [u8]) -> Option<NumParts<'a>> {
        let (neg, rest) = match t.split_first() {
            Some((b'-', r)) => (true, r),
            _ => (false, t),
        };
        let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (int, mut rest) = rest.split_at(int_len);
        if int.len() > 1 && int[0] == b'0' || (int.is_empty() && !rest.is_empty()) {
            return None;
        }
        let mut frac = None;
        if let Some((b'.', r)) = rest.split_first() {
            let n = r.iter().take_while(|b| b.is_ascii_digit()).count();
            frac = Some(&r[..n]);
            rest = &r[n..];
        }
        let mut exp = None;
        if let Some((b'e' | b'E', r)) = rest.split_first() {
            let (eneg, r) = match r.split_first() {
                Some((b'-', r)) => (true, r),
                Some((b'+', r)) => (false, r),
                _ => (false, r),
            };
            let n = r.iter().take_while(|b| b.is_ascii_digit()).count();
            exp = Some((eneg, &r[..n]));
            rest = &r[n..];
        }
        if !rest.is_empty() || frac.is_some_and(|f| f.is_empty()) && exp.is_some() {
            return None;
        }
        Some(NumParts { neg, int, frac, exp })
    }

    /// Does the text stop where a number cannot end?
    fn open(&self) -> bool {
        self.int.is_empty() || self.frac.is_some_and(|f| f.is_empty()) || self.exp.is_some_and(|(_, d)| d.is_empty())
    }

    /// The mantissa's digits with leading zeros dropped, and where the point is in them
    /// (digits before it).
    fn mantissa(&self) -> (Vec<u8>, i64) {
        let all: Vec<u8> = self.int.iter().chain(self.frac.unwrap_or(&[])).copied().collect();
        let lead = all.iter().take_while(|&&d| d == b'0').count();
        (all[lead..].to_vec(), self.int.len() as i64 - lead as i64)
    }

    /// The number (the text must not be open).
    fn num(&self) -> Num {
        let (mut digits, point) = self.mantissa();
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() {
            return Num { neg: false, digits, exp: 0 };
        }
        let e = self.exp.map_or(0i64, |(neg, d)| {
            let d = &d[d.iter().take_while(|&&b| b == b'0').count()..];
            let v =
                if d.len() > 17 { i64::MAX / 4 } else { std::str::from_utf8(d).ok().and_then(|s| s.parse().ok()).unwrap_or(0) };
            if neg {
                -v
            } else {
                v
            }
        });
        Num { neg: self.neg, digits, exp: e.saturating_add(point) }
    }

    /// Can this text, stopped partway, still be finished as `n`? Judged by sign and
    /// digits only (an exponent may still move the point anywhere).
    fn may_become(&self, n: &Num) -> bool {
        if n.digits.is_empty() {
            // Zero: no digit other than 0 may have been written.
            return self.mantissa().0.iter().all(|&d| d == b'0');
        }
        if self.neg != n.neg {
            return false;
        }
        let (s, point) = self.mantissa();
        let core_len = s.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
        match self.exp {
            // The mantissa is final, and the exponent must make up the point.
            Some((neg, written)) => {
                s[..core_len] == n.digits[..] && exponent_may_become(neg, written, n.exp.saturating_sub(point))
            }
            // More digits may follow: n's digits start with those written, or equal them
            // without their trailing zeros.
            None => n.digits.starts_with(&s) || s[..core_len] == n.digits[..],
        }
    }
}

/// Can an exponent written so far (`neg`: after `-`; `written`: its digits) still be
/// finished as `e`? Leading zeros may come first; with no digit yet, the sign may not
/// have been written either (then `neg` is false and either sign is open).
fn exponent_may_become(neg: bool, written: &[u8], e: i64) -> bool {
    let digits = &written[written.iter().take_while(|&&b| b == b'0').count()..];
    if e != 0 && neg != (e < 0) && (neg || !written.is_empty()) {
        return false;
    }
    let target = e.unsigned_abs().to_string();
    digits.is_empty() || (e != 0 && target.as_bytes().starts_with(digits))
}

impl PartialOrd for Num {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Num {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.neg, self.exp, &self.digits).cmp(&(other.neg, other.exp, &other.digits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(t: &str) -> Val {
        parse(t.as_bytes()).unwrap_or_else(|| panic!("{t} parses"))
    }

    #[test]
    fn equal_values_have_one_key() {
        let same = [
            ["1", "1.0", "10e-1"],
            ["0", "-0", "0.000e5"],
            ["\"a\"", "\"\\u0061\"", " \"a\" "],
            ["{\"a\":1,\"b\":[2]}", "{ \"b\" : [2.0], \"a\" : 1e0 }", "{\"b\":[20E-1],\"a\":1}"],
            ["\"\\ud83d\\ude00\"", "\"\u{1F600}\"", "\"\\uD83D\\uDE00\""],
        ];
        for group in same {
            let keys: Vec<Vec<u8>> = group.iter().map(|t| v(t).key()).collect();
            assert!(keys.iter().all(|k| *k == keys[0]), "{group:?}");
        }
        let apart = ["1", "-1", "2", "10", "0.1", "\"1\"", "[1]", "{\"a\":1}", "{\"a\":1,\"b\":1}", "true", "null", "[]", "{}"];
        let mut keys: Vec<Vec<u8>> = apart.iter().map(|t| v(t).key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), apart.len());
    }

    #[test]
    fn not_json_is_no_value() {
        for t in ["", "01", "1.", "1e", "-", "[1,]", "{\"a\"}", "tru", "\"a", "1 2"] {
            assert!(parse(t.as_bytes()).is_none(), "{t}");
        }
    }

    #[test]
    fn half_written_items_that_may_become_a_value() {
        let target = v("{\"name\":\"ab\",\"n\":[1.5,true]}");
        for t in [
            "",
            "{",
            "{\"n",
            "{\"name\":\"a",
            "{\"n\":[1",
            "{\"n\":[15e-1,t",
            "{ \"n\" : [ 1.50",
            "{\"name\":\"ab\",\"n\":[1.5,true]}",
        ] {
            assert!(may_become(t.as_bytes(), &target), "{t}");
        }
        for t in ["[", "{\"x", "{\"name\":\"b", "{\"n\":[2", "{\"n\":[1.5,f", "{\"name\":\"ab\"}", "{\"n\":[1.5,true],\"n\""] {
            assert!(!may_become(t.as_bytes(), &target), "{t}");
        }
        // Numbers: by sign and digits.
        let ten = v("10");
        assert!(may_become(b"1", &ten) && may_become(b"100", &ten) && may_become(b"1.0", &ten) && may_become(b"0.01e", &ten));
        assert!(!may_become(b"-1", &ten) && !may_become(b"11", &ten) && !may_become(b"1.5", &ten) && !may_become(b"2e", &ten));
        // Past `e`, the exponent must make up the point.
        assert!(may_become(b"1e", &ten) && may_become(b"1e0", &ten) && may_become(b"1e+01", &ten) && may_become(b"100e-", &ten));
        assert!(
            !may_become(b"1e2", &ten)
                && !may_become(b"1e-", &ten)
                && !may_become(b"1e01", &v("1"))
                && !may_become(b"1e1", &v("100"))
                && may_become(b"1e0", &v("100"))
        );
        assert!(may_become(b"1e-00", &v("1")) && may_become(b"1e00", &v("1")) && may_become(b"1E-3", &v("0.001")));
        // Decided values.
        assert_eq!(fixed(b"0e+00"), Some(v("0")));
        assert_eq!(fixed(b"-0.0E"), Some(v("0")));
        assert_eq!(fixed(b"12 "), Some(v("12")));
        assert_eq!(fixed(b"\"a\""), Some(v("\"a\"")));
        assert_eq!(fixed(b"{\"a\":[1]}"), Some(v("{\"a\":[1]}")));
        assert!(fixed(b"12").is_none() && fixed(b"0.").is_none() && fixed(b"1e5").is_none() && fixed(b"[1").is_none());
        let zero = v("0");
        assert!(may_become(b"-0.0", &zero) && !may_become(b"0.1", &zero));
    }
}
