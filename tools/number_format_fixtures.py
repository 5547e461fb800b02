#!/usr/bin/env python
"""Writes the fixtures of the Rust differential tests of the JSON Schema number and format
languages (crates/corral-core/tests/json_schema_numbers.rs, json_schema_formats.rs):

* tests/fixtures/numbers.json: inputs of python/corral/_schema/numbers.py's functions and
  what they return (the Python ``re`` source, or null for an empty range), the source of
  each of its fixed languages, and the transition table of each ``multiple_dfa``;
* tests/fixtures/formats.json: each format's pattern over the decoded value, the source the
  translator renders from it (``format_source``), and the test suite's format strings with
  the pattern's verdict on each.

    python tools/number_format_fixtures.py          # rewrite the fixtures
    python tools/number_format_fixtures.py --check  # exit 1 if they are stale

Inputs: every minimum/maximum/exclusiveMinimum/exclusiveMaximum/multipleOf value of the
JSON Schema Test Suite (all drafts, as written and as the translator reads a float), hand-
picked boundaries, and seeded random values. The modules are loaded from this checkout's
sources (no compiled extension needed).
"""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import random
import re
import sys
import types
from decimal import Decimal, localcontext

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUITE = ROOT.parent / "shared/data/json-schema-test-suite/tests"
OUT = ROOT / "crates/corral-core/tests/fixtures"
BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
# The translator's default Limits.max_multiple_states.
MAX_MULTIPLE_STATES = 4096


def load_schema_modules():
    """python/corral/_schema's pure-Python modules, as a package of their own."""
    pkg = types.ModuleType("schema_src")
    pkg.__path__ = [str(ROOT / "python/corral/_schema")]
    sys.modules["schema_src"] = pkg
    return (importlib.import_module(f"schema_src.{m}") for m in ("numbers", "formats", "ecma"))


num, formats, ecma = load_schema_modules()


def format_source(name: str) -> str:
    """What translate.format_source renders (translate.py needs the compiled extension)."""
    return ecma.render_json(ecma.full_language(formats.FORMAT_PATTERNS[name]))


def suite_files():
    return sorted(p for p in SUITE.rglob("*.json"))


def suite_numbers() -> list[str]:
    """The bound and step values of the suite, as written and as floats' repr."""
    out: set[str] = set()

    def walk(x, key=None):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in BOUND_KEYWORDS and isinstance(v, str):
                    out.add(v)
                    if re.search(r"[.eE]", v):
                        out.add(float_text(float(v)))
                walk(v, k)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for path in suite_files():
        walk(json.loads(path.read_text(), parse_float=str, parse_int=str))
    return sorted(out)


def float_text(f: float) -> str:
    """repr(f) as JSON number text (what the translator's Decimal of a float is)."""
    return repr(f).replace("inf", "1e999")



def boundary_numbers() -> list[str]:
    ints = ["0", "1", "9", "10", "11", "19", "20", "99", "100", "101", "109", "199", "999", "1000", "1001", "4999", "5000", "9999"]
    ints += ["18446744073709551615", "9007199254740993", "100000000000000000000000000000001", "999999999999999999999999999999999"]
    ints += ["123456789012345678901234567890123", str(10**40 + 7)]
    decimals = ["0.5", "0.1", "0.01", "0.001", "0.0001", "1.5", "12.5", "99.99", "123.456", "0.999", "9.9", "10.01", "0.05"]
    decimals += ["1e-8", "1e-30", "2.5e-12", "1e30", "1.5e3", "7e2", "1.7976931348623157e308", "5e-324", "1.23e-5"]
    decimals += ["972783798187987123879878123.18878137", "0.000000000000000000000000000000001", "1e-100"]
    out = []
    for t in ints + decimals:
        out += [t, "-" + t]
    return out


def random_numbers(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        shape = rng.randrange(5)
        sign = "-" if rng.random() < 0.4 else ""
        if shape == 0:  # an integer of 1-35 digits, often with runs of 0 and 9
            k = rng.randint(1, 35)
            digits = "".join(rng.choice("0999012345678" if rng.random() < 0.5 else "0123456789") for _ in range(k))
            out.append(sign + str(int(digits)))
        elif shape == 1:  # a plain decimal
            i = str(rng.randint(0, 10 ** rng.randint(0, 12)))
            f = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 14)))
            out.append(f"{sign}{i}.{f}")
        elif shape == 2:  # with an exponent
            m = str(rng.randint(1, 10 ** rng.randint(1, 6)))
            out.append(f"{sign}{m}e{rng.randint(-25, 25)}")
        elif shape == 3:  # a float as Python writes it
            out.append(float_text(rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-10, 10)))
        else:  # 0.00...0d
            out.append(f"{sign}0.{'0' * rng.randint(0, 20)}{rng.randint(1, 9)}")
    return out


def integer_values(values: list[str]) -> list[int]:
    return sorted({int(Decimal(v)) for v in values if Decimal(v) == Decimal(v).to_integral_value() and len(str(abs(int(Decimal(v))))) < 60})


