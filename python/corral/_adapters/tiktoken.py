"""tiktoken vocabularies: ``.tiktoken`` files, ``tiktoken.Encoding`` objects, mistral tekken JSON.

tiktoken stores every ordinary token as its raw bytes (base64 in files), with
its rank as its id, so no decoding is involved; special tokens are listed apart
and stand for their name's UTF-8.  Mistral's "tekken" format is the same data
in a JSON file, with the special tokens placed before the ordinary ones.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .common import (
    AdapterError,
    EosSpec,
    TokenizerData,
    common_eos,
    eos_list,
    id_table,
    is_pathlike,
    no_eos_error,
    no_utf8_error,
    read_bytes,
    resolve_eos,
)


def looks_like_tiktoken(obj: Any) -> bool:
    """Whether ``obj`` has the public API of a ``tiktoken.Encoding``."""
    return all(
        hasattr(obj, a)
        for a in ("n_vocab", "decode_single_token_bytes", "special_tokens_set", "encode_single_token")
    )


# ---------------------------------------------------------------------------
# Sources: an Encoding, a .tiktoken file, a tekken file
# ---------------------------------------------------------------------------


def _read_encoding(enc: Any) -> tuple[dict[int, bytes], dict[str, int]]:
    """A ``tiktoken.Encoding``: (id -> bytes of ordinary tokens, special name -> id)."""
    specials = {name: int(enc.encode_single_token(name)) for name in enc.special_tokens_set}
    special_id_set = set(specials.values())
    token_bytes: dict[int, bytes] = {}
    for i in range(int(enc.n_vocab)):
        if i in special_id_set:
            continue
        try:
            token_bytes[i] = bytes(enc.decode_single_token_bytes(i))
        except KeyError:
            continue  # a gap in the ranks
    return token_bytes, specials


def _read_file(path: Path, where: str) -> tuple[dict[int, bytes], dict[str, int]]:
    """A ``.tiktoken`` or tekken file: (id -> bytes of ordinary tokens, special name -> id)."""
    raw = read_bytes(path, "tiktoken file")
    if not raw.lstrip().startswith(b"{"):
        return _parse_tiktoken_file(raw, where), {}
    try:
        d = json.loads(raw.decode("utf-8"))
    except ValueError as e:
        raise AdapterError(f"{where} is not valid JSON: {e}") from None
    if not isinstance(d, dict):
        raise AdapterError(f"{where} is JSON but not a tekken tokenizer")
    return _parse_tekken(d, where)


def _parse_tiktoken_file(raw: bytes, where: str) -> dict[int, bytes]:
    """The lines ``base64-token rank`` of a .tiktoken file, as rank -> bytes."""
    ranks: dict[int, bytes] = {}
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise AdapterError(f"{where} line {lineno}: expected 'base64-token rank', got {line[:60]!r}")
        try:
            tok = base64.b64decode(parts[0], validate=True)
            rank = int(parts[1])
        except (binascii.Error, ValueError) as e:
            raise AdapterError(f"{where} line {lineno}: {e} in {line[:60]!r}") from None
        if rank < 0:
            raise AdapterError(f"{where} line {lineno}: negative rank {rank}")
        if rank in ranks:
            raise AdapterError(f"{where} line {lineno}: rank {rank} appears twice")
        ranks[rank] = tok
    if not ranks:
        raise AdapterError(f"{where} holds no tokens")
    return ranks


# The special tokens mistral_common gives tekken files that do not list their
# own (rank: name); the remaining special ranks are filled with <SPECIAL_i>.
_TEKKEN_DEFAULT_SPECIALS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)


def _parse_tekken(d: Mapping[str, Any], where: str) -> tuple[dict[int, bytes], dict[str, int]]:
    """A mistral tekken JSON: (id -> bytes of ordinary tokens, special name -> id)."""
    cfg = d.get("config")
    vocab = d.get("vocab")
    if not isinstance(cfg, Mapping) or not isinstance(vocab, list):
        raise AdapterError(f"{where} is JSON but not a tekken tokenizer (needs 'config' and 'vocab')")
    n_special = cfg.get("default_num_special_tokens")
    n_total = cfg.get("default_vocab_size")
    if not isinstance(n_special, int) or not isinstance(n_total, int) or not 0 <= n_special <= n_total:
        raise AdapterError(f"{where}: config needs integer default_num_special_tokens and default_vocab_size")
    n_inner = n_total - n_special
    if len(vocab) < n_inner:
        raise AdapterError(f"{where}: vocab has {len(vocab)} tokens, config wants {n_inner}")
    specials = _tekken_specials(d.get("special_tokens"), n_special, where)
    return _tekken_ordinary(vocab[:n_inner], n_special, where), specials


def _tekken_specials(specials_raw: Any, n_special: int, where: str) -> dict[str, int]:
    """A tekken file's special tokens (name -> rank), the unlisted ranks named <SPECIAL_i>."""
    specials: dict[str, int] = {}
    if specials_raw is None:
        for rank, name in enumerate(_TEKKEN_DEFAULT_SPECIALS):
            specials[name] = rank
        count = len(_TEKKEN_DEFAULT_SPECIALS)
    else:
        if not isinstance(specials_raw, list):
            raise AdapterError(f"{where}: special_tokens is not a list")
        for s in specials_raw:
            if (
                not isinstance(s, Mapping)
                or not isinstance(s.get("token_str"), str)
                or not isinstance(s.get("rank"), int)
            ):
                raise AdapterError(f"{where}: malformed special token {s!r}")
            if s["token_str"] in specials:
                raise AdapterError(f"{where}: special token {s['token_str']!r} appears twice")
            specials[s["token_str"]] = s["rank"]
        count = len(specials_raw)
    if count > n_special:
        raise AdapterError(f"{where}: {count} special tokens, but only {n_special} special ids")
    for rank in range(count, n_special):
        specials.setdefault(f"<SPECIAL_{rank}>", rank)
    for name, rank in specials.items():
        if not 0 <= rank < n_special:
            raise AdapterError(f"{where}: special token {name!r} has rank {rank} outside 0..{n_special - 1}")
    return specials


