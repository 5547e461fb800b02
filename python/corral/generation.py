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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from . import _core
from .compiler import _describe_value, _grammar_type_error, compile as compile_grammar
from .errors import DeadEndError, GenerationError, IncompleteOutputError, InternalError, RollbackLimitError
from .grammar import BanSpec, Grammar
from .masking import allocate_bitmask, only_token
from .vocabulary import Vocabulary

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

    def banned_at(self, position: int) -> Collection[int]:
        """The token ids banned at ``position``."""
        return self.banned.get(position, ())

    def ban(self, position: int, token: int, phrase: str) -> None:
        """Counts a rollback for ``phrase`` and bans ``token`` at ``position``. Bans past
        ``position`` go: the output is about to be rolled back to it."""
        self.count(phrase)
        self.forget_after(position)
        self.banned.setdefault(position, set()).add(token)

    def count(self, phrase: str) -> None:
        """Counts one rollback; past ``max_rollbacks``, raises RollbackLimitError."""
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


def _checked_prompt(lm: Any, vocab: Vocabulary, prompt: str | Sequence[int], given_ids: list[int] | None) -> list[int]:
    """The prompt's token ids (``prompt`` encoded by the model, or ``given_ids``), each
    checked to be in the vocabulary."""
    prompt_ids = list(lm.encode(prompt)) if given_ids is None else given_ids
    size = vocab.size
    bad = [t for t in prompt_ids if not 0 <= t < size]
    if bad:
        raise GenerationError(f"prompt token id {bad[0]} is out of range (vocabulary size {size})")
    return prompt_ids


def _constraints(
    grammar: Grammar | None, vocab: Vocabulary, max_rollbacks: int
) -> tuple[_core.Matcher | None, _RollbackBans | None]:
    """The matcher of ``grammar``'s masking parts and its ``mode="rollback"`` bans (None
    where there are none): rollback bans have no mask, the loop enforces them."""
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
    return matcher, bans


class _Output:
    """The generated tokens (EOS not included): their ids, the bytes they spell and the
    byte offset after each, and the streaming of the final ones to the callbacks."""

    def __init__(self, vocab: Vocabulary, on_token: Callable[[int], None] | None, on_text: Callable[[str], None] | None):
        self.vocab = vocab
        self.ids: list[int] = []
        self.ends: list[int] = []  # byte offset after each token
        self.data = bytearray()
        self.committed = 0  # tokens passed to the callbacks
        self._on_token = on_token
        self._on_text = on_text
        # Incremental: a character split across tokens is streamed once its last byte is final.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __len__(self) -> int:
        return len(self.ids)

    def push(self, tok: int) -> None:
        """Appends token ``tok`` and its bytes."""
        self.ids.append(tok)
        self.data.extend(self.vocab.token_bytes(tok))
        self.ends.append(len(self.data))

    def truncate(self, n: int) -> None:
        """Keeps the first ``n`` tokens (and their bytes) only."""
        del self.ids[n:]
        del self.ends[n:]
        del self.data[self.ends[-1] if self.ends else 0 :]

    def token_at(self, offset: int) -> int:
        """The index of the token that holds byte ``offset``."""
        return next(i for i, e in enumerate(self.ends) if e > offset)

    def ending_by(self, limit: int) -> int:
        """How many tokens are final at byte ``limit``: the streamed ones and those after
        them that end at or before it."""
        n = self.committed
        while n < len(self.ids) and self.ends[n] <= limit:
            n += 1
        return n

    def stream(self, upto: int) -> None:
        """Passes the tokens before ``upto`` not passed yet to ``on_token`` / ``on_text``."""
        while self.committed < upto:
            tok = self.ids[self.committed]
            self.committed += 1
            if self._on_token:
                self._on_token(tok)
            if self._on_text:
                piece = self._decoder.decode(self.vocab.token_bytes(tok))
                if piece:
                    self._on_text(piece)

    def close_stream(self) -> None:
        """Passes ``on_text`` what the decoder held back (an incomplete character at the end)."""
        if self._on_text:
            tail = self._decoder.decode(b"", final=True)
            if tail:
                self._on_text(tail)

    def text(self) -> str:
        """The output's bytes as text (malformed UTF-8 replaced)."""
        return bytes(self.data).decode("utf-8", errors="replace")


