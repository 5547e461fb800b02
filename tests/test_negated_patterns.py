"""Negating `patternProperties`, `propertyNames`, and `properties` or `additionalProperties`
beside patterns (inside `not`, a `oneOf` branch, an `if`).

Each is "some key of a kind is present with a value that breaks a subschema": a key a
pattern matches, a key outside the named ones and every pattern, a key `propertyNames`
refuses. The oracle is ``jsonschema``: every object of a small universe of keys and values
(and a few non-objects) is matched by corral exactly when it is valid, in any key order.
"""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

import corral

VALUES = [1, "x", None, {}]
KEYS = [".", "./a", "req", "bx", "types@1", "k9", "abc"]


def universe() -> list:
    """Every object over at most two of KEYS with each value, and a few other values."""
    out: list = [{}, 1, "s", [], None]
    for n in (1, 2):
        for chosen in itertools.combinations(KEYS, n):
            for values in itertools.product(VALUES, repeat=n):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


ENTRY = {"oneOf": [{"type": "string", "pattern": "^\\./"}, {"type": "object"}]}
SCHEMAS = [
    # package.json's `exports`: closed objects told apart by the patterns of their keys;
    # `{}` obeys both, so each excludes the other.
    {
        "oneOf": [
            {"type": "string"},
            {"type": "object", "properties": {".": ENTRY}, "patternProperties": {"^\\./.+": ENTRY}, "additionalProperties": False},
            {"type": "object", "properties": {"req": ENTRY}, "patternProperties": {"^[^.0-9]+$": ENTRY, "^types@.+$": ENTRY}, "additionalProperties": False},
        ]
    },
    # Not patternProperties: an object with a key a pattern matches whose value breaks it.
    {"not": {"patternProperties": {"^b": {"type": "integer"}, "^k": {"type": ["integer", "null"]}}}},
    # Not additionalProperties beside patterns and names: a key outside both breaks it.
    {"type": "object", "not": {"properties": {"req": {}}, "patternProperties": {"^[a-c]": {}}, "additionalProperties": {"type": "string"}}},
    # Not propertyNames: some key it refuses.
    {"not": {"propertyNames": {"maxLength": 2}}},
    {"not": {"propertyNames": {"enum": ["req", "bx"]}}},
    # Properties negated beside patterns (a named key that also matches a pattern obeys
    # both in the positive reading).
    {"oneOf": [{"properties": {"bx": {"type": "integer"}}, "patternProperties": {"^b": {"type": ["integer", "string"]}}}, {"required": ["bx"]}]},
    # vega's FieldRef: an open object that requires `signal` beside closed objects of
    # other names (told apart without negation: the closed ones cannot have `signal`).
    {
        "oneOf": [
            {"type": "object", "properties": {"req": {"type": "string"}}, "required": ["req"]},
            {"type": "object", "properties": {"bx": {}}, "required": ["bx"], "additionalProperties": False},
            {"type": "object", "properties": {"k9": {}, "abc": {"type": "integer"}}, "required": ["k9"], "additionalProperties": False},
        ]
    },
    # Two negated closed objects on one object that requires a key neither names: each
    # "a key outside these names" holds at once, so neither is left to the open keys.
    {
        "type": "object",
        "required": ["req"],
        "not": {"properties": {"bx": {}}, "additionalProperties": False},
        "allOf": [{"not": {"properties": {"k9": {}}, "additionalProperties": False}}],
    },
    # if/then/else over patterns.
    {"if": {"patternProperties": {"^k": {"type": "integer"}}}, "then": {"required": ["req"]}, "else": {"maxProperties": 1}},
]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@pytest.mark.parametrize("spec_exact", [True, False])
def test_matches_agree_with_jsonschema(byte_vocab, index, spec_exact):
    schema = SCHEMAS[index]
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=spec_exact, property_order="any"), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    seen = {True: 0, False: 0}
    for doc in universe():
        valid = validator.is_valid(doc)
        if not spec_exact and isinstance(doc, dict) and valid:
            # By default objects are closed to keys their schema does not name: a valid
            # object may be left out; an invalid one never let in.
            texts = [json.dumps(dict(p), separators=(",", ":")) for p in itertools.permutations(doc.items())]
            if not any(compiled.matches(t.encode()) for t in texts):
                continue
        seen[valid] += 1
        spellings = itertools.permutations(doc.items()) if isinstance(doc, dict) else [None]
        for p in spellings:
            text = json.dumps(doc if p is None else dict(p), separators=(",", ":"))
            assert compiled.matches(text.encode()) == valid, (schema, text, valid)
    assert seen[True] >= 3 and seen[False] >= 3, seen


def test_package_exports_compiles_and_writes_valid_objects():
    schema = SCHEMAS[0]
    grammar = corral.Grammar.json_schema(schema, spec_exact=True)
    for seed in range(40):
        doc = json.loads(grammar._inner.sample(seed, 60))
        jsonschema.validate(doc, schema)
