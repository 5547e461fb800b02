"""JSON Schemas inside grammars (``%json {...}`` in Lark and corral EBNF): random walks
through the grammars end in outputs whose JSON parts parse back and validate against
their schemas; ``%ignore`` stays outside the JSON; errors say where the schema is."""

from __future__ import annotations

import json
import pickle
import random
import re
import warnings

import jsonschema
import pytest

import corral
from _util import accepts_tokens, allowed_ids

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 12}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city"],
    "additionalProperties": False,
}
TIME = {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"], "additionalProperties": False}

LARK = f"""
start: (TEXT? call)+ TEXT?
call: "<call " NAME_W " " %json {json.dumps(WEATHER)} ">" | "<call " NAME_T " " %json {json.dumps(TIME)} ">"
NAME_W: "weather"
NAME_T: "time"
TEXT: /[a-z .]{{1,20}}/
"""

EBNF = f"""
root ::= ("say " [a-z]+ "\\n")* call+ ;
call ::= "weather=" %json {json.dumps(WEATHER)} "\\n" | "time=" %json {json.dumps(TIME)} "\\n" ;
"""

CALL = re.compile(r"<call (weather|time) (\{.*?\})>|(weather|time)=(\{.*?\})\n")


def check_calls(text: str) -> int:
    n = 0
    for m in CALL.finditer(text):
        name, body = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        jsonschema.validate(json.loads(body), WEATHER if name == "weather" else TIME)
        n += 1
    return n


@pytest.mark.parametrize("make,text", [(corral.Grammar.lark, LARK), (corral.Grammar.ebnf, EBNF)], ids=["lark", "ebnf"])
def test_random_walks_give_valid_json(deepseek, make, text):
    vocab = deepseek.vocab
    compiled = corral.compile(make(text), vocab)
    rng = random.Random(3)
    calls = 0
    for _ in range(12):
        m = compiled.matcher()
        out = b""
        # Random tokens for a while, then the matcher's own completion, token by token.
        for _step in range(rng.randrange(5, 40)):
            allowed = allowed_ids(m, vocab)
            assert len(allowed) > 0
            t = int(rng.choice([t for t in allowed if t not in vocab.eos_token_ids] or allowed))
            assert m.advance(t)
            if m.is_finished():
                break
            out += vocab.token_bytes(t)
        if not m.is_finished():
            rest = m.completion()
            assert rest is not None
            for t in deepseek.encode(rest.decode()):
                assert m.advance(t), (out, rest)
            out += rest
            assert m.is_accepting()
        calls += check_calls(out.decode())
    assert calls >= 6


def test_valid_outputs_are_accepted_token_by_token(deepseek):
    vocab = deepseek.vocab
    compiled = corral.compile(corral.Grammar.lark(LARK), vocab)
    for out in ['ok <call weather {"city":"Oslo","days":3}>', 'x<call time {"zone":"CET"}> then.<call time {"zone":"UTC"}> ok']:
        assert accepts_tokens(compiled, vocab, deepseek.encode(out))[0], out
    for bad in ['<call weather {"city":"Oslo","days":9}>', '<call time {"zone":"UTC","zone":"CET"}>', '<call time { "zone":"UTC"}>']:
        assert not accepts_tokens(compiled, vocab, deepseek.encode(bad))[0], bad


def test_ignore_goes_around_the_value_not_inside(byte_vocab):
    g = corral.Grammar.lark('start: "f(" %json {"type": "array", "items": {"type": "integer"}} ")"\n%ignore " "')
    compiled = corral.compile(g, byte_vocab)
    assert compiled.matches(b"f( [1,2] )")
    assert not compiled.matches(b"f([1, 2])")


def test_two_schemas_and_pickling(byte_vocab):
    g = corral.Grammar.ebnf('root ::= %json {"type": "integer"} "," %json {"enum": ["a", "b"]} ;')
    again = pickle.loads(pickle.dumps(g))
    compiled = corral.compile(again, byte_vocab)
    assert compiled.matches(b'12,"b"') and not compiled.matches(b'12,"c"') and not compiled.matches(b'1.5,"a"')


@pytest.mark.parametrize(
    "make,text,where",
    [
        (corral.Grammar.lark, 'start: "a"\n  | %json {"type": "strin"}', "%json at 2:5"),
        (corral.Grammar.ebnf, 'root ::= "a" %json {"minimum": "x"} ;', "%json at 1:14"),
        (corral.Grammar.ebnf, 'root ::= %json {"type": "object"', "column 16"),
        (corral.Grammar.lark, 'start: %json [1]', "column 14"),
    ],
)
def test_errors_say_where_the_schema_is(make, text, where):
    with pytest.raises(corral.CorralError, match=re.escape(where)):
        make(text)


def test_gbnf_has_no_json_directive():
    with pytest.raises(corral.GrammarError):
        corral.Grammar.gbnf('root ::= %json {"type": "integer"}')


def test_objects_open_to_other_keys_keep_them_distinct(byte_vocab):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grammar = corral.Grammar.lark('start: "{" /[a-z"]+/ "} " %json {"type": "object"}')
    compiled = corral.compile(grammar, byte_vocab)
    assert compiled.matches(b'{"a"} {"a":1,"b":2}') and not compiled.matches(b'{"a"} {"a":1,"a":2}')
    m = compiled.matcher()
    for b in b'{"a""a"} {"a":1,"a':
        assert m.advance(b)
    assert not m.is_allowed(ord('"')) and m.is_allowed(ord("b"))
