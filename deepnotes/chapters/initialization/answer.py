"""The chapter's answer, stated first: sentences written from Experiment 1's runs (:func:`.experiments.moment_table`),
every number and every "stays" / "falls" / "grows" in them computed here, by comparing the mean over the weight
draws of E[x²] at the MLP's last layer with 1 within the chapter's factor :data:`.claims.MOMENT_FACTOR`. The first
sentence stands above the small figure (:func:`.figures.answer`), the second under it."""

from __future__ import annotations

import math
import statistics

from deepnotes.chapters.initialization import experiments as ex
from deepnotes.chapters.initialization.budget import sizes
from deepnotes.chapters.initialization.claims import MOMENT_FACTOR
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.validate import NonNegative, Positive, Real

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
    """The word for ``moment``: "stays" within ×``factor`` of 1, "falls" below that band, "grows" above it."""
    if moment < 1 / factor:
        return "falls"
    return "grows" if moment > factor else "stays"


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


def _grouped(keys: list[tuple[str, str]]) -> str:
    """'LeCun with linear or SELU and He with ReLU': the settings grouped by initialization."""
    inits = list(dict.fromkeys(init for init, _ in keys))
    parts = []
    for init in inits:
        acts = [ACT_NAMES.get(a, a) for i, a in keys if i == init]
        joined = acts[0] if len(acts) == 1 else ", ".join(acts[:-1]) + " or " + acts[-1]
        parts.append(f"{INIT_NAMES.get(init, init)} with {joined}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _extreme(last: dict[tuple[str, str], float], keys: list[tuple[str, str]], verb: str) -> str:
    """'6 fall (to 4.6 × 10⁻¹⁹, LeCun + ReLU)': how many settings ``verb``, and the farthest of them."""
    key = (min if verb == "falls" else max)(keys, key=last.__getitem__)
    return f"{len(keys)} {verb[:-1] if len(keys) > 1 else verb} (to {number(last[key])}, {_setting(key)})"


def sentences(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget | str) -> list[str]:
    """Two sentences: which settings keep E[x²] within ×MOMENT_FACTOR of 1 at the last layer of the plain MLP and
    how far the others fall or grow; then the draws behind those values and how many settings end within that
    factor of the derivation's recursion."""
    budget = resolve_budget(budget)
    if not table:
        raise ValueError("table is empty: the answer needs Experiment 1's curves")
    last = {key: last_moment(c) for key, c in table.items()}
    by_fate = {verb: [k for k in table if fate(last[k]) == verb] for verb in ("stays", "falls", "grows")}
    curve = next(iter(table.values()))
    depth, draws = len(curve.measured) - 1, max(len(curve.draws), 1)
    width = sizes(budget).moment_width
    kept = by_fate["stays"]
    layers = f"{depth} layer{'s' if depth != 1 else ''}"
    first = f"After {layers} of a plain MLP, the second moment stays within ×{MOMENT_FACTOR:g} of 1 "
    if kept:
        lo, hi = number(min(last[k] for k in kept)), number(max(last[k] for k in kept))
        first += f"for {_grouped(kept)} ({lo if lo == hi else f'{lo}–{hi}'})"
    else:
        first += f"for none of the {len(table)} settings"
    others = [_extreme(last, by_fate[v], v) for v in ("falls", "grows") if by_fate[v]]
    if others:
        first += ("; of the rest, " if kept else "; ") + " and ".join(others)
    first += "."
    ratios = {k: last[k] / c.predicted[-1] for k, c in table.items() if c.predicted[-1] > 0}
    off = [k for k, r in ratios.items() if fate(r) != "stays"]
    second = (
        f"Each value is the mean of E[x²] at the last layer over {draws} weight draws of a width-{width} MLP; the "
        f"derivation's recursion predicts it within "
        f"×{MOMENT_FACTOR:g} for {len(ratios) - len(off)} of the {len(ratios)} settings"
        + (
            "; not for " + ", ".join(f"{_setting(k)} (measured/predicted {number(ratios[k])})" for k in off)
            if off
            else ""
        )
        + "."
    )
    return [first, second]


def markdown(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget | str) -> str:
    """The headline shown above the answer's figure: the first of :func:`sentences`, after a bold lead."""
    budget = resolve_budget(budget)
    return f"**The answer, from this page's runs.** {sentences(table, budget)[0]}"


def details(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget | str) -> str:
    """The rest of :func:`sentences`, shown under the answer's figure: the draws and the recursion."""
    budget = resolve_budget(budget)
    return " ".join(sentences(table, budget)[1:])
