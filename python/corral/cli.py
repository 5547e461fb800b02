"""The ``corral`` command line (also ``python -m corral``).

``corral generate`` prints only the generated text on stdout (then a newline), and
diagnostics on stderr, so scripts can use it. Exit status: 0 done, 2 a corral error (bad
grammar, bad flags), 3 stopped at ``--max-tokens`` before the output was complete.

The flags' defaults are the API's (:func:`corral.generate`, :class:`corral.Grammar`), read
from there rather than written twice. Errors about the content of a file name the place as
``FILE:LINE:COLUMN:``; errors about a setting name its flag, not the Python argument.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import inspect
import json
import pathlib
import re
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .errors import CorralError, GenerationError, GrammarError, SchemaError
from .generation import (
    DEFAULT_MAX_ROLLBACKS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_SEED,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOP_K,
    DEFAULT_TOP_P,
)
from .grammar import Grammar, GrammarWarning
from .tools import FORMATS

_GRAMMAR_FORMATS = {".ebnf": "ebnf", ".gbnf": "gbnf", ".lark": "lark"}

#: API argument names whose flag is not spelled after them (``Grammar.ban(mode=)``).
_FLAG_OF_ARGUMENT = {"mode": "--ban-mode"}


def _api_default(function: Callable[..., Any], name: str) -> Any:
    """The default of ``function``'s argument ``name``: the command line offers the API's."""
    return inspect.signature(function).parameters[name].default


def _indent(text: str) -> int | str:
    """``--indent``: a number of spaces (``2``), else the indentation text itself (a tab)."""
    return int(text) if text.isdigit() else text


def _token_count(text: str) -> int:
    """``--reasoning-budget``: a number of tokens from 0."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"a number of tokens from 0, got {text!r}")
    return int(text)


def _version() -> str:
    """corral's version: the installed distribution's, else the package's ``__version__``."""
    try:
        return importlib.metadata.version("corral")
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(sys.modules[__package__], "__version__", "unknown"))


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of character ``offset`` of ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


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
        before = data[: e.start].decode("utf-8", errors="replace")
        line, column = _position(before, len(before))
        raise GenerationError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
        ) from None


_JSON_SPACE = " \t\n\r"


def _json_pointer_offset(text: str, pointer: str) -> int | None:
    """Where the value at JSON ``pointer`` starts in the JSON document ``text`` (a character
    offset), or None if the pointer leads nowhere. A key given twice means its last value,
    as for ``json.loads``."""
    decoder = json.JSONDecoder()

    def skip(i: int) -> int:
        while i < len(text) and text[i] in _JSON_SPACE:
            i += 1
        return i

    i = skip(0)
    steps = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]] if pointer else []
    try:
        for step in steps:
            if text[i] == "{":
                found, i = None, skip(i + 1)
                while text[i] != "}":
                    key, i = decoder.raw_decode(text, i)
                    i = skip(skip(i) + 1)  # past the colon
                    if key == step:
                        found = i
                    _, i = decoder.raw_decode(text, i)
                    i = skip(i)
                    if text[i] == ",":
                        i = skip(i + 1)
            elif text[i] == "[" and step.isdigit():
                found, i, index = None, skip(i + 1), 0
                while text[i] != "]":
                    if index == int(step):
                        found = i
                    _, i = decoder.raw_decode(text, i)
                    i = skip(i)
                    if text[i] == ",":
                        i = skip(i + 1)
                    index += 1
            else:
                return None
            if found is None:
                return None
            i = found
    except (IndexError, ValueError):
        return None
    return i


def _in_file(path: str, text: str, error: Exception) -> GenerationError:
    """``error`` about the content of file ``path`` as ``path:line:column: message``: the
    place is a grammar error's ``line``/``column``, or where a schema error's JSON
    ``pointer`` leads in the file."""
    name = _display_name(path)
    message = str(error)
    line, column = getattr(error, "line", 0) or 0, getattr(error, "column", 0) or 0
    if not line and isinstance(error, SchemaError):
        offset = _json_pointer_offset(text, error.pointer)
        if offset is not None:
            line, column = _position(text, offset)
    if line:
        # The place moves to the front: drop the core's own wording of it.
        said = f"grammar error at line {line}, column {column}: "
        if message.startswith(said):
            message = message[len(said) :]
        where = f"{name}:{line}:{column}" if column else f"{name}:{line}"
    else:
        where = name
    return GenerationError(f"{where}: {message}")


