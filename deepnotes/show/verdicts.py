"""Verdicts on the source articles' claims: the claim, the value code computed, and a status that
is decided by comparing the two, never typed by hand."""

from __future__ import annotations

import functools
import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

import sympy as sp

from deepnotes.core.validate import (
    Bound,
    Count,
    Finite,
    NonNegative,
    Probability,
    Real,
    Repeats,
    choice,
)
from deepnotes.show.cite import Cite, Source
from deepnotes.show.statistics import (
    BOOTSTRAP_LEVEL,
    ESTIMATORS,
    MIN_SEEDS,
    SPREAD_CONFIDENCE,
    bootstrap_statistic,
    depth_ranges,
    estimate,
    spread_allows_mean,
)
from deepnotes.show.verdict_words import (
    APPROX,
    HOLDS,
    UNCHECKABLE,
    WRONG,
    seeds_text,
    source_labels,
    table_html,
)

# "in most seeds": a claim about what runs do holds where the fraction of seeds doing it (its bootstrap
# interval, check_estimate) lies in this range, and is wrong where it lies below
MOST_SEEDS = (0.5, 1.0)
NO_BOUND = 1e300  # the open side of a one-sided claimed range (check_estimate and check_slope take finite bounds)


@dataclass(frozen=True)
class Outcome:
    """A training-outcome claim in its source's direction: for each run the source speaks of, whether
    it says that run trains (True) or does not (False), what the run measured (the seeds' median
    fraction learned, −inf where most diverged), the bar a run must reach to count as trained, how
    many seeds stand behind the thinnest run, and the experiment's name (``setting``: two chapters
    that report one experiment name it alike, and a test checks that they agree)."""

    expected: tuple[tuple[str, bool], ...]  # (run, the source says it trains)
    measured: tuple[tuple[str, float], ...]  # (run, median fraction learned over its seeds)
    threshold: Probability
    seeds: Repeats = 1  # the fewest seeds behind any run
    setting: str = ""  # the shared experiment's name, "" for a chapter's own

    def holds(self) -> bool:
        """Every run did as the source says: trained (≥ threshold) exactly where it is said to."""
        got = dict(self.measured)
        return all((got[run] >= self.threshold) == trains for run, trains in self.expected)


@dataclass(frozen=True)
class Verdict:
    """One row of a verdict table. ``source`` may be given as a :class:`~deepnotes.show.cite.Cite` (its text and
    what the verdict tests): the row keeps the text in ``source`` and the Cite in ``tested``."""

    claim: str  # what the source says, in English
    source: str | Cite  # where: seed file, section, equation (as the row prints it)
    claimed: str  # the source's value or formula, as text
    computed: str  # what the code computed, as text
    status: str  # HOLDS | APPROX | WRONG | UNCHECKABLE
    reason: str  # one line
    outcome: Outcome | None = None  # a training-outcome claim's direction and measurement (check_outcome)
    tested: Cite | None = None  # what it tests (its subjects, or a paper); None: not said yet (issue 61)

    def __post_init__(self):
        if self.status not in (HOLDS, APPROX, WRONG, UNCHECKABLE):
            raise ValueError(
                f"{self.claim!r}: unknown status {self.status!r}; allowed: {HOLDS}, {APPROX}, {WRONG}, {UNCHECKABLE}"
            )
        if isinstance(self.source, Cite):
            if self.tested is not None and self.tested != self.source:
                raise ValueError(f"{self.claim!r}: two different Cites, {self.source} and {self.tested}")
            object.__setattr__(self, "tested", self.source)
            object.__setattr__(self, "source", self.source.text)

    @property
    def annotated(self) -> bool:
        """Whether every item the verdict tests is in a source's appended annotated derivations (none tested: no)."""
        subjects = self.tested.subjects if self.tested else ()
        return bool(subjects) and all(c.part == "annotated" for c in subjects)

    @property
    def anchor(self) -> str:
        """The HTML id of this verdict's row on its chapter page (the claims ledger links to it): a
        hash of the claim and its source, so it stays put when a measured value changes."""
        return "verdict-" + hashlib.sha1(f"{self.claim}\n{self.source}".encode()).hexdigest()[:10]

    def __repr__(self) -> str:
        return (
            f"[{self.status}] {source_labels(self.claim)} ({source_labels(self.source)})\n"
            f"    claimed: {self.claimed} | computed: {self.computed}\n    {source_labels(self.reason)}"
        )

    def _repr_html_(self) -> str:
        return VerdictTable([self])._repr_html_()


