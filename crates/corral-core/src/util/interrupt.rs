//! Cooperative stopping of long native work: a wall-clock budget and an outside interrupt.
//!
//! Building a grammar, computing a mask or a completion can take long on hostile input.
//! Such work runs inside a [`Scope`] (entered with [`run`]); its loops call [`check`], which
//! is a counter increment most of the time and, every few hundred calls, looks at the
//! clock and at the scope's stop flag:
//! * past the scope's deadline it fails with [`Error::LimitExceeded`] naming the limit the
//!   deadline came from (`Limits::max_compile_ms` for build steps);
//! * once the stop flag is set ([`StopFlag::stop`], from any thread) it fails with
//!   [`Error::Interrupted`];
//! * every [`POLL_INTERVAL`] it calls the scope's poll function, if any, and stops when
//!   that returns true. The Python binding polls for Ctrl-C this way.
//!
//! The scope is thread-local, so functions deep in the engine need no extra argument;
//! outside any scope [`check`] never fails. Work that fails this way leaves no partial
//! state behind: callers commit results only after the whole step succeeded.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How often, at most, a scope's poll function is called.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// [`check`] calls between two looks at the clock (a power of two).
const TICKS_PER_LOOK: u32 = 256;

/// A flag that stops the work of every scope that shares it, from any thread.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A new, unset flag.
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Asks the work sharing this flag to stop at its next check.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Has [`StopFlag::stop`] been called?
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// What bounds one piece of work.
#[derive(Default)]
pub struct Scope<'p> {
    /// Stop with `LimitExceeded` past this instant: (deadline, limit name, its value).
    pub deadline: Option<(Instant, &'static str, u64)>,
    /// Stop with `Interrupted` once this is set.
    pub stop: StopFlag,
    /// Called every [`POLL_INTERVAL`]; returning true stops the work (and sets `stop`).
    pub poll: Option<&'p (dyn Fn() -> bool + Sync)>,
}

impl<'p> Scope<'p> {
    /// A scope that stops `budget_ms` milliseconds from now, naming `limit`.
    pub fn with_budget(limit: &'static str, budget_ms: u64) -> Scope<'p> {
        let deadline = Instant::now().checked_add(Duration::from_millis(budget_ms));
        Scope { deadline: deadline.map(|d| (d, limit, budget_ms)), ..Scope::default() }
    }
}

/// The running scope of this thread, with the poll function's lifetime erased (it is only
/// reachable while [`run`] borrows it).
struct Active {
    deadline: Option<(Instant, &'static str, u64)>,
    stop: StopFlag,
    poll: Option<*const (dyn Fn() -> bool + Sync + 'static)>,
    last_poll: Instant,
    ticks: u32,
}

thread_local! {
    static ACTIVE: RefCell<Vec<Active>> = const { RefCell::new(Vec::new()) };
}

/// Pops the scope when `run` returns or unwinds.
struct PopOnDrop;

impl Drop for PopOnDrop {
    fn drop(&mut self) {
        ACTIVE.with(|a| {
            a.borrow_mut().pop();
        });
    }
}

/// Runs `work` inside `scope`. A scope inside another keeps the earlier deadline if that is
/// sooner, and either stop flag stops it.
pub fn run<T>(scope: &Scope<'_>, work: impl FnOnce() -> T) -> T {
    // SAFETY: the pointer is only dereferenced by `check` on this thread while `Active` is
    // on the stack, and `PopOnDrop` removes it before `run` returns, so the borrow of
    // `scope.poll` outlives every use.
    let poll = scope.poll.map(|p| unsafe {
        std::mem::transmute::<*const (dyn Fn() -> bool + Sync + '_), *const (dyn Fn() -> bool + Sync + 'static)>(p as *const _)
    });
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let outer = a.last();
        let deadline = match (scope.deadline, outer.and_then(|o| o.deadline)) {
            (Some(d), Some(o)) if o.0 < d.0 => Some(o),
            (None, o) => o,
            (d, _) => d,
        };
        let poll = poll.or_else(|| outer.and_then(|o| o.poll));
        a.push(Active { deadline, stop: scope.stop.clone(), poll, last_poll: Instant::now(), ticks: 0 });
    });
    let _pop = PopOnDrop;
    work()
}

/// Fails if the running work should stop (see the module documentation). Cheap: call it
/// in every loop whose length depends on the input.
#[inline]
pub fn check() -> Result<()> {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let n = a.len();
        if n == 0 {
            return Ok(());
        }
        let top = &mut a[n - 1];
        top.ticks = top.ticks.wrapping_add(1);
        if top.ticks & (TICKS_PER_LOOK - 1) != 0 {
            return Ok(());
        }
        look(&mut a)
    })
}

