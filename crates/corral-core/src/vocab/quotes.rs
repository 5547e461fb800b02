//! The tokens with a `"` byte, indexed for the distinct-keys check (see
//! `crate::grammar::distinct_keys`): which tokens may close a JSON key; and those with a
//! `,`, the only ones that may close one item of an array and start another.

use super::{TokenKind, Vocabulary};
use crate::util::hash::FastMap;

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
    /// The run of `single_by_head` that each head starts (one hash lookup per written
    /// key the check asks about, where a search compared token bytes a dozen times).
    runs: FastMap<Box<[u8]>, (u32, u32)>,
    /// The ids of the normal tokens with a `,` byte.
    pub commas: Vec<u32>,
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
            let mut runs: FastMap<Box<[u8]>, (u32, u32)> = FastMap::default();
            for (i, &t) in single_by_head.iter().enumerate() {
                let run = runs.entry(self.head(t).into()).or_insert((i as u32, i as u32));
                run.1 = i as u32 + 1;
            }
            let commas = (0..self.size() as u32)
                .filter(|&id| self.kind(id) == TokenKind::Normal && self.token_bytes(id).contains(&b','))
                .collect();
            QuoteTokens { all, single_by_head, runs, commas }
        })
    }

    /// The bytes of token `id` before its first `"` (all of them if it has none).
    fn head(&self, id: u32) -> &[u8] {
        let bytes = self.token_bytes(id);
        &bytes[..bytes.iter().position(|&b| b == b'"').unwrap_or(bytes.len())]
    }

    /// The tokens with exactly one `"`, and `head` right before it.
    pub fn single_quote_tokens_after(&self, head: &[u8]) -> &[u32] {
        let q = self.quote_tokens();
        match q.runs.get(head) {
            Some(&(lo, hi)) => &q.single_by_head[lo as usize..hi as usize],
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_after_a_head_are_exactly_those_with_one_quote_right_after_it() {
        let texts = ["ab\"", "ab\",", "a\"", "\"", "ab", "ab\"\"", "b\"", "ab\"x"];
        let mut tokens: Vec<Option<Vec<u8>>> = texts.iter().map(|t| Some(t.as_bytes().to_vec())).collect();
        tokens.push(None);
        let v = Vocabulary::new(tokens, &[], &[texts.len() as u32], None).unwrap();
        let ids = |head: &[u8]| {
            let mut got: Vec<&str> = v.single_quote_tokens_after(head).iter().map(|&t| texts[t as usize]).collect();
            got.sort();
            got
        };
        assert_eq!(ids(b"ab"), ["ab\"", "ab\",", "ab\"x"]);
        assert_eq!(ids(b"a"), ["a\""]);
        assert_eq!(ids(b""), ["\""]);
        assert!(ids(b"abc").is_empty() && ids(b"x").is_empty());
        assert_eq!(v.quote_tokens().all.iter().filter(|q| q.quotes == 2).count(), 1);
    }
}
