"""Constraint descriptions: :class:`Grammar` and its constructors."""

from __future__ import annotations

import functools
import re
import warnings
from typing import Optional, Union

from . import _core
from .errors import GrammarError

# Python `re` flags that have an inline spelling, in the order Python prints them.
_INLINE_FLAGS = (
    (re.ASCII, "a"),
    (re.IGNORECASE, "i"),
    (re.MULTILINE, "m"),
    (re.DOTALL, "s"),
    (re.VERBOSE, "x"),
)


# A backslash followed by d, w or s (either case) may be a Perl class.
_PERL_CLASS = re.compile(r"\\[dwsDWS]")


@functools.lru_cache(maxsize=1)
def _python_perl_classes() -> tuple:
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

    def ranges(pattern: str) -> list:
        out = []
        for m in re.finditer(pattern, text):
            a, b = m.start(), m.end() - 1
            if a < 0xD800 <= b:  # a run across the surrogate gap is two ranges
                out.append((chr(a), chr(0xD7FF)))
                a = 0xD800
            out.append((chr(code_point(a)), chr(code_point(b))))
        return out

    return (ranges(r"\d+"), ranges(r"\w+"), ranges(r"\s+"))


class GrammarWarning(UserWarning):
    """Something in a grammar that is allowed but probably unintended (an unused rule)."""


class SchemaWarning(GrammarWarning):
    """A JSON Schema keyword was dropped (``strict=False``) or is treated loosely."""


