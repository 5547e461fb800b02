"""Grammar.json_schema on hostile and edge-case schemas: repeated keys, empty branches,
recursion and depth, bad options and keyword values, large counts and enums, multipleOf.

Oracles: ``jsonschema`` (Draft 2020-12) for documents, exact ``Decimal``/``Fraction``
arithmetic for fractional ``multipleOf`` (``jsonschema`` divides floats), and the grammar
engine itself for terminal emptiness.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal
from fractions import Fraction

import jsonschema
import pytest

import corral
from corral._schema import check_options
from corral._schema.native import order as grammar_order

# Grammar.json_schema's options as the core takes them (strict, whitespace, max_whitespace,
# property_order, spec_exact, integer_fraction, indent, draft), for spec_exact=True.
SPEC_EXACT_OPTIONS = (True, "compact", 16, "schema", True, True, None, 2020)

COMPACT = dict(separators=(",", ":"), ensure_ascii=False)


def compiled(schema, vocab, **options):
    """The schema's exact language (``spec_exact``, what ``jsonschema`` validates) unless
    the options say otherwise."""
    options.setdefault("spec_exact", True)
    return corral.compile(corral.Grammar.json_schema(schema, **options), vocab)


def agrees(c, schema, docs, *, reorder=True):
    """Every document is accepted exactly when jsonschema says it is valid (written in
    corral's compact form and, unless ``reorder`` is off, in its property order)."""
    validator = jsonschema.Draft202012Validator(schema)
    for doc in docs:
        shown = grammar_order(schema, doc, options=SPEC_EXACT_OPTIONS) if reorder else doc
        text = json.dumps(shown, **COMPACT)
        assert c.matches(text.encode()) == validator.is_valid(doc), text


# --------------------------------------------------------------------- repeated keys


def test_open_keys_never_repeat_and_count_distinct_properties(byte_vocab):
    # The reported instance: {"a":1,"a":2} parses to one property, so it must not
    # satisfy minProperties 2, and completion() once wrote {"":0,"":0}.
    schema = {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}
    c = compiled(schema, byte_vocab)
    for text in [b'{"a":1,"a":2}', b'{"":0,"":0}', b'{"a":1,"b":2,"a":3}', b'{"a":1}']:
        assert not c.matches(text), text
    for text in [b'{"a":1,"b":2}', b'{"":0," ":0}', b'{"a":1,"b":2,"c":3}']:
        assert c.matches(text), text
    done = c.matcher().completion()
    pairs = json.loads(done, object_pairs_hook=lambda kv: kv)
    assert len({k for k, _ in pairs}) == len(pairs) >= 2, done
    assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(done))


def test_keys_stay_distinct_per_object_at_every_depth(byte_vocab):
    schema = {"type": "array", "items": {"type": "object", "additionalProperties": {"$ref": "#"}}}
    c = compiled(schema, byte_vocab)
    assert c.matches(b'[{"a":[{"a":[]}],"b":[]},{"a":[]}]')
    assert not c.matches(b'[{"a":[{"a":[],"a":[]}]}]')
    assert not c.matches(b'[{"a":[{"b":[]}],"a":[]}]')


def test_min_properties_one_with_open_keys_is_exact(byte_vocab):
    schema = {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1}
    c = compiled(schema, byte_vocab)
    agrees(c, schema, [{}, {"a": 1}, {"a": 1, "b": 2}, {"a": "x"}])


def test_property_names_enum_keys_appear_at_most_once(byte_vocab):
    schema = {"type": "object", "propertyNames": {"enum": ["a", "b"]}, "additionalProperties": {"type": "integer"}, "minProperties": 2}
    c = compiled(schema, byte_vocab)
    assert not c.matches(b'{"a":1,"a":2}')
    assert not c.matches(b'{"":0,"":0}')
    assert c.matches(b'{"a":1,"b":2}')
    # The shortest completion is a valid document (it used to be {"":0,"":0}).
    done = json.loads(c.matcher().completion())
    assert jsonschema.Draft202012Validator(schema).is_valid(done)


def test_finite_pattern_classes_become_named_keys(byte_vocab):
    schema = {"type": "object", "patternProperties": {"^(x|y)$": {"type": "integer"}}, "additionalProperties": False}
    c = compiled(schema, byte_vocab)
    assert not c.matches(b'{"x":1,"x":2}')
    agrees(c, schema, [{}, {"x": 1}, {"x": 1, "y": 2}, {"z": 1}, {"y": "s"}])


@pytest.mark.parametrize("order", ["schema", "any"])
def test_named_keys_never_repeat(byte_vocab, order):
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"], "additionalProperties": {"type": "integer"}}
    c = compiled(schema, byte_vocab, property_order=order)
    assert not c.matches(b'{"a":"s","a":"t","b":1}')
    assert not c.matches(b'{"a":"s","b":1,"b":2}')
    assert not c.matches(b'{"a":"s","b":1,"a":1}')  # a named key never falls in the open class
    assert c.matches(b'{"a":"s","b":1,"c":2}')


