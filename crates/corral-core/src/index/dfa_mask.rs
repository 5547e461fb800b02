//! Masks of a regular grammar: per DFA state, a walk of the token trie (or of a
//! string-safe slice's rest, the slice's part computed or taken from a recent state's
//! mask), computed the first time a matcher stands there.

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::compiled::{CompiledGrammar, Engine};
use super::lexer_mask::{slice_part, Ends, MAX_SIBLING_PAIRS};
use super::state_mask::StateMask;
use super::string_safe::string_safe_slice_mask;
use super::walker::DfaWalker;
use crate::automata::Dfa;

/// How many recent states whose masks took a string-safe slice a new state is compared
/// with (see `CompiledGrammar::state_slice_sibling`).
const SLICED_KEPT: usize = 2;

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
        let Engine::Dfa { dfa, sliced, .. } = &self.engine else {
            unreachable!("compute_mask is only called on regular grammars")
        };
        let slices = self.vocab.string_safe_slices();
        // Inside a long count every token reaches a new state: one that reads the slice's
        // texts as a recent state did keeps the same slice tokens (see
        // `lexer_mask::from_slice_sibling`), and only the slice's rest is walked.
        if let Some((i, bits)) = self.state_slice_sibling(dfa, sliced, state) {
            let m = self.walk_dfa_mask(dfa, state, &slices[i].rest, bits);
            Self::note_sliced(sliced, state, i);
            return m;
        }
        // Inside free text (a JSON string), most of the vocabulary is one precomputed
        // slice: walk only the rest of the trie.
        match string_safe_slice_mask(&self.vocab, dfa, state, Ends::NONE) {
            Some(sm) => {
                let m = self.walk_dfa_mask(dfa, state, &sm.slice.rest, sm.bits);
                if let Some(i) = slices.iter().position(|x| std::ptr::eq(x, sm.slice)) {
                    Self::note_sliced(sliced, state, i);
                }
                m
            }
            None => self.walk_dfa_mask(dfa, state, self.vocab.trie(), vec![0u32; self.vocab.mask_words()]),
        }
    }

    /// For a recent state whose mask took string-safe slice `i` and that reads every text
    /// of the slice's bound as `state` does: `i`, and `state`'s slice part (the sibling's
    /// mask within the slice).
    pub(super) fn state_slice_sibling(
        &self,
        dfa: &Dfa,
        sliced: &Mutex<Vec<(u32, usize)>>,
        state: u32,
    ) -> Option<(usize, Vec<u32>)> {
        let recent: Vec<(u32, usize)> = sliced.lock().map(|r| r.clone()).unwrap_or_default();
        let depth = self.vocab.trie().max_depth();
        let slices = self.vocab.string_safe_slices();
        let (sibling, i) =
            recent.into_iter().rev().find(|&(s, i)| dfa.same_within(state, s, slices[i].max_len, MAX_SIBLING_PAIRS))?;
        let Engine::Dfa { masks, .. } = &self.engine else { return None };
        let mask = masks[dfa.state_slot(sibling, depth)].get()?;
        Some((i, slice_part(&self.vocab, mask, i)))
    }

    /// Keeps `state` (whose mask took slice `i`) among the latest few such states.
    fn note_sliced(sliced: &Mutex<Vec<(u32, usize)>>, state: u32, i: usize) {
        if let Ok(mut recent) = sliced.lock() {
            if recent.len() == SLICED_KEPT {
                recent.remove(0);
            }
            recent.push((state, i));
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
