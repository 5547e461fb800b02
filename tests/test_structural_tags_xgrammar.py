r"""Structural tags mean what XGrammar means by them: on a vocabulary of single bytes, corral's
mask and XGrammar's are compared at every step of random walks through descriptions that
cover every format corral supports (XGrammar is the oracle here, as the format is its own).

The comparison leaves out where corral chooses differently, as docs/tool_calls.md says:
- bytes from 0x80 up: XGrammar allows bytes that cannot be UTF-8 in free text; corral
  allows only whole characters;
- whitespace corral allows around a JSON value inside a tag, where XGrammar allows none;
- the descriptions' JSON schemas hold no numbers (corral reads `-0`, XGrammar refuses it)
  and no string lengths (XGrammar's `maxLength` strings take raw control characters and
  no escapes; JSON is the other way round);
- the walks write no backslash where a description has JSON: corral writes each string
  one way, as `json.dumps` does (no `\/`, `\u` only for control characters), XGrammar
  reads every escape.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import xgrammar as xgr

import corral

EOS = 256
WHITESPACE = {9, 10, 13, 32}


def tag(begin: str, content: dict, end: str | list[str]) -> dict:
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def text(value: str) -> dict:
    return {"type": "const_string", "value": value}


ANY = {"type": "any_text"}
ONE = text("1")
ARGS = {"type": "json_schema", "json_schema": {"type": "object", "properties": {"q": {"type": "string"}, "m": {"enum": ["a", "b"]}}, "required": ["q"], "additionalProperties": False}}

DESCRIPTIONS = {
    "sequence and regex": {"type": "sequence", "elements": [text("a"), {"type": "regex", "pattern": "[0-9]{1,3}"}]},
    "or": {"type": "or", "elements": [text("ab"), text("ac")]},
    "free text in a tag": tag("<think>", ANY, "</think>"),
    "JSON in a tag": tag("<f>", ARGS, "</f>"),
    "triggers": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>"), tag("<fn>", text("2"), "</fn>")]},
    "at least one": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "at_least_one": True},
    "stop after first": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "stop_after_first": True},
    "exactly one": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "at_least_one": True, "stop_after_first": True},
    "excludes": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "excludes": ["<|end|>"]},
    "separator": {"type": "tags_with_separator", "tags": [tag("<a>", ANY, "</a>"), tag("<b>", text("2"), "</b>")], "separator": "\n"},
    "separator, one or more": {"type": "tags_with_separator", "tags": [tag("<a>", ONE, "</a>")], "separator": ",", "at_least_one": True},
    "separator, at most one": {"type": "tags_with_separator", "tags": [tag("<a>", ONE, "</a>")], "separator": ",", "stop_after_first": True},
    "any text with excludes": {"type": "any_text", "excludes": ["ab", "c"]},
    "reasoning then calls": {"type": "sequence", "elements": [tag("<think>", ANY, "</think>"), {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [tag("<tool_call>", ARGS, "</tool_call>")]}]},
    "free text ends at the tag's end": tag("<x>", {"type": "sequence", "elements": [text("A"), ANY]}, "</x>"),
    "triggers inside a tag": tag("<x>", {"type": "triggered_tags", "triggers": ["<y"], "tags": [tag("<y>", ONE, "</y>")]}, "</x>"),
    "end list": tag("<x>", ANY, ["</x>", "<end>"]),
    "GBNF": {"type": "grammar", "grammar": 'root ::= "a" [0-9]+ | "b"'},
    "repetitions": {"type": "sequence", "elements": [{"type": "repeat", "content": text("ab"), "min": 1, "max": 3}, {"type": "star", "content": text("c")}, {"type": "optional", "content": text("d")}]},
    "an end that is a trigger's prefix": {"type": "triggered_tags", "triggers": ["<a"], "tags": [tag("<a>", ANY, "<a/>")]},
    "a trigger shorter than its begin": {"type": "triggered_tags", "triggers": ["ab"], "tags": [tag("abc", ONE, "ba")]},
    "separator inside a tag": tag("[", {"type": "tags_with_separator", "tags": [tag("{", ANY, "}")], "separator": ","}, "]"),
    "nested tags": tag("<o>", tag("<i>", ANY, "</i>"), "</o>"),
}


@pytest.fixture(scope="module")
def engines():
    tokens = [bytes([b]) for b in range(256)] + [b"</s>"]
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[EOS])
    info = xgr.TokenizerInfo(tokens, stop_token_ids=[EOS])
    return vocab, xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)


def compared(bitmask: np.ndarray) -> set[int]:
    """The allowed ids of a one-row mask that the comparison looks at."""
    words = np.asarray(bitmask).reshape(-1).view(np.uint32)
    return {i for i in [*range(128), EOS] if (int(words[i // 32]) >> (i % 32)) & 1}


@pytest.mark.parametrize("name", DESCRIPTIONS)
def test_masks_equal_xgrammars_along_random_walks(engines, name):
    vocab, compiler = engines
    spec = {"type": "structural_tag", "format": DESCRIPTIONS[name]}
    # XGrammar allows whitespace runs of any length in JSON; corral's bound is raised past
    # the walks' length.
    compiled = corral.compile(corral.Grammar.structural_tag(spec, max_whitespace=64), vocab, cache=False)
    theirs = compiler.compile_structural_tag(json.dumps(spec))
    rng = random.Random(name)
    has_json = "json_schema" in json.dumps(spec)
    ours_bm, theirs_bm = corral.allocate_bitmask(1, vocab.size), xgr.allocate_token_bitmask(1, vocab.size)
    for _ in range(30):
        m, x, out = compiled.matcher(), xgr.GrammarMatcher(theirs), b""
        for _ in range(60):
            m.fill_bitmask(ours_bm)
            x.fill_next_token_bitmask(theirs_bm)
            ours, their = compared(ours_bm), compared(theirs_bm.numpy())
            if has_json and ours - their <= WHITESPACE and their <= ours and out[-1:] in (b">", b"}"):
                ours = their  # whitespace around a JSON value: corral's choice
            assert ours == their, f"after {out!r}: corral only {sorted(ours - their)}, XGrammar only {sorted(their - ours)}"
            if not ours or (EOS in ours and rng.random() < 0.15):
                break
            printable = [t for t in ours if t != EOS and (32 <= t < 127 or t == 10) and not (has_json and t == ord("\\"))]
            t = rng.choice(sorted(printable or ours))
            if t == EOS:
                break
            assert m.advance(t) and x.accept_token(t)
            out += bytes([t])
