"""The statistics the verdict doors judge by: an estimator of one value per seed and its percentile bootstrap
interval, the two depth ranges a growth law is fitted over, and whether a sample's spread lets its mean reach an
expectation (a chi-square bound on the spread of the logs)."""

from __future__ import annotations

import functools
import math
import random
import statistics
from typing import Callable

from deepnotes.core.validate import Probability, Repeats, Seed, choice

MIN_SEEDS = 3  # a training-outcome verdict rests on at least this many seeds per run
ESTIMATORS = ("mean", "median", "fraction")  # an expectation, "typically", "always / in most runs"
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_LEVEL = 0.95


def estimate(estimator: str, values: list[float]) -> float:
    """``estimator`` (one of :data:`ESTIMATORS`) of ``values``: the median, or the mean (a fraction is the mean of
    0/1 values)."""
    return float(statistics.median(values)) if estimator == "median" else statistics.fmean(values)


def bootstrap_statistic(
    samples,
    statistic: Callable[[list], float],
    resamples: Repeats = BOOTSTRAP_RESAMPLES,
    level: Probability = BOOTSTRAP_LEVEL,
    seed: Seed = 0,
) -> tuple[float, float, float]:
    """(estimate, low, high): ``statistic`` of ``samples`` (one per seed) and its percentile bootstrap interval
    at ``level``: the statistic of ``resamples`` resamples of the seeds, drawn with replacement by a seeded
    generator (the same samples give the same interval)."""
    rng = random.Random(seed)
    samples = list(samples)
    boots = [statistic(rng.choices(samples, k=len(samples))) for _ in range(resamples)]
    if not all(math.isfinite(b) for b in boots):  # a NaN would sort anywhere and min/max skip it: refuse it
        raise ValueError(f"the statistic is not finite on some resample of the seeds: {samples!r}")
    boots.sort()
    cut = (1 - level) / 2
    return statistic(samples), boots[int(cut * resamples)], boots[min(resamples - 1, int((1 - cut) * resamples))]


def bootstrap_interval(
    values,
    estimator: str,
    resamples: Repeats = BOOTSTRAP_RESAMPLES,
    level: Probability = BOOTSTRAP_LEVEL,
    seed: Seed = 0,
) -> tuple[float, float, float]:
    """(estimate, low, high): ``estimator`` of ``values`` and its percentile bootstrap interval
    (:func:`bootstrap_statistic`)."""
    choice("estimator", estimator, ESTIMATORS)
    return bootstrap_statistic(
        [float(v) for v in values], functools.partial(estimate, estimator), resamples, level, seed
    )


def depth_ranges(depths) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The lower and the upper half of ``depths`` (sorted; they share the middle depth where the count is
    odd): the two ranges a growth law is fitted over."""
    ds = sorted(depths)
    if len(ds) < 3:
        raise ValueError(f"two depth ranges need at least 3 depths, got {list(depths)!r}")
    half = (len(ds) + 1) // 2
    return tuple(ds[:half]), tuple(ds[len(ds) - half :])


SPREAD_CONFIDENCE = 0.9  # a mean is trusted where this upper confidence bound on its log-spread allows it


def log_variance_bound(logs: list[float]) -> float:
    """A one-sided SPREAD_CONFIDENCE upper bound on the variance σ² of the normal the ``logs`` are drawn
    from: (n−1)s²/χ²_{1−c}(n−1), the chi-square quantile from the regularized lower incomplete gamma
    (mpmath, SymPy's own dependency). Few samples of a heavy-tailed ratio understate its spread: three
    logs with sample variance 0.85 allow σ² up to 8."""
    import mpmath

    k = len(logs) - 1
    quantile = mpmath.findroot(  # bracketed: the CDF rises from 0 at x → 0 to 1 far above k
        lambda x: mpmath.gammainc(k / 2, 0, x / 2, regularized=True) - (1 - SPREAD_CONFIDENCE),
        (1e-12, 10.0 * k + 100.0),
        solver="illinois",
    )
    return k * statistics.variance(logs) / float(mpmath.re(quantile))


def spread_allows_mean(ratios: list[float]) -> bool:
    """Whether ``ratios`` (positive, one per sample) can estimate their expectation by their mean: at least
    MIN_SEEDS of them, and the spread σ² of their logs (its upper bound, :func:`_log_variance_bound`) small
    enough that the draws which carry a lognormal-like mean turn up among them (about once in e^{σ²}
    draws: e^{σ²} ≤ n). The spread is the samples' own, whatever the claimed value."""
    logs = [math.log(r) for r in ratios]
    return len(logs) >= MIN_SEEDS and log_variance_bound(logs) <= math.log(len(logs))
