"""Any ``transformers`` causal LM behind corral's generation loop (torch is imported only
by this module, when it is used)."""

from __future__ import annotations

from typing import List, Sequence

from ..errors import GenerationError
from .numpy_gpt2 import reusable_prefix


class TransformersModel:
    """A ``transformers`` causal LM and its tokenizer, with the generation protocol of
    :func:`corral.generate` (``vocab``, ``encode``, ``decode``, ``logits(ids)``).

    The key/value cache is kept across calls and truncated to the prefix a call shares with
    the previous one, so a rollback costs a cache crop, not a new forward pass over the text.
    """

    def __init__(self, model, tokenizer):
        import torch

        from ..vocabulary import Vocabulary

        self.model = model.eval()
        self.tokenizer = tokenizer
        width = model.get_output_embeddings().weight.shape[0] if model.get_output_embeddings() is not None else None
        self.vocab = Vocabulary.from_huggingface(tokenizer, size=width)
        self.device = next(model.parameters()).device
        self._torch = torch
        self._cache = None
        self._read: List[int] = []
        self.max_positions = getattr(model.config, "max_position_embeddings", None) or getattr(
            model.config, "n_positions", None
        )

    @classmethod
    def from_pretrained(cls, path, **kwargs) -> "TransformersModel":
        """Loads a model directory with ``AutoModelForCausalLM`` and ``AutoTokenizer``."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        return cls(AutoModelForCausalLM.from_pretrained(path, **kwargs), AutoTokenizer.from_pretrained(path))

    def encode(self, text: str) -> List[int]:
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
            raise GenerationError(
                f"{len(seq)} tokens do not fit the model's {self.max_positions} positions: "
                "shorten the prompt or lower max_tokens"
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
        with torch.no_grad():
            out = self.model(input_ids=new, past_key_values=self._cache, use_cache=True)
        self._cache = out.past_key_values
        self._read = seq
        return out.logits[0, -1]
