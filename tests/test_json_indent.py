"""Grammar.json_schema(..., indent=n): output laid out exactly as json.dumps(indent=n) does.

The oracle is Python's own JSON module: every output the grammar allows equals
``json.dumps(json.loads(out), indent=n, ensure_ascii=False)`` (checked on sentences sampled
from the grammar), every valid instance written that way is accepted (``jsonschema`` decides
validity of instances drawn by hypothesis), and the same value written compactly or with
another indent is rejected.
"""

from __future__ import annotations

import json
import re
import sys
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import corral
from corral._schema.options import MAX_INDENT

# The default depth limit of indented values.
MAX_INDENT_DEPTH = corral.Limits().max_indent_depth

sys.path.insert(0, str(Path(__file__).parent))
from test_json_schema import SOUNDNESS_SCHEMAS, _exact_float, _walks  # noqa: E402

TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["v"],
            "additionalProperties": False,
        }
    },
    "$ref": "#/$defs/node",
}

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b\n", 'q"']}, "maxItems": 3},
        "address": {"type": "object", "properties": {"city": {"type": "string", "pattern": "^[A-Z][a-z]{0,5}$"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}

# Schemas whose sampled outputs must round-trip; the strategies below draw instances of each.
SCHEMAS = {
    "person": PERSON,
    "tree": TREE,
    "anything": {},
    "open_object": {"type": "object", "additionalProperties": {"type": ["integer", "string", "array", "null"], "items": {"type": "boolean"}}, "maxProperties": 3},
    "nested_arrays": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}, "maxItems": 3},
    "tuple": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "object"}, {"type": "array"}], "items": False},
    "enums": {"enum": [{"a": [1, {"b": None}], "c": {}}, [], {}, [1.5, "x\ty", [[]]], 0.00001, 1e20, -0.0, 3]},
    "const_object": {"const": {"k": [True, {"deep": [1, 2]}], "e": []}},
    "any_of": {"anyOf": [{"type": "object", "properties": {"kind": {"const": "p"}, "at": {"type": "array", "items": {"type": "number"}, "minItems": 1}}, "required": ["kind", "at"], "additionalProperties": False}, {"type": "string", "format": "date"}, {"type": "null"}]},
    "numbers": {"type": "array", "items": {"anyOf": [{"type": "number", "minimum": -2.5, "maximum": 1000}, {"type": "integer", "multipleOf": 7, "exclusiveMinimum": 0}, {"type": "number", "multipleOf": 0.25, "maximum": 10, "minimum": -10}]}, "maxItems": 4},
    "not_integer": {"type": "array", "items": {"type": "number", "not": {"type": "integer"}}, "maxItems": 3},
    "keys": {"type": "object", "patternProperties": {"^x-[a-z]+$": {"type": "integer"}}, "propertyNames": {"maxLength": 6}, "additionalProperties": False},
    "contains": {"type": "array", "contains": {"type": "string"}, "items": {"type": ["string", "integer"]}, "maxItems": 3},
    "counted": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array"}, "c": {"type": "string"}}, "minProperties": 1, "maxProperties": 2},
}

INDENTS = [2, 0, "\t"]


def _grammar(schema, indent, **options) -> corral.Grammar:
    return corral.Grammar.json_schema(schema, indent=indent, **options)


_COMPILED: dict = {}


def compiled(key: str, indent, vocab, **options):
    """The compiled grammar of SCHEMAS[key] (once per module run)."""
    cache_key = (key, repr(indent), tuple(sorted(options.items())))
    if cache_key not in _COMPILED:
        _COMPILED[cache_key] = corral.compile(_grammar(SCHEMAS[key], indent, **options), vocab)
    return _COMPILED[cache_key]


def dumps(value, indent) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False)


def other_layouts(value, indent) -> list[str]:
    """The value written compactly, with the default separators and with other indents."""
    texts = [
        json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        json.dumps(value, ensure_ascii=False),
        json.dumps(value, ensure_ascii=True),
    ]
    texts += [dumps(value, other) for other in (0, 1, 2, 4, "\t", "  \t") if other != indent]
    return [t for t in dict.fromkeys(texts) if t != dumps(value, indent)]


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check_layout(c, schema, text: str, indent) -> None:
    """``text`` (from the grammar) is its value's json.dumps, valid, and no other layout of
    the value is accepted."""
    value = json.loads(text)
    assert dumps(value, indent) == text, text
    assert validator(schema).is_valid(json.loads(text, parse_float=_exact_float)), text
    for other in other_layouts(value, indent):
        assert not c.matches(other.encode()), (text, other)


