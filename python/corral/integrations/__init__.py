"""corral inside inference frameworks.

* :mod:`corral.integrations.transformers`: :class:`~corral.integrations.transformers.CorralLogitsProcessor`,
  a ``transformers`` logits processor for ``model.generate``.
* :mod:`corral.integrations.vllm`: :class:`~corral.integrations.vllm.CorralLogitsProcessor`
  (vLLM v1's batch-level logits processor, configured per request through
  ``SamplingParams.extra_args``) and
  :class:`~corral.integrations.vllm.CorralRequestLogitsProcessor` (the per-request callable
  ``(output_token_ids, logits) -> logits``).
* :mod:`corral.integrations.sglang`: :class:`~corral.integrations.sglang.CorralGrammarBackend`,
  SGLang's grammar backend (``--grammar-backend corral``, registered by an entry point).
* :mod:`corral.integrations.llama_cpp`:
  :class:`~corral.integrations.llama_cpp.CorralLlamaLogitsProcessor`, llama-cpp-python's
  ``logits_processor`` hook.

Importing this package imports neither torch nor any framework: each submodule imports its
own framework when it is imported. See docs/integrations.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import corral

from ..compiler import _grammar_type_error, _vocabulary_type_error
from ..errors import MatcherError
from ..grammar import Grammar
from ..vocabulary import Vocabulary

__all__: list = []


def _vocabulary(tokenizer=None, vocab: Vocabulary | None = None) -> Vocabulary:
    """``vocab`` if given, else a Vocabulary built from a ``transformers`` tokenizer."""
    if vocab is not None:
        if not isinstance(vocab, Vocabulary):
            raise _vocabulary_type_error("the logits processor", vocab)
        return vocab
    if tokenizer is None:
        raise TypeError("pass a tokenizer or vocab=corral.Vocabulary(...)")
    if isinstance(tokenizer, Vocabulary):
        return tokenizer
    if isinstance(tokenizer, (str, bytes)) or hasattr(tokenizer, "__fspath__"):
        # A name or a path: a tokenizer object was meant.
        raise TypeError(
            f"expected a transformers tokenizer or a corral.Vocabulary, got {type(tokenizer).__name__} "
            f"{str(tokenizer)[:60]!r}; load it with transformers.AutoTokenizer.from_pretrained(...)"
        )
    return Vocabulary.from_huggingface(tokenizer)


def _compiled(grammar, vocab: Vocabulary):
    """A compiled grammar: ``grammar`` compiled for ``vocab``, or ``grammar`` itself when it
    is already compiled (anything with a ``matcher()`` method)."""
    if isinstance(grammar, Grammar):
        return corral.compile(grammar, vocab)
    if callable(getattr(grammar, "matcher", None)):
        return grammar
    raise _grammar_type_error("the logits processor", grammar, compiled_ok=True)


def _end_row(vocab: Vocabulary, extra_ids: Iterable[int | None] = ()):
    """A numpy bitmask row allowing exactly the EOS ids (and ``extra_ids``, e.g. a pad id)."""
    import numpy as np

    words = vocab.mask_width
    row = np.zeros(words, dtype=np.uint32)
    for t in list(vocab.eos_token_ids) + [t for t in extra_ids if t is not None]:
        t = int(t)
        if 0 <= t < 32 * words:
            row[t // 32] |= np.uint32(1) << np.uint32(t % 32)
    return row.view(np.int32)


def _text(vocab: Vocabulary, token_ids: Sequence[int], limit: int = 80) -> str:
    """The output so far as text, for error messages (the last ``limit`` characters)."""
    try:
        text = vocab.decode_bytes([t for t in token_ids if 0 <= t < vocab.size]).decode("utf-8", "replace")
    except Exception:  # pragma: no cover - only for messages
        return "?"
    return text if len(text) <= limit else "..." + text[-limit:]


def _token(vocab: Vocabulary, token_id: int) -> str:
    """``123 (b'abc')`` for error messages."""
    try:
        return f"{token_id} ({vocab.token_bytes(token_id)!r}, {vocab.token_kind(token_id)})"
    except Exception:
        return f"{token_id} (not in the vocabulary)"


def _rejected(vocab: Vocabulary, where: str, token_id: int, history: Sequence[int]) -> MatcherError:
    return MatcherError(
        f"{where}: token {_token(vocab, token_id)} does not continue the constraint after "
        f"{_text(vocab, history)!r} ({len(history)} tokens). The token was not chosen from this "
        "processor's mask: another logits processor, a sampler option or the caller picked it."
    )


class _MaskBuffer:
    """A reused int32 torch bitmask on the CPU (pinned when the logits are on a CUDA device)
    and its copy on the logits' device."""

    def __init__(self, mask_width: int, pin: bool | None = None):
        self.width = mask_width
        self.pin = pin  # None: pin exactly when the logits are on a CUDA device
        self.cpu = None
        self.device_buf = None
        self._event = None

    def host(self, n: int, device):
        """A ``[n, width]`` CPU tensor to fill (its previous copy to the device is complete)."""
        import torch

        pin = device.type == "cuda" and self.pin is not False
        if self.cpu is None or self.cpu.shape[0] < n or (pin and not self.cpu.is_pinned()):
            cap = max(n, 2 * self.cpu.shape[0] if self.cpu is not None else n)
            self.cpu = torch.full((cap, self.width), -1, dtype=torch.int32, pin_memory=pin)
            self._event = None
        if self._event is not None:
            self._event.synchronize()
            self._event = None
        return self.cpu[:n]

    def to(self, n: int, device):
        """The first ``n`` rows on ``device`` (for CUDA an asynchronous copy from pinned
        memory; :meth:`host` waits for it before the rows are written again)."""
        import torch

        if device.type == "cpu":
            return self.cpu[:n]
        buf = self.device_buf
        if buf is None or buf.device != device or buf.shape[0] < n:
            buf = self.device_buf = torch.empty((self.cpu.shape[0], self.width), dtype=torch.int32, device=device)
        out = buf[:n]
        if device.type == "cuda":
            out.copy_(self.cpu[:n], non_blocking=True)
            self._event = torch.cuda.Event()
            self._event.record(torch.cuda.current_stream(device))
        else:
            out.copy_(self.cpu[:n])
        return out


