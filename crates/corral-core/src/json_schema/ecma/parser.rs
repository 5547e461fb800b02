//! The reader of ECMAScript pattern source: recursive descent over the pattern's
//! characters, positions counted in characters.
//!
//! Every character class becomes a set of code points (Unicode semantics, as with the `u`
//! flag: `\u{...}` escapes, surrogate pairs joined); groups become their contents.
//! Assertions (anchors, look-around groups, word boundaries) are nodes of their own.
//! Unicode property escapes are read from Unicode's tables (see `properties.rs`).
//! Constructs no regular language expresses (backreferences) are refused as unsupported,
//! with their position.

use super::ranges::{self, complement, decimal_value, is_python_digit, normalize, Ranges, MAX_CODE_POINT};
use super::Node;
use crate::error::{Error, Result};

/// The repetition count from which a quantifier is refused: a HIR count is a `u32`, and
/// this is the bound Python's `re` also puts on counts.
const MAX_REPEAT: u64 = u32::MAX as u64;

/// The openings of look-around groups.
const LOOK_AROUND: [&str; 4] = ["(?=", "(?!", "(?<=", "(?<!"];

/// Is `node` an assertion (no quantifier may follow it in Unicode mode)?
fn is_assertion(node: &Node) -> bool {
    matches!(node, Node::Anchor { .. } | Node::Look { .. } | Node::Boundary { .. })
}

/// One member of a character class.
enum ClassAtom {
    /// A single character (it may start or end a range).
    Char(u32),
    /// A set from a class escape (`\d`, `\W`, ...), or an escape of no character.
    Set(Ranges),
}

/// A quantifier's counts (`max` None: unbounded) and where it ends.
struct Braces {
    min: Count,
    max: Option<Count>,
    end: usize,
}

/// A count as written: its decimal digits' values, without leading zeros (any size).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Count(usize, Vec<u32>); // (number of digits, digits): ordered as the numbers are

impl Count {
    fn new(digits: Vec<u32>) -> Count {
        let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
        let digits = digits[first..].to_vec();
        Count(digits.len(), digits)
    }

    /// The value, if below [`MAX_REPEAT`].
    fn value(&self) -> Option<u32> {
        let v = self.1.iter().try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add(d as u64))?;
        (v < MAX_REPEAT).then_some(v as u32)
    }
}

/// The reader: the pattern's characters and the position in them.
pub(super) struct Reader<'a> {
    pattern: &'a str,
    src: Vec<char>,
    i: usize,
    nest_limit: u32,
    /// Groups open around the position.
    open: u32,
}

