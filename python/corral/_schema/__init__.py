"""JSON Schema (and Pydantic) front-end: schemas become corral EBNF."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Tuple, Union

from .translate import SchemaWarning, Translator

__all__ = ["SchemaWarning", "Translator", "schema_from", "translate"]


def schema_from(source: Any) -> Union[dict, bool]:
    """A schema dict from a dict, a bool, a JSON string, a Pydantic model class or any
    type Pydantic's ``TypeAdapter`` accepts (``list[int]``, a dataclass, a TypedDict)."""
    if isinstance(source, (dict, bool)):
        return source
    if isinstance(source, (str, bytes)):
        try:
            return json.loads(source)
        except json.JSONDecodeError as e:
            from ..errors import InvalidSchemaError

            raise InvalidSchemaError(f"the schema is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    model_json_schema = getattr(source, "model_json_schema", None)
    if callable(model_json_schema):
        return model_json_schema()
    try:
        from pydantic import TypeAdapter
    except ImportError:
        raise TypeError(f"a schema must be a dict, a JSON string or a Pydantic model; got {source!r} (install pydantic for Python types)") from None
    return TypeAdapter(source).json_schema()


def translate(
    schema: Union[dict, bool],
    *,
    strict: bool = True,
    whitespace: str = "compact",
    max_whitespace: int = 16,
    resolver: Optional[Union[Dict[str, Any], Callable[[str], Any]]] = None,
    draft: int = 2020,
    property_order: str = "schema",
    integer_fraction: bool = True,
) -> Tuple[str, Translator]:
    """EBNF text for ``schema`` and the translator (its ``warnings``; ``order`` for tests)."""
    translator = Translator(schema, strict=strict, whitespace=whitespace, max_whitespace=max_whitespace, resolver=resolver, default_draft=draft, property_order=property_order, integer_fraction=integer_fraction)
    return translator.grammar(), translator
