//! `corral._core`: the thin PyO3 binding of corral-core.
//!
//! It only converts arguments, checks buffers, releases the GIL around mask work, and maps
//! errors to the exception classes defined in `corral/errors.py` (all under
//! `corral.CorralError`). A Rust panic becomes `corral.InternalError`, never an abort.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use pyo3::IntoPyObjectExt;

use corral_core as core;

mod intersection;

/// Building a grammar makes many small, short-lived allocations (DFA state sets, tables);
/// mimalloc serves them several times faster than the system allocator (a third of a small
/// JSON Schema's build time went to malloc and free).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Raises the `corral.errors` class `name` with `message` and extra attributes.
fn raise(py: Python<'_>, name: &str, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = py.import("corral.errors")?.getattr(name)?;
        let exc = cls.call1((message.clone(),))?;
        for (k, v) in attrs {
            exc.setattr(*k, v.bind(py))?;
        }
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// A Python object for an exception attribute (None if the conversion fails).
fn val<'py, T: IntoPyObjectExt<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    v.into_py_any(py).unwrap_or_else(|_| py.None())
}

fn to_py_err(py: Python<'_>, err: core::Error) -> PyErr {
    let message = err.to_string();
    match err {
        core::Error::RegexSyntax { pattern, position, .. } => {
            raise(py, "RegexSyntaxError", message, &[("pattern", val(py, pattern)), ("position", val(py, position))])
        }
        core::Error::UnsupportedRegex { construct, pattern, position } => raise(
            py,
            "UnsupportedFeatureError",
            message,
            &[("construct", val(py, construct)), ("pattern", val(py, pattern)), ("position", val(py, position))],
        ),
        core::Error::LimitExceeded { limit, value, .. } => {
            raise(py, "LimitExceededError", message, &[("limit", val(py, limit)), ("value", val(py, value))])
        }
        core::Error::EmptyLanguage { .. } => raise(py, "EmptyLanguageError", message, &[]),
        core::Error::Grammar { line, col, .. } => {
            raise(py, "InvalidGrammarError", message, &[("line", val(py, line)), ("column", val(py, col))])
        }
        core::Error::Vocabulary(_) => raise(py, "VocabularyError", message, &[]),
        core::Error::InvalidArgument(_) => raise(py, "MatcherError", message, &[]),
        core::Error::NoCommonToken { .. } => raise(py, "DeadEndError", message, &[]),
        core::Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        _ => raise(py, "InternalError", format!("internal error in corral (please report this bug): {message}"), &[]),
    }
}

/// Runs `f`, turning a panic into `corral.InternalError` and a core error into its class.
fn guard<T>(py: Python<'_>, f: impl FnOnce() -> core::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py_err(py, e)),
        Err(panic) => Err(internal(py, panic)),
    }
}

fn internal(py: Python<'_>, panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    raise(py, "InternalError", format!("internal error in corral (please report this bug): {what}"), &[])
}

/// Like [`guard`], with the GIL released while `f` runs. Long work polls for signals:
/// Ctrl-C (or any Python signal handler that raises) stops it within a few tens of
/// milliseconds, and that exception is raised here.
fn guard_detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> core::Result<T> + Send) -> PyResult<T> {
    let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let result = py.detach(|| {
        // Signal handlers run on the main thread only; elsewhere this finds nothing.
        let poll = || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    if let Ok(mut slot) = raised.lock() {
                        *slot = Some(e);
                    }
                    true
                }
            })
        };
        let scope = core::interrupt::Scope { poll: Some(&poll), ..Default::default() };
        catch_unwind(AssertUnwindSafe(|| core::interrupt::run(&scope, f)))
    });
    match result {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(core::Error::Interrupted)) => {
            let pending = raised.lock().ok().and_then(|mut slot| slot.take());
            Err(pending.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted")))
        }
        Ok(Err(e)) => Err(to_py_err(py, e)),
        Err(panic) => Err(internal(py, panic)),
    }
}

/// A Python int as an index below `bound`: anything else (negative, too large, not an
/// int) is the corral error class `class`, naming `what`.
fn index(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str, bound: usize, class: &str) -> PyResult<usize> {
    let v = count(py, obj, what, class)?;
    if v >= bound {
        return Err(raise(py, class, format!("{what} {v} is out of range (0 to {})", bound.saturating_sub(1)), &[]));
    }
    Ok(v)
}

/// A Python integer (anything with `__index__`: an int, a numpy or torch integer) that
/// must be ≥ 0 and fit a `usize`, else the corral error `class` naming `what`; a bool or
/// a non-integer is a `TypeError`.
fn count(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str, class: &str) -> PyResult<usize> {
    let type_error = || {
        let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!("{what} must be an int, not {type_name}"))
    };
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(type_error());
    }
    match obj.extract::<i128>() {
        Ok(v) if v >= 0 && v <= usize::MAX as i128 => Ok(v as usize),
        Ok(v) if v < 0 => Err(raise(py, class, format!("{what} {v} is out of range: it must be ≥ 0"), &[])),
        Ok(_) => Err(raise(py, class, format!("{what} {obj} is out of range: it is too large"), &[])),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py) => {
            Err(raise(py, class, format!("{what} {obj} is out of range"), &[]))
        }
        Err(_) => Err(type_error()),
    }
}

