"""corral.integrations.llama_cpp against the real llama-cpp-python.

The built-in GPT-2 is converted to GGUF (tools/convert_builtin_to_gguf.py) in a temporary
directory; llama.cpp must then tokenize like the Hugging Face tokenizer and compute the
same logits as transformers, and the logits processor must make its output follow a regex
and a JSON Schema, greedy and sampled, where unguided output does not.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import jsonschema
import llama_cpp
import numpy as np
import pytest

import corral
from corral.errors import MatcherError, VocabularyError
from corral.integrations.llama_cpp import CorralLlamaLogitsProcessor, logits_processor, vocabulary_from_llama
from corral.models import builtin_model_path

REPO = Path(__file__).resolve().parents[1]

SHAKESPEARE = [
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.",
    "ROMEO:\nBut soft, what light through yonder window breaks?",
    "KING RICHARD III:\nNow is the winter of our discontent\nMade glorious summer by this sun of York;",
    "To be, or not to be, that is the question:  Whether 'tis nobler in the mind to suffer",
    "  leading spaces, 12345 digits, tabs\tand\n\n\nnewlines -- and 'quotes' don't we'll I'd",
    "Unicode: café, naïve, “curly”, 日本語, emoji 🎭!",
]

PROMPT = "ROMEO:\nWhat say you, sir?\n\nFirst Citizen:\n"
CODE = r"[0-9]{3}-[a-z]{2,8}"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "king": {"type": "boolean"},
    },
    "required": ["name", "age", "king"],
    "additionalProperties": False,
}


def _converter():
    spec = importlib.util.spec_from_file_location("convert_builtin_to_gguf", REPO / "tools" / "convert_builtin_to_gguf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gguf_path(tmp_path_factory):
    return _converter().convert(builtin_model_path(), tmp_path_factory.mktemp("gguf") / "builtin.gguf")


@pytest.fixture(scope="module")
def llm(gguf_path):
    return llama_cpp.Llama(model_path=str(gguf_path), n_ctx=256, n_threads=1, n_threads_batch=1, logits_all=False, verbose=False, seed=0)


@pytest.fixture(scope="module")
def hf_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(builtin_model_path())


def _complete(llm, processor=None, **kwargs):
    kwargs.setdefault("max_tokens", 48)
    if processor is not None:
        kwargs["logits_processor"] = llama_cpp.LogitsProcessorList([processor])
        kwargs["stopping_criteria"] = llama_cpp.StoppingCriteriaList([processor.stopping_criterion])
    out = llm(PROMPT, **kwargs)
    return out["choices"][0]["text"], out["choices"][0]["finish_reason"]


# -- the converted model -------------------------------------------------------------------


def test_gguf_metadata(gguf_path):
    import gguf

    reader = gguf.GGUFReader(str(gguf_path))
    fields = {name: field.contents() for name, field in reader.fields.items() if name != "tokenizer.ggml.merges"}
    assert fields["general.architecture"] == "gpt2"
    assert fields["gpt2.block_count"] == 4 and fields["gpt2.embedding_length"] == 192
    assert fields["gpt2.context_length"] == 256 and fields["gpt2.feed_forward_length"] == 768
    assert fields["tokenizer.ggml.model"] == "gpt2" and fields["tokenizer.ggml.pre"] == "gpt-2"
    assert len(fields["tokenizer.ggml.tokens"]) == 2048
    names = {t.name for t in reader.tensors}
    assert {"token_embd.weight", "position_embd.weight", "blk.3.attn_qkv.weight", "blk.0.ffn_down.bias"} <= names
    assert "output.weight" not in names  # tied to token_embd


def test_tokenization_matches_huggingface(llm, hf_tokenizer):
    for text in SHAKESPEARE:
        want = hf_tokenizer.encode(text)
        got = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        assert got == want, text
        assert llm.detokenize(got).decode("utf-8") == text
    assert llm.n_vocab() == 2048 and llm.token_eos() == 0 and llm.n_ctx() == 256


def test_vocabulary_matches_the_tokenizer_file(llm):
    vocab = vocabulary_from_llama(llm)
    want = corral.Vocabulary.from_tokenizer_file(builtin_model_path() / "tokenizer.json")
    assert vocab.size == want.size == 2048
    assert vocab.eos_token_ids == want.eos_token_ids == [0]
    assert [vocab.token_bytes(i) for i in range(1, 2048)] == [want.token_bytes(i) for i in range(1, 2048)]
    assert vocabulary_from_llama(llm) is vocab  # cached per Llama object


def test_logits_match_transformers(gguf_path, hf_tokenizer):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(builtin_model_path()).eval()
    full = llama_cpp.Llama(model_path=str(gguf_path), n_ctx=256, n_threads=1, n_threads_batch=1, logits_all=True, verbose=False)
    for text in SHAKESPEARE[:3]:
        ids = hf_tokenizer.encode(text)
        full.reset()
        full.eval(ids)
        got = np.array(full.scores[: len(ids)], dtype=np.float32)
        with torch.no_grad():
            want = model(torch.tensor([ids])).logits[0].numpy()
        assert got.shape == want.shape == (len(ids), 2048)
        assert np.abs(got - want).max() < 1e-2, np.abs(got - want).max()
        assert (got.argmax(-1) == want.argmax(-1)).all()


# -- guided generation -----------------------------------------------------------------------


def test_unguided_output_follows_neither_constraint(llm):
    text, _ = _complete(llm, temperature=0)
    assert text and not re.fullmatch(CODE, text)
    with pytest.raises(ValueError):
        json.loads(text)


def test_regex_greedy(llm):
    processor = CorralLlamaLogitsProcessor(corral.Grammar.regex(CODE), llm)
    text, reason = _complete(llm, processor, temperature=0)
    assert re.fullmatch(CODE, text), text
    assert reason == "stop" and processor.error is None
    # The hook saw every token of the text (it gets each one on the call after it was
    # sampled; the last call sampled EOS), so the matcher is in an accepting state.
    assert llm.detokenize(processor.generated_ids).decode() == text
    assert processor.is_accepting and not processor.is_finished


def test_regex_sampled_with_seeds(llm):
    texts = set()
    for seed in range(6):
        processor = CorralLlamaLogitsProcessor(corral.Grammar.regex(CODE), llm)
        text, reason = _complete(llm, processor, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, seed=seed)
        assert re.fullmatch(CODE, text), (seed, text)
        assert reason == "stop"
        texts.add(text)
    assert len(texts) > 1  # sampling, not a fixed string
    # The same seed gives the same text.
    again = _complete(llm, CorralLlamaLogitsProcessor(corral.Grammar.regex(CODE), llm), temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, seed=3)[0]
    first = _complete(llm, CorralLlamaLogitsProcessor(corral.Grammar.regex(CODE), llm), temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, seed=3)[0]
    assert again == first


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_json_schema(llm, temperature):
    grammar = corral.Grammar.json_schema(SCHEMA)
    for seed in range(3 if temperature else 1):
        processor = logits_processor(grammar, llm)[0]
        text, reason = _complete(llm, processor, temperature=temperature, seed=seed, max_tokens=80)
        assert reason == "stop", text
        value = json.loads(text)
        jsonschema.validate(value, SCHEMA)


def test_generate_api_and_reset(llm):
    processor = CorralLlamaLogitsProcessor(corral.Grammar.regex(r"(yes|no)\."), llm)
    prompt = llm.tokenize(PROMPT.encode(), add_bos=False)
    out = []
    for tok in llm.generate(prompt, temp=0.0, logits_processor=llama_cpp.LogitsProcessorList([processor])):
        if tok == llm.token_eos():
            break
        out.append(tok)
        assert len(out) < 10
    assert re.fullmatch(r"(yes|no)\.", llm.detokenize(out).decode())
    # A second generation needs reset(); then the processor works again.
    processor.reset()
    text, reason = _complete(llm, processor, temperature=0)
    assert re.fullmatch(r"(yes|no)\.", text) and reason == "stop"


# The hook's exception is printed by ctypes as an unraisable exception (by design: see
# CorralLlamaLogitsProcessor._stop).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_reuse_without_reset_is_an_error_that_stops_generation(llm, capsys):
    processor = CorralLlamaLogitsProcessor(corral.Grammar.regex(CODE), llm)
    _complete(llm, processor, temperature=0)
    other = llama_cpp.LogitsProcessorList([processor])
    out = llm("KING:\n", max_tokens=16, temperature=0, logits_processor=other)
    # The hook cannot raise through llama.cpp: it ends the output with EOS and keeps the error.
    assert out["choices"][0]["text"] == "" and out["choices"][0]["finish_reason"] == "stop"
    assert isinstance(processor.error, MatcherError)
    with pytest.raises(MatcherError, match="reset"):
        processor.check()
    # As a stopping criterion, the error propagates out of the call.
    with pytest.raises(MatcherError):
        llm(
            "KING:\n",
            max_tokens=16,
            temperature=0,
            logits_processor=other,
            stopping_criteria=llama_cpp.StoppingCriteriaList([processor.stopping_criterion]),
        )
    capsys.readouterr()


def test_vocabulary_size_mismatch_is_a_vocabulary_error(llm):
    small = corral.Vocabulary.from_token_bytes([b"a", b"b", b""], eos_token_ids=[2])
    with pytest.raises(VocabularyError):
        CorralLlamaLogitsProcessor(corral.Grammar.regex("a+"), llm, vocab=small)


def test_importing_corral_does_not_import_llama_cpp():
    import subprocess

    code = "import sys, corral, corral.integrations.llama_cpp; print('llama_cpp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
