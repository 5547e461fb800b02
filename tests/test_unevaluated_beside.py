"""`unevaluatedProperties` beside in-place applicators: where they evaluate properties
unconditionally (`allOf`, `$ref`, at any depth) it applies to the keys none of them, nor
the schema's own `properties` and `patternProperties`, evaluate, as `additionalProperties`
over their union would (docker-compose's `service`: `allOf` of two `$ref`s; OpenAPI 3.1's
root: a `$ref` to `^x-` patterns beside `anyOf` of `required`); where they evaluate in some
branches only (`anyOf`, `oneOf`, `if`/`then`/`else`, `dependentSchemas`), to the keys the
branches a value takes leave (OpenAPI 3.1's `parameter`).
The oracle is ``jsonschema``: every object of a small universe is matched by corral
exactly when it is valid, in any key order.
"""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

import corral

VALUES = [1, "s", None]
KEYS = ["x", "p", "q1", "z", "x-a"]


def universe() -> list:
    out: list = [{}, 1]
    for n in (1, 2):
        for chosen in itertools.combinations(KEYS, n):
            for values in itertools.product(VALUES, repeat=n):
                out.append(dict(zip(chosen, values, strict=True)))
    return out


DEFS = {
    "a": {"properties": {"p": {"type": "integer"}}},
    "b": {"patternProperties": {"^q": {"type": "string"}}},
    "ext": {"patternProperties": {"^x-": {}}},
    "nested": {"allOf": [{"$ref": "#/$defs/a"}]},
    "open": {"additionalProperties": {"type": ["integer", "string"]}},
}
SCHEMAS = [
    # docker-compose: allOf of references, own properties beside.
    {"$defs": DEFS, "allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], "properties": {"x": {}}, "unevaluatedProperties": False},
    # OpenAPI 3.1: anyOf of required (evaluates nothing), a $ref to extension patterns.
    {"$defs": DEFS, "$ref": "#/$defs/ext", "anyOf": [{"required": ["p"]}, {"required": ["x"]}], "properties": {"p": {}, "x": {}}, "unevaluatedProperties": False},
    # Nested allOf through a $ref; unevaluatedProperties a schema.
    {"$defs": DEFS, "$ref": "#/$defs/nested", "unevaluatedProperties": {"type": "string"}},
    # An additionalProperties reached in place evaluates every key: unevaluated* is a no-op.
    {"$defs": DEFS, "allOf": [{"$ref": "#/$defs/open"}], "unevaluatedProperties": False},
    # Negated (a `oneOf` branch, a `not`).
    {"$defs": DEFS, "type": "object", "not": {"allOf": [{"$ref": "#/$defs/a"}], "unevaluatedProperties": False}},
    {"$defs": DEFS, "oneOf": [{"$ref": "#/$defs/b", "unevaluatedProperties": False}, {"required": ["q1"]}]},
    # Branches: what each evaluates counts where it holds.
    {"anyOf": [{"properties": {"x": {"type": "integer"}}}, {"required": ["p"]}], "unevaluatedProperties": False},
    {"anyOf": [{"properties": {"x": {"type": "integer"}}, "required": ["x"]}, {"$ref": "#/$defs/b", "required": ["q1"]}], "$defs": DEFS, "unevaluatedProperties": False},
    {"oneOf": [{"properties": {"x": {"type": "integer"}}, "required": ["x"]}, {"properties": {"p": {}}}], "unevaluatedProperties": {"type": "string"}},
    {"if": {"properties": {"x": {"const": 1}}, "required": ["x"]}, "then": {"$ref": "#/$defs/ext"}, "else": {"properties": {"z": {}}}, "$defs": DEFS, "unevaluatedProperties": False},
    {"dependentSchemas": {"p": {"properties": {"z": {"type": "string"}}}}, "properties": {"p": {}}, "unevaluatedProperties": False},
    {"if": {"properties": {"p": {"type": "integer"}}}, "unevaluatedProperties": False},
]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_matches_agree_with_jsonschema(byte_vocab, index):
    schema = SCHEMAS[index]
    grammar = corral.Grammar.json_schema(schema, spec_exact=True, property_order="any")
    compiled = corral.compile(grammar, byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    seen = {True: 0, False: 0}
    for doc in universe():
        valid = validator.is_valid(doc)
        seen[valid] += 1
        spellings = [dict(p) for p in itertools.permutations(doc.items())] if isinstance(doc, dict) else [doc]
        for spelled in spellings:
            text = json.dumps(spelled, separators=(",", ":")).encode()
            assert compiled.matches(text) == valid, (schema, text, valid)
    assert seen[True] >= 3 and seen[False] >= 3, seen


def test_what_the_outermost_declaration_decides_is_exact(byte_vocab):
    # The root declares `d` itself: on every way in, its `d` is the outermost.
    defs = {"d": {"$dynamicAnchor": "d", "properties": {"x": {"type": "integer"}}}, "e": {"$id": "e", "$dynamicAnchor": "d"}}
    schema = {"$defs": defs, "$dynamicRef": "#d", "unevaluatedProperties": False}
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True, property_order="any"), byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    seen = {True: 0, False: 0}
    for doc in universe():
        seen[validator.is_valid(doc)] += 1
        assert compiled.matches(json.dumps(doc, separators=(",", ":")).encode()) == validator.is_valid(doc), doc
    assert seen[True] >= 3 and seen[False] >= 3, seen


def test_what_a_dynamic_scope_decides_is_refused_and_strict_false_widens(byte_vocab):
    # `base`'s `d` is its own entered directly, `alt`'s entered through `alt`.
    defs = {
        "base": {"$id": "base", "$dynamicRef": "#d", "unevaluatedProperties": False, "$defs": {"d": {"$dynamicAnchor": "d", "properties": {"x": {"type": "integer"}}}}},
        "alt": {"$id": "alt", "$ref": "base", "$defs": {"d": {"$dynamicAnchor": "d", "properties": {"p": {"type": "string"}}}}},
    }
    schema = {"$defs": defs, "anyOf": [{"$ref": "base"}, {"$ref": "alt"}]}
    with pytest.raises(corral.UnsupportedSchemaError, match="depends on the way"):
        corral.Grammar.json_schema(schema)
    with pytest.warns(corral.SchemaWarning):
        loose = corral.Grammar.json_schema(schema, strict=False, spec_exact=True)
    compiled = corral.compile(loose, byte_vocab)
    valid = [doc for doc in universe() if jsonschema.Draft202012Validator(schema).is_valid(doc)]
    assert len(valid) >= 3
    for doc in valid:
        assert compiled.matches(json.dumps(doc, separators=(",", ":")).encode()), doc


def test_in_the_schemas_order_the_names_read_in_place_come_before_the_own(byte_vocab):
    # Keywords are read in the schema's order (a `$ref` first): `allOf` before
    # `properties` puts its members' names first, in their order, then the object's own.
    defs = {"a": {"properties": {"p": {"type": "integer"}}}, "b": {"properties": {"r": {"type": "string"}}}}
    schema = {"$defs": defs, "allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], "properties": {"x": {}}, "unevaluatedProperties": False}
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    assert compiled.matches(b'{"p":1,"r":"s","x":1}') and compiled.matches(b'{"r":"s","x":1}')
    assert not compiled.matches(b'{"x":1,"p":1}') and not compiled.matches(b'{"r":"s","p":1}')
    assert not compiled.matches(b'{"p":1,"q":1}')