/// Looks at every stop condition now (the slow half of [`check`]).
#[cold]
fn look(scopes: &mut [Active]) -> Result<()> {
    if scopes.iter().any(|s| s.stop.is_stopped()) {
        return Err(Error::Interrupted);
    }
    let now = Instant::now();
    let top = scopes.last_mut().expect("look is called inside a scope");
    if let Some((deadline, limit, value)) = top.deadline {
        if now >= deadline {
            return Err(Error::LimitExceeded {
                limit,
                value: value as usize,
                context: "this step's work (it ran out of time)".to_string(),
            });
        }
    }
    if let Some(poll) = top.poll {
        if now.duration_since(top.last_poll) >= POLL_INTERVAL {
            top.last_poll = now;
            // SAFETY: see `run`: the poll function outlives the scope that holds it.
            if unsafe { (*poll)() } {
                top.stop.stop();
                return Err(Error::Interrupted);
            }
        }
    }
    Ok(())
}

/// Runs `work`, which cannot check for itself, on a helper thread, while this thread waits
/// and checks every few milliseconds: if this thread's scope says stop, the call returns
/// that error at once and the helper's result is dropped when it finishes (its work must
/// be bounded by other means). A panic in `work` is an [`Error::Internal`].
pub fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("corral-helper".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| Error::Internal(format!("cannot start a helper thread: {e}")))?;
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(value) => return Ok(value),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => check_now()?,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal("a helper thread panicked".into()))
            }
        }
    }
}

/// Like [`check`] but looks at once (for loops whose single steps are long).
pub fn check_now() -> Result<()> {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        if a.is_empty() {
            return Ok(());
        }
        look(&mut a)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Works until stopped.
    fn spin() -> Result<()> {
        loop {
            check()?;
            std::hint::black_box(());
        }
    }

    #[test]
    fn outside_a_scope_nothing_stops() {
        for _ in 0..10_000 {
            check().unwrap();
        }
    }

    #[test]
    fn a_deadline_names_its_limit() {
        let err = run(&Scope::with_budget("max_compile_ms", 30), spin).unwrap_err();
        assert!(matches!(err, Error::LimitExceeded { limit: "max_compile_ms", value: 30, .. }), "{err:?}");
    }

    #[test]
    fn a_stop_flag_stops_from_another_thread() {
        let scope = Scope::default();
        let flag = scope.stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            flag.stop();
        });
        assert_eq!(run(&scope, spin).unwrap_err(), Error::Interrupted);
        t.join().unwrap();
    }

    #[test]
    fn a_poll_function_stops_and_scopes_nest() {
        let calls = std::sync::atomic::AtomicU32::new(0);
        let poll = || calls.fetch_add(1, Ordering::Relaxed) + 1 >= 3;
        let scope = Scope { poll: Some(&poll), ..Scope::default() };
        // The inner scope has no poll of its own: it inherits the outer one.
        let err = run(&scope, || run(&Scope::default(), spin)).unwrap_err();
        assert_eq!(err, Error::Interrupted);
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        // Both scopes are gone: nothing stops any more.
        check_now().unwrap();
    }

    #[test]
    fn work_off_thread_returns_its_value_or_stops_with_the_scope() {
        assert_eq!(off_thread(|| 6 * 7).unwrap(), 42);
        let err =
            run(&Scope::with_budget("max_compile_ms", 20), || off_thread(|| std::thread::sleep(Duration::from_millis(2_000))))
                .unwrap_err();
        assert!(matches!(err, Error::LimitExceeded { limit: "max_compile_ms", .. }), "{err:?}");
        assert!(matches!(off_thread(|| panic!("boom")), Err(Error::Internal(_))));
    }

    #[test]
    fn an_inner_scope_keeps_the_sooner_deadline() {
        let outer = Scope::with_budget("max_compile_ms", 20);
        let err = run(&outer, || run(&Scope::with_budget("other", 60_000), spin)).unwrap_err();
        assert!(matches!(err, Error::LimitExceeded { limit: "max_compile_ms", .. }), "{err:?}");
    }
}
