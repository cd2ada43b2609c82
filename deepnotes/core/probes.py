"""Measurements on a model: gradient norms per block, the loss change of one optimizer step."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from deepnotes.core.config import TrainConfig
from deepnotes.core.optim import make_optimizer


def per_block_grad_norms(model: nn.Module) -> list[float]:
    """‖∂L/∂θ_l‖₂ over all parameters of block l, for l = 1..N (call after ``backward``)."""
    norms = []
    for block in model.blocks:
        sq = sum(float(p.grad.pow(2).sum()) for p in block.parameters() if p.grad is not None)
        norms.append(sq ** 0.5)
    return norms


@dataclass(frozen=True)
class StepProbe:
    """One optimizer step from θ₀ on one batch."""
    loss_before: float
    delta_loss: float        # L(θ₀ + Δθ) − L(θ₀), measured
    first_order: float       # ⟨∇L(θ₀), Δθ⟩, the first-order prediction of delta_loss
    grad_sq: float           # ‖∇L‖²
    grad_l1: float           # ‖∇L‖₁
    update_norm: float       # ‖Δθ‖
    block_grad_norms: tuple[float, ...] = ()   # ‖∂L/∂θ_l‖ per block l = 1..N, at θ₀


def one_step_loss_change(model: nn.Module, tokens: torch.Tensor, optimizer: str, lr: float,
                         params: list[torch.Tensor] | None = None) -> StepProbe:
    """Take one step of ``optimizer`` at learning rate ``lr`` on ``tokens`` and measure ΔL.

    ΔL = L(θ₀ + Δθ) − L(θ₀) ≈ ⟨∇L, Δθ⟩, with Δθ = −η∇L (SGD) or ≈ −η·sign(∇L) (Adam's first step).
    ``params``: the parameters that step (default all); the norms are over those. The model's
    parameters are restored afterwards.
    """
    params = [p for p in model.parameters() if p.requires_grad] if params is None else list(params)
    saved = [p.detach().clone() for p in params]
    model.zero_grad(set_to_none=True)
    loss0 = model.loss(tokens)
    loss0.backward()
    loss0 = loss0.detach()
    grads = [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in params]
    blocks = tuple(per_block_grad_norms(model)) if hasattr(model, "blocks") else ()
    opt = make_optimizer(params, TrainConfig(optimizer=optimizer, lr=lr))
    opt.step()
    with torch.no_grad():
        loss1 = float(model.loss(tokens))
        deltas = [p - s for p, s in zip(params, saved)]
        first_order = sum(float((g * d).sum()) for g, d in zip(grads, deltas))
        update_norm = sum(float(d.pow(2).sum()) for d in deltas) ** 0.5
        for p, s in zip(params, saved):
            p.copy_(s)
    model.zero_grad(set_to_none=True)
    return StepProbe(
        loss_before=float(loss0), delta_loss=loss1 - float(loss0), first_order=first_order,
        grad_sq=sum(float(g.pow(2).sum()) for g in grads),
        grad_l1=sum(float(g.abs().sum()) for g in grads), update_norm=update_norm, block_grad_norms=blocks)


def block_matrices(model: nn.Module) -> list[torch.Tensor]:
    """The N·K weight matrices of the model's blocks (not the embedding, head, biases or norms)."""
    return [p for block in model.blocks for p in block.parameters() if p.dim() == 2]


PACKED_MATRICES = {"in_proj_weight": 3}   # nn.MultiheadAttention packs W_q, W_k, W_v into one parameter


def count_matrices(block: nn.Module) -> int:
    """K: the number of weight matrices in one block (2-D parameters; a packed parameter of
    :data:`PACKED_MATRICES` counts as the matrices it holds)."""
    return sum(PACKED_MATRICES.get(name.rsplit(".", 1)[-1], 1) for name, p in block.named_parameters() if p.dim() == 2)


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope b of log y = a + b·log x (the exponent of a power law y ∝ x^b), over the
    points where both are finite and positive."""
    pts = [(x, y) for x, y in zip(xs, ys) if x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y)]
    lx = [math.log(x) for x, _ in pts]
    ly = [math.log(y) for _, y in pts]
    if len(set(lx)) < 2:
        raise ValueError(f"loglog_slope needs at least two distinct positive x with positive y, got xs={list(xs)!r}, ys={list(ys)!r}")
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx


def scaling_fits(xs: Sequence[float], ys: Sequence[float], forms: dict[str, Sequence[float]]) -> dict[str, float]:
    """How well each candidate growth law explains ys: for every form f (its values at xs), the least-
    squares fit y ≈ a·f + b and its RMS residual over the mean of |y| (0: a perfect fit). A claim such as
    "grows like O(log N)" is judged by which form fits best, not by one log-log slope, which cannot tell
    log N from √N over a short range."""
    ys = [float(y) for y in ys]
    scale = sum(abs(y) for y in ys) / len(ys)
    if len(ys) < 3 or not scale:
        raise ValueError(f"scaling_fits needs at least three points with some nonzero y, got ys={ys!r}")
    out = {}
    for name, f in forms.items():
        if len(f) != len(ys):
            raise ValueError(f"form {name!r} has {len(f)} values for {len(ys)} points")
        a, b = np.polyfit(np.asarray(f, dtype=float), ys, 1)
        out[name] = float(np.sqrt(np.mean((np.asarray(ys) - a * np.asarray(f, dtype=float) - b) ** 2)) / scale)
    return out

