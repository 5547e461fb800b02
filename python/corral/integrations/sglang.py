"""corral as an SGLang grammar backend: ``--grammar-backend corral``.

Installing corral registers the backend through SGLang's general plugin group
(``sglang.srt.plugins``; SGLang runs :func:`register` in every process it starts), so::

    pip install "corral[sglang]"
    python -m sglang.launch_server --model-path ... --grammar-backend corral

serves JSON Schema, regex, EBNF (GBNF as SGLang users write it) and structural-tag requests
with corral's masks, with no change to SGLang. Pieces:

* :class:`CorralGrammarBackend`: SGLang's ``BaseGrammarBackend``. Compiles off the
  scheduler thread on SGLang's executor, through ``corral.compile``'s cache (one compiled
  grammar per distinct request key, shared by every request that uses it). A request
  corral refuses becomes SGLang's ``InvalidGrammarObject`` carrying corral's message, which
  SGLang returns as an HTTP 400.
* :class:`CorralGrammar`: SGLang's ``BaseGrammarObject``, one per request: a corral
  matcher, and the reasoning phase of a reasoning model (SGLang does not wrap registered
  backends in its reasoning wrapper, so the backend follows the reasoning end marker
  itself: free text until the marker's tokens, then the constraint). With
  ``--enable-strict-thinking`` it also applies SGLang's strict reasoning: the parser's
  excluded tokens are refused while reasoning, and past ``SGLANG_MAX_THINK_TOKENS``
  reasoning tokens only the end marker's next token is allowed (also for requests without
  a constraint, through ``init_strict_reasoning_grammar``).

The batch's masks are filled by :meth:`CorralGrammar.fill_vocab_mask_batched` in one native
call (GIL released, rows in parallel). See docs/integrations.md.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import Any

import torch
from sglang.srt.constrained.base_grammar_backend import (
    BaseGrammarBackend,
    BaseGrammarObject,
    GrammarStats,
    InvalidGrammarObject,
)

import corral

from ..errors import CorralError, DeadEndError
from ..grammar import Grammar
from ..vocabulary import Vocabulary
from . import _end_row

__all__ = ["BACKEND_NAME", "CorralGrammar", "CorralGrammarBackend", "ThinkingRule", "create_backend", "register"]

logger = logging.getLogger(__name__)

#: The name given to ``--grammar-backend``.
BACKEND_NAME = "corral"


@dataclasses.dataclass(frozen=True)
class ThinkingRule:
    """How a request's reasoning phase is constrained: it ends with ``end_ids`` (the
    reasoning parser's end marker); with SGLang's strict thinking, ``excluded_ids`` are
    refused while reasoning and, past ``max_tokens`` reasoning tokens (``-1``: no bound),
    only the end marker's next token is allowed."""

    end_ids: tuple[int, ...] = ()
    excluded_ids: tuple[int, ...] = ()
    max_tokens: int = -1