# --------------------------------------------------------------------- formats


def test_uri_template_literals_follow_rfc_6570_with_erratum_6937(byte_vocab):
    c = compiled({"type": "string", "format": "uri-template"}, byte_vocab)
    # The verified erratum puts the apostrophe back among the literals (the RFC's own
    # example '{var}' needs it); the test suite agrees.
    for good in ["'", "a'b", "'{var}'", "{x}", "%41"]:
        assert c.matches(json.dumps(good).encode()), good
    for bad in ['"', "<", ">", "\\", "^", "`", "|", "{", "}", " ", "%", "\x7f", "{x"]:
        assert not c.matches(json.dumps(bad).encode()), bad


# --------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "options,error,name",
    [
        (dict(max_whitespace=-1, whitespace="flexible"), corral.GrammarError, "max_whitespace"),
        (dict(max_whitespace=2.5, whitespace="flexible"), TypeError, "max_whitespace"),
        (dict(max_whitespace=True, whitespace="flexible"), TypeError, "max_whitespace"),
        (dict(max_whitespace=10**6), corral.GrammarError, "max_whitespace"),
        (dict(whitespace="pretty"), corral.GrammarError, "whitespace"),
        (dict(whitespace=None), TypeError, "whitespace"),
        (dict(property_order="random"), corral.GrammarError, "property_order"),
        (dict(strict="yes"), TypeError, "strict"),
        (dict(resolver=5), TypeError, "resolver"),
        (dict(limits={"max_compile_ms": 5}), TypeError, "limits"),
    ],
)
def test_options_are_checked(options, error, name):
    with pytest.raises(error) as info:
        corral.Grammar.json_schema({"type": "array"}, **options)
    assert name in str(info.value)


@pytest.mark.parametrize("option,value,error", [("draft", 5, corral.GrammarError), ("draft", True, TypeError), ("integer_fraction", 1, TypeError)])
def test_translator_options_are_checked(option, value, error):
    # Options Grammar.json_schema sets itself (the draft when $schema names none, whether
    # 3.0 is an integer), checked as the others are.
    options = dict(strict=True, whitespace="compact", max_whitespace=16, resolver=None, draft=2020, property_order="schema", integer_fraction=False, limits=None)
    check_options(**options)
    with pytest.raises(error, match=option):
        check_options(**{**options, option: value})


@pytest.mark.parametrize("schema", [[1], [], 3, None, 2.5, '[{"type": "null"}]', '"object"', "3", "NaN"])
def test_a_schema_that_is_not_an_object_is_invalid(schema):
    with pytest.raises(corral.InvalidSchemaError):
        corral.Grammar.json_schema(schema)


def test_a_schema_as_json_text_equals_the_dict():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert corral.Grammar.json_schema(json.dumps(schema)) == corral.Grammar.json_schema(schema)
    assert corral.Grammar.json_schema(json.dumps(schema).encode()) == corral.Grammar.json_schema(schema)


def test_max_whitespace_bounds_whitespace(byte_vocab):
    c = compiled({"type": "array"}, byte_vocab, whitespace="flexible", max_whitespace=0)
    assert c.matches(b"[]") and not c.matches(b"[ ]")


# --------------------------------------------------------------------- numeric keyword values


