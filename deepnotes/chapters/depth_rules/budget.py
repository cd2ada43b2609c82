"""The sizes of the chapter "depth_rules" at every budget: one :class:`DepthRulesSizes` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from deepnotes.core.config import Budget, chapter_rates, chapter_sizes
from deepnotes.core.validate import Count, Positive, Repeats


@dataclass(frozen=True)
class DepthRulesSizes:
    """Chapter "After DeepNet: the depth rules in use today". The frontier trains at the 1000-layer chapter's sizes
    (its steps, batches, rate and seeds: tests/chapters/test_depth_rules.py holds them equal); the map's runs are
    shorter at cpu and gpu (100 steps), where the rate decides most."""

    probe_depths: tuple[int, ...]  # N of the first-step probe, on log axes
    probe_seeds: Repeats  # seeds per (rule, depth): the slope verdicts bootstrap the mean over them
    frontier_depths: tuple[int, ...]  # N of the frontier (DeepNet's 6L and 18L sides, 100, its 1000 blocks)
    train_steps: Repeats  # Adam steps of a frontier run
    train_batch: tuple[int, int]  # (sequences, tokens per sequence) per step and member
    map_depths: tuple[int, ...]  # the map's rows: the transfer verdict reads the first and the last
    map_rates: tuple[float, ...]  # the map's columns: Adam base rates (times the rule's s(N)), one grid step apart
    map_steps: Repeats  # Adam steps of a map run
    seeds: Repeats = 3  # seeds of every frontier point and map cell (training-outcome verdicts read them: ≥ 3)
    lr: Positive = 5e-4  # Adam, the frontier's base rate (the 1000-layer chapter's), times the rule's s(N)
    loss_window: Count = 10  # the final training loss: a mean over this many steps (fraction learned: held out)
    probe_lrs: MappingProxyType = chapter_rates(sgd=1e-4, adam=1e-6)  # small: the step's ΔL is its first-order term
    live_depth: tuple[int, int, int] = (1, 6, 1000)  # the live panel's depths (min, start, max)


def half_decades(low: Positive, count: Repeats) -> tuple[float, ...]:
    """``count`` rates from ``low`` up, each √10 times the last (one grid step: half a decade), to two digits."""
    return tuple(float(f"{low * 10 ** (k / 2):.2g}") for k in range(count))


SMOKE = DepthRulesSizes(
    probe_depths=(2, 4, 8),
    probe_seeds=3,
    frontier_depths=(2, 6),
    train_steps=4,
    train_batch=(2, 8),
    map_depths=(2, 4),
    map_rates=half_decades(5e-4, 3),
    map_steps=3,
    live_depth=(1, 2, 12),
)
# issue 65: the frontier at the 1000-layer chapter's cpu sizes, every rule to N = 1000, is about 184 s of training
# on a 2-core machine (21 members × 1,124 blocks × 300 steps × 26 µs per member-block-step): the page takes
# longer than the 150 s the issue hoped for (RESULTS.md)
CPU = DepthRulesSizes(
    probe_depths=(4, 8, 16, 32, 64, 128),
    probe_seeds=5,
    frontier_depths=(6, 18, 100, 1000),
    train_steps=300,
    train_batch=(4, 8),
    map_depths=(6, 100),
    map_rates=half_decades(5e-5, 7),
    map_steps=100,
)
FULL = replace(
    CPU,
    probe_depths=(4, 8, 16, 32, 64, 128, 256),
    probe_seeds=7,
    map_depths=(6, 18, 100, 300),
    map_steps=300,
)
GPU = replace(CPU, probe_depths=(4, 8, 16, 32, 64, 128, 256), probe_seeds=7, map_depths=(6, 18, 100))

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = 15  # more than GPU_MINUTES_PER_CHAPTER: the frontier's 1000-block stacks are launch-bound on a GPU


def sizes(budget: Budget) -> DepthRulesSizes:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, DepthRulesSizes)
