"""Constraint descriptions: :class:`Grammar` and its constructors."""

from __future__ import annotations

import functools
import json
import re
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from . import _core
from ._args import check_bool, check_limits
from .errors import GrammarError, InvalidGrammarError, InvalidSchemaError, RegexSyntaxError

# Python `re` flags that have an inline spelling, in the order Python prints them.
_INLINE_FLAGS = (
    (re.ASCII, "a"),
    (re.IGNORECASE, "i"),
    (re.MULTILINE, "m"),
    (re.DOTALL, "s"),
    (re.VERBOSE, "x"),
)


# A backslash followed by d, w or s (either case) may be a Perl class.
# `\b` and `\B` test `\w` too.
_PERL_CLASS = re.compile(r"\\[dwsDWSbB]")


@functools.lru_cache(maxsize=1)
def _python_perl_classes() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """This interpreter's ``\\d \\w \\s`` as code-point ranges, read off ``re`` itself.

    Python's classes follow its own Unicode database, which may be older or newer than the
    Rust tables; passing them makes a pattern mean exactly what ``re.fullmatch`` means here.
    Costs ~0.1 s once per process, on the first pattern that uses one of them.
    """
    import numpy as np

    low = np.arange(0, 0xD800, dtype="<u4")
    high = np.arange(0xE000, 0x110000, dtype="<u4")
    text = np.concatenate([low, high]).tobytes().decode("utf-32-le")

    def code_point(index: int) -> int:
        return index if index < 0xD800 else index + 0x800  # skip the surrogates

    def ranges(pattern: str) -> list[tuple[str, str]]:
        out = []
        for m in re.finditer(pattern, text):
            a, b = m.start(), m.end() - 1
            if a < 0xD800 <= b:  # a run across the surrogate gap is two ranges
                out.append((chr(a), chr(0xD7FF)))
                a = 0xD800
            out.append((chr(code_point(a)), chr(code_point(b))))
        return out

    return (ranges(r"\d+"), ranges(r"\w+"), ranges(r"\s+"))


def _strings(values: Iterable[Any], what: str, item: str) -> list[str]:
    """``values`` as a non-empty list of str, or an error naming ``what`` and the bad item."""
    if isinstance(values, str):
        raise TypeError(f"{what} expects a list of {item}s, not one string")
    values = list(values)
    if not values:
        raise GrammarError(f"{what} needs at least one {item}")
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise TypeError(f"{what} {item}s must be str; {item} {i} is {type(value).__name__}")
    return values


