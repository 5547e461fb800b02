//! The tokens with a `"` byte, indexed for the distinct-keys check (see
//! `crate::grammar::distinct_keys`): which tokens may close a JSON key.

use super::{TokenKind, Vocabulary};

/// A normal token with a `"` byte, for the distinct-keys check (see
/// [`crate::grammar::distinct_keys`]).
#[derive(Debug, Clone, Copy)]
pub struct QuoteToken {
    /// The token id.
    pub id: u32,
    /// How many `"` bytes it has (at most 255 counted).
    pub quotes: u8,
    /// Does a byte of JSON structure (`{ } [ ] , :`) come before its first `"`?
    pub structure_first: bool,
}

/// The normal tokens with a `"` byte, two ways.
#[derive(Debug, Clone, Default)]
pub struct QuoteTokens {
    /// All of them, by id.
    pub all: Vec<QuoteToken>,
    /// The ids of those with exactly one `"`, sorted by the bytes before it.
    single_by_head: Vec<u32>,
}

impl Vocabulary {
    /// The normal tokens with a `"` byte (computed on first use).
    pub fn quote_tokens(&self) -> &QuoteTokens {
        self.quote_tokens.get_or_init(|| {
            let all: Vec<QuoteToken> = (0..self.size() as u32)
                .filter(|&id| self.kind(id) == TokenKind::Normal)
                .filter_map(|id| {
                    let bytes = self.token_bytes(id);
                    let first = bytes.iter().position(|&b| b == b'"')?;
                    let quotes = bytes.iter().filter(|&&b| b == b'"').count().min(255) as u8;
                    let structure_first = bytes[..first].iter().any(|b| b"{}[],:".contains(b));
                    Some(QuoteToken { id, quotes, structure_first })
                })
                .collect();
            let mut single_by_head: Vec<u32> = all.iter().filter(|q| q.quotes == 1).map(|q| q.id).collect();
            single_by_head.sort_by(|&a, &b| self.head(a).cmp(self.head(b)));
            QuoteTokens { all, single_by_head }
        })
    }

    /// The bytes of token `id` before its first `"` (all of them if it has none).
    fn head(&self, id: u32) -> &[u8] {
        let bytes = self.token_bytes(id);
        &bytes[..bytes.iter().position(|&b| b == b'"').unwrap_or(bytes.len())]
    }

    /// The tokens with exactly one `"`, and `head` right before it.
    pub fn single_quote_tokens_after(&self, head: &[u8]) -> &[u32] {
        let ids = &self.quote_tokens().single_by_head;
        let lo = ids.partition_point(|&t| self.head(t) < head);
        let hi = lo + ids[lo..].partition_point(|&t| self.head(t) == head);
        &ids[lo..hi]
    }
}
