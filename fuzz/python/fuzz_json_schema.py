"""Coverage-guided fuzzing of corral's JSON Schema front-end with atheris.

Each input is JSON text (a schema; the seed corpus is schemas from corral's tests and the
JSON Schema test suite). A structure-aware mutator parses it, changes the JSON tree (a
keyword added, removed or given an unusual value, a subschema copied elsewhere, nesting
deepened) and writes it back, so most inputs stay schemas; libFuzzer's byte mutations
cover the rest. The body:

* ``corral.Grammar.json_schema(text, ...)`` with options chosen from the input's hash;
  the only allowed exceptions are ``corral.CorralError`` subclasses other than
  ``InternalError`` (a Rust panic) and ``InvalidGrammarError`` (a grammar the
  translator built and the grammar checks refused): any other exception is a finding;
* the grammar is compiled against a byte vocabulary under small limits, and a matcher
  takes a few steps (allowed tokens must be accepted, the completion must match);
* every sentence the grammar samples must be JSON that ``jsonschema`` validates against
  the schema (when jsonschema can judge the schema itself).

Run (needs the native module: ``/work/devbuild.sh`` or ``maturin build``)::

    PYTHONPATH=$PWD/python python fuzz/python/fuzz_json_schema.py \
        fuzz/corpus/json_schema fuzz/python/seeds -max_total_time=300 -timeout=10 -rss_limit_mb=2048
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import sys
import traceback
import warnings
from decimal import Decimal
from fractions import Fraction

if __name__ == "__main__":
    import atheris

    with atheris.instrument_imports(include=["corral"]):
        import corral
        import corral._schema  # imported lazily by Grammar.json_schema: instrument it now
        import corral._schema.native
        import corral._schema.options
else:  # imported by the regression test: no fuzzing engine needed
    atheris = None
    import corral

from corral.errors import CorralError, InternalError, InvalidGrammarError, LimitExceededError

try:
    import jsonschema
    import referencing.exceptions
except ImportError:  # the oracle is optional: without it, only crashes are found
    jsonschema = None

LIMITS = corral.Limits(
    max_dfa_states=2_000,
    dfa_size_limit=4 << 20,
    nfa_size_limit=1 << 20,
    max_grammar_bytes=1 << 18,
    max_grammar_productions=20_000,
    max_earley_items=20_000,
    max_mask_cache_bytes=1 << 20,
    max_compile_ms=2_000,
    max_completion_bytes=1 << 16,
)

VOCAB = corral.Vocabulary.from_token_bytes(
    [bytes([b]) for b in range(256)] + [None, b'{"', b'":', b'",', b"true", b"null", b"00", b"\\u"],
    eos_token_ids=[256],
)

# Keywords and values the mutator plants, weighted towards the ones with arithmetic,
# regexes, references and counts, where translators tend to break.
KEYWORDS = {
    "type": ["string", "integer", "number", "boolean", "null", "array", "object", ["string", "null"], "bogus", 3],
    "minimum": [0, -1, 1e308, -1e308, 0.1, 10**30, -(10**30), 1e-320, "1"],
    "maximum": [0, 1, 2.5, 10**30, 1e-7, -0.0],
    "exclusiveMinimum": [0, 1.5, True, 10**20],
    "exclusiveMaximum": [0, 100, False, -(10**20)],
    "multipleOf": [1, 2, 0.01, 1e-8, 7, 0, -1, 1e308, 0.3, 10**25],
    "minLength": [0, 1, 5, 2**31, -1, 1.0, 1.5],
    "maxLength": [0, 1, 3, 100, 2**31],
    "pattern": [
        "^a+$", "[a-z]{2,4}", "(?i)x", "\\d", "\\p{L}", "(", "a{1000}", "^(?!x)", "\\bword\\b", "é*", "",
        "(?<=a)b", "[a-z-]*(?<!-)$", "x(?=y)", "a$|^b", "(?<=a(?=b))", "\\Ax\\Z", "((?!ab).)*",
    ],
    "format": ["date", "date-time", "time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname", "regex", "duration", "bogus"],
    "enum": [[1, "a", None], [], [1.0, 1], [{"a": [1]}], [True, 1], ["\u0000", "\ud7ff"]],
    "const": [0, "x", None, [1, 2], {"k": {}}, 1e400, -0.0],
    "items": [True, False, {"type": "integer"}, [{"type": "string"}], {}],
    "prefixItems": [[], [{"const": 1}, True], [False]],
    "additionalItems": [False, {"type": "null"}],
    "contains": [{"const": 1}, False, True],
    "minContains": [0, 2, 100],
    "maxContains": [0, 1, 10**6],
    "minItems": [0, 1, 3, 2**40],
    "maxItems": [0, 2, 50, 2**40],
    "uniqueItems": [True, False],
    "properties": [{}, {"a": {"type": "integer"}, "b": True}, {"": False, "\u00e9": {}}],
    "patternProperties": [{"^x": {"type": "string"}}, {"(": {}}, {".*": False}],
    "additionalProperties": [False, True, {"type": "boolean"}],
    "propertyNames": [{"pattern": "^[a-z]+$"}, {"maxLength": 2}, False],
    "required": [[], ["a"], ["a", "a"], ["zz", "b"]],
    "minProperties": [0, 1, 5],
    "maxProperties": [0, 1, 3],
    "dependentRequired": [{"a": ["b"]}],
    "dependentSchemas": [{"a": {"required": ["c"]}}],
    "allOf": [[{"type": "integer"}, {"minimum": 3}], [True], []],
    "anyOf": [[{"type": "string"}, {"type": "null"}], [False]],
    "oneOf": [[{"minimum": 0}, {"maximum": 10}], [{}, {}]],
    "not": [{"type": "string"}, True, {}, {"enum": [1]}],
    "if": [{"minimum": 5}, True],
    "then": [{"multipleOf": 2}, False],
    "else": [{"const": 0}],
    "$ref": ["#", "#/$defs/a", "#/definitions/a", "#/properties/a", "#/$defs/missing", "other.json", "#anchor", "#/$defs/a/items"],
    "$defs": [{"a": {"type": "integer"}}, {"a": {"$ref": "#/$defs/a"}}, {"a": {"items": {"$ref": "#"}}}],
    "definitions": [{"a": {"type": "string"}}],
    "$anchor": ["anchor"],
    "$id": ["http://example.com/s", "#x", "other.json"],
    "$schema": [
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-04/schema#",
        "https://example.com/custom",
    ],
    "unevaluatedProperties": [False, {"type": "string"}],
    "unevaluatedItems": [False],
    "contentEncoding": ["base64"],
    "default": [1],
}


def _nodes(value, out, depth=0):
    """Every dict and list inside ``value`` (with nesting depth), in document order."""
    if isinstance(value, (dict, list)):
        out.append((value, depth))
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            _nodes(child, out, depth + 1)
    return out


def mutate_schema(schema, rng: random.Random):
    """One structural change of a JSON tree (a copy)."""
    schema = copy.deepcopy(schema)
    if not isinstance(schema, (dict, list)):
        schema = {} if rng.random() < 0.8 else [schema]
    nodes = [n for n, _ in _nodes(schema, [])]
    dicts = [n for n in nodes if isinstance(n, dict)] or [{}]
    target = rng.choice(dicts)
    op = rng.randrange(7)
    if op <= 2:
        key = rng.choice(list(KEYWORDS))
        target[key] = copy.deepcopy(rng.choice(KEYWORDS[key]))
    elif op == 3 and target:
        del target[rng.choice(list(target))]
    elif op == 4:
        # Copy a subtree into another place: builds nesting and combinations.
        source = copy.deepcopy(rng.choice(nodes))
        key = rng.choice(["items", "not", "additionalProperties", "contains", "then"])
        target[key] = source if isinstance(source, dict) else {"anyOf": source} if source else {}
    elif op == 5:
        # Deep nesting, for recursion limits.
        inner = copy.deepcopy(target)
        for _ in range(rng.choice([2, 10, 50, 400])):
            inner = {rng.choice(["items", "not", "allOf"]): inner if rng.random() < 0.7 else [inner]}
        return inner
    else:
        for key, value in list(target.items()):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                target[key] = rng.choice([value * 10**rng.randrange(1, 30), -value, value + 0.5, 0, 2**63, 1e-300])
                break
    return schema


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    """Structure-aware when ``data`` is JSON, libFuzzer's byte mutations otherwise."""
    rng = random.Random(seed)
    try:
        schema = json.loads(data)
    except (ValueError, RecursionError):
        return atheris.Mutate(data, max_size)
    if rng.random() < 0.15:
        return atheris.Mutate(data, max_size)
    try:
        for _ in range(1 + rng.randrange(3)):
            schema = mutate_schema(schema, rng)
        out = json.dumps(schema, ensure_ascii=rng.random() < 0.5).encode()
    except (ValueError, RecursionError):  # too deep for the mutator itself
        return atheris.Mutate(data, max_size)
    return out if len(out) <= max_size else atheris.Mutate(data, max_size)


