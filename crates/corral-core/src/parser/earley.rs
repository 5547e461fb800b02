//! An Earley recognizer over DFA terminals, read one byte at a time.
//!
//! Earley sets are built only where a terminal can end; between them, each byte only
//! advances the DFA states of the terminals being read ("scans"). A scan whose DFA accepts
//! both ends its terminal (building a new Earley set) and stays open (the terminal may go
//! on): every split is kept, so no string of the grammar is lost to greedy lexing.
//! The grammar has no ε-rules (but the start) and no unit rules (see `lower`), so
//! completion never looks at the set being built, and Leo's optimization makes right
//! recursion linear: a set memoizes, per nonterminal, the topmost item of a deterministic
//! reduction chain.
//!
//! A [`Chart`] is a parse so far. An [`Overlay`] reads bytes on top of a chart without
//! changing it (trie walks for masks) and can be committed into it (advancing a token).

use std::collections::{HashMap, HashSet};

use crate::automata::DEAD;
use crate::error::{Error, Result};
use crate::grammar::lower::{Cfg, Sym};
use crate::limits::Limits;
use crate::util::hash::{FastMap, FastSet};
use crate::vocab::ByteRecognizer;

/// "No set here" / "complete item" marker.
const NONE: u32 = u32::MAX;

/// An Earley item: a dotted rule, the set where it started, and for an item of a
/// `perm!` list's production the list's state before its entry (an offset into the
/// chart's `perm` arena; `NONE`: the empty list, and for every other item).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Item {
    dr: u32,
    origin: u32,
    aux: u32,
}

/// In `dr_perm`: the dotted rule is `L → • L S E_j` (it waits for a list to add to).
const ADD_AT_START: u32 = 1 << 31;

/// The grammar with the tables the recognizer needs.
#[derive(Debug)]
pub struct EarleyGrammar {
    cfg: Cfg,
    /// Per dotted rule: the symbol after the dot (`NONE` when complete).
    dr_next: Vec<u32>,
    /// Per dotted rule: its production's left-hand side.
    dr_lhs: Vec<u32>,
    /// Per nonterminal: the dot-0 dotted rules of its own productions.
    own_rules: Vec<Vec<u32>>,
    /// Per nonterminal: the distinct nonterminals its productions start with (predicting
    /// it predicts them too). Closed at run time, not stored closed: a closure table is
    /// quadratic in the grammar for long chains and cycles of rules.
    left_corners: Vec<Vec<u32>>,
    max_items: usize,
    max_chart_bytes: usize,
    /// Per terminal: the bytes that can start it (a 256-bit set).
    first_bytes: Vec<[u64; 4]>,
    /// Per dotted rule: its rank in (next symbol, dotted rule) order, so that a set's
    /// items sort by one integer key.
    dr_rank: Vec<u32>,
    /// Per dotted rule of a `perm!` list's production: the entry it adds (with
    /// [`ADD_AT_START`] on `L → • L S E_j`); `NONE` for other rules.
    dr_perm: Vec<u32>,
    /// Per nonterminal: the index of the `perm!` it is the list of, or `NONE`.
    nt_perm: Vec<u32>,
    /// Per dotted rule: is the dot at the start (a predicted item)?
    dr_at_start: Vec<bool>,
}

impl EarleyGrammar {
    /// Precomputes the recognizer's tables.
    pub fn new(cfg: Cfg, limits: &Limits) -> EarleyGrammar {
        let mut dr_next = Vec::new();
        let mut dr_lhs = Vec::new();
        let mut first_dr = Vec::with_capacity(cfg.productions.len());
        for p in &cfg.productions {
            first_dr.push(dr_next.len() as u32);
            for s in &p.rhs {
                dr_next.push(s.raw());
                dr_lhs.push(p.lhs);
            }
            dr_next.push(NONE);
            dr_lhs.push(p.lhs);
        }
        let n = cfg.nonterminals.len();
        let mut own_rules = vec![Vec::new(); n];
        let mut left_corners: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (a, prods) in cfg.productions_of.iter().enumerate() {
            for &p in prods {
                own_rules[a].push(first_dr[p as usize]);
                let s = cfg.productions[p as usize].rhs[0];
                if !s.is_terminal() {
                    left_corners[a].push(s.index());
                }
            }
            left_corners[a].sort_unstable();
            left_corners[a].dedup();
        }
        let num_dotted = dr_next.len();
        let first_bytes = cfg
            .terminals
            .iter()
            .map(|t| {
                let mut set = [0u64; 4];
                for b in 0..=255u8 {
                    if t.dfa.next(t.dfa.start(), b) != DEAD {
                        set[(b >> 6) as usize] |= 1 << (b & 63);
                    }
                }
                set
            })
            .collect();
        let (dr_perm, nt_perm) = perm_tables(&cfg, &first_dr, num_dotted);
        let mut dr_at_start = vec![false; num_dotted];
        for &d in &first_dr {
            dr_at_start[d as usize] = true;
        }
        let mut order: Vec<u32> = (0..num_dotted as u32).collect();
        order.sort_unstable_by_key(|&dr| (dr_next[dr as usize], dr));
        let mut dr_rank = vec![0u32; num_dotted];
        for (rank, &dr) in order.iter().enumerate() {
            dr_rank[dr as usize] = rank as u32;
        }
        EarleyGrammar {
            cfg,
            dr_next,
            dr_lhs,
            own_rules,
            left_corners,
            max_items: limits.max_earley_items,
            max_chart_bytes: limits.max_chart_bytes,
            first_bytes,
            dr_rank,
            dr_perm,
            nt_perm,
            dr_at_start,
        }
    }

