//! Error mapping: core errors and Rust panics become the exception classes of
//! `corral/errors.py`, which that module registers here once at import.
//!
//! The classes stay defined in Python (their docstrings, class attributes, multiple
//! bases, `__init__` signatures and pickling by module path are plain Python); the
//! binding keeps a reference to each one in a typed slot instead of looking it up by name
//! at every error.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyImportError, PyKeyboardInterrupt, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};
use pyo3::IntoPyObjectExt;

use corral_core as core;

/// The `corral.errors` classes the binding raises, one slot each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    RegexSyntax,
    UnsupportedFeature,
    InvalidGrammar,
    EmptyLanguage,
    LimitExceeded,
    Vocabulary,
    Matcher,
    DeadEnd,
    InvalidSchema,
    UnsupportedSchema,
    Internal,
}

const KINDS: usize = 11;

impl ErrorKind {
    const ALL: [ErrorKind; KINDS] = [
        ErrorKind::RegexSyntax,
        ErrorKind::UnsupportedFeature,
        ErrorKind::InvalidGrammar,
        ErrorKind::EmptyLanguage,
        ErrorKind::LimitExceeded,
        ErrorKind::Vocabulary,
        ErrorKind::Matcher,
        ErrorKind::DeadEnd,
        ErrorKind::InvalidSchema,
        ErrorKind::UnsupportedSchema,
        ErrorKind::Internal,
    ];

    /// The class's name in `corral.errors` (the key `_register_errors` expects).
    fn class_name(self) -> &'static str {
        match self {
            ErrorKind::RegexSyntax => "RegexSyntaxError",
            ErrorKind::UnsupportedFeature => "UnsupportedFeatureError",
            ErrorKind::InvalidGrammar => "InvalidGrammarError",
            ErrorKind::EmptyLanguage => "EmptyLanguageError",
            ErrorKind::LimitExceeded => "LimitExceededError",
            ErrorKind::Vocabulary => "VocabularyError",
            ErrorKind::Matcher => "MatcherError",
            ErrorKind::DeadEnd => "DeadEndError",
            ErrorKind::InvalidSchema => "InvalidSchemaError",
            ErrorKind::UnsupportedSchema => "UnsupportedSchemaError",
            ErrorKind::Internal => "InternalError",
        }
    }

    fn slot(self) -> &'static PyOnceLock<Py<PyType>> {
        &CLASSES[self as usize]
    }
}

/// The registered classes, indexed by `ErrorKind as usize`.
static CLASSES: [PyOnceLock<Py<PyType>>; KINDS] = [const { PyOnceLock::new() }; KINDS];

/// The base every registered class must derive from.
const BASE: &str = "CorralError";

/// `classes[name]` as a subclass of `base`, or a `TypeError` saying what is wrong.
fn registered_class<'py>(classes: &Bound<'py, PyDict>, name: &str, base: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyType>> {
    let cls =
        classes.get_item(name)?.ok_or_else(|| PyTypeError::new_err(format!("_register_errors: the class {name} is missing")))?;
    let cls = cls
        .cast_into::<PyType>()
        .map_err(|e| PyTypeError::new_err(format!("_register_errors: {name} must be a class, got {}", e.into_inner())))?;
    if !cls.is_subclass(base)? {
        return Err(PyTypeError::new_err(format!("_register_errors: {name} must derive from {BASE}")));
    }
    Ok(cls)
}

/// Stores the exception classes the binding raises: `corral/errors.py` calls it once, at
/// import, with its classes by name (`CorralError` and every class the binding raises;
/// others are ignored). Registering the same classes again does nothing; other classes
/// cannot replace them (`ImportError`).
#[pyfunction]
pub(crate) fn _register_errors(py: Python<'_>, classes: &Bound<'_, PyDict>) -> PyResult<()> {
    let base = classes
        .get_item(BASE)?
        .ok_or_else(|| PyTypeError::new_err(format!("_register_errors: the class {BASE} is missing")))?
        .cast_into::<PyType>()
        .map_err(|_| PyTypeError::new_err(format!("_register_errors: {BASE} must be a class")))?;
    if !base.is_subclass_of::<pyo3::exceptions::PyException>()? {
        return Err(PyTypeError::new_err(format!("_register_errors: {BASE} must derive from Exception")));
    }
    // Everything is checked before any slot is set, so a bad call changes nothing.
    let mut found = Vec::with_capacity(KINDS);
    for kind in ErrorKind::ALL {
        let cls = registered_class(classes, kind.class_name(), &base)?;
        if let Some(old) = kind.slot().get(py) {
            if !old.bind(py).is(&cls) {
                return Err(PyImportError::new_err(format!(
                    "corral._core: {} is already registered as another class (corral.errors was imported twice)",
                    kind.class_name()
                )));
            }
        }
        found.push(cls);
    }
    for (kind, cls) in ErrorKind::ALL.into_iter().zip(found) {
        // Set already (to this class, as checked above) is fine.
        let _ = kind.slot().set(py, cls.unbind());
    }
    Ok(())
}