def _fmt(x) -> str:
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def _finite_number(value) -> bool:
    """A real number (int, float, NumPy or SymPy scalar, a one-element tensor) that is finite."""
    if isinstance(value, (bool, str, bytes)):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return False


def check_number(
    claim: str,
    source: Source,
    claimed: Real,
    computed: Real,
    reason: str = "",
    rtol: NonNegative = 0.01,
    approx_rtol: NonNegative = 0.2,
) -> Verdict:
    """Holds within ``rtol``, holds approximately within ``approx_rtol``, else wrong. Both numbers must
    be finite: a NaN or inf (a diverged run, say) is no evidence either way, so it is refused, not
    judged. The tolerances are finite, ≥ 0, and ``rtol`` ≤ ``approx_rtol``."""
    for name, value in (("claimed", claimed), ("computed", computed)):
        if not _finite_number(value):
            raise ValueError(f"{claim!r}: the {name} value must be a finite number, got {value!r}")
    if rtol > approx_rtol:
        raise ValueError(f"rtol ({rtol!r}) must not exceed approx_rtol ({approx_rtol!r})")
    rel = abs(claimed - computed) / max(abs(computed), 1e-300)
    status = HOLDS if rel <= rtol else APPROX if rel <= approx_rtol else WRONG
    why = reason or f"relative difference {rel:.2g}"
    return Verdict(claim, source, _fmt(claimed), _fmt(computed), status, why)


def check_expr(claim: str, source: Source, claimed: sp.Expr, computed: sp.Expr, reason: str = "") -> Verdict:
    """Holds when SymPy proves ``claimed − computed = 0``; wrong otherwise."""
    same = sp.simplify(claimed - computed) == 0
    why = reason or ("SymPy: the two are identical" if same else "SymPy: the two differ")
    return Verdict(claim, source, sp.sstr(claimed), sp.sstr(computed), HOLDS if same else WRONG, why)


def check_order(
    claim: str, source: Source, claimed: sp.Expr, computed: sp.Expr, var: sp.Symbol, reason: str = ""
) -> Verdict:
    """A claimed order of smallness, O(``claimed``) as ``var`` → 0, against the derived ``computed``
    (the deviation, e.g. a Jacobian minus the identity): holds when the orders are equal, holds
    approximately when the claim is a looser bound (the true order is higher, so O(claimed) contains
    it), wrong when the true deviation is larger than the claim allows."""
    said, true = sp.Order(claimed, (var, 0)), sp.Order(computed, (var, 0))
    status = HOLDS if said == true else APPROX if said.contains(true) else WRONG
    why = (
        reason
        or {
            HOLDS: "SymPy: the same order",
            APPROX: f"SymPy: a loose bound, the true order is {true}",
            WRONG: f"SymPy: the true order {true} is larger",
        }[status]
    )
    return Verdict(claim, source, sp.sstr(said), sp.sstr(true), status, why)


