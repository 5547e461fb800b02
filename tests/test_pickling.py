"""Pickling: grammars, vocabularies, limits and compiled grammars survive a pickle round
trip (and a trip to a worker process) as equal objects with equal masks."""

from __future__ import annotations

import multiprocessing
import pickle
import re
import warnings

import numpy as np
import pytest

import corral
from corral import _core

PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
    },
    "required": ["name"],
}


def _vocab() -> corral.Vocabulary:
    """Every printable ASCII byte and some longer pieces; an EOS and a special token that
    have text; ids past the tokens (padding) up to `size`."""
    tokens: list[bytes | None] = [bytes([b]) for b in range(32, 127)]
    tokens += [b'{"', b'":', b'",', b"name", b"age", b"tags", b"12", b"ab", b"talk", b"Talk", b" t", None, b""]
    tokens += [b"</s>", b"<pad>"]
    eos, special = len(tokens) - 2, len(tokens) - 1
    return corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[eos], special_token_ids=[special], size=len(tokens) + 21)


VOCAB = _vocab()


def _grammars() -> dict[str, corral.Grammar]:
    # Some of these warn (an unused rule, a dropped schema keyword): their warnings must
    # survive the round trip too.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "regex": corral.Grammar.regex(r"\d{1,3}(\.\w+)?"),
            "regex_limits": corral.Grammar.regex(r"[a-z]+", limits=corral.Limits(max_dfa_states=1000)),
            "choice": corral.Grammar.choice(["talk", "ab", "12"]),
            "ebnf": corral.Grammar.ebnf('top ::= "a" top "b" | "12" ;\nstart ::= "x" ;', start="top"),
            "gbnf": corral.Grammar.gbnf('root ::= item ("," item)*\nitem ::= [0-9]+ | "ab"'),
            "lark": corral.Grammar.lark('start: WORD ("," WORD)*\n%import common.WORD'),
            "json_schema": corral.Grammar.json_schema(
                SCHEMA, whitespace="flexible", max_whitespace=2, property_order="any"
            ),
            "json_schema_lenient": corral.Grammar.json_schema(
                {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, strict=False
            ),
            "ban": corral.Grammar.ban(["talk", "ab"], ignore_case=True, whole_words=True),
            "ban_rollback": corral.Grammar.ban(["talk"], mode="rollback"),
            "and": corral.Grammar.regex(r"[a-z ]{1,12}") & corral.Grammar.ban(["talk"]),
        }


GRAMMARS = _grammars()


def _walk(compiled, steps: int = 12) -> list[bytes]:
    """The mask rows along a fixed walk: at each step the smallest allowed id that is not
    EOS is taken (a walk that depends only on the masks)."""
    matcher = compiled.matcher()
    bitmask = corral.allocate_bitmask(1, VOCAB.size)
    eos = set(VOCAB.eos_token_ids)
    rows = []
    for _ in range(steps):
        if matcher.is_finished():
            break
        matcher.fill_bitmask(bitmask, 0)
        rows.append(bitmask[0].tobytes())
        bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[: VOCAB.size]
        allowed = [int(t) for t in np.flatnonzero(bits) if int(t) not in eos]
        if not allowed:
            break
        assert matcher.advance(allowed[0])
    return rows


def _walk_in_worker(compiled) -> list[bytes]:
    """Runs in a worker process: the walk's masks from the compiled grammar it was sent."""
    parts = compiled.parts if isinstance(compiled, corral.CompiledIntersection) else [compiled]
    assert all(type(p) is corral.CompiledGrammar for p in parts)
    return _walk(compiled)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_limits_round_trip(protocol):
    for limits in (corral.Limits(), corral.Limits(max_dfa_states=123, max_compile_ms=77, max_vocab_size=10**7)):
        loaded = pickle.loads(pickle.dumps(limits, protocol=protocol))
        assert type(loaded) is corral.Limits
        assert loaded == limits and hash(loaded) == hash(limits)
        assert repr(loaded) == repr(limits)
    assert pickle.loads(pickle.dumps(corral.Limits(max_dfa_states=5))) != corral.Limits()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_vocabulary_round_trip(protocol):
    loaded = pickle.loads(pickle.dumps(VOCAB, protocol=protocol))
    assert type(loaded) is corral.Vocabulary
    assert loaded.fingerprint == VOCAB.fingerprint
    assert (loaded.size, loaded.n_tokens, loaded.mask_width) == (VOCAB.size, VOCAB.n_tokens, VOCAB.mask_width)
    assert loaded.eos_token_ids == VOCAB.eos_token_ids and loaded.special_token_ids == VOCAB.special_token_ids
    for i in range(VOCAB.size):
        assert loaded.token_bytes(i) == VOCAB.token_bytes(i)
        assert loaded.token_kind(i) == VOCAB.token_kind(i)


def test_vocabulary_keeps_special_token_text():
    # The fingerprint covers a special token's text, though token_bytes() hides it: two
    # vocabularies that differ only there must stay different after a round trip.
    a = corral.Vocabulary.from_token_bytes([b"a", b"<s>", b"</s>"], eos_token_ids=[2], special_token_ids=[1])
    b = corral.Vocabulary.from_token_bytes([b"a", b"<S>", b"</s>"], eos_token_ids=[2], special_token_ids=[1])
    assert a.fingerprint != b.fingerprint
    assert pickle.loads(pickle.dumps(a)).fingerprint == a.fingerprint
    assert pickle.loads(pickle.dumps(b)).fingerprint == b.fingerprint