/// Each item of a Python iterable as an index below `bound` (see [`index`]).
fn indices(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str, bound: usize, class: &str) -> PyResult<Vec<usize>> {
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!("{what}s must be a list of ints")));
    }
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        out.push(index(py, &item?, what, bound, class)?);
    }
    Ok(out)
}

/// Declares `PyLimits` with one keyword argument and one getter per `corral_core::Limits`
/// field, so the Python class cannot drift from the Rust one.
macro_rules! limits_class {
    ($($field:ident: $ty:ty => $doc:literal),* $(,)?) => {
        /// Resource limits; see docs/limits.md. Defaults come from corral-core.
        #[pyclass(module = "corral._core", name = "Limits", frozen, eq, hash)]
        #[derive(Clone, PartialEq, Eq, Hash)]
        struct PyLimits {
            inner: core::Limits,
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
    max_mask_cache_bytes: usize => "Heap bytes a grammar may spend caching parser-state masks.",
    max_compile_ms: u64 => "Wall-clock milliseconds one build step (grammar, schema translation, compile) may take.",
}

/// Token id → exact bytes, EOS and special ids, the logits width, and the token trie.
#[pyclass(module = "corral._core", name = "Vocabulary", frozen)]
struct PyVocabulary {
    inner: Arc<core::Vocabulary>,
}

#[pymethods]
impl PyVocabulary {
    #[new]
    #[pyo3(signature = (token_bytes, eos_token_ids, special_token_ids, size=None, limits=None))]
    fn new(
        py: Python<'_>,
        token_bytes: Vec<Option<Vec<u8>>>,
        eos_token_ids: &Bound<'_, PyAny>,
        special_token_ids: &Bound<'_, PyAny>,
        size: Option<&Bound<'_, PyAny>>,
        limits: Option<PyRef<'_, PyLimits>>,
    ) -> PyResult<Self> {
        let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
        let size = match size {
            Some(s) if !s.is_none() => {
                let cap = limits.max_vocab_size.max(token_bytes.len());
                Some(index(py, s, "vocabulary size", cap.saturating_add(1), "VocabularyError").map_err(|e| {
                    if e.is_instance_of::<PyTypeError>(py) {
                        e
                    } else {
                        to_py_err(
                            py,
                            core::Error::LimitExceeded {
                                limit: "max_vocab_size",
                                value: limits.max_vocab_size,
                                context: format!("a vocabulary of size {s}"),
                            },
                        )
                    }
                })?)
            }
            _ => None,
        };
        let bound = size.unwrap_or(token_bytes.len()).max(1);
        let to_u32 = |v: Vec<usize>| v.into_iter().map(|i| i as u32).collect::<Vec<u32>>();
        let eos = to_u32(indices(py, eos_token_ids, "EOS token id", bound, "VocabularyError")?);
        let special = to_u32(indices(py, special_token_ids, "special token id", bound, "VocabularyError")?);
        let v = guard_detached(py, move || core::Vocabulary::with_limits(token_bytes, &special, &eos, size, &limits))?;
        Ok(PyVocabulary { inner: Arc::new(v) })
    }

    /// The logits width (number of ids a mask covers).
    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }

    /// int32 words per mask row: ceil(size / 32).
    #[getter]
    fn mask_width(&self) -> usize {
        self.inner.mask_words()
    }

    /// End-of-sequence ids.
    #[getter]
    fn eos_token_ids(&self) -> Vec<u32> {
        self.inner.eos_ids().to_vec()
    }

    /// The special (control) ids: never allowed by a grammar. EOS ids are not among them.
    #[getter]
    fn special_token_ids(&self) -> Vec<u32> {
        (0..self.inner.size() as u32).filter(|&i| self.inner.kind(i) == core::TokenKind::Special).collect()
    }

    /// Content hash of the vocabulary, used for caching compiled grammars.
    #[getter]
    fn fingerprint(&self) -> String {
        format!("{:016x}", self.inner.fingerprint())
    }

    /// Number of nodes in the token trie.
    #[getter]
    fn trie_nodes(&self) -> usize {
        self.inner.trie().num_nodes()
    }

    /// The exact bytes token `id` stands for ('' for special, EOS and missing ids).
    fn token_bytes<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let id = index(py, id, "token id", self.inner.size(), "VocabularyError")?;
        Ok(PyBytes::new(py, self.inner.token_bytes(id as u32)))
    }

    /// The normal tokens whose bytes start with `prefix` (a walk down the token trie).
    fn tokens_with_prefix(&self, prefix: &[u8]) -> Vec<u32> {
        self.inner.tokens_with_prefix(prefix).to_vec()
    }

    /// The kind of token `id`: "normal", "special", "eos" or "missing".
    fn token_kind(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let id = index(py, id, "token id", self.inner.size(), "VocabularyError")?;
        Ok(match self.inner.kind(id as u32) {
            core::TokenKind::Normal => "normal",
            core::TokenKind::Special => "special",
            core::TokenKind::Eos => "eos",
            core::TokenKind::Missing => "missing",
        })
    }

    /// Every id's stored bytes in one call, for pickling: `(data, ends)` where id `i`'s
    /// bytes are `data[ends[i-1]:ends[i]]` (from 0 for id 0) and `ends` holds `size`
    /// little-endian uint32s. Special and EOS ids keep their text here (it is part of the
    /// fingerprint), unlike `token_bytes`.
    fn _export_tokens<'py>(&self, py: Python<'py>) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        let v = &self.inner;
        let mut data = Vec::new();
        let mut ends = Vec::with_capacity(v.size() * 4);
        for id in 0..v.size() as u32 {
            data.extend_from_slice(v.raw_token_bytes(id));
            ends.extend_from_slice(&(data.len() as u32).to_le_bytes());
        }
        (PyBytes::new(py, &data), PyBytes::new(py, &ends))
    }

    /// Concatenated bytes of a token sequence (special tokens contribute nothing).
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        for id in indices(py, ids, "token id", self.inner.size(), "VocabularyError")? {
            out.extend_from_slice(self.inner.token_bytes(id as u32));
        }
        Ok(PyBytes::new(py, &out))
    }
}

