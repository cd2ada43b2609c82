"""Optimizers by name, and the linear warmup schedule.

SGD and Adam are PyTorch's own. PyTorch ships no LAMB, and the libraries that do (timm,
torch-optimizer) would pull in far more than one class, so :class:`Lamb` is written here:
You et al. (arXiv 1904.00962), Algorithm 2, without weight decay:

    m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  r = m̂ / (√v̂ + ε)
    θ ← θ − η · (‖θ‖ / ‖r‖) · r           (per parameter tensor; ratio 1 when either norm is 0)

so every tensor moves by η‖θ‖ per step: the relative update is η.
"""
from __future__ import annotations

import torch

from deepnotes.core import scaling
from deepnotes.core.config import TrainConfig


class Lamb(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-6):
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["m"] = torch.zeros_like(p)
                    state["v"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                state["m"].mul_(b1).add_(p.grad, alpha=1 - b1)
                state["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                r = (state["m"] / (1 - b1 ** t)) / ((state["v"] / (1 - b2 ** t)).sqrt() + group["eps"])
                w_norm, r_norm = p.norm(), r.norm()
                trust = torch.where((w_norm > 0) & (r_norm > 0), w_norm / r_norm, torch.ones_like(w_norm))
                p.add_(r, alpha=-group["lr"] * float(trust))
        return loss


def make_optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    """SGD (no momentum: Δθ = −η∇L), Adam (ε = 1e-8) or LAMB, by ``cfg.optimizer``."""
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, betas=cfg.betas, eps=1e-8)
    return Lamb(params, lr=cfg.lr, betas=cfg.betas)


def make_warmup(optimizer: torch.optim.Optimizer, warmup_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """η_t = η · min(1, (t+1)/T_warmup): linear warmup, then constant."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: scaling.linear_warmup_factor(step, warmup_steps))
