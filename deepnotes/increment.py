"""Experiments of the chapter "Increment explosion": they measure and return data; figures are drawn
by :mod:`deepnotes.plots` (imported only by the ``*_figure`` functions here).

Variants are named by a label: ``post``, ``pre``, ``deepnorm`` (DeepNet's encoder constants
α = (2N)^{1/4}, β = (8N)^{-1/4}) and ``deepnorm/adam`` (Su's Adam constants α = (2N)^{1/2},
λ = (2N)^{-1/2}).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch

from . import scaling
from .budget import Budget, device as default_device, get_budget
from .config import ModelConfig, TrainConfig
from .data import MarkovLanguage
from .models import build_model
from .probes import StepProbe, one_step_loss_change
from .train import History, train

VARIANTS = ("post", "pre", "deepnorm", "deepnorm/adam", "none", "rezero")
PROBE_LR = {"sgd": 1e-2, "adam": 1e-4}   # small enough for ΔL ≈ ⟨∇L, Δθ⟩ at every probed depth


def model_config(variant: str, n_layers: int, budget: Budget) -> ModelConfig:
    """The budget's tiny Transformer at depth ``n_layers`` in the given variant."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    sizes = dict(n_layers=n_layers, d_model=budget.d_model, n_heads=budget.n_heads, d_ff=budget.d_ff,
                 vocab_size=budget.vocab_size)
    if variant == "deepnorm/adam":
        alpha, lam = scaling.su_coefficients(n_layers, "adam")
        return ModelConfig(norm="deepnorm", alpha=alpha, beta=lam, **sizes)
    return ModelConfig(norm=variant, **sizes)


def task_for(budget: Budget, seed: int = 0) -> MarkovLanguage:
    return MarkovLanguage(budget.vocab_size, seed=seed)


@dataclass
class LossChangeSweep:
    """probes[(variant, optimizer)][i] = the StepProbes (one per repeat) at depths[i]."""
    depths: tuple[int, ...]
    lrs: dict[str, float]
    probes: dict[tuple[str, str], list[list[StepProbe]]]

    def mean(self, variant: str, optimizer: str, field: str) -> list[float]:
        """The mean over repeats of ``field`` (e.g. ``"delta_loss"``, ``"grad_sq"``) per depth."""
        return [statistics.fmean(getattr(p, field) for p in reps)
                for reps in self.probes[(variant, optimizer)]]


def loss_change_sweep(budget: Budget | None = None, variants=("post", "pre", "deepnorm"),
                      optimizers=("sgd", "adam"), lrs: dict[str, float] | None = None,
                      depths: tuple[int, ...] | None = None, device=None,
                      progress: bool = False) -> LossChangeSweep:
    """ΔL after one optimizer step at initialization, for each variant × optimizer × depth × repeat."""
    budget = budget or get_budget()
    depths = tuple(depths or budget.probe_depths)
    lrs = dict(PROBE_LR, **(lrs or {}))
    device = device or default_device()
    task = task_for(budget)
    jobs = [(v, o, n, r) for v in variants for o in optimizers for n in depths
            for r in range(budget.probe_repeats)]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, leave=False)
    out: dict[tuple[str, str], list[list[StepProbe]]] = {(v, o): [[] for _ in depths]
                                                         for v in variants for o in optimizers}
    for v, o, n, r in jobs:
        model = build_model(model_config(v, n, budget), seed=r, device=device)
        tokens = task.sample(budget.batch_size, budget.seq_len, torch.Generator().manual_seed(100 + r))
        out[(v, o)][depths.index(n)].append(one_step_loss_change(model, tokens.to(device), o, lrs[o]))
    return LossChangeSweep(depths, lrs, out)


def run(variant: str, n_layers: int, budget: Budget, optimizer: str = "adam", lr: float = 1e-3,
        steps: int | None = None, warmup: int = 0, seed: int = 0, device=None,
        progress: bool = False, track_update: bool = True) -> History:
    """Train the budget's model in ``variant`` at depth ``n_layers`` on the Markov language."""
    cfg = TrainConfig(optimizer=optimizer, lr=lr, steps=steps or budget.train_steps, warmup_steps=warmup,
                      batch_size=budget.batch_size, seq_len=budget.seq_len, seed=seed,
                      track_every=max(1, (steps or budget.train_steps) // 10))
    model = build_model(model_config(variant, n_layers, budget), seed=seed, device=device or default_device())
    return train(model, task_for(budget), cfg, progress=progress, track_update=track_update)


def early_update_sweep(budget: Budget | None = None, variants=("post", "deepnorm", "deepnorm/adam"),
                       optimizer: str = "adam", lr: float = 5e-4, device=None,
                       progress: bool = False) -> dict[tuple[str, int], History]:
    """DeepNet's Fig. 3 setting at toy scale: the first ``budget.update_steps`` steps of each variant
    at each of ``budget.update_depths``, tracking ‖F(x,θ_t) − F(x,θ_0)‖."""
    budget = budget or get_budget()
    jobs = [(v, n) for v in variants for n in budget.update_depths]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, leave=False)
    return {(v, n): run(v, n, budget, optimizer, lr, steps=budget.update_steps, device=device)
            for v, n in jobs}


def training_comparison(budget: Budget | None = None, lr: float = 1e-3, device=None,
                        progress: bool = False) -> dict[str, History]:
    """At ``budget.train_depth``: Post-LN without and with warmup, Pre-LN and DeepNorm, all Adam."""
    budget = budget or get_budget()
    n, w = budget.train_depth, budget.train_warmup
    plan = {"post, no warmup": ("post", 0), f"post, warmup {w}": ("post", w),
            "pre, no warmup": ("pre", 0), "deepnorm, no warmup": ("deepnorm", 0)}
    return {label: run(v, n, budget, "adam", lr, warmup=warm, device=device, progress=progress,
                       track_update=False)
            for label, (v, warm) in plan.items()}


def slider_figure(depth: int, norm: str, optimizer: str, lr: float | None = None, warmup: int = 0,
                  budget: Budget | None = None, progress: bool = False):
    """The slider's experiment: a short run at one setting; loss and ‖F(x,θ_t) − F(x,θ_0)‖ per step."""
    from . import plots
    budget = budget or get_budget()
    lr = lr if lr is not None else {"adam": 1e-3, "sgd": 0.1, "lamb": 1e-2}[optimizer]
    hist = run(norm, depth, budget, optimizer, lr, steps=budget.slider_steps, warmup=warmup,
               progress=progress)
    fig, (ax_loss, ax_upd) = plots.new_figure(2, width=3.6, height=2.6)
    title = f"N={depth}, {norm}, {optimizer} η={lr:g}, warmup {warmup}"
    plots.loss_curves(ax_loss, {norm: hist}, title=title)
    plots.update_curves(ax_upd, {norm: hist}, title="model update")
    fig.tight_layout()
    return fig
