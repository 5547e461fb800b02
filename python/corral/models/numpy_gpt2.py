"""corral's built-in model: a small GPT-2 trained on tinyshakespeare, run in numpy.

The weights ship in the package as a Hugging Face model directory
(:func:`builtin_model_path`: ``config.json``, ``model.safetensors``, ``tokenizer.json``),
so ``transformers`` can load the same files as a GPT-2. :class:`NumpyGPT2` runs any GPT-2
directory of that layout with numpy alone, keeping a key/value cache so that each new
token costs one position, and so that rolling back is a truncation.
``tools/train_builtin_model.py`` trains it; ``training.json`` beside the weights records
the settings and the losses reached.
"""

from __future__ import annotations

import json
import math
import pathlib
import re
import struct
from collections.abc import Sequence

import numpy as np

from .._adapters import bytes_to_unicode

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def builtin_model_path() -> pathlib.Path:
    """The directory of the built-in model (loadable with ``transformers``'
    ``AutoModelForCausalLM.from_pretrained`` and ``AutoTokenizer.from_pretrained``)."""
    return pathlib.Path(__file__).resolve().parent / "builtin"


def read_safetensors(path: str | pathlib.Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file as float32 numpy arrays (the format is an
    8-byte header length, a JSON header of dtypes, shapes and offsets, then the data)."""
    raw = pathlib.Path(path).read_bytes()
    if len(raw) < 8:
        raise ValueError(f"{path}: not a safetensors file (too short)")
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name!r} has dtype {info['dtype']}, which corral's reader does not handle")
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(raw, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=base + start).reshape(info["shape"]).astype(np.float32)
    return out


# GPT-2's pre-tokenization, in Python's ``re``: ``\p{L}`` is ``[^\W\d_]`` (Unicode letters)
# and ``\p{N}`` is approximated by ``\d``; a rare character on the border only splits a word
# differently, which any BPE reads back to the same bytes.
_PRETOKEN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+| ?_+|\s+(?!\S)|\s+""")


