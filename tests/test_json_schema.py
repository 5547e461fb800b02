"""Grammar.json_schema: options, errors with JSON pointers, Pydantic, and soundness at scale."""

from __future__ import annotations

import json
import random
import warnings

import jsonschema
import pytest

import corral

COMPACT = dict(separators=(",", ":"), ensure_ascii=False)


def accepts(grammar, vocab, text: str) -> bool:
    return corral.compile(grammar, vocab).matches(text.encode())


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_compact_output_in_schema_order(byte_vocab):
    g = corral.Grammar.json_schema(PERSON)
    assert accepts(g, byte_vocab, '{"name":"Ann","age":30}')
    assert accepts(g, byte_vocab, '{"name":"Ann","age":30,"email":"a@b.co","tags":["a","c"]}')
    assert not accepts(g, byte_vocab, '{"age":30,"name":"Ann"}')  # schema order
    assert not accepts(g, byte_vocab, '{"name": "Ann","age":30}')  # compact
    assert not accepts(g, byte_vocab, '{"name":"Ann","age":151}')
    assert not accepts(g, byte_vocab, '{"name":"","age":1}')
    assert not accepts(g, byte_vocab, '{"name":"Ann"}')
    assert not accepts(g, byte_vocab, '{"name":"Ann","age":1,"x":1}')


def test_any_property_order(byte_vocab):
    g = corral.Grammar.json_schema(PERSON, property_order="any")
    assert accepts(g, byte_vocab, '{"age":30,"name":"Ann"}')
    assert accepts(g, byte_vocab, '{"tags":[],"age":30,"name":"Ann"}')
    assert not accepts(g, byte_vocab, '{"age":30,"name":"Ann","age":31}')  # no repeats
    assert not accepts(g, byte_vocab, '{"age":30}')  # required still enforced


def test_flexible_whitespace_is_bounded(byte_vocab):
    g = corral.Grammar.json_schema(PERSON, whitespace="flexible", max_whitespace=4)
    assert accepts(g, byte_vocab, '{ "name" : "Ann",\n  "age": 30 }')
    assert not accepts(g, byte_vocab, '{"name":"Ann",' + " " * 5 + '"age":30}')


def test_input_forms_agree(byte_vocab):
    as_dict = corral.Grammar.json_schema(PERSON)
    as_text = corral.Grammar.json_schema(json.dumps(PERSON))
    assert as_dict == as_text


def test_recursive_schema(byte_vocab):
    tree = {
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"]}},
        "$ref": "#/$defs/node",
    }
    g = corral.Grammar.json_schema(tree)
    assert accepts(g, byte_vocab, '{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4}]}]}')
    assert not accepts(g, byte_vocab, '{"v":1,"kids":[{"kids":[]}]}')


def test_remote_ref_through_resolver(byte_vocab):
    remote = {"type": "integer", "minimum": 10}
    g = corral.Grammar.json_schema({"$ref": "https://example.com/n.json"}, resolver={"https://example.com/n.json": remote})
    assert accepts(g, byte_vocab, "12")
    assert not accepts(g, byte_vocab, "9")


@pytest.mark.parametrize(
    "schema,cls,pointer,text",
    [
        ({"type": "strin"}, corral.InvalidSchemaError, "/type", "unknown type 'strin'"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, corral.InvalidSchemaError, "/properties/a/$ref", "points to nothing"),
        ({"properties": {"a": {"type": "array", "uniqueItems": True}}}, corral.UnsupportedSchemaError, "/properties/a/uniqueItems", "cannot compare array items"),
        ({"items": {"pattern": "(?=a)b"}}, corral.UnsupportedSchemaError, "/items/pattern", "look-around"),
        ({"pattern": "a("}, corral.InvalidSchemaError, "/pattern", "missing `)`"),
        ({"minLength": -1}, corral.InvalidSchemaError, "/minLength", "non-negative integer"),
        ({"$dynamicRef": "#x"}, corral.UnsupportedSchemaError, "/$dynamicRef", "dynamic references"),
    ],
)
def test_errors_name_keyword_and_pointer(schema, cls, pointer, text):
    with pytest.raises(cls) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer
    assert text in str(info.value)
    assert isinstance(info.value, corral.SchemaError) and isinstance(info.value, corral.CorralError)


def test_strict_false_drops_with_warning(byte_vocab):
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    with pytest.warns(corral.SchemaWarning, match="uniqueItems at /uniqueItems"):
        g = corral.Grammar.json_schema(schema, strict=False)
    assert any("uniqueItems" in w for w in g.warnings)
    assert accepts(g, byte_vocab, "[1,1]")  # dropped, as the warning says


def test_false_schema_is_empty_language():
    with pytest.raises(corral.EmptyLanguageError):
        corral.Grammar.json_schema(False)


def test_annotations_are_ignored(byte_vocab):
    g = corral.Grammar.json_schema({"type": "boolean", "title": "t", "description": "d", "examples": [True], "default": False, "$comment": "c"})
    assert accepts(g, byte_vocab, "true") and not accepts(g, byte_vocab, "1")


def test_integer_ranges_are_exact(byte_vocab):
    g = corral.Grammar.json_schema({"type": "integer", "minimum": -37, "exclusiveMaximum": 1205})
    compiled = corral.compile(g, byte_vocab)
    for n in range(-1300, 1300):
        assert compiled.matches(str(n).encode()) == (-37 <= n < 1205), n
    assert not compiled.matches(b"007") and not compiled.matches(b"-0")


