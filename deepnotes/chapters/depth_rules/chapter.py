"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.chapter import Chapter
from deepnotes.chapters.depth_rules import answer, budget, claims, controls, figures
from deepnotes.chapters.depth_rules import experiments as runs

TITLE = "After DeepNet: the depth rules in use today"  # the notebook's first heading
CHAPTER = Chapter.from_modules("depth_rules", TITLE, budget, runs, claims, figures, controls, answer)
