"""Every chapter's sizes and plan by its stem, reached through plain imports (no name is imported by
string): :data:`SIZES` (stem → its ``budget.sizes``), :data:`GPU_MINUTES` and :data:`ROWS` for the
introduction's budget table, :data:`PLANS` (stem → its plan: the ``work(budget)`` of the module that runs its
experiments, its claims' derivations, its figures and slider frames) and the estimate each chapter's budget cell
prints (:func:`chapter_estimate`).

The chapters depend on :mod:`deepnotes.cost`, never the reverse: this module, inside the chapters'
package, is where a chapter's plan meets the cost model.
"""

from __future__ import annotations

import time
from dataclasses import replace

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.bert_init import budget as bert_init_budget
from deepnotes.chapters.bert_init import claims as bert_init_claims
from deepnotes.chapters.bert_init import controls as bert_init_controls
from deepnotes.chapters.bert_init import experiments as bert_init_experiments
from deepnotes.chapters.bert_init import figures as bert_init_figures
from deepnotes.chapters.increment_explosion import budget as increment_explosion_budget
from deepnotes.chapters.increment_explosion import claims as increment_explosion_claims
from deepnotes.chapters.increment_explosion import controls as increment_explosion_controls
from deepnotes.chapters.increment_explosion import experiments as increment_explosion_experiments
from deepnotes.chapters.increment_explosion import figures as increment_explosion_figures
from deepnotes.chapters.initialization import budget as initialization_budget
from deepnotes.chapters.initialization import claims as initialization_claims
from deepnotes.chapters.initialization import controls as initialization_controls
from deepnotes.chapters.initialization import experiments as initialization_experiments
from deepnotes.chapters.initialization import figures as initialization_figures
from deepnotes.chapters.magnitude_decomposition import budget as magnitude_decomposition_budget
from deepnotes.chapters.magnitude_decomposition import claims as magnitude_decomposition_claims
from deepnotes.chapters.magnitude_decomposition import controls as magnitude_decomposition_controls
from deepnotes.chapters.magnitude_decomposition import figures as magnitude_decomposition_figures
from deepnotes.chapters.magnitude_decomposition import training as magnitude_decomposition_training
from deepnotes.chapters.post_vs_pre_norm import budget as post_vs_pre_norm_budget
from deepnotes.chapters.post_vs_pre_norm import claims as post_vs_pre_norm_claims
from deepnotes.chapters.post_vs_pre_norm import controls as post_vs_pre_norm_controls
from deepnotes.chapters.post_vs_pre_norm import experiments as post_vs_pre_norm_experiments
from deepnotes.chapters.post_vs_pre_norm import figures as post_vs_pre_norm_figures
from deepnotes.chapters.thousand_layers import budget as thousand_layers_budget
from deepnotes.chapters.thousand_layers import claims as thousand_layers_claims
from deepnotes.chapters.thousand_layers import controls as thousand_layers_controls
from deepnotes.chapters.thousand_layers import experiments as thousand_layers_experiments
from deepnotes.chapters.thousand_layers import figures as thousand_layers_figures
from deepnotes.chapters.why_residuals import budget as why_residuals_budget
from deepnotes.chapters.why_residuals import claims as why_residuals_claims
from deepnotes.chapters.why_residuals import controls as why_residuals_controls
from deepnotes.chapters.why_residuals import figures as why_residuals_figures
from deepnotes.chapters.why_residuals import training as why_residuals_training
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.validate import Workers, choice
from deepnotes.cost.estimate import T4, Estimate, calibrate, estimate, process_seconds
from deepnotes.cost.log import log_chapter
from deepnotes.cost.model import Render, planned_for, slider_frames, total


def _page_plan(experiments, claims, figures, controls):
    """A chapter's plan from the modules that do the work: the ``work(budget)`` of the module that runs its
    experiments, the ``derivations(budget)`` its claims module lists, and the figures and slider frames the page
    draws (``figures.FIGURES`` and every frame of ``controls.sliders(budget)``)."""

    def plan(budget: Budget) -> list:
        sliders = controls.sliders(budget).values()
        return [*experiments.work(budget), claims.derivations(budget), Render(figures.FIGURES + slider_frames(sliders))]

    return plan


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
    "initialization": _page_plan(
        initialization_experiments, initialization_claims, initialization_figures, initialization_controls
    ),
    "post_vs_pre_norm": _page_plan(
        post_vs_pre_norm_experiments, post_vs_pre_norm_claims, post_vs_pre_norm_figures, post_vs_pre_norm_controls
    ),
    "bert_init": _page_plan(bert_init_experiments, bert_init_claims, bert_init_figures, bert_init_controls),
    "increment_explosion": _page_plan(
        increment_explosion_experiments,
        increment_explosion_claims,
        increment_explosion_figures,
        increment_explosion_controls,
    ),
    "magnitude_decomposition": _page_plan(
        magnitude_decomposition_training,
        magnitude_decomposition_claims,
        magnitude_decomposition_figures,
        magnitude_decomposition_controls,
    ),
    "why_residuals": _page_plan(
        why_residuals_training, why_residuals_claims, why_residuals_figures, why_residuals_controls
    ),
    "thousand_layers": _page_plan(
        thousand_layers_experiments, thousand_layers_claims, thousand_layers_figures, thousand_layers_controls
    ),
}
assert tuple(_BUDGETS) == tuple(PLANS) == CHAPTERS, "the catalog lists the chapters of deepnotes.chapters.CHAPTERS"
SIZES = {stem: module.sizes for stem, module in _BUDGETS.items()}  # stem → its sizes(budget)
ROWS = {stem: module.ROWS for stem, module in _BUDGETS.items()}  # stem → budget name → its sizes
GPU_MINUTES = {stem: module.GPU_MINUTES for stem, module in _BUDGETS.items()}  # stem → T4 minutes its gpu row may take


def chapter_plan(chapter: str, budget: Budget | str | None, workers: Workers | None = None) -> list:
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
