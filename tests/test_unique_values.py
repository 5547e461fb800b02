"""`uniqueItems` over items of unboundedly many values (numbers, objects, arrays, mixed).

The matcher keeps such items distinct at run time and compares them as JSON values: `1`
equals `1.0`, objects equal whatever their key order. Three oracles:

- where the items can take only a few values (though no `enum` names them), the listed
  language: every valid document is spelled out by ``itertools``, checked with
  ``jsonschema``, and at every step of random walks the mask must allow exactly the tokens
  after which the text still starts one of them;
- Python's own equality of parsed JSON, for duplicates refused exactly at the byte that
  completes them;
- ``jsonschema`` on the completion of every walk, with every allowed token checked for a
  way on (no dead end).
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import jsonschema
import pytest

import corral
from _util import allowed_set, piece_vocabulary, walk_listed_language


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def distinct_arrays(values: list[Any], hi: int | None = None) -> list[list[Any]]:
    top = len(values) if hi is None else min(hi, len(values))
    return [list(p) for n in range(top + 1) for p in itertools.permutations(values, n)]


def key_orders(obj: dict) -> list[bytes]:
    """Every spelling of a flat object, one per key order."""
    return [b"{" + b",".join(dump(k) + b":" + dump(obj[k]) for k in order) + b"}" for order in itertools.permutations(obj)]


def array_spellings(items: list[list[bytes]]) -> list[bytes]:
    """Every spelling of an array whose item i may be spelled as any of items[i]."""
    return [b"[" + b",".join(choice) + b"]" for choice in itertools.product(*items)]


BOOL_OBJECT = {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"], "additionalProperties": False}
SHORT_BOOL_ARRAYS = {"type": "array", "items": {"type": "boolean"}, "maxItems": 2}
PAIR = {
    "type": "object",
    "properties": {"a": {"type": "boolean"}, "b": {"type": "null"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}

# (schema, options, every valid document as bytes).
CASES: list[tuple[dict, dict, list[bytes]]] = [
    # Two objects in all: after both, `]` is the only way on; after one, the other.
    (
        {"type": "array", "uniqueItems": True, "items": BOOL_OBJECT},
        {},
        [dump(v) for v in distinct_arrays([{"a": True}, {"a": False}])],
    ),
    # Arrays as items: [], [true], ..., [false,false]: seven values, up to three of them.
    (
        {"type": "array", "uniqueItems": True, "maxItems": 3, "items": SHORT_BOOL_ARRAYS},
        {},
        [dump(v) for v in distinct_arrays([list(p) for n in range(3) for p in itertools.product([True, False], repeat=n)], 3)],
    ),
    # Numbers: 0, 1, 2 (integers have one spelling each in corral's output).
    (
        {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 0, "maximum": 2}},
        {},
        [dump(v) for v in distinct_arrays([0, 1, 2])],
    ),
    # Mixed kinds: true, false, [], [null].
    (
        {"type": "array", "uniqueItems": True, "items": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "null"}, "maxItems": 1}]}},
        {},
        [dump(v) for v in distinct_arrays([True, False, [], [None]])],
    ),
    # Tuple positions: the whole array is compared, whatever position an item is at.
    (
        {"type": "array", "uniqueItems": True, "prefixItems": [{"type": "boolean"}, {"type": "boolean"}], "items": False},
        {},
        [dump(v) for v in [[], [True], [False], [True, False], [False, True]]],
    ),
    # Counted by `contains`: one of 2 and 3 exactly, no number twice.
    (
        {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 0, "maximum": 3}, "contains": {"minimum": 2}, "maxContains": 1},
        {},
        [dump(v) for v in distinct_arrays([0, 1, 2, 3]) if sum(x >= 2 for x in v) == 1],
    ),
    # Objects whose keys may come in any order: one value, two spellings; never twice.
    (
        {"type": "array", "uniqueItems": True, "items": PAIR},
        {"property_order": "any"},
        [
            spelled
            for arr in distinct_arrays([{"a": True, "b": None}, {"a": False, "b": None}])
            for spelled in array_spellings([key_orders(o) for o in arr])
        ],
    ),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_masks_equal_the_listed_language(case):
    schema, options, documents = CASES[case]
    for d in documents:
        jsonschema.validate(json.loads(d), schema)
    vocab = piece_vocabulary(documents, case, longest=9)
    compiled = corral.compile(corral.Grammar.json_schema(schema, **options), vocab)
    for text in walk_listed_language(compiled, vocab, documents, case, walks=15, stop=0.15):
        assert compiled.matches(text)
        jsonschema.validate(json.loads(text), schema)


@pytest.mark.parametrize(
    ("schema", "options", "first", "again", "other"),
    [
        # Numbers: one value, several spellings.
        ({"items": {"type": "number"}}, {}, b"1", b"1.0", b"1.5"),
        ({"items": {"type": "number"}}, {"spec_exact": True}, b"1", b"10e-1", b"10e-2"),
        ({"items": {"type": "number"}}, {"spec_exact": True}, b"0.5", b"5E-1", b"5E-2"),
        ({"items": {"type": "number"}}, {"spec_exact": True}, b"0", b"-0.0", b"-0.1"),
        # Objects in another key order.
        ({"items": {**PAIR, "properties": {"a": {"type": "integer"}, "b": {"type": "null"}}}}, {"property_order": "any"}, b'{"a":1,"b":null}', b'{"b":null,"a":1}', b'{"b":null,"a":2}'),
        ({"items": {"type": "object"}}, {"spec_exact": True}, b'{"x":[1,{"y":2}]}', b'{"x":[1.0,{"y":2e0}]}', b'{"x":[1,{"y":3}]}'),
        # Nested arrays, item by item.
        ({"items": {"type": "array"}}, {}, b"[1,[2]]", b"[1,[2]]", b"[1,[2,2]]"),
        # Strings beside other kinds: compared as values too.
        ({"items": {"type": ["string", "integer"]}}, {}, b'"a"', b'"a"', b'"ab"'),
    ],
)
def test_duplicates_are_refused_exactly_where_they_complete(byte_vocab, schema, options, first, again, other):
    full = {"type": "array", "uniqueItems": True, **schema}
    assert json.loads(first) == json.loads(again) and json.loads(first) != json.loads(other)
    compiled = corral.compile(corral.Grammar.json_schema(full, **options), byte_vocab)
    m = compiled.matcher()
    head = b"[" + first + b","
    for b in head:
        assert m.advance(b), head
    # Every byte of the repeat is fine up to the one after which it can only be the
    # earlier item: the byte that closes it (a string's quote, a bracket), or for a number
    # the `,` or `]` after it. That byte is refused, by the mask and by advance.
    fixed_by_last = again[-1:] in (b"}", b"]", b'"')
    for b in again[:-1] if fixed_by_last else again:
        assert m.is_allowed(b) and m.advance(b), again
    for close in again[-1:] if fixed_by_last else b",]":
        assert close not in allowed_set(m, byte_vocab) and not m.is_allowed(close) and not m.advance(close)
    assert not compiled.matches(head + again + b"]")
    assert compiled.matches(head + other + b"]")
    assert compiled.matches(b"[" + again + b"]")


def test_an_item_that_can_only_repeat_is_refused_before_it_closes(byte_vocab):
    compiled = corral.compile(corral.Grammar.json_schema({"type": "array", "uniqueItems": True, "items": BOOL_OBJECT}), byte_vocab)
    m = compiled.matcher()
    for b in b'[{"a":true},{"a":':
        assert m.advance(b)
    # `t` can only become {"a":true} again.
    assert allowed_set(m, byte_vocab) == {ord("f")}
    for b in b'false}':
        assert m.advance(b)
    # Both values written: no new item can start.
    assert allowed_set(m, byte_vocab) == {ord("]")}
    # Integers past 0 (and `-0` is 0): after 0 is written, `-` is still fine (`-1`), `-0` is not.
    ints = corral.compile(corral.Grammar.json_schema({"type": "array", "uniqueItems": True, "items": {"type": "integer"}}), byte_vocab)
    m = ints.matcher()
    for b in b"[0,-":
        assert m.advance(b)
    assert not m.is_allowed(ord("0")) and m.is_allowed(ord("1"))


def test_rollback_completion_and_forced_tokens_keep_items_distinct(byte_vocab):
    schema = {"type": "array", "uniqueItems": True, "minItems": 3, "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 1}, "maxItems": 1}}
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    m = compiled.matcher()
    # Three distinct values are all the items allow: the completion names them.
    done = m.completion()
    assert done is not None and sorted(json.loads(done)) == [[], [0], [1]]
    for b in b"[[1],[":
        assert m.advance(b)
    assert m.completion() in (b"0],[]]", b"],[0]]")
    for b in b"0],":
        assert m.advance(b)
    # Only [] is left: forced, byte by byte.
    assert bytes(t for t in m.forced_tokens() if t < 256) == b"[]]"
    m.rollback(3)  # back to `[[1],[`: [0] is not written any more
    assert m.is_allowed(ord("0")) and m.is_allowed(ord("]"))
    assert not m.is_allowed(ord("1"))  # [1 can only be [1] again


def test_walks_in_a_real_vocabulary_finish_and_validate(deepseek):
    """Random walks over real-world shapes, with no dead end: every allowed token has a way
    on (checked on a copy for a sample of tokens at every step), and every completion
    validates."""
    schemas = [
        ({"type": "object", "properties": {"ids": {"type": "array", "uniqueItems": True, "items": {"type": "integer", "maximum": 30}}}, "required": ["ids"]}, {}),
        (
            {
                "type": "array",
                "uniqueItems": True,
                "minItems": 2,
                "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 2}, "port": {"type": "integer"}}, "required": ["name"], "additionalProperties": False},
            },
            {"property_order": "any"},
        ),
        ({"type": "array", "uniqueItems": True, "items": {"type": "array", "uniqueItems": True, "items": {"type": "number"}}}, {"spec_exact": True}),
        # Travis CI's notification targets: strings that may repeat, or distinct objects.
        (
            {
                "oneOf": [
                    {"type": "array", "items": {"type": "string", "maxLength": 1}},
                    {"type": "array", "uniqueItems": True, "minItems": 1, "items": {"type": "object", "properties": {"on": {"type": "integer", "maximum": 3}}, "additionalProperties": False}},
                ]
            },
            {},
        ),
    ]
    vocab = deepseek.vocab
    eos = vocab.eos_token_ids[0]
    rng = random.Random(11)
    for schema, options in schemas:
        compiled = corral.compile(corral.Grammar.json_schema(schema, **options), vocab)
        for _ in range(6):
            m = compiled.matcher()
            out = b""
            for _ in range(40):
                allowed = sorted(allowed_set(m, vocab))
                assert allowed, out
                for t in rng.sample(allowed, min(4, len(allowed))):
                    if t != eos:
                        ahead = m.copy()
                        assert ahead.advance(t)
                        rest = ahead.completion()
                        assert rest is not None, out + vocab.token_bytes(t)
                        jsonschema.validate(json.loads(out + vocab.token_bytes(t) + rest), schema)
                if eos in allowed and rng.random() < 0.2:
                    break
                # Lean on short tokens (digits, brackets): they repeat items more often.
                short = [t for t in allowed if t != eos and len(vocab.token_bytes(t)) <= 2]
                choices = short if short and rng.random() < 0.8 else [t for t in allowed if t != eos]
                if not choices:
                    break
                t = rng.choice(choices)
                assert m.advance(t)
                out += vocab.token_bytes(t)
            completion = m.completion()
            assert completion is not None, out
            jsonschema.validate(json.loads(out + completion), schema)


def test_distinct_arrays_beside_arrays_that_may_repeat_are_told_apart_by_their_first_item(byte_vocab):
    # The value is an array of strings that may repeat, or of distinct objects.
    schema = {
        "anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "uniqueItems": True, "items": {"type": "object", "properties": {"k": {"type": "integer"}}}},
        ]
    }
    compiled = corral.compile(corral.Grammar.json_schema(schema, spec_exact=True), byte_vocab)
    for doc, valid in [(b'["a","a"]', True), (b'[{"k":1},{"k":2}]', True), (b'[{"k":1},{"k":1.0}]', False), (b'[{},{}]', False), (b'[{"k":1},"a"]', False)]:
        assert compiled.matches(doc) is valid, doc
        assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(doc)) is valid, doc
    m = compiled.matcher()
    for b in b'["a","a':
        assert m.advance(b)
    assert ord('"') in allowed_set(m, byte_vocab)
    m = compiled.matcher()
    for b in b'[{"k":1},{"k":1':
        assert m.advance(b)
    assert ord("}") not in allowed_set(m, byte_vocab) and ord("2") in allowed_set(m, byte_vocab)
    # Where the first items may be alike, the check could not tell the arrays apart.
    alike = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "array", "uniqueItems": True, "items": {"type": ["object", "string"]}}]}
    with pytest.raises(corral.UnsupportedSchemaError, match="first item") as e:
        corral.Grammar.json_schema(alike)
    assert e.value.pointer == "/anyOf/1/uniqueItems"


def test_the_search_for_a_new_value_is_bounded_by_a_limit(byte_vocab):
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "object"}}
    tight = corral.Limits(max_fresh_item_steps=1)
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab, limits=tight)
    m = compiled.matcher()
    for b in b'[{"ab":1}':
        assert m.advance(b)
    # After a comma the next item may become the first one: the search for a way to make
    # it new needs more than one byte.
    with pytest.raises(corral.LimitExceededError, match="max_fresh_item_steps"):
        m.fill_bitmask(corral.allocate_bitmask(1, byte_vocab.size), 0)
    with pytest.raises(corral.LimitExceededError, match="max_fresh_item_steps"):
        m.advance(ord(","))
    # The default bound is far from reached.
    roomy = corral.compile(corral.Grammar.json_schema(schema), byte_vocab).matcher()
    for b in b'[{"ab":1},{"a':
        assert roomy.advance(b)
    assert ord("b") in allowed_set(roomy, byte_vocab)


def test_distinct_values_hold_inside_structural_tags_and_json_in_grammars(byte_vocab):
    """Only the JSON value is read as JSON: the text around it may look like JSON and
    repeat what it likes."""
    schema = {"type": "object", "properties": {"ids": {"type": "array", "uniqueItems": True, "items": {"type": "integer"}}}}
    counted = {"type": "array", "uniqueItems": True, "items": {"type": "integer"}, "contains": {"minimum": 3}}
    tag = {"type": "tag", "begin": "<c>", "content": {"type": "json_schema", "json_schema": schema}, "end": "</c>"}
    spec = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<c>"], "tags": [tag]}}
    compiled = corral.compile(corral.Grammar.structural_tag(spec), byte_vocab)
    assert compiled.matches(b'say [1,1] {"ids":[1]}<c>{"ids":[1,2]}</c>')
    assert not compiled.matches(b'<c>{"ids":[1,1.0]}</c>')
    assert not compiled.matches(b'<c>{"ids":[2]}</c> then <c>{"ids":[3,2,3]}</c>')
    m = compiled.matcher()
    for b in b'[1,1] <c>{"ids":[10,10':
        assert m.advance(b)
    allowed = allowed_set(m, byte_vocab)
    assert ord(",") not in allowed and ord("]") not in allowed and ord("0") in allowed
    rest = m.completion()
    assert rest is not None and compiled.matches(b'[1,1] <c>{"ids":[10,10' + rest)
    # Counted by `contains`, in a grammar's %json.
    lark = corral.compile(corral.Grammar.lark(f"start: \"ids \" %json {json.dumps(counted)} \" [1,1]\""), byte_vocab)
    assert lark.matches(b"ids [3,1] [1,1]") and not lark.matches(b"ids [3,1,3] [1,1]") and not lark.matches(b"ids [1,1] [1,1]")
    m = lark.matcher()
    for b in b"ids [3,1,":
        assert m.advance(b)
    assert m.is_allowed(ord("2")) and m.advance(ord("3")) and not m.is_allowed(ord("]")) and not m.is_allowed(ord(","))
    m.rollback(1)
    assert m.is_allowed(ord("2"))


@pytest.mark.parametrize(
    "make",
    [
        lambda: corral.Grammar.json_schema({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}, "uniqueItems": True}),
        lambda: corral.Grammar.json_schema({"type": "array", "items": {"type": "string", "maxLength": 1}, "uniqueItems": True}),
        lambda: corral.Grammar.structural_tag(
            {
                "type": "structural_tag",
                "format": {
                    "type": "tag",
                    "begin": "<f>",
                    "content": {
                        "type": "json_schema",
                        "json_schema": {
                            "type": "object",
                            "properties": {"x": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}, "uniqueItems": True}},
                            "additionalProperties": {"type": "integer"},
                        },
                    },
                    "end": "</f>",
                },
            }
        ),
    ],
)
def test_random_sentences_keep_items_distinct(make, byte_vocab):
    # The grammar's random sentences (what the fuzz targets feed back as documents that
    # must be accepted) are drawn again where they repeat an item of a distinct array,
    # inside structural tags too.
    grammar = make()
    compiled = corral.compile(grammar, byte_vocab)
    longer = 0
    for seed in range(300):
        sentence = grammar._inner.sample(seed, 64)
        assert sentence is not None
        assert compiled.matches(sentence), sentence
        longer += b"," in sentence.split(b"[", 1)[-1].split(b"]", 1)[0]
    # Not vacuous: many sentences hold arrays of two items or more.
    assert longer > 30
