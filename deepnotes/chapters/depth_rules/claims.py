"""The chapter's verdicts: for every published rule and optimizer, the derived order in N of its first step's loss
change against the slope measured on its stacks (:func:`first_step_verdicts`, the seeds' slope door)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import derive
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.core.config import Budget
from deepnotes.core.rules import PUBLISHED
from deepnotes.cost.model import Derivations
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite

SLOPE_ATOL = 0.2  # a fitted slope matches the derived order within ±0.2 (the increment chapter's; set before any run)
PAPERS = {  # the paper of each rule, as citations.PAPERS names it
    "Post-LN": "Vaswani et al.",
    "Pre-LN": "Xiong et al.",
    "DeepNorm": "DeepNet",
    "ReZero": "Bachlechner",
    "SkipInit": "SkipInit",
    "GPT-2": "Radford et al.",
    "Depth-µP": "Tensor Programs VI",
}


def first_step_verdicts(steps: ex.FirstSteps) -> vd.VerdictTable:
    """Per rule and optimizer: −ΔL of one step from initialization ∝ N^order, the order derived by SymPy for that
    rule, judged on the measured slope over two depth ranges (check_slope)."""
    orders = derive.rule_orders()
    rows = []
    for name in steps.rules:
        rule = PUBLISHED[name]
        for opt in ex.OPTIMIZERS:
            order = orders[name][opt]["order"]
            rows.append(
                vd.check_slope(
                    claim=f"{name}, {opt}: the first step's loss change grows like N^{order} (derived for this rule)",
                    source=cite(
                        f"{rule.source}, the rule; its first step derived here; measured, "
                        f"N = {steps.depths[0]}..{steps.depths[-1]}",
                        paper=PAPERS[name],
                    ),
                    want=float(order),
                    atol=SLOPE_ATOL,
                    depths=steps.depths,
                    samples_by_depth=steps.samples[(name, opt)],
                    reason=f"−⟨∇L, Δθ⟩ of one {opt} step at the rule's own rate, {len(steps.samples[(name, opt)][0])} "
                    "seeds per depth",
                )
            )
    return vd.VerdictTable(rows)


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations, as its cells call them."""
    return Derivations(((derive.rule_orders, ()),))
