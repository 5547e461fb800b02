#!/usr/bin/env python
"""Writes crates/corral-core/src/json_schema/translate/scalars_fixtures.jsonl: scalar schemas
(numbers, strings, enums and literals, with the translator's options), what the Python
translator makes of each (a grammar, or the error class), and for a pool of candidate
texts whether its grammar allows each. The Rust unit tests (translate/scalars_tests.rs)
translate the same schemas with the core's translator and check every verdict.

    python tools/scalar_translate_fixtures.py

Needs an installed corral whose ``corral._schema.translate`` is the Python translator.
"""

from __future__ import annotations

import json
import pathlib
import random

import corral
from corral._schema import translate

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/corral-core/src/json_schema/translate/scalars_fixtures.jsonl"
DRAFT4 = "http://json-schema.org/draft-04/schema#"

VOCAB = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])


def number_pool() -> list[str]:
    rng = random.Random(7)
    pool = [str(i) for i in range(-25, 26)]
    pool += """-0 -0.0 0.0 0.00 1.0 1.00 1.5 1.50 2.25 2.250 -1.5 -1.50 -1.25 0.5 0.25 0.75 0.1 0.30 2.5
    7.5 12 12.0 13 -3 -4 -2 -2.0 -3.5 3e0 1e1 1E1 1.5e1 2.5E-1 1e16 1e+16 1e-05 1e-5 0.00001
    100000000000000000000 1e+20 1.0e16 10000000000000000 10000000000000000.0 01 +1 .5 1. - 1e400
    9.0 0.999 1.001 6.0 6.5 4.75 -0.25 0.125 99 100 101 3.0000 1e2 1E+2 1.5e+16 0.1e1""".split()
    for _ in range(60):
        whole = str(rng.randint(-30, 30))
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 3)))
        pool.append(whole + ("." + frac if frac else ""))
    return list(dict.fromkeys(pool))


def string_pool() -> list[str]:
    texts = ["", "a", "ab", "abc", "abcd", "aab", "aa", "aaab", "b", "xb", "x", "xyz", "12", "a12b", "1234", "12345",
             "\n", "é", "日本", "2024-02-29", "2023-02-29", "2024-13-01", "a@b.co", "averylong@example.com",
             "123e4567-e89b-12d3-a456-426614174000", 'b"c', "b\\c", "\x01", "pip; args: x", "A9"]
    out = [json.dumps(t, ensure_ascii=False) for t in texts]
    # Non-canonical encodings: never allowed (one encoding per string).
    out += ['"\\u0041"', '"\\/"', "abc", '"abc', '"\\x"']
    return out


def long_pool() -> list[list]:
    """Long strings as [encoded character, count]: the text is '"' + character * count + '"'."""
    out = []
    for n in (999, 1000, 1023, 1024, 2047, 2048, 2049, 2050, 2100, 2101, 3000, 3001, 4096):
        out += [["a", n], ["\\n", n]]
    out.append(["é", 2050])
    return out


def text_of(candidate) -> str:
    if isinstance(candidate, list):
        return '"' + candidate[0] * candidate[1] + '"'
    return candidate


def literal_pool() -> list[str]:
    return ["1", "1.0", "1.50", "1.5", '"a"', "null", "true", "false", "[1,2]", "[1, 2]", "[ 1,2 ]",
            '{"a":1,"b":[true]}', '{"a": 1, "b": [true]}', '{"b":[true],"a":1}', "2.5", "2.50", "[]", "{}",
            "[ ]", "{ }", '{"x":1.0}', '{"x":1}', '{"x":1.00}', '{"x": 1}', '{\n  "x": 1.0\n}',
            '{\n  "x": 1\n}', "[\n  1,\n  2\n]", '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}', "1e16",
            "10000000000000000", "1e+16", "1e-05", "0.00001", "1e+20", "100000000000000000000", "0.1",
            "0.10", "-0.0", "0", "-0", "0.0", '"ab"', '"abc"', '"x"', "2", "3", "4"]


