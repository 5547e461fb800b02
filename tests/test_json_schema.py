"""Grammar.json_schema: options, errors with JSON pointers, Pydantic, and soundness at scale."""

from __future__ import annotations

import json
import random
import re
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
        ({"properties": {"a": {"not": {"uniqueItems": True}}}}, corral.UnsupportedSchemaError, "/properties/a/not/uniqueItems", "negated"),
        ({"items": {"pattern": "(?<=(?=a))b"}}, corral.UnsupportedSchemaError, "/items/pattern", "inside a look-behind"),
        ({"pattern": "a("}, corral.InvalidSchemaError, "/pattern", "missing `)`"),
        ({"minLength": -1}, corral.InvalidSchemaError, "/minLength", "non-negative integer"),
        ({"$dynamicRef": "#x"}, corral.InvalidSchemaError, "/$dynamicRef", "anchor `x` that does not exist"),
        (
            # A list of anything, or (entered through `ints`, whose `x` is then outermost) of integers.
            {
                "$defs": {
                    "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#x"}, "$defs": {"d": {"$dynamicAnchor": "x"}}},
                    "ints": {"$id": "ints", "$ref": "list", "$defs": {"d": {"$dynamicAnchor": "x", "type": "integer"}}},
                },
                "anyOf": [{"$ref": "list"}, {"$ref": "ints"}],
            },
            corral.UnsupportedSchemaError,
            "/$defs/list/items/$dynamicRef",
            "depends on the way a value is reached",
        ),
    ],
)
def test_errors_name_keyword_and_pointer(schema, cls, pointer, text):
    with pytest.raises(cls) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer
    assert text in str(info.value)
    assert isinstance(info.value, corral.SchemaError) and isinstance(info.value, corral.CorralError)


def test_strict_false_drops_with_warning(byte_vocab):
    # Arrays with a repeated item: no grammar says so, and corral's check only refuses them.
    schema = {"type": "array", "items": {"type": "integer"}, "not": {"uniqueItems": True}}
    with pytest.warns(corral.SchemaWarning, match="uniqueItems at /not/uniqueItems"):
        g = corral.Grammar.json_schema(schema, strict=False)
    assert any("uniqueItems" in w for w in g.warnings)
    # Dropped, as the warning says: the grammar is wider than the schema, never narrower.
    assert accepts(g, byte_vocab, "[1,1]") and accepts(g, byte_vocab, "[1,2]")


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


# A JSON number without an exponent: what a number with a bound is written as.
_PLAIN_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
_BOUND_KEYWORDS = {
    "minimum": lambda x, b: x >= b,
    "exclusiveMinimum": lambda x, b: x > b,
    "maximum": lambda x, b: x <= b,
    "exclusiveMaximum": lambda x, b: x < b,
}


def _bounded_number_grammar(bounds: dict[str, str]) -> corral.Grammar:
    """The grammar of ``{"type": "number", <keyword>: <bound>...}`` with each bound written
    as the given JSON number text: ``Grammar.json_schema`` hands a JSON text to the core as
    it is, so a bound of more digits than a float holds is read exactly."""
    text = '{"type":"number",' + ",".join(f'"{k}":{v}' for k, v in bounds.items()) + "}"
    return corral.Grammar.json_schema(text)


def _plain(d) -> str:
    """``d`` (a Decimal) as a plain JSON number, no exponent."""
    text = format(d, "f")
    return "0" if text == "-0" else text


def _number_texts(bounds, rng) -> list[str]:
    """Numbers around each bound (one unit of the bound's last digit and of 40 other
    places either side, with trailing zeros), random ones, and spellings that are no plain
    JSON number (an exponent, leading zeros, a bare point, a sign)."""
    from decimal import Decimal, localcontext

    texts = {"0", "-0", "0.0", "-0.0", "-0.00", "1", "-1", "1e3", "1E+3", "-2.5e-1", "0e0", "01", "-01.5", "1.", ".5", "+1", "--1", "1.0.0", ""}
    with localcontext() as ctx:
        ctx.prec = 400
        for b in bounds:
            texts |= {_plain(b), _plain(b) + ("0" if "." in _plain(b) else ".0"), _plain(-b)}
            for places in list(range(-3, 41)) + [-b.as_tuple().exponent]:
                unit = Decimal(1).scaleb(-places)
                for k in (-11, -2, -1, 1, 2, 11):
                    texts.add(_plain(b + k * unit))
            texts |= {f"{b:e}", f"{b:E}"}
        for _ in range(300):
            d = Decimal(rng.randint(-(10**rng.randint(1, 12)), 10 ** rng.randint(1, 12))).scaleb(-rng.randint(0, 45))
            texts |= {_plain(d), _plain(d) + "0" if "." in _plain(d) else _plain(d) + ".00"}
    return sorted(texts)