# ----------------------------------------------------------------- sampled outputs


@pytest.mark.parametrize("indent", INDENTS, ids=repr)
@pytest.mark.parametrize("key", sorted(SCHEMAS))
def test_sampled_outputs_are_json_dumps_of_their_value(key, indent, byte_vocab):
    schema = SCHEMAS[key]
    grammar = _grammar(schema, indent)
    c = compiled(key, indent, byte_vocab)
    seen = set()
    for seed in range(12):
        data = grammar._inner.sample(seed, 96)
        if data is None:
            continue
        text = data.decode()
        seen.add(text)
        assert c.matches(data)
        check_layout(c, schema, text, indent)
    assert seen


@pytest.mark.parametrize("order", ["schema", "any"])
def test_other_schemas_round_trip_in_both_property_orders(order, byte_vocab):
    for schema in SOUNDNESS_SCHEMAS:
        grammar = _grammar(schema, 3, property_order=order)
        c = corral.compile(grammar, byte_vocab)
        for seed in range(8):
            data = grammar._inner.sample(seed, 64)
            if data is not None:
                assert c.matches(data)
                check_layout(c, schema, data.decode(), 3)


def test_token_walks_with_a_real_vocabulary_round_trip(deepseek):
    # Masked random walks over a real tokenizer's tokens (which join newlines and spaces).
    for key in ("person", "tree", "open_object"):
        c = corral.compile(_grammar(SCHEMAS[key], 2), deepseek.vocab)
        for text in _walks(c, deepseek.vocab, seed=len(key), count=6):
            assert dumps(json.loads(text), 2) == text, text
            assert validator(SCHEMAS[key]).is_valid(json.loads(text, parse_float=_exact_float)), text


def test_keys_stay_distinct(byte_vocab):
    c = corral.compile(_grammar({"type": "object", "additionalProperties": {"type": "integer"}}, 2), byte_vocab)
    assert c.matches(b'{\n  "a": 1,\n  "b": 2\n}')
    assert not c.matches(b'{\n  "a": 1,\n  "a": 2\n}')


def test_any_property_order_keeps_the_layout(byte_vocab):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "null"}}, "c": {"type": "object"}}, "required": ["a"], "maxProperties": 2}
    grammar = _grammar(schema, 2, property_order="any")
    c = corral.compile(grammar, byte_vocab)
    for value in [{"a": 1}, {"b": [None], "a": 2}, {"c": {}, "a": 3}, {"a": 4, "c": {"x": [1, []]}}]:
        assert validator(schema).is_valid(value)
        assert c.matches(dumps(value, 2).encode()), value
        for other in other_layouts(value, 2):
            assert not c.matches(other.encode()), other
    for value in [{}, {"b": []}, {"a": 1, "b": [], "c": {}}]:  # invalid: never accepted
        assert not c.matches(dumps(value, 2).encode()), value
    for seed in range(12):
        data = grammar._inner.sample(seed, 96)
        if data is not None:
            check_layout(c, schema, data.decode(), 2)


def test_pydantic_models(byte_vocab):
    from pydantic import BaseModel, Field

    class Point(BaseModel):
        x: float
        y: float = Field(ge=0, le=100)

    class Shape(BaseModel):
        name: str = Field(max_length=10)
        points: list[Point] = Field(max_length=3)
        parent: Shape | None = None
        tags: dict[str, int] = {}

    grammar = corral.Grammar.json_schema(Shape, indent=4)
    c = corral.compile(grammar, byte_vocab)
    value = Shape(name="tri", points=[Point(x=0.5, y=1), Point(x=-2e-05, y=99.25)], parent=Shape(name="root", points=[]), tags={"k": 1})
    text = value.model_dump_json(indent=4)
    assert text != dumps(json.loads(text), 4)  # Pydantic's own layout differs ("[]" and floats)...
    ours = dumps(json.loads(text), 4)
    assert c.matches(ours.encode())  # ...json.dumps's is the one written
    assert Shape.model_validate_json(ours) == value
    for seed in range(12):
        data = grammar._inner.sample(seed, 128)
        if data is not None:
            out = data.decode()
            assert dumps(json.loads(out), 4) == out
            Shape.model_validate_json(out)


# --------------------------------------------------------- instances drawn by hypothesis

_NICE_TEXT = st.text(st.sampled_from(list("ab Z\"\\\n\t\x00\x1f\x7féλ😀/\u2028")), max_size=6)


