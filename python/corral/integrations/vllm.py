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
for what was tested against vLLM's own code (its persistent batch, on the CPU, in the
serving engines' suite, tests/serving).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch

import corral

from ..errors import GrammarError
from ..grammar import Grammar
from ..vocabulary import Vocabulary
from . import _compiled, _end_row, _MaskBuffer, _rejected, _Sync, _vocabulary

try:  # pragma: no cover - vLLM is installed only in the serving engines' environment
    from vllm.v1.sample.logits_processor import LogitsProcessor as _VLLMLogitsProcessor

    HAVE_VLLM = True
except ImportError:
    _VLLMLogitsProcessor = object
    HAVE_VLLM = False

__all__ = [
    "EXTRA_ARGS",
    "HAVE_VLLM",
    "REASONING_END",
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
        self._last_output: Sequence[int] | None = None
        self._state = _Sync(self.compiled.matcher(), self.vocab, "CorralRequestLogitsProcessor")

    @property
    def matcher(self):
        """The matcher, in step with the last ``output_token_ids`` seen."""
        return self._state.matcher

    def __call__(self, output_token_ids: Sequence[int], logits: torch.Tensor) -> torch.Tensor:
        state = self._state
        before = state.violated
        # vLLM v1 hands the same live list every step: then only its length and last token
        # are compared (O(1)); another object (another sequence, or a copy) is compared whole.
        same = output_token_ids is self._last_output
        self._last_output = output_token_ids
        state.sync(output_token_ids, full_check=not same, on_reject=self.on_reject)
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
#: most one of them. ``corral_json_schema`` and ``corral_structural_tag`` take a JSON
#: string or (offline) a dict; ``corral_choice`` a list of strings; ``corral_tool_calls`` a
#: dict ``{"tools": [...], "format": "hermes", ...}`` of :meth:`corral.Grammar.tool_calls`'s
#: arguments (or its JSON text); the others a string.
EXTRA_ARGS = {
    "corral_regex": "regex",
    "corral_json_schema": "json_schema",
    "corral_ebnf": "ebnf",
    "corral_gbnf": "gbnf",
    "corral_lark": "lark",
    "corral_choice": "choice",
    "corral_structural_tag": "structural_tag",
    "corral_tool_calls": "tool_calls",
}

#: The ``extra_args`` key that gives a reasoning model's end marker (``"</think>"``): the
#: output is free text up to the marker's first occurrence, then the constraint.
REASONING_END = "corral_reasoning_end"

_grammar_cache: OrderedDict[tuple, Grammar] = OrderedDict()
_grammar_lock = threading.Lock()
_GRAMMAR_CACHE_SIZE = 256


def _json_value(key: str, value) -> object:
    """A dict/list/bool value, or the JSON text of one."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as e:
            raise GrammarError(f"extra_args[{key!r}] is not JSON: {e}") from None
    if isinstance(value, (dict, list, bool)):
        return value
    raise GrammarError(f"extra_args[{key!r}] must be a JSON string or a dict, got {type(value).__name__}")


def _build(kind: str, key: str, value) -> Grammar:
    if kind == "choice":
        return Grammar.choice(list(value))
    if kind == "json_schema":
        return Grammar.json_schema(value)
    if kind == "structural_tag":
        return Grammar.structural_tag(_json_value(key, value))  # type: ignore[arg-type]
    if kind == "tool_calls":
        spec = _json_value(key, value)
        if not isinstance(spec, dict) or "tools" not in spec:
            raise GrammarError(f'extra_args[{key!r}] must be {{"tools": [...], ...}} (Grammar.tool_calls\'s arguments)')
        options = dict(spec)
        try:
            return Grammar.tool_calls(options.pop("tools"), **options)
        except TypeError as e:  # an argument tool_calls does not take
            raise GrammarError(f"extra_args[{key!r}]: {e}") from None
    return getattr(Grammar, kind)(value)


def _cache_key(kind: str, key: str, value) -> tuple:
    if kind == "choice":
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise GrammarError(f"extra_args[{key!r}] must be a list of strings, got {type(value).__name__}")
        return (kind, tuple(value))
    if kind in ("json_schema", "structural_tag", "tool_calls"):
        if isinstance(value, (dict, bool, list)):
            # Key order is kept: a schema's property order is its output's.
            return (kind, json.dumps(value, ensure_ascii=False))
        if isinstance(value, str):
            return (kind, value)
        raise GrammarError(f"extra_args[{key!r}] must be a JSON string or a dict, got {type(value).__name__}")
    if not isinstance(value, str):
        raise GrammarError(f"extra_args[{key!r}] must be a string, got {type(value).__name__}")
    return (kind, value)


def grammar_from_extra_args(extra_args: dict | None) -> Grammar | None:
    """The :class:`corral.Grammar` a request's ``extra_args`` ask for, or None when it has
    no ``corral_*`` constraint key. Raises :class:`corral.GrammarError` (a ``ValueError``)
    for two keys, a value of the wrong type or an invalid constraint. With
    :data:`REASONING_END`, the grammar is free text up to that marker, then the constraint.
    Grammars are cached by value."""
    if not extra_args:
        return None
    keys = [k for k in EXTRA_ARGS if k in extra_args]
    if not keys:
        if REASONING_END in extra_args:
            raise GrammarError(f"extra_args[{REASONING_END!r}] needs a constraint key ({', '.join(EXTRA_ARGS)})")
        return None
    if len(keys) > 1:
        raise GrammarError(f"extra_args may hold one corral constraint, got {', '.join(keys)}")
    key = keys[0]
    kind = EXTRA_ARGS[key]
    value = extra_args[key]
    end = extra_args.get(REASONING_END)
    if end is not None and (not isinstance(end, str) or not end):
        raise GrammarError(f"extra_args[{REASONING_END!r}] must be a non-empty string such as '</think>'")
    cache_key = (*_cache_key(kind, key, value), end)
    with _grammar_lock:
        grammar = _grammar_cache.get(cache_key)
        if grammar is not None:
            _grammar_cache.move_to_end(cache_key)
            return grammar
    grammar = _build(kind, key, value)
    if end is not None:
        grammar = _reasoning(end) + grammar
    with _grammar_lock:
        _grammar_cache[cache_key] = grammar
        while len(_grammar_cache) > _GRAMMAR_CACHE_SIZE:
            _grammar_cache.popitem(last=False)
    return grammar


def _reasoning(end: str) -> Grammar:
    """Free text up to the first ``end`` (the marker written as its special token or as
    text), ``end`` included."""
    free = {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": end}
    return Grammar.structural_tag({"type": "structural_tag", "format": free})


# -- vLLM v1 batch-level processor ---------------------------------------------------------


class _Request:
    """One constrained row: its compile (started when vLLM adds the request, finished on
    the executor while the step's forward pass runs), then its matcher kept in step with
    vLLM's live output list."""

    __slots__ = ("future", "sync", "output", "failed")

    def __init__(self, future: Future, output: list[int]):
        self.future = future
        self.sync: _Sync | None = None
        self.output = output  # vLLM's live list of the request's output token ids
        self.failed = False  # the compile failed: the request may only end

    def ready(self, vocab: Vocabulary) -> _Sync | None:
        """The request's matcher state, waiting for its compile if it is still running;
        None (logged) if the compile failed."""
        if self.sync is None and not self.failed:
            try:
                compiled = self.future.result()
            except Exception as e:  # a compile error must not fail the whole batch
                logger.error("corral: a request's constraint failed to compile (%s: %s); it may only end", type(e).__name__, e)
                self.failed = True
                return None
            self.sync = _Sync(compiled.matcher(), vocab, "CorralLogitsProcessor")
        return self.sync


def _compiled_warm(grammar: Any, vocab: Vocabulary) -> Any:
    """``grammar`` compiled for ``vocab`` (see ``_compiled``), with the masks of its first
    tokens into each terminal built (``warm_up``): on the executor, not on a step."""
    compiled = _compiled(grammar, vocab)
    compiled.warm_up()
    return compiled


_COMPILER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="corral-compile")


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
        states = [self._requests[row].ready(self.vocab) for row in rows]
        for row, state in zip(rows, states, strict=True):
            if state is None:
                continue
            before = state.violated
            state.sync(self._requests[row].output, full_check=False, on_reject=self.on_reject)
            if state.violated and not before:
                logger.warning("corral: %s; the request may now only end", _violation(state))
        bitmask = self._buffer.host(len(rows), logits.device)
        ending = [i for i, state in enumerate(states) if state is None or state.done]
        active = [i for i, state in enumerate(states) if state is not None and not state.done]
        if ending:
            bitmask[ending] = self._end
        if active:
            corral.fill_bitmasks([states[i].matcher for i in active], bitmask, rows=active)
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
        # Compiled on the executor (corral.compile's cache makes a repeat cheap), so that
        # the compile overlaps the step's forward pass; apply() waits for it if need be.
        return _Request(_COMPILER.submit(_compiled_warm, grammar, vocab), output_ids)
