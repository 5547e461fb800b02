//! The recognizer's tables: a normalized grammar as dotted rules, with what each dotted
//! rule expects next, its rank, its `perm!` list, and the bytes each terminal may start
//! with.

use super::*;
use crate::automata::DEAD;
use crate::error::Result;
use crate::grammar::lower::Cfg;
use crate::grammar::Sym;
use crate::limits::Limits;
use std::sync::Arc;

/// "No set here" / "complete item" marker.
pub(super) const NONE: u32 = u32::MAX;

/// An Earley item: a dotted rule, the set where it started, and for an item of a
/// `perm!` list's production the list's state before its entry (an offset into the
/// chart's `perm` arena; `NONE`: the empty list, and for every other item).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Item {
    pub(super) dr: u32,
    pub(super) origin: u32,
    pub(super) aux: u32,
}

/// In `dr_perm`: the dotted rule is `L → • L S E_j` (it waits for a list to add to).
pub(super) const ADD_AT_START: u32 = 1 << 31;

/// The grammar with the tables the recognizer needs.
#[derive(Debug)]
pub struct EarleyGrammar {
    pub(super) cfg: Arc<Cfg>,
    /// Per dotted rule: the symbol after the dot (`NONE` when complete).
    pub(super) dr_next: Vec<u32>,
    /// Per dotted rule: its production's left-hand side.
    pub(super) dr_lhs: Vec<u32>,
    /// Per nonterminal: the dot-0 dotted rules of its own productions.
    pub(super) own_rules: Vec<Vec<u32>>,
    /// Per nonterminal: the distinct nonterminals its productions start with (predicting
    /// it predicts them too). Closed at run time, not stored closed: a closure table is
    /// quadratic in the grammar for long chains and cycles of rules.
    pub(super) left_corners: Vec<Vec<u32>>,
    pub(super) max_items: usize,
    pub(super) max_chart_bytes: usize,
    /// Per terminal: the bytes that can start it (a 256-bit set).
    pub(super) first_bytes: Vec<[u64; 4]>,
    /// Per dotted rule: its rank in (next symbol, dotted rule) order, so that a set's
    /// items sort by one integer key.
    pub(super) dr_rank: Vec<u32>,
    /// Per dotted rule of a `perm!` list's production: the entry it adds (with
    /// [`ADD_AT_START`] on `L → • L S E_j`); `NONE` for other rules.
    pub(super) dr_perm: Vec<u32>,
    /// Per nonterminal: the index of the `perm!` it is the list of, or `NONE`.
    pub(super) nt_perm: Vec<u32>,
    /// Per nonterminal: is it the entry of a `perm!` list whose occurrences must be
    /// distinct strings or values (see [`crate::grammar::distinct_keys`])?
    pub(super) distinct_entry: Vec<Distinct>,
    /// Is some nonterminal such an entry?
    any_distinct_entry: bool,
    /// Per nonterminal: is it predicted by a JSON region's entry ([`Distinct::Json`]),
    /// directly or through other left corners? (Empty without regions.)
    region_closure: Vec<bool>,
    /// Per dotted rule: is the dot at the start (a predicted item)?
    pub(super) dr_at_start: Vec<bool>,
    /// Per terminal: does the output end wherever it ends (no production lets anything
    /// follow it)?
    pub(super) ends_output: Vec<bool>,
    /// Per terminal: the bytes that can start what follows it (see `parser::follow`).
    pub(super) follow_bytes: Vec<[u64; 4]>,
}

/// Per terminal: can nothing follow it? A symbol is followed when it is not last in some
/// production, or last in one of a followed nonterminal (the start is not followed):
/// spread from the nonterminals found followed, each once.
fn ends_output(cfg: &Cfg) -> Vec<bool> {
    let mut nt_followed = vec![false; cfg.nonterminals.len()];
    let mut t_followed = vec![false; cfg.terminals.len()];
    let mut last_of: Vec<Vec<Sym>> = vec![Vec::new(); cfg.nonterminals.len()];
    let mut found: Vec<u32> = Vec::new();
    let mut mark = |s: Sym, found: &mut Vec<u32>| {
        if s.is_terminal() {
            t_followed[s.index() as usize] = true;
        } else if !std::mem::replace(&mut nt_followed[s.index() as usize], true) {
            found.push(s.index());
        }
    };
    for p in &cfg.productions {
        if let Some((&last, before)) = p.rhs.split_last() {
            before.iter().for_each(|&s| mark(s, &mut found));
            last_of[p.lhs as usize].push(last);
        }
    }
    while let Some(a) = found.pop() {
        for &s in &last_of[a as usize] {
            mark(s, &mut found);
        }
    }
    t_followed.iter().map(|f| !f).collect()
}

