#!/usr/bin/env python
"""JSON Schema benchmark: corral vs llguidance vs xgrammar vs outlines-core.

    python bench/bench_json.py                # full run   -> bench/results/json.md, json.json
    python bench/bench_json.py --quick        # smoke run  -> a fresh temporary folder (printed)
    python bench/bench_json.py --out DIR      # write somewhere else
    python bench/bench_json.py --sets realistic --engines corral,llguidance   # a part of it
    python bench/bench_json.py --sets large --quick --engines corral,llguidance

Every engine is configured for compact JSON (no whitespace anywhere, separators "," and
":"), which is what ``json.dumps(instance, separators=(",", ":"), ensure_ascii=False)``
writes, on one vocabulary (DeepSeek's tokenizer.json, 129,280 ids), single-threaded. The
vocabularies are loaded once; each (schema, engine) pair then runs in a child forked from
that process (same memory image), so that a compile that runs away in time or memory can
be stopped and counted instead of ending the run (``--no-fork`` runs everything in-process).
Three schema sets:

* ``suite``: the official JSON-Schema-Test-Suite, draft 2020-12, top-level files (not
  ``optional/``): every test case's schema, with its ``valid: true`` instances;
* ``realistic``: the hand-written schemas of bench/json_schemas/ (``<name>.schema.json``
  with 3-5 valid instances in ``<name>.instances.json``), each instance checked with the
  ``jsonschema`` package (formats included) before anything is timed;
* ``large``: real-world schemas of real tools, each with at least 100 ``properties`` entries or
  20 KB of text (bench/json_schemas/large/, sources in its SOURCES.md: CI configurations,
  Kubernetes objects, Python tool configurations, OpenAPI, CycloneDX, LLM API request bodies),
  drafts 4 to 2020-12, with 2-5 valid instances each and 2-3 invalid ones
  (``<name>.invalid.json``), all checked with ``jsonschema`` under the schema's own draft.

For each schema and engine:

1. compile: schema -> grammar -> compiled grammar -> matcher -> first mask filled, fresh and
   uncached (corral ``cache=False``, xgrammar ``cache_enabled=False``), the median of a few
   such compiles (the first one in a forked child also pays copy-on-write faults), in a child
   of a parent where each engine has compiled one small warm-up schema outside the sets; a
   schema the engine refuses (raises, or llguidance's matcher is in its error state) is
   counted, not timed;
2. walk: each valid instance, serialized compactly with object keys in the schema's
   ``properties`` order, tokenized with tokenizers' ``encode(add_special_tokens=False)`` (the
   bytes must round-trip), forced through token by token on the compiled grammar (matcher
   reset between instances): every mask fill timed alone with ``perf_counter_ns``; the forced
   token must be allowed by the mask and accepted by the advance call, and the final mask must
   allow EOS in an accepting state, else the instance counts as rejected (and is abandoned
   for that engine). Peers' masks are compared with corral's at the same step, outside the
   timed calls;
3. invalid instances (the suite's ``valid: false`` tests and the large set's ``.invalid.json``, serialized the same way):
   forced through with advance calls, untimed; one the engine accepts whole, EOS included, is
   a wrong answer. A schema is *supported* when the engine compiled it, accepted every valid
   instance and rejected every invalid one.

Each engine has a time budget per set (compile + walk, measured in the child): once it is
spent, the engine's remaining schemas are not tried and the table says "(capped)". One
schema may take at most a per-schema timeout (shorter for outlines-core, whose index build
is the slow part) and a child may grow to a memory limit; past either it is stopped and
counted as "timed out" / "stopped for memory".
"""

import os

# Single-threaded everything, set before any native library is imported.
for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import glob  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import jsonschema  # noqa: E402
import llguidance  # noqa: E402
import llguidance.numpy  # noqa: E402
import outlines_core  # noqa: E402
import outlines_core.json_schema  # noqa: E402
import referencing  # noqa: E402
import referencing.jsonschema  # noqa: E402
import xgrammar  # noqa: E402

import bench_cfg as bc  # noqa: E402  (helpers, the shared vocabulary setup; sets torch to 1 thread)
import corral  # noqa: E402
from bench_cfg import bit, f2, fmt_classes, median_ms, ns, stats_us  # noqa: E402

SUITE_DIR = os.path.join(ROOT, "..", "shared", "data", "json-schema-test-suite", "tests", "draft2020-12")
if not os.path.isdir(SUITE_DIR):
    SUITE_DIR = "/work/shared/data/json-schema-test-suite/tests/draft2020-12"
SCHEMA_DIR = os.path.join(HERE, "json_schemas")
LARGE_DIR = os.path.join(SCHEMA_DIR, "large")

ENGINES = ("corral", "llguidance", "xgrammar", "outlines-core")
PEERS = ("llguidance", "xgrammar", "outlines-core")
SETS = ("suite", "realistic", "large")

# Engine configurations (all: compact JSON, nothing but the schema's own constraints).
LLG_OPTIONS = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}
XGR_OPTIONS = {"any_whitespace": False, "separators": (",", ":"), "strict_mode": False}
OUTLINES_WHITESPACE = ""
CORRAL_OPTIONS = {"strict": True, "whitespace": "compact", "spec_exact": True}

FULL = dict(suite_stride=1, realistic_instances=None, compile_reps=5, suite_compile_reps=3, compile_reps_budget_s=10.0, fork=True,
            suite_schema_timeout_s=30.0, realistic_schema_timeout_s=120.0,
            suite_cap_s=120.0, realistic_cap_s=300.0, outlines_suite_timeout_s=10.0, outlines_realistic_timeout_s=60.0,
            large_instances=None, large_schema_timeout_s=120.0, large_cap_s=2400.0, outlines_large_timeout_s=30.0,
            child_rss_limit_gb=12.0)
QUICK = dict(suite_stride=4, realistic_instances=2, compile_reps=2, suite_compile_reps=2, compile_reps_budget_s=3.0, fork=True,
             suite_schema_timeout_s=10.0, realistic_schema_timeout_s=60.0,
             suite_cap_s=20.0, realistic_cap_s=60.0, outlines_suite_timeout_s=5.0, outlines_realistic_timeout_s=20.0,
             large_instances=1, large_schema_timeout_s=30.0, large_cap_s=90.0, outlines_large_timeout_s=5.0,
             child_rss_limit_gb=8.0)


def corral_has_json_schema():
    return hasattr(corral.Grammar, "json_schema")


def short_error(e):
    """One line of an exception, for the tables."""
    msg = str(e).strip().splitlines()
    msg = msg[0] if msg else ""
    msg = re.sub(r"^\[[0-9:]+\] ", "", msg)
    return f"{type(e).__name__}: {msg}"[:300]


# ----------------------------------------------------------------------------- schemas and instances