def _check_bounded_numbers(compiled, bounds: dict, texts) -> int:
    """Each text is accepted exactly when it is a plain JSON number within every bound
    (exact Decimal comparison), but the negative zeros (``-0``, ``-0.0``), which may be
    refused where 0 is allowed (a lower bound of 0 allows no sign), never accepted where 0
    is not; the number of texts accepted."""
    from decimal import Decimal, localcontext

    accepted = 0
    with localcontext() as ctx:
        ctx.prec = 400
        for text in texts:
            got = compiled.matches(text.encode())
            accepted += got
            plain = _PLAIN_NUMBER.fullmatch(text) is not None
            within = plain and all(_BOUND_KEYWORDS[k](Decimal(text), b) for k, b in bounds.items())
            if plain and text.startswith("-") and Decimal(text) == 0:
                assert within or not got, (bounds, text)
            else:
                assert got == within, (bounds, text, got)
    return accepted


_NUMBER_BOUNDS = [
    "0", "1", "-1", "0.5", "-0.5", "100", "1E3", "-2.75", "0.001", "12345.678", "1e-3", "-0.0", "2.50",
    # More significant digits than a float (17) or the default Decimal context (28) holds.
    "1.0000000000000000000000000000000001", "-1.0000000000000000000000000000000001",
    "0.0000000000000000000000000000000000001", "0.99999999999999999999999999999999999999",
    "123456789012345678901234567890123456789.5", "-98765432109876543210.00000000000000000000000000000001",
]


@pytest.mark.parametrize("bound", _NUMBER_BOUNDS)
def test_number_bounds_are_exact_on_plain_numbers(byte_vocab, bound):
    """Each bound keyword, inclusive and exclusive, accepts exactly the plain JSON numbers
    on its side of the bound, to the last digit (exact ``Decimal`` comparison; a bound of
    more digits than any float is not rounded), and no number with an exponent."""
    from decimal import Decimal

    rng = random.Random(bound)
    b = Decimal(bound)
    texts = _number_texts([b], rng)
    for keyword in _BOUND_KEYWORDS:
        compiled = corral.compile(_bounded_number_grammar({keyword: bound}), byte_vocab)
        accepted = _check_bounded_numbers(compiled, {keyword: b}, texts)
        assert 0 < accepted < len(texts), (keyword, bound)


def test_number_bounds_given_as_python_numbers_are_exact(byte_vocab):
    """Through ``Grammar.json_schema``: Python ints (any size) and floats as bounds, each
    read as the exact value it is written as (``repr``), and two bounds together."""
    from decimal import Decimal

    rng = random.Random(5)
    values = [0, 1, -1, 0.5, -0.5, 100, 1e3, -2.75, 0.001, 12345.678, 0.1, 10**30 + 1, -(10**25) - 7, 1e-7, 1e22, 1.5e-30]
    values += [rng.randint(-100000, 100000) / 10 ** rng.randint(0, 4) for _ in range(20)]
    for v in values:
        b = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
        texts = _number_texts([b], rng) if abs(b) < 10**40 else [_plain(b), _plain(b) + ".0", "0", "-1", "1e308"]
        for keyword in _BOUND_KEYWORDS:
            compiled = corral.compile(corral.Grammar.json_schema({"type": "number", keyword: v}), byte_vocab)
            _check_bounded_numbers(compiled, {keyword: b}, texts)
    for lo, hi in [(-1.5, 2.25), (0, 0), (0.1, 0.30000000000000004), (-(10**20), -(10**20) + 1)]:
        for low_kw, high_kw in [("minimum", "maximum"), ("exclusiveMinimum", "exclusiveMaximum"), ("minimum", "exclusiveMaximum")]:
            bounds = {low_kw: Decimal(repr(lo)) if isinstance(lo, float) else Decimal(lo), high_kw: Decimal(repr(hi)) if isinstance(hi, float) else Decimal(hi)}
            schema = {"type": "number", low_kw: lo, high_kw: hi}
            if bounds[low_kw] == bounds[high_kw] and "exclusive" in low_kw + high_kw:  # no number is within
                with pytest.raises(corral.EmptyLanguageError):
                    corral.Grammar.json_schema(schema)
                continue
            compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
            assert _check_bounded_numbers(compiled, bounds, _number_texts(list(bounds.values()), rng)) > 0, schema


