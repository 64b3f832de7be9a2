"""The checks every keyword passes: numbers, token counts ("128k"), whole
counts, flags and strings, each failing with the keyword's name."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Union

import numpy as np

from . import _core

GIB = float(2**30)
GB = 1e9


def _number(name: str, value: object, *, minimum: float | None = None) -> float:
    """A finite real number, or TypeError/ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number (got {type(value).__name__})")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite (got {v})")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum:g} (got {v:g})")
    return v


Tokens = Union[float, str]
"""A token count: a number, or text as the command takes it ("32k" = 32,768, "1m", "1.5k")."""


def _tokens(name: str, value: object, *, minimum: float | None = None) -> float:
    """A token count (``_core.catalog.parse_tokens`` reads "32k" as the command's
    --context does), or TypeError/ValueError naming the field."""
    if isinstance(value, str):
        v = float(_core.catalog.parse_tokens(name, value))
        if minimum is not None and v < minimum:
            raise ValueError(f"{name} must be >= {minimum:g} (got {v:g})")
        return v
    return _number(name, value, minimum=minimum)


def _integer(name: str, value: object, *, minimum: int | None = None, maximum: int = 2**31 - 1) -> int:
    """A whole number (an int, or a float holding one), or TypeError/ValueError
    naming the field: 1.5 devices is an error, never truncated to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be an int (got {type(value).__name__})")
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v) or v != math.floor(v):
            raise ValueError(f"{name} must be a whole number (got {v:g})")
    n = int(value)
    if minimum is not None and n < minimum:
        raise ValueError(f"{name} must be >= {minimum} (got {n})")
    if n > maximum:
        raise ValueError(f"{name} must be <= {maximum} (got {n})")
    return n


def _floats(name: str, values: object) -> list[float]:
    """A sequence of finite numbers, or TypeError/ValueError naming the field."""
    # An unordered collection (set, dict keys) has no positions to keep.
    if isinstance(values, (str, bytes, AbstractSet, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of numbers (got {type(values).__name__})")
    out: list[float] = []
    for i, v in enumerate(values):
        out.append(_number(f"{name}[{i}]", v))
        if i >= 1_000_000:
            raise ValueError(f"{name} must have at most 1000000 entries")
    return out


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False (got {type(value).__name__})")
    return value


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str (got {type(value).__name__})")
    return value
