"""`corral generate` and `python -m corral`: text on stdout, diagnostics on stderr."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

# The built-in model loves newlines: an unbounded \s* lets it write them until --max-tokens.
PATTERNS = [r"\s{0,3}19[0-9]{2}", r"[^\W\d]\w{0,12}", r"(yes|no), (always|never)\.", r"\d{3}-\d{4}"]


def run(*args, exe=None):
    cmd = (exe or [sys.executable, "-m", "corral"]) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generate_fits_pattern(pattern, seed):
    proc = run("generate", "--regex", pattern, "--seed", str(seed), "--max-tokens", "200")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("\n")
    assert re.fullmatch(pattern, proc.stdout[:-1]), repr(proc.stdout)


def test_generate_is_reproducible_and_streams():
    a = run("generate", "--regex", r"[a-z]{5,10}", "--seed", "3")
    b = run("generate", "--regex", r"[a-z]{5,10}", "--seed", "3", "--stream")
    assert a.returncode == 0 and a.stdout == b.stdout


def test_greedy_generation():
    proc = run("generate", "--regex", r"\d{4}", "--temperature", "0")
    assert proc.returncode == 0 and re.fullmatch(r"\d{4}\n", proc.stdout)


def test_max_tokens_exhausted_is_reported():
    proc = run("generate", "--regex", r"a{50}", "--max-tokens", "3", "--seed", "0")
    assert proc.returncode == 3
    assert "max-tokens" in proc.stderr


def test_console_script_installed():
    exe = shutil.which("corral")
    assert exe, "the corral console script is installed by pip"
    proc = run("generate", "--regex", r"ok", exe=[exe])
    assert proc.returncode == 0 and proc.stdout == "ok\n"
