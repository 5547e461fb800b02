//! Mask computation on the Rust core alone, for a few entries of the test corpus:
//! `cargo bench -p corral-core --bench masks`. Prints a table (cold: first visit of each
//! parser state; warm: the same walk again, served by the mask caches).
//!
//! The vocabulary is synthetic (no tokenizer files are needed): every byte, then 32,000
//! pieces of 2 to 8 characters cut from the corpus strings and a fixed alphabet, so that
//! masks have the size and trie shape of a real vocabulary's. Single-threaded.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use corral_core::Dialect;
use corral_core::{CompiledGrammar, Grammar, Limits, Matcher, Vocabulary};

fn vocabulary(texts: &[&str]) -> (Arc<Vocabulary>, Vec<Vec<u8>>) {
    let mut pieces: BTreeSet<Vec<u8>> = BTreeSet::new();
    let alphabet = b" {}[]\":,0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+-*/().\n\t_";
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) as usize
    };
    for t in texts {
        let b = t.as_bytes();
        for i in 0..b.len() {
            for len in 2..=8.min(b.len() - i) {
                pieces.insert(b[i..i + len].to_vec());
            }
        }
    }
    while pieces.len() < 32_000 {
        let len = 2 + next() % 7;
        pieces.insert((0..len).map(|_| alphabet[next() % alphabet.len()]).collect());
    }
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.extend(pieces.into_iter().take(32_000));
    let mut all: Vec<Option<Vec<u8>>> = tokens.iter().cloned().map(Some).collect();
    all.push(None);
    let eos = (all.len() - 1) as u32;
    (Arc::new(Vocabulary::new(all, &[], &[eos], None).expect("vocabulary")), tokens)
}

/// Greedy longest-match tokenization of `s` with `tokens`.
fn tokenize(s: &str, tokens: &[Vec<u8>]) -> Vec<u32> {
    let by_bytes: std::collections::HashMap<&[u8], u32> = tokens.iter().enumerate().map(|(i, t)| (&t[..], i as u32)).collect();
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let len = (1..=8.min(b.len() - i)).rev().find(|&l| by_bytes.contains_key(&b[i..i + l])).unwrap_or(1);
        out.push(by_bytes[&b[i..i + len]]);
        i += len;
    }
    out
}

fn walk(compiled: &Arc<CompiledGrammar>, ids: &[u32]) -> Vec<f64> {
    let mut m = Matcher::new(compiled.clone());
    let mut mask = vec![0u32; compiled.vocab().mask_words()];
    let mut times = Vec::with_capacity(ids.len());
    for &t in ids {
        let t0 = Instant::now();
        m.fill_mask(&mut mask).expect("mask");
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        assert!(m.advance(t).expect("advance"), "token refused");
    }
    times
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[(v.len() * 99 / 100).min(v.len() - 1)])
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/grammars");
    let json = std::fs::read_to_string(corpus.join("json.ebnf")).expect("json.ebnf");
    let arith = std::fs::read_to_string(corpus.join("arithmetic.ebnf")).expect("arithmetic.ebnf");
    let perm = std::fs::read_to_string(corpus.join("perm.ebnf")).expect("perm.ebnf");
    let doc_json = r#"{"name": "corral", "tags": ["regex", "grammar", "json"], "stars": 1234, "nested": {"a": [1, 2.5, -3e4], "b": null, "c": true}}"#;
    let doc_arith = "(12+34)*5-(6/7+8*(9-10))*11+121314";
    let doc_perm = r#"{ "x-a" : "q", "debug" : true, "name" : "some name", "port" : 8080 }"#;
    let cases: Vec<(&str, Grammar, &str)> = vec![
        ("json.ebnf", Grammar::cfg_text(&json, Dialect::Ebnf, None, &Limits::default(), None).unwrap(), doc_json),
        ("arithmetic.ebnf", Grammar::cfg_text(&arith, Dialect::Ebnf, None, &Limits::default(), None).unwrap(), doc_arith),
        ("perm.ebnf", Grammar::cfg_text(&perm, Dialect::Ebnf, None, &Limits::default(), None).unwrap(), doc_perm),
        (
            "regex: email",
            Grammar::regex(r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}", &Limits::default(), None).unwrap(),
            "some.name+tag@example.co.uk",
        ),
    ];
    let (vocab, tokens) = vocabulary(&[doc_json, doc_arith, doc_perm]);
    println!("| grammar | tokens | compile ms | cold median / p99 µs | warm median / p99 µs |");
    println!("|---|---:|---:|---:|---:|");
    for (name, grammar, doc) in cases {
        let ids = tokenize(doc, &tokens);
        let t0 = Instant::now();
        let compiled = Arc::new(CompiledGrammar::new(&grammar, vocab.clone(), &Limits::default(), false).expect("compiles"));
        let compile_ms = t0.elapsed().as_secs_f64() * 1e3;
        let (cold_med, cold_p99) = stats(walk(&compiled, &ids));
        let warm: Vec<f64> = (0..5).flat_map(|_| walk(&compiled, &ids)).collect();
        let (warm_med, warm_p99) = stats(warm);
        println!("| {name} | {} | {compile_ms:.2} | {cold_med:.1} / {cold_p99:.0} | {warm_med:.2} / {warm_p99:.1} |", ids.len());
    }
}