def compact(instance):
    return json.dumps(instance, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class Orderer:
    """Rewrites an instance with its object keys in the order of the schema's ``properties``
    (the order every engine here generates them in), recursing through $ref (local and same-
    document), allOf, the first anyOf/oneOf branch the value is valid against, properties,
    patternProperties, additionalProperties, prefixItems and items. Keys the schema does not
    list keep their relative order, after the listed ones. Best effort: it only decides the
    text that is forced through, never what counts as valid."""

    def __init__(self, root):
        self.root = root
        self.validator = jsonschema.Draft202012Validator(root)
        try:
            res = referencing.jsonschema.DRAFT202012.create_resource(root)
            self.resolver = referencing.Registry().resolver_with_root(res)
        except Exception:  # noqa: BLE001
            self.resolver = None

    def valid(self, inst, sub):
        try:
            return self.validator.evolve(schema=sub).is_valid(inst)
        except Exception:  # noqa: BLE001 - unresolvable refs and the like
            return False

    def collect(self, schema, inst, depth=0):
        if not isinstance(schema, dict) or depth > 32:
            return []
        out = [schema]
        ref = schema.get("$ref")
        if isinstance(ref, str) and self.resolver is not None:
            try:
                out += self.collect(self.resolver.lookup(ref).contents, inst, depth + 1)
            except Exception:  # noqa: BLE001
                pass
        for m in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
            out += self.collect(m, inst, depth + 1)
        for kw in ("anyOf", "oneOf"):
            branches = schema.get(kw)
            if isinstance(branches, list):
                for b in branches:
                    if self.valid(inst, b):
                        out += self.collect(b, inst, depth + 1)
                        break
        return out

    def order(self, inst, schema, depth=0):
        if depth > 64:
            return inst
        parts = self.collect(schema, inst)
        for p in parts:  # a const / enum member of the same shape: its key order
            for cand in ([p["const"]] if "const" in p else []) + (p["enum"] if isinstance(p.get("enum"), list) else []):
                if same_shape(inst, cand):
                    return like(inst, cand)
        if isinstance(inst, dict):
            props, pats, addl = {}, [], None
            for p in parts:
                if isinstance(p.get("properties"), dict):
                    for k, s in p["properties"].items():
                        props.setdefault(k, s)
                if isinstance(p.get("patternProperties"), dict):
                    pats += list(p["patternProperties"].items())
                if addl is None and "additionalProperties" in p:
                    addl = p["additionalProperties"]
            out = {}
            for k, s in props.items():
                if k in inst:
                    out[k] = self.order(inst[k], s, depth + 1)
            for k, v in inst.items():
                if k in out:
                    continue
                sub = addl
                for pat, s in pats:
                    try:
                        if re.search(pat, k):
                            sub = s
                            break
                    except re.error:
                        pass
                out[k] = self.order(v, sub, depth + 1)
            return out
        if isinstance(inst, list):
            prefix, items = [], None
            for p in parts:
                if not prefix and isinstance(p.get("prefixItems"), list):
                    prefix = p["prefixItems"]
                if items is None and "items" in p:
                    items = p["items"]
            return [self.order(v, prefix[i] if i < len(prefix) else items, depth + 1) for i, v in enumerate(inst)]
        return inst


def same_shape(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(same_shape(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b, strict=True))
    return not isinstance(b, (dict, list))


def like(a, b):
    """a with the key order of b (same shape)."""
    if isinstance(a, dict):
        return {k: like(a[k], b[k]) for k in b}
    if isinstance(a, list):
        return [like(x, y) for x, y in zip(a, b, strict=False)]
    return a


def format_checker():
    fc = jsonschema.FormatChecker()  # every format jsonschema can check here (date-time, email, uuid, ipv4, ...)

    @fc.checks("uri")
    def _uri(s):  # rfc3987 is not installed: a scheme, then only RFC 3986 characters (no IP-literal hosts)
        return not isinstance(s, str) or bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]*$", s))
    return fc


def load_suite(stride):
    """Test cases of the official suite (draft 2020-12, top level): (name, schema, [texts]),
    plus what was left out and why."""
    cases, skipped, reordered = [], [], 0
    files = sorted(glob.glob(os.path.join(SUITE_DIR, "*.json")))
    if not files:
        raise SystemExit(f"no JSON-Schema-Test-Suite files under {SUITE_DIR}")
    k = 0
    for f in files:
        base = os.path.basename(f)[:-5]
        for ci, case in enumerate(json.load(open(f, encoding="utf-8"))):
            k += 1
            if (k - 1) % stride:
                continue
            schema = case["schema"]
            orderer = Orderer(schema) if isinstance(schema, dict) else None
            texts, invalid = [], []
            for t in case["tests"]:
                data = t["data"]
                try:
                    original = compact(data)
                    ordered = compact(orderer.order(data, schema)) if orderer else original
                    ordered.encode("utf-8")
                except (TypeError, ValueError, UnicodeEncodeError) as e:
                    skipped.append({"case": f"{base}#{ci}", "test": t["description"], "why": short_error(e)})
                    continue
                if not t["valid"]:
                    invalid.append({"text": ordered, "desc": t["description"]})
                    continue
                reordered += ordered != original
                texts.append({"text": ordered, "desc": t["description"]})
            cases.append({"name": f"{base}#{ci}", "file": base, "description": case["description"],
                          "schema": schema, "instances": texts, "invalid": invalid})
    return cases, {"files": len(files), "skipped_instances": skipped, "reordered_instances": reordered}


def schema_validator(schema, fc=None):
    """A jsonschema validator of the schema's own draft (``$schema``; 2020-12 when absent)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls, cls(schema, format_checker=fc)


def load_schema_dir(directory, max_instances, want=(3, 5), with_invalid=False):
    """``<name>.schema.json`` + ``<name>.instances.json`` (+ ``<name>.invalid.json``) of a folder:
    every valid instance must be valid (jsonschema under the schema's draft, formats checked)
    and already written with its keys in schema order, every invalid one invalid; anything
    else stops the benchmark."""
    cases, problems = [], []
    fc = format_checker()
    rel = os.path.relpath(directory, ROOT)
    files = sorted(glob.glob(os.path.join(directory, "*.schema.json")))
    if not files:
        raise SystemExit(f"no schemas under {directory}")
    for f in files:
        name = os.path.basename(f)[: -len(".schema.json")]
        schema = json.load(open(f, encoding="utf-8"))
        instances = json.load(open(os.path.join(directory, f"{name}.instances.json"), encoding="utf-8"))
        cls, v = schema_validator(schema, fc)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as e:
            problems.append(f"{name}: the schema itself is invalid: {e.message}")
        orderer = Orderer(schema)
        texts = []
        for i, inst in enumerate(instances):
            for e in v.iter_errors(inst):
                problems.append(f"{name} instance {i}: {e.json_path}: {e.message[:200]}")
            text = compact(inst)
            if compact(orderer.order(inst, schema)) != text:
                problems.append(f"{name} instance {i}: keys not in the schema's properties order")
            texts.append({"text": text, "desc": f"instance {i}"})
        if not want[0] <= len(texts) <= want[1]:
            problems.append(f"{name}: {len(texts)} instances (want {want[0]}-{want[1]})")
        case = {"name": name, "file": f"{rel}/{name}.schema.json",
                "description": schema.get("description", "") if isinstance(schema.get("description"), str) else "",
                "schema": schema, "instances": texts[:max_instances] if max_instances else texts}
        if with_invalid:
            case["invalid"] = []
            path = os.path.join(directory, f"{name}.invalid.json")
            for i, x in enumerate(json.load(open(path, encoding="utf-8")) if os.path.exists(path) else []):
                if v.is_valid(x["data"]):
                    problems.append(f"{name} invalid instance {i} is valid: {x['description']}")
                case["invalid"].append({"text": compact(x["data"]), "desc": x["description"]})
            if not case["invalid"]:
                problems.append(f"{name}: no invalid instances")
        cases.append(case)
    if problems:
        raise SystemExit(f"invalid schemas/instances under {rel}:\n  " + "\n  ".join(problems))
    return cases


def load_realistic(max_instances):
    """bench/json_schemas/*: 3-5 valid instances per schema."""
    return load_schema_dir(SCHEMA_DIR, max_instances)


def load_large(max_instances):
    """bench/json_schemas/large/*: 2-5 valid and some invalid instances per schema."""
    return load_schema_dir(LARGE_DIR, max_instances, want=(2, 5), with_invalid=True)


# ----------------------------------------------------------------------------- engines

class Setup(bc.Setup):
    """bench_cfg's vocabularies (corral, llguidance, xgrammar from one HF tokenizer), plus
    outlines-core's: every id corral classes as normal, keyed by its exact bytes, and EOS."""

    def __init__(self, log):
        super().__init__(log)
        t0 = ns()
        by_bytes = {}
        for i in range(self.vocab.size):
            if str(self.vocab.token_kind(i)) != "normal":
                continue
            b = self.vocab.token_bytes(i)
            if b:
                by_bytes.setdefault(b, []).append(i)
        self.ovocab = outlines_core.Vocabulary(self.eos[0], by_bytes)
        self.info["outlines_vocabulary_len"] = len(self.ovocab)
        self.info["load_ms"]["outlines-core"] = (ns() - t0) / 1e6
        self.xcompiler = xgrammar.GrammarCompiler(self.ti, max_threads=1, cache_enabled=False)
        self.obuf = np.zeros((1, self.vocab.mask_width), dtype=np.int32)


class Refused(Exception):
    pass


class Runner:
    """One engine on one compiled schema: the mask-fill call, the bitmask row it fills,
    advance / accepting / reset."""

    def __init__(self, engine, setup, schema):
        self.engine = engine
        self.parts = {}
        t0 = ns()
        if engine == "corral":
            g = corral.Grammar.json_schema(schema, **CORRAL_OPTIONS)
            t1 = ns()
            self.compiled = corral.compile(g, setup.vocab, cache=False)
            self.m = self.compiled.matcher()
            self.bm = corral.allocate_bitmask(1, setup.size)
            self.row = self.bm[0]
            self.fill, self.fargs = self.m.fill_bitmask, (self.bm, 0)
            self.parts = {"grammar": t1 - t0}
        elif engine == "llguidance":
            gj = llguidance.LLMatcher.grammar_from_json_schema(json.dumps(schema), overrides=LLG_OPTIONS)
            t1 = ns()
            self.m = llguidance.LLMatcher(setup.lt, gj, log_level=0)
            if self.m.is_error():
                raise Refused(self.m.get_error().split("\n")[0][:300])
            self.bm = llguidance.numpy.allocate_token_bitmask(1, setup.lt.vocab_size)
            self.row = self.bm[0]
            self.fill, self.fargs = llguidance.numpy.fill_next_token_bitmask, (self.m, self.bm, 0)
            self.parts = {"grammar": t1 - t0}
        elif engine == "xgrammar":
            cg = setup.xcompiler.compile_json_schema(json.dumps(schema), **XGR_OPTIONS)
            t1 = ns()
            self.m = xgrammar.GrammarMatcher(cg)
            self.bm = xgrammar.allocate_token_bitmask(1, setup.ti.vocab_size)
            self.row = self.bm.numpy()[0]
            self.fill, self.fargs = self.m.fill_next_token_bitmask, (self.bm,)
            self.parts = {"grammar": t1 - t0}
        else:
            rx = outlines_core.json_schema.build_regex_from_schema(json.dumps(schema),
                                                                   whitespace_pattern=OUTLINES_WHITESPACE)
            t1 = ns()
            self.index = outlines_core.Index(rx, setup.ovocab)
            t2 = ns()
            self.m = outlines_core.Guide(self.index)
            self.bm = np.zeros((1, setup.vocab.mask_width), dtype=np.int32)
            self.row = self.bm[0]
            self.fill, self.fargs = self.m.write_mask_into, (self.bm.ctypes.data, self.bm.shape[1], 4)
            self.parts = {"regex": t1 - t0, "index": t2 - t1, "regex_chars": len(rx)}
        t2 = ns()
        self.fill(*self.fargs)
        t3 = ns()
        self.parts["matcher"] = t2 - t0 - sum(v for k, v in self.parts.items() if k not in ("regex_chars",))
        self.parts["first_fill"] = t3 - t2
        self.total_ns = t3 - t0
        self.pristine = self.m.deep_copy() if engine == "llguidance" else None

    def reset(self):
        if self.engine == "llguidance" and self.m.is_error():
            self.m = self.pristine.deep_copy()
            self.fargs = (self.m, self.bm, 0)
        elif self.engine == "outlines-core":
            self.m = outlines_core.Guide(self.index)
            self.fill = self.m.write_mask_into
        else:
            self.m.reset()

    def advance(self, t):
        if self.engine == "corral":
            return bool(self.m.advance(t))
        if self.engine == "llguidance":
            return bool(self.m.consume_token(t)) and not self.m.is_error()
        if self.engine == "xgrammar":
            return bool(self.m.accept_token(t))
        try:
            self.m.advance(t, return_tokens=False)
            return True
        except Exception:  # noqa: BLE001 - outlines-core raises on a token it does not allow
            return False

    def accepting(self):
        if self.engine == "xgrammar":
            return bool(self.m.is_completed())
        if self.engine == "outlines-core":
            return bool(self.m.is_finished())
        return bool(self.m.is_accepting())

    def error(self):
        if self.engine == "llguidance":
            return self.m.get_error().split("\n<state>")[0][:300]
        return None


def build(engine, setup, schema):
    """A Runner, or a Refused/other exception. llguidance reports a bad schema through its
    matcher's error state; everything else raises."""
    return Runner(engine, setup, schema)


def walk_case(runner, setup, case_key, instances, agreement, cmp_):
    """Force each instance through (see module docstring). Returns per-step fill times,
    advance times, rejections and the number of instances walked to the end."""
    eos = setup.eos[0]
    vocab = setup.vocab
    fills, advances, rejections = [], [], []
    if True:  # the whole set runs with the cyclic GC off (bench_set)
        for j, inst in enumerate(instances):
            if j:
                runner.reset()
            ids = inst["ids"]
            prefix = b""
            for i in range(len(ids) + 1):
                fill, fargs = runner.fill, runner.fargs
                t0 = ns()
                fill(*fargs)
                t1 = ns()
                fills.append(t1 - t0)
                row = runner.row
                t = ids[i] if i < len(ids) else eos
                forced = repr(vocab.token_bytes(t)) if i < len(ids) else "EOS"
                key = ((case_key, j), i)
                if agreement is not None:
                    if cmp_ is None:
                        agreement.record(key, row)
                    else:
                        agreement.compare(cmp_, runner.engine, key, row, f"{case_key} {inst['desc']}", prefix, forced)
                allowed = bit(row, t)
                if i == len(ids):
                    acc = runner.accepting()
                    if not (allowed and acc):
                        rejections.append({"case": case_key, "instance": j, "desc": inst["desc"], "step": i,
                                           "token": "EOS", "allowed_by_mask": allowed, "accepting": acc,
                                           "text": inst["text"][-80:], "error": runner.error()})
                    break
                t0 = ns()
                ok = runner.advance(t)
                t1 = ns()
                advances.append(t1 - t0)
                if not (allowed and ok):
                    rejections.append({"case": case_key, "instance": j, "desc": inst["desc"], "step": i,
                                       "token": int(t), "token_bytes": forced,
                                       "context": prefix[-60:].decode("utf-8", "replace"),
                                       "allowed_by_mask": allowed, "advance_ok": ok, "error": runner.error()})
                    break
                prefix += vocab.token_bytes(t)
    return fills, advances, rejections


# Compiled once per engine in the parent process before a set is run (see bench_set).
WARMUP_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string", "maxLength": 40},
                   "tags": {"type": "array", "items": {"enum": ["x", "y"]}}},
    "required": ["id"],
}


def _status_kib(field):
    """A ``VmRSS``/``VmHWM`` line of /proc/self/status, in bytes (0 where unreadable)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def reset_peak_rss():
    """Starts a new peak-RSS measurement of this process (Linux: clear_refs 5 resets
    VmHWM to the current RSS); returns the RSS it starts from."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _status_kib("VmRSS")


def run_engine_on_case(engine, setup, case, reps, reps_budget_s, agreement):
    """compile (reps fresh compiles, the last one kept) + walk; a dict of plain data.
    ``compile_peak_bytes``: how far the process's RSS rose above where it stood before the
    compiles, at its peak during them (each engine in its own forked child)."""
    out = {"status": "ok"}
    rss_before = reset_peak_rss()
    totals, parts = [], []
    t_start = ns()
    runner = None
    if True:  # GC off for the whole set (bench_set)
        for _rep in range(reps):
            try:
                runner = build(engine, setup, case["schema"])
            except Exception as e:  # noqa: BLE001 - every refusal is counted, whatever the type
                out["status"] = "refused"
                out["error"] = short_error(e)
                out["error_type"] = type(e).__name__
                out["is_corral_error"] = isinstance(e, corral.CorralError)
                out["wall_s"] = (ns() - t_start) / 1e9
                return out
            totals.append(runner.total_ns)
            parts.append(runner.parts)
            if (ns() - t_start) / 1e9 > reps_budget_s:
                break
    out["compile_peak_bytes"] = max(0, _status_kib("VmHWM") - rss_before)
    out["compile_ms"] = median_ms(totals)
    out["compile_reps"] = len(totals)
    out["compile_parts_ms"] = {k: (float(np.median([p[k] for p in parts])) / (1 if k == "regex_chars" else 1e6))
                               for k in parts[0]}
    cmp_ = None if engine == "corral" or agreement is None or not agreement.masks else agreement.new_peer()
    fills, advances, rejections = walk_case(runner, setup, case["name"], case["instances"],
                                            agreement if (engine == "corral" or cmp_ is not None) else None, cmp_)
    out["invalid_walked"] = len(case.get("invalid", []))
    out["invalid_accepted"] = walk_invalid(runner, setup, case["name"], case.get("invalid", []))
    out["fills_ns"] = np.asarray(fills, dtype=np.int64)
    out["advances_ns"] = np.asarray(advances, dtype=np.int64)
    out["rejections"] = rejections
    out["instances"] = len(case["instances"])
    out["agreement"] = cmp_
    if engine == "corral":
        out["corral_masks"] = (agreement.ref, agreement.masks)
        out["corral_cached_states"] = runner.compiled.cached_states
        out["corral_memory_bytes"] = runner.compiled.memory_bytes
    out["wall_s"] = (ns() - t_start) / 1e9
    return out


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def run_forked(fn, timeout_s, rss_limit_bytes):
    """fn() in a forked child (same memory image: vocabularies, corral's recorded masks);
    its pickled result comes back through a pipe. ("ok", result) | ("timeout", s) |
    ("memory", bytes) | ("crashed", message)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            payload = pickle.dumps(("ok", fn()))
        except BaseException as e:  # noqa: BLE001
            payload = pickle.dumps(("crashed", short_error(e) + "\n" + traceback.format_exc()[-1500:]))
            code = 1
        with os.fdopen(w, "wb") as f:
            f.write(payload)
        os._exit(code)
    os.close(w)
    chunks, t0, status = [], time.monotonic(), None
    with os.fdopen(r, "rb") as f:
        fd = f.fileno()
        while True:
            left = timeout_s - (time.monotonic() - t0)
            if left <= 0:
                status = ("timeout", timeout_s)
                break
            ready, _, _ = select.select([fd], [], [], min(0.2, left))
            if ready:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                chunks.append(b)
            elif rss_bytes(pid) > rss_limit_bytes:
                status = ("memory", rss_bytes(pid))
                break
    if status is not None:
        os.kill(pid, signal.SIGKILL)
    _, st = os.waitpid(pid, 0)
    if status is not None:
        return status
    data = b"".join(chunks)
    if not data:
        return ("crashed", f"child exited with status {st} and no result")
    return pickle.loads(data)


# ----------------------------------------------------------------------------- one set

def tokenize_cases(setup, cases):
    for c in cases:
        for inst in c["instances"] + c.get("invalid", []):
            ids = setup.tok.encode(inst["text"], add_special_tokens=False).ids
            if setup.vocab.decode_bytes(ids) != inst["text"].encode("utf-8"):
                raise RuntimeError(f"{c['name']} {inst['desc']}: tokenization does not round-trip")
            inst["ids"] = ids


def walk_invalid(runner, setup, case_key, instances):
    """Each invalid instance forced through (advance only, no timing): the ones the engine
    accepts whole, EOS included, are wrong answers."""
    eos = setup.eos[0]
    accepted = []
    for j, inst in enumerate(instances):
        runner.reset()
        if all(runner.advance(t) for t in inst["ids"]):
            runner.fill(*runner.fargs)
            if bit(runner.row, eos) and runner.accepting():
                accepted.append({"case": case_key, "instance": j, "desc": inst["desc"], "text": inst["text"][-80:]})
    return accepted


def bench_set(set_name, cases, setup, engines, cfg, log):
    cap = cfg[f"{set_name}_cap_s"]
    # Several fresh compiles per schema, median: the first one in a forked child also pays
    # the child's first touches of memory shared with the parent (copy-on-write faults).
    reps = cfg["suite_compile_reps"] if set_name == "suite" else cfg["compile_reps"]
    used = {e: 0.0 for e in engines}
    results = {c["name"]: {} for c in cases}
    distinct_masks = 0
    t_set = time.perf_counter()
    # The cyclic GC stays off for the whole set and runs between schemas, outside every
    # engine's accounting (a full collection of this process takes ~0.1-0.5 s).
    # Every child is forked from this process: warm each engine up here once, on a small
    # schema that is not in any set, so that one-time process costs (lazy imports and
    # tables, first-call initialization) are not charged to the compile of each schema.
    for e in engines:
        if e == "corral" and not corral_has_json_schema():
            continue
        try:
            build(e, setup, WARMUP_SCHEMA)
        except Exception as err:  # noqa: BLE001 - a warm-up failure is logged, not fatal
            log(f"  warm-up of {e} failed: {short_error(err)}")
    gc.collect()
    gc.disable()
    for ci, case in enumerate(cases):
        if ci and ci % 20 == 0:
            gc.collect()
        # corral's masks for this schema, recorded by its (child) walk; the peers' children
        # compare their masks with them
        agreement = bc.Agreement(setup)
        for e in engines:
            if e == "corral" and not corral_has_json_schema():
                results[case["name"]][e] = {"status": "missing API"}
                continue
            if used[e] >= cap:
                results[case["name"]][e] = {"status": "capped"}
                continue
            if cfg["fork"]:
                limit = cfg[f"outlines_{set_name}_timeout_s" if e == "outlines-core" else f"{set_name}_schema_timeout_s"]
                timeout = max(1.0, min(limit, cap - used[e]))
                res = run_forked(functools.partial(run_engine_on_case, e, setup, case, reps, cfg["compile_reps_budget_s"], agreement),
                                 timeout, cfg["child_rss_limit_gb"] * 2**30)
                if res[0] == "ok":
                    r = res[1]
                elif res[0] == "timeout":
                    r = {"status": "timeout", "error": f"no result within {res[1]:.0f} s", "wall_s": res[1]}
                elif res[0] == "memory":
                    r = {"status": "memory", "error": f"stopped at {res[1] / 2**30:.1f} GiB RSS", "wall_s": None}
                else:
                    r = {"status": "crashed", "error": res[1][:2000], "wall_s": None}
                if r.get("wall_s") is None:
                    r["wall_s"] = timeout if r["status"] in ("timeout", "memory") else 0.0
            else:
                r = run_engine_on_case(e, setup, case, reps, cfg["compile_reps_budget_s"], agreement)
            used[e] += r["wall_s"]
            if e == "corral" and "corral_masks" in r:
                agreement.ref, agreement.masks = r.pop("corral_masks")
                distinct_masks += len(agreement.masks)
            results[case["name"]][e] = r
        per_schema_log = set_name in ("realistic", "large")
        if per_schema_log or (ci + 1) % 50 == 0 or ci + 1 == len(cases):
            log(f"  [{set_name}] {ci + 1}/{len(cases)} schemas; engine seconds used: "
                + ", ".join(f"{e} {used[e]:.1f}" for e in engines))
            if per_schema_log:
                gc.collect()
                for e in engines:
                    r = results[case["name"]][e]
                    if r["status"] == "ok":
                        fa = stats_us(r["fills_ns"])
                        log(f"      {case['name']:24s} {e:13s} compile {r['compile_ms']:9.2f} ms, mask median "
                            f"{fa.get('median_us', float('nan')):8.2f} p99 {fa.get('p99_us', float('nan')):9.2f} "
                            f"max {fa.get('max_us', float('nan')):9.0f} µs, rejected {len(r['rejections'])}"
                            + (f", invalid accepted {len(r['invalid_accepted'])}/{r['invalid_walked']}" if r.get("invalid_walked") else ""))
                    else:
                        log(f"      {case['name']:24s} {e:13s} {r['status']}: {r.get('error', '')[:150]}")
    gc.enable()
    return summarize_set(set_name, cases, results, engines, used, cap, time.perf_counter() - t_set, distinct_masks)


def summarize_set(set_name, cases, results, engines, used, cap, wall_s, distinct_masks):
    out = {"set": set_name, "schemas": len(cases), "instances": sum(len(c["instances"]) for c in cases),
           "tokens": sum(len(i["ids"]) for c in cases for i in c["instances"]),
           "invalid": sum(len(c.get("invalid", [])) for c in cases),
           "cap_s": cap, "wall_s": wall_s, "engines": {}, "per_schema": []}
    ok_by = {e: {c["name"] for c in cases if results[c["name"]][e]["status"] == "ok"} for e in engines}
    running = [e for e in engines if ok_by[e]
               and not any(results[c["name"]][e]["status"] in ("missing API", "capped") for c in cases)]
    common = set.intersection(*[ok_by[e] for e in running]) if running else set()
    out["common_schemas"] = len(common)
    out["common_engines"] = running
    for e in engines:
        rs = [(c, results[c["name"]][e]) for c in cases]
        st = {}
        for _, r in rs:
            st[r["status"]] = st.get(r["status"], 0) + 1
        oks = [(c, r) for c, r in rs if r["status"] == "ok"]
        fills = np.concatenate([r["fills_ns"] for _, r in oks]) if oks else np.zeros(0)
        advs = np.concatenate([r["advances_ns"] for _, r in oks]) if oks else np.zeros(0)
        cfills = [r["fills_ns"] for c, r in oks if c["name"] in common]
        rej = [x for _, r in oks for x in r["rejections"]]
        wrong_invalid = [x for _, r in oks for x in r.get("invalid_accepted", [])]
        # Supported: compiled, every valid instance accepted and every invalid one rejected.
        supported = sum(1 for _, r in oks if not r["rejections"] and not r.get("invalid_accepted"))
        refusals = {}
        for c, r in rs:
            if r["status"] in ("refused", "crashed", "timeout", "memory"):
                k = r.get("error", "")
                k = re.sub(r"[0-9]+", "N", k)[:120]
                refusals.setdefault(k, []).append(c["name"])
        agg = {"steps_compared": 0, "steps_differing": 0, "ids_only_corral": 0, "ids_only_peer": 0,
               "only_corral_by_class": {}, "only_peer_by_class": {}, "examples": []}
        have_agreement = False
        for _, r in oks:
            a = r.get("agreement")
            if not a:
                continue
            have_agreement = True
            for k in ("steps_compared", "steps_differing", "ids_only_corral", "ids_only_peer"):
                agg[k] += a[k]
            for k in ("only_corral_by_class", "only_peer_by_class"):
                for kk, v in a[k].items():
                    agg[k][kk] = agg[k].get(kk, 0) + v
            agg["examples"] += a["examples"][: max(0, 24 - len(agg["examples"]))]
        out["engines"][e] = {
            "status_counts": st,
            "compiled": st.get("ok", 0),
            "refused": st.get("refused", 0),
            "timed_out": st.get("timeout", 0),
            "memory_stopped": st.get("memory", 0),
            "crashed": st.get("crashed", 0),
            "capped": st.get("capped", 0),
            "missing_api": st.get("missing API", 0),
            "time_used_s": used[e],
            "compile_ms_median": float(np.median([r["compile_ms"] for _, r in oks])) if oks else None,
            "compile_ms_p90": float(np.percentile([r["compile_ms"] for _, r in oks], 90)) if oks else None,
            "compile_ms_p99": float(np.percentile([r["compile_ms"] for _, r in oks], 99)) if oks else None,
            "compile_ms_max": float(max(r["compile_ms"] for _, r in oks)) if oks else None,
            "compile_ms_median_common": (float(np.median([r["compile_ms"] for c, r in oks if c["name"] in common]))
                                         if any(c["name"] in common for c, _ in oks) else None),
            "fill": stats_us(fills),
            "fill_common": stats_us(np.concatenate(cfills)) if cfills else {"n": 0},
            "advance": stats_us(advs),
            "masks_over_1ms": int((fills > 1_000_000).sum()),
            "masks_over_3ms": int((fills > 3_000_000).sum()),
            "instances_walked": sum(r["instances"] for _, r in oks),
            "instances_rejected": len(rej),
            "invalid_walked": sum(r.get("invalid_walked", 0) for _, r in oks),
            "invalid_accepted": len(wrong_invalid),
            "invalid_accepted_list": wrong_invalid,
            "supported": supported,
            "rejections": rej,
            "refusal_reasons": sorted(([k, len(v), v[:8]] for k, v in refusals.items()), key=lambda x: -x[1]),
            "agreement_with_corral": agg if have_agreement else None,
        }
    out["ratios"] = engine_ratios(cases, results, engines)
    # per schema (without the raw samples), and the per-file breakdown for the suite
    for c in cases:
        row = {"name": c["name"], "file": c["file"], "description": c["description"], "instances": len(c["instances"]),
               "tokens": sum(len(i["ids"]) for i in c["instances"]), "engines": {}}
        for e in engines:
            r = dict(results[c["name"]][e])
            if r["status"] == "ok":
                r["fill"] = stats_us(r.pop("fills_ns"))
                r["advance"] = stats_us(r.pop("advances_ns"))
                r["rejected"] = len(r["rejections"])
                r["invalid_accepted"] = len(r.get("invalid_accepted", []))
                if r.get("agreement") and set_name == "suite":
                    r["agreement"] = {k: v for k, v in r["agreement"].items() if k != "examples"}
                if set_name == "suite":
                    r.pop("rejections")  # all of them are in the engine summary
            row["engines"][e] = r
        out["per_schema"].append(row)
    if set_name == "suite":
        files = {}
        for c in cases:
            f = files.setdefault(c["file"], {"cases": 0, "instances": 0})
            f["cases"] += 1
            f["instances"] += len(c["instances"])
            for e in engines:
                r = results[c["name"]][e]
                d = f.setdefault(e, {"ok": 0, "refused": 0, "other": 0, "rejected_instances": 0})
                if r["status"] == "ok":
                    d["ok"] += 1
                    d["rejected_instances"] += len(r["rejections"])
                elif r["status"] == "refused":
                    d["refused"] += 1
                else:
                    d["other"] += 1
        out["per_file"] = files
    out["corral_distinct_masks_summed_over_schemas"] = distinct_masks
    return out


def engine_ratios(cases, results, engines, num="corral", den="llguidance"):
    """num / den for compile median, p99 and max and for mask p99: over each engine's own
    compiled schemas ("own") and over the schemas both compiled ("common")."""
    if num not in engines or den not in engines:
        return None

    def stats(e, names):
        rs = [results[c["name"]][e] for c in cases if c["name"] in names]
        if not rs:
            return None
        comp = [r["compile_ms"] for r in rs]
        fills = np.concatenate([r["fills_ns"] for r in rs])
        return {"compile_median": float(np.median(comp)), "compile_p99": float(np.percentile(comp, 99)),
                "compile_max": float(max(comp)), "mask_p99": stats_us(fills).get("p99_us")}

    ok = {e: {c["name"] for c in cases if results[c["name"]][e]["status"] == "ok"} for e in (num, den)}
    out = {"num": num, "den": den, "common_schemas": len(ok[num] & ok[den])}
    for label, names in (("own", None), ("common", ok[num] & ok[den])):
        a, b = stats(num, names if names is not None else ok[num]), stats(den, names if names is not None else ok[den])
        out[label] = ({k: (a[k] / b[k] if a.get(k) is not None and b.get(k) else None) for k in a} if a and b else None)
    return out


# ----------------------------------------------------------------------------- report

def cell_status(s, e):
    """'(capped)' etc. next to a count, for the engine's row."""
    bits = []
    if s["missing_api"]:
        return "missing API"
    if s["capped"]:
        bits.append(f"(capped: {s['capped']} not tried)")
    if s["timed_out"]:
        bits.append(f"{s['timed_out']} timed out")
    if s["memory_stopped"]:
        bits.append(f"{s['memory_stopped']} stopped for memory")
    if s["crashed"]:
        bits.append(f"{s['crashed']} crashed")
    return " ".join(bits)


def fmt(x, unit=""):
    return "–" if x is None else f2(x) + unit


def engine_table(L, res, engines, suite):
    L.append("| engine | schemas compiled / refused | supported² | compile ms median | p90 | p99 | max | compile ms median, common schemas¹ "
             "| instances walked / rejected | invalid walked / accepted (wrong accepts) | masks timed | mask µs median | p90 | p99 | max "
             "| masks > 1 ms | masks > 3 ms | advance µs median | notes |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for e in engines:
        s = res["engines"][e]
        if s["missing_api"]:
            L.append(f"| {e} | missing API | | | | | | | | | | | | | | | | | `corral.Grammar.json_schema` not found |")
            continue
        f = s["fill"]
        L.append(f"| {e} | {s['compiled']} / {s['refused']} | {s['supported']} | {fmt(s['compile_ms_median'])} | {fmt(s['compile_ms_p90'])} "
                 f"| {fmt(s.get('compile_ms_p99'))} | {fmt(s.get('compile_ms_max'))} "
                 f"| {fmt(s['compile_ms_median_common'])} | {s['instances_walked']} / {s['instances_rejected']} "
                 f"| {s['invalid_walked']} / {s['invalid_accepted']} "
                 f"| {f['n']:,} | {fmt(f.get('median_us'))} | {fmt(f.get('p90_us'))} | {fmt(f.get('p99_us'))} "
                 f"| {fmt(f.get('max_us'))} | {s['masks_over_1ms']} | {s.get('masks_over_3ms', 0)} | {fmt(s['advance'].get('median_us'))} "
                 f"| {cell_status(s, e)} |")
    L.append("")
    L.append("² Supported = compiled, every valid instance accepted and every invalid instance (the suite's "
             "`valid: false` tests, the large set's `.invalid.json`; the realistic set has none) rejected, at some token or at EOS. "
             "Invalid instances are forced through untimed, only on schemas the engine compiled.")
    L.append("")
    ratio_lines(L, res)
    running = res["common_engines"]
    if res["common_schemas"] and len(running) > 1:
        L.append(f"¹ Over the {res['common_schemas']} schema(s) compiled by every engine that went through the whole "
                 f"set and compiled any ({', '.join(running)}), "
                 "mask µs median / p99: " + ", ".join(
                     f"{e} {fmt(res['engines'][e]['fill_common'].get('median_us'))} / "
                     f"{fmt(res['engines'][e]['fill_common'].get('p99_us'))}" for e in running) + ".")
        L.append("")


def ratio_lines(L, res):
    r = res.get("ratios")
    if not r:
        return
    parts = []
    for label, what in (("own", "each over the schemas it compiled"), ("common", f"over the {r['common_schemas']} schema(s) both compiled")):
        x = r.get(label)
        if x:
            parts.append(f"{what}: compile median {fmt(x['compile_median'])}, p99 {fmt(x['compile_p99'])}, "
                         f"max {fmt(x['compile_max'])}; mask p99 {fmt(x['mask_p99'])}")
    if parts:
        L.append(f"Ratios {r['num']} / {r['den']} (below 1: {r['num']} faster) — " + "; ".join(parts) + ".")
        L.append("")


def agreement_lines(L, res, engines, size):
    parts = []
    for p in PEERS:
        if p not in engines:
            continue
        a = res["engines"][p]["agreement_with_corral"]
        if not a:
            continue
        parts.append(f"corral vs {p}: {a['steps_differing']:,} of {a['steps_compared']:,} masks differ (token ids only "
                     f"corral allows, summed over steps: {a['ids_only_corral']:,} = {fmt_classes(a['only_corral_by_class'])}; "
                     f"only {p}: {a['ids_only_peer']:,} = {fmt_classes(a['only_peer_by_class'])})")
    if parts:
        L.append(f"Mask agreement (ids < {size:,}): " + "; ".join(parts) + ".")
        L.append("")


def rejection_lines(L, res, engines, limit):
    for e in engines:
        s = res["engines"][e]
        if s["missing_api"]:
            continue
        if s["rejections"]:
            shown = s["rejections"][:limit]
            L.append(f"{e} rejected {s['instances_rejected']} valid instance(s)" + (f" (first {limit})" if len(s["rejections"]) > limit else "")
                     + ": " + "; ".join(
                         f"`{x['case']}` {x['desc']!r} at step {x['step']} "
                         + (f"{x.get('token_bytes')} after `{x.get('context', '')[-30:]!r}`" if x["token"] != "EOS"
                            else "(EOS not allowed / not accepting)") for x in shown) + ".")
            L.append("")
        if s.get("invalid_accepted_list"):
            shown = s["invalid_accepted_list"][:limit]
            L.append(f"{e} accepted {s['invalid_accepted']} invalid instance(s) (wrong answers)"
                     + (f" (first {limit})" if len(s["invalid_accepted_list"]) > limit else "") + ": "
                     + "; ".join(f"`{x['case']}` {x['desc']!r}" for x in shown) + ".")
            L.append("")
        if s["refusal_reasons"]:
            L.append(f"{e}: why schemas were refused / stopped (count: message, digits as N): " + "; ".join(
                f"{n}× `{k}`" for k, n, _ in s["refusal_reasons"][:limit]) + ".")
            L.append("")


def markdown(out, engines):
    m, v = out["machine"], out["machine"]["versions"]
    L = [f"# JSON Schema: corral vs llguidance vs xgrammar vs outlines-core ({m['mode']} run)", ""]
    L.append(f"{m['date']} · CPU {m['cpu_model']} ({m['cpu_count']} cores, run single-threaded) · Python {m['python']} · "
             f"corral {v.get('corral')} (git {m['corral_build'].get('git_head', '?')}, native module built "
             f"{m['corral_build'].get('native_module_mtime', '?')}; `Grammar.json_schema` "
             f"{'present' if m['corral_json_schema'] else '**missing**'}) · llguidance {v.get('llguidance')} · "
             f"xgrammar {v.get('xgrammar')} · outlines-core {v.get('outlines_core')} · jsonschema {v.get('jsonschema')} · "
             f"vocabulary: DeepSeek tokenizer.json, {out['vocabulary']['corral_size']:,} ids · load average "
             f"{m['loadavg_start'][0]:.1f} at start, {m['loadavg_end'][0]:.1f} at end · script runtime {out['runtime_s']:.0f} s")
    L.append("")
    L.append("Compact JSON everywhere: corral `Grammar.json_schema(schema, strict=True, whitespace=\"compact\", spec_exact=True)` (the specification's language, as the peers are configured; keys kept distinct); "
             "llguidance `LLMatcher.grammar_from_json_schema(schema, overrides={whitespace_flexible: false, "
             "item_separator: \",\", key_separator: \":\"})`; xgrammar `compile_json_schema(schema, any_whitespace=False, "
             "separators=(\",\", \":\"), strict_mode=False)`; outlines-core `build_regex_from_schema(schema, "
             "whitespace_pattern=\"\")` + `Index`. Instances: `json.dumps(x, separators=(\",\", \":\"), ensure_ascii=False)`, "
             "object keys in schema `properties` order.")
    L.append("")
    size = out["vocabulary"]["compared_ids"]
    for s in out["sets"]:
        if s["set"] == "suite":
            L.append(f"## JSON-Schema-Test-Suite, draft 2020-12 — {s['schemas']} schemas ({s['files']} files), "
                     f"{s['instances']} valid instances, {s['tokens']:,} tokens")
            L.append("")
            engine_table(L, s, engines, True)
            L.append(f"Compile = schema → grammar → compiled → matcher → first mask: per schema, the median of "
                     f"{out['config']['suite_compile_reps']} fresh compiles in a child forked from a parent where each engine "
                     f"has compiled one small warm-up schema (not from the set); then the median over the "
                     f"schemas the engine compiled. Each engine's time (compile + walk) is capped at {s['cap_s']:.0f} s "
                     f"for the set (outlines-core: at most {out['config']['outlines_suite_timeout_s']:.0f} s per schema, then it counts as timed out). {s['reordered_instances']} instances were re-keyed into schema order; "
                     f"{len(s['skipped_instances'])} valid instances were left out (not serializable as UTF-8 JSON).")
            L.append("")
            agreement_lines(L, s, engines, size)
            L.append("### Per file: schemas refused (refused / cases) and valid instances rejected")
            L.append("")
            L.append("| file | cases | instances | " + " | ".join(engines) + " |")
            L.append("|---|---:|---:|" + "---:|" * len(engines))
            for f, d in sorted(s["per_file"].items()):
                cells = []
                for e in engines:
                    x = d[e]
                    if s["engines"][e]["missing_api"]:
                        cells.append("–")
                        continue
                    c = f"{x['refused']}/{d['cases']}"
                    if x["other"]:
                        c += f" (+{x['other']} not run)"
                    if x["rejected_instances"]:
                        c += f", rej {x['rejected_instances']}"
                    cells.append(c)
                L.append(f"| {f} | {d['cases']} | {d['instances']} | " + " | ".join(cells) + " |")
            L.append("")
            rejection_lines(L, s, engines, 12)
        else:
            large = s["set"] == "large"
            if large:
                L.append(f"## Large real-world schemas (bench/json_schemas/large) — {s['schemas']} schemas, {s['instances']} "
                         f"valid instances ({s['tokens']:,} tokens), {s.get('invalid', 0)} invalid instances")
                L.append("")
                L.append("### All large schemas together")
            else:
                L.append(f"## Realistic schemas (bench/json_schemas) — {s['schemas']} schemas, {s['instances']} instances, "
                         f"{s['tokens']:,} tokens")
                L.append("")
                L.append("### All realistic schemas together")
            L.append("")
            engine_table(L, s, engines, False)
            L.append("### Per schema")
            L.append("")
            L.append("| schema | tokens | engine | compile ms | compile peak MiB³ | grammar MiB⁴ | mask µs median | p90 | p99 | max "
                     "| instances rejected | invalid accepted |")
            L.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for row in s["per_schema"]:
                for k, e in enumerate(engines):
                    r = row["engines"][e]
                    first = f"`{row['name']}` | {row['tokens']:,}" if k == 0 else " | "
                    if r["status"] != "ok":
                        why = r["status"] + (f": {r.get('error', '')[:90]}" if r.get("error") else "")
                        L.append(f"| {first} | {e} | {why} | | | | | | | | |")
                        continue
                    f = r["fill"]
                    inv = f"{r['invalid_accepted']} / {r['invalid_walked']}" if r.get("invalid_walked") else "–"
                    peak = f"{r['compile_peak_bytes'] / 2**20:.1f}" if "compile_peak_bytes" in r else "–"
                    held = f"{r['corral_memory_bytes'] / 2**20:.2f}" if "corral_memory_bytes" in r else "–"
                    L.append(f"| {first} | {e} | {f2(r['compile_ms'])} | {peak} | {held} | {fmt(f.get('median_us'))} | {fmt(f.get('p90_us'))} "
                             f"| {fmt(f.get('p99_us'))} | {fmt(f.get('max_us'))} | {r['rejected']} / {r['instances']} | {inv} |")
            L.append("")
            peaks = {e: [(r["engines"][e]["compile_peak_bytes"], r["name"]) for r in s["per_schema"]
                         if r["engines"][e]["status"] == "ok" and "compile_peak_bytes" in r["engines"][e]] for e in engines}
            held = [(r["engines"]["corral"]["corral_memory_bytes"], r["name"]) for r in s["per_schema"]
                    if "corral" in r["engines"] and "corral_memory_bytes" in r["engines"]["corral"]]
            bits = [f"{e} {max(v)[0] / 2**20:.1f} MiB (`{max(v)[1]}`)" for e, v in peaks.items() if v]
            if bits:
                L.append("Largest compile peak per engine: " + ", ".join(bits) + ".")
            if held:
                L.append(f"Largest corral compiled grammar after the walk: {max(held)[0] / 2**20:.2f} MiB (`{max(held)[1]}`).")
            L.append("")
            L.append("³ How far the engine's process rose above its resident size before compiling, at its peak during "
                     "the compiles (VmHWM after resetting it, in the schema's forked child; pages the child shares with "
                     "the parent and does not touch are not counted). ⁴ corral's `CompiledGrammar.memory_bytes` after "
                     "forcing every valid and invalid instance (its lazily built masks included).")
            L.append("")
            L.append(f"Compile: median of up to {out['config']['compile_reps']} fresh compiles per schema (fewer once "
                     f"{out['config']['compile_reps_budget_s']:.0f} s are spent on one); each engine's time for the set is "
                     f"capped at {s['cap_s']:.0f} s; one schema may take at most "
                     f"{out['config'][s['set'] + '_schema_timeout_s']:.0f} s, outlines-core at most "
                     f"{out['config']['outlines_' + s['set'] + '_timeout_s']:.0f} s.")
            L.append("")
            agreement_lines(L, s, engines, size)
            rejection_lines(L, s, engines, 20 if not large else 40)
    L.append(f"Mask = one public fill call timed alone with `perf_counter_ns` from Python (timer overhead ≈ "
             f"{m['timer_overhead_ns']:.0f} ns, included): corral `Matcher.fill_bitmask(bm, 0)`, llguidance "
             "`llguidance.numpy.fill_next_token_bitmask(m, bm, 0)`, xgrammar `GrammarMatcher.fill_next_token_bitmask(bm)`, "
             "outlines-core `Guide.write_mask_into(ptr, words, 4)`. One call per token plus the final (EOS) mask; all "
             "instances of a schema on one compiled grammar, matcher reset between instances.")
    L.append("")
    return "\n".join(L)


def machine_info(mode):
    m = bc.machine_info(mode)
    for pkg in ("outlines_core", "jsonschema", "referencing"):
        try:
            m["versions"][pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            m["versions"][pkg] = None
    m["corral_json_schema"] = corral_has_json_schema()
    return m


def jsonable(x):
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="every 4th suite schema, 2 instances per realistic schema, 1 per large schema, shorter caps (a few minutes)")
    ap.add_argument("--out", default=None, help="output folder (default bench/results; with --quick a fresh temporary folder)")
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {SETS}")
    ap.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, of {ENGINES}")
    ap.add_argument("--cap", type=float, default=None, help="seconds per engine per set (overrides both caps)")
    ap.add_argument("--no-fork", action="store_true",
                    help="run every engine in this process (no per-schema time or memory limit; for debugging)")
    args = ap.parse_args()
    cfg = dict(QUICK if args.quick else FULL)
    if args.no_fork:
        cfg["fork"] = False
    if args.cap is not None:
        cfg["suite_cap_s"] = cfg["realistic_cap_s"] = cfg["large_cap_s"] = args.cap
    sets = [s for s in args.sets.split(",") if s]
    engines = [e for e in ENGINES if e in args.engines.split(",")]
    if any(s not in SETS for s in sets) or not engines:
        raise SystemExit(f"--sets must be of {SETS}, --engines of {ENGINES}")
    out_dir = args.out or (tempfile.mkdtemp(prefix="corral-bench-json-") if args.quick else os.path.join(HERE, "results"))
    os.makedirs(out_dir, exist_ok=True)
    warnings.simplefilter("ignore", corral.GrammarWarning)
    warnings.simplefilter("ignore", UserWarning)

    t_start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", flush=True)

    machine = machine_info("quick" if args.quick else "full")
    machine["timer_overhead_ns"] = bc.timer_overhead_ns()
    log(f"machine: {machine['cpu_model']}, python {machine['python']}, {machine['versions']}")
    if "corral" in engines and not machine["corral_json_schema"]:
        log("corral.Grammar.json_schema is missing: the corral column reports 'missing API'")

    # Load and check the schema sets before anything is timed (a bad realistic instance stops here).
    data = {}
    if "realistic" in sets:
        data["realistic"] = load_realistic(cfg["realistic_instances"])
        log(f"realistic: {len(data['realistic'])} schemas, every instance valid (jsonschema, formats checked)")
    if "large" in sets:
        data["large"] = load_large(cfg["large_instances"])
        log(f"large: {len(data['large'])} schemas, {sum(len(c['instances']) for c in data['large'])} valid instances "
            f"(jsonschema, each schema's draft, formats checked), {sum(len(c['invalid']) for c in data['large'])} invalid")
    if "suite" in sets:
        cases, suite_info = load_suite(cfg["suite_stride"])
        data["suite"] = cases
        log(f"suite: {len(cases)} schemas from {suite_info['files']} files, "
            f"{sum(len(c['instances']) for c in cases)} valid instances ({len(suite_info['skipped_instances'])} left out, "
            f"{suite_info['reordered_instances']} re-keyed into schema order)")

    setup = Setup(log)
    for s in data.values():
        tokenize_cases(setup, s)

    # Warm-up, outside every timing: whatever an engine builds once per vocabulary.
    warm = {"type": "object", "properties": {"w": {"type": "integer"}, "x": {"type": "string"}}, "required": ["w"]}
    setup.info["warmup_ms"] = {}
    for e in engines:
        if e == "corral" and not corral_has_json_schema():
            continue
        t0 = ns()
        try:
            build(e, setup, warm)
        except Exception as ex:  # noqa: BLE001
            log(f"warm-up of {e} failed: {short_error(ex)}")
        setup.info["warmup_ms"][e] = (ns() - t0) / 1e6

    out = {"machine": machine, "config": cfg, "vocabulary": setup.info, "sets": [],
           "engine_options": {"corral": CORRAL_OPTIONS, "llguidance": LLG_OPTIONS,
                              "xgrammar": {k: list(v) if isinstance(v, tuple) else v for k, v in XGR_OPTIONS.items()},
                              "outlines-core": {"whitespace_pattern": OUTLINES_WHITESPACE}}}
    for name in ("realistic", "suite", "large"):
        if name not in data:
            continue
        log(f"set {name}")
        res = bench_set(name, data[name], setup, engines, cfg, log)
        if name == "suite":
            res.update(suite_info)
        out["sets"].append(res)
        for e in engines:
            s = res["engines"][e]
            log(f"  [{name}] {e:13s} compiled {s['compiled']} refused {s['refused']} timed out {s['timed_out']} "
                f"capped {s['capped']} | compile median {fmt(s['compile_ms_median'])} p99 {fmt(s['compile_ms_p99'])} "
                f"max {fmt(s['compile_ms_max'])} ms | mask median {fmt(s['fill'].get('median_us'))} p99 "
                f"{fmt(s['fill'].get('p99_us'))} max {fmt(s['fill'].get('max_us'))} µs, > 3 ms {s['masks_over_3ms']} | rejected "
                f"{s['instances_rejected']}/{s['instances_walked']} | wrong accepts {s['invalid_accepted']}/{s['invalid_walked']} "
                f"| {s['time_used_s']:.0f} s")
    # suite first in the report
    out["sets"].sort(key=lambda s: SETS.index(s["set"]))
    machine["loadavg_end"] = bc.loadavg()
    machine["corral_json_schema_at_end"] = corral_has_json_schema()
    out["runtime_s"] = time.perf_counter() - t_start
    md = markdown(out, engines)
    print()
    print(md)
    with open(os.path.join(out_dir, "json.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out_dir, "json.json"), "w") as f:
        json.dump(jsonable(out), f, indent=1, ensure_ascii=False)
    log(f"wrote {out_dir}/json.md, json.json in {out['runtime_s']:.0f} s")


if __name__ == "__main__":
    main()
