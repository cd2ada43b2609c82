"""The answer the page opens with, read from the verdict rows it rests on (:mod:`deepnotes.show.say`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import claims, derive
from deepnotes.chapters.depth_rules import experiments as ex
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


def details(steps: ex.FirstSteps) -> Statement:
    """Under the figure: SGD's sentence."""
    return Statement([_sentence(steps, "sgd")])
