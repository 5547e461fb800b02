"""`uniqueItems` inside `not`, a `oneOf` branch or an `if`: "two items are equal".

The matcher keeps items distinct but does not ask for a repeat, so the negation is exact
where the rest of the shape contradicts it (a `uniqueItems` beside it, at most one item)
and refused elsewhere, with `strict=False` widening. The oracle is ``jsonschema``.
"""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

import corral

ITEMS = [1, 2, "a"]


def arrays(longest: int = 3) -> list:
    return [list(p) for n in range(longest + 1) for p in itertools.product(ITEMS, repeat=n)]


# stylelint's `indentation`: arrays of distinct integers, or pairs of distinct integers or
# strings; a pair of distinct integers obeys both, so each branch excludes the other, and
# the "two equal items" alternative is contradicted by the branch's own uniqueItems.
PAIRS = {
    "oneOf": [
        {"type": "integer"},
        {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "integer"}},
        {"type": "array", "minItems": 2, "maxItems": 2, "uniqueItems": True, "items": {"type": ["integer", "string"]}},
    ]
}


def test_oneof_between_unique_arrays_is_exact(byte_vocab):
    compiled = corral.compile(corral.Grammar.json_schema(PAIRS), byte_vocab)
    validator = jsonschema.Draft202012Validator(PAIRS)
    seen = {True: 0, False: 0}
    for doc in arrays() + [1, "a"]:
        valid = validator.is_valid(doc)
        seen[valid] += 1
        assert compiled.matches(json.dumps(doc, separators=(",", ":")).encode()) == valid, (doc, valid)
    assert seen[True] >= 5 and seen[False] >= 5


def test_a_repeat_in_an_array_of_at_most_one_item_is_no_value():
    with pytest.raises(corral.EmptyLanguageError):
        corral.Grammar.json_schema({"type": "array", "maxItems": 1, "not": {"uniqueItems": True}})


def test_where_nothing_contradicts_it_the_negation_is_refused_and_strict_false_widens(byte_vocab):
    schema = {"type": "array", "items": {"type": "integer"}, "not": {"uniqueItems": True}}
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.keyword == "uniqueItems" and info.value.pointer == "/not/uniqueItems"
    with pytest.warns(corral.SchemaWarning):
        loose = corral.Grammar.json_schema(schema, strict=False)
    compiled = corral.compile(loose, byte_vocab)
    # Every valid document is accepted (wider: [1,2] is too).
    assert compiled.matches(b"[1,1]") and compiled.matches(b"[2,1,2]")
    assert not compiled.matches(b'["a","a"]')
