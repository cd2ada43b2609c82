"""A growth law is judged by comparing fits of the candidate forms (issue 30), not by one slope."""

import math

import pytest

from deepnotes.core.measure import loglog_slope, scaling_fits

DEPTHS = (3, 6, 12, 24, 48)
FORMS = {"log N": [math.log(n) for n in DEPTHS], "√N": [math.sqrt(n) for n in DEPTHS], "N": [float(n) for n in DEPTHS]}


@pytest.mark.parametrize("law", ["log N", "√N", "N"])
def test_the_true_form_fits_best_and_exactly(law):
    ys = [2.0 * v + 0.5 for v in FORMS[law]]
    fits = scaling_fits(DEPTHS, ys, FORMS)
    assert min(fits, key=fits.get) == law and fits[law] < 1e-12


def test_fits_tell_apart_what_one_slope_cannot():
    """Over 3…48, 0.3·log N + 1 and 0.23·√N + 0.9 have about the same log-log slope, but not the same fit."""
    log_like = [0.3 * math.log(n) + 1 for n in DEPTHS]
    sqrt_like = [0.23 * math.sqrt(n) + 0.9 for n in DEPTHS]
    assert abs(loglog_slope(DEPTHS, log_like) - loglog_slope(DEPTHS, sqrt_like)) < 0.1
    assert min(scaling_fits(DEPTHS, log_like, FORMS).items(), key=lambda kv: kv[1])[0] == "log N"
    assert min(scaling_fits(DEPTHS, sqrt_like, FORMS).items(), key=lambda kv: kv[1])[0] == "√N"
    with pytest.raises(ValueError, match="three points"):
        scaling_fits((1, 2), (1.0, 2.0), {"N": [1.0, 2.0]})
