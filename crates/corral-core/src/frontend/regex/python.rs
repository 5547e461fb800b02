//! Python's `re` syntax, read the way CPython 3.11 reads it, and its meaning as a
//! regex-syntax HIR.
//!
//! The reader follows CPython's own parser step by step (its tokens, its error messages
//! and their positions, its quirks: `{` that is not a repetition is a literal, `]` first
//! in a class is a literal, `--` and `&&` are plain characters, global flags only at the
//! start), and keeps the intermediate form CPython compiles from, because a few of
//! CPython's rewrites change what a case-insensitive pattern matches (an alternation of
//! single characters becomes a set; a set tests the lower-cased character). The lowering
//! then gives each node CPython's meaning under the flags in force where it stands
//! (scoped flags apply only inside their group).
//!
//! Constructs a DFA over the whole output cannot express (backreferences, look-around,
//! conditionals, atomic groups, possessive repetitions, word boundaries, anchors away
//! from the ends) are named by [`Error::UnsupportedRegex`], but only once the whole
//! pattern is known to be valid: a pattern Python refuses is always a syntax error.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex_syntax::hir::{self, Class, ClassUnicode, ClassUnicodeRange, Hir};

use super::PerlClasses;
use crate::error::{Error, Result};
use crate::util::hash::FastMap;

/// CPython's repetition bound: a count must be below it, and it stands for "unbounded".
const MAXREPEAT: u64 = 4_294_967_295;
/// CPython's group limit.
const MAXGROUPS: u64 = 1_073_741_823;
/// CPython's largest look-behind width (`MAXCODE`).
const MAXCODE: u128 = (1 << 32) - 1;
/// CPython's width of an unbounded subpattern (`MAXWIDTH`).
const MAXWIDTH: u128 = 1 << 64;

// Flags, with CPython's values.
const F_TEMPLATE: u32 = 1;
const F_I: u32 = 2;
const F_L: u32 = 4;
const F_M: u32 = 8;
const F_S: u32 = 16;
const F_U: u32 = 32;
const F_X: u32 = 64;
const F_A: u32 = 256;
/// The flags that choose how `\w`, `\d`, `\s` and case folding read characters.
const TYPE_FLAGS: u32 = F_A | F_L | F_U;
/// Flags that can only be set for the whole pattern.
const GLOBAL_FLAGS: u32 = F_TEMPLATE;

fn flag_of(c: char) -> Option<u32> {
    Some(match c {
        'i' => F_I,
        'L' => F_L,
        'm' => F_M,
        's' => F_S,
        'x' => F_X,
        'a' => F_A,
        't' => F_TEMPLATE,
        'u' => F_U,
        _ => return None,
    })
}

/// What verbose mode skips (CPython's list; not Unicode whitespace).
fn is_verbose_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Characters that are syntax outside a class (`)` and `|` end a sequence).
fn is_special(c: char) -> bool {
    ".\\[{()*+?^$|".contains(c)
}

fn is_octal(c: char) -> bool {
    ('0'..='7').contains(&c)
}

/// `\d \s \w` and their negations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    Digit,
    NotDigit,
    Space,
    NotSpace,
    Word,
    NotWord,
}

/// Zero-width assertions CPython calls `AT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// `^`
    Beginning,
    /// `\A`
    BeginningString,
    /// `$`
    End,
    /// `\Z`
    EndString,
    /// `\b` or `\B`
    Boundary,
}

/// One member of a character set, as CPython keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SetItem {
    Negate,
    Literal(u32),
    Range(u32, u32),
    Category(Category),
    /// A `\N{...}` escape: a character corral cannot name (no Unicode name table).
    Named(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RepeatKind {
    Greedy,
    Lazy,
    Possessive,
}

/// CPython's intermediate form of a pattern (positions are character offsets).
#[derive(Debug, Clone)]
enum Node {
    Literal(u32),
    NotLiteral(u32),
    In(Vec<SetItem>),
    Any,
    At(Anchor, usize),
    /// `max` None: unbounded.
    Repeat {
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
        body: Seq,
        at: usize,
    },
    Group {
        group: Option<usize>,
        add: u32,
        del: u32,
        body: Seq,
    },
    Branch(Vec<Seq>),
    Assert {
        behind: bool,
        body: Seq,
        at: usize,
    },
    Atomic {
        body: Seq,
        at: usize,
    },
    GroupRef {
        group: usize,
        named: bool,
        at: usize,
    },
    Conditional {
        yes: Seq,
        no: Option<Seq>,
        at: usize,
    },
    /// `\N{...}` outside a class.
    Named(usize),
}

type Seq = Vec<Node>;

/// CPython's `(op, av)` equality, used to find the common prefix of alternatives: nodes
/// holding a subpattern compare by identity there, so they never match.
fn same_node(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Literal(x), Node::Literal(y)) | (Node::NotLiteral(x), Node::NotLiteral(y)) => x == y,
        (Node::In(x), Node::In(y)) => x == y,
        (Node::Any, Node::Any) => true,
        (Node::At(x, _), Node::At(y, _)) => x == y,
        (Node::GroupRef { group: x, .. }, Node::GroupRef { group: y, .. }) => x == y,
        _ => false,
    }
}

/// Keeps the first of equal items, in order.
fn unique(items: Vec<SetItem>) -> Vec<SetItem> {
    let mut out: Vec<SetItem> = Vec::with_capacity(items.len());
    for it in items {
        if !out.contains(&it) {
            out.push(it);
        }
    }
    out
}

/// One token: a character, or a backslash and the character after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Char(char),
    Esc(char),
}

impl Tok {
    fn len(self) -> usize {
        match self {
            Tok::Char(_) => 1,
            Tok::Esc(_) => 2,
        }
    }

    fn text(self) -> String {
        match self {
            Tok::Char(c) => c.to_string(),
            Tok::Esc(c) => format!("\\{c}"),
        }
    }
}

/// CPython's tokenizer: one token of look-ahead, positions in characters.
struct Source<'p> {
    pattern: &'p str,
    chars: Vec<char>,
    index: usize,
    next: Option<Tok>,
}

impl<'p> Source<'p> {
    fn new(pattern: &'p str) -> Result<Self> {
        let mut s = Source { pattern, chars: pattern.chars().collect(), index: 0, next: None };
        s.advance()?;
        Ok(s)
    }

    fn advance(&mut self) -> Result<()> {
        let Some(&c) = self.chars.get(self.index) else {
            self.next = None;
            return Ok(());
        };
        if c == '\\' {
            let Some(&e) = self.chars.get(self.index + 1) else {
                return Err(syntax(self.pattern, self.chars.len() - 1, "bad escape (end of pattern)"));
            };
            self.index += 2;
            self.next = Some(Tok::Esc(e));
        } else {
            self.index += 1;
            self.next = Some(Tok::Char(c));
        }
        Ok(())
    }

    fn get(&mut self) -> Result<Option<Tok>> {
        let t = self.next;
        self.advance()?;
        Ok(t)
    }

