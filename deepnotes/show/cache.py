"""A bounded store of results by key: the least recently used entry goes first when it is full.

Live sliders and chapter helpers keep what they computed so that going back to a setting is instant;
a reader who tries a hundred settings must not fill the kernel's memory, so every such store has a size.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from deepnotes.core.validate import Count

LIVE_RESULTS_KEPT = 16  # live-panel figures and off-grid runs kept per slider / per helper
BUDGET_RESULTS_KEPT = 3  # whole-chapter results kept, one per budget (smoke, cpu, gpu)


class LRU:
    """At most ``size`` values by key; :meth:`get` and :meth:`put` make an entry the most recent."""

    def __init__(self, size: Count = LIVE_RESULTS_KEPT):
        self.size = size
        self._items: OrderedDict = OrderedDict()

    def get(self, key: Hashable, default=None):
        if key not in self._items:
            return default
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: Hashable, value) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        """The stored value of ``key``, else ``compute()`` stored under it (nothing is stored if it raises)."""
        if key in self._items:
            return self.get(key)
        value = compute()
        self.put(key, value)
        return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)
