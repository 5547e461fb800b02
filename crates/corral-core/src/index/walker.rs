//! The DFA walker the token trie drives: one DFA state per trie depth, pushed and popped
//! as the walk goes down and up, and whether the last byte left the DFA accepting.

use crate::automata::{Dfa, DEAD};
use crate::vocab::ByteRecognizer;

/// One DFA's state per trie depth, and whether the last byte left it accepting.
pub(crate) struct DfaWalker<'a> {
    dfa: &'a Dfa,
    stack: Vec<u32>,
    /// Does the DFA accept after the last byte pushed?
    pub(crate) accepting: bool,
}

impl<'a> DfaWalker<'a> {
    /// A walker standing in `state` of `dfa`, reusing `stack`'s allocation.
    pub(crate) fn with_stack(dfa: &'a Dfa, state: u32, mut stack: Vec<u32>) -> DfaWalker<'a> {
        stack.clear();
        stack.push(state);
        DfaWalker { dfa, stack, accepting: false }
    }

    /// Gives the stack's allocation back.
    pub(crate) fn into_stack(self) -> Vec<u32> {
        self.stack
    }

    /// A walker standing in `state` of `dfa`.
    pub(crate) fn new(dfa: &'a Dfa, state: u32, depth: usize) -> DfaWalker<'a> {
        let mut stack = Vec::with_capacity(depth + 1);
        stack.push(state);
        DfaWalker { dfa, stack, accepting: false }
    }
}

impl ByteRecognizer for DfaWalker<'_> {
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
