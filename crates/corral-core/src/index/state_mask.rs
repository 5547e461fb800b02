//! A set of allowed token ids as masks are cached: a bitmap where many tokens are
//! allowed, a sorted id list where few are (most states of most patterns allow a handful),
//! and the list of the few refused where nearly all are (free text).

/// The allowed tokens of one automaton state.
#[derive(Debug)]
pub(crate) struct StateMask {
    repr: MaskRepr,
    /// Number of allowed token ids (EOS included).
    pub(crate) count: u32,
    /// The allowed token when `count == 1`.
    pub(crate) only: Option<u32>,
}

/// Dense bitmaps for states that allow many tokens; sorted id lists for the rest
/// (most states of most patterns allow a handful of tokens); for states that allow
/// nearly every token (free text), what is left clear: writing such a mask is a fill and
/// a few clears, not a copy of a whole row (16 KB at 128k tokens).
#[derive(Debug)]
enum MaskRepr {
    Dense(Box<[u32]>),
    Sparse(Box<[u32]>),
    AllBut(AllBut),
}

/// A mask that allows nearly every token: the runs of words with no bit set, and the
/// words with some bits clear (padding bits included), each with its index. Every other
/// word is all ones, so writing it is a few fills and a few stores: a vector pass, not a
/// test per word.
#[derive(Debug)]
struct AllBut {
    zero_words: Box<[(u32, u32)]>,
    partial: Box<[(u32, u32)]>,
}

impl AllBut {
    /// The representation of `bits`, of which `count` are set, when it is small enough to
    /// pay (None otherwise).
    fn of(bits: &[u32], count: u32) -> Option<AllBut> {
        // Most rows asked are text that refuses a few thousand scattered tokens: a count of
        // the empty words (one vector pass) tells how many clear bits lie outside them
        // before the slow scan that lists them.
        let zero = bits.iter().filter(|&&w| w == 0).count();
        let scattered = (bits.len() * 32).saturating_sub(count as usize + zero * 32);
        if scattered > bits.len() / 4 {
            return None;
        }
        let (mut zero_words, mut partial) = (Vec::new(), Vec::new());
        let mut w = 0;
        while w < bits.len() {
            if bits[w] == 0 {
                let start = w;
                while w < bits.len() && bits[w] == 0 {
                    w += 1;
                }
                zero_words.push((start as u32, w as u32));
                continue;
            }
            if bits[w] != u32::MAX {
                partial.push((w as u32, bits[w]));
                if 2 * (partial.len() + zero_words.len()) > bits.len() / 4 {
                    return None;
                }
            }
            w += 1;
        }
        Some(AllBut { zero_words: zero_words.into_boxed_slice(), partial: partial.into_boxed_slice() })
    }

    /// Writes the mask into `out` (`or`: ORs it in): the all-ones runs between the
    /// listed words are filled, the partial words stored (or OR'd), the empty runs
    /// cleared (or left).
    fn put(&self, out: &mut [u32], or: bool) {
        let (mut z, mut p, mut w) = (0, 0, 0);
        while w < out.len() {
            let next_zero = self.zero_words.get(z).map_or(out.len(), |&(a, _)| a as usize);
            let next_part = self.partial.get(p).map_or(out.len(), |&(i, _)| i as usize);
            let next = next_zero.min(next_part);
            if w < next {
                out[w..next].fill(u32::MAX);
                w = next;
            } else if next == next_zero {
                let end = self.zero_words[z].1 as usize;
                if !or {
                    out[w..end].fill(0);
                }
                z += 1;
                w = end;
            } else {
                let v = self.partial[p].1;
                out[w] = if or { out[w] | v } else { v };
                p += 1;
                w += 1;
            }
        }
    }

    fn write(&self, out: &mut [u32]) {
        self.put(out, false);
    }

    fn or_into(&self, out: &mut [u32]) {
        self.put(out, true);
    }

    fn memory_bytes(&self) -> usize {
        (self.zero_words.len() + self.partial.len()) * 8
    }
}

/// Collects a walk's allowed tokens: as ids while they are few, as a row of bits once
/// they are many (a walk over most of a large vocabulary would otherwise grow a list of
/// a hundred thousand ids, which costs more than the walk itself).
pub(crate) struct TokenCollector {
    ids: Vec<u32>,
    bits: Option<Vec<u32>>,
    words: usize,
}

impl TokenCollector {
    /// An empty set over rows of `words` words.
    pub(crate) fn new(words: usize) -> TokenCollector {
        TokenCollector { ids: Vec::new(), bits: None, words }
    }

    /// Adds `tokens`.
    #[inline]
    pub(crate) fn extend(&mut self, tokens: &[u32]) {
        match &mut self.bits {
            Some(bits) => {
                for &t in tokens {
                    bits[(t >> 5) as usize] |= 1 << (t & 31);
                }
            }
            None => {
                self.ids.extend_from_slice(tokens);
                // Past this, the mask is dense anyway (see `StateMask::from_ids`).
                if self.ids.len() > self.words / 4 {
                    self.bits = Some(bits_of(&self.ids, self.words));
                    self.ids = Vec::new();
                }
            }
        }
    }

