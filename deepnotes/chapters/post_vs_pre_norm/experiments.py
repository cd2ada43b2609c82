"""Experiments of the chapter "Post-Norm vs Pre-Norm": the residual stream and the gradients at
initialization, per block, and training runs with warmup and ReZero variants. They measure and
return numbers; figures come from :mod:`deepnotes.plots`.

Per sublayer k the *branch ratio* v_k = E[F_k(x)²]/E[x²] (x the sublayer's input) is measured;
the derivations predict the weight of x_0 in x_l from it:

    post      Π_k (1 + v_k)^{-1/2}          (each LN divides by √(1 + v))
    deepnorm  Π_k α (α² + v_k)^{-1/2}
    pre       (1 + Σ_k v_k)^{-1/2}          (x_0 kept, the stream's second moment grows by v each)
    rezero    1                             (the gates start at 0)
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from deepnotes.core.budget import Budget, device as default_device, get_budget
from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.models import build_model
from deepnotes.core.probes import per_block_grad_norms
from deepnotes.core.train import History, train
from deepnotes.core.trackers import BlockGradNorms, BlockUpdates, GateSchedule, every_for
from deepnotes.core.scaling import predicted_identity_weight

STYLES = ("post", "pre", "deepnorm", "rezero")


def model_config(norm: str, n_layers: int, budget: Budget, beta: float | None = None) -> ModelConfig:
    return budget.model_config(n_layers, norm=norm, beta=beta)


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
    cfg = model_config(norm, n_layers, budget, beta)
    model = build_model(cfg, seed=seed, device=device)
    tokens = MarkovLanguage(budget.vocab_size, seed=0).sample(
        budget.batch_size, budget.seq_len, torch.Generator().manual_seed(100 + seed)).to(device)
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


def run(norm: str, n_layers: int, budget: Budget, optimizer: str = "adam", lr: float = 3e-3,
        warmup: int = 0, steps: int | None = None, seed: int = 0, beta: float | None = None,
        gate_step: float | None = None, device=None, progress: bool = False) -> History:
    """Train one norm style; ``gate_step`` turns rezero into the fixed-step schedule (the gates
    are then frozen and set by :func:`gate_schedule`)."""
    steps = steps or budget.post_vs_pre_norm.train_steps
    model = build_model(model_config(norm, n_layers, budget, beta), seed=seed, device=device or default_device())
    every = every_for(steps, budget.post_vs_pre_norm.track_points)
    params, trackers = None, [BlockGradNorms(every), BlockUpdates(every)]
    if gate_step is not None:
        if norm != "rezero":
            raise ValueError(f"gate_step needs norm='rezero', got norm={norm!r}")
        params = [p for name, p in model.named_parameters() if not name.endswith("gate")]
        trackers.append(GateSchedule(gate_step))
    cfg = TrainConfig(optimizer=optimizer, lr=lr, steps=steps, warmup_steps=warmup, batch_size=budget.batch_size,
                      seq_len=budget.seq_len, seed=seed)
    return train(model, MarkovLanguage(budget.vocab_size, seed=seed), cfg, progress=progress, params=params,
                 trackers=trackers)


def bottom_top_update_ratio(hist: History, steps: int | None = None) -> float:
    """Mean over the tracked steps (the first ``steps`` of them) of ‖Δθ_1‖/‖θ_1‖ ÷ ‖Δθ_N‖/‖θ_N‖:
    how much the first block learns relative to the last."""
    ups = hist.block_updates if steps is None else hist.block_updates[:steps]
    return sum(u[0] / u[-1] for u in ups) / len(ups)


def slider_figure(depth: int, norm: str, warmup: int = 0, beta: float | None = None, lr: float = 3e-3,
                  budget: Budget | None = None, progress: bool = False):
    """The slider's experiment: per-block gradient norms at init and the loss of a short Adam run."""
    from deepnotes.show import plots
    budget = budget or get_budget()
    probe = stream_probe(norm, depth, budget, beta=beta)
    hist = run(norm, depth, budget, "adam", lr, warmup=warmup, steps=budget.post_vs_pre_norm.slider_steps, beta=beta,
               progress=progress)
    fig, (ax_g, ax_l) = plots.new_figure(2, width=3.6, height=2.6)
    ax_g.semilogy(range(1, depth + 1), probe.grad_norms, color=plots.colour(norm))
    ax_g.set_xlabel("block l")
    ax_g.set_ylabel(r"$\|\partial L/\partial\theta_l\|$ at init")
    ax_g.set_title(f"N={depth}, {norm}, β={beta if beta is not None else 'default'}", fontsize=8)
    plots.loss_curves(ax_l, {norm: hist}, title=f"Adam lr {lr:g}, warmup {warmup}")
    fig.tight_layout()
    return fig
