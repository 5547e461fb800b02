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


def test_grammar_files_by_extension(tmp_path):
    import json as _json

    ebnf = tmp_path / "answer.ebnf"
    ebnf.write_text('start ::= ("yes" | "no") "!" ;\n')
    gbnf = tmp_path / "answer.gbnf"
    gbnf.write_text('root ::= ("aye" | "nay") "."\n')
    lark = tmp_path / "answer.lark"
    lark.write_text('start: WORD "?"\nWORD: /[a-z]{2,6}/\n')
    for path, pattern in ((ebnf, r"(yes|no)!"), (gbnf, r"(aye|nay)\."), (lark, r"[a-z]{2,6}\?")):
        proc = run("generate", "--grammar", str(path), "--seed", "1", "--prompt", "ROMEO:\n")
        assert proc.returncode == 0, proc.stderr
        assert re.fullmatch(pattern, proc.stdout[:-1]), (path.suffix, proc.stdout)
    txt = tmp_path / "answer.txt"
    txt.write_text('start ::= "x" ;')
    proc = run("generate", "--grammar", str(txt))
    assert proc.returncode == 2 and "--grammar-format" in proc.stderr
    proc = run("generate", "--grammar", str(txt), "--grammar-format", "ebnf")
    assert proc.returncode == 0 and proc.stdout == "x\n"
    schema = tmp_path / "person.json"
    schema.write_text(_json.dumps({
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }))
    proc = run("generate", "--json-schema", str(schema), "--seed", "2", "--prompt", "ROMEO:\n")
    assert proc.returncode == 0, proc.stderr
    value = _json.loads(proc.stdout)
    assert set(value) == {"name", "age"} and 0 <= value["age"] <= 120


@pytest.mark.parametrize("mode", ["mask", "rollback"])
def test_ban_flags(mode):
    args = ["generate", "--prompt", "ROMEO:\n", "--max-tokens", "60", "--ban", "the", "and", "--whole-words",
            "--ignore-case", "--ban-mode", mode]
    for seed in range(3):
        proc = run(*args, "--seed", str(seed))
        assert proc.returncode == 0, proc.stderr
        assert not re.search(r"(?<!\w)(the|and)(?!\w)", proc.stdout, re.I), proc.stdout
    free = [run("generate", "--prompt", "ROMEO:\n", "--max-tokens", "60", "--seed", str(s)).stdout for s in range(3)]
    assert any(re.search(r"(?<!\w)(the|and)(?!\w)", t, re.I) for t in free)


def test_choice_stream_and_sampling_flags():
    a = run("generate", "--choice", "yes", "no", "never", "--seed", "5", "--top-k", "5", "--top-p", "0.9")
    b = run("generate", "--choice", "yes", "no", "never", "--seed", "5", "--top-k", "5", "--top-p", "0.9", "--stream")
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout[:-1] in ("yes", "no", "never")


