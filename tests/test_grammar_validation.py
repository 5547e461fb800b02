"""Grammar validation: what each front-end refuses (checked against lark where it is the
reference), and what is only a warning (pieces and rules that can never match are dropped,
with masks equal to those of the grammar written without them)."""

from __future__ import annotations

import itertools
import random
import warnings

import lark
import numpy as np
import pytest

import corral


def build(syntax: str, text: str) -> tuple[corral.Grammar, list[str]]:
    """The grammar and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grammar = getattr(corral.Grammar, syntax)(text)
    return grammar, [str(w.message) for w in caught if issubclass(w.category, corral.GrammarWarning)]


def refusal(syntax: str, text: str) -> corral.InvalidGrammarError:
    with pytest.raises(corral.InvalidGrammarError) as info:
        getattr(corral.Grammar, syntax)(text)
    return info.value


def lark_accepts_grammar(text: str) -> bool:
    try:
        lark.Lark(text, parser="earley", lexer="dynamic_complete")
    except lark.exceptions.LarkError:
        return False
    return True


def lark_parses(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


def strings(alphabet: str, max_len: int):
    for n in range(max_len + 1):
        for t in itertools.product(alphabet, repeat=n):
            yield "".join(t)


# --- refusals -------------------------------------------------------------------------

GBNF_REFUSED = [
    # (text, line, column, start of the message)
    ('root ::= "\\@"', 1, 11, "unknown escape `\\@` in a GBNF string"),
    ('root ::= "a\\d"', 1, 12, "unknown escape `\\d` in a GBNF string"),
    ('root ::= "\\0"', 1, 11, "unknown escape `\\0` in a GBNF string"),
    ("root ::= [a\\d]", 1, 12, "unknown escape `\\d` in a GBNF class"),
    ("root ::= x\nx ::= [\\w-]", 2, 8, "unknown escape `\\w` in a GBNF class"),
    ('root ::= "a"\n  | "b"', 2, 3, "unexpected `|` in rule `root`; a GBNF rule ends at the end of its line"),
    ('root ::= "a" ;', 1, 14, "unexpected `;`"),
    ("root ::= 'a'", 1, 10, "GBNF strings are written in double quotes"),
    ('root ::= my_rule\nmy_rule ::= "a"', 1, 12, "`_` cannot be part of a GBNF rule name"),
    ('root ::= "a" | b\nc ::= "c" d', 1, 16, "undefined rule `b`"),
    ('root ::= "a" | c\nc ::= "c" | d', 2, 13, "undefined rule `d`"),
]


@pytest.mark.parametrize("text,line,column,message", GBNF_REFUSED)
def test_gbnf_refuses_what_llama_cpp_refuses(text, line, column, message):
    err = refusal("gbnf", text)
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err).startswith(f"grammar error at line {line}, column {column}: {message}"), str(err)


@pytest.fixture(scope="module")
def llama_cpp_parses(tmp_path_factory):
    """Whether llama.cpp's own GBNF parser accepts a grammar (it needs a vocabulary: the
    built-in model's, converted to GGUF as tests/test_llama_cpp.py does)."""
    import importlib.util
    from pathlib import Path

    import llama_cpp

    from corral.models import builtin_model_path

    tool = Path(__file__).resolve().parents[1] / "tools" / "convert_builtin_to_gguf.py"
    spec = importlib.util.spec_from_file_location("convert_builtin_to_gguf", tool)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.convert(builtin_model_path(), tmp_path_factory.mktemp("gguf") / "builtin.gguf")
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=64, n_threads=1, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)

    def parses(text: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, text.encode(), b"root")
        if not sampler:
            return False
        llama_cpp.llama_sampler_free(sampler)
        return True

    return parses


GBNF_ACCEPTED = [
    'root ::= "\\x41\\u00e9\\t\\r\\n\\\\\\"\\[\\]\\-" [\\x30-\\x32\\]]',
    'root ::= item "."\nitem ::= "a"\nitem ::= "b"\n',
    'root ::= "x" | [z-a]',
    'root ::= "a\nb"',
    'root ::= "a" |\n  "b" (\n "c"\n | "d"\n)\nother ::=\n "x"',
    "root ::= [a-] [-a] [^\\n\\-] [a^.*]",
]


@pytest.mark.parametrize("text", [case[0] for case in GBNF_REFUSED])
def test_gbnf_refusals_agree_with_llama_cpp(text, llama_cpp_parses):
    assert not llama_cpp_parses(text)
    refusal("gbnf", text)


