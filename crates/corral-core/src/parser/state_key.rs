//! A parse's canonical state key: the open scans and the Earley sets they reach, each set
//! by a number that stands for its content, so that equal keys mean equal continuations
//! and a mask computed for one parse serves every parse with the same key.
//!
//! A set's content is its items, each with the number of its origin set: by induction a
//! number stands for everything a set reaches through origins. Sets are numbered once,
//! when a parse commits them ([`Chart::number_sets`]), in a table shared by every parse of
//! one grammar ([`SetNumbers`]); a key is then as long as the open scans, however deep the
//! parse (a tool call's arguments inside a structural tag reach a dozen sets).

use std::sync::RwLock;

use super::*;
use crate::util::hash::FastMap;

/// Earley sets numbered by content, shared by every parse of one grammar: two sets with
/// one number allow exactly the same continuations.
#[derive(Debug, Default)]
pub struct SetNumbers {
    numbers: RwLock<FastMap<Box<[u32]>, u32>>,
}

impl SetNumbers {
    /// The number of the set described by `content`: the number it already has, or a new
    /// one where `may_grow`. Returns it, and the heap bytes a new entry added (0 for one
    /// already there); None where the content is new and the table may not grow.
    fn number(&self, content: &[u32], may_grow: bool) -> Option<(u32, usize)> {
        if let Some(&n) = self.numbers.read().ok()?.get(content) {
            return Some((n, 0));
        }
        if !may_grow {
            return None;
        }
        let mut map = self.numbers.write().ok()?;
        let next = map.len() as u32;
        let n = *map.entry(content.into()).or_insert(next);
        // (Another parse may have added it between the two locks.)
        let added = if n == next { content.len() * 4 + std::mem::size_of::<(Box<[u32]>, u32)>() } else { 0 };
        Some((n, added))
    }

    /// Number of sets numbered.
    pub fn len(&self) -> usize {
        self.numbers.read().map_or(0, |m| m.len())
    }

    /// Whether no set is numbered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Numbers keys in order of first sight: a list while small (a set has a few distinct
/// origins; hashing each costs more than looking), a hash map beyond.
#[derive(Default)]
pub(super) struct SmallMap<K> {
    pub(super) small: Vec<K>,
    pub(super) large: FastMap<K, u32>,
}

impl<K: Copy + Eq + std::hash::Hash> SmallMap<K> {
    pub(super) fn clear(&mut self) {
        self.small.clear();
        self.large.clear();
    }

    /// The number of `k`, and whether it is new.
    pub(super) fn id(&mut self, k: K) -> (u32, bool) {
        if self.large.is_empty() {
            if let Some(i) = self.small.iter().position(|&x| x == k) {
                return (i as u32, false);
            }
            self.small.push(k);
            if self.small.len() > 32 {
                self.large = self.small.iter().enumerate().map(|(i, &x)| (x, i as u32)).collect();
            }
            return (self.small.len() as u32 - 1, true);
        }
        let next = self.large.len() as u32;
        let id = *self.large.entry(k).or_insert(next);
        (id, id == next)
    }
}

/// The buffers a set's content is written in (kept per thread: sets are numbered at
/// nearly every token).
#[derive(Default)]
struct ContentScratch {
    content: Vec<u32>,
    lists: SmallMap<u32>,
    groups: SmallMap<(u32, u32)>,
}

thread_local! {
    static CONTENT_SCRATCH: std::cell::RefCell<ContentScratch> = std::cell::RefCell::new(ContentScratch::default());
}

impl Chart {
    /// The terminals being read at the current position: `(terminal, DFA state, origin set)`
    /// for the open scans, and `(terminal, start state, this set)` for the terminals the
    /// set built here expects.
    pub(crate) fn lex_entries(&self, g: &EarleyGrammar) -> Vec<(u32, u32, u32)> {
        let Some(row) = self.rows.last() else { return Vec::new() };
        let mut out: Vec<(u32, u32, u32)> =
            self.scans[row.scans.0 as usize..row.scans.1 as usize].iter().map(|s| (s.term, s.state, s.origin)).collect();
        if row.set != NONE {
            let set = self.sets[row.set as usize];
            for e in &self.expected[set.expected.0 as usize..set.expected.1 as usize] {
                out.push((e.term, g.cfg.terminals[e.term as usize].dfa.start(), row.set));
            }
        }
        out
    }

