"""What Grammar.json_schema writes by default, and what spec_exact=True changes.

By default an object whose schema names keys and says nothing of others is closed to those
keys, and integers have no fraction: output a model can finish. ``spec_exact=True`` gives
the JSON Schema language exactly (``jsonschema`` is the oracle there). Every default
document is also valid under the specification (checked on sampled sentences).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

import corral


def compiled(schema, vocab, **options):
    return corral.compile(corral.Grammar.json_schema(schema, **options), vocab)


def accepts(c, value) -> bool:
    return c.matches(json.dumps(value, separators=(",", ":")).encode())


@pytest.mark.parametrize(
    "schema,inside,outside",
    [
        # Named properties, nothing said of other keys: closed to the names.
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}], [{"a": 1, "b": 2}, {"b": 2}]),
        # `required` names a key too.
        ({"type": "object", "required": ["a"]}, [{"a": [1]}], [{"a": 1, "b": 2}, {}]),
        # Names from every branch of an allOf close the object together.
        ({"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}], "type": "object"}, [{"a": 1, "b": 2}], [{"c": 1}]),
        # Closed at every depth.
        ({"type": "object", "properties": {"p": {"type": "object", "properties": {"q": {"type": "null"}}}}}, [{"p": {"q": None}}], [{"p": {"q": None, "r": 1}}]),
        # Said explicitly: honoured as written.
        ({"type": "object", "properties": {"a": {}}, "additionalProperties": True}, [{"a": 1, "b": 2}], []),
        ({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}}, [{"a": 1, "b": "x"}], [{"a": 1, "b": 2}]),
        ({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": {"type": "null"}}, [{"a": 1, "b": None}], [{"b": 1}]),
        # patternProperties speaks of other keys: the rest stays open, as the spec says.
        ({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {"type": "null"}}}, [{"a": 1, "x1": None, "y": 2}], [{"x1": 1}]),
        # No key named at all: closing would leave only {}, so it stays open.
        ({"type": "object"}, [{}, {"x": [1, {"y": None}]}], []),
        # Integers without a fraction.
        ({"type": "integer"}, [0, -7, 10**30], []),
    ],
)
def test_default_language(byte_vocab, schema, inside, outside):
    c = compiled(schema, byte_vocab)
    validator = jsonschema.Draft202012Validator(schema)
    for value in inside:
        assert validator.is_valid(value) and accepts(c, value), value
    for value in outside:
        assert not accepts(c, value), value


@pytest.mark.parametrize("text", [b"1.0", b"-3.00", b'{"n":2.0}'])
def test_integers_have_no_fraction_unless_spec_exact(byte_vocab, text):
    schema = {"anyOf": [{"type": "integer"}, {"type": "object", "properties": {"n": {"type": "integer"}}}]}
    assert not compiled(schema, byte_vocab).matches(text)
    assert compiled(schema, byte_vocab, spec_exact=True).matches(text)
    # Draft 4 counts 1.0 as a number, not an integer, even when spec_exact.
    draft4 = dict(schema, **{"$schema": "http://json-schema.org/draft-04/schema#"})
    assert not compiled(draft4, byte_vocab, spec_exact=True).matches(text)


def test_spec_exact_allows_other_keys_like_the_specification(byte_vocab):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    validator = jsonschema.Draft202012Validator(schema)
    c = compiled(schema, byte_vocab, spec_exact=True)
    # (Named keys come first in property_order="schema".)
    for value in [{"a": 1}, {"a": 1, "b": [None]}, {"a": 2, "b": 1, "c": {}}, {"b": 1}]:
        assert accepts(c, value) == validator.is_valid(value), value


def test_a_pydantic_model_never_gets_a_fraction(byte_vocab):
    from pydantic import BaseModel

    class Item(BaseModel):
        count: int

    for spec_exact in (False, True):
        c = compiled(Item, byte_vocab, spec_exact=spec_exact)
        assert accepts(c, {"count": 3}) and not c.matches(b'{"count":3.0}')
    # Pydantic's default (extra="ignore") says nothing of other keys: closed by default.
    assert not accepts(compiled(Item, byte_vocab), {"count": 3, "other": 1})
    assert accepts(compiled(Item, byte_vocab, spec_exact=True), {"count": 3, "other": 1})


@pytest.mark.parametrize("options", [dict(whitespace="flexible"), dict(property_order="any"), dict(strict=False)])
def test_other_options_keep_working_with_spec_exact(byte_vocab, options):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    c = compiled(schema, byte_vocab, spec_exact=True, **options)
    assert accepts(c, {"a": 1, "b": "x", "z": None}) and c.matches(b'{"a":1.0}')
    d = compiled(schema, byte_vocab, **options)
    assert not accepts(d, {"a": 1, "b": "x", "z": None}) and not d.matches(b'{"a":1.0}')


def test_spec_exact_must_be_a_bool():
    with pytest.raises(TypeError, match="spec_exact"):
        corral.Grammar.json_schema({}, spec_exact="yes")


def test_default_documents_are_valid_under_the_specification():
    # The default language is a part of the specification's: sampled sentences validate.
    sys.path.insert(0, str(Path(__file__).parent))
    import test_json_schema as existing

    for schema in existing.SOUNDNESS_SCHEMAS:
        grammar = corral.Grammar.json_schema(schema)
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        for seed in range(20):
            text = grammar._inner.sample(seed, 48)
            if text is None:
                continue
            assert validator.is_valid(json.loads(text, parse_float=existing._exact_float)), (schema, text)


# --------------------------------------------------------------------- parsed results


@pytest.fixture(scope="module")
def model():
    from corral.models import BuiltinModel

    return BuiltinModel()


def test_parsed_gives_the_pydantic_instance(model):
    from pydantic import BaseModel, Field

    class Character(BaseModel):
        name: str = Field(max_length=12)
        age: int = Field(ge=0, le=120)

    result = corral.generate(model, "A character: ", corral.Grammar.json_schema(Character), max_tokens=120, seed=1)
    assert result.finished
    value = result.parsed
    assert isinstance(value, Character) and value.model_dump() == json.loads(result.text)
    # Combined with a ban, the JSON part still decides.
    both = corral.Grammar.json_schema(Character) & corral.Grammar.ban(["zz"])
    assert isinstance(corral.generate(model, "A character: ", both, max_tokens=120, seed=1).parsed, Character)


def test_parsed_gives_json_for_a_schema_and_typeadapter_values_for_a_type(model):
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    result = corral.generate(model, "", corral.Grammar.json_schema(schema), max_tokens=40, seed=0)
    assert result.parsed == json.loads(result.text) and set(result.parsed) == {"ok"}
    pairs = corral.generate(model, "", corral.Grammar.json_schema(tuple[bool, bool]), max_tokens=40, seed=0)
    assert pairs.parsed == tuple(json.loads(pairs.text)) and isinstance(pairs.parsed, tuple)


def test_parsed_refuses_an_incomplete_value_and_other_grammars(model):
    result = corral.generate(model, "", corral.Grammar.json_schema({"type": "array", "items": {"type": "integer"}}), max_tokens=3, seed=0)
    assert not result.accepting
    with pytest.raises(corral.IncompleteOutputError, match="max_tokens") as info:
        _ = result.parsed
    assert info.value.text == result.text and isinstance(info.value, corral.GenerationError)
    with pytest.raises(TypeError, match="json_schema"):
        _ = corral.generate(model, "", corral.Grammar.regex("a+"), max_tokens=3, seed=0).parsed