# Pass over inputs that hit an open finding (see _has_huge_count and OPEN_SIGNATURES);
# the regression test turns this off to replay the findings themselves. Off while
# regressions/OPEN lists no json_schema finding (every recorded one is fixed).
SKIP_OPEN = False


class Finding(AssertionError):
    """A check of the body failed."""


def options_for(data: bytes) -> dict:
    h = hashlib.sha1(data).digest()
    return {
        "strict": h[0] % 3 != 0,
        "whitespace": "flexible" if h[1] % 4 == 0 else "compact",
        "property_order": "any" if h[2] % 5 == 0 else "schema",
        "max_whitespace": h[3] % 4,
        "spec_exact": h[4] % 2 == 0,
    }


def oracle_validator(schema):
    """A jsonschema validator for ``schema`` (parsed with exact decimals), or None if
    jsonschema cannot judge it."""
    if jsonschema is None or not isinstance(schema, (dict, bool)):
        return None
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        # corral enforces `format`, so the oracle asserts it too; but jsonschema checks a
        # format only where its optional package is installed, and an unchecked format
        # (under `not`, most visibly) would judge wrongly: no oracle then.
        if _formats(schema) - set(cls.FORMAT_CHECKER.checkers):
            return None
        # jsonschema divides floats (0.7 / 0.0001 is not an integer there); the JSON text's
        # decimal numbers are exact, and so is corral: numbers are Decimals here.
        checks = {"multipleOf": _exact_multiple_of}
        types = cls.TYPE_CHECKER
        if cls is not jsonschema.Draft4Validator:  # from draft 6 on, 1.0 is an integer
            types = types.redefine("integer", _is_integer)
        cls = jsonschema.validators.extend(cls, checks, type_checker=types)
        return cls(schema, format_checker=cls.FORMAT_CHECKER)
    except Exception:  # an invalid schema, or one jsonschema cannot load: no oracle
        return None


