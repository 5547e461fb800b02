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

One module per format reads the tokenizer's own data or library objects
through their public API:

* :mod:`.common` -- :class:`TokenizerData`, the byte-level BPE alphabet,
  end-of-sequence rules shared by every format;
* :mod:`.tokenizer_json` -- Hugging Face ``tokenizer.json`` files;
* :mod:`.transformers` -- live ``transformers``/``tokenizers`` objects;
* :mod:`.tiktoken` -- ``.tiktoken`` files, ``tiktoken.Encoding`` objects and
  mistral "tekken" JSON files;
* :mod:`.sentencepiece` -- SentencePiece processors and ``.model`` files
  (read with :mod:`.protobuf`).

Nothing heavy is imported at import time: ``tokenizers``, ``tiktoken``,
``sentencepiece`` and ``transformers`` objects are only ever *received*; these
modules never import those libraries.

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

from .common import (
    COMMON_EOS_TOKENS,
    AdapterError,
    TokenizerData,
    bytes_to_unicode,
    unicode_to_bytes,
)
from .sentencepiece import from_sentencepiece
from .tiktoken import from_tiktoken
from .tokenizer_json import from_tokenizer_json
from .transformers import from_huggingface

__all__ = [
    "COMMON_EOS_TOKENS",
    "AdapterError",
    "TokenizerData",
    "bytes_to_unicode",
    "from_huggingface",
    "from_sentencepiece",
    "from_tiktoken",
    "from_tokenizer_json",
    "unicode_to_bytes",
]
