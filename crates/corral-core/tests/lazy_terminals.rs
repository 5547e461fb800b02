//! Joined terminals are built the first time the parser reads them (see
//! `corral_core::automata::lazy`), and that stays invisible: on the engine-independent
//! corpus and the benchmark's schemas, a grammar compiled as it is (lazily) and one whose
//! every terminal was built before its first mask give the same mask at every byte of
//! every string (the corpus's, the schemas' instances, and sentences the grammar's
//! sampler draws), and agree on each string's acceptance.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use corral_core::json_schema::compile::schema_grammar;
use corral_core::json_schema::translate::SchemaOptions;
use corral_core::{CompiledGrammar, Dialect, Grammar, Limits, Matcher, Vocabulary};
use serde_json::Value;

// (Only its vocabulary: the walks here compare masks rather than check them.)
#[allow(dead_code)]
#[path = "support/bytes.rs"]
mod bytes;
use bytes::byte_vocab;

/// The default limits with time to spare: a compile's deadline is not what is compared
/// here, and a loaded machine must not fail a schema (one of the bench's takes seconds).
fn limits() -> Limits {
    Limits { max_compile_ms: 600_000, ..Limits::default() }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What one grammar's walks compared.
#[derive(Default)]
struct Compared {
    steps: usize,
    /// Terminals left to be built on first read by the lazy compile.
    planned: usize,
    /// Of those, the ones its walks did not build; terminals in all.
    unbuilt: usize,
    terminals: usize,
}

/// Walks `strings` byte by byte on a grammar compiled twice: `lazy` as it is (joins built
/// on first use, nothing read yet) and a second lowering (`lower`) whose every terminal
/// was built before the compile that reads it (so that its parser's tables too are read
/// from built automata), comparing the masks at every step (EOS included).
fn compare(
    lazy: Grammar,
    lower: impl Fn() -> Grammar,
    strings: &[Vec<u8>],
    samples: u64,
    vocab: &Arc<Vocabulary>,
    what: &str,
) -> Compared {
    let limits = limits();
    let lazy = Arc::new(CompiledGrammar::new(&lazy, vocab.clone(), &limits, false).expect("compiles"));
    let eager_grammar = lower();
    let first = CompiledGrammar::new(&eager_grammar, vocab.clone(), &limits, false).expect("compiles");
    first.build_terminals().expect("builds");
    let all = first.terminals_built().1;
    assert_eq!(first.terminals_built(), (all, all), "{what}: build_terminals builds every terminal");
    let eager = Arc::new(CompiledGrammar::new(&eager_grammar, vocab.clone(), &limits, false).expect("compiles"));
    // (The sampler reads every terminal: it draws from the eager lowering.)
    let mut strings = strings.to_vec();
    strings.extend((0..samples).filter_map(|seed| eager_grammar.sample(seed, 200, 1 << 16)));
    let mut lazy_masks = Vec::new();
    let mut out = Compared::default();
    let (built, all) = lazy.terminals_built();
    out.planned = all - built;
    for s in &strings {
        lazy_masks.push(walk(&lazy, s, what));
    }
    let (built, all) = lazy.terminals_built();
    out.unbuilt = all - built;
    out.terminals = all;
    for (s, lazy_walk) in strings.iter().zip(&lazy_masks) {
        let eager_walk = walk(&eager, s, what);
        let text = String::from_utf8_lossy(s);
        assert_eq!(lazy_walk.len(), eager_walk.len(), "{what}: {text:?} is read as far both ways");
        for (i, (a, b)) in lazy_walk.iter().zip(&eager_walk).enumerate() {
            assert_eq!(a, b, "{what}: masks differ at byte {i} of {text:?}");
        }
        out.steps += lazy_walk.len();
    }
    out
}

/// The masks (and whether the string was taken whole) along `s`, up to where it is refused.
fn walk(compiled: &Arc<CompiledGrammar>, s: &[u8], what: &str) -> Vec<(Vec<u32>, bool)> {
    let mut m = Matcher::new(compiled.clone());
    let mut masks = Vec::new();
    for &b in s {
        let mut mask = vec![0u32; compiled.vocab().mask_words()];
        m.fill_mask(&mut mask).unwrap_or_else(|e| panic!("{what}: {e}"));
        let took = m.advance(b as u32).unwrap_or_else(|e| panic!("{what}: {e}"));
        masks.push((mask, took));
        if !took {
            return masks;
        }
    }
    let mut mask = vec![0u32; compiled.vocab().mask_words()];
    m.fill_mask(&mut mask).unwrap_or_else(|e| panic!("{what}: {e}"));
    masks.push((mask, m.is_accepting()));
    masks
}

fn json_list(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match serde_json::from_str(&text).expect("JSON") {
        Value::Array(items) => items,
        other => panic!("{}: expected a list, got {other}", path.display()),
    }
}

#[test]
fn lazy_and_eager_terminals_mask_alike_on_the_corpus_grammars() {
    let vocab = byte_vocab();
    let dir = root().join("tests/corpus");
    let (mut steps, mut planned) = (0, 0);
    for entry in json_list(&dir.join("grammars.json")) {
        let file = entry["file"].as_str().expect("file");
        let text = std::fs::read_to_string(dir.join("grammars").join(file)).expect("grammar file");
        let dialect = match entry["syntax"].as_str() {
            Some("gbnf") => Dialect::Gbnf,
            Some("lark") => Dialect::Lark,
            _ => Dialect::Ebnf,
        };
        let lower = || Grammar::cfg_text(&text, dialect, None, &limits(), None).unwrap_or_else(|e| panic!("{file}: {e}"));
        let strings: Vec<Vec<u8>> = ["pass", "fail"]
            .iter()
            .flat_map(|k| entry[*k].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v.as_str().map(|s| s.as_bytes().to_vec()))
            .collect();
        let c = compare(lower(), lower, &strings, 4, &vocab, file);
        steps += c.steps;
        planned += c.planned;
    }
    eprintln!("corpus: {steps} steps compared, {planned} terminals planned to be built on first read");
    assert!(steps > 2_000, "only {steps} steps compared");
    assert!(planned > 10, "only {planned} terminals were left to be built on first read");
}

#[test]
fn lazy_and_eager_terminals_mask_alike_on_the_bench_schemas() {
    let vocab = byte_vocab();
    let dir = root().join("bench/json_schemas");
    let mut schemas: Vec<PathBuf> = Vec::new();
    for d in [dir.clone(), dir.join("large"), dir.join("store")] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&d)
            .expect("bench schemas")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
            .collect();
        found.sort();
        schemas.extend(found);
    }
    let options = SchemaOptions { spec_exact: true, integer_fraction: true, ..SchemaOptions::default() };
    let (mut steps, mut unbuilt, mut terminals, mut compared) = (0, 0, 0, 0);
    for path in &schemas {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").trim_end_matches(".schema.json").to_string();
        let text = std::fs::read_to_string(path).expect("schema");
        let Ok(first) = schema_grammar(&text, &[], &options, &limits()) else { continue };
        let lower = || schema_grammar(&text, &[], &options, &limits()).expect("compiled once").grammar;
        let mut strings = Vec::new();
        for kind in ["instances", "invalid"] {
            let p = path.with_file_name(format!("{name}.{kind}.json"));
            if p.exists() {
                strings.extend(json_list(&p).iter().map(|v| serde_json::to_vec(v).expect("serializes")));
            }
        }
        let c = compare(first.grammar, lower, &strings, 2, &vocab, &name);
        steps += c.steps;
        unbuilt += c.unbuilt;
        terminals += c.terminals;
        compared += 1;
    }
    eprintln!("bench schemas: {compared} compared over {steps} steps; {unbuilt} of {terminals} terminals left unbuilt");
    assert!(compared > 300, "only {compared} schemas compared");
    assert!(steps > 100_000, "only {steps} steps compared");
    // Most of a large schema's joined terminals are never read by a few outputs.
    assert!(unbuilt * 4 > terminals, "{unbuilt} of {terminals} terminals left unbuilt by the walks");
}
