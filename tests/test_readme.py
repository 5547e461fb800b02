"""The README's opening example runs, and its test command is the one CI runs."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
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
    commands = re.search(r"```bash\n(.*?)\n```", block, re.S).group(1).strip().splitlines()
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert commands and all(line in ci for line in commands), commands


def test_readme_first_command_installs_and_runs_the_demo():
    first = re.search(r"```bash\n(.*?)\n```", README, re.S).group(1).strip()
    assert first == "pip install . && corral demo"
    proc = subprocess.run([sys.executable, "-m", "corral", "demo"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    shown = re.search(r"```text\n(.*?)```", README, re.S).group(1)
    # The same examples in the same order; every guided output fits, in the README and now.
    titles = re.findall(r"^== (.*)$", proc.stdout, re.M)
    assert titles == re.findall(r"^== (.*)$", shown, re.M) and len(titles) == 6
    for text in (proc.stdout, shown):
        assert text.count("guided (fits: yes)") == 6 and "guided (fits: no)" not in text.replace("unguided (fits: no)", "")
        assert text.count("unguided (fits: no)") >= 5  # the constraints change what the model writes


def test_readme_command_line_examples_parse():
    from corral.cli import build_parser

    block = README[README.index("## Command line") :]
    commands = re.search(r"```bash\n(.*?)\n```", block, re.S).group(1).strip().splitlines()
    assert len(commands) == 3
    parser = build_parser()
    for line in commands:
        args = parser.parse_args(shlex.split(line)[1:])
        assert args.command == "generate"


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


def test_readme_json_schema_examples_finish_and_validate():
    # Both grammars of the README's JSON section, on the built-in model: at least 9 of 10
    # seeds end within 120 tokens with JSON that validates (objects closed, integers
    # without a fraction).
    import json

    import corral
    from corral.models import BuiltinModel

    block = README[README.index("## JSON Schema and Pydantic") :]
    code = re.search(r"```python\n(.*?)```", block, re.S).group(1)
    ns = {"corral": corral, "model": BuiltinModel()}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "README.md", "exec"), ns)
    character = ns["Character"]
    checks = [
        (ns["grammar"], lambda text: character.model_validate_json(text)),
        # Closed by default: the only documents are these two.
        (ns["verdict"], lambda text: [{"answer": "yes"}, {"answer": "no"}].index(json.loads(text))),
    ]
    for grammar, validate in checks:
        finished = 0
        for seed in range(10):
            result = corral.generate(ns["model"], "A character, as JSON: ", grammar, max_tokens=120, seed=seed)
            try:
                validate(result.text)
            except Exception:
                continue
            finished += 1
        assert finished >= 9, (grammar, finished)
