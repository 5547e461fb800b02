"""NanoGPT guided decoding: a character-level vocabulary, static per-position
masks, the (class, quantifier) pattern compiler, and the example that uses them."""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import numpy as np
import pytest

import corral
from corral.models import SHAKESPEARE_CHARS, CharLevelModel
from corral.patterns import CHAR_CLASSES, compile_pattern, pattern_regex, static_masks

REPO = Path(__file__).resolve().parents[1]
SPEAKER_LINE = [("UPPER", "+"), (":", "1"), (" ", "1"), ("LOWER", "+"), ("\n", "1")]


@pytest.fixture(scope="module")
def char_model():
    return CharLevelModel()


def test_the_character_vocabulary_is_nanogpts():
    text = (REPO.parent / "shared" / "data" / "tinyshakespeare.txt").read_text()
    assert SHAKESPEARE_CHARS == "".join(sorted(set(text))) and len(SHAKESPEARE_CHARS) == 65


def seed_fsm(elements):
    """The seed's compiler: states and (token set, next state) transitions, '1' and '+'."""
    sets = {name: set(c for c in SHAKESPEARE_CHARS if re.fullmatch("[" + CHAR_CLASSES[name] + "]", c)) for name in CHAR_CLASSES}
    transitions, state = {}, 0
    for name, quantifier in elements:
        chars = sets.get(name, {name})
        transitions.setdefault(state, []).append((chars, state + 1))
        if quantifier == "+":
            transitions.setdefault(state + 1, []).append((chars, state + 1))
        state += 1
    return transitions, state


def fsm_accepts(fsm, text):
    transitions, accept = fsm
    state = 0
    for ch in text:
        for chars, nxt in transitions.get(state, []):
            if ch in chars:
                state = nxt
                break
        else:
            return False
    return state == accept


def test_compiled_pattern_is_the_seeds_fsm(char_model):
    compiled = corral.compile(compile_pattern(SPEAKER_LINE), char_model.vocab)
    fsm = seed_fsm(SPEAKER_LINE)
    rng = random.Random(0)
    samples = ["ROMEO: wherefore\n", "A: b\n", ": b\n", "AB: \n", "AB:  x\n", "ROMEO: hi", "romeo: hi\n"]
    alphabet = "AZaz: \n!"
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(3000)]
    samples += ["".join(rng.choice("AB") for _ in range(rng.randint(1, 3))) + ": " + "".join(rng.choice("ab") for _ in range(rng.randint(0, 3))) + "\n" for _ in range(300)]
    agree = [compiled.matches(s.encode()) == fsm_accepts(fsm, s) for s in samples]
    assert all(agree)
    assert sum(fsm_accepts(fsm, s) for s in samples) > 100  # the comparison covers accepted strings


def test_pattern_regex_and_errors():
    assert pattern_regex([("UPPER|DIGIT", "{2,3}"), ("ab", "*"), ("x", "?")]) == "[A-Z0-9]{2,3}(?:ab)*x?"
    assert re.fullmatch(pattern_regex([("PUNCT", "+")]), "!$&',-.:;?")
    for bad in ([], [("UPPER", "++")], [("", "1")], [("UPPER",)], ["UPPER"]):
        with pytest.raises(corral.GrammarError):
            pattern_regex(bad)


def test_static_masks(char_model):
    masks = static_masks(["LOWER", "UPPER|DIGIT", ":", "NEWLINE"], char_model.vocab)
    assert masks.dtype == np.int32 and masks.shape == (4, 3)
    allowed = [
        {char_model.chars[t] for t in range(char_model.vocab.size) if masks[i, t // 32] >> (t % 32) & 1}
        for i in range(4)
    ]
    assert allowed == [set("abcdefghijklmnopqrstuvwxyz"), set("ABCDEFGHIJKLMNOPQRSTUVWXYZ3"), {":"}, {"\n"}]
    with pytest.raises(corral.GrammarError, match="neither"):
        static_masks(["ab"], char_model.vocab)
    with pytest.raises(corral.GrammarError, match="no token"):
        static_masks(["7"], char_model.vocab)


def test_char_model_gives_a_distribution(char_model):
    for text in ["", "ROMEO:\n", "ROM", "ROMEO: wherefore art th"]:
        logits = char_model.logits(char_model.encode(text))
        assert logits.shape == (66,)
        assert abs(np.exp(logits.astype(np.float64)).sum() - 1) < 1e-4
    # After "ROMEO: wherefore art th", the healed distribution favours "o" (thou).
    logits = char_model.logits(char_model.encode("ROMEO:\nWherefore art th"))
    assert char_model.chars[int(np.argmax(logits))] in "oe"
    with pytest.raises(ValueError, match="not in this model's vocabulary"):
        char_model.encode("é")


def test_char_level_generation_always_fits(char_model):
    grammar = compile_pattern(SPEAKER_LINE)
    regex = pattern_regex(SPEAKER_LINE)
    for seed in range(4):
        out = corral.generate(char_model, "\n", grammar, max_tokens=80, seed=seed)
        assert out.finished and re.fullmatch(regex, out.text), out.text
        assert all(0 <= t < 65 for t in out.token_ids)  # one character per token
    free = [corral.generate(char_model, "\n", None, max_tokens=30, seed=s).text for s in range(3)]
    assert not any(re.fullmatch(regex, t) for t in free)


def test_the_example_runs(capsys):
    spec = importlib.util.spec_from_file_location("shakespeare_lines", REPO / "examples" / "shakespeare_lines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    word, *lines = module.main(["--lines", "3", "--seed", "2"])
    assert re.fullmatch(r"[a-z]{5}\n", word)
    assert len(lines) == 3 and all(re.fullmatch(pattern_regex(module.SPEAKER_LINE), line) for line in lines)
    printed = capsys.readouterr().out
    assert "".join(lines) in printed
