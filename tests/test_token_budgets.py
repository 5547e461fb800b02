"""Budgets in tokens (`max_tokens` of a structural tag's `any_text` and `any_tokens`,
`Grammar.tool_calls(reasoning_budget=...)`): the tokens that start inside the budgeted
text (the one it ends in included, the one holding its opening marker not) are at most
the budget, as XGrammar counts them; after that many only the closing marker can follow. Checked token by token against an oracle that splits
the output at the marker and counts, on random tokenizations of random texts, with the
mask agreeing with `advance` at every step; and through rollbacks, ambiguous
descriptions and special tokens."""

from __future__ import annotations

import random

import pytest

import corral
from _util import accepts_tokens, allowed_ids

ALPHABET = [b"a", b"b", b"<", b"/", b"t", b">", b"x", b"\n", "é".encode()]
MULTI = [b"ab", b"ba", b"</t>", b"</", b"t>", b"b</t>", b"</t>x", b"<t>", b"<t>a", b"aaaa", b"a\n"]
TOKENS = ALPHABET + MULTI + [b"</s>"]
EOS = len(TOKENS) - 1
VOCAB = corral.Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[EOS])


def think(budget: int, rest: dict | None = None) -> corral.CompiledGrammar:
    tag = {"type": "tag", "begin": "<t>", "content": {"type": "any_text", "max_tokens": budget}, "end": "</t>"}
    spec = {"type": "sequence", "elements": [tag, rest or {"type": "const_string", "value": "x"}]}
    return corral.compile(corral.Grammar.structural_tag(spec), VOCAB)


def oracle(ids: list[int], budget: int) -> bool:
    """Is the whole output `<t>REGION</t>x`, REGION free of `</t>`, with at most `budget`
    tokens starting inside REGION?"""
    text = b"".join(TOKENS[t] for t in ids)
    if not text.startswith(b"<t>") or not text.endswith(b"</t>x"):
        return False
    start, end = 3, len(text) - 5
    if end < start or b"</t>" in text[start:end]:
        return False
    spent, pos = 0, 0
    for t in ids:
        spent += start <= pos < end
        pos += len(TOKENS[t])
    return spent <= budget


def split(text: bytes, rng: random.Random) -> list[int]:
    """A random tokenization of `text` with the vocabulary's tokens."""
    ids, pos = [], 0
    while pos < len(text):
        fits = [i for i, t in enumerate(TOKENS[:EOS]) if text.startswith(t, pos)]
        i = rng.choice(fits)
        ids.append(i)
        pos += len(TOKENS[i])
    return ids


@pytest.mark.parametrize("budget", [1, 2, 3, 5])
def test_the_budget_counts_the_tokens_holding_the_text(budget):
    compiled = think(budget)
    rng = random.Random(budget)
    pieces = [b"a", b"b", b"<", b"/", b"t", b">", b"\n", "é".encode(), b"ab", b"</", b"t>"]
    agreed = {True: 0, False: 0}
    for _ in range(300):
        region = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        ids = split(b"<t>" + region + b"</t>x", rng)
        want = oracle(ids, budget)
        got, why = accepts_tokens(compiled, VOCAB, ids)  # the mask agrees with advance at each step
        assert got == want, (b"|".join(TOKENS[t] for t in ids), why)
        agreed[want] += 1
    assert agreed[True] > 20 and agreed[False] > 20, agreed


def test_after_the_budget_only_the_end_can_follow():
    compiled = think(2)
    m = compiled.matcher()
    for t in (b"<t>", b"a", b"b"):
        assert m.advance(TOKENS.index(t))
    allowed = {TOKENS[int(i)] for i in allowed_ids(m, VOCAB)}
    assert allowed == {b"</t>", b"</", b"<", b"</t>x"}, allowed
    # A rollback returns to the count before.
    m.rollback(1)
    assert {b"b", b"aaaa", b"b</t>"} <= {TOKENS[int(i)] for i in allowed_ids(m, VOCAB)}
    # Text given without tokens is not counted.
    assert compiled.matches(b"<t>" + b"a" * 40 + b"</t>x")


def test_a_budget_of_zero_and_budgets_beside_other_branches():
    zero = think(0)
    assert zero.matches(b"<t></t>x") and not zero.matches(b"<t>a</t>x")
    # Another branch without a budget keeps long text allowed: the budget holds per match.
    either = {"type": "or", "elements": [
        {"type": "tag", "begin": "<t>", "content": {"type": "any_text", "max_tokens": 1}, "end": "</t>"},
        {"type": "tag", "begin": "<t>", "content": {"type": "any_text", "excludes": ["x"]}, "end": "</t>"},
    ]}
    compiled = corral.compile(corral.Grammar.structural_tag(either), VOCAB)
    ids = [TOKENS.index(t) for t in (b"<t>", b"a", b"b", b"a", b"</t>")]
    assert accepts_tokens(compiled, VOCAB, ids)[0]
    ids = [TOKENS.index(t) for t in (b"<t>", b"a", b"x", b"</t>")]
    assert not accepts_tokens(compiled, VOCAB, ids)[0]


def test_runs_of_tokens_with_a_budget():
    tokens = [bytes([b]) for b in range(256)] + [b"<think>", b"</think>", b"</s>"]
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[258], special_token_ids=[256, 257])
    spec = {"type": "tag", "begin": {"type": "token", "token": "<think>"}, "content": {"type": "any_tokens", "max_tokens": 3}, "end": {"type": "token", "token": "</think>"}}
    compiled = corral.compile(corral.Grammar.structural_tag(spec), vocab)
    assert accepts_tokens(compiled, vocab, [256, *b"abc", 257])[0]
    assert not accepts_tokens(compiled, vocab, [256, *b"abcd", 257])[0]


def test_a_reasoning_budget_for_tool_calls():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    grammar = corral.Grammar.tool_calls(tools, reasoning=("<t>", "</t>"), reasoning_budget=2)
    compiled = corral.compile(grammar, VOCAB)
    assert accepts_tokens(compiled, VOCAB, [TOKENS.index(t) for t in (b"<t>", b"ab", b"b</t>", b"x")])[0]
    assert not accepts_tokens(compiled, VOCAB, [TOKENS.index(t) for t in (b"<t>", b"a", b"b", b"a", b"</t>")])[0]
    with pytest.raises(corral.GrammarError, match="reasoning_budget"):
        corral.Grammar.tool_calls(tools, reasoning_budget=2)
    with pytest.raises(corral.GrammarError, match="reasoning_budget"):
        corral.Grammar.tool_calls(tools, reasoning=True, reasoning_budget=-1)