/// `(digit, word, space)` code-point ranges for `\d \w \s` (see `Grammar.regex`).
type Classes = (Vec<(char, char)>, Vec<(char, char)>, Vec<(char, char)>);

/// The arguments a grammar was built from: pickling saves them and rebuilds the grammar
/// by the same constructor (a built grammar has no serialized form of its own).
#[derive(Clone)]
enum Recipe {
    Regex {
        pattern: String,
        limits: Option<core::Limits>,
        classes: Option<Classes>,
    },
    Cfg {
        text: String,
        dialect: String,
        start: Option<String>,
        limits: Option<core::Limits>,
        classes: Option<Classes>,
        max_terminal_source: Option<usize>,
        distinct_keys: bool,
        key_endings_infinite: bool,
    },
}

/// A validated constraint, not yet tied to a vocabulary.
#[pyclass(module = "corral._core", name = "Grammar", frozen)]
struct PyGrammar {
    inner: core::Grammar,
    recipe: Recipe,
}

#[pymethods]
impl PyGrammar {
    /// Parses a Python `re` pattern (fullmatch meaning). Raises on syntax errors and on
    /// constructs a DFA cannot express.
    ///
    /// `classes`: `(digit, word, space)` lists of inclusive code-point ranges giving the
    /// interpreter's `\d \w \s`; without it, corral's built-in Unicode tables are used.
    #[staticmethod]
    #[pyo3(signature = (pattern, limits=None, classes=None))]
    fn regex(py: Python<'_>, pattern: &str, limits: Option<PyRef<'_, PyLimits>>, classes: Option<Classes>) -> PyResult<Self> {
        let recipe = Recipe::Regex {
            pattern: pattern.to_string(),
            limits: limits.as_ref().map(|l| l.inner.clone()),
            classes: classes.clone(),
        };
        let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
        let classes = classes.map(|(digit, word, space)| core::PerlClasses { digit, word, space });
        let pattern = pattern.to_string();
        let inner = guard_detached(py, move || core::Grammar::regex(&pattern, &limits, classes.as_ref()))?;
        Ok(PyGrammar { inner, recipe })
    }

    /// Parses, validates and normalizes corral EBNF (`dialect="ebnf"`) or llama.cpp GBNF
    /// (`dialect="gbnf"`). `start` names the start rule; `max_terminal_source` overrides
    /// how large a regular part may be to become one terminal (see `cfg::LowerOptions`).
    /// `distinct_keys`: the text is JSON whose objects must not repeat a key (see
    /// `json_keys` in corral-core); `key_endings_infinite`: every half-written key is
    /// known to have infinitely many endings (only closed keys are then checked).
    #[staticmethod]
    #[pyo3(signature = (text, dialect, start=None, limits=None, classes=None, max_terminal_source=None, distinct_keys=false, key_endings_infinite=false))]
    #[allow(clippy::too_many_arguments)] // the Python signature's arguments
    fn cfg(
        py: Python<'_>,
        text: &str,
        dialect: &str,
        start: Option<&str>,
        limits: Option<PyRef<'_, PyLimits>>,
        classes: Option<Classes>,
        max_terminal_source: Option<usize>,
        distinct_keys: bool,
        key_endings_infinite: bool,
    ) -> PyResult<Self> {
        let recipe = Recipe::Cfg {
            text: text.to_string(),
            dialect: dialect.to_string(),
            start: start.map(str::to_string),
            limits: limits.as_ref().map(|l| l.inner.clone()),
            classes: classes.clone(),
            max_terminal_source,
            distinct_keys,
            key_endings_infinite,
        };
        let dialect = match dialect {
            "ebnf" => core::Dialect::Ebnf,
            "gbnf" => core::Dialect::Gbnf,
            "lark" => core::Dialect::Lark,
            other => return Err(PyTypeError::new_err(format!("unknown grammar dialect {other:?}"))),
        };
        let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
        let classes = classes.map(|(digit, word, space)| core::PerlClasses { digit, word, space });
        let text = text.to_string();
        let start = start.map(str::to_string);
        let mut options = core::LowerOptions::default();
        if let Some(n) = max_terminal_source {
            options.max_terminal_source = n;
        }
        let inner = guard_detached(py, move || {
            core::Grammar::cfg_text_with(&text, dialect, start.as_deref(), &limits, &options, classes.as_ref())
        })?;
        let inner = if distinct_keys { inner.with_distinct_keys(key_endings_infinite) } else { inner };
        Ok(PyGrammar { inner, recipe })
    }

