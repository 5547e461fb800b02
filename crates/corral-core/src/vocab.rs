//! The vocabulary: token id → exact bytes, EOS ids, and the token trie the masks walk.
//!
//! Grammar code meets the vocabulary only through [`TokenTrie::walk`] and a
//! [`ByteRecognizer`], and through the plain-token masks a DFA state is checked against
//! ([`Vocabulary::plain_slice_mask`]): it sees bytes, never token strings.

use crate::dfa::{Dfa, PlainRisk, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;

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

/// One node of the flattened trie. Nodes are stored in depth-first preorder, so a node's
/// subtree is the index range `self+1 .. subtree_end`, and skipping a dead subtree is one jump.
#[derive(Debug, Clone, Copy)]
struct TrieNode {
    /// One past the last node of this node's subtree.
    subtree_end: u32,
    /// Tokens ending at this node are `token_ids[tokens_start .. next node's tokens_start]`.
    tokens_start: u32,
    /// Depth = length of the byte string this node spells.
    depth: u16,
    /// The last byte of the string this node spells.
    byte: u8,
}

/// Something that reads bytes one at a time and can undo them: a DFA state stack, a parser.
pub trait ByteRecognizer {
    /// Tries to read `byte`. Returns false (and changes nothing) if no match can follow.
    fn push_byte(&mut self, byte: u8) -> bool;
    /// Undoes the last `n` successful `push_byte` calls.
    fn pop_bytes(&mut self, n: usize);
}

/// A trie over the byte strings of all normal tokens.
#[derive(Debug, Clone)]
pub struct TokenTrie {
    nodes: Vec<TrieNode>,
    token_ids: Vec<u32>,
    max_depth: usize,
    /// Per node: the bytes of its children, folded to 64 bits (bit `byte % 64`), for a
    /// quick "can any child start one of these terminals?" test.
    child_bits: Vec<u64>,
}

impl TokenTrie {
    /// Builds the trie of `(id, bytes)` pairs (bytes non-empty, at most 65535 long).
    fn build(tokens: &[(u32, &[u8])]) -> TokenTrie {
        let mut order: Vec<usize> = (0..tokens.len()).collect();
        order.sort_unstable_by(|&a, &b| tokens[a].1.cmp(tokens[b].1).then(tokens[a].0.cmp(&tokens[b].0)));
        let mut nodes = vec![TrieNode { subtree_end: 0, tokens_start: 0, depth: 0, byte: 0 }];
        let mut token_ids = Vec::with_capacity(tokens.len());
        // open[d] = index of the node at depth d on the current path.
        let mut open: Vec<usize> = vec![0];
        let mut prev: &[u8] = &[];
        let mut max_depth = 0;
        for &k in &order {
            let (id, bytes) = tokens[k];
            let lcp = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            while open.len() > lcp + 1 {
                let done = open.pop().unwrap_or(0);
                nodes[done].subtree_end = nodes.len() as u32;
            }
            for (d, &byte) in bytes.iter().enumerate().skip(lcp) {
                open.push(nodes.len());
                nodes.push(TrieNode { subtree_end: 0, tokens_start: token_ids.len() as u32, depth: (d + 1) as u16, byte });
            }
            // Sorted order guarantees the last node is the one spelling `bytes`.
            token_ids.push(id);
            max_depth = max_depth.max(bytes.len());
            prev = bytes;
        }
        while let Some(done) = open.pop() {
            nodes[done].subtree_end = nodes.len() as u32;
        }
        // Sentinel so that the last node's token range has an end.
        nodes.push(TrieNode { subtree_end: 0, tokens_start: token_ids.len() as u32, depth: 0, byte: 0 });
        let mut child_bits = vec![0u64; nodes.len()];
        // Each node's parent is the nearest earlier node one level up (preorder).
        let mut path: Vec<usize> = vec![0];
        for (i, node) in nodes.iter().enumerate().take(nodes.len() - 1).skip(1) {
            path.truncate(node.depth as usize);
            if let Some(&parent) = path.last() {
                child_bits[parent] |= 1 << (node.byte & 63);
            }
            path.push(i);
        }
        TokenTrie { nodes, token_ids, max_depth, child_bits }
    }

    /// For each node of `sub` (a trie over some of this trie's tokens), the node of this
    /// trie that spells the same bytes.
    fn map_nodes(&self, sub: &TokenTrie) -> Vec<u32> {
        let mut out = vec![0u32; sub.nodes.len()];
        // path[d]: this trie's node for the current `sub` node's ancestor at depth d.
        let mut path: Vec<u32> = vec![0];
        let last = sub.nodes.len() - 1;
        for (slot, node) in out[1..last].iter_mut().zip(&sub.nodes[1..last]) {
            path.truncate(node.depth as usize);
            let parent = *path.last().unwrap_or(&0);
            // Every prefix of a token of `sub` is a node here: the child always exists.
            let here = self.children(parent).find(|&(_, b)| b == node.byte).map_or(0, |(c, _)| c);
            *slot = here;
            path.push(here);
        }
        out
    }

    /// Number of trie nodes (the root included).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Length in bytes of the longest token.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Walks the trie with `rec`, pruning every subtree whose prefix `rec` rejects, and calls
    /// `allow(token_id)` for every token whose whole byte string `rec` read. `rec` is left as
    /// it was.
    pub fn walk<R: ByteRecognizer, F: FnMut(u32)>(&self, rec: &mut R, mut allow: F) {
        self.walk_nodes(0, rec, |_, _, tokens| tokens.iter().for_each(|&t| allow(t)));
    }

    /// Walks the subtree below `root` (0 = the whole trie; `rec` stands at `root`'s
    /// string). After each byte `rec` accepts, calls `on_node(rec, node, tokens)` with the
    /// node's index and the tokens ending there. `rec` is left as it was.
    pub fn walk_nodes<R: ByteRecognizer, F: FnMut(&mut R, u32, &[u32])>(&self, root: u32, rec: &mut R, mut on_node: F) {
        let nodes = &self.nodes[..];
        let root = root as usize;
        let end = if root == 0 { nodes.len() - 1 } else { nodes[root].subtree_end as usize };
        let base = nodes[root].depth as usize;
        let mut depth = 0usize; // bytes pushed into rec below the root
        let mut i = root + 1;
        while i < end {
            let node = nodes[i];
            let parent_depth = node.depth as usize - 1 - base;
            if depth > parent_depth {
                rec.pop_bytes(depth - parent_depth);
                depth = parent_depth;
            }
            if rec.push_byte(node.byte) {
                depth += 1;
                let (a, b) = (node.tokens_start as usize, nodes[i + 1].tokens_start as usize);
                on_node(rec, i as u32, &self.token_ids[a..b]);
                i += 1;
            } else {
                i = node.subtree_end as usize;
            }
        }
        rec.pop_bytes(depth);
    }

    /// The bytes of `node`'s children, folded to 64 bits (bit `byte % 64`).
    #[inline]
    pub fn child_bits(&self, node: u32) -> u64 {
        self.child_bits[node as usize]
    }

    /// Does `node` have children (longer tokens below it)?
    pub fn has_children(&self, node: u32) -> bool {
        self.nodes[node as usize].subtree_end > node + 1
    }

    /// The tokens whose bytes end exactly at `node`.
    pub fn tokens_at(&self, node: u32) -> &[u32] {
        let i = node as usize;
        &self.token_ids[self.nodes[i].tokens_start as usize..self.nodes[i + 1].tokens_start as usize]
    }

    /// The tokens whose bytes start with `prefix` (`prefix` itself included), in byte
    /// order: the subtree of the node that spells `prefix`, found in `prefix.len()` steps.
    pub fn with_prefix(&self, prefix: &[u8]) -> &[u32] {
        let mut node = 0u32;
        for &b in prefix {
            match self.children(node).find(|&(_, c)| c == b) {
                Some((child, _)) => node = child,
                None => return &[],
            }
        }
        let n = &self.nodes[node as usize];
        &self.token_ids[n.tokens_start as usize..self.nodes[n.subtree_end as usize].tokens_start as usize]
    }

    /// The children of `node`: (index, byte) pairs.
    pub fn children(&self, node: u32) -> impl Iterator<Item = (u32, u8)> + '_ {
        let end = self.nodes[node as usize].subtree_end;
        let mut i = node + 1;
        std::iter::from_fn(move || {
            if i >= end {
                return None;
            }
            let idx = i;
            let n = self.nodes[i as usize];
            i = n.subtree_end;
            Some((idx, n.byte))
        })
    }

    /// Heap bytes used.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * (std::mem::size_of::<TrieNode>() + 8) + self.token_ids.len() * 4
    }
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
    /// The plain-token slices (see [`PlainSlice`]), built with the vocabulary.
    plain_slices: std::sync::OnceLock<Vec<PlainSlice>>,
    /// Per byte, the plain-fragment tokens that hold it, as mask bits (empty for a byte
    /// that is not plain), then (index 256) those holding any byte from 0x80 up: which
    /// slice tokens a risky byte touches (see [`Vocabulary::plain_slice_mask`]).
    plain_with_byte: std::sync::OnceLock<Vec<Vec<u32>>>,
    /// Per length `n` up to [`MAX_SAFE_LEN`], the plain-fragment tokens of at most `n`
    /// bytes, as mask bits (see [`crate::dfa::PlainRisk::safe_len`]).
    plain_len_le: std::sync::OnceLock<Vec<Vec<u32>>>,
    /// Per byte, how many plain-fragment tokens hold it.
    plain_byte_weight: std::sync::OnceLock<[u32; 256]>,
    /// Recent [`Vocabulary::plain_tokens_holding`] results by byte set: every position of
    /// a counted string (`[a-z0-9-]{0,40}`) asks for the same sets, at ~100 bytes each.
    holding_cache: HoldingCache,
    /// The normal tokens with a `"` byte (see [`Vocabulary::quote_tokens`]).
    quote_tokens: std::sync::OnceLock<QuoteTokens>,
}

