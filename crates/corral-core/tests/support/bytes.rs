//! Matching strings byte by byte: a vocabulary of one token per byte, and a feed that
//! checks, at every step, that the mask and `advance` agree.

use std::sync::Arc;

use corral_core::{CompiledGrammar, Matcher, Vocabulary};

/// One token per byte, then EOS (id 256).
pub fn byte_vocab() -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.push(None);
    Arc::new(Vocabulary::new(tokens, &[], &[256], None).expect("byte vocabulary"))
}

/// The EOS token of [`byte_vocab`].
pub const EOS: u32 = 256;

fn bit(mask: &[u32], t: u32) -> bool {
    mask[(t / 32) as usize] >> (t % 32) & 1 == 1
}

/// Feeds `s` byte by byte, checking mask and `advance` agree; then whether EOS ends it.
pub fn accepts(compiled: &Arc<CompiledGrammar>, s: &str, what: &str) -> bool {
    let mut m = Matcher::new(compiled.clone());
    let mut mask = vec![0u32; compiled.vocab().mask_words()];
    for (i, &b) in s.as_bytes().iter().enumerate() {
        m.fill_mask(&mut mask).unwrap_or_else(|e| panic!("{what}: mask at byte {i} of {s:?}: {e}"));
        let allowed = bit(&mask, b as u32);
        let took = m.advance(b as u32).unwrap_or_else(|e| panic!("{what}: advance at byte {i} of {s:?}: {e}"));
        assert_eq!(allowed, took, "{what}: mask and advance disagree at byte {i} of {s:?}");
        if !took {
            return false;
        }
    }
    m.fill_mask(&mut mask).unwrap();
    assert_eq!(bit(&mask, EOS), m.is_accepting(), "{what}: EOS bit and is_accepting disagree after {s:?}");
    m.is_accepting()
}
