//! The `regex` target: arbitrary pattern text → parse and compile under small limits,
//! then check the compiled grammar for internal consistency.
//!
//! Input: the pattern, then NUL-separated strings to test. Over a byte vocabulary (ids
//! 0..=255 are the bytes), `matches(s)` must agree with advancing byte by byte, the
//! completion from the start must be accepted, and a matcher session (see
//! [`crate::check::Session`]) must pass its checks.

use std::sync::Arc;

use corral_core::{CompiledGrammar, Error, Grammar};

use crate::check::{check_bytewise, Session};
use crate::gen::{byte_vocab, check_error};
use crate::input::{text, Rng};
use crate::small_limits;

/// The target body.
pub fn run(data: &[u8]) {
    let mut parts = data.split(|&b| b == 0);
    let pattern = text(parts.next().unwrap_or_default());
    let limits = small_limits();
    let grammar = match Grammar::regex(&pattern, &limits, None) {
        Ok(g) => g,
        Err(e) => return check_error(&e, &pattern),
    };
    let _ = grammar.describe();
    let eager = pattern.len() % 2 == 1;
    let compiled = match CompiledGrammar::new(&grammar, Arc::new(byte_vocab(&[])), &limits, eager) {
        Ok(c) => Arc::new(c),
        Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => return,
        Err(e) => panic!("compiling a parsed regex: {e:?}"),
    };
    let mut strings: Vec<Vec<u8>> = parts.take(8).map(|s| s.to_vec()).collect();
    strings.push(pattern.as_bytes().to_vec());
    for s in &strings {
        if check_bytewise(&compiled, s).is_none() {
            return;
        }
    }
    let Some(mut session) = Session::start(compiled.clone()) else { return };
    if let Ok(Some(c)) = session.matcher().completion() {
        assert_eq!(check_bytewise(&compiled, &c), Some(true), "the completion from the start is not accepted");
    }
    session.run(&mut Rng::from_bytes(data), 24);
    let out = session.output().to_vec();
    check_bytewise(&compiled, &out);
}