    /// Numbers the sets committed since the last call in `numbers` (new numbers only
    /// where `may_grow`; a set left without one, and every set that reaches it, gives no
    /// key). Returns the heap bytes the table grew by.
    pub fn number_sets(&mut self, g: &EarleyGrammar, numbers: &SetNumbers, may_grow: bool) -> usize {
        let mut added = 0;
        CONTENT_SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            for k in self.set_numbers.len()..self.sets.len() {
                let n = match self.set_content(g, k as u32, s) {
                    true => numbers.number(&s.content, may_grow),
                    false => None,
                };
                added += n.map_or(0, |(_, bytes)| bytes);
                self.set_numbers.push(n.map_or(NONE, |(n, _)| n));
            }
        });
        added
    }

    /// Writes set `k`'s content into `s.content`: its items but those at the start of
    /// their rule, each with its origin's number. False where an origin has no number.
    fn set_content(&self, g: &EarleyGrammar, k: u32, s: &mut ContentScratch) -> bool {
        let ContentScratch { content, lists, groups } = s;
        content.clear();
        lists.clear();
        groups.clear();
        let set = self.sets[k as usize];
        // Set 0 is the only one holding start items: its identity matters for acceptance.
        content.push(if k == 0 { NONE - 1 } else { NONE - 2 });
        for it in &self.items[set.items.0 as usize..set.items.1 as usize] {
            // Items at the start of their rule were predicted from the others (the same in
            // every set with the same others): they add nothing.
            if g.dr_at_start[it.dr as usize] {
                continue;
            }
            let origin = self.set_numbers.get(it.origin as usize).copied().unwrap_or(NONE);
            if origin == NONE {
                return false;
            }
            // `L → L • S E_j` items come in groups: one list completed from one origin with
            // one state continues every `L → • L S E_j` there that its state allows. The
            // group is a function of (origin, state): written once.
            let after_list =
                it.dr > 0 && g.dr_perm[it.dr as usize - 1] != NONE && g.dr_perm[it.dr as usize - 1] & ADD_AT_START != 0;
            if after_list {
                if !groups.id((it.origin, it.aux)).1 {
                    continue;
                }
                content.push(NONE - 3);
            } else {
                content.push(it.dr);
            }
            content.push(origin);
            // A list's state by content (offsets differ between equal parses): numbered in
            // order of discovery, its words (after their count) written where it is first
            // met (many items share one state).
            if g.dr_perm[it.dr as usize] != NONE {
                if it.aux == NONE {
                    content.push(NONE);
                } else if let Some(perm) = g.perm_of(g.dr_lhs[it.dr as usize]) {
                    let (id, new) = lists.id(it.aux);
                    content.push(id);
                    if new {
                        let at = it.aux as usize;
                        content.push(perm.width() as u32);
                        for &w in &self.perm[at..at + perm.width()] {
                            content.extend_from_slice(&[w as u32, (w >> 32) as u32]);
                        }
                    }
                }
            }
        }
        true
    }

    /// The content number of set `k` (see [`Chart::number_sets`]), if it has one.
    pub(crate) fn set_number(&self, k: u32) -> Option<u32> {
        self.set_numbers.get(k as usize).copied().filter(|&n| n != NONE)
    }

    /// A canonical description of everything the rest of the parse can depend on: the
    /// number of the set built here, and the open scans with their origins' numbers (see
    /// [`Chart::number_sets`]). Two positions with equal keys allow exactly the same
    /// continuations, so they share a cached mask. Returns false where a set it needs has
    /// no number, or if the key would exceed `max_len` words.
    pub(crate) fn state_key(&self, out: &mut Vec<u32>, max_len: usize) -> bool {
        out.clear();
        let Some(row) = self.rows.last() else { return true };
        let number = |k: u32| self.set_numbers.get(k as usize).copied().unwrap_or(NONE);
        let here = if row.set == NONE { NONE } else { number(row.set) };
        if row.set != NONE && here == NONE {
            return false;
        }
        out.push(here);
        for sc in &self.scans[row.scans.0 as usize..row.scans.1 as usize] {
            let origin = number(sc.origin);
            if origin == NONE || out.len() + 3 > max_len {
                return false;
            }
            out.extend_from_slice(&[sc.term, sc.state, origin]);
        }
        true
    }
}
