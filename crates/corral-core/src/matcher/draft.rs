//! Speculative decoding: a draft of several tokens checked, or masked at every position, in
//! one call, leaving the matcher where it was.
//!
//! A draft model (or n-gram lookup, EAGLE head, …) proposes `k` tokens; the target model
//! scores all `k + 1` positions at once. The constraint then needs two things: how many of
//! the draft tokens it accepts ([`Matcher::validate_tokens`]), and the mask of every
//! position, each after the draft's prefix before it ([`Matcher::fill_draft_masks`]), so
//! that the sampler can reject a draft token the constraint refuses and resample from the
//! masked distribution there. Both advance through the draft and roll back, so no trace of
//! the draft is left, whatever it held.

use crate::error::{Error, Result};

use super::{MaskInfo, Matcher};

/// What [`Matcher::fill_draft_masks`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftMasks {
    /// How many of the draft's tokens the constraint accepts (a prefix of the draft). Rows
    /// `0..=accepted` were written (row `accepted` being the mask that refuses the next draft
    /// token, when there is one); the rows after it were not touched.
    pub accepted: usize,
    /// Each written row's [`MaskInfo`], in row order (`accepted + 1` entries).
    pub rows: Vec<MaskInfo>,
}

impl Matcher {
    /// The number of tokens of `draft` the constraint accepts from here, in order (the
    /// longest accepted prefix). The matcher is left as it was.
    ///
    /// A token id outside the vocabulary is an error, as in [`Matcher::advance`].
    pub fn validate_tokens(&mut self, draft: &[u32]) -> Result<usize> {
        let mut accepted = 0;
        let walked = self.walk(draft, &mut accepted, |_, _| Ok(()));
        self.rollback(accepted)?;
        walked.map(|()| accepted)
    }

    /// Writes the mask of every position of `draft` into `out`: row `i` (each row
    /// `vocab.mask_words()` words) is the mask after `draft[..i]`, for `i` in `0..=k` while
    /// the draft is accepted. `out` must hold `draft.len() + 1` rows. The matcher is left as
    /// it was.
    ///
    /// The rows after the first draft token the constraint refuses are not written: the
    /// sampler rejects the draft at that token, so positions after it are never sampled.
    pub fn fill_draft_masks(&mut self, draft: &[u32], out: &mut [u32]) -> Result<DraftMasks> {
        let words = self.grammar.vocab().mask_words();
        if out.len() != words * (draft.len() + 1) {
            return Err(Error::InvalidArgument(format!(
                "a draft of {} tokens needs {} bitmask rows of {words} int32 words, got {} words",
                draft.len(),
                draft.len() + 1,
                out.len()
            )));
        }
        let mut rows = Vec::with_capacity(draft.len() + 1);
        let mut accepted = 0;
        let walked = self.walk(draft, &mut accepted, |m, i| {
            rows.push(m.fill_mask(&mut out[i * words..(i + 1) * words])?);
            Ok(())
        });
        self.rollback(accepted)?;
        walked.map(|()| DraftMasks { accepted, rows })
    }

    /// An independent matcher at this one's position, sharing the compiled grammar (the
    /// parse state is copied; nothing compiled is).
    pub fn fork(&self) -> Matcher {
        self.clone()
    }

    /// Calls `at(self, i)` at each position `i` of `draft` (before its token `i`, and once
    /// after the last), advancing through the draft while it is accepted; `accepted` counts
    /// the tokens advanced, for the caller to roll back even when this fails.
    fn walk(&mut self, draft: &[u32], accepted: &mut usize, mut at: impl FnMut(&Matcher, usize) -> Result<()>) -> Result<()> {
        for (i, &token) in draft.iter().enumerate() {
            at(self, i)?;
            if !self.advance(token)? {
                return Ok(());
            }
            *accepted += 1;
        }
        at(self, draft.len())
    }
}