impl EarleyGrammar {
    /// Precomputes the recognizer's tables.
    pub fn new(cfg: impl Into<Arc<Cfg>>, limits: &Limits) -> EarleyGrammar {
        let cfg: Arc<Cfg> = cfg.into();
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
        // (From a joined terminal's facts: it is built when first read.)
        let first_bytes: Vec<[u64; 4]> = cfg.terminals.iter().map(|t| t.dfa.first_bytes()).collect();
        let (dr_perm, nt_perm) = perm_tables(&cfg, &first_dr, num_dotted);
        let mut distinct_entry = vec![Distinct::No; cfg.nonterminals.len()];
        for perm in &cfg.perms {
            for (e, &d) in perm.entries.iter().zip(&perm.distinct).filter(|(e, d)| d.any() && !e.is_terminal()) {
                distinct_entry[e.index() as usize] = d;
            }
        }
        let mut dr_at_start = vec![false; num_dotted];
        for &d in &first_dr {
            dr_at_start[d as usize] = true;
        }
        let dr_rank = rank_by_next(&dr_next, n, cfg.terminals.len());
        let ends_output = ends_output(&cfg);
        let follow_bytes = super::follow::follow_bytes(&cfg, &first_bytes);
        let region_closure = left_closure(&left_corners, |nt| distinct_entry[nt] == Distinct::Json);
        EarleyGrammar {
            ends_output,
            follow_bytes,
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
            any_distinct_entry: distinct_entry.iter().any(|d| d.any()),
            distinct_entry,
            region_closure,
            dr_at_start,
        }
    }

    /// Where `items` (set `k`'s, `expected` its expected terminals over `all`, the items of
    /// its chart) wait for a JSON region ([`Distinct::Json`]) and `scans` are the terminals
    /// still being read there: does byte `b` start that region only? Not when a scan goes
    /// on with `b`, or an item outside what the region's entry predicts waits for a
    /// terminal that starts with it: then the grammar also allows other text there (free
    /// text that may hold a `{`), and the byte may be that text.
    pub(super) fn starts_region_only(
        &self,
        k: u32,
        items: &[Item],
        expected: &[Expected],
        all: &[Item],
        scans: &[Scan],
        b: u8,
    ) -> bool {
        if !self.awaits_distinct_entry(items, Distinct::Json) {
            return false;
        }
        let reads = |term: u32| self.first_bytes[term as usize][(b >> 6) as usize] >> (b & 63) & 1 == 1;
        let terms = &self.cfg.terminals;
        if scans.iter().any(|sc| terms[sc.term as usize].dfa.next(sc.state, b) != DEAD) {
            return false;
        }
        expected.iter().filter(|e| reads(e.term)).all(|e| {
            all[e.items.0 as usize..e.items.1 as usize]
                .iter()
                .all(|it| it.origin == k && self.region_closure.get(self.dr_lhs[it.dr as usize] as usize) == Some(&true))
        })
    }

    /// The `perm!` whose list is nonterminal `nt`, if any.
    #[inline]
    pub(crate) fn perm_of(&self, nt: u32) -> Option<&crate::grammar::perm::Perm> {
        match self.nt_perm[nt as usize] {
            NONE => None,
            i => Some(&self.cfg.perms[i as usize]),
        }
    }

    /// Does the grammar have a `perm!` list whose entries must be distinct strings or
    /// values?
    pub fn has_distinct_lists(&self) -> bool {
        self.distinct_entry.iter().any(|d| d.keeps_distinct())
    }

    /// Does the grammar have an entry checked at run time of any kind (distinct, or a
    /// regular expression)? Only then may the parser be asked where one starts.
    pub fn has_checked_entries(&self) -> bool {
        self.any_distinct_entry
    }

    /// Does the grammar have strings that must be regular expressions (see
    /// [`crate::grammar::regex_text`])?
    pub fn has_regex_texts(&self) -> bool {
        self.distinct_entry.contains(&Distinct::Regex)
    }

