"""Look-aheads right after a pattern's leading `^` (`^(?!relationships$|links$)\\w+$`, a
common way to exclude names): compiled exactly, every string decided as a regex engine
decides it.

The oracle is Python's ``re.search`` with ``re.ASCII``: for these patterns (ASCII
classes, no flags, look-aheads at the start) ECMAScript and Python agree. Every string of
up to five characters over a small alphabet is tried, as a JSON string value.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest

import corral

PATTERNS = [
    r"^(?!relationships$|links$)\w[-\w_]*$",
    r"^(?!\.)(?!\./).+",
    r"^(?=[A-Z])[a-zA-Z0-9.,;()\s]*[^.,;!?: ]$",
    r"^(?!ab)a.*",
    r"^(?=a|b)(?!ab$).{0,3}$",
    r"^(?!^a\.|b\.)[ab.]+",
    r"^(?!(?:a|b)\.)\w",
]
ALPHABET = "abAl.s/ "


@pytest.mark.parametrize("pattern", PATTERNS)
def test_leading_lookaheads_match_as_a_regex_engine_does(pattern, byte_vocab):
    compiled = corral.compile(corral.Grammar.json_schema({"type": "string", "pattern": pattern}), byte_vocab)
    oracle = re.compile(pattern, re.ASCII)
    seen = {True: 0, False: 0}
    for n in range(6):
        for chars in itertools.product(ALPHABET, repeat=n) if n < 5 else _sample(n):
            s = "".join(chars)
            want = oracle.search(s) is not None
            assert compiled.matches(json.dumps(s).encode()) == want, (pattern, s)
            seen[want] += 1
    assert seen[True] and seen[False], seen


def _sample(n: int):
    rng = __import__("random").Random(n)
    return (tuple(rng.choice(ALPHABET) for _ in range(n)) for _ in range(3000))


def test_leading_lookaheads_in_keys_enums_and_negations(byte_vocab):
    schema = {
        "type": "object",
        "patternProperties": {r"^(?!relationships$|links$)[a-z]+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    assert compiled.matches(b'{"data":1,"linksx":2}') and not compiled.matches(b'{"links":1}')
    # An enum member is checked against the pattern (the checker splits it the same way).
    members = corral.compile(corral.Grammar.json_schema({"enum": ["ab", "ac"], "pattern": r"^(?!ab)a"}), byte_vocab)
    assert members.matches(b'"ac"') and not members.matches(b'"ab"')
    negated = corral.compile(corral.Grammar.json_schema({"type": "string", "not": {"pattern": r"^(?!x)a"}}), byte_vocab)
    assert negated.matches(b'"b"') and negated.matches(b'"x"') and not negated.matches(b'"ab"')
    # Look-around elsewhere stays unsupported, at the pattern.
    with pytest.raises(corral.UnsupportedSchemaError, match="look-around"):
        corral.Grammar.json_schema({"type": "string", "pattern": r"a(?!b)"})
