"""Boolean operators on regular terms in corral EBNF: `and!(e1, e2, ...)` and `not!(e)`,
checked against Python's `re` (intersection = both fullmatch, complement = no fullmatch)."""

from __future__ import annotations

import re

import pytest

import corral
from _util import accepts_tokens

# Small Python regexes (no `/`, so each can be written `/.../` in a grammar as it is).
REGEXES = [
    r"a*",
    r"[ab]+",
    r"a.b",
    r"(ab)*",
    r"[^a]*",
    r"\d+",
    r"\w{1,3}",
    r"a|bc|",
    r".*b.*",
    r"(?s:.)",
    r"é+",
    r"[a-c]?[0-9]",
    r"(a|b)*a",
    r"\s*x",
]

ALPHABET = "ab01c x\né_"

_COMPILED: dict[str, object] = {}


def compiled(text: str, vocab: corral.Vocabulary):
    """The compiled grammar, or the InvalidGrammarError it raises (cached per text)."""
    if text not in _COMPILED:
        try:
            _COMPILED[text] = corral.compile(corral.Grammar.ebnf(text), vocab)
        except corral.InvalidGrammarError as e:
            _COMPILED[text] = e
    return _COMPILED[text]


def full(pattern: str, s: str) -> bool:
    return re.fullmatch(pattern, s) is not None


def check(c, vocab: corral.Vocabulary, s: str, want: bool, what: str) -> None:
    """Whole-string match and a byte-by-byte token walk (masks included) both agree."""
    assert c.matches(s.encode()) == want, f"{what}: {s!r}"
    ok, why = accepts_tokens(c, vocab, list(s.encode()))
    assert ok == want, f"{what}: {s!r} token walk: {why}"


def test_and_not_agree_with_re(byte_vocab):
    import hypothesis

    st = hypothesis.strategies

    @hypothesis.settings(max_examples=400, deadline=None, derandomize=True)
    @hypothesis.given(st.sampled_from(REGEXES), st.sampled_from(REGEXES), st.text(ALPHABET, max_size=6))
    def run(p, q, s):
        # and!: both fullmatch. An empty intersection as the whole grammar is an error at
        # the operator.
        text = f"start ::= and!(/{p}/, /{q}/) ;"
        c = compiled(text, byte_vocab)
        if isinstance(c, corral.InvalidGrammarError):
            assert str(c) == (
                "grammar error at line 1, column 11: "
                "and!(...) matches no string (no string matches all of its arguments); "
                "so the start rule `start` matches no string at all"
            )
            assert not (full(p, s) and full(q, s)), (text, s)
        else:
            check(c, byte_vocab, s, full(p, s) and full(q, s), text)
        # not!: no fullmatch (no regex in the list matches every string).
        text = f"start ::= not!(/{p}/) ;"
        check(compiled(text, byte_vocab), byte_vocab, s, not full(p, s), text)
        # Both, nested, inside a recursive grammar: "[<s>]" parses only with X = s.
        text = f'start ::= "<" and!(/{p}/, not!(/{q}/)) ">" | "[" start "]" ;'
        c = compiled(text, byte_vocab)
        if not isinstance(c, corral.InvalidGrammarError):
            assert c.matches(f"[<{s}>]".encode()) == (full(p, s) and not full(q, s)), (text, s)
            assert not c.matches(f"[<{s}>".encode())

    run()


def test_not_matches_only_well_formed_utf8(byte_vocab):
    c = compiled('start ::= not!("a") ;', byte_vocab)
    for s in ["", "b", "aa", "é", "\n", "😀"]:
        check(c, byte_vocab, s, True, "not!")
    check(c, byte_vocab, "a", False, "not!")
    for bad in [b"\xff", b"\xc3", b"a\xc3", b"\xed\xa0\x80"]:
        assert not c.matches(bad), bad