def _truth(name: str, value) -> bool:
    """A computed truth value: a bool, a SymPy, NumPy or torch boolean; a string or a number is refused (a
    typed "no" would count as true)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, sp.logic.boolalg.BooleanAtom):
        return bool(value)
    if "bool" in str(getattr(value, "dtype", "")):  # numpy.bool_, a boolean torch scalar
        if math.prod(getattr(value, "shape", ())) != 1:
            shape = tuple(getattr(value, "shape", ()))
            raise ValueError(
                f"{name} must be one truth value, got an array of shape {shape}: reduce it (.all(), .any())"
            )
        return bool(value)
    raise ValueError(f"{name} must be a computed boolean (a comparison), got {value!r}")


def check_true(*, claim: str, source: Source, claimed: str, computed: str, ok, reason: str) -> Verdict:
    """A claim whose truth the caller computed as a boolean (``ok``: a comparison, never a literal;
    a test reads the sources and fails on ``ok=True``/``ok=False``)."""
    return Verdict(claim, source, claimed, computed, HOLDS if _truth("ok", ok) else WRONG, reason)


def _seed_values(claim: str, run: str, values) -> tuple[float, ...]:
    """One run's per-seed fractions learned, as floats (−inf for a diverged seed); at least MIN_SEEDS."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(
            f"{claim!r}: measured[{run!r}] must list one value per seed, at least {MIN_SEEDS} seeds, got {values!r}"
        )
    out = tuple(float(x) for x in values)
    if len(out) < MIN_SEEDS or any(math.isnan(x) for x in out):
        raise ValueError(
            f"{claim!r}: measured[{run!r}] needs at least {MIN_SEEDS} seeds, each a number or -inf "
            f"(a diverged seed), never NaN; got {values!r}"
        )
    return out


def check_outcome(
    *,
    claim: str,
    source: Source,
    expected: dict[str, bool],
    measured: dict[str, list[float]],
    threshold: Probability,
    reason: str,
    computed: str | None = None,
    setting: str = "",
) -> Verdict:
    """A claim about which runs train, tested in the source's own direction: ``expected`` says, per
    run, whether the source says it trains (a plain stack "is necessarily hard to train": False);
    ``measured`` gives each run's fraction learned per seed (at least :data:`MIN_SEEDS`; −inf for a
    seed that diverged). Holds when every run's median is at or past ``threshold`` exactly where
    the source says it trains. The direction, the medians, the seed count and ``setting`` (the name
    of an experiment another chapter also reports) travel with the verdict (:class:`Outcome`), so a
    test can recompute every recorded status and compare chapters."""
    missing = [run for run in expected if run not in measured]
    if missing or not expected:
        raise ValueError(f"{claim!r}: measured lacks {missing or 'every run'}; expected names {list(expected)}")
    for run, trains in expected.items():
        if not isinstance(trains, bool):
            raise ValueError(f"{claim!r}: expected[{run!r}] must be True (trains) or False, got {trains!r}")
    seeds = {run: _seed_values(claim, run, measured[run]) for run in expected}
    out = Outcome(
        tuple(expected.items()),
        tuple((run, float(statistics.median(v))) for run, v in seeds.items()),
        float(threshold),
        min(len(v) for v in seeds.values()),
        setting,
    )
    said = "; ".join(f"{run}: {'trains' if t else 'does not train'}" for run, t in expected.items())
    shown = computed or "; ".join(f"{run} {seeds_text(v)}" for run, v in seeds.items())
    return Verdict(
        claim, source, f"{said} (trained: median ≥ {threshold:g})", shown, HOLDS if out.holds() else WRONG, reason, out
    )


def too_few_seeds(n: Count) -> str:
    """Why a measured row with ``n`` < MIN_SEEDS seeds is not judged (the same words on every page)."""
    return f"{n} seed{'s' if n != 1 else ''} at this budget: a measured outcome needs at least {MIN_SEEDS}"


# A claim about what runs do late in training ("the loss settles near a constant, then diverges") is judged only on
# runs at least this long: the book's longest runs (the `full` budget's warmup comparison, 2000 steps), fixed before
# any run (issue 30). Shorter runs show what they did, as a measurement; the rule reads how long the runs were
# planned, not a budget's name, and every page applies it through :func:`late_training_gate`.
LONG_TRAINING_STEPS = 2000