def _nice_floats(lo=None, hi=None):
    """Floats of at most 15 significant digits (what indent mode writes), in [lo, hi]."""
    base = st.builds(lambda m, e: float(f"{m}e{e}"), st.integers(-(10**15) + 1, 10**15 - 1), st.integers(-25, 25))
    return base.filter(lambda x: (lo is None or x >= lo) and (hi is None or x <= hi))


def _json_values(depth: int = 3):
    scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | _nice_floats() | _NICE_TEXT
    if depth == 0:
        return scalars
    inner = _json_values(depth - 1)
    return scalars | st.lists(inner, max_size=3) | st.dictionaries(_NICE_TEXT, inner, max_size=3)


def instances(schema, root=None, depth: int = 4):
    """A strategy for values meant to fit ``schema`` (the keywords SCHEMAS use); callers
    keep only those ``jsonschema`` finds valid."""
    root = schema if root is None else root
    if schema is True or schema == {}:
        return _json_values(min(depth, 3))
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if depth == 0:
            return st.nothing()
        return st.deferred(lambda: instances(root["$defs"][name], root, depth - 1))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([instances(s, root, depth) for s in schema["anyOf"]])
    types = schema.get("type", ["null", "boolean", "integer", "number", "string", "array", "object"])
    types = [types] if isinstance(types, str) else types
    options = []
    for t in types:
        if t == "null":
            options.append(st.none())
        elif t == "boolean":
            options.append(st.booleans())
        elif t == "integer":
            step = schema.get("multipleOf", 1)
            options.append(st.integers(-(10**6), 10**6).map(lambda i, step=step: i * step))
        elif t == "number":
            step = schema.get("multipleOf")
            if step is not None:
                options.append(st.integers(-400, 400).map(lambda i, step=step: float(Decimal(str(step)) * i)))
            else:
                floats = _nice_floats(schema.get("minimum"), schema.get("maximum"))
                if "minimum" in schema or "maximum" in schema:
                    # A bounded number is written without an exponent (documented).
                    floats = floats.filter(lambda x: x == 0 or 1e-4 <= abs(x) < 1e16)
                options.append(floats | st.integers(-2000, 2000))
        elif t == "string":
            if "pattern" in schema:
                # (Python's $ matches before a final newline, ECMAScript's does not.)
                options.append(st.from_regex(schema["pattern"]).filter(lambda t: "\n" not in t))
            elif schema.get("format") == "date":
                options.append(st.dates().map(str))
            else:
                options.append(_NICE_TEXT)
        elif t == "array":
            if "prefixItems" in schema:
                options.append(st.tuples(*(instances(s, root, depth - 1) for s in schema["prefixItems"])).map(list))
            else:
                item = instances(schema.get("items", {}), root, depth - 1) if depth else st.nothing()
                options.append(st.lists(item, min_size=schema.get("minItems", 0), max_size=schema.get("maxItems", 4)))
        elif t == "object":
            props = schema.get("properties", {})
            # Named properties close an object by default (spec_exact=False).
            extra = schema.get("additionalProperties", not props and "patternProperties" not in schema)
            patterns = schema.get("patternProperties", {})
            if patterns:
                src, sub = next(iter(patterns.items()))
                others = st.dictionaries(st.from_regex(src, fullmatch=True), instances(sub, root, depth - 1), max_size=3)
            elif extra is False:
                others = st.just({})
            else:
                others = st.dictionaries(_NICE_TEXT, instances({} if extra is True else extra, root, depth - 1), max_size=3)

            def ordered(pair, props=props):
                named, rest = pair
                out = {k: named[k] for k in props if k in named}  # schema order first
                out.update((k, v) for k, v in rest.items() if k not in props)
                return out

            named = st.fixed_dictionaries({}, optional={k: instances(s, root, depth - 1) for k, s in props.items()}) if depth else st.just({})
            options.append(st.tuples(named, others).map(ordered))
    return st.one_of(options)


@pytest.mark.parametrize("key", sorted(SCHEMAS))
def test_valid_instances_are_accepted_exactly_as_json_dumps_writes_them(key, byte_vocab):
    schema = SCHEMAS[key]
    check = validator(schema)
    compiled_by_indent = {indent: compiled(key, indent, byte_vocab) for indent in INDENTS}

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(value=instances(schema))
    def run(value):
        assume(check.is_valid(value))
        for indent, c in compiled_by_indent.items():
            text = dumps(value, indent)
            assert c.matches(text.encode()), (indent, text)
            for other in other_layouts(value, indent):
                assert not c.matches(other.encode()), (indent, other)

    run()


# ---------------------------------------------------------------- scalars, canonically


