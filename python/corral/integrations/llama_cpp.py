"""corral for llama-cpp-python: a logits processor that makes ``Llama`` follow a grammar.

>>> import llama_cpp, corral                                                # doctest: +SKIP
>>> from corral.integrations.llama_cpp import CorralLlamaLogitsProcessor    # doctest: +SKIP
>>> llm = llama_cpp.Llama(model_path="model.gguf")                          # doctest: +SKIP
>>> processor = CorralLlamaLogitsProcessor(corral.Grammar.regex(r"[0-9]{3}-[a-z]+"), llm)  # doctest: +SKIP
>>> out = llm("Code: ", max_tokens=32, temperature=0,
...           logits_processor=llama_cpp.LogitsProcessorList([processor]),
...           stopping_criteria=llama_cpp.StoppingCriteriaList([processor.stopping_criterion]))  # doctest: +SKIP

llama-cpp-python calls each processor as ``processor(input_ids, scores)`` before its own
samplers run (penalties, top-k, top-p, temperature, ...): ``input_ids`` is every token of
the sequence so far (the prompt, then what was generated), ``scores`` the logits of every
token id. The processor advances its matcher with the tokens appended since the last call
and sets the logits of the tokens the grammar forbids to ``-inf``. EOS (any
end-of-generation token of the model) is allowed exactly where the grammar may end, so
generation stops with a complete match unless ``max_tokens`` runs out first. The hook
never sees the last token sampled: after a stop on EOS the matcher holds the whole text
(:attr:`~CorralLlamaLogitsProcessor.is_accepting` is true); after ``max_tokens`` it lacks
the last token.

One processor follows one generation: the first call fixes the prompt. Call
:meth:`~CorralLlamaLogitsProcessor.reset` (or make a new processor, which is cheap: the
compiled grammar and the vocabulary are cached) before reusing it for another.

Errors: llama-cpp-python runs the hook inside a ctypes callback, where an exception would
be printed and then ignored, and sampling would go on unconstrained. So when the hook fails
(:class:`~corral.MatcherError` for a processor reused without ``reset()``,
:class:`~corral.DeadEndError`, ...) it allows only EOS, which ends the output, and keeps
the exception in :attr:`~CorralLlamaLogitsProcessor.error`;
:meth:`~CorralLlamaLogitsProcessor.check` raises it, and so does
:meth:`~CorralLlamaLogitsProcessor.stopping_criterion` when passed as a stopping criterion
(as above), which makes the exception propagate out of the ``Llama`` call.

The vocabulary is read from the model itself (:func:`vocabulary_from_llama`): each token's
bytes as llama.cpp renders it in the middle of a text, control tokens never allowed,
unused ids missing. Importing this module does not import ``llama_cpp``.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any, NoReturn

import numpy as np

from .. import _core
from ..compiler import _describe_value, _grammar_type_error, _vocabulary_type_error, compile as compile_grammar
from ..errors import MatcherError, VocabularyError
from ..grammar import Grammar
from ..masking import allocate_bitmask, apply_bitmask
from ..vocabulary import Vocabulary

__all__ = ["CorralLlamaLogitsProcessor", "logits_processor", "vocabulary_from_llama"]

# Vocabularies already read, per Llama object (reading one costs a call per token id).
_vocab_cache: weakref.WeakKeyDictionary[Any, Vocabulary] = weakref.WeakKeyDictionary()
_vocab_lock = threading.Lock()


def _llama_cpp():
    try:
        import llama_cpp
    except ImportError as exc:  # pragma: no cover - exercised only without the package
        raise ImportError(
            "corral.integrations.llama_cpp needs llama-cpp-python (pip install llama-cpp-python)"
        ) from exc
    return llama_cpp


def _piece(lib, vocab_p, token: int, buf, special: bool):
    """Token ``token``'s bytes from ``llama_token_to_piece`` (no leading space stripped)."""
    n = lib.llama_token_to_piece(vocab_p, token, buf, len(buf), 0, special)
    if n < 0:  # the buffer is too small: -n bytes are needed
        bigger = ctypes.create_string_buffer(-n)
        n = lib.llama_token_to_piece(vocab_p, token, bigger, len(bigger), 0, special)
        if n < 0:
            raise VocabularyError(f"llama_token_to_piece failed for token {token}")
        return bigger.raw[:n]
    return buf.raw[:n]


