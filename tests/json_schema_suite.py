"""Runs the official JSON Schema Test Suite through corral (used by the test and the docs).

For every test case (a schema with instances marked valid or invalid) corral either refuses
the schema with a clear :class:`corral.SchemaError` (or a documented limit), or compiles it;
then each instance, serialized compactly (``json.dumps(..., separators=(",", ":"),
ensure_ascii=False)``, object keys in the order the grammar writes them), is forced token by
token through a real tokenizer's vocabulary: a valid instance must be accepted with EOS
allowed at the end, an invalid one must be rejected at some token or at EOS.

``python tests/json_schema_suite.py`` prints the coverage table and rewrites
``docs/json_schema_coverage.md`` and the regression baseline.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO.parent / "shared" / "data" / "json-schema-test-suite"
DRAFTS = ("draft4", "draft7", "draft2020-12")
BASELINE = REPO / "tests" / "corpus" / "json_schema_suite_baseline.json"
DOC = REPO / "docs" / "json_schema_coverage.md"
_DRAFT_NUMBER = {"draft4": 4, "draft7": 7, "draft2020-12": 2020}


def remote_resolver(uri: str):
    """The suite's remote documents, served from ../shared instead of localhost:1234."""
    prefix = "http://localhost:1234/"
    if uri.startswith(prefix):
        path = SUITE / "remotes" / uri[len(prefix) :]
        if path.is_file():
            return json.loads(path.read_text())
    return None


def suite_files():
    for draft in DRAFTS:
        root = SUITE / "tests" / draft
        for path in sorted(root.rglob("*.json")):
            yield draft, path.relative_to(root).as_posix(), path