def test_references_to_one_definition_share_one_rule(byte_vocab):
    point = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}
    schema = {
        "$defs": {"point": point},
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/point"}, "b": {"$ref": "#/$defs/point", "description": "same"}, "c": {"$ref": "#/$defs/point"}},
    }
    g = corral.Grammar.json_schema(schema)
    # One value rule for the point object, not one per reference; three equal copies of
    # it written out (three subschemas) are written once too, and a copy that differs is
    # not.
    copies = dict(schema, properties={k: dict(point) for k in "abc"})
    assert _rules(g) == _rules(corral.Grammar.json_schema(copies))
    other = dict(point, properties={"x": {"type": "integer", "minimum": 0}, "y": {"type": "integer"}})
    assert _rules(g) < _rules(corral.Grammar.json_schema(dict(copies, properties={"a": point, "b": other, "c": point})))
    compiled = corral.compile(g, byte_vocab)
    assert compiled.matches(b'{"a":{"x":1,"y":2},"c":{"x":3,"y":4}}')
    assert not compiled.matches(b'{"b":{"x":1}}')
    # A $ref with a constraining sibling (2020-12) is its own value.
    schema["properties"]["b"] = {"$ref": "#/$defs/point", "maxProperties": 1}
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    assert not compiled.matches(b'{"b":{"x":1,"y":2}}') and compiled.matches(b'{"a":{"x":1,"y":2}}')


def _rules(g) -> int:
    """The number of rules of a grammar (from its description)."""
    return int(re.search(r"\((\d+) rules", repr(g._inner)).group(1))


def _same_structure(a, b) -> bool:
    """Do two grammars have as many rules and terminals (the description says both)?"""
    return repr(a._inner) == repr(b._inner)


def test_pattern_escapes_and_lengths(byte_vocab):
    g = corral.Grammar.json_schema({"type": "string", "pattern": "^[a-c\"\\\\]+$", "maxLength": 3})
    assert accepts(g, byte_vocab, json.dumps('a"\\', ensure_ascii=False))
    assert not accepts(g, byte_vocab, json.dumps('a"\\b', ensure_ascii=False))  # 4 characters
    assert not accepts(g, byte_vocab, json.dumps("ad", ensure_ascii=False))


def test_pattern_classes_accept_exactly_the_json_escapes_of_their_characters(byte_vocab):
    # A class of characters is written in canonical JSON: the controls without a short
    # escape as \u00XX (lowercase hex; the automaton groups them by first digit), the
    # others as themselves or their short escape. Random classes over the 256 first code
    # points: each code's canonical spelling (json.dumps) is accepted exactly when the
    # class holds it, and no other spelling of it (upper-case hex, \u for a printable
    # character, a raw control) ever is.
    rng = random.Random(7)
    for round_ in range(120):
        pool = range(0x20) if round_ % 2 else range(0x100)  # half of the classes all controls
        codes = set(rng.sample(pool, rng.randint(1, min(40, len(pool)))))
        pattern = "^[" + "".join(f"\\u{c:04x}" for c in sorted(codes)) + "]$"
        compiled = corral.compile(corral.Grammar.json_schema({"type": "string", "pattern": pattern}), byte_vocab)
        for c in range(0x100):
            canonical = json.dumps(chr(c), ensure_ascii=False)
            assert compiled.matches(canonical.encode()) == (c in codes), (sorted(codes), canonical)
            others = {f'"\\u{c:04x}"', f'"\\u{c:04X}"', f'"{chr(c)}"'} - {canonical}
            for other in others:
                assert not compiled.matches(other.encode("utf-8", "surrogatepass")), (sorted(codes), other)


def test_control_characters_in_strings_use_json_escapes(byte_vocab):
    g = corral.Grammar.json_schema({"type": "string", "maxLength": 2})
    compiled = corral.compile(g, byte_vocab)
    for cp in range(0x20):
        text = json.dumps(chr(cp))  # the canonical encoding: \n, \t... or \u00XX
        assert compiled.matches(text.encode()), text
        assert not compiled.matches(f'"\\u{cp:04X}"'.encode()) or f"{cp:04X}" == f"{cp:04x}", text
        assert not compiled.matches(f'"{chr(cp)}"'.encode()), cp
    assert not compiled.matches(b'"\\u0020"')  # a space is written as itself


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
    from decimal import Decimal, InvalidOperation

    try:
        d = Decimal(text)
    except InvalidOperation:  # an exponent past any Decimal's (JSON allows any length)
        return float(text)
    if d.adjusted() > 4000:  # too large for an exact int to matter: a float (inf)
        return float(text)
    return int(d) if d == d.to_integral_value() else float(text)


# A discriminated union: its oneOf is exact without negation (disjoint branches).
SINK = {
    "oneOf": [
        {"type": "object", "properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind", "path"], "additionalProperties": False},
        {"type": "object", "properties": {"kind": {"const": "stdout"}}, "required": ["kind"], "additionalProperties": False},
    ]
}


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
    SINK,
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
    schema = {"allOf": [dict(branch, **{"$comment": str(i)}) for i in range(8)]}  # 3^8 > 4096
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.limit == "max_schema_alternatives"


