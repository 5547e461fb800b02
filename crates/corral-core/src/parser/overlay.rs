//! Reading bytes on top of a chart without changing it: each byte advances the open
//! scans, and where a terminal ends a new Earley set is built (prediction, completion
//! with Leo memos, `perm!` list states).

use super::*;
use crate::automata::DEAD;
use crate::error::{Error, Result};
use crate::util::hash::{FastMap, FastSet};
use crate::vocab::ByteRecognizer;

/// Reusable buffers for building Earley sets (kept per thread, so that reading a byte
/// allocates nothing in the steady state).
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) pending: Vec<Item>,
    pub(super) done: Vec<Item>,
    pub(super) seen: FastSet<Item>,
    /// Per nonterminal: the generation (set being built) in which it was last predicted.
    pub(super) pred_mark: Vec<u32>,
    pub(super) generation: u32,
    pub(super) pred_stack: Vec<u32>,
    pub(super) new_scans: Vec<Scan>,
    pub(super) completed: Vec<(u32, u32)>,
    /// List states made while building the current set, and their offsets by content.
    pub(super) perm_new: Vec<u64>,
    pub(super) perm_ids: FastMap<Vec<u64>, u32>,
    pub(super) perm_tmp: Vec<u64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<Scratch>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Adds the prediction of nonterminal `nt` at set `k`, and of the nonterminals its rules