def late_training_gate(*, claim: str, source: Source, claimed: str, computed: str, steps: Repeats) -> Verdict | None:
    """ "Not checkable here" for a claim about late training whose runs took fewer than
    :data:`LONG_TRAINING_STEPS` steps (what they did shown in ``computed``); None where they are long enough
    to be judged, by the caller, through the door (:func:`check_estimate`)."""
    if steps >= LONG_TRAINING_STEPS:
        return None
    why = f"a claim about long training: judged only on runs of at least {LONG_TRAINING_STEPS} steps, not these {steps}"
    return Verdict(claim, source, claimed, computed, UNCHECKABLE, why)


@dataclass(frozen=True)
class Limits:
    """The claimed range a door judges an interval against, said once for every door that takes one: [low, high],
    and where given the wider band ``approx`` (around it) of "holds approximately" (:func:`interval_status`). A
    one-sided claim gives :data:`NO_BOUND` (or its negative) for the open side."""

    low: Bound
    high: Bound
    approx: tuple[Finite, Finite] | None = None

    def __post_init__(self):
        if not self.low <= self.high:
            raise ValueError(f"Limits: low ({self.low!r}) must not exceed high ({self.high!r})")
        if self.approx is not None and not (self.approx[0] <= self.low and self.high <= self.approx[1]):
            raise ValueError(f"Limits: approx {self.approx!r} must contain [{self.low!r}, {self.high!r}]")


MOST = Limits(*MOST_SEEDS)  # "in most seeds": the fraction's claimed range, for check_estimate


def interval_status(lo: Bound, hi: Bound, limits: Limits) -> str:
    """The one rule of the door: holds when [lo, hi] lies inside [low, high] of ``limits``, wrong when wholly
    outside, else not checkable here (the samples cannot decide). With ``limits.approx`` (a wider band around
    [low, high]): holds approximately when the interval lies inside it but not inside [low, high], wrong only when
    wholly outside it."""
    if not lo <= hi:
        raise ValueError(f"interval_status needs lo <= hi; got lo={lo}, hi={hi}")
    low, high, approx = limits.low, limits.high, limits.approx
    if low <= lo and hi <= high:
        return HOLDS
    a_low, a_high = approx if approx is not None else (low, high)
    if approx is not None and a_low <= lo and hi <= a_high:
        return APPROX
    return WRONG if hi < a_low or lo > a_high else UNCHECKABLE


def check_estimate(
    *,
    claim: str,
    source: Source,
    claimed: str,
    samples,
    estimator: str,
    limits: Limits,
    reason: str,
    computed: str = "",
) -> Verdict:
    """A claim about a quantity that runs or random probes measure, judged through one door: the stated
    ``estimator`` of the ``samples`` (one per seed: ``"mean"`` for an expectation, ``"median"`` for
    "typically", ``"fraction"`` of true samples for "always / most"), with its bootstrap interval
    (:func:`~deepnotes.show.statistics.bootstrap_interval`), judged against ``limits`` by :func:`check_statistic`
    (holds inside, wrong wholly outside, not checkable here across a bound or with fewer than :data:`MIN_SEEDS`
    samples: a budget that trains one seed, and the row says so). ``computed``, where given, is shown before the
    estimate (the per-seed values behind a fraction)."""
    choice("estimator", estimator, ESTIMATORS)
    values = [float(x) for x in samples]
    if not values or not all(math.isfinite(x) for x in values):
        raise ValueError(f"{claim!r}: needs finite samples, one per seed, got {samples!r}")
    if estimator == "fraction" and not set(values) <= {0.0, 1.0}:
        raise ValueError(f"{claim!r}: a fraction counts true samples: each must be 0 or 1 (or a bool), got {samples!r}")
    return check_statistic(
        claim=claim,
        source=source,
        claimed=claimed,
        seeds=values,
        statistic=functools.partial(estimate, estimator),
        name=estimator,
        limits=limits,
        reason=reason,
        computed=computed,
    )


