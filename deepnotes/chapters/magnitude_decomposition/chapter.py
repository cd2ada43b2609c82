"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.magnitude_decomposition import answer, budget, claims, controls, figures
from deepnotes.chapters.magnitude_decomposition import training as runs

CHAPTER = Chapter(
    stem="magnitude_decomposition",
    title="Magnitude decomposition and the DeepNorm scalings",
    sizes=budget.sizes,
    rows=budget.ROWS,
    gpu_minutes=budget.GPU_MINUTES,
    work=runs.work,
    derivations=claims.derivations,
    figures=figures.FIGURES,
    sliders=controls.sliders,
    answer=answer.markdown,
)
