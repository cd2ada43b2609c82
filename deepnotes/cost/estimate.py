"""How long counted work takes on a device: measured rates for this machine, assumed ones for a T4,
and the estimate every chapter's budget cell prints (:func:`deepnotes.chapters.catalog.chapter_estimate`).

A plan's items take (counts: :mod:`deepnotes.cost.model`)

    seconds = (FLOPs − kernel FLOPs) / flop_rate + (launches − kernel − module launches) · launch_seconds
              + kernel FLOPs / kernel_flop_rate + kernel blocks · kernel_block_seconds
              + module launches · module_launch_seconds + derivation units · derivation_seconds
              + figures · figure_seconds + …

where the kernel terms are the blocks the compiled CPU kernels run (zero on a GPU, or where they are not
built). The training ensembles are spread over the worker processes as :func:`deepnotes.core.ensembles.
run_jobs` spreads them (the longest first, onto the worker that is free first), each worker one thread,
each train_many call starting its own workers (:attr:`Rates.seconds_per_pool`); everything else runs
after them in the chapter's own process; the page adds the time this process took to import the package
and calibrate (:attr:`Rates.setup_seconds`). :func:`calibrate` measures every rate
on this machine in about ten seconds, once per boot (kept beside the compiled kernels, so that each page
of a build does not pay it again; ``DEEPNOTES_RECALIBRATE=1`` measures again); :data:`T4` holds the
rates assumed for Colab's T4, where the book was never run (device work only: the figures are drawn on Colab's CPU).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.validate import Count as AtLeastOne
from deepnotes.core.validate import NonNegative, Positive, choice
from deepnotes.cost.kept import keep, read_table
from deepnotes.cost.log import unlogged
from deepnotes.cost.model import Count, TrainRuns, best_of_three, reference_derivation_seconds, total


@dataclass(frozen=True)
class Rates:
    """How fast a device runs counted work: PyTorch's path (matmul FLOPs per second and seconds per
    launch, in this process; ``worker_flops_per_second`` in a one-thread worker, where ensembles train);
    the compiled kernels, where built (FLOPs per second and seconds per member-block pass, one thread;
    None: not here); seconds per figure; the worker processes; and the setup this process has paid."""

    device: str
    flops_per_second: Positive
    seconds_per_launch: Positive
    how: str  # "measured here …" or where an assumed rate comes from
    kernel_flops_per_second: Positive | None = None
    seconds_per_kernel_block: NonNegative = 0.0
    seconds_per_step: NonNegative = 0.0  # Python's own time around a step's operators (on a GPU: in the launches)
    seconds_per_figure: NonNegative = 0.0
    seconds_per_draw: NonNegative = 0.0  # a random number drawn to initialize weights (0: not counted)
    workers: AtLeastOne = 1
    worker_flops_per_second: Positive | None = None
    setup_seconds: NonNegative = 0.0
    seconds_per_pool: NonNegative = 0.0  # starting the worker processes of one train_many call (spawn, import)
    seconds_per_built_block: NonNegative = 0.0  # constructing one block of a reference model (build_model)
    seconds_per_module_launch: Positive | None = None  # an operator through nn.Modules (None: seconds_per_launch)
    seconds_per_derivation_unit: NonNegative = 0.0  # model.reference_derivation() (SymPy, in this process)

    def seconds(self, count: Count, in_worker: bool = False) -> float:
        """Seconds of ``count`` one after the other: in a worker at its one thread's FLOP rate, else at
        this process's. The kernels' blocks at their one-thread rate wherever they run: spread over a
        process's threads, an ensemble's members gain little (measured: 4 members of 24 blocks, 256 tokens,
        29.5 ms a step on 2 threads, 33.9 on one), their weights and moments streaming from memory."""
        rate = (self.worker_flops_per_second if in_worker else None) or self.flops_per_second
        flops, launches = count.flops, count.launches - count.module_launches
        per_module_launch = self.seconds_per_module_launch
        out = count.module_launches * (self.seconds_per_launch if per_module_launch is None else per_module_launch)
        out += count.figures * self.seconds_per_figure + count.steps * self.seconds_per_step
        out += count.derivation_units * self.seconds_per_derivation_unit
        out += count.draws * self.seconds_per_draw + count.timed + count.built_blocks * self.seconds_per_built_block
        if self.kernel_flops_per_second is not None:
            flops, launches = flops - count.kernel_flops, launches - count.kernel_launches
            kernel = (
                count.kernel_flops / self.kernel_flops_per_second + count.kernel_blocks * self.seconds_per_kernel_block
            )
            out += kernel
        return out + flops / rate + launches * self.seconds_per_launch

    def work_seconds(self, work) -> float:
        """One plan item, in a worker process if it is an ensemble trained there."""
        return self.seconds(work.count(), in_worker=isinstance(work, TrainRuns) and work.spread)

    def plan_seconds(self, plan: list) -> float:
        """A chapter's wall time: each train_many call's ensembles spread over the worker processes (the
        longest first, each onto the worker free first; the calls one after the other, each starting its
        own workers), the rest of its work in this process, and its setup."""
        calls: dict[int, list[float]] = {}
        here = 0.0
        for work in plan:
            if isinstance(work, TrainRuns) and work.spread:
                calls.setdefault(work.call, []).append(self.work_seconds(work))
            else:
                here += self.work_seconds(work)
        for seconds in calls.values():
            loads = [0.0] * self.workers
            for s in sorted(seconds, reverse=True):
                loads[loads.index(min(loads))] += s
            here += max(loads) + self.seconds_per_pool
        return here + self.setup_seconds


# Colab's free GPU. FP32 peak 8.1 TFLOPS (NVIDIA T4 datasheet); the book's small batched matmuls reach
# about half of it, and PyTorch's eager dispatch plus the launch itself cost about 10 µs per operator
# on Colab's two-vCPU host. Both are assumptions: no T4 was available to calibrate them on.
T4 = Rates(
    "NVIDIA T4 (assumed)", 4.0e12, 10e-6, "assumed: half the T4's 8.1 TFLOPS FP32 peak, 10 µs per launch; not measured"
)

# The two calibration shapes of PyTorch's path: many small blocks (launch-bound) and two wide ones
# (FLOP-bound), both with the compiled kernels off.
CALIBRATION_SHAPES = {
    "launch-bound": dict(depth=48, d_model=16, d_ff=32, n_heads=2, batch=2, seq_len=8),
    "FLOP-bound": dict(depth=2, d_model=256, d_ff=1024, n_heads=4, batch=8, seq_len=64),
}
# The compiled kernels' two shapes, each at two depths (the difference is the blocks' own time): the
# 1000-layer chapter's blocks, at depths whose weights and Adam moments come from memory as at 1000
# (the kernels' speed depends on it: 31 µs a block from cache, 42 from memory), and the cpu budget's
# batch of 16 × 16 tokens, eight times the work, at the same width (the kernels' FLOP rate depends on
# the width: 31 GFLOP/s at 32, 63 at 64; the chapters' compiled blocks are 16 to 32 wide).
KERNEL_SHAPES = {
    "chapter blocks": (dict(d_model=32, d_ff=64, n_heads=2, batch=4, seq_len=8), (40, 400)),
    "budget batch": (dict(d_model=32, d_ff=64, n_heads=2, batch=16, seq_len=16), (4, 24)),
}
# A step of one block and one member: what the step costs besides its blocks' operators
STEP_SHAPE = dict(depth=1, d_model=16, d_ff=32, n_heads=2, batch=2, seq_len=8)
# A reference model (nn.Modules, float32) at the cpu budget's width, built and passed forward and backward
# on the cpu budget's probe batch: the price of constructing a block and of an operator through modules
REFERENCE_SHAPE = dict(depth=8, d_model=32, d_ff=64, n_heads=2, batch=16, seq_len=16)
CALIBRATION_STEPS = 3


def _calibration_work(shape: dict, depth: int | None = None) -> TrainRuns:
    model = ModelConfig(
        n_layers=depth or shape["depth"],
        d_model=shape["d_model"],
        n_heads=shape["n_heads"],
        d_ff=shape["d_ff"],
        vocab_size=16,
        norm="pre",
    )
    train = TrainConfig(
        optimizer="adam",
        lr=1e-4,
        steps=CALIBRATION_STEPS,
        batch_size=shape["batch"],
        seq_len=shape["seq_len"],
        held_out=0,  # the calibration times training steps
    )
    return TrainRuns(model, 1, train)


def _time_work(work: TrainRuns, device: torch.device) -> float:
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack

    task = MarkovLanguage(vocab_size=work.model.vocab_size, seed=0)
    stack = Stack([work.model], seeds=[0], device=device)
    with unlogged():
        return _best_time(stack, task, work, device)


def _best_time(stack, task, work: TrainRuns, device: torch.device) -> float:
    from deepnotes.core.train import train_ensemble

    train_ensemble(
        stack, task, [replace(work.train, steps=1, warmup_steps=min(work.train.warmup_steps, 1))]
    )  # warm-up run
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


@contextlib.contextmanager
def _setting(threads: int | None = None, fused: str | None = None):
    """Run with ``threads`` intra-op threads and ``DEEPNOTES_FUSED=fused`` (None: as they are), restored after."""
    from deepnotes.core.blocks import ENV_SWITCH

    before_threads, before_fused = torch.get_num_threads(), os.environ.get(ENV_SWITCH)
    try:
        if threads is not None:
            torch.set_num_threads(threads)
        if fused is not None:
            os.environ[ENV_SWITCH] = fused
        yield
    finally:
        torch.set_num_threads(before_threads)
        if fused is not None:
            if before_fused is None:
                os.environ.pop(ENV_SWITCH, None)
            else:
                os.environ[ENV_SWITCH] = before_fused


def _solve(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple[float, float]:
    """(1/rate, seconds per unit) from two measurements t = FLOPs/rate + units·seconds, each given as
    (FLOPs, units, t): Cramer's rule; where noise makes one negative, one-term fits of each."""
    (fa, ua, ta), (fb, ub, tb) = a, b
    det = fa * ub - fb * ua
    inv_rate = (ta * ub - tb * ua) / det if det else -1.0
    per_unit = (fa * tb - fb * ta) / det if det else -1.0
    if inv_rate <= 0 or per_unit <= 0:
        inv_rate, per_unit = tb / fb, ta / ua
    return inv_rate, per_unit


