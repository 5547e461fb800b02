"""Tokenizer adapters: turn a tokenizer into the exact bytes of every token.

Everything the constraint engine does happens over bytes, so a vocabulary is
described by :class:`TokenizerData`:

* ``token_bytes[i]`` -- the exact bytes token ``i`` contributes to the decoded
  text (byte-level BPE's ``Ġ`` alphabet undone, SentencePiece's ``▁`` turned
  into a space and its ``<0xNN>`` pieces turned into the byte ``NN``), or
  ``None`` for an id that names no token (a gap in the id space);
* ``special_ids`` -- control tokens (``<s>``, ``</s>``, ``<|endoftext|>``,
  ``<|im_start|>``, ...) that a grammar must never allow.  Their
  ``token_bytes`` hold their textual form (what a decode that keeps special
  tokens prints) only for display: consumers must not match them as text;
* ``eos_token_ids`` -- the end-of-sequence id(s), also in ``special_ids``.

Adapters read the tokenizer's own data (a ``tokenizer.json``, a ``.tiktoken``
file, a SentencePiece ``.model``, a mistral "tekken" JSON) or library objects
through their public API.  Nothing heavy is imported at module import time:
``tokenizers``, ``tiktoken``, ``sentencepiece`` and ``transformers`` objects are
only ever *received*; this module never needs to import them itself.

Tokens added on top of a model (``added_tokens``) stand for their content's
UTF-8 bytes (with a SentencePiece-style decoder, the decoder is applied to the
content, as ``tokenizers`` does).

Boundary effects of a decoder are deliberately not part of a token's bytes:
SentencePiece (and the ``Metaspace``/``Strip`` decoders that mimic it) drop the
leading space of the *first* token of a decode, and ``transformers`` may "clean
up tokenization spaces" of a whole string.  Those depend on where a token sits,
not on the token; a token's bytes are what it contributes in the middle of a
text.

Anything that cannot be interpreted exactly raises :class:`AdapterError`
(a ``ValueError``) naming what was not understood, rather than producing
bytes that might be wrong.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

__all__ = [
    "AdapterError",
    "COMMON_EOS_TOKENS",
    "TokenizerData",
    "bytes_to_unicode",
    "unicode_to_bytes",
    "from_tokenizer_json",
    "from_huggingface",
    "from_tiktoken",
    "from_sentencepiece",
]

from .errors import VocabularyError  # noqa: E402 - stdlib-only module, no Rust import

EosSpec = Union[str, int, Sequence[Union[str, int]], None]


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
        tb = list(self.token_bytes)
        for i, b in enumerate(tb):
            if b is not None and not isinstance(b, bytes):
                if isinstance(b, (bytearray, memoryview)):
                    tb[i] = bytes(b)
                else:
                    raise AdapterError(
                        f"token_bytes[{i}] must be bytes or None, not {type(b).__name__}"
                    )
        n = len(tb)

        def check_ids(ids: Iterable[int], what: str) -> list[int]:
            out = []
            for i in ids:
                if isinstance(i, bool):
                    raise AdapterError(f"{what} must hold ints, got {i!r}")
                if not isinstance(i, int):
                    try:
                        i = int(i.__index__())  # numpy integers
                    except AttributeError:
                        raise AdapterError(f"{what} must hold ints, got {i!r}") from None
                if not 0 <= i < n:
                    raise AdapterError(f"{what}: id {i} is outside the vocabulary (size {n})")
                if tb[i] is None:
                    raise AdapterError(f"{what}: id {i} names no token")
                out.append(i)
            return out

        eos = list(dict.fromkeys(check_ids(self.eos_token_ids, "eos_token_ids")))
        special = sorted(set(check_ids(self.special_ids, "special_ids")) | set(eos))
        object.__setattr__(self, "token_bytes", tb)
        object.__setattr__(self, "special_ids", special)
        object.__setattr__(self, "eos_token_ids", eos)

    @property
    def vocab_size(self) -> int:
        """Number of ids, i.e. ``len(token_bytes)`` (largest id + 1)."""
        return len(self.token_bytes)


# ---------------------------------------------------------------------------
# GPT-2 byte <-> unicode alphabet
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


def _byte_level_decode(token: str) -> bytes:
    # Exactly what the ByteLevel decoder of `tokenizers` does for one token:
    # map every character through the alphabet; a token holding a character
    # outside the alphabet is taken as plain text (its UTF-8 bytes).
    try:
        return bytes([_CHAR_TO_BYTE[c] for c in token])
    except KeyError:
        return token.encode("utf-8")


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _is_pathlike(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _read_bytes(path: Any, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise AdapterError(f"cannot read {what} {str(path)!r}: {e}") from e


def _eos_list(spec: EosSpec) -> list[str | int] | None:
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


def _resolve_eos(
    spec: list[str | int],
    lookup: Mapping[str, int],
    token_bytes: Sequence[bytes | None],
    where: str,
) -> list[int]:
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


def _common_eos(names_to_ids: Mapping[str, int]) -> list[int]:
    return sorted({names_to_ids[n] for n in COMMON_EOS_TOKENS if n in names_to_ids})


def _no_eos_error(where: str, argname: str) -> AdapterError:
    return AdapterError(
        f"cannot tell which token of {where} ends a sequence (none of "
        f"{', '.join(COMMON_EOS_TOKENS)} is a special token there); pass "
        f"{argname}=... (a token string, an id, or a list; [] for none)"
    )


# ---------------------------------------------------------------------------
# HF tokenizer.json
# ---------------------------------------------------------------------------


def _load_json_source(source: Any) -> tuple[dict, Path | None]:
    """A tokenizer.json as a dict, and the folder it came from (if a file)."""
    if isinstance(source, Mapping):
        return dict(source), None
    if isinstance(source, (bytes, bytearray)):
        text = bytes(source).decode("utf-8", errors="strict")
        return _parse_json_text(text, "tokenizer.json text"), None
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return _parse_json_text(source, "tokenizer.json text"), None
    if _is_pathlike(source):
        path = Path(source)
        if path.is_dir():
            path = path / "tokenizer.json"
        raw = _read_bytes(path, "tokenizer.json file")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise AdapterError(f"{str(path)!r} is not a tokenizer.json (not UTF-8 text: {e})") from None
        return _parse_json_text(text, repr(str(path))), path.parent
    raise AdapterError(
        "from_tokenizer_json expects a path, the JSON text or the parsed dict, "
        f"not {type(source).__name__}"
    )


def _parse_json_text(text: str, what: str) -> dict:
    try:
        d = json.loads(text)
    except ValueError as e:
        raise AdapterError(f"{what} is not valid JSON: {e}") from None
    if not isinstance(d, dict):
        raise AdapterError(f"{what} is not a tokenizer.json (top level is not an object)")
    return d


def _model_vocab(model: Mapping[str, Any]) -> tuple[dict[int, str], set[int]]:
    """The model's id -> token string, and the id(s) of its unknown token."""
    mtype = model.get("type")
    vocab = model.get("vocab")
    unk: set[int] = set()
    if mtype is None and isinstance(vocab, Mapping) and "merges" in model:
        mtype = "BPE"  # very old files omit the type
    if mtype in ("BPE", "WordLevel", "WordPiece"):
        if not isinstance(vocab, Mapping):
            raise AdapterError(f"tokenizer.json: {mtype} model has no vocab object")
        id_to_tok: dict[int, str] = {}
        for tok, i in vocab.items():
            if isinstance(i, bool) or not isinstance(i, int) or i < 0:
                raise AdapterError(f"tokenizer.json: vocab entry {tok!r} has a bad id {i!r}")
            if i in id_to_tok:
                raise AdapterError(
                    f"tokenizer.json: id {i} is given to both {id_to_tok[i]!r} and {tok!r}"
                )
            id_to_tok[i] = tok
        unk_tok = model.get("unk_token")
        if isinstance(unk_tok, str) and unk_tok in vocab:
            unk.add(vocab[unk_tok])
        return id_to_tok, unk
    if mtype == "Unigram":
        if not isinstance(vocab, list):
            raise AdapterError("tokenizer.json: Unigram model has no vocab list")
        id_to_tok = {}
        for i, entry in enumerate(vocab):
            if not isinstance(entry, (list, tuple)) or not entry or not isinstance(entry[0], str):
                raise AdapterError(f"tokenizer.json: Unigram vocab entry {i} is malformed: {entry!r}")
            id_to_tok[i] = entry[0]
        unk_id = model.get("unk_id")
        if isinstance(unk_id, int) and 0 <= unk_id < len(vocab):
            unk.add(unk_id)
        return id_to_tok, unk
    raise AdapterError(f"tokenizer.json: unsupported model type {mtype!r}")


