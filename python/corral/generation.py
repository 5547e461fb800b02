"""Guided generation: :func:`generate`, the sampling loop that applies corral's masks.

The loop asks the model for logits, masks them with the grammar's bitmask, samples
(greedy, temperature, top-k, top-p), and appends forced tokens without asking the model.
Bans in ``mode="rollback"`` are enforced here: a phrase that appears is undone
by rolling back to the token where it started and banning that token at that position.
"""

from __future__ import annotations

import codecs
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from . import _core
from .compiler import _describe_value, _grammar_type_error, compile as compile_grammar
from .errors import DeadEndError, GenerationError, IncompleteOutputError, InternalError, RollbackLimitError
from .grammar import BanSpec, Grammar
from .masking import allocate_bitmask, only_token

#: Defaults of :func:`generate`, defined once: the ``corral generate`` command line uses them too.
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 1.0
DEFAULT_TOP_K: int | None = None
DEFAULT_TOP_P: float | None = None
DEFAULT_SEED: int | None = None
DEFAULT_MAX_ROLLBACKS = 64


def _about(error: Exception, *parameters: str) -> Exception:
    """``error``, marked as being about the named arguments of :func:`generate` (its
    ``parameters`` attribute): the command line shows its own flags in their place."""
    setattr(error, "parameters", parameters)  # noqa: B010 - an attribute Exception does not declare
    return error


