"""The engine-independent regex corpus: strings that must pass and must fail, checked
against Python's `re` (the oracle) and against corral under every real tokenizer."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

import corral
from _util import accepts_tokens, random_tokenization

CORPUS = json.loads((Path(__file__).parent / "corpus" / "regex.json").read_text(encoding="utf-8"))
IDS = [e["name"] for e in CORPUS]


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_agrees_with_python_re(entry):
    pattern = re.compile(entry["regex"])
    for s in entry["pass"]:
        assert pattern.fullmatch(s), s
    for s in entry["fail"]:
        assert not pattern.fullmatch(s), s


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_byte_level(entry, byte_vocab):
    compiled = corral.compile(corral.Grammar.regex(entry["regex"]), byte_vocab)
    for s in entry["pass"]:
        assert compiled.matches(s.encode()), s
        ok, why = accepts_tokens(compiled, byte_vocab, list(s.encode()))
        assert ok, f"{s!r}: {why}"
    for s in entry["fail"]:
        assert not compiled.matches(s.encode()), s
        ok, _ = accepts_tokens(compiled, byte_vocab, list(s.encode()))
        assert not ok, s


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_real_tokenizers(entry, tokenizer):
    compiled = corral.compile(corral.Grammar.regex(entry["regex"]), tokenizer.vocab)
    for s in entry["pass"]:
        ids = tokenizer.encode(s)
        assert tokenizer.vocab.decode_bytes(ids) == s.encode()
        ok, why = accepts_tokens(compiled, tokenizer.vocab, ids)
        assert ok, f"{tokenizer.name} {s!r} {ids}: {why}"
    for s in entry["fail"]:
        ok, _ = accepts_tokens(compiled, tokenizer.vocab, tokenizer.encode(s))
        assert not ok, f"{tokenizer.name} accepted {s!r}"


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_any_tokenization(entry, deepseek):
    """Completeness is about every tokenization, not only the canonical one."""
    vocab = deepseek.vocab
    by_bytes = {vocab.token_bytes(i): i for i in range(vocab.n_tokens) if vocab.token_kind(i) == "normal"}
    compiled = corral.compile(corral.Grammar.regex(entry["regex"]), vocab)
    rng = random.Random(1234)
    for s in entry["pass"]:
        for _ in range(5):
            ids = random_tokenization(s.encode(), by_bytes, rng)
            assert ids is not None
            ok, why = accepts_tokens(compiled, vocab, ids)
            assert ok, f"{s!r} as {ids}: {why}"
