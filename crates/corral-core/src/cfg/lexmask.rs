//! Lexer-level masks: the tokens an open terminal can read without ending.
//!
//! At a position in a context-free parse, a token is allowed if its bytes continue one of
//! the terminals being read (its DFA stays alive to the token's end), or if a terminal
//! ends inside the token and the parser continues from there. The first part depends only
//! on the (terminal, DFA state) pair, not on the rest of the parse, so it is computed once
//! per pair and cached ([`LexMask`]); a position's lexer mask is the union over its open
//! pairs. The walk also records the trie nodes where the terminal may end
//! ("completions"): only the subtrees below those nodes need the parser.

use crate::dfa::{Dfa, DEAD};
use crate::vocab::{ByteRecognizer, TokenTrie};

/// The lexer part of a mask for one open (terminal, DFA state) pair.
#[derive(Debug)]
pub(crate) struct LexMask {
    /// Tokens read entirely inside the terminal.
    pub(crate) tokens: crate::compiled::StateMask,
    /// The children of the trie nodes where the terminal may end (its DFA accepts there),
    /// grouped by their byte: below such a node the parser
    /// reads on, and its state is the same at every completion, so each byte is read
    /// once for all of them.
    pub(crate) children_by_byte: Vec<(u8, Vec<u32>)>,
}

impl LexMask {
    pub(crate) fn memory_bytes(&self) -> usize {
        self.tokens.memory_bytes()
            + self.children_by_byte.iter().map(|(_, c)| c.len() * 4 + 32).sum::<usize>()
    }
}

/// One DFA's state per trie depth, and whether the last byte left it accepting.
struct Walker<'a> {
    dfa: &'a Dfa,
    stack: Vec<u32>,
    accepting: bool,
}

impl ByteRecognizer for Walker<'_> {
    #[inline(always)]
    fn push_byte(&mut self, byte: u8) -> bool {
        let q = self.dfa.next(*self.stack.last().unwrap_or(&DEAD), byte);
        if q == DEAD {
            return false;
        }
        self.accepting = self.dfa.is_accepting(q);
        self.stack.push(q);
        true
    }

    #[inline(always)]
    fn pop_bytes(&mut self, n: usize) {
        let len = self.stack.len() - n;
        self.stack.truncate(len);
    }
}

/// Computes the lexer mask of DFA `dfa` standing in `state`.
pub(crate) fn compute(trie: &TokenTrie, dfa: &Dfa, state: u32, words: usize) -> LexMask {
    let mut walker = Walker { dfa, stack: Vec::with_capacity(trie.max_depth() + 1), accepting: false };
    walker.stack.push(state);
    let mut bits = vec![0u32; words];
    let mut completions = Vec::new();
    trie.walk_nodes(0, &mut walker, |w, node, tokens| {
        for &t in tokens {
            bits[(t >> 5) as usize] |= 1 << (t & 31);
        }
        if w.accepting {
            completions.push(node);
        }
    });
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); 256];
    for &node in &completions {
        for (child, byte) in trie.children(node) {
            groups[byte as usize].push(child);
        }
    }
    let children_by_byte =
        groups.into_iter().enumerate().filter(|(_, c)| !c.is_empty()).map(|(b, c)| (b as u8, c)).collect();
    LexMask { tokens: crate::compiled::StateMask::from_bits(bits), children_by_byte }
}
