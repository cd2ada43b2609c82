"""The sizes of the chapter "thousand_layers" at every budget: one :class:`ThousandLayersBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace

from deepnotes.core.config import Budget, chapter_sizes
from deepnotes.core.validate import Count, Depth, Positive, Repeats


@dataclass(frozen=True)
class ThousandLayersBudget:
    """Chapter "Training 1000 layers". One step count for every run, and the chapter's Adam rate for
    every run but the map's other columns and the deepest stack (experiments.deepest_rate)."""

    depth: Depth  # the headline depth (DeepNet's 1000 blocks)
    frontier_depths: tuple[int, ...]  # the shallower depths of the frontier (DeepNet's 6L and 18L sides among them)
    map_depths: tuple[int, ...]  # the map's rows: depths trained at every rate of the map
    deepest: Depth  # past DeepNet: DeepNorm trained at this depth
    train_steps: Repeats
    train_batch: tuple[int, int]  # (sequences, tokens per sequence) per step and member
    seeds: Repeats  # seeds of every frontier point (training-outcome verdicts read them: ≥ 3)
    live_depth: tuple[int, int, int]  # the live panel's depths: (min, start, max)
    slider_depths: tuple[int, ...]  # the precomputed slider's depths (frontier or headline depths)
    lr: Positive = 5e-4  # Adam (DeepNet's rate for its deep models); the map's middle column
    apart_seeds: Repeats = 3  # seeds of DeepNorm's α only and β only at the headline depth (≥ 3, as seeds)
    map_seeds: Repeats = 2  # seeds of the map's other rates (DeepNet Fig. 5's rate row reads them: < 3 is not judged)
    deepest_seeds: Repeats = 3  # seeds of the deepest DeepNorm (§13.7's "and deeper" reads them: ≥ 3, as seeds)
    contrast_seeds: Repeats = 1  # seeds of Post-LN beside the deepest DeepNorm
    map_rate_count: Repeats = 5  # the map's columns: this many Adam rates …
    map_decades: Positive = 2.0  # … evenly spaced in log over this many decades, centred on lr
    update_steps: Repeats = 10  # steps whose early model update ‖F(x,θ_t) − F(x,θ_0)‖ is recorded
    loss_window: Count = 10  # steps-to, final training loss: means over this many steps (fraction learned: held out)


SMOKE = ThousandLayersBudget(
    depth=12,
    frontier_depths=(3, 6),
    map_depths=(3,),
    deepest=24,
    train_steps=4,
    train_batch=(2, 8),
    seeds=3,
    live_depth=(1, 12, 3000),
    slider_depths=(3, 12),
    update_steps=2,
    loss_window=2,
)
# issue 43: with kernels built for AVX2 the page took 307–344 s at 300 frontier blocks and a 3000-block
# deepest stack; without the frontier's 300 (between 100 and 1000, where no style changes its outcome) and
# with the deepest stack at 2000 (still twice DeepNet's depth) it keeps its five-minute promise
CPU = ThousandLayersBudget(
    depth=1000,
    frontier_depths=(3, 6, 18, 30, 100),
    map_depths=(3, 6, 18, 30, 100),
    deepest=2000,
    train_steps=300,
    train_batch=(4, 8),
    seeds=3,
    live_depth=(1, 1000, 3000),
    slider_depths=(6, 18, 100, 1000),
)
FULL = ThousandLayersBudget(
    depth=1000,
    frontier_depths=(3, 6, 18, 30, 100, 300),
    map_depths=(3, 6, 18, 30, 100, 300, 1000),
    deepest=5000,
    train_steps=600,
    train_batch=(8, 32),
    seeds=3,
    live_depth=(1, 1000, 10000),
    slider_depths=(6, 18, 100, 300, 1000),
    map_seeds=3,
    contrast_seeds=2,
    update_steps=30,
    loss_window=30,
)
GPU = replace(
    FULL, train_steps=300, deepest=3000, train_batch=(4, 16), seeds=3, contrast_seeds=1, update_steps=10, loss_window=10
)

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = 40  # more than GPU_MINUTES_PER_CHAPTER: its deep stacks are launch-bound on a GPU (RESULTS.md)


def sizes(budget: Budget) -> ThousandLayersBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, ThousandLayersBudget)
