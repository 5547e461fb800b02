"""The ``corral`` command line (also ``python -m corral``).

``corral generate`` prints only the generated text on stdout (then a newline), and
diagnostics on stderr, so scripts can use it. Exit status: 0 done, 2 a corral error (bad
grammar, bad flags), 3 stopped at ``--max-tokens`` before the output was complete.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import textwrap
from typing import List, Optional, Sequence

from .errors import CorralError, GenerationError

_GRAMMAR_FORMATS = {".ebnf": "ebnf", ".gbnf": "gbnf", ".lark": "lark"}


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError as e:
        raise GenerationError(f"cannot read {path}: {e.strerror}") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GenerationError(f"{path} is not UTF-8 text (byte {e.start}: 0x{data[e.start]:02x})") from None


def _grammar_from_args(args: argparse.Namespace):
    """The constraint the flags describe (None: free text)."""
    from .grammar import Grammar

    given = [name for name in ("regex", "grammar", "json_schema", "choice") if getattr(args, name) is not None]
    if len(given) > 1:
        raise GenerationError("give at most one of --regex, --grammar, --json-schema, --choice (--ban combines with any)")
    grammar = None
    if args.regex is not None:
        grammar = Grammar.regex(args.regex)
    elif args.choice is not None:
        grammar = Grammar.choice(args.choice)
    elif args.json_schema is not None:
        text = _read(args.json_schema)
        try:
            schema = json.loads(text)
        except json.JSONDecodeError as e:
            raise GenerationError(f"{args.json_schema}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from e
        if not isinstance(schema, (dict, bool)):
            raise GenerationError(
                f"{args.json_schema}: a JSON Schema is an object or a boolean, not a JSON {type(schema).__name__}"
            )
        grammar = Grammar.json_schema(schema, whitespace=args.whitespace)
    elif args.grammar is not None:
        fmt = args.grammar_format or _GRAMMAR_FORMATS.get(pathlib.Path(args.grammar).suffix.lower())
        if fmt is None:
            raise GenerationError(
                f"cannot tell the grammar format of {args.grammar!r} from its extension: "
                "use .ebnf, .gbnf or .lark, or --grammar-format"
            )
        grammar = getattr(Grammar, fmt)(_read(args.grammar))
    if args.ban:
        ban = Grammar.ban(args.ban, ignore_case=args.ignore_case, whole_words=args.whole_words, mode=args.ban_mode)
        grammar = ban if grammar is None else grammar & ban
    return grammar


def _cmd_generate(args: argparse.Namespace) -> int:
    from .generation import generate
    from .models import load_model

    grammar = _grammar_from_args(args)
    model = load_model(args.model)
    out = sys.stdout

    def stream(piece: str) -> None:
        out.write(piece)
        out.flush()

    result = generate(
        model,
        args.prompt,
        grammar,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        on_text=stream if args.stream else None,
        max_rollbacks=args.max_rollbacks,
    )
    if not args.stream:
        out.write(result.text)
    out.write("\n")
    out.flush()
    if result.rollbacks:
        print(f"corral: {result.rollbacks} rollback(s) for banned phrases", file=sys.stderr)
    if not result.accepting:
        print(
            f"corral: stopped at --max-tokens {args.max_tokens} before the output was complete",
            file=sys.stderr,
        )
        return 3
    return 0


# (title, prompt, constraint) for `corral demo`: the seeds' examples.
def _demo_cases() -> list:
    from .grammar import Grammar

    octet = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
    return [
        ("yes/no answer", "Is this a dagger which I see before me? Answer: ", Grammar.choice(["yes", "no"]), 8),
        ("a year", "KING HENRY:\nIn the year of our Lord ", Grammar.regex(r"1[0-9]{3}"), 8),
        ("an IPv4 address", "Send word to the server at ", Grammar.regex(rf"({octet}\.){{3}}{octet}"), 16),
        ("a Python identifier", "def ", Grammar.regex(r"[A-Za-z_][A-Za-z0-9_]{0,23}"), 12),
        (
            "Shakespeare-format lines",
            "\n",
            Grammar.regex(r"([A-Z]{3,12}( [A-Z]{3,12})?:\n[A-Z][a-z]+( [a-z',]+){2,9}[.!?]\n\n){2}"),
            60,
        ),
        (
            "banned words (rollback)",
            "ROMEO:\n",
            Grammar.ban(["the", "and", "thou"], ignore_case=True, whole_words=True, mode="rollback"),
            40,
        ),
    ]


def _cmd_demo(args: argparse.Namespace) -> int:
    from .generation import generate
    from .models import load_model

    model = load_model(args.model)
    width = max(30, (args.width - 3) // 2)
    out = sys.stdout
    out.write(f"corral demo: {args.model or 'the built-in model'}, temperature {args.temperature}, seed {args.seed}\n")
    for title, prompt, grammar, max_tokens in _demo_cases():
        common = dict(max_tokens=max_tokens, temperature=args.temperature, seed=args.seed)
        free = generate(model, prompt, None, **common)
        guided = generate(model, prompt, grammar, **common)
        shown = repr(grammar)
        if len(shown) > 2 * width:
            shown = shown[: 2 * width - 1] + "…"
        out.write(f"\n== {title}\n   constraint: {shown}\n   prompt: {prompt!r}\n")
        columns = []
        for label, result in (("unguided", free), ("guided", guided)):
            fits = _fits(grammar, result.text)
            lines = _show(result.text, width)
            columns.append([f"{label} (fits: {'yes' if fits else 'no'})"] + lines)
        rows = max(len(c) for c in columns)
        for i in range(rows):
            left = columns[0][i] if i < len(columns[0]) else ""
            right = columns[1][i] if i < len(columns[1]) else ""
            out.write(f"   {left:<{width}} | {right}\n".rstrip() + "\n")
    return 0


def _fits(grammar, text: str) -> bool:
    """Does ``text`` (the whole output) satisfy the demo's constraint?"""
    spec = grammar.ban_spec
    if spec is not None:
        return spec.pattern().search(text) is None
    import re

    return re.fullmatch(grammar.source, text) is not None


