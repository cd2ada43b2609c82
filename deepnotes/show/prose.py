"""Numbers the prose quotes, computed by the cell above it and pasted into the text by MyST-NB's glue.

A markdown cell writes ``{glue:text}`key``` where it quotes a number; the code cell before it calls
:func:`glue_values` with that key and the value, already formatted the way the page prints numbers.
The built book pastes the value in; ``tools/prose_numbers.py`` fails on a number typed instead.
"""

from __future__ import annotations

from collections.abc import Mapping


def glue_values(values: Mapping[str, str]) -> None:
    """Glue each ``key → text`` for the markdown below (``{glue:text}`key```), without output in the book.

    Where MyST-NB is not installed (Colab opens the notebook without the book's tools), the values are
    shown as one line instead, so the reader of the raw markdown still sees what each key stands for.
    """
    bad = [key for key in values if not key.isidentifier()]
    if bad:
        raise ValueError(f"glue keys must be identifiers (letters, digits, _), got {bad}")
    try:
        from myst_nb import glue
    except ImportError:
        from IPython.display import Markdown, display

        display(Markdown("Values quoted below: " + "; ".join(f"`{k}` = {v}" for k, v in values.items())))
        return
    for key, text in values.items():
        glue(key, str(text), display=False)
