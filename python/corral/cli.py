"""The ``corral`` command line. Generated text goes to stdout, diagnostics to stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .errors import CorralError


def _cmd_generate(args: argparse.Namespace) -> int:
    from .generation import generate_tokens
    from .grammar import Grammar
    from .models import TrivialModel

    model = TrivialModel(seed=args.model_seed)
    grammar = Grammar.regex(args.regex) if args.regex is not None else None
    out = sys.stdout

    def stream(tok: int) -> None:
        out.write(model.decode([tok]))
        out.flush()

    result = generate_tokens(
        model,
        model.encode(args.prompt),
        grammar,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        on_token=stream if args.stream else None,
    )
    if not args.stream:
        out.write(model.decode(result.token_ids))
    out.write("\n")
    if not result.accepting:
        print(
            f"corral: stopped at --max-tokens {args.max_tokens} before the output was complete",
            file=sys.stderr,
        )
        return 3
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``corral`` command."""
    parser = argparse.ArgumentParser(prog="corral", description="Constrained generation with exact token masks.")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="generate text that fits a constraint")
    gen.add_argument("--regex", help="Python re pattern the whole output must match")
    gen.add_argument("--prompt", default="", help="text the model is conditioned on")
    gen.add_argument("--max-tokens", type=int, default=64)
    gen.add_argument("--temperature", type=float, default=1.0, help="0 = greedy")
    gen.add_argument("--seed", type=int, default=None, help="sampling seed")
    gen.add_argument("--model-seed", type=int, default=0, help="seed of the built-in stand-in model")
    gen.add_argument("--stream", action="store_true", help="print tokens as they are generated")
    gen.set_defaults(func=_cmd_generate)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``corral`` and ``python -m corral``."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CorralError as e:
        print(f"corral: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
