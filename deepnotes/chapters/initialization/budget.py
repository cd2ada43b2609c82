"""The sizes of the chapter "initialization" at every budget: one :class:`InitializationBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_sizes
from deepnotes.core.validate import Count, Depth, Positive, Repeats


@dataclass(frozen=True)
class InitializationBudget:
    """Chapter "Initialization, parametrization and normalization"."""

    moment_width: Count  # width of the plain MLP whose second moments are tracked
    moment_depth: Depth  # its depth (50+ at cpu)
    moment_batch: Count  # inputs per measurement
    ntk_width: Count  # width of the NTK-vs-standard MLP trained with Adam
    ntk_steps: Repeats
    slider_gains: tuple[float, ...]
    softmax_slider_dims: tuple[int, ...]
    softmax_dims: tuple[int, ...] = (16, 64, 256, 1024)  # d of the softmax probe
    softmax_keys: Count = 64  # keys per attention row
    ntk_depth: Depth = 4
    ntk_batch: Count = 256
    ntk_lr: Positive = 1e-2  # Adam
    softmax_queries: Count = 256  # queries of the softmax probe
    trunc_samples: Count = 1_000_000  # draws per truncated-normal sampler
    norm_shape: tuple[int, int, int] = (64, 128, 512)  # [B, T, d] of the LayerNorm/RMSNorm comparison
    norm_timer_seconds: Positive = 0.5  # min_run_time of each benchmark timer, over all rounds
    norm_rounds: Repeats = 5  # LayerNorm and RMSNorm timed in turn this many times (median, range)
    moment_seeds: Repeats = 8  # weight draws of moment_table's MLPs: its verdicts judge the mean over them
    # live panels: every span is (min, start, max)
    live_depth: tuple[int, int, int] = (1, 60, 200)  # the moment panel's depths
    live_gain: tuple[float, float, float] = (0.1, 1.0, 10.0)  # its E[w²]·m (log slider: never ≤ 0)
    live_d: tuple[int, int, int] = (1, 128, 4096)  # the softmax panel's d


SMOKE = InitializationBudget(
    moment_width=32,
    moment_depth=8,
    moment_batch=64,
    ntk_width=16,
    ntk_steps=3,
    slider_gains=(1.0, 2.0),
    softmax_slider_dims=(16, 64),
)
CPU = InitializationBudget(
    moment_width=256,
    moment_depth=60,
    moment_batch=1024,
    ntk_width=128,
    ntk_steps=50,
    slider_gains=(0.5, 1.0, 2.0, 4.0),
    softmax_slider_dims=(16, 64, 256, 1024),
)
FULL = InitializationBudget(
    moment_width=1024,
    moment_depth=100,
    moment_batch=4096,
    ntk_width=512,
    ntk_steps=200,
    slider_gains=(0.5, 1.0, 2.0, 4.0),
    softmax_slider_dims=(16, 64, 256, 1024),
)
GPU = FULL

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> InitializationBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, InitializationBudget)
