"""Tool calls of chat models as structural tags: OpenAI-style tool definitions and a chat
format in, XGrammar's structural-tag description out (see ``Grammar.tool_calls`` and
docs/tool_calls.md). Nothing here runs per token: the description is compiled by the core.
"""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

from ._args import check_bool
from .errors import GrammarError

#: The chat formats: how one call is written, and the string that starts the calls.
FORMATS = ("hermes", "llama3_json", "mistral", "qwen3_xml", "glm", "deepseek_v3", "minimax", "harmony", "llama4")

#: The reasoning markers of the families that write them (``reasoning=True``).
_THINK = ("<think>", "</think>")

#: The string that starts the calls in free text, per format.
_TRIGGERS = {
    "hermes": "<tool_call>",
    "llama3_json": '{"name": ',
    "mistral": "[TOOL_CALLS]",
    "qwen3_xml": "<tool_call>",
    "glm": "<tool_call>",
    "deepseek_v3": "<｜tool▁calls▁begin｜>",
    "minimax": "<minimax:tool_call>",
    "llama4": "[",
}

#: Llama 4 (pythonic calls): the calls are the whole turn, a Python list of calls with
#: keyword arguments, which the model may wrap in these tokens.
_PYTHON_START, _PYTHON_END = "<|python_start|>", "<|python_end|>"
#: A name a Python reader takes as a function or keyword argument (the servers' parsers
#: want an ASCII letter first) and that is no Python keyword.
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")

#: gpt-oss (harmony): a call is a message to ``functions.NAME`` in the commentary channel,
#: written with the recipient before or after the channel; messages are separated by the
#: header of the next one.
_HARMONY_CALLS = (
    "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>",
    "<|channel|>commentary to=functions.{name}<|constrain|>json<|message|>",
    " to=functions.{name}<|channel|>commentary <|constrain|>json<|message|>",
    " to=functions.{name}<|channel|>commentary json<|message|>",
)
_HARMONY_CALL_END = "<|call|>"
_HARMONY_SEPARATOR = "<|start|>assistant"


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


def _tag(begin: str, content: dict[str, Any], end: str | list[str]) -> dict[str, Any]:
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def _arguments(schema: Any, style: str = "json") -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": schema, "style": style}


def _call_tag(format: str, name: str, schema: Any) -> dict[str, Any]:
    """One call of `name` as a tag, in a format whose calls each open with the trigger."""
    if format == "hermes":
        return _tag(f'<tool_call>\n{{"name": {_json_string(name)}, "arguments": ', _arguments(schema), "}\n</tool_call>")
    if format == "qwen3_xml":
        return _tag(f"<tool_call>\n<function={name}>\n", _arguments(schema, "qwen_xml"), "\n</function>\n</tool_call>")
    if format == "glm":
        return _tag(f"<tool_call>{name}", _arguments(schema, "glm_xml"), "</tool_call>")
    return _tag(f'{{"name": {_json_string(name)}, "parameters": ', _arguments(schema), "}")


def _check_name(format: str, name: str) -> None:
    """A tool name the format writes inside its markers must not end them early (in
    ``llama4``, it must be a Python identifier)."""
    if format == "llama4":
        if not _IDENTIFIER.match(name) or keyword.iskeyword(name):
            raise GrammarError(f"the tool name {name!r} is no Python identifier (a letter, then letters, digits, _; no keyword): the llama4 format calls it as a function")
        return
    ends = {"qwen3_xml": ">", "minimax": '"', "glm": "<", "deepseek_v3": "\n", "harmony": "<"}
    end = ends.get(format)
    if end is not None and end in name:
        raise GrammarError(f"the tool name {name!r} holds {end!r}, which ends a name in the {format} format")