class _Logits:
    """The model's next-token logits, checked and cut to the vocabulary's width. With
    ``keep`` (rollback bans), each position's logits are kept while a rollback can still
    reach it, so that resampling after a rollback does not ask the model again."""

    def __init__(self, lm: Any, prompt_ids: list[int], size: int, keep: bool):
        self.lm = lm
        self.prompt_ids = prompt_ids
        self.size = size
        self.keep = keep
        self.saved: dict[int, NDArray[np.float32]] = {}

    def at(self, position: int, ids: list[int]) -> NDArray[np.float32]:
        """The logits after ``ids`` (``position`` of them), as a fresh array to mask in place."""
        if position in self.saved:
            kept: NDArray[np.float32] = self.saved[position].copy()  # same prefix as before the rollback
            return kept
        logits = _to_numpy(self.lm.logits(self.prompt_ids + ids))
        if logits.ndim != 1 or logits.shape[0] < self.size:
            raise GenerationError(f"the model returned logits of shape {logits.shape}; expected one row of at least {self.size}")
        logits = logits[: self.size]
        if self.keep:
            self.saved[position] = logits.copy()
        return logits

    def forget_after(self, n: int) -> None:
        """Drops the logits past position ``n``: their prefixes are gone (position ``n``'s is unchanged)."""
        for p in [p for p in self.saved if p > n]:
            del self.saved[p]

    def forget(self, positions: range) -> None:
        """Drops the logits at ``positions``: out of a rollback's reach."""
        for p in positions:
            self.saved.pop(p, None)


@dataclass
class _Sampler:
    """The sampling settings of one generation and its random generator."""

    rng: np.random.Generator
    temperature: float
    top_k: int | None
    top_p: float | None

    def __call__(self, logits: NDArray[np.float32]) -> int:
        """One token id from masked logits."""
        return _sample(logits, self.rng, self.temperature, self.top_k, self.top_p)


