//! The one place where corral's resource limits live, with their defaults.

/// Caps on the size and time a constraint may cost. Pathological input hits one of these
/// and gets [`crate::Error::LimitExceeded`] naming it, instead of eating memory or hanging.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Longest accepted regex pattern, in bytes.
    pub max_pattern_bytes: usize,
    /// Deepest nesting of groups/repetitions in a regex.
    pub regex_nest_limit: u32,
    /// Heap bytes the Thompson NFA of a regex may use.
    pub nfa_size_limit: usize,
    /// Heap bytes the determinized DFA of a regex may use (also bounds determinization work).
    pub dfa_size_limit: usize,
    /// Most DFA states a compiled regex may have (after pruning dead states).
    pub max_dfa_states: usize,
    /// Most tokens `forced_tokens()` returns in one call.
    pub max_forced_tokens: usize,
    /// Largest vocabulary `size` (the logits width): masks and per-token tables grow with it.
    pub max_vocab_size: usize,
    /// Longest grammar text (EBNF, GBNF, Lark), in bytes.
    pub max_grammar_bytes: usize,
    /// Deepest nesting of groups in a grammar text.
    pub max_grammar_nesting: u32,
    /// Most productions after normalization (repetition expansion, nullable and unit
    /// rule removal can multiply them); also bounds a repetition's count and a `perm!`'s
    /// least count (its shortest string has that many entries).
    pub max_grammar_productions: usize,
    /// Most Earley items one byte of input may create or derive again (bounds the work of
    /// one step: an ambiguous grammar derives the same item many times).
    pub max_earley_items: usize,
    /// Heap bytes one parse (a matcher's Earley chart, with the bytes a mask reads on top
    /// of it) may hold. An ambiguous grammar's chart grows faster than its input.
    pub max_chart_bytes: usize,
    /// Longest completion `Matcher::completion` returns (a grammar's shortest sentence
    /// can be exponentially longer than the grammar).
    pub max_completion_bytes: usize,
    /// Heap bytes a context-free grammar may spend caching masks of parser states; past
    /// it, new states are computed but not cached (never an error).
    pub max_mask_cache_bytes: usize,
    /// Wall-clock milliseconds one build step may take: parsing and normalizing a grammar,
    /// translating a JSON Schema, compiling a grammar for a vocabulary. Past it the step
    /// stops with [`crate::Error::LimitExceeded`] naming this field.
    pub max_compile_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pattern_bytes: 1 << 20,
            regex_nest_limit: 250,
            nfa_size_limit: 64 << 20,
            dfa_size_limit: 256 << 20,
            max_dfa_states: 200_000,
            max_forced_tokens: 256,
            max_vocab_size: 1 << 22,
            max_grammar_bytes: 4 << 20,
            max_grammar_nesting: 200,
            max_grammar_productions: 200_000,
            max_earley_items: 100_000,
            max_chart_bytes: 128 << 20,
            max_completion_bytes: 1 << 20,
            max_mask_cache_bytes: 256 << 20,
            max_compile_ms: 5_000,
        }
    }
}