def _pytorch_rates(dev: torch.device) -> tuple[float, float, float, str]:
    """PyTorch's path, the compiled kernels off: (FLOP rate here, seconds per launch, FLOP rate on one
    thread, what was timed)."""
    works = [_calibration_work(shape) for shape in CALIBRATION_SHAPES.values()]
    counts = [w.count() for w in works]
    with _setting(fused="0"):
        times = [_time_work(w, dev) for w in works]
        one_thread = times[1]
        if dev.type == "cpu" and torch.get_num_threads() > 1:
            with _setting(threads=1):
                one_thread = _time_work(works[1], dev)
    (fa, la), (fb, lb) = [(c.flops, c.launches) for c in counts]
    inv_rate, per_launch = _solve((fa, la, times[0]), (fb, lb, times[1]))
    worker_rate = fb / max(one_thread - lb * per_launch, 1e-9)
    how = f"{CALIBRATION_STEPS} steps of two engine shapes, {times[0]:.2f} s launch-bound, {times[1]:.2f} s FLOP-bound"
    return 1.0 / inv_rate, per_launch, worker_rate, how


def _kernel_rates(dev: torch.device) -> tuple[float, float] | None:
    """The compiled kernels on one thread: (FLOPs per second, seconds per member-block pass), from the
    blocks' own time at each of :data:`KERNEL_SHAPES` (two depths apart); None where they are not built."""
    from deepnotes.core import kernels

    if dev.type != "cpu" or kernels.library() is None:
        return None
    points = []
    with _setting(threads=1):
        for shape, (low, high) in KERNEL_SHAPES.values():
            works = [_calibration_work(shape, depth) for depth in (low, high)]
            per_block = (_time_work(works[1], dev) - _time_work(works[0], dev)) / ((high - low) * CALIBRATION_STEPS)
            flops = (works[1].count().kernel_flops - works[0].count().kernel_flops) / ((high - low) * CALIBRATION_STEPS)
            points.append((flops, 1.0, per_block))
    inv_rate, per_block = _solve(*points)
    return 1.0 / inv_rate, per_block


