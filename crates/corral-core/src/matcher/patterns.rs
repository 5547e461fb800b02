//! The matcher's side of the check that strings of `format: "regex"` are regular
//! expressions (see [`crate::grammar::regex_text`]): their masks, token checks,
//! completions and reading.

use super::{Matcher, State};
use crate::error::{Error, Result};
use crate::grammar::distinct_keys::NoDistinctLists;
use crate::grammar::regex_text::RegexTexts;
use crate::index::compiled::Engine;
use crate::parser::ReadEntries;

impl Matcher {
    /// With strings that must be regular expressions: clears from a mask the tokens that
    /// would break one (see [`crate::grammar::regex_text`]). Returns how many it cleared.
    ///
    /// Inside such a string, the tokens that break it are found by a walk of the token
    /// trie with the pattern read so far, once per pattern state (the compiled grammar
    /// keeps them); a token with two quotes may open another one after closing it, and is
    /// read on its own. Outside, only tokens with a quote can open one, and of those only
    /// the ones that [`crate::grammar::regex_text::quote_token_is_safe`] cannot vouch for
    /// are read.
    pub(super) fn drop_broken_patterns(&self, out: &mut [u32]) -> Result<u32> {
        let Some(texts) = &self.texts else { return Ok(0) };
        let vocab = self.grammar.vocab();
        let mut cleared = 0;
        let clear = |t: u32, out: &mut [u32]| {
            let (word, bit) = ((t >> 5) as usize, 1u32 << (t & 31));
            let was = out[word] & bit != 0;
            out[word] &= !bit;
            u32::from(was)
        };
        let Some(tokens) = self.grammar.pattern_tokens() else { return Ok(0) };
        if let Some(refused) = self.grammar.pattern_refusals(texts) {
            // Refused per pattern state, once (see `PatternTokens::refused`).
            for (o, r) in out.iter_mut().zip(refused.iter()) {
                cleared += (*o & r).count_ones();
                *o &= !r;
            }
            for q in vocab.quote_tokens().all.iter().filter(|q| q.quotes >= 2) {
                if self.breaks_pattern(texts, q.id, out)? {
                    cleared += clear(q.id, out);
                }
            }
        } else {
            for &t in &tokens.unsafe_quotes {
                if self.breaks_pattern(texts, t, out)? {
                    cleared += clear(t, out);
                }
            }
        }
        Ok(cleared)
    }

    /// Is normal token `t`, allowed in mask `out`, one that breaks a pattern string?
    fn breaks_pattern(&self, texts: &RegexTexts, t: u32, out: &[u32]) -> Result<bool> {
        if out[(t >> 5) as usize] & (1 << (t & 31)) == 0 {
            return Ok(false);
        }
        let bytes = self.grammar.vocab().token_bytes(t);
        Ok(texts.first_refusal(bytes, &mut *self.entries_ahead(bytes))?.is_some())
    }

    /// With strings that must be regular expressions, does normal token `t` keep them so?
    /// (A limit hit while checking counts as no.)
    pub(super) fn texts_allow(&self, t: u32) -> bool {
        let Some(texts) = &self.texts else { return true };
        let bytes = self.grammar.vocab().token_bytes(t);
        matches!(texts.first_refusal(bytes, &mut *self.entries_ahead(bytes)), Ok(None))
    }

    /// A completion as the grammar sees it (keys may repeat) whose strings that must be
    /// regular expressions are ones: the open pattern, if any, is finished by the pattern
    /// check's own completion (see [`RegexTexts::completion`]), then the grammar
    /// completes; where that breaks a pattern (a string it leaves or writes unfinished,
    /// or a character the pattern refuses), the bytes before are kept and the pattern is
    /// finished again. Each round finishes one pattern or adds a character to one.
    pub(super) fn checked_completion(&self, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        if self.texts.is_none() {
            return self.engine_completion(max_bytes);
        }
        let mut cur = self.clone();
        let mut out: Vec<u8> = Vec::new();
        loop {
            crate::util::interrupt::check()?;
            let Some(texts) = &cur.texts else { return Ok(None) };
            let Some(finish) = texts.completion(max_bytes.saturating_sub(out.len())) else {
                return Err(Error::LimitExceeded {
                    limit: "max_completion_bytes",
                    value: max_bytes,
                    context: "the completion of a regular expression".into(),
                });
            };
            if !finish.is_empty() {
                if !cur.try_push_bytes(&finish)? {
                    return Ok(None);
                }
                out.extend_from_slice(&finish);
            }
            let Some(rest) = cur.engine_completion(max_bytes.saturating_sub(out.len()))? else { return Ok(None) };
            let Some(texts) = &cur.texts else { return Ok(None) };
            let Some(k) = texts.first_refusal(&rest, &mut *cur.entries_ahead(&rest))? else {
                out.extend_from_slice(&rest);
                return Ok(Some(out));
            };
            cur.push_bytes(&rest[..k])?;
            out.extend_from_slice(&rest[..k]);
            // A whole pattern that the grammar's next byte breaks (it wants more
            // characters, and its shortest next one is refused): one plain atom more.
            if cur.texts.as_ref().is_some_and(|t| t.completion(0).is_some_and(|c| c.is_empty())) {
                if !cur.try_push_bytes(b"a")? {
                    return Ok(None);
                }
                out.push(b'a');
            }
            if out.len() > max_bytes {
                return Err(Error::LimitExceeded {
                    limit: "max_completion_bytes",
                    value: max_bytes,
                    context: "a completion whose regular expressions are whole".into(),
                });
            }
        }
    }

    /// Gives the regular-expression check `bytes`, just read by the engine from byte
    /// position `at` on. True without the check.
    pub(super) fn texts_read(&mut self, bytes: &[u8], at: usize) -> Result<bool> {
        let Some(texts) = &mut self.texts else { return Ok(true) };
        match (&self.state, &self.grammar.engine) {
            (State::Cfg { chart, .. }, Engine::Cfg { earley, .. }) => {
                texts.push_token(bytes, &mut ReadEntries { grammar: earley, chart, at })
            }
            _ => texts.push_token(bytes, &mut NoDistinctLists),
        }
    }
}
