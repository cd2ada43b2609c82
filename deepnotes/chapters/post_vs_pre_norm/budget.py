"""The sizes of the chapter "post_vs_pre_norm" at every budget: one :class:`PostPreBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_sizes
from deepnotes.core.validate import Depth, Positive, Repeats


@dataclass(frozen=True)
class PostPreBudget:
    """Chapter "Post-Norm vs Pre-Norm"."""

    probe_depths: tuple[int, ...]  # depths of the stream/gradient probe at init (the last is drawn)
    slider_depths: tuple[int, ...]
    slider_steps: Repeats
    paper_depths: tuple[int, ...]  # L of the papers' sweeps (Xiong et al. Theorem 1, Liu et al. output change)
    paper_seeds: Repeats  # initializations averaged per style and depth in those sweeps
    profile_depth: Depth = 6  # Xiong et al. Fig. 3(a,b)'s layer-wise FFN gradients: their 6-layer model
    perturbation: Positive = 1e-2  # Liu et al.: δ = ε·RMS(W)·N(0, 1) on every block matrix W, this ε
    sgd_lr: Positive = 0.3  # the training comparison's SGD runs (Adam's rate is budget.warmup.lr)
    slider_lr: Positive = 3e-3  # Adam
    # live panel: every span is (min, start, max)
    live_depth: tuple[int, int, int] = (1, 24, 256)
    live_lr: tuple[float, float, float] = (1e-5, 3e-3, 1e-1)  # Adam
    live_beta: tuple[float, float, float] = (1e-2, 1.0, 10**0.5)  # init gain of the branch weights


SMOKE = PostPreBudget(
    probe_depths=(2, 6), slider_depths=(2, 4), slider_steps=3, paper_depths=(2, 4), paper_seeds=1, profile_depth=4
)
CPU = PostPreBudget(
    probe_depths=(6, 12, 24, 50, 100),
    slider_depths=(6, 12, 24, 48, 96),
    slider_steps=15,
    paper_depths=(3, 6, 12, 24, 48),
    paper_seeds=8,
)
FULL = PostPreBudget(
    probe_depths=(6, 12, 24, 50, 100),
    slider_depths=(6, 12, 24, 48, 96, 192),
    slider_steps=30,
    paper_depths=(3, 6, 12, 24, 48, 96),
    paper_seeds=16,
)
GPU = FULL

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> PostPreBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, PostPreBudget)
