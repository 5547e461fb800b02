//! An Earley recognizer over DFA terminals, read one byte at a time.
//!
//! Earley sets are built only where a terminal can end; between them, each byte only
//! advances the DFA states of the terminals being read ("scans"). A scan whose DFA accepts
//! both ends its terminal (building a new Earley set) and stays open (the terminal may go
//! on): every split is kept, so no string of the grammar is lost to greedy lexing.
//! The grammar has no ε-rules (but the start; see `lower`), so every completed item
//! started in an earlier set and completion never looks at the set being built (a unit
//! rule `A → B` completes where `B` started), and Leo's optimization makes right
//! recursion linear: a set memoizes, per nonterminal, the topmost item of a deterministic
//! reduction chain.
//!
//! A [`Chart`] is a parse so far. An [`Overlay`] reads bytes on top of a chart without
//! changing it (trie walks for masks) and can be committed into it (advancing a token).

use super::*;
use crate::error::Result;

/// One Earley set: ranges into the chart's arenas.
#[derive(Debug, Clone, Copy)]
pub(super) struct SetData {
    /// Items sorted by (next symbol, dotted rule, origin); complete items last.
    pub(super) items: (u32, u32),
    /// Terminals some item waits for: ranges into `expected`.
    pub(super) expected: (u32, u32),
    /// Leo memo: (nonterminal, topmost item) ranges into `leo`, sorted by nonterminal.
    pub(super) leo: (u32, u32),
    pub(super) accepting: bool,
}

/// A terminal being read: its DFA state and the set that expects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Scan {
    pub(super) term: u32,
    pub(super) state: u32,
    pub(super) origin: u32,
}

/// Terminal `term` expected by the items `items` of a set.
#[derive(Debug, Clone, Copy)]
pub(super) struct Expected {
    pub(super) term: u32,
    pub(super) items: (u32, u32),
}

/// One byte position.
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub(super) scans: (u32, u32),
    /// The Earley set built at this position, or `NONE`.
    pub(super) set: u32,
    /// Arena lengths after this row (to truncate on pop).
    pub(super) lens: [u32; 5],
}

/// A parse so far: Earley sets and byte rows in flat arenas.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub(super) sets: Vec<SetData>,
    pub(super) items: Vec<Item>,
    pub(super) expected: Vec<Expected>,
    pub(super) leo: Vec<(u32, Item)>,
    pub(super) rows: Vec<Row>,
    pub(super) scans: Vec<Scan>,
    /// States of `perm!` lists (see [`Item::aux`]), each `Perm::width` words.
    pub(super) perm: Vec<u64>,
    /// The numbers of the first sets by content (see [`Chart::number_sets`]); `NONE` for a
    /// set that has none.
    pub(super) set_numbers: Vec<u32>,
}

