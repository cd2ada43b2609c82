"""Time the 1000-layer chapter's whole training plan (``experiments.train_runs``) at a budget (default
``cpu``) with its step count replaced, and print each ensemble's wall time and seconds per step, and
every point's fractions learned.

    python benchmarks/bench_thousand_layers_plan.py [STEPS] [WORKERS] [BUDGET] [--smoke] [--dask N [--glibc-malloc]]

(default: the budget's steps; the chapter's default workers: 2 on a 2-core CPU, 1 on CUDA). ``--dask N`` trains
the same plan on a local Dask cluster of N one-thread worker processes (``DEEPNOTES_SCHEDULER`` set to its
address, as a reader's cluster would be), to compare with the local worker processes; with ``--glibc-malloc`` its
workers start without Dask's ``MALLOC_TRIM_THRESHOLD_`` (glibc's own malloc tuning, as the local worker processes
have: a fixed trim threshold also fixes glibc's mmap threshold, so every large tensor is a fresh mapping). Time it
alone: a
second torch job on 2 cores slows both. Results: ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from dataclasses import replace

from deepnotes import RunContext
from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.chapters.thousand_layers.budget import sizes as thousand_layers_sizes
from deepnotes.core.cluster import SCHEDULER_VARIABLE
from deepnotes.core.config import device as default_device
from deepnotes.core.config import get_budget


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steps", nargs="?", default="-", help="steps per run ('-': the budget's)")
    ap.add_argument("workers", nargs="?", default="-", help="worker processes ('-': the chapter's default)")
    ap.add_argument("budget", nargs="?", default="cpu")
    ap.add_argument("--smoke", action="store_true", help="the tests' check that the script runs: smoke, 2 steps")
    ap.add_argument("--dask", type=int, default=0, metavar="N", help="train on a local Dask cluster of N workers")
    ap.add_argument(
        "--glibc-malloc", action="store_true", help="the Dask workers without Dask's MALLOC_TRIM_THRESHOLD_"
    )
    args = ap.parse_args()
    if args.smoke:
        args.steps, args.budget = "2", "smoke"
    budget = get_budget(args.budget)
    steps = int(args.steps) if args.steps != "-" else thousand_layers_sizes(budget).train_steps
    workers = int(args.workers) if args.workers != "-" else None
    budget = budget.with_sizes(replace(thousand_layers_sizes(budget), train_steps=steps))
    with local_cluster(args.dask, args.glibc_malloc) as where:
        start = time.perf_counter()
        runs = ex.train_runs(RunContext.here(budget, progress=True, workers=workers))
        total = time.perf_counter() - start
    print(f"trained on {where}")
    ensembles = {(n, round(h.seconds, 3), h.ensemble_size) for (_, n, _), hs in runs.histories.items() for h in hs}
    for n, seconds, members in sorted(ensembles):
        print(f"depth {n:5d}  members {members:2d}  {seconds:7.1f} s  {seconds / steps:.3f} s per step")
    layers = sum(r.depth for r in ex.plan(budget))
    print(
        f"thousand_layers plan ({budget.name}, {default_device()}) "
        f"at {steps} steps: {len(ex.plan(budget))} runs, {layers} member-layers, {total:.1f} s "
        f"({total / (layers * steps) * 1e6:.2f} µs per member-layer-step)"
    )
    window = thousand_layers_sizes(budget).loss_window
    for (lab, n, lr), hs in sorted(runs.histories.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        print(f"{n:5d} {lab:18s} lr {lr:.3g}: " + ", ".join(f"{f:.2f}" for f in ex.fraction_learned(hs, window)))


@contextlib.contextmanager
def local_cluster(n_workers: int, glibc_malloc: bool = False):
    """A local Dask cluster of ``n_workers`` one-thread processes named in ``DEEPNOTES_SCHEDULER`` while the block
    runs (nothing where ``n_workers`` is 0), its workers started without ``MALLOC_TRIM_THRESHOLD_`` where
    ``glibc_malloc``; yields what trained the plan, in words."""
    if not n_workers:
        yield (
            "the scheduler of " + SCHEDULER_VARIABLE
            if os.environ.get(SCHEDULER_VARIABLE, "").strip()
            else ("this machine's worker processes")
        )
        return
    import dask
    from distributed import LocalCluster

    from deepnotes.core.cluster import close_scheduler_clients

    quiet = 40  # logging.ERROR: the cluster's start and stop are not the benchmark's output
    unset = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None} if glibc_malloc else {}
    with (
        dask.config.set(unset),
        LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=quiet
        ) as cluster,
    ):
        before = os.environ.get(SCHEDULER_VARIABLE)
        os.environ[SCHEDULER_VARIABLE] = cluster.scheduler_address
        try:
            malloc = ", without MALLOC_TRIM_THRESHOLD_" if glibc_malloc else ""
            yield f"a local Dask cluster of {n_workers} one-thread worker processes{malloc}"
        finally:
            close_scheduler_clients()
            if before is None:
                del os.environ[SCHEDULER_VARIABLE]
            else:
                os.environ[SCHEDULER_VARIABLE] = before  # the reader's own scheduler, as it was


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
