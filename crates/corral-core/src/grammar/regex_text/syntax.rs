//! ECMAScript regular-expression syntax, read one character at a time: the check behind
//! JSON Schema's `format: "regex"`.
//!
//! The language is a `Pattern` of ECMA-262 in Unicode mode (the `u` flag, as ajv-formats
//! and other validators compile it), with its early errors: a quantifier needs an atom
//! before it, groups close, a class range's ends are characters in order, `{n,m}` has
//! n ≤ m, a group name is an identifier and is defined once, `\k<name>` names a group
//! and `\N` a capture that the pattern has (anywhere in it, before or after), `\p{...}`
//! names a property ECMAScript knows (see `properties.rs`), and escapes are the ones
//! Unicode mode allows (no `\-` outside a class, no `\a`, no octal).
//!
//! The syntax is context-free, some of those rules are not, and the grammar engine only
//! reads JSON text, so this runs beside the parser (see [`super::RegexTexts`]): a
//! pushdown reader with an undo log, so that a token trie can be walked with it.
//! [`RegexSyntax::push_char`] refuses a character exactly when no way to finish the
//! pattern is left (the check is a viability check, not "no error yet": `[\x7f-\x0`
//! is refused at its `0`, since no `\x0?` is at least `\x7f`), and
//! [`RegexSyntax::completion`] writes one way to finish it.

use std::sync::OnceLock;

use super::properties::PROPERTY_BODIES;

const MAX_CP: u32 = 0x10FFFF;
const LEADS: (u32, u32) = (0xD800, 0xDBFF);
const TRAILS: (u32, u32) = (0xDC00, 0xDFFF);

/// What the last term of the open alternative was, for a quantifier that may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Last {
    /// Nothing to repeat: the start of an alternative, or an assertion.
    Nothing,
    /// An atom: a quantifier may follow.
    Atom,
    /// `\0`: an atom that no decimal digit may follow.
    Zero,
    /// A quantifier: only a `?` making it lazy may follow it.
    Quantifier,
    /// A lazy quantifier.
    Lazy,
}

/// One atom of a class: a character, or a class escape (`\d`, `\p{L}`), which may not
/// end a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ClassAtom {
    Char(u32),
    Set,
}

/// What a class has just read, for a `-` or the atom after one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Pending {
    /// Nothing a `-` could start a range from.
    Nothing,
    /// An atom: a `-` next makes it a range's start.
    Atom(ClassAtom),
    /// `atom -`: the next atom ends the range (or `]` ends the class with a `-`).
    Dash(ClassAtom),
}

/// Which name a name is being read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum NameKind {
    /// `(?<name>`: a group's.
    Group,
    /// `\k<name>`: a back-reference's.
    Reference,
}

/// Where an escape returns: what it is an atom of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Ctx {
    /// A term of an alternative.
    Term,
    /// A class, in the state it had before the escape.
    Class { pend: Pending },
    /// A name's next character (`\u` escapes only).
    Name { kind: NameKind },
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Mode {
    /// Between terms.
    Terms { last: Last },
    /// After `\`.
    Escape(Ctx),
    /// After `\c`: an ASCII letter.
    Control(Ctx),
    /// After `\x`: `left` more hex digits.
    Hex { ctx: Ctx, left: u8, value: u32 },
    /// After `\u`: `left` more hex digits (at 4, `{` may come instead). `lead`: the lead
    /// surrogate this one may pair with (0: none).
    Unicode { ctx: Ctx, left: u8, value: u32, lead: u32 },
    /// After `\u{`, with the digits' value so far (`digits`: at least one read).
    UnicodeBrace { ctx: Ctx, value: u32, digits: bool },
    /// After an escaped lead surrogate in a class or name: a `\u` trail may pair with it.
    Lead { ctx: Ctx, lead: u32 },
    /// After an escaped lead surrogate and `\`.
    LeadBackslash { ctx: Ctx, lead: u32 },
    /// Reading a back-reference `\N` (its digits' value so far, saturating).
    Backref { value: u32 },
    /// After `\p` or `\P` (`open`: its `{` read; the body is in the buffer).
    Property { ctx: Ctx, open: bool },
    /// After `\k`: its `<`.
    RefOpen,
    /// In a class (`first`: right after `[`, where `^` negates; `zero`: right after
    /// `\0`, which no digit may follow).
    Class { pend: Pending, first: bool, zero: bool },
    /// After `(`.
    Paren,
    /// After `(?`.
    ParenQuestion,
    /// After `(?<`.
    ParenLess,
    /// In a name, its characters so far in the buffer.
    Name { kind: NameKind },
    /// In `{n,m}` (`comma`: read); the digits are in the buffer, n's first.
    Braces { comma: bool },
}

/// An open group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
    /// A group (capturing or not): an atom once closed.
    Group,
    /// A look-ahead or look-behind: an assertion once closed, which Unicode mode does
    /// not let a quantifier follow.
    Look,
}

/// Where a [`RegexSyntax`] stands, without its undo log: equal states read every string
/// alike (compared and hashed to find repeated states).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SyntaxKey {
    mode: Mode,
    groups: Vec<Group>,
    /// Capturing groups opened so far.
    captures: u32,
    /// The largest `\N` so far (saturating).
    max_backref: u32,
    /// The groups' names so far.
    names: Vec<Vec<u32>>,
    /// The names `\k<...>` used so far.
    references: Vec<Vec<u32>>,
    /// A name, property body, or quantifier's digits being read.
    buf: Vec<u32>,
    /// In `{n,m}` after the comma: how many of `buf`'s digits are n's.
    min_len: usize,
}

