//! A context-free parser state's mask as it is cached: the union of the cached lexer and
//! after-end masks it was made of, shared rather than copied, and a mask of its own for
//! the rest (the tokens of walks below end nodes, the end of the output).
//!
//! A parse inside a counted string or a tool's arguments meets a new parser state at
//! nearly every token, and most of such a state's mask is one broad lexer mask (a row of
//! 16 KB at 128k tokens) already cached: copying that row into a cache entry of its own
//! cost more than computing the mask from its parts. Writing the parts back on a later
//! visit costs about what a copy of one row does.

use std::sync::Arc;

use super::lexer_mask::{AfterEnd, LexMask};
use super::state_mask::StateMask;

/// A cached mask a parser state's mask is the union of.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// The tokens an open terminal reads without ending.
    Lex(Arc<LexMask>),
    /// The tokens a terminal reads after another one ended inside them.
    After(Arc<AfterEnd>),
}

impl Part {
    fn tokens(&self) -> &StateMask {
        match self {
            Part::Lex(l) => &l.tokens,
            Part::After(a) => &a.tokens,
        }
    }
}

/// A parser state's mask: its parts, OR'd in order, and its own tokens.
#[derive(Debug)]
pub(crate) struct PartsMask {
    parts: Box<[Part]>,
    own: StateMask,
    /// Number of allowed token ids (EOS included).
    pub(crate) count: u32,
}

/// Most parts kept.
const MAX_PARTS: usize = 16;

/// What writing `mask` into a row costs, in words: a row's length for a row of bits,
/// otherwise one per id (a scattered write).
fn write_cost(mask: &StateMask, words: usize) -> usize {
    if mask.is_row() {
        words
    } else {
        mask.count as usize
    }
}

impl PartsMask {
    /// The mask of `parts` and `own`, of `count` ids, as cached: kept as those parts
    /// (the costliest to write first) where the others and `own` cost at most half a row
    /// to write over it, else as `row` (the mask itself, one row of bits; free text's,
    /// which a thousand sparse ids after its end would cost more to write than its few
    /// refused tokens).
    pub(crate) fn new(mut parts: Vec<Part>, own: StateMask, count: u32, row: &[u32]) -> PartsMask {
        let words = row.len();
        parts.sort_by_key(|p| std::cmp::Reverse(write_cost(p.tokens(), words)));
        let over_first: usize =
            parts.iter().skip(1).map(|p| write_cost(p.tokens(), words)).sum::<usize>() + write_cost(&own, words);
        if parts.len() > MAX_PARTS || over_first > words / 2 {
            return PartsMask { parts: Box::new([]), own: StateMask::from_counted_bits(row.to_vec(), count), count };
        }
        PartsMask { parts: parts.into_boxed_slice(), own, count }
    }

    /// Writes the mask into `out` (one row).
    pub(crate) fn write(&self, out: &mut [u32]) {
        let Some((first, rest)) = self.parts.split_first() else {
            self.own.write(out);
            return;
        };
        first.tokens().write(out);
        for p in rest {
            p.tokens().or_into(out);
        }
        self.own.or_into(out);
    }

    /// How many cached masks it is kept as (0: one row of its own), and how many tokens
    /// are its own.
    #[cfg(test)]
    pub(crate) fn shape(&self) -> (usize, u32) {
        (self.parts.len(), self.own.count)
    }

    /// Heap bytes of its own (the parts are counted where they are cached).
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.parts.len() * std::mem::size_of::<Part>() + self.own.memory_bytes()
    }
}
