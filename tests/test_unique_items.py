"""`uniqueItems`: arrays whose items come from a finite set of values keep them distinct.

The oracle is the language itself: for a schema whose arrays are made of a few values,
every valid document (in corral's compact layout) is listed by ``itertools``, and at every
step of random walks the mask must allow exactly the tokens after which the text is still
the start of one of them (EOS exactly where it is one). Every document listed is checked
with ``jsonschema`` first, and so is every walk's completion.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any, Literal

import jsonschema
import pydantic
import pytest

import corral
from _util import allowed_set, piece_vocabulary, walk_listed_language


def distinct_arrays(values: list[Any], lo: int = 0, hi: int | None = None) -> list[list[Any]]:
    """Every array of distinct members of `values`, in every order, lo to hi items."""
    top = len(values) if hi is None else min(hi, len(values))
    return [list(p) for n in range(lo, top + 1) for p in itertools.permutations(values, n)]


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# (schema, every valid document): the documents are listed independently of corral.
CASES: list[tuple[dict, list[Any]]] = [
    # "a" is a prefix of "ab": after ["ab", a new item may still start with "a".
    (
        {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "ab", "b"]}},
        distinct_arrays(["a", "ab", "b"]),
    ),
    (
        {"type": "array", "uniqueItems": True, "minItems": 1, "maxItems": 3, "items": {"enum": [{"k": "1"}, {"k": "2"}, None, True]}},
        distinct_arrays([{"k": "1"}, {"k": "2"}, None, True], 1, 3),
    ),
    # Two arrays in one object, each with its own items.
    (
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "uniqueItems": True, "items": {"enum": ["x", "xy"]}},
                "on": {"type": "array", "uniqueItems": True, "items": {"type": "boolean"}, "minItems": 1},
            },
            "required": ["tags", "on"],
            "additionalProperties": False,
        },
        [{"tags": t, "on": o} for t in distinct_arrays(["x", "xy"]) for o in distinct_arrays([False, True], 1)],
    ),
    # Arrays of distinct-item arrays: the outer one may repeat, the inner ones may not.
    (
        {"type": "array", "maxItems": 2, "items": {"type": "array", "uniqueItems": True, "items": {"enum": ["p", "q"]}}},
        [list(outer) for n in range(3) for outer in itertools.product(distinct_arrays(["p", "q"]), repeat=n)],
    ),
]

ALPHABET = b'[]{}",:aAbkpqxy12nulltruefalse'


@pytest.mark.parametrize("case", range(len(CASES)))
def test_masks_equal_the_listed_language(case):
    schema, values = CASES[case]
    for v in values:
        jsonschema.validate(v, schema)
    documents = [dump(v) for v in values]
    vocab = piece_vocabulary(documents, case)
    compiled = corral.compile(corral.Grammar.json_schema(schema), vocab)
    for text in walk_listed_language(compiled, vocab, documents, case, walks=12, stop=0.2):
        jsonschema.validate(json.loads(text), schema)


def test_duplicates_are_refused_exactly_where_they_complete():
    schema = {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "ab", 1, 1.0, {"k": [1, 2]}]}}
    compiled = corral.compile(corral.Grammar.json_schema(schema), piece_vocabulary([], 0))
    for fresh, dup in [(b'["ab","a', b'["ab","ab'), (b"[1,", b"[1,1"), (b'[{"k":[1,2]},', b'[{"k":[1,2]},{"k":[1,2]}')]:
        assert compiled.matches(fresh + (b'"]' if fresh.endswith(b"a") else b'"a"]'))
        assert not compiled.matches(dup + (b'"]' if dup.endswith(b"b") else b"]"))
    # `1` and `1.0` are one member: once `1` is written, the array holds no other number.
    assert not compiled.matches(b"[1,1]")
    assert compiled.matches(b'[1,"a"]')


def test_a_pydantic_set_of_literals_keeps_its_items_distinct():
    class Flags(pydantic.BaseModel):
        colors: set[Literal["red", "green", "blue"]]

    compiled = corral.compile(corral.Grammar.json_schema(Flags), piece_vocabulary([], 0))
    assert compiled.matches(b'{"colors":["green","red"]}')
    assert not compiled.matches(b'{"colors":["red","red"]}')


# --- strings of unboundedly many values: kept distinct by the matcher ------------------

STRING_ALPHABET = b'[]",ab'


def viable(text: bytes) -> bool | None:
    """Reads `text` (bytes of STRING_ALPHABET) as the start of a JSON array of distinct strings:
    False if nothing can follow it, True if it is a whole array, None if it is a start."""
    if not text:
        return None
    if text[:1] != b"[":
        return False
    seen: set[bytes] = set()
    i, state, current = 1, "first", b""
    while i < len(text):
        c = text[i : i + 1]
        if state in ("first", "item"):
            if c == b'"':
                state, current = "string", b""
            elif c == b"]" and state == "first":
                state = "done"
            else:
                return False
        elif state == "string":
            if c == b'"':
                if current in seen:
                    return False
                seen.add(current)
                state = "after"
            else:
                current += c
        elif state == "after":
            if c == b",":
                state = "item"
            elif c == b"]":
                state = "done"
            else:
                return False
        else:
            return False
        i += 1
    return True if state == "done" else None


def test_masks_keep_free_strings_distinct_at_every_step():
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    rng = random.Random(7)
    pieces = sorted({bytes(rng.choice(STRING_ALPHABET) for _ in range(rng.randint(1, 5))) for _ in range(300)})
    pieces += [b'","', b'"a","a"', b'a","a', b'["a","a"]', b'"ab","a']
    vocab = corral.Vocabulary.from_token_bytes([*pieces, None], eos_token_ids=[len(pieces)])
    eos = len(pieces)
    compiled = corral.compile(corral.Grammar.json_schema(schema), vocab)
    for _ in range(30):
        m = compiled.matcher()
        text = b""
        for _ in range(40):
            want = {t for t, p in enumerate(pieces) if viable(text + p) is not False}
            if viable(text) is True:
                want.add(eos)
            got = allowed_set(m, vocab)
            assert got == want, (text, sorted(pieces[t] if t < eos else b"<eos>" for t in got ^ want)[:6])
            if not got - {eos} or (eos in got and rng.random() < 0.3):
                break
            # Lean on the tokens that may repeat a string, so that the checks are tried.
            risky = [t for t in got if t != eos and pieces[t].count(b'"') >= 1]
            t = rng.choice(risky if risky and rng.random() < 0.7 else sorted(got - {eos}))
            assert m.advance(t)
            text += pieces[t]
        completion = m.completion()
        assert completion is not None
        value = json.loads(text + completion)
        jsonschema.validate(value, schema)


def test_free_strings_in_a_real_vocabulary_walk_to_valid_documents(deepseek):
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string", "maxLength": 3}},
            "groups": {"type": "array", "maxItems": 3, "items": {"type": "array", "uniqueItems": True, "items": {"type": "string", "pattern": "^[ab]{1,2}$"}}},
        },
        "required": ["tags", "groups"],
        "additionalProperties": False,
    }
    compiled = corral.compile(corral.Grammar.json_schema(schema), deepseek.vocab)
    eos = deepseek.vocab.eos_token_ids[0]
    rng = random.Random(3)
    for _ in range(20):
        m = compiled.matcher()
        out = b""
        for _ in range(60):
            allowed = sorted(allowed_set(m, deepseek.vocab))
            assert allowed, out
            if eos in allowed and rng.random() < 0.3:
                break
            choices = [t for t in allowed if t != eos] or allowed
            t = rng.choice(choices)
            if t == eos:
                break
            assert m.advance(t)
            out += deepseek.vocab.token_bytes(t)
        completion = m.completion()
        assert completion is not None, out
        jsonschema.validate(json.loads(out + completion), schema)
    # A repeated string is refused where it closes, in matches() too.
    assert compiled.matches(b'{"tags":["a","ab"],"groups":[["a","b"],["a","b"]]}')
    assert not compiled.matches(b'{"tags":["a","a"],"groups":[]}')
    assert not compiled.matches(b'{"tags":[],"groups":[["ab","ab"]]}')


def test_distinct_strings_survive_rollback_and_forced_tokens(byte_vocab):
    # Two strings in all: named by the grammar, so the second is forced once the first is written.
    schema = {"type": "array", "uniqueItems": True, "minItems": 2, "maxItems": 2, "items": {"type": "string", "pattern": "^(x|y)$"}}
    m = corral.compile(corral.Grammar.json_schema(schema), byte_vocab).matcher()
    for b in b'["x",':
        assert m.advance(b)
    assert bytes(t for t in m.forced_tokens() if t < 256) == b'"y"]'
    # Free strings: the check follows rollbacks.
    free = corral.compile(corral.Grammar.json_schema({"type": "array", "uniqueItems": True, "items": {"type": "string"}}), byte_vocab)
    m = free.matcher()
    for b in b'["ab","a':
        assert m.advance(b)
    assert m.advance(ord("b"))
    assert not m.is_allowed(ord('"')) and not m.advance(ord('"'))  # "ab" again
    m.rollback(1)
    assert m.is_allowed(ord('"'))  # "a" is new
    m.rollback(4)  # back to `["ab`: the first string is open again, and no string is written
    assert m.advance(ord('"')) and m.advance(ord(",")) and m.advance(ord('"'))
    assert m.advance(ord("a")) and m.advance(ord("b")) and not m.is_allowed(ord('"'))


def test_distinct_strings_hold_inside_structural_tags_and_json_in_grammars(byte_vocab):
    tags = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    schema = {"type": "object", "properties": {"tags": tags}}
    spec = {"type": "structural_tag", "format": {"type": "tag", "begin": "<call>", "content": {"type": "json_schema", "json_schema": schema}, "end": "</call>"}}
    compiled = corral.compile(corral.Grammar.structural_tag(spec), byte_vocab)
    assert compiled.matches(b'<call>{"tags": ["a", "b"]}</call>') and not compiled.matches(b'<call>{"tags": ["a", "a"]}</call>')
    m = compiled.matcher()
    for b in b'<call>{"tags": ["ab", "ab':
        assert m.advance(b)
    assert not m.is_allowed(ord('"')) and m.is_allowed(ord("c"))
    lark = corral.compile(corral.Grammar.lark(f"start: \"say \" %json {json.dumps(schema)}"), byte_vocab)
    assert lark.matches(b'say {"tags":["a","b"]}') and not lark.matches(b'say {"tags":["a","a"]}')
    # Items from a finite set need no run-time check: the grammar alone keeps them apart.
    finite = {"type": "object", "properties": {"tags": {**tags, "items": {"enum": ["a", "b"]}}}}
    spec["format"]["content"]["json_schema"] = finite
    compiled = corral.compile(corral.Grammar.structural_tag(spec), byte_vocab)
    assert compiled.matches(b'<call>{"tags": ["a", "b"]}</call>') and not compiled.matches(b'<call>{"tags": ["a", "a"]}</call>')
