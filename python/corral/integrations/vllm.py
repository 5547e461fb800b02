"""corral for vLLM: logits processors following vLLM's documented interfaces.

* :class:`CorralLogitsProcessor`: vLLM v1's batch-level logits processor
  (``vllm.v1.sample.logits_processor.LogitsProcessor``). Load it when the engine starts
  (``LLM(model, logits_processors=[CorralLogitsProcessor])`` or
  ``vllm serve ... --logits-processors corral.integrations.vllm:CorralLogitsProcessor``) and
  turn it on per request with one ``corral_*`` key in ``SamplingParams.extra_args`` (REST:
  ``vllm_xargs``), e.g. ``extra_args={"corral_regex": "[0-9]{3}-[a-z]+"}``.
* :class:`CorralRequestLogitsProcessor`: the per-request callable
  ``(output_token_ids, logits) -> logits`` of vLLM's older ``SamplingParams(logits_processors=[...])``
  (and of v1's ``AdapterLogitsProcessor``); one instance per request.

Importing this module imports ``torch`` and tries ``vllm``: when vLLM is importable,
:class:`CorralLogitsProcessor` subclasses its ``LogitsProcessor``; when it is not, the class
is the same code on ``object`` and can be driven by anything shaped like vLLM's
``BatchUpdate`` (``batch_size``, ``removed``, ``added``, ``moved``). See docs/integrations.md
for what was tested against a real vLLM (nothing: vLLM is not installed where corral is
tested).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence

import torch

import corral

from ..errors import GrammarError
from ..grammar import Grammar
from ..vocabulary import Vocabulary
from . import _compiled, _end_row, _MaskBuffer, _rejected, _Sync, _vocabulary

try:  # pragma: no cover - vLLM is not installed in corral's test environment
    from vllm.v1.sample.logits_processor import LogitsProcessor as _VLLMLogitsProcessor

    HAVE_VLLM = True
except ImportError:
    _VLLMLogitsProcessor = object
    HAVE_VLLM = False

__all__ = [
    "EXTRA_ARGS",
    "HAVE_VLLM",
    "CorralLogitsProcessor",
    "CorralRequestLogitsProcessor",
    "grammar_from_extra_args",
]

logger = logging.getLogger(__name__)


# -- per-request callable ------------------------------------------------------------------


class CorralRequestLogitsProcessor:
    """A per-request logits processor: ``proc(output_token_ids, logits) -> logits``.

    ``grammar`` is a :class:`corral.Grammar` (or a compiled grammar); ``tokenizer_or_vocab``
    a ``transformers`` tokenizer or a :class:`corral.Vocabulary`. ``logits`` is the request's
    row, ``[vocab]`` (or ``[1, vocab]``), a torch tensor on any device; it is masked in place
    and returned. The logits may be wider than the vocabulary: ids past it are masked.

    The processor keeps its matcher in step with ``output_token_ids`` (the tokens generated
    so far, prompt excluded): new tokens are fed to it; a call with the same list again
    computes the same mask; a list that shrank or changed rolls the matcher back to the
    common prefix. After EOS, only EOS is allowed and later tokens are ignored. A token the
    matcher rejects raises :class:`corral.MatcherError` (``on_reject="raise"``, default) or,
    with ``on_reject="eos"``, is logged and the request may then only end (EOS).

    It is stateful: give each request its own instance (:meth:`fresh` makes one sharing the
    compiled grammar). One instance that is handed several sequences in turn (vLLM V0 with
    ``n > 1`` shares it) stays correct, at the cost of a rollback and replay per switch.
    """

    def __init__(self, grammar, tokenizer_or_vocab, *, on_reject: str = "raise"):
        if on_reject not in ("raise", "eos"):
            raise ValueError(f"on_reject must be 'raise' or 'eos', got {on_reject!r}")
        self.vocab = _vocabulary(tokenizer_or_vocab)
        self.compiled = _compiled(grammar, self.vocab)
        self.on_reject = on_reject
        self._end = torch.from_numpy(_end_row(self.vocab))
        self._buffer = _MaskBuffer(self.vocab.mask_width)
        self.reset()

    def fresh(self) -> CorralRequestLogitsProcessor:
        """A new processor for another request: same grammar and vocabulary, no state."""
        return CorralRequestLogitsProcessor(self.compiled, self.vocab, on_reject=self.on_reject)

    def reset(self) -> None:
        """Forgets the output seen so far."""
        self._state = _Sync(self.compiled.matcher(), self.vocab, "CorralRequestLogitsProcessor")

    @property
    def matcher(self):
        """The matcher, in step with the last ``output_token_ids`` seen."""
        return self._state.matcher

    def __call__(self, output_token_ids: Sequence[int], logits: torch.Tensor) -> torch.Tensor:
        state = self._state
        before = state.violated
        state.sync(output_token_ids, full_check=True, on_reject=self.on_reject)
        if state.violated and not before:
            logger.warning("corral: %s; the request may now only end", _violation(state))
        bitmask = self._buffer.host(1, logits.device)
        if state.done:
            bitmask[0] = self._end
        else:
            corral.fill_bitmasks([state.matcher], bitmask)
        mask = self._buffer.to(1, logits.device)
        return corral.apply_bitmask(logits, mask if logits.dim() == 2 else mask[0])

    def __repr__(self) -> str:
        return f"<CorralRequestLogitsProcessor output={len(self._state.tokens)} tokens, {self._state.matcher!r}>"


def _violation(state: _Sync) -> str:
    return str(_rejected(state.vocab, state.where, state.tokens[-1], state.tokens[:-1]))


# -- SamplingParams.extra_args -> Grammar --------------------------------------------------

#: The ``SamplingParams.extra_args`` keys that turn :class:`CorralLogitsProcessor` on for a
#: request, and the :class:`corral.Grammar` constructor each one calls. A request sets at
#: most one of them. ``corral_json_schema`` takes a JSON string or (offline) a dict;
#: ``corral_choice`` a list of strings; the others a string.
EXTRA_ARGS = {
    "corral_regex": "regex",
    "corral_json_schema": "json_schema",
    "corral_ebnf": "ebnf",
    "corral_gbnf": "gbnf",
    "corral_lark": "lark",
    "corral_choice": "choice",
}

_grammar_cache: OrderedDict[tuple, Grammar] = OrderedDict()
_grammar_lock = threading.Lock()
_GRAMMAR_CACHE_SIZE = 256


def grammar_from_extra_args(extra_args: dict | None) -> Grammar | None:
    """The :class:`corral.Grammar` a request's ``extra_args`` ask for, or None when it has
    no ``corral_*`` key. Raises :class:`corral.GrammarError` (a ``ValueError``) for two
    keys, a value of the wrong type or an invalid constraint. Grammars are cached by value."""
    if not extra_args:
        return None
    keys = [k for k in EXTRA_ARGS if k in extra_args]
    if not keys:
        return None
    if len(keys) > 1:
        raise GrammarError(f"extra_args may hold one corral constraint, got {', '.join(keys)}")
    key = keys[0]
    kind = EXTRA_ARGS[key]
    value = extra_args[key]
    if kind == "choice":
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise GrammarError(f"extra_args[{key!r}] must be a list of strings, got {type(value).__name__}")
        cache_key = (kind, tuple(value))
    elif kind == "json_schema":
        if isinstance(value, (dict, bool)):
            cache_key = (kind, json.dumps(value, ensure_ascii=False))
        elif isinstance(value, str):
            cache_key = (kind, value)
        else:
            raise GrammarError(f"extra_args[{key!r}] must be a JSON string or a dict, got {type(value).__name__}")
    else:
        if not isinstance(value, str):
            raise GrammarError(f"extra_args[{key!r}] must be a string, got {type(value).__name__}")
        cache_key = (kind, value)
    with _grammar_lock:
        grammar = _grammar_cache.get(cache_key)
        if grammar is not None:
            _grammar_cache.move_to_end(cache_key)
            return grammar
    if kind == "choice":
        grammar = Grammar.choice(list(value))
    elif kind == "json_schema":
        grammar = Grammar.json_schema(value)
    else:
        grammar = getattr(Grammar, kind)(value)
    with _grammar_lock:
        _grammar_cache[cache_key] = grammar
        while len(_grammar_cache) > _GRAMMAR_CACHE_SIZE:
            _grammar_cache.popitem(last=False)
    return grammar


# -- vLLM v1 batch-level processor ---------------------------------------------------------


class _Request:
    __slots__ = ("sync", "output")

    def __init__(self, sync: _Sync, output: list[int]):
        self.sync = sync
        self.output = output  # vLLM's live list of the request's output token ids


def _direction(value) -> str:
    """``"SWAP"`` or ``"UNIDIRECTIONAL"`` from vLLM's ``MoveDirectionality`` (or a string)."""
    return str(getattr(value, "name", value)).rsplit(".", 1)[-1].upper()


