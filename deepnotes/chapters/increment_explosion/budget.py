"""The sizes of the chapter "increment_explosion" at every budget: one :class:`IncrementBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_rates, chapter_sizes
from deepnotes.core.validate import Positive, Repeats


@dataclass(frozen=True)
class IncrementBudget:
    """Chapter "Increment explosion"."""

    probe_depths: tuple[int, ...]  # N swept on log axes (two orders of magnitude at cpu)
    probe_repeats: Repeats  # seeds averaged per depth
    update_depths: tuple[int, ...]  # DeepNet Fig. 5's "early model update" sweep (its 6L .. 100L)
    update_steps: Repeats  # steps whose ‖F(x,θ_t) − F(x,θ_0)‖ is tracked
    train_depths: tuple[int, ...]  # depths of the warmup comparison (budget.warmup); the first is its depth
    slider_depths: tuple[int, ...]  # the precomputed slider grid
    slider_norms: tuple[str, ...]
    slider_optimizers: tuple[str, ...]
    slider_steps: Repeats
    probe_lrs: MappingProxyType = chapter_rates(sgd=1e-4, adam=1e-6)  # small enough for ΔL ≈ ⟨∇L, Δθ⟩
    update_lr: Positive = 5e-4  # Adam, the early-update sweep
    update_seeds: Repeats = 3  # initializations (and data streams) per variant and depth of that sweep
    paper_shape: tuple[int, int, int] = (64, 128, 2)  # DeepNet Fig. 5's tiny models: d_model, d_ff, heads
    slider_lrs: MappingProxyType = chapter_rates(adam=1e-3, sgd=0.1, lamb=1e-2)
    track_points: Repeats = 10
    # live panel: every span is (min, start, max)
    live_depth: tuple[int, int, int] = (1, 24, 256)
    live_lr: tuple[float, float, float] = (1e-5, 1e-3, 1.0)


SMOKE = IncrementBudget(
    probe_depths=(2, 4, 8),
    probe_repeats=3,
    update_depths=(2, 4, 6),  # three: a growth law is fitted over two depth ranges
    update_steps=3,
    train_depths=(4,),
    slider_depths=(2, 4),
    slider_norms=("post", "deepnorm"),
    slider_optimizers=("adam",),
    slider_steps=3,
)
CPU = IncrementBudget(
    probe_depths=(2, 4, 8, 16, 32, 64, 128, 256),
    probe_repeats=7,  # the slope verdicts bootstrap the mean over these seeds (3 leave most intervals too wide)
    update_depths=(6, 12, 24, 50, 100),
    update_steps=20,
    train_depths=(12, 24),
    slider_depths=(6, 12, 24, 48, 96),
    slider_norms=("post", "pre", "deepnorm"),
    slider_optimizers=("adam", "sgd"),
    slider_steps=15,
)
FULL = IncrementBudget(
    probe_depths=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    probe_repeats=3,
    update_depths=(6, 12, 24, 50, 100),
    update_steps=50,
    train_depths=(24, 96),
    slider_depths=(6, 12, 24, 48, 96, 192),
    slider_norms=("post", "pre", "deepnorm"),
    slider_optimizers=("adam", "sgd"),
    slider_steps=30,
)
GPU = replace(FULL, train_depths=(24,))

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> IncrementBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, IncrementBudget)
