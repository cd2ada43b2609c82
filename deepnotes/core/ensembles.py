"""How runs become ensembles and ensembles reach the cores: :func:`train_many` groups runs that share a
graph and a loop into one :class:`~deepnotes.core.engine.Stack` each (:func:`ensemble_groups`, sized by
the device's memory on a GPU), starts their members, and trains the ensembles with
:func:`~deepnotes.core.train.train_ensemble`'s loop on one or more worker processes (:func:`run_jobs`).

Independent jobs on several CPU cores: one worker process per core, one thread each.

A deep narrow stack is dispatch-bound: each step issues tens of thousands of tiny ops, and a
second intra-op thread mostly waits. Measured on a 2-core CPU (N = 1000 DeepNorm blocks, d = 32,
batch 4 × 8, Adam): one process with 2 threads took 0.78 s per step, one with 1 thread 0.57 s, and
two 1-thread processes side by side 0.68–0.74 s each, so two ensembles train in about the time of
one. ``benchmarks/bench_workers.py`` measures it again (a later run: 0.60 s
with 2 threads, 0.50 s with 1, 0.48 and 0.53 s side by side: 2.26× the throughput).

Workers are started with ``spawn`` (a fork of a process whose OpenMP pool has run can hang), so the
job function and its arguments must be picklable: module-level functions, dataclasses, tensors.

On a cluster: ``train_many(..., executor=...)`` takes any :class:`concurrent.futures.Executor` and submits the
ensembles to it, each trained in one thread (the same numbers as the local worker processes, bit for bit); with
``DEEPNOTES_SCHEDULER`` set to a Dask scheduler's address (``tcp://host:8786``) every call does so through Dask's
``distributed`` client (:func:`scheduler_executor`), the chapters included, with no change to their code.

Progress bars: tqdm's (a widget in Jupyter, text elsewhere), removed once done.

``tqdm(leave=False)`` only hides a finished notebook bar, and a loop left early (a diverged run)
leaves it showing where it stopped: in the built book, a trail of blank gaps and stuck bars. Here
the bar is closed however the loop ends, and a notebook bar also stops taking room on the page.
"""

from __future__ import annotations

import asyncio
import atexit
import multiprocessing
import os
import warnings
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import torch

from deepnotes.core.config import ModelConfig, TrainConfig, check_fits, stack_bytes
from deepnotes.core.engine import Stack, check_slot_names, graph_config
from deepnotes.core.optim import SHARED_FIELDS
from deepnotes.core.train import History, NextToken, member_tasks, notify_observers, progress, train_stack
from deepnotes.core.validate import Count, Workers, positive_int

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


SCHEDULER_VARIABLE = "DEEPNOTES_SCHEDULER"  # a Dask scheduler's address: every train_many submits its ensembles there
SCHEDULER_TIMEOUT = 10  # seconds to wait for the scheduler to answer


_CLIENTS: dict = {}  # scheduler address → its Dask client, kept for the process (close_scheduler_clients)


def _client_executor(address: str) -> Executor:
    """The executor of a Dask client of the scheduler at ``address``, one client per address."""
    if address in _CLIENTS and _CLIENTS[address].status == "running":
        return _CLIENTS[address].get_executor()
    try:
        from distributed import Client
    except ImportError as e:
        raise ValueError(
            f"{SCHEDULER_VARIABLE}={address!r} asks for a Dask cluster, but Dask's distributed is not installed "
            "(pip install distributed)"
        ) from e
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT, set_as_default=False)  # the reader's dask stays local
    except (OSError, ValueError, TypeError, asyncio.TimeoutError) as e:  # an unreachable or malformed address
        raise ValueError(
            f"{SCHEDULER_VARIABLE}={address!r}: no Dask scheduler answers there within {SCHEDULER_TIMEOUT} s ({e}); "
            "give a scheduler's address, such as tcp://host:8786, or unset it to train here"
        ) from e
    if not _CLIENTS:
        atexit.register(close_scheduler_clients)
    _CLIENTS[address] = client
    return client.get_executor()


def close_scheduler_clients() -> None:
    """Close the Dask clients :func:`scheduler_executor` opened (before their cluster goes away)."""
    while _CLIENTS:
        _CLIENTS.popitem()[1].close()


