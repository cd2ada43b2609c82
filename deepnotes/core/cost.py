"""What an experiment costs before it runs: counted FLOPs and kernel launches, and a device's rates.

A chapter's plan (``deepnotes/chapters/<stem>/cost.py``: ``plan(budget) -> list[Work]``) lists its
training ensembles and its probes. Each item is *counted* by running the real code (the engine's
``train_ensemble``, a Stack's forward and backward, a plain MLP) on the CPU, tiny, under PyTorch's
``FlopCounterMode`` (matmul FLOPs) and an operator counter (every ATen operator dispatched: on a GPU
each is about one kernel launch). The counts are exactly linear in what the tiny runs vary:

    launches = fixed + members·per_member + steps·(per_step + members·per_member_step + depth·per_block_step)
    FLOPs    = members·batch·steps·(per_step + depth·per_block_step)

so depth ∈ {1, 2}, steps ∈ {1, 2}, members ∈ {1, 2} and a batch of 1 give a 1000-block run of 3000 steps
in milliseconds. A device runs a step in about

    seconds = FLOPs / flop_rate + launches · launch_seconds

(a roofline with a fixed cost per launch); :func:`calibrate` measures the two rates on this machine from
two short runs of the engine (one launch-bound, one FLOP-bound), and :data:`T4` holds the rates assumed
for Colab's T4, where the book was never run. Trackers (recording block norms every few steps) are not
counted, so the estimate is a lower bound of what a chapter does; README compares it with measured times.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.validate import choice, positive_int


@dataclass(frozen=True)
class Count:
    """Matmul FLOPs and ATen operators (≈ kernel launches) of some work."""
    flops: float
    launches: float

    def __add__(self, other: Count) -> Count:
        return Count(self.flops + other.flops, self.launches + other.launches)

    def __sub__(self, other: Count) -> Count:
        return Count(self.flops - other.flops, self.launches - other.launches)


ZERO = Count(0.0, 0.0)


class _OperatorCounter(TorchDispatchMode):
    """Counts every ATen operator dispatched inside it."""

    def __init__(self):
        super().__init__()
        self.operators = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.operators += 1
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def _unlogged():
    """The cost model's own tiny runs stay out of the work log (they are not the chapter's work)."""
    saved = os.environ.pop(WORK_LOG_ENV, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[WORK_LOG_ENV] = saved


def counted(fn, *args) -> Count:
    """Run ``fn(*args)`` on the CPU and count its matmul FLOPs and its ATen operators."""
    flops, ops = FlopCounterMode(display=False), _OperatorCounter()
    with _unlogged(), flops, ops:
        fn(*args)
    return Count(float(flops.get_total_flops()), float(ops.operators))


def _bilinear(count_at) -> tuple[Count, Count, Count, Count]:
    """From count_at(depth, steps) at depth, steps ∈ {1, 2}: (fixed, per step, per block-step, unused)."""
    c11, c12, c21, c22 = count_at(1, 1), count_at(1, 2), count_at(2, 1), count_at(2, 2)
    per_block_step = c22 - c21 - c12 + c11
    per_step = c12 - c11 - per_block_step
    fixed = c11 - per_step - per_block_step
    return fixed, per_step, per_block_step, ZERO


# ---------------------------------------------------------------------------------------------- work


def _cost_shape(model: ModelConfig) -> ModelConfig:
    """What a count depends on: the graph at depth 1 (not α, β or the init std: one count serves all)."""
    from deepnotes.core.engine import graph_config
    return replace(graph_config(model), n_layers=1)


@dataclass(frozen=True)
class TrainRuns:
    """One ensemble of :func:`deepnotes.core.ensemble.train_ensemble`: ``members`` runs of ``model``'s
    graph (any member's config), each ``train.steps`` steps of ``train.batch_size`` × ``train.seq_len``
    tokens. ``masked``: the masking probability of a :class:`~deepnotes.core.train.Masked` objective
    (None: next-token prediction)."""
    model: ModelConfig
    members: int
    train: TrainConfig
    masked: float | None = None

    def count(self) -> Count:
        positive_int("members", self.members)
        shape = (_cost_shape(self.model), replace(self.train, steps=1, batch_size=1, lr=1e-3, seed=0), self.masked)
        per = _train_counts(*shape)
        return _scale(per, self.model.n_layers, self.train.steps, self.members, self.train.batch_size)


@dataclass(frozen=True)
class StackPasses:
    """``passes`` forward passes (and backward, if ``backward``) of a Stack of ``members`` copies of
    ``model`` on ``batch`` × ``seq_len`` tokens: the probes at initialization."""
    model: ModelConfig
    members: int
    batch: int
    seq_len: int
    passes: int = 1
    backward: bool = True

    def count(self) -> Count:
        for name in ("members", "batch", "seq_len", "passes"):
            positive_int(name, getattr(self, name))
        per = _pass_counts(_cost_shape(self.model), self.seq_len, self.backward)
        return _scale(per, self.model.n_layers, self.passes, self.members, self.batch)


@dataclass(frozen=True)
class MLPPasses:
    """``passes`` forward passes (and backward, if ``backward``) of a plain MLP of ``depth`` square
    ``width`` × ``width`` layers on ``batch`` inputs, ``members`` of them side by side."""
    width: int
    depth: int
    batch: int
    passes: int = 1
    backward: bool = False
    members: int = 1

    def count(self) -> Count:
        for name in ("width", "depth", "batch", "passes", "members"):
            positive_int(name, getattr(self, name))
        per = _mlp_counts(self.width, self.backward)
        return _scale(per, self.depth, self.passes, self.members, self.batch)


Work = TrainRuns | StackPasses | MLPPasses


def ensembles(model_cfgs, train_cfgs, masked: float | None = None) -> list[TrainRuns]:
    """The ensembles :func:`~deepnotes.core.ensemble.train_many` trains for these runs (same grouping)."""
    from deepnotes.core.ensemble import ensemble_groups
    model_cfgs, train_cfgs = list(model_cfgs), list(train_cfgs)
    return [TrainRuns(model_cfgs[g[0]], len(g), train_cfgs[g[0]], masked)
            for g in ensemble_groups(model_cfgs, train_cfgs)]


@dataclass(frozen=True)
class _PerUnit:
    """Counts per unit of what the tiny runs vary (see the module's formula)."""
    fixed: Count
    per_step: Count
    per_block_step: Count
    per_member_step: Count       # launches that repeat per member and step (its batch is drawn on its own)
    per_member: Count            # launches that repeat per member once (its generator, its History)


def _scale(per: _PerUnit, depth: int, steps: int, members: int, batch: int) -> Count:
    launches = (per.fixed.launches + (members - 1) * per.per_member.launches
                + steps * (per.per_step.launches + depth * per.per_block_step.launches
                           + (members - 1) * per.per_member_step.launches))
    flops = members * batch * steps * (per.per_step.flops + depth * per.per_block_step.flops)
    return Count(flops, launches)


def _per_unit(count_at) -> _PerUnit:
    """count_at(depth, steps, members) at batch 1 → the linear model's coefficients."""
    fixed, per_step, per_block_step, _ = _bilinear(lambda n, s: count_at(n, s, 1))
    c111, c121, c112, c122 = count_at(1, 1, 1), count_at(1, 2, 1), count_at(1, 1, 2), count_at(1, 2, 2)
    per_member_step = (c122 - c112) - (c121 - c111)
    per_member = c112 - c111 - per_member_step
    # FLOPs are per member and sequence (batch 1, one member); the fixed part has none (no matmul outside steps)
    return _PerUnit(Count(0.0, fixed.launches), per_step, per_block_step, Count(0.0, per_member_step.launches),
                    Count(0.0, per_member.launches))


@functools.lru_cache(maxsize=256)
def _train_counts(model: ModelConfig, train: TrainConfig, masked: float | None) -> _PerUnit:
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack
    from deepnotes.core.ensemble import train_ensemble
    from deepnotes.core.train import Masked
    task = MarkovLanguage(vocab_size=model.vocab_size, seed=0)
    objective = Masked(masked) if masked is not None else None

    def count_at(depth: int, steps: int, members: int) -> Count:
        cfg = replace(model, n_layers=depth)
        stack = Stack([cfg] * members, seeds=list(range(members)), device="cpu")
        cfgs = [replace(train, steps=steps, seed=s) for s in range(members)]
        return counted(lambda: train_ensemble(stack, task, cfgs, objective=objective))

    return _per_unit(count_at)


@functools.lru_cache(maxsize=256)
def _pass_counts(model: ModelConfig, seq_len: int, backward: bool) -> _PerUnit:
    from deepnotes.core.engine import Stack

    def count_at(depth: int, passes: int, members: int) -> Count:
        stack = Stack([replace(model, n_layers=depth)] * members, seeds=list(range(members)), device="cpu")
        tokens = torch.zeros(members, 1, seq_len, dtype=torch.long)     # [K, B = 1, T]

        def run():
            for _ in range(passes):
                losses = stack.next_token_losses(tokens)                # [K]
                if backward:
                    losses.sum().backward()
        return counted(run)

    return _per_unit(count_at)


@functools.lru_cache(maxsize=64)
def _mlp_counts(width: int, backward: bool) -> _PerUnit:
    def count_at(depth: int, passes: int, members: int) -> Count:
        layers = [nn.Linear(width, width, bias=False) for _ in range(depth)]
        x = torch.zeros(members, 1, width)                              # [K, B = 1, width]

        def run():
            for _ in range(passes):
                h = x
                for layer in layers:
                    h = torch.tanh(layer(h))
                if backward:
                    h.sum().backward()
        return counted(run)

    return _per_unit(count_at)


# ------------------------------------------------------------------------------------------ the log

WORK_LOG_ENV = "DEEPNOTES_WORK_LOG"   # a file: every train_ensemble call appends its TrainRuns (tests compare plans)


def _log(record: dict) -> None:
    path = os.environ.get(WORK_LOG_ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def log_chapter(chapter: str) -> None:
    """Mark the start of a chapter in ``$DEEPNOTES_WORK_LOG``: the ensembles logged next are its own."""
    _log({"chapter": chapter})


def log_train_runs(model: ModelConfig, members: int, train: TrainConfig, masked: float | None) -> None:
    """Append one ensemble's :class:`TrainRuns` to ``$DEEPNOTES_WORK_LOG`` (a JSON line) when it is set."""
    _log({"model": asdict(model), "members": members, "train": asdict(train), "masked": masked})


def read_train_log(path) -> dict[str, list[TrainRuns]]:
    """The TrainRuns each chapter ran, in order, from a work log (chapter → list)."""
    out: dict[str, list[TrainRuns]] = {}
    chapter = "(before any chapter)"
    if not Path(path).exists():              # nothing trained, nothing marked
        return out
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if "chapter" in rec:
            chapter = rec["chapter"]
            out.setdefault(chapter, [])      # marked twice (tool and budget cell): one list
            continue
        train = rec["train"]
        train["betas"] = tuple(train["betas"])
        out.setdefault(chapter, []).append(
            TrainRuns(ModelConfig(**rec["model"]), rec["members"], TrainConfig(**train), rec["masked"]))
    return out


def _run_key(work: TrainRuns) -> tuple:
    """What decides an ensemble's cost: its graph, members, loop (not α, β, init std, lr, warmup, seed)."""
    from deepnotes.core.engine import graph_config
    t = work.train
    return (graph_config(work.model), work.members, t.optimizer, t.steps, t.batch_size, t.seq_len, work.masked)


def plan_differences(plan: list, ran: list[TrainRuns]) -> list[str]:
    """The training ensembles a plan lists but the chapter did not run, and those it ran but the plan
    lacks (compared as multisets of :func:`_run_key`); empty when the plan is exact."""
    from collections import Counter
    planned = Counter(_run_key(w) for w in plan if isinstance(w, TrainRuns))
    done = Counter(_run_key(w) for w in ran)
    out = [f"planned, not run ({n}×): {k}" for k, n in (planned - done).items()]
    return out + [f"run, not planned ({n}×): {k}" for k, n in (done - planned).items()]


def total(plan: list) -> Count:
    """The counts of every item of a chapter's plan."""
    out = ZERO
    for work in plan:
        if not isinstance(work, (TrainRuns, StackPasses, MLPPasses)):
            raise TypeError(f"a plan holds TrainRuns, StackPasses or MLPPasses, got {type(work).__name__}")
        out = out + work.count()
    return out


# --------------------------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class Rates:
    """How fast a device runs counted work: matmul FLOPs per second and seconds per launch."""
    device: str
    flops_per_second: float
    seconds_per_launch: float
    how: str                      # "measured here …" or where an assumed rate comes from

    def seconds(self, count: Count) -> float:
        return count.flops / self.flops_per_second + count.launches * self.seconds_per_launch


# Colab's free GPU. FP32 peak 8.1 TFLOPS (NVIDIA T4 datasheet); the book's small batched matmuls reach
# about half of it, and PyTorch's eager dispatch plus the launch itself cost about 10 µs per operator
# on Colab's two-vCPU host. Both are assumptions: no T4 was available to calibrate them on.
T4 = Rates("NVIDIA T4 (assumed)", 4.0e12, 10e-6,
           "assumed: half the T4's 8.1 TFLOPS FP32 peak, 10 µs per launch; not measured")

# The two calibration shapes: many small blocks (launch-bound) and two wide ones (FLOP-bound).
CALIBRATION_SHAPES = {
    "launch-bound": dict(depth=48, d_model=16, d_ff=32, n_heads=2, batch=2, seq_len=8),
    "FLOP-bound": dict(depth=2, d_model=256, d_ff=1024, n_heads=4, batch=8, seq_len=64),
}
CALIBRATION_STEPS = 3


def _calibration_work(shape: dict) -> TrainRuns:
    model = ModelConfig(n_layers=shape["depth"], d_model=shape["d_model"], n_heads=shape["n_heads"],
                        d_ff=shape["d_ff"], vocab_size=16, norm="pre")
    train = TrainConfig(optimizer="adam", lr=1e-4, steps=CALIBRATION_STEPS, batch_size=shape["batch"],
                        seq_len=shape["seq_len"])
    return TrainRuns(model, 1, train)


def _time_work(work: TrainRuns, device: torch.device) -> float:
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack
    task = MarkovLanguage(vocab_size=work.model.vocab_size, seed=0)
    stack = Stack([work.model], seeds=[0], device=device)
    with _unlogged():
        return _best_time(stack, task, work, device)


def _best_time(stack, task, work: TrainRuns, device: torch.device) -> float:
    from deepnotes.core.ensemble import train_ensemble
    train_ensemble(stack, task, [replace(work.train, steps=1)])          # warm up allocator and kernels
    best = float("inf")
    for _ in range(2):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        train_ensemble(stack, task, [work.train])
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best


@functools.lru_cache(maxsize=4)
def calibrate(device: str | None = None) -> Rates:
    """Measure this device's two rates from two short engine runs (a few seconds on a CPU).

    Solves  t_i = F_i / flop_rate + L_i · launch_seconds  for the launch-bound and the FLOP-bound
    shape (:data:`CALIBRATION_SHAPES`), with the counts of :meth:`TrainRuns.count`."""
    from deepnotes.core.budget import device as default_device
    if device is not None:
        choice("device type", str(device).split(":")[0], ("cpu", "cuda"))
    dev = torch.device(device) if device is not None else default_device()
    works = [_calibration_work(shape) for shape in CALIBRATION_SHAPES.values()]
    counts = [w.count() for w in works]
    times = [_time_work(w, dev) for w in works]
    (fa, la), (fb, lb) = [(c.flops, c.launches) for c in counts]
    det = fa * lb - fb * la
    inv_rate = (times[0] * lb - times[1] * la) / det       # Cramer's rule for (1/flop_rate, launch_seconds)
    per_launch = (fa * times[1] - fb * times[0]) / det
    if inv_rate <= 0 or per_launch <= 0:      # noise made one rate negative: fall back to one-term fits
        inv_rate, per_launch = times[1] / fb, times[0] / la
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"this CPU ({torch.get_num_threads()} threads)"
    return Rates(name, 1.0 / inv_rate, per_launch,
                 f"measured here: {CALIBRATION_STEPS} steps of two engine shapes, "
                 f"{times[0]:.2f} s launch-bound, {times[1]:.2f} s FLOP-bound")


# ------------------------------------------------------------------------------------------ estimate


@dataclass(frozen=True)
class Estimate:
    """A chapter's counted work at a budget and its estimated time on some devices."""
    chapter: str
    budget: str
    count: Count
    seconds: dict            # Rates.device → seconds

    def __repr__(self) -> str:
        where = "; ".join(f"{device}: {format_seconds(s)}" for device, s in self.seconds.items())
        return (f"Estimated cost of this chapter at the {self.budget} budget: {self.count.flops / 1e12:.3g} TFLOP "
                f"of matmuls and {self.count.launches / 1e6:.3g} M kernel launches; {where}.")


def format_seconds(seconds: float) -> str:
    if seconds < 1:
        return "< 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def estimate(chapter: str, plan: list, budget: str, rates: list[Rates]) -> Estimate:
    count = total(plan)
    return Estimate(chapter, budget, count, {r.device: r.seconds(count) for r in rates})


def chapter_plan(chapter: str, budget) -> list:
    """``deepnotes.chapters.<chapter>.cost.plan(budget)``."""
    import importlib
    from deepnotes.core.budget import resolve_budget
    from deepnotes.ledger.items import CHAPTERS
    choice("chapter", chapter, CHAPTERS)
    return importlib.import_module(f"deepnotes.chapters.{chapter}.cost").plan(resolve_budget(budget))


def chapter_estimate(chapter: str, budget=None) -> Estimate:
    """A chapter's budget cell: its plan's counts, timed with this device's calibrated rates and the
    T4's assumed ones; marks the chapter in the work log."""
    from deepnotes.core.budget import resolve_budget
    budget = resolve_budget(budget)
    log_chapter(chapter)
    return estimate(chapter, chapter_plan(chapter, budget), budget.name, [calibrate(), T4])
