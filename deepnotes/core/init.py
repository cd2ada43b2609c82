"""Initialization: sampling distributions, the second-moment recursion of a plain MLP, activations
with a rescaled second moment, and the NTK parametrization.

Second moments, not variances: for y_j = Σ_i x_i w_ij with i.i.d. zero-mean w independent of x,
E[y_j²] = m·E[w²]·E[x²] whatever the mean of x (seed 002, "稳定二阶矩"). Through an activation φ,
with pre-activations y ~ N(0, q), the next second moment is E_z[φ(√q z)²], z ~ N(0, 1).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from deepnotes.core.validate import choice as _choice

INITS = ("lecun", "he", "xavier")
ACTIVATIONS = ("linear", "relu", "tanh", "sigmoid", "sigmoid_rescaled", "selu")


def uniform_bounds(mean: float, std: float) -> tuple[float, float]:
    """U[a, b] with the given mean and standard deviation: a, b = μ ∓ √3·σ (variance (b−a)²/12)."""
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std!r}")
    return mean - math.sqrt(3) * std, mean + math.sqrt(3) * std


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


def weight_variance(init: str, fan_in: int, fan_out: int) -> float:
    """E[w²]: LeCun 1/m, He 2/m, Xavier 2/(m+n) (m = fan_in, n = fan_out)."""
    _choice("init", init, INITS)
    if init == "lecun":
        return 1.0 / fan_in
    if init == "he":
        return 2.0 / fan_in
    return 2.0 / (fan_in + fan_out)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


def activation(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The activation φ by name. ``sigmoid_rescaled`` = sigmoid(x)/√E[sigmoid(z)²] (seed 002)."""
    _choice("activation", name, ACTIVATIONS)
    if name == "linear":
        return lambda x: x
    if name == "relu":
        return torch.relu
    if name == "tanh":
        return torch.tanh
    if name == "sigmoid":
        return torch.sigmoid
    if name == "selu":
        return torch.selu
    scale = 1.0 / math.sqrt(gaussian_second_moment(scalar_activation("sigmoid")))
    return lambda x: torch.sigmoid(x) * scale


def scalar_activation(name: str) -> Callable[[float], float]:
    """φ on floats, for the one-dimensional Gaussian integrals."""
    if name == "linear":
        return lambda x: x
    if name == "relu":
        return lambda x: max(x, 0.0)
    if name == "tanh":
        return math.tanh
    if name in ("sigmoid", "sigmoid_rescaled"):
        s = 1.0 if name == "sigmoid" else 1.0 / math.sqrt(gaussian_second_moment(scalar_activation("sigmoid")))
        return lambda x: s / (1 + math.exp(-x)) if x > -700 else 0.0
    if name == "selu":
        return lambda x: SELU_LAMBDA * (x if x > 0 else SELU_ALPHA * math.expm1(x))
    raise ValueError(f"unknown activation {name!r}; allowed: {', '.join(ACTIVATIONS)}")


def gaussian_second_moment(phi: Callable[[float], float], q: float = 1.0, n: int = 4001) -> float:
    """E_z[φ(√q·z)²], z ~ N(0,1), by the trapezoid rule on [−10, 10] (error far below 1e-9)."""
    h = 20.0 / (n - 1)
    total = 0.0
    for k in range(n):
        z = -10.0 + k * h
        w = 0.5 if k in (0, n - 1) else 1.0
        total += w * math.exp(-z * z / 2) * phi(math.sqrt(q) * z) ** 2
    return total * h / math.sqrt(2 * math.pi)


def predicted_second_moments(act: str, gain: float, depth: int, q0: float = 1.0) -> list[float]:
    """The mean-field recursion of a plain MLP x_{l+1} = φ(x_l W_l), E[w²] = gain/m:
    E[x_{l+1}²] = E_z[φ(√(gain·E[x_l²])·z)²]. Returns [E[x_0²], …, E[x_depth²]]."""
    _choice("activation", act, ACTIVATIONS)
    phi = scalar_activation(act)
    qs = [q0]
    for _ in range(depth):
        q = gain * qs[-1]
        if act == "linear":
            qs.append(q)
        elif act == "relu":
            qs.append(q / 2)
        else:
            qs.append(gaussian_second_moment(phi, q) if 0 < q < 1e12 else (0.0 if q <= 0 else math.inf))
    return qs


class NTKLinear(nn.Module):
    """y = x W / √m + b with W ~ N(0, 1): the NTK parametrization of a linear layer (seed 002)."""

    def __init__(self, fan_in: int, fan_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(fan_out, fan_in))
        self.bias = nn.Parameter(torch.zeros(fan_out))
        self.scale = 1.0 / math.sqrt(fan_in)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight * self.scale, self.bias)   # [..., m] -> [..., n]


def plain_mlp(width: int, depth: int, act: str, init: str = "lecun", gain: float | None = None,
              ntk: bool = False, d_in: int | None = None, d_out: int | None = None) -> nn.Sequential:
    """A plain (non-residual) MLP of ``depth`` linear layers, each followed by ``act``; weights
    zero-mean normal with E[w²] from ``init`` (times ``gain``/the init's own factor if ``gain`` is
    given as a multiple of 1/m), biases zero. ``ntk=True`` uses :class:`NTKLinear` layers."""
    _choice("activation", act, ACTIVATIONS)
    _choice("init", init, INITS)
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    layers: list[nn.Module] = []
    phi = activation(act)
    dims = [d_in or width] + [width] * (depth - 1) + [d_out or width]
    for m, n in zip(dims[:-1], dims[1:]):
        if ntk:
            lin = NTKLinear(m, n)
        else:
            lin = nn.Linear(m, n)
            var = gain / m if gain is not None else weight_variance(init, m, n)
            with torch.no_grad():
                nn.init.normal_(lin.weight, std=math.sqrt(var))
                nn.init.zeros_(lin.bias)
        layers += [lin, _Act(phi)]
    return nn.Sequential(*layers)


class _Act(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)