    /// The `perm!` whose list is nonterminal `nt`, if any.
    #[inline]
    pub(crate) fn perm_of(&self, nt: u32) -> Option<&crate::grammar::perm::Perm> {
        match self.nt_perm[nt as usize] {
            NONE => None,
            i => Some(&self.cfg.perms[i as usize]),
        }
    }

    /// The bytes that can start terminal `term` (a 256-bit set).
    pub(crate) fn first_bytes(&self, term: u32) -> &[u64; 4] {
        &self.first_bytes[term as usize]
    }

    /// The normalized grammar.
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    /// A chart at the start of the input.
    pub fn start_chart(&self) -> Result<Chart> {
        let mut chart = Chart::default();
        let mut ov = Overlay::new(self, &chart);
        ov.initial_set()?;
        let top = ov.into_top();
        chart.commit(top);
        Ok(chart)
    }
}

/// Which entry each dotted rule of a `perm!` list's production adds, and which list each
/// nonterminal is (see `EarleyGrammar::dr_perm`, `nt_perm`).
fn perm_tables(cfg: &Cfg, first_dr: &[u32], num_dotted: usize) -> (Vec<u32>, Vec<u32>) {
    let mut dr_perm = vec![NONE; num_dotted];
    let mut nt_perm = vec![NONE; cfg.nonterminals.len()];
    for (pi, perm) in cfg.perms.iter().enumerate() {
        nt_perm[perm.list as usize] = pi as u32;
        for (&p, &tag) in cfg.productions_of[perm.list as usize].iter().zip(&perm.prod_entry) {
            let rhs = &cfg.productions[p as usize].rhs;
            let dr0 = first_dr[p as usize] as usize;
            dr_perm[dr0..=dr0 + rhs.len()].fill(tag & !crate::grammar::perm::ADD);
            if tag & crate::grammar::perm::ADD != 0 {
                dr_perm[dr0] |= ADD_AT_START;
            }
        }
    }
    (dr_perm, nt_perm)
}

/// A list state by its offset: in the base chart, in the overlay, or among the states
/// made while building the current set (`new`).
#[inline]
fn perm_state<'c>(base: &'c Chart, top: &'c Chart, new: &'c [u64], id: u32, width: usize) -> &'c [u64] {
    let id = id as usize;
    let (nb, nt) = (base.perm.len(), top.perm.len());
    let (arena, at) = if id < nb {
        (&base.perm[..], id)
    } else if id < nb + nt {
        (&top.perm[..], id - nb)
    } else {
        (new, id - nb - nt)
    };
    &arena[at..at + width]
}

/// The maps a state key is made with (see [`Chart::state_key`]).
#[derive(Default)]
struct KeyScratch {
    canon: SmallMap<u32>,
    queue: Vec<u32>,
    aux_canon: SmallMap<u32>,
    groups: SmallMap<(u32, u32)>,
}

thread_local! {
    static KEY_SCRATCH: std::cell::RefCell<KeyScratch> = std::cell::RefCell::new(KeyScratch::default());
}

/// Numbers keys in order of first sight: a list while small (a state key meets a few
/// sets; hashing each costs more than looking), a hash map beyond.
#[derive(Default)]
struct SmallMap<K> {
    small: Vec<K>,
    large: FastMap<K, u32>,
}

impl<K: Copy + Eq + std::hash::Hash> SmallMap<K> {
    fn clear(&mut self) {
        self.small.clear();
        self.large.clear();
    }

