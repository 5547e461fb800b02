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
    /// Deepest nesting of groups in a grammar text, and of the rule references one regular
    /// piece (an argument of `and!`, `not!`, `except!`) follows while it is built as one
    /// automaton. Both are read recursively: far past the default, a deep grammar needs a
    /// larger thread stack.
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
    /// Most bytes tried, per token checked, in the search for a way to finish an item of a
    /// `uniqueItems` array as a new value (where the item written so far may still become
    /// an earlier one; see [`crate::grammar::distinct_keys`]). Past it the mask, or the
    /// token check, fails with [`crate::Error::LimitExceeded`] naming this field.
    pub max_fresh_item_steps: usize,
    /// Heap bytes a context-free grammar may spend caching masks of parser states (and
    /// the content numbers of the Earley sets their keys name); past it, new states are
    /// computed but not cached (never an error), and `CompiledGrammar::warm_up` stops
    /// warming.
    pub max_mask_cache_bytes: usize,
    /// Wall-clock milliseconds one build step may take: parsing a grammar text,
    /// normalizing a grammar, translating a JSON Schema, compiling a grammar for a
    /// vocabulary. Past it the step stops with [`crate::Error::LimitExceeded`] naming this field.
    pub max_compile_ms: u64,

    // The JSON Schema translator's caps: corral-core does not read them; they live here so
    // that every cap a user can hit is one field of one `Limits`.
    /// JSON Schema: most alternatives one subschema expands to (`anyOf` × `anyOf`, `oneOf`,
    /// `if`: each combination is translated on its own).
    pub max_schema_alternatives: usize,
    /// JSON Schema: deepest nesting of subschemas read in place inside one another
    /// (`allOf`, `anyOf`, `not`, `$ref`, ...).
    pub max_schema_depth: usize,
    /// JSON Schema: deepest nesting of JSON values (objects, arrays) in the schema document;
    /// also in a structural tag's description.
    pub max_schema_document_depth: usize,
    /// JSON Schema: deepest chain of value rules built inside one another (through
    /// `properties`, `items` and `$ref`s, until it closes on a rule already made).
    pub max_schema_value_depth: usize,
    /// JSON Schema: most translations of one schema, each dropping the recursive
    /// subschemas the one before found to allow no value.
    pub max_schema_passes: usize,
    /// JSON Schema: most `patternProperties` patterns that apply to one object (each
    /// splits the object's classes of other keys in two; classes whose values obey the
    /// same subschemas are merged, and their count is bounded by `max_key_classes`).
    pub max_pattern_properties: usize,
    /// JSON Schema: most classes of an object's other keys whose values obey different
    /// subschemas (keys that match different sets of overlapping `patternProperties`).
    pub max_key_classes: usize,
    /// JSON Schema: largest `maxItems` of an array that also has `contains` (each position
    /// is counted).
    pub max_counted_items: usize,
    /// JSON Schema: most subschemas read in place around one `unevaluatedProperties` to
    /// find the properties they evaluate.
    pub max_unevaluated_subschemas: usize,
    /// JSON Schema: most pairs (automaton state, pattern read so far) explored to show
    /// that every string a `pattern` or `maxLength` allows beside `format: "regex"` is a
    /// regular expression (see [`crate::grammar::regex_text`]). Past it the format is
    /// refused there (an unsupported-schema error; `strict=False` drops it).
    pub max_regex_format_states: usize,
    /// JSON Schema: most grammar states a counted `contains` spells out; an object's named
    /// × counted properties may have ten times as many.
    pub max_spelled_count: usize,
    /// JSON Schema: most states of one `multipleOf` step's residue automaton (about
    /// m·(e+2) for a step m·10⁻ᵉ).
    pub max_multiple_states: usize,
    /// JSON Schema: most states of a number set's automaton (bounds, `multipleOf` steps and
    /// excluded values together), written as one grammar rule per state.
    pub max_number_states: usize,
    /// JSON Schema with `indent`: deepest nesting of containers in an output value (each
    /// depth has rules of its own; a recursive schema stops there).
    pub max_indent_depth: usize,
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
            max_fresh_item_steps: 100_000,
            max_mask_cache_bytes: 256 << 20,
            max_compile_ms: 5_000,
            max_schema_alternatives: 4096,
            max_schema_depth: 256,
            max_schema_document_depth: 512,
            max_schema_value_depth: 4096,
            max_schema_passes: 16,
            max_pattern_properties: 32,
            max_key_classes: 64,
            max_counted_items: 64,
            max_unevaluated_subschemas: 256,
            max_regex_format_states: 4096,
            max_spelled_count: 10_000,
            max_multiple_states: 4096,
            max_number_states: 20_000,
            max_indent_depth: 32,
        }
    }
}
