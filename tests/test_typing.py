"""Typing: the native module's stubs (``corral/_core.pyi``) match the built module, and
the Python examples in README.md and docs/ type-check against corral's annotations."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import corral

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"
# The directory that holds the corral package being tested (the source tree or site-packages).
PACKAGE_ROOT = Path(corral.__file__).resolve().parents[1]
EXAMPLE_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _mypy_env() -> dict[str, str]:
    """The environment for a mypy subprocess that sees the corral under test: its directory
    on the import path, and on mypy's search path unless it is installed (mypy finds an
    installed package through its py.typed, and refuses site-packages in MYPYPATH)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    installed = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    if PACKAGE_ROOT not in installed:
        env["MYPYPATH"] = str(PACKAGE_ROOT)
    return env


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=_mypy_env(), capture_output=True, text=True, timeout=600
    )


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)


def _is_signature_listing(block: str) -> bool:
    """An API summary written as ``call() -> type`` lines rather than runnable code."""
    return any(re.search(r"\)\s*->\s*[\w\[]", line) for line in block.splitlines())


def _write_examples(tmp_path: Path) -> list[Path]:
    """Each python block of the docs as its own module (a block that is not Python must
    be an API summary, which is not type-checked)."""
    files = []
    for doc in EXAMPLE_FILES:
        for i, block in enumerate(_python_blocks(doc)):
            try:
                ast.parse(block)
            except SyntaxError:
                assert _is_signature_listing(block), f"{doc.name} python block {i} does not parse:\n{block}"
                continue
            path = tmp_path / f"{doc.stem}_{i}.py"
            path.write_text(block, encoding="utf-8")
            files.append(path)
    return files


def _mypy_examples(tmp_path: Path, files: list[Path]) -> subprocess.CompletedProcess:
    # Examples are fragments that use names defined in the prose around them (`vocab`,
    # `tokenizer`, `model`): an undefined name is read as Any, everything else is checked.
    return _run(
        [
            "mypy",
            "--config-file", str(PYPROJECT),
            "--cache-dir", str(tmp_path / ".mypy_cache"),
            "--disable-error-code", "name-defined",
            "--no-error-summary",
            *map(str, files),
        ],
        cwd=tmp_path,
    )


def test_the_package_type_checks(tmp_path):
    # [tool.mypy] in pyproject.toml names the package and what is left out of the check.
    proc = _run(["mypy", "--config-file", str(PYPROJECT), "--cache-dir", str(tmp_path / ".mypy_cache")], cwd=tmp_path)
    assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout + proc.stderr


def test_stubs_match_the_native_module(tmp_path):
    proc = _run(["mypy.stubtest", "corral._core", "--mypy-config-file", str(PYPROJECT)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_stubtest_notices_a_wrong_stub(tmp_path):
    # The check above can fail: a stub that renames a parameter is reported.
    stub = (Path(corral.__file__).parent / "_core.pyi").read_text(encoding="utf-8")
    assert "def matches(self, data: bytes)" in stub
    fake = tmp_path / "pkg" / "corral"
    fake.mkdir(parents=True)
    (fake / "__init__.pyi").write_text("")
    (fake / "_core.pyi").write_text(stub.replace("def matches(self, data: bytes)", "def matches(self, payload: bytes)"))
    env = _mypy_env()
    env["MYPYPATH"] = str(tmp_path / "pkg")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "corral._core", "--mypy-config-file", str(PYPROJECT)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode != 0 and 'parameter "payload" differs' in proc.stdout, proc.stdout + proc.stderr


def test_docs_python_examples_type_check(tmp_path):
    files = _write_examples(tmp_path)
    assert any(f.name.startswith("README") for f in files) and len(files) >= 10
    proc = _mypy_examples(tmp_path, files)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_example_type_check_finds_a_wrong_call(tmp_path):
    # The same check on an example with a type error reports it (and not as a crash).
    bad = tmp_path / "bad.py"
    bad.write_text('import corral\ncorral.compile(corral.Grammar.regex("a"), "not a vocabulary")\n')
    proc = _mypy_examples(tmp_path, [bad])
    assert proc.returncode == 1 and 'bad.py:2: error: Argument 2 to "compile"' in proc.stdout, proc.stdout


def test_mixed_matchers_type_check(tmp_path):
    # corral.fill_bitmasks takes the matchers of combined grammars (g1 & g2) too, and
    # corral.compile may return either kind of compiled grammar.
    good = tmp_path / "good.py"
    good.write_text(
        "import corral\n"
        "vocab = corral.Vocabulary.from_token_bytes([b'a', b'b', b''], eos_token_ids=[2])\n"
        "plain = corral.compile(corral.Grammar.regex('a+'), vocab)\n"
        "both = corral.compile(corral.Grammar.regex('a+') & corral.Grammar.ban(['aaa']), vocab)\n"
        "bitmask = corral.allocate_bitmask(2, vocab.size)\n"
        "corral.fill_bitmasks([plain.matcher(), both.matcher()], bitmask)\n"
        "ok: bool = both.matches(b'aa') and plain.matcher().advance(0)\n"
    )
    proc = _mypy_examples(tmp_path, [good])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_package_ships_its_type_information():
    package = Path(corral.__file__).parent
    assert (package / "py.typed").is_file() and (package / "_core.pyi").is_file()


def test_warnings_of_grammars_without_a_native_grammar():
    # Found by the type check: `warnings` read the native grammar, which a combined
    # grammar (g1 & g2) and a rollback-mode ban do not have (AttributeError).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unused = corral.Grammar.ebnf('start ::= "a" ;\nother ::= "b" ;')
    assert unused.warnings
    assert (unused & corral.Grammar.regex("a")).warnings == unused.warnings
    assert corral.Grammar.ban(["x"], mode="rollback").warnings == []