@pytest.mark.parametrize("text", GBNF_ACCEPTED)
def test_gbnf_acceptances_agree_with_llama_cpp(text, llama_cpp_parses):
    assert llama_cpp_parses(text)
    build("gbnf", text)


def test_gbnf_escapes_accepted_are_llama_cpps():
    grammar, _ = build("gbnf", 'root ::= "\\x41\\u00e9\\t\\r\\n\\\\\\"\\[\\]\\-" [\\x30-\\x32\\]]')
    compiled = corral.compile(grammar, corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256]))
    head = 'Aé\t\r\n\\"[]-'
    for last, ok in [("0", True), ("2", True), ("]", True), ("3", False), ("\\", False)]:
        assert compiled.matches((head + last).encode()) is ok, last


def test_gbnf_rule_defined_again_replaces_it(byte_vocab):
    grammar, caught = build("gbnf", 'root ::= item "."\nitem ::= "a"\nitem ::= "b"\n')
    compiled = corral.compile(grammar, byte_vocab)
    assert compiled.matches(b"b.") and not compiled.matches(b"a.")
    assert any("rule `item` at line 2, column 1 is defined again later" in w for w in caught), caught


def test_ebnf_undefined_rule_in_one_alternative_is_refused():
    for text, pos in [('s ::= "a" | b ;', (1, 13)), ('s ::= "a" | t ;\nt ::= "t" | u ;', (2, 13)), ('s ::= "a" ;\nt ::= u ;', (2, 7))]:
        err = refusal("ebnf", text)
        assert (err.line, err.column) == pos, str(err)
        assert "undefined rule" in str(err)


def test_ebnf_unknown_escapes_are_refused():
    for esc in ["@", "d", "/", "["]:
        err = refusal("ebnf", f's ::= "x\\{esc}" ;')
        assert (err.line, err.column) == (1, 9), str(err)
        assert f"unknown escape `\\{esc}` in an EBNF string" in str(err)


LARK_REFUSED = [
    # Each is refused by lark too (checked below).
    ('start: a\na: "x"\na: "y"\n', 3, 1, "rule `a` is defined more than once (first at 2:1)"),
    ('start: A\nA: "x"\nA: "y"\n', 3, 1, "terminal `A` is defined more than once (first at 2:1)"),
    ('start: FOO\nFOO: "a" | BAR\nBAR: "b" FOO\n', 2, 1, "terminal `FOO` is recursive (FOO -> BAR -> FOO)"),
    ('start: A\nA: "a" A?\n', 2, 1, "terminal `A` is recursive (A -> A)"),
    ('start: X\nX: "x" Y\nY: "y" | "(" Z ")"\nZ: Y\n', 3, 1, "terminal `Y` is recursive (Y -> Z -> Y)"),
    ('start: a\n%override a: "y"\n', 2, 11, "cannot override rule `a`: it is not defined before"),
    ('start: A\n%extend A: "y"\n', 2, 9, "cannot extend terminal `A`: it is not defined before"),
    ('start: "a"\n%frobnicate x\n', 2, 1, "unknown directive `%frobnicate`"),
    ('start: "a" | b\nb: c\n', 2, 4, "undefined rule `c`"),
    ('start: "a" | b\nb: "b"\nc: D\n', 3, 4, "undefined rule `D`"),
    ('start: "a" | b\nb: "b"\nC: d\nd: "d"\n', 3, 1, "terminal `C` uses the rule `d`"),
    ('start: "x" | ""\n', 1, 14, "empty string"),
    ('start: A "x"\nA: "a"?\n', 2, 1, "terminal `A` matches the empty string"),
    ('start: b\nb: "x" /a*/\n', 2, 8, "this token matches the empty string"),
    ('start: "x"\n%ignore /\\s*/\n', 2, 9, "this token matches the empty string"),
    ('start: "a"\nb: "b"\n%ignore b\n', 3, 9, "%ignore uses the rule `b`"),
    ('start: CNAME\n%import common (CNAME, WS)\n%import common.CNAME -> NAME\n', 1, 8, "undefined rule `CNAME`"),
    ('start: INT\n%import common.INT\nINT: "x"\n', 3, 1, "terminal `INT` is defined more than once (first at 2:1)"),
    ('start: Foo\n', 1, 8, "`Foo` is neither a rule name"),
]


