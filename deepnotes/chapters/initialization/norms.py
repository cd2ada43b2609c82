"""LayerNorm and RMSNorm written out, with their input gradients in closed form.

LN:      y_i = γ_i x̂_i + β_i,  x̂ = (x − μ)/s,  s = √(mean((x−μ)²) + ε)
RMSNorm: y_i = γ_i x_i / r,    r = √(mean(x²) + ε)
Closed-form input gradients, g = ∂L/∂y, h = γ ⊙ g:
LN:      ∂L/∂x = (h − mean(h) − x̂·mean(h ⊙ x̂)) / s
RMSNorm: ∂L/∂x = (h − x·mean(h ⊙ x)/r²) / r
Source 000's annotated eqs. (15) and (18) put γ_i outside the bracket, i.e. use g instead of h
inside the means; that agrees only when γ is constant (as at initialization).
"""

from __future__ import annotations

import torch

from deepnotes.core.config import check_allocation
from deepnotes.core.data import generator
from deepnotes.core.validate import Count, Positive, Seed


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: Positive = 1e-5) -> torch.Tensor:
    mu = x.mean(-1, keepdim=True)  # [..., 1]
    s = ((x - mu).pow(2).mean(-1, keepdim=True) + eps).sqrt()  # [..., 1]
    return gamma * (x - mu) / s + beta


def rms_norm(x: torch.Tensor, gamma: torch.Tensor, eps: Positive = 1e-5) -> torch.Tensor:
    r = (x.pow(2).mean(-1, keepdim=True) + eps).sqrt()  # [..., 1]
    return gamma * x / r


def layer_norm_input_grad(x, gamma, g, eps: Positive = 1e-5, gamma_outside: bool = False) -> torch.Tensor:
    """∂L/∂x of LayerNorm given g = ∂L/∂y; ``gamma_outside`` gives source 000's eq. (15) instead."""
    mu = x.mean(-1, keepdim=True)
    s = ((x - mu).pow(2).mean(-1, keepdim=True) + eps).sqrt()
    xhat = (x - mu) / s
    if gamma_outside:
        return gamma / s * (g - g.mean(-1, keepdim=True) - xhat * (xhat * g).mean(-1, keepdim=True))
    h = gamma * g
    return (h - h.mean(-1, keepdim=True) - xhat * (h * xhat).mean(-1, keepdim=True)) / s


def rms_norm_input_grad(x, gamma, g, eps: Positive = 1e-5, gamma_outside: bool = False) -> torch.Tensor:
    """∂L/∂x of RMSNorm given g = ∂L/∂y; ``gamma_outside`` gives source 000's eq. (18) instead."""
    r2 = x.pow(2).mean(-1, keepdim=True) + eps
    r = r2.sqrt()
    if gamma_outside:
        return gamma / r * (g - x * (x * g).mean(-1, keepdim=True) / r2)
    h = gamma * g
    return (h - x * (h * x).mean(-1, keepdim=True) / r2) / r


def autograd_input_grad(fn, x: torch.Tensor, gamma: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """∂L/∂x of L = Σ fn(x, gamma) ⊙ g by autograd (the reference for the closed forms above)."""
    xx = x.detach().clone().requires_grad_(True)
    (fn(xx, gamma) * g).sum().backward()
    return xx.grad


def formula_checks(d: Count = 16, seed: Seed = 0) -> dict[str, float]:
    """Max |difference| (float64, a seeded random batch, random γ, β, ∂L/∂y) between: the formulas
    and torch's LayerNorm/RMSNorm; the closed-form gradients and autograd; source 000's eqs. (15),
    (18) and autograd, with γ = 1 and with a random γ."""
    gen = generator(seed)
    check_allocation(16 * d, {"d": d}, bytes_each=8)
    x = torch.randn(4, d, dtype=torch.float64, generator=gen)  # [4, d]
    gamma, beta, g = (torch.randn(d, dtype=torch.float64, generator=gen) for _ in range(3))
    one = torch.ones(d, dtype=torch.float64)
    ln = lambda a, gm: layer_norm(a, gm, beta)  # noqa: E731
    err = lambda a, b: float((a - b).abs().max())  # noqa: E731
    auto_ln = {k: autograd_input_grad(ln, x, gm, g) for k, gm in (("gamma", gamma), ("one", one))}
    auto_rms = {k: autograd_input_grad(rms_norm, x, gm, g) for k, gm in (("gamma", gamma), ("one", one))}
    return {
        "LN formula = torch.nn.functional.layer_norm": err(
            layer_norm(x, gamma, beta), torch.nn.functional.layer_norm(x, (d,), gamma, beta)
        ),
        "RMSNorm formula = torch.nn.functional.rms_norm": err(
            rms_norm(x, gamma), torch.nn.functional.rms_norm(x, (d,), gamma, eps=1e-5)
        ),
        "LN gradient, closed form vs autograd": err(layer_norm_input_grad(x, gamma, g), auto_ln["gamma"]),
        "RMSNorm gradient, closed form vs autograd": err(rms_norm_input_grad(x, gamma, g), auto_rms["gamma"]),
        "eq. (15), gamma = 1": err(layer_norm_input_grad(x, one, g, gamma_outside=True), auto_ln["one"]),
        "eq. (15), random gamma": err(layer_norm_input_grad(x, gamma, g, gamma_outside=True), auto_ln["gamma"]),
        "eq. (18), gamma = 1": err(rms_norm_input_grad(x, one, g, gamma_outside=True), auto_rms["one"]),
        "eq. (18), random gamma": err(rms_norm_input_grad(x, gamma, g, gamma_outside=True), auto_rms["gamma"]),
    }