@pytest.mark.parametrize(
    "schema,pointer",
    [
        ({"minimum": float("nan")}, "/minimum"),
        ({"maximum": float("inf")}, "/maximum"),
        ({"exclusiveMinimum": float("-inf")}, "/exclusiveMinimum"),
        ({"properties": {"a": {"exclusiveMaximum": float("nan")}}}, "/properties/a/exclusiveMaximum"),
        ({"multipleOf": float("nan")}, "/multipleOf"),
        ({"multipleOf": float("inf")}, "/multipleOf"),
        ({"multipleOf": 0}, "/multipleOf"),
        ({"multipleOf": -2}, "/multipleOf"),
        ({"not": {"multipleOf": 0}}, "/not/multipleOf"),
        ({"not": {"minimum": float("nan")}}, "/not/minimum"),
        ({"minLength": -1}, "/minLength"),
        ({"maxLength": 1.5}, "/maxLength"),
        ({"minItems": True}, "/minItems"),
        ({"maxItems": float("inf")}, "/maxItems"),
        ({"minProperties": float("nan")}, "/minProperties"),
        ({"maxProperties": "3"}, "/maxProperties"),
        ({"contains": {}, "minContains": -1}, "/minContains"),
        ({"minimum": "1"}, "/minimum"),
        ({"minimum": False}, "/minimum"),
        ({"enum": [1, float("nan")]}, "/enum/1"),
        ({"const": float("inf")}, "/const"),
        ({"not": {"enum": [float("nan")]}}, "/not/enum/0"),
        ({"not": {"type": 5}}, "/not/type"),
        ({"not": {"pattern": 5}}, "/not/pattern"),
        ({"not": {"format": ["x"]}}, "/not/format"),
    ],
)
def test_bad_numeric_and_keyword_values_are_invalid_schemas(schema, pointer):
    with pytest.raises(corral.InvalidSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer


@pytest.mark.parametrize(
    "schema,pointer",
    [
        ({"type": float("nan")}, "/type"),
        # (The pointer is the value's own.)
        ({"type": [{"a": float("inf")}]}, "/type/0/a"),
        ({"properties": {"a": {"type": {"x": float("nan")}}}}, "/properties/a/type/x"),
    ],
)
def test_messages_about_non_json_values_do_not_fail(schema, pointer):
    with pytest.raises(corral.InvalidSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer


@pytest.mark.parametrize(
    "schema,pointer",
    [
        ({"maxProperties": 10**12}, "/maxProperties"),
        ({"maxItems": 10**12}, "/maxItems"),
        ({"prefixItems": [{}], "minItems": 10**12}, "/minItems"),
        ({"type": "string", "pattern": "a", "maxLength": 10**12}, "/maxLength"),
        ({"type": "string", "format": "email", "minLength": 10**12}, "/minLength"),
        # Counts that fit the limit alone, but not once multiplied by a format's or a
        # pattern's automaton (a least length is written out), or past what a count can
        # number: the error names the count, in any subschema.
        ({"properties": {"u": {"type": "string", "format": "uri", "minLength": 4096}}}, "/properties/u/minLength"),
        ({"items": {"pattern": "^[a-z]+(-[a-z]+)*@x$", "maxLength": 10**9}}, "/items/maxLength"),
        ({"anyOf": [{"type": "string", "format": "email", "minLength": 3000}]}, "/anyOf/0/minLength"),
        # (A bound beside it is counted: the least length is what is written out.)
        ({"type": "string", "format": "email", "minLength": 3000, "maxLength": 5000}, "/minLength"),
    ],
)
def test_counts_no_grammar_can_hold_are_limits_with_pointers(schema, pointer):
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer
    assert info.value.limit in ("max_dfa_states", "max_grammar_productions")
    assert pointer in str(info.value)


def test_a_pattern_combination_too_large_names_the_first_pattern():
    # No length bound: the patterns' product alone is past the limit.
    limits = corral.Limits(max_dfa_states=2000)
    # (Each alone is 2^7 states: the character seven from the end is remembered.)
    sub = {"allOf": [{"pattern": "c[a-z]{6}$"}, {"pattern": "d[a-z]{6}$"}], "type": "string"}
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"properties": {"p": sub}}, limits=limits)
    assert info.value.pointer == "/properties/p/allOf/0/pattern"
    assert info.value.keyword == "pattern"
    assert "c[a-z]{6}$" in str(info.value) and "d[a-z]{6}$" in str(info.value)
    # A long bound beside them is counted, not what makes the automaton large.
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"properties": {"p": dict(sub, maxLength=5000)}}, limits=limits)
    assert info.value.pointer == "/properties/p/allOf/0/pattern"


@pytest.mark.parametrize(
    "schema,pointer",
    [
        ({"$id": "http://["}, "/$id"),
        ({"$ref": "http://["}, "/$ref"),
        ({"properties": {"a": {"$id": "http://[x"}}}, "/properties/a/$id"),
        ({"$defs": {"a": {"$id": "http://[x"}}, "$ref": "#/$defs/a"}, "/$defs/a/$id"),
    ],
)
def test_references_that_are_not_uris_are_invalid(schema, pointer):
    with pytest.raises(corral.InvalidSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer


def test_huge_values_check_exactly(byte_vocab):
    # A multiple test on an enum member whose quotient exceeds Decimal's precision.
    schema = {"enum": [1e308, 3], "multipleOf": 4}
    c = compiled(schema, byte_vocab)
    assert c.matches(b"1" + b"0" * 308)
    assert not c.matches(b"3")
    with pytest.raises(corral.EmptyLanguageError):  # 10**308 / 0.7 is no integer
        corral.Grammar.json_schema({"enum": [1e308, 3], "multipleOf": 0.7})


# --------------------------------------------------------------------- empty branches


@pytest.mark.parametrize(
    "schema,docs",
    [
        ({"type": "object", "patternProperties": {".*": {"type": "integer"}}}, [{}, {"a": 1}, {"a": "s"}, {"": 2}]),
        ({"type": "object", "patternProperties": {"": {"type": "integer"}}}, [{}, {"a": 1}, {"a": "s"}]),
        (
            {"type": "object", "properties": {"grade": {"type": "integer"}}, "patternProperties": {"^grade$": {"minimum": 1}}},
            [{"grade": 0}, {"grade": 3}, {"grade": "a"}, {"x": 1}],
        ),
        (
            {"type": "object", "patternProperties": {"^a": {"type": "integer"}, "a": {"minimum": 2}}, "additionalProperties": False},
            [{"ab": 3}, {"ab": 1}, {"ba": 5}, {"b": 1}],
        ),
        ({"anyOf": [{"type": "string", "pattern": "^a$", "not": {"pattern": "a"}}, {"type": "null"}]}, [None, "a", "b"]),
        ({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 6, "multipleOf": 7}, {"type": "boolean"}]}, [True, 7, 0, 3]),
        ({"type": "object", "properties": {"a": {"type": "string", "maxLength": 2, "pattern": "^abc"}}}, [{}, {"a": "ab"}, {"b": 1}]),
    ],
)
def test_empty_branches_are_dropped(byte_vocab, schema, docs):
    agrees(compiled(schema, byte_vocab), schema, docs)


