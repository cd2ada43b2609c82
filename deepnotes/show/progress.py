"""Progress bars for the experiments: tqdm's (a widget in Jupyter, text elsewhere), removed once done.

``tqdm(leave=False)`` only hides a finished notebook bar, and a loop left early (a diverged run)
leaves it showing where it stopped: in the built book, a trail of blank gaps and stuck bars. Here
the bar is closed however the loop ends, and a notebook bar also stops taking room on the page.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], enabled: bool = True, total: int | None = None) -> Iterator[T]:
    """Yield ``items``; with ``enabled``, under a tqdm bar that is closed and removed at the end
    (``total``: the number of items, for iterators that have no length)."""
    if not enabled:
        yield from items
        return
    from tqdm.auto import tqdm        # imported here: `import deepnotes` stays light
    bar = tqdm(items, leave=False, total=total)
    try:
        yield from bar
    finally:
        bar.close()
        container = getattr(bar, "container", None)   # only the notebook (ipywidgets) bar has one
        if container is not None:
            container.layout.display = "none"
