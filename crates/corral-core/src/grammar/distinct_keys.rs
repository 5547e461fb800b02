//! Distinct object keys: the run-time check that JSON output never repeats a key inside
//! one object.
//!
//! A context-free grammar cannot keep an object's keys distinct when it allows infinitely
//! many of them (`additionalProperties`, `patternProperties`), so a grammar compiled from
//! a JSON Schema carries a flag and its matcher runs a [`KeyTracker`] beside the parser.
//! The tracker reads the output's bytes as JSON (it needs no grammar: strings, escapes,
//! `{ } [ ] , :` are enough) and keeps, for every open object, the keys written so far,
//! byte for byte. Keys are compared as written: the JSON Schema translator spells every
//! character one way only (`\n`, never `\u000a`; `/`, never `\/`), so equal text is
//! equal key.
//!
//! A token is refused when it would close a key already in its object, or when it leaves a
//! key half written that can only be finished as keys already there (`"ab` when `abc` is
//! written and the key's pattern is `^(abc|x+)$`). The second test asks the grammar itself
//! (any [`ByteRecognizer`] standing after the token) whether some unwritten key can still
//! be finished: see `fresh_key`. The rest of a mask is the grammar's.
//!
//! The strings of a `uniqueItems` array of strings are kept distinct the same way: such an
//! array is a `perm!` list whose entry is marked distinct (see [`crate::grammar::perm`]),
//! and where one of its items starts, the tracker asks the parser ([`EntryQuery`]) whether
//! the grammar expects an entry of a distinct list there. If so, the array's strings are
//! tracked like an object's keys: a token that closes one already written is refused, and
//! so is one that leaves it half written where only written ones can finish it.
//!
//! What this does not see: an object whose keys come from a finite class of more than 256
//! keys (the translator names smaller classes one by one) that has used them all, and
//! whose grammar still asks for another member. No schema met in practice gets there.

use std::collections::BTreeSet;
use std::ops::Bound;

use crate::error::Result;
use crate::vocab::{ByteRecognizer, QuoteToken};

/// Where the tracker is in the JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    /// Between strings.
    Outside,
    /// Inside an object key; `escape`: right after a backslash.
    Key { escape: bool },
    /// Inside a string value.
    Str { escape: bool },
}

/// Asks the parser whether an entry of a distinct list (a string of a `uniqueItems`
/// array) may start at a byte of the text being read.
pub trait EntryQuery {
    /// Does the grammar expect an entry of a distinct list right before byte `offset` of
    /// the bytes being read (0: before the first)?
    fn distinct_entry_at(&mut self, offset: usize) -> Result<bool>;
}

/// The answer for a grammar with no distinct list: never.
pub struct NoDistinctLists;

impl EntryQuery for NoDistinctLists {
    fn distinct_entry_at(&mut self, _offset: usize) -> Result<bool> {
        Ok(false)
    }
}

/// One open container.
#[derive(Debug, Clone, Default)]
struct Frame {
    object: bool,
    /// The next string is a tracked one: a key (after `{` or `,` in an object), an item
    /// (after `[` or `,` in an array whose strings are kept distinct).
    expect_key: bool,
    /// Are the strings of this container tracked? Always for an object; for an array,
    /// once the parser was asked (None before).
    distinct: Option<bool>,
    keys: BTreeSet<Box<[u8]>>,
}

impl Frame {
    /// A container just opened; `arrays`: may an array keep its strings distinct?
    fn new(object: bool, arrays: bool) -> Frame {
        let distinct = if object { Some(true) } else { (!arrays).then_some(false) };
        Frame { object, expect_key: true, distinct, keys: BTreeSet::new() }
    }
}

/// The inverse of one change, for rollback.
#[derive(Debug, Clone)]
enum Undo {
    Lex(Lex),
    Push,
    Pop(Frame),
    Expect(bool),
    KeyByte,
    /// A key was closed: it leaves the top frame's set and becomes the key buffer again.
    Close(Box<[u8]>),
    /// The top frame's `distinct` was decided.
    Distinct(Option<bool>),
}

/// The keys of every open object of the output so far, with an undo log per token.
#[derive(Debug, Clone)]
pub struct KeyTracker {
    frames: Vec<Frame>,
    lex: Lex,
    /// The key being written (raw bytes between the quotes).
    key: Vec<u8>,
    undo: Vec<Undo>,
    /// Length of `undo` before each accepted token.
    marks: Vec<usize>,
    /// Does the grammar have distinct lists? If not, no array is ever asked about.
    arrays: bool,
}

