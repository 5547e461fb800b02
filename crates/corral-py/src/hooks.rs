//! Hooks for tests and tools, not part of the public API: a deliberate panic, the
//! prebuilt-automata table that `tools/prebuild_formats.py` writes, and the JSON Schema
//! `format` patterns it is written from.

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

/// Every pattern a JSON Schema `format` is compiled from (see
/// `corral_core::json_schema::formats::format_sources`): what the prebuilt table must hold.
#[pyfunction]
pub(crate) fn _format_sources() -> Vec<String> {
    core::json_schema::formats::format_sources()
}

/// Each JSON Schema `format` with a language, by name: its pattern over the decoded value
/// (Python `re` syntax, `re.fullmatch` meaning) and what it does not enforce (None where
/// it is exact). For the tests of the patterns.
#[pyfunction]
pub(crate) fn _format_patterns() -> Vec<(&'static str, Option<&'static str>, Option<&'static str>)> {
    use core::json_schema::formats;
    formats::FORMAT_NAMES.iter().map(|&name| (name, formats::value_pattern(name), formats::gap(name))).collect()
}
