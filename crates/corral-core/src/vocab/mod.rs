//! The vocabulary: token id → exact bytes, kinds (normal, special, EOS, missing), and
//! the token trie the masks walk.
//!
//! Grammar code meets the vocabulary only through [`TokenTrie::walk`] and a
//! [`ByteRecognizer`] (it sees bytes, never token strings), and through the string-safe
//! slices ([`slices`]) that masks inside free text start from. [`quotes`] indexes the
//! tokens with a `"` for the distinct-keys check.

use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::Fnv;

pub mod quotes;
pub mod readings;
pub mod slices;
#[cfg(test)]
mod tests;
pub mod trie;

pub use quotes::{QuoteToken, QuoteTokens};
pub use readings::TokenRefs;
use slices::HoldingCache;
pub use slices::StringSafeSlice;
pub use trie::{ByteRecognizer, TokenTrie};

/// What a token id is, as far as constraints are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// An ordinary token with at least one byte: allowed when a grammar allows its bytes.
    Normal,
    /// A control token (BOS, chat markers, ...): never allowed by a grammar.
    Special,
    /// An end-of-sequence token: allowed exactly where the constraint may end.
    Eos,
    /// An id with no bytes (a gap, padding up to the logits width, an empty token): never allowed.
    Missing,
}

/// A tokenizer's vocabulary as corral sees it: every id's exact bytes and kind.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    bytes: Vec<u8>,
    /// Token i's bytes are `bytes[offsets[i]..offsets[i+1]]`.
    offsets: Vec<u32>,
    kinds: Vec<TokenKind>,
    eos: Vec<u32>,
    size: usize,
    trie: TokenTrie,
    fingerprint: u64,
    /// The string-safe slices (see [`StringSafeSlice`]), built with the vocabulary.
    string_safe_slices: std::sync::OnceLock<Vec<StringSafeSlice>>,
    /// Per byte, the string-safe tokens that hold it, as mask bits (empty for a byte
    /// that is not string-safe), then (index 256) those holding any byte from 0x80 up: which
    /// slice tokens a risky byte touches (see [`Vocabulary::string_safe_slice_mask`]).
    safe_with_byte: std::sync::OnceLock<Vec<Vec<u32>>>,
    /// Per length `n` up to [`MAX_SAFE_LEN`], the string-safe tokens of at most `n`
    /// bytes, as mask bits (see [`crate::automata::StringSafeRisk::safe_len`]).
    safe_len_le: std::sync::OnceLock<Vec<Vec<u32>>>,
    /// Per count `k` up to [`crate::automata::char_budget::MAX_CHAR_BUDGET`], the
    /// string-safe tokens that start at most `k` characters, as mask bits (see
    /// [`crate::automata::Dfa::string_safe_char_budget`]).
    safe_chars_le: std::sync::OnceLock<Vec<Vec<u32>>>,
    /// Per byte, how many string-safe tokens hold it.
    safe_byte_weight: std::sync::OnceLock<[u32; 256]>,
    /// Per byte held by few string-safe tokens, their ids (see
    /// [`Vocabulary::safe_ids_with_rare_byte`]).
    safe_ids_with_rare_byte: std::sync::OnceLock<Vec<Option<Vec<u32>>>>,
    /// Recent [`Vocabulary::safe_tokens_holding`] results by byte set: every position of
    /// a counted string (`[a-z0-9-]{0,40}`) asks for the same sets, at ~100 bytes each.
    holding_cache: HoldingCache,
    /// The normal tokens with a `"` byte (see [`Vocabulary::quote_tokens`]).
    quote_tokens: std::sync::OnceLock<QuoteTokens>,
    /// Vocabularies derived from this one for grammars that name tokens (see
    /// [`Vocabulary::with_readings`]).
    readings_cache: readings::ReadingsCache,
    /// For a vocabulary so derived: what it came from.
    origin: Option<Box<readings::Origin>>,
}

impl Vocabulary {
    /// Builds a vocabulary.
    ///
    /// * `tokens[id]`: the exact bytes of token `id`, or None for an id with no token.
    /// * `special_ids`: control tokens, never allowed by a grammar.
    /// * `eos_ids`: end-of-sequence tokens (at least one), allowed exactly where the
    ///   constraint may end.
    /// * `size`: the logits width (the model's embedding rows), at least `tokens.len()`;
    ///   defaults to `tokens.len()`. Ids past the tokens are never allowed.
    pub fn new(tokens: Vec<Option<Vec<u8>>>, special_ids: &[u32], eos_ids: &[u32], size: Option<usize>) -> Result<Vocabulary> {
        Self::with_limits(tokens, special_ids, eos_ids, size, &Limits::default())
    }