@pytest.mark.parametrize("text,line,column,message", LARK_REFUSED)
def test_lark_refuses_what_lark_refuses(text, line, column, message):
    assert not lark_accepts_grammar(text), "lark accepts it: not a refusal to copy"
    err = refusal("lark", text)
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err).startswith(f"grammar error at line {line}, column {column}: {message}"), str(err)


LARK_ACCEPTED = [
    # %override and %extend, as lark reads them.
    ('start: a B\na: "x"\n%override a: "y" | "z"\nB: "1"\n%extend B: "2"\n', "xyz12", 3),
    # What an import uses does not meet the grammar's own names.
    ('start: INT DIGIT\nDIGIT: "x"\n%import common.INT\n', "0129x", 4),
    # String escapes: a backslash before another character stays.
    ('start: "\\\\d" | "\\@" | "\\x41" | "\\\\"\n', "\\d@Ax", 2),
]


@pytest.mark.parametrize("text,alphabet,max_len", LARK_ACCEPTED)
def test_lark_languages_agree_with_lark(text, alphabet, max_len, byte_vocab):
    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    compiled = corral.compile(corral.Grammar.lark(text), byte_vocab)
    seen = 0
    for s in strings(alphabet, max_len):
        want = lark_parses(parser, s)
        seen += want
        assert compiled.matches(s.encode()) is want, s
    assert seen > 0


def _random_lark_grammar(rng: random.Random) -> str:
    """A small Lark grammar over rules `a b c` and terminals `A B C` that may define a
    name twice, use an undefined name or a rule inside a terminal, make terminals
    recursive, or override and extend definitions (each now and then)."""
    rules = ["a", "b", "c"]
    terms = ["A", "B", "C"]

    def expr(names: list, depth: int = 0) -> str:
        parts = []
        for _ in range(rng.randint(1, 3)):
            k = rng.random()
            if k < 0.45 or depth > 1:
                parts.append(f'"{rng.choice("xyz")}"')
            elif k < 0.8:
                parts.append(rng.choice(names))
            else:
                parts.append(f"({expr(names, depth + 1)}){rng.choice(['', '?', '*', '+'])}")
        alts = [" ".join(parts)]
        if rng.random() < 0.5:
            alts.append(f'"{rng.choice("xyz")}"')
        return " | ".join(alts)

    def uses(name: str) -> list:
        if name.isupper():
            # Terminals may use the terminals defined after them (no cycle), sometimes any.
            later = terms[terms.index(name) + 1 :] if name in terms else terms
            pool = terms if rng.random() < 0.15 else later
            return (pool or ['"w"']) + (["a"] if rng.random() < 0.05 else [])
        return rules + terms + (["D"] if rng.random() < 0.05 else [])

    lines = ['start: "q" | ' + expr(rules + terms)]
    for name in rng.sample(rules + terms, len(rules + terms)):
        lines.append(f"{name}: {expr(uses(name))}")
    for _ in range(rng.randint(0, 2)):
        name = rng.choice(rules + terms + ["d", "E"])
        k = rng.random()
        prefix = "%override " if k < 0.4 else "%extend " if k < 0.8 else ""
        lines.append(f"{prefix}{name}: {expr(uses(name))}")
    return "\n".join(lines) + "\n"


def test_random_lark_grammars_refused_exactly_when_lark_refuses(byte_vocab):
    rng = random.Random(7)
    outcomes = {"both accept": 0, "both refuse": 0}
    for case in range(300):
        text = _random_lark_grammar(rng)
        lark_ok = lark_accepts_grammar(text)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                grammar = corral.Grammar.lark(text)
        except corral.InvalidGrammarError as e:
            assert not lark_ok, f"corral refuses what lark accepts ({e}):\n{text}"
            outcomes["both refuse"] += 1
            continue
        assert lark_ok, f"corral accepts what lark refuses:\n{text}"
        outcomes["both accept"] += 1
        if case % 10 == 0:
            parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")
            compiled = corral.compile(grammar, byte_vocab)
            for s in strings("qxyz", 3):
                assert compiled.matches(s.encode()) is lark_parses(parser, s), f"{s!r}\n{text}"
    assert min(outcomes.values()) >= 30, outcomes


# --- what is dropped, with a warning --------------------------------------------------