/// A normal token with a `"` byte, for the distinct-keys check (see
/// [`crate::json_keys`]).
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

/// Most byte sets [`Vocabulary::plain_tokens_holding`] remembers (16 KiB each at 128k
/// tokens); past this the cache starts over.
const HOLDING_CACHE_SETS: usize = 64;

/// See [`Vocabulary::holding_cache`]; a copy of the vocabulary starts with an empty one.
#[derive(Debug, Default)]
struct HoldingCache(std::sync::Mutex<crate::util::hash::FastMap<[u64; 4], Vec<u32>>>);

impl Clone for HoldingCache {
    fn clone(&self) -> Self {
        HoldingCache::default()
    }
}

/// FNV-1a: a stable content hash for cache keys (not for security).
#[derive(Clone, Copy)]
pub(crate) struct Fnv(pub u64);

impl Fnv {
    pub(crate) fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn write(&mut self, data: &[u8]) {
        for &b in data {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
    pub(crate) fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }
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
            plain_slices: Default::default(),
            plain_with_byte: Default::default(),
            plain_len_le: Default::default(),
            plain_byte_weight: Default::default(),
            holding_cache: Default::default(),
            quote_tokens: Default::default(),
        };
        // Built now rather than on first use: it is part of loading a vocabulary (once per
        // tokenizer), not of the first mask of some grammar.
        vocab.plain_slices();
        vocab.plain_with_byte();
        vocab.plain_len_le();
        vocab.plain_byte_weight();
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
        let slices: usize = self.plain_slices.get().map_or(0, |v| v.iter().map(PlainSlice::memory_bytes).sum());
        let masks = |m: &std::sync::OnceLock<Vec<Vec<u32>>>| m.get().map_or(0, |v| v.iter().map(|b| b.len() * 4).sum::<usize>());
        self.bytes.len()
            + self.offsets.len() * 4
            + self.kinds.len()
            + self.trie.memory_bytes()
            + slices
            + masks(&self.plain_with_byte)
            + masks(&self.plain_len_le)
    }

    /// The plain-token slices, longest bound first.
    pub fn plain_slices(&self) -> &[PlainSlice] {
        self.plain_slices.get_or_init(|| self.build_plain_slices())
    }

    fn plain_with_byte(&self) -> &[Vec<u32>] {
        self.plain_with_byte.get_or_init(|| {
            let mut with_byte = vec![Vec::new(); 256];
            for (b, bits) in with_byte.iter_mut().enumerate() {
                if is_plain_byte(b as u8) {
                    *bits = vec![0u32; self.mask_words()];
                }
            }
            let mut non_ascii = vec![0u32; self.mask_words()];
            for id in 0..self.size as u32 {
                let bytes = self.token_bytes(id);
                if !bytes.is_empty() && is_plain_fragment(bytes) {
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

    fn plain_byte_weight(&self) -> &[u32; 256] {
        self.plain_byte_weight.get_or_init(|| {
            let mut w = [0u32; 256];
            for (b, bits) in self.plain_with_byte().iter().take(256).enumerate() {
                w[b] = bits.iter().map(|x| x.count_ones()).sum();
            }
            w
        })
    }

    /// The plain-fragment tokens holding any byte of `set`, as mask bits.
    fn plain_tokens_holding(&self, set: &[u64; 4]) -> Vec<u32> {
        // A poisoned lock (a thread panicked holding it) still holds whole entries: use it.
        let cache = self.holding_cache.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bits) = cache.get(set) {
            return bits.clone();
        }
        drop(cache);
        let with_byte = self.plain_with_byte();
        // Every byte from 0x80 up (an ASCII-only format refuses them all): one mask.
        let non_ascii = set[2] == u64::MAX && set[3] == u64::MAX;
        let mut out = if non_ascii { with_byte[NON_ASCII].clone() } else { vec![0u32; self.mask_words()] };
        for b in PlainRisk::bytes(set).filter(|&b| !(non_ascii && b >= 0x80)) {
            for (o, w) in out.iter_mut().zip(&with_byte[b as usize]) {
                *o |= w;
            }
        }
        let mut cache = self.holding_cache.0.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= HOLDING_CACHE_SETS {
            cache.clear();
        }
        cache.insert(*set, out.clone());
        out
    }

    fn plain_len_le(&self) -> &[Vec<u32>] {
        self.plain_len_le.get_or_init(|| {
            let mut len_le = vec![vec![0u32; self.mask_words()]; MAX_SAFE_LEN + 1];
            for id in 0..self.size as u32 {
                let bytes = self.token_bytes(id);
                if !bytes.is_empty() && bytes.len() <= MAX_SAFE_LEN && is_plain_fragment(bytes) {
                    for bits in &mut len_le[bytes.len()..] {
                        bits[(id >> 5) as usize] |= 1 << (id & 31);
                    }
                }
            }
            len_le
        })
    }

    /// The mask of a DFA standing in `state` over the tokens of a plain slice, and that
    /// slice (whose `rest` trie is still to be walked); None where no slice applies.
    ///
    /// The first slice, longest bound first, whose [`Dfa::plain_risk`] is known: its tokens
    /// with an `always` byte are refused, those with a `check` byte and longer than
    /// `safe_len` are read one by one (at most [`MAX_CHECKED_TOKENS`], else the next slice
    /// is tried), the others are allowed. Unless `may_accept`, no slice token reaches an
    /// accepting state (so no terminal ends inside one).
    pub(crate) fn plain_slice_mask(&self, dfa: &Dfa, state: u32, may_accept: bool) -> Option<(&PlainSlice, Vec<u32>)> {
        let len_le = self.plain_len_le();
        let weight = self.plain_byte_weight();
        for (i, slice) in self.plain_slices().iter().enumerate() {
            // The longest bound with bytes to check only for a small DFA: its search runs
            // deepest (hundreds of microseconds in a URI's), and the next bound's rest
            // trie is small too.
            let max_check = if i == 0 && dfa.num_states() > DEEP_RISK_MAX_STATES { 0 } else { MAX_CHECK_BYTES };
            let Some(risk) = dfa.plain_risk(state, slice.max_len, may_accept, MAX_DEAD_AT_ONCE, max_check, weight) else {
                continue;
            };
            if risk.is_clear() {
                return Some((slice, slice.bits.clone()));
            }
            let mut always = self.plain_tokens_holding(&risk.always);
            if risk.short_only && risk.safe_len <= MAX_SAFE_LEN {
                // Only tokens up to `safe_len` bytes live, less those with an `always` byte.
                for ((a, &bits), &short) in always.iter_mut().zip(&slice.bits).zip(&len_le[risk.safe_len]) {
                    *a = bits & short & !*a;
                }
                return Some((slice, always));
            }
            let mut check = self.plain_tokens_holding(&risk.check);
            // `check` becomes the tokens to read, `always` the allowed ones.
            let short = &len_le[risk.safe_len.min(MAX_SAFE_LEN)];
            let mut checked = 0u32;
            for (((a, c), &bits), &short) in always.iter_mut().zip(check.iter_mut()).zip(&slice.bits).zip(short) {
                *c = bits & *c & !*a & !short;
                *a = bits & !(*a | *c);
                checked += c.count_ones();
            }
            if checked > MAX_CHECKED_TOKENS {
                continue;
            }
            let mut allowed = always;
            for (w, &word) in check.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    let id = (w as u32) << 5 | word.trailing_zeros();
                    word &= word - 1;
                    let mut q = state;
                    for &b in self.token_bytes(id) {
                        q = dfa.next(q, b);
                        if q == DEAD {
                            break;
                        }
                    }
                    if q != DEAD {
                        allowed[w] |= 1 << (id & 31);
                    }
                }
            }
            return Some((slice, allowed));
        }
        None
    }

    fn build_plain_slices(&self) -> Vec<PlainSlice> {
        let normal: Vec<(u32, &[u8])> = (0..self.size)
            .filter(|&i| self.kinds[i] == TokenKind::Normal)
            .map(|i| (i as u32, &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]))
            .collect();
        let plain: Vec<bool> = normal.iter().map(|(_, b)| is_plain_fragment(b)).collect();
        let longest = normal.iter().zip(&plain).filter(|(_, &p)| p).map(|((_, b), _)| b.len()).max().unwrap_or(0);
        let mut bounds: Vec<usize> = vec![longest];
        bounds.extend(PLAIN_SLICE_BOUNDS.iter().copied().filter(|&b| b < longest));
        bounds
            .into_iter()
            .map(|max_len| {
                let mut bits = vec![0u32; self.mask_words()];
                let mut rest: Vec<(u32, &[u8])> = Vec::new();
                for (&(id, b), &p) in normal.iter().zip(&plain) {
                    if p && b.len() <= max_len {
                        bits[(id >> 5) as usize] |= 1 << (id & 31);
                    } else {
                        rest.push((id, b));
                    }
                }
                let rest = TokenTrie::build(&rest);
                let rest_to_full = self.trie.map_nodes(&rest);
                PlainSlice { max_len, bits, rest, rest_to_full }
            })
            .collect()
    }
}

