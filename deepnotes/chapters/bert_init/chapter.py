"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.bert_init import answer, budget, claims, controls, figures
from deepnotes.chapters.bert_init import experiments as runs
from deepnotes.chapters.chapter import Chapter

TITLE = "Why is BERT's initial standard deviation 0.02?"  # the notebook's first heading
CHAPTER = Chapter.from_modules("bert_init", TITLE, budget, runs, claims, figures, controls, answer)
