"""corral.integrations: the transformers logits processor driven by ``model.generate`` with
the built-in GPT-2, and the vLLM processors driven at their interface (vLLM itself is not
installed here) with the same model's logits computed by transformers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types

import jsonschema
import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessor, LogitsProcessorList

import corral
from corral.integrations import transformers as corral_tf, vllm as corral_vllm
from corral.models import builtin_model_path

PROMPTS = ["ROMEO:", "Good morrow, my lord, and what", "KING"]
DIGITS = r"[0-9]{3}-[a-z]+"
BOUNDED = r"[0-9]{3}-[a-z]{2,6}"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "age", "ok"],
    "additionalProperties": False,
}
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The built-in model is tiny: one thread is fastest, and stays fast on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tokenizer():
    tok = AutoTokenizer.from_pretrained(builtin_model_path())
    tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    return tok


@pytest.fixture(scope="module")
def model():
    m = AutoModelForCausalLM.from_pretrained(builtin_model_path())
    m.eval()
    return m


@pytest.fixture(scope="module")
def vocab(tokenizer):
    return corral.Vocabulary.from_huggingface(tokenizer)


def allowed_ids(matcher, vocab) -> np.ndarray:
    """The token ids ``matcher`` allows now, computed on its own bitmask."""
    bitmask = corral.allocate_bitmask(1, vocab.size)
    matcher.fill_bitmask(bitmask, 0)
    bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: vocab.size]
    return np.flatnonzero(bits)


def expected_allowed(grammar, vocab, tokens) -> np.ndarray:
    matcher = corral.compile(grammar, vocab).matcher()
    for t in tokens:
        assert matcher.advance(t)
    return allowed_ids(matcher, vocab)


def finite_ids(row) -> np.ndarray:
    return np.flatnonzero(torch.isfinite(row).cpu().numpy())


def generate(model, tokenizer, prompts, processors=(), *, device="cpu", seed=None, **kwargs):
    """(continuations as text, new token ids per row) of ``model.generate``."""
    inputs = tokenizer(prompts, return_tensors="pt", padding=True).to(device)
    if seed is not None:
        torch.manual_seed(seed)
    try:
        with torch.no_grad():
            out = model.to(device).generate(
                **inputs,
                logits_processor=LogitsProcessorList(list(processors)),
                pad_token_id=tokenizer.pad_token_id,
                **kwargs,
            )
    finally:
        model.to("cpu")
    new = out[:, inputs["input_ids"].shape[1] :].cpu()
    return tokenizer.batch_decode(new, skip_special_tokens=True), new.tolist()


# -- packaging -------------------------------------------------------------------------


def test_importing_integrations_imports_no_framework():
    code = (
        "import sys, corral.integrations\n"
        "heavy = [m for m in ('torch', 'transformers', 'vllm') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- transformers ----------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_generate_regex_greedy_batch_left_padding(model, tokenizer, device):
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.regex(DIGITS), tokenizer)
    texts, _ = generate(model, tokenizer, PROMPTS, [proc], device=device, max_new_tokens=16, do_sample=False)
    assert len(texts) == 3
    for text in texts:
        assert re.fullmatch(DIGITS, text), text
    # The same prompts without the processor: the model writes Shakespeare, not this.
    free, _ = generate(model, tokenizer, PROMPTS, device=device, max_new_tokens=16, do_sample=False)
    assert not any(re.fullmatch(DIGITS, t) for t in free), free


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generate_bounded_regex_sampling_ends_with_eos(model, tokenizer, seed):
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.regex(BOUNDED), tokenizer)
    texts, ids = generate(model, tokenizer, PROMPTS, [proc], seed=seed, max_new_tokens=24, do_sample=True)
    for text, row in zip(texts, ids, strict=True):
        assert re.fullmatch(BOUNDED, text), text
        # The row ended by EOS (the language is finite, so EOS is forced), pad after it.
        assert tokenizer.eos_token_id in row, row
    # Every row finished before max_new_tokens: generate stopped early.
    assert len(ids[0]) < 24
    free, _ = generate(model, tokenizer, PROMPTS, seed=seed, max_new_tokens=24, do_sample=True)
    assert not all(re.fullmatch(BOUNDED, t) for t in free), free


def test_generate_with_a_combined_grammar_and_ban(model, tokenizer):
    # g1 & g2: the processor's batched fill goes through the intersection matchers.
    words = r"[a-z]+( [a-z]+){3,6}\."
    grammar = corral.Grammar.regex(words) & corral.Grammar.ban(["the", "and"], whole_words=True)
    proc = corral_tf.CorralLogitsProcessor(grammar, tokenizer)
    banned = re.compile(r"(?<!\w)(the|and)(?!\w)")
    for seed in range(3):
        texts, _ = generate(model, tokenizer, PROMPTS, [proc], seed=seed, max_new_tokens=40, do_sample=True)
        for text in texts:
            assert re.fullmatch(words, text) and not banned.search(text), text
    free = [t for seed in range(3) for t in generate(model, tokenizer, PROMPTS, seed=seed, max_new_tokens=40, do_sample=True)[0]]
    assert any(banned.search(t) for t in free)


@pytest.mark.parametrize("seed", [0, 1])
def test_generate_json_schema_sampling_validates(model, tokenizer, seed):
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.json_schema(SCHEMA), tokenizer)
    texts, ids = generate(model, tokenizer, PROMPTS, [proc], seed=seed, max_new_tokens=64, do_sample=True)
    for text, row in zip(texts, ids, strict=True):
        jsonschema.validate(json.loads(text), SCHEMA)
        assert tokenizer.eos_token_id in row
    free, _ = generate(model, tokenizer, PROMPTS, seed=seed, max_new_tokens=64, do_sample=True)
    for text in free:
        with pytest.raises(ValueError):
            json.loads(text)


def test_generate_with_other_warpers(model, tokenizer):
    """Temperature, top-k and top-p run after the mask; the output still matches."""
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.choice(["yes", "no", "maybe not"]), tokenizer)
    texts, _ = generate(
        model, tokenizer, PROMPTS, [proc], seed=3, max_new_tokens=8, do_sample=True, temperature=1.5, top_k=5, top_p=0.9
    )
    assert all(t in ("yes", "no", "maybe not") for t in texts), texts


def test_processor_is_reused_across_generate_calls(model, tokenizer):
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.regex(BOUNDED), tokenizer)
    for prompts in (PROMPTS, PROMPTS[:2], PROMPTS, ["Hark"], ["Hark"]):
        # batch size changes, same prompts again, a shorter prompt: each a new generation
        texts, _ = generate(model, tokenizer, prompts, [proc], seed=5, max_new_tokens=24, do_sample=True)
        assert len(texts) == len(prompts)
        assert all(re.fullmatch(BOUNDED, t) for t in texts), texts
    proc.reset()
    texts, _ = generate(model, tokenizer, PROMPTS, [proc], max_new_tokens=24, do_sample=False)
    assert all(re.fullmatch(BOUNDED, t) for t in texts), texts


@pytest.mark.parametrize("device", DEVICES)
def test_masks_equal_the_matchers_allowed_sets(vocab, tokenizer, device):
    """Direct calls: each row's finite scores are exactly its matcher's allowed tokens,
    also with logits wider than the vocabulary (padded embeddings)."""
    grammar = corral.Grammar.json_schema(SCHEMA)
    proc = corral_tf.CorralLogitsProcessor(grammar, tokenizer)
    rng = np.random.default_rng(0)
    width = vocab.size + 64
    input_ids = torch.tensor([[0, 0, 5, 6], [7, 8, 9, 10]], device=device)
    history = [[], []]
    for step in range(12):
        scores = torch.randn(2, width, device=device)
        out = proc(input_ids, scores)
        assert out is scores
        new = []
        for row in range(2):
            expected = expected_allowed(grammar, vocab, history[row])
            got = finite_ids(out[row])
            assert np.array_equal(got, expected), (step, row)
            assert got.max() < vocab.size
            choices = [t for t in expected if t not in vocab.eos_token_ids] or list(expected)
            tok = int(rng.choice(choices))
            history[row].append(tok)
            new.append(tok)
        input_ids = torch.cat([input_ids, torch.tensor(new, device=device)[:, None]], dim=1)
    assert proc.generated_token_ids == [h[:-1] for h in history]


def test_finished_rows_allow_only_eos_and_pad(vocab):
    """A row that accepted EOS (and a row that generate() filled with the pad token) only
    gets EOS and the pad token; the other row goes on."""
    pad = 5
    grammar = corral.Grammar.choice(["yes", "no"])
    fake_tokenizer = types.SimpleNamespace(pad_token_id=pad)
    proc = corral_tf.CorralLogitsProcessor(grammar, fake_tokenizer, vocab=vocab)
    no = vocab_token(vocab, "no")
    input_ids = torch.tensor([[1], [2]])
    proc(input_ids, torch.zeros(2, vocab.size))
    input_ids = torch.cat([input_ids, torch.tensor([[no], [no]])], dim=1)
    out = proc(input_ids, torch.zeros(2, vocab.size))
    assert np.array_equal(finite_ids(out[0]), [0])  # "no" is complete: only EOS
    # Row 0 takes EOS, row 1 gets the pad token (as generate() writes into rows it stopped).
    input_ids = torch.cat([input_ids, torch.tensor([[0], [pad]])], dim=1)
    out = proc(input_ids, torch.zeros(2, vocab.size))
    assert np.array_equal(finite_ids(out[0]), [0, pad])
    assert np.array_equal(finite_ids(out[1]), [0, pad])
    # Later tokens of finished rows are ignored.
    input_ids = torch.cat([input_ids, torch.tensor([[pad], [0]])], dim=1)
    out = proc(input_ids, torch.zeros(2, vocab.size))
    assert np.array_equal(finite_ids(out[1]), [0, pad])


def vocab_token(vocab, text: str) -> int:
    ids = [i for i in range(vocab.size) if vocab.token_bytes(i) == text.encode()]
    assert ids, text
    return ids[0]


class ForceToken(LogitsProcessor):
    """Makes generate() pick ``token`` at step ``at`` whatever the earlier processors said."""

    def __init__(self, token: int, at: int):
        self.token, self.at, self.calls = token, at, 0

    def __call__(self, input_ids, scores):
        if self.calls == self.at:
            scores = torch.full_like(scores, -1e9)
            scores[:, self.token] = 0.0
        self.calls += 1
        return scores


def test_rejected_token_raises_matcher_error(model, tokenizer, vocab):
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.regex(DIGITS), tokenizer)
    letter = vocab_token(vocab, "a")
    with pytest.raises(corral.MatcherError, match="does not continue the constraint"):
        generate(model, tokenizer, PROMPTS, [proc, ForceToken(letter, at=1)], max_new_tokens=8, do_sample=False)
    # The error is a corral error and a ValueError.
    assert issubclass(corral.MatcherError, corral.CorralError)


def test_reordered_rows_raise(tokenizer, vocab):
    """Beam search reorders rows between steps: detected, not silently mis-tracked."""
    proc = corral_tf.CorralLogitsProcessor(corral.Grammar.regex(DIGITS), tokenizer)
    one, two = vocab_token(vocab, "1"), vocab_token(vocab, "2")
    prompt = torch.tensor([[10, 11], [10, 11]])
    proc(prompt, torch.zeros(2, vocab.size))
    step1 = torch.cat([prompt, torch.tensor([[one], [two]])], dim=1)
    proc(step1, torch.zeros(2, vocab.size))
    swapped = torch.cat([step1[[1, 0]], torch.tensor([[one], [one]])], dim=1)
    with pytest.raises(corral.MatcherError, match="(?i)beam search"):
        proc(swapped, torch.zeros(2, vocab.size))
    # A new generation whose prompt extends the previous one needs reset().
    proc.reset()
    proc(prompt, torch.zeros(2, vocab.size))
    longer = torch.cat([prompt, torch.tensor([[one, two], [one, two]])], dim=1)
    with pytest.raises(corral.MatcherError, match="reset"):
        proc(longer, torch.zeros(2, vocab.size))
    proc.reset()
    out = proc(longer, torch.zeros(2, vocab.size))  # now its prompt
    assert np.array_equal(finite_ids(out[0]), expected_allowed(corral.Grammar.regex(DIGITS), vocab, []))


def test_transformers_processor_argument_errors(tokenizer, vocab):
    grammar = corral.Grammar.regex(DIGITS)
    with pytest.raises(TypeError):
        corral_tf.CorralLogitsProcessor(grammar)
    with pytest.raises(TypeError):
        corral_tf.CorralLogitsProcessor(DIGITS, tokenizer)
    with pytest.raises(TypeError):
        corral_tf.CorralLogitsProcessor(grammar, tokenizer, vocab="not a vocabulary")
    proc = corral_tf.CorralLogitsProcessor(grammar, None, vocab=vocab)
    with pytest.raises(corral.MatcherError, match="same batch"):
        proc(torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, vocab.size))
    with pytest.raises(corral.RegexSyntaxError):
        corral_tf.CorralLogitsProcessor(corral.Grammar.regex("[0-9"), tokenizer)
    # An already compiled grammar is accepted.
    compiled = corral.compile(grammar, vocab)
    assert corral_tf.CorralLogitsProcessor(compiled, tokenizer).compiled is compiled


def test_docs_transformers_example_runs():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    assert "CorralLogitsProcessor" in example and "builtin_model_path" in example
    torch.manual_seed(0)
    exec(compile(example, "docs/integrations.md", "exec"), {})


# -- vLLM: the per-request callable ------------------------------------------------------


def next_logits(model, prompt_ids, output_ids) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([list(prompt_ids) + list(output_ids)])).logits[0, -1].clone()


def sample(logits, generator, greedy: bool) -> int:
    if greedy:
        return int(torch.argmax(logits))
    return int(torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator))


def run_request(model, proc, prompt_ids, *, eos, greedy, seed, max_tokens):
    generator = torch.Generator().manual_seed(seed)
    output: list = []
    while len(output) < max_tokens:
        logits = proc(output, next_logits(model, prompt_ids, output))
        tok = sample(logits, generator, greedy)
        output.append(tok)
        if tok == eos:
            break
    return output


@pytest.mark.parametrize("greedy", [True, False])
def test_request_processor_generates_matching_text(model, tokenizer, vocab, greedy):
    eos = tokenizer.eos_token_id
    regex = corral_vllm.CorralRequestLogitsProcessor(corral.Grammar.regex(BOUNDED), tokenizer)
    schema = corral_vllm.CorralRequestLogitsProcessor(corral.Grammar.json_schema(SCHEMA), vocab)

    def valid_json(text):
        jsonschema.validate(json.loads(text), SCHEMA)
        return True

    for seed, prompt in enumerate(PROMPTS):
        prompt_ids = tokenizer(prompt)["input_ids"]
        for proc, check in ((regex, lambda t: re.fullmatch(BOUNDED, t)), (schema, valid_json)):
            proc = proc.fresh()
            out = run_request(model, proc, prompt_ids, eos=eos, greedy=greedy, seed=seed, max_tokens=64)
            assert out[-1] == eos, out
            text = vocab.decode_bytes(out).decode()
            assert check(text), text
    # Without the processor the model does not write this.
    prompt_ids = tokenizer("ROMEO:")["input_ids"]
    unguided = run_request(model, lambda o, logits: logits, prompt_ids, eos=eos, greedy=greedy, seed=0, max_tokens=12)
    free = vocab.decode_bytes(unguided).decode("utf-8", "replace")
    assert not re.fullmatch(BOUNDED, free), free


@pytest.mark.parametrize("device", DEVICES)
def test_request_processor_follows_growing_repeated_and_shrinking_output(model, tokenizer, vocab, device):
    grammar = corral.Grammar.json_schema(SCHEMA)
    proc = corral_vllm.CorralRequestLogitsProcessor(grammar, tokenizer)
    prompt_ids = tokenizer("KING")["input_ids"]
    text = '{"name":"Kate","age":12,"ok":true}'
    tokens = tokenizer(text)["input_ids"]

    def check(output):
        logits = proc(list(output), next_logits(model, prompt_ids, output).to(device))
        assert np.array_equal(finite_ids(logits), expected_allowed(grammar, vocab, output)), output

    for n in range(len(tokens) + 1):
        check(tokens[:n])
        check(tokens[:n])  # called again with the same length
    check(tokens[:3])  # shrink
    other = tokenizer('{"name":"Bob","age":7')["input_ids"]
    assert other[:2] == tokens[:2] and other != tokens[: len(other)]
    check(other)  # a different continuation of a common prefix
    check(tuple(tokens) + (tokenizer.eos_token_id,))  # finished: only EOS
    assert np.array_equal(finite_ids(proc(tokens + [0, 0], torch.zeros(vocab.size, device=device))), [0])
    check(tokens[:5])  # back before EOS
    proc.reset()
    check([])
    # A [1, vocab] row works too.
    out = proc([], torch.zeros(1, vocab.size + 10, device=device))
    assert np.array_equal(finite_ids(out[0]), expected_allowed(grammar, vocab, []))


def test_request_processor_rejected_token(tokenizer, vocab):
    grammar = corral.Grammar.regex(DIGITS)
    letter = vocab_token(vocab, "a")
    proc = corral_vllm.CorralRequestLogitsProcessor(grammar, vocab)
    with pytest.raises(corral.MatcherError, match="does not continue"):
        proc([letter], torch.zeros(vocab.size))
    lenient = corral_vllm.CorralRequestLogitsProcessor(grammar, vocab, on_reject="eos")
    out = lenient([letter], torch.zeros(vocab.size))
    assert np.array_equal(finite_ids(out), vocab.eos_token_ids)
    # Rolling back past the bad token clears it.
    out = lenient([], torch.zeros(vocab.size))
    assert np.array_equal(finite_ids(out), expected_allowed(grammar, vocab, []))
    with pytest.raises(ValueError):
        corral_vllm.CorralRequestLogitsProcessor(grammar, vocab, on_reject="ignore")


def test_request_processor_signature_is_the_two_argument_form(vocab):
    import inspect

    proc = corral_vllm.CorralRequestLogitsProcessor(corral.Grammar.regex(DIGITS), vocab)
    assert list(inspect.signature(proc).parameters) == ["output_token_ids", "logits"]


# -- vLLM: the v1 batch-level processor ----------------------------------------------------


class FakeBatchUpdate:
    """Shaped like vllm.v1.sample.logits_processor.BatchUpdate."""

    def __init__(self, batch_size, removed, added, moved):
        self.batch_size, self.removed, self.added, self.moved = batch_size, removed, added, moved


class Direction:
    """Stands in for vLLM's MoveDirectionality enum (compared by name)."""

    UNIDIRECTIONAL = types.SimpleNamespace(name="UNIDIRECTIONAL")
    SWAP = types.SimpleNamespace(name="SWAP")


