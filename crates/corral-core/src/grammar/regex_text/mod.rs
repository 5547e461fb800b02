//! JSON strings that must be ECMAScript regular expressions (JSON Schema's
//! `format: "regex"`): the run-time check beside the parser.
//!
//! The strings that are regular expressions are not a regular language (groups nest),
//! and some of their rules are not context-free either (`{n,m}` with n ≤ m, a range's
//! ends in order, `\2` needing two captures somewhere in the pattern). So the grammar
//! writes such a string as any JSON string, as the one entry of a `perm!` list marked
//! [`Distinct::Regex`], and the matcher runs a [`RegexTexts`] beside the parser: where
//! the parser expects that entry, at a string's opening quote, the check starts reading
//! the string's characters (decoded from JSON: escapes, UTF-8) into a `RegexSyntax`
//! (`syntax.rs`), refuses a token whose characters leave no way to finish a pattern, and
//! refuses the closing quote of an unfinished one. Between such strings it only watches
//! quotes.
//!
//! Masks: inside a pattern, the tokens that break it depend only on the pattern state, and
//! the compiled grammar keeps them per state (`PatternTokens`). A new state walks the
//! token trie with the reader (`PatternWalk`), marking the subtrees it refuses; where the
//! pattern reads some text without changing how it reads the next byte (between terms,
//! in a class, in a name: `Neutral`), a subtree below which only such text lies is
//! vouched for unread (sorted once per compiled grammar). Elsewhere only tokens with a quote can start a pattern, and
//! most of them cannot go wrong whatever follows their quote (`quote_token_is_safe`):
//! the others are read one by one.
//!
//! Beside a `pattern` on the same string, [`all_patterns`] and [`finishable_everywhere`]
//! decide at compile time whether the two can be enforced together (`beside.rs`).
//!
//! The syntax is ECMAScript's in Unicode mode; see docs/json_schema.md.

mod beside;
mod properties;
mod syntax;

pub use beside::{all_patterns, finishable_everywhere};
pub(crate) use syntax::RegexSyntax;
use syntax::SyntaxKey;

use crate::error::Result;
use crate::frontend::ast::Distinct;
use crate::grammar::distinct_keys::{EntryQuery, NoDistinctLists};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use crate::util::hash::HashMap;
use crate::vocab::{ByteRecognizer, TokenTrie, Vocabulary};

/// Is `body` what may stand between the braces of an ECMAScript `\p{...}` escape in
/// Unicode mode (`L`, `Script=Latin`, exactly as spelled; see `properties.rs`)?
pub fn is_property_body(body: &str) -> bool {
    properties::PROPERTY_BODIES.binary_search(&body).is_ok()
}

/// Every body [`is_property_body`] accepts, in byte order.
pub fn property_bodies() -> &'static [&'static str] {
    properties::PROPERTY_BODIES
}

/// Is `text` (decoded) an ECMAScript regular expression, as this check reads one?
pub fn is_pattern(text: &str) -> bool {
    let mut syntax = RegexSyntax::new();
    text.chars().all(|c| {
        let ok = syntax.push_char(c as u32);
        syntax.forget_undo();
        ok
    }) && syntax.is_complete()
}

/// How far the bytes of a JSON string's character have been read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Decoder {
    /// Between characters.
    Plain,
    /// In a UTF-8 sequence: `left` continuation bytes to come, the value's bits so far,
    /// and the least value a sequence of its length spells (shorter ones are invalid).
    Utf8 { left: u8, cp: u32, min: u32 },
    /// After `\`.
    Escape,
    /// In `\uXXXX`: `left` hex digits to come.
    Hex { left: u8, value: u32 },
}

/// What one byte of a JSON string's text gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decoded {
    /// Part of a character.
    Partial,
    /// A whole character.
    Char(u32),
    /// The closing quote.
    Close,
    /// Not JSON string text (the grammar refuses it too).
    Invalid,
}

