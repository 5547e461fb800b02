"""The :class:`Vocabulary`: every token id's exact bytes, the EOS ids and the logits width."""

from __future__ import annotations

import os
import warnings
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from . import _adapters, _core
from .errors import VocabularyError

#: What ``eos_token_ids=`` takes: one id or a list of ids; where a tokenizer can look them
#: up, token texts too (``"<|im_end|>"``).
EosTokenIds = int | str | Sequence[int | str] | None

_UNSET = object()


def _eos_argument(where: str, eos_token_ids: EosTokenIds, **old: Any) -> EosTokenIds:
    """``eos_token_ids``, or the value given under an old spelling of it (``eos_token=``,
    ``eos_tokens=``), which still works with a DeprecationWarning. Both is a TypeError."""
    given = {name: value for name, value in old.items() if value is not _UNSET}
    if not given:
        return eos_token_ids
    if len(given) > 1 or eos_token_ids is not None:
        names = ["eos_token_ids"] * (eos_token_ids is not None) + list(given)
        raise TypeError(f"{where} got both {' and '.join(n + '=' for n in names)}: pass eos_token_ids= only")
    (name, value), = given.items()
    warnings.warn(
        f"{where}: {name}= is deprecated, use eos_token_ids= (same values)", DeprecationWarning, stacklevel=3
    )
    eos: EosTokenIds = value  # checked where it is used, as a value given directly is
    return eos


def _eos_ids(where: str, eos_token_ids: Any) -> list[Any]:
    """``eos_token_ids`` as a list of ints (a single int is one id)."""
    if isinstance(eos_token_ids, bool):
        raise TypeError(f"{where}: eos_token_ids must be an int or a list of ints, got {eos_token_ids!r}")
    if isinstance(eos_token_ids, int):
        return [eos_token_ids]
    if isinstance(eos_token_ids, (str, bytes)):
        raise TypeError(
            f"{where}: eos_token_ids must be an int or a list of ints, got {type(eos_token_ids).__name__} "
            f"{eos_token_ids!r} (token texts are looked up by the constructors that read a tokenizer)"
        )
    try:
        return list(eos_token_ids)
    except TypeError:
        raise TypeError(
            f"{where}: eos_token_ids must be an int or a list of ints, got {type(eos_token_ids).__name__}"
        ) from None


