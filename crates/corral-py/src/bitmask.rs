//! Token bitmasks: checking a caller's int32 buffer, filling a batch of rows on the
//! worker pool, and applying a mask to logits.

use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use corral_core as core;

use crate::args::{count, indices};
use crate::errors::{dead_end, guard_detached, raise, to_py_err, ErrorKind};
use crate::matcher::{draft_ids, PyMatcher};

/// A writable, C-contiguous int32 buffer: its base pointer and shape as (rows, words).
pub(crate) struct MaskBuffer {
    buf: PyBuffer<i32>,
    pub(crate) rows: usize,
    words: usize,
}

impl MaskBuffer {
    pub(crate) fn get(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<MaskBuffer> {
        let buf = match PyBuffer::<i32>::get(obj) {
            Ok(b) => b,
            Err(first) => {
                // torch tensors have no buffer protocol; CPU ones share memory via .numpy().
                if obj.hasattr("numpy")? && obj.hasattr("device")? {
                    let device = obj.getattr("device")?.getattr("type")?.extract::<String>()?;
                    if device != "cpu" {
                        return Err(raise(
                            py,
                            ErrorKind::Matcher,
                            format!(
                                "bitmask is on device '{device}': fill a CPU bitmask (corral.allocate_bitmask): \
                                 corral.apply_bitmask moves it to the logits' device"
                            ),
                            &[],
                        ));
                    }
                    PyBuffer::<i32>::get(&obj.call_method0("numpy")?)?
                } else {
                    return Err(raise(
                        py,
                        ErrorKind::Matcher,
                        format!("bitmask must be an int32 array (numpy or torch), from corral.allocate_bitmask: {first}"),
                        &[],
                    ));
                }
            }
        };
        if buf.readonly() {
            return Err(raise(py, ErrorKind::Matcher, "bitmask is read-only".into(), &[]));
        }
        if !buf.is_c_contiguous() {
            return Err(raise(py, ErrorKind::Matcher, "bitmask must be C-contiguous".into(), &[]));
        }
        let (rows, words) = match buf.shape() {
            [w] => (1, *w),
            [r, w] => (*r, *w),
            s => {
                return Err(raise(py, ErrorKind::Matcher, format!("bitmask must have 1 or 2 dimensions, got shape {s:?}"), &[]));
            }
        };
        Ok(MaskBuffer { buf, rows, words })
    }

    /// `n` consecutive rows from `row` as a raw pointer (address), checked against the
    /// expected width and the buffer's row count.
    pub(crate) fn rows_at(&self, py: Python<'_>, row: usize, n: usize, expect_words: usize) -> PyResult<usize> {
        let addr = self.row(py, row, expect_words)?;
        if row + n > self.rows {
            return Err(raise(
                py,
                ErrorKind::Matcher,
                format!("rows {row} to {} are out of range for a bitmask of {} rows", row + n - 1, self.rows),
                &[],
            ));
        }
        Ok(addr)
    }

    /// The row as a raw pointer (address), checked against the expected width.
    pub(crate) fn row(&self, py: Python<'_>, row: usize, expect_words: usize) -> PyResult<usize> {
        if self.words != expect_words {
            return Err(raise(
                py,
                ErrorKind::Matcher,
                format!("bitmask rows have {} int32 words, the vocabulary needs {expect_words}", self.words),
                &[],
            ));
        }
        if row >= self.rows {
            return Err(raise(
                py,
                ErrorKind::Matcher,
                format!("row {row} is out of range for a bitmask of {} rows", self.rows),
                &[],
            ));
        }
        Ok(self.buf.buf_ptr() as usize + row * self.words * 4)
    }
}

/// Writes one matcher's mask into the row at `addr` (a pointer into a live, checked buffer).
pub(crate) fn fill_at(matcher: &core::Matcher, addr: usize, words: usize) -> core::Result<core::MaskInfo> {
    // SAFETY: `addr` points at `words` int32s inside a writable C-contiguous buffer that the
    // caller keeps alive (the PyBuffer is held) for the duration of this call.
    let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u32, words) };
    matcher.fill_mask(out)
}

/// Writes the masks of every position of `draft` into the `draft.len() + 1` rows at `addr`
/// (a pointer into a live, checked buffer).
pub(crate) fn fill_draft_at(
    matcher: &mut core::Matcher,
    draft: &[u32],
    addr: usize,
    words: usize,
) -> core::Result<core::DraftMasks> {
    // SAFETY: `addr` points at `(draft.len() + 1) * words` int32s inside a writable
    // C-contiguous buffer that the caller keeps alive (the PyBuffer is held), checked by
    // `MaskBuffer::rows_at`.
    let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u32, (draft.len() + 1) * words) };
    matcher.fill_draft_masks(draft, out)
}