    /// The number of `k`, and whether it is new.
    fn id(&mut self, k: K) -> (u32, bool) {
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

/// One Earley set: ranges into the chart's arenas.
#[derive(Debug, Clone, Copy)]
struct SetData {
    /// Items sorted by (next symbol, dotted rule, origin); complete items last.
    items: (u32, u32),
    /// Terminals some item waits for: ranges into `expected`.
    expected: (u32, u32),
    /// Leo memo: (nonterminal, topmost item) ranges into `leo`, sorted by nonterminal.
    leo: (u32, u32),
    accepting: bool,
}

/// A terminal being read: its DFA state and the set that expects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Scan {
    term: u32,
    state: u32,
    origin: u32,
}

/// Terminal `term` expected by the items `items` of a set.
#[derive(Debug, Clone, Copy)]
struct Expected {
    term: u32,
    items: (u32, u32),
}

/// One byte position.
#[derive(Debug, Clone, Copy)]
struct Row {
    scans: (u32, u32),
    /// The Earley set built at this position, or `NONE`.
    set: u32,
    /// Arena lengths after this row (to truncate on pop).
    lens: [u32; 5],
}

/// A parse so far: Earley sets and byte rows in flat arenas.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    sets: Vec<SetData>,
    items: Vec<Item>,
    expected: Vec<Expected>,
    leo: Vec<(u32, Item)>,
    rows: Vec<Row>,
    scans: Vec<Scan>,
    /// States of `perm!` lists (see [`Item::aux`]), each `Perm::width` words.
    perm: Vec<u64>,
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
    }

    fn lens(&self) -> [u32; 5] {
        [
            self.sets.len() as u32,
            self.items.len() as u32,
            self.expected.len() as u32,
            self.leo.len() as u32,
            self.perm.len() as u32,
        ]
    }

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

    /// A canonical description of everything the rest of the parse can depend on: the
    /// open scans, and every Earley set reachable from them through item origins, with
    /// sets renumbered in order of discovery (compacted Earley sets). Two
    /// positions with equal keys allow exactly the same continuations, so they share a
    /// cached mask. Returns false if the key would exceed `max_len` words.
    pub(crate) fn state_key(&self, g: &EarleyGrammar, out: &mut Vec<u32>, max_len: usize) -> bool {
        // The maps are kept per thread: a key is made before every mask.
        KEY_SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let KeyScratch { canon, queue, aux_canon, groups } = &mut *s;
            canon.clear();
            queue.clear();
            aux_canon.clear();
            groups.clear();
            self.state_key_with(g, out, max_len, canon, queue, aux_canon, groups)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn state_key_with(
        &self,
        g: &EarleyGrammar,
        out: &mut Vec<u32>,
        max_len: usize,
        canon: &mut SmallMap<u32>,
        queue: &mut Vec<u32>,
        aux_canon: &mut SmallMap<u32>,
        groups: &mut SmallMap<(u32, u32)>,
    ) -> bool {
        out.clear();
        let Some(row) = self.rows.last() else { return true };
        // Set id → canonical id, in order of discovery.
        let id_of = |k: u32, canon: &mut SmallMap<u32>, queue: &mut Vec<u32>| -> u32 {
            let (id, new) = canon.id(k);
            if new {
                queue.push(k);
            }
            id
        };
        let row_set = if row.set == NONE { NONE } else { id_of(row.set, canon, queue) };
        out.push(row_set);
        for sc in &self.scans[row.scans.0 as usize..row.scans.1 as usize] {
            let o = id_of(sc.origin, canon, queue);
            out.extend_from_slice(&[sc.term, sc.state, o]);
        }
        out.push(NONE);
        let mut qi = 0;
        while qi < queue.len() {
            let k = queue[qi];
            qi += 1;
            let set = self.sets[k as usize];
            // Set 0 is the only one holding start items: its identity matters for acceptance.
            out.push(if k == 0 { NONE - 1 } else { NONE - 2 });
            for it in &self.items[set.items.0 as usize..set.items.1 as usize] {
                // Items at the start of their rule were predicted from the others (the
                // same in every set with the same others): they add nothing.
                if g.dr_at_start[it.dr as usize] {
                    continue;
                }
                let o = id_of(it.origin, canon, queue);
                // `L → L • S E_j` items come in groups: one list completed from one origin
                // with one state continues every `L → • L S E_j` there that its state
                // allows. The group is a function of (origin, state): written once.
                let after_list =
                    it.dr > 0 && g.dr_perm[it.dr as usize - 1] != NONE && g.dr_perm[it.dr as usize - 1] & ADD_AT_START != 0;
                if after_list {
                    if !groups.id((it.origin, it.aux)).1 {
                        continue;
                    }
                    out.push(NONE - 3);
                } else {
                    out.push(it.dr);
                }
                out.push(o);
                // A list's state by content (offsets differ between equal parses): numbered
                // in order of discovery, its words written where it is first met (many
                // items share one state).
                if g.dr_perm[it.dr as usize] != NONE {
                    if it.aux == NONE {
                        out.push(NONE);
                    } else if let Some(perm) = g.perm_of(g.dr_lhs[it.dr as usize]) {
                        let (id, new) = aux_canon.id(it.aux);
                        out.push(id);
                        if new {
                            let at = it.aux as usize;
                            for &w in &self.perm[at..at + perm.width()] {
                                out.extend_from_slice(&[w as u32, (w >> 32) as u32]);
                            }
                        }
                    }
                }
            }
            if out.len() > max_len {
                return false;
            }
        }
        true
    }

    /// A short string that completes the input read so far into a sentence (not always
    /// the shortest; None only if there is none, which a live parse never has). Fails if
    /// it is longer than
    /// `max_bytes` (`Limits::max_completion_bytes`).
    pub(crate) fn completion(
        &self,
        g: &EarleyGrammar,
        shortest: &crate::grammar::shortest::Shortest,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>> {
        if self.is_accepting() {
            return Ok(Some(Vec::new()));
        }
        let Some(row) = self.rows.last().copied() else { return Ok(None) };
        let empty = Chart::default();
        let search =
            Completion { g, chart: self, empty: &empty, shortest, states: Default::default(), orders: Default::default() };
        let mut starts: Vec<(Head, u64, Node)> = Vec::new();
        for sc in &self.scans[row.scans.0 as usize..row.scans.1 as usize] {
            let dfa = &g.cfg.terminals[sc.term as usize].dfa;
            if let Some(head) = crate::grammar::shortest::dfa_suffix(dfa, sc.state) {
                let cost = head.len() as u64;
                starts.push((Head::Bytes(head), cost, (sc.origin, sc.term | (1 << 31), NONE)));
            }
        }
        if row.set != NONE {
            let set = self.sets[row.set as usize];
            for it in &self.items[set.items.0 as usize..set.items.1 as usize] {
                // `L → • L S E_j` is left out: its rest starts with a whole list, whose
                // entries its state would miss; the items that predicted it come instead.
                let tag = g.dr_perm[it.dr as usize];
                if g.dr_next[it.dr as usize] != NONE && (tag == NONE || tag & ADD_AT_START == 0) {
                    let node = search.completed_by(*it);
                    starts.push((Head::Rest(it.dr), search.rest_len(it.dr), node));
                }
            }
        }
        search.solve(starts, max_bytes)
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
        }
    }

    /// May the input end here?
    pub fn is_accepting(&self) -> bool {
        self.rows.last().is_some_and(|r| r.set != NONE && self.sets[r.set as usize].accepting)
    }

    /// Appends an overlay's new rows and sets (their indices are already global).
    fn commit(&mut self, top: Chart) {
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

/// Reusable buffers for building Earley sets (kept per thread, so that reading a byte
/// allocates nothing in the steady state).
#[derive(Default)]
struct Scratch {
    pending: Vec<Item>,
    done: Vec<Item>,
    seen: FastSet<Item>,
    /// Per nonterminal: the generation (set being built) in which it was last predicted.
    pred_mark: Vec<u32>,
    generation: u32,
    pred_stack: Vec<u32>,
    new_scans: Vec<Scan>,
    completed: Vec<(u32, u32)>,
    /// List states made while building the current set, and their offsets by content.
    perm_new: Vec<u64>,
    perm_ids: FastMap<Vec<u64>, u32>,
    perm_tmp: Vec<u64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<Scratch>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Adds the prediction of nonterminal `nt` at set `k`, and of the nonterminals its rules
/// start with, transitively (predicted items are never complete: there are no ε-rules, so
/// they need no further work). Each nonterminal is predicted once per set.
fn predict(g: &EarleyGrammar, sc: &mut Scratch, nt: u32, k: u32) {
    let gen = sc.generation;
    if sc.pred_mark[nt as usize] == gen {
        return;
    }
    sc.pred_mark[nt as usize] = gen;
    sc.pred_stack.clear();
    sc.pred_stack.push(nt);
    while let Some(x) = sc.pred_stack.pop() {
        sc.done.extend(g.own_rules[x as usize].iter().map(|&dr| Item { dr, origin: k, aux: NONE }));
        for &y in &g.left_corners[x as usize] {
            if sc.pred_mark[y as usize] != gen {
                sc.pred_mark[y as usize] = gen;
                sc.pred_stack.push(y);
            }
        }
    }
}

/// Completes item `it` of a `perm!` list's production: the list now holds one more entry.
/// It continues `L → • L S E_j` items where entry `j` may follow, and any other item
/// waiting for the list only if the list is finished (see [`crate::grammar::perm`]). Returns the
/// number of items looked at.
fn complete_list(
    g: &EarleyGrammar,
    perm: &crate::grammar::perm::Perm,
    base: &Chart,
    top: &Chart,
    sc: &mut Scratch,
    it: Item,
) -> usize {
    let width = perm.width();
    let entry = (g.dr_perm[it.dr as usize] & !ADD_AT_START) as usize;
    let mut state = std::mem::take(&mut sc.perm_tmp);
    let before = (it.aux != NONE).then(|| perm_state(base, top, &sc.perm_new, it.aux, width));
    perm.with_entry(before, entry, &mut state);
    let finished = perm.is_finished(&state);
    let adding = perm.adding(&state);
    let mut id = NONE;
    let ws = waiting(g, base, top, it.origin, g.dr_lhs[it.dr as usize]);
    for w in ws {
        let tag = g.dr_perm[w.dr as usize];
        let a = if tag != NONE && tag & ADD_AT_START != 0 {
            if !perm.allows(&adding, &state, (tag & !ADD_AT_START) as usize) {
                continue;
            }
            if id == NONE {
                id = intern_state(sc, base, top, &state);
            }
            Item { dr: w.dr + 1, origin: w.origin, aux: id }
        } else if finished {
            Item { dr: w.dr + 1, origin: w.origin, aux: w.aux }
        } else {
            continue;
        };
        if sc.seen.insert(a) {
            sc.pending.push(a);
        }
    }
    sc.perm_tmp = state;
    ws.len() + 1
}

/// The offset of a list state made while building a set (one per content, so that equal
/// items stay one).
fn intern_state(sc: &mut Scratch, base: &Chart, top: &Chart, state: &[u64]) -> u32 {
    if let Some(&id) = sc.perm_ids.get(state) {
        return id;
    }
    let id = (base.perm.len() + top.perm.len() + sc.perm_new.len()) as u32;
    sc.perm_new.extend_from_slice(state);
    sc.perm_ids.insert(state.to_vec(), id);
    id
}

/// The search behind [`Chart::completion`]: shortest paths (in bytes) from "symbol `sym`
/// was just read in set `k`" to acceptance, over the chain of waiting items.
struct Completion<'c> {
    g: &'c EarleyGrammar,
    chart: &'c Chart,
    empty: &'c Chart,
    shortest: &'c crate::grammar::shortest::Shortest,
    /// List states met by the search (nodes name them by index), and their indices.
    states: std::cell::RefCell<ListStates>,
    /// Per list nonterminal: its entries by cost (see [`Completion::finish`]).
    orders: std::cell::RefCell<HashMap<u32, Vec<usize>>>,
}

/// The list states a completion search meets, and the index of each.
type ListStates = (Vec<Vec<u64>>, HashMap<Vec<u64>, u32>);

/// A search node: symbol (raw) read in set, and for a `perm!` list the index of its
/// state in `Completion::states` (`FINISHED` once entries were added to finish it;
/// `NONE` for other symbols); `ACCEPT` is the goal.
type Node = (u32, u32, u32);
const ACCEPT: Node = (NONE, NONE, NONE);
const FINISHED: u32 = NONE - 1;

/// How a completion starts: the rest of an open terminal, or the rest of a dotted rule.
enum Head {
    Bytes(Vec<u8>),
    Rest(u32),
}

/// The symbol after the dot of a raw `dr_next` value.
fn sym_of(raw: u32) -> Sym {
    if raw & (1 << 31) != 0 {
        Sym::t(raw & !(1 << 31))
    } else {
        Sym::n(raw)
    }
}

impl Completion<'_> {
    /// Length of the shortest bytes for the symbols from dotted rule `dr` to the end of
    /// its rule (saturating).
    fn rest_len(&self, mut dr: u32) -> u64 {
        let mut len = 0u64;
        while self.g.dr_next[dr as usize] != NONE {
            len = len.saturating_add(self.shortest.length(sym_of(self.g.dr_next[dr as usize])));
            dr += 1;
        }
        len
    }

    /// Appends those bytes to `out`.
    fn write_rest(&self, mut dr: u32, out: &mut Vec<u8>) {
        while self.g.dr_next[dr as usize] != NONE {
            self.shortest.write(self.g.cfg(), sym_of(self.g.dr_next[dr as usize]), out);
            dr += 1;
        }
    }

    /// Where producing the rest of item `it` leads: its rule completed in its origin set
    /// (for a list's production, with the list's state after its entry).
    fn completed_by(&self, it: Item) -> Node {
        let g = self.g;
        let nt = g.dr_lhs[it.dr as usize];
        if it.origin == 0 && nt == g.cfg.start {
            return ACCEPT;
        }
        let Some(perm) = g.perm_of(nt) else { return (it.origin, nt, NONE) };
        let mut state = Vec::new();
        let before = (it.aux != NONE).then(|| perm_state(self.chart, self.empty, &[], it.aux, perm.width()));
        perm.with_entry(before, (g.dr_perm[it.dr as usize] & !ADD_AT_START) as usize, &mut state);
        let mut states = self.states.borrow_mut();
        let next = states.0.len() as u32;
        let id = *states.1.entry(state.clone()).or_insert(next);
        if id == next {
            states.0.push(state);
        }
        (it.origin, nt, id)
    }

    /// The cost of each entry of `perm` after a separator, for finishing a list.
    fn entry_cost<'p>(&'p self, perm: &'p crate::grammar::perm::Perm) -> impl Fn(usize) -> u64 + 'p {
        let sep = perm.sep.map_or(0, |s| self.shortest.length(s));
        move |i| self.shortest.length(perm.entries[i]).saturating_add(sep)
    }

    /// The cheapest entries that finish the list of node `node`.
    fn finish(&self, node: Node) -> Option<(u64, Vec<usize>)> {
        let perm = self.g.perm_of(node.1)?;
        let cost = self.entry_cost(perm);
        let mut orders = self.orders.borrow_mut();
        let order = orders.entry(node.1).or_insert_with(|| {
            let mut o: Vec<usize> = (0..perm.entries.len()).collect();
            o.sort_by_key(|&i| (cost(i), i));
            o
        });
        let states = self.states.borrow();
        perm.cheapest_finish_sorted(&states.0[node.2 as usize], order, &cost)
    }

    /// The edges out of a node: (dotted rule whose rest is produced, its cost, next node);
    /// from an unfinished list, one edge (`NONE`) that adds the entries finishing it.
    fn edges(&self, node: Node) -> Vec<(u32, u64, Node)> {
        let g = self.g;
        if node.2 != NONE && node.2 != FINISHED {
            return self.finish(node).map(|(cost, _)| (NONE, cost, (node.0, node.1, FINISHED))).into_iter().collect();
        }
        waiting(g, self.chart, self.empty, node.0, node.1)
            .iter()
            .filter(|w| node.2 != FINISHED || g.dr_perm[w.dr as usize] & ADD_AT_START == 0 || g.dr_perm[w.dr as usize] == NONE)
            .map(|w| (w.dr + 1, self.rest_len(w.dr + 1), self.completed_by(*w)))
            .collect()
    }

    /// Appends the entries that finish the list of node `node` (see [`Completion::finish`]).
    fn write_finish(&self, node: Node, out: &mut Vec<u8>) {
        let Some(perm) = self.g.perm_of(node.1) else { return };
        for i in self.finish(node).map(|f| f.1).unwrap_or_default() {
            if let Some(s) = perm.sep {
                self.shortest.write(self.g.cfg(), s, out);
            }
            self.shortest.write(self.g.cfg(), perm.entries[i], out);
        }
    }

    /// The cheapest completion from the given starting options, by Dijkstra's algorithm
    /// from the goal over the reversed edges (costs are non-negative).
    fn solve(&self, starts: Vec<(Head, u64, Node)>, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        use std::cmp::Reverse;
        // Reversed edges of every node reachable from the starts: node → [(from, cost, dr)].
        let mut reversed: HashMap<Node, Vec<(Node, u64, u32)>> = HashMap::new();
        let mut seen: HashSet<Node> = HashSet::new();
        let mut stack: Vec<Node> = starts.iter().map(|s| s.2).filter(|&n| n != ACCEPT).collect();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            crate::util::interrupt::check()?;
            for (dr, cost, m) in self.edges(n) {
                reversed.entry(m).or_default().push((n, cost, dr));
                if m != ACCEPT && !seen.contains(&m) {
                    stack.push(m);
                }
            }
        }
        // Per node: its distance to the goal and its first step (dr, next node) there.
        let mut dist: HashMap<Node, (u64, u32, Node)> = HashMap::from([(ACCEPT, (0, NONE, ACCEPT))]);
        let mut heap = std::collections::BinaryHeap::from([Reverse((0u64, ACCEPT))]);
        while let Some(Reverse((d, m))) = heap.pop() {
            if dist.get(&m).is_some_and(|x| x.0 < d) {
                continue;
            }
            crate::util::interrupt::check()?;
            for &(n, cost, dr) in reversed.get(&m).map_or(&[][..], |v| &v[..]) {
                let cand = d.saturating_add(cost);
                if cand != u64::MAX && dist.get(&n).is_none_or(|x| cand < x.0) {
                    dist.insert(n, (cand, dr, m));
                    heap.push(Reverse((cand, n)));
                }
            }
        }
        let best = starts
            .into_iter()
            .filter_map(|(head, cost, n)| dist.get(&n).map(|x| (cost.saturating_add(x.0), head, n)))
            .filter(|x| x.0 != u64::MAX)
            .min_by_key(|x| x.0);
        let Some((total, head, mut node)) = best else { return Ok(None) };
        if total > max_bytes as u64 {
            return Err(Error::LimitExceeded {
                limit: "max_completion_bytes",
                value: max_bytes,
                context: format!("the shortest completion ({total} bytes)"),
            });
        }
        let mut text = Vec::with_capacity(total as usize);
        match head {
            Head::Bytes(b) => text.extend_from_slice(&b),
            Head::Rest(dr) => self.write_rest(dr, &mut text),
        }
        while node != ACCEPT {
            let (_, dr, next) = dist[&node];
            if dr == NONE {
                self.write_finish(node, &mut text);
            } else {
                self.write_rest(dr, &mut text);
            }
            node = next;
        }
        Ok(Some(text))
    }
}

