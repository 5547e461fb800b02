#!/usr/bin/env python
"""Writes tests/corpus/ecma_properties.jsonl: ECMAScript patterns with Unicode property
escapes (`\\p{...}`, `\\P{...}`) and, for each, strings with whether a JavaScript engine
finds a match in them (`new RegExp(p, "u").test(s)`, what JSON Schema's `pattern`
means). The first line is the JSON list of the strings; then one JSON array
`[pattern, verdicts]` per line, the verdicts a text of `1` (found) and `0` per string.
The oracle for property escapes in patterns.

    python tools/gen_ecma_property_cases.py        # needs `node` on PATH

The strings are made of characters long assigned (so that the engine's Unicode version
and corral's tables agree on them): every single character of the pool, then random
strings of two and three. Seeded: the file is the same on every run with the same node.
"""

from __future__ import annotations

import json
import os
import random
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests/corpus/ecma_properties.jsonl")

PROPERTIES = [
    "L", "Letter", "Lu", "Uppercase_Letter", "Ll", "Lt", "Lm", "Lo", "LC", "Cased_Letter",
    "M", "Mn", "N", "Nd", "digit", "Nl", "No", "P", "punct", "Pd", "Ps", "S", "Sm", "Sc",
    "Z", "Zs", "Zl", "C", "Cc", "Cf", "Co", "Cn",
    "General_Category=Letter", "gc=Nd",
    "Script=Greek", "sc=Grek", "Script=Latin", "sc=Cyrl", "Script=Han", "sc=Hira", "Script=Arabic",
    "Script=Devanagari", "Script=Common", "sc=Zinh", "Script_Extensions=Latin", "scx=Deva", "scx=Hira",
    "ASCII", "Any", "Assigned", "Alphabetic", "Alpha", "White_Space", "Lowercase", "Uppercase",
    "Ideographic", "Emoji", "Emoji_Presentation", "Math", "Hex_Digit", "ASCII_Hex_Digit", "Dash",
    "Diacritic", "Extender", "ID_Start", "ID_Continue", "XID_Start", "Noncharacter_Code_Point",
]

POOL = list("aZé߀×÷Ωαβ Жжあアカナ日本ع٣४৪１Ａ\u00a0\u2028\u0301\u200d∑≈€$_-(）9") + ["😀", "\U0001F1EF", "𝔸", "\ufdd0", "\ue000"]


def patterns() -> list[str]:
    out = []
    for p in PROPERTIES:
        out += [f"^\\p{{{p}}}+$", f"\\P{{{p}}}"]
    out += [r"^[\p{L}\d_]+$", r"^[^\p{L}\p{N}]*$", r"^\p{Lu}\p{Ll}+$", r"[\p{Script=Greek}\p{Script=Cyrillic}]",
            r"^(?:\p{sc=Han}|\p{sc=Hira})+$", r"^[\P{ASCII}]$", r"^[\p{Emoji}--]?x?$".replace("--", ""), r"\p{N}{2}"]
    return out


def strings() -> list[str]:
    rng = random.Random(11)
    out = [""] + POOL
    for n in (2, 3):
        out += ["".join(rng.choice(POOL) for _ in range(n)) for _ in range(60)]
    return list(dict.fromkeys(out))


JS = r"""
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(Boolean);
const strings = JSON.parse(lines[0]);
for (const line of lines.slice(1)) {
  const p = JSON.parse(line);
  const re = new RegExp(p, 'u');
  console.log(JSON.stringify([p, strings.map(s => re.test(s) ? '1' : '0').join('')]));
}
"""


def main() -> None:
    ss = strings()
    stdin = "\n".join([json.dumps(ss)] + [json.dumps(p) for p in patterns()]) + "\n"
    done = subprocess.run(["node", "-e", JS], input=stdin, capture_output=True, text=True, check=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(json.dumps(ss) + "\n")
        for line in done.stdout.splitlines():
            f.write(json.dumps(json.loads(line)) + "\n")
    print(f"wrote {OUT}: {len(patterns())} patterns, {len(ss)} strings")


if __name__ == "__main__":
    main()
