//! The DFA walker the token trie drives: one DFA state per trie depth, pushed and popped
//! as the walk goes down and up.

use crate::automata::{Dfa, DEAD};
use crate::vocab::ByteRecognizer;

/// One DFA's state per trie depth. With `ENDS`, it also records whether the last byte
/// left the DFA accepting (a lexer mask needs the nodes where its terminal may end); a
/// regular grammar's mask does not, and its walk skips that lookup at every byte.
pub(crate) struct DfaWalker<'a, const ENDS: bool> {
    dfa: &'a Dfa,
    stack: Vec<u32>,
    /// Does the DFA accept after the last byte pushed? (Kept only with `ENDS`.)
    pub(crate) accepting: bool,
}

impl<'a, const ENDS: bool> DfaWalker<'a, ENDS> {
    /// A walker standing in `state` of `dfa`, reusing `stack`'s allocation.
    pub(crate) fn with_stack(dfa: &'a Dfa, state: u32, mut stack: Vec<u32>) -> DfaWalker<'a, ENDS> {
        stack.clear();
        stack.push(state);
        DfaWalker { dfa, stack, accepting: false }
    }

    /// Gives the stack's allocation back.
    pub(crate) fn into_stack(self) -> Vec<u32> {
        self.stack
    }

    /// A walker standing in `state` of `dfa`.
    pub(crate) fn new(dfa: &'a Dfa, state: u32, depth: usize) -> DfaWalker<'a, ENDS> {
        let mut stack = Vec::with_capacity(depth + 1);
        stack.push(state);
        DfaWalker { dfa, stack, accepting: false }
    }
}

impl<const ENDS: bool> ByteRecognizer for DfaWalker<'_, ENDS> {
    #[inline(always)]
    fn push_byte(&mut self, byte: u8) -> bool {
        let q = self.dfa.next(*self.stack.last().unwrap_or(&DEAD), byte);
        if q == DEAD {
            return false;
        }
        if ENDS {
            self.accepting = self.dfa.is_accepting(q);
        }
        self.stack.push(q);
        true
    }

    #[inline(always)]
    fn pop_bytes(&mut self, n: usize) {
        let len = self.stack.len() - n;
        self.stack.truncate(len);
    }
}
