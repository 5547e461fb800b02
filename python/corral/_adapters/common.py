"""What every tokenizer format shares: the result type, the byte-level alphabet, EOS rules.

:class:`TokenizerData` is what each format's adapter produces.  The rest is
used by several formats: the byte <-> character alphabet of byte-level BPE
(``tokenizer.json`` files and the GPT-2 reference model), the ``<0xNN>`` byte
pieces of SentencePiece-style vocabularies, reading a file into an
:class:`AdapterError` when it cannot be read, and the rules that pick the
end-of-sequence ids from what the caller gave or, failing that, from
:data:`COMMON_EOS_TOKENS`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import VocabularyError

#: How a caller names the end-of-sequence token(s): a token string, an id, a
#: list of them (``[]``: none), or ``None`` to let the adapter find them.
EosSpec = str | int | Sequence[str | int] | None


class AdapterError(VocabularyError):
    """A tokenizer (or a file) that an adapter cannot interpret exactly."""


#: Names that mark an end-of-sequence token when a tokenizer does not say which
#: one it uses.  When falling back on them, *every* special token with one of
#: these names is taken as an EOS (e.g. Llama 3's ``<|end_of_text|>`` and
#: ``<|eot_id|>``, Qwen's ``<|endoftext|>`` and ``<|im_end|>``), since a model
#: may stop on any of them.
COMMON_EOS_TOKENS: tuple[str, ...] = (
    "</s>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",  # DeepSeek: <｜end▁of▁sentence｜>
    "<|im_end|>",
    "<eos>",
)


# ---------------------------------------------------------------------------
# The result type
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenizerData:
    """Token id -> exact bytes, plus the special and end-of-sequence ids.

    On construction the lists are checked and normalized: ``special_ids`` is
    sorted and de-duplicated, every EOS id is added to it, ``eos_token_ids``
    keeps its order without duplicates.  Every special/EOS id must name a token.
    """

    token_bytes: list[bytes | None]
    special_ids: list[int]
    eos_token_ids: list[int]

    def __post_init__(self) -> None:
        tb = _checked_token_bytes(self.token_bytes)
        eos = list(dict.fromkeys(_checked_ids(self.eos_token_ids, tb, "eos_token_ids")))
        special = sorted(set(_checked_ids(self.special_ids, tb, "special_ids")) | set(eos))
        # Frozen dataclass: the normalized lists replace the given ones this way.
        object.__setattr__(self, "token_bytes", tb)
        object.__setattr__(self, "special_ids", special)
        object.__setattr__(self, "eos_token_ids", eos)

    @property
    def vocab_size(self) -> int:
        """Number of ids, i.e. ``len(token_bytes)`` (largest id + 1)."""
        return len(self.token_bytes)


def _checked_token_bytes(token_bytes: Iterable[Any]) -> list[bytes | None]:
    """A copy of ``token_bytes`` with every entry ``bytes`` or ``None``."""
    tb = list(token_bytes)
    for i, b in enumerate(tb):
        if b is None or isinstance(b, bytes):
            continue
        if not isinstance(b, (bytearray, memoryview)):
            raise AdapterError(f"token_bytes[{i}] must be bytes or None, not {type(b).__name__}")
        tb[i] = bytes(b)
    return tb


def _checked_ids(ids: Iterable[Any], tb: Sequence[bytes | None], what: str) -> list[int]:
    """``ids`` as plain ints, each naming a token of ``tb``; ``what`` names the list."""
    out = []
    for i in ids:
        if isinstance(i, bool):
            raise AdapterError(f"{what} must hold ints, got {i!r}")
        if not isinstance(i, int):
            try:
                i = int(i.__index__())  # numpy integers
            except AttributeError:
                raise AdapterError(f"{what} must hold ints, got {i!r}") from None
        if not 0 <= i < len(tb):
            raise AdapterError(f"{what}: id {i} is outside the vocabulary (size {len(tb)})")
        if tb[i] is None:
            raise AdapterError(f"{what}: id {i} names no token")
        out.append(i)
    return out


# ---------------------------------------------------------------------------
# Byte-level BPE's byte <-> character alphabet, and <0xNN> byte pieces
# ---------------------------------------------------------------------------


def _build_byte_alphabet() -> tuple[str, ...]:
    # Bytes that are printable (and not a space) stand for themselves as the
    # code point of the same value; the other 68 bytes (controls, space, DEL,
    # the C1 range, NBSP and the soft hyphen) are given the code points 256,
    # 257, ... in increasing byte order.
    keep = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    chars = []
    extra = 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return tuple(chars)


_BYTE_TO_CHAR: tuple[str, ...] = _build_byte_alphabet()
_CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(_BYTE_TO_CHAR)}


def bytes_to_unicode() -> dict[int, str]:
    """The byte -> character table of byte-level BPE (GPT-2, Llama 3, Qwen, ...)."""
    return dict(enumerate(_BYTE_TO_CHAR))


def unicode_to_bytes() -> dict[str, int]:
    """The inverse of :func:`bytes_to_unicode`."""
    return dict(_CHAR_TO_BYTE)


def byte_level_decode(token: str) -> bytes:
    """The bytes a byte-level BPE token string stands for.

    Exactly what the ByteLevel decoder of ``tokenizers`` does for one token:
    every character is mapped through the alphabet; a token holding a character
    outside the alphabet is taken as plain text (its UTF-8 bytes).
    """
    try:
        return bytes([_CHAR_TO_BYTE[c] for c in token])
    except KeyError:
        return token.encode("utf-8")


#: A SentencePiece-style byte piece, ``<0xNN>``, standing for the byte ``NN``.
BYTE_PIECE_RE = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------


def is_pathlike(x: Any) -> bool:
    """Whether ``x`` can name a file (a ``str`` or an ``os.PathLike``)."""
    return isinstance(x, (str, os.PathLike))


def read_bytes(path: Any, what: str) -> bytes:
    """The content of the file ``path``; ``what`` says what it should be, for errors."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise AdapterError(f"cannot read {what} {str(path)!r}: {e}") from e