DROPPED = [
    # (grammar, the same language written without what is dropped, words in the warnings)
    ('r0 ::= "c" | (r1)+ ;\nr1 ::= (r1)+ ;', 'r0 ::= "c" ;', ["rule `r1` at line 2"]),
    ('s ::= "c" | and!(/a+/, /b+/) ;', 's ::= "c" ;', ["and!(...) matches no string", "line 1, column 13"]),
    ('s ::= "(" s ")" | "c" | "a" [^\\s\\S] s ;', 's ::= "(" s ")" | "c" ;', ["`[^\\s\\S]` matches no string"]),
    ('s ::= "a" and!("x", "y")* "b" | "[" s "]" ;', 's ::= "a" "b" | "[" s "]" ;', ["and!(...) matches no string"]),
    ('s ::= "<" not!(and!("a", "b")) ">" ;', 's ::= "<" /(?s:.)*/ ">" ;', ["and!(...) matches no string"]),
    ('s ::= x | "(" s ")" ;\nx ::= "x" | y ;\ny ::= "y" y ;', 's ::= x | "(" s ")" ;\nx ::= "x" ;', ["rule `y` at line 3"]),
]


def _small_vocab() -> corral.Vocabulary:
    alphabet = [b"a", b"b", b"c", b"x", b"y", b"(", b")", b"[", b"]", b"<", b">"]
    tokens = alphabet + [a + b for a in alphabet for b in alphabet]
    return corral.Vocabulary.from_token_bytes(tokens + [b"</s>"], eos_token_ids=[len(tokens)])


@pytest.mark.parametrize("text,plain,words", DROPPED)
def test_dropped_pieces_keep_masks_exact(text, plain, words):
    grammar, caught = build("ebnf", text)
    for w in words:
        assert any(w in m for m in caught), (w, caught)
    vocab = _small_vocab()
    got = corral.compile(grammar, vocab)
    want = corral.compile(corral.Grammar.ebnf(plain), vocab)
    rng = random.Random(0)
    a = np.zeros((1, vocab.mask_width), dtype=np.int32)
    b = np.zeros((1, vocab.mask_width), dtype=np.int32)
    ref = np.zeros((1, vocab.mask_width), dtype=np.int32)
    steps = 0
    for _ in range(20):
        m, n = got.matcher(), want.matcher()
        for _ in range(8):
            m.fill_bitmask(a, 0)
            n.fill_bitmask(b, 0)
            m._fill_bitmask_reference(ref, 0)
            assert np.array_equal(a, b) and np.array_equal(a, ref), f"step {steps}"
            steps += 1
            bits = np.flatnonzero(np.unpackbits(a[0].view(np.uint8), bitorder="little")[: vocab.size])
            if not len(bits) or m.is_finished():
                break
            t = int(rng.choice(bits))
            assert m.advance(t) and n.advance(t)
    assert steps >= 40


def test_operator_of_nothing_matches_everything(byte_vocab):
    # not!(...) of an empty and!(...) excludes nothing: the grammar matches every string.
    grammar, caught = build("ebnf", 'start ::= "x" | not!(and!("ab", /a/)) ;')
    assert any("and!(...) matches no string" in m and "line 1, column 22" in m for m in caught), caught
    compiled = corral.compile(grammar, byte_vocab)
    for s in ["", "x", "ab", "a", "é\n"]:
        assert compiled.matches(s.encode()), s
    assert not compiled.matches(b"\xff")


def test_only_a_grammar_that_matches_nothing_is_refused():
    cases = [
        ('s ::= "a" s ;', 1, 1, "rule `s` can never produce a finite string"),
        ('s ::= and!(/a+/, /b+/) ;', 1, 7, "and!(...) matches no string"),
        ('s ::= "x" t | t "y" ;\nt ::= [^\\s\\S] ;', 2, 7, "`[^\\s\\S]` matches no string"),
    ]
    for text, line, column, message in cases:
        err = refusal("ebnf", text)
        assert (err.line, err.column) == (line, column), str(err)
        assert message in str(err) and "matches no string at all" in str(err), str(err)


def test_json_schema_pattern_properties_matching_every_key(byte_vocab):
    import json

    import jsonschema

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "patternProperties": {".*": {"type": "boolean"}}}
    compiled = corral.compile(corral.Grammar.json_schema(schema), byte_vocab)
    # `a` must be an integer and a boolean: no object has it. (Compact JSON: the default.)
    for doc in ['{"a":1}', '{"a":true}', '{"b":true}', '{"b":1}', "{}", '{"a":1,"b":false}', '{"b":false,"c":true}']:
        try:
            jsonschema.validate(json.loads(doc), schema)
            valid = True
        except jsonschema.ValidationError:
            valid = False
        assert compiled.matches(doc.encode()) is valid, doc
