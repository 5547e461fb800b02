"""The large real-world JSON Schema set of bench/bench_json.py (bench/json_schemas/large/):
every schema parses, is self-contained, is large enough, has a source row with a license in
SOURCES.md, and its valid / invalid instances are valid / invalid per ``jsonschema`` under the
schema's own draft. Needs neither corral nor the network."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

LARGE = Path(__file__).resolve().parents[1] / "bench" / "json_schemas" / "large"
NAMES = sorted(p.name[: -len(".schema.json")] for p in LARGE.glob("*.schema.json"))
# Keywords whose values are data, not subschemas: a "$ref" or "properties" key in them is a
# member name or a value, not a keyword.
DATA_KEYWORDS = ("enum", "const", "examples", "default")
MIN_PROPERTIES = 100
MIN_BYTES = 20 * 1024


def walk(node, path=""):
    """(path, keyword, value) of every keyword of every subschema, data keywords skipped."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in DATA_KEYWORDS:
                continue
            yield path, k, v
            yield from walk(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}/{i}")


def count_properties(schema) -> int:
    return sum(len(v) for _, k, v in walk(schema) if k == "properties" and isinstance(v, dict))


def external_refs(schema) -> list[str]:
    return [f"{p}: {v}" for p, k, v in walk(schema) if k in ("$ref", "$dynamicRef") and isinstance(v, str) and not v.startswith("#")]


def load(name: str, suffix: str):
    return json.loads((LARGE / f"{name}{suffix}").read_text(encoding="utf-8"))


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls, cls(schema, format_checker=format_checker())


def format_checker():
    fc = jsonschema.FormatChecker()

    @fc.checks("uri")
    def _uri(s):  # as bench_json.format_checker: rfc3987 is not installed
        return not isinstance(s, str) or bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]*$", s))

    return fc


def sources_rows() -> dict[str, list[str]]:
    rows = {}
    for line in (LARGE / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 8:
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_set_is_there():
    assert len(NAMES) >= 30, NAMES
    total = sum(p.stat().st_size for p in LARGE.iterdir())
    assert total < 6 * 2**20, f"bench/json_schemas/large holds {total / 2**20:.1f} MiB"
    # no stray files: every file belongs to a schema, or is SOURCES.md
    for p in LARGE.iterdir():
        stem = re.sub(r"\.(schema|instances|invalid)\.json$", "", p.name)
        assert p.name == "SOURCES.md" or stem in NAMES, p.name
    assert set(sources_rows()) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_schema(name):
    path = LARGE / f"{name}.schema.json"
    schema = load(name, ".schema.json")
    assert isinstance(schema, dict)
    assert path.stat().st_size < 2**20, "a single schema over 1 MiB"
    assert external_refs(schema) == [], "refs outside the document (bundle them)"
    props = count_properties(schema)
    assert props >= MIN_PROPERTIES or path.stat().st_size >= MIN_BYTES, f"{props} properties, {path.stat().st_size} bytes"
    cls, _ = validator(schema)
    cls.check_schema(schema)
    row = sources_rows().get(name)
    assert row, f"no row for {name} in SOURCES.md"
    _, tool, source, license_, draft = row[:5]
    assert tool and source and license_ and license_ not in ("-", "–", "?"), row
    assert draft in ("draft-04", "draft-06", "draft-07", "2019-09", "2020-12"), row


@pytest.mark.parametrize("name", NAMES)
def test_instances(name):
    schema = load(name, ".schema.json")
    _, v = validator(schema)
    valid = load(name, ".instances.json")
    assert isinstance(valid, list) and 2 <= len(valid) <= 5
    for i, inst in enumerate(valid):
        errors = [f"{e.json_path}: {e.message[:200]}" for e in v.iter_errors(inst)]
        assert not errors, f"valid instance {i}: {errors}"
    invalid = load(name, ".invalid.json")
    assert isinstance(invalid, list) and 2 <= len(invalid) <= 3
    for i, x in enumerate(invalid):
        assert set(x) == {"description", "data"}, x
        assert not v.is_valid(x["data"]), f"invalid instance {i} is valid: {x['description']}"
        assert x["data"] not in valid


def test_the_checks_can_fail():
    """The helpers above see what they must: an external ref, a small schema, a valid 'invalid' instance."""
    schema = {"type": "object", "properties": {"a": {"$ref": "other.json#/x"}, "b": {"$ref": "#/$defs/b"}}, "$defs": {"b": {}}}
    assert external_refs(schema) == ["/properties/a: other.json#/x"]
    assert count_properties(schema) == 2
    assert count_properties({"enum": [{"properties": {"x": 1}}]}) == 0
    _, v = validator({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {"n": {"type": "integer", "maximum": 3, "exclusiveMaximum": True}}})
    assert not v.is_valid({"n": 3})  # draft-04's boolean exclusiveMaximum: only right under the draft-04 validator
    _, v7 = validator({"type": "object", "properties": {"when": {"format": "date-time"}}})
    assert not v7.is_valid({"when": "yesterday"})
