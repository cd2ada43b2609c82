"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.increment_explosion import answer, budget, claims, controls, figures
from deepnotes.chapters.increment_explosion import experiments as runs

TITLE = "Increment explosion"  # the notebook's first heading
CHAPTER = Chapter.from_modules("increment_explosion", TITLE, budget, runs, claims, figures, controls, answer)