def _show(text: str, width: int) -> List[str]:
    """The text's lines, each wrapped to ``width``, with a visible end of line."""
    lines: List[str] = []
    for line in text.split("\n"):
        wrapped = textwrap.wrap(line, width - 1, drop_whitespace=False) or [""]
        lines.extend(wrapped)
        lines[-1] += "⏎"
    lines[-1] = lines[-1][:-1]
    return lines[:12]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``corral`` command."""
    parser = argparse.ArgumentParser(prog="corral", description="Constrained generation with exact token masks.")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser(
        "generate",
        help="generate text that fits a constraint",
        description="Prints only the generated text on stdout; diagnostics go to stderr.",
    )
    what = gen.add_argument_group("constraint (at most one, plus any --ban)")
    what.add_argument("--regex", help="Python re pattern the whole output must match")
    what.add_argument("--grammar", metavar="FILE", help="grammar file: .ebnf, .gbnf or .lark ('-' = stdin)")
    what.add_argument("--grammar-format", choices=["ebnf", "gbnf", "lark"], help="the grammar's syntax")
    what.add_argument("--json-schema", metavar="FILE", help="JSON Schema file the output must validate against")
    what.add_argument("--whitespace", choices=["compact", "flexible"], default="compact", help="JSON whitespace")
    what.add_argument("--choice", nargs="+", metavar="TEXT", help="the output is exactly one of these")
    what.add_argument("--ban", nargs="+", metavar="PHRASE", help="phrases the output must not contain")
    what.add_argument("--ban-mode", choices=["mask", "rollback"], default="mask")
    what.add_argument("--ignore-case", action="store_true", help="--ban matches any casing")
    what.add_argument("--whole-words", action="store_true", help="--ban matches whole words only")
    gen.add_argument("--model", metavar="PATH", default=None, help="Hugging Face model directory (default: built-in)")
    gen.add_argument("--prompt", default="", help="text the model is conditioned on")
    gen.add_argument("--max-tokens", type=int, default=128)
    gen.add_argument("--temperature", type=float, default=1.0, help="0 = greedy")
    gen.add_argument("--top-k", type=int, default=None)
    gen.add_argument("--top-p", type=float, default=None)
    gen.add_argument("--seed", type=int, default=None, help="sampling seed")
    gen.add_argument("--max-rollbacks", type=int, default=64, help="limit for --ban-mode rollback")
    gen.add_argument("--stream", action="store_true", help="print text as it is generated")
    gen.set_defaults(func=_cmd_generate)
    demo = sub.add_parser("demo", help="unguided and guided generations side by side")
    demo.add_argument("--model", metavar="PATH", default=None, help="model directory (default: built-in)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--temperature", type=float, default=0.8)
    demo.add_argument("--width", type=int, default=100, help="characters per output line")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``corral`` and ``python -m corral``."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CorralError, ValueError, TypeError, OSError) as e:
        # Bad input of any kind: one line (the message's first), never a traceback.
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"corral: error: {first}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("corral: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
