"""`property_order="any"`: properties in any order, each at most once, at any number of
properties, with every object keyword still exact (checked against `jsonschema`)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import corral
from _util import accepts_tokens, allowed_ids


def _compact(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


_COMPILED: dict = {}


def compiled(schema: dict, vocab: corral.Vocabulary, **options):
    key = (json.dumps(schema, sort_keys=True), vocab.fingerprint, tuple(sorted(options.items())))
    if key not in _COMPILED:
        _COMPILED[key] = corral.compile(corral.Grammar.json_schema(schema, property_order="any", **options), vocab)
    return _COMPILED[key]


WIDE = {
    "type": "object",
    "properties": {f"p{i}": {"type": "integer"} if i % 3 else {"type": "string", "maxLength": 3} for i in range(200)},
    "required": ["p0", "p77", "p199"],
    "additionalProperties": False,
}


def _wide_value(rng: random.Random, keys: list) -> dict:
    return {k: (rng.randrange(-50, 50) if int(k[1:]) % 3 else "".join(rng.choice("ab\u00e9") for _ in range(rng.randrange(4)))) for k in keys}


def test_two_hundred_properties_in_random_orders_token_by_token(tokenizer):
    c = compiled(WIDE, tokenizer.vocab)
    rng = random.Random(7)
    names = list(WIDE["properties"])
    for trial in range(6):
        keys = rng.sample(names, rng.randrange(3, 200 if trial < 2 else 30))
        keys = list(dict.fromkeys(keys + WIDE["required"]))
        rng.shuffle(keys)
        value = _wide_value(rng, keys)
        text = _compact(value)
        ids = tokenizer.encode(text.decode())
        assert tokenizer.vocab.decode_bytes(ids) == text
        ok, why = accepts_tokens(c, tokenizer.vocab, ids)
        assert ok, why
        jsonschema.validate(value, WIDE)
        # The same object with one key written twice, or a required key left out: refused.
        dup = text[:-1] + b"," + _compact({keys[0]: value[keys[0]]})[1:]
        assert not c.matches(dup)
        missing = {k: v for k, v in value.items() if k != "p77"}
        assert not c.matches(_compact(missing))


def test_masks_are_exact_on_a_wide_object(byte_vocab):
    """With every key but p199 written, the mask after `,"p` allows only its first digit,
    and after `,"p1` only `9`: the keys seen are out."""
    c = compiled(WIDE, byte_vocab)
    value = {f"p{i}": 1 if i % 3 else "" for i in range(199)}
    m = c.matcher()
    for b in _compact(value)[:-1] + b',"p':
        assert m.advance(b)
    assert {chr(t) for t in allowed_ids(m, byte_vocab)} == {"1"}
    assert m.advance(ord("1"))
    assert {chr(t) for t in allowed_ids(m, byte_vocab)} == {"9"}
    for b in b'99":5}':
        assert m.advance(b)
    assert m.is_accepting()


# Objects over a small alphabet of keys, with the oracle deciding what is valid.
KEYS = ["a", "b", "c", "d", "x1", "x2", "zz"]
OBJECT_SCHEMAS = [
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}}, "required": ["b"]},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {}, "d": {}}, "minProperties": 2, "maxProperties": 3, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "patternProperties": {"^x": {"type": "boolean"}}, "additionalProperties": {"type": "string"}, "maxProperties": 4},
    {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "dependentRequired": {"a": ["c"], "b": ["a"]}, "additionalProperties": False},
    {"type": "object", "required": ["a", "zz"], "additionalProperties": {"type": "integer"}, "minProperties": 3},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "patternProperties": {"^x[12]$": {"type": "integer"}}, "additionalProperties": False, "minProperties": 4},
    {"type": "object", "propertyNames": {"enum": ["a", "b", "c", "x1"]}, "required": ["c"]},
]

values = st.one_of(st.integers(-3, 3), st.booleans(), st.sampled_from(["", "s"]), st.none())


@pytest.mark.parametrize("index", range(len(OBJECT_SCHEMAS)))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_order_agrees_with_jsonschema(index, byte_vocab, data):
    schema = OBJECT_SCHEMAS[index]
    c = compiled(schema, byte_vocab, spec_exact=True)
    keys = data.draw(st.lists(st.sampled_from(KEYS), max_size=6))
    pairs = [(k, data.draw(values)) for k in keys]
    text = ("{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in pairs) + "}").encode()
    distinct = len(set(keys)) == len(keys)
    want = distinct and jsonschema.Draft202012Validator(schema).is_valid(dict(pairs))
    assert c.matches(text) == want, (schema, text)


@pytest.mark.parametrize("index", range(len(OBJECT_SCHEMAS)))
def test_generated_objects_are_valid_and_vary_in_order(index, deepseek):
    import numpy as np

    schema = OBJECT_SCHEMAS[index]
    c = compiled(schema, deepseek.vocab, spec_exact=True)
    rng = random.Random(index)
    bitmask = np.zeros(deepseek.vocab.mask_width, dtype=np.int32)
    not_eos = np.ones(deepseek.vocab.size, dtype=bool)
    not_eos[deepseek.vocab.eos_token_ids] = False
    orders = set()
    for _ in range(12):
        m = c.matcher()
        data = b""
        for _ in range(60):
            m.fill_bitmask(bitmask)
            bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: deepseek.vocab.size].astype(bool)
            allowed = np.flatnonzero(bits & not_eos)
            if not len(allowed) or (m.is_accepting() and rng.random() < 0.15):
                break
            t = int(allowed[rng.randrange(len(allowed))])
            assert m.advance(t)
            data += deepseek.vocab.token_bytes(t)
        data += m.completion()
        value = json.loads(data)
        assert jsonschema.Draft202012Validator(schema).is_valid(value), (schema, data)
        keys = re_keys(data)
        assert len(keys) == len(set(keys)), data
        orders.add(tuple(keys))
    assert len(orders) > 1


def re_keys(data: bytes) -> list:
    """The keys of a flat JSON object, in the order written."""
    return list(json.loads(data, object_pairs_hook=lambda pairs: [k for k, _ in pairs]))


def test_nested_and_recursive_objects():
    schema = {
        "$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["name"]}},
        "$ref": "#/$defs/node",
    }
    g = corral.Grammar.json_schema(schema, property_order="any")
    vocab = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
    c = corral.compile(g, vocab)
    assert c.matches(b'{"kids":[{"name":"b"},{"kids":[],"name":"c"}],"name":"a"}')
    assert not c.matches(b'{"kids":[{"kids":[]}],"name":"a"}')
    assert not c.matches(b'{"name":"a","name":"b"}')


def test_the_grammar_grows_linearly_with_the_properties():
    """No state per subset of keys: the grammar text of 400 properties is about twice that
    of 200 (it was 2^n rules, refused above a dozen properties)."""
    def size(n: int) -> int:
        props = {f"p{i}": {"type": "integer"} for i in range(n)}
        return len(corral.Grammar.json_schema({"type": "object", "properties": props}, property_order="any").source)

    small, large = size(200), size(400)
    assert large < 2.5 * small, (small, large)