def vocabulary_from_llama(llama) -> Vocabulary:
    """The :class:`corral.Vocabulary` of a ``llama_cpp.Llama`` model.

    * Normal, byte and user-defined tokens: the bytes ``llama_token_to_piece`` writes for
      them (byte-level BPE's alphabet and SentencePiece's ``▁`` undone, ``<0xNN>`` byte
      tokens as the byte), with no leading space stripped: what the token adds in the
      middle of a text.
    * End-of-generation tokens (``llama_vocab_is_eog``, which includes ``token_eos()``):
      the EOS ids, allowed where the grammar may end. llama-cpp-python stops on any of
      them.
    * Other control tokens and the unknown token: special, never allowed.
    * Unused ids, and tokens whose piece is empty: missing, never allowed.

    The logits width is ``llama.n_vocab()``. The result is cached per ``Llama`` object.
    """
    with _vocab_lock:
        try:
            cached = _vocab_cache.get(llama)
        except TypeError:  # not weak-referenceable
            cached = None
        if cached is not None:
            return cached
    lib = _llama_cpp()
    model_p = getattr(llama, "model", None)
    if model_p is None:
        raise VocabularyError(f"expected a llama_cpp.Llama with a loaded model, got {type(llama).__name__}")
    vocab_p = lib.llama_model_get_vocab(model_p)
    if not vocab_p:
        raise VocabularyError("the llama.cpp model has no vocabulary (was it closed?)")
    n = int(lib.llama_vocab_n_tokens(vocab_p))
    if n <= 0:
        raise VocabularyError("the llama.cpp model's vocabulary is empty")
    special_attr = lib.LLAMA_TOKEN_ATTR_CONTROL | lib.LLAMA_TOKEN_ATTR_UNKNOWN
    buf = ctypes.create_string_buffer(256)
    token_bytes: list = [None] * n
    eos: list[int] = []
    special: list[int] = []
    for i in range(n):
        attr = int(lib.llama_vocab_get_attr(vocab_p, i))
        if lib.llama_vocab_is_eog(vocab_p, i):
            eos.append(i)
            token_bytes[i] = _piece(lib, vocab_p, i, buf, True)
        elif attr & special_attr:
            special.append(i)
            token_bytes[i] = _piece(lib, vocab_p, i, buf, True)
        elif attr & lib.LLAMA_TOKEN_ATTR_UNUSED:
            continue
        else:
            piece = _piece(lib, vocab_p, i, buf, False)
            token_bytes[i] = piece if piece else None
    eos_id = int(lib.llama_vocab_eos(vocab_p))
    if 0 <= eos_id < n and eos_id not in eos:
        eos.append(eos_id)
    if not eos:
        raise VocabularyError("the llama.cpp model defines no end-of-generation token")
    for i in eos + special:
        if token_bytes[i] is None or token_bytes[i] == b"":
            # A special token must name a token; its bytes are only for display.
            token_bytes[i] = f"<special {i}>".encode()
    vocab = Vocabulary.from_token_bytes(token_bytes, eos_token_ids=eos, special_token_ids=special, size=n)
    with _vocab_lock:
        try:
            _vocab_cache[llama] = vocab
        except TypeError:
            pass
    return vocab


