"""corral.generate: sampling, stopping, forced tokens, streaming, transformers models,
banned phrases (mask and rollback modes) and combined constraints."""

from __future__ import annotations

import json
import random
import re

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import corral
from corral.generation import _sample
from corral.masking import only_token as _only_token
from corral.models import BuiltinModel


@pytest.fixture(scope="module")
def model():
    return BuiltinModel()


class CountingModel:
    """Wraps a model, counting logits calls and the positions its network reads."""

    def __init__(self, inner):
        self.inner = inner
        self.vocab = inner.vocab
        self.encode = inner.encode
        self.calls = 0
        self.positions = 0
        net_forward = inner.net.next_logits

        def counted(ids, cache):
            self.positions += len(ids)
            return net_forward(ids, cache)

        inner.net.next_logits = counted

    def logits(self, ids):
        self.calls += 1
        return self.inner.logits(ids)


# --- sampling ---------------------------------------------------------------------------


def test_sampling_respects_mask_top_k_and_top_p():
    rng = np.random.default_rng(0)
    logits = np.array([1.0, 5.0, -np.inf, 4.0, 3.0, 0.5, -np.inf], dtype=np.float32)
    assert _sample(logits, rng, 0.0, None, None) == 1
    assert _sample(logits, rng, 1.0, 1, None) == 1
    assert _sample(logits, rng, 1.0, None, 1e-6) == 1
    free = {_sample(logits, rng, 1.0, None, None) for _ in range(2000)}
    assert free == {0, 1, 3, 4, 5}  # never a masked id, every allowed one eventually
    assert {_sample(logits, rng, 1.0, 2, None) for _ in range(500)} == {1, 3}
    # p(1) ≈ 0.66, p(3) ≈ 0.24, p(4) ≈ 0.09: top_p 0.8 keeps exactly {1, 3}.
    assert {_sample(logits, rng, 1.0, None, 0.8) for _ in range(500)} == {1, 3}
    assert {_sample(logits, rng, 1.0, 3, 0.99) for _ in range(1000)} == {1, 3, 4}


def test_only_token_reads_a_single_bit():
    row = np.zeros(4, dtype=np.int32)
    assert _only_token(row) is None
    row[2] = 1 << 5
    assert _only_token(row) == 69
    row[2] = np.int32(-(2**31))  # bit 31
    assert _only_token(row) == 95
    row[1] = 1
    assert _only_token(row) is None
    row[:] = 0
    row[0] = 3
    assert _only_token(row) is None


def test_bad_sampling_arguments_are_generation_errors(model):
    for kwargs in (dict(top_k=0), dict(top_p=0.0), dict(top_p=1.5), dict(temperature=-1), dict(max_tokens=-1)):
        with pytest.raises(corral.GenerationError):
            corral.generate(model, "x", None, **kwargs)
    with pytest.raises(TypeError):
        corral.generate(object(), "x")
    with pytest.raises(corral.GenerationError, match="out of range"):
        corral.generate(model, [5, 99999], None)


# --- the loop -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [r"(19|20)[0-9]{2}", r"[A-Z][a-z]+, [a-z]+( [a-z]+){1,4}[.!]", r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)"],
)
def test_guided_text_always_fits(model, pattern):
    grammar = corral.Grammar.regex(pattern)
    for seed in range(5):
        for kwargs in (dict(temperature=1.0), dict(temperature=0.7, top_k=20), dict(temperature=1.2, top_p=0.9)):
            out = corral.generate(model, "ROMEO:\n", grammar, max_tokens=60, seed=seed, **kwargs)
            assert out.stop_reason == "eos" and out.accepting, out
            assert re.fullmatch(pattern, out.text), out.text
            assert out.text == model.decode(out.token_ids)


def test_greedy_is_deterministic_and_seeds_repeat(model):
    g = corral.Grammar.regex(r"[a-z]+( [a-z]+){3}")
    assert corral.generate(model, "KING:\n", g, temperature=0).text == corral.generate(model, "KING:\n", g, temperature=0).text
    a = [corral.generate(model, "KING:\n", g, seed=s).text for s in range(4)]
    assert a == [corral.generate(model, "KING:\n", g, seed=s).text for s in range(4)]
    assert len(set(a)) > 1