class FakeRequest:
    def __init__(self, rid, prompt, extra_args, max_tokens, greedy):
        self.rid = rid
        self.prompt_ids = None
        self.prompt = prompt
        self.params = types.SimpleNamespace(extra_args=extra_args, max_tokens=max_tokens)
        self.greedy = greedy
        self.output: list = []  # the live list the processor holds a reference to
        self.done = False


class FakeEngine:
    """vLLM's persistent batch, as docs/design/logits_processors.md describes it: finished
    requests are replaced by new ones (Add at their index), extra new ones are appended,
    left-over holes are removed and condensed (unidirectional moves from the end), then the
    batch may be reordered with swaps."""

    def __init__(self, model, tokenizer, proc, seed=0):
        self.model, self.tokenizer, self.proc = model, tokenizer, proc
        self.slots: list = []
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator().manual_seed(seed)
        self.eos = tokenizer.eos_token_id
        self.finished: list = []
        self.checked_rows = 0
        self.ops = {"replace": 0, "append": 0, "remove": 0, "move": 0, "swap": 0}

    def step(self, arrivals=()):
        removed, added, moved = [], [], []
        holes = [i for i, r in enumerate(self.slots) if r.done]
        for r in self.slots:
            if r.done:
                self.finished.append(r)
        new = list(arrivals)
        for i in list(holes):
            if not new:
                break
            req = new.pop(0)
            self.slots[i] = req
            holes.remove(i)
            added.append((i, req.params, req.prompt_ids, req.output))
            self.ops["replace"] += 1
        for req in new:
            self.ops["append"] += 1
            added.append((len(self.slots), req.params, req.prompt_ids, req.output))
            self.slots.append(req)
        for i in holes:
            self.ops["remove"] += 1
            removed.append(i)
            self.slots[i] = None
        while None in self.slots:
            hole = self.slots.index(None)
            last = max(i for i, r in enumerate(self.slots) if r is not None) if any(self.slots) else -1
            if last < hole:
                del self.slots[hole:]
                break
            moved.append((last, hole, Direction.UNIDIRECTIONAL))
            self.ops["move"] += 1
            self.slots[hole], self.slots[last] = self.slots[last], None
        if len(self.slots) >= 2 and self.rng.random() < 0.5:
            a, b = (int(x) for x in self.rng.choice(len(self.slots), 2, replace=False))
            moved.append((a, b, Direction.SWAP))
            self.ops["swap"] += 1
            self.slots[a], self.slots[b] = self.slots[b], self.slots[a]
        update = FakeBatchUpdate(len(self.slots), removed, added, moved) if (removed or added or moved) else None
        self.proc.update_state(update)
        # The processor tracks exactly the constrained requests, at their current rows.
        constrained = {i for i, r in enumerate(self.slots) if corral_vllm.grammar_from_extra_args(r.params.extra_args)}
        assert set(self.proc._requests) == constrained
        if not self.slots:
            return
        logits = torch.stack([next_logits(self.model, r.prompt_ids, r.output) for r in self.slots])
        original = logits.clone()
        out = self.proc.apply(logits)
        for row, req in enumerate(self.slots):
            grammar = corral_vllm.grammar_from_extra_args(req.params.extra_args)
            if grammar is None:
                assert torch.equal(out[row], original[row]), "an unconstrained row was changed"
            else:
                expected = expected_allowed(grammar, self.proc.vocab, req.output)
                assert np.array_equal(finite_ids(out[row]), expected), (req.rid, req.output)
                self.checked_rows += 1
            tok = sample(out[row], self.generator, req.greedy)
            req.output.append(tok)  # vLLM appends to the same list object
            if tok == self.eos or len(req.output) >= req.params.max_tokens:
                req.done = True


