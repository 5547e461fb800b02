"""Hugging Face ``tokenizer.json`` files: the format of the ``tokenizers`` library.

A ``tokenizer.json`` holds a model section (a ``BPE``, ``WordPiece``,
``WordLevel`` or ``Unigram`` vocabulary of token strings), the tokens added on
top of it, and a decoder that says how token strings become text.  This module
turns the decoder into a function from one token string to its exact bytes --
``ByteLevel`` undoes byte-level BPE's alphabet; ``Metaspace``, ``Replace``,
``ByteFallback``, ``Fuse`` and ``Strip`` chains (SentencePiece style) turn
``▁`` into a space and ``<0xNN>`` into a byte -- and refuses any decoder whose
output is not a per-token concatenation.

:func:`data_from_tokenizer_dict` is shared with the adapter of live
``transformers``/``tokenizers`` objects, which serialize themselves to this
format; :func:`from_tokenizer_json` adds what a file's folder tells
(``tokenizer_config.json``, ``generation_config.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .common import (
    BYTE_PIECE_RE,
    AdapterError,
    EosSpec,
    TokenizerData,
    byte_level_decode,
    common_eos,
    eos_list,
    id_table,
    is_pathlike,
    no_eos_error,
    no_utf8_error,
    read_bytes,
    resolve_eos,
)

#: One token string -> the exact bytes it contributes to the decoded text.
TokenDecoder = Callable[[str], bytes]


# ---------------------------------------------------------------------------
# Reading the file
# ---------------------------------------------------------------------------


def _load_json_source(source: Any) -> tuple[dict, Path | None]:
    """A tokenizer.json as a dict, and the folder it came from (if a file)."""
    if isinstance(source, Mapping):
        return dict(source), None
    if isinstance(source, (bytes, bytearray)):
        text = _utf8_text(bytes(source), "the tokenizer.json text")
        return _parse_json_text(text, "tokenizer.json text"), None
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return _parse_json_text(source, "tokenizer.json text"), None
    if is_pathlike(source):
        path = Path(source)
        if path.is_dir():
            path = path / "tokenizer.json"
        text = _utf8_text(read_bytes(path, "tokenizer.json file"), repr(str(path)))
        return _parse_json_text(text, repr(str(path))), path.parent
    raise AdapterError(
        "from_tokenizer_json expects a path, the JSON text or the parsed dict, "
        f"not {type(source).__name__}"
    )


def _utf8_text(raw: bytes, what: str) -> str:
    """``raw`` decoded as UTF-8, as a tokenizer.json must be; ``what`` names it for errors."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AdapterError(f"{what} is not a tokenizer.json (not UTF-8 text: {e})") from None


def _parse_json_text(text: str, what: str) -> dict:
    try:
        d = json.loads(text)
    except ValueError as e:
        raise AdapterError(f"{what} is not valid JSON: {e}") from None
    if not isinstance(d, dict):
        raise AdapterError(f"{what} is not a tokenizer.json (top level is not an object)")
    return d


# ---------------------------------------------------------------------------
# The model's vocabulary
# ---------------------------------------------------------------------------


def _model_vocab(model: Mapping[str, Any]) -> tuple[dict[int, str], set[int]]:
    """The model's id -> token string, and the id(s) of its unknown token."""
    mtype = model.get("type")
    vocab = model.get("vocab")
    if mtype is None and isinstance(vocab, Mapping) and "merges" in model:
        mtype = "BPE"  # very old files omit the type
    if mtype in ("BPE", "WordLevel", "WordPiece"):
        return _string_keyed_vocab(model, mtype)
    if mtype == "Unigram":
        return _unigram_vocab(model)
    raise AdapterError(f"tokenizer.json: unsupported model type {mtype!r}")