impl SyntaxKey {
    /// Heap bytes this state holds beside its own size (for cache bounds).
    pub(crate) fn heap_bytes(&self) -> usize {
        let words = |v: &[Vec<u32>]| v.iter().map(|n| n.len() * 4 + 24).sum::<usize>();
        self.groups.len() + words(&self.names) + words(&self.references) + self.buf.len() * 4
    }
}

/// The inverse of one change, for [`RegexSyntax::undo_to`].
#[derive(Debug, Clone)]
enum Undo {
    Mode(Mode),
    GroupOpened,
    GroupClosed(Group),
    Capture,
    Backref(u32),
    NameDefined,
    ReferenceAdded,
    BufPush,
    Buf(Vec<u32>),
    MinLen(usize),
}

/// A pattern read so far, with an undo log (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct RegexSyntax {
    at: SyntaxKey,
    undo: Vec<Undo>,
}

impl Default for RegexSyntax {
    fn default() -> Self {
        let at = SyntaxKey {
            mode: Mode::Terms { last: Last::Nothing },
            groups: Vec::new(),
            captures: 0,
            max_backref: 0,
            names: Vec::new(),
            references: Vec::new(),
            buf: Vec::new(),
            min_len: 0,
        };
        RegexSyntax { at, undo: Vec::new() }
    }
}

fn hex_value(c: u32) -> Option<u32> {
    char::from_u32(c).and_then(|c| c.to_digit(16))
}

fn is_digit(c: u32) -> bool {
    (b'0' as u32..=b'9' as u32).contains(&c)
}

fn is_syntax_char(c: u32) -> bool {
    matches!(char::from_u32(c), Some('^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'))
}

fn in_range(c: u32, (lo, hi): (u32, u32)) -> bool {
    (lo..=hi).contains(&c)
}

/// The code point a lead and a trail surrogate spell together.
fn pair(lead: u32, trail: u32) -> u32 {
    0x10000 + ((lead - LEADS.0) << 10) + (trail - TRAILS.0)
}

/// Unicode's ID_Start and ID_Continue, as sorted ranges.
fn id_ranges(start: bool) -> &'static [(u32, u32)] {
    static START: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    static CONTINUE: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    let build = |name: &str| -> Vec<(u32, u32)> {
        let hir = regex_syntax::ParserBuilder::new().build().parse(&format!(r"\p{{{name}}}"));
        match hir.as_ref().map(|h| h.kind()) {
            Ok(regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c))) => {
                c.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect()
            }
            _ => Vec::new(),
        }
    };
    if start {
        START.get_or_init(|| build("ID_Start"))
    } else {
        CONTINUE.get_or_init(|| build("ID_Continue"))
    }
}

/// May a name have `c` first (`first`) or later?
fn is_name_char(c: u32, first: bool) -> bool {
    if c == '$' as u32 || c == '_' as u32 || (!first && (c == 0x200C || c == 0x200D)) {
        return true;
    }
    name_char_in(c, c, first)
}

/// The first character past ASCII a name may have (first, or later) in `lo..=hi`.
pub(super) fn first_name_char(lo: u32, hi: u32, first: bool) -> Option<u32> {
    let ranges = id_ranges(first);
    let i = ranges.partition_point(|&(_, end)| end < lo);
    ranges.get(i).map(|&(start, _)| start.max(lo)).filter(|&c| c <= hi)
}

/// Is some character a name may have (first, or later) in `lo..=hi`?
fn name_char_in(lo: u32, hi: u32, first: bool) -> bool {
    let extra: &[u32] = if first { &['$' as u32, '_' as u32] } else { &['$' as u32, '_' as u32, 0x200C, 0x200D] };
    if extra.iter().any(|&c| (lo..=hi).contains(&c)) {
        return true;
    }
    let ranges = id_ranges(first);
    let i = ranges.partition_point(|&(_, end)| end < lo);
    ranges.get(i).is_some_and(|&(start, _)| start <= hi)
}

/// Is some character a name may have among the values an escape may still take: those in
/// `lo..=hi`, or, for leads there (`pairs`), the characters they pair to?
fn name_char_reachable(lo: u32, hi: u32, first: bool, pairs: bool) -> bool {
    if name_char_in(lo, hi, first) {
        return true;
    }
    let (a, b) = (lo.max(LEADS.0), hi.min(LEADS.1));
    pairs && a <= b && name_char_in(pair(a, TRAILS.0), pair(b, TRAILS.1), first)
}

/// The largest value an escape's digits may still reach, pairs included.
fn max_reachable(hi: u32, pairs: bool) -> u32 {
    if pairs && hi >= LEADS.0 {
        hi.max(pair(hi.min(LEADS.1), TRAILS.1))
    } else {
        hi
    }
}

/// Is `body` a property body, or (`prefix`) the start of one?
fn property_known(body: &[u32], prefix: bool) -> bool {
    let text: String = body.iter().filter_map(|&c| char::from_u32(c)).collect();
    if text.len() != body.len() {
        return false;
    }
    let i = PROPERTY_BODIES.partition_point(|b| *b < text.as_str());
    PROPERTY_BODIES.get(i).is_some_and(|b| if prefix { b.starts_with(&text) } else { *b == text })
}

