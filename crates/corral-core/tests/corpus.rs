//! The engine-independent corpus (`tests/corpus/*.json` at the repository root, which the
//! Python tests run through every front-end) run on the Rust core alone: every grammar and
//! regex of it, its strings that must match and must not, fed byte by byte with the mask
//! checked against `advance` at every step, EOS allowed exactly where the input may end.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use corral_core::Dialect;
use corral_core::{CompiledGrammar, Grammar, Limits, Vocabulary};
use serde_json::Value;

#[path = "support/bytes.rs"]
mod bytes;
use bytes::{accepts, byte_vocab};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn read(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(corpus_dir().join(name)).expect("the corpus file");
    match serde_json::from_str(&text).expect("corpus JSON") {
        Value::Array(entries) => entries,
        other => panic!("{name}: expected a list, got {other}"),
    }
}

fn strings<'a>(entry: &'a Value, key: &str) -> Vec<&'a str> {
    entry[key].as_array().map(|v| v.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn check(entry: &Value, grammar: &Grammar, vocab: &Arc<Vocabulary>) -> usize {
    let name = entry["name"].as_str().unwrap_or("?");
    let compiled = Arc::new(CompiledGrammar::new(grammar, vocab.clone(), &Limits::default(), false).expect("compiles"));
    let (pass, fail) = (strings(entry, "pass"), strings(entry, "fail"));
    for s in &pass {
        assert!(accepts(&compiled, s, name), "{name}: {s:?} must match");
    }
    for s in &fail {
        assert!(!accepts(&compiled, s, name), "{name}: {s:?} must not match");
    }
    pass.len() + fail.len()
}

#[test]
fn corpus_grammars_on_the_core() {
    let vocab = byte_vocab();
    let mut checked = 0;
    for entry in read("grammars.json") {
        let file = entry["file"].as_str().expect("file");
        let text = std::fs::read_to_string(corpus_dir().join("grammars").join(file)).expect("grammar file");
        let dialect = match entry["syntax"].as_str() {
            Some("gbnf") => Dialect::Gbnf,
            Some("lark") => Dialect::Lark,
            _ => Dialect::Ebnf,
        };
        let grammar = Grammar::cfg_text(&text, dialect, None, &Limits::default(), None).unwrap_or_else(|e| panic!("{file}: {e}"));
        checked += check(&entry, &grammar, &vocab);
    }
    assert!(checked > 100, "only {checked} strings checked");
}

#[test]
fn corpus_regexes_on_the_core() {
    let vocab = byte_vocab();
    let mut checked = 0;
    for entry in read("regex.json") {
        let pattern = entry["regex"].as_str().expect("regex");
        let grammar = Grammar::regex(pattern, &Limits::default(), None).unwrap_or_else(|e| panic!("/{pattern}/: {e}"));
        checked += check(&entry, &grammar, &vocab);
    }
    assert!(checked > 100, "only {checked} strings checked");
}