def test_prompt_as_ids_equals_prompt_as_text(model):
    g = corral.Grammar.regex(r"[a-z ]{10,20}\.")
    assert corral.generate(model, model.encode("JULIET:\n"), g, seed=3).text == corral.generate(model, "JULIET:\n", g, seed=3).text


def test_stops_at_max_tokens_when_incomplete(model):
    out = corral.generate(model, "x", corral.Grammar.regex(r"a{40}"), max_tokens=3, seed=0)
    assert out.stop_reason == "max_tokens" and not out.accepting and len(out.token_ids) == 3
    free = corral.generate(model, "ROMEO:\n", None, max_tokens=7, seed=0)
    assert len(free.token_ids) == 7 and free.stop_reason == "max_tokens" and free.accepting


class RandomModel:
    """Random logits over a small vocabulary; counts its calls."""

    def __init__(self, tokens):
        self.vocab = corral.Vocabulary.from_token_bytes(tokens + [b""], eos_token_ids=[len(tokens)])
        self.rng = np.random.default_rng(0)
        self.calls = 0

    def encode(self, text):
        return []

    def logits(self, ids):
        self.calls += 1
        return self.rng.normal(size=self.vocab.size).astype(np.float32)


def test_forced_tokens_skip_the_model():
    # Each piece of the literal has one spelling in this vocabulary, so it is forced.
    lm = RandomModel([b"Good ", b"morrow", b", ", b"cousin", b"!", b" yes", b" no", b"."])
    grammar = corral.Grammar.regex(r"Good morrow, cousin! (yes|no)\.")
    out = corral.generate(lm, "", grammar, seed=0)
    assert out.text in ("Good morrow, cousin! yes.", "Good morrow, cousin! no.") and out.finished
    # Only the choice between yes and no is sampled; the rest (and EOS) is forced.
    assert lm.calls == 1 and out.forced == 6 and len(out.token_ids) == 7


def test_streaming_gets_every_token_and_the_same_text(model):
    tokens, pieces = [], []
    g = corral.Grammar.regex(r"[A-Z][a-z]+( [a-zé']+){2,6}\.")
    out = corral.generate(model, "\n", g, seed=4, on_token=tokens.append, on_text=pieces.append)
    assert tokens == out.token_ids and "".join(pieces) == out.text


def test_eos_only_where_the_grammar_may_end(model):
    g = corral.Grammar.choice(["yes", "no", "nothing at all"])
    seen = set()
    for seed in range(12):
        out = corral.generate(model, "Answer: ", g, seed=seed, temperature=1.5)
        assert out.finished and out.text in ("yes", "no", "nothing at all")
        seen.add(out.text)
    assert len(seen) >= 2


def test_transformers_model_matches_the_numpy_model(model):
    torch = pytest.importorskip("torch")  # torch is in the test extra: this never skips in CI
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = corral.models.builtin_model_path()
    lm = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(path)
    pattern = r"[A-Z][a-z]+( [a-z]+){2,8}[.!?]"
    g = corral.Grammar.regex(pattern)
    ours = corral.generate(model, "ROMEO:\n", g, temperature=0, max_tokens=40)
    theirs = corral.generate(lm, "ROMEO:\n", g, tokenizer=tokenizer, temperature=0, max_tokens=40)
    assert theirs.text == ours.text and re.fullmatch(pattern, theirs.text)
    for seed in range(3):
        out = corral.generate(lm, "JULIET:\n", g, tokenizer=tokenizer, seed=seed, max_tokens=40)
        assert re.fullmatch(pattern, out.text), out.text
    # Rollbacks crop the cache: a rollback ban gives the same text as with the numpy model.
    ban = corral.Grammar.ban(["the", "and"], whole_words=True, mode="rollback")
    a = corral.generate(model, "ROMEO:\n", ban, temperature=0, max_tokens=40)
    b = corral.generate(lm, "ROMEO:\n", ban, tokenizer=tokenizer, temperature=0, max_tokens=40)
    assert a.text == b.text and a.rollbacks == b.rollbacks > 0


def test_load_model(tmp_path):
    assert isinstance(corral.models.load_model(), BuiltinModel)
    assert isinstance(corral.models.load_model(corral.models.builtin_model_path()), BuiltinModel)
    with pytest.raises(corral.GenerationError, match="no config.json"):
        corral.models.load_model(tmp_path)


# --- banned phrases, mask mode ---------------------------------------------------------------

