//! The body shared by the grammar-text targets (`ebnf`, `gbnf`, `lark`): arbitrary text →
//! parse, lower and compile under small limits; for a grammar that builds, its random
//! sentences must be accepted (as a whole and byte by byte) and a matcher session must
//! pass its checks. A grammar that names tokens (`<[3]>`, `<a>`) is compiled for a byte
//! vocabulary with a few special tokens, and its session checked.

use std::sync::Arc;

use corral_core::{Dialect, LowerOptions};
use corral_core::{CompiledGrammar, Error, Grammar};

use crate::check::{check_bytewise, Session};
use crate::gen::{byte_vocab, check_error};
use crate::input::{text, Rng};
use crate::small_limits;

/// Runs the checks on `data` read as a grammar in `dialect`.
pub fn run(data: &[u8], dialect: Dialect) {
    let text = text(data);
    let limits = small_limits();
    let mut rng = Rng::from_bytes(data);
    // A third of the inputs get the JSON Schema front-end's lowering (no merged terminals),
    // chosen from the input's hash so that the input format stays plain grammar text.
    let options = if rng.below(3) == 0 { LowerOptions { max_terminal_source: 0 } } else { LowerOptions::default() };
    let grammar = match corral_core::json_schema::embed::grammar_text(&text, dialect, None, &limits, &options, None) {
        Ok(g) => g,
        Err(e) => return check_error(&e, &text),
    };
    let _ = (grammar.describe(), grammar.warnings());
    if grammar.token_refs().is_some() {
        return run_naming_tokens(&grammar, &mut rng);
    }
    let samples: Vec<Vec<u8>> = (0..3).filter_map(|seed| grammar.sample(rng.next_u64() ^ seed, 48, limits.max_completion_bytes)).collect();
    // Tokens of 2-4 bytes cut from the samples, so multi-byte tokens meet the grammar.
    let mut extra = Vec::new();
    for s in &samples {
        let mut i = 0;
        while i + 1 < s.len() && extra.len() < 48 {
            let len = 2 + rng.below(3);
            extra.push(s[i..(i + len).min(s.len())].to_vec());
            i += 1 + rng.below(3);
        }
    }
    let compiled = match CompiledGrammar::new(&grammar, Arc::new(byte_vocab(&extra)), &limits, false) {
        Ok(c) => Arc::new(c),
        Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => return,
        Err(e) => panic!("compiling a lowered grammar: {e:?}"),
    };
    for s in &samples {
        match check_bytewise(&compiled, s) {
            None => return,
            Some(ok) => assert!(ok, "a sample of the grammar is not accepted: {:?}", String::from_utf8_lossy(s)),
        }
    }
    let Some(mut session) = Session::start(compiled) else { return };
    session.run(&mut rng, 16);
}

/// A grammar that names tokens: compiled for one token per byte plus the special tokens
/// `<a>` and `<b>` (ids 256, 257; EOS 258), where naming what the vocabulary lacks is a
/// vocabulary error; then a matcher session.
fn run_naming_tokens(grammar: &Grammar, rng: &mut Rng) {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.extend([Some(b"<a>".to_vec()), Some(b"<b>".to_vec()), Some(b"</s>".to_vec())]);
    let vocab = corral_core::Vocabulary::new(tokens, &[256, 257], &[258], None).expect("a valid vocabulary");
    let compiled = match CompiledGrammar::new(grammar, Arc::new(vocab), &small_limits(), false) {
        Ok(c) => Arc::new(c),
        Err(Error::Vocabulary(m)) => return assert!(m.contains("names"), "{m}"),
        Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => return,
        Err(e) => panic!("compiling a grammar that names tokens: {e:?}"),
    };
    let Some(mut session) = Session::start(compiled) else { return };
    session.run(rng, 16);
}
