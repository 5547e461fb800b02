//! Distinct object keys and array items: the run-time check that JSON output never
//! repeats a key inside one object, nor an item inside one `uniqueItems` array.
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
//! The items of a `uniqueItems` array whose items take unboundedly many values are kept
//! distinct the same way. The grammar marks such arrays with `perm!` entries marked
//! distinct (see [`crate::grammar::perm`]), and the tracker asks the parser
//! ([`EntryQuery`]) whether it expects such an entry where an array or its first item
//! starts:
//! - strings ([`Distinct::Strings`]): the list's one repeatable entry is the item; asked
//!   at the first item's quote, the array's strings are then tracked like an object's
//!   keys, by their text;
//! - values ([`Distinct::Values`]): the entry is the whole array, asked at its `[`; the
//!   answer is the kinds its first item may take (a string, an object, …), and the first
//!   item decides: an array whose first item is of another kind is another array the
//!   parser expected there (one whose items may repeat). Each item's text is kept from
//!   its first byte to the `,` or `]` that closes it, read as a JSON value
//!   (`grammar/item_values.rs`) and compared with the array's earlier items as values
//!   (`1` is `1.0`, objects in any key order), whatever the grammar says of the item
//!   (tuple positions, `contains`). A token that closes an item equal to an
//!   earlier one is refused; so is one after which the item it leaves open may only be
//!   finished as an earlier one: where the half-written item may still become an earlier
//!   one, `fresh_item` searches the grammar's ways on for one that makes it a new value
//!   (bounded by `Limits::max_fresh_item_steps`).
//!
//! Output that is other text with JSON values inside (a structural tag's arguments, a
//! `%json` in a grammar) marks each value that needs the check as a JSON region
//! ([`Distinct::Json`]); such a tracker ([`KeyTracker::in_json_regions`]) reads the text
//! between regions as text, and a region as JSON from the `{` or `[` where the parser
//! says one starts (and nothing else it allows there reads that byte) until it closes.
//!
//! What this does not see: an object whose keys come from a finite class of more than 256
//! keys (the translator names smaller classes one by one) that has used them all, and
//! whose grammar still asks for another member. No schema met in practice gets there.

use std::collections::BTreeSet;
use std::ops::Bound;

use crate::error::{Error, Result};
use crate::frontend::ast::{Distinct, ItemStarts};
use crate::grammar::item_values::{self, Val};
use crate::util::hash::HashSet;
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

/// Asks the parser whether an entry of a distinct list (a `uniqueItems` array, or its
/// item) may start at a byte of the text being read.
pub trait EntryQuery {
    /// Does the grammar expect an entry of a distinct list of `kind` right before byte
    /// `offset` of the bytes being read (0: before the first)?
    fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool>;

    /// The kinds of first item of the arrays of distinct values ([`Distinct::Values`])
    /// the grammar expects right before byte `offset` (none if it expects no such array).
    fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts>;

    /// Does byte `b`, right before byte `offset`, start a JSON value inside other text
    /// ([`Distinct::Json`]), and nothing else the grammar allows there?
    fn json_region_at(&mut self, offset: usize, b: u8) -> Result<bool>;
}

/// The answer for a grammar with no distinct list: never.
pub struct NoDistinctLists;

impl EntryQuery for NoDistinctLists {
    fn distinct_entry_at(&mut self, _offset: usize, _kind: Distinct) -> Result<bool> {
        Ok(false)
    }

    fn value_lists_at(&mut self, _offset: usize) -> Result<ItemStarts> {
        Ok(ItemStarts::NONE)
    }

    fn json_region_at(&mut self, _offset: usize, _b: u8) -> Result<bool> {
        Ok(false)
    }
}

/// The items of one array written so far, as values.
#[derive(Debug, Clone, Default)]
pub(crate) struct ItemSet {
    keys: HashSet<Vec<u8>>,
    /// In the order written (the last one is the first undone): the key, the value and
    /// the item's text as written.
    vals: Vec<(Vec<u8>, Val, Box<[u8]>)>,
}

/// An earlier item an open item may still become: its index in the array's [`ItemSet`],
/// and whether the open item's text so far is the start of that item's text as written
/// (then one byte compared tells whether it still is; else the value is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Live {
    index: u32,
    as_written: bool,
}

impl ItemSet {
    fn contains(&self, key: &[u8]) -> bool {
        self.keys.contains(key)
    }

    fn push(&mut self, key: Vec<u8>, v: Val, text: &[u8]) {
        self.keys.insert(key.clone());
        self.vals.push((key, v, text.into()));
    }

