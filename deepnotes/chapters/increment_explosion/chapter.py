"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.increment_explosion import answer, budget, claims, controls, figures
from deepnotes.chapters.increment_explosion import experiments as runs

CHAPTER = Chapter(
    stem="increment_explosion",
    title="Increment explosion",
    sizes=budget.sizes,
    rows=budget.ROWS,
    gpu_minutes=budget.GPU_MINUTES,
    work=runs.work,
    derivations=claims.derivations,
    figures=figures.FIGURES,
    sliders=controls.sliders,
    answer=answer.markdown,
)
