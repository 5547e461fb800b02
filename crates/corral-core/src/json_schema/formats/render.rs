//! A format pattern rendered over a string's JSON encoding, in the exact text the Python
//! translator renders: the text is the key of the format's prebuilt automaton.
//!
//! The pattern (the subset of syntax the format patterns use, read with ECMAScript's
//! meaning as the translator reads a format) becomes a tree over code points; each
//! character set is then written as the ways its characters are encoded in canonical JSON
//! (`json.dumps(..., ensure_ascii=False)`: raw except `"`, `\` and the C0 controls, which
//! have one escape each), classes as `[...]` with `\uXXXX` escapes, every repeated item
//! and every nested alternation in a `(?:...)` group. Only the rendering is kept here:
//! the automaton is built from the rendered text by the regex front-end (or read from the
//! prebuilt table under it).

use crate::error::{Error, Result};

/// Inclusive code-point ranges, sorted, merged and without surrogates.
type Ranges = Vec<(u32, u32)>;

const MAX_CODE_POINT: u32 = 0x10FFFF;
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// Sorted, merged, surrogate-free ranges.
fn normalize(mut ranges: Ranges) -> Ranges {
    ranges.sort_unstable();
    let mut out: Ranges = Vec::new();
    for (lo, hi) in ranges {
        let pieces = if lo <= SURROGATES.1 && hi >= SURROGATES.0 {
            vec![(lo, SURROGATES.0 - 1), (SURROGATES.1 + 1, hi)]
        } else {
            vec![(lo, hi)]
        };
        for (a, b) in pieces.into_iter().filter(|(a, b)| a <= b) {
            match out.last_mut() {
                Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
    }
    out
}

/// Every character not in `ranges`.
fn complement(ranges: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::new();
    let mut next = 0;
    for &(lo, hi) in ranges {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi + 1;
    }
    if next <= MAX_CODE_POINT {
        out.push((next, MAX_CODE_POINT));
    }
    normalize(out)
}

/// The characters in both.
fn intersect(a: &[(u32, u32)], b: &[(u32, u32)]) -> Ranges {
    complement(&normalize([complement(a), complement(b)].concat()))
}

/// A pattern read into a tree (groups dissolved, as the translator's reader leaves them).
#[derive(Debug, Clone)]
enum Node {
    Chars(Ranges),
    Seq(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

/// Reads a format pattern (see the module docs for the subset it holds).
struct Reader<'a> {
    pattern: &'a str,
    chars: Vec<char>,
    i: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> Error {
        Error::Internal(format!("format pattern: {what} at character {} of {}", self.i, self.pattern))
    }

    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn alternation(&mut self) -> Result<Node> {
        let mut branches = vec![self.sequence()?];
        while self.peek(0) == Some('|') {
            self.i += 1;
            branches.push(self.sequence()?);
        }
        Ok(if branches.len() == 1 { branches.remove(0) } else { Node::Alt(branches) })
    }

    fn sequence(&mut self) -> Result<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek(0).filter(|c| *c != '|' && *c != ')') {
            crate::util::interrupt::check()?;
            let atom = self.atom(c)?;
            items.push(self.quantified(atom));
        }
        Ok(if items.len() == 1 { items.remove(0) } else { Node::Seq(items) })
    }

    fn quantified(&mut self, mut atom: Node) -> Node {
        loop {
            let (lo, hi) = match self.peek(0) {
                Some(c @ ('*' | '+' | '?')) => {
                    self.i += 1;
                    match c {
                        '*' => (0, None),
                        '+' => (1, None),
                        _ => (0, Some(1)),
                    }
                }
                Some('{') => match self.braces() {
                    Some(bounds) => bounds,
                    None => return atom,
                },
                _ => return atom,
            };
            if self.peek(0) == Some('?') {
                self.i += 1; // lazy: the same language
            }
            atom = Node::Repeat(Box::new(atom), lo, hi);
        }
    }

    /// Digits at `j`: their value and the index after them (None if there is none).
    fn number_at(&self, j: usize) -> Option<(u32, usize)> {
        let n = self.chars[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        let text: String = self.chars[j..j + n].iter().collect();
        Some((text.parse().ok()?, j + n))
    }

    /// `{m}`, `{m,}`, `{m,n}` at the cursor (moving past it); None for a literal brace.
    fn braces(&mut self) -> Option<(u32, Option<u32>)> {
        let (lo, mut j) = self.number_at(self.i + 1)?;
        let mut hi = Some(lo);
        if self.chars.get(j) == Some(&',') {
            hi = self.number_at(j + 1).map(|(n, _)| n);
            j = self.number_at(j + 1).map_or(j + 1, |(_, k)| k);
        }
        if self.chars.get(j) != Some(&'}') {
            return None;
        }
        self.i = j + 1;
        Some((lo, hi))
    }

    fn atom(&mut self, c: char) -> Result<Node> {
        match c {
            '(' => {
                self.i += 1;
                if self.peek(0) == Some('?') {
                    if self.peek(1) != Some(':') {
                        return Err(self.error("unsupported group"));
                    }
                    self.i += 2;
                }
                let node = self.alternation()?;
                if self.peek(0) != Some(')') {
                    return Err(self.error("missing `)`"));
                }
                self.i += 1;
                Ok(node)
            }
            '[' => Ok(Node::Chars(self.class()?)),
            '\\' => self.escape().map(|cp| Node::Chars(vec![(cp, cp)])),
            '.' | '^' | '$' | '*' | '+' | '?' => Err(self.error("unsupported syntax")),
            _ => {
                self.i += 1;
                Ok(Node::Chars(vec![(c as u32, c as u32)]))
            }
        }
    }

    /// A backslash escape of punctuation (the only escapes the format patterns use).
    fn escape(&mut self) -> Result<u32> {
        let c = self.peek(1).filter(|c| !c.is_ascii_alphanumeric()).ok_or_else(|| self.error("unsupported escape"))?;
        self.i += 2;
        Ok(c as u32)
    }

    /// One member of a class: a character (a class escape is not used in the patterns).
    fn class_atom(&mut self) -> Result<u32> {
        match self.peek(0) {
            Some('\\') => self.escape(),
            Some(c) => {
                self.i += 1;
                Ok(c as u32)
            }
            None => Err(self.error("unterminated class")),
        }
    }

    fn class(&mut self) -> Result<Ranges> {
        self.i += 1;
        let negated = self.peek(0) == Some('^');
        if negated {
            self.i += 1;
        }
        let mut ranges = Vec::new();
        while self.peek(0) != Some(']') {
            let lo = self.class_atom()?;
            if self.peek(0) == Some('-') && !matches!(self.peek(1), None | Some(']')) {
                self.i += 1;
                let hi = self.class_atom()?;
                if hi < lo {
                    return Err(self.error("range out of order"));
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        self.i += 1;
        let ranges = normalize(ranges);
        Ok(if negated { complement(&ranges) } else { ranges })
    }
}

/// Reads `pattern` whole.
fn read(pattern: &str) -> Result<Node> {
    let mut reader = Reader { pattern, chars: pattern.chars().collect(), i: 0 };
    let node = reader.alternation()?;
    if reader.i < reader.chars.len() {
        return Err(reader.error("unbalanced `)`"));
    }
    Ok(node)
}

/// One character in a rendered class.
fn class_char(cp: u32) -> String {
    match char::from_u32(cp) {
        Some(c) if c.is_ascii_alphanumeric() || " _!\"#%&',:;<=>@`~".contains(c) => c.to_string(),
        _ if cp <= 0xFFFF => format!("\\u{cp:04x}"),
        _ => format!("\\U{cp:08x}"),
    }
}

/// A class of `ranges` in Python `re` syntax (a never-matching class if empty).
fn render_class(ranges: &[(u32, u32)]) -> String {
    match ranges {
        [] => String::from("[^\\s\\S]"),
        [(a, b)] if a == b && char::from_u32(*a).is_some_and(|c| c.is_ascii_alphanumeric()) => class_char(*a),
        [(a, b)] if a == b => format!("[{}]", class_char(*a)),
        _ => {
            let parts: String = ranges
                .iter()
                .map(|&(lo, hi)| if lo == hi { class_char(lo) } else { format!("{}-{}", class_char(lo), class_char(hi)) })
                .collect();
            format!("[{parts}]")
        }
    }
}

fn group(s: &str) -> String {
    format!("(?:{s})")
}

/// The two lowercase hex digits of each code below 0x100, grouped by the first digit
/// (`0[0-7bef]|1[0-9a-f]`).
fn render_hex_pairs(codes: &[u32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |d: u32| char::from(HEX[d as usize]);
    let mut by_high: Vec<(u32, Vec<u32>)> = Vec::new();
    for &cp in codes {
        match by_high.last_mut() {
            Some((high, lows)) if *high == cp >> 4 => lows.push(cp & 0xF),
            _ => by_high.push((cp >> 4, vec![cp & 0xF])),
        }
    }
    let alts: Vec<String> = by_high
        .iter()
        .map(|(high, lows)| {
            let mut class = String::new();
            let mut start = None;
            for (i, &low) in lows.iter().enumerate() {
                let first = *start.get_or_insert(low);
                // Runs break between 9 and a, which are not adjacent characters.
                if i + 1 == lows.len() || lows[i + 1] != low + 1 || low == 9 {
                    class.push(digit(first));
                    if low > first + 1 {
                        class.push('-');
                    }
                    if low > first {
                        class.push(digit(low));
                    }
                    start = None;
                }
            }
            let class = if lows.len() == 1 { class } else { format!("[{class}]") };
            format!("{}{class}", digit(*high))
        })
        .collect();
    alts.join("|")
}

/// One character of `ranges` in its canonical JSON encoding.
fn render_json_class(ranges: &[(u32, u32)]) -> String {
    let must_escape = normalize(vec![(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)]);
    let plain = intersect(ranges, &complement(&must_escape));
    let mut parts = Vec::new();
    if !plain.is_empty() {
        parts.push(render_class(&plain));
    }
    let (mut short, mut count, mut hexes) = (String::new(), 0, Vec::new());
    for (lo, hi) in intersect(ranges, &must_escape) {
        for cp in lo..=hi {
            count += usize::from(matches!(cp, 0x22 | 0x5C | 0x08 | 0x0C | 0x0A | 0x0D | 0x09));
            match cp {
                0x22 => short.push('"'),
                0x5C => short.push_str("\\\\"),
                0x08 => short.push('b'),
                0x0C => short.push('f'),
                0x0A => short.push('n'),
                0x0D => short.push('r'),
                0x09 => short.push('t'),
                _ => hexes.push(cp),
            }
        }
    }
    if count > 1 {
        parts.push(format!("\\\\[{short}]"));
    } else if count == 1 {
        parts.push(format!("\\\\{short}"));
    }
    if !hexes.is_empty() {
        parts.push(format!("\\\\u00{}", group(&render_hex_pairs(&hexes))));
    }
    match parts.len() {
        0 => String::from("[^\\s\\S]"),
        1 => parts.remove(0),
        _ => group(&parts.join("|")),
    }
}

fn repeat_suffix(lo: u32, hi: Option<u32>) -> String {
    match (lo, hi) {
        (0, None) => String::from("*"),
        (1, None) => String::from("+"),
        (0, Some(1)) => String::from("?"),
        (lo, None) => format!("{{{lo},}}"),
        (lo, Some(hi)) if lo == hi => format!("{{{lo}}}"),
        (lo, Some(hi)) => format!("{{{lo},{hi}}}"),
    }
}

fn render(node: &Node) -> String {
    match node {
        Node::Chars(ranges) => render_json_class(ranges),
        Node::Seq(items) => items
            .iter()
            .map(|x| match x {
                Node::Alt(_) => group(&render(x)),
                _ => render(x),
            })
            .collect(),
        Node::Alt(items) => items.iter().map(render).collect::<Vec<_>>().join("|"),
        Node::Repeat(item, lo, hi) => group(&render(item)) + &repeat_suffix(*lo, *hi),
    }
}

/// The pattern over the canonical JSON encoding (without the quotes) of the strings
/// `pattern` matches whole.
pub(super) fn render_json(pattern: &str) -> Result<String> {
    let node = read(pattern)?;
    let text = render(&node);
    Ok(if matches!(node, Node::Alt(_)) { group(&text) } else { text })
}
