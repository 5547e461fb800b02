"""corral's exceptions. Every error corral raises is a :class:`CorralError`.

The native module raises these classes too: this module hands them to it once, at import
(``_core._register_errors``), so that both raise the very same classes.
"""

from __future__ import annotations

from . import _core


class CorralError(Exception):
    """Base class of every error corral raises."""


class GrammarError(CorralError, ValueError):
    """A constraint (regex, grammar, schema) is invalid."""


class RegexSyntaxError(GrammarError):
    """A regex does not parse. ``position`` is the character offset of the problem."""

    pattern: str = ""
    position: int = -1


class UnsupportedFeatureError(GrammarError):
    """Valid syntax that corral cannot enforce exactly (e.g. a backreference in a regex).

    ``construct`` names it; ``position`` is its character offset in ``pattern``.
    """

    construct: str = ""
    pattern: str = ""
    position: int = -1


class InvalidGrammarError(GrammarError):
    """A grammar text (EBNF, GBNF, Lark) is invalid: a syntax error, an undefined rule, a
    name defined twice (Lark), a recursive terminal, a start rule that produces no string.
    (A rule that can never produce a finite string, or a piece that matches nothing, is
    only a :class:`corral.GrammarWarning` where the rest of the grammar still matches.)

    ``line`` and ``column`` are 1-based (0 when the problem has no single place).
    """

    line: int = 0
    column: int = 0


class EmptyLanguageError(GrammarError):
    """The constraint matches no string at all, so no output could satisfy it."""


class SchemaError(GrammarError):
    """A JSON Schema that corral cannot turn into a grammar. ``pointer`` is the JSON
    pointer of the offending subschema (``""`` for the root), ``keyword`` the keyword."""

    def __init__(self, message: str, pointer: str = "", keyword: str = ""):
        super().__init__(message)
        self.pointer = pointer
        self.keyword = keyword


class InvalidSchemaError(SchemaError):
    """The schema itself is invalid: an unknown type name, a keyword with a value of the
    wrong kind, a ``$ref`` that cannot be resolved, a pattern that does not parse."""


class UnsupportedSchemaError(SchemaError, UnsupportedFeatureError):
    """A valid keyword that corral cannot enforce exactly (``strict=False`` drops it with a
    :class:`SchemaWarning` instead)."""


class LimitExceededError(CorralError):
    """A documented resource limit (:class:`corral.Limits`) was hit. ``limit`` names it."""

    limit: str = ""
    value: int = 0


class VocabularyError(CorralError, ValueError):
    """A vocabulary or tokenizer cannot be used."""


class MatcherError(CorralError, ValueError):
    """A bad call on a matcher or mask: wrong bitmask shape, rollback too far, bad token id."""


class DeadEndError(CorralError):
    """No token of the vocabulary can continue the output in the current state."""


class GenerationError(CorralError):
    """Generation could not go on: a model call failed, a prompt does not fit the model,
    or banned phrases left no way forward."""


class IncompleteOutputError(GenerationError):
    """:attr:`corral.Generation.parsed` was asked for an output that stopped before its
    JSON value was complete (``max_tokens`` ran out). ``text`` is what was generated."""

    def __init__(self, message: str, text: str = ""):
        super().__init__(message)
        self.text = text


class RollbackLimitError(GenerationError):
    """``mode="rollback"`` bans rolled back more than ``max_rollbacks`` times without
    finishing. ``rollbacks`` is the count, ``phrase`` the last phrase found."""

    def __init__(self, message: str, rollbacks: int = 0, phrase: str = ""):
        super().__init__(message)
        self.rollbacks = rollbacks
        self.phrase = phrase


class InternalError(CorralError):
    """A bug in corral (a Rust panic turned into an exception). Please report it."""


__all__ = [
    "CorralError",
    "GrammarError",
    "RegexSyntaxError",
    "UnsupportedFeatureError",
    "InvalidGrammarError",
    "EmptyLanguageError",
    "SchemaError",
    "InvalidSchemaError",
    "UnsupportedSchemaError",
    "LimitExceededError",
    "VocabularyError",
    "MatcherError",
    "DeadEndError",
    "GenerationError",
    "RollbackLimitError",
    "InternalError",
]

# The classes the native module raises, by name (it checks that each derives from CorralError).
_core._register_errors({name: globals()[name] for name in __all__})
