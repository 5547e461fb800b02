"""Writes the fixtures of the differential test of corral-core's ECMAScript patterns.

Runs the Python translator's ``ecma`` module (``python/corral/_schema/ecma.py``, the
reference) over a corpus of patterns and writes, for each, what it makes of it:

* ``search``: ``search_language`` (what JSON Schema's ``pattern`` means), rendered over the
  value's JSON encoding (``render_json``) and over the decoded value (``render_value``);
* ``full``: ``full_language`` (the whole string matches, as ``format`` patterns are read),
  rendered both ways;

or, where the module refuses the pattern, its message, position and whether the construct
is unsupported (rather than invalid). The Rust test
(``crates/corral-core/tests/json_schema_ecma.rs``) builds the DFA of every rendered Python
``re`` source with the core's Python-``re`` front-end and checks that the HIR built by
``corral_core::json_schema::ecma`` accepts the same language, and that errors agree.

The corpus: every ``pattern`` and ``patternProperties`` key of the JSON Schema Test Suite
(``../shared/data/json-schema-test-suite``, all drafts, ``optional/`` included), of the
benchmark schemas (``bench/json_schemas``) and of the Python JSON Schema tests, the
``format`` patterns, and a hand-picked set of tricky patterns.

    python tools/ecma_fixtures.py [--suite DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "crates" / "corral-core" / "tests" / "fixtures" / "ecma.json"
SUITE = REPO.parent / "shared" / "data" / "json-schema-test-suite"
TEST_FILES = ["tests/test_json_schema.py", "tests/test_json_schema_hardening.py", "tests/json_schema_suite.py", "tests/test_json_schema_suite.py"]

# Patterns chosen to reach every branch of the reader and of the two renderings.
# fmt: off
TRICKY = [
    # character classes and their escapes
    r"\d+", r"\D", r"\w\W\s\S", r"[\d\s-]", r"[^\d]", r"[a-z\d_]", r"[\w-]", r"[-a]", r"[a-]", r"[]", r"[^]",
    r"[\]]", r"[\\]", r'["\\]', r"[\b]", r"[\-a]", r"[a\-z]", r"[\d-a]", r"[a-\d]", r"[z-a]", r"[", r"[a", r"[^a]",
    r"[^\s\S]", r"[\s\S]", r"[^\d\D]", r"[.]", r"[^\n]", r"[\x00-\x1f]", r"[^\x20-\x7e]", r'[^"\\]', r"[\0]",
    r"[\cJ]", r"[\u0041-\u005A]", r"[^\u0000-\uFFFF]", r"[\t-\r ]", r"[a-a]", r"[(){}|*+?.^$]", r"[\B]",
    r"[\1]", r"[\p{L}]", r"[\q]", r"[\/]", r"[^\w\s]", r"[\W\d]", r"[\u{1F600}-\u{1F64F}]",
    # escapes
    r"\u0041", r"\u{1F600}", r"\u{10FFFF}", r"\u{110000}", r"\u{}", r"\u{zz}", r"\u{0000041}", r"\u{41",
    r"\uD83D\uDE00", r"\uD83D", r"\uDE00", r"\uD83D\u0041", r"\uD83D\uD83D", r"[\uD83D\uDE00-\uD83D\uDE4F]",
    r"[\uD800-\uDFFF]", r"[\uD800-\uDFFFa]", r"\u{D800}", r"\u12", r"\u", r"\x41", r"\x4", r"\xg1", r"\cA", r"\cz",
    r"\c1", r"\c", r"\0", r"\01", r"\0a", r"\1", r"\9", r"\k<a>", r"\k", r"\p{L}", r"\P{L}", r"\q", r"\é", r"\-",
    r"\/", r"\.", r"\\", r"\n\r\t\v\f", r"\b", r"\B", "a\\", "\\", r"\ ", r"\_", r"\D\W\S",
    # quantifiers
    r"a{2}", r"a{2,}", r"a{2,5}", r"a{5,2}", r"a{,5}", r"{2}", r"a{", r"a{x}", r"x{0}", r"x{0,0}", r"a*?", r"a+?",
    r"a??", r"a**", r"a{2}{3}", r"a???", r"*a", r"a|*", r"+", r"?", r"a{1}?", r"a{01,02}", r"{", r"}", r"]",
    r"a{2,}?", r"x{3,3}", r"a{1,2}{", r"\u{1F600}{2}", r"[\s\S]{2}", r'^"[^"]*"\\$', r"a{1,2", r"(ab){2,3}", r"(a|bc)*d", r"a{0,1000}", r"[ab]{3,7}c", r"x{12}",
    # counts past Python re's bound (4294967295): the Python translator renders them, re refuses them
    r"^{99999999999}", r"^{3,2}", r"a{99999999999999999999,99999999999999999998}", r"a{4294967295}", r"a{1,4294967295}",
    r"a{4294967294,}",
    # anchors
    r"^a", r"a$", r"^a$", r"^$", r"^", r"$", r"^^a$$", r"^a|b$", r"^(a|b)$", r"(^a|^b)", r"(^a$|^b$)", r"^(^a|b)",
    r"a^b", r"a$b", r"(a$)b", r"^*", r"$?", r"^{2}", r"(?:^a)", r"^(a)|(b)$", r"a|^", r"(^a)|b", r"((^a))",
    r"^(a|^b)", r"^(a|b$)", r"(a|b)|^c", r"^a|^b|c$", r"(^a|b)$", r"^(a$|b$)", r"^(?:a|b)c$", r"(a)^",
    r"^(^a|^b)$", r"(^)", r"a|$", r"^|$", r"(^a|b)|c", r"((a|b))$",
    # groups and alternation
    r"(?:a)", r"(?<name>a)", r"(?<name", r"(?=a)", r"(?!a)", r"(?<=a)", r"(?<!a)", r"(?x)", r"(?", r"(a", r"a)",
    r"()", r"(|a)", r"a||b", r"|", r"(?<a)b>c)", r"((a)(b))c", r"a(b|c(d|e))f", r"(?:)", r"(?:a|)+",
    # dot, literals, characters JSON escapes
    r".", r".*", r".+x", '"', r'"\\"', "\t", r"\u0000-", r"é+", "😀", r"[😀-😂]", r"\u{1F600}+", r"a.b", r"\x7f",
    r"\u001f\u0020", r"\u2028", r"[\u2028\u2029]", r"/", r"\"", "\u00a0", r"[^\x00-\x7f]+",
    # Python's reader reads digits as str.isdigit/re's \d do (any Unicode decimal digit)
    r"a{٣}", r"\٣", r"\²", r"\0٣", r"\0²",
    # positions count characters, not bytes
    "😀(", "é\\", "(?<😀>a)", "[😀-a]", "😀a{2,1}", "é^",
    # realistic ones
    r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$", r"^\d{3}-\d{2}-\d{4}$", r"^(\([0-9]{3}\))?[0-9]{3}-[0-9]{4}$",
    r"^[A-Z]{2,3}$", r"^https?://", r"\.(jpg|png)$", r"^\S+$", r"^[^\s@]+@[^\s@]+$", r"^#[0-9a-fA-F]{6}$",
    r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$", r"^\p{Lu}", r"^(?!foo)", r"(\w+)\s\1",
]
# fmt: on


def load(name: str, path: Path):
    """A module of the Python translator, loaded by path (no need for the compiled core)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def json_patterns(value, out: list) -> None:
    """Every ``pattern`` string and ``patternProperties`` key in a JSON document."""
    if isinstance(value, dict):
        if isinstance(value.get("pattern"), str):
            out.append(value["pattern"])
        if isinstance(value.get("patternProperties"), dict):
            out.extend(value["patternProperties"])
        for v in value.values():
            json_patterns(v, out)
    elif isinstance(value, list):
        for v in value:
            json_patterns(v, out)


