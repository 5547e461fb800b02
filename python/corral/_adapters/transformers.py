"""Live ``transformers`` tokenizers and ``tokenizers.Tokenizer`` objects.

A tokenizer object is read through whatever data it carries, handing the work
to the adapter of that format: a fast tokenizer serializes itself to
``tokenizer.json`` (:mod:`.tokenizer_json`); a SentencePiece-backed ("slow")
one holds an ``sp_model`` or a ``vocab_file`` (:mod:`.sentencepiece`); some
hold a ``tiktoken.Encoding`` (:mod:`.tiktoken`).  The object adds its own
special ids and its ``eos_token_id``.  Nothing is imported from
``transformers`` itself: its objects are only received.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from .common import (
    AdapterError,
    EosSpec,
    TokenizerData,
    common_eos,
    eos_list,
    id_table,
    no_eos_error,
    no_utf8_error,
    resolve_eos,
)
from .sentencepiece import looks_like_sp_processor, piece_ids, sp_pieces, sp_token_bytes
from .tiktoken import from_tiktoken, looks_like_tiktoken
from .tokenizer_json import data_from_tokenizer_dict


def _added_special_ids(tokenizer: Any) -> list[int]:
    """``all_special_ids`` and the ids of added tokens marked special."""
    ids: set[int] = set()
    for i in getattr(tokenizer, "all_special_ids", None) or ():
        if i is not None:
            ids.add(int(i))
    decoder = getattr(tokenizer, "added_tokens_decoder", None)
    if isinstance(decoder, Mapping):
        for i, tok in decoder.items():
            if getattr(tok, "special", False):
                ids.add(int(i))
    return sorted(ids)


def _sentencepiece_source(tokenizer: Any) -> Any:
    """What a SentencePiece-backed tokenizer's vocabulary can be read from (``None``: not one)."""
    sp = getattr(tokenizer, "sp_model", None)
    if sp is None and looks_like_sp_processor(tokenizer):
        sp = tokenizer
    if sp is None:
        vf = getattr(tokenizer, "vocab_file", None)
        if isinstance(vf, (str, os.PathLike)) and str(vf).endswith(".model"):
            sp = vf
    return sp


def _from_fast(backend: Any, extra: list[int], eos: list[str | int] | None, where: str) -> TokenizerData:
    """A fast tokenizer's backend (a ``tokenizers.Tokenizer``), through its tokenizer.json."""
    try:
        d = json.loads(backend.to_str())
    except Exception as e:  # any failure means it cannot be read
        raise AdapterError(f"cannot serialize {where} to tokenizer.json: {e}") from e
    return data_from_tokenizer_dict(d, extra_special_ids=extra, eos=eos, where=where)


def _from_sentencepiece_backed(
    tokenizer: Any, sp: Any, extra: list[int], eos: list[str | int] | None, where: str
) -> TokenizerData:
    """A slow tokenizer: the SentencePiece model ``sp``, with the tokens added on top."""
    pieces, sp_eos, sp_where = sp_pieces(sp)
    tb, special = sp_token_bytes(pieces, sp_where)
    lookup = piece_ids(pieces)
    decoder = getattr(tokenizer, "added_tokens_decoder", None)
    if isinstance(decoder, Mapping):
        for i, tok in decoder.items():
            i = int(i)
            content = getattr(tok, "content", tok)
            if not isinstance(content, str) or i < 0:
                continue
            if i >= len(tb):
                # A token added on top of the model: decoded as its text.
                tb.extend(id_table(i + 1, where)[len(tb) :])
                try:
                    tb[i] = content.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise no_utf8_error(where, i, content, e) from None
            lookup[content] = i
    special_set = {i for i in set(special) | set(extra) if 0 <= i < len(tb) and tb[i] is not None}
    if eos is None and sp_eos >= 0:
        eos = [sp_eos]
    if eos is not None:
        eos_ids = resolve_eos(eos, lookup, tb, where)
    else:
        eos_ids = common_eos({name: i for name, i in lookup.items() if i in special_set})
        if not eos_ids:
            raise no_eos_error(where)
    return TokenizerData(tb, sorted(special_set), eos_ids)


def from_huggingface(tokenizer: Any, eos_token: EosSpec = None) -> TokenizerData:
    """Read a ``transformers`` tokenizer (or a bare ``tokenizers.Tokenizer``).

    * fast tokenizers (``backend_tokenizer``) and ``tokenizers.Tokenizer``:
      their serialized ``tokenizer.json`` goes through
      :func:`~.tokenizer_json.from_tokenizer_json`'s logic;
    * SentencePiece-backed ("slow") tokenizers: their ``sp_model`` (or
      ``vocab_file``) goes through :func:`~.sentencepiece.from_sentencepiece`,
      and tokens added on top contribute the UTF-8 bytes of their content;
    * an object holding a ``tiktoken.Encoding`` in ``.tokenizer``:
      :func:`~.tiktoken.from_tiktoken`.

    Special ids add ``tokenizer.all_special_ids`` and added tokens marked
    special.  EOS: ``eos_token`` if given, else ``tokenizer.eos_token_id``, else
    the special tokens named in :data:`~.common.COMMON_EOS_TOKENS`.
    """
    eos = eos_list(eos_token)
    if eos is None:
        e = getattr(tokenizer, "eos_token_id", None)
        if isinstance(e, int) and not isinstance(e, bool):
            eos = [e]
    extra = _added_special_ids(tokenizer)
    where = f"the {type(tokenizer).__name__} tokenizer"

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None and callable(getattr(tokenizer, "to_str", None)):
        backend = tokenizer  # a tokenizers.Tokenizer
    if backend is not None:
        return _from_fast(backend, extra, eos, where)
    sp = _sentencepiece_source(tokenizer)
    if sp is not None:
        return _from_sentencepiece_backed(tokenizer, sp, extra, eos, where)
    inner = getattr(tokenizer, "tokenizer", None)
    if inner is not None and looks_like_tiktoken(inner):
        return from_tiktoken(inner, eos_tokens=eos)
    if looks_like_tiktoken(tokenizer):
        return from_tiktoken(tokenizer, eos_tokens=eos)
    raise AdapterError(
        f"cannot read {where}: it has neither a backend_tokenizer (fast tokenizer), "
        "an sp_model/vocab_file (SentencePiece) nor a tiktoken encoding"
    )
