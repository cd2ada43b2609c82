"""The chapter's answer, stated first: sentences written from Experiment 1's probes at initialization and
Experiment 2's training runs (every number, every "less"/"no less", "falls"/"does not fall", "trains"/"does
not train" and "holds"/"does not hold" in them is computed here: a run trains when the median over its seeds
of the fraction learned reaches :data:`.claims.LEARNED`, as the chapter's verdicts read it). The first two
sit above the small figure (:func:`.figures.answer`), the rest under it."""

from __future__ import annotations

import math
import statistics

from deepnotes.chapters.post_vs_pre_norm import experiments as ex
from deepnotes.chapters.post_vs_pre_norm.claims import LEARNED
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.train import median_fraction_learned
from deepnotes.core.validate import Real
from deepnotes.shared import warmup as shared_warmup

OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}


def top_weight(probes: list[ex.StreamProbe]) -> tuple[float, float]:
    """(measured, derived) weight of the input x_0 at the top block, medians over the seeds' probes: the
    cosine of x_N with x_0 and the derivation's weight from the measured branch ratios."""
    return (
        statistics.median(p.cos_x0[-1] for p in probes),
        statistics.median(p.predicted_cos[-1] for p in probes),
    )


def gradient_ratio(probes: list[ex.StreamProbe]) -> float:
    """‖g_1‖/‖g_N‖, the gradient reaching the first block over the one reaching the last, median over seeds."""
    return statistics.median(p.grad_norms[0] / p.grad_norms[-1] for p in probes)


def _verb(median: float) -> str:
    return "trains" if median >= LEARNED else "does not train"


def _shown(median: float) -> str:
    return f"{median:.2f}" if math.isfinite(median) else "diverged"


def _under(medians: dict[str, float]) -> str:
    """Whether one variant trains, per optimizer: "does not train under Adam or SGD", "trains under Adam but
    does not train under SGD"."""
    verbs = {opt: _verb(m) for opt, m in medians.items()}
    names = [OPTIMIZER_NAMES[opt] for opt in verbs]
    if len(set(verbs.values())) == 1:
        verb = next(iter(verbs.values()))
        return f"{verb} under {(' and ' if verb == 'trains' else ' or ').join(names)}"
    return " but ".join(f"{verb} under {OPTIMIZER_NAMES[opt]}" for opt, verb in verbs.items())


def _falls(ratio: Real) -> str:
    return "falls" if ratio < 1 else "does not fall"


def sentences(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], budget: Budget | str) -> list[str]:
    """Four sentences: the input's weight left at the top of Post-LN and Pre-LN at init; whether Post-LN
    trains without and with warmup, per optimizer; the gradient reaching the first block; and the other
    variants' fractions learned with the verdict on "Post-LN needs warmup"."""
    budget = resolve_budget(budget)
    sub = budget.warmup
    depth = len(probes["post"][0].grad_norms)
    (post, post_derived), (pre, pre_derived) = top_weight(probes["post"]), top_weight(probes["pre"])
    first = (
        f"At initialization, after {depth} blocks, Post-LN keeps a weight of {post:.2f} of the input x₀ "
        f"(derived {post_derived:.2g}), {'less than' if post < pre else 'no less than'} Pre-LN's {pre:.2f} "
        f"({pre_derived:.2g})."
    )
    warm = shared_warmup.warmed(budget)
    med = {opt: {name: median_fraction_learned(hs) for name, hs in rs.items()} for opt, rs in runs.items()}
    second = (
        f"Trained {sub.steps} steps at {sub.depth} blocks, Post-LN without warmup "
        f"{_under({opt: m[shared_warmup.NO_WARMUP] for opt, m in med.items()})}; with a {sub.warmup}-step warmup "
        f"it {_under({opt: m[warm] for opt, m in med.items()})}."
    )
    g_post, g_pre = gradient_ratio(probes["post"]), gradient_ratio(probes["pre"])
    third = (
        f"At initialization the gradient {_falls(g_post)} toward the input in Post-LN (block 1 gets {g_post:.2g}× "
        f"block {depth}'s) and {_falls(g_pre)} in Pre-LN ({g_pre:.2g}×)."
    )
    fourth = " ".join(_learned_text(opt, m, warm, sub.seeds) for opt, m in med.items())
    return [first, second, third, fourth]


def _learned_text(opt: str, medians: dict[str, float], warm: str, seeds: int) -> str:
    """One optimizer's fractions learned, every variant, and whether "Post-LN needs warmup" holds there."""
    needs = medians[warm] >= LEARNED > medians[shared_warmup.NO_WARMUP]
    each = "; ".join(f"{name} {_verb(m)} ({_shown(m)})" for name, m in medians.items())
    return (
        f"Under {OPTIMIZER_NAMES[opt]} (median fraction learned of {seeds} seeds; a run trains from {LEARNED:g} up): "
        f"{each}; "
        f'so "Post-LN needs warmup" {"holds" if needs else "does not hold"} under {OPTIMIZER_NAMES[opt]}.'
    )


def markdown(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], budget: Budget | str) -> str:
    """The headline shown above the answer's figure: the first two of :func:`sentences`, after a bold lead."""
    budget = resolve_budget(budget)
    return "**The answer, from this page's runs.** " + " ".join(sentences(probes, runs, budget)[:2])


def details(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], budget: Budget | str) -> str:
    """The rest of :func:`sentences`, shown under the answer's figure: the gradients and every run's verdict."""
    budget = resolve_budget(budget)
    return " ".join(sentences(probes, runs, budget)[2:])