def _step_seconds(dev: torch.device, rate: float, per_launch: float, kernel) -> float:
    """Python's time around a step's operators: a one-block, one-member step timed, less what its
    operators and blocks take by the other rates (at least 0). On CUDA the launches already hold it."""
    if dev.type != "cpu":
        return 0.0
    work = _calibration_work(STEP_SHAPE)
    partial = Rates("", rate, per_launch, "", *(kernel or (None, 0.0)))
    return max(0.0, (_time_work(work, dev) - partial.seconds(work.count())) / CALIBRATION_STEPS)


def _draw_seconds(dev: torch.device) -> float:
    """Seconds per normal random number drawn into a 4 M-entry tensor (the best of three)."""
    x = torch.empty(1 << 22, device=dev)
    return best_of_three(x.normal_, dev) / x.numel()


def _figure_seconds() -> float:
    """The time :func:`deepnotes.show.png.figure_png` takes for a figure like the book's: two panels of
    five curves each with a legend, titles and labels (the best of three)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from deepnotes.show.png import figure_png

    def draw():
        fig, axes = plt.subplots(1, 2, figsize=(6, 2.8), layout="constrained")
        for k, ax in enumerate(axes):
            for j in range(5):
                ax.plot(range(50), [(i + 1) ** (0.1 * j) + k for i in range(50)], label=f"curve {j}")
            ax.set(xscale="log", title=f"panel {k}", xlabel="step", ylabel="loss")
            ax.legend(fontsize=9)
        figure_png(fig)

    return best_of_three(draw, torch.device("cpu"))  # the untimed first call also loads the fonts


def _reference_seconds(dev: torch.device, rate: float) -> tuple[float, float]:
    """(seconds to construct one block of a reference model, seconds per operator dispatched through its
    modules): :func:`~deepnotes.core.models.build_model` of :data:`REFERENCE_SHAPE` timed onto ``dev``
    (its random numbers, priced by :func:`_draw_seconds`, are negligible at this width), then one forward
    and backward of its modules on the shape's batch, less its FLOPs at ``rate``, per operator counted
    (:class:`~deepnotes.cost.model.ReferencePasses`): the Python of module calls and autograd included."""
    from deepnotes.core.models import build_model
    from deepnotes.cost.model import ReferencePasses

    shape = REFERENCE_SHAPE
    model = _calibration_work(shape).model
    build = best_of_three(lambda: build_model(model, device=dev), dev) / shape["depth"]
    reference = build_model(model, device=dev)
    tokens = torch.zeros(shape["batch"], shape["seq_len"], dtype=torch.long, device=dev)  # [B, T]
    passed = best_of_three(lambda: reference.loss(tokens).backward(), dev)
    count = ReferencePasses(model, shape["batch"], shape["seq_len"]).count()
    launches = passed - count.flops / rate
    # where noise lets the FLOPs at ``rate`` explain the whole pass, the one-term fit (as :func:`_solve` falls
    # back to): the pass's time per operator, never 0 (a Positive rate; 0 would refuse the calibration)
    return build, (launches if launches > 0 else passed) / count.module_launches


def _pool_seconds(workers: int) -> float:
    """Seconds to start ``workers`` Python processes at once that import what a train_many worker imports
    (0 for one worker: its jobs run in this process): the cost of each call's worker pool. Started as
    plain subprocesses, not through run_jobs, so that a script calling :func:`calibrate` without an
    ``if __name__ == "__main__":`` guard is not re-run by them. Measured on two cores: 1.8 s, and 1.9 s
    for run_jobs' own pool handing each of two workers an empty job."""
    if workers <= 1:
        return 0.0
    command = [sys.executable, "-c", "import deepnotes.core.ensembles"]
    start = time.perf_counter()
    started = [subprocess.Popen(command, stdout=subprocess.DEVNULL) for _ in range(workers)]
    for process in started:
        process.wait()
    return time.perf_counter() - start