class _SamplingLoop:
    """The sampling loop of one :func:`generate` call: each step either takes the run of
    tokens the grammar forces or samples one token from the masked logits, and undoes any
    banned phrase (``mode="rollback"``) that the new token completes."""

    def __init__(
        self,
        out: _Output,
        logits: _Logits,
        sample: _Sampler,
        matcher: _core.Matcher | None,
        bans: _RollbackBans | None,
        max_tokens: int,
    ):
        self.out = out
        self.logits = logits
        self.sample = sample
        self.matcher = matcher
        self.bans = bans
        self.max_tokens = max_tokens
        self.eos = set(out.vocab.eos_token_ids)
        self.bitmask = allocate_bitmask(1, logits.size)
        self.result = Generation()

    def run(self, grammar: Grammar | None) -> Generation:
        """Generates until EOS or ``max_tokens``; the result, ``grammar`` attached."""
        while len(self.out) < self.max_tokens and self.result.stop_reason != "eos":
            self._step()
        self._cut_phrase_at_end()
        self._commit(len(self.out))
        self.out.close_stream()
        result = self.result
        result.token_ids = self.out.ids
        result.text = self.out.text()
        result.accepting = result.stop_reason == "eos" or self.matcher is None or self.matcher.is_accepting()
        result.grammar = grammar
        result.rollbacks = self.bans.rollbacks if self.bans is not None else 0
        return result

    def _step(self) -> None:
        """Extends the output at its end: a forced run, one sampled token, or a step back
        where nothing can follow."""
        position = len(self.out)
        banned_here = self.bans.banned_at(position) if self.bans is not None else ()
        if self.matcher is not None:
            try:
                self.matcher.fill_bitmask(self.bitmask, 0)
            except DeadEndError as e:
                self._dead_end_back(position, e)
                return
            only = only_token(self.bitmask[0])
            if only is not None and only not in banned_here:
                self._take_forced_run(self.matcher, position)
                return
        self._sample_at(position, banned_here)

    def _take_forced_run(self, matcher: _core.Matcher, position: int) -> None:
        """Appends the tokens the grammar forces from ``position`` on, without asking the
        model: as many as ``max_tokens`` leaves room for, and an EOS that ends the run."""
        for tok in matcher.forced_tokens()[: self.max_tokens - position + 1]:
            if tok not in self.eos and len(self.out) >= self.max_tokens:
                break
            if not matcher.advance(tok):
                raise InternalError(f"forced token {tok} was rejected by the matcher")
            self.result.forced += tok not in self.eos
            if not self._append(tok) or self.result.stop_reason == "eos":
                break

    def _sample_at(self, position: int, banned_here: Collection[int]) -> None:
        """Samples the token at ``position`` from the model's logits, masked by the grammar
        and the rollback bans there, and appends it."""
        logits = self.logits.at(position, self.out.ids)
        if self.matcher is not None:
            # A fresh C-contiguous float32 row: straight to the Rust kernel.
            _core.apply_bitmask_inplace(logits, self.bitmask)
        for t in banned_here:
            logits[t] = -np.inf
        if not np.isfinite(logits).any():
            self._dead_end_back(position, GenerationError("every token is masked or banned"))
            return
        tok = self.sample(logits)
        if self.matcher is not None and not self.matcher.advance(tok):
            raise InternalError(f"sampled token {tok} that the mask allowed but the matcher rejected")
        self._append(tok)

    def _append(self, tok: int) -> bool:
        """Appends a token the matcher accepted; False if that made a banned phrase (rolled back)."""
        if tok in self.eos:
            return self._end()
        before = len(self.out.data)
        self.out.push(tok)
        if self.bans is not None:
            found = self.bans.find(self.out.data, before, at_end=False)
            if found is not None:
                self._rollback_for(self.bans, found)
                return False
        self._commit(self._stable())
        return True

    def _end(self) -> bool:
        """Ends the output at an accepted EOS; False if a whole-word phrase is complete at the
        end (the EOS and the phrase are rolled back instead)."""
        if self.bans is not None:
            found = self.bans.find(self.out.data, len(self.out.data), at_end=True)
            if found is not None:
                if self.matcher is not None:
                    self.matcher.rollback(1)  # the EOS
                self._rollback_for(self.bans, found)
                return False
        self.result.stop_reason = "eos"
        return True

    def _rollback_for(self, bans: _RollbackBans, found: tuple[int, str]) -> None:
        """Undoes the phrase at byte ``found[0]``: back to the token holding that byte, which
        is then banned at its position."""
        start, phrase = found
        j = self.out.token_at(start)
        if j < self.out.committed:
            raise GenerationError(f"banned phrase {phrase!r} starts in text already streamed")
        bans.ban(j, self.out.ids[j], phrase)
        self._pop_to(j)

    def _dead_end_back(self, position: int, reason: Exception) -> None:
        """Every token at ``position`` is masked or banned: bans the previous one instead
        (with rollback bans; else ``reason`` is raised)."""
        if self.bans is None:
            raise reason
        if position == 0 or position - 1 < self.out.committed:
            raise GenerationError(
                f"no token can follow at position {position}: banned phrases and the grammar leave no way forward"
            ) from reason
        self.bans.ban(position - 1, self.out.ids[position - 1], "(no way forward)")
        self._pop_to(position - 1)

    def _pop_to(self, n: int) -> None:
        """Rolls the output, the matcher and the kept logits back to the first ``n`` tokens."""
        undo = len(self.out) - n
        if self.matcher is not None and undo:
            self.matcher.rollback(undo)
        self.out.truncate(n)
        self.logits.forget_after(n)

    def _stable(self) -> int:
        """Tokens that no rollback can reach any more: all of them without rollback bans,
        else those ending a phrase window or more before the end."""
        if self.bans is None:
            return len(self.out)
        return self.out.ending_by(len(self.out.data) - self.bans.window)

    def _commit(self, upto: int) -> None:
        """Streams the tokens before ``upto``, which are final: their kept logits go."""
        self.logits.forget(range(self.out.committed, upto))
        self.out.stream(upto)

    def _cut_phrase_at_end(self) -> None:
        """Stopped by ``max_tokens``: a whole-word phrase right at the end is complete too
        (nothing follows), so the output is cut before it."""
        if self.bans is None or self.result.stop_reason != "max_tokens":
            return
        data = self.out.data
        found = self.bans.find(data, max(0, len(data) - self.bans.window), at_end=True)
        if found is not None:
            # Cut rather than generate past max_tokens; streamed tokens stay.
            self._pop_to(max(self.out.token_at(found[0]), self.out.committed))


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
    prompt_ids = _checked_prompt(lm, vocab, prompt, given_ids)
    matcher, bans = _constraints(grammar, vocab, max_rollbacks)
    sampler = _Sampler(np.random.default_rng(seed), temperature, top_k, top_p)
    logits = _Logits(lm, prompt_ids, vocab.size, keep=bans is not None)
    # Special tokens the grammar writes as its markers (`<think>`, `<tool_call>`) are part of
    # the text: the output reads them as `compile` does, so `text` is what the grammar matched.
    markers = grammar.marker_texts if grammar is not None else ()
    out = _Output(vocab.with_special_text(markers) if markers else vocab, on_token, on_text)
    return _SamplingLoop(out, logits, sampler, matcher, bans, max_tokens).run(grammar)
