"""The JSON Schema translator moved from Python to the Rust core: while both exist, their
languages are compared on the whole test corpus (the official suite's schemas on three
drafts, the benchmark schemas, and option variants). For every schema both refuse it
(with the same kind of error) or both compile it; then every instance of the suite, and
strings sampled from each grammar, must be accepted or rejected alike. Removed with the
Python translator.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import corral
from _util import accepts_tokens
from corral._schema.native import compile_schema, schema_text
from json_schema_suite import _DRAFT_NUMBER, _SCHEMA_URI, remote_resolver, serialize, suite_files

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "bench" / "json_schemas"
SAMPLES = 6


def options(*, strict=True, whitespace="compact", max_whitespace=16, property_order="schema", spec_exact=False, integer_fraction=None, indent=None, draft=2020):
    """The core's option tuple, as ``Grammar.json_schema`` makes it."""
    fraction = spec_exact if integer_fraction is None else integer_fraction
    ind = None if indent is None else (" " * indent if isinstance(indent, int) else indent)
    return (strict, whitespace, max_whitespace, property_order, spec_exact, fraction, ind, draft)


def python_grammar(schema, opts, resolver):
    """The grammar of the Python translator's EBNF, compiled as the package compiled it."""
    from corral import _core
    from corral._schema import translate
    from corral.grammar import _PERL_CLASS, _python_perl_classes

    strict, ws, max_ws, order, spec_exact, fraction, indent, draft = opts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text, translator = translate(
            schema, strict=strict, whitespace=ws, max_whitespace=max_ws, property_order=order, spec_exact=spec_exact,
            integer_fraction=fraction, indent=indent, resolver=resolver, draft=draft,
        )
    classes = _python_perl_classes() if _PERL_CLASS.search(text) else None
    inner = _core.Grammar.cfg(text, "ebnf", "start", None, classes, 0, True, not translator.finite_key_endings)
    return corral.Grammar(inner, "json_schema", text, "start")


def native_grammar(schema, opts, resolver):
    inner = compile_schema(schema_text(schema), resolver=resolver, options=opts, limits=None)
    return corral.Grammar(inner, "json_schema", json.dumps([schema, opts], sort_keys=True), "start")


def outcome(build, schema, opts, resolver, vocab):
    """(compiled grammar or None, error class name or None)."""
    try:
        g = build(schema, opts, resolver)
        return (g, corral.compile(g, vocab)), None
    except (corral.SchemaError, corral.LimitExceededError, corral.EmptyLanguageError) as e:
        return None, type(e).__name__


def accepts(compiled, vocab, text: str) -> bool:
    return accepts_tokens(compiled, vocab, list(text.encode("utf-8")))[0]


def compare(schema, opts, resolver, vocab, instances=()):
    """The differences between the two translators on one schema (empty: none).
    ``instances``: (JSON text, valid or None when unknown)."""
    old, old_err = outcome(python_grammar, schema, opts, resolver, vocab)
    new, new_err = outcome(native_grammar, schema, opts, resolver, vocab)
    if old_err is not None and new_err is None:
        return widened(schema, new, vocab, instances)
    if (old_err is None) != (new_err is None):
        # (Both refusing, for different first reasons, is the same outcome: the wider
        # oneOf proof may get further into a schema before another refusal.)
        return [f"outcome: python {old_err or 'compiles'}, rust {new_err or 'compiles'}"]
    if old is None:
        return []
    diffs = []
    texts = [t for t, _ in instances] + samples(old[0]) + samples(new[0])
    for text in texts:
        a, b = accepts(old[1], vocab, text), accepts(new[1], vocab, text)
        if a != b:
            diffs.append(f"{text[:80]!r}: python {'accepts' if a else 'rejects'}, rust {'accepts' if b else 'rejects'}")
    return diffs


def samples(grammar) -> list[str]:
    out = []
    for seed in range(SAMPLES):
        s = grammar._inner.sample(seed, 96)
        if s is not None:
            try:
                out.append(s.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


def widened(schema, new, vocab, instances):
    """A schema only the Rust translator compiles (its oneOf proof is wider): no invalid
    instance accepted, and every sampled value valid by ``jsonschema``."""
    import jsonschema
    import referencing.exceptions

    diffs = []
    for text, valid in instances:
        if valid is False and accepts(new[1], vocab, text):
            diffs.append(f"widened: accepts the invalid {text[:80]!r}")
    validator = jsonschema.validators.validator_for(schema)(schema)
    for text in samples(new[0]):
        try:
            errors = list(validator.iter_errors(json.loads(text)))
        except referencing.exceptions.Unresolvable:
            break  # a reference to another document: the oracle does not fetch it
        if errors:
            diffs.append(f"widened: sampled {text[:80]!r} is invalid: {errors[0].message[:80]}")
    return diffs


def ordered(schema, values, **kw):
    """`values` serialized with object keys in the order the grammar writes them."""
    from corral._schema import translate

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, translator = translate(schema, **kw)
    except corral.CorralError:
        translator = None
    out = []
    for v, valid in values:
        try:
            out.append((serialize(translator.order(v, [translator.root]) if translator else v), valid))
        except ValueError:
            pass
    return out


def suite_cases():
    for draft, file, path in suite_files():
        for case in json.loads(path.read_text()):
            yield draft, file, case


@pytest.mark.parametrize("draft", ["draft4", "draft7", "draft2020-12"])
def test_suite_schemas_have_the_same_language(draft, byte_vocab):
    failures = []
    for d, file, case in suite_cases():
        if d != draft:
            continue
        schema = case["schema"]
        if isinstance(schema, dict) and "$schema" not in schema:
            schema = dict(schema, **{"$schema": _SCHEMA_URI[draft]})
        opts = options(spec_exact=True, draft=_DRAFT_NUMBER[draft])
        instances = ordered(schema, [(t["data"], t["valid"]) for t in case["tests"]], resolver=remote_resolver, spec_exact=True)
        diffs = compare(schema, opts, remote_resolver, byte_vocab, instances)
        failures += [f"{file} / {case['description']}: {d}" for d in diffs]
    assert not failures, f"{len(failures)} differences:\n" + "\n".join(failures[:40])


def bench_schemas():
    yield from sorted(SCHEMAS.glob("*.schema.json")) + sorted((SCHEMAS / "large").glob("*.schema.json"))


@pytest.mark.parametrize("variant", ["default", "flexible", "any_order", "indent", "spec_exact"])
def test_benchmark_schemas_have_the_same_language(variant, byte_vocab):
    opts = {
        "default": options(),
        "flexible": options(whitespace="flexible", max_whitespace=2),
        "any_order": options(property_order="any"),
        "indent": options(indent=2),
        "spec_exact": options(spec_exact=True),
    }[variant]
    failures = []
    for path in bench_schemas():
        schema = json.loads(path.read_text())
        values = []
        for kind in ("instances", "invalid"):
            p = path.with_name(path.name.replace(".schema.json", f".{kind}.json"))
            if variant == "default" and p.exists():
                values += [(v, kind == "instances") for v in json.loads(p.read_text())]
        instances = ordered(schema, values)
        failures += [f"{path.name}: {d}" for d in compare(schema, opts, None, byte_vocab, instances)]
    assert not failures, f"{len(failures)} differences:\n" + "\n".join(failures[:40])