def _string_keyed_vocab(model: Mapping[str, Any], mtype: str) -> tuple[dict[int, str], set[int]]:
    """A vocab object ``{token: id}`` (BPE, WordLevel, WordPiece), inverted."""
    vocab = model.get("vocab")
    if not isinstance(vocab, Mapping):
        raise AdapterError(f"tokenizer.json: {mtype} model has no vocab object")
    id_to_tok: dict[int, str] = {}
    for tok, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise AdapterError(f"tokenizer.json: vocab entry {tok!r} has a bad id {i!r}")
        if i in id_to_tok:
            raise AdapterError(f"tokenizer.json: id {i} is given to both {id_to_tok[i]!r} and {tok!r}")
        id_to_tok[i] = tok
    unk: set[int] = set()
    unk_tok = model.get("unk_token")
    if isinstance(unk_tok, str) and unk_tok in vocab:
        unk.add(vocab[unk_tok])
    return id_to_tok, unk


def _unigram_vocab(model: Mapping[str, Any]) -> tuple[dict[int, str], set[int]]:
    """A Unigram vocab list ``[[token, score], ...]``, where the position is the id."""
    vocab = model.get("vocab")
    if not isinstance(vocab, list):
        raise AdapterError("tokenizer.json: Unigram model has no vocab list")
    id_to_tok: dict[int, str] = {}
    for i, entry in enumerate(vocab):
        if not isinstance(entry, (list, tuple)) or not entry or not isinstance(entry[0], str):
            raise AdapterError(f"tokenizer.json: Unigram vocab entry {i} is malformed: {entry!r}")
        id_to_tok[i] = entry[0]
    unk: set[int] = set()
    unk_id = model.get("unk_id")
    if isinstance(unk_id, int) and 0 <= unk_id < len(vocab):
        unk.add(unk_id)
    return id_to_tok, unk


# ---------------------------------------------------------------------------
# The decoder
# ---------------------------------------------------------------------------


def _decoder_section(d: Mapping[str, Any]) -> Mapping[str, Any]:
    """The decoder of a tokenizer.json, inferred from the pre-tokenizer when absent."""
    dec = d.get("decoder")
    if dec is None:
        # No decoder: `tokenizers` would join the raw tokens with spaces, which
        # is never what the model's text is.  Infer the scheme from the
        # pre-tokenizer, which shows how the vocabulary's strings were made.
        pre = d.get("pre_tokenizer")
        if _find_pre_tokenizer(pre, "ByteLevel") is not None:
            return {"type": "ByteLevel"}
        metaspace = _find_pre_tokenizer(pre, "Metaspace")
        if metaspace is None:
            raise AdapterError(
                "tokenizer.json has no decoder and its pre_tokenizer is neither "
                "ByteLevel nor Metaspace: cannot tell what bytes the tokens stand for"
            )
        return dict(metaspace)
    if not isinstance(dec, Mapping):
        raise AdapterError(f"tokenizer.json: malformed decoder {dec!r}")
    return dec


def _find_pre_tokenizer(node: Any, wanted: str) -> Mapping[str, Any] | None:
    """The first pre-tokenizer of type ``wanted`` in ``node``, searching Sequences."""
    if not isinstance(node, Mapping):
        return None
    if node.get("type") == wanted:
        return node
    for sub in node.get("pretokenizers") or ():
        found = _find_pre_tokenizer(sub, wanted)
        if found is not None:
            return found
    return None


