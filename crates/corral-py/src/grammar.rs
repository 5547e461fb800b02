//! The `Grammar` class (a validated constraint, not yet tied to a vocabulary) and how it
//! pickles: as the constructor call that built it.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use corral_core as core;

use crate::errors::{guard, guard_detached};
use crate::limits::PyLimits;

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
    JsonSchema {
        schema: String,
        documents: Vec<(String, String)>,
        options: SchemaArgs,
        limits: Option<core::Limits>,
    },
    /// A structural tag (its JSON text) with the options of its JSON Schemas.
    StructuralTag {
        spec: String,
        options: SchemaArgs,
        limits: Option<core::Limits>,
        classes: Option<Classes>,
    },
    /// A union or concatenation (`join`: "union" or "concat") of grammars, by their recipes.
    Join {
        join: String,
        parts: Vec<Recipe>,
        limits: Option<core::Limits>,
    },
}

/// The core's join from its Python name.
fn join_kind(join: &str) -> PyResult<core::grammar::Join> {
    match join {
        "union" => Ok(core::grammar::Join::Union),
        "concat" => Ok(core::grammar::Join::Concat),
        other => Err(PyTypeError::new_err(format!("unknown grammar join {other:?}"))),
    }
}

/// The options of `Grammar.json_schema`, as Python passes them: (strict, whitespace,
/// max_whitespace, property_order, spec_exact, integer_fraction, indent, draft).
type SchemaArgs = (bool, String, u32, String, bool, bool, Option<String>, u32);

/// The core's options from [`SchemaArgs`] (already checked by the Python package; a
/// value out of range here is a `TypeError`).
fn schema_options(args: &SchemaArgs) -> PyResult<core::json_schema::translate::SchemaOptions> {
    use core::json_schema::resources::Draft;
    use core::json_schema::translate::{SchemaOptions, Whitespace};
    let (strict, whitespace, max_whitespace, order, spec_exact, integer_fraction, indent, draft) = args;
    let whitespace = match whitespace.as_str() {
        "compact" => Whitespace::Compact,
        "flexible" => Whitespace::Flexible { max: *max_whitespace },
        other => return Err(PyTypeError::new_err(format!("unknown whitespace {other:?}"))),
    };
    let draft = match draft {
        4 => Draft::Draft4,
        6 => Draft::Draft6,
        7 => Draft::Draft7,
        2019 => Draft::Draft2019,
        2020 => Draft::Draft2020,
        other => return Err(PyTypeError::new_err(format!("unknown draft {other}"))),
    };
    Ok(SchemaOptions {
        strict: *strict,
        whitespace,
        any_order: order == "any",
        spec_exact: *spec_exact,
        integer_fraction: *integer_fraction,
        indent: indent.clone(),
        draft,
        json_region: false,
        xml: None,
        excludes: Vec::new(),
    })
}

