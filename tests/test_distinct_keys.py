"""JSON Schema output never repeats a key inside one object, and the masks stay exact.

The grammar of a schema with open key classes (``additionalProperties``,
``patternProperties``) allows repeated keys; the matcher's distinct-keys check removes
them. Random walks over small vocabularies check, at every step and for every token:

* a token the mask allows leads somewhere: ``completion()`` exists and the whole text is
  JSON without a repeated key (at any depth) that ``jsonschema`` validates;
* a token the grammar alone allows but the mask refuses either closes a key already in its
  object, or leaves a key half written that starts a key already in its object (the case
  where only repeated keys could finish it).
"""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest

import corral
from corral import _core

SCHEMAS = [
    {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2, "maxProperties": 4},
    # Keys `abc` or x+: after `"ab` only `abc` can follow, so a second `"ab` is a dead end.
    {"type": "object", "patternProperties": {"^(abc|x+)$": {"type": "integer"}}, "additionalProperties": False, "minProperties": 2},
    # Every key has at most 2 characters: each half-written key has finitely many endings.
    {"type": "object", "propertyNames": {"maxLength": 2}, "additionalProperties": {"type": "integer"}, "minProperties": 3},
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "patternProperties": {"^b": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}},
        "additionalProperties": {"type": "array", "items": {"$ref": "#"}},
    },
    {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "null"}, "minProperties": 2}, "minItems": 2},
]

ALPHABET = b'{}[]":,01abcx'


def vocabulary(seed: int) -> tuple[corral.Vocabulary, list[bytes]]:
    rng = random.Random(seed)
    tokens = [bytes([b]) for b in range(256)]
    tokens += [b'"a', b'"ab', b'bc"', b'c":', b'":1', b'1,"', b',"x', b'"x":1,"x', b'"a":1,"a"', b'{"ab']
    tokens += sorted({bytes(rng.choice(ALPHABET) for _ in range(rng.randint(2, 5))) for _ in range(150)})
    return corral.Vocabulary.from_token_bytes(tokens + [b"</s>"], eos_token_ids=[len(tokens)]), tokens


def allowed(matcher, width: int) -> set[int]:
    mask = np.zeros((1, width), dtype=np.int32)
    matcher.fill_bitmask(mask)
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
    return {int(i) for i in np.flatnonzero(bits)}


def scan(text: bytes):
    """Reads JSON text as the distinct-keys check does: 'repeat' if it closes a key already
    in its object, else ('open', key so far, keys of its object) inside a key, else None."""
    frames: list[dict] = []
    mode, key, escape = "out", b"", False
    for b in text:
        c = bytes([b])
        if mode == "out":
            if c in b"{[":
                frames.append({"object": c == b"{", "expect": c == b"{", "keys": set()})
            elif c in b"}]" and frames:
                frames.pop()
            elif c in b",:" and frames and frames[-1]["object"]:
                frames[-1]["expect"] = c == b","
            elif c == b'"':
                mode, key = ("key" if frames and frames[-1]["object"] and frames[-1]["expect"] else "str"), b""
        elif escape:
            escape = False
            key += c if mode == "key" else b""
        elif c == b"\\":
            escape = True
            key += c if mode == "key" else b""
        elif c == b'"':
            if mode == "key":
                if key in frames[-1]["keys"]:
                    return "repeat"
                frames[-1]["keys"].add(key)
                frames[-1]["expect"] = False
            mode = "out"
        elif mode == "key":
            key += c
    if mode == "key":
        return ("open", key, frames[-1]["keys"])
    return None


def no_repeats(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


# property_order="any" matters where properties are named.
CASES = [(i, "schema") for i in range(len(SCHEMAS))] + [(3, "any")]


@pytest.mark.parametrize("index,order", CASES)
def test_masks_are_exact_with_distinct_keys(index, order):
    schema = SCHEMAS[index]
    grammar = corral.Grammar.json_schema(schema, property_order=order)
    # The same grammar without the check: what the grammar alone allows.
    plain = grammar._inner._without_distinct_keys()
    validator = jsonschema.Draft202012Validator(schema)
    vocab, tokens = vocabulary(index)
    width = (vocab.size + 31) // 32
    compiled = corral.compile(grammar, vocab)
    compiled_plain = _core.compile(plain, vocab._inner, None, False)
    rng = random.Random(index * 7 + len(order))
    refused = checked = 0
    for _walk in range(6):
        m, p = compiled.matcher(), compiled_plain.matcher()
        out = b""
        for _ in range(24):
            ok = allowed(m, width)
            for t in allowed(p, width) - ok:
                if t >= len(tokens):
                    continue
                refused += 1
                seen = scan(out + tokens[t])
                assert seen == "repeat" or (
                    seen is not None and any(k.startswith(seen[1]) for k in seen[2])
                ), (out, tokens[t])
            for t in ok:
                if t >= len(tokens):
                    assert m.is_accepting()
                    continue
                probe = m.copy()
                assert probe.advance(t)
                rest = probe.completion()
                assert rest is not None, (out, tokens[t])
                doc = json.loads(out + tokens[t] + rest, object_pairs_hook=no_repeats)
                assert validator.is_valid(doc), (out + tokens[t] + rest)
                checked += 1
            choices = [t for t in ok if t < len(tokens)]
            if not choices:
                break
            # Prefer the tokens that start or close keys, so that objects fill up.
            keyish = [t for t in choices if b'"' in tokens[t] or tokens[t] in (b",", b"a", b"x")]
            t = rng.choice(keyish if keyish and rng.random() < 0.7 else choices)
            assert m.advance(t) and p.advance(t)
            out += tokens[t]
        assert scan(out) != "repeat"
    assert checked > 0 and refused > 0, (checked, refused)


@pytest.mark.parametrize("index,finite", [(0, False), (1, True), (2, True), (3, True), (4, False)])
def test_key_classes_with_finite_endings_are_recognized(index, finite):
    # Where every key class is "any key but the named ones", a half-written key always
    # has infinitely many endings and the matcher checks closed keys only; a class shaped
    # by patterns or propertyNames gets half-written keys checked too.
    grammar = corral.Grammar.json_schema(SCHEMAS[index])
    assert grammar._inner._key_endings_infinite is (not finite)

