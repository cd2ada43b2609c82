"""The chapter's answer, stated first: sentences written from Experiment 1's runs (:func:`.experiments.moment_table`)
and read from their verdict rows (:func:`.claims.moment_verdicts`, through :func:`deepnotes.show.say.say`): what the
recursion gives for E[x²] at the MLP's last layer (an expectation over the weights), whether the measured draws
follow it (each row's status, linked to the row), and where a typical draw sits (the median over the draws and the
spread of log E[x²]), which for ReLU and linear is not the mean. The first sentence stands above the small figure
(:func:`.figures.answer`), the second under it."""

from __future__ import annotations

import math
import statistics

from deepnotes.chapters.initialization import experiments as ex
from deepnotes.chapters.initialization.budget import sizes
from deepnotes.chapters.initialization.claims import HOMOGENEOUS, MOMENT_FACTOR, moment_verdicts
from deepnotes.core.config import Budget
from deepnotes.core.validate import NonNegative, Positive, Real
from deepnotes.show.say import Sentence, Statement, joined, link, say, sentence

INIT_NAMES = {"lecun": "LeCun", "he": "He", "xavier": "Xavier"}
ACT_NAMES = {
    "linear": "linear",
    "relu": "ReLU",
    "tanh": "tanh",
    "sigmoid": "sigmoid",
    "sigmoid_rescaled": "rescaled sigmoid",
    "selu": "SELU",
}


def last_moment(curve: ex.MomentCurve) -> float:
    """The mean over the weight draws of the measured E[x²] at the last layer (draw 0's where none are kept)."""
    return statistics.fmean(draw[-1] for draw in curve.draws) if curve.draws else curve.measured[-1]


def fate(moment: NonNegative, factor: Positive = MOMENT_FACTOR) -> str:
    """Where ``moment`` lies: "within" ×``factor`` of 1, "below" that band or "above" it."""
    if moment < 1 / factor:
        return "below"
    return "above" if moment > factor else "within"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number(value: Real) -> str:
    """``value`` to two significant digits, plain between 0.001 and 10⁴ ("0.0047", "350"), else as "4.6 × 10⁻¹⁹"."""
    if value == 0 or not 1e-3 <= abs(value) < 1e4:
        mantissa, exponent = f"{value:.1e}".split("e")
        return mantissa if value == 0 else f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    rounded = float(f"{value:.2g}")  # 0.9996 → 1.0: the digits follow the rounded value's decade
    return f"{rounded:.{max(1 - math.floor(math.log10(abs(rounded))), 0)}f}"


def _setting(key: tuple[str, str]) -> str:
    init, act = key
    return f"{INIT_NAMES.get(init, init)} + {ACT_NAMES.get(act, act)}"


