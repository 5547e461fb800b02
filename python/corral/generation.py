"""A minimal guided generation loop over any scoring model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .compiler import compile as compile_grammar
from .grammar import Grammar
from .errors import InternalError
from .masking import allocate_bitmask, apply_bitmask


@dataclass
class GenerationResult:
    """What :func:`generate_tokens` produced."""

    token_ids: list[int] = field(default_factory=list)
    #: EOS was accepted (the output is complete under the constraint).
    finished: bool = False
    #: The output so far is a complete match (EOS would be accepted).
    accepting: bool = False
    #: Tokens appended through ``forced_tokens()`` without sampling.
    forced: int = 0


def _sample(logits: np.ndarray, rng: np.random.Generator, temperature: float) -> int:
    if temperature <= 0:
        return int(np.argmax(logits))
    z = logits.astype(np.float64) / temperature
    z -= z.max()
    p = np.exp(z)
    p /= p.sum()
    return int(rng.choice(len(p), p=p))


def generate_tokens(
    model,
    prompt_ids: list[int],
    grammar: Optional[Grammar],
    *,
    max_tokens: int = 64,
    temperature: float = 1.0,
    seed: Optional[int] = None,
    on_token: Optional[Callable[[int], None]] = None,
) -> GenerationResult:
    """Generates up to ``max_tokens`` tokens from ``model`` (an object with ``vocab`` and
    ``logits(token_ids) -> array``), constrained by ``grammar`` (None: unconstrained).

    Stops when EOS is produced (only where the grammar may end) or the matcher is finished.
    """
    vocab = model.vocab
    rng = np.random.default_rng(seed)
    result = GenerationResult()
    ids = list(prompt_ids)
    eos = set(vocab.eos_token_ids)
    matcher = compile_grammar(grammar, vocab).matcher() if grammar is not None else None
    bitmask = allocate_bitmask(1, vocab.size)
    while len(result.token_ids) < max_tokens:
        if matcher is not None:
            forced = matcher.forced_tokens()
            if forced:
                for tok in forced[: max_tokens - len(result.token_ids)]:
                    matcher.advance(tok)
                    if tok in eos:
                        result.finished = True
                        break
                    ids.append(tok)
                    result.token_ids.append(tok)
                    result.forced += 1
                    if on_token:
                        on_token(tok)
                if result.finished:
                    break
                continue
        logits = model.logits(ids)
        if matcher is not None:
            matcher.fill_bitmask(bitmask, 0)
            apply_bitmask(logits, bitmask[0])
        tok = _sample(logits, rng, temperature)
        if matcher is not None and not matcher.advance(tok):
            raise InternalError(f"sampled token {tok} that the mask allowed but the matcher rejected")
        if tok in eos:
            result.finished = True
            break
        ids.append(tok)
        result.token_ids.append(tok)
        if on_token:
            on_token(tok)
    result.accepting = result.finished or (matcher is not None and matcher.is_accepting()) or matcher is None
    return result