/// The smaller length bounds of [`PlainSlice`]s (besides the longest plain token): a state
/// that admits every plain text of 16 bytes, but not of any length (inside a string with a
/// `maxLength`, say), still skips most of the vocabulary.
const PLAIN_SLICE_BOUNDS: [usize; 3] = [32, 16, 8];

/// Past this many plain bytes that kill at once (of the 144 a plain fragment may start
/// with), a state is left to the trie walk: few tokens live, and the walk ends quickly
/// (a digit, a hex digit; a terminal's first byte).
const MAX_DEAD_AT_ONCE: usize = 120;

/// Most `check` bytes (see [`Dfa::plain_risk`]) a plain-slice mask takes: an ASCII
/// character class (`[A-Za-z0-9 -]{2,12}` near its end), not every byte (a string's last
/// few characters before its `maxLength`, which the trie walk ends quickly).
const MAX_CHECK_BYTES: usize = 96;

/// Largest DFA whose bytes to check are searched for the longest slice bound.
const DEEP_RISK_MAX_STATES: usize = 256;

/// Longest `safe_len` the plain-slice masks use (see [`Vocabulary::plain_len_le`]); a
/// longer one counts as this.
const MAX_SAFE_LEN: usize = 16;

/// Index in [`Vocabulary::plain_with_byte`] of the mask of plain tokens with a byte from
/// 0x80 up.
const NON_ASCII: usize = 256;

