"""SentencePiece models: a ``SentencePieceProcessor``, a ``.model`` file or its bytes.

A SentencePiece vocabulary is a list of pieces, each with a type.  A piece's
bytes are its text with ``▁`` turned into a space, except byte pieces
``<0xNN>``, which are the byte ``NN``; control, unknown and unused pieces are
special.  A ``.model`` file is read with the small protobuf reader of
:mod:`.protobuf`, so the ``sentencepiece`` package is only needed by callers
that hand over a processor.
"""

from __future__ import annotations

from typing import Any

from . import protobuf
from .common import (
    BYTE_PIECE_RE,
    AdapterError,
    EosSpec,
    TokenizerData,
    common_eos,
    eos_list,
    is_pathlike,
    no_eos_error,
    no_utf8_error,
    read_bytes,
    resolve_eos,
)

# Piece types of sentencepiece_model.proto.
_SP_NORMAL, _SP_UNKNOWN, _SP_CONTROL, _SP_USER_DEFINED, _SP_UNUSED, _SP_BYTE = 1, 2, 3, 4, 5, 6
_SP_TYPES = frozenset((_SP_NORMAL, _SP_UNKNOWN, _SP_CONTROL, _SP_USER_DEFINED, _SP_UNUSED, _SP_BYTE))

#: Every id's (piece text, piece type).
Pieces = list[tuple[str, int]]


def looks_like_sp_processor(obj: Any) -> bool:
    """Whether ``obj`` has the public API of a ``SentencePieceProcessor``."""
    return all(
        callable(getattr(obj, a, None))
        for a in ("get_piece_size", "id_to_piece", "is_control", "is_unknown", "is_byte", "eos_id")
    )


# ---------------------------------------------------------------------------
# Reading the pieces
# ---------------------------------------------------------------------------


def _parse_sp_model(buf: bytes, where: str) -> tuple[Pieces, str]:
    """(piece, type) for every id, and the trainer's eos_piece, from a .model file."""
    pieces: Pieces = []
    eos_piece = "</s>"
    try:
        for field, wire, value in protobuf.fields(buf, 0, len(buf)):
            if field == 1 and wire == 2:  # ModelProto.pieces
                pieces.append(_parse_piece(buf, value, len(pieces)))
            elif field == 2 and wire == 2:  # ModelProto.trainer_spec
                eos_piece = _parse_eos_piece(buf, value, eos_piece)
    except (AdapterError, UnicodeDecodeError) as e:
        raise AdapterError(f"{where} is not a SentencePiece model ({e})") from None
    if not pieces:
        raise AdapterError(f"{where} is not a SentencePiece model (no pieces)")
    for i, (piece, ptype) in enumerate(pieces):
        if ptype not in _SP_TYPES:
            raise AdapterError(f"{where}: piece {i} ({piece!r}) has unknown type {ptype}")
    return pieces, eos_piece


def _parse_piece(buf: bytes, span: protobuf.Span, index: int) -> tuple[str, int]:
    """One ``SentencePiece`` message: its text and type (``NORMAL`` when not given)."""
    piece: str | None = None
    ptype = _SP_NORMAL
    for field, wire, value in protobuf.fields(buf, span[0], span[1]):
        if field == 1 and wire == 2:
            piece = buf[value[0] : value[1]].decode("utf-8")
        elif field == 3 and wire == 0:
            ptype = value
    if piece is None:
        raise AdapterError(f"piece {index} has no text")
    return piece, ptype


def _parse_eos_piece(buf: bytes, span: protobuf.Span, default: str) -> str:
    """The ``TrainerSpec.eos_piece`` of a ``TrainerSpec`` message, or ``default``."""
    eos_piece = default
    for field, wire, value in protobuf.fields(buf, span[0], span[1]):
        if field == 47 and wire == 2:
            eos_piece = buf[value[0] : value[1]].decode("utf-8")
    return eos_piece