/// Fills `bitmask[i]` for each matcher `i` (or rows given by `rows`), with the GIL released
/// and the uncached rows computed in parallel.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, rows=None))]
pub(crate) fn fill_bitmasks(
    py: Python<'_>,
    matchers: Vec<PyRef<'_, PyMatcher>>,
    bitmask: &Bound<'_, PyAny>,
    rows: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let buf = MaskBuffer::get(py, bitmask)?;
    let rows = match rows {
        Some(r) if !r.is_none() => indices(py, r, "row", buf.rows, ErrorKind::Matcher)?,
        _ => (0..matchers.len()).collect(),
    };
    if rows.len() != matchers.len() {
        return Err(raise(py, ErrorKind::Matcher, format!("{} matchers but {} rows", matchers.len(), rows.len()), &[]));
    }
    let mut seen_rows = std::collections::HashSet::new();
    for &row in &rows {
        if !seen_rows.insert(row) {
            return Err(raise(py, ErrorKind::Matcher, format!("row {row} is given twice"), &[]));
        }
    }
    distinct_matchers(py, &matchers)?;
    let guards: Vec<_> = matchers.iter().map(|m| m.lock(py)).collect();
    let mut jobs = Vec::with_capacity(guards.len());
    for (g, &row) in guards.iter().zip(&rows) {
        let words = g.grammar().vocab().mask_words();
        jobs.push((&**g, buf.row(py, row, words)?, words, g.num_tokens()));
    }
    let jobs = &jobs;
    let results: Vec<core::Result<core::MaskInfo>> = guard_detached(py, move || Ok(fill_parallel(jobs)))?;
    drop(buf);
    for (r, job) in results.into_iter().zip(jobs) {
        let info = r.map_err(|e| to_py_err(py, e))?;
        if info.allowed == 0 {
            return Err(dead_end(py, job.3));
        }
    }
    Ok(())
}

/// For each matcher `i`, writes the masks of every position of `drafts[i]` into
/// `len(drafts[i]) + 1` consecutive rows of `bitmask` from `rows[i]` (default: one block
/// after another from row 0), with the GIL released and the matchers in parallel; returns
/// how many tokens of each draft the constraint accepts. Each matcher is left as it was.
#[pyfunction]
#[pyo3(signature = (matchers, drafts, bitmask, rows=None))]
pub(crate) fn fill_draft_bitmasks(
    py: Python<'_>,
    matchers: Vec<PyRef<'_, PyMatcher>>,
    drafts: &Bound<'_, PyAny>,
    bitmask: &Bound<'_, PyAny>,
    rows: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    let buf = MaskBuffer::get(py, bitmask)?;
    let drafts: Vec<Bound<'_, PyAny>> = drafts.try_iter()?.collect::<PyResult<_>>()?;
    if drafts.len() != matchers.len() {
        return Err(raise(py, ErrorKind::Matcher, format!("{} matchers but {} drafts", matchers.len(), drafts.len()), &[]));
    }
    distinct_matchers(py, &matchers)?;
    let mut guards: Vec<_> = matchers.iter().map(|m| m.lock(py)).collect();
    let mut ids = Vec::with_capacity(drafts.len());
    for (g, d) in guards.iter().zip(&drafts) {
        ids.push(draft_ids(py, d, g)?);
    }
    let firsts = match rows {
        Some(r) if !r.is_none() => indices(py, r, "row", buf.rows, ErrorKind::Matcher)?,
        _ => ids.iter().scan(0, |next, d| Some(std::mem::replace(next, *next + d.len() + 1))).collect(),
    };
    if firsts.len() != matchers.len() {
        return Err(raise(py, ErrorKind::Matcher, format!("{} matchers but {} rows", matchers.len(), firsts.len()), &[]));
    }
    let mut taken = vec![false; buf.rows];
    let mut jobs = Vec::with_capacity(guards.len());
    for ((g, d), &first) in guards.iter_mut().zip(ids).zip(&firsts) {
        let words = g.grammar().vocab().mask_words();
        let addr = buf.rows_at(py, first, d.len() + 1, words)?;
        for (r, slot) in taken.iter_mut().enumerate().skip(first).take(d.len() + 1) {
            if std::mem::replace(slot, true) {
                return Err(raise(py, ErrorKind::Matcher, format!("row {r} is given to two drafts"), &[]));
            }
        }
        let tokens = g.num_tokens();
        jobs.push((&mut **g, d, addr, words, tokens));
    }
    let results = guard_detached(py, || Ok(parallel_map(&mut jobs, |(m, d, a, w, _)| fill_draft_at(m, d, *a, *w))))?;
    drop(buf);
    let mut accepted = Vec::with_capacity(results.len());
    for (r, job) in results.into_iter().zip(&jobs) {
        let drafted = r.map_err(|e| to_py_err(py, e))?;
        if let Some(i) = drafted.rows.iter().position(|info| info.allowed == 0) {
            return Err(dead_end(py, job.4 + i));
        }
        accepted.push(drafted.accepted);
    }
    Ok(accepted)
}

