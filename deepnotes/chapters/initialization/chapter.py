"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.initialization import answer, budget, claims, controls, figures
from deepnotes.chapters.initialization import experiments as runs

CHAPTER = Chapter(
    stem="initialization",
    title="Initialization, parametrization and normalization",
    sizes=budget.sizes,
    rows=budget.ROWS,
    gpu_minutes=budget.GPU_MINUTES,
    work=runs.work,
    derivations=claims.derivations,
    figures=figures.FIGURES,
    sliders=controls.sliders,
    answer=answer.markdown,
)
