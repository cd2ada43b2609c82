"""The answer the page opens with, read from the verdict rows it rests on (:mod:`deepnotes.show.say`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import claims, derive
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.show.say import Statement, joined, say, sentence

NAMES = {"sgd": "SGD", "adam": "Adam"}


def markdown(steps: ex.FirstSteps) -> Statement:
    """Per optimizer: which rules the derivation bounds, and what the measured slope of each says of its law."""
    rows = {(v.claim.split(":")[0]): v for v in claims.first_step_verdicts(steps)}
    sentences = []
    for opt in ex.OPTIMIZERS:
        bounded = [r for r in derive.bounded_rules(opt) if r in steps.rules]
        clauses = [
            say(
                rows[f"{name}, {opt}"],
                holds=f"{name}'s measured slope agrees",
                wrong=f"{name}'s does not",
                undecided=f"{name}'s cannot be decided from these seeds",
            )
            for name in steps.rules
        ]
        sentences.append(
            sentence(
                f"Under {NAMES[opt]}, the derivation keeps the first step's loss change flat in depth for ",
                ", ".join(bounded) if bounded else "none of the rules",
                " and lets it grow for the others; ",
                joined(clauses),
                ".",
            )
        )
    return Statement(sentences, lead="The answer, derived and measured on this page.")
