"""JSON Schema compiled by the Rust core: what stays in Python is what is Python's.

The schema (a dict, after ``schema_from`` turned Pydantic types into one) is written as
JSON text and handed to ``_core.Grammar.json_schema``. A ``resolver`` (a dict from URI to
schema, or a function of the URI) is asked for the documents the core names as missing,
until none is; a document it cannot supply is reported by the core at the ``$ref`` that
needs it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from .. import _core
from ..errors import InvalidSchemaError, LimitExceededError

_DEFAULT_LIMITS = _core.Limits()

# The most rounds of asking the resolver (each round's documents may point further).
MAX_RESOLVER_ROUNDS = 64


def schema_text(schema: Any, what: str = "the schema", limits: Any = None) -> str:
    """``schema`` as JSON text; InvalidSchemaError for a value that is not JSON (``NaN``,
    a non-string key, a lone surrogate) and LimitExceededError for one nested deeper than
    ``limits.max_schema_document_depth``, naming where."""
    try:
        text = _dumps(schema)
    except (TypeError, ValueError, RecursionError):
        # Find what is wrong, and where (a JSON value nested deeper than the interpreter's
        # recursion limit allows but within the document depth is written again).
        depth = _check_values(schema, what, (limits or _DEFAULT_LIMITS).max_schema_document_depth)
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 4 * depth + 1000))
        try:
            text = _dumps(schema)
        except (TypeError, ValueError) as e:
            raise InvalidSchemaError(f"{what} is not a JSON value: {e}") from None
        finally:
            sys.setrecursionlimit(old)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        _refuse_surrogates(schema)
    return text


# A number in JSON text that a Python float may not hold exactly: many digits, or a
# three-digit exponent (a cheap test before parsing again).
_LONG_NUMBER = re.compile(r"[0-9][0-9.eE+-]{16,}|[eE][+-]?[0-9]{3,}")


def given_text(source: str | bytes | bytearray, schema: Any) -> str | None:
    """The JSON text a caller gave (``schema`` is what ``schema_from`` parsed from it), to
    be read by the core as it is when one of its numbers is not exactly a Python float
    (``1.0000000000000000000000001``, ``1e400``); None when ``schema`` holds every number
    exactly (then its own text is the schema's, and a dict and its text are one grammar)."""
    text = source if isinstance(source, str) else bytes(source).decode("utf-8")
    if not _LONG_NUMBER.search(text):
        return None
    inexact = False

    def read_float(literal: str) -> float:
        nonlocal inexact
        value = float(literal)
        inexact = inexact or not math.isfinite(value) or Decimal(literal) != Decimal(repr(value))
        return value

    json.loads(text, parse_float=read_float)
    if not inexact:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        _refuse_surrogates(schema)
    return text


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _check_values(document: Any, what: str, max_depth: int) -> int:
    """The depth of ``document``'s nesting; InvalidSchemaError at the first value that is
    not JSON, LimitExceededError where it nests deeper than ``max_depth`` (a walk with its
    own stack: any depth is safe to look at)."""
    deepest = 0
    stack: list[tuple[Any, int, str]] = [(document, 0, "")]
    while stack:
        node, depth, pointer = stack.pop()
        deepest = max(deepest, depth)
        if depth > max_depth:
            error = LimitExceededError(
                f"limit exceeded: schema at {pointer or '/'}: JSON values nest {depth} deep needs more than Limits.max_schema_document_depth = {max_depth}; simplify the constraint or raise the limit"
            )
            error.limit, error.value, error.pointer, error.keyword = "max_schema_document_depth", max_depth, pointer, ""
            raise error
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    raise InvalidSchemaError(f"{what} at {pointer or '/'}: object key {k!r} is not a string", pointer=pointer)
                stack.append((v, depth + 1, f"{pointer}/{k.replace('~', '~0').replace('/', '~1')}"))
        elif isinstance(node, (list, tuple)):
            stack.extend((v, depth + 1, f"{pointer}/{i}") for i, v in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node):
            raise InvalidSchemaError(f"{what} at {pointer or '/'}: {node!r} is not a JSON number", pointer=pointer)
        elif node is not None and not isinstance(node, (str, int, float, bool)):
            raise InvalidSchemaError(f"{what} at {pointer or '/'}: {type(node).__name__} {node!r:.40} is not a JSON value", pointer=pointer)
    return deepest


def compile_schema(
    text: str,
    *,
    resolver: dict[str, Any] | Callable[[str], Any] | None,
    options: tuple[bool, str, int, str, bool, bool, str | None, int],
    limits: Any,
) -> _core.Grammar:
    """The core's grammar for the schema in JSON ``text`` (see ``schema_text``, and
    :meth:`corral.Grammar.json_schema`)."""
    documents = _documents(text, resolver, options, limits)
    return _core.Grammar.json_schema(text, list(documents.items()), options, limits)


def order(
    schema: Any,
    value: Any,
    *,
    resolver: dict[str, Any] | Callable[[str], Any] | None = None,
    options: tuple[bool, str, int, str, bool, bool, str | None, int] = (True, "compact", 16, "schema", False, False, None, 2020),
) -> Any:
    """``value`` with its object keys in the order the grammar of ``schema`` writes them
    (for tests and tools that force a known valid value through the grammar)."""
    text = schema_text(schema)
    documents = _documents(text, resolver, options, None)
    ordered = _core.Grammar.json_schema_order(text, list(documents.items()), options, schema_text(value, "the value"))
    return json.loads(ordered)


def _documents(text: str, resolver: Any, options: Any, limits: Any) -> dict[str, str]:
    """The documents the resolver supplies for the schema's ``$ref``s, round by round."""
    documents: dict[str, str] = {}
    if resolver is None:
        return documents  # nothing can be supplied: the compile itself names what is missing
    for _ in range(MAX_RESOLVER_ROUNDS):
        missing = _core.Grammar.json_schema_missing(text, list(documents.items()), options, limits)
        found = False
        for uri in missing:
            doc = _ask(resolver, uri)
            if doc is not None:
                documents[uri] = doc
                found = True
        if not found:
            break
    return documents


def _ask(resolver: dict[str, Any] | Callable[[str], Any] | None, uri: str) -> str | None:
    """The JSON text of document ``uri`` from the resolver (None: it has none)."""
    if resolver is None:
        return None
    found = resolver(uri) if callable(resolver) else resolver.get(uri)
    if found is None:
        return None
    if isinstance(found, (bytes, bytearray)):
        found = found.decode("utf-8", "replace")
    if isinstance(found, str):
        return found  # JSON text: the core reads it (and says where it is not JSON)
    if not isinstance(found, (dict, bool)):
        raise InvalidSchemaError(f"the document for {uri} is not a schema (an object or a boolean)")
    return schema_text(found, f"the document for {uri}")


def _refuse_surrogates(schema: Any) -> None:
    """Raises InvalidSchemaError at the first string of ``schema`` (a key or a value)
    holding a lone surrogate: Python's JSON reader accepts ``"\\ud800"``, but no UTF-8
    output can contain it."""
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        pointer, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            here = f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"
            for text in (key, value):
                if isinstance(text, str):
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError as e:
                        raise InvalidSchemaError(
                            f"{here or '/'}: lone surrogate U+{ord(text[e.start]):04X} cannot be written as UTF-8 text",
                            pointer=here,
                        ) from None
            stack.append((here, value))
    raise InvalidSchemaError("the schema holds a lone surrogate, which cannot be written as UTF-8 text")