def _processor_pieces(sp: Any) -> Pieces:
    """(piece, type) per id of a ``SentencePieceProcessor``, through its public API."""
    pieces: Pieces = []
    is_unused = getattr(sp, "is_unused", None)  # missing from old releases
    for i in range(int(sp.get_piece_size())):
        if sp.is_byte(i):
            ptype = _SP_BYTE
        elif sp.is_control(i):
            ptype = _SP_CONTROL
        elif sp.is_unknown(i):
            ptype = _SP_UNKNOWN
        elif is_unused is not None and is_unused(i):
            ptype = _SP_UNUSED
        else:
            ptype = _SP_NORMAL
        pieces.append((sp.id_to_piece(i), ptype))
    return pieces


def sp_pieces(src: Any) -> tuple[Pieces, int, str]:
    """(piece, type) per id, the EOS id (-1: none) and a description of ``src``.

    ``src`` is a ``SentencePieceProcessor``, a ``.model`` path or the model's bytes.
    """
    if looks_like_sp_processor(src):
        return _processor_pieces(src), int(src.eos_id()), "the SentencePiece processor"
    if isinstance(src, (bytes, bytearray)):
        where = "SentencePiece model bytes"
        raw = bytes(src)
    elif is_pathlike(src):
        where = repr(str(src))
        raw = read_bytes(src, "SentencePiece model")
    else:
        raise AdapterError(
            "from_sentencepiece expects a SentencePieceProcessor or a .model path, "
            f"not {type(src).__name__}"
        )
    pieces, eos_piece = _parse_sp_model(raw, where)
    # As SentencePieceProcessor::eos_id(): the eos piece's id if it is a control piece.
    sp_eos = -1
    for i, (piece, ptype) in enumerate(pieces):
        if piece == eos_piece:
            sp_eos = i if ptype == _SP_CONTROL else -1
            break
    return pieces, sp_eos, where


# ---------------------------------------------------------------------------
# Assembling the vocabulary
# ---------------------------------------------------------------------------


def _piece_bytes(piece: str, is_byte: bool, i: int, where: str) -> bytes:
    if is_byte:
        m = BYTE_PIECE_RE.match(piece)
        if m is None:
            raise AdapterError(f"{where}: byte piece {i} is {piece!r}, not <0xNN>")
        return bytes([int(m.group(1), 16)])
    try:
        return piece.replace("\u2581", " ").encode("utf-8")
    except UnicodeEncodeError as e:  # a processor's piece (a .model file's text is UTF-8)
        raise no_utf8_error(where, i, piece, e) from None


def sp_token_bytes(pieces: Pieces, where: str) -> tuple[list[bytes | None], list[int]]:
    """Every piece's bytes, and the ids of the special (control, unknown, unused) pieces."""
    tb: list[bytes | None] = []
    special: list[int] = []
    for i, (piece, ptype) in enumerate(pieces):
        tb.append(_piece_bytes(piece, ptype == _SP_BYTE, i, where))
        if ptype in (_SP_CONTROL, _SP_UNKNOWN, _SP_UNUSED):
            special.append(i)
    return tb, special


def piece_ids(pieces: Pieces) -> dict[str, int]:
    """Piece text -> id; a text that occurs twice names its first id."""
    return {p: i for i, (p, _) in reversed(list(enumerate(pieces)))}


def from_sentencepiece(processor_or_model_path: Any, eos_token: EosSpec = None) -> TokenizerData:
    """Read a SentencePiece model: a ``SentencePieceProcessor``, a ``.model``
    path, or the serialized model bytes.

    ``▁`` becomes a space, byte pieces ``<0xNN>`` become the byte ``NN``.
    Control, unknown and unused pieces are special.  EOS: ``eos_token`` if
    given, else the processor's ``eos_id()`` (for files: the trainer's
    ``eos_piece``, ``</s>`` by default, when it is a control piece), else the
    special pieces named in :data:`~.common.COMMON_EOS_TOKENS`.
    """
    pieces, sp_eos, where = sp_pieces(processor_or_model_path)
    tb, special = sp_token_bytes(pieces, where)
    eos = eos_list(eos_token)
    if eos is not None:
        eos_ids = resolve_eos(eos, piece_ids(pieces), tb, where)
    elif sp_eos >= 0:
        eos_ids = [sp_eos]
    else:
        eos_ids = common_eos({pieces[i][0]: i for i in reversed(special)})
        if not eos_ids:
            raise no_eos_error(where)
    return TokenizerData(tb, special, eos_ids)
