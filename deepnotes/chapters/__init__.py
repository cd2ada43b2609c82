"""One package per chapter: ``book/<stem>.ipynb`` ↔ ``deepnotes/chapters/<stem>/`` (derive, experiments,
figures, claims, controls). A chapter imports ``deepnotes.core`` and ``deepnotes.show``, never another chapter."""
