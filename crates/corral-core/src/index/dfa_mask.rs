//! Masks of a regular grammar: per DFA state, a walk of the token trie (or of a
//! string-safe slice's rest), computed the first time a matcher stands there.

use std::sync::atomic::Ordering;

use super::compiled::{CompiledGrammar, Engine};
use super::state_mask::StateMask;
use super::string_safe::string_safe_slice_mask;
use super::walker::DfaWalker;
use crate::automata::Dfa;

impl CompiledGrammar {
    /// The mask of a live DFA state, computed on first use.
    pub(crate) fn state_mask(&self, state: u32) -> &StateMask {
        let Engine::Dfa { masks, .. } = &self.engine else { unreachable!("state_mask is only called on regular grammars") };
        // (Deep in a long count, states of one row share a mask: see `equivalent_within`.)
        let depth = self.vocab.trie().max_depth();
        let state = self.dfa().map_or(state, |d| d.equivalent_within(state, depth));
        let slot = self.dfa().map_or(state as usize, |d| d.state_slot(state, depth));
        masks[slot].get_or_init(|| {
            let m = self.compute_mask(state);
            self.mask_bytes.fetch_add(m.memory_bytes(), Ordering::Relaxed);
            m
        })
    }

    /// Walks the token trie from `state` (Algorithm 4 with shared prefixes walked once and
    /// dead subtrees skipped).
    fn compute_mask(&self, state: u32) -> StateMask {
        let Engine::Dfa { dfa, .. } = &self.engine else { unreachable!("compute_mask is only called on regular grammars") };
        // Inside free text (a JSON string), most of the vocabulary is one precomputed
        // slice: walk only the rest of the trie.
        match string_safe_slice_mask(&self.vocab, dfa, state, true) {
            Some((s, bits)) => self.walk_dfa_mask(dfa, state, &s.rest, bits),
            None => self.walk_dfa_mask(dfa, state, self.vocab.trie(), vec![0u32; self.vocab.mask_words()]),
        }
    }

    /// `bits` plus the tokens of `trie` that `dfa` can read from `state`, plus EOS if
    /// `state` accepts.
    fn walk_dfa_mask(&self, dfa: &Dfa, state: u32, trie: &crate::vocab::TokenTrie, mut bits: Vec<u32>) -> StateMask {
        let mut walker = DfaWalker::<false>::new(dfa, state, trie.max_depth());
        trie.walk(&mut walker, |t| bits[(t >> 5) as usize] |= 1 << (t & 31));
        if dfa.is_accepting(state) {
            for &e in self.vocab.eos_ids() {
                bits[(e >> 5) as usize] |= 1 << (e & 31);
            }
        }
        StateMask::from_bits(bits)
    }

    /// [`CompiledGrammar::compute_mask`] by a walk of the whole trie (a reference for tests).
    pub(crate) fn compute_mask_full(&self, state: u32) -> StateMask {
        let Engine::Dfa { dfa, .. } = &self.engine else { unreachable!("compute_mask_full is only called on regular grammars") };
        self.walk_dfa_mask(dfa, state, self.vocab.trie(), vec![0u32; self.vocab.mask_words()])
    }
}