# Any JSON number (RFC 8259).
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")

_NUMBER_GRAMMAR: list = []


def _number_grammar():
    """``{"type": "number"}`` with ``indent=2``, and it compiled for the byte vocabulary."""
    if not _NUMBER_GRAMMAR:
        vocab = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
        grammar = _grammar({"type": "number"}, 2)
        _NUMBER_GRAMMAR.append((grammar, corral.compile(grammar, vocab)))
    return _NUMBER_GRAMMAR[0]


def test_every_number_the_grammar_writes_round_trips():
    # Sentences sampled from the grammar: each is a JSON number that Python writes back
    # as it is (the grammar writes numbers canonically), and the sample reaches integers,
    # plain fractions and both signs of exponent.
    grammar, compiled = _number_grammar()
    kinds = set()
    for seed in range(1500):
        data = grammar._inner.sample(seed, 8 + seed % 56)
        assert data is not None and compiled.matches(data), seed
        text = data.decode()
        assert JSON_NUMBER.fullmatch(text), text
        assert json.dumps(json.loads(text)) == text, text
        kinds.add("e-" if "e-" in text else "e+" if "e+" in text else "." if "." in text else "int")
    assert kinds == {"int", ".", "e-", "e+"}


@settings(max_examples=300, deadline=None, database=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**30), 10**30))
def test_numbers_of_at_most_15_digits_are_all_canonical(value):
    _, compiled = _number_grammar()
    text = json.dumps(value)
    digits = re.sub(r"e.*", "", text).replace("-", "").replace(".", "").strip("0")
    exponent = Decimal(text).adjusted() if isinstance(value, float) and value else 0
    # Floats of at most 15 significant digits within 1e-307..1e308 are in, nothing else is.
    expected = isinstance(value, int) or (len(digits) <= 15 and -307 <= exponent <= 307)
    assert compiled.matches(text.encode()) == expected, text


def test_number_spellings(byte_vocab):
    c = corral.compile(_grammar({"type": "number"}, 2), byte_vocab)
    for text in ["0", "-7", "12345678901234567890", "0.0", "-0.0", "3.0", "1.5", "0.0001", "1e-05", "1e+16", "1.5e+300", "123456789012345.0"]:
        assert c.matches(text.encode()), text
    for text in ["-0", "1.50", "3.", "1e16", "1E+16", "1e+5", "0.00001", "10000000000000000.0", "1.0e+16", "1e-5", "0.1234567890123456", "1e+308", "01"]:
        assert not c.matches(text.encode()), text
    integers = corral.compile(_grammar({"type": "integer"}, 2, spec_exact=True), byte_vocab)
    assert integers.matches(b"3") and integers.matches(b"3.0") and not integers.matches(b"3.00")
    assert not corral.compile(_grammar({"type": "integer"}, 2), byte_vocab).matches(b"3.0")


def test_bounded_numbers_have_no_exponent(byte_vocab):
    c = corral.compile(_grammar({"type": "number", "minimum": 0, "maximum": 1e-3}, 2), byte_vocab)
    assert c.matches(b"0.0001") and c.matches(b"0") and c.matches(b"0.0")
    # 1e-05 is written with an exponent by json.dumps: a bounded number never is.
    assert not c.matches(b"1e-05") and not c.matches(b"0.00001")


@settings(max_examples=200, deadline=None, database=None)
@given(text=st.text(max_size=8))
def test_strings_are_written_as_json_dumps_writes_them(text):
    c = _string_grammar()
    encoded = json.dumps(text, ensure_ascii=False)
    assert c.matches(encoded.encode())
    others = {
        json.dumps(text),  # \uXXXX for every non-ASCII character
        re.sub(r"\\u00([0-9a-f]{2})", lambda m: "\\u00" + m.group(1).upper(), encoded),
        encoded.replace("\\n", "\\u000a").replace("\\t", "\\u0009"),
        encoded.replace("/", "\\/"),
    }
    for other in others - {encoded}:
        assert not c.matches(other.encode()), other


_STRING_GRAMMAR: list = []


def _string_grammar():
    if not _STRING_GRAMMAR:
        vocab = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
        _STRING_GRAMMAR.append(corral.compile(_grammar({"type": "string"}, 2), vocab))
    return _STRING_GRAMMAR[0]


