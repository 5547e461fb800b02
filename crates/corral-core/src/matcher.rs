//! The per-sequence matcher: current state, history for rollback, masks.

use std::sync::Arc;

use crate::compiled::CompiledGrammar;
use crate::error::{Error, Result};
use crate::vocab::TokenKind;

/// History entry meaning "EOS was accepted; the sequence is finished".
const FINISHED: u32 = u32::MAX;

/// Tracks one generated sequence against a compiled grammar.
///
/// The state after each accepted token is kept, so `rollback(n)` is exact and O(n).
#[derive(Debug, Clone)]
pub struct Matcher {
    grammar: Arc<CompiledGrammar>,
    /// `history[0]` is the start state; the last entry is the current state.
    history: Vec<u32>,
}

/// What `fill_mask` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskInfo {
    /// Number of allowed ids (EOS included).
    pub allowed: u32,
}

impl Matcher {
    /// A matcher at the start of the grammar.
    pub fn new(grammar: Arc<CompiledGrammar>) -> Matcher {
        let start = grammar.dfa().start();
        Matcher { grammar, history: vec![start] }
    }

    /// The compiled grammar.
    pub fn grammar(&self) -> &Arc<CompiledGrammar> {
        &self.grammar
    }

    #[inline]
    fn current(&self) -> u32 {
        *self.history.last().unwrap_or(&FINISHED)
    }

    /// Writes the allowed-token bitmask (bit t of word t/32) into `out`, which must be
    /// exactly `vocab.mask_words()` long. Once finished, only EOS is allowed, so that
    /// batched generation can keep padding a finished row.
    pub fn fill_mask(&self, out: &mut [u32]) -> Result<MaskInfo> {
        fill_state_mask(&self.grammar, self.current(), out)
    }

    /// Would `token` be accepted now?
    pub fn is_allowed(&self, token: u32) -> bool {
        let state = self.current();
        if state == FINISHED {
            return false;
        }
        match self.grammar.vocab().kind(token) {
            TokenKind::Eos => self.grammar.dfa().is_accepting(state),
            TokenKind::Normal => self.grammar.next_state(state, token).is_some(),
            _ => false,
        }
    }

    /// Consumes `token`. Returns false, leaving the state unchanged, if it is not allowed.
    /// A token id outside the vocabulary's size is an error.
    pub fn advance(&mut self, token: u32) -> Result<bool> {
        let size = self.grammar.vocab().size();
        if token as usize >= size {
            return Err(Error::InvalidArgument(format!("token id {token} is out of range (vocabulary size {size})")));
        }
        let state = self.current();
        if state == FINISHED {
            return Ok(false);
        }
        let next = match self.grammar.vocab().kind(token) {
            TokenKind::Eos if self.grammar.dfa().is_accepting(state) => FINISHED,
            TokenKind::Normal => match self.grammar.next_state(state, token) {
                Some(s) => s,
                None => return Ok(false),
            },
            _ => return Ok(false),
        };
        self.history.push(next);
        Ok(true)
    }

    /// Undoes the last `n` accepted tokens (EOS included).
    pub fn rollback(&mut self, n: usize) -> Result<()> {
        let have = self.history.len() - 1;
        if n > have {
            return Err(Error::InvalidArgument(format!(
                "cannot roll back {n} tokens: only {have} have been accepted"
            )));
        }
        self.history.truncate(self.history.len() - n);
        Ok(())
    }

    /// Returns to the start, forgetting all tokens.
    pub fn reset(&mut self) {
        self.history.truncate(1);
    }

    /// Number of tokens accepted so far (EOS included).
    pub fn num_tokens(&self) -> usize {
        self.history.len() - 1
    }

    /// May the output end here (would EOS be accepted)?
    pub fn is_accepting(&self) -> bool {
        let state = self.current();
        state != FINISHED && self.grammar.dfa().is_accepting(state)
    }

    /// Has EOS been accepted?
    pub fn is_finished(&self) -> bool {
        self.current() == FINISHED
    }

    /// The tokens that are the only way forward from here: while exactly one token id is
    /// allowed, it is forced. Ends with an EOS id if ending is the only way forward.
    /// Does not change the matcher. At most `Limits::max_forced_tokens` are returned.
    pub fn forced_tokens(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut state = self.current();
        let limit = self.grammar.limits().max_forced_tokens;
        while state != FINISHED && out.len() < limit {
            let mask = self.grammar.state_mask(state);
            let Some(only) = mask.only else { break };
            out.push(only);
            state = match self.grammar.vocab().kind(only) {
                TokenKind::Normal => match self.grammar.next_state(state, only) {
                    Some(s) => s,
                    None => break,
                },
                _ => FINISHED,
            };
        }
        out
    }
}

/// What is needed to fill one matcher's mask, detached from the matcher so that a batch of
/// rows can be filled on several threads without holding the matchers.
#[derive(Debug, Clone)]
pub struct MaskSource {
    grammar: Arc<CompiledGrammar>,
    state: u32,
}

impl MaskSource {
    /// Fills `out` exactly as [`Matcher::fill_mask`] would.
    pub fn fill(&self, out: &mut [u32]) -> Result<MaskInfo> {
        fill_state_mask(&self.grammar, self.state, out)
    }
}

impl Matcher {
    /// A detached handle for filling this matcher's current mask.
    pub fn mask_source(&self) -> MaskSource {
        MaskSource { grammar: self.grammar.clone(), state: self.current() }
    }
}

fn fill_state_mask(grammar: &CompiledGrammar, state: u32, out: &mut [u32]) -> Result<MaskInfo> {
    let words = grammar.vocab().mask_words();
    if out.len() != words {
        return Err(Error::InvalidArgument(format!(
            "bitmask row has {} int32 words, the vocabulary needs {words} (ceil({} / 32))",
            out.len(),
            grammar.vocab().size()
        )));
    }
    if state == FINISHED {
        out.fill(0);
        let eos = grammar.vocab().eos_ids();
        for &e in eos {
            out[(e >> 5) as usize] |= 1 << (e & 31);
        }
        return Ok(MaskInfo { allowed: eos.len() as u32 });
    }
    let mask = grammar.state_mask(state);
    mask.write(out);
    Ok(MaskInfo { allowed: mask.count })
}
