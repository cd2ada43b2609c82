"""The chapter's verdicts: each claim judged from the runs through the seeds' door (replace
the skeleton's claim with the sources' own, cited from their inventories: :func:`deepnotes.show.cite.cite`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import derive
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.cost.model import Derivations
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite


def training(runs: dict[str, list[History]], budget: Budget) -> vd.VerdictTable:
    """Xiong et al. (2020): without warmup, Pre-LN trains better than Post-LN. Judged seed by seed: Pre-LN's
    fraction learned at least Post-LN's, in most seeds."""
    post, pre = runs["post"], runs["pre"]
    shown = [f"{a.fraction_learned():.2f} / {b.fraction_learned():.2f}" for a, b in zip(pre, post, strict=True)]
    return vd.VerdictTable(
        [
            vd.check_estimate(
                claim="Without warmup, Pre-LN trains at least as well as Post-LN",
                source=cite("Xiong et al. 2020", paper="Xiong et al."),
                claimed="Pre-LN's fraction learned ≥ Post-LN's, in most seeds",
                computed="Pre-LN / Post-LN fraction learned per seed: " + ", ".join(shown),
                samples=[b.fraction_learned() >= a.fraction_learned() for a, b in zip(post, pre, strict=True)],
                estimator="fraction",
                limits=vd.MOST,
                reason=f"Adam, no warmup, {len(post)} seeds per style at the chapter's depth ({budget.name} sizes)",
            )
        ]
    )


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment, as its cells call them."""
    return Derivations(((derive.pre_ln_stream_moment, ()),))
