"""The value domains of ``deepnotes.core.validate`` (issue 47): each admits its limit and refuses one past it, so a
limit written out in a rule (for the door's message) cannot drift from the constant the docs and errors quote;
and the door's exception is both a TypeError and a ValueError."""

from __future__ import annotations

import math

import pytest
from beartype.door import is_bearable

import deepnotes  # noqa: F401  (installs the door)
from deepnotes.core import validate as v
from deepnotes.errors import VALUE_SHOWN, BadArgument

# domain -> (values inside, values outside)
EDGES = {
    "Count": ((1, v.INT64_LIMIT - 1), (0, v.INT64_LIMIT, True, False)),
    "AtLeastTwo": ((2, v.INT64_LIMIT - 1), (1, v.INT64_LIMIT, True, False)),
    "AtLeastThree": ((3, v.INT64_LIMIT - 1), (2, v.INT64_LIMIT, True, False)),
    "NonNegativeCount": ((0, v.INT64_LIMIT - 1), (-1, v.INT64_LIMIT, True, False)),
    "Depth": ((1, v.DEPTH_LIMIT), (0, v.DEPTH_LIMIT + 1, True, False)),
    "Repeats": ((1, v.REPEAT_LIMIT), (0, v.REPEAT_LIMIT + 1, True, False)),
    "Symbolic": ((1, v.SYMBOLIC_LIMIT), (0, v.SYMBOLIC_LIMIT + 1, True, False)),
    "Digits": ((1, v.DIGITS_LIMIT), (0, v.DIGITS_LIMIT + 1, True, False)),
    "Workers": ((1, v.WORKER_LIMIT), (0, v.WORKER_LIMIT + 1, True, False)),
    "Amount": ((0, 10**400), (-1, 2.0, True, False)),
    "Seed": ((0, v.SEED_LIMIT - 1), (-1, v.SEED_LIMIT, True, False)),
    "Positive": ((5e-324, v.MAGNITUDE_LIMIT), (0.0, v.MAGNITUDE_LIMIT * 1.01, math.nan, 10**400, True)),
    "NonNegative": ((0.0, v.MAGNITUDE_LIMIT), (-1e-300, v.MAGNITUDE_LIMIT * 1.01, math.inf, False)),
    "Real": ((-v.MAGNITUDE_LIMIT, 0.0, v.MAGNITUDE_LIMIT), (-v.MAGNITUDE_LIMIT * 1.01, math.nan, -(10**400), True)),
    "Bound": ((-1e300, 1e300), (math.inf, math.nan, 10**400, False)),
    "Probability": ((0.0, 1.0), (-1e-9, 1.0000001, math.nan, True)),
    "Recorded": ((math.nan, math.inf, -math.inf, 0.0, 1e300), ("1.0", True, None)),
    "Integer": ((-v.INT64_LIMIT, v.INT64_LIMIT - 1), (v.INT64_LIMIT, -v.INT64_LIMIT - 1, True, False)),
}


def test_every_declared_domain_has_its_edges_checked():
    assert {name for name in EDGES} == {name for name in dir(v) if getattr(v, name) in v.DECLARED}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_a_domain_admits_its_limits_and_refuses_past_them(name):
    domain, (inside, outside) = getattr(v, name), EDGES[name]
    assert all(is_bearable(x, domain) for x in inside), [x for x in inside if not is_bearable(x, domain)]
    assert not any(is_bearable(x, domain) for x in outside), [x for x in outside if is_bearable(x, domain)]


def test_the_door_raises_a_value_error_and_a_type_error_naming_the_argument():
    from deepnotes.core.scaling import deepnorm_coefficients

    with pytest.raises(BadArgument, match="n_layers=0") as caught:
        deepnorm_coefficients(0)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)


def probe(x):
    """A function the tests annotate with one domain at a time and check at a door like the package's."""
    return x


def _checked_probe(domain):
    from beartype import BeartypeConf, beartype

    probe.__annotations__ = {"x": domain}
    return beartype(conf=BeartypeConf(is_pep484_tower=True, violation_param_type=BadArgument))(probe)


@pytest.mark.parametrize("name", sorted(EDGES))
def test_a_refused_value_is_named_with_its_domain_in_words(name):
    """Issue 64: the door's message is one sentence, the function, the parameter and its value, and the domain in the
    words made from its declared bounds, not beartype's report of a lambda (kept in ``detail``)."""
    domain, (_, outside) = getattr(v, name), EDGES[name]
    words = v.described(domain)
    assert words and "lambda" not in words
    for bad in outside:
        with pytest.raises(BadArgument) as caught:
            _checked_probe(domain)(bad)
        message, shown = str(caught.value), repr(bad)
        shown = shown if len(shown) <= VALUE_SHOWN else shown[: VALUE_SHOWN - 1] + "…"  # 10**400: its first digits
        assert message.startswith(f"probe(x={shown}): x must be {words}"), message
        assert "violates" in caught.value.detail  # beartype's report, for whoever debugs the door


def test_the_words_say_each_domains_bounds():
    """The bounds in the words are the constants the rules use (declared once: the rule and the words are made from
    the same numbers)."""
    assert v.described(v.Count) == "an integer from 1 below 2**63"
    assert v.described(v.Depth) == f"an integer from 1 to {v.DEPTH_LIMIT:,}"
    assert v.described(v.Seed) == "an integer from 0 below 2**62"
    assert v.described(v.Positive) == "a number above 0, at most 1e150"
    assert v.described(v.Probability) == "a number from 0 to 1"
    assert v.described(v.Count | None) == "an integer from 1 below 2**63, or None"
    from deepnotes.core.config import ModelConfig

    assert v.described(ModelConfig) == "a ModelConfig" and v.described(int) == "an integer"
