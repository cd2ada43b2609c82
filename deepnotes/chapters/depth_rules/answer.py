"""The answer the page opens with, read from the verdict rows it rests on (:mod:`deepnotes.show.say`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import claims, derive
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.show.say import Statement, grouped, sentence

NAMES = {"sgd": "SGD", "adam": "Adam"}


def _sentence(steps: ex.FirstSteps, optimizer: str):
    """What SymPy derives and what the measured slopes say of it, under ``optimizer``: the rows grouped by status."""
    rows = [v for v in claims.first_step_verdicts(steps) if v.claim.split(":")[0].endswith(f", {optimizer}")]
    bounded = [r for r in derive.bounded_rules(optimizer) if r in steps.rules]
    return sentence(
        f"Under {NAMES[optimizer]}, SymPy bounds the first step of ",
        ", ".join(bounded) if bounded else "none of the rules",
        "; measured, ",
        grouped(
            rows,
            lambda v: v.claim.split(",")[0],
            holds="agree with their derived order",
            wrong="disagree with it",
            undecided="cannot be decided from these seeds",
        ),
        ".",
    )


def markdown(steps: ex.FirstSteps) -> Statement:
    """The headline, above the figure: Adam's sentence (the optimizer the rules are used with)."""
    return Statement([_sentence(steps, "adam")], lead="The answer, derived and measured on this page.")


def _transfer(runs: ex.RuleRuns, budget: Budget):
    """Whether each rule's best Adam rate went where its derived order says (kept where the order is 0, moved by
    more than a grid step elsewhere), read from the transfer rows, grouped by status."""
    sub = sizes(budget)
    return sentence(
        f"On the map, from N = {sub.map_depths[0]} to N = {sub.map_depths[-1]}, the best Adam rate ",
        grouped(
            claims.transfer_verdicts(runs, budget),
            lambda v: v.claim.split(":")[0],
            holds="goes where the derivation sends it (kept where the derived shift is within a grid step, "
            "moved further the same way elsewhere)",
            wrong="goes elsewhere",
            undecided="cannot be read from these seeds",
            before="of ",
        ),
        ".",
    )


def details(steps: ex.FirstSteps, runs: ex.RuleRuns, budget: Budget) -> Statement:
    """Under the figure: SGD's sentence, and where the best rate went (Depth-µP's claim, every rule)."""
    return Statement([_sentence(steps, "sgd"), _transfer(runs, budget)])
