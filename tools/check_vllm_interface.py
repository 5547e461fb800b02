"""Drives corral's vLLM v1 processor with vLLM's own types: ``SamplingParams`` (with
``extra_args``), ``BatchUpdate``, ``MoveDirectionality`` and the ``LogitsProcessor`` base
class, on the built-in model's logits (no engine: vLLM's CUDA wheel cannot run without a GPU).

Not part of the test suite: vLLM's wheel pins a torch other than corral's test environment's.
To run it beside corral's environment, install the wheel without its dependencies into a
separate folder, plus the light modules its interface imports::

    pip install --no-deps --target /tmp/vllm_pkg vllm==0.33.0
    pip install --no-deps --target /tmp/vllm_deps msgspec cbor2 psutil pyzmq aiohttp multidict \
        yarl propcache aiohappyeyeballs aiosignal frozenlist openai_harmony openai pybase64 \
        cachetools uvloop py-cpuinfo
    PYTHONPATH=/tmp/vllm_pkg:/tmp/vllm_deps python tools/check_vllm_interface.py
"""
import re
import types

import torch
from transformers import AutoModelForCausalLM
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

import corral
import corral.models
from corral.integrations.vllm import HAVE_VLLM, CorralLogitsProcessor

assert HAVE_VLLM and issubclass(CorralLogitsProcessor, LogitsProcessor)
path = str(corral.models.builtin_model_path())
cfg = types.SimpleNamespace(model_config=types.SimpleNamespace(tokenizer=path, tokenizer_revision=None, trust_remote_code=False))
proc = CorralLogitsProcessor(cfg, torch.device("cpu"), False)
model = AutoModelForCausalLM.from_pretrained(path).eval()
tok = __import__("transformers").AutoTokenizer.from_pretrained(path)
pats = [r"[0-9]{3}-[a-z]{2,6}", None, r"(yes|no)!"]
params = [SamplingParams(max_tokens=30, extra_args={"corral_regex": p}) if p else SamplingParams(max_tokens=30) for p in pats]
for p in params:
    CorralLogitsProcessor.validate_params(p)
try:
    CorralLogitsProcessor.validate_params(SamplingParams(extra_args={"corral_regex": "(a"}))
    raise SystemExit("bad regex accepted")
except ValueError as e:
    print("validate_params rejects a bad regex:", type(e).__name__)
prompts = [tok.encode(t) for t in ["ROMEO:\n", "JULIET:\n", "Answer: "]]
outputs = [[] for _ in pats]
proc.update_state(BatchUpdate(batch_size=3, removed=[], added=[(i, params[i], prompts[i], outputs[i]) for i in range(3)], moved=[]))
order = [0, 1, 2]  # row -> request
g = torch.Generator().manual_seed(0)
done = [False] * 3
for step in range(30):
    if step == 5:  # swap rows 0 and 2, as vLLM's condense/reorder does
        proc.update_state(BatchUpdate(batch_size=3, removed=[], added=[], moved=[(0, 2, MoveDirectionality.SWAP)]))
        order[0], order[2] = order[2], order[0]
    else:
        proc.update_state(None)
    with torch.no_grad():
        logits = torch.stack([model(torch.tensor([prompts[r] + outputs[r]])).logits[0, -1] for r in order])
    logits = proc.apply(logits)
    for row, r in enumerate(order):
        if done[r]:
            continue
        t = int(torch.multinomial(torch.softmax(logits[row], -1), 1, generator=g))
        outputs[r].append(t)  # vLLM appends to the live list in place
        if t == tok.eos_token_id:
            done[r] = True
texts = [tok.decode([t for t in o if t != tok.eos_token_id]) for o in outputs]
print(texts)
assert re.fullmatch(pats[0], texts[0]) and re.fullmatch(pats[2], texts[2]) and done[0] and done[2]
assert not re.fullmatch(pats[0], texts[1])
print("OK: real BatchUpdate/SamplingParams/MoveDirectionality; constrained rows fit, the free row is untouched")