# ---------------------------------------------------------------------------
# End-of-sequence ids
# ---------------------------------------------------------------------------


def eos_list(spec: EosSpec) -> list[str | int] | None:
    """A caller's EOS argument as a list of names and ids (``None``: not given)."""
    if spec is None:
        return None
    if isinstance(spec, (str, int)) and not isinstance(spec, bool):
        return [spec]
    try:
        items = list(spec)  # type: ignore[arg-type]
    except TypeError:
        raise AdapterError(f"EOS tokens must be a str, an int or a list of them, not {spec!r}") from None
    for x in items:
        if isinstance(x, bool) or not isinstance(x, (str, int)):
            raise AdapterError(f"EOS tokens must be strs or ints, got {x!r}")
    return items


def resolve_eos(
    spec: list[str | int],
    lookup: Mapping[str, int],
    token_bytes: Sequence[bytes | None],
    where: str,
) -> list[int]:
    """The ids of the EOS names and ids in ``spec``; names are looked up in ``lookup``."""
    out = []
    for x in spec:
        if isinstance(x, str):
            if x not in lookup:
                raise AdapterError(f"EOS token {x!r} is not a token of {where}")
            out.append(lookup[x])
        else:
            if not (0 <= x < len(token_bytes)) or token_bytes[x] is None:
                raise AdapterError(f"EOS token id {x} is not a token of {where}")
            out.append(x)
    return out


def common_eos(names_to_ids: Mapping[str, int]) -> list[int]:
    """The ids of the tokens in ``names_to_ids`` named in :data:`COMMON_EOS_TOKENS`."""
    return sorted({names_to_ids[n] for n in COMMON_EOS_TOKENS if n in names_to_ids})


# The most ids a vocabulary may have: the core refuses more (the default of
# `Limits.max_vocab_size`, which the `from_*` constructors use), so a table of ids is never
# allocated past it (one huge id in a file would otherwise allocate a list of that size).
MAX_IDS = 1 << 22


def id_table(size: int, where: str) -> list[bytes | None]:
    """An empty id → bytes table for ids below ``size``; AdapterError if ``size`` exceeds
    :data:`MAX_IDS`."""
    if size > MAX_IDS:
        raise AdapterError(f"{where}: token id {size - 1} is past the largest vocabulary corral accepts ({MAX_IDS} ids, Limits.max_vocab_size)")
    return [None] * size


def no_utf8_error(where: str, i: int, text: str, e: UnicodeEncodeError) -> AdapterError:
    """The error for token ``i`` of ``where``, whose ``text`` has no UTF-8 form.

    A Python string (and a JSON string, through a ``\\udXXX`` escape) can hold
    a lone surrogate, which no byte sequence stands for; adapters turn the
    ``UnicodeEncodeError`` that encoding it raises into this error.
    """
    return AdapterError(f"{where}: token {i} ({text!r}) is not valid Unicode text ({e.reason})")


def no_eos_error(where: str) -> AdapterError:
    """The error for a tokenizer whose EOS cannot be found.

    It names the ``Vocabulary`` constructors' argument, through which users
    reach every adapter.
    """
    return AdapterError(
        f"cannot tell which token of {where} ends a sequence (none of "
        f"{', '.join(COMMON_EOS_TOKENS)} is a special token there); pass "
        "eos_token_ids=... (a token string, an id, or a list; [] for none)"
    )
