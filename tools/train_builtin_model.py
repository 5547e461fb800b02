#!/usr/bin/env python
"""Trains corral's built-in model: a small GPT-2 on tinyshakespeare, with its own
byte-level BPE vocabulary, saved as a Hugging Face model directory.

    python tools/train_builtin_model.py                       # the shipped settings
    python tools/train_builtin_model.py --steps 50 --out /tmp/m   # a quick try

Writes OUT/config.json, OUT/model.safetensors, OUT/generation_config.json,
OUT/tokenizer.json, OUT/tokenizer_config.json and OUT/training.json (the settings, the
losses reached and the time taken). ``transformers`` loads the directory as a GPT-2
(``AutoModelForCausalLM`` / ``AutoTokenizer``); corral runs it in numpy
(``corral.models.NumpyGPT2``).

Needs torch, transformers and tokenizers (not corral's runtime dependencies). The same
settings and seed give the same tokenizer, and the same weights on the same torch build
and thread count (CPU kernels may differ across versions and machines).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "tinyshakespeare.txt"
DEFAULT_OUT = REPO / "python" / "corral" / "models" / "builtin"
EOS = "<|endoftext|>"


def train_tokenizer(text: str, vocab_size: int):
    """A byte-level BPE tokenizer (GPT-2's pre-tokenization) trained on ``text``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte stays encodable
        show_progress=False,
    )
    tok.train_from_iterator([text[i : i + 10_000] for i in range(0, len(text), 10_000)], trainer)
    return tok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=pathlib.Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    ap.add_argument("--vocab-size", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--embd", type=int, default=192)
    ap.add_argument("--context", type=int, default=256, help="n_positions (longest sequence)")
    ap.add_argument("--block", type=int, default=128, help="training sequence length")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    text = args.data.read_text(encoding="utf-8")
    t0 = time.time()
    tok = train_tokenizer(text, args.vocab_size)
    eos_id = tok.token_to_id(EOS)
    ids = np.array(tok.encode(text).ids, dtype=np.int64)
    split = int(len(ids) * 0.9)  # the last tenth is held out
    train, val = torch.from_numpy(ids[:split]), torch.from_numpy(ids[split:])

    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=args.context,
        n_embd=args.embd,
        n_layer=args.layers,
        n_head=args.heads,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        tie_word_embeddings=True,
    )
    model = GPT2LMHeadModel(config)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(args.seed)

    def batch(data: torch.Tensor):
        starts = torch.randint(0, len(data) - args.block - 1, (args.batch,), generator=gen)
        x = torch.stack([data[s : s + args.block] for s in starts])
        return x

    @torch.no_grad()
    def evaluate(data: torch.Tensor, n: int = 8) -> float:
        model.eval()
        losses = [model(input_ids=(x := batch(data)), labels=x).loss.item() for _ in range(n)]
        model.train()
        return float(np.mean(losses))

    warmup = max(1, args.steps // 20)
    log = []
    model.train()
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        x = batch(train)
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == args.steps - 1:
            entry = {"step": step, "train_loss": round(loss.item(), 4), "seconds": round(time.time() - t0, 1)}
            log.append(entry)
            print(json.dumps(entry), flush=True)

    result = {
        "settings": {k: (str(v) if isinstance(v, pathlib.Path) else v) for k, v in vars(args).items() if k not in ("out", "data")},
        "data": args.data.name,
        "tokens": {"train": int(split), "validation": int(len(ids) - split)},
        "parameters": sum(p.numel() for p in model.parameters()),
        "final_train_loss": evaluate(train),
        "final_validation_loss": evaluate(val),
        "seconds": round(time.time() - t0, 1),
        "torch": torch.__version__,
        "log": log,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True)
    tok.save(str(args.out / "tokenizer.json"))
    (args.out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "GPT2TokenizerFast",
                "bos_token": EOS,
                "eos_token": EOS,
                "unk_token": EOS,
                "model_max_length": args.context,
                "add_prefix_space": False,
            },
            indent=1,
        )
        + "\n"
    )
    (args.out / "training.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("parameters", "final_train_loss", "final_validation_loss", "seconds")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
