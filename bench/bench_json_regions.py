#!/usr/bin/env python
"""What the check of distinct keys and items costs per mask inside other text (corral only).

    python bench/bench_json_regions.py            # -> bench/results/json_regions.md, .json
    python bench/bench_json_regions.py --out DIR

In a structural tag or a ``%json`` of a grammar, a schema whose objects are open to other
keys, or whose arrays keep unboundedly many items distinct, is a JSON region of the output:
the matcher's check reads the output as JSON inside it and as text around it (see
docs/tool_calls.md). Each case walks one document (free text, then tagged values) through a
grammar that needs the check and through the same grammar with a schema that does not (the
objects closed to the keys the document writes; no ``uniqueItems``), alternately, five walks
each, every ``fill_bitmask`` timed (DeepSeek vocabulary, one thread). The difference is the
check plus the larger grammar of an open schema.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import corral  # noqa: E402
from mask_timing import compare_walks, deepseek  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REPEATS = 5
ARGS = {"host": {"type": "string"}, "port": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}
OPEN = {"type": "object", "properties": ARGS, "additionalProperties": {"type": ["string", "integer"]}}
CLOSED = {"type": "object", "properties": ARGS, "additionalProperties": False}
UNIQUE = {**CLOSED, "properties": {**ARGS, "tags": {**ARGS["tags"], "uniqueItems": True}}}
TEXT = 'Checking {"the" : [usual]} hosts first. '
CALL = '{"host": "example.org", "port": 8080, "tags": ["a", "b", "c", "d", "e", "f"]}'


def tool_calls(parameters: dict) -> corral.Grammar:
    """Hermes-style tool calls of one tool taking `parameters`."""
    return corral.Grammar.tool_calls([{"type": "function", "function": {"name": "ping", "parameters": parameters}}])


def lark(schema: dict) -> corral.Grammar:
    """Free text, then `=`, then the schema's JSON value, twice."""
    return corral.Grammar.lark(f'start: (/[^=]+/ "=" %json {json.dumps(schema)} "\\n")~2')


# name: (grammar that needs the check, the same without it, document)
CASES = {
    "tool call, arguments open to other keys": (
        lambda: tool_calls(OPEN),
        lambda: tool_calls(CLOSED),
        (TEXT + f'<tool_call>\n{{"name": "ping", "arguments": {CALL}}}\n</tool_call>') * 2,
    ),
    "tool call, distinct strings in the arguments": (
        lambda: tool_calls(UNIQUE),
        lambda: tool_calls(CLOSED),
        (TEXT + f'<tool_call>\n{{"name": "ping", "arguments": {CALL}}}\n</tool_call>') * 2,
    ),
    "%json in Lark, distinct strings": (
        lambda: lark(UNIQUE),
        lambda: lark(CLOSED),
        (TEXT + "=" + CALL.replace(": ", ":").replace(", ", ",") + "\n") * 2,
    ),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    args = ap.parse_args()
    tok = deepseek()
    vocab = tok.vocab
    width = (vocab.size + 31) // 32
    lines = [
        "# Distinct keys and items inside other text: cost per mask",
        "",
        f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} · DeepSeek vocabulary, {vocab.size:,} ids · load average "
        f"{os.getloadavg()[0]:.1f} at start · every mask timed, {REPEATS} walks per grammar, one thread",
        "",
        "| document | tokens | without the check: median / p99 µs | with it: median / p99 µs | median / p99 added, µs | slowest mask without / with, µs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    raw = {}
    for name, (checked_grammar, plain_grammar, doc) in CASES.items():
        ids = tok.encode(doc)
        checked = corral.compile(checked_grammar(), vocab, cache=False)
        plain = corral.compile(plain_grammar(), vocab, cache=False)
        without, with_check, cells = compare_walks(plain, checked, ids, width, REPEATS)
        lines.append(f"| {name} | {len(ids)} | {cells} |")
        raw[name] = {"tokens": len(ids), "without_ns": without, "with_ns": with_check}
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "json_regions.md").write_text(text)
    (out / "json_regions.json").write_text(json.dumps(raw))


if __name__ == "__main__":
    main()