def test_bad_flags_are_errors_on_stderr(tmp_path):
    proc = run("generate", "--regex", "a", "--choice", "b")
    assert proc.returncode == 2 and "at most one" in proc.stderr and proc.stdout == ""
    proc = run("generate", "--regex", "(a")
    assert proc.returncode == 2 and "corral: error:" in proc.stderr and proc.stdout == ""
    proc = run("generate", "--json-schema", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "cannot read" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = run("generate", "--json-schema", str(bad))
    assert proc.returncode == 2 and "bad.json:1:2" in proc.stderr
    proc = run("generate", "--model", str(tmp_path))
    assert proc.returncode == 2 and "config.json" in proc.stderr


def test_bad_input_is_one_line_and_exit_code_2(tmp_path):
    binary = tmp_path / "binary.ebnf"
    binary.write_bytes(b"s ::= \x00\xff\xfe ;")
    latin1 = tmp_path / "latin1.gbnf"
    latin1.write_bytes('root ::= "caf\u00e9"'.encode("latin-1"))
    listed = tmp_path / "list.json"
    listed.write_text('[{"type": "string"}]')
    number = tmp_path / "number.json"
    number.write_text("3")
    cases = [
        (["--grammar", str(binary)], "not UTF-8"),
        (["--grammar", str(latin1)], "not UTF-8"),
        (["--json-schema", str(listed)], "not a JSON list"),
        (["--json-schema", str(number)], "not a JSON int"),
        (["--regex", "a", "--temperature", "nan"], "temperature"),
        (["--regex", "a", "--temperature", "inf"], "temperature"),
        (["--regex", "a", "--seed", "-1"], "--seed"),
        (["--regex", "a", "--max-tokens", "-3"], "--max-tokens"),
        (["--regex", "a", "--top-p", "2"], "--top-p"),
        (["--regex", "ab\\p{L}"], "error"),
    ]
    for args, expected in cases:
        proc = run("generate", *args)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(lines) == 1 and lines[0].startswith("corral: error:") and expected in lines[0], (args, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_a_tiny_temperature_is_greedy():
    greedy = run("generate", "--regex", "[a-z]{8}", "--temperature", "0", "--prompt", "KING ")
    tiny = run("generate", "--regex", "[a-z]{8}", "--temperature", "1e-320", "--prompt", "KING ", "--seed", "3")
    assert greedy.returncode == 0 and tiny.returncode == 0
    assert tiny.stdout == greedy.stdout


@pytest.mark.parametrize("indent", ["2", "0"])
def test_json_schema_indent(tmp_path, indent):
    import json as _json

    schema = tmp_path / "point.json"
    schema.write_text(_json.dumps({
        "type": "object",
        "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}},
        "required": ["x", "tags"],
        "additionalProperties": False,
    }))
    for seed in range(3):
        proc = run("generate", "--json-schema", str(schema), "--indent", indent, "--seed", str(seed), "--prompt", "ROMEO:\n")
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout[:-1]
        assert text == _json.dumps(_json.loads(text), indent=int(indent), ensure_ascii=False)
        assert text.startswith("{\n")
    proc = run("generate", "--json-schema", str(schema), "--indent", "2", "--whitespace", "flexible")
    assert proc.returncode == 2 and "indent" in proc.stderr


def test_structural_tags_and_tools(tmp_path):
    import json as _json

    answer = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}
    spec = tmp_path / "answer.json"
    spec.write_text(_json.dumps({"type": "structural_tag", "format": {"type": "tag", "begin": "<answer>", "content": {"type": "json_schema", "json_schema": answer}, "end": "</answer>"}}))
    for seed in range(2):
        proc = run("generate", "--structural-tag", str(spec), "--whitespace", "compact", "--seed", str(seed))
        assert proc.returncode == 0, proc.stderr
        assert re.fullmatch(r'<answer>\{"ok":(true|false)\}</answer>\n', proc.stdout), proc.stdout
    tools = tmp_path / "tools.json"
    tools.write_text(_json.dumps([{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"], "additionalProperties": False}}}]))
    proc = run("generate", "--tools", str(tools), "--tool-choice", "get_time", "--whitespace", "compact", "--seed", "0", "--max-tokens", "200")
    assert proc.returncode in (0, 3), proc.stderr  # free text may follow the call until --max-tokens
    assert re.match(r'<tool_call>\n\{"name": "get_time", "arguments": \{"zone":"(UTC|CET)"\}\}\n</tool_call>', proc.stdout), proc.stdout
    proc = run("generate", "--tools", str(tools), "--tool-choice", "get_time", "--tool-format", "qwen3_xml", "--seed", "0", "--max-tokens", "200")
    assert proc.returncode in (0, 3), proc.stderr
    assert re.match(r"<tool_call>\n<function=get_time>\n\s*<parameter=zone>(UTC|CET)</parameter>\s*\n</function>\n</tool_call>", proc.stdout), proc.stdout
    proc = run("generate", "--tools", str(tools), "--tool-choice", "get_weather")
    assert proc.returncode == 2 and "not among the tools" in proc.stderr
    # A budget of 0 tokens asks for reasoning and leaves it empty; one call at most.
    for seed in range(3):
        proc = run("generate", "--tools", str(tools), "--tool-choice", "get_time", "--reasoning-budget", "0", "--single-call", "--seed", str(seed), "--max-tokens", "120")
        assert proc.returncode in (0, 3), proc.stderr
        assert proc.stdout.startswith("<think></think><tool_call>\n") and proc.stdout.count("<tool_call>") == 1, proc.stdout
    proc = run("generate", "--tools", str(tools), "--tool-choice", "get_time", "--reasoning", "--seed", "0", "--max-tokens", "200")
    assert proc.returncode in (0, 3) and proc.stdout.startswith("<think>"), proc.stderr
    proc = run("generate", "--tools", str(tools), "--reasoning-budget", "-1")
    assert proc.returncode == 2 and "number of tokens" in proc.stderr
    proc = run("generate", "--tools", str(tools), "--regex", "x")
    assert proc.returncode == 2 and "at most one" in proc.stderr


def test_a_shaping_flag_without_its_constraint_is_an_error(tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text('[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]')
    tag = tmp_path / "tag.json"
    tag.write_text('{"type": "structural_tag", "format": {"type": "const_string", "value": "hi"}}')
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "integer"}')
    cases = [
        (["--tools", str(tools), "--indent", "2"], "--indent applies to --json-schema"),
        (["--structural-tag", str(tag), "--tool-choice", "f"], "--tool-choice applies to --tools"),
        (["--structural-tag", str(tag), "--tool-format", "mistral"], "--tool-format applies to --tools"),
        (["--structural-tag", str(tag), "--reasoning"], "--reasoning applies to --tools"),
        (["--json-schema", str(schema), "--reasoning-budget", "5"], "--reasoning-budget applies to --tools"),
        (["--regex", "a", "--single-call"], "--single-call applies to --tools"),
        (["--regex", "a", "--whitespace", "compact"], "--whitespace applies to"),
        (["--regex", "a", "--grammar-format", "lark"], "--grammar-format applies to --grammar"),
        (["--regex", "a", "--ignore-case"], "--ignore-case applies to --ban"),
        (["--json-schema", str(schema), "--ban-mode", "rollback"], "--ban-mode applies to --ban"),
    ]
    for args, expected in cases:
        proc = run("generate", *args)
        assert proc.returncode == 2 and expected in proc.stderr and proc.stdout == "", (args, proc.stderr)
    # Where the flag applies, it is taken.
    proc = run("generate", "--json-schema", str(schema), "--indent", "2", "--max-tokens", "30", "--seed", "1")
    assert proc.returncode in (0, 1) and "applies to" not in proc.stderr, proc.stderr
