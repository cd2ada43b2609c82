"""The book's chapters, each as it declares itself (:class:`~deepnotes.chapters.chapter.Chapter`, one
``<stem>/chapter.py`` each): :data:`CATALOG` (stem → its Chapter, in the book's order), the plan a chapter's page
runs at a budget (:func:`chapter_plan`) and the estimate each chapter's budget cell prints
(:func:`chapter_estimate`).

The chapters depend on :mod:`deepnotes.cost`, never the reverse: this module, inside the chapters'
package, is where a chapter's plan meets the cost model, which is handed the plan and imports no chapter.
"""

from __future__ import annotations

import time
from dataclasses import replace

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.bert_init.chapter import CHAPTER as BERT_INIT
from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.depth_rules.chapter import CHAPTER as DEPTH_RULES
from deepnotes.chapters.increment_explosion.chapter import CHAPTER as INCREMENT_EXPLOSION
from deepnotes.chapters.initialization.chapter import CHAPTER as INITIALIZATION
from deepnotes.chapters.magnitude_decomposition.chapter import CHAPTER as MAGNITUDE_DECOMPOSITION
from deepnotes.chapters.post_vs_pre_norm.chapter import CHAPTER as POST_VS_PRE_NORM
from deepnotes.chapters.thousand_layers.chapter import CHAPTER as THOUSAND_LAYERS
from deepnotes.chapters.why_residuals.chapter import CHAPTER as WHY_RESIDUALS
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.validate import Workers, choice
from deepnotes.cost.estimate import T4, Estimate, calibrate, estimate, process_seconds
from deepnotes.cost.log import log_chapter
from deepnotes.cost.model import planned_for, total

_DECLARED = (
    INITIALIZATION,
    POST_VS_PRE_NORM,
    BERT_INIT,
    INCREMENT_EXPLOSION,
    MAGNITUDE_DECOMPOSITION,
    WHY_RESIDUALS,
    THOUSAND_LAYERS,
    DEPTH_RULES,
)
CATALOG: dict[str, Chapter] = {c.stem: c for c in _DECLARED}
"""stem → its Chapter, in the order of :data:`deepnotes.chapters.CHAPTERS` (``_toc.yml``'s; a test holds all three
to each other and each Chapter to its notebook)."""
if tuple(CATALOG) != CHAPTERS:
    raise ImportError(f"the catalog declares {tuple(CATALOG)}; deepnotes.chapters.CHAPTERS lists {CHAPTERS}")


def declared(stem: str) -> Chapter:
    """The Chapter of ``stem`` (a clear error naming the chapters there are)."""
    return CATALOG[choice("chapter", stem, CHAPTERS)]


def chapter_plan(chapter: str, budget: Budget | str | None, workers: Workers | None = None) -> list:
    """The chapter's plan at ``budget``, its runs grouped for ``workers`` processes (default: as this
    machine trains them; 1 for a GPU)."""
    page = declared(chapter)
    if workers is None:
        return page.plan(resolve_budget(budget))
    with planned_for(workers):
        return page.plan(resolve_budget(budget))


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