@pytest.mark.parametrize("schema", [{"type": "string", "pattern": "^$"}, {"type": "string", "not": {"pattern": "^$"}}, {"prefixItems": [{"not": {"pattern": "^$", "maxLength": 0}}]}])
def test_a_pattern_of_the_empty_string_compiles(byte_vocab, schema):
    # Its regex source is empty; `//` would have started a comment in the grammar text.
    agrees(compiled(schema, byte_vocab), schema, ["", "a", ["", 1], ["a"], 3])


def test_a_wholly_empty_schema_is_an_empty_language():
    with pytest.raises(corral.EmptyLanguageError):
        corral.Grammar.json_schema({"type": "string", "pattern": "^a$", "not": {"pattern": "a"}})


J = r"(?:[^\"\\\u0000-\u001f]|\\[\\\"bfnrt])"


@pytest.mark.parametrize(
    "term,nonempty",
    [
        (f"and!(/{J}*/, not!(/[\\s\\S]*/))", False),
        (f"and!(/{J}*/, not!(/a/))", True),
        ("and!(/[0-9]+/, not!(/[0-9]*/))", False),
        ('and!("abc", not!("abc" | "x"))', False),
        ('and!(/a\\/b/, not!("a/b"))', False),
        ("and!((/ab/ | /cd/), not!(/ab/))", True),
        ("and!(/x{2,4}/, /x{5}/)", False),
        ("and!(/x{2,5}/, /x{5}/)", True),
        ("/[^\\s\\S]/", False),
    ],
)
def test_emptiness_check_agrees_with_the_engine(term, nonempty):
    from corral import _core

    assert _core.expression_is_empty(term) is not nonempty
    if nonempty:
        _core.Grammar.cfg(f"start ::= {term} ;", "ebnf", "start", None, None)
    else:
        with pytest.raises(corral.InvalidGrammarError, match="matches no string"):
            _core.Grammar.cfg(f"start ::= {term} ;", "ebnf", "start", None, None)


# --------------------------------------------------------------------- property_order="any"

ANY_ORDER_SCHEMAS = [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "maxProperties": 0},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "maxProperties": 0},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"], "maxProperties": 1},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "minProperties": 2, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}, "maxProperties": 2},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a", "b"], "additionalProperties": False},
    {"type": "object", "properties": {"a": {"$ref": "#"}}, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"const": 1}, "b": {"const": 2}}, "required": ["a"], "minProperties": 1, "maxProperties": 1},
]


def _objects(rng, keys, count):
    values = [0, 1, 2, "s", True, None, {}, {"a": 1}]
    return [{k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, len(keys)))} for _ in range(count)]


@pytest.mark.parametrize("index", range(len(ANY_ORDER_SCHEMAS)))
def test_any_property_order_compiles_and_agrees(byte_vocab, index):
    schema = ANY_ORDER_SCHEMAS[index]
    rng = random.Random(index)
    try:
        c = compiled(schema, byte_vocab, property_order="any")
    except corral.EmptyLanguageError:
        assert not any(jsonschema.Draft202012Validator(schema).is_valid(d) for d in _objects(rng, ["a", "b", "c"], 60))
        return
    agrees(c, schema, _objects(rng, ["a", "b", "c"], 60), reorder=False)


def test_any_property_order_on_the_existing_schemas(byte_vocab):
    import test_json_schema as existing

    schemas = [existing.PERSON] + existing.SLICE_SCHEMAS
    for schema in schemas:
        for order in ("schema", "any"):
            corral.compile(corral.Grammar.json_schema(schema, property_order=order), byte_vocab)


# --------------------------------------------------------------------- multipleOf