def scheduler_executor() -> Executor | None:
    """The executor of the Dask scheduler named by ``DEEPNOTES_SCHEDULER`` (one client per address, kept until
    :func:`close_scheduler_clients`), or
    None where the variable is unset or empty (train here, on :func:`run_jobs`' worker processes)."""
    address = os.environ.get(SCHEDULER_VARIABLE, "").strip()
    return _client_executor(address) if address else None


def _submitted(executor: Executor, fn: Callable, jobs: list[tuple], order: list[int], progress: bool) -> list:
    """``fn(*job)`` of every job on ``executor``, submitted in ``order``, each in one thread; results in job order."""
    futures = {executor.submit(_in_one_thread, fn, *jobs[i]): i for i in order}
    results: list = [None] * len(jobs)
    try:
        for future in _bar(as_completed(futures), progress, total=len(futures)):
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
    positive_int("workers", workers)
    jobs = list(jobs)
    if costs is not None and len(costs) != len(jobs):
        raise ValueError(f"{len(costs)} costs for {len(jobs)} jobs")
    order = sorted(range(len(jobs)), key=lambda i: -(costs[i] if costs is not None else 0))
    executor = executor if executor is not None else scheduler_executor()
    if executor is not None:
        return _submitted(executor, fn, jobs, order, progress)
    if workers == 1 or len(jobs) <= 1:
        return [fn(*job) for job in _bar(jobs, progress and len(jobs) > 1)]
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
            for future in _bar(as_completed(futures), progress, total=len(futures)):
                results[futures[future]] = future.result()
                done += 1
    except BrokenProcessPool:
        if done:
            raise  # a worker died mid-run (out of memory, killed): not the missing guard
        warnings.warn(WORKERS_FAILED, RuntimeWarning, stacklevel=2)
        return [fn(*job) for job in _bar(jobs, progress)]
    return results


def _train_group(
    model_cfgs, train_cfgs, tasks, inits, objective, trackers, trainable, frozen, device, dtype, progress, check_memory
) -> list[History]:
    """One ensemble of :func:`train_many`: build its Stack, start each member, train it, return its Histories. Its
    memory is checked once: here where ``check_memory`` (on an executor's machine), else by train_many before any
    ensemble started."""
    if check_memory:
        check_fits(model_cfgs[0], len(model_cfgs), train_cfgs[0], where=device)
    stack = Stack(model_cfgs, seeds=[c.seed for c in train_cfgs], device=device, dtype=dtype, memory_checked=True)
    with torch.no_grad():
        for k, init in enumerate(inits):
            if init is not None:
                init(stack, k)
    names = [n for n in (stack.slots if trainable is None else trainable) if n in stack.slots and n not in frozen]
    return train_stack(stack, tasks, train_cfgs, objective, trackers(), names, progress)


# The fixed work of an ensemble's step (drawing tokens, the loss, Python) in members' blocks: on the CPU,
# where ensembles are spread over worker processes, a member's blocks cost about the same whichever
# path computes them (the compiled kernels, or PyTorch's where its BLAS is faster, compiled_wins), and a
# step's fixed work is a fraction of one member's (measured: 3–10 ms against 50 µs a block at 1000 blocks)
STEP_MEMBERS = 0.25


def ensemble_cost(model_cfg: ModelConfig, train_cfg: TrainConfig, members: Count) -> float:
    """A number proportional to an ensemble's run time on the CPU: each member's blocks and a step's fixed
    work (:data:`STEP_MEMBERS`), times the blocks and the steps."""
    return model_cfg.n_layers * (members + STEP_MEMBERS) * train_cfg.steps


MEMORY_SHARE = 0.5  # an ensemble on a GPU may take at most this share of the device's memory