def _grouped(keys: list[tuple[str, str]], word: str = "with") -> str:
    """'LeCun with linear or SELU and He with ReLU' (``word`` between them): the settings grouped by initialization."""
    inits = list(dict.fromkeys(init for init, _ in keys))
    parts = []
    for init in inits:
        acts = [ACT_NAMES.get(a, a) for i, a in keys if i == init]
        joined_acts = acts[0] if len(acts) == 1 else ", ".join(acts[:-1]) + " or " + acts[-1]
        parts.append(f"{INIT_NAMES.get(init, init)} {word} {joined_acts}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _expectations(table: dict[tuple[str, str], ex.MomentCurve]) -> str:
    """Which settings the recursion keeps within ×MOMENT_FACTOR of 1 at the last layer."""
    kept = [k for k, c in table.items() if fate(c.predicted[-1]) == "within"]
    return f"is within ×{MOMENT_FACTOR:g} of 1 for " + (_grouped(kept, "+") if kept else "none of the settings")


def _the_rest(table: dict[tuple[str, str], ex.MomentCurve]) -> str:
    """The range of the recursion's last-layer value over the settings it does not keep within ×MOMENT_FACTOR of 1."""
    predicted = {k: c.predicted[-1] for k, c in table.items() if fate(c.predicted[-1]) != "within"}
    if not predicted:
        return ""
    lo, hi = min(predicted, key=predicted.__getitem__), max(predicted, key=predicted.__getitem__)
    return (
        f"For the other settings the recursion puts E[x²] at the last layer between {number(predicted[lo])} "
        f"({_setting(lo)}) and {number(predicted[hi])} ({_setting(hi)}). "
    )


def _verdicts_read(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget) -> Sentence:
    """The measured draws against the recursion, one clause per status: the settings grouped by initialization,
    each activation linked to its row."""
    rows = {v.claim.split(":")[0]: v for v in moment_verdicts(table, budget)}
    groups: dict[str, list] = {}
    for key in table:
        v = rows.get(f"{key[0]} + {key[1]}")
        if v is not None:
            groups.setdefault(v.status, []).append((key, v))
    clauses = []
    for members in groups.values():
        by_init: dict[str, list] = {}
        for (init, act), v in members:
            by_init.setdefault(init, []).append(link(v, ACT_NAMES.get(act, act)))
        settings = joined([sentence(f"{INIT_NAMES.get(i, i)} + ", joined(acts, "or")) for i, acts in by_init.items()])
        verb = say(
            members[0][1],
            holds="follow it",
            approx="follow it approximately",
            wrong="do not follow it",
            undecided="are undecided",
        )
        clauses.append(sentence(verb, " for ", settings))
    return sentence("the measured draws ", joined(clauses, "; and they", sep="; they "))


def _typical(table: dict[tuple[str, str], ex.MomentCurve]) -> str:
    """Where a typical draw sits for the positively homogeneous settings: the median over the draws of E[x²] at the
    last layer against the recursion, the mean beside it, and the variance of log E[x²] across draws there."""
    homogeneous = [
        k
        for k, c in table.items()
        if k[1] in HOMOGENEOUS and len(c.draws) > 1 and fate(c.predicted[-1]) == "within"  # the scale-keeping ones
    ]
    if not homogeneous:
        return ""
    parts = []
    for k in homogeneous:
        ratios = [draw[-1] / table[k].predicted[-1] for draw in table[k].draws]
        logs = [math.log(r) for r in ratios if r > 0]
        spread = f", variance of log {number(statistics.variance(logs))}" if len(logs) > 1 else ""
        parts.append(
            f"{_setting(k)} {number(statistics.median(ratios))} (mean {number(statistics.fmean(ratios))}{spread})"
        )
    return (
        "A typical draw is not the mean: E[x²] at the last layer is a product of one factor per layer, and its median "
        f"over the draws, as a multiple of the recursion's value, is {'; '.join(parts)}"
    )


def sentences(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget) -> list[Sentence]:
    """Two sentences: where the recursion puts E[x²] (an expectation over the weights) at the last layer of the plain
    MLP, and whether the measured draws follow it (read from :func:`.claims.moment_verdicts`, each row linked); then
    the draws behind it and where a typical draw sits for ReLU and linear (:func:`_typical`)."""
    if not table:
        raise ValueError("table is empty: the answer needs Experiment 1's curves")
    curve = next(iter(table.values()))
    depth, draws = len(curve.measured) - 1, max(len(curve.draws), 1)
    width = sizes(budget).moment_width
    layers = f"{depth} layer{'s' if depth != 1 else ''}"
    first = sentence(
        f"After {layers} of a plain MLP, the recursion's E[x²] {_expectations(table)}; ",
        _verdicts_read(table, budget),
        ".",
    )
    typical = _typical(table)
    second = sentence(
        _the_rest(table)
        + f"Each row judges {draws} weight draws of a width-{width} MLP. "
        + (f"{typical}." if typical else "")
    )
    return [first, second]


def markdown(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget) -> Statement:
    """The headline shown above the answer's figure: the first of :func:`sentences`, after a bold lead."""
    return Statement(sentences(table, budget)[:1], lead="The answer, from this page's runs.")


def details(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget) -> Statement:
    """The rest of :func:`sentences`, shown under the answer's figure: the draws and a typical draw."""
    return Statement(sentences(table, budget)[1:])
