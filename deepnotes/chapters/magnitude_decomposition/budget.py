"""The sizes of the chapter "magnitude_decomposition" at every budget: one :class:`MagnitudeBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_rates, chapter_sizes
from deepnotes.core.validate import Count, Depth, Repeats


@dataclass(frozen=True)
class MagnitudeBudget:
    """Chapter "Magnitude decomposition and the DeepNorm scalings"."""

    probe_depth: Depth  # depth of the ∂L/∂λ grid over (α, λ)
    alphas: tuple[float, ...]  # α values of that grid
    lambdas: tuple[float, ...]  # λ values of that grid
    update_depths: tuple[int, ...]  # depths of the first-step relative-update sweep
    train_depths: tuple[int, ...]  # depths of the (α, λ) training comparison
    train_steps: Repeats
    identity_depth: Depth  # depth of the near-identity probe
    slider_depths: tuple[int, ...]  # slider grid: depths (× the three optimizers)
    slider_steps: Repeats
    probe_seeds: Repeats = 3  # initializations per (α, λ) of the grid (its slope verdicts judge seed by seed)
    first_step_lrs: MappingProxyType = chapter_rates(sgd=0.1, adam=1e-3, lamb=1e-2)
    train_lrs: MappingProxyType = chapter_rates(sgd=(0.1, 0.5), adam=(1e-3,), lamb=(1e-2,))
    track_every: Count = 5  # steps between two measurements of λ_F(W_t)
    train_seeds: Repeats = 3  # initializations of every choice in the training comparison (its verdicts need 3)
    table_shapes: tuple[tuple[int, int], ...] = ((64, 64), (32, 128), (128, 32))  # W of the λ table
    orthogonality_dim: Count = 64  # d of the square Xavier matrix of the near-orthogonality check
    check_depth: Depth = 4  # depth of the autograd check of ∂L/∂λ = ⟨∂L/∂W, U⟩
    # live panel: every span is (min, start, max)
    live_depth: tuple[int, int, int] = (1, 24, 256)
    live_lr: tuple[float, float, float] = (1e-4, 0.1, 1.0)


SMOKE = MagnitudeBudget(
    probe_depth=3,
    alphas=(1.0, 4.0),
    lambdas=(0.25, 1.0),
    update_depths=(2, 8),
    train_depths=(2,),
    train_steps=4,
    identity_depth=6,
    slider_depths=(2, 4),
    slider_steps=3,
)
CPU = MagnitudeBudget(
    probe_depth=12,
    alphas=(1.0, 2.0, 4.0, 8.0, 16.0),
    lambdas=(0.0625, 0.125, 0.25, 0.5, 1.0),
    update_depths=(4, 16, 64),
    train_depths=(6, 24),
    train_steps=100,
    identity_depth=48,
    slider_depths=(6, 24),
    slider_steps=20,
)
FULL = MagnitudeBudget(
    probe_depth=24,
    alphas=(1.0, 2.0, 4.0, 8.0, 16.0, 32.0),
    lambdas=(0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0),
    update_depths=(4, 16, 64, 256),
    train_depths=(12, 48, 192),
    train_steps=1000,
    identity_depth=192,
    slider_depths=(6, 24, 96),
    slider_steps=40,
)
# three seeds of every choice (issue 44) within a T4's ten minutes by the estimate: 250 steps
GPU = replace(FULL, train_depths=(12, 48), train_steps=250)

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> MagnitudeBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, MagnitudeBudget)