def member_limit(model_cfg: ModelConfig, train_cfg: TrainConfig, device) -> int | None:
    """How many members of this shape one ensemble may hold on ``device``: MEMORY_SHARE of a GPU's
    memory over one member's training bytes (:func:`~deepnotes.core.config.stack_bytes`; at least 1); None
    (no limit) on the CPU, whose ensembles the chapters' budgets size."""
    if device is None or torch.device(device).type != "cuda":
        return None
    total = torch.cuda.get_device_properties(torch.device(device)).total_memory
    return max(1, int(MEMORY_SHARE * total // stack_bytes(model_cfg, 1, train_cfg)))


def ensemble_groups(
    model_cfgs: Sequence[ModelConfig], train_cfgs: Sequence[TrainConfig], workers: Workers = 1, limit=None
) -> list[list[int]]:
    """How :func:`train_many` splits runs into ensembles: the indices of the runs that share a graph
    (:func:`~deepnotes.core.engine.graph_config`) and a loop (:data:`SHARED_FIELDS`), in first-seen
    order. With ``workers`` > 1, an ensemble that would keep one worker busy longer than an even
    share of the whole (by :func:`ensemble_cost`) is cut, its first piece as large as fills one
    share, until none does, so that the cores finish together: BERT's six MLM runs (four with the
    extra head, two without) train as 3 | 1 + 2 members on 2 cores, not 4 | 2.
    ``limit`` (a function of a member's model and train configs, as :func:`member_limit`): the most
    members an ensemble may hold; a larger group is cut into consecutive pieces of that size first."""
    if len(model_cfgs) != len(train_cfgs):  # one of each per run: a shorter list would drop runs
        raise ValueError(f"{len(model_cfgs)} model_cfgs for {len(train_cfgs)} train_cfgs; give one of each per run")
    groups: dict[tuple, list[int]] = {}
    for i, (mc, tc) in enumerate(zip(model_cfgs, train_cfgs, strict=True)):
        groups.setdefault((graph_config(mc), *(getattr(tc, f) for f in SHARED_FIELDS)), []).append(i)
    out = []
    for g in groups.values():
        most = (limit(model_cfgs[g[0]], train_cfgs[g[0]]) if limit else None) or len(g)
        out += [g[k : k + most] for k in range(0, len(g), most)]
    cost = lambda g: ensemble_cost(model_cfgs[g[0]], train_cfgs[g[0]], len(g))  # noqa: E731
    while workers > 1:
        share = sum(map(cost, out)) / workers
        big = max((g for g in out if len(g) > 1), key=cost, default=None)
        if big is None or cost(big) <= share * (1 + 1e-9):
            return out
        fits = max((m for m in range(1, len(big)) if cost(big[:m]) <= share), default=1)
        at = out.index(big)
        out[at : at + 1] = [big[:fits], big[fits:]]
    return out


def _group_job(members: list[int], model_cfgs, train_cfgs, tasks, inits) -> tuple:
    """The per-ensemble arguments of :func:`_train_group`: its members' configs, tasks and inits."""
    return tuple([seq[i] for i in members] for seq in (model_cfgs, train_cfgs, tasks, inits))


def train_many(
    model_cfgs: Sequence[ModelConfig],
    train_cfgs: Sequence[TrainConfig],
    tasks,
    *,
    objective=None,
    trackers: Callable[[], Sequence] = tuple,
    trainable: Collection[str] | None = None,
    frozen: Collection[str] = (),
    progress: bool = False,
    device=None,
    dtype: torch.dtype | None = None,
    workers: Workers = 1,
    inits: Sequence[Callable] | None = None,
    executor: Executor | None = None,
) -> list[History]:
    """Train one model per (model config, train config, task), in as few ensembles as possible:
    runs that share a graph (:func:`~deepnotes.core.engine.graph_config`: every norm style) and a loop
    (:data:`SHARED_FIELDS`) train together as members of one :class:`Stack` (:func:`ensemble_groups`,
    which halves an ensemble that would leave the other workers idle), each initialized from
    its train config's seed, or by ``inits[i](stack, k)`` where given (a run that starts from weights of
    its own: the function writes member k's slices). ``trackers``: a factory of fresh engine trackers
    for each ensemble.
    ``workers`` > 1 trains the ensembles in that many one-thread
    processes (:func:`deepnotes.core.ensembles.run_jobs`; ``trackers``, ``objective`` and the tasks
    must then be picklable, and results equal the serial ones up to the rounding of another thread
    count). ``executor``: any :class:`concurrent.futures.Executor` (a Dask client's ``get_executor()``, say)
    trains the ensembles instead, each in one thread, with the same numbers as the local worker processes; with
    none, the scheduler of ``DEEPNOTES_SCHEDULER`` where it is set (:func:`run_jobs`). Returns the Histories in
    the order of the configs."""
    model_cfgs, train_cfgs = list(model_cfgs), list(train_cfgs)
    check_slot_names("trainable", trainable, empty_ok=False)
    check_slot_names("frozen", frozen, empty_ok=True)
    if len(model_cfgs) != len(train_cfgs):
        raise ValueError(f"{len(model_cfgs)} model configs for {len(train_cfgs)} train configs")
    tasks = member_tasks(tasks, len(model_cfgs))
    inits = [None] * len(model_cfgs) if inits is None else list(inits)
    if len(inits) != len(model_cfgs):
        raise ValueError(f"{len(inits)} inits for {len(model_cfgs)} model configs")
    members = ensemble_groups(model_cfgs, train_cfgs, workers, limit=lambda m, t: member_limit(m, t, device))
    executor = executor if executor is not None else scheduler_executor()
    remote = executor is not None  # the ensembles train on the executor's machines: each checks its memory there
    for m in members if not remote else ():  # here: before any worker starts or any tensor is allocated
        check_fits(model_cfgs[m[0]], len(m), train_cfgs[m[0]], where=device)
    single = len(members) == 1
    objective = objective if objective is not None else NextToken()
    spread = remote or (workers > 1 and not single)  # without an executor run_jobs trains one ensemble here
    if spread:  # sent to other processes: refused here, by name, rather than as a pickling traceback mid-run
        _check_picklable(trackers=trackers, objective=objective, tasks=tasks, inits=inits)
    for m in members:  # told here: a worker process has no observers
        notify_observers(model_cfgs[m[0]], len(m), train_cfgs[m[0]], objective, spread)
    shared = (objective, trackers, trainable, frozen, device, dtype, progress and single, remote)
    jobs = [_group_job(m, model_cfgs, train_cfgs, tasks, inits) + shared for m in members]
    costs = [ensemble_cost(model_cfgs[m[0]], train_cfgs[m[0]], len(m)) for m in members]
    results = run_jobs(_train_group, jobs, workers, costs, progress=progress and not single, executor=executor)
    out: list[History | None] = [None] * len(model_cfgs)
    for m, hists in zip(members, results, strict=True):
        for i, h in zip(m, hists, strict=True):
            out[i] = h
    return out


def _check_picklable(**arguments) -> None:
    """Each argument must pickle to be sent to a worker process: a lambda or a local function does not."""
    import pickle

    for name, value in arguments.items():
        try:
            pickle.dumps(value)
        except (pickle.PicklingError, AttributeError, TypeError) as err:
            raise ValueError(
                f"{name} must be picklable to train on worker processes (define it at module level, or pass "
                f"workers=1): {err}"
            ) from None


@dataclass(frozen=True)
class RunPlan:
    """The runs of one :func:`train_many` call, as data: one model config and one train config per run (the
    run's seed is its train config's), the task they learn (one for every run, or one per run), the objective
    (None: next-token prediction), a factory of the trackers each ensemble carries, which parameters train
    (``trainable``/``frozen``) and how a run starts where not from its seed (``inits``). How the runs group
    into ensembles follows from the configs (:func:`ensemble_groups`). A chapter's plan lists its RunPlans:
    :func:`train_plan` trains one, :func:`deepnotes.cost.model.planned_ensembles` prices the same one, and
    the work log is compared with both."""

    model_cfgs: Sequence[ModelConfig]
    train_cfgs: Sequence[TrainConfig]
    tasks: object
    objective: object = None
    trackers: Callable[[], Sequence] = tuple
    trainable: Collection[str] | None = None
    frozen: Collection[str] = ()
    inits: Sequence[Callable] | None = None

    def __post_init__(self):
        object.__setattr__(self, "model_cfgs", tuple(self.model_cfgs))
        object.__setattr__(self, "train_cfgs", tuple(self.train_cfgs))
        if len(self.model_cfgs) != len(self.train_cfgs):
            runs = f"{len(self.model_cfgs)} model configs for {len(self.train_cfgs)} train configs"
            raise ValueError(f"{runs}; give one of each per run")
        if self.inits is not None:
            object.__setattr__(self, "inits", tuple(self.inits))

    def __len__(self) -> int:
        return len(self.model_cfgs)


def train_plan(
    plan: RunPlan,
    *,
    progress: bool = False,
    device=None,
    dtype: torch.dtype | None = None,
    workers: Workers = 1,
    executor: Executor | None = None,
) -> list[History]:
    """:func:`train_many` of ``plan``'s runs (how and where to train: the keywords); the Histories in the
    plan's order."""
    return train_many(
        plan.model_cfgs,
        plan.train_cfgs,
        plan.tasks,
        objective=plan.objective,
        trackers=plan.trackers,
        trainable=plan.trainable,
        frozen=plan.frozen,
        inits=plan.inits,
        progress=progress,
        device=device,
        dtype=dtype,
        workers=workers,
        executor=executor,
    )
