//! The `Matcher` class: one sequence's position in a compiled grammar, locked per call so
//! threads may share it.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use corral_core as core;

use crate::args::{count, index, indices};
use crate::bitmask::{fill_at, fill_draft_at, MaskBuffer};
use crate::errors::{dead_end, guard, guard_detached, ErrorKind};
use crate::intersection::matcher_object;

/// One sequence's position in a compiled grammar.
///
/// Safe to share between threads: calls on one matcher take turns (a call waits, with the
/// GIL released, while another thread's call on the same matcher runs).
#[pyclass(module = "corral._core", name = "Matcher", frozen, subclass)]
pub(crate) struct PyMatcher {
    inner: std::sync::Mutex<core::Matcher>,
}

impl PyMatcher {
    /// The matcher, locked for this call (waiting without the GIL if another thread has it).
    pub(crate) fn lock<'a>(&'a self, py: Python<'_>) -> std::sync::MutexGuard<'a, core::Matcher> {
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

    pub(crate) fn new(inner: core::Matcher) -> PyMatcher {
        PyMatcher { inner: std::sync::Mutex::new(inner) }
    }
}

/// A draft's token ids, each checked against the vocabulary's size.
pub(crate) fn draft_ids(py: Python<'_>, draft: &Bound<'_, PyAny>, matcher: &core::Matcher) -> PyResult<Vec<u32>> {
    let size = matcher.grammar().vocab().size();
    Ok(indices(py, draft, "draft token id", size, ErrorKind::Matcher)?.into_iter().map(|t| t as u32).collect())
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
            Some(r) => index(py, r, "row", buf.rows, ErrorKind::Matcher)?,
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
        let token = index(py, token, "token id", matcher.grammar().vocab().size(), ErrorKind::Matcher)?;
        let m = &mut *matcher;
        guard_detached(py, move || m.advance(token as u32))
    }

    /// Would `token` be accepted now?
    fn is_allowed(&self, py: Python<'_>, token: &Bound<'_, PyAny>) -> PyResult<bool> {
        let matcher = self.lock(py);
        let token = index(py, token, "token id", matcher.grammar().vocab().size(), ErrorKind::Matcher)?;
        let m = &*matcher;
        guard_detached(py, move || Ok(m.is_allowed(token as u32)))
    }

    /// Undoes the last `n` accepted tokens.
    #[pyo3(signature = (n=None))]
    fn rollback(&self, py: Python<'_>, n: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mut matcher = self.lock(py);
        let n = match n {
            Some(n) => count(py, n, "rollback count", ErrorKind::Matcher)?,
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
    /// shortest): b"" if it may end now, None once finished. A token the grammar names
    /// (`<think>`) is written as its text.
    fn completion<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let matcher = self.lock(py);
        let m = &*matcher;
        let bytes = guard_detached(py, move || m.completion_text())?;
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }

    /// Number of tokens accepted so far (EOS included).
    #[getter]
    fn num_tokens(&self, py: Python<'_>) -> usize {
        self.lock(py).num_tokens()
    }

    /// How many tokens of `draft` the constraint accepts from here, in order (the longest
    /// accepted prefix). The matcher is left as it was.
    fn validate_tokens(&self, py: Python<'_>, draft: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut matcher = self.lock(py);
        let draft = draft_ids(py, draft, &matcher)?;
        let m = &mut *matcher;
        guard_detached(py, move || m.validate_tokens(&draft))
    }

    /// Writes the mask of every position of `draft` into `bitmask[row : row + len(draft) + 1]`
    /// (row `i` is the mask after `draft[:i]`) and returns how many draft tokens the
    /// constraint accepts; rows after the first refused token are left as they were. The
    /// matcher is left as it was. Raises DeadEndError if a written row allows no token.
    #[pyo3(signature = (draft, bitmask, row=None))]
    fn fill_draft_bitmask(
        &self,
        py: Python<'_>,
        draft: &Bound<'_, PyAny>,
        bitmask: &Bound<'_, PyAny>,
        row: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let buf = MaskBuffer::get(py, bitmask)?;
        let mut matcher = self.lock(py);
        let draft = draft_ids(py, draft, &matcher)?;
        let row = match row {
            Some(r) => count(py, r, "row", ErrorKind::Matcher)?,
            None => 0,
        };
        let words = matcher.grammar().vocab().mask_words();
        let addr = buf.rows_at(py, row, draft.len() + 1, words)?;
        let m = &mut *matcher;
        let drafted = guard_detached(py, move || fill_draft_at(m, &draft, addr, words))?;
        drop(buf);
        if let Some(i) = drafted.rows.iter().position(|info| info.allowed == 0) {
            return Err(dead_end(py, matcher.num_tokens() + i));
        }
        Ok(drafted.accepted)
    }

    /// An independent matcher at this one's position, sharing the compiled grammar (for a
    /// draft tree's branches, or `n > 1` samples of one prompt).
    fn fork<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMatcher>> {
        let fork = self.lock(py).fork();
        matcher_object(py, fork)
    }

    /// An independent copy of this matcher (same grammar, same history).
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMatcher>> {
        let copy = self.lock(py).clone();
        matcher_object(py, copy)
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