    /// Takes the next token if it is the plain character `c`.
    fn eat(&mut self, c: char) -> Result<bool> {
        if self.next == Some(Tok::Char(c)) {
            self.advance()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn next_is(&self, c: char) -> bool {
        self.next == Some(Tok::Char(c))
    }

    fn tell(&self) -> usize {
        self.index - self.next.map_or(0, Tok::len)
    }

    fn seek(&mut self, index: usize) -> Result<()> {
        self.index = index;
        self.advance()
    }

    /// Up to `n` plain characters for which `ok` holds.
    fn take_while(&mut self, n: usize, ok: fn(char) -> bool) -> Result<String> {
        let mut out = String::new();
        for _ in 0..n {
            match self.next {
                Some(Tok::Char(c)) if ok(c) => {
                    out.push(c);
                    self.advance()?;
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// The text up to `end` (consumed), as CPython's `getuntil`.
    fn take_until(&mut self, end: char, what: &str) -> Result<String> {
        let mut out = String::new();
        loop {
            let t = self.get()?;
            match t {
                None if out.is_empty() => return Err(self.error(&format!("missing {what}"), 0)),
                None => {
                    let n = out.chars().count();
                    return Err(self.error(&format!("missing {end}, unterminated name"), n));
                }
                Some(Tok::Char(c)) if c == end => {
                    if out.is_empty() {
                        return Err(self.error(&format!("missing {what}"), 1));
                    }
                    return Ok(out);
                }
                Some(t) => out.push_str(&t.text()),
            }
        }
    }

    /// A syntax error `offset` characters before the current position.
    fn error(&self, message: &str, offset: usize) -> Error {
        syntax(self.pattern, self.tell().saturating_sub(offset), message)
    }
}

pub(super) fn syntax(pattern: &str, position: usize, message: &str) -> Error {
    Error::RegexSyntax { message: message.to_string(), pattern: pattern.to_string(), position }
}

pub(super) fn unsupported(pattern: &str, position: usize, construct: &str) -> Error {
    Error::UnsupportedRegex { construct: construct.to_string(), pattern: pattern.to_string(), position }
}

/// What an escape stands for.
enum Code {
    Literal(u32),
    Category(Category),
    At(Anchor),
    GroupRef(usize),
    /// `\N{...}`.
    Named,
}

fn category_of(c: char) -> Option<Category> {
    Some(match c {
        'd' => Category::Digit,
        'D' => Category::NotDigit,
        's' => Category::Space,
        'S' => Category::NotSpace,
        'w' => Category::Word,
        'W' => Category::NotWord,
        _ => return None,
    })
}

fn simple_escape(c: char, in_class: bool) -> Option<u32> {
    Some(match c {
        'a' => 7,
        'b' if in_class => 8,
        'f' => 12,
        'n' => 10,
        'r' => 13,
        't' => 9,
        'v' => 11,
        '\\' => 92,
        _ => return None,
    })
}

/// Is `name` a Python identifier (`str.isidentifier`)?
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    let (start, cont) = identifier_classes();
    (first == '_' || contains(start, first as u32)) && chars.all(|c| contains(cont, c as u32))
}

/// The parse state CPython keeps: flags and groups.
struct State {
    flags: u32,
    names: FastMap<String, usize>,
    /// The width of each closed group (index 0: the whole pattern, never closed).
    widths: Vec<Option<(u128, u128)>>,
    /// While inside a look-behind: the number of groups when it opened.
    lookbehind_groups: Option<usize>,
    /// Conditional groups by number, with the position of their first use.
    condition_refs: BTreeMap<u64, usize>,
}

impl State {
    fn groups(&self) -> usize {
        self.widths.len()
    }

    fn closed(&self, gid: usize) -> bool {
        gid < self.groups() && self.widths[gid].is_some()
    }
}

struct Parser<'p> {
    src: Source<'p>,
    state: State,
    /// Nesting of groups now, bounded by the nest limit (recursion depth).
    open: u32,
    nest_limit: u32,
}

/// What a parsed sequence is, with its nesting depth as regex-syntax counts it (a
/// concatenation or alternation of two or more items, a group, a repetition and a class
/// each add one level).
struct Parsed {
    seq: Seq,
    depth: u32,
}

impl<'p> Parser<'p> {
    fn check_lookbehind_group(&self, gid: usize) -> Result<()> {
        if let Some(lb) = self.state.lookbehind_groups {
            if !self.state.closed(gid) {
                return Err(self.src.error("cannot refer to an open group", 0));
            }
            if gid >= lb {
                return Err(self.src.error("cannot refer to group defined in the same lookbehind subpattern", 0));
            }
        }
        Ok(())
    }

    fn check_group_name(&self, name: &str, offset: usize) -> Result<()> {
        if !is_identifier(name) {
            return Err(self.src.error(&format!("bad character in group name {name:?}"), name.chars().count() + offset));
        }
        Ok(())
    }

    /// `\x`, `\u`, `\U` (after the letter): exactly `n` hex digits.
    fn hex_escape(&mut self, letter: char, n: usize) -> Result<u32> {
        let digits = self.src.take_while(n, |c| c.is_ascii_hexdigit())?;
        let text = format!("\\{letter}{digits}");
        if digits.len() != n {
            return Err(self.src.error(&format!("incomplete escape {text}"), text.chars().count()));
        }
        let value = u32::from_str_radix(&digits, 16).unwrap_or(u32::MAX);
        if value > 0x10FFFF {
            return Err(self.src.error(&format!("bad escape {text}"), text.chars().count()));
        }
        Ok(value)
    }

    /// `\N{name}` (after the `N`): checked for shape only.
    fn named_escape(&mut self) -> Result<Code> {
        if !self.src.eat('{')? {
            return Err(self.src.error("missing {", 0));
        }
        self.src.take_until('}', "character name")?;
        Ok(Code::Named)
    }

    fn bad_escape(&self, text: &str) -> Error {
        let mut message = format!("bad escape {text}");
        if text == "\\p" || text == "\\P" {
            message.push_str(" (Python's re has no \\p{...} property classes; write an explicit class such as [a-zA-Z])");
        }
        self.src.error(&message, text.chars().count())
    }

    /// An escape inside a class.
    fn class_escape(&mut self, e: char) -> Result<Code> {
        if let Some(v) = simple_escape(e, true) {
            return Ok(Code::Literal(v));
        }
        if let Some(c) = category_of(e) {
            return Ok(Code::Category(c));
        }
        match e {
            'x' => Ok(Code::Literal(self.hex_escape('x', 2)?)),
            'u' => Ok(Code::Literal(self.hex_escape('u', 4)?)),
            'U' => Ok(Code::Literal(self.hex_escape('U', 8)?)),
            'N' => self.named_escape(),
            c if is_octal(c) => {
                let more = self.src.take_while(2, is_octal)?;
                let text = format!("{c}{more}");
                let value = u32::from_str_radix(&text, 8).unwrap_or(u32::MAX);
                if value > 0o377 {
                    return Err(self.src.error(&format!("octal escape value \\{text} outside of range 0-0o377"), text.len() + 1));
                }
                Ok(Code::Literal(value))
            }
            c if c.is_ascii_alphanumeric() => Err(self.bad_escape(&format!("\\{c}"))),
            c => Ok(Code::Literal(c as u32)),
        }
    }

    /// An escape outside a class.
    fn escape(&mut self, e: char) -> Result<Code> {
        match e {
            'A' => return Ok(Code::At(Anchor::BeginningString)),
            'Z' => return Ok(Code::At(Anchor::EndString)),
            'b' | 'B' => return Ok(Code::At(Anchor::Boundary)),
            _ => {}
        }
        if let Some(c) = category_of(e) {
            return Ok(Code::Category(c));
        }
        if let Some(v) = simple_escape(e, false) {
            return Ok(Code::Literal(v));
        }
        match e {
            'x' => Ok(Code::Literal(self.hex_escape('x', 2)?)),
            'u' => Ok(Code::Literal(self.hex_escape('u', 4)?)),
            'U' => Ok(Code::Literal(self.hex_escape('U', 8)?)),
            'N' => self.named_escape(),
            '0' => {
                let more = self.src.take_while(2, is_octal)?;
                Ok(Code::Literal(u32::from_str_radix(&format!("0{more}"), 8).unwrap_or(0)))
            }
            '1'..='9' => {
                // An octal escape (three octal digits) or a group reference (one or two digits).
                let mut digits = e.to_string();
                if let Some(Tok::Char(d)) = self.src.next {
                    if d.is_ascii_digit() {
                        self.src.advance()?;
                        digits.push(d);
                        if let Some(Tok::Char(t)) = self.src.next {
                            if is_octal(e) && is_octal(d) && is_octal(t) {
                                self.src.advance()?;
                                digits.push(t);
                                let value = u32::from_str_radix(&digits, 8).unwrap_or(u32::MAX);
                                if value > 0o377 {
                                    return Err(self.src.error(
                                        &format!("octal escape value \\{digits} outside of range 0-0o377"),
                                        digits.len() + 1,
                                    ));
                                }
                                return Ok(Code::Literal(value));
                            }
                        }
                    }
                }
                let group: usize = digits.parse().unwrap_or(usize::MAX);
                if group < self.state.groups() {
                    if !self.state.closed(group) {
                        return Err(self.src.error("cannot refer to an open group", digits.len() + 1));
                    }
                    self.check_lookbehind_group(group)?;
                    return Ok(Code::GroupRef(group));
                }
                Err(self.src.error(&format!("invalid group reference {group}"), digits.len()))
            }
            c if c.is_ascii_alphabetic() => Err(self.bad_escape(&format!("\\{c}"))),
            c => Ok(Code::Literal(c as u32)),
        }
    }

    /// Alternatives separated by `|` (CPython's `_parse_sub`).
    fn alternation(&mut self, verbose: bool, nested: u32) -> Result<Parsed> {
        let mut verbose = verbose;
        let mut items: Vec<Seq> = Vec::new();
        let mut depth = 0;
        loop {
            let first = nested == 0 && items.is_empty();
            let p = self.sequence(verbose, nested + 1, first)?;
            depth = depth.max(p.depth);
            items.push(p.seq);
            if !self.src.eat('|')? {
                break;
            }
            if nested == 0 {
                verbose = self.state.flags & F_X != 0;
            }
        }
        if items.len() == 1 {
            return Ok(Parsed { seq: items.pop().unwrap_or_default(), depth });
        }
        let depth = depth + 1;
        let mut out = Seq::new();
        // A prefix common to every alternative moves out of them.
        loop {
            if items.iter().any(|it| it.is_empty()) {
                break;
            }
            if !items.iter().all(|it| same_node(&it[0], &items[0][0])) {
                break;
            }
            let head = items[0][0].clone();
            for it in &mut items {
                it.remove(0);
            }
            out.push(head);
        }
        // Alternatives of single characters or sets become one set.
        let mut set = Vec::new();
        let all_sets = items.iter().all(|it| {
            if it.len() != 1 {
                return false;
            }
            match &it[0] {
                Node::Literal(c) => {
                    set.push(SetItem::Literal(*c));
                    true
                }
                Node::In(av) if av.first() != Some(&SetItem::Negate) => {
                    set.extend(av.iter().cloned());
                    true
                }
                _ => false,
            }
        });
        if all_sets {
            out.push(Node::In(unique(set)));
        } else {
            out.push(Node::Branch(items));
        }
        Ok(Parsed { seq: out, depth })
    }

    /// A sequence of items up to `|`, `)` or the end (CPython's `_parse`).
    fn sequence(&mut self, verbose: bool, nested: u32, first: bool) -> Result<Parsed> {
        let mut verbose = verbose;
        let mut seq = Seq::new();
        // Depths of the items as regex-syntax would see them (global flags count).
        let mut depths: Vec<u32> = Vec::new();
        while let Some(this) = self.src.next {
            if this == Tok::Char('|') || this == Tok::Char(')') {
                break;
            }
            let start = self.src.tell();
            self.src.advance()?;
            if verbose {
                match this {
                    Tok::Char(c) if is_verbose_space(c) => continue,
                    Tok::Char('#') => {
                        loop {
                            match self.src.get()? {
                                None | Some(Tok::Char('\n')) => break,
                                _ => {}
                            }
                        }
                        continue;
                    }
                    _ => {}
                }
            }
            match this {
                Tok::Esc(e) => {
                    let node = match self.escape(e)? {
                        Code::Literal(c) => Node::Literal(c),
                        Code::Category(c) => Node::In(vec![SetItem::Category(c)]),
                        Code::At(a) => Node::At(a, start),
                        Code::GroupRef(g) => Node::GroupRef { group: g, named: false, at: start },
                        Code::Named => Node::Named(start),
                    };
                    seq.push(node);
                    depths.push(0);
                }
                Tok::Char(c) if !is_special(c) => {
                    seq.push(Node::Literal(c as u32));
                    depths.push(0);
                }
                Tok::Char('[') => {
                    let (node, depth) = self.class(start)?;
                    seq.push(node);
                    depths.push(depth);
                }
                Tok::Char(q @ ('*' | '+' | '?' | '{')) => {
                    let here = self.src.tell();
                    let (min, max) = match q {
                        '?' => (0, Some(1)),
                        '*' => (0, None),
                        '+' => (1, None),
                        _ => {
                            if self.src.next_is('}') {
                                seq.push(Node::Literal('{' as u32));
                                depths.push(0);
                                continue;
                            }
                            let lo = self.src.take_while(usize::MAX, |c| c.is_ascii_digit())?;
                            let hi = if self.src.eat(',')? {
                                self.src.take_while(usize::MAX, |c| c.is_ascii_digit())?
                            } else {
                                lo.clone()
                            };
                            if !self.src.eat('}')? {
                                // Not a repetition: a literal brace.
                                seq.push(Node::Literal('{' as u32));
                                depths.push(0);
                                self.src.seek(here)?;
                                continue;
                            }
                            let count = |digits: &str| -> Result<u64> {
                                let v = digits.parse::<u64>().unwrap_or(u64::MAX);
                                if v >= MAXREPEAT {
                                    return Err(syntax(self.src.pattern, start, "the repetition number is too large"));
                                }
                                Ok(v)
                            };
                            let min = if lo.is_empty() { 0 } else { count(&lo)? };
                            let max = if hi.is_empty() { None } else { Some(count(&hi)?) };
                            if max.is_some_and(|m| m < min) {
                                return Err(self.src.error("min repeat greater than max repeat", self.src.tell() - here));
                            }
                            (min as u32, max.map(|m| m as u32))
                        }
                    };
                    let offset = self.src.tell() - here + 1;
                    match seq.last() {
                        None | Some(Node::At(..)) => return Err(self.src.error("nothing to repeat", offset)),
                        Some(Node::Repeat { .. }) => return Err(self.src.error("multiple repeat", offset)),
                        _ => {}
                    }
                    let item = seq.pop().unwrap_or(Node::Any);
                    let body = match item {
                        Node::Group { group: None, add: 0, del: 0, body } => body,
                        other => vec![other],
                    };
                    let kind = if self.src.eat('?')? {
                        RepeatKind::Lazy
                    } else if self.src.eat('+')? {
                        RepeatKind::Possessive
                    } else {
                        RepeatKind::Greedy
                    };
                    seq.push(Node::Repeat { min, max, kind, body, at: start });
                    if let Some(d) = depths.last_mut() {
                        *d += 1;
                    }
                }
                Tok::Char('.') => {
                    seq.push(Node::Any);
                    depths.push(0);
                }
                Tok::Char('(') => {
                    if let Some((node, depth, now_verbose)) = self.group(start, verbose, nested, first && seq.is_empty())? {
                        if let Some(node) = node {
                            seq.push(node);
                        }
                        depths.push(depth);
                        verbose = now_verbose;
                    }
                }
                Tok::Char('^') => {
                    seq.push(Node::At(Anchor::Beginning, start));
                    depths.push(0);
                }
                Tok::Char('$') => {
                    seq.push(Node::At(Anchor::End, start));
                    depths.push(0);
                }
                // Every special character is handled above; anything else is itself.
                Tok::Char(c) => {
                    seq.push(Node::Literal(c as u32));
                    depths.push(0);
                }
            }
        }
        // Groups without a number or flags dissolve into the sequence.
        let mut out = Seq::with_capacity(seq.len());
        for node in seq {
            match node {
                Node::Group { group: None, add: 0, del: 0, body } => out.extend(body),
                other => out.push(other),
            }
        }
        let depth = depths.iter().copied().max().unwrap_or(0) + u32::from(depths.len() >= 2);
        Ok(Parsed { seq: out, depth })
    }

    /// A `[...]` set (after the `[` at `here`).
    fn class(&mut self, here: usize) -> Result<(Node, u32)> {
        let unterminated = |s: &Self| syntax(s.src.pattern, here, "unterminated character set");
        let negate = self.src.eat('^')?;
        let mut set: Vec<SetItem> = Vec::new();
        let mut count = 0usize;
        loop {
            let at = self.src.tell();
            let Some(this) = self.src.get()? else { return Err(unterminated(self)) };
            if this == Tok::Char(']') && count > 0 {
                break;
            }
            count += 1;
            let code1 = match this {
                Tok::Esc(e) => self.class_escape(e)?,
                Tok::Char(c) => Code::Literal(c as u32),
            };
            if self.src.eat('-')? {
                let Some(that) = self.src.get()? else { return Err(unterminated(self)) };
                if that == Tok::Char(']') {
                    set.push(set_item(code1, at));
                    set.push(SetItem::Literal('-' as u32));
                    break;
                }
                let code2 = match that {
                    Tok::Esc(e) => self.class_escape(e)?,
                    Tok::Char(c) => Code::Literal(c as u32),
                };
                let bad = |s: &Self| {
                    let text = format!("bad character range {}-{}", this.text(), that.text());
                    s.src.error(&text, this.len() + 1 + that.len())
                };
                match (code1, code2) {
                    (Code::Literal(lo), Code::Literal(hi)) => {
                        if hi < lo {
                            return Err(bad(self));
                        }
                        set.push(SetItem::Range(lo, hi));
                    }
                    (Code::Literal(_) | Code::Named, Code::Literal(_) | Code::Named) => {
                        set.push(SetItem::Named(at));
                    }
                    _ => return Err(bad(self)),
                }
            } else {
                set.push(set_item(code1, at));
            }
        }
        let set = unique(set);
        let depth = 1 + u32::from(count >= 2);
        if let [SetItem::Literal(c)] = set[..] {
            return Ok((if negate { Node::NotLiteral(c) } else { Node::Literal(c) }, depth));
        }
        let mut items = set;
        if negate {
            items.insert(0, SetItem::Negate);
        }
        Ok((Node::In(items), depth))
    }

    /// Inline flags after `(?` (the first flag character `c` already read): None for
    /// global flags `(?aiLmsux)`, else the flags added and removed by `(?flags-flags:`.
    fn flags(&mut self, mut c: Tok) -> Result<Option<(u32, u32)>> {
        let mut add = 0;
        let mut del = 0;
        let flag_char = |t: Tok| match t {
            Tok::Char(c) => flag_of(c),
            Tok::Esc(_) => None,
        };
        if c != Tok::Char('-') {
            loop {
                let flag = flag_char(c).unwrap_or(0);
                if flag == F_L {
                    return Err(self.src.error("bad inline flags: cannot use 'L' flag with a str pattern", 0));
                }
                add |= flag;
                if flag & TYPE_FLAGS != 0 && add & TYPE_FLAGS != flag {
                    return Err(self.src.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible", 0));
                }
                let Some(next) = self.src.get()? else { return Err(self.src.error("missing -, : or )", 0)) };
                c = next;
                if matches!(c, Tok::Char(')' | '-' | ':')) {
                    break;
                }
                if flag_char(c).is_none() {
                    let alpha = matches!(c, Tok::Char(ch) if ch.is_alphabetic());
                    return Err(self.src.error(if alpha { "unknown flag" } else { "missing -, : or )" }, c.len()));
                }
            }
        }
        if c == Tok::Char(')') {
            self.state.flags |= add;
            return Ok(None);
        }
        if add & GLOBAL_FLAGS != 0 {
            return Err(self.src.error("bad inline flags: cannot turn on global flag", 1));
        }
        if c == Tok::Char('-') {
            let Some(next) = self.src.get()? else { return Err(self.src.error("missing flag", 0)) };
            c = next;
            if flag_char(c).is_none() {
                let alpha = matches!(c, Tok::Char(ch) if ch.is_alphabetic());
                return Err(self.src.error(if alpha { "unknown flag" } else { "missing flag" }, c.len()));
            }
            loop {
                let flag = flag_char(c).unwrap_or(0);
                if flag & TYPE_FLAGS != 0 {
                    return Err(self.src.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", 0));
                }
                del |= flag;
                let Some(next) = self.src.get()? else { return Err(self.src.error("missing :", 0)) };
                c = next;
                if c == Tok::Char(':') {
                    break;
                }
                if flag_char(c).is_none() {
                    let alpha = matches!(c, Tok::Char(ch) if ch.is_alphabetic());
                    return Err(self.src.error(if alpha { "unknown flag" } else { "missing :" }, c.len()));
                }
            }
        }
        if del & GLOBAL_FLAGS != 0 {
            return Err(self.src.error("bad inline flags: cannot turn off global flag", 1));
        }
        if add & del != 0 {
            return Err(self.src.error("bad inline flags: flag turned on and off", 1));
        }
        Ok(Some((add, del)))
    }

    fn enter(&mut self) -> Result<()> {
        self.open += 1;
        if self.open > self.nest_limit {
            return Err(Error::LimitExceeded {
                limit: "regex_nest_limit",
                value: self.nest_limit as usize,
                context: "the nesting depth of the regex".to_string(),
            });
        }
        Ok(())
    }

    fn close_paren(&mut self, start: usize) -> Result<()> {
        if !self.src.eat(')')? {
            return Err(self.src.error("missing ), unterminated subpattern", self.src.tell() - start));
        }
        Ok(())
    }

    /// A group after the `(` at `start`. None: nothing (a comment); Some((node, depth,
    /// verbose)): the node (None for global flags), its depth, and whether the rest of
    /// the sequence is verbose.
    #[allow(clippy::type_complexity)]
    fn group(&mut self, start: usize, verbose: bool, nested: u32, at_start: bool) -> Result<Option<(Option<Node>, u32, bool)>> {
        let mut capture = true;
        let mut atomic = false;
        let mut name: Option<String> = None;
        let (mut add, mut del) = (0, 0);
        if self.src.eat('?')? {
            let Some(c) = self.src.get()? else { return Err(self.src.error("unexpected end of pattern", 0)) };
            match c {
                Tok::Char('P') => {
                    if self.src.eat('<')? {
                        let n = self.src.take_until('>', "group name")?;
                        self.check_group_name(&n, 1)?;
                        name = Some(n);
                    } else if self.src.eat('=')? {
                        let n = self.src.take_until(')', "group name")?;
                        self.check_group_name(&n, 1)?;
                        let len = n.chars().count() + 1;
                        let Some(&gid) = self.state.names.get(&n) else {
                            return Err(self.src.error(&format!("unknown group name {n:?}"), len));
                        };
                        if !self.state.closed(gid) {
                            return Err(self.src.error("cannot refer to an open group", len));
                        }
                        self.check_lookbehind_group(gid)?;
                        return Ok(Some((Some(Node::GroupRef { group: gid, named: true, at: start }), 0, verbose)));
                    } else {
                        let Some(c) = self.src.get()? else { return Err(self.src.error("unexpected end of pattern", 0)) };
                        return Err(self.src.error(&format!("unknown extension ?P{}", c.text()), c.len() + 2));
                    }
                }
                Tok::Char(':') => capture = false,
                Tok::Char('#') => {
                    loop {
                        if self.src.next.is_none() {
                            return Err(self.src.error("missing ), unterminated comment", self.src.tell() - start));
                        }
                        if self.src.get()? == Some(Tok::Char(')')) {
                            break;
                        }
                    }
                    return Ok(None);
                }
                Tok::Char(k @ ('=' | '!' | '<')) => {
                    let mut behind = false;
                    if k == '<' {
                        let Some(c) = self.src.get()? else { return Err(self.src.error("unexpected end of pattern", 0)) };
                        if !matches!(c, Tok::Char('=' | '!')) {
                            return Err(self.src.error(&format!("unknown extension ?<{}", c.text()), c.len() + 2));
                        }
                        behind = true;
                    }
                    let outer = self.state.lookbehind_groups;
                    if behind && outer.is_none() {
                        self.state.lookbehind_groups = Some(self.state.groups());
                    }
                    self.enter()?;
                    let p = self.alternation(verbose, nested + 1)?;
                    self.open -= 1;
                    if behind && outer.is_none() {
                        self.state.lookbehind_groups = None;
                    }
                    self.close_paren(start)?;
                    return Ok(Some((Some(Node::Assert { behind, body: p.seq, at: start }), p.depth + 1, verbose)));
                }
                Tok::Char('(') => return self.conditional(start, verbose, nested).map(Some),
                Tok::Char('>') => {
                    capture = false;
                    atomic = true;
                }
                Tok::Char(f) if flag_of(f).is_some() || f == '-' => match self.flags(c)? {
                    None => {
                        if !at_start {
                            return Err(self
                                .src
                                .error("global flags not at the start of the expression", self.src.tell() - start));
                        }
                        return Ok(Some((None, 0, self.state.flags & F_X != 0)));
                    }
                    Some((a, d)) => {
                        add = a;
                        del = d;
                        capture = false;
                    }
                },
                other => return Err(self.src.error(&format!("unknown extension ?{}", other.text()), other.len() + 1)),
            }
        }
        let group = if capture {
            let gid = self.state.groups();
            self.state.widths.push(None);
            if gid as u64 >= MAXGROUPS {
                return Err(self.src.error("too many groups", 0));
            }
            if let Some(n) = &name {
                if let Some(&old) = self.state.names.get(n) {
                    let msg = format!("redefinition of group name {n:?} as group {gid}; was group {old}");
                    return Err(self.src.error(&msg, n.chars().count() + 1));
                }
                self.state.names.insert(n.clone(), gid);
            }
            Some(gid)
        } else {
            None
        };
        let sub_verbose = (verbose || add & F_X != 0) && del & F_X == 0;
        self.enter()?;
        let p = self.alternation(sub_verbose, nested + 1)?;
        self.open -= 1;
        self.close_paren(start)?;
        if let Some(gid) = group {
            self.state.widths[gid] = Some(width(&p.seq, &self.state));
        }
        let node = if atomic { Node::Atomic { body: p.seq, at: start } } else { Node::Group { group, add, del, body: p.seq } };
        Ok(Some((Some(node), p.depth + 1, verbose)))
    }

    /// A conditional group `(?(id)yes|no)` after its `(?(`.
    fn conditional(&mut self, start: usize, verbose: bool, nested: u32) -> Result<(Option<Node>, u32, bool)> {
        let name = self.src.take_until(')', "group name")?;
        let len = name.chars().count() + 1;
        let group: u64 = if is_identifier(&name) {
            match self.state.names.get(&name) {
                Some(&g) => g as u64,
                None => return Err(self.src.error(&format!("unknown group name {name:?}"), len)),
            }
        } else {
            let bad = |s: &Self| s.src.error(&format!("bad character in group name {name:?}"), len);
            match python_int(&name) {
                Some(n) if n >= 0 => n as u64,
                Some(_) => return Err(bad(self)),
                // Python's int() reads more than ASCII digits; what it reads is not checked here.
                None if !name.is_ascii() => u64::MAX,
                None => return Err(bad(self)),
            }
        };
        if group == u64::MAX {
            // An id only Python's int() can read: a valid conditional or not, it is refused.
            let p = self.conditional_branches(start, verbose, nested)?;
            return Ok((Some(Node::Conditional { yes: p.0, no: p.1, at: start }), p.2, verbose));
        }
        if !is_identifier(&name) {
            if group == 0 {
                return Err(self.src.error("bad group number", len));
            }
            if group >= MAXGROUPS {
                return Err(self.src.error(&format!("invalid group reference {group}"), len));
            }
            let at = self.src.tell() - len;
            self.state.condition_refs.entry(group).or_insert(at);
        }
        self.check_lookbehind_group(group as usize)?;
        let p = self.conditional_branches(start, verbose, nested)?;
        Ok((Some(Node::Conditional { yes: p.0, no: p.1, at: start }), p.2, verbose))
    }

    fn conditional_branches(&mut self, start: usize, verbose: bool, nested: u32) -> Result<(Seq, Option<Seq>, u32)> {
        self.enter()?;
        let yes = self.sequence(verbose, nested + 1, false)?;
        let mut depth = yes.depth;
        let no = if self.src.eat('|')? {
            let no = self.sequence(verbose, nested + 1, false)?;
            if self.src.next_is('|') {
                return Err(self.src.error("conditional backref with more than two branches", 0));
            }
            depth = depth.max(no.depth);
            Some(no.seq)
        } else {
            None
        };
        self.open -= 1;
        self.close_paren(start)?;
        Ok((yes.seq, no, depth + 2))
    }
}

/// Python's `int()` of a string of ASCII digits (with its sign, surrounding whitespace
/// and single underscores between digits); None for anything else.
fn python_int(text: &str) -> Option<i64> {
    let t = text.trim_matches(|c: char| c.is_whitespace());
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().unwrap_or(i64::MAX);
    Some(if negative { -v } else { v })
}

fn set_item(code: Code, at: usize) -> SetItem {
    match code {
        Code::Literal(c) => SetItem::Literal(c),
        Code::Category(c) => SetItem::Category(c),
        Code::Named => SetItem::Named(at),
        // Class escapes are never anchors or references.
        Code::At(_) | Code::GroupRef(_) => SetItem::Named(at),
    }
}

/// CPython's `getwidth`: the least and greatest length of what `seq` matches.
fn width(seq: &[Node], state: &State) -> (u128, u128) {
    let (mut lo, mut hi) = (0u128, 0u128);
    for node in seq {
        let (i, j) = match node {
            Node::Branch(items) => {
                let mut i = MAXWIDTH;
                let mut j = 0;
                for it in items {
                    let (l, h) = width(it, state);
                    i = i.min(l);
                    j = j.max(h);
                }
                (i, j)
            }
            Node::Atomic { body, .. } | Node::Group { body, .. } => width(body, state),
            Node::Repeat { min, max, body, .. } => {
                let (i, j) = width(body, state);
                let hi_add = match max {
                    None if j > 0 => MAXWIDTH,
                    None => 0,
                    Some(m) => j * *m as u128,
                };
                lo = lo.saturating_add(i * *min as u128);
                hi = hi.saturating_add(hi_add);
                continue;
            }
            Node::Literal(_) | Node::NotLiteral(_) | Node::In(_) | Node::Any | Node::Named(_) => (1, 1),
            Node::GroupRef { group, .. } => state.widths.get(*group).copied().flatten().unwrap_or((0, 0)),
            Node::Conditional { yes, no, .. } => {
                let (mut i, mut j) = width(yes, state);
                match no {
                    Some(n) => {
                        let (l, h) = width(n, state);
                        i = i.min(l);
                        j = j.max(h);
                    }
                    None => i = 0,
                }
                (i, j)
            }
            Node::At(..) | Node::Assert { .. } => (0, 0),
        };
        lo = lo.saturating_add(i);
        hi = hi.saturating_add(j);
    }
    (lo.min(MAXWIDTH), hi.min(MAXWIDTH))
}

/// A parsed pattern: CPython's form, its global flags and its nesting depth.
pub(super) struct Pattern {
    seq: Seq,
    flags: u32,
    pub(super) depth: u32,
    state: State,
}

/// Reads `pattern` as CPython does, refusing what it refuses (with its message and
/// position). `nest_limit` bounds the nesting of groups while reading.
pub(super) fn read(pattern: &str, nest_limit: u32) -> Result<Pattern> {
    let src = Source::new(pattern)?;
    let state = State {
        flags: 0,
        names: FastMap::default(),
        widths: vec![None],
        lookbehind_groups: None,
        condition_refs: BTreeMap::new(),
    };
    let mut p = Parser { src, state, open: 0, nest_limit };
    let parsed = p.alternation(false, 0)?;
    // The type flags: Unicode unless ASCII.
    let mut flags = p.state.flags;
    if flags & F_A == 0 {
        flags |= F_U;
    } else if flags & F_U != 0 {
        return Err(syntax(pattern, 0, "ASCII and UNICODE flags are incompatible"));
    }
    if p.src.next.is_some() {
        return Err(p.src.error("unbalanced parenthesis", 0));
    }
    for (&g, &at) in &p.state.condition_refs {
        if g >= p.state.groups() as u64 {
            return Err(syntax(pattern, at, &format!("invalid group reference {g}")));
        }
    }
    let pat = Pattern { seq: parsed.seq, flags, depth: parsed.depth, state: p.state };
    compile_checks(&pat.seq, pat.flags, &pat.state, pattern)?;
    Ok(pat)
}

/// What CPython refuses when it compiles a parsed pattern: repetitions under the
/// template flag, look-behinds of variable width.
fn compile_checks(seq: &[Node], flags: u32, state: &State, pattern: &str) -> Result<()> {
    for node in seq {
        match node {
            Node::Repeat { body, at, .. } => {
                if flags & F_TEMPLATE != 0 {
                    return Err(syntax(pattern, *at, "internal: unsupported template operator (the (?t) flag)"));
                }
                compile_checks(body, flags, state, pattern)?;
            }
            Node::Assert { behind, body, at } => {
                if *behind {
                    let (lo, hi) = width(body, state);
                    if lo > MAXCODE {
                        return Err(syntax(pattern, *at, "looks too much behind"));
                    }
                    if lo != hi {
                        return Err(syntax(pattern, *at, "look-behind requires fixed-width pattern"));
                    }
                }
                compile_checks(body, flags, state, pattern)?;
            }
            Node::Group { body, .. } | Node::Atomic { body, .. } => compile_checks(body, flags, state, pattern)?,
            Node::Branch(items) => {
                for it in items {
                    compile_checks(it, flags, state, pattern)?;
                }
            }
            Node::Conditional { yes, no, .. } => {
                compile_checks(yes, flags, state, pattern)?;
                if let Some(n) = no {
                    compile_checks(n, flags, state, pattern)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn is_start_anchor(node: &Node) -> bool {
    matches!(node, Node::At(Anchor::Beginning | Anchor::BeginningString, _))
}

fn is_end_anchor(node: &Node) -> bool {
    matches!(node, Node::At(Anchor::End | Anchor::EndString, _))
}

/// Under `re.fullmatch`, `^`/`\A` at the very start and `$`/`\Z` at the very end always
/// hold (`$` before a final newline still needs the match to end at the end): drop them.
/// Anchors anywhere else stay, and are refused when lowered.
fn strip_anchors(seq: &mut Seq, leading: bool) {
    let n = seq.len();
    let mut drop = Vec::new();
    for k in 0..n {
        let k = if leading { k } else { n - 1 - k };
        let anchor = if leading { is_start_anchor(&seq[k]) } else { is_end_anchor(&seq[k]) };
        if anchor {
            drop.push(k);
            continue;
        }
        match &mut seq[k] {
            Node::Group { body, .. } => strip_anchors(body, leading),
            Node::Branch(items) => items.iter_mut().for_each(|it| strip_anchors(it, leading)),
            _ => {}
        }
        break;
    }
    drop.sort_unstable();
    for k in drop.into_iter().rev() {
        seq.remove(k);
    }
}

// ---- Character sets -----------------------------------------------------------------

fn class_of(ranges: impl IntoIterator<Item = (u32, u32)>) -> ClassUnicode {
    let mut out = ClassUnicode::empty();
    for (a, b) in ranges {
        // Surrogates are not characters of UTF-8 text: cut them out.
        let pieces = [(a, b.min(0xD7FF)), (a.max(0xE000), b)];
        for (lo, hi) in pieces {
            if lo > hi {
                continue;
            }
            if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi)) {
                out.push(ClassUnicodeRange::new(lo, hi));
            }
        }
    }
    out
}

fn contains(class: &ClassUnicode, c: u32) -> bool {
    let ranges = class.ranges();
    let i = ranges.partition_point(|r| (r.end() as u32) < c);
    i < ranges.len() && (ranges[i].start() as u32) <= c
}

fn union(mut a: ClassUnicode, b: &ClassUnicode) -> ClassUnicode {
    a.union(b);
    a
}

fn complement(mut a: ClassUnicode) -> ClassUnicode {
    a.negate();
    a
}

/// A Unicode property class by regex-syntax's tables (`\p{name}`).
fn property(name: &str) -> ClassUnicode {
    let hir = regex_syntax::ParserBuilder::new().build().parse(&format!("\\p{{{name}}}"));
    match hir.as_ref().map(|h| h.kind()) {
        Ok(hir::HirKind::Class(Class::Unicode(c))) => c.clone(),
        _ => ClassUnicode::empty(),
    }
}

fn identifier_classes() -> &'static (ClassUnicode, ClassUnicode) {
    static IDS: OnceLock<(ClassUnicode, ClassUnicode)> = OnceLock::new();
    IDS.get_or_init(|| (property("XID_Start"), property("XID_Continue")))
}

/// `\d \w \s` of Unicode mode when the interpreter's sets are not given.
fn default_unicode_categories() -> &'static [ClassUnicode; 3] {
    static SETS: OnceLock<[ClassUnicode; 3]> = OnceLock::new();
    SETS.get_or_init(|| {
        let digit = property("Nd");
        // str.isalnum(): letters and numbers; and `_`.
        let word = union(union(property("L"), &property("N")), &class_of([(0x5F, 0x5F)]));
        // str.isspace().
        let space = class_of([
            (0x09, 0x0D),
            (0x1C, 0x20),
            (0x85, 0x85),
            (0xA0, 0xA0),
            (0x1680, 0x1680),
            (0x2000, 0x200A),
            (0x2028, 0x2029),
            (0x202F, 0x202F),
            (0x205F, 0x205F),
            (0x3000, 0x3000),
        ]);
        [digit, word, space]
    })
}

/// Case mappings as CPython's `re` uses them: the first character of the full lower or
/// upper case mapping (CPython's `_PyUnicode_ToLowercase`/`ToUppercase`), and the
/// lower-case characters that share an upper case (CPython's `re._casefix`).
struct CaseTables {
    /// `(c, lower(c))` for every `c` with `lower(c) != c`, by `c`.
    lowered: Vec<(u32, u32)>,
    /// `(c, upper(c))` for every `c` with `upper(c) != c`, by `c`.
    uppered: Vec<(u32, u32)>,
    /// The first members of `lowered`.
    lowered_class: ClassUnicode,
    /// Characters with a case (`lower(c) != c or upper(c) != c`).
    cased: ClassUnicode,
    /// For a lower-case character, the other lower-case characters with its upper case.
    fixes: FastMap<u32, Vec<u32>>,
}

fn case_tables() -> &'static CaseTables {
    static TABLES: OnceLock<CaseTables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut lowered = Vec::new();
        let mut uppered = Vec::new();
        // Lower-case characters (lower(c) == c) by their full upper-case mapping.
        let mut by_upper: BTreeMap<Vec<char>, Vec<u32>> = BTreeMap::new();
        // Only characters that change under a case mapping can have one (a character
        // that is its own upper case joins a group below).
        let candidates = union(property("Changes_When_Lowercased"), &property("Changes_When_Uppercased"));
        for ch in candidates.iter().flat_map(|r| r.start()..=r.end()) {
            let lower = ch.to_lowercase().next().unwrap_or(ch);
            let mut up = ch.to_uppercase();
            let upper = up.next().unwrap_or(ch);
            if lower != ch {
                lowered.push((ch as u32, lower as u32));
            }
            if upper != ch {
                uppered.push((ch as u32, upper as u32));
            }
            if lower == ch && (upper != ch || up.len() > 0) {
                let mut key = vec![upper];
                key.extend(up);
                by_upper.entry(key).or_default().push(ch as u32);
            }
        }
        // A character that is its own upper case joins the lower-case ones mapping to it.
        for (key, members) in by_upper.iter_mut() {
            if let [k] = key[..] {
                let c = k as u32;
                if !members.contains(&c) && k.to_lowercase().eq([k]) && k.to_uppercase().eq([k]) {
                    members.push(c);
                }
            }
        }
        let mut fixes: FastMap<u32, Vec<u32>> = FastMap::default();
        for members in by_upper.values().filter(|m| m.len() > 1) {
            for &m in members {
                fixes.insert(m, members.iter().copied().filter(|&x| x != m).collect());
            }
        }
        let lowered_class = class_of(lowered.iter().map(|&(c, _)| (c, c)));
        let cased = union(lowered_class.clone(), &class_of(uppered.iter().map(|&(c, _)| (c, c))));
        CaseTables { lowered, uppered, lowered_class, cased, fixes }
    })
}

fn unicode_lower(c: u32) -> u32 {
    char::from_u32(c).and_then(|ch| ch.to_lowercase().next()).map_or(c, |l| l as u32)
}

fn ascii_lower(c: u32) -> u32 {
    if (0x41..=0x5A).contains(&c) {
        c + 0x20
    } else {
        c
    }
}

fn ascii_cased(c: u32) -> bool {
    c < 0x80 && (c as u8).is_ascii_alphabetic()
}

/// The characters `c` whose lower case (`unicode`: Unicode's, else ASCII's) is in `m`.
fn lower_preimage(m: &ClassUnicode, unicode: bool) -> ClassUnicode {
    if unicode {
        let t = case_tables();
        let mut out = m.clone();
        out.difference(&t.lowered_class);
        let extra = t.lowered.iter().filter(|&&(_, l)| contains(m, l)).map(|&(c, _)| (c, c));
        union(out, &class_of(extra))
    } else {
        let mut out = m.clone();
        out.difference(&class_of([(0x41, 0x5A)]));
        let extra = (0x41..=0x5A).filter(|&c| contains(m, c + 0x20)).map(|c| (c, c));
        union(out, &class_of(extra))
    }
}

/// Turns a parsed pattern into regex-syntax's HIR with CPython's meaning.
pub(super) struct Lowering<'a> {
    pub(super) pattern: &'a str,
    pub(super) classes: Option<&'a PerlClasses>,
    /// The characters each case-insensitive literal matches, by (literal, flags): a long
    /// `(?i)` text repeats its letters.
    pub(super) folded: std::cell::RefCell<FastMap<(u32, u32), ClassUnicode>>,
}

impl Lowering<'_> {
    pub(super) fn lower(&self, mut pat: Pattern) -> Result<Hir> {
        strip_anchors(&mut pat.seq, true);
        strip_anchors(&mut pat.seq, false);
        self.seq(&pat.seq, pat.flags)
    }

    fn seq(&self, seq: &[Node], flags: u32) -> Result<Hir> {
        let mut out = Vec::with_capacity(seq.len());
        for node in seq {
            out.push(self.node(node, flags)?);
        }
        Ok(Hir::concat(out))
    }

    fn node(&self, node: &Node, flags: u32) -> Result<Hir> {
        let refuse = |at: usize, what: &str| Err(unsupported(self.pattern, at, what));
        Ok(match node {
            Node::Literal(c) => chars(self.literal(*c, flags)),
            Node::NotLiteral(c) => chars(complement(self.literal(*c, flags))),
            Node::In(items) => {
                if let Some(at) = items.iter().find_map(|i| if let SetItem::Named(at) = i { Some(*at) } else { None }) {
                    return refuse(at, "named character escape \\N{...} (write the character or \\uXXXX)");
                }
                chars(self.set(items, flags))
            }
            Node::Any => {
                let all = class_of([(0, 0x10FFFF)]);
                chars(if flags & F_S != 0 { all } else { complement(class_of([(0x0A, 0x0A)])) })
            }
            Node::At(kind, at) => {
                return refuse(
                    *at,
                    match kind {
                        Anchor::Beginning | Anchor::BeginningString => "start anchor (^ or \\A) not at the start of the pattern",
                        Anchor::End | Anchor::EndString => "end anchor ($ or \\Z) not at the end of the pattern",
                        Anchor::Boundary => "word-boundary assertion (\\b or \\B)",
                    },
                )
            }
            Node::Repeat { min, max, kind, body, at } => {
                if *kind == RepeatKind::Possessive {
                    return refuse(*at, "possessive quantifier (*+, ++, ?+, {m,n}+)");
                }
                let sub = self.seq(body, flags)?;
                Hir::repetition(hir::Repetition { min: *min, max: *max, greedy: true, sub: Box::new(sub) })
            }
            Node::Group { add, del, body, .. } => {
                // CPython: a type flag (a, u) replaces the other type flags.
                let base = if add & TYPE_FLAGS != 0 { flags & !TYPE_FLAGS } else { flags };
                self.seq(body, (base | add) & !del)?
            }
            Node::Branch(items) => {
                let mut alts = Vec::with_capacity(items.len());
                for it in items {
                    alts.push(self.seq(it, flags)?);
                }
                Hir::alternation(alts)
            }
            Node::Assert { behind: false, at, .. } => return refuse(*at, "look-ahead (?=...) / (?!...)"),
            Node::Assert { behind: true, at, .. } => return refuse(*at, "look-behind (?<=...) / (?<!...)"),
            Node::Atomic { at, .. } => return refuse(*at, "atomic group (?>...)"),
            Node::GroupRef { named: true, at, .. } => return refuse(*at, "named backreference (?P=name)"),
            Node::GroupRef { named: false, at, .. } => return refuse(*at, "backreference (\\1 ... \\99)"),
            Node::Conditional { at, .. } => return refuse(*at, "conditional group (?(id)yes|no)"),
            Node::Named(at) => return refuse(*at, "named character escape \\N{...} (write the character or \\uXXXX)"),
        })
    }

    fn category(&self, cat: Category, unicode: bool) -> ClassUnicode {
        let (base, negated) = match cat {
            Category::Digit => (0, false),
            Category::NotDigit => (0, true),
            Category::Word => (1, false),
            Category::NotWord => (1, true),
            Category::Space => (2, false),
            Category::NotSpace => (2, true),
        };
        let set = if unicode {
            match self.classes {
                Some(c) => {
                    let given = [&c.digit, &c.word, &c.space][base];
                    class_of(given.iter().map(|&(a, b)| (a as u32, b as u32)))
                }
                None => default_unicode_categories()[base].clone(),
            }
        } else {
            match base {
                0 => class_of([(0x30, 0x39)]),
                1 => class_of([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]),
                _ => class_of([(0x09, 0x0D), (0x20, 0x20)]),
            }
        };
        if negated {
            complement(set)
        } else {
            set
        }
    }

    /// The characters a literal `c` matches under `flags`.
    fn literal(&self, c: u32, flags: u32) -> ClassUnicode {
        if flags & F_I == 0 {
            return class_of([(c, c)]);
        }
        if flags & F_U == 0 {
            if !ascii_cased(c) {
                return class_of([(c, c)]);
            }
            return lower_preimage(&class_of([(ascii_lower(c), ascii_lower(c))]), false);
        }
        let t = case_tables();
        if !contains(&t.cased, c) {
            return class_of([(c, c)]);
        }
        if let Some(set) = self.folded.borrow().get(&(c, flags)) {
            return set.clone();
        }
        let lo = unicode_lower(c);
        let mut targets = vec![(lo, lo)];
        if let Some(f) = t.fixes.get(&lo) {
            targets.extend(f.iter().map(|&x| (x, x)));
        }
        let set = lower_preimage(&class_of(targets), true);
        self.folded.borrow_mut().insert((c, flags), set.clone());
        set
    }

    /// The characters a set matches under `flags`, as CPython's compiled set does: under
    /// IGNORECASE, members are lower-cased (with the shared upper cases added) and the
    /// input character is lower-cased before the test, except that members outside the
    /// Basic Multilingual Plane are kept as written (a range: tested on the character and
    /// its upper case) and categories are tested as they are.
    fn set(&self, items: &[SetItem], flags: u32) -> ClassUnicode {
        let ignore = flags & F_I != 0;
        let unicode = flags & F_U != 0;
        let mut m = ClassUnicode::empty();
        let mut negate = false;
        let mut cased = false;
        for item in items {
            match *item {
                SetItem::Negate => negate = true,
                SetItem::Named(_) => {}
                SetItem::Category(cat) => m = union(m, &self.category(cat, unicode)),
                SetItem::Literal(c) if !ignore => m = union(m, &class_of([(c, c)])),
                SetItem::Range(a, b) if !ignore => m = union(m, &class_of([(a, b)])),
                SetItem::Literal(c) => {
                    let lo = if unicode { unicode_lower(c) } else { ascii_lower(c) };
                    if lo >= 0x10000 {
                        cased = true;
                        m = union(m, &class_of([(c, c)]));
                    } else {
                        m = union(m, &class_of([(lo, lo)]));
                        if unicode {
                            if let Some(f) = case_tables().fixes.get(&lo) {
                                m = union(m, &class_of(f.iter().map(|&x| (x, x))));
                            }
                        }
                        cased |= if unicode { contains(&case_tables().cased, c) } else { ascii_cased(c) };
                    }
                }
                SetItem::Range(a, b) => {
                    let bmp_end = b.min(0xFFFF);
                    if a <= bmp_end {
                        let image = self.lowered_range(a, bmp_end, unicode);
                        if unicode {
                            let fixes = &case_tables().fixes;
                            let extra: Vec<(u32, u32)> = fixes
                                .iter()
                                .filter(|(k, _)| contains(&image, **k))
                                .flat_map(|(_, v)| v.iter().map(|&x| (x, x)))
                                .collect();
                            m = union(m, &class_of(extra));
                        }
                        m = union(m, &image);
                    }
                    if b >= 0x10000 {
                        // CPython tests such a range on the (lowered) character and its upper case.
                        cased = true;
                        let up = case_tables().uppered.iter().filter(|&&(_, u)| (a..=b).contains(&u)).map(|&(c, _)| (c, c));
                        m = union(m, &union(class_of([(a, b)]), &class_of(up)));
                    } else {
                        let range = class_of([(a, b)]);
                        cased |= if unicode {
                            let mut r = range;
                            r.intersect(&case_tables().cased);
                            !r.ranges().is_empty()
                        } else {
                            (a..=b).any(ascii_cased)
                        };
                    }
                }
            }
        }
        if negate {
            m = complement(m);
        }
        if ignore && cased {
            lower_preimage(&m, unicode)
        } else {
            m
        }
    }

    /// The lower cases of the characters `a..=b`.
    fn lowered_range(&self, a: u32, b: u32, unicode: bool) -> ClassUnicode {
        let range = class_of([(a, b)]);
        if unicode {
            let t = case_tables();
            let mut out = range;
            out.difference(&t.lowered_class);
            let from = t.lowered.partition_point(|&(c, _)| c < a);
            let moved = t.lowered[from..].iter().take_while(|&&(c, _)| c <= b).map(|&(_, l)| (l, l));
            union(out, &class_of(moved))
        } else {
            let mut out = range;
            out.difference(&class_of([(0x41, 0x5A)]));
            let moved = (a.max(0x41)..=b.min(0x5A)).map(|c| (c + 0x20, c + 0x20));
            union(out, &class_of(moved))
        }
    }
}

/// One character of a set, as HIR (a literal when it is a single character).
fn chars(set: ClassUnicode) -> Hir {
    Hir::class(Class::Unicode(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_tables_group_lower_cases_that_share_an_upper_case() {
        let t = case_tables();
        assert_eq!(t.fixes.get(&('s' as u32)), Some(&vec!['ſ' as u32]));
        assert_eq!(t.fixes.get(&('i' as u32)), Some(&vec!['ı' as u32]));
        let mut iota = t.fixes.get(&0x3B9).cloned().unwrap_or_default();
        iota.sort_unstable();
        assert_eq!(iota, vec![0x345, 0x1FBE]);
        assert_eq!(t.fixes.get(&0xFB05), Some(&vec![0xFB06]));
        assert!(!t.fixes.contains_key(&('a' as u32)));
        assert_eq!(unicode_lower(0x130), 'i' as u32);
        assert_eq!(unicode_lower(0x212A), 'k' as u32);
    }

    /// The tables scan only the characters regex-syntax's tables say change case: every
    /// other case mapping involves a character those (older) tables do not know yet.
    #[test]
    fn case_tables_see_every_known_character() {
        let t = case_tables();
        let unassigned = property("Unassigned");
        let mut seen = 0;
        for ch in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let c = ch as u32;
            if let Some(l) = ch.to_lowercase().next().filter(|&l| l != ch) {
                let known = t.lowered.binary_search(&(c, l as u32)).is_ok();
                assert!(known || contains(&unassigned, c) || contains(&unassigned, l as u32), "lower case of U+{c:04X}");
                seen += usize::from(known);
            }
            if let Some(u) = ch.to_uppercase().next().filter(|&u| u != ch) {
                let known = t.uppered.binary_search(&(c, u as u32)).is_ok();
                assert!(known || contains(&unassigned, c) || contains(&unassigned, u as u32), "upper case of U+{c:04X}");
            }
        }
        assert_eq!(seen, t.lowered.len());
    }

    #[test]
    fn python_int_reads_ascii_numbers() {
        assert_eq!(python_int(" +1_0 "), Some(10));
        assert_eq!(python_int("-2"), Some(-2));
        assert_eq!(python_int("1__0"), None);
        assert_eq!(python_int("x"), None);
    }
}