def check_statistic(
    *,
    claim: str,
    source: Source,
    claimed: str,
    seeds: list,
    statistic: Callable[[list], float],
    name: str,
    limits: Limits,
    reason: str,
    computed: str = "",
) -> Verdict:
    """The door for a quantity that is computed from all seeds together (the drift of the mean profile over
    layers, the worst layer of a mean): ``statistic(seeds)`` (``seeds``: one measurement per seed, any type)
    and its bootstrap interval over the seeds (:func:`bootstrap_statistic`), judged by :func:`interval_status`
    against ``limits`` (its [low, high], and the wider band of "holds approximately" where it has one); not
    checkable here with fewer than :data:`MIN_SEEDS` seeds. ``name`` says what the estimate is ("mean", "drift of
    the mean profile"); :func:`check_estimate` is this door for a mean, a median or a fraction of one number per
    seed."""
    lead = f"{computed}; " if computed else ""
    n = len(seeds)
    if n < MIN_SEEDS:
        shown = f"{lead}{name} {statistic(list(seeds)):.3g} over {n} seed{'s' if n > 1 else ''}" if n else lead
        return Verdict(claim, source, claimed, shown, UNCHECKABLE, f"{reason}; {too_few_seeds(n)}")
    est, lo, hi = bootstrap_statistic(seeds, statistic)
    if not all(math.isfinite(x) for x in (est, lo, hi)):
        raise ValueError(f"{claim!r}: the {name} of the seeds is not finite ({est!r}, interval {lo!r}–{hi!r})")
    status = interval_status(lo, hi, limits)
    shown = f"{lead}{name} {est:.3g} ({BOOTSTRAP_LEVEL:.0%} bootstrap interval {lo:.3g}–{hi:.3g}, n = {n})"
    why = reason + (
        "" if status != UNCHECKABLE else "; the interval straddles the claimed range: the samples cannot decide"
    )
    return Verdict(claim, source, claimed, shown, status, why)


def check_each_seed(
    *, claim: str, source: Source, claimed: str, shows: list[bool], reason: str, computed: str = ""
) -> Verdict:
    """A claim about what each seed shows (one random initialization probed, or one run trained), read on every
    seed: holds where most seeds show it (the fraction's bootstrap interval inside MOST_SEEDS), wrong where most do
    not, else not checkable here; fewer than MIN_SEEDS seeds are not judged (:func:`check_estimate`). ``claimed``
    gets ", in most seeds" appended."""
    return check_estimate(
        claim=claim,
        source=source,
        claimed=f"{claimed}, in most seeds",
        computed=computed,
        samples=list(shows),
        estimator="fraction",
        limits=MOST,
        reason=reason,
    )


def check_near(
    *,
    claim: str,
    source: Source,
    claimed: str,
    value: Real,
    samples,
    estimator: str,
    rtol: NonNegative,
    approx_rtol: NonNegative,
    reason: str,
    computed: str = "",
) -> Verdict:
    """A measured quantity against a number (a printed table entry, a derived value), graded like
    :func:`check_number` but through the door, the tolerances relative to the claimed ``value`` (check_number's
    are relative to the computed one): the ``estimator`` of the ``samples`` (one per seed) holds where its
    bootstrap interval lies within ``rtol``·|value| of ``value``, holds approximately within ``approx_rtol``, is
    wrong where it lies wholly beyond ``approx_rtol``, and is not checkable here otherwise (:func:`check_estimate`).
    ``value`` must not be 0 (a relative band around 0 is empty)."""
    if value == 0:
        raise ValueError(
            f"{claim!r}: value must not be 0 for a relative tolerance; compare with check_estimate's bounds"
        )
    if rtol > approx_rtol:
        raise ValueError(f"rtol ({rtol!r}) must not exceed approx_rtol ({approx_rtol!r})")
    spread = abs(value)
    return check_estimate(
        claim=claim,
        source=source,
        claimed=claimed,
        samples=samples,
        estimator=estimator,
        limits=Limits(
            value - rtol * spread,
            value + rtol * spread,
            approx=(value - approx_rtol * spread, value + approx_rtol * spread),
        ),
        reason=f"{reason}; within {rtol:.0%} of {_fmt(value)}: holds, within {approx_rtol:.0%}: approximately"
        if rtol < approx_rtol
        else f"{reason}; within {rtol:.0%} of {_fmt(value)}",
        computed=computed,
    )


