"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.thousand_layers import answer, budget, claims, controls, figures
from deepnotes.chapters.thousand_layers import experiments as runs

TITLE = "Training 1000 layers"  # the notebook's first heading
CHAPTER = Chapter.from_modules("thousand_layers", TITLE, budget, runs, claims, figures, controls, answer)
