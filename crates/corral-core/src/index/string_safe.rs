//! Masks over a string-safe slice: a DFA state's allowed tokens among the slice's,
//! computed from the state's [`StringSafeRisk`] and the vocabulary's per-byte token sets
//! instead of a walk of the whole trie.

use crate::automata::{Dfa, DEAD};
use crate::index::ends::Ends;
use crate::vocab::slices::MAX_SAFE_LEN;
use crate::vocab::{StringSafeSlice, Vocabulary};

/// A DFA state's tokens among a string-safe slice's (see [`string_safe_slice_mask`]).
pub(crate) struct SliceMask<'v> {
    /// The slice, whose `rest` trie is still to be walked.
    pub(crate) slice: &'v StringSafeSlice,
    /// The slice's tokens the state keeps alive, as mask bits.
    pub(crate) bits: Vec<u32>,
    /// Nodes of the full trie where a slice token passes through an accepting state and
    /// that `ends` records: where the terminal may end inside a token, and the parser goes
    /// on. Sorted, without repeats.
    pub(crate) ends: Vec<u32>,
}

/// The mask of a DFA standing in `state` over the tokens of a string-safe slice; None
/// where no slice applies.
///
/// A state with a character budget (see [`Dfa::string_safe_char_budget`]) takes the
/// longest slice's tokens that start at most that many characters. Otherwise, the first
/// slice, longest bound first, whose [`Dfa::string_safe_risk`] is known: its tokens
/// with an `always` byte are refused, those with a `check` byte and longer than
/// `safe_len` are read one by one (at most [`max_checked_tokens`], else the next slice
/// is tried), the others are allowed. Where `ends` are recorded, ending the terminal is a
/// risk too: the tokens that may do so (holding an `ends` byte) are read one by one, and
/// where they accept is kept in [`SliceMask::ends`].
pub(crate) fn string_safe_slice_mask<'v>(vocab: &'v Vocabulary, dfa: &Dfa, state: u32, ends: Ends) -> Option<SliceMask<'v>> {
    let len_le = vocab.safe_len_le();
    let weight = vocab.safe_byte_weight();
    // A state counting the characters left (a small `maxLength`) takes its tokens by
    // character count: the byte risks below would leave nearly every token to read.
    if let (Some(k), Some(slice)) = (dfa.string_safe_char_budget(state, !ends.recorded()), vocab.string_safe_slices().first()) {
        let bits = slice.bits.iter().zip(&vocab.safe_chars_le()[k]).map(|(&s, &c)| s & c).collect();
        return Some(SliceMask { slice, bits, ends: Vec::new() });
    }
    for (i, slice) in vocab.string_safe_slices().iter().enumerate() {
        // The longest bound with bytes to check only for a small DFA: its search runs
        // deepest (hundreds of microseconds in a URI's), and the next bound's rest
        // trie is small too.
        let max_check = if i == 0 && dfa.num_states() > DEEP_RISK_MAX_STATES { 0 } else { MAX_CHECK_BYTES };
        let Some(risk) = dfa.string_safe_risk(state, slice.max_len, ends.follow(), MAX_DEAD_AT_ONCE, max_check, weight) else {
            continue;
        };
        if risk.is_clear() {
            return Some(SliceMask { slice, bits: slice.bits.clone(), ends: Vec::new() });
        }
        let mut always = vocab.safe_tokens_holding(&risk.always);
        if risk.short_only && risk.safe_len <= MAX_SAFE_LEN {
            // Only tokens up to `safe_len` bytes live, less those with an `always` byte.
            for ((a, &bits), &short) in always.iter_mut().zip(&slice.bits).zip(&len_le[risk.safe_len]) {
                *a = bits & short & !*a;
            }
            return Some(SliceMask { slice, bits: always, ends: Vec::new() });
        }
        let mut check = vocab.safe_tokens_holding(&risk.check);
        let ending = if risk.ends == [0; 4] { None } else { Some(vocab.safe_tokens_holding(&risk.ends)) };
        // `check` becomes the tokens to read, `always` the allowed ones. A token that may
        // accept is read even if it holds an `always` byte: it may accept before that byte.
        let short = &len_le[risk.safe_len.min(MAX_SAFE_LEN)];
        let mut checked = 0u32;
        for (w, (((a, c), &bits), &short)) in always.iter_mut().zip(check.iter_mut()).zip(&slice.bits).zip(short).enumerate() {
            let e = ending.as_ref().map_or(0, |e| e[w]);
            *c = bits & !short & ((*c & !*a) | e);
            *a = bits & !(*a | *c);
            checked += c.count_ones();
        }
        if checked as usize > max_checked_tokens(vocab) {
            continue;
        }
        let mut allowed = always;
        let mut end_nodes = Vec::new();
        for (w, &word) in check.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let id = (w as u32) << 5 | word.trailing_zeros();
                word &= word - 1;
                if read_token(vocab, dfa, state, id, ends, &mut end_nodes) {
                    allowed[w] |= 1 << (id & 31);
                }
            }
        }
        end_nodes.sort_unstable();
        end_nodes.dedup();
        return Some(SliceMask { slice, bits: allowed, ends: end_nodes });
    }
    None
}

/// Reads token `id` from `state`: does the DFA live to its end? The full trie's nodes
/// where it passes through an accepting state and that `ends` records go to `end_nodes`.
fn read_token(vocab: &Vocabulary, dfa: &Dfa, state: u32, id: u32, ends: Ends, end_nodes: &mut Vec<u32>) -> bool {
    let bytes = vocab.token_bytes(id);
    let mut q = state;
    for (i, &b) in bytes.iter().enumerate() {
        q = dfa.next(q, b);
        if q == DEAD {
            return false;
        }
        if ends.recorded() && dfa.is_accepting(q) {
            let trie = vocab.trie();
            if let Some(node) = trie.node_of(&bytes[..=i]).filter(|&n| ends.keeps(trie, n)) {
                end_nodes.push(node);
            }
        }
    }
    true
}

/// Past this many string-safe bytes that kill at once (of the 144 a string-safe fragment may start
/// with), a state is left to the trie walk: few tokens live, and the walk ends quickly
/// (a digit, a hex digit; a terminal's first byte).
const MAX_DEAD_AT_ONCE: usize = 120;

/// Most `check` bytes (see [`Dfa::string_safe_risk`]) a string-safe slice mask takes: an ASCII
/// character class (`[A-Za-z0-9 -]{2,12}` near its end), not every byte (a string's last
/// few characters before its `maxLength`, which the trie walk ends quickly).
const MAX_CHECK_BYTES: usize = 96;

/// Largest DFA whose bytes to check are searched for the longest slice bound.
const DEEP_RISK_MAX_STATES: usize = 256;

/// Most slice tokens a string-safe slice mask reads one by one: a third of the trie's
/// nodes. A token is read byte by byte (6 to 7 bytes on average in large vocabularies),
/// each byte about a quarter of what a node of a trie walk costs (measured on a 129k-token
/// vocabulary: 27k tokens read in 0.8 ms against 4.5 ms for the walk of its 275k nodes),
/// so that reading is the cheaper of the two up to about there.
fn max_checked_tokens(vocab: &Vocabulary) -> usize {
    vocab.trie().num_nodes() / 3
}
