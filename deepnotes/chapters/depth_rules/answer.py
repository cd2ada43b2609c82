"""The answer the page opens with, read from the verdict rows it rests on (:mod:`deepnotes.show.say`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import claims, derive
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.show.say import Statement, grouped, sentence

NAMES = {"sgd": "SGD", "adam": "Adam"}


def markdown(steps: ex.FirstSteps) -> Statement:
    """Per optimizer: the rules whose first step's order in N the derivation bounds, then the measured slopes read
    row by row, grouped by what each row says of its rule's derived law."""
    rows = claims.first_step_verdicts(steps)
    sentences = []
    for opt in ex.OPTIMIZERS:
        bounded = [r for r in derive.bounded_rules(opt) if r in steps.rules]
        mine = [v for v in rows if v.claim.split(":")[0].endswith(f", {opt}")]
        sentences.append(
            sentence(
                f"Under {NAMES[opt]}, SymPy derives an order in N of at most 0 for the first step's loss change of ",
                ", ".join(bounded) if bounded else "none of the rules",
                " and a positive order for the others; measured, ",
                grouped(
                    mine,
                    lambda v: v.claim.split(",")[0],
                    holds="agree with their derived order",
                    wrong="disagree with it",
                    undecided="cannot be decided from these seeds",
                ),
                ".",
            )
        )
    return Statement(sentences, lead="The answer, derived and measured on this page.")