def fake_vllm_config():
    model_config = types.SimpleNamespace(
        tokenizer=str(builtin_model_path()), tokenizer_revision=None, trust_remote_code=False
    )
    return types.SimpleNamespace(model_config=model_config)


def test_batch_processor_drives_a_changing_batch(model, tokenizer):
    proc = corral_vllm.CorralLogitsProcessor(fake_vllm_config(), torch.device("cpu"), False)
    assert proc.is_argmax_invariant() is False
    assert proc.needs_output_token_ids() is True
    if corral_vllm.HAVE_VLLM:  # pragma: no cover - vLLM is not installed here
        from vllm.v1.sample.logits_processor import LogitsProcessor as VLLMLogitsProcessor

        assert isinstance(proc, VLLMLogitsProcessor)
    engine = FakeEngine(model, tokenizer, proc)
    specs = [
        ({"corral_regex": BOUNDED}, False),
        (None, False),  # no corral argument: untouched
        ({"corral_json_schema": json.dumps(SCHEMA)}, False),
        ({"corral_choice": ["yes", "no", "maybe not"]}, True),
        ({"other_extension": 1}, True),
        ({"corral_json_schema": SCHEMA}, True),
        ({"corral_regex": DIGITS}, False),  # unbounded: stops at max_tokens
        ({"corral_lark": 'start: "ay" | "nay"'}, False),
    ]
    requests = []
    for i, (extra, greedy) in enumerate(specs):
        req = FakeRequest(i, PROMPTS[i % 3], extra, max_tokens=10 if i == 6 else 64, greedy=greedy)
        req.prompt_ids = tokenizer(req.prompt)["input_ids"]
        requests.append(req)
    pending = requests[3:]
    engine.step(requests[:3])
    for step in range(1, 300):
        arrivals = []
        if step == 2:  # two arrivals while nothing finished: appended
            arrivals, pending[:2] = pending[:2], []
        elif pending and any(r.done for r in engine.slots):  # an arrival takes a finished one's row
            arrivals = [pending.pop(0)]
        engine.step(arrivals)
        if not pending and not engine.slots:
            break
    assert all(r.done for r in requests)
    assert engine.checked_rows > 40
    assert all(engine.ops.values()), engine.ops  # every kind of batch change happened
    for req in requests:
        text = tokenizer.decode(req.output, skip_special_tokens=True)
        extra = req.params.extra_args or {}
        if "corral_regex" in extra:
            assert re.fullmatch(extra["corral_regex"], text), (req.rid, text)
        elif "corral_json_schema" in extra:
            jsonschema.validate(json.loads(text), SCHEMA)
        elif "corral_choice" in extra:
            assert text in extra["corral_choice"], text
        elif "corral_lark" in extra:
            assert text in ("ay", "nay"), text
    # The unconstrained requests wrote free text.
    assert not re.fullmatch(BOUNDED, tokenizer.decode(requests[1].output, skip_special_tokens=True))
    # Every removed or finished request's state is gone.
    assert proc._requests == {}


