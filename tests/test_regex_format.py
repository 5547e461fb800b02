"""`format: "regex"`: strings that must be ECMAScript regular expressions, checked beside the parser.

The oracle is a JavaScript engine's: ``tests/corpus/ecma_regex.jsonl``
holds patterns and whether node 20 compiles them with ``new RegExp(p, "u")`` (written by
``tools/gen_ecma_regex_cases.py``; node is not needed to run these tests).
"""

from __future__ import annotations

import json
import pathlib
import random

import jsonschema
import numpy as np
import pytest

import corral

CASES = [json.loads(line) for line in (pathlib.Path(__file__).parent / "corpus" / "ecma_regex.jsonl").read_text().splitlines() if line]

BYTES = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
EOS = 256

REGEX = {"type": "string", "format": "regex"}


def compiled(schema, vocab=BYTES, **kw):
    return corral.compile(corral.Grammar.json_schema(schema, **kw), vocab)


def allowed(m, bm):
    m.fill_bitmask(bm, 0)
    return set(np.nonzero(np.unpackbits(bm[0].view(np.uint8), bitorder="little")[: BYTES.size])[0].tolist())


def dumped(p: str) -> bytes:
    return json.dumps(p, ensure_ascii=False).encode()


SPECIAL = [ord(ch) for ch in '()[]{}\\|*+?^$.-,0123456789<>:=!kpPudwsbBcx/"']


def biased_walk(c, seed: int, steps: int, end_after: int):
    """A masked random walk over `c` that prefers the syntax's characters: every mask
    allows some token (no dead end). Returns the matcher and the bytes written; it may
    stop early where EOS is allowed after `end_after` steps."""
    bm = corral.allocate_bitmask(1, BYTES.size)
    rng = random.Random(seed)
    m, out = c.matcher(), bytearray()
    for step in range(steps):
        ok = allowed(m, bm)
        assert ok, bytes(out)
        if EOS in ok and step > end_after:
            break
        choice = [t for t in SPECIAL if t in ok] if rng.random() < 0.7 else []
        t = rng.choice(choice or sorted(t for t in ok if t != EOS) or [EOS])
        if t == EOS:
            break
        assert m.advance(t)
        out.append(t)
    return m, out


def finished_walk(c, seed: int, steps: int, end_after: int):
    """`biased_walk`, then finished by `completion()` (which must exist and be allowed)."""
    m, out = biased_walk(c, seed, steps, end_after)
    rest = m.completion()
    assert rest is not None, bytes(out)
    for b in rest:
        assert m.advance(b), (bytes(out), rest)
    out += rest
    return m, out


def test_matches_agrees_with_the_engine_on_every_case():
    c = compiled(REGEX)
    assert len(CASES) > 1000
    wrong = [(p, valid) for p, valid in CASES if c.matches(dumped(p)) != valid]
    assert not wrong, wrong[:10]


def test_masks_refuse_exactly_where_no_pattern_can_be_finished():
    """Along each valid pattern every byte is allowed; along each invalid one, some byte
    (or the closing quote, or EOS) is refused; and every refusal comes with a way on."""
    c = compiled(REGEX)
    bm = corral.allocate_bitmask(1, BYTES.size)
    rng = random.Random(7)
    for p, valid in rng.sample(CASES, 600):
        m = c.matcher()
        refused = False
        for b in dumped(p):
            ok = allowed(m, bm)
            assert ok, f"dead end inside {p!r}"
            if b not in ok:
                refused = True
                assert not m.is_allowed(b)
                break
            assert m.advance(b)
        if not refused:
            refused = EOS not in allowed(m, bm)
        assert refused == (not valid), (p, valid)


def test_masked_random_walks_end_in_patterns():
    """Walks biased to the syntax's characters never meet a dead end, and what they write
    (finished by completion()) is accepted by matches() and is a case-wise consistent pattern."""
    schema = {"type": "object", "properties": {"rules": {"type": "array", "items": REGEX}, "main": dict(REGEX, minLength=2)},
              "required": ["rules", "main"], "additionalProperties": False}
    c = compiled(schema)
    for seed in range(40):
        m, out = finished_walk(c, seed, 150, 60)
        assert m.is_accepting()
        doc = json.loads(bytes(out))
        assert c.matches(bytes(out))
        single = compiled(REGEX)
        for p in doc["rules"] + [doc["main"]]:
            assert single.matches(dumped(p)), p


