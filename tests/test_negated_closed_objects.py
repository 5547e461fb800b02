"""Negating `additionalProperties`, where the object names every key it allows and where it does not.

`oneOf` between closed objects (`additionalProperties: false` beside `properties`) is the
common case in configuration schemas: where no proof shows the branches disjoint, each
branch is read with the others negated, and "some key other than the named ones" is
spelled out over the keys the branch names. The oracle is ``jsonschema``: every object
of a small universe (each subset of a few keys, each with a few values) must be matched
by corral exactly when it is valid.
"""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

import corral

VALUES = [1, 1.5, "x", ["a"], [], {}, True]


def universe(keys: list[str]) -> list[dict]:
    """Every object over subsets of `keys` (at most three of them), each key with each value."""
    out: list[dict] = [{}]
    for n in (1, 2, 3):
        for chosen in itertools.combinations(keys, n):
            for values in itertools.product(VALUES, repeat=n):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


CLOSED = {"type": "object", "additionalProperties": False}
SCHEMAS = [
    # Two closed objects with disjoint optional keys: `{}` obeys both.
    {
        "oneOf": [
            {**CLOSED, "properties": {"except": {"type": "array", "items": {"type": "string"}}}},
            {**CLOSED, "properties": {"only": {"type": "array", "items": {"type": "string"}}}},
        ]
    },
    # A shared key, told apart by its value and by another key.
    {
        "oneOf": [
            {**CLOSED, "properties": {"order": {"const": "x"}, "legacy": {"type": "object"}}},
            {**CLOSED, "properties": {"order": {"type": "string"}}},
        ]
    },
    # Three branches, one of them an integer-or-number overlap.
    {
        "oneOf": [
            {**CLOSED, "properties": {"a": {"type": "integer"}}},
            {**CLOSED, "properties": {"a": {"type": "number"}, "b": {}}},
            {**CLOSED, "properties": {"b": {"type": "array"}}, "required": ["b"]},
        ]
    },
    # `not` of an additionalProperties schema inside a closed object.
    {
        **CLOSED,
        "properties": {"a": {}, "b": {}, "c": {}},
        "not": {"properties": {"a": {}}, "additionalProperties": {"type": "number"}},
    },
]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@pytest.mark.parametrize("order", ["schema", "any"])
def test_matches_agree_with_jsonschema(byte_vocab, index, order):
    schema = SCHEMAS[index]
    compiled = corral.compile(corral.Grammar.json_schema(schema, property_order=order), byte_vocab)
    keys = sorted({k for text in [json.dumps(schema)] for k in ("a", "b", "c", "except", "only", "order", "legacy") if f'"{k}"' in text})
    checked = 0
    for doc in universe(keys):
        valid = jsonschema.Draft202012Validator(schema).is_valid(doc)
        orders = [dict(p) for p in itertools.permutations(doc.items())] if order == "any" else [doc]
        for spelled in orders:
            text = json.dumps(spelled, separators=(",", ":")).encode()
            # In schema order, corral writes named keys in the schema's order only.
            if order == "schema" and not _in_schema_order(spelled, schema):
                continue
            assert compiled.matches(text) == valid, (schema, text, valid)
            checked += 1
    assert checked >= 10


def _in_schema_order(doc: dict, schema: dict) -> bool:
    """Are `doc`'s keys in the order some branch of `schema` lists them?"""
    branches = schema.get("oneOf", [schema])
    for b in branches:
        names = list(b.get("properties", {}))
        if all(k in names for k in doc) and [k for k in names if k in doc] == list(doc):
            return True
    return False


