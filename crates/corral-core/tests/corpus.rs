//! The engine-independent corpus (`tests/corpus/*.json` at the repository root, which the
//! Python tests run through every front-end) run on the Rust core alone: every grammar and
//! regex of it, its strings that must match and must not, fed byte by byte with the mask
//! checked against `advance` at every step, EOS allowed exactly where the input may end.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use corral_core::Dialect;
use corral_core::{CompiledGrammar, Grammar, Limits, Matcher, Vocabulary};
use serde_json::Value;

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

/// One token per byte, then EOS (id 256).
fn byte_vocab() -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.push(None);
    Arc::new(Vocabulary::new(tokens, &[], &[256], None).expect("byte vocabulary"))
}

const EOS: u32 = 256;

fn bit(mask: &[u32], t: u32) -> bool {
    mask[(t / 32) as usize] >> (t % 32) & 1 == 1
}

/// Feeds `s` byte by byte, checking mask and `advance` agree; then whether EOS ends it.
fn accepts(compiled: &Arc<CompiledGrammar>, s: &str, what: &str) -> bool {
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