impl Decoder {
    /// Reads byte `b`. A `\uXXXX` gives its code unit: corral writes no surrogate escapes
    /// (it writes characters raw, and escapes only `"`, `\` and controls).
    fn push(&mut self, b: u8) -> Decoded {
        let (next, out) = match *self {
            Decoder::Plain => match b {
                b'"' => (Decoder::Plain, Decoded::Close),
                b'\\' => (Decoder::Escape, Decoded::Partial),
                0x00..=0x1F => (Decoder::Plain, Decoded::Invalid),
                0x20..=0x7F => (Decoder::Plain, Decoded::Char(u32::from(b))),
                0xC2..=0xDF => (Decoder::Utf8 { left: 1, cp: u32::from(b & 0x1F), min: 0x80 }, Decoded::Partial),
                0xE0..=0xEF => (Decoder::Utf8 { left: 2, cp: u32::from(b & 0x0F), min: 0x800 }, Decoded::Partial),
                0xF0..=0xF4 => (Decoder::Utf8 { left: 3, cp: u32::from(b & 0x07), min: 0x10000 }, Decoded::Partial),
                _ => (Decoder::Plain, Decoded::Invalid),
            },
            Decoder::Utf8 { left, cp, min } => {
                if b & 0xC0 != 0x80 {
                    return Decoded::Invalid;
                }
                let cp = (cp << 6) | u32::from(b & 0x3F);
                if left > 1 {
                    (Decoder::Utf8 { left: left - 1, cp, min }, Decoded::Partial)
                } else {
                    (Decoder::Plain, Decoded::Char(cp))
                }
            }
            Decoder::Escape => {
                let c = match b {
                    b'"' | b'\\' | b'/' => u32::from(b),
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    b'n' => 0x0A,
                    b'r' => 0x0D,
                    b't' => 0x09,
                    b'u' => {
                        *self = Decoder::Hex { left: 4, value: 0 };
                        return Decoded::Partial;
                    }
                    _ => return Decoded::Invalid,
                };
                (Decoder::Plain, Decoded::Char(c))
            }
            Decoder::Hex { left, value } => {
                let Some(d) = char::from(b).to_digit(16) else { return Decoded::Invalid };
                let value = value * 16 + d;
                if left > 1 {
                    (Decoder::Hex { left: left - 1, value }, Decoded::Partial)
                } else {
                    (Decoder::Plain, Decoded::Char(value))
                }
            }
        };
        *self = next;
        out
    }
}

impl Decoder {
    /// The characters a half-read character may still turn out to be, as corral writes
    /// strings (raw UTF-8; `\"`, `\\`, the short escapes and `\u00XX` for the other
    /// controls): up to four ranges, the count used.
    fn reachable(&self) -> ([(u32, u32); 4], usize) {
        const CONTROLS: (u32, u32) = (0x00, 0x1F);
        match *self {
            Decoder::Plain => ([(0, 0); 4], 0),
            Decoder::Utf8 { left, cp, min } => {
                let bits = 6 * u32::from(left);
                let (lo, hi) = ((cp << bits).max(min), ((cp << bits) | ((1 << bits) - 1)).min(0x10FFFF));
                if lo <= hi {
                    ([(lo, hi), (0, 0), (0, 0), (0, 0)], 1)
                } else {
                    ([(0, 0); 4], 0)
                }
            }
            Decoder::Escape => ([(0x22, 0x22), (0x5C, 0x5C), CONTROLS, (0, 0)], 3),
            Decoder::Hex { left, value } => {
                let bits = 4 * u32::from(left);
                let (lo, hi) = (value << bits, (value << bits) | ((1 << bits) - 1));
                let (lo, hi) = (lo.max(CONTROLS.0), hi.min(CONTROLS.1));
                if lo <= hi {
                    ([(lo, hi), (0, 0), (0, 0), (0, 0)], 1)
                } else {
                    ([(0, 0); 4], 0)
                }
            }
        }
    }
}

/// Can `syntax` read some character a half-read one (`decoder`) may still become? Where
/// none fits, the bytes read so far of it are already a dead end.
fn partial_fits(syntax: &mut RegexSyntax, decoder: &Decoder) -> bool {
    let (ranges, n) = decoder.reachable();
    ranges[..n].iter().any(|&(lo, hi)| syntax.first_read(lo, hi).is_some())
}

/// Appends character `c` as corral spells it in a JSON string.
fn encode(c: u32, out: &mut Vec<u8>) {
    let Some(ch) = char::from_u32(c) else { return };
    match ch {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\r' => out.extend_from_slice(b"\\r"),
        '\t' => out.extend_from_slice(b"\\t"),
        '\u{0}'..='\u{1f}' => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
        _ => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
    }
}

/// A pattern string being read: its decoder and its syntax so far.
#[derive(Debug, Clone)]
struct Open {
    decoder: Decoder,
    syntax: RegexSyntax,
}

impl Open {
    fn new() -> Open {
        Open { decoder: Decoder::Plain, syntax: RegexSyntax::new() }
    }

    /// A copy without the undo log, for reading ahead.
    fn fork(&self) -> Open {
        Open { decoder: self.decoder, syntax: self.syntax.fork() }
    }
}

