#!/usr/bin/env python
"""Writes tests/corpus/ecma_search.jsonl: ECMAScript patterns with assertions
(look-ahead, look-behind of any width, `\\b`, `\\B`, anchors anywhere) and, for each,
strings with whether a JavaScript engine finds a match in them
(`new RegExp(p, "u").test(s)`, what JSON Schema's `pattern` means). The first line is
the JSON list of the strings; then one JSON array `[pattern, verdicts]` per line, the
verdicts a text of `1` (found) and `0` per string. The oracle for look-around in
patterns.

    python tools/gen_ecma_search_cases.py        # needs `node` on PATH

The patterns: the real ones of the JSON Schema Store catalogue that use assertions, a
list written by hand (each construct, nestings), and patterns drawn from a small grammar
(no look-ahead inside a look-behind: that construct is refused). The strings: every
string of up to three characters over a small alphabet, then random longer ones. Seeded:
the file is the same on every run with the same node.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests/corpus/ecma_search.jsonl")

HAND = r"""
^(?!.*\bnative\b)[a-zA-Z][a-zA-Z0-9_]*(\.[a-zA-Z][a-zA-Z0-9_]*)+$
^.*\bnative\b
\b\d{3}\b
^https?:\/\/(www\.)?[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-zA-Z0-9()]{1,6}\b([-a-zA-Z0-9()@:%_\+.~#?&//=]*)$
^(?!^AWS::Serverless).*
^(?=[A-Z])[a-zA-Z0-9.,;()\s]*[^.,;!?: \W]$
^[a-z-]*(?<!-)$
^((?!ab).)*$
^(?:(?!--)[a-z-])+$
a$|b
(^x)
(^a|^b)c
x(?=y)
(?<=a)b
(?<!a)b
\Bx\B
\bx\b
^(?:a(?=b)|c)+$
(?<=^|,)z
(?<=,|^)z
^(?=.*\d)(?=.*[a-z]).{4,}$
(?<=(?<!x)a)b
(?<=a+)b
(?<=ab|^b*)c
(?<!^)a
a(?!$)
(?=a)(?!ab)
(?!)
(?=)x
(?<=)x
(?<!)x
^\b
\B$
(?=a*b)a
a(?=(?=b)b)
a(?=b(?!c))
((?=a).)+$
(a(?!b)|b(?<!ab))+
x(?=.*\n)
^[^\n]*$
""".strip().splitlines()

# Strings the real patterns above care about.
HAND_STRINGS = [
    "native", "com.native.app", "com.nativex.app", "com.example.app", "x native y", "nativex", "123", "a 123 b", "1234",
    "a123", "https://www.example.com/a?b=c", "http://e.co", "https://example.comx", "AWS::Serverless::Function",
    "AWS::S3::Bucket", "Abc 1;", "Abc.", "abc", "ab-", "a-b", "a--b", "-a", "xab", "acb", "a,z", "z", "pass1word",
    "abc1", "Ab1", "yx", "xy", "axb", "ab", "ba", "x\ny", "x\n",
]

ALPHABET = ["a", "b", "c", "x", "y", "z", "1", "_", "-", ",", " ", "\n", "é", "A"]

# Atoms, assertions and groups for drawn patterns.
ATOMS = ["a", "b", "c", "x", "[ab]", "[^a]", ".", r"\w", r"\W", r"\d", r"\s", "é", ","]


def draw(rng: random.Random, depth: int, in_behind: bool) -> str:
    """A random pattern (no look-ahead, `$` or word boundary inside a look-behind)."""
    if depth == 0:
        return rng.choice(ATOMS)
    k = rng.randrange(12)
    if k < 3:
        return draw(rng, depth - 1, in_behind) + draw(rng, depth - 1, in_behind)
    if k == 3:
        return f"(?:{draw(rng, depth - 1, in_behind)}|{draw(rng, depth - 1, in_behind)})"
    if k == 4:
        return f"(?:{draw(rng, depth - 1, in_behind)}){rng.choice(['*', '+', '?', '{1,2}'])}"
    if k == 5 and not in_behind:
        return f"(?{rng.choice('=!')}{draw(rng, depth - 1, False)})"
    if k == 6:
        return f"(?<{rng.choice('=!')}{draw(rng, depth - 1, True)})"
    if k == 7:
        return "^"
    if k == 8 and not in_behind:
        return rng.choice(["$", r"\b", r"\B"])
    return rng.choice(ATOMS)


def strings(rng: random.Random) -> list[str]:
    """Every string of up to three characters of a small alphabet, and longer random ones."""
    small = ["a", "b", "x", "1", " ", "\n"]
    out = ["".join(p) for n in range(4) for p in itertools.product(small, repeat=n)]
    out += HAND_STRINGS
    out += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(4, 9))) for _ in range(60)]
    return out


def oracle(patterns: list[str], samples: list[str]) -> list[list[bool] | None]:
    """node's verdicts: per pattern, per string whether `test` finds a match (None: the
    pattern does not compile)."""
    js = (
        "const [ps, ss] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(ps.map(p => { let r; try { r = new RegExp(p, 'u') } catch (e) { return null }"
        " return ss.map(s => r.test(s)) })))"
    )
    proc = subprocess.run(["node", "-e", js], input=json.dumps([patterns, samples]), capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main() -> None:
    rng = random.Random(20261129)
    drawn = [draw(rng, rng.randint(2, 4), False) for _ in range(400)]
    patterns = list(dict.fromkeys(HAND + [p for p in drawn if any(t in p for t in ("(?", "^", "$", r"\b", r"\B"))]))
    samples = strings(rng)
    verdicts = oracle(patterns, samples)
    kept = 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(json.dumps(samples, ensure_ascii=False) + "\n")
        for p, found in zip(patterns, verdicts, strict=True):
            if found is None:
                continue
            f.write(json.dumps([p, "".join("1" if v else "0" for v in found)], ensure_ascii=False) + "\n")
            kept += 1
    print(f"wrote {kept} patterns x {len(samples)} strings to {OUT}")


if __name__ == "__main__":
    main()
