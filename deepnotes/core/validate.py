"""Argument checks shared by every module: each raises ``ValueError`` naming the bad value and what
is allowed, before anything reaches torch."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated

from beartype.vale import Is
from typing_extensions import TypeAliasType


def _is_finite(x) -> bool:
    """``math.isfinite(x)``, and False (not an OverflowError) for an int too large for a float, such as 10**400."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


SEED_LIMIT = 2**62  # seeds stay below this: torch's generators take < 2**63, and probe seeds add an offset
MAGNITUDE_LIMIT = 1e150  # a declared real is at most this in size: its square (a variance, a moment) is a float
INT64_LIMIT = 2**63  # torch and numpy hold sizes, counts and loop bounds as int64: an int at or above this is no size

_WORDS: list[tuple[object, str]] = []  # (domain, what it admits in words), for the door's messages


def _power(n: int) -> str:
    """``n`` as a reader would write it: 2**62 for a large power of two, else with thousands separators."""
    return f"2**{n.bit_length() - 1}" if n >= 2**20 and n & (n - 1) == 0 else f"{n:,}"


def _integers(name: str, low: int | None, high: int | None = None, *, below: bool = False):
    """An int domain [low, high] ([low, high) with ``below``; None: unbounded on that side) that refuses True and
    False (a bool is an int to Python, never a width or a count here, issue 64): its bounds said once, for the check
    and for the message (:func:`described`); a type alias called ``name``, so that a signature (Jupyter's
    Shift-Tab, ``help``) shows ``depth: Depth``, not the validator."""

    def admits(n):  # unannotated: the door leaves it as it is (Is[] needs its one parameter)
        return (
            not isinstance(n, bool)
            and (low is None or n >= low)
            and (high is None or (n < high if below else n <= high))
        )

    words = "an integer" + (f" from {_power(low) if low >= 0 else '-' + _power(-low)}" if low is not None else "")
    if high is not None:
        words += f" below {_power(high)}" if below else f" to {_power(high)}"
    domain = TypeAliasType(name, Annotated[int, Is[admits]])
    _WORDS.append((domain, words))
    return domain


def _numbers(name: str, words: str, admits):
    """A float domain (an int is accepted for a float, PEP 484's tower; True and False are not) admitted by ``admits``,
    read as ``words``; a type alias called ``name``, as :func:`_integers`'s."""
    domain = TypeAliasType(name, Annotated[float, Is[lambda x: not isinstance(x, bool) and admits(x)]])
    _WORDS.append((domain, words))
    return domain


SEED_LIMIT = 2**62  # seeds stay below this: torch's generators take < 2**63, and probe seeds add an offset
MAGNITUDE_LIMIT = 1e150  # a declared real is at most this in size: its square (a variance, a moment) is a float
INT64_LIMIT = 2**63  # torch and numpy hold sizes, counts and loop bounds as int64: an int at or above this is no size

Finite = _numbers("Finite", "a finite number", lambda x: _is_finite(x))
"""A finite number whose domain is not said yet: the annotation of the package's float parameters before issue 47.
The type check at the door (``deepnotes/__init__.py``) refuses NaN and ±inf (and 10**400) with a BadArgument naming
the parameter. A parameter where any finite value, of either sign, is meaningful is a :data:`Real`."""


# Value domains said once, bounds and words together, and checked at the same door (issue 47): a value outside is a
# deepnotes.errors.BadArgument (a TypeError and a ValueError) whose message names the function, the parameter, its
# value and the domain in the words made from its bounds (issue 64). The API sweep (tests/test_fuzz_api.py) reads
# them: a zero, a negative or a huge value that a declared domain holds may return a result; one that an undeclared
# ``int``, ``float`` or ``Finite`` parameter returns a result for is counted silent.
Real = _numbers("Real", "a number from -1e150 to 1e150", lambda x: _is_finite(x) and abs(x) <= MAGNITUDE_LIMIT)
"""Any number up to 1e150 in size, either sign and zero meaningful: a measured value, a bound, a coordinate."""
Bound = _numbers("Bound", "a finite number", lambda x: _is_finite(x))
"""A limit of an interval: any finite number, either sign (±1e300 stands for "no limit")."""
Integer = _integers("Integer", -INT64_LIMIT, INT64_LIMIT, below=True)
"""Any int64, either sign and zero meaningful: an offset, an axis."""
Count = _integers("Count", 1, INT64_LIMIT, below=True)
"""A size that must be at least 1: a depth, a width, a batch, a number of keys, steps or seeds."""
DEPTH_LIMIT = 10**6  # layers: every stack, probe and product over layers loops over them in Python
REPEAT_LIMIT = 10**6  # steps, seeds, draws, rounds: each one a Python loop iteration (a million is hours of training)
SYMBOLIC_LIMIT = 12  # a size SymPy expands symbol by symbol (a 12 × 12 Jacobian takes seconds; 2**40 never ends)
DIGITS_LIMIT = 1000  # mpmath's working precision, in decimal digits
WORKER_LIMIT = 512  # worker processes: more than any machine the book runs on has cores