impl Chart {
    /// Heap bytes of the chart's arenas (what `Limits::max_chart_bytes` bounds).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.sets.len() * size_of::<SetData>()
            + self.items.len() * size_of::<Item>()
            + self.expected.len() * size_of::<Expected>()
            + self.leo.len() * size_of::<(u32, Item)>()
            + self.rows.len() * size_of::<Row>()
            + self.scans.len() * size_of::<Scan>()
            + self.perm.len() * size_of::<u64>()
            + self.set_numbers.len() * size_of::<u32>()
    }

    pub(super) fn lens(&self) -> [u32; 5] {
        [
            self.sets.len() as u32,
            self.items.len() as u32,
            self.expected.len() as u32,
            self.leo.len() as u32,
            self.perm.len() as u32,
        ]
    }

    /// Number of Earley items stored (all sets).
    pub fn num_items(&self) -> usize {
        self.items.len()
    }

    /// Number of byte rows (the start row included).
    pub fn num_rows(&self) -> usize {
        self.rows.len()
    }

    /// Forgets everything after the first `rows` rows.
    pub fn truncate_rows(&mut self, rows: usize) {
        self.rows.truncate(rows);
        if let Some(last) = self.rows.last().copied() {
            self.scans.truncate(last.scans.1 as usize);
            let [s, i, e, l, p] = last.lens;
            self.sets.truncate(s as usize);
            self.items.truncate(i as usize);
            self.expected.truncate(e as usize);
            self.leo.truncate(l as usize);
            self.perm.truncate(p as usize);
            self.set_numbers.truncate(s as usize);
        }
    }

    /// Does the grammar expect the entry of a distinct list (an item of a `uniqueItems`
    /// array) of `kind` at byte position `pos` (0: before the first byte)? False where no
    /// Earley set stands there (no terminal ends there, so no entry can start).
    pub fn expects_distinct_entry(&self, g: &EarleyGrammar, pos: usize, kind: Distinct) -> bool {
        let Some(row) = self.rows.get(pos) else { return false };
        if row.set == NONE {
            return false;
        }
        let set = &self.sets[row.set as usize];
        g.awaits_distinct_entry(&self.items[set.items.0 as usize..set.items.1 as usize], kind)
    }

    /// The kinds of first item of the arrays of distinct values the grammar expects at
    /// byte position `pos` (see `EarleyGrammar::awaited_value_lists`).
    pub fn expects_value_lists(&self, g: &EarleyGrammar, pos: usize) -> ItemStarts {
        let Some(row) = self.rows.get(pos).filter(|r| r.set != NONE) else { return ItemStarts::NONE };
        let set = &self.sets[row.set as usize];
        g.awaited_value_lists(&self.items[set.items.0 as usize..set.items.1 as usize])
    }

    /// Does byte `b` at byte position `pos` start a JSON region and nothing else (see
    /// `EarleyGrammar::starts_region_only`)?
    pub fn starts_region_only(&self, g: &EarleyGrammar, pos: usize, b: u8) -> bool {
        let Some(row) = self.rows.get(pos).filter(|r| r.set != NONE) else { return false };
        let set = &self.sets[row.set as usize];
        let items = &self.items[set.items.0 as usize..set.items.1 as usize];
        let expected = &self.expected[set.expected.0 as usize..set.expected.1 as usize];
        let scans = &self.scans[row.scans.0 as usize..row.scans.1 as usize];
        g.starts_region_only(row.set, items, expected, &self.items, scans, b)
    }

    /// May the input end here?
    pub fn is_accepting(&self) -> bool {
        self.rows.last().is_some_and(|r| r.set != NONE && self.sets[r.set as usize].accepting)
    }

    /// Appends an overlay's new rows and sets (their indices are already global).
    pub(super) fn commit(&mut self, top: Chart) {
        let off = self.lens();
        let scan_off = self.scans.len() as u32;
        for mut s in top.sets {
            s.items = (s.items.0 + off[1], s.items.1 + off[1]);
            s.expected = (s.expected.0 + off[2], s.expected.1 + off[2]);
            s.leo = (s.leo.0 + off[3], s.leo.1 + off[3]);
            self.sets.push(s);
        }
        self.items.extend(top.items);
        for mut e in top.expected {
            e.items = (e.items.0 + off[1], e.items.1 + off[1]);
            self.expected.push(e);
        }
        self.leo.extend(top.leo);
        self.scans.extend(top.scans);
        // List states keep their (global) offsets, as sets keep their indices.
        self.perm.extend(top.perm);
        for mut r in top.rows {
            r.scans = (r.scans.0 + scan_off, r.scans.1 + scan_off);
            r.lens = [r.lens[0] + off[0], r.lens[1] + off[1], r.lens[2] + off[2], r.lens[3] + off[3], r.lens[4] + off[4]];
            self.rows.push(r);
        }
    }
}

/// Reads `bytes` on top of `chart`; on success appends them to it. Returns false (chart
/// unchanged) if they cannot continue a sentence; an error if a limit was hit.
pub fn advance_chart(g: &EarleyGrammar, chart: &mut Chart, bytes: &[u8]) -> Result<bool> {
    let mut ov = Overlay::new(g, chart);
    for &b in bytes {
        if !ov.push(b) {
            return match ov.error.take() {
                Some(e) => Err(e),
                None => Ok(false),
            };
        }
    }
    let top = ov.into_top();
    chart.commit(top);
    Ok(true)
}