def _check_encodable(text: str, kind: str) -> None:
    """Refuses text that is not valid Unicode (a lone surrogate, which Python strings can
    hold but UTF-8 cannot), saying where."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        char = f"U+{ord(text[e.start]):04X}"
        if kind == "regex":
            err = RegexSyntaxError(f"regex syntax error at position {e.start}: lone surrogate {char} is not a character")
            err.pattern, err.position = text, e.start
            raise err from None
        line = text.count("\n", 0, e.start) + 1
        column = e.start - (text.rfind("\n", 0, e.start) + 1) + 1
        grammar_err = InvalidGrammarError(
            f"grammar error at line {line}, column {column}: lone surrogate {char} is not a character"
        )
        grammar_err.line, grammar_err.column = line, column
        raise grammar_err from None


class GrammarWarning(UserWarning):
    """Something in a grammar that is allowed but probably unintended (an unused rule)."""


class SchemaWarning(GrammarWarning):
    """A JSON Schema keyword was dropped (``strict=False``) or is treated loosely."""


# The options of Grammar.json_schema's defaults, as the core takes them.
_DEFAULT_SCHEMA_OPTIONS = (True, "compact", 16, "schema", False, False, None, 2020)


class Grammar:
    """A validated constraint on the model's output, independent of any vocabulary.

    Build one with a constructor (``Grammar.regex(...)``), then pair it with a
    :class:`~corral.Vocabulary` through :func:`corral.compile`. Grammars compare and hash by
    content, which is what the compile cache keys on.
    """

    __slots__ = ("_inner", "_kind", "_source", "_start", "_schema_warnings", "_parts", "_operands", "_ban", "_limits", "_python_type", "_marker_texts")

    def __init__(
        self,
        inner: _core.Grammar | None,
        kind: str,
        source: str,
        start: str | None = None,
        limits: _core.Limits | None = None,
    ):
        self._inner = inner
        # The limits the grammar was built under; `corral.compile` applies them too unless
        # it is given its own.
        self._limits = limits
        self._kind = kind
        self._source = source
        self._start = start
        self._schema_warnings: list[str] = []
        # For `g1 & g2`: the grammars that must all hold (each without parts of its own).
        self._parts: tuple[Grammar, ...] = ()
        # For `g1 | g2` and `g1 + g2` (kind "union" / "concat"): the joined grammars.
        self._operands: tuple[Grammar, ...] = ()
        # The fixed strings of a structural tag (triggers, begins, ends...): a special token
        # whose text occurs in one is read as that text (see Vocabulary.with_special_text).
        self._marker_texts: tuple[str, ...] = ()
        # For Grammar.ban: the phrases and options (see BanSpec).
        self._ban: BanSpec | None = None
        # For Grammar.json_schema of a Python type (a Pydantic model...): the type, which
        # Generation.parsed validates into.
        self._python_type: Any = None

    @classmethod
    def regex(cls, pattern: str | re.Pattern[str], *, limits: _core.Limits | None = None) -> Grammar:
        """A regular expression in Python ``re`` syntax, with the meaning of ``re.fullmatch``.

        Unicode ``\\d \\w \\s`` as in Python; ``.`` and negated classes match whole UTF-8
        characters. A compiled ``re.Pattern`` is accepted (its flags are kept).

        Look-ahead, look-behind, ``\\b``/``\\B`` and anchors anywhere are exact (see
        docs/regex.md). Raises :class:`~corral.RegexSyntaxError` for invalid syntax and
        :class:`~corral.UnsupportedFeatureError` for backreferences, possessive quantifiers,
        atomic groups, conditionals and a look-ahead (or ``$``, ``\\b``) inside a
        look-behind, each with its position.
        """
        if isinstance(pattern, re.Pattern):
            if isinstance(pattern.pattern, bytes):
                raise GrammarError("bytes patterns are not supported: use a str pattern")
            flags = "".join(ch for flag, ch in _INLINE_FLAGS if pattern.flags & flag)
            pattern = (f"(?{flags})" if flags else "") + pattern.pattern
        if not isinstance(pattern, str):
            raise TypeError(f"Grammar.regex expects a str pattern, got {type(pattern).__name__}")
        check_limits(limits, "Grammar.regex()")
        _check_encodable(pattern, "regex")
        classes = _python_perl_classes() if _PERL_CLASS.search(pattern) else None
        return cls(_core.Grammar.regex(pattern, limits, classes), "regex", pattern, limits=limits)

    @classmethod
    def choice(cls, options: Iterable[str], *, limits: _core.Limits | None = None) -> Grammar:
        """Exactly one of the given strings (e.g. ``["yes", "no", "maybe"]``).

        Compiled as a regex of the escaped alternatives, so it shares the regex engine.
        """
        check_limits(limits, "Grammar.choice()")
        options = _strings(options, "Grammar.choice", "option")
        pattern = "|".join(re.escape(o) for o in options)
        grammar = cls.regex(pattern, limits=limits)
        grammar._kind = "choice"
        return grammar

    @classmethod
    def ebnf(cls, text: str, *, start: str | None = None, limits: _core.Limits | None = None) -> Grammar:
        """A context-free grammar in corral's EBNF (see docs/grammars.md).

        ``start`` names the start rule (default: ``start``, else ``root``, else the first
        rule). Raises :class:`~corral.InvalidGrammarError` with ``line``/``column`` for
        syntax errors, undefined rules and a grammar that matches no string at all;
        unused rules, rules that can never produce a finite string and pieces that match
        nothing (dropped, with the alternatives that need them) give a
        :class:`GrammarWarning`.
        """
        return cls._cfg(text, "ebnf", start, limits)

    @classmethod
    def gbnf(cls, text: str, *, start: str | None = "root", limits: _core.Limits | None = None) -> Grammar:
        """A grammar in llama.cpp's GBNF (start rule ``root`` by default), read as
        llama.cpp reads it: its escapes, its classes, one rule per line, and a rule
        defined again replacing the earlier definition (with a :class:`GrammarWarning`)."""
        return cls._cfg(text, "gbnf", start, limits)

    @classmethod
    def lark(cls, text: str, *, start: str | None = "start", limits: _core.Limits | None = None) -> Grammar:
        """A grammar in Lark's syntax: rules, UPPERCASE terminals (strings, ``/regex/``,
        ``"a".."z"``), ``%import common.*`` and ``%ignore``.

        The language is the grammar's exact language with ignored text allowed between
        tokens (as Lark's Earley parser with ``lexer="dynamic_complete"`` sees it); tree
        shaping (``?rule``, ``!rule``, ``-> alias``, priorities) is ignored. ``%override``
        and ``%extend`` work as in Lark; templates and ``%declare`` raise
        :class:`~corral.InvalidGrammarError`, as do names defined twice and recursive
        terminals.
        """
        return cls._cfg(text, "lark", start, limits)

    @classmethod
    def json_schema(
        cls,
        schema: Any,
        *,
        strict: bool = True,
        whitespace: str = "compact",
        max_whitespace: int = 16,
        indent: int | str | None = None,
        property_order: str = "schema",
        resolver: dict[str, Any] | Callable[[str], Any] | None = None,
        spec_exact: bool = False,
        limits: _core.Limits | None = None,
    ) -> Grammar:
        r"""JSON that validates against a JSON Schema (see docs/json_schema.md).

        ``schema`` is a dict, a JSON string, a Pydantic model class, or any type Pydantic's
        ``TypeAdapter`` accepts (``list[int]``). Drafts 4, 6, 7, 2019-09 and 2020-12 are
        read (by ``$schema``; 2020-12 by default).

        * ``whitespace="compact"`` (default) allows no whitespace between tokens, as
          ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` writes;
          ``"flexible"`` allows up to ``max_whitespace`` of space, tab, CR and LF between
          tokens and around the value.
        * ``indent`` (an ``int`` from 0 to 16, or a ``str`` of up to 16 spaces and tabs)
          writes the output exactly as ``json.dumps(value, indent=indent,
          ensure_ascii=False)`` does (newlines and indentation, ``": "`` after keys, ``{}``
          and ``[]`` when empty, no trailing newline): every output equals
          ``json.dumps(json.loads(out), indent=indent, ensure_ascii=False)``. Numbers are
          then written as Python writes them (integers; floats of at most 15 significant
          digits as ``repr`` writes them), and values nest at most ``limits.max_indent_depth``
          (32) containers deep.
          Needs ``whitespace="compact"``.
        * ``property_order="schema"`` (default): object properties come in the schema's
          ``properties`` order, optional ones may be left out, other allowed properties come
          after them. ``"any"``: any order, at any number of properties (each property at most
          once, still exact about ``required``, counts and the other object keywords).
        * ``resolver`` resolves ``$ref``\s to other documents: a dict from URI to schema, or
          a function of the URI (``None`` where it has none). The drafts' metaschemas
          (``http://json-schema.org/draft-07/schema#`` and the like) ship with corral and
          need none; a document the resolver gives for one is the one read.
        * ``strict=True`` raises :class:`~corral.UnsupportedSchemaError` (with the keyword's
          JSON pointer) for a keyword corral cannot enforce exactly; ``strict=False`` drops
          it with a :class:`~corral.SchemaWarning` instead.
        * ``spec_exact=False`` (default) writes what a model should write: an object whose
          schema names properties and says nothing of other keys (no
          ``additionalProperties``, ``patternProperties``, ``unevaluatedProperties``) is
          closed to its named keys, and ``"type": "integer"`` values have no fraction
          (``3``, never ``3.0``). ``spec_exact=True`` gives the specification's exact
          language (extra keys allowed, ``3.0`` an integer from draft 6 on): for checking
          JSON another system wrote. Like XGrammar's ``strict_mode`` (default on), but an
          object that names no key (``{"type": "object"}``) stays open.

        Invalid schemas raise :class:`~corral.InvalidSchemaError` (a list or another
        non-object given as the schema too). Options are checked: a value of the wrong type
        raises ``TypeError`` (``max_whitespace=True``, ``strict="yes"``), one out of range
        :class:`~corral.GrammarError` (``max_whitespace=-1``, ``whitespace="pretty"``,
        ``indent`` with ``whitespace="flexible"``), each
        naming the option. ``limits`` holds the translation's caps (``max_schema_depth``,
        ``max_schema_alternatives``... see docs/limits.md) and its wall-clock time
        (``max_compile_ms``); :class:`~corral.LimitExceededError` names the one hit.
        """
        from ._schema import check_options, indent_string, schema_from
        from ._schema.native import compile_schema, given_text, schema_text

        check_options(strict=strict, whitespace=whitespace, max_whitespace=max_whitespace, resolver=resolver, draft=2020, property_order=property_order, integer_fraction=spec_exact, limits=limits, spec_exact=spec_exact, indent=indent)
        from_python_type = not isinstance(schema, (dict, bool, str, bytes, bytearray, list, tuple, int, float, type(None)))
        python_type = schema
        # JSON text whose numbers a float cannot hold goes to the core as it is (json.loads
        # would round a bound of more than 17 digits).
        given = schema if isinstance(schema, (str, bytes, bytearray)) else None
        schema = schema_from(schema)
        # A Python type (Pydantic) never gets integers with a fraction: JSON Schema counts
        # 1.0 as an integer, but Pydantic rejects large ones written that way.
        options = (strict, whitespace, max_whitespace, property_order, spec_exact, spec_exact is True and not from_python_type, indent_string(indent), 2020)
        text = (given_text(given, schema) if given is not None else None) or schema_text(schema, limits=limits)
        inner = compile_schema(text, resolver=resolver, options=options, limits=limits)
        for message in inner.schema_warnings:
            warnings.warn(message, SchemaWarning, stacklevel=2)
        # The source: the schema's JSON text and the options that shape the output.
        source = text if options == _DEFAULT_SCHEMA_OPTIONS else f"{text} {options!r}"
        grammar = cls(inner, "json_schema", source, "start", limits=limits)
        grammar._schema_warnings = list(inner.schema_warnings)
        grammar._python_type = python_type if from_python_type else None
        return grammar

    @classmethod
    def ban(
        cls,
        phrases: Iterable[str],
        *,
        ignore_case: bool = False,
        whole_words: bool = False,
        mode: str = "mask",
        limits: _core.Limits | None = None,
    ) -> Grammar:
        r"""Text that contains none of ``phrases`` (strings, e.g. ``["talk", "damn you"]``).

        * ``ignore_case=True`` bans every casing (``Talk``, ``TALK``) under Unicode simple
          case folding (unlike Python's ``re.IGNORECASE``, ``İ`` and ``ı`` are not variants
          of ``i``).
        * ``whole_words=True`` bans a phrase only where no word character (Python's ``\w``)
          comes right before or after it: ``talk`` is banned, ``talks`` and ``stalk`` are not.
        * ``mode="mask"`` (default): an exact automaton of the text without the phrases, so
          masks never let a phrase form, whichever tokens would spell it (split across
          tokens, starting or ending inside a token). Its language is text of whole UTF-8
          characters.
        * ``mode="rollback"``: :func:`corral.generate` samples freely, and when a
          phrase appears it rolls back to the token where the phrase started, bans that
          token at that position and goes on (the model's key/value cache is truncated,
          not recomputed). The model's choices are changed only where a phrase appeared.
          Such a grammar has no mask: it is only for :func:`corral.generate`.

        Combine with another constraint by ``&``: ``Grammar.json_schema(s) & Grammar.ban([...])``.
        """
        phrases = _strings(phrases, "Grammar.ban", "phrase")
        check_bool(ignore_case, "ignore_case", "Grammar.ban()")
        check_bool(whole_words, "whole_words", "Grammar.ban()")
        check_limits(limits, "Grammar.ban()")
        for i, phrase in enumerate(phrases):
            if not phrase:
                raise GrammarError(f"Grammar.ban: phrase {i} is empty (every text would contain it)")
        if mode not in ("mask", "rollback"):
            raise GrammarError(f"Grammar.ban: mode must be 'mask' or 'rollback', got {mode!r}")
        spec = BanSpec(tuple(dict.fromkeys(phrases)), ignore_case, whole_words, mode)
        if mode == "rollback":
            grammar = cls(None, "ban", spec.describe())
        else:
            text = spec.ebnf()
            inner = _core.Grammar.cfg(text, "ebnf", "start", limits, _python_perl_classes())
            grammar = cls(inner, "ban", text, "start", limits=limits)
        grammar._ban = spec
        return grammar

    def __and__(self, other: Grammar) -> Grammar:
        """The output must satisfy both grammars: at each step a token is allowed only where
        every part allows it (e.g. ``Grammar.json_schema(s) & Grammar.ban(["talk"])``)."""
        if not isinstance(other, Grammar):
            return NotImplemented
        parts = self.parts + other.parts
        grammar = Grammar(None, "all_of", " & ".join(repr(p) for p in parts))
        grammar._parts = parts
        return grammar

    @classmethod
    def structural_tag(
        cls,
        spec: dict[str, Any] | str,
        *,
        whitespace: str = "flexible",
        max_whitespace: int = 16,
        limits: _core.Limits | None = None,
    ) -> Grammar:
        """An output made of parts, described in XGrammar's structural-tag JSON format
        (``{"type": "structural_tag", "format": {...}}``, a dict or its JSON text): free
        text, tagged regions such as tool calls (``tag``), free text in which each trigger
        starts one of some tags (``triggered_tags``), JSON Schemas, grammars (GBNF, start
        rule ``root``), regexes, strings, and their sequences, alternatives and
        repetitions. See docs/tool_calls.md for each format and where corral differs.

        ``whitespace``/``max_whitespace`` apply to every ``json_schema`` format, as in
        :meth:`json_schema`; the default allows the spaces models write in tool arguments
        (``{"city": "Paris"}``). A malformed description raises
        :class:`~corral.InvalidGrammarError` naming the format's JSON pointer; formats
        corral does not support (token-level formats, ``dispatch``, the length budgets of
        ``any_text``) are refused the same way. A ``json_schema`` format with an XML
        ``style`` (``qwen_xml``, ``glm_xml``, ``deepseek_xml``, ...) writes the arguments
        as parameters in the model's markers, each value decided by the schema.
        """
        from ._schema import check_options
        from ._schema.native import schema_text

        if isinstance(spec, dict):
            try:
                text = json.dumps(spec, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError, RecursionError):
                # Says what is wrong and where; a description nested past Python's recursion
                # limit but within `max_schema_document_depth` is written all the same.
                try:
                    text = schema_text(spec, "the structural tag", limits)
                except InvalidSchemaError as e:
                    raise InvalidGrammarError(str(e)) from None
        elif isinstance(spec, str):
            text = spec
        else:
            raise TypeError(f"Grammar.structural_tag expects a dict or a JSON string, got {type(spec).__name__}")
        _check_encodable(text, "structural tag")
        check_options(strict=True, whitespace=whitespace, max_whitespace=max_whitespace, resolver=None, draft=2020, property_order="schema", integer_fraction=False, limits=limits, spec_exact=False, indent=None, where="Grammar.structural_tag()")
        options = (True, whitespace, max_whitespace, "schema", False, False, None, 2020)
        # Its `regex` and `grammar` formats read `\d \w \s` as Python's `re` does, as
        # Grammar.regex does (the JSON text holds them as `\\w`).
        classes = _python_perl_classes() if _PERL_CLASS.search(text) else None
        inner = _core.Grammar.structural_tag(text, options, limits, classes)
        for message in list(inner.schema_warnings) + list(inner.warnings):
            warnings.warn(message, GrammarWarning, stacklevel=2)
        source = text if (whitespace, max_whitespace) == ("flexible", 16) else f"{text} {(whitespace, max_whitespace)!r}"
        grammar = cls(inner, "structural_tag", source, limits=limits)
        grammar._schema_warnings = list(inner.schema_warnings)
        grammar._marker_texts = tuple(inner.marker_texts)
        return grammar

    @classmethod
    def tool_calls(
        cls,
        tools: list[dict[str, Any]],
        *,
        format: str = "hermes",
        tool_choice: Any = "auto",
        parallel: bool = True,
        reasoning: tuple[str, str] | bool | None = None,
        reasoning_budget: int | None = None,
        whitespace: str = "flexible",
        limits: _core.Limits | None = None,
    ) -> Grammar:
        """A model's turn with tool calls, for OpenAI-style tool definitions
        (``{"type": "function", "function": {"name", "parameters"}}``), written in the
        chat format of the model's family:

        * ``"hermes"`` (Qwen 2.5/3, Hermes): ``<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>``;
        * ``"llama3_json"`` (Llama 3.1): ``{"name": ..., "parameters": {...}}``;
        * ``"mistral"``: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]``;
        * ``"qwen3_xml"`` (Qwen 3.5, Qwen3-Coder): ``<tool_call>\n<function=NAME>\n<parameter=KEY>VALUE</parameter>...\n</function>\n</tool_call>``;
        * ``"glm"`` (GLM 4.7): ``<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>...</tool_call>``;
        * ``"deepseek_v3"`` (DeepSeek V3, R1): ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>``;
        * ``"minimax"`` (MiniMax M2): ``<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>...</invoke>\n</minimax:tool_call>``;
        * ``"harmony"`` (gpt-oss): messages ``<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>``
          and ``<|channel|>final<|message|>...<|end|>``, separated by ``<|start|>assistant``;
        * ``"llama4"`` (Llama 4, pythonic): the whole turn is text, or a Python list of calls
          ``[NAME(KEY=VALUE, ...), ...]`` (values as Python literals: ``"..."``, ``True``,
          ``None``, lists, dicts), bare or between ``<|python_start|>`` and ``<|python_end|>``.

        XML arguments are written as docs/tool_calls.md says (strings raw, other values as
        JSON). Free text may come before, between and after calls (for ``"mistral"``,
        ``"deepseek_v3"`` and ``"minimax"``, one block of calls ends the turn; ``"harmony"``
        has messages, not free text). ``tool_choice``: ``"auto"`` (calls allowed),
        ``"none"`` (the format's marker cannot be written), ``"required"`` (at least one
        call, and no text before it), or ``{"name": ...}`` (only that tool, required).
        ``parallel=False`` allows one call at most. ``reasoning=("<think>", "</think>")``
        puts free reasoning between those markers first; the rest applies after the closing
        one; ``reasoning=True`` means ``<think>``/``</think>`` (harmony: analysis messages).
        ``reasoning_budget=N``: the reasoning spends at most N of the model's tokens (those
        that start inside it, as XGrammar counts them), after which only its closing
        marker can follow (harmony: each analysis message); the matcher counts them as
        tokens are accepted.
        The result is :meth:`structural_tag` of the description
        ``corral.tools.tool_calls_spec`` builds.
        """
        from .tools import tool_calls_spec

        check_limits(limits, "Grammar.tool_calls()")
        spec = tool_calls_spec(tools, format=format, tool_choice=tool_choice, parallel=parallel, reasoning=reasoning, reasoning_budget=reasoning_budget)
        return cls.structural_tag(spec, whitespace=whitespace, limits=limits)

    @classmethod
    def union(cls, *grammars: Grammar, limits: _core.Limits | None = None) -> Grammar:
        """Any one of the grammars: the output matches at least one of them (``g1 | g2``).

        Regexes, EBNF/GBNF/Lark grammars, JSON Schemas, bans by mask and other unions and
        concatenations can be joined; the result is one grammar (a union of regexes is still
        matched by the regex engine when its automaton stays small). Grammars combined with
        ``&`` and rollback bans cannot be parts (join first, then intersect:
        ``(a | b) & ban``). Repeated JSON object keys stay refused: a JSON part joined
        with text is read as JSON alone (see docs/grammars.md). A part
        that matches no string (a regex such as ``[^\\s\\S]``) is left out with a
        :class:`GrammarWarning`; :class:`EmptyLanguageError` when no part is left.
        """
        return cls._join("union", grammars, limits)

    @classmethod
    def concat(cls, *grammars: Grammar, limits: _core.Limits | None = None) -> Grammar:
        """The grammars one after the other, in order (``g1 + g2``): the output is a match
        of the first followed directly by a match of the second, and so on. Parts as for
        :meth:`union`; one that matches no string makes the whole an
        :class:`EmptyLanguageError`."""
        return cls._join("concat", grammars, limits)

    def __or__(self, other: Grammar) -> Grammar:
        """``Grammar.union(self, other)``."""
        if not isinstance(other, Grammar):
            return NotImplemented
        return Grammar.union(self, other)

    def __add__(self, other: Grammar) -> Grammar:
        """``Grammar.concat(self, other)``."""
        if not isinstance(other, Grammar):
            return NotImplemented
        return Grammar.concat(self, other)

    @classmethod
    def _join(cls, join: str, grammars: tuple[Grammar, ...], limits: _core.Limits | None) -> Grammar:
        word = "union" if join == "union" else "concatenation"
        check_limits(limits, f"Grammar.{join}()")
        if not grammars:
            raise GrammarError(f"a {word} needs at least one grammar")
        flat: list[Grammar] = []
        for g in grammars:
            if not isinstance(g, Grammar):
                raise TypeError(f"Grammar.{join} expects Grammar objects, got {type(g).__name__}")
            if g._inner is None:
                what = "an intersection (&)" if g._parts else "a rollback ban"
                raise GrammarError(f"{what} cannot be part of a {word}: it is matched beside the grammar, not inside it; join first, then intersect (`(a | b) & c`)")
            # Nested joins of the same kind flatten: (a | b) | c is a | b | c.
            flat.extend(g._operands if g._kind == join else (g,))
        if len(flat) == 1:
            return flat[0]
        inner = _core.Grammar.join(join, [g._inner for g in flat], limits)  # type: ignore[misc]
        sep = " | " if join == "union" else " + "
        grammar = cls(inner, join, sep.join(repr(g) for g in flat), limits=limits)
        grammar._operands = tuple(flat)
        grammar._schema_warnings = [w for g in flat for w in g._schema_warnings]
        grammar._marker_texts = tuple(t for g in flat for t in g._marker_texts)
        own = [w for w in inner.warnings if not any(w in g.warnings for g in flat)]
        for message in own:
            warnings.warn(message, GrammarWarning, stacklevel=3)
        return grammar

    @property
    def marker_texts(self) -> tuple[str, ...]:
        """The fixed strings of a structural tag (triggers, tag begins and ends, constant
        strings), of every part of a join or intersection: a special token whose text
        occurs in one of them is read as that text when the grammar is compiled (see
        :meth:`Vocabulary.with_special_text`). Empty for other grammars."""
        if self._parts:
            return tuple(t for p in self._parts for t in p.marker_texts)
        return self._marker_texts

    @property
    def parts(self) -> tuple[Grammar, ...]:
        """The grammars that must all hold: ``(self,)`` unless built with ``&``."""
        return self._parts or (self,)

    @property
    def ban_spec(self) -> BanSpec | None:
        """The phrases and options of a :meth:`ban` grammar (None for other grammars)."""
        return self._ban

    @classmethod
    def _cfg(cls, text: str, dialect: str, start: str | None, limits: _core.Limits | None) -> Grammar:
        if not isinstance(text, str):
            raise TypeError(f"grammar text must be a str, got {type(text).__name__}")
        _check_encodable(text, "grammar")
        check_limits(limits, f"Grammar.{dialect}()")
        classes = _python_perl_classes() if _PERL_CLASS.search(text) else None
        inner = _core.Grammar.cfg(text, dialect, start, limits, classes)
        for message in inner.warnings:
            warnings.warn(message, GrammarWarning, stacklevel=3)
        return cls(inner, dialect, text, start, limits=limits)

    @property
    def warnings(self) -> list[str]:
        """Non-fatal findings about the grammar (e.g. unused rules, dropped schema keywords)."""
        if self._parts:
            return [w for part in self._parts for w in part.warnings]
        # A rollback-mode ban has no native grammar, hence no findings of its own.
        native = list(self._inner.warnings) if self._inner is not None else []
        return native + self._schema_warnings

    @property
    def kind(self) -> str:
        """The front-end that built this grammar (``"regex"``, ...)."""
        return self._kind

    @property
    def source(self) -> str:
        """The grammar's source text (the pattern, for a regex; for a JSON Schema, the
        schema's JSON text, followed by its options when they are not the defaults)."""
        return self._source

    @property
    def start(self) -> str | None:
        """The requested start rule of a grammar text (None: the default)."""
        return self._start

    def _key(self) -> tuple[Any, ...]:
        if self._parts:
            return ("all_of", tuple(p._key() for p in self._parts))
        if self._operands:
            return (self._kind, tuple(p._key() for p in self._operands))
        return (self._kind, self._source, self._start)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Grammar) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    # Pickling saves the fields; the native grammar in `_inner` pickles as the constructor
    # call that built it and is built again on load (in the loading process).
    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in Grammar.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        if self._parts or self._operands:
            return f"({self._source})" if self._operands else self._source
        if self._ban is not None:
            return self._ban.describe()
        return f"Grammar.{self._kind}({self._source!r})"


class BanSpec:
    """The phrases of :meth:`Grammar.ban` and how they match, with the two forms of the
    same condition: an EBNF grammar for masks and a Python ``re`` pattern for rollback."""

    __slots__ = ("phrases", "ignore_case", "whole_words", "mode")

    def __init__(self, phrases: tuple[str, ...], ignore_case: bool, whole_words: bool, mode: str):
        self.phrases = phrases
        self.ignore_case = ignore_case
        self.whole_words = whole_words
        self.mode = mode

    def __reduce__(self) -> tuple[type[BanSpec], tuple[Any, ...]]:
        return (BanSpec, (self.phrases, self.ignore_case, self.whole_words, self.mode))

    def _alternatives(self) -> str:
        # Longest first: the order does not change the language, only makes it readable.
        alternatives = "|".join(re.escape(p) for p in sorted(self.phrases, key=lambda p: (-len(p), p)))
        if self.ignore_case:
            # IGNORECASE pairs i/I with İ and ı; a ban folds by Unicode simple case folding,
            # which does not. Pin those four, in both forms.
            alternatives = re.sub("[iIİı]", lambda m: "(?-i:[iI])" if m.group() in "iI" else f"(?-i:{m.group()})", alternatives)
        return alternatives

    def ebnf(self) -> str:
        """One rule: the complement of "text containing a phrase"."""
        alternatives = self._alternatives().replace("/", "\\/")
        if self.whole_words:
            contains = rf"(?:(?s:.*)\W)?(?:{alternatives})(?:\W(?s:.*))?"
        else:
            contains = rf"(?s:.*)(?:{alternatives})(?s:.*)"
        flags = "i" if self.ignore_case else ""
        return f"start ::= not!(/{contains}/{flags}) ;\n"

    def pattern(self, final: bool = True) -> re.Pattern[str]:
        """A Python regex that finds an occurrence of a phrase in text (the same condition as
        :meth:`ebnf`). ``final=False`` is for text that may go on: a whole-word phrase then
        needs a character after it (a non-word one), not just the end of the text."""
        body = f"(?:{self._alternatives()})"
        if self.whole_words:
            body = rf"(?<!\w){body}" + (r"(?!\w)" if final else r"(?=\W)")
        return re.compile(body, re.IGNORECASE if self.ignore_case else 0)

    def describe(self) -> str:
        """The call that makes this ban, for ``repr`` and cache keys."""
        options = [f"{name}=True" for name in ("ignore_case", "whole_words") if getattr(self, name)]
        return f"Grammar.ban({list(self.phrases)!r}{''.join(', ' + o for o in options)}, mode={self.mode!r})"