    /// A random sentence of a context-free grammar (about `budget` bytes): for tests and
    /// examples. None for a regex.
    #[pyo3(signature = (seed, budget=64))]
    fn sample<'py>(&self, py: Python<'py>, seed: u64, budget: usize) -> Option<Bound<'py, PyBytes>> {
        self.inner.sample(seed, budget).map(|b| PyBytes::new(py, &b))
    }

    /// The grammar text translated to Lark syntax (a test oracle: an independent parser
    /// can check corral's outputs). Rules become r0, r1, ...; terminals become regexes.
    #[staticmethod]
    #[pyo3(signature = (text, dialect, start))]
    fn _to_lark(py: Python<'_>, text: &str, dialect: &str, start: &str) -> PyResult<String> {
        let dialect = match dialect {
            "gbnf" => core::Dialect::Gbnf,
            "lark" => core::Dialect::Lark,
            _ => core::Dialect::Ebnf,
        };
        let ast = guard(py, || core::frontend::parse(text, dialect, &core::Limits::default()))?;
        ast.to_lark(start).map_err(PyTypeError::new_err)
    }

    /// Non-fatal findings about the grammar (e.g. unused rules).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings().to_vec()
    }

    /// Pickles as the constructor call that built it (`_rebuild_grammar` repeats it).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let limits = |l: &Option<core::Limits>| l.clone().map(|inner| PyLimits { inner });
        let args = match &self.recipe {
            Recipe::Regex { pattern, limits: l, classes } => {
                ("regex", (pattern, limits(l), classes.clone())).into_pyobject(py)?
            }
            Recipe::Cfg {
                text,
                dialect,
                start,
                limits: l,
                classes,
                max_terminal_source,
                distinct_keys,
                key_endings_infinite,
            } => (
                "cfg",
                (text, dialect, start, limits(l), classes.clone(), *max_terminal_source, *distinct_keys, *key_endings_infinite),
            )
                .into_pyobject(py)?,
        };
        Ok((py.import("corral._core")?.getattr("_rebuild_grammar")?, args))
    }

    fn __repr__(&self) -> String {
        format!("<corral._core.Grammar {}>", self.inner.describe())
    }
}

/// A grammar compiled for one vocabulary: immutable and shareable across threads.
#[pyclass(module = "corral._core", name = "CompiledGrammar", frozen, subclass)]
struct PyCompiledGrammar {
    inner: Arc<core::CompiledGrammar>,
    /// `(function, args)` that builds this compiled grammar again (from `corral.compile`),
    /// returned by `__reduce__`; None for one made by `_core.compile` directly.
    rebuild: Option<Py<PyAny>>,
}

#[pymethods]
impl PyCompiledGrammar {
    /// A new matcher at the start of the grammar.
    fn matcher<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMatcher>> {
        intersection::matcher_object(py, core::Matcher::new(self.inner.clone()))
    }

    /// Number of automaton states of a regular grammar (the dead state included; 0 for
    /// a context-free grammar).
    #[getter]
    fn num_states(&self) -> usize {
        self.inner.num_states()
    }

    /// Number of states whose mask has been computed.
    #[getter]
    fn cached_states(&self) -> usize {
        self.inner.cached_states()
    }

    /// Heap bytes of the automaton and cached masks.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// Does the constraint accept the whole of `data` (as output bytes)?
    fn matches(&self, py: Python<'_>, data: &[u8]) -> PyResult<bool> {
        guard_detached(py, || self.inner.matches(data))
    }

    /// The vocabulary's logits width.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab().size()
    }

    /// Pickles as the `corral.compile` call that made it (compiling again on load): the
    /// automaton and mask caches are not saved.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.rebuild {
            Some(r) => Ok(r.bind(py).clone()),
            None => Err(PyTypeError::new_err(
                "cannot pickle a CompiledGrammar made by corral._core.compile: make it with corral.compile",
            )),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<corral.CompiledGrammar {} states={} cached={}>",
            self.inner.grammar().describe(),
            self.inner.num_states(),
            self.inner.cached_states()
        )
    }
}

/// Compiles a grammar against a vocabulary (GIL released). `rebuild`: a `(function,
/// args)` pair that makes the same compiled grammar again, which is how it pickles.
#[pyfunction]
#[pyo3(signature = (grammar, vocab, limits=None, eager=false, rebuild=None))]
fn compile(
    py: Python<'_>,
    grammar: PyRef<'_, PyGrammar>,
    vocab: PyRef<'_, PyVocabulary>,
    limits: Option<PyRef<'_, PyLimits>>,
    eager: bool,
    rebuild: Option<Bound<'_, PyTuple>>,
) -> PyResult<PyCompiledGrammar> {
    let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
    let g = grammar.inner.clone();
    let v = vocab.inner.clone();
    let compiled = guard_detached(py, move || core::CompiledGrammar::new(&g, v, &limits, eager))?;
    Ok(PyCompiledGrammar { inner: Arc::new(compiled), rebuild: rebuild.map(|r| r.into_any().unbind()) })
}