    fn pop(&mut self) {
        if let Some((k, ..)) = self.vals.pop() {
            self.keys.remove(&k);
        }
    }

    /// Those of `live` that the half-written item `text` (one byte longer than when `live`
    /// was made) may still be finished as; None if that is all of them, unchanged.
    /// `at`: where the last byte was read (see [`ByteAt`]).
    fn still_live(&self, text: &[u8], live: &[Live], at: ByteAt) -> Option<Vec<Live>> {
        let n = text.len();
        let b = text[n - 1];
        // Inside a string value, away from escapes, any two bytes that differ part the
        // values: the string differs at the same place in both.
        let in_value = at == ByteAt::StringValue && !text[n.saturating_sub(6)..].contains(&b'\\');
        let keeps = |l: &Live| -> Option<Live> {
            let (_, v, written) = &self.vals[l.index as usize];
            if l.as_written {
                match written.get(n - 1) {
                    Some(&w) if w == b => return Some(*l),
                    // Two plain bytes that differ (letters of a string value, say): no
                    // other spelling of the earlier item starts with this one.
                    Some(&w) if at != ByteAt::Key && plain(w) && plain(b) => return None,
                    Some(&w) if in_value && w != b'"' && b != b'"' => return None,
                    // Two digits of a number's mantissa, where both are significant: the
                    // significant digits differ.
                    Some(&w)
                        if at == ByteAt::Outside
                            && w.is_ascii_digit()
                            && b.is_ascii_digit()
                            && in_mantissa(text, w != b'0' && b != b'0') =>
                    {
                        return None
                    }
                    _ => {}
                }
            }
            item_values::may_become(text, v).then_some(Live { index: l.index, as_written: false })
        };
        // Most bytes keep every item as it was: nothing is allocated then.
        let first_change = live.iter().position(|l| keeps(l) != Some(*l))?;
        let mut out = live[..first_change].to_vec();
        out.extend(live[first_change..].iter().filter_map(keeps));
        Some(out)
    }

    fn len(&self) -> usize {
        self.vals.len()
    }
}

/// Is `b` a byte where two spellings of one JSON value cannot part (not whitespace, nor
/// a byte of a number, of an escape (hex digits of either case), a string's quote or JSON
/// structure)? Where an item's text and an earlier item's differ at two such bytes, read
/// outside keys, they are different values.
fn plain(b: u8) -> bool {
    !is_ws(b) && !b.is_ascii_hexdigit() && !b".eE+-\\\"{}[],:".contains(&b)
}

/// Is the last byte of `text`, read outside strings, a significant digit of a number's
/// mantissa (no `e` before it, and a nonzero digit before it unless `nonzero`: the last
/// byte and the one it is compared with are both nonzero)? Two texts equal up to such a
/// digit that differ there spell different significant digits, so different numbers. In
/// an exponent they need not (`1e5` and `1e05`), nor at a leading zero (`0.15e3` is 150).
fn in_mantissa(text: &[u8], nonzero: bool) -> bool {
    let run = || text.iter().rev().skip(1).take_while(|b| b"0123456789.eE+-".contains(b));
    !run().any(|&b| b == b'e' || b == b'E') && (nonzero || run().any(|b| (b'1'..=b'9').contains(b)))
}

/// Where a byte of an item was read, for comparing it with earlier items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ByteAt {
    /// Inside an object key: keys in another order may still spell the earlier item.
    Key,
    /// Inside a string value.
    StringValue,
    /// Elsewhere.
    Outside,
}

/// One open container.
#[derive(Debug, Clone, Default)]
struct Frame {
    object: bool,
    /// The next string is a tracked one: a key (after `{` or `,` in an object), an item
    /// (after `[` or `,` in an array).
    expect_key: bool,
    /// How this container's strings or items are tracked: always keys for an object; for
    /// an array, decided at its first item (None before): values if the item starts as
    /// `values_first` says, else strings or nothing, as the parser says at the item.
    distinct: Option<Distinct>,
    /// For an array: the kinds of first item of the arrays of distinct values the parser
    /// expected at its `[`. Its first item tells it apart from another array the parser
    /// may have expected there, one whose items may repeat (the translator makes sure
    /// their first items differ in kind).
    values_first: ItemStarts,
    keys: BTreeSet<Box<[u8]>>,
    /// In an array of distinct values: where the open item starts in the tracker's text.
    item: Option<usize>,
    /// In an array of distinct values: its items so far (shared with copies of the
    /// tracker, which masks make and drop: copied only when one of them changes it).
    values: std::sync::Arc<ItemSet>,
    /// In an array of distinct values with an open item: the earlier items (indices into
    /// `values`) the open item may still become, kept as it grows.
    live: Vec<Live>,
}

