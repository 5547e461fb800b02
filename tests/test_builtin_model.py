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
