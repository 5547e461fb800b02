"""Classes of an object's other keys under many and overlapping `patternProperties`.

A key may match several patterns (unanchored ones overlap freely); its value must then
obey every matching pattern's subschema. corral splits the keys by each pattern and merges
the classes whose values obey the same subschemas, so the number of classes is the number
of different constraints, not 2ⁿ. The oracle is ``jsonschema``: every object of a small
universe of keys and values is matched by corral exactly when it is valid.
"""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

import corral

VALUES = [0, 3, 7, "x", None, {}]


def universe(keys: list[str]) -> list[dict]:
    """Every object over at most two of `keys`, each with each value."""
    out: list[dict] = [{}]
    for n in (1, 2):
        for chosen in itertools.combinations(keys, n):
            for values in itertools.product(VALUES, repeat=n):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


SUBSTRINGS = ["block.", "view.", "form.", "field.", "user.", "role.", "menu.", "node.", "text."]

SCHEMAS = [
    # Nine unanchored patterns, each referring to one definition: a key holding several
    # substrings obeys it once. 2 classes, where the subsets of patterns are 512.
    (
        {
            "type": "object",
            "$defs": {"action": {"type": "integer", "minimum": 3}},
            "patternProperties": {s.replace(".", "\\."): {"$ref": "#/$defs/action"} for s in SUBSTRINGS},
            "additionalProperties": False,
        },
        ["block.x", "view.form.", "user.role.node.", "x", "text", "menu.block.field."],
    ),
    # Overlapping patterns with different subschemas: a key matching both obeys both.
    (
        {
            "type": "object",
            "patternProperties": {"a": {"type": "integer"}, "b": {"minimum": 5}, "^c": {"type": ["integer", "string"]}},
            "additionalProperties": {"type": "null"},
        },
        ["a", "b", "ab", "ba", "cab", "c", "x"],
    ),
    # More patterns than the default bound of four before classes were merged, anchored
    # and disjoint, beside named properties and across two clauses (allOf).
    (
        {
            "allOf": [
                {"type": "object", "patternProperties": {f"^k{i}_": {"maximum": i} for i in range(6)}},
                {"properties": {"k1_a": {"const": 0}}, "patternProperties": {"_z$": {"type": "integer"}}},
            ],
        },
        ["k1_a", "k2_b", "k5_z", "k3_", "z_z", "q"],
    ),
]


@pytest.mark.parametrize("schema,keys", SCHEMAS, ids=["one-definition", "overlapping", "many-anchored"])
def test_objects_match_exactly_when_valid(schema, keys, byte_vocab):
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    wrong = []
    for doc in universe(keys):
        text = json.dumps(doc, separators=(",", ":"))
        if compiled.matches(text.encode()) != validator.is_valid(doc):
            wrong.append(text)
    assert not wrong, wrong[:10]


def test_classes_past_the_limit_name_it():
    # Three overlapping patterns with different subschemas: 8 classes.
    schema = {"type": "object", "patternProperties": {c: {"minimum": i} for i, c in enumerate("abc")}}
    corral.Grammar.json_schema(schema)
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema(schema, limits=corral.Limits(max_key_classes=7))
    assert "Limits.max_key_classes" in str(info.value) and info.value.pointer.startswith("/patternProperties/")


def test_many_unanchored_patterns_sharing_a_definition(byte_vocab):
    # Two classes however many patterns: the classes' automata are renamed as they are
    # split and merged (a name that nests both parts' names doubled at every pattern, and
    # 32 patterns ran out of time).
    schema = {
        "type": "object",
        "$defs": {"d": {"type": "integer"}},
        "patternProperties": {f"k{i}x": {"$ref": "#/$defs/d"} for i in range(32)},
        "additionalProperties": {"type": "string"},
    }
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    for doc in ({"ak3xk31x": 1}, {"ak3xk31x": "s"}, {"k9": "s"}, {"k9": 1}, {"-k17x-": 2, "z": "y"}):
        text = json.dumps(doc, separators=(",", ":")).encode()
        assert compiled.matches(text) == validator.is_valid(doc), doc


def test_two_schemas_joined_keep_their_own_key_classes(byte_vocab):
    # Each schema's classes are automata built step by step; joined in one grammar, two
    # classes of the same name would stand for one language.
    def schema(c: str, other: str) -> dict:
        bounds = [{"type": "integer"}, {"minimum": 5}, {"maximum": 9}, {"multipleOf": 2}]
        return {"type": "object", "patternProperties": {f"{c}{i}": b for i, b in enumerate(bounds)}, "additionalProperties": {"type": other}}

    a, b = schema("a", "string"), schema("b", "null")
    joined = corral.Grammar.json_schema(a, spec_exact=True) | corral.Grammar.json_schema(b, spec_exact=True)
    compiled = corral.compile(joined, byte_vocab)
    va, vb = jsonschema.Draft202012Validator(a), jsonschema.Draft202012Validator(b)
    for doc in ({"b0b1b2b3": 6}, {"b0b1b2b3": 8}, {"b0b1b2b3": 10}, {"a0a1a2a3": 6}, {"b2b3": 7}, {"a1b2": 6}, {"x": None}, {"x": "s"}):
        text = json.dumps(doc, separators=(",", ":")).encode()
        assert compiled.matches(text) == (va.is_valid(doc) or vb.is_valid(doc)), doc