impl Frame {
    /// A container just opened; `arrays`: may an array keep its items distinct?
    /// `values_first`: see the field.
    fn new(object: bool, arrays: bool, values_first: ItemStarts) -> Frame {
        let distinct = match (object, arrays) {
            (true, _) => Some(Distinct::Strings),
            (false, false) => Some(Distinct::No),
            (false, true) => None,
        };
        Frame { object, expect_key: true, distinct, values_first, ..Frame::default() }
    }

    /// Is this an array waiting for its next item?
    fn awaits_item(&self) -> bool {
        !self.object && self.expect_key
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
    Distinct(Option<Distinct>),
    /// The top frame's open item changed (what it was).
    Item(Option<usize>),
    /// A value joined the top frame's items.
    Value,
    /// Frame `.0`'s `live` was `.1`.
    Live(usize, Vec<Live>),
}

/// The keys of every open object of the output so far, with an undo log per token.
#[derive(Debug, Clone)]
pub struct KeyTracker {
    frames: Vec<Frame>,
    lex: Lex,
    /// The key being written (raw bytes between the quotes).
    key: Vec<u8>,
    undo: Vec<Undo>,
    /// Length of `undo` and of `text` before each accepted token.
    marks: Vec<(usize, usize)>,
    /// Does the grammar have distinct lists? If not, no array is ever asked about.
    arrays: bool,
    /// With distinct lists: the output read so far (items are cut from it).
    text: Vec<u8>,
    /// Is the output other text with JSON values inside ([`Distinct::Json`] entries),
    /// read as JSON only from where the parser says such a value starts until it
    /// closes? Else it is JSON throughout.
    regions: bool,
}

impl Default for KeyTracker {
    fn default() -> Self {
        KeyTracker::new(false)
    }
}

impl KeyTracker {
    /// A tracker at the start of the output; `arrays`: does the grammar keep the items
    /// of some arrays distinct (see [`EntryQuery`])? Without, arrays are never tracked.
    pub fn new(arrays: bool) -> KeyTracker {
        KeyTracker {
            frames: Vec::new(),
            lex: Lex::Outside,
            key: Vec::new(),
            undo: Vec::new(),
            marks: Vec::new(),
            arrays,
            text: Vec::new(),
            regions: false,
        }
    }

    /// The same tracker for output that is other text with JSON values inside (see
    /// [`Distinct::Json`]), if `regions`.
    pub fn in_json_regions(mut self, regions: bool) -> KeyTracker {
        self.regions = regions;
        self
    }

