"""corral.Limits: every field's default is the one the table of docs/limits.md gives, and
every cap of the JSON Schema translator is a field: lowered, a schema that fits the
defaults is refused naming it; raised, a schema the defaults refuse is translated.

Two fields have no raising test: no schema of a practical size needs more than
``max_schema_passes`` (16) passes, and a number automaton past ``max_number_states``
(20,000 rules) takes seconds to build and then meets ``max_grammar_productions``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import corral
from corral import Limits

ROOT = Path(__file__).resolve().parents[1]
# Every field with its default, as the binding gives them (it rebuilds a Limits from these).
FIELDS: dict[str, int] = Limits().__getnewargs_ex__()[1]


def _doc_defaults() -> dict[str, int]:
    """Field → default, from the table of docs/limits.md (headed "| field | default |", its
    rows starting "| `field` | default |")."""
    text = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    table = text[text.index("| field | default |") :].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \|", table, re.M)
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), f"a field has two rows: {names}"
    return {name: int(default) for name, default in rows}


def test_the_table_has_every_field_and_nothing_else():
    assert len(FIELDS) >= 26, FIELDS  # the engine's limits and the translator's
    assert set(_doc_defaults()) == set(FIELDS)


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_default_is_the_documented_one(name):
    assert _doc_defaults()[name] == FIELDS[name] == getattr(Limits(), name)
    # Each field is a keyword of its own.
    assert getattr(Limits(**{name: 7}), name) == 7


# --- schemas ---------------------------------------------------------------------------


def _all_of_choices(n: int) -> dict:
    """3**n alternatives: n anyOfs of three branches that all fit together."""
    branch = {"anyOf": [{"minimum": 1}, {"maxLength": 2}, {"minItems": 1}]}
    return {"type": ["integer", "string", "array"], "allOf": [dict(branch, **{"$comment": str(i)}) for i in range(n)]}


def _chain(n: int, make) -> dict:
    """Definitions d0 ... dn, each made by ``make(i)`` (the last an integer), from d0."""
    defs = {f"d{i}": make(i) for i in range(n)}
    defs[f"d{n}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def _in_place(n: int) -> dict:
    """$refs read in place, n deep (each adds a bound, so none can be skipped)."""
    return _chain(n, lambda i: {"$ref": f"#/$defs/d{i + 1}", "minimum": -i})


def _values(n: int) -> dict:
    """Value rules n deep: arrays of arrays, through a $ref each."""
    return _chain(n, lambda i: {"items": {"$ref": f"#/$defs/d{i + 1}"}})


def _items(n: int) -> dict:
    """A schema document n JSON values deep."""
    schema: dict = {"type": "integer"}
    for _ in range(n):
        schema = {"items": schema}
    return schema


def _arrays(n: int) -> dict:
    """Arrays nested n deep around null, each non-empty."""
    schema: dict = {"type": "null"}
    for _ in range(n):
        schema = {"type": "array", "items": schema, "minItems": 1}
    return schema


def _patterns(n: int) -> dict:
    return {"type": "object", "patternProperties": {f"^p{i}_": {"type": "integer"} for i in range(n)}}


def _unevaluated_beside(n: int) -> dict:
    """unevaluatedProperties beside an allOf of n subschemas, each naming a property."""
    return {"allOf": [{"properties": {f"p{i}": {"type": "integer"}}} for i in range(n)], "unevaluatedProperties": False}


def _overlapping(n: int) -> dict:
    """n unanchored patterns a key may all match, each with its own bound: 2^n classes."""
    return {"type": "object", "patternProperties": {f"a{i}": {"type": "integer", "minimum": i} for i in range(n)}}


# An object that requires itself allows no value: a second pass drops it.
SELF_REQUIRING = {
    "$defs": {"a": {"type": "object", "required": ["x"], "properties": {"x": {"$ref": "#/$defs/a"}}}},
    "anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}],
}


@dataclass
class Case:
    field: str
    schema: dict
    value: int
    error: type = corral.LimitExceededError
    options: dict = field(default_factory=dict)

    def build(self, **limits):
        return corral.Grammar.json_schema(self.schema, limits=Limits(**limits) if limits else None, **self.options)


# Schemas that fit the defaults and not the field lowered to ``value``.
LOWERED = [
    Case("max_schema_alternatives", _all_of_choices(2), 8),
    Case("max_schema_depth", _in_place(10), 5),
    Case("max_schema_document_depth", _items(10), 5),
    Case("max_schema_value_depth", _values(10), 5),
    Case("max_schema_passes", SELF_REQUIRING, 1),
    Case("max_pattern_properties", _patterns(2), 1, corral.UnsupportedSchemaError),
    Case("max_key_classes", _overlapping(3), 4, corral.UnsupportedSchemaError),
    Case("max_counted_items", {"contains": {"type": "string"}, "maxItems": 10}, 5, corral.UnsupportedSchemaError),
    Case("max_unevaluated_subschemas", _unevaluated_beside(4), 3),
    # 52 automaton states, each with the one pattern state "letters so far".
    Case("max_regex_format_states", {"type": "string", "format": "regex", "pattern": "^[a-z]{0,50}$"}, 10,
         corral.UnsupportedSchemaError),
    # (5 + 1) positions × (3 + 1) counts of matches.
    Case("max_spelled_count", {"contains": {"type": "string"}, "minItems": 5, "minContains": 3}, 10),
    # An object's named × counted properties may have ten times as many: (5 + 1) × (3 + 1).
    Case("max_spelled_count", {"properties": {k: {"type": "integer"} for k in "abcde"}, "maxProperties": 3}, 2),
    # 7 residues, at two states each.
    Case("max_multiple_states", {"multipleOf": 7}, 10, corral.UnsupportedSchemaError),
    Case("max_number_states", {"multipleOf": 7, "not": {"multipleOf": 11}}, 20),
    Case("max_indent_depth", _arrays(3), 1, options={"indent": 2}),
]


@pytest.mark.parametrize("case", LOWERED, ids=[f"{c.field}-{i}" for i, c in enumerate(LOWERED)])
def test_a_lowered_cap_refuses_a_schema_the_defaults_accept(case):
    case.build()
    with pytest.raises(case.error) as info:
        case.build(**{case.field: case.value})
    message = str(info.value)
    assert f"Limits.{case.field}" in message and str(case.value) in message, message
    if case.error is corral.LimitExceededError:
        assert info.value.limit == case.field and info.value.value == case.value


def _translator_fields() -> set:
    """The fields documented in corral-core as the JSON Schema translator's."""
    source = (ROOT / "crates" / "corral-core" / "src" / "limits.rs").read_text(encoding="utf-8")
    return set(re.findall(r"/// JSON Schema[^\n]*\n(?:\s*///[^\n]*\n)*\s*pub (\w+):", source))


