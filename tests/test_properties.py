"""Property tests (hypothesis).

Completeness: strings generated from a regex, tokenized by the real tokenizers (and at
random), are accepted token by token, with EOS allowed at the end.
Soundness: random walks that sample only allowed tokens end in strings `re.fullmatch`
accepts.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import corral
from _util import accepts_tokens, allowed_ids, random_tokenization

PAPER = [
    r"\s*([Yy]es|[Nn]o|[Nn]ever|[Aa]lways)",
    r"\s*19[0-9]{2}",
    r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)",
    r"[^\W\d]\w*",
]
CORPUS = [e["regex"] for e in json.loads((Path(__file__).parent / "corpus" / "regex.json").read_text("utf-8"))]
PATTERNS = PAPER + [p for p in CORPUS if p not in PAPER and "(?x)" not in p]
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@pytest.mark.parametrize("pattern", PATTERNS)
def test_completeness_real_tokenizers(pattern, tokenizer):
    compiled = corral.compile(corral.Grammar.regex(pattern), tokenizer.vocab)
    rx = re.compile(pattern)

    @SETTINGS
    @given(st.from_regex(rx, fullmatch=True).filter(_encodable))
    def check(s):
        ids = tokenizer.encode(s)
        if not tokenizer.lossless:
            # The tokenizer itself cannot spell strings its normalizer rewrites.
            assume(tokenizer.vocab.decode_bytes(ids) == s.encode())
        assert tokenizer.vocab.decode_bytes(ids) == s.encode()
        ok, why = accepts_tokens(compiled, tokenizer.vocab, ids)
        assert ok, f"{s!r} {ids}: {why}"

    check()


@pytest.mark.parametrize("pattern", PAPER)
def test_completeness_random_tokenizations(pattern, deepseek):
    vocab = deepseek.vocab
    by_bytes = {vocab.token_bytes(i): i for i in range(vocab.n_tokens) if vocab.token_kind(i) == "normal"}
    compiled = corral.compile(corral.Grammar.regex(pattern), vocab)

    @SETTINGS
    @given(st.from_regex(re.compile(pattern), fullmatch=True).filter(_encodable), st.integers(0, 2**32))
    def check(s, seed):
        ids = random_tokenization(s.encode(), by_bytes, random.Random(seed))
        assert ids is not None
        ok, why = accepts_tokens(compiled, vocab, ids)
        assert ok, f"{s!r} {ids}: {why}"

    check()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_soundness_random_walks(pattern, tokenizer):
    vocab = tokenizer.vocab
    compiled = corral.compile(corral.Grammar.regex(pattern), vocab)
    rx = re.compile(pattern)
    eos = set(vocab.eos_token_ids)

    @SETTINGS
    @given(st.integers(0, 2**32))
    def walk(seed):
        rng = np.random.default_rng(seed)
        m = compiled.matcher()
        out = []
        for _ in range(40):
            allowed = allowed_ids(m, vocab)
            assert len(allowed) > 0
            ends = [t for t in allowed if t in eos]
            assert bool(ends) == m.is_accepting()
            if ends and rng.random() < 0.3:
                assert m.advance(int(ends[0]))
                break
            choices = [t for t in allowed if t not in eos] or ends
            tok = int(rng.choice(choices))
            assert m.advance(tok), tok
            if tok in eos:
                break
            out.append(tok)
        if m.is_finished():
            text = vocab.decode_bytes(out).decode("utf-8")  # must be valid UTF-8
            assert rx.fullmatch(text), (text, out)
            assert all(vocab.token_kind(t) == "normal" for t in out)

    walk()