def _flatten_decoders(dec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if dec.get("type") == "Sequence":
        out: list[Mapping[str, Any]] = []
        subs = dec.get("decoders")
        if not isinstance(subs, list):
            raise AdapterError("tokenizer.json: Sequence decoder without a decoders list")
        for d in subs:
            if not isinstance(d, Mapping):
                raise AdapterError(f"tokenizer.json: malformed decoder {d!r}")
            out.extend(_flatten_decoders(d))
        return out
    return [dec]


def _contains_type(node: Any, wanted: str) -> Mapping[str, Any] | None:
    """The first component (pre-tokenizer, ...) of type `wanted`, searching Sequences."""
    if not isinstance(node, Mapping):
        return None
    if node.get("type") == wanted:
        return node
    for key in ("pretokenizers", "decoders", "normalizers"):
        for sub in node.get(key) or ():
            found = _contains_type(sub, wanted)
            if found is not None:
                return found
    return None


_BYTE_FALLBACK_RE = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")


def _compile_decoder(d: Mapping[str, Any]) -> tuple[Any, bool]:
    """Turn a tokenizer.json decoder into a function token string -> bytes,
    and whether the decoder is byte-level.

    A decoder in `tokenizers` is a chain of steps over the list of token
    strings.  Steps before the list is fused into one string act on each
    token alone and are applied here; after fusing, only steps whose effect is
    limited to the ends of the whole text (Strip) can be ignored per token --
    anything else is refused.
    """
    dec = d.get("decoder")
    if dec is None:
        # No decoder: `tokenizers` would join the raw tokens with spaces, which
        # is never what the model's text is.  Infer the scheme from the
        # pre-tokenizer, which shows how the vocabulary's strings were made.
        pre = d.get("pre_tokenizer")
        if _contains_type(pre, "ByteLevel") is not None:
            dec = {"type": "ByteLevel"}
        else:
            ms = _contains_type(pre, "Metaspace")
            if ms is None:
                raise AdapterError(
                    "tokenizer.json has no decoder and its pre_tokenizer is neither "
                    "ByteLevel nor Metaspace: cannot tell what bytes the tokens stand for"
                )
            dec = dict(ms)
    if not isinstance(dec, Mapping):
        raise AdapterError(f"tokenizer.json: malformed decoder {dec!r}")

    steps = _flatten_decoders(dec)
    ops: list[tuple] = []
    fused = False  # the token list has been joined into one string
    to_bytes = False  # tokens already turned into bytes
    for step in steps:
        t = step.get("type")
        if t == "Fuse":
            fused = True
        elif t == "Strip":
            content = step.get("content", " ")
            start, stop = step.get("start", 0), step.get("stop", 0)
            if not isinstance(content, str) or len(content) != 1:
                raise AdapterError(f"tokenizer.json: Strip decoder with bad content {content!r}")
            if not (isinstance(start, int) and isinstance(stop, int)):
                raise AdapterError("tokenizer.json: Strip decoder with bad start/stop")
            if fused or (start == 0 and stop == 0):
                continue  # only trims the ends of the whole text
            if to_bytes:
                raise AdapterError(
                    "tokenizer.json: a per-token Strip after ByteFallback/ByteLevel is not supported"
                )
            ops.append(("strip", content, start, stop))
        elif t in ("Replace", "Metaspace", "ByteFallback", "ByteLevel"):
            if fused:
                raise AdapterError(
                    f"tokenizer.json: a {t} decoder after the tokens are fused acts across "
                    "token boundaries and cannot be expressed per token"
                )
            if to_bytes:
                raise AdapterError(
                    f"tokenizer.json: a {t} decoder after ByteFallback/ByteLevel is not supported"
                )
            if t == "Replace":
                pat = step.get("pattern")
                content = step.get("content")
                if not isinstance(pat, Mapping) or "String" not in pat:
                    raise AdapterError(
                        f"tokenizer.json: Replace decoder with pattern {pat!r} is not supported "
                        "(only a plain String pattern is)"
                    )
                if not isinstance(pat["String"], str) or not isinstance(content, str):
                    raise AdapterError("tokenizer.json: malformed Replace decoder")
                if pat["String"] == "":
                    raise AdapterError("tokenizer.json: Replace decoder with an empty pattern")
                ops.append(("replace", pat["String"], content))
            elif t == "Metaspace":
                rep = step.get("replacement", "\u2581")
                if not isinstance(rep, str) or len(rep) != 1:
                    raise AdapterError(f"tokenizer.json: Metaspace with bad replacement {rep!r}")
                # Dropping the first token's leading space is a boundary effect.
                ops.append(("replace", rep, " "))
            elif t == "ByteFallback":
                ops.append(("bytefallback",))
                to_bytes = True
            else:  # ByteLevel maps each token to bytes, then fuses
                ops.append(("bytelevel",))
                to_bytes = True
                fused = True
        else:
            raise AdapterError(
                f"tokenizer.json: decoder type {t!r} is not supported (its output is not a "
                "per-token concatenation of bytes, or it is unknown)"
            )

    byte_level = ("bytelevel",) in ops
    if ops == [("bytelevel",)]:
        return _byte_level_decode, True

    def decode(token: str) -> bytes:
        value: str | bytes = token
        for op in ops:
            kind = op[0]
            if isinstance(value, bytes):
                break  # nothing after a bytes conversion (enforced above)
            if kind == "replace":
                value = value.replace(op[1], op[2])
            elif kind == "strip":
                _, c, start, stop = op
                i = 0
                while i < start and i < len(value) and value[i] == c:
                    i += 1
                j = len(value)
                k = 0
                while k < stop and j > i and value[j - 1] == c:
                    j -= 1
                    k += 1
                value = value[i:j]
            elif kind == "bytefallback":
                m = _BYTE_FALLBACK_RE.match(value)
                if m is not None:
                    value = bytes([int(m.group(1), 16)])
            elif kind == "bytelevel":
                value = _byte_level_decode(value)
        return value if isinstance(value, bytes) else value.encode("utf-8")

    return decode, byte_level


def _token_of(x: Any) -> str | None:
    """The content of a config's token entry: a string or {"content": ...}."""
    if isinstance(x, str):
        return x
    if isinstance(x, Mapping) and isinstance(x.get("content"), str):
        return x["content"]
    return None


def _tokenizer_dict_data(
    d: Mapping[str, Any],
    *,
    extra_special_ids: Iterable[int] = (),
    extra_special_names: Iterable[str] = (),
    eos: list[str | int] | None = None,
    where: str = "tokenizer.json",
    argname: str = "eos_token_ids",
) -> TokenizerData:
    model = d.get("model")
    if not isinstance(model, Mapping):
        raise AdapterError(f"{where}: no model section; is this a HF tokenizer.json?")
    id_to_tok, unk_ids = _model_vocab(model)
    decode, byte_level = _compile_decoder(d)

    added = d.get("added_tokens") or []
    if not isinstance(added, list):
        raise AdapterError(f"{where}: added_tokens is not a list")
    added_by_id: dict[int, str] = {}
    special_ids: set[int] = set(unk_ids)
    for a in added:
        if not isinstance(a, Mapping) or not isinstance(a.get("content"), str):
            raise AdapterError(f"{where}: malformed added token {a!r}")
        i = a.get("id")
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise AdapterError(f"{where}: added token {a['content']!r} has a bad id {i!r}")
        added_by_id[i] = a["content"]
        if a.get("special"):
            special_ids.add(i)

    size = max([-1, *id_to_tok.keys(), *added_by_id.keys()]) + 1
    token_bytes: list[bytes | None] = [None] * size
    name_to_id: dict[str, int] = {}
    for i, tok in id_to_tok.items():
        token_bytes[i] = decode(tok)
        name_to_id.setdefault(tok, i)
    # Added tokens take precedence over the model's entry for the same id (as
    # in `tokenizers`).  They are matched in the input text before any
    # pre-tokenization, so what they stand for is their content: with a
    # byte-level decoder that is the content's UTF-8 (some `tokenizers`
    # releases push added tokens through the ByteLevel decoder and garble
    # those made only of byte-alphabet characters such as "café" --
    # huggingface/tokenizers#1392, #1915 -- which is a bug, fixed upstream);
    # other decoders (SentencePiece style) are applied to them as to any token,
    # as every `tokenizers` release does.
    for i, tok in added_by_id.items():
        token_bytes[i] = tok.encode("utf-8") if byte_level else decode(tok)
    for i, tok in added_by_id.items():
        name_to_id[tok] = i

    for i in extra_special_ids:
        if 0 <= i < size and token_bytes[i] is not None:
            special_ids.add(i)
    for name in extra_special_names:
        if name in name_to_id:
            special_ids.add(name_to_id[name])

    if eos is not None:
        eos_ids = _resolve_eos(eos, name_to_id, token_bytes, where)
    else:
        special_names = {id_to_tok[i]: i for i in special_ids if i in id_to_tok}
        special_names.update({added_by_id[i]: i for i in special_ids if i in added_by_id})
        eos_ids = _common_eos(special_names)
        if not eos_ids:
            raise _no_eos_error(where, argname)
    return TokenizerData(token_bytes, sorted(special_ids), eos_ids)


def _read_config_beside(folder: Path | None) -> tuple[dict, list[int]]:
    """tokenizer_config.json (as a dict) and generation_config.json's EOS ids."""
    config: dict = {}
    gen_eos: list[int] = []
    if folder is None:
        return config, gen_eos
    cfg_path = folder / "tokenizer_config.json"
    if cfg_path.is_file():
        try:
            c = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise AdapterError(f"cannot read {str(cfg_path)!r}: {e}") from None
        if isinstance(c, dict):
            config = c
    gen_path = folder / "generation_config.json"
    if gen_path.is_file():
        try:
            g = json.loads(gen_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise AdapterError(f"cannot read {str(gen_path)!r}: {e}") from None
        eos = g.get("eos_token_id") if isinstance(g, dict) else None
        if isinstance(eos, int) and not isinstance(eos, bool):
            gen_eos = [eos]
        elif isinstance(eos, list):
            gen_eos = [x for x in eos if isinstance(x, int) and not isinstance(x, bool)]
    return config, gen_eos


_CONFIG_SPECIAL_KEYS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "pad_token",
    "sep_token",
    "cls_token",
    "mask_token",
)


def from_tokenizer_json(source: Any, eos_token: EosSpec = None) -> TokenizerData:
    """Read a Hugging Face ``tokenizer.json``.

    ``source`` is a path to the file (or to the folder holding it), its JSON
    text, or the parsed dict.  The decoder decides what bytes a token stands
    for: ``ByteLevel`` (GPT-2 style byte-level BPE) undoes the byte alphabet;
    ``Replace``/``ByteFallback``/``Fuse``/``Strip`` sequences and ``Metaspace``
    (SentencePiece style) turn ``▁`` into a space and ``<0xNN>`` into a byte.
    With no decoder, a ``ByteLevel`` or ``Metaspace`` pre-tokenizer decides.
    Added tokens stand for their content: its UTF-8 with a byte-level
    decoder, the decoder applied to it otherwise (``▁`` -> space, ...).

    Special ids: added tokens marked ``special``, the model's unknown token,
    and, when the file sits beside a ``tokenizer_config.json``, the tokens that
    config names (bos/eos/unk/pad/..., ``additional_special_tokens``,
    ``added_tokens_decoder`` entries marked special).

    EOS: ``eos_token`` (a token string, an id, or a list of them) if given;
    otherwise the config's ``eos_token`` together with the ids in a
    ``generation_config.json`` beside the file; otherwise every special token
    named in :data:`COMMON_EOS_TOKENS`.
    """
    d, folder = _load_json_source(source)
    config, gen_eos = _read_config_beside(folder)
    where = "tokenizer.json" if folder is None else repr(str(folder / "tokenizer.json"))

    names: list[str] = []
    ids: list[int] = []
    for key in _CONFIG_SPECIAL_KEYS:
        name = _token_of(config.get(key))
        if name is not None:
            names.append(name)
    for x in config.get("additional_special_tokens") or ():
        name = _token_of(x)
        if name is not None:
            names.append(name)
    atd = config.get("added_tokens_decoder")
    if isinstance(atd, Mapping):
        for k, v in atd.items():
            if isinstance(v, Mapping) and v.get("special"):
                try:
                    ids.append(int(k))
                except ValueError:
                    pass

    eos = _eos_list(eos_token)
    if eos is None:
        cfg_eos = _token_of(config.get("eos_token"))
        found: list[str | int] = []
        if cfg_eos is not None:
            found.append(cfg_eos)
        found.extend(gen_eos)
        if found:
            eos = found
    return _tokenizer_dict_data(
        d, extra_special_ids=ids, extra_special_names=names, eos=eos, where=where
    )


# ---------------------------------------------------------------------------
# transformers tokenizers
# ---------------------------------------------------------------------------


def _hf_added_special_ids(tokenizer: Any) -> list[int]:
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


def from_huggingface(tokenizer: Any, eos_token: EosSpec = None) -> TokenizerData:
    """Read a ``transformers`` tokenizer (or a bare ``tokenizers.Tokenizer``).

    * fast tokenizers (``backend_tokenizer``) and ``tokenizers.Tokenizer``:
      their serialized ``tokenizer.json`` goes through :func:`from_tokenizer_json`'s
      logic;
    * SentencePiece-backed ("slow") tokenizers: their ``sp_model`` (or
      ``vocab_file``) goes through :func:`from_sentencepiece`, and tokens added
      on top contribute the UTF-8 bytes of their content;
    * an object holding a ``tiktoken.Encoding`` in ``.tokenizer``: :func:`from_tiktoken`.

    Special ids add ``tokenizer.all_special_ids`` and added tokens marked
    special.  EOS: ``eos_token`` if given, else ``tokenizer.eos_token_id``, else
    the special tokens named in :data:`COMMON_EOS_TOKENS`.
    """
    eos = _eos_list(eos_token)
    if eos is None:
        e = getattr(tokenizer, "eos_token_id", None)
        if isinstance(e, int) and not isinstance(e, bool):
            eos = [e]
    extra = _hf_added_special_ids(tokenizer)
    where = f"the {type(tokenizer).__name__} tokenizer"

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None and callable(getattr(tokenizer, "to_str", None)):
        backend = tokenizer  # a tokenizers.Tokenizer
    if backend is not None:
        try:
            d = json.loads(backend.to_str())
        except Exception as e:  # noqa: BLE001 -- any failure means we cannot read it
            raise AdapterError(f"cannot serialize {where} to tokenizer.json: {e}") from e
        return _tokenizer_dict_data(d, extra_special_ids=extra, eos=eos, where=where)

    sp = getattr(tokenizer, "sp_model", None)
    if sp is None and _looks_like_sp_processor(tokenizer):
        sp = tokenizer
    if sp is None:
        vf = getattr(tokenizer, "vocab_file", None)
        if isinstance(vf, (str, os.PathLike)) and str(vf).endswith(".model"):
            sp = vf
    if sp is not None:
        pieces, sp_eos, sp_where = _sp_pieces(sp)
        tb, special = _sp_token_bytes(pieces, sp_where)
        lookup = {p: i for i, (p, _) in reversed(list(enumerate(pieces)))}
        special_set = set(special) | set(extra)
        decoder = getattr(tokenizer, "added_tokens_decoder", None)
        if isinstance(decoder, Mapping):
            for i, tok in decoder.items():
                i = int(i)
                content = getattr(tok, "content", tok)
                if not isinstance(content, str) or i < 0:
                    continue
                if i >= len(tb):
                    # A token added on top of the model: decoded as its text.
                    tb.extend([None] * (i + 1 - len(tb)))
                    tb[i] = content.encode("utf-8")
                lookup[content] = i
        special_set = {i for i in special_set if 0 <= i < len(tb) and tb[i] is not None}
        if eos is None and sp_eos >= 0:
            eos = [sp_eos]
        if eos is None:
            by_name = {name: i for name, i in lookup.items() if i in special_set}
            eos_ids = _common_eos(by_name)
            if not eos_ids:
                raise _no_eos_error(where, "eos_token_ids")
        else:
            eos_ids = _resolve_eos(eos, lookup, tb, where)
        return TokenizerData(tb, sorted(special_set), eos_ids)

    inner = getattr(tokenizer, "tokenizer", None)
    if inner is not None and _looks_like_tiktoken(inner):
        return from_tiktoken(inner, eos_tokens=eos)
    if _looks_like_tiktoken(tokenizer):
        return from_tiktoken(tokenizer, eos_tokens=eos)
    raise AdapterError(
        f"cannot read {where}: it has neither a backend_tokenizer (fast tokenizer), "
        "an sp_model/vocab_file (SentencePiece) nor a tiktoken encoding"
    )


# ---------------------------------------------------------------------------
# tiktoken (.tiktoken files, tiktoken.Encoding, mistral tekken JSON)
# ---------------------------------------------------------------------------


def _looks_like_tiktoken(obj: Any) -> bool:
    return all(
        hasattr(obj, a)
        for a in ("n_vocab", "decode_single_token_bytes", "special_tokens_set", "encode_single_token")
    )


def _parse_tiktoken_file(raw: bytes, where: str) -> dict[int, bytes]:
    ranks: dict[int, bytes] = {}
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise AdapterError(
                f"{where} line {lineno}: expected 'base64-token rank', got {line[:60]!r}"
            )
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
        raise AdapterError(
            f"{where}: config needs integer default_num_special_tokens and default_vocab_size"
        )
    n_inner = n_total - n_special
    if len(vocab) < n_inner:
        raise AdapterError(f"{where}: vocab has {len(vocab)} tokens, config wants {n_inner}")

    specials_raw = d.get("special_tokens")
    specials: dict[str, int] = {}
    if specials_raw is None:
        names = list(_TEKKEN_DEFAULT_SPECIALS)
        for rank, name in enumerate(names):
            specials[name] = rank
        count = len(names)
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

    ordinary: dict[int, bytes] = {}
    for i, entry in enumerate(vocab[:n_inner]):
        if not isinstance(entry, Mapping) or entry.get("rank") != i:
            raise AdapterError(f"{where}: vocab entry {i} is malformed or out of order")
        try:
            ordinary[n_special + i] = base64.b64decode(entry["token_bytes"], validate=True)
        except (KeyError, TypeError, binascii.Error) as e:
            raise AdapterError(f"{where}: vocab entry {i} has bad token_bytes ({e})") from None
    return ordinary, specials


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
    :data:`COMMON_EOS_TOKENS` is an EOS (Qwen: ``<|endoftext|>`` and
    ``<|im_end|>``; tekken: ``</s>``).
    """
    eos = _eos_list(eos_tokens)
    token_bytes: dict[int, bytes]
    specials: dict[str, int] = {}
    if _looks_like_tiktoken(path_or_encoding):
        enc = path_or_encoding
        where = f"tiktoken encoding {getattr(enc, 'name', '?')!r}"
        n = int(enc.n_vocab)
        for name in enc.special_tokens_set:
            specials[name] = int(enc.encode_single_token(name))
        special_id_set = set(specials.values())
        token_bytes = {}
        for i in range(n):
            if i in special_id_set:
                continue
            try:
                token_bytes[i] = bytes(enc.decode_single_token_bytes(i))
            except KeyError:
                continue  # a gap in the ranks
    elif _is_pathlike(path_or_encoding):
        path = Path(path_or_encoding)
        where = repr(str(path))
        raw = _read_bytes(path, "tiktoken file")
        if raw.lstrip().startswith(b"{"):
            try:
                d = json.loads(raw.decode("utf-8"))
            except ValueError as e:
                raise AdapterError(f"{where} is not valid JSON: {e}") from None
            if not isinstance(d, dict):
                raise AdapterError(f"{where} is JSON but not a tekken tokenizer")
            token_bytes, specials = _parse_tekken(d, where)
        else:
            token_bytes = _parse_tiktoken_file(raw, where)
    else:
        raise AdapterError(
            "from_tiktoken expects a .tiktoken/tekken file path or a tiktoken.Encoding, "
            f"not {type(path_or_encoding).__name__}"
        )

    if special_tokens is not None:
        for name, i in dict(special_tokens).items():
            if not isinstance(name, str) or isinstance(i, bool) or not isinstance(i, int) or i < 0:
                raise AdapterError(f"special_tokens must map names to ids, got {name!r}: {i!r}")
            if i in token_bytes:
                raise AdapterError(
                    f"special token {name!r} has id {i}, which is already an ordinary token of {where}"
                )
            old = specials.get(name)
            if old is not None and old != i:
                del specials[name]
            specials[name] = i

    by_id: dict[int, str] = {}
    for name, i in specials.items():
        if i in by_id and by_id[i] != name:
            raise AdapterError(f"special tokens {by_id[i]!r} and {name!r} share id {i} in {where}")
        by_id[i] = name
    size = max([-1, *token_bytes.keys(), *by_id.keys()]) + 1
    tb: list[bytes | None] = [None] * size
    for i, b in token_bytes.items():
        tb[i] = b
    for i, name in by_id.items():
        tb[i] = name.encode("utf-8")

    if eos is not None:
        eos_ids = _resolve_eos(eos, specials, tb, where)
    else:
        eos_ids = _common_eos(specials)
        if not eos_ids:
            raise _no_eos_error(where, "eos_token_ids")
    return TokenizerData(tb, sorted(by_id), eos_ids)


# ---------------------------------------------------------------------------
# SentencePiece
# ---------------------------------------------------------------------------

# Piece types of sentencepiece_model.proto.
_SP_NORMAL, _SP_UNKNOWN, _SP_CONTROL, _SP_USER_DEFINED, _SP_UNUSED, _SP_BYTE = 1, 2, 3, 4, 5, 6


def _looks_like_sp_processor(obj: Any) -> bool:
    return all(
        callable(getattr(obj, a, None))
        for a in ("get_piece_size", "id_to_piece", "is_control", "is_unknown", "is_byte", "eos_id")
    )


def _pb_read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
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


def _pb_fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) of one protobuf message.

    The value is an int for varint/fixed fields, a (start, end) span for
    length-delimited ones."""
    value: int | tuple[int, int]
    while pos < end:
        key, pos = _pb_read_varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise AdapterError("protobuf field number 0")
        if wire == 0:
            value, pos = _pb_read_varint(buf, pos, end)
        elif wire == 1:
            if pos + 8 > end:
                raise AdapterError("truncated fixed64")
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == 2:
            length, pos = _pb_read_varint(buf, pos, end)
            if pos + length > end:
                raise AdapterError("truncated length-delimited field")
            value = (pos, pos + length)
            pos += length
        elif wire == 5:
            if pos + 4 > end:
                raise AdapterError("truncated fixed32")
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise AdapterError(f"unsupported protobuf wire type {wire}")
        yield field, wire, value


def _parse_sp_model(buf: bytes, where: str) -> tuple[list[tuple[str, int]], str]:
    """(piece, type) for every id, and the trainer's eos_piece, from a .model file."""
    pieces: list[tuple[str, int]] = []
    eos_piece = "</s>"
    try:
        for field, wire, value in _pb_fields(buf, 0, len(buf)):
            if field == 1 and wire == 2:  # ModelProto.pieces
                piece: str | None = None
                ptype = _SP_NORMAL
                for f2, w2, v2 in _pb_fields(buf, value[0], value[1]):
                    if f2 == 1 and w2 == 2:
                        piece = buf[v2[0] : v2[1]].decode("utf-8")
                    elif f2 == 3 and w2 == 0:
                        ptype = v2
                if piece is None:
                    raise AdapterError(f"piece {len(pieces)} has no text")
                pieces.append((piece, ptype))
            elif field == 2 and wire == 2:  # ModelProto.trainer_spec
                for f2, w2, v2 in _pb_fields(buf, value[0], value[1]):
                    if f2 == 47 and w2 == 2:  # TrainerSpec.eos_piece
                        eos_piece = buf[v2[0] : v2[1]].decode("utf-8")
    except (AdapterError, UnicodeDecodeError) as e:
        raise AdapterError(f"{where} is not a SentencePiece model ({e})") from None
    if not pieces:
        raise AdapterError(f"{where} is not a SentencePiece model (no pieces)")
    for i, (piece, ptype) in enumerate(pieces):
        if ptype not in (1, 2, 3, 4, 5, 6):
            raise AdapterError(f"{where}: piece {i} ({piece!r}) has unknown type {ptype}")
    return pieces, eos_piece


def _sp_piece_bytes(piece: str, is_byte: bool, i: int, where: str) -> bytes:
    if is_byte:
        m = _BYTE_FALLBACK_RE.match(piece)
        if m is None:
            raise AdapterError(f"{where}: byte piece {i} is {piece!r}, not <0xNN>")
        return bytes([int(m.group(1), 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def _sp_pieces(src: Any) -> tuple[list[tuple[str, int]], int, str]:
    """(piece, type) per id, the EOS id (-1: none) and a description of `src`."""
    pieces: list[tuple[str, int]] = []
    sp_eos = -1
    if _looks_like_sp_processor(src):
        where = "the SentencePiece processor"
        n = int(src.get_piece_size())
        is_unused = getattr(src, "is_unused", None)
        for i in range(n):
            if src.is_byte(i):
                ptype = _SP_BYTE
            elif src.is_control(i):
                ptype = _SP_CONTROL
            elif src.is_unknown(i):
                ptype = _SP_UNKNOWN
            elif is_unused is not None and is_unused(i):
                ptype = _SP_UNUSED
            else:
                ptype = _SP_NORMAL
            pieces.append((src.id_to_piece(i), ptype))
        sp_eos = int(src.eos_id())
        return pieces, sp_eos, where
    if isinstance(src, (bytes, bytearray)):
        where = "SentencePiece model bytes"
        raw = bytes(src)
    elif _is_pathlike(src):
        where = repr(str(src))
        raw = _read_bytes(src, "SentencePiece model")
    else:
        raise AdapterError(
            "from_sentencepiece expects a SentencePieceProcessor or a .model path, "
            f"not {type(src).__name__}"
        )
    pieces, eos_piece = _parse_sp_model(raw, where)
    # As SentencePieceProcessor::eos_id(): the eos piece's id if it is a control piece.
    for i, (piece, ptype) in enumerate(pieces):
        if piece == eos_piece:
            sp_eos = i if ptype == _SP_CONTROL else -1
            break
    return pieces, sp_eos, where


def _sp_token_bytes(pieces: list[tuple[str, int]], where: str) -> tuple[list[bytes | None], list[int]]:
    tb: list[bytes | None] = []
    special: list[int] = []
    for i, (piece, ptype) in enumerate(pieces):
        tb.append(_sp_piece_bytes(piece, ptype == _SP_BYTE, i, where))
        if ptype in (_SP_CONTROL, _SP_UNKNOWN, _SP_UNUSED):
            special.append(i)
    return tb, special


def from_sentencepiece(processor_or_model_path: Any, eos_token: EosSpec = None) -> TokenizerData:
    """Read a SentencePiece model: a ``SentencePieceProcessor``, a ``.model``
    path, or the serialized model bytes.

    ``▁`` becomes a space, byte pieces ``<0xNN>`` become the byte ``NN``.
    Control, unknown and unused pieces are special.  EOS: ``eos_token`` if
    given, else the processor's ``eos_id()`` (for files: the trainer's
    ``eos_piece``, ``</s>`` by default, when it is a control piece), else the
    special pieces named in :data:`COMMON_EOS_TOKENS`.

    A file is read with a small built-in protobuf reader, so the
    ``sentencepiece`` package is not needed for it.
    """
    pieces, sp_eos, where = _sp_pieces(processor_or_model_path)
    tb, special = _sp_token_bytes(pieces, where)
    eos = _eos_list(eos_token)
    if eos is not None:
        lookup = {p: i for i, (p, _) in reversed(list(enumerate(pieces)))}
        eos_ids = _resolve_eos(eos, lookup, tb, where)
    elif sp_eos >= 0:
        eos_ids = [sp_eos]
    else:
        eos_ids = _common_eos({pieces[i][0]: i for i in reversed(special)})
        if not eos_ids:
            raise _no_eos_error(where, "eos_token_ids")
    return TokenizerData(tb, special, eos_ids)
