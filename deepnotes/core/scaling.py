"""Every α, β/λ, gradient-scale and learning-rate formula of the book, as plain functions.

Notation: N residual blocks (a Transformer block = one attention + one FFN sublayer, so 2N
sublayers), K parameter matrices per block, η the learning rate, α the skip-path weight of
DeepNorm (x_{l+1} = LN(α·x_l + F(x_l))), β (written λ in Su's articles) the init gain of the
v/out-projection and FFN weights. ``deepnotes.core.derive`` and the chapters' ``derive`` modules derive each of these
with SymPy and the tests check that both agree.
"""

from __future__ import annotations

import math

from deepnotes.core.validate import (
    Count,
    Depth,
    NonNegative,
    NonNegativeCount,
    Positive,
    choice,
)

OPTIMIZERS = ("sgd", "adam", "lamb")
ARCHITECTURES = ("encoder", "decoder", "encoder-decoder")


def _check_optimizer(optimizer: str) -> None:
    choice("optimizer", optimizer, OPTIMIZERS)


def deepnorm_coefficients(
    n_layers: Depth, architecture: str = "encoder", n_decoder_layers: Depth | None = None
) -> tuple[float, float]:
    """DeepNet paper (arXiv 2203.00555, Table 1 / Fig. 2) constants (α, β).

    encoder only (N layers):  α = (2N)^{1/4},  β = (8N)^{-1/4}
    decoder only (M layers):  α = (2M)^{1/4},  β = (8M)^{-1/4}
    encoder-decoder, returned for the *encoder*:  α = 0.81 (N⁴M)^{1/16}, β = 0.87 (N⁴M)^{-1/16}
    (use :func:`deepnorm_decoder_coefficients_encdec` for its decoder).
    """
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; allowed: {', '.join(ARCHITECTURES)}")
    if architecture in ("encoder", "decoder"):
        return (2 * n_layers) ** 0.25, (8 * n_layers) ** -0.25
    if n_decoder_layers is None:
        raise ValueError("encoder-decoder needs n_decoder_layers (M)")
    base = (n_layers**4 * n_decoder_layers) ** (1 / 16)
    return 0.81 * base, 0.87 / base


def deepnorm_decoder_coefficients_encdec(n_decoder_layers: Depth) -> tuple[float, float]:
    """DeepNet encoder-decoder, decoder side: α = (3M)^{1/4}, β = (12M)^{-1/4}."""
    return (3 * n_decoder_layers) ** 0.25, (12 * n_decoder_layers) ** -0.25


def su_coefficients(n_layers: Depth, optimizer: str) -> tuple[float, float]:
    """(α, λ) of Su's table in "训练1000层的Transformer究竟有什么困难？" (2N sublayers):

    SGD:  λ/α = (2N)^{-1/2}, λ = 1/α  →  α = (2N)^{1/4}, λ = (2N)^{-1/4}
    Adam: λ/α = (2N)^{-1},   λ = 1/α  →  α = (2N)^{1/2}, λ = (2N)^{-1/2}
    LAMB: λ²/α = (2N)^{-1},  α = 1    →  α = 1,          λ = (2N)^{-1/2}
    """
    _check_optimizer(optimizer)
    two_n = 2 * n_layers
    if optimizer == "sgd":
        return two_n**0.25, two_n**-0.25
    if optimizer == "adam":
        return two_n**0.5, two_n**-0.5
    return 1.0, two_n**-0.5


def loss_change_first_order(
    optimizer: str, lr: Positive, n_matrices: Count, entries: Count, grad_entry: NonNegative
) -> float:
    """First-order loss change ΔL ≈ ⟨∇L, Δθ⟩ for M matrices of P entries each of size g.

    SGD  (Δθ = −η∇L):        ΔL = −η‖∇L‖²  = −η·M·P·g²
    Adam (Δθ ≈ −η·sign ∇L):  ΔL = −η‖∇L‖₁  = −η·M·P·g
    With M = N·K matrices, both grow linearly in the depth N.
    """
    _check_optimizer(optimizer)
    if optimizer == "sgd":
        return -lr * n_matrices * entries * grad_entry**2
    if optimizer == "adam":
        return -lr * n_matrices * entries * grad_entry
    raise ValueError("the LAMB loss change depends on ‖θ‖; see su_coefficients")


def depth_cancelling_grad_exponent(optimizer: str) -> float:
    """p such that per-entry gradients g ∝ N^p make ΔL independent of N: SGD −1/2, Adam −1."""
    _check_optimizer(optimizer)
    if optimizer == "sgd":
        return -0.5
    if optimizer == "adam":
        return -1.0
    raise ValueError("LAMB's update is relative to ‖θ‖; its exponent is not a single number")


