"""Tool calls of chat models as structural tags: OpenAI-style tool definitions and a chat
format in, XGrammar's structural-tag description out (see ``Grammar.tool_calls`` and
docs/tool_calls.md). Nothing here runs per token: the description is compiled by the core.
"""

from __future__ import annotations

import json
from typing import Any

from ._args import check_bool
from .errors import GrammarError

#: The chat formats: how one call is written, and the string that starts the calls.
FORMATS = ("hermes", "llama3_json", "mistral")


def _tool_schemas(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Name → parameters schema of OpenAI-style definitions
    (``{"type": "function", "function": {"name", "parameters"}}``, or the inner dict).
    Parameters absent or ``None`` (as a model's ``model_dump()`` writes them): any object."""
    if not isinstance(tools, (list, tuple)):
        raise GrammarError(f"tools must be a list of tool definitions, got {type(tools).__name__}")
    out: dict[str, Any] = {}
    for i, tool in enumerate(tools):
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not name:
            raise GrammarError(f"tools[{i}] has no function name (expected {{'type': 'function', 'function': {{'name': ..., 'parameters': ...}}}})")
        if name in out:
            raise GrammarError(f"tools[{i}]: the name {name!r} is defined twice")
        params = fn.get("parameters")
        if params is None:
            params = {"type": "object"}
        if not isinstance(params, (dict, bool)):
            raise GrammarError(f"tools[{i}] ({name}): parameters must be a JSON Schema object")
        out[name] = params
    return out


def _chosen(schemas: dict[str, Any], tool_choice: Any) -> tuple[dict[str, Any], bool]:
    """The tools that may be called and whether a call is required."""
    if tool_choice in ("auto", "none"):
        return schemas, False
    if tool_choice == "required":
        if not schemas:
            raise GrammarError("tool_choice 'required' needs at least one tool; tools is empty")
        return schemas, True
    if isinstance(tool_choice, dict):
        fn = tool_choice.get("function", tool_choice)
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str):
            raise GrammarError(f"tool_choice must name a tool by a string (as {{'name': 'get_weather'}}), got {tool_choice!r}")
        if name not in schemas:
            raise GrammarError(f"tool_choice names {name!r}, which is not among the tools ({', '.join(schemas)})")
        return {name: schemas[name]}, True
    raise GrammarError(f"tool_choice must be 'auto', 'none', 'required' or {{'name': ...}}, got {tool_choice!r}")


def _literal(value: str) -> dict[str, Any]:
    return {"type": "const_string", "value": value}


def _call(name: str, schema: Any, key: str) -> dict[str, Any]:
    """One call as a JSON object: ``{"name": NAME, KEY: arguments}``."""
    quoted = _json_string(name)
    return {"type": "sequence", "elements": [
        _literal(f'{{"name": {quoted}, "{key}": '),
        {"type": "json_schema", "json_schema": schema},
        _literal("}"),
    ]}


def _json_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _call_tag(format: str, name: str, schema: Any) -> dict[str, Any]:
    """One call of `name` as a tag, in the `"hermes"` or `"llama3_json"` format."""
    arguments = {"type": "json_schema", "json_schema": schema}
    if format == "hermes":
        return {"type": "tag", "begin": f'<tool_call>\n{{"name": {_json_string(name)}, "arguments": ', "content": arguments, "end": "}\n</tool_call>"}
    return {"type": "tag", "begin": f'{{"name": {_json_string(name)}, "parameters": ', "content": arguments, "end": "}"}


def tool_calls_spec(
    tools: list[dict[str, Any]],
    format: str = "hermes",
    tool_choice: Any = "auto",
    parallel: bool = True,
    reasoning: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The structural tag of a turn: free text in which the format's marker starts tool
    calls, each naming one of ``tools`` with arguments valid for its parameters."""
    check_bool(parallel, "parallel", "Grammar.tool_calls()")
    if not isinstance(format, str) or format not in FORMATS:
        raise GrammarError(f"unknown tool-call format {format!r}; known: {', '.join(FORMATS)}")
    schemas, required = _chosen(_tool_schemas(tools), tool_choice)
    trigger = {"hermes": "<tool_call>", "llama3_json": '{"name": ', "mistral": "[TOOL_CALLS]"}[format]
    if tool_choice == "none" or not schemas:
        # No tool may be called (none chosen, or none defined): the markers are impossible.
        body: dict[str, Any] = {"type": "any_text", "excludes": [trigger]}
    elif format == "mistral":
        # One marker, then a JSON list of calls.
        call = {"type": "or", "elements": [_call(n, s, "arguments") for n, s in schemas.items()]}
        calls = call if not parallel else {"type": "sequence", "elements": [
            call, {"type": "star", "content": {"type": "sequence", "elements": [_literal(", "), call]}}]}
        calls_tag = {"type": "tag", "begin": "[TOOL_CALLS][", "content": calls, "end": "]"}
        body = {"type": "triggered_tags", "triggers": [trigger], "tags": [calls_tag], "at_least_one": required, "stop_after_first": True}
    else:
        tags = [_call_tag(format, n, s) for n, s in schemas.items()]
        body = {"type": "triggered_tags", "triggers": [trigger], "tags": tags, "at_least_one": required, "stop_after_first": not parallel}
    if reasoning is not None:
        if not (isinstance(reasoning, (tuple, list)) and len(reasoning) == 2 and all(isinstance(m, str) and m for m in reasoning)):
            raise GrammarError(f"reasoning must be two non-empty marker strings, such as ('<think>', '</think>'), got {reasoning!r}")
        begin, end = reasoning
        think = {"type": "tag", "begin": begin, "content": {"type": "any_text"}, "end": end}
        body = {"type": "sequence", "elements": [think, body]}
    return {"type": "structural_tag", "format": body}