/// Refuses a batch that names one matcher twice (its rows would race).
fn distinct_matchers(py: Python<'_>, matchers: &[PyRef<'_, PyMatcher>]) -> PyResult<()> {
    let mut seen = std::collections::HashSet::new();
    for (i, m) in matchers.iter().enumerate() {
        if !seen.insert(&**m as *const PyMatcher as usize) {
            return Err(raise(py, ErrorKind::Matcher, format!("matcher {i} is the same object as an earlier one"), &[]));
        }
    }
    Ok(())
}

/// A mask job: the matcher, its row's address and width, and its token count.
type Job<'a> = (&'a core::Matcher, usize, usize, usize);

/// The worker threads of batch mask filling: one pool for the process, built on first use
/// with one thread per core, resized by [`set_num_threads`].
static POOL: std::sync::RwLock<Option<Arc<rayon::ThreadPool>>> = std::sync::RwLock::new(None);

fn build_pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("corral-mask-{i}"))
        .build()
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The pool (built now if it was not yet).
fn pool() -> Result<Arc<rayon::ThreadPool>, String> {
    if let Some(p) = POOL.read().ok().and_then(|g| g.clone()) {
        return Ok(p);
    }
    let mut slot = POOL.write().map_err(|e| e.to_string())?;
    if let Some(p) = slot.clone() {
        return Ok(p);
    }
    let p = build_pool(std::thread::available_parallelism().map_or(1, |n| n.get()))?;
    *slot = Some(p.clone());
    Ok(p)
}

