//! Lexer-level masks: the tokens an open terminal can read without ending.
//!
//! At a position in a context-free parse, a token is allowed if its bytes continue one of
//! the terminals being read (its DFA stays alive to the token's end), or if a terminal
//! ends inside the token and the parser continues from there. The first part depends only
//! on the (terminal, DFA state) pair, not on the rest of the parse, so it is computed once
//! per pair and cached ([`LexMask`]); a position's lexer mask is the union over its open
//! pairs. The walk also records the trie nodes where the terminal may end
//! ("completions"): only the subtrees below those nodes need the parser.
//!
//! A new state's mask may also be taken in part from a cached one's (see [`derive`],
//! [`from_slice_sibling`] and [`from_depth_sibling`]): states that read the short tokens
//! alike share that part, and only the rest is walked.

use crate::automata::Dfa;
pub(crate) use crate::index::ends::Ends;
use crate::index::state_mask::TokenCollector;
use crate::index::string_safe::string_safe_slice_mask;
use crate::index::walker::DfaWalker;
use crate::vocab::{ByteRecognizer, TokenTrie, Vocabulary};

/// The lexer part of a mask for one open (terminal, DFA state) pair.
#[derive(Debug)]
pub(crate) struct LexMask {
    /// Tokens read entirely inside the terminal.
    pub(crate) tokens: crate::index::state_mask::StateMask,
    /// Trie nodes where the terminal may end (its DFA accepts there) with a child that may
    /// follow it (see [`Ends`]): below them the parser goes on.
    pub(crate) completions: Vec<u32>,
    /// The string-safe slice (its index in [`Vocabulary::string_safe_slices`]) whose
    /// tokens this mask took without a trie walk: its tokens here are exactly those the
    /// state keeps alive, and (where completions are recorded) none of them ends the
    /// terminal. None for a mask found otherwise, or where the terminal may end inside a
    /// slice token.
    pub(crate) slice: Option<usize>,
    /// The number of `completions` (sorted) among the lists of the grammar's cached lexer
    /// masks, equal lists sharing one (see [`LexCache::number_completions`]): what the
    /// parser reads below those nodes is cached under it. [`UNNUMBERED`] until cached.
    pub(crate) completions_number: u32,
}

/// [`LexMask::completions_number`] of a mask not cached (yet).
pub(crate) const UNNUMBERED: u32 = u32::MAX;

impl LexMask {
    pub(crate) fn memory_bytes(&self) -> usize {
        self.tokens.memory_bytes() + self.completions.len() * 4
    }
}

/// What a terminal T reads below a set of trie nodes: the tokens read inside T, and the
/// nodes where T may end (where the parser goes on).
#[derive(Debug)]
pub(crate) struct AfterEnd {
    pub(crate) tokens: crate::index::state_mask::StateMask,
    pub(crate) ends: Vec<u32>,
}

/// Computes the lexer mask of DFA `dfa` standing in `state`, recording the nodes `ends`
/// says where the terminal may end: a walk of the whole trie, or, where a string-safe slice
/// applies (free text, such as inside a JSON string), the slice's tokens the state allows
/// plus a walk of the rest (see [`crate::index::string_safe::string_safe_slice_mask`]).
/// Without ends to record (the free text that ends an agent's turn), a slice applies even
/// where the terminal accepts at every byte.
pub(crate) fn compute(vocab: &Vocabulary, dfa: &Dfa, state: u32, ends: Ends) -> LexMask {
    // Where ends are recorded, a slice token in which the terminal may end is read: its
    // end needs the parser there.
    if let Some(sm) = string_safe_slice_mask(vocab, dfa, state, ends) {
        // (The slice is one of the vocabulary's: its index is always found.)
        if let Some(index) = vocab.string_safe_slices().iter().position(|s| std::ptr::eq(s, sm.slice)) {
            let mut mask = with_rest_walked(vocab, dfa, state, index, sm.bits, ends);
            if !sm.ends.is_empty() {
                // The terminal may end inside slice tokens: a sibling could not borrow
                // the slice's part alone.
                mask.completions.extend(sm.ends);
                mask.completions.sort_unstable();
                mask.completions.dedup();
                mask.slice = None;
            }
            return mask;
        }
    }
    compute_full(vocab.trie(), dfa, state, vocab.mask_words(), ends)
}