class ByteLevelBPE:
    """Encodes text with a byte-level BPE ``tokenizer.json`` (GPT-2 style) in pure Python:
    for prompts, without the ``tokenizers`` library. Decoding is the vocabulary's job
    (:class:`corral.Vocabulary` knows each id's bytes)."""

    def __init__(self, tokenizer_json: str | pathlib.Path):
        data = json.loads(pathlib.Path(tokenizer_json).read_text(encoding="utf-8"))
        model = data.get("model", {})
        if model.get("type") != "BPE" or (data.get("pre_tokenizer") or {}).get("type") != "ByteLevel":
            raise ValueError(f"{tokenizer_json}: not a byte-level BPE tokenizer")
        self.vocab: dict[str, int] = model["vocab"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        self.alphabet = bytes_to_unicode()
        self._cache: dict[str, list[int]] = {}

    def _word(self, word: str) -> list[int]:
        ids = self._cache.get(word)
        if ids is not None:
            return ids
        parts = [self.alphabet[b] for b in word.encode("utf-8")]
        while len(parts) > 1:
            ranked = [(self.ranks.get((a, b), -1), i) for i, (a, b) in enumerate(zip(parts, parts[1:], strict=False))]
            ranked = [r for r in ranked if r[0] >= 0]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids = [self.vocab[p] for p in parts]
        if len(self._cache) < 50_000:
            self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``."""
        out: list[int] = []
        for word in _PRETOKEN.findall(text):
            out.extend(self._word(word))
        return out


class KVCache:
    """Keys and values of every layer for the positions read so far (``length`` of them).
    ``truncate(n)`` forgets everything from position ``n`` on (rollback)."""

    def __init__(self, layers: int, heads: int, head_dim: int, capacity: int):
        self.keys = np.zeros((layers, heads, capacity, head_dim), dtype=np.float32)
        self.values = np.zeros_like(self.keys)
        self.length = 0

    def truncate(self, n: int) -> None:
        """Keeps the first ``n`` positions."""
        if not 0 <= n <= self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {n}")
        self.length = n


class NumpyGPT2:
    """A GPT-2 forward pass in numpy (float32), from a Hugging Face model directory."""

    def __init__(self, path: str | pathlib.Path | None = None):
        path = pathlib.Path(path) if path is not None else builtin_model_path()
        config = json.loads((path / "config.json").read_text())
        if config.get("model_type") != "gpt2":
            raise ValueError(f"{path}: model_type {config.get('model_type')!r}, expected 'gpt2'")
        self.config = config
        self.n_layer, self.n_head, self.n_embd = config["n_layer"], config["n_head"], config["n_embd"]
        self.n_positions = config["n_positions"]
        self.vocab_size = config["vocab_size"]
        self.eps = config.get("layer_norm_epsilon", 1e-5)
        self.eos_token_id: int | None = config.get("eos_token_id")
        w = read_safetensors(path / "model.safetensors")
        p = "transformer."
        self.wte = w[p + "wte.weight"]
        self.wpe = w[p + "wpe.weight"]
        # lm_head is tied to the token embedding unless stored apart.
        self.lm_head = w.get("lm_head.weight", self.wte)
        self.blocks = []
        for i in range(self.n_layer):
            b = f"{p}h.{i}."
            self.blocks.append({k: w[b + k] for k in (
                "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                "mlp.c_proj.weight", "mlp.c_proj.bias",
            )})
        self.ln_f = (w[p + "ln_f.weight"], w[p + "ln_f.bias"])

    def new_cache(self) -> KVCache:
        """An empty cache for one sequence of up to ``n_positions`` tokens."""
        return KVCache(self.n_layer, self.n_head, self.n_embd // self.n_head, self.n_positions)

    def _layer_norm(self, x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * weight + bias

    @staticmethod
    def _gelu(x: np.ndarray) -> np.ndarray:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))

    def forward(self, ids: Sequence[int], cache: KVCache) -> np.ndarray:
        """Reads ``ids`` after the cache's positions; returns the logits at each new
        position, shape ``[len(ids), vocab_size]``, and extends the cache."""
        ids = np.asarray(ids, dtype=np.int64)
        t, start = len(ids), cache.length
        if t == 0:
            return np.zeros((0, self.vocab_size), dtype=np.float32)
        if start + t > self.n_positions:
            raise ValueError(f"the model reads at most {self.n_positions} positions; {start} + {t} asked")
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ValueError(f"token ids must be in 0..{self.vocab_size - 1}")
        h, d = self.n_head, self.n_embd // self.n_head
        x = self.wte[ids] + self.wpe[start : start + t]
        end = start + t
        # New position i (absolute start + i) sees cached positions 0..start + i.
        mask = np.triu(np.full((t, end), -np.inf, dtype=np.float32), k=start + 1)
        for layer, b in enumerate(self.blocks):
            a = self._layer_norm(x, b["ln_1.weight"], b["ln_1.bias"])
            qkv = a @ b["attn.c_attn.weight"] + b["attn.c_attn.bias"]
            q, k, v = (qkv[:, i * self.n_embd : (i + 1) * self.n_embd].reshape(t, h, d).transpose(1, 0, 2) for i in range(3))
            cache.keys[layer, :, start:end] = k
            cache.values[layer, :, start:end] = v
            keys, values = cache.keys[layer, :, :end], cache.values[layer, :, :end]
            scores = q @ keys.transpose(0, 2, 1) / math.sqrt(d) + mask
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            attn = (probs @ values).transpose(1, 0, 2).reshape(t, self.n_embd)
            x = x + attn @ b["attn.c_proj.weight"] + b["attn.c_proj.bias"]
            m = self._layer_norm(x, b["ln_2.weight"], b["ln_2.bias"])
            m = self._gelu(m @ b["mlp.c_fc.weight"] + b["mlp.c_fc.bias"])
            x = x + m @ b["mlp.c_proj.weight"] + b["mlp.c_proj.bias"]
        cache.length = end
        x = self._layer_norm(x, *self.ln_f)
        return x @ self.lm_head.T

    def next_logits(self, ids: Sequence[int], cache: KVCache) -> np.ndarray:
        """The logits for the token after ``ids`` (read after the cache), shape ``[vocab_size]``."""
        return self.forward(ids, cache)[-1]


def reusable_prefix(read: Sequence[int], seq: Sequence[int]) -> int:
    """How many leading positions of ``seq`` a cache that has read ``read`` can keep: the
    common prefix, less one if that is all of ``seq`` (its last position must be read
    again, for its logits)."""
    shared = 0
    for a, b in zip(read, seq, strict=False):
        if a != b:
            break
        shared += 1
    return min(shared, len(seq) - 1)


class BuiltinModel:
    """A GPT-2 directory (default: the built-in model) behind corral's generation loop:
    ``vocab``, ``encode``, ``decode`` and ``logits(ids)``. The key/value cache is kept
    across calls: a call reads only what follows the longest prefix it shares with the
    previous one (so rolling back is a truncation, not a recomputation)."""

    def __init__(self, path: str | pathlib.Path | None = None):
        from ..vocabulary import Vocabulary

        path = pathlib.Path(path) if path is not None else builtin_model_path()
        self.net = NumpyGPT2(path)
        self.bpe = ByteLevelBPE(path / "tokenizer.json")
        self.vocab = Vocabulary.from_tokenizer_file(str(path / "tokenizer.json"), size=self.net.vocab_size)
        # An empty prompt reads as the start of a line (this model has no BOS token).
        self._empty_context = self.bpe.encode("\n")
        self._cache = self.net.new_cache()
        self._read: list[int] = []

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        return self.bpe.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` (invalid UTF-8, e.g. half a character, as U+FFFD)."""
        return b"".join(self.vocab.token_bytes(i) for i in ids).decode("utf-8", errors="replace")

    def window_start(self, length: int) -> int:
        """Where the context starts for ``length`` tokens: 0 while they fit the model's
        ``n_positions``, then a multiple of half of it. The window moves in jumps of half its
        size, so between jumps the cache keeps serving (one position read per token instead
        of the whole window) and the context keeps at least ``n_positions / 2`` tokens."""
        n = self.net.n_positions
        if length <= n:
            return 0
        half = max(1, n // 2)
        return -(-(length - n) // half) * half

    def logits(self, ids: Sequence[int]) -> np.ndarray:
        """Logits of the token after ``ids`` (the window :meth:`window_start` gives)."""
        seq = list(ids) if len(ids) else list(self._empty_context)
        seq = seq[self.window_start(len(seq)) :]
        shared = reusable_prefix(self._read, seq)
        self._cache.truncate(shared)
        out = self.net.next_logits(seq[shared:], self._cache)
        self._read = seq
        return out
