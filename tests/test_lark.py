"""Lark grammars: corral against the real `lark` parser (Earley, dynamic_complete lexer)
on the same grammar text."""

from __future__ import annotations

from pathlib import Path

import lark
import numpy as np
import pytest

import corral
from _util import accepts_tokens, allowed_ids
from test_grammar_corpus import byte_tokens

HERE = Path(__file__).parent / "corpus" / "lark"

CASES = {
    "json.lark": (
        ['{"a": [1, 2.5, -3e2], "b" : { } }', "  [ ]  ", "true", '"x\\"y"', "{\n  \"k\": null\n}", "-0.5E+3"],
        ['{"a" 1}', "[1,]", "[1 2]", "tru", '"a\nb"', "{,}"],
    ),
    "calc.lark": (
        ["x = 1 + 2 * y;", "max(1, 2) - -3;", "MIN ( a ) ;", "a=(b);c;", "1e3 / 2.5;"],
        ["x = ;", "1 +;", "x = 1", "max();", "a b;"],
    ),
    "misc.lark": (
        ["2024-02-29", "1999-12-31 23:59", "2024-01-01 00:00#a#BcD", "2024-10-10#x#y#z"],
        ["2024-13-01", "2024-02-30 24:00", "24-01-01", "2024-01-01#a#b#c#d", "2024-01-01 #a"],
    ),
}


def oracle(name: str) -> lark.Lark:
    return lark.Lark((HERE / name).read_text(), parser="earley", lexer="dynamic_complete")


def parses(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
        return True
    except lark.exceptions.LarkError:
        return False


@pytest.mark.parametrize("name", sorted(CASES))
def test_lark_grammars_agree_with_lark(name, byte_vocab):
    good, bad = CASES[name]
    parser = oracle(name)
    compiled = corral.compile(corral.Grammar.lark((HERE / name).read_text()), byte_vocab)
    for s in good:
        assert parses(parser, s), f"corpus error: lark rejects {s!r}"
        assert compiled.matches(s.encode()), s
    for s in bad:
        assert not parses(parser, s), f"corpus error: lark accepts {s!r}"
        assert not compiled.matches(s.encode()), s


@pytest.mark.parametrize("name", sorted(CASES))
def test_lark_completeness_and_soundness(name, tokenizer):
    vocab = tokenizer.vocab
    grammar = corral.Grammar.lark((HERE / name).read_text())
    compiled = corral.compile(grammar, vocab)
    parser = oracle(name)
    for seed in range(12):
        sentence = grammar._inner.sample(seed, 40).decode()
        assert parses(parser, sentence), f"generator produced {sentence!r}, which lark rejects"
        ids = tokenizer.encode(sentence)
        if tokenizer.lossless or vocab.decode_bytes(ids) == sentence.encode():
            ok, why = accepts_tokens(compiled, vocab, ids)
            assert ok, f"{sentence!r}: {why}"
    by_byte = byte_tokens(vocab)
    eos = set(vocab.eos_token_ids)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        m = compiled.matcher()
        out = []
        for _ in range(int(rng.integers(1, 15))):
            normal = [t for t in allowed_ids(m, vocab) if t not in eos]
            if not normal:
                break
            tok = int(rng.choice(normal))
            assert m.advance(tok)
            out.append(tok)
        for b in m.completion():
            assert m.advance(by_byte[b])
            out.append(by_byte[b])
        assert m.is_accepting()
        text = vocab.decode_bytes(out).decode()
        assert parses(parser, text), f"corral allowed {text!r}, lark rejects it"


# (grammar text, line, column, the exact message after "grammar error at line L, column C: ")
LARK_ERRORS = [
    ("start: a\n", 1, 8, "undefined rule `a`"),
    ("start: x\n_sep{x}: x\nx: \"a\"", 2, 1, "templates (`_sep{...}`) are not supported"),
    ("start: A\n%declare A\n", 2, 1, "`%declare` is not supported: declared terminals come from a custom lexer, and corral matches text"),
    ("start: X\n%import common.NOPE -> X\n", 2, 1, "`common.NOPE` is not a terminal corral knows"),
    ("start: T\nT: \"a\" rule\nrule: \"b\"\n", 2, 1, "terminal `T` uses the rule `rule`; terminals may only use terminals"),
    ('start: "a" ~ 3..1\n', 1, 12, "repetition ~ 3..1 has max < min"),
    ("start: (\"a\"\n", 2, 1, "expected `)` to close the group opened at 1:8, found the end of the grammar"),
    ("start: \"a\"\n%import other.X\n", 2, 9, "only `%import common...` is supported, not `other`"),
]


@pytest.mark.parametrize("text,line,column,message", LARK_ERRORS)
def test_lark_errors(text, line, column, message):
    with pytest.raises(corral.InvalidGrammarError) as info:
        corral.Grammar.lark(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert str(info.value) == f"grammar error at line {line}, column {column}: {message}"


IGNORE_CASES = [
    # A terminal built from a large repetition stays one token (no ignored text inside).
    ('start: NUM ("," NUM)*\nNUM: DIGIT~1..80\nDIGIT: /[0-9]/\n%ignore " "\n',
     ["12,34", "12 , 34", " 7", "1 2,3", "12,3 4", "1" * 80, "1" * 81, "1" * 40 + " " + "1" * 40]),
    # A group or a repetition of tokens inside a rule is several tokens: ignored text may
    # come between them.
    ('start: NUM ("," NUM)?\nNUM: /[0-9]+/\n%ignore " "\n', ["1,2", "1, 2", "1 ,2", "1 , 2", "1,", ",2"]),
    ('start: WORD+ "."\nWORD: /[a-z]+/\n%ignore /[ \\t]+/\n', ["ab cd.", "ab\tcd .", "abcd.", " ab .", "ab", "."]),
]


@pytest.mark.parametrize("grammar,texts", IGNORE_CASES)
def test_ignore_goes_between_tokens_only(byte_vocab, grammar, texts):
    # Checked against lark itself.
    compiled = corral.compile(corral.Grammar.lark(grammar), byte_vocab)
    parser = lark.Lark(grammar, parser="earley", lexer="dynamic")
    for text in texts:
        assert compiled.matches(text.encode()) is parses(parser, text), text