/// Most slice tokens a plain-slice mask reads one by one (about 20 ns each); past this a
/// walk of the trie is about as fast.
const MAX_CHECKED_TOKENS: u32 = 16_384;

pub(crate) use crate::util::bytes::is_plain_byte;

/// Is `bytes` plain text cut from a longer one at a character boundary: plain bytes, whole
/// UTF-8 characters, the last one possibly unfinished?
pub(crate) fn is_plain_fragment(bytes: &[u8]) -> bool {
    let mut u = crate::dfa::Utf8::Boundary;
    for &b in bytes {
        if !is_plain_byte(b) {
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
/// the normal tokens that are plain fragments of at most `max_len` bytes (see
/// [`is_plain_fragment`]), as mask bits, and a trie of all the others. A DFA state that
/// every plain fragment of 1..=`max_len` bytes keeps alive allows the whole slice, so its
/// mask is the slice's bits plus a walk of the (small) rest trie, not of the whole trie.
#[derive(Debug, Clone)]
pub struct PlainSlice {
    /// Longest token in the slice, in bytes.
    pub max_len: usize,
    /// The slice's tokens as mask bits (`ceil(size / 32)` words).
    pub bits: Vec<u32>,
    /// The trie of every other normal token.
    pub rest: TokenTrie,
    /// Per node of `rest`, the node of the full trie that spells the same bytes.
    pub rest_to_full: Vec<u32>,
}

impl PlainSlice {
    /// Heap bytes used.
    pub fn memory_bytes(&self) -> usize {
        self.bits.len() * 4 + self.rest.memory_bytes() + self.rest_to_full.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_with_a_prefix_are_the_trie_subtree() {
        let words: [&[u8]; 7] = [b"a", b"ab", b"abc", b"abd", b"b", b"ba", b"\xc3\xa9"];
        let mut tokens: Vec<Option<Vec<u8>>> = words.iter().map(|w| Some(w.to_vec())).collect();
        tokens.push(None);
        let v = Vocabulary::new(tokens, &[], &[7], None).unwrap();
        for prefix in [&b""[..], b"a", b"ab", b"abc", b"b", b"c", b"\xc3", b"abcd"] {
            let mut got: Vec<u32> = v.tokens_with_prefix(prefix).to_vec();
            got.sort_unstable();
            let want: Vec<u32> = (0..7).filter(|&i| words[i as usize].starts_with(prefix)).collect();
            assert_eq!(got, want, "{prefix:?}");
        }
    }

    /// Accepts any byte string that is a prefix of one of `words`.
    struct PrefixOf {
        words: Vec<Vec<u8>>,
        buf: Vec<u8>,
    }

    impl ByteRecognizer for PrefixOf {
        fn push_byte(&mut self, byte: u8) -> bool {
            self.buf.push(byte);
            if self.words.iter().any(|w| w.starts_with(&self.buf)) {
                true
            } else {
                self.buf.pop();
                false
            }
        }
        fn pop_bytes(&mut self, n: usize) {
            let len = self.buf.len() - n;
            self.buf.truncate(len);
        }
    }

    fn vocab(tokens: &[&str]) -> Vocabulary {
        let mut t: Vec<Option<Vec<u8>>> = tokens.iter().map(|s| Some(s.as_bytes().to_vec())).collect();
        t.push(None); // eos
        let eos = t.len() as u32 - 1;
        Vocabulary::new(t, &[], &[eos], None).unwrap()
    }

    #[test]
    fn trie_walk_matches_brute_force() {
        let toks = ["a", "ab", "abc", "b", "ba", "abc", "c", "bab", "x", "abd"];
        let v = vocab(&toks);
        for words in [vec!["abc"], vec!["ba", "x"], vec!["abdx"], vec![""]] {
            let mut rec = PrefixOf { words: words.iter().map(|w| w.as_bytes().to_vec()).collect(), buf: vec![] };
            let mut got = vec![];
            v.trie().walk(&mut rec, |t| got.push(t));
            got.sort();
            let mut want: Vec<u32> = (0..toks.len() as u32)
                .filter(|&i| words.iter().any(|w| w.as_bytes().starts_with(toks[i as usize].as_bytes())))
                .collect();
            want.sort();
            assert_eq!(got, want, "{words:?}");
            assert!(rec.buf.is_empty());
        }
    }

    #[test]
    fn kinds_and_errors() {
        let v =
            Vocabulary::new(vec![Some(b"a".to_vec()), Some(b"".to_vec()), Some(b"<s>".to_vec())], &[2], &[2], Some(40)).unwrap();
        assert_eq!(v.kind(0), TokenKind::Normal);
        assert_eq!(v.kind(1), TokenKind::Missing);
        assert_eq!(v.kind(2), TokenKind::Eos);
        assert_eq!(v.kind(39), TokenKind::Missing);
        assert_eq!(v.mask_words(), 2);
        assert!(Vocabulary::new(vec![Some(b"a".to_vec())], &[], &[], None).is_err());
        assert!(Vocabulary::new(vec![Some(b"a".to_vec())], &[], &[5], None).is_err());
        assert!(Vocabulary::new(vec![Some(b"a".to_vec()); 4], &[], &[0], Some(2)).is_err());
    }
}