class _Sync:
    """One request's matcher kept in step with a list of output token ids that may grow,
    stay the same, shrink or change (the matcher is rolled back to the common prefix).

    Tokens after EOS are recorded but not fed to the matcher; negative ids (placeholders for
    tokens not known yet) end the list.
    """

    __slots__ = ("matcher", "vocab", "tokens", "fed", "violated", "where")

    def __init__(self, matcher, vocab: Vocabulary, where: str):
        self.matcher = matcher
        self.vocab = vocab
        self.tokens: list[int] = []  # every token seen (fed or not)
        self.fed = 0  # tokens[:fed] were fed to the matcher
        self.violated = False  # a rejected token was seen with on_reject="eos"
        self.where = where

    @property
    def done(self) -> bool:
        """No more tokens go to the matcher: EOS accepted or a violation recorded."""
        return self.violated or self.matcher.is_finished()

    def sync(self, output: Sequence[int], *, full_check: bool, on_reject: str = "raise") -> None:
        n = len(self.tokens)
        same = len(output) >= n and (n == 0 or output[n - 1] == self.tokens[-1])
        if same and full_check and n:
            same = list(output[:n]) == self.tokens
        if not same:
            k = 0
            limit = min(n, len(output))
            while k < limit and output[k] == self.tokens[k]:
                k += 1
            self._truncate(k)
        for tok in output[len(self.tokens) :]:
            tok = int(tok)
            if tok < 0:
                break
            if not self.done:
                if not self.matcher.advance(tok):
                    if on_reject == "raise":
                        raise _rejected(self.vocab, self.where, tok, self.tokens)
                    self.violated = True
                    self.tokens.append(tok)
                    continue
                self.fed += 1
            self.tokens.append(tok)

    def _truncate(self, k: int) -> None:
        if k < self.fed:
            self.matcher.rollback(self.fed - k)
            self.fed = k
        del self.tokens[k:]
        if self.violated and len(self.tokens) <= self.fed:
            self.violated = False