def test_pattern_properties_cap():
    most = corral.Limits().max_pattern_properties
    pp = {f"^p{i}_": {"type": "integer"} for i in range(most + 1)}
    with pytest.raises(corral.UnsupportedSchemaError, match=f"more than {most} patterns"):
        corral.Grammar.json_schema({"type": "object", "patternProperties": pp})
    del pp[f"^p{most}_"]
    corral.Grammar.json_schema({"type": "object", "patternProperties": pp})


def test_large_multiple_of_is_refused():
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema({"type": "number", "multipleOf": 0.123456789})
    assert info.value.pointer == "/multipleOf"


# Schemas whose masks go through the plain-token slices (free text inside strings, with and
# without length bounds) and around them: regular ones and context-free ones.
SLICE_SCHEMAS = [
    {"type": "string"},
    {"type": "string", "minLength": 3, "maxLength": 30},
    {"type": "object", "properties": {"note": {"type": "string", "maxLength": 12}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["note", "tags"]},
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z ]+$"}, "b": {"$ref": "#"}}, "required": ["a"]},
    SINK,
]


@pytest.mark.parametrize("index", range(len(SLICE_SCHEMAS)))
def test_masks_equal_a_whole_trie_walk(index, deepseek):
    # Every step of random walks: the fast mask (slices, caches) equals the reference
    # (a walk of the whole trie, with the parser for a context-free grammar).
    import numpy as np

    vocab = deepseek.vocab
    compiled = corral.compile(corral.Grammar.json_schema(SLICE_SCHEMAS[index]), vocab)
    normal = _normal_tokens(vocab)
    rng = random.Random(index)
    fast = np.zeros((1, vocab.mask_width), dtype=np.int32)
    slow = np.zeros((1, vocab.mask_width), dtype=np.int32)
    steps = 0
    for _ in range(3):
        m = compiled.matcher()
        for _ in range(12):
            if m.is_finished():
                break
            m.fill_bitmask(fast, 0)
            m._fill_bitmask_reference(slow, 0)
            assert np.array_equal(fast, slow), f"step {steps}"
            steps += 1
            bits = np.unpackbits(fast[0].view(np.uint8), bitorder="little")[: vocab.size]
            allowed = np.flatnonzero(bits.astype(bool) & normal)
            if not len(allowed):
                break
            # Prefer long tokens: they cross the slice bounds.
            lengths = np.array([len(vocab.token_bytes(int(t))) for t in allowed[:2000]])
            pick = allowed[:2000][lengths >= np.median(lengths)] if rng.random() < 0.5 else allowed
            assert m.advance(int(rng.choice(pick)))
    assert steps >= 10


def test_long_string_bounds_are_exact(byte_vocab):
    # Counted repetitions this long are built as counters, not by the regex engine.
    schema = {
        "type": "object",
        "properties": {"body": {"type": "string", "maxLength": 5000}, "id": {"type": "string", "minLength": 40, "maxLength": 40}},
        "required": ["body", "id"],
    }
    g = corral.Grammar.json_schema(schema)
    ok_id = "x" * 40
    for body, ident, want in [
        ("é" * 5000, ok_id, True),
        ("é" * 4999 + "\\n", ok_id, True),  # an escape is one character
        ("é" * 5001, ok_id, False),
        ("a" * 4999 + "\\n", ok_id, True),
        ("", ok_id, True),
        ("a", "x" * 39, False),
        ("a", "x" * 41, False),
    ]:
        text = f'{{"body":"{body}","id":"{ident}"}}'
        assert accepts(g, byte_vocab, text) is want, (len(body), len(ident))
        assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(text)) is want


@pytest.mark.parametrize("lo,hi", [(0, 5000), (3000, None), (2049, 2049), (100, 20000), (0, 65536)])
def test_very_long_string_bounds_are_read_in_chunks(byte_vocab, lo, hi):
    # Past LONG_STRING characters a plain length bound is read in chunks (no single
    # automaton of ~14 states per character): still exact at every boundary.
    schema = {"type": "string", "minLength": lo} if hi is None else {"type": "string", "minLength": lo, "maxLength": hi}
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    edges = {0, 1, 1023, 1024, 1025, 2048, 2049, 4096, 5000, 5001, 20000, 20001}
    edges |= {n + d for n in (lo, hi or lo) for d in (-1, 0, 1) if n + d >= 0}
    for n in sorted(edges):
        # Multi-byte characters and escapes: a length counts characters, not bytes.
        text = json.dumps("".join("é" if i % 3 == 0 else ("\n" if i % 7 == 0 else "a") for i in range(n)), ensure_ascii=False)
        want = n >= lo and (hi is None or n <= hi)
        assert compiled.matches(text.encode()) is want, n


