"""The sizes of the chapter "depth_rules" at every budget: one :class:`DepthRulesSizes` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_rates, chapter_sizes
from deepnotes.core.validate import Positive, Repeats


@dataclass(frozen=True)
class DepthRulesSizes:
    """Chapter "After DeepNet: the depth rules in use today"."""

    probe_depths: tuple[int, ...]  # N of the first-step probe, on log axes
    probe_seeds: Repeats  # seeds per (rule, depth): the slope verdicts bootstrap the mean over them
    steps: Repeats  # Adam steps of the slider's short run
    slider_depths: tuple[int, ...]  # the slider's precomputed depths
    probe_lrs: MappingProxyType = chapter_rates(sgd=1e-4, adam=1e-6)  # small: the step's ΔL is its first-order term
    lr: Positive = 1e-3  # Adam, the slider's runs (times the rule's scale s(N))
    live_depth: tuple[int, int, int] = (1, 4, 64)  # the live panel's depths (min, start, max)


SMOKE = DepthRulesSizes(probe_depths=(2, 4, 8), probe_seeds=3, steps=3, slider_depths=(2, 4))
CPU = DepthRulesSizes(probe_depths=(4, 8, 16, 32, 64, 128), probe_seeds=7, steps=60, slider_depths=(2, 8, 32))
FULL = DepthRulesSizes(probe_depths=(4, 8, 16, 32, 64, 128, 256), probe_seeds=7, steps=300, slider_depths=(2, 8, 32))
GPU = FULL

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> DepthRulesSizes:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, DepthRulesSizes)