    /// Adds the tokens of `mask`.
    pub(crate) fn add_mask(&mut self, mask: &StateMask) {
        match &mask.repr {
            MaskRepr::Sparse(ids) => self.extend(ids),
            _ => {
                let words = self.words;
                let bits = self.bits.get_or_insert_with(|| bits_of(&std::mem::take(&mut self.ids), words));
                mask.or_into(bits);
            }
        }
    }

    /// The collected set.
    pub(crate) fn into_mask(self) -> StateMask {
        match self.bits {
            Some(bits) => StateMask::from_bits(bits),
            None => StateMask::from_ids(self.ids, self.words),
        }
    }
}

/// Where a walk puts the tokens it allows: a row of bits (a mask being filled), or a
/// [`TokenCollector`] (a mask to keep, often of a few tokens).
pub(crate) trait TokenSink {
    /// Adds `tokens`.
    fn add(&mut self, tokens: &[u32]);
}

impl TokenSink for [u32] {
    #[inline]
    fn add(&mut self, tokens: &[u32]) {
        for &t in tokens {
            self[(t >> 5) as usize] |= 1 << (t & 31);
        }
    }
}

impl TokenSink for TokenCollector {
    #[inline]
    fn add(&mut self, tokens: &[u32]) {
        self.extend(tokens);
    }
}

impl StateMask {
    /// The mask of the set bits of `bits` (one row).
    pub(crate) fn from_bits(bits: Vec<u32>) -> StateMask {
        let count = count_bits(&bits);
        StateMask::from_counted_bits(bits, count)
    }

    /// The mask of `bits`, of which `count` are set (a mask just filled knows its count:
    /// counting a row again costs a pass over 16 KB at 128k tokens).
    pub(crate) fn from_counted_bits(bits: Vec<u32>, count: u32) -> StateMask {
        debug_assert_eq!(count, count_bits(&bits));
        let only = if count == 1 {
            bits.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, &w)| (i * 32) as u32 + w.trailing_zeros())
        } else {
            None
        };
        if (count as usize) > bits.len() * 24 {
            if let Some(all_but) = AllBut::of(&bits, count) {
                return StateMask { repr: MaskRepr::AllBut(all_but), count, only };
            }
        }
        if (count as usize) > bits.len() / 4 {
            return StateMask { repr: MaskRepr::Dense(bits.into_boxed_slice()), count, only };
        }
        let mut ids = Vec::with_capacity(count as usize);
        // A sparse row is mostly empty words: they are skipped a block at a time (the OR
        // of a block compiles to a few vector instructions, a test per word does not).
        for (b, block) in bits.chunks(SKIP_BLOCK).enumerate() {
            if block.iter().fold(0, |a, &w| a | w) == 0 {
                continue;
            }
            for (i, &word) in block.iter().enumerate() {
                let base = ((b * SKIP_BLOCK + i) * 32) as u32;
                let mut x = word;
                while x != 0 {
                    ids.push(base + x.trailing_zeros());
                    x &= x - 1;
                }
            }
        }
        StateMask { repr: MaskRepr::Sparse(ids.into_boxed_slice()), count, only }
    }

    /// The mask of token `ids` (any order, repeats allowed) over rows of `words` words.
    pub(crate) fn from_ids(mut ids: Vec<u32>, words: usize) -> StateMask {
        if ids.len() > words / 4 {
            return StateMask::from_bits(bits_of(&ids, words));
        }
        ids.sort_unstable();
        // (Walks below nested end nodes meet a token once per node above it.)
        ids.dedup();
        let count = ids.len() as u32;
        let only = if count == 1 { Some(ids[0]) } else { None };
        StateMask { repr: MaskRepr::Sparse(ids.into_boxed_slice()), count, only }
    }

    /// Is it kept as a row of bits (dense, or nearly every token), so that writing it costs
    /// a pass over a whole row?
    pub(crate) fn is_row(&self) -> bool {
        !matches!(self.repr, MaskRepr::Sparse(_))
    }

    /// ORs the mask into `out`.
    pub(crate) fn or_into(&self, out: &mut [u32]) {
        match &self.repr {
            MaskRepr::Dense(bits) => {
                for (o, &w) in out.iter_mut().zip(bits.iter()) {
                    *o |= w;
                }
            }
            MaskRepr::Sparse(ids) => {
                for &t in ids.iter() {
                    out[(t >> 5) as usize] |= 1 << (t & 31);
                }
            }
            MaskRepr::AllBut(all_but) => all_but.or_into(out),
        }
    }

    /// ORs the mask into `out`; for a list of ids, returns how many bits it set that were
    /// clear (a row's union with `out` is left for the caller to count).
    pub(crate) fn or_into_counting(&self, out: &mut [u32]) -> Option<u32> {
        let MaskRepr::Sparse(ids) = &self.repr else {
            self.or_into(out);
            return None;
        };
        let mut added = 0;
        for &t in ids.iter() {
            let (word, bit) = ((t >> 5) as usize, 1 << (t & 31));
            added += u32::from(out[word] & bit == 0);
            out[word] |= bit;
        }
        Some(added)
    }

    /// Writes the mask into `out` (one row of `mask_words` words).
    pub(crate) fn write(&self, out: &mut [u32]) {
        match &self.repr {
            MaskRepr::Dense(bits) => out.copy_from_slice(bits),
            MaskRepr::Sparse(ids) => {
                out.fill(0);
                for &t in ids.iter() {
                    out[(t >> 5) as usize] |= 1 << (t & 31);
                }
            }
            MaskRepr::AllBut(all_but) => all_but.write(out),
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.repr {
                MaskRepr::Dense(b) | MaskRepr::Sparse(b) => b.len() * 4,
                MaskRepr::AllBut(a) => a.memory_bytes(),
            }
    }
}

