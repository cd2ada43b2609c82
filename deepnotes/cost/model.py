"""What an experiment costs before it runs: counted FLOPs and kernel launches.

A chapter's plan (:func:`deepnotes.chapters.catalog.chapter_plan`: its experiments' ``work(budget)``, its
derivations and figures, a ``list[Work]``) lists its training ensembles and its probes; the ensembles come from
the same :class:`~deepnotes.core.ensembles.RunPlan` the chapter trains (:func:`planned_ensembles`). Each item
is *counted* by running the real code (the engine's ``train_ensemble``, a Stack's forward and backward, a
plain MLP) on the CPU, tiny, under PyTorch's ``FlopCounterMode`` (matmul FLOPs) and an operator counter (every
ATen operator dispatched: on a GPU each is about one kernel launch). The counts are exactly linear in what the
tiny runs vary:

    launches = fixed + members·per_member + steps·(per_step + members·per_member_step + depth·per_block_step)
    FLOPs    = members·batch·steps·(per_step + depth·per_block_step)

so depth ∈ {1, 2}, steps ∈ {1, 2}, members ∈ {1, 2} and a batch of 1 give a 1000-block run of 3000 steps
in milliseconds. A device runs a step in about

    seconds = FLOPs / flop_rate + launches · launch_seconds

(a roofline with a fixed cost per launch); :func:`~deepnotes.cost.estimate.calibrate` measures the two
rates on this machine from two short runs of the engine (one launch-bound, one FLOP-bound), and
:data:`~deepnotes.cost.estimate.T4` holds the rates assumed for Colab's T4, where the book was never
run. The SymPy derivations a page shows are :class:`Derivations`: timed once in units of a reference
derivation (:func:`reference_derivation`), which the calibration times on each machine. Trackers (recording
block norms every few steps) are not counted, so the estimate runs somewhat low for what a chapter does;
benchmarks/RESULTS.md compares it with measured times. :mod:`deepnotes.cost.log` checks each plan against
what ran.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import math
import os
import time
import typing
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from deepnotes.core.config import ModelConfig, TrainConfig, check_allocation
from deepnotes.core.ensembles import RunPlan
from deepnotes.core.validate import (
    Count as AtLeastOne,
)
from deepnotes.core.validate import (
    Finite,
    NonNegative,
    NonNegativeCount,
    Probability,
    Real,
)
from deepnotes.cost.kept import keep, read_table
from deepnotes.cost.log import unlogged


@dataclass(frozen=True)
class Count:
    """Matmul FLOPs and ATen operators (≈ kernel launches) of some work. Of them, the ``kernel_*`` part is
    the blocks that the compiled CPU kernels run where they are built (:func:`deepnotes.core.blocks.
    compiled_wins`): their FLOPs, the operators the PyTorch path would dispatch for them, and how many
    member-block passes (one block, one member, forward and backward) they are. ``steps``: the training
    steps (or probe passes), each with a fixed cost in Python around its operators. ``figures``: the
    figures the work draws into the page. ``module_launches``: the operators dispatched through
    ``nn.Module`` calls and autograd on a reference model or an MLP of ``nn.Linear`` layers, each with
    more Python around it than the engine's (priced by their own calibrated rate)."""

    flops: Real
    launches: Real
    kernel_flops: Real = 0.0
    kernel_launches: Real = 0.0
    kernel_blocks: Real = 0.0
    steps: Real = 0.0
    figures: Real = 0.0
    draws: Real = 0.0  # random numbers drawn to initialize weights
    timed: Real = 0.0  # seconds a timing measurement runs for, whatever the machine
    built_blocks: Real = 0.0  # blocks of reference models constructed (build_model: Python, not operators)
    module_launches: Real = 0.0  # of the launches, those dispatched through nn.Modules (more Python each)
    derivation_units: Real = 0.0  # SymPy work, in units of reference_derivation() (Python, not operators)

    def __add__(self, other: Count) -> Count:
        return Count(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def __sub__(self, other: Count) -> Count:
        return Count(*(a - b for a, b in zip(astuple(self), astuple(other), strict=True)))


ZERO = Count(0.0, 0.0)


class _OperatorCounter(TorchDispatchMode):
    """Counts every ATen operator dispatched inside it."""

    def __init__(self):
        super().__init__()
        self.operators = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.operators += 1
        return func(*args, **(kwargs or {}))


def counted(fn, *args) -> Count:
    """Run ``fn(*args)`` on the CPU and count its matmul FLOPs and its ATen operators."""
    flops, ops = FlopCounterMode(display=False), _OperatorCounter()
    with unlogged(), flops, ops:
        fn(*args)
    return Count(float(flops.get_total_flops()), float(ops.operators))


def _bilinear(count_at) -> tuple[Count, Count, Count, Count]:
    """From count_at(depth, steps) at depth, steps ∈ {1, 2}: (fixed, per step, per block-step, unused)."""
    c11, c12, c21, c22 = count_at(1, 1), count_at(1, 2), count_at(2, 1), count_at(2, 2)
    per_block_step = c22 - c21 - c12 + c11
    per_step = c12 - c11 - per_block_step
    fixed = c11 - per_step - per_block_step
    return fixed, per_step, per_block_step, ZERO


def _cost_shape(model: ModelConfig) -> ModelConfig:
    """What a count depends on: the model at depth 1, its norm style kept (which pieces the block
    runs), not β or the init std. An ensemble of several styles runs the union of their pieces; it is
    counted as the style of the member the plan names (a lower bound, like the rest of the model)."""
    return replace(model, n_layers=1, beta=None, init_std=None)


@dataclass(frozen=True)
class TrainRuns:
    """One ensemble of :func:`deepnotes.core.train.train_ensemble`: ``members`` runs of ``model``'s
    graph (any member's config), each ``train.steps`` steps of ``train.batch_size`` × ``train.seq_len``
    tokens. ``masked``: the masking probability of a :class:`~deepnotes.core.train.Masked` objective
    (None: next-token prediction). ``spread``: trained in a worker process beside others (a call of
    train_many with workers that made several ensembles), not in the chapter's own process; ``call``
    tells which call (the ensembles of one call share the workers; calls run one after the other)."""

    model: ModelConfig
    members: AtLeastOne
    train: TrainConfig
    masked: Probability | None = None
    spread: bool = False
    call: NonNegativeCount = 0

    def count(self) -> Count:
        loop = replace(self.train, steps=1, warmup_steps=min(self.train.warmup_steps, 1), batch_size=1, lr=1e-3, seed=0)
        per = _train_counts(_cost_shape(self.model), replace(loop, held_out=0), self.masked)
        n, steps, batch = self.model.n_layers, self.train.steps, self.train.batch_size
        return (
            _scale(per, n, steps, self.members, batch)
            + _kernel_part(self.model, per, n, steps, self.members, batch, self.train.seq_len)
            + Count(0.0, 0.0, steps=float(steps))
            + self.held_out_count()
        )

    def held_out_count(self) -> Count:
        """The reading of the final loss on the held-out sample: ``train.held_out`` sequences in forward passes
        of HELD_OUT_CHUNK (:func:`deepnotes.core.train.held_out_losses`), counted like the training loop."""
        from deepnotes.core.train import HELD_OUT_CHUNK

        held = self.train.held_out
        if not held:
            return ZERO
        chunk, n = min(held, HELD_OUT_CHUNK), self.model.n_layers
        per = _held_out_counts(_cost_shape(self.model), self.train.seq_len, self.masked)
        passes = math.ceil(held / chunk)
        return _scale(per, n, passes, self.members, chunk) + _kernel_part(
            self.model, per, n, passes, self.members, chunk, self.train.seq_len
        )


@dataclass(frozen=True)
class StackPasses:
    """``passes`` forward passes (and backward, if ``backward``) of a Stack of ``members`` copies of
    ``model`` on ``batch`` × ``seq_len`` tokens: the probes at initialization. ``compiled`` False: block
    by block on PyTorch's path whatever the shape (a pass that keeps the stream, ``return_stream``)."""

    model: ModelConfig
    members: AtLeastOne
    batch: AtLeastOne
    seq_len: AtLeastOne
    passes: AtLeastOne = 1
    backward: bool = True
    compiled: bool = True

    def count(self) -> Count:
        per = _pass_counts(_cost_shape(self.model), self.seq_len, self.backward)
        n = self.model.n_layers
        kernels = _kernel_part(self.model, per, n, self.passes, self.members, self.batch, self.seq_len)
        return (
            _scale(per, n, self.passes, self.members, self.batch)
            + (kernels if self.compiled else ZERO)
            + Count(0.0, 0.0, steps=float(self.passes))
        )


@dataclass(frozen=True)
class MLPPasses:
    """``passes`` forward passes (and backward, if ``backward``) of a plain MLP of ``depth`` square
    ``width`` × ``width`` layers on ``batch`` inputs, ``members`` of them side by side."""

    width: AtLeastOne
    depth: AtLeastOne
    batch: AtLeastOne
    passes: AtLeastOne = 1
    backward: bool = False
    members: AtLeastOne = 1

    def count(self) -> Count:
        check_allocation(2 * self.width * self.width + 4 * self.width, {"width": self.width})  # counted at depth ≤ 2
        per = _mlp_counts(self.width, self.backward)
        return _through_modules(_scale(per, self.depth, self.passes, self.members, self.batch))


@dataclass(frozen=True)
class ProbeCalls:
    """``calls`` calls of a probe that walks ``depth`` blocks on ``batch`` inputs: ``probe(*args, depth,
    batch)``, a module-level function that runs the real code on the CPU (it may read its results back
    to Python after every block, which the launch count sees as one operator each). Counted at depth 1
    and 2 on one input; FLOPs grow with the batch, launches do not."""

    probe: Callable[..., object]
    args: tuple
    depth: AtLeastOne
    batch: AtLeastOne
    calls: AtLeastOne = 1

    def count(self) -> Count:
        return _scale(_probe_counts(self.probe, self.args), self.depth, self.calls, 1, self.batch)


@dataclass(frozen=True)
class Render:
    """``figures`` figures drawn into the page as the book's PNGs (:func:`deepnotes.show.png.figure_png`):
    a chapter's own figures and its sliders' precomputed frames."""

    figures: NonNegativeCount

    def count(self) -> Count:
        return Count(0.0, 0.0, figures=float(self.figures))


@dataclass(frozen=True)
class Draws:
    """``numbers`` random numbers drawn to initialize weights: what building a wide model costs before
    it computes anything (:func:`init_draws`)."""

    numbers: NonNegativeCount

    def count(self) -> Count:
        return Count(0.0, 0.0, draws=float(self.numbers))


@dataclass(frozen=True)
class Builds:
    """``models`` reference models of ``model``'s config built (:func:`deepnotes.core.models.build_model`):
    each block's modules constructed in Python (about 1 ms a block on a 2-core CPU, measured by
    :func:`~deepnotes.cost.estimate.calibrate`) and the random numbers its initialization draws
    (:func:`init_draws`). What a chapter pays before a probe or a run that starts from a reference model
    computes anything."""

    model: ModelConfig
    models: AtLeastOne = 1

    def count(self) -> Count:
        models = self.models
        return Count(
            0.0, 0.0, built_blocks=float(self.model.n_layers * models), draws=float(init_draws(self.model) * models)
        )


@dataclass(frozen=True)
class ReferencePasses:
    """``passes`` forward passes (and backward, if ``backward``) of a reference model of ``model``'s config
    (build_model's modules, block by block on PyTorch's path) on ``batch`` × ``seq_len`` tokens: the
    probes that read gradients or the stream off the modules themselves. Counted on the modules at depth
    1 and 2, every operator a module launch (the pass's own Python included in their calibrated price);
    its building is a :class:`Builds`."""

    model: ModelConfig
    batch: AtLeastOne
    seq_len: AtLeastOne
    passes: AtLeastOne = 1
    backward: bool = True

    def count(self) -> Count:
        per = _reference_counts(_cost_shape(self.model), self.seq_len, self.backward)
        return _through_modules(_scale(per, self.model.n_layers, self.passes, 1, self.batch))


def init_draws(model: ModelConfig) -> int:
    """The random numbers :func:`deepnotes.core.models.build_model` draws for ``model``'s block matrices:
    each once by nn.Linear's own initialization, then once more (Xavier, or with an ``init_std`` the cut
    normal's one uniform draw per entry, :func:`deepnotes.core.models.trunc_normal_`)."""
    return int(model.n_layers * sum(2 * n for n in block_matrices(model)))


def block_matrices(model: ModelConfig) -> list[int]:
    """The entries of each matrix of one of ``model``'s blocks: Q, K, V and the output projection (d × d,
    a Transformer block's), the FFN's two (d × d_ff)."""
    d, f = model.d_model, model.d_ff
    return ([d * d] * 4 if model.block == "transformer" else []) + [d * f, f * d]


def reference_derivation() -> None:
    """The unit of SymPy work: a small system solved and an expression simplified, as the chapters'
    derivations do (the calibration prints its time), with SymPy's cache cleared first (a page meets most
    expressions once)."""
    import sympy as sp
    from sympy.core.cache import clear_cache

    clear_cache()
    a, b, n = sp.symbols("a b n", positive=True)
    sp.solve([sp.Eq(a**2 * (1 + b**2), 2 * n), sp.Eq(a * b, sp.sqrt(n))], [a, b], dict=True)
    sp.simplify((a**4 - b**4) / (a**2 + b**2) + sp.sqrt(n) ** 2 / n)


def best_of_three(run: Callable[[], object], device: torch.device | None = None) -> float:
    """The best of three timings of ``run()`` in seconds, after one untimed call (warm-up; on CUDA each
    timing waits for the device)."""
    run()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run()
        if device is not None and device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best


def reference_derivation_seconds() -> float:
    """The best of three timings of :func:`reference_derivation` in this process."""
    return best_of_three(reference_derivation)


@dataclass(frozen=True)
class Derivations:
    """The SymPy derivations and verdict tables a page shows, which dispatch no counted operators:
    ``calls``, each a (module-level function, arguments) pair the page calls. Counted by calling them
    once, timed in units of :func:`reference_derivation` timed beside them in the same process (both are
    Python, so the ratio is taken to carry from one CPU to another: an assumption, checked only by the
    pages' measured times), kept on disk per version of the code (each machine counts a version once);
    priced at the unit's calibrated time."""

    calls: tuple

    def count(self) -> Count:
        return Count(0.0, 0.0, derivation_units=_derivation_units(self.calls))


def _derivation_units(calls: tuple) -> float:
    """``calls``' time over :func:`reference_derivation`'s, read from the kept counts or measured now."""
    from sympy.core.cache import clear_cache

    key = "derivations" + repr([(f.__module__, f.__qualname__, args) for f, args in calls])
    stored = read_table(_counts_file()).get(key)
    if stored is None:
        unit = reference_derivation_seconds()
        clear_cache()
        start = time.perf_counter()
        for function, args in calls:
            function(*args)
        stored = (time.perf_counter() - start) / unit
        keep(_counts_file(), key, stored)
    return float(stored)


@dataclass(frozen=True)
class Timed:
    """A measurement of time that runs for ``seconds`` whatever the machine (a benchmark timer's
    ``min_run_time``, which the page shows)."""

    seconds: NonNegative

    def count(self) -> Count:
        return Count(0.0, 0.0, timed=float(self.seconds))


def slider_frames(sliders) -> int:
    """The frames a chapter's sliders precompute: the product of each grid's value counts, summed."""
    return sum(math.prod(len(values) for values in slider.grid.values()) for slider in sliders)


Work = (
    TrainRuns | StackPasses | ReferencePasses | MLPPasses | ProbeCalls | Render | Draws | Builds | Timed | Derivations
)


_CALLS = itertools.count(1)  # one number for each train_many call a plan describes (TrainRuns.call)
# the worker processes a plan is grouped for, where a caller sets it (planned_for); else this machine's
_PLAN_WORKERS: ContextVar[int | None] = ContextVar("plan_workers", default=None)


def planned_for(workers: AtLeastOne) -> contextlib.AbstractContextManager[None]:
    """Plans made inside group their runs for ``workers`` processes: 1 for a GPU (the T4's estimate),
    whatever this machine's CPU uses otherwise. train_many cuts ensembles to balance the workers, so
    the same runs form other ensembles on a GPU than on a 2-core CPU. A bad count is refused here, at
    the call, not when the ``with`` block is entered."""
    return _planning(workers)


@contextlib.contextmanager
def _planning(workers: int):
    token = _PLAN_WORKERS.set(workers)
    try:
        yield
    finally:
        _PLAN_WORKERS.reset(token)


def ensembles(
    model_cfgs, train_cfgs, masked: Probability | None = None, workers: AtLeastOne | None = None
) -> list[TrainRuns]:
    """The ensembles :func:`~deepnotes.core.ensembles.train_many` trains for these runs (same grouping,
    for ``workers`` processes: by default :func:`planned_for`'s, else as many as the chapters use on
    this machine's CPU)."""
    from deepnotes.core.ensembles import ensemble_groups
    from deepnotes.core.workers import default_workers

    model_cfgs, train_cfgs = list(model_cfgs), list(train_cfgs)
    if workers is None:
        workers = _PLAN_WORKERS.get() or default_workers(_device())
    groups = ensemble_groups(model_cfgs, train_cfgs, workers)
    spread = workers > 1 and len(groups) > 1  # run_jobs trains a single ensemble in the calling process
    call = next(_CALLS)
    return [TrainRuns(model_cfgs[g[0]], len(g), train_cfgs[g[0]], masked, spread, call) for g in groups]


def planned_ensembles(plan: RunPlan, workers: AtLeastOne | None = None) -> list[TrainRuns]:
    """The ensembles :func:`~deepnotes.core.ensembles.train_plan` trains for ``plan``: :func:`ensembles` of its
    configs, masked where its objective is :class:`~deepnotes.core.train.Masked` (its masking probability)."""
    from deepnotes.core.train import Masked

    masked = plan.objective.prob if isinstance(plan.objective, Masked) else None
    return ensembles(plan.model_cfgs, plan.train_cfgs, masked=masked, workers=workers)


def _device():
    from deepnotes.core.config import device

    return device()


@dataclass(frozen=True)
class _PerUnit:
    """Counts per unit of what the tiny runs vary (see the module's formula)."""

    fixed: Count
    per_step: Count
    per_block_step: Count
    per_member_step: Count  # launches that repeat per member and step (its batch is drawn on its own)
    per_member: Count  # launches that repeat per member once (its generator, its History)


def _scale(per: _PerUnit, depth: int, steps: int, members: int, batch: int) -> Count:
    launches = (
        per.fixed.launches
        + (members - 1) * per.per_member.launches
        + steps
        * (per.per_step.launches + depth * per.per_block_step.launches + (members - 1) * per.per_member_step.launches)
    )
    flops = members * batch * steps * (per.per_step.flops + depth * per.per_block_step.flops)
    return Count(flops, launches)


def _through_modules(count: Count) -> Count:
    """``count`` with all its launches dispatched through nn.Modules (:attr:`Count.module_launches`)."""
    return replace(count, module_launches=count.launches)


def _kernel_part(model: ModelConfig, per: _PerUnit, depth: int, repeats: int, members: int, batch: int, seq_len: int):
    """The blocks' share of a count, where the compiled kernels run them (else nothing): ``repeats``
    steps or passes of ``members`` members through ``depth`` blocks on ``batch`` × ``seq_len`` tokens."""
    from deepnotes.core.blocks import compiled_wins

    if not compiled_wins(batch * seq_len, model.d_model, model.d_ff, model.block == "transformer"):
        return ZERO
    return Count(
        0.0,
        0.0,
        kernel_flops=members * batch * repeats * depth * per.per_block_step.flops,
        kernel_launches=repeats * depth * per.per_block_step.launches,
        kernel_blocks=float(members * depth * repeats),
    )


def _per_unit(count_at) -> _PerUnit:
    """count_at(depth, steps, members) at batch 1 → the linear model's coefficients."""
    count_at = functools.cache(count_at)  # (1, 1, 1) and (1, 2, 1) are asked twice: run each once
    fixed, per_step, per_block_step, _ = _bilinear(lambda n, s: count_at(n, s, 1))
    c111, c121, c112, c122 = count_at(1, 1, 1), count_at(1, 2, 1), count_at(1, 1, 2), count_at(1, 2, 2)
    per_member_step = (c122 - c112) - (c121 - c111)
    per_member = c112 - c111 - per_member_step
    # FLOPs are per member and sequence (batch 1, one member); the fixed part has none (no matmul outside steps)
    return _PerUnit(
        Count(0.0, fixed.launches),
        per_step,
        per_block_step,
        Count(0.0, per_member_step.launches),
        Count(0.0, per_member.launches),
    )


COUNTS_FILE = "counts-{}.json"  # in deepnotes.core.kernels.cache_dir(), one file per version of the code


@functools.cache
def _counts_file() -> Path:
    """Where counts are kept for this code: named by a hash of every module of the package, torch's
    version and the kernels in use (the counts are the operators this code dispatches)."""
    from deepnotes.core import kernels

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(torch.__version__.encode() + os.environ.get("DEEPNOTES_FUSED", "").encode())
    lib = kernels.library()
    digest.update(str(getattr(lib, "_name", None)).encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(path.read_bytes())
    return kernels.cache_dir() / COUNTS_FILE.format(digest.hexdigest()[:16])


def _kept(count_fn):
    """``count_fn`` (a config's per-unit counts: deterministic, the same for the same code) kept on disk
    beside the compiled kernels, so that each page of a build counts a shape once, not every time (a
    chapter's budget cell counted for up to 5 s)."""

    @functools.wraps(count_fn)
    def kept(*args) -> _PerUnit:
        key = f"{count_fn.__name__}{args!r}"
        stored = read_table(_counts_file()).get(key)
        if stored is not None:
            return _PerUnit(*(Count(*c) for c in stored))
        out = count_fn(*args)
        keep(_counts_file(), key, [list(astuple(getattr(out, f.name))) for f in fields(out)])
        return out

    return kept


@functools.lru_cache(maxsize=256)
@_kept
def _train_counts(model: ModelConfig, train: TrainConfig, masked: Finite | None) -> _PerUnit:
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack
    from deepnotes.core.train import Masked, train_ensemble

    task = MarkovLanguage(vocab_size=model.vocab_size, seed=0)
    objective = Masked(masked) if masked is not None else None

    def count_at(depth: int, steps: int, members: int) -> Count:
        cfg = replace(model, n_layers=depth)
        stack = Stack([cfg] * members, seeds=list(range(members)), device="cpu")
        cfgs = [
            replace(train, steps=steps, warmup_steps=min(train.warmup_steps, steps), seed=s) for s in range(members)
        ]
        return counted(lambda: train_ensemble(stack, task, cfgs, objective=objective))

    return _per_unit(count_at)


@functools.lru_cache(maxsize=256)
@_kept
def _held_out_counts(model: ModelConfig, seq_len: int, masked: Finite | None) -> _PerUnit:
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack
    from deepnotes.core.train import Masked, held_out_losses

    task = MarkovLanguage(vocab_size=model.vocab_size, seed=0)
    objective = Masked(masked) if masked is not None else None

    def count_at(depth: int, passes: int, members: int) -> Count:  # a pass of one sequence (batch 1)
        stack = Stack([replace(model, n_layers=depth)] * members, seeds=list(range(members)), device="cpu")
        return counted(lambda: held_out_losses(stack, [task] * members, passes, seq_len, objective, chunk=1))

    return _per_unit(count_at)


@functools.lru_cache(maxsize=256)
@_kept
def _pass_counts(model: ModelConfig, seq_len: int, backward: bool) -> _PerUnit:
    from deepnotes.core.engine import Stack

    def count_at(depth: int, passes: int, members: int) -> Count:
        stack = Stack([replace(model, n_layers=depth)] * members, seeds=list(range(members)), device="cpu")
        tokens = torch.zeros(members, 1, seq_len, dtype=torch.long)  # [K, B = 1, T]

        def run():
            for _ in range(passes):
                losses = stack.next_token_losses(tokens)  # [K]
                if backward:
                    losses.sum().backward()

        return counted(run)

    return _per_unit(count_at)


@functools.lru_cache(maxsize=64)
@_kept
def _reference_counts(model: ModelConfig, seq_len: int, backward: bool) -> _PerUnit:
    from deepnotes.core.models import build_model

    def count_at(depth: int, passes: int, members: int) -> Count:
        built = [build_model(replace(model, n_layers=depth), seed=k, device="cpu") for k in range(members)]
        tokens = torch.zeros(1, seq_len, dtype=torch.long)  # [B = 1, T]

        def run():
            for _ in range(passes):
                for reference in built:
                    if backward:
                        reference.loss(tokens).backward()
                    else:
                        with torch.no_grad():
                            reference.hidden(tokens)

        return counted(run)

    return _per_unit(count_at)


@functools.lru_cache(maxsize=64)
@_kept
def _mlp_counts(width: int, backward: bool) -> _PerUnit:
    def count_at(depth: int, passes: int, members: int) -> Count:
        layers = [nn.Linear(width, width, bias=False) for _ in range(depth)]
        x = torch.zeros(members, 1, width)  # [K, B = 1, width]

        def run():
            for _ in range(passes):
                h = x
                for layer in layers:
                    h = torch.tanh(layer(h))
                if backward:
                    h.sum().backward()

        return counted(run)

    return _per_unit(count_at)


@functools.lru_cache(maxsize=64)
def _probe_counts(probe, args: tuple) -> _PerUnit:
    """``probe(*args, depth, 1)`` counted at depths 1 and 2: a call is a "step" of the linear model."""
    one, two = (counted(lambda: probe(*args, depth, 1)) for depth in (1, 2))
    per_block = two - one
    return _PerUnit(ZERO, one - per_block, per_block, ZERO, ZERO)


def total(plan: list) -> Count:
    """The counts of every item of a chapter's plan."""
    out = ZERO
    for work in plan:
        if not isinstance(work, typing.get_args(Work)):
            raise TypeError(
                f"a plan holds {', '.join(kind.__name__ for kind in typing.get_args(Work))}; got {type(work).__name__}"
            )
        out = out + work.count()
    return out


# ---- the plan against the work log ------------------------------------------------------------
def read_train_log(path) -> dict[str, list]:
    """The :class:`~deepnotes.cost.model.TrainRuns` each chapter ran, in order (chapter → list)."""
    out: dict[str, list[TrainRuns]] = {}
    chapter = "(before any chapter)"
    if not Path(path).exists():  # nothing trained, nothing marked
        return out
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        try:
            chapter = _read_log_line(json.loads(line), chapter, out)
        except (ValueError, KeyError, TypeError) as err:  # JSON, a missing field, a config the door refuses
            raise ValueError(
                f"the work log {path}, line {number}, is not a work record ({err!r}): {line[:200]}"
            ) from None
    return out


def _read_log_line(rec: dict, chapter: str, out: dict[str, list]) -> str:
    """One record of the work log added to ``out``: a chapter mark (the chapter now logging, returned) or one
    trained ensemble of the chapter ``chapter``."""
    if "chapter" in rec:
        chapter = rec["chapter"]
        out.setdefault(chapter, [])  # marked twice (tool and budget cell): one list
        return chapter
    train = rec["train"]
    train["betas"] = tuple(train["betas"])
    out.setdefault(chapter, []).append(
        TrainRuns(
            ModelConfig(**rec["model"]),
            rec["members"],
            TrainConfig(**train),
            rec["masked"],
            rec.get("spread", False),
        )
    )
    return chapter


def _run_key(work) -> tuple:
    """What decides an ensemble's cost: its graph, members, loop (not α, β, init std, lr, warmup, seed),
    and where it trains (a worker process or the chapter's own)."""
    from deepnotes.core.engine import graph_config

    t = work.train
    key = (
        graph_config(work.model),
        work.members,
        t.optimizer,
        t.steps,
        t.batch_size,
        t.seq_len,
        t.held_out,
        work.masked,
    )
    return (*key, "spread" if work.spread else "here")


def plan_differences(plan: list, ran: list) -> list[str]:
    """The training ensembles a plan lists but the chapter did not run, and those it ran but the plan
    lacks (compared as multisets of :func:`_run_key`); empty when the plan is exact."""
    planned = Counter(_run_key(w) for w in plan if isinstance(w, TrainRuns))
    done = Counter(_run_key(w) for w in ran)
    out = [f"planned, not run ({n}×): {k}" for k, n in (planned - done).items()]
    return out + [f"run, not planned ({n}×): {k}" for k, n in (done - planned).items()]