/// A validated constraint, not yet tied to a vocabulary.
#[pyclass(module = "corral._core", name = "Grammar", frozen)]
pub(crate) struct PyGrammar {
    pub(crate) inner: core::Grammar,
    recipe: Recipe,
    /// What a JSON Schema translation dropped (`strict=False`) or noticed.
    schema_warnings: Vec<String>,
    /// A structural tag's fixed strings (see `corral_core::structural::StructuralTag::markers`).
    markers: Vec<String>,
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
        Ok(PyGrammar { inner, recipe, schema_warnings: Vec::new(), markers: Vec::new() })
    }

    /// Parses, validates and normalizes corral EBNF (`dialect="ebnf"`) or llama.cpp GBNF
    /// (`dialect="gbnf"`). `start` names the start rule; `max_terminal_source` overrides
    /// how heavy a regular part may be to become one terminal (see `LowerOptions`).
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
            core::json_schema::embed::grammar_text(&text, dialect, start.as_deref(), &limits, &options, classes.as_ref())
        })?;
        let inner = if distinct_keys { inner.with_distinct_keys(key_endings_infinite) } else { inner };
        Ok(PyGrammar { inner, recipe, schema_warnings: Vec::new(), markers: Vec::new() })
    }

    /// Translates a JSON Schema (its JSON `schema` text; `documents`: (URI, JSON text) of
    /// other documents its `$ref`s point into) into a grammar of the JSON values it
    /// allows. `options`: (strict, whitespace, max_whitespace, property_order, spec_exact,
    /// integer_fraction, indent, draft), as `corral.Grammar.json_schema` checks them.
    #[staticmethod]
    #[pyo3(signature = (schema, documents, options, limits=None))]
    fn json_schema(
        py: Python<'_>,
        schema: String,
        documents: Vec<(String, String)>,
        options: SchemaArgs,
        limits: Option<PyRef<'_, PyLimits>>,
    ) -> PyResult<Self> {
        let opts = schema_options(&options)?;
        let lim = limits.as_ref().map(|l| l.inner.clone()).unwrap_or_default();
        let (text, docs) = (schema.clone(), documents.clone());
        let built = guard_detached(py, move || core::json_schema::compile::schema_grammar(&text, &docs, &opts, &lim))?;
        let recipe = Recipe::JsonSchema { schema, documents, options, limits: limits.map(|l| l.inner.clone()) };
        Ok(PyGrammar { inner: built.grammar, recipe, schema_warnings: built.warnings, markers: Vec::new() })
    }

    /// XGrammar's structural tag (its JSON text `spec`) as one grammar; `options` are the
    /// options of its `json_schema` formats, as for `json_schema`; `classes` the meaning of
    /// `\d \w \s` in its `regex` and `grammar` formats, as for `regex`.
    #[staticmethod]
    #[pyo3(signature = (spec, options, limits=None, classes=None))]
    fn structural_tag(
        py: Python<'_>,
        spec: String,
        options: SchemaArgs,
        limits: Option<PyRef<'_, PyLimits>>,
        classes: Option<Classes>,
    ) -> PyResult<Self> {
        let perl = classes.clone().map(|(digit, word, space)| core::PerlClasses { digit, word, space });
        let tag_options = core::structural::TagOptions { json: schema_options(&options)?, classes: perl };
        let lim = limits.as_ref().map(|l| l.inner.clone()).unwrap_or_default();
        let text = spec.clone();
        let built = guard_detached(py, move || core::structural::structural_tag(&text, &tag_options, &lim))?;
        let recipe = Recipe::StructuralTag { spec, options, limits: limits.map(|l| l.inner.clone()), classes };
        Ok(PyGrammar { inner: built.grammar, recipe, schema_warnings: built.warnings, markers: built.markers })
    }

    /// The union (`join="union"`) or concatenation (`join="concat"`) of `parts`, as one
    /// grammar (see `corral_core::grammar::lower::compose`).
    #[staticmethod]
    #[pyo3(signature = (join, parts, limits=None))]
    fn join(py: Python<'_>, join: &str, parts: Vec<PyRef<'_, PyGrammar>>, limits: Option<PyRef<'_, PyLimits>>) -> PyResult<Self> {
        let kind = join_kind(join)?;
        let recipe = Recipe::Join {
            join: join.to_string(),
            parts: parts.iter().map(|p| p.recipe.clone()).collect(),
            limits: limits.as_ref().map(|l| l.inner.clone()),
        };
        let schema_warnings = parts.iter().flat_map(|p| p.schema_warnings.iter().cloned()).collect();
        let grammars: Vec<core::Grammar> = parts.iter().map(|p| p.inner.clone()).collect();
        let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
        let inner = guard_detached(py, move || core::Grammar::join(&grammars, kind, &limits))?;
        Ok(PyGrammar { inner, recipe, schema_warnings, markers: parts.iter().flat_map(|p| p.markers.iter().cloned()).collect() })
    }

    /// The documents (URIs) the schema's `$ref`s point into that are not among
    /// `documents`: what a resolver must supply (ask again after: new documents may
    /// point further).
    #[staticmethod]
    #[pyo3(signature = (schema, documents, options, limits=None))]
    fn json_schema_missing(
        py: Python<'_>,
        schema: String,
        documents: Vec<(String, String)>,
        options: SchemaArgs,
        limits: Option<PyRef<'_, PyLimits>>,
    ) -> PyResult<Vec<String>> {
        let opts = schema_options(&options)?;
        let lim = limits.map(|l| l.inner.clone()).unwrap_or_default();
        guard_detached(py, move || core::json_schema::compile::missing_documents(&schema, &documents, &opts, &lim))
    }

    /// The JSON `value` with its object keys in the order the schema's grammar writes
    /// them (for tests and tools that force a known valid value through the grammar).
    #[staticmethod]
    #[pyo3(signature = (schema, documents, options, value, limits=None))]
    fn json_schema_order(
        py: Python<'_>,
        schema: String,
        documents: Vec<(String, String)>,
        options: SchemaArgs,
        value: String,
        limits: Option<PyRef<'_, PyLimits>>,
    ) -> PyResult<String> {
        let opts = schema_options(&options)?;
        let lim = limits.map(|l| l.inner.clone()).unwrap_or_default();
        guard_detached(py, move || core::json_schema::compile::order_value(&schema, &documents, &opts, &lim, &value))
    }

    /// The same grammar without the condition that JSON objects keep their keys distinct
    /// (what the grammar alone allows): for tests that compare the two. It pickles as the
    /// grammar it came from.
    fn _without_distinct_keys(&self) -> Self {
        let inner = self.inner.clone().without_distinct_keys();
        PyGrammar {
            inner,
            recipe: self.recipe.clone(),
            schema_warnings: self.schema_warnings.clone(),
            markers: self.markers.clone(),
        }
    }

    /// With distinct keys (a JSON Schema grammar): is every half-written key known to have
    /// infinitely many endings, so that only closed keys are checked? For tests.
    #[getter]
    fn _key_endings_infinite(&self) -> bool {
        self.inner.key_endings_infinite()
    }

    /// What a JSON Schema translation dropped (`strict=False`) or noticed.
    #[getter]
    fn schema_warnings(&self) -> Vec<String> {
        self.schema_warnings.clone()
    }

    /// A structural tag's fixed strings: constant strings, triggers, tags' begins and
    /// ends, separators, the markers of XML styles (empty for other grammars).
    #[getter]
    fn marker_texts(&self) -> Vec<String> {
        self.markers.clone()
    }

    /// A random sentence of a context-free grammar (about `budget` bytes): for tests and
    /// examples. None for a regex, and when the draw runs past `max_bytes`.
    #[pyo3(signature = (seed, budget=64, max_bytes=1 << 20))]
    fn sample<'py>(&self, py: Python<'py>, seed: u64, budget: usize, max_bytes: usize) -> Option<Bound<'py, PyBytes>> {
        let sentence = py.detach(|| self.inner.sample(seed, budget, max_bytes));
        sentence.map(|b| PyBytes::new(py, &b))
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
        Ok((py.import("corral._core")?.getattr("_rebuild_grammar")?, recipe_args(py, &self.recipe)?))
    }

    fn __repr__(&self) -> String {
        format!("<corral._core.Grammar {}>", self.inner.describe())
    }
}

