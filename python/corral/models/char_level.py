"""A character-level view of a token-level model, for NanoGPT-style guided decoding.

NanoGPT's tinyshakespeare model reads and writes one of 65 characters per step. corral's
built-in model uses a byte-level BPE instead; :class:`CharLevelModel` turns it into a model
over those 65 characters (plus EOS): each step it encodes the text so far with the model's
own tokenizer and gives each character the total probability of the tokens that start with
it. The grammar engine then sees a vocabulary of single characters, as in the seed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import VocabularyError

#: The characters of tinyshakespeare: NanoGPT's character vocabulary, in its order.
SHAKESPEARE_CHARS = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class CharLevelModel:
    """A model whose vocabulary is single characters (``chars``, then EOS), backed by a
    token-level model with ``vocab``, ``encode`` and ``logits`` (default: the built-in model).

    Token id ``i < len(chars)`` is ``chars[i]``; ``len(chars)`` is EOS.
    """

    def __init__(self, model=None, chars: str = SHAKESPEARE_CHARS):
        from ..vocabulary import Vocabulary
        from .numpy_gpt2 import BuiltinModel

        if model is not None and not all(hasattr(model, a) for a in ("vocab", "encode", "logits")):
            from ..compiler import _describe_value

            raise TypeError(
                "CharLevelModel expects a token-level model with vocab, encode and logits "
                f"(e.g. corral.models.BuiltinModel()), got {_describe_value(model)}"
            )
        self.inner = model if model is not None else BuiltinModel()
        self.chars = chars
        self.vocab = Vocabulary.from_token_bytes([c.encode() for c in chars] + [b""], eos_token_ids=[len(chars)])
        index = {c: i for i, c in enumerate(chars)}
        inner_vocab = self.inner.vocab
        # For each inner token: the character it starts with (-1: none of ours, or special).
        first = np.full(inner_vocab.size, -1, dtype=np.int64)
        for t in range(inner_vocab.n_tokens):
            if inner_vocab.token_kind(t) != "normal":
                continue
            data = inner_vocab.token_bytes(t)
            head = data[:1].decode("utf-8", errors="ignore") if data else ""
            if head in index:
                first[t] = index[head]
        self._first = first
        self._has_char = np.flatnonzero(first >= 0)
        self._inner_eos = list(inner_vocab.eos_token_ids)
        self._extension_cache: dict = {}

    def encode(self, text: str) -> list[int]:
        """Character ids of ``text`` (characters outside ``chars`` raise
        :class:`corral.VocabularyError`)."""
        try:
            return [self.chars.index(c) for c in text]
        except ValueError:
            bad = next(c for c in text if c not in self.chars)
            raise VocabularyError(f"character {bad!r} is not in this model's vocabulary") from None

    def decode(self, ids: Sequence[int]) -> str:
        """Text of character ids (EOS omitted)."""
        return "".join(self.chars[i] for i in ids if i < len(self.chars))

    def _probabilities(self, inner_ids: list[int]) -> np.ndarray:
        """The inner model's next-token distribution after ``inner_ids``."""
        z = np.asarray(self.inner.logits(inner_ids), dtype=np.float64)[: len(self._first)]
        p = np.exp(z - z.max())
        return p / p.sum()

    def _char_mass(self, inner_ids: list[int]) -> np.ndarray:
        """Probability of each next character (and EOS) when a new token starts here."""
        p = self._probabilities(inner_ids)
        keep = self._has_char
        mass = np.bincount(self._first[keep], weights=p[keep], minlength=len(self.chars) + 1)
        mass[len(self.chars)] = p[self._inner_eos].sum() if self._inner_eos else 0.0
        return mass

    def _extensions(self, token: int):
        """Tokens that extend ``token``'s bytes, and our character right after them."""
        if token not in self._extension_cache:
            vocab = self.inner.vocab
            head = vocab.token_bytes(token)
            index = {c.encode(): i for i, c in enumerate(self.chars)}
            ids, chars = [], []
            for t in vocab.tokens_with_prefix(head):
                data = vocab.token_bytes(t)
                if len(data) > len(head):
                    c = index.get(data[len(head) : len(head) + 1])
                    if c is not None:
                        ids.append(t)
                        chars.append(c)
            self._extension_cache[token] = (np.array(ids, dtype=np.int64), np.array(chars, dtype=np.int64))
        return self._extension_cache[token]

    def logits(self, ids: Sequence[int]) -> np.ndarray:
        """Log-probabilities of the next character (and of EOS) after ``ids``.

        The text so far is encoded with the inner tokenizer. Its last token may be the
        start of a longer one ("ROM" of "ROMEO"), so it is healed: with ``p`` the
        distribution after the other tokens, a character ``c`` gets the mass of the tokens
        that extend the last one with ``c``, plus ``p(last token)`` times the distribution
        of the first character of the token after it.
        """
        inner_ids = list(self.inner.encode(self.decode(ids)))
        if not inner_ids:
            mass = self._char_mass(inner_ids)
        else:
            last, prefix = inner_ids[-1], inner_ids[:-1]
            p = self._probabilities(prefix)
            ext_ids, ext_chars = self._extensions(last)
            mass = np.bincount(ext_chars, weights=p[ext_ids], minlength=len(self.chars) + 1)
            mass = mass.astype(np.float64) + p[last] * self._char_mass(inner_ids)
        with np.errstate(divide="ignore"):
            return np.log(mass / mass.sum()).astype(np.float32)