/// Reads bytes on top of a chart without changing it.
pub struct Overlay<'a> {
    g: &'a EarleyGrammar,
    base: &'a Chart,
    top: Chart,
    scratch: Scratch,
    /// Sets built so far, by the completed terminals they were built from: an Earley set
    /// is a function of those (and of the sets they name), so while those sets stand, a
    /// repeat is served from here. Values: (global set id, serial of that set slot).
    set_memo: FastMap<Vec<(u32, u32)>, (u32, u64)>,
    /// Serial number of each top set (to detect a slot reused after a pop).
    top_serials: Vec<u64>,
    next_serial: u64,
    /// Set when a limit was hit during a push (the push then fails).
    pub error: Option<Error>,
}

impl Drop for Overlay<'_> {
    fn drop(&mut self) {
        let scratch = std::mem::take(&mut self.scratch);
        SCRATCH.with(|pool| pool.borrow_mut().push(scratch));
    }
}

/// Items of set `k` waiting for symbol `sym` (raw).
#[inline]
fn waiting<'c>(g: &EarleyGrammar, base: &'c Chart, top: &'c Chart, k: u32, sym: u32) -> &'c [Item] {
    let nb = base.sets.len() as u32;
    let (set, chart) = if k < nb { (&base.sets[k as usize], base) } else { (&top.sets[(k - nb) as usize], top) };
    let items = &chart.items[set.items.0 as usize..set.items.1 as usize];
    let lo = items.partition_point(|it| g.dr_next[it.dr as usize] < sym);
    let hi = lo + items[lo..].partition_point(|it| g.dr_next[it.dr as usize] == sym);
    &items[lo..hi]
}