def test_duplicates_and_orders_follow_the_rest_of_the_schema():
    c = compiled({"type": "array", "items": REGEX, "uniqueItems": True})
    assert c.matches(b'["a","(b)"]')
    assert not c.matches(b'["a","a"]')
    assert not c.matches(b'["a","(b"]')


def test_rollback_restores_the_pattern():
    c = compiled(REGEX)
    m = c.matcher()
    for b in b'"(a':
        assert m.advance(b)
    assert not m.advance(ord('"'))  # unclosed group
    assert m.advance(ord(")"))
    assert m.advance(ord('"'))
    m.rollback(2)
    assert not m.advance(ord('"'))
    assert m.advance(ord("|"))
    assert m.completion() == b')"'


def test_completion_finishes_half_written_patterns():
    c = compiled(REGEX)
    for prefix in [b'"[a-', b'"(?<na', b'"\\\\k<x', b'"a{5,1', b'"\\\\p{Scr', b'"\\\\u{1F6', b'"(a)\\\\2']:
        m = c.matcher()
        for b in prefix:
            assert m.advance(b), prefix
        rest = m.completion()
        assert rest is not None
        whole = prefix + rest
        assert c.matches(whole), whole
        assert m.is_accepting() is False or rest == b""


def test_enum_members_that_are_not_patterns_are_dropped():
    c = compiled({"enum": ["a+", "(", "[z-a]", "ok"], "format": "regex"})
    assert c.matches(b'"a+"') and c.matches(b'"ok"')
    assert not c.matches(b'"("') and not c.matches(b'"[z-a]"')


def test_inside_json_in_a_grammar_text_and_anyof():
    g = corral.Grammar.ebnf('root ::= "re: " %json {"type": "string", "format": "regex"}')
    c = corral.compile(g, BYTES)
    assert c.matches(b're: "a|b"')
    assert not c.matches(b're: "a|("')
    c = compiled({"anyOf": [{"type": "integer"}, REGEX]})
    assert c.matches(b"12") and c.matches(b'"x*"') and not c.matches(b'"*x"')


def test_pattern_beside_the_format():
    # Every string of the pattern is a regular expression: the pattern alone decides.
    c = compiled(dict(REGEX, pattern="^[a-z]+$"))
    assert c.matches(b'"abc"') and not c.matches(b'"ab("')
    # Any text may follow a fixed start: both are enforced, and no walk dead-ends.
    c = compiled(dict(REGEX, pattern="^/.+/$"))
    assert c.matches(b'"/a(b)/"')
    assert not c.matches(b'"/a(b/"')
    assert not c.matches(b'"a(b)"')
    m = c.matcher()
    for b in b'"/((':
        assert m.advance(b)
    rest = m.completion()
    assert rest is not None and c.matches(b'"/((' + rest)


def test_refusals_say_what_and_where():
    with pytest.raises(corral.UnsupportedSchemaError, match=r"/properties/r/format.*maxLength.*unfinished"):
        corral.Grammar.json_schema({"properties": {"r": dict(REGEX, maxLength=5)}})
    with pytest.raises(corral.UnsupportedSchemaError, match=r"format.*not.*regular expressions"):
        corral.Grammar.json_schema({"not": REGEX})
    with pytest.raises(corral.UnsupportedSchemaError, match=r"/not/propertyNames/format.*keys that are not regular"):
        corral.Grammar.json_schema({"type": "object", "not": {"propertyNames": REGEX}})
    # strict=False drops the format there, with a warning: the grammar is wider.
    with pytest.warns(Warning, match="dropped format at /properties/r/format"):
        g = corral.Grammar.json_schema({"properties": {"r": dict(REGEX, maxLength=5)}}, strict=False)
    assert any("format" in w for w in g.warnings)
    assert corral.compile(g, BYTES).matches(b'{"r":"(("}')


@pytest.mark.parametrize(
    "schema,pointer",
    [
        ({"anyOf": [REGEX, {"type": "string", "maxLength": 3}]}, "/anyOf/0/format"),
        ({"items": {"anyOf": [REGEX, {"const": "(("}]}}, "/items/anyOf/0/format"),
        ({"properties": {"p": {"anyOf": [{"type": "string", "pattern": "^x"}, REGEX]}}}, "/properties/p/anyOf/1/format"),
    ],
)
def test_a_pattern_string_beside_another_string_is_refused(schema, pointer):
    # The check starts at the opening quote, before the string shows which alternative it
    # is: it would hold the other alternative's strings to being patterns too.
    with pytest.raises(corral.UnsupportedSchemaError, match="another branch") as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer
    # strict=False drops the format there: every valid document is accepted.
    with pytest.warns(Warning, match=f"dropped format at {pointer}"):
        c = compiled(schema, strict=False)
    for doc in (["(("], {"p": "(("}, {"p": "x(("}, "((", "a|b"):
        if jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(doc):
            assert c.matches(json.dumps(doc, separators=(",", ":")).encode()), doc


