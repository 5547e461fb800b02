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

import json
import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import corral  # noqa: E402
from mask_timing import compare_rows, setup, stamp, write_results  # noqa: E402

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
    out, tok, vocab, width = setup(__doc__)
    lines = [
        "# Distinct keys and items inside other text: cost per mask",
        "",
        stamp(vocab, f"every mask timed, {REPEATS} walks per grammar, one thread"),
        "",
        "| document | tokens | without the check: median / p99 µs | with it: median / p99 µs | median / p99 added, µs | slowest mask without / with, µs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    cases = (
        (name, corral.compile(plain(), vocab, cache=False), corral.compile(checked(), vocab, cache=False), tok.encode(doc))
        for name, (checked, plain, doc) in CASES.items()
    )
    rows, raw = compare_rows(cases, width, REPEATS)
    write_results(out, "json_regions", lines + rows, raw)


if __name__ == "__main__":
    main()
