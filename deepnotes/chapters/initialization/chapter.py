"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.initialization import answer, budget, claims, controls, figures
from deepnotes.chapters.initialization import experiments as runs

TITLE = "Initialization, parametrization and normalization"  # the notebook's first heading
CHAPTER = Chapter.from_modules("initialization", TITLE, budget, runs, claims, figures, controls, answer)