class CorralGrammar(BaseGrammarObject):
    """One request's constraint: a corral matcher behind SGLang's grammar-object API.

    With reasoning on (:meth:`maybe_init_reasoning`), tokens are free until the reasoning
    end marker (``think_end_ids``, e.g. the ids of ``</think>``) has been written, within
    ``thinking``'s strict rules if any; the constraint applies from the token after it.
    ``compiled`` None: no constraint (a request SGLang gives a grammar object only for
    strict reasoning).
    """

    def __init__(
        self,
        compiled: corral.CompiledGrammar | None,
        vocab: Vocabulary,
        think_end_ids: Sequence[int] = (),
        grammar_stats: GrammarStats | None = None,
        key_string: str | None = None,
        thinking: ThinkingRule | None = None,
    ) -> None:
        super().__init__()
        self.compiled = compiled
        self.vocab = vocab
        self.matcher = compiled.matcher() if compiled is not None else None
        self.think_end_ids = tuple(think_end_ids)
        self.thinking_rule = thinking if thinking is not None else ThinkingRule(self.think_end_ids)
        self.grammar_stats = grammar_stats
        self.key_string = key_string
        self._reasoning = False
        # The tokens of the reasoning phase, and how much of the end marker ends each prefix.
        self._think: list[int] = []
        self._matched: list[int] = []
        # Without a constraint: how many tokens came after the reasoning (for rollback).
        self._free_after = 0

    # -- reasoning ----------------------------------------------------------------------

    def maybe_init_reasoning(self, reasoning: bool) -> None:
        """Starts the request in its reasoning phase when ``reasoning`` and an end marker
        is known (SGLang calls this with the request's ``require_reasoning``)."""
        self._reasoning = bool(reasoning) and bool(self.think_end_ids)
        self._think.clear()
        self._matched.clear()

    @property
    def thinking(self) -> bool:
        """Is the request still in its reasoning phase (tokens unconstrained)?"""
        return self._reasoning and not (self._matched and self._matched[-1] == len(self.think_end_ids))

    def _fill_thinking(self, vocab_mask: torch.Tensor, row: int) -> None:
        """A reasoning row: every token, less the strict rule's excluded ones; past its
        budget, only the end marker's next token."""
        rule = self.thinking_rule
        if 0 <= rule.max_tokens <= len(self._think):
            vocab_mask[row].zero_()
            matched = self._matched[-1] if self._matched else 0
            _set_bit(vocab_mask, row, self.think_end_ids[matched], True)
            return
        vocab_mask[row].fill_(-1)
        for t in rule.excluded_ids:
            _set_bit(vocab_mask, row, t, False)

    def _end_matched(self) -> int:
        """How many tokens of the end marker the reasoning so far ends with."""
        end, seen = self.think_end_ids, self._think
        for k in range(min(len(end), len(seen)), 0, -1):
            if tuple(seen[-k:]) == end[:k]:
                return k
        return 0

    # -- the grammar-object API -----------------------------------------------------------

    def accept_token(self, token: int) -> None:
        """Consumes ``token``; raises ValueError if the constraint refuses it (SGLang then
        aborts the request), as SGLang's own backends do."""
        self.current_token = token
        if self.thinking:
            self._think.append(int(token))
            self._matched.append(self._end_matched())
            return
        if self.matcher is None:
            self._free_after += 1
            return
        if self.matcher.is_finished():
            return
        if not self.matcher.advance(token):
            raise ValueError(
                f"token {token} does not continue the constraint after {self.matcher.num_tokens} tokens "
                f"(grammar: {_short(self.key_string)})"
            )

    def rollback(self, k: int) -> None:
        """Undoes the last ``k`` accepted tokens (constrained ones first, then reasoning)."""
        after = self.matcher.num_tokens if self.matcher is not None else self._free_after
        constrained = min(k, after)
        if constrained and self.matcher is not None:
            self.matcher.rollback(constrained)
        elif constrained:
            self._free_after -= constrained
        rest = k - constrained
        if rest > len(self._think):
            raise ValueError(f"cannot roll back {k} tokens: only {after + len(self._think)} were accepted")
        if rest:
            del self._think[-rest:]
            del self._matched[-rest:]

    def is_terminated(self) -> bool:
        """Has the constraint accepted EOS?"""
        return not self.thinking and self.matcher is not None and self.matcher.is_finished()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
        return allocate_mask(vocab_size, batch_size)

    def fill_vocab_mask(self, vocab_mask: torch.Tensor, idx: int) -> None:
        """Writes this request's mask into row ``idx`` (all tokens while reasoning, within
        the strict rules if any)."""
        if self.thinking:
            self._fill_thinking(vocab_mask, idx)
        elif self.matcher is None:
            vocab_mask[idx].fill_(-1)
        else:
            _fill_row(self, vocab_mask, idx)

    @staticmethod
    def fill_vocab_mask_batched(entries: Sequence[Any], vocab_mask: torch.Tensor) -> None:
        """Fills the listed rows (SGLang's ``GrammarRow(row, grammar)``) in one native call
        with the GIL released; rows not listed are left as they are."""
        matchers, rows = [], []
        for entry in entries:
            grammar = entry.grammar
            if not isinstance(grammar, CorralGrammar) or grammar.thinking or grammar.matcher is None:
                grammar.fill_vocab_mask(vocab_mask, entry.row)
            else:
                matchers.append(grammar)
                rows.append(entry.row)
        if not matchers:
            return
        try:
            corral.fill_bitmasks([g.matcher for g in matchers if g.matcher is not None], vocab_mask, rows)
        except DeadEndError:
            # One row has no token left: fill the others, and end that one (see _fill_row).
            for grammar, row in zip(matchers, rows, strict=True):
                _fill_row(grammar, vocab_mask, row)

    @staticmethod
    def reset_vocab_mask(vocab_mask: torch.Tensor) -> None:
        vocab_mask.fill_(-1)

    @staticmethod
    def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
        corral.apply_bitmask(logits, vocab_mask)

    def copy(self) -> CorralGrammar:
        """A fresh object for another request: same compiled grammar, at its start."""
        stats = self.grammar_stats
        if stats is not None:
            stats = dataclasses.replace(stats, is_cache_hit=True, tree_traversal_time=[])
        return CorralGrammar(self.compiled, self.vocab, self.think_end_ids, stats, self.key_string, self.thinking_rule)

    # -- jump-forward ---------------------------------------------------------------------

    def try_jump_forward(self, tokenizer: Any) -> tuple[list[int], str] | None:
        """The tokens the constraint forces from here (EOS left out) and their text, or
        None. The text stops before a character the forced tokens leave incomplete."""
        if self.thinking or self.matcher is None or self.matcher.is_finished():
            return None
        vocab = self.vocab
        eos = set(vocab.eos_token_ids)
        forced = [t for t in self.matcher.forced_tokens() if t not in eos]
        while forced:
            try:
                return forced, vocab.decode_bytes(forced).decode("utf-8")
            except UnicodeDecodeError:
                forced.pop()
        return None

    def jump_forward_str_state(self, helper: tuple[list[int], str]) -> tuple[str, int]:
        return helper[1], -1

    def jump_and_retokenize(self, old_output_ids: list[int], new_output_ids: list[int], next_state: int) -> None:
        """Follows SGLang's retokenization after a jump: rolls back to the tokens both
        spellings share and accepts the new ones."""
        k = 0
        for old, new in zip(old_output_ids, new_output_ids, strict=False):
            if old != new:
                break
            k += 1
        if k < len(old_output_ids):
            self.rollback(len(old_output_ids) - k)
        for token in new_output_ids[k:]:
            self.accept_token(token)

    def __repr__(self) -> str:
        tokens = self.matcher.num_tokens if self.matcher is not None else self._free_after
        return f"CorralGrammar({_short(self.key_string)!r}, tokens={tokens}, thinking={self.thinking})"