    /// Is byte `b`, read at `at` between JSON values of output with JSON regions, other
    /// text (not the `{` or `[` of a JSON value the parser says starts there)? Objects and
    /// arrays are all the check needs: a region that is a string or a number holds no key.
    /// Where the grammar also allows other text at that place that may go on with `b`
    /// (free text beside the value), the byte is read as text: the check is then off for
    /// that value, which makes the constraint wider than the schema there, never
    /// narrower.
    fn is_text(&self, b: u8, at: usize, query: &mut dyn EntryQuery) -> Result<bool> {
        Ok(!(matches!(b, b'{' | b'[') && query.json_region_at(at, b)?))
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
    /// It closes a key already in its object, or an item already in its array.
    Repeat,
    /// It reaches an array of distinct values, which the simulation does not follow: the
    /// caller reads the bytes into a copy of the tracker.
    Values,
    /// It ends inside a key whose text so far (`written`) starts a key already in its
    /// object (in `set`, or closed by the same bytes: `extra`): whether it can still be
    /// finished as a new one is for [`fresh_key`].
    OpenKey { written: Vec<u8>, escape: bool, set: Option<&'a BTreeSet<Box<[u8]>>>, extra: Vec<Vec<u8>> },
    /// Nothing to check.
    Fine,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Does byte `b`, read between strings, start a JSON value?
fn starts_value(b: u8) -> bool {
    !is_ws(b) && !matches!(b, b']' | b'}' | b',' | b':')
}

impl KeyTracker {
    /// Reads an accepted token's bytes (`query`: the parser, standing where they start).
    /// Returns false, changing nothing, if they repeat a key or a distinct item.
    pub fn push_token(&mut self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<bool> {
        self.marks.push((self.undo.len(), self.text.len()));
        for (i, &b) in bytes.iter().enumerate() {
            if self.arrays {
                self.text.push(b);
            }
            match self.step(b, i, query) {
                Ok(true) => self.narrow_live(),
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
        let Some(&(to, text_len)) = self.marks.get(keep) else { return };
        self.marks.truncate(keep);
        self.text.truncate(text_len);
        while self.undo.len() > to {
            let Some(u) = self.undo.pop() else { break };
            self.undo_one(u);
        }
    }

    fn undo_one(&mut self, u: Undo) {
        match u {
            Undo::Lex(l) => self.lex = l,
            Undo::Push => {
                self.frames.pop();
            }
            Undo::Pop(f) => self.frames.push(f),
            Undo::KeyByte => {
                self.key.pop();
            }
            Undo::Close(k) => {
                if let Some(f) = self.frames.last_mut() {
                    f.keys.remove(&k);
                }
                self.key = k.into_vec();
            }
            Undo::Live(d, live) => {
                if let Some(f) = self.frames.get_mut(d) {
                    f.live = live;
                }
            }
            other => {
                let Some(f) = self.frames.last_mut() else { return };
                match other {
                    Undo::Expect(e) => f.expect_key = e,
                    Undo::Distinct(d) => f.distinct = d,
                    Undo::Item(i) => f.item = i,
                    Undo::Value => std::sync::Arc::make_mut(&mut f.values).pop(),
                    _ => {}
                }
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

    fn set_item(&mut self, item: Option<usize>) {
        if let Some(f) = self.frames.last_mut() {
            self.undo.push(Undo::Item(f.item));
            f.item = item;
        }
    }

    /// A value starts with byte `b`, at `at` (of the bytes being read), the last byte of
    /// `text`: if it is an item of the top array, decides how the array is tracked (on
    /// its first item: by its kind, or asking the parser whether it is a string of a
    /// distinct list) and opens the item. Returns how it is tracked.
    fn begin_value(&mut self, b: u8, at: usize, query: &mut dyn EntryQuery) -> Result<Distinct> {
        let Some(f) = self.frames.last() else { return Ok(Distinct::No) };
        if !f.awaits_item() {
            return Ok(Distinct::No);
        }
        let kind = match f.distinct {
            Some(d) => d,
            None => {
                let d = if f.values_first.admits(b) {
                    Distinct::Values(f.values_first)
                } else if b == b'"' && query.distinct_entry_at(at, Distinct::Strings)? {
                    Distinct::Strings
                } else {
                    Distinct::No
                };
                self.undo.push(Undo::Distinct(None));
                if let Some(f) = self.frames.last_mut() {
                    f.distinct = Some(d);
                }
                d
            }
        };
        // An array's item has started: no value is one until the next comma.
        self.set_expect(false);
        if kind.is_values() {
            self.set_item(Some(self.text.len() - 1));
            let d = self.frames.len() - 1;
            let all: Vec<Live> = (0..self.frames[d].values.len() as u32).map(|index| Live { index, as_written: true }).collect();
            let old = std::mem::replace(&mut self.frames[d].live, all);
            self.undo.push(Undo::Live(d, old));
        }
        Ok(kind)
    }

    /// After a byte is read: drops from each open item's `live` the earlier items it can
    /// no longer become.
    fn narrow_live(&mut self) {
        for d in 0..self.frames.len() {
            let f = &self.frames[d];
            let Some(start) = f.item.filter(|_| !f.live.is_empty()) else { continue };
            let at = match self.lex {
                Lex::Key { .. } => ByteAt::Key,
                Lex::Str { .. } => ByteAt::StringValue,
                Lex::Outside => ByteAt::Outside,
            };
            if let Some(live) = f.values.still_live(&self.text[start..], &f.live, at) {
                let old = std::mem::replace(&mut self.frames[d].live, live);
                self.undo.push(Undo::Live(d, old));
            }
        }
    }

    /// The top array's open item ends at the last byte of `text` (a `,` or `]`): false if
    /// it equals an earlier item.
    fn close_item(&mut self) -> bool {
        let Some(f) = self.frames.last() else { return true };
        let Some(start) = f.item else { return true };
        let end = self.text.len() - 1;
        if let Some(v) = item_values::parse(&self.text[start..end]) {
            let key = v.key();
            if f.values.contains(&key) {
                return false;
            }
            if let Some(f) = self.frames.last_mut() {
                std::sync::Arc::make_mut(&mut f.values).push(key, v, &self.text[start..end]);
            }
            self.undo.push(Undo::Value);
        }
        self.set_item(None);
        true
    }

    /// Reads byte `i` of a token (`b`); false if it closes a repeated key or item (the
    /// byte is then half read: the caller rolls back).
    fn step(&mut self, b: u8, i: usize, query: &mut dyn EntryQuery) -> Result<bool> {
        if self.regions && self.frames.is_empty() && self.is_text(b, i, query)? {
            return Ok(true);
        }
        match self.lex {
            Lex::Outside => match b {
                b'{' | b'[' => {
                    self.begin_value(b, i, query)?;
                    let values = if b == b'[' && self.arrays { query.value_lists_at(i)? } else { ItemStarts::NONE };
                    self.frames.push(Frame::new(b == b'{', self.arrays, values));
                    self.undo.push(Undo::Push);
                }
                b'}' | b']' => {
                    if b == b']' && !self.close_item() {
                        return Ok(false);
                    }
                    if let Some(f) = self.frames.pop() {
                        self.undo.push(Undo::Pop(f));
                    }
                }
                b',' if !self.frames.is_empty() => {
                    if !self.close_item() {
                        return Ok(false);
                    }
                    self.set_expect(true)
                }
                b':' if self.in_object() => self.set_expect(false),
                b'"' => {
                    let tracked = if self.in_object() {
                        self.frames.last().is_some_and(|f| f.expect_key)
                    } else {
                        self.begin_value(b, i, query)? == Distinct::Strings
                    };
                    self.set_lex(if tracked { Lex::Key { escape: false } } else { Lex::Str { escape: false } });
                }
                _ if starts_value(b) => {
                    self.begin_value(b, i, query)?;
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
        self.frames.last().is_some_and(|f| f.expect_key && f.distinct != Some(Distinct::No))
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

    /// Is the key being written one that only keys already in its object start?
    pub(crate) fn key_cornered(&self) -> bool {
        self.open_key().is_some_and(|(w, _, seen)| !seen.is_empty() && seen.has_prefix(w))
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

    /// Does some open array keep its items distinct as values?
    pub(crate) fn tracks_values(&self) -> bool {
        self.arrays && self.frames.iter().any(|f| f.distinct.is_some_and(Distinct::is_values))
    }

    /// Is some open item of a distinct array (or the next one, where an array of distinct
    /// values waits for one) still able to become an earlier item of its array? If not,
    /// no token can make an open item a repeat: only a token that starts a new item can
    /// (one with a `,`).
    pub(crate) fn items_may_repeat(&self) -> bool {
        self.arrays
            && self.frames.iter().enumerate().any(|(d, f)| {
                f.distinct.is_some_and(Distinct::is_values)
                    && match f.item {
                        Some(_) => !f.live.is_empty(),
                        // Waiting for an item: one right after a `,` (at this depth).
                        None => f.expect_key && d + 1 == self.frames.len() && f.values.len() > 0,
                    }
            })
    }

    /// Is some open item of a distinct array already an earlier item of its array, however
    /// it is finished (see [`item_values::fixed`])?
    fn items_fixed_as_repeats(&self) -> bool {
        self.frames.iter().any(|f| {
            f.item.is_some_and(|start| item_values::fixed(&self.text[start..]).is_some_and(|v| f.values.contains(&v.key())))
        })
    }

    /// Is the tracker inside a string (a key or a value)?
    fn in_string(&self) -> bool {
        self.lex != Lex::Outside
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

    /// Where the first repeated key or item of `bytes` starts (for a key, the byte after
    /// its opening quote; for an item, its first byte, or 0 if it started before `bytes`),
    /// read on top of the tracker; None if `bytes` repeat nothing.
    pub(crate) fn first_repeat(&self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<Option<usize>> {
        if self.arrays {
            return self.first_repeat_read(bytes, query);
        }
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

    /// [`KeyTracker::first_repeat`] read byte by byte into a copy: items compared as
    /// values need the whole check.
    fn first_repeat_read(&self, bytes: &[u8], query: &mut dyn EntryQuery) -> Result<Option<usize>> {
        let mut t = self.clone();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let before = t.lex;
            if !t.push_token(&[b], &mut Shifted { query: &mut *query, by: i })? {
                if matches!(before, Lex::Key { .. }) {
                    return Ok(Some(start));
                }
                let item = t.frames.last().and_then(|f| f.item).unwrap_or(0);
                return Ok(Some(item.saturating_sub(self.text.len())));
            }
            if before == Lex::Outside && matches!(t.lex, Lex::Key { .. }) {
                start = i + 1;
            }
        }
        Ok(None)
    }
}

/// A query about bytes read from offset `by` of the bytes it was made for.
struct Shifted<'q> {
    query: &'q mut dyn EntryQuery,
    by: usize,
}

impl EntryQuery for Shifted<'_> {
    fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool> {
        self.query.distinct_entry_at(offset + self.by, kind)
    }

    fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts> {
        self.query.value_lists_at(offset + self.by)
    }

    fn json_region_at(&mut self, offset: usize, b: u8) -> Result<bool> {
        self.query.json_region_at(offset + self.by, b)
    }
}

/// Accepts the bytes after which some open item of a distinct array may still become an
/// earlier item of its array (see [`KeyTracker::items_may_repeat`]), and every byte after
/// one that closes a repeated item. Walking the token trie with it finds, besides the
/// tokens with a comma, the only tokens that can repeat an item or leave one that can only
/// repeat: an item that can no longer become an earlier one never can again, however it
/// goes on, and without a comma no array gets a new item that could.
pub(crate) struct MayRepeat {
    tracker: KeyTracker,
    depth: usize,
    /// The depth of the byte that closed a repeated item (not read into the tracker).
    repeated_at: Option<usize>,
}

impl MayRepeat {
    /// A recognizer standing where `tracker` does.
    pub(crate) fn new(tracker: KeyTracker) -> MayRepeat {
        MayRepeat { tracker, depth: 0, repeated_at: None }
    }
}

impl ByteRecognizer for MayRepeat {
    fn push_byte(&mut self, b: u8) -> bool {
        if self.repeated_at.is_none() {
            // Arrays opened here have no item yet: which lists they are does not matter.
            match self.tracker.push_token(&[b], &mut NoDistinctLists) {
                Ok(true) if self.tracker.items_may_repeat() => {}
                Ok(true) => {
                    self.tracker.rollback(1);
                    return false;
                }
                Ok(false) | Err(_) => self.repeated_at = Some(self.depth),
            }
        }
        self.depth += 1;
        true
    }

    fn pop_bytes(&mut self, n: usize) {
        for _ in 0..n {
            self.depth -= 1;
            match self.repeated_at {
                Some(d) if d == self.depth => self.repeated_at = None,
                Some(_) => {}
                None => self.tracker.rollback(1),
            }
        }
    }
}

/// A recognizer that also tells where an entry of a distinct list may start: the
/// grammar, for [`fresh_item`].
pub(crate) trait EntryRecognizer: ByteRecognizer {
    /// Does the grammar expect an entry of a distinct list of `kind` where the recognizer
    /// stands (see [`EntryQuery::distinct_entry_at`])?
    fn entry_here(&self, kind: Distinct) -> bool;

    /// The kinds of first item of the arrays of distinct values the grammar expects where
    /// the recognizer stands (see [`EntryQuery::value_lists_at`]).
    fn value_lists_here(&self) -> ItemStarts;

    /// Does byte `b` start a JSON value inside other text where the recognizer stands, and
    /// nothing else (see [`EntryQuery::json_region_at`])?
    fn json_region_here(&self, b: u8) -> bool;

    /// A superset of the bytes the recognizer may accept next (256 bits), to try only
    /// those.
    fn next_bytes(&self) -> [u64; 4];
}

/// The recognizer's answer, for a single byte read on top of it.
struct Here<'r, R>(&'r R);

impl<R: EntryRecognizer> EntryQuery for Here<'_, R> {
    fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool> {
        Ok(offset == 0 && self.0.entry_here(kind))
    }

    fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts> {
        Ok(if offset == 0 { self.0.value_lists_here() } else { ItemStarts::NONE })
    }

    fn json_region_at(&mut self, offset: usize, b: u8) -> Result<bool> {
        Ok(offset == 0 && self.0.json_region_here(b))
    }
}

/// Can the output go on so that no open item of a distinct array (see
/// [`KeyTracker::items_may_repeat`]) may still become an earlier one, with no key left
/// that only written keys start? `tracker` and `rec` stand at the same place; both are
/// left as they were. Returns the bytes that prove it, or None if every way on the
/// grammar allows repeats an item.
///
/// Depth-first over the grammar's next bytes, trying at each step first whether one byte
/// suffices; whitespace is followed only where nothing else may come (it changes no
/// value). Fails past `max_steps` bytes tried.
///
/// `open_keys`: can every half-written key be finished in infinitely many ways (then a
/// key that written keys start needs no search)?
pub(crate) fn fresh_item<R: EntryRecognizer>(
    tracker: &mut KeyTracker,
    rec: &mut R,
    open_keys: bool,
    max_steps: usize,
) -> Result<Option<Vec<u8>>> {
    let settled = |t: &KeyTracker| !t.items_may_repeat() && (open_keys || !t.key_cornered());
    if settled(tracker) {
        return Ok(Some(Vec::new()));
    }
    let mut steps = 0usize;
    let mut path: Vec<u8> = Vec::new();
    // Per level: the bytes still to try.
    let mut levels: Vec<Vec<u8>> = Vec::new();
    let found = 'search: loop {
        if levels.len() == path.len() {
            // A new level: the bytes the grammar and the tracker accept here, one of which
            // may settle it at once.
            let mut next = Vec::new();
            let maybe = rec.next_bytes();
            for b in (0..=255u8).filter(|&b| maybe[(b >> 6) as usize] >> (b & 63) & 1 == 1) {
                if !rec.push_byte(b) {
                    continue;
                }
                rec.pop_bytes(1);
                steps += 1;
                if steps > max_steps {
                    return Err(Error::LimitExceeded {
                        limit: "max_fresh_item_steps",
                        value: max_steps,
                        context: "the search for a way to finish an item of a uniqueItems array as a new value".into(),
                    });
                }
                crate::util::interrupt::check()?;
                if !tracker.push_token(&[b], &mut Here(&*rec))? {
                    continue;
                }
                let done = settled(tracker);
                // An item whose value can no longer change (`0e+0…`, a closed string) and
                // repeats an earlier one leads nowhere, however it is spelled on.
                let dead = !done && tracker.items_fixed_as_repeats();
                tracker.rollback(1);
                if done {
                    path.push(b);
                    break 'search true;
                }
                if !dead {
                    next.push(b);
                }
            }
            // Whitespace between values changes none: followed only where nothing else
            // may come.
            if !tracker.in_string() && next.iter().any(|&b| !is_ws(b)) {
                next.retain(|&b| !is_ws(b));
            }
            next.reverse();
            levels.push(next);
        }
        let Some(level) = levels.last_mut() else { break false };
        match level.pop() {
            Some(b) => {
                tracker.push_token(&[b], &mut Here(&*rec))?;
                rec.push_byte(b);
                path.push(b);
            }
            None => {
                levels.pop();
                if path.pop().is_none() {
                    break false;
                }
                rec.pop_bytes(1);
                tracker.rollback(1);
            }
        }
    };
    // Leave both as they were (the last byte of a found path was never pushed).
    let pushed = if found { path.len() - 1 } else { path.len() };
    rec.pop_bytes(pushed);
    tracker.rollback(pushed);
    Ok(found.then_some(path))
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

/// A container opened inside the bytes being simulated (never an array that may be one
/// of distinct values: the simulation stops at its `[`).
struct LocalFrame {
    object: bool,
    expect_key: bool,
    distinct: Option<Distinct>,
    keys: Vec<Vec<u8>>,
}

/// A read-only run of bytes on top of a tracker: frames below `base_depth` are the
/// tracker's (with keys added to the innermost of them in `base_added`), the rest local.
/// It keeps keys and strings only: the caller runs it where no array of distinct values
/// is open, and it stops (`values`) where one starts.
struct Sim<'a> {
    base: &'a KeyTracker,
    base_depth: usize,
    /// `expect_key` of the tracker's frame `base_depth - 1`, once changed here.
    base_expect: Option<bool>,
    /// `distinct` of that frame, once decided here.
    base_distinct: Option<Distinct>,
    base_added: Vec<Vec<u8>>,
    local: Vec<LocalFrame>,
    lex: Lex,
    key: Vec<u8>,
    /// Did an item of an array of distinct values start?
    values: bool,
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
            values: false,
        }
    }

    /// The innermost open container: (object, expect_key, distinct).
    fn top(&self) -> Option<(bool, bool, Option<Distinct>)> {
        match self.local.last() {
            Some(f) => Some((f.object, f.expect_key, f.distinct)),
            None if self.base_depth > 0 => {
                let f = &self.base.frames[self.base_depth - 1];
                Some((f.object, self.base_expect.unwrap_or(f.expect_key), self.base_distinct.or(f.distinct)))
            }
            None => None,
        }
    }

    /// [`KeyTracker::begin_value`] on the simulated frames.
    fn begin_value(&mut self, b: u8, at: usize, query: &mut dyn EntryQuery) -> Result<Distinct> {
        let Some((object, expect, distinct)) = self.top() else { return Ok(Distinct::No) };
        if object || !expect {
            return Ok(Distinct::No);
        }
        let kind = match distinct {
            Some(d) => d,
            // The first item of the tracker's array, of the kind that makes it one of
            // distinct values.
            None if self.local.is_empty() && self.base.frames[self.base_depth - 1].values_first.admits(b) => {
                Distinct::Values(self.base.frames[self.base_depth - 1].values_first)
            }
            None => {
                let strings = b == b'"' && query.distinct_entry_at(at, Distinct::Strings)?;
                let d = if strings { Distinct::Strings } else { Distinct::No };
                match self.local.last_mut() {
                    Some(f) => f.distinct = Some(d),
                    None => self.base_distinct = Some(d),
                }
                d
            }
        };
        self.set_expect(false);
        self.values |= kind.is_values();
        Ok(kind)
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
        if self.base.regions && self.local.is_empty() && self.base_depth == 0 && self.base.is_text(b, i, query)? {
            return Ok(true);
        }
        match self.lex {
            Lex::Outside => match b {
                b'{' | b'[' => {
                    self.begin_value(b, i, query)?;
                    let values = b == b'[' && self.base.arrays && !query.value_lists_at(i)?.is_empty();
                    self.values |= values;
                    let Frame { object, expect_key, distinct, .. } = Frame::new(b == b'{', self.base.arrays, ItemStarts::NONE);
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
                    let tracked = match self.top() {
                        Some((true, expect, _)) => expect,
                        _ => self.begin_value(b, i, query)? == Distinct::Strings,
                    };
                    if tracked {
                        self.lex = Lex::Key { escape: false };
                        self.key.clear();
                    } else {
                        self.lex = Lex::Str { escape: false };
                    }
                }
                _ if starts_value(b) => {
                    self.begin_value(b, i, query)?;
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
            if self.values {
                return Ok(Outcome::Values);
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

    /// The outer array (its `[` at offset 0) is an array of distinct values.
    struct OuterValues;

    impl EntryQuery for OuterValues {
        fn distinct_entry_at(&mut self, _offset: usize, _kind: Distinct) -> Result<bool> {
            Ok(false)
        }

        fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts> {
            Ok(if offset == 0 { ItemStarts::ALL } else { ItemStarts::NONE })
        }

        fn json_region_at(&mut self, _offset: usize, _b: u8) -> Result<bool> {
            Ok(false)
        }
    }

    #[test]
    fn open_items_may_repeat_exactly_where_they_may_become_an_earlier_item() {
        // Each earlier item, then every prefix of every spelling of some value: the
        // tracker's shortcuts (one byte against the earlier item's text, two plain bytes
        // apart, two digits of a mantissa) must agree with reading the value.
        let earlier =
            [r#"{"a":1,"b":"xy"}"#, "150", "1e5", r#"[1,"q"]"#, r#""ab""#, "0.5", "true", r#"[[1,2],{"k":null}]"#, "-0.07"];
        let tries = [
            r#"{"b":"xy","a":1}"#,
            r#"{"a":1.0,"b":"xz"}"#,
            "1.5e2",
            "15e1",
            "151",
            "1e05",
            "1E+5",
            "10e4",
            "100000",
            r#"[1,"q",2]"#,
            r#"[1.0,"q"]"#,
            r#""abc""#,
            r#""a""#,
            "5e-1",
            "0.50",
            "0.05",
            "false",
            "true",
            r#"[[1,2.0],{"k":null}]"#,
            r#"[[1,2],{"k":false}]"#,
            "-0.070",
            "-0.08",
            "-7e-2",
            "0.15e3",
        ];
        for first in earlier {
            let head = format!("[{first},");
            let mut base = KeyTracker::new(true);
            assert!(base.push_token(head.as_bytes(), &mut OuterValues).unwrap(), "{head}");
            let seen = item_values::parse(first.as_bytes()).unwrap();
            for t in tries {
                for n in 1..=t.len() {
                    let prefix = &t.as_bytes()[..n];
                    let mut tr = base.clone();
                    assert!(tr.push_token(prefix, &mut NoDistinctLists).unwrap());
                    let expected = item_values::may_become(prefix, &seen);
                    assert_eq!(tr.items_may_repeat(), expected, "after {first}: {}", String::from_utf8_lossy(prefix));
                }
            }
        }
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
