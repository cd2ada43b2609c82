"""How long counted work takes on a device: measured rates for this machine, assumed ones for a T4,
and the estimate every chapter's budget cell prints (:func:`chapter_estimate`).

    seconds = FLOPs / flop_rate + launches · launch_seconds        (counts: :mod:`deepnotes.cost.model`)
"""

from __future__ import annotations

import functools
import importlib
import time
from dataclasses import dataclass, replace

import torch

from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.validate import Finite, choice
from deepnotes.cost.log import log_chapter, unlogged
from deepnotes.cost.model import Count, TrainRuns, planned_for, total


@dataclass(frozen=True)
class Rates:
    """How fast a device runs counted work: matmul FLOPs per second and seconds per launch."""

    device: str
    flops_per_second: Finite
    seconds_per_launch: Finite
    how: str  # "measured here …" or where an assumed rate comes from

    def seconds(self, count: Count) -> float:
        return count.flops / self.flops_per_second + count.launches * self.seconds_per_launch


# Colab's free GPU. FP32 peak 8.1 TFLOPS (NVIDIA T4 datasheet); the book's small batched matmuls reach
# about half of it, and PyTorch's eager dispatch plus the launch itself cost about 10 µs per operator
# on Colab's two-vCPU host. Both are assumptions: no T4 was available to calibrate them on.
T4 = Rates(
    "NVIDIA T4 (assumed)", 4.0e12, 10e-6, "assumed: half the T4's 8.1 TFLOPS FP32 peak, 10 µs per launch; not measured"
)

# The two calibration shapes: many small blocks (launch-bound) and two wide ones (FLOP-bound).
CALIBRATION_SHAPES = {
    "launch-bound": dict(depth=48, d_model=16, d_ff=32, n_heads=2, batch=2, seq_len=8),
    "FLOP-bound": dict(depth=2, d_model=256, d_ff=1024, n_heads=4, batch=8, seq_len=64),
}
CALIBRATION_STEPS = 3


def _calibration_work(shape: dict) -> TrainRuns:
    model = ModelConfig(
        n_layers=shape["depth"],
        d_model=shape["d_model"],
        n_heads=shape["n_heads"],
        d_ff=shape["d_ff"],
        vocab_size=16,
        norm="pre",
    )
    train = TrainConfig(
        optimizer="adam", lr=1e-4, steps=CALIBRATION_STEPS, batch_size=shape["batch"], seq_len=shape["seq_len"]
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


@functools.lru_cache(maxsize=4)
def calibrate(device: str | None = None) -> Rates:
    """Measure this device's two rates from two short engine runs (a few seconds on a CPU).

    Solves  t_i = F_i / flop_rate + L_i · launch_seconds  for the launch-bound and the FLOP-bound
    shape (:data:`CALIBRATION_SHAPES`), with the counts of :meth:`TrainRuns.count`."""
    from deepnotes.core.config import device as default_device

    if device is not None:
        choice("device type", str(device).split(":")[0], ("cpu", "cuda"))
    dev = torch.device(device) if device is not None else default_device()
    works = [_calibration_work(shape) for shape in CALIBRATION_SHAPES.values()]
    counts = [w.count() for w in works]
    times = [_time_work(w, dev) for w in works]
    (fa, la), (fb, lb) = [(c.flops, c.launches) for c in counts]
    det = fa * lb - fb * la
    inv_rate = (times[0] * lb - times[1] * la) / det  # Cramer's rule for (1/flop_rate, launch_seconds)
    per_launch = (fa * times[1] - fb * times[0]) / det
    if inv_rate <= 0 or per_launch <= 0:  # noise made one rate negative: fall back to one-term fits
        inv_rate, per_launch = times[1] / fb, times[0] / la
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"this CPU ({torch.get_num_threads()} threads)"
    return Rates(
        name,
        1.0 / inv_rate,
        per_launch,
        f"measured here: {CALIBRATION_STEPS} steps of two engine shapes, "
        f"{times[0]:.2f} s launch-bound, {times[1]:.2f} s FLOP-bound",
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


def format_seconds(seconds: Finite) -> str:
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


def chapter_plan(chapter: str, budget, workers: int | None = None) -> list:
    """``deepnotes.chapters.<chapter>.cost.plan(budget)``, its runs grouped for ``workers`` processes
    (default: as this machine trains them; 1 for a GPU)."""
    from deepnotes.core.config import resolve_budget
    from deepnotes.ledger.items import CHAPTERS

    choice("chapter", chapter, CHAPTERS)
    module = importlib.import_module(f"deepnotes.chapters.{chapter}.cost")
    if workers is None:
        return module.plan(resolve_budget(budget))
    with planned_for(workers):
        return module.plan(resolve_budget(budget))


def chapter_estimate(chapter: str, budget=None) -> Estimate:
    """A chapter's budget cell: its plan's counts, timed with this device's calibrated rates and the
    T4's assumed ones; marks the chapter in the work log."""
    from deepnotes.core.config import resolve_budget

    budget = resolve_budget(budget)
    log_chapter(chapter)
    return estimate(chapter, chapter_plan(chapter, budget), budget.name, [calibrate(), T4])