/// How to undo one token read by [`RegexTexts::push_token`].
#[derive(Debug, Clone)]
enum TokenUndo {
    /// No pattern string was open before the token.
    WasClosed,
    /// One was: its decoder and its syntax's undo mark before the token, and the string
    /// itself if the token closed it.
    WasOpen { decoder: Decoder, mark: usize, closed: Option<Open> },
}

/// The pattern strings of the output (see the module docs), with how to undo each token
/// (a mark in the open pattern's undo log: a long pattern costs no copy per token).
#[derive(Debug, Clone, Default)]
pub struct RegexTexts {
    /// The pattern string being written, if one is.
    open: Option<Open>,
    /// Per token read: how to undo it.
    history: Vec<TokenUndo>,
}

/// Reads `bytes` from `open` (`query`: the parser, standing where they start). Returns
/// the index of the first byte refused: a character after which no pattern can be
/// finished, or the closing quote of an unfinished one; `open` is then left after the
/// bytes before it. `closed`: where the string open at the start goes when the bytes
/// close it (for undoing; strings opened and closed inside `bytes` are dropped).
/// `keep_undo`: keep the syntax's undo log (else it is dropped as the bytes are read).
fn read(
    open: &mut Option<Open>,
    bytes: &[u8],
    query: &mut dyn EntryQuery,
    closed: &mut Option<Open>,
    keep_undo: bool,
) -> Result<Option<usize>> {
    let mut first = open.is_some();
    for (i, &b) in bytes.iter().enumerate() {
        match open {
            None => {
                if b == b'"' && query.distinct_entry_at(i, Distinct::Regex)? {
                    *open = Some(Open::new());
                }
            }
            Some(o) => match o.decoder.push(b) {
                Decoded::Partial if partial_fits(&mut o.syntax, &o.decoder) => {}
                Decoded::Partial => return Ok(Some(i)),
                Decoded::Char(c) => {
                    if !o.syntax.push_char(c) {
                        return Ok(Some(i));
                    }
                    if !keep_undo {
                        o.syntax.forget_undo();
                    }
                }
                Decoded::Close if o.syntax.is_complete() => {
                    let done = open.take();
                    if std::mem::take(&mut first) {
                        *closed = done;
                    }
                }
                Decoded::Close | Decoded::Invalid => return Ok(Some(i)),
            },
        }
    }
    Ok(None)
}

impl RegexTexts {
    /// A check at the start of the output.
    pub fn new() -> RegexTexts {
        RegexTexts::default()
    }