def _flatten_decoders(dec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The steps of a decoder, with nested ``Sequence`` decoders spliced in."""
    if dec.get("type") != "Sequence":
        return [dec]
    subs = dec.get("decoders")
    if not isinstance(subs, list):
        raise AdapterError("tokenizer.json: Sequence decoder without a decoders list")
    out: list[Mapping[str, Any]] = []
    for sub in subs:
        if not isinstance(sub, Mapping):
            raise AdapterError(f"tokenizer.json: malformed decoder {sub!r}")
        out.extend(_flatten_decoders(sub))
    return out


def _strip_chars(value: str, c: str, start: int, stop: int) -> str:
    """``value`` less up to ``start`` leading and ``stop`` trailing ``c``, as Strip does."""
    i = 0
    while i < start and i < len(value) and value[i] == c:
        i += 1
    j = len(value)
    k = 0
    while k < stop and j > i and value[j - 1] == c:
        j -= 1
        k += 1
    return value[i:j]


def _byte_fallback_decode(token: str) -> bytes:
    """ByteFallback: a ``<0xNN>`` token is the byte ``NN``; any other is its text."""
    m = BYTE_PIECE_RE.match(token)
    if m is not None:
        return bytes([int(m.group(1), 16)])
    return token.encode("utf-8")


class _DecoderPlan:
    """A decoder's steps, checked one by one and turned into per-token functions.

    A decoder in `tokenizers` is a chain of steps over the list of token
    strings.  Steps before the list is fused into one string act on each token
    alone and are kept (as text -> text functions, then at most one text ->
    bytes function, which must be the last); after fusing, only steps whose
    effect is limited to the ends of the whole text (Strip) can be ignored per
    token -- anything else is refused.
    """

    def __init__(self) -> None:
        self.text_steps: list[Callable[[str], str]] = []
        self.to_bytes: TokenDecoder | None = None
        self.fused = False  # the token list has been joined into one string

    def add(self, step: Mapping[str, Any]) -> None:
        """Check one decoder step and record what it does to a token."""
        t = step.get("type")
        if t == "Fuse":
            self.fused = True
        elif t == "Strip":
            self._add_strip(step)
        elif t in ("Replace", "Metaspace", "ByteFallback", "ByteLevel"):
            self._add_per_token(t, step)
        else:
            raise AdapterError(
                f"tokenizer.json: decoder type {t!r} is not supported (its output is not a "
                "per-token concatenation of bytes, or it is unknown)"
            )

    def _add_strip(self, step: Mapping[str, Any]) -> None:
        content = step.get("content", " ")
        start, stop = step.get("start", 0), step.get("stop", 0)
        if not isinstance(content, str) or len(content) != 1:
            raise AdapterError(f"tokenizer.json: Strip decoder with bad content {content!r}")
        if not (isinstance(start, int) and isinstance(stop, int)):
            raise AdapterError("tokenizer.json: Strip decoder with bad start/stop")
        if self.fused or (start == 0 and stop == 0):
            return  # only trims the ends of the whole text
        if self.to_bytes is not None:
            raise AdapterError(
                "tokenizer.json: a per-token Strip after ByteFallback/ByteLevel is not supported"
            )
        self.text_steps.append(lambda value: _strip_chars(value, content, start, stop))

    def _add_per_token(self, t: str, step: Mapping[str, Any]) -> None:
        if self.fused:
            raise AdapterError(
                f"tokenizer.json: a {t} decoder after the tokens are fused acts across "
                "token boundaries and cannot be expressed per token"
            )
        if self.to_bytes is not None:
            raise AdapterError(f"tokenizer.json: a {t} decoder after ByteFallback/ByteLevel is not supported")
        if t == "Replace":
            old, new = _replace_strings(step)
            self.text_steps.append(lambda value: value.replace(old, new))
        elif t == "Metaspace":
            rep = step.get("replacement", "\u2581")
            if not isinstance(rep, str) or len(rep) != 1:
                raise AdapterError(f"tokenizer.json: Metaspace with bad replacement {rep!r}")
            # Dropping the first token's leading space is a boundary effect.
            self.text_steps.append(lambda value: value.replace(rep, " "))
        elif t == "ByteFallback":
            self.to_bytes = _byte_fallback_decode
        else:  # ByteLevel maps each token to bytes, then fuses
            self.to_bytes = byte_level_decode
            self.fused = True

    def decoder(self) -> TokenDecoder:
        """The function token string -> bytes that the recorded steps make."""
        text_steps = list(self.text_steps)
        to_bytes = self.to_bytes or (lambda value: value.encode("utf-8"))
        if not text_steps:
            return to_bytes

        def decode(token: str) -> bytes:
            for step in text_steps:
                token = step(token)
            return to_bytes(token)

        return decode


def _replace_strings(step: Mapping[str, Any]) -> tuple[str, str]:
    """The (pattern, content) strings of a Replace decoder."""
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
    return pat["String"], content


def compile_decoder(d: Mapping[str, Any]) -> tuple[TokenDecoder, bool]:
    """Turn a tokenizer.json's decoder into a function token string -> bytes,
    and whether the decoder is byte-level."""
    plan = _DecoderPlan()
    for step in _flatten_decoders(_decoder_section(d)):
        plan.add(step)
    return plan.decoder(), plan.to_bytes is byte_level_decode


# ---------------------------------------------------------------------------
# Assembling the vocabulary
# ---------------------------------------------------------------------------


def _added_tokens(d: Mapping[str, Any], where: str) -> tuple[dict[int, str], set[int]]:
    """The added tokens (id -> content) and the ids of those marked special."""
    added = d.get("added_tokens") or []
    if not isinstance(added, list):
        raise AdapterError(f"{where}: added_tokens is not a list")
    added_by_id: dict[int, str] = {}
    special: set[int] = set()
    for a in added:
        if not isinstance(a, Mapping) or not isinstance(a.get("content"), str):
            raise AdapterError(f"{where}: malformed added token {a!r}")
        i = a.get("id")
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise AdapterError(f"{where}: added token {a['content']!r} has a bad id {i!r}")
        added_by_id[i] = a["content"]
        if a.get("special"):
            special.add(i)
    return added_by_id, special


def _token_bytes(
    id_to_tok: Mapping[int, str],
    added_by_id: Mapping[int, str],
    decode: TokenDecoder,
    byte_level: bool,
    where: str,
) -> tuple[list[bytes | None], dict[str, int]]:
    """Every id's bytes, and token string -> id (an added token's content wins)."""
    size = max([-1, *id_to_tok.keys(), *added_by_id.keys()]) + 1
    token_bytes = id_table(size, where)
    name_to_id: dict[str, int] = {}
    try:
        for i, tok in id_to_tok.items():
            token_bytes[i] = decode(tok)
            name_to_id.setdefault(tok, i)
    except UnicodeEncodeError as e:
        raise no_utf8_error(where, i, tok, e) from None
    # Added tokens take precedence over the model's entry for the same id (as
    # in `tokenizers`).  They are matched in the input text before any
    # pre-tokenization, so what they stand for is their content: with a
    # byte-level decoder that is the content's UTF-8 (some `tokenizers`
    # releases push added tokens through the ByteLevel decoder and garble
    # those made only of byte-alphabet characters such as "café", a bug fixed
    # upstream);
    # other decoders (SentencePiece style) are applied to them as to any token,
    # as every `tokenizers` release does.
    try:
        for i, tok in added_by_id.items():
            token_bytes[i] = tok.encode("utf-8") if byte_level else decode(tok)
    except UnicodeEncodeError as e:
        raise no_utf8_error(where, i, tok, e) from None
    for i, tok in added_by_id.items():
        name_to_id[tok] = i
    return token_bytes, name_to_id


def data_from_tokenizer_dict(
    d: Mapping[str, Any],
    *,
    extra_special_ids: Iterable[int] = (),
    extra_special_names: Iterable[str] = (),
    eos: list[str | int] | None = None,
    where: str = "tokenizer.json",
) -> TokenizerData:
    """The :class:`TokenizerData` of a parsed tokenizer.json.

    ``extra_special_ids``/``extra_special_names`` add special tokens named
    elsewhere (a config, a live tokenizer); ids and names that are no token are
    ignored.  ``eos`` as :func:`~.common.eos_list` returns it; without it, the
    special tokens named in :data:`~.common.COMMON_EOS_TOKENS` end a sequence.
    """
    model = d.get("model")
    if not isinstance(model, Mapping):
        raise AdapterError(f"{where}: no model section; is this a HF tokenizer.json?")
    id_to_tok, unk_ids = _model_vocab(model)
    decode, byte_level = compile_decoder(d)
    added_by_id, added_special = _added_tokens(d, where)
    token_bytes, name_to_id = _token_bytes(id_to_tok, added_by_id, decode, byte_level, where)

    special_ids = unk_ids | added_special
    for i in extra_special_ids:
        if 0 <= i < len(token_bytes) and token_bytes[i] is not None:
            special_ids.add(i)
    for name in extra_special_names:
        if name in name_to_id:
            special_ids.add(name_to_id[name])

    if eos is not None:
        eos_ids = resolve_eos(eos, name_to_id, token_bytes, where)
    else:
        special_names = {id_to_tok[i]: i for i in special_ids if i in id_to_tok}
        special_names.update({added_by_id[i]: i for i in special_ids if i in added_by_id})
        eos_ids = common_eos(special_names)
        if not eos_ids:
            raise no_eos_error(where)
    return TokenizerData(token_bytes, sorted(special_ids), eos_ids)


# ---------------------------------------------------------------------------
# The configuration files beside a tokenizer.json
# ---------------------------------------------------------------------------


def _read_json_beside(path: Path) -> Any:
    """A JSON file next to the tokenizer.json (``None`` when there is none)."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise AdapterError(f"cannot read {str(path)!r}: {e}") from None


