"""Context-free grammars: EBNF text → matcher, exact masks, errors with line and column."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import corral
from _util import accepts_tokens, allowed_ids

GRAMMARS = Path(__file__).parent / "corpus" / "grammars"


@pytest.fixture(scope="module")
def json_grammar():
    return corral.Grammar.ebnf((GRAMMARS / "json.ebnf").read_text())


def test_json_documents_accepted_token_by_token(json_grammar, tokenizer):
    compiled = corral.compile(json_grammar, tokenizer.vocab)
    docs = [
        {"a": [1, 2.5, -3e-2], "b": {"c": None, "d": True}, "e": "x\ny ü 😀"},
        [],
        "plain",
        0,
        [[[]], {}],
    ]
    for doc in docs:
        for text in (json.dumps(doc), json.dumps(doc, indent=2)):
            ids = tokenizer.encode(text)
            assert tokenizer.vocab.decode_bytes(ids) == text.encode()
            ok, why = accepts_tokens(compiled, tokenizer.vocab, ids)
            assert ok, f"{tokenizer.name} {text!r}: {why}"


def test_json_rejects_invalid(json_grammar, deepseek):
    compiled = corral.compile(json_grammar, deepseek.vocab)
    for text in ['{"a" 1}', "[1,]", '{"a":1,}', "tru", '"\\x"', "01", "[1 2]"]:
        assert not compiled.matches(text.encode()), text
        ok, _ = accepts_tokens(compiled, deepseek.vocab, deepseek.encode(text))
        assert not ok, text


def test_mask_is_exact_against_brute_force(json_grammar, byte_vocab):
    """With one token per byte, the mask must equal 'which bytes keep a valid prefix'."""
    compiled = corral.compile(json_grammar, byte_vocab)
    m = compiled.matcher()
    for ch in '{"k": [1, tr':
        allowed = set(allowed_ids(m, byte_vocab).tolist())
        for b in range(256):
            assert (b in allowed) == m.is_allowed(b), (ch, b)
        assert m.advance(ord(ch))


def test_rollback_restores_exact_state(json_grammar, deepseek):
    compiled = corral.compile(json_grammar, deepseek.vocab)
    m = compiled.matcher()
    ids = deepseek.encode('{"name": [1, {"x": "y"}]}')
    masks = []
    for t in ids:
        masks.append(allowed_ids(m, deepseek.vocab).tolist())
        assert m.advance(t)
    assert m.is_accepting()
    for k in range(len(ids) - 1, -1, -1):
        m.rollback(1)
        assert allowed_ids(m, deepseek.vocab).tolist() == masks[k]
    assert m.num_tokens == 0


def test_forced_tokens_in_a_grammar(byte_vocab):
    g = corral.Grammar.ebnf('start ::= "hello" ( " world" | "!" ) ;')
    m = corral.compile(g, byte_vocab).matcher()
    assert m.forced_tokens() == list(b"hello")
    for b in b"hello":
        assert m.advance(b)
    assert m.forced_tokens() == []
    assert m.advance(ord("!"))
    assert m.forced_tokens() == [byte_vocab.eos_token_ids[0]]


# (grammar text, line, column, the exact message after "grammar error at line L, column C: ")
BROKEN = [
    ("start ::= a ;", 1, 11, "undefined rule `a`"),
    ('start ::= "x" ;\nb ::= "y" (', 2, 12, "expected `)` to close the group opened at 2:11, found the end of the grammar"),
    (
        'start ::= "x" loop ;\nloop ::= "y" loop ;',
        2,
        1,
        "rule `loop` can never produce a finite string (every alternative recurses forever); "
        "so the start rule `start` matches no string at all",
    ),
    ('start ::= "unterminated ;', 1, 11, "unterminated string"),
    ("start ::= [^\\s\\S] ;", 1, 11, "`[^\\s\\S]` matches no string; so the start rule `start` matches no string at all"),
    ('start ::= "a"{3,1} ;', 1, 14, "repetition {3,1} has max < min"),
    (
        "start ::= /(a)\\1/ ;",
        1,
        11,
        "in `(a)\\1`: unsupported regex construct at position 3: backreference (\\1 ... \\99)\n    (a)\\1\n       ^",
    ),
    ('start ::= "a" ;\nstart2 := "b" ;', 2, 8, "expected `::=` (rules are written `name ::= ...`)"),
    ("start ::= except!(a) ;\na ::= \"x\" a | \"y\" ;", 1, 11, "except! needs a regular argument (strings, classes, regexes and non-recursive rules)"),
    ('start ::= "a" {2,x} ;', 1, 15, "a repetition must look like {m}, {m,}, {,n} or {m,n}"),
]


@pytest.mark.parametrize("text,line,column,message", BROKEN)
def test_broken_grammars(text, line, column, message):
    with pytest.raises(corral.InvalidGrammarError) as info:
        corral.Grammar.ebnf(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err) == f"grammar error at line {line}, column {column}: {message}"


def test_unused_rule_warns():
    with pytest.warns(corral.GrammarWarning, match="rule `spare` at line 2, column 1 is never used"):
        corral.Grammar.ebnf('start ::= "a" ;\nspare ::= "b" ;')


@pytest.mark.parametrize("pattern", [r"\s*19[0-9]{2}", r"[^\W\d]\w*", r'"([^"\\]|\\.)*"', r"(ab|a)(bc|c)?"])
def test_regex_as_grammar_behaves_as_regex(pattern, deepseek):
    vocab = deepseek.vocab
    as_regex = corral.compile(corral.Grammar.regex(pattern), vocab)
    as_grammar = corral.compile(corral.Grammar.ebnf("start ::= /" + pattern.replace("/", "\\/") + "/ ;"), vocab)
    rng = np.random.default_rng(0)
    for _ in range(5):
        ms = [as_regex.matcher(), as_grammar.matcher()]
        for _step in range(6):
            masks = [allowed_ids(m, vocab).tolist() for m in ms]
            assert masks[0] == masks[1]
            if not masks[0]:
                break
            tok = int(rng.choice(masks[0]))
            assert all(m.advance(tok) for m in ms)
            if tok in vocab.eos_token_ids:
                break
