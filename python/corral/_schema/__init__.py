"""JSON Schema (and Pydantic) front-end. The translator is corral-core's
(``corral_core::json_schema``); what stays in Python is what is Python's: a schema from a
Pydantic type or a JSON text (``schema_from``), the options' checks (``options``), the
schema's JSON text and the resolver loop (``native``)."""

from __future__ import annotations

import json
from typing import Any

from ..grammar import SchemaWarning
from .options import check_options, indent_string

__all__ = ["SchemaWarning", "check_options", "indent_string", "schema_from"]


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
