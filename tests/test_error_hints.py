"""Every hint in an error names something that exists: each limit the core names in a
`LimitExceededError` ("... Limits.<name> ...; raise the limit") is a field of
`corral.Limits`; each limit the JSON Schema translator names is one too, with its row in
docs/limits.md; each `Limits.<name>` and `corral.<name>` an error message mentions
exists."""

from __future__ import annotations

import re
from pathlib import Path

import corral

ROOT = Path(__file__).resolve().parents[1]
RUST = sorted((ROOT / "crates").rglob("*.rs"))
PYTHON = sorted((ROOT / "python" / "corral").rglob("*.py"))


def _code(path: Path) -> str:
    """The file without its test module (tests may name made-up limits)."""
    text = path.read_text(encoding="utf-8")
    cut = text.find("#[cfg(test)]\nmod tests")
    return text if cut < 0 else text[:cut]


def _core_limit_names() -> set:
    names = set()
    for path in RUST:
        if "/tests/" in str(path) or path.name.endswith("_tests.rs"):
            continue
        names.update(re.findall(r'limit:\s*"(\w+)"', _code(path)))
    return names


def test_core_limits_named_in_errors_are_limits_fields():
    names = _core_limit_names()
    assert len(names) >= 8, names  # the scan found the errors
    limits = corral.Limits()
    missing = sorted(n for n in names if not hasattr(limits, n))
    assert not missing, f"errors name limits corral.Limits does not have: {missing}"


def test_translator_limits_are_limits_fields_and_documented():
    doc = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    names = set()
    # The translator (corral-core's json_schema) names a limit as a string: `limit:
    # "max_number_states"`, or an argument of the helper that builds the error.
    for path in sorted((ROOT / "crates" / "corral-core" / "src" / "json_schema").rglob("*.rs")):
        if path.name == "tests.rs" or path.name.endswith("_tests.rs"):
            continue
        names.update(re.findall(r'"((?:max_\w+)|regex_nest_limit)"', _code(path)))
    # The Python side (the schema's text, its depth) names one with its value:
    # `"max_schema_document_depth", max_depth`.
    for path in sorted((ROOT / "python" / "corral" / "_schema").glob("*.py")):
        names.update(re.findall(r'"(max_\w+)",\s*(?:[A-Za-z_][\w.]*|\d)', path.read_text(encoding="utf-8")))
    assert len(names) >= 12, names  # the translator's own caps and the engine's it checks
    assert "max_schema_document_depth" in names and "max_multiple_states" in names, names
    limits = corral.Limits()
    missing = sorted(n for n in names if not hasattr(limits, n))
    assert not missing, f"translator errors name limits corral.Limits does not have: {missing}"
    undocumented = sorted(n for n in names if f"| `{n}` |" not in doc)
    assert not undocumented, f"limits named in translator errors but not in the table of docs/limits.md: {undocumented}"


def test_limits_named_in_messages_are_fields():
    # "raise Limits.max_x", "Limits.max_x = 5" in any message, Rust or Python.
    mentioned = set()
    for path in RUST + PYTHON:
        if "/tests/" in str(path):
            continue
        for literal in re.findall(r'"((?:[^"\\\n]|\\.)*)"', _code(path)):
            mentioned.update(re.findall(r"\bLimits\.([a-z_]\w*)", literal))
    assert len(mentioned) >= 5, mentioned
    limits = corral.Limits()
    missing = sorted(n for n in mentioned if not hasattr(limits, n))
    assert not missing, f"messages name Limits fields that do not exist: {missing}"


def test_functions_named_in_messages_exist():
    mentioned = set()
    for path in RUST + PYTHON:
        if "/tests/" in str(path):
            continue
        for literal in re.findall(r'"((?:[^"\\\n]|\\.)*)"', _code(path)):
            # (`corral.invalid/...` is a URI, not a name.)
            mentioned.update(re.findall(r"\bcorral\.([A-Za-z_]\w*)\b(?![/.])", literal))
    mentioned -= {"errors", "_core", "_schema", "models", "integrations"}  # module paths
    assert mentioned, "the scan found no mention"
    missing = sorted(n for n in mentioned if not hasattr(corral, n))
    assert not missing, f"messages name corral.{missing}, which do not exist"
