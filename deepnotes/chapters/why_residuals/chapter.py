"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.why_residuals import answer, budget, claims, controls, figures
from deepnotes.chapters.why_residuals import experiments as runs

TITLE = "Why residuals?"  # the notebook's first heading
CHAPTER = Chapter.from_modules("why_residuals", TITLE, budget, runs, claims, figures, controls, answer)