@pytest.mark.parametrize("step", [7, 6, 9, 10, 100, 3, 12])
def test_integer_multiple_of_agrees_with_jsonschema(byte_vocab, step):
    rng = random.Random(step)
    for extra in ({"type": "integer"}, {"type": "number", "minimum": -50, "exclusiveMaximum": 300}, {"not": {"multipleOf": step}}):
        schema = dict(extra) if "not" in extra else dict(extra, multipleOf=step)
        c = compiled(schema, byte_vocab)
        validator = jsonschema.Draft202012Validator(schema)
        for _ in range(200):
            n = rng.randint(-1000, 1000) if rng.random() < 0.7 else rng.randint(-40, 40) * step
            assert c.matches(str(n).encode()) == validator.is_valid(n), (schema, n)


@pytest.mark.parametrize("step", ["0.5", "0.25", "0.01", "1.5", "2.5", "0.1"])
def test_fractional_multiple_of_is_exact(byte_vocab, step):
    rng = random.Random(step)
    d = Decimal(step)
    for lo, hi in ((None, None), (-3, 10)):
        schema = {"type": "number", "multipleOf": float(step)}
        if lo is not None:
            schema.update(minimum=lo, maximum=hi)
        c = compiled(schema, byte_vocab)
        for _ in range(200):
            x = Decimal(rng.randint(-2000, 2000)) / Decimal(10 ** rng.randint(0, 3)) if rng.random() < 0.6 else Decimal(rng.randint(-30, 30)) * d
            inside = lo is None or lo <= x <= hi
            expected = inside and (Fraction(x) / Fraction(d)).denominator == 1
            assert c.matches(str(x).encode()) == expected, (schema, str(x))


def test_oversized_multiple_of_names_its_pointer():
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema({"properties": {"a": {"multipleOf": 1000003}}})
    assert info.value.pointer == "/properties/a/multipleOf"


# --------------------------------------------------------------------- recursion and depth


def test_in_place_self_reference_is_its_least_solution(byte_vocab):
    c = compiled({"anyOf": [{"$ref": "#"}, {"type": "null"}]}, byte_vocab)
    assert c.matches(b"null")
    assert not c.matches(b"1") and not c.matches(b"[]")


def test_self_reference_through_not_is_refused():
    with pytest.raises(corral.UnsupportedSchemaError, match="own negation"):
        corral.Grammar.json_schema({"not": {"$ref": "#"}})


def test_recursion_that_never_ends_is_dropped(byte_vocab):
    # An object that requires itself forever has no finite value: only null is left.
    schema = {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/forever"}], "$defs": {"forever": {"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/forever"}}}}}
    c = compiled(schema, byte_vocab)
    assert c.matches(b"null") and not c.matches(b'{"a":null}')
    with pytest.raises(corral.EmptyLanguageError):
        corral.Grammar.json_schema(schema["$defs"]["forever"] | {"$defs": schema["$defs"]})


def _nested(keyword, depth, leaf):
    schema = leaf
    for _ in range(depth):
        schema = {keyword: schema} if keyword != "properties" else {"properties": {"a": schema}}
    return schema


def test_deep_items_compile(byte_vocab):
    c = compiled(_nested("items", 250, {"type": "integer"}), byte_vocab)
    assert c.matches(("[" * 250 + "1" + "]" * 250).encode())
    assert not c.matches(("[" * 250 + '"x"' + "]" * 250).encode())


@pytest.mark.parametrize("keyword,depth", [("properties", 1000), ("items", 600), ("not", 600), ("allOf", 300)])
def test_too_deep_schemas_hit_a_limit_with_a_pointer(keyword, depth):
    leaf = {"type": "integer"}
    schema = _nested(keyword, depth, leaf) if keyword != "allOf" else leaf
    if keyword == "allOf":
        for _ in range(depth):
            schema = {"allOf": [schema]}
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(schema)
    # Each level is two JSON values deep (a keyword's object, then its value) but for items.
    assert info.value.limit == "max_schema_document_depth"
    assert info.value.pointer.startswith("/" + keyword)


def _chain(n, make):
    defs = {f"d{i}": make(i) for i in range(n)}
    defs[f"d{n}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def test_deep_in_place_reference_chains_compile_up_to_the_limit_then_refuse(byte_vocab):
    make = lambda i: {"$ref": f"#/$defs/d{i + 1}", "minimum": -i}  # noqa: E731 - read in place
    c = corral.compile(corral.Grammar.json_schema(_chain(200, make)), byte_vocab)
    assert c.matches(b"0") and not c.matches(b"-1")
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(_chain(400, make))
    assert info.value.limit == "max_schema_depth"
    assert info.value.pointer.startswith("/$defs/d")
    assert "256" in str(info.value)


def test_long_cycles_of_definitions_compile(byte_vocab):
    # Each definition's property refers to the next, the last to the first: value rules
    # nest 1,000 deep while being built (real schemas with many definitions do this).
    n = 1000
    schema = {"$defs": {f"d{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{(i + 1) % n}"}}} for i in range(n)}, "$ref": "#/$defs/d0"}
    c = compiled(schema, byte_vocab)
    assert c.matches(b'{"a":{"a":{}}}') and not c.matches(b'{"a":1}')