@dataclass
class Generation:
    """What :func:`generate` produced."""

    #: The generated text (the prompt not included).
    text: str = ""
    #: The generated token ids (EOS not included).
    token_ids: list[int] = field(default_factory=list)
    #: Why generation stopped: ``"eos"`` (EOS chosen or forced), ``"max_tokens"``.
    stop_reason: str = "max_tokens"
    #: The output is complete under the constraint (the grammar may end here).
    accepting: bool = False
    #: Tokens appended through ``forced_tokens()`` without asking the model.
    forced: int = 0
    #: Rollbacks done by ``mode="rollback"`` bans.
    rollbacks: int = 0

    #: The grammar the output follows (for :attr:`parsed`).
    grammar: Grammar | None = field(default=None, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        """EOS ended the output (as opposed to running out of ``max_tokens``)."""
        return self.stop_reason == "eos"

    @property
    def parsed(self) -> Any:
        """The output as a value, for a :meth:`Grammar.json_schema` grammar (alone or
        combined with ``&``): an instance of the Pydantic model (or the value Pydantic's
        ``TypeAdapter`` gives for another Python type) the grammar was made from, else the
        decoded JSON.

        Raises :class:`~corral.IncompleteOutputError` when generation stopped before the
        value was complete (raise ``max_tokens``), and ``TypeError`` for other grammars.
        """
        import json

        parts = self.grammar.parts if self.grammar is not None else ()
        schemas = [p for p in parts if p._kind == "json_schema"]
        if len(schemas) != 1:
            raise TypeError("Generation.parsed needs a grammar made by Grammar.json_schema (alone or combined with &)")
        if not self.accepting:
            raise IncompleteOutputError(
                f"generation stopped ({self.stop_reason}) after {len(self.token_ids)} tokens, before the JSON value was complete; raise max_tokens",
                self.text,
            )
        python_type = schemas[0]._python_type
        if python_type is None:
            return json.loads(self.text)
        validate_json = getattr(python_type, "model_validate_json", None)
        if callable(validate_json):
            return validate_json(self.text)
        from pydantic import TypeAdapter

        return TypeAdapter(python_type).validate_json(self.text)


def _to_numpy(logits: Any) -> NDArray[np.float32]:
    if isinstance(logits, np.ndarray):
        return np.array(logits, dtype=np.float32)  # a copy: masking writes into it
    # A torch tensor (any device, any float dtype).
    array: NDArray[np.float32] = logits.detach().float().cpu().numpy().astype(np.float32, copy=True)
    return array


def _sample(
    logits: np.ndarray,
    rng: np.random.Generator,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
) -> int:
    """One token id from masked logits (``-inf`` = not allowed; NaN is never chosen).

    Stable at any temperature: logits are shifted by their maximum before the division,
    so a tiny temperature is greedy instead of overflowing, and a ``+inf`` logit (the model
    insists) wins over every finite one.
    """
    allowed = np.flatnonzero(logits > -np.inf)  # NaN compares false: never allowed
    if len(allowed) == 0:
        raise GenerationError("the model gave no allowed token a usable score (every allowed logit is -inf or NaN)")
    z = logits[allowed].astype(np.float64)
    top = np.isposinf(z)
    if top.any():
        allowed, z = allowed[top], np.zeros(int(top.sum()))
    if temperature <= 0:
        return int(allowed[int(np.argmax(z))])
    if top_k is not None and 0 < top_k < len(z):
        keep = np.argpartition(-z, top_k - 1)[:top_k]
        allowed, z = allowed[keep], z[keep]
    with np.errstate(over="ignore", under="ignore"):
        z = (z - z.max()) / temperature  # ≤ 0; -inf where a tiny temperature underflows
        p = np.exp(z)
    p /= p.sum()
    if top_p is not None and top_p < 1.0:
        order = np.argsort(-p, kind="stable")
        cumulative = np.cumsum(p[order])
        # The smallest set of most likely tokens whose mass reaches top_p.
        n = int(np.searchsorted(cumulative, top_p, side="left")) + 1
        keep = order[: min(n, len(order))]
        allowed, p = allowed[keep], p[keep] / p[keep].sum()
    # Inverse CDF: the same distribution as rng.choice(p=p), without its checks (~10x faster).
    cdf = np.cumsum(p)
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return int(allowed[min(i, len(allowed) - 1)])


class _RollbackBans:
    """The rollback-mode bans of one generation: finds a phrase that just appeared and
    remembers which token is banned at which position."""

    def __init__(self, grammars: Sequence[Grammar], max_rollbacks: int):
        specs = [cast(BanSpec, g.ban_spec) for g in grammars]  # only bans come here
        # (at the end of the output, while it may go on) per ban.
        self.patterns = [(s.pattern(final=True), s.pattern(final=False)) for s in specs]
        self.whole_words = [s.whole_words for s in specs]
        longest = max(len(p) for s in specs for p in s.phrases)
        # Bytes to look back from a new token: a phrase's characters (≤ 4 bytes each) and
        # one character on each side for whole-word checks.
        self.window = 4 * (longest + 2)
        self.max_rollbacks = max_rollbacks
        self.rollbacks = 0
        #: position -> token ids banned there (positions count generated tokens).
        self.banned: dict[int, set[int]] = {}

    def find(self, data: bytes | bytearray, new_from: int, at_end: bool) -> tuple[int, str] | None:
        """The earliest-starting phrase occurrence completed by the bytes from ``new_from``
        on, as (start byte, phrase text), or None. A whole-word phrase is complete once the
        character after it is there, or at the end of the output (``at_end``). Only the
        new bytes and the longest phrase's window before them are read (the output itself
        is not copied)."""
        start = max(0, new_from - self.window)
        while 0 < start < len(data) and 0x80 <= data[start] < 0xC0:
            start -= 1  # begin on a character boundary
        text = bytes(data[start:]).decode("utf-8", errors="surrogateescape")

        def offset(i: int) -> int:
            return start + len(text[:i].encode("utf-8", errors="surrogateescape"))

        best = None
        for (final, open_ended), whole_word in zip(self.patterns, self.whole_words, strict=True):
            pattern = final if at_end else open_ended
            pos = 0
            # Every start position in turn (occurrences may overlap); at each, the longest
            # phrase that matches (alternatives are ordered longest first).
            while (m := pattern.search(text, pos)) is not None:
                end = offset(m.end())
                # Completed earlier: the last byte (or, for a whole word, the character after
                # it) was there before the new bytes.
                if end > new_from or (whole_word and end == new_from):
                    s = offset(m.start())
                    if best is None or s < best[0]:
                        best = (s, m.group())
                    break
                pos = m.start() + 1
        return best

    def count(self, phrase: str) -> None:
        self.rollbacks += 1
        if self.rollbacks > self.max_rollbacks:
            raise _about(
                RollbackLimitError(
                    f"banned phrases were rolled back {self.max_rollbacks} times without finishing "
                    f"(last: {phrase!r}); raise max_rollbacks or ban with mode='mask'",
                    rollbacks=self.rollbacks - 1,
                    phrase=phrase,
                ),
                "max_rollbacks",
                "mode",
            )

    def forget_after(self, position: int) -> None:
        """Bans past ``position`` were for a prefix that no longer exists."""
        for p in [p for p in self.banned if p > position]:
            del self.banned[p]


def _as_model(model: Any, tokenizer: Any) -> Any:
    """The generation protocol (``vocab``, ``encode``, ``logits(ids)``) for ``model``."""
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        from .models import load_model

        return load_model(model)
    if hasattr(model, "vocab") and hasattr(model, "logits") and hasattr(model, "encode"):
        return model
    if tokenizer is not None and hasattr(model, "forward"):
        from .models.transformers_lm import TransformersModel

        return TransformersModel(model, tokenizer)
    raise TypeError(
        "generate(): model must be a corral model (corral.models.BuiltinModel), a path, or a transformers "
        f"causal LM with tokenizer=...; got {_describe_value(model)}"
    )


def _is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _check_sampling(temperature: Any, top_k: Any, top_p: Any, seed: Any, max_tokens: Any, max_rollbacks: Any) -> None:
    """Refuses sampling settings that have no meaning, naming the setting."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating, np.integer)):
        raise _about(GenerationError(f"temperature must be a number, got {type(temperature).__name__}"), "temperature")
    if not math.isfinite(temperature) or temperature < 0:
        raise _about(
            GenerationError(f"temperature must be a finite number ≥ 0 (0 = greedy), got {temperature}"), "temperature"
        )
    if top_k is not None and (not _is_int(top_k) or top_k < 1):
        raise _about(GenerationError(f"top_k must be an int ≥ 1, got {top_k!r}"), "top_k")
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1):
        raise _about(GenerationError(f"top_p must be a number in (0, 1], got {top_p!r}"), "top_p")
    if seed is not None and (not _is_int(seed) or seed < 0):
        raise _about(GenerationError(f"seed must be an int ≥ 0, got {seed!r}"), "seed")
    if not _is_int(max_tokens) or max_tokens < 0:
        raise _about(GenerationError(f"max_tokens must be an int ≥ 0, got {max_tokens!r}"), "max_tokens")
    if not _is_int(max_rollbacks) or max_rollbacks < 0:
        raise _about(GenerationError(f"max_rollbacks must be an int ≥ 0, got {max_rollbacks!r}"), "max_rollbacks")


def _prompt_token_ids(prompt: Any) -> list[int]:
    """``prompt`` (a sequence of token ids, not text) as a list of ints."""
    hint = "generate(): prompt must be a str or a sequence of token ids (ints)"
    if isinstance(prompt, (bytes, bytearray, memoryview)):
        raise TypeError(f"{hint}, got {type(prompt).__name__}: decode it to str first")
    try:
        items = list(prompt)
    except TypeError:
        raise TypeError(f"{hint}, got {_describe_value(prompt)}") from None
    ids = []
    for i, item in enumerate(items):
        try:
            if isinstance(item, bool):
                raise TypeError
            ids.append(operator.index(item))  # ints, numpy and 0-d torch integers
        except TypeError:
            more = "; generate() makes one output: call it once per prompt" if isinstance(item, str) else ""
            raise TypeError(
                f"{hint}, got a {type(prompt).__name__} whose item {i} is {_describe_value(item)}{more}"
            ) from None
    return ids


def generate(
    model: Any,
    prompt: str | Sequence[int] = "",
    grammar: Grammar | None = None,
    *,
    tokenizer: Any = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float = DEFAULT_TEMPERATURE,
    top_k: int | None = DEFAULT_TOP_K,
    top_p: float | None = DEFAULT_TOP_P,
    seed: int | None = DEFAULT_SEED,
    on_text: Callable[[str], None] | None = None,
    on_token: Callable[[int], None] | None = None,
    max_rollbacks: int = DEFAULT_MAX_ROLLBACKS,
) -> Generation:
    """Generates text from ``model`` after ``prompt`` that follows ``grammar``.

    * ``model``: :class:`corral.models.BuiltinModel` (or a path :func:`corral.models.load_model`
      reads), a ``transformers`` causal LM with ``tokenizer=``, or any object with ``vocab``
      (a :class:`corral.Vocabulary`), ``encode(text)`` and ``logits(ids)``.
    * ``prompt``: text, or a sequence of token ids (one prompt: call once per prompt).
    * ``grammar``: a :class:`corral.Grammar` (combine with ``&``), or None for free text.
    * Sampling: ``temperature=0`` is greedy; ``top_k`` keeps the k most likely allowed
      tokens, ``top_p`` the smallest set of them whose probability reaches p; ``seed``
      makes sampling repeatable.
    * Stops at EOS (allowed only where the grammar may end; forced when nothing else is
      allowed) or after ``max_tokens`` tokens. Forced tokens are appended without calling
      the model.
    * Streaming: ``on_token(id)`` and ``on_text(str)`` get each token as it becomes final
      (with ``mode="rollback"`` bans, once it is too far back to be rolled back).
    * ``max_rollbacks``: more rollbacks raise :class:`corral.RollbackLimitError`.

    A wrong type (a str for ``grammar``, a list of prompts) raises ``TypeError``; a
    setting out of range raises :class:`corral.GenerationError`. Errors about settings
    name them in their ``parameters`` attribute (e.g. ``("top_p",)``), which the command
    line uses to name its flags instead.
    """
    _check_sampling(temperature, top_k, top_p, seed, max_tokens, max_rollbacks)
    if grammar is not None and not isinstance(grammar, Grammar):
        raise _grammar_type_error("generate()", grammar, none_ok=True)
    for name, callback in (("on_text", on_text), ("on_token", on_token)):
        if callback is not None and not callable(callback):
            raise TypeError(f"generate(): {name} must be a function or None, got {_describe_value(callback)}")
    given_ids = None if isinstance(prompt, str) else _prompt_token_ids(prompt)
    lm = _as_model(model, tokenizer)
    vocab = lm.vocab
    prompt_ids = list(lm.encode(prompt)) if given_ids is None else given_ids
    bad = [t for t in prompt_ids if not 0 <= t < vocab.size]
    if bad:
        raise GenerationError(f"prompt token id {bad[0]} is out of range (vocabulary size {vocab.size})")
    parts = grammar.parts if grammar is not None else ()
    rollback_parts = [g for g in parts if g.ban_spec is not None and g.ban_spec.mode == "rollback"]
    mask_parts = [g for g in parts if g not in rollback_parts]
    matcher = None
    if mask_parts:
        combined = mask_parts[0]
        for g in mask_parts[1:]:
            combined = combined & g
        matcher = compile_grammar(combined, vocab).matcher()
    bans = _RollbackBans(rollback_parts, max_rollbacks) if rollback_parts else None

    rng = np.random.default_rng(seed)
    eos = set(vocab.eos_token_ids)
    size = vocab.size
    bitmask = allocate_bitmask(1, size)
    out = Generation()
    ids: list[int] = []  # generated tokens
    ends: list[int] = []  # byte offset after each generated token
    data = bytearray()  # generated bytes
    committed = 0  # tokens passed to the callbacks
    # With rollback bans: the model's logits at each position a rollback can still reach,
    # so that resampling after a rollback does not ask the model again.
    saved: dict[int, np.ndarray] = {}
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(tok: int) -> None:
        ids.append(tok)
        data.extend(vocab.token_bytes(tok))
        ends.append(len(data))

    def pop_to(n: int) -> None:
        """Rolls the output back to its first ``n`` tokens."""
        undo = len(ids) - n
        if matcher is not None and undo:
            matcher.rollback(undo)
        del ids[n:]
        del ends[n:]
        del data[ends[-1] if ends else 0 :]
        for p in [p for p in saved if p > n]:
            del saved[p]  # their prefixes are gone; position n's prefix is unchanged

    def commit(upto: int) -> None:
        nonlocal committed
        while committed < upto:
            tok = ids[committed]
            saved.pop(committed, None)  # out of a rollback's reach
            committed += 1
            if on_token:
                on_token(tok)
            if on_text:
                piece = decoder.decode(vocab.token_bytes(tok))
                if piece:
                    on_text(piece)

    def stable() -> int:
        """Tokens that no rollback can reach any more."""
        if bans is None:
            return len(ids)
        limit = len(data) - bans.window
        n = committed
        while n < len(ids) and ends[n] <= limit:
            n += 1
        return n

    def rollback_for(found: tuple[int, str]) -> None:
        """Undo the phrase at byte ``found[0]``: back to the token holding that byte, which
        is then banned at its position."""
        start, phrase = found
        assert bans is not None  # a phrase is only found where there are rollback bans
        j = next(i for i, e in enumerate(ends) if e > start)
        if j < committed:
            raise GenerationError(f"banned phrase {phrase!r} starts in text already streamed")
        bans.count(phrase)
        bans.forget_after(j)
        bans.banned.setdefault(j, set()).add(ids[j])
        pop_to(j)

    def dead_end_back(position: int, reason: Exception) -> None:
        """Every token at ``position`` is masked or banned: ban the previous one instead."""
        if bans is None:
            raise reason
        if position == 0 or position - 1 < committed:
            raise GenerationError(
                f"no token can follow at position {position}: banned phrases and the grammar leave no way forward"
            ) from reason
        bans.count("(no way forward)")
        bans.forget_after(position - 1)
        bans.banned.setdefault(position - 1, set()).add(ids[position - 1])
        pop_to(position - 1)

    def append(tok: int) -> bool:
        """Appends an accepted token; False if that made a banned phrase (rolled back)."""
        if tok in eos:
            found = bans.find(data, len(data), at_end=True) if bans is not None else None
            if found is not None:
                if matcher is not None:
                    matcher.rollback(1)  # the EOS
                rollback_for(found)
                return False
            out.stop_reason = "eos"
            return True
        before = len(data)
        push(tok)
        found = bans.find(data, before, at_end=False) if bans is not None else None
        if found is not None:
            rollback_for(found)
            return False
        commit(stable())
        return True

    while len(ids) < max_tokens and out.stop_reason != "eos":
        position = len(ids)
        banned_here = bans.banned.get(position, ()) if bans is not None else ()
        if matcher is not None:
            try:
                matcher.fill_bitmask(bitmask, 0)
            except DeadEndError as e:
                dead_end_back(position, e)
                continue
            only = only_token(bitmask[0])
            if only is not None and only not in banned_here:
                # One token allowed: take the whole forced run without asking the model.
                for tok in matcher.forced_tokens()[: max_tokens - position + 1]:
                    if tok not in eos and len(ids) >= max_tokens:
                        break
                    if not matcher.advance(tok):
                        raise InternalError(f"forced token {tok} was rejected by the matcher")
                    out.forced += tok not in eos
                    if not append(tok) or out.stop_reason == "eos":
                        break
                continue
        if position in saved:
            logits = saved[position].copy()  # same prefix as before the rollback
        else:
            logits = _to_numpy(lm.logits(prompt_ids + ids))
            if logits.ndim != 1 or logits.shape[0] < size:
                raise GenerationError(
                    f"the model returned logits of shape {logits.shape}; expected one row of at least {size}"
                )
            logits = logits[:size]
            if bans is not None:
                saved[position] = logits.copy()
        if matcher is not None:
            # _to_numpy gave a fresh C-contiguous float32 row: straight to the Rust kernel.
            _core.apply_bitmask_inplace(logits, bitmask)
        for t in banned_here:
            logits[t] = -np.inf
        if not np.isfinite(logits).any():
            dead_end_back(position, GenerationError("every token is masked or banned"))
            continue
        tok = _sample(logits, rng, temperature, top_k, top_p)
        if matcher is not None and not matcher.advance(tok):
            raise InternalError(f"sampled token {tok} that the mask allowed but the matcher rejected")
        append(tok)

    if bans is not None and out.stop_reason == "max_tokens":
        # Nothing follows: a whole-word phrase right at the end is complete too.
        found = bans.find(data, max(0, len(data) - bans.window), at_end=True)
        if found is not None:
            # Cut the output before the phrase rather than generating past max_tokens.
            j = next(i for i, e in enumerate(ends) if e > found[0])
            pop_to(max(j, committed))
    commit(len(ids))
    if on_text:
        tail = decoder.decode(b"", final=True)
        if tail:
            on_text(tail)
    out.token_ids = ids
    out.text = bytes(data).decode("utf-8", errors="replace")
    out.accepting = out.stop_reason == "eos" or matcher is None or matcher.is_accepting()
    out.grammar = grammar
    out.rollbacks = bans.rollbacks if bans is not None else 0
    return out
