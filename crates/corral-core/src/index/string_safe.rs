//! Masks over a string-safe slice: a DFA state's allowed tokens among the slice's,
//! computed from the state's [`StringSafeRisk`] and the vocabulary's per-byte token sets
//! instead of a walk of the whole trie.

use crate::automata::{Dfa, DEAD};
use crate::vocab::slices::MAX_SAFE_LEN;
use crate::vocab::{StringSafeSlice, Vocabulary};

/// The mask of a DFA standing in `state` over the tokens of a string-safe slice, and that
/// slice (whose `rest` trie is still to be walked); None where no slice applies.
///
/// A state with a character budget (see [`Dfa::string_safe_char_budget`]) takes the
/// longest slice's tokens that start at most that many characters. Otherwise, the first
/// slice, longest bound first, whose [`Dfa::string_safe_risk`] is known: its tokens
/// with an `always` byte are refused, those with a `check` byte and longer than
/// `safe_len` are read one by one (at most [`max_checked_tokens`], else the next slice
/// is tried), the others are allowed. Unless `may_accept`, no slice token reaches an
/// accepting state (so no terminal ends inside one).
pub(crate) fn string_safe_slice_mask<'v>(
    vocab: &'v Vocabulary,
    dfa: &Dfa,
    state: u32,
    may_accept: bool,
) -> Option<(&'v StringSafeSlice, Vec<u32>)> {
    let len_le = vocab.safe_len_le();
    let weight = vocab.safe_byte_weight();
    // A state counting the characters left (a small `maxLength`) takes its tokens by
    // character count: the byte risks below would leave nearly every token to read.
    if let (Some(k), Some(slice)) = (dfa.string_safe_char_budget(state, may_accept), vocab.string_safe_slices().first()) {
        let bits = slice.bits.iter().zip(&vocab.safe_chars_le()[k]).map(|(&s, &c)| s & c).collect();
        return Some((slice, bits));
    }
    for (i, slice) in vocab.string_safe_slices().iter().enumerate() {
        // The longest bound with bytes to check only for a small DFA: its search runs
        // deepest (hundreds of microseconds in a URI's), and the next bound's rest
        // trie is small too.
        let max_check = if i == 0 && dfa.num_states() > DEEP_RISK_MAX_STATES { 0 } else { MAX_CHECK_BYTES };
        let Some(risk) = dfa.string_safe_risk(state, slice.max_len, may_accept, MAX_DEAD_AT_ONCE, max_check, weight) else {
            continue;
        };
        if risk.is_clear() {
            return Some((slice, slice.bits.clone()));
        }
        let mut always = vocab.safe_tokens_holding(&risk.always);
        if risk.short_only && risk.safe_len <= MAX_SAFE_LEN {
            // Only tokens up to `safe_len` bytes live, less those with an `always` byte.
            for ((a, &bits), &short) in always.iter_mut().zip(&slice.bits).zip(&len_le[risk.safe_len]) {
                *a = bits & short & !*a;
            }
            return Some((slice, always));
        }
        let mut check = vocab.safe_tokens_holding(&risk.check);
        // `check` becomes the tokens to read, `always` the allowed ones.
        let short = &len_le[risk.safe_len.min(MAX_SAFE_LEN)];
        let mut checked = 0u32;
        for (((a, c), &bits), &short) in always.iter_mut().zip(check.iter_mut()).zip(&slice.bits).zip(short) {
            *c = bits & *c & !*a & !short;
            *a = bits & !(*a | *c);
            checked += c.count_ones();
        }
        if checked as usize > max_checked_tokens(vocab) {
            continue;
        }
        let mut allowed = always;
        for (w, &word) in check.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let id = (w as u32) << 5 | word.trailing_zeros();
                word &= word - 1;
                let mut q = state;
                for &b in vocab.token_bytes(id) {
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
