"""Helpers shared by the tests: walking token sequences through a matcher."""

from __future__ import annotations

import random

import numpy as np

import corral


def allowed_ids(matcher: corral.Matcher, vocab: corral.Vocabulary) -> np.ndarray:
    """The allowed token ids, read back from a freshly filled bitmask."""
    bm = corral.allocate_bitmask(1, vocab.size)
    matcher.fill_bitmask(bm, 0)
    bits = np.unpackbits(bm[0].view(np.uint8), bitorder="little")[: vocab.size]
    return np.flatnonzero(bits)


def allowed_set(matcher: corral.Matcher, vocab: corral.Vocabulary) -> set[int]:
    """The allowed token ids (EOS included) as a set."""
    return {int(i) for i in allowed_ids(matcher, vocab)}


def bit_is_set(bitmask_row: np.ndarray, token: int) -> bool:
    return bool((int(bitmask_row[token // 32]) >> (token % 32)) & 1)


def accepts_tokens(compiled, vocab: corral.Vocabulary, ids: list[int]) -> tuple[bool, str]:
    """Feeds `ids` then EOS, checking the mask at every step. Returns (accepted, why)."""
    m = compiled.matcher()
    bm = corral.allocate_bitmask(1, vocab.size)
    for i, t in enumerate(ids):
        m.fill_bitmask(bm, 0)
        in_mask = bit_is_set(bm[0], t)
        ok = m.advance(t)
        if in_mask != ok:
            raise AssertionError(f"mask says {in_mask} but advance says {ok} for token {t} at step {i}")
        if not ok:
            return False, f"token {i} ({vocab.token_bytes(t)!r}) rejected"
    m.fill_bitmask(bm, 0)
    eos = vocab.eos_token_ids[0]
    eos_in_mask = bit_is_set(bm[0], eos)
    if eos_in_mask != m.is_accepting():
        raise AssertionError("EOS bit disagrees with is_accepting()")
    if not eos_in_mask:
        return False, "EOS not allowed at the end"
    assert m.advance(eos) and m.is_finished()
    return True, ""


def random_tokenization(data: bytes, by_bytes: dict[bytes, int], rng: random.Random, max_len: int = 16):
    """A random segmentation of `data` into tokens of the vocabulary (None if there is none)."""
    n = len(data)
    # reachable[i]: data[i:] can be segmented.
    reachable = [False] * (n + 1)
    reachable[n] = True
    for i in range(n - 1, -1, -1):
        reachable[i] = any(
            data[i:j] in by_bytes and reachable[j] for j in range(i + 1, min(n, i + max_len) + 1)
        )
    if not reachable[0]:
        return None
    out, i = [], 0
    while i < n:
        choices = [j for j in range(i + 1, min(n, i + max_len) + 1) if data[i:j] in by_bytes and reachable[j]]
        j = rng.choice(choices)
        out.append(by_bytes[data[i:j]])
        i = j
    return out


def piece_vocabulary(documents: list[bytes], seed: int, longest: int = 7) -> corral.Vocabulary:
    """Every byte, plus random pieces (2 to `longest` bytes) of the documents, so that
    tokens cross item and key boundaries; EOS last."""
    rng = random.Random(seed)
    tokens = {bytes([b]) for b in range(256)}
    for d in documents:
        for _ in range(4):
            i = rng.randrange(len(d))
            tokens.add(d[i : i + rng.randint(2, longest)])
    ordered = sorted(tokens)
    return corral.Vocabulary.from_token_bytes([*ordered, None], eos_token_ids=[len(ordered)])


def walk_listed_language(
    compiled, vocab: corral.Vocabulary, documents: list[bytes], seed: int, walks: int, stop: float
) -> list[bytes]:
    """Random walks where, at every step, the mask must allow exactly the tokens after
    which the text still starts one of `documents` (the whole language, listed), and EOS
    exactly where it is one; each walk stops at EOS with probability `stop`. Returns the
    texts written."""
    prefixes = {d[:i] for d in documents for i in range(len(d) + 1)}
    complete = set(documents)
    eos = vocab.eos_token_ids[0]
    pieces = {t: vocab.token_bytes(t) for t in range(vocab.size) if t != eos and vocab.token_bytes(t)}
    rng = random.Random(seed)
    texts = []
    for _ in range(walks):
        m = compiled.matcher()
        text = b""
        while True:
            want = {t for t, b in pieces.items() if text + b in prefixes}
            if text in complete:
                want.add(eos)
            got = allowed_set(m, vocab)
            assert got == want, (text, sorted(vocab.token_bytes(t) or b"<eos>" for t in got ^ want)[:8])
            if eos in got and (rng.random() < stop or got == {eos}):
                break
            t = rng.choice(sorted(got - {eos}))
            assert m.advance(t)
            text += pieces[t]
        texts.append(text)
    return texts