@pytest.mark.parametrize("device", DEVICES)
def test_batch_processor_replacement_and_readded_request(tokenizer, vocab, device):
    proc = corral_vllm.CorralLogitsProcessor(fake_vllm_config(), device, device == "cuda")
    grammar = corral.Grammar.regex(DIGITS)
    params = types.SimpleNamespace(extra_args={"corral_regex": DIGITS})
    plain = types.SimpleNamespace(extra_args=None)
    one = vocab_token(vocab, "1")
    output = [one, one]  # e.g. a preempted request added back with its output so far
    proc.update_state(FakeBatchUpdate(2, [], [(0, params, None, output), (1, params, None, [])], []))
    out = proc.apply(torch.zeros(2, vocab.size, device=device))
    assert np.array_equal(finite_ids(out[0]), expected_allowed(grammar, vocab, output))
    assert np.array_equal(finite_ids(out[1]), expected_allowed(grammar, vocab, []))
    # A request without corral arguments replaces row 1: that row is no longer masked.
    proc.update_state(FakeBatchUpdate(2, [], [(1, plain, None, [])], []))
    out = proc.apply(torch.zeros(2, vocab.size, device=device))
    assert torch.isfinite(out[1]).all()
    # No update at all (None), then output growing by reference.
    output.append(one)
    proc.update_state(None)
    out = proc.apply(torch.zeros(2, vocab.size, device=device))
    assert np.array_equal(finite_ids(out[0]), expected_allowed(grammar, vocab, output))
    # Removed: nothing is masked any more.
    proc.update_state(FakeBatchUpdate(1, [0], [], []))
    out = proc.apply(torch.zeros(2, vocab.size, device=device))
    assert torch.isfinite(out).all()