def _grouped_calls(format: str, schemas: dict[str, Any], required: bool, parallel: bool) -> dict[str, Any]:
    """The calls of a format that writes them in one block: DeepSeek V3's and MiniMax's."""
    if format == "deepseek_v3":
        calls = [
            _tag(f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n", _arguments(s), "\n```<｜tool▁call▁end｜>")
            for n, s in schemas.items()
        ]
        inner: dict[str, Any] = {"type": "tags_with_separator", "tags": calls, "separator": "\n", "at_least_one": True, "stop_after_first": not parallel}
        block = _tag("<｜tool▁calls▁begin｜>", inner, "<｜tool▁calls▁end｜>")
    else:
        calls = [_tag(f'<invoke name="{n}">\n', _arguments(s, "minimax_xml"), "</invoke>\n") for n, s in schemas.items()]
        call: dict[str, Any] = {"type": "or", "elements": calls} if len(calls) > 1 else calls[0]
        inner = call if not parallel else {"type": "plus", "content": call}
        block = _tag("<minimax:tool_call>\n", inner, "</minimax:tool_call>")
    return {"type": "triggered_tags", "triggers": [_TRIGGERS[format]], "tags": [block], "at_least_one": required, "stop_after_first": True}


def _llama4(schemas: dict[str, Any], tool_choice: Any, required: bool, parallel: bool) -> dict[str, Any]:
    """Llama 4's pythonic turn: text, or the calls alone as a Python list
    (``[get_weather(city="Paris"), ...]``), wrapped in the python tokens or not. Text may
    not start with ``[`` (a reader would take it for calls) nor hold the python tokens."""
    text = {"type": "regex", "pattern": r"(?s)(?!\[)(?:(?!<\|python_(?:start|end)\|>).)*"}
    if tool_choice == "none" or not schemas:
        return text
    calls = [{"type": "sequence", "elements": [_literal(f"{n}("), _arguments(s, "pythonic"), _literal(")")]} for n, s in schemas.items()]
    call: dict[str, Any] = {"type": "or", "elements": calls} if len(calls) > 1 else calls[0]
    listed = call if not parallel else {"type": "sequence", "elements": [call, {"type": "star", "content": {"type": "sequence", "elements": [_literal(", "), call]}}]}
    bare = {"type": "sequence", "elements": [_literal("["), listed, _literal("]")]}
    wrapped = {"type": "sequence", "elements": [_literal(_PYTHON_START + "["), listed, _literal("]" + _PYTHON_END)]}
    block = {"type": "or", "elements": [bare, wrapped]}
    return block if required else {"type": "or", "elements": [block, text]}


def _harmony(schemas: dict[str, Any], tool_choice: Any, required: bool, parallel: bool, reasoning: bool, budget: int | None) -> dict[str, Any]:
    """gpt-oss's messages: calls, a final answer (unless a call is required) and analysis
    (with reasoning, each message within ``budget`` tokens), separated by the next
    message's header; one call at most without ``parallel``, which then ends the turn."""
    calls = [_tag(begin.format(name=n), _arguments(s), _HARMONY_CALL_END) for n, s in schemas.items() for begin in _HARMONY_CALLS]
    if tool_choice == "none":
        calls = []
    final = _tag("<|channel|>final<|message|>", {"type": "any_text"}, ["<|end|>", "<|return|>"])
    analysis = _tag("<|channel|>analysis<|message|>", _free_text(budget), "<|end|>")
    messages = calls + ([] if required else [final])
    if parallel or not calls:
        tags = messages + ([analysis] if reasoning else [])
        return {"type": "tags_with_separator", "tags": tags, "separator": _HARMONY_SEPARATOR, "at_least_one": True}
    # One call at most: analysis messages first, then one call or the final answer.
    last = {"type": "or", "elements": messages} if len(messages) > 1 else messages[0]
    if not reasoning:
        return last
    before = {"type": "star", "content": {"type": "sequence", "elements": [analysis, _literal(_HARMONY_SEPARATOR)]}}
    return {"type": "sequence", "elements": [before, last]}


def _free_text(budget: int | None) -> dict[str, Any]:
    """Free text, within ``budget`` of the model's tokens if given."""
    return {"type": "any_text"} if budget is None else {"type": "any_text", "max_tokens": budget}


def tool_calls_spec(
    tools: list[dict[str, Any]],
    format: str = "hermes",
    tool_choice: Any = "auto",
    parallel: bool = True,
    reasoning: tuple[str, str] | bool | None = None,
    reasoning_budget: int | None = None,
) -> dict[str, Any]:
    """The structural tag of a turn: free text in which the format's marker starts tool
    calls, each naming one of ``tools`` with arguments valid for its parameters."""
    check_bool(parallel, "parallel", "Grammar.tool_calls()")
    if reasoning_budget is not None:
        if isinstance(reasoning_budget, bool) or not isinstance(reasoning_budget, int) or reasoning_budget < 0:
            raise GrammarError(f"reasoning_budget must be a number of tokens from 0, got {reasoning_budget!r}")
        if reasoning in (None, False):
            raise GrammarError("reasoning_budget bounds the reasoning: give reasoning too (reasoning=True, or its two markers)")
    if not isinstance(format, str) or format not in FORMATS:
        raise GrammarError(f"unknown tool-call format {format!r}; known: {', '.join(FORMATS)}")
    schemas, required = _chosen(_tool_schemas(tools), tool_choice)
    for name in schemas:
        _check_name(format, name)
    if format == "harmony":
        if reasoning not in (None, True, False):
            raise GrammarError(f"reasoning for harmony is True (analysis messages allowed) or None, got {reasoning!r}")
        return {"type": "structural_tag", "format": _harmony(schemas, tool_choice, required, parallel, bool(reasoning), reasoning_budget)}
    if reasoning is True:
        reasoning = _THINK
    trigger = _TRIGGERS[format]
    if format == "llama4":
        body: dict[str, Any] = _llama4(schemas, tool_choice, required, parallel)
    elif tool_choice == "none" or not schemas:
        # No tool may be called (none chosen, or none defined): the markers are impossible.
        body = {"type": "any_text", "excludes": [trigger]}
    elif format == "mistral":
        # One marker, then a JSON list of calls.
        call = {"type": "or", "elements": [_call(n, s, "arguments") for n, s in schemas.items()]}
        calls = call if not parallel else {"type": "sequence", "elements": [
            call, {"type": "star", "content": {"type": "sequence", "elements": [_literal(", "), call]}}]}
        calls_tag = {"type": "tag", "begin": "[TOOL_CALLS][", "content": calls, "end": "]"}
        body = {"type": "triggered_tags", "triggers": [trigger], "tags": [calls_tag], "at_least_one": required, "stop_after_first": True}
    elif format in ("deepseek_v3", "minimax"):
        body = _grouped_calls(format, schemas, required, parallel)
    else:
        tags = [_call_tag(format, n, s) for n, s in schemas.items()]
        body = {"type": "triggered_tags", "triggers": [trigger], "tags": tags, "at_least_one": required, "stop_after_first": not parallel}
    if reasoning is not None and reasoning is not False:
        if not (isinstance(reasoning, (tuple, list)) and len(reasoning) == 2 and all(isinstance(m, str) and m for m in reasoning)):
            raise GrammarError(f"reasoning must be two non-empty marker strings, such as ('<think>', '</think>'), got {reasoning!r}")
        begin, end = reasoning
        think = {"type": "tag", "begin": begin, "content": _free_text(reasoning_budget), "end": end}
        body = {"type": "sequence", "elements": [think, body]}
    return {"type": "structural_tag", "format": body}
