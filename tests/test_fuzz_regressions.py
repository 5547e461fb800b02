"""Replays the JSON Schema fuzz target (fuzz/python/fuzz_json_schema.py) on its seed corpus
and on its recorded findings (fuzz/regressions/json_schema/), without a fuzzing engine.

A finding listed in fuzz/regressions/OPEN as `fails` must still fail (so that the list is
updated when a fix lands, and the input then guards against the defect's return); one
listed as `hangs` is not run, only required to exist; every other input must pass.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import REPO

FUZZ = REPO / "fuzz"
REGRESSIONS = FUZZ / "regressions" / "json_schema"


def _load_target():
    spec = importlib.util.spec_from_file_location("fuzz_json_schema", FUZZ / "python" / "fuzz_json_schema.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_json_schema"] = module
    spec.loader.exec_module(module)
    # Replay the findings themselves, not only the inputs the fuzzer keeps looking at.
    module.SKIP_OPEN = False
    return module


TARGET = _load_target()


def _open_findings() -> dict:
    """`json_schema/<file>` → kind, from fuzz/regressions/OPEN."""
    out = {}
    for line in (FUZZ / "regressions" / "OPEN").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, kind = line.split()[:2]
            if name.startswith("json_schema/"):
                out[name.split("/", 1)[1]] = kind
    return out


OPEN = _open_findings()
FILES = sorted(p.name for p in REGRESSIONS.iterdir() if p.is_file())


def _fails(data: bytes) -> bool:
    try:
        TARGET.test_one_input(data)
    except Exception:  # the target's failures: any exception it lets through
        return True
    return False


def test_open_findings_exist():
    missing = sorted(set(OPEN) - set(FILES))
    assert not missing, f"fuzz/regressions/OPEN lists inputs that do not exist: {missing}"
    assert set(OPEN.values()) <= {"fails", "hangs"}


@pytest.mark.parametrize("name", [f for f in FILES if OPEN.get(f) != "hangs"])
def test_regression(name):
    data = (REGRESSIONS / name).read_bytes()
    if OPEN.get(name) == "fails":
        assert _fails(data), f"{name} passes now: delete its line from fuzz/regressions/OPEN"
    else:
        TARGET.test_one_input(data)


def test_seed_corpus_passes():
    seeds = sorted((FUZZ / "python" / "seeds").iterdir())
    assert len(seeds) > 100
    failed = [p.name for p in seeds if _fails(p.read_bytes())]
    assert not failed, f"seeds that fail the JSON Schema target: {failed}"
