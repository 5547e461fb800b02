"""Any ``transformers`` causal LM behind corral's generation loop (torch is imported only
by this module, when it is used)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import GenerationError
from ..generation import _about
from .numpy_gpt2 import reusable_prefix


def cache_argument(model) -> str:
    """The name under which ``model``'s forward pass takes and returns its key/value cache:
    ``"cache"`` (newer transformers, where ``past_key_values`` is deprecated) or
    ``"past_key_values"``. Read from the forward signature; a forward that names neither
    (only ``**kwargs``) gets the name transformers' own causal-LM output uses."""
    parameters: Mapping[str, object]
    try:
        parameters = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        parameters = {}
    for name in ("cache", "past_key_values"):
        if name in parameters:
            return name
    try:
        from transformers.modeling_outputs import CausalLMOutputWithPast

        fields = {f.name for f in dataclasses.fields(CausalLMOutputWithPast)}
    except (ImportError, TypeError):
        fields = set()
    return "cache" if "cache" in fields and "past_key_values" not in fields else "past_key_values"


class TransformersModel:
    """A ``transformers`` causal LM and its tokenizer, with the generation protocol of
    :func:`corral.generate` (``vocab``, ``encode``, ``decode``, ``logits(ids)``).

    The key/value cache is kept across calls and truncated to the prefix a call shares with
    the previous one, so a rollback costs a cache crop, not a new forward pass over the text.
    """

    def __init__(self, model: Any, tokenizer: Any) -> None:
        import torch

        from ..compiler import _describe_value
        from ..vocabulary import Vocabulary

        if not isinstance(model, torch.nn.Module) or not callable(getattr(model, "get_output_embeddings", None)):
            raise TypeError(f"TransformersModel expects a transformers causal LM, got {_describe_value(model)}")
        if tokenizer is None or isinstance(tokenizer, (str, bytes)):
            raise TypeError(
                f"TransformersModel expects the model's transformers tokenizer, got {_describe_value(tokenizer)}"
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        width = model.get_output_embeddings().weight.shape[0] if model.get_output_embeddings() is not None else None
        self.vocab = Vocabulary.from_huggingface(tokenizer, size=width)
        self.device = next(model.parameters()).device
        self._torch = torch
        self._cache_argument = cache_argument(model)
        self._cache = None
        self._read: list[int] = []
        self.max_positions = getattr(model.config, "max_position_embeddings", None) or getattr(
            model.config, "n_positions", None
        )

    @classmethod
    def from_pretrained(cls, path, **kwargs) -> TransformersModel:
        """Loads a model directory with ``AutoModelForCausalLM`` and ``AutoTokenizer``."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        return cls(AutoModelForCausalLM.from_pretrained(path, **kwargs), AutoTokenizer.from_pretrained(path))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens added)."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``, from the tokens' bytes."""
        return self.vocab.decode_bytes(ids).decode("utf-8", errors="replace")

    def logits(self, ids: Sequence[int]):
        """Logits (a 1-D torch tensor on the model's device) of the token after ``ids``."""
        torch = self._torch
        seq = list(ids)
        if not seq:
            bos = self.tokenizer.bos_token_id
            if bos is None:
                raise GenerationError("the prompt is empty and the tokenizer has no BOS token to start from")
            seq = [bos]
        if self.max_positions is not None and len(seq) > self.max_positions:
            raise _about(
                GenerationError(
                    f"{len(seq)} tokens do not fit the model's {self.max_positions} positions: "
                    "shorten the prompt or lower max_tokens"
                ),
                "max_tokens",
            )
        shared = reusable_prefix(self._read, seq)
        if self._cache is None or shared == 0:
            self._cache, shared = None, 0
        else:
            remove = self._cache.get_seq_length() - shared
            if remove > 0:
                # A negative count removes that many positions, in old and new transformers.
                self._cache.crop(-remove)
        new = torch.tensor([seq[shared:]], dtype=torch.long, device=self.device)
        name = self._cache_argument
        with torch.no_grad():
            out = self.model(input_ids=new, use_cache=True, **{name: self._cache})
        # Read under the same name: the old one is a deprecated alias on newer outputs.
        self._cache = getattr(out, name)
        self._read = seq
        return out.logits[0, -1]