def test_escapes_in_patterns_enums_and_keys(byte_vocab):
    schema = {
        "type": "object",
        "properties": {
            "p": {"type": "string", "pattern": "^[\\x00-\\x1f\"\\\\/]{1,3}$"},
            "e": {"enum": ["\x08\x0c\n\r\t\x01\x7f", "é/"]},
            "\n\"key\x1f": {"const": "\u2028"},
        },
        "patternProperties": {"^\\t[a\\x00]$": {"type": "null"}},
        "additionalProperties": False,
    }
    c = corral.compile(_grammar(schema, 2), byte_vocab)
    values = [
        {"p": "\x00\x1f", "e": "\x08\x0c\n\r\t\x01\x7f"},
        {"p": '"\\/', "e": "é/", "\n\"key\x1f": "\u2028"},
        {"\t\x00": None, "\ta": None},
    ]
    for value in values:
        assert validator(schema).is_valid(value)
        text = dumps(value, 2)
        assert c.matches(text.encode()), text
        for other in other_layouts(value, 2) + [text.replace("\\u001f", "\\u001F"), text.replace("\\b", "\\u0008"), text.replace("/", "\\/")]:
            if other != text:
                assert not c.matches(other.encode()), other


# ------------------------------------------------------------------ depth and options


def _nested(levels: int):
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_recursion_stops_at_the_depth_limit(byte_vocab):
    c = corral.compile(_grammar({"type": "array", "items": {"$ref": "#"}}, 1), byte_vocab)
    # The innermost [] of k levels sits k - 1 containers deep.
    for levels in (1, 2, MAX_INDENT_DEPTH, MAX_INDENT_DEPTH + 1, MAX_INDENT_DEPTH + 2, MAX_INDENT_DEPTH + 5):
        assert c.matches(dumps(_nested(levels), 1).encode()) == (levels - 1 <= MAX_INDENT_DEPTH), levels
    # Without an indent, recursion is unbounded.
    free = corral.compile(corral.Grammar.json_schema({"type": "array", "items": {"$ref": "#"}}), byte_vocab)
    assert free.matches(json.dumps(_nested(MAX_INDENT_DEPTH + 5)).encode())


def test_a_schema_needing_deeper_values_is_refused():
    deep: dict = {"type": "null"}
    for _ in range(MAX_INDENT_DEPTH + 1):
        deep = {"type": "array", "items": deep, "minItems": 1}
    corral.Grammar.json_schema(deep)  # fine without an indent
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(deep, indent=2)
    assert info.value.limit == "max_indent_depth" and str(MAX_INDENT_DEPTH) in str(info.value)
    # One level less fits.
    corral.Grammar.json_schema(deep["items"], indent=2)
    # A schema that allows nothing at all is still an EmptyLanguageError.
    for empty in [
        {"type": "object", "required": ["a"], "properties": {"a": False}},
        {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#"}}},  # needs itself forever
    ]:
        with pytest.raises(corral.EmptyLanguageError):
            corral.Grammar.json_schema(empty, indent=2)


@pytest.mark.parametrize("bad", [1.5, True, b"  ", ["  "]])
def test_indent_of_the_wrong_type_is_a_type_error(bad):
    with pytest.raises(TypeError, match="indent"):
        corral.Grammar.json_schema({}, indent=bad)


@pytest.mark.parametrize("bad", [-1, MAX_INDENT + 1, "x", " \n", "\u00a0", " " * (MAX_INDENT + 1)])
def test_indent_out_of_range_is_a_grammar_error(bad):
    with pytest.raises(corral.GrammarError, match="indent"):
        corral.Grammar.json_schema({}, indent=bad)


def test_indent_excludes_flexible_whitespace():
    with pytest.raises(corral.GrammarError, match="indent.*whitespace='flexible'"):
        corral.Grammar.json_schema({}, indent=2, whitespace="flexible")


def test_no_indent_is_the_compact_grammar():
    for schema in SCHEMAS.values():
        assert corral.Grammar.json_schema(schema, indent=None).source == corral.Grammar.json_schema(schema).source


def test_key_with_repeated_spaces_is_kept(byte_vocab):
    # Spaces inside a key literal were once collapsed when a rule was assembled.
    schema = {"type": "object", "properties": {"a  b": {"type": "null"}, "c   ": {"type": "array"}}, "required": ["a  b"]}
    for options in ({}, {"whitespace": "flexible"}, {"indent": 2}, {"property_order": "any"}):
        c = corral.compile(corral.Grammar.json_schema(schema, **options), byte_vocab)
        value = {"a  b": None, "c   ": [1]}
        text = dumps(value, 2) if options.get("indent") else json.dumps(value, separators=(",", ":"))
        assert c.matches(text.encode()), options
        assert not c.matches(text.replace("a  b", "a b").encode()), options
