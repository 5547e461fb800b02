//! The bodies of corral's fuzz targets, as plain functions.
//!
//! Each target module has a `run(data: &[u8])` that libFuzzer calls through a thin
//! `fuzz_targets/<name>.rs` (nightly, `cargo fuzz`), and that the stable replay test
//! (`tests/replay.rs`) calls over the seed corpus, the recorded findings and pseudo-random
//! inputs, so the targets keep building and running on a machine without nightly.
//!
//! A target fails (panics) when the engine panics, or when one of the consistency checks
//! in [`check`] fails: an input that makes a body panic is a finding.

pub mod check;
pub mod gen;
pub mod input;

pub mod ebnf;
pub mod gbnf;
pub mod lark;
pub mod matcher;
pub mod regex;
pub mod structural;
pub mod vocabulary;

mod cfg_text;

use corral_core::Limits;

/// Every target's name, as in `fuzz_targets/` and `seeds/`.
pub const TARGETS: [&str; 7] = ["regex", "ebnf", "gbnf", "lark", "vocabulary", "matcher", "structural"];

/// Runs target `name` on `data` (for the replay test and tools).
pub fn run_target(name: &str, data: &[u8]) {
    match name {
        "regex" => regex::run(data),
        "ebnf" => ebnf::run(data),
        "gbnf" => gbnf::run(data),
        "lark" => lark::run(data),
        "vocabulary" => vocabulary::run(data),
        "matcher" => matcher::run(data),
        "structural" => structural::run(data),
        other => panic!("no fuzz target named {other}"),
    }
}

/// Limits small enough that no single input can run long or use much memory: a hang or
/// a large allocation under these is itself a finding.
pub fn small_limits() -> Limits {
    Limits {
        max_pattern_bytes: 4096,
        regex_nest_limit: 40,
        nfa_size_limit: 1 << 20,
        dfa_size_limit: 4 << 20,
        max_dfa_states: 2_000,
        max_forced_tokens: 16,
        max_grammar_bytes: 8192,
        max_grammar_nesting: 40,
        max_grammar_productions: 2_000,
        max_earley_items: 5_000,
        max_chart_bytes: 16 << 20,
        max_completion_bytes: 1 << 16,
        max_vocab_size: 1 << 20,
        max_mask_cache_bytes: 1 << 20,
        max_compile_ms: 500,
        // The JSON Schema translator's caps: the fuzzers do not reach the translator.
        ..Limits::default()
    }
}
