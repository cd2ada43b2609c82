"""Experiments of the chapter "Post-Norm vs Pre-Norm": the residual stream and the gradients at
initialization, per block, and training runs with warmup and ReZero variants. They measure and
return numbers; figures come from :mod:`deepnotes.chapters.post_vs_pre_norm.figures`.

Per sublayer k the *branch ratio* v_k = E[F_k(x)²]/E[x²] (x the sublayer's input) is measured;
the derivations predict the weight of x_0 in x_l from it:

    post      Π_k (1 + v_k)^{-1/2}          (each LN divides by √(1 + v))
    deepnorm  Π_k α (α² + v_k)^{-1/2}
    pre       (1 + Σ_k v_k)^{-1/2}          (x_0 kept, the stream's second moment grows by v each)
    rezero    1                             (the gates start at 0)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from deepnotes.core.budget import Budget, device as default_device, get_budget
from deepnotes.core.config import ModelConfig
from deepnotes.core.data import MarkovLanguage, probe_batch
from deepnotes.core.models import build_model
from deepnotes.core.probes import per_block_grad_norms
from deepnotes.core.scaling import predicted_identity_weight
from deepnotes.core.engine import GATES
from deepnotes.core import ensemble_trackers as et
from deepnotes.core.ensemble import train_many, train_model
from deepnotes.core.train import History
from deepnotes.core.trackers import BlockGradNorms, BlockUpdates, GateSchedule, every_for
from deepnotes.core.validate import choice
from deepnotes.core.workers import default_workers

STYLES = ("post", "pre", "deepnorm", "rezero")    # the norm styles this chapter compares
OPTIMIZERS = ("adam", "sgd")                       # the optimizers of the training comparison


def style_config(norm: str, n_layers: int, budget: Budget, beta: float | None = None) -> ModelConfig:
    return budget.model_config(n_layers, norm=choice("norm style", norm, STYLES), beta=beta)


@dataclass
class StreamProbe:
    """Per block l = 0..N (index 0 = the embedding output x_0) at initialization."""
    norm: str
    rms: list[float]              # RMS of x_l
    cos_x0: list[float]           # mean over tokens of cos(x_l, x_0)
    predicted_cos: list[float]    # the derivation's weight of x_0, from the measured branch ratios
    branch_ratio: list[float]     # v_k per sublayer (2 per block)
    grad_norms: list[float]       # ‖∂L/∂θ_l‖ per block l = 1..N


def stream_probe(norm: str, n_layers: int, budget: Budget | None = None, beta: float | None = None,
                 seed: int = 0, device=None) -> StreamProbe:
    """One batch through a freshly initialized stack: stream RMS, cosine to x_0, branch ratios,
    per-block gradient norms of the LM loss."""
    budget = budget or get_budget()
    device = device or default_device()
    cfg = style_config(norm, n_layers, budget, beta)
    model = build_model(cfg, seed=seed, device=device)
    tokens = probe_batch(MarkovLanguage(budget.vocab_size, seed=0), budget.batch_size, budget.seq_len,
                         seed=seed, device=device)
    ratios = []

    def record(module, inputs, output):
        x = inputs[0].detach()
        ratios.append(float(output.detach().pow(2).mean() / x.pow(2).mean()))

    hooks = [res.sublayer.register_forward_hook(record) for block in model.blocks for res in block.sublayers]
    with torch.no_grad():
        _, stream = model.hidden(tokens[:, :-1], return_stream=True)
    for h in hooks:
        h.remove()
    x0 = stream[0]
    rms = [float(x.pow(2).mean().sqrt()) for x in stream]
    cos = [float(torch.nn.functional.cosine_similarity(x, x0, dim=-1).mean()) for x in stream]
    model.zero_grad(set_to_none=True)
    model.loss(tokens).backward()
    return StreamProbe(norm, rms, cos, predicted_identity_weight(norm, ratios, cfg.skip_alpha),
                       ratios, per_block_grad_norms(model))


def init_probes(budget: Budget, depth: int | None = None) -> dict[str, StreamProbe]:
    """:func:`stream_probe` of every style at ``depth`` (default: the budget's largest probe depth)."""
    depth = depth or budget.post_vs_pre_norm.probe_depths[-1]
    return {norm: stream_probe(norm, depth, budget) for norm in STYLES}


def depth_sweep(budget: Budget, probes: dict[str, StreamProbe] | None = None) -> dict[tuple[str, int], StreamProbe]:
    """:func:`stream_probe` of every style at each of the budget's probe depths; ``probes`` (of
    :func:`init_probes`) are reused at the largest depth instead of measured again."""
    depths = budget.post_vs_pre_norm.probe_depths
    return {(norm, n): (probes[norm] if probes is not None and n == depths[-1] else stream_probe(norm, n, budget))
            for norm in STYLES for n in depths}


def run(norm: str, n_layers: int, budget: Budget, optimizer: str = "adam", lr: float | None = None,
        warmup: int = 0, steps: int | None = None, seed: int = 0, beta: float | None = None,
        gate_step: float | None = None, device=None, progress: bool = False) -> History:
    """Train one norm style (``lr`` default: the budget's rate for ``optimizer``); ``gate_step``
    turns rezero into the fixed-step schedule (the gates are then frozen and set by
    :class:`~deepnotes.core.trackers.GateSchedule`)."""
    sub = budget.post_vs_pre_norm
    steps = steps or sub.train_steps
    lr = lr if lr is not None else sub.lrs[optimizer]
    model = build_model(style_config(norm, n_layers, budget, beta), seed=seed, device=device or default_device())
    every = every_for(steps, sub.track_points)
    frozen, trackers = (), [BlockGradNorms(every), BlockUpdates(every)]
    if gate_step is not None:
        if norm != "rezero":
            raise ValueError(f"gate_step needs norm='rezero', got norm={norm!r}")
        frozen = GATES
        trackers.append(GateSchedule(gate_step))
    cfg = budget.train_config(optimizer, lr, steps, warmup, seed)
    return train_model(model, MarkovLanguage(budget.vocab_size, seed=seed), cfg, progress=progress, frozen=frozen,
                       trackers=trackers)


def training_plan(budget: Budget) -> dict[str, dict]:
    """The variants of the training comparison: label → keyword arguments of :func:`run`. Post-LN
    without and with warmup, Pre-LN, ReZero with trained gates and with Su's fixed-step gates
    (α_t = min(1, t/T), T the warmup length), DeepNorm."""
    w = budget.post_vs_pre_norm.train_warmup
    return {"post, no warmup": dict(norm="post"), f"post, warmup {w}": dict(norm="post", warmup=w),
            "pre": dict(norm="pre"), "rezero (trained gates)": dict(norm="rezero"),
            "rezero (fixed-step gates)": dict(norm="rezero", gate_step=1 / w), "deepnorm": dict(norm="deepnorm")}


def _training_trackers(every: int, gate_step: float | None) -> list:
    """Fresh trackers of :func:`training_runs`: block gradients and updates, and the gates' schedule
    where they are set rather than trained (module-level, for the worker processes)."""
    return [et.BlockGradNorms(every), et.BlockUpdates(every)] + ([] if gate_step is None else [et.GateSchedule(gate_step)])


def training_runs(budget: Budget, progress: bool = False) -> dict[str, dict[str, list[History]]]:
    """Every variant of :func:`training_plan` at the budget's training depth, with each optimizer
    at its budget rate and ``train_seeds`` seeds (seed s: initialization s and data stream s, on one
    language):
    optimizer → label → one History per seed. Runs train as engine ensembles: Post-LN, its warmup
    run and DeepNorm share one graph, every seed is a member; the fixed-step ReZero, whose gates are
    set rather than trained, forms its own ensembles."""
    sub = budget.post_vs_pre_norm
    plan = training_plan(budget)
    every = every_for(sub.train_steps, sub.track_points)
    keys = [(opt, name, seed) for opt in OPTIMIZERS for name in plan for seed in range(sub.train_seeds)]
    out: dict[tuple[str, str, int], History] = {}
    for fixed_gates in (False, True):
        part = [key for key in keys if ("gate_step" in plan[key[1]]) == fixed_gates]
        gate_step = next((plan[name]["gate_step"] for _, name, _ in part), None) if fixed_gates else None
        hists = train_many(
            [style_config(plan[name]["norm"], sub.train_depth, budget) for _, name, _ in part],
            [budget.train_config(opt, sub.lrs[opt], sub.train_steps, plan[name].get("warmup", 0), seed)
             for opt, name, seed in part],
            MarkovLanguage(budget.vocab_size, seed=0),
            device=default_device(), progress=progress, frozen=GATES if fixed_gates else (),
            trackers=functools.partial(_training_trackers, every, gate_step), workers=default_workers(default_device()))
        out.update(zip(part, hists))
    return {opt: {name: [out[(opt, name, seed)] for seed in range(sub.train_seeds)] for name in plan}
            for opt in OPTIMIZERS}


def update_map_runs(budget: Budget) -> list[tuple[str, str]]:
    """The (optimizer, label) runs whose per-block updates are compared: Post-LN with Adam without
    and with warmup, and with SGD."""
    w = budget.post_vs_pre_norm.train_warmup
    return [("adam", "post, no warmup"), ("adam", f"post, warmup {w}"), ("sgd", "post, no warmup")]


def bottom_top_update_ratio(hist: History, steps: int | None = None) -> float:
    """Mean over the tracked steps (the first ``steps`` of them) of ‖Δθ_1‖/‖θ_1‖ ÷ ‖Δθ_N‖/‖θ_N‖:
    how much the first block learns relative to the last."""
    ups = hist.block_updates if steps is None else hist.block_updates[:steps]
    return sum(u[0] / u[-1] for u in ups) / len(ups)


@dataclass
class SliderResult:
    """The slider's experiment at one setting."""
    depth: int
    norm: str
    warmup: int
    beta: float | None
    lr: float
    probe: StreamProbe            # per-block gradient norms at init
    history: History              # a short Adam run


def slider_experiment(depth: int, norm: str, warmup: int = 0, beta: float | None = None, lr: float | None = None,
                      budget: Budget | None = None, progress: bool = False) -> SliderResult:
    """The slider's experiment: the probe at init and a short Adam run (``lr`` default: the
    budget's slider rate)."""
    budget = budget or get_budget()
    sub = budget.post_vs_pre_norm
    lr = lr if lr is not None else sub.slider_lr
    probe = stream_probe(norm, depth, budget, beta=beta)
    hist = run(norm, depth, budget, "adam", lr, warmup=warmup, steps=sub.slider_steps, beta=beta, progress=progress)
    return SliderResult(depth, norm, warmup, beta, lr, probe, hist)
