"""The chapter's answer, stated first: sentences written from Experiment 1's one-step probe
(:func:`.experiments.loss_change_sweep`). Every number and every "grows"/"does not grow", "stays flat"/"does
not stay flat" in them is computed here: the log-log slope of −⟨∇L, Δθ⟩/η against the depth N (the mean over
seeds at each depth, the slope the figure's key shows) against the chapter's threshold for "grows with depth"
(:data:`.claims.GROWTH_MIN_SLOPE`) and, for "stays flat", against the derivation's slope 0 within the tolerance
the page's verdicts on this sweep allow (:data:`.claims.SLOPE_ATOL`). The cures are the variants whose constants
the derivation makes depth-free for an optimizer (:func:`.experiments.predicted_slope` of 0). The first two
sentences sit above the small figure (:func:`.figures.answer`), the rest under it."""

from __future__ import annotations

from deepnotes.chapters.increment_explosion import experiments as ex
from deepnotes.chapters.increment_explosion.claims import GROWTH_MIN_SLOPE, SLOPE_ATOL
from deepnotes.core.measure import loglog_slope
from deepnotes.core.validate import Real

OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}
CONSTANTS = {"deepnorm": "DeepNet's constants", "deepnorm/adam": "Su's"}  # the cures, by variant


def slope(sweep: ex.LossChangeSweep, variant: str, optimizer: str) -> float:
    """The log-log slope of −⟨∇L, Δθ⟩/η (mean over seeds) against N over the sweep's depths."""
    return loglog_slope(sweep.depths, sweep.first_order_per_lr(variant, optimizer))


def growth(sweep: ex.LossChangeSweep, variant: str, optimizer: str) -> float:
    """How many times larger −⟨∇L, Δθ⟩/η is at the deepest depth than at the shallowest."""
    values = sweep.first_order_per_lr(variant, optimizer)
    return values[-1] / values[0]


def cures(sweep: ex.LossChangeSweep) -> list[tuple[str, str]]:
    """The (variant, optimizer) pairs whose constants the derivation makes depth-free (predicted slope 0)."""
    return [(v, o) for v, o in sweep.probes if ex.predicted_slope(v, o) == 0]


def _grows(s: Real) -> str:
    return "grows with depth" if s > GROWTH_MIN_SLOPE else "does not grow with depth"


def _flat(s: Real) -> str:
    return "stays flat" if abs(s) <= SLOPE_ATOL else "does not stay flat"


def _merged(parts: list[tuple[str, str]]) -> str:
    """(verb, what) pairs as one clause, the verb said once where every pair has the same one: "grows with
    depth under SGD (1.6) and under Adam (1.2)", else with each verb: "grows … and does not grow …"."""
    if len({verb for verb, _ in parts}) == 1:
        return f"{parts[0][0]} " + " and ".join(what for _, what in parts)
    return " and ".join(f"{verb} {what}" for verb, what in parts)


def sentences(sweep: ex.LossChangeSweep) -> list[str]:
    """Four sentences ("" where the sweep lacks the variant): Post-LN's one-step loss change against depth
    under each optimizer, with the derivation's slope; what the depth-free constants do for the optimizer
    they were derived for; Pre-LN's growth; every variant's factor from the shallowest depth to the deepest
    and its slope beside the derivation's."""
    lo, hi = sweep.depths[0], sweep.depths[-1]
    has = [o for o in sweep.optimizers if ("post", o) in sweep.probes]
    post = [
        (_grows(slope(sweep, "post", o)), f"under {OPTIMIZER_NAMES[o]} ({slope(sweep, 'post', o):.2f})") for o in has
    ]
    if post:  # the first names what the number is
        post[0] = (post[0][0], f"under {OPTIMIZER_NAMES[has[0]]} (log-log slope {slope(sweep, 'post', has[0]):.2f})")
    derived = " and ".join(sorted({f"{ex.predicted_slope('post', o):g}" for o in has}))
    first = (
        f"At initialization, Post-LN's loss change in one step, −⟨∇L, Δθ⟩/η, {_merged(post)} from N = {lo} to "
        f"{hi} blocks (the derivation: slope {derived})."
        if post
        else ""
    )
    cured = [
        (_flat(slope(sweep, v, o)), f"with {CONSTANTS.get(v, v)} under {OPTIMIZER_NAMES[o]} ({slope(sweep, v, o):.2f})")
        for v, o in cures(sweep)
    ]
    second = f"{'It' if first else 'The loss change of one step'} {_merged(cured)}." if cured else ""
    pre = [
        (_grows(slope(sweep, "pre", o)), f"under {OPTIMIZER_NAMES[o]} (slope {slope(sweep, 'pre', o):.2f})")
        for o in sweep.optimizers
        if ("pre", o) in sweep.probes
    ]
    third = f"Pre-LN's loss change {_merged(pre)}." if pre else ""
    seeds = min(len(reps) for per_depth in sweep.probes.values() for reps in per_depth)
    each = "; ".join(
        f"{v}, {OPTIMIZER_NAMES[o]}: ×{growth(sweep, v, o):.3g}, slope {slope(sweep, v, o):.2f} "
        f"({ex.predicted_slope(v, o):g})"
        for v, o in sweep.probes
    )
    fourth = (
        f"From N = {lo} to {hi} the mean over {seeds} seeds changes by these factors (fitted log-log slope, the "
        f"derivation's in brackets): {each}."
    )
    return [first, second, third, fourth]


def markdown(sweep: ex.LossChangeSweep) -> str:
    """The headline shown above the answer's figure: the first two of :func:`sentences`, after a bold lead."""
    return " ".join(["**The answer, from this page's runs.**", *(s for s in sentences(sweep)[:2] if s)])


def details(sweep: ex.LossChangeSweep) -> str:
    """The rest of :func:`sentences`, shown under the answer's figure: Pre-LN and every variant's growth."""
    return " ".join(s for s in sentences(sweep)[2:] if s)