class Vocabulary:
    """A tokenizer's vocabulary as corral sees it.

    Token ids map to the exact bytes they add to the output (byte-level BPE's ``Ġ``
    mapping, SentencePiece's ``▁`` and ``<0xNN>`` byte fallback are undone), so tokens
    that end in the middle of a UTF-8 character just work. Special tokens are never
    allowed by a grammar; EOS is allowed exactly where the constraint may end.

    ``size`` is the logits width, which may exceed the number of tokens (models pad their
    embedding matrix); ids past the tokens are never allowed. ``mask_width`` is the number
    of int32 words in one bitmask row, ``ceil(size / 32)``.
    """

    __slots__ = ("_inner", "_n_tokens", "__weakref__")

    def __init__(self, inner: _core.Vocabulary, n_tokens: int):
        self._inner = inner
        self._n_tokens = n_tokens

    # -- constructors -------------------------------------------------------------------

    @classmethod
    def from_token_bytes(
        cls,
        token_bytes: Sequence[bytes | None],
        eos_token_ids: int | Iterable[int],
        special_token_ids: Iterable[int] = (),
        *,
        size: int | None = None,
        limits: _core.Limits | None = None,
    ) -> Vocabulary:
        """From a list whose item ``i`` is token ``i``'s bytes (None for an unused id).

        ``eos_token_ids`` (one id or a list) must not be empty. ``special_token_ids`` are
        never allowed. ``size`` defaults to ``len(token_bytes)``; ``limits.max_vocab_size``
        bounds it.
        """
        eos_token_ids = _eos_ids("Vocabulary.from_token_bytes()", eos_token_ids)
        tokens = []
        for i, t in enumerate(token_bytes):
            if t is not None and not isinstance(t, (bytes, bytearray, memoryview)):
                raise TypeError(f"token_bytes[{i}] must be bytes or None, got {type(t).__name__}: {t!r}")
            tokens.append(None if t is None else bytes(t))
        inner = _core.Vocabulary(tokens, eos_token_ids, list(special_token_ids), size, limits)
        return cls(inner, len(tokens))

    @classmethod
    def _from_data(cls, data: _adapters.TokenizerData, size: int | None) -> Vocabulary:
        return cls.from_token_bytes(data.token_bytes, data.eos_token_ids, data.special_ids, size=size)

    @classmethod
    def from_huggingface(
        cls, tokenizer: Any, *, eos_token_ids: EosTokenIds = None, size: int | None = None
    ) -> Vocabulary:
        """From a ``transformers`` tokenizer (fast or SentencePiece-based).

        The EOS ids are ``eos_token_ids`` if given (ids or token texts), else the
        tokenizer's ``eos_token_id``, else a conventional name (``</s>``,
        ``<|endoftext|>``, ...). Pass ``size=model.config.vocab_size`` when the model's
        logits are wider than the tokenizer's vocabulary.
        """
        return cls._from_data(_adapters.from_huggingface(tokenizer, eos_token=eos_token_ids), size)

    @classmethod
    def from_tokenizer_file(
        cls,
        path: str | os.PathLike[str],
        *,
        eos_token_ids: EosTokenIds = None,
        size: int | None = None,
        eos_token: object = _UNSET,
    ) -> Vocabulary:
        """From a Hugging Face ``tokenizer.json``. The EOS ids are ``eos_token_ids`` if
        given (ids or token texts), else the token named by a ``tokenizer_config.json``
        beside the file, else a conventional name (``</s>``, ``<|endoftext|>``, ...).
        ``eos_token=`` is a deprecated spelling of ``eos_token_ids=``."""
        eos_token_ids = _eos_argument("Vocabulary.from_tokenizer_file()", eos_token_ids, eos_token=eos_token)
        return cls._from_data(_adapters.from_tokenizer_json(path, eos_token=eos_token_ids), size)

    @classmethod
    def from_tiktoken(
        cls,
        path_or_encoding: Any,
        *,
        special_tokens: dict[str, int] | None = None,
        eos_token_ids: EosTokenIds = None,
        size: int | None = None,
        eos_tokens: object = _UNSET,
    ) -> Vocabulary:
        """From a ``.tiktoken`` file, a ``tiktoken.Encoding``, or a Mistral ``tekken`` JSON
        file. ``special_tokens`` maps special token text to id; ``eos_token_ids`` gives the
        EOS token(s) by id or text (default: the conventional names among the special
        tokens). ``eos_tokens=`` is a deprecated spelling of ``eos_token_ids=``."""
        eos_token_ids = _eos_argument("Vocabulary.from_tiktoken()", eos_token_ids, eos_tokens=eos_tokens)
        data = _adapters.from_tiktoken(path_or_encoding, special_tokens=special_tokens, eos_tokens=eos_token_ids)
        return cls._from_data(data, size)

    @classmethod
    def from_sentencepiece(
        cls, processor_or_model_path: Any, *, eos_token_ids: EosTokenIds = None, size: int | None = None
    ) -> Vocabulary:
        """From a ``sentencepiece.SentencePieceProcessor`` or a ``.model`` file path. The
        EOS ids are ``eos_token_ids`` if given (ids or piece texts), else the model's
        ``eos_id()``, else a conventional name."""
        data = _adapters.from_sentencepiece(processor_or_model_path, eos_token=eos_token_ids)
        return cls._from_data(data, size)

    # -- properties ---------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The logits width: the number of ids a mask covers."""
        return self._inner.size

    @property
    def n_tokens(self) -> int:
        """The number of ids the tokenizer defines (at most ``size``)."""
        return self._n_tokens

    @property
    def mask_width(self) -> int:
        """int32 words per bitmask row: ``ceil(size / 32)``."""
        return self._inner.mask_width

    @property
    def eos_token_ids(self) -> list[int]:
        """The end-of-sequence ids."""
        return self._inner.eos_token_ids

    @property
    def special_token_ids(self) -> list[int]:
        """Control tokens, never allowed by a grammar (EOS not included)."""
        return self._inner.special_token_ids

    @property
    def fingerprint(self) -> str:
        """A content hash of the vocabulary (compiled grammars are cached by it)."""
        return self._inner.fingerprint

    def token_bytes(self, token_id: int) -> bytes:
        """The exact bytes token ``token_id`` contributes (``b""`` for special/EOS ids)."""
        return self._inner.token_bytes(token_id)

    def tokens_with_prefix(self, prefix: bytes) -> list[int]:
        """The normal token ids whose bytes start with ``prefix`` (``prefix`` itself
        included), found in the token trie rather than by a pass over the vocabulary."""
        return self._inner.tokens_with_prefix(prefix)

    def token_kind(self, token_id: int) -> str:
        """``"normal"``, ``"special"``, ``"eos"`` or ``"missing"``."""
        return self._inner.token_kind(token_id)

    def decode_bytes(self, token_ids: Iterable[int]) -> bytes:
        """The bytes a token sequence spells (special tokens contribute nothing)."""
        return self._inner.decode_bytes(list(token_ids))

    def with_special_text(self, texts: str | bytes | Iterable[str | bytes]) -> Vocabulary:
        """The same vocabulary in which each special token whose text occurs inside one of
        ``texts`` counts as that text: a grammar then allows it exactly where it allows its
        bytes (Qwen's ``<tool_call>`` token where a tool call may begin), and every other
        special token stays forbidden. ``texts`` is one text (a str or bytes) or a list of
        them. Returns ``self`` when no special token is concerned; the result is kept for
        the next call with the same tokens.
        """
        wanted = frozenset(_marker_texts(texts))
        known = _with_special_text.setdefault(self, {})
        if wanted not in known:
            known[wanted] = self._special_as_text(wanted)
        return known[wanted]

    def _special_as_text(self, wanted: frozenset[bytes]) -> Vocabulary:
        data, ends = self._inner._export_tokens()
        import numpy as np

        bounds = [0, *np.frombuffer(ends, dtype="<u4").tolist()]
        enabled = frozenset(
            i for i in self.special_token_ids if (text := data[bounds[i] : bounds[i + 1]]) and any(text in w for w in wanted)
        )
        if not enabled:
            return self
        special = [i for i in self.special_token_ids if i not in enabled]
        return _from_state(data, ends, self._n_tokens, self.eos_token_ids, special, self.size)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as the token bytes (one blob), the EOS and special ids and the size; the
        vocabulary (its token trie and tables) is built again on load."""
        data, ends = self._inner._export_tokens()
        return (_from_state, (data, ends, self._n_tokens, self.eos_token_ids, self.special_token_ids, self.size))

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<corral.Vocabulary size={self.size} tokens={self._n_tokens} eos={self.eos_token_ids}>"


# Vocabularies loaded from pickles in this process, by their pickled state: each task that
# carries a compiled grammar to a worker process loads its vocabulary again, and building
# a large one (~0.2 s at 128k tokens) would dominate the task.
_loaded: weakref.WeakValueDictionary[tuple[Any, ...], Vocabulary] = weakref.WeakValueDictionary()

# Vocabulary.with_special_text's results, per vocabulary and set of texts.
_with_special_text: weakref.WeakKeyDictionary[Vocabulary, dict[frozenset[bytes], Vocabulary]] = weakref.WeakKeyDictionary()


def _from_state(
    data: bytes, ends: bytes, n_tokens: int, eos_token_ids: list[int], special_token_ids: list[int], size: int
) -> Vocabulary:
    """Loads a pickled :class:`Vocabulary` (see ``Vocabulary.__reduce__``): token ``i``'s
    bytes are ``data[ends[i - 1]:ends[i]]``, ``ends`` being little-endian uint32s."""
    import numpy as np

    key = (data, ends, n_tokens, tuple(eos_token_ids), tuple(special_token_ids), size)
    vocab = _loaded.get(key)
    if vocab is not None:
        return vocab
    bounds = [0] + np.frombuffer(ends, dtype="<u4", count=n_tokens).tolist()
    tokens = [data[bounds[i] : bounds[i + 1]] for i in range(n_tokens)]
    # The size was accepted when the vocabulary was first built, under whatever limits.
    limits = _core.Limits(max_vocab_size=max(size, _core.Limits().max_vocab_size))
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids, special_token_ids, size=size, limits=limits)
    _loaded[key] = vocab
    return vocab


def _marker_texts(texts: Any) -> list[bytes]:
    """The texts of :meth:`Vocabulary.with_special_text` as bytes: one str or bytes is one
    text (not its characters); each item of a list must be a str or bytes."""
    where = "Vocabulary.with_special_text()"
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        texts = [texts]
    try:
        items = list(texts)
    except TypeError:
        raise TypeError(f"{where}: texts must be a str, bytes or a list of them, got {type(texts).__name__}: {texts!r}") from None
    out = []
    for i, t in enumerate(items):
        if isinstance(t, str):
            try:
                out.append(t.encode())
            except UnicodeEncodeError as e:
                raise VocabularyError(f"{where}: text {i} ({t!r}) is not valid Unicode at character {e.start} (a lone surrogate)") from None
        elif isinstance(t, (bytes, bytearray, memoryview)):
            out.append(bytes(t))
        else:
            raise TypeError(f"{where}: text {i} must be a str or bytes, got {type(t).__name__}: {t!r}")
    return out
