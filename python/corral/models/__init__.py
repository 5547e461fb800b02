"""Models that ship with corral (no download needed)."""

from .trivial import TrivialModel

__all__ = ["TrivialModel"]