BYTES_VOCAB = corral.Vocabulary.from_token_bytes([bytes([i]) for i in range(256)] + [b""], eos_token_ids=[256])
OPTIONS = [dict(), dict(ignore_case=True), dict(whole_words=True), dict(ignore_case=True, whole_words=True)]
PHRASES = ["talk", "listen", "damn you", "a/b", "é!"]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "+".join(o) or "plain")
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="talkisenTALKdmyou /abé!ExıİſK", max_size=24))
def test_ban_language_is_text_without_the_phrases(options, text):
    grammar = corral.Grammar.ban(PHRASES, **options)
    compiled = corral.compile(grammar, BYTES_VOCAB)
    expected = grammar.ban_spec.pattern().search(text) is None
    assert compiled.matches(text.encode()) == expected


def test_ban_pattern_meaning():
    spec = corral.Grammar.ban(["talk", "damn you"], whole_words=True, ignore_case=True).ban_spec
    banned = ["talk", "Talk.", "we TALK", "damn  you", "damn you!"]
    allowed = ["talks", "stalk", "damn yours", "x_talk", "talk2"]
    assert [spec.pattern().search(t) is not None for t in banned] == [True, True, True, False, True]
    assert not any(spec.pattern().search(t) for t in allowed)


def test_ban_case_folding_is_the_same_in_both_modes():
    # Python's re.IGNORECASE pairs i with İ and ı; corral's regexes do not (docs/regex.md).
    # The rollback pattern is pinned to the mask automaton's meaning.
    grammar = corral.Grammar.ban(["listen", "İz", "sk"], ignore_case=True)
    compiled = corral.compile(grammar, BYTES_VOCAB)
    texts = ["lısten", "LİSTEN", "lIsten", "LISTEN", "iz", "İZ", "ız", "ſk", "\u212a", "s\u212a", "ﬆ"]
    banned = [t for t in texts if grammar.ban_spec.pattern().search(t)]
    assert banned == ["lIsten", "LISTEN", "İZ", "ſk", "s\u212a"]
    assert [t for t in texts if not compiled.matches(t.encode())] == banned


def brute_allowed(vocab_tokens, text: str, pattern: re.Pattern, whole_words: bool) -> set:
    """Tokens after which some continuation avoids every phrase (the definition)."""
    tails = ["", " ", "s"] if whole_words else [""]
    out = set()
    for i, tok in enumerate(vocab_tokens):
        try:
            piece = tok.decode()
        except UnicodeDecodeError:
            continue
        if any(pattern.search(text + piece + tail) is None for tail in tails):
            out.add(i)
    return out


