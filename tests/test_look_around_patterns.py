"""Assertions in JSON Schema patterns, compiled exactly: every string decided as a regex
engine decides it.

Look-aheads right after a leading `^` (`^(?!relationships$|links$)\\w+$`, a common way to
exclude names) are checked against Python's ``re.search`` with ``re.ASCII`` (for these
patterns ECMAScript and Python agree), every string of up to five characters over a
small alphabet. Look-around anywhere, look-behinds of any width, word boundaries and
anchors inside a pattern are checked against a JavaScript engine's verdicts,
``tests/corpus/ecma_search.jsonl`` (written by ``tools/gen_ecma_search_cases.py``).
Every string is tried as a JSON string value, so the automata over the JSON encoding are
what is checked.
"""

from __future__ import annotations

import itertools
import json
import pathlib
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
    # Look-around elsewhere is an assertion where it stands, in keys too.
    keys = corral.compile(corral.Grammar.json_schema({"propertyNames": {"pattern": r"[a-z](?<!x)$"}}), byte_vocab)
    assert keys.matches(b'{"ab":1}') and not keys.matches(b'{"ax":1}')
    # What would look past a look-behind's own text is refused, at the pattern.
    with pytest.raises(corral.UnsupportedSchemaError, match="inside a look-behind") as info:
        corral.Grammar.json_schema({"type": "string", "pattern": r"(?<=a(?!b))c"})
    assert info.value.pointer == "/pattern"


def _search_cases() -> tuple[list[str], list[tuple[str, str]]]:
    lines = (pathlib.Path(__file__).parent / "corpus" / "ecma_search.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [tuple(json.loads(line)) for line in lines[1:] if line]


STRINGS, SEARCH_CASES = _search_cases()


@pytest.mark.parametrize("pattern,verdicts", SEARCH_CASES, ids=[f"p{i}" for i in range(len(SEARCH_CASES))])
def test_assertions_match_as_a_javascript_engine_does(pattern, verdicts, byte_vocab):
    try:
        compiled = corral.compile(corral.Grammar.json_schema({"type": "string", "pattern": pattern}), byte_vocab)
    except corral.CorralError as e:
        # A pattern no string satisfies (`(?!)`) leaves no JSON string either.
        assert "matches no string" in str(e) and "1" not in verdicts, (pattern, e)
        return
    wrong = [s for s, v in zip(STRINGS, verdicts, strict=True) if compiled.matches(json.dumps(s, ensure_ascii=False).encode()) != (v == "1")]
    assert not wrong, (pattern, wrong[:5])


def test_the_corpus_holds_every_kind_of_assertion():
    patterns = [p for p, _ in SEARCH_CASES]
    for construct in ("(?=", "(?!", "(?<=", "(?<!", r"\b", r"\B"):
        assert sum(construct in p for p in patterns) >= 10, construct
    # Look-behinds of variable width, which Python's `re` refuses.
    assert any(re.search(r"\(\?<[=!][^)]*[*+]", p) for p in patterns)
