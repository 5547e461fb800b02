//! Where a lexer mask records the trie nodes at which its terminal may end: nowhere where
//! nothing can follow the terminal, else where a node's child starts with a byte that can
//! follow it (see `crate::parser::follow`).

use crate::vocab::TokenTrie;

/// Which trie nodes a lexer mask records where its terminal may end: none (nothing can
/// follow the terminal: the text that ends an agent's turn), or those with a child whose
/// byte can follow it (below the others the parser would find nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ends {
    /// The bytes that can follow the terminal; None where its ends are not recorded.
    follow: Option<[u64; 4]>,
    /// `follow` folded to 64 bits, as [`TokenTrie::child_bits`] is.
    folded: u64,
}

impl Ends {
    /// Ends not recorded.
    pub(crate) const NONE: Ends = Ends { follow: None, folded: 0 };
    /// Ends recorded wherever the node has children.
    #[cfg(test)]
    pub(crate) const ANY: Ends = Ends { follow: Some(crate::automata::ANY_BYTE), folded: u64::MAX };

    /// Ends recorded where a child's byte is one of `follow`.
    pub(crate) fn before(follow: &[u64; 4]) -> Ends {
        Ends { follow: Some(*follow), folded: follow.iter().fold(0, |a, &w| a | w) }
    }

    /// Are ends recorded at all?
    pub(crate) fn recorded(&self) -> bool {
        self.follow.is_some()
    }

    /// The bytes that can follow the terminal, where ends are recorded.
    pub(crate) fn follow(&self) -> Option<&[u64; 4]> {
        self.follow.as_ref()
    }

    /// Is `node` (where the terminal may end) recorded?
    #[inline]
    pub(crate) fn keeps(&self, trie: &TokenTrie, node: u32) -> bool {
        trie.child_bits(node) & self.folded != 0
    }
}
