"""``strict=False`` only widens: where a schema is refused for a keyword corral cannot
enforce, the grammar built without it accepts every instance the schema accepts.

Every case of the JSON Schema Test Suite that the default (strict) mode refuses with an
``UnsupportedSchemaError`` is compiled again with ``strict=False``; each of its valid
instances, laid out as the grammar writes it, must be accepted whole. A dropped keyword
inside ``not``, an ``if`` or a ``oneOf`` branch must make the grammar larger there, never
smaller, and the grammar is never empty while the schema has a valid instance.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import corral
import json_schema_suite as suite
from corral._schema.native import order


def refused_cases():
    for draft, file, path in suite.suite_files():
        for case in json.loads(path.read_text()):
            schema = case["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = dict(schema, **{"$schema": suite._SCHEMA_URI[draft]})
            try:
                corral.Grammar.json_schema(schema, resolver=suite.remote_resolver, spec_exact=True)
            except corral.UnsupportedSchemaError:
                yield draft, file, case, schema
            except corral.CorralError:
                continue


def test_strict_false_accepts_every_valid_instance_of_a_refused_schema(byte_vocab):
    if not suite.SUITE.is_dir():
        pytest.fail(f"the JSON Schema Test Suite is missing at {suite.SUITE}")
    checked, wrong = 0, []
    for draft, file, case, schema in refused_cases():
        valid = [t for t in case["tests"] if t["valid"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                grammar = corral.Grammar.json_schema(schema, resolver=suite.remote_resolver, spec_exact=True, strict=False)
                compiled = corral.compile(grammar, byte_vocab)
            except corral.CorralError as e:
                if valid:
                    wrong.append(f"{draft}/{file}: {case['description']}: {type(e).__name__}: {e}")
                continue
        options = (False, "compact", 16, "schema", True, True, None, suite._DRAFT_NUMBER[draft])
        for test in valid:
            try:
                text = suite.serialize(order(schema, test["data"], resolver=suite.remote_resolver, options=options))
            except (corral.InvalidSchemaError, ValueError):
                continue
            checked += 1
            if not compiled.matches(text.encode()):
                plain = suite.plain_number(json.loads(text))
                if plain is not None and compiled.matches(plain.encode()):
                    continue  # the same value as corral writes numbers with a bound
                if suite.exception_reason(draft, file, case, test, False):
                    continue  # a documented difference of the default layout
                if file == "vocabulary.json":
                    # A custom metaschema that turns validation off: corral reads no
                    # metaschema, and strict=False reads the schema as the draft in force
                    # (docs/json_schema.md).
                    continue
                wrong.append(f"{draft}/{file}: {case['description']}: {test['description']}: {text[:80]}")
    assert wrong == [], f"{len(wrong)} valid instances rejected with strict=False:\n" + "\n".join(wrong[:20])
    # The suite has refused schemas with valid instances: the test looked at some.
    assert checked > 50, checked


BENCH = Path(__file__).resolve().parents[1] / "bench" / "json_schemas"


def _refused(schema, resolver=None) -> bool:
    try:
        corral.Grammar.json_schema(schema, resolver=resolver)
    except corral.UnsupportedSchemaError:
        return True
    return False


def test_strict_false_accepts_the_valid_instances_of_the_large_schemas(byte_vocab):
    # Every schema of the large set, refused in strict mode or not (none is, when last
    # counted): strict=False may only widen. In the specification's language
    # (spec_exact): the default layout is narrower by design (objects closed to the keys
    # they name, see docs/json_schema.md).
    checked, schemas = 0, 0
    for path in sorted((BENCH / "large").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                compiled = corral.compile(corral.Grammar.json_schema(schema, strict=False, spec_exact=True), byte_vocab)
            except (corral.LimitExceededError, corral.InvalidSchemaError):
                continue  # a refusal for size (Limits), or an invalid schema: not an answer
        schemas += 1
        instances = json.loads(path.with_name(path.name.replace(".schema.json", ".instances.json")).read_text(encoding="utf-8"))
        for instance in instances:
            text = json.dumps(order(schema, instance, options=(False, "compact", 16, "schema", True, True, None, 2020)), separators=(",", ":"), ensure_ascii=False)
            assert compiled.matches(text.encode()), f"{path.name}: {text[:100]}"
            checked += 1
    assert schemas >= 35 and checked >= 100, (schemas, checked)


def test_strict_false_never_leaves_a_refused_store_schema_empty():
    """No schema of the JSON Schema Store set that strict mode refuses for a keyword ends,
    with strict=False, in a grammar that allows nothing (they all have valid documents),
    or in any error but a limit (`Limits`, a refusal for size)."""
    refs = {p.stem: p for p in (BENCH / "store" / "refs").glob("*.json")}

    def resolver(uri: str):
        name = uri.rstrip("#").rsplit("/", 1)[-1].removesuffix(".json")
        path = refs.get(name) or BENCH / "store" / f"{name}.schema.json"
        if "schemastore.org" not in uri or not path.exists():
            raise LookupError(f"no local copy of {uri}")
        return json.loads(path.read_text(encoding="utf-8"))

    tried, failed = 0, []
    for path in sorted((BENCH / "store").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        try:
            if not _refused(schema, resolver):
                continue
        except (corral.CorralError, LookupError):
            continue  # refused for another reason (a limit, a $ref outside the Store)
        tried += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                corral.Grammar.json_schema(schema, resolver=resolver, strict=False)
            except corral.LimitExceededError:
                continue
            except corral.CorralError as e:
                if isinstance(e, corral.UnsupportedSchemaError) and "Limits." in str(e):
                    continue  # a count past a limit (max_pattern_properties), named so
                failed.append(f"{path.name}: {type(e).__name__}: {str(e)[:120]}")
    assert failed == [], "\n".join(failed)
    assert tried >= 1, tried  # the refused schemas of the store set (2 when last counted)
