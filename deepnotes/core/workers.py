"""Independent jobs on several CPU cores: one worker process per core, one thread each.

A deep narrow stack is dispatch-bound: each step issues tens of thousands of tiny ops, and a
second intra-op thread mostly waits. Measured on a 2-core CPU (N = 1000 DeepNorm blocks, d = 32,
batch 4 × 8, Adam): one process with 2 threads took 0.78 s per step, one with 1 thread 0.57 s, and
two 1-thread processes side by side 0.68–0.74 s each, so two ensembles train in about the time of
one. ``benchmarks/bench_workers.py`` measures it again (a later run: 0.60 s
with 2 threads, 0.50 s with 1, 0.48 and 0.53 s side by side: 2.26× the throughput).

Workers are started with ``spawn`` (a fork of a process whose OpenMP pool has run can hang), so the
job function and its arguments must be picklable: module-level functions, dataclasses, tensors.

Progress bars: tqdm's (a widget in Jupyter, text elsewhere), removed once done.

``tqdm(leave=False)`` only hides a finished notebook bar, and a loop left early (a diverged run)
leaves it showing where it stopped: in the built book, a trail of blank gaps and stuck bars. Here
the bar is closed however the loop ends, and a notebook bar also stops taking room on the page.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TypeVar

import torch

from deepnotes.core.validate import positive_int

T = TypeVar("T")


def progress(items: Iterable[T], enabled: bool = True, total: int | None = None) -> Iterator[T]:
    """Yield ``items``; with ``enabled``, under a tqdm bar that is closed and removed at the end
    (``total``: the number of items, for iterators that have no length)."""
    if not enabled:
        yield from items
        return
    from tqdm.auto import tqdm  # imported here: `import deepnotes` stays light

    bar = tqdm(items, leave=False, total=total)
    try:
        yield from bar
    finally:
        bar.close()
        container = getattr(bar, "container", None)  # only the notebook (ipywidgets) bar has one
        if container is not None:
            container.layout.display = "none"


_bar = progress  # run_jobs' own argument is called progress

MAX_WORKERS = 2  # the cpu budget is sized for 2 cores; more processes than cores only slow down


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def default_workers(device: torch.device | str | None = None) -> int:
    """1 on CUDA (one GPU, one stream of kernels); else min(:data:`MAX_WORKERS`, cores)."""
    if device is not None and torch.device(device).type == "cuda":
        return 1
    return max(1, min(MAX_WORKERS, available_cores()))


def _one_thread() -> None:
    torch.set_num_threads(1)


def run_jobs(
    fn: Callable, jobs: Sequence[tuple], workers: int = 1, costs: Sequence[float] | None = None, progress: bool = False
) -> list:
    """``[fn(*job) for job in jobs]``, in the order of ``jobs``.

    ``workers`` = 1 runs them here, one after the other. More runs them in that many spawned worker
    processes with one thread each, the costliest first (``costs``: any number proportional to a
    job's run time), so the last job to start is a short one. A job's exception is raised here."""
    positive_int("workers", workers)
    jobs = list(jobs)
    if costs is not None and len(costs) != len(jobs):
        raise ValueError(f"{len(costs)} costs for {len(jobs)} jobs")
    if workers == 1 or len(jobs) <= 1:
        return [fn(*job) for job in _bar(jobs, progress and len(jobs) > 1)]
    order = sorted(range(len(jobs)), key=lambda i: -(costs[i] if costs is not None else 0))
    results: list = [None] * len(jobs)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context, initializer=_one_thread) as pool:
        futures = {pool.submit(fn, *jobs[i]): i for i in order}
        for future in _bar(as_completed(futures), progress, total=len(futures)):
            results[futures[future]] = future.result()
    return results
