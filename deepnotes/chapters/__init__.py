"""One package per chapter: ``book/<stem>.ipynb`` ↔ ``deepnotes/chapters/<stem>/`` (budget, derive,
experiments, figures, claims, controls). A chapter imports ``deepnotes.core`` and ``deepnotes.show``, never
another chapter.

Importing this package registers every chapter's sizes (its ``budget.py``) with the budget table, so
``budget.<stem>`` works wherever ``deepnotes`` is imported; a new chapter's folder is found here by itself.
"""

import importlib
import pkgutil

for _chapter in pkgutil.iter_modules(__path__):
    if _chapter.ispkg:
        importlib.import_module(f"{__name__}.{_chapter.name}.budget")
