"""A stand-in scoring model for demos and tests: no weights, no download.

It scores tokens with seeded pseudo-random logits (a fresh draw per position and previous
token), with a bonus for longer tokens so multi-byte tokens are exercised. It knows nothing
about language: unguided, it babbles; guided by corral, it always fits the constraint.
"""

from __future__ import annotations

import string
import zlib

import numpy as np

from ..vocabulary import Vocabulary

_WORDS = (
    "yes Yes no No never Never always Always the and of to in is was that for with as on "
    "The And But King Queen Lord ROMEO JULIET thou thee thy hath love night day"
).split()


def _token_list() -> list[bytes]:
    tokens = [bytes([b]) for b in range(256)]
    tokens += [f"{i:02d}".encode() for i in range(100)]
    tokens += [str(i).encode() for i in range(100, 256)]
    tokens += [w.encode() for w in _WORDS] + [(" " + w).encode() for w in _WORDS]
    tokens += [(a + b).encode() for a in string.ascii_lowercase for b in "aeiou"]
    tokens += [s.encode() for s in (". ", ", ", ": ", "\n\n", "  ", "é", "ü", "日本", "€")]
    seen: dict[bytes, None] = {}
    for t in tokens:
        seen.setdefault(t, None)
    return list(seen)


class TrivialModel:
    """A scoring model with a small built-in vocabulary (256 bytes + ~600 multi-byte tokens).

    ``logits(token_ids)`` returns a float32 array of width ``vocab.size``.
    """

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._tokens = _token_list()
        self.eos_token_id = len(self._tokens)
        self.vocab = Vocabulary.from_token_bytes(self._tokens + [b"<eos>"], eos_token_ids=[self.eos_token_id])
        self._length_bonus = np.array([0.4 * len(t) for t in self._tokens] + [0.0], dtype=np.float32)
        self._by_bytes = {t: i for i, t in enumerate(self._tokens)}
        self._max_len = max(len(t) for t in self._tokens)

    def encode(self, text: str) -> list[int]:
        """Greedy longest-match tokenization of ``text``'s UTF-8 bytes."""
        data = text.encode("utf-8")
        ids, i = [], 0
        while i < len(data):
            for n in range(min(self._max_len, len(data) - i), 0, -1):
                tid = self._by_bytes.get(data[i : i + n])
                if tid is not None:
                    ids.append(tid)
                    i += n
                    break
        return ids

    def decode(self, token_ids) -> str:
        """The text a token sequence spells."""
        return self.vocab.decode_bytes(token_ids).decode("utf-8", errors="replace")

    def logits(self, token_ids) -> np.ndarray:
        """Deterministic pseudo-random scores for the next token."""
        prev = token_ids[-1] if len(token_ids) else -1
        key = zlib.crc32(f"{self.seed}:{prev}:{len(token_ids)}".encode())
        rng = np.random.default_rng(key)
        out = rng.standard_normal(self.vocab.size).astype(np.float32) * 2.0
        out += self._length_bonus
        return out