@pytest.mark.parametrize("bound", [300, 20000, 1_400_000])
def test_long_bound_with_a_pattern_is_exact_at_the_bound(byte_vocab, bound):
    # The bound and the pattern are one block of (character, pattern state) rows, and
    # the count: exact however long, and no dead end where the pattern still needs
    # characters (here four after the last letter).
    schema = {"type": "object", "properties": {"v": {"type": "string", "maxLength": bound, "pattern": "^[a-zé]+-[0-9]{3}$"}}}
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)

    def head(letters: int) -> bytes:
        return ('{"v":"' + "é" * (letters // 2) + "a" * (letters - letters // 2)).encode()

    assert compiled.matches(head(bound - 4) + b'-123"}') and not compiled.matches(head(bound - 3) + b'-123"}')
    matcher = compiled.matcher()
    for b in head(bound - 5):
        assert matcher.advance(b)
    # One more letter leaves exactly room for "-123"; a second one would not.
    assert matcher.is_allowed("é".encode()[0]) and matcher.advance(ord("a"))
    assert matcher.is_allowed(ord("-")) and not matcher.is_allowed(ord("a")) and not matcher.is_allowed(0xC3)
    assert not matcher.is_allowed(ord('"'))


def test_long_bounded_strings_sample_and_compile_eagerly(byte_vocab):
    # A string alone is a regular grammar: its masks are kept per state, one per row deep
    # in the count (not one per character); compiled eagerly they are the same.
    schema = {"type": "string", "pattern": "^[a-z]+-[0-9]{3}$", "maxLength": 5000}
    grammar = corral.Grammar.json_schema(schema)
    lazy = corral.compile(grammar, byte_vocab, cache=False)
    eager = corral.compile(grammar, byte_vocab, eager=True, cache=False)
    walks = [lazy.matcher(), eager.matcher()]
    bitmasks = [corral.allocate_bitmask(1, byte_vocab.size) for _ in walks]
    text = b'"' + b"a" * 4996
    for i, b in enumerate(text):
        if i in (0, 1, 2, 100, 2500, 4800, 4990, 4996):
            for m, bm in zip(walks, bitmasks, strict=True):
                m.fill_bitmask(bm, 0)
            assert (bitmasks[0] == bitmasks[1]).all(), i
        assert all(m.advance(b) for m in walks)
    # 4,996 letters: one more would leave no room for "-123".
    assert not walks[0].is_allowed(ord("a")) and walks[0].is_allowed(ord("-"))
    # Random sentences of a long bound (a shortest ending found where they stop).
    big = corral.Grammar.json_schema({"type": "object", "properties": {"v": dict(schema, maxLength=10**6)}, "required": ["v"]})
    compiled = corral.compile(big, byte_vocab)
    for seed in range(30):
        sentence = big._inner.sample(seed, 64)
        assert sentence is not None and compiled.matches(sentence), sentence


def test_a_bound_past_what_a_count_can_number_is_refused_at_its_keyword():
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"properties": {"v": {"type": "string", "maxLength": 10**9, "pattern": "^[a-z]+$"}}})
    assert info.value.limit == "max_dfa_states" and info.value.pointer == "/properties/v/maxLength"


# --- oneOf with provably disjoint branches: exact as anyOf, no negation ----------------

def _agrees_with_jsonschema(g, vocab, schema, instances):
    compiled = corral.compile(g, vocab)
    for inst in instances:
        expected = jsonschema.Draft202012Validator(schema).is_valid(inst)
        assert compiled.matches(json.dumps(inst, **COMPACT).encode()) == expected, inst


def test_one_of_discriminated_union_is_exact(byte_vocab):
    # additionalProperties: false cannot be negated: this compiles only through the proof.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = corral.Grammar.json_schema(SINK)
    instances = [
        {"kind": "file", "path": "/tmp/x"},
        {"kind": "stdout"},
        {"kind": "file"},  # the file discriminator, without its required path
        {"kind": "stdout", "path": "/tmp/x"},  # stdout has no path
        {"kind": "file", "path": 3},
        {"kind": "socket"},  # unknown discriminator
        {},
        "file",
        None,
    ]
    _agrees_with_jsonschema(g, byte_vocab, SINK, instances)
    assert [jsonschema.Draft202012Validator(SINK).is_valid(i) for i in instances[:2]] == [True, True]


def test_one_of_discriminator_through_ref_and_sibling_type(byte_vocab):
    # Branches without their own type: the sibling "type": "object" rules out the rest.
    schema = {
        "$defs": {"kinds": {"enum": ["a", "b"]}},
        "type": "object",
        "oneOf": [
            {"properties": {"k": {"$ref": "#/$defs/kinds"}, "n": {"type": "integer"}}, "required": ["k"], "additionalProperties": False},
            {"properties": {"k": {"const": "c"}, "s": {"type": "string"}}, "required": ["k"], "additionalProperties": False},
        ],
    }
    g = corral.Grammar.json_schema(schema)
    instances = [{"k": "a", "n": 1}, {"k": "b"}, {"k": "c", "s": "x"}, {"k": "c", "n": 1}, {"k": "a", "s": "x"}, {"k": "d"}, "a", 1]
    _agrees_with_jsonschema(g, byte_vocab, schema, instances)


