//! The `Vocabulary` class: token bytes, EOS and special ids, and the logits width.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use corral_core as core;

use crate::args::{index, indices};
use crate::errors::{guard_detached, to_py_err, ErrorKind};
use crate::limits::PyLimits;

/// Token id → exact bytes, EOS and special ids, the logits width, and the token trie.
#[pyclass(module = "corral._core", name = "Vocabulary", frozen)]
pub(crate) struct PyVocabulary {
    pub(crate) inner: Arc<core::Vocabulary>,
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
                Some(index(py, s, "vocabulary size", cap.saturating_add(1), ErrorKind::Vocabulary).map_err(|e| {
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
        let eos = to_u32(indices(py, eos_token_ids, "EOS token id", bound, ErrorKind::Vocabulary)?);
        let special = to_u32(indices(py, special_token_ids, "special token id", bound, ErrorKind::Vocabulary)?);
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
        let id = index(py, id, "token id", self.inner.size(), ErrorKind::Vocabulary)?;
        Ok(PyBytes::new(py, self.inner.token_bytes(id as u32)))
    }

    /// The normal tokens whose bytes start with `prefix` (a walk down the token trie).
    fn tokens_with_prefix(&self, prefix: &[u8]) -> Vec<u32> {
        self.inner.tokens_with_prefix(prefix).to_vec()
    }

    /// The kind of token `id`: "normal", "special", "eos" or "missing".
    fn token_kind(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let id = index(py, id, "token id", self.inner.size(), ErrorKind::Vocabulary)?;
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
        for id in indices(py, ids, "token id", self.inner.size(), ErrorKind::Vocabulary)? {
            out.extend_from_slice(self.inner.token_bytes(id as u32));
        }
        Ok(PyBytes::new(py, &out))
    }
}
