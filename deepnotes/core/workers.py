"""Independent jobs on the machine's cores (:func:`run_jobs`): one spawned worker process per core, one thread
each, the costliest job first; or every job on an executor (a Dask cluster's, :mod:`deepnotes.core.cluster`).

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
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import torch

from deepnotes.core.cluster import scheduler_executor
from deepnotes.core.train import progress as progress_bar
from deepnotes.core.validate import Workers

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


UNGUARDED = (
    "a worker process is re-running the script that started it, which calls deepnotes' trainers at its "
    'top level: put that call under `if __name__ == "__main__":` (Python starts worker processes by '
    "importing the main script), or pass workers=1"
)
WORKERS_FAILED = (
    "worker processes could not start, so the runs train here, one after the other. If this is a script, "
    'put the calls to deepnotes\' trainers under `if __name__ == "__main__":` to use several cores'
)


def _one_thread() -> None:
    torch.set_num_threads(1)


def _in_one_thread(fn: Callable, *args):
    """``fn(*args)`` with one intra-op thread: a job on an executor's worker, as on the local worker processes;
    the process's thread count is restored afterwards (an executor may run the job in the caller's process)."""
    threads = torch.get_num_threads()
    _one_thread()
    try:
        return fn(*args)
    finally:
        torch.set_num_threads(threads)


def _submitted(executor: Executor, fn: Callable, jobs: list[tuple], order: list[int], progress: bool) -> list:
    """``fn(*job)`` of every job on ``executor``, submitted in ``order``, each in one thread; results in job order."""
    futures = {executor.submit(_in_one_thread, fn, *jobs[i]): i for i in order}
    results: list = [None] * len(jobs)
    try:
        for future in progress_bar(as_completed(futures), progress, total=len(futures)):
            results[futures[future]] = future.result()
    except BaseException:
        for future in futures:  # one job failed (or the caller stopped): the others stop taking the cluster's time
            future.cancel()
        raise
    return results


def run_jobs(
    fn: Callable,
    jobs: Sequence[tuple],
    workers: Workers = 1,
    costs: Sequence[float] | None = None,
    progress: bool = False,
    executor: Executor | None = None,
) -> list:
    """``[fn(*job) for job in jobs]``, in the order of ``jobs``.

    ``executor`` (or, where none is given, the Dask scheduler of ``DEEPNOTES_SCHEDULER``,
    :func:`scheduler_executor`) gets every job, the costliest first, each run in one thread. Without one,
    ``workers`` = 1 runs them here, one after the other; more runs them in that many spawned worker
    processes with one thread each, the costliest first (``costs``: any number proportional to a
    job's run time), so the last job to start is a short one. A job's exception is raised here."""
    jobs = list(jobs)
    if costs is not None and len(costs) != len(jobs):
        raise ValueError(f"{len(costs)} costs for {len(jobs)} jobs")
    order = sorted(range(len(jobs)), key=lambda i: -(costs[i] if costs is not None else 0))
    executor = executor if executor is not None else scheduler_executor()
    if executor is not None:
        return _submitted(executor, fn, jobs, order, progress)
    if workers == 1 or len(jobs) <= 1:
        return [fn(*job) for job in progress_bar(jobs, progress and len(jobs) > 1)]
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError(UNGUARDED)  # a worker re-running an unguarded script: stop it here, clearly
    results: list = [None] * len(jobs)
    done = 0
    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(jobs)), mp_context=context, initializer=_one_thread
        ) as pool:
            futures = {pool.submit(fn, *jobs[i]): i for i in order}
            for future in progress_bar(as_completed(futures), progress, total=len(futures)):
                results[futures[future]] = future.result()
                done += 1
    except BrokenProcessPool:
        if done:
            raise  # a worker died mid-run (out of memory, killed): not the missing guard
        warnings.warn(WORKERS_FAILED, RuntimeWarning, stacklevel=2)
        return [fn(*job) for job in progress_bar(jobs, progress)]
    return results
