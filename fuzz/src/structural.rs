//! The `structural` target: arbitrary text read as a structural tag (XGrammar's JSON
//! format). A description that builds is compiled under small limits, its random sentences
//! must be accepted (whole and byte by byte) and a matcher session must pass its checks;
//! one that does not must fail with an error of a kind a description can cause.

use std::sync::Arc;

use corral_core::structural::{structural_tag, TagOptions};
use corral_core::{CompiledGrammar, Error};

use crate::check::{check_bytewise, Session};
use crate::gen::byte_vocab;
use crate::input::{text, Rng};
use crate::small_limits;

/// The target body.
pub fn run(data: &[u8]) {
    let text = text(data);
    let limits = small_limits();
    let mut rng = Rng::from_bytes(data);
    let grammar = match structural_tag(&text, &TagOptions::default(), &limits) {
        Ok(t) => t.grammar,
        Err(e) => return check_error(&e),
    };
    let samples: Vec<Vec<u8>> = (0..3).filter_map(|seed| grammar.sample(rng.next_u64() ^ seed, 48, limits.max_completion_bytes)).collect();
    let extra: Vec<Vec<u8>> = samples.iter().flat_map(|s| s.chunks(3).map(<[u8]>::to_vec)).take(48).collect();
    let compiled = match CompiledGrammar::new(&grammar, Arc::new(byte_vocab(&extra)), &limits, false) {
        Ok(c) => Arc::new(c),
        Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => return,
        Err(e) => panic!("compiling a structural tag: {e:?}"),
    };
    for s in &samples {
        match check_bytewise(&compiled, s) {
            None => return,
            Some(ok) => assert!(ok, "a sample of the structural tag is not accepted: {:?}", String::from_utf8_lossy(s)),
        }
    }
    let Some(mut session) = Session::start(compiled) else { return };
    session.run(&mut rng, 16);
}

/// The errors a description can cause: its own (a grammar error naming a pointer), those
/// of the grammars, patterns and schemas inside it, and the limits.
fn check_error(e: &Error) {
    assert!(!e.to_string().is_empty(), "an empty error message");
    match e {
        Error::Grammar { .. }
        | Error::RegexSyntax { .. }
        | Error::UnsupportedRegex { .. }
        | Error::Schema { .. }
        | Error::SchemaLimit { .. }
        | Error::LimitExceeded { .. }
        | Error::EmptyLanguage { .. } => {}
        other => panic!("an unexpected kind of error for a structural tag: {other:?}"),
    }
}
