"""The README's opening example runs, and its test command is the one CI runs."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
IPV4 = r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)"


def test_readme_opens_with_a_runnable_example():
    first = re.search(r"```python\n(.*?)```", README, re.S)
    assert first and README.index("```python") < README.index("## ")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(first.group(1), "README.md", "exec"), {})
    printed = out.getvalue().strip()
    assert re.fullmatch(IPV4, printed), printed


def test_ci_runs_the_readme_test_command():
    block = README[README.index("## Test") :]
    command = re.search(r"```bash\n(.*?)\n```", block, re.S).group(1).strip()
    ci = (REPO / ".ci" / "run").read_text()
    assert command in ci.splitlines()


def test_readme_run_command_works():
    block = README[README.index("## Install and run") :]
    command = re.search(r"```bash\n(.*?)\n```", block, re.S).group(1).strip()
    assert command.startswith("pip install . && corral generate ")
    args = command.split("corral generate ", 1)[1]
    proc = subprocess.run(
        f"{sys.executable} -m corral generate {args}", shell=True, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"\s*([Yy]es|[Nn]o|[Nn]ever|[Aa]lways)", proc.stdout[:-1]), repr(proc.stdout)


def _byte_vocab():
    import corral

    return corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])


def test_readme_grammar_example_runs():
    import corral

    block = README[README.index("## Grammars") :]
    code = re.search(r"```python\n(.*?)```", block, re.S).group(1)
    ns = {"corral": corral, "vocab": _byte_vocab()}
    exec(compile(code, "README.md", "exec"), ns)
    m = ns["matcher"]
    for b in b"[1,[-2]]":
        assert m.advance(b)
    assert m.is_accepting()


def test_grammars_doc_example_runs():
    import corral

    doc = (REPO / "docs" / "grammars.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    ns = {"corral": corral, "vocab": _byte_vocab()}
    exec(compile(code, "grammars.md", "exec"), ns)
    m = ns["matcher"]
    for b in b"[1, [2, -3]]":
        assert m.advance(b)
    assert m.is_accepting()
