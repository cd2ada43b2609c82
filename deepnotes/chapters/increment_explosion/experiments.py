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

from deepnotes.core import scaling
from deepnotes.core.budget import Budget, device as default_device, get_budget
from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.models import build_model
from deepnotes.core.probes import StepProbe, block_matrices, one_step_loss_change
from deepnotes.show.progress import progress as progress_bar
from deepnotes.core.train import History, train
from deepnotes.core.trackers import BlockGradNorms, UpdateSize, every_for
from deepnotes.show.verdicts import VerdictTable, check_true

VARIANTS = ("post", "pre", "deepnorm", "deepnorm/adam", "none", "rezero")
PROBE_LR = {"sgd": 1e-4, "adam": 1e-6}   # small enough for ΔL ≈ ⟨∇L, Δθ⟩ at every probed depth
PARAM_SETS = ("all", "matrices")         # what the optimizer updates: everything, or the block matrices only


def model_config(variant: str, n_layers: int, budget: Budget) -> ModelConfig:
    """The budget's tiny Transformer at depth ``n_layers`` in the given variant."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    if variant == "deepnorm/adam":
        alpha, lam = scaling.su_coefficients(n_layers, "adam")
        return budget.model_config(n_layers, norm="deepnorm", alpha=alpha, beta=lam)
    return budget.model_config(n_layers, norm=variant)


def predicted_slope(variant: str, optimizer: str) -> float:
    """The derivation's power of N in ΔL: 1 for Post-LN and Pre-LN (O(1) gradients per matrix);
    for DeepNorm, ΔL ∝ 2N·(λ/α)^k (k = 2 SGD, 1 Adam) with the variant's λ/α taken from
    :mod:`scaling`, read off as the log-log slope between N = 10 and 10⁴ (exact for a power law;
    ``tests`` check it against SymPy's exponent)."""
    if variant not in ("deepnorm", "deepnorm/adam"):
        return 1.0
    k = {"sgd": 2, "adam": 1}[optimizer]
    depths = (10, 10_000)

    def ratio(n):
        alpha, lam = (scaling.deepnorm_coefficients(n) if variant == "deepnorm"
                      else scaling.su_coefficients(n, "adam"))
        return lam / alpha

    from deepnotes.core.probes import loglog_slope
    return round(loglog_slope(depths, [2 * n * ratio(n) ** k for n in depths]), 9)


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


def loss_change_sweep(budget: Budget | None = None, variants=("post", "pre", "deepnorm", "deepnorm/adam"),
                      optimizers=("sgd", "adam"), lrs: dict[str, float] | None = None,
                      depths: tuple[int, ...] | None = None, device=None,
                      progress: bool = False) -> LossChangeSweep:
    """ΔL after one optimizer step at initialization, for each variant × optimizer × depth × repeat.

    Only the blocks' N·K weight matrices step (the derivation's parameters); embedding, head,
    biases and norms stay put. The probe runs in float64 so that the tiny ΔL of a small learning
    rate is measured exactly.
    """
    budget = budget or get_budget()
    depths = tuple(depths or budget.increment_explosion.probe_depths)
    lrs = dict(PROBE_LR, **(lrs or {}))
    device = device or default_device()
    task = task_for(budget)
    jobs = [(v, o, n, r) for v in variants for o in optimizers for n in depths
            for r in range(budget.increment_explosion.probe_repeats)]
    jobs = progress_bar(jobs, progress)
    out: dict[tuple[str, str], list[list[StepProbe]]] = {(v, o): [[] for _ in depths]
                                                         for v in variants for o in optimizers}
    for v, o, n, r in jobs:
        model = build_model(model_config(v, n, budget), seed=r, device=device, dtype=torch.float64)
        tokens = task.sample(budget.batch_size, budget.seq_len, torch.Generator().manual_seed(100 + r))
        out[(v, o)][depths.index(n)].append(
            one_step_loss_change(model, tokens.to(device), o, lrs[o], params=block_matrices(model)))
    return LossChangeSweep(depths, lrs, out)


def run(variant: str, n_layers: int, budget: Budget, optimizer: str = "adam", lr: float = 1e-3,
        steps: int | None = None, warmup: int = 0, seed: int = 0, device=None,
        progress: bool = False, track_update: bool = True, params: str = "all") -> History:
    """Train the budget's model in ``variant`` at depth ``n_layers`` on the Markov language.

    ``params="matrices"`` updates only the blocks' weight matrices (the parameters the magnitude
    analysis scales), leaving embeddings, head, biases and LayerNorm gains at their initial values.
    """
    if params not in PARAM_SETS:
        raise ValueError(f"unknown params {params!r}; allowed: {', '.join(PARAM_SETS)}")
    cfg = TrainConfig(optimizer=optimizer, lr=lr, steps=steps or budget.increment_explosion.train_steps, warmup_steps=warmup,
                      batch_size=budget.batch_size, seq_len=budget.seq_len, seed=seed,
)
    model = build_model(model_config(variant, n_layers, budget), seed=seed, device=device or default_device())
    chosen = None if params == "all" else block_matrices(model)
    trackers = [BlockGradNorms(every_for(cfg.steps, budget.increment_explosion.track_points))]
    if track_update:
        trackers.append(UpdateSize())
    return train(model, task_for(budget), cfg, progress=progress, params=chosen, trackers=trackers)


def early_update_sweep(budget: Budget | None = None, variants=("post", "deepnorm", "deepnorm/adam"),
                       optimizer: str = "adam", lr: float = 5e-4, params: str = "all", device=None,
                       progress: bool = False) -> dict[tuple[str, int], History]:
    """DeepNet's Fig. 3 setting at toy scale: the first ``budget.increment_explosion.update_steps`` steps of each variant
    at each of ``budget.increment_explosion.update_depths``, tracking ‖F(x,θ_t) − F(x,θ_0)‖; ``params`` as in :func:`run`."""
    budget = budget or get_budget()
    jobs = [(v, n) for v in variants for n in budget.increment_explosion.update_depths]
    jobs = progress_bar(jobs, progress)
    return {(v, n): run(v, n, budget, optimizer, lr, steps=budget.increment_explosion.update_steps, device=device, params=params)
            for v, n in jobs}


def training_comparison(n: int, budget: Budget | None = None, lr: float = 3e-3, device=None,
                        progress: bool = False) -> dict[str, History]:
    """At depth ``n``: Post-LN without and with warmup, Pre-LN and DeepNorm, all Adam at peak ``lr``."""
    budget = budget or get_budget()
    w = budget.increment_explosion.train_warmup
    plan = {"post, no warmup": ("post", 0), f"post, warmup {w}": ("post", w),
            "pre, no warmup": ("pre", 0), "deepnorm, no warmup": ("deepnorm", 0)}
    return {label: run(v, n, budget, "adam", lr, warmup=warm, device=device, progress=progress,
                       track_update=False)
            for label, (v, warm) in plan.items()}


def slider_figure(depth: int, norm: str, optimizer: str, lr: float | None = None, warmup: int = 0,
                  budget: Budget | None = None, progress: bool = False):
    """The slider's experiment: a short run at one setting; loss and ‖F(x,θ_t) − F(x,θ_0)‖ per step."""
    from deepnotes.show import plots
    budget = budget or get_budget()
    lr = lr if lr is not None else {"adam": 1e-3, "sgd": 0.1, "lamb": 1e-2}[optimizer]
    hist = run(norm, depth, budget, optimizer, lr, steps=budget.increment_explosion.slider_steps, warmup=warmup,
               progress=progress)
    fig, (ax_loss, ax_upd) = plots.new_figure(2, width=3.6, height=2.6)
    title = f"N={depth}, {norm}, {optimizer} η={lr:g}, warmup {warmup}"
    plots.loss_curves(ax_loss, {norm: hist}, title=title)
    plots.update_curves(ax_upd, {norm: hist}, title="model update")
    fig.tight_layout()
    return fig


# ---- verdicts on the measurements (statuses computed from the numbers) -------------------------

def loss_change_verdicts(sweep: LossChangeSweep) -> VerdictTable:
    """Per variant and optimizer: the log-log slope of the first-order −⟨∇L, Δθ⟩ against N (the
    derivation says 1; 10^slope is the annotated eq. (12) ratio ΔL(100)/ΔL(10)), and the depths at
    which the measured ΔL departs from the first-order term by more than 20%."""
    from deepnotes.core.probes import loglog_slope
    rows = []
    for (variant, opt) in sweep.probes:
        fo = [-d for d in sweep.mean(variant, opt, "first_order")]
        dl = [-d for d in sweep.mean(variant, opt, "delta_loss")]
        slope = loglog_slope(sweep.depths, fo)
        want = predicted_slope(variant, opt)
        rows.append(check_true(claim=f"{variant}, {opt}: −ΔL ∝ N^{want:g} (the derivation's slope)", source=f"measured, N = {sweep.depths[0]}..{sweep.depths[-1]}", claimed=f"slope {want:g}", computed=f"slope {slope:.2f}", ok=abs(slope - want) <= 0.2, reason=f"within 0.2 of {want:g}" if abs(slope - want) <= 0.2 else
                               f"ΔL(100)/ΔL(10) ≈ 10^slope = {10 ** slope:.3g} (derivation: {10 ** want:.3g})"))
        off = [n for n, a, b in zip(sweep.depths, dl, fo) if abs(a - b) > 0.2 * abs(b)]
        rows.append(check_true(claim=f"{variant}, {opt}: the measured ΔL equals ⟨∇L, Δθ⟩ at lr {sweep.lrs[opt]:g}", source="measured", claimed="within 20% at every depth", computed="all depths" if not off else f"off at N = {off}", ok=not off, reason="first order holds" if not off else
                               "the loss is so curved there that even this tiny step overshoots"))
    return VerdictTable(rows)


def early_update_verdicts(updates: dict[tuple[str, int], History], budget: Budget,
                          params: str = "all") -> VerdictTable:
    """DeepNet Fig. 3 at toy scale: does Post-LN's first-step update grow with depth, and DeepNorm's stay flat?"""
    which = {"all": "all parameters trained", "matrices": "block matrices trained only"}[params]
    from deepnotes.core.probes import loglog_slope
    depths = budget.increment_explosion.update_depths
    variants = sorted({v for v, _ in updates}, key=VARIANTS.index)
    first = {v: [updates[(v, n)].update_rms[0] for n in depths] for v in variants}
    slope = {v: loglog_slope(depths, first[v]) for v in variants}
    rows = [check_true(claim="Post-LN's early model update grows with depth", source=f"DeepNet Fig. 3; measured N = {depths}, {which}", claimed="grows", computed=f"slope {slope['post']:.2f}; step-1 update {first['post'][0]:.3g} → {first['post'][-1]:.3g}", ok=slope["post"] > 0.1, reason="log-log slope of the first-step update against N")]
    for v in variants:
        if v == "post":
            continue
        flat = abs(slope[v]) < 0.15
        rows.append(check_true(claim=f"{v}: the early update stays nearly flat in depth", source=f"DeepNet Fig. 3; measured N = {depths}, {which}", claimed="flat (|slope| < 0.15)", computed=f"slope {slope[v]:.2f}; step-1 update {first[v][0]:.3g} → {first[v][-1]:.3g}", ok=flat, reason="flat" if flat else "it grows with depth, though from a smaller start than Post-LN"))
        smaller = all(a < b for a, b in zip(first[v], first["post"]))
        rows.append(check_true(claim=f"{v}: smaller early update than Post-LN at every depth", source=f"DeepNet Fig. 3; measured, {which}", claimed="smaller", computed=f"ratio to Post-LN {min(a / b for a, b in zip(first[v], first['post'])):.2g}"
                               f"..{max(a / b for a, b in zip(first[v], first['post'])):.2g}", ok=smaller, reason="DeepNorm's down-scaled branches move the output less"))
    return VerdictTable(rows)


def training_verdicts(runs: dict[str, History], budget: Budget, n: int) -> VerdictTable:
    """Which runs learned: fraction of the way from the context-free plateau (0) to the floor (1)."""
    def learned(label):
        return runs[label].fraction_learned()

    w = budget.increment_explosion.train_warmup
    rows = [check_true(claim=f"Post-LN without warmup fails at N = {n}: stuck near the context-free plateau", source="seed 000/004 §增量爆炸; seed 003", claimed="stalls (learned < 0.2)", computed=f"learned {learned('post, no warmup'):.2f} of the way to the floor", ok=learned("post, no warmup") < 0.2, reason="fraction = (plateau − final loss)/(plateau − floor), last 10 steps"),
            check_true(claim=f"Post-LN with a {w}-step warmup trains at N = {n}", source="seed 000/004 §治标之法 (warmup)", claimed="trains (learned > 0.5)", computed=f"learned {learned(f'post, warmup {w}'):.2f}", ok=learned(f"post, warmup {w}") > 0.5, reason="warmup keeps the early steps small")]
    for label in ("pre, no warmup", "deepnorm, no warmup"):
        rows.append(check_true(claim=f"{label.split(',')[0]} trains without warmup at N = {n}", source="DeepNet; seed 002", claimed="trains (learned > 0.5)", computed=f"learned {learned(label):.2f}", ok=learned(label) > 0.5, reason="no warmup needed"))
    return VerdictTable(rows)