def _tekken_ordinary(vocab: list, n_special: int, where: str) -> dict[int, bytes]:
    """A tekken file's ordinary tokens, as id -> bytes: the ranks shifted past the specials."""
    ordinary: dict[int, bytes] = {}
    for i, entry in enumerate(vocab):
        if not isinstance(entry, Mapping) or entry.get("rank") != i:
            raise AdapterError(f"{where}: vocab entry {i} is malformed or out of order")
        try:
            ordinary[n_special + i] = base64.b64decode(entry["token_bytes"], validate=True)
        except (KeyError, TypeError, binascii.Error) as e:
            raise AdapterError(f"{where}: vocab entry {i} has bad token_bytes ({e})") from None
    return ordinary


# ---------------------------------------------------------------------------
# Assembling the vocabulary
# ---------------------------------------------------------------------------


def _add_special_tokens(
    specials: dict[str, int],
    extra: Mapping[str, int],
    token_bytes: Mapping[int, bytes],
    where: str,
) -> None:
    """Add the caller's special tokens (name -> id) to ``specials``, overriding its ids."""
    for name, i in dict(extra).items():
        if not isinstance(name, str) or isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise AdapterError(f"special_tokens must map names to ids, got {name!r}: {i!r}")
        if i in token_bytes:
            raise AdapterError(
                f"special token {name!r} has id {i}, which is already an ordinary token of {where}"
            )
        # A name given a new id moves to the end, so that a clash it causes
        # with another special token is reported as the override's.
        if specials.get(name, i) != i:
            del specials[name]
        specials[name] = i


def _special_names_by_id(specials: Mapping[str, int], where: str) -> dict[int, str]:
    """The special tokens as id -> name, refusing two names on one id."""
    by_id: dict[int, str] = {}
    for name, i in specials.items():
        if i in by_id and by_id[i] != name:
            raise AdapterError(f"special tokens {by_id[i]!r} and {name!r} share id {i} in {where}")
        by_id[i] = name
    return by_id


def from_tiktoken(
    path_or_encoding: Any,
    special_tokens: Mapping[str, int] | None = None,
    eos_tokens: EosSpec = None,
) -> TokenizerData:
    """Read a tiktoken vocabulary.

    ``path_or_encoding`` is one of

    * a ``.tiktoken`` file (lines ``base64-token rank``; the rank is the id);
    * a ``tiktoken.Encoding`` (read with its public API);
    * a mistral "tekken" JSON file: its special tokens take ids
      ``0 .. default_num_special_tokens - 1`` (those it lists, the rest
      ``<SPECIAL_i>``), then the first ``default_vocab_size - num_special``
      base64 tokens follow, shifted by that number.

    ``special_tokens`` (name -> id) adds or overrides special tokens; their
    bytes are the name's UTF-8.  ``eos_tokens`` names the EOS token(s) by
    name or id; by default every special token named in
    :data:`~.common.COMMON_EOS_TOKENS` is an EOS (Qwen: ``<|endoftext|>`` and
    ``<|im_end|>``; tekken: ``</s>``).
    """
    eos = eos_list(eos_tokens)
    if looks_like_tiktoken(path_or_encoding):
        where = f"tiktoken encoding {getattr(path_or_encoding, 'name', '?')!r}"
        token_bytes, specials = _read_encoding(path_or_encoding)
    elif is_pathlike(path_or_encoding):
        path = Path(path_or_encoding)
        where = repr(str(path))
        token_bytes, specials = _read_file(path, where)
    else:
        raise AdapterError(
            "from_tiktoken expects a .tiktoken/tekken file path or a tiktoken.Encoding, "
            f"not {type(path_or_encoding).__name__}"
        )
    if special_tokens is not None:
        _add_special_tokens(specials, special_tokens, token_bytes, where)

    by_id = _special_names_by_id(specials, where)
    size = max([-1, *token_bytes.keys(), *by_id.keys()]) + 1
    tb = id_table(size, where)
    for i, b in token_bytes.items():
        tb[i] = b
    try:
        for i, name in by_id.items():
            tb[i] = name.encode("utf-8")
    except UnicodeEncodeError as e:
        raise no_utf8_error(where, i, name, e) from None

    if eos is not None:
        eos_ids = resolve_eos(eos, specials, tb, where)
    else:
        eos_ids = common_eos(specials)
        if not eos_ids:
            raise no_eos_error(where)
    return TokenizerData(tb, sorted(by_id), eos_ids)
