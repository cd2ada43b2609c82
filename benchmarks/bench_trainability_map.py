"""Measure a depth × Adam-learning-rate trainability map of the 1000-layer chapter's four styles at the
``cpu`` budget (issue 29 asks for one; this script measured it before the chapter is written), and
print its wall time and each cell's fraction learned ((plateau − final loss) / (plateau − floor),
the chapter's :func:`~deepnotes.chapters.thousand_layers.experiments.fraction_learned`; ``div@k``: the
run diverged at step k).

    python benchmarks/bench_trainability_map.py [STEPS] [DEPTHS] [--smoke]    (default: 300 3,6,18,30,100,300,1000)

One seed (0), no warmup, the chapter's batches (:func:`~deepnotes.chapters.thousand_layers.experiments.train_map`):
the runs of a depth share one ensemble per worker.
Time it alone. Results: ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from deepnotes import RunContext
from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.chapters.thousand_layers.budget import sizes as thousand_layers_sizes
from deepnotes.core.config import get_budget

STYLES = ("post", "pre", "deepnorm", "rezero")
RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steps", nargs="?", type=int, default=300)
    ap.add_argument("depths", nargs="?", default="3,6,18,30,100,300,1000", help="comma-separated depths")
    ap.add_argument("--smoke", action="store_true", help="the tests' check that the script runs: smoke, 2 steps, N=2")
    args = ap.parse_args()
    if args.smoke:
        args.steps, args.depths = 2, "2"
    budget = get_budget("smoke" if args.smoke else "cpu")
    steps = args.steps
    depths = [int(d) for d in args.depths.split(",")]
    budget = budget.with_sizes(replace(thousand_layers_sizes(budget), train_steps=steps))
    start = time.perf_counter()
    tmap = ex.train_map(RunContext.here(budget, workers=2), tuple(depths), RATES, styles=STYLES)
    print(f"{len(STYLES) * len(depths) * len(RATES)} runs of {steps} steps in {time.perf_counter() - start:.1f} s")
    window = thousand_layers_sizes(budget).loss_window
    print("depth style    " + " ".join(f"{lr:>7g}" for lr in RATES))
    for n in depths:
        for style in STYLES:
            cells = []
            for lr in RATES:
                div = tmap.diverged(style, n, lr)[0]
                cells.append(f"div@{div}" if div is not None else f"{tmap.fraction(style, n, lr, window):.2f}")
            print(f"{n:5d} {style:8s} " + " ".join(f"{c:>7}" for c in cells))


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
