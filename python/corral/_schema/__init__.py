"""JSON Schema (and Pydantic) front-end: schemas become corral EBNF."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..grammar import SchemaWarning
from .native import _refuse_surrogates
from .options import check_options, indent_string
from .translate import Translator

__all__ = ["SchemaWarning", "Translator", "check_options", "indent_string", "schema_from", "translate"]


def schema_from(source: Any) -> dict | bool:
    """A schema dict from a dict, a bool, a JSON string (or bytes), a Pydantic model class
    or any type Pydantic's ``TypeAdapter`` accepts (``list[int]``, a dataclass, a TypedDict).

    Raises :class:`~corral.InvalidSchemaError` for a JSON text that does not parse or is
    not an object or a boolean, for other JSON values (a list, a number, ``None``), and
    for a Python type Pydantic cannot describe.
    """
    from ..errors import InvalidSchemaError

    if isinstance(source, (dict, bool)):
        return source
    if isinstance(source, (str, bytes, bytearray)):
        try:
            parsed = json.loads(source, parse_constant=_no_constant)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            where = f" at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
            raise InvalidSchemaError(f"the schema is not valid JSON: {getattr(e, 'msg', e)}{where}") from None
        except (ValueError, RecursionError) as e:
            raise InvalidSchemaError(f"the schema is not valid JSON: {e}") from None
        if not isinstance(parsed, (dict, bool)):
            raise InvalidSchemaError(f"a schema must be a JSON object or a boolean; the text holds {_json_kind(parsed)}")
        return parsed
    if source is None or isinstance(source, (list, tuple, int, float)):
        raise InvalidSchemaError(f"a schema must be a JSON object or a boolean, got {_json_kind(source)}")
    model_json_schema = getattr(source, "model_json_schema", None)
    try:
        if callable(model_json_schema):
            return model_json_schema()
        try:
            from pydantic import TypeAdapter
        except ImportError:
            raise TypeError(f"a schema must be a dict, a JSON string or a Pydantic model; got {source!r} (install pydantic for Python types)") from None
        return TypeAdapter(source).json_schema()
    except TypeError:
        raise
    except Exception as e:  # Pydantic's own errors: the type has no JSON Schema
        raise InvalidSchemaError(f"no JSON Schema for {source!r}: {type(e).__name__}: {e}") from e


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def translate(
    schema: dict | bool,
    *,
    strict: bool = True,
    whitespace: str = "compact",
    max_whitespace: int = 16,
    resolver: dict[str, Any] | Callable[[str], Any] | None = None,
    draft: int = 2020,
    property_order: str = "schema",
    spec_exact: bool = False,
    integer_fraction: bool | None = None,
    limits: Any = None,
    indent: int | str | None = None,
) -> tuple[str, Translator]:
    """EBNF text for ``schema`` and the translator (its ``warnings``; ``order`` for tests).

    Options are checked as in :meth:`corral.Grammar.json_schema` (``TypeError`` for a
    value of the wrong type, :class:`~corral.GrammarError` for one out of range).
    ``limits`` (a :class:`corral.Limits`) holds the translation's caps (its JSON Schema
    fields) and wall-clock time (``max_compile_ms``). ``integer_fraction`` (default: ``spec_exact``) allows ``1.0``
    for ``"type": "integer"``. ``indent`` lays the output out as ``json.dumps(indent=...)``
    does.
    """
    translator = Translator(
        schema, strict=strict, whitespace=whitespace, max_whitespace=max_whitespace, resolver=resolver,
        default_draft=draft, property_order=property_order, spec_exact=spec_exact,
        integer_fraction=spec_exact if integer_fraction is None else integer_fraction, limits=limits,
        indent=indent,
    )
    text = translator.grammar()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        _refuse_surrogates(schema)
    return text, translator