/// An instance of the class of `kind` with `message` and extra attributes. Before the
/// classes are registered (only when `corral._core` is loaded without the `corral`
/// package) this is an `ImportError` that carries the message.
pub(crate) fn raise(py: Python<'_>, kind: ErrorKind, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let Some(cls) = kind.slot().get(py) else {
        return PyImportError::new_err(format!(
            "corral._core: the exception classes are not registered (import corral, whose corral.errors \
             registers them); the error was {}: {message}",
            kind.class_name()
        ));
    };
    let build = || -> PyResult<PyErr> {
        let exc = cls.bind(py).call1((message.clone(),))?;
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

/// The Python exception for a core error.
pub(crate) fn to_py_err(py: Python<'_>, err: core::Error) -> PyErr {
    let message = err.to_string();
    match err {
        core::Error::RegexSyntax { pattern, position, .. } => {
            raise(py, ErrorKind::RegexSyntax, message, &[("pattern", val(py, pattern)), ("position", val(py, position))])
        }
        core::Error::UnsupportedRegex { construct, pattern, position } => raise(
            py,
            ErrorKind::UnsupportedFeature,
            message,
            &[("construct", val(py, construct)), ("pattern", val(py, pattern)), ("position", val(py, position))],
        ),
        core::Error::LimitExceeded { limit, value, .. } => {
            raise(py, ErrorKind::LimitExceeded, message, &[("limit", val(py, limit)), ("value", val(py, value))])
        }
        core::Error::SchemaLimit { limit, value, pointer, keyword, .. } => raise(
            py,
            ErrorKind::LimitExceeded,
            message,
            &[("limit", val(py, limit)), ("value", val(py, value)), ("pointer", val(py, pointer)), ("keyword", val(py, keyword))],
        ),
        core::Error::EmptyLanguage { .. } => raise(py, ErrorKind::EmptyLanguage, message, &[]),
        core::Error::Grammar { line, col, .. } => {
            raise(py, ErrorKind::InvalidGrammar, message, &[("line", val(py, line)), ("column", val(py, col))])
        }
        core::Error::Vocabulary(_) => raise(py, ErrorKind::Vocabulary, message, &[]),
        core::Error::InvalidArgument(_) => raise(py, ErrorKind::Matcher, message, &[]),
        core::Error::NoCommonToken { .. } => raise(py, ErrorKind::DeadEnd, message, &[]),
        core::Error::Schema { kind, pointer, keyword, .. } => {
            let class = match kind {
                core::error::SchemaErrorKind::Invalid => ErrorKind::InvalidSchema,
                _ => ErrorKind::UnsupportedSchema,
            };
            raise(py, class, message, &[("pointer", val(py, pointer)), ("keyword", val(py, keyword))])
        }
        core::Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        // `Internal`, and any variant a newer core adds (`core::Error` is non-exhaustive).
        _ => internal_error(py, &message),
    }
}

/// `corral.InternalError` for a bug in corral.
pub(crate) fn internal_error(py: Python<'_>, what: &str) -> PyErr {
    raise(py, ErrorKind::Internal, format!("internal error in corral (please report this bug): {what}"), &[])
}

/// `corral.DeadEndError` for a matcher that `tokens` tokens left with no allowed token.
pub(crate) fn dead_end(py: Python<'_>, tokens: usize) -> PyErr {
    raise(
        py,
        ErrorKind::DeadEnd,
        format!(
            "no token of the vocabulary can continue the output after {tokens} tokens: the constraint \
             needs bytes that no token provides"
        ),
        &[],
    )
}

/// Runs `f`, turning a panic into `corral.InternalError` and a core error into its class.
pub(crate) fn guard<T>(py: Python<'_>, f: impl FnOnce() -> core::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py_err(py, e)),
        Err(panic) => Err(panicked(py, panic)),
    }
}

/// `corral.InternalError` for a caught panic, with its message.
fn panicked(py: Python<'_>, panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    internal_error(py, &what)
}

/// Like [`guard`], with the GIL released while `f` runs. Long work polls for signals:
/// Ctrl-C (or any Python signal handler that raises) stops it within a few tens of
/// milliseconds, and that exception is raised here.
pub(crate) fn guard_detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> core::Result<T> + Send) -> PyResult<T> {
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
        Err(panic) => Err(panicked(py, panic)),
    }
}
