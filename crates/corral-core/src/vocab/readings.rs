//! Readings: the byte strings by which a grammar names whole tokens (`<[151667]>`,
//! `<think>`), and the vocabulary in which those tokens spell them.
//!
//! The engine reads bytes, so a token that a grammar names by id or by text gets a
//! *reading*: a byte string that starts and ends with `0xFF`, a byte UTF-8 never contains.
//!
//! * by id: `FF 80`, the id as six base-64 digits (`0x80 | digit`, most significant
//!   first), `FF`;
//! * by name (the token's exact text): `FF 81`, each byte of the text as two nibbles
//!   (`0x80 | nibble`, high first), `FF`.
//!
//! No byte between the two `FF`s is `FF`, so readings form a prefix-free code, and once
//! the tokens that hold `0xFF` are dropped (see [`Vocabulary::with_readings`]) no run of
//! text tokens can spell a piece of one. A grammar term over readings is then an ordinary
//! terminal, and every mask, trie walk and cache reads it like any bytes.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{TokenKind, Vocabulary};
use crate::error::{Error, Result};
use crate::util::hash::FastMap;

/// The byte that opens and closes every reading.
pub const MARK: u8 = 0xFF;
/// The byte after [`MARK`] in a reading by id.
pub const BY_ID: u8 = 0x80;
/// The byte after [`MARK`] in a reading by name.
pub const BY_NAME: u8 = 0x81;
/// Base-64 digits of an id in its reading.
pub const ID_DIGITS: u32 = 6;

/// The reading of token `id` named by id.
pub fn id_reading(id: u32) -> Vec<u8> {
    let mut out = vec![MARK, BY_ID];
    for k in (0..ID_DIGITS).rev() {
        out.push(0x80 | ((u64::from(id) >> (6 * k)) & 63) as u8);
    }
    out.push(MARK);
    out
}

/// The reading of the token whose text is `name`.
pub fn name_reading(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() * 2 + 3);
    out.extend_from_slice(&[MARK, BY_NAME]);
    for &b in name {
        out.push(0x80 | (b >> 4));
        out.push(0x80 | (b & 15));
    }
    out.push(MARK);
    out
}

/// The tokens a grammar names: by text and by id (ranges, inclusive). Kept sorted and
/// merged, so equal sets compare equal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TokenRefs {
    /// Texts of tokens named by name (`<think>`, `<|im_end|>`).
    pub names: BTreeSet<Vec<u8>>,
    /// Ids named by id, as sorted, disjoint, non-adjacent inclusive ranges.
    pub ids: Vec<(u32, u32)>,
    /// Read the special tokens by id even if no token is named: the grammar writes them
    /// (a run of any tokens), so they must spell their readings.
    pub specials: bool,
}

impl TokenRefs {
    /// Does the grammar name no token?
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.ids.is_empty() && !self.specials
    }

    /// Adds the ids `lo..=hi`.
    pub fn add_ids(&mut self, lo: u32, hi: u32) {
        self.ids.push((lo.min(hi), lo.max(hi)));
        self.ids = merge_ranges(std::mem::take(&mut self.ids));
    }

    /// Adds every token `other` names.
    pub fn extend(&mut self, other: &TokenRefs) {
        self.names.extend(other.names.iter().cloned());
        self.ids.extend_from_slice(&other.ids);
        self.specials |= other.specials;
        self.ids = merge_ranges(std::mem::take(&mut self.ids));
    }

    /// Is `id` named by id?
    pub fn names_id(&self, id: u32) -> bool {
        let k = self.ids.partition_point(|&(_, hi)| hi < id);
        self.ids.get(k).is_some_and(|&(lo, _)| lo <= id)
    }
}

/// Sorted, disjoint, non-adjacent ranges covering the same ids as `ranges`.
pub fn merge_ranges(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if u64::from(lo) <= u64::from(last.1) + 1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// What a derived vocabulary remembers of the one it came from.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// The fingerprint of the vocabulary the readings were added to.
    pub fingerprint: u64,
    /// The text of each token given a reading by id (to write completions back as text).
    pub texts: FastMap<u32, Box<[u8]>>,
}

/// How many vocabularies with readings a vocabulary keeps (one per set of named tokens).
const READINGS_CACHE: usize = 8;

/// The vocabularies with readings made from one vocabulary, most recent last (a clone
/// starts empty).
#[derive(Debug, Default)]
pub(crate) struct ReadingsCache(std::sync::Mutex<Vec<(TokenRefs, Arc<Vocabulary>)>>);

impl Clone for ReadingsCache {
    fn clone(&self) -> Self {
        ReadingsCache::default()
    }
}

impl Vocabulary {
    /// The vocabulary, with the same ids, in which the tokens `refs` names spell their
    /// readings (see the module docs), for compiling a grammar that names tokens:
    ///
    /// * every token named by text reads `FF 81 …`; every token named by id, and every
    ///   other special token, reads `FF 80 …` (so that `!<[id]>*` can allow it);
    /// * a named EOS token becomes an ordinary token of the grammar; an EOS token not named
    ///   stays EOS;
    /// * a token whose bytes hold `0xFF` is dropped.
    ///
    /// Errors name the token: a text no token has, an id past the vocabulary, a single id
    /// with no token, a token named both ways, or every EOS token named. The last
    /// 8 results are kept.
    pub fn with_readings(self: &Arc<Self>, refs: &TokenRefs) -> Result<Arc<Vocabulary>> {
        if refs.is_empty() {
            return Ok(self.clone());
        }
        if let Some(hit) =
            self.readings_cache.0.lock().ok().and_then(|c| c.iter().find(|(r, _)| r == refs).map(|(_, v)| v.clone()))
        {
            return Ok(hit);
        }
        // Built outside the lock: it takes a moment on a large vocabulary.
        let derived = Arc::new(self.build_readings(refs)?);
        if let Ok(mut cache) = self.readings_cache.0.lock() {
            if !cache.iter().any(|(r, _)| r == refs) {
                if cache.len() >= READINGS_CACHE {
                    cache.remove(0);
                }
                cache.push((refs.clone(), derived.clone()));
            }
        }
        Ok(derived)
    }

