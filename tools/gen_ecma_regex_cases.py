#!/usr/bin/env python
"""Writes tests/corpus/ecma_regex.jsonl: patterns, and whether a
JavaScript engine compiles them with the `u` flag (`new RegExp(p, "u")`), one JSON array
`[pattern, valid]` per line. The oracle for the `format: "regex"` check.

    python tools/gen_ecma_regex_cases.py        # needs `node` on PATH

The patterns: a list written by hand (each rule of the syntax, both sides), patterns
generated from a small grammar of the syntax (mostly valid), the same with one fragment
changed (often not), and soups of fragments (mostly not). Seeded: the file is the same
on every run with the same node.
"""

from __future__ import annotations

import json
import os
import random
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests/corpus/ecma_regex.jsonl")

HAND = r"""
a
^[a-z0-9_-]+$
\d{2,4}\.\w*?
(?<year>\d{4})-\k<year>
\k<later>(?<later>x)
(a)\1
\1(a)
\2(a)
[\u{1F600}-\u{1F64F}]
[\uD83D\uDE00-\uD83D\uDE4F]
[\uDE00-\uD83D]
\p{Script=Greek}\P{L}
(?<=a)b(?<!c)(?=d)(?!e)
[^]
[]
[a-]
[-a]
[\d-]
[\d-a]
[a-\d]
[a--c]
[--a]
[a-z-0]
[a-b-c]
a{3}b{3,}c{3,10}
a{10,10}
a{10,9}
a{00010,9}
a{9,0010}
a{99999999999999999999,1}
a{1,99999999999999999999}
\/\.\*
[\b\-]
\-
\0
\00
\01
[\0]
[\01]
\cJ
\c1
[\c_]
\x7f
\x7
\u004
\u{}
\u{10FFFF}
\u{110000}
\u{0000000041}
(?:)
(|)
(?<a>)(?<a>)
(?<a>)|(?<a>)
(?<$_a1>)
(?<1a>)
(?<\u0061>)\k<a>
(?<\u{61}>)
(?<\uD835\uDC9C>x)
(?<\uD835>x)
(?=a)*
(?<=a)+
^*
$?
\b+
a**
a*?
a*??
a+?
a??
{
}
]
a{
a{1
a{,1}
\k<x>
\k
\a
\p{L}
\p{l}
\p{Lu}
\p{Uppercase_Letter}
\p{General_Category=Lu}
\p{gc=Lu}
\p{Script=Latin}
\p{sc=Latn}
\p{scx=Latn}
\p{Script_Extensions=Greek}
\p{ASCII}
\p{Any}
\p{RGI_Emoji}
[\p{L}-a]
[a-\p{L}]
\P{}
\p
\p{
.
\.
\/
\
[\]
[\]]
[[]
[]]
(?
(?i:a)
(?<
(?<=
(?<name
\k<name
)
(()
"""

FRAGMENTS = ["a", "b", "z", "A", "0", "1", "9", "(", ")", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>", "(?<m>",
             "\\k<n>", "\\k<m>", "[", "]", "[^", "-", "^", "$", "|", "*", "+", "?", "{", "}", "{2}", "{1,3}",
             "{3,1}", "{2,}", ",", "\\d", "\\w", "\\s", "\\b", "\\B", "\\1", "\\2", "\\0", "\\01", "\\x4", "\\x41",
             "\\xff", "\\u004", "\\u0041", "\\u{1F600}", "\\u{110000}", "\\uD83D", "\\uDE00", "\\cA", "\\c1",
             "\\p{L}", "\\p{Lu}", "\\p{Script=Greek}", "\\p{Scx=Latn}", "\\P{Letter}", "\\p{l}", "\\-", "\\/",
             "\\.", "\\", ".", "😀", "é", "\\n", "\\t", "\\a", "\\q", "/", "\"", "\\\\", "\\]", "\\}", "<", ">"]


def gen_valid(r: random.Random, depth: int = 0) -> str:
    """A pattern from a small grammar of the syntax (valid but for names and numbers)."""
    alts = []
    for _ in range(r.choice([1, 1, 1, 2, 3])):
        terms = []
        for _ in range(r.randint(0, 4)):
            k = r.random()
            if k < 0.35:
                atom = r.choice(["a", "b", ".", "\\d", "\\w", "\\.", "\\/", "-", "é", "😀", "\\u0041", "\\x41",
                                 "\\cJ", "\\0", "\\p{L}", "\\n", ","])
            elif k < 0.55:
                lo, hi = sorted(r.sample("abcxyz019", 2))
                atom = "[" + r.choice(["", "^"]) + r.choice([f"{lo}-{hi}", "a", "\\d", "\\-", "-", "\\b",
                                                             "\\u{1F600}-\\u{1F64F}", "a-z0-9_"]) + "]"
            elif k < 0.75 and depth < 3:
                atom = r.choice(["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", f"(?<g{r.randint(0, 3)}>"])
                atom += gen_valid(r, depth + 1) + ")"
            elif k < 0.85:
                atom = r.choice(["^", "$", "\\b", "\\B"])
            else:
                atom = r.choice(["\\1", "\\k<g0>", "\\k<g1>", "a"])
            if r.random() < 0.3 and atom not in ("^", "$", "\\b", "\\B") and not atom.startswith(("(?=", "(?!", "(?<=", "(?<!")):
                atom += r.choice(["*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "{0,0}"])
            terms.append(atom)
        alts.append("".join(terms))
    return "|".join(alts)


def main() -> None:
    r = random.Random(20261128)
    cases = [h for h in HAND.strip("\n").split("\n")]
    for _ in range(2500):
        cases.append(gen_valid(r))
    for _ in range(1500):
        p = gen_valid(r)
        if p:
            i = r.randrange(len(p))
            p = p[:i] + r.choice(FRAGMENTS) + p[i + 1:]
        cases.append(p)
    for _ in range(1500):
        cases.append("".join(r.choice(FRAGMENTS) for _ in range(r.randint(1, 7))))
    cases = list(dict.fromkeys(cases))
    js = r"""
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(p => { try { new RegExp(p, 'u'); return [p, true] } catch (e) { return [p, false] } });
console.log(JSON.stringify(out));
"""
    res = json.loads(subprocess.run(["node", "-e", js], input=json.dumps(cases), capture_output=True, text=True,
                                    check=True).stdout)
    with open(OUT, "w") as f:
        for p, ok in res:
            f.write(json.dumps([p, ok], ensure_ascii=False) + "\n")
    print(f"{len(res)} cases ({sum(ok for _, ok in res)} valid) -> {OUT}")


if __name__ == "__main__":
    main()
