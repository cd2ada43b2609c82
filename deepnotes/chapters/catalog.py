"""Every chapter's sizes and plan by its stem, reached through plain imports (no name is imported by
string): :data:`SIZES` (stem → its ``budget.sizes``), :data:`GPU_MINUTES` and :data:`ROWS` for the
introduction's budget table, and the estimate each chapter's budget cell prints (:func:`chapter_estimate`).

The chapters depend on :mod:`deepnotes.cost`, never the reverse: this module, inside the chapters'
package, is where a chapter's plan meets the cost model.
"""

from __future__ import annotations

import time
from dataclasses import replace

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.bert_init import budget as bert_init_budget
from deepnotes.chapters.bert_init import cost as bert_init_cost
from deepnotes.chapters.increment_explosion import budget as increment_explosion_budget
from deepnotes.chapters.increment_explosion import cost as increment_explosion_cost
from deepnotes.chapters.initialization import budget as initialization_budget
from deepnotes.chapters.initialization import cost as initialization_cost
from deepnotes.chapters.magnitude_decomposition import budget as magnitude_decomposition_budget
from deepnotes.chapters.magnitude_decomposition import cost as magnitude_decomposition_cost
from deepnotes.chapters.post_vs_pre_norm import budget as post_vs_pre_norm_budget
from deepnotes.chapters.post_vs_pre_norm import cost as post_vs_pre_norm_cost
from deepnotes.chapters.thousand_layers import budget as thousand_layers_budget
from deepnotes.chapters.thousand_layers import cost as thousand_layers_cost
from deepnotes.chapters.why_residuals import budget as why_residuals_budget
from deepnotes.chapters.why_residuals import cost as why_residuals_cost
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.validate import choice
from deepnotes.cost.estimate import T4, Estimate, calibrate, estimate, process_seconds
from deepnotes.cost.log import log_chapter
from deepnotes.cost.model import planned_for, total

_BUDGETS = {
    "initialization": initialization_budget,
    "post_vs_pre_norm": post_vs_pre_norm_budget,
    "bert_init": bert_init_budget,
    "increment_explosion": increment_explosion_budget,
    "magnitude_decomposition": magnitude_decomposition_budget,
    "why_residuals": why_residuals_budget,
    "thousand_layers": thousand_layers_budget,
}
PLANS = {
    "initialization": initialization_cost.plan,
    "post_vs_pre_norm": post_vs_pre_norm_cost.plan,
    "bert_init": bert_init_cost.plan,
    "increment_explosion": increment_explosion_cost.plan,
    "magnitude_decomposition": magnitude_decomposition_cost.plan,
    "why_residuals": why_residuals_cost.plan,
    "thousand_layers": thousand_layers_cost.plan,
}
assert tuple(_BUDGETS) == tuple(PLANS) == CHAPTERS, "the catalog lists the chapters of deepnotes.chapters.CHAPTERS"
SIZES = {stem: module.sizes for stem, module in _BUDGETS.items()}  # stem → its sizes(budget)
ROWS = {stem: module.ROWS for stem, module in _BUDGETS.items()}  # stem → budget name → its sizes
GPU_MINUTES = {stem: module.GPU_MINUTES for stem, module in _BUDGETS.items()}  # stem → T4 minutes its gpu row may take


def chapter_plan(chapter: str, budget: Budget | str | None, workers: int | None = None) -> list:
    """The chapter's plan at ``budget``, its runs grouped for ``workers`` processes (default: as this
    machine trains them; 1 for a GPU)."""
    choice("chapter", chapter, CHAPTERS)
    if workers is None:
        return PLANS[chapter](resolve_budget(budget))
    with planned_for(workers):
        return PLANS[chapter](resolve_budget(budget))


def chapter_estimate(chapter: str, budget: Budget | str | None = None) -> Estimate:
    """A chapter's budget cell: its plan's counts, timed with this device's calibrated rates and the
    T4's assumed ones; marks the chapter in the work log. The page's setup is what its process has
    paid so far (:func:`~deepnotes.cost.estimate.process_seconds`: the kernel's start, the imports, the
    calibration, the counting), at least the part the calibration measured."""
    choice("chapter", chapter, CHAPTERS)
    budget = resolve_budget(budget)
    log_chapter(chapter)
    here = calibrate()
    start = time.perf_counter()
    plan = chapter_plan(chapter, budget)
    total(plan)  # counted now (the tiny runs of each shape): part of this cell's setup, as the calibration is
    paid = here.setup_seconds + time.perf_counter() - start
    here = replace(here, setup_seconds=max(paid, process_seconds() or 0.0))  # the page's process so far
    return estimate(
        chapter, plan, budget.name, [here, T4], plan_for=lambda workers: chapter_plan(chapter, budget, workers)
    )