class CorralLogitsProcessor(_VLLMLogitsProcessor):
    """vLLM v1 batch-level logits processor: constrains the requests whose
    ``SamplingParams.extra_args`` hold one :data:`EXTRA_ARGS` key; other rows are not
    touched.

    vLLM constructs it as ``CorralLogitsProcessor(vllm_config, device, is_pin_memory)``.
    The vocabulary is built, on the first constrained request, from the tokenizer named by
    ``vllm_config.model_config.tokenizer`` (``transformers.AutoTokenizer``, with the model
    config's ``tokenizer_revision`` and ``trust_remote_code``); override
    :meth:`load_vocabulary` for anything else. Compiled grammars are cached by
    :func:`corral.compile`.

    * ``update_state(batch_update)`` applies vLLM's ``BatchUpdate`` (removed, then added,
      then moved: unidirectional moves and swaps) to its per-row request states; added
      requests keep vLLM's live ``output_tok_ids`` list (already generated tokens, e.g. of
      a preempted request, are replayed).
    * ``apply(logits)`` feeds each constrained request's matcher its new output tokens,
      fills their masks with one :func:`corral.fill_bitmasks` call and masks their rows of
      ``logits`` in place (only those rows are read and written).
    * ``is_argmax_invariant()`` is False (masks change greedy choices);
      ``needs_output_token_ids()`` is True (vLLM's async scheduling must provide real ids).

    A request that has accepted EOS may only produce EOS. A sampled token that the matcher
    rejects (possible only when something else chose it, e.g. every allowed token was
    removed by another sampling option) is logged and the request may then only end, unless
    ``on_reject = "raise"`` is set on a subclass: an exception inside vLLM's engine step
    fails every request in the batch.
    """

    #: "eos": log a rejected token and let the request only end; "raise": raise MatcherError.
    on_reject = "eos"

    def __init__(self, vllm_config, device, is_pin_memory: bool = False):
        self.vllm_config = vllm_config
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        self.is_pin_memory = bool(is_pin_memory)
        self._vocab: Vocabulary | None = None
        self._vocab_lock = threading.Lock()
        self._requests: dict[int, _Request] = {}
        self._buffer: _MaskBuffer | None = None
        self._end = None

    # -- vLLM's interface ----------------------------------------------------------------

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        """Raises ``ValueError`` (:class:`corral.GrammarError`) when the request's corral
        arguments are invalid."""
        grammar_from_extra_args(getattr(sampling_params, "extra_args", None))

    def is_argmax_invariant(self) -> bool:
        return False

    def needs_output_token_ids(self) -> bool:
        return True

    def update_state(self, batch_update) -> None:
        if not batch_update:
            return
        requests = self._requests
        for index in batch_update.removed:
            requests.pop(index, None)
        for index, params, _prompt_ids, output_ids in batch_update.added:
            request = self._new_request(params, output_ids)
            if request is None:
                requests.pop(index, None)
            else:
                requests[index] = request
        for a, b, direction in batch_update.moved:
            entry_a = requests.pop(a, None)
            entry_b = requests.pop(b, None)
            if entry_a is not None:
                requests[b] = entry_a
            if entry_b is not None and _direction(direction) == "SWAP":
                requests[a] = entry_b

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self._requests:
            return logits
        batch = logits.shape[0]
        rows = sorted(i for i in self._requests if i < batch)
        if not rows:
            return logits
        for row in rows:
            state = self._requests[row].sync
            before = state.violated
            state.sync(self._requests[row].output, full_check=False, on_reject=self.on_reject)
            if state.violated and not before:
                logger.warning("corral: %s; the request may now only end", _violation(state))
        bitmask = self._buffer.host(len(rows), logits.device)
        active = [i for i, row in enumerate(rows) if not self._requests[row].sync.done]
        if len(active) < len(rows):
            bitmask[[i for i, row in enumerate(rows) if self._requests[row].sync.done]] = self._end
        if active:
            corral.fill_bitmasks([self._requests[rows[i]].sync.matcher for i in active], bitmask, rows=active)
        mask = self._buffer.to(len(rows), logits.device)
        if rows == list(range(batch)):
            return corral.apply_bitmask(logits, mask)
        index = torch.tensor(rows, dtype=torch.long).to(logits.device, non_blocking=True)
        sub = corral.apply_bitmask(logits.index_select(0, index), mask)
        logits.index_copy_(0, index, sub)
        return logits

    # -- corral's part -------------------------------------------------------------------

    def load_vocabulary(self) -> Vocabulary:
        """The vocabulary for the engine's model: its tokenizer through
        ``transformers.AutoTokenizer``. Override to build it otherwise."""
        model_config = getattr(self.vllm_config, "model_config", None)
        name = getattr(model_config, "tokenizer", None) or getattr(model_config, "model", None)
        if name is None:
            raise corral.VocabularyError(
                "CorralLogitsProcessor: vllm_config.model_config names no tokenizer; override load_vocabulary()"
            )
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(
            name,
            revision=getattr(model_config, "tokenizer_revision", None),
            trust_remote_code=bool(getattr(model_config, "trust_remote_code", False)),
        )
        return _vocabulary(tokenizer)

    @property
    def vocab(self) -> Vocabulary:
        """The vocabulary (built by :meth:`load_vocabulary` on first use)."""
        if self._vocab is None:
            with self._vocab_lock:
                if self._vocab is None:
                    vocab = self.load_vocabulary()
                    self._buffer = _MaskBuffer(vocab.mask_width, pin=self.is_pin_memory)
                    self._end = torch.from_numpy(_end_row(vocab))
                    self._vocab = vocab
        return self._vocab

    def __repr__(self) -> str:
        vocab = "not loaded" if self._vocab is None else self._vocab.size
        return f"<CorralLogitsProcessor constrained_rows={len(self._requests)} vocab={vocab}>"

    def _new_request(self, params, output_ids: list[int]) -> _Request | None:
        grammar = grammar_from_extra_args(getattr(params, "extra_args", None))
        if grammar is None:
            return None
        vocab = self.vocab
        sync = _Sync(_compiled(grammar, vocab).matcher(), vocab, "CorralLogitsProcessor")
        return _Request(sync, output_ids)
