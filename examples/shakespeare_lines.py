"""NanoGPT guided decoding (seed 003) with corral: a character-level vocabulary, static
per-position masks, and the (class, quantifier) pattern compiler, driving corral's
built-in model. Every generated line fits the pattern.

Run: python examples/shakespeare_lines.py [--seed N] [--lines N]
"""

from __future__ import annotations

import argparse
import re

import numpy as np

import corral
from corral.models import CharLevelModel
from corral.patterns import compile_pattern, pattern_regex, static_masks

# The seed's Shakespeare format: a name in capitals, ": ", dialogue in lower case, newline.
SPEAKER_LINE = [("UPPER", "+"), (":", "1"), (" ", "1"), ("LOWER|SPACE", "+"), ("\n", "1")]


def static_demo(model: CharLevelModel, seed: int) -> str:
    """Level 1: five lower-case letters and a newline, from masks fixed in advance."""
    masks = static_masks(["LOWER"] * 5 + ["NEWLINE"], model.vocab)
    rng = np.random.default_rng(seed)
    ids: list = model.encode("ROMEO:\n")
    out = []
    for row in masks:
        logits = corral.apply_bitmask(model.logits(ids), row)
        p = np.exp(logits - logits.max())
        token = int(rng.choice(len(p), p=p / p.sum()))
        ids.append(token)
        out.append(token)
    return model.decode(out)


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lines", type=int, default=4)
    args = parser.parse_args(argv)
    model = CharLevelModel()  # the built-in model, seen one character at a time
    print(f"character vocabulary: {len(model.chars)} characters + EOS")
    word = static_demo(model, args.seed)
    print(f"static masks (LOWER x5, NEWLINE): {word!r}")
    grammar = compile_pattern(SPEAKER_LINE)
    print(f"pattern {SPEAKER_LINE} -> regex {pattern_regex(SPEAKER_LINE)!r}")
    lines = []
    for i in range(args.lines):
        result = corral.generate(model, "\n", grammar, max_tokens=80, seed=args.seed + i, temperature=0.8)
        assert result.finished and re.fullmatch(pattern_regex(SPEAKER_LINE), result.text)
        lines.append(result.text)
        print(result.text, end="")
    return [word] + lines


if __name__ == "__main__":
    main()