def test_every_translator_field_has_a_lowering_case():
    fields = _translator_fields()
    assert fields <= set(FIELDS) and len(fields) >= 11, fields
    assert {c.field for c in LOWERED} == fields


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"))


# Schemas the defaults refuse (naming the field) and the field raised to ``value`` accepts,
# with a document the grammar must accept and one it must refuse.
RAISED = [
    (Case("max_schema_alternatives", _all_of_choices(8), 7000), "[]", "null"),  # 3**8 = 6561
    (Case("max_schema_depth", _in_place(300), 400), "0", "-1"),
    # The defaults' frames are not enough: this runs on a thread of its own.
    (Case("max_schema_document_depth", _items(600), 700), "[" * 600 + "1" + "]" * 600, "[" * 600 + '"x"' + "]" * 600),
    (
        Case("max_counted_items", {"contains": {"type": "string"}, "maxItems": 65}, 65, corral.UnsupportedSchemaError),
        _compact(["a"] * 65),
        _compact(["a"] * 66),
    ),
    (Case("max_pattern_properties", _patterns(33), 33, corral.UnsupportedSchemaError), '{"p32_":1}', '{"p32_":"x"}'),
    (Case("max_key_classes", _overlapping(7), 128, corral.UnsupportedSchemaError), '{"a0a6":6}', '{"a0a6":5}'),
    (Case("max_unevaluated_subschemas", _unevaluated_beside(300), 400), '{"p299":1}', '{"p300":1}'),
    (
        Case("max_regex_format_states", {"type": "string", "format": "regex", "pattern": "^[a-z]{0,5000}$"}, 6000,
             corral.UnsupportedSchemaError),
        '"abc"',
        '"ab("',
    ),
    (
        Case("max_spelled_count", {"contains": {"type": "string"}, "minItems": 200, "minContains": 60}, 20_000),
        _compact(["a"] * 60 + [1] * 140),
        _compact(["a"] * 59 + [1] * 141),
    ),
    (Case("max_multiple_states", {"type": "integer", "multipleOf": 2100}, 5000, corral.UnsupportedSchemaError), "4200", "4201"),
    (Case("max_indent_depth", _arrays(33), 40, options={"indent": 1}), None, None),
]


