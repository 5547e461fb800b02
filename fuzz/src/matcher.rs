//! The `matcher` target: a small random grammar (a regex, an EBNF grammar, or JSON-like
//! objects whose keys must stay distinct, from the generators in [`crate::gen`]) and a small random vocabulary, all chosen by the input,
//! then a random sequence of matcher operations, each checked against a reference (see
//! [`crate::check::Session`]). A generated regex is also run by the `regex` crate, which
//! `matches` must agree with.

use std::sync::Arc;

use corral_core::{CompiledGrammar, Error, Grammar};

use crate::check::{Oracle, Session};
use crate::gen::{self, check_error};
use crate::input::Reader;
use crate::small_limits;

/// The target body.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let limits = small_limits();
    let mut oracle: Option<Oracle> = None;
    let json = r.chance(64);
    let (grammar, text) = if json {
        let (text, endings_infinite) = gen::json_objects(&mut r);
        // The check of half-written keys runs where it must, and sometimes where it need not.
        let endings_infinite = endings_infinite && r.chance(192);
        let g = Grammar::cfg_text(&text, corral_core::Dialect::Ebnf, None, &limits, None);
        (g.map(|g| g.with_distinct_keys(endings_infinite)), text)
    } else if r.chance(128) {
        let (text, rust) = gen::regex(&mut r, 4);
        let reference = regex::bytes::Regex::new(&format!("\\A(?:{rust})\\z")).expect("a generated regex is valid Rust syntax");
        oracle = Some(Box::new(move |s: &[u8]| reference.is_match(s)));
        (Grammar::regex(&text, &limits, None), text)
    } else {
        let text = gen::ebnf(&mut r);
        (Grammar::cfg_text(&text, corral_core::Dialect::Ebnf, None, &limits, None), text)
    };
    let grammar = match grammar {
        Ok(g) => g,
        Err(e) => return check_error(&e, &text),
    };
    let vocab = Arc::new(if json { gen::small_vocab_over(&mut r, gen::JSON_BYTES) } else { gen::small_vocab(&mut r) });
    let eager = r.chance(64);
    let compiled = match CompiledGrammar::new(&grammar, vocab, &limits, eager) {
        Ok(c) => Arc::new(c),
        Err(Error::LimitExceeded { .. } | Error::EmptyLanguage { .. }) => return,
        Err(e) => panic!("compiling {text:?}: {e:?}"),
    };
    let Some(mut session) = Session::start_with(compiled, oracle) else { return };
    session.run(&mut r, 64);
}