    fn build_readings(&self, refs: &TokenRefs) -> Result<Vocabulary> {
        let by_name = self.ids_by_name(refs)?;
        self.check_ids(refs, &by_name)?;
        let mut tokens: Vec<Option<Vec<u8>>> = Vec::with_capacity(self.size);
        let mut texts = FastMap::default();
        let mut eos = Vec::new();
        let mut named_eos = 0;
        for id in 0..self.size as u32 {
            let raw = self.raw_token_bytes(id);
            let kind = self.kind(id);
            let named = by_name.contains_key(&id) || refs.names_id(id);
            let token = match kind {
                TokenKind::Missing => None,
                _ if by_name.contains_key(&id) => Some(name_reading(raw)),
                _ if named || kind == TokenKind::Special => {
                    texts.insert(id, raw.into());
                    Some(id_reading(id))
                }
                // Kept as EOS; its text stays for display.
                TokenKind::Eos => Some(raw.to_vec()),
                _ if raw.contains(&MARK) => None,
                _ => Some(raw.to_vec()),
            };
            match kind {
                TokenKind::Eos if named => named_eos += 1,
                TokenKind::Eos => eos.push(id),
                _ => {}
            }
            tokens.push(token);
        }
        if eos.is_empty() {
            return Err(Error::Vocabulary(format!(
                "the grammar names every end-of-sequence token ({named_eos} of them): one must stay to end the output"
            )));
        }
        // The same size as this vocabulary, which its own limits allowed.
        let limits = crate::limits::Limits {
            max_vocab_size: self.size.max(crate::limits::Limits::default().max_vocab_size),
            ..Default::default()
        };
        let mut v = Vocabulary::with_limits(tokens, &[], &eos, Some(self.size), &limits)?;
        v.origin = Some(Box::new(Origin { fingerprint: self.origin_fingerprint(), texts }));
        Ok(v)
    }

    /// The ids of the tokens named by text, with that text; an error for a text no token has.
    fn ids_by_name(&self, refs: &TokenRefs) -> Result<FastMap<u32, Vec<u8>>> {
        let mut out = FastMap::default();
        if refs.names.is_empty() {
            return Ok(out);
        }
        for id in 0..self.size as u32 {
            let raw = self.raw_token_bytes(id);
            if self.kind(id) != TokenKind::Missing && refs.names.contains(raw) {
                out.insert(id, raw.to_vec());
            }
        }
        for name in &refs.names {
            if !out.values().any(|n| n == name) {
                return Err(Error::Vocabulary(format!(
                    "the grammar names token {}, which the vocabulary does not have",
                    show(name)
                )));
            }
        }
        Ok(out)
    }

    /// Ids named by id must be tokens of the vocabulary, and not also named by text.
    fn check_ids(&self, refs: &TokenRefs, by_name: &FastMap<u32, Vec<u8>>) -> Result<()> {
        for &(lo, hi) in &refs.ids {
            if hi as usize >= self.size {
                return Err(Error::Vocabulary(format!(
                    "the grammar names token id {hi}, past the vocabulary's {} ids",
                    self.size
                )));
            }
            if lo == hi && self.kind(lo) == TokenKind::Missing {
                return Err(Error::Vocabulary(format!("the grammar names token id {lo}, which has no token")));
            }
        }
        for (&id, name) in by_name {
            if refs.names_id(id) {
                return Err(Error::Vocabulary(format!(
                    "the grammar names token {id} both by its text {} and by its id: use one form",
                    show(name)
                )));
            }
        }
        Ok(())
    }

    /// The fingerprint of the vocabulary this one was derived from by
    /// [`Vocabulary::with_readings`] (its own for any other): grammars compiled for
    /// vocabularies with equal origins give masks over the same ids.
    pub fn origin_fingerprint(&self) -> u64 {
        self.origin.as_ref().map_or(self.fingerprint, |o| o.fingerprint)
    }

    /// `bytes` with every reading written back as its token's text (for completions).
    pub fn spell_readings(&self, bytes: Vec<u8>) -> Vec<u8> {
        let Some(origin) = &self.origin else { return bytes };
        if !bytes.contains(&MARK) {
            return bytes;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let end = (bytes[i] == MARK).then(|| bytes[i + 1..].iter().position(|&b| b == MARK)).flatten();
            let Some(len) = end else {
                out.push(bytes[i]);
                i += 1;
                continue;
            };
            let close = i + 1 + len;
            let body = &bytes[(i + 2).min(close)..close];
            match bytes.get(i + 1) {
                Some(&BY_ID) => {
                    let id = body.iter().fold(0u64, |n, &d| n * 64 + u64::from(d & 63));
                    if let Some(text) = u32::try_from(id).ok().and_then(|id| origin.texts.get(&id)) {
                        out.extend_from_slice(text);
                    }
                }
                _ => out.extend(body.chunks(2).map(|p| ((p[0] & 15) << 4) | p.get(1).map_or(0, |b| b & 15))),
            }
            i += len + 2;
        }
        out
    }
}

/// A token's text for messages.
fn show(text: &[u8]) -> String {
    format!("`{}`", String::from_utf8_lossy(text))
}
