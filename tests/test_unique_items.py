"""`uniqueItems`: arrays whose items come from a finite set of values keep them distinct.

The oracle is the language itself: for a schema whose arrays are made of a few values,
every valid document (in corral's compact layout) is listed by ``itertools``, and at every
step of random walks the mask must allow exactly the tokens after which the text is still
the start of one of them (EOS exactly where it is one). Every document listed is checked
with ``jsonschema`` first, and so is every walk's completion.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any, Literal

import jsonschema
import numpy as np
import pydantic
import pytest

import corral


def distinct_arrays(values: list[Any], lo: int = 0, hi: int | None = None) -> list[list[Any]]:
    """Every array of distinct members of `values`, in every order, lo to hi items."""
    top = len(values) if hi is None else min(hi, len(values))
    return [list(p) for n in range(lo, top + 1) for p in itertools.permutations(values, n)]


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# (schema, every valid document): the documents are listed independently of corral.
CASES: list[tuple[dict, list[Any]]] = [
    # "a" is a prefix of "ab": after ["ab", a new item may still start with "a".
    (
        {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "ab", "b"]}},
        distinct_arrays(["a", "ab", "b"]),
    ),
    (
        {"type": "array", "uniqueItems": True, "minItems": 1, "maxItems": 3, "items": {"enum": [{"k": "1"}, {"k": "2"}, None, True]}},
        distinct_arrays([{"k": "1"}, {"k": "2"}, None, True], 1, 3),
    ),
    # Two arrays in one object, each with its own items.
    (
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "uniqueItems": True, "items": {"enum": ["x", "xy"]}},
                "on": {"type": "array", "uniqueItems": True, "items": {"type": "boolean"}, "minItems": 1},
            },
            "required": ["tags", "on"],
            "additionalProperties": False,
        },
        [{"tags": t, "on": o} for t in distinct_arrays(["x", "xy"]) for o in distinct_arrays([False, True], 1)],
    ),
    # Arrays of distinct-item arrays: the outer one may repeat, the inner ones may not.
    (
        {"type": "array", "maxItems": 2, "items": {"type": "array", "uniqueItems": True, "items": {"enum": ["p", "q"]}}},
        [list(outer) for n in range(3) for outer in itertools.product(distinct_arrays(["p", "q"]), repeat=n)],
    ),
]

ALPHABET = b'[]{}",:aAbkpqxy12nulltruefalse'


def vocabulary(documents: list[bytes], seed: int) -> corral.Vocabulary:
    """Every byte, plus random pieces of the documents (so tokens cross item boundaries)."""
    rng = random.Random(seed)
    tokens = {bytes([b]) for b in range(256)}
    for d in documents:
        for _ in range(4):
            i = rng.randrange(len(d))
            tokens.add(d[i : i + rng.randint(2, 7)])
    ordered = sorted(tokens)
    return corral.Vocabulary.from_token_bytes([*ordered, None], eos_token_ids=[len(ordered)])


def mask_ids(matcher: corral.Matcher, size: int) -> set[int]:
    mask = corral.allocate_bitmask(1, size)
    matcher.fill_bitmask(mask, 0)
    bits = np.unpackbits(mask[0].view(np.uint8), bitorder="little")[:size]
    return {int(i) for i in np.flatnonzero(bits)}


@pytest.mark.parametrize("case", range(len(CASES)))
def test_masks_equal_the_listed_language(case):
    schema, values = CASES[case]
    for v in values:
        jsonschema.validate(v, schema)
    documents = [dump(v) for v in values]
    prefixes = {d[:i] for d in documents for i in range(len(d) + 1)}
    complete = set(documents)
    vocab = vocabulary(documents, case)
    compiled = corral.compile(corral.Grammar.json_schema(schema), vocab)
    eos = vocab.eos_token_ids[0]
    pieces = {t: vocab.token_bytes(t) for t in range(vocab.size) if t != eos and vocab.token_bytes(t)}
    rng = random.Random(case)
    for _ in range(12):
        m = compiled.matcher()
        text = b""
        while True:
            want = {t for t, b in pieces.items() if text + b in prefixes}
            if text in complete:
                want.add(eos)
            got = mask_ids(m, vocab.size)
            assert got == want, (schema, text, sorted(vocab.token_bytes(t) or b"<eos>" for t in got ^ want)[:8])
            if eos in got and (rng.random() < 0.2 or got == {eos}):
                break
            t = rng.choice(sorted(got - {eos}))
            assert m.advance(t)
            text += pieces[t]
        jsonschema.validate(json.loads(text), schema)


def test_duplicates_are_refused_exactly_where_they_complete():
    schema = {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "ab", 1, 1.0, {"k": [1, 2]}]}}
    compiled = corral.compile(corral.Grammar.json_schema(schema), vocabulary([], 0))
    for fresh, dup in [(b'["ab","a', b'["ab","ab'), (b"[1,", b"[1,1"), (b'[{"k":[1,2]},', b'[{"k":[1,2]},{"k":[1,2]}')]:
        assert compiled.matches(fresh + (b'"]' if fresh.endswith(b"a") else b'"a"]'))
        assert not compiled.matches(dup + (b'"]' if dup.endswith(b"b") else b"]"))
    # `1` and `1.0` are one member: once `1` is written, the array holds no other number.
    assert not compiled.matches(b"[1,1]")
    assert compiled.matches(b'[1,"a"]')


def test_free_items_are_refused_with_a_pointer_and_dropped_when_not_strict():
    schema = {"properties": {"ids": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == "/properties/ids/uniqueItems"
    assert "finite set" in str(info.value)
    with pytest.warns(corral.SchemaWarning, match="uniqueItems"):
        loose = corral.Grammar.json_schema(schema, strict=False)
    # Dropped, the keyword widens the grammar: repeated items are allowed.
    vocab = vocabulary([], 0)
    assert corral.compile(loose, vocab).matches(b'{"ids":["a","a"]}')


def test_a_pydantic_set_of_literals_keeps_its_items_distinct():
    class Flags(pydantic.BaseModel):
        colors: set[Literal["red", "green", "blue"]]

    compiled = corral.compile(corral.Grammar.json_schema(Flags), vocabulary([], 0))
    assert compiled.matches(b'{"colors":["green","red"]}')
    assert not compiled.matches(b'{"colors":["red","red"]}')