def _show_warnings(caught: list[warnings.WarningMessage], source: tuple[str, str] | None) -> None:
    """Prints caught grammar warnings as one ``corral: warning:`` line each (with the file
    name when the constraint came from a file); other warnings as Python shows them."""
    for w in caught:
        if not issubclass(w.category, GrammarWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            continue
        where = f"{_display_name(source[0])}: " if source is not None else ""
        print(f"corral: warning: {where}{str(w.message).strip().splitlines()[0]}", file=sys.stderr)


def _whitespace(args: argparse.Namespace, constructor: Any) -> str:
    """``--whitespace``, or the constructor's own default when it is not given."""
    return str(args.whitespace if args.whitespace is not None else _api_default(constructor, "whitespace"))


#: The flags that shape one kind of constraint (dest, flag, the constraints it applies to).
_MODIFIERS = (
    ("grammar_format", "--grammar-format", ("grammar",)),
    ("whitespace", "--whitespace", ("json_schema", "structural_tag", "tools")),
    ("indent", "--indent", ("json_schema",)),
    ("tool_format", "--tool-format", ("tools",)),
    ("tool_choice", "--tool-choice", ("tools",)),
    ("single_call", "--single-call", ("tools",)),
    ("reasoning", "--reasoning", ("tools",)),
    ("reasoning_budget", "--reasoning-budget", ("tools",)),
    ("ban_mode", "--ban-mode", ("ban",)),
    ("ignore_case", "--ignore-case", ("ban",)),
    ("whole_words", "--whole-words", ("ban",)),
)


def _modifier_defaults() -> dict[str, Any]:
    """What each of `_MODIFIERS` is when not given (as the parser sets it)."""
    return {
        "grammar_format": None,
        "whitespace": None,
        "indent": _api_default(Grammar.json_schema, "indent"),
        "tool_format": "hermes",
        "tool_choice": "auto",
        "single_call": False,
        "reasoning": False,
        "reasoning_budget": None,
        "ban_mode": _api_default(Grammar.ban, "mode"),
        "ignore_case": False,
        "whole_words": False,
    }


def _check_modifiers(args: argparse.Namespace) -> None:
    """A shaping flag given without the constraint it shapes is an error, not ignored."""
    defaults = _modifier_defaults()
    for dest, flag, targets in _MODIFIERS:
        if getattr(args, dest, defaults[dest]) == defaults[dest]:
            continue
        if not any(getattr(args, t, None) for t in targets):
            names = " or ".join("--" + t.replace("_", "-") for t in targets)
            raise GenerationError(f"{flag} applies to {names} only, and none is given")


def _grammar_from_args(args: argparse.Namespace) -> tuple[Grammar | None, tuple[str, str] | None]:
    """The constraint the flags describe (None: free text), and the (path, text) of the
    file it was read from (None when it came from no file)."""
    names = ("regex", "grammar", "json_schema", "choice", "structural_tag", "tools")
    given = [name for name in names if getattr(args, name) is not None]
    if len(given) > 1:
        raise GenerationError(
            "give at most one of --regex, --grammar, --json-schema, --choice, --structural-tag, --tools (--ban combines with any)"
        )
    _check_modifiers(args)
    grammar = None
    source = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GrammarWarning)
        if args.regex is not None:
            grammar = Grammar.regex(args.regex)
        elif args.choice is not None:
            grammar = Grammar.choice(args.choice)
        elif args.json_schema is not None:
            text = _read(args.json_schema)
            source = (args.json_schema, text)
            try:
                schema = json.loads(text)
            except json.JSONDecodeError as e:
                name = _display_name(args.json_schema)
                raise GenerationError(f"{name}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from e
            except RecursionError:
                raise GenerationError(f"{_display_name(args.json_schema)}: JSON nested too deep to read") from None
            if not isinstance(schema, (dict, bool)):
                line, column = _position(text, _json_pointer_offset(text, "") or 0)
                raise GenerationError(
                    f"{_display_name(args.json_schema)}:{line}:{column}: a JSON Schema is an object or a boolean, "
                    f"not a JSON {type(schema).__name__}"
                )
            try:
                grammar = Grammar.json_schema(schema, whitespace=_whitespace(args, Grammar.json_schema), indent=args.indent)
            except GrammarError as e:
                raise _in_file(args.json_schema, text, e) from e
        elif args.structural_tag is not None or args.tools is not None:
            path = args.structural_tag if args.structural_tag is not None else args.tools
            text = _read(path)
            source = (path, text)
            whitespace = _whitespace(args, Grammar.structural_tag)
            try:
                if args.structural_tag is not None:
                    # The core reads the text: a description may nest as deep as its limit
                    # allows, past Python's recursion limit.
                    grammar = Grammar.structural_tag(text, whitespace=whitespace)
                else:
                    try:
                        spec = json.loads(text)
                    except json.JSONDecodeError as e:
                        raise GenerationError(f"{_display_name(path)}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from e
                    except RecursionError:
                        raise GenerationError(f"{_display_name(path)}: JSON nested too deep to read") from None
                    choice = args.tool_choice if args.tool_choice in ("auto", "none", "required") else {"name": args.tool_choice}
                    # A budget bounds the reasoning, so it asks for it.
                    reasoning = True if args.reasoning or args.reasoning_budget is not None else None
                    grammar = Grammar.tool_calls(
                        spec,
                        format=args.tool_format,
                        tool_choice=choice,
                        parallel=not args.single_call,
                        reasoning=reasoning,
                        reasoning_budget=args.reasoning_budget,
                        whitespace=whitespace,
                    )
            except GrammarError as e:
                raise GenerationError(f"{_display_name(path)}: {e}") from e
        elif args.grammar is not None:
            fmt = args.grammar_format or _GRAMMAR_FORMATS.get(pathlib.Path(args.grammar).suffix.lower())
            if fmt is None:
                raise GenerationError(
                    f"cannot tell the grammar format of {args.grammar!r} from its extension: "
                    "use .ebnf, .gbnf or .lark, or --grammar-format"
                )
            text = _read(args.grammar)
            source = (args.grammar, text)
            try:
                grammar = getattr(Grammar, fmt)(text)
            except GrammarError as e:
                raise _in_file(args.grammar, text, e) from e
    _show_warnings(caught, source)
    if args.ban:
        ban = Grammar.ban(args.ban, ignore_case=args.ignore_case, whole_words=args.whole_words, mode=args.ban_mode)
        grammar = ban if grammar is None else grammar & ban
    return grammar, source


def _cmd_generate(args: argparse.Namespace) -> int:
    from .generation import generate
    from .models import load_model

    grammar, source = _grammar_from_args(args)
    model = load_model(args.model)
    out = sys.stdout

    def stream(piece: str) -> None:
        out.write(piece)
        out.flush()

    try:
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
    except GrammarError as e:
        # Compiling can still find fault with a place in the file (line or JSON pointer).
        located = bool(getattr(e, "line", 0)) or isinstance(e, SchemaError)
        if source is not None and located:
            raise _in_file(source[0], source[1], e) from e
        raise
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
def _demo_cases() -> list[tuple[str, str, Grammar, int]]:
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


def _fits(grammar: Grammar, text: str) -> bool:
    """Does ``text`` (the whole output) satisfy the demo's constraint?"""
    spec = grammar.ban_spec
    if spec is not None:
        return spec.pattern().search(text) is None
    import re

    return re.fullmatch(grammar.source, text) is not None


def _show(text: str, width: int) -> list[str]:
    """The text's lines, each wrapped to ``width``, with a visible end of line."""
    lines: list[str] = []
    for line in text.split("\n"):
        wrapped = textwrap.wrap(line, width - 1, drop_whitespace=False) or [""]
        lines.extend(wrapped)
        lines[-1] += "⏎"
    lines[-1] = lines[-1][:-1]
    return lines[:12]


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows every option's default, except where there is none to show (None, an unset
    flag) or where the help says it in words."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is None or action.default is False or "(default:" in text:
            return text
        return super()._get_help_string(action) or ""


def _subcommand(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, **kwargs: Any) -> argparse.ArgumentParser:
    return sub.add_parser(name, formatter_class=_HelpFormatter, **kwargs)


def _flags_of(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's destination (the API argument it feeds) -> its long flag."""
    return {a.dest: a.option_strings[-1] for a in parser._actions if a.option_strings}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``corral`` command."""
    parser = argparse.ArgumentParser(
        prog="corral", description="Constrained generation with exact token masks.", formatter_class=_HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"corral {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = _subcommand(
        sub,
        "generate",
        help="generate text that fits a constraint",
        description="Prints only the generated text on stdout; diagnostics go to stderr.",
    )
    what = gen.add_argument_group("constraint (at most one, plus any --ban)")
    what.add_argument("--regex", help="Python re pattern the whole output must match")
    what.add_argument("--grammar", metavar="FILE", help="grammar file: .ebnf, .gbnf or .lark ('-' = stdin)")
    what.add_argument(
        "--grammar-format", choices=["ebnf", "gbnf", "lark"], help="the grammar's syntax (default: from the extension)"
    )
    what.add_argument("--json-schema", metavar="FILE", help="JSON Schema file the output must validate against")
    what.add_argument(
        "--structural-tag", metavar="FILE", help="structural tag file (XGrammar's JSON format): text, tagged regions, tool calls"
    )
    what.add_argument("--tools", metavar="FILE", help="JSON list of OpenAI-style tool definitions the output may call")
    what.add_argument("--tool-format", choices=list(FORMATS), default="hermes", help="how --tools calls are written")
    what.add_argument("--tool-choice", default="auto", metavar="auto|none|required|NAME", help="which --tools calls are allowed or required")
    what.add_argument("--single-call", action="store_true", help="at most one --tools call (no parallel calls)")
    what.add_argument(
        "--reasoning", action="store_true", help="--tools: the turn opens with reasoning, <think>...</think> (harmony: analysis messages)"
    )
    what.add_argument(
        "--reasoning-budget",
        type=_token_count,
        default=None,
        metavar="N",
        help="--tools: the reasoning (implied) spends at most N tokens; then its closing marker is forced",
    )
    what.add_argument(
        "--whitespace",
        choices=["compact", "flexible"],
        default=None,
        help=f"whitespace between JSON tokens (default: {_api_default(Grammar.json_schema, 'whitespace')}; flexible in tool calls)",
    )
    what.add_argument(
        "--indent",
        type=_indent,
        default=_api_default(Grammar.json_schema, "indent"),
        metavar="N|TEXT",
        help="write the JSON as json.dumps(indent=N) does: N spaces (or the given spaces and tabs) per level",
    )
    what.add_argument("--choice", nargs="+", metavar="TEXT", help="the output is exactly one of these")
    what.add_argument("--ban", nargs="+", metavar="PHRASE", help="phrases the output must not contain")
    what.add_argument(
        "--ban-mode",
        choices=["mask", "rollback"],
        default=_api_default(Grammar.ban, "mode"),
        help="mask: tokens that would complete a phrase are never allowed; rollback: a phrase that appears is undone",
    )
    what.add_argument("--ignore-case", action="store_true", help="--ban matches any casing")
    what.add_argument("--whole-words", action="store_true", help="--ban matches whole words only")
    gen.add_argument("--model", metavar="PATH", default=None, help="Hugging Face model directory (default: built-in)")
    gen.add_argument("--prompt", default="", help="text the model is conditioned on (default: none)")
    gen.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="most tokens to generate")
    gen.add_argument("--temperature", type=float, default=DEFAULT_TEMPERATURE, help="0 = greedy")
    gen.add_argument(
        "--top-k", type=int, default=DEFAULT_TOP_K, help="sample from the k most likely allowed tokens (default: off)"
    )
    gen.add_argument(
        "--top-p", type=float, default=DEFAULT_TOP_P, help="sample from the smallest set reaching mass p (default: off)"
    )
    gen.add_argument("--seed", type=int, default=DEFAULT_SEED, help="sampling seed (default: random)")
    gen.add_argument(
        "--max-rollbacks", type=int, default=DEFAULT_MAX_ROLLBACKS, help="limit for --ban-mode rollback"
    )
    gen.add_argument("--stream", action="store_true", help="print text as it is generated")
    gen.set_defaults(func=_cmd_generate, flags=_flags_of(gen))
    demo = _subcommand(sub, "demo", help="unguided and guided generations side by side")
    demo.add_argument("--model", metavar="PATH", default=None, help="model directory (default: built-in)")
    demo.add_argument("--seed", type=int, default=0, help="sampling seed")
    demo.add_argument("--temperature", type=float, default=0.8, help="sampling temperature")
    demo.add_argument("--width", type=int, default=100, help="characters per output line")
    demo.set_defaults(func=_cmd_demo, flags=_flags_of(demo))
    return parser


def _in_cli_terms(error: BaseException, flags: dict[str, str]) -> str:
    """The error's message, with the API arguments it is about (its ``parameters``) named
    by their flags: ``max_rollbacks`` -> ``--max-rollbacks``, ``mode='mask'`` ->
    ``--ban-mode mask``."""
    message = str(error)
    for name in getattr(error, "parameters", ()):
        flag = flags.get(name) or _FLAG_OF_ARGUMENT.get(name)
        if flag is None:
            continue
        mention = re.compile(rf"(?<![\w-]){re.escape(name)}(?:=(?:'([^']*)'|\"([^\"]*)\"|([^\s,;)]+)))?(?!\w)")

        def as_flag(m: re.Match[str], flag: str = flag) -> str:
            value = next((g for g in m.groups() if g is not None), None)
            return flag if value is None else f"{flag} {value}"

        message = mention.sub(as_flag, message)
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``corral`` and ``python -m corral``."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except (CorralError, ValueError, TypeError, OSError) as e:
        # Bad input of any kind: one line (the message's first), never a traceback.
        text = _in_cli_terms(e, args.flags).strip()
        first = text.splitlines()[0] if text else type(e).__name__
        print(f"corral: error: {first}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("corral: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
