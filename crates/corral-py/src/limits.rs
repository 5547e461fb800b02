//! The `Limits` class: corral-core's `Limits`, one keyword argument and one read-only
//! property per field.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use corral_core as core;

/// Declares `PyLimits` with one keyword argument and one getter per `corral_core::Limits`
/// field, so the Python class cannot drift from the Rust one.
macro_rules! limits_class {
    ($($field:ident: $ty:ty => $doc:literal),* $(,)?) => {
        /// Resource limits; see docs/limits.md. Defaults come from corral-core.
        #[pyclass(module = "corral._core", name = "Limits", frozen, eq, hash)]
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub(crate) struct PyLimits {
            pub(crate) inner: core::Limits,
        }

        #[pymethods]
        impl PyLimits {
            #[new]
            #[pyo3(signature = (*, $($field=None),*))]
            #[allow(clippy::too_many_arguments)]
            fn new($($field: Option<$ty>),*) -> Self {
                let d = core::Limits::default();
                PyLimits { inner: core::Limits { $($field: $field.unwrap_or(d.$field)),* } }
            }

            $(
                #[doc = $doc]
                #[getter]
                fn $field(&self) -> $ty {
                    self.inner.$field
                }
            )*

            /// The keyword arguments that rebuild these limits: how they pickle (the
            /// constructor takes keywords only).
            fn __getnewargs_ex__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
                let kwargs = PyDict::new(py);
                $(kwargs.set_item(stringify!($field), self.inner.$field)?;)*
                Ok((PyTuple::empty(py), kwargs))
            }

            fn __repr__(&self) -> String {
                let parts: Vec<String> = vec![$(format!("{}={}", stringify!($field), self.inner.$field)),*];
                format!("Limits({})", parts.join(", "))
            }
        }
    };
}

limits_class! {
    max_pattern_bytes: usize => "Longest regex pattern, in bytes.",
    regex_nest_limit: u32 => "Deepest group/repetition nesting in a regex.",
    nfa_size_limit: usize => "Heap bytes for a regex's NFA.",
    dfa_size_limit: usize => "Heap bytes for a regex's DFA (also bounds determinization).",
    max_dfa_states: usize => "Most DFA states after pruning.",
    max_forced_tokens: usize => "Most tokens one forced_tokens() call returns.",
    max_vocab_size: usize => "Largest vocabulary size (logits width).",
    max_grammar_bytes: usize => "Longest grammar text, in bytes.",
    max_grammar_nesting: u32 => "Deepest group nesting in a grammar text.",
    max_grammar_productions: usize => "Most productions after grammar normalization.",
    max_earley_items: usize => "Most Earley items one byte of input may create or derive again.",
    max_chart_bytes: usize => "Heap bytes one parse (a matcher's Earley chart) may hold.",
    max_completion_bytes: usize => "Longest completion Matcher.completion() returns, in bytes.",
    max_fresh_item_steps: usize => "Most bytes tried, per token, finding a new value for a half-written uniqueItems item.",
    max_mask_cache_bytes: usize => "Heap bytes a grammar may spend caching parser-state masks.",
    max_compile_ms: u64 => "Wall-clock milliseconds one build step (grammar, schema translation, compile) may take.",
    max_schema_alternatives: usize => "JSON Schema: most alternatives one subschema expands to (anyOf x anyOf, oneOf, if).",
    max_schema_depth: usize => "JSON Schema: deepest nesting of subschemas read in place (allOf, anyOf, not, $ref...).",
    max_schema_document_depth: usize => "JSON Schema: deepest nesting of JSON values in the schema document.",
    max_schema_value_depth: usize => "JSON Schema: deepest chain of value rules built inside one another.",
    max_schema_passes: usize => "JSON Schema: most translations of one schema (each drops subschemas found to allow no value).",
    max_pattern_properties: usize => "JSON Schema: most patternProperties patterns that apply to one object.",
    max_key_classes: usize => "JSON Schema: most classes of an object's other keys whose values obey different subschemas.",
    max_counted_items: usize => "JSON Schema: largest maxItems of an array that also has contains.",
    max_unevaluated_subschemas: usize => "JSON Schema: most subschemas read in place around one unevaluatedProperties.",
    max_regex_format_states: usize => "JSON Schema: most states explored to show that a pattern or maxLength beside format 'regex' allows only regular expressions.",
    max_spelled_count: usize => "JSON Schema: most grammar states a counted contains spells out (10x for an object's counted properties).",
    max_multiple_states: usize => "JSON Schema: most states of one multipleOf step's residue automaton.",
    max_number_states: usize => "JSON Schema: most states of a number set's automaton (bounds, steps, excluded values).",
    max_indent_depth: usize => "JSON Schema with indent: deepest nesting of containers in an output value.",
}
