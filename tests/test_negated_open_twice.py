"""Several negated `additionalProperties` on one object open to other keys.

Each negation requires a member: "some key outside these names has a value that breaks
this subschema". Two of them hold when one key breaks both, or when two keys break one
each, and the grammar offers both. The oracle is ``jsonschema``: every object over up to
three keys of a small universe is decided as it says, in any key order (or, in schema
order, in some order and never in a wrong one).
"""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

import corral

KEYS = ["a", "b", "c", "d"]
VALUES = [1, "x", None]


def universe() -> list:
    out: list = [{}, 1, "s", None]
    for n in (1, 2, 3):
        for chosen in itertools.combinations(KEYS, n):
            for values in itertools.product(VALUES, repeat=n):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


def closed(*names: str, **extra) -> dict:
    return {"properties": {n: {} for n in names}, "additionalProperties": False, **extra}


SCHEMAS = [
    # A key outside {a} and a key outside {b}: `c` alone does both, `a` and `b` do one each.
    {"type": "object", "not": closed("a"), "allOf": [{"not": closed("b")}]},
    # Three at once.
    {"type": "object", "allOf": [{"not": closed("a")}, {"not": closed("b")}, {"not": closed("c")}]},
    # Values: a key whose value is not an integer and one whose value is not a string (a
    # null does both).
    {"type": "object", "allOf": [{"not": {"additionalProperties": {"type": "integer"}}}, {"not": {"additionalProperties": {"type": "string"}}}]},
    # utam's selector: open branches of a oneOf, each closed to its own names, so each
    # branch negates the others.
    {
        "type": "object",
        "oneOf": [
            closed("a", required=["a"]),
            closed("b", required=["b"]),
            {"properties": {"c": {"type": "integer"}}, "required": ["c"]},
        ],
    },
    # Beside named properties the object keeps: the members may be named keys too.
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}, "allOf": [{"not": closed("a")}, {"not": closed("b")}]},
]


def accepted_orders(compiled, doc) -> list:
    if not isinstance(doc, dict):
        return [compiled.matches(json.dumps(doc).encode())]
    return [compiled.matches(json.dumps(dict(p), separators=(",", ":")).encode()) for p in itertools.permutations(doc.items())]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@pytest.mark.parametrize("order", ["any", "schema"])
def test_matches_agree_with_jsonschema(byte_vocab, index, order):
    schema = SCHEMAS[index]
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True, property_order=order), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    seen = {True: 0, False: 0}
    for doc in universe():
        valid = validator.is_valid(doc)
        seen[valid] += 1
        orders = accepted_orders(compiled, doc)
        if order == "any" or not valid:
            assert all(o == valid for o in orders), (schema, doc, valid)
        else:
            assert any(orders), (schema, doc)
    assert seen[True] >= 5 and seen[False] >= 5, seen


def test_random_walks_write_valid_objects(byte_vocab):
    schema = SCHEMAS[3]
    for order in ("any", "schema"):
        grammar = corral.Grammar.json_schema(schema, spec_exact=True, property_order=order)
        for seed in range(30):
            jsonschema.validate(json.loads(grammar._inner.sample(seed, 80)), schema)