def _read_config_beside(folder: Path | None) -> tuple[dict, list[int]]:
    """tokenizer_config.json (as a dict) and generation_config.json's EOS ids."""
    if folder is None:
        return {}, []
    c = _read_json_beside(folder / "tokenizer_config.json")
    config = c if isinstance(c, dict) else {}
    g = _read_json_beside(folder / "generation_config.json")
    eos = g.get("eos_token_id") if isinstance(g, dict) else None
    gen_eos: list[int] = []
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


def _token_of(x: Any) -> str | None:
    """The content of a config's token entry: a string or {"content": ...}."""
    if isinstance(x, str):
        return x
    if isinstance(x, Mapping) and isinstance(x.get("content"), str):
        return x["content"]
    return None


def _config_special_names(config: Mapping[str, Any]) -> list[str]:
    """The tokens a tokenizer_config.json names special: bos/eos/..., additional ones."""
    names: list[str] = []
    for key in _CONFIG_SPECIAL_KEYS:
        name = _token_of(config.get(key))
        if name is not None:
            names.append(name)
    for x in config.get("additional_special_tokens") or ():
        name = _token_of(x)
        if name is not None:
            names.append(name)
    return names


def _config_special_ids(config: Mapping[str, Any]) -> list[int]:
    """The ids a tokenizer_config.json's ``added_tokens_decoder`` marks special."""
    ids: list[int] = []
    atd = config.get("added_tokens_decoder")
    if isinstance(atd, Mapping):
        for k, v in atd.items():
            if isinstance(v, Mapping) and v.get("special"):
                try:
                    ids.append(int(k))
                except ValueError:
                    pass  # not an id: the entry says nothing usable
    return ids


def _config_eos(config: Mapping[str, Any], gen_eos: list[int]) -> list[str | int] | None:
    """The EOS the configs name: the config's eos_token, then generation_config's ids."""
    cfg_eos = _token_of(config.get("eos_token"))
    found: list[str | int] = []
    if cfg_eos is not None:
        found.append(cfg_eos)
    found.extend(gen_eos)
    return found or None


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
    named in :data:`~.common.COMMON_EOS_TOKENS`.
    """
    d, folder = _load_json_source(source)
    config, gen_eos = _read_config_beside(folder)
    where = "tokenizer.json" if folder is None else repr(str(folder / "tokenizer.json"))
    eos = eos_list(eos_token)
    if eos is None:
        eos = _config_eos(config, gen_eos)
    return data_from_tokenizer_dict(
        d,
        extra_special_ids=_config_special_ids(config),
        extra_special_names=_config_special_names(config),
        eos=eos,
        where=where,
    )