/// The lexer mask of `dfa` in `state` from `bits`, the tokens of string-safe slice
/// `slice` the state keeps alive: the slice's rest trie is walked for the others.
fn with_rest_walked(vocab: &Vocabulary, dfa: &Dfa, state: u32, slice: usize, mut bits: Vec<u32>, ends: Ends) -> LexMask {
    let trie = vocab.trie();
    let rest = &vocab.string_safe_slices()[slice];
    let mut walker = DfaWalker::<true>::new(dfa, state, rest.rest.max_depth());
    let mut completions = Vec::new();
    rest.rest.walk_nodes(0, &mut walker, |w, node, tokens| {
        for &t in tokens {
            bits[(t >> 5) as usize] |= 1 << (t & 31);
        }
        let full = rest.rest_to_full[node as usize];
        if w.accepting && ends.keeps(trie, full) {
            completions.push(full);
        }
    });
    LexMask {
        tokens: crate::index::state_mask::StateMask::from_bits(bits),
        completions,
        slice: Some(slice),
        completions_number: UNNUMBERED,
    }
}

/// Most pairs of states a slice-sibling comparison ([`slice_sibling_agrees`], and the
/// regular grammars' in `index::dfa_mask`) meets before it gives up: a counted
/// string's check meets a few per byte of the slice's bound (at most the UTF-8 states of
/// a character), and one that fails this late would have cost about what it saves.
pub(crate) const MAX_SIBLING_PAIRS: usize = 1024;

/// Does `state` read the tokens of `sibling`'s string-safe slice as the sibling's state
/// does (so that [`from_slice_sibling`] applies)?
pub(crate) fn slice_sibling_agrees(vocab: &Vocabulary, dfa: &Dfa, state: u32, sibling_state: u32, sibling: &LexMask) -> bool {
    sibling.slice.is_some_and(|i| dfa.same_within(state, sibling_state, vocab.string_safe_slices()[i].max_len, MAX_SIBLING_PAIRS))
}

/// The lexer mask of `dfa` in `state` from a sibling's whose state reads every text of the
/// sibling's slice bound alike (see [`Dfa::same_within`]): the two keep the same slice
/// tokens alive, and neither ends inside one, so the slice's part is the sibling's and
/// only the slice's rest trie is walked. Inside a long counted string every token
/// reaches a new state, and this is its first mask's cost.
///
/// `ends`: as for [`compute`]; `sibling` must have been computed the same way.
pub(crate) fn from_slice_sibling(vocab: &Vocabulary, dfa: &Dfa, state: u32, sibling: &LexMask, ends: Ends) -> LexMask {
    let slice = sibling.slice.expect("a slice sibling took its mask from a slice");
    with_rest_walked(vocab, dfa, state, slice, slice_part(vocab, &sibling.tokens, slice), ends)
}

/// The lexer mask of `dfa` in `state` from a sibling's whose state reads every text of up
/// to `depth` bytes alike (see [`Dfa::agreeing_depth`]): the tokens of at most `depth`
/// bytes, and the nodes no deeper where the terminal may end, are the sibling's; only the
/// trie's paths to longer tokens are walked. Inside a counted character class (a user
/// name, a domain label: no string-safe slice applies) two states far from the bound agree
/// over more bytes than nearly every token the class allows holds.
///
/// `ends`: as for [`compute`]; `sibling` must have been computed the same way.
pub(crate) fn from_depth_sibling(
    vocab: &Vocabulary,
    dfa: &Dfa,
    state: u32,
    sibling: &LexMask,
    depth: usize,
    ends: Ends,
) -> LexMask {
    let trie = vocab.trie();
    let mut bits = vec![0u32; vocab.mask_words()];
    sibling.tokens.write(&mut bits);
    for &t in trie.tokens_longer_than(depth) {
        bits[(t >> 5) as usize] &= !(1 << (t & 31));
    }
    let mut completions: Vec<u32> = sibling.completions.iter().copied().filter(|&n| trie.node_depth(n) <= depth).collect();
    let mut walker = DfaWalker::<true>::new(dfa, state, trie.max_depth());
    trie.walk_nodes_deeper(depth, &mut walker, |w, node, tokens| {
        for &t in tokens {
            bits[(t >> 5) as usize] |= 1 << (t & 31);
        }
        if w.accepting && ends.keeps(trie, node) {
            completions.push(node);
        }
    });
    completions.sort_unstable();
    // The slice's tokens are no longer than its bound: within `depth`, they are the
    // sibling's, and so is what its slice vouched for.
    let slice = sibling.slice.filter(|&i| vocab.string_safe_slices()[i].max_len <= depth);
    LexMask { tokens: crate::index::state_mask::StateMask::from_bits(bits), completions, slice, completions_number: UNNUMBERED }
}