    /// Does some terminal have a budget in tokens (see [`crate::grammar::lower::Terminal`])?
    pub fn has_token_budgets(&self) -> bool {
        self.cfg.terminals.iter().any(|t| t.token_budget.is_some())
    }

    /// Does the grammar have a `perm!` list whose entries must be distinct values?
    pub fn has_value_lists(&self) -> bool {
        self.distinct_entry.iter().any(|d| d.is_values())
    }

    /// Do `items` (one Earley set's) wait for the entry of a distinct list of `kind`?
    pub(super) fn awaits_distinct_entry(&self, items: &[Item], kind: Distinct) -> bool {
        self.awaited_entries(items).any(|d| d == kind)
    }

    /// The kinds of first item of the arrays of distinct values that `items` (one Earley
    /// set's) wait for (none if they wait for no such array).
    pub(super) fn awaited_value_lists(&self, items: &[Item]) -> ItemStarts {
        self.awaited_entries(items).fold(ItemStarts::NONE, |acc, d| match d {
            Distinct::Values(starts) => acc.or(starts),
            _ => acc,
        })
    }

    /// The checked entries that `items` wait for, one per item that waits for one.
    fn awaited_entries<'s>(&'s self, items: &'s [Item]) -> impl Iterator<Item = Distinct> + 's {
        items.iter().filter_map(|it| {
            let next = self.dr_next[it.dr as usize];
            (next != NONE && next & (1 << 31) == 0).then(|| self.distinct_entry[next as usize]).filter(|d| d.any())
        })
    }

    /// Does the output end wherever terminal `term` ends (nothing can follow it)?
    pub(crate) fn ends_output(&self, term: u32) -> bool {
        self.ends_output[term as usize]
    }

    /// The bytes that can come right after terminal `term` ends (a 256-bit set; empty
    /// where nothing can follow it).
    pub(crate) fn follow_bytes(&self, term: u32) -> &[u64; 4] {
        &self.follow_bytes[term as usize]
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

/// Each dotted rule's rank in the order (next symbol, dotted rule), the symbols ordered as
/// their raw values are (nonterminals, terminals, then none): a counting sort, linear in
/// the dotted rules (a comparison sort of them was most of a large grammar's compile).
fn rank_by_next(dr_next: &[u32], nonterminals: usize, terminals: usize) -> Vec<u32> {
    let bucket = |next: u32| -> usize {
        if next == NONE {
            nonterminals + terminals
        } else if next >= Sym::t(0).raw() {
            nonterminals + (next - Sym::t(0).raw()) as usize
        } else {
            next as usize
        }
    };
    let mut start = vec![0u32; nonterminals + terminals + 2];
    for &next in dr_next {
        start[bucket(next) + 1] += 1;
    }
    for b in 1..start.len() {
        start[b] += start[b - 1];
    }
    let mut rank = vec![0u32; dr_next.len()];
    for (dr, &next) in dr_next.iter().enumerate() {
        let b = bucket(next);
        rank[dr] = start[b];
        start[b] += 1;
    }
    rank
}

/// Which entry each dotted rule of a `perm!` list's production adds, and which list each
/// nonterminal is (see `EarleyGrammar::dr_perm`, `nt_perm`).
pub(super) fn perm_tables(cfg: &Cfg, first_dr: &[u32], num_dotted: usize) -> (Vec<u32>, Vec<u32>) {
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
pub(super) fn perm_state<'c>(base: &'c Chart, top: &'c Chart, new: &'c [u64], id: u32, width: usize) -> &'c [u64] {
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

/// Per nonterminal: is it one of `roots`, or a left corner of one, transitively? (All
/// false, and empty, when no nonterminal is a root.)
fn left_closure(left_corners: &[Vec<u32>], root: impl Fn(usize) -> bool) -> Vec<bool> {
    let mut todo: Vec<usize> = (0..left_corners.len()).filter(|&nt| root(nt)).collect();
    if todo.is_empty() {
        return Vec::new();
    }
    let mut seen = vec![false; left_corners.len()];
    while let Some(nt) = todo.pop() {
        if std::mem::replace(&mut seen[nt], true) {
            continue;
        }
        todo.extend(left_corners[nt].iter().map(|&c| c as usize).filter(|&c| !seen[c]));
    }
    seen
}
