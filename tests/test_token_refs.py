"""Token references in grammars (``<[id]>``, ``<[a-b,c]>``, ``<name>``, ``!<…>*``) in GBNF,
corral EBNF and Lark: masks at every step of random walks equal an independent
token-level oracle, real tokenizers' special tokens are matched by id and never as the
text that spells them, and errors name the token."""

from __future__ import annotations

import pickle
import random

import pytest
import regex

import corral
from _util import accepts_tokens, allowed_ids

# id: (bytes, kind)
TOKENS: list[tuple[bytes, str]] = [
    (b"<think>", "special"),  # 0
    (b"</think>", "special"),  # 1
    (b"<tool>", "special"),  # 2
    (b"<|end|>", "eos"),  # 3
    (b"<|eot|>", "eos"),  # 4
    (b"a", "normal"),  # 5
    (b"b", "normal"),  # 6
    (b"ab", "normal"),  # 7
    (b" ", "normal"),  # 8
    (b"x", "normal"),  # 9
    (b"{", "normal"),  # 10
    (b"}", "normal"),  # 11
    (b"say ", "normal"),  # 12
    (b"<", "normal"),  # 13
    (b"think", "normal"),  # 14
    (b">", "normal"),  # 15
    (b"<x>", "normal"),  # 16: an ordinary token a grammar may name
    (b"\xff", "normal"),  # 17: never allowed where tokens are named
    (b"a}", "normal"),  # 18
    (b"/", "normal"),  # 19
]
EOS = [i for i, (_, k) in enumerate(TOKENS) if k == "eos"]
SPECIAL = [i for i, (_, k) in enumerate(TOKENS) if k == "special"]


def symbol(i: int) -> str:
    return chr(0xE000 + i)


# (syntax, grammar text, the ids it names, its language over token symbols: text tokens
# are their bytes read as Latin-1, named and special tokens are symbol(id))
OTHER_SPECIALS = "".join(symbol(i) for i in SPECIAL)
CASES = [
    ("gbnf", 'root ::= <think> [a-z ]* </think> "{" [ab]+ "}"', {0, 1}, f"{symbol(0)}[a-z ]*{symbol(1)}\\{{[ab]+\\}}"),
    ("gbnf", 'root ::= !<[1]>* <[1]> "x"', {1}, f"(?:[\\x00-\\xfe]|[{symbol(0)}{symbol(2)}])*{symbol(1)}x"),
    ("lark", 'start: "say " <[5-6]> (<tool> | "x")+', {2, 5, 6}, f"say [{symbol(5)}{symbol(6)}](?:{symbol(2)}|x)+"),
    ("ebnf", 'root ::= <x>+ "ab" | "<x>"', {16}, f"{symbol(16)}+ab|<x>"),
    ("ebnf", 'root ::= "a" <|end|> "b"', {3}, f"a{symbol(3)}b"),
    ("lark", 'start: "a" !<think>+ <think>', {0}, f"a(?:[\\x00-\\xfe]|[{symbol(1)}{symbol(2)}])+{symbol(0)}"),
]


@pytest.fixture(scope="module")
def vocab() -> corral.Vocabulary:
    return corral.Vocabulary.from_token_bytes([b for b, _ in TOKENS], EOS, SPECIAL)


def grammar(syntax: str, text: str) -> corral.Grammar:
    return {"gbnf": corral.Grammar.gbnf, "ebnf": corral.Grammar.ebnf, "lark": corral.Grammar.lark}[syntax](text)


def spelled(ids: list[int], named: set[int], negation: bool) -> str:
    """The token sequence as the oracle reads it."""
    out = []
    for i in ids:
        data, kind = TOKENS[i]
        if i in named or (kind == "special" and negation):
            out.append(symbol(i))
        elif kind == "normal":
            out.append(data.decode("latin-1"))
        else:
            out.append(symbol(i))  # a special token no pattern allows
    return "".join(out)


def oracle(pattern: str, seq: list[int], named: set[int], negation: bool) -> set[int]:
    allowed = set()
    for t in range(len(TOKENS)):
        if t in EOS and t not in named:
            if regex.fullmatch(pattern, spelled(seq, named, negation)):
                allowed.add(t)
        elif regex.fullmatch(pattern, spelled([*seq, t], named, negation), partial=True):
            allowed.add(t)
    return allowed


@pytest.mark.parametrize("syntax,text,named,pattern", CASES)
def test_masks_equal_a_token_level_oracle(vocab, syntax, text, named, pattern):
    compiled = corral.compile(grammar(syntax, text), vocab)
    negation = "!<" in text
    rng = random.Random(7)
    walks = 0
    for _ in range(40):
        m = compiled.matcher()
        seq: list[int] = []
        for _step in range(10):
            got = set(allowed_ids(m, vocab).tolist())
            assert got == oracle(pattern, seq, named, negation), f"{text!r} after {seq}"
            if not got:
                break
            t = rng.choice(sorted(got))
            assert m.advance(t)
            seq.append(t)
            if m.is_finished():
                walks += 1
                break
    assert walks > 0, "some walk ends"