OPEN_SCHEMAS = [
    # A closed branch against one open to other keys: `{"a": 1}` obeys both.
    {"oneOf": [{**CLOSED, "properties": {"a": {"type": "integer"}}}, {"type": "object", "properties": {"a": {"type": "number"}}}]},
    # "Some key breaks additionalProperties", no key named.
    {"type": "object", "not": {"additionalProperties": {"type": "number"}}},
    # A dict of arrays against a closed object that requires its key.
    {
        "oneOf": [
            {**CLOSED, "required": ["a"], "properties": {"a": {"type": "array"}, "b": {"type": "number"}}},
            {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "array", "items": {"type": "string"}}},
        ]
    },
    # An if on an open object's other keys, with counts.
    {
        "type": "object",
        "minProperties": 1,
        "if": {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        "then": {"maxProperties": 2},
        "else": {"required": ["c"]},
    },
]


@pytest.mark.parametrize("index", range(len(OPEN_SCHEMAS)))
def test_open_objects_agree_with_jsonschema(byte_vocab, index):
    # `spec_exact`: objects stay open to the keys their schema does not name; any order.
    schema = OPEN_SCHEMAS[index]
    grammar = corral.Grammar.json_schema(schema, spec_exact=True, property_order="any")
    compiled = corral.compile(grammar, byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    valid_seen = invalid_seen = 0
    for doc in universe(["a", "b", "c"]):
        valid = validator.is_valid(doc)
        valid_seen += valid
        invalid_seen += not valid
        for spelled in (dict(p) for p in itertools.permutations(doc.items())):
            text = json.dumps(spelled, separators=(",", ":")).encode()
            assert compiled.matches(text) == valid, (schema, text, valid)
    assert valid_seen >= 5 and invalid_seen >= 5


def test_where_other_keys_are_allowed_the_oneof_is_exact_and_named(byte_vocab):
    # In the specification's language the second branch is open to other keys.
    schema = OPEN_SCHEMAS[0]
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True), byte_vocab)
    assert compiled.matches(b'{"a":1.5}') and compiled.matches(b'{"b":[]}') and compiled.matches(b'{"a":1.5,"b":1}')
    assert not compiled.matches(b'{"a":1}') and not compiled.matches(b"{}")
    # By default that branch is closed to its named keys (what a model should write), and
    # the oneOf is exact there.
    default = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    assert default.matches(b'{"a":1.5}') and not default.matches(b'{"a":1}') and not default.matches(b"{}")
    assert not default.matches(b'{"b":[]}')


def test_a_second_negated_open_class_on_one_object_is_exact(byte_vocab):
    # One key breaking both, or one key for each (tests/test_negated_open_twice.py has more).
    schema = {
        "type": "object",
        "not": {"additionalProperties": {"type": "number"}},
        "allOf": [{"not": {"additionalProperties": {"type": "string"}}}],
    }
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True, property_order="any"), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    seen = {True: 0, False: 0}
    for doc in universe(["a", "b"]):
        valid = validator.is_valid(doc)
        seen[valid] += 1
        assert compiled.matches(json.dumps(doc, separators=(",", ":")).encode()) == valid, doc
    assert seen[True] >= 3 and seen[False] >= 3, seen


@pytest.mark.parametrize("index", range(len(OPEN_SCHEMAS)))
@pytest.mark.parametrize("order", ["schema", "any"])
def test_sampled_open_objects_are_valid(index, order):
    # Documents drawn from the grammar (each alternative, each count) obey the schema.
    schema = OPEN_SCHEMAS[index]
    grammar = corral.Grammar.json_schema(schema, spec_exact=True, property_order=order)
    validator = jsonschema.Draft202012Validator(schema)
    drawn = 0
    for seed in range(80):
        data = grammar._inner.sample(seed, 24)
        if data is None:
            continue
        doc = json.loads(data)
        assert validator.is_valid(doc), (schema, data)
        drawn += 1
    assert drawn >= 40


def test_indented_output_needs_the_breaking_member(byte_vocab):
    schema = {"type": "object", "not": {"additionalProperties": {"type": "integer"}}}
    compiled = corral.compile(corral.Grammar.json_schema(schema, indent=2), byte_vocab)
    for doc, valid in [({}, False), ({"a": 1}, False), ({"a": "x"}, True), ({"a": 1, "b": "x"}, True)]:
        assert compiled.matches(json.dumps(doc, indent=2).encode()) == valid, doc
