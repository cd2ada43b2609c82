"""Issue 45: moving a chapter's plan out of its ``cost.py`` mirror changes no planned work. Every chapter's plan
at ``smoke`` and ``cpu``, grouped for 1 and 2 worker processes, is, item for item (as a multiset), the plan it had
at 2e7df06, before chapter sizes and plans moved (6e8c391 gives the same): ``tests/data/plans_kept.json`` holds a
16-hex-digit hash of each item's fields (model and train configs, members, where it trains, probe functions by
name). Written once by running this file (``python tests/core/test_plans_kept.py``); a plan that changes on
purpose rewrites it and says why in its commit."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.catalog import chapter_plan

KEPT = Path(__file__).resolve().parents[1] / "data" / "plans_kept.json"
SETTINGS = [(stem, budget, workers) for stem in CHAPTERS for budget in ("smoke", "cpu") for workers in (1, 2)]


# Fields a config gained after the plans were kept: a field still at its default is left out, so that an option no
# chapter uses does not change a kept plan (a chapter that uses it changes its plan, as it should)
ADDED_FIELDS = {("ModelConfig", "gate")}  # issue 65: a scalar gate on any style's branch


def _added_and_unused(x, f) -> bool:
    return (type(x).__name__, f.name) in ADDED_FIELDS and getattr(x, f.name) == f.default


def _fields(x):
    """An item as plain data: a dataclass by its class name and fields (not ``call``, the number of the
    train_many call, which counts every plan made in the process), a function by its name, a Budget by its name
    (issue 64: a derivation is called with the page's resolved Budget where it was called with the name)."""
    from deepnotes.core.config import Budget

    if isinstance(x, Budget):
        return repr(x.name)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [
            type(x).__name__,
            [
                (f.name, _fields(getattr(x, f.name)))
                for f in dataclasses.fields(x)
                if f.name != "call" and not _added_and_unused(x, f)
            ],
        ]
    if callable(x) and hasattr(x, "__qualname__"):
        return x.__qualname__
    if isinstance(x, (list, tuple)):
        return [_fields(v) for v in x]
    if hasattr(x, "items"):
        return {str(k): _fields(v) for k, v in x.items()}
    return repr(x)


def item_hashes(stem: str, budget: str, workers: int) -> list[str]:
    """The sorted hashes of the chapter's planned items at ``budget`` for ``workers`` processes."""
    items = chapter_plan(stem, budget, workers)
    return sorted(hashlib.sha256(json.dumps(_fields(i), sort_keys=True).encode()).hexdigest()[:16] for i in items)


@pytest.mark.parametrize("stem, budget, workers", SETTINGS)
def test_a_chapters_plan_is_the_plan_it_had_before_it_moved(stem, budget, workers):
    kept = json.loads(KEPT.read_text())[f"{stem}/{budget}/{workers}"]
    now = item_hashes(stem, budget, workers)
    gone, new = Counter(kept) - Counter(now), Counter(now) - Counter(kept)
    assert not gone and not new, f"{len(gone)} items planned before are not now, {len(new)} are new"


if __name__ == "__main__":
    table = {f"{s}/{b}/{w}": item_hashes(s, b, w) for s, b, w in SETTINGS}
    KEPT.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"wrote {sum(map(len, table.values()))} item hashes of {len(table)} plans to {KEPT}", file=sys.stderr)
