//! Replays every fuzz target on the stable toolchain: over its committed seed corpus
//! (`seeds/<target>/`), over the recorded findings (`regressions/<target>/`), and over
//! pseudo-random mutations of the seeds. Keeps the targets building and running on a
//! machine without nightly or cargo-fuzz.
//!
//! A finding not yet fixed in the engine is listed in `regressions/OPEN` (`target/file`,
//! its kind, then what goes wrong). A `fails` one must still fail, so that the list is
//! updated (and the input becomes a plain regression guard) as soon as the fix lands; a
//! `hangs` one is not run (it would hang the test), only required to exist.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use corral_fuzz::check::checked_ops;
use corral_fuzz::input::Rng;
use corral_fuzz::{run_target, TARGETS};

/// Pseudo-random inputs per target (mutated seeds, plus raw random bytes).
const RANDOM_INPUTS: usize = 300;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// Runs `target` on `data`; the panic message if it failed.
fn outcome(target: &str, data: &[u8]) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| run_target(target, data))).err().map(|e| {
        e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
    })
}

/// `target/file` → kind (`fails` or `hangs`), from regressions/OPEN.
fn open_findings() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("regressions/OPEN")).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            let kind = words.next().unwrap_or_default().to_string();
            assert!(kind == "fails" || kind == "hangs", "regressions/OPEN: {name} has kind {kind:?}, not fails/hangs");
            (name, kind)
        })
        .collect()
}

fn quiet<T>(f: impl FnOnce() -> T) -> T {
    // The panics caught here are expected outcomes; keep their default report out of the log.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = f();
    std::panic::set_hook(hook);
    out
}

#[test]
fn seeds_pass() {
    let mut failed = Vec::new();
    let mut count = 0;
    for target in TARGETS {
        let seeds = files(&root().join("seeds").join(target));
        assert!(!seeds.is_empty(), "no seeds for target {target}");
        let ops_before = checked_ops();
        for path in seeds {
            count += 1;
            let data = std::fs::read(&path).unwrap();
            if let Some(msg) = quiet(|| outcome(target, &data)) {
                failed.push(format!("{}: {msg}", path.display()));
            }
        }
        // The seeds must reach the matcher checks, not stop at parsing or a limit.
        let ops = checked_ops() - ops_before;
        eprintln!("{target}: {ops} matcher operations checked");
        assert!(ops >= 20, "the {target} seeds reach only {ops} matcher operations");
    }
    assert!(failed.is_empty(), "{} of {count} seeds fail:\n{}", failed.len(), failed.join("\n"));
}

#[test]
fn regressions_pass_or_are_listed_open() {
    let open = open_findings();
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for target in TARGETS {
        for path in files(&root().join("regressions").join(target)) {
            let name = format!("{target}/{}", path.file_name().unwrap().to_string_lossy());
            seen.push(name.clone());
            if open.get(&name).is_some_and(|k| k == "hangs") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let failure = quiet(|| outcome(target, &data));
            match (open.contains_key(&name), failure) {
                (false, Some(msg)) => problems.push(format!("{name} fails: {msg}")),
                (true, None) => problems.push(format!("{name} passes now: remove it from regressions/OPEN")),
                _ => {}
            }
        }
    }
    // The Python target's findings are replayed by tests/test_fuzz_regressions.py.
    for name in open.keys().filter(|n| !n.starts_with("json_schema/")) {
        if !seen.contains(name) {
            problems.push(format!("regressions/OPEN lists {name}, which does not exist"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A random edit of `data`: flip, insert, delete or duplicate a few bytes.
fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(4) {
            0 if at < out.len() => out[at] ^= 1 << rng.below(8),
            1 => out.insert(at, rng.next_u64() as u8),
            2 if at < out.len() => {
                out.remove(at);
            }
            _ => {
                let end = (at + rng.below(8)).min(out.len());
                let piece = out[at..end].to_vec();
                out.splice(at..at, piece);
            }
        }
    }
    out
}

#[test]
fn random_inputs_pass() {
    let mut failed = Vec::new();
    for target in TARGETS {
        let seeds: Vec<Vec<u8>> = files(&root().join("seeds").join(target)).iter().map(|p| std::fs::read(p).unwrap()).collect();
        let mut rng = Rng(0x5eed ^ target.len() as u64);
        for i in 0..RANDOM_INPUTS {
            let data = if i % 4 == 0 || seeds.is_empty() {
                (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect()
            } else {
                let seed = &seeds[rng.below(seeds.len())];
                mutate(&mut rng, seed)
            };
            if let Some(msg) = quiet(|| outcome(target, &data)) {
                failed.push(format!("{target} on {data:?}: {msg}"));
            }
        }
    }
    assert!(failed.is_empty(), "{} random inputs fail:\n{}", failed.len(), failed.join("\n"));
}