def test_batch_processor_params_and_rejections(tokenizer, vocab):
    validate = corral_vllm.CorralLogitsProcessor.validate_params
    validate(types.SimpleNamespace(extra_args=None))
    validate(types.SimpleNamespace(extra_args={"corral_regex": DIGITS}))
    for bad in (
        {"corral_regex": DIGITS, "corral_choice": ["a"]},
        {"corral_regex": "[0-9"},
        {"corral_regex": 5},
        {"corral_choice": "yes"},
        {"corral_json_schema": {"type": "no such type"}},
        {"corral_json_schema": 3},
    ):
        with pytest.raises(ValueError) as info:
            validate(types.SimpleNamespace(extra_args=bad))
        assert isinstance(info.value, corral.CorralError), bad

    letter = vocab_token(vocab, "a")
    params = types.SimpleNamespace(extra_args={"corral_regex": DIGITS})
    proc = corral_vllm.CorralLogitsProcessor(fake_vllm_config(), "cpu", False)
    proc.update_state(FakeBatchUpdate(1, [], [(0, params, None, [letter])], []))
    out = proc.apply(torch.zeros(1, vocab.size))  # logged; the request may only end
    assert np.array_equal(finite_ids(out[0]), vocab.eos_token_ids)

    class Strict(corral_vllm.CorralLogitsProcessor):
        on_reject = "raise"

    strict = Strict(fake_vllm_config(), "cpu", False)
    strict.update_state(FakeBatchUpdate(1, [], [(0, params, None, [letter])], []))
    with pytest.raises(corral.MatcherError):
        strict.apply(torch.zeros(1, vocab.size))


