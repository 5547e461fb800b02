"""Combined grammars (``g1 & g2``) as native matchers: the batch path fills their rows like
any other, the caller's limits hold, and the classes behave as compiled grammars and
matchers (parts, copies, pickling, errors)."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

import corral

BAN = corral.Grammar.ban(["the", "and"])
WORDS = corral.Grammar.regex(r"[a-z ]{0,40}")
SENTENCE = corral.Grammar.ebnf('start ::= word (" " word)* "." ; word ::= [a-z]+ ;')


def _allowed(row: np.ndarray, size: int, eos: set[int]) -> list[int]:
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")[:size]
    return [int(t) for t in np.flatnonzero(bits) if int(t) not in eos]


@pytest.mark.parametrize("threads", [1, 3])
def test_batches_mixing_single_and_combined_grammars_fill_like_single_rows(deepseek, threads):
    vocab = deepseek.vocab
    grammars = [WORDS, WORDS & BAN, SENTENCE, SENTENCE & BAN & WORDS, corral.Grammar.regex(r"\d+") & corral.Grammar.regex(r"1\d*")]
    matchers = [corral.compile(g, vocab).matcher() for g in grammars]
    assert [isinstance(m, corral.IntersectionMatcher) for m in matchers] == [False, True, False, True, True]
    rng = random.Random(threads)
    eos = set(vocab.eos_token_ids)
    before = corral.get_num_threads()
    try:
        corral.set_num_threads(threads)
        for _ in range(8):
            rows = list(range(len(matchers)))
            rng.shuffle(rows)
            batch = corral.allocate_bitmask(len(matchers), vocab.size)
            batch[:] = 0x5A5A5A5A  # the batch must overwrite every word
            corral.fill_bitmasks(matchers, batch, rows)
            for m, row in zip(matchers, rows, strict=True):
                one = corral.allocate_bitmask(1, vocab.size)
                m.fill_bitmask(one)
                assert np.array_equal(one[0], batch[row]), repr(m)
                allowed = _allowed(one[0], vocab.size, eos)
                if allowed:
                    assert m.advance(rng.choice(allowed))
    finally:
        corral.set_num_threads(before)


def test_a_dead_end_in_a_batch_names_the_combined_grammars(byte_vocab):
    disjoint = corral.compile(corral.Grammar.choice(["talk"]) & corral.Grammar.ban(["talk"]), byte_vocab).matcher()
    single = corral.compile(corral.Grammar.regex("t[a-z]*"), byte_vocab).matcher()
    for m in (disjoint, single):
        for b in b"tal":
            assert m.advance(b)
    batch = corral.allocate_bitmask(2, byte_vocab.size)
    with pytest.raises(corral.DeadEndError, match="no token is allowed by all 2 combined grammars after 3 tokens"):
        corral.fill_bitmasks([single, disjoint], batch)
    assert disjoint.forced_tokens() == [] and disjoint.num_tokens == 3


def test_the_callers_limits_hold(byte_vocab):
    both = corral.Grammar.regex("(ab){10}") & corral.Grammar.regex("[ab]*")
    limits = corral.Limits(max_forced_tokens=3)
    capped = corral.compile(both, byte_vocab, limits=limits)
    assert capped.limits == limits
    m = capped.matcher()
    assert m.forced_tokens() == list(b"aba")
    assert m.advance(ord("a")) and m.forced_tokens() == list(b"bab")
    assert corral.compile(both, byte_vocab).matcher().forced_tokens() == list(b"ab" * 10) + [256]
    # Each part is compiled under them too.
    with pytest.raises(corral.LimitExceededError, match="max_dfa_states"):
        corral.compile(corral.Grammar.regex("[ab]*") & corral.Grammar.regex("a{50}"), byte_vocab, limits=corral.Limits(max_dfa_states=10))


def test_compiled_intersections_are_compiled_grammars(byte_vocab):
    a, b, c = (corral.compile(corral.Grammar.regex(p), byte_vocab) for p in ("[a-z]+", "[a-m]*", ".*e.*"))
    ab = corral.CompiledIntersection([a, b])
    nested = corral.CompiledIntersection([ab, c])
    assert isinstance(nested, corral.CompiledGrammar) and type(nested) is corral.CompiledIntersection
    assert [p is q for p, q in zip(nested.parts, [a, b, c], strict=True)] == [True] * 3
    assert repr(nested) == "<corral.CompiledIntersection of 3 grammars>"
    assert nested.vocab_size == byte_vocab.size and nested.limits == corral.Limits()
    assert nested.matches(b"bed") and not nested.matches(b"bad") and not nested.matches(b"zed")
    m = nested.matcher()
    assert isinstance(m, corral.Matcher) and type(m) is corral.IntersectionMatcher
    for t in b"be":
        assert m.advance(t)
    copy = m.copy()
    assert type(copy) is corral.IntersectionMatcher and type(m.__copy__()) is corral.IntersectionMatcher
    assert copy.advance(ord("d")) and copy.num_tokens == 3 and m.num_tokens == 2
    parts = m.parts
    assert [type(p) for p in parts] == [corral.Matcher] * 3 and [p.num_tokens for p in parts] == [2] * 3
    assert parts[0].advance(ord("z")) and m.num_tokens == 2 and not m.is_allowed(ord("z"))
    assert pickle.loads(pickle.dumps(corral.CompiledIntersection([a, b]))).matches(b"bad")
    other = corral.Vocabulary.from_token_bytes([b"a", b"b", b""], eos_token_ids=[2])
    with pytest.raises(corral.VocabularyError, match="same vocabulary"):
        corral.CompiledIntersection([a, corral.compile(corral.Grammar.regex("a"), other)])
    with pytest.raises(corral.MatcherError, match="at least one grammar"):
        corral.CompiledIntersection([])


def test_completions_satisfy_every_part(byte_vocab):
    m = corral.compile(corral.Grammar.regex("a+b") & corral.Grammar.regex("[ab]{2}"), byte_vocab).matcher()
    assert m.advance(ord("a")) and m.completion() == b"b"
    assert m.advance(ord("b")) and m.completion() == b""
    assert m.advance(256) and m.completion() is None
    # Neither part's own shortest ending ("b", three bytes) suits the other: none is found.
    m = corral.compile(corral.Grammar.regex("a(a|bbbb)|b") & corral.Grammar.regex("[ab]{3,}"), byte_vocab).matcher()
    assert m.completion() is None
