//! Hooks for tests and tools, not part of the public API: a deliberate panic, and the
//! prebuilt-automata table that `tools/prebuild_formats.py` writes.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use corral_core as core;

use crate::errors::{guard, guard_detached};

/// Panics on purpose, to test that a Rust panic reaches Python as corral.InternalError.
#[pyfunction]
pub(crate) fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    guard(py, || -> core::Result<()> { panic!("deliberate test panic") })
}

/// The table of prebuilt automata for `patterns` (see `corral_core::prebuilt`), for the
/// generator script `tools/prebuild_formats.py`.
#[pyfunction]
pub(crate) fn _prebuild_table<'py>(py: Python<'py>, patterns: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = guard_detached(py, || core::frontend::regex::prebuilt::build_table(&patterns, &core::Limits::default()))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The patterns whose automata ship prebuilt.
#[pyfunction]
pub(crate) fn _prebuilt_patterns() -> Vec<&'static str> {
    core::frontend::regex::prebuilt::patterns()
}
