"""One package per chapter: ``book/<stem>.ipynb`` ↔ ``deepnotes/chapters/<stem>/`` (budget, derive,
experiments, figures, claims, controls). A chapter imports ``deepnotes.core`` and ``deepnotes.show``, never
another chapter.

:data:`CHAPTERS` is the one list of chapters, in the book's order (``_toc.yml``'s, which a test holds it
to); :mod:`deepnotes.chapters.catalog` reaches each chapter's sizes and plan by these names through plain
imports. Importing this package imports no chapter.
"""

CHAPTERS = (
    "initialization",
    "post_vs_pre_norm",
    "bert_init",
    "increment_explosion",
    "magnitude_decomposition",
    "why_residuals",
    "thousand_layers",
    "depth_rules",
)
