"""Unicode property escapes in JSON Schema patterns (`\\p{...}`, `\\P{...}`) against a
JavaScript engine.

The oracle is ``tests/corpus/ecma_properties.jsonl`` (written by
``tools/gen_ecma_property_cases.py`` with node 20: ``new RegExp(p, "u").test(s)``; node is
not needed to run these tests): each pattern is compiled as a JSON Schema ``pattern`` and
must accept exactly the strings the engine finds a match in.
"""

from __future__ import annotations

import json
import pathlib

import pytest

import corral

LINES = (pathlib.Path(__file__).parent / "corpus" / "ecma_properties.jsonl").read_text(encoding="utf-8").splitlines()
STRINGS: list[str] = json.loads(LINES[0])
CASES: list[tuple[str, str]] = [tuple(json.loads(line)) for line in LINES[1:] if line]  # type: ignore[misc]

BYTES = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])


def test_the_corpus_covers_the_ways_of_naming_a_property():
    assert len(CASES) > 100 and len(STRINGS) > 100
    text = " ".join(p for p, _ in CASES)
    for form in (r"\p{L}", r"\P{L}", "General_Category=", "gc=", "Script=", "sc=", "scx=", r"\p{ASCII}", "[^"):
        assert form in text, form


@pytest.mark.parametrize("pattern,verdicts", CASES, ids=[p for p, _ in CASES])
def test_patterns_match_where_the_engine_finds_a_match(pattern, verdicts):
    if pattern == r"\P{Any}":
        # No character at all: no string can match, which a grammar cannot express.
        with pytest.raises(corral.CorralError, match="matches no string"):
            corral.Grammar.json_schema({"type": "string", "pattern": pattern})
        assert "1" not in verdicts
        return
    compiled = corral.compile(corral.Grammar.json_schema({"type": "string", "pattern": pattern}), BYTES)
    wrong = [s for s, v in zip(STRINGS, verdicts, strict=True) if compiled.matches(json.dumps(s, ensure_ascii=False).encode()) != (v == "1")]
    assert not wrong, wrong[:10]
