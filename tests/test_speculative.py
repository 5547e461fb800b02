"""Speculative decoding over the DeepSeek vocabulary: `Matcher.validate_tokens`,
`Matcher.fill_draft_bitmask`, `corral.fill_draft_bitmasks` and `Matcher.fork` agree with
`advance`/`fill_bitmask` one token at a time on random drafts (mostly tokens the constraint
allows, some it refuses), and a draft, accepted or not, leaves the matcher where it was."""

from __future__ import annotations

import random

import numpy as np
import pytest

import corral

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c", 1, 2]}, "uniqueItems": True},
        "n": {"type": "integer"},
    },
    "required": ["name", "tags"],
}

GRAMMARS = {
    "json_schema": lambda: corral.Grammar.json_schema(SCHEMA),
    "regex": lambda: corral.Grammar.regex(r"(ab|[0-9]{2,4}-)+x?"),
    "ebnf": lambda: corral.Grammar.ebnf('s ::= "(" s* ")" | "x" ;'),
    "intersection": lambda: corral.Grammar.regex(r"[(x][()x]*") & corral.Grammar.ebnf('s ::= "(" s* ")" | "x" ;'),
}


def _ids(row: np.ndarray) -> list[int]:
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).tolist()


def _draft(m: corral.Matcher, rng: random.Random, k: int, vocab: corral.Vocabulary) -> list[int]:
    """k tokens along a masked walk from `m`, one in four replaced by any id."""
    probe = m.fork()
    row = corral.allocate_bitmask(1, vocab.size)
    out = []
    for _ in range(k):
        allowed: list[int] = []
        if not probe.is_finished():
            probe.fill_bitmask(row)
            allowed = _ids(row[0])
        t = rng.choice(allowed) if allowed and rng.random() > 0.25 else rng.randrange(vocab.size)
        out.append(t)
        probe.advance(t)
    return out


def _one_by_one(m: corral.Matcher, draft: list[int], vocab: corral.Vocabulary) -> tuple[int, np.ndarray]:
    probe = m.copy()
    rows = corral.allocate_bitmask(len(draft) + 1, vocab.size)
    for i, t in enumerate(draft):
        probe.fill_bitmask(rows, i)
        if not probe.advance(t):
            return i, rows[: i + 1]
    probe.fill_bitmask(rows, len(draft))
    return len(draft), rows


def _state(m: corral.Matcher, vocab: corral.Vocabulary) -> tuple[int, bool, bytes]:
    row = corral.allocate_bitmask(1, vocab.size)
    m.fill_bitmask(row)
    return m.num_tokens, m.is_accepting(), row.tobytes()


@pytest.mark.parametrize("kind", sorted(GRAMMARS))
def test_drafts_agree_with_advance_and_leave_no_trace(deepseek, kind):
    vocab = deepseek.vocab
    compiled = corral.compile(GRAMMARS[kind](), vocab)
    rng = random.Random(kind)
    refused = accepted_all = 0
    for _ in range(6):
        m = compiled.matcher()
        for _ in range(10):
            if m.is_finished():
                break
            k = rng.randint(1, 5)
            draft = _draft(m, rng, k, vocab)
            before = _state(m, vocab)
            n, expect = _one_by_one(m, draft, vocab)
            assert m.validate_tokens(draft) == n
            assert _state(m, vocab) == before
            rows = np.full((k + 1, (vocab.size + 31) // 32), 0x5A5A5A5A, dtype=np.int32)
            assert m.fill_draft_bitmask(draft, rows) == n
            np.testing.assert_array_equal(rows[: n + 1], expect)
            assert (rows[n + 1 :] == 0x5A5A5A5A).all(), "rows past the refused token were written"
            assert _state(m, vocab) == before
            refused += n < k
            accepted_all += n == k
            for t in draft[:n]:
                assert m.advance(t)
            if n and rng.random() < 0.3:
                m.rollback(rng.randint(1, n))
    assert refused and accepted_all, (refused, accepted_all)


def test_batch_of_drafts_in_one_call(deepseek):
    vocab = deepseek.vocab
    rng = random.Random(7)
    matchers, drafts = [], []
    for kind in sorted(GRAMMARS) * 2:
        m = corral.compile(GRAMMARS[kind](), vocab).matcher()
        for t in _draft(m, rng, rng.randint(0, 4), vocab):
            if not m.advance(t):
                break
        matchers.append(m)
        drafts.append(_draft(m, rng, rng.randint(0, 5), vocab))
    total = sum(len(d) + 1 for d in drafts)
    rows = corral.allocate_bitmask(total, vocab.size)
    accepted = corral.fill_draft_bitmasks(matchers, drafts, rows)
    first = 0
    for m, d, n in zip(matchers, drafts, accepted, strict=True):
        want_n, want = _one_by_one(m, d, vocab)
        assert n == want_n
        np.testing.assert_array_equal(rows[first : first + n + 1], want)
        first += len(d) + 1
    # Explicit rows, blocks in reverse order.
    starts = []
    at = total
    for d in drafts:
        at -= len(d) + 1
        starts.append(at)
    again = corral.allocate_bitmask(total, vocab.size)
    assert corral.fill_draft_bitmasks(matchers, drafts, again, starts) == accepted
    for m, d, s, n in zip(matchers, drafts, starts, accepted, strict=True):
        np.testing.assert_array_equal(again[s : s + n + 1], _one_by_one(m, d, vocab)[1])


def test_fork_is_independent(deepseek):
    vocab = deepseek.vocab
    m = corral.compile(GRAMMARS["json_schema"](), vocab).matcher()
    for t in deepseek.encode('{"name":"x","tags":["a"'):
        assert m.advance(t)
    f = m.fork()
    assert type(f) is type(m) and f.num_tokens == m.num_tokens
    for t in deepseek.encode(',"a"'):
        f.advance(t)
    assert f.num_tokens > m.num_tokens
    assert m.validate_tokens(deepseek.encode(',"b"]')) == len(deepseek.encode(',"b"]'))
    i = corral.compile(GRAMMARS["intersection"](), vocab).matcher()
    assert type(i.fork()) is corral.IntersectionMatcher


def test_bad_drafts_are_clear_errors(deepseek):
    vocab = deepseek.vocab
    m = corral.compile(GRAMMARS["regex"](), vocab).matcher()
    rows = corral.allocate_bitmask(3, vocab.size)
    with pytest.raises(corral.MatcherError, match="draft token id"):
        m.validate_tokens([1, vocab.size + 5])
    with pytest.raises(corral.MatcherError, match="out of range"):
        m.fill_draft_bitmask([1, 2, 3], rows)
    with pytest.raises(corral.MatcherError, match="out of range"):
        m.fill_draft_bitmask([1], rows, row=2)
    other = corral.compile(GRAMMARS["ebnf"](), vocab).matcher()
    with pytest.raises(corral.MatcherError, match="given to two drafts"):
        corral.fill_draft_bitmasks([m, other], [[1], [1]], rows, [0, 1])
    with pytest.raises(corral.MatcherError, match="same object"):
        corral.fill_draft_bitmasks([m, m], [[1], []], rows)
    with pytest.raises(corral.MatcherError, match="2 matchers but 1 drafts"):
        corral.fill_draft_bitmasks([m, other], [[1]], rows)
    assert m.num_tokens == 0 and other.num_tokens == 0