def test_one_of_disjoint_by_type(byte_vocab):
    branches = [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
        {"type": "array", "items": {"type": "string"}},
        {"type": "string", "maxLength": 2},
        {"type": "null"},
        {"const": True},
    ]
    schema = {"oneOf": branches}
    g = corral.Grammar.json_schema(schema)
    assert _same_structure(g, corral.Grammar.json_schema({"anyOf": branches}))  # no negation left in
    instances = [{"a": 1}, {"a": "x"}, {"b": 1}, ["x"], [1], "ab", "abc", None, True, False, 1, 1.5]
    _agrees_with_jsonschema(g, byte_vocab, schema, instances)


def test_one_of_disjoint_finite_sets(byte_vocab):
    schema = {"oneOf": [{"const": 1}, {"enum": [True, "1", [1]]}, {"enum": [None, {"a": 1}]}]}  # true != 1
    g = corral.Grammar.json_schema(schema)
    assert _same_structure(g, corral.Grammar.json_schema({"anyOf": schema["oneOf"]}))
    _agrees_with_jsonschema(g, byte_vocab, schema, [1, 1.0, True, "1", [1], None, {"a": 1}, 2, False])
    # An enum beside the oneOf reaches both branches; their types still tell them apart.
    typed = {"enum": [1, "a", None], "oneOf": [{"type": "integer"}, {"type": "string"}]}
    g = corral.Grammar.json_schema(typed)
    assert _same_structure(g, corral.Grammar.json_schema({"enum": typed["enum"], "anyOf": typed["oneOf"]}))
    _agrees_with_jsonschema(g, byte_vocab, typed, [1, "a", None, 2, "b"])


def _closed(kind_schema):
    return {"type": "object", "properties": {"kind": kind_schema, "x": {"type": "integer"}}, "required": ["kind"], "additionalProperties": False}


@pytest.mark.parametrize(
    "branches",
    [
        # The discriminators meet ("b"): {"kind": "b"} is valid for both.
        [_closed({"enum": ["a", "b"]}), _closed({"enum": ["b", "c"]})],
        # 1 == 1.0 in JSON Schema.
        [_closed({"const": 1}), _closed({"const": 1.0})],
        # Discriminators with disjoint values, but required in neither: {} is valid for both.
        [{"type": "object", "properties": {"kind": {"const": k}}, "additionalProperties": False} for k in "ab"],
        # No type: the first branch allows every string, like the second.
        [{"properties": {"kind": {"const": "a"}}, "required": ["kind"], "additionalProperties": False}, {"type": "string"}],
        # Discriminators unconstrained in the second branch.
        [_closed({"const": "a"}), _closed({"type": "string"})],
    ],
)
def test_one_of_overlapping_branches_are_not_taken_as_disjoint(byte_vocab, branches):
    # No proof: each branch is read with the others negated. The objects are closed, so
    # negating additionalProperties is exact ("some other named key") and the values
    # valid for two branches are refused.
    schema = {"oneOf": branches}
    instances = [{}, {"kind": "a"}, {"kind": "b"}, {"kind": "c"}, {"kind": 1}, {"kind": 1.0}, {"kind": "a", "x": 1}, {"x": 1}, "a", 3]
    try:
        g = corral.Grammar.json_schema(schema)
    except corral.EmptyLanguageError:
        # Branches of one language (1 == 1.0): no value is valid for exactly one.
        assert not any(jsonschema.Draft202012Validator(schema).is_valid(i) for i in instances)
        assert branches[0]["properties"]["kind"] == {"const": 1}
        return
    assert not _same_structure(g, corral.Grammar.json_schema({"anyOf": branches}))
    _agrees_with_jsonschema(g, byte_vocab, schema, instances)


@pytest.mark.parametrize(
    "schema,instances",
    [
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1, 1.5, -2, 0.0, "1"]),  # integer ⊂ number
        ({"oneOf": [{"maxLength": 2}, {"type": "string"}]}, ["ab", "abc", 5, None, [1]]),  # no type: strings too
        ({"oneOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]}, ["a", "b", "c", "d"]),
        ({"oneOf": [{"const": 1}, {"enum": [1.0, 2]}]}, [1, 1.0, 2, True]),
    ],
)
def test_one_of_overlapping_branches_use_negation(byte_vocab, schema, instances):
    g = corral.Grammar.json_schema(schema)
    assert g != corral.Grammar.json_schema({"anyOf": schema["oneOf"]})
    _agrees_with_jsonschema(g, byte_vocab, schema, instances)


