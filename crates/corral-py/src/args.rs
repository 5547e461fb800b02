//! Argument conversion: Python integers (anything with `__index__`) as ids, rows and
//! counts, with range errors in the corral class the caller names.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};

use crate::errors::{raise, ErrorKind};

/// A Python int as an index below `bound`: anything else (negative, too large, not an
/// int) is the corral error class `class`, naming `what`.
pub(crate) fn index(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str, bound: usize, class: ErrorKind) -> PyResult<usize> {
    let v = count(py, obj, what, class)?;
    if v >= bound {
        return Err(raise(py, class, format!("{what} {v} is out of range (0 to {})", bound.saturating_sub(1)), &[]));
    }
    Ok(v)
}

/// A Python integer (anything with `__index__`: an int, a numpy or torch integer) that
/// must be ≥ 0 and fit a `usize`, else the corral error `class` naming `what`; a bool or
/// a non-integer is a `TypeError`.
pub(crate) fn count(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str, class: ErrorKind) -> PyResult<usize> {
    let type_error = || {
        let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!("{what} must be an int, not {type_name}"))
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(type_error());
    }
    match obj.extract::<i128>() {
        Ok(v) if v >= 0 && v <= usize::MAX as i128 => Ok(v as usize),
        Ok(v) if v < 0 => Err(raise(py, class, format!("{what} {v} is out of range: it must be ≥ 0"), &[])),
        Ok(_) => Err(raise(py, class, format!("{what} {obj} is out of range: it is too large"), &[])),
        Err(e) if e.is_instance_of::<PyOverflowError>(py) => Err(raise(py, class, format!("{what} {obj} is out of range"), &[])),
        Err(_) => Err(type_error()),
    }
}

/// Each item of a Python iterable as an index below `bound` (see [`index`]).
pub(crate) fn indices(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
    bound: usize,
    class: ErrorKind,
) -> PyResult<Vec<usize>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!("{what}s must be a list of ints")));
    }
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        out.push(index(py, &item?, what, bound, class)?);
    }
    Ok(out)
}
