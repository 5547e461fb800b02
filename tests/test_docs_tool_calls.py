"""docs/tool_calls.md's worked example runs as written."""

from __future__ import annotations

import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "tool_calls.md"


def test_the_worked_example_runs():
    text = DOC.read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block is not None
    namespace: dict = {}
    exec(compile(block.group(1), str(DOC), "exec"), namespace)
    assert [c["name"] for c in namespace["calls"]] == ["get_weather", "get_time"]