@pytest.mark.parametrize("whole_words", [False, True])
def test_ban_masks_phrases_split_across_tokens(whole_words):
    tokens = [b"t", b"a", b"l", b"k", b"ta", b"alk", b"stalk", b" ", b"talk", b"lk ", b"s", b"x", b"k!", b"ist", b"en"]
    vocab = corral.Vocabulary.from_token_bytes(tokens + [b""], eos_token_ids=[len(tokens)])
    grammar = corral.Grammar.ban(["talk", "listen"], whole_words=whole_words)
    pattern = grammar.ban_spec.pattern()
    compiled = corral.compile(grammar, vocab)
    rng = random.Random(0)
    bitmask = corral.allocate_bitmask(1, vocab.size)
    for _ in range(150):
        matcher, text = compiled.matcher(), ""
        for _ in range(rng.randint(0, 8)):
            matcher.fill_bitmask(bitmask)
            allowed = {t for t in range(len(tokens)) if bitmask[0, t // 32] >> (t % 32) & 1}
            assert allowed == brute_allowed(tokens, text, pattern, whole_words), text
            tok = rng.choice(sorted(allowed))
            assert matcher.advance(tok)
            text += tokens[tok].decode()
        assert matcher.is_accepting() == (pattern.search(text) is None)


def test_ban_errors():
    with pytest.raises(corral.GrammarError):
        corral.Grammar.ban([])
    with pytest.raises(corral.GrammarError, match="empty"):
        corral.Grammar.ban(["a", ""])
    with pytest.raises(corral.GrammarError, match="mode"):
        corral.Grammar.ban(["a"], mode="hide")
    with pytest.raises(TypeError):
        corral.Grammar.ban("talk")
    with pytest.raises(corral.GrammarError, match="rollback"):
        corral.compile(corral.Grammar.ban(["a"], mode="rollback"), BYTES_VOCAB)


def test_mask_ban_in_generation(model):
    phrases = ["the", "and", "thou"]
    grammar = corral.Grammar.ban(phrases, ignore_case=True)
    free_hits = 0
    for seed in range(4):
        free = corral.generate(model, "ROMEO:\n", None, max_tokens=50, seed=seed)
        free_hits += grammar.ban_spec.pattern().search(free.text) is not None
        out = corral.generate(model, "ROMEO:\n", grammar, max_tokens=50, seed=seed)
        assert grammar.ban_spec.pattern().search(out.text) is None, out.text
    assert free_hits >= 3  # the phrases are common: the ban really changes the output


# --- banned phrases, rollback mode -------------------------------------------------------------


def test_rollback_ban_in_generation(model):
    phrases = ["the", "and", "thou"]
    grammar = corral.Grammar.ban(phrases, ignore_case=True, whole_words=True, mode="rollback")
    total = 0
    for seed in range(4):
        counting = CountingModel(BuiltinModel())
        out = corral.generate(counting, "ROMEO:\n", grammar, max_tokens=50, seed=seed)
        assert grammar.ban_spec.pattern().search(out.text) is None, out.text
        total += out.rollbacks
        # The cache is truncated, not recomputed: positions read = prompt + kept tokens +
        # the re-sampled ones (no re-reading of the text before a rollback point).
        assert counting.positions <= len(model.encode("ROMEO:\n")) + counting.calls + 1
    assert total > 0


class ScriptedModel:
    """Prefers the tokens of a script, in order; a banned token falls back to the next best."""

    def __init__(self, tokens, script):
        self.vocab = corral.Vocabulary.from_token_bytes(tokens + [b""], eos_token_ids=[len(tokens)])
        self.tokens = tokens
        self.script = script

    def encode(self, text):
        return []

    def logits(self, ids):
        self.calls = getattr(self, "calls", 0) + 1
        n = len(ids)
        out = np.zeros(self.vocab.size, dtype=np.float32)
        if n < len(self.script):
            out[self.script[n]] = 10.0
            out[self.tokens.index(b"s")] = 5.0  # the second choice everywhere
        else:
            out[len(self.tokens)] = 10.0  # EOS
        return out


def test_rollback_bans_the_token_where_the_phrase_started():
    tokens = [b"we ", b"ta", b"lk", b" now", b"s", b"t", b"alk"]
    # "we " "ta" "lk" " now": "talk" completes at "lk" and started in "ta".
    lm = ScriptedModel(tokens, [0, 1, 2, 3])
    out = corral.generate(lm, "", corral.Grammar.ban(["talk"], mode="rollback"), temperature=0)
    assert out.rollbacks == 1
    # "ta" is banned at position 1, the second choice "s" is taken, then the script goes on.
    assert out.token_ids == [0, 4, 2, 3] and out.text == "we slk now"
    # Positions 0, 1, 2, then 1 again from the saved logits (no call), 2, 3 and EOS.
    assert lm.calls == 6
    # Whole words: the phrase is only complete once a non-word character follows.
    lm2 = ScriptedModel(tokens, [0, 1, 2, 4, 3])
    out2 = corral.generate(lm2, "", corral.Grammar.ban(["talk"], whole_words=True, mode="rollback"), temperature=0)
    assert out2.rollbacks == 0 and out2.text == "we talks now"
    lm3 = ScriptedModel(tokens, [0, 5, 6])  # "talk" at the very end, then EOS
    out3 = corral.generate(lm3, "", corral.Grammar.ban(["talk"], whole_words=True, mode="rollback"), temperature=0)
    assert out3.rollbacks == 1 and out3.token_ids[:1] == [0] and "talk" not in out3.text


def test_rollback_finds_a_short_phrase_inside_a_longer_unfinished_one():
    # "damn you" at the end is not complete yet (a word could follow), but "damn" is: the
    # search must not let the longer candidate hide it.
    tokens = [b"damn", b" you", b"r", b" now", b"s"]
    lm = ScriptedModel(tokens, [0, 1, 2, 3])
    grammar = corral.Grammar.ban(["damn you", "damn"], whole_words=True, mode="rollback")
    out = corral.generate(lm, "", grammar, temperature=0)
    assert out.rollbacks == 1 and out.text == "s your now"
    assert grammar.ban_spec.pattern().search(out.text) is None


@pytest.mark.parametrize("whole_words", [False, True])
def test_rollback_output_never_holds_a_phrase_random(whole_words):
    # Random models over a vocabulary of short pieces: phrases appear often, split across
    # tokens, overlapping each other; the final output must hold none of them.
    rng = random.Random(7)
    pieces = [b"a", b"b", b" ", b"ab", b"ba", b"a b", b"bab", b"aa", b"x"]
    rollbacks = 0
    for trial in range(40):
        phrases = sorted({"".join(rng.choice("ab ") for _ in range(rng.randint(2, 3))).strip() or "ab" for _ in range(2)})
        phrases = [p for p in phrases if p.strip()]
        grammar = corral.Grammar.ban(phrases, whole_words=whole_words, mode="rollback")
        lm = RandomModel(pieces)
        lm.rng = np.random.default_rng(trial)
        out = corral.generate(lm, "", grammar, max_tokens=30, seed=trial, max_rollbacks=10_000)
        assert grammar.ban_spec.pattern().search(out.text) is None, (phrases, out.text)
        rollbacks += out.rollbacks
    assert rollbacks > (5 if whole_words else 40)  # phrases really appeared and were undone


def test_rollback_limit_is_a_clear_error():
    tokens = [b"ta", b"lk", b"s", b"t", b"alk"]
    lm = ScriptedModel(tokens, [0, 1])
    with pytest.raises(corral.RollbackLimitError, match="rolled back 0 times") as info:
        corral.generate(lm, "", corral.Grammar.ban(["talk"], mode="rollback"), temperature=0, max_rollbacks=0)
    assert info.value.phrase == "talk"


def test_rollback_streams_only_final_text(model):
    pieces = []
    grammar = corral.Grammar.ban(["the", "and"], whole_words=True, mode="rollback")
    out = corral.generate(model, "ROMEO:\n", grammar, max_tokens=60, seed=1, on_text=pieces.append)
    assert out.rollbacks > 0 and "".join(pieces) == out.text


def test_rollback_cuts_a_whole_word_phrase_at_max_tokens():
    # "we " "ta" "lk" stops at max_tokens: nothing follows, so "talk" is a whole word there;
    # the output is cut before it (not generated past max_tokens), and only that is streamed.
    tokens = [b"we ", b"ta", b"lk", b" now", b"s"]
    lm = ScriptedModel(tokens, [0, 1, 2, 3])
    pieces = []
    grammar = corral.Grammar.ban(["talk"], whole_words=True, mode="rollback")
    out = corral.generate(lm, "", grammar, temperature=0, max_tokens=3, on_text=pieces.append)
    assert out.token_ids == [0] and out.text == "we " and out.stop_reason == "max_tokens"
    assert "".join(pieces) == "we "


def test_rollback_at_eos_also_rolls_back_the_matcher():
    # EOS after "we talk" completes the whole word: the EOS the grammar's matcher accepted is
    # undone along with the phrase, so the matcher follows the output that is kept.
    tokens = [b"we ", b"t", b"alk", b"s"]
    lm = ScriptedModel(tokens, [0, 1, 2])
    grammar = corral.Grammar.regex(r"we [st]alk") & corral.Grammar.ban(["talk"], whole_words=True, mode="rollback")
    out = corral.generate(lm, "", grammar, temperature=0)
    assert out.rollbacks == 1 and out.finished and out.accepting
    assert out.token_ids == [0, 3, 2] and out.text == "we salk"


def test_rollback_steps_back_where_every_token_is_banned():
    # After "t" the grammar allows only "a" and "b", and each is a banned phrase: once both
    # are banned there, "t" is banned instead and "s" (the second choice) leads on.
    tokens = [b"t", b"a", b"b", b"s", b"x"]
    lm = ScriptedModel(tokens, [0, 1])
    grammar = corral.Grammar.regex(r"t(a|b)|sx") & corral.Grammar.ban(["a", "b"], mode="rollback")
    out = corral.generate(lm, "", grammar, temperature=0)
    assert out.text == "sx" and out.finished and out.rollbacks == 3
    with pytest.raises(corral.RollbackLimitError) as info:
        corral.generate(lm, "", grammar, temperature=0, max_rollbacks=2)
    assert info.value.phrase == "(no way forward)"
    # Nothing left to step back to: a clear error naming the position.
    stuck = corral.Grammar.regex(r"t(a|b)") & corral.Grammar.ban(["a", "b"], mode="rollback")
    with pytest.raises(corral.GenerationError, match="no token can follow at position 0"):
        corral.generate(lm, "", stuck, temperature=0)


def test_rollback_steps_back_from_a_dead_end_of_the_grammar():
    # "tal" is a dead end of choice & mask ban (no token can follow it). Without rollback
    # bans that is the DeadEndError; with them, "l" is banned after "ta" and "b" taken.
    tokens = [b"t", b"a", b"l", b"k", b"b", b"s"]
    lm = ScriptedModel(tokens, [0, 1, 2, 3])
    disjoint = corral.Grammar.choice(["talk", "tab", "s"]) & corral.Grammar.ban(["talk"])
    with pytest.raises(corral.DeadEndError):
        corral.generate(lm, "", disjoint, temperature=0)
    out = corral.generate(lm, "", disjoint & corral.Grammar.ban(["zz"], mode="rollback"), temperature=0)
    assert out.text == "tab" and out.finished and out.rollbacks == 1


def test_streamed_text_ends_with_an_incomplete_character():
    # The output ends inside a UTF-8 character: on_text still gets the replacement character.
    tokens = [b"caf", b"\xc3", b"\xa9", b"s"]
    lm = ScriptedModel(tokens, [0, 1])
    pieces = []
    out = corral.generate(lm, "", None, temperature=0, on_text=pieces.append)
    assert out.text == "caf\ufffd" and "".join(pieces) == out.text and pieces[-1] == "\ufffd"


def test_logits_of_the_wrong_shape_are_a_generation_error():
    class ShortModel(ScriptedModel):
        def logits(self, ids):
            return super().logits(ids)[:-1]

    lm = ShortModel([b"a", b"s"], [0])
    with pytest.raises(corral.GenerationError, match=r"logits of shape \(2,\); expected one row of at least 3"):
        corral.generate(lm, "", None)


# --- combined constraints ------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 30}, "line": {"type": "string", "maxLength": 60}},
    "required": ["name", "line"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("mode", ["mask", "rollback"])
def test_json_schema_and_ban(model, mode):
    ban = corral.Grammar.ban(["the", "and"], ignore_case=True, mode=mode)
    grammar = corral.Grammar.json_schema(SCHEMA) & ban
    for seed in range(3):
        out = corral.generate(model, "ROMEO:\n", grammar, max_tokens=120, seed=seed)
        assert out.finished, out.text
        jsonschema.validate(json.loads(out.text), SCHEMA)
        assert ban.ban_spec.pattern().search(out.text) is None, out.text


def test_intersection_mask_is_the_and_of_the_parts(model):
    a = corral.Grammar.regex(r"[a-z ]*")
    b = corral.Grammar.ban(["the", "and"])
    both = corral.compile(a & b, model.vocab)
    assert isinstance(both, corral.CompiledIntersection)
    ma, mb, m = corral.compile(a, model.vocab).matcher(), corral.compile(b, model.vocab).matcher(), both.matcher()
    masks = corral.allocate_bitmask(3, model.vocab.size)
    rng = random.Random(1)
    for _ in range(12):
        ma.fill_bitmask(masks, 0)
        mb.fill_bitmask(masks, 1)
        corral.fill_bitmasks([m], masks, [2])
        assert np.array_equal(masks[2], masks[0] & masks[1])
        allowed = [t for t in range(model.vocab.size) if masks[2, t // 32] >> (t % 32) & 1 and t != 0]
        tok = rng.choice(allowed)
        assert m.is_allowed(tok) and m.advance(tok) and ma.advance(tok) and mb.advance(tok)
    assert m.num_tokens == 12
    m.rollback(2)
    assert m.num_tokens == 10 and both.matches(b"be merry") and not both.matches(b"the end")
    with pytest.raises(corral.MatcherError):
        m.rollback(11)


def test_disjoint_intersection_is_a_dead_end():
    grammar = corral.Grammar.choice(["talk"]) & corral.Grammar.ban(["talk"])
    matcher = corral.compile(grammar, BYTES_VOCAB).matcher()
    for b in b"tal":
        assert matcher.advance(b)
    with pytest.raises(corral.DeadEndError, match="2 combined grammars"):
        matcher.fill_bitmask(corral.allocate_bitmask(1, BYTES_VOCAB.size))
    # A part that rejects a token leaves the others unchanged.
    assert not matcher.advance(ord("k")) and matcher.num_tokens == 3


def test_intersection_forced_tokens():
    grammar = corral.Grammar.regex(r"(ab|ac)de") & corral.Grammar.ban(["ac"])
    matcher = corral.compile(grammar, BYTES_VOCAB).matcher()
    assert matcher.forced_tokens() == list(b"abde") + [256]


def test_any_transformers_causal_lm_llama():
    torch = pytest.importorskip("torch")  # torch is in the test extra: this never skips in CI
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    path = corral.models.builtin_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=2048, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    lm = LlamaForCausalLM(config).eval()
    pattern = r"[a-z]{3,8}( [a-z]{3,8}){2,4}\."
    ban = corral.Grammar.ban(["ab", "e"], mode="rollback")  # frequent in random text: rollbacks happen
    rollbacks = 0
    for seed in range(3):
        out = corral.generate(lm, "ROMEO:\n", corral.Grammar.regex(pattern) & ban, tokenizer=tokenizer, seed=seed, max_tokens=60)
        assert out.finished and re.fullmatch(pattern, out.text) and "ab" not in out.text and "e" not in out.text, out.text
        rollbacks += out.rollbacks
    assert rollbacks > 0
    with pytest.raises(corral.GenerationError, match="positions"):
        corral.generate(lm, "x " * 200, None, tokenizer=tokenizer, max_tokens=1)


def test_rollback_ban_search_reads_only_the_window(model, monkeypatch):
    """Finding a banned phrase looks at the new bytes and the longest phrase's window
    before them, never the whole output (which grows with every token): the search gets
    the output buffer itself, not a copy, and reads only the window of it."""
    from corral.generation import _RollbackBans

    given = []
    real_find = _RollbackBans.find

    def spy(self, data, new_from, at_end):
        given.append(type(data))
        return real_find(self, data, new_from, at_end)

    monkeypatch.setattr(_RollbackBans, "find", spy)
    out = corral.generate(model, "The", corral.Grammar.ban(["the", "and"], whole_words=True, mode="rollback"), max_tokens=40, seed=1)
    assert out.text and given and all(t is bytearray for t in given), given
    monkeypatch.undo()

    bans = _RollbackBans([corral.Grammar.ban(["forbidden word"], mode="rollback")], max_rollbacks=4)

    class Recording(bytearray):
        reads: list = []

        def __getitem__(self, key):
            Recording.reads.append(key)
            return bytearray.__getitem__(self, key)

    data = Recording(b"x" * 100_000 + b" a forbidden word")
    new_from = len(data) - 5
    found = bans.find(data, new_from, at_end=False)
    assert found is not None and found[1] == "forbidden word"
    assert data[found[0]:found[0] + 14] == b"forbidden word"
    starts = [k.start if isinstance(k, slice) else k for k in Recording.reads[:-1]]
    assert starts and min(starts) >= new_from - bans.window, (min(starts), new_from - bans.window)


class _MarkerModel:
    """Prefers, in order, the special token <think>, "h", </think>, "A", then EOS."""

    def __init__(self):
        tokens = [bytes([b]) for b in range(256)] + [b"<think>", b"</think>", b"<eos>"]
        self.vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[258], special_token_ids=[256, 257, 258])
        self.script = [256, ord("h"), 257, ord("A")]

    def encode(self, text):
        return []

    def logits(self, ids):
        out = np.zeros(self.vocab.size, dtype=np.float32)
        out[self.script[len(ids)] if len(ids) < len(self.script) else 258] = 10.0
        return out


def test_generated_text_keeps_the_markers_the_grammar_wrote():
    """Special tokens a structural tag writes as its markers are in `text` and `on_text`
    (not dropped as other special tokens are): the text is what the grammar matched."""
    lm = _MarkerModel()
    tag = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
        {"type": "const_string", "value": "A"}]}}
    grammar = corral.Grammar.structural_tag(tag)
    pieces = []
    out = corral.generate(lm, "", grammar, max_tokens=10, temperature=0, on_text=pieces.append)
    assert out.token_ids == lm.script
    assert out.text == "<think>h</think>A" and "".join(pieces) == out.text
    assert corral.compile(grammar, lm.vocab).matches(out.text.encode())
    # Without a grammar that writes them, special tokens stay out of the text.
    assert corral.generate(lm, "", None, max_tokens=10, temperature=0).text == "hA"