def check_possible(*, claim: str, source: Source, claimed: str, observed: dict[str, bool], reason: str) -> Verdict:
    """A hedged claim ("λ may leave its scale", "learning may be very slow"): it says something can happen,
    so a run that shows it confirms it and runs that do not show it refute nothing. ``observed``: for every
    run and seed tried (named), whether it shows it. Holds where at least one does (those are named), not
    checkable here where none does."""
    if not observed:
        raise ValueError(f"{claim!r}: observed names no run")
    shown = [run for run, seen in observed.items() if _truth(run, seen)]
    computed = f"shown by {len(shown)} of {len(observed)} runs" + (f": {', '.join(shown)}" if shown else "")
    status = HOLDS if shown else UNCHECKABLE
    why = (
        "a possibility holds where a run shows it"
        if shown
        else "a possibility ('may') is not refuted by runs that do not show it"
    )
    return Verdict(claim, source, claimed, computed, status, f"{reason}; {why}")


LAW, PARTICULAR = "law", "particular"  # how a claim measured in several settings is judged (judge_settings)


def judge_settings(verdicts: list[Verdict], settings: tuple[str, ...], kind: str, own: int = 0) -> Verdict:
    """One verdict on a claim measured in several settings (``verdicts[k]`` in ``settings[k]``), by what the claim is.
    A ``"law"`` (stated without conditions, every setting inside its premises): wrong where any setting's verdict is
    wrong (a counterexample, itself resting on at least MIN_SEEDS seeds), holds where every setting holds (holds
    approximately where each at least does), else not checkable here. ``"particular"`` to one setting (a claim about
    BERT is about BERT's setting): the verdict in ``settings[own]``, the others shown as context. The row's reason
    says which rule judged it. One rule on every page (issue 61; it replaces a rule that let any disagreement
    between settings undo a counterexample)."""
    choice("kind", kind, (LAW, PARTICULAR))
    if len(verdicts) != len(settings) or len(verdicts) < 2:
        raise ValueError(f"one verdict per setting, at least two: got {len(verdicts)} for settings {settings!r}")
    if not 0 <= own < len(settings):
        raise ValueError(f"own must index one of the settings {settings!r}, got {own!r}")
    first = verdicts[own]
    if {(v.claim, v.source) for v in verdicts} != {(first.claim, first.source)}:
        raise ValueError(f"the settings' verdicts must test one claim of one source, got {[v.claim for v in verdicts]}")
    shown = "; ".join(v.computed for v in verdicts)
    each = ", ".join(f"{v.status} in {name}" for v, name in zip(verdicts, settings, strict=True))
    if kind == PARTICULAR:
        why = f"particular to {settings[own]}, judged there ({first.reason}); the other settings are context ({each})"
        return Verdict(first.claim, first.source, first.claimed, shown, first.status, why, tested=first.tested)
    statuses = [v.status for v in verdicts]
    wrong = [name for v, name in zip(verdicts, settings, strict=True) if v.status == WRONG]
    if wrong:
        status, why = WRONG, f"a law, refuted by a setting inside its premises ({', '.join(wrong)})"
    elif set(statuses) == {HOLDS}:
        status, why = HOLDS, "a law: every setting tried agrees"
    elif set(statuses) <= {HOLDS, APPROX}:
        status, why = APPROX, "a law: every setting tried agrees, approximately"
    else:
        status, why = UNCHECKABLE, "a law that no setting here refutes, but some setting cannot decide"
    return Verdict(
        first.claim, first.source, first.claimed, shown, status, f"{why} ({each}); {first.reason}", tested=first.tested
    )


