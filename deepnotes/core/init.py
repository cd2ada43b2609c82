"""Initialization shared by the chapters: BERT's truncated normal (cut at ±kσ) and Gaussian second
moments of an activation.

Second moments, not variances: for y_j = Σ_i x_i w_ij with i.i.d. zero-mean w independent of x,
E[y_j²] = m·E[w²]·E[x²] whatever the mean of x (seed 002, "稳定二阶矩"). Through an activation φ,
with pre-activations y ~ N(0, q), the next second moment is E_z[φ(√q z)²], z ~ N(0, 1).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn



def truncated_normal_variance_factor(k: float = 2.0) -> float:
    """γ(k) = Var of N(0,1) truncated to [−k, k] = 1 − 2kφ(k)/(2Φ(k) − 1); γ(2) = 0.77374…"""
    if not k > 0:
        raise ValueError(f"truncation k must be > 0, got {k!r}")
    phi = math.exp(-k * k / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(k / math.sqrt(2))                      # 2Φ(k) − 1
    return 1 - 2 * k * phi / mass


@torch.no_grad()
def trunc_normal_(tensor: torch.Tensor, std: float, k: float = 2.0, match_std: bool = False,
                  generator: torch.Generator | None = None) -> torch.Tensor:
    """Fill ``tensor`` from N(0, σ²) truncated at ±kσ (relative to σ, unlike
    ``torch.nn.init.trunc_normal_``, whose a=−2, b=2 are absolute).

    ``match_std=True`` passes σ/√γ(k) so that the result has standard deviation σ.
    """
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std!r}")
    sigma = std / math.sqrt(truncated_normal_variance_factor(k)) if match_std else std
    return nn.init.trunc_normal_(tensor, mean=0.0, std=sigma, a=-k * sigma, b=k * sigma, generator=generator)


def gaussian_second_moment(phi: Callable[[float], float], q: float = 1.0, n: int = 4001) -> float:
    """E_z[φ(√q·z)²], z ~ N(0,1), by the trapezoid rule on [−10, 10] (error far below 1e-9)."""
    h = 20.0 / (n - 1)
    total = 0.0
    for k in range(n):
        z = -10.0 + k * h
        w = 0.5 if k in (0, n - 1) else 1.0
        total += w * math.exp(-z * z / 2) * phi(math.sqrt(q) * z) ** 2
    return total * h / math.sqrt(2 * math.pi)




def relu(x: float) -> float:
    """max(x, 0)."""
    return max(x, 0.0)


def gelu(x: float) -> float:
    """x·Φ(x), the exact GELU (BERT's FFN activation)."""
    return x * 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


ACTIVATIONS: dict[str, Callable[[float], float]] = {"relu": relu, "gelu": gelu}


def ffn_branch_variance(q: float, activation: str = "gelu", ffn_ratio: int = 4) -> float:
    """v_FFN = r·q·E[φ(h)²], h ~ N(0, q): the second moment that an FFN branch φ(xW₁)W₂ (d → r·d → d,
    i.i.d. weights of second moment s², q = d·s²) adds to a stream of second moment 1. ReLU gives
    r·q²/2 exactly; GELU, BERT's activation, by quadrature."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    if not (math.isfinite(q) and q >= 0):
        raise ValueError(f"q must be a finite number >= 0, got {q!r}")
    return ffn_ratio * q * gaussian_second_moment(ACTIVATIONS[activation], q)