/// Is a mask from a sibling agreeing to `depth` bytes (see [`from_depth_sibling`]) cheaper
/// than a walk of the whole trie? Its walk visits at most the nodes leading to tokens
/// longer than `depth`, and it clears those tokens from the sibling's: both must be a
/// small part of the trie.
pub(crate) fn depth_sibling_pays(vocab: &Vocabulary, depth: usize) -> bool {
    let trie = vocab.trie();
    trie.nodes_reaching_deeper(depth) <= trie.num_nodes() / DEPTH_SIBLING_SHARE
        && trie.tokens_longer_than(depth).len() <= vocab.size() / DEPTH_SIBLING_SHARE
}

/// A depth sibling is taken where its walk and the tokens it clears are at most this
/// fraction of the trie's nodes and of the vocabulary (the sibling's mask costs a pass
/// over the mask's words besides).
const DEPTH_SIBLING_SHARE: usize = 8;

/// The tokens of exact mask `mask` that are in string-safe slice `slice`: what the mask's
/// state keeps alive of that slice.
pub(crate) fn slice_part(vocab: &Vocabulary, mask: &crate::index::state_mask::StateMask, slice: usize) -> Vec<u32> {
    let mut bits = vec![0u32; vocab.mask_words()];
    mask.write(&mut bits);
    for (b, &s) in bits.iter_mut().zip(&vocab.string_safe_slices()[slice].bits) {
        *b &= s;
    }
    bits
}

/// [`compute`] by a walk of the whole trie.
pub(crate) fn compute_full(trie: &TokenTrie, dfa: &Dfa, state: u32, words: usize, ends: Ends) -> LexMask {
    let mut walker = DfaWalker::<true>::new(dfa, state, trie.max_depth());
    // Ids while few: most such masks (a keyword, a number's first digits) are a few
    // tokens, and a row of bits would cost a pass over 4k words to read back.
    let mut collected = TokenCollector::new(words);
    let mut completions = Vec::new();
    trie.walk_nodes(0, &mut walker, |w, node, tokens| {
        collected.extend(tokens);
        if w.accepting && ends.keeps(trie, node) {
            completions.push(node);
        }
    });
    LexMask { tokens: collected.into_mask(), completions, slice: None, completions_number: UNNUMBERED }
}

/// The lexer masks of one compiled grammar computed so far, by (terminal, state key), and
/// per terminal the last few broad ones (see [`LexCache::BROAD`]), which a new state of
/// that terminal may derive from.
#[derive(Debug, Default)]
pub(crate) struct LexCache {
    pub(crate) masks: crate::util::hash::FastMap<(u32, u32), std::sync::Arc<LexMask>>,
    /// Per terminal: (state key, mask) of masks that allow many tokens, the latest last.
    pub(crate) broad: crate::util::hash::FastMap<u32, Vec<(u32, std::sync::Arc<LexMask>)>>,
    /// The completions lists of the cached masks, each with its number (see
    /// [`LexMask::completions_number`]).
    completion_lists: crate::util::hash::FastMap<Box<[u32]>, u32>,
}

impl LexCache {
    /// How many broad masks of one terminal are kept as siblings to derive from.
    const BROAD: usize = 8;

    /// Keeps `mask` for `key`; also as a sibling when it allows at least a sixteenth of the
    /// `size` ids (a narrow mask is cheap to walk again: comparing states would cost more).
    pub(crate) fn insert(&mut self, key: (u32, u32), mask: std::sync::Arc<LexMask>, size: usize) {
        debug_assert_ne!(mask.completions_number, UNNUMBERED, "a lexer mask is numbered before it is cached");
        if mask.tokens.count as usize >= size / 16 {
            let kept = self.broad.entry(key.0).or_default();
            if kept.len() == Self::BROAD {
                kept.remove(0);
            }
            kept.push((key.1, mask.clone()));
        }
        self.masks.insert(key, mask);
    }