/// A writable, C-contiguous int32 buffer: its base pointer and shape as (rows, words).
struct MaskBuffer {
    buf: PyBuffer<i32>,
    rows: usize,
    words: usize,
}

impl MaskBuffer {
    fn get(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<MaskBuffer> {
        let buf = match PyBuffer::<i32>::get(obj) {
            Ok(b) => b,
            Err(first) => {
                // torch tensors have no buffer protocol; CPU ones share memory via .numpy().
                if obj.hasattr("numpy")? && obj.hasattr("device")? {
                    let device = obj.getattr("device")?.getattr("type")?.extract::<String>()?;
                    if device != "cpu" {
                        return Err(raise(
                            py,
                            "MatcherError",
                            format!(
                                "bitmask is on device '{device}': fill a CPU bitmask (corral.allocate_bitmask): \
                                 corral.apply_bitmask moves it to the logits' device"
                            ),
                            &[],
                        ));
                    }
                    PyBuffer::<i32>::get(&obj.call_method0("numpy")?)?
                } else {
                    return Err(raise(
                        py,
                        "MatcherError",
                        format!("bitmask must be an int32 array (numpy or torch), from corral.allocate_bitmask: {first}"),
                        &[],
                    ));
                }
            }
        };
        if buf.readonly() {
            return Err(raise(py, "MatcherError", "bitmask is read-only".into(), &[]));
        }
        if !buf.is_c_contiguous() {
            return Err(raise(py, "MatcherError", "bitmask must be C-contiguous".into(), &[]));
        }
        let (rows, words) = match buf.shape() {
            [w] => (1, *w),
            [r, w] => (*r, *w),
            s => {
                return Err(raise(py, "MatcherError", format!("bitmask must have 1 or 2 dimensions, got shape {s:?}"), &[]));
            }
        };
        Ok(MaskBuffer { buf, rows, words })
    }

    /// The row as a raw pointer (address), checked against the expected width.
    fn row(&self, py: Python<'_>, row: usize, expect_words: usize) -> PyResult<usize> {
        if self.words != expect_words {
            return Err(raise(
                py,
                "MatcherError",
                format!("bitmask rows have {} int32 words, the vocabulary needs {expect_words}", self.words),
                &[],
            ));
        }
        if row >= self.rows {
            return Err(raise(py, "MatcherError", format!("row {row} is out of range for a bitmask of {} rows", self.rows), &[]));
        }
        Ok(self.buf.buf_ptr() as usize + row * self.words * 4)
    }
}

/// Writes one matcher's mask into the row at `addr` (a pointer into a live, checked buffer).
fn fill_at(matcher: &core::Matcher, addr: usize, words: usize) -> core::Result<core::MaskInfo> {
    // SAFETY: `addr` points at `words` int32s inside a writable C-contiguous buffer that the
    // caller keeps alive (the PyBuffer is held) for the duration of this call.
    let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u32, words) };
    matcher.fill_mask(out)
}

fn dead_end(py: Python<'_>, tokens: usize) -> PyErr {
    raise(
        py,
        "DeadEndError",
        format!(
            "no token of the vocabulary can continue the output after {tokens} tokens: the constraint \
             needs bytes that no token provides"
        ),
        &[],
    )
}

/// One sequence's position in a compiled grammar.
///
/// Safe to share between threads: calls on one matcher take turns (a call waits, with the
/// GIL released, while another thread's call on the same matcher runs).
#[pyclass(module = "corral._core", name = "Matcher", frozen, subclass)]
struct PyMatcher {
    inner: std::sync::Mutex<core::Matcher>,
}

impl PyMatcher {
    /// The matcher, locked for this call (waiting without the GIL if another thread has it).
    fn lock<'a>(&'a self, py: Python<'_>) -> std::sync::MutexGuard<'a, core::Matcher> {
        loop {
            match self.inner.try_lock() {
                Ok(g) => return g,
                Err(std::sync::TryLockError::Poisoned(p)) => return p.into_inner(),
                // A guard cannot cross the GIL release, so wait outside the lock and retry.
                Err(std::sync::TryLockError::WouldBlock) => {
                    py.detach(|| std::thread::sleep(std::time::Duration::from_micros(50)))
                }
            }
        }
    }

    fn new(inner: core::Matcher) -> PyMatcher {
        PyMatcher { inner: std::sync::Mutex::new(inner) }
    }
}