def test_a_pattern_string_beside_any_string_is_any_string():
    # AppVeyor's commit filter: "a user name, or a regular expression".
    c = compiled({"properties": {"author": {"anyOf": [REGEX, {"type": "string"}]}}})
    assert c.matches(b'{"author":"(("}') and c.matches(b'{"author":"a|b"}')
    g = corral.Grammar.json_schema({"anyOf": [REGEX, {"type": "string"}]})
    assert not g.warnings


def test_pattern_strings_beside_values_of_other_types_or_other_patterns_stay_exact():
    c = compiled({"anyOf": [REGEX, {"type": "null"}, {"type": "array"}]})
    assert c.matches(b'"a|b"') and c.matches(b"null") and not c.matches(b'"(("')
    c = compiled({"anyOf": [REGEX, dict(REGEX, minLength=3)]})
    assert c.matches(b'"a"') and c.matches(b'"abc"') and not c.matches(b'"a(("')


def test_masks_of_multibyte_tokens_match_token_checks():
    """On a vocabulary with multi-byte tokens (the trie walk takes plain subtrees whole),
    a mask inside and around patterns keeps exactly the tokens is_allowed() accepts one by
    one (that reads each token's bytes, no trie)."""
    words = [b'"', b'(', b')', b'[', b']', b'a', b'ab', b'a(', b'(?', b'(?:', b')"', b'"]', b'\\\\', b'\\\\d', b'{2', b'{2,}',
             b'*', b'*)', b'x|', b'|', b'"}', b'-', b'z-a', b'a-z', b'\xc3', b'\xa9', b'\xc3\xa9', b'])', b'"]"', b'?<',
             b'n>', b'abc def', b'ghi', b'","', b'"(', b'-z', b'\\\\u', b'00e9', b'\\\\k<', b'\\\\p{', b'Lu}', b'\\u0001']
    tokens = words + [bytes([b]) for b in range(256) if bytes([b]) not in words]
    vocab = corral.Vocabulary.from_token_bytes(tokens + [b"</s>"], eos_token_ids=[len(tokens)])
    single = {t[0]: i for i, t in enumerate(tokens) if len(t) == 1}
    c = compiled({"type": "array", "items": REGEX}, vocab)
    bm = corral.allocate_bitmask(1, vocab.size)
    # `["x` and `["y` reach one pattern state: the second mask comes from the first's.
    for prefix in [b'[', b'["', b'["(', b'["[', b'["[z', b'["[z-', b'["\\', b'["\\\\', b'["a{', b'["(?', b'["(?<', b'["a",', b'["\\\\p{', b'["x', b'["y']:
        m = c.matcher()
        for b in prefix:
            assert m.advance(single[b]), prefix
        m.fill_bitmask(bm, 0)
        bits = np.unpackbits(bm[0].view(np.uint8), bitorder="little")[: vocab.size]
        for t in range(len(tokens)):
            assert bool(bits[t]) == m.is_allowed(t), (prefix, tokens[t])
        # Again, from the refusals the compiled grammar keeps per pattern state, and from
        # a fresh grammar that has kept none.
        again = corral.allocate_bitmask(1, vocab.size)
        m.fill_bitmask(again, 0)
        fresh = compiled({"type": "array", "items": REGEX}, vocab).matcher()
        for b in prefix:
            assert fresh.advance(single[b])
        cold = corral.allocate_bitmask(1, vocab.size)
        fresh.fill_bitmask(cold, 0)
        assert (again == bm).all() and (cold == bm).all(), prefix


def test_completion_of_a_huge_back_reference_is_bounded():
    """`\\99999999` is the start of a pattern (it needs that many groups): completion()
    says it is past Limits.max_completion_bytes rather than building it."""
    c = compiled(REGEX)
    m = c.matcher()
    for b in b'"\\\\99999999':
        assert m.advance(b)
    with pytest.raises(corral.LimitExceededError, match="max_completion_bytes"):
        m.completion()
    m.rollback(7)  # `\\9`: nine groups
    assert m.completion() == b"()" * 9 + b'"'