CALIBRATION_FILE = "calibration.json"  # in deepnotes.core.kernels.cache_dir(), beside the compiled kernels
RECALIBRATE_ENV = "DEEPNOTES_RECALIBRATE"  # set to 1: measure again, whatever the file holds
CALIBRATION_HOURS = 24  # where the machine has no boot id, a measurement is kept this long


def _boot_id() -> str | None:
    """This boot of the machine (Linux), so that a measurement is never carried to another machine or
    boot; None elsewhere."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _calibration_key(dev: torch.device) -> str:
    """What the rates depend on: the device, the kernels built for it (their file names the target and
    a hash of their source and flags), torch, the threads and workers, this boot, the estimate's own
    code (a changed calibration measures again)."""
    from deepnotes.core import kernels
    from deepnotes.core.workers import default_workers

    lib = kernels.library() if dev.type == "cpu" else None
    parts = {
        "device": str(dev) + (torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor()),
        "kernels": getattr(lib, "_name", None),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "workers": default_workers(dev),
        "boot": _boot_id(),
        "code": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16],
    }
    return json.dumps(parts, sort_keys=True)


def _stored_rates(key: str) -> Rates | None:
    """The rates measured before under ``key`` on this boot (or within CALIBRATION_HOURS), else None."""
    from deepnotes.core.kernels import cache_dir

    if os.environ.get(RECALIBRATE_ENV) == "1":
        return None
    stored = read_table(cache_dir() / CALIBRATION_FILE).get(key)
    if not stored or (_boot_id() is None and time.time() - stored["at"] > CALIBRATION_HOURS * 3600):
        return None
    return Rates(**stored["rates"])


def _store_rates(key: str, rates: Rates) -> None:
    """Keep ``rates`` under ``key`` beside the compiled kernels."""
    from deepnotes.core.kernels import cache_dir

    keep(cache_dir() / CALIBRATION_FILE, key, {"at": time.time(), "rates": asdict(rates)})


def calibrate(device: str | None = None) -> Rates:
    """This device's rates (:func:`measure`), measured once per boot of the machine and kept beside the
    compiled kernels (``DEEPNOTES_RECALIBRATE=1`` measures again), with the setup this process has paid
    (importing the package, and this calibration or reading it)."""
    return _calibrate(device)


@functools.lru_cache(maxsize=4)
def _calibrate(device: str | None = None) -> Rates:
    """The cache behind :func:`calibrate`: the door checks the arguments there, before hashing."""
    from deepnotes import IMPORT_SECONDS
    from deepnotes.core.config import device as default_device

    start = time.perf_counter()
    if device is not None:
        choice("device type", str(device).split(":")[0], ("cpu", "cuda"))
    dev = torch.device(device) if device is not None else default_device()
    key = _calibration_key(dev)
    rates = _stored_rates(key)
    if rates is None:
        rates = measure(dev)
        _store_rates(key, rates)
    else:
        rates = replace(rates, how=rates.how.replace("measured here", "measured here earlier on this boot", 1))
    return replace(rates, setup_seconds=IMPORT_SECONDS + time.perf_counter() - start)


def measure(dev: torch.device) -> Rates:
    """Measure ``dev``'s rates in a few seconds: PyTorch's path from two short engine runs with the
    kernels off (one launch-bound, one FLOP-bound, the latter also on one thread), the compiled kernels'
    from two shapes at two depths each (one thread), a figure drawn, a reference model built and passed
    through, a reference SymPy derivation, the start of a train_many call's worker processes. No setup
    (:func:`calibrate` adds it)."""
    from deepnotes.core.workers import default_workers

    rate, per_launch, worker_rate, how = _pytorch_rates(dev)
    kernel = _kernel_rates(dev)
    step = _step_seconds(dev, rate, per_launch, kernel)
    figure = _figure_seconds()
    draw = _draw_seconds(dev)
    build, per_module_launch = _reference_seconds(dev, rate)
    derivation = reference_derivation_seconds()
    workers = default_workers(dev)
    pool = _pool_seconds(workers)
    if kernel is not None:
        how += f"; kernels {kernel[0] / 1e9:.3g} GFLOP/s and {kernel[1] * 1e6:.3g} µs a block"
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"this CPU ({torch.get_num_threads()} threads)"
    return Rates(
        name,
        rate,
        per_launch,
        f"measured here: {how}; a figure {figure:.2f} s; a reference block built {build * 1e3:.2g} ms, "
        f"an operator through its modules {per_module_launch * 1e6:.2g} µs; "
        f"a reference derivation {derivation:.2f} s; "
        f"starting {workers} workers {pool:.2f} s",
        kernel_flops_per_second=kernel[0] if kernel else None,
        seconds_per_kernel_block=kernel[1] if kernel else 0.0,
        seconds_per_step=step,
        seconds_per_figure=figure,
        seconds_per_draw=draw,
        workers=workers,
        worker_flops_per_second=worker_rate if dev.type == "cpu" else None,
        seconds_per_pool=pool,
        seconds_per_built_block=build,
        seconds_per_module_launch=per_module_launch,
        seconds_per_derivation_unit=derivation,
    )


# ------------------------------------------------------------------------------------------ estimate


@dataclass(frozen=True)
class Estimate:
    """A chapter's counted work at a budget and its estimated time on some devices."""

    chapter: str
    budget: str
    count: Count
    seconds: dict  # Rates.device → seconds

    def __repr__(self) -> str:
        where = "; ".join(f"{device}: {format_seconds(s)}" for device, s in self.seconds.items())
        return (
            f"Estimated cost of this chapter at the {self.budget} budget: {self.count.flops / 1e12:.3g} TFLOP "
            f"of matmuls and {self.count.launches / 1e6:.3g} M kernel launches; {where}."
        )


def format_seconds(seconds: NonNegative) -> str:
    if seconds < 1:
        return "< 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def estimate(chapter: str, plan: list, budget: str, rates: list[Rates], plan_for=None) -> Estimate:
    """``plan`` timed with each of ``rates``; ``plan_for(workers)``, where given, regroups the plan for a
    device's own number of workers (a GPU trains in one process). ``chapter`` labels the estimate: the cost model
    is handed the plan it prices and imports no chapter (the catalog checks the chapter's name)."""
    seconds = {r.device: r.plan_seconds(plan if plan_for is None else plan_for(r.workers)) for r in rates}
    return Estimate(chapter, budget, total(plan), seconds)


def process_seconds() -> float | None:
    """Seconds since this process started (Linux: ``/proc/self/stat``'s start time against
    ``/proc/uptime``), None where the system does not say. In a chapter's kernel: the kernel's own start,
    its imports and every cell before this one."""
    try:
        start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None