@pytest.mark.parametrize("name", ["app_config", "ecommerce_order", "event_log"])
def test_realistic_discriminated_unions(byte_vocab, name):
    import pathlib

    folder = pathlib.Path(__file__).resolve().parents[1] / "bench" / "json_schemas"
    schema = json.loads((folder / f"{name}.schema.json").read_text())
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    for inst in json.loads((folder / f"{name}.instances.json").read_text()):
        assert compiled.matches(json.dumps(inst, **COMPACT).encode())


def test_every_format_ships_prebuilt(byte_vocab):
    """Each format's pattern, in both forms a grammar uses (a whole quoted string, and the
    characters between the quotes that a length bound is intersected with), has a prebuilt
    DFA in the library (if this fails, run tools/prebuild_formats.py and rebuild), and
    grammars using it still mean the format."""
    from corral import _core

    sources = _core._format_sources()
    names = [name for name, _, _ in _core._format_patterns()]
    assert len(sources) == 2 * len(names) and len(set(sources)) == len(sources)
    assert sources[1::2] == [f'"{s}"' for s in sources[0::2]]
    shipped = set(_core._prebuilt_patterns())
    assert [s[:60] for s in sources if s not in shipped] == []
    # The prebuilt automata at work, alone and intersected with a length bound.
    uri = corral.Grammar.json_schema({"type": "string", "format": "uri"})
    assert accepts(uri, byte_vocab, '"https://example.com/a?b=c#d"')
    assert accepts(uri, byte_vocab, '"http://[2001:db8::1]:80/"')
    assert not accepts(uri, byte_vocab, '"http://[2001:db8::1::2]/"')
    assert not accepts(uri, byte_vocab, '"no scheme"')
    email = corral.Grammar.json_schema({"type": "string", "format": "email", "maxLength": 12})
    assert accepts(email, byte_vocab, '"ann@ex.org"')
    assert not accepts(email, byte_vocab, '"ann@example.org"')  # 15 characters
    assert not accepts(email, byte_vocab, '"ann@@ex.org"')


def test_min_items_with_flexible_whitespace_compiles_and_counts():
    # Each unrolled item brings nullable whitespace: one production with ~50 of them used
    # to exceed the normalization limit (2^k variants); the core now splits it into a chain.
    import json as _json

    schema = {
        "type": "array",
        "minItems": 12,
        "items": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    }
    grammar = corral.Grammar.json_schema(schema, whitespace="flexible")
    vocab = corral.Vocabulary.from_token_bytes([bytes([i]) for i in range(256)] + [b""], eos_token_ids=[256])
    compiled = corral.compile(grammar, vocab)
    for n in (11, 12, 15):
        for indent in (None, 1):
            text = _json.dumps([{"a": i} for i in range(n)], indent=indent)
            assert compiled.matches(text.encode()) == (n >= 12), (n, indent)


@pytest.mark.parametrize(
    "uri,draft",
    [
        ("http://json-schema.org/draft-04/schema#", jsonschema.Draft4Validator),
        ("http://json-schema.org/draft-06/schema#", jsonschema.Draft6Validator),
        ("http://json-schema.org/draft-07/schema#", jsonschema.Draft7Validator),
        ("https://json-schema.org/draft-07/schema", jsonschema.Draft7Validator),
    ],
)
def test_a_drafts_metaschema_needs_no_resolver(byte_vocab, uri, draft):
    # A configuration format with a field that holds a JSON Schema.
    schema = {"type": "object", "properties": {"schema": {"$ref": uri}}, "required": ["schema"], "additionalProperties": False}
    # The specification's language (objects open to other keys: draft 4's metaschema does
    # not name `$ref`), in any order.
    c = corral.compile(corral.Grammar.json_schema(schema, property_order="any", spec_exact=True), byte_vocab)
    checked = draft(draft.META_SCHEMA, format_checker=jsonschema.FormatChecker())
    docs = [
        {"type": "string", "pattern": "^a+$"},
        {"type": ["string", "null"], "maxLength": 3},
        {"type": "strin"},
        {"pattern": "(a"},
        {"minLength": -1},
        {"properties": {"a": {"type": "integer"}}, "required": ["a", "a"]},
        {"patternProperties": {"(a": {}}},
        {"patternProperties": {"a+": {"type": "boolean"}}},
        {"items": [{"type": "integer"}, True]},
        {"definitions": {"x": {"enum": []}}},
    ]
    for doc in docs:
        expected = checked.is_valid(doc)
        assert c.matches(json.dumps({"schema": doc}, separators=(",", ":")).encode()) == expected, doc
    assert sum(checked.is_valid(d) for d in docs) >= 4
    # The grammar compiles the metaschema itself, which is a valid schema.
    whole = json.dumps({"schema": draft.META_SCHEMA}, separators=(",", ":"))
    assert c.matches(whole.encode())


def test_a_metaschema_the_caller_gives_is_the_one_read(byte_vocab):
    uri = "http://json-schema.org/draft-07/schema"
    g = corral.Grammar.json_schema({"$ref": uri}, resolver={uri: {"type": "integer"}})
    assert accepts(g, byte_vocab, "12") and not accepts(g, byte_vocab, "{}")


