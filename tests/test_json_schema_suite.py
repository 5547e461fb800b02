"""The official JSON Schema Test Suite, run through corral on the DeepSeek vocabulary.

Zero wrong answers for every schema corral compiles, and no regression: every case in the
committed baseline (tests/corpus/json_schema_suite_baseline.json) must still compile and be
decided right. Regenerate the baseline and docs/json_schema_coverage.md with
``python tests/json_schema_suite.py`` after an improvement.
"""

from __future__ import annotations

import json

import pytest

import json_schema_suite as suite


@pytest.fixture(scope="module")
def rows(deepseek):
    if not suite.SUITE.is_dir():
        pytest.fail(f"the JSON Schema Test Suite is missing at {suite.SUITE}")
    return suite.run(deepseek.vocab, deepseek)


def test_no_wrong_answers(rows):
    wrong = [(r["draft"], r["file"], r["case"], w) for r in rows for w in r["wrong"]]
    assert wrong == []


def test_no_regression_against_baseline(rows):
    passing = set(suite.baseline(rows)["passing"])
    expected = set(json.loads(suite.BASELINE.read_text())["passing"])
    lost = sorted(expected - passing)
    assert lost == [], f"{len(lost)} cases that passed no longer do"


def test_coverage_doc_is_current(rows):
    # The committed table must describe this code (regenerate with the script).
    assert suite.DOC.read_text() == suite.markdown(rows)


def test_every_refusal_is_explained(rows):
    for r in rows:
        if r["status"] == "refused":
            assert r["detail"] and not r["detail"].startswith("BUG"), r
            # A keyword problem names its JSON pointer.
            if "SchemaError" in r["detail"]:
                assert " at " in r["detail"], r["detail"]