impl Default for KeyTracker {
    fn default() -> Self {
        KeyTracker::new(false)
    }
}

impl KeyTracker {
    /// A tracker at the start of the output; `arrays`: does the grammar keep the strings
    /// of some arrays distinct (see [`EntryQuery`])? Without, arrays are never tracked.
    pub fn new(arrays: bool) -> KeyTracker {
        KeyTracker { frames: Vec::new(), lex: Lex::Outside, key: Vec::new(), undo: Vec::new(), marks: Vec::new(), arrays }
    }
}

/// The keys a half-written key must avoid: a frame's set plus keys closed earlier in the
/// same token.
pub(crate) struct Seen<'a> {
    pub(crate) set: Option<&'a BTreeSet<Box<[u8]>>>,
    pub(crate) extra: &'a [Vec<u8>],
}

impl Seen<'_> {
    fn contains(&self, w: &[u8]) -> bool {
        self.set.is_some_and(|s| s.contains(w)) || self.extra.iter().any(|k| k.as_slice() == w)
    }

    /// Does some seen key start with `w` (or equal it)?
    fn has_prefix(&self, w: &[u8]) -> bool {
        let in_set = self
            .set
            .is_some_and(|s| s.range::<[u8], _>((Bound::Included(w), Bound::Unbounded)).next().is_some_and(|k| k.starts_with(w)));
        in_set || self.extra.iter().any(|k| k.starts_with(w))
    }

    fn is_empty(&self) -> bool {
        self.set.is_none_or(|s| s.is_empty()) && self.extra.is_empty()
    }
}

/// What reading a token's bytes on top of the tracker would do.
pub(crate) enum Outcome<'a> {
    /// It closes a key already in its object.
    Repeat,
    /// It ends inside a key whose text so far (`written`) starts a key already in its
    /// object (in `set`, or closed by the same bytes: `extra`): whether it can still be
    /// finished as a new one is for [`fresh_key`].
    OpenKey { written: Vec<u8>, escape: bool, set: Option<&'a BTreeSet<Box<[u8]>>>, extra: Vec<Vec<u8>> },
    /// Nothing to check.
    Fine,
}