impl<'a> Reader<'a> {
    pub(super) fn new(pattern: &'a str, nest_limit: u32) -> Reader<'a> {
        Reader { pattern, src: pattern.chars().collect(), i: 0, nest_limit, open: 0 }
    }

    fn syntax(&self, message: String, position: usize) -> Error {
        Error::RegexSyntax { message, pattern: self.pattern.to_string(), position }
    }

    fn unsupported(&self, message: &str, position: usize) -> Error {
        Error::UnsupportedRegex { construct: message.to_string(), pattern: self.pattern.to_string(), position }
    }

    fn too_deep(&self) -> Error {
        Error::LimitExceeded {
            limit: "regex_nest_limit",
            value: self.nest_limit as usize,
            context: format!("the nesting of groups and repetitions in the pattern /{}/", self.pattern),
        }
    }

    fn peek(&self, k: usize) -> Option<char> {
        self.src.get(self.i + k).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        let n = s.chars().count();
        self.src.get(self.i..self.i + n).is_some_and(|w| w.iter().copied().eq(s.chars()))
    }

    /// The whole pattern.
    pub(super) fn parse(&mut self) -> Result<Node> {
        let (node, _) = self.alternation()?;
        match self.peek(0) {
            Some(c) => Err(self.syntax(format!("unbalanced `{c}`"), self.i)),
            None => Ok(node),
        }
    }

    /// Branches separated by `|`, with the depth of their nesting.
    fn alternation(&mut self) -> Result<(Node, u32)> {
        let (first, mut depth) = self.sequence()?;
        let mut branches = vec![first];
        while self.peek(0) == Some('|') {
            self.i += 1;
            let (b, d) = self.sequence()?;
            branches.push(b);
            depth = depth.max(d);
        }
        Ok((if branches.len() == 1 { branches.remove(0) } else { Node::Alt(branches) }, depth))
    }

    fn sequence(&mut self) -> Result<(Node, u32)> {
        let mut items = Vec::new();
        let mut depth = 0;
        while let Some(c) = self.peek(0) {
            if c == '|' || c == ')' {
                break;
            }
            crate::util::interrupt::check()?;
            // A group is an atom whatever it holds: `(?:^)*` may repeat, `^*` may not.
            let plain_group = c == '(' && !LOOK_AROUND.iter().any(|p| self.starts_with(p));
            let (atom, d) = self.atom()?;
            let (item, d) = self.quantified(atom, d, !plain_group)?;
            items.push(item);
            depth = depth.max(d);
        }
        Ok((if items.len() == 1 { items.remove(0) } else { Node::Seq(items) }, depth))
    }

    /// `atom` (of nesting `depth`) with the quantifiers that follow it (several may).
    /// `bare`: the atom was not written as a plain group, so an assertion may not be
    /// repeated.
    fn quantified(&mut self, mut atom: Node, mut depth: u32, bare: bool) -> Result<(Node, u32)> {
        loop {
            let start = self.i;
            let (min, max) = match self.peek(0) {
                Some(q @ ('*' | '+' | '?')) => {
                    self.i += 1;
                    match q {
                        '*' => (0, None),
                        '+' => (1, None),
                        _ => (0, Some(1)),
                    }
                }
                Some('{') => match self.braces(bare && is_assertion(&atom))? {
                    Some(counts) => counts,
                    None => return Ok((atom, depth)),
                },
                _ => return Ok((atom, depth)),
            };
            if bare && is_assertion(&atom) {
                return Err(self.after_anchor(start));
            }
            if self.peek(0) == Some('?') {
                self.i += 1; // lazy: the same language
            }
            depth += 1;
            if depth > self.nest_limit {
                return Err(self.too_deep());
            }
            atom = Node::Repeat { item: Box::new(atom), min, max };
        }
    }

    /// `{m}`, `{m,}` or `{m,n}` at the position (digits are any decimal digits), without
    /// moving.
    fn read_braces(&self) -> Option<Braces> {
        let mut j = self.i;
        let digits = |j: &mut usize| {
            let mut out = Vec::new();
            while let Some(v) = self.src.get(*j).and_then(|&c| decimal_value(c)) {
                out.push(v);
                *j += 1;
            }
            out
        };
        if self.src.get(j) != Some(&'{') {
            return None;
        }
        j += 1;
        let lo = digits(&mut j);
        if lo.is_empty() {
            return None;
        }
        let min = Count::new(lo);
        let max = if self.src.get(j) == Some(&',') {
            j += 1;
            let hi = digits(&mut j);
            (!hi.is_empty()).then(|| Count::new(hi))
        } else {
            Some(Count::new(min.1.clone()))
        };
        (self.src.get(j) == Some(&'}')).then_some(Braces { min, max, end: j + 1 })
    }

    fn after_anchor(&self, position: usize) -> Error {
        self.syntax("a quantifier cannot follow an anchor or look-around (Unicode mode)".into(), position)
    }

    /// The counts of a `{...}` quantifier at the position, read past it; None (nothing
    /// read) when the brace is a literal one, as Annex B allows. `after_anchor`: it
    /// follows an anchor, which is an error once the counts are known to be in order.
    fn braces(&mut self, after_anchor: bool) -> Result<Option<(u32, Option<u32>)>> {
        let Some(b) = self.read_braces() else { return Ok(None) };
        let text: String = self.src[self.i..b.end].iter().collect();
        if b.max.as_ref().is_some_and(|hi| *hi < b.min) {
            return Err(self.syntax(format!("numbers out of order in quantifier `{text}`"), self.i));
        }
        if after_anchor {
            return Err(self.after_anchor(self.i));
        }
        let too_large = || self.syntax("the repetition number is too large".into(), self.i);
        let min = b.min.value().ok_or_else(too_large)?;
        let max = match &b.max {
            Some(hi) => Some(hi.value().ok_or_else(too_large)?),
            None => None,
        };
        self.i = b.end;
        Ok(Some((min, max)))
    }

    /// One atom, with the depth of its nesting.
    fn atom(&mut self) -> Result<(Node, u32)> {
        let start = self.i;
        let Some(c) = self.peek(0) else { return Ok((Node::empty(), 0)) };
        let node = match c {
            '(' => return self.group(),
            '[' => Node::Chars(self.char_class()?),
            '.' => {
                self.i += 1;
                Node::Chars(complement(ranges::LINE_TERMINATORS))
            }
            '^' | '$' => {
                self.i += 1;
                Node::Anchor { start: c == '^', position: start }
            }
            // Not ECMAScript (an error in Unicode mode), but the schemas that write them
            // are checked by Python's `re` or PCRE, where they are the string's ends.
            '\\' if matches!(self.peek(1), Some('A' | 'Z' | 'z')) => {
                self.i += 2;
                Node::Anchor { start: self.src[start + 1] == 'A', position: start }
            }
            '\\' if matches!(self.peek(1), Some('b' | 'B')) => {
                self.i += 2;
                Node::Boundary { negated: self.src[start + 1] == 'B', position: start }
            }
            '\\' => Node::Chars(self.escape()?),
            '*' | '+' | '?' => return Err(self.syntax(format!("nothing to repeat before `{c}`"), start)),
            '{' if self.read_braces().is_some() => return Err(self.syntax("nothing to repeat before `{`".into(), start)),
            _ => {
                self.i += 1;
                Node::Chars(normalize([(c as u32, c as u32)]))
            }
        };
        Ok((node, 0))
    }

    /// A group at the position: `(...)`, `(?:...)`, `(?<name>...)` or a look-around.
    fn group(&mut self) -> Result<(Node, u32)> {
        let start = self.i;
        self.i += 1;
        let mut look = None;
        if self.starts_with("?:") {
            self.i += 2;
        } else if let Some(p) = LOOK_AROUND.iter().map(|p| &p[1..]).find(|p| self.starts_with(p)) {
            self.i += p.len();
            look = Some((p.len() == 2, p.ends_with('=')));
        } else if self.starts_with("?<") {
            match self.src[self.i..].iter().position(|&c| c == '>') {
                Some(k) => self.i += k + 1,
                None => return Err(self.syntax("unterminated group name".into(), self.i)),
            }
        } else if self.peek(0) == Some('?') {
            return Err(self.syntax("unknown group syntax `(?`".into(), start));
        }
        if self.open >= self.nest_limit {
            return Err(self.too_deep());
        }
        self.open += 1;
        let inner = self.alternation();
        self.open -= 1;
        let (node, depth) = inner?;
        if self.peek(0) != Some(')') {
            return Err(self.syntax("missing `)`".into(), start));
        }
        self.i += 1;
        let node = match look {
            Some((ahead, positive)) => Node::Look { ahead, positive, body: Box::new(node), position: start },
            None => node,
        };
        Ok((node, depth + 1))
    }

    /// `n` hex digits at the position (read past them), if there are.
    fn hex_digits(&mut self, n: usize) -> Option<u32> {
        let digits = self.src.get(self.i..self.i + n)?;
        let v = digits.iter().try_fold(0u32, |v, c| Some(v * 16 + c.to_digit(16)?))?;
        self.i += n;
        Some(v)
    }

    /// After `\u`: `XXXX` (joined with a following `\uXXXX` when they make a surrogate
    /// pair) or `{X...}`.
    fn unicode_escape(&mut self) -> Option<u32> {
        if self.peek(0) == Some('{') {
            let end = self.i + self.src[self.i..].iter().position(|&c| c == '}')?;
            let body = &self.src[self.i + 1..end];
            let mut v = 0u32;
            for c in body {
                // Saturates past the largest code point: any more digits keep it too large.
                v = (v * 16 + c.to_digit(16)?).min(MAX_CODE_POINT + 1);
            }
            if body.is_empty() || v > MAX_CODE_POINT {
                return None;
            }
            self.i = end + 1;
            return Some(v);
        }
        let cp = self.hex_digits(4)?;
        if (0xD800..=0xDBFF).contains(&cp) && self.starts_with("\\u") {
            let save = self.i;
            self.i += 2;
            match self.hex_digits(4) {
                Some(low) if (0xDC00..=0xDFFF).contains(&low) => return Some(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)),
                _ => self.i = save,
            }
        }
        Some(cp)
    }
}

