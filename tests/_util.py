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
