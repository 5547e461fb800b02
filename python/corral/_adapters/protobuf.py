"""A minimal reader of the protobuf wire format, enough to walk a SentencePiece ``.model``.

It yields the fields of one message without a schema, so a model file can be
read without the ``sentencepiece`` or ``protobuf`` packages.  Malformed input
raises :class:`~.common.AdapterError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import AdapterError

#: A length-delimited field's value: the (start, end) span of its bytes.
Span = tuple[int, int]


def _read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = 0
    shift = 0
    while True:
        if pos >= end or shift > 63:
            raise AdapterError("truncated or malformed varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _read_fixed(buf: bytes, pos: int, end: int, size: int) -> tuple[int, int]:
    """The little-endian fixed-size integer of ``size`` bytes at ``pos``, and the position after it."""
    if pos + size > end:
        raise AdapterError(f"truncated fixed{size * 8}")
    return int.from_bytes(buf[pos : pos + size], "little"), pos + size


def fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) of the message in ``buf[pos:end]``.

    The value is an int for varint/fixed fields, a (start, end) :data:`Span`
    for length-delimited ones (typed ``Any``: the wire type, which callers
    check, tells which)."""
    value: int | Span
    while pos < end:
        key, pos = _read_varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise AdapterError("protobuf field number 0")
        if wire == 0:
            value, pos = _read_varint(buf, pos, end)
        elif wire == 1:
            value, pos = _read_fixed(buf, pos, end, 8)
        elif wire == 2:
            length, pos = _read_varint(buf, pos, end)
            if pos + length > end:
                raise AdapterError("truncated length-delimited field")
            value = (pos, pos + length)
            pos += length
        elif wire == 5:
            value, pos = _read_fixed(buf, pos, end, 4)
        else:
            raise AdapterError(f"unsupported protobuf wire type {wire}")
        yield field, wire, value