#[pymethods]
impl PyMatcher {
    /// Writes the allowed-token bitmask into `bitmask[row]` (int32, bit t of word t//32).
    /// Mask computation runs with the GIL released. Raises DeadEndError if no token is
    /// allowed.
    #[pyo3(signature = (bitmask, row=None))]
    fn fill_bitmask(&self, py: Python<'_>, bitmask: &Bound<'_, PyAny>, row: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let buf = MaskBuffer::get(py, bitmask)?;
        let row = match row {
            Some(r) => index(py, r, "row", buf.rows, "MatcherError")?,
            None => 0,
        };
        let matcher = self.lock(py);
        let words = matcher.grammar().vocab().mask_words();
        let addr = buf.row(py, row, words)?;
        // Released even for a cached mask (a ~16 KiB copy): ~0.2 µs, and other threads
        // (the model's forward pass, other rows) keep running.
        let m = &*matcher;
        let info = guard_detached(py, move || fill_at(m, addr, words))?;
        drop(buf);
        if info.allowed == 0 {
            return Err(dead_end(py, matcher.num_tokens()));
        }
        Ok(())
    }

    /// Fills the mask the slow way (a plain parser trie walk, no caches): a reference for
    /// tests of the fast path.
    #[pyo3(signature = (bitmask, row=0))]
    fn _fill_bitmask_reference(&self, py: Python<'_>, bitmask: &Bound<'_, PyAny>, row: usize) -> PyResult<()> {
        let buf = MaskBuffer::get(py, bitmask)?;
        let matcher = self.lock(py);
        let words = matcher.grammar().vocab().mask_words();
        let addr = buf.row(py, row, words)?;
        let m = &*matcher;
        guard_detached(py, move || {
            // SAFETY: as in fill_at: a checked, held, writable row of `words` int32s.
            let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u32, words) };
            m.fill_mask_reference(out)
        })?;
        Ok(())
    }

    /// Consumes `token`; returns False (state unchanged) if the grammar does not allow it.
    fn advance(&self, py: Python<'_>, token: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mut matcher = self.lock(py);
        let token = index(py, token, "token id", matcher.grammar().vocab().size(), "MatcherError")?;
        let m = &mut *matcher;
        guard_detached(py, move || m.advance(token as u32))
    }

    /// Would `token` be accepted now?
    fn is_allowed(&self, py: Python<'_>, token: &Bound<'_, PyAny>) -> PyResult<bool> {
        let matcher = self.lock(py);
        let token = index(py, token, "token id", matcher.grammar().vocab().size(), "MatcherError")?;
        let m = &*matcher;
        guard_detached(py, move || Ok(m.is_allowed(token as u32)))
    }

    /// Undoes the last `n` accepted tokens.
    #[pyo3(signature = (n=None))]
    fn rollback(&self, py: Python<'_>, n: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mut matcher = self.lock(py);
        let n = match n {
            Some(n) => count(py, n, "rollback count", "MatcherError")?,
            None => 1,
        };
        guard(py, || matcher.rollback(n))
    }

    /// Returns to the start of the grammar.
    fn reset(&self, py: Python<'_>) {
        self.lock(py).reset()
    }

    /// May the output end here (is EOS allowed)?
    fn is_accepting(&self, py: Python<'_>) -> bool {
        self.lock(py).is_accepting()
    }

    /// Has EOS been accepted?
    fn is_finished(&self, py: Python<'_>) -> bool {
        self.lock(py).is_finished()
    }

    /// Tokens that are the only way forward (ending with EOS if ending is forced).
    fn forced_tokens(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let matcher = self.lock(py);
        let m = &*matcher;
        guard_detached(py, move || m.forced_tokens())
    }

    /// Bytes that, appended to the output, would make it complete (short, not always the
    /// shortest): b"" if it may end now, None once finished.
    fn completion<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let matcher = self.lock(py);
        let m = &*matcher;
        let bytes = guard_detached(py, move || m.completion())?;
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }

    /// Number of tokens accepted so far (EOS included).
    #[getter]
    fn num_tokens(&self, py: Python<'_>) -> usize {
        self.lock(py).num_tokens()
    }

    /// An independent copy of this matcher (same grammar, same history).
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMatcher>> {
        let copy = self.lock(py).clone();
        intersection::matcher_object(py, copy)
    }

    fn __copy__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMatcher>> {
        self.copy(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let matcher = self.lock(py);
        // A regex's description holds the whole pattern: bounded, control characters escaped.
        let described = matcher.grammar().grammar().describe();
        let mut kind = String::new();
        for c in described.chars().take(80) {
            if c.is_control() {
                kind.extend(c.escape_default());
            } else {
                kind.push(c);
            }
        }
        if described.chars().nth(80).is_some() {
            kind.push('…');
        }
        let flag = |b: bool| if b { "True" } else { "False" };
        format!(
            "<corral.Matcher {kind} tokens={} accepting={} finished={}>",
            matcher.num_tokens(),
            flag(matcher.is_accepting()),
            flag(matcher.is_finished())
        )
    }
}

