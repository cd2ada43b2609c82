"""The sizes of the chapter "why_residuals" at every budget: one :class:`ResidualsBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from deepnotes.core.config import Budget, chapter_rates, chapter_sizes
from deepnotes.core.validate import Count, Positive, Real, Repeats


@dataclass(frozen=True)
class ResidualsBudget:
    """Chapter "Why residuals?"."""

    widths: tuple[int, ...]  # widths of the Jacobian-growth probe (1 = the 1-D model)
    depths: tuple[int, ...]  # its depths N (to 1000 at cpu)
    probe_batch: Count  # random (x_0, v) pairs per probe (×16 at width 1)
    grad_depths: tuple[int, ...]  # depths of the per-layer gradient probe (float64)
    grad_widths: tuple[int, ...]  # its widths
    grad_seeds: Repeats  # independent initializations per setting (the mean-field rows need MIN_SEEDS)
    train_width: Count  # width of the trained MLP language model
    train_depths: tuple[int, ...]  # depths of the plain-vs-residual training runs
    train_steps: Repeats
    transformer_depths: tuple[int, ...]  # the Transformer variant (no LayerNorm); () = skipped
    jacobian_depths: tuple[int, ...]  # encoder depths of the input-output Jacobian spectra (ReZero's 12 and 128)
    jacobian_seeds: Repeats  # initializations (one input each) pooled per spectrum
    slider_depths: tuple[int, ...]
    slider_widths: tuple[int, ...]
    slider_exponents: tuple[float, ...]
    slider_steps: Repeats
    lrs: MappingProxyType = chapter_rates(adam=1e-3, sgd=0.1)  # fixed before the runs, for every kind and depth
    train_seeds: Repeats = 3  # seeds of every training run (MLP and Transformer): the verdicts' medians
    transformer_lr: Positive = 3e-4  # Adam
    moment_batch: Count = 1024  # inputs of the plain stack's per-layer moments
    moment_hidden_factor: Count = 4  # the plain stack's moments: width d → 4d → d → …
    width1_batch_factor: Count = 16  # the Jacobian probe's batch × this at width 1
    grad_batch: Count = 64  # inputs of the per-layer gradient probe
    track_points: Repeats = 10
    loss_window: Count = 10  # steps averaged by steps_to (fraction_learned reads the held-out sample)
    jacobian_tokens: Count = 8  # T of the Jacobian's input x_0: [T, d]
    jacobian_gate: Real = 0.1  # ReZero's gates in the spectra (the authors' notebook: 0.1; 0 is J = I)
    paper_jacobian_depths: tuple[int, ...] = (4, 12, 64)  # the paper's figure: vanilla Transformer at these depths …
    paper_rezero_steps: tuple[int, ...] = (0, 10, 50)  # … and ReZero at the deepest after these training steps
    # live panel: every span is (min, start, max)
    live_depth: tuple[int, int, int] = (1, 100, 1000)
    live_width: tuple[int, int, int] = (1, 64, 512)
    live_exponent: tuple[float, float, float] = (0.0, 0.5, 1.5)  # p of ε = N^-p (eps_exponent accepts [0, 2])
    live_exponent_step: Positive = 0.05


SMOKE = ResidualsBudget(
    widths=(1, 8),
    depths=(4, 16),
    probe_batch=8,
    grad_depths=(4, 8),
    grad_widths=(8,),
    grad_seeds=3,
    train_width=8,
    train_depths=(4,),
    train_steps=5,
    transformer_depths=(2,),
    jacobian_depths=(2, 4),
    jacobian_seeds=1,
    jacobian_tokens=4,
    paper_jacobian_depths=(2, 3, 4),
    paper_rezero_steps=(0, 2),
    slider_depths=(4, 8),
    slider_widths=(8,),
    slider_exponents=(0.0, 0.5),
    slider_steps=3,
)
CPU = ResidualsBudget(
    widths=(1, 16, 256),
    depths=(10, 30, 100, 300, 1000),
    probe_batch=32,
    grad_depths=(10, 30, 100, 300),
    grad_widths=(16, 64),
    grad_seeds=3,
    train_width=32,
    train_depths=(20, 100),
    train_steps=150,
    transformer_depths=(12, 48),
    jacobian_depths=(12, 128),
    jacobian_seeds=2,
    slider_depths=(10, 100),
    slider_widths=(16, 64),
    slider_exponents=(0.0, 0.5, 1.0),
    slider_steps=20,
)
FULL = ResidualsBudget(
    widths=(1, 16, 256, 1024),
    depths=(10, 30, 100, 300, 1000, 3000),
    probe_batch=128,
    grad_depths=(10, 30, 100, 300),
    grad_widths=(16, 64, 256),
    grad_seeds=5,
    train_width=256,
    train_depths=(20, 100, 300),
    train_steps=1000,
    transformer_depths=(24, 96),
    jacobian_depths=(12, 128),
    jacobian_seeds=10,
    slider_depths=(10, 100, 300),
    slider_widths=(16, 256),
    slider_exponents=(0.0, 0.25, 0.5, 1.0),
    slider_steps=60,
)
GPU = replace(FULL, train_depths=(20, 100), train_steps=250)

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = 25  # more than GPU_MINUTES_PER_CHAPTER: its deep stacks are launch-bound on a GPU (RESULTS.md)


def sizes(budget: Budget) -> ResidualsBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, ResidualsBudget)
