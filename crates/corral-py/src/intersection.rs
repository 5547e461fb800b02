//! `CompiledIntersection` and `IntersectionMatcher`: the compiled grammar of `g1 & g2` and
//! its matcher, as subclasses of `CompiledGrammar` and `Matcher`. The work is corral-core's
//! (one native matcher per part, masks ANDed word by word), so every `Matcher` method and
//! the batch `fill_bitmasks` serve them unchanged; these classes add the parts, the
//! reprs, and pickling by parts.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::PyClassInitializer;

use corral_core as core;

use crate::compiled::PyCompiledGrammar;
use crate::errors::guard;
use crate::limits::PyLimits;
use crate::matcher::PyMatcher;

/// Several compiled grammars that must all hold (from `g1 & g2`): a token is allowed only
/// where every part allows it.
#[pyclass(module = "corral._core", name = "CompiledIntersection", extends = PyCompiledGrammar, frozen)]
pub(crate) struct PyCompiledIntersection {
    /// The parts as given (intersections among them replaced by their parts).
    parts: Vec<Py<PyCompiledGrammar>>,
}

#[pymethods]
impl PyCompiledIntersection {
    /// The intersection of `parts` (compiled for the same vocabulary). `limits` bound what
    /// its matchers do on top of their parts (`max_forced_tokens`, `max_completion_bytes`);
    /// each part keeps the limits it was compiled under.
    #[new]
    #[pyo3(signature = (parts, limits=None))]
    fn new(
        py: Python<'_>,
        parts: Vec<Bound<'_, PyCompiledGrammar>>,
        limits: Option<PyRef<'_, PyLimits>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut flat: Vec<Py<PyCompiledGrammar>> = Vec::with_capacity(parts.len());
        for part in parts {
            match part.cast::<PyCompiledIntersection>() {
                Ok(nested) => flat.extend(nested.get().parts.iter().map(|p| p.clone_ref(py))),
                Err(_) => flat.push(part.unbind()),
            }
        }
        let inner: Vec<Arc<core::CompiledGrammar>> = flat.iter().map(|p| p.get().inner.clone()).collect();
        let limits = limits.map(|l| l.inner.clone()).unwrap_or_default();
        let compiled = guard(py, || core::CompiledGrammar::intersection(inner, &limits))?;
        let base = PyCompiledGrammar { inner: Arc::new(compiled), rebuild: None };
        Ok(PyClassInitializer::from(base).add_subclass(PyCompiledIntersection { parts: flat }))
    }

    /// The compiled grammars that must all hold.
    #[getter]
    fn parts(&self, py: Python<'_>) -> Vec<Py<PyCompiledGrammar>> {
        self.parts.iter().map(|p| p.clone_ref(py)).collect()
    }

    /// The limits its matchers' forced runs and completions are held to.
    #[getter]
    fn limits(slf: &Bound<'_, Self>) -> PyLimits {
        PyLimits { inner: slf.as_super().get().inner.limits().clone() }
    }

    /// Pickles as its parts (each pickles as the `corral.compile` call that made it) and
    /// its limits.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let args = (Self::parts(slf.get(), py), Self::limits(slf)).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }

    fn __repr__(&self) -> String {
        format!("<corral.CompiledIntersection of {} grammars>", self.parts.len())
    }
}

/// One sequence's position in every part of a `CompiledIntersection`: a `Matcher` whose
/// mask is the AND of its parts' masks. Where the parts' allowed sets do not meet,
/// `fill_bitmask` raises `DeadEndError`.
#[pyclass(module = "corral._core", name = "IntersectionMatcher", extends = PyMatcher, frozen)]
pub(crate) struct PyIntersectionMatcher {}

#[pymethods]
impl PyIntersectionMatcher {
    /// Copies of the parts' matchers at this position (changing them changes nothing here).
    #[getter]
    fn parts<'py>(slf: &Bound<'py, Self>) -> PyResult<Vec<Bound<'py, PyMatcher>>> {
        let py = slf.py();
        let copies: Vec<core::Matcher> = slf.as_super().get().lock(py).parts().map(<[_]>::to_vec).unwrap_or_default();
        copies.into_iter().map(|m| matcher_object(py, m)).collect()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let matcher = slf.as_super().get().lock(slf.py());
        let flag = |b: bool| if b { "True" } else { "False" };
        format!(
            "<corral.IntersectionMatcher of {} grammars tokens={} accepting={} finished={}>",
            matcher.parts().map_or(0, <[_]>::len),
            matcher.num_tokens(),
            flag(matcher.is_accepting()),
            flag(matcher.is_finished())
        )
    }
}

/// `m` as a Python object: an `IntersectionMatcher` for an intersection, else a `Matcher`.
pub(crate) fn matcher_object(py: Python<'_>, m: core::Matcher) -> PyResult<Bound<'_, PyMatcher>> {
    if m.parts().is_some() {
        let init = PyClassInitializer::from(PyMatcher::new(m)).add_subclass(PyIntersectionMatcher {});
        Ok(Bound::new(py, init)?.into_super())
    } else {
        Bound::new(py, PyMatcher::new(m))
    }
}

/// Adds the classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCompiledIntersection>()?;
    m.add_class::<PyIntersectionMatcher>()
}