    /// Is a pattern string open (its opening quote read, its closing one not)?
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Reads an accepted token's bytes (`query`: the parser, standing where they start).
    /// Returns false, changing nothing, if they break a pattern string.
    pub fn push_token(&mut self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<bool> {
        let mut undo = match &self.open {
            None => TokenUndo::WasClosed,
            Some(o) => TokenUndo::WasOpen { decoder: o.decoder, mark: o.syntax.mark(), closed: None },
        };
        let mut closed = None;
        let refused = read(&mut self.open, bytes, query, &mut closed, true);
        if let TokenUndo::WasOpen { closed: c, .. } = &mut undo {
            *c = closed;
        }
        match refused {
            Ok(None) => {
                self.history.push(undo);
                Ok(true)
            }
            Ok(Some(_)) => {
                self.undo(undo);
                Ok(false)
            }
            Err(e) => {
                self.undo(undo);
                Err(e)
            }
        }
    }

    /// Puts the state back to before one token.
    fn undo(&mut self, undo: TokenUndo) {
        match undo {
            TokenUndo::WasClosed => self.open = None,
            TokenUndo::WasOpen { decoder, mark, closed } => {
                if let Some(c) = closed {
                    self.open = Some(c);
                }
                if let Some(o) = &mut self.open {
                    o.syntax.undo_to(mark);
                    o.decoder = decoder;
                }
            }
        }
    }

    /// Undoes the last `n` tokens read by [`RegexTexts::push_token`] (fewer if fewer
    /// were).
    pub fn rollback(&mut self, n: usize) {
        for _ in 0..n {
            let Some(u) = self.history.pop() else { return };
            self.undo(u);
        }
    }

    /// Where in `bytes`, read from here, the first byte that breaks a pattern string is
    /// (None: nowhere). Changes nothing.
    pub fn first_refusal(&self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<Option<usize>> {
        read(&mut self.open.as_ref().map(Open::fork), bytes, query, &mut None, false)
    }

    /// Bytes that finish the open pattern string's pattern (not the string: the closing
    /// quote is the grammar's), JSON-encoded as corral writes strings: first the rest of
    /// a half-read character, then characters. Empty when none is open or it is whole;
    /// None when it would take more than `max` characters.
    pub fn completion(&self, max: usize) -> Option<Vec<u8>> {
        let Some(o) = &self.open else { return Some(Vec::new()) };
        let mut syntax = o.syntax.fork();
        let mut out = Vec::new();
        if o.decoder != Decoder::Plain {
            let (ranges, n) = o.decoder.reachable();
            let Some(c) = ranges[..n].iter().find_map(|&(lo, hi)| syntax.first_read(lo, hi)) else { return Some(out) };
            syntax.push_char(c);
            let mut whole = Vec::new();
            encode(c, &mut whole);
            // The bytes of `c`'s spelling not read yet.
            let read = match o.decoder {
                Decoder::Utf8 { left, .. } => whole.len() - usize::from(left),
                Decoder::Escape => 1,
                Decoder::Hex { left, .. } => whole.len() - usize::from(left),
                Decoder::Plain => 0,
            };
            out.extend_from_slice(&whole[read.min(whole.len())..]);
        }
        for c in syntax.completion(max)? {
            encode(c, &mut out);
        }
        Some(out)
    }

    /// A walker of the token trie standing inside the open pattern string (None when
    /// none is open).
    #[cfg(test)]
    pub(crate) fn walk(&self) -> Option<PatternWalk> {
        let o = self.open.as_ref()?;
        let syntax = o.syntax.fork();
        Some(PatternWalk { decoder: o.decoder, syntax, stack: Vec::new(), closed_at: None })
    }
}

/// A [`ByteRecognizer`] inside an open pattern string: refuses bytes that break the
/// pattern (or close it unfinished), and accepts anything after the string's closing
/// quote (the parser judges that; a token that opens another pattern string there is
/// read on its own, see the matcher).
pub(crate) struct PatternWalk {
    decoder: Decoder,
    syntax: RegexSyntax,
    /// Per byte pushed before the string closed: the decoder before it and the syntax's
    /// undo mark.
    stack: Vec<(Decoder, usize)>,
    /// How many bytes were pushed when the closing quote was.
    closed_at: Option<usize>,
}

impl PatternWalk {
    /// What text leaves the pattern reading as it does now (None: none known). After the
    /// closing quote any bytes are fine (the parser judges them): see
    /// [`PatternTokens::takes_subtree`].
    fn neutral(&self) -> Option<Neutral> {
        if matches!(self.decoder, Decoder::Escape | Decoder::Hex { .. }) {
            return None;
        }
        self.syntax.neutral_text()
    }
}

impl ByteRecognizer for PatternWalk {
    fn push_byte(&mut self, b: u8) -> bool {
        if self.closed_at.is_some() {
            self.stack.push((self.decoder, self.syntax.mark()));
            return true;
        }
        let before = (self.decoder, self.syntax.mark());
        let ok = match self.decoder.push(b) {
            Decoded::Partial => partial_fits(&mut self.syntax, &self.decoder),
            Decoded::Char(c) => self.syntax.push_char(c),
            Decoded::Close if self.syntax.is_complete() => {
                self.closed_at = Some(self.stack.len());
                true
            }
            Decoded::Close | Decoded::Invalid => false,
        };
        if ok {
            self.stack.push(before);
        } else {
            self.decoder = before.0;
        }
        ok
    }

    fn pop_bytes(&mut self, n: usize) {
        for _ in 0..n {
            let Some((decoder, mark)) = self.stack.pop() else { return };
            match self.closed_at {
                // A byte after the closing quote: nothing of the pattern to undo.
                Some(k) if k < self.stack.len() => {}
                _ => {
                    self.closed_at = None;
                    self.decoder = decoder;
                    self.syntax.undo_to(mark);
                }
            }
        }
    }
}

/// Text a pattern reads without changing how it reads the next byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Neutral {
    /// Between terms (not right after `\0`): every byte but `\ ( ) [ ] { } * + ? "`.
    /// Digits, `.`, `|`, `^`, `$`, `-` and letters are atoms or assertions there, and none
    /// of them can make a byte of this kind refused.
    Terms,
    /// In a class not at its start, after no `x-` and no `\0`: every byte but `\ ] - "`.
    Class,
    /// In a name past its first character: ASCII letters, digits, `_` and `$`.
    Name,
}

/// Is byte `b` neutral text of `kind` (see [`Neutral`])? Controls never are (JSON
/// escapes them).
fn is_neutral(kind: Neutral, b: u8) -> bool {
    let special: &[u8] = match kind {
        Neutral::Terms => b"\\()[]{}*+?\"",
        Neutral::Class => b"\\]-\"",
        Neutral::Name => return b.is_ascii_alphanumeric() || b == b'_' || b == b'$',
    };
    b >= 0x20 && !special.contains(&b)
}

/// Where an open pattern string stands: its half-read character and its pattern so far.
type PatternState = (Decoder, SyntaxKey);

/// The vocabulary sorted for the pattern check's masks (built once per compiled
/// grammar that has pattern strings), and the tokens refused in each pattern state met
/// so far.
#[derive(Debug)]
pub(crate) struct PatternTokens {
    /// Per pattern state (half-read character, pattern so far): the tokens a mask there
    /// refuses, as a mask (see [`PatternTokens::refused`]).
    refused: RwLock<HashMap<PatternState, Arc<[u32]>>>,
    /// Tokens with a quote that may break a pattern string wherever they are read
    /// outside one (see [`quote_token_is_safe`]).
    pub(crate) unsafe_quotes: Vec<u32>,
    /// Per node of the vocabulary's trie: is every byte below it neutral between terms
    /// (see [`Neutral::Terms`])? A mask's walk takes such a subtree whole there.
    terms_below: Vec<bool>,
    /// The same in a class ([`Neutral::Class`]).
    class_below: Vec<bool>,
    /// The same in a name ([`Neutral::Name`]).
    name_below: Vec<bool>,
}

impl PatternTokens {
    /// Sorts the normal tokens of `vocab`.
    pub(crate) fn new(vocab: &Vocabulary) -> PatternTokens {
        let unsafe_quotes =
            vocab.quote_tokens().all.iter().map(|q| q.id).filter(|&id| !quote_token_is_safe(vocab.token_bytes(id))).collect();
        PatternTokens {
            refused: RwLock::new(HashMap::default()),
            unsafe_quotes,
            terms_below: vocab.trie().below_all(|b| is_neutral(Neutral::Terms, b)),
            class_below: vocab.trie().below_all(|b| is_neutral(Neutral::Class, b)),
            name_below: vocab.trie().below_all(|b| is_neutral(Neutral::Name, b)),
        }
    }