@pytest.mark.parametrize("case,good,bad", RAISED, ids=[c.field for c, _, _ in RAISED])
def test_a_raised_cap_accepts_a_schema_the_defaults_refuse(case, good, bad, byte_vocab):
    with pytest.raises(case.error) as info:
        case.build()
    assert f"Limits.{case.field}" in str(info.value)
    grammar = case.build(**{case.field: case.value})
    if case.options.get("indent") is not None:
        value: list = [None]
        for _ in range(32):
            value = [value]
        good, bad = json.dumps(value, indent=1), json.dumps(value)
    compiled = corral.compile(grammar, byte_vocab)
    assert compiled.matches(good.encode()) and not compiled.matches(bad.encode())


def test_raised_value_depth_with_the_grammar_limit_it_then_needs():
    schema = _values(4200)
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(schema)
    assert info.value.limit == "max_schema_value_depth" and "Limits.max_schema_value_depth" in str(info.value)
    # Raised, the schema's grammar is the next bound (4,200 value rules and their helpers).
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(schema, limits=Limits(max_schema_value_depth=5000, max_grammar_productions=30_000))
    assert info.value.limit == "max_grammar_productions"
    corral.Grammar.json_schema(schema, limits=Limits(max_schema_value_depth=5000))


# --- raised depth limits run on a thread of their own ----------------------------------------


def test_errors_and_results_come_back_from_the_translation_thread():
    raised = Limits(max_schema_document_depth=100_000)
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema(_in_place(300), limits=raised)
    assert info.value.limit == "max_schema_depth" and info.value.pointer.startswith("/$defs/d")
    assert corral.Grammar.json_schema(_items(3), limits=raised).kind == "json_schema"
    assert not [t for t in threading.enumerate() if t.name == "corral-json-schema"]


def test_values_deeper_than_pythons_recursion_limit_compile_when_the_limits_allow(byte_vocab):
    # A value nested 3,000 deep: past the interpreter's recursion limit, within raised
    # document limits; the translation's thread has the stack for it.
    nested: list = [1]
    for _ in range(3000):
        nested = [nested]
    raised = Limits(max_schema_document_depth=10_000)
    grammar = corral.Grammar.json_schema({"const": nested}, limits=raised)
    compiled = corral.compile(grammar, byte_vocab)
    assert compiled.matches(("[" * 3001 + "1" + "]" * 3001).encode())
    assert not compiled.matches(("[" * 3000 + "1" + "]" * 3000).encode())
    # Past the limit, refused with the pointer of the first value too deep.
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.json_schema({"const": nested}, limits=Limits(max_schema_document_depth=2_000))
    assert info.value.limit == "max_schema_document_depth" and info.value.pointer.startswith("/const/0/0")


def test_ctrl_c_stops_the_translation_thread(ctrl_c):
    # 3**14 alternatives: minutes of translation, all of it on the thread. The budget
    # turns a missed Ctrl-C into a failure here rather than minutes of growing memory.
    raised = Limits(max_schema_document_depth=100_000, max_compile_ms=30_000, max_schema_alternatives=10**8)
    timer = ctrl_c(0.3, real=True)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            corral.Grammar.json_schema(_all_of_choices(14), limits=raised)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30
    # The abandoned thread stops at its next check.
    deadline = time.monotonic() + 10
    while any(t.name == "corral-json-schema" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [t for t in threading.enumerate() if t.name == "corral-json-schema"]


def test_ctrl_c_stops_a_structural_tag_whose_schema_takes_minutes(ctrl_c):
    # The whole description is built on one translation thread, its schemas included.
    raised = Limits(max_schema_document_depth=100_000, max_compile_ms=30_000, max_schema_alternatives=10**8)
    spec = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<f>"], "tags": [
        {"type": "tag", "begin": "<f>", "content": {"type": "json_schema", "json_schema": _all_of_choices(14)}, "end": "</f>"}]}}
    timer = ctrl_c(0.3, real=True)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            corral.Grammar.structural_tag(spec, limits=raised)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30
