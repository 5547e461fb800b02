"""Bitmask buffers and applying them to logits (numpy or torch)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from numpy.typing import NDArray

from . import _core
from .errors import MatcherError

if TYPE_CHECKING:
    from ._core import _Bitmask

# torch is optional and read as untyped: its tensors are Any here.

@overload
def allocate_bitmask(batch_size: int, vocab_size: int, *, backend: Literal["numpy"] = "numpy") -> NDArray[np.int32]: ...
@overload
def allocate_bitmask(batch_size: int, vocab_size: int, *, backend: str) -> Any: ...

def allocate_bitmask(batch_size: int, vocab_size: int, *, backend: str = "numpy") -> Any:
    """An int32 bitmask ``[batch_size, ceil(vocab_size / 32)]``, all tokens allowed.

    Bit ``t % 32`` of word ``t // 32`` is token ``t``. ``backend="torch"`` returns a CPU
    torch tensor (pin it or copy it to the GPU as you like).
    """
    if batch_size < 1 or vocab_size < 1:
        raise MatcherError(f"batch_size and vocab_size must be positive, got {batch_size}, {vocab_size}")
    shape = (batch_size, (vocab_size + 31) // 32)
    if backend == "numpy":
        return np.full(shape, -1, dtype=np.int32)
    if backend == "torch":
        import torch

        return torch.full(shape, -1, dtype=torch.int32)
    raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")


def fill_bitmasks(matchers: Sequence[_core.Matcher], bitmask: _Bitmask, rows: Sequence[int] | None = None) -> None:
    """Fills ``bitmask[rows[i]]`` from ``matchers[i]`` (row i by default) in one call, with
    the GIL released and uncached rows computed in parallel. Matchers of combined grammars
    (``g1 & g2``) are native matchers too and go in the same call."""
    _core.fill_bitmasks(list(matchers), bitmask, None if rows is None else list(rows))


def fill_draft_bitmasks(
    matchers: Sequence[_core.Matcher],
    drafts: Sequence[Sequence[int]],
    bitmask: _Bitmask,
    rows: Sequence[int] | None = None,
) -> list[int]:
    """Speculative decoding for a batch, in one call: for each ``matchers[i]``, the masks of
    every position of ``drafts[i]`` go into ``len(drafts[i]) + 1`` consecutive rows (from
    ``rows[i]``; by default the blocks follow one another from row 0, the layout of a
    verification step), row ``j`` of a block being the mask after ``drafts[i][:j]``. Returns
    how many tokens of each draft the constraint accepts; rows after a draft's first refused
    token are left as they were. Every matcher is left where it was (advance it by the
    tokens the sampler keeps). The GIL is released and the matchers run in parallel."""
    return _core.fill_draft_bitmasks(list(matchers), [list(d) for d in drafts], bitmask, None if rows is None else list(rows))


def only_token(row: Any) -> int | None:
    """The token id if exactly one bit of the int32 mask row is set, else None."""
    row = np.asarray(row)
    if np.count_nonzero(row) != 1:  # the common case, decided without allocating
        return None
    nonzero = np.flatnonzero(row)
    word = int(row[nonzero[0]]) & 0xFFFFFFFF
    if word & (word - 1):
        return None
    return int(nonzero[0]) * 32 + word.bit_length() - 1


def _is_torch(x: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def apply_bitmask(logits: Any, bitmask: Any) -> Any:
    """Sets ``logits[..., t] = -inf`` wherever token ``t``'s bit is clear; returns ``logits``.

    ``logits`` is ``[vocab]`` or ``[batch, vocab]``, a numpy array or a torch tensor (CPU or
    GPU; the bitmask is moved to the logits' device). Modified in place. Ids at or past
    ``32 * bitmask.shape[-1]`` are masked.
    """
    if _is_torch(logits):
        return _apply_torch(logits, bitmask)
    if not isinstance(logits, np.ndarray):
        raise TypeError(f"logits must be a numpy array or a torch tensor, got {type(logits).__name__}")
    mask = bitmask.numpy() if _is_torch(bitmask) else np.asarray(bitmask)
    if mask.dtype != np.int32:
        raise MatcherError(f"bitmask must be int32, got {mask.dtype}")
    mask2 = mask.reshape(1, -1) if mask.ndim == 1 else mask
    rows = 1 if logits.ndim == 1 else logits.shape[0]
    if mask2.shape[0] != rows:
        raise MatcherError(f"logits have {rows} rows but the bitmask has {mask2.shape[0]}")
    if logits.dtype in (np.float32, np.float64) and logits.flags.c_contiguous and logits.flags.writeable:
        _core.apply_bitmask_inplace(logits, np.ascontiguousarray(mask2))
        return logits
    width = logits.shape[-1]
    allowed = np.unpackbits(np.ascontiguousarray(mask2).view(np.uint8), axis=-1, bitorder="little").astype(bool)
    if allowed.shape[-1] < width:
        allowed = np.pad(allowed, ((0, 0), (0, width - allowed.shape[-1])))
    allowed = allowed[:, :width]
    logits[~(allowed[0] if logits.ndim == 1 else allowed)] = -np.inf
    return logits


def _apply_torch(logits: Any, bitmask: Any) -> Any:
    import torch

    mask = bitmask if _is_torch(bitmask) else torch.from_numpy(np.asarray(bitmask))
    if mask.dtype != torch.int32:
        raise MatcherError(f"bitmask must be int32, got {mask.dtype}")
    if (
        logits.device.type == "cpu"
        and mask.device.type == "cpu"
        and logits.dtype in (torch.float32, torch.float64)
        and not logits.requires_grad
        and logits.is_contiguous()
    ):
        # CPU logits share memory with numpy: the native loop (GIL released, rows checked
        # there) instead of unpacking every bit into a [rows, vocab] tensor (~0.6 ms a row
        # at 129k tokens). This runs at every decode step: no other torch call.
        _core.apply_bitmask_inplace(logits.numpy(), (mask if mask.is_contiguous() else mask.contiguous()).numpy())
        return logits
    mask = mask.to(logits.device, non_blocking=True)
    if mask.dim() == 1:
        mask = mask.unsqueeze(0)
    rows = 1 if logits.dim() == 1 else logits.shape[0]
    if mask.shape[0] != rows:
        raise MatcherError(f"logits have {rows} rows but the bitmask has {mask.shape[0]}")
    width = logits.shape[-1]
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    allowed = ((mask.unsqueeze(-1) >> shifts) & 1).bool().reshape(mask.shape[0], -1)
    if allowed.shape[-1] < width:
        allowed = torch.nn.functional.pad(allowed, (0, width - allowed.shape[-1]))
    allowed = allowed[:, :width]
    logits.masked_fill_(~(allowed[0] if logits.dim() == 1 else allowed), float("-inf"))
    return logits
