"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.magnitude_decomposition import answer, budget, claims, controls, figures
from deepnotes.chapters.magnitude_decomposition import experiments as runs

TITLE = "Magnitude decomposition and the DeepNorm scalings"  # the notebook's first heading
CHAPTER = Chapter.from_modules("magnitude_decomposition", TITLE, budget, runs, claims, figures, controls, answer)
