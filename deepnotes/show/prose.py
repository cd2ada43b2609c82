"""Numbers the prose quotes, computed by the cell above it and pasted into the text by MyST-NB's glue.

A markdown cell writes ``{glue:text}`key``` where it quotes a number; the code cell before it calls
:func:`glue_values` with that key and the value, already formatted the way the page prints numbers.
The built book pastes the value in; ``tools/prose_numbers.py`` fails on a number typed instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from deepnotes.show import say
from deepnotes.show.say import Sentence

FAR_ABOVE_PLATEAU = -1.0  # a run that ends more than a plateau–floor gap above the plateau: far from any threshold


def glue_values(values: Mapping[str, str | Sentence]) -> None:
    """Glue each ``key → text`` for the markdown below (``{glue:text}`key```), without output in the book. A value
    that states an outcome is a :class:`~deepnotes.show.say.Sentence` rendered from its verdicts; every value is
    recorded with the chapter's answer (:data:`deepnotes.show.say.on_display`), so the sentence test reads it.

    Where MyST-NB is not installed (Colab opens the notebook without the book's tools), the values are
    shown as one line instead, so the reader of the raw markdown still sees what each key stands for.
    """
    bad = [key for key in values if not key.isidentifier()]
    if bad:
        raise ValueError(f"glue keys must be identifiers (letters, digits, _), got {bad}")
    if say.on_display is not None:
        say.on_display([v if isinstance(v, Sentence) else Sentence(str(v)) for v in values.values()])
    try:
        from myst_nb import glue
    except ImportError:
        from IPython.display import Markdown, display

        display(Markdown("Values quoted below: " + "; ".join(f"`{k}` = {v}" for k, v in values.items())))
        return
    for key, text in values.items():
        glue(key, str(text), display=False)


def _histories(obj, depth: int = 0) -> list:
    """Every History inside ``obj``: dicts, lists, tuples and dataclasses (a chapter's runs) walked to depth 6."""
    from dataclasses import fields, is_dataclass

    from deepnotes.core.train import History

    if isinstance(obj, History):
        return [obj]
    if depth > 6:
        return []
    if isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        items = list(obj)
    elif is_dataclass(obj) and not isinstance(obj, type):
        items = [getattr(obj, f.name) for f in fields(obj)]
    else:
        return []
    return [h for item in items for h in _histories(item, depth + 1)]


def held_out_note(runs) -> str:
    """One Markdown sentence on how "fraction learned" is read in ``runs`` (any nesting of Histories): on a
    fixed held-out sample (its size), and the largest standard error, in units of the plateau–floor gap, among
    the runs that ended no more than a gap above the plateau (fraction ≥ −1); runs that ended further above it
    (an exploding stack's enormous loss) are counted apart, their reading far from every threshold. Or that
    these runs read it on their last training batches (no held-out sample)."""
    read = [h for h in _histories(runs) if h.fraction_se() is not None]
    if not read:
        return "*Fraction learned* is read here on the last training batches (these runs have no held-out sample)."
    near = [h for h in read if h.fraction_learned() >= FAR_ABOVE_PLATEAU]
    sizes = sorted({h.held_out_sequences for h in read})
    text = (
        f"*Fraction learned* is read on a fixed held-out sample of {' or '.join(map(str, sizes))} sequences per "
        "language (each position's loss taken in expectation over the language's true next or hidden token), not "
        "on the last training batches"
    )
    if near:
        text += (
            f"; its standard error is at most {max(h.fraction_se() for h in near):.3f} of the plateau–floor gap "
            f"over the {len(near)} runs that finished here"
        )
    far = len(read) - len(near)
    if far:
        text += f" ({far} more ended over a gap above the plateau, far from every threshold)"
    return text + "."
