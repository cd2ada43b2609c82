"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.post_vs_pre_norm import answer, budget, claims, controls, figures
from deepnotes.chapters.post_vs_pre_norm import experiments as runs

TITLE = "Post-Norm vs Pre-Norm"  # the notebook's first heading
CHAPTER = Chapter.from_modules("post_vs_pre_norm", TITLE, budget, runs, claims, figures, controls, answer)