AtLeastTwo = _integers("AtLeastTwo", 2, INT64_LIMIT, below=True)
"""A count that needs two: a vocabulary (one token predicts nothing), a sequence (a token and the next), rows whose
cosines are measured."""
AtLeastThree = _integers("AtLeastThree", 3, INT64_LIMIT, below=True)
"""A count that needs three: a masked sequence (its interior positions 1..T−2)."""
Depth = _integers("Depth", 1, DEPTH_LIMIT)
"""A number of layers or blocks, 1 to a million."""
Repeats = _integers("Repeats", 1, REPEAT_LIMIT)
"""A number of steps, seeds, draws, rounds or points, 1 to a million."""
Symbolic = _integers("Symbolic", 1, SYMBOLIC_LIMIT)
"""A size of a symbolic derivation (a matrix SymPy builds entry by entry, a series' order), 1 to 12."""
Digits = _integers("Digits", 1, DIGITS_LIMIT)
"""Decimal digits of an mpmath evaluation, 1 to 1000."""
Workers = _integers("Workers", 1, WORKER_LIMIT)
"""Worker processes, 1 to 512."""
NonNegativeCount = _integers("NonNegativeCount", 0, INT64_LIMIT, below=True)
"""A count or an index where 0 means something (no warm-up steps, the first block)."""
Amount = _integers("Amount", 0)
"""A whole amount computed from sizes, 0 or more (numbers to hold, bytes): a product of sizes may pass int64."""
Seed = _integers("Seed", 0, SEED_LIMIT, below=True)
"""A seed: an int in [0, 2**62) (see :func:`seed`)."""
Positive = _numbers("Positive", "a number above 0, at most 1e150", lambda x: _is_finite(x) and 0 < x <= MAGNITUDE_LIMIT)
"""A number above 0 and at most 1e150: a rate, a gain, a scale, a standard deviation."""
NonNegative = _numbers("NonNegative", "a number from 0 to 1e150", lambda x: _is_finite(x) and 0 <= x <= MAGNITUDE_LIMIT)
"""A number in [0, 1e150]: seconds, a tolerance, a count of FLOPs."""
Probability = _numbers("Probability", "a number from 0 to 1", lambda x: _is_finite(x) and 0 <= x <= 1)
"""A number in [0, 1]: a masking probability, a confidence level, a fraction of a norm."""
Recorded = _numbers(
    "Recorded", "a number (NaN and ±inf included), not True or False", lambda x: not isinstance(x, bool)
)
"""Any float, NaN and ±inf included: a value as a run recorded it (a diverged run's loss is NaN, inf or huge)."""

DECLARED = (
    Real,
    Bound,
    Integer,
    Count,
    AtLeastTwo,
    AtLeastThree,
    Depth,
    Repeats,
    Symbolic,
    Digits,
    Workers,
    NonNegativeCount,
    Amount,
    Seed,
    Positive,
    NonNegative,
    Probability,
    Recorded,
)
"""The annotations that say a domain (``Finite``, plain ``int`` and ``float`` do not)."""


_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "True or False", type(None): "None"}


def described(hint) -> str | None:
    """What an annotation admits, in words: a declared domain's (made from its bounds), a plain type's ("an integer",
    "a ModelConfig"), a union's joined by "or", a Literal's values; None where there are no plain words for it."""
    import typing

    for domain, words in _WORDS:
        if hint is domain or hint == domain:
            return words
    if hint in _KINDS:
        return _KINDS[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        parts = [described(a) for a in args]
        return None if None in parts else ", or ".join(parts)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is not None and args and origin in (list, tuple, set, frozenset, dict) and described(args[0]):
        return f"a {origin.__name__} of values each {described(args[0])}" if origin is not dict else None
    if isinstance(hint, type):
        name = hint.__name__
        return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"
    return None


def given(value, default):
    """``value``, or ``default`` when it is None: an argument left out gets its default, while 0, an
    empty tuple or False stay what the caller gave (and meet that argument's own check)."""
    return default if value is None else value


# The checks below are for what no annotation reaches: each item of a sequence (the door reads a list's first
# item only) and a value computed inside a function. A parameter's own annotation is never checked again inside
# (issue 64; tests/test_layout.py refuses such a re-check).


def positive_int(name: str, value) -> int:
    """``value`` as an int ≥ 1 (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def seed(name: str, value) -> int:
    """``value`` as a seed: an int in [0, 2**62) (not a bool, not 2.7 or "3", which would be truncated or
    coerced into another seed)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer in [0, 2**62), got {value!r}")
    return value


def positive_float(name: str, value) -> float:
    """``value`` as a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def choice(name: str, value, allowed: Iterable) -> object:
    """``value`` if it is one of ``allowed``. The error lists them, quoted where one holds a comma
    (variant labels such as "post, warmup")."""
    allowed = tuple(allowed)
    if value not in allowed:
        quoted = any("," in str(a) for a in allowed)
        listed = "; ".join(repr(a) for a in allowed) if quoted else ", ".join(map(str, allowed))
        raise ValueError(f"unknown {name} {value!r}; allowed: {listed}")
    return value
