"""Time the 1000-layer chapter's whole training plan (``experiments.train_runs``) at the ``cpu``
budget with its step count replaced, and print each ensemble's wall time and seconds per step.

    python benchmarks/bench_thousand_layers_plan.py [STEPS] [WORKERS]

(default: the budget's steps; the chapter's default workers). Time it alone: a second torch job on
2 cores slows both. Results: ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace

from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.core.budget import get_budget


def main() -> None:
    budget = get_budget("cpu")
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else budget.thousand_layers.train_steps
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else None
    budget = replace(budget, thousand_layers=replace(budget.thousand_layers, train_steps=steps))
    start = time.perf_counter()
    runs = ex.train_runs(budget, workers=workers)
    total = time.perf_counter() - start
    ensembles = {(n, round(h.seconds, 3), h.ensemble_size) for (_, n), hs in runs.histories.items() for h in hs}
    for n, seconds, members in sorted(ensembles):
        print(f"depth {n:5d}  members {members:2d}  {seconds:7.1f} s  {seconds / steps:.3f} s per step")
    print(f"thousand_layers plan at {steps} steps: {total:.1f} s")


if __name__ == "__main__":
    main()