/// Escapes and character classes.
impl Reader<'_> {
    /// The escape at the position (a backslash): the characters it stands for (`\b` is
    /// a backspace here: outside a class, [`Reader::atom`] reads a word boundary first).
    fn escape(&mut self) -> Result<Ranges> {
        let start = self.i;
        self.i += 1;
        let Some(c) = self.peek(0) else { return Err(self.syntax("pattern ends with a backslash".into(), start)) };
        self.i += 1;
        let one = |cp: u32| Ok(normalize([(cp, cp)]));
        match c {
            'd' => return Ok(ranges::DIGIT.to_vec()),
            'w' => return Ok(ranges::WORD.to_vec()),
            's' => return Ok(ranges::SPACE.to_vec()),
            'D' => return Ok(complement(ranges::DIGIT)),
            'W' => return Ok(complement(ranges::WORD)),
            'S' => return Ok(complement(ranges::SPACE)),
            't' => return one(0x09),
            'n' => return one(0x0A),
            'v' => return one(0x0B),
            'f' => return one(0x0C),
            'r' => return one(0x0D),
            // (Outside a class, `atom` reads `\b` and `\B` as word boundaries.)
            'b' => return one(0x08),
            '0' if !self.peek(0).is_some_and(is_python_digit) => return one(0),
            _ => {}
        }
        if is_python_digit(c) {
            return Err(self.unsupported(&format!("backreferences (\\{c}) are not supported"), start));
        }
        match c {
            'k' if self.peek(0) == Some('<') => Err(self.unsupported("backreferences (\\k<name>) are not supported", start)),
            'c' => match self.peek(0) {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.i += 1;
                    one(l as u32 % 32)
                }
                _ => Err(self.syntax("`\\c` must be followed by a letter".into(), start)),
            },
            'x' => match self.hex_digits(2) {
                Some(cp) => one(cp),
                None => Err(self.syntax("`\\x` needs two hex digits".into(), start)),
            },
            'u' => match self.unicode_escape() {
                Some(cp) => one(cp),
                None => Err(self.syntax("`\\u` needs four hex digits or {hex}".into(), start)),
            },
            'p' | 'P' => {
                let set = self.property_escape(start)?;
                Ok(if c == 'P' { complement(&set) } else { set })
            }
            _ if c.is_ascii_alphanumeric() => Err(self.syntax(format!("unknown escape `\\{c}`"), start)),
            _ => one(c as u32),
        }
    }

    /// After `\p` or `\P` (at `start`): `{name}`, the property's code points.
    fn property_escape(&mut self, start: usize) -> Result<Ranges> {
        let end = match self.peek(0) {
            Some('{') => self.src[self.i..].iter().position(|&c| c == '}').map(|n| self.i + n),
            _ => None,
        };
        let Some(end) = end else { return Err(self.syntax("`\\p` needs a property name in braces".into(), start)) };
        let name: String = self.src[self.i + 1..end].iter().collect();
        self.i = end + 1;
        super::properties::property(&name).map_err(|why| self.syntax(why, start))
    }

    /// One member of a class at the position.
    fn class_atom(&mut self) -> Result<ClassAtom> {
        match self.peek(0) {
            Some('\\') => {
                let set = self.escape()?;
                Ok(match set.as_slice() {
                    &[(lo, hi)] if lo == hi => ClassAtom::Char(lo),
                    _ => ClassAtom::Set(set),
                })
            }
            Some(c) => {
                self.i += 1;
                Ok(ClassAtom::Char(c as u32))
            }
            None => Err(self.syntax("unterminated character class `[`".into(), self.i)),
        }
    }

    /// The class at the position (`[...]` or `[^...]`): its characters.
    fn char_class(&mut self) -> Result<Ranges> {
        let start = self.i;
        self.i += 1;
        let negated = self.peek(0) == Some('^');
        if negated {
            self.i += 1;
        }
        let mut members = Vec::new();
        loop {
            match self.peek(0) {
                None => return Err(self.syntax("unterminated character class `[`".into(), start)),
                Some(']') => {
                    self.i += 1;
                    break;
                }
                Some(_) => {}
            }
            crate::util::interrupt::check()?;
            match self.class_atom()? {
                ClassAtom::Char(lo) if self.peek(0) == Some('-') && !matches!(self.peek(1), None | Some(']')) => {
                    self.i += 1;
                    match self.class_atom()? {
                        ClassAtom::Set(_) => return Err(self.syntax("a class escape cannot end a range".into(), self.i)),
                        ClassAtom::Char(hi) if hi < lo => {
                            return Err(self.syntax("range out of order in character class".into(), self.i))
                        }
                        ClassAtom::Char(hi) => members.push((lo, hi)),
                    }
                }
                ClassAtom::Char(c) => members.push((c, c)),
                ClassAtom::Set(set) => members.extend(set),
            }
        }
        let set = normalize(members);
        Ok(if negated { complement(&set) } else { set })
    }
}
