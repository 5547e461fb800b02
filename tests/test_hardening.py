"""Bad and hostile input through the Python API: every failure is a corral error that says
what and where, long native work stops on Ctrl-C and on its time budget, and the objects
stay usable afterwards."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import corral
from corral.generation import _sample


def byte_vocab(extra=()) -> corral.Vocabulary:
    tokens = [bytes([b]) for b in range(256)] + [bytes(t) for t in extra]
    return corral.Vocabulary.from_token_bytes(tokens + [b""], eos_token_ids=[len(tokens)])


# --- ids, rows, sizes ---------------------------------------------------------------------

BAD_IDS = [-1, -(2**70), 2**70, 10**6]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_out_of_range_token_ids_are_matcher_errors(bad):
    vocab = byte_vocab()
    m = corral.compile(corral.Grammar.regex("ab"), vocab).matcher()
    with pytest.raises(corral.MatcherError, match="token id .* out of range"):
        m.advance(bad)
    with pytest.raises(corral.MatcherError, match="token id"):
        m.is_allowed(bad)
    with pytest.raises(corral.VocabularyError, match="token id"):
        vocab.token_bytes(bad)
    with pytest.raises(corral.VocabularyError, match="token id"):
        vocab.decode_bytes([97, bad])
    assert m.advance(ord("a"))  # still usable


def test_non_int_ids_are_type_errors():
    m = corral.compile(corral.Grammar.regex("ab"), byte_vocab()).matcher()
    for bad in ["a", 1.0, True, None]:
        with pytest.raises(TypeError, match="token id must be an int"):
            m.advance(bad)


def test_bad_rows_and_rollbacks():
    vocab = byte_vocab()
    m = corral.compile(corral.Grammar.regex("ab"), vocab).matcher()
    bm = corral.allocate_bitmask(2, vocab.size)
    for row in (-1, 2, 2**70):
        with pytest.raises(corral.MatcherError, match="row"):
            m.fill_bitmask(bm, row)
    with pytest.raises(corral.MatcherError, match="row"):
        corral.fill_bitmasks([m], bm, rows=[-1])
    for n in (-1, 2**70):
        with pytest.raises(corral.MatcherError, match="rollback count"):
            m.rollback(n)
    with pytest.raises(corral.MatcherError, match="only 0"):
        m.rollback(1)
    with pytest.raises(corral.MatcherError, match="same object"):
        corral.fill_bitmasks([m, m], bm)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(eos_token_ids=[-1]), corral.VocabularyError, "EOS token id -1"),
        (dict(eos_token_ids=[5]), corral.VocabularyError, "EOS token id 5"),
        (dict(eos_token_ids=[0], special_token_ids=[-3]), corral.VocabularyError, "special token id -3"),
        (dict(eos_token_ids=[0], size=-5), corral.LimitExceededError, "size"),
        (dict(eos_token_ids=[0], size=2_000_000_000), corral.LimitExceededError, "max_vocab_size"),
        (dict(eos_token_ids=[0], size=2**80), corral.LimitExceededError, "max_vocab_size"),
        (dict(eos_token_ids=[0], size=101, limits=corral.Limits(max_vocab_size=100)), corral.LimitExceededError, "max_vocab_size"),
    ],
)
def test_bad_vocabulary_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        corral.Vocabulary.from_token_bytes([b"a", b"b", b""], **kwargs)


# --- threads ---------------------------------------------------------------------------------


def test_one_matcher_used_from_two_threads_takes_turns():
    vocab = byte_vocab()
    compiled = corral.compile(corral.Grammar.regex("(ab)*"), vocab)
    m = compiled.matcher()
    errors = []

    def work():
        bm = corral.allocate_bitmask(1, vocab.size)
        try:
            for _ in range(2000):
                m.fill_bitmask(bm)
                if m.advance(ord("a")):
                    m.rollback(1)
        except Exception as e:  # pragma: no cover - the failure being tested for
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert m.num_tokens == 0


# --- text that is not Unicode ----------------------------------------------------------------


def test_lone_surrogates_are_grammar_errors():
    with pytest.raises(corral.RegexSyntaxError, match="surrogate") as e:
        corral.Grammar.regex("ab\ud800")
    assert e.value.position == 2
    with pytest.raises(corral.InvalidGrammarError, match="surrogate") as e:
        corral.Grammar.ebnf('s ::= "a" ;\nt ::= "\udc00" ;')
    assert (e.value.line, e.value.column) == (2, 8)


# --- messages ----------------------------------------------------------------------------------


def test_limit_messages_do_not_quote_a_whole_pattern():
    pattern = "(a|b)*a" + "(a|b)" * 300
    with pytest.raises(corral.LimitExceededError) as e:
        corral.compile(corral.Grammar.regex(pattern), byte_vocab(), limits=corral.Limits(max_dfa_states=100))
    assert len(str(e.value)) < 1000


def test_a_bitmask_on_another_device_names_what_exists():
    class FakeDevice:
        type = "cuda"

    class FakeTensor:
        device = FakeDevice()

        def numpy(self):  # pragma: no cover - never reached
            raise AssertionError

    m = corral.compile(corral.Grammar.regex("a"), byte_vocab()).matcher()
    with pytest.raises(corral.MatcherError) as e:
        m.fill_bitmask(FakeTensor())
    assert "fill_bitmask_on_device" not in str(e.value)
    assert "corral.apply_bitmask" in str(e.value)
    assert hasattr(corral, "apply_bitmask") and hasattr(corral, "allocate_bitmask")


# --- limits reach the step that uses them ----------------------------------------------------


def test_limits_given_to_a_grammar_apply_when_it_is_compiled():
    vocab = byte_vocab()
    g = corral.Grammar.regex("a{500}", limits=corral.Limits(max_dfa_states=100))
    with pytest.raises(corral.LimitExceededError) as e:
        corral.compile(g, vocab, cache=False)
    assert e.value.limit == "max_dfa_states"
    # Limits given to compile win over the grammar's.
    assert corral.compile(g, vocab, limits=corral.Limits(), cache=False).num_states > 500

    g = corral.Grammar.ebnf('s ::= s s | "a" ;', limits=corral.Limits(max_earley_items=60))
    m = corral.compile(g, vocab, cache=False).matcher()
    with pytest.raises(corral.LimitExceededError) as e:
        for _ in range(200):
            m.advance(ord("a"))
    assert e.value.limit == "max_earley_items"


def test_an_intersection_honours_max_forced_tokens():
    vocab = byte_vocab()
    g = corral.Grammar.regex("a{50}") & corral.Grammar.regex("a*")
    m = corral.compile(g, vocab, limits=corral.Limits(max_forced_tokens=5)).matcher()
    assert m.forced_tokens() == [ord("a")] * 5
    assert len(corral.compile(g, vocab).matcher().forced_tokens()) == 51  # 50 a's, then EOS


# --- time budget and Ctrl-C --------------------------------------------------------------------


def _big_grammar(n: int = 3000) -> str:
    return "s ::= " + " | ".join(f'"k{i}" s "{i}v"' for i in range(n)) + ' | "x" ;'


def test_the_compile_budget_names_its_limit():
    with pytest.raises(corral.LimitExceededError) as e:
        corral.Grammar.ebnf(_big_grammar(), limits=corral.Limits(max_compile_ms=1))
    assert e.value.limit == "max_compile_ms"
    corral.Grammar.ebnf(_big_grammar())  # fine within the default budget


def test_ctrl_c_stops_a_long_mask_and_leaves_the_matcher_usable(ctrl_c):
    # A 3,000-byte token under an ambiguous grammar, with the work limits raised: seconds
    # of work in one native call.
    vocab = byte_vocab(extra=[b"a" * 3000])
    unbounded = corral.Limits(max_earley_items=10**12, max_chart_bytes=2**40)
    m = corral.compile(corral.Grammar.ebnf('s ::= s s | "a" ;'), vocab, limits=unbounded, cache=False).matcher()
    bm = corral.allocate_bitmask(1, vocab.size)
    timer = ctrl_c(0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            m.fill_bitmask(bm)
    finally:
        timer.cancel()
    assert m.advance(ord("a")) and m.is_accepting()


def test_ctrl_c_stops_a_long_compile(ctrl_c):
    timer = ctrl_c(0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in range(50):  # each build is long; Ctrl-C lands inside one of them
                corral.Grammar.ebnf(_big_grammar(20_000), limits=corral.Limits(max_compile_ms=600_000))
    finally:
        timer.cancel()
    corral.Grammar.ebnf('s ::= "a" ;')  # the module still works


def test_ctrl_c_stops_a_large_determinization_promptly(ctrl_c):
    # `.*x.{13}`'s DFA takes about 0.4 s (`.{12}`'s took 0.17 s on a fast box: a third of
    # it was too close to the Ctrl-C's own 30 ms and the 20 ms poll; `.{14}` passes
    # `max_dfa_states`); regex-automata builds it on a helper thread while the call keeps
    # listening for Ctrl-C.
    vocab = byte_vocab()
    # The whole build, for scale: the stopped one is compared with it, not with a fixed
    # time, since the machine may be busy.
    started = time.perf_counter()
    corral.compile(corral.Grammar.regex(r".*x.{13}"), vocab, cache=False)
    whole = time.perf_counter() - started
    timer = ctrl_c(0.03)
    started = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            corral.compile(corral.Grammar.regex(r".*x.{13}"), vocab, cache=False)
    finally:
        timer.cancel()
    assert time.perf_counter() - started < whole / 3
    assert corral.compile(corral.Grammar.regex(r"x.{2}"), vocab, cache=False).matches(b"xab")


# --- sampling ----------------------------------------------------------------------------------


def test_tiny_temperatures_are_greedy():
    rng = np.random.default_rng(0)
    logits = np.array([-5.0, -1.0, -3.0, -np.inf], dtype=np.float32)
    for t in (1e-320, 1e-300, 1e-30, 5e-324):
        assert _sample(logits, rng, t, None, None) == 1
    # With the largest logit negative, a naive division overflowed to -inf and dropped it.
    assert _sample(np.array([-1e30, -2e30], dtype=np.float64), rng, 1e-300, None, None) == 0


def test_an_infinite_logit_wins_and_nan_is_never_chosen():
    rng = np.random.default_rng(0)
    logits = np.array([3.0, np.inf, np.nan, -np.inf], dtype=np.float32)
    for t in (0.0, 0.7, 1.0, 50.0):
        for _ in range(20):
            assert _sample(logits, rng, t, None, None) == 1
    nan_only = np.array([np.nan, -np.inf, 1.0], dtype=np.float32)
    assert {_sample(nan_only, rng, 1.0, None, None) for _ in range(20)} == {2}
    with pytest.raises(corral.GenerationError, match="no allowed token"):
        _sample(np.array([np.nan, -np.inf]), rng, 1.0, None, None)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(temperature=float("nan")), "temperature"),
        (dict(temperature=float("inf")), "temperature"),
        (dict(temperature=-1), "temperature"),
        (dict(temperature="hot"), "temperature"),
        (dict(seed=-1), "seed"),
        (dict(top_k=0), "top_k"),
        (dict(top_p=float("nan")), "top_p"),
        (dict(max_tokens=-1), "max_tokens"),
        (dict(max_tokens=2.5), "max_tokens"),
    ],
)
def test_meaningless_sampling_settings_are_refused(kwargs, match):
    from corral.models import BuiltinModel

    with pytest.raises(corral.GenerationError, match=match):
        corral.generate(BuiltinModel(), "x", corral.Grammar.regex("a"), **kwargs)


@pytest.mark.parametrize(
    "schema, pointer",
    [({"const": "\ud800"}, "/const"), ({"enum": ["ok", "x\udc00"]}, "/enum/1"), ({"properties": {"a": {"const": "\udfff"}}}, "/properties/a/const")],
)
def test_lone_surrogates_in_a_schema_are_invalid_schemas(schema, pointer):
    with pytest.raises(corral.InvalidSchemaError, match="surrogate") as e:
        corral.Grammar.json_schema(schema)
    assert e.value.pointer == pointer


def test_a_batch_fill_with_a_very_long_token():
    # Helper threads have small stacks: the walk below terminal ends must not recurse per
    # byte of a token (7,000 bytes once crashed the process).
    vocab = byte_vocab(extra=[b"a" * 7000])
    compiled = corral.compile(corral.Grammar.ebnf('s ::= "a" s | "a" ;'), vocab)
    matchers = [compiled.matcher() for _ in range(4)]
    bm = corral.allocate_bitmask(4, vocab.size)
    corral.fill_bitmasks(matchers, bm)
    long_id = 256
    assert all((int(row[long_id // 32]) >> (long_id % 32)) & 1 for row in bm)
    assert all((int(row[ord("a") // 32]) >> (ord("a") % 32)) & 1 for row in bm)
    assert not any((int(row[ord("b") // 32]) >> (ord("b") % 32)) & 1 for row in bm)


def test_ctrl_c_stops_a_batch_fill(ctrl_c):
    vocab = byte_vocab(extra=[b"a" * 3000])
    unbounded = corral.Limits(max_earley_items=10**12, max_chart_bytes=2**40)
    compiled = corral.compile(corral.Grammar.ebnf('s ::= s s | "a" ;'), vocab, limits=unbounded, cache=False)
    matchers = [compiled.matcher() for _ in range(3)]
    bm = corral.allocate_bitmask(3, vocab.size)
    timer = ctrl_c(0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            corral.fill_bitmasks(matchers, bm)
    finally:
        timer.cancel()
    assert all(m.advance(ord("a")) for m in matchers)


def test_numpy_and_torch_integers_are_ids():
    import torch

    vocab = byte_vocab()
    m = corral.compile(corral.Grammar.regex("ab"), vocab).matcher()
    bm = corral.allocate_bitmask(2, vocab.size)
    m.fill_bitmask(bm, np.int64(1))
    assert m.is_allowed(np.int32(ord("a")))
    assert m.advance(np.int64(ord("a")))
    assert m.advance(torch.tensor(ord("b")))
    m.rollback(np.uint8(2))
    assert vocab.token_bytes(np.int64(97)) == b"a"
    with pytest.raises(corral.MatcherError, match="out of range"):
        m.advance(np.int64(-1))
    with pytest.raises(TypeError):
        m.advance(np.float64(97.0))


@pytest.mark.parametrize(
    "keyword, value, draft6_rejects",
    [("const", 3, b'"x"'), ("contains", {"type": "string"}, b"[1]"), ("propertyNames", {"maxLength": 1}, b'{"ab":1}')],
)
def test_keywords_newer_than_the_schemas_draft_are_unknown(keyword, value, draft6_rejects):
    vocab = byte_vocab()
    old = corral.compile(
        corral.Grammar.json_schema({"$schema": "http://json-schema.org/draft-04/schema#", keyword: value}), vocab
    )
    new = corral.compile(
        corral.Grammar.json_schema({"$schema": "http://json-schema.org/draft-06/schema#", keyword: value}), vocab
    )
    assert old.matches(draft6_rejects) and not new.matches(draft6_rejects)