NESTED = [
    # (grammar, predicate on the whole string)
    (
        'start ::= not!(and!(/[a-z]+/, not!("abc"))) ;',
        lambda s: not (full(r"[a-z]+", s) and s != "abc"),
    ),
    (
        "start ::= and!(/[ab]*/, not!(/.*aa.*/), not!(/.*bb.*/)) ;",
        lambda s: full(r"[ab]*", s) and "aa" not in s and "bb" not in s,
    ),
    (
        'start ::= except!(and!(/[a-z]+/, not!("a"))) ;',
        lambda s: re.search(r"[a-z]{2}|[b-z]", s) is None,
    ),
    (
        'start ::= not!("a" not!("b")) ;',
        lambda s: not s.startswith("a") or s == "ab",
    ),
    (
        # Commas inside a group concatenate (ISO EBNF); between arguments they separate.
        'start ::= and!(("a", /[ab]*/), not!(/.*b/)) ;',
        lambda s: full(r"a[ab]*", s) and not s.endswith("b"),
    ),
    (
        # Operators in regular rules referenced from other rules.
        'start ::= "<" word ">" ;\nword ::= and!(/\\w+/, not!(kw)) ;\nkw ::= "if" | "in" ;',
        lambda s: (m := re.fullmatch(r"<(.*)>", s, re.S)) is not None
        and full(r"\w+", m.group(1))
        and m.group(1) not in ("if", "in"),
    ),
]


@pytest.mark.parametrize("text,want", NESTED, ids=range(len(NESTED)))
def test_nesting(text, want, byte_vocab):
    import itertools

    c = compiled(text, byte_vocab)
    assert not isinstance(c, Exception), c
    strings = ["<if>", "<iff>", "<in>", "<x_1>", "<>", "<é>"]
    for n in range(5):
        strings += ["".join(t) for t in itertools.product("ab1", repeat=n)]
    for s in strings:
        check(c, byte_vocab, s, want(s), text)


def test_in_a_recursive_grammar(byte_vocab):
    g = corral.Grammar.ebnf(
        r"""
        list ::= "[" ( item ( "," item )* )? "]" ;
        item ::= word | list | "(" free ")" ;
        word ::= and!(/[a-z]+/, not!(keyword)) ;
        keyword ::= "if" | "for" | "in" ;
        free ::= not!(/.*[()].*/) ;           # nullable: () is an item
        """
    )
    c = corral.compile(g, byte_vocab)
    for s in ["[]", "[a]", "[iff,[fo,[]],x]", "[()]", "[(if, [x)]", "[[[()]]]"]:
        check(c, byte_vocab, s, True, "list")
    for s in ["[if]", "[a,for]", "[[in]]", "[A]", "[(()]", "[a,]", "[(x]"]:
        check(c, byte_vocab, s, False, "list")


# (grammar text, line, column, the exact message after "grammar error at line L, column C: ")
BROKEN = [
    (
        'start ::= and!("a", "b") ;',
        1,
        11,
        "and!(...) matches no string (no string matches all of its arguments); "
        "so the start rule `start` matches no string at all",
    ),
    (
        "start ::= not!(/(?s:.)*/) ;",
        1,
        11,
        "not!(...) matches no string (its argument matches every string); "
        "so the start rule `start` matches no string at all",
    ),
    ('start ::= and!("a") ;', 1, 11, "and! needs two or more arguments, separated by commas"),
    ('start ::= not!("a", "b") ;', 1, 11, "not! takes exactly one argument"),
    (
        'start ::= "x" | "(" and!(start, "a") ")" ;',
        1,
        21,
        "and! needs regular arguments (strings, classes, regexes and non-recursive rules)",
    ),
    (
        'start ::= not!(rec) ;\nrec ::= "(" rec ")" | "x" ;',
        1,
        11,
        "not! needs a regular argument (strings, classes, regexes and non-recursive rules)",
    ),
    (
        'start ::= "x" | except!(not!(start)) ;',
        1,
        25,
        "not! needs a regular argument (strings, classes, regexes and non-recursive rules)",
    ),
]


@pytest.mark.parametrize("text,line,column,message", BROKEN)
def test_errors(text, line, column, message):
    with pytest.raises(corral.InvalidGrammarError) as info:
        corral.Grammar.ebnf(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err) == f"grammar error at line {line}, column {column}: {message}"


def test_pathological_products_hit_a_limit():
    # A 2^14-state window times a 17-state counter: past Limits.max_dfa_states, quickly.
    with pytest.raises(corral.LimitExceededError, match="max_dfa_states"):
        corral.Grammar.ebnf(r"start ::= and!(/(a|b)*a(a|b){13}/, not!(/((a|b){17})*/)) ;")
    with pytest.raises(corral.LimitExceededError, match="max_dfa_states"):
        corral.Grammar.ebnf('start ::= not!(not!("a"){1000000}) ;')