def test_batch_processor_structural_tags_tool_calls_and_reasoning(tokenizer, vocab):
    """The constraint keys beyond the text grammars, and the reasoning end marker: each
    request's allowed set equals its grammar's, and bad values are clear errors."""
    validate = corral_vllm.CorralLogitsProcessor.validate_params
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    tag = {"type": "structural_tag", "format": {"type": "tag", "begin": "<a>", "content": {"type": "json_schema", "json_schema": schema}, "end": "</a>"}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    for bad in (
        {"corral_structural_tag": "{not json"},
        {"corral_structural_tag": {"type": "structural_tag", "format": {"type": "no such format"}}},
        {"corral_tool_calls": [1, 2]},
        {"corral_tool_calls": {"tools": tools, "format": "no such format"}},
        {"corral_tool_calls": {"tools": tools, "no_such_option": 1}},
        {"corral_reasoning_end": "</think>"},
        {"corral_regex": DIGITS, "corral_reasoning_end": ""},
    ):
        with pytest.raises(ValueError) as info:
            validate(types.SimpleNamespace(extra_args=bad))
        assert isinstance(info.value, corral.CorralError), bad
    requests = [
        ({"corral_structural_tag": json.dumps(tag)}, corral.Grammar.structural_tag(tag)),
        ({"corral_tool_calls": {"tools": tools, "format": "hermes"}}, corral.Grammar.tool_calls(tools, format="hermes")),
        ({"corral_regex": DIGITS, "corral_reasoning_end": "</r>"}, None),
    ]
    # Two schemas that differ only in property order are two grammars (the output's order).
    ab = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
    ba = {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}}, "required": ["a", "b"]}
    first = corral.compile(corral_vllm.grammar_from_extra_args({"corral_json_schema": ab}), vocab)
    second = corral.compile(corral_vllm.grammar_from_extra_args({"corral_json_schema": ba}), vocab)
    assert first.matches(b'{"a":1,"b":2}') and second.matches(b'{"b":2,"a":1}')
    assert not second.matches(b'{"a":1,"b":2}')
    proc = corral_vllm.CorralLogitsProcessor(fake_vllm_config(), "cpu", False)
    outputs = [[] for _ in requests]
    added = [(i, types.SimpleNamespace(extra_args=extra), None, outputs[i]) for i, (extra, _) in enumerate(requests)]
    proc.update_state(FakeBatchUpdate(len(requests), [], added, []))
    reasoning = corral.compile(corral.Grammar.regex(r"(?s:(?:(?!</r>).)*)</r>") + corral.Grammar.regex(DIGITS), vocab)
    checks = [corral.compile(g, vocab).matcher() if g is not None else reasoning.matcher() for _, g in requests]
    texts = [b"<a>{", b"<tool_call>", b"hm </r>12"]
    for step in range(4):
        out = proc.apply(torch.zeros(len(requests), vocab.size))
        for i, m in enumerate(checks):
            row = corral.allocate_bitmask(1, vocab.size)
            m.fill_bitmask(row)
            want = np.flatnonzero(np.unpackbits(row[0].view(np.uint8), bitorder="little")[: vocab.size])
            assert np.array_equal(finite_ids(out[i]), want), (i, step)
            token = vocab_token(vocab, texts[i][step : step + 1].decode())
            assert m.advance(token)
            outputs[i].append(token)
