"""Models that ship with corral (no download needed), and :func:`load_model`."""

from __future__ import annotations

import pathlib

from .char_level import SHAKESPEARE_CHARS, CharLevelModel
from .numpy_gpt2 import BuiltinModel, ByteLevelBPE, NumpyGPT2, builtin_model_path
from .transformers_lm import TransformersModel
from .trivial import TrivialModel


def load_model(path: str | pathlib.Path | None = None):
    """A model for :func:`corral.generate`: the built-in model (``None``, ``"builtin"`` or
    its directory) runs in numpy; any other Hugging Face directory is loaded with
    ``transformers`` (``pip install corral[transformers,torch]``)."""
    from ..errors import GenerationError

    if path is None or str(path) == "builtin":
        return BuiltinModel()
    path = pathlib.Path(path)
    if not (path / "config.json").is_file():
        raise GenerationError(f"{path} is not a model directory (no config.json)")
    if path.resolve() == builtin_model_path().resolve():
        return BuiltinModel(path)
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        raise GenerationError(
            f"loading {path} needs transformers and torch (pip install 'corral[transformers,torch]'): {e}"
        ) from e
    return TransformersModel.from_pretrained(path)


__all__ = [
    "BuiltinModel",
    "ByteLevelBPE",
    "CharLevelModel",
    "NumpyGPT2",
    "SHAKESPEARE_CHARS",
    "TransformersModel",
    "TrivialModel",
    "builtin_model_path",
    "load_model",
]