/// Fills `bitmask[i]` for each matcher `i` (or rows given by `rows`), with the GIL released
/// and the uncached rows computed in parallel.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, rows=None))]
fn fill_bitmasks(
    py: Python<'_>,
    matchers: Vec<PyRef<'_, PyMatcher>>,
    bitmask: &Bound<'_, PyAny>,
    rows: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let buf = MaskBuffer::get(py, bitmask)?;
    let rows = match rows {
        Some(r) if !r.is_none() => indices(py, r, "row", buf.rows, "MatcherError")?,
        _ => (0..matchers.len()).collect(),
    };
    if rows.len() != matchers.len() {
        return Err(raise(py, "MatcherError", format!("{} matchers but {} rows", matchers.len(), rows.len()), &[]));
    }
    let mut seen_rows = std::collections::HashSet::new();
    let mut seen_matchers = std::collections::HashSet::new();
    for (i, (m, &row)) in matchers.iter().zip(&rows).enumerate() {
        if !seen_rows.insert(row) {
            return Err(raise(py, "MatcherError", format!("row {row} is given twice"), &[]));
        }
        if !seen_matchers.insert(&**m as *const PyMatcher as usize) {
            return Err(raise(py, "MatcherError", format!("matcher {i} is the same object as an earlier one"), &[]));
        }
    }
    let guards: Vec<_> = matchers.iter().map(|m| m.lock(py)).collect();
    let mut jobs = Vec::with_capacity(guards.len());
    for (g, &row) in guards.iter().zip(&rows) {
        let words = g.grammar().vocab().mask_words();
        jobs.push((&**g, buf.row(py, row, words)?, words, g.num_tokens()));
    }
    let jobs = &jobs;
    let results: Vec<core::Result<core::MaskInfo>> = guard_detached(py, move || Ok(fill_parallel(jobs)))?;
    drop(buf);
    for (r, job) in results.into_iter().zip(jobs) {
        let info = r.map_err(|e| {
            if e == core::Error::Interrupted {
                PyKeyboardInterrupt::new_err("interrupted")
            } else {
                to_py_err(py, e)
            }
        })?;
        if info.allowed == 0 {
            return Err(dead_end(py, job.3));
        }
    }
    Ok(())
}

/// A mask job: the matcher, its row's address and width, and its token count.
type Job<'a> = (&'a core::Matcher, usize, usize, usize);

/// The worker threads of batch mask filling: one pool for the process, built on first use
/// with one thread per core, resized by [`set_num_threads`].
static POOL: std::sync::RwLock<Option<Arc<rayon::ThreadPool>>> = std::sync::RwLock::new(None);

fn build_pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("corral-mask-{i}"))
        .build()
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The pool (built now if it was not yet).
fn pool() -> Result<Arc<rayon::ThreadPool>, String> {
    if let Some(p) = POOL.read().ok().and_then(|g| g.clone()) {
        return Ok(p);
    }
    let mut slot = POOL.write().map_err(|e| e.to_string())?;
    if let Some(p) = slot.clone() {
        return Ok(p);
    }
    let p = build_pool(std::thread::available_parallelism().map_or(1, |n| n.get()))?;
    *slot = Some(p.clone());
    Ok(p)
}

