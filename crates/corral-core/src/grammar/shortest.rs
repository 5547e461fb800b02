//! A short completion of a partial parse: bytes that, appended, make the input a
//! sentence. Used to finish generation gracefully and by the soundness tests.
//!
//! Costs are in bytes. From the current position, either an open terminal is finished
//! (its DFA's nearest accepting state) or an item's remaining symbols are produced (each
//! symbol's shortest string); then the item's rule is completed, which continues the item
//! that waited for it in the rule's origin set, and so on up to the start rule.

use crate::util::hash::{HashMap, HashMapExt};

use super::lower::Cfg;
use super::lower::Sym;
use crate::automata::product::bfs_path;
use crate::automata::{Dfa, DEAD};

/// Shortest strings of every symbol: terminals by BFS in their DFA; nonterminals by
/// Knuth's generalization of Dijkstra's algorithm over the productions, which gives each
/// nonterminal its shortest length and the production that achieves it. A nonterminal's
/// string is spelled out only when asked for (it can be far longer than the grammar).
#[derive(Debug)]
pub(crate) struct Shortest {
    terminal: Vec<Vec<u8>>,
    /// Per nonterminal: its shortest length in bytes (saturating; `u64::MAX`: none).
    length: Vec<u64>,
    /// Per nonterminal: the production of that length (for a `perm!` list, the index
    /// of the list among `Cfg::perms`, past the productions' ids).
    choice: Vec<u32>,
    /// Per `perm!` list: the entries of its shortest list, in order.
    plans: Vec<Vec<usize>>,
}

/// Shortest bytes leading from `state` to acceptance in `dfa`.
pub(crate) fn dfa_suffix(dfa: &Dfa, state: u32) -> Option<Vec<u8>> {
    let mut prev: HashMap<u32, (u32, u8)> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([state]);
    let mut seen = std::collections::HashSet::from([state]);
    while let Some(s) = queue.pop_front() {
        if dfa.is_accepting(s) {
            return Some(bfs_path(&prev, state, s));
        }
        // Prefer printable ASCII, so completions read well.
        let order = (0x20u8..0x7f).chain(0..0x20).chain(0x7f..=0xff);
        for b in order {
            let t = dfa.next(s, b);
            if t != DEAD && seen.insert(t) {
                prev.insert(t, (s, b));
                queue.push_back(t);
            }
        }
    }
    None
}

impl Shortest {
    pub(crate) fn new(cfg: &Cfg) -> Shortest {
        let terminal: Vec<Vec<u8>> =
            cfg.terminals.iter().map(|t| dfa_suffix(&t.dfa, t.dfa.start()).unwrap_or_default()).collect();
        let mut search = Knuth::new(cfg, &terminal);
        search.seed_productions();
        for pi in 0..cfg.perms.len() {
            if search.pending[pi] == 0 {
                search.push_list(pi);
            }
        }
        while let Some(std::cmp::Reverse((len, p))) = search.heap.pop() {
            search.settle(len, p);
        }
        let Knuth { length, choice, plans, .. } = search;
        Shortest { terminal, length, choice, plans }
    }

    /// The length of `s`'s shortest string (`u64::MAX` if it has none; saturating).
    pub(crate) fn length(&self, s: Sym) -> u64 {
        if s.is_terminal() {
            self.terminal[s.index() as usize].len() as u64
        } else {
            self.length[s.index() as usize]
        }
    }