class CorralLlamaLogitsProcessor:
    """A llama-cpp-python logits processor that masks every token ``grammar`` forbids.

    ``grammar`` is a :class:`corral.Grammar` (compiled here for the model's vocabulary,
    with corral's cache) or a :class:`corral.CompiledGrammar` compiled for
    ``vocabulary_from_llama(llama)``. ``vocab`` overrides the vocabulary read from
    ``llama`` (its size must be the model's ``n_vocab()``).

    Pass it in a ``llama_cpp.LogitsProcessorList`` as ``logits_processor=`` to
    ``Llama.__call__``, ``create_completion``, ``create_chat_completion`` or ``generate``.
    """

    def __init__(
        self,
        grammar: Grammar | _core.CompiledGrammar,
        llama,
        *,
        vocab: Vocabulary | None = None,
        limits: _core.Limits | None = None,
    ):
        if vocab is not None and not isinstance(vocab, Vocabulary):
            raise _vocabulary_type_error("CorralLlamaLogitsProcessor", vocab)
        if not callable(getattr(llama, "n_vocab", None)):
            raise TypeError(f"CorralLlamaLogitsProcessor expects a llama_cpp.Llama, got {_describe_value(llama)}")
        self.vocab = vocab if vocab is not None else vocabulary_from_llama(llama)
        n_vocab = int(llama.n_vocab())
        if self.vocab.size != n_vocab:
            raise VocabularyError(f"the vocabulary has size {self.vocab.size} but the model's logits have {n_vocab} ids")
        if isinstance(grammar, Grammar):
            self.compiled = compile_grammar(grammar, self.vocab, limits=limits)
        elif isinstance(grammar, _core.CompiledGrammar):
            if grammar.vocab_size != self.vocab.size:
                raise VocabularyError(
                    f"the grammar was compiled for {grammar.vocab_size} token ids but the model has {self.vocab.size}"
                )
            self.compiled = grammar
        else:
            raise _grammar_type_error("CorralLlamaLogitsProcessor", grammar, compiled_ok=True)
        self.matcher = self.compiled.matcher()
        self._bitmask = allocate_bitmask(1, self.vocab.size)
        self._prompt: np.ndarray | None = None
        self._generated: list[int] = []
        #: The exception the hook met (see :meth:`check`), or None.
        self.error: BaseException | None = None

    # -- state ----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forgets the prompt and the generated tokens: ready for another generation."""
        self.matcher.reset()
        self._prompt = None
        self._generated = []
        self.error = None

    @property
    def generated_ids(self) -> list[int]:
        """The tokens generated after the prompt that the matcher has accepted so far (the
        last sampled token is accepted on the next call, or by :meth:`accept`)."""
        return list(self._generated)

    @property
    def is_accepting(self) -> bool:
        """Is the output accepted so far a complete match?"""
        return self.matcher.is_accepting()

    @property
    def is_finished(self) -> bool:
        """Has the matcher accepted EOS?"""
        return self.matcher.is_finished()

    def accept(self, token_id: int) -> None:
        """Advances the matcher by one generated token. Called for you with the tokens that
        appear in ``input_ids``; call it yourself only to account for the last token of a
        generation, which llama-cpp-python does not hand back to processors."""
        token_id = int(token_id)
        if not 0 <= token_id < self.vocab.size:
            raise MatcherError(f"token id {token_id} is outside the vocabulary (size {self.vocab.size})")
        if not self.matcher.advance(token_id):
            raise MatcherError(
                f"token {token_id} ({self.vocab.token_kind(token_id)}, {self.vocab.token_bytes(token_id)!r}) does not "
                f"continue the output {self.vocab.decode_bytes(self._generated)!r} under the grammar (was a processor "
                "after this one allowed to change the scores, or was it reused without reset()?)"
            )
        self._generated.append(token_id)

    # -- the hook -------------------------------------------------------------------------

    def _sync(self, input_ids: np.ndarray) -> None:
        ids = np.asarray(input_ids).reshape(-1)
        if self._prompt is None:
            self._prompt = ids.astype(np.int64, copy=True)
            return
        plen = len(self._prompt)
        done = plen + len(self._generated)
        if len(ids) < done or not np.array_equal(ids[:plen], self._prompt) or (
            self._generated and not np.array_equal(ids[plen:done], self._generated)
        ):
            raise MatcherError(
                "input_ids do not continue the sequence this processor has followed; "
                "call reset() (or use a new processor) for each generation"
            )
        for tok in ids[done:]:
            self.accept(int(tok))

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self.error is not None:
            return self._stop(scores, self.error)
        try:
            self._sync(input_ids)
            if scores.shape[-1] != self.vocab.size:
                raise VocabularyError(
                    f"got {scores.shape[-1]} scores for a vocabulary of {self.vocab.size} ids: the processor must "
                    "see every token id in order"
                )
            if self.matcher.is_finished():
                raise MatcherError("the grammar has already accepted EOS; nothing may follow it")
            self.matcher.fill_bitmask(self._bitmask, 0)
        except Exception as exc:
            self.error = exc
            return self._stop(scores, exc)
        if not scores.flags.writeable:
            scores = np.array(scores)
        return apply_bitmask(scores, self._bitmask[0])

    def _stop(self, scores: np.ndarray, exc: BaseException) -> NoReturn:
        # llama-cpp-python calls processors from a ctypes callback, where an exception is
        # printed and then ignored: sampling would go on unconstrained. So the scores are
        # changed in place (they are a view of llama.cpp's candidates) to allow only EOS,
        # which ends the generation, before the exception is raised for ctypes to print.
        # stopping_criterion() and check() raise it where the caller sees it.
        if scores.flags.writeable:
            scores[...] = -np.inf
            for i in self.vocab.eos_token_ids:
                if i < scores.shape[-1]:
                    scores[..., i] = 0.0
        raise exc

    def check(self) -> None:
        """Raises the error this processor met during generation, if any.

        Errors inside the hook (a dead end, reuse without :meth:`reset`) cannot propagate
        through llama.cpp's sampler, so the processor ends the generation with EOS, keeps
        the error in :attr:`error`, and raises it here (and from
        :meth:`stopping_criterion`)."""
        if self.error is not None:
            raise self.error

    def stopping_criterion(self, input_ids=None, logits=None) -> bool:
        """For ``stopping_criteria=llama_cpp.StoppingCriteriaList([p.stopping_criterion])``:
        raises the processor's error out of the ``Llama`` call; otherwise never stops."""
        self.check()
        return False

    def __repr__(self) -> str:
        return f"<CorralLlamaLogitsProcessor generated={len(self._generated)} accepting={self.is_accepting}>"


def logits_processor(grammar: Grammar | _core.CompiledGrammar, llama, **kwargs):
    """A ``llama_cpp.LogitsProcessorList`` holding one :class:`CorralLlamaLogitsProcessor`."""
    lib = _llama_cpp()
    return lib.LogitsProcessorList([CorralLlamaLogitsProcessor(grammar, llama, **kwargs)])
