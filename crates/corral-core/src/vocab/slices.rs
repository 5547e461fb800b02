//! String-safe slices: the vocabulary split, once per length bound, into the tokens that
//! are JSON-string-safe fragments (kept as mask bits) and a trie of the rest, with the
//! per-byte and per-length token sets that masks inside free text combine.

use super::{TokenKind, TokenTrie, Vocabulary};
use crate::automata::char_budget::MAX_CHAR_BUDGET;
use crate::util::bytes::{is_string_safe_byte, set_bytes};

/// Most byte sets [`Vocabulary::safe_tokens_holding`] remembers (16 KiB each at 128k
/// tokens); past this the cache starts over.
const HOLDING_CACHE_SETS: usize = 64;

/// See [`Vocabulary::holding_cache`]; a copy of the vocabulary starts with an empty one.
#[derive(Debug, Default)]
pub(crate) struct HoldingCache(std::sync::Mutex<crate::util::hash::FastMap<[u64; 4], Vec<u32>>>);

impl Clone for HoldingCache {
    fn clone(&self) -> Self {
        HoldingCache::default()
    }
}

impl Vocabulary {
    /// The string-safe slices, longest bound first.
    pub fn string_safe_slices(&self) -> &[StringSafeSlice] {
        self.string_safe_slices.get_or_init(|| self.build_string_safe_slices())
    }

    pub(crate) fn safe_with_byte(&self) -> &[Vec<u32>] {
        self.safe_with_byte.get_or_init(|| {
            let mut with_byte = vec![Vec::new(); 256];
            for (b, bits) in with_byte.iter_mut().enumerate() {
                if is_string_safe_byte(b as u8) {
                    *bits = vec![0u32; self.mask_words()];
                }
            }
            let mut non_ascii = vec![0u32; self.mask_words()];
            for id in 0..self.size as u32 {
                let bytes = self.token_bytes(id);
                if !bytes.is_empty() && is_string_safe_fragment(bytes) {
                    for &b in bytes {
                        with_byte[b as usize][(id >> 5) as usize] |= 1 << (id & 31);
                    }
                    if !bytes.is_ascii() {
                        non_ascii[(id >> 5) as usize] |= 1 << (id & 31);
                    }
                }
            }
            with_byte.push(non_ascii);
            with_byte
        })
    }

    /// Per byte held by at most a quarter as many string-safe tokens as a mask has words,
    /// those tokens' ids (None for the other bytes: their mask in
    /// [`Vocabulary::safe_with_byte`] is cheaper to OR than the ids to set, a word of a pass
    /// costing a fraction of a scattered bit).
    pub(crate) fn safe_ids_with_rare_byte(&self) -> &[Option<Vec<u32>>] {
        self.safe_ids_with_rare_byte.get_or_init(|| {
            let weight = self.safe_byte_weight();
            let rare = self.mask_words() / 4;
            let mut ids: Vec<Option<Vec<u32>>> = weight.iter().map(|&w| (w as usize <= rare).then(Vec::new)).collect();
            for id in 0..self.size as u32 {
                let bytes = self.token_bytes(id);
                if bytes.is_empty() || !is_string_safe_fragment(bytes) {
                    continue;
                }
                for &b in bytes {
                    if let Some(list) = &mut ids[b as usize] {
                        if list.last() != Some(&id) {
                            list.push(id);
                        }
                    }
                }
            }
            ids
        })
    }

    pub(crate) fn safe_byte_weight(&self) -> &[u32; 256] {
        self.safe_byte_weight.get_or_init(|| {
            let mut w = [0u32; 256];
            for (b, bits) in self.safe_with_byte().iter().take(256).enumerate() {
                w[b] = bits.iter().map(|x| x.count_ones()).sum();
            }
            w
        })
    }

