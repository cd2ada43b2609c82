"""Argument checks shared by every module: each raises ``ValueError`` naming the bad value and what
is allowed, before anything reaches torch."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated

from beartype.vale import Is

Finite = Annotated[float, Is[lambda x: math.isfinite(x)]]
"""A finite real number: the annotation of the package's float parameters. The type check at the door
(``deepnotes/__init__.py``) refuses NaN and ±inf there, with a TypeError naming the parameter, before the
value can reach a formula, a loop bound or an axis limit."""

# Value domains said once in the annotation and checked at the same door (issue 47): a value outside is a
# TypeError naming the parameter, its value and the rule (``Is[lambda n: n >= 1]``).
Count = Annotated[int, Is[lambda n: n >= 1]]
"""A size that must be at least 1: a depth, a width, a batch, a number of keys or queries, a fan-in."""
NonNegativeCount = Annotated[int, Is[lambda n: n >= 0]]
"""A count where 0 means something (no layers: the identity)."""
Positive = Annotated[float, Is[lambda x: math.isfinite(x) and x > 0]]
"""A finite number above 0: a rate, a gain, a scale."""
NonNegative = Annotated[float, Is[lambda x: math.isfinite(x) and x >= 0]]
"""A finite number at least 0: seconds, a variance."""


def given(value, default):
    """``value``, or ``default`` when it is None: an argument left out gets its default, while 0, an
    empty tuple or False stay what the caller gave (and meet that argument's own check)."""
    return default if value is None else value


def positive_int(name: str, value) -> int:
    """``value`` as an int ≥ 1 (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def int_at_least(name: str, value, low: int, why: str = "") -> int:
    """``value`` as an int ≥ ``low`` (bools are refused); ``why`` says what the bound is for."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}{f' ({why})' if why else ''}, got {value!r}")
    return value


def nonnegative_int(name: str, value) -> int:
    """``value`` as an int ≥ 0 (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return value


SEED_LIMIT = 2**62  # seeds stay below this: torch's generators take < 2**63, and probe seeds add an offset


def seed(name: str, value) -> int:
    """``value`` as a seed: an int in [0, 2**62) (not a bool, not 2.7 or "3", which would be truncated or
    coerced into another seed)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer in [0, 2**62), got {value!r}")
    return value


def nonnegative_float(name: str, value) -> float:
    """``value`` as a finite number ≥ 0 (a tolerance, say; -0.0 counts as 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def positive_float(name: str, value) -> float:
    """``value`` as a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def boolean(name: str, value) -> bool:
    """``value`` if it is True or False (not a string such as "no", not 0/1)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def choice(name: str, value, allowed: Iterable) -> object:
    """``value`` if it is one of ``allowed``. The error lists them, quoted where one holds a comma
    (variant labels such as "post, warmup")."""
    allowed = tuple(allowed)
    if value not in allowed:
        quoted = any("," in str(a) for a in allowed)
        listed = "; ".join(repr(a) for a in allowed) if quoted else ", ".join(map(str, allowed))
        raise ValueError(f"unknown {name} {value!r}; allowed: {listed}")
    return value
