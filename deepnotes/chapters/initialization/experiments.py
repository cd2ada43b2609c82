"""Experiments of the chapter "Initialization, parametrization and normalization": second moments
through deep plain MLPs, the softmax with and without 1/√d, and NTK vs standard parametrization
under Adam. They measure and return numbers; ``*_figure`` functions draw them."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from deepnotes.core.budget import Budget, device as default_device, get_budget
from deepnotes.chapters.initialization.mlp import ACTIVATIONS, plain_mlp, predicted_second_moments


@torch.no_grad()
def forward_second_moments(act: str, gain: float, depth: int, width: int, batch: int,
                           seed: int = 0, device=None) -> list[float]:
    """Measured E[x_l²] (mean over batch and units) for l = 0..depth of a plain MLP
    x_{l+1} = φ(x_l W_l), E[w²] = gain/m, on inputs x_0 ~ N(0, 1)."""
    device = device or default_device()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = plain_mlp(width, depth, act, gain=gain).to(device)
        x = torch.randn(batch, width, device=device)                 # [B, m]
    moments = [float(x.pow(2).mean())]
    for k in range(0, len(net), 2):                                  # (linear, activation) pairs
        x = net[k + 1](net[k](x))
        moments.append(float(x.pow(2).mean()))
    return moments


def moment_table(budget: Budget | None = None, inits=("lecun", "he"), acts=ACTIVATIONS) -> dict:
    """{(init, act): (measured, predicted)} per-layer second moments at the budget's depth/width.
    LeCun = gain 1, He = gain 2 (in units of 1/m); Xavier equals LeCun for these square layers."""
    budget = budget or get_budget()
    gains = {"lecun": 1.0, "he": 2.0, "xavier": 1.0}
    out = {}
    for init in inits:
        for act in acts:
            g = gains[init]
            out[(init, act)] = (forward_second_moments(act, g, budget.initialization.moment_depth, budget.initialization.moment_width,
                                                       budget.initialization.moment_batch),
                                predicted_second_moments(act, g, budget.initialization.moment_depth))
    return out


@dataclass(frozen=True)
class SoftmaxProbe:
    d: int
    scaled: bool
    max_weight: float       # mean over queries of max_j softmax(s)_j
    entropy: float          # mean entropy of the attention row (nats); log(n_keys) is uniform
    jacobian_norm: float    # mean ‖∂softmax(s)/∂s‖_F = ‖diag(p) − ppᵀ‖_F


def softmax_probe(d: int, scaled: bool, n_keys: int = 64, n_queries: int = 256, seed: int = 0) -> SoftmaxProbe:
    """Attention scores s_j = q·k_j (/√d if ``scaled``) for q, k with i.i.d. N(0,1) entries."""
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d!r}")
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n_queries, d, generator=gen, dtype=torch.float64)     # [Q, d]
    k = torch.randn(n_keys, d, generator=gen, dtype=torch.float64)        # [K, d]
    s = q @ k.T / (math.sqrt(d) if scaled else 1.0)                       # [Q, K]
    p = torch.softmax(s, dim=-1)
    entropy = -(p * torch.log(p.clamp_min(1e-300))).sum(-1)
    jac = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)         # [Q, K, K]
    return SoftmaxProbe(d, scaled, float(p.max(-1).values.mean()), float(entropy.mean()),
                        float(jac.flatten(1).norm(dim=-1).mean()))


def relative_updates(ntk: bool, width: int, depth: int, steps: int, lr: float, seed: int = 0,
                     device=None) -> list[list[float]]:
    """Train a plain ReLU MLP (He init, or NTK parametrization with N(0,1) weights) with Adam on a
    random linear regression target; per step and hidden layer, ‖ΔW‖/‖W‖ of the *effective*
    weight (W/√m for NTK)."""
    device = device or default_device()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = plain_mlp(width, depth, "relu", init="he", ntk=ntk).to(device)
        x = torch.randn(256, width, device=device)                        # [B, m]
        target = x @ torch.randn(width, width, device=device) / math.sqrt(width)
    layers = [net[k] for k in range(0, len(net), 2)]
    opt = torch.optim.Adam(net.parameters(), lr=lr)

    def effective(layer):
        return layer.weight.detach() * (layer.scale if ntk else 1.0)

    history = []
    for _ in range(steps):
        before = [effective(layer).clone() for layer in layers]
        loss = (net(x) - target).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        history.append([float((effective(layer) - w0).norm() / w0.norm()) for layer, w0 in zip(layers, before)])
    return history


def moment_figure(act: str, gain: float, depth: int, budget: Budget | None = None, progress: bool = False):
    """The slider's experiment: measured vs predicted per-layer second moment of a plain MLP."""
    from deepnotes.show import plots
    budget = budget or get_budget()
    measured = forward_second_moments(act, gain, depth, budget.initialization.moment_width, budget.initialization.moment_batch)
    predicted = predicted_second_moments(act, gain, depth)
    fig, (ax,) = plots.new_figure(1, width=4.6, height=3.0)
    plots.moment_curves(ax, {act: (measured, predicted)}, title=f"{act}, E[w²] = {gain:g}/m, {depth} layers")
    fig.tight_layout()
    return fig


def softmax_figure(d: int, scaled: bool, budget: Budget | None = None, progress: bool = False):
    """The slider's second experiment: one row of attention weights at this d, scaled or not."""
    from deepnotes.show import plots
    probe = softmax_probe(d, scaled)
    gen = torch.Generator().manual_seed(1)
    q, k = torch.randn(d, generator=gen), torch.randn(64, d, generator=gen)
    p = torch.softmax(k @ q / (math.sqrt(d) if scaled else 1.0), dim=0)
    fig, (ax,) = plots.new_figure(1, width=4.6, height=2.6)
    ax.bar(range(64), p.numpy(), color="tab:blue" if scaled else "tab:red")
    ax.set_ylim(0, 1)
    ax.set_xlabel("key j")
    ax.set_ylabel("attention weight")
    ax.set_title(f"d={d}, {'with' if scaled else 'without'} 1/√d: mean max weight {probe.max_weight:.2f}, "
                 f"entropy {probe.entropy:.2f}", fontsize=8)
    fig.tight_layout()
    return fig
