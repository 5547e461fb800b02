#!/usr/bin/env python
"""Writes crates/corral-core/src/grammar/regex_text/properties.rs: every body of an
ECMAScript `\\p{...}` escape (Unicode mode) that a JavaScript engine accepts.

    python tools/gen_ecma_properties.py        # needs `node` on PATH and regex-syntax's sources

ECMAScript names the properties and values a `\\p{...}` may use exactly, case and
underscores included: the binary properties of its table of binary Unicode properties,
`General_Category` / `gc`, `Script` / `sc`, `Script_Extensions` / `scx` with the value
aliases of Unicode's PropertyValueAliases.txt, and a General_Category value alone. The
candidates are those names (the binary table is written out below, from the
specification) and the value aliases of regex-syntax's Unicode tables in every spelling
(their canonical names, and each short alias in every letter case); `node` keeps the ones
`new RegExp("\\\\p{" + body + "}", "u")` accepts. The Unicode version is node's
(`process.versions.unicode`), written into the file's header.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates/corral-core/src/grammar/regex_text/properties.rs")

BINARY = """ASCII ASCII_Hex_Digit AHex Alphabetic Alpha Any Assigned Bidi_Control Bidi_C
Bidi_Mirrored Bidi_M Case_Ignorable CI Cased Changes_When_Casefolded CWCF
Changes_When_Casemapped CWCM Changes_When_Lowercased CWL Changes_When_NFKC_Casefolded CWKCF
Changes_When_Titlecased CWT Changes_When_Uppercased CWU Dash Default_Ignorable_Code_Point DI
Deprecated Dep Diacritic Dia Emoji Emoji_Component EComp Emoji_Modifier EMod
Emoji_Modifier_Base EBase Emoji_Presentation EPres Extended_Pictographic ExtPict Extender Ext
Grapheme_Base Gr_Base Grapheme_Extend Gr_Ext Hex_Digit Hex IDS_Binary_Operator IDSB
IDS_Trinary_Operator IDST ID_Continue IDC ID_Start IDS Ideographic Ideo Join_Control Join_C
Logical_Order_Exception LOE Lowercase Lower Math Noncharacter_Code_Point NChar Pattern_Syntax
Pat_Syn Pattern_White_Space Pat_WS Quotation_Mark QMark Radical Regional_Indicator RI
Sentence_Terminal STerm Soft_Dotted SD Terminal_Punctuation Term Unified_Ideograph UIdeo
Uppercase Upper Variation_Selector VS White_Space space XID_Continue XIDC XID_Start
XIDS""".split()

# Scripts newer than regex-syntax's tables (Unicode 16 and 17), long name and code.
NEWER_SCRIPTS = [("Garay", "Gara"), ("Gurung_Khema", "Gukh"), ("Kirat_Rai", "Krai"), ("Ol_Onal", "Onao"),
                 ("Sunuwar", "Sunu"), ("Todhri", "Todr"), ("Tulu_Tigalari", "Tutg"), ("Beria_Erfe", "Berf"),
                 ("Chisoi", "Chis"), ("Sidetic", "Sidt"), ("Tai_Yo", "Tayo"), ("Tolong_Siki", "Tols")]

FILTER_JS = r"""
const bodies = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const ok = bodies.filter(b => { try { new RegExp('\\p{' + b + '}', 'u'); return true } catch (e) { return false } });
console.log(JSON.stringify({unicode: process.versions.unicode, node: process.version, ok}));
"""


def spellings(pairs: list[tuple[str, str]]) -> set[str]:
    out = set()
    for alias, canonical in pairs:
        out.update((canonical, alias))
        if len(alias) <= 5 and alias.isalpha():
            out.update("".join(c) for c in itertools.product(*[(x.lower(), x.upper()) for x in alias]))
    return out


def main() -> None:
    tables = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/regex-syntax-0.8.*/src/unicode_tables/"))[-1]
    src = open(tables + "property_values.rs").read()
    values = {name: re.findall(r'\("([^"]+)", "([^"]+)"\)', body)
              for name, body in re.findall(r'\(\s*"([A-Za-z_]+)",\s*&\[(.*?)\],\s*\)', src, re.S)}
    gc = spellings(values["General_Category"])
    scripts = spellings(values["Script"]) | {n for pair in NEWER_SCRIPTS for n in pair}
    cands = set(BINARY) | gc
    cands |= {f"{p}={v}" for v in gc for p in ("General_Category", "gc")}
    cands |= {f"{p}={v}" for v in scripts for p in ("Script", "sc", "Script_Extensions", "scx")}
    cands = sorted(c for c in cands if re.fullmatch(r"[A-Za-z0-9_=]+", c))
    res = json.loads(subprocess.run(["node", "-e", FILTER_JS], input=json.dumps(cands), capture_output=True,
                                    text=True, check=True).stdout)
    ok = sorted(res["ok"])
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("//! The bodies of ECMAScript's `\\p{...}` escapes in Unicode mode, sorted: what\n")
        f.write(f"//! `node` {res['node']} (Unicode {res['unicode']}) accepts. Written by\n")
        f.write("//! `tools/gen_ecma_properties.py`; do not edit.\n\n")
        f.write("/// Every accepted body (`L`, `Script=Latin`, `sc=Latn`, ...), in byte order.\n")
        f.write("pub(super) const PROPERTY_BODIES: &[&str] = &[\n")
        for b in ok:
            f.write(f'    "{b}",\n')
        f.write("];\n")
    print(f"{len(ok)} bodies of {len(cands)} candidates -> {OUT}")


if __name__ == "__main__":
    main()