def test_too_long_chains_of_values_hit_a_limit():
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(_chain(4200, lambda i: {"items": {"$ref": f"#/$defs/d{i + 1}"}}))
    assert info.value.limit == "max_schema_value_depth"
    assert "4096" in str(info.value)


def test_deep_enum_values_hit_a_limit():
    value = 1
    for _ in range(2000):
        value = [value]
    with pytest.raises(corral.LimitExceededError):
        corral.Grammar.json_schema({"enum": [value]})


# --------------------------------------------------------------------- unbounded work


def test_enum_members_are_deduplicated_by_json_equality(byte_vocab):
    schema = {"enum": [1, 1.0, True, "a", "a", {"x": [1]}, {"x": [1.0]}] * 1000}
    # As many rules and terminals as the enum of its four distinct members (one more
    # distinct member makes more of them).
    size = repr(corral.Grammar.json_schema(schema)._inner)
    assert size == repr(corral.Grammar.json_schema({"enum": [1, True, "a", {"x": [1]}]})._inner)
    assert size != repr(corral.Grammar.json_schema({"enum": [1, True, "a", {"x": [1]}, {"x": [2]}]})._inner)
    c = compiled(schema, byte_vocab)
    agrees(c, schema, [1, True, "a", {"x": [1]}, 2, False, {"x": [2]}])


def test_large_enums_translate(byte_vocab):
    members = list(range(20_000))
    c = compiled({"enum": members}, byte_vocab)
    assert c.matches(b"19999") and not c.matches(b"20000")
    objects = [{"a": i} for i in range(5_000)]
    c = compiled({"enum": objects}, byte_vocab)
    assert c.matches(b'{"a":4999}') and not c.matches(b'{"a":5000}')


def test_translation_respects_max_compile_ms():
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"enum": list(range(200_000))}, limits=corral.Limits(max_compile_ms=1))
    assert info.value.limit == "max_compile_ms"
    assert "translating" in str(info.value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "minItems": 10**9},
        {"type": "array", "contains": {"type": "integer"}, "minContains": 10**6},
        {"type": "array", "contains": {"type": "integer"}, "maxContains": 10**6},
        {"type": "string", "minLength": 10**9},
    ],
)
def test_huge_counts_are_refused_not_spelled_out(schema):
    with pytest.raises(corral.LimitExceededError):
        corral.Grammar.json_schema(schema)


def test_large_min_items_is_a_counted_repetition(byte_vocab):
    c = compiled({"type": "array", "items": {"type": "integer"}, "minItems": 300, "maxItems": 301}, byte_vocab)
    assert c.matches(("[" + ",".join(["1"] * 300) + "]").encode())
    assert not c.matches(("[" + ",".join(["1"] * 299) + "]").encode())
    assert not c.matches(("[" + ",".join(["1"] * 302) + "]").encode())


def test_long_bounded_arrays_are_counted_by_the_parser(byte_vocab):
    # maxItems past what a chain of rules holds: the parser counts the items.
    schema = {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}, "minItems": 70, "maxItems": 1000}
    c = compiled(schema, byte_vocab)
    doc = lambda n: ("[" + ",".join(["[1]"] * n) + "]").encode()  # noqa: E731
    for n, want in ((69, False), (70, True), (999, True), (1000, True), (1001, False)):
        assert c.matches(doc(n)) is want, n
    m = c.matcher()
    for b in doc(1000)[:-1]:
        assert m.advance(b)
    assert not m.is_allowed(ord(",")) and m.is_allowed(ord("]"))
    # A bound no chain of rules could spell (was a limit): compiles, small.
    big = compiled({"type": "array", "items": {"type": "object"}, "maxItems": 5_000_000}, byte_vocab)
    assert big.matches(b"[{},{}]") and not big.matches(b"[{},]")


# --------------------------------------------------------------------- random documents