/// start with, transitively (predicted items are never complete: there are no ε-rules, so
/// they need no further work). Each nonterminal is predicted once per set.
pub(super) fn predict(g: &EarleyGrammar, sc: &mut Scratch, nt: u32, k: u32) {
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
pub(super) fn complete_list(
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
pub(super) fn intern_state(sc: &mut Scratch, base: &Chart, top: &Chart, state: &[u64]) -> u32 {
    if let Some(&id) = sc.perm_ids.get(state) {
        return id;
    }
    let id = (base.perm.len() + top.perm.len() + sc.perm_new.len()) as u32;
    sc.perm_new.extend_from_slice(state);
    sc.perm_ids.insert(state.to_vec(), id);
    id
}

/// Reads bytes on top of a chart without changing it.
pub struct Overlay<'a> {
    pub(super) g: &'a EarleyGrammar,
    pub(super) base: &'a Chart,
    pub(super) top: Chart,
    pub(super) scratch: Scratch,
    /// Sets built so far, by the completed terminals they were built from: an Earley set
    /// is a function of those (and of the sets they name), so while those sets stand, a
    /// repeat is served from here. Values: (global set id, serial of that set slot).
    pub(super) set_memo: FastMap<Vec<(u32, u32)>, (u32, u64)>,
    /// Serial number of each top set (to detect a slot reused after a pop).
    pub(super) top_serials: Vec<u64>,
    pub(super) next_serial: u64,
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
pub(super) fn waiting<'c>(g: &EarleyGrammar, base: &'c Chart, top: &'c Chart, k: u32, sym: u32) -> &'c [Item] {
    let nb = base.sets.len() as u32;
    let (set, chart) = if k < nb { (&base.sets[k as usize], base) } else { (&top.sets[(k - nb) as usize], top) };
    let items = &chart.items[set.items.0 as usize..set.items.1 as usize];
    let lo = items.partition_point(|it| g.dr_next[it.dr as usize] < sym);
    let hi = lo + items[lo..].partition_point(|it| g.dr_next[it.dr as usize] == sym);
    &items[lo..hi]
}

/// The Leo memo of set `k` for nonterminal `nt`.
#[inline]
pub(super) fn leo_item(base: &Chart, top: &Chart, k: u32, nt: u32) -> Option<Item> {
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

    /// Does the grammar expect the entry of a distinct list where the overlay stands (see
    /// [`Chart::expects_distinct_entry`])?
    pub fn expects_distinct_entry(&self, kind: Distinct) -> bool {
        let (row, _) = self.current_row();
        if row.set == NONE {
            return false;
        }
        let (set, chart) = self.set(row.set);
        self.g.awaits_distinct_entry(&chart.items[set.items.0 as usize..set.items.1 as usize], kind)
    }

    /// The kinds of first item of the arrays of distinct values the grammar expects where
    /// the overlay stands (see `EarleyGrammar::awaited_value_lists`).
    pub fn expects_value_lists(&self) -> ItemStarts {
        let (row, _) = self.current_row();
        if row.set == NONE {
            return ItemStarts::NONE;
        }
        let (set, chart) = self.set(row.set);
        self.g.awaited_value_lists(&chart.items[set.items.0 as usize..set.items.1 as usize])
    }

    /// Does byte `b` start a JSON region where the overlay stands, and nothing else (see
    /// `EarleyGrammar::starts_region_only`)?
    pub fn starts_region_only(&self, b: u8) -> bool {
        let (row, row_chart) = self.current_row();
        if row.set == NONE {
            return false;
        }
        let scans = &row_chart.scans[row.scans.0 as usize..row.scans.1 as usize];
        let (set, chart) = self.set(row.set);
        let items = &chart.items[set.items.0 as usize..set.items.1 as usize];
        let expected = &chart.expected[set.expected.0 as usize..set.expected.1 as usize];
        self.g.starts_region_only(row.set, items, expected, &chart.items, scans, b)
    }

    /// The rows and sets read so far, to commit into the base chart.
    pub fn into_top(mut self) -> Chart {
        std::mem::take(&mut self.top)
    }

    pub(super) fn base_sets(&self) -> u32 {
        self.base.sets.len() as u32
    }

    #[inline]
    pub(super) fn set(&self, k: u32) -> (&SetData, &Chart) {
        let nb = self.base_sets();
        if k < nb {
            (&self.base.sets[k as usize], self.base)
        } else {
            (&self.top.sets[(k - nb) as usize], &self.top)
        }
    }

    pub(super) fn current_row(&self) -> (Row, &Chart) {
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
    pub(super) fn build_set(&mut self, completed: &[(u32, u32)], initial: bool) -> Result<u32> {
        let k = self.base.sets.len() as u32 + self.top.sets.len() as u32;
        derive_items(self.g, self.base, &self.top, &mut self.scratch, completed, initial, k)?;
        self.store_set(initial, k);
        self.check_size()?;
        Ok(k)
    }

    /// Stores the items derived in the scratch (`Scratch::done`) as set `k`: sorted by
    /// (next symbol, rule, origin), so that waiting items are binary-searchable, with the
    /// groups of items that expect each terminal and the Leo memos.
    fn store_set(&mut self, initial: bool, k: u32) {
        let g = self.g;
        let mut done = std::mem::take(&mut self.scratch.done);
        done.sort_unstable_by_key(|it| ((g.dr_rank[it.dr as usize] as u64) << 32) | it.origin as u64);
        let start = self.top.items.len() as u32;
        let accepting = if initial {
            g.cfg.accepts_empty
        } else {
            done.iter().any(|it| g.dr_next[it.dr as usize] == NONE && g.dr_lhs[it.dr as usize] == g.cfg.start && it.origin == 0)
        };
        let exp_start = self.top.expected.len() as u32;
        let leo_start = self.top.leo.len() as u32;
        self.index_by_next_symbol(&done, start, k);
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
    }

    /// For the sorted items `done` of set `k` (stored from index `start`): the range of
    /// items that expect each terminal, and the Leo memo of each nonterminal that exactly
    /// one item waits for.
    fn index_by_next_symbol(&mut self, done: &[Item], start: u32, k: u32) {
        let g = self.g;
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
                let topmost = leo_item(self.base, &self.top, advanced.origin, lhs).unwrap_or(advanced);
                self.top.leo.push((sym, topmost));
            }
            i = j;
        }
    }

    /// Fails if the chart with this overlay holds more than `Limits::max_chart_bytes`.
    pub(super) fn check_size(&self) -> Result<()> {
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
    pub(super) fn initial_set(&mut self) -> Result<()> {
        let k = self.build_set(&[], true)?;
        let lens = self.top.lens();
        self.top.rows.push(Row { scans: (0, 0), set: k, lens });
        Ok(())
    }

    /// [`Overlay::build_set`] through `set_memo`: a set equal to one still standing is
    /// reused instead of rebuilt (the same terminals ending from the same sets).
    pub(super) fn build_set_memo(&mut self, completed: &[(u32, u32)]) -> Result<u32> {
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

    /// The bytes [`Overlay::push`] may accept here, as a 256-bit set: those on which an
    /// open terminal's automaton moves on, or an expected one starts. A superset: a
    /// terminal they complete may still be refused by the parse.
    pub fn next_bytes(&self) -> [u64; 4] {
        let terms = &self.g.cfg.terminals;
        let mut set = [0u64; 4];
        let (row, in_top) = match self.top.rows.last() {
            Some(r) => (*r, true),
            None => match self.base.rows.last() {
                Some(r) => (*r, false),
                None => return set,
            },
        };
        let scans = if in_top { &self.top.scans } else { &self.base.scans };
        for sc in &scans[row.scans.0 as usize..row.scans.1 as usize] {
            let dfa = &terms[sc.term as usize].dfa;
            for b in 0..=255u8 {
                if dfa.next(sc.state, b) != DEAD {
                    set[(b >> 6) as usize] |= 1 << (b & 63);
                }
            }
        }
        if row.set != NONE {
            let (data, chart) = self.set(row.set);
            for e in &chart.expected[data.expected.0 as usize..data.expected.1 as usize] {
                let first = self.g.first_bytes(e.term);
                for (w, f) in set.iter_mut().zip(first) {
                    *w |= f;
                }
            }
        }
        set
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

/// The items of set `k` (into `sc.done`): the items waiting for the completed terminals
/// `(term, origin set)` advanced (or, for the initial set, the start's prediction), then
/// closed under prediction and completion (Leo memos for deterministic chains, `perm!`
/// lists checked as they complete).
fn derive_items(
    g: &EarleyGrammar,
    base: &Chart,
    top: &Chart,
    sc: &mut Scratch,
    completed: &[(u32, u32)],
    initial: bool,
    k: u32,
) -> Result<()> {
    sc.generation = sc.generation.wrapping_add(1);
    if sc.generation == 0 {
        sc.pred_mark.iter_mut().for_each(|m| *m = 0);
        sc.generation = 1;
    }
    sc.pending.clear();
    sc.seen.clear();
    sc.done.clear();
    if initial {
        predict(g, sc, g.cfg.start, k);
    }
    // Every derivation of an item counts, repeats too: an ambiguous grammar derives the
    // same item from many origins, and that is the work to bound.
    let mut work = 0usize;
    for &(term, origin) in completed {
        let ws = waiting(g, base, top, origin, term | (1 << 31));
        work += ws.len();
        advance_waiting(sc, ws);
    }
    sc.perm_new.clear();
    sc.perm_ids.clear();
    while let Some(it) = sc.pending.pop() {
        sc.done.push(it);
        work += 1;
        if work > g.max_items || sc.done.len() > g.max_items {
            return Err(too_many_items(g));
        }
        if work & 1023 == 0 {
            crate::util::interrupt::check_now()?;
        }
        let next = g.dr_next[it.dr as usize];
        if next == NONE {
            work += complete(g, base, top, sc, it);
            if work > g.max_items {
                return Err(too_many_items(g));
            }
        } else if next & (1 << 31) == 0 {
            predict(g, sc, next, k);
        }
    }
    Ok(())
}

/// Completes item `it` (its rule is done): the items waiting for its rule in its origin
/// set go on, through a Leo memo where there is one, or as a `perm!` list allows. Returns
/// the work done (items derived).
#[inline]
fn complete(g: &EarleyGrammar, base: &Chart, top: &Chart, sc: &mut Scratch, it: Item) -> usize {
    let lhs = g.dr_lhs[it.dr as usize];
    if let Some(perm) = g.perm_of(lhs) {
        return complete_list(g, perm, base, top, sc, it);
    }
    if let Some(topmost) = leo_item(base, top, it.origin, lhs) {
        if sc.seen.insert(topmost) {
            sc.pending.push(topmost);
        }
        return 0;
    }
    let ws = waiting(g, base, top, it.origin, lhs);
    advance_waiting(sc, ws);
    ws.len()
}

/// Queues the items `ws` with their dot moved past the symbol they waited for.
#[inline]
fn advance_waiting(sc: &mut Scratch, ws: &[Item]) {
    for w in ws {
        let a = Item { dr: w.dr + 1, origin: w.origin, aux: w.aux };
        if sc.seen.insert(a) {
            sc.pending.push(a);
        }
    }
}

/// The error of a set past `Limits::max_earley_items`.
fn too_many_items(g: &EarleyGrammar) -> Error {
    Error::LimitExceeded {
        limit: "max_earley_items",
        value: g.max_items,
        context: "one Earley set (items created or derived again while reading one byte)".to_string(),
    }
}