    /// [`Vocabulary::new`] under `limits` (`max_vocab_size` bounds `size`).
    pub fn with_limits(
        tokens: Vec<Option<Vec<u8>>>,
        special_ids: &[u32],
        eos_ids: &[u32],
        size: Option<usize>,
        limits: &Limits,
    ) -> Result<Vocabulary> {
        let size = size.unwrap_or(tokens.len());
        if size < tokens.len() {
            return Err(Error::Vocabulary(format!("size {size} is smaller than the number of token ids {}", tokens.len())));
        }
        if size > limits.max_vocab_size || size >= u32::MAX as usize {
            return Err(Error::LimitExceeded {
                limit: "max_vocab_size",
                value: limits.max_vocab_size,
                context: format!("a vocabulary of size {size}"),
            });
        }
        if eos_ids.is_empty() {
            return Err(Error::Vocabulary("no EOS token id given".into()));
        }
        let mut kinds: Vec<TokenKind> = tokens
            .iter()
            .map(|t| match t {
                Some(b) if !b.is_empty() => TokenKind::Normal,
                _ => TokenKind::Missing,
            })
            .collect();
        kinds.resize(size, TokenKind::Missing);
        for &id in special_ids {
            let slot = kinds
                .get_mut(id as usize)
                .ok_or_else(|| Error::Vocabulary(format!("special token id {id} is not below size {size}")))?;
            *slot = TokenKind::Special;
        }
        for &id in eos_ids {
            let slot = kinds
                .get_mut(id as usize)
                .ok_or_else(|| Error::Vocabulary(format!("EOS token id {id} is not below size {size}")))?;
            *slot = TokenKind::Eos;
        }
        let mut bytes = Vec::new();
        let mut offsets = Vec::with_capacity(size + 1);
        offsets.push(0u32);
        for (id, t) in tokens.iter().enumerate() {
            if let Some(b) = t {
                if b.len() > u16::MAX as usize {
                    return Err(Error::Vocabulary(format!(
                        "token {id} is {} bytes long; the longest supported is {}",
                        b.len(),
                        u16::MAX
                    )));
                }
                bytes.extend_from_slice(b);
            }
            if bytes.len() >= u32::MAX as usize {
                return Err(Error::Vocabulary("token bytes exceed 4 GiB".into()));
            }
            offsets.push(bytes.len() as u32);
        }
        offsets.resize(size + 1, bytes.len() as u32);
        let mut eos: Vec<u32> = eos_ids.to_vec();
        eos.sort_unstable();
        eos.dedup();
        let normal: Vec<(u32, &[u8])> = (0..tokens.len())
            .filter(|&i| kinds[i] == TokenKind::Normal)
            .map(|i| (i as u32, &bytes[offsets[i] as usize..offsets[i + 1] as usize]))
            .collect();
        let trie = TokenTrie::build(&normal);
        let mut h = Fnv::new();
        h.write_u64(size as u64);
        for (i, k) in kinds.iter().enumerate() {
            h.write(&[*k as u8]);
            h.write(&bytes[offsets[i] as usize..offsets[i + 1] as usize]);
            h.write(&[0xff]);
        }
        let vocab = Vocabulary {
            bytes,
            offsets,
            kinds,
            eos,
            size,
            trie,
            fingerprint: h.0,
            string_safe_slices: Default::default(),
            safe_with_byte: Default::default(),
            safe_len_le: Default::default(),
            safe_chars_le: Default::default(),
            safe_byte_weight: Default::default(),
            safe_ids_with_rare_byte: Default::default(),
            holding_cache: Default::default(),
            quote_tokens: Default::default(),
            readings_cache: Default::default(),
            origin: None,
        };
        // Built now rather than on first use: it is part of loading a vocabulary (once per
        // tokenizer), not of the first mask of some grammar.
        vocab.string_safe_slices();
        vocab.safe_with_byte();
        vocab.safe_len_le();
        vocab.safe_chars_le();
        vocab.safe_byte_weight();
        vocab.safe_ids_with_rare_byte();
        vocab.quote_tokens();
        Ok(vocab)
    }

    /// The logits width: number of ids a mask covers.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Number of int32 words in one mask row: `ceil(size / 32)`.
    pub fn mask_words(&self) -> usize {
        self.size.div_ceil(32)
    }

    /// The exact bytes of token `id` (empty for special, EOS and missing ids).
    pub fn token_bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        if i >= self.size || self.kinds[i] != TokenKind::Normal {
            return &[];
        }
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The raw bytes stored for `id`, whatever its kind (e.g. a special token's text).
    pub fn raw_token_bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        if i >= self.size {
            return &[];
        }
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The kind of token `id` (`Missing` past the end).
    pub fn kind(&self, id: u32) -> TokenKind {
        self.kinds.get(id as usize).copied().unwrap_or(TokenKind::Missing)
    }

    /// The end-of-sequence ids, sorted.
    pub fn eos_ids(&self) -> &[u32] {
        &self.eos
    }

    /// The token trie over all normal tokens.
    pub fn trie(&self) -> &TokenTrie {
        &self.trie
    }

    /// The normal tokens whose bytes start with `prefix` (see [`TokenTrie::with_prefix`]).
    pub fn tokens_with_prefix(&self, prefix: &[u8]) -> &[u32] {
        self.trie.with_prefix(prefix)
    }

    /// A content hash of the whole vocabulary (bytes, kinds, size).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Heap bytes used.
    pub fn memory_bytes(&self) -> usize {
        let slices: usize = self.string_safe_slices.get().map_or(0, |v| v.iter().map(StringSafeSlice::memory_bytes).sum());
        let masks = |m: &std::sync::OnceLock<Vec<Vec<u32>>>| m.get().map_or(0, |v| v.iter().map(|b| b.len() * 4).sum::<usize>());
        self.bytes.len()
            + self.offsets.len() * 4
            + self.kinds.len()
            + self.trie.memory_bytes()
            + slices
            + masks(&self.safe_with_byte)
            + masks(&self.safe_len_le)
            + masks(&self.safe_chars_le)
            + self.safe_ids_with_rare_byte.get().map_or(0, |v| v.iter().flatten().map(|ids| ids.len() * 4).sum::<usize>())
    }
}
