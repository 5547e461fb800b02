//! The `vocabulary` target: arbitrary token lists, special and EOS ids and sizes →
//! `Vocabulary::new` must refuse exactly the invalid ones with a vocabulary error, keep
//! every token's bytes and kind, and give masks that agree with the reference (a few
//! fixed regexes compiled against it, then a matcher session).
//!
//! Sizes are capped at 65536 ids past the tokens: a vocabulary's size is the
//! logits width and is allocated for, so huge sizes only measure the machine.

use std::collections::BTreeSet;
use std::sync::Arc;

use corral_core::{CompiledGrammar, Error, Grammar, TokenKind, Vocabulary};

use crate::check::{within_limits, Session};
use crate::input::Reader;
use crate::small_limits;

/// Ids past the tokens a fuzzed vocabulary may have.
const MAX_PADDING: usize = 1 << 16;

/// Patterns compiled against the fuzzed vocabulary.
const PATTERNS: &[&str] = &["(?s:.)*", "[a-c]*", "[^a]+", "é*x", "(?:ab|c)*d?", "\\d+", "\\w*\\s?", "[\\x00-\\x7f]{0,3}"];

/// The target body.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    // The header first, so that whatever bytes follow, most inputs make a valid vocabulary.
    let n = r.below(200);
    let size = match r.below(4) {
        0 => None,
        1 => Some(n + r.below(4096)),
        2 => Some(n.saturating_sub(r.below(3))),
        _ => Some(n + (r.u16() as usize).min(MAX_PADDING)),
    };
    let width = size.unwrap_or(n);
    let specials: Vec<u32> = (0..r.below(4)).map(|_| r.below(width + 2) as u32).collect();
    let eos: Vec<u32> = (0..[1, 1, 2, 0][r.below(4)]).map(|_| r.below(width + 2) as u32).collect();
    let pattern = PATTERNS[r.below(PATTERNS.len())];
    let eager = r.chance(64);
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::with_capacity(n);
    for _ in 0..n {
        let tag = r.byte();
        tokens.push(match tag {
            0..=15 => None,
            16..=31 => Some(Vec::new()),
            248..=255 => {
                let len = r.below(300);
                Some(r.take(len).to_vec())
            }
            _ => Some(r.take(1 + (tag % 8) as usize).to_vec()),
        });
    }
    let valid = !eos.is_empty() && width >= n && specials.iter().chain(&eos).all(|&id| (id as usize) < width);
    let vocab = match Vocabulary::new(tokens.clone(), &specials, &eos, size) {
        Ok(v) => v,
        Err(Error::Vocabulary(m)) => {
            assert!(!valid, "a valid vocabulary was refused: {m}");
            return;
        }
        Err(e) => panic!("Vocabulary::new: unexpected error {e:?}"),
    };
    assert!(valid, "an invalid vocabulary was accepted (size {size:?}, {n} tokens, specials {specials:?}, eos {eos:?})");
    check_contents(&vocab, &tokens, &specials, &eos, width);
    let limits = small_limits();
    let grammar = Grammar::regex(pattern, &limits, None).expect("a fixed pattern parses");
    let Some(compiled) = within_limits(CompiledGrammar::new(&grammar, Arc::new(vocab), &limits, eager), "compile") else {
        return;
    };
    let Some(mut session) = Session::start(Arc::new(compiled)) else { return };
    session.run(&mut r, 12);
}

/// Every id's kind and bytes are what was given; EOS ids are sorted and unique.
fn check_contents(vocab: &Vocabulary, tokens: &[Option<Vec<u8>>], specials: &[u32], eos: &[u32], width: usize) {
    assert_eq!(vocab.size(), width);
    assert_eq!(vocab.mask_words(), width.div_ceil(32));
    let want_eos: Vec<u32> = eos.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
    assert_eq!(vocab.eos_ids(), &want_eos[..]);
    let limit = width.min(tokens.len() + 64);
    for id in 0..limit {
        let t = id as u32;
        let given = tokens.get(id).cloned().flatten();
        let want = if eos.contains(&t) {
            TokenKind::Eos
        } else if specials.contains(&t) {
            TokenKind::Special
        } else if given.as_ref().is_some_and(|b| !b.is_empty()) {
            TokenKind::Normal
        } else {
            TokenKind::Missing
        };
        assert_eq!(vocab.kind(t), want, "kind of token {t}");
        let bytes = if want == TokenKind::Normal { given.clone().unwrap_or_default() } else { Vec::new() };
        assert_eq!(vocab.token_bytes(t), &bytes[..], "bytes of token {t}");
        assert_eq!(vocab.raw_token_bytes(t), &given.unwrap_or_default()[..], "raw bytes of token {t}");
    }
    assert_eq!(vocab.kind(width as u32), TokenKind::Missing);
    assert!(vocab.token_bytes(width as u32).is_empty());
}
