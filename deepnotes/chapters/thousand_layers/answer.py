"""The chapter's answer, stated first: three sentences written from the runs (every number and every
"trains" / "does not train" in them is computed here, against :data:`.claims.TRAINED`), the first above the
small figure (:func:`.figures.answer`) and the other two under it, so that the first screen holds the question,
the headline and the figure."""

from __future__ import annotations

from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.chapters.thousand_layers.budget import sizes
from deepnotes.chapters.thousand_layers.claims import TRAINED
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.validate import Finite


def _verb(median: Finite) -> str:
    return "trains" if median >= TRAINED else "does not train"


def sentences(runs: ex.Runs, budget: Budget | str) -> list[str]:
    """Three sentences: who trains at the headline depth (and where Post-LN stops), the deepest stack
    beside Post-LN, and what the map says about DeepNorm's rates."""
    budget = resolve_budget(budget)
    sub = sizes(budget)
    n, w = sub.depth, sub.loss_window
    med = {lab: runs.median(lab, n, w) for lab in ex.MAP_STYLES}
    post_curve = ex.frontier(runs, w, (*sub.frontier_depths, n))["post"]
    post_reach = ex.deepest_learning(post_curve, TRAINED)
    fails_from = min((d for d in post_curve if d > (post_reach or 0) and post_curve[d] < TRAINED), default=None)
    where = (
        "at no depth here"
        if post_reach is None
        else f"up to {post_reach} blocks" + (f" and not from {fails_from} up" if fails_from else "")
    )
    first = (
        f"With one Adam rate ({sub.lr:g}) and {runs.steps} steps, Post-LN {_verb(med['post'])} at {n} blocks "
        f"(fraction learned {med['post']:.2f}; it trains {where}), "
        f"{'while' if (med['post'] >= TRAINED) != (med['deepnorm'] >= TRAINED) else 'and'} DeepNorm "
        f"{_verb(med['deepnorm'])} "
        f"({med['deepnorm']:.2f}), Pre-LN {_verb(med['pre'])} ({med['pre']:.2f}) and ReZero "
        f"{_verb(med['rezero'])} ({med['rezero']:.2f})."
    )
    rate = ex.deepest_rate(budget)
    deep, post = (runs.median(lab, sub.deepest, w, rate) for lab in ex.DEEPEST)
    steps = runs.warmup(ex.DEEPEST[0], sub.deepest)
    warm = "a warmup over the whole run" if steps == runs.steps else f"a warmup of {steps} steps"
    second = (
        f"Past DeepNet, DeepNorm {_verb(deep)} {sub.deepest} blocks ({deep:.2f}, median of "
        f"{len(runs.at(ex.DEEPEST[0], sub.deepest, rate))} seeds) at the rate the derivation carries down "
        f"from {n} blocks ({rate:.2g}) with {warm}; Post-LN with the same settings "
        f"{_verb(post)} ({post:.2f})."
    )
    tmap = ex.trainability_map(runs, budget)
    lo, hi = min(tmap.depths), max(tmap.depths)
    best = {d: tmap.highest_trained_rate("deepnorm", d, w, TRAINED) for d in (lo, hi)}
    if None in best.values():
        third = f"On the depth × rate map, DeepNorm trains at no rate at N = {lo if best[lo] is None else hi}."
    elif best[hi] < best[lo]:
        third = (
            f"But DeepNet's constants were derived for SGD: under Adam the highest rate that trains DeepNorm "
            f"falls with depth ({best[lo]:.2g} at {lo} blocks, {best[hi]:.2g} at {hi}), the direction the "
            f"chapter's derivation of a leftover √N predicts."
        )
    else:
        third = (
            f"On the depth × rate map the highest rate that trains DeepNorm does not fall with depth "
            f"({best[lo]:.2g} at {lo} blocks, {best[hi]:.2g} at {hi}), although the chapter's derivation "
            f"leaves Adam a factor √N."
        )
    return [first, second, third]


def markdown(runs: ex.Runs, budget: Budget | str) -> str:
    """The headline shown above the answer's figure: the first of :func:`sentences`, after a bold lead."""
    budget = resolve_budget(budget)
    return f"**The answer, from this page's runs.** {sentences(runs, budget)[0]}"


def details(runs: ex.Runs, budget: Budget | str) -> str:
    """The rest of :func:`sentences`, shown under the answer's figure: the deepest stack and the map."""
    budget = resolve_budget(budget)
    return " ".join(sentences(runs, budget)[1:])