def serialize(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def plain_number(value):
    """A number written with an exponent by ``serialize``, in plain digits (else None)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    text = serialize(value)
    if "e" not in text.lower():
        return None
    from decimal import Decimal

    return format(Decimal(text), "f")


# Differences that come from what the test checks rather than from the grammar: each is
# (predicate on draft, file, case, test) and the reason. A case is "exact" when it has none.
def exception_reason(draft: str, file: str, case: dict, test: dict, accepted: bool):
    data = test["data"]
    if file == "format.json" and test["valid"] and not accepted:
        return "format is enforced: corral generates only well-formed values, where the suite treats format as an annotation"
    if file == "optional/content.json" and accepted and not test["valid"]:
        return "contentMediaType/contentEncoding are annotations (as draft 2019-09 and later define them); corral does not decode string contents"
    if file.startswith("optional/format/") and isinstance(data, str):
        fmt = file.split("/")[-1][: -len(".json")]
        if fmt in ("time", "date-time") and ":60" in data and test["valid"] and not accepted:
            return "leap seconds are generated only as 23:59:60 in UTC spelling (docs/json_schema.md)"
        if fmt == "hostname" and accepted and not test["valid"]:
            return "hostname: A-labels are not Punycode-decoded and the 253-character total is not enforced"
    return None


def run(vocab, tokenizer, *, limit_files=None):
    """Runs every case. Returns a list of result rows (dicts)."""
    import corral

    rows = []
    for draft, file, path in suite_files():
        if limit_files and file not in limit_files:
            continue
        cases = json.loads(path.read_text())
        for case in cases:
            row = {"draft": draft, "file": file, "case": case["description"], "status": None, "detail": "", "wrong": [], "exceptions": []}
            rows.append(row)
            schema = case["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = dict(schema, **{"$schema": _SCHEMA_URI[draft]})
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    grammar = corral.Grammar.json_schema(schema, resolver=remote_resolver, spec_exact=True)
                compiled = corral.compile(grammar, vocab)
            except (corral.SchemaError, corral.LimitExceededError, corral.EmptyLanguageError) as e:
                row["status"] = "refused"
                row["detail"] = f"{type(e).__name__}: {e}"
                continue
            except corral.CorralError as e:
                # Anything else (e.g. a generated grammar the engine rejects) is a bug.
                row["status"] = "refused"
                row["detail"] = f"BUG {type(e).__name__}: {e}"
                row["wrong"].append(row["detail"])
                continue
            from corral._schema.native import order

            row["status"] = "compiled"
            options = (True, "compact", 16, "schema", True, True, None, _DRAFT_NUMBER[draft])
            for test in case["tests"]:
                try:
                    ordered = order(schema, test["data"], resolver=remote_resolver, options=options)
                except corral.InvalidSchemaError:
                    continue  # a value that is not JSON (NaN): not serializable either
                try:
                    text = serialize(ordered)
                except ValueError:
                    continue
                accepted = accepts(compiled, tokenizer, text)
                if accepted != test["valid"]:
                    reason = exception_reason(draft, file, case, test, accepted)
                    plain = plain_number(ordered)
                    if reason is None and test["valid"] and plain is not None and accepts(compiled, tokenizer, plain):
                        # The same value in the spelling corral writes (no exponent).
                        reason = f"written as {plain[:12]}...: numbers with a bound or a multipleOf are written without an exponent (docs/json_schema.md)"
                    entry = f"{test['description']}: {text[:80]} ({'accepted' if accepted else 'rejected'})"
                    if reason:
                        row["exceptions"].append(f"{entry} — {reason}")
                    else:
                        row["wrong"].append(entry)
    return rows


_SCHEMA_URI = {
    "draft4": "http://json-schema.org/draft-04/schema#",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}


def accepts(compiled, tokenizer, text: str) -> bool:
    """Forces ``text``'s tokens through a matcher: all allowed and EOS allowed at the end."""
    matcher = compiled.matcher()
    ids = tokenizer.encode(text)
    for tid in ids:
        if not matcher.is_allowed(tid):
            return False
        matcher.advance(tid)
    return matcher.is_accepting()


def summarize(rows):
    """Per (draft, file): cases compiled exact / refused / wrong; and totals per draft."""
    table = defaultdict(lambda: {"cases": 0, "exact": 0, "documented": 0, "refused": 0, "wrong": 0})
    for r in rows:
        for key in ((r["draft"], r["file"]), (r["draft"], "TOTAL")):
            t = table[key]
            t["cases"] += 1
            if r["status"] == "refused":
                t["refused"] += 1
            elif r["wrong"]:
                t["wrong"] += 1
            elif r["exceptions"]:
                t["documented"] += 1
            else:
                t["exact"] += 1
    return table


def markdown(rows) -> str:
    table = summarize(rows)
    out = [
        "# JSON Schema Test Suite coverage",
        "",
        "Generated by `python tests/json_schema_suite.py` (DeepSeek vocabulary); checked by",
        "`tests/test_json_schema_suite.py`. A *case* is one schema of the suite with its instances.",
        "",
        "* **exact**: corral compiles the schema and every instance is decided as the suite says",
        "  (valid ones accepted token by token with EOS allowed at the end, invalid ones rejected).",
        "* **documented**: compiled; some instance differs for a documented reason (listed below).",
        "* **refused**: corral raises a clear `SchemaError` naming the keyword and its JSON pointer.",
        "* **wrong**: compiled but an instance is decided wrongly. Must be 0.",
        "",
        "## Totals",
        "",
        "| draft | cases | exact | documented | refused | wrong |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for d in DRAFTS:
        t = table[(d, "TOTAL")]
        out.append(f"| {d} | {t['cases']} | {t['exact']} | {t['documented']} | {t['refused']} | {t['wrong']} |")
    for d in DRAFTS:
        out += ["", f"## {d}", "", "| file | cases | exact | documented | refused | wrong |", "|---|---:|---:|---:|---:|---:|"]
        for (dd, f), t in sorted(table.items()):
            if dd == d and f != "TOTAL":
                out.append(f"| {f} | {t['cases']} | {t['exact']} | {t['documented']} | {t['refused']} | {t['wrong']} |")
    out += ["", "## Refused cases", "", "| draft | file | case | error |", "|---|---|---|---|"]
    for r in rows:
        if r["status"] == "refused":
            detail = r["detail"].replace("|", "\\|").replace("\n", " ")[:160]
            out.append(f"| {r['draft']} | {r['file']} | {r['case']} | {detail} |")
    out += ["", "## Documented differences", "", "| draft | file | case | instance |", "|---|---|---|---|"]
    for r in rows:
        for e in r["exceptions"]:
            cell = e.replace("|", "\\|")[:200]
            out.append(f"| {r['draft']} | {r['file']} | {r['case']} | {cell} |")
    wrong = [r for r in rows if r["wrong"]]
    if wrong:
        out += ["", "## Wrong (bugs)", ""]
        for r in wrong:
            for w in r["wrong"]:
                out.append(f"* {r['draft']} {r['file']} / {r['case']}: {w}")
    return "\n".join(out) + "\n"


def baseline(rows) -> dict:
    """The cases that compile and are decided right (exact or documented): the regression guard."""
    return {"passing": sorted(f"{r['draft']}|{r['file']}|{r['case']}" for r in rows if r["status"] == "compiled" and not r["wrong"])}


def main():
    sys.path.insert(0, str(REPO / "tests"))
    from conftest import real_tokenizer  # noqa: E402

    tok = real_tokenizer("deepseek")
    rows = run(tok.vocab, tok)
    text = markdown(rows)
    DOC.write_text(text)
    BASELINE.write_text(json.dumps(baseline(rows), indent=1) + "\n")
    print(text[: text.index("## draft4")])
    for r in rows:
        for w in r["wrong"]:
            print("WRONG", r["draft"], r["file"], r["case"], w)


if __name__ == "__main__":
    main()
