"""Models that ship with corral (no download needed)."""

from .numpy_gpt2 import BuiltinModel, ByteLevelBPE, NumpyGPT2, builtin_model_path
from .trivial import TrivialModel

__all__ = ["BuiltinModel", "ByteLevelBPE", "NumpyGPT2", "TrivialModel", "builtin_model_path"]
