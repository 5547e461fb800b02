//! `corral._core`: the thin PyO3 binding of corral-core.
//!
//! It only converts arguments, checks buffers, releases the GIL around mask work, and maps
//! errors to the exception classes defined in `corral/errors.py` (all under
//! `corral.CorralError`), which that module registers here at import. A Rust panic becomes
//! `corral.InternalError`, never an abort.
//!
//! Modules: [`errors`] (error mapping, panic and GIL-released guards), [`args`] (index and
//! count conversion), [`limits`], [`vocabulary`], [`grammar`], [`compiled`], [`matcher`],
//! [`intersection`] (the classes of `g1 & g2`), [`bitmask`] (mask buffers, batch filling, logits) and [`hooks`] (for tests and tools).
//! This file only registers them.

use pyo3::prelude::*;

mod args;
mod bitmask;
mod compiled;
mod errors;
mod grammar;
mod hooks;
mod intersection;
mod limits;
mod matcher;
mod vocabulary;

/// Building a grammar makes many small, short-lived allocations (DFA state sets, tables);
/// mimalloc serves them several times faster than the system allocator (a third of a small
/// JSON Schema's build time went to malloc and free).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<limits::PyLimits>()?;
    m.add_class::<vocabulary::PyVocabulary>()?;
    m.add_class::<grammar::PyGrammar>()?;
    m.add_class::<compiled::PyCompiledGrammar>()?;
    m.add_class::<matcher::PyMatcher>()?;
    intersection::register(m)?;
    m.add_function(wrap_pyfunction!(compiled::compile, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::fill_bitmasks, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::fill_draft_bitmasks, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::apply_bitmask_inplace, m)?)?;
    m.add_function(wrap_pyfunction!(grammar::_rebuild_grammar, m)?)?;
    m.add_function(wrap_pyfunction!(grammar::expression_is_empty, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_register_errors, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_prebuild_table, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_prebuilt_patterns, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_format_sources, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_format_patterns, m)?)?;
    Ok(())
}