def in_another_setting(v: Verdict, differences: str) -> Verdict:
    """A paper's observation (a curve of one of its figures) measured in a setting that differs from the paper's
    (``differences`` names how): the observation is particular to the paper's setting, so the book does not judge it
    (not checkable here; "wrong" is kept for claims tested inside their own premises); the reason says whether these
    runs reproduce it ("reproduced here" / "not reproduced here", with the status they would give) and names the
    differences (issue 61)."""
    said = {
        HOLDS: "reproduced here",
        APPROX: "reproduced here approximately",
        WRONG: "not reproduced here",
        UNCHECKABLE: "neither reproduced nor refuted here",
    }[v.status]
    why = f"{said} (these runs: {v.status}), in a setting that differs from the paper's: {differences}; {v.reason}"
    return Verdict(v.claim, v.source, v.claimed, v.computed, UNCHECKABLE, why, v.outcome, v.tested)


def check_slope(
    *,
    claim: str,
    source: Source,
    want: Real,
    atol: NonNegative,
    depths: Sequence[int],
    samples_by_depth: Sequence[Sequence[float]],
    reason: str,
    band: tuple[Finite, Finite] | None = None,
    depth_name: str = "N",
) -> Verdict:
    """A growth law E[y] ∝ N^want, measured at ``depths`` (``samples_by_depth[i]``: one positive value per seed
    at depths[i], the same seeds at every depth), judged over two depth ranges (:func:`depth_ranges`): in each,
    the estimator is the log-log slope of the mean over seeds (the claim is about an expectation), its interval
    a bootstrap over the seeds (:func:`bootstrap_statistic`), judged by :func:`interval_status` against
    want ± atol (or ``band`` = (low, high), for a one-sided claim such as "grows": (0.1, NO_BOUND)). Holds or
    wrong only where both ranges say the same; not checkable here where they differ (the law found depends on
    the range fitted), where either cannot decide, or with fewer than MIN_SEEDS seeds. ``depth_name`` names the
    variable in the shown ranges (N for a stack's depth, l for a layer of one stack)."""
    from deepnotes.core.measure import loglog_slope  # the fit lives with the measurements

    by_depth = dict(zip(depths, samples_by_depth, strict=True))
    seeds = min(len(v) for v in by_depth.values())
    low, high = band if band is not None else (want - atol, want + atol)
    claimed = (
        f"slope {want:g} over both ranges"
        if band is None
        else f"slope {'> ' + format(low, 'g') if high >= NO_BOUND else f'in [{low:g}, {high:g}]'} over both ranges"
    )
    band = (
        f"slope within {atol:g} of {want:g}" if band is None else claimed.replace(" over both ranges", "")
    ) + ": the slope of the mean over seeds, its bootstrap over seeds"
    if seeds < MIN_SEEDS:
        why = f"{reason}; {band}; {too_few_seeds(seeds)}"
        return Verdict(claim, source, claimed, "—", UNCHECKABLE, why)
    statuses, shown = [], []
    for rng in depth_ranges(depths):

        def slope_of_mean(idx, rng=rng):
            return loglog_slope(rng, [statistics.fmean(by_depth[n][k] for k in idx) for n in rng])

        est, lo, hi = bootstrap_statistic(list(range(seeds)), slope_of_mean)
        statuses.append(interval_status(lo, hi, Limits(low, high)))
        shown.append(f"{depth_name} = {rng[0]}..{rng[-1]}: {est:.3g} ({lo:.3g}–{hi:.3g}, {statuses[-1]})")
    status = statuses[0] if len(set(statuses)) == 1 else UNCHECKABLE
    why = f"{reason}; {band}, {seeds} seeds, over two depth ranges"
    if UNCHECKABLE in statuses:
        why += "; an interval straddles the claimed range: the samples cannot decide"
    elif status == UNCHECKABLE:
        why += ": the ranges disagree, so the law depends on the depths fitted"
    return Verdict(claim, source, claimed, "; ".join(shown), status, why)