    /// Appends `s`'s shortest string to `out` (nothing if it has none), expanding
    /// nonterminals with an explicit stack: the derivation can be as deep as the grammar.
    pub(crate) fn write(&self, cfg: &Cfg, s: Sym, out: &mut Vec<u8>) {
        let mut stack = vec![s];
        while let Some(s) = stack.pop() {
            if s.is_terminal() {
                out.extend_from_slice(&self.terminal[s.index() as usize]);
            } else if let Some(&p) = self.choice.get(s.index() as usize).filter(|&&p| p != u32::MAX) {
                match (p as usize).checked_sub(cfg.productions.len()) {
                    None => stack.extend(cfg.productions[p as usize].rhs.iter().rev().copied()),
                    Some(pi) => {
                        let perm = &cfg.perms[pi];
                        for (k, &i) in self.plans[pi].iter().enumerate().rev() {
                            stack.push(perm.entries[i]);
                            if k > 0 {
                                stack.extend(perm.sep);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Knuth's generalization of Dijkstra's algorithm over the productions (see
/// [`Shortest`]): a production is settled once all its nonterminals are, in order of
/// length; a `perm!` list, once its required entries are.
struct Knuth<'c> {
    cfg: &'c Cfg,
    terminal: &'c [Vec<u8>],
    num_prods: u32,
    /// Per production: its length so far and its nonterminals not yet settled.
    partial: Vec<u64>,
    missing: Vec<u32>,
    /// Per nonterminal: the productions that use it.
    uses: Vec<Vec<u32>>,
    /// Candidates by length: a production's id, or `num_prods` + a list's index.
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
    /// Per nonterminal: the lists it is an entry or separator of.
    perm_uses: Vec<Vec<u32>>,
    /// Per nonterminal: is it a required entry (of its one list: entries are fresh rules)?
    required_entry: Vec<bool>,
    /// Per list: its required entries not yet settled, and whether it is in the heap.
    pending: Vec<usize>,
    pushed: Vec<bool>,
    length: Vec<u64>,
    choice: Vec<u32>,
    plans: Vec<Vec<usize>>,
}

impl<'c> Knuth<'c> {
    fn new(cfg: &'c Cfg, terminal: &'c [Vec<u8>]) -> Knuth<'c> {
        let n = cfg.nonterminals.len();
        let mut perm_uses: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut required_entry = vec![false; n];
        for (pi, perm) in cfg.perms.iter().enumerate() {
            for s in perm.entries.iter().chain(perm.sep.iter()).filter(|s| !s.is_terminal()) {
                perm_uses[s.index() as usize].push(pi as u32);
            }
            for (e, _) in perm.entries.iter().zip(&perm.required).filter(|(e, &r)| r && !e.is_terminal()) {
                required_entry[e.index() as usize] = true;
            }
        }
        // A list's first candidate is its best (entries settle cheapest first, and the
        // separator only adds), so it is looked for only until found, and only once every
        // required entry is known: one pass over the entries per list, not per entry.
        let pending = cfg
            .perms
            .iter()
            .map(|p| (0..p.entries.len()).filter(|&i| p.required[i] && !p.entries[i].is_terminal()).count())
            .collect();
        Knuth {
            cfg,
            terminal,
            num_prods: cfg.productions.len() as u32,
            partial: Vec::with_capacity(cfg.productions.len()),
            missing: Vec::with_capacity(cfg.productions.len()),
            uses: vec![Vec::new(); n],
            heap: std::collections::BinaryHeap::new(),
            perm_uses,
            required_entry,
            pending,
            pushed: vec![false; cfg.perms.len()],
            length: vec![u64::MAX; n],
            choice: vec![u32::MAX; n],
            plans: vec![Vec::new(); cfg.perms.len()],
        }
    }

    /// Each production's terminal length and unsettled nonterminals; those with none are
    /// candidates now. A `perm!` list's own productions would give it lists that break its
    /// rules: its shortest list comes from its entries' lengths instead.
    fn seed_productions(&mut self) {
        let mut is_list = vec![false; self.cfg.nonterminals.len()];
        for perm in &self.cfg.perms {
            is_list[perm.list as usize] = true;
        }
        for (p, prod) in self.cfg.productions.iter().enumerate() {
            if is_list[prod.lhs as usize] {
                self.partial.push(u64::MAX);
                self.missing.push(u32::MAX);
                continue;
            }
            let mut len = 0u64;
            let mut miss = 0u32;
            for sym in &prod.rhs {
                if sym.is_terminal() {
                    len = len.saturating_add(self.terminal[sym.index() as usize].len() as u64);
                } else {
                    miss += 1;
                    self.uses[sym.index() as usize].push(p as u32);
                }
            }
            self.partial.push(len);
            self.missing.push(miss);
            if miss == 0 {
                self.heap.push(std::cmp::Reverse((len, p as u32)));
            }
        }
    }

    /// List `pi`'s cheapest valid list from the lengths known so far: (length, entries).
    fn candidate(&self, pi: usize) -> Option<(u64, Vec<usize>)> {
        let perm = &self.cfg.perms[pi];
        let known = |s: Sym| {
            let len =
                if s.is_terminal() { self.terminal[s.index() as usize].len() as u64 } else { self.length[s.index() as usize] };
            (len != u64::MAX).then_some(len)
        };
        perm.cheapest_list(&|i| known(perm.entries[i]), perm.sep.and_then(known))
    }

    /// Makes list `pi` a candidate, if it has a valid list yet.
    fn push_list(&mut self, pi: usize) {
        if let Some((len, _)) = self.candidate(pi) {
            self.heap.push(std::cmp::Reverse((len, self.num_prods + pi as u32)));
            self.pushed[pi] = true;
        }
    }

    /// Settles candidate `p` of length `len` (unless its nonterminal is settled already),
    /// and makes candidates of what now has every nonterminal settled.
    fn settle(&mut self, len: u64, p: u32) {
        let lhs = match p.checked_sub(self.num_prods) {
            None => self.cfg.productions[p as usize].lhs as usize,
            Some(pi) => self.cfg.perms[pi as usize].list as usize,
        };
        if self.length[lhs] != u64::MAX {
            return;
        }
        self.length[lhs] = len;
        self.choice[lhs] = p;
        if let Some(pi) = p.checked_sub(self.num_prods) {
            self.plans[pi as usize] = self.candidate(pi as usize).map(|c| c.1).unwrap_or_default();
        }
        for k in 0..self.perm_uses[lhs].len() {
            let pi = self.perm_uses[lhs][k] as usize;
            if self.required_entry[lhs] {
                self.pending[pi] -= 1;
            }
            if !self.pushed[pi] && self.pending[pi] == 0 {
                self.push_list(pi);
            }
        }
        for k in 0..self.uses[lhs].len() {
            let q = self.uses[lhs][k] as usize;
            self.partial[q] = self.partial[q].saturating_add(len);
            self.missing[q] -= 1;
            if self.missing[q] == 0 {
                self.heap.push(std::cmp::Reverse((self.partial[q], q as u32)));
            }
        }
    }
}