def test_vocabulary_larger_than_the_default_limit():
    # A size accepted under raised limits loads again, without those limits being pickled.
    size = corral.Limits().max_vocab_size + 1
    big = corral.Vocabulary.from_token_bytes(
        [b"a", b""], eos_token_ids=[1], size=size, limits=corral.Limits(max_vocab_size=size)
    )
    loaded = pickle.loads(pickle.dumps(big))
    assert loaded.size == size and loaded.fingerprint == big.fingerprint


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_grammar_round_trip(name):
    grammar = GRAMMARS[name]
    for protocol in PROTOCOLS:
        loaded = pickle.loads(pickle.dumps(grammar, protocol=protocol))
        assert type(loaded) is corral.Grammar
        assert loaded == grammar and hash(loaded) == hash(grammar)
        assert (loaded.kind, loaded.source, loaded.start, repr(loaded)) == (
            grammar.kind, grammar.source, grammar.start, repr(grammar)
        )
        assert loaded.warnings == grammar.warnings
        assert loaded._limits == grammar._limits
        assert [p.kind for p in loaded.parts] == [p.kind for p in grammar.parts]
        if grammar.ban_spec is not None:
            assert loaded.ban_spec is not None
            for field in ("phrases", "ignore_case", "whole_words", "mode"):
                assert getattr(loaded.ban_spec, field) == getattr(grammar.ban_spec, field)
    if grammar.ban_spec is not None and grammar.ban_spec.mode == "rollback":
        return  # no mask to compare
    # The loaded grammar is built again, not shared: its masks come from its own build.
    assert _walk(corral.compile(loaded, VOCAB, cache=False)) == _walk(corral.compile(grammar, VOCAB, cache=False))


def test_grammar_rebuilt_keeps_its_perl_classes():
    # A pattern with \w is built with this interpreter's classes; the pickle carries them,
    # so the loaded grammar means the same whatever Unicode tables the loader has.
    grammar = corral.Grammar.regex(r"\w+")
    constructor, (kind, args) = grammar._inner.__reduce__()
    assert constructor is _core._rebuild_grammar and kind == "regex"
    assert args[2] is not None and any(a <= "é" <= b for a, b in args[2][1])
    loaded = pickle.loads(pickle.dumps(grammar))
    compiled = corral.compile(loaded, VOCAB, cache=False)
    for text in ("abc", "a_1", "é", "a-b"):
        assert compiled.matches(text.encode()) == bool(re.fullmatch(r"\w+", text))


@pytest.mark.parametrize("name", sorted(n for n in GRAMMARS if n != "ban_rollback"))
def test_compiled_round_trip(name):
    corral.clear_cache()
    compiled = corral.compile(GRAMMARS[name], VOCAB, eager=name == "regex")
    expected = _walk(compiled)
    corral.clear_cache()  # the load compiles again rather than finding the original
    loaded = pickle.loads(pickle.dumps(compiled))
    assert type(loaded) is type(compiled) and loaded is not compiled
    assert _walk(loaded) == expected
    assert loaded.vocab_size == compiled.vocab_size


def test_compiled_round_trip_keeps_limits_and_eager():
    limits = corral.Limits(max_forced_tokens=3)
    grammar = corral.Grammar.regex("xyzxyzxyz")  # one tokenization: every token forced
    assert corral.compile(grammar, VOCAB, cache=False).cached_states == 0  # lazy: none yet
    compiled = corral.compile(grammar, VOCAB, limits=limits, eager=True)
    assert compiled.cached_states > 0
    corral.clear_cache()
    loaded = pickle.loads(pickle.dumps(compiled))
    assert loaded.cached_states == compiled.cached_states  # eager again: built on load
    # max_forced_tokens=3 holds in the loaded one: the forced run is cut at 3 tokens.
    assert len(compiled.matcher().forced_tokens()) == len(loaded.matcher().forced_tokens()) == 3


def test_compiled_from_the_native_compile_refuses_to_pickle():
    compiled = _core.compile(GRAMMARS["regex"]._inner, VOCAB._inner)
    with pytest.raises(TypeError, match="corral.compile"):
        pickle.dumps(compiled)


def test_matchers_do_not_pickle():
    # A matcher is a position in a live parse: sending one would silently restart it.
    with pytest.raises(TypeError):
        pickle.dumps(corral.compile(GRAMMARS["regex"], VOCAB).matcher())


def test_compiled_grammars_in_spawned_workers():
    names = ["regex", "ebnf", "json_schema", "ban", "and"]
    compiled = [corral.compile(GRAMMARS[n], VOCAB) for n in names]
    expected = [_walk(c) for c in compiled]
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        # Twice each: a worker that loads the same grammar again reuses its vocabulary.
        results = pool.map(_walk_in_worker, compiled + compiled)
    for i, rows in enumerate(results):
        assert rows == expected[i % len(names)], names[i % len(names)]


def test_errors_keep_their_details():
    # An error raised in a worker comes back to the parent pickled: what and where survive.
    def raised(build) -> corral.CorralError:
        with pytest.raises(corral.CorralError) as info:
            build()
        return info.value

    errors = [
        raised(lambda: corral.Grammar.regex("a(b")),
        raised(lambda: corral.Grammar.regex(r"(a)\1")),
        raised(lambda: corral.Grammar.ebnf("start ::= missing ;")),
        raised(lambda: corral.Grammar.json_schema({"type": "nope"})),
        raised(lambda: corral.Grammar.regex("a" * 50, limits=corral.Limits(max_pattern_bytes=3))),
        corral.RollbackLimitError("too many rollbacks", rollbacks=4, phrase="talk"),
    ]
    for error in errors:
        loaded = pickle.loads(pickle.dumps(error))
        assert type(loaded) is type(error) and str(loaded) == str(error)
        assert vars(loaded) == vars(error) and vars(error)