def check_mean_at_deepest(
    claim: str,
    source: Source,
    claimed: str,
    by_depth: dict[int, list[float]],
    band: tuple[float, float],
    context: str,
    depth_name: str = "N",
) -> Verdict:
    """A claimed expectation of a positive ratio (``by_depth``: N → one value per sample), judged by the
    mean and its bootstrap interval (check_estimate, inside ``band``) at the deepest N whose samples'
    spread lets a mean reach the expectation (:func:`spread_allows_mean`); not checkable where none does."""
    rule = (
        f"a mean over n samples reaches a lognormal-like expectation only if e^σ² ≤ n (σ²: the variance of their "
        f"logs, its {SPREAD_CONFIDENCE:.0%} upper bound)"
    )
    reachable = [n for n, values in by_depth.items() if spread_allows_mean(values)]
    if not reachable:
        return uncheckable(claim, source, claimed, f"at no probed {depth_name}: {rule}; {context}")
    n = max(reachable)
    return check_estimate(
        claim=claim,
        source=source,
        claimed=f"{claimed} at {depth_name} = {n}",
        samples=by_depth[n],
        estimator="mean",
        limits=Limits(band[0], band[1]),
        reason=f"the claim is an expectation: the mean over samples at the deepest {depth_name} where {rule}; "
        f"{context}",
    )


def outcome_of(record: dict) -> Outcome:
    """An :class:`Outcome` back from its recorded form (``dataclasses.asdict``, through JSON)."""
    return Outcome(
        tuple((run, bool(t)) for run, t in record["expected"]),
        tuple((run, float(v)) for run, v in record["measured"]),
        float(record["threshold"]),
        int(record.get("seeds", 1)),
        str(record.get("setting", "")),
    )


def check_graded(*, claim: str, source: Source, claimed: str, computed: str, holds, approx, reason: str) -> Verdict:
    """A claim with a partial outcome the caller computed: holds when ``holds``, holds approximately
    when only ``approx`` (e.g. the predicted ordering without the full effect), else wrong; both are
    comparisons, never literals."""
    status = HOLDS if _truth("holds", holds) else APPROX if _truth("approx", approx) else WRONG
    return Verdict(claim, source, claimed, computed, status, reason)


def uncheckable(claim: str, source: Source, claimed: str, reason: str) -> Verdict:
    """A claim the book cannot test (e.g. about a checkpoint it does not download); ``reason`` says why."""
    return Verdict(claim, source, claimed, "—", UNCHECKABLE, reason)


# Called with every table a notebook displays as HTML; the claims ledger sets it to record the chapter's
# verdicts (deepnotes.ledger.record), and nothing is recorded while it is None.
on_display: Callable[[list[Verdict]], None] | None = None


class VerdictTable(list):
    """A list of verdicts that shows as a table (HTML) or as plain text (what nbval compares)."""

    def __repr__(self) -> str:
        return "\n".join(repr(v) for v in self)

    def _repr_html_(self) -> str:
        if on_display is not None:
            on_display(list(self))
        return table_html(self)


def check_scaling(
    claim: str, source: Source, claimed: sp.Expr, computed: sp.Expr, var: sp.Symbol, reason: str = ""
) -> Verdict:
    """Holds if identical; holds approximately if claimed/computed is a constant in ``var`` (same
    scaling, another constant); wrong if the two scale differently. ``var`` must be a symbol of one of
    the two expressions (else every constant ratio would read "same scaling")."""
    symbols = sp.sympify(claimed).free_symbols | sp.sympify(computed).free_symbols
    if not isinstance(var, sp.Symbol) or var not in symbols:
        named = ", ".join(sorted(map(str, symbols))) or "none"
        raise ValueError(f"var must be a symbol of the two expressions ({named}), got {var!r}")
    for name, expr in (("claimed", claimed), ("computed", computed)):
        expr = sp.sympify(expr)
        if expr.is_zero or expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise ValueError(f"{name} must be a finite, non-zero scale (a ratio of two scalings is read), got {expr}")
    ratio = sp.simplify(claimed / computed)
    if ratio == 1:
        status, why = HOLDS, "SymPy: identical"
    elif not ratio.has(var):
        status, why = APPROX, f"same power of {var}; off by the constant factor {sp.sstr(ratio)}"
    else:
        status, why = WRONG, f"scales differently: claimed/derived = {sp.sstr(ratio)}"
    return Verdict(claim, source, sp.sstr(claimed), sp.sstr(computed), status, reason or why)
