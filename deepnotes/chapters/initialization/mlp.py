"""Plain MLPs of the chapter "Initialization, parametrization and normalization": activations by name
(with the rescaled sigmoid and SELU), the inits' weight variances, the mean-field second-moment
recursion, and the NTK parametrization of a linear layer."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from deepnotes.core.config import check_allocation
from deepnotes.core.models import gaussian_second_moment
from deepnotes.core.validate import Count, Depth, Positive, Real
from deepnotes.core.validate import choice as _choice

INITS = ("lecun", "he", "xavier")


ACTIVATIONS = ("linear", "relu", "tanh", "sigmoid", "sigmoid_rescaled", "selu")


def uniform_bounds(mean: Real, std: Positive) -> tuple[float, float]:
    """U[a, b] with the given mean and standard deviation: a, b = μ ∓ √3·σ (variance (b−a)²/12)."""
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std!r}")
    return mean - math.sqrt(3) * std, mean + math.sqrt(3) * std


def weight_variance(init: str, fan_in: Count, fan_out: Count) -> float:
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


def predicted_second_moments(act: str, gain: Positive, depth: Depth, q0: Real = 1.0) -> list[float]:
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

    def __init__(self, fan_in: Count, fan_out: Count):
        super().__init__()
        check_allocation(fan_out * fan_in + fan_out, {"fan_in": fan_in, "fan_out": fan_out})
        self.weight = nn.Parameter(torch.randn(fan_out, fan_in))
        self.bias = nn.Parameter(torch.zeros(fan_out))
        self.scale = 1.0 / math.sqrt(fan_in)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight * self.scale, self.bias)  # [..., m] -> [..., n]


def plain_mlp(
    width: Count,
    depth: Depth,
    act: str,
    init: str = "lecun",
    gain: Positive | None = None,
    ntk: bool = False,
    d_in: Count | None = None,
    d_out: Count | None = None,
) -> nn.Sequential:
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
    typed = {"width": width, "depth": depth, "d_in": d_in or width, "d_out": d_out or width}
    check_allocation(sum(m * n + n for m, n in zip(dims[:-1], dims[1:], strict=True)), typed)
    for m, n in zip(dims[:-1], dims[1:], strict=True):
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