/// A pickled join: its kind, its parts as `(constructor, args)`, its limits.
type JoinArgs<'py> = (String, Vec<(String, Bound<'py, PyTuple>)>, Bound<'py, PyAny>);

/// `(constructor, args)` that build the grammar of `recipe` again (see `_rebuild_grammar`).
fn recipe_args<'py>(py: Python<'py>, recipe: &Recipe) -> PyResult<Bound<'py, PyTuple>> {
    let limits = |l: &Option<core::Limits>| l.clone().map(|inner| PyLimits { inner });
    let args = match recipe {
        Recipe::Regex { pattern, limits: l, classes } => ("regex", (pattern, limits(l), classes.clone())).into_pyobject(py)?,
        Recipe::Cfg { text, dialect, start, limits: l, classes, max_terminal_source, distinct_keys, key_endings_infinite } => (
            "cfg",
            (text, dialect, start, limits(l), classes.clone(), *max_terminal_source, *distinct_keys, *key_endings_infinite),
        )
            .into_pyobject(py)?,
        Recipe::JsonSchema { schema, documents, options, limits: l } => {
            ("json_schema", (schema, documents.clone(), options.clone(), limits(l))).into_pyobject(py)?
        }
        Recipe::StructuralTag { spec, options, limits: l, classes } => {
            ("structural_tag", (spec, options.clone(), limits(l), classes.clone())).into_pyobject(py)?
        }
        Recipe::Join { join, parts, limits: l } => {
            let parts = parts.iter().map(|p| recipe_args(py, p)).collect::<PyResult<Vec<_>>>()?;
            ("join", (join, parts, limits(l))).into_pyobject(py)?
        }
    };
    Ok(args)
}

/// Builds a grammar by `Grammar.<constructor>(*args)`: what a pickled grammar loads by
/// (see `Grammar.__reduce__`).
#[pyfunction]
pub(crate) fn _rebuild_grammar<'py>(
    py: Python<'py>,
    constructor: &str,
    args: Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    match constructor {
        "regex" | "cfg" | "json_schema" | "structural_tag" => py.get_type::<PyGrammar>().getattr(constructor)?.call1(args),
        // The parts are (constructor, args) pairs themselves.
        "join" => {
            let (join, parts, limits): JoinArgs<'py> = args.extract()?;
            let parts = parts.into_iter().map(|(c, a)| _rebuild_grammar(py, &c, a)).collect::<PyResult<Vec<_>>>()?;
            py.get_type::<PyGrammar>().getattr("join")?.call1((join, parts, limits))
        }
        other => Err(PyTypeError::new_err(format!("unknown grammar constructor {other:?}"))),
    }
}

/// Does the terminal expression `expr` (corral EBNF without rule references) match no
/// string at all? Exact (its DFA is built), within `limits`.
#[pyfunction]
#[pyo3(signature = (expr, limits=None, classes=None))]
pub(crate) fn expression_is_empty(
    py: Python<'_>,
    expr: &str,
    limits: Option<PyRef<'_, PyLimits>>,
    classes: Option<Classes>,
) -> PyResult<bool> {
    let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
    let classes = classes.map(|(digit, word, space)| core::PerlClasses { digit, word, space });
    guard_detached(py, move || core::grammar::expression_is_empty(expr, &limits, classes.as_ref()))
}
