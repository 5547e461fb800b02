//! A parse's canonical state key: the open scans and the Earley items they reach,
//! renumbered, so that equal keys mean equal continuations and a mask computed for one
//! parse serves every parse with the same key.

use super::*;
use crate::util::hash::FastMap;

/// The maps a state key is made with (see [`Chart::state_key`]).
#[derive(Default)]
pub(super) struct KeyScratch {
    pub(super) canon: SmallMap<u32>,
    pub(super) queue: Vec<u32>,
    pub(super) aux_canon: SmallMap<u32>,
    pub(super) groups: SmallMap<(u32, u32)>,
}

thread_local! {
    static KEY_SCRATCH: std::cell::RefCell<KeyScratch> = std::cell::RefCell::new(KeyScratch::default());
}

/// Numbers keys in order of first sight: a list while small (a state key meets a few
/// sets; hashing each costs more than looking), a hash map beyond.
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
    pub(super) fn state_key_with(
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
}