ORACLE_SCHEMAS = [
    {"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 3}, "b": {"type": "string", "maxLength": 2}}, "required": ["a"]},
    {"type": "object", "patternProperties": {"^a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    {"type": "object", "propertyNames": {"enum": ["a", "b", "c"]}, "minProperties": 2},
    {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
    {"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "integer", "minimum": 0, "maximum": 20, "multipleOf": 4}]},
    {"type": "object", "properties": {"a": {"$ref": "#"}}, "additionalProperties": False},
]


def _random_value(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.4:
        return rng.choice([0, 1, 3, 4, 12, 21, -3, "", "s", "abc", True, None])
    if r < 0.7:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = rng.sample(["a", "b", "c", "ab", "x"], rng.randint(0, 3))
    return {k: _random_value(rng, depth + 1) for k in keys}


@pytest.mark.parametrize("index", range(len(ORACLE_SCHEMAS)))
def test_random_documents_agree_with_jsonschema(byte_vocab, index):
    schema = ORACLE_SCHEMAS[index]
    rng = random.Random(100 + index)
    agrees(compiled(schema, byte_vocab), schema, [_random_value(rng) for _ in range(150)])


def _random_schema(rng, depth=0):
    """A random schema over the keywords corral translates (no format: jsonschema treats it
    as an annotation; no contains: the test's key reordering does not see it; integer
    steps only: jsonschema divides floats)."""
    if depth > 2:
        return rng.choice([True, {"type": "integer"}, {"type": "string"}, {}])
    out = {}
    sub = lambda: _random_schema(rng, depth + 1)  # noqa: E731
    for _ in range(rng.randint(1, 3)):
        k = rng.choice(
            ["type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "multipleOf", "minLength", "maxLength", "pattern", "items",
             "prefixItems", "minItems", "maxItems", "properties", "patternProperties", "additionalProperties", "required", "minProperties",
             "maxProperties", "propertyNames", "anyOf", "oneOf", "allOf", "not", "if", "dependentRequired"]
        )
        out[k] = {
            "type": lambda: rng.choice(["integer", "string", "object", "array", "null", "number", "boolean", ["integer", "string"]]),
            "enum": lambda: [rng.choice([0, 1, "a", "ab", None, True, [1], {"a": 1}]) for _ in range(rng.randint(1, 3))],
            "const": lambda: rng.choice([0, 1, "a", None, {"a": 1}, [1]]),
            "minimum": lambda: rng.choice([-2, 0, 1, 3, 2.5]),
            "maximum": lambda: rng.choice([-2, 0, 1, 3, 2.5]),
            "exclusiveMinimum": lambda: rng.choice([-2, 0, 1, 3, 2.5]),
            "multipleOf": lambda: rng.choice([2, 3, 7, 10]),
            "minLength": lambda: rng.randint(0, 3),
            "maxLength": lambda: rng.randint(0, 3),
            "pattern": lambda: rng.choice(["^a", "b$", "a", "^$", ".*", "^(a|b)$"]),
            "items": sub,
            "prefixItems": lambda: [sub() for _ in range(rng.randint(1, 2))],
            "minItems": lambda: rng.randint(0, 3),
            "maxItems": lambda: rng.randint(0, 3),
            "properties": lambda: {key: sub() for key in rng.sample(["a", "b", "ab", "x"], rng.randint(1, 2))},
            "patternProperties": lambda: {rng.choice(["^a", ".*", "^ab$", "b"]): sub()},
            "additionalProperties": lambda: rng.choice([False, True, sub()]),
            "required": lambda: rng.sample(["a", "b", "ab", "x"], rng.randint(1, 2)),
            "minProperties": lambda: rng.randint(0, 1),
            "maxProperties": lambda: rng.randint(0, 3),
            "propertyNames": lambda: rng.choice([{"enum": ["a", "b"]}, {"pattern": "^a"}, {"maxLength": 1}]),
            "anyOf": lambda: [sub() for _ in range(rng.randint(1, 3))],
            "oneOf": lambda: [sub() for _ in range(rng.randint(1, 3))],
            "allOf": lambda: [sub() for _ in range(rng.randint(1, 3))],
            "not": sub,
            "if": sub,
            "dependentRequired": lambda: {"a": ["b"]},
        }[k]()
        if k == "if":
            out["then"], out["else"] = sub(), sub()
    return out


@pytest.mark.parametrize("seed", range(8))
def test_random_schemas_agree_with_jsonschema(byte_vocab, seed):
    """Random schemas and documents: corral accepts a document exactly when jsonschema
    says it is valid, in both property orders, and the shortest completion is valid."""
    rng = random.Random(1000 + seed)
    compiled_count = 0
    for _ in range(25):
        schema = _random_schema(rng)
        validator = jsonschema.Draft202012Validator(schema)
        docs = [_random_value(rng) for _ in range(30)]
        for property_order in ("schema", "any"):
            try:
                c = compiled(schema, byte_vocab, property_order=property_order)
            except corral.EmptyLanguageError:
                assert not any(validator.is_valid(d) for d in docs), schema
                continue
            except (corral.SchemaError, corral.LimitExceededError):
                continue
            compiled_count += 1
            assert validator.is_valid(json.loads(c.matcher().completion())), schema
            for doc in docs:
                shown = grammar_order(schema, doc, options=SPEC_EXACT_OPTIONS) if property_order == "schema" else doc
                text = json.dumps(shown, **COMPACT)
                assert c.matches(text.encode()) == validator.is_valid(doc), (schema, property_order, text)
    assert compiled_count >= 20


# --------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    "schema,pointer",
    [
        # Two resources with one URI (found by the fuzzer with the test suite's tree schema).
        ({"$id": "http://x.test/a", "$defs": {"b": {"$id": "http://x.test/a", "type": "string"}}}, "/$defs/b/$id"),
        ({"$defs": {"b": {"$id": "b.json"}, "c": {"$id": "b.json", "type": "string"}}, "$ref": "b.json"}, "/$defs/c/$id"),
        # Two anchors of one name in one resource.
        ({"$defs": {"b": {"$anchor": "x", "type": "integer"}, "c": {"$anchor": "x"}}, "$ref": "#x"}, "/$defs/c/$anchor"),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"b": {"$id": "#x"}, "c": {"$id": "#x"}}}, "/definitions/c/$id"),
        ({"$schema": "http://json-schema.org/draft-04/schema#", "definitions": {"b": {"id": "#x"}, "c": {"id": "#x"}}}, "/definitions/c/id"),
    ],
)
def test_an_identifier_of_two_subschemas_is_refused(schema, pointer):
    with pytest.raises(corral.InvalidSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer, str(info.value)


def test_the_same_anchor_in_two_resources_is_fine(byte_vocab):
    schema = {"$defs": {"b": {"$id": "http://x.test/b", "$anchor": "x", "type": "integer"}, "c": {"$id": "http://x.test/c", "$anchor": "x", "type": "string"}}, "$ref": "http://x.test/c#x"}
    c = compiled(schema, byte_vocab)
    assert c.matches(b'"s"') and not c.matches(b"1")


def test_an_unknown_metaschema_in_a_subschema_is_refused():
    # jsonschema reads the subschema as draft 3 (where anyOf does not exist); corral must
    # not silently read it as another draft.
    schema = {"items": {"not": {"anyOf": [False, False], "$schema": "http://json-schema.org/draft-03/schema#"}}}
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == "/items/not/$schema"


def test_a_subschema_that_names_another_draft_is_read_with_it(byte_vocab):
    # The specifications give `$schema` a meaning at a resource root only; like jsonschema,
    # corral reads a subschema that names another draft with that draft's keywords. Found
    # by the fuzzer: `0.0` is an integer in draft 7, not in draft 4.
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "allOf": [{"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}]}
    grammar = compiled(schema, byte_vocab)
    assert grammar.matches(b"0") and not grammar.matches(b"0.0")
    assert not jsonschema.Draft7Validator(schema).is_valid(0.0) and jsonschema.Draft7Validator(schema).is_valid(0)
    # Reached through a `$ref`, the subschema keeps the draft it names.
    by_ref = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}}, "$ref": "#/definitions/n"}
    assert not compiled(by_ref, byte_vocab).matches(b"0.0")
    # One that holds a `$ref` is refused: validators read the target with different drafts
    # (jsonschema with the draft named here, the specification with the target's own).
    holds_ref = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}}, "allOf": [{"$schema": "http://json-schema.org/draft-04/schema#", "$ref": "#/definitions/n"}]}
    with pytest.raises(corral.UnsupportedSchemaError) as info:
        corral.Grammar.json_schema(holds_ref)
    assert info.value.pointer == "/allOf/0/$schema"
    # The same draft again, or a resource of its own, is fine.
    same = {"$schema": "http://json-schema.org/draft-07/schema#", "allOf": [{"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"}]}
    assert compiled(same, byte_vocab).matches(b"0.0")
    resource = {"$defs": {"a": {"id": "http://x.test/a", "$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}}, "$ref": "http://x.test/a"}
    assert not compiled(resource, byte_vocab).matches(b"0.0") and compiled(resource, byte_vocab).matches(b"0")


def test_a_bound_too_long_for_the_number_automaton_is_a_limit_error():
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"multipleOf": 0.0001, "minimum": 1e308})
    # The bound's 309 digits nest too deep before any automaton is built.
    assert info.value.limit == "regex_nest_limit"
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"multipleOf": 0.0001, "minimum": 1e40}, limits=corral.Limits(max_number_states=20))
    assert info.value.limit == "max_number_states" and info.value.pointer == "/multipleOf"


def test_many_resources_declaring_one_dynamic_anchor_stay_cheap_to_refuse():
    # 2,000 resources that each declare `x` and refer to it dynamically: following every
    # way in with every first declarer would cost their product (and more per reference);
    # the search marks a resource reached with several as undecidable at once.
    n = 2000
    defs = {f"r{i}": {"$id": f"r{i}", "$dynamicAnchor": "x", "type": "array", "items": {"$dynamicRef": "#x"}} for i in range(n)}
    schema = {"$defs": defs, "anyOf": [{"$ref": f"r{i}"} for i in range(n)]}
    with pytest.raises(corral.UnsupportedSchemaError, match="depends on the way") as info:
        corral.Grammar.json_schema(schema, limits=corral.Limits(max_compile_ms=3000))
    assert info.value.pointer == "/$defs/r0/items/$dynamicRef"
    # Entered through one of them only, every reference means that one's: exact.
    one = {"$defs": defs, "$ref": "r7"}
    assert not corral.Grammar.json_schema(one, limits=corral.Limits(max_compile_ms=3000)).warnings