def warmup_start_lr(lr: Positive, n_layers: Depth) -> float:
    """The largest early learning rate that keeps ΔL = O(η) at depth N: η/N."""
    return lr / n_layers


def linear_warmup_factor(step: NonNegativeCount, warmup_steps: NonNegativeCount) -> float:
    """Learning-rate multiplier of a linear warmup: min(1, (t+1)/T_warmup); 1 when T_warmup = 0."""
    if warmup_steps == 0:
        return 1.0
    return min(1.0, (step + 1) / warmup_steps)


# ---- magnitude decomposition chapter (issue 7): every (α, λ) choice of the analysis ------------

PICKS = ("lambda=1/alpha", "alpha=1", "lambda=1")


def magnitude_solution(n_layers: Depth, optimizer: str, pick: str = "lambda=1/alpha") -> tuple[float, float]:
    """(α, λ) solving the magnitude analysis' condition over 2N sublayers, plus one extra pick:

    conditions:  SGD 2N(λ/α)² = 1,  Adam 2N·λ/α = 1,  LAMB 2N·λ²/α = 1
    picks:       λ = 1/α (the paper's symmetry),  α = 1 (Su's "another solution 1"; Pre-LN),
                 λ = 1 (Su's "another solution 2")

    SGD:  λ=1/α → ((2N)^{1/4}, (2N)^{-1/4});  α=1 → (1, (2N)^{-1/2});  λ=1 → ((2N)^{1/2}, 1)
    Adam: λ=1/α → ((2N)^{1/2}, (2N)^{-1/2});  α=1 → (1, (2N)^{-1});    λ=1 → (2N, 1)
    LAMB: λ=1/α → ((2N)^{1/3}, (2N)^{-1/3});  α=1 → (1, (2N)^{-1/2});  λ=1 → (2N, 1)
    """
    _check_optimizer(optimizer)
    if pick not in PICKS:
        raise ValueError(f"unknown pick {pick!r}; allowed: {', '.join(PICKS)}")
    s = 2 * n_layers
    # the condition s·λ^a/α^b = 1 (s = 2N sublayers), i.e. λ^a/α^b = 1/s
    a, b = {"sgd": (2, 2), "adam": (1, 1), "lamb": (2, 1)}[optimizer]
    if pick == "alpha=1":
        return 1.0, s ** (-1 / a)
    if pick == "lambda=1":
        return s ** (1 / b), 1.0
    return s ** (1 / (a + b)), s ** (-1 / (a + b))  # λ = 1/α: α^{-(a+b)} = 1/s


def pre_ln_lambda(n_layers: Depth, optimizer: str) -> float:
    """Pre-LN has no α (α = 1): the init gain λ from the same condition, SGD (2N)^{-1/2},
    Adam (2N)^{-1}, LAMB (2N)^{-1/2}."""
    return magnitude_solution(n_layers, optimizer, "alpha=1")[1]


def branch_weight(alpha: Positive, lam: Positive) -> float:
    """Initial weight of a residual branch relative to the skip path, λ₁λ₂/α with λ₁ = λ₂ = λ."""
    weight = lam * lam / alpha  # λ² (a product: inf, not an OverflowError, past the float range)
    if not math.isfinite(weight):
        raise ValueError(f"lambda²/alpha overflows a float: alpha={alpha!r}, lambda={lam!r}")
    return weight


def paper_sublayer_coefficients(n_sublayers: Depth) -> tuple[float, float]:
    """DeepNet's constants written by the number S of residual sublayers of one stack:
    α = S^{1/4}, β = (4S)^{-1/4}; S = 2N gives the encoder (and decoder-only) constants, S = 3M
    the decoder side of an encoder-decoder. They solve 2S(β/α)² = 1 with αβ = 1/√2."""
    return n_sublayers**0.25, (4 * n_sublayers) ** -0.25


def predicted_identity_weight(norm: str, ratios: list[float], alpha: Positive = 1.0) -> list[float]:
    """The weight of x_0 in x_l (l = 0..N) predicted from the branch ratios v_k (two per block)."""
    out, w, total = [1.0], 1.0, 0.0
    for k, v in enumerate(ratios):
        if norm == "post":
            w /= math.sqrt(1 + v)
        elif norm == "deepnorm":
            w *= alpha / math.sqrt(alpha**2 + v)
        elif norm == "pre":
            total += v
            w = 1 / math.sqrt(1 + total)
        if k % 2 == 1:  # the end of a block (attention + FFN)
            out.append(w)
    return out