/// The Leo memo of set `k` for nonterminal `nt`.
#[inline]
fn leo_item(base: &Chart, top: &Chart, k: u32, nt: u32) -> Option<Item> {
    let nb = base.sets.len() as u32;
    let (set, chart) = if k < nb { (&base.sets[k as usize], base) } else { (&top.sets[(k - nb) as usize], top) };
    let leo = &chart.leo[set.leo.0 as usize..set.leo.1 as usize];
    leo.binary_search_by_key(&nt, |(n, _)| *n).ok().map(|i| leo[i].1)
}

impl<'a> Overlay<'a> {
    /// An overlay at the chart's current position.
    pub fn new(g: &'a EarleyGrammar, base: &'a Chart) -> Overlay<'a> {
        let mut scratch = SCRATCH.with(|pool| pool.borrow_mut().pop()).unwrap_or_default();
        if scratch.pred_mark.len() != g.own_rules.len() {
            scratch.pred_mark.clear();
            scratch.pred_mark.resize(g.own_rules.len(), 0);
            scratch.generation = 0;
        }
        Overlay {
            g,
            base,
            top: Chart::default(),
            scratch,
            set_memo: FastMap::default(),
            top_serials: Vec::new(),
            next_serial: 0,
            error: None,
        }
    }

    /// The rows and sets read so far, to commit into the base chart.
    pub fn into_top(mut self) -> Chart {
        std::mem::take(&mut self.top)
    }

    fn base_sets(&self) -> u32 {
        self.base.sets.len() as u32
    }

    #[inline]
    fn set(&self, k: u32) -> (&SetData, &Chart) {
        let nb = self.base_sets();
        if k < nb {
            (&self.base.sets[k as usize], self.base)
        } else {
            (&self.top.sets[(k - nb) as usize], &self.top)
        }
    }

    fn current_row(&self) -> (Row, &Chart) {
        match self.top.rows.last() {
            Some(r) => (*r, &self.top),
            None => (*self.base.rows.last().expect("a chart always has its start row"), self.base),
        }
    }

    /// Is the input read so far (base plus overlay) a complete sentence?
    pub fn is_accepting(&self) -> bool {
        let (row, _) = self.current_row();
        row.set != NONE && self.set(row.set).0.accepting
    }

    /// Builds the set at the next position from completed terminals `(term, origin set)`
    /// (or, for the initial set, from the start's prediction). Returns its global index.
    fn build_set(&mut self, completed: &[(u32, u32)], initial: bool) -> Result<u32> {
        let g = self.g;
        let base = self.base;
        let k = base.sets.len() as u32 + self.top.sets.len() as u32;
        let sc = &mut self.scratch;
        sc.generation = sc.generation.wrapping_add(1);
        if sc.generation == 0 {
            sc.pred_mark.iter_mut().for_each(|m| *m = 0);
            sc.generation = 1;
        }
        sc.pending.clear();
        sc.seen.clear();
        sc.done.clear();
        let top = &self.top;
        if initial {
            predict(g, sc, g.cfg.start, k);
        }
        // Every derivation of an item counts, repeats too: an ambiguous grammar derives the
        // same item from many origins, and that is the work to bound.
        let mut work = 0usize;
        let too_much = || Error::LimitExceeded {
            limit: "max_earley_items",
            value: g.max_items,
            context: "one Earley set (items created or derived again while reading one byte)".to_string(),
        };
        for &(term, origin) in completed {
            let ws = waiting(g, base, top, origin, term | (1 << 31));
            work += ws.len();
            for it in ws {
                let a = Item { dr: it.dr + 1, origin: it.origin, aux: it.aux };
                if sc.seen.insert(a) {
                    sc.pending.push(a);
                }
            }
        }
        sc.perm_new.clear();
        sc.perm_ids.clear();
        while let Some(it) = sc.pending.pop() {
            sc.done.push(it);
            work += 1;
            if work > g.max_items || sc.done.len() > g.max_items {
                return Err(too_much());
            }
            if work & 1023 == 0 {
                crate::util::interrupt::check_now()?;
            }
            let next = g.dr_next[it.dr as usize];
            if next == NONE {
                let lhs = g.dr_lhs[it.dr as usize];
                if let Some(perm) = g.perm_of(lhs) {
                    work += complete_list(g, perm, base, top, sc, it);
                    if work > g.max_items {
                        return Err(too_much());
                    }
                } else if let Some(topmost) = leo_item(base, top, it.origin, lhs) {
                    if sc.seen.insert(topmost) {
                        sc.pending.push(topmost);
                    }
                } else {
                    let ws = waiting(g, base, top, it.origin, lhs);
                    work += ws.len();
                    if work > g.max_items {
                        return Err(too_much());
                    }
                    for w in ws {
                        let a = Item { dr: w.dr + 1, origin: w.origin, aux: w.aux };
                        if sc.seen.insert(a) {
                            sc.pending.push(a);
                        }
                    }
                }
            } else if next & (1 << 31) == 0 {
                predict(g, sc, next, k);
            }
        }
        // Sort by (next symbol, rule, origin): waiting items become binary-searchable.
        let mut done = std::mem::take(&mut sc.done);
        done.sort_unstable_by_key(|it| ((g.dr_rank[it.dr as usize] as u64) << 32) | it.origin as u64);
        let start = self.top.items.len() as u32;
        let accepting = if initial {
            g.cfg.accepts_empty
        } else {
            done.iter().any(|it| g.dr_next[it.dr as usize] == NONE && g.dr_lhs[it.dr as usize] == g.cfg.start && it.origin == 0)
        };
        let exp_start = self.top.expected.len() as u32;
        let leo_start = self.top.leo.len() as u32;
        let mut i = 0;
        while i < done.len() {
            let sym = g.dr_next[done[i].dr as usize];
            if sym == NONE {
                break;
            }
            let mut j = i + 1;
            while j < done.len() && g.dr_next[done[j].dr as usize] == sym {
                j += 1;
            }
            if sym & (1 << 31) != 0 {
                self.top.expected.push(Expected { term: sym & !(1 << 31), items: (start + i as u32, start + j as u32) });
            } else if j - i == 1
                && g.dr_next[done[i].dr as usize + 1] == NONE
                && g.nt_perm[sym as usize] == NONE
                && done[i].origin != k
            {
                // Exactly one item waits for `sym` and completing it completes that item:
                // a deterministic reduction chain. Memoize its topmost item. (Never over a
                // `perm!` list: going on after one is checked, see `complete_list`; nor for
                // a unit rule predicted here, `L → E_i` or `A → L`: its set is this one.)
                let advanced = Item { dr: done[i].dr + 1, origin: done[i].origin, aux: done[i].aux };
                let lhs = g.dr_lhs[advanced.dr as usize];
                let topmost = leo_item(base, &self.top, advanced.origin, lhs).unwrap_or(advanced);
                self.top.leo.push((sym, topmost));
            }
            i = j;
        }
        self.top.items.extend_from_slice(&done);
        self.top.perm.extend_from_slice(&self.scratch.perm_new);
        self.scratch.done = done;
        let end = self.top.items.len() as u32;
        self.top.sets.push(SetData {
            items: (start, end),
            expected: (exp_start, self.top.expected.len() as u32),
            leo: (leo_start, self.top.leo.len() as u32),
            accepting,
        });
        self.check_size()?;
        Ok(k)
    }

    /// Fails if the chart with this overlay holds more than `Limits::max_chart_bytes`.
    fn check_size(&self) -> Result<()> {
        let bytes = self.base.heap_bytes() + self.top.heap_bytes();
        if bytes > self.g.max_chart_bytes {
            return Err(Error::LimitExceeded {
                limit: "max_chart_bytes",
                value: self.g.max_chart_bytes,
                context: format!("the parse of {} bytes", self.base.rows.len() + self.top.rows.len()),
            });
        }
        Ok(())
    }

    /// Creates the start row (only on an empty chart).
    fn initial_set(&mut self) -> Result<()> {
        let k = self.build_set(&[], true)?;
        let lens = self.top.lens();
        self.top.rows.push(Row { scans: (0, 0), set: k, lens });
        Ok(())
    }

    /// [`Overlay::build_set`] through `set_memo`: a set equal to one still standing is
    /// reused instead of rebuilt (the same terminals ending from the same sets).
    fn build_set_memo(&mut self, completed: &[(u32, u32)]) -> Result<u32> {
        let nb = self.base.sets.len() as u32;
        if let Some(&(k, serial)) = self.set_memo.get(completed) {
            let slot = (k - nb) as usize;
            let live = k >= nb && slot < self.top.sets.len() && self.top_serials.get(slot) == Some(&serial);
            if live {
                return Ok(k);
            }
        }
        let k = self.build_set(completed, false)?;
        let serial = self.next_serial;
        self.next_serial += 1;
        self.top_serials.truncate((k - nb) as usize);
        self.top_serials.push(serial);
        self.set_memo.insert(completed.to_vec(), (k, serial));
        Ok(k)
    }

    /// Pushes a row where the terminals `completed` (terminal, origin set) have just ended
    /// and nothing else is being read. Used by masks: the bytes before were checked by the
    /// lexer alone.
    pub(crate) fn push_completed(&mut self, completed: &[(u32, u32)]) -> bool {
        let set = match self.build_set(completed, false) {
            Ok(k) => k,
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        let scan_start = self.top.scans.len() as u32;
        let lens = self.top.lens();
        self.top.rows.push(Row { scans: (scan_start, scan_start), set, lens });
        true
    }

    /// The current position's Earley set and the terminals it expects (none if no set was
    /// built here).
    pub(crate) fn current_expected(&self) -> (u32, Vec<u32>) {
        let row = match self.top.rows.last() {
            Some(r) => *r,
            None => match self.base.rows.last() {
                Some(r) => *r,
                None => return (NONE, Vec::new()),
            },
        };
        if row.set == NONE {
            return (NONE, Vec::new());
        }
        let (set, chart) = self.set(row.set);
        (row.set, chart.expected[set.expected.0 as usize..set.expected.1 as usize].iter().map(|e| e.term).collect())
    }

    /// Reads one byte; false (nothing changed) if no sentence can continue with it.
    pub fn push(&mut self, byte: u8) -> bool {
        let g = self.g;
        let terms = &g.cfg.terminals;
        let nb = self.base.sets.len() as u32;
        let (row, in_top) = match self.top.rows.last() {
            Some(r) => (*r, true),
            None => match self.base.rows.last() {
                Some(r) => (*r, false),
                None => return false,
            },
        };
        let mut new_scans = std::mem::take(&mut self.scratch.new_scans);
        new_scans.clear();
        let scans = if in_top { &self.top.scans } else { &self.base.scans };
        for sc in &scans[row.scans.0 as usize..row.scans.1 as usize] {
            let q = terms[sc.term as usize].dfa.next(sc.state, byte);
            if q != DEAD {
                new_scans.push(Scan { term: sc.term, state: q, origin: sc.origin });
            }
        }
        if row.set != NONE {
            let (set, schart) = if row.set < nb {
                (&self.base.sets[row.set as usize], self.base)
            } else {
                (&self.top.sets[(row.set - nb) as usize], &self.top)
            };
            for e in &schart.expected[set.expected.0 as usize..set.expected.1 as usize] {
                let dfa = &terms[e.term as usize].dfa;
                let q = dfa.next(dfa.start(), byte);
                if q != DEAD {
                    new_scans.push(Scan { term: e.term, state: q, origin: row.set });
                }
            }
        }
        if new_scans.is_empty() {
            self.scratch.new_scans = new_scans;
            return false;
        }
        if new_scans.len() > 1 {
            new_scans.sort_unstable();
            new_scans.dedup();
        }
        let mut completed = std::mem::take(&mut self.scratch.completed);
        completed.clear();
        completed
            .extend(new_scans.iter().filter(|s| terms[s.term as usize].dfa.is_accepting(s.state)).map(|s| (s.term, s.origin)));
        let set = if completed.is_empty() {
            NONE
        } else {
            match self.build_set_memo(&completed) {
                Ok(k) => k,
                Err(e) => {
                    self.error = Some(e);
                    self.scratch.completed = completed;
                    self.scratch.new_scans = new_scans;
                    return false;
                }
            }
        };
        self.scratch.completed = completed;
        if set == NONE {
            // Rows without a set grow the chart too (a long terminal being read).
            if let Err(e) = self.check_size() {
                self.error = Some(e);
                self.scratch.new_scans = new_scans;
                return false;
            }
        }
        let scan_start = self.top.scans.len() as u32;
        self.top.scans.extend_from_slice(&new_scans);
        self.scratch.new_scans = new_scans;
        let lens = self.top.lens();
        self.top.rows.push(Row { scans: (scan_start, self.top.scans.len() as u32), set, lens });
        true
    }

    /// Undoes the last `n` pushes.
    pub fn pop(&mut self, n: usize) {
        let keep = self.top.rows.len() - n;
        self.top.rows.truncate(keep);
        let sets_left = self.top.rows.last().map_or(0, |r| r.lens[0] as usize);
        self.top_serials.truncate(sets_left);
        match self.top.rows.last().copied() {
            Some(last) => {
                self.top.scans.truncate(last.scans.1 as usize);
                let [s, i, e, l, p] = last.lens;
                self.top.sets.truncate(s as usize);
                self.top.items.truncate(i as usize);
                self.top.expected.truncate(e as usize);
                self.top.leo.truncate(l as usize);
                self.top.perm.truncate(p as usize);
            }
            None => self.top = Chart::default(),
        }
    }

    /// Number of bytes read on top of the base.
    pub fn depth(&self) -> usize {
        self.top.rows.len()
    }
}

impl ByteRecognizer for Overlay<'_> {
    #[inline]
    fn push_byte(&mut self, byte: u8) -> bool {
        self.push(byte)
    }

    #[inline]
    fn pop_bytes(&mut self, n: usize) {
        self.pop(n)
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