impl KeyTracker {
    /// Reads an accepted token's bytes (`query`: the parser, standing where they start).
    /// Returns false, changing nothing, if they repeat a key or a distinct item.
    pub fn push_token(&mut self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<bool> {
        self.marks.push(self.undo.len());
        for (i, &b) in bytes.iter().enumerate() {
            match self.step(b, i, query) {
                Ok(true) => {}
                Ok(false) => {
                    self.rollback(1);
                    return Ok(false);
                }
                Err(e) => {
                    self.rollback(1);
                    return Err(e);
                }
            }
        }
        Ok(true)
    }

    /// Undoes the last `n` tokens read by [`KeyTracker::push_token`] (fewer if fewer were).
    pub fn rollback(&mut self, n: usize) {
        let keep = self.marks.len().saturating_sub(n);
        let Some(&to) = self.marks.get(keep) else { return };
        self.marks.truncate(keep);
        while self.undo.len() > to {
            match self.undo.pop() {
                Some(Undo::Lex(l)) => self.lex = l,
                Some(Undo::Push) => {
                    self.frames.pop();
                }
                Some(Undo::Pop(f)) => self.frames.push(f),
                Some(Undo::Expect(e)) => {
                    if let Some(f) = self.frames.last_mut() {
                        f.expect_key = e;
                    }
                }
                Some(Undo::KeyByte) => {
                    self.key.pop();
                }
                Some(Undo::Close(k)) => {
                    if let Some(f) = self.frames.last_mut() {
                        f.keys.remove(&k);
                    }
                    self.key = k.into_vec();
                }
                Some(Undo::Distinct(d)) => {
                    if let Some(f) = self.frames.last_mut() {
                        f.distinct = d;
                    }
                }
                None => break,
            }
        }
    }

    fn set_lex(&mut self, lex: Lex) {
        self.undo.push(Undo::Lex(self.lex));
        self.lex = lex;
    }

    fn set_expect(&mut self, expect: bool) {
        if let Some(f) = self.frames.last_mut() {
            self.undo.push(Undo::Expect(f.expect_key));
            f.expect_key = expect;
        }
    }

    /// Does a string opened at byte `at` (of the bytes being read) start a tracked one?
    /// Decides an array's `distinct` on its first string item.
    fn opens_tracked(&mut self, at: usize, query: &mut dyn EntryQuery) -> Result<bool> {
        let Some(f) = self.frames.last() else { return Ok(false) };
        if !f.expect_key || f.distinct == Some(false) {
            return Ok(false);
        }
        if f.distinct.is_none() {
            let d = query.distinct_entry_at(at)?;
            self.undo.push(Undo::Distinct(None));
            if let Some(f) = self.frames.last_mut() {
                f.distinct = Some(d);
            }
            return Ok(d);
        }
        Ok(true)
    }

    /// Reads byte `i` of a token (`b`); false if it closes a repeated key (the byte is
    /// then half read: the caller rolls back).
    fn step(&mut self, b: u8, i: usize, query: &mut dyn EntryQuery) -> Result<bool> {
        match self.lex {
            Lex::Outside => match b {
                b'{' | b'[' => {
                    self.frames.push(Frame::new(b == b'{', self.arrays));
                    self.undo.push(Undo::Push);
                }
                b'}' | b']' => {
                    if let Some(f) = self.frames.pop() {
                        self.undo.push(Undo::Pop(f));
                    }
                }
                b',' if !self.frames.is_empty() => self.set_expect(true),
                b':' if self.in_object() => self.set_expect(false),
                b'"' => {
                    let tracked = self.opens_tracked(i, query)?;
                    self.set_lex(if tracked { Lex::Key { escape: false } } else { Lex::Str { escape: false } });
                    // An array's item has started: no string is one until the next comma.
                    if !self.in_object() {
                        self.set_expect(false);
                    }
                }
                _ => {}
            },
            Lex::Key { escape: false } if b == b'"' => {
                let Some(frame) = self.frames.last_mut() else { return Ok(true) };
                if frame.keys.contains(self.key.as_slice()) {
                    return Ok(false);
                }
                let key: Box<[u8]> = std::mem::take(&mut self.key).into_boxed_slice();
                frame.keys.insert(key.clone());
                self.undo.push(Undo::Close(key));
                self.set_lex(Lex::Outside);
                self.set_expect(false);
            }
            Lex::Key { escape } => {
                self.key.push(b);
                self.undo.push(Undo::KeyByte);
                let next = !escape && b == b'\\';
                if next != escape {
                    self.set_lex(Lex::Key { escape: next });
                }
            }
            Lex::Str { escape: false } if b == b'"' => self.set_lex(Lex::Outside),
            Lex::Str { escape } => {
                let next = !escape && b == b'\\';
                if next != escape {
                    self.set_lex(Lex::Str { escape: next });
                }
            }
        }
        Ok(true)
    }

    fn in_object(&self) -> bool {
        self.frames.last().is_some_and(|f| f.object)
    }

    /// May the next string be a tracked one? (For an array not yet decided: maybe.)
    fn expecting_key(&self) -> bool {
        self.frames.last().is_some_and(|f| f.expect_key && f.distinct != Some(false))
    }

    /// Is the tracker inside a key?
    pub(crate) fn in_key(&self) -> bool {
        matches!(self.lex, Lex::Key { .. })
    }

    /// The key being written, if any: its text so far, whether that ends in an escaping
    /// backslash, and the keys of its object.
    pub(crate) fn open_key(&self) -> Option<(&[u8], bool, Seen<'_>)> {
        let Lex::Key { escape } = self.lex else { return None };
        let set = self.frames.last().map(|f| &f.keys);
        Some((&self.key, escape, Seen { set, extra: &[] }))
    }

    /// Is `token` sure to touch no key, by its shape alone? True for a token with one `"`
    /// and no `{ } [ ] , :` before it, read inside a string value (the quote ends it, and
    /// no second quote can open a key) or where a value is expected (the quote opens a
    /// string value). The mask check skips such tokens: most of those allowed in values.
    pub(crate) fn passes_untouched(&self, token: &QuoteToken) -> bool {
        token.quotes == 1
            && !token.structure_first
            && match self.lex {
                Lex::Str { .. } => true,
                Lex::Outside => !self.expecting_key(),
                Lex::Key { .. } => false,
            }
    }

    /// Does any open object have a key yet? If not, no token can repeat one.
    pub(crate) fn has_keys(&self) -> bool {
        self.frames.iter().any(|f| !f.keys.is_empty())
    }

    /// The rest of every key of the current object that starts with the key being
    /// written: a token closes a repeated key only by spelling one of these before its
    /// quote, and leaves a half-written key that needs [`fresh_key`] only by spelling the
    /// start of one.
    pub(crate) fn key_extensions(&self) -> Vec<&[u8]> {
        let Some(frame) = self.frames.last() else { return Vec::new() };
        let w = self.key.as_slice();
        frame
            .keys
            .range::<[u8], _>((Bound::Included(w), Bound::Unbounded))
            .take_while(|k| k.starts_with(w))
            .map(|k| &k[w.len()..])
            .collect()
    }

    /// What reading `bytes` would do (nothing is changed; `query`: the parser, standing
    /// where they start).
    pub(crate) fn simulate<'a>(&'a self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<Outcome<'a>> {
        Sim::new(self).run(bytes, query)
    }

