"""The grammar corpus (tests/corpus/grammars.json): every grammar, every front-end,
every real tokenizer. Completeness by a random sentence generator; soundness by random
masked walks checked with an independent parser (lark's Earley, on the same grammar
translated to Lark syntax)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

import corral
from _util import accepts_tokens, allowed_ids, random_tokenization

HERE = Path(__file__).parent
CORPUS = json.loads((HERE / "corpus" / "grammars.json").read_text(encoding="utf-8"))
IDS = [e["name"] for e in CORPUS]


def grammar_text(entry) -> str:
    return (HERE / "corpus" / "grammars" / entry["file"]).read_text(encoding="utf-8")


def load(entry) -> corral.Grammar:
    text = grammar_text(entry)
    return corral.Grammar.ebnf(text) if entry["syntax"] == "ebnf" else corral.Grammar.gbnf(text)


def start_rule(entry) -> str:
    if entry["syntax"] == "gbnf":
        return "root"
    names = re.findall(r"^\s*([A-Za-z_][\w-]*)\s*::=", grammar_text(entry), re.M)
    return "start" if "start" in names else ("root" if "root" in names else names[0])


_LARK: dict = {}


def lark_parser(entry):
    """lark's Earley parser on the same grammar, or None where it has no Lark form."""
    import lark

    if entry["name"] not in _LARK:
        try:
            text = corral._core.Grammar._to_lark(grammar_text(entry), entry["syntax"], start_rule(entry))
        except TypeError:
            _LARK[entry["name"]] = None  # except! and perm! have no Lark equivalent
        else:
            _LARK[entry["name"]] = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    return _LARK[entry["name"]]


def lark_accepts(parser, text: str) -> bool:
    import lark

    try:
        parser.parse(text)
        return True
    except lark.exceptions.LarkError:
        return False


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_byte_level(entry, byte_vocab):
    compiled = corral.compile(load(entry), byte_vocab)
    for s in entry["pass"]:
        assert compiled.matches(s.encode()), s
        ok, why = accepts_tokens(compiled, byte_vocab, list(s.encode()))
        assert ok, f"{s!r}: {why}"
    for s in entry["fail"]:
        assert not compiled.matches(s.encode()), s
        ok, _ = accepts_tokens(compiled, byte_vocab, list(s.encode()))
        assert not ok, s


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_agrees_with_lark(entry):
    parser = lark_parser(entry)
    if parser is None:
        assert "except!" in grammar_text(entry) or "perm!" in grammar_text(entry)
        return
    for s in entry["pass"]:
        assert lark_accepts(parser, s), s
    for s in entry["fail"]:
        assert not lark_accepts(parser, s), s


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_real_tokenizers(entry, tokenizer):
    compiled = corral.compile(load(entry), tokenizer.vocab)
    for s in entry["pass"]:
        ids = tokenizer.encode(s)
        if not tokenizer.lossless and tokenizer.vocab.decode_bytes(ids) != s.encode():
            continue  # SentencePiece's normalizer cannot spell this string at all
        ok, why = accepts_tokens(compiled, tokenizer.vocab, ids)
        assert ok, f"{tokenizer.name} {s!r} {ids}: {why}"
    for s in entry["fail"]:
        ok, _ = accepts_tokens(compiled, tokenizer.vocab, tokenizer.encode(s))
        assert not ok, f"{tokenizer.name} accepted {s!r}"


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_completeness_generated_sentences(entry, tokenizer):
    """Sentences from the grammar's random generator are accepted under the canonical
    tokenization, and (DeepSeek) under random other tokenizations too."""
    grammar = load(entry)
    compiled = corral.compile(grammar, tokenizer.vocab)
    vocab = tokenizer.vocab
    by_bytes = None
    if tokenizer.name == "deepseek":
        by_bytes = {vocab.token_bytes(i): i for i in range(vocab.n_tokens) if vocab.token_kind(i) == "normal"}
    parser = lark_parser(entry)
    rng = random.Random(7)
    checked = 0
    for seed in range(16):
        sentence = grammar._inner.sample(seed, 48)
        text = sentence.decode("utf-8")
        assert compiled.matches(sentence), text
        if parser is not None:
            assert lark_accepts(parser, text), f"generator produced {text!r}, which lark rejects"
        ids = tokenizer.encode(text)
        if not tokenizer.lossless and vocab.decode_bytes(ids) != sentence:
            continue
        ok, why = accepts_tokens(compiled, vocab, ids)
        assert ok, f"{tokenizer.name} {text!r}: {why}"
        checked += 1
        if by_bytes is not None:
            alt = random_tokenization(sentence, by_bytes, rng)
            assert alt is not None
            ok, why = accepts_tokens(compiled, vocab, alt)
            assert ok, f"{text!r} as {alt}: {why}"
    assert checked >= 8


_BYTE_TOKENS: dict = {}


def byte_tokens(vocab) -> dict:
    """One token id per single byte (all three real vocabularies have them)."""
    key = vocab.fingerprint
    if key not in _BYTE_TOKENS:
        table = {}
        for i in range(vocab.n_tokens):
            b = vocab.token_bytes(i)
            if len(b) == 1 and vocab.token_kind(i) == "normal":
                table.setdefault(b[0], i)
        _BYTE_TOKENS[key] = table
    return _BYTE_TOKENS[key]


# Grammars with no Lark form are checked by their own oracles (except-comments in test_cfg, perm!
# in test_any_order and the core's perm tests).
@pytest.mark.parametrize("entry", [e for e in CORPUS if e["name"] not in ("except-comments", "perm")], ids=lambda e: e["name"])
def test_soundness_random_walks(entry, tokenizer):
    """Walks that sample only allowed tokens, then finish with the matcher's completion
    (byte tokens), end in strings lark's parser accepts."""
    parser = lark_parser(entry)
    vocab = tokenizer.vocab
    compiled = corral.compile(load(entry), vocab)
    eos = set(vocab.eos_token_ids)
    by_byte = byte_tokens(vocab)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        m = compiled.matcher()
        out = []
        for _ in range(rng.integers(1, 20)):
            allowed = allowed_ids(m, vocab)
            assert len(allowed) > 0
            ends = [t for t in allowed if t in eos]
            assert bool(ends) == m.is_accepting()
            normal = [t for t in allowed if t not in eos]
            if not normal:
                break
            tok = int(rng.choice(normal))
            assert m.advance(tok)
            out.append(tok)
        completion = m.completion()
        assert completion is not None, "a live state always has a completion"
        for b in completion:
            assert m.advance(by_byte[b]), (completion, b)
            out.append(by_byte[b])
        assert m.is_accepting()
        assert m.advance(vocab.eos_token_ids[0]) and m.is_finished()
        text = vocab.decode_bytes(out).decode("utf-8")
        assert lark_accepts(parser, text), f"{tokenizer.name}: corral allowed {text!r}, lark rejects it"

