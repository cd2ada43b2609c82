"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.thousand_layers import answer, budget, claims, controls, figures
from deepnotes.chapters.thousand_layers import experiments as runs

CHAPTER = Chapter(
    stem="thousand_layers",
    title="Training 1000 layers",
    sizes=budget.sizes,
    rows=budget.ROWS,
    gpu_minutes=budget.GPU_MINUTES,
    work=runs.work,
    derivations=claims.derivations,
    figures=figures.FIGURES,
    sliders=controls.sliders,
    answer=answer.markdown,
)