    /// The normal tokens that break the pattern string open in `texts` (reading up to
    /// its closing quote: what follows is the parser's, and a token that opens another
    /// pattern string there is read on its own by the caller), as a mask of
    /// `mask_words` words: found by walking `trie` once per pattern state, and kept while
    /// `cache`'s bytes stay below its bound.
    pub(crate) fn refused(
        &self,
        texts: &RegexTexts,
        trie: &TokenTrie,
        mask_words: usize,
        cache: (&AtomicUsize, usize),
    ) -> Option<Arc<[u32]>> {
        let o = texts.open.as_ref()?;
        let key = (o.decoder, o.syntax.key());
        if let Some(r) = self.refused.read().ok().and_then(|c| c.get(&key).cloned()) {
            return Some(r);
        }
        let mut walk = PatternWalk { decoder: o.decoder, syntax: o.syntax.fork(), stack: Vec::new(), closed_at: None };
        let mut refused = vec![0u32; mask_words];
        trie.refused(
            &mut walk,
            |w, node| self.takes_subtree(w, node),
            |ids| ids.iter().for_each(|&t| refused[(t >> 5) as usize] |= 1 << (t & 31)),
        );
        let refused: Arc<[u32]> = Arc::from(refused);
        let (used, most) = cache;
        if used.load(Ordering::Relaxed) < most {
            used.fetch_add(refused.len() * 4 + std::mem::size_of_val(&key) + key.1.heap_bytes(), Ordering::Relaxed);
            if let Ok(mut c) = self.refused.write() {
                c.insert(key, refused.clone());
            }
        }
        Some(refused)
    }

    /// May a mask's walk, standing at trie node `node` with `walk`, take the node's
    /// whole subtree?
    fn takes_subtree(&self, walk: &PatternWalk, node: u32) -> bool {
        match walk.neutral() {
            _ if walk.closed_at.is_some() => true,
            Some(Neutral::Terms) => self.terms_below[node as usize],
            Some(Neutral::Class) => self.class_below[node as usize],
            Some(Neutral::Name) => self.name_below[node as usize],
            None => false,
        }
    }
}

/// Can a token with a quote (`bytes`) never break a pattern string, wherever it is read
/// outside one? True when after each of its quotes the bytes up to the next quote are
/// the start of a pattern (a whole one if that quote closes it): whether the quote opens
/// a pattern string or not, then, nothing is refused.
pub(crate) fn quote_token_is_safe(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().filter(|(_, &b)| b == b'"').all(|(i, _)| {
        let mut open = Some(Open::new());
        matches!(read(&mut open, &bytes[i + 1..], &mut NoDistinctLists, &mut None, false), Ok(None))
    })
}

#[cfg(test)]
mod tests;