def test_pattern_escapes_and_lengths(byte_vocab):
    g = corral.Grammar.json_schema({"type": "string", "pattern": "^[a-c\"\\\\]+$", "maxLength": 3})
    assert accepts(g, byte_vocab, json.dumps('a"\\', ensure_ascii=False))
    assert not accepts(g, byte_vocab, json.dumps('a"\\b', ensure_ascii=False))  # 4 characters
    assert not accepts(g, byte_vocab, json.dumps("ad", ensure_ascii=False))


def test_pydantic_model_round_trip(deepseek):
    import pydantic

    class Address(pydantic.BaseModel):
        street: str
        zip_code: str = pydantic.Field(pattern=r"^[0-9]{5}$")

    class User(pydantic.BaseModel):
        id: int = pydantic.Field(ge=1)
        name: str = pydantic.Field(max_length=12)
        address: Address
        nick: str | None = None
        roles: list[str] = []

    g = corral.Grammar.json_schema(User)
    compiled = corral.compile(g, deepseek.vocab)
    user = User(id=7, name="Ada", address=Address(street="Main St", zip_code="12345"), nick=None, roles=["admin"])
    text = user.model_dump_json()
    assert compiled.matches(text.encode())
    for text in _walks(compiled, deepseek.vocab, seed=3, count=20):
        User.model_validate_json(text)  # every generated output parses back into the model


def test_pydantic_type_adapter(byte_vocab):
    g = corral.Grammar.json_schema(list[int])
    assert accepts(g, byte_vocab, "[1,2,3]") and not accepts(g, byte_vocab, '["1"]')


_NORMAL: dict = {}


def _normal_tokens(vocab):
    import numpy as np

    key = vocab.fingerprint
    if key not in _NORMAL:
        _NORMAL[key] = np.array([vocab.token_kind(i) == "normal" for i in range(vocab.size)])
    return _NORMAL[key]


def _walks(compiled, vocab, *, seed: int, count: int, max_tokens: int = 120):
    """Random masked walks finished with the matcher's completion: generated outputs."""
    import numpy as np

    rng = random.Random(seed)
    out = []
    bitmask = np.zeros(vocab.mask_width, dtype=np.int32)
    normal = _normal_tokens(vocab)
    for _ in range(count):
        m = compiled.matcher()
        data = b""
        for _ in range(max_tokens):
            if m.is_finished():
                break
            m.fill_bitmask(bitmask)
            bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: vocab.size]
            allowed = np.flatnonzero(bits.astype(bool) & normal)
            if not len(allowed) or (m.is_accepting() and rng.random() < 0.1):
                break
            tid = int(rng.choice(allowed))
            m.advance(tid)
            data += vocab.token_bytes(tid)
        data += m.completion()
        out.append(data.decode())
    return out


def _exact_float(text: str):
    """JSON numbers with a fraction part, without float rounding where it matters: whole
    ones as int (huge ``5...0.0`` stays a multiple of 5), others as float."""
    from decimal import Decimal

    d = Decimal(text)
    return int(d) if d == d.to_integral_value() else float(text)


SOUNDNESS_SCHEMAS = [
    PERSON,
    {"type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 5, "multipleOf": 5}, {"type": "string", "pattern": "^x+$"}]}, "minItems": 1, "maxItems": 4},
    {"type": "object", "properties": {"kind": {"const": "a"}, "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5}}, "required": ["kind"]},
    {"oneOf": [{"type": "integer", "maximum": 10}, {"type": "integer", "minimum": 5}]},
    {"type": "object", "patternProperties": {"^x-": {"type": "boolean"}}, "additionalProperties": {"type": "null"}, "maxProperties": 3},
    {"if": {"properties": {"t": {"const": "n"}}}, "then": {"properties": {"v": {"type": "integer"}}}, "else": {"properties": {"v": {"type": "string"}}}, "required": ["t", "v"], "type": "object"},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "ipv4"},
    {"type": "array", "prefixItems": [{"type": "boolean"}, {"enum": [1, "one"]}], "items": False, "minItems": 1},
    {"not": {"type": ["object", "array", "string"]}},
    {"type": "object", "dependentRequired": {"a": ["b"]}, "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
    {"type": "array", "contains": {"type": "string"}, "items": {"type": ["string", "integer"]}, "maxItems": 3},
]


@pytest.mark.parametrize("index", range(len(SOUNDNESS_SCHEMAS)))
def test_random_walks_validate(index, deepseek):
    schema = SOUNDNESS_SCHEMAS[index]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = corral.Grammar.json_schema(schema)
    compiled = corral.compile(g, deepseek.vocab)
    for text in _walks(compiled, deepseek.vocab, seed=index, count=15):
        value = json.loads(text, parse_float=_exact_float)
        jsonschema.validate(value, schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        # Compact: no whitespace outside strings.
        assert text == text.strip() and "\n" not in text


def test_alternative_explosion_hits_the_limit():
    branch = {"anyOf": [{"minimum": 1}, {"maxLength": 2}, {"minItems": 1}]}  # all satisfiable together
    schema = {"allOf": [dict(branch, **{"$comment": str(i)}) for i in range(7)]}  # 3^7 > 512
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.limit == "max_schema_alternatives"


def test_any_order_state_cap():
    props = {f"p{i}": {"type": "integer"} for i in range(13)}
    with pytest.raises(corral.UnsupportedSchemaError, match="property_order='schema'"):
        corral.Grammar.json_schema({"type": "object", "properties": props, "additionalProperties": False}, property_order="any")


def test_pattern_properties_cap():
    pp = {f"^p{i}": {"type": "integer"} for i in range(5)}
    with pytest.raises(corral.UnsupportedSchemaError, match="more than 4 patterns"):
        corral.Grammar.json_schema({"type": "object", "patternProperties": pp})


def test_large_multiple_of_is_refused():
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema({"type": "number", "multipleOf": 0.123456789})
    assert info.value.pointer == "/multipleOf"