@pytest.mark.parametrize("pattern", ["^/.+/$", "^/var/vcap*", "schema", "^[a-z]+$"])
def test_walks_beside_a_pattern_never_dead_end(pattern):
    """Where the format is compiled beside a pattern, masked random walks biased to the
    syntax's characters always have a token to take, and end in strings both accept."""
    schema = dict(REGEX, pattern=pattern)
    c = compiled(schema)
    validator = jsonschema.Draft202012Validator(schema)
    single = compiled(REGEX)
    for seed in range(25):
        m, out = biased_walk(c, seed, 60, 20)
        rest = m.completion()
        assert rest is not None, bytes(out)
        text = bytes(out) + rest
        value = json.loads(text)
        assert validator.is_valid(value) and single.matches(text), text


def test_sampled_sentences_hold_patterns():
    """The grammar's random sentences draw a pattern string again until it is a regular
    expression (16 draws), so the compiled grammar accepts them."""
    schema = {"type": "array", "items": REGEX, "minItems": 3}
    grammar = corral.Grammar.json_schema(schema)
    c = corral.compile(grammar, BYTES)
    for seed in range(60):
        sentence = grammar._inner.sample(seed, 60)
        assert c.matches(sentence), sentence


KEYS_ARE_PATTERNS = {"type": "object", "propertyNames": REGEX, "additionalProperties": {"type": "integer"}}


def test_keys_that_must_be_patterns_are_checked_like_values():
    # The draft 6 and 7 metaschemas' `patternProperties`: every key a regular expression.
    c = compiled(KEYS_ARE_PATTERNS)
    engine = {p: valid for p, valid in CASES}
    rng = random.Random(3)
    for p in rng.sample(sorted(engine), 300):
        doc = json.dumps({p: 1}, ensure_ascii=False).replace(": ", ":").encode()
        assert c.matches(doc) == engine[p], p
    assert c.matches(b'{"a+":1,"^x$":2,"[a-z]{2,3}":3}')
    assert not c.matches(b'{"a+":1,"(b":2}') and not c.matches(b'{"a{3,2}":1}')
    # A named key is held to propertyNames when the schema is read, not by the check.
    c = compiled(dict(KEYS_ARE_PATTERNS, properties={"(x": {"type": "string"}, "ok": {"type": "string"}}))
    assert c.matches(b'{"ok":"s","b*":1}') and not c.matches(b'{"(x":"s"}')


def test_masked_walks_over_keys_that_must_be_patterns_end_in_patterns():
    c = compiled({"type": "object", "properties": {"rules": KEYS_ARE_PATTERNS}, "required": ["rules"], "additionalProperties": False})
    single = compiled(REGEX)
    keys = 0
    for seed in range(30):
        _, out = finished_walk(c, seed, 160, 80)
        doc = json.loads(bytes(out))
        for k in doc["rules"]:
            assert single.matches(dumped(k)), k
            keys += 1
    assert keys > 10


@pytest.mark.parametrize(
    "schema,pointer",
    [
        # Branches of propertyNames that disagree: the check reads every key or none.
        ({"type": "object", "propertyNames": {"anyOf": [REGEX, {"maxLength": 3}]}}, "/propertyNames/anyOf/0/format"),
        # An object beside whose keys need not be patterns.
        ({"anyOf": [KEYS_ARE_PATTERNS, {"type": "object", "additionalProperties": {"type": "string"}}]}, "/anyOf/0/propertyNames/format"),
    ],
)
def test_keys_that_must_be_patterns_beside_keys_that_need_not_be_are_refused(schema, pointer):
    with pytest.raises(corral.UnsupportedSchemaError, match="need not be") as info:
        corral.Grammar.json_schema(schema)
    assert info.value.pointer == pointer
    # strict=False: the grammar is wider there, never narrower.
    with pytest.warns(Warning, match="dropped"):
        c = compiled(schema, strict=False)
    for doc in ({"((": "s"}, {"ab": "s"}, {"abcd": 1}, {"a|b": 2}):
        if jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(doc):
            assert c.matches(json.dumps(doc, separators=(",", ":")).encode()), doc


def test_objects_whose_keys_all_must_be_patterns_stay_exact_side_by_side():
    c = compiled({"anyOf": [KEYS_ARE_PATTERNS, {"type": "object", "propertyNames": REGEX, "additionalProperties": {"type": "string"}}]})
    assert c.matches(b'{"a+":1}') and c.matches(b'{"a+":"s"}') and not c.matches(b'{"(a":1}')
