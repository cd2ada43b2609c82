"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.bert_init import answer, budget, claims, controls, figures
from deepnotes.chapters.bert_init import experiments as runs
from deepnotes.chapters.chapter import Chapter

CHAPTER = Chapter(
    stem="bert_init",
    title="Why is BERT's initial standard deviation 0.02?",
    sizes=budget.sizes,
    rows=budget.ROWS,
    gpu_minutes=budget.GPU_MINUTES,
    work=runs.work,
    derivations=claims.derivations,
    figures=figures.FIGURES,
    sliders=controls.sliders,
    answer=answer.markdown,
)
