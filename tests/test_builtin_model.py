"""The built-in model (issue 5, item 1): shipped files, the numpy forward pass against
transformers' GPT-2 on the same weights, and the key/value cache."""

from __future__ import annotations

import json

import numpy as np
import pytest

import corral
from corral.models.numpy_gpt2 import NumpyGPT2, builtin_model_path, read_safetensors

PROMPTS = ["ROMEO:\nBut soft, what light", "First Citizen:\nWe are accounted poor citizens", "\n\nKING"]


@pytest.fixture(scope="module")
def numpy_model():
    return NumpyGPT2()


def test_files_ship_in_the_package_and_are_small():
    path = builtin_model_path()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "training.json"):
        assert (path / name).is_file(), name
    total = sum(f.stat().st_size for f in path.iterdir())
    assert total <= 20 * 2**20, f"{total} bytes"
    training = json.loads((path / "training.json").read_text())
    # Trained, not initialized: uniform guessing over 2,048 ids is ln(2048) = 7.6 nats.
    assert training["final_validation_loss"] < 5.0, training["final_validation_loss"]
    config = json.loads((path / "config.json").read_text())
    assert config["model_type"] == "gpt2" and 1000 <= config["vocab_size"] <= 8192


def test_transformers_loads_it_as_gpt2_and_numpy_agrees(numpy_model):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = builtin_model_path()
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert type(model).__name__ == "GPT2LMHeadModel"
    for prompt in PROMPTS:
        ids = tokenizer.encode(prompt)
        assert tokenizer.decode(ids) == prompt
        assert len(ids) < len(prompt.encode())  # tokens span several characters
        with torch.no_grad():
            want = model(torch.tensor([ids])).logits[0].numpy()
        got = numpy_model.forward(ids, numpy_model.new_cache())
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_cache_step_by_step_equals_whole_and_truncation_is_rollback(numpy_model):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, numpy_model.vocab_size, 40).tolist()
    whole = numpy_model.forward(ids, numpy_model.new_cache())
    cache = numpy_model.new_cache()
    steps = np.stack([numpy_model.next_logits([t], cache) for t in ids])
    np.testing.assert_allclose(steps, whole, rtol=1e-4, atol=1e-4)
    # Roll back 15 positions and read other tokens: as if the first ones never happened.
    cache.truncate(25)
    other = rng.integers(0, numpy_model.vocab_size, 15).tolist()
    after = numpy_model.forward(other, cache)
    fresh = numpy_model.forward(ids[:25] + other, numpy_model.new_cache())[25:]
    np.testing.assert_allclose(after, fresh, rtol=1e-4, atol=1e-4)


def test_limits_and_bad_input_are_errors(numpy_model, tmp_path):
    cache = numpy_model.new_cache()
    with pytest.raises(ValueError, match="at most"):
        numpy_model.forward([0] * (numpy_model.n_positions + 1), cache)
    with pytest.raises(ValueError, match="token ids"):
        numpy_model.forward([numpy_model.vocab_size], cache)
    with pytest.raises(ValueError, match="truncate"):
        cache.truncate(5)  # nothing read yet
    (tmp_path / "bad.safetensors").write_bytes(b"abc")
    with pytest.raises(ValueError, match="not a safetensors"):
        read_safetensors(tmp_path / "bad.safetensors")


def test_corral_reads_the_vocabulary(numpy_model):
    path = builtin_model_path()
    vocab = corral.Vocabulary.from_tokenizer_file(str(path / "tokenizer.json"))
    assert vocab.size >= numpy_model.vocab_size
    assert numpy_model.eos_token_id in vocab.eos_token_ids
    # Multi-character tokens: the vocabulary index is really exercised.
    lengths = [len(vocab.token_bytes(i)) for i in range(numpy_model.vocab_size) if i != numpy_model.eos_token_id]
    assert max(lengths) >= 6 and np.mean(lengths) > 3


def test_pure_python_bpe_matches_the_tokenizers_library():
    tokenizers = pytest.importorskip("tokenizers")
    from corral.models import ByteLevelBPE

    path = builtin_model_path() / "tokenizer.json"
    ours, ref = ByteLevelBPE(path), tokenizers.Tokenizer.from_file(str(path))
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt").read_text()[:50_000]
    assert ours.encode(text) == ref.encode(text).ids
    for s in ["héllo wörld  \n\n  x", "Don't  you'll _x__ 123abc", "日本語", "tab\there", "  lead", "emoji 😀!", "Ⅻ ½", ""]:
        assert ours.encode(s) == ref.encode(s).ids, s


def test_guided_generation_with_the_builtin_model_always_fits():
    import re

    from corral.models import BuiltinModel

    model = BuiltinModel()
    assert model.decode(model.encode("ROMEO:\nWhat light")) == "ROMEO:\nWhat light"
    pattern = r"[A-Z][A-Z]+: [a-z]+( [a-z]+){2,5}\."
    grammar = corral.Grammar.regex(pattern)
    for seed in range(4):
        result = corral.generate(model, "\n", grammar, max_tokens=40, temperature=1.0, seed=seed)
        assert result.text == model.decode(result.token_ids)
        assert result.finished and re.fullmatch(pattern, result.text), result.text
    # Unguided, the same model writes free text (not that format).
    free = corral.generate(model, "ROMEO:\n", None, max_tokens=30, temperature=1.0, seed=0)
    assert not re.fullmatch(pattern, free.text)


def test_builtin_model_cache_reuse_matches_a_fresh_pass():
    from corral.models import BuiltinModel

    model = BuiltinModel()
    ids = model.encode("First Citizen:\nBefore we proceed any further, hear me speak.")
    a = model.logits(ids)  # fresh
    model.logits(ids[:-3] + [5, 6])  # a different continuation: the cache rolls back
    b = model.logits(ids)
    c = model.net.next_logits(ids, model.net.new_cache())
    np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(b, c, rtol=1e-4, atol=1e-4)
    long = model.encode("O Romeo, Romeo! " * 80)  # past the 256 positions
    assert len(long) > model.net.n_positions and model.logits(long).shape == (model.net.vocab_size,)
    # The window jumps by half its size: between jumps one new position is read per token.
    n = model.net.n_positions
    assert [model.window_start(k) for k in (1, n, n + 1, n + n // 2, n + n // 2 + 1)] == [0, 0, n // 2, n // 2, n]
    ids = (long * 3)[: 2 * n]
    read = []
    forward = model.net.next_logits
    model.net.next_logits = lambda new, cache: read.append(len(new)) or forward(new, cache)
    for k in range(n - 2, 2 * n):
        out = model.logits(ids[:k])
        if k in (n + 1, n + 40):  # the window, read from a fresh cache, gives the same logits
            start = model.window_start(k)
            np.testing.assert_allclose(out, forward(ids[start:k], model.net.new_cache()), rtol=1e-4, atol=1e-4)
    big = [r for r in read if r > 1]
    assert len(big) <= 3 and len(read) == 2 * n - (n - 2)  # two jumps (+ the first read)