def cases():
    n, s, lng, lit = number_pool(), string_pool(), long_pool(), literal_pool()
    frac = {"integer_fraction": True}
    no_frac = {"integer_fraction": False}
    yield {"type": "number"}, {}, n
    yield {"type": "integer"}, no_frac, n
    yield {"type": "integer"}, frac, n
    yield {"type": "integer", "minimum": -3, "maximum": 12}, no_frac, n
    yield {"type": "integer", "minimum": -3, "maximum": 12}, frac, n
    yield {"type": "integer", "exclusiveMinimum": -3, "exclusiveMaximum": 12}, no_frac, n
    yield {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}, no_frac, n
    yield {"type": "integer", "exclusiveMinimum": -1, "exclusiveMaximum": 0}, no_frac, n
    yield {"type": "integer", "minimum": -2.5, "maximum": 7.5}, no_frac, n
    yield {"type": "integer", "exclusiveMinimum": 2.5, "exclusiveMaximum": 9.5}, no_frac, n
    yield {"type": "integer", "exclusiveMinimum": 99}, no_frac, n
    yield {"type": "integer", "exclusiveMaximum": -9}, no_frac, n
    yield {"type": "number", "minimum": -1.5, "maximum": 2.25}, {}, n
    yield {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, {}, n
    yield {"type": "number", "minimum": 1, "exclusiveMaximum": 1}, {}, n
    yield {"type": "number", "minimum": 2, "maximum": 1}, {}, n
    yield {"type": "integer", "minimum": 2.2, "maximum": 2.8}, no_frac, n
    yield {"type": "integer", "multipleOf": 3}, no_frac, n
    yield {"type": "integer", "multipleOf": 3}, frac, n
    yield {"type": "number", "multipleOf": 0.25, "minimum": -1, "maximum": 2}, {}, n
    yield {"type": "number", "multipleOf": 0.5}, {}, n
    yield {"type": "number", "not": {"multipleOf": 2}, "minimum": 0, "maximum": 10}, {}, n
    yield {"type": "integer", "multipleOf": 2, "not": {"multipleOf": 3}}, no_frac, n
    yield {"type": "integer", "multipleOf": 2, "not": {"enum": [4, 6.0]}}, no_frac, n
    yield {"type": "number", "not": {"type": "integer"}}, {}, n
    yield {"type": "number", "not": {"type": "integer"}}, frac, n
    yield {"type": "number", "not": {"type": "integer"}, "maximum": 3}, {}, n
    yield {"type": "number", "not": {"enum": [1, 2.5]}}, {}, n
    yield {"type": "integer", "not": {"const": 0}}, frac, n
    yield {"$schema": DRAFT4, "type": "integer", "minimum": 0}, frac, n
    yield {"$schema": DRAFT4, "type": "integer"}, frac, n
    yield {"type": "number"}, {"indent": 2}, n
    yield {"type": "integer"}, {"indent": 2, **no_frac}, n
    yield {"type": "integer"}, {"indent": 2, **frac}, n
    yield {"type": "number", "not": {"type": "integer"}}, {"indent": 2}, n
    yield {"type": "number", "minimum": 0, "maximum": 100}, {"indent": 2}, n
    yield {"type": "number", "multipleOf": 0.5, "maximum": 10}, {"indent": 2}, n
    yield {"type": "string"}, {}, s
    yield {"type": "string", "minLength": 2, "maxLength": 3}, {}, s
    yield {"type": "string", "minLength": 3, "maxLength": 2}, {}, s
    yield {"type": "string", "pattern": "^a+b?$"}, {}, s
    yield {"type": "string", "pattern": "\\d{2}", "maxLength": 4}, {}, s
    yield {"type": "string", "pattern": "b"}, {}, s
    yield {"type": "string", "format": "date"}, {}, s
    yield {"type": "string", "format": "email", "maxLength": 10}, {}, s
    yield {"type": "string", "not": {"format": "uuid"}, "maxLength": 4}, {}, s
    yield {"type": "string", "not": {"pattern": "^x"}}, {}, s
    yield {"type": "string", "not": {"enum": ["a", 'b"c', 1]}, "maxLength": 3}, {}, s
    yield {"type": "string", "pattern": "^a", "not": {"pattern": "b$"}, "minLength": 2}, {}, s
    yield {"type": "string", "pattern": "^x$", "not": {"const": "x"}}, {}, s
    yield {"type": "string", "minLength": 2050}, {}, lng
    yield {"type": "string", "minLength": 1000, "maxLength": 3000}, {}, lng
    yield {"type": "string", "maxLength": 2100}, {}, lng
    yield {"type": "string", "minLength": 2048, "maxLength": 2049}, {}, lng
    yield {"type": "string", "minLength": 2049, "maxLength": 4096}, {}, lng
    yield {"enum": [1, "a", None, True, [1, 2], {"a": 1, "b": [True]}, 2.50]}, {}, lit
    yield {"enum": [1, "a", None, True, [1, 2], {"a": 1, "b": [True]}, 2.50]}, {"indent": 2}, lit
    yield {"enum": [1, "a", None, True, [1, 2], {"a": 1, "b": [True]}, 2.50, [], {}]}, {"whitespace": "flexible", "max_whitespace": 1}, lit
    yield {"const": {"x": 1.0}}, {}, lit
    yield {"const": {"x": 1.0}}, {"indent": 2}, lit
    yield {"enum": [1, 1.5, 1e16, 1e-5, 100000000000000000000, 0.1, -0.0, 0]}, {"indent": 2}, lit
    yield {"enum": [1, 1.5, 1e16, 1e-5, 100000000000000000000, 0.1, -0.0, 0]}, {}, lit
    yield {"enum": [1, 2, 3, "x"], "minimum": 2}, {}, lit
    yield {"enum": ["ab", "abc", "x"], "pattern": "b"}, {}, lit
    yield {"enum": [1.0, 1, 2.0], "type": "integer"}, frac, lit
    yield {"$schema": DRAFT4, "enum": [1.0, 2, 3.5], "type": "integer"}, frac, lit
    yield {"enum": [2, 3, 4, 2.5], "multipleOf": 2}, {}, lit
    yield {"enum": [[1, 2], [1, 2, 3]], "maxItems": 2}, {}, lit


def verdicts(schema, options, pool):
    try:
        text, _ = translate(schema, **options)
        compiled = corral.compile(corral.Grammar.ebnf(text), VOCAB)
    except (corral.SchemaError, corral.LimitExceededError, corral.EmptyLanguageError) as e:
        return {"error": type(e).__name__}
    accept = [t for t in pool if compiled.matches(text_of(t).encode())]
    reject = [t for t in pool if not compiled.matches(text_of(t).encode())]
    return {"accept": accept, "reject": reject}


def main() -> None:
    out = []
    for schema, options, pool in cases():
        options = {"integer_fraction": False, **options}
        out.append({"schema": schema, "options": options, **verdicts(schema, options, pool)})
    OUT.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in out) + "\n")
    print(f"{OUT}: {len(out)} cases")


if __name__ == "__main__":
    main()
