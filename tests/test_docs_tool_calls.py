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


def test_the_model_example_writes_two_valid_calls(tmp_path):
    """The "With a model" example (a random Qwen2 model over the real Qwen 3.5 vocabulary,
    through CorralLogitsProcessor) ends with two calls whose arguments validate. It runs
    in a child process: it builds a model and holds a 250k-token vocabulary."""
    import json
    import subprocess
    import sys

    text = DOC.read_text()
    section = text[text.index("## With a model") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    report = block.group(1) + "\nprint('RESULT ' + json.dumps({'turn': turn, 'calls': calls, 'tools': tools}))\n"
    script = tmp_path / "model_example.py"
    script.write_text(report)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])

    import jsonschema

    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in result["tools"]}
    assert len(result["calls"]) == 2
    for call in result["calls"]:
        jsonschema.validate(call["arguments"], schemas[call["name"]])
    turn = result["turn"]
    assert turn.startswith("<think>") and turn.index("</think>") < turn.index("<tool_call>")
    assert turn.endswith("<|im_end|>")
