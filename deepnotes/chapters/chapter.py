"""What a chapter is to the rest of the book: one declared :class:`Chapter` per package (``<stem>/chapter.py``'s
``CHAPTER``), the contract every chapter meets. The catalog (:mod:`deepnotes.chapters.catalog`) lists them; the
introduction reads their budget rows, the cost model prices their plans, and the tests hold each to its notebook
(its title, its figures, its sliders' frames) and to ``_toc.yml``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from deepnotes.core.config import BUDGETS, Budget
from deepnotes.core.validate import NonNegative, NonNegativeCount
from deepnotes.cost.model import Render, slider_frames


@dataclass(frozen=True)
class Chapter:
    """A chapter's contract, one field per thing the book asks of it.

    - ``stem``: its notebook ``book/<stem>.ipynb`` and its package ``deepnotes/chapters/<stem>/``.
    - ``title``: the notebook's first heading, as the page shows it.
    - ``sizes``: its ``budget.sizes``: the chapter's sizes at a resolved Budget (its row of ``rows``, or the sizes the
      budget carries in its place).
    - ``rows``: budget name → its sizes, one row for every budget of :data:`~deepnotes.core.config.BUDGETS`.
    - ``gpu_minutes``: the T4 minutes its ``gpu`` row may take (the introduction's budget table).
    - ``work``: the runs it trains at a budget (its runs module's ``work(budget)``: TrainRuns, probes, renders).
    - ``derivations``: the SymPy derivations and verdict tables its page shows that run no experiment
      (``claims.derivations(budget)``).
    - ``figures``: the figures its page draws (``figures.FIGURES``).
    - ``sliders``: its live panels at a budget (``controls.sliders(budget)``: name → slider).
    - ``answer``: the function that writes the answer its page opens with (``answer.markdown``).
    """

    stem: str
    title: str
    sizes: Callable[[Budget], object]
    rows: Mapping[str, object]
    gpu_minutes: NonNegative
    work: Callable[[Budget], list]
    derivations: Callable[[Budget], object]
    figures: NonNegativeCount
    sliders: Callable[[Budget], dict]
    answer: Callable

    def __post_init__(self):
        if set(self.rows) != set(BUDGETS):
            raise ValueError(
                f"chapter {self.stem!r}: its rows give budgets {sorted(self.rows)}; every one of {sorted(BUDGETS)} "
                "needs a row"
            )

    @classmethod
    def from_modules(cls, stem: str, title: str, budget_module, runs, claims, figures, controls, answer) -> Chapter:
        """The Chapter a package's modules make, each field read where the contract above says
        (``budget_module``: the package's ``budget.py``, whose ``sizes``, ``ROWS`` and ``GPU_MINUTES`` it reads;
        ``runs.work``, ``claims.derivations``, ``figures.FIGURES``, ``controls.sliders``, ``answer.markdown``)."""
        return cls(
            stem=stem,
            title=title,
            sizes=budget_module.sizes,
            rows=budget_module.ROWS,
            gpu_minutes=budget_module.GPU_MINUTES,
            work=runs.work,
            derivations=claims.derivations,
            figures=figures.FIGURES,
            sliders=controls.sliders,
            answer=answer.markdown,
        )

    def plan(self, budget: Budget) -> list:
        """The page's work at ``budget``, as the cost model prices it: the runs (``work``), the derivations, and the
        figures and slider frames it draws."""
        frames = slider_frames(self.sliders(budget).values())
        return [*self.work(budget), self.derivations(budget), Render(self.figures + frames)]