    /// The string-safe tokens holding any byte of `set`, as mask bits.
    pub(crate) fn safe_tokens_holding(&self, set: &[u64; 4]) -> Vec<u32> {
        // A poisoned lock (a thread panicked holding it) still holds whole entries: use it.
        let cache = self.holding_cache.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bits) = cache.get(set) {
            return bits.clone();
        }
        drop(cache);
        let with_byte = self.safe_with_byte();
        let rare = self.safe_ids_with_rare_byte();
        // Every byte from 0x80 up (an ASCII-only format refuses them all): one mask.
        let non_ascii = set[2] == u64::MAX && set[3] == u64::MAX;
        let mut out = if non_ascii { with_byte[NON_ASCII].clone() } else { vec![0u32; self.mask_words()] };
        for b in set_bytes(set).filter(|&b| !(non_ascii && b >= 0x80)) {
            // A rare byte's few ids rather than a pass over a whole mask (an email's
            // punctuation: sixty bytes, most in a few hundred tokens).
            match &rare[b as usize] {
                Some(ids) => {
                    for &id in ids {
                        out[(id >> 5) as usize] |= 1 << (id & 31);
                    }
                }
                None => {
                    for (o, w) in out.iter_mut().zip(&with_byte[b as usize]) {
                        *o |= w;
                    }
                }
            }
        }
        let mut cache = self.holding_cache.0.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= HOLDING_CACHE_SETS {
            cache.clear();
        }
        cache.insert(*set, out.clone());
        out
    }

    pub(crate) fn safe_len_le(&self) -> &[Vec<u32>] {
        self.safe_len_le.get_or_init(|| self.safe_tokens_up_to(MAX_SAFE_LEN, <[u8]>::len))
    }

    pub(crate) fn safe_chars_le(&self) -> &[Vec<u32>] {
        // Characters started: every byte but a continuation byte.
        self.safe_chars_le
            .get_or_init(|| self.safe_tokens_up_to(MAX_CHAR_BUDGET, |b| b.iter().filter(|&&x| x & 0xc0 != 0x80).count()))
    }

    /// Per `n` up to `max`, the string-safe tokens whose `measure` is at most `n`, as
    /// mask bits.
    fn safe_tokens_up_to(&self, max: usize, measure: impl Fn(&[u8]) -> usize) -> Vec<Vec<u32>> {
        let mut up_to = vec![vec![0u32; self.mask_words()]; max + 1];
        for id in 0..self.size as u32 {
            let bytes = self.token_bytes(id);
            let m = measure(bytes);
            if !bytes.is_empty() && m <= max && is_string_safe_fragment(bytes) {
                for bits in &mut up_to[m..] {
                    bits[(id >> 5) as usize] |= 1 << (id & 31);
                }
            }
        }
        up_to
    }

    fn build_string_safe_slices(&self) -> Vec<StringSafeSlice> {
        let normal: Vec<(u32, &[u8])> = (0..self.size)
            .filter(|&i| self.kinds[i] == TokenKind::Normal)
            .map(|i| (i as u32, &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]))
            .collect();
        let safe: Vec<bool> = normal.iter().map(|(_, b)| is_string_safe_fragment(b)).collect();
        let longest = normal.iter().zip(&safe).filter(|(_, &p)| p).map(|((_, b), _)| b.len()).max().unwrap_or(0);
        let mut bounds: Vec<usize> = vec![longest];
        bounds.extend(SLICE_BOUNDS.iter().copied().filter(|&b| b < longest));
        bounds
            .into_iter()
            .map(|max_len| {
                let mut bits = vec![0u32; self.mask_words()];
                let mut rest: Vec<(u32, &[u8])> = Vec::new();
                for (&(id, b), &p) in normal.iter().zip(&safe) {
                    if p && b.len() <= max_len {
                        bits[(id >> 5) as usize] |= 1 << (id & 31);
                    } else {
                        rest.push((id, b));
                    }
                }
                let rest = TokenTrie::build(&rest);
                let rest_to_full = self.trie.map_nodes(&rest);
                StringSafeSlice { max_len, bits, rest, rest_to_full }
            })
            .collect()
    }
}

/// The smaller length bounds of [`StringSafeSlice`]s (besides the longest string-safe token): a state
/// that admits every string-safe text of 16 bytes, but not of any length (inside a string with a
/// `maxLength`, say), still skips most of the vocabulary.
const SLICE_BOUNDS: [usize; 3] = [32, 16, 8];

/// Longest `safe_len` the string-safe slice mask use (see [`Vocabulary::safe_len_le`]); a
/// longer one counts as this.
pub(crate) const MAX_SAFE_LEN: usize = 16;

/// Index in [`Vocabulary::safe_with_byte`] of the mask of string-safe tokens with a byte from
/// 0x80 up.
const NON_ASCII: usize = 256;

/// Is `bytes` string-safe text cut from a longer one at a character boundary: string-safe bytes, whole
/// UTF-8 characters, the last one possibly unfinished?
pub(crate) fn is_string_safe_fragment(bytes: &[u8]) -> bool {
    let mut u = crate::util::utf8::Utf8::Boundary;
    for &b in bytes {
        if !is_string_safe_byte(b) {
            return false;
        }
        match u.next(b) {
            Some(next) => u = next,
            None => return false,
        }
    }
    true
}

/// A precomputed split of the vocabulary for masks inside free text (a JSON string body):
/// the normal tokens that are string-safe fragments of at most `max_len` bytes (see
/// `is_string_safe_fragment`), as mask bits, and a trie of all the others. A DFA state that
/// every string-safe fragment of 1..=`max_len` bytes keeps alive allows the whole slice, so its
/// mask is the slice's bits plus a walk of the (small) rest trie, not of the whole trie.
#[derive(Debug, Clone)]
pub struct StringSafeSlice {
    /// Longest token in the slice, in bytes.
    pub max_len: usize,
    /// The slice's tokens as mask bits (`ceil(size / 32)` words).
    pub bits: Vec<u32>,
    /// The trie of every other normal token.
    pub rest: TokenTrie,
    /// Per node of `rest`, the node of the full trie that spells the same bytes.
    pub rest_to_full: Vec<u32>,
}

impl StringSafeSlice {
    /// Heap bytes used.
    pub fn memory_bytes(&self) -> usize {
        self.bits.len() * 4 + self.rest.memory_bytes() + self.rest_to_full.len() * 4
    }
}