def python_patterns(path: Path, out: list) -> None:
    """The same in the dict displays of a Python source file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Dict):
            continue
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                continue
            if k.value == "pattern" and isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            elif k.value == "patternProperties" and isinstance(v, ast.Dict):
                out.extend(kk.value for kk in v.keys if isinstance(kk, ast.Constant) and isinstance(kk.value, str))


def corpus(suite: Path, formats) -> list[str]:
    found: list[str] = []
    for root in (suite, REPO / "bench" / "json_schemas"):
        for path in sorted(root.rglob("*.json")):
            json_patterns(json.loads(path.read_text(encoding="utf-8")), found)
    for name in TEST_FILES:
        if (REPO / name).exists():
            python_patterns(REPO / name, found)
    found.extend(formats.FORMAT_PATTERNS[name] for name in sorted(formats.FORMAT_PATTERNS))
    found.extend(TRICKY)
    out, seen = [], set()
    for p in found:
        try:
            p.encode("utf-8")  # a lone surrogate cannot be a Rust string
        except UnicodeEncodeError:
            continue
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def outcome(ecma, language, src: str) -> dict:
    try:
        tree = language(src)
    except ecma.PatternError as e:
        return {"error": e.message, "position": e.position, "unsupported": e.unsupported}
    return {"json": ecma.render_json(tree), "value": ecma.render_value(tree)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", type=Path, default=SUITE)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if not args.suite.is_dir():
        sys.exit(f"no JSON Schema Test Suite at {args.suite}")
    ecma = load("corral_ecma_reference", REPO / "python" / "corral" / "_schema" / "ecma.py")
    formats = load("corral_formats_reference", REPO / "python" / "corral" / "_schema" / "formats.py")
    fixtures = []
    for src in corpus(args.suite, formats):
        fixtures.append({"pattern": src, "search": outcome(ecma, ecma.search_language, src), "full": outcome(ecma, ecma.full_language, src)})
    doc = {
        "generator": "tools/ecma_fixtures.py",
        "json_char": ecma.JSON_CHAR,
        "patterns": fixtures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("error" in f["search"] for f in fixtures)
    print(f"{len(fixtures)} patterns ({errors} refused) -> {args.out.relative_to(REPO)} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