/// Sets how many threads `fill_bitmasks` uses for a batch (the calling thread included;
/// default: one per core). 1 fills every row on the calling thread.
#[pyfunction]
pub(crate) fn set_num_threads(py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<()> {
    let n = count(py, n, "the number of threads", ErrorKind::Matcher)?;
    if n == 0 {
        return Err(raise(py, ErrorKind::Matcher, "the number of threads must be at least 1".into(), &[]));
    }
    let p = build_pool(n).map_err(|e| raise(py, ErrorKind::Internal, format!("cannot start {n} threads: {e}"), &[]))?;
    if let Ok(mut slot) = POOL.write() {
        *slot = Some(p);
    }
    Ok(())
}

/// How many threads `fill_bitmasks` uses for a batch.
#[pyfunction]
pub(crate) fn get_num_threads(py: Python<'_>) -> PyResult<usize> {
    pool().map(|p| p.current_num_threads()).map_err(|e| raise(py, ErrorKind::Internal, e, &[]))
}

/// Fills every job's row (see [`parallel_map`]).
fn fill_parallel(jobs: &[Job<'_>]) -> Vec<core::Result<core::MaskInfo>> {
    let mut refs: Vec<&Job<'_>> = jobs.iter().collect();
    parallel_map(&mut refs, |(m, a, w, _)| fill_at(m, *a, *w))
}

/// `f` of every job, in order: the calling thread takes the first share (and keeps
/// answering Ctrl-C), the pool's threads the rest. The caller's interrupt reaches them
/// through a shared stop flag; a panic in one is a panic here (so `InternalError`).
fn parallel_map<J: Send, T: Send>(jobs: &mut [J], f: impl Fn(&mut J) -> core::Result<T> + Sync) -> Vec<core::Result<T>> {
    let run = |part: &mut [J]| part.iter_mut().map(&f).collect::<Vec<_>>();
    let pool = match pool() {
        Ok(p) => p,
        Err(_) => return run(jobs),
    };
    let threads = pool.current_num_threads().min(jobs.len()).max(1);
    if threads == 1 {
        return run(jobs);
    }
    let chunk = jobs.len().div_ceil(threads);
    let mut parts = jobs.chunks_mut(chunk);
    let first = parts.next().unwrap_or(&mut []);
    let rest: Vec<&mut [J]> = parts.collect();
    let mut slots: Vec<Vec<core::Result<T>>> = (0..rest.len()).map(|_| Vec::new()).collect();
    let stop = core::interrupt::StopFlag::new();
    let mut out = Vec::new();
    pool.in_place_scope(|scope| {
        for (slot, part) in slots.iter_mut().zip(rest) {
            let helper = core::interrupt::Scope { stop: stop.clone(), ..Default::default() };
            let run = &run;
            scope.spawn(move |_| *slot = core::interrupt::run(&helper, || run(part)));
        }
        out = run(first);
        if out.iter().any(|r| matches!(r, Err(core::Error::Interrupted))) {
            stop.stop();
        }
    });
    out.extend(slots.into_iter().flatten());
    out
}

/// Sets `logits[i, t] = -inf` wherever bit t of `bitmask[i]` is clear (float32 or float64,
/// C-contiguous, 1 or 2 dimensions). Ids past the mask's width are masked too.
#[pyfunction]
pub(crate) fn apply_bitmask_inplace(py: Python<'_>, logits: &Bound<'_, PyAny>, bitmask: &Bound<'_, PyAny>) -> PyResult<()> {
    let mask = MaskBuffer::get(py, bitmask)?;
    let m: Vec<i32> = mask.buf.to_vec(py)?;
    if let Ok(buf) = PyBuffer::<f32>::get(logits) {
        apply_typed(py, &buf, &m, mask.rows, mask.words, f32::NEG_INFINITY)
    } else if let Ok(buf) = PyBuffer::<f64>::get(logits) {
        apply_typed(py, &buf, &m, mask.rows, mask.words, f64::NEG_INFINITY)
    } else {
        Err(PyTypeError::new_err("logits must be a float32 or float64 buffer"))
    }
}

fn apply_typed<T: pyo3::buffer::Element + Copy + Send + Sync>(
    py: Python<'_>,
    buf: &PyBuffer<T>,
    mask: &[i32],
    mask_rows: usize,
    words: usize,
    neg_inf: T,
) -> PyResult<()> {
    if buf.readonly() || !buf.is_c_contiguous() {
        return Err(raise(py, ErrorKind::Matcher, "logits must be writable and C-contiguous".into(), &[]));
    }
    let (rows, width) = match buf.shape() {
        [w] => (1, *w),
        [r, w] => (*r, *w),
        s => return Err(raise(py, ErrorKind::Matcher, format!("logits must have 1 or 2 dimensions, got {s:?}"), &[])),
    };
    if rows != mask_rows {
        return Err(raise(py, ErrorKind::Matcher, format!("logits have {rows} rows but the bitmask has {mask_rows}"), &[]));
    }
    let addr = buf.buf_ptr() as usize;
    py.detach(|| {
        // SAFETY: the buffer is held, writable, C-contiguous, rows * width elements of T.
        let logits = unsafe { std::slice::from_raw_parts_mut(addr as *mut T, rows * width) };
        for r in 0..rows {
            let row = &mut logits[r * width..(r + 1) * width];
            let bits = &mask[r * words..(r + 1) * words];
            // Word at a time: all-allowed words (the common case) cost one compare; a run
            // of refused words is one fill (a mask that allows a few tokens is mostly such
            // runs, and one long fill is twice as fast as one per word).
            let usable = words.min(width.div_ceil(32));
            let mut w = 0;
            while w < usable {
                let word = bits[w] as u32;
                if word == u32::MAX {
                    w += 1;
                    continue;
                }
                if word == 0 {
                    let start = w;
                    while w < usable && bits[w] == 0 {
                        w += 1;
                    }
                    row[start * 32..(w * 32).min(width)].fill(neg_inf);
                    continue;
                }
                let base = w * 32;
                let chunk = &mut row[base..(base + 32).min(width)];
                w += 1;
                // A few refused ids in a word (free text less its quotes): those alone.
                let mut refused = !word;
                if refused.count_ones() <= 4 {
                    while refused != 0 {
                        if let Some(x) = chunk.get_mut(refused.trailing_zeros() as usize) {
                            *x = neg_inf;
                        }
                        refused &= refused - 1;
                    }
                    continue;
                }
                // Branchless select, so the compiler can vectorize mixed words.
                for (k, x) in chunk.iter_mut().enumerate() {
                    let keep = (word >> k) & 1 == 1;
                    *x = if keep { *x } else { neg_inf };
                }
            }
            if width > words * 32 {
                row[words * 32..].fill(neg_inf);
            }
        }
    });
    Ok(())
}
