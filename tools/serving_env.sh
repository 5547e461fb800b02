#!/usr/bin/env bash
# Builds .venv-serving: the environment of the serving engines' suite (tests/serving).
#
# SGLang and vLLM are installed without their dependencies (CUDA kernels, model loaders),
# then only the light modules their grammar-backend and logits-processor code imports. The
# venv sees the main environment's packages (corral, torch, transformers, the tokenizers:
# `pip install ".[test]"` first), so nothing heavy is installed twice. No GPU, no model.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-serving
python -m venv --system-site-packages "$venv"
pip="$venv/bin/pip"
"$pip" install -q --no-deps "sglang==0.5.23" "vllm==0.33.0"
# What their imports ask for, one by one (sglang.srt.constrained.*, sglang.srt.plugins,
# vllm.v1.sample.logits_processor, vllm.v1.worker.gpu_input_batch).
"$pip" install -q psutil pybase64 starlette msgspec pyzmq aiohttp openai partial_json_parser openai_harmony \
    cbor2 cloudpickle py-cpuinfo pyyaml cachetools uvloop prometheus_client fastapi
"$venv/bin/python" - <<'PY'
import sglang.srt.constrained.base_grammar_backend
import sglang.srt.plugins
import os
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
import vllm.v1.sample.logits_processor
import vllm.v1.worker.gpu_input_batch
print("serving environment ready:", __import__("sglang").__version__, "(sglang)")
PY
