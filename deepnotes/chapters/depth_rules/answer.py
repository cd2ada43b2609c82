"""The answer the page opens with, read from the verdict rows it rests on
(:mod:`deepnotes.show.say`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import claims
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.show.say import Statement, say, sentence


def markdown(runs: dict[str, list[History]], budget: Budget) -> Statement:
    """One sentence: what the runs say of the claim, in the words of its row's status."""
    (row,) = claims.training(runs, budget)
    return Statement(
        [
            sentence(
                "Without warmup, Pre-LN ",
                say(
                    row,
                    holds="learns at least as much as Post-LN in most seeds",
                    wrong="learns less than Post-LN in most seeds",
                    undecided="cannot be ranked against Post-LN from these seeds",
                ),
                ".",
            )
        ],
        lead="The answer, from this page's runs.",
    )