    /// Where the first repeated key of `bytes` starts (the byte after its opening quote),
    /// read on top of the tracker; None if `bytes` repeat no key.
    pub(crate) fn first_repeat(&self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<Option<usize>> {
        let mut sim = Sim::new(self);
        // A key open before `bytes` starts at 0.
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let before = sim.lex;
            if !sim.step(b, i, query)? {
                return Ok(Some(start));
            }
            if before == Lex::Outside && matches!(sim.lex, Lex::Key { .. }) {
                start = i + 1;
            }
        }
        Ok(None)
    }
}

/// Accepts the prefixes of a sorted list of byte strings: walking the token trie with it
/// finds the tokens that spell the start of one of them in one pass.
pub(crate) struct PrefixesOf<'a> {
    strings: Vec<&'a [u8]>,
    /// The range of `strings` that start with the bytes pushed so far, per depth.
    ranges: Vec<(usize, usize)>,
}

impl<'a> PrefixesOf<'a> {
    /// `strings` in any order.
    pub(crate) fn new(mut strings: Vec<&'a [u8]>) -> PrefixesOf<'a> {
        strings.sort_unstable();
        let n = strings.len();
        PrefixesOf { strings, ranges: vec![(0, n)] }
    }
}

impl ByteRecognizer for PrefixesOf<'_> {
    fn push_byte(&mut self, b: u8) -> bool {
        let d = self.ranges.len() - 1;
        let (lo, hi) = self.ranges[d];
        // Within the range all share `d` bytes; a string of length `d` sorts first.
        let part = &self.strings[lo..hi];
        let from = part.partition_point(|s| s.len() <= d || s[d] < b);
        let to = from + part[from..].partition_point(|s| s[d] == b);
        if from == to {
            return false;
        }
        self.ranges.push((lo + from, lo + to));
        true
    }

    fn pop_bytes(&mut self, n: usize) {
        let keep = self.ranges.len() - n;
        self.ranges.truncate(keep);
    }
}

/// The keys of one object as a simulation sees them: the tracker's set, if the object
/// is the tracker's, and the keys closed by the simulated bytes.
type KeysSeen<'a> = (Option<&'a BTreeSet<Box<[u8]>>>, Vec<Vec<u8>>);

/// A container opened inside the bytes being simulated.
struct LocalFrame {
    object: bool,
    expect_key: bool,
    distinct: Option<bool>,
    keys: Vec<Vec<u8>>,
}

/// A read-only run of bytes on top of a tracker: frames below `base_depth` are the
/// tracker's (with keys added to the innermost of them in `base_added`), the rest local.
struct Sim<'a> {
    base: &'a KeyTracker,
    base_depth: usize,
    /// `expect_key` of the tracker's frame `base_depth - 1`, once changed here.
    base_expect: Option<bool>,
    /// `distinct` of that frame, once decided here.
    base_distinct: Option<bool>,
    base_added: Vec<Vec<u8>>,
    local: Vec<LocalFrame>,
    lex: Lex,
    key: Vec<u8>,
}

