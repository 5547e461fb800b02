"""The options of :meth:`corral.Grammar.json_schema`, checked in Python: a value of the
wrong type is a ``TypeError``, one out of range a :class:`~corral.GrammarError`, each
naming the option (before any schema is read)."""

from __future__ import annotations

# The ranges of two options (not caps on a schema): the largest whitespace run
# `whitespace="flexible"` allows between tokens, and the largest `indent` (spaces, or
# characters of an indent string).
MAX_WHITESPACE = 1024
MAX_INDENT = 16

_DRAFTS = (4, 6, 7, 2019, 2020)


def check_options(*, strict, whitespace, max_whitespace, resolver, draft, property_order, integer_fraction, limits, spec_exact=False, indent=None, where="Grammar.json_schema()") -> None:
    """Raises TypeError (wrong type) or GrammarError (bad value) naming a bad option
    (``where``: the call it was given to)."""
    from .._args import check_limits
    from ..errors import GrammarError

    def need_bool(name, value):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")

    need_bool("strict", strict)
    need_bool("spec_exact", spec_exact)
    need_bool("integer_fraction", integer_fraction)
    for name, value, allowed in (("whitespace", whitespace, ("compact", "flexible")), ("property_order", property_order, ("schema", "any"))):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, one of {', '.join(map(repr, allowed))}; got {value!r}")
        if value not in allowed:
            raise GrammarError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    if isinstance(max_whitespace, bool) or not isinstance(max_whitespace, int):
        raise TypeError(f"max_whitespace must be an int, got {max_whitespace!r}")
    indent_string(indent)
    if indent is not None and whitespace != "compact":
        raise GrammarError(f"indent={indent!r} fixes every whitespace character; it cannot be combined with whitespace={whitespace!r} (leave whitespace='compact')")
    if not 0 <= max_whitespace <= MAX_WHITESPACE:
        raise GrammarError(f"max_whitespace must be between 0 and {MAX_WHITESPACE}, got {max_whitespace!r}")
    if resolver is not None and not isinstance(resolver, dict) and not callable(resolver):
        raise TypeError(f"resolver must be None, a dict from URI to schema or a function of the URI, got {resolver!r}")
    if isinstance(draft, bool) or not isinstance(draft, int):
        raise TypeError(f"draft must be an int, one of {_DRAFTS}, got {draft!r}")
    if draft not in _DRAFTS:
        raise GrammarError(f"draft must be one of {_DRAFTS}, got {draft!r}")
    check_limits(limits, where)


def indent_string(indent) -> str | None:
    """The text one nesting level is indented by, as ``json.dumps(indent=indent)`` uses it
    (None: no indentation, compact output). Raises TypeError for a value that is neither
    an int nor a str, GrammarError for one out of range."""
    from ..errors import GrammarError

    if indent is None:
        return None
    if isinstance(indent, bool) or not isinstance(indent, (int, str)):
        raise TypeError(f"indent must be None, an int or a str of spaces and tabs, got {indent!r}")
    if isinstance(indent, int):
        if not 0 <= indent <= MAX_INDENT:
            raise GrammarError(f"indent must be between 0 and {MAX_INDENT}, got {indent!r}")
        return " " * indent
    if len(indent) > MAX_INDENT or indent.strip(" \t"):
        raise GrammarError(f"indent must be a str of at most {MAX_INDENT} spaces and tabs, got {indent!r}")
    return indent