/// Words of a sparse row tested together for bits (see `StateMask::from_counted_bits`).
const SKIP_BLOCK: usize = 16;

/// The number of set bits of `row`.
pub(crate) fn count_bits(row: &[u32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { count_bits_avx2(row) };
    }
    count_bits_portable(row)
}

/// [`count_bits`] compiled for AVX2: x86-64's baseline has no popcount instruction, and
/// the count of a new parser state's 129k-token row was most of the time its mask spent
/// outside the lexer and the parser; AVX2's byte shuffles count it several times faster.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_bits_avx2(row: &[u32]) -> u32 {
    count_bits_portable(row)
}

/// [`count_bits`] in plain code (inlined into the AVX2 version, which compiles it anew).
#[inline(always)]
fn count_bits_portable(row: &[u32]) -> u32 {
    // Counted by pairs of words: without a popcount instruction in the target's baseline,
    // the vectorized count of 64-bit lanes takes about two thirds of the time of 32-bit ones.
    let mut pairs = row.chunks_exact(2);
    let wide: u64 = pairs.by_ref().map(|p| u64::from((u64::from(p[0]) | u64::from(p[1]) << 32).count_ones())).sum();
    wide as u32 + pairs.remainder().iter().map(|w| w.count_ones()).sum::<u32>()
}

/// `ids` as a row of `words` words of bits.
fn bits_of(ids: &[u32], words: usize) -> Vec<u32> {
    let mut bits = vec![0u32; words];
    for &t in ids {
        bits[(t >> 5) as usize] |= 1 << (t & 31);
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every representation writes and ORs the bits it was made from.
    #[test]
    fn representations_write_their_bits() {
        let words = 64;
        let mut rows: Vec<Vec<u32>> = vec![vec![0; words], vec![u32::MAX; words]];
        let mut nearly = vec![u32::MAX; words];
        nearly[3] = 0;
        nearly[4] = 0;
        nearly[10] &= !(1 << 7);
        nearly[words - 1] = 0x0000_ffff;
        rows.push(nearly);
        // Runs that touch the row's ends and each other: an empty word first, a partial
        // word right after it and before an empty run, an empty run to the end.
        let mut edges = vec![u32::MAX; words];
        edges[0] = 0;
        edges[1] = !(1 << 4);
        edges[2] = 0;
        edges[words - 3..].fill(0);
        assert!(matches!(StateMask::from_bits(edges.clone()).repr, MaskRepr::AllBut(_)));
        rows.push(edges);
        let mut few = vec![0; words];
        few[5] = 0b1001;
        rows.push(few);
        let mut half = vec![0; words];
        half.iter_mut().step_by(2).for_each(|w| *w = u32::MAX);
        rows.push(half);
        let mut kinds = Vec::new();
        for bits in rows {
            let mask = StateMask::from_bits(bits.clone());
            kinds.push(std::mem::discriminant(&mask.repr));
            let mut out = vec![0x5555_5555; words];
            mask.write(&mut out);
            assert_eq!(out, bits);
            let mut or = vec![0x0101_0101; words];
            mask.or_into(&mut or);
            let want: Vec<u32> = bits.iter().map(|b| b | 0x0101_0101).collect();
            assert_eq!(or, want);
            let mut counted = vec![0x0101_0101; words];
            let added = mask.or_into_counting(&mut counted);
            assert_eq!(counted, want);
            let new_bits: u32 = bits.iter().map(|b| (b & !0x0101_0101).count_ones()).sum();
            assert!(added.is_none_or(|a| a == new_bits), "{added:?} bits counted as new, {new_bits} are");
            assert_eq!(added.is_some(), !mask.is_row());
            assert_eq!(mask.count, bits.iter().map(|w| w.count_ones()).sum::<u32>());
        }
        kinds.dedup();
        assert!(kinds.len() >= 3, "dense, sparse and all-but are all exercised");
    }

    /// The dispatched count (AVX2 where the CPU has it) equals a count word by word, on
    /// rows of every length up to a few vectors (odd lengths leave a word over) and bits
    /// from a generator.
    #[test]
    fn counted_bits_equal_word_by_word() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..200usize {
            let row: Vec<u32> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 11) as u32 & (x >> 40) as u32
                })
                .collect();
            assert_eq!(count_bits(&row), row.iter().map(|w| w.count_ones()).sum::<u32>(), "a row of {len} words");
        }
    }
}