/// Sets how many threads `fill_bitmasks` uses for a batch (the calling thread included;
/// default: one per core). 1 fills every row on the calling thread.
#[pyfunction]
fn set_num_threads(py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<()> {
    let n = count(py, n, "the number of threads", "MatcherError")?;
    if n == 0 {
        return Err(raise(py, "MatcherError", "the number of threads must be at least 1".into(), &[]));
    }
    let p = build_pool(n).map_err(|e| raise(py, "InternalError", format!("cannot start {n} threads: {e}"), &[]))?;
    if let Ok(mut slot) = POOL.write() {
        *slot = Some(p);
    }
    Ok(())
}

/// How many threads `fill_bitmasks` uses for a batch.
#[pyfunction]
fn get_num_threads(py: Python<'_>) -> PyResult<usize> {
    pool().map(|p| p.current_num_threads()).map_err(|e| raise(py, "InternalError", e, &[]))
}

/// Fills every job's row: the calling thread takes the first share (and keeps answering
/// Ctrl-C), the pool's threads the rest. The caller's interrupt reaches them through a
/// shared stop flag; a panic in one is a panic here (so `InternalError`).
fn fill_parallel(jobs: &[Job<'_>]) -> Vec<core::Result<core::MaskInfo>> {
    let fill = |part: &[Job<'_>]| part.iter().map(|(m, a, w, _)| fill_at(m, *a, *w)).collect::<Vec<_>>();
    let pool = match pool() {
        Ok(p) => p,
        Err(_) => return fill(jobs),
    };
    let threads = pool.current_num_threads().min(jobs.len()).max(1);
    if threads == 1 {
        return fill(jobs);
    }
    let chunk = jobs.len().div_ceil(threads);
    let mut parts = jobs.chunks(chunk);
    let first = parts.next().unwrap_or(&[]);
    let rest: Vec<&[Job<'_>]> = parts.collect();
    let mut slots: Vec<Vec<core::Result<core::MaskInfo>>> = vec![Vec::new(); rest.len()];
    let stop = core::interrupt::StopFlag::new();
    let mut out = Vec::new();
    pool.in_place_scope(|scope| {
        for (slot, part) in slots.iter_mut().zip(&rest) {
            let helper = core::interrupt::Scope { stop: stop.clone(), ..Default::default() };
            scope.spawn(move |_| *slot = core::interrupt::run(&helper, || fill(part)));
        }
        out = fill(first);
        if out.iter().any(|r| matches!(r, Err(core::Error::Interrupted))) {
            stop.stop();
        }
    });
    out.extend(slots.into_iter().flatten());
    out
}

/// Sets `logits[i, t] = -inf` wherever bit t of `bitmask[i]` is clear (float32 or float64,
/// C-contiguous, 1 or 2 dimensions). Ids past the mask's width are masked too.
#[pyfunction]
fn apply_bitmask_inplace(py: Python<'_>, logits: &Bound<'_, PyAny>, bitmask: &Bound<'_, PyAny>) -> PyResult<()> {
    let mask = MaskBuffer::get(py, bitmask)?;
    let m: Vec<i32> = mask.buf.to_vec(py)?;
    if let Ok(buf) = PyBuffer::<f32>::get(logits) {
        apply_typed(py, &buf, &m, mask.rows, mask.words, f32::NEG_INFINITY)
    } else if let Ok(buf) = PyBuffer::<f64>::get(logits) {
        apply_typed(py, &buf, &m, mask.rows, mask.words, f64::NEG_INFINITY)
    } else {
        Err(PyTypeError::new_err("logits must be a float32 or float64 buffer"))
    }
}

fn apply_typed<T: pyo3::buffer::Element + Copy + Send + Sync>(
    py: Python<'_>,
    buf: &PyBuffer<T>,
    mask: &[i32],
    mask_rows: usize,
    words: usize,
    neg_inf: T,
) -> PyResult<()> {
    if buf.readonly() || !buf.is_c_contiguous() {
        return Err(raise(py, "MatcherError", "logits must be writable and C-contiguous".into(), &[]));
    }
    let (rows, width) = match buf.shape() {
        [w] => (1, *w),
        [r, w] => (*r, *w),
        s => return Err(raise(py, "MatcherError", format!("logits must have 1 or 2 dimensions, got {s:?}"), &[])),
    };
    if rows != mask_rows {
        return Err(raise(py, "MatcherError", format!("logits have {rows} rows but the bitmask has {mask_rows}"), &[]));
    }
    let addr = buf.buf_ptr() as usize;
    py.detach(|| {
        // SAFETY: the buffer is held, writable, C-contiguous, rows * width elements of T.
        let logits = unsafe { std::slice::from_raw_parts_mut(addr as *mut T, rows * width) };
        for r in 0..rows {
            let row = &mut logits[r * width..(r + 1) * width];
            let bits = &mask[r * words..(r + 1) * words];
            // Word at a time: all-allowed words (the common case) cost one compare.
            for (w, &word) in bits.iter().enumerate() {
                let base = w * 32;
                if base >= width {
                    break;
                }
                let word = word as u32;
                if word == u32::MAX {
                    continue;
                }
                let chunk = &mut row[base..(base + 32).min(width)];
                if word == 0 {
                    chunk.fill(neg_inf);
                    continue;
                }
                // Branchless select, so the compiler can vectorize mixed words.
                for (k, x) in chunk.iter_mut().enumerate() {
                    let keep = (word >> k) & 1 == 1;
                    *x = if keep { *x } else { neg_inf };
                }
            }
            if width > words * 32 {
                row[words * 32..].fill(neg_inf);
            }
        }
    });
    Ok(())
}

/// Builds a grammar by `Grammar.<constructor>(*args)`: what a pickled grammar loads by
/// (see `Grammar.__reduce__`).
#[pyfunction]
fn _rebuild_grammar<'py>(py: Python<'py>, constructor: &str, args: Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    match constructor {
        "regex" | "cfg" => py.get_type::<PyGrammar>().getattr(constructor)?.call1(args),
        other => Err(PyTypeError::new_err(format!("unknown grammar constructor {other:?}"))),
    }
}

/// Panics on purpose, to test that a Rust panic reaches Python as corral.InternalError.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    guard(py, || -> core::Result<()> { panic!("deliberate test panic") })
}

/// The table of prebuilt automata for `patterns` (see `corral_core::prebuilt`), for the
/// generator script `tools/prebuild_formats.py`.
#[pyfunction]
fn _prebuild_table<'py>(py: Python<'py>, patterns: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = guard_detached(py, || core::frontend::regex::prebuilt::build_table(&patterns, &core::Limits::default()))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The patterns whose automata ship prebuilt.
#[pyfunction]
fn _prebuilt_patterns() -> Vec<&'static str> {
    core::frontend::regex::prebuilt::patterns()
}

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLimits>()?;
    m.add_class::<PyVocabulary>()?;
    m.add_class::<PyGrammar>()?;
    m.add_class::<PyCompiledGrammar>()?;
    m.add_class::<PyMatcher>()?;
    intersection::register(m)?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(fill_bitmasks, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(apply_bitmask_inplace, m)?)?;
    m.add_function(wrap_pyfunction!(_rebuild_grammar, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_prebuild_table, m)?)?;
    m.add_function(wrap_pyfunction!(_prebuilt_patterns, m)?)?;
    Ok(())
}