impl<'a> Sim<'a> {
    fn new(base: &'a KeyTracker) -> Sim<'a> {
        Sim {
            base,
            base_depth: base.frames.len(),
            base_expect: None,
            base_distinct: None,
            base_added: Vec::new(),
            local: Vec::new(),
            lex: base.lex,
            key: if matches!(base.lex, Lex::Key { .. }) { base.key.clone() } else { Vec::new() },
        }
    }

    /// The innermost open container: (object, expect_key, distinct).
    fn top(&self) -> Option<(bool, bool, Option<bool>)> {
        match self.local.last() {
            Some(f) => Some((f.object, f.expect_key, f.distinct)),
            None if self.base_depth > 0 => {
                let f = &self.base.frames[self.base_depth - 1];
                Some((f.object, self.base_expect.unwrap_or(f.expect_key), self.base_distinct.or(f.distinct)))
            }
            None => None,
        }
    }

    /// [`KeyTracker::opens_tracked`] on the simulated frames.
    fn opens_tracked(&mut self, at: usize, query: &mut dyn EntryQuery) -> Result<bool> {
        let Some((_, expect, distinct)) = self.top() else { return Ok(false) };
        if !expect || distinct == Some(false) {
            return Ok(false);
        }
        if distinct.is_some() {
            return Ok(true);
        }
        let d = query.distinct_entry_at(at)?;
        match self.local.last_mut() {
            Some(f) => f.distinct = Some(d),
            None => self.base_distinct = Some(d),
        }
        Ok(d)
    }

    fn set_expect(&mut self, e: bool) {
        match self.local.last_mut() {
            Some(f) => f.expect_key = e,
            None => self.base_expect = Some(e),
        }
    }

    fn seen(&self) -> Seen<'_> {
        match self.local.last() {
            Some(f) => Seen { set: None, extra: &f.keys },
            None if self.base_depth > 0 => {
                Seen { set: Some(&self.base.frames[self.base_depth - 1].keys), extra: &self.base_added }
            }
            None => Seen { set: None, extra: &[] },
        }
    }

    fn step(&mut self, b: u8, i: usize, query: &mut dyn EntryQuery) -> Result<bool> {
        match self.lex {
            Lex::Outside => match b {
                b'{' | b'[' => {
                    let Frame { object, expect_key, distinct, .. } = Frame::new(b == b'{', self.base.arrays);
                    self.local.push(LocalFrame { object, expect_key, distinct, keys: Vec::new() })
                }
                // Closes a local container (popped in the guard) or else a tracker's one.
                b'}' | b']' if self.local.pop().is_none() && self.base_depth > 0 => {
                    self.base_depth -= 1;
                    self.base_expect = None;
                    self.base_distinct = None;
                    self.base_added.clear();
                }
                b',' if self.top().is_some() => self.set_expect(true),
                b':' if self.top().is_some_and(|(o, ..)| o) => self.set_expect(false),
                b'"' => {
                    if self.opens_tracked(i, query)? {
                        self.lex = Lex::Key { escape: false };
                        self.key.clear();
                    } else {
                        self.lex = Lex::Str { escape: false };
                    }
                    if self.top().is_some_and(|(o, ..)| !o) {
                        self.set_expect(false);
                    }
                }
                _ => {}
            },
            Lex::Key { escape: false } if b == b'"' => {
                if self.seen().contains(&self.key) {
                    return Ok(false);
                }
                let key = std::mem::take(&mut self.key);
                match self.local.last_mut() {
                    Some(f) => f.keys.push(key),
                    None => self.base_added.push(key),
                }
                self.lex = Lex::Outside;
                self.set_expect(false);
            }
            Lex::Key { escape } => {
                self.key.push(b);
                self.lex = Lex::Key { escape: !escape && b == b'\\' };
            }
            Lex::Str { escape: false } if b == b'"' => self.lex = Lex::Outside,
            Lex::Str { escape } => self.lex = Lex::Str { escape: !escape && b == b'\\' },
        }
        Ok(true)
    }

    fn run(mut self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<Outcome<'a>> {
        for (i, &b) in bytes.iter().enumerate() {
            if !self.step(b, i, query)? {
                return Ok(Outcome::Repeat);
            }
        }
        let Lex::Key { escape } = self.lex else { return Ok(Outcome::Fine) };
        let written = std::mem::take(&mut self.key);
        let (set, extra): KeysSeen<'a> = match self.local.pop() {
            Some(f) => (None, f.keys),
            None if self.base_depth > 0 => {
                (Some(&self.base.frames[self.base_depth - 1].keys), std::mem::take(&mut self.base_added))
            }
            None => (None, Vec::new()),
        };
        let seen = Seen { set, extra: &extra };
        if seen.is_empty() || !seen.has_prefix(&written) {
            return Ok(Outcome::Fine);
        }
        Ok(Outcome::OpenKey { written, escape, set, extra })
    }
}

