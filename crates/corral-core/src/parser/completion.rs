//! A short completion of a parse: the fewest bytes that, appended, make the input a
//! sentence (a shortest-path search through the chain of waiting items).

use crate::util::hash::{HashMap, HashMapExt, HashSet, HashSetExt};

use super::*;
use crate::error::{Error, Result};
use crate::grammar::lower::Sym;

impl Chart {
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
}

/// The search behind [`Chart::completion`]: shortest paths (in bytes) from "symbol `sym`
/// was just read in set `k`" to acceptance, over the chain of waiting items.
pub(super) struct Completion<'c> {
    pub(super) g: &'c EarleyGrammar,
    pub(super) chart: &'c Chart,
    pub(super) empty: &'c Chart,
    pub(super) shortest: &'c crate::grammar::shortest::Shortest,
    /// List states met by the search (nodes name them by index), and their indices.
    pub(super) states: std::cell::RefCell<ListStates>,
    /// Per list nonterminal: its entries by cost (see [`Completion::finish`]).
    pub(super) orders: std::cell::RefCell<HashMap<u32, Vec<usize>>>,
}

/// The list states a completion search meets, and the index of each.
pub(super) type ListStates = (Vec<Vec<u64>>, HashMap<Vec<u64>, u32>);

/// A search node: symbol (raw) read in set, and for a `perm!` list the index of its
/// state in `Completion::states` (`FINISHED` once entries were added to finish it;
/// `NONE` for other symbols); `ACCEPT` is the goal.
pub(super) type Node = (u32, u32, u32);

pub(super) const ACCEPT: Node = (NONE, NONE, NONE);

pub(super) const FINISHED: u32 = NONE - 1;

/// How a completion starts: the rest of an open terminal, or the rest of a dotted rule.
pub(super) enum Head {
    Bytes(Vec<u8>),
    Rest(u32),
}

/// The symbol after the dot of a raw `dr_next` value.
pub(super) fn sym_of(raw: u32) -> Sym {
    if raw & (1 << 31) != 0 {
        Sym::t(raw & !(1 << 31))
    } else {
        Sym::n(raw)
    }
}

impl Completion<'_> {
    /// Length of the shortest bytes for the symbols from dotted rule `dr` to the end of
    /// its rule (saturating).
    pub(super) fn rest_len(&self, mut dr: u32) -> u64 {
        let mut len = 0u64;
        while self.g.dr_next[dr as usize] != NONE {
            len = len.saturating_add(self.shortest.length(sym_of(self.g.dr_next[dr as usize])));
            dr += 1;
        }
        len
    }

    /// Appends those bytes to `out`.
    pub(super) fn write_rest(&self, mut dr: u32, out: &mut Vec<u8>) {
        while self.g.dr_next[dr as usize] != NONE {
            self.shortest.write(self.g.cfg(), sym_of(self.g.dr_next[dr as usize]), out);
            dr += 1;
        }
    }

    /// Where producing the rest of item `it` leads: its rule completed in its origin set
    /// (for a list's production, with the list's state after its entry).
    pub(super) fn completed_by(&self, it: Item) -> Node {
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
    pub(super) fn entry_cost<'p>(&'p self, perm: &'p crate::grammar::perm::Perm) -> impl Fn(usize) -> u64 + 'p {
        let sep = perm.sep.map_or(0, |s| self.shortest.length(s));
        move |i| self.shortest.length(perm.entries[i]).saturating_add(sep)
    }

    /// The cheapest entries that finish the list of node `node`.
    pub(super) fn finish(&self, node: Node) -> Option<(u64, Vec<usize>)> {
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
    pub(super) fn edges(&self, node: Node) -> Vec<(u32, u64, Node)> {
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
    pub(super) fn write_finish(&self, node: Node, out: &mut Vec<u8>) {
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
    pub(super) fn solve(&self, starts: Vec<(Head, u64, Node)>, max_bytes: usize) -> Result<Option<Vec<u8>>> {
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
        let mut dist: HashMap<Node, (u64, u32, Node)> = HashMap::from_iter([(ACCEPT, (0, NONE, ACCEPT))]);
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