/// Compares two decimal numbers given as digit characters (leading zeros allowed).
fn decimal_cmp(a: &[u32], b: &[u32]) -> std::cmp::Ordering {
    let strip = |d: &[u32]| -> Vec<u32> { d.iter().copied().skip_while(|&c| c == '0' as u32).collect() };
    let (a, b) = (strip(a), strip(b));
    a.len().cmp(&b.len()).then_with(|| a.cmp(&b))
}

impl RegexSyntax {
    /// A pattern with nothing read.
    pub(crate) fn new() -> RegexSyntax {
        RegexSyntax::default()
    }

    /// Where the reader stands, without its undo log (see [`SyntaxKey`]).
    pub(crate) fn key(&self) -> SyntaxKey {
        self.at.clone()
    }

    /// The length of the undo log: pass it to [`RegexSyntax::undo_to`] to come back here.
    pub(crate) fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Undoes every change made since `mark`.
    pub(crate) fn undo_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let Some(u) = self.undo.pop() else { break };
            match u {
                Undo::Mode(m) => self.at.mode = m,
                Undo::GroupOpened => {
                    self.at.groups.pop();
                }
                Undo::GroupClosed(g) => self.at.groups.push(g),
                Undo::Capture => self.at.captures -= 1,
                Undo::Backref(v) => self.at.max_backref = v,
                Undo::NameDefined => {
                    self.at.names.pop();
                }
                Undo::ReferenceAdded => {
                    self.at.references.pop();
                }
                Undo::BufPush => {
                    self.at.buf.pop();
                }
                Undo::Buf(b) => self.at.buf = b,
                Undo::MinLen(n) => self.at.min_len = n,
            }
        }
    }

    /// A copy without the undo log, for reading ahead.
    pub(crate) fn fork(&self) -> RegexSyntax {
        RegexSyntax { at: self.at.clone(), undo: Vec::new() }
    }

    /// Forgets the undo log (the state stays): for a reader that will not go back.
    pub(crate) fn forget_undo(&mut self) {
        self.undo.clear();
    }

    /// Reads character `c`. Returns false, changing nothing, if no pattern starts with
    /// what was read and `c`.
    pub(crate) fn push_char(&mut self, c: u32) -> bool {
        let mark = self.mark();
        let ok = self.step(c);
        if !ok {
            self.undo_to(mark);
        }
        ok
    }

    /// A character in `lo..=hi` that can be read next, if there is one (changes
    /// nothing). Characters past ASCII all read alike but in names (identifier
    /// characters) and as a class range's end (at least its start): the name tables and
    /// the range's last character decide there.
    pub(crate) fn first_read(&mut self, lo: u32, hi: u32) -> Option<u32> {
        let name_first = matches!(self.at.mode, Mode::Name { .. }).then(|| self.at.buf.is_empty());
        let mut fits = |c: u32| {
            let mark = self.mark();
            let ok = self.push_char(c);
            self.undo_to(mark);
            ok
        };
        if hi - lo < 160 {
            return (lo..=hi).find(|&c| fits(c));
        }
        if let Some(c) = (lo..=hi.min(0x7F)).find(|&c| fits(c)) {
            return Some(c);
        }
        let lo = lo.max(0x80);
        match name_first {
            Some(first) => first_name_char(lo, hi, first),
            None => fits(hi).then_some(hi),
        }
    }

    /// What text the reader reads here without changing how it reads the next byte
    /// (see [`super::Neutral`]): between terms but right after `\0`, in a class past
    /// its start with no `x-` and no `\0` just read, and in a name past its first
    /// character.
    pub(crate) fn neutral_text(&self) -> Option<super::Neutral> {
        match self.at.mode {
            Mode::Terms { last } if last != Last::Zero => Some(super::Neutral::Terms),
            Mode::Class { pend, first: false, zero: false } if !matches!(pend, Pending::Dash(_)) => Some(super::Neutral::Class),
            Mode::Name { .. } if !self.at.buf.is_empty() => Some(super::Neutral::Name),
            _ => None,
        }
    }

    /// Is what was read a whole pattern?
    pub(crate) fn is_complete(&self) -> bool {
        let backref = match self.at.mode {
            Mode::Terms { .. } => self.at.max_backref,
            Mode::Backref { value } => self.at.max_backref.max(value),
            _ => return false,
        };
        self.at.groups.is_empty() && backref <= self.at.captures && self.at.references.iter().all(|r| self.at.names.contains(r))
    }

    fn set_mode(&mut self, m: Mode) {
        self.undo.push(Undo::Mode(self.at.mode));
        self.at.mode = m;
    }

    fn buf_push(&mut self, c: u32) {
        self.at.buf.push(c);
        self.undo.push(Undo::BufPush);
    }

    fn take_buf(&mut self) -> Vec<u32> {
        let b = std::mem::take(&mut self.at.buf);
        self.undo.push(Undo::Buf(b.clone()));
        b
    }

    fn open_group(&mut self, g: Group, capture: bool) {
        self.at.groups.push(g);
        self.undo.push(Undo::GroupOpened);
        if capture {
            self.at.captures += 1;
            self.undo.push(Undo::Capture);
        }
        self.set_mode(Mode::Terms { last: Last::Nothing });
    }

    /// One character; false if it leaves no way to finish (the caller undoes).
    fn step(&mut self, c: u32) -> bool {
        match self.at.mode {
            Mode::Terms { last } => self.term(c, last),
            Mode::Escape(ctx) => self.escape(c, ctx),
            Mode::Control(ctx) => match char::from_u32(c) {
                Some(l) if l.is_ascii_alphabetic() => self.atom_done(ctx, ClassAtom::Char(c % 32)),
                _ => false,
            },
            Mode::Hex { ctx, left, value } => {
                let Some(d) = hex_value(c) else { return false };
                let value = value * 16 + d;
                if left > 1 {
                    self.set_mode(Mode::Hex { ctx, left: left - 1, value });
                    let span = 16u32.pow(u32::from(left) - 1);
                    self.range_reachable(ctx, value * span + span - 1, false)
                } else {
                    self.atom_done(ctx, ClassAtom::Char(value))
                }
            }
            Mode::Unicode { ctx, left, value, lead } => self.unicode_digit(c, ctx, left, value, lead),
            Mode::UnicodeBrace { ctx, value, digits } => {
                if c == '}' as u32 {
                    return digits && self.escaped_char(ctx, value, false);
                }
                let Some(d) = hex_value(c) else { return false };
                let value = value * 16 + d;
                if value > MAX_CP {
                    return false;
                }
                self.set_mode(Mode::UnicodeBrace { ctx, value, digits: true });
                self.brace_reachable(ctx, value)
            }
            Mode::Lead { ctx, lead } => {
                if c == '\\' as u32 {
                    self.set_mode(Mode::LeadBackslash { ctx, lead });
                    true
                } else {
                    self.lone_lead(ctx, lead) && self.step(c)
                }
            }
            Mode::LeadBackslash { ctx, lead } => {
                if c == 'u' as u32 {
                    self.set_mode(Mode::Unicode { ctx, left: 4, value: 0, lead });
                    true
                } else {
                    // The lead stands alone and `\` starts another escape.
                    self.lone_lead(ctx, lead) && self.reenter_escape(c)
                }
            }
            Mode::Backref { value } => {
                if is_digit(c) {
                    self.set_mode(Mode::Backref { value: value.saturating_mul(10).saturating_add(c - '0' as u32) });
                    true
                } else {
                    self.end_backref(value);
                    self.step(c)
                }
            }
            Mode::Property { ctx, open } => self.property(c, ctx, open),
            Mode::RefOpen => {
                if c != '<' as u32 {
                    return false;
                }
                self.set_mode(Mode::Name { kind: NameKind::Reference });
                true
            }
            Mode::Class { pend, first, zero } => self.class(c, pend, first, zero),
            Mode::Paren => {
                if c == '?' as u32 {
                    self.set_mode(Mode::ParenQuestion);
                    true
                } else {
                    self.open_group(Group::Group, true);
                    self.step(c)
                }
            }
            Mode::ParenQuestion => match char::from_u32(c) {
                Some(':') => {
                    self.open_group(Group::Group, false);
                    true
                }
                Some('=' | '!') => {
                    self.open_group(Group::Look, false);
                    true
                }
                Some('<') => {
                    self.set_mode(Mode::ParenLess);
                    true
                }
                _ => false,
            },
            Mode::ParenLess => match char::from_u32(c) {
                Some('=' | '!') => {
                    self.open_group(Group::Look, false);
                    true
                }
                _ => {
                    self.set_mode(Mode::Name { kind: NameKind::Group });
                    self.step(c)
                }
            },
            Mode::Name { kind } => self.name(c, kind),
            Mode::Braces { comma } => self.braces(c, comma),
        }
    }

    /// A character between terms.
    fn term(&mut self, c: u32, last: Last) -> bool {
        let quantifiable = matches!(last, Last::Atom | Last::Zero);
        match char::from_u32(c) {
            Some('*' | '+') if quantifiable => self.set_last(Last::Quantifier),
            Some('?') if quantifiable => self.set_last(Last::Quantifier),
            Some('?') if last == Last::Quantifier => self.set_last(Last::Lazy),
            Some('{') if quantifiable => {
                self.set_mode(Mode::Braces { comma: false });
                true
            }
            Some('*' | '+' | '?' | '{' | '}' | ']') => false,
            Some('|' | '^' | '$') => self.set_last(Last::Nothing),
            Some('(') => {
                self.set_mode(Mode::Paren);
                true
            }
            Some(')') => match self.at.groups.pop() {
                Some(g) => {
                    self.undo.push(Undo::GroupClosed(g));
                    self.set_last(if g == Group::Look { Last::Nothing } else { Last::Atom })
                }
                None => false,
            },
            Some('[') => {
                self.set_mode(Mode::Class { pend: Pending::Nothing, first: true, zero: false });
                true
            }
            Some('\\') => {
                self.set_mode(Mode::Escape(Ctx::Term));
                true
            }
            _ if last == Last::Zero && is_digit(c) => false,
            _ => self.set_last(Last::Atom),
        }
    }

    fn set_last(&mut self, last: Last) -> bool {
        self.set_mode(Mode::Terms { last });
        true
    }

    /// The character after `\`.
    fn escape(&mut self, c: u32, ctx: Ctx) -> bool {
        let Some(ch) = char::from_u32(c) else { return false };
        if let Ctx::Name { .. } = ctx {
            if ch != 'u' {
                return false;
            }
        }
        let class = matches!(ctx, Ctx::Class { .. });
        match ch {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => self.atom_done(ctx, ClassAtom::Set),
            'p' | 'P' => {
                self.set_mode(Mode::Property { ctx, open: false });
                // A class escape may not end a range: after `a-`, `\p` is already wrong.
                !matches!(ctx, Ctx::Class { pend: Pending::Dash(_) })
            }
            'f' => self.atom_done(ctx, ClassAtom::Char(0x0C)),
            'n' => self.atom_done(ctx, ClassAtom::Char(0x0A)),
            'r' => self.atom_done(ctx, ClassAtom::Char(0x0D)),
            't' => self.atom_done(ctx, ClassAtom::Char(0x09)),
            'v' => self.atom_done(ctx, ClassAtom::Char(0x0B)),
            'c' => {
                self.set_mode(Mode::Control(ctx));
                self.range_reachable(ctx, 26, false)
            }
            'x' => {
                self.set_mode(Mode::Hex { ctx, left: 2, value: 0 });
                self.range_reachable(ctx, 0xFF, false)
            }
            'u' => {
                self.set_mode(Mode::Unicode { ctx, left: 4, value: 0, lead: 0 });
                true
            }
            '0' => match ctx {
                Ctx::Term => {
                    self.set_mode(Mode::Terms { last: Last::Zero });
                    true
                }
                _ => self.atom_done(ctx, ClassAtom::Char(0)) && self.set_zero(),
            },
            '1'..='9' if !class => {
                self.set_mode(Mode::Backref { value: c - '0' as u32 });
                true
            }
            'b' if class => self.atom_done(ctx, ClassAtom::Char(0x08)),
            '-' if class => self.atom_done(ctx, ClassAtom::Char(c)),
            'b' | 'B' if !class => self.set_last(Last::Nothing),
            'k' if !class => {
                self.set_mode(Mode::RefOpen);
                true
            }
            _ if is_syntax_char(c) || ch == '/' => self.atom_done(ctx, ClassAtom::Char(c)),
            _ => false,
        }
    }

    /// After `\0` in a class: no digit may come next.
    fn set_zero(&mut self) -> bool {
        if let Mode::Class { pend, first, .. } = self.at.mode {
            self.set_mode(Mode::Class { pend, first, zero: true });
        }
        true
    }

    /// Re-reads the character after a `\` that did not continue a surrogate pair.
    fn reenter_escape(&mut self, c: u32) -> bool {
        let ctx = match self.at.mode {
            Mode::Class { pend, .. } => Ctx::Class { pend },
            _ => return false,
        };
        self.set_mode(Mode::Escape(ctx));
        self.step(c)
    }

    /// A digit of `\uHHHH` (or the `{` of `\u{...}`).
    fn unicode_digit(&mut self, c: u32, ctx: Ctx, left: u8, value: u32, lead: u32) -> bool {
        if c == '{' as u32 && left == 4 {
            if lead != 0 {
                // `\u{...}` never pairs: the lead stands alone.
                if !self.lone_lead(ctx, lead) {
                    return false;
                }
                let Mode::Class { pend, .. } = self.at.mode else { return false };
                self.set_mode(Mode::UnicodeBrace { ctx: Ctx::Class { pend }, value: 0, digits: false });
                return self.brace_reachable(Ctx::Class { pend }, 0);
            }
            self.set_mode(Mode::UnicodeBrace { ctx, value: 0, digits: false });
            return self.brace_reachable(ctx, 0);
        }
        let Some(d) = hex_value(c) else { return false };
        let value = value * 16 + d;
        if left > 1 {
            self.set_mode(Mode::Unicode { ctx, left: left - 1, value, lead });
            let span = 16u32.pow(u32::from(left) - 1);
            let (lo, hi) = (value * span, value * span + span - 1);
            return match ctx {
                Ctx::Name { kind } if lead != 0 => {
                    let (a, b) = (lo.max(TRAILS.0), hi.min(TRAILS.1));
                    a <= b && name_char_in(pair(lead, a), pair(lead, b), self.name_first(kind))
                }
                Ctx::Name { kind } => name_char_reachable(lo, hi, self.name_first(kind), true),
                // After a lead, in a range: a trail pairs with it, or the lead alone ends
                // the range (then this escape is the next atom, any value).
                Ctx::Class { pend: Pending::Dash(ClassAtom::Char(x)) } if lead != 0 => {
                    let (a, b) = (lo.max(TRAILS.0), hi.min(TRAILS.1));
                    (a <= b && pair(lead, b) >= x) || lead >= x
                }
                _ => self.range_reachable(ctx, max_reachable(hi, matches!(ctx, Ctx::Class { .. })), false),
            };
        }
        if lead != 0 {
            if in_range(value, TRAILS) {
                return self.escaped_char(ctx, pair(lead, value), false);
            }
            // Not a trail: the lead stands alone, then this escape.
            return self.lone_lead(ctx, lead) && self.escaped_char_after_lead(value);
        }
        self.escaped_char(ctx, value, true)
    }

    /// After a lone lead was taken in a class, the escape read next as its own atom.
    fn escaped_char_after_lead(&mut self, value: u32) -> bool {
        let Mode::Class { pend, .. } = self.at.mode else { return false };
        self.escaped_char(Ctx::Class { pend }, value, true)
    }

    /// Is the name being read of `kind` still empty (its next character its first)?
    fn name_first(&self, _kind: NameKind) -> bool {
        self.at.buf.is_empty()
    }

    /// An escape spelled character `value`; `may_pair`: a lead surrogate in `\uHHHH` form,
    /// which a trail may follow in a class or a name.
    fn escaped_char(&mut self, ctx: Ctx, value: u32, may_pair: bool) -> bool {
        if may_pair && in_range(value, LEADS) && !matches!(ctx, Ctx::Term) {
            self.set_mode(Mode::Lead { ctx, lead: value });
            return match ctx {
                Ctx::Name { kind } => name_char_in(pair(value, TRAILS.0), pair(value, TRAILS.1), self.name_first(kind)),
                _ => self.range_reachable(ctx, pair(value, TRAILS.1), false),
            };
        }
        self.atom_done(ctx, ClassAtom::Char(value))
    }

    /// A lead surrogate not followed by its trail: an atom of its own in a class; never a
    /// name's character.
    fn lone_lead(&mut self, ctx: Ctx, lead: u32) -> bool {
        match ctx {
            Ctx::Class { .. } => self.atom_done(ctx, ClassAtom::Char(lead)),
            _ => false,
        }
    }

    /// Could `\u{...}` with `value` so far still give what `ctx` needs?
    fn brace_reachable(&self, ctx: Ctx, value: u32) -> bool {
        // The values reachable: value itself, then value·16ᵏ + anything below 16ᵏ.
        let mut spans = Vec::new();
        let (mut lo, mut hi) = (value, value);
        loop {
            spans.push((lo, hi.min(MAX_CP)));
            if value == 0 {
                spans.push((0, MAX_CP));
                break;
            }
            lo = lo.saturating_mul(16);
            hi = hi.saturating_mul(16).saturating_add(15);
            if lo > MAX_CP {
                break;
            }
        }
        match ctx {
            Ctx::Name { kind } => spans.iter().any(|&(a, b)| name_char_in(a, b, self.name_first(kind))),
            _ => self.range_reachable(ctx, spans.iter().map(|s| s.1).max().unwrap_or(value), false),
        }
    }

    /// In a class after `atom -`, may an escape whose value is at most `max` still end
    /// the range in order? (True elsewhere.) `set`: the escape is a class escape.
    fn range_reachable(&self, ctx: Ctx, max: u32, set: bool) -> bool {
        match ctx {
            Ctx::Class { pend: Pending::Dash(ClassAtom::Char(x)) } => !set && max >= x,
            Ctx::Class { pend: Pending::Dash(ClassAtom::Set) } => false,
            _ => true,
        }
    }

    /// An escape (or character) made atom `a`: back to where it was read.
    fn atom_done(&mut self, ctx: Ctx, a: ClassAtom) -> bool {
        match ctx {
            Ctx::Term => self.set_last(Last::Atom),
            Ctx::Class { pend } => self.class_atom(pend, a, false),
            Ctx::Name { kind } => match a {
                ClassAtom::Char(c) if is_name_char(c, self.at.buf.is_empty()) => {
                    self.buf_push(c);
                    self.set_mode(Mode::Name { kind });
                    true
                }
                _ => false,
            },
        }
    }

    /// Atom `a` in a class that had `pend` (`dash`: it is an unescaped `-`).
    fn class_atom(&mut self, pend: Pending, a: ClassAtom, dash: bool) -> bool {
        let next = match pend {
            Pending::Atom(x) if dash => Pending::Dash(x),
            Pending::Nothing | Pending::Atom(_) => Pending::Atom(a),
            Pending::Dash(x) => match (x, a) {
                (ClassAtom::Char(lo), ClassAtom::Char(hi)) if lo <= hi => Pending::Nothing,
                _ => return false,
            },
        };
        self.set_mode(Mode::Class { pend: next, first: false, zero: false });
        true
    }

    /// A character in a class.
    fn class(&mut self, c: u32, pend: Pending, first: bool, zero: bool) -> bool {
        if zero && is_digit(c) {
            return false;
        }
        match char::from_u32(c) {
            Some('^') if first => {
                self.set_mode(Mode::Class { pend, first: false, zero: false });
                true
            }
            Some(']') => self.set_last(Last::Atom),
            Some('\\') => {
                self.set_mode(Mode::Escape(Ctx::Class { pend }));
                !matches!(pend, Pending::Dash(ClassAtom::Set))
            }
            Some('-') => self.class_atom(pend, ClassAtom::Char(c), true),
            _ => self.class_atom(pend, ClassAtom::Char(c), false),
        }
    }

    /// A character of `\p{...}`.
    fn property(&mut self, c: u32, ctx: Ctx, open: bool) -> bool {
        if !open {
            if c != '{' as u32 {
                return false;
            }
            self.take_buf();
            self.set_mode(Mode::Property { ctx, open: true });
            return true;
        }
        if c == '}' as u32 {
            let known = property_known(&self.at.buf, false);
            self.take_buf();
            return known && self.atom_done(ctx, ClassAtom::Set);
        }
        self.buf_push(c);
        property_known(&self.at.buf, true)
    }

    /// A character of a name.
    fn name(&mut self, c: u32, kind: NameKind) -> bool {
        if c == '>' as u32 {
            if self.at.buf.is_empty() {
                return false;
            }
            let name = self.take_buf();
            return match kind {
                NameKind::Group => {
                    if self.at.names.contains(&name) {
                        return false;
                    }
                    self.at.names.push(name);
                    self.undo.push(Undo::NameDefined);
                    self.open_group(Group::Group, true);
                    true
                }
                NameKind::Reference => {
                    self.at.references.push(name);
                    self.undo.push(Undo::ReferenceAdded);
                    self.set_last(Last::Atom)
                }
            };
        }
        if c == '\\' as u32 {
            self.set_mode(Mode::Escape(Ctx::Name { kind }));
            return true;
        }
        if !is_name_char(c, self.at.buf.is_empty()) {
            return false;
        }
        self.buf_push(c);
        true
    }

    /// A character of `{n}`, `{n,}` or `{n,m}`.
    fn braces(&mut self, c: u32, comma: bool) -> bool {
        if is_digit(c) {
            self.buf_push(c);
            return true;
        }
        match char::from_u32(c) {
            Some(',') if !comma && !self.at.buf.is_empty() => {
                self.undo.push(Undo::MinLen(self.at.min_len));
                self.at.min_len = self.at.buf.len();
                self.set_mode(Mode::Braces { comma: true });
                true
            }
            Some('}') if !self.at.buf.is_empty() => {
                let ordered = !comma
                    || self.at.buf.len() == self.at.min_len
                    || decimal_cmp(&self.at.buf[..self.at.min_len], &self.at.buf[self.at.min_len..]).is_le();
                self.take_buf();
                ordered && self.set_last(Last::Quantifier)
            }
            _ => false,
        }
    }

    fn end_backref(&mut self, value: u32) {
        if value > self.at.max_backref {
            self.undo.push(Undo::Backref(self.at.max_backref));
            self.at.max_backref = value;
        }
        self.set_mode(Mode::Terms { last: Last::Atom });
    }

    /// Characters that finish the pattern (short, not always the shortest), at most `max`
    /// of them (None past it: `\99999` needs 99,999 groups). Empty when it is whole.
    pub(crate) fn completion(&self, max: usize) -> Option<Vec<u32>> {
        let mut s = self.fork();
        let mut out = Vec::new();
        // Each step adds a character (it closes an escape, a class, a group, or adds a
        // group that a reference needs), or finds none and stops.
        while out.len() <= max {
            if s.is_complete() {
                return Some(out);
            }
            let next = s.next_chars();
            let mut moved = false;
            for c in next.chars() {
                if !s.push_char(c as u32) {
                    break;
                }
                out.push(c as u32);
                moved = true;
            }
            if !moved {
                // A character chosen one at a time where the fixed choice failed.
                let Some(c) = (0x20..0x7F).find(|&c| s.fork().push_char(c) && s.progress_char(c)) else { break };
                s.push_char(c);
                out.push(c);
            }
            s.forget_undo();
        }
        None
    }

    /// Does `c` move a digit-reading mode towards its end (used where the fixed choice of
    /// [`RegexSyntax::next_chars`] did not fit)?
    fn progress_char(&self, c: u32) -> bool {
        hex_value(c).is_some() || c == '}' as u32 || c == ']' as u32 || c == ')' as u32 || c == '>' as u32
    }

    /// The next characters of a completion from here.
    fn next_chars(&self) -> String {
        match self.at.mode {
            Mode::Terms { .. } | Mode::Backref { .. } => {
                if !self.at.groups.is_empty() {
                    ")".into()
                } else if let Some(r) = self.at.references.iter().find(|r| !self.at.names.contains(r)) {
                    let name: String = r.iter().filter_map(|&c| char::from_u32(c)).collect();
                    format!("(?<{name}>)")
                } else {
                    "()".into()
                }
            }
            Mode::Escape(Ctx::Class { pend: Pending::Dash(ClassAtom::Char(x)) }) => format!("u{{{x:X}}}"),
            Mode::Escape(Ctx::Name { .. }) => "u".into(),
            Mode::Escape(_) => "n".into(),
            Mode::Control(Ctx::Class { pend: Pending::Dash(ClassAtom::Char(x)) }) => {
                char::from_u32('A' as u32 + x.max(1) - 1).map(String::from).unwrap_or_default()
            }
            Mode::Control(_) => "A".into(),
            Mode::Hex { left, .. } => "f".repeat(usize::from(left)),
            Mode::Unicode { .. } | Mode::UnicodeBrace { .. } | Mode::Lead { .. } | Mode::LeadBackslash { .. } => {
                self.unicode_closer()
            }
            Mode::Property { open: false, .. } => "{".into(),
            Mode::Property { open: true, .. } => {
                let text: String = self.at.buf.iter().filter_map(|&c| char::from_u32(c)).collect();
                let i = PROPERTY_BODIES.partition_point(|b| *b < text.as_str());
                let body = PROPERTY_BODIES[i..].iter().filter(|b| b.starts_with(&text)).min_by_key(|b| b.len());
                body.map(|b| format!("{}}}", &b[text.len()..])).unwrap_or_default()
            }
            Mode::RefOpen => "<".into(),
            Mode::Class { .. } => "]".into(),
            Mode::Paren => ")".into(),
            Mode::ParenQuestion => ":".into(),
            Mode::ParenLess => "=".into(),
            Mode::Name { kind } => {
                let taken = kind == NameKind::Group && self.at.names.contains(&self.at.buf);
                if self.at.buf.is_empty() || taken {
                    "a".into()
                } else {
                    ">".into()
                }
            }
            Mode::Braces { comma } => {
                if self.at.buf.is_empty() {
                    "0}".into()
                } else if !comma || self.at.buf.len() == self.at.min_len {
                    "}".into()
                } else {
                    // Nines until the bound is at least the minimum.
                    let min = &self.at.buf[..self.at.min_len];
                    let mut max = self.at.buf[self.at.min_len..].to_vec();
                    let mut nines = String::new();
                    while decimal_cmp(min, &max).is_gt() {
                        max.push('9' as u32);
                        nines.push('9');
                    }
                    nines + "}"
                }
            }
        }
    }

    /// The rest of a `\u` escape (or pair) that gives what its context needs: the first
    /// hex digit (or pair, or `}`) that keeps a way open.
    fn unicode_closer(&self) -> String {
        if let Mode::Lead { ctx: Ctx::Class { pend }, lead } = self.at.mode {
            // A lone lead needs no trail unless the range's start is above it.
            return match pend {
                Pending::Dash(ClassAtom::Char(x)) if x > lead => "\\uDFFF".into(),
                _ => "]".into(),
            };
        }
        if let Mode::LeadBackslash { .. } = self.at.mode {
            return "uDFFF".into();
        }
        // In `\u{...}`, a zero digit changes nothing: close first, else grow.
        let order = if matches!(self.at.mode, Mode::UnicodeBrace { .. }) { "}123456789ABCDEF0" } else { "0123456789ABCDEF}" };
        for c in order.chars() {
            if self.fork().push_char(c as u32) {
                return c.to_string();
            }
        }
        if let Mode::Lead { .. } = self.at.mode {
            return "\\u".into();
        }
        String::new()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Reads `s`: None if a character is refused, else whether it is whole.
    pub(in crate::grammar::regex_text) fn read(s: &str) -> Option<bool> {
        let mut r = RegexSyntax::new();
        for c in s.chars() {
            if !r.push_char(c as u32) {
                return None;
            }
        }
        Some(r.is_complete())
    }

    #[test]
    fn valid_patterns_are_whole() {
        for p in [
            "",
            "a",
            "^[a-z0-9_-]+$",
            r"\d{2,4}\.\w*?",
            r"(?<year>\d{4})-\k<year>",
            r"\k<later>(?<later>x)",
            r"(a)\1",
            r"\1(a)",
            r"[\u{1F600}-\u{1F64F}]",
            r"[\uD83D\uDE00-\uD83D\uDE4F]",
            r"\p{Script=Greek}\P{L}",
            r"(?<=a)b(?<!c)(?=d)(?!e)",
            r"[^]",
            r"[]",
            r"[a-]",
            r"[-a]",
            r"[\d-]",
            r"a{3}b{3,}c{3,10}",
            r"a{10,10}",
            r"\/\.\*",
            r"[\b\-]",
            r"\0",
            r"\cJ",
            r"\x7f",
            r"(?:)",
            r"(|)",
            r"\u{0000000041}",
        ] {
            assert_eq!(read(p), Some(true), "{p:?}");
        }
    }

    #[test]
    fn invalid_patterns_are_refused_or_unfinished() {
        for p in [
            "(",
            ")",
            "*a",
            "a**",
            "a{2,1}",
            "{",
            "a{",
            "}",
            "]",
            r"\-",
            r"\a",
            r"[z-a]",
            r"[\d-a]",
            r"[a-\d]",
            r"\01",
            r"[\1]",
            r"\1",
            r"\k<x>",
            r"(?<a>)(?<a>)",
            r"(?=a)*",
            r"\p{NotAProperty}",
            r"\p{l}",
            r"\u{110000}",
            r"[\x7f-\x0",
            r"(?<1a>)",
            r"\c1",
            r"a??? ",
            r"^*",
        ] {
            assert_ne!(read(p), Some(true), "{p:?}");
        }
    }

    #[test]
    fn refusal_is_at_the_first_character_with_no_way_on() {
        // Viability, not "no error yet": nothing at least \x7f starts with \x0.
        assert_eq!(read(r"[\x7f-\x"), Some(false));
        assert_eq!(read(r"[\x7f-\x0"), None);
        assert_eq!(read(r"[\u0400-\c"), None);
        assert_eq!(read(r"\p{Scr"), Some(false));
        assert_eq!(read(r"\p{Scx"), None);
        assert_eq!(read(r"a{5,1"), Some(false));
    }

    #[test]
    fn completions_finish_the_pattern() {
        for p in [
            "(",
            "((a|[b-",
            r"\",
            r"[z-\",
            r"[\u0400-\u",
            r"\u{",
            r"\p{Sc",
            r"\k<na",
            r"(?<x",
            r"(?<a>)(?<a",
            r"a{5,1",
            r"\3",
            r"[\uD83D",
            r"[\uD83D\",
            r"(?<\u",
            r"(?",
            r"[\cX-\c",
        ] {
            let mut r = RegexSyntax::new();
            for c in p.chars() {
                assert!(r.push_char(c as u32), "{p:?} at {c:?}");
            }
            let rest: String = r.completion(1000).unwrap().iter().filter_map(|&c| char::from_u32(c)).collect();
            let whole = format!("{p}{rest}");
            assert_eq!(read(&whole), Some(true), "{p:?} + {rest:?}");
        }
    }

    #[test]
    fn undo_restores_the_state() {
        let mut r = RegexSyntax::new();
        for c in "(?<n>a".chars() {
            assert!(r.push_char(c as u32));
        }
        let before = format!("{r:?}");
        let m = r.mark();
        for c in r")\k<n>[a-z]{2,3}(".chars() {
            assert!(r.push_char(c as u32));
        }
        r.undo_to(m);
        assert_eq!(format!("{r:?}"), before);
    }
}
