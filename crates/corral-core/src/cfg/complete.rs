//! A short completion of a partial parse: bytes that, appended, make the input a
//! sentence. Used to finish generation gracefully and by the soundness tests.
//!
//! Costs are in bytes. From the current position, either an open terminal is finished
//! (its DFA's nearest accepting state) or an item's remaining symbols are produced (each
//! symbol's shortest string); then the item's rule is completed, which continues the item
//! that waited for it in the rule's origin set, and so on up to the start rule.

use std::collections::HashMap;

use super::earley::EarleyGrammar;
use super::lower::Sym;
use crate::dfa::{bfs_path, Dfa, DEAD};

#[derive(Debug)]
/// Shortest strings of every symbol (terminals by BFS in their DFA, nonterminals by a
/// fixpoint over productions).
pub(crate) struct Shortest {
    terminal: Vec<Vec<u8>>,
    nonterminal: Vec<Option<Vec<u8>>>,
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
    pub(crate) fn new(g: &EarleyGrammar) -> Shortest {
        let cfg = g.cfg();
        let terminal: Vec<Vec<u8>> =
            cfg.terminals.iter().map(|t| dfa_suffix(&t.dfa, t.dfa.start()).unwrap_or_default()).collect();
        let mut nonterminal: Vec<Option<Vec<u8>>> = vec![None; cfg.nonterminals.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for p in &cfg.productions {
                let mut s = Vec::new();
                let mut ok = true;
                for sym in &p.rhs {
                    if sym.is_terminal() {
                        s.extend_from_slice(&terminal[sym.index() as usize]);
                    } else if let Some(x) = &nonterminal[sym.index() as usize] {
                        s.extend_from_slice(x);
                    } else {
                        ok = false;
                        break;
                    }
                }
                let lhs = p.lhs as usize;
                if ok && nonterminal[lhs].as_ref().is_none_or(|cur| s.len() < cur.len()) {
                    nonterminal[lhs] = Some(s);
                    changed = true;
                }
            }
        }
        Shortest { terminal, nonterminal }
    }

    pub(crate) fn symbol(&self, s: Sym) -> &[u8] {
        if s.is_terminal() {
            &self.terminal[s.index() as usize]
        } else {
            self.nonterminal[s.index() as usize].as_deref().unwrap_or(&[])
        }
    }
}