class Grammar:
    """A validated constraint on the model's output, independent of any vocabulary.

    Build one with a constructor (``Grammar.regex(...)``), then pair it with a
    :class:`~corral.Vocabulary` through :func:`corral.compile`. Grammars compare and hash by
    content, which is what the compile cache keys on.
    """

    __slots__ = ("_inner", "_kind", "_source", "_start", "_schema_warnings")

    def __init__(self, inner: _core.Grammar, kind: str, source: str, start: Optional[str] = None):
        self._inner = inner
        self._kind = kind
        self._source = source
        self._start = start
        self._schema_warnings: list = []

    @classmethod
    def regex(cls, pattern: Union[str, "re.Pattern[str]"], *, limits: "_core.Limits | None" = None) -> "Grammar":
        """A regular expression in Python ``re`` syntax, with the meaning of ``re.fullmatch``.

        Unicode ``\\d \\w \\s`` as in Python; ``.`` and negated classes match whole UTF-8
        characters. A compiled ``re.Pattern`` is accepted (its flags are kept).

        Raises :class:`~corral.RegexSyntaxError` for invalid syntax and
        :class:`~corral.UnsupportedFeatureError` for backreferences, look-around, possessive
        quantifiers, atomic groups, word boundaries and anchors in the middle of the
        pattern, each with its position.
        """
        if isinstance(pattern, re.Pattern):
            if isinstance(pattern.pattern, bytes):
                raise GrammarError("bytes patterns are not supported: use a str pattern")
            flags = "".join(ch for flag, ch in _INLINE_FLAGS if pattern.flags & flag)
            pattern = (f"(?{flags})" if flags else "") + pattern.pattern
        if not isinstance(pattern, str):
            raise TypeError(f"Grammar.regex expects a str pattern, got {type(pattern).__name__}")
        classes = _python_perl_classes() if _PERL_CLASS.search(pattern) else None
        return cls(_core.Grammar.regex(pattern, limits, classes), "regex", pattern)

    @classmethod
    def choice(cls, options, *, limits: "_core.Limits | None" = None) -> "Grammar":
        """Exactly one of the given strings (e.g. ``["yes", "no", "maybe"]``).

        Compiled as a regex of the escaped alternatives, so it shares the regex engine.
        """
        options = list(options)
        if not options:
            raise GrammarError("Grammar.choice needs at least one option")
        for i, option in enumerate(options):
            if not isinstance(option, str):
                raise TypeError(f"Grammar.choice options must be str; option {i} is {type(option).__name__}")
        pattern = "|".join(re.escape(o) for o in options)
        grammar = cls.regex(pattern, limits=limits)
        grammar._kind = "choice"
        return grammar

    @classmethod
    def ebnf(cls, text: str, *, start: Optional[str] = None, limits: "_core.Limits | None" = None) -> "Grammar":
        """A context-free grammar in corral's EBNF (see docs/grammars.md).

        ``start`` names the start rule (default: ``start``, else ``root``, else the first
        rule). Raises :class:`~corral.InvalidGrammarError` with ``line``/``column`` for
        syntax errors, undefined rules, rules that can never produce a finite string and
        terminals that match nothing; unused rules give a :class:`GrammarWarning`.
        """
        return cls._cfg(text, "ebnf", start, limits)

    @classmethod
    def gbnf(cls, text: str, *, start: Optional[str] = "root", limits: "_core.Limits | None" = None) -> "Grammar":
        """A grammar in llama.cpp's GBNF (start rule ``root`` by default)."""
        return cls._cfg(text, "gbnf", start, limits)

    @classmethod
    def lark(cls, text: str, *, start: Optional[str] = "start", limits: "_core.Limits | None" = None) -> "Grammar":
        """A grammar in Lark's syntax: rules, UPPERCASE terminals (strings, ``/regex/``,
        ``"a".."z"``), ``%import common.*`` and ``%ignore``.

        The language is the grammar's exact language with ignored text allowed between
        tokens (as Lark's Earley parser with ``lexer="dynamic_complete"`` sees it); tree
        shaping (``?rule``, ``!rule``, ``-> alias``, priorities) is ignored. Templates and
        ``%declare``/``%override``/``%extend`` raise :class:`~corral.InvalidGrammarError`.
        """
        return cls._cfg(text, "lark", start, limits)

    @classmethod
    def json_schema(
        cls,
        schema,
        *,
        strict: bool = True,
        whitespace: str = "compact",
        max_whitespace: int = 16,
        property_order: str = "schema",
        resolver=None,
        limits: "_core.Limits | None" = None,
    ) -> "Grammar":
        r"""JSON that validates against a JSON Schema (see docs/json_schema.md).

        ``schema`` is a dict, a JSON string, a Pydantic model class, or any type Pydantic's
        ``TypeAdapter`` accepts (``list[int]``). Drafts 4, 6, 7, 2019-09 and 2020-12 are
        read (by ``$schema``; 2020-12 by default).

        * ``whitespace="compact"`` (default) allows no whitespace between tokens, as
          ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` writes;
          ``"flexible"`` allows up to ``max_whitespace`` of space, tab, CR and LF between
          tokens and around the value.
        * ``property_order="schema"`` (default): object properties come in the schema's
          ``properties`` order, optional ones may be left out, other allowed properties come
          after them. ``"any"``: any order (each property at most once, still exact about
          ``required`` and counts; limited to objects of about 10 named properties).
        * ``resolver`` resolves ``$ref``\s to other documents: a dict from URI to schema, or
          a function of the URI.
        * ``strict=True`` raises :class:`~corral.UnsupportedSchemaError` (with the keyword's
          JSON pointer) for a keyword corral cannot enforce exactly; ``strict=False`` drops
          it with a :class:`~corral.SchemaWarning` instead.

        Invalid schemas raise :class:`~corral.InvalidSchemaError`.
        """
        from ._schema import schema_from, translate

        from_python_type = not isinstance(schema, (dict, bool, str, bytes))
        schema = schema_from(schema)
        # A Python type (Pydantic) gets integers without a fraction: JSON Schema counts
        # 1.0 as an integer, but Pydantic rejects large ones written that way.
        text, translator = translate(
            schema,
            strict=strict,
            whitespace=whitespace,
            max_whitespace=max_whitespace,
            resolver=resolver,
            property_order=property_order,
            integer_fraction=not from_python_type,
        )
        for message in translator.warnings:
            warnings.warn(message, SchemaWarning, stacklevel=2)
        classes = _python_perl_classes() if _PERL_CLASS.search(text) else None
        # 0: no property is determinized with its value; keys join their (shared) value
        # terminals by concatenation (see LowerOptions in crates/corral-core/src/cfg/lower.rs).
        inner = _core.Grammar.cfg(text, "ebnf", "start", limits, classes, 0)
        grammar = cls(inner, "json_schema", text, "start")
        grammar._schema_warnings = list(translator.warnings)
        return grammar

    @classmethod
    def _cfg(cls, text: str, dialect: str, start: Optional[str], limits) -> "Grammar":
        if not isinstance(text, str):
            raise TypeError(f"grammar text must be a str, got {type(text).__name__}")
        classes = _python_perl_classes() if _PERL_CLASS.search(text) else None
        inner = _core.Grammar.cfg(text, dialect, start, limits, classes)
        for message in inner.warnings:
            warnings.warn(message, GrammarWarning, stacklevel=3)
        return cls(inner, dialect, text, start)

    @property
    def warnings(self) -> list:
        """Non-fatal findings about the grammar (e.g. unused rules, dropped schema keywords)."""
        return list(self._inner.warnings) + self._schema_warnings

    @property
    def kind(self) -> str:
        """The front-end that built this grammar (``"regex"``, ...)."""
        return self._kind

    @property
    def source(self) -> str:
        """The grammar's source text (the pattern, for a regex)."""
        return self._source

    @property
    def start(self) -> Optional[str]:
        """The requested start rule of a grammar text (None: the default)."""
        return self._start

    def _key(self) -> tuple:
        return (self._kind, self._source, self._start)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Grammar) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Grammar.{self._kind}({self._source!r})"