def test_the_text_of_a_named_token_is_not_the_token(vocab):
    compiled = corral.compile(corral.Grammar.gbnf("root ::= <think> \"a\""), vocab)
    assert accepts_tokens(compiled, vocab, [0, 5])[0]
    # `<` `think` `>` spells the same text, but the grammar names the token.
    assert not accepts_tokens(compiled, vocab, [13, 14, 15, 5])[0]
    # Special tokens not named stay forbidden.
    m = compiled.matcher()
    assert set(allowed_ids(m, vocab).tolist()) == {0}


def test_completions_write_named_tokens_as_text(vocab):
    compiled = corral.compile(corral.Grammar.gbnf('root ::= "a" <think> <[2]> "b"'), vocab)
    assert compiled.matcher().completion() == b"a<think><tool>b"


@pytest.mark.parametrize(
    "text,message",
    [
        ("root ::= <nope>", "`<nope>`"),
        ("root ::= <[99]>", "99"),
        ("root ::= <think> <[0]>", "both"),
        ("root ::= <|end|> <|eot|>", "end-of-sequence"),
    ],
)
def test_naming_what_the_vocabulary_lacks_is_an_error(vocab, text, message):
    g = corral.Grammar.gbnf(text)
    with pytest.raises(corral.CorralError, match=regex.escape(message)):
        corral.compile(g, vocab)


@pytest.mark.parametrize(
    "syntax,text,where",
    [
        ("gbnf", 'root ::= "a" !<[1]>', "column 14"),
        ("lark", 'start: "a" !<x>', "column 12"),
        ("ebnf", "root ::= <[5-2]>", "empty"),
        ("gbnf", "root ::= <[1x]>", "column 10"),
        ("ebnf", "root ::= <>", "column 10"),
        ("gbnf", "root ::= <[99999999999]>", "2^32"),
    ],
)
def test_malformed_references_say_where(syntax, text, where):
    with pytest.raises(corral.GrammarError, match=regex.escape(where)):
        grammar(syntax, text)


def test_compiled_grammars_with_references_pickle(vocab):
    compiled = corral.compile(corral.Grammar.lark('start: <think> "ab" </think>'), vocab)
    again = pickle.loads(pickle.dumps(compiled))
    assert accepts_tokens(again, vocab, [0, 7, 1])[0]


def test_a_join_keeps_the_references_of_its_parts(vocab):
    think = corral.Grammar.gbnf('root ::= <think> [ab ]* </think>')
    joined = think + corral.Grammar.regex(r"\{a\}")
    compiled = corral.compile(joined, vocab)
    assert accepts_tokens(compiled, vocab, [0, 5, 8, 6, 1, 10, 18])[0]
    assert not accepts_tokens(compiled, vocab, [13, 14, 15, 1, 10, 18])[0]
    either = corral.compile(think | corral.Grammar.regex("x"), vocab)
    assert accepts_tokens(either, vocab, [9])[0] and accepts_tokens(either, vocab, [0, 1])[0]


def test_qwen_reasoning_then_json_by_token_ids(qwen3):
    """Qwen 3.5's `<think>`/`</think>` are special tokens: the grammar names them, the
    reasoning between is free, and the JSON after is constrained."""
    tok = qwen3
    vocab = tok.vocab
    think, close = tok.encode("<think>"), tok.encode("</think>")
    assert len(think) == 1 and len(close) == 1
    tail = '"\\n" "{\\"ok\\": " ("true" | "false") "}"'
    by_name = corral.Grammar.gbnf(f"root ::= <think> !</think>* </think> {tail}")
    by_id = corral.Grammar.gbnf(f"root ::= <[{think[0]}]> !<[{close[0]}]>* <[{close[0]}]> {tail}")
    turn = "<think>Plan: say yes.</think>\n" + '{"ok": true}'
    for g in (by_name, by_id):
        compiled = corral.compile(g, vocab)
        assert accepts_tokens(compiled, vocab, tok.encode(turn))[0]
        # The markers written as plain text are not the tokens.
        assert not accepts_tokens(compiled, vocab, tok.encode_plain(turn))[0]
        m = compiled.matcher()
        assert allowed_ids(m, vocab).tolist() == think
        assert m.advance(think[0])
        # Inside the reasoning: any text, and any special token but the closing one, never EOS.
        inside = set(allowed_ids(m, vocab).tolist())
        assert close[0] in inside and not set(vocab.eos_token_ids) & inside
        assert set(tok.encode("<tool_call>")) <= inside
        assert len(inside) > vocab.size // 2
