"""Measure a depth × Adam-learning-rate trainability map of the 1000-layer chapter's four styles at the
``cpu`` budget (issue 29 asks for one; this script measured it before the chapter is written), and
print its wall time and each cell's fraction learned ((plateau − final loss) / (plateau − floor),
the chapter's :func:`~deepnotes.chapters.thousand_layers.experiments.fraction_learned`; ``div@k``: the
run diverged at step k).

    python benchmarks/bench_trainability_map.py [STEPS] [DEPTHS]     (default: 300 3,6,18,30,100,300,1000)

One seed (0), no warmup, the chapter's batches (:func:`~deepnotes.chapters.thousand_layers.experiments.train_map`):
the runs of a depth share one ensemble per worker.
Time it alone. Results: ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.core.config import get_budget

STYLES = ("post", "pre", "deepnorm", "rezero")
RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)


def main() -> None:
    budget = get_budget("cpu")
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    depths = [int(d) for d in (sys.argv[2] if len(sys.argv) > 2 else "3,6,18,30,100,300,1000").split(",")]
    budget = budget.with_chapter("thousand_layers", replace(budget.thousand_layers, train_steps=steps))
    start = time.perf_counter()
    tmap = ex.train_map(budget, tuple(depths), RATES, styles=STYLES, workers=2)
    print(f"{len(STYLES) * len(depths) * len(RATES)} runs of {steps} steps in {time.perf_counter() - start:.1f} s")
    window = budget.thousand_layers.loss_window
    print("depth style    " + " ".join(f"{lr:>7g}" for lr in RATES))
    for n in depths:
        for style in STYLES:
            cells = []
            for lr in RATES:
                div = tmap.diverged(style, n, lr)[0]
                cells.append(f"div@{div}" if div is not None else f"{tmap.fraction(style, n, lr, window):.2f}")
            print(f"{n:5d} {style:8s} " + " ".join(f"{c:>7}" for c in cells))


if __name__ == "__main__":
    main()