    /// How many distinct completions lists the cached masks have.
    #[cfg(test)]
    pub(crate) fn completion_lists(&self) -> usize {
        self.completion_lists.len()
    }

    /// Gives `mask`'s completions (sorted, without repeats) their number: a state whose
    /// list equals a cached mask's (the states of a counted string, one per character,
    /// far from its bound) shares that mask's number, and so what is read below. Returns
    /// the heap bytes a new list adds.
    pub(crate) fn number_completions(&mut self, mask: &mut LexMask) -> usize {
        debug_assert!(mask.completions.windows(2).all(|w| w[0] < w[1]), "completions sorted, without repeats");
        if let Some(&n) = self.completion_lists.get(mask.completions.as_slice()) {
            mask.completions_number = n;
            return 0;
        }
        let n = self.completion_lists.len() as u32;
        self.completion_lists.insert(mask.completions.as_slice().into(), n);
        mask.completions_number = n;
        mask.completions.len() * 4 + 8
    }
}

/// Most bytes on which a state may differ from a sibling whose mask it borrows (see
/// [`derive`]): past that, a walk of the whole trie costs about as much.
pub(crate) const MAX_DIFFERING_BYTES: usize = 8;

/// The first bytes on which DFA states `a` and `b` go different ways, if at most
/// [`MAX_DIFFERING_BYTES`].
pub(crate) fn differing_bytes(dfa: &Dfa, a: u32, b: u32) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for byte in 0..=255u8 {
        if dfa.next(a, byte) != dfa.next(b, byte) {
            if out.len() == MAX_DIFFERING_BYTES {
                return None;
            }
            out.push(byte);
        }
    }
    Some(out)
}

/// The lexer mask of `dfa` in `state`, from the mask of a sibling state that goes the same
/// way as `state` on every first byte but `differ`: below every other first byte of the
/// trie the two walks are the same walk, so the sibling's tokens and completions there
/// are kept, and only the subtrees of the `differ` bytes are walked from `state`. Free
/// text that has read part of a marker (`<tool`) differs from free text at one byte
/// (`_`), so its first mask costs a walk of one subtree instead of the whole trie.
///
/// `ends`: as for [`compute`]; `sibling` must have been computed the same way.
pub(crate) fn derive(vocab: &Vocabulary, dfa: &Dfa, state: u32, sibling: &LexMask, differ: &[u8], ends: Ends) -> LexMask {
    let trie = vocab.trie();
    let mut bits = vec![0u32; vocab.mask_words()];
    sibling.tokens.write(&mut bits);
    let mut children: Vec<(u32, u32)> = Vec::with_capacity(differ.len()); // (child, subtree end)
    for (child, byte) in trie.children(0) {
        if differ.contains(&byte) {
            for &t in trie.with_prefix(&[byte]) {
                bits[(t >> 5) as usize] &= !(1 << (t & 31));
            }
            children.push((child, trie.subtree_end(child)));
        }
    }
    let below_differ = |node: u32| children.iter().any(|&(c, end)| (c..end).contains(&node));
    let mut completions: Vec<u32> = sibling.completions.iter().copied().filter(|&n| !below_differ(n)).collect();
    let mut walker = DfaWalker::<true>::new(dfa, state, trie.max_depth());
    for &(child, _) in &children {
        if !walker.push_byte(trie.node_byte(child)) {
            continue;
        }
        let mut visit = |w: &mut DfaWalker<'_, true>, node: u32, tokens: &[u32]| {
            for &t in tokens {
                bits[(t >> 5) as usize] |= 1 << (t & 31);
            }
            if w.accepting && ends.keeps(trie, node) {
                completions.push(node);
            }
        };
        visit(&mut walker, child, trie.tokens_at(child));
        trie.walk_nodes(child, &mut walker, visit);
        walker.pop_bytes(1);
    }
    completions.sort_unstable();
    LexMask {
        tokens: crate::index::state_mask::StateMask::from_bits(bits),
        completions,
        slice: None,
        completions_number: UNNUMBERED,
    }
}
