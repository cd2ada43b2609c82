"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.post_vs_pre_norm import answer, budget, claims, controls, figures
from deepnotes.chapters.post_vs_pre_norm import experiments as runs

CHAPTER = Chapter(
    stem="post_vs_pre_norm",
    title="Post-Norm vs Pre-Norm",
    sizes=budget.sizes,
    rows=budget.ROWS,
    gpu_minutes=budget.GPU_MINUTES,
    work=runs.work,
    derivations=claims.derivations,
    figures=figures.FIGURES,
    sliders=controls.sliders,
    answer=answer.markdown,
)
