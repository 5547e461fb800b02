"""Several `contains` on one array, each with its counts, against ``jsonschema``.

Random small arrays of a few values are decided by the compiled grammar (``matches``, the
compact JSON text) and by ``jsonschema``; the two must agree on every one.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

import corral

VALUES = [0, 1, 5, 9, "a", "b", None, True, [1], {"k": 1}]

SCHEMAS = [
    {"allOf": [{"contains": {"const": "a"}}, {"contains": {"type": "integer", "minimum": 5}}]},
    {
        "type": "array",
        "allOf": [
            {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3},
            {"contains": {"type": "string"}, "maxContains": 1},
            {"contains": {"type": "null"}, "minContains": 0, "maxContains": 1},
        ],
    },
    {"maxItems": 4, "allOf": [{"contains": {"minimum": 5}}, {"contains": {"maximum": 5}}, {"contains": {"type": "object"}}]},
    {"items": {"not": {"type": "boolean"}}, "allOf": [{"contains": {"type": "array"}}, {"not": {"contains": {"const": 0}}}]},
]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_several_contains_agree_with_jsonschema(index, byte_vocab):
    schema = SCHEMAS[index]
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(index)
    seen = {True: 0, False: 0}
    for _ in range(600):
        array = [rng.choice(VALUES) for _ in range(rng.randint(0, 6))]
        want = validator.is_valid(array)
        text = json.dumps(array, separators=(",", ":")).encode()
        assert compiled.matches(text) == want, (schema, text)
        seen[want] += 1
    # Both sides of every schema were tried.
    assert seen[True] > 10 and seen[False] > 10, seen
