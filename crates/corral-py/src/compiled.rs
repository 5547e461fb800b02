//! The `CompiledGrammar` class and `compile`: a grammar bound to a vocabulary.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use corral_core as core;

use crate::errors::guard_detached;
use crate::grammar::PyGrammar;
use crate::intersection::matcher_object;
use crate::limits::PyLimits;
use crate::matcher::PyMatcher;
use crate::vocabulary::PyVocabulary;

/// A grammar compiled for one vocabulary: immutable and shareable across threads.
#[pyclass(module = "corral._core", name = "CompiledGrammar", frozen, subclass)]
pub(crate) struct PyCompiledGrammar {
    pub(crate) inner: Arc<core::CompiledGrammar>,
    /// `(function, args)` that builds this compiled grammar again (from `corral.compile`),
    /// returned by `__reduce__`; None for one made by `_core.compile` directly.
    pub(crate) rebuild: Option<Py<PyAny>>,
}

#[pymethods]
impl PyCompiledGrammar {
    /// A new matcher at the start of the grammar.
    fn matcher<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMatcher>> {
        matcher_object(py, core::Matcher::new(self.inner.clone()))
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

    /// Computes now the masks a context-free grammar's first tokens into each of its
    /// terminals need (a string's first character, a key's first letters), which a
    /// matcher would otherwise compute on its first visit there (0.1-0.4 ms each for a
    /// format string on a large vocabulary). For a serving engine that compiles off its
    /// decoding path; nothing to do for a regular grammar (see ``eager``). The GIL is
    /// released; interruptible.
    fn warm_up(&self, py: Python<'_>) -> PyResult<()> {
        guard_detached(py, || self.inner.warm_up())
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
pub(crate) fn compile(
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
