"""corral for Hugging Face ``transformers``: a logits processor for ``model.generate``.

>>> from transformers import LogitsProcessorList
>>> from corral.integrations.transformers import CorralLogitsProcessor
>>> proc = CorralLogitsProcessor(corral.Grammar.regex(r"[0-9]{3}-[a-z]+"), tokenizer)  # doctest: +SKIP
>>> model.generate(**inputs, logits_processor=LogitsProcessorList([proc]))  # doctest: +SKIP

Importing this module imports ``torch`` and ``transformers``.
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor

import corral

from ..errors import MatcherError
from ..vocabulary import Vocabulary
from . import _compiled, _end_row, _MaskBuffer, _rejected, _vocabulary

__all__ = ["CorralLogitsProcessor"]


class CorralLogitsProcessor(LogitsProcessor):
    """Constrains ``model.generate`` so that every row's output matches ``grammar``.

    ``grammar`` is a :class:`corral.Grammar` (or an already compiled grammar);
    ``tokenizer`` the model's ``transformers`` tokenizer; ``vocab`` a
    :class:`corral.Vocabulary` to use instead of building one from ``tokenizer``
    (``tokenizer`` may then be None). The logits may be wider than the vocabulary (padded
    embeddings): ids past it are never allowed.

    Use with ``model.generate(..., logits_processor=LogitsProcessorList([proc]))``, greedy
    or sampling, any batch size (left padding), ``num_beams=1``. One matcher per batch row:

    * the first call of a generation records the prompt (``input_ids`` as given);
    * each later call feeds every row's matcher the token appended since (the last column);
    * then all rows' masks are computed by one :func:`corral.fill_bitmasks` call into a
      reused CPU bitmask and applied with :func:`corral.apply_bitmask` on the scores'
      device (pinned memory and an asynchronous copy on CUDA).

    A row that has accepted EOS (or whose new token is the pad token that generate writes
    into finished rows) gets only EOS and the pad token from then on. A new token that the
    row's matcher rejects (another processor or the caller chose it) raises
    :class:`corral.MatcherError`.

    Reuse: :meth:`reset` starts over. A new ``generate`` call is also recognized by itself
    when the batch size changes, when ``input_ids`` is no longer than the last prompt, or
    when its first columns differ from the last prompt. ``input_ids`` that start with the
    last prompt but are not the last call's ``input_ids`` plus one token raise
    :class:`corral.MatcherError`: that is beam search or another strategy that reorders
    rows, assisted decoding, or a new call whose prompt extends the last one (call
    :meth:`reset` before it). Beam search, assisted/speculative decoding and continuous
    batching are not supported.
    """

    supports_continuous_batching = False

    def __init__(self, grammar, tokenizer=None, *, vocab: Vocabulary | None = None):
        self.vocab = _vocabulary(tokenizer, vocab)
        self.compiled = _compiled(grammar, self.vocab)
        self.tokenizer = tokenizer if not isinstance(tokenizer, Vocabulary) else None
        self._buffer = _MaskBuffer(self.vocab.mask_width)
        self.reset()

    # -- state ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Forgets the current generation: the next call starts a new one."""
        self._matchers: list | None = None
        self._finished: list[bool] = []
        self._generated: list[list[int]] = []
        self._prev: torch.Tensor | None = None
        self._prompt_len = 0
        self._pad_id: int | None = None
        self._end = None

    @property
    def generated_token_ids(self) -> list[list[int]]:
        """Per row, the tokens this processor has seen generated so far (EOS included,
        tokens after it not)."""
        return [list(g) for g in self._generated]

    def _start(self, input_ids: torch.Tensor) -> None:
        batch, length = input_ids.shape
        self._matchers = [self.compiled.matcher() for _ in range(batch)]
        self._finished = [False] * batch
        self._generated = [[] for _ in range(batch)]
        self._prompt_len = length
        pad = getattr(self.tokenizer, "pad_token_id", None) if self.tokenizer is not None else None
        self._pad_id = int(pad) if isinstance(pad, int) else None
        self._end = torch.from_numpy(_end_row(self.vocab, [self._pad_id]))

    def _is_next_step(self, input_ids: torch.Tensor) -> bool:
        """True: one step on from the last call. False: a new generation. Raises where it
        is neither."""
        prev = self._prev
        batch, length = input_ids.shape
        if prev is None or prev.device != input_ids.device or batch != prev.shape[0]:
            return False
        if length == prev.shape[1] + 1 and torch.equal(input_ids[:, :-1], prev):
            return True
        p = self._prompt_len
        if length <= p or not torch.equal(input_ids[:, :p], prev[:, :p]):
            return False
        raise MatcherError(
            f"CorralLogitsProcessor: input_ids ({batch} x {length}) start with the prompt of the "
            f"current generation but are not the previous call's input_ids ({batch} x {prev.shape[1]}) "
            "plus one token. Beam search and other strategies that reorder rows, and assisted or "
            "speculative decoding, are not supported (use num_beams=1). If this is a new generate() "
            "call whose prompt extends the previous one, call reset() before it."
        )

    # -- the processor -------------------------------------------------------------------

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.dim() != 2 or scores.dim() != 2 or input_ids.shape[0] != scores.shape[0]:
            raise MatcherError(
                f"CorralLogitsProcessor expects input_ids [batch, length] and scores [batch, vocab] "
                f"with the same batch, got {tuple(input_ids.shape)} and {tuple(scores.shape)}"
            )
        if self._matchers is not None and self._is_next_step(input_ids):
            self._advance(input_ids[:, -1].tolist())
        else:
            self._start(input_ids)
        self._prev = input_ids.detach().clone()
        return self._mask(scores)

    def _advance(self, new_tokens: list[int]) -> None:
        for row, tok in enumerate(new_tokens):
            if self._finished[row]:
                continue
            matcher = self._matchers[row]
            if matcher.advance(tok):
                self._generated[row].append(tok)
                if matcher.is_finished():
                    self._finished[row] = True
            elif tok == self._pad_id:
                # generate() writes the pad token into rows it has finished (a stopping
                # criterion other than EOS): this row is over.
                self._finished[row] = True
            else:
                raise _rejected(self.vocab, f"CorralLogitsProcessor (batch row {row})", tok, self._generated[row])

    def _mask(self, scores: torch.Tensor) -> torch.Tensor:
        batch = scores.shape[0]
        bitmask = self._buffer.host(batch, scores.device)
        active = [row for row in range(batch) if not self._finished[row]]
        if len(active) < batch:
            done = [row for row in range(batch) if self._finished[row]]
            bitmask[done] = self._end
        if active:
            corral.fill_bitmasks([self._matchers[row] for row in active], bitmask, rows=active)
        return corral.apply_bitmask(scores, self._buffer.to(batch, scores.device))

    def __repr__(self) -> str:
        state = "idle" if self._matchers is None else f"{len(self._matchers)} rows"
        return f"<CorralLogitsProcessor {state} vocab={self.vocab.size}>"