def test_a_missing_document_is_named_with_where_it_is_referenced():
    with pytest.raises(corral.InvalidSchemaError, match="cannot resolve a reference into https://example.com/x.json") as info:
        corral.Grammar.json_schema({"properties": {"a": {"items": {"$ref": "https://example.com/x.json#/y"}}}})
    assert info.value.pointer == "/properties/a/items/$ref"


@pytest.mark.parametrize(
    "uri,draft",
    [
        ("https://json-schema.org/draft/2020-12/schema", jsonschema.Draft202012Validator),
        ("https://json-schema.org/draft/2019-09/schema", jsonschema.Draft201909Validator),
    ],
)
def test_the_newer_metaschemas_follow_their_dynamic_references(byte_vocab, uri, draft):
    # Every vocabulary metaschema declares the anchor `meta` and refers to it; entered
    # through the root metaschema, each such reference means the root's.
    schema = {"type": "object", "properties": {"schema": {"$ref": uri}}, "required": ["schema"], "additionalProperties": False}
    g = corral.Grammar.json_schema(schema, property_order="any", spec_exact=True)
    assert not g.warnings
    c = corral.compile(g, byte_vocab)
    checked = draft(draft.META_SCHEMA, format_checker=jsonschema.FormatChecker())
    docs = [
        {"type": "string", "pattern": "^a+$"},
        {"$defs": {"x": {"type": "strin"}}},
        {"properties": {"a": {"items": {"minLength": -1}}}},
        {"not": {"anyOf": [{"type": "null"}, {"enum": 3}]}},
        {"prefixItems": [{"type": "integer"}], "contains": {"const": 1}},
        {"dependentSchemas": {"a": {"maxProperties": 1.5}}},
    ]
    for doc in docs:
        assert c.matches(json.dumps({"schema": doc}, separators=(",", ":")).encode()) == checked.is_valid(doc), doc
    assert c.matches(json.dumps({"schema": draft.META_SCHEMA}, separators=(",", ":")).encode())


def test_a_dynamic_reference_means_the_outermost_declaration_on_every_way_in(byte_vocab):
    # `list` declares `x` as anything, but it is only entered through `ints`, whose `x` is
    # then the outermost: a list of integers.
    schema = {
        "$defs": {
            "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#x"}, "$defs": {"d": {"$dynamicAnchor": "x"}}},
            "ints": {"$id": "ints", "$ref": "list", "$defs": {"d": {"$dynamicAnchor": "x", "type": "integer"}}},
        },
        "$ref": "ints",
    }
    g = corral.Grammar.json_schema(schema)
    assert accepts(g, byte_vocab, "[1,2]") and not accepts(g, byte_vocab, '[1,"a"]')
    assert jsonschema.Draft202012Validator(schema).is_valid([1, 2])
    assert not jsonschema.Draft202012Validator(schema).is_valid([1, "a"])


@pytest.mark.parametrize(
    "pattern,good,bad",
    [
        (r"^\p{L}+$", ["héllo", "Ωμέγα", "日本"], ["a1", "a b", ""]),
        (r"^\p{digit}+$", ["42", "৪২"], ["4a", "-1"]),
        (r"^[\p{Lu}\d]{2}$", ["A1", "ÉZ"], ["a1", "A"]),
        (r"^\P{Letter}+$", ["12 !", "€"], ["a", "1é"]),
        (r"^\p{Script=Greek}+$", ["Ωμ"], ["Ωm"]),
        (r"^\p{sc=Latn}\p{ASCII}$", ["é!", "ab"], ["Ω!", "éé"]),
    ],
)
def test_unicode_property_escapes_match_their_code_points(byte_vocab, pattern, good, bad):
    g = corral.Grammar.json_schema({"type": "string", "pattern": pattern})
    for s in good + bad:
        want = s in good
        assert accepts(g, byte_vocab, json.dumps(s, ensure_ascii=False)) == want, s
    # patternProperties keys too.
    g = corral.Grammar.json_schema({"type": "object", "patternProperties": {pattern: {"type": "integer"}}, "additionalProperties": False})
    for s in good + bad:
        assert accepts(g, byte_vocab, json.dumps({s: 1}, ensure_ascii=False, separators=(",", ":"))) == (s in good), s


@pytest.mark.parametrize("pattern", [r"\p{letter}", r"\p{Greek}", r"\p", r"\p{L", r"\p{Script=greek}", r"\p{L=Lu}"])
def test_unicode_property_names_are_spelled_as_ecmascript_spells_them(pattern):
    with pytest.raises(corral.InvalidSchemaError, match="pattern at /pattern") as info:
        corral.Grammar.json_schema({"pattern": pattern})
    assert info.value.pointer == "/pattern"