def _formats(value) -> set:
    """Every string value of a `format` key in ``value``."""
    found: set = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if isinstance(v.get("format"), str):
                found.add(v["format"])
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found


def _is_integer(checker, instance) -> bool:
    if isinstance(instance, bool):
        return False
    if isinstance(instance, Decimal):
        return instance.is_finite() and instance == instance.to_integral_value()
    return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())


def _exact_multiple_of(validator, step, instance, schema):
    """``multipleOf`` on the decimal values the JSON text spells (exact fractions)."""
    if not validator.is_type(instance, "number") or not validator.is_type(step, "number"):
        return
    try:
        quotient = Fraction(str(instance)) / Fraction(str(step))
    except (ValueError, ZeroDivisionError, OverflowError, ArithmeticError):
        return
    if quotient.denominator != 1:
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {step!r}")


def check_sentence(validator, text: bytes, schema) -> None:
    try:
        value = json.loads(text, parse_float=Decimal)
    except ValueError as e:
        raise Finding(f"a sentence of the grammar is not JSON: {text!r} ({e}) for schema {schema!r}") from None
    if validator is None:
        return
    try:
        errors = list(validator.iter_errors(value))
    except (referencing.exceptions.Unresolvable, RecursionError, OverflowError, ValueError, TypeError, ArithmeticError):
        # The oracle cannot decide this value. (A subschema's own `$schema` makes jsonschema
        # switch to its stock validator there, whose multipleOf divides Decimals and can
        # fail: DivisionImpossible.)
        return
    if errors:
        raise Finding(f"sentence {text!r} does not validate: {errors[0].message} (schema {schema!r})")