/// [`fresh_key`] after reading `bytes` (a token) on `rec`, which is left as it was. None
/// if `rec` does not accept `bytes`.
pub(crate) fn fresh_key_after<R: ByteRecognizer>(
    rec: &mut R,
    bytes: &[u8],
    written: &[u8],
    escape: bool,
    seen: &Seen<'_>,
) -> Result<Option<Vec<u8>>> {
    let read = bytes.iter().take_while(|&&b| rec.push_byte(b)).count();
    let found = if read == bytes.len() { fresh_key(rec, written, escape, seen) } else { Ok(None) };
    rec.pop_bytes(read);
    found
}

/// Can the key being written still be finished as a key not in `seen`? `rec` stands
/// after its text so far, `written` (`escape`: its last byte is an escaping backslash).
/// Returns the bytes that prove it (a way on to a new key: either the closing quote of a
/// new key, or text that no seen key starts with), or None.
///
/// Depth-first over extensions of `written` that still start a seen key: any extension
/// the grammar accepts that starts none of them is the start of a new key, so the search
/// stays inside the seen keys' prefixes (at most their total length × 256 steps).
pub(crate) fn fresh_key<R: ByteRecognizer>(
    rec: &mut R,
    written: &[u8],
    escape: bool,
    seen: &Seen<'_>,
) -> Result<Option<Vec<u8>>> {
    let mut w = written.to_vec();
    // Per level: the next choice (0: close the key; 1..=256: byte choice - 1) and
    // whether the text so far ends in an escaping backslash.
    let mut levels: Vec<(u16, bool)> = vec![(0, escape)];
    let found = loop {
        let Some(top) = levels.last_mut() else { break None };
        let (c, esc) = *top;
        if c > 256 {
            levels.pop();
            if !levels.is_empty() {
                rec.pop_bytes(1);
                w.pop();
            }
            continue;
        }
        top.0 += 1;
        if c == 0 {
            if !esc && !seen.contains(&w) && rec.push_byte(b'"') {
                rec.pop_bytes(1);
                let mut proof = w[written.len()..].to_vec();
                proof.push(b'"');
                break Some(proof);
            }
            continue;
        }
        let b = (c - 1) as u8;
        if (b == b'"' && !esc) || !rec.push_byte(b) {
            continue;
        }
        w.push(b);
        if !seen.has_prefix(&w) {
            rec.pop_bytes(1);
            let proof = w[written.len()..].to_vec();
            w.pop();
            break Some(proof);
        }
        crate::util::interrupt::check()?;
        levels.push((0, !esc && b == b'\\'));
    };
    // Leave `rec` as it was.
    rec.pop_bytes(w.len() - written.len());
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker(text: &str) -> KeyTracker {
        let mut t = KeyTracker::default();
        assert!(t.push_token(text.as_bytes(), &mut NoDistinctLists).unwrap(), "{text}");
        t
    }

    #[test]
    fn repeated_keys_are_refused_in_the_same_object_only() {
        let t = tracker(r#"{"a":1,"b":{"a":2},"#);
        assert!(matches!(t.simulate(br#""a":"#, &mut NoDistinctLists).unwrap(), Outcome::Repeat));
        assert!(matches!(t.simulate(br#""c":1,"c""#, &mut NoDistinctLists).unwrap(), Outcome::Repeat));
        assert!(matches!(t.simulate(br#""c":{"a":1}"#, &mut NoDistinctLists).unwrap(), Outcome::Fine));
        // A quote inside a value string or an escaped quote is not a key's end.
        let t = tracker(r#"{"a":"x\"a\"",""#);
        assert!(matches!(t.simulate(br#"a""#, &mut NoDistinctLists).unwrap(), Outcome::Repeat));
        assert!(matches!(t.simulate(br#"b""#, &mut NoDistinctLists).unwrap(), Outcome::Fine));
        assert!(matches!(t.simulate(br#"a\"""#, &mut NoDistinctLists).unwrap(), Outcome::Fine));
    }

    #[test]
    fn push_token_and_rollback_restore_exactly() {
        let mut t = KeyTracker::default();
        for tok in [r#"{"ab"#, r#"c":1"#, r#","x":[{"#, r#""y":2}],"#] {
            assert!(t.push_token(tok.as_bytes(), &mut NoDistinctLists).unwrap());
        }
        assert!(!t.push_token(br#""abc""#, &mut NoDistinctLists).unwrap());
        assert!(!t.push_token(br#""x""#, &mut NoDistinctLists).unwrap());
        assert!(t.push_token(br#""y""#, &mut NoDistinctLists).unwrap());
        t.rollback(2);
        // Back in the inner object, before `"y":2}],`: the outer `y` is gone, the inner
        // object is empty.
        assert!(t.push_token(br#""y":3,"#, &mut NoDistinctLists).unwrap());
        assert!(!t.push_token(br#""y""#, &mut NoDistinctLists).unwrap());
        t.rollback(3);
        // Inside the first key again, `abc` not yet closed.
        assert!(t.push_token(br#"c":1,"abc"#, &mut NoDistinctLists).unwrap());
        assert!(!t.push_token(br#"""#, &mut NoDistinctLists).unwrap());
    }

    #[test]
    fn half_written_keys_that_start_a_seen_key_are_reported() {
        let t = tracker(r#"{"abc":1,"#);
        match t.simulate(br#""ab"#, &mut NoDistinctLists).unwrap() {
            Outcome::OpenKey { written, .. } => assert_eq!(written, b"ab"),
            _ => panic!("expected an open key"),
        }
        assert!(matches!(t.simulate(br#""x"#, &mut NoDistinctLists).unwrap(), Outcome::Fine));
        assert_eq!(t.first_repeat(br#""q":1,"abc":2"#, &mut NoDistinctLists).unwrap(), Some(7));
        assert_eq!(t.first_repeat(br#""q":1}"#, &mut NoDistinctLists).unwrap(), None);
    }

    /// Accepts exactly the keys `abc` and `x+` (then a closing quote).
    struct Keys(Vec<u8>);

    impl ByteRecognizer for Keys {
        fn push_byte(&mut self, b: u8) -> bool {
            let mut next = self.0.clone();
            next.push(b);
            let s = String::from_utf8_lossy(&next).to_string();
            let xs = |t: &str| !t.is_empty() && t.bytes().all(|c| c == b'x');
            let ok = ["a", "ab", "abc", "abc\""].contains(&s.as_str()) || xs(s.strip_suffix('"').unwrap_or(&s));
            if ok {
                self.0 = next;
            }
            ok
        }
        fn pop_bytes(&mut self, n: usize) {
            let len = self.0.len() - n;
            self.0.truncate(len);
        }
    }

    #[test]
    fn prefixes_of_accepts_exactly_the_prefixes() {
        let mut p = PrefixesOf::new(vec![b"key1", b"ke", b"kz", b"a"]);
        for (bytes, want) in [
            (&b"k"[..], true),
            (b"ke", true),
            (b"key1", true),
            (b"key2", false),
            (b"kz", true),
            (b"b", false),
            (b"a", true),
            (b"ab", false),
        ] {
            let read = bytes.iter().take_while(|&&b| p.push_byte(b)).count();
            assert_eq!(read == bytes.len(), want, "{:?}", String::from_utf8_lossy(bytes));
            p.pop_bytes(read);
        }
    }

    #[test]
    fn fresh_key_searches_inside_the_seen_prefixes_only() {
        let set: BTreeSet<Box<[u8]>> = [b"abc".to_vec().into_boxed_slice()].into_iter().collect();
        let seen = Seen { set: Some(&set), extra: &[] };
        let mut rec = Keys(b"ab".to_vec());
        assert_eq!(fresh_key(&mut rec, b"ab", false, &seen).unwrap(), None);
        assert_eq!(rec.0, b"ab");
        let mut rec = Keys(Vec::new());
        assert_eq!(fresh_key(&mut rec, b"", false, &seen).unwrap(), Some(b"x".to_vec()));
        let set: BTreeSet<Box<[u8]>> = [b"".to_vec().into_boxed_slice()].into_iter().collect();
        let seen = Seen { set: Some(&set), extra: &[] };
        let mut rec = Keys(Vec::new());
        assert_eq!(fresh_key(&mut rec, b"", false, &seen).unwrap(), Some(b"a".to_vec()));
        assert!(rec.0.is_empty());
    }
}
