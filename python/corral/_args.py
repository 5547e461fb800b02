"""Checks of the public API's arguments, shared by its entry points: a value of the wrong
type is a ``TypeError`` naming the argument (and where it was given), before any native
work starts, so the same mistake reads the same way whichever function received it."""

from __future__ import annotations

from typing import Any

from . import _core


def check_limits(limits: Any, where: str) -> None:
    """``limits`` must be None or a :class:`corral.Limits`."""
    if limits is not None and not isinstance(limits, _core.Limits):
        raise TypeError(f"{where}: limits must be None or a corral.Limits, got {type(limits).__name__}: {limits!r}")


def check_bool(value: Any, name: str, where: str) -> None:
    """``value`` must be True or False (not a truthy string such as ``"no"``)."""
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be True or False, got {type(value).__name__}: {value!r}")
