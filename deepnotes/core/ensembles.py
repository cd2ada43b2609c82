"""How runs become ensembles: :func:`train_many` groups runs that share a graph and a loop into one
:class:`~deepnotes.core.engine.Stack` each (:func:`ensemble_groups`, sized by the device's memory on a GPU),
starts their members, and trains the ensembles with :func:`~deepnotes.core.train.train_ensemble`'s loop on
the machine's cores or a cluster (:func:`deepnotes.core.workers.run_jobs`); a chapter's runs are one
:class:`RunPlan` (:func:`train_plan`), trained where a page's :class:`RunContext` says."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace

import torch

from deepnotes.core.cluster import scheduler_executor
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, check_fits, checked_device, stack_bytes
from deepnotes.core.config import device as default_device
from deepnotes.core.engine import check_slot_names, graph_config
from deepnotes.core.optim import SHARED_FIELDS
from deepnotes.core.train import History, NextToken, member_tasks, notify_observers, train_group
from deepnotes.core.validate import Count, Workers
from deepnotes.core.workers import default_workers, run_jobs

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
    """The per-ensemble arguments of :func:`train_group`: its members' configs, tasks and inits."""
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
    processes (:func:`deepnotes.core.workers.run_jobs`; ``trackers``, ``objective`` and the tasks
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
    results = run_jobs(train_group, jobs, workers, costs, progress=progress and not single, executor=executor)
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


@dataclass(frozen=True)
class RunContext:
    """Where and how a page's runs train: its budget, the device, the worker processes and whether to draw
    progress bars. A page's setup cell builds it once (:meth:`here`) and hands it to every function that
    trains; below that, nothing picks a device, counts workers or resolves a budget again."""

    budget: Budget
    device: torch.device | str  # a name ("cpu", "cuda:0") is read as torch.device(name)
    workers: Workers = 1
    progress: bool = False

    def __post_init__(self):  # a device torch knows and this machine has, else a ValueError naming it
        object.__setattr__(self, "device", checked_device(self.device))

    @classmethod
    def here(
        cls,
        budget: Budget,
        *,
        progress: bool = False,
        device: torch.device | str | None = None,
        workers: Workers | None = None,
    ) -> RunContext:
        """This machine's context: ``device`` (default CUDA when present, else the CPU) and ``workers`` (default
        :func:`~deepnotes.core.workers.default_workers` of the device: 1 on a GPU, else the cores up to a limit)."""
        dev = checked_device(device) if device is not None else default_device()
        return cls(budget, dev, default_workers(dev) if workers is None else workers, progress)

    def quiet(self) -> RunContext:
        """The same context with no progress bars (a run inside another's bar, or a precomputed frame)."""
        return replace(self, progress=False)

    def train(self, plan: RunPlan) -> list[History]:
        """:func:`train_plan` of ``plan`` here: the Histories in the plan's order."""
        return train_plan(plan, progress=self.progress, device=self.device, workers=self.workers)

    def __str__(self) -> str:
        return f"budget: {self.budget.name}, device: {self.device}, worker processes: {self.workers}"
