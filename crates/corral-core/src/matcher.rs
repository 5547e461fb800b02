//! The per-sequence matcher: current state, history for rollback, masks.

use std::sync::Arc;

use crate::cfg::{advance_chart, Chart, Overlay};
use crate::compiled::{CompiledGrammar, Engine};
use crate::error::{Error, Result};
use crate::vocab::TokenKind;

/// History entry meaning "EOS was accepted; the sequence is finished".
const FINISHED: u32 = u32::MAX;

/// Where a sequence is in its grammar.
#[derive(Debug, Clone)]
enum State {
    /// `history[0]` is the start state; the last entry is the current state.
    Dfa { history: Vec<u32> },
    /// The parse so far, and the number of chart rows after each accepted token
    /// (`FINISHED` for EOS), so that rollback truncates exactly.
    Cfg { chart: Chart, bounds: Vec<u32> },
}

/// Tracks one generated sequence against a compiled grammar.
///
/// The state after each accepted token is kept, so `rollback(n)` is exact and O(n).
#[derive(Debug, Clone)]
pub struct Matcher {
    grammar: Arc<CompiledGrammar>,
    state: State,
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
        let state = match &grammar.engine {
            Engine::Dfa { dfa, .. } => State::Dfa { history: vec![dfa.start()] },
            Engine::Cfg { start, .. } => State::Cfg { chart: start.clone(), bounds: Vec::new() },
        };
        Matcher { grammar, state }
    }

    /// The compiled grammar.
    pub fn grammar(&self) -> &Arc<CompiledGrammar> {
        &self.grammar
    }

    fn check_row(&self, out: &[u32]) -> Result<()> {
        let words = self.grammar.vocab().mask_words();
        if out.len() != words {
            return Err(Error::InvalidArgument(format!(
                "bitmask row has {} int32 words, the vocabulary needs {words} (ceil({} / 32))",
                out.len(),
                self.grammar.vocab().size()
            )));
        }
        Ok(())
    }

    /// Writes the allowed-token bitmask (bit t of word t/32) into `out`, which must be
    /// exactly `vocab.mask_words()` long. Once finished, only EOS is allowed, so that
    /// batched generation can keep padding a finished row.
    pub fn fill_mask(&self, out: &mut [u32]) -> Result<MaskInfo> {
        self.check_row(out)?;
        if self.is_finished() {
            out.fill(0);
            let eos = self.grammar.vocab().eos_ids();
            for &e in eos {
                out[(e >> 5) as usize] |= 1 << (e & 31);
            }
            return Ok(MaskInfo { allowed: eos.len() as u32 });
        }
        match &self.state {
            State::Dfa { history } => {
                let mask = self.grammar.state_mask(*history.last().unwrap_or(&FINISHED));
                mask.write(out);
                Ok(MaskInfo { allowed: mask.count })
            }
            State::Cfg { chart, .. } => Ok(MaskInfo { allowed: self.grammar.chart_mask(chart, out)? }),
        }
    }

    /// Like [`Matcher::fill_mask`], but the slow way, a reference for tests: for a
    /// context-free grammar a plain trie walk with the parser (no lexer cache, no slices),
    /// for a regular one a walk of the whole trie (no mask cache, no slices).
    pub fn fill_mask_reference(&self, out: &mut [u32]) -> Result<MaskInfo> {
        match &self.state {
            State::Cfg { chart, .. } if !self.is_finished() => {
                self.check_row(out)?;
                Ok(MaskInfo { allowed: self.grammar.chart_mask_reference(chart, out)? })
            }
            State::Dfa { history } if !self.is_finished() => {
                self.check_row(out)?;
                let mask = self.grammar.compute_mask_full(*history.last().unwrap_or(&FINISHED));
                mask.write(out);
                Ok(MaskInfo { allowed: mask.count })
            }
            _ => self.fill_mask(out),
        }
    }

    /// Bytes that, appended to the output, make it complete (short, not always the
    /// shortest). Empty if it may end now; None once finished. Fails if the completion
    /// would be longer than `Limits::max_completion_bytes`, or when interrupted.
    pub fn completion(&self) -> Result<Option<Vec<u8>>> {
        if self.is_finished() {
            return Ok(None);
        }
        let max_bytes = self.grammar.limits().max_completion_bytes;
        match (&self.state, &self.grammar.engine) {
            (State::Dfa { history }, Engine::Dfa { dfa, .. }) => {
                let suffix = crate::cfg::complete::dfa_suffix(dfa, *history.last().unwrap_or(&FINISHED));
                match suffix {
                    Some(s) if s.len() > max_bytes => Err(Error::LimitExceeded {
                        limit: "max_completion_bytes",
                        value: max_bytes,
                        context: format!("the shortest completion ({} bytes)", s.len()),
                    }),
                    other => Ok(other),
                }
            }
            (State::Cfg { chart, .. }, Engine::Cfg { earley, shortest, .. }) => {
                let shortest = shortest.get_or_init(|| crate::cfg::complete::Shortest::new(earley));
                chart.completion(earley, shortest, max_bytes)
            }
            _ => Ok(None),
        }
    }

    /// The parse so far, for a context-free grammar.
    pub fn chart(&self) -> Option<&Chart> {
        match &self.state {
            State::Cfg { chart, .. } => Some(chart),
            State::Dfa { .. } => None,
        }
    }

    /// Would `token` be accepted now?
    pub fn is_allowed(&self, token: u32) -> bool {
        if self.is_finished() {
            return false;
        }
        let kind = self.grammar.vocab().kind(token);
        match (&self.state, kind) {
            (_, TokenKind::Eos) => self.is_accepting(),
            (State::Dfa { history }, TokenKind::Normal) => {
                self.grammar.next_state(*history.last().unwrap_or(&FINISHED), token).is_some()
            }
            (State::Cfg { chart, .. }, TokenKind::Normal) => {
                let Engine::Cfg { earley, .. } = &self.grammar.engine else { return false };
                let mut ov = Overlay::new(earley, chart);
                self.grammar.vocab().token_bytes(token).iter().all(|&b| ov.push(b))
            }
            _ => false,
        }
    }

    /// Consumes `token`. Returns false, leaving the state unchanged, if it is not allowed.
    /// A token id outside the vocabulary's size is an error.
    pub fn advance(&mut self, token: u32) -> Result<bool> {
        let vocab = self.grammar.vocab().clone();
        let size = vocab.size();
        if token as usize >= size {
            return Err(Error::InvalidArgument(format!("token id {token} is out of range (vocabulary size {size})")));
        }
        if self.is_finished() {
            return Ok(false);
        }
        let kind = vocab.kind(token);
        match &mut self.state {
            State::Dfa { history } => {
                let state = *history.last().unwrap_or(&FINISHED);
                let dfa = self.grammar.dfa().ok_or_else(|| Error::InvalidArgument("no DFA".into()))?;
                let next = match kind {
                    TokenKind::Eos if dfa.is_accepting(state) => FINISHED,
                    TokenKind::Normal => match self.grammar.next_state(state, token) {
                        Some(s) => s,
                        None => return Ok(false),
                    },
                    _ => return Ok(false),
                };
                history.push(next);
                Ok(true)
            }
            State::Cfg { chart, bounds } => {
                let Engine::Cfg { earley, .. } = &self.grammar.engine else {
                    return Err(Error::InvalidArgument("no parser".into()));
                };
                match kind {
                    TokenKind::Eos if chart.is_accepting() => {
                        bounds.push(FINISHED);
                        Ok(true)
                    }
                    TokenKind::Normal => {
                        if advance_chart(earley, chart, vocab.token_bytes(token))? {
                            bounds.push(chart.num_rows() as u32);
                            Ok(true)
                        } else {
                            Ok(false)
                        }
                    }
                    _ => Ok(false),
                }
            }
        }
    }

    /// Undoes the last `n` accepted tokens (EOS included).
    pub fn rollback(&mut self, n: usize) -> Result<()> {
        let have = self.num_tokens();
        if n > have {
            return Err(Error::InvalidArgument(format!(
                "cannot roll back {n} tokens: only {have} have been accepted"
            )));
        }
        match &mut self.state {
            State::Dfa { history } => history.truncate(history.len() - n),
            State::Cfg { chart, bounds } => {
                bounds.truncate(bounds.len() - n);
                let rows = bounds.iter().rev().find(|&&b| b != FINISHED).copied().unwrap_or(1);
                chart.truncate_rows(rows as usize);
            }
        }
        Ok(())
    }

    /// Returns to the start, forgetting all tokens.
    pub fn reset(&mut self) {
        let n = self.num_tokens();
        // Cannot fail: n tokens were accepted.
        let _ = self.rollback(n);
    }

    /// Number of tokens accepted so far (EOS included).
    pub fn num_tokens(&self) -> usize {
        match &self.state {
            State::Dfa { history } => history.len() - 1,
            State::Cfg { bounds, .. } => bounds.len(),
        }
    }

    /// May the output end here (would EOS be accepted)?
    pub fn is_accepting(&self) -> bool {
        if self.is_finished() {
            return false;
        }
        match &self.state {
            State::Dfa { history } => self.grammar.dfa().is_some_and(|d| d.is_accepting(*history.last().unwrap_or(&FINISHED))),
            State::Cfg { chart, .. } => chart.is_accepting(),
        }
    }

    /// Has EOS been accepted?
    pub fn is_finished(&self) -> bool {
        match &self.state {
            State::Dfa { history } => history.last() == Some(&FINISHED),
            State::Cfg { bounds, .. } => bounds.last() == Some(&FINISHED),
        }
    }

    /// The tokens that are the only way forward from here: while exactly one token id is
    /// allowed, it is forced. Ends with an EOS id if ending is the only way forward.
    /// Does not change the matcher. At most `Limits::max_forced_tokens` are returned.
    pub fn forced_tokens(&self) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        let limit = self.grammar.limits().max_forced_tokens;
        if let State::Dfa { history } = &self.state {
            let mut state = *history.last().unwrap_or(&FINISHED);
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
            return Ok(out);
        }
        let mut probe = self.clone();
        let mut bits = vec![0u32; self.grammar.vocab().mask_words()];
        while !probe.is_finished() && out.len() < limit {
            if probe.fill_mask(&mut bits)?.allowed != 1 {
                break;
            }
            let only = bits.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, &w)| (i * 32) as u32 + w.trailing_zeros());
            let Some(only) = only else { break };
            if !probe.advance(only)? {
                break;
            }
            out.push(only);
        }
        Ok(out)
    }
}