def decimal_case(fn: str, args: list, func, *call) -> dict:
    """A case of a function of a Decimal, run with enough precision to be exact: under the
    default context (28 digits), ``abs(d)`` in ``numbers._split`` rounds a bound of more
    significant digits, so numbers.py is not exact there (``rounded`` marks those cases)."""
    with localcontext() as ctx:
        ctx.prec = 100_000
        exact = func(*call)
    case = {"fn": fn, "args": args, "src": exact}
    if func(*call) != exact:
        case["rounded"] = True
    return case


def number_cases(rng: random.Random) -> list[dict]:
    values = sorted(set(suite_numbers() + boundary_numbers() + random_numbers(rng, 120)), key=lambda t: (Decimal(t), t))
    cases = []
    for text in values:
        d = Decimal(text)
        for strict in (False, True):
            cases.append(decimal_case("decimal_ge", [text, strict], num.decimal_ge, d, strict))
            cases.append(decimal_case("decimal_le", [text, strict], num.decimal_le, d, strict))
        cases.append(decimal_case("canonical_forms", [text], num.canonical_forms, d))
    ints = integer_values(values)
    pairs = {(v, None) for v in ints} | {(None, v) for v in ints} | {(None, None)}
    pairs |= {tuple(sorted(rng.sample(ints, 2))) for _ in range(80)}
    pairs |= {(v, v) for v in ints[:: max(1, len(ints) // 20)]}
    pairs |= {(max(a, b), min(a, b)) for a, b in (rng.sample(ints, 2) for _ in range(10))}  # empty
    pairs |= {(v, v + k) for v in (-101, -100, -10, -1, 0, 1, 9, 99, 999) for k in (0, 1, 2, 9, 10, 11, 100, 1001)}
    for lo, hi in sorted(pairs, key=lambda p: (p[0] is None, p[0] or 0, p[1] is None, p[1] or 0)):
        show = lambda v: None if v is None else str(v)  # noqa: E731
        cases.append({"fn": "int_range", "args": [show(lo), show(hi)], "src": num.int_range(lo, hi)})
        if lo is not None:
            cases.append({"fn": "uint_range", "args": [show(lo), show(hi)], "src": num.uint_range(lo, hi)})
    return cases


def multiple_cases(rng: random.Random) -> list[dict]:
    steps = {t for t in suite_numbers() if Decimal(t) > 0}
    steps |= {"1", "2", "3", "7", "10", "25", "100", "0.5", "0.25", "0.01", "0.001", "1e-8", "1.5", "2.5e-3", "0.3", "1e2", "5e1", "12", "0.75"}
    steps |= {"4096", "1e-300", "1e300", "0.123456789", "17e-3"}  # past the cap
    steps |= {f"{rng.randint(1, 40)}e{rng.randint(-3, 0)}" for _ in range(12)}
    out = []
    for text in sorted(steps, key=lambda t: (Decimal(t), t)):
        dfa = num.multiple_dfa(Decimal(text), MAX_MULTIPLE_STATES)
        table = None
        if dfa is not None:
            # Each state's targets on "-", ".", "0".."9" (-1: none).
            moves = [[m.get(c, -1) for c in ALPHABET] for m in dfa.moves]
            table = {"start": dfa.start, "finals": sorted(dfa.finals), "moves": moves}
        out.append({"step": text, "max_states": MAX_MULTIPLE_STATES, "dfa": table})
    return out


ALPHABET = "-.0123456789"
CONSTANTS = (
    "NUMBER", "PLAIN_NUMBER", "UINT", "INTEGER", "CANONICAL_INTEGER", "CANONICAL_PLAIN_FLOAT",
    "CANONICAL_EXP_FLOAT", "CANONICAL_PLAIN_NUMBER", "CANONICAL_NUMBER", "CANONICAL_EXP_INTEGRAL",
)


def numbers_fixture() -> dict:
    rng = random.Random(20240611)
    return {
        "alphabet": ALPHABET,
        "constants": {name: getattr(num, name) for name in CONSTANTS},
        "cases": number_cases(rng),
        "multiples": multiple_cases(rng),
    }


def format_strings() -> list[dict]:
    """Every string tested against a format in the suite, with the pattern's verdict."""
    seen = set()
    out = []
    for path in suite_files():
        for group in json.loads(path.read_text()):
            name = group["schema"].get("format") if isinstance(group["schema"], dict) else None
            if name not in formats.FORMAT_PATTERNS:
                continue
            for test in group["tests"]:
                value = test["data"]
                if not isinstance(value, str) or (name, value) in seen:
                    continue
                seen.add((name, value))
                verdict = re.fullmatch(formats.FORMAT_PATTERNS[name], value) is not None
                encoded = json.dumps(value, ensure_ascii=False)[1:-1]
                out.append({"format": name, "encoded": encoded, "matches": verdict})
    return out


def formats_fixture() -> dict:
    names = sorted(formats.FORMAT_PATTERNS)
    return {
        "formats": [{"name": n, "pattern": formats.FORMAT_PATTERNS[n], "source": format_source(n)} for n in names],
        "gaps": sorted(formats.FORMAT_GAPS),
        "strings": format_strings(),
    }


def render(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only report fixtures that differ from what would be written")
    args = ap.parse_args()
    files = {OUT / "numbers.json": render(numbers_fixture()), OUT / "formats.json": render(formats_fixture())}
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for p, text in files.items():
        p.write_text(text)
        print(f"{p.relative_to(ROOT)}: {len(text):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