def _has_huge_count(value) -> bool:
    """Does ``value`` hold an item count (``minItems``, ``maxItems``, ``minContains``,
    ``maxContains``) over 1000 (an open finding: the
    translator writes out every item, regressions/json_schema/min-items-*)? Such inputs are
    passed over so that the fuzzer looks for other defects."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("minItems", "maxItems", "minContains", "maxContains") and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 1000:
                return True
            if _has_huge_count(v):
                return True
    elif isinstance(value, list):
        return any(_has_huge_count(v) for v in value)
    return False


# The open findings' signatures (exception type, innermost corral function; for a
# Finding, a piece of its message), from regressions/OPEN. With SKIP_OPEN, an input that
# fails with one of these is passed over, so that fuzzing time goes to new defects.
OPEN_SIGNATURES = {
    ("TypeError", "n_type"),
    ("TypeError", "apply"),
    ("TypeError", "multiple_regex"),
    ("TypeError", "peek"),
    ("TypeError", "n_prefix"),
    ("RecursionError", "*"),
    ("InvalidOperation", "*"),
    ("ValueError", "_split"),
    ("ZeroDivisionError", "multiple_regex"),
    ("Finding", "is not a number"),
    ("Finding", "undefined rule `nothing`"),
    ("Finding", "matches no string"),
    ("Finding", "decimal literal invalid"),
}


def _signature_is_open(e: BaseException) -> bool:
    name = type(e).__name__
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/corral/" in f.filename]
    func = frames[-1].name if frames else ""
    return any(
        name == kind and (where == "*" or where == func or (kind == "Finding" and where in str(e)))
        for kind, where in OPEN_SIGNATURES
    )


def test_one_input(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    if SKIP_OPEN:
        try:
            if _has_huge_count(json.loads(text)):
                return
        except (ValueError, RecursionError):
            pass
        try:
            _check(text, data)
        except Exception as e:  # noqa: BLE001 - filtering the open findings' signatures
            if _signature_is_open(e):
                return
            raise
    else:
        _check(text, data)


def _check(text: str, data: bytes) -> None:
    """The body: translate, compile, sample, step (see the module docstring)."""
    options = options_for(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            grammar = corral.Grammar.json_schema(text, limits=LIMITS, **options)
            compiled = corral.compile(grammar, VOCAB, limits=LIMITS, cache=False)
        except InternalError:
            raise
        except InvalidGrammarError as e:
            # The schema front-end reports schema problems with their JSON pointer; a grammar
            # error means it built a grammar that the grammar checks refuse.
            raise Finding(f"the translator built an invalid grammar: {e}") from e
        except CorralError:
            return
    try:
        schema = json.loads(text, parse_float=Decimal)
    except (ValueError, RecursionError, ArithmeticError):
        return
    # Strict mode enforces exactly what it accepted, so its sentences must validate.
    # (`nullable` is OpenAPI's, which corral reads and jsonschema does not.)
    judge = options["strict"] and "nullable" not in text
    validator = oracle_validator(schema) if judge else None
    rng = random.Random(data)
    for _ in range(2):
        # (A long count's sentences are drawn no further than a completion may run.)
        sentence = grammar._inner.sample(rng.randrange(2**32), 64, LIMITS.max_completion_bytes)
        if sentence is None:
            break
        if not compiled.matches(sentence):
            raise Finding(f"the compiled grammar rejects its own sentence {sentence!r}")
        check_sentence(validator, sentence, schema)
    m = compiled.matcher()
    prefix = b""
    for _ in range(8):
        if m.is_finished():
            break
        allowed = [t for t in range(VOCAB.size) if m.is_allowed(t)]
        if not allowed:
            raise Finding(f"a live matcher allows no token of a byte vocabulary after {prefix!r}")
        t = rng.choice(allowed)
        if not m.advance(t):
            raise Finding(f"allowed token {t} was refused after {prefix!r}")
        prefix += VOCAB.token_bytes(t)
    try:
        completion = m.completion()
    except LimitExceededError:  # the shortest ending is longer than max_completion_bytes
        return
    if completion is not None:
        # Byte by byte (ids 0..255 are the bytes), then as a whole.
        done = m.copy()
        for b in completion:
            if not done.advance(b):
                raise Finding(f"completion {completion!r} of {prefix!r} refused at byte {b}")
        if not done.is_accepting() or not compiled.matches(prefix + completion):
            raise Finding(f"completion {completion!r} of {prefix!r} does not end accepting")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
