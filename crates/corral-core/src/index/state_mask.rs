//! A set of allowed token ids as masks are cached: a bitmap where many tokens are
//! allowed, a sorted id list where few are (most states of most patterns allow a handful).

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
/// (most states of most patterns allow a handful of tokens).
#[derive(Debug)]
enum MaskRepr {
    Dense(Box<[u32]>),
    Sparse(Box<[u32]>),
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

    /// The collected set.
    pub(crate) fn into_mask(self) -> StateMask {
        match self.bits {
            Some(bits) => StateMask::from_bits(bits),
            None => StateMask::from_ids(self.ids, self.words),
        }
    }
}

impl StateMask {
    pub(crate) fn from_bits(bits: Vec<u32>) -> StateMask {
        let count: u32 = bits.iter().map(|w| w.count_ones()).sum();
        let only = if count == 1 {
            bits.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, &w)| (i * 32) as u32 + w.trailing_zeros())
        } else {
            None
        };
        if (count as usize) > bits.len() / 4 {
            return StateMask { repr: MaskRepr::Dense(bits.into_boxed_slice()), count, only };
        }
        let mut ids = Vec::with_capacity(count as usize);
        for (w, &word) in bits.iter().enumerate() {
            let mut x = word;
            while x != 0 {
                ids.push((w * 32) as u32 + x.trailing_zeros());
                x &= x - 1;
            }
        }
        StateMask { repr: MaskRepr::Sparse(ids.into_boxed_slice()), count, only }
    }

    /// The mask of distinct token `ids` (any order) over rows of `words` words.
    pub(crate) fn from_ids(mut ids: Vec<u32>, words: usize) -> StateMask {
        if ids.len() > words / 4 {
            return StateMask::from_bits(bits_of(&ids, words));
        }
        ids.sort_unstable();
        let count = ids.len() as u32;
        let only = if count == 1 { Some(ids[0]) } else { None };
        StateMask { repr: MaskRepr::Sparse(ids.into_boxed_slice()), count, only }
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
        }
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
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.repr {
                MaskRepr::Dense(b) | MaskRepr::Sparse(b) => b.len() * 4,
            }
    }
}

/// `ids` as a row of `words` words of bits.
fn bits_of(ids: &[u32], words: usize) -> Vec<u32> {
    let mut bits = vec![0u32; words];
    for &t in ids {
        bits[(t >> 5) as usize] |= 1 << (t & 31);
    }
    bits
}