def _set_bit(vocab_mask: torch.Tensor, row: int, token: int, on: bool) -> None:
    """Sets or clears ``token``'s bit in an int32 bitmask row."""
    bit = 1 << (token % 32)
    signed = bit - (1 << 32) if bit >= 1 << 31 else bit  # the word is a signed int32
    word = vocab_mask[row, token // 32]
    vocab_mask[row, token // 32] = (word | signed) if on else (word & ~signed)


def _fill_row(grammar: CorralGrammar, vocab_mask: torch.Tensor, row: int) -> None:
    """One row; a dead end (no token continues the output) allows only EOS, so that the
    request ends instead of the batch failing."""
    assert grammar.matcher is not None
    try:
        grammar.matcher.fill_bitmask(vocab_mask, row)
    except DeadEndError as e:
        logger.error("corral: %s (grammar: %s); ending the request", e, _short(grammar.key_string))
        vocab_mask[row] = torch.from_numpy(_end_row(grammar.vocab))


def allocate_mask(vocab_size: int, batch_size: int) -> torch.Tensor:
    """An int32 bitmask ``[batch_size, ceil(vocab_size / 32)]``, every token allowed, on the
    CPU (pinned when CUDA is available, so the copy to the GPU does not block)."""
    pin = torch.cuda.is_available()
    return torch.full((batch_size, (vocab_size + 31) // 32), -1, dtype=torch.int32, pin_memory=pin)


def _short(text: str | None, limit: int = 120) -> str:
    if text is None:
        return "?"
    return text if len(text) <= limit else text[:limit] + "..."


def legacy_structural_tag(spec: dict[str, Any]) -> dict[str, Any]:
    """SGLang's (and OpenAI-style) legacy structural tag ``{"structures": [{"begin",
    "schema", "end"}], "triggers": [...]}`` in the current format: free text in which each
    trigger starts one of the tags whose ``begin`` it starts."""
    tags = [
        {
            "type": "tag",
            "begin": s["begin"],
            "content": {"type": "json_schema", "json_schema": s.get("schema") if s.get("schema") is not None else {}},
            "end": s["end"],
        }
        for s in spec["structures"]
    ]
    fmt: dict[str, Any] = {"type": "triggered_tags", "triggers": list(spec["triggers"]), "tags": tags}
    if spec.get("at_least_one"):
        fmt["at_least_one"] = True
    return {"type": "structural_tag", "format": fmt}


class CorralGrammarBackend(BaseGrammarBackend):
    """SGLang's grammar backend, compiling with corral.

    ``whitespace``/``max_whitespace`` apply to JSON Schema requests (SGLang's
    ``--constrained-json-disable-any-whitespace`` gives ``"compact"``,
    ``--constrained-json-max-whitespace-cnt`` the bound). ``think_end_ids``: the token ids
    of the reasoning end marker of the model's reasoning parser (empty: no reasoning phase).
    ``strict_thinking`` (SGLang's ``--enable-strict-thinking``): reasoning refuses
    ``think_excluded_ids`` and ends after ``max_think_tokens`` tokens (``-1``: no bound),
    and SGLang asks for a grammar object for requests without a constraint too.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        *,
        whitespace: str = "flexible",
        max_whitespace: int = 16,
        think_end_ids: Sequence[int] = (),
        limits: corral.Limits | None = None,
        strict_thinking: bool = False,
        think_excluded_ids: Sequence[int] = (),
        max_think_tokens: int = -1,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.whitespace = whitespace
        self.max_whitespace = max_whitespace
        self.think_end_ids = tuple(think_end_ids)
        self.limits = limits
        if strict_thinking and not self.think_end_ids:
            raise ValueError("strict thinking needs the reasoning end marker (SGLang's --reasoning-parser)")
        # SGLang's grammar manager reads `enable_strict_thinking` (from this field).
        self._enable_strict_thinking = strict_thinking
        if strict_thinking:
            self.thinking_rule = ThinkingRule(self.think_end_ids, tuple(int(t) for t in think_excluded_ids), int(max_think_tokens))
        else:
            self.thinking_rule = ThinkingRule(self.think_end_ids)

    # SGLang asks the grammar objects for the mask buffer; callers that ask the backend
    # (as SGLang's reasoning wrapper does) get the same.
    @staticmethod
    def allocate_vocab_mask(vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
        return allocate_mask(vocab_size, batch_size)

    move_vocab_mask = staticmethod(CorralGrammar.move_vocab_mask)
    apply_vocab_mask = staticmethod(CorralGrammar.apply_vocab_mask)

    def _init_value_dispatch(self, key: tuple[str, str], require_reasoning: bool) -> BaseGrammarObject:
        grammar = super()._init_value_dispatch(key, require_reasoning)
        grammar.maybe_init_reasoning(require_reasoning)
        return grammar

    def init_strict_reasoning_grammar(self, reasoning: bool) -> BaseGrammarObject | None:
        """With strict thinking, the grammar object of a request without a constraint: the
        strict rules while it reasons, nothing after."""
        if not self._enable_strict_thinking:
            return None
        grammar = CorralGrammar(None, self.vocab, self.think_end_ids, thinking=self.thinking_rule)
        grammar.maybe_init_reasoning(reasoning)
        return grammar

    def _compile(self, kind: str, key_string: str, build: Any) -> BaseGrammarObject:
        try:
            compiled = corral.compile(build(), self.vocab)
            # SGLang compiles on its grammar workers, off the scheduler's step: the first
            # masks into each terminal are built here rather than on a decoding step.
            compiled.warm_up()
        except (CorralError, ValueError, TypeError) as e:
            logger.warning("corral refused a %s request: %s", kind, e)
            return InvalidGrammarObject(f"{type(e).__name__}: {e}")
        return CorralGrammar(compiled, self.vocab, self.think_end_ids, GrammarStats(dispatch_type=kind), key_string, self.thinking_rule)

    def dispatch_json(self, key_string: str) -> BaseGrammarObject:
        """A JSON Schema (text); ``$$ANY$$`` is any JSON value."""

        def build() -> Grammar:
            schema = {} if key_string == "$$ANY$$" else json.loads(key_string)
            return Grammar.json_schema(
                schema, whitespace=self.whitespace, max_whitespace=self.max_whitespace, limits=self.limits
            )

        return self._compile("json", key_string, build)

    def dispatch_regex(self, key_string: str) -> BaseGrammarObject:
        return self._compile("regex", key_string, lambda: Grammar.regex(key_string, limits=self.limits))

    def dispatch_ebnf(self, key_string: str) -> BaseGrammarObject:
        """GBNF / XGrammar's EBNF, start rule ``root``."""
        return self._compile("ebnf", key_string, lambda: Grammar.gbnf(key_string, limits=self.limits))

    def dispatch_structural_tag(self, key_string: str) -> BaseGrammarObject:
        """XGrammar's structural-tag JSON, current or legacy (``structures``/``triggers``)."""

        def build() -> Grammar:
            spec = json.loads(key_string)
            if isinstance(spec, dict) and "structures" in spec and "format" not in spec:
                spec = legacy_structural_tag(spec)
            return Grammar.structural_tag(spec, limits=self.limits)

        return self._compile("structural_tag", key_string, build)


def _thinking(server_args: Any, tokenizer: Any) -> ThinkingRule:
    """The reasoning rule for the server's ``--reasoning-parser`` (none: no reasoning
    phase) and ``--enable-strict-thinking``, read as SGLang's reasoning wrapper reads them:
    the excluded tokens are every id of each of the parser's excluded strings, the budget
    is ``SGLANG_MAX_THINK_TOKENS``."""
    parser_name = getattr(server_args, "reasoning_parser", None)
    if not parser_name:
        return ThinkingRule()
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    parser = ReasoningParser(model_type=parser_name, stream_reasoning=False, tokenizer=tokenizer)
    ids = parser.detector.get_think_end_token_ids(tokenizer)
    if not ids:
        raise ValueError(f"the reasoning end marker {parser.detector.think_end_token!r} has no token ids")
    if not getattr(server_args, "enable_strict_thinking", False):
        return ThinkingRule(tuple(ids))
    from sglang.srt.environ import envs

    excluded: list[int] = []
    for text in parser.detector.think_excluded_tokens or []:
        text_ids = tokenizer.encode(text, add_special_tokens=False)
        if not text_ids:
            raise ValueError(f"the reasoning parser's excluded token {text!r} has no token ids")
        excluded += text_ids
    return ThinkingRule(tuple(ids), tuple(excluded), int(envs.SGLANG_MAX_THINK_TOKENS.get()))


def create_backend(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Any = None) -> CorralGrammarBackend:
    """The factory SGLang calls (``register_grammar_backend``'s ``init_func``)."""
    eos = sorted(int(t) for t in eos_token_ids) if eos_token_ids else None
    vocab = Vocabulary.from_huggingface(tokenizer, eos_token_ids=eos, size=vocab_size)
    compact = bool(getattr(server_args, "constrained_json_disable_any_whitespace", False))
    max_ws = getattr(server_args, "constrained_json_max_whitespace_cnt", None)
    rule = _thinking(server_args, tokenizer)
    return CorralGrammarBackend(
        vocab,
        whitespace="compact" if compact else "flexible",
        max_whitespace=16 if max_ws is None else int(max_ws),
        think_end_ids=rule.end_ids,
        strict_thinking=bool(rule.end_ids) and bool(getattr(server_args, "enable_strict_thinking", False)),
        think_excluded_ids=rule.excluded_ids,
        max_think_tokens=rule.max_tokens,
    )


def register() -> None:
    """Registers the backend under ``corral`` and adds it to ``--grammar-backend``'s
    choices. SGLang runs this from the ``sglang.srt.plugins`` entry point; calling it again
    changes nothing."""
    from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES, add_grammar_backend_choices
    from sglang.srt.constrained.base_grammar_backend import register_grammar_backend

    register_grammar_backend(BACKEND_NAME, create_backend)
    if BACKEND_NAME not in GRAMMAR_BACKEND_CHOICES:
        add_grammar_backend_choices([BACKEND_NAME])
