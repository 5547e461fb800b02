#!/usr/bin/env python3
"""Converts corral's built-in GPT-2 (a Hugging Face directory) into a GGUF file that
llama.cpp (and so llama-cpp-python) loads as architecture ``gpt2``.

    python tools/convert_builtin_to_gguf.py OUT.gguf [--src DIR]

or, from Python (the tests do this into a temporary directory)::

    from convert_builtin_to_gguf import convert
    convert(corral.models.builtin_model_path(), "builtin.gguf")

Only ``gguf`` and ``numpy`` are needed (plus corral's own safetensors reader). Weights are
written as float32, so llama.cpp's logits agree with ``transformers``' to float rounding.

What llama.cpp's ``gpt2`` architecture expects (as its ``convert_hf_to_gguf.py`` writes it):

* hyperparameters ``gpt2.block_count``, ``context_length`` (``n_positions``),
  ``embedding_length``, ``feed_forward_length`` (``n_inner`` or 4 * ``n_embd``),
  ``attention.head_count``, ``attention.layer_norm_epsilon``;
* tensors ``token_embd``, ``position_embd``, ``output_norm``, ``output`` (left out when the
  LM head is tied to the token embedding: llama.cpp then reuses ``token_embd``) and, per
  block, ``attn_norm``, ``attn_qkv``, ``attn_output``, ``ffn_norm``, ``ffn_up``,
  ``ffn_down`` (each ``.weight`` and ``.bias``). GPT-2 checkpoints store their linear
  layers as ``Conv1D`` (``[in, out]``), while GGUF wants ``[out, in]`` in numpy order, so
  the four matrices of a block are transposed;
* a ``gpt2`` tokenizer (byte-level BPE): the tokens as the ``tokenizer.json`` spells them
  (in the ``Ġ`` byte alphabet), token types (normal, or control for special added tokens,
  user-defined for other added tokens), the merges as ``"left right"`` strings, the BOS
  and EOS ids, and ``tokenizer.ggml.pre = "gpt-2"`` (GPT-2's pre-tokenizer regex).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

PathLike = str | pathlib.Path

# Tensors llama.cpp does not read (the causal mask buffers of old checkpoints).
_SKIPPED_SUFFIXES = (".attn.bias", ".attn.masked_bias")
# Conv1D weights, stored [in, out]: transposed to [out, in].
_CONV1D = {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"}
# Hugging Face name inside a block -> GGUF name inside a block.
_BLOCK_NAMES = {
    "ln_1": "attn_norm",
    "attn.c_attn": "attn_qkv",
    "attn.c_proj": "attn_output",
    "ln_2": "ffn_norm",
    "mlp.c_fc": "ffn_up",
    "mlp.c_proj": "ffn_down",
}
_TOP_NAMES = {"wte": "token_embd", "wpe": "position_embd", "ln_f": "output_norm"}


def _read_tensors(path: pathlib.Path) -> dict[str, np.ndarray]:
    try:
        from corral.models.numpy_gpt2 import read_safetensors
    except ImportError:  # pragma: no cover - run from a checkout without corral installed
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
        from corral.models.numpy_gpt2 import read_safetensors
    return read_safetensors(path)


def _gguf_name(hf_name: str) -> str:
    """The GGUF tensor name of a Hugging Face GPT-2 tensor name."""
    name = hf_name
    if name.startswith("transformer."):
        name = name[len("transformer.") :]
    if name == "lm_head.weight":
        return "output.weight"
    stem, _, kind = name.rpartition(".")
    if kind not in ("weight", "bias"):
        raise ValueError(f"unexpected tensor {hf_name!r}")
    if stem.startswith("h."):
        _, block, inner = stem.split(".", 2)
        mapped = _BLOCK_NAMES.get(inner)
        if mapped is None or not block.isdigit():
            raise ValueError(f"unexpected tensor {hf_name!r}")
        return f"blk.{int(block)}.{mapped}.{kind}"
    mapped = _TOP_NAMES.get(stem)
    if mapped is None:
        raise ValueError(f"unexpected tensor {hf_name!r}")
    return f"{mapped}.{kind}"


def _tokenizer(src: pathlib.Path, config: dict):
    """(tokens, token types, merges, bos id, eos id) from ``tokenizer.json``."""
    import gguf

    data = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    model = data.get("model") or {}
    if model.get("type") != "BPE" or (data.get("pre_tokenizer") or {}).get("type") != "ByteLevel":
        raise ValueError(f"{src}/tokenizer.json: not a byte-level BPE tokenizer")
    by_id: dict[int, str] = {int(i): tok for tok, i in model["vocab"].items()}
    types: dict[int, int] = {i: int(gguf.TokenType.NORMAL) for i in by_id}
    for added in data.get("added_tokens") or []:
        i = int(added["id"])
        by_id[i] = added["content"]
        types[i] = int(gguf.TokenType.CONTROL if added.get("special") else gguf.TokenType.USER_DEFINED)
    n = max(config.get("vocab_size", 0), max(by_id) + 1)
    tokens: list[str] = []
    token_types: list[int] = []
    for i in range(n):
        if i in by_id:
            tokens.append(by_id[i])
            token_types.append(types[i])
        else:  # the embedding matrix is wider than the vocabulary: padding ids
            tokens.append(f"[PAD{i}]")
            token_types.append(int(gguf.TokenType.UNUSED))
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    bos = config.get("bos_token_id")
    eos = config.get("eos_token_id")
    return tokens, token_types, merges, bos, eos


def convert(src_dir: PathLike, out_path: PathLike) -> pathlib.Path:
    """Writes the GPT-2 in Hugging Face directory ``src_dir`` (``config.json``,
    ``model.safetensors``, ``tokenizer.json``) as a float32 GGUF file at ``out_path``."""
    import gguf

    src = pathlib.Path(src_dir)
    out = pathlib.Path(out_path)
    config = json.loads((src / "config.json").read_text())
    if config.get("model_type") != "gpt2":
        raise ValueError(f"{src}: model_type {config.get('model_type')!r}, expected 'gpt2'")
    n_embd = int(config["n_embd"])
    n_ctx = int(config.get("n_ctx", config["n_positions"]))
    n_ff = int(config.get("n_inner") or 4 * n_embd)

    tensors = _read_tensors(src / "model.safetensors")
    tokens, token_types, merges, bos, eos = _tokenizer(src, config)

    writer = gguf.GGUFWriter(str(out), arch=gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.GPT2])
    writer.add_name("corral builtin gpt2")
    writer.add_block_count(int(config["n_layer"]))
    writer.add_context_length(n_ctx)
    writer.add_embedding_length(n_embd)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(int(config["n_head"]))
    writer.add_layer_norm_eps(float(config.get("layer_norm_epsilon", 1e-5)))
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32))

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(token_types)
    writer.add_token_merges(merges)
    if bos is not None:
        writer.add_bos_token_id(int(bos))
    if eos is not None:
        writer.add_eos_token_id(int(eos))
    # GPT-2 prompts start without a BOS token (as Hugging Face's tokenizer encodes them).
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)

    tied = "lm_head.weight" not in tensors or np.array_equal(tensors["lm_head.weight"], tensors["transformer.wte.weight"])
    for hf_name, array in tensors.items():
        if hf_name.endswith(_SKIPPED_SUFFIXES) or (tied and hf_name == "lm_head.weight"):
            continue
        inner = hf_name.split(".", 3)[-1] if hf_name.startswith("transformer.h.") else ""
        if inner in _CONV1D:
            array = array.T
        writer.add_tensor(_gguf_name(hf_name), np.ascontiguousarray(array, dtype=np.float32))

    out.parent.mkdir(parents=True, exist_ok=True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the GGUF file to write")
    parser.add_argument("--src", help="a GPT-2 Hugging Face directory (default: corral's built-in model)")
    args = parser.parse_args(argv)
    src = args.src
    if src is None:
        try:
            from corral.models import builtin_model_path
        except ImportError:  # pragma: no cover
            sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
            from corral.models import builtin_model_path
        src = builtin_model_path()
    path = convert(src, args.out)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
