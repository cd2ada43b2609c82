"""The sizes of the chapter "depth_rules" at every budget: one :class:`DepthRulesSizes` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_sizes
from deepnotes.core.validate import Depth, Positive, Repeats


@dataclass(frozen=True)
class DepthRulesSizes:
    """Chapter "After DeepNet: the depth rules in use today"."""

    depth: Depth  # blocks of the stacks the chapter trains
    seeds: Repeats  # seeds per style (a training-outcome verdict rests on at least 3)
    steps: Repeats  # Adam steps per run
    slider_depths: tuple[int, ...]  # the slider's precomputed depths
    lr: Positive = 1e-3  # Adam
    live_depth: tuple[int, int, int] = (1, 4, 64)  # the live panel's depths (min, start, max)


SMOKE = DepthRulesSizes(depth=2, seeds=3, steps=3, slider_depths=(2, 4))
CPU = DepthRulesSizes(depth=12, seeds=3, steps=60, slider_depths=(2, 6, 12))
FULL = DepthRulesSizes(depth=24, seeds=5, steps=300, slider_depths=(2, 6, 12, 24))
GPU = FULL

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> DepthRulesSizes:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, DepthRulesSizes)
